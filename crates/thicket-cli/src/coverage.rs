//! `thicket coverage`: the code coverage a set of inputs reaches in a program.

use crate::exit;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use thicket_exec::{CoverageKind, FailureKind, Judge, Tally};

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
        Some(path) => {
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("cannot create {}", path.display()))?,
            );
            writeln!(f, "index,file,coverage,branches")?;
            Some(f)
        }
        None => None,
    };
    let mut tally = Tally::default();
    let mut in_language = 0;
    let mut unreadable = 0;
    let mut not_run = 0;
    for (index, file) in files.iter().enumerate() {
        let bytes = match file.read(args.inputs.max_input_size) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("error: {e} (not run)");
                unreadable += 1;
                continue;
            }
        };
        in_language += usize::from(parser.recognize(&bytes).is_ok());
        let Some(verdict) = judge.run(&bytes)? else {
            eprintln!("error: {}: the executor failed (not run)", file.name());
            not_run += 1;
            continue;
        };
        tally.add(&judge, &verdict, || file.name());
        if let Some(g) = &mut growth {
            let (coverage, branches) = tally.figures(&judge);
            writeln!(
                g,
                "{index},{},{coverage},{branches}",
                csv_field(&file.name())
            )?;
        }
    }
    if let Some(mut g) = growth {
        g.flush()?;
    }
    let Tally {
        coverage: ref set,
        uncounted,
        failing,
        hangs,
        ref failures,
    } = tally;
    let summary = set.summary(judge.executor().map_size());
    let rejection = tally.likely_rejection(&judge);
    if judge.executor().held_output_runs() > 0 {
        let runs = (files.len() - unreadable - not_run) as u64;
        eprintln!(
            "warning: {}",
            thicket_exec::plain::held_output_warning(judge.executor().held_output_runs(), runs)
        );
    }
    if let Some(warning) = summary
        .nothing_covered_warning(&judge.executor().describe())
        .filter(|_| !files.is_empty())
    {
        eprintln!("warning: {warning}");
    }
    match args.format {
        ReportFormat::Json => {
            let report = serde_json::json!({
                "executor": judge.executor().describe(),
                "inputs": files.len(),
                "unreadable": unreadable,
                "not_run": not_run,
                "runs_coverage_not_counted": uncounted,
                "in_language": in_language,
                "failing_runs": failing,
                "hangs": hangs,
                "held_output_runs": judge.executor().held_output_runs(),
                "failures": failures.iter().map(|(k, (kind, n, f))| {
                    let mut failure = serde_json::json!({"key": k, "count": n, "first": f});
                    if let (Some(o), serde_json::Value::Object(kind)) =
                        (failure.as_object_mut(), serde_json::json!(kind))
                    {
                        o.extend(kind);
                    }
                    failure
                }).collect::<Vec<_>>(),
                "likely_rejection": rejection,
                "coverage": summary,
            });
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        ReportFormat::Text => {
            println!("{}", judge.executor().describe());
            println!(
                "{} inputs ({in_language} in the grammar's language{}), {failing} failing, {hangs} hanging",
                files.len(),
                crate::inputs::unreadable_note(unreadable)
            );
            match summary.kind {
                CoverageKind::Edges => println!(
                    "coverage: {} edges (map size {})",
                    summary.edges.unwrap_or(0),
                    summary.map_size.unwrap_or(0)
                ),
                CoverageKind::Python => {
                    println!(
                        "coverage: {} of {} statements, {} branches of {} (as coverage.py \
                         counts them; statements that run only at import excluded)",
                        summary.lines.unwrap_or(0),
                        summary.statements.unwrap_or(0),
                        summary.branches.unwrap_or(0),
                        summary.branch_total.unwrap_or(0)
                    );
                    for f in &summary.files {
                        println!(
                            "  {:>5}/{:<5} lines {:>5}/{:<5} branches  {}",
                            f.lines, f.statements, f.branches, f.branch_total, f.path
                        );
                    }
                }
                CoverageKind::Java => {
                    println!(
                        "coverage: {} of {} methods, {} of {} lines (as JaCoCo counts them, in \
                         the classes that ran)",
                        summary.methods.unwrap_or(0),
                        summary.method_total.unwrap_or(0),
                        summary.lines.unwrap_or(0),
                        summary.statements.unwrap_or(0),
                    );
                    for f in &summary.files {
                        println!(
                            "  {:>5}/{:<5} methods {:>5}/{:<5} lines  {}",
                            f.methods.unwrap_or(0),
                            f.method_total.unwrap_or(0),
                            f.lines,
                            f.statements,
                            f.path
                        );
                    }
                }
                CoverageKind::None => println!("coverage: none measured (plain mode)"),
            }
            let rejected = |kind: &FailureKind| rejection.as_ref().is_some_and(|r| r.covers(kind));
            for (key, (_, n, first)) in failures.iter().filter(|(_, (k, ..))| !rejected(k)) {
                println!("failure {key} ({n} runs), first: {first}");
            }
            if let Some(r) = &rejection {
                let first = failures
                    .values()
                    .find(|(k, ..)| rejected(k))
                    .map_or("", |(.., f)| f.as_str());
                println!(
                    "failures {} {}: {} distinct ({} runs), likely rejections, first: {first}",
                    r.language, r.class, r.distinct_failures, r.runs
                );
                let others = failures
                    .values()
                    .filter(|(k, ..)| !rejected(k) && *k != FailureKind::Hang)
                    .count();
                eprintln!("note: {}", r.note(others));
            }
        }
    }
    if uncounted > 0 {
        eprintln!(
            "note: the coverage of {uncounted} crashing or hanging runs is not counted (that \
             of exceptions and pattern matches is), as in a campaign"
        );
    }
    Ok(if unreadable + not_run > 0 {
        exit::FAILURE
    } else {
        exit::OK
    })
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
