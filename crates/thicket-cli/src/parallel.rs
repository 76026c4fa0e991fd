//! `thicket fuzz -j N`: N campaigns as child processes sharing finds through OUT
//! (`thicket_driver::workers`); this module prints their progress and figures.

use crate::exit;
use anyhow::Context;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use thicket_driver::workers::{self, Tick, Workers};

/// Runs the workers and sums up their figures; the exit code is the worst of theirs.
pub fn run(out: &Path, jobs: u32, seed: Option<u64>, resume: bool) -> anyhow::Result<u8> {
    // Worker 0 runs with the campaign's seed itself.
    let seed = crate::fuzz::campaign_seed(seed, resume, &out.join("worker-0"));
    let all: Vec<OsString> = std::env::args_os().skip(1).collect();
    let (options, target) = workers::worker_args_of(&all);
    let exe = std::env::current_exe().context("cannot find the thicket executable")?;
    let workers = Workers {
        out: out.to_path_buf(),
        jobs,
        seed,
        exe,
        options,
        target,
    };
    let running = workers.start(resume)?;
    eprintln!(
        "thicket: {jobs} workers (seeds {seed}..{}) in {}, each logging to worker-I.log",
        seed.wrapping_add(u64::from(jobs) - 1),
        out.display()
    );
    // Ctrl-C reaches the workers from the terminal; a signal to this process alone is
    // passed on, and the workers stop as after their own Ctrl-C.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("cannot install the Ctrl-C handler")?;
    }
    let terminal = std::io::stderr().is_terminal();
    let ends = running.wait(&stop, &mut |tick| match tick {
        Tick::WriteFailed(e) => eprintln!("warning: {e}"),
        Tick::Figures(c) if terminal => eprint!(
            "\rthicket: {jobs} workers, {} execs, {:.0}/s   ",
            c.totals.execs, c.totals.execs_per_sec
        ),
        Tick::Figures(_) => {}
    })?;
    if terminal {
        eprintln!();
    }
    for line in workers::summary_lines(out, &ends)? {
        eprintln!("{line}");
    }
    Ok(ends
        .iter()
        .map(|end| end.exit_code().clamp(0, 255) as u8)
        .max()
        .unwrap_or(exit::OK))
}
