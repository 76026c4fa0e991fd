//! `thicket cover`: k-path coverage of a set of inputs.

use crate::exit;
use crate::spec::SpecArgs;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use thicket_cover::KPathGraph;
use thicket_driver::kcover::CoverageRun;
use thicket_parse::ParseConfig;

/// Arguments of `thicket cover`.
#[derive(Args, Debug)]
#[command(
    after_help = "Parses every input with the spec's grammar and reports, for each k' = 1..K, \
how many of the grammar's k'-paths the inputs cover (k-path coverage, Havrikov & Zeller). A k-path \
is a chain of k symbols, each inside the rule the one before it references; `#n` in paths names the \
occurrence (its expression id), since one symbol may appear in several places.\n\n\
An INPUT that is a folder stands for every file below it (recursively, sorted; hidden ones \
skipped); --files-from adds a list of paths. Exit code 0 if every input is counted, 1 if any \
is not in the language, 3 if the spec has errors, 4 if an input cannot be read or is over \
--max-input-size (reported and not counted; the others still are).\n\n\
Examples:\n  thicket cover specs/json.fan inputs/ -k 3\n  \
thicket cover specs/expr.fan tests/*.txt -k 2 --missing\n  \
thicket cover specs/csv.bnf corpus/* -k 4 --curve growth.csv --plot growth.svg --json"
)]
pub struct CoverArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: crate::inputs::InputArgs,

    /// Longest k-path length measured (1..=8).
    #[arg(short, long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=8))]
    k: u8,

    /// Count a k-path as covered if any derivation tree of an input has it, not only the
    /// one the parser picks (matters for ambiguous grammars). An input the parse shows
    /// unambiguous costs its one tree; any other is followed exhaustively, for inputs
    /// of moderate size (about 1-5 KB of memory per input byte).
    #[arg(long)]
    all_parses: bool,

    /// Also report each input's own coverage.
    #[arg(long)]
    per_input: bool,

    /// List the k-paths the inputs miss (for k' = 1..K, at most --missing-limit each).
    #[arg(long)]
    missing: bool,

    /// With --missing, the most paths listed per length.
    #[arg(long, value_name = "N", default_value_t = 50)]
    missing_limit: usize,

    /// Write the growth curve (coverage after each input, per k') as CSV.
    #[arg(long, value_name = "FILE")]
    curve: Option<PathBuf>,

    /// Plot the growth curve as SVG.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    /// One JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,
}

/// Runs `thicket cover`.
pub fn run(args: CoverArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let grammar = &spec.grammar;
    // Inputs that pack bit fields into bytes are read one bit at a time.
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match crate::shared::reader_for(&spec, &input_grammar, ParseConfig::default()) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let graph = KPathGraph::new(grammar);
    let max_k = usize::from(args.k);
    let inputs = match args.inputs.collect_or_report(false) {
        Ok(inputs) => inputs,
        Err(code) => return Ok(code),
    };
    let pool = args.jobs.pool()?;
    let run = CoverageRun::measure(
        &inputs,
        &pool,
        &reader,
        &graph,
        max_k,
        args.all_parses,
        args.inputs.max_input_size,
    );
    for error in run.errors(&inputs) {
        eprintln!("error: {error}");
    }
    let (rejected, unreadable) = (run.rejected, run.unreadable);
    let missing: Vec<Vec<String>> = if args.missing {
        run.missing(&graph, grammar, args.missing_limit)
    } else {
        Vec::new()
    };
    if let Some(file) = &args.curve {
        std::fs::write(file, run.curve_csv())
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    if let Some(file) = &args.plot {
        crate::plot::growth_svg(file, spec.source.name(), &run.curve_series())?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let report = run.report(spec.source.name(), &inputs, &missing, args.per_input);
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        for line in run.text_lines(spec.source.name(), &inputs, &missing, args.per_input) {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(if unreadable > 0 {
        exit::FAILURE
    } else if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}
