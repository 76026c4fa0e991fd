//! Compares policies on one spec in one process: for each, N inputs generated on one
//! thread, with their throughput, mean size and share of distinct inputs.
//!
//! `cargo run --release -p thicket-gen --example diversity -- SPEC [N] [BYTES...]`
//! (BYTES: targets of `ChoicePolicy::Sized` to compare with `ChoicePolicy::Uniform`; default 64).

use std::collections::HashSet;
use std::time::Instant;
use thicket_gen::{ChoicePolicy, GenConfig, Generator};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: diversity SPEC [N] [BYTES...]");
    let n: u64 = args
        .next()
        .map_or(100_000, |a| a.parse().expect("N is a number"));
    let mut policies = vec![ChoicePolicy::Uniform];
    policies.extend(args.map(|a| ChoicePolicy::Sized {
        bytes: a.parse().expect("BYTES is a number"),
    }));
    if policies.len() == 1 {
        policies.push(ChoicePolicy::default());
    }
    let spec = thicket_grammar::load_spec_file(path.as_ref(), &Default::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    // Two rounds, so that the first policy does not pay for a cold start alone.
    for round in 0..2 {
        for &policy in &policies {
            let config = GenConfig {
                policy,
                ..GenConfig::default()
            };
            let generator = Generator::new(&spec.grammar, config).expect("generator");
            // All inputs into one buffer (timed), distinct ones counted afterwards.
            let mut out = Vec::new();
            let mut ends = Vec::with_capacity(n as usize);
            let started = Instant::now();
            for i in 0..n {
                generator.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
                ends.push(out.len());
            }
            let seconds = started.elapsed().as_secs_f64();
            let total = out.len();
            let distinct: HashSet<&[u8]> = std::iter::once(0)
                .chain(ends.iter().copied())
                .zip(ends.iter().copied())
                .map(|(start, end)| &out[start..end])
                .collect();
            if round == 1 {
                println!(
                    "{policy:?}: {n} inputs, mean {:.1} bytes, {:.1}% distinct, {:.0} inputs/s, {:.1} MB/s",
                    total as f64 / n as f64,
                    100.0 * distinct.len() as f64 / n as f64,
                    n as f64 / seconds,
                    total as f64 / seconds / 1e6
                );
            }
        }
    }
}
