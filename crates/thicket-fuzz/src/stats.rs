//! The figures of a campaign, as written to `stats.json`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thicket_exec::{CoverageSummary, FailureKind, LikelyRejection};

/// A failure kind and location seen during the campaign.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailureRecord {
    /// `kind @ location`.
    pub key: String,
    /// The kind (`kind`, and its fields: `language` and `class` of an exception, ...).
    #[serde(flatten)]
    pub kind: FailureKind,
    /// The saved input that shows it first (relative to the output folder).
    pub file: String,
    /// One line.
    pub summary: String,
    /// Runs that failed this way.
    pub count: u64,
}

/// Progress and results, as written to `stats.json`.
///
/// Failures are counted three ways: `distinct_failures` (distinct `kind @ location`
/// keys, the number to read first), `crash_files` (inputs saved in `crashes/`: a failure
/// without a location, such as a bare signal, may be saved once per new code it
/// reaches) and `failing_runs` (every run that failed). Read back with
/// [`combined::read_stats`] (fields a `stats.json` lacks take their defaults).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// The seed.
    pub seed: u64,
    /// The spec the campaign runs on (see [`FuzzConfig::spec_id`]).
    pub spec: String,
    /// The target (see [`FuzzConfig::target_id`]).
    pub target: String,
    /// Which executor and target.
    pub executor: String,
    /// Whether coverage feedback was on.
    pub feedback: bool,
    /// Executions so far (including those before a resume).
    pub execs: u64,
    /// Rounds so far: executions plus rounds whose input could not be made valid and
    /// was not run (round `i` draws from random stream `i`).
    pub rounds: u64,
    /// Rounds whose input could not be made valid (no solution for a fresh input
    /// within the solver's budget; with `valid_only`, a mutant the repairs could not
    /// fix), so nothing ran.
    pub unsolved_rounds: u64,
    /// Rounds whose tree stands for no input under the campaign's encoding (Fandango's
    /// bit fields that fill no whole byte), so nothing ran.
    pub unencodable_rounds: u64,
    /// Seconds so far (including those before a resume).
    pub elapsed_s: f64,
    /// Executions per second in this session.
    pub execs_per_sec: f64,
    /// Inputs kept for coverage.
    pub queue: usize,
    /// Distinct failures (crashes, exceptions, sanitizer reports, pattern matches):
    /// distinct `kind @ location` keys, hangs not included.
    pub distinct_failures: usize,
    /// Inputs saved in `crashes/` (one per distinct failure with a location; a failure
    /// without one is saved again when it reaches new code, as AFL does).
    pub crash_files: usize,
    /// Inputs saved in `hangs/` (confirmed hangs reaching new code).
    pub hang_files: usize,
    /// Runs that failed (crashes, exceptions, pattern matches), saved or not.
    pub failing_runs: u64,
    /// Runs that hung and hung again when re-run with a longer limit, saved or not.
    pub hanging_runs: u64,
    /// Candidate hangs that ended when re-run with a longer limit (not saved: a loaded
    /// machine, not the input).
    pub hangs_dismissed: u64,
    /// Times the executor restarted its long-lived process (the Python runner, the
    /// forkserver) after hangs and deaths; each restart costs start-up time.
    pub restarts: u64,
    /// Runs that reported no coverage at all (Python: nothing matching the include
    /// patterns ran).
    pub empty_coverage_runs: u64,
    /// Runs after which a process the target left behind held its output open (the run
    /// ended with the target; see `thicket_exec::Executor::held_output_runs`).
    pub held_output_runs: u64,
    /// Times the executor itself failed and recovered.
    pub executor_errors: u64,
    /// Execution at which the last input was kept or failure saved.
    pub last_find_exec: u64,
    /// Runs of other instances' queue entries (sync; not counted in `execs`).
    pub sync_execs: u64,
    /// Other instances' entries kept for new coverage (they are in `queue/` with
    /// `op:sync-<instance>` in their names).
    pub imported: u64,
    /// Other instances' entries that reached new code but are outside the grammar: their
    /// coverage counts, but they are not kept (there is no tree to mutate).
    pub imported_outside_grammar: u64,
    /// The strategy (`--strategy`).
    pub strategy: String,
    /// Sum over runs of input features x code features (FdLoop's mappings; see
    /// [`strategy`]), when features are counted.
    pub mappings: u64,
    /// Distinct code features reached (edges, or Python lines plus branches), when
    /// features are counted.
    pub code_features: u64,
    /// Mean size of the inputs run in this session, in bytes.
    pub mean_input_size: f64,
    /// Mean size of the kept inputs (`queue/`), in bytes.
    pub mean_queue_input_size: f64,
    /// Seconds the target spent on the runs of this session (the sum of their
    /// durations, hangs' confirming runs and imports included).
    pub target_time_s: f64,
    /// thicket's own time per execution in this session, in microseconds: the
    /// session's elapsed time minus the target's, over the session's executions
    /// (making, judging and booking inputs; writing findings and figures). Where the
    /// next input is made while the target runs (the forkserver, a strategy that can
    /// tell its next input before it sees the run), that making is inside the target's
    /// time, and only what outlasts the target counts here.
    pub own_us_per_exec: f64,
    /// The strategy's own figures (FdLoop: generations, best fitness, weights).
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub strategy_stats: serde_json::Value,
    /// Coverage reached.
    pub coverage: CoverageSummary,
    /// Failures by kind and location.
    pub failures: Vec<FailureRecord>,
    /// The target's own package (see `thicket_exec::Executor::target_package`), which
    /// tells its own exception classes apart.
    pub target_package: Option<String>,
    /// The exception class that is likely the target's way of rejecting invalid input
    /// (`thicket_exec::rejection`), if one is: its failures are probably not bugs.
    pub likely_rejection: Option<LikelyRejection>,
    /// Per operation (`gen`, `regen`, `splice`, `rec`, `rep`, `byte`, `fix`, `copy`, as
    /// in the names of saved inputs): the runs whose input it made and how many of those
    /// were kept. A stacked mutant (`regen+rec`) counts for each of its operations.
    pub ops: BTreeMap<String, OpCount>,
}

/// Runs made by one operation and how many were kept (see [`Stats::ops`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct OpCount {
    /// Executions of inputs the operation made (or took part in).
    pub runs: u64,
    /// Of those, inputs kept for new coverage.
    pub kept: u64,
}
