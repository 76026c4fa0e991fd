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
use crate::{ExecError, Executor, Limits, Location, LocationKind, Trace, reap, sys};
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

/// How long the runner may take to start by default (import coverage.py and the target).
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the runner may take, after a call, to analyse source files it sees for the
/// first time (set-up work that does not count against the input's time limit).
pub(crate) const ANALYSIS_TIMEOUT: Duration = Duration::from_secs(120);

/// The exit code with which the runner says that its protocol pipe is gone.
const LOST_PIPE: i32 = 86;

/// Which Python function to call, and how.
#[derive(Clone, Debug)]
pub struct PythonTarget {
    /// `module:function` (`json:loads`) or `path/to/file.py:function`.
    pub function: String,
    /// Pass the input as `bytes` (else as `str`: UTF-8, invalid bytes replaced by
    /// U+FFFD, since no caller holding text could pass them).
    pub bytes: bool,
    /// coverage.py `include` patterns (file globs); empty: the target function's own
    /// package (the folder of its top-level package, or its module file; for
    /// `file.py:function` the file's folder).
    pub include: Vec<String>,
    /// The interpreter (default `python3` from `PATH`).
    pub python: PathBuf,
    /// How long the interpreter may take to report that it is ready (after importing
    /// coverage.py and the target); [`START_TIMEOUT`] by default.
    pub start_timeout: Duration,
    /// The target's tokenizer, `module:callable` (`esprima.scanner:Scanner.lex`): its
    /// tokens record the comparisons made on their values, reported per run as a
    /// [`TokenTrace`] (see `runner.py` for what is and is not seen).
    pub tokenizer: Option<String>,
}

impl PythonTarget {
    /// A target calling `function` with `str` inputs, measuring the function's own
    /// package, run by the `python3` on `PATH`.
    pub fn new(function: impl Into<String>) -> PythonTarget {
        PythonTarget {
            function: function.into(),
            bytes: false,
            include: Vec::new(),
            python: PathBuf::from("python3"),
            start_timeout: START_TIMEOUT,
            tokenizer: None,
        }
    }

    /// The top-level package of the target's module (`xml` for
    /// `xml.dom.minidom:parseString`), or for `file.py:function` the name the runner
    /// loads the file under (`thicket_target`): where the target's own exception classes
    /// live.
    pub fn package(&self) -> String {
        let module = self
            .function
            .rsplit_once(':')
            .map_or(self.function.as_str(), |(m, _)| m);
        if module.ends_with(".py") || module.contains('/') {
            "thicket_target".to_string()
        } else {
            module.split('.').next().unwrap_or(module).to_string()
        }
    }
}

/// A token the target's tokenizer returned in one run.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PyToken {
    /// Its number: tokens are numbered by start offset, first seen first.
    pub index: u32,
    /// Start offset in the input (in characters for `str` targets); -1 if unknown.
    pub start: i64,
    /// End offset; -1 if unknown.
    pub end: i64,
    /// Its value (`repr` of a value that is not a string).
    pub value: String,
}

/// A comparison the target made on a token's value: `token[index] == value` was
/// `equal`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
pub struct TokenCond {
    /// The token's number.
    pub index: u32,
    /// What it was compared with.
    pub value: String,
    /// Whether they were equal.
    pub equal: bool,
}

/// The token-level path condition of one run: the tokens and, in order, the
/// comparisons on them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenTrace {
    /// The tokens, by number.
    pub tokens: Vec<PyToken>,
    /// The comparisons, in the order they ran.
    pub conds: Vec<TokenCond>,
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
    /// Functions that ran: qualified names (`JSONDecoder.decode`,
    /// `outer.<locals>.inner`), sorted; a function runs when a line of its own body
    /// (not of a function nested in it) ran.
    pub functions: Vec<String>,
}

/// Coverage of one Python run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PyTrace {
    /// One entry per file that ran.
    pub files: Vec<PyFileTrace>,
}

impl PyTrace {
    /// Appends the named locations this run covered (functions and lines per file), as
    /// every Python executor reports them through `Executor::covered_locations`.
    pub fn covered_locations(&self, out: &mut Vec<Location>) {
        for file in &self.files {
            out.extend(file.functions.iter().map(|f| Location {
                kind: LocationKind::Function,
                file: file.path.clone(),
                name: f.clone(),
            }));
            out.extend(file.lines.iter().map(|l| Location {
                kind: LocationKind::Line,
                file: file.path.clone(),
                name: l.to_string(),
            }));
        }
    }
}

#[derive(Deserialize)]
struct Reply {
    error: Option<String>,
    ready: Option<bool>,
    python: Option<String>,
    coverage: Option<String>,
    include: Option<Vec<String>>,
    ok: Option<bool>,
    exc: Option<String>,
    frame: Option<String>,
    message: Option<String>,
    exit: Option<i32>,
    #[serde(default)]
    pending: u32,
    #[serde(default)]
    arcs: FxHashMap<String, Vec<(i32, i32)>>,
    #[serde(default)]
    new_files: FxHashMap<String, Analysis>,
    tokens: Option<Vec<(u32, i64, i64, String)>>,
    #[serde(default)]
    conds: Vec<(u32, String, bool)>,
}

/// The runner's analysis of a source file (see `analyse` in runner.py); empty if the
/// file could not be analysed.
#[derive(Deserialize, Default)]
struct Analysis {
    #[serde(default)]
    statements: Vec<u32>,
    #[serde(default)]
    multi: Vec<(i32, u32)>,
    #[serde(default)]
    first: FxHashMap<String, u32>,
    #[serde(default)]
    deftime: Vec<u32>,
    #[serde(default)]
    functions: Vec<(String, u32, u32)>,
}

/// What thicket knows of a file, kept across runner restarts so that no runner analyses
/// a file twice.
#[derive(Clone, Debug, Default)]
struct FileInfo {
    /// Whether coverage.py could analyse the file (else raw line events count).
    analysed: bool,
    /// Statements that can run during a call (coverage.py's statements minus those of
    /// module and class bodies, which run only at import), sorted.
    statements: Vec<u32>,
    /// Statements that run only at import, sorted.
    deftime: Vec<u32>,
    /// The first line of the statement a line belongs to, where it differs.
    first: FxHashMap<u32, u32>,
    /// Lines with more than one exit (sorted), outside import-time code.
    branch_lines: Vec<i32>,
    branch_total: u32,
    /// Functions as (line of `def`, last line, qualified name), sorted by `def` line.
    functions: Vec<(u32, u32, String)>,
}

impl FileInfo {
    fn from_analysis(a: Analysis) -> FileInfo {
        if a.statements.is_empty() && a.multi.is_empty() {
            return FileInfo::default();
        }
        let mut deftime = a.deftime;
        deftime.sort_unstable();
        let statements: Vec<u32> = a
            .statements
            .into_iter()
            .filter(|l| deftime.binary_search(l).is_err())
            .collect();
        let multi: Vec<(i32, u32)> = a
            .multi
            .into_iter()
            .filter(|&(l, _)| l < 0 || deftime.binary_search(&(l as u32)).is_err())
            .collect();
        let mut branch_lines: Vec<i32> = multi.iter().map(|&(l, _)| l).collect();
        branch_lines.sort_unstable();
        let mut functions: Vec<(u32, u32, String)> = a
            .functions
            .into_iter()
            .map(|(name, start, end)| (start, end, name))
            .collect();
        functions.sort_unstable();
        FileInfo {
            analysed: true,
            statements,
            deftime,
            first: a
                .first
                .into_iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
                .collect(),
            branch_total: multi.iter().map(|&(_, n)| n).sum(),
            branch_lines,
            functions,
        }
    }

    /// The innermost function whose body holds `line` (its `def` line runs in the
    /// enclosing code).
    fn function_of(&self, line: u32) -> Option<&str> {
        // Functions starting before the line, innermost (latest start) first; nesting
        // means the first whose range holds the line is the innermost.
        let before = self.functions.partition_point(|f| f.0 < line);
        self.functions[..before]
            .iter()
            .rev()
            .find(|f| line <= f.1)
            .map(|f| f.2.as_str())
    }

    /// The statements an arc's endpoints ran, as coverage.py counts them (each line
    /// mapped to its statement's first line, kept if that is a statement that can run
    /// during a call).
    fn statement_of(&self, line: i32) -> Option<u32> {
        if line <= 0 {
            return None;
        }
        let line = line as u32;
        if !self.analysed {
            return Some(line);
        }
        let first = self.first.get(&line).copied().unwrap_or(line);
        self.statements
            .binary_search(&first)
            .is_ok()
            .then_some(first)
    }

    fn is_branch(&self, from: i32) -> bool {
        if !self.analysed {
            return true;
        }
        if from > 0 && self.deftime.binary_search(&(from as u32)).is_ok() {
            return false;
        }
        self.branch_lines.binary_search(&from).is_ok()
    }
}

pub(crate) struct Runner {
    pub(crate) child: Child,
    pub(crate) to: File,
    pub(crate) from: File,
    /// Whether the child has been waited for.
    pub(crate) reaped: bool,
    /// Whether thicket had to kill it (it did not end by itself).
    pub(crate) killed: bool,
}

/// The outcome of a call that hung: the runner (and whatever it started) is killed, and
/// the next call starts a new one.
pub(crate) fn hung(runner: &mut Option<Runner>, time: Duration) -> Outcome {
    if let Some(mut runner) = runner.take() {
        runner.finish(Duration::ZERO);
    }
    Outcome::new(Status::Timeout, time)
}

/// The outcome of a call during which the runner died: its exit status, reaped.
pub(crate) fn died(runner: &mut Option<Runner>, time: Duration) -> Outcome {
    let mut runner = runner.take().expect("running");
    let status = runner.finish(Duration::from_secs(2));
    let mut outcome = Outcome::new(status, time);
    outcome.died_in_call = true;
    outcome
}

/// Why [`Runner::spawn`] failed: a pipe or file operation (what, why), or the start.
pub(crate) enum SpawnError {
    Io(&'static str, std::io::Error),
    Spawn(std::io::Error),
}

impl Runner {
    /// Starts a long-lived process speaking thicket's protocol: requests on its fd 3,
    /// replies on its fd 4, stdin `/dev/null`, stdout and stderr into `output`, in a
    /// process group of its own, marked by `owner`, dying with thicket. `setup` runs in
    /// the child before exec (async-signal-safe calls only).
    pub(crate) fn spawn(
        command: &mut Command,
        output: &File,
        owner: &reap::Owner,
        setup: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> Result<Runner, SpawnError> {
        let io = |what: &'static str| move |e| SpawnError::Io(what, e);
        let (req_r, req_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        let (rep_r, rep_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        // The child's ends, above the numbers they take in the child; the originals are
        // closed at once, so that the parent holds no write end of the reply pipe (a
        // runner that dies is then seen at once, as the end of the pipe).
        let child_req = sys::dup_above(&req_r, 10).map_err(io("cannot duplicate a pipe"))?;
        let child_rep = sys::dup_above(&rep_w, 10).map_err(io("cannot duplicate a pipe"))?;
        drop((req_r, rep_w));
        command
            .stdin(Stdio::null())
            .stdout(Stdio::from(
                output.try_clone().map_err(io("cannot share a file"))?,
            ))
            .stderr(Stdio::from(
                output.try_clone().map_err(io("cannot share a file"))?,
            ))
            .process_group(0);
        owner.mark(command);
        let (req_fd, rep_fd) = (child_req.as_raw_fd(), child_rep.as_raw_fd());
        let mut setup = setup;
        // SAFETY: only dup2, fcntl, prctl and what `setup` does (setrlimit) run between
        // fork and exec.
        unsafe {
            command.pre_exec(move || {
                sys::die_with_parent();
                sys::dup_into_child(req_fd, 3)?;
                sys::dup_into_child(rep_fd, 4)?;
                setup()
            });
        }
        let child = reap::spawn(command).map_err(SpawnError::Spawn)?;
        drop((child_req, child_rep));
        Ok(Runner {
            child,
            to: req_w,
            from: rep_r,
            reaped: false,
            killed: false,
        })
    }

    /// Ends the runner (with its process group) and returns how it ended: its own end
    /// if it had ended or ends within a short grace, else the kill.
    pub(crate) fn finish(&mut self, grace: Duration) -> Status {
        if self.reaped {
            return Status::Signaled(libc::SIGKILL);
        }
        let pid = self.child.id() as libc::pid_t;
        let deadline = Instant::now() + grace;
        loop {
            if let Ok(Some((status, _))) = sys::wait4(pid, true) {
                self.reaped = true;
                sys::killpg(pid, libc::SIGKILL);
                return status_from_wait(status);
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        sys::killpg(pid, libc::SIGKILL);
        sys::kill(pid, libc::SIGKILL);
        self.killed = true;
        let status = sys::wait4(pid, false)
            .ok()
            .flatten()
            .map_or(Status::Signaled(libc::SIGKILL), |(s, _)| {
                status_from_wait(s)
            });
        self.reaped = true;
        status
    }

    /// The next message within `timeout`, watching the process: it may die (or close
    /// its pipe) without a word.
    pub(crate) fn receive(&mut self, timeout: Duration) -> Received {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(Duration::from_millis(100));
            match sys::wait_readable(self.from.as_raw_fd(), Some(slice)) {
                Ok(true) => {
                    return match read_message(&mut self.from, left) {
                        Ok(Some(bytes)) => Received::Message(bytes),
                        Ok(None) => Received::TimedOut,
                        Err(_) => Received::Gone,
                    };
                }
                Ok(false) => {}
                Err(_) => return Received::Gone,
            }
            if left.is_zero() {
                return Received::TimedOut;
            }
            // Ended without closing the pipe (a child of its own holds it)?
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return Received::Gone;
            }
        }
    }
}

pub(crate) enum Received {
    Message(Vec<u8>),
    TimedOut,
    /// The pipe closed or the process ended.
    Gone,
}

impl Drop for Runner {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        sys::killpg(pid, libc::SIGKILL);
        if !self.reaped {
            sys::kill(pid, libc::SIGKILL);
            let _ = self.child.wait();
        }
        reap::unregister(pid);
    }
}

/// Runs a Python function on each input in thicket's runner, with line and branch
/// coverage.
pub struct PythonExecutor {
    target: PythonTarget,
    limits: Limits,
    _dir: reap::TempDir,
    output: File,
    output_dirty: bool,
    runner: Option<Runner>,
    files: FxHashMap<String, FileInfo>,
    trace: PyTrace,
    tokens: Option<TokenTrace>,
    versions: String,
    include: Vec<String>,
    starts: u32,
    empty_runs: u64,
    analysed: u64,
    owner: reap::Owner,
}

impl PythonExecutor {
    /// Starts the runner and loads the target (a clear error if Python, coverage.py or
    /// the function is missing, or the interpreter dies or stalls before it is ready).
    pub fn new(
        target: PythonTarget,
        limits: Limits,
        work_dir: Option<&std::path::Path>,
    ) -> Result<PythonExecutor, ExecError> {
        let dir = reap::TempDir::new(work_dir)?;
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
            tokens: None,
            versions: String::new(),
            include: Vec::new(),
            starts: 0,
            empty_runs: 0,
            analysed: 0,
            owner: reap::Owner::new(),
        };
        executor.start()?;
        Ok(executor)
    }

    /// How often the runner was started (it restarts after a hang or a death).
    pub fn starts(&self) -> u32 {
        self.starts
    }

    /// How many source files runners analysed (once each, across restarts).
    pub fn files_analysed(&self) -> u64 {
        self.analysed
    }

    /// The coverage.py `include` patterns in use (the default ones if none were given).
    pub fn include(&self) -> &[String] {
        &self.include
    }

    fn start(&mut self) -> Result<(), ExecError> {
        self.runner = None;
        self.starts += 1;
        let io = |what: &'static str| move |e| ExecError::Io(what.into(), e);
        let mut command = Command::new(&self.target.python);
        command
            .arg("-c")
            .arg(RUNNER)
            .arg(&self.target.function)
            .arg(if self.target.bytes { "bytes" } else { "str" })
            .args(&self.target.include)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0")
            .env(
                "THICKET_TOKENIZER",
                self.target.tokenizer.as_deref().unwrap_or_default(),
            );
        self.output
            .set_len(0)
            .map_err(io("cannot truncate the output file"))?;
        let memory = self.limits.memory_mb;
        let mut runner = Runner::spawn(&mut command, &self.output, &self.owner, move || {
            if let Some(mb) = memory {
                sys::set_rlimit(libc::RLIMIT_AS, mb << 20)?;
            }
            Ok(())
        })
        .map_err(|e| match e {
            SpawnError::Io(what, e) => ExecError::Io(what.into(), e),
            SpawnError::Spawn(e) => ExecError::Spawn(self.target.python.display().to_string(), e),
        })?;
        let timeout = self.target.start_timeout;
        let reply = match runner.receive(timeout) {
            Received::Message(bytes) => bytes,
            Received::TimedOut => {
                runner.finish(Duration::ZERO);
                return Err(self.start_error(&format!(
                    "was not ready within {} (importing coverage.py and the target: does the \
                     module loop or wait at import?)",
                    human(timeout)
                )));
            }
            Received::Gone => {
                let status = runner.finish(Duration::from_millis(500));
                return Err(self.start_error(&self.ended_before_ready(status, runner.killed)));
            }
        };
        let reply: Reply = match serde_json::from_slice(&reply) {
            Ok(reply) => reply,
            Err(e) => {
                runner.finish(Duration::ZERO);
                return Err(self.start_error(&format!("sent a garbled greeting ({e})")));
            }
        };
        if let Some(code) = reply.exit {
            runner.finish(Duration::from_millis(500));
            return Err(self.start_error(&format!(
                "exited with code {code} before it was ready: os._exit at {} while loading \
                 the target",
                reply.frame.as_deref().unwrap_or("?")
            )));
        }
        if let Some(mut error) = reply.error {
            runner.finish(Duration::from_millis(500));
            if let Some(mb) = self.limits.memory_mb
                && error.starts_with("coverage.py cannot be imported")
            {
                error.push_str(&format!(
                    " (the memory limit of {mb} MiB may be too low for Python and coverage.py: \
                     try --memory 500 or more)"
                ));
            }
            return Err(ExecError::Python(error));
        }
        if reply.ready != Some(true) {
            runner.finish(Duration::ZERO);
            return Err(self.start_error("sent no greeting"));
        }
        // Tell the runner which files earlier runners analysed.
        let known: Vec<&String> = self.files.keys().collect();
        let known = serde_json::to_vec(&known).expect("paths serialize");
        let mut message = Vec::with_capacity(known.len() + 4);
        message.extend_from_slice(&(known.len() as u32).to_le_bytes());
        message.extend_from_slice(&known);
        if runner.to.write_all(&message).is_err() {
            let status = runner.finish(Duration::from_millis(500));
            return Err(self.start_error(&self.ended_before_ready(status, runner.killed)));
        }
        self.versions = format!(
            "Python {}, coverage.py {}",
            reply.python.unwrap_or_default(),
            reply.coverage.unwrap_or_default()
        );
        self.include = reply.include.unwrap_or_default();
        self.runner = Some(runner);
        Ok(())
    }

    /// Why a runner ended before its greeting, in words.
    fn ended_before_ready(&self, status: Status, killed: bool) -> String {
        let how = match status {
            _ if killed => {
                "closed its pipe to thicket before it was ready (does the target close file \
                 descriptors 3 and 4 at import?)"
                    .to_string()
            }
            Status::Signaled(sig) => format!(
                "was killed by signal {sig} ({}) before it was ready",
                crate::outcome::signal_name(sig)
            ),
            Status::Exited(code) => format!("exited with code {code} before it was ready"),
            Status::Timeout => "did not get ready".to_string(),
        };
        let mut why = how;
        if let Some(mb) = self.limits.memory_mb {
            why.push_str(&format!(
                " (the memory limit of {mb} MiB may be too low for Python and coverage.py: \
                 try --memory 500 or more)"
            ));
        } else if self.read_output().total() == 0 {
            why.push_str(&format!(
                " without a word (is `{}` a Python 3 interpreter?)",
                self.target.python.display()
            ));
        }
        why
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
        read_tail(&self.output)
    }

    fn learn(&mut self, new_files: FxHashMap<String, Analysis>) {
        for (path, analysis) in new_files {
            self.analysed += 1;
            self.files.insert(path, FileInfo::from_analysis(analysis));
        }
    }

    fn absorb(&mut self, arcs: FxHashMap<String, Vec<(i32, i32)>>) {
        self.trace.files.clear();
        let mut arcs: Vec<(String, Vec<(i32, i32)>)> = arcs.into_iter().collect();
        arcs.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, arcs) in arcs {
            let info = self.files.get(&path).cloned().unwrap_or_default();
            let mut lines: Vec<u32> = arcs
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .filter_map(|l| info.statement_of(l))
                .collect();
            lines.sort_unstable();
            lines.dedup();
            let mut branches: Vec<(i32, i32)> = arcs
                .into_iter()
                .filter(|&(from, _)| info.is_branch(from))
                .collect();
            branches.sort_unstable();
            if lines.is_empty() && branches.is_empty() {
                continue;
            }
            let mut functions: Vec<String> = Vec::new();
            for &line in &lines {
                if let Some(f) = info.function_of(line)
                    && !functions.iter().any(|g| g == f)
                {
                    functions.push(f.to_string());
                }
            }
            functions.sort_unstable();
            self.trace.files.push(PyFileTrace {
                path,
                lines,
                branches,
                statements: info.statements.len() as u32,
                branch_total: info.branch_total,
                functions,
            });
        }
        if self.trace.files.is_empty() {
            self.empty_runs += 1;
        }
    }

    /// Runs that reported no coverage at all (nothing matching the include patterns
    /// ran).
    pub fn empty_runs(&self) -> u64 {
        self.empty_runs
    }
}

pub(crate) fn human(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
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
        self.tokens = None;
        let Some(runner) = self.runner.as_mut() else {
            return Err(ExecError::Python("the runner is not running".into()));
        };
        let started = Instant::now();
        let mut message = Vec::with_capacity(input.len() + 4);
        message.extend_from_slice(&(input.len() as u32).to_le_bytes());
        message.extend_from_slice(input);
        let sent = runner.to.write_all(&message).is_ok();
        let received = if sent {
            runner.receive(self.limits.timeout)
        } else {
            Received::Gone
        };
        let time = started.elapsed();
        let mut outcome = match received {
            Received::Message(bytes) => {
                let reply: Reply = serde_json::from_slice(&bytes).map_err(|e| {
                    ExecError::Python(format!("the runner sent a garbled reply: {e}"))
                })?;
                if let Some(code) = reply.exit {
                    // os._exit in the target: the runner said where, then ended.
                    let mut runner = self.runner.take().expect("running");
                    let status = runner.finish(Duration::from_secs(2));
                    let mut outcome = Outcome::new(
                        if status == Status::Exited(code) {
                            status
                        } else {
                            Status::Exited(code)
                        },
                        time,
                    );
                    outcome.died_in_call = true;
                    outcome.exit_frame = reply.frame;
                    outcome
                } else {
                    let mut outcome = Outcome::new(Status::Exited(0), time);
                    if reply.ok == Some(false) {
                        outcome.exception = Some(Exception {
                            language: "python",
                            class: reply.exc.unwrap_or_default(),
                            frame: reply.frame.unwrap_or_default(),
                            message: reply.message.unwrap_or_default(),
                        });
                    }
                    if reply.pending > 0 {
                        // Set-up work (analysing newly imported files) is outside the
                        // input's time.
                        let runner = self.runner.as_mut().expect("running");
                        match runner.receive(ANALYSIS_TIMEOUT) {
                            Received::Message(bytes) => {
                                if let Ok(more) = serde_json::from_slice::<Reply>(&bytes) {
                                    self.learn(more.new_files);
                                }
                            }
                            _ => {
                                self.runner = None;
                                return Err(ExecError::Python(format!(
                                    "the runner did not finish analysing newly imported \
                                     source files within {}",
                                    human(ANALYSIS_TIMEOUT)
                                )));
                            }
                        }
                    }
                    self.absorb(reply.arcs);
                    self.tokens = reply.tokens.map(|tokens| TokenTrace {
                        tokens: tokens
                            .into_iter()
                            .map(|(index, start, end, value)| PyToken {
                                index,
                                start,
                                end,
                                value,
                            })
                            .collect(),
                        conds: reply
                            .conds
                            .into_iter()
                            .map(|(index, value, equal)| TokenCond {
                                index,
                                value,
                                equal,
                            })
                            .collect(),
                    });
                    outcome
                }
            }
            Received::TimedOut => hung(&mut self.runner, time),
            // The interpreter died (a crash in C code, a lost pipe, ...).
            Received::Gone => died(&mut self.runner, time),
        };
        self.owner.sweep();
        let output = self.read_output();
        self.output_dirty = output.total() > 0;
        if outcome.died_in_call
            && outcome.status == Status::Exited(LOST_PIPE)
            && output.text().contains("thicket runner: cannot reply")
        {
            return Err(ExecError::Python(format!(
                "the target cut the runner's pipe to thicket during a call: {}",
                output.text().trim()
            )));
        }
        outcome.stderr = output;
        Ok(outcome)
    }

    fn trace(&self) -> Trace<'_> {
        Trace::Python(&self.trace)
    }

    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        self.trace.covered_locations(out);
        true
    }

    fn token_trace(&self) -> Option<&TokenTrace> {
        self.tokens.as_ref()
    }

    fn describe(&self) -> String {
        format!(
            "Python runner ({}, line and branch coverage of {}): {}",
            self.versions,
            if self.include.is_empty() {
                "every file".to_string()
            } else {
                self.include.join(", ")
            },
            self.target.function
        )
    }

    fn timeout(&self) -> Duration {
        self.limits.timeout
    }

    fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    fn restarts(&self) -> u64 {
        u64::from(self.starts.saturating_sub(1))
    }

    fn wants_text(&self) -> bool {
        !self.target.bytes
    }

    fn target_package(&self) -> Option<String> {
        Some(self.target.package())
    }

    fn empty_runs(&self) -> u64 {
        self.empty_runs
    }
}

/// The end of an output file a runner writes (its last [`TAIL_BYTES`]).
pub(crate) fn read_tail(output: &File) -> Tail {
    let size = output.metadata().map(|m| m.len()).unwrap_or(0);
    if size == 0 {
        return Tail::new();
    }
    let start = size.saturating_sub(TAIL_BYTES as u64);
    let mut buf = vec![0u8; (size - start) as usize];
    let n = output.read_at(&mut buf, start).unwrap_or(0);
    buf.truncate(n);
    Tail::from_end(buf, size)
}

/// One length-prefixed message; `None` on timeout, an error if the pipe closed.
pub(crate) fn read_message(file: &mut File, timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
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
