//! # thicket-exec
//!
//! Running the program under test. This crate has one job: run a target on an input and
//! report what happened — how it ended (exit code, signal, timeout), how long it took,
//! its peak memory, the ends of its stdout and stderr, whether that is a failure and
//! where (sanitizer reports, uncaught Python and Java exceptions, a user pattern, hangs)
//! — and which code it reached.
//!
//! Executors (all behind the [`Executor`] trait, so feedback loops need not care):
//! - [`ForkserverExecutor`]: programs built with AFL++'s `afl-cc` / `afl-clang-fast`,
//!   through the AFL++ forkserver protocol (both the pre-4.20 and the 4.20+ handshake)
//!   with a System V shared-memory edge map and AFL's hit-count buckets;
//! - [`PythonExecutor`]: a Python function in one long-lived interpreter (thicket's
//!   runner), with per-input line and branch coverage from coverage.py;
//! - [`PlainExecutor`]: any program, started per input, without coverage.
//!
//! Inputs reach a program on stdin, in a file whose path replaces `@@` in its arguments,
//! or as an argument ([`InputMode`]). Timeouts kill the whole process group. Bad targets
//! (missing, not executable, not instrumented, dying) are errors naming the target,
//! never panics.

#![warn(missing_docs)]

pub mod classify;
pub mod command;
pub mod coverage;
pub mod forkserver;
pub mod outcome;
pub mod plain;
pub mod python;
mod reap;
mod sys;

pub use classify::{Classifier, Failure, FailureKind};
pub use command::{InputMode, Target};
pub use coverage::{CoverageSet, CoverageSummary, Novelty};
pub use forkserver::{ForkserverExecutor, Handshake};
pub use outcome::{Exception, Outcome, Status, Tail};
pub use plain::PlainExecutor;
pub use python::{PyToken, PyTrace, PythonExecutor, PythonTarget, TokenCond, TokenTrace};
pub use reap::cleanup_now;

use std::path::Path;
use std::time::Duration;

/// Limits of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time after which the run is killed and counted as a hang.
    pub timeout: Duration,
    /// Address-space limit in MiB (`RLIMIT_AS`); none by default (sanitizers reserve
    /// terabytes of address space, so do not set it for ASan targets).
    pub memory_mb: Option<u64>,
}

impl Default for Limits {
    /// One second (AFL's default), no memory limit.
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_millis(1000),
            memory_mb: None,
        }
    }
}

/// The coverage of the last run of an executor.
#[derive(Clone, Copy, Debug)]
pub enum Trace<'a> {
    /// The executor measures no coverage.
    None,
    /// The AFL++ edge map, hit counts already in AFL's buckets.
    Edges(&'a [u8]),
    /// Python lines and branches.
    Python(&'a PyTrace),
}

/// Runs a target on inputs.
pub trait Executor {
    /// Runs the target on one input. An `Err` means the executor itself failed (the
    /// target cannot be started any more, a file cannot be written); everything the
    /// target does, crashing and hanging included, is an `Ok` outcome.
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError>;

    /// The coverage of the last run.
    fn trace(&self) -> Trace<'_>;

    /// One line: which executor, which target.
    fn describe(&self) -> String;

    /// The time limit of a run.
    fn timeout(&self) -> Duration;

    /// Changes the time limit of the next runs (a campaign re-runs a candidate hang with
    /// a longer one before saving it).
    fn set_timeout(&mut self, timeout: Duration);

    /// How often the executor had to restart its long-lived process (after hangs and
    /// deaths), each restart costing start-up time.
    fn restarts(&self) -> u64 {
        0
    }

    /// Whether the target takes text (a Python `str`): inputs should then be valid
    /// UTF-8, and mutations keep them so.
    fn wants_text(&self) -> bool {
        false
    }

    /// Runs that reported no coverage at all, for executors that measure coverage by
    /// file patterns (a hint that the patterns miss the code).
    fn empty_runs(&self) -> u64 {
        0
    }

    /// The token-level path condition of the last run, for executors that hook the
    /// target's tokenizer ([`PythonTarget::tokenizer`]); `None` otherwise.
    fn token_trace(&self) -> Option<&TokenTrace> {
        None
    }

    /// The edge-map size, for executors with an AFL++ map.
    fn map_size(&self) -> Option<usize> {
        match self.trace() {
            Trace::Edges(map) => Some(map.len()),
            _ => None,
        }
    }
}

/// Why an executor could not run a target.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// No command was given.
    #[error("no target command given (put it after `--`, e.g. `-- ./target @@`)")]
    NoCommand,
    /// The program does not exist.
    #[error("target `{0}` not found (neither a file nor a program on PATH)")]
    NotFound(String),
    /// The program cannot be executed.
    #[error("target `{0}` cannot be executed: {1}")]
    NotExecutable(String, String),
    /// The request makes no sense.
    #[error("{0}")]
    Usage(String),
    /// Starting the program failed.
    #[error("cannot start target `{0}`: {1}")]
    Spawn(String, #[source] std::io::Error),
    /// A file or pipe operation of thicket's failed.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The forkserver misbehaved or could not be started.
    #[error("target `{0}`: AFL++ forkserver: {1}")]
    Forkserver(String, String),
    /// The Python runner could not be started or the target not loaded.
    #[error("Python target: {0}")]
    Python(String),
}

/// Which executor to use for a command-line target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The forkserver if the program is AFL++-instrumented, else plain.
    Auto,
    /// The AFL++ forkserver (an error if the program does not speak it).
    Afl,
    /// Plain runs without coverage.
    Plain,
}

/// An executor for a command-line target; with [`Mode::Auto`] also a note when it falls
/// back to plain runs.
pub fn executor_for(
    target: Target,
    mode: Mode,
    limits: Limits,
    work_dir: Option<&Path>,
) -> Result<(Box<dyn Executor>, Option<String>), ExecError> {
    let use_afl = match mode {
        Mode::Afl => true,
        Mode::Plain => false,
        Mode::Auto => target.is_afl_instrumented() && target.mode != InputMode::Arg,
    };
    if use_afl {
        let executor = ForkserverExecutor::new(target, limits, work_dir)?;
        return Ok((Box::new(executor), None));
    }
    let note = (mode == Mode::Auto).then(|| {
        format!(
            "`{}` is not instrumented with AFL++ (or takes its input as an argument): \
             running it without coverage; compile it with afl-cc for coverage feedback",
            target.name
        )
    });
    Ok((
        Box::new(PlainExecutor::new(target, limits, work_dir)?),
        note,
    ))
}

/// Sanitizer settings that make reports end the run with a signal (as AFL sets them),
/// unless the user set their own.
pub(crate) fn sanitizer_env(command: &mut std::process::Command) {
    let defaults = [
        (
            "ASAN_OPTIONS",
            "abort_on_error=1:detect_leaks=0:symbolize=1:allocator_may_return_null=1:handle_abort=0",
        ),
        (
            "UBSAN_OPTIONS",
            "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
        ),
        ("MSAN_OPTIONS", "exit_code=86:abort_on_error=1:symbolize=1"),
    ];
    for (name, value) in defaults {
        if std::env::var_os(name).is_none() {
            command.env(name, value);
        }
    }
}
