//! Diagnostics: errors and warnings about a spec, rendered rustc-style with a source
//! excerpt and a caret (through `codespan-reporting`), or as JSON for tools.

use crate::source::{LineCol, SourceFile, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
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
    ///
    /// Only the labelled lines are shown, long lines are cut around the labels and control
    /// characters are shown as symbols, so the cost and size of the output do not grow
    /// with the spec and a hostile spec cannot write to the terminal through it.
    pub fn render(&self, source: &SourceFile) -> String {
        let (source, this) = self.in_own_file(source);
        this.render_in(source)
    }

    /// The file (of `source` and the files attached to it) the primary label points
    /// into, and the diagnostic with its labels in that file's offsets. A label in
    /// another file becomes a note naming its place.
    fn in_own_file<'s>(
        &self,
        source: &'s SourceFile,
    ) -> (&'s SourceFile, std::borrow::Cow<'_, Diagnostic>) {
        if source.attached_files().next().is_none() {
            return (source, std::borrow::Cow::Borrowed(self));
        }
        let at = self.primary_span().map_or(0, |s| s.start as usize);
        let (file, _) = source.locate(at);
        let mut this = self.clone();
        this.labels.clear();
        for label in &self.labels {
            let (label_file, span) = source.locate_span(label.span);
            if std::ptr::eq(label_file, file) {
                this.labels.push(Label {
                    span,
                    ..label.clone()
                });
            } else {
                let at = label_file.line_col(span.start as usize);
                let what = if label.message.is_empty() {
                    "see"
                } else {
                    label.message.as_str()
                };
                this.notes
                    .push(format!("{what}: {}:{at}", label_file.name()));
            }
        }
        (file, std::borrow::Cow::Owned(this))
    }

    fn render_in(&self, source: &SourceFile) -> String {
        let severity = match self.severity {
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
        };
        let excerpt = Excerpt::new(source, self.labels.iter().map(|l| l.span));
        let labels = self
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                cs::Label::new(style, (), excerpt.map_span(source, l.span))
                    .with_message(escape_invisible(&l.message))
            })
            .collect();
        let diagnostic = cs::Diagnostic::new(severity)
            .with_code(self.code)
            .with_message(escape_invisible(&self.message))
            .with_labels(labels)
            .with_notes(
                self.notes
                    .iter()
                    .map(|n| escape_invisible(n).into_owned())
                    .collect(),
            );
        term::emit_into_string(&term::Config::default(), &excerpt, &diagnostic)
            .unwrap_or_else(|_| self.render_short(source))
    }

    /// One line: `file:line:col: error[code]: message`.
    pub fn render_short(&self, source: &SourceFile) -> String {
        let (source, this) = self.in_own_file(source);
        let at = this
            .primary_span()
            .map(|s| source.line_col(s.start as usize))
            .unwrap_or(LineCol { line: 1, column: 1 });
        format!("{}:{}: {}", source.name(), at, this.headline())
    }

    /// `error[code]: message` without a location.
    pub fn headline(&self) -> String {
        format!(
            "{}[{}]: {}",
            self.severity,
            self.code,
            escape_invisible(&self.message)
        )
    }

    /// A JSON value for tools: severity, code, message, file, line, column, notes.
    pub fn to_json(&self, source: &SourceFile) -> serde_json::Value {
        let (source, this) = self.in_own_file(source);
        let at = this
            .primary_span()
            .map(|s| source.line_col(s.start as usize));
        serde_json::json!({
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": source.name(),
            "line": at.map(|a| a.line),
            "column": at.map(|a| a.column),
            "notes": this.notes,
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

/// Characters of a long line shown before the first label on it.
const LINE_LEAD: usize = 40;

/// Characters of a long line shown in all; longer lines are cut around their labels.
const LINE_WIDTH: usize = 160;

/// At most this many diagnostics are rendered by [`render_diagnostics`].
pub const MAX_RENDERED: usize = 100;

/// Renders diagnostics rustc-style one after another, at most [`MAX_RENDERED`] of them,
/// then says how many more there are.
pub fn render_diagnostics(diagnostics: &[Diagnostic], source: &SourceFile) -> String {
    let mut out: String = diagnostics
        .iter()
        .take(MAX_RENDERED)
        .map(|d| d.render(source))
        .collect();
    if let Some(rest) = diagnostics
        .len()
        .checked_sub(MAX_RENDERED)
        .filter(|&n| n > 0)
    {
        out.push_str(&format!(
            "note: {rest} more diagnostic{} not shown\n\n",
            if rest == 1 { " is" } else { "s are" }
        ));
    }
    out
}

/// One line of an [`Excerpt`].
struct ExcerptLine {
    /// 0-based line index in the source.
    index: usize,
    /// Where the shown line starts in the excerpt's text.
    start: usize,
    /// The byte range of the source line that is shown.
    shown: std::ops::Range<usize>,
    /// Characters of the source line cut off before `shown`.
    skipped_chars: usize,
}

/// What one diagnostic shows of a source: just its labelled lines (and each next line,
/// which the renderer may show between two labels), each cut to a window around its
/// labels if it is long, with control and bidi characters replaced. Labels and the
/// reported `line:col` still refer to the source.
struct Excerpt<'a> {
    name: &'a str,
    text: String,
    lines: Vec<ExcerptLine>,
}

/// `… ` before a line cut at its start, ` …` after a line cut at its end.
const CUT_MARK: &str = "…";

impl<'a> Excerpt<'a> {
    fn new(source: &'a SourceFile, spans: impl Iterator<Item = Span>) -> Excerpt<'a> {
        let text = source.text();
        // Each labelled line with the earliest label start on it.
        let mut focus: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
        for span in spans {
            let range = clamp(span, source);
            let line = source.line_index(range.start);
            let at = focus.entry(line).or_insert(range.start);
            *at = (*at).min(range.start);
            if line + 1 < source.line_count() {
                focus.entry(line + 1).or_insert(usize::MAX);
            }
        }
        let mut excerpt = Excerpt {
            name: source.name(),
            text: String::new(),
            lines: Vec::new(),
        };
        for (index, first_label) in focus {
            let line = source.line_content(index);
            let mut shown = line.clone();
            if line.len() > LINE_WIDTH {
                // A line without labels (shown between two labelled ones) from its start.
                let anchor = if first_label == usize::MAX {
                    line.start
                } else {
                    first_label.clamp(line.start, line.end)
                };
                let mut from = line.start;
                if anchor - line.start > LINE_WIDTH - LINE_LEAD {
                    from = anchor.saturating_sub(LINE_LEAD).max(line.start);
                }
                while !text.is_char_boundary(from) {
                    from -= 1;
                }
                let mut to = (from + LINE_WIDTH).min(line.end);
                while !text.is_char_boundary(to) {
                    to -= 1;
                }
                shown = from..to;
            }
            let skipped_chars = text[line.start..shown.start].chars().count();
            let start = excerpt.text.len();
            if shown.start > line.start {
                excerpt.text.push_str(CUT_MARK);
                excerpt.text.push(' ');
            }
            excerpt
                .text
                .extend(text[shown.clone()].chars().map(displayed));
            if shown.end < line.end {
                excerpt.text.push(' ');
                excerpt.text.push_str(CUT_MARK);
            }
            excerpt.text.push('\n');
            excerpt.lines.push(ExcerptLine {
                index,
                start,
                shown,
                skipped_chars,
            });
        }
        excerpt
    }

    /// The excerpt line holding a source line.
    fn line(&self, index: usize) -> Option<&ExcerptLine> {
        self.lines
            .binary_search_by_key(&index, |l| l.index)
            .ok()
            .map(|i| &self.lines[i])
    }

    /// Where a source offset is shown: on its line, clamped to the shown part.
    fn map_offset(&self, source: &SourceFile, offset: usize, line: &ExcerptLine) -> usize {
        let offset = offset.clamp(line.shown.start, line.shown.end);
        let mut at = line.start;
        if line.shown.start > source.line_content(line.index).start {
            at += CUT_MARK.len() + 1;
        }
        at + source.text()[line.shown.start..offset]
            .chars()
            .map(|c| displayed(c).len_utf8())
            .sum::<usize>()
    }

    /// A source span as a range of the excerpt. A span is shown on the line where it
    /// starts; one that runs on past that line is cut at its end.
    fn map_span(&self, source: &SourceFile, span: Span) -> std::ops::Range<usize> {
        let range = clamp(span, source);
        let Some(line) = self.line(source.line_index(range.start)) else {
            return 0..0;
        };
        let start = self.map_offset(source, range.start, line);
        let end = self.map_offset(source, range.end.min(line.shown.end), line);
        start..end.max(start)
    }
}

impl<'e> Files<'e> for Excerpt<'_> {
    type FileId = ();
    type Name = &'e str;
    type Source = &'e str;

    fn name(&'e self, (): ()) -> Result<&'e str, files::Error> {
        Ok(self.name)
    }

    fn source(&'e self, (): ()) -> Result<&'e str, files::Error> {
        Ok(&self.text)
    }

    fn line_index(&'e self, (): (), byte_index: usize) -> Result<usize, files::Error> {
        let i = self.lines.partition_point(|l| l.start <= byte_index).max(1) - 1;
        self.lines
            .get(i)
            .map(|l| l.index)
            .ok_or(files::Error::IndexTooLarge {
                given: byte_index,
                max: 0,
            })
    }

    fn line_range(
        &'e self,
        (): (),
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, files::Error> {
        let i = self
            .lines
            .binary_search_by_key(&line_index, |l| l.index)
            .map_err(|_| files::Error::LineTooLarge {
                given: line_index,
                max: self.lines.last().map_or(0, |l| l.index),
            })?;
        let end = self
            .lines
            .get(i + 1)
            .map_or(self.text.len(), |next| next.start);
        Ok(self.lines[i].start..end)
    }

    fn column_number(
        &'e self,
        (): (),
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let range = self.line_range((), line_index)?;
        let line = self.line(line_index).expect("line_range found it");
        let mut shown = files::column_index(&self.text, range.clone(), byte_index);
        if self.text[range].starts_with(CUT_MARK) && line.skipped_chars > 0 {
            shown = shown.saturating_sub(2);
        }
        Ok(line.skipped_chars + shown + 1)
    }
}

/// Text from a spec as it may be written to a terminal: control characters and bidi
/// controls escaped (`\u{1b}`), everything else as it is.
pub fn escape_invisible(text: &str) -> std::borrow::Cow<'_, str> {
    let invisible = |c: char| c != '\n' && displayed(c) != c;
    if !text.chars().any(invisible) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if invisible(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// How a source character is shown in an excerpt: control characters as their Unicode
/// control pictures (`␀`, `␛`, ...), bidi controls as `�`, everything else as itself.
fn displayed(c: char) -> char {
    match c {
        '\t' => c,
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).expect("control pictures exist"),
        '\u{7f}' => '\u{2421}',
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            '\u{fffd}'
        }
        c if c.is_control() => '\u{fffd}',
        c => c,
    }
}

/// Keeps a span inside the text and on character boundaries.
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
    /// Renders the diagnostics rustc-style, each followed by a blank line (at most
    /// [`MAX_RENDERED`] of them).
    pub fn render(&self) -> String {
        render_diagnostics(&self.diagnostics, &self.source)
    }

    /// The line after the rendered diagnostics: `NAME has N errors`.
    pub fn summary(&self) -> String {
        let errors = self.diagnostics.iter().filter(|d| d.is_error()).count();
        let plural = if errors == 1 { "" } else { "s" };
        format!("{} has {errors} error{plural}", self.source.name())
    }

    /// Whether the spec could not be read at all (an `io` diagnostic), rather than
    /// read and found wrong.
    pub fn is_unreadable(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code == "io")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: usize) -> Diagnostic {
        Diagnostic::error("test", "something", Span::new(offset, offset + 1))
            .with_label_message("here")
    }

    #[test]
    fn long_lines_are_cut_around_the_label_and_keep_their_column() {
        let text = format!("<start> ::= {}\"x\"\nnext", "(".repeat(100_000));
        let source = SourceFile::new("deep.fan", text);
        let out = at(12 + 5000).render(&source);
        assert!(out.len() < 1000, "{} bytes", out.len());
        assert!(out.contains("deep.fan:1:5013"), "{out}");
        assert!(out.contains("… ((((") && out.contains("(((( …"), "{out}");
        // The caret stands under the labelled character: `1 │ `, `… `, then the lead.
        let caret = out.lines().find(|l| l.contains("^ here")).unwrap();
        assert_eq!(
            caret.chars().position(|c| c == '^'),
            Some(4 + 2 + LINE_LEAD),
            "{out}"
        );
        // A short line is shown whole.
        let out = at(0).render(&SourceFile::new("a.fan", "<a> ::= \"x\"\n"));
        assert!(out.contains("1 │ <a> ::= \"x\"\n"), "{out}");
    }

    #[test]
    fn control_characters_are_shown_as_symbols() {
        let source = SourceFile::new("ctl.fan", "<a> ::= \"x\" \u{1b}[2J \0\r\n<b> ::= \"y\"\r\n");
        let out = at(12).render(&source);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert!(out.contains("\"x\" ␛[2J ␀\n"), "{out}");
        assert!(out.contains("ctl.fan:1:13"), "{out}");
        // Messages quote spec text too.
        let d = Diagnostic::error("test", "pattern r\"\u{1b}\u{202e}\"", Span::new(0, 1))
            .with_label_message("\u{7}")
            .with_note("\u{9b}");
        let out = d.render(&source) + &d.render_short(&source);
        assert!(
            !out.chars().any(|c| displayed(c) != c && c != '\n'),
            "{out:?}"
        );
        assert!(out.contains(r#"pattern r"\u{1b}\u{202e}""#), "{out}");
    }

    #[test]
    fn at_most_max_rendered_diagnostics_are_rendered() {
        let source = SourceFile::new("many.fan", "x".repeat(200));
        let diagnostics: Vec<_> = (0..MAX_RENDERED + 7).map(at).collect();
        let out = render_diagnostics(&diagnostics, &source);
        assert_eq!(out.matches("error[test]").count(), MAX_RENDERED);
        assert!(out.contains("7 more diagnostics are not shown"), "{out}");
    }
}
