//! N fuzzing campaigns in parallel, each a child process of this one with its own
//! target process, in OUT/worker-0 .. OUT/worker-(N-1), sharing their finds through OUT
//! by the sync protocol (`--sync-dir OUT --name worker-I`, every 5 s). Their figures,
//! combined ([`thicket_fuzz::combined`]), are written to OUT/stats.json every second and
//! at the end. Processes rather than threads: a campaign's executor, coverage map and
//! output folder are its own, so workers share nothing but files, and an afl-fuzz
//! instance can join the same folder.
//!
//! Each worker is the program given ([`Workers::exe`], the `thicket` binary) run as
//! `EXE fuzz OPTIONS --sync-dir OUT --name worker-I --sync-every 5s --seed S+I TARGET`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thicket_fuzz::Stats;
use thicket_fuzz::combined::{self, Combined};

/// Options of `thicket fuzz` that the parent sets per worker: (long name, short name,
/// whether it takes a value).
const PER_WORKER: [(&str, Option<char>, bool); 6] = [
    ("--jobs", Some('j'), true),
    ("--output", Some('o'), true),
    ("--seed", None, true),
    ("--sync-dir", None, true),
    ("--name", None, true),
    ("--sync-every", None, true),
];

/// [`worker_args`] of a whole command line `args` (without the program's name): the
/// arguments after the `fuzz` subcommand.
pub fn worker_args_of(args: &[OsString]) -> (Vec<OsString>, Vec<OsString>) {
    let after_subcommand = args.iter().position(|a| a == "fuzz").map_or(0, |i| i + 1);
    worker_args(&args[after_subcommand..])
}

/// The arguments of `thicket fuzz` (after the subcommand) without the per-worker ones:
/// `(options, target)`, the target being what follows `--` (with the `--`).
pub fn worker_args(args: &[OsString]) -> (Vec<OsString>, Vec<OsString>) {
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

/// What to run: `jobs` workers of `exe` writing into `out`, worker I with seed
/// `seed + I`.
#[derive(Clone, Debug)]
pub struct Workers {
    /// The folder of the workers' folders (OUT/worker-I) and of the combined stats.
    pub out: PathBuf,
    /// How many workers.
    pub jobs: u32,
    /// Worker 0's seed; worker I gets `seed + I`.
    pub seed: u64,
    /// The program each worker runs (the `thicket` binary).
    pub exe: PathBuf,
    /// The `fuzz` options every worker gets (see [`worker_args`]).
    pub options: Vec<OsString>,
    /// The target, `--` and what follows it, or nothing.
    pub target: Vec<OsString>,
}

/// Why the workers could not be run.
#[derive(Debug)]
pub struct WorkersError(String);

impl std::fmt::Display for WorkersError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkersError {}

/// What [`Running::wait`] reports while the workers run.
pub enum Tick<'a> {
    /// The combined figures, just written to OUT/stats.json (about every second).
    Figures(&'a Combined),
    /// Writing OUT/stats.json failed (reported once).
    WriteFailed(&'a str),
}

/// The workers, started.
pub struct Running {
    out: PathBuf,
    children: Vec<(String, Child)>,
}

/// One worker at the end: its name, exit code (`None` if it died by a signal) and
/// figures (`None` if its stats.json is unreadable).
pub struct WorkerEnd {
    /// `worker-I`.
    pub name: String,
    /// Its exit code.
    pub code: Option<i32>,
    /// Its own figures.
    pub stats: Option<Stats>,
}

impl WorkerEnd {
    /// Its exit code; one killed by a signal counts as a failed campaign (4, as
    /// `thicket fuzz` ends when the target cannot be run).
    pub fn exit_code(&self) -> i32 {
        self.code.unwrap_or(4)
    }
}

/// What a parallel campaign ended with, for people: a line per worker (its figures, or
/// where its log is when it left none; its exit code when not 0), then the figures of
/// all workers combined (written to OUT/stats.json a last time, see [`combine_ends`])
/// with their failures.
pub fn summary_lines(out: &Path, ends: &[WorkerEnd]) -> Result<Vec<String>, WorkersError> {
    let mut lines = Vec::new();
    for end in ends {
        let (name, code) = (&end.name, end.exit_code());
        let Some(s) = &end.stats else {
            lines.push(format!(
                "thicket: {name}: no stats (exit {code}); see {}",
                out.join(format!("{name}.log")).display()
            ));
            continue;
        };
        lines.push(format!(
            "thicket: {name}: {} execs ({:.0}/s), {}, {} kept ({} imported from the others), \
             {} distinct failures{}",
            s.execs,
            s.execs_per_sec,
            s.coverage.headline(),
            s.queue,
            s.imported,
            s.distinct_failures,
            match code {
                0 => String::new(),
                c => format!(", exit {c}: see {name}.log"),
            }
        ));
    }
    let Some(combined) = combine_ends(out, ends)? else {
        return Ok(lines);
    };
    let t = &combined.totals;
    lines.push(format!(
        "thicket: all {} workers: {} execs ({:.0}/s), {} distinct failures -> {}",
        ends.len(),
        t.execs,
        t.execs_per_sec,
        t.distinct_failures,
        out.join("stats.json").display()
    ));
    lines.extend(thicket_fuzz::report::failure_lines(
        &t.failures,
        t.likely_rejection.as_ref(),
    ));
    Ok(lines)
}

impl Workers {
    /// Creates OUT (refusing a folder of other files unless `resume`) and starts every
    /// worker, its stderr going to OUT/worker-I.log; each ends with its parent, however
    /// the parent ends.
    pub fn start(&self, resume: bool) -> Result<Running, WorkersError> {
        let out = &self.out;
        if !resume {
            thicket_fuzz::output::refuse_foreign_files(out)
                .map_err(|e| WorkersError(e.to_string()))?;
        }
        std::fs::create_dir_all(out)
            .map_err(|e| WorkersError(format!("cannot create {}: {e}", out.display())))?;
        let mut children: Vec<(String, Child)> = Vec::new();
        for i in 0..self.jobs {
            let name = format!("worker-{i}");
            let log = out.join(format!("{name}.log"));
            let log = std::fs::File::create(&log)
                .map_err(|e| WorkersError(format!("cannot create {}: {e}", log.display())))?;
            let mut command = Command::new(&self.exe);
            command
                .arg("fuzz")
                .args(&self.options)
                .args([OsStr::new("--sync-dir"), out.as_os_str()])
                .args(["--name", &name, "--sync-every", "5s"])
                .args([
                    "--seed",
                    &(self.seed.wrapping_add(u64::from(i))).to_string(),
                ])
                .args(&self.target)
                .stdin(Stdio::null())
                .stderr(log);
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
                .map_err(|e| WorkersError(format!("cannot start {name}: {e}")))?;
            children.push((name, child));
        }
        Ok(Running {
            out: out.clone(),
            children,
        })
    }
}

impl Running {
    /// Waits for every worker, writing the combined figures every second (and telling
    /// `tick`). Once `stop` is set the workers get SIGINT, and stop as after their own
    /// Ctrl-C.
    pub fn wait(
        mut self,
        stop: &AtomicBool,
        tick: &mut dyn FnMut(Tick<'_>),
    ) -> Result<Vec<WorkerEnd>, WorkersError> {
        let jobs = self.children.len() as u32;
        let mut codes: Vec<Option<Option<i32>>> = vec![None; self.children.len()];
        let mut forwarded = false;
        let mut last_write: Option<Instant> = None;
        let mut write_failed = false;
        loop {
            for (i, (name, child)) in self.children.iter_mut().enumerate() {
                if codes[i].is_none() {
                    let status = child
                        .try_wait()
                        .map_err(|e| WorkersError(format!("cannot wait for {name}: {e}")))?;
                    if let Some(status) = status {
                        codes[i] = Some(status.code());
                    }
                }
            }
            if codes.iter().all(Option::is_some) {
                break;
            }
            if stop.load(Ordering::SeqCst) && !forwarded {
                forwarded = true;
                for (_, child) in &self.children {
                    // SAFETY: signalling our own child by its pid.
                    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                }
            }
            if last_write.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                last_write = Some(Instant::now());
                if let Some(combined) = combined::combine(&worker_stats(&self.out, jobs)) {
                    if let Err(e) = combined::write(&self.out, &combined)
                        && !write_failed
                    {
                        write_failed = true;
                        tick(Tick::WriteFailed(&e.to_string()));
                    }
                    tick(Tick::Figures(&combined));
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let mut stats = worker_stats(&self.out, jobs);
        Ok(self
            .children
            .into_iter()
            .zip(codes)
            .map(|((name, _), code)| {
                let at = stats.iter().position(|(n, _)| *n == name);
                WorkerEnd {
                    stats: at.map(|at| stats.swap_remove(at).1),
                    code: code.flatten(),
                    name,
                }
            })
            .collect())
    }
}

/// The figures of the workers that left theirs combined, written to OUT/stats.json a
/// last time; `None` if none did.
pub fn combine_ends(out: &Path, ends: &[WorkerEnd]) -> Result<Option<Combined>, WorkersError> {
    let stats: Vec<(String, Stats)> = ends
        .iter()
        .filter_map(|end| Some((end.name.clone(), end.stats.clone()?)))
        .collect();
    let Some(combined) = combined::combine(&stats) else {
        return Ok(None);
    };
    combined::write(out, &combined).map_err(|e| WorkersError(e.to_string()))?;
    Ok(Some(combined))
}

/// The workers' figures (name, stats) in worker order, where readable.
fn worker_stats(out: &Path, jobs: u32) -> Vec<(String, Stats)> {
    (0..jobs)
        .filter_map(|i| {
            let name = format!("worker-{i}");
            combined::read_stats(&out.join(&name)).map(|s| (name, s))
        })
        .collect()
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
