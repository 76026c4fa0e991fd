//! Mining speed: `cargo run --release -p thicket-mine --example mine_bench -- specs/xml.bnf [N]`.
//!
//! Makes N inputs (default 100) that satisfy the spec's own constraints (the solver) and
//! N generated without them that violate them, mines on one thread, and prints the
//! candidates evaluated per second and the whole run's time. Baseline in the same
//! process: the spec's own constraints checked on the same samples, as checks per
//! second, so that the per-check cost of mined candidates reads as a ratio.

use std::time::Instant;
use thicket_constraint::{Checker, Predicates};
use thicket_gen::{GenConfig, Generator};
use thicket_mine::{Catalog, MineConfig, mine};
use thicket_solve::{Solver, SolverConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map_or("specs/xml.bnf", String::as_str);
    let n: usize = args
        .get(2)
        .map_or(100, |s| s.parse().expect("N is a number"));
    let spec = thicket_grammar::load_spec_file(std::path::Path::new(path), &Default::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let grammar = &spec.grammar;
    let own = thicket_constraint::from_spec(&spec, &Predicates::standard())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let checker = Checker::new(grammar, own.clone());
    let solver = Solver::new(grammar, own, SolverConfig::default()).expect("solvable");
    let positives: Vec<_> = solver
        .solutions(1)
        .take(n)
        .map(|t| t.expect("solved"))
        .collect();
    let generator = Generator::new(grammar, GenConfig::default()).unwrap();
    let negatives: Vec<_> = (0u64..)
        .map(|i| generator.generate_tree(&mut Generator::rng_for(2, i)).0)
        .filter(|t| !checker.check(t).is_empty())
        .take(n)
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();

    let start = Instant::now();
    let mut checks = 0u64;
    while start.elapsed().as_secs_f64() < 1.0 {
        for t in positives.iter().chain(&negatives) {
            std::hint::black_box(checker.check(t));
            checks += 1;
        }
    }
    let baseline = checks as f64 / start.elapsed().as_secs_f64();

    let start = Instant::now();
    let mined = pool.install(|| {
        mine(
            grammar,
            &Catalog::bundled(),
            &positives,
            &negatives,
            &MineConfig::default(),
            &mut |l| eprintln!("{l}"),
        )
    });
    let total = start.elapsed().as_secs_f64();
    let rate = mined.evaluated as f64 / mined.evaluation_seconds.max(1e-9);
    let per_check = rate * (positives.len() + negatives.len()) as f64;
    println!(
        "spec: {path}, {} positives, {} negatives",
        positives.len(),
        negatives.len()
    );
    println!(
        "mining on one thread: {total:.1} s in all, {} candidates evaluated in {:.1} s: {rate:.0} candidates/s",
        mined.evaluated, mined.evaluation_seconds
    );
    println!(
        "candidate checks: {per_check:.0}/s; baseline (the spec's own constraints, same samples): {baseline:.0} checks/s; ratio {:.2}",
        per_check / baseline
    );
    if let Some(best) = mined.results.first() {
        println!(
            "best: recall {:.2} specificity {:.2}\n{}",
            best.recall(),
            best.specificity(),
            best.text
        );
    }
}
