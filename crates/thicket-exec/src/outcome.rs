//! What one run of the program under test came to.

use serde::Serialize;
use std::time::Duration;

/// How many bytes of stdout and of stderr an [`Outcome`] keeps (the last ones), so that
/// a program printing megabytes costs no memory. Sanitizer reports and tracebacks end
/// the output and are far shorter.
pub const TAIL_BYTES: usize = 64 * 1024;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The program exited with this code.
    Exited(i32),
    /// A signal killed the program.
    Signaled(i32),
    /// The program ran out of time and was killed (with its process group).
    Timeout,
}

/// An exception a language runtime reported from inside the process (the Python runner
/// and the Java harness catch them; for other programs they are recognised in stderr by
/// `classify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Exception {
    /// The runtime that reported it: `python` or `java`.
    pub language: &'static str,
    /// The exception class, qualified by its module unless built in (`ValueError`,
    /// `json.decoder.JSONDecodeError`; Java: `com.google.gson.JsonSyntaxException`).
    pub class: String,
    /// The innermost frame: `file:line in function` (Python), or the innermost frame
    /// inside the subject's classes, `pkg.Class.method(File.java:line)` (Java).
    pub frame: String,
    /// The message (at most 2000 characters).
    pub message: String,
}

/// The end of a stream: the last [`TAIL_BYTES`] bytes and how many there were in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    buf: Vec<u8>,
    total: u64,
}

impl Tail {
    /// An empty tail.
    pub fn new() -> Tail {
        Tail::default()
    }

    /// Appends bytes, forgetting all but the last [`TAIL_BYTES`].
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if bytes.len() >= TAIL_BYTES {
            self.buf.clear();
            self.buf
                .extend_from_slice(&bytes[bytes.len() - TAIL_BYTES..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        // Trim only once twice the tail has gathered: amortised O(1) per byte.
        if self.buf.len() > 2 * TAIL_BYTES {
            let cut = self.buf.len() - TAIL_BYTES;
            self.buf.drain(..cut);
        }
    }

    /// A tail from bytes of which `total` were written in all (`bytes` is their end).
    pub fn from_end(bytes: Vec<u8>, total: u64) -> Tail {
        let mut tail = Tail { buf: bytes, total };
        if tail.buf.len() > TAIL_BYTES {
            let cut = tail.buf.len() - TAIL_BYTES;
            tail.buf.drain(..cut);
        }
        tail
    }

    /// The kept bytes (at most [`TAIL_BYTES`], the end of the stream).
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.buf.len().saturating_sub(TAIL_BYTES)..]
    }

    /// How many bytes the stream had in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept bytes as text (lossy), for messages and pattern matching.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }
}

/// What one run came to.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// Wall-clock time of the run.
    pub time: Duration,
    /// Peak resident memory in KiB, where the executor can measure it (the plain
    /// executor can; a forkserver reaps its children itself, so it cannot).
    pub peak_rss_kb: Option<u64>,
    /// The end of the program's standard output.
    pub stdout: Tail,
    /// The end of the program's standard error.
    pub stderr: Tail,
    /// An exception reported from inside the process (Python runner, Java harness).
    pub exception: Option<Exception>,
    /// The process was meant to outlive the run (the Python runner's interpreter, the
    /// Java harness's JVM) but ended during it (`os._exit`, `System.exit`, a crash in C
    /// code).
    pub died_in_call: bool,
    /// Where the process called `os._exit` or `System.exit`, if it said (Python:
    /// `file:line in function`; Java: `pkg.Class.method(File.java:line)`).
    pub exit_frame: Option<String>,
}

impl Outcome {
    /// An outcome with empty output and no exception.
    pub fn new(status: Status, time: Duration) -> Outcome {
        Outcome {
            status,
            time,
            peak_rss_kb: None,
            stdout: Tail::new(),
            stderr: Tail::new(),
            exception: None,
            died_in_call: false,
            exit_frame: None,
        }
    }

    /// A short description: `exit 0`, `signal 11 (SIGSEGV)`, `timeout`.
    pub fn describe(&self) -> String {
        match self.status {
            Status::Exited(code) => format!("exit {code}"),
            Status::Signaled(sig) => format!("signal {sig} ({})", signal_name(sig)),
            Status::Timeout => "timeout".to_string(),
        }
    }
}

/// The usual name of a signal (`SIGSEGV`), or `SIG<n>`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{signal}"),
    };
    name.to_string()
}

/// Reads a `wait` status word into a [`Status`]. A stopped child (persistent mode of
/// AFL++) counts as a normal end.
pub(crate) fn status_from_wait(status: i32) -> Status {
    if libc::WIFSIGNALED(status) {
        Status::Signaled(libc::WTERMSIG(status))
    } else if libc::WIFEXITED(status) {
        Status::Exited(libc::WEXITSTATUS(status))
    } else {
        Status::Exited(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_and_counts_everything() {
        let mut tail = Tail::new();
        for i in 0..100_000u32 {
            tail.push(format!("{i}\n").as_bytes());
        }
        assert_eq!(tail.bytes().len(), TAIL_BYTES);
        assert!(tail.text().ends_with("99999\n"));
        assert_eq!(
            tail.total(),
            (0..100_000u32)
                .map(|i| i.to_string().len() as u64 + 1)
                .sum::<u64>()
        );
        let mut big = Tail::new();
        big.push(&vec![b'x'; 3 * TAIL_BYTES]);
        big.push(b"end");
        assert_eq!(big.bytes().len(), TAIL_BYTES);
        assert!(big.bytes().ends_with(b"xend"));
    }

    #[test]
    fn wait_statuses() {
        assert_eq!(status_from_wait(3 << 8), Status::Exited(3));
        assert_eq!(
            status_from_wait(libc::SIGSEGV),
            Status::Signaled(libc::SIGSEGV)
        );
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
    }
}
