//! Generates N inputs from a spec into memory and prints the total size: a steady
//! workload for instruction-counting profilers (`valgrind --tool=callgrind`), which are
//! repeatable where wall-clock timings on a shared machine are not.
//!
//! `cargo run --release -p thicket-gen --example throughput -- specs/json.fan 10000 30`

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: throughput SPEC [N] [MAX_DEPTH]");
    let n: u64 = args
        .next()
        .map_or(10_000, |a| a.parse().expect("N is a number"));
    let max_depth: u32 = args
        .next()
        .map_or(30, |a| a.parse().expect("MAX_DEPTH is a number"));
    let spec = thicket_grammar::load_spec_file(path.as_ref(), &Default::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let config = thicket_gen::GenConfig {
        max_depth,
        ..Default::default()
    };
    let generator = thicket_gen::Generator::new(&spec.grammar, config).expect("generator");
    let mut out = Vec::new();
    let mut total = 0;
    let started = std::time::Instant::now();
    for i in 0..n {
        out.clear();
        generator.generate_bytes(&mut thicket_gen::Generator::rng_for(1, i), &mut out);
        total += out.len();
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{n} inputs, {total} bytes, mean {:.1} bytes, {:.1} MB/s",
        total as f64 / n as f64,
        total as f64 / seconds / 1e6
    );
}
