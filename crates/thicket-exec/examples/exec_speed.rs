//! Executions per second of an executor on a fixed set of inputs: the figure to set
//! against `afl-fuzz`'s `execs_per_sec` on the same target (see
//! `benches/exec_vs_afl.sh`).
//!
//! `cargo run --release -p thicket-exec --example exec_speed -- SECONDS INPUT_DIR -- ./target @@`

use std::ffi::OsString;
use std::time::{Duration, Instant};
use thicket_exec::{CoverageSet, Limits, Mode, Target};

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let split = args
        .iter()
        .position(|a| a == "--")
        .expect("usage: SECONDS INPUT_DIR -- COMMAND");
    let seconds: f64 = args[0].to_string_lossy().parse().expect("seconds");
    let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&args[1])
        .expect("input folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| std::fs::read(e.path()).expect("readable input"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no inputs");
    let target = Target::new(&args[split + 1..], None).expect("target");
    let (mut executor, note) =
        thicket_exec::executor_for(target, Mode::Auto, Limits::default(), None).expect("executor");
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    eprintln!("{}", executor.describe());
    let mut set = CoverageSet::new();
    let started = Instant::now();
    let mut execs = 0u64;
    while started.elapsed() < Duration::from_secs_f64(seconds) {
        for input in &inputs {
            executor.run(input).expect("run");
            set.add(&executor.trace());
            execs += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{execs} execs in {elapsed:.2} s: {:.0} execs/s, {} edges",
        execs as f64 / elapsed,
        set.edges()
    );
}
