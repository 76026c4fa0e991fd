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
//! - [`JavaExecutor`]: a static Java method in one long-lived JVM (thicket's harness),
//!   with per-input method and line coverage from JaCoCo's agent;
//! - [`SancovExecutor`]: C programs built with SanitizerCoverage's function guards and
//!   thicket's runtime (`sancov_rt.c`), started per input, naming the functions each
//!   run entered (for per-location coverage);
//! - [`PlainExecutor`]: any program, started per input, without coverage.
//!
//! Inputs reach a program on stdin, in a file whose path replaces `@@` in its arguments,
//! or as an argument ([`InputMode`]). A [`ProgramConfig`] names the program as a user
//! does (a command line, a Python function or a Java method, with its limits) and gives
//! its executor and failure classifier. Timeouts kill the whole process group. Bad targets
//! (missing, not executable, not instrumented, dying) are errors naming the target,
//! never panics.

#![warn(missing_docs)]

pub mod classify;
pub mod command;
pub mod coverage;
pub mod forkserver;
pub mod java;
pub mod judge;
pub mod outcome;
pub mod plain;
pub mod program;
pub mod python;
mod reap;
pub mod rejection;
pub mod sancov;
mod sys;

pub use classify::{Classifier, Failure, FailureKind};
pub use command::{InputMode, Target};
pub use coverage::{CoverageKind, CoverageSet, CoverageSummary, Novelty};
pub use forkserver::{ForkserverExecutor, Handshake};
pub use java::{JavaExecutor, JavaTarget, JavaTrace};
pub use judge::{Judge, JudgeCounts, Tally, Verdict};
pub use outcome::{Exception, Outcome, Status, Tail};
pub use plain::PlainExecutor;
pub use program::{JavaProgram, ProgramConfig, PythonProgram};
pub use python::{PyToken, PyTrace, PythonExecutor, PythonTarget, TokenCond, TokenTrace};
pub use reap::cleanup_now;
pub use rejection::{LikelyRejection, RejectionReason, likely_rejection};
pub use sancov::SancovExecutor;

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
    /// Java methods and lines.
    Java(&'a JavaTrace),
}

impl Trace<'_> {
    /// Calls `f` with the id of every code feature the run reached, whatever the
    /// backend: an AFL++ edge is its map index; a Python line or branch is a hash of
    /// its file, line (or arc) and kind. Ids are stable within one campaign (the same
    /// location gives the same id), so feedback loops can count and compare feature
    /// sets without knowing the backend. (Hit counts are not features.)
    pub fn for_each_feature(&self, mut f: impl FnMut(u64)) {
        match self {
            Trace::None => {}
            Trace::Edges(map) => {
                for (i, &b) in map.iter().enumerate() {
                    if b != 0 {
                        f(i as u64);
                    }
                }
            }
            Trace::Python(py) => {
                for file in &py.files {
                    let base = feature_hash(file.path.as_bytes());
                    for &line in &file.lines {
                        f(mix(base ^ u64::from(line)));
                    }
                    for &(from, to) in &file.branches {
                        let arc = (u64::from(from as u32) << 32) | u64::from(to as u32);
                        f(mix(base.rotate_left(17) ^ arc ^ 0xB5AD_4ECE_DA1C_E2A9));
                    }
                }
            }
            // Method and line ids are the executor's own (stable for its lifetime, as
            // a campaign needs), tagged apart.
            Trace::Java(java) => {
                for &m in &java.methods {
                    f((1 << 40) | u64::from(m));
                }
                for &l in &java.lines {
                    f((2 << 40) | u64::from(l));
                }
            }
        }
    }

    /// How many features [`Trace::for_each_feature`] reports.
    pub fn feature_count(&self) -> u64 {
        let mut n = 0;
        self.for_each_feature(|_| n += 1);
        n
    }
}

/// FNV-1a, then mixed: a path's hash for feature ids.
fn feature_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    mix(h)
}

/// SplitMix64's finaliser.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What kind of code a [`Location`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LocationKind {
    /// A function (Python: a `def`, by qualified name; C: a symbol).
    Function,
    /// A method (Java: `Class.method(descriptor)`), for executors of class-based code.
    Method,
    /// A source line (its number in `name`).
    Line,
}

/// A named code location a run can reach: the unit per-location coverage (CODEINE's
/// coverage matrix) is counted in. Two runs reaching the same code give equal
/// locations, across executor restarts and processes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Function, method or line.
    pub kind: LocationKind,
    /// The source file (Python: its path; C: the binary; Java: the class's file).
    pub file: String,
    /// The function's or method's name, or the line number.
    pub name: String,
}

impl std::fmt::Display for Location {
    /// `function FILE:NAME`, `method FILE:NAME` or `line FILE:NUMBER`: one token per
    /// kind, then the place, so a location can be named on the command line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            LocationKind::Function => "function",
            LocationKind::Method => "method",
            LocationKind::Line => "line",
        };
        write!(f, "{kind} {}:{}", self.file, self.name)
    }
}

/// Runs a target on inputs.
pub trait Executor {
    /// Runs the target on one input. An `Err` means the executor itself failed (the
    /// target cannot be started any more, a file cannot be written); everything the
    /// target does, crashing and hanging included, is an `Ok` outcome.
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError>;

    /// [`Executor::run`], calling `meanwhile` once: while the target runs, where
    /// the executor starts the target and waits for it apart (the AFL++ forkserver):
    /// work that does not depend on this run (a campaign's next input) then costs no
    /// time of its own on a machine with a core to spare. The run's time limit counts
    /// from when `meanwhile` returns, and its `time` includes whatever of `meanwhile`
    /// outlasts the target. The default runs the target, then calls `meanwhile`.
    fn run_overlapping(
        &mut self,
        input: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<Outcome, ExecError> {
        let outcome = self.run(input);
        meanwhile();
        outcome
    }

    /// The coverage of the last run.
    fn trace(&self) -> Trace<'_>;

    /// The named locations the last run covered (functions and lines for Python;
    /// functions of C programs built with thicket's SanitizerCoverage runtime; methods
    /// and lines for a Java executor), appended to `out` in any order. Returns `false`
    /// if the executor names no locations (the default: an AFL++ edge map cannot be
    /// named), `true` otherwise, even when the run covered none.
    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        let _ = out;
        false
    }

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

    /// The target's own package, which tells its own exception classes apart (see
    /// [`rejection`]): for a Python function, the top-level package of its module
    /// (`tomllib` for `tomllib:loads`; `thicket_target`, the name the runner loads it
    /// under, for `file.py:function`); for a Java method, its class's package (empty for
    /// the default package). `None` for programs.
    fn target_package(&self) -> Option<String> {
        None
    }

    /// Runs after which a process the target left behind (outside its process group)
    /// held its output open, for executors that read the output through pipes. Such a
    /// run ends when the target ends: its output is read for [`plain::OUTPUT_GRACE`]
    /// more, and the processes it left are ended.
    fn held_output_runs(&self) -> u64 {
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
    /// The JVM could not be started, the harness compiled or the target loaded.
    #[error("Java target: {0}")]
    Java(String),
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
    if mode == Mode::Auto && target.has_sancov_runtime() {
        let executor = SancovExecutor::new(target, limits, work_dir)?;
        return Ok((Box::new(executor), None));
    }
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
