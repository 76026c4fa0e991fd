//! Parses one file and prints the time, the throughput and the parser's item count: a
//! steady workload for profilers.
//!
//! `cargo run --release -p thicket-parse --example parse_file -- specs/json.fan big.json`

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args.next().expect("usage: parse_file SPEC FILE");
    let file = args.next().expect("usage: parse_file SPEC FILE");
    let spec = thicket_grammar::load_spec_file(spec.as_ref(), &Default::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let text = std::fs::read(&file).expect("readable input");
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).expect("parser");
    let started = std::time::Instant::now();
    let result = parser.parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let parsed = started.elapsed().as_secs_f64();
    let tree = result.tree();
    let total = started.elapsed().as_secs_f64();
    println!(
        "{} bytes: recognise {:.3} s ({:.1} MB/s), with tree {:.3} s ({:.1} MB/s); {} items ({:.1} per byte), {} tree nodes",
        text.len(),
        parsed,
        text.len() as f64 / parsed / 1e6,
        total,
        text.len() as f64 / total / 1e6,
        result.item_count(),
        result.item_count() as f64 / text.len() as f64,
        tree.len()
    );
}
