//! Solves N inputs of a spec with its constraints and prints valid inputs per second,
//! mean size, distinct share, k-path coverage (k = 3) of the output set and the
//! solver's effort, against plain generation in the same process (coverage is counted
//! after the timing): `cargo run --release -p thicket-solve --example solve_stats -- specs/xml.bnf 2000`.
//!
//! Every solution is checked again with the exact checker after the timing.
//! Rates are per second of this thread's CPU time (one core, whatever else the
//! machine runs; on a shared machine the wall clock gives a fraction of that), with
//! the wall-clock rate after it.

use std::collections::HashSet;
use std::time::Instant;

/// CPU time this thread has used, in seconds.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    assert!(ok, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
use thicket_constraint::Predicates;
use thicket_solve::{SolveStats, Solver, SolverConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: solve_stats SPEC [N] [SEED] [DEPTH]");
    let n: u64 = args.get(2).map_or(1000, |s| s.parse().expect("N"));
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().expect("SEED"));
    let mut config = SolverConfig::default();
    if let Some(depth) = args.get(4) {
        config.generation.max_depth = depth.parse().expect("DEPTH");
    }
    let spec = thicket_grammar::load_spec_file(std::path::Path::new(path), &Default::default())
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    // Both dialects (ISLa's, and Fandango's where it is native: no Python here).
    let constraints = thicket_constraint::spec_constraints(&spec, &Predicates::standard(), None)
        .unwrap_or_else(|e| panic!("{path}: {}", e.render()))
        .into_iter()
        .map(|c| c.constraint)
        .collect();
    let solver =
        Solver::new(&spec.grammar, constraints, config).unwrap_or_else(|e| panic!("{path}: {e}"));

    let graph = thicket_cover::KPathGraph::new(&spec.grammar);
    let mut plain_trees = Vec::new();
    let (started, cpu) = (Instant::now(), cpu_seconds());
    let mut plain_bytes = 0usize;
    let mut plain_distinct = HashSet::new();
    for i in 0..n {
        let mut rng = Solver::rng_for(seed, i);
        let (tree, _) = solver.generator().generate_tree(&mut rng);
        plain_bytes += tree.bytes().len();
        plain_distinct.insert(tree.bytes().to_vec());
        plain_trees.push(tree);
    }
    let (plain_wall, plain_secs) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu);

    let (started, cpu) = (Instant::now(), cpu_seconds());
    let (mut bytes, mut failed) = (0usize, 0u64);
    let mut distinct = HashSet::new();
    let mut total = SolveStats::default();
    let mut trees = Vec::new();
    for i in 0..n {
        let mut rng = Solver::rng_for(seed, i);
        match solver.solve(&mut rng) {
            Ok((tree, stats)) => {
                bytes += tree.bytes().len();
                distinct.insert(tree.bytes().to_vec());
                total.attempts += stats.attempts;
                total.rounds += stats.rounds;
                total.edits += stats.edits;
                trees.push(tree);
            }
            Err(e) => {
                failed += 1;
                if failed <= 3 {
                    eprintln!("input {i}: {e}");
                }
            }
        }
    }
    let (wall, secs) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let ok = n - failed;
    // The solver returns only trees its checker passed; checked again here, untimed.
    assert!(trees.iter().all(|t| solver.violated(t).is_empty()));
    let k = 3;
    let coverage = |trees: &[thicket_tree::DerivationTree]| {
        let mut coverage = thicket_cover::Coverage::new(k);
        for tree in trees {
            coverage.add_tree(&graph, tree);
        }
        coverage.covered(k)
    };
    let (plain_paths, paths, all_paths) =
        (coverage(&plain_trees), coverage(&trees), graph.count(k));
    println!(
        "{path}: plain {:.0}/s (wall {:.0}/s) mean {:.0} B distinct {:.1}% {plain_paths}/{all_paths} 3-paths | solved {ok}/{n} in {secs:.2} s CPU = {:.0} valid/s (wall {:.0}/s), mean {:.0} B, distinct {:.1}%, {paths}/{all_paths} 3-paths, per input {:.2} attempts {:.2} rounds {:.2} edits",
        n as f64 / plain_secs,
        n as f64 / plain_wall,
        plain_bytes as f64 / n as f64,
        100.0 * plain_distinct.len() as f64 / n as f64,
        ok as f64 / secs,
        ok as f64 / wall,
        bytes as f64 / ok.max(1) as f64,
        100.0 * distinct.len() as f64 / ok.max(1) as f64,
        total.attempts as f64 / ok.max(1) as f64,
        total.rounds as f64 / ok.max(1) as f64,
        total.edits as f64 / ok.max(1) as f64,
    );
}
