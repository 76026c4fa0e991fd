//! Targeted generation (paper §5.3.3): inputs that satisfy a covering leaf's path
//! constraint, without running the program.
//!
//! Decision: instead of the paper's best-first search over partial trees (Algorithm 3),
//! each candidate is steered to a required path by thicket-cover's k-path steering (the
//! route from the root to the path's first node, then the path, everything else closed
//! off at random: what the paper's greedy inner search does for one path) and then
//! checked; a candidate that misses another required path or has a forbidden one is
//! drawn again, up to `tries` times, else the candidate with the fewest violated
//! conditions is kept (and counted). The paper reports that its search "often finishes
//! after one outer round"; the counts in [`TargetStats`] say how often ours does.

use crate::model::PathConstraint;
use rustc_hash::FxHashSet;
use thicket_cover::{KPathGraph, PathSteering, SteeredTo, for_each_tree_path};
use thicket_gen::{Fresh, Generator, Producer};
use thicket_tree::DerivationTree;

/// What targeted generation did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetStats {
    /// Inputs that satisfy their constraint.
    pub satisfied: usize,
    /// Inputs that do not (the best of `tries` candidates).
    pub unsatisfied: usize,
    /// Candidates built in all.
    pub candidates: usize,
}

/// How many conditions of `constraint` a tree violates.
pub fn violations(
    graph: &KPathGraph,
    features: &[Vec<u32>],
    constraint: &PathConstraint,
    tree: &DerivationTree,
    k: usize,
) -> usize {
    let mut paths: FxHashSet<Vec<u32>> = FxHashSet::default();
    for_each_tree_path(graph, tree, k, |p| {
        paths.insert(p.to_vec());
    });
    let missing = constraint
        .exists
        .iter()
        .filter(|&&f| !paths.contains(&features[f as usize]))
        .count();
    let forbidden = constraint
        .absent
        .iter()
        .filter(|&&f| paths.contains(&features[f as usize]))
        .count();
    missing + forbidden
}

/// `count` inputs for the constraints (taken in turn, the first the best supported:
/// input i serves constraint `i % constraints.len()`); every random choice comes from
/// `seed`. `k` is the model's path length, `features` its feature paths.
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
    let steering = PathSteering::new(generator.grammar(), graph);
    let mut stats = TargetStats::default();
    let mut out = Vec::with_capacity(count);
    if constraints.is_empty() {
        return (out, stats);
    }
    let tries = tries.clamp(1, 1 << 16);
    for i in 0..count {
        let constraint = &constraints[i % constraints.len()];
        // Steer to the longest required path (it holds its sub-paths); the others, if
        // any, in turn on later tries.
        let mut required: Vec<&Vec<u32>> = constraint
            .exists
            .iter()
            .map(|&f| &features[f as usize])
            .collect();
        required.sort_by_key(|p| std::cmp::Reverse(p.len()));
        let mut best: Option<(usize, DerivationTree)> = None;
        for t in 0..tries {
            let mut rng = Generator::rng_for(seed, ((i as u64) << 16) | u64::from(t));
            stats.candidates += 1;
            let fresh = match required.get(t as usize % required.len().max(1)) {
                Some(path) => SteeredTo {
                    steering: &steering,
                    generator,
                    graph,
                    path,
                }
                .tree(&mut rng),
                None => generator.tree(&mut rng),
            };
            let Ok(Fresh { tree, .. }) = fresh;
            let v = violations(graph, features, constraint, &tree, k);
            if best.as_ref().is_none_or(|(b, _)| v < *b) {
                best = Some((v, tree));
            }
            if v == 0 {
                break;
            }
        }
        let (v, tree) = best.expect("at least one try");
        if v == 0 {
            stats.satisfied += 1;
        } else {
            stats.unsatisfied += 1;
        }
        out.push(tree);
    }
    (out, stats)
}
