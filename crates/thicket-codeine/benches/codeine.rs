//! CODEINE's two costly steps (issue 18): feature extraction (l-paths, l <= 3, in any
//! parse) over 10,000 generated JSON inputs, parsing included; and learning 1,000
//! trees on 1,000 inputs, in parallel over locations. The coverage matrix of the second
//! is synthetic (location j is covered where feature j % F is present, with 10 % of the
//! labels flipped), so that trees have something to find; the features are real.
//! Each runs on all cores and, as its baseline in the same process, on one thread.
//! Run with `cargo bench -p thicket-codeine`.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use std::path::PathBuf;
use thicket_codeine::{CoverageMatrix, FeatureTable, LearnConfig, Model};
use thicket_cover::KPathGraph;
use thicket_gen::{GenConfig, Generator, below};
use thicket_grammar::{LoadOptions, load_spec_file};
use thicket_parse::{ParseConfig, Parser};

fn main() {
    divan::main();
}

fn json() -> thicket_grammar::Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../specs/json.fan");
    load_spec_file(&path, &LoadOptions::default())
        .unwrap()
        .grammar
}

fn inputs(grammar: &thicket_grammar::Grammar, n: u64) -> Vec<Vec<u8>> {
    let generator = Generator::new(grammar, GenConfig::default()).unwrap();
    (0..n)
        .map(|i| {
            let mut out = Vec::new();
            generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
            out
        })
        .collect()
}

/// Runs `f` on a pool of `threads` threads (0: one per core).
fn on<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[divan::bench(sample_count = 3, sample_size = 1, args = [0, 1])]
fn features_10000_json_k3(bencher: Bencher, threads: usize) {
    let grammar = json();
    let texts = inputs(&grammar, 10_000);
    let slices: Vec<&[u8]> = texts.iter().map(|t| &t[..]).collect();
    let graph = KPathGraph::new(&grammar);
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    bencher.counter(ItemsCount::new(10_000u64)).bench_local(|| {
        black_box(on(threads, || {
            FeatureTable::extract(&parser, &graph, &slices, 3)
                .paths
                .len()
        }))
    });
}

#[divan::bench(sample_count = 3, sample_size = 1, args = [0, 1])]
fn learn_1000_trees_on_1000_inputs(bencher: Bencher, threads: usize) {
    let grammar = json();
    let texts = inputs(&grammar, 1000);
    let slices: Vec<&[u8]> = texts.iter().map(|t| &t[..]).collect();
    let graph = KPathGraph::new(&grammar);
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let table = FeatureTable::extract(&parser, &graph, &slices, 3);
    let features = table.paths.len() as u32;
    let mut rng = Generator::rng_for(2, 0);
    let mut matrix = CoverageMatrix {
        inputs: (0..1000).map(|i| i.to_string()).collect(),
        locations: (0..1000).map(|j| format!("function f{j}")).collect(),
        ..Default::default()
    };
    for row in &table.rows {
        let row = row.as_ref().unwrap();
        let covered: Vec<u32> = (0..1000u32)
            .filter(|j| row.binary_search(&(j % features)).is_ok() != (below(&mut rng, 10) == 0))
            .collect();
        matrix.covered.push(covered);
    }
    bencher.counter(ItemsCount::new(1000u64)).bench_local(|| {
        black_box(on(threads, || {
            Model::learn(
                &table,
                &matrix,
                "json.fan".into(),
                0,
                LearnConfig::default(),
            )
            .locations
            .len()
        }))
    });
}
