//! Parses many small generated inputs (with trees): the per-parse cost that checking and
//! fuzzing pay. `cargo run --release -p thicket-parse --example small_inputs -- specs/xml.bnf 10000`
use thicket_gen::{GenConfig, Generator};
use thicket_parse::{ParseConfig, Parser};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: small_inputs SPEC COUNT";
    let spec =
        thicket_grammar::load_spec_file(args.first().expect(usage).as_ref(), &Default::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
    let count: u64 = args.get(1).expect(usage).parse().expect("a count");
    let generator = Generator::new(&spec.grammar, GenConfig::default()).expect("generator");
    let inputs: Vec<Vec<u8>> = (0..count)
        .map(|i| {
            generator
                .generate_tree(&mut Generator::rng_for(1, i))
                .0
                .bytes()
                .to_vec()
        })
        .collect();
    let parser = Parser::new(&spec.grammar, ParseConfig::default()).expect("parser");
    for input in &inputs {
        let _ = parser.parse(input);
    }
    measured(&parser, &inputs);
}

#[inline(never)]
fn measured(parser: &Parser<'_>, inputs: &[Vec<u8>]) {
    let bytes: usize = inputs.iter().map(Vec::len).sum();
    let started = std::time::Instant::now();
    let mut nodes = 0;
    for input in inputs {
        if let Ok(result) = parser.parse(input) {
            nodes += result.tree().len();
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{} inputs, mean {:.0} B: {secs:.3} s, {:.0} inputs/s, {nodes} tree nodes",
        inputs.len(),
        bytes as f64 / inputs.len() as f64,
        inputs.len() as f64 / secs
    );
}
