//! The few system calls the host needs: pipes, descriptors in a child before `exec`,
//! bounded reads, signals, waiting, resource limits.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::{Duration, Instant};

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A pipe whose ends close on `exec` (read end, write end).
pub(crate) fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors are fresh and owned by nobody else.
    unsafe { Ok((File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))) }
}

/// A close-on-exec duplicate of `file` numbered at least `min`, so that placing it at a
/// fixed number in a child cannot clobber another one.
pub(crate) fn dup_above(file: &File, min: RawFd) -> io::Result<File> {
    // SAFETY: F_DUPFD_CLOEXEC creates a descriptor we then own.
    let fd = cvt(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) })?;
    // SAFETY: `fd` is fresh.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// In a child between `fork` and `exec`: `fd` becomes `target`, inherited by the
/// program (async-signal-safe: dup2 only).
pub(crate) fn dup_into_child(fd: RawFd, target: RawFd) -> io::Result<()> {
    // SAFETY: dup2 between descriptors; the new one is not close-on-exec.
    cvt(unsafe { libc::dup2(fd, target) }).map(|_| ())
}

/// In a child before `exec`: be killed when the thread that started it ends
/// (async-signal-safe: one prctl).
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

/// In a child before `exec`: limits its address space to `bytes` (async-signal-safe).
pub(crate) fn limit_address_space(bytes: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: a valid rlimit struct.
    cvt(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }).map(|_| ())
}

/// Makes `file` non-blocking (so that writes to a child that does not read cannot
/// block past a deadline).
pub(crate) fn set_nonblocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    unsafe {
        let flags = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// Writes all of `data` to a non-blocking pipe by `deadline`; whether it got through.
pub(crate) fn write_all_until(
    file: &mut File,
    mut data: &[u8],
    deadline: Instant,
) -> io::Result<bool> {
    use std::io::Write;
    while !data.is_empty() {
        match file.write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !wait_for(file.as_raw_fd(), libc::POLLOUT, deadline)? {
                    return Ok(false);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Waits until `fd` is readable (or at its end) until `deadline`; whether it is.
fn wait_readable(fd: RawFd, deadline: Instant) -> io::Result<bool> {
    wait_for(fd, libc::POLLIN, deadline)
}

/// Waits until `fd` has one of `events` (or an error or hang-up) until `deadline`;
/// whether it has.
fn wait_for(fd: RawFd, events: libc::c_short, deadline: Instant) -> io::Result<bool> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Round up so that a short wait is not a busy loop.
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        let mut pfd = libc::pollfd {
            fd,
            events,
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
        if Instant::now() >= deadline {
            return Ok(false);
        }
    }
}

/// What a bounded read came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// All bytes arrived.
    Done,
    /// The writer closed the pipe first.
    Closed,
    /// The time ran out.
    TimedOut,
}

/// Reads exactly `buf.len()` bytes from a blocking pipe by `deadline`.
pub(crate) fn read_exact_until(
    file: &mut File,
    buf: &mut [u8],
    deadline: Instant,
) -> io::Result<ReadOutcome> {
    use std::io::Read;
    let mut got = 0;
    while got < buf.len() {
        if !wait_readable(file.as_raw_fd(), deadline)? {
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

/// One length-prefixed message by `deadline` (a message that has begun gets a little
/// longer to arrive whole).
pub(crate) fn read_message(file: &mut File, deadline: Instant) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match read_exact_until(file, &mut len, deadline)? {
        ReadOutcome::Done => {}
        ReadOutcome::TimedOut => return Ok(None),
        ReadOutcome::Closed => return Err(io::ErrorKind::UnexpectedEof.into()),
    }
    let mut buf = vec![0u8; u32::from_le_bytes(len) as usize];
    let rest = deadline.max(Instant::now()) + Duration::from_secs(5);
    match read_exact_until(file, &mut buf, rest)? {
        ReadOutcome::Done => Ok(Some(buf)),
        ReadOutcome::TimedOut => Ok(None),
        ReadOutcome::Closed => Err(io::ErrorKind::UnexpectedEof.into()),
    }
}

/// Sends `signal` to the process group `pgid` (errors such as "already gone" ignored).
pub(crate) fn killpg(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: killpg has no memory arguments.
        unsafe { libc::killpg(pgid, signal) };
    }
}

/// How a child ended, in words: `exit code 3`, `signal 9 (SIGKILL)`.
pub(crate) fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(sig) => format!("signal {sig} ({})", signal_name(sig)),
        None => "an unknown status".to_string(),
    }
}

fn signal_name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        _ => "?",
    }
}
