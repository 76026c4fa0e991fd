//! Inputs aimed at a location of a stored model (`thicket generate --target`): the
//! feasible path constraints of the location's covering leaves, taken in turn by
//! precision ([`crate::aim_cycle`]), each input the best of a search
//! ([`crate::generate_targeted`]).

use crate::{Model, TargetStats};
use thicket_cover::KPathGraph;
use thicket_gen::Generator;
use thicket_tree::DerivationTree;

/// What aiming at a location made.
pub struct Aimed {
    /// The trees, one per input asked for.
    pub trees: Vec<DerivationTree>,
    /// How many satisfy their constraint, and the search's work.
    pub stats: TargetStats,
    /// The location's feasible path constraints.
    pub constraints: usize,
}

impl Model {
    /// `count` trees of `generator` aimed at `location` (its name, or the end of one),
    /// each the best of at most `tries` trees; every random choice comes from `seed`.
    /// An error if the location is unknown or has no feasible covering leaf.
    pub fn aim(
        &self,
        location: &str,
        generator: &Generator<'_>,
        count: usize,
        tries: u32,
        seed: u64,
    ) -> Result<Aimed, String> {
        let constraints = self.target_constraints(location)?;
        let graph = KPathGraph::new(generator.grammar());
        let cycle = crate::aim_cycle(constraints.clone());
        let (trees, stats) = crate::generate_targeted(
            generator,
            &graph,
            &self.features,
            &cycle,
            self.k,
            seed,
            count,
            tries,
        );
        Ok(Aimed {
            trees,
            stats,
            constraints: constraints.len(),
        })
    }
}
