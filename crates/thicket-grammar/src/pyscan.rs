//! Python-aware scanning of Fandango spec text: where strings, comments, brackets and
//! logical lines begin and end, as Python's tokenizer (and Fandango's lexer, which
//! follows it) sees them. Nothing here parses Python; it only finds the extent of
//! Python code, so that the grammar parser can skip it and other crates can read it.
//!
//! Rules (Python's lexical analysis, as Fandango's `FandangoLexer.g4` implements it):
//! - a comment runs from `#` outside a string to the end of the line;
//! - a string is an optional prefix (`r`, `b`, `u`, `f` and the pairs `rb`, `br`, `fr`,
//!   `rf`, in any case) and `'`, `"`, `'''` or `"""`; a backslash keeps the next
//!   character inside it (also in raw strings, where it does not end the string); a
//!   single-quoted string ends at its line's end if not before;
//! - a line break inside `()`, `[]` or `{}`, or after a backslash, joins two physical
//!   lines into one logical line;
//! - indentation counts a tab as reaching the next multiple of 8 columns.

/// A logical line: one or more physical lines that Python reads as one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogicalLine {
    /// Offset of the first token.
    pub start: usize,
    /// One past the last token (trailing whitespace and comment excluded).
    pub end: usize,
    /// Indentation of the first physical line, in columns.
    pub indent: usize,
}

/// The string prefix letters Python accepts, lower-cased: `""` or one of these.
const PREFIXES: &[&str] = &["r", "u", "b", "f", "br", "rb", "fr", "rf"];

/// A string literal found by [`string_at`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StringLiteral {
    /// Offset of the prefix (or of the opening quote if there is none).
    pub start: usize,
    /// One past the closing quote (or where an unterminated string stops).
    pub end: usize,
    /// Offset of the first character between the quotes.
    pub body_start: usize,
    /// Offset of the closing quote (equal to `end` if unterminated).
    pub body_end: usize,
    /// The quote character.
    pub quote: u8,
    /// Whether the quotes are tripled.
    pub triple: bool,
    /// Whether the string has its closing quote(s).
    pub terminated: bool,
    /// `r` prefix.
    pub raw: bool,
    /// `b` prefix.
    pub bytes: bool,
    /// `f` prefix.
    pub format: bool,
}

/// The string literal starting at `pos` (at its prefix or opening quote), if one does.
pub fn string_at(text: &str, pos: usize) -> Option<StringLiteral> {
    let bytes = text.as_bytes();
    let mut quote_at = pos;
    while quote_at < bytes.len() && quote_at - pos < 2 && bytes[quote_at].is_ascii_alphabetic() {
        quote_at += 1;
    }
    let quote = *bytes.get(quote_at)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let prefix = text[pos..quote_at].to_ascii_lowercase();
    if !(prefix.is_empty() || PREFIXES.contains(&prefix.as_str())) {
        return None;
    }
    let triple = bytes.get(quote_at + 1) == Some(&quote) && bytes.get(quote_at + 2) == Some(&quote);
    let body_start = quote_at + if triple { 3 } else { 1 };
    let mut i = body_start;
    let (body_end, end, terminated) = loop {
        match bytes.get(i) {
            None => break (i, i, false),
            Some(b'\\') => i += 1 + char_len(text, i + 1),
            Some(b'\n' | b'\r') if !triple => break (i, i, false),
            Some(&c) if c == quote => {
                if !triple {
                    break (i, i + 1, true);
                }
                if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                    break (i, i + 3, true);
                }
                i += 1;
            }
            Some(_) => i += char_len(text, i),
        }
    };
    Some(StringLiteral {
        start: pos,
        end: end.min(text.len()),
        body_start,
        body_end: body_end.min(text.len()),
        quote,
        triple,
        terminated,
        raw: prefix.contains('r'),
        bytes: prefix.contains('b'),
        format: prefix.contains('f'),
    })
}

/// Length in bytes of the character at `i` (0 at the end of the text).
fn char_len(text: &str, i: usize) -> usize {
    text.get(i..)
        .and_then(|rest| rest.chars().next())
        .map_or(0, char::len_utf8)
}

/// Whether `c` may start a Python identifier.
pub fn is_identifier_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

/// Whether `c` may continue a Python identifier.
pub fn is_identifier_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Where a line break starts at `i` (`\n`, `\r\n` or `\r`), its length.
fn line_break_at(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'\n' => Some(1),
        b'\r' if bytes.get(i + 1) == Some(&b'\n') => Some(2),
        b'\r' => Some(1),
        _ => None,
    }
}

/// A backslash at `i` that joins its line with the next (spaces may stand between the
/// backslash and the line break, as Fandango's lexer allows): the offset after the
/// line break.
fn line_join_at(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'\\') {
        return None;
    }
    let mut j = i + 1;
    while matches!(bytes.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    line_break_at(bytes, j).map(|n| j + n)
}

/// A scanner over Python tokens: skips strings, comments and joined lines, tracks the
/// bracket depth.
struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// One past the last token seen.
    last_token_end: usize,
    /// Where the first triple-quoted string without its closing quotes starts.
    unterminated_triple: Option<usize>,
}

/// What [`Scanner::step`] met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A line break outside brackets: the end of a logical line (consumed).
    Newline,
    /// The end of the text.
    Eof,
    /// Anything else (consumed).
    Token,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, pos: usize) -> Scanner<'a> {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos,
            depth: 0,
            last_token_end: pos,
            unterminated_triple: None,
        }
    }

    /// Consumes one token, comment, blank or line break.
    fn step(&mut self) -> Step {
        let Some(&b) = self.bytes.get(self.pos) else {
            return Step::Eof;
        };
        if let Some(n) = line_break_at(self.bytes, self.pos) {
            self.pos += n;
            return if self.depth == 0 {
                Step::Newline
            } else {
                Step::Token
            };
        }
        match b {
            b' ' | b'\t' | b'\x0c' => self.pos += 1,
            b'#' => {
                while self.pos < self.bytes.len() && line_break_at(self.bytes, self.pos).is_none() {
                    self.pos += 1;
                }
            }
            b'\\' => match line_join_at(self.bytes, self.pos) {
                Some(next) => self.pos = next,
                None => self.token(1),
            },
            b'(' | b'[' | b'{' => {
                self.depth += 1;
                self.token(1);
            }
            b')' | b']' | b'}' => {
                // An unmatched closing bracket is the parser's to report; here it
                // does not go below zero.
                self.depth = self.depth.saturating_sub(1);
                self.token(1);
            }
            b'"' | b'\'' => self.string(),
            _ => {
                let c = self.text[self.pos..]
                    .chars()
                    .next()
                    .expect("not at the end");
                if is_identifier_start(c) {
                    if string_at(self.text, self.pos).is_some() {
                        self.string();
                    } else {
                        let len = self.text[self.pos..]
                            .find(|c: char| !is_identifier_continue(c))
                            .unwrap_or(self.text.len() - self.pos);
                        self.token(len);
                    }
                } else {
                    self.token(c.len_utf8());
                }
            }
        }
        Step::Token
    }

    fn token(&mut self, len: usize) {
        self.pos += len;
        self.last_token_end = self.pos;
    }

    fn string(&mut self) {
        let s = string_at(self.text, self.pos).expect("caller saw a string");
        if s.triple && !s.terminated {
            self.unterminated_triple.get_or_insert(s.start);
        }
        self.pos = s.end;
        self.last_token_end = s.end;
    }
}

/// The logical lines of `text`, blank and comment-only lines left out; or the offset
/// of a triple-quoted string that never ends (it would take in the rest of the text).
pub fn logical_lines(text: &str) -> Result<Vec<LogicalLine>, usize> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        // At the start of a physical line: measure its indentation.
        let mut indent = 0;
        while let Some(&b) = bytes.get(pos) {
            match b {
                b' ' => indent += 1,
                b'\t' => indent += 8 - indent % 8,
                b'\x0c' => indent = 0,
                _ => break,
            }
            pos += 1;
        }
        let blank = match bytes.get(pos) {
            None => break,
            Some(b'#') => true,
            Some(_) => line_break_at(bytes, pos).is_some(),
        };
        if blank {
            while pos < bytes.len() && line_break_at(bytes, pos).is_none() {
                pos += 1;
            }
            pos += line_break_at(bytes, pos).unwrap_or(0);
            continue;
        }
        let mut scanner = Scanner::new(text, pos);
        while let Step::Token = scanner.step() {}
        if let Some(at) = scanner.unterminated_triple {
            return Err(at);
        }
        if scanner.last_token_end > pos {
            lines.push(LogicalLine {
                start: pos,
                end: scanner.last_token_end,
                indent,
            });
        }
        pos = scanner.pos;
    }
    Ok(lines)
}

/// The end of a Python expression starting at `pos`: one past its last token before a
/// line break outside brackets, a `;` outside brackets, or `limit`.
pub fn expression_end(text: &str, pos: usize, limit: usize) -> usize {
    let text = &text[..limit];
    let mut scanner = Scanner::new(text, pos);
    loop {
        if scanner.depth == 0 && scanner.bytes.get(scanner.pos) == Some(&b';') {
            break;
        }
        match scanner.step() {
            Step::Token => {}
            Step::Newline | Step::Eof => break,
        }
    }
    scanner.last_token_end
}

/// The offset of the bracket closing the one at `open` (`(`, `[` or `{`), skipping
/// strings and comments and nested brackets; `None` if it is not closed before `limit`.
pub fn closing_bracket(text: &str, open: usize, limit: usize) -> Option<usize> {
    let text = &text[..limit];
    let mut scanner = Scanner::new(text, open);
    scanner.step();
    while scanner.depth > 0 {
        let before = scanner.pos;
        if scanner.step() == Step::Eof {
            return None;
        }
        if scanner.depth == 0 {
            return Some(before);
        }
    }
    None
}

/// Splits `text[start..end]` at commas outside brackets and strings: the parts'
/// ranges, without their surrounding whitespace.
pub fn split_top_level_commas(text: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let text = &text[..end];
    let mut scanner = Scanner::new(text, start);
    let mut parts = Vec::new();
    let mut part_start = start;
    loop {
        if scanner.depth == 0 && scanner.bytes.get(scanner.pos) == Some(&b',') {
            parts.push((part_start, scanner.pos));
            scanner.pos += 1;
            part_start = scanner.pos;
            continue;
        }
        if scanner.step() == Step::Eof {
            break;
        }
    }
    parts.push((part_start, end));
    parts
        .into_iter()
        .map(|(s, e)| trim_range(text, s, e))
        .collect()
}

/// A range without the whitespace (and joined line breaks) at its ends.
pub fn trim_range(text: &str, start: usize, end: usize) -> (usize, usize) {
    let slice = &text[start..end];
    let lead = slice.len()
        - slice
            .trim_start_matches(|c: char| c.is_whitespace() || c == '\\')
            .len();
    let trimmed = slice.trim_end_matches(|c: char| c.is_whitespace() || c == '\\');
    let end = start + trimmed.len();
    ((start + lead).min(end), end)
}

/// The first token after `pos` on the same logical line, skipping blanks and joined
/// line breaks (not comments: a comment ends the line).
pub fn skip_blanks(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\x0c') => pos += 1,
            Some(b'\\') => match line_join_at(bytes, pos) {
                Some(next) => pos = next,
                None => return pos,
            },
            _ => return pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(&str, usize)> {
        logical_lines(text)
            .unwrap()
            .into_iter()
            .map(|l| (&text[l.start..l.end], l.indent))
            .collect()
    }

    #[test]
    fn logical_lines_join_brackets_backslashes_and_triple_quoted_strings() {
        let text = "def f(a,\n      b):  # two\n\treturn '''x\n\ny'''\n\n# only a comment\n<a> ::= \\\n  'b' # c\nx = {1:\n 2}\n";
        assert_eq!(
            lines(text),
            vec![
                ("def f(a,\n      b):", 0),
                ("return '''x\n\ny'''", 8),
                ("<a> ::= \\\n  'b'", 0),
                ("x = {1:\n 2}", 0),
            ]
        );
    }

    #[test]
    fn quotes_in_comments_and_escaped_quotes_do_not_open_strings() {
        let text = "x = 'it\\'s' # don't\ny = r\"\\\"(\"\nz = 1";
        assert_eq!(
            lines(text),
            vec![("x = 'it\\'s'", 0), ("y = r\"\\\"(\"", 0), ("z = 1", 0)]
        );
        assert_eq!(
            logical_lines("x = 1\ny = \"\"\"never\n<a> ::= 'b'\n"),
            Err(10)
        );
    }

    #[test]
    fn strings_know_their_prefixes() {
        let s = string_at("rb'\\x00'", 0).unwrap();
        assert!(s.raw && s.bytes && !s.format && s.terminated);
        assert_eq!((s.body_start, s.body_end, s.end), (3, 7, 8));
        assert!(string_at("ab'x'", 0).is_none());
        assert!(string_at("abc", 0).is_none());
        let unterminated = string_at("'abc\nd'", 0).unwrap();
        assert!(!unterminated.terminated);
        assert_eq!(unterminated.end, 4);
    }

    #[test]
    fn expressions_end_at_the_line_or_a_semicolon_outside_brackets() {
        let text = "f(a,\n b) ; <x> ::= 'y'\nnext";
        assert_eq!(expression_end(text, 0, text.len()), 8);
        let text = "g(';') # c\nnext";
        assert_eq!(expression_end(text, 0, text.len()), 6);
    }

    #[test]
    fn brackets_and_commas_skip_strings() {
        let text = "{f('}', 2), g(3)}";
        assert_eq!(closing_bracket(text, 0, text.len()), Some(text.len() - 1));
        let parts = split_top_level_commas(text, 1, text.len() - 1);
        assert_eq!(
            parts.iter().map(|&(s, e)| &text[s..e]).collect::<Vec<_>>(),
            vec!["f('}', 2)", "g(3)"]
        );
        assert_eq!(closing_bracket("{1", 0, 2), None);
    }
}
