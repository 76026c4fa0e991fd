//! Source files and byte spans, with line/column lookup for error messages.

use std::fmt;

/// A half-open byte range `start..end` into a [`SourceFile`]'s text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Span {
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The span as a `usize` range, for slicing.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LineCol {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The text of a spec together with the name it is reported under.
///
/// Text that is not valid UTF-8 is stored lossily (invalid bytes become U+FFFD); the
/// spec reader reports such files as errors, pointing at the first invalid byte.
///
/// A spec read from several files (a Fandango spec's `include(...)`s and its standard
/// library) is one `SourceFile` for the main file with the others *attached*
/// ([`SourceFile::attach`]): each attached file occupies its own range of offsets after
/// the main text, so one [`Span`] type addresses every file. [`SourceFile::slice`],
/// [`SourceFile::line_col`] and the diagnostics' rendering look spans up in the file
/// that holds them; [`SourceFile::text`] and [`SourceFile::name`] are the main file's.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
    /// Files attached after the main text, by increasing base offset.
    attached: Vec<Attached>,
}

/// A file attached to a [`SourceFile`] and the offset its text starts at.
#[derive(Clone, Debug)]
struct Attached {
    base: usize,
    file: std::sync::Arc<SourceFile>,
}

impl SourceFile {
    /// A source file named `name` (usually its path) with the given text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            attached: Vec::new(),
        }
    }

    /// Attaches another file (one the main file includes) and returns the offset its
    /// text starts at: a span `s` of `file` is `Span::new(base + s.start, base + s.end)`
    /// here. Offsets stay below 2^32, as spans require: `None` if `file` does not fit.
    /// Files attached to `file` itself are not looked at; attach every file here.
    pub fn attach(&mut self, file: std::sync::Arc<SourceFile>) -> Option<usize> {
        let base = self.end_of_attached() + 1;
        let end = base.checked_add(file.text.len())?;
        if end >= u32::MAX as usize {
            return None;
        }
        self.attached.push(Attached { base, file });
        Some(base)
    }

    /// One past the last offset in use: the main text's length, or the end of the last
    /// attached file.
    fn end_of_attached(&self) -> usize {
        self.attached
            .last()
            .map_or(self.text.len(), |a| a.base + a.file.text.len())
    }

    /// The attached files with the offsets their texts start at.
    pub fn attached_files(&self) -> impl Iterator<Item = (usize, &SourceFile)> + '_ {
        self.attached.iter().map(|a| (a.base, a.file.as_ref()))
    }

    /// The file holding a byte offset (this one or an attached one) and the offset in
    /// that file's text. Offsets between files belong to the file before them.
    pub fn locate(&self, offset: usize) -> (&SourceFile, usize) {
        let i = self.attached.partition_point(|a| a.base <= offset);
        match i.checked_sub(1) {
            Some(i) => {
                let a = &self.attached[i];
                (a.file.as_ref(), offset - a.base)
            }
            None => (self, offset),
        }
    }

    /// The file holding a span (by its start) and the span in that file's text.
    pub fn locate_span(&self, span: Span) -> (&SourceFile, Span) {
        let (file, start) = self.locate(span.start as usize);
        let shift = span.start as usize - start;
        let end = (span.end as usize).saturating_sub(shift).max(start);
        (file, Span::new(start, end))
    }

    /// The name errors are reported under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text covered by `span`, in whichever file holds it.
    pub fn slice(&self, span: Span) -> &str {
        let (file, span) = self.locate_span(span);
        &file.text[span.range()]
    }

    /// Line and column of a byte offset (clamped to the end of its file's text), in
    /// whichever file holds it (see [`SourceFile::locate`] for which one that is).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let (file, offset) = self.locate(offset);
        file.own_line_col(offset)
    }

    /// The name of the file holding a byte offset.
    pub fn name_at(&self, offset: usize) -> &str {
        self.locate(offset).0.name()
    }

    fn own_line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let line_start = self.line_starts[line];
        let column = self.text[line_start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count()
            + 1;
        LineCol {
            line: line + 1,
            column,
        }
    }

    /// 0-based index of the line holding a byte offset (clamped to the text).
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// Byte range of a 0-based line without its line break (`\n` or `\r\n`).
    pub(crate) fn line_content(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.line_starts[line];
        let mut end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next - 1);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' && end < self.text.len() {
            end -= 1;
        }
        start..end
    }

    /// Number of lines (a text ending in a line break has an empty last line).
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset of a 1-based line and column (clamped to the text).
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let Some(&line_start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        self.text[line_start..]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| line_start + i)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let file = SourceFile::new("x", "ab\nçd\n");
        assert_eq!(file.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(file.line_col(3), LineCol { line: 2, column: 1 });
        // 'd' follows the two-byte 'ç'.
        assert_eq!(file.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(file.offset_of(2, 2), 5);
        assert_eq!(file.line_col(100), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn attached_files_have_their_own_offsets_names_and_lines() {
        let mut main = SourceFile::new("main.fan", "ab\n");
        let base = main
            .attach(std::sync::Arc::new(SourceFile::new("inc.fan", "x\nyz")))
            .unwrap();
        assert_eq!(base, 4);
        let second = main
            .attach(std::sync::Arc::new(SourceFile::new("lib.fan", "q")))
            .unwrap();
        assert_eq!(second, base + 5);
        assert_eq!(main.slice(Span::new(base + 2, base + 4)), "yz");
        assert_eq!(main.line_col(base + 3), LineCol { line: 2, column: 2 });
        assert_eq!(main.name_at(base + 3), "inc.fan");
        assert_eq!(main.name_at(1), "main.fan");
        assert_eq!(main.name_at(second), "lib.fan");
        // The main file's end is still the main file's.
        assert_eq!(main.name_at(3), "main.fan");
        assert_eq!(main.text(), "ab\n");
    }
}
