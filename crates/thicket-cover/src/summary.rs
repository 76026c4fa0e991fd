//! The figures of a run of generated inputs (`thicket generate --stats`): throughput,
//! mean size, the share of distinct inputs and the k-paths the inputs cover.

use crate::{Coverage, KPathGraph};
use rustc_hash::FxHashSet;
use std::time::{Duration, Instant};
use thicket_gen::GenStats;
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// The path length a detailed [`GenSummary`] reports the coverage of.
pub const SUMMARY_K: usize = 3;

/// Throughput and diversity of generated inputs, counted as they are written.
#[derive(Default)]
pub struct GenSummary {
    /// Whether to count distinct inputs and k-paths (the set of hashes grows with every
    /// input, so only when the figures are asked for).
    detailed: bool,
    /// Random streams used (more than `inputs` when some streams were skipped).
    draws: u64,
    inputs: u64,
    bytes: u64,
    distinct: FxHashSet<u64>,
    budget_exhausted: u64,
    /// The k-paths (k up to [`SUMMARY_K`]) the inputs cover, and how many inputs were
    /// counted (all but those without a tree).
    paths: Option<(KPathGraph, Coverage, u64)>,
    /// Time spent counting paths, left out of the throughput.
    counting: Duration,
}

impl GenSummary {
    /// A summary of inputs of `grammar`; `detailed` also counts distinct inputs and
    /// k-paths.
    pub fn new(grammar: &Grammar, detailed: bool) -> GenSummary {
        GenSummary {
            detailed,
            paths: detailed.then(|| (KPathGraph::new(grammar), Coverage::new(SUMMARY_K), 0)),
            ..GenSummary::default()
        }
    }

    /// Whether the summary counts k-paths (then a driver keeps trees it makes anyway).
    pub fn counts_paths(&self) -> bool {
        self.paths.is_some()
    }

    /// Counts an input of `len` bytes whose 64-bit hash is `hash` (any hash that is the
    /// same for equal inputs), made with the generator's figures `stats`.
    pub fn add(&mut self, len: usize, hash: u64, stats: &GenStats) {
        self.inputs += 1;
        self.bytes += len as u64;
        self.budget_exhausted += u64::from(stats.budget_exhausted);
        if self.detailed {
            self.distinct.insert(hash);
        }
    }

    /// Counts the k-paths of an input's tree (`tree`, or what `make` builds, if
    /// anything) when the summary is detailed; the time it takes is not the inputs'.
    pub fn add_paths(
        &mut self,
        tree: Option<&DerivationTree>,
        make: impl FnOnce() -> Option<DerivationTree>,
    ) {
        let Some((graph, coverage, counted)) = &mut self.paths else {
            return;
        };
        let started = Instant::now();
        match tree {
            Some(tree) => coverage.add_tree(graph, tree),
            None => match make() {
                Some(tree) => coverage.add_tree(graph, &tree),
                None => return,
            },
        };
        *counted += 1;
        self.counting += started.elapsed();
    }

    /// Records how many random streams the inputs took.
    pub fn set_draws(&mut self, draws: u64) {
        self.draws = draws;
    }

    /// Inputs counted.
    pub fn inputs(&self) -> u64 {
        self.inputs
    }

    /// Inputs that reached the generator's node or size budget and were closed off.
    pub fn budget_exhausted(&self) -> u64 {
        self.budget_exhausted
    }

    /// The figures as one line, for inputs made in `elapsed` (path counting excluded):
    /// `N inputs in S s: R inputs/s, M MB/s; mean size B bytes; P% distinct; C of T
    /// 3-paths covered`.
    pub fn line(&self, elapsed: Duration) -> String {
        let seconds = (elapsed.as_secs_f64() - self.counting.as_secs_f64()).max(1e-9);
        let draws = if self.draws > self.inputs {
            format!(" ({} draws)", self.draws)
        } else {
            String::new()
        };
        let paths = match &self.paths {
            Some((graph, coverage, counted)) if *counted > 0 => {
                let partly = if *counted < self.inputs {
                    format!(" (of the {counted} inputs with a tree)")
                } else {
                    String::new()
                };
                format!(
                    "; {} of {} {SUMMARY_K}-paths covered{partly}",
                    coverage.covered(SUMMARY_K),
                    graph.count(SUMMARY_K)
                )
            }
            _ => String::new(),
        };
        format!(
            "{} inputs{draws} in {:.3} s: {:.0} inputs/s, {:.2} MB/s; mean size {:.1} bytes; {:.1}% distinct{paths}",
            self.inputs,
            seconds,
            self.inputs as f64 / seconds,
            self.bytes as f64 / seconds / 1e6,
            self.bytes as f64 / self.inputs.max(1) as f64,
            100.0 * self.distinct.len() as f64 / self.inputs.max(1) as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::{GenConfig, Generator};
    use thicket_grammar::load_spec_text;

    #[test]
    fn counts_distinct_inputs_sizes_and_paths_of_the_trees_given() {
        let grammar = load_spec_text("t.bnf", b"<start> ::= \"a\" | \"b\" <start>\n").unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let mut summary = GenSummary::new(&grammar, true);
        assert!(summary.counts_paths());
        for (i, (input, hash)) in [(&b"a"[..], 1), (b"ba", 2), (b"a", 1)]
            .into_iter()
            .enumerate()
        {
            summary.add(input.len(), hash, &GenStats::default());
            // The second input's tree is made on demand.
            let tree = generator
                .generate_tree(&mut Generator::rng_for(1, i as u64))
                .0;
            if i == 1 {
                summary.add_paths(None, || Some(tree));
            } else {
                summary.add_paths(Some(&tree), || None);
            }
        }
        summary.set_draws(5);
        let line = summary.line(Duration::from_secs(1));
        assert!(line.starts_with("3 inputs (5 draws) in "), "{line}");
        assert!(
            line.contains("mean size 1.3 bytes; 66.7% distinct; "),
            "{line}"
        );
        assert!(line.ends_with("3-paths covered"), "{line}");
        // A plain summary counts no distinct inputs nor paths.
        let mut plain = GenSummary::new(&grammar, false);
        plain.add(1, 1, &GenStats::default());
        plain.add_paths(None, || panic!("no tree is made"));
        assert!(plain.line(Duration::from_secs(1)).contains("0.0% distinct"));
    }
}
