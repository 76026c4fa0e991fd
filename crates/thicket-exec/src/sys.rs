//! Thin wrappers over the few system calls the executors need (pipes, poll, wait4,
//! signals, file descriptors in a child before `exec`).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::{Duration, Instant};

/// Turns a `-1` return into the current `errno`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A pipe whose both ends close on `exec` (read end, write end).
pub(crate) fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { Ok((File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))) }
}

/// Makes `fd` non-blocking.
pub(crate) fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    unsafe {
        let flags = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// In a child between `fork` and `exec`: makes `fd` available as `target`, inherited
/// by the program (async-signal-safe: only dup2 and fcntl).
pub(crate) fn dup_into_child(fd: RawFd, target: RawFd) -> io::Result<()> {
    if fd == target {
        // SAFETY: fcntl on an inherited descriptor; no memory is passed.
        unsafe {
            let flags = cvt(libc::fcntl(fd, libc::F_GETFD))?;
            cvt(libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC))?;
        }
        Ok(())
    } else {
        // SAFETY: dup2 between descriptors; the new one is not close-on-exec.
        cvt(unsafe { libc::dup2(fd, target) }).map(|_| ())
    }
}

/// Waits until `fd` is readable (or at its end), at most `timeout` (`None`: forever).
/// Returns whether it is.
pub(crate) fn wait_readable(fd: RawFd, timeout: Option<Duration>) -> io::Result<bool> {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        let ms = match deadline {
            None => -1,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                // Round up so that a short wait is not a busy loop.
                left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
            }
        };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n == -1 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n > 0 {
            return Ok(true);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(false);
        }
    }
}

/// What a bounded read of a fixed number of bytes came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// All bytes arrived.
    Done,
    /// The writer closed the pipe first.
    Closed,
    /// The time ran out.
    TimedOut,
}

/// Reads exactly `buf.len()` bytes from a blocking pipe, waiting at most `timeout`.
pub(crate) fn read_exact_timeout(
    file: &mut File,
    buf: &mut [u8],
    timeout: Option<Duration>,
) -> io::Result<ReadOutcome> {
    use std::io::Read;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if !wait_readable(file.as_raw_fd(), left)? {
            return Ok(ReadOutcome::TimedOut);
        }
        match file.read(&mut buf[got..]) {
            Ok(0) => return Ok(ReadOutcome::Closed),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(ReadOutcome::Done)
}

/// `wait4`: the status and peak resident memory (KiB) of a child, or `None` if it has
/// not exited and `nohang` is set.
pub(crate) fn wait4(pid: libc::pid_t, nohang: bool) -> io::Result<Option<(i32, u64)>> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if nohang { libc::WNOHANG } else { 0 };
        // SAFETY: valid pointers to locals.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == -1 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            return Ok(None);
        }
        return Ok(Some((status, usage.ru_maxrss.max(0) as u64)));
    }
}

/// Sends `signal` to process `pid` (errors such as "already gone" are ignored).
pub(crate) fn kill(pid: libc::pid_t, signal: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill has no memory arguments.
        unsafe { libc::kill(pid, signal) };
    }
}

/// Sends `signal` to the process group `pgid` (errors ignored).
pub(crate) fn killpg(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: killpg has no memory arguments.
        unsafe { libc::killpg(pgid, signal) };
    }
}

/// Sets a resource limit in a child before `exec` (async-signal-safe).
pub(crate) fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: a valid rlimit struct.
    cvt(unsafe { libc::setrlimit(resource, &limit) }).map(|_| ())
}

/// Duplicates `file` to a close-on-exec descriptor numbered at least `min` (so that
/// placing it at a fixed number in a child cannot clobber another one).
pub(crate) fn dup_above(file: &File, min: RawFd) -> io::Result<File> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor we then own.
    let fd = cvt(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) })?;
    // SAFETY: `fd` is fresh and owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// In a child before `exec`: be killed when thicket's thread that started it ends, so a
/// `kill -9` of thicket leaves no target running (async-signal-safe: one prctl).
pub(crate) fn die_with_parent() {
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
}

/// Makes this process the reaper of orphaned descendants (Linux 3.4+), so that what a
/// target starts and abandons is re-parented here and can be found and ended.
pub(crate) fn become_subreaper() -> bool {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}
