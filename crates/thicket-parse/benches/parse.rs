//! Parsing throughput on JSON documents of about 1 MB and 10 MB and on a 1 MB CSV file,
//! with and without building the tree. Run with `cargo bench -p thicket-parse`.
//! The documents are written by a fixed pseudo-random process, so every run parses the
//! same bytes. The parser runs with the `thicket` binary's settings (helper threads,
//! the tree node pool), not a library's defaults.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use std::path::PathBuf;
use thicket_grammar::{Grammar, LoadOptions, load_spec_file};
use thicket_parse::{ParseConfig, Parser};

mod documents;
use documents::{csv_document, json_document};

fn main() {
    thicket_tree::keep_spare_nodes(128 << 20);
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

fn bench_parse(bencher: Bencher, grammar: &Grammar, text: &[u8], tree: bool) {
    let config = ParseConfig {
        threads: true,
        ..ParseConfig::default()
    };
    let parser = Parser::new(grammar, config).unwrap();
    if let Err(e) = parser.parse(text) {
        panic!("benchmark document rejected: {e}");
    }
    bencher
        .counter(BytesCount::new(text.len()))
        .bench_local(|| {
            if tree {
                black_box(parser.parse(black_box(text)).unwrap().tree());
            } else {
                parser.recognize(black_box(text)).unwrap();
            }
        });
}

#[divan::bench(args = [false, true], sample_count = 5, sample_size = 1)]
fn json_1mb(bencher: Bencher, tree: bool) {
    bench_parse(bencher, &spec("json.fan"), &json_document(1 << 20), tree);
}

/// The baseline for the JSON figures, in the same process: serde_json reading the same
/// document into a `serde_json::Value` (a dedicated, hand-written JSON parser).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn json_1mb_serde_json_baseline(bencher: Bencher) {
    let text = json_document(1 << 20);
    bencher
        .counter(BytesCount::new(text.len()))
        .bench_local(|| {
            black_box(serde_json::from_slice::<serde_json::Value>(black_box(
                &text,
            )))
        });
}

#[divan::bench(args = [false, true], sample_count = 2, sample_size = 1)]
fn json_10mb(bencher: Bencher, tree: bool) {
    bench_parse(bencher, &spec("json.fan"), &json_document(10 << 20), tree);
}

#[divan::bench(args = [false, true], sample_count = 5, sample_size = 1)]
fn csv_1mb(bencher: Bencher, tree: bool) {
    bench_parse(bencher, &spec("csv.bnf"), &csv_document(1 << 20), tree);
}
