//! Tokens of Fandango's constraint language: Python's tokens (names, numbers, string,
//! bytes and f-string literals, operators) plus the selector punctuation `..`, and
//! Python's layout tokens (`NEWLINE`, `INDENT`, `DEDENT`) outside brackets, as
//! Fandango's lexer (`FandangoLexer.g4` with its Python base class) makes them.
//!
//! A nonterminal `<name>` is three tokens (`<`, a name, `>`), as in Fandango: the
//! parser tells it from the less-than operator by position. Operators are read by
//! longest match, so `<a>=="x"` is `<` `a` `>=` `=` `"x"`, a syntax error in Fandango
//! too (the parser's message suggests a space).

use thicket_grammar::{Diagnostic, Span};

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name or keyword (`forall`, `str`, `x`).
    Name(String),
    /// An integer literal; `None` if it does not fit in 128 bits.
    Int(Option<i128>),
    /// A float or imaginary literal (kept as written).
    Float,
    /// A string or bytes literal, escapes decoded.
    Str(StrLit),
    /// An f-string: its parts are parsed by the parser.
    FString(FStringLit),
    /// An operator or punctuation.
    Op(&'static str),
    /// The end of a logical line (outside brackets).
    Newline,
    /// A deeper indentation.
    Indent,
    /// The end of an indented block.
    Dedent,
    /// The end of the text.
    Eof,
}

/// A string or bytes literal.
#[derive(Clone, Debug, PartialEq)]
pub struct StrLit {
    /// The decoded value; `None` if an escape is not decoded here (`\N{...}`).
    pub value: Option<StrValue>,
}

/// The value of a string or bytes literal.
#[derive(Clone, Debug, PartialEq)]
pub enum StrValue {
    /// A `str`.
    Text(String),
    /// A `bytes`.
    Bytes(Vec<u8>),
}

/// An f-string literal: where its body lies, and whether it is raw.
#[derive(Clone, Debug, PartialEq)]
pub struct FStringLit {
    /// The text between the quotes.
    pub body: Span,
    /// `rf"..."`.
    pub raw: bool,
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is (absolute offsets).
    pub span: Span,
}

/// Python's operators and delimiters, longest first, plus Fandango's `..` and `<>`.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "<>",
    ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "..", "+", "-", "*", "/", "%", "@",
    "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", ".", "!",
];

fn error(message: impl Into<String>, span: Span) -> Box<Diagnostic> {
    Box::new(Diagnostic::error("fandango-syntax", message, span))
}

/// Splits `text[start..end]` into tokens. `base_indent` is the indentation of the
/// line the text starts on (a `where` block's line): deeper lines open blocks.
pub fn tokenize(
    text: &str,
    start: usize,
    end: usize,
    base_indent: usize,
) -> Result<Vec<Token>, Box<Diagnostic>> {
    let mut lexer = Lexer {
        text,
        pos: start,
        end,
        tokens: Vec::new(),
        depth: 0,
        indents: vec![base_indent],
        at_line_start: false,
        brackets: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

/// The indentation (tabs to the next multiple of 8, as Python counts) of the line
/// holding `offset`.
pub fn indentation_of_line(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    indentation(&text[line_start..])
}

fn indentation(line: &str) -> usize {
    let mut count = 0;
    for c in line.chars() {
        match c {
            ' ' => count += 1,
            '\t' => count += 8 - count % 8,
            '\x0c' => count = 0,
            _ => break,
        }
    }
    count
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    end: usize,
    tokens: Vec<Token>,
    depth: usize,
    indents: Vec<usize>,
    at_line_start: bool,
    /// Open brackets, for the error when one is never closed.
    brackets: Vec<(char, Span)>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..self.end].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.pos..self.end].chars().nth(n)
    }

    fn push(&mut self, tok: Tok, start: usize) {
        self.tokens.push(Token {
            tok,
            span: Span::new(start, self.pos),
        });
    }

    fn run(&mut self) -> Result<(), Box<Diagnostic>> {
        loop {
            if self.at_line_start && self.depth == 0 {
                self.at_line_start = false;
                self.layout()?;
            }
            let Some(c) = self.peek() else { break };
            let start = self.pos;
            match c {
                ' ' | '\t' | '\x0c' | '\r' => self.pos += 1,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += self.peek().map_or(1, char::len_utf8);
                    }
                }
                '\\' if matches!(self.peek_at(1), Some('\n')) => self.pos += 2,
                '\\' if matches!(self.peek_at(1), Some('\r'))
                    && matches!(self.peek_at(2), Some('\n')) =>
                {
                    self.pos += 3
                }
                '\n' => {
                    self.pos += 1;
                    if self.depth == 0 {
                        // Blank and comment-only lines end nothing.
                        if !matches!(
                            self.tokens.last().map(|t| &t.tok),
                            None | Some(Tok::Newline | Tok::Indent | Tok::Dedent)
                        ) {
                            self.tokens.push(Token {
                                tok: Tok::Newline,
                                span: Span::new(start, start + 1),
                            });
                        }
                        self.at_line_start = true;
                    }
                }
                c if c.is_ascii_digit()
                    || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit())) =>
                {
                    self.number()?
                }
                c if c.is_alphabetic() || c == '_' => {
                    if !self.string_with_prefix()? {
                        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                            self.pos += self.peek().map_or(1, char::len_utf8);
                        }
                        let name = self.text[start..self.pos].to_string();
                        self.push(Tok::Name(name), start);
                    }
                }
                '"' | '\'' => self.string(start, "")?,
                _ => {
                    let rest = &self.text[self.pos..self.end];
                    let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                        return Err(error(
                            format!("unexpected character {c:?}"),
                            Span::new(start, start + c.len_utf8()),
                        ));
                    };
                    self.pos += op.len();
                    match *op {
                        "(" | "[" | "{" => {
                            self.depth += 1;
                            self.brackets.push((
                                op.chars().next().expect("one"),
                                Span::new(start, self.pos),
                            ));
                        }
                        ")" | "]" | "}" => {
                            self.depth = self.depth.saturating_sub(1);
                            self.brackets.pop();
                        }
                        _ => {}
                    }
                    self.push(Tok::Op(op), start);
                }
            }
        }
        if let Some(&(open, span)) = self.brackets.last() {
            return Err(Box::new(
                Diagnostic::error("fandango-syntax", format!("`{open}` is never closed"), span)
                    .with_label_message("opened here"),
            ));
        }
        let end = Span::new(self.end, self.end);
        if !matches!(
            self.tokens.last().map(|t| &t.tok),
            None | Some(Tok::Newline | Tok::Dedent)
        ) {
            self.tokens.push(Token {
                tok: Tok::Newline,
                span: end,
            });
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.tokens.push(Token {
                tok: Tok::Dedent,
                span: end,
            });
        }
        self.tokens.push(Token {
            tok: Tok::Eof,
            span: end,
        });
        Ok(())
    }

    /// At the start of a line outside brackets: INDENT or DEDENTs, unless the line is
    /// blank or a comment.
    fn layout(&mut self) -> Result<(), Box<Diagnostic>> {
        let line = &self.text[self.pos..self.end];
        let indent = indentation(line);
        let rest = line.trim_start_matches([' ', '\t', '\x0c']);
        if rest.is_empty() || rest.starts_with(['\n', '#']) || rest.starts_with("\r\n") {
            return Ok(());
        }
        let at = self.pos + (line.len() - rest.len());
        let current = *self.indents.last().expect("base level");
        if indent > current {
            self.indents.push(indent);
            self.tokens.push(Token {
                tok: Tok::Indent,
                span: Span::new(self.pos, at),
            });
        } else if indent < current {
            while *self.indents.last().expect("base level") > indent && self.indents.len() > 1 {
                self.indents.pop();
                self.tokens.push(Token {
                    tok: Tok::Dedent,
                    span: Span::new(at, at),
                });
            }
            if *self.indents.last().expect("base level") != indent {
                return Err(error(
                    "this line's indentation matches no enclosing block",
                    Span::new(self.pos, at.max(self.pos + 1)),
                ));
            }
        }
        Ok(())
    }

    fn number(&mut self) -> Result<(), Box<Diagnostic>> {
        let start = self.pos;
        let rest = &self.text[self.pos..self.end];
        let bytes = rest.as_bytes();
        let radix = match (bytes.first(), bytes.get(1).map(|b| b.to_ascii_lowercase())) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        if radix != 10 {
            let digits_start = 2;
            let mut i = digits_start;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            self.pos += i;
            let digits: String = rest[digits_start..i]
                .chars()
                .filter(|&c| c != '_')
                .collect();
            let valid = !digits.is_empty()
                && !rest[digits_start..i].ends_with('_')
                && !rest[digits_start..i].contains("__")
                && digits.chars().all(|c| c.is_digit(radix));
            if !valid {
                return Err(error(
                    format!("invalid base-{radix} integer literal"),
                    Span::new(start, self.pos),
                ));
            }
            let value = i128::from_str_radix(&digits, radix).ok();
            self.push(Tok::Int(value), start);
            return Ok(());
        }
        let mut i = 0;
        let digits = |i: &mut usize| {
            while *i < bytes.len() && (bytes[*i].is_ascii_digit() || bytes[*i] == b'_') {
                *i += 1;
            }
        };
        digits(&mut i);
        let mut float = false;
        if i < bytes.len() && bytes[i] == b'.' && bytes.get(i + 1) != Some(&b'.') {
            float = true;
            i += 1;
            digits(&mut i);
        }
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            let mut j = i + 1;
            if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                j += 1;
            }
            if j < bytes.len() && bytes[j].is_ascii_digit() {
                float = true;
                i = j;
                digits(&mut i);
            }
        }
        if i < bytes.len() && (bytes[i] == b'j' || bytes[i] == b'J') {
            float = true;
            i += 1;
        }
        self.pos += i;
        let written = &rest[..i];
        if written.contains("__") || written.ends_with('_') {
            return Err(error("invalid number literal", Span::new(start, self.pos)));
        }
        if self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return Err(error(
                "invalid number literal: a letter follows the digits",
                Span::new(start, self.pos + 1),
            ));
        }
        if float {
            self.push(Tok::Float, start);
            return Ok(());
        }
        let digits: String = written.chars().filter(|&c| c != '_').collect();
        if digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|c| c != '0') {
            return Err(Box::new(
                Diagnostic::error(
                    "fandango-syntax",
                    "leading zeros in decimal integer literals are not permitted",
                    Span::new(start, self.pos),
                )
                .with_note("write an octal number as `0o17`, as in Python"),
            ));
        }
        self.push(Tok::Int(digits.parse::<i128>().ok()), start);
        Ok(())
    }

    /// A name that is a string prefix directly followed by a quote starts a string.
    fn string_with_prefix(&mut self) -> Result<bool, Box<Diagnostic>> {
        let rest = &self.text[self.pos..self.end];
        let prefix_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let prefix = &rest[..prefix_len];
        let quote = rest[prefix_len..].starts_with(['"', '\'']);
        let lower = prefix.to_ascii_lowercase();
        let valid = matches!(
            lower.as_str(),
            "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
        );
        if !(quote && valid) {
            return Ok(false);
        }
        let start = self.pos;
        self.pos += prefix_len;
        self.string(start, &lower)?;
        Ok(true)
    }

    /// A string literal whose quote is at `self.pos`, `prefix` (lower case) before it.
    fn string(&mut self, start: usize, prefix: &str) -> Result<(), Box<Diagnostic>> {
        let raw = prefix.contains('r');
        let bytes_lit = prefix.contains('b');
        let fstring = prefix.contains('f');
        let rest = &self.text[self.pos..self.end];
        let quote_char = rest.chars().next().expect("a quote");
        let triple: String = std::iter::repeat_n(quote_char, 3).collect();
        let long = rest.starts_with(&triple);
        let quote_len = if long { 3 } else { 1 };
        self.pos += quote_len;
        let body_start = self.pos;
        let body_end;
        let mut brace_depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(error(
                    "this string literal is never closed",
                    Span::new(start, body_start),
                ));
            };
            if c == '\n' && !long && brace_depth == 0 {
                return Err(error(
                    "this string literal is never closed on its line",
                    Span::new(start, body_start),
                ));
            }
            if fstring && brace_depth > 0 && (c == '"' || c == '\'') {
                // A string inside a replacement field.
                let inner = self.pos;
                self.string(inner, "")?;
                self.tokens.pop();
                continue;
            }
            if c == '\\' {
                self.pos += 1;
                if let Some(next) = self.peek() {
                    self.pos += next.len_utf8();
                }
                continue;
            }
            if fstring {
                if c == '{' {
                    if brace_depth == 0 && self.peek_at(1) == Some('{') {
                        self.pos += 2;
                        continue;
                    }
                    brace_depth += 1;
                } else if c == '}' {
                    if brace_depth == 0 {
                        self.pos += if self.peek_at(1) == Some('}') { 2 } else { 1 };
                        continue;
                    }
                    brace_depth -= 1;
                }
            }
            if brace_depth == 0
                && self.text[self.pos..self.end].starts_with(if long {
                    triple.as_str()
                } else {
                    &triple[..quote_char.len_utf8()]
                })
            {
                body_end = self.pos;
                self.pos += quote_len;
                break;
            }
            self.pos += c.len_utf8();
        }
        let body = Span::new(body_start, body_end);
        if fstring {
            self.push(Tok::FString(FStringLit { body, raw }), start);
            return Ok(());
        }
        let value = decode(&self.text[body_start..body_end], raw, bytes_lit).map_err(
            |(offset, message)| {
                error(
                    message,
                    Span::new(body_start + offset, body_start + offset + 1),
                )
            },
        )?;
        self.push(Tok::Str(StrLit { value }), start);
        Ok(())
    }
}

/// Decodes a literal's body. `Ok(None)`: valid, but holds an escape not decoded here.
#[allow(clippy::type_complexity)]
pub fn decode(body: &str, raw: bool, bytes: bool) -> Result<Option<StrValue>, (usize, String)> {
    let mut out: Vec<u8> = Vec::new();
    let mut text = String::new();
    let mut undecoded = false;
    let push_char = |c: char, out: &mut Vec<u8>, text: &mut String| {
        if bytes {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        } else {
            text.push(c);
        }
    };
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if bytes && !c.is_ascii() {
            return Err((i, "bytes literals may only hold ASCII characters".into()));
        }
        if c != '\\' || raw {
            push_char(c, &mut out, &mut text);
            if c == '\\'
                && let Some(&(_, next)) = chars.peek()
            {
                // In a raw literal a backslash still keeps the next quote in.
                chars.next();
                push_char(next, &mut out, &mut text);
            }
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err((i, "a backslash ends the literal".into()));
        };
        let hex = |n: usize, chars: &mut std::iter::Peekable<std::str::CharIndices>| {
            let mut value = 0u32;
            for _ in 0..n {
                match chars.next() {
                    Some((_, d)) if d.is_ascii_hexdigit() => {
                        value = value * 16 + d.to_digit(16).expect("hex digit")
                    }
                    _ => return Err((i, format!("`\\{e}` needs {n} hex digits"))),
                }
            }
            Ok(value)
        };
        match e {
            '\n' => {}
            '\\' => push_char('\\', &mut out, &mut text),
            '\'' => push_char('\'', &mut out, &mut text),
            '"' => push_char('"', &mut out, &mut text),
            'a' => push_char('\x07', &mut out, &mut text),
            'b' => push_char('\x08', &mut out, &mut text),
            'f' => push_char('\x0c', &mut out, &mut text),
            'n' => push_char('\n', &mut out, &mut text),
            'r' => push_char('\r', &mut out, &mut text),
            't' => push_char('\t', &mut out, &mut text),
            'v' => push_char('\x0b', &mut out, &mut text),
            'x' => {
                let v = hex(2, &mut chars)?;
                if bytes {
                    out.push(v as u8);
                } else {
                    text.push(char::from_u32(v).expect("below 256"));
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).expect("octal");
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&(_, d)) if d.is_digit(8) => {
                            v = v * 8 + d.to_digit(8).expect("octal");
                            chars.next();
                        }
                        _ => break,
                    }
                }
                if bytes {
                    out.push((v & 0xFF) as u8);
                } else {
                    text.push(char::from_u32(v).expect("below 512"));
                }
            }
            'u' | 'U' if !bytes => {
                let v = hex(if e == 'u' { 4 } else { 8 }, &mut chars)?;
                match char::from_u32(v) {
                    Some(c) => text.push(c),
                    None => return Err((i, format!("`\\{e}{v:x}` is not a character"))),
                }
            }
            'N' if !bytes => {
                undecoded = true;
                for (_, c) in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
            }
            other => {
                // Python keeps an unknown escape as written.
                push_char('\\', &mut out, &mut text);
                push_char(other, &mut out, &mut text);
            }
        }
    }
    Ok(if undecoded {
        None
    } else if bytes {
        Some(StrValue::Bytes(out))
    } else {
        Some(StrValue::Text(text))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        tokenize(text, 0, text.len(), 0)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn nonterminals_are_three_tokens_and_operators_longest_match() {
        assert_eq!(
            toks("<a>..<b> <> 1"),
            vec![
                Tok::Op("<"),
                Tok::Name("a".into()),
                Tok::Op(">"),
                Tok::Op(".."),
                Tok::Op("<"),
                Tok::Name("b".into()),
                Tok::Op(">"),
                Tok::Op("<>"),
                Tok::Int(Some(1)),
                Tok::Newline,
                Tok::Eof
            ]
        );
        assert!(toks("<a>==1").contains(&Tok::Op(">=")));
    }

    #[test]
    fn literals_decode_as_python_does() {
        let t = toks(r#"0x1F 0o17 0b101 1_000 b"\x00\xff" 'a\tb' r"\d" 1.5"#);
        assert_eq!(t[0], Tok::Int(Some(31)));
        assert_eq!(t[1], Tok::Int(Some(15)));
        assert_eq!(t[2], Tok::Int(Some(5)));
        assert_eq!(t[3], Tok::Int(Some(1000)));
        assert_eq!(
            t[4],
            Tok::Str(StrLit {
                value: Some(StrValue::Bytes(vec![0, 255]))
            })
        );
        assert_eq!(
            t[5],
            Tok::Str(StrLit {
                value: Some(StrValue::Text("a\tb".into()))
            })
        );
        assert_eq!(
            t[6],
            Tok::Str(StrLit {
                value: Some(StrValue::Text("\\d".into()))
            })
        );
        assert_eq!(t[7], Tok::Float);
        assert!(tokenize("007", 0, 3, 0).is_err());
    }

    #[test]
    fn layout_tokens_outside_brackets_only() {
        let text = "forall <a> in <b>:\n    f(1,\n  2)\n";
        let t = toks(text);
        assert!(t.contains(&Tok::Indent));
        assert_eq!(t.iter().filter(|t| **t == Tok::Newline).count(), 2);
        assert_eq!(t[t.len() - 2], Tok::Dedent);
    }

    #[test]
    fn fstrings_keep_their_body() {
        let text = r#"f"{<a>}-{'x'}""#;
        let t = toks(text);
        let Tok::FString(f) = &t[0] else { panic!() };
        assert_eq!(&text[f.body.range()], "{<a>}-{'x'}");
    }
}
