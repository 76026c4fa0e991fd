//! k-path production of a loaded spec, as `thicket generate --strategy kpath` and
//! `kpath-random` and the Python module's `Spec.generate(strategy="kpath")` run it:
//! under constraints each steered tree is repaired into a valid one (or replaced by a
//! fresh solution, [`thicket_fandango::kpath_finish`]) before its paths count, so the
//! paths covered are those of the valid outputs. [`outcome`] says what a production
//! covered, what it could not, and whether it fell short.

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

impl Production {
    /// The most inputs the production makes for the `count` asked for (`-n`): a cap
    /// when covering (none if not given); the number made when streaming (10 if not
    /// given, as many as the time allows when `timed`).
    pub fn limit(self, count: Option<u64>, timed: bool) -> usize {
        match self {
            Production::Cover => count.map_or(usize::MAX, |n| n as usize),
            Production::Stream => {
                let count = crate::ended::count_or_default(count, timed);
                usize::try_from(count).unwrap_or(usize::MAX)
            }
        }
    }
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

/// What a k-path production tells its user: the paths covered, the warnings its
/// figures call for, and why it failed if it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `N inputs cover C of T k-paths, ...` (longest first), with why it stopped.
    pub summary: String,
    /// Steered inputs dropped, paths lost to repairs, paths beyond the depth limit.
    pub warnings: Vec<String>,
    /// Why the production failed: no input at all, or with [`Production::Stream`]
    /// fewer than the `count` asked for.
    pub failure: Option<String>,
}

/// The [`Outcome`] of `made`, a `production` of paths up to `k` over `graph` (of
/// `grammar`, whose generator's depth limit is `max_depth`); `valid`: the inputs
/// satisfy constraints; `count`: the count asked for, if any.
#[allow(clippy::too_many_arguments)]
pub fn outcome(
    made: &KPathProduction,
    production: Production,
    k: usize,
    valid: bool,
    count: Option<u64>,
    graph: &KPathGraph,
    grammar: &thicket_grammar::Grammar,
    max_depth: u32,
) -> Outcome {
    let valid_ = if valid { "valid " } else { "" };
    let covered: usize = made.covered.iter().sum();
    let unfinished = covered + made.unfit.len() + made.lost.len() < made.total.iter().sum();
    let note = match production {
        _ if made.timed_out => " (stopped at --time)",
        Production::Stream if !unfinished => " (then further rounds)",
        Production::Cover if unfinished => " (stopped at -n)",
        _ => "",
    };
    // Longest first: "cover 36 of 36 3-paths, 20 of 20 2-paths, 9 of 9 1-paths".
    let per_length: Vec<String> = (1..=k)
        .rev()
        .map(|l| format!("{} of {} {l}-paths", made.covered[l - 1], made.total[l - 1]))
        .collect();
    let summary = format!(
        "{} {valid_}inputs cover {}{note}",
        made.trees.len(),
        per_length.join(", "),
    );
    let mut warnings = Vec::new();
    if made.dropped > 0 {
        warnings.push(format!(
            "{} steered inputs could not be made valid within the budget",
            made.dropped
        ));
    }
    if !made.lost.is_empty() {
        warnings.push(format!(
            "{} paths of length {k} or less are in no valid input the repairs kept \
             (each steered to {} times), e.g. {}",
            made.lost.len(),
            thicket_cover::FINISH_TRIES,
            graph.display(grammar, &made.lost[0])
        ));
    }
    if !made.unfit.is_empty() {
        warnings.push(format!(
            "{} paths of length {k} or less cannot be covered within --max-depth {max_depth}, e.g. {}",
            made.unfit.len(),
            graph.display(grammar, &made.unfit[0])
        ));
    }
    // A count is asked of a stream, a cap of covering; no input at all is a failure
    // either way.
    let made_count = made.trees.len() as u64;
    let short_of_count = production == Production::Stream && count.is_some_and(|n| made_count < n);
    let failure = (made.trees.is_empty() || short_of_count).then(|| {
        format!(
            "{made_count} {valid_}input{} made{}",
            if made_count == 1 { "" } else { "s" },
            match count {
                Some(n) if short_of_count => format!(
                    " of the {n} asked for{}",
                    if made.timed_out {
                        " before --time ran out"
                    } else {
                        ""
                    }
                ),
                _ if made.timed_out => " before --time ran out".to_string(),
                _ => String::new(),
            }
        )
    });
    Outcome {
        summary,
        warnings,
        failure,
    }
}
