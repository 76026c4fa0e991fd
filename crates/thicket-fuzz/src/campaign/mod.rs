//! The campaign: one loop, one bookkeeping path.
//!
//! Every input a campaign runs goes through the same two steps: [`Campaign::execute`]
//! (the [`Judge`]: run, confirm a hang, tolerate executor errors, classify) and, for the
//! loop's rounds, [`Campaign::account`] (count it, add its coverage by the judge's rule,
//! keep it in `queue/` if it reached new code, save a failure). Resuming
//! ([`resume`]: the queue run again) and importing other instances' entries
//! ([`Campaign::import_from_peers`]) use `execute` and the same coverage rule;
//! what to run next is the [`Strategy`](crate::strategy::Strategy)'s, which sees the
//! campaign only through [`Ctx`](crate::strategy::Ctx) and
//! [`RunReport`](crate::strategy::RunReport).

mod findings;
mod resume;

use crate::output::{OutDir, file_safe};
use crate::stats::{FailureRecord, Stats};
use crate::strategy::{self, Candidate, Input};
use crate::{FuzzConfig, FuzzError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thicket_exec::{CoverageKind, CoverageSet, Judge, Novelty, Verdict};
use thicket_gen::Generator;
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// Rounds in a row without a valid input after which a campaign gives up.
const MAX_CONSECUTIVE_UNSOLVED: u32 = 1000;

/// A kept input: its queue id, the bytes it runs as (for byte havoc), its tree if it has
/// one (with its rule nodes grouped for splicing), and whether it is favoured (the
/// smallest kept input with a tree reaching some code feature).
pub(crate) struct Entry {
    pub(crate) id: usize,
    bytes: Box<[u8]>,
    pub(crate) tree: Option<crate::mutate::Donor>,
    pub(crate) favoured: bool,
}

impl Entry {
    /// An entry of the input `bytes`, with its tree if it has one.
    pub(crate) fn new(
        grammar: &Grammar,
        id: usize,
        tree: Option<DerivationTree>,
        bytes: &[u8],
    ) -> Entry {
        Entry {
            id,
            bytes: bytes.into(),
            tree: tree.map(|t| crate::mutate::Donor::new(grammar, t)),
            favoured: false,
        }
    }

    /// The input it runs as.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its tree.
    pub(crate) fn tree(&self) -> Option<&DerivationTree> {
        self.tree.as_ref().map(crate::mutate::Donor::tree)
    }
}

/// AFL's favoured set: for each code feature, the smallest kept input with a tree that
/// reaches it (the tree mutations draw from these; havoc draws by size alone).
/// Mutating mostly these keeps the inputs a campaign works on small for the coverage
/// they hold, which makes both the mutations and the target's runs cheaper.
#[derive(Default)]
struct Favoured {
    /// Per feature: the corpus index and size of the smallest entry reaching it.
    top: rustc_hash::FxHashMap<u64, (usize, usize)>,
}

impl Favoured {
    /// Rates entry `index` of `size` bytes on the features of `trace`; returns whether
    /// it became the smallest for any.
    fn rate(&mut self, index: usize, size: usize, trace: &thicket_exec::Trace<'_>) -> bool {
        let mut changed = false;
        trace.for_each_feature(|f| {
            let best = self.top.entry(f).or_insert((index, usize::MAX));
            if size < best.1 {
                *best = (index, size);
                changed = true;
            }
        });
        changed
    }

    /// Marks the favoured entries of `corpus`.
    fn mark(&self, corpus: &mut [Entry]) {
        for entry in corpus.iter_mut() {
            entry.favoured = false;
        }
        for &(index, _) in self.top.values() {
            if let Some(entry) = corpus.get_mut(index) {
                entry.favoured = true;
            }
        }
    }
}

/// What [`Campaign::account`] booked of a run.
struct Accounted {
    /// What the run reached that no earlier run had (empty unless its coverage counts).
    novelty: Novelty,
    /// The failure's key, if the run failed.
    failure: Option<String>,
    /// Whether that failure is new.
    new_failure: bool,
}

/// The next round's candidate, made while the target ran this round's input (see
/// [`Strategy::next_if_nothing_kept`](strategy::Strategy::next_if_nothing_kept)).
struct Ahead {
    /// The round it is for.
    round: u64,
    /// The corpus's size when it was made: a run that kept an input grew it, and the
    /// candidate is then made again.
    corpus_len: usize,
    /// The candidate (`None`: the strategy could make none).
    candidate: Option<Candidate>,
}

/// The error of a campaign whose judge gave up on the target.
fn target_gone(e: thicket_exec::ExecError) -> FuzzError {
    FuzzError::Campaign(format!("the target cannot be run any more: {e}"))
}

/// A coverage-guided campaign.
pub struct Campaign<'g> {
    generator: &'g Generator<'g>,
    solver: Option<&'g thicket_solve::Solver<'g>>,
    grammar: &'g Grammar,
    judge: Judge,
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
    /// Executor errors and dismissed hangs counted before this session (resume).
    executor_errors_before: u64,
    hangs_dismissed_before: u64,
    /// The judge's target time when the session started (resume runs excluded).
    target_time_at_start: Duration,
    /// The target takes text: byte mutations change characters.
    text: bool,
    /// When other instances' entries were last imported (with [`FuzzConfig::sync`]).
    last_sync: Option<Instant>,
    /// The smallest kept input per code feature.
    favoured: Favoured,
    /// Parses inputs not made here (a resumed queue, other instances' entries) into
    /// trees; made at the first such input.
    parser: Option<thicket_parse::Parser<'g>>,
    /// How trees stand for inputs, when an input is not its tree's text.
    encoding: Option<&'g dyn strategy::Encoding>,
    /// What to run next and what the feedback means.
    strategy: Box<dyn strategy::Strategy + 'g>,
    /// Code features reached so far (when features are counted).
    features: rustc_hash::FxHashSet<u64>,
    /// Bytes of the inputs run this session, and of the kept inputs (for the means).
    input_bytes: u64,
    queue_bytes: u64,
    /// Executions at the last line of `plot_data.csv`.
    last_plot_execs: u64,
    /// When the figures were last written.
    last_write: Instant,
    /// The next round's candidate, if the strategy made it while the target ran.
    ahead: Option<Ahead>,
}

impl<'g> Campaign<'g> {
    /// Prepares a campaign writing to `out`, running its inputs through `judge`
    /// (resuming it if the config says so: the kept inputs are run again to rebuild the
    /// coverage, and counting goes on).
    pub fn new(
        generator: &'g Generator<'g>,
        judge: Judge,
        config: FuzzConfig,
        out: &std::path::Path,
    ) -> Result<Campaign<'g>, FuzzError> {
        Campaign::with_encoding(generator, judge, config, out, None)
    }

    /// [`Campaign::new`] whose trees stand for the inputs `encoding` makes of them (a
    /// resumed queue is decoded with it). A tree that stands for no input is not run.
    pub fn with_encoding(
        generator: &'g Generator<'g>,
        judge: Judge,
        config: FuzzConfig,
        out: &std::path::Path,
        encoding: Option<&'g dyn strategy::Encoding>,
    ) -> Result<Campaign<'g>, FuzzError> {
        let out = OutDir::open(out, config.resume)?;
        let stats = Stats {
            seed: config.seed,
            spec: config.spec_id.clone(),
            target: config.target_id.clone(),
            executor: judge.executor().describe(),
            feedback: config.feedback,
            strategy: "coverage".into(),
            target_package: judge.executor().target_package(),
            ..Stats::default()
        };
        let text = judge.executor().wants_text();
        let mut campaign = Campaign {
            generator,
            solver: None,
            grammar: generator.grammar(),
            judge,
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
            executor_errors_before: 0,
            hangs_dismissed_before: 0,
            target_time_at_start: Duration::ZERO,
            text,
            last_sync: None,
            parser: None,
            encoding,
            favoured: Favoured::default(),
            strategy: Box::new(strategy::CoverageGuided::default()),
            features: Default::default(),
            input_bytes: 0,
            queue_bytes: 0,
            last_plot_execs: 0,
            last_write: Instant::now(),
            ahead: None,
        };
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

    /// The judge (its executor's description, its counts).
    pub fn judge(&self) -> &Judge {
        &self.judge
    }

    /// Gives the judge back, to run the findings again with the same target (the Python
    /// module minimises each finding and reruns it for its exception).
    pub fn into_judge(self) -> Judge {
        self.judge
    }

    /// Runs until the budget is spent, the strategy is done or `stop` is set; calls
    /// `progress` about four times a second. Returns the final figures (also in
    /// `stats.json`).
    pub fn run(
        &mut self,
        stop: &AtomicBool,
        mut progress: impl FnMut(&Stats),
    ) -> Result<Stats, FuzzError> {
        self.session_start = Instant::now();
        self.target_time_at_start = self.judge.counts().target_time;
        let deadline = self.config.max_time.map(|t| self.session_start + t);
        let mut last_progress = Instant::now();
        self.last_write = Instant::now();
        let mut consecutive_unsolved = 0;
        loop {
            if stop.load(Ordering::Relaxed) || self.budget_spent() || self.strategy.finished() {
                break;
            }
            if let Some(sync) = &self.config.sync
                && self.last_sync.is_none_or(|t| t.elapsed() >= sync.every)
                && let Err(e) = self.import_from_peers()
            {
                self.finish()?;
                return Err(e);
            }
            let index = self.stats.rounds;
            // Made while the last run ran, for this round and this corpus: the same
            // draws as making it now.
            let ahead = self
                .ahead
                .take()
                .filter(|a| a.round == index && a.corpus_len == self.corpus.len());
            let candidate = match ahead {
                Some(ahead) => ahead.candidate,
                None => {
                    let mut rng = Generator::rng_for(self.config.seed, index);
                    let ctx = strategy::Ctx {
                        generator: self.generator,
                        solver: self.solver,
                        config: &self.config,
                        text: self.text,
                        encoding: self.encoding,
                        corpus: &self.corpus,
                        stop,
                        deadline,
                    };
                    self.strategy.next(&ctx, &mut rng)
                }
            };
            let Some(candidate) = candidate else {
                if stop.load(Ordering::Relaxed) || self.budget_spent() {
                    break;
                }
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
            if let Err(e) = self.round(&candidate, stop, deadline) {
                self.finish()?;
                return Err(e);
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

    /// One round: run the candidate (the strategy making the next round's while the
    /// target runs, if it can), book it, tell the strategy.
    fn round(
        &mut self,
        candidate: &Candidate,
        stop: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Result<(), FuzzError> {
        let encoded;
        let input = match (self.encoding, &candidate.input) {
            (Some(encoding), Input::Tree(tree)) => match encoding.encode(tree) {
                Ok(bytes) => {
                    encoded = Input::Encoded {
                        tree: tree.clone(),
                        bytes,
                    };
                    &encoded
                }
                // Stands for no input (bits that fill no whole byte): nothing to run.
                Err(_) => {
                    self.stats.rounds += 1;
                    self.stats.unencodable_rounds += 1;
                    return Ok(());
                }
            },
            (_, input) => input,
        };
        // The next round is this one's index plus one if this run is booked.
        let next_round = self.stats.rounds + 1;
        let ctx = strategy::Ctx {
            generator: self.generator,
            solver: self.solver,
            config: &self.config,
            text: self.text,
            encoding: self.encoding,
            corpus: &self.corpus,
            stop,
            deadline,
        };
        let (strategy, ahead) = (&mut self.strategy, &mut self.ahead);
        let mut make_next = || {
            let mut rng = Generator::rng_for(ctx.config.seed, next_round);
            if let Some(candidate) = strategy.next_if_nothing_kept(&ctx, &mut rng) {
                *ahead = Some(Ahead {
                    round: next_round,
                    corpus_len: ctx.corpus.len(),
                    candidate,
                });
            }
        };
        let verdict = self
            .judge
            .run_overlapping(input.bytes(), &mut make_next)
            .map_err(target_gone)?;
        let Some(verdict) = verdict else {
            return Ok(());
        };
        self.input_bytes += input.bytes().len() as u64;
        let booked = self.account(input, &candidate.op, candidate.parent, &verdict)?;
        let features = self.strategy.wants_features() || self.config.track_features;
        let (mut new_code, mut code_features) = (0, 0);
        let counts = verdict.counts_for_coverage();
        if features {
            let set = &mut self.features;
            self.judge.trace().for_each_feature(|f| {
                code_features += 1;
                if counts && set.insert(f) {
                    new_code += 1;
                }
            });
        }
        let input_features = match input.tree() {
            Some(tree) if features => strategy::input_features(self.grammar, tree),
            _ => 0,
        };
        self.stats.mappings += input_features * code_features;
        self.strategy.observe(&strategy::RunReport {
            input,
            op: &candidate.op,
            trace: self.judge.trace(),
            token_trace: self.judge.token_trace(),
            counts_for_coverage: counts,
            novelty: booked.novelty,
            new_code,
            code_features,
            input_features,
            covered: self.features.len() as u64,
            failure: booked.failure.as_deref(),
            new_failure: booked.new_failure,
            duration: verdict.outcome.time,
            timeout: self.judge.executor().timeout(),
        });
        if let Some(line) = self.strategy.take_generation_line() {
            self.out.append("generations.csv", &line)?;
        }
        Ok(())
    }

    /// Runs `bytes` through the judge: `Ok(None)` after a tolerated executor error,
    /// `Err` when the judge gives up on the target.
    fn execute(&mut self, bytes: &[u8]) -> Result<Option<Verdict>, FuzzError> {
        self.judge.run(bytes).map_err(target_gone)
    }

    /// Adds the last run's input, just pushed as the corpus's last entry, to the
    /// favoured set.
    fn rate_last_entry(&mut self, size: usize) {
        let index = self.corpus.len() - 1;
        let trace = self.judge.trace();
        if self.favoured.rate(index, size, &trace) {
            self.favoured.mark(&mut self.corpus);
        }
    }

    /// Adds the coverage of the last run, if the judge's rule counts it.
    fn cover(&mut self, verdict: &Verdict) -> Novelty {
        self.coverage.add(&self.judge.coverage(verdict))
    }

    /// Books one round's run: counts it, adds its coverage (keeping the input in
    /// `queue/` if it reached new code), counts it under each of its operations (`op`
    /// joins them with `+`) and saves a failure.
    fn account(
        &mut self,
        input: &Input,
        op: &str,
        parent: Option<usize>,
        verdict: &Verdict,
    ) -> Result<Accounted, FuzzError> {
        self.stats.execs += 1;
        self.stats.rounds += 1;
        self.session_execs += 1;
        let novelty = self.cover(verdict);
        if novelty.is_new() {
            self.keep(input, op, parent, novelty, &verdict.outcome)?;
        }
        for name in op.split('+') {
            // An operation's name is allocated only the first time it is counted.
            if !self.stats.ops.contains_key(name) {
                self.stats.ops.insert(name.to_string(), Default::default());
            }
            let count = self.stats.ops.get_mut(name).expect("inserted above");
            count.runs += 1;
            count.kept += u64::from(novelty.is_new());
        }
        let key = verdict.failure.as_ref().map(thicket_exec::Failure::key);
        let new_failure = key.as_ref().is_some_and(|k| !self.failures.contains_key(k));
        if let Some(failure) = &verdict.failure {
            self.record_failure(input, op, parent, failure, &verdict.outcome)?;
        }
        Ok(Accounted {
            novelty,
            failure: key,
            new_failure,
        })
    }

    /// Runs the queue entries other instances added since the last import and keeps
    /// those that reach new code (parsed into trees, so they are mutated like the
    /// campaign's own); see [`crate::sync`].
    fn import_from_peers(&mut self) -> Result<(), FuzzError> {
        let Some(sync) = self.config.sync.clone() else {
            return Ok(());
        };
        self.last_sync = Some(Instant::now());
        let entries = crate::sync::new_entries(&sync, self.out.root())?;
        let mut read: BTreeMap<String, usize> = BTreeMap::new();
        for entry in entries {
            read.insert(entry.peer.clone(), entry.id + 1);
            // A peer may have replaced the file meanwhile: skip it.
            let Ok(bytes) = std::fs::read(&entry.path) else {
                continue;
            };
            let Some(verdict) = self.execute(&bytes)? else {
                continue;
            };
            self.stats.sync_execs += 1;
            let novelty = self.cover(&verdict);
            if !novelty.is_new() {
                continue;
            }
            match self.tree_of(&bytes)? {
                Some(tree) => {
                    let op = format!("sync-{}", file_safe(&entry.peer));
                    let input = match self.encoding {
                        Some(_) => Input::Encoded { tree, bytes },
                        None => Input::Tree(tree),
                    };
                    self.keep(&input, &op, None, novelty, &verdict.outcome)?;
                    self.stats.imported += 1;
                }
                None => self.stats.imported_outside_grammar += 1,
            }
        }
        for (peer, next) in read {
            crate::sync::mark_read(self.out.root(), &peer, next)?;
        }
        Ok(())
    }

    /// The derivation tree of an input not made here, if it is in the grammar.
    fn tree_of(&mut self, bytes: &[u8]) -> Result<Option<DerivationTree>, FuzzError> {
        if let Some(encoding) = self.encoding {
            return Ok(encoding.decode(bytes));
        }
        if self.parser.is_none() {
            let parser = thicket_parse::Parser::new(self.grammar, Default::default())
                .map_err(|e| FuzzError::Campaign(e.to_string()))?;
            self.parser = Some(parser);
        }
        let parser = self.parser.as_ref().expect("made above");
        Ok(parser.parse(bytes).ok().map(|r| r.tree()))
    }

    fn finish(&mut self) -> Result<(), FuzzError> {
        self.update_stats();
        self.write_stats()?;
        self.plot_line()?;
        for (name, bytes) in self.strategy.session_files() {
            self.out.write(&name, &bytes)?;
        }
        Ok(())
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

    fn elapsed_ms(&self) -> u64 {
        ((self.elapsed_before + self.session_start.elapsed().as_secs_f64()) * 1000.0) as u64
    }

    fn update_stats(&mut self) {
        let session = self.session_start.elapsed().as_secs_f64();
        let executor = self.judge.executor();
        let counts = *self.judge.counts();
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
        self.stats.restarts = self.restarts_before + executor.restarts();
        self.stats.empty_coverage_runs = executor.empty_runs();
        self.stats.held_output_runs = executor.held_output_runs();
        self.stats.executor_errors = self.executor_errors_before + counts.executor_errors;
        self.stats.hangs_dismissed = self.hangs_dismissed_before + counts.hangs_dismissed;
        self.stats.coverage = self.coverage.summary(executor.map_size());
        self.stats.code_features = self.features.len() as u64;
        self.stats.mean_input_size = self.input_bytes as f64 / self.session_execs.max(1) as f64;
        self.stats.mean_queue_input_size =
            self.queue_bytes as f64 / self.corpus.len().max(1) as f64;
        let target = counts
            .target_time
            .saturating_sub(self.target_time_at_start)
            .as_secs_f64();
        self.stats.target_time_s = target;
        self.stats.own_us_per_exec = if self.session_execs == 0 {
            0.0
        } else {
            (session - target).max(0.0) * 1e6 / self.session_execs as f64
        };
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
}

#[cfg(test)]
mod tests;
