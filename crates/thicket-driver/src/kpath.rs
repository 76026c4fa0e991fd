//! k-path production of a loaded spec, as `thicket generate --strategy kpath` and
//! `kpath-random` and the Python module's `Spec.generate(strategy="kpath")` run it:
//! under constraints each steered tree is repaired into a valid one (or replaced by a
//! fresh solution, [`thicket_fandango::kpath_finish`]) before its paths count, so the
//! paths covered are those of the valid outputs.

use thicket_cover::{KPathGraph, KPathProduction, Stop};
use thicket_fandango::LoadedSpec;
use thicket_gen::Generator;
use thicket_solve::Solver;
use thicket_tree::DerivationTree;

/// Which k-path production.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Production {
    /// Until every k-path that fits is covered (Algorithm 1; the limit a cap).
    Cover,
    /// As many inputs as the limit, each steered to a path not covered yet, round
    /// after round.
    Stream,
}

/// The trees of a k-path production of `loaded` for paths up to `k` (`graph` is
/// `loaded`'s), at most `limit`, with `solver` repairing each when the spec has
/// constraints; `stop` is asked before each input.
#[allow(clippy::too_many_arguments)]
pub fn produce(
    loaded: &LoadedSpec,
    generator: &Generator<'_>,
    solver: Option<&Solver<'_>>,
    graph: &KPathGraph,
    production: Production,
    k: usize,
    seed: u64,
    limit: usize,
    stop: Stop<'_>,
) -> KPathProduction {
    let finish = &mut |tree: DerivationTree, n: u64| {
        thicket_fandango::kpath_finish(loaded, solver, seed, tree, n)
    };
    match production {
        Production::Cover => {
            thicket_cover::cover_k_paths_until(generator, graph, k, seed, limit, stop, finish)
        }
        Production::Stream => {
            thicket_cover::k_path_stream_until(generator, graph, k, seed, limit, stop, finish)
        }
    }
}

/// The inputs `trees` stand for (their text, or their bit fields packed into bytes),
/// each with its tree; a tree whose bits fill no whole byte stands for none and is
/// left out, the first such reason returned beside them.
pub fn inputs_of<'t>(
    loaded: &LoadedSpec,
    trees: &'t [DerivationTree],
) -> (Vec<(&'t DerivationTree, Vec<u8>)>, Option<String>) {
    let mut loose = None;
    let inputs = trees
        .iter()
        .filter_map(|tree| match loaded.input_bytes(tree) {
            Ok(input) => Some((tree, input.into_owned())),
            Err(why) => {
                loose.get_or_insert_with(|| why.to_string());
                None
            }
        })
        .collect();
    (inputs, loose)
}
