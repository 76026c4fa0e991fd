//! Tokens of the text spec format. The lexer is lazy (the parser pulls tokens one at a
//! time), so a hostile file such as 10 MB of `(` costs no memory before the parser's
//! nesting limit stops it.
//!
//! It reads two dialects ([`Dialect`]): ISLa's `.bnf` grammars as thicket always read
//! them, and the grammar part of Fandango's `.fan` files, whose literals are Python
//! string literals (all prefixes, triple quotes, Python's escapes), whose `0` and `1`
//! are bits, whose repetition counts may be Python expressions, and which know `[`,
//! `]`, `^`, `=` and `::` (permutations, character sets, deprecated generators).

use crate::diag::Diagnostic;
use crate::pyscan;
use crate::source::Span;

/// Which spec language the lexer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// ISLa's `.bnf` grammars (and thicket's spec format before Fandango files).
    Isla,
    /// The grammar part of Fandango's `.fan` files.
    Fandango,
}

/// A bound of a Fandango repetition `{..}`.
#[derive(Clone, Debug, PartialEq)]
pub enum RepeatBound {
    /// Not given (`{,m}` has no least count, `{n,}` no greatest).
    Absent,
    /// An integer literal.
    Count(u32),
    /// A Python expression, computed while generating: where it is written.
    Computed(Span),
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// `<name>` (the name without brackets).
    Nonterminal(String),
    /// `::=`
    Define,
    /// `:=` (a Fandango generator).
    Walrus,
    /// `=` (Fandango's deprecated form of `:=`).
    Assign,
    /// `::` not followed by `=` (Fandango's deprecated form of `:=`).
    DoubleColon,
    /// `[` (Fandango permutations `[[..]]` and character sets `[".."]`).
    LBracket,
    /// `]`
    RBracket,
    /// `^` (negates a Fandango character set).
    Caret,
    /// `|`
    Pipe,
    /// `;`
    Semi,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `*`
    Star,
    /// `+`
    Plus,
    /// `?`
    Question,
    /// `{n}`, `{n,}`, `{,m}`, `{n,m}`.
    Braces {
        /// Least count.
        min: u32,
        /// Greatest count, if bounded.
        max: Option<u32>,
    },
    /// A Fandango repetition `{..}` whose bounds may be Python expressions.
    FanBraces {
        /// Least count.
        min: RepeatBound,
        /// Greatest count.
        max: RepeatBound,
    },
    /// A quoted literal, escapes already processed.
    Literal(Vec<u8>),
    /// `r"..."`: the raw pattern.
    Regex {
        /// The pattern as written between the quotes.
        pattern: String,
        /// Whether it is a bytes pattern (`rb"..."`, Fandango only).
        bytes: bool,
        /// Offset of the pattern's first character in the text.
        body: usize,
    },
    /// A bare word such as `where` or `def`.
    Word(String),
    /// A number such as `0` or `1` (Fandango bit literals).
    Number(String),
    /// End of input.
    Eof,
}

impl TokenKind {
    /// How the token is described in "expected ..., found ..." messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Nonterminal(n) => format!("`<{n}>`"),
            TokenKind::Define => "`::=`".into(),
            TokenKind::Walrus => "`:=`".into(),
            TokenKind::Assign => "`=`".into(),
            TokenKind::DoubleColon => "`::`".into(),
            TokenKind::LBracket => "`[`".into(),
            TokenKind::RBracket => "`]`".into(),
            TokenKind::Caret => "`^`".into(),
            TokenKind::FanBraces { .. } => "a repetition count `{..}`".into(),
            TokenKind::Pipe => "`|`".into(),
            TokenKind::Semi => "`;`".into(),
            TokenKind::LParen => "`(`".into(),
            TokenKind::RParen => "`)`".into(),
            TokenKind::Star => "`*`".into(),
            TokenKind::Plus => "`+`".into(),
            TokenKind::Question => "`?`".into(),
            TokenKind::Braces { .. } => "a repetition count `{..}`".into(),
            TokenKind::Literal(_) => "a literal".into(),
            TokenKind::Regex { .. } => "a regex terminal".into(),
            TokenKind::Word(w) => format!("`{w}`"),
            TokenKind::Number(n) => format!("`{n}`"),
            TokenKind::Eof => "the end of the file".into(),
        }
    }
}

/// The lexer: an iterator-like cursor over the text.
pub struct Lexer<'a> {
    /// The text up to where the lexer stops (its end is the end of input).
    text: &'a str,
    /// The whole text, for messages about what follows the lexer's range.
    full: &'a str,
    pos: usize,
    dialect: Dialect,
    /// Warnings about accepted input (Python's invalid escape sequences).
    warnings: Vec<Diagnostic>,
}

type LexResult = Result<Token, Box<Diagnostic>>;

impl<'a> Lexer<'a> {
    /// An ISLa-dialect lexer at the start of `text`.
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            full: text,
            pos: 0,
            dialect: Dialect::Isla,
            warnings: Vec::new(),
        }
    }

    /// A Fandango-dialect lexer over `text[start..end]` (offsets stay those of `text`).
    pub fn fandango(text: &'a str, start: usize, end: usize) -> Lexer<'a> {
        Lexer {
            text: &text[..end],
            full: text,
            pos: start,
            dialect: Dialect::Fandango,
            warnings: Vec::new(),
        }
    }

    /// One past the last offset the lexer reads.
    pub fn limit(&self) -> usize {
        self.text.len()
    }

    /// Moves to `pos` (after text the parser read itself, such as a generator).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.text.len());
    }

    /// The warnings collected so far, taken.
    pub fn take_warnings(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.warnings)
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Whether only a line break or the end of the text follows.
    fn at_line_end(&self) -> bool {
        let rest = self.rest();
        rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n")
    }

    fn skip_trivia(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with('#') {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if self.dialect == Dialect::Fandango && trimmed.starts_with('\\') {
                // Python's explicit line joining.
                let after = pyscan::skip_blanks(self.text, self.pos);
                if after == self.pos {
                    return;
                }
                self.pos = after;
            } else {
                return;
            }
        }
    }

    /// The next token, or a diagnostic for malformed input.
    pub fn next_token(&mut self) -> LexResult {
        self.skip_trivia();
        let start = self.pos;
        let token = |kind, end| {
            Ok(Token {
                kind,
                span: Span::new(start, end),
            })
        };
        let Some(c) = self.peek_char() else {
            return token(TokenKind::Eof, start);
        };
        let rest = self.rest();
        if rest.starts_with("::=") {
            self.pos += 3;
            return token(TokenKind::Define, self.pos);
        }
        if rest.starts_with(":=") {
            self.pos += 2;
            return token(TokenKind::Walrus, self.pos);
        }
        if self.dialect == Dialect::Fandango {
            return self.fandango_token(start, c);
        }
        let single = match c {
            '|' => Some(TokenKind::Pipe),
            ';' => Some(TokenKind::Semi),
            '(' => Some(TokenKind::LParen),
            ')' => Some(TokenKind::RParen),
            '*' => Some(TokenKind::Star),
            '+' => Some(TokenKind::Plus),
            '?' => Some(TokenKind::Question),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return token(kind, self.pos);
        }
        match c {
            '<' => self.nonterminal(start),
            '{' => self.braces(start),
            '"' | '\'' => self.literal(start, false),
            'b' | 'r' | 'B' | 'R' if matches!(rest[1..].chars().next(), Some('"' | '\'')) => {
                self.pos += 1;
                if c.eq_ignore_ascii_case(&'r') {
                    self.regex(start)
                } else {
                    self.literal(start, true)
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let len = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                self.pos += len;
                token(TokenKind::Word(rest[..len].to_string()), self.pos)
            }
            c if c.is_ascii_digit() => {
                let len = rest
                    .find(|c: char| !c.is_ascii_alphanumeric())
                    .unwrap_or(rest.len());
                self.pos += len;
                token(TokenKind::Number(rest[..len].to_string()), self.pos)
            }
            _ => Err(unexpected_character(start, c)),
        }
    }

    /// The next token of the Fandango dialect (after trivia, `::=` and `:=`).
    fn fandango_token(&mut self, start: usize, c: char) -> LexResult {
        let token = |kind, end| {
            Ok(Token {
                kind,
                span: Span::new(start, end),
            })
        };
        let rest = self.rest();
        let single = match c {
            '|' => Some(TokenKind::Pipe),
            ';' => Some(TokenKind::Semi),
            '(' => Some(TokenKind::LParen),
            ')' => Some(TokenKind::RParen),
            '*' => Some(TokenKind::Star),
            '+' => Some(TokenKind::Plus),
            '?' => Some(TokenKind::Question),
            '[' => Some(TokenKind::LBracket),
            ']' => Some(TokenKind::RBracket),
            '^' => Some(TokenKind::Caret),
            '=' => Some(TokenKind::Assign),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return token(kind, self.pos);
        }
        if rest.starts_with("::") {
            self.pos += 2;
            return token(TokenKind::DoubleColon, self.pos);
        }
        if let Some(string) = pyscan::string_at(self.text, start) {
            return self.python_string(string);
        }
        match c {
            '<' => self.nonterminal(start),
            '{' => self.fandango_braces(start),
            c if pyscan::is_identifier_start(c) => {
                let len = rest
                    .find(|c: char| !pyscan::is_identifier_continue(c))
                    .unwrap_or(rest.len());
                self.pos += len;
                token(TokenKind::Word(rest[..len].to_string()), self.pos)
            }
            c if c.is_ascii_digit() => {
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .unwrap_or(rest.len());
                self.pos += len;
                token(TokenKind::Number(rest[..len].to_string()), self.pos)
            }
            _ => Err(unexpected_character(start, c)),
        }
    }

    /// A Python string literal: a regex terminal if raw, else a literal with Python's
    /// escapes decoded.
    fn python_string(&mut self, string: pyscan::StringLiteral) -> LexResult {
        let span = Span::new(string.start, string.end);
        if !string.terminated {
            let quotes = if string.triple {
                (string.quote as char).to_string().repeat(3)
            } else {
                (string.quote as char).to_string()
            };
            let mut d = unterminated(string.start, string.end, string.quote as char);
            if string.triple {
                d.labels[0].message = format!("this literal has no closing {quotes}");
            }
            return Err(d);
        }
        self.pos = string.end;
        if string.format {
            return Err(Box::new(
                Diagnostic::error(
                    "unsupported",
                    "f-strings are not supported in grammar rules",
                    span,
                )
                .with_label_message("an f-string")
                .with_note(
                    "Fandango does not support them there either; use a generator `:= f\"...\"`",
                ),
            ));
        }
        let body = &self.text[string.body_start..string.body_end];
        if string.raw {
            return Ok(Token {
                kind: TokenKind::Regex {
                    pattern: body.to_string(),
                    bytes: string.bytes,
                    body: string.body_start,
                },
                span,
            });
        }
        let mut out = Vec::with_capacity(body.len());
        let mut i = string.body_start;
        while i < string.body_end {
            let c = self.text[i..].chars().next().expect("inside the string");
            if c == '\\' {
                i = self.python_escape(i, string.bytes, &mut out)?;
                continue;
            }
            if string.bytes && !c.is_ascii() {
                return Err(Box::new(
                    Diagnostic::error(
                        "bad-byte-literal",
                        format!("non-ASCII character `{}` in a byte literal", printable(c)),
                        Span::new(i, i + c.len_utf8()),
                    )
                    .with_label_message("write bytes above 0x7f as `\\xHH`"),
                ));
            }
            push_char(&mut out, c);
            i += c.len_utf8();
        }
        Ok(Token {
            kind: TokenKind::Literal(out),
            span,
        })
    }

    /// Decodes the Python escape at `at` (its backslash) into `out`; returns the offset
    /// after it. Unknown escapes keep their backslash, as in Python, with a warning.
    fn python_escape(
        &mut self,
        at: usize,
        bytes: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, Box<Diagnostic>> {
        let rest = &self.text[at + 1..];
        let Some(c) = rest.chars().next() else {
            return Err(unterminated(at, at + 1, '"'));
        };
        let after = at + 1 + c.len_utf8();
        let simple = |b: u8, out: &mut Vec<u8>| {
            out.push(b);
            Ok(after)
        };
        let hex = |digits: usize| -> Result<(u32, usize), Box<Diagnostic>> {
            let h = &rest[1..];
            let len = h
                .bytes()
                .take(digits)
                .take_while(u8::is_ascii_hexdigit)
                .count();
            if len < digits {
                return Err(bad_escape(
                    at,
                    after + len,
                    &format!("expected {digits} hex digits after `\\{c}`"),
                ));
            }
            Ok((
                u32::from_str_radix(&h[..len], 16).expect("hex digits"),
                after + len,
            ))
        };
        match c {
            '\n' => Ok(after),
            '\r' => Ok(after + usize::from(rest[1..].starts_with('\n'))),
            '\\' | '\'' | '"' => simple(c as u8, out),
            'a' => simple(0x07, out),
            'b' => simple(0x08, out),
            'f' => simple(0x0c, out),
            'n' => simple(b'\n', out),
            'r' => simple(b'\r', out),
            't' => simple(b'\t', out),
            'v' => simple(0x0b, out),
            '0'..='7' => {
                let len = rest
                    .bytes()
                    .take(3)
                    .take_while(|b| (b'0'..=b'7').contains(b))
                    .count();
                let value = u32::from_str_radix(&rest[..len], 8).expect("octal digits");
                if bytes {
                    if value > 0xff {
                        return Err(bad_escape(
                            at,
                            at + 1 + len,
                            "octal escape above \\377 in a byte literal",
                        ));
                    }
                    out.push(value as u8);
                } else {
                    push_char(out, char::from_u32(value).expect("at most 0o777"));
                }
                Ok(at + 1 + len)
            }
            'x' => {
                let (value, end) = hex(2)?;
                if bytes {
                    out.push(value as u8);
                } else {
                    push_char(
                        out,
                        char::from_u32(value).expect("two hex digits are a char"),
                    );
                }
                Ok(end)
            }
            'u' if !bytes && rest[1..].starts_with('{') => {
                // thicket's `\u{H..}`, kept in Fandango files.
                let inner = &rest[2..];
                let len = inner
                    .bytes()
                    .take(6)
                    .take_while(u8::is_ascii_hexdigit)
                    .count();
                if len == 0 || !inner[len..].starts_with('}') {
                    return Err(bad_escape(
                        at,
                        at + 3 + len,
                        "expected `}` after `\\u{` and 1 to 6 hex digits",
                    ));
                }
                let value = u32::from_str_radix(&inner[..len], 16).expect("hex digits");
                self.pos_code_point(at, at + 4 + len, value, out)
            }
            'u' | 'U' if !bytes => {
                let (value, end) = hex(if c == 'u' { 4 } else { 8 })?;
                self.pos_code_point(at, end, value, out)
            }
            'N' if !bytes => Err(bad_escape(
                at,
                after,
                "named Unicode escapes (`\\N{...}`) are not supported; write the character or `\\uHHHH`",
            )),
            _ => {
                // Python keeps an unknown escape as written (and warns since 3.12).
                self.warnings.push(
                    Diagnostic::warning(
                        "invalid-escape",
                        format!("invalid escape sequence `\\{}`", printable(c)),
                        Span::new(at, after),
                    )
                    .with_label_message("kept as written, backslash included, as Python does")
                    .with_note("write a backslash as `\\\\`, or use a raw string for a regex"),
                );
                out.push(b'\\');
                push_char(out, c);
                Ok(after)
            }
        }
    }

    fn pos_code_point(
        &self,
        at: usize,
        end: usize,
        value: u32,
        out: &mut Vec<u8>,
    ) -> Result<usize, Box<Diagnostic>> {
        let c = char::from_u32(value).ok_or_else(|| {
            bad_escape(
                at,
                end,
                &format!("U+{value:X} is not a Unicode scalar value"),
            )
        })?;
        push_char(out, c);
        Ok(end)
    }

    /// A Fandango repetition `{..}`: up to the matching `}`, its bounds integer literals or
    /// Python expressions.
    fn fandango_braces(&mut self, start: usize) -> LexResult {
        let bad = |end: usize, why: &str| {
            Box::new(
                Diagnostic::error(
                    "bad-repetition",
                    format!("malformed repetition count: {why}"),
                    Span::new(start, end.max(start + 1)),
                )
                .with_label_message("expected `{n}`, `{n,}`, `{,m}` or `{n,m}`, each a number or a Python expression"),
            )
        };
        let Some(close) = pyscan::closing_bracket(self.text, start, self.text.len()) else {
            return Err(bad(start + 1, "missing `}`"));
        };
        let end = close + 1;
        let parts = pyscan::split_top_level_commas(self.text, start + 1, close);
        let bound = |(s, e): (usize, usize)| -> Result<RepeatBound, Box<Diagnostic>> {
            if s == e {
                return Ok(RepeatBound::Absent);
            }
            match python_int(&self.text[s..e]) {
                Some(Ok(n)) => Ok(RepeatBound::Count(n)),
                Some(Err(())) => Err(bad(
                    end,
                    &format!("`{}` is too large (at most {})", &self.text[s..e], u32::MAX),
                )),
                None => Ok(RepeatBound::Computed(Span::new(s, e))),
            }
        };
        let (min, max) = match parts.as_slice() {
            [one] => {
                let b = bound(*one)?;
                if b == RepeatBound::Absent {
                    return Err(bad(end, "no count given"));
                }
                (b.clone(), b)
            }
            [lo, hi] => (bound(*lo)?, bound(*hi)?),
            _ => return Err(bad(end, "more than two bounds")),
        };
        if let (RepeatBound::Count(lo), RepeatBound::Count(hi)) = (&min, &max)
            && hi < lo
        {
            return Err(bad(
                end,
                &format!("the least count {lo} exceeds the greatest {hi}"),
            ));
        }
        self.pos = end;
        Ok(Token {
            kind: TokenKind::FanBraces { min, max },
            span: Span::new(start, end),
        })
    }

    fn nonterminal(&mut self, start: usize) -> LexResult {
        self.pos += 1;
        let rest = self.rest();
        let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        let name = &rest[..len];
        self.pos += len;
        if self.peek_char() != Some('>') || name.is_empty() {
            // Past the lexer's range, the text goes on: say what comes there.
            let next = self
                .peek_char()
                .or_else(|| self.full[self.pos..].chars().next());
            let found = match next {
                None => "the end of the file".to_string(),
                Some('\n' | '\r') => "the end of the line".to_string(),
                Some(c) if c.is_whitespace() => "whitespace".to_string(),
                Some(c) => format!("`{}`", printable(c)),
            };
            let what = if name.is_empty() {
                "a rule name"
            } else {
                "`>` to close the rule name"
            };
            return Err(Box::new(
                Diagnostic::error(
                    "bad-rule-name",
                    format!("expected {what}, found {found}"),
                    Span::new(
                        start,
                        self.pos
                            + self
                                .peek_char()
                                .filter(|c| !c.is_whitespace())
                                .map_or(0, char::len_utf8),
                    ),
                )
                .with_label_message("rule names look like `<name>`: letters, digits, `_ - . :`")
                .with_note("to use `<` as text, quote it: \"<\""),
            ));
        }
        self.pos += 1;
        Ok(Token {
            kind: TokenKind::Nonterminal(name.to_string()),
            span: Span::new(start, self.pos),
        })
    }

    fn braces(&mut self, start: usize) -> LexResult {
        let rest = self.rest();
        let close = rest
            .find(['}', '\n'])
            .filter(|&i| rest.as_bytes()[i] == b'}');
        let bad = |lexer: &Lexer, end: usize, why: &str| {
            Box::new(
                Diagnostic::error(
                    "bad-repetition",
                    format!("malformed repetition count: {why}"),
                    Span::new(start, end.max(start + 1).min(lexer.text.len())),
                )
                .with_label_message("expected `{n}`, `{n,}`, `{,m}` or `{n,m}`"),
            )
        };
        let Some(close) = close else {
            return Err(bad(self, start + 1, "missing `}`"));
        };
        let inner: String = rest[1..close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let end = start + close + 1;
        let number = |s: &str| -> Result<Option<u32>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            if !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("`{s}` is not a number"));
            }
            s.parse::<u32>()
                .map(Some)
                .map_err(|_| format!("`{s}` is too large (at most {})", u32::MAX))
        };
        let (min, max) = match inner.split_once(',') {
            None => match number(&inner) {
                Ok(Some(n)) => (n, Some(n)),
                Ok(None) => return Err(bad(self, end, "no count given")),
                Err(e) => return Err(bad(self, end, &e)),
            },
            Some((lo, hi)) => match (number(lo), number(hi)) {
                (Ok(lo), Ok(hi)) => (lo.unwrap_or(0), hi),
                (Err(e), _) | (_, Err(e)) => return Err(bad(self, end, &e)),
            },
        };
        if let Some(max) = max
            && max < min
        {
            return Err(bad(
                self,
                end,
                &format!("the least count {min} exceeds the greatest {max}"),
            ));
        }
        self.pos = end;
        Ok(Token {
            kind: TokenKind::Braces { min, max },
            span: Span::new(start, end),
        })
    }

    fn regex(&mut self, start: usize) -> LexResult {
        let quote = self.bump().expect("caller saw a quote");
        let body_start = self.pos;
        loop {
            let at = self.pos;
            match self.bump() {
                None | Some('\n') => return Err(unterminated(start, at, quote)),
                Some('\\') => {
                    // A backslash keeps the next character (so `\"` does not end the
                    // pattern) and passes both to the regex, as Python raw strings do.
                    if matches!(self.peek_char(), Some(c) if c != '\n') {
                        self.bump();
                    }
                }
                Some(c) if c == quote => break,
                Some(_) => {}
            }
        }
        let pattern = self.text[body_start..self.pos - 1].to_string();
        Ok(Token {
            kind: TokenKind::Regex {
                pattern,
                bytes: false,
                body: body_start,
            },
            span: Span::new(start, self.pos),
        })
    }

    fn literal(&mut self, start: usize, bytes: bool) -> LexResult {
        let quote = self.bump().expect("caller saw a quote");
        let mut out = Vec::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None | Some('\n') => return Err(unterminated(start, at, quote)),
                Some(c) if c == quote => break,
                Some('\\') if self.at_line_end() => {
                    return Err(unterminated(start, self.pos, quote));
                }
                Some('\\') => self.escape(at, bytes, &mut out)?,
                Some(c) => {
                    if bytes && !c.is_ascii() {
                        return Err(Box::new(
                            Diagnostic::error(
                                "bad-byte-literal",
                                format!("non-ASCII character `{}` in a byte literal", printable(c)),
                                Span::new(at, self.pos),
                            )
                            .with_label_message("write bytes above 0x7f as `\\xHH`"),
                        ));
                    }
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        Ok(Token {
            kind: TokenKind::Literal(out),
            span: Span::new(start, self.pos),
        })
    }

    fn escape(&mut self, at: usize, bytes: bool, out: &mut Vec<u8>) -> Result<(), Box<Diagnostic>> {
        let simple = |b: u8, out: &mut Vec<u8>| out.push(b);
        match self.bump() {
            Some('n') => simple(b'\n', out),
            Some('t') => simple(b'\t', out),
            Some('r') => simple(b'\r', out),
            Some('0') => simple(0, out),
            Some('\\') => simple(b'\\', out),
            Some('"') => simple(b'"', out),
            Some('\'') => simple(b'\'', out),
            Some('x') => {
                let value = self.hex_digits(at, 2, 2)?;
                if bytes {
                    out.push(value as u8);
                } else {
                    push_char(
                        out,
                        char::from_u32(value).expect("two hex digits are a char"),
                    );
                }
            }
            Some('u') if !bytes => {
                let value = if self.peek_char() == Some('{') {
                    self.bump();
                    let v = self.hex_digits(at, 1, 6)?;
                    if self.bump() != Some('}') {
                        return Err(bad_escape(
                            at,
                            self.pos,
                            "expected `}` after `\\u{` and 1 to 6 hex digits",
                        ));
                    }
                    v
                } else {
                    self.hex_digits(at, 4, 4)?
                };
                push_char(out, self.code_point(at, value)?);
            }
            Some('U') if !bytes => {
                let value = self.hex_digits(at, 8, 8)?;
                push_char(out, self.code_point(at, value)?);
            }
            Some(c) => {
                let allowed = if bytes {
                    "\\n \\t \\r \\0 \\\\ \\\" \\' \\xHH"
                } else {
                    "\\n \\t \\r \\0 \\\\ \\\" \\' \\xHH \\u{H..} \\uHHHH \\UHHHHHHHH"
                };
                return Err(bad_escape(
                    at,
                    self.pos,
                    &format!(
                        "unknown escape `\\{}`; expected one of {allowed}",
                        printable(c)
                    ),
                ));
            }
            None => return Err(unterminated(at, self.pos, '"')),
        }
        Ok(())
    }

    fn hex_digits(&mut self, at: usize, min: usize, max: usize) -> Result<u32, Box<Diagnostic>> {
        let rest = self.rest();
        let len = rest
            .bytes()
            .take(max)
            .take_while(u8::is_ascii_hexdigit)
            .count();
        if len < min {
            let end = self.pos + rest.chars().next().map_or(0, char::len_utf8);
            let expected = if min == max {
                format!("{min} hex digits")
            } else {
                format!("{min} to {max} hex digits")
            };
            return Err(bad_escape(
                at,
                end,
                &format!("expected {expected} in escape"),
            ));
        }
        self.pos += len;
        Ok(u32::from_str_radix(&rest[..len], 16).expect("checked hex digits"))
    }

    fn code_point(&self, at: usize, value: u32) -> Result<char, Box<Diagnostic>> {
        char::from_u32(value).ok_or_else(|| {
            bad_escape(
                at,
                self.pos,
                &format!("U+{value:X} is not a Unicode scalar value"),
            )
        })
    }
}

/// The value of a Python integer literal (`12`, `1_000`, `0x1F`, `0o17`, `0b101`, in
/// redundant parentheses): `None` if the text is something else, `Err` if too large.
fn python_int(text: &str) -> Option<Result<u32, ()>> {
    let mut text = text.trim();
    while let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        text = inner.trim();
    }
    let lower = text.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else {
        (lower.as_str(), 10)
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty()
        || text.starts_with('_')
        || text.ends_with('_')
        || !digits.chars().all(|c| c.is_digit(radix))
    {
        return None;
    }
    Some(u32::from_str_radix(&digits, radix).map_err(|_| ()))
}

fn unexpected_character(start: usize, c: char) -> Box<Diagnostic> {
    let what = if c == '\u{FFFD}' {
        "a byte that is not valid UTF-8".to_string()
    } else if c.is_control() {
        format!("control character U+{:04X}", c as u32)
    } else {
        format!("`{}`", printable(c))
    };
    Box::new(
        Diagnostic::error(
            "unexpected-character",
            format!("unexpected {what}"),
            Span::new(start, start + c.len_utf8()),
        )
        .with_label_message(
            "expected a rule `<name> ::= ...`, a quoted literal, `|`, `(`, `)` or a quantifier",
        ),
    )
}

/// Characters allowed inside `<...>`.
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// A character as it may appear in a message: control and other invisible characters
/// escaped (`\u{1b}`), so that a message cannot carry them to the terminal.
fn printable(c: char) -> String {
    if c.is_ascii() && !c.is_ascii_control() {
        c.to_string()
    } else {
        c.escape_debug().to_string()
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

fn unterminated(start: usize, end: usize, quote: char) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            "unterminated-string",
            "unterminated string literal",
            Span::new(start, end.max(start + 1)),
        )
        .with_label_message(format!("this literal has no closing {quote} on its line"))
        .with_note("write a line break inside a literal as \\n"),
    )
}

fn bad_escape(start: usize, end: usize, message: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            "bad-escape",
            message.to_string(),
            Span::new(start, end.max(start + 1)),
        )
        .with_label_message("in this escape"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Vec<TokenKind> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token().expect("lexes");
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push(t.kind);
        }
    }

    #[test]
    fn escapes_follow_python_for_text_and_raw_bytes_for_byte_literals() {
        assert_eq!(
            lex(r#""a\n\x41\xff\u{1F600}\u00e9" b"\x00\xff""#),
            vec![
                TokenKind::Literal("a\nA\u{ff}\u{1F600}\u{e9}".as_bytes().to_vec()),
                TokenKind::Literal(vec![0, 0xff]),
            ]
        );
    }

    #[test]
    fn regex_bodies_are_raw() {
        assert_eq!(
            lex(r#"r"[a-z]\"+" r'\d'"#),
            vec![
                TokenKind::Regex {
                    pattern: r#"[a-z]\"+"#.into(),
                    bytes: false,
                    body: 2
                },
                TokenKind::Regex {
                    pattern: r"\d".into(),
                    bytes: false,
                    body: 14
                }
            ]
        );
    }

    #[test]
    fn repetition_counts() {
        assert_eq!(
            lex("{2} {1,} {,3} { 1 , 4 }"),
            vec![
                TokenKind::Braces {
                    min: 2,
                    max: Some(2)
                },
                TokenKind::Braces { min: 1, max: None },
                TokenKind::Braces {
                    min: 0,
                    max: Some(3)
                },
                TokenKind::Braces {
                    min: 1,
                    max: Some(4)
                },
            ]
        );
    }

    #[test]
    fn malformed_tokens_are_errors_with_codes() {
        for (text, code) in [
            ("\"abc", "unterminated-string"),
            ("'a\nb'", "unterminated-string"),
            (r#""\q""#, "bad-escape"),
            (r#""\x4""#, "bad-escape"),
            (r#""\u{110000}""#, "bad-escape"),
            ("<abc", "bad-rule-name"),
            ("<>", "bad-rule-name"),
            ("{3,1}", "bad-repetition"),
            ("{x}", "bad-repetition"),
            ("@", "unexpected-character"),
            ("b\"é\"", "bad-byte-literal"),
        ] {
            let err = Lexer::new(text).next_token().expect_err(text);
            assert_eq!(err.code, code, "{text}");
        }
    }

    #[test]
    fn unterminated_tokens_are_marked_on_their_own_line() {
        for (text, span, quote) in [
            ("'abc\\", (0, 5), "'"),
            ("\"abc\\\nx", (0, 5), "\""),
            ("'abc\\\r\nx", (0, 5), "'"),
            ("r\"[a-z]\n", (0, 7), "\""),
            ("<abc\n", (0, 4), ""),
            ("<abc de", (0, 4), ""),
        ] {
            let err = Lexer::new(text).next_token().expect_err(text);
            let got = err.primary_span().unwrap();
            assert_eq!((got.start as usize, got.end as usize), span, "{text:?}");
            assert!(
                err.labels[0].message.contains(quote),
                "{text:?}: {}",
                err.labels[0].message
            );
        }
    }

    #[test]
    fn messages_do_not_carry_control_characters() {
        for text in ["\"\\\u{1b}\"", "<a\u{1b}", "b\"\u{202e}\""] {
            let err = Lexer::new(text).next_token().expect_err(text);
            assert!(
                !err.message
                    .chars()
                    .any(|c| c.is_control() || c == '\u{202e}'),
                "{:?}",
                err.message
            );
        }
    }
}
