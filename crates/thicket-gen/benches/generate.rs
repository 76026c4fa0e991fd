//! Generation throughput on the bundled `json` and `expr` specs at depths 10 and 30.
//!
//! Run with `cargo bench -p thicket-gen`. Each benchmark generates a fixed batch of
//! inputs into a reused buffer; divan reports time per batch and bytes/s. The `bytes`
//! and `tree` variants compare streaming output against building the derivation tree;
//! `uniform_weights` draws `json.fan` by weights that are all alike, against `json_bytes`
//! the cost of the weighted path itself (the same distribution of inputs).

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use std::path::PathBuf;
use thicket_gen::{GenConfig, Generator, Weights};
use thicket_grammar::{Grammar, LoadOptions, load_spec_file};

const BATCH: u64 = 1000;

fn main() {
    divan::main();
}

fn spec(name: &str) -> Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    load_spec_file(&path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()))
        .grammar
}

/// Bytes that one batch produces, so divan can report MB/s.
fn batch_bytes(generator: &Generator) -> usize {
    let mut out = Vec::new();
    (0..BATCH)
        .map(|i| {
            out.clear();
            generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
            out.len()
        })
        .sum()
}

fn bench_bytes(bencher: Bencher, spec_name: &str, max_depth: u32) {
    let grammar = spec(spec_name);
    let generator = Generator::new(
        &grammar,
        GenConfig {
            max_depth,
            ..GenConfig::default()
        },
    )
    .unwrap();
    let bytes = batch_bytes(&generator);
    let mut out = Vec::with_capacity(1 << 16);
    bencher
        .counter(BytesCount::new(bytes))
        .counter(ItemsCount::new(BATCH))
        .bench_local(|| {
            for i in 0..BATCH {
                out.clear();
                generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
                black_box(&out);
            }
        });
}

fn bench_tree(bencher: Bencher, spec_name: &str, max_depth: u32) {
    let grammar = spec(spec_name);
    let generator = Generator::new(
        &grammar,
        GenConfig {
            max_depth,
            ..GenConfig::default()
        },
    )
    .unwrap();
    let bytes = batch_bytes(&generator);
    bencher
        .counter(BytesCount::new(bytes))
        .counter(ItemsCount::new(BATCH))
        .bench_local(|| {
            for i in 0..BATCH {
                black_box(generator.generate_tree(&mut Generator::rng_for(1, i)));
            }
        });
}

#[divan::bench(args = [10, 30])]
fn json_bytes(bencher: Bencher, max_depth: u32) {
    bench_bytes(bencher, "json.fan", max_depth);
}

#[divan::bench(args = [10, 30])]
fn json_tree(bencher: Bencher, max_depth: u32) {
    bench_tree(bencher, "json.fan", max_depth);
}

#[divan::bench(args = [10, 30])]
fn expr_bytes(bencher: Bencher, max_depth: u32) {
    bench_bytes(bencher, "expr.fan", max_depth);
}

#[divan::bench(args = [10, 30])]
fn expr_tree(bencher: Bencher, max_depth: u32) {
    bench_tree(bencher, "expr.fan", max_depth);
}

#[divan::bench(args = [10, 30])]
fn uniform_weights(bencher: Bencher, max_depth: u32) {
    let grammar = spec("json.fan");
    let config = GenConfig {
        max_depth,
        ..GenConfig::default()
    };
    let generator = Generator::new(&grammar, config).unwrap();
    let weights = Weights::uniform(&grammar);
    let mut out = Vec::with_capacity(1 << 16);
    let bytes: usize = (0..BATCH)
        .map(|i| {
            out.clear();
            generator.generate_bytes_weighted(&mut Generator::rng_for(1, i), &mut out, &weights);
            out.len()
        })
        .sum();
    bencher
        .counter(BytesCount::new(bytes))
        .counter(ItemsCount::new(BATCH))
        .bench_local(|| {
            for i in 0..BATCH {
                out.clear();
                generator.generate_bytes_weighted(
                    &mut Generator::rng_for(1, i),
                    &mut out,
                    &weights,
                );
                black_box(&out);
            }
        });
}
