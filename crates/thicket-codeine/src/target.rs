//! Targeted generation (paper §5.3.3): inputs that satisfy a covering leaf's path
//! constraint, without running the program.
//!
//! Each input comes from a best-first search after the paper's Algorithm 3: a queue of
//! trees ordered by the number of the constraint's conditions they violate (fewest
//! first, then the oldest), seeded with trees steered to each required path
//! (thicket-cover's k-path steering: the route from the root to the path's first node,
//! then the path, everything else closed off at random: the paper's greedy inner
//! search). The best tree is taken from the queue and, for each condition it violates,
//! one slot of it is filled again: a missing path is grafted below a rule node from
//! which it can be reached (steered from that node), a forbidden path's rule node is
//! expanded afresh; the new trees join the queue. The search ends with the first tree
//! that satisfies every condition, or after `tries` trees with the best one seen.
//!
//! Decisions, where this departs from Algorithm 3: the paper's queue holds partial
//! trees and fills one open slot at a time, which makes its outer search complete (it
//! enumerates every tree, so it ends only with a solution); ours holds complete trees
//! and refills a slot related to a violated condition, bounded by `tries`, so an
//! infeasible constraint the feasibility check (§5.3.2) lets through costs `tries`
//! trees and not a timeout. The paper blocks a forbidden path at its last element
//! while completing; ours redraws the slot and lets the queue's order drop trees that
//! still hold it. The counts in [`TargetStats`] say how often the search ends without
//! a solution.
//!
//! The inputs are distinct texts as far as the leaves' language allows
//! ([`DRAWS_PER_INPUT`] searches per input asked for): a search that lands on a text
//! drawn before is run again with fresh choices, so a hit rate of aimed inputs is one
//! of the leaves' texts, not of how often the search favours one of them.

use crate::model::PathConstraint;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use thicket_cover::{KPath, KPathGraph, PathSteering, SteeredTo, for_each_tree_path};
use thicket_gen::{ChoicePolicy, Fresh, GenConfig, GenRng, Generator, Producer, below};
use thicket_grammar::Expr;
use thicket_parse::{ParseConfig, Parser};
use thicket_tree::{DerivationTree, NodeId};

/// What targeted generation did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetStats {
    /// Inputs returned that satisfy their constraint.
    pub satisfied: usize,
    /// Inputs returned that do not (the best of `tries` candidates).
    pub unsatisfied: usize,
    /// Candidate trees built in all.
    pub candidates: usize,
    /// Inputs whose search went past its first round (the steered trees it starts
    /// with): the paper reports its search "often finishes after one outer round".
    pub searched: usize,
    /// Searches run (an input each), those whose text was drawn before included.
    pub draws: usize,
    /// Distinct texts among the inputs returned.
    pub distinct: usize,
}

impl TargetStats {
    /// Counts the inputs that satisfy their constraint and those that do not.
    fn count_satisfied(&mut self, inputs: &[(DerivationTree, bool)]) {
        self.satisfied = inputs.iter().filter(|(_, ok)| *ok).count();
        self.unsatisfied = inputs.len() - self.satisfied;
    }
}

/// Which conditions of a constraint a tree violates: feature ids of required paths it
/// lacks and of forbidden paths it has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violated {
    /// Required paths missing.
    pub missing: Vec<u32>,
    /// Forbidden paths present.
    pub forbidden: Vec<u32>,
}

impl Violated {
    /// How many conditions are violated.
    pub fn count(&self) -> usize {
        self.missing.len() + self.forbidden.len()
    }
}

/// Which conditions of `constraint` a tree violates.
pub fn violated(
    graph: &KPathGraph,
    features: &[Vec<u32>],
    constraint: &PathConstraint,
    tree: &DerivationTree,
    k: usize,
) -> Violated {
    let mut paths: FxHashSet<KPath> = FxHashSet::default();
    for_each_tree_path(graph, tree, k, |p| {
        paths.insert(KPath::from(p));
    });
    violated_in(features, constraint, &paths)
}

/// Which conditions of `constraint` an input with these paths violates.
pub fn violated_in(
    features: &[Vec<u32>],
    constraint: &PathConstraint,
    paths: &FxHashSet<KPath>,
) -> Violated {
    Violated {
        missing: constraint
            .exists
            .iter()
            .copied()
            .filter(|&f| !paths.contains(&features[f as usize][..]))
            .collect(),
        forbidden: constraint
            .absent
            .iter()
            .copied()
            .filter(|&f| paths.contains(&features[f as usize][..]))
            .collect(),
    }
}

/// How many conditions of `constraint` a tree violates.
pub fn violations(
    graph: &KPathGraph,
    features: &[Vec<u32>],
    constraint: &PathConstraint,
    tree: &DerivationTree,
    k: usize,
) -> usize {
    violated(graph, features, constraint, tree, k).count()
}

/// Slots refilled per violated condition when a tree is expanded.
const REFILLS_PER_CONDITION: usize = 2;

/// The search for one constraint's inputs (see the module docs).
struct Search<'a, 'g> {
    generator: &'a Generator<'g>,
    graph: &'a KPathGraph,
    steering: &'a PathSteering<'g>,
    features: &'a [Vec<u32>],
    constraint: &'a PathConstraint,
    k: usize,
    /// Whether a required path (by feature id) can be grafted below an expression.
    reaches: FxHashMap<(u32, u32), bool>,
    /// Fills the slots a mutation opens in an exemplar.
    mutator: &'a Generator<'g>,
    /// The constraint's exemplars as parsed.
    exemplars: &'a ParsedExemplars,
    /// Reads each candidate's text back into the derivation the learner sees (see
    /// [`Search::queued`]); `None` if the grammar has no parser.
    parser: Option<&'a Parser<'g>>,
}

/// A constraint's exemplars (covering inputs that reach its leaf) as parsed, and their
/// texts; empty if it has none or none parses.
#[derive(Default)]
struct ParsedExemplars {
    trees: Vec<DerivationTree>,
    texts: FxHashSet<Vec<u8>>,
}

/// A repetition grown in an exemplar makes it at most this many times as long (plus
/// [`MUTANT_SLACK`] bytes).
const MUTANT_GROWTH: usize = 2;
/// See [`MUTANT_GROWTH`].
const MUTANT_SLACK: usize = 64;

/// A tree in the queue, ordered by violations, then age.
struct Queued {
    violations: usize,
    len: usize,
    seq: usize,
    tree: DerivationTree,
    violated: Violated,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Queued) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Queued) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Queued) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}
impl Queued {
    /// The paper's priority, the number of violated conditions; ties first come,
    /// first served.
    fn key(&self) -> (usize, usize) {
        (self.violations, self.seq)
    }
}

impl Search<'_, '_> {
    /// A candidate with its violations, as the learner reads its text
    /// ([`crate::features`]: every derivation if its forest is small, else the one the
    /// parser returns): under an ambiguous grammar a generated tree may be another
    /// derivation of its text, with paths the learner would not see in it (or without
    /// ones it would). The tree kept is the parser's, whose slots the search refills.
    fn queued(&self, tree: DerivationTree, seq: usize) -> Queued {
        let (tree, violated) = self.read(tree);
        Queued {
            violations: violated.count(),
            len: tree.bytes().len(),
            seq,
            tree,
            violated,
        }
    }

    /// The derivation the parser returns for `tree`'s text and the conditions its
    /// text violates as features read it (`tree` itself and its own paths if the
    /// parser rejects the text, which a tree of the grammar should not make it).
    fn read(&self, tree: DerivationTree) -> (DerivationTree, Violated) {
        if let Some(parsed) = self.parser.and_then(|p| p.parse(tree.bytes()).ok()) {
            let paths = crate::features::parse_paths(&parsed, self.graph, self.k);
            return (
                parsed.tree(),
                violated_in(self.features, self.constraint, &paths),
            );
        }
        let violated = violated(self.graph, self.features, self.constraint, &tree, self.k);
        (tree, violated)
    }

    /// The rule nodes of `tree` below the root.
    fn rule_nodes(&self, tree: &DerivationTree) -> Vec<NodeId> {
        let grammar = self.generator.grammar();
        tree.descendants(tree.root())
            .filter(|&n| n != tree.root() && matches!(grammar.expr(tree.expr(n)), Expr::Ref(_)))
            .collect()
    }

    /// Where a path occurs in `tree`: for each occurrence, the rule node whose
    /// expansion made its last element (the one the paper blocks), i.e. the node of
    /// the path's second-to-last element, or for a 1-path the nearest rule node at or
    /// above it (the root excepted).
    fn occurrences(&self, tree: &DerivationTree, path: &[u32]) -> Vec<NodeId> {
        let grammar = self.generator.grammar();
        let Some(&last) = path.last() else {
            return Vec::new();
        };
        let mut holes = Vec::new();
        // Symbolic ancestors (expression, node, end of subtree), as k-paths are read.
        let mut chain: Vec<(u32, NodeId, usize)> = Vec::new();
        for node in tree.descendants(tree.root()) {
            while chain.last().is_some_and(|&(_, _, end)| end <= node.index()) {
                chain.pop();
            }
            let expr = tree.expr(node);
            if !self.graph.is_node(expr) {
                continue;
            }
            chain.push((expr.index() as u32, node, tree.subtree_end(node)));
            if expr.index() as u32 != last || chain.len() < path.len() {
                continue;
            }
            let tail = &chain[chain.len() - path.len()..];
            if tail.iter().zip(path).all(|(c, &p)| c.0 == p) {
                let hole = chain[..chain.len() - usize::from(path.len() > 1)]
                    .iter()
                    .rev()
                    .map(|c| c.1)
                    .find(|&n| {
                        n != tree.root() && matches!(grammar.expr(tree.expr(n)), Expr::Ref(_))
                    });
                if let Some(hole) = hole.filter(|h| !holes.contains(h)) {
                    holes.push(hole);
                }
            }
        }
        holes
    }

    /// Up to `n` of `nodes` drawn without replacement.
    fn draw(nodes: &mut Vec<NodeId>, n: usize, rng: &mut GenRng) -> Vec<NodeId> {
        let mut out = Vec::new();
        while out.len() < n && !nodes.is_empty() {
            out.push(nodes.swap_remove(below(rng, nodes.len() as u32) as usize));
        }
        out
    }

    /// The trees one slot away from `tree` that may violate fewer conditions.
    fn successors(&mut self, item: &Queued, rng: &mut GenRng) -> Vec<DerivationTree> {
        let grammar = self.generator.grammar();
        let tree = &item.tree;
        let nodes = self.rule_nodes(tree);
        let mut out = Vec::new();
        for &f in &item.violated.missing {
            let path = &self.features[f as usize];
            let mut holes: Vec<NodeId> = nodes
                .iter()
                .copied()
                .filter(|&n| {
                    let expr = tree.expr(n);
                    *self
                        .reaches
                        .entry((expr.index() as u32, f))
                        .or_insert_with(|| self.steering.reaches(self.graph, expr, path))
                })
                .collect();
            for hole in Self::draw(&mut holes, REFILLS_PER_CONDITION, rng) {
                let expr = tree.expr(hole);
                let depth = tree.depth_above(grammar, hole);
                out.push(tree.replace_subtrees(grammar, &[hole], &mut |_, sink| {
                    self.steering
                        .subtree(self.generator, self.graph, expr, depth, path, rng, sink);
                }));
            }
        }
        for &f in &item.violated.forbidden {
            // Every occurrence at once: one left over keeps the condition violated.
            let holes = self.occurrences(tree, &self.features[f as usize]);
            if holes.is_empty() {
                continue;
            }
            for _ in 0..REFILLS_PER_CONDITION {
                out.push(tree.replace_subtrees(grammar, &holes, &mut |i, sink| {
                    let expr = tree.expr(holes[i]);
                    let depth = tree.depth_above(grammar, holes[i]);
                    self.generator.expand(expr, depth, rng, sink);
                }));
            }
        }
        out
    }

    /// A tree steered to `path` (a plain one for `None`).
    fn steered(&self, path: Option<&Vec<u32>>, rng: &mut GenRng) -> DerivationTree {
        let Ok(Fresh { tree, .. }) = match path {
            Some(path) => SteeredTo {
                steering: self.steering,
                generator: self.generator,
                graph: self.graph,
                path,
            }
            .tree(rng),
            None => self.generator.tree(rng),
        };
        tree
    }

    /// A mutant of an exemplar (one of thicket-mutate's tree mutations that stay in
    /// the grammar: a subtree regenerated, or spliced from another exemplar, or an item
    /// of a repetition repeated) that differs from every exemplar and violates no
    /// condition: the first of up to `tries`, `None` if none does.
    fn mutant(&self, rng: &mut GenRng, tries: u32, stats: &mut TargetStats) -> Option<Queued> {
        let exemplars = &self.exemplars.trees;
        if exemplars.is_empty() {
            return None;
        }
        for attempt in 0..tries.max(1) as usize {
            let parent = &exemplars[below(rng, exemplars.len() as u32) as usize];
            let budget = MUTANT_GROWTH * parent.bytes().len() + MUTANT_SLACK;
            // One mutation: a stack of them keeps too little of the exemplar.
            let grammar = self.mutator.grammar();
            let mutant = match below(rng, 4) {
                0 => thicket_mutate::splice(
                    self.mutator,
                    parent,
                    &exemplars[below(rng, exemplars.len() as u32) as usize],
                    rng,
                ),
                1 => thicket_mutate::repeat(grammar, parent, budget, rng),
                _ => None,
            };
            let Some(tree) =
                mutant.or_else(|| thicket_mutate::regenerate(self.mutator, parent, rng))
            else {
                continue;
            };
            stats.candidates += 1;
            if self.exemplars.texts.contains(tree.bytes()) {
                continue;
            }
            let q = self.queued(tree, attempt);
            if q.violations == 0 {
                return Some(q);
            }
        }
        None
    }

    /// The first tree found that violates nothing, else the best of `tries`.
    fn run(&mut self, rng: &mut GenRng, tries: u32, stats: &mut TargetStats) -> Queued {
        let mut required: Vec<&Vec<u32>> = self
            .constraint
            .exists
            .iter()
            .map(|&f| &self.features[f as usize])
            .collect();
        required.sort_by_key(|p| Reverse(p.len()));
        let tries = tries.max(1) as usize;
        let mut queue: BinaryHeap<Reverse<Queued>> = BinaryHeap::new();
        // The best tree built so far (a copy: the queue keeps its own).
        let mut best: Option<(usize, usize, DerivationTree, Violated)> = None;
        let mut built = 0usize;
        // First round: one tree steered to each required path (a plain one if none).
        let starts = required.len().max(1);
        let mut fresh: Vec<DerivationTree> = (0..starts.min(tries))
            .map(|i| self.steered(required.get(i).copied(), rng))
            .collect();
        let mut first_round = true;
        loop {
            for tree in fresh.drain(..) {
                built += 1;
                stats.candidates += 1;
                let q = self.queued(tree, built);
                if q.violations == 0 {
                    return q;
                }
                if best
                    .as_ref()
                    .is_none_or(|b| (q.violations, q.len) < (b.0, b.1))
                {
                    best = Some((q.violations, q.len, q.tree.clone(), q.violated.clone()));
                }
                queue.push(Reverse(q));
                if built >= tries {
                    break;
                }
            }
            if first_round {
                stats.searched += 1;
                first_round = false;
            }
            if built >= tries {
                break;
            }
            fresh = match queue.pop() {
                Some(Reverse(item)) => self.successors(&item, rng),
                None => Vec::new(),
            };
            if fresh.is_empty() {
                // Nothing to refill: a fresh steered tree keeps the search going.
                let path = required.get(built % starts).copied();
                fresh.push(self.steered(path, rng));
            }
        }
        let (violations, len, tree, violated) = best.expect("at least one tree was built");
        Queued {
            violated,
            violations,
            len,
            seq: built,
            tree,
        }
    }
}

/// Searches an input may take, per input asked for, to find texts not drawn before:
/// a leaf whose language is small repeats its inputs, and its searches stop there.
pub const DRAWS_PER_INPUT: usize = 4;

/// `count` inputs for the constraints (taken in turn, the first the most precise:
/// search i serves constraint `i % constraints.len()`), each the result of a best-first
/// search of at most `tries` trees (see the module docs); every random choice comes
/// from `seed`. `k` is the model's path length, `features` its feature paths.
///
/// The inputs are distinct texts where the constraints' language allows it: a text
/// drawn again is drawn anew, up to [`DRAWS_PER_INPUT`] searches per input asked for;
/// only when those find fewer than `count` texts are the rest repeats, of the texts
/// found in the order found ([`TargetStats::distinct`] says how many differ). A leaf
/// whose aimed inputs are a handful of texts would otherwise weigh each by how often
/// its search lands on it: one text missing the location, drawn 29 times in 100, is a
/// hit rate of the draw, not of the leaf.
#[allow(clippy::too_many_arguments)]
pub fn generate_targeted(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    features: &[Vec<u32>],
    constraints: &[PathConstraint],
    k: usize,
    seed: u64,
    count: usize,
    tries: u32,
) -> (Vec<DerivationTree>, TargetStats) {
    let (mut aimed, mut stats) = aimed_inputs(
        generator,
        graph,
        features,
        constraints,
        k,
        seed,
        Draws {
            count,
            max_draws: count.saturating_mul(DRAWS_PER_INPUT),
        },
        tries,
    );
    // The language is smaller than asked for: its texts again, in turn.
    for i in 0..count.saturating_sub(aimed.len()) {
        if stats.distinct == 0 {
            break;
        }
        aimed.push(aimed[i % stats.distinct].clone());
    }
    stats.count_satisfied(&aimed);
    (aimed.into_iter().map(|(tree, _)| tree).collect(), stats)
}

/// How many inputs [`aimed_inputs`] draws.
pub(crate) struct Draws {
    /// Inputs wanted, distinct texts.
    pub count: usize,
    /// Searches it may run to find them (each a search of up to `tries` trees).
    pub max_draws: usize,
}

/// Up to `draws.count` inputs as [`generate_targeted`] searches them, distinct texts,
/// from at most `draws.max_draws` searches (fewer inputs when those find no more), each
/// with whether it satisfies its constraint (as the search found, so that a caller
/// need not read its paths again).
#[allow(clippy::too_many_arguments)]
pub(crate) fn aimed_inputs(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    features: &[Vec<u32>],
    constraints: &[PathConstraint],
    k: usize,
    seed: u64,
    draws: Draws,
    tries: u32,
) -> (Vec<(DerivationTree, bool)>, TargetStats) {
    let steering = PathSteering::new(generator.grammar(), graph);
    let mut stats = TargetStats::default();
    let mut out = Vec::with_capacity(draws.count);
    if constraints.is_empty() {
        return (out, stats);
    }
    let tries = tries.clamp(1, 1 << 16);
    let parser = Parser::new(generator.grammar(), ParseConfig::default()).ok();
    let has_exemplars = constraints.iter().any(|c| !c.exemplars.is_empty());
    // Mutants' new subtrees are closed off with the paper's uniform choices (small
    // ones), whatever the generator's policy: a mutant should keep most of its exemplar.
    let uniform = (has_exemplars && generator.config().policy != ChoicePolicy::Uniform)
        .then(|| {
            let config = GenConfig {
                policy: ChoicePolicy::Uniform,
                ..generator.config()
            };
            Generator::new(generator.grammar(), config).ok()
        })
        .flatten();
    let mutator = uniform.as_ref().unwrap_or(generator);
    // The cycle repeats constraints: each distinct one's exemplars are parsed once,
    // and its searches share them.
    let mut parsed: FxHashMap<&[String], ParsedExemplars> = FxHashMap::default();
    if let Some(parser) = parser.as_ref().filter(|_| has_exemplars) {
        for constraint in constraints {
            parsed.entry(&constraint.exemplars).or_insert_with(|| {
                let trees: Vec<DerivationTree> = constraint
                    .exemplars
                    .iter()
                    .filter_map(|text| Some(parser.parse(text.as_bytes()).ok()?.tree()))
                    .collect();
                let texts = trees.iter().map(|t| t.bytes().to_vec()).collect();
                ParsedExemplars { trees, texts }
            });
        }
    }
    let none = ParsedExemplars::default();
    let mut searches: Vec<Search<'_, '_>> = constraints
        .iter()
        .map(|constraint| Search {
            generator,
            graph,
            steering: &steering,
            features,
            constraint,
            k,
            reaches: FxHashMap::default(),
            mutator,
            exemplars: parsed.get(&constraint.exemplars[..]).unwrap_or(&none),
            parser: parser.as_ref(),
        })
        .collect();
    let mut drawn: FxHashSet<Vec<u8>> = FxHashSet::default();
    for i in 0..draws.max_draws {
        if out.len() >= draws.count {
            break;
        }
        let n = searches.len();
        let search = &mut searches[i % n];
        let mut rng = Generator::rng_for(seed, i as u64);
        stats.draws += 1;
        let found = match search.mutant(&mut rng, tries, &mut stats) {
            Some(found) => found,
            None => search.run(&mut rng, tries, &mut stats),
        };
        let text = found.tree.bytes();
        if !drawn.insert(text.to_vec()) {
            continue;
        }
        out.push((found.tree, found.violations == 0));
    }
    stats.distinct = out.len();
    stats.count_satisfied(&out);
    (out, stats)
}

/// Turns of the most precise constraint in a cycle of [`aim_cycle`].
const TURNS: usize = 10;

/// The constraints repeated in proportion to the square of their leaf's smoothed
/// precision on the training inputs, relative to the best one's (in tenths, rounded:
/// a leaf under 0.22 of the best's precision drops out), in a cycle that
/// [`generate_targeted`] goes through in turn: inputs go where they hit. After
/// refinement the training inputs include the aimed inputs of earlier rounds, so a
/// leaf's precision is what aiming at it achieved.
pub fn aim_cycle(constraints: Vec<PathConstraint>) -> Vec<PathConstraint> {
    let best = constraints
        .iter()
        .map(PathConstraint::smoothed_precision)
        .fold(0.0, f64::max);
    if best <= 0.0 {
        return constraints;
    }
    let turns: Vec<usize> = constraints
        .iter()
        .map(|c| {
            let w = c.smoothed_precision() / best;
            (w * w * TURNS as f64).round() as usize
        })
        .collect();
    let mut cycle = Vec::new();
    for turn in 0..TURNS {
        for (c, &t) in constraints.iter().zip(&turns) {
            if t > turn {
                cycle.push(c.clone());
            }
        }
    }
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_cover::KPath;
    use thicket_grammar::ExprId;

    /// Whether `expr` is a rule reference.
    fn is_rule(generator: &Generator<'_>, expr: ExprId) -> bool {
        matches!(generator.grammar().expr(expr), Expr::Ref(_))
    }

    /// A grammar where required paths sit in different places of the tree and a
    /// forbidden one is common: a tree steered to one required path, drawn again a few
    /// times, rarely satisfies all.
    const SPEC: &[u8] = b"<start> ::= <node>\n\
        <node> ::= <leaf> | \"(\" <node> \" \" <node> \")\"\n\
        <leaf> ::= \"a\" | \"b\" | \"c\" | \"d\" | \"e\"";

    /// Trees built per input: few, so that drawing steered trees again does not do.
    const TRIES: u32 = 30;

    #[test]
    fn aimed_inputs_are_checked_on_their_text_as_features_read_it() {
        // `"a"` derives through `<x>` or through `<y>`, and its forest is small: the
        // learner sees both in every `a`, so either can be required, and a tree through
        // one alone does not escape a condition that forbids the other.
        let grammar = thicket_grammar::load_spec_text(
            "t.fan",
            b"<start> ::= <x> | <y>\n<x> ::= \"a\"\n<y> ::= \"a\"",
        )
        .unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let naming = |rule: &str| -> Vec<u32> {
            let every = parser
                .parse(b"a")
                .unwrap()
                .paths_in_any_parse(|x| graph.is_node(ExprId::from_index(x as usize)), 2);
            let mut named: Vec<&KPath> = every
                .iter()
                .filter(|p| {
                    p.iter()
                        .any(|&x| grammar.display_expr(ExprId::from_index(x as usize)) == rule)
                })
                .collect();
            named.sort();
            named[0].to_vec()
        };
        let features = vec![naming("<x>"), naming("<y>")];
        let seen = crate::input_paths(&parser, &graph, b"a", 2).unwrap();
        assert!(features.iter().all(|f| seen.contains(&f[..])));
        let aim = |exists: Vec<u32>, absent: Vec<u32>| {
            let constraint = PathConstraint::of_one_input(exists, absent);
            let (_, stats) = generate_targeted(
                &generator,
                &graph,
                &features,
                std::slice::from_ref(&constraint),
                2,
                3,
                10,
                TRIES,
            );
            stats
        };
        assert_eq!(aim(vec![0], Vec::new()).satisfied, 10);
        assert_eq!(aim(vec![1], Vec::new()).satisfied, 10);
        // A tree through `<x>` has no `<y>` path of its own; its text has.
        assert_eq!(aim(vec![0], vec![1]).satisfied, 0);
    }

    #[test]
    fn the_search_satisfies_several_required_and_forbidden_paths() {
        let grammar = thicket_grammar::load_spec_text("t.fan", SPEC).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let features = leaf_features(&generator, &graph);
        let text_of = |f: &Vec<u32>| {
            grammar
                .display_expr(ExprId::from_index(f[1] as usize))
                .trim_matches('"')
                .to_string()
        };
        let id = |t: &str| features.iter().position(|f| text_of(f) == t).unwrap() as u32;
        // "a", "b" and "e" present, "c" absent.
        let constraint =
            PathConstraint::of_one_input(vec![id("a"), id("b"), id("e")], vec![id("c")]);
        let (trees, stats) = generate_targeted(
            &generator,
            &graph,
            &features,
            std::slice::from_ref(&constraint),
            2,
            7,
            20,
            TRIES,
        );
        assert_eq!(stats.satisfied, 20, "{stats:?}");
        for tree in &trees {
            let text = String::from_utf8_lossy(tree.bytes()).to_string();
            assert!(
                text.contains('a') && text.contains('b') && text.contains('e'),
                "{text}"
            );
            assert!(!text.contains('c'), "{text}");
        }
        // The same seed gives the same inputs.
        let (again, _) = generate_targeted(
            &generator,
            &graph,
            &features,
            &[constraint],
            2,
            7,
            20,
            TRIES,
        );
        assert_eq!(
            trees.iter().map(|t| t.bytes().to_vec()).collect::<Vec<_>>(),
            again.iter().map(|t| t.bytes().to_vec()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn aimed_inputs_are_distinct_texts_where_the_language_has_enough() {
        let texts = |spec: &[u8], count: usize| {
            let grammar = thicket_grammar::load_spec_text("t.fan", spec).unwrap();
            let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
            let graph = KPathGraph::new(&grammar);
            let anything = PathConstraint::of_one_input(Vec::new(), Vec::new());
            let (trees, stats) =
                generate_targeted(&generator, &graph, &[], &[anything], 2, 9, count, TRIES);
            let texts: Vec<Vec<u8>> = trees.iter().map(|t| t.bytes().to_vec()).collect();
            (texts, stats)
        };
        // A hundred texts: forty drawn at random repeat some; asked for, none repeats.
        let digits = b"<start> ::= <d> <d>\n\
            <d> ::= \"0\" | \"1\" | \"2\" | \"3\" | \"4\" | \"5\" | \"6\" | \"7\" | \"8\" | \"9\"";
        let (many, stats) = texts(digits, 40);
        let distinct: FxHashSet<&Vec<u8>> = many.iter().collect();
        assert_eq!((many.len(), distinct.len()), (40, 40), "{stats:?}");
        assert_eq!(stats.distinct, 40);
        assert!(stats.draws >= 40, "{stats:?}");
        // Three texts: all three, then again in the order found.
        let (few, stats) = texts(b"<start> ::= \"a\" | \"b\" | \"c\"", 10);
        assert_eq!(few.len(), 10);
        assert_eq!(stats.distinct, 3, "{stats:?}");
        assert_eq!(stats.satisfied, 10);
        assert_eq!(stats.draws, 10 * DRAWS_PER_INPUT);
        assert_eq!(few[3..6], few[..3]);
        let mut first: Vec<&[u8]> = few[..3].iter().map(Vec::as_slice).collect();
        first.sort();
        assert_eq!(first, [&b"a"[..], &b"b"[..], &b"c"[..]]);
    }

    /// Whether a text holds a pair of equal leaves, `(x x)`: a condition on two places
    /// of the input at once, which the presence of paths cannot express.
    fn has_equal_pair(text: &str) -> bool {
        let b = text.as_bytes();
        b.windows(5)
            .any(|w| w[0] == b'(' && w[2] == b' ' && w[4] == b')' && w[1] == w[3] && w[1] != b'(')
    }

    /// Features of [`SPEC`]: every 2-path ending in a terminal.
    fn leaf_features(generator: &Generator<'_>, graph: &KPathGraph) -> Vec<Vec<u32>> {
        let grammar = generator.grammar();
        let mut features: Vec<Vec<u32>> = Vec::new();
        for id in grammar.expr_ids() {
            let x = id.index() as u32;
            if graph.is_node(id) && is_rule(generator, id) {
                for &s in graph.successors(x) {
                    if !is_rule(generator, ExprId::from_index(s as usize)) {
                        features.push(vec![x, s]);
                    }
                }
            }
        }
        features
    }

    #[test]
    fn aimed_inputs_mutated_from_exemplars_keep_what_the_paths_cannot_say() {
        let grammar = thicket_grammar::load_spec_text("t.fan", SPEC).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let features = leaf_features(&generator, &graph);
        // Required: an "a" somewhere.
        let a = features
            .iter()
            .position(|f| grammar.display_expr(ExprId::from_index(f[1] as usize)) == "\"a\"")
            .unwrap() as u32;
        let exemplars: Vec<String> = [
            "((a a) ((b c) (d e)))",
            "(((c d) (b e)) (a a))",
            "((b (c c)) (a (d e)))",
            "((d e) ((a a) (c b)))",
        ]
        .map(String::from)
        .to_vec();
        let constraint = |exemplars: Vec<String>| PathConstraint {
            exists: vec![a],
            absent: vec![],
            support: 4,
            correct: 4,
            inputs_covered: 4,
            inputs_not_covered: 0,
            exemplars,
        };
        let share = |c: PathConstraint| {
            let (trees, stats) =
                generate_targeted(&generator, &graph, &features, &[c], 2, 3, 100, TRIES);
            assert_eq!(stats.satisfied, 100, "{stats:?}");
            let texts: Vec<String> = trees
                .iter()
                .map(|t| String::from_utf8_lossy(t.bytes()).into_owned())
                .collect();
            (texts.iter().filter(|t| has_equal_pair(t)).count(), texts)
        };
        let (with, texts) = share(constraint(exemplars.clone()));
        assert!(with >= 50, "{with} of 100 kept an equal pair: {texts:?}");
        assert!(
            texts.iter().all(|t| !exemplars.contains(t)),
            "mutants differ from the exemplars"
        );
        let (without, _) = share(constraint(Vec::new()));
        eprintln!("searched inputs: {without}, mutants: {with}");
        assert!(
            2 * without < with,
            "searched inputs: {without}, mutants: {with}"
        );
    }
}
