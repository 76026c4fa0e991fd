//! Tokens of the constraint language, following ISLa's lexer (`IslaLanguage.g4`):
//! identifiers may contain `_ - . ^` (so `str.len`, `str.to.int` and `id_1` are single
//! identifiers), `<name>` is a nonterminal, strings use `\" \\ \n \t \r \b` escapes,
//! `#` starts a comment.
//!
//! Two cases ISLa's lexer leaves implicit are decided here: a `.` directly followed by
//! `<` or by another `.` ends an identifier (it starts an XPath segment, as in
//! `attr.<id>` or `x..<y>`), and the operator spellings `str.++`, `re.++`, `re.+`,
//! `re.*`, `str.<=` and `str.<` are single identifiers.

use thicket_grammar::{Diagnostic, Span};

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier or keyword (`forall`, `str.len`, `opid`).
    Ident(String),
    /// `<name>`, holding `name`.
    Nonterminal(String),
    /// A decimal integer literal.
    Int(i128),
    /// A string literal, escapes decoded.
    Str(StringLit),
    /// Punctuation and operators: `( ) [ ] , : ; = . .. >= <= > < + - * /`.
    Punct(&'static str),
    /// End of the text.
    Eof,
}

/// A decoded string literal that remembers where each decoded byte was written, so
/// that errors inside match expressions can point at the right column.
#[derive(Clone, Debug, PartialEq)]
pub struct StringLit {
    /// The decoded text.
    pub text: String,
    /// `offsets[i]` is the source offset of decoded byte `i`; one extra entry marks the
    /// closing quote.
    pub offsets: Vec<u32>,
}

impl StringLit {
    /// The source span of decoded bytes `range`.
    pub fn span_of(&self, range: std::ops::Range<usize>) -> Span {
        let start = self.offsets[range.start.min(self.offsets.len() - 1)];
        let end = self.offsets[range.end.min(self.offsets.len() - 1)];
        Span {
            start,
            end: end.max(start + 1),
        }
    }
}

/// A token and where it is.
#[derive(Clone, Debug)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

const PUNCTS: &[&str] = &[
    "..", ">=", "<=", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", ".", ">", "<", "+", "-",
    "*", "/",
];

/// Operator identifiers that end in symbol characters (`re.++`, `str.<=`, ...), after
/// their `str.` / `re.` stem.
const SYMBOLIC_TAILS: &[&str] = &["++", "<=", "+", "*", "<"];

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'^'
}

fn ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'^' | b'-')
}

fn nonterminal_char(c: u8) -> bool {
    !c.is_ascii_whitespace() && !matches!(c, b'<' | b'>' | b'"' | b'(' | b')' | b',')
}

/// Splits `text[start..end]` into tokens. Offsets in spans are absolute, so a
/// constraint inside a spec file reports positions in that file.
pub fn tokenize(text: &str, start: usize, end: usize) -> Result<Vec<Token>, Box<Diagnostic>> {
    let bytes = &text.as_bytes()[..end];
    let mut pos = start;
    let mut tokens = Vec::new();
    loop {
        // Whitespace and comments.
        while pos < end {
            match bytes[pos] {
                b' ' | b'\t' | b'\n' | b'\r' => pos += 1,
                b'#' => {
                    while pos < end && bytes[pos] != b'\n' {
                        pos += 1;
                    }
                }
                _ => break,
            }
        }
        if pos >= end {
            tokens.push(Token {
                kind: TokenKind::Eof,
                span: Span::new(end, end),
            });
            return Ok(tokens);
        }
        let begin = pos;
        let c = bytes[pos];
        let kind = if ident_start(c) {
            pos = ident_end(bytes, pos, end);
            TokenKind::Ident(text[begin..pos].to_string())
        } else if c.is_ascii_digit() {
            while pos < end && bytes[pos].is_ascii_digit() {
                pos += 1;
            }
            let digits = &text[begin..pos];
            let value = digits.parse::<i128>().map_err(|_| {
                Box::new(
                    Diagnostic::error(
                        "integer-too-large",
                        format!("the integer {digits} is too large"),
                        Span::new(begin, pos),
                    )
                    .with_note("integers in constraints are limited to 128 bits"),
                )
            })?;
            TokenKind::Int(value)
        } else if c == b'"' {
            let (lit, next) = string_literal(text, pos, end)?;
            pos = next;
            TokenKind::Str(lit)
        } else if c == b'<'
            && pos + 1 < end
            && nonterminal_char(bytes[pos + 1])
            && bytes[pos + 1] != b'='
        {
            // `<name>` if a `>` closes it before any character a name cannot hold;
            // otherwise `<` is the less-than operator.
            let mut close = pos + 1;
            while close < end && nonterminal_char(bytes[close]) {
                close += 1;
            }
            if close < end && bytes[close] == b'>' {
                pos = close + 1;
                TokenKind::Nonterminal(text[begin + 1..close].to_string())
            } else {
                pos += 1;
                TokenKind::Punct("<")
            }
        } else if let Some(p) = PUNCTS
            .iter()
            .find(|p| bytes[pos..end].starts_with(p.as_bytes()))
        {
            pos += p.len();
            TokenKind::Punct(p)
        } else {
            let ch = text[pos..].chars().next().unwrap_or('?');
            return Err(Box::new(
                Diagnostic::error(
                    "unexpected-character",
                    format!("unexpected character {}", quote_char(ch)),
                    Span::new(pos, pos + ch.len_utf8()),
                )
                .with_label_message("not part of the constraint language"),
            ));
        };
        tokens.push(Token {
            kind,
            span: Span::new(begin, pos),
        });
    }
}

fn quote_char(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("`{c}`")
    }
}

fn ident_end(bytes: &[u8], mut pos: usize, end: usize) -> usize {
    let start = pos;
    pos += 1;
    loop {
        while pos < end && ident_continue(bytes[pos]) {
            pos += 1;
        }
        if pos >= end || bytes[pos] != b'.' {
            return pos;
        }
        let rest = &bytes[pos + 1..end];
        let stem = &bytes[start..pos];
        if (stem == b"str" || stem == b"re")
            && let Some(tail) = SYMBOLIC_TAILS
                .iter()
                .find(|t| rest.starts_with(t.as_bytes()))
        {
            return pos + 1 + tail.len();
        }
        match rest.first() {
            Some(&c) if ident_continue(c) => pos += 1,
            // `.<x>` and `..<x>` are XPath segments; a lone `.` is punctuation.
            _ => return pos,
        }
    }
}

fn string_literal(
    text: &str,
    start: usize,
    end: usize,
) -> Result<(StringLit, usize), Box<Diagnostic>> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut offsets = Vec::new();
    let mut pos = start + 1;
    loop {
        if pos >= end {
            return Err(Box::new(
                Diagnostic::error(
                    "unterminated-string",
                    "this string is never closed",
                    Span::new(start, start + 1),
                )
                .with_label_message("opened here")
                .with_note("close it with `\"`; write a quote inside a string as `\\\"`"),
            ));
        }
        match bytes[pos] {
            b'"' => {
                offsets.push(pos as u32);
                return Ok((StringLit { text: out, offsets }, pos + 1));
            }
            b'\\' => {
                let escaped = bytes.get(pos + 1).copied().filter(|_| pos + 1 < end);
                let decoded = match escaped {
                    Some(b'n') => '\n',
                    Some(b't') => '\t',
                    Some(b'r') => '\r',
                    Some(b'b') => '\u{8}',
                    Some(b'0') => '\0',
                    Some(b'"') => '"',
                    Some(b'\\') => '\\',
                    _ => {
                        let shown = text[pos + 1..end].chars().next().map_or_else(
                            || "end of text".to_string(),
                            |c| format!("`\\{}`", c.escape_default()),
                        );
                        return Err(Box::new(
                            Diagnostic::error(
                                "bad-escape",
                                format!("unknown escape {shown} in a string"),
                                Span::new(pos, (pos + 2).min(end)),
                            )
                            .with_note("the escapes are \\\" \\\\ \\n \\t \\r \\b and \\0"),
                        ));
                    }
                };
                for _ in 0..decoded.len_utf8() {
                    offsets.push(pos as u32);
                }
                out.push(decoded);
                pos += 2;
            }
            _ => {
                let c = text[pos..].chars().next().expect("in bounds");
                for _ in 0..c.len_utf8() {
                    offsets.push(pos as u32);
                }
                out.push(c);
                pos += c.len_utf8();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text, 0, text.len())
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn ident(s: &str) -> TokenKind {
        TokenKind::Ident(s.to_string())
    }

    #[test]
    fn dotted_identifiers_and_xpath_segments() {
        assert_eq!(
            kinds("str.to.int(x) attr.<id> t..<b> re.++ str.<= re.* a-b"),
            vec![
                ident("str.to.int"),
                TokenKind::Punct("("),
                ident("x"),
                TokenKind::Punct(")"),
                ident("attr"),
                TokenKind::Punct("."),
                TokenKind::Nonterminal("id".into()),
                ident("t"),
                TokenKind::Punct(".."),
                TokenKind::Nonterminal("b".into()),
                ident("re.++"),
                ident("str.<="),
                ident("re.*"),
                ident("a-b"),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn less_than_is_an_operator_unless_a_name_follows() {
        assert_eq!(
            kinds("a < b <= <c-d>"),
            vec![
                ident("a"),
                TokenKind::Punct("<"),
                ident("b"),
                TokenKind::Punct("<="),
                TokenKind::Nonterminal("c-d".into()),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn strings_decode_escapes_and_keep_offsets() {
        let text = r#"  "a\"b\n" # comment"#;
        let tokens = tokenize(text, 0, text.len()).unwrap();
        let TokenKind::Str(lit) = &tokens[0].kind else {
            panic!("{tokens:?}")
        };
        assert_eq!(lit.text, "a\"b\n");
        // One offset per decoded byte (an escape's is its backslash), then the quote.
        assert_eq!(lit.offsets, vec![3, 4, 6, 7, 9]);
        assert_eq!(tokens[1].kind, TokenKind::Eof);
    }

    #[test]
    fn errors_name_the_position() {
        let e = tokenize("x = \"abc", 0, 8).unwrap_err();
        assert_eq!(e.code, "unterminated-string");
        assert_eq!(e.primary_span(), Some(Span::new(4, 5)));
        let e = tokenize("x = \"a\\q\"", 0, 9).unwrap_err();
        assert_eq!(e.code, "bad-escape");
        let e = tokenize("x @ y", 0, 5).unwrap_err();
        assert_eq!(e.code, "unexpected-character");
        let e = tokenize("x = 999999999999999999999999999999999999999999", 0, 46).unwrap_err();
        assert_eq!(e.code, "integer-too-large");
    }
}
