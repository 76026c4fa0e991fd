//! One runner process: starting it (code blocks and all), calls with a deadline, its
//! caches as thicket tracks them, and its end.

use crate::tree::TreeKey;
use crate::{PythonConfig, RUNNER, StartError, sys};
use rustc_hash::FxHashSet;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

/// Starts processes from one thread that lives as long as the host: a process asks
/// (`PR_SET_PDEATHSIG`) to be killed when the thread that started it ends, and the
/// threads that evaluate (a solver's workers) may end long before the host does.
pub(crate) struct Spawner {
    jobs: Mutex<Option<mpsc::Sender<SpawnJob>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type SpawnJob = (Command, mpsc::Sender<io::Result<Child>>);

impl Spawner {
    pub(crate) fn new() -> io::Result<Spawner> {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let thread = std::thread::Builder::new()
            .name("thicket-python-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })?;
        Ok(Spawner {
            jobs: Mutex::new(Some(tx)),
            thread: Some(thread),
        })
    }

    fn spawn(&self, command: Command) -> io::Result<Child> {
        let (tx, rx) = mpsc::channel();
        let sent = {
            let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            jobs.as_ref()
                .is_some_and(|jobs| jobs.send((command, tx)).is_ok())
        };
        if !sent {
            return Err(io::Error::other("the spawning thread ended"));
        }
        rx.recv()
            .unwrap_or_else(|_| Err(io::Error::other("the spawning thread ended")))
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Why a call got no reply.
pub(crate) enum CallError {
    /// The deadline passed (the process must be killed).
    TimedOut,
    /// The process ended (how, in words).
    Ended(String),
}

/// A runner process.
pub(crate) struct Process {
    child: Child,
    to: File,
    from: File,
    /// Expressions (by id) the process has compiled.
    defined: FxHashSet<u32>,
    /// The trees the process keeps, by slot: key and when last used.
    slots: Vec<Option<(TreeKey, u64)>>,
    clock: u64,
    /// The interpreter's version, from its greeting.
    version: String,
    /// The interpreter's executable, from its greeting.
    executable: Option<std::path::PathBuf>,
}

impl Process {
    /// Starts a runner, sends it `init` (code blocks, seed, time limit) and waits for it
    /// to be ready.
    pub(crate) fn start(
        config: &PythonConfig,
        init: &[u8],
        spawner: &Spawner,
    ) -> Result<Process, StartError> {
        let failed = |what: &str, e: io::Error| StartError::Failed {
            message: format!("cannot start Python: {what}: {e}"),
        };
        let (req_r, req_w) = sys::pipe().map_err(|e| failed("cannot create a pipe", e))?;
        let (rep_r, rep_w) = sys::pipe().map_err(|e| failed("cannot create a pipe", e))?;
        // The child's ends, above the numbers they take in the child; the originals are
        // closed at once so that the parent holds no write end of the reply pipe (a
        // process that dies is then seen at once, as the end of the pipe).
        let child_req =
            sys::dup_above(&req_r, 10).map_err(|e| failed("cannot duplicate a pipe", e))?;
        let child_rep =
            sys::dup_above(&rep_w, 10).map_err(|e| failed("cannot duplicate a pipe", e))?;
        drop((req_r, rep_w));
        sys::set_nonblocking(&req_w).map_err(|e| failed("cannot set up a pipe", e))?;

        let mut command = Command::new(&config.python);
        command
            .arg("-u")
            .arg("-c")
            .arg(RUNNER)
            .stdin(Stdio::null())
            .process_group(0);
        if std::env::var_os("PYTHONHASHSEED").is_none() {
            // Sets and dicts of strings iterate in the same order in every process and
            // run, so spec code is as reproducible as its seed.
            command.env("PYTHONHASHSEED", "0");
        }
        if config.quiet {
            command.stdout(Stdio::null()).stderr(Stdio::null());
        } else {
            // Spec code's prints go to thicket's stderr: its stdout may carry inputs.
            match io::stderr().as_fd().try_clone_to_owned() {
                Ok(fd) => command.stdout(Stdio::from(fd)).stderr(Stdio::inherit()),
                Err(_) => command.stdout(Stdio::null()).stderr(Stdio::inherit()),
            };
        }
        let (req_fd, rep_fd) = (child_req.as_raw_fd(), child_rep.as_raw_fd());
        let memory = config.memory_limit;
        // SAFETY: only prctl, dup2 and setrlimit run between fork and exec.
        unsafe {
            command.pre_exec(move || {
                sys::die_with_parent();
                sys::dup_into_child(req_fd, 3)?;
                sys::dup_into_child(rep_fd, 4)?;
                if let Some(bytes) = memory {
                    sys::limit_address_space(bytes)?;
                }
                Ok(())
            });
        }
        let child = match spawner.spawn(command) {
            Ok(child) => child,
            Err(error) => {
                return Err(StartError::NoPython {
                    python: config.python.clone(),
                    needed_for: config.needed_for.clone(),
                    error,
                });
            }
        };
        drop((child_req, child_rep));
        let mut process = Process {
            child,
            to: req_w,
            from: rep_r,
            defined: FxHashSet::default(),
            slots: vec![None; config.tree_slots.max(4)],
            clock: 0,
            version: String::new(),
            executable: None,
        };

        let python = config.python.display();
        let deadline = Instant::now() + config.start_timeout;
        let reply = match process.call(&framed(init), deadline) {
            Ok(reply) => reply,
            Err(CallError::TimedOut) => {
                return Err(StartError::Failed {
                    message: format!(
                        "the spec's Python code did not finish within {} (`{python}` runs the \
                         code blocks when it starts: does one loop or wait?)",
                        human(config.start_timeout)
                    ),
                });
            }
            Err(CallError::Ended(status)) => {
                let mut message = format!(
                    "the Python interpreter `{python}` ended before it was ready ({status})"
                );
                if let Some(bytes) = config.memory_limit {
                    message.push_str(&format!(
                        "; is the memory limit of {} MiB too low?",
                        bytes >> 20
                    ));
                }
                message.push_str(&format!("; is `{python}` a Python 3 interpreter?"));
                return Err(StartError::Failed { message });
            }
        };
        let reply: serde_json::Value =
            serde_json::from_slice(&reply).map_err(|e| StartError::Failed {
                message: format!("the Python runner sent a garbled greeting ({e})"),
            })?;
        if let Some(error) = reply.get("error").and_then(|e| e.as_str()) {
            let text = |k: &str| {
                reply
                    .get(k)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            let number = |k: &str| reply.get(k).and_then(|v| v.as_u64()).unwrap_or(0) as u32;
            return Err(StartError::CodeBlock {
                file: text("file"),
                line: number("line"),
                column: number("column"),
                message: error.to_string(),
                text: text("text"),
            });
        }
        if reply.get("ok").and_then(|v| v.as_bool()) != Some(true) {
            return Err(StartError::Failed {
                message: "the Python runner sent no greeting".into(),
            });
        }
        process.version = reply
            .get("python")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        process.executable = reply
            .get("executable")
            .and_then(|v| v.as_str())
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from);
        Ok(process)
    }

    /// The interpreter's own executable (`sys.executable`), if it named one: what a
    /// launcher such as a pyenv shim or a wrapper script started in the end.
    pub(crate) fn executable(&self) -> Option<&std::path::Path> {
        self.executable.as_deref()
    }

    /// The interpreter's version (`3.11.7`).
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// Sends `request` (framed) and waits for the reply until `deadline`.
    pub(crate) fn call(&mut self, request: &[u8], deadline: Instant) -> Result<Vec<u8>, CallError> {
        match sys::write_all_until(&mut self.to, request, deadline) {
            Ok(true) => {}
            Ok(false) => return Err(CallError::TimedOut),
            Err(_) => return Err(CallError::Ended(self.end())),
        }
        match sys::read_message(&mut self.from, deadline) {
            Ok(Some(reply)) => Ok(reply),
            Ok(None) => Err(CallError::TimedOut),
            Err(_) => Err(CallError::Ended(self.end())),
        }
    }

    /// Ends the process (its own end if it comes within a moment, else a kill) and says
    /// how it ended.
    fn end(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_millis(200);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return sys::describe_status(status);
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
        match self.child.wait() {
            Ok(status) => sys::describe_status(status),
            Err(e) => format!("cannot tell how: {e}"),
        }
    }

    fn kill(&mut self) {
        sys::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
        let _ = self.child.kill();
    }

    /// Whether the process has ended.
    pub(crate) fn has_ended(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Whether the process keeps the tree `key`.
    pub(crate) fn has(&self, key: TreeKey) -> bool {
        self.slots.iter().flatten().any(|&(k, _)| k == key)
    }

    /// The slot of tree `key` and whether the process has it already; a tree it lacks
    /// takes a free slot or the least recently used one (the process does the same when
    /// it receives the tree).
    pub(crate) fn place(&mut self, key: TreeKey) -> (u32, bool) {
        self.clock += 1;
        let now = self.clock;
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.is_some_and(|(k, _)| k == key))
        {
            self.slots[i] = Some((key, now));
            return (i as u32, true);
        }
        let i = self
            .slots
            .iter()
            .position(Option::is_none)
            .unwrap_or_else(|| {
                (0..self.slots.len())
                    .min_by_key(|&i| self.slots[i].map_or(0, |(_, used)| used))
                    .unwrap_or(0)
            });
        self.slots[i] = Some((key, now));
        (i as u32, false)
    }

    /// Whether the process has compiled expression `id`.
    pub(crate) fn is_defined(&self, id: u32) -> bool {
        self.defined.contains(&id)
    }

    /// Notes that the process has compiled expression `id`.
    pub(crate) fn defined(&mut self, id: u32) {
        self.defined.insert(id);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            // It ended by itself; its group may live on.
            sys::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
            return;
        }
        self.kill();
        let _ = self.child.wait();
    }
}

/// `message` with its length in front.
pub(crate) fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 4);
    out.extend_from_slice(&(message.len() as u32).to_le_bytes());
    out.extend_from_slice(message);
    out
}

/// A duration in words: `2 s`, `1500 ms`.
pub(crate) fn human(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
