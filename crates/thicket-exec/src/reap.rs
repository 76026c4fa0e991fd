//! Leaving nothing behind: processes a target starts and abandons, and temporary
//! folders.
//!
//! thicket makes itself the *child subreaper* of its descendants (Linux): a process a
//! target starts and leaves behind (a `setsid()` daemon escapes the process group that a
//! timeout kills) is re-parented to thicket instead of init. Each executor marks the
//! processes it starts with an environment variable (`THICKET_EXEC_OWNER`, inherited by
//! their descendants); after a run ([`Owner::sweep`], at most every 20 ms) and when the
//! executor is dropped, thicket's children carrying the executor's mark that it did
//! not start itself are killed and reaped, as are orphans that already ended.
//! Processes thicket starts die with it (`PR_SET_PDEATHSIG`), so even a `kill -9` of
//! thicket leaves no target running.
//!
//! Temporary folders are named `.thicket-exec-<pid>-...`; creating one removes those of
//! processes that no longer exist (left by a `kill -9`), and [`cleanup_now`] removes
//! this process's own (for an exit that skips destructors, such as a second Ctrl-C).

use crate::{ExecError, sys};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

const MARK: &str = "THICKET_EXEC_OWNER";
const PREFIX: &str = ".thicket-exec-";

/// Processes started by executors (not orphans) and temporary folders in use.
struct Registry {
    children: BTreeSet<libc::pid_t>,
    dirs: Vec<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    children: BTreeSet::new(),
    dirs: Vec::new(),
});
static SUBREAPER: Once = Once::new();
static NEXT_OWNER: AtomicU64 = AtomicU64::new(0);

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts `command`, registering the child as started by an executor (so that sweeps
/// never take it for an orphan).
pub(crate) fn spawn(command: &mut Command) -> io::Result<Child> {
    let mut reg = registry();
    let child = command.spawn()?;
    reg.children.insert(child.id() as libc::pid_t);
    Ok(child)
}

/// Forgets a child once it has been waited for.
pub(crate) fn unregister(pid: libc::pid_t) {
    registry().children.remove(&pid);
}

/// The mark of one executor's processes, and the sweeping of its orphans.
pub(crate) struct Owner {
    token: String,
    last_sweep: Instant,
}

impl Owner {
    pub(crate) fn new() -> Owner {
        SUBREAPER.call_once(|| {
            sys::become_subreaper();
        });
        Owner {
            token: format!(
                "{}-{}",
                std::process::id(),
                NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
            ),
            last_sweep: Instant::now(),
        }
    }

    /// Marks the processes `command` starts (and their descendants) as this owner's.
    pub(crate) fn mark(&self, command: &mut Command) {
        command.env(MARK, &self.token);
    }

    /// Ends this owner's orphans, at most every 20 ms (a cheap read of one `/proc` file
    /// when there are none).
    pub(crate) fn sweep(&mut self) {
        if self.last_sweep.elapsed() >= Duration::from_millis(20) {
            self.sweep_now(false);
        }
    }

    /// Ends this owner's orphans now.
    fn sweep_now(&mut self, patient: bool) {
        self.last_sweep = Instant::now();
        sweep(&format!("{MARK}={}", self.token), None, patient);
    }

    /// Ends this owner's orphans now (waiting until they are gone) and returns how many
    /// of them were running outside process group `group`: processes a target moved
    /// out of its own group (`setsid`), which a kill of that group does not reach.
    pub(crate) fn end_escaped(&mut self, group: libc::pid_t) -> usize {
        self.last_sweep = Instant::now();
        sweep(&format!("{MARK}={}", self.token), Some(group), true)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.sweep_now(true);
    }
}

/// Kills and reaps this process's children that carry `mark` in their environment (an
/// exact `NAME=value` entry, or a prefix of one) and were not started by an executor;
/// reaps orphans that have ended. Repeats while it finds some (killing an orphan
/// re-parents its own children here). Returns how many running ones it killed outside
/// process group `spared` (all of them if `None`).
///
/// A process in the middle of `execve` shows an empty environment and command line for a
/// moment (the new image's are not laid out yet). A `patient` sweep (an executor's last,
/// the one after a run whose output others still hold, and [`cleanup_now`]) looks at such a
/// child again after 1 ms, at most 20 times, rather than taking it for a stranger:
/// otherwise a daemon exec'ing at that moment would outlive the executor. A process
/// started with an empty environment still has its command line and is not waited for.
/// The periodic sweeps are not patient: the next one catches it.
fn sweep(mark: &str, spared: Option<libc::pid_t>, patient: bool) -> usize {
    let me = std::process::id();
    let children_file = format!("/proc/{me}/task/{me}/children");
    let mut escaped = 0;
    let mut waits_left: u32 = if patient { 20 } else { 0 };
    for _ in 0..16 + waits_left {
        let Ok(text) = std::fs::read_to_string(&children_file) else {
            return escaped;
        };
        let pids: Vec<libc::pid_t> = text
            .split_ascii_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.is_empty() {
            return escaped;
        }
        let started: BTreeSet<libc::pid_t> = registry().children.clone();
        let mut found = false;
        let mut unsettled = false;
        for pid in pids.into_iter().filter(|p| !started.contains(p)) {
            // After the command's name (in parentheses, which may hold anything): the
            // state, the parent, the process group.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let mut fields = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_ascii_whitespace();
            let state = fields.next().and_then(|s| s.chars().next());
            let group = fields.nth(1).and_then(|g| g.parse::<libc::pid_t>().ok());
            if state == Some('Z') {
                // An orphan that ended: reap it.
                let _ = sys::wait4(pid, true);
                continue;
            }
            let environ = format!("/proc/{pid}/environ");
            let Ok(mut env) = std::fs::read(&environ) else {
                continue;
            };
            if env.is_empty() {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                if cmdline.is_empty() {
                    unsettled |= state.is_some();
                    continue;
                }
                // Its execve may have ended between the two reads.
                env = std::fs::read(&environ).unwrap_or_default();
            }
            let ours = env
                .split(|&b| b == 0)
                .any(|entry| entry.starts_with(mark.as_bytes()));
            if ours {
                found = true;
                if spared.is_none_or(|g| group != Some(g)) {
                    escaped += 1;
                }
                sys::kill(pid, libc::SIGKILL);
                let _ = sys::wait4(pid, false);
            }
        }
        if unsettled && waits_left > 0 {
            waits_left -= 1;
            std::thread::sleep(Duration::from_millis(1));
        } else if !found {
            return escaped;
        }
    }
    escaped
}

/// For an exit that skips destructors (a second Ctrl-C): kills every process the
/// executors started (with their process groups) and every orphan they left, and
/// removes the temporary folders. Safe to call from another thread.
pub fn cleanup_now() {
    let (children, dirs) = {
        let reg = registry();
        (reg.children.clone(), reg.dirs.clone())
    };
    for pid in children {
        sys::killpg(pid, libc::SIGKILL);
        sys::kill(pid, libc::SIGKILL);
    }
    sweep(&format!("{MARK}={}-", std::process::id()), None, true);
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A temporary folder `.thicket-exec-<pid>-XXXXXX`, removed when dropped (and by
/// [`cleanup_now`]).
pub(crate) struct TempDir {
    inner: tempfile::TempDir,
}

impl TempDir {
    /// A fresh folder inside `work_dir` (default: the system's temporary folder); first
    /// removes the folders of thicket processes that no longer exist.
    pub(crate) fn new(work_dir: Option<&Path>) -> Result<TempDir, ExecError> {
        let parent = work_dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        remove_stale(&parent);
        let inner = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
            .map_err(|e| ExecError::Io("cannot create a temporary folder".into(), e))?;
        registry().dirs.push(inner.path().to_path_buf());
        Ok(TempDir { inner })
    }

    pub(crate) fn path(&self) -> &Path {
        self.inner.path()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let path = self.inner.path().to_path_buf();
        registry().dirs.retain(|d| d != &path);
    }
}

/// Removes `.thicket-exec-<pid>-*` folders in `parent` whose process is gone.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest
            .split('-')
            .next()
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid <= 0 {
            continue;
        }
        // SAFETY: signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && entry.path().is_dir() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
