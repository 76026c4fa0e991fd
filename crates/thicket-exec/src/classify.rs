//! Failure classification: is an outcome a crash, a sanitizer report, an uncaught
//! exception, a match of the user's pattern, or a hang, and where did it happen.
//!
//! Failures are deduplicated by [`Failure::key`], the pair (kind, location). A location
//! comes from the report itself: the first stack frame outside the sanitizer runtime,
//! UBSan's `file:line:col`, the innermost Python frame, the first Java `at` frame, or
//! the text the user's pattern captured. Crashes by a bare signal and hangs carry no
//! location; a campaign tells those apart by the coverage they reach (as AFL does).
//! A non-zero exit code alone is not a failure: many programs exit 1 on invalid input.

use crate::outcome::{Outcome, Status, signal_name};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// The kind of a failure.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FailureKind {
    /// Killed by a signal (without a sanitizer report).
    Crash {
        /// The signal number.
        signal: i32,
    },
    /// A sanitizer's report.
    Sanitizer {
        /// `AddressSanitizer`, `UndefinedBehaviorSanitizer`, ...
        sanitizer: String,
        /// What it found: `heap-buffer-overflow`, `signed integer overflow`, ...
        bug: String,
    },
    /// An uncaught exception.
    Exception {
        /// `python` or `java`.
        language: String,
        /// The exception class.
        class: String,
    },
    /// The user's `--failure-pattern` matched the output.
    Pattern,
    /// A process meant to outlive the run (the Python runner's interpreter) exited
    /// during it, e.g. by `os._exit`.
    Exit {
        /// The exit code.
        code: i32,
    },
    /// The run exceeded its time limit.
    Hang,
}

impl FailureKind {
    /// A short label: `crash SIGSEGV`, `AddressSanitizer heap-buffer-overflow`,
    /// `python ValueError`, `pattern`, `hang`.
    pub fn label(&self) -> String {
        match self {
            FailureKind::Crash { signal } => format!("crash {}", signal_name(*signal)),
            FailureKind::Sanitizer { sanitizer, bug } => format!("{sanitizer} {bug}"),
            FailureKind::Exception { language, class } => format!("{language} {class}"),
            FailureKind::Pattern => "pattern".to_string(),
            FailureKind::Exit { code } => format!("exit {code}"),
            FailureKind::Hang => "hang".to_string(),
        }
    }
}

/// A classified failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// What kind of failure.
    #[serde(flatten)]
    pub kind: FailureKind,
    /// Where, if the report says (see the module docs).
    pub location: Option<String>,
    /// One line for humans.
    pub summary: String,
}

impl Failure {
    /// The deduplication key: kind and location.
    pub fn key(&self) -> String {
        format!(
            "{} @ {}",
            self.kind.label(),
            self.location.as_deref().unwrap_or("?")
        )
    }

    /// Whether this is a hang (saved apart from crashes, as AFL does).
    pub fn is_hang(&self) -> bool {
        self.kind == FailureKind::Hang
    }
}

/// Decides which outcomes are failures.
#[derive(Clone, Debug, Default)]
pub struct Classifier {
    /// The user's pattern, matched against stderr, then stdout.
    pub pattern: Option<Regex>,
    /// Exception classes that are expected (not failures), matched against the class
    /// name with or without its module.
    pub expected_exceptions: Vec<String>,
}

static SANITIZER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^==\d+==ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer|HWAddressSanitizer): ?([A-Za-z][\w-]*)?").unwrap()
});
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*#\d+ 0x[0-9a-f]+ (?:in (\S+) )?(\S.*)$").unwrap());
static UBSAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^(\S.*?:\d+(?::\d+)?): runtime error: (.*)$").unwrap());
static PY_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?m)^  File "(.*)", line (\d+), in (.*)$"#).unwrap());
static PY_EXC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$").unwrap());
static JAVA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^Exception in thread "[^"]*" ([\w.$]+)(?::\s*(.*))?$"#).unwrap()
});
static JAVA_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s+at (\S+\(.*\))\s*$").unwrap());

impl Classifier {
    /// The failure an outcome shows, if any.
    pub fn classify(&self, outcome: &Outcome) -> Option<Failure> {
        if outcome.status == Status::Timeout {
            return Some(Failure {
                kind: FailureKind::Hang,
                location: None,
                summary: format!("no end within {} ms", outcome.time.as_millis()),
            });
        }
        let stderr = outcome.stderr.text();
        if let Some(failure) = sanitizer(&stderr) {
            return Some(failure);
        }
        if let Some(e) = &outcome.exception {
            if self.expected(&e.class) {
                return None;
            }
            return Some(Failure {
                kind: FailureKind::Exception {
                    language: e.language.into(),
                    class: e.class.clone(),
                },
                location: Some(e.frame.clone()),
                summary: one_line(&format!("{}: {}", e.class, e.message)),
            });
        }
        if let (true, Status::Exited(code)) = (outcome.died_in_call, outcome.status) {
            return Some(Failure {
                kind: FailureKind::Exit { code },
                location: outcome.exit_frame.clone(),
                summary: format!(
                    "the process exited with code {code} during the call{}",
                    outcome
                        .exit_frame
                        .as_deref()
                        .map_or(String::new(), |f| format!(" (exit at {f})"))
                ),
            });
        }
        if let Status::Signaled(signal) = outcome.status {
            return Some(Failure {
                kind: FailureKind::Crash { signal },
                location: None,
                summary: format!("killed by signal {signal} ({})", signal_name(signal)),
            });
        }
        if outcome.status != Status::Exited(0)
            && let Some(failure) = python_traceback(&stderr).or_else(|| java_exception(&stderr))
        {
            if let FailureKind::Exception { class, .. } = &failure.kind
                && self.expected(class)
            {
                return None;
            }
            return Some(failure);
        }
        if let Some(pattern) = &self.pattern {
            for text in [stderr, outcome.stdout.text()] {
                if let Some(caps) = pattern.captures(&text) {
                    let whole = caps.get(0).map_or("", |m| m.as_str());
                    let location = caps.get(1).map_or(whole, |m| m.as_str());
                    return Some(Failure {
                        kind: FailureKind::Pattern,
                        location: Some(one_line(location)),
                        summary: one_line(whole),
                    });
                }
            }
        }
        None
    }

    fn expected(&self, class: &str) -> bool {
        let short = class.rsplit('.').next().unwrap_or(class);
        self.expected_exceptions
            .iter()
            .any(|e| e == class || e == short)
    }
}

/// A sanitizer report in stderr: ASan and friends (`==pid==ERROR: ...` and a stack), or
/// UBSan's `file:line:col: runtime error: ...`.
fn sanitizer(stderr: &str) -> Option<Failure> {
    // Most runs print nothing; a regex search still prepares its captures.
    if stderr.is_empty() {
        return None;
    }
    if let Some(caps) = SANITIZER.captures(stderr) {
        let header = caps.get(0).expect("whole match");
        let sanitizer = caps[1].to_string();
        let bug = caps.get(2).map_or("error", |m| m.as_str()).to_string();
        let after = &stderr[header.end()..];
        let location = FRAME
            .captures_iter(after)
            .find(|f| {
                let func = f.get(1).map_or("", |m| m.as_str());
                let file = f.get(2).map_or("", |m| m.as_str());
                !is_runtime_frame(func, file)
            })
            .map(|f| match f.get(1) {
                Some(func) => format!("{} {}", func.as_str(), f[2].trim()),
                None => f[2].trim().to_string(),
            });
        let line = stderr[header.start()..]
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        return Some(Failure {
            kind: FailureKind::Sanitizer { sanitizer, bug },
            location,
            summary: one_line(&line),
        });
    }
    if let Some(caps) = UBSAN.captures(stderr) {
        let message = caps[2].to_string();
        return Some(Failure {
            kind: FailureKind::Sanitizer {
                sanitizer: "UndefinedBehaviorSanitizer".into(),
                bug: ubsan_bug(&message),
            },
            location: Some(caps[1].to_string()),
            summary: one_line(&caps[0]),
        });
    }
    None
}

/// Frames of the sanitizer runtime itself (interceptors, the allocator).
fn is_runtime_frame(func: &str, file: &str) -> bool {
    [
        "__asan",
        "__interceptor",
        "__sanitizer",
        "__ubsan",
        "__msan",
        "__lsan",
        "__tsan",
    ]
    .iter()
    .any(|p| func.starts_with(p))
        || file.contains("compiler-rt")
        || file.contains("sanitizer_common")
        || file.contains("libclang_rt")
}

/// The kind of an undefined behaviour from UBSan's message, without its operands:
/// `signed integer overflow: 2147483647 + 1 cannot ...` gives `signed integer overflow`.
fn ubsan_bug(message: &str) -> String {
    let head = message.split(':').next().unwrap_or(message);
    let words: Vec<&str> = head
        .split_whitespace()
        .take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit() || c == '\'' || c == '-'))
        .take(6)
        .collect();
    if words.is_empty() {
        "runtime error".to_string()
    } else {
        words.join(" ")
    }
}

/// An uncaught Python exception in stderr: the class from the last line of the last
/// traceback, the location from its innermost frame.
fn python_traceback(stderr: &str) -> Option<Failure> {
    let start = stderr.rfind("Traceback (most recent call last):")?;
    let tb = &stderr[start..];
    let frame = PY_FRAME
        .captures_iter(tb)
        .last()
        .map(|c| format!("{}:{} in {}", &c[1], &c[2], &c[3]));
    // The exception line: the first unindented line after the header.
    let line = tb
        .lines()
        .skip(1)
        .find(|l| !l.starts_with(' ') && !l.is_empty())?;
    let caps = PY_EXC.captures(line)?;
    let class = caps[1].to_string();
    Some(Failure {
        kind: FailureKind::Exception {
            language: "python".into(),
            class,
        },
        location: frame,
        summary: one_line(line),
    })
}

/// An uncaught Java exception in stderr (`Exception in thread "main" ...` and its first
/// `at` frame).
fn java_exception(stderr: &str) -> Option<Failure> {
    let caps = JAVA.captures(stderr)?;
    let after = &stderr[caps.get(0).expect("whole").end()..];
    let location = JAVA_AT.captures(after).map(|c| c[1].to_string());
    Some(Failure {
        kind: FailureKind::Exception {
            language: "java".into(),
            class: caps[1].to_string(),
        },
        location,
        summary: one_line(&caps[0]),
    })
}

/// The first line, at most 300 characters.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(300).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Exception, Tail};
    use std::time::Duration;

    fn outcome(status: Status, stderr: &str) -> Outcome {
        let mut o = Outcome::new(status, Duration::from_millis(3));
        o.stderr = Tail::from_end(stderr.as_bytes().to_vec(), stderr.len() as u64);
        o
    }

    #[test]
    fn asan_report_names_the_bug_and_the_first_user_frame() {
        let report = "=================================================================\n\
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011 at pc 0x1 bp 0x2 sp 0x3\n\
READ of size 1 at 0x602000000011 thread T0\n\
    #0 0x4c3b5a in __interceptor_strlen /build/compiler-rt/lib/asan/asan_interceptors.cpp:100:3\n\
    #1 0x4f2c11 in parse_header /src/target.c:17:9\n\
    #2 0x4f2d00 in main /src/target.c:40:5\n";
        let f = Classifier::default()
            .classify(&outcome(Status::Signaled(libc::SIGABRT), report))
            .unwrap();
        assert_eq!(
            f.kind,
            FailureKind::Sanitizer {
                sanitizer: "AddressSanitizer".into(),
                bug: "heap-buffer-overflow".into()
            }
        );
        assert_eq!(
            f.location.as_deref(),
            Some("parse_header /src/target.c:17:9")
        );
        assert!(
            f.key()
                .starts_with("AddressSanitizer heap-buffer-overflow @ parse_header")
        );
    }

    #[test]
    fn unsymbolized_asan_frames_give_module_offsets() {
        let report = "==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
    #0 0x55d0 (/tmp/t+0x1234)\n";
        let f = Classifier::default()
            .classify(&outcome(Status::Signaled(6), report))
            .unwrap();
        assert_eq!(f.location.as_deref(), Some("(/tmp/t+0x1234)"));
    }

    #[test]
    fn ubsan_runtime_errors_are_failures_even_with_exit_zero() {
        let text = "t.c:12:14: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'\n";
        let f = Classifier::default()
            .classify(&outcome(Status::Exited(0), text))
            .unwrap();
        assert_eq!(
            f.kind,
            FailureKind::Sanitizer {
                sanitizer: "UndefinedBehaviorSanitizer".into(),
                bug: "signed integer overflow".into()
            }
        );
        assert_eq!(f.location.as_deref(), Some("t.c:12:14"));
    }

    #[test]
    fn python_tracebacks_give_class_and_innermost_frame() {
        let text = "Traceback (most recent call last):\n  File \"/x/main.py\", line 9, in <module>\n    run()\n  File \"/x/lib.py\", line 3, in run\n    raise KeyError('k')\nKeyError: 'k'\n";
        let f = Classifier::default()
            .classify(&outcome(Status::Exited(1), text))
            .unwrap();
        assert_eq!(
            f.kind,
            FailureKind::Exception {
                language: "python".into(),
                class: "KeyError".into()
            }
        );
        assert_eq!(f.location.as_deref(), Some("/x/lib.py:3 in run"));
        // Exit 0 with a printed traceback is a handled error, not a failure.
        assert!(
            Classifier::default()
                .classify(&outcome(Status::Exited(0), text))
                .is_none()
        );
        let expected = Classifier {
            expected_exceptions: vec!["KeyError".into()],
            ..Classifier::default()
        };
        assert!(
            expected
                .classify(&outcome(Status::Exited(1), text))
                .is_none()
        );
    }

    #[test]
    fn java_exceptions() {
        let text = "Exception in thread \"main\" java.lang.NullPointerException: boom\n\tat org.x.Parser.parse(Parser.java:42)\n\tat org.x.Main.main(Main.java:7)\n";
        let f = Classifier::default()
            .classify(&outcome(Status::Exited(1), text))
            .unwrap();
        assert_eq!(f.kind.label(), "java java.lang.NullPointerException");
        assert_eq!(
            f.location.as_deref(),
            Some("org.x.Parser.parse(Parser.java:42)")
        );
    }

    #[test]
    fn signals_hangs_patterns_and_plain_exits() {
        let c = Classifier {
            pattern: Some(Regex::new(r"assertion failed at (\w+)").unwrap()),
            ..Classifier::default()
        };
        let f = c.classify(&outcome(Status::Signaled(11), "")).unwrap();
        assert_eq!(f.kind.label(), "crash SIGSEGV");
        assert!(c.classify(&outcome(Status::Timeout, "")).unwrap().is_hang());
        assert!(
            c.classify(&outcome(Status::Exited(1), "bad input\n"))
                .is_none()
        );
        let f = c
            .classify(&outcome(
                Status::Exited(0),
                "note: assertion failed at parse_list\n",
            ))
            .unwrap();
        assert_eq!(f.kind, FailureKind::Pattern);
        assert_eq!(f.location.as_deref(), Some("parse_list"));
    }

    #[test]
    fn in_process_exceptions_win_over_exit_codes() {
        let mut o = outcome(Status::Exited(0), "");
        o.exception = Some(Exception {
            language: "python",
            class: "ValueError".into(),
            frame: "/lib/urllib/parse.py:201 in _check".into(),
            message: "Invalid IPv6 URL".into(),
        });
        let f = Classifier::default().classify(&o).unwrap();
        assert_eq!(
            f.key(),
            "python ValueError @ /lib/urllib/parse.py:201 in _check"
        );
        o.exception = Some(Exception {
            language: "java",
            class: "com.google.gson.JsonSyntaxException".into(),
            frame: "com.google.gson.internal.Streams.parse(Streams.java:59)".into(),
            message: "End of input".into(),
        });
        assert_eq!(
            Classifier::default().classify(&o).unwrap().key(),
            "java com.google.gson.JsonSyntaxException @ \
             com.google.gson.internal.Streams.parse(Streams.java:59)"
        );
    }
}
