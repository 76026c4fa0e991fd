//! Fandango's regex terminals (`r'...'`, `rb'...'`) are Python patterns, compiled by
//! Fandango's parser with the `regex` module (PyPI `regex`) in its default mode, whose
//! syntax is that of Python's `re`; thicket's are Rust `regex` patterns. The two
//! syntaxes agree on most patterns; this module rewrites the constructs where they
//! differ, so that the compiled terminal matches what Fandango's parser matches:
//!
//! - a bytes pattern (`rb'...'`) matches bytes: it is compiled without Unicode,
//!   `(?-u:...)`, so `\xff` is the byte 0xFF and `.`/`\w` are ASCII-only, as in Python;
//! - octal escapes (`\0`, `\012`) become `\x{..}`; `\b` in a class is a backspace;
//! - a `{` that does not start a repetition is a literal `{` (Python's reading), and
//!   `{,n}` is `{0,n}`;
//! - in a class, `[` and the Rust set operators `&&`, `--`, `~~` are literal
//!   characters (the Rust-only POSIX classes `[:alpha:]` keep their Rust meaning);
//! - a leading `^` or `\A` and a trailing `$` or `\Z` are dropped: a terminal is always
//!   matched whole, so they change nothing there;
//! - lookarounds (`(?=...)`, `(?!...)`, `(?<=...)`, `(?<!...)`) have no equivalent in a
//!   regular terminal: they are dropped, which lets the terminal match more than in
//!   Fandango, and reported ([`Translation::dropped_lookarounds`]);
//! - `(?#...)` comments are dropped; backreferences and `(?P=name)` are errors.
//!
//! Everything else passes through unchanged, so a pattern in Rust syntax that Python
//! would not accept (`\x{7F}`, `(?i-u:...)`, `\p{L}`) keeps its Rust meaning.
//!
//! The Unicode classes `\w`, `\d`, `\s` and their complements pass through too: the
//! `regex` module defines them as Rust does (`\w` is Alphabetic, Mark, Decimal_Number,
//! Connector_Punctuation and Join_Control; `\d` is Decimal_Number; `\s` is
//! White_Space), from Unicode tables of its own, not Python's. Python's `re` differs
//! (its `\w` takes in every number, such as `²` and `₆`, and leaves out marks; its `\s`
//! takes in 0x1C-0x1F), and Fandango's parser rejects what only `re` matches. The oldest
//! `regex` Fandango 1.3 allows (2024.11.6) has Unicode 16.0's tables, as the `regex`
//! crate does; a newer one knows more characters, which thicket then neither generates
//! nor accepts.

/// A pattern in Rust syntax and where each of its bytes came from.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The Rust pattern.
    pub pattern: String,
    /// For each byte of `pattern`, the offset in the Python pattern it stands for (one
    /// more entry for the end).
    pub origin: Vec<usize>,
    /// The offsets (in the Python pattern) of lookarounds that were dropped.
    pub dropped_lookarounds: Vec<(usize, usize)>,
}

/// A pattern that cannot be translated: what and where (offsets in the pattern).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslationError {
    /// What is wrong.
    pub message: String,
    /// Where in the pattern.
    pub span: (usize, usize),
}

struct Translator<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: String,
    origin: Vec<usize>,
    dropped: Vec<(usize, usize)>,
}

/// Translates a Python pattern (`bytes` for a `rb'...'` pattern) to Rust syntax.
pub fn translate(pattern: &str, bytes: bool) -> Result<Translation, TranslationError> {
    let (start, end) = strip_anchors(pattern);
    let mut t = Translator {
        src: pattern,
        bytes: pattern.as_bytes(),
        pos: start,
        out: String::with_capacity(pattern.len() + 8),
        origin: Vec::with_capacity(pattern.len() + 8),
        dropped: Vec::new(),
    };
    if bytes {
        t.emit("(?-u:", start);
    }
    while t.pos < end {
        t.item(end)?;
    }
    if bytes {
        t.emit(")", end);
    }
    t.origin.push(pattern.len());
    Ok(Translation {
        pattern: t.out,
        origin: t.origin,
        dropped_lookarounds: t.dropped,
    })
}

/// The part of the pattern without a leading `^`/`\A` and a trailing `$`/`\Z`.
fn strip_anchors(pattern: &str) -> (usize, usize) {
    let start = if pattern.starts_with('^') {
        1
    } else if pattern.starts_with("\\A") {
        2
    } else {
        0
    };
    let mut end = pattern.len();
    // A trailing `$` or `\Z` is an anchor only if the backslashes before it are even.
    let backslashes_before = |at: usize| {
        pattern.as_bytes()[..at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count()
    };
    if end > start && pattern.ends_with('$') && backslashes_before(end - 1) % 2 == 0 {
        end -= 1;
    } else if end >= start + 2 && pattern.ends_with("\\Z") && backslashes_before(end - 2) % 2 == 0 {
        end -= 2;
    }
    (start, end)
}

impl Translator<'_> {
    fn emit(&mut self, text: &str, origin: usize) {
        self.out.push_str(text);
        self.origin.extend(std::iter::repeat_n(origin, text.len()));
    }

    fn error(&self, message: impl Into<String>, start: usize, end: usize) -> TranslationError {
        TranslationError {
            message: message.into(),
            span: (start, end.max(start + 1).min(self.src.len().max(start + 1))),
        }
    }

    fn char_at(&self, i: usize) -> Option<char> {
        self.src.get(i..)?.chars().next()
    }

    /// Translates one item outside a class.
    fn item(&mut self, end: usize) -> Result<(), TranslationError> {
        let at = self.pos;
        let c = self.char_at(at).expect("before the end");
        match c {
            '\\' => {
                let text = self.escape(at, false)?;
                self.emit(&text, at);
            }
            '[' => self.class(end)?,
            '{' => self.brace(),
            '(' if self.src[at..].starts_with("(?") => self.group(end)?,
            _ => {
                self.pos += c.len_utf8();
                let src = self.src;
                self.emit(&src[at..self.pos], at);
            }
        }
        Ok(())
    }

    /// An escape at `at` (at its backslash): the Rust text for it; moves past it.
    fn escape(&mut self, at: usize, in_class: bool) -> Result<String, TranslationError> {
        let Some(next) = self.char_at(at + 1) else {
            return Err(self.error("the pattern ends with a lone backslash", at, at + 1));
        };
        self.pos = at + 1 + next.len_utf8();
        let octal = |s: &str| {
            s.bytes()
                .take(3)
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count()
        };
        Ok(match next {
            '0' => {
                // `\0` and up to two more octal digits.
                let digits = 1 + octal(&self.src[at + 2..]).min(2);
                let value = u32::from_str_radix(&self.src[at + 1..at + 1 + digits], 8)
                    .expect("octal digits");
                self.pos = at + 1 + digits;
                format!("\\x{{{value:X}}}")
            }
            '1'..='9' => {
                let rest = &self.src[at + 1..];
                if octal(rest) == 3 {
                    let value = u32::from_str_radix(&rest[..3], 8).expect("octal digits");
                    if value > 0o377 {
                        return Err(self.error(
                            format!(
                                "octal escape value \\{} outside of range 0-0o377",
                                &rest[..3]
                            ),
                            at,
                            at + 4,
                        ));
                    }
                    self.pos = at + 4;
                    format!("\\x{{{value:X}}}")
                } else if in_class {
                    return Err(self.error("bad escape in a character class", at, self.pos));
                } else {
                    return Err(self.error(
                        "backreferences are not supported in regex terminals",
                        at,
                        self.pos,
                    ));
                }
            }
            'b' if in_class => "\\x08".to_string(),
            'Z' => "\\z".to_string(),
            // Python's `\<` and `\>` are the characters; Rust's are word boundaries.
            '<' | '>' => next.to_string(),
            'x' | 'u' | 'U' | 'N' | 'p' | 'P' => {
                // The escape's argument: `{...}`, or a fixed number of hex digits (one
                // character for `\pL`).
                let rest = &self.src[self.pos..];
                let len = if rest.starts_with('{') {
                    rest.find('}').map_or(rest.len(), |i| i + 1)
                } else {
                    match next {
                        'x' => hex_len(rest, 2),
                        'u' => hex_len(rest, 4),
                        'U' => hex_len(rest, 8),
                        'p' | 'P' => rest.chars().next().map_or(0, char::len_utf8),
                        _ => 0,
                    }
                };
                self.pos += len;
                self.src[at..self.pos].to_string()
            }
            _ => self.src[at..self.pos].to_string(),
        })
    }

    /// `{` outside a class: a repetition in Python's syntax, or a literal brace.
    fn brace(&mut self) {
        let at = self.pos;
        let rest = &self.src[at + 1..];
        let lo_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after_lo = &rest[lo_len..];
        let (comma, hi_len) = match after_lo.strip_prefix(',') {
            Some(hi) => (true, hi.bytes().take_while(u8::is_ascii_digit).count()),
            None => (false, 0),
        };
        let close = lo_len + usize::from(comma) + hi_len;
        let is_repetition = rest.as_bytes().get(close) == Some(&b'}') && (comma || lo_len > 0);
        if !is_repetition {
            self.pos = at + 1;
            self.emit("\\{", at);
            return;
        }
        let lo = if lo_len == 0 { "0" } else { &rest[..lo_len] };
        let text = if comma {
            format!("{{{lo},{}}}", &after_lo[1..1 + hi_len])
        } else {
            format!("{{{lo}}}")
        };
        self.pos = at + 1 + close + 1;
        self.emit(&text, at);
    }

    /// A `(?...` group: lookarounds and comments dropped, the rest checked and kept.
    fn group(&mut self, end: usize) -> Result<(), TranslationError> {
        let at = self.pos;
        let rest = &self.src[at..end];
        let lookaround = ["(?=", "(?!", "(?<=", "(?<!"]
            .iter()
            .any(|p| rest.starts_with(p));
        if lookaround || rest.starts_with("(?#") {
            let close = self.group_end(at, end, rest.starts_with("(?#"))?;
            if lookaround {
                self.dropped.push((at, close));
            }
            self.pos = close;
            return Ok(());
        }
        if rest.starts_with("(?P=") {
            let close = rest.find(')').map_or(end, |i| at + i + 1);
            return Err(self.error(
                "backreferences (`(?P=name)`) are not supported in regex terminals",
                at,
                close,
            ));
        }
        self.pos = at + 1;
        self.emit("(", at);
        Ok(())
    }

    /// One past the `)` closing the group at `open`.
    fn group_end(&self, open: usize, end: usize, comment: bool) -> Result<usize, TranslationError> {
        let mut depth = 0usize;
        let mut i = open;
        let mut in_class = false;
        while i < end {
            let b = self.bytes[i];
            match b {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b')' if comment => return Ok(i + 1),
                b'[' if !in_class && !comment => in_class = true,
                b']' if in_class => in_class = false,
                b'(' if !in_class && !comment => depth += 1,
                b')' if !in_class => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.error("missing `)`, unterminated group", open, end))
    }

    /// A class `[...]` in Python's syntax, written in Rust's.
    fn class(&mut self, end: usize) -> Result<(), TranslationError> {
        let open = self.pos;
        self.pos += 1;
        self.emit("[", open);
        if self.src[self.pos..end].starts_with('^') {
            self.emit("^", self.pos);
            self.pos += 1;
        }
        let mut first = true;
        loop {
            let at = self.pos;
            let Some(c) = self.char_at(at).filter(|_| at < end) else {
                return Err(self.error("unterminated character class", open, end));
            };
            if c == ']' && !first {
                self.pos += 1;
                self.emit("]", at);
                return Ok(());
            }
            first = false;
            // A Rust POSIX class keeps its meaning.
            if c == '['
                && let Some(len) = posix_class_len(&self.src[at..end])
            {
                self.pos += len;
                let src = self.src;
                self.emit(&src[at..at + len], at);
                continue;
            }
            let item = self.class_atom(at)?;
            self.emit(&item, at);
            let dash = self.pos;
            if self.src[dash..end].starts_with('-')
                && self.char_at(dash + 1).is_some_and(|c| c != ']')
                && dash + 1 < end
            {
                self.pos = dash + 1;
                self.emit("-", dash);
                let to = self.pos;
                let item = self.class_atom(to)?;
                self.emit(&item, to);
            }
        }
    }

    /// One character (or escape) of a class, as Rust writes it inside a class: `[`
    /// and `]` escaped, `-` where Rust would not read it as a character (between items,
    /// or next to another `-`), and the second of two `&` or `~` (Rust's set
    /// operators); everything else as written.
    fn class_atom(&mut self, at: usize) -> Result<String, TranslationError> {
        let c = self.char_at(at).expect("inside the class");
        if c == '\\' {
            return self.escape(at, true);
        }
        self.pos = at + c.len_utf8();
        let previous = self.out.as_bytes().last().copied();
        let escaped = self.out.ends_with(&format!("\\{c}"));
        let first = matches!(previous, Some(b'[')) || self.out.ends_with("[^");
        let last = self.src[self.pos..].starts_with(']');
        let next = self.char_at(self.pos);
        let escape = match c {
            '[' | ']' => true,
            // Rust reads `--` as a set difference.
            '-' => !(first || last) || previous == Some(b'-') || next == Some('-'),
            '&' | '~' => previous == Some(c as u8) && !escaped,
            _ => false,
        };
        Ok(if escape {
            format!("\\{c}")
        } else {
            c.to_string()
        })
    }
}

/// The length of the hex digits (at most `max`) at the start of `text`.
fn hex_len(text: &str, max: usize) -> usize {
    text.bytes()
        .take(max)
        .take_while(u8::is_ascii_hexdigit)
        .count()
}

/// The length of a POSIX class such as `[:alpha:]` at the start of `text`.
fn posix_class_len(text: &str) -> Option<usize> {
    let inner = text.strip_prefix("[:")?;
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphabetic() || *b == b'^')
        .count();
    (name_len > 0 && inner[name_len..].starts_with(":]")).then_some(name_len + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(pattern: &str, bytes: bool) -> String {
        translate(pattern, bytes).unwrap().pattern
    }

    #[test]
    fn rust_compatible_patterns_pass_through() {
        for p in [
            r"[0-9]+",
            r"[a-zA-Z0-9\-\. ]+",
            r"(220-(?:[\x20-\x7E]*\r\n))*220 (?:[\x20-\x7E]*)\r\n",
            r"[\x{7F}-\x{D7FF}\x{E000}-\x{FFFF}]",
            r"(?i-u:[a-z]|w[a-rt-z])",
            r"(.|\n)",
            r"[0-9]{2}",
            r"[0-9]{1,3}(\.[0-9]{1,2})?",
        ] {
            assert_eq!(rust(p, false), p);
        }
    }

    #[test]
    fn python_only_syntax_is_rewritten() {
        assert_eq!(rust(r"[\x00-\xff]", true), r"(?-u:[\x00-\xff])");
        assert_eq!(rust(r"a{,3}b{2,}", false), r"a{0,3}b{2,}");
        assert_eq!(rust(r"{x}a{", false), r"\{x}a\{");
        assert_eq!(rust(r"\0\012[\b]", false), r"\x{0}\x{A}[\x08]");
        assert_eq!(rust(r"[[a&&b~~]", false), r"[\[a&\&b~\~]");
        assert_eq!(
            rust(r"[-.0-9][ !#-+\--~][a-]", false),
            r"[-.0-9][ !#-+\--~][a-]"
        );
        assert_eq!(rust(r"[--/]", false), r"[\--/]");
        assert_eq!(rust(r"[+--]", false), r"[+-\-]");
        assert_eq!(rust(r"[\x41-\x5A\u00e9]", false), r"[\x41-\x5A\u00e9]");
        assert_eq!(rust(r"[]a][^]]", false), r"[\]a][^\]]");
        assert_eq!(rust(r"[[:alpha:]_]", false), r"[[:alpha:]_]");
        assert_eq!(rust(r"^ab$", false), "ab");
        assert_eq!(rust(r"\Aab\Z", false), "ab");
        assert_eq!(rust(r"ab\$", false), r"ab\$");
        assert_eq!(rust(r"a(?#note)b", false), "ab");
        assert_eq!(rust(r"\<a[\<\>]", false), "<a[<>]");
        assert_eq!(rust(r"\w[\w-]\S[\W]\d\D", false), r"\w[\w-]\S[\W]\d\D");
        assert_eq!(rust(r"\w\s", true), r"(?-u:\w\s)");
    }

    /// Whether `pattern`, translated, matches the one character `c`.
    fn matches_char(pattern: &str, c: char) -> bool {
        let hir = regex_syntax::parse(&rust(pattern, false)).unwrap();
        match hir.kind() {
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(class)) => {
                class.iter().any(|r| r.start() <= c && c <= r.end())
            }
            other => panic!("{pattern}: {other:?}"),
        }
    }

    #[test]
    fn unicode_classes_match_what_fandangos_parser_matches() {
        // Each character's verdict is Fandango 1.3.1's: `fandango parse` of the one
        // character with `<start> ::= r'\w'` (and `\d`, `\s`) accepts it or not.
        let chars = [
            'a',
            'é',
            '_',
            '٣',
            '₆',
            '²',
            '\u{111F4}',
            '\u{301}',
            '\u{200D}',
            'Ⓐ',
            '\u{16131}',
            '-',
            ' ',
            '\u{85}',
            '\u{A0}',
            '\u{2028}',
            '\u{1C}',
            '\u{1F}',
            '\u{200B}',
            'Ⅰ',
        ];
        let verdicts = [
            (r"\w", "11110001111000000001"),
            (r"\d", "00010000001000000000"),
            (r"\s", "00000000000011110000"),
        ];
        for (pattern, accepted) in verdicts {
            let complement = pattern.to_uppercase();
            for (&c, verdict) in chars.iter().zip(accepted.chars()) {
                let fandango = verdict == '1';
                assert_eq!(matches_char(pattern, c), fandango, "{pattern} on {c:?}");
                assert_eq!(
                    matches_char(&complement, c),
                    !fandango,
                    "{complement} on {c:?}"
                );
                let in_class = format!("[{pattern}-]");
                assert_eq!(
                    matches_char(&in_class, c),
                    fandango || c == '-',
                    "{in_class} on {c:?}"
                );
            }
        }
    }

    #[test]
    fn lookarounds_are_dropped_and_reported() {
        let t = translate(r"^(?!the_user$)([a-zA-Z0-9_]+)", false).unwrap();
        assert_eq!(t.pattern, "([a-zA-Z0-9_]+)");
        assert_eq!(t.dropped_lookarounds, vec![(1, 14)]);
    }

    #[test]
    fn backreferences_are_errors_with_positions() {
        let err = translate(r"(a)\1", false).unwrap_err();
        assert_eq!(err.span, (3, 5));
        assert!(translate(r"(?P<x>a)(?P=x)", false).is_err());
    }

    #[test]
    fn origins_map_rust_offsets_back() {
        let t = translate(r"\012x", false).unwrap();
        assert_eq!(t.pattern, r"\x{A}x");
        // `x` is the 6th byte of the Rust pattern and the 5th of the Python one.
        assert_eq!(t.origin[5], 4);
    }
}
