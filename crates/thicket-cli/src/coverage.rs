//! `thicket coverage`: the code coverage a set of inputs reaches in a program.

use crate::exit;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use thicket_driver::runs::{Runs, Skip};
use thicket_exec::Judge;

/// Arguments of `thicket coverage`.
#[derive(Args, Debug)]
#[command(
    after_help = "Runs the program (or --python function) on every input and reports the \
code they reach together: AFL++ edges for programs built with afl-cc, lines and branches \
(coverage.py) for Python, methods and lines (JaCoCo) for --java, plus the failures and hangs they cause. This is code coverage of \
a program; `thicket cover` is k-path coverage of the grammar and runs nothing. A folder \
among INPUTS stands for every file below it (recursively, sorted, hidden ones skipped; e.g. a \
campaign's out/queue); --files-from adds a list of paths. An input that cannot be read or is \
over --max-input-size is reported and not run; the exit code is then 4.\n\n\
Examples:\n  thicket coverage specs/json.fan out/queue -- ./target @@\n  \
thicket coverage specs/json.fan inputs/ --python json:loads --python-include '*/json/*'\n  \
thicket coverage specs/json.fan inputs/ --java com.google.gson.JsonParser.parseString \
--classpath /usr/share/java/gson.jar\n  \
thicket coverage specs/csv.bnf a.csv b.csv --format json --growth growth.csv -- ./csvtool"
)]
pub struct CoverageArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: crate::inputs::InputArgs,

    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,

    /// Write the coverage after each input as CSV (index,file,coverage,branches; for
    /// --java the columns are lines and methods).
    #[arg(long, value_name = "FILE")]
    growth: Option<PathBuf>,

    #[command(flatten)]
    target: TargetArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    /// A summary for people.
    Text,
    /// One JSON object.
    Json,
}

/// Runs `thicket coverage`.
pub fn run(args: CoverageArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let files = match args.inputs.collect_or_report(false) {
        Ok(files) => files,
        Err(code) => return Ok(code),
    };
    let classifier = args.target.classifier()?;
    let mut judge = match args.target.executor_or_report(None) {
        Ok(executor) => Judge::new(executor, classifier),
        Err(code) => return Ok(code),
    };
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default())
        .map_err(|e| anyhow::anyhow!(e))?;
    let mut growth = match &args.growth {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => None,
    };
    let runs = Runs::run(
        &files,
        &mut judge,
        &parser,
        args.inputs.max_input_size,
        growth.as_mut().map(|g| g as &mut dyn Write),
        &mut |skip| match skip {
            Skip::Unreadable(e) => eprintln!("error: {e} (not run)"),
            Skip::NotRun(file) => {
                eprintln!("error: {}: the executor failed (not run)", file.name())
            }
        },
    )?;
    let (unreadable, not_run) = (runs.unreadable, runs.not_run);
    let summary = runs.tally.coverage.summary(judge.executor().map_size());
    let rejection = runs.tally.likely_rejection(&judge);
    for warning in runs.warnings(&judge, files.len(), &summary) {
        eprintln!("warning: {warning}");
    }
    match args.format {
        ReportFormat::Json => {
            let report = runs.report(&judge, files.len(), &summary, rejection.as_ref());
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        ReportFormat::Text => {
            let report = runs.text(&judge, files.len(), &summary, rejection.as_ref());
            report.lines.iter().for_each(|line| println!("{line}"));
            if let Some(note) = &report.note {
                eprintln!("note: {note}");
            }
        }
    }
    if let Some(note) = runs.uncounted_note() {
        eprintln!("note: {note}");
    }
    Ok(if unreadable + not_run > 0 {
        exit::FAILURE
    } else {
        exit::OK
    })
}
