//! Diagnostics: errors and warnings about a spec, rendered rustc-style with a source
//! excerpt and a caret (through `codespan-reporting`), or as JSON for tools.

use crate::source::{LineCol, SourceFile, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a look, but the grammar is usable.
    Warning,
    /// The grammar cannot be used as written.
    Error,
}

/// A labelled region of the source.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Label {
    /// The region.
    pub span: Span,
    /// What to say about it (may be empty).
    pub message: String,
    /// Primary labels mark where the problem is; secondary ones give context.
    pub primary: bool,
}

/// One error or warning about a spec.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A short stable code, e.g. `undefined-rule`, for tools and for `--help` lookups.
    pub code: &'static str,
    /// One-line summary.
    pub message: String,
    /// Regions of the source the diagnostic is about; the first primary one is "where".
    pub labels: Vec<Label>,
    /// Extra lines of help.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with a primary label at `span`.
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message, span)
    }

    /// A warning with a primary label at `span`.
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message, span)
    }

    fn new(
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
        span: Span,
    ) -> Diagnostic {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
                primary: true,
            }],
            notes: Vec::new(),
        }
    }

    /// Sets the message of the primary label.
    pub fn with_label_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(label) = self.labels.first_mut() {
            label.message = message.into();
        }
        self
    }

    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Whether this is an error (as opposed to a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary location, if the diagnostic has one.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }

    /// Renders the diagnostic rustc-style: `error[code]: message`, then
    /// `┌─ file:line:col` and the source excerpt with carets.
    pub fn render(&self, source: &SourceFile) -> String {
        let file = SimpleFile::new(source.name(), source.text());
        let severity = match self.severity {
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
        };
        let labels = self
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                cs::Label::new(style, (), clamp(l.span, source)).with_message(&l.message)
            })
            .collect();
        let diagnostic = cs::Diagnostic::new(severity)
            .with_code(self.code)
            .with_message(&self.message)
            .with_labels(labels)
            .with_notes(self.notes.clone());
        term::emit_into_string(&term::Config::default(), &file, &diagnostic)
            .unwrap_or_else(|_| self.render_short(source))
    }

    /// One line: `file:line:col: error[code]: message`.
    pub fn render_short(&self, source: &SourceFile) -> String {
        let at = self
            .primary_span()
            .map(|s| source.line_col(s.start as usize))
            .unwrap_or(LineCol { line: 1, column: 1 });
        format!("{}:{}: {}", source.name(), at, self.headline())
    }

    /// `error[code]: message` without a location.
    pub fn headline(&self) -> String {
        format!("{}[{}]: {}", self.severity, self.code, self.message)
    }

    /// A JSON value for tools: severity, code, message, file, line, column, notes.
    pub fn to_json(&self, source: &SourceFile) -> serde_json::Value {
        let at = self.primary_span().map(|s| source.line_col(s.start as usize));
        serde_json::json!({
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": source.name(),
            "line": at.map(|a| a.line),
            "column": at.map(|a| a.column),
            "notes": self.notes,
        })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Keeps a span inside the text and on character boundaries, so rendering never fails.
fn clamp(span: Span, source: &SourceFile) -> std::ops::Range<usize> {
    let text = source.text();
    let mut start = (span.start as usize).min(text.len());
    let mut end = (span.end as usize).clamp(start, text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// A spec that could not be loaded, with everything that is wrong with it.
#[derive(Clone, Debug)]
pub struct SpecError {
    /// The source the diagnostics point into.
    pub source: std::sync::Arc<SourceFile>,
    /// The diagnostics, errors first.
    pub diagnostics: Vec<Diagnostic>,
}

impl SpecError {
    /// Renders every diagnostic rustc-style, separated by blank lines.
    pub fn render(&self) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&self.source))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.diagnostics.iter().find(|d| d.is_error()) {
            Some(d) => f.write_str(&d.render_short(&self.source)),
            None => write!(f, "{}: invalid spec", self.source.name()),
        }
    }
}

impl std::error::Error for SpecError {}
