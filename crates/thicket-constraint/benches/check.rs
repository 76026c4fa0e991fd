//! Checking throughput: 10,000 generated CSV and XML inputs against the bundled specs'
//! constraints (`where` blocks), with parsing alone as the baseline measured in the same
//! process. Run with `cargo bench -p thicket-constraint`.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use std::path::PathBuf;
use thicket_constraint::{Checker, Predicates};
use thicket_gen::{GenConfig, Generator};
use thicket_grammar::{LoadOptions, Spec, load_spec_file};
use thicket_parse::{ParseConfig, Parser};
use thicket_tree::DerivationTree;

const INPUTS: usize = 10_000;

fn main() {
    divan::main();
}

fn spec(name: &str) -> Spec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    load_spec_file(&path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// 10,000 inputs generated with a fixed seed (depth 12, so inputs stay realistic).
fn inputs(spec: &Spec) -> Vec<Vec<u8>> {
    let config = GenConfig {
        max_depth: 12,
        ..GenConfig::default()
    };
    let generator = Generator::new(&spec.grammar, config).unwrap();
    (0..INPUTS as u64)
        .map(|i| {
            let mut out = Vec::new();
            generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
            out
        })
        .collect()
}

struct Fixture {
    spec: Spec,
    inputs: Vec<Vec<u8>>,
    trees: Vec<DerivationTree>,
}

fn fixture(name: &str) -> Fixture {
    let spec = spec(name);
    let inputs = inputs(&spec);
    let parser = Parser::new(&spec.grammar, ParseConfig::default()).unwrap();
    let trees = inputs
        .iter()
        .map(|i| parser.parse(i).unwrap().tree())
        .collect();
    let bytes: usize = inputs.iter().map(Vec::len).sum();
    eprintln!("{name}: {INPUTS} inputs, mean {} bytes", bytes / INPUTS);
    Fixture {
        spec,
        inputs,
        trees,
    }
}

fn checker(spec: &Spec) -> Checker<'_> {
    let constraints = thicket_constraint::from_spec(spec, &Predicates::standard()).unwrap();
    Checker::new(&spec.grammar, constraints)
}

fn check_trees(bencher: Bencher, name: &str) {
    let f = fixture(name);
    let checker = checker(&f.spec);
    let valid = f
        .trees
        .iter()
        .filter(|t| checker.check(t).is_empty())
        .count();
    eprintln!("{name}: {valid} of {INPUTS} satisfy the constraints");
    bencher.counter(ItemsCount::new(INPUTS)).bench(|| {
        f.trees
            .iter()
            .filter(|t| checker.check(black_box(t)).is_empty())
            .count()
    });
}

fn parse_only(bencher: Bencher, name: &str) {
    let f = fixture(name);
    let parser = Parser::new(&f.spec.grammar, ParseConfig::default()).unwrap();
    bencher.counter(ItemsCount::new(INPUTS)).bench(|| {
        f.inputs
            .iter()
            .map(|i| parser.parse(black_box(i)).unwrap().tree().len())
            .sum::<usize>()
    });
}

fn parse_and_check(bencher: Bencher, name: &str) {
    let f = fixture(name);
    let parser = Parser::new(&f.spec.grammar, ParseConfig::default()).unwrap();
    let checker = checker(&f.spec);
    bencher.counter(ItemsCount::new(INPUTS)).bench(|| {
        f.inputs
            .iter()
            .filter(|i| {
                checker
                    .check(&parser.parse(black_box(i)).unwrap().tree())
                    .is_empty()
            })
            .count()
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_check(bencher: Bencher) {
    check_trees(bencher, "csv.bnf");
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_parse_baseline(bencher: Bencher) {
    parse_only(bencher, "csv.bnf");
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_parse_and_check(bencher: Bencher) {
    parse_and_check(bencher, "csv.bnf");
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn xml_check(bencher: Bencher) {
    check_trees(bencher, "xml.bnf");
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn xml_parse_baseline(bencher: Bencher) {
    parse_only(bencher, "xml.bnf");
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn xml_parse_and_check(bencher: Bencher) {
    parse_and_check(bencher, "xml.bnf");
}
