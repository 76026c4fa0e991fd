//! The closed loop for one location, when the program is at hand: learn, generate
//! inputs aimed at the location, run them, add them with their coverage to the
//! training set, learn again; until a round of aimed inputs reaches the location as
//! often as asked, or the budget of executions or time is spent.
//!
//! A location with fewer covering inputs than [`RefineConfig::min_positives`] gets
//! none of its own first: inputs are drawn until it has enough, random ones while it has
//! no covering input, then half random and half steered to the paths its covering
//! inputs share and the others rarely have (the most telling first).
//!
//! Each aimed round is learned from every input run so far: the aimed inputs that
//! missed are the negatives the first tree lacked (a tree learned from four covering
//! inputs says what they share; the next one learns which of that does not matter).
//! When rounds stop improving, the feature paths grow by one ([`RefineConfig::max_k`]).
//!
//! The goal counts as reached only when the evidence supports it: the aimed rounds of
//! one tree, pooled, must put a **lower confidence bound** on the tree's hit rate at
//! the goal or above ([`Evidence::lower_bound`]: Wilson's score bound, one-sided, at
//! [`GOAL_CONFIDENCE`]), not their share of hits. A round whose share reaches the goal
//! makes its tree a candidate; the same tree then aims further rounds of fresh inputs,
//! pooled with the first, while their pooled share stays at the goal, for at most
//! [`TRIAL_ROUNDS`] rounds in all. The goal is reached when the bound of the pooled
//! rounds is at the goal, and never on the candidate's first round alone: that round was
//! chosen for being high, and one round of 100 is a draw (a tree that reached 81 of 86
//! once gave fresh inputs that reached its line 68 times in 100). Else the loop learns
//! on from every input run, as after any round. A tree whose true rate is just under
//! the goal passes a point estimate about half of the time; at the bound it needs a
//! pooled share a few points above the goal (on 200 inputs and a goal of 90 %, 187 hits
//! give a bound of 90.0 %, 180 give 86.0 %). A confirming round counts each text once
//! per tree: a text the same tree aimed before adds nothing, and a round that adds no
//! text ends the trial (its tree's language is spent).
//!
//! When the budget ends first, the tree kept is the one whose pooled rounds have the
//! highest lower bound (so a round of 4 of 4 does not outrank 92 of 100), and
//! [`Refined::evidence`] says what its rounds were.
//!
//! A round's aimed inputs are distinct texts ([`crate::target`]); those the loop ran
//! before are not run again but count with the outcome they had, so a round measures
//! the tree's aimed inputs even when the loop has run most of its language. A tree
//! whose leaves allow few texts, all run already, yields rounds of no new input, each
//! costing its searches and a tree learned again but no execution; so the searches
//! have a budget of their own, [`DRAWS_PER_INPUT`] per execution of the budget, and
//! the loop ends when it is spent ([`Ending::DrawsSpent`]). Without it the executions
//! bounded nothing.
//!
//! Each tree keeps, per covering leaf, some of the covering inputs that reach it
//! ([`LocationModel::keep_exemplars`]); aimed inputs are mutants of those that still
//! satisfy the leaf where one is found ([`crate::target`]), so they keep what the
//! covering inputs share beyond paths, and the kept tree's exemplars go into the
//! model, for `generate --target` to aim the same way.

use crate::features::{FeatureTable, input_paths};
#[cfg(doc)]
use crate::model::MIN_POSITIVES;
use crate::model::{LearnConfig, LocationModel};
use crate::run::{RunError, covered_names};
use crate::target::{DRAWS_PER_INPUT, Draws, aim_cycle, aimed_inputs};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;
use thicket_cover::{KPath, KPathGraph, PathSteering, SteeredTo};
use thicket_exec::Judge;
use thicket_gen::{Fresh, Generator, Producer};
use thicket_parse::Parser;

/// A location's tree and the feature paths (expression ids) its splits refer to.
pub type LearnedTree = (LocationModel, Vec<Vec<u32>>);

/// When the loop stops and how it learns.
#[derive(Clone, Copy, Debug)]
pub struct RefineConfig {
    /// The hit rate of aimed inputs the loop aims for: reached when the lower
    /// confidence bound of a tree's pooled aimed rounds is at least this
    /// ([`Evidence::trusts`]).
    pub goal: f64,
    /// Executions of the program the loop may spend (the training set's not counted).
    pub max_executions: u64,
    /// No round is begun after it.
    pub deadline: Option<Instant>,
    /// Inputs per round.
    pub batch: usize,
    /// Covering inputs needed before the first tree is learned. Fewer than
    /// [`MIN_POSITIVES`] (the bar for trusting a tree) will do: the loop checks its
    /// trees by running their aimed inputs, and the misses are the negatives a tree
    /// learned from a handful of covering inputs lacks.
    pub min_positives: u32,
    /// Trees the search builds per aimed input (see [`crate::target`]).
    pub tries: u32,
    /// The longest feature paths the loop may go to: when [`RefineConfig::patience`]
    /// aimed rounds in a row do not beat the best hit rate so far by
    /// [`PLATEAU_MARGIN`], the paths grow by one (every input's read again), since a
    /// location may depend on more context than the shorter paths hold.
    pub max_k: usize,
    /// Aimed rounds without progress before the paths grow.
    pub patience: u32,
    /// How trees are learned; its seed seeds every random choice of the loop.
    pub learn: LearnConfig,
}

impl Default for RefineConfig {
    fn default() -> RefineConfig {
        RefineConfig {
            goal: 0.9,
            max_executions: 5000,
            deadline: None,
            batch: 100,
            min_positives: LOOP_MIN_POSITIVES,
            tries: 100,
            max_k: 6,
            patience: 3,
            learn: LearnConfig::default(),
        }
    }
}

/// The inputs a location is learned from.
#[derive(Clone, Debug, Default)]
pub struct TrainingSet {
    /// Each input.
    pub texts: Vec<Vec<u8>>,
    /// Each input's l-paths as [`crate::input_paths`] reads them (`None`: the grammar
    /// rejects it).
    pub paths: Vec<Option<FxHashSet<KPath>>>,
    /// Whether each input covered the location.
    pub covered: Vec<bool>,
}

impl TrainingSet {
    /// Covering inputs the grammar accepts.
    pub fn positives(&self) -> u32 {
        self.paths
            .iter()
            .zip(&self.covered)
            .filter(|(p, c)| p.is_some() && **c)
            .count() as u32
    }

    /// Adds an input.
    pub fn push(&mut self, text: Vec<u8>, paths: Option<FxHashSet<KPath>>, covered: bool) {
        self.texts.push(text);
        self.paths.push(paths);
        self.covered.push(covered);
    }

    /// Reads every input's l-paths again, for `l <= k` (in parallel).
    pub fn read_paths(&mut self, parser: &Parser<'_>, graph: &KPathGraph, k: usize) {
        self.paths = self
            .texts
            .par_iter()
            .map(|t| input_paths(parser, graph, t, k).ok())
            .collect();
    }

    /// The location's tree learned from the accepted inputs, and the feature paths it
    /// refers to, with the covering inputs of each covering leaf kept as its
    /// exemplars ([`LocationModel::keep_exemplars`]) and the paths covering inputs
    /// avoid as its blocked ones ([`LocationModel::keep_blocked`]); `None` if the
    /// inputs do not have both classes.
    ///
    /// Only paths of up to `k` elements are features: the inputs' paths may have been
    /// read longer (see [`Refiner`]'s growth of the path length).
    pub fn learn(
        &self,
        name: &str,
        config: LearnConfig,
        salt: u64,
        k: usize,
    ) -> Option<LearnedTree> {
        let FeatureTable { paths, rows: all } = FeatureTable::from_path_sets_up_to(&self.paths, k);
        let mut rows: Vec<Vec<u32>> = Vec::new();
        let mut label: Vec<bool> = Vec::new();
        let mut texts: Vec<&[u8]> = Vec::new();
        for ((row, &covered), text) in all.into_iter().zip(&self.covered).zip(&self.texts) {
            if let Some(row) = row {
                rows.push(row);
                label.push(covered);
                texts.push(text);
            }
        }
        let positives = label.iter().filter(|&&l| l).count();
        if positives == 0 || positives == label.len() {
            return None;
        }
        let mut location =
            LocationModel::fit(name.to_string(), &rows, &label, paths.len(), config, salt);
        location.keep_exemplars(&rows, &label, &texts);
        location.keep_blocked(&rows, &label, paths.len());
        Some((location, paths.into_iter().map(Vec::from).collect()))
    }

    /// Up to `n` paths most telling of the location: present in at least half of the
    /// covering inputs, the rarest among the others first (then the longest).
    pub fn shared_paths(&self, n: usize) -> Vec<KPath> {
        let mut counts: FxHashMap<&KPath, (u32, u32)> = FxHashMap::default();
        let (mut pos, mut neg) = (0u32, 0u32);
        for (paths, &c) in self.paths.iter().zip(&self.covered) {
            let Some(paths) = paths else { continue };
            if c {
                pos += 1;
            } else {
                neg += 1;
            }
            for p in paths {
                let e = counts.entry(p).or_default();
                if c {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
            }
        }
        let mut shared: Vec<(&KPath, u32, u32)> = counts
            .into_iter()
            .filter(|&(_, (p, _))| p > 0 && 2 * p >= pos)
            .map(|(path, (p, q))| (path, p, q))
            .collect();
        let neg = f64::from(neg.max(1));
        let pos = f64::from(pos.max(1));
        // Most telling: the largest gap between the shares among covering and other
        // inputs; ties to the longer path, then by the path itself (deterministic).
        shared.sort_by(|a, b| {
            let gap = |x: &(&KPath, u32, u32)| f64::from(x.1) / pos - f64::from(x.2) / neg;
            gap(b)
                .total_cmp(&gap(a))
                .then_with(|| b.0.len().cmp(&a.0.len()))
                .then_with(|| a.0.cmp(b.0))
        });
        shared
            .into_iter()
            .take(n)
            .map(|(p, _, _)| p.clone())
            .collect()
    }
}

/// How a round drew its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Random inputs (no covering input yet).
    Random,
    /// Half random, half steered to the paths the covering inputs share.
    Steered,
    /// Aimed at the location by the current tree.
    Aimed,
}

/// One round of the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// How its inputs were drawn.
    pub phase: Phase,
    /// Inputs of the round: those run, and in aimed rounds those drawn again that had
    /// run before (not run again, their outcome taken from then).
    pub inputs: u32,
    /// Of [`Round::inputs`], those run before.
    pub run_before: u32,
    /// Of those, how many reached the location.
    pub hits: u32,
    /// Aimed rounds: inputs that satisfied their leaf's constraint.
    pub satisfied: u32,
    /// Executions spent so far, this round's included.
    pub executions: u64,
    /// Covering inputs in the training set after the round.
    pub positives: u32,
}

impl Round {
    /// The share of the round's inputs that reached the location.
    pub fn hit_rate(&self) -> f64 {
        f64::from(self.hits) / f64::from(self.inputs.max(1))
    }
}

/// A tree's aimed rounds, pooled: what the loop knows of the tree's hit rate.
///
/// Each round counts the texts the tree had not aimed before (a confirming round's
/// repeat of an earlier round's text is no new evidence).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Per round, in order: the texts that reached the location, and the texts.
    pub rounds: Vec<(u32, u32)>,
}

impl Evidence {
    /// Texts that reached the location, over every round.
    pub fn hits(&self) -> u32 {
        self.rounds.iter().map(|&(hits, _)| hits).sum()
    }

    /// Texts, over every round.
    pub fn inputs(&self) -> u32 {
        self.rounds.iter().map(|&(_, inputs)| inputs).sum()
    }

    /// The pooled share of texts that reached the location (0 without any).
    pub fn rate(&self) -> f64 {
        f64::from(self.hits()) / f64::from(self.inputs().max(1))
    }

    /// The lower bound of the tree's hit rate at [`GOAL_CONFIDENCE`]: Wilson's score
    /// interval, one-sided, of the pooled rounds (0 without any input). Wilson's bound
    /// rather than the normal one: it stays inside 0-1 and is not overconfident at
    /// rates near 1, where every goal worth asking lies.
    pub fn lower_bound(&self) -> f64 {
        wilson_lower_bound(self.hits(), self.inputs(), GOAL_Z)
    }

    /// Whether the evidence supports a hit rate of at least `goal`: more than one
    /// round (the first was chosen for reaching the goal) whose pooled lower bound is
    /// at `goal` or above.
    pub fn trusts(&self, goal: f64) -> bool {
        self.rounds.len() >= 2 && self.lower_bound() >= goal
    }
}

/// The lower end of Wilson's score interval for `hits` of `n` at the normal quantile
/// `z` (0 when `n` is 0).
fn wilson_lower_bound(hits: u32, n: u32, z: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    let p = f64::from(hits) / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - spread) / (1.0 + z2 / n)).max(0.0)
}

/// The confidence of the bound a tree's hit rate must have at the goal
/// ([`Evidence::lower_bound`]).
pub const GOAL_CONFIDENCE: f64 = 0.95;

/// The standard normal quantile of [`GOAL_CONFIDENCE`] (one-sided).
const GOAL_Z: f64 = 1.644_853_626_951_472;

/// Aimed rounds one tree may spend to show that it reaches the goal: the round that made
/// it a candidate and up to three more. A tree whose rate is close above the goal needs
/// many inputs to show it; past these, learning on from them is the better use of the
/// budget.
pub const TRIAL_ROUNDS: usize = 4;

/// Why a refinement loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A tree's aimed rounds, pooled, put the lower bound of its hit rate at the goal
    /// ([`Evidence::trusts`]): the round that first reached it and at least one round
    /// of fresh inputs from the same tree.
    GoalReached,
    /// The budget of executions is spent.
    ExecutionsSpent,
    /// The aimed inputs drawn are spent ([`DRAWS_PER_INPUT`] per execution of the
    /// budget): the trees' aimed inputs were mostly inputs run before, so that the
    /// executions alone no longer bound the work.
    DrawsSpent,
    /// The deadline passed.
    Deadline,
}

/// What the loop came to.
#[derive(Clone, Debug)]
pub struct Refined {
    /// The tree whose aimed rounds put the highest lower bound on its hit rate (the
    /// tree that reached the goal, if one did), cross-validated on the inputs it was
    /// learned from, with the feature paths it refers to; without an aimed round, the
    /// tree learned from every input;
    /// `None` if no input reached the location. Not a tree learned again after the
    /// best round: learned from its own hits, a tree also learns what they happen to
    /// share (small inputs, no brackets), and aims worse.
    pub location: Option<LearnedTree>,
    /// The rounds, in order.
    pub rounds: Vec<Round>,
    /// Executions spent.
    pub executions: u64,
    /// Why the loop stopped.
    pub ending: Ending,
    /// The inputs the loop ran and whether each reached the location.
    pub added: Vec<(Vec<u8>, bool)>,
    /// The longest feature paths of [`Refined::location`].
    pub k: usize,
    /// The aimed rounds of [`Refined::location`]'s tree (`None` if it aimed none that
    /// counted).
    pub evidence: Option<Evidence>,
}

/// The loop's fixed parts: the grammar's generators and parser, its k-path graph, the
/// feature length.
pub struct Refiner<'a, 'g> {
    /// Draws the random inputs (as the training inputs were drawn).
    pub generator: &'a Generator<'g>,
    /// Closes off the aimed inputs' trees around their required paths. The paper's
    /// uniform choices (`thicket_gen::ChoicePolicy::Uniform`) keep them small, and so
    /// their paths few: an aimed input that holds little beyond its leaf's conditions
    /// tells the next tree which of them matter.
    pub aim_generator: &'a Generator<'g>,
    /// Reads each input's paths (as [`crate::input_paths`] does, as learning does).
    pub parser: &'a Parser<'g>,
    /// The grammar's k-path graph.
    pub graph: &'a KPathGraph,
    /// Longest feature path at the start.
    pub k: usize,
}

impl Refined {
    /// Whether a tree's aimed rounds showed the goal reached at [`GOAL_CONFIDENCE`]
    /// (then [`Refined::evidence`] holds them).
    pub fn reached_goal(&self) -> bool {
        self.ending == Ending::GoalReached
    }
}

/// Makes `tree` (of paths up to `k`) the `best` if its `evidence` has rounds and a
/// higher bound than the best's.
fn keep_best(
    best: &mut Option<(Evidence, LearnedTree, usize)>,
    evidence: Evidence,
    tree: LearnedTree,
    k: usize,
) {
    if evidence.rounds.is_empty() {
        return;
    }
    let bound = evidence.lower_bound();
    if best
        .as_ref()
        .is_none_or(|(kept, _, _)| bound > kept.lower_bound())
    {
        *best = Some((evidence, tree, k));
    }
}

/// Default of [`RefineConfig::min_positives`].
pub const LOOP_MIN_POSITIVES: u32 = 5;

/// How much an aimed round's hit rate must beat the best so far to count as progress.
pub const PLATEAU_MARGIN: f64 = 0.05;

/// Paths the steered gathering aims at, the most telling first.
const STEERING_TARGETS: usize = 8;

impl Refiner<'_, '_> {
    /// Refines the tree of `location` (its full name, as the executor names it),
    /// starting from `training` (its inputs already run); every program run goes
    /// through `judge`. `progress` sees each round as it ends.
    pub fn refine(
        &self,
        judge: &mut Judge,
        location: &str,
        mut training: TrainingSet,
        config: RefineConfig,
        progress: &mut dyn FnMut(&Round),
    ) -> Result<Refined, RunError> {
        let steering = PathSteering::new(self.generator.grammar(), self.graph);
        let seed = config.learn.seed;
        let batch = config.batch.max(1);
        let mut executions = 0u64;
        let mut rounds: Vec<Round> = Vec::new();
        // The training set's own inputs; every input the loop runs is added after them.
        let given = training.texts.len();
        let mut scratch = Vec::new();
        let mut names = Vec::new();
        // Aimed searches run: a round whose tree aims mostly at inputs run before
        // draws many for few executions, so they have a budget of their own.
        let max_draws = DRAWS_PER_INPUT as u64 * config.max_executions;
        let mut draws = 0u64;
        let stop = |executions: u64, draws: u64| {
            if executions >= config.max_executions {
                Some(Ending::ExecutionsSpent)
            } else if draws >= max_draws {
                Some(Ending::DrawsSpent)
            } else if config.deadline.is_some_and(|d| Instant::now() >= d) {
                Some(Ending::Deadline)
            } else {
                None
            }
        };
        let mut round_no = 0u64;
        let mut k = self.k;
        // The longest paths each input of `training` has been read for (`k` or more).
        let mut read_k = k;
        // Every input run, with whether it reached the location.
        let mut seen: FxHashMap<Vec<u8>, bool> = training
            .texts
            .iter()
            .cloned()
            .zip(training.covered.iter().copied())
            .collect();
        let (mut best_rate, mut stalled) = (0.0f64, 0u32);
        // Of the trees whose aimed rounds are over, the one whose rounds put the highest
        // bound on its hit rate, with them and its path length.
        let mut best_tree: Option<(Evidence, LearnedTree, usize)> = None;
        // A tree whose round reached the goal, aiming again until its pooled rounds
        // show the goal or fall under it: its rounds, and the texts they counted.
        let mut trial: Option<(LearnedTree, Evidence, FxHashSet<Vec<u8>>)> = None;
        let ending = loop {
            if let Some(ending) = stop(executions, draws) {
                break ending;
            }
            round_no += 1;
            let n = batch.min((config.max_executions - executions) as usize);
            let positives = training.positives();
            let (mut learned, on_trial) = match trial.take() {
                Some((tree, evidence, texts)) => (Some(tree), Some((evidence, texts))),
                None => (
                    (positives >= config.min_positives)
                        .then(|| training.learn(location, config.learn, round_no, k))
                        .flatten(),
                    None,
                ),
            };
            let constraints = learned
                .as_ref()
                .map(|(l, features)| (aim_cycle(l.constraints(features)), features))
                .filter(|(c, _)| !c.is_empty());
            // Aimed rounds: inputs run before (their outcome is known), whether the
            // tree's language ran out before a batch.
            let mut run_before = (0u32, 0u32);
            let mut language_spent = false;
            // Aimed rounds: every text aimed, run before or not (the tree's evidence).
            let mut aimed_texts: Vec<Vec<u8>> = Vec::new();
            let (phase, texts, satisfied): (Phase, Vec<Vec<u8>>, u32) = match constraints {
                Some((constraints, features)) => {
                    let allowed = DRAWS_PER_INPUT * n;
                    let (aimed, stats) = aimed_inputs(
                        self.aim_generator,
                        self.graph,
                        features,
                        &constraints,
                        k,
                        seed ^ (round_no << 20),
                        Draws {
                            count: n,
                            max_draws: allowed.min((max_draws - draws) as usize),
                        },
                        config.tries,
                    );
                    draws += stats.draws as u64;
                    language_spent = aimed.len() < n && stats.draws >= allowed;
                    // Inputs run before are not run again: they teach nothing new, and a
                    // program that caches (urllib's `urlsplit` keeps the last 128
                    // results) does not run the same code for them twice. Their outcome
                    // still counts toward the round's hit rate: the round measures the
                    // tree's aimed inputs, and a leaf's language may be small enough that
                    // the loop has run most of it.
                    let mut texts = Vec::with_capacity(aimed.len());
                    for (tree, _) in aimed {
                        aimed_texts.push(tree.bytes().to_vec());
                        match seen.get(tree.bytes()) {
                            Some(&hit) => {
                                run_before.0 += 1;
                                run_before.1 += u32::from(hit);
                            }
                            None => texts.push(tree.bytes().to_vec()),
                        }
                    }
                    (Phase::Aimed, texts, stats.satisfied as u32)
                }
                None => {
                    let targets = if positives == 0 {
                        Vec::new()
                    } else {
                        training.shared_paths(STEERING_TARGETS)
                    };
                    let texts = (0..n)
                        .map(|i| {
                            let mut rng = Generator::rng_for(
                                seed ^ 0x005E_ED0F_6A7E,
                                (round_no << 32) | i as u64,
                            );
                            // Odd inputs random, even ones steered to the targets in
                            // turn.
                            let target = (i % 2 == 0 && !targets.is_empty())
                                .then(|| &targets[(i / 2) % targets.len()]);
                            let Ok(Fresh { tree, .. }) = match target {
                                Some(path) => SteeredTo {
                                    steering: &steering,
                                    generator: self.generator,
                                    graph: self.graph,
                                    path,
                                }
                                .tree(&mut rng),
                                None => self.generator.tree(&mut rng),
                            };
                            tree.bytes().to_vec()
                        })
                        .collect();
                    let phase = if targets.is_empty() {
                        Phase::Random
                    } else {
                        Phase::Steered
                    };
                    (phase, texts, 0)
                }
            };
            let mut hits = 0u32;
            let mut ran = 0u32;
            for (i, text) in texts.into_iter().enumerate() {
                executions += 1;
                names.clear();
                let name = format!("round {round_no} input {i}");
                if !covered_names(judge, &name, &text, &mut scratch, &mut names)? {
                    continue;
                }
                ran += 1;
                let covered = names.iter().any(|l| l == location);
                hits += u32::from(covered);
                let paths = input_paths(self.parser, self.graph, &text, read_k).ok();
                seen.insert(text.clone(), covered);
                training.push(text, paths, covered);
            }
            let (ran, hits) = (ran + run_before.0, hits + run_before.1);
            let round = Round {
                phase,
                inputs: ran,
                run_before: run_before.0,
                hits,
                satisfied,
                executions,
                positives: training.positives(),
            };
            progress(&round);
            let rate = round.hit_rate();
            rounds.push(round);
            if phase == Phase::Aimed {
                let tree = learned.take().expect("aimed rounds have a tree");
                let first_round = on_trial.is_none();
                let (mut evidence, mut tree_texts) = on_trial.unwrap_or_default();
                // Each text counts once per tree, with its outcome (a text that did
                // not run, which the judge reported, counts for nothing).
                let (mut new_hits, mut new_inputs) = (0u32, 0u32);
                for text in aimed_texts {
                    if let Some(&hit) = seen.get(&text)
                        && tree_texts.insert(text)
                    {
                        new_inputs += 1;
                        new_hits += u32::from(hit);
                    }
                }
                // A tree's first round counts if it had at least half a batch, or all
                // of the tree's language the searches found; a further round if it
                // added any text.
                let counts = if first_round {
                    2 * ran as usize >= batch || language_spent
                } else {
                    new_inputs > 0
                };
                if counts {
                    evidence.rounds.push((new_hits, new_inputs));
                    if evidence.trusts(config.goal) {
                        best_tree = Some((evidence, tree, k));
                        break Ending::GoalReached;
                    }
                    // One round may be lucky, and a rate close above the goal needs
                    // many inputs to show: the same tree aims again while its pooled
                    // rounds stay at the goal.
                    if evidence.rate() >= config.goal && evidence.rounds.len() < TRIAL_ROUNDS {
                        if first_round {
                            (best_rate, stalled) = (best_rate.max(rate), 0);
                        }
                        trial = Some((tree, evidence, tree_texts));
                        continue;
                    }
                }
                // The tree's rounds are over: all of them, not its best, weigh it.
                keep_best(&mut best_tree, evidence, tree, k);
                if rate > best_rate + PLATEAU_MARGIN {
                    (best_rate, stalled) = (rate, 0);
                } else {
                    stalled += 1;
                }
                if stalled >= config.patience && k < config.max_k {
                    k += 1;
                    // Read once, as long as paths may grow: every input is parsed
                    // again for it, which costs a large training set seconds.
                    if read_k < k {
                        read_k = config.max_k;
                        training.read_paths(self.parser, self.graph, read_k);
                    }
                    (best_rate, stalled) = (0.0, 0);
                }
            }
        };
        // A tree the budget ended on while it aimed again.
        if let Some((tree, evidence, _)) = trial {
            keep_best(&mut best_tree, evidence, tree, k);
        }
        let (location, k, evidence) = match best_tree {
            Some((evidence, tree, k)) => (Some(tree), k, Some(evidence)),
            None => (training.learn(location, config.learn, 0, k), k, None),
        };
        let added = training
            .texts
            .split_off(given)
            .into_iter()
            .zip(training.covered.split_off(given))
            .collect();
        Ok(Refined {
            location,
            rounds,
            executions,
            ending,
            added,
            k,
            evidence,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(rounds: &[(u32, u32)]) -> Evidence {
        Evidence {
            rounds: rounds.to_vec(),
        }
    }

    #[test]
    fn the_bound_is_wilsons_one_sided_at_95_percent() {
        // 192 of 200: 96 %, bound 93.0 %; 90 of 100 is no evidence of 90 %.
        let pooled = evidence(&[(97, 100), (95, 100)]);
        assert!(
            (pooled.lower_bound() - 0.9305).abs() < 1e-3,
            "{}",
            pooled.lower_bound()
        );
        assert!((evidence(&[(90, 100)]).lower_bound() - 0.8396).abs() < 1e-3);
        assert!((evidence(&[(100, 100)]).lower_bound() - 0.9737).abs() < 1e-3);
        assert_eq!(evidence(&[]).lower_bound(), 0.0);
        assert_eq!(evidence(&[(0, 50)]).lower_bound(), 0.0);
    }

    #[test]
    fn a_goal_is_trusted_only_on_a_bound_over_more_than_one_round() {
        // Two rounds of 90 % pool to a point estimate at the goal, not a bound.
        assert!(!evidence(&[(90, 100), (90, 100)]).trusts(0.9));
        assert!(!evidence(&[(93, 100), (93, 100)]).trusts(0.9));
        assert!(evidence(&[(94, 100), (94, 100)]).trusts(0.9));
        // A round alone is the one that made its tree a candidate: never enough.
        assert!(!evidence(&[(100, 100)]).trusts(0.9));
        assert!(evidence(&[(100, 100), (100, 100)]).trusts(0.95));
        assert!(!evidence(&[(100, 100), (100, 100)]).trusts(1.0));
    }
}
