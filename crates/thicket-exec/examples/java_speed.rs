//! Executions per second of the Java executor on gson with small JSON inputs, against a
//! fresh JVM with JaCoCo's agent per input (what running the subject without thicket's
//! harness costs), both measured in this process on the same inputs.
//!
//! `cargo run --release -p thicket-exec --example java_speed -- [SECONDS] [FRESH_RUNS]`
//! (defaults 10 and 10; needs a JDK, libjacoco-java and libgoogle-gson-java). Pin it to
//! one core with `taskset -c 0` for the one-core figure.

use std::path::PathBuf;
use std::time::{Duration, Instant};
use thicket_exec::{CoverageSet, Executor, JavaExecutor, JavaTarget, Limits};

/// Small JSON documents of the kinds a grammar fuzzer makes (the number varies per
/// round so that no two consecutive inputs are equal).
fn input(i: usize) -> Vec<u8> {
    let shapes = [
        "{}",
        "[]",
        "{\"a\": N}",
        "[N, -N.5, N e3, true, false, null]",
        "{\"k\": \"v\\u00e9\\n\", \"n\": [N, {\"x\": null}]}",
        "\"text N\"",
        "[[[[N]]]]",
        "{\"a\": {\"b\": {\"c\": [N, \"d\"]}}}",
        "[N,",
        "{\"a\" N}",
        "tru",
        "-0.0eN",
    ];
    shapes[i % shapes.len()]
        .replace(" e3", "e3")
        .replace('N', &(i % 1000).to_string())
        .into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: f64 = args.first().map_or(10.0, |s| s.parse().expect("seconds"));
    let fresh_runs: usize = args.get(1).map_or(10, |s| s.parse().expect("fresh runs"));
    let target = JavaTarget::new(
        "com.google.gson.JsonParser.parseString",
        vec![PathBuf::from("/usr/share/java/gson.jar")],
    );
    let limits = Limits {
        timeout: Duration::from_secs(5),
        memory_mb: None,
    };
    let start = Instant::now();
    let mut executor = JavaExecutor::new(target, limits, None).expect("the Java executor");
    eprintln!(
        "{} (ready in {:.2} s)",
        executor.describe(),
        start.elapsed().as_secs_f64()
    );
    // Warm-up: the first calls load and instrument classes and learn probes.
    let mut set = CoverageSet::new();
    let warm = Instant::now();
    for i in 0..200 {
        executor.run(&input(i)).expect("run");
        set.add(&executor.trace());
    }
    let warm = warm.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut execs = 0usize;
    let mut failures = 0usize;
    while started.elapsed() < Duration::from_secs_f64(seconds) {
        let outcome = executor.run(&input(execs)).expect("run");
        failures += usize::from(outcome.exception.is_some());
        set.add(&executor.trace());
        execs += 1;
    }
    let long_lived = execs as f64 / started.elapsed().as_secs_f64();
    let fresh_started = Instant::now();
    for i in 0..fresh_runs {
        executor.run_fresh(&input(i), false).expect("fresh run");
    }
    let fresh = fresh_runs as f64 / fresh_started.elapsed().as_secs_f64();
    let summary = set.summary(None);
    println!(
        "long-lived JVM: {execs} execs in {seconds:.0} s: {long_lived:.0} execs/s ({failures} \
         exceptions; warm-up of 200 execs {warm:.2} s; {}; {} restarts)",
        summary.headline(),
        executor.restarts()
    );
    println!(
        "fresh JVM per input: {fresh_runs} execs: {fresh:.2} execs/s; ratio {:.0}x",
        long_lived / fresh
    );
}
