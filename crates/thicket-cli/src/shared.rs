//! Helpers the subcommands share: durations on the command line, seeds, files written
//! whole, the input reader and worker threads of commands that read inputs.

use crate::exit;
use anyhow::Context;
use std::time::Duration;
use thicket_driver::{InputGrammar, InputReader};
use thicket_parse::ParseConfig;

/// Reads `90` (seconds), `1.5`, `90s`, `15m`, `2h`, `500ms`: every `--time`, `--timeout`
/// and other duration of the command line.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!("`{text}` is not a duration: a number of seconds, or 90s, 15m, 2h, 500ms")
    })?;
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
    if seconds.is_nan() || seconds < 0.0 {
        return Err(format!(
            "`{text}` is not a duration (a number of seconds, or 90s, 15m, 2h)"
        ));
    }
    if seconds > MAX_DURATION_SECONDS {
        return Err(format!(
            "`{text}` is longer than the longest duration accepted, 100 years"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// [`parse_duration`] for a time budget, which must be more than zero.
pub fn parse_budget(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!(
            "`{text}` is not a positive duration (a number of seconds, or 90s, 15m, 2h)"
        ));
    }
    Ok(duration)
}

/// The longest duration [`parse_duration`] accepts, in seconds: 100 years, so that a
/// deadline `now + duration` never overflows the clock.
const MAX_DURATION_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// The seed given, or one drawn from the clock and printed, so that any run can be
/// repeated with `--seed`.
pub fn seed_or_draw(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        let seed = thicket_gen::draw_seed();
        eprintln!("thicket: using --seed {seed}");
        seed
    })
}

/// The grammar the spec's inputs are read with (bit by bit if they pack bit fields into
/// bytes), or the exit code after reporting why they cannot be read.
pub fn input_grammar(spec: &thicket_grammar::Spec) -> Result<InputGrammar<'_>, u8> {
    InputGrammar::new(spec).map_err(|e| crate::spec::report(&e))
}

/// A reader of the spec's inputs, or the exit code after reporting why not. Unlike a
/// library's default, a large input gets helper threads when it is parsed alone.
pub fn reader_for<'g>(
    spec: &thicket_grammar::Spec,
    grammar: &'g InputGrammar<'_>,
    config: ParseConfig,
) -> Result<InputReader<'g>, u8> {
    let config = ParseConfig {
        threads: true,
        ..config
    };
    grammar.reader(config).map_err(|e| {
        eprintln!("error: {}: {e}", spec.source.name());
        exit::FAILURE
    })
}

/// How trees stand for the spec's inputs when they pack bit fields into bytes (`None`:
/// as their text), or the exit code after reporting why they cannot be read.
pub fn encoding_for<'g>(
    spec: &thicket_grammar::Spec,
    grammar: &'g InputGrammar<'_>,
) -> Result<Option<thicket_fandango::PackedBits<'g>>, u8> {
    grammar.encoding(ParseConfig::default()).map_err(|e| {
        eprintln!("error: {}: {e}", spec.source.name());
        exit::FAILURE
    })
}

/// `-j`: the worker threads of a command that works in parallel.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct JobsArgs {
    /// Worker threads [default: one per core].
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
}

impl JobsArgs {
    /// A pool of the threads asked for (0 or none: one per core).
    pub fn pool(self) -> anyhow::Result<rayon::ThreadPool> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.jobs.unwrap_or(0))
            .build()
            .context("cannot start worker threads")
    }
}

/// On Ctrl-C or SIGTERM, removes the temporary files being written and exits with
/// 130, so that an interrupted `-o` run leaves only whole inputs behind. For commands
/// that have no stop handler of their own (files written by
/// `thicket_driver::output::write_atomically`).
pub fn remove_partial_files_on_interrupt() {
    // A second handler (another command's) is refused by ctrlc; then that one rules.
    let _ = ctrlc::set_handler(|| {
        thicket_driver::output::remove_files_in_flight();
        std::process::exit(130);
    });
}
