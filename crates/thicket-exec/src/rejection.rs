//! Likely rejections: failures that are probably a parser saying "invalid input".
//!
//! A parser rejects what it cannot read by raising its documented error type
//! (`tomllib.TOMLDecodeError`, `json.JSONDecodeError`, gson's `JsonSyntaxException`). Every
//! raise site is a location of its own, so a campaign over inputs that are sometimes
//! invalid counts a dozen "distinct failures" of that one class, and a real crash among
//! them is easily missed. [`likely_rejection`] looks at the failures of a campaign (or a
//! set of runs) and names the class that is most likely the target's way of rejecting
//! input, so that reports can set those failures apart and suggest
//! `--expected-exception CLASS`. Nothing is reclassified: it is a hint.
//!
//! The heuristic, over failing runs (hangs left out), grouped by exception class: the
//! class with the most runs (of two as frequent, one that qualifies) is a likely
//! rejection if it is an exception (Python or Java) and either
//! - **the target's own error type**: defined in the target's own package
//!   ([`crate::Executor::target_package`]: Python, the top-level package of the target's
//!   module; Java, the target class's package or below), with a name ending in `Error` or
//!   `Exception`, and at least half of the failing runs; or
//! - **dominant**: at least nine in ten failing runs, at least ten of them, and not a
//!   class that signals a bug: a Python built-in other than the rejection types of the
//!   standard library's parsers (`ValueError` and its built-in subclasses, `SyntaxError`
//!   and its), or a JDK class other than the input errors
//!   ([`JDK_REJECTIONS`]). So `IndexError`, `RecursionError` or a
//!   `NullPointerException` is never suggested, however often it is raised.

use crate::FailureKind;
use serde::{Deserialize, Serialize};

/// Share of failing runs the target's own error type needs ("most").
pub const OWN_SHARE: f64 = 0.5;

/// Share of failing runs any other class needs to dominate.
pub const DOMINANT_SHARE: f64 = 0.9;

/// Failing runs a dominant class needs (a handful says little).
pub const DOMINANT_MIN_RUNS: u64 = 10;

/// Python built-ins that parsers raise for invalid input: `ValueError` and its built-in
/// subclasses (`int("x")`, codecs), `SyntaxError` and its (`ast.parse`, `compile`).
pub const PYTHON_REJECTIONS: [&str; 7] = [
    "ValueError",
    "UnicodeError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "SyntaxError",
    "IndentationError",
    "TabError",
];

/// JDK classes that parsers throw for invalid input.
pub const JDK_REJECTIONS: [&str; 6] = [
    "java.lang.IllegalArgumentException",
    "java.lang.NumberFormatException",
    "java.text.ParseException",
    "java.io.IOException",
    "java.io.EOFException",
    "java.io.UncheckedIOException",
];

/// Why a class is taken for a rejection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionReason {
    /// The target's own error type, raised in most failing runs.
    OwnErrorType,
    /// Raised in nearly all failing runs.
    Dominant,
}

/// An exception class that is likely the target's way of rejecting invalid input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LikelyRejection {
    /// `python` or `java`.
    pub language: String,
    /// The class, as failures name it and `--expected-exception` takes it.
    pub class: String,
    /// Why.
    pub reason: RejectionReason,
    /// Distinct failures (locations) of this class.
    pub distinct_failures: usize,
    /// Failing runs that raised it.
    pub runs: u64,
    /// Failing runs in all (hangs not counted).
    pub failing_runs: u64,
}

impl LikelyRejection {
    /// Whether a failure of this kind is one of these rejections.
    pub fn covers(&self, kind: &FailureKind) -> bool {
        matches!(kind, FailureKind::Exception { language, class }
            if *language == self.language && *class == self.class)
    }

    /// What these failures probably are, and the option that sets them aside, given
    /// the number of other failures that are not hangs.
    pub fn note(&self, other_failures: usize) -> String {
        let why = match self.reason {
            RejectionReason::OwnErrorType => "the target's own error type",
            RejectionReason::Dominant => "raised in nearly every failing run",
        };
        format!(
            "{} of {} distinct failures ({} of {} failing runs) are {}, {why}: likely how the \
             target rejects invalid input rather than bugs. If so, pass --expected-exception {} \
             so that {}.",
            self.distinct_failures,
            self.distinct_failures + other_failures,
            self.runs,
            self.failing_runs,
            self.class,
            self.class,
            match other_failures {
                0 => "real failures stand out".to_string(),
                1 => "the other failure stands out".to_string(),
                n => format!("the {n} other failures stand out"),
            }
        )
    }
}

/// The likely rejection among `failures` (each failure's kind and how many runs failed
/// so), given the target's own package (see the module docs); `None` if no class
/// qualifies.
pub fn likely_rejection<'a>(
    failures: impl IntoIterator<Item = (&'a FailureKind, u64)>,
    target_package: Option<&str>,
) -> Option<LikelyRejection> {
    // (language, class) -> (runs, distinct failures), in first-seen order.
    let mut classes: Vec<((&str, &str), u64, usize)> = Vec::new();
    let mut failing_runs = 0;
    for (kind, runs) in failures {
        match kind {
            FailureKind::Hang => continue,
            FailureKind::Exception { language, class } => {
                let id = (language.as_str(), class.as_str());
                match classes.iter_mut().find(|(c, _, _)| *c == id) {
                    Some(entry) => {
                        entry.1 += runs;
                        entry.2 += 1;
                    }
                    None => classes.push((id, runs, 1)),
                }
            }
            _ => {}
        }
        failing_runs += runs;
    }
    // The class with the most runs (of two as frequent, the one that qualifies).
    let most = classes.iter().map(|(_, runs, _)| *runs).max()?;
    classes
        .iter()
        .filter(|(_, runs, _)| *runs == most)
        .find_map(|&((language, class), runs, distinct_failures)| {
            let share = runs as f64 / failing_runs.max(1) as f64;
            let reason = if share >= OWN_SHARE && is_own_error_type(language, class, target_package)
            {
                RejectionReason::OwnErrorType
            } else if share >= DOMINANT_SHARE
                && runs >= DOMINANT_MIN_RUNS
                && !signals_a_bug(language, class)
            {
                RejectionReason::Dominant
            } else {
                return None;
            };
            Some(LikelyRejection {
                language: language.to_string(),
                class: class.to_string(),
                reason,
                distinct_failures,
                runs,
                failing_runs,
            })
        })
}

/// Whether `class` is an error type defined in the target's own package.
fn is_own_error_type(language: &str, class: &str, target_package: Option<&str>) -> bool {
    let Some(package) = target_package else {
        return false;
    };
    let name = class.rsplit(['.', '$']).next().unwrap_or(class);
    if !(name.ends_with("Error") || name.ends_with("Exception")) {
        return false;
    }
    match language {
        // `module.Class`; built-ins carry no module.
        "python" => class.split_once('.').is_some_and(|(top, _)| top == package),
        "java" => {
            let class_package = class.rsplit_once('.').map_or("", |(p, _)| p);
            class_package == package
                || (!package.is_empty()
                    && class_package
                        .strip_prefix(package)
                        .is_some_and(|rest| rest.starts_with('.')))
        }
        _ => false,
    }
}

/// Whether `class` is a language's own class that signals a bug rather than bad input.
fn signals_a_bug(language: &str, class: &str) -> bool {
    match language {
        "python" => !class.contains('.') && !PYTHON_REJECTIONS.contains(&class),
        "java" => {
            ["java.", "javax.", "jdk.", "sun."]
                .iter()
                .any(|p| class.starts_with(p))
                && !JDK_REJECTIONS.contains(&class)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exc(language: &str, class: &str) -> FailureKind {
        FailureKind::Exception {
            language: language.into(),
            class: class.into(),
        }
    }

    #[test]
    fn a_parsers_own_error_type_is_a_rejection_when_it_is_most_failures() {
        let toml = exc("python", "tomllib.TOMLDecodeError");
        let bug = exc("python", "IndexError");
        // Seventeen raise sites of the parser's error, one real crash.
        let mut failures: Vec<(&FailureKind, u64)> = vec![(&toml, 30); 17];
        failures.push((&bug, 2));
        failures.push((&FailureKind::Hang, 1000));
        let r = likely_rejection(failures.iter().copied(), Some("tomllib")).unwrap();
        assert_eq!(r.class, "tomllib.TOMLDecodeError");
        assert_eq!(r.reason, RejectionReason::OwnErrorType);
        assert_eq!(
            (r.distinct_failures, r.runs, r.failing_runs),
            (17, 510, 512)
        );
        // Another package's class is not the target's own: it must dominate.
        let r = likely_rejection(failures.iter().copied(), Some("json")).unwrap();
        assert_eq!(r.reason, RejectionReason::Dominant);
        // Not when the crashes are as many.
        let crashes = [(&toml, 5), (&bug, 5)];
        assert!(likely_rejection(crashes, Some("json")).is_none());
        assert!(likely_rejection(crashes, Some("tomllib")).is_some());
    }

    #[test]
    fn java_packages_and_nested_classes() {
        let gson = exc("java", "com.google.gson.stream.MalformedJsonException");
        let r = likely_rejection([(&gson, 3)], Some("com.google.gson")).unwrap();
        assert_eq!(r.reason, RejectionReason::OwnErrorType);
        assert!(likely_rejection([(&gson, 3)], Some("com.google.gs")).is_none());
        let nested = exc("java", "a.Parser$BadInput");
        assert!(likely_rejection([(&nested, 1)], Some("a")).is_none());
        let nested = exc("java", "a.Parser$SyntaxException");
        assert!(likely_rejection([(&nested, 1)], Some("a")).is_some());
        let default_package = exc("java", "ParseException");
        assert!(likely_rejection([(&default_package, 1)], Some("")).is_some());
    }

    #[test]
    fn bug_classes_are_never_suggested_however_often_they_are_raised() {
        for (language, class) in [
            ("python", "IndexError"),
            ("python", "RecursionError"),
            ("java", "java.lang.NullPointerException"),
            ("java", "java.lang.StackOverflowError"),
        ] {
            let kind = exc(language, class);
            assert!(likely_rejection([(&kind, 500)], None).is_none(), "{class}");
        }
        for (language, class) in [
            ("python", "ValueError"),
            ("python", "SyntaxError"),
            ("java", "java.lang.NumberFormatException"),
            ("java", "org.example.Whatever"),
        ] {
            let kind = exc(language, class);
            let r = likely_rejection([(&kind, 500)], None).unwrap();
            assert_eq!(r.reason, RejectionReason::Dominant, "{class}");
            // A handful says little.
            assert!(likely_rejection([(&kind, 3)], None).is_none(), "{class}");
        }
        // Crashes by signal are failures, never rejections.
        let segv = FailureKind::Crash { signal: 11 };
        assert!(likely_rejection([(&segv, 100)], None).is_none());
    }
}
