//! # thicket-fuzz
//!
//! Feedback-directed generation: a coverage-guided campaign over derivation trees. Each
//! round makes an input — a fresh tree from the generator, or a mutant of a kept tree
//! (a rule's subtree regenerated, or spliced in from another kept tree with the same
//! rule, 1-3 times stacked) — runs it with a [`thicket_exec::Executor`], keeps it if it
//! reached code no earlier input reached, and saves failures and hangs, deduplicated.
//!
//! Every input is a derivation tree of the grammar. Regenerated and spliced mutants are
//! in the grammar's language; a fifth of the mutations change a byte of a terminal
//! (FdLoop's leaf bit-flip), which leaves the language to reach error handling —
//! `valid_only` turns those off. With a [`thicket_solve::Solver`]
//! ([`Campaign::with_solver`]) fresh inputs satisfy the spec's constraints, and with
//! `valid_only` every mutant is repaired to satisfy them (a round whose input cannot be
//! made valid is skipped: nothing runs). The feedback steers which inputs are made. All
//! randomness of round `i` flows from `Generator::rng_for(seed, i)`; with the same seed,
//! target and budget in executions a campaign makes the same inputs (up to timing: hangs
//! depend on the clock). Without feedback ([`FuzzConfig::feedback`] off) the inputs are
//! exactly those of `thicket generate --seed S` (which skips the streams that give no
//! valid input in the same way), the baseline to compare against.
//!
//! The output folder ([`output`]) follows AFL's layout, each finding written atomically
//! when found; a campaign can be resumed from it.

#![warn(missing_docs)]

pub mod combined;
pub mod minimize;
pub mod mutate;
pub mod output;
pub mod strategy;
pub mod sync;
pub mod whitebox;

use output::{OutDir, file_safe, id_of};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thicket_exec::{
    Classifier, CoverageKind, CoverageSet, CoverageSummary, ExecError, Executor, Failure,
    FailureKind, LikelyRejection, Outcome,
};
use thicket_gen::{Generator, below};
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// Deepest tree (rule expansions on a path) written into `meta/` files: its fuzzingbook
/// JSON nests about twice as deep, within the 128 levels serde_json reads by default.
const MAX_META_TREE_DEPTH: u32 = 60;

/// Rounds in a row without a valid input after which a campaign gives up.
const MAX_CONSECUTIVE_UNSOLVED: u32 = 1000;

/// The solver limits of a campaign: a campaign spends little on any one input, so a
/// tree gets 8 repair rounds (the solver's default is 32) and a check visits at most
/// 100,000 quantifier instances (default 2,000,000; over the budget counts as violated).
/// A mutant not repaired within that is dropped and the next round drawn; on xml.fan a
/// mutant that duplicates attributes took up to 17 s to give up with the defaults.
pub fn solver_config(generation: thicket_gen::GenConfig) -> thicket_solve::SolverConfig {
    thicket_solve::SolverConfig {
        generation,
        max_rounds: 8,
        check_budget: 100_000,
        ..Default::default()
    }
}

/// Why a campaign stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The executor failed (the target cannot be run).
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// A file of the output folder.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The campaign cannot go on (or start).
    #[error("{0}")]
    Campaign(String),
}

/// Settings of a campaign.
#[derive(Clone, Debug)]
pub struct FuzzConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Stop after this many executions (in all, counting a resumed campaign's).
    pub max_execs: Option<u64>,
    /// Stop after this much time (of this session).
    pub max_time: Option<Duration>,
    /// Use coverage feedback (mutate kept inputs); off: plain generation.
    pub feedback: bool,
    /// Per mille of rounds that mutate a kept input rather than generate afresh (once
    /// any input is kept).
    pub mutate_per_mille: u32,
    /// Continue the campaign in the output folder.
    pub resume: bool,
    /// Only valid inputs: mutations that stay in the grammar's language (no byte
    /// changes in terminals), and with a solver, mutants repaired to satisfy the
    /// constraints.
    pub valid_only: bool,
    /// What the campaign runs on, e.g. the spec's path and a hash of its text
    /// (recorded in `stats.json`; `--resume` refuses another). Empty: not checked.
    pub spec_id: String,
    /// What the campaign runs, e.g. the target's command line (recorded and checked as
    /// `spec_id`). Empty: not checked.
    pub target_id: String,
    /// Import other instances' queue entries from a shared folder now and then
    /// (AFL++'s sync protocol; the output folder should be `dir/name`).
    pub sync: Option<sync::SyncConfig>,
    /// Count code and input features of every run (`mappings`, `code_features` in
    /// `stats.json`) even if the strategy does not need them.
    pub track_features: bool,
    /// Also write a line of `plot_data.csv` every this many executions (besides one a
    /// second), for plots of short campaigns over executions.
    pub plot_every_execs: Option<u64>,
}

impl Default for FuzzConfig {
    fn default() -> FuzzConfig {
        FuzzConfig {
            seed: 0,
            max_execs: None,
            max_time: None,
            feedback: true,
            mutate_per_mille: 800,
            resume: false,
            valid_only: false,
            spec_id: String::new(),
            target_id: String::new(),
            sync: None,
            track_features: false,
            plot_every_execs: None,
        }
    }
}

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
    /// Mean size of the inputs run, in bytes.
    pub mean_input_size: f64,
    /// Seconds the target spent on the runs (the sum of their durations).
    pub target_time_s: f64,
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

pub(crate) struct Entry {
    pub(crate) id: usize,
    pub(crate) tree: Option<DerivationTree>,
}

/// An input to save: its bytes, and its derivation tree if it has one (inputs made from
/// tokens, as in [`whitebox`], have none).
#[derive(Clone, Copy)]
struct Input<'a> {
    bytes: &'a [u8],
    tree: Option<&'a DerivationTree>,
}

impl<'a> Input<'a> {
    fn of(tree: &'a DerivationTree) -> Input<'a> {
        Input {
            bytes: tree.bytes(),
            tree: Some(tree),
        }
    }
}

/// What [`Campaign::account`] booked of a run.
struct Accounted {
    /// What the run reached that no earlier run had.
    novelty: thicket_exec::Novelty,
    /// Whether the run counts for coverage (no crash or hang).
    counts: bool,
    /// The failure's key, if the run failed.
    failure: Option<String>,
    /// Whether that failure is new.
    new_failure: bool,
}

/// What running one input gave (see [`Campaign::run_input`]).
pub(crate) struct Ran {
    /// What the input reached that no earlier input had (empty for failures).
    pub novelty: thicket_exec::Novelty,
}

#[derive(Serialize)]
struct Meta<'a> {
    id: usize,
    file: &'a str,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    novelty: Option<thicket_exec::Novelty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    op: &'a str,
    parent: Option<usize>,
    exec: u64,
    time_ms: u64,
    status: String,
    duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_hex: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    stderr_tail: String,
}

/// A coverage-guided campaign.
pub struct Campaign<'g> {
    generator: &'g Generator<'g>,
    solver: Option<&'g thicket_solve::Solver<'g>>,
    grammar: &'g Grammar,
    executor: Box<dyn Executor>,
    classifier: Classifier,
    config: FuzzConfig,
    out: OutDir,
    corpus: Vec<Entry>,
    coverage: CoverageSet,
    crash_coverage: CoverageSet,
    hang_coverage: CoverageSet,
    failures: BTreeMap<String, FailureRecord>,
    next_crash: usize,
    next_hang: usize,
    stats: Stats,
    session_start: Instant,
    elapsed_before: f64,
    session_execs: u64,
    restarts_before: u64,
    /// The target takes text: byte mutations change characters.
    text: bool,
    /// When other instances' entries were last imported (with [`FuzzConfig::sync`]).
    last_sync: Option<Instant>,
    /// Parses inputs not made here (a resumed queue, other instances' entries) into
    /// trees; made at the first such input.
    parser: Option<thicket_parse::Parser<'g>>,
    /// What to run next and what the feedback means.
    strategy: Box<dyn strategy::Strategy + 'g>,
    /// Code features reached so far (when features are counted).
    features: rustc_hash::FxHashSet<u64>,
    /// Bytes of all inputs run (for the mean size).
    input_bytes: u64,
    /// Executions at the last line of `plot_data.csv`.
    last_plot_execs: u64,
    /// Executor errors in a row, and when the figures were last written.
    consecutive_errors: u32,
    last_write: Instant,
}

impl<'g> Campaign<'g> {
    /// Prepares a campaign writing to `out` (resuming it if the config says so: the
    /// kept inputs are run again to rebuild the coverage, and counting goes on).
    pub fn new(
        generator: &'g Generator<'g>,
        executor: Box<dyn Executor>,
        classifier: Classifier,
        config: FuzzConfig,
        out: &std::path::Path,
    ) -> Result<Campaign<'g>, FuzzError> {
        let out = OutDir::open(out, config.resume)?;
        let stats = Stats {
            seed: config.seed,
            spec: config.spec_id.clone(),
            target: config.target_id.clone(),
            executor: executor.describe(),
            feedback: config.feedback,
            execs: 0,
            rounds: 0,
            unsolved_rounds: 0,
            elapsed_s: 0.0,
            execs_per_sec: 0.0,
            queue: 0,
            distinct_failures: 0,
            crash_files: 0,
            hang_files: 0,
            failing_runs: 0,
            hanging_runs: 0,
            hangs_dismissed: 0,
            restarts: 0,
            empty_coverage_runs: 0,
            held_output_runs: 0,
            executor_errors: 0,
            last_find_exec: 0,
            sync_execs: 0,
            imported: 0,
            imported_outside_grammar: 0,
            strategy: "coverage".into(),
            mappings: 0,
            code_features: 0,
            mean_input_size: 0.0,
            target_time_s: 0.0,
            strategy_stats: serde_json::Value::Null,
            coverage: CoverageSummary::default(),
            failures: Vec::new(),
            target_package: executor.target_package(),
            likely_rejection: None,
            ops: BTreeMap::new(),
        };
        let mut campaign = Campaign {
            generator,
            solver: None,
            grammar: generator.grammar(),
            executor,
            classifier,
            config,
            out,
            corpus: Vec::new(),
            coverage: CoverageSet::new(),
            crash_coverage: CoverageSet::new(),
            hang_coverage: CoverageSet::new(),
            failures: BTreeMap::new(),
            next_crash: 0,
            next_hang: 0,
            stats,
            session_start: Instant::now(),
            elapsed_before: 0.0,
            session_execs: 0,
            restarts_before: 0,
            text: false,
            last_sync: None,
            parser: None,
            strategy: Box::new(strategy::CoverageGuided),
            features: Default::default(),
            input_bytes: 0,
            last_plot_execs: 0,
            consecutive_errors: 0,
            last_write: Instant::now(),
        };
        campaign.text = campaign.executor.wants_text();
        if campaign.config.resume {
            campaign.load()?;
        } else {
            campaign.out.append(
                "plot_data.csv",
                "elapsed_s,execs,coverage,queue,crash_files,hang_files,distinct_failures\n",
            )?;
        }
        campaign.update_stats();
        campaign.write_stats()?;
        Ok(campaign)
    }

    /// Makes inputs valid under the solver's constraints: fresh inputs are its
    /// solutions, and with [`FuzzConfig::valid_only`] mutants are repaired. Its
    /// generator should have the campaign generator's limits.
    pub fn with_solver(mut self, solver: &'g thicket_solve::Solver<'g>) -> Campaign<'g> {
        self.solver = Some(solver);
        self
    }

    /// Runs `strategy` instead of the coverage-guided default (see [`strategy`]).
    pub fn with_strategy(
        mut self,
        strategy: Box<dyn strategy::Strategy + 'g>,
    ) -> Result<Campaign<'g>, FuzzError> {
        if let Some(header) = strategy.generation_header()
            && !self.config.resume
        {
            self.out.append("generations.csv", header)?;
        }
        self.stats.strategy = strategy.name().to_string();
        self.strategy = strategy;
        self.write_stats()?;
        Ok(self)
    }

    /// The output folder.
    pub fn out_dir(&self) -> &std::path::Path {
        self.out.root()
    }

    /// The current figures.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Runs until the budget is spent or `stop` is set; calls `progress` about four
    /// times a second. Returns the final figures (also in `stats.json`).
    pub fn run(
        &mut self,
        stop: &AtomicBool,
        mut progress: impl FnMut(&Stats),
    ) -> Result<Stats, FuzzError> {
        self.session_start = Instant::now();
        let mut last_progress = Instant::now();
        self.last_write = Instant::now();
        self.consecutive_errors = 0;
        let mut consecutive_unsolved = 0;
        loop {
            if stop.load(Ordering::Relaxed) || self.budget_spent() || self.strategy.finished() {
                break;
            }
            if let Some(sync) = &self.config.sync
                && self.last_sync.is_none_or(|t| t.elapsed() >= sync.every)
            {
                self.import_from_peers()?;
            }
            let index = self.stats.rounds;
            let mut rng = Generator::rng_for(self.config.seed, index);
            let ctx = strategy::Ctx {
                generator: self.generator,
                solver: self.solver,
                config: &self.config,
                text: self.text,
                corpus: &self.corpus,
            };
            let Some(strategy::Candidate { tree, op, parent }) = self.strategy.next(&ctx, &mut rng)
            else {
                self.stats.rounds += 1;
                self.stats.unsolved_rounds += 1;
                consecutive_unsolved += 1;
                if consecutive_unsolved >= MAX_CONSECUTIVE_UNSOLVED {
                    self.finish()?;
                    return Err(FuzzError::Campaign(format!(
                        "{MAX_CONSECUTIVE_UNSOLVED} rounds in a row gave no input that \
                         satisfies the constraints within the solver's budget"
                    )));
                }
                continue;
            };
            consecutive_unsolved = 0;
            let outcome = match self.execute(tree.bytes()) {
                Ok(Some(outcome)) => outcome,
                Ok(None) => continue,
                Err(e) => {
                    self.finish()?;
                    return Err(e);
                }
            };
            self.input_bytes += tree.bytes().len() as u64;
            self.stats.target_time_s += outcome.time.as_secs_f64();
            let ran = self.account(Input::of(&tree), &op, parent, &outcome)?;
            let features = self.strategy.wants_features() || self.config.track_features;
            let (mut new_code, mut code_features) = (0, 0);
            if features {
                let trace = self.executor.trace();
                let set = &mut self.features;
                trace.for_each_feature(|f| {
                    code_features += 1;
                    if ran.counts && set.insert(f) {
                        new_code += 1;
                    }
                });
            }
            let input_features = if features {
                strategy::input_features(self.grammar, &tree)
            } else {
                0
            };
            self.stats.mappings += input_features * code_features;
            self.strategy.observe(&strategy::RunReport {
                tree: &tree,
                new_code,
                code_features,
                input_features,
                covered: self.features.len() as u64,
                failure: ran.failure.as_deref(),
                new_failure: ran.new_failure,
                duration: outcome.time,
                timeout: self.executor.timeout(),
            });
            if let Some(line) = self.strategy.take_generation_line() {
                self.out.append("generations.csv", &line)?;
            }
            if self
                .config
                .plot_every_execs
                .is_some_and(|n| self.stats.execs >= self.last_plot_execs + n)
            {
                self.update_stats();
                self.plot_line()?;
            }
            if last_progress.elapsed() >= Duration::from_millis(250) {
                last_progress = Instant::now();
                self.update_stats();
                progress(&self.stats);
                if self.last_write.elapsed() >= Duration::from_secs(1) {
                    self.last_write = Instant::now();
                    self.write_stats()?;
                    self.plot_line()?;
                }
            }
        }
        self.finish()?;
        Ok(self.stats.clone())
    }

    /// Runs `bytes` on the target, a candidate hang confirmed: `Ok(None)` after an
    /// executor error (counted), `Err` after five in a row.
    fn execute(&mut self, bytes: &[u8]) -> Result<Option<thicket_exec::Outcome>, FuzzError> {
        match self.executor.run(bytes) {
            Ok(outcome) => {
                self.consecutive_errors = 0;
                Ok(Some(self.confirm_hang(bytes, outcome)))
            }
            Err(e) => {
                self.stats.executor_errors += 1;
                self.consecutive_errors += 1;
                if self.consecutive_errors >= 5 {
                    return Err(FuzzError::Campaign(format!(
                        "the target cannot be run any more: {e}"
                    )));
                }
                Ok(None)
            }
        }
    }

    /// Books one run: counts it, classifies its outcome, adds its coverage (keeping the
    /// input in `queue/` if it reached new code), counts it under each of its
    /// operations (`op` joins them with `+`) and saves a failure.
    fn account(
        &mut self,
        input: Input<'_>,
        op: &str,
        parent: Option<usize>,
        outcome: &thicket_exec::Outcome,
    ) -> Result<Accounted, FuzzError> {
        self.stats.execs += 1;
        self.stats.rounds += 1;
        self.session_execs += 1;
        let failure = self.classifier.classify(outcome);
        let counts = counts_for_coverage(failure.as_ref());
        let mut novelty = thicket_exec::Novelty::default();
        if counts {
            novelty = self.coverage.add(&self.executor.trace());
            if novelty.is_new() {
                self.keep(input, op, parent, novelty, outcome)?;
            }
        }
        for name in op.split('+') {
            let count = self.stats.ops.entry(name.to_string()).or_default();
            count.runs += 1;
            count.kept += u64::from(novelty.is_new());
        }
        let key = failure.as_ref().map(Failure::key);
        let new_failure = key.as_ref().is_some_and(|k| !self.failures.contains_key(k));
        if let Some(failure) = failure {
            self.record_failure(input, op, parent, failure, outcome)?;
        }
        Ok(Accounted {
            novelty,
            counts,
            failure: key,
            new_failure,
        })
    }

    /// Runs one input made elsewhere (the [`whitebox`] search) as a round of
    /// [`Campaign::run`] runs its own: classify, add coverage, keep it in `queue/` if it
    /// reached new code, save a failure, count it under `op`, write the figures now and
    /// then. `None` if the executor failed (counted; an error after 5 in a row).
    pub(crate) fn run_input(
        &mut self,
        bytes: &[u8],
        op: &str,
        parent: Option<usize>,
    ) -> Result<Option<Ran>, FuzzError> {
        let Some(outcome) = self.execute(bytes)? else {
            return Ok(None);
        };
        let input = Input { bytes, tree: None };
        let novelty = self.account(input, op, parent, &outcome)?.novelty;
        if self.last_write.elapsed() >= Duration::from_secs(1) {
            self.last_write = Instant::now();
            self.update_stats();
            self.write_stats()?;
            self.plot_line()?;
        }
        Ok(Some(Ran { novelty }))
    }

    /// The executor (for what its last run traced).
    pub(crate) fn executor(&self) -> &dyn Executor {
        &*self.executor
    }

    /// Whether the budget (executions, time) is spent.
    pub(crate) fn spent(&self) -> bool {
        self.budget_spent()
    }

    /// Starts the session clock (as [`Campaign::run`] does).
    pub(crate) fn start_session(&mut self) {
        self.session_start = Instant::now();
    }

    /// Writes a file of the output folder atomically.
    pub(crate) fn write_file(&mut self, relative: &str, bytes: &[u8]) -> Result<(), FuzzError> {
        self.out.write(relative, bytes)
    }

    /// Writes the final figures (as [`Campaign::run`] does at its end).
    pub(crate) fn finish_session(&mut self) -> Result<Stats, FuzzError> {
        self.finish()?;
        Ok(self.stats.clone())
    }

    /// Runs the queue entries other instances added since the last import and keeps
    /// those that reach new code (parsed into trees, so they are mutated like the
    /// campaign's own); see [`sync`].
    fn import_from_peers(&mut self) -> Result<(), FuzzError> {
        let Some(sync) = self.config.sync.clone() else {
            return Ok(());
        };
        self.last_sync = Some(Instant::now());
        let entries = sync::new_entries(&sync, self.out.root())?;
        let mut read: BTreeMap<String, usize> = BTreeMap::new();
        for entry in entries {
            read.insert(entry.peer.clone(), entry.id + 1);
            // A peer may have replaced the file meanwhile: skip it.
            let Ok(bytes) = std::fs::read(&entry.path) else {
                continue;
            };
            let outcome = self.executor.run(&bytes)?;
            self.stats.sync_execs += 1;
            if !counts_for_coverage(self.classifier.classify(&outcome).as_ref()) {
                continue;
            }
            let novelty = self.coverage.add(&self.executor.trace());
            if !novelty.is_new() {
                continue;
            }
            match self.tree_of(&bytes)? {
                Some(tree) => {
                    let op = format!("sync-{}", file_safe(&entry.peer));
                    self.keep(Input::of(&tree), &op, None, novelty, &outcome)?;
                    self.stats.imported += 1;
                }
                None => self.stats.imported_outside_grammar += 1,
            }
        }
        for (peer, next) in read {
            sync::mark_read(self.out.root(), &peer, next)?;
        }
        Ok(())
    }

    /// The derivation tree of an input not made here, if it is in the grammar.
    fn tree_of(&mut self, bytes: &[u8]) -> Result<Option<DerivationTree>, FuzzError> {
        if self.parser.is_none() {
            let parser = thicket_parse::Parser::new(self.grammar, Default::default())
                .map_err(|e| FuzzError::Campaign(e.to_string()))?;
            self.parser = Some(parser);
        }
        let parser = self.parser.as_ref().expect("made above");
        Ok(parser.parse(bytes).ok().map(|r| r.tree()))
    }

    /// A run over the time limit is a candidate hang: it is run again with a longer
    /// limit (twice the limit and 100 ms more, as AFL++ does with its hang timeout) and
    /// saved as a hang only if it hangs again; otherwise the second run's outcome stands
    /// and the candidate is counted as dismissed.
    fn confirm_hang(&mut self, input: &[u8], outcome: Outcome) -> Outcome {
        if outcome.status != thicket_exec::Status::Timeout {
            return outcome;
        }
        let limit = self.executor.timeout();
        self.executor
            .set_timeout(limit * 2 + Duration::from_millis(100));
        let again = self.executor.run(input);
        self.executor.set_timeout(limit);
        match again {
            Ok(again) if again.status != thicket_exec::Status::Timeout => {
                self.stats.hangs_dismissed += 1;
                again
            }
            Ok(again) => again,
            Err(_) => outcome,
        }
    }

    fn finish(&mut self) -> Result<(), FuzzError> {
        self.update_stats();
        self.write_stats()?;
        self.plot_line()
    }

    fn budget_spent(&self) -> bool {
        self.config
            .max_execs
            .is_some_and(|max| self.stats.execs >= max)
            || self
                .config
                .max_time
                .is_some_and(|max| self.session_start.elapsed() >= max)
    }

    fn name(&self, id: usize, parent: Option<usize>, op: &str) -> String {
        let src = parent.map_or("none".to_string(), |p| format!("{p:06}"));
        let ms = self.elapsed_ms();
        format!(
            "id:{id:06},src:{src},time:{ms},execs:{},op:{op}",
            self.stats.execs
        )
    }

    fn elapsed_ms(&self) -> u64 {
        ((self.elapsed_before + self.session_start.elapsed().as_secs_f64()) * 1000.0) as u64
    }

    fn keep(
        &mut self,
        input: Input<'_>,
        op: &str,
        parent: Option<usize>,
        novelty: thicket_exec::Novelty,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        let id = self.corpus.len();
        let mut name = self.name(id, parent, op);
        if novelty.has_new_code() {
            name.push_str(",+cov");
        }
        let file = format!("queue/{name}");
        self.save(
            &file,
            input,
            "coverage",
            Some(novelty),
            None,
            op,
            parent,
            id,
            outcome,
        )?;
        self.corpus.push(Entry {
            id,
            tree: input.tree.cloned(),
        });
        self.stats.last_find_exec = self.stats.execs;
        Ok(())
    }

    fn record_failure(
        &mut self,
        input: Input<'_>,
        op: &str,
        parent: Option<usize>,
        failure: Failure,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        let hang = failure.is_hang();
        if hang {
            self.stats.hanging_runs += 1;
        } else {
            self.stats.failing_runs += 1;
        }
        let key = failure.key();
        let new = if failure.location.is_some() {
            !self.failures.contains_key(&key)
        } else {
            // No location: distinct if it reached code no earlier such failure reached
            // (AFL's rule), or the first of its kind when there is no coverage.
            let trace = self.executor.trace();
            let set = if hang {
                &mut self.hang_coverage
            } else {
                &mut self.crash_coverage
            };
            let novelty = set.add(&trace);
            novelty.has_new_code() || !self.failures.contains_key(&key)
        };
        if !new {
            if let Some(record) = self.failures.get_mut(&key) {
                record.count += 1;
            }
            return Ok(());
        }
        let (folder, id) = if hang {
            self.next_hang += 1;
            ("hangs", self.next_hang - 1)
        } else {
            self.next_crash += 1;
            ("crashes", self.next_crash - 1)
        };
        let src = parent.map_or("none".to_string(), |p| format!("{p:06}"));
        let tag = match (&failure.kind, outcome.status) {
            (_, thicket_exec::Status::Signaled(sig)) => format!("sig:{sig:02}"),
            (kind, _) => format!("kind:{}", file_safe(&kind.label())),
        };
        let name = if hang {
            format!(
                "id:{id:06},src:{src},time:{},execs:{},op:{op}",
                self.elapsed_ms(),
                self.stats.execs
            )
        } else {
            format!(
                "id:{id:06},{tag},src:{src},time:{},execs:{},op:{op}",
                self.elapsed_ms(),
                self.stats.execs
            )
        };
        let file = format!("{folder}/{name}");
        self.save(
            &file,
            input,
            "failure",
            None,
            Some(&failure),
            op,
            parent,
            id,
            outcome,
        )?;
        self.failures
            .entry(key.clone())
            .and_modify(|r| r.count += 1)
            .or_insert(FailureRecord {
                key,
                kind: failure.kind.clone(),
                file,
                summary: failure.summary.clone(),
                count: 1,
            });
        self.stats.last_find_exec = self.stats.execs;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn save(
        &mut self,
        file: &str,
        input: Input<'_>,
        reason: &str,
        novelty: Option<thicket_exec::Novelty>,
        failure: Option<&Failure>,
        op: &str,
        parent: Option<usize>,
        id: usize,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        self.out.write(file, input.bytes)?;
        let text = std::str::from_utf8(input.bytes).ok();
        let stderr = outcome.stderr.text();
        let stderr_tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            chars[chars.len().saturating_sub(2000)..].iter().collect()
        };
        let meta = Meta {
            id,
            file,
            reason,
            novelty,
            failure,
            key: failure.map(Failure::key),
            op,
            parent,
            exec: self.stats.execs,
            time_ms: self.elapsed_ms(),
            status: outcome.describe(),
            duration_us: outcome.time.as_micros() as u64,
            input: text,
            input_hex: text.is_none().then(|| hex(input.bytes)),
            stderr_tail: if failure.is_some() {
                stderr_tail
            } else {
                String::new()
            },
        };
        let mut json = serde_json::to_string(&meta).expect("meta serializes");
        json.pop();
        // A tree nested deeper than JSON readers go (serde_json 128 levels, Python's
        // json about 1,000; a recursive mutant can nest thousands) is left out: the
        // input parses back into it.
        if let Some(tree) = input.tree {
            let depth = tree.depth(self.grammar);
            if depth <= MAX_META_TREE_DEPTH {
                json.push_str(",\"tree\":");
                json.push_str(&tree.to_fuzzingbook_json(self.grammar));
            } else {
                json.push_str(&format!(",\"tree_omitted_depth\":{depth}"));
            }
        }
        json.push_str("}\n");
        self.out
            .write(&format!("meta/{file}.json"), json.as_bytes())
    }

    fn update_stats(&mut self) {
        let session = self.session_start.elapsed().as_secs_f64();
        self.stats.elapsed_s = self.elapsed_before + session;
        self.stats.execs_per_sec = self.session_execs as f64 / session.max(1e-9);
        self.stats.queue = self.corpus.len();
        self.stats.crash_files = self.next_crash;
        self.stats.hang_files = self.next_hang;
        self.stats.distinct_failures = self
            .failures
            .keys()
            .filter(|k| !k.starts_with("hang @"))
            .count();
        self.stats.restarts = self.restarts_before + self.executor.restarts();
        self.stats.empty_coverage_runs = self.executor.empty_runs();
        self.stats.held_output_runs = self.executor.held_output_runs();
        self.stats.coverage = self.coverage.summary(self.executor.map_size());
        self.stats.code_features = self.features.len() as u64;
        self.stats.mean_input_size = self.input_bytes as f64 / self.session_execs.max(1) as f64;
        self.stats.strategy_stats = self.strategy.summary();
        self.stats.failures = self.failures.values().cloned().collect();
        self.stats.likely_rejection = thicket_exec::likely_rejection(
            self.failures.values().map(|r| (&r.kind, r.count)),
            self.stats.target_package.as_deref(),
        );
    }

    fn write_stats(&mut self) -> Result<(), FuzzError> {
        let mut json = serde_json::to_string_pretty(&self.stats).expect("stats serialize");
        json.push('\n');
        self.out.write("stats.json", json.as_bytes())
    }

    fn plot_line(&mut self) -> Result<(), FuzzError> {
        self.last_plot_execs = self.stats.execs;
        let coverage = match self.stats.coverage.kind {
            CoverageKind::Edges => self.coverage.edges(),
            CoverageKind::Python | CoverageKind::Java => self.coverage.lines(),
            CoverageKind::None => 0,
        };
        let line = format!(
            "{:.1},{},{},{},{},{},{}\n",
            self.stats.elapsed_s,
            self.stats.execs,
            coverage,
            self.stats.queue,
            self.stats.crash_files,
            self.stats.hang_files,
            self.stats.distinct_failures
        );
        self.out.append("plot_data.csv", &line)
    }

    /// Loads a campaign to resume: figures from `stats.json`, the kept inputs (run again
    /// to rebuild the coverage; parsed into trees so they can be mutated), and the
    /// failures already saved.
    fn load(&mut self) -> Result<(), FuzzError> {
        let path = self.out.root().join("stats.json");
        // Runs per failure key, as the campaign last wrote them.
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(&path) {
            let old: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                FuzzError::Campaign(format!("--resume: {} is unreadable: {e}", path.display()))
            })?;
            if combined::is_combined(&old) {
                return Err(FuzzError::Campaign(format!(
                    "--resume: {} holds a parallel campaign (fuzz -j): resume it with -j",
                    self.out.root().display()
                )));
            }
            if let Some(seed) = old["seed"].as_u64()
                && seed != self.config.seed
            {
                return Err(FuzzError::Campaign(format!(
                    "--resume: the campaign used --seed {seed}; resume it with that seed"
                )));
            }
            for (what, field, now) in [
                ("spec", "spec", &self.config.spec_id),
                ("target", "target", &self.config.target_id),
            ] {
                if let Some(was) = old[field].as_str()
                    && !was.is_empty()
                    && !now.is_empty()
                    && was != now
                {
                    return Err(FuzzError::Campaign(format!(
                        "--resume: {} holds a campaign with another {what}: it ran {was}, \
                         this one is {now}; use another output folder",
                        self.out.root().display()
                    )));
                }
            }
            self.stats.execs = old["execs"].as_u64().unwrap_or(0);
            self.stats.rounds = old["rounds"].as_u64().unwrap_or(self.stats.execs);
            self.stats.unsolved_rounds = old["unsolved_rounds"].as_u64().unwrap_or(0);
            self.stats.hangs_dismissed = old["hangs_dismissed"].as_u64().unwrap_or(0);
            self.restarts_before = old["restarts"].as_u64().unwrap_or(0);
            self.elapsed_before = old["elapsed_s"].as_f64().unwrap_or(0.0);
            self.stats.last_find_exec = old["last_find_exec"].as_u64().unwrap_or(0);
            self.stats.failing_runs = old["failing_runs"].as_u64().unwrap_or(0);
            self.stats.hanging_runs = old["hanging_runs"].as_u64().unwrap_or(0);
            self.stats.sync_execs = old["sync_execs"].as_u64().unwrap_or(0);
            self.stats.imported = old["imported"].as_u64().unwrap_or(0);
            self.stats.imported_outside_grammar =
                old["imported_outside_grammar"].as_u64().unwrap_or(0);
            for failure in old["failures"].as_array().into_iter().flatten() {
                if let (Some(key), Some(count)) =
                    (failure["key"].as_str(), failure["count"].as_u64())
                {
                    counts.insert(key.to_string(), count);
                }
            }
            if let Some(ops) = old["ops"].as_object() {
                for (name, count) in ops {
                    self.stats.ops.insert(
                        name.clone(),
                        OpCount {
                            runs: count["runs"].as_u64().unwrap_or(0),
                            kept: count["kept"].as_u64().unwrap_or(0),
                        },
                    );
                }
            }
        }
        for (name, path) in self.out.list("queue")? {
            let bytes = std::fs::read(&path)
                .map_err(|e| FuzzError::Io(format!("cannot read {}", path.display()), e))?;
            let tree = self.tree_of(&bytes)?;
            self.executor.run(&bytes)?;
            self.coverage.add(&self.executor.trace());
            self.corpus.push(Entry {
                id: id_of(&name).unwrap_or(self.corpus.len()),
                tree,
            });
        }
        for folder in ["crashes", "hangs"] {
            for (name, path) in self.out.list(folder)? {
                if folder == "crashes" {
                    self.next_crash = self.next_crash.max(id_of(&name).map_or(0, |i| i + 1));
                    // Rebuild the coverage that tells location-less crashes apart.
                    if let Ok(bytes) = std::fs::read(&path) {
                        self.executor.run(&bytes)?;
                        self.crash_coverage.add(&self.executor.trace());
                    }
                } else {
                    self.next_hang = self.next_hang.max(id_of(&name).map_or(0, |i| i + 1));
                }
                let meta_path = self.out.root().join(format!("meta/{folder}/{name}.json"));
                let meta: serde_json::Value = std::fs::read_to_string(&meta_path)
                    .ok()
                    .and_then(|t| output::read_meta(&t))
                    .unwrap_or_default();
                let kind = serde_json::from_value::<FailureKind>(meta["failure"].clone());
                if let (Some(key), Ok(kind)) = (meta["key"].as_str(), kind) {
                    self.failures
                        .entry(key.to_string())
                        .and_modify(|r| r.count += 1)
                        .or_insert(FailureRecord {
                            key: key.to_string(),
                            kind,
                            file: format!("{folder}/{name}"),
                            summary: meta["failure"]["summary"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string(),
                            count: 1,
                        });
                }
            }
        }
        for record in self.failures.values_mut() {
            if let Some(&count) = counts.get(&record.key) {
                record.count = record.count.max(count);
            }
        }
        Ok(())
    }
}

/// Whether a run's coverage counts: runs that end normally, or with an exception or a
/// pattern match (the process itself was fine); crashes and hangs do not.
fn counts_for_coverage(failure: Option<&Failure>) -> bool {
    failure.is_none_or(|f| matches!(f.kind, FailureKind::Exception { .. } | FailureKind::Pattern))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The coverage-guided strategy's input of a round: fresh, or a mutant of a kept tree;
/// `None` if it could not be made valid (see [`Campaign::with_solver`]).
pub(crate) fn produce_coverage_guided(
    ctx: &strategy::Ctx<'_, '_>,
    rng: &mut thicket_gen::GenRng,
) -> Option<strategy::Candidate> {
    let this = ctx;
    let parents: Vec<&Entry> = if this.config.feedback {
        this.corpus.iter().filter(|e| e.tree.is_some()).collect()
    } else {
        Vec::new()
    };
    if !parents.is_empty() && below(rng, 1000) < this.config.mutate_per_mille {
        // The smaller of two kept trees drawn at random (a tournament, as AFL favours
        // small inputs): mutants keep growing where growth pays (recursion,
        // repetition), yet a campaign does not drift to ever larger inputs that cost
        // the target and the mutations more time.
        let a = parents[below(rng, parents.len() as u32) as usize];
        let b = parents[below(rng, parents.len() as u32) as usize];
        let size = |e: &Entry| e.tree.as_ref().map_or(0, DerivationTree::len);
        let parent = if size(b) < size(a) { b } else { a };
        // Recursive mutation may grow a tree past the generation depth, up to four
        // times its parent's size (at least 4 KiB).
        let budget = (parent.tree.as_ref().map_or(0, |t| t.bytes().len()) * 4).max(4096);
        // A donor other than the parent itself needs a second kept tree.
        let donors: Vec<&DerivationTree> = if parents.len() > 1 {
            parents.iter().filter_map(|e| e.tree.as_ref()).collect()
        } else {
            Vec::new()
        };
        let (mut tree, applied) = mutate::stack(
            this.generator,
            parent.tree.clone().expect("filtered"),
            &donors,
            budget,
            this.config.valid_only,
            this.text,
            rng,
        );
        let mut op = applied.name();
        if let Some(solver) = this.solver
            && this.config.valid_only
            && !applied.is_empty()
        {
            let before = tree.bytes().to_vec();
            tree = solver.repair(tree, rng).ok()?;
            if tree.bytes() != before {
                op.push_str("+fix");
            }
        }
        return Some(strategy::Candidate {
            tree,
            op,
            parent: Some(parent.id),
        });
    }
    let tree = match this.solver {
        Some(solver) => solver.solve(rng).ok()?.0,
        None => this.generator.generate_tree(rng).0,
    };
    Some(strategy::Candidate {
        tree,
        op: "gen".to_string(),
        parent: None,
    })
}
