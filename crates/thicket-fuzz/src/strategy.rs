//! Campaign strategies: the seams of a campaign, in the spirit of LibAFL's scheduler,
//! mutator, feedback and objective, without its weight.
//!
//! The [`Campaign`](crate::Campaign) owns what every strategy shares: running the
//! target, classifying outcomes, the coverage set, the output folder (queue/, crashes/,
//! hangs/, meta/, stats.json, plot_data.csv; plus generations.csv for strategies that
//! work in generations), and the rule of what to keep (an input reaching new code goes
//! to queue/, a new failure to crashes/). A [`Strategy`] decides:
//! - **what to run next and how to mutate** ([`Strategy::next`]): a fresh tree, a mutant
//!   of a kept one, a member of a population;
//! - **what the feedback means** ([`Strategy::observe`]): each run's [`RunReport`]
//!   (new code, code and input features, failure, time);
//! - **when to stop** ([`Strategy::finished`]), besides the campaign's budget.
//!
//! Strategies ([`StrategyKind`]): `coverage` (the default: today's coverage-guided loop,
//! with byte havoc off the grammar when its tree mutations stall: [`crate::havoc`]),
//! `random`, `probabilistic`, `inverse`, `evogfuzz` and `fdloop`. The last four learn a
//! probabilistic grammar ([`thicket_gen::Weights`]) from seed trees.
//!
//! FdLoop (paper Fig. 3), as built here; where the paper is silent the choice is ours:
//! - each generation generates `n` = 5 inputs from the current probabilities, mutates a
//!   copy of each (a leaf bit-flip or a same-rule subtree swap, drawn 50/50, the other
//!   tried if the first does not apply; with a text target the flip keeps UTF-8), and
//!   runs all 2n;
//! - each run is scored by the weighted fitness
//!   `w_map * sig(M / M_max) + w_cov * C / C_known + w_rt * T / T_out + w_exc * (0.1 E + 0.9 U)`
//!   where M = input features x code features of the run (the size of the paper's
//!   cross product; input features are the rules of the tree and the pairs of a rule
//!   and the nearest rule above it, i.e. subtrees to depth k = 2), M_max = 10,000 by
//!   default, sig(x) = min(1, tanh(x) / tanh(1)) (about linear on [0, 1], at most 1),
//!   C = code features this run reached first, C_known = code features known after it
//!   (the paper's C_tot, all functions of the program, is not known for Python
//!   targets), T / T_out = run time over the timeout, E = 1 if the run failed, U = 1 if
//!   its failure (kind and location) is new;
//! - weights: `single` (the goal 10, the others 1), `multi` (all 1), `ignore` (the goal
//!   0, the others 1), or given;
//! - the probabilities are relearned from the single best input (argmax, ties to the
//!   first), with smoothing 1 and choices it does not reach keeping their weights;
//!   then one rule drawn at random is reset to uniform (grammar mutation).
//!
//! EvoGFuzz: a population of `n` = 10 inputs per generation from the probabilities, no
//! input mutation, fitness from exceptions only (0.1 E + 0.9 U), relearning from the best
//! third (ties broken by order), then the same grammar mutation as FdLoop (the original
//! perturbs probabilities at random; a uniform reset is one such perturbation).

use crate::campaign::Entry;
use crate::mutate;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thicket_exec::{Novelty, TokenTrace, Trace};
use thicket_gen::prob::{Counts, DEFAULT_SMOOTHING, Weights};
use thicket_gen::{Fresh, GenRng, Generator, Producer, Weighted, below};
use thicket_grammar::{Expr, Grammar};
use thicket_tree::{DerivationTree, NodeId};

/// What a strategy sees of the campaign when it makes the next input.
pub struct Ctx<'a, 'g> {
    /// The generator (its grammar and limits).
    pub generator: &'g Generator<'g>,
    /// The constraint solver, if the campaign has one.
    pub solver: Option<&'g thicket_solve::Solver<'g>>,
    /// The campaign's settings.
    pub config: &'a crate::FuzzConfig,
    /// Whether the target takes text (mutations keep inputs UTF-8).
    pub text: bool,
    /// How trees stand for inputs, if not as their text (Fandango's bit fields): leaf
    /// mutations keep to the texts it allows (a bit is flipped).
    pub encoding: Option<&'g dyn Encoding>,
    pub(crate) corpus: &'a [Entry],
    pub(crate) stop: &'a AtomicBool,
    pub(crate) deadline: Option<Instant>,
}

impl<'g> Ctx<'_, 'g> {
    /// The kept inputs that have trees, with their queue ids.
    pub fn kept(&self) -> impl Iterator<Item = (usize, &DerivationTree)> {
        self.corpus
            .iter()
            .filter_map(|e| e.tree().map(|t| (e.id, t)))
    }

    /// The campaign's producer of fresh trees: the constraint solver if the campaign has
    /// one, else the generator, its choices by `weights` where a strategy has them.
    pub fn producer<'w>(&self, weights: Option<&'w Weights>) -> FreshTrees<'w, 'g> {
        match (self.solver, weights) {
            (Some(solver), _) => FreshTrees::Solved(solver),
            (None, Some(weights)) => FreshTrees::Weighted(Weighted {
                generator: self.generator,
                weights,
            }),
            (None, None) => FreshTrees::Plain(self.generator),
        }
    }

    /// How leaf mutations change a terminal's text for this campaign's target and
    /// encoding.
    pub fn leaf_edits(&self) -> mutate::LeafEdits<'g> {
        mutate::LeafEdits {
            text: self.text,
            encoding: self.encoding,
        }
    }

    /// A fresh tree from `rng` by [`Ctx::producer`], the one way a strategy makes a
    /// fresh input; `None` if the solver found no valid tree in this stream.
    pub fn fresh(&self, rng: &mut GenRng, weights: Option<&Weights>) -> Option<DerivationTree> {
        self.producer(weights)
            .tree(rng)
            .ok()
            .map(|fresh| fresh.tree)
    }

    /// Whether the campaign is stopping (interrupted, or out of time): a strategy that
    /// searches long for its next input (a solver's queries) gives up then, returning
    /// `None`.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// The producers a campaign makes fresh trees with (see [`Ctx::producer`]).
#[derive(Clone, Copy)]
pub enum FreshTrees<'w, 'g> {
    /// Plain generation.
    Plain(&'g Generator<'g>),
    /// Generation by weights (probabilistic strategies).
    Weighted(Weighted<'w, 'g>),
    /// Valid trees of the campaign's constraints.
    Solved(&'g thicket_solve::Solver<'g>),
}

impl Producer for FreshTrees<'_, '_> {
    type Miss = thicket_solve::Unsolved;

    fn grammar(&self) -> &Grammar {
        match self {
            FreshTrees::Plain(generator) => generator.grammar(),
            FreshTrees::Weighted(weighted) => weighted.generator.grammar(),
            FreshTrees::Solved(solver) => Producer::grammar(*solver),
        }
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        match self {
            FreshTrees::Plain(generator) => Ok(infallible(generator.tree(rng))),
            FreshTrees::Weighted(weighted) => Ok(infallible(weighted.tree(rng))),
            FreshTrees::Solved(solver) => solver.tree(rng),
        }
    }
}

/// The tree of a producer that cannot miss.
fn infallible(fresh: Result<Fresh, std::convert::Infallible>) -> Fresh {
    match fresh {
        Ok(fresh) => fresh,
        Err(never) => match never {},
    }
}

/// An input of a campaign: a derivation tree (the input is its text), a tree with the
/// input it encodes (see [`Encoding`]), or bytes made without one (tokens put together,
/// a peer's entry outside the grammar).
#[derive(Clone, Debug)]
pub enum Input {
    /// A derivation tree of the grammar.
    Tree(DerivationTree),
    /// A derivation tree and the input it stands for, which is not its text.
    Encoded {
        /// The tree.
        tree: DerivationTree,
        /// Its input.
        bytes: Vec<u8>,
    },
    /// Bytes without a tree.
    Bytes(Vec<u8>),
}

impl Input {
    /// The bytes to run.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Tree(tree) => tree.bytes(),
            Input::Encoded { bytes, .. } | Input::Bytes(bytes) => bytes,
        }
    }

    /// The tree, if the input has one.
    pub fn tree(&self) -> Option<&DerivationTree> {
        match self {
            Input::Tree(tree) | Input::Encoded { tree, .. } => Some(tree),
            Input::Bytes(_) => None,
        }
    }
}

pub use thicket_gen::Encoding;

/// An input to run, the name of the operation that made it (as in saved inputs' names)
/// and the queue id of its parent.
pub struct Candidate {
    /// The input.
    pub input: Input,
    /// `gen`, `regen+splice`, `flip`, `swap`, ...
    pub op: String,
    /// The kept input it was made from.
    pub parent: Option<usize>,
}

impl Candidate {
    /// A tree made by `op`.
    pub fn tree(tree: DerivationTree, op: impl Into<String>, parent: Option<usize>) -> Candidate {
        Candidate {
            input: Input::Tree(tree),
            op: op.into(),
            parent,
        }
    }

    /// Bytes made by `op`, without a tree.
    pub fn bytes(bytes: Vec<u8>, op: impl Into<String>, parent: Option<usize>) -> Candidate {
        Candidate {
            input: Input::Bytes(bytes),
            op: op.into(),
            parent,
        }
    }
}

/// What one run showed, for [`Strategy::observe`].
pub struct RunReport<'a> {
    /// The input run.
    pub input: &'a Input,
    /// The operation that made it.
    pub op: &'a str,
    /// The run's coverage, whether or not it counts (see `counts_for_coverage`).
    pub trace: Trace<'a>,
    /// The run's token-level path condition, for executors that hook the target's
    /// tokenizer.
    pub token_trace: Option<&'a TokenTrace>,
    /// Whether the run's coverage counts (`thicket_exec::Verdict::counts_for_coverage`:
    /// not for crashes and hangs).
    pub counts_for_coverage: bool,
    /// What the run reached that no earlier run of the campaign had (empty when its
    /// coverage does not count).
    pub novelty: Novelty,
    /// Code features (see `thicket_exec::Trace::for_each_feature`) this run reached
    /// first in the campaign (0 for runs whose coverage does not count: crashes, hangs),
    /// when features are counted ([`Strategy::wants_features`]).
    pub new_code: u64,
    /// Code features the run reached, when features are counted.
    pub code_features: u64,
    /// Input features of the tree ([`input_features`]), when features are counted (0
    /// for an input without a tree).
    pub input_features: u64,
    /// Code features reached so far by the campaign, this run included.
    pub covered: u64,
    /// The failure's `kind @ location` key, if the run failed.
    pub failure: Option<&'a str>,
    /// Whether that failure is new in the campaign.
    pub new_failure: bool,
    /// How long the run took.
    pub duration: Duration,
    /// The run's time limit.
    pub timeout: Duration,
}

/// The seams of a campaign (see the module docs).
pub trait Strategy {
    /// The strategy's name (`--strategy NAME`).
    fn name(&self) -> &'static str;

    /// The next input to run, drawing from `rng` (round `i`'s stream); `None` if it
    /// could not be made valid (a solver's failure), which counts as an unsolved round.
    fn next(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate>;

    /// What [`Strategy::next`] would give after the run under way if that run keeps
    /// no input, drawing from `rng` (the next round's stream): the campaign asks while
    /// the target runs and uses the answer unless the run kept an input (or the round
    /// did not count), so making an input costs no time of its own. It must leave the
    /// strategy as `next` would find it (caches aside). `None` (the default): the
    /// strategy cannot tell before it has observed the run, and `next` is asked after.
    fn next_if_nothing_kept(
        &mut self,
        _ctx: &Ctx<'_, '_>,
        _rng: &mut GenRng,
    ) -> Option<Option<Candidate>> {
        None
    }

    /// Feedback of the run of the last input [`Strategy::next`] gave.
    fn observe(&mut self, _report: &RunReport<'_>) {}

    /// Whether the strategy is done (besides the campaign's budget).
    fn finished(&self) -> bool {
        false
    }

    /// Whether [`RunReport`]'s feature counts are needed (they cost a pass over the
    /// trace and the tree per run).
    fn wants_features(&self) -> bool {
        true
    }

    /// The header of `generations.csv`, for strategies that work in generations.
    fn generation_header(&self) -> Option<&'static str> {
        None
    }

    /// A line for `generations.csv` when a generation has ended.
    fn take_generation_line(&mut self) -> Option<String> {
        None
    }

    /// Figures of the strategy for `stats.json` (`null`: none).
    fn summary(&self) -> Value {
        Value::Null
    }

    /// Files the strategy writes into the output folder whenever the campaign writes
    /// its final figures (name relative to the folder, contents).
    fn session_files(&mut self) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }
}

/// The strategies `thicket fuzz --strategy` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    /// Coverage-guided: mutate kept inputs, keep what reaches new code (the default).
    Coverage,
    /// Uniform random generation, no feedback.
    Random,
    /// Generation by the probabilities learned from the seeds, no feedback.
    Probabilistic,
    /// Generation by the inverted probabilities ("inputs from hell"), no feedback.
    Inverse,
    /// Probability evolution with exception feedback, no input mutation.
    EvoGFuzz,
    /// FdLoop (paper Fig. 3).
    FdLoop,
}

impl StrategyKind {
    /// Every strategy, with its name.
    pub const ALL: [(&'static str, StrategyKind); 6] = [
        ("coverage", StrategyKind::Coverage),
        ("random", StrategyKind::Random),
        ("probabilistic", StrategyKind::Probabilistic),
        ("inverse", StrategyKind::Inverse),
        ("evogfuzz", StrategyKind::EvoGFuzz),
        ("fdloop", StrategyKind::FdLoop),
    ];

    /// The strategy of a name.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    /// Whether it learns probabilities from seed trees.
    pub fn learns(self) -> bool {
        matches!(
            self,
            StrategyKind::Probabilistic
                | StrategyKind::Inverse
                | StrategyKind::EvoGFuzz
                | StrategyKind::FdLoop
        )
    }
}

/// FdLoop's goals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Input features x code features.
    Mappings,
    /// New code.
    Coverage,
    /// Run time.
    Runtime,
    /// Exceptions, total and unique.
    Exceptions,
}

impl Goal {
    /// The goal of a name: `mappings`, `coverage`, `runtime`, `exceptions`.
    pub fn from_name(name: &str) -> Option<Goal> {
        Some(match name {
            "mappings" => Goal::Mappings,
            "coverage" => Goal::Coverage,
            "runtime" => Goal::Runtime,
            "exceptions" => Goal::Exceptions,
            _ => return None,
        })
    }
}

/// Weights of the fitness terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitnessWeights {
    /// Of mappings.
    pub mappings: f64,
    /// Of new coverage.
    pub coverage: f64,
    /// Of run time.
    pub runtime: f64,
    /// Of exceptions.
    pub exceptions: f64,
}

impl FitnessWeights {
    /// Every goal 1 (the paper's multi-goal mode).
    pub fn multi() -> FitnessWeights {
        FitnessWeights {
            mappings: 1.0,
            coverage: 1.0,
            runtime: 1.0,
            exceptions: 1.0,
        }
    }

    /// `goal` 10, the others 1 (single-goal mode).
    pub fn single(goal: Goal) -> FitnessWeights {
        FitnessWeights::multi().with(goal, 10.0)
    }

    /// `goal` 0, the others 1 (ignore-goal mode).
    pub fn ignore(goal: Goal) -> FitnessWeights {
        FitnessWeights::multi().with(goal, 0.0)
    }

    /// Weights written `MAPPINGS,COVERAGE,RUNTIME,EXCEPTIONS` (four numbers >= 0), or
    /// what is wrong with `text`.
    pub fn parse(text: &str) -> Result<FitnessWeights, String> {
        let w: Vec<f64> = text
            .split(',')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        if w.len() != 4 || w.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err("expected four numbers >= 0: MAPPINGS,COVERAGE,RUNTIME,EXCEPTIONS".into());
        }
        Ok(FitnessWeights {
            mappings: w[0],
            coverage: w[1],
            runtime: w[2],
            exceptions: w[3],
        })
    }

    /// The weights of a goal named `name` (`multi`, or a [`Goal`]'s name), or with
    /// `ignore` of every goal but it; or what is wrong with the names.
    pub fn for_goal(name: &str, ignore: bool) -> Result<FitnessWeights, String> {
        if name == "multi" {
            if ignore {
                return Err("--ignore-goal needs a goal to ignore (--goal coverage, ...)".into());
            }
            return Ok(FitnessWeights::multi());
        }
        let goal = Goal::from_name(name).ok_or_else(|| {
            format!(
                "unknown --goal `{name}`: one of mappings, coverage, runtime, exceptions, multi"
            )
        })?;
        Ok(if ignore {
            FitnessWeights::ignore(goal)
        } else {
            FitnessWeights::single(goal)
        })
    }

    fn with(mut self, goal: Goal, w: f64) -> FitnessWeights {
        *match goal {
            Goal::Mappings => &mut self.mappings,
            Goal::Coverage => &mut self.coverage,
            Goal::Runtime => &mut self.runtime,
            Goal::Exceptions => &mut self.exceptions,
        } = w;
        self
    }
}

/// Default `M_max` of the fitness (mappings at which the mappings term saturates).
pub const DEFAULT_MAPPINGS_MAX: f64 = 10_000.0;

/// The weighted fitness of one run (see the module docs).
pub fn fitness(w: &FitnessWeights, r: &RunReport<'_>, mappings_max: f64) -> f64 {
    let m = (r.input_features * r.code_features) as f64 / mappings_max.max(1.0);
    let sig = (m.tanh() / 1f64.tanh()).min(1.0);
    let c = if r.covered > 0 {
        r.new_code as f64 / r.covered as f64
    } else {
        0.0
    };
    let t = (r.duration.as_secs_f64() / r.timeout.as_secs_f64().max(1e-9)).min(1.0);
    w.mappings * sig + w.coverage * c + w.runtime * t + w.exceptions * exception_score(r)
}

/// `0.1 E + 0.9 U` of one run.
fn exception_score(r: &RunReport<'_>) -> f64 {
    0.1 * f64::from(u8::from(r.failure.is_some())) + 0.9 * f64::from(u8::from(r.new_failure))
}

/// Input features of a tree: its distinct rules and distinct (rule, nearest rule above)
/// pairs, i.e. its subtrees to depth 2 identified by rules.
pub fn input_features(grammar: &Grammar, tree: &DerivationTree) -> u64 {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut above: Vec<(usize, u32)> = Vec::new();
    for index in 0..tree.len() {
        while above.last().is_some_and(|&(end, _)| end <= index) {
            above.pop();
        }
        let node = NodeId::from_index(index);
        if let Expr::Ref(symbol) = grammar.expr(tree.expr(node)) {
            let rule = symbol.index() as u64;
            seen.insert(rule);
            if let Some(&(_, parent)) = above.last() {
                seen.insert((u64::from(parent) + 1) << 32 | rule);
            }
            above.push((tree.subtree_end(node), symbol.index() as u32));
        }
    }
    seen.len() as u64
}

/// Seeds generated are this many.
pub const GENERATED_SEEDS: u64 = 100;

/// The trees learning strategies learn from when the user gives none:
/// [`GENERATED_SEEDS`] fresh trees of `producer`, from streams of `seed` apart from the
/// campaign's rounds (streams that give no tree are skipped).
pub fn generated_seeds<P: Producer>(producer: &P, seed: u64) -> Vec<DerivationTree> {
    (0..GENERATED_SEEDS)
        .filter_map(|i| {
            let mut rng = Generator::rng_for(seed ^ 0x5EED_5EED_5EED_5EED, i);
            producer.tree(&mut rng).ok().map(|fresh| fresh.tree)
        })
        .collect()
}

/// Makes the strategy `kind`; `seeds` are the trees learning strategies learn from.
pub fn make_strategy<'g>(
    kind: StrategyKind,
    generator: &'g Generator<'g>,
    seeds: &[DerivationTree],
    fdloop: FdLoopConfig,
) -> Box<dyn Strategy + 'g> {
    let grammar = generator.grammar();
    let learned = || {
        let mut counts = Counts::new(grammar);
        for tree in seeds {
            counts.add_tree(grammar, tree);
        }
        Weights::learn(grammar, &counts, DEFAULT_SMOOTHING, None)
    };
    match kind {
        StrategyKind::Coverage => Box::<CoverageGuided>::default(),
        StrategyKind::Random => Box::new(Sampling {
            name: "random",
            weights: None,
        }),
        StrategyKind::Probabilistic => Box::new(Sampling {
            name: "probabilistic",
            weights: Some(learned()),
        }),
        StrategyKind::Inverse => Box::new(Sampling {
            name: "inverse",
            weights: Some(learned().inverted(grammar)),
        }),
        StrategyKind::EvoGFuzz => Box::new(Evolution::new(
            grammar,
            learned(),
            Evolve::EvoGFuzz,
            FdLoopConfig {
                population: fdloop.evogfuzz_population,
                ..fdloop
            },
        )),
        StrategyKind::FdLoop => {
            Box::new(Evolution::new(grammar, learned(), Evolve::FdLoop, fdloop))
        }
    }
}

/// The coverage-guided loop: fresh inputs, or (once inputs are kept) mutants of kept
/// ones, as the campaign always made them (see the crate docs); and when those stop
/// finding anything, byte havoc on the smallest kept inputs as
/// [`FuzzConfig::havoc`](crate::FuzzConfig::havoc) says (see [`crate::havoc`]).
#[derive(Default)]
pub struct CoverageGuided {
    havoc: crate::havoc::HavocStage,
    /// The campaign's havoc setting, as last seen (for the summary).
    share: crate::havoc::HavocShare,
}

impl Strategy for CoverageGuided {
    fn name(&self) -> &'static str {
        "coverage"
    }

    fn wants_features(&self) -> bool {
        false
    }

    fn next(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate> {
        self.share = ctx.config.havoc;
        if let Some(candidate) = self.havoc.next(ctx, rng, 0) {
            return Some(candidate);
        }
        coverage_guided(ctx, rng)
    }

    fn next_if_nothing_kept(
        &mut self,
        ctx: &Ctx<'_, '_>,
        rng: &mut GenRng,
    ) -> Option<Option<Candidate>> {
        // A run that keeps nothing leaves the corpus as it is and adds one execution to
        // havoc's stall; nothing else here changes with a run.
        self.share = ctx.config.havoc;
        if let Some(candidate) = self.havoc.next(ctx, rng, 1) {
            return Some(Some(candidate));
        }
        Some(coverage_guided(ctx, rng))
    }

    fn observe(&mut self, report: &RunReport<'_>) {
        self.havoc.observe(report);
    }

    fn summary(&self) -> Value {
        json!({ "havoc": self.havoc.summary(self.share) })
    }
}

/// The coverage-guided strategy's input of a round: fresh, or a mutant of a kept tree;
/// `None` if it could not be made valid (see `Campaign::with_solver`).
fn coverage_guided(ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate> {
    // The kept inputs with a tree, and the favoured ones among them, counted and drawn
    // by position rather than collected: this runs before every execution.
    fn is_parent(e: &&Entry) -> bool {
        e.tree.is_some()
    }
    fn is_favoured(e: &&Entry) -> bool {
        e.tree.is_some() && e.favoured
    }
    let parents = if ctx.config.feedback {
        ctx.corpus.iter().filter(is_parent).count()
    } else {
        0
    };
    if parents > 0 && below(rng, 1000) < ctx.config.mutate_per_mille {
        // Nine times in ten a favoured input (the smallest kept one for some code
        // feature, as AFL favours them), then the smaller of two drawn at random (a
        // tournament): mutants keep growing where growth pays (recursion, repetition),
        // yet a campaign does not drift to ever larger inputs that cost the target and
        // the mutations more time.
        let favoured = ctx.corpus.iter().filter(is_favoured).count();
        let (pool, in_pool): (usize, fn(&&Entry) -> bool) = if favoured > 0 && below(rng, 10) < 9 {
            (favoured, is_favoured)
        } else {
            (parents, is_parent)
        };
        let mut draw = || {
            let nth = below(rng, pool as u32) as usize;
            ctx.corpus
                .iter()
                .filter(in_pool)
                .nth(nth)
                .expect("drawn among the pool's entries")
        };
        let a = draw();
        let b = draw();
        let size = |e: &Entry| e.tree().map_or(0, DerivationTree::len);
        let parent = if size(b) < size(a) { b } else { a };
        // Recursive mutation may grow a tree past the generation depth, up to four
        // times its parent's size (at least 4 KiB).
        let parent_tree = parent.tree().expect("drawn among entries with trees");
        let budget = (parent_tree.bytes().len() * 4).max(4096);
        // A donor other than the parent itself needs a second kept tree.
        let donors: Vec<&mutate::Donor> = if parents > 1 {
            ctx.corpus.iter().filter_map(|e| e.tree.as_ref()).collect()
        } else {
            Vec::new()
        };
        let (mut tree, applied) = mutate::stack(
            ctx.generator,
            parent_tree,
            &donors,
            budget,
            ctx.config.valid_only,
            ctx.leaf_edits(),
            rng,
        );
        let mut op = applied.name();
        if let Some(solver) = ctx.solver
            && ctx.config.valid_only
            && !applied.is_empty()
        {
            let before = tree.bytes().to_vec();
            tree = solver.repair(tree, rng).ok()?;
            if tree.bytes() != before {
                op.push_str("+fix");
            }
        }
        return Some(Candidate::tree(tree, op, Some(parent.id)));
    }
    Some(Candidate::tree(ctx.fresh(rng, None)?, "gen", None))
}

/// Generation without feedback: uniform (`random`) or by fixed weights.
struct Sampling {
    name: &'static str,
    weights: Option<Weights>,
}

impl Strategy for Sampling {
    fn name(&self) -> &'static str {
        self.name
    }

    fn next(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate> {
        Some(Candidate::tree(
            ctx.fresh(rng, self.weights.as_ref())?,
            "gen",
            None,
        ))
    }
}

/// Parameters of FdLoop and EvoGFuzz.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FdLoopConfig {
    /// Inputs generated per generation (FdLoop's n; the paper's default 5).
    pub population: usize,
    /// EvoGFuzz's population (10).
    pub evogfuzz_population: usize,
    /// Stop after this many generations (none: the campaign's budget decides).
    pub generations: Option<u64>,
    /// Fitness weights.
    pub weights: FitnessWeights,
    /// The fitness's M_max.
    pub mappings_max: f64,
    /// FdLoop's input mutation (leaf flip or subtree swap of copies); off for the
    /// paper's ablation.
    pub mutate_inputs: bool,
    /// FdLoop's grammar mutation (a rule reset to uniform per generation).
    pub mutate_grammar: bool,
}

impl Default for FdLoopConfig {
    fn default() -> FdLoopConfig {
        FdLoopConfig {
            population: 5,
            evogfuzz_population: 10,
            generations: None,
            weights: FitnessWeights::multi(),
            mappings_max: DEFAULT_MAPPINGS_MAX,
            mutate_inputs: true,
            mutate_grammar: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Evolve {
    FdLoop,
    EvoGFuzz,
}

/// FdLoop and EvoGFuzz: generations of inputs from evolving probabilities.
struct Evolution<'g> {
    grammar: &'g Grammar,
    /// A word drawn when the generation was made, for the grammar mutation at its end.
    word: u64,
    kind: Evolve,
    config: FdLoopConfig,
    weights: Weights,
    /// Inputs of this generation still to run (popped from the end).
    pending: Vec<Candidate>,
    /// Inputs of this generation run so far, with their fitness.
    scored: Vec<(f64, DerivationTree)>,
    generation: u64,
    line: Option<String>,
    best_fitness: f64,
    rules_with_choices: Vec<thicket_grammar::SymbolId>,
}

impl<'g> Evolution<'g> {
    fn new(
        grammar: &'g Grammar,
        weights: Weights,
        kind: Evolve,
        config: FdLoopConfig,
    ) -> Evolution<'g> {
        let rules_with_choices = grammar
            .symbols()
            .filter(|&s| !thicket_gen::prob::choices_of(grammar, s).is_empty())
            .collect();
        Evolution {
            grammar,
            word: 0,
            kind,
            config,
            weights,
            pending: Vec::new(),
            scored: Vec::new(),
            generation: 0,
            line: None,
            best_fitness: 0.0,
            rules_with_choices,
        }
    }

    /// Makes the next generation's inputs (n fresh, and for FdLoop n mutated copies).
    fn populate(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) {
        let grammar = ctx.generator.grammar();
        let n = self.config.population.max(1);
        // A stream the solver finds nothing in leaves the generation one input short.
        let fresh: Vec<DerivationTree> = (0..n)
            .filter_map(|_| ctx.fresh(rng, Some(&self.weights)))
            .collect();
        let mut batch = Vec::new();
        if self.kind == Evolve::FdLoop && self.config.mutate_inputs {
            for tree in &fresh {
                let flip = |rng: &mut GenRng| {
                    mutate::edit_leaf(grammar, tree, ctx.leaf_edits(), rng)
                        .map(|(t, _)| (t, "flip"))
                };
                let swap = |rng: &mut GenRng| mutate::swap(grammar, tree, rng).map(|t| (t, "swap"));
                let mutant = if below(rng, 2) == 0 {
                    flip(rng).or_else(|| swap(rng))
                } else {
                    swap(rng).or_else(|| flip(rng))
                };
                let (tree, op) = mutant.unwrap_or_else(|| (tree.clone(), "copy"));
                batch.push(Candidate::tree(tree, op, None));
            }
        }
        for tree in fresh.into_iter().rev() {
            batch.push(Candidate::tree(tree, "gen", None));
        }
        // Popped from the end: fresh inputs first, then their mutants.
        self.pending = batch;
    }

    /// Ends a generation: relearn from the best, mutate the grammar.
    fn evolve(&mut self) {
        let grammar = self.grammar;
        let mut order: Vec<usize> = (0..self.scored.len()).collect();
        // Highest fitness first; ties keep run order.
        order.sort_by(|&a, &b| self.scored[b].0.total_cmp(&self.scored[a].0));
        let best = match self.kind {
            Evolve::FdLoop => 1,
            Evolve::EvoGFuzz => self.scored.len().div_ceil(3),
        };
        let mut counts = Counts::new(grammar);
        for &i in order.iter().take(best) {
            counts.add_tree(grammar, &self.scored[i].1);
        }
        self.weights = Weights::learn(grammar, &counts, DEFAULT_SMOOTHING, Some(&self.weights));
        if self.config.mutate_grammar && !self.rules_with_choices.is_empty() {
            let rule = self.rules_with_choices
                [(self.word % self.rules_with_choices.len() as u64) as usize];
            self.weights.reset_rule(grammar, rule);
        }
        let top = order.first().map_or(0.0, |&i| self.scored[i].0);
        let mean = self.scored.iter().map(|s| s.0).sum::<f64>() / self.scored.len().max(1) as f64;
        let size = order.first().map_or(0, |&i| self.scored[i].1.bytes().len());
        self.best_fitness = self.best_fitness.max(top);
        self.line = Some(format!(
            "{},{},{top:.6},{mean:.6},{size}",
            self.generation,
            self.scored.len()
        ));
        self.generation += 1;
        self.scored.clear();
    }
}

impl Strategy for Evolution<'_> {
    fn name(&self) -> &'static str {
        match self.kind {
            Evolve::FdLoop => "fdloop",
            Evolve::EvoGFuzz => "evogfuzz",
        }
    }

    fn next(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate> {
        if self.pending.is_empty() {
            self.word = rand::Rng::next_u64(rng);
            self.populate(ctx, rng);
        }
        self.pending.pop()
    }

    fn observe(&mut self, report: &RunReport<'_>) {
        let Some(tree) = report.input.tree().cloned() else {
            return;
        };
        let score = match self.kind {
            Evolve::FdLoop => fitness(&self.config.weights, report, self.config.mappings_max),
            Evolve::EvoGFuzz => exception_score(report),
        };
        self.scored.push((score, tree));
        if self.pending.is_empty() {
            self.evolve();
        }
    }

    fn finished(&self) -> bool {
        self.config
            .generations
            .is_some_and(|g| self.generation >= g && self.pending.is_empty())
    }

    fn generation_header(&self) -> Option<&'static str> {
        Some("generation,runs,best_fitness,mean_fitness,best_size\n")
    }

    fn take_generation_line(&mut self) -> Option<String> {
        self.line.take().map(|mut l| {
            l.push('\n');
            l
        })
    }

    fn summary(&self) -> Value {
        json!({
            "generations": self.generation,
            "best_fitness": self.best_fitness,
            "population": self.config.population,
            "weights": {
                "mappings": self.config.weights.mappings,
                "coverage": self.config.weights.coverage,
                "runtime": self.config.weights.runtime,
                "exceptions": self.config.weights.exceptions,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::GenConfig;
    use thicket_grammar::load_spec_text;

    const WORDS: &str = "<start> ::= <word> (\" \" <word>)*\n\
        <word> ::= \"alpha\" | \"beta\" | \"gamma\" | \"delta\"\n";

    fn report<'a>(input: &'a Input, new_code: u64, failure: Option<&'a str>) -> RunReport<'a> {
        RunReport {
            input,
            op: "gen",
            trace: Trace::None,
            token_trace: None,
            counts_for_coverage: true,
            novelty: Novelty::default(),
            new_code,
            code_features: 10,
            input_features: 10,
            covered: 20,
            failure,
            new_failure: failure.is_some(),
            duration: Duration::from_millis(10),
            timeout: Duration::from_millis(100),
        }
    }

    #[test]
    fn fitness_weighs_each_goal() {
        let input = Input::Bytes(b"x".to_vec());
        let plain = report(&input, 0, None);
        let covering = report(&input, 10, None);
        let failing = report(&input, 0, Some("crash @ ?"));
        let multi = FitnessWeights::multi();
        // New code: C / C_known = 10 / 20.
        let gain = fitness(&multi, &covering, DEFAULT_MAPPINGS_MAX)
            - fitness(&multi, &plain, DEFAULT_MAPPINGS_MAX);
        assert!((gain - 0.5).abs() < 1e-9, "{gain}");
        // A new failure: 0.1 E + 0.9 U = 1.
        let gain = fitness(&multi, &failing, DEFAULT_MAPPINGS_MAX)
            - fitness(&multi, &plain, DEFAULT_MAPPINGS_MAX);
        assert!((gain - 1.0).abs() < 1e-9, "{gain}");
        // Run time 10 ms of 100 ms; mappings 100 of M_max 100 saturate at 1.
        let t = fitness(&FitnessWeights::single(Goal::Runtime), &plain, 1e12);
        assert!((t - (10.0 * 0.1 + 1.0 * (100.0f64 / 1e12).tanh() / 1f64.tanh())).abs() < 1e-6);
        let m = fitness(&FitnessWeights::ignore(Goal::Runtime), &plain, 100.0);
        assert!((m - 1.0).abs() < 1e-9, "{m}");
        // Ignoring a goal drops its term.
        let ignored = fitness(
            &FitnessWeights::ignore(Goal::Coverage),
            &covering,
            DEFAULT_MAPPINGS_MAX,
        );
        let unrewarded = fitness(
            &FitnessWeights::ignore(Goal::Coverage),
            &plain,
            DEFAULT_MAPPINGS_MAX,
        );
        assert_eq!(ignored, unrewarded);
    }

    #[test]
    fn mutants_come_mostly_from_favoured_kept_trees() {
        let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let config = crate::FuzzConfig {
            mutate_per_mille: 1000,
            ..crate::FuzzConfig::default()
        };
        let tree = |seed| generator.generate_tree(&mut Generator::rng_for(seed, 0)).0;
        // Entry 1 has no tree (bytes from elsewhere); entry 2 alone is favoured.
        let corpus: Vec<Entry> = (0..6)
            .map(|id| {
                let tree = (id != 1).then(|| tree(id as u64));
                let bytes = tree.as_ref().map_or(b"x".to_vec(), |t| t.bytes().to_vec());
                let mut entry = Entry::new(&grammar, id, tree, &bytes);
                entry.favoured = id == 2;
                entry
            })
            .collect();
        let stop = AtomicBool::new(false);
        let ctx = Ctx {
            generator: &generator,
            solver: None,
            config: &config,
            text: true,
            encoding: None,
            corpus: &corpus,
            stop: &stop,
            deadline: None,
        };
        let mut parents = [0u32; 6];
        for round in 0..400 {
            let candidate = coverage_guided(&ctx, &mut Generator::rng_for(1, round)).unwrap();
            parents[candidate.parent.expect("a mutant")] += 1;
        }
        assert_eq!(parents[1], 0, "an entry without a tree is no parent");
        assert!(parents[2] >= 340, "favoured nine times in ten: {parents:?}");
        assert!(
            parents.iter().filter(|&&n| n > 0).count() >= 3,
            "{parents:?}"
        );
    }

    /// Runs `generations` of FdLoop whose reports reward inputs with `alpha` in them;
    /// returns the strategy.
    fn evolve_towards_alpha<'g>(generator: &'g Generator<'g>, generations: u64) -> Evolution<'g> {
        let config = FdLoopConfig {
            population: 4,
            mutate_grammar: false,
            ..FdLoopConfig::default()
        };
        let mut fdloop = Evolution::new(
            generator.grammar(),
            Weights::uniform(generator.grammar()),
            Evolve::FdLoop,
            config,
        );
        let fuzz = crate::FuzzConfig::default();
        let stop = AtomicBool::new(false);
        let ctx = Ctx {
            generator,
            solver: None,
            config: &fuzz,
            text: true,
            encoding: None,
            corpus: &[],
            stop: &stop,
            deadline: None,
        };
        let mut round = 0;
        while fdloop.generation < generations {
            let mut rng = Generator::rng_for(3, round);
            round += 1;
            let candidate = fdloop.next(&ctx, &mut rng).expect("always an input");
            let alphas = candidate
                .input
                .bytes()
                .windows(5)
                .filter(|w| *w == b"alpha")
                .count() as u64;
            let words = candidate.input.bytes().split(|&b| b == b' ').count().max(1) as u64;
            // New code in proportion to the share of alphas.
            fdloop.observe(&report(&candidate.input, 20 * alphas / words, None));
        }
        fdloop
    }

    #[test]
    fn fdloop_relearns_from_its_fittest_input_each_generation() {
        let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let mut fdloop = evolve_towards_alpha(&generator, 6);
        assert_eq!(fdloop.summary()["generations"], 6);
        let line = fdloop.take_generation_line().unwrap();
        // generation,runs,best_fitness,mean_fitness,best_size: 2n runs a generation.
        assert!(line.starts_with("5,8,"), "{line}");
        assert!(fdloop.best_fitness > 0.0);
        // The probabilities now favour the rewarded word over uniform choice.
        let share = |weights: Option<&Weights>| {
            let mut alphas = 0;
            let mut words = 0;
            for i in 0..300 {
                let mut rng = Generator::rng_for(11, i);
                let tree = match weights {
                    Some(w) => generator.generate_tree_weighted(&mut rng, w).0,
                    None => generator.generate_tree(&mut rng).0,
                };
                let text = String::from_utf8_lossy(tree.bytes()).into_owned();
                alphas += text.matches("alpha").count();
                words += text.split(' ').count();
            }
            alphas as f64 / words as f64
        };
        let learned = share(Some(&fdloop.weights));
        let uniform = share(None);
        assert!(learned > uniform + 0.1, "{learned} vs {uniform}");
    }

    #[test]
    fn fdloop_stops_after_its_generations_and_mutates_copies() {
        let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let mut fdloop = Evolution::new(
            &grammar,
            Weights::uniform(&grammar),
            Evolve::FdLoop,
            FdLoopConfig {
                population: 3,
                generations: Some(1),
                ..FdLoopConfig::default()
            },
        );
        let fuzz = crate::FuzzConfig::default();
        let stop = AtomicBool::new(false);
        let ctx = Ctx {
            generator: &generator,
            solver: None,
            config: &fuzz,
            text: true,
            encoding: None,
            corpus: &[],
            stop: &stop,
            deadline: None,
        };
        let mut ops = Vec::new();
        let mut round = 0;
        while !fdloop.finished() {
            let mut rng = Generator::rng_for(5, round);
            round += 1;
            let candidate = fdloop.next(&ctx, &mut rng).unwrap();
            ops.push(candidate.op.clone());
            fdloop.observe(&report(&candidate.input, 0, None));
        }
        // n fresh inputs first, then a mutated copy of each.
        assert_eq!(ops.len(), 6);
        assert!(ops[..3].iter().all(|op| op == "gen"), "{ops:?}");
        assert!(
            ops[3..]
                .iter()
                .all(|op| ["flip", "swap", "copy"].contains(&op.as_str())),
            "{ops:?}"
        );
    }

    #[test]
    fn fitness_weights_from_text_and_goal_names() {
        let w = FitnessWeights::parse("1, 2,0,3.5").unwrap();
        assert_eq!(
            (w.mappings, w.coverage, w.runtime, w.exceptions),
            (1.0, 2.0, 0.0, 3.5)
        );
        assert!(FitnessWeights::parse("1,2,3").is_err());
        assert!(FitnessWeights::parse("1,2,3,-1").is_err());
        assert!(FitnessWeights::parse("1,2,x,4").is_err());
        assert_eq!(
            FitnessWeights::for_goal("multi", false),
            Ok(FitnessWeights::multi())
        );
        assert!(FitnessWeights::for_goal("multi", true).is_err());
        assert_eq!(
            FitnessWeights::for_goal("runtime", true),
            Ok(FitnessWeights::ignore(Goal::Runtime))
        );
        assert_eq!(
            FitnessWeights::for_goal("coverage", false)
                .unwrap()
                .coverage,
            10.0
        );
        assert!(FitnessWeights::for_goal("speed", false).is_err());
    }
}
