//! Python targets: a function called on each input inside one long-lived interpreter
//! (thicket's runner, `runner.py`, embedded in this crate), with per-input line and
//! branch coverage from coverage.py.
//!
//! The runner is started once and restarted only when it dies or hangs (a hang kills it
//! with its process group). Requests and replies are length-prefixed messages on fds 3
//! and 4 (replies are JSON); the target's own stdout and stderr go to a file whose tail
//! each outcome keeps. Uncaught exceptions are reported from inside the process with
//! their class and innermost frame.

use crate::outcome::{Exception, Outcome, Status, TAIL_BYTES, Tail, status_from_wait};
use crate::{ExecError, Executor, Limits, Trace, sys};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The runner's source, shipped inside the binary.
pub const RUNNER: &str = include_str!("runner.py");

/// How long the runner may take to start (import coverage.py and the target).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Which Python function to call, and how.
#[derive(Clone, Debug)]
pub struct PythonTarget {
    /// `module:function` (`json:loads`) or `path/to/file.py:function`.
    pub function: String,
    /// Pass the input as `bytes` (else as `str`: UTF-8, undecodable bytes as surrogate
    /// escapes).
    pub bytes: bool,
    /// coverage.py `include` patterns (file globs); empty: every file.
    pub include: Vec<String>,
    /// The interpreter (default `python3` from `PATH`).
    pub python: PathBuf,
}

impl PythonTarget {
    /// A target calling `function` with `str` inputs, measuring every file, run by the
    /// `python3` on `PATH`.
    pub fn new(function: impl Into<String>) -> PythonTarget {
        PythonTarget {
            function: function.into(),
            bytes: false,
            include: Vec::new(),
            python: PathBuf::from("python3"),
        }
    }
}

/// Coverage of one file in one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PyFileTrace {
    /// The file's path.
    pub path: String,
    /// Lines executed (sorted).
    pub lines: Vec<u32>,
    /// Branches taken: arcs `(from, to)` leaving a line with more than one exit
    /// (negative numbers are coverage.py's code-object entries and exits).
    pub branches: Vec<(i32, i32)>,
    /// Statements in the file (0 if coverage.py could not analyse it).
    pub statements: u32,
    /// Branch arcs in the file (0 if unknown).
    pub branch_total: u32,
}

/// Coverage of one Python run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PyTrace {
    /// One entry per file that ran.
    pub files: Vec<PyFileTrace>,
}

#[derive(Deserialize)]
struct Reply {
    error: Option<String>,
    ready: Option<bool>,
    python: Option<String>,
    coverage: Option<String>,
    ok: Option<bool>,
    exc: Option<String>,
    frame: Option<String>,
    message: Option<String>,
    #[serde(default)]
    arcs: FxHashMap<String, Vec<(i32, i32)>>,
    #[serde(default)]
    new_files: FxHashMap<String, (u32, u32, Vec<i32>)>,
}

/// What the runner told about a file when it first saw it.
#[derive(Clone, Debug, Default)]
struct FileInfo {
    statements: u32,
    branch_total: u32,
    /// Lines with more than one exit (sorted); empty if unknown (then every arc counts).
    branch_lines: Vec<i32>,
}

struct Runner {
    child: Child,
    to: File,
    from: File,
}

impl Drop for Runner {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        sys::killpg(pid, libc::SIGKILL);
        sys::kill(pid, libc::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Runs a Python function on each input in thicket's runner, with line and branch
/// coverage.
pub struct PythonExecutor {
    target: PythonTarget,
    limits: Limits,
    _dir: tempfile::TempDir,
    output: File,
    output_dirty: bool,
    runner: Option<Runner>,
    files: FxHashMap<String, FileInfo>,
    trace: PyTrace,
    versions: String,
    starts: u32,
}

impl PythonExecutor {
    /// Starts the runner and loads the target (a clear error if Python, coverage.py or
    /// the function is missing).
    pub fn new(
        target: PythonTarget,
        limits: Limits,
        work_dir: Option<&std::path::Path>,
    ) -> Result<PythonExecutor, ExecError> {
        let dir = crate::temp_dir(work_dir)?;
        let output = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.path().join("output"))
            .map_err(|e| ExecError::Io("cannot create the output file".into(), e))?;
        let mut executor = PythonExecutor {
            target,
            limits,
            _dir: dir,
            output,
            output_dirty: false,
            runner: None,
            files: FxHashMap::default(),
            trace: PyTrace::default(),
            versions: String::new(),
            starts: 0,
        };
        executor.start()?;
        Ok(executor)
    }

    /// How often the runner was started (it restarts after a hang or a crash).
    pub fn starts(&self) -> u32 {
        self.starts
    }

    fn start(&mut self) -> Result<(), ExecError> {
        self.runner = None;
        self.starts += 1;
        let io = |what: &'static str| move |e| ExecError::Io(what.into(), e);
        let (req_r, req_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        let (rep_r, rep_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        let req_r = sys::dup_above(&req_r, 10).map_err(io("cannot duplicate a pipe"))?;
        let rep_w = sys::dup_above(&rep_w, 10).map_err(io("cannot duplicate a pipe"))?;
        let mut command = Command::new(&self.target.python);
        command
            .arg("-c")
            .arg(RUNNER)
            .arg(&self.target.function)
            .arg(if self.target.bytes { "bytes" } else { "str" })
            .args(&self.target.include)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::from(
                self.output.try_clone().map_err(io("cannot share a file"))?,
            ))
            .stderr(Stdio::from(
                self.output.try_clone().map_err(io("cannot share a file"))?,
            ))
            .process_group(0);
        let (req_fd, rep_fd) = (req_r.as_raw_fd(), rep_w.as_raw_fd());
        let memory = self.limits.memory_mb;
        // SAFETY: only dup2, fcntl and setrlimit run between fork and exec.
        unsafe {
            command.pre_exec(move || {
                sys::dup_into_child(req_fd, 3)?;
                sys::dup_into_child(rep_fd, 4)?;
                if let Some(mb) = memory {
                    sys::set_rlimit(libc::RLIMIT_AS, mb << 20)?;
                }
                Ok(())
            });
        }
        self.output
            .set_len(0)
            .map_err(io("cannot truncate the output file"))?;
        let child = command
            .spawn()
            .map_err(|e| ExecError::Spawn(self.target.python.display().to_string(), e))?;
        drop((req_r, rep_w));
        let mut runner = Runner {
            child,
            to: req_w,
            from: rep_r,
        };
        let reply = match read_message(&mut runner.from, START_TIMEOUT) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(self.start_error("did not start within 60 s")),
            Err(_) => return Err(self.start_error("exited at start")),
        };
        let reply: Reply = serde_json::from_slice(&reply)
            .map_err(|e| self.start_error(&format!("sent a garbled greeting ({e})")))?;
        if let Some(error) = reply.error {
            return Err(ExecError::Python(error));
        }
        if reply.ready != Some(true) {
            return Err(self.start_error("sent no greeting"));
        }
        self.versions = format!(
            "Python {}, coverage.py {}",
            reply.python.unwrap_or_default(),
            reply.coverage.unwrap_or_default()
        );
        self.runner = Some(runner);
        Ok(())
    }

    fn start_error(&self, what: &str) -> ExecError {
        let said = self.read_output().text();
        let said = said.trim();
        ExecError::Python(if said.is_empty() {
            format!(
                "the Python runner ({}) {what}",
                self.target.python.display()
            )
        } else {
            format!(
                "the Python runner ({}) {what}; it said:\n{said}",
                self.target.python.display()
            )
        })
    }

    fn read_output(&self) -> Tail {
        let size = self.output.metadata().map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            return Tail::new();
        }
        let start = size.saturating_sub(TAIL_BYTES as u64);
        let mut buf = vec![0u8; (size - start) as usize];
        let n = self.output.read_at(&mut buf, start).unwrap_or(0);
        buf.truncate(n);
        Tail::from_end(buf, size)
    }

    fn absorb(&mut self, reply: Reply) {
        for (path, (statements, branch_total, branch_lines)) in reply.new_files {
            self.files.insert(
                path,
                FileInfo {
                    statements,
                    branch_total,
                    branch_lines,
                },
            );
        }
        self.trace.files.clear();
        let mut arcs: Vec<(String, Vec<(i32, i32)>)> = reply.arcs.into_iter().collect();
        arcs.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, arcs) in arcs {
            let info = self.files.get(&path).cloned().unwrap_or_default();
            let mut lines: Vec<u32> = arcs
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .filter(|&l| l > 0)
                .map(|l| l as u32)
                .collect();
            lines.sort_unstable();
            lines.dedup();
            let mut branches: Vec<(i32, i32)> = if info.branch_lines.is_empty() {
                arcs
            } else {
                arcs.into_iter()
                    .filter(|(from, _)| info.branch_lines.binary_search(from).is_ok())
                    .collect()
            };
            branches.sort_unstable();
            self.trace.files.push(PyFileTrace {
                path,
                lines,
                branches,
                statements: info.statements,
                branch_total: info.branch_total,
            });
        }
    }
}

impl Executor for PythonExecutor {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        if self.runner.is_none() {
            self.start()?;
        }
        if self.output_dirty {
            self.output
                .set_len(0)
                .map_err(|e| ExecError::Io("cannot truncate the output file".into(), e))?;
        }
        self.trace.files.clear();
        let runner = self.runner.as_mut().expect("started above");
        let started = Instant::now();
        let mut message = Vec::with_capacity(input.len() + 4);
        message.extend_from_slice(&(input.len() as u32).to_le_bytes());
        message.extend_from_slice(input);
        let sent = runner.to.write_all(&message).is_ok();
        let reply = if sent {
            read_message(&mut runner.from, self.limits.timeout)
        } else {
            Err(std::io::ErrorKind::BrokenPipe.into())
        };
        let time = started.elapsed();
        let mut outcome = match reply {
            Ok(Some(bytes)) => {
                let reply: Reply = serde_json::from_slice(&bytes).map_err(|e| {
                    ExecError::Python(format!("the runner sent a garbled reply: {e}"))
                })?;
                let mut outcome = Outcome::new(Status::Exited(0), time);
                if reply.ok == Some(false) {
                    outcome.exception = Some(Exception {
                        class: reply.exc.clone().unwrap_or_default(),
                        frame: reply.frame.clone().unwrap_or_default(),
                        message: reply.message.clone().unwrap_or_default(),
                    });
                }
                self.absorb(reply);
                outcome
            }
            Ok(None) => {
                // A hang: kill the runner (and whatever it started); restart next time.
                self.runner = None;
                Outcome::new(Status::Timeout, time)
            }
            Err(_) => {
                // The interpreter died (a crash in C code, os._exit, ...).
                let mut runner = self.runner.take().expect("running");
                let status = sys::wait4(runner.child.id() as libc::pid_t, false)
                    .ok()
                    .flatten()
                    .map_or(Status::Signaled(libc::SIGKILL), |(s, _)| {
                        status_from_wait(s)
                    });
                // The child is reaped; stop Drop from waiting for it again.
                let _ = runner.child.try_wait();
                drop(runner);
                Outcome::new(status, time)
            }
        };
        let output = self.read_output();
        self.output_dirty = output.total() > 0;
        outcome.stderr = output;
        Ok(outcome)
    }

    fn trace(&self) -> Trace<'_> {
        Trace::Python(&self.trace)
    }

    fn describe(&self) -> String {
        format!(
            "Python runner ({}, line and branch coverage): {}",
            self.versions, self.target.function
        )
    }
}

/// One length-prefixed message; `None` on timeout, an error if the pipe closed.
fn read_message(file: &mut File, timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
    let deadline = Instant::now() + timeout;
    let mut len = [0u8; 4];
    match sys::read_exact_timeout(file, &mut len, Some(timeout))? {
        sys::ReadOutcome::Done => {}
        sys::ReadOutcome::TimedOut => return Ok(None),
        sys::ReadOutcome::Closed => return Err(std::io::ErrorKind::UnexpectedEof.into()),
    }
    let mut buf = vec![0u8; u32::from_le_bytes(len) as usize];
    // The rest of a message that has begun gets a little extra time.
    let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
    match sys::read_exact_timeout(file, &mut buf, Some(left))? {
        sys::ReadOutcome::Done => Ok(Some(buf)),
        sys::ReadOutcome::TimedOut => Ok(None),
        sys::ReadOutcome::Closed => Err(std::io::ErrorKind::UnexpectedEof.into()),
    }
}
