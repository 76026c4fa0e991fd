//! `thicket minimize`: reduce a failing input while it keeps failing the same way.

use crate::exit;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use thicket_exec::Judge;
use thicket_fuzz::minimize::{MinimizeLimits, failure_key, reduce_failure};

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
    let what = args.failing.display().to_string();
    let Some(reduced) = reduce(
        &spec.grammar,
        &mut judge,
        &input,
        &what,
        limits,
        args.seed,
        args.bytes,
    )?
    else {
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
    crate::shared::write_atomically(dir, &name, &reduced.bytes)?;
    eprintln!(
        "thicket: {} -> {} bytes{} in {} runs ({} repeated candidates skipped), {:.1} s; \
         still fails with `{}`; written to {}",
        input.len(),
        reduced.bytes.len(),
        if reduced.in_grammar {
            ", in the grammar"
        } else {
            ""
        },
        reduced.stats.runs,
        reduced.stats.repeats,
        started.elapsed().as_secs_f64(),
        reduced.key,
        output.display()
    );
    if reduced.stats.budget_spent {
        eprintln!(
            "note: the budget ran out (--max-runs {} / --time): a longer run may reduce further",
            args.max_runs
        );
    }
    Ok(exit::OK)
}

/// A failing input made smaller, and how it fails.
pub struct Reduced {
    /// The smallest input found that fails the same way.
    pub bytes: Vec<u8>,
    /// How it fails (kind and location).
    pub key: String,
    /// Whether it is in the grammar (the tree passes only; no byte pass ran).
    pub in_grammar: bool,
    /// What the minimisation did.
    pub stats: thicket_fuzz::minimize::MinimizeStats,
}

/// Minimises `input` (named `what` in messages) against the target with
/// [`thicket_fuzz::minimize::reduce_failure`]; `None` if the input does not fail;
/// progress goes to stderr every second.
pub fn reduce(
    grammar: &thicket_grammar::Grammar,
    judge: &mut Judge,
    input: &[u8],
    what: &str,
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
) -> anyhow::Result<Option<Reduced>> {
    let Some(key) = failure_key(judge, input)? else {
        return Ok(None);
    };
    eprintln!(
        "thicket: {what} ({} bytes) fails with `{key}`; minimizing",
        input.len()
    );
    let started = Instant::now();
    let mut smallest = input.len();
    let mut last_report = Instant::now();
    let progress = |size: usize| {
        smallest = smallest.min(size);
        if last_report.elapsed() >= Duration::from_secs(1) {
            last_report = Instant::now();
            eprintln!(
                "thicket: {:.0} s: smallest so far {smallest} bytes",
                started.elapsed().as_secs_f64()
            );
        }
    };
    let reduced = reduce_failure(grammar, judge, input, &key, limits, seed, bytes, progress)?;
    if let Some(why) = &reduced.outside_grammar {
        eprintln!("note: {what} is not in the grammar ({why}): its bytes were reduced");
    }
    Ok(Some(Reduced {
        bytes: reduced.bytes,
        key,
        in_grammar: reduced.in_grammar,
        stats: reduced.stats,
    }))
}
