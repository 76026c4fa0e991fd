//! A grammar in figures with its lint diagnostics (`thicket lint`): each rule's
//! summary, the totals, the verdict, and the report as data, also for a spec that
//! could not be read.

use crate::analysis::{Analysis, RuleSummary, lint};
use crate::{Diagnostic, Expr, Grammar, SourceFile, SpecError};

/// A grammar's rules and totals, and what linting it found.
pub struct LintSummary {
    /// Each rule's summary, in rule order.
    pub rules: Vec<RuleSummary>,
    /// The start rule's summary.
    pub start: RuleSummary,
    /// Literal and regex occurrences.
    pub terminals: usize,
    /// Alternatives of all rules.
    pub alternatives: usize,
    /// The lint's diagnostics, then the `extra` ones given.
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics that are errors.
    pub errors: usize,
}

impl LintSummary {
    /// Lints `grammar` and sums it up; `extra` diagnostics (a spec's own warnings) are
    /// counted with the lint's.
    pub fn new(grammar: &Grammar, extra: impl IntoIterator<Item = Diagnostic>) -> LintSummary {
        let analysis = Analysis::new(grammar);
        let mut diagnostics = lint(grammar, &analysis);
        diagnostics.extend(extra);
        let rules: Vec<RuleSummary> = grammar
            .symbols()
            .map(|s| analysis.rule_summary(grammar, s))
            .collect();
        LintSummary {
            start: analysis.rule_summary(grammar, grammar.start()),
            terminals: grammar
                .expr_ids()
                .filter(|&e| matches!(grammar.expr(e), Expr::Literal(_) | Expr::Regex(_)))
                .count(),
            alternatives: rules.iter().map(|r| r.alternatives).sum(),
            errors: diagnostics.iter().filter(|d| d.is_error()).count(),
            rules,
            diagnostics,
        }
    }

    /// Diagnostics that are warnings.
    pub fn warnings(&self) -> usize {
        self.diagnostics.len() - self.errors
    }

    /// Whether the spec fails the lint: it has errors, or warnings when they are denied.
    pub fn failed(&self, deny_warnings: bool) -> bool {
        self.errors > 0 || (deny_warnings && self.warnings() > 0)
    }

    /// The report as `thicket lint` prints it for people: a table of the rules (each
    /// one's minimal depth and length, alternatives, and whether it is reachable), the
    /// totals of the spec read from `source` with its number of `constraints`, and the
    /// verdict.
    pub fn text_lines(
        &self,
        grammar: &Grammar,
        source: &SourceFile,
        constraints: usize,
    ) -> Vec<String> {
        let width = self
            .rules
            .iter()
            .map(|r| r.name.len() + 2)
            .max()
            .unwrap_or(4)
            .max(4);
        let mut lines = vec![format!(
            "{:width$}  {:>9}  {:>10}  {:>12}",
            "rule", "min depth", "min length", "alternatives"
        )];
        for r in &self.rules {
            lines.push(format!(
                "{:width$}  {:>9}  {:>10}  {:>12}{}",
                format!("<{}>", r.name),
                never(r.min_depth),
                never(r.min_length),
                r.alternatives,
                if r.reachable { "" } else { "  (unreachable)" }
            ));
        }
        lines.push(format!(
            "\n{}: {} rules, {} alternatives, {} terminals, {constraints} constraint{}; start {}, minimal depth {}, minimal input length {}",
            source.name(),
            self.rules.len(),
            self.alternatives,
            self.terminals,
            plural(constraints),
            grammar.display_symbol(grammar.start()),
            never(self.start.min_depth),
            self.start.min_length.map_or("never".to_string(), |d| format!(
                "{d} byte{}",
                if d == 1 { "" } else { "s" }
            )),
        ));
        let verdict = match (self.errors, self.warnings()) {
            (0, 0) => "clean".to_string(),
            (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
        };
        lines.push(format!("{}: {verdict}", source.name()));
        lines
    }

    /// The report as data (docs/json-output.md): the spec read from `source`, its
    /// `notes`, whether it is a `protocol`, its number of `constraints`, the verdict
    /// with `deny_warnings`.
    pub fn to_json(
        &self,
        grammar: &Grammar,
        source: &SourceFile,
        notes: &[String],
        protocol: bool,
        constraints: usize,
        deny_warnings: bool,
    ) -> serde_json::Value {
        serde_json::json!({
            "file": source.name(),
            "ok": !self.failed(deny_warnings),
            "start": grammar.display_symbol(grammar.start()),
            "errors": self.errors,
            "warnings": self.warnings(),
            "diagnostics": self.diagnostics.iter().map(|d| d.to_json(source)).collect::<Vec<_>>(),
            "notes": notes,
            "protocol": protocol,
            "totals": {
                "rules": self.rules.len(),
                "alternatives": self.alternatives,
                "terminals": self.terminals,
                "min_depth": self.start.min_depth,
                "min_length": self.start.min_length,
                "constraints": constraints,
            },
            "rules": self.rules.iter().map(|r| serde_json::json!({
                "name": format!("<{}>", r.name),
                "alternatives": r.alternatives,
                "min_depth": r.min_depth,
                "min_length": r.min_length,
                "reachable": r.reachable,
            })).collect::<Vec<_>>(),
        })
    }
}

/// A figure, or `never` for a rule that cannot finish.
fn never(figure: Option<impl std::fmt::Display>) -> String {
    figure.map_or("never".to_string(), |d| d.to_string())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The report of a spec that could not be read: its diagnostics, and `null` for what
/// only a read grammar tells.
pub fn unloadable_json(error: &SpecError) -> serde_json::Value {
    let errors = error.diagnostics.iter().filter(|d| d.is_error()).count();
    serde_json::json!({
        "file": error.source.name(),
        "ok": false,
        "start": null,
        "errors": errors,
        "warnings": error.diagnostics.len() - errors,
        "diagnostics": error
            .diagnostics
            .iter()
            .map(|d| d.to_json(&error.source))
            .collect::<Vec<_>>(),
        "notes": [],
        "protocol": null,
        "totals": null,
        "rules": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_rules_and_flags_warnings_when_denied() {
        let spec = crate::load_spec_bytes(
            "t.bnf",
            b"<start> ::= <a> | \"x\"\n<a> ::= \"y\" \"z\"\n<unused> ::= \"u\"\n",
            &crate::LoadOptions::default(),
        )
        .unwrap();
        let summary = LintSummary::new(&spec.grammar, Vec::new());
        assert_eq!(summary.rules.len(), 3);
        assert_eq!(summary.terminals, 4);
        assert_eq!(summary.start.min_length, Some(1));
        assert_eq!(summary.errors, 0);
        assert!(summary.warnings() > 0, "an unreachable rule is warned of");
        assert!(!summary.failed(false) && summary.failed(true));
        let json = summary.to_json(&spec.grammar, &spec.source, &[], false, 0, true);
        assert_eq!(json["ok"], false);
        assert_eq!(json["totals"]["rules"], 3);
        let text = summary.text_lines(&spec.grammar, &spec.source, 0);
        assert!(text[0].starts_with("rule "), "{text:?}");
        assert!(text[3].starts_with("<unused>") && text[3].ends_with("(unreachable)"));
        let totals = format!(
            "3 rules, {} alternatives, 4 terminals, 0 constraints",
            summary.alternatives
        );
        assert!(text[4].contains(&totals), "{text:?}");
    }
}
