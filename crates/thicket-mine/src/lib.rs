//! # thicket-mine
//!
//! Constraint mining (ISLearn; Steinhöfel & Zeller, "Input Invariants", ESEC/FSE 2022,
//! §5): the ISLa constraints that sample inputs share, found by instantiating a
//! [`Catalog`] of patterns against a grammar and the samples' derivation trees,
//! evaluating every instance with the exact checker ([`thicket_constraint::Checker`]),
//! and combining the instances into disjunctions and conjunctions ranked by recall (the
//! share of positive samples that satisfy a constraint) and specificity (the share of
//! negative samples it rejects). With a program ([`program`]), samples are labelled by
//! whether it accepts them and results validated by running inputs solved for them.
//! [`report`] gives each result's figures in a line and the whole run as data.
//!
//! The steps ([`mine`]):
//! 1. **Learning set**: the positives that together cover the most k-paths, greedily,
//!    then topped up in input order to [`MineConfig::learning_set`] of them (for the
//!    variety of strings); instantiation reads only these.
//! 2. **Nonterminals**: each `<?NONTERMINAL>` becomes every nonterminal that occurs in
//!    the learning set; a quantified one `in` a variable must occur inside a subtree of
//!    that variable's type in some learning input (a conservative check: a candidate
//!    no learning input can satisfy non-vacuously is dropped).
//! 3. **Match expressions**: each `<?MATCHEXPR(a, ...)>` becomes the match expressions
//!    of the quantifier's type (its alternatives, child rules expanded one level, two
//!    alternatives that differ by an inserted run merged with `[...]`) binding the
//!    variables to nonterminal occurrences in order; an expression that matches no
//!    subtree of the learning set is dropped.
//! 4. **Strings and numbers** from the learning set's texts of the variable's type;
//!    a finished candidate that no learning input satisfies is dropped.
//! 5. **Evaluation** of every candidate on every positive and negative sample, then
//!    disjunctions (up to [`MineConfig::max_disjunction`] parts) that reach the recall
//!    threshold where no part does, conjunctions (up to
//!    [`MineConfig::max_conjunction`]) that raise specificity, ranked.
//!
//! Each step reports how many candidates it made and dropped ([`StepCount`]); a time
//! budget stops instantiation and evaluation early and says so.

#![warn(missing_docs)]

pub mod catalog;
mod instantiate;
pub mod program;
pub mod report;

pub use catalog::{Catalog, CatalogError, Kind, Pattern};

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::{Duration, Instant};
use thicket_constraint::{Checker, Constraint, Predicates, TreeView};
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// Limits and thresholds of mining.
#[derive(Clone, Debug)]
pub struct MineConfig {
    /// Least recall of a result (0..=1).
    pub min_recall: f64,
    /// Least specificity a result should have (0..=1); results below are still listed,
    /// flagged.
    pub min_specificity: f64,
    /// Most parts of a disjunction.
    pub max_disjunction: usize,
    /// Most parts of a conjunction.
    pub max_conjunction: usize,
    /// Most string constants per `<?STRING>` / `<?DSTRINGS>`.
    pub max_strings: usize,
    /// Most match expressions per `<?MATCHEXPR>` and type.
    pub max_match_exprs: usize,
    /// Most candidates per pattern and step: beyond, the step's output is cut (and says
    /// so).
    pub max_candidates: usize,
    /// Most positives the instantiation reads.
    pub learning_set: usize,
    /// The k of the k-path coverage the learning set maximises.
    pub k: usize,
    /// Most results returned.
    pub top: usize,
    /// Quantifier instances one check may visit (the checker's budget).
    pub check_budget: u64,
    /// Wall-clock budget for instantiation and evaluation.
    pub time: Option<Duration>,
}

impl Default for MineConfig {
    fn default() -> Self {
        MineConfig {
            min_recall: 0.9,
            min_specificity: 0.6,
            max_disjunction: 2,
            max_conjunction: 3,
            max_strings: 10,
            max_match_exprs: 40,
            max_candidates: 2_000,
            learning_set: 10,
            k: 3,
            top: 5,
            check_budget: 200_000,
            time: None,
        }
    }
}

/// What one instantiation step did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StepCount {
    /// The step: `nonterminals`, `match expressions`, `strings`, `resolve`, `evaluate`.
    pub step: String,
    /// Candidates the step made.
    pub made: usize,
    /// Candidates it dropped (pruned, ill-typed, duplicate).
    pub dropped: usize,
    /// Why some were dropped or the step was cut short, if it was.
    pub note: String,
}

/// A constraint and how it did on the samples.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    /// The constraint in ISLa syntax.
    pub text: String,
    /// The patterns it comes from.
    pub patterns: Vec<String>,
    /// Atomic candidates it combines.
    pub parts: usize,
    /// Positives it accepts.
    pub tp: usize,
    /// Positives it rejects.
    pub fn_: usize,
    /// Negatives it accepts.
    pub fp: usize,
    /// Negatives it rejects.
    pub tn: usize,
}

impl Scored {
    /// tp / (tp + fn) (1 without positives).
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    /// tn / (tn + fp) (1 without negatives).
    pub fn specificity(&self) -> f64 {
        ratio(self.tn, self.tn + self.fp)
    }
    /// tp / (tp + fp).
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    /// (tp + tn) / all.
    pub fn accuracy(&self) -> f64 {
        ratio(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn_)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// The outcome of mining.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Mined {
    /// Indices of the positives in the learning set.
    pub learning_set: Vec<usize>,
    /// What each step did.
    pub steps: Vec<StepCount>,
    /// Candidates evaluated on every sample.
    pub evaluated: usize,
    /// Seconds spent evaluating.
    pub evaluation_seconds: f64,
    /// Whether the time budget ran out (results come from what was done by then).
    pub timed_out: bool,
    /// The best constraints, best first.
    pub results: Vec<Scored>,
}

/// Runs the miner: `positives` and `negatives` are parsed samples of `grammar`;
/// `progress` hears a line per step.
pub fn mine(
    grammar: &Grammar,
    catalog: &Catalog,
    positives: &[DerivationTree],
    negatives: &[DerivationTree],
    config: &MineConfig,
    progress: &mut dyn FnMut(&str),
) -> Mined {
    let started = Instant::now();
    let deadline = config.time.map(|t| started + t);
    let mut mined = Mined {
        learning_set: learning_set(grammar, positives, config.learning_set, config.k),
        ..Mined::default()
    };
    progress(&format!(
        "learning set: {} of {} positives (greatest {}-path coverage)",
        mined.learning_set.len(),
        positives.len(),
        config.k
    ));
    let learning: Vec<&DerivationTree> =
        mined.learning_set.iter().map(|&i| &positives[i]).collect();
    let predicates = Predicates::standard();
    let mut inst =
        instantiate::Instantiator::new(grammar, &predicates, &learning, config, deadline);
    let candidates = inst.run(catalog, &mut mined.steps, progress);
    mined.timed_out |= inst.timed_out;

    // Evaluation: one view per sample, shared by every candidate.
    let eval_start = Instant::now();
    let pos_views: Vec<TreeView<'_>> = positives
        .iter()
        .map(|t| TreeView::new(t, grammar))
        .collect();
    let neg_views: Vec<TreeView<'_>> = negatives
        .iter()
        .map(|t| TreeView::new(t, grammar))
        .collect();
    let chunk = 64;
    let mut atoms: Vec<Atom> = Vec::with_capacity(candidates.len());
    for batch in candidates.chunks(chunk) {
        if deadline.is_some_and(|d| Instant::now() > d) {
            mined.timed_out = true;
            break;
        }
        let done: Vec<Atom> = batch
            .par_iter()
            .map(|(pattern, c)| {
                let checker = Checker::new(grammar, Vec::new()).with_budget(config.check_budget);
                let holds = |view: &TreeView<'_>| {
                    let mut e = checker.evaluator(view, c);
                    e.holds(&c.formula) && !e.exhausted()
                };
                Atom {
                    text: c.text().trim().to_string(),
                    patterns: vec![pattern.clone()],
                    parts: 1,
                    pos: Bits::from_fn(pos_views.len(), |i| holds(&pos_views[i])),
                    neg: Bits::from_fn(neg_views.len(), |i| holds(&neg_views[i])),
                }
            })
            .collect();
        atoms.extend(done);
    }
    mined.evaluated = atoms.len();
    mined.evaluation_seconds = eval_start.elapsed().as_secs_f64();
    progress(&format!(
        "evaluate: {} candidates on {} positives and {} negatives in {:.2} s ({:.0} candidates/s){}",
        atoms.len(),
        positives.len(),
        negatives.len(),
        mined.evaluation_seconds,
        atoms.len() as f64 / mined.evaluation_seconds.max(1e-9),
        if mined.timed_out {
            " (time budget reached)"
        } else {
            ""
        }
    ));
    mined.steps.push(StepCount {
        step: "evaluate".into(),
        made: atoms.len(),
        dropped: candidates.len() - atoms.len(),
        note: if mined.timed_out {
            "time budget reached".into()
        } else {
            String::new()
        },
    });
    mined.results = combine(
        atoms,
        positives.len(),
        negatives.len(),
        config,
        &mut mined.steps,
        progress,
    );
    mined
}

/// A set of samples, one bit each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>, usize);

impl Bits {
    fn from_fn(n: usize, mut f: impl FnMut(usize) -> bool) -> Bits {
        let mut words = vec![0u64; n.div_ceil(64)];
        for i in 0..n {
            if f(i) {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        Bits(words, n)
    }
    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    fn or(&self, o: &Bits) -> Bits {
        Bits(
            self.0.iter().zip(&o.0).map(|(a, b)| a | b).collect(),
            self.1,
        )
    }
    fn and(&self, o: &Bits) -> Bits {
        Bits(
            self.0.iter().zip(&o.0).map(|(a, b)| a & b).collect(),
            self.1,
        )
    }
}

/// An evaluated candidate or combination: the samples that satisfy it.
#[derive(Clone, Debug)]
struct Atom {
    text: String,
    patterns: Vec<String>,
    parts: usize,
    pos: Bits,
    neg: Bits,
}

impl Atom {
    fn recall(&self) -> f64 {
        ratio(self.pos.count(), self.pos.1)
    }
    fn specificity(&self) -> f64 {
        ratio(self.neg.1 - self.neg.count(), self.neg.1)
    }
    fn merged(&self, o: &Atom, conjunction: bool) -> Atom {
        let mut patterns = self.patterns.clone();
        for p in &o.patterns {
            if !patterns.contains(p) {
                patterns.push(p.clone());
            }
        }
        let (op, pos, neg) = if conjunction {
            ("and", self.pos.and(&o.pos), self.neg.and(&o.neg))
        } else {
            ("or", self.pos.or(&o.pos), self.neg.or(&o.neg))
        };
        Atom {
            text: format!("({}) {op}\n({})", self.text, o.text),
            patterns,
            parts: self.parts + o.parts,
            pos,
            neg,
        }
    }
    fn key(&self) -> (std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, usize, usize) {
        // Recall plus specificity, then specificity, then fewer parts, then shorter text.
        (
            std::cmp::Reverse(((self.recall() + self.specificity()) * 1e9) as u64),
            std::cmp::Reverse((self.specificity() * 1e9) as u64),
            self.parts,
            self.text.len(),
        )
    }
}

/// Disjunctions, conjunctions and ranking (§5, phase 3).
fn combine(
    atoms: Vec<Atom>,
    n_pos: usize,
    n_neg: usize,
    config: &MineConfig,
    steps: &mut Vec<StepCount>,
    progress: &mut dyn FnMut(&str),
) -> Vec<Scored> {
    // Candidates with the same verdict on every sample are one: keep the simplest.
    let mut by_bits: FxHashMap<(Bits, Bits), Atom> = FxHashMap::default();
    let evaluated = atoms.len();
    for a in atoms.into_iter().filter(|a| a.pos.count() > 0) {
        match by_bits.entry((a.pos.clone(), a.neg.clone())) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                if a.text.len() < e.get().text.len() {
                    e.insert(a);
                }
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(a);
            }
        }
    }
    let mut distinct: Vec<Atom> = by_bits.into_values().collect();
    distinct.sort_by(|a, b| a.key().cmp(&b.key()).then_with(|| a.text.cmp(&b.text)));
    progress(&format!(
        "combine: {} candidates accept some positive, {} distinct on the samples",
        evaluated,
        distinct.len()
    ));
    let reaches = |a: &Atom| a.recall() + 1e-12 >= config.min_recall;
    // Disjunctions of parts that fall short of the recall threshold, each part adding
    // positives; the parts tried are the most specific ones.
    let short: Vec<&Atom> = distinct
        .iter()
        .filter(|a| !reaches(a) && a.specificity() > 0.0)
        .take(150)
        .collect();
    let mut disjunctions: Vec<Atom> = Vec::new();
    let mut frontier: Vec<(Atom, usize)> = short
        .iter()
        .enumerate()
        .map(|(i, a)| ((*a).clone(), i))
        .collect();
    for _ in 1..config.max_disjunction {
        let mut next = Vec::new();
        for (d, last) in &frontier {
            for (j, a) in short.iter().enumerate().skip(last + 1) {
                let m = d.merged(a, false);
                let gain = m.pos.count() > d.pos.count() && m.pos.count() > a.pos.count();
                if !gain || m.specificity() <= 0.0 {
                    continue;
                }
                if reaches(&m) {
                    disjunctions.push(m);
                } else if next.len() < 5_000 {
                    next.push((m, j));
                }
            }
        }
        frontier = next;
    }
    let made_disjunctions = disjunctions.len();
    let mut pool: Vec<Atom> = distinct.into_iter().filter(reaches).collect();
    pool.extend(disjunctions);
    pool.sort_by(|a, b| a.key().cmp(&b.key()).then_with(|| a.text.cmp(&b.text)));
    pool.dedup_by(|a, b| a.pos == b.pos && a.neg == b.neg);
    // Conjunctions: from each of the most specific, add the part that rejects the most
    // further negatives while recall holds.
    let mut conjunctions = Vec::new();
    if n_neg > 0 {
        for seed in pool.iter().take(20) {
            let mut current = seed.clone();
            for _ in 1..config.max_conjunction {
                let best = pool
                    .iter()
                    .map(|p| current.merged(p, true))
                    .filter(|m| reaches(m) && m.neg.count() < current.neg.count())
                    .min_by(|a, b| a.key().cmp(&b.key()));
                match best {
                    Some(m) => {
                        current = m;
                        conjunctions.push(current.clone());
                    }
                    None => break,
                }
            }
        }
    }
    steps.push(StepCount {
        step: "combine".into(),
        made: made_disjunctions + conjunctions.len(),
        dropped: 0,
        note: format!(
            "{made_disjunctions} disjunctions reach recall {:.0}%, {} conjunctions raise specificity",
            config.min_recall * 100.0,
            conjunctions.len()
        ),
    });
    progress(&format!(
        "combine: {made_disjunctions} disjunctions, {} conjunctions",
        conjunctions.len()
    ));
    pool.extend(conjunctions);
    pool.sort_by(|a, b| a.key().cmp(&b.key()).then_with(|| a.text.cmp(&b.text)));
    pool.dedup_by(|a, b| a.pos == b.pos && a.neg == b.neg);
    pool.into_iter()
        .take(config.top)
        .map(|a| {
            let tp = a.pos.count();
            let fp = a.neg.count();
            Scored {
                text: a.text,
                patterns: a.patterns,
                parts: a.parts,
                tp,
                fn_: n_pos - tp,
                fp,
                tn: n_neg - fp,
            }
        })
        .collect()
}

/// The positives that together cover the most k-paths (greedy set cover), topped up in
/// input order to `max` of them, in the order chosen.
pub fn learning_set(
    grammar: &Grammar,
    trees: &[DerivationTree],
    max: usize,
    k: usize,
) -> Vec<usize> {
    let graph = thicket_cover::KPathGraph::new(grammar);
    let paths: Vec<rustc_hash::FxHashSet<Vec<u32>>> = trees
        .iter()
        .map(|t| {
            let mut set = rustc_hash::FxHashSet::default();
            thicket_cover::for_each_tree_path(&graph, t, k, |p| {
                set.insert(p.to_vec());
            });
            set
        })
        .collect();
    let mut covered: rustc_hash::FxHashSet<Vec<u32>> = Default::default();
    let mut chosen = Vec::new();
    while chosen.len() < max.min(trees.len()) {
        let best = (0..trees.len())
            .filter(|i| !chosen.contains(i))
            .map(|i| (paths[i].iter().filter(|p| !covered.contains(*p)).count(), i))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        match best {
            Some((gain, i)) if gain > 0 || chosen.is_empty() => {
                covered.extend(paths[i].iter().cloned());
                chosen.push(i);
            }
            _ => break,
        }
    }
    // Coverage saturates early on flat grammars (every ICMP packet has the same
    // k-paths); the rest of the set brings the variety of texts strings are drawn from.
    for i in 0..trees.len() {
        if chosen.len() >= max {
            break;
        }
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    chosen
}

/// Resolves a candidate's text (for callers that re-check a result).
pub fn compile(grammar: &Grammar, name: &str, text: &str) -> Result<Constraint, String> {
    thicket_constraint::from_text(grammar, &Predicates::standard(), name, text)
        .map_err(|e| e.render())
}
