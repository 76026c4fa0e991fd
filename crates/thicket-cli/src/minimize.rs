//! `thicket minimize`: reduce a failing input while it keeps failing the same way.

use crate::exit;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use thicket_exec::Judge;
use thicket_fuzz::minimize::MinimizeLimits;

/// Arguments of `thicket minimize`.
#[derive(Args, Debug)]
#[command(
    after_help = "Runs the program (or --python function) on INPUT, notes how it fails (kind and \
location: `crash SIGSEGV @ parse_value`, `python ValueError @ decoder.py:42`, a --failure-pattern \
match, a hang) and searches for a smaller input that fails the same way. An input in the \
grammar is reduced through its derivation tree, so the result stays in the grammar: items of \
lists removed (delta debugging), nested parts hoisted (`[[[x]]]` to `x`), parts replaced by \
their rule's smallest derivation, then bytes of terminals. An input outside the grammar (or \
with --bytes, after the tree passes) is reduced byte by byte as afl-tmin does. Each candidate \
runs at most once; --max-runs and --time bound the work, and the smallest failing input found \
so far is written when they run out.\n\n\
Examples:\n  thicket minimize specs/json.fan crash.json -o small.json -- ./target @@\n  \
thicket minimize specs/json.fan out/crashes/id:000000* --python json:loads"
)]
pub struct MinimizeArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// The failing input.
    #[arg(value_name = "INPUT")]
    failing: PathBuf,

    /// Where to write the result [default: INPUT.min beside INPUT].
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// After the tree passes, also remove bytes and replace them by `0` where the
    /// failure stays (the result may leave the grammar).
    #[arg(long)]
    bytes: bool,

    /// Most runs of the target.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_runs: u64,

    /// Stop after this long (e.g. 30s, 5m) and write what was found.
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_duration)]
    time: Option<Duration>,

    /// Seed of the choices among equally small derivations.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,

    #[command(flatten)]
    target: TargetArgs,
}

/// Runs `thicket minimize`.
pub fn run(args: MinimizeArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let input = std::fs::read(&args.failing)
        .with_context(|| format!("cannot read {}", args.failing.display()))?;
    let output = args.output.clone().unwrap_or_else(|| {
        let mut name = args.failing.clone().into_os_string();
        name.push(".min");
        PathBuf::from(name)
    });
    let classifier = args.target.classifier()?;
    let mut judge = match args.target.executor_or_report(args.time) {
        Ok(executor) => Judge::new(executor, classifier),
        Err(code) => return Ok(code),
    };
    let started = Instant::now();
    let limits = MinimizeLimits {
        max_runs: args.max_runs,
        deadline: args.time.map(|t| started + t),
    };
    // Inputs that pack bit fields into bytes are read one bit at a time, and each
    // candidate tree runs as its bits packed.
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let encoding = match crate::shared::encoding_for(&spec, &input_grammar) {
        Ok(encoding) => encoding,
        Err(code) => return Ok(code),
    };
    let what = args.failing.display().to_string();
    let reduced = thicket_driver::minimize::reduce(
        &spec.grammar,
        encoding.as_ref(),
        &mut judge,
        &input,
        limits,
        args.seed,
        args.bytes,
        &mut |event| eprintln!("{}", event.line(&what, input.len())),
    )?;
    let Some(reduced) = reduced else {
        eprintln!(
            "error: {what} does not fail ({}): nothing to minimize (a failure is a crash, a \
             sanitizer report, an uncaught exception, a --failure-pattern match or a hang)",
            judge.executor().describe()
        );
        return Ok(exit::FAILURE);
    };
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    let name = output
        .file_name()
        .with_context(|| format!("-o {}: not a file name", output.display()))?
        .to_string_lossy();
    thicket_driver::output::write_atomically(dir, &name, &reduced.bytes)?;
    let output = output.display().to_string();
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("{}", reduced.summary(input.len(), seconds, &output));
    if reduced.stats.budget_spent {
        eprintln!(
            "note: the budget ran out (--max-runs {} / --time): a longer run may reduce further",
            args.max_runs
        );
    }
    Ok(exit::OK)
}
