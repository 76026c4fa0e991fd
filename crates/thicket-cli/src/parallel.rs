//! `thicket fuzz -j N`: N campaigns, each a child process of this one with its own
//! target process, in OUT/worker-0 .. OUT/worker-(N-1), sharing their finds through OUT
//! by the sync protocol (`--sync-dir OUT --name worker-I`, every 5 s). Their figures,
//! combined (`thicket_fuzz::combined`), are written to OUT/stats.json every second and
//! at the end. Processes rather
//! than threads: a campaign's executor, coverage map and output folder are its own, so
//! workers share nothing but files, and an afl-fuzz instance can join the same folder.

use crate::exit;
use anyhow::Context;
use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thicket_fuzz::combined;

/// Options of `thicket fuzz` that the parent sets per worker, with whether they take a
/// value.
const PER_WORKER: [(&str, Option<char>, bool); 6] = [
    ("--jobs", Some('j'), true),
    ("--output", Some('o'), true),
    ("--seed", None, true),
    ("--sync-dir", None, true),
    ("--name", None, true),
    ("--sync-every", None, true),
];

/// The arguments of `thicket fuzz` without the per-worker ones: `(options, target)`,
/// the target being what follows `--` (with the `--`).
fn worker_args(args: &[OsString]) -> (Vec<OsString>, Vec<OsString>) {
    let mut options = Vec::new();
    let mut iter = args.iter().cloned().peekable();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            let mut target = vec![arg];
            target.extend(iter);
            return (options, target);
        }
        let text = arg.to_string_lossy();
        let mut skip_value = false;
        let mut dropped = false;
        for (long, short, takes_value) in PER_WORKER {
            if text == long || short.is_some_and(|c| text == format!("-{c}")) {
                (dropped, skip_value) = (true, takes_value);
            } else if text.starts_with(&format!("{long}="))
                || short.is_some_and(|c| text.starts_with(&format!("-{c}")) && text.len() > 2)
                    && !text.starts_with("--")
            {
                dropped = true;
            }
        }
        if skip_value {
            iter.next();
        }
        if !dropped {
            options.push(arg);
        }
    }
    (options, Vec::new())
}

/// Runs the workers and sums up their figures; the exit code is the worst of theirs.
pub fn run(out: &Path, jobs: u32, seed: Option<u64>, resume: bool) -> anyhow::Result<u8> {
    // Worker 0 runs with the campaign's seed itself.
    let seed = crate::fuzz::campaign_seed(seed, resume, &out.join("worker-0"));
    if !resume {
        thicket_fuzz::output::refuse_foreign_files(out).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let all: Vec<OsString> = std::env::args_os().skip(1).collect();
    let after_subcommand = all.iter().position(|a| a == "fuzz").map_or(0, |i| i + 1);
    let (options, target) = worker_args(&all[after_subcommand..]);
    let exe = std::env::current_exe().context("cannot find the thicket executable")?;
    let mut children: Vec<(String, Child)> = Vec::new();
    for i in 0..jobs {
        let name = format!("worker-{i}");
        let log = out.join(format!("{name}.log"));
        let log = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut command = Command::new(&exe);
        command
            .arg("fuzz")
            .args(&options)
            .args([OsStr::new("--sync-dir"), out.as_os_str()])
            .args(["--name", &name, "--sync-every", "5s"])
            .args(["--seed", &(seed.wrapping_add(u64::from(i))).to_string()])
            .args(&target)
            .stdin(Stdio::null())
            .stderr(log);
        // A worker ends with its parent, however the parent ends.
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        children.push((name, child));
    }
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
    let mut codes: Vec<Option<i32>> = vec![None; children.len()];
    let mut forwarded = false;
    let terminal = std::io::stderr().is_terminal();
    let mut last_write: Option<Instant> = None;
    let mut write_failed = false;
    loop {
        for (i, (_, child)) in children.iter_mut().enumerate() {
            if codes[i].is_none()
                && let Some(status) = child.try_wait()?
            {
                codes[i] = Some(status.code().unwrap_or(i32::from(exit::FAILURE)));
            }
        }
        if codes.iter().all(Option::is_some) {
            break;
        }
        if stop.load(Ordering::SeqCst) && !forwarded {
            forwarded = true;
            for (_, child) in &children {
                // SAFETY: signalling our own child by its pid.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            }
        }
        if last_write.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_write = Some(Instant::now());
            let combined = combined::combine(&worker_stats(out, jobs));
            if let Some(combined) = &combined
                && let Err(e) = combined::write(out, combined)
                && !write_failed
            {
                write_failed = true;
                eprintln!("warning: {e}");
            }
            if terminal && let Some(c) = combined {
                eprint!(
                    "\rthicket: {jobs} workers, {} execs, {:.0}/s   ",
                    c.totals.execs, c.totals.execs_per_sec
                );
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    if terminal {
        eprintln!();
    }
    summarize(out, &children, &codes)?;
    Ok(codes
        .iter()
        .map(|c| c.unwrap_or(0).clamp(0, 255) as u8)
        .max()
        .unwrap_or(exit::OK))
}

/// The workers' figures (name, stats) in worker order, where readable.
fn worker_stats(out: &Path, jobs: u32) -> Vec<(String, thicket_fuzz::Stats)> {
    (0..jobs)
        .filter_map(|i| {
            let name = format!("worker-{i}");
            combined::read_stats(&out.join(&name)).map(|s| (name, s))
        })
        .collect()
}

/// One line per worker, the totals and the failures over all workers; writes the
/// combined figures to `OUT/stats.json` a last time.
fn summarize(
    out: &Path,
    children: &[(String, Child)],
    codes: &[Option<i32>],
) -> anyhow::Result<()> {
    let stats = worker_stats(out, children.len() as u32);
    for ((name, _), code) in children.iter().zip(codes) {
        let Some((_, s)) = stats.iter().find(|(n, _)| n == name) else {
            eprintln!(
                "thicket: {name}: no stats (exit {}); see {}",
                code.unwrap_or(-1),
                out.join(format!("{name}.log")).display()
            );
            continue;
        };
        eprintln!(
            "thicket: {name}: {} execs ({:.0}/s), {}, {} kept ({} imported from the others), \
             {} distinct failures{}",
            s.execs,
            s.execs_per_sec,
            s.coverage.headline(),
            s.queue,
            s.imported,
            s.distinct_failures,
            match code {
                Some(0) | None => String::new(),
                Some(c) => format!(", exit {c}: see {name}.log"),
            }
        );
    }
    let Some(combined) = combined::combine(&stats) else {
        return Ok(());
    };
    combined::write(out, &combined).map_err(|e| anyhow::anyhow!("{e}"))?;
    let t = &combined.totals;
    eprintln!(
        "thicket: all {} workers: {} execs ({:.0}/s), {} distinct failures -> {}",
        children.len(),
        t.execs,
        t.execs_per_sec,
        t.distinct_failures,
        out.join("stats.json").display()
    );
    crate::fuzz::print_failures(&t.failures, t.likely_rejection.as_ref());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &[&str]) -> (Vec<String>, Vec<String>) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (options, target) = worker_args(&args);
        let text = |v: Vec<OsString>| {
            v.into_iter()
                .map(|a| a.into_string().unwrap())
                .collect::<Vec<_>>()
        };
        (text(options), text(target))
    }

    #[test]
    fn per_worker_options_are_dropped_in_every_spelling_and_the_target_kept() {
        let (options, target) = split(&[
            "specs/json.fan",
            "-j",
            "2",
            "-o",
            "out",
            "--seed=3",
            "--execs",
            "100",
            "-j4",
            "--output=x",
            "--valid-only",
            "--",
            "./t",
            "-o",
            "@@",
        ]);
        assert_eq!(
            options,
            ["specs/json.fan", "--execs", "100", "--valid-only"]
        );
        assert_eq!(target, ["--", "./t", "-o", "@@"]);
        let (options, target) = split(&["s.fan", "--jobs", "2", "--python", "json:loads"]);
        assert_eq!(options, ["s.fan", "--python", "json:loads"]);
        assert!(target.is_empty());
    }
}
