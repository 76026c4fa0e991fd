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
//!
//! Which kept input a mutant starts from is the campaign's schedule (`Schedule`,
//! `draw_parent`), rated as each input is kept: nine times in ten one of AFL's
//! favoured inputs (the smallest kept input reaching some code feature), drawn in
//! proportion to the rarity of the code it reaches (AFL++'s `rare` idea), else any kept
//! input; in both cases the smaller of two draws.

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
use thicket_gen::{GenRng, Generator};
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// Rounds in a row without a valid input after which a campaign gives up.
const MAX_CONSECUTIVE_UNSOLVED: u32 = 1000;

/// A kept input: its queue id, its tree if it has one (with its rule nodes grouped for
/// splicing), whether it is favoured and how rare the code it reaches is (see
/// [`Schedule`]).
pub(crate) struct Entry {
    pub(crate) id: usize,
    pub(crate) tree: Option<crate::mutate::Donor>,
    /// The smallest kept input reaching some code feature.
    pub(crate) favoured: bool,
    /// The sum, over the code features its run reached, of one over the number of kept
    /// inputs reaching that feature.
    pub(crate) rarity: f64,
}

impl Entry {
    /// An entry of `tree`, if it has one.
    pub(crate) fn new(grammar: &Grammar, id: usize, tree: Option<DerivationTree>) -> Entry {
        Entry {
            id,
            tree: tree.map(|t| crate::mutate::Donor::new(grammar, t)),
            favoured: false,
            rarity: 0.0,
        }
    }

    /// Its tree.
    pub(crate) fn tree(&self) -> Option<&DerivationTree> {
        self.tree.as_ref().map(crate::mutate::Donor::tree)
    }
}

/// Which kept input is mutated next: the campaign's schedule.
///
/// - **Favoured inputs nine times in ten.** As in AFL, an input is favoured if it is the
///   smallest kept input reaching some code feature (an edge; a line or branch of a
///   Python or Java target). Mutating mostly these keeps the inputs a campaign works on
///   small for the coverage they hold, which makes both the mutations and the target's
///   runs cheaper (it halved the mean input on the afl-cc targets).
/// - **Among the favoured, in proportion to rarity.** An input's rarity is the sum, over
///   the features its run reached, of one over the number of kept inputs reaching that
///   feature: a feature only it reaches counts 1, one that all n kept inputs reach 1/n.
///   Drawn uniformly, the favoured inputs holding the rare code (on Python's json
///   decoder: a string with an escape, an object cut short, whose byte edits reach the
///   error paths) got no more mutations than the ones every input covers.
///   Weighting by rarity is the idea of AFL++'s `rare` schedule and libFuzzer's
///   entropic one: spend the mutations where the code is least explored.
/// - **Otherwise any kept input**, drawn uniformly: the inputs not favoured are still
///   mutated, one time in ten, as AFL still fuzzes them now and then.
/// - **The smaller of two draws** (a tournament), in both cases: mutants keep growing
///   where growth pays (recursion, repetition), yet a campaign does not drift to ever
///   larger inputs that cost the target and the mutations more time (without it,
///   rarity alone made the inputs run on the afl-cc targets about twice as large).
///
/// Every draw comes from the round's random stream, so a campaign stays reproducible.
#[derive(Default)]
struct Schedule {
    /// Per feature: its dense number, and the corpus index and size of the smallest
    /// entry reaching it.
    top: rustc_hash::FxHashMap<u64, (u32, usize, usize)>,
    /// Per dense feature: how many kept entries reach it.
    holders: Vec<u32>,
    /// Per corpus index: the dense features its run reached.
    features: Vec<Vec<u32>>,
}

impl Schedule {
    /// Rates entry `index` of `size` bytes on the features of `trace` (its run).
    fn rate(&mut self, index: usize, size: usize, trace: &thicket_exec::Trace<'_>) {
        let mut reached = Vec::new();
        trace.for_each_feature(|f| {
            let next = self.holders.len() as u32;
            let best = self.top.entry(f).or_insert((next, index, usize::MAX));
            if best.0 == next {
                self.holders.push(0);
            }
            self.holders[best.0 as usize] += 1;
            reached.push(best.0);
            if size < best.2 {
                (best.1, best.2) = (index, size);
            }
        });
        if self.features.len() <= index {
            self.features.resize(index + 1, Vec::new());
        }
        self.features[index] = reached;
    }

    /// Marks the favoured entries of `corpus` and sets every entry's rarity (a new
    /// entry changes the rarity of every entry sharing a feature with it).
    fn mark(&self, corpus: &mut [Entry]) {
        for (index, entry) in corpus.iter_mut().enumerate() {
            entry.favoured = false;
            entry.rarity = self.features.get(index).map_or(0.0, |reached| {
                reached
                    .iter()
                    .map(|&f| 1.0 / f64::from(self.holders[f as usize]))
                    .sum()
            });
        }
        for &(_, index, _) in self.top.values() {
            if let Some(entry) = corpus.get_mut(index) {
                entry.favoured = true;
            }
        }
    }
}

/// The kept input to mutate next, by the campaign's [`Schedule`]; `None` if no kept
/// input has a tree.
pub(crate) fn draw_parent<'c>(corpus: &'c [Entry], rng: &mut GenRng) -> Option<&'c Entry> {
    // Counted and drawn by position rather than collected: this runs before every
    // execution.
    fn is_parent(e: &&Entry) -> bool {
        e.tree.is_some()
    }
    fn is_favoured(e: &&Entry) -> bool {
        e.tree.is_some() && e.favoured
    }
    let parents = corpus.iter().filter(is_parent).count();
    if parents == 0 {
        return None;
    }
    let favoured = corpus.iter().any(|e| is_favoured(&e)) && thicket_gen::below(rng, 10) < 9;
    let total: f64 = corpus.iter().filter(is_favoured).map(|e| e.rarity).sum();
    let by_rarity = favoured && total > 0.0 && total.is_finite();
    let mut draw = || {
        if by_rarity {
            // 53 random bits as a fraction of the total.
            let mut x = (rand::Rng::next_u64(rng) >> 11) as f64 / (1u64 << 53) as f64 * total;
            let mut last = None;
            for entry in corpus.iter().filter(is_favoured) {
                if x < entry.rarity {
                    return entry;
                }
                x -= entry.rarity;
                last = Some(entry);
            }
            // Rounding left a sliver past the last weight.
            return last.expect("a favoured entry");
        }
        let nth = thicket_gen::below(rng, parents as u32) as usize;
        corpus
            .iter()
            .filter(is_parent)
            .nth(nth)
            .expect("drawn among the entries with trees")
    };
    // The smaller of two (a tournament).
    let a = draw();
    let b = draw();
    let size = |e: &Entry| e.tree().map_or(0, DerivationTree::len);
    Some(if size(b) < size(a) { b } else { a })
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
    /// Which kept input is mutated next.
    schedule: Schedule,
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
            schedule: Schedule::default(),
            strategy: Box::new(strategy::CoverageGuided),
            features: Default::default(),
            input_bytes: 0,
            queue_bytes: 0,
            last_plot_execs: 0,
            last_write: Instant::now(),
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
            let Some(candidate) = self.strategy.next(&ctx, &mut rng) else {
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
            if let Err(e) = self.round(&candidate) {
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

    /// One round: run the candidate, book it, tell the strategy.
    fn round(&mut self, candidate: &Candidate) -> Result<(), FuzzError> {
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
        let Some(verdict) = self.execute(input.bytes())? else {
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
        self.judge
            .run(bytes)
            .map_err(|e| FuzzError::Campaign(format!("the target cannot be run any more: {e}")))
    }

    /// Adds the last run's input, just pushed as the corpus's last entry, to the
    /// schedule.
    fn rate_last_entry(&mut self, size: usize) {
        let index = self.corpus.len() - 1;
        let trace = self.judge.trace();
        self.schedule.rate(index, size, &trace);
        self.schedule.mark(&mut self.corpus);
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
