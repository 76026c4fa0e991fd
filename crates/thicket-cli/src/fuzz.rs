//! `thicket fuzz`: a coverage-guided campaign that runs the program under test.

use crate::exit;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thicket_fuzz::{Campaign, FuzzConfig, Stats};
use thicket_gen::Generator;

/// Arguments of `thicket fuzz`.
#[derive(Args, Debug)]
#[command(
    after_help = "The campaign runs the program on generated inputs, keeps those that \
reach new code (AFL++ edges for afl-cc builds, lines and branches for --python), mutates \
their derivation trees (a rule's subtree regenerated or spliced from another kept input), \
and saves failures and hangs. OUT gets AFL's layout: queue/, crashes/, hangs/, and \
meta/<file>.json with each saved input's derivation tree and why it was kept, plus \
stats.json and plot_data.csv. Each finding is written when found, so Ctrl-C or a kill \
loses nothing; --resume continues.\n\n\
Failures do not change the exit code (0): they are in OUT/crashes and stats.json. Exit 4 \
if the target cannot be run (missing, not executable, dies at start), 3 if the spec has \
errors, 2 for usage errors.\n\n\
Examples:\n  afl-cc -o target target.c\n  \
thicket fuzz specs/json.fan -o out --seed 1 --execs 100000 -- ./target @@\n  \
thicket fuzz specs/json.fan -o out --time 10m -- ./target          (input on stdin)\n  \
thicket fuzz specs/url.fan -o out --python urllib.parse:urlsplit --python-include '*/urllib/*'\n  \
thicket fuzz specs/json.fan -o out --resume --seed 1 -- ./target @@"
)]
pub struct FuzzArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// Output folder (AFL layout; must not hold a campaign unless --resume).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,

    /// Seed of every random choice [default: drawn at random and printed].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,

    /// Stop after N executions in all.
    #[arg(long, value_name = "N")]
    execs: Option<u64>,

    /// Stop after this long: `90`, `90s`, `15m`, `2h`, `500ms`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,

    /// Generate without feedback (no mutation of kept inputs): the random baseline;
    /// input i is then input i of `thicket generate --seed S`.
    #[arg(long)]
    no_feedback: bool,

    /// Share of rounds that mutate a kept input instead of generating a fresh one.
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    mutate_share: f64,

    /// Keep every input in the grammar's language: no mutation changes a terminal's
    /// bytes (by default a fifth of mutations do, to reach error handling).
    #[arg(long)]
    valid_only: bool,

    /// Continue the campaign in OUT (same --seed): kept inputs are run again to rebuild
    /// the coverage, then counting goes on.
    #[arg(long)]
    resume: bool,

    /// Print the figures as one JSON object per line on stdout, every second and at the
    /// end.
    #[arg(long)]
    json_stats: bool,

    #[command(flatten)]
    limits: crate::generate::GenLimits,

    #[command(flatten)]
    target: TargetArgs,
}

/// Reads `90`, `90s`, `15m`, `2h`, `500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 90s, 15m, 2h"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in `{text}`: use ms, s, m or h"
            ));
        }
    };
    Ok(Duration::from_secs_f64(seconds))
}

/// Runs `thicket fuzz`.
pub fn run(args: FuzzArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    if !(0.0..=1.0).contains(&args.mutate_share) {
        eprintln!("error: --mutate-share must be between 0 and 1");
        return Ok(exit::USAGE);
    }
    let config = args.limits.config();
    let generator = match Generator::new(&spec.grammar, config) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {}: {e}", spec.source.name());
            return Ok(exit::BAD_SPEC);
        }
    };
    let classifier = args.target.classifier()?;
    let executor = match args.target.executor_or_report(args.time) {
        Ok(executor) => executor,
        Err(code) => return Ok(code),
    };
    let seed = crate::generate::seed_or_draw(args.seed);
    let fuzz_config = FuzzConfig {
        seed,
        max_execs: args.execs,
        max_time: args.time,
        feedback: !args.no_feedback,
        mutate_per_mille: (args.mutate_share * 1000.0).round() as u32,
        resume: args.resume,
        valid_only: args.valid_only,
    };
    let mut campaign =
        match Campaign::new(&generator, executor, classifier, fuzz_config, &args.output) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(exit::FAILURE);
            }
        };
    eprintln!("thicket: {}", campaign.stats().executor);
    if args.resume {
        eprintln!(
            "thicket: resumed at {} executions with {} kept inputs, {}",
            campaign.stats().execs,
            campaign.stats().queue,
            campaign.stats().coverage.headline()
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        ctrlc::set_handler(move || {
            // A second Ctrl-C stops at once; everything found is already on disk.
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let bar = status_bar();
    let json = args.json_stats;
    let mut last_json = std::time::Instant::now();
    let result = campaign.run(&stop, |stats| {
        bar.set_message(status_line(stats));
        if json && last_json.elapsed() >= Duration::from_secs(1) {
            last_json = std::time::Instant::now();
            println!("{}", serde_json::to_string(stats).expect("stats serialize"));
        }
    });
    bar.finish_and_clear();
    let stats = match result {
        Ok(stats) => stats,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "thicket: findings so far are in {}",
                campaign.out_dir().display()
            );
            return Ok(exit::FAILURE);
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string(&stats).expect("stats serialize")
        );
    }
    print_summary(&stats, &args.output, stop.load(Ordering::SeqCst));
    Ok(exit::OK)
}

fn status_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

fn status_line(stats: &Stats) -> String {
    format!(
        "{} execs ({:.0}/s) | {} | queue {} | crashes {} | hangs {}",
        stats.execs,
        stats.execs_per_sec,
        stats.coverage.headline(),
        stats.queue,
        stats.crashes,
        stats.hangs
    )
}

fn print_summary(stats: &Stats, out: &std::path::Path, interrupted: bool) {
    eprintln!(
        "thicket fuzz: {}{} execs in {:.1} s ({:.0}/s): {}, {} kept, {} crashes, {} hangs -> {}",
        if interrupted {
            "interrupted after "
        } else {
            ""
        },
        stats.execs,
        stats.elapsed_s,
        stats.execs_per_sec,
        stats.coverage.headline(),
        stats.queue,
        stats.crashes,
        stats.hangs,
        out.display()
    );
    for f in &stats.failures {
        eprintln!("  {} ({} runs): {}", f.key, f.count, f.file);
    }
    if stats.executor_errors > 0 {
        eprintln!(
            "warning: the executor failed {} times and recovered",
            stats.executor_errors
        );
    }
}
