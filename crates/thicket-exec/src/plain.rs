//! The plain executor: starts the program afresh for every input, without coverage.
//! Works for any program.
//!
//! A run ends when the program ends (or its time is up): its process group is killed,
//! and so are the processes it moved out of that group (`setsid` daemons, re-parented
//! to thicket). Output is read until both pipes close; if processes the program left
//! behind still hold them, for [`OUTPUT_GRACE`] more, then thicket stops reading (such
//! runs are counted, [`Executor::held_output_runs`]). A program whose daemon keeps its
//! stdout therefore costs its own time, not the time limit, and is no hang.

use crate::command::{InputMode, Target};
use crate::outcome::{Outcome, Status, Tail, status_from_wait};
use crate::{ExecError, Executor, Limits, Trace, sys};
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a program once per input in its own process group; a timeout kills the group.
pub struct PlainExecutor {
    target: Target,
    limits: Limits,
    /// Holds the input file (for `@@` and stdin).
    _dir: crate::reap::TempDir,
    input_path: PathBuf,
    owner: crate::reap::Owner,
    /// Runs whose output a process the program left behind held open.
    held_output_runs: u64,
}

impl PlainExecutor {
    /// An executor for `target`; `work_dir` is where the input file lives (a fresh
    /// temporary folder inside it).
    pub fn new(
        target: Target,
        limits: Limits,
        work_dir: Option<&std::path::Path>,
    ) -> Result<PlainExecutor, ExecError> {
        let dir = crate::reap::TempDir::new(work_dir)?;
        let input_path = dir.path().join("cur_input");
        Ok(PlainExecutor {
            target,
            limits,
            _dir: dir,
            input_path,
            owner: crate::reap::Owner::new(),
            held_output_runs: 0,
        })
    }
}

impl Executor for PlainExecutor {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        let stdin = match self.target.mode {
            InputMode::Stdin | InputMode::File => {
                std::fs::write(&self.input_path, input)
                    .map_err(|e| ExecError::Io("cannot write the input file".into(), e))?;
                if self.target.mode == InputMode::Stdin {
                    Stdio::from(
                        File::open(&self.input_path)
                            .map_err(|e| ExecError::Io("cannot open the input file".into(), e))?,
                    )
                } else {
                    Stdio::null()
                }
            }
            InputMode::Arg => Stdio::null(),
        };
        let mut command = Command::new(&self.target.program);
        command
            .args(self.target.args_for(&self.input_path, input))
            .envs(self.target.env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        crate::sanitizer_env(&mut command);
        self.owner.mark(&mut command);
        let memory = self.limits.memory_mb;
        // SAFETY: the closure only calls prctl and setrlimit, which are
        // async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                sys::die_with_parent();
                if let Some(mb) = memory {
                    sys::set_rlimit(libc::RLIMIT_AS, mb << 20)?;
                }
                Ok(())
            });
        }
        let started = Instant::now();
        let mut child = crate::reap::spawn(&mut command)
            .map_err(|e| ExecError::Spawn(self.target.name.clone(), e))?;
        let pid = child.id() as libc::pid_t;
        let result = self.wait_for(&mut child, pid, started);
        crate::reap::unregister(pid);
        self.owner.sweep();
        result
    }

    fn trace(&self) -> Trace<'_> {
        Trace::None
    }

    fn describe(&self) -> String {
        format!("plain (no coverage): {}", self.target.display())
    }

    fn timeout(&self) -> Duration {
        self.limits.timeout
    }

    fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    fn held_output_runs(&self) -> u64 {
        self.held_output_runs
    }
}

impl PlainExecutor {
    /// Collects the output of a started run and waits for its end (or kills it).
    fn wait_for(
        &mut self,
        child: &mut std::process::Child,
        pid: libc::pid_t,
        started: Instant,
    ) -> Result<Outcome, ExecError> {
        let mut out = File::from(std::os::fd::OwnedFd::from(
            child.stdout.take().expect("piped"),
        ));
        let mut err = File::from(std::os::fd::OwnedFd::from(
            child.stderr.take().expect("piped"),
        ));
        sys::set_nonblocking(out.as_raw_fd()).map_err(io_err)?;
        sys::set_nonblocking(err.as_raw_fd()).map_err(io_err)?;
        let deadline = started + self.limits.timeout;
        let mut stdout = Tail::new();
        let mut stderr = Tail::new();
        let (mut out_open, mut err_open) = (true, true);
        let mut buf = vec![0u8; 64 * 1024];
        let mut waited: Option<(i32, u64)> = None;
        let mut timed_out = false;
        let mut after_exit = AfterExit::Running;
        // Whether a process the program left behind held its output open.
        let mut held_open = false;
        let mut nap = Duration::from_micros(50);
        loop {
            // Drain whatever output is there.
            for (open, pipe, tail) in [
                (&mut out_open, &mut out, &mut stdout),
                (&mut err_open, &mut err, &mut stderr),
            ] {
                while *open {
                    match pipe.read(&mut buf) {
                        Ok(0) => *open = false,
                        Ok(n) => tail.push(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => *open = false,
                    }
                }
            }
            if waited.is_none() {
                waited = sys::wait4(pid, true).map_err(io_err)?;
                if waited.is_some() {
                    // The program is gone; anything it left behind in its group goes too.
                    sys::killpg(pid, libc::SIGKILL);
                }
            }
            if waited.is_some() {
                if !out_open && !err_open {
                    break;
                }
                match after_exit {
                    // Read what the program wrote before it ended: its own descriptors
                    // were closed when it ended.
                    AfterExit::Running => {
                        after_exit = AfterExit::Drained;
                        continue;
                    }
                    // The output is still open, so others hold it. The run is over:
                    // the processes it moved out of its group (re-parented here) go
                    // too, and its group's are waited for. If one of those outside
                    // the group held the output, or something else still does, the
                    // output is read for a short grace more and then left.
                    AfterExit::Drained => {
                        if self.owner.end_escaped(pid) > 0 {
                            held_open = true;
                        }
                        after_exit = AfterExit::Grace(Instant::now() + OUTPUT_GRACE);
                        continue;
                    }
                    AfterExit::Grace(end) if Instant::now() >= end => {
                        held_open = true;
                        break;
                    }
                    AfterExit::Grace(_) => {}
                }
            }
            let now = Instant::now();
            if waited.is_none() && now >= deadline {
                sys::killpg(pid, libc::SIGKILL);
                timed_out = true;
                waited = sys::wait4(pid, false).map_err(io_err)?;
                continue;
            }
            let left = match after_exit {
                AfterExit::Grace(end) => end,
                _ => deadline,
            }
            .saturating_duration_since(now);
            if out_open || err_open {
                // Sleep until output arrives or a short while passes (to notice the
                // exit of a program that closed its output early).
                let fd = if out_open {
                    out.as_raw_fd()
                } else {
                    err.as_raw_fd()
                };
                let other = if out_open && err_open {
                    Some(err.as_raw_fd())
                } else {
                    None
                };
                poll_two(fd, other, left.min(Duration::from_millis(10)));
            } else {
                std::thread::sleep(nap.min(left));
                nap = (nap * 2).min(Duration::from_millis(5));
            }
        }
        let time = started.elapsed();
        let (status_word, rss) = waited.unwrap_or((0, 0));
        let status = if timed_out {
            Status::Timeout
        } else {
            status_from_wait(status_word)
        };
        if held_open {
            self.held_output_runs += 1;
        }
        let mut outcome = Outcome::new(status, time);
        outcome.peak_rss_kb = Some(rss);
        outcome.stdout = stdout;
        outcome.stderr = stderr;
        Ok(outcome)
    }
}

/// How long the output of a program that has ended is still read while processes it
/// left behind hold it open (they are not the run; their output is not its output).
pub const OUTPUT_GRACE: Duration = Duration::from_millis(50);

/// The warning for `runs` of `of` whose output a process the target left behind held
/// open.
pub fn held_output_warning(runs: u64, of: u64) -> String {
    format!(
        "the target left a process holding its output open (in {runs} of {of} runs): a run \
         ends when the target ends, so thicket ended what it left behind and read its \
         output for at most {} ms more (close stdout and stderr in processes the target \
         leaves running)",
        OUTPUT_GRACE.as_millis()
    )
}

/// Where a run is once its program has ended.
#[derive(Clone, Copy)]
enum AfterExit {
    /// Not ended yet.
    Running,
    /// Ended; the output it left has been read once more.
    Drained,
    /// Others hold the output: it is read until then.
    Grace(Instant),
}

fn io_err(e: std::io::Error) -> ExecError {
    ExecError::Io("waiting for the target".into(), e)
}

/// Waits until one of two descriptors is readable or `timeout` passes.
fn poll_two(a: i32, b: Option<i32>, timeout: Duration) {
    let mut fds = [
        libc::pollfd {
            fd: a,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: b.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: two valid pollfd entries (a negative fd is ignored by poll).
    unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
}
