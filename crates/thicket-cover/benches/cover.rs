//! k-path coverage of 10,000 generated JSON inputs at k = 4: from their derivation trees,
//! and from their bytes (parsing included, as `thicket cover` does).
//! Run with `cargo bench -p thicket-cover`.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use std::path::PathBuf;
use thicket_cover::{Coverage, KPathGraph};
use thicket_gen::{GenConfig, Generator};
use thicket_grammar::{LoadOptions, load_spec_file};
use thicket_parse::{ParseConfig, Parser};

const INPUTS: u64 = 10_000;
const K: usize = 4;

fn main() {
    divan::main();
}

fn json() -> thicket_grammar::Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../specs/json.fan");
    load_spec_file(&path, &LoadOptions::default())
        .unwrap()
        .grammar
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn json_trees_k4(bencher: Bencher) {
    let grammar = json();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let trees: Vec<_> = (0..INPUTS)
        .map(|i| generator.generate_tree(&mut Generator::rng_for(1, i)).0)
        .collect();
    let graph = KPathGraph::new(&grammar);
    bencher.counter(ItemsCount::new(INPUTS)).bench_local(|| {
        let mut coverage = Coverage::new(K);
        for tree in &trees {
            coverage.add_tree(&graph, tree);
        }
        black_box(coverage.covered(K))
    });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn json_inputs_parsed_k4(bencher: Bencher) {
    let grammar = json();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let inputs: Vec<Vec<u8>> = (0..INPUTS)
        .map(|i| {
            let mut out = Vec::new();
            generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
            out
        })
        .collect();
    let graph = KPathGraph::new(&grammar);
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    bencher.counter(ItemsCount::new(INPUTS)).bench_local(|| {
        let mut coverage = Coverage::new(K);
        for input in &inputs {
            coverage.add_tree(&graph, &parser.parse(input).unwrap().tree());
        }
        black_box(coverage.covered(K))
    });
}
