//! An input checked against its spec's grammar and constraints (`thicket check`): its
//! verdict, each violation explained (rendered and as data), and the JSON line of it.

use crate::InputReader;
use thicket_constraint::{Checker, Constraint};
use thicket_fandango::LoadedSpec;
use thicket_parse::ParseError;

/// The spec's own constraints that `thicket check` checks: all, none when `skip`
/// (`--no-spec-constraints`), or none when they do not `apply` (they are about whole
/// inputs and another start rule is given), with the note that says so.
pub fn spec_constraints(
    loaded: &LoadedSpec,
    skip: bool,
    apply: bool,
) -> (Vec<Constraint>, Option<String>) {
    if skip {
        return (Vec::new(), None);
    }
    if apply {
        return (loaded.core_constraints(), None);
    }
    let note = loaded.spec.constraints_start.is_some().then(|| {
        format!(
            "the `where` constraints of {} are about whole inputs; with --start they are not checked",
            loaded.spec.source.name()
        )
    });
    (Vec::new(), note)
}

/// The note that the spec called `spec` has no constraints and none were given, when
/// `constraints` is empty: only the grammar is checked.
pub fn no_constraints_note(spec: &str, constraints: &[Constraint]) -> Option<String> {
    constraints.is_empty().then(|| {
        format!("{spec} has no constraints and none were given: checking the grammar only")
    })
}

/// The verdict on one input.
pub enum Checked {
    /// In the language, every constraint holds.
    Valid,
    /// In the language, some constraint does not hold: each violation rendered and as
    /// data (empty when not explained).
    Invalid(Vec<(String, serde_json::Value)>),
    /// Not in the language: why, rendered with the input's excerpt, and as data.
    NotInLanguage(String, serde_json::Value),
    /// Could not be read (the message names the file).
    Unreadable(String),
    /// Its chart did not fit in memory (the message names the limit).
    OutOfMemory(String),
}

impl Checked {
    /// Reads `text` with `reader` and checks its tree with `checker`; with `explain`,
    /// each violation is explained with its witness.
    pub fn check(
        reader: &InputReader<'_>,
        checker: &Checker<'_>,
        text: &[u8],
        explain: bool,
    ) -> Checked {
        // The chart's memory is free again before checking needs its own.
        match reader.read(text) {
            Ok(tree) if !explain => {
                if checker.check(&tree).is_empty() {
                    Checked::Valid
                } else {
                    Checked::Invalid(Vec::new())
                }
            }
            Ok(tree) => {
                let violations = checker.explain(&tree);
                if violations.is_empty() {
                    Checked::Valid
                } else {
                    Checked::Invalid(
                        violations
                            .iter()
                            .map(|v| (checker.render(v, &tree), checker.to_json(v, &tree)))
                            .collect(),
                    )
                }
            }
            Err(ParseError::Rejected(r)) => Checked::NotInLanguage(
                format!("not in the language: {r}\n{}", r.excerpt(text)),
                // The same error object as `thicket parse --format json`.
                crate::parsed::rejection_json(&r),
            ),
            Err(e @ ParseError::OutOfMemory { .. }) => Checked::OutOfMemory(e.to_string()),
            Err(e @ ParseError::TooComplex { .. }) => {
                Checked::NotInLanguage(e.to_string(), serde_json::json!({"message": e.to_string()}))
            }
        }
    }

    /// The JSON line of the input called `name`: `{"file", "valid", "violations"}`, or
    /// `{"file", "valid": false, "error"}` when it was not checked.
    pub fn json_line(&self, name: &str) -> serde_json::Value {
        match self {
            Checked::Valid => serde_json::json!({"file": name, "valid": true, "violations": []}),
            Checked::Invalid(v) => serde_json::json!({
                "file": name, "valid": false,
                "violations": v.iter().map(|(_, j)| j.clone()).collect::<Vec<_>>(),
            }),
            Checked::NotInLanguage(_, e) => {
                serde_json::json!({"file": name, "valid": false, "error": e})
            }
            Checked::Unreadable(message) => serde_json::json!({
                "file": name, "valid": false,
                "error": {"message": message, "unreadable": true},
            }),
            Checked::OutOfMemory(message) => serde_json::json!({
                "file": name, "valid": false,
                "error": {"message": message, "out_of_memory": true},
            }),
        }
    }

    /// Why the input called `name` was not checked (it could not be read, or its chart
    /// did not fit in memory), as an error message naming it; `None` if it was.
    pub fn error(&self, name: &str) -> Option<String> {
        match self {
            // A read error names its file already; running out of memory does not.
            Checked::Unreadable(message) => Some(message.clone()),
            Checked::OutOfMemory(message) => Some(format!("{name}: {message}")),
            _ => None,
        }
    }

    /// The verdict on the input called `name` as `thicket check` prints it: `valid`, or
    /// `invalid` with each violation (or why it is not in the language) indented below;
    /// nothing for an input that was not checked ([`Checked::error`]).
    pub fn text_lines(&self, name: &str) -> Vec<String> {
        let explained: Vec<&str> = match self {
            Checked::Valid => return vec![format!("{name}: valid")],
            Checked::Invalid(v) => v.iter().flat_map(|(text, _)| text.lines()).collect(),
            Checked::NotInLanguage(text, _) => text.lines().collect(),
            Checked::Unreadable(_) | Checked::OutOfMemory(_) => return Vec::new(),
        };
        let mut lines = vec![format!("{name}: invalid")];
        lines.extend(explained.into_iter().map(|line| format!("  {line}")));
        lines
    }
}

/// The verdicts on a set of inputs, counted (`thicket check`'s summary).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Valid inputs.
    pub valid: usize,
    /// Inputs that violate a constraint.
    pub invalid: usize,
    /// Inputs not in the language.
    pub rejected: usize,
    /// Inputs not checked: unreadable, or too large for memory.
    pub unreadable: usize,
}

impl Tally {
    /// Counts one more verdict.
    pub fn add(&mut self, verdict: &Checked) {
        match verdict {
            Checked::Valid => self.valid += 1,
            Checked::Invalid(_) => self.invalid += 1,
            Checked::NotInLanguage(..) => self.rejected += 1,
            Checked::Unreadable(_) | Checked::OutOfMemory(_) => self.unreadable += 1,
        }
    }

    /// The summary line of `inputs` inputs.
    pub fn line(&self, inputs: usize) -> String {
        format!(
            "{inputs} inputs: {} valid, {} violate constraints, {} not in the language{}",
            self.valid,
            self.invalid,
            self.rejected,
            crate::files::unreadable_note(self.unreadable)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_print_and_count_as_check_reports_them() {
        let invalid = Checked::Invalid(vec![("violates\n  here".into(), serde_json::Value::Null)]);
        assert_eq!(
            invalid.text_lines("a"),
            ["a: invalid", "  violates", "    here"]
        );
        assert_eq!(Checked::Valid.text_lines("b"), ["b: valid"]);
        let unread = Checked::Unreadable("c: no such file".into());
        assert!(unread.text_lines("c").is_empty());
        assert_eq!(unread.error("c").as_deref(), Some("c: no such file"));
        let memory = Checked::OutOfMemory("over the limit".into());
        assert_eq!(memory.error("d").as_deref(), Some("d: over the limit"));
        let mut tally = Tally::default();
        for verdict in [&invalid, &Checked::Valid, &unread, &memory] {
            tally.add(verdict);
        }
        assert_eq!(
            tally.line(4),
            "4 inputs: 1 valid, 1 violate constraints, 0 not in the language, 2 unreadable"
        );
    }
}
