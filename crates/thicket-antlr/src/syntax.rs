//! The ANTLR 4 grammar syntax: a hand-written tokenizer and recursive-descent parser
//! for `.g4` files into a [`G4File`]. Everything the language of the grammar does not
//! depend on (labels, alternative labels, element options, rule arguments) is dropped;
//! target-code actions and predicates are kept as elements so the translation can
//! report each one.

use thicket_grammar::{Diagnostic, Span};

/// Deepest nesting of parentheses read; deeper files are refused rather than risk the
/// stack (the parser is recursive over parentheses only).
pub const MAX_NESTING: usize = 200;

/// Which kind of grammar a file declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrammarKind {
    /// `grammar X;`: parser and lexer rules together.
    Combined,
    /// `lexer grammar X;`.
    Lexer,
    /// `parser grammar X;`.
    Parser,
}

/// One `.g4` file, as written.
#[derive(Clone, Debug)]
pub struct G4File {
    /// The declared kind.
    pub kind: GrammarKind,
    /// The grammar's name.
    pub name: String,
    /// `options { name = value; }` of the grammar (values as written, quotes removed).
    pub options: Vec<(String, String, Span)>,
    /// Names declared in `tokens { ... }`.
    pub tokens: Vec<(String, Span)>,
    /// Rules in the order written.
    pub rules: Vec<RuleDef>,
    /// Named actions (`@header {...}`, `@members {...}`), reported as ignored.
    pub named_actions: Vec<Span>,
    /// Grammars named by `import A, B = C;` (the grammar's name, where written).
    pub imports: Vec<(String, Span)>,
    /// Modes declared by `mode X;`.
    pub modes: Vec<(String, Span)>,
    /// Channels declared by `channels { X, Y }`.
    pub channels: Vec<(String, Span)>,
    /// Modes named by `pushMode(X)` and `mode(X)` commands, where written.
    pub mode_refs: Vec<(String, Span)>,
    /// Channels named by `channel(X)` commands (not numbers), where written.
    pub channel_refs: Vec<(String, Span)>,
    /// Commands spelled with a capital first letter (`Channel(X)`, `Skip`), where
    /// written: ANTLR emits them as target code (see `Parser::command`).
    pub template_commands: Vec<(String, Span)>,
}

impl G4File {
    /// The value of a grammar option, if given.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, v, _)| v.as_str())
    }
}

/// A parser or lexer rule.
#[derive(Clone, Debug)]
pub struct RuleDef {
    /// The rule's name: upper-case initial for lexer rules.
    pub name: String,
    /// Where the name is written.
    pub span: Span,
    /// `fragment` lexer rule.
    pub fragment: bool,
    /// The lexer mode the rule is in (`None` for the default mode and parser rules).
    pub mode: Option<String>,
    /// Its outer alternatives, each with its lexer commands (`-> skip`).
    pub alts: Vec<(Elem, Vec<Command>)>,
    /// Target code attached to the rule (arguments, `returns`, `@init`...), ignored.
    pub actions: Vec<Span>,
    /// The rule's own `options { caseInsensitive = ...; }`, if given (lexer rules).
    pub case_insensitive: Option<bool>,
    /// For each alternative: whether it is marked `<assoc=right>` (left-recursive
    /// parser rules).
    pub right_assoc: Vec<bool>,
}

impl RuleDef {
    /// Whether it is a lexer rule (its name starts with an upper-case letter).
    pub fn is_lexer(&self) -> bool {
        self.name.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

/// A lexer command after `->`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `skip`.
    Skip,
    /// `more`: the matched text continues the next token.
    More,
    /// `channel(X)`: the token goes to channel X (a name, or a number as written);
    /// the parser sees only the default channel (`DEFAULT_TOKEN_CHANNEL`, 0).
    Channel(String),
    /// `type(X)`: the token's type is X.
    Type(String),
    /// `pushMode(X)`.
    PushMode(String),
    /// `popMode`.
    PopMode,
    /// `mode(X)`.
    Mode(String),
}

impl Command {
    /// Whether it sends the token to a channel the parser does not read: any channel
    /// but `DEFAULT_TOKEN_CHANNEL` (number 0).
    pub fn is_hidden_channel(&self) -> bool {
        matches!(self, Command::Channel(ch) if ch != "DEFAULT_TOKEN_CHANNEL" && !ch.trim_start_matches('0').is_empty())
    }
}

/// A set of code points: ranges and Unicode properties, possibly negated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CharSet {
    /// Inclusive code point ranges.
    pub ranges: Vec<(u32, u32)>,
    /// Unicode properties: name and whether negated (`\P{..}`).
    pub properties: Vec<(String, bool)>,
    /// Whether the set is the complement of the above.
    pub negated: bool,
}

/// An element of a rule's right-hand side.
#[derive(Clone, Debug)]
pub enum Elem {
    /// Alternatives (two or more).
    Alt(Vec<Elem>),
    /// A sequence (possibly empty: the empty string).
    Seq(Vec<Elem>),
    /// `x?`, `x*`, `x+`, and their non-greedy forms (`greedy` false).
    Repeat {
        /// The repeated element.
        item: Box<Elem>,
        /// Least repetitions (0 or 1).
        min: u32,
        /// Most repetitions: `Some(1)` for `?`.
        max: Option<u32>,
        /// `false` for `*?`, `+?`, `??`.
        greedy: bool,
    },
    /// A rule or token name.
    Ref(String, Span),
    /// A string literal, decoded.
    Literal(String, Span),
    /// A character set: `[a-z]`, `'a'..'z'`, `~x` in a lexer rule.
    Set(CharSet, Span),
    /// `.`: any character (lexer) or any token (parser).
    Any(Span),
    /// `~x` in a parser rule: any token but those of `x`.
    NotTokens(Box<Elem>, Span),
    /// `EOF`.
    Eof(Span),
    /// `{...}`: target code, matched as the empty string.
    Action(Span),
    /// `{...}?`: a semantic predicate, assumed true.
    Predicate(Span),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// A decimal number (channel numbers).
    Int(String),
    Str(String),
    /// The raw text between `[` and `]`.
    Bracket(String),
    /// `{...}`; `true` if followed by `?` (a predicate).
    Action(bool),
    Punct(&'static str),
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Int(s) => format!("`{s}`"),
            Tok::Str(_) => "a string literal".into(),
            Tok::Bracket(_) => "`[...]`".into(),
            Tok::Action(false) => "an action `{...}`".into(),
            Tok::Action(true) => "a predicate `{...}?`".into(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::End => "the end of the file".into(),
        }
    }
}

/// Tokenizes `text` in one pass; the first lexical error stops it.
fn tokenize(text: &str) -> Result<Vec<(Tok, Span)>, Box<Diagnostic>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |code, msg: String, at: usize, end: usize| {
        Box::new(Diagnostic::error(
            code,
            msg,
            Span::new(at, end.max(at + 1).min(text.len().max(at))),
        ))
    };
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if bytes[i..].starts_with(b"/*") {
            match text[i + 2..].find("*/") {
                Some(end) => i += end + 4,
                None => {
                    return Err(err(
                        "g4-unterminated",
                        "unterminated comment: expected `*/`".into(),
                        start,
                        start + 2,
                    ));
                }
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].to_string()), Span::new(start, i)));
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push((Tok::Int(text[start..i].to_string()), Span::new(start, i)));
            continue;
        }
        if c == b'\'' {
            i += 1;
            let mut value = String::new();
            loop {
                let Some(ch) = text[i..].chars().next() else {
                    return Err(err(
                        "g4-unterminated",
                        "unterminated string literal: expected `'`".into(),
                        start,
                        start + 1,
                    ));
                };
                if ch == '\n' || ch == '\r' {
                    return Err(err(
                        "g4-unterminated",
                        "unterminated string literal: expected `'` before the end of the line"
                            .into(),
                        start,
                        i,
                    ));
                }
                if ch == '\'' {
                    i += 1;
                    break;
                }
                if ch == '\\' {
                    let (decoded, len) = escape(text, i, false)?;
                    value.push_str(&decoded);
                    i += len;
                } else {
                    value.push(ch);
                    i += ch.len_utf8();
                }
            }
            out.push((Tok::Str(value), Span::new(start, i)));
            continue;
        }
        if c == b'[' {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => {
                        return Err(err(
                            "g4-unterminated",
                            "unterminated `[`: expected `]`".into(),
                            start,
                            start + 1,
                        ));
                    }
                    Some(b'\\') => i += 2,
                    Some(b']') => break,
                    Some(_) => i += 1,
                }
            }
            let raw = text[start + 1..i.min(text.len())].to_string();
            i += 1;
            out.push((Tok::Bracket(raw), Span::new(start, i)));
            continue;
        }
        if c == b'{' {
            let mut depth = 0usize;
            loop {
                match bytes.get(i) {
                    None => {
                        return Err(err(
                            "g4-unterminated",
                            "unterminated action: expected `}`".into(),
                            start,
                            start + 1,
                        ));
                    }
                    Some(b'{') => depth += 1,
                    Some(b'}') => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    // Braces inside target-language strings do not count.
                    Some(&q @ (b'"' | b'\'')) => {
                        i += 1;
                        while i < bytes.len() && bytes[i] != q && bytes[i] != b'\n' {
                            i += if bytes[i] == b'\\' { 2 } else { 1 };
                        }
                    }
                    Some(_) => {}
                }
                i += 1;
            }
            let predicate = bytes.get(i) == Some(&b'?');
            if predicate {
                i += 1;
            }
            out.push((Tok::Action(predicate), Span::new(start, i)));
            continue;
        }
        const PUNCT: [&str; 21] = [
            "->", "::", "..", "+=", ":", ";", "|", "(", ")", "*", "+", "?", "~", ".", ",", "=",
            "#", "<", ">", "@", "$",
        ];
        if let Some(p) = PUNCT.iter().find(|p| text[i..].starts_with(**p)) {
            i += p.len();
            out.push((Tok::Punct(p), Span::new(start, i)));
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or('?');
        return Err(err(
            "g4-character",
            format!("unexpected character {ch:?}"),
            start,
            start + ch.len_utf8(),
        ));
    }
    out.push((Tok::End, Span::new(text.len(), text.len())));
    Ok(out)
}

/// Decodes the escape at `text[at]` (a backslash): its value and length. In sets,
/// `\]` and `\-` are allowed too.
fn escape(text: &str, at: usize, in_set: bool) -> Result<(String, usize), Box<Diagnostic>> {
    let rest = &text[at + 1..];
    let bad = |len: usize, what: &str| {
        Box::new(
            Diagnostic::error(
                "g4-escape",
                format!("invalid escape: {what}"),
                Span::new(at, at + 1 + len),
            )
            .with_note(
                "ANTLR escapes are \\n \\r \\t \\b \\f \\\\ \\' \\uXXXX \\u{X...} (and \\] \\- \\p{..} in sets)",
            ),
        )
    };
    let Some(c) = rest.chars().next() else {
        return Err(bad(0, "a backslash at the end"));
    };
    let simple = match c {
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        '\\' | '\'' | '"' => Some(c),
        ']' | '-' | '[' if in_set => Some(c),
        _ => None,
    };
    if let Some(s) = simple {
        return Ok((s.to_string(), 2));
    }
    if c == 'u' {
        let (digits, len) = if let Some(body) = rest[1..].strip_prefix('{') {
            match body.find('}') {
                Some(end) => (&body[..end], end + 3),
                None => return Err(bad(1, "`\\u{` without `}`")),
            }
        } else {
            (rest.get(1..5).unwrap_or(""), 5)
        };
        let code = (digits.len() <= 6 && !digits.is_empty())
            .then(|| u32::from_str_radix(digits, 16).ok())
            .flatten();
        // Surrogates are not characters: in UTF-8 text they cannot occur, so an
        // escape naming one is taken as the nearest character boundary.
        return match code {
            Some(v) if (0xD800..=0xDFFF).contains(&v) => Ok((
                char::from_u32(if v < 0xDC00 { 0xD7FF } else { 0xE000 })
                    .unwrap_or('\u{FFFD}')
                    .to_string(),
                len + 1,
            )),
            Some(v) => match char::from_u32(v) {
                Some(ch) => Ok((ch.to_string(), len + 1)),
                None => Err(bad(len, "not a Unicode code point")),
            },
            None => Err(bad(len, "`\\u` takes 4 hex digits or `{hex}`")),
        };
    }
    Err(bad(c.len_utf8(), &format!("`\\{c}`")))
}

/// Reads the text between `[` and `]` (starting at `offset` in the file) as a set.
fn parse_set(text: &str, raw: &str, offset: usize) -> Result<CharSet, Box<Diagnostic>> {
    let mut set = CharSet::default();
    let mut i = 0;
    let mut prev: Option<u32> = None;
    // Where the last single character starts: a range's error spans from there.
    let mut prev_at = offset;
    let mut pending_range = false;
    while i < raw.len() {
        let at = offset + i;
        let c = raw[i..].chars().next().unwrap_or(' ');
        let value = if c == '\\' {
            let next = raw[i + 1..].chars().next();
            if matches!(next, Some('p' | 'P')) {
                let Some(close) = raw[i..].find('}').filter(|_| raw[i + 2..].starts_with('{'))
                else {
                    return Err(Box::new(Diagnostic::error(
                        "g4-set",
                        "a Unicode property must be written `\\p{Name}`",
                        Span::new(at, at + 2),
                    )));
                };
                set.properties
                    .push((raw[i + 3..i + close].to_string(), next == Some('P')));
                i += close + 1;
                prev = None;
                continue;
            }
            let (decoded, len) = escape(text, at, true)?;
            i += len;
            decoded.chars().next().unwrap_or('\0') as u32
        } else if c == '-' && prev.is_some() && i + 1 < raw.len() && !pending_range {
            pending_range = true;
            i += 1;
            continue;
        } else {
            i += c.len_utf8();
            c as u32
        };
        if pending_range {
            let low = prev.take().unwrap_or(value);
            if low > value {
                return Err(Box::new(Diagnostic::error(
                    "g4-set",
                    format!("empty range in a set: {low:#x} is above {value:#x}"),
                    Span::new(prev_at, offset + i),
                )));
            }
            set.ranges.pop();
            set.ranges.push((low, value));
            pending_range = false;
        } else {
            set.ranges.push((value, value));
            prev = Some(value);
            prev_at = at;
        }
    }
    Ok(set)
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<(Tok, Span)>,
    pos: usize,
    depth: usize,
    in_lexer_rule: bool,
    mode_refs: Vec<(String, Span)>,
    channel_refs: Vec<(String, Span)>,
    template_commands: Vec<(String, Span)>,
    /// Whether the alternative being read has `<assoc=right>`.
    right_assoc: bool,
    /// For each outer alternative of the rule being read: `<assoc=right>`.
    alt_right_assoc: Vec<bool>,
}

type PResult<T> = Result<T, Box<Diagnostic>>;

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].0
    }

    fn span(&self) -> Span {
        self.toks[self.pos].1
    }

    fn bump(&mut self) -> (Tok, Span) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(w) if w == word)
    }

    fn expected(&self, what: &str) -> Box<Diagnostic> {
        Box::new(
            Diagnostic::error(
                "g4-syntax",
                format!("expected {what}, found {}", self.peek().describe()),
                self.span(),
            )
            .with_label_message(format!("expected {what}")),
        )
    }

    fn expect(&mut self, p: &str) -> PResult<Span> {
        if self.is(p) {
            Ok(self.bump().1)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(name) => Ok((name, self.bump().1)),
            _ => Err(self.expected(what)),
        }
    }

    fn file(&mut self) -> PResult<G4File> {
        let kind = if self.is_ident("lexer") {
            self.bump();
            GrammarKind::Lexer
        } else if self.is_ident("parser") {
            self.bump();
            GrammarKind::Parser
        } else {
            GrammarKind::Combined
        };
        if !self.is_ident("grammar") {
            return Err(self.expected("`grammar`, `lexer grammar` or `parser grammar`"));
        }
        self.bump();
        let (name, _) = self.ident("the grammar's name")?;
        self.expect(";")?;
        let mut file = G4File {
            kind,
            name,
            options: Vec::new(),
            tokens: Vec::new(),
            rules: Vec::new(),
            named_actions: Vec::new(),
            imports: Vec::new(),
            modes: Vec::new(),
            channels: Vec::new(),
            mode_refs: Vec::new(),
            channel_refs: Vec::new(),
            template_commands: Vec::new(),
        };
        let mut mode: Option<String> = None;
        loop {
            match self.peek().clone() {
                Tok::End => break,
                Tok::Ident(w) if w == "options" => {
                    self.bump();
                    file.options = self.options()?;
                }
                Tok::Ident(w) if w == "tokens" || w == "channels" => {
                    let at = self.bump().1;
                    if w == "channels" && kind != GrammarKind::Lexer {
                        return Err(Box::new(
                            Diagnostic::error(
                                "g4-syntax",
                                "custom channels are only allowed in lexer grammars",
                                at,
                            )
                            .with_note(
                                "use `channel(HIDDEN)` or a channel number, or split the grammar",
                            ),
                        ));
                    }
                    let names = self.name_list()?;
                    if w == "tokens" {
                        file.tokens.extend(names);
                    } else {
                        file.channels.extend(names);
                    }
                }
                Tok::Ident(w) if w == "import" => {
                    self.bump();
                    loop {
                        // `import label = Name` imports Name.
                        let mut name = self.ident("a grammar name")?;
                        if self.is("=") {
                            self.bump();
                            name = self.ident("a grammar name")?;
                        }
                        file.imports.push(name);
                        if !self.is(",") {
                            break;
                        }
                        self.bump();
                    }
                    self.expect(";")?;
                }
                Tok::Ident(w) if w == "mode" => {
                    let at = self.bump().1;
                    if kind != GrammarKind::Lexer {
                        return Err(Box::new(
                            Diagnostic::error(
                                "g4-syntax",
                                "lexical modes are only allowed in lexer grammars",
                                at,
                            )
                            .with_note(
                                "split the grammar into a parser grammar and a lexer grammar",
                            ),
                        ));
                    }
                    let (name, at) = self.ident("a mode name")?;
                    self.expect(";")?;
                    file.modes.push((name.clone(), at));
                    mode = Some(name);
                }
                Tok::Punct("@") => {
                    let start = self.bump().1;
                    self.ident("an action name such as `header` or `members`")?;
                    if self.is("::") {
                        self.bump();
                        self.ident("an action name")?;
                    }
                    match self.bump() {
                        (Tok::Action(false), end) => file.named_actions.push(start.to(end)),
                        _ => return Err(self.expected_prev("an action `{...}`")),
                    }
                }
                Tok::Ident(_) => {
                    let rule = self.rule(mode.clone())?;
                    if rule.is_lexer() && kind == GrammarKind::Parser {
                        return Err(Box::new(Diagnostic::error(
                            "g4-syntax",
                            format!("lexer rule `{}` in a parser grammar", rule.name),
                            rule.span,
                        )));
                    }
                    if !rule.is_lexer() && kind == GrammarKind::Lexer {
                        return Err(Box::new(Diagnostic::error(
                            "g4-syntax",
                            format!("parser rule `{}` in a lexer grammar", rule.name),
                            rule.span,
                        )));
                    }
                    if !rule.is_lexer() && mode.is_some() {
                        return Err(Box::new(Diagnostic::error(
                            "g4-syntax",
                            format!("parser rule `{}` after a `mode` declaration", rule.name),
                            rule.span,
                        )));
                    }
                    file.rules.push(rule);
                }
                _ => {
                    return Err(
                        self.expected("a rule, `options`, `tokens`, `mode` or `@name {...}`")
                    );
                }
            }
        }
        file.mode_refs = std::mem::take(&mut self.mode_refs);
        file.channel_refs = std::mem::take(&mut self.channel_refs);
        file.template_commands = std::mem::take(&mut self.template_commands);
        Ok(file)
    }

    fn expected_prev(&mut self, what: &str) -> Box<Diagnostic> {
        self.pos = self.pos.saturating_sub(1);
        self.expected(what)
    }

    /// `options { name = value; ... }`: the braces were tokenized as an action, so its
    /// inside is read here.
    fn options(&mut self) -> PResult<Vec<(String, String, Span)>> {
        let (tok, span) = self.bump();
        if tok != Tok::Action(false) {
            return Err(self.expected_prev("`{` with name = value; options"));
        }
        let base = span.start as usize + 1;
        let inner = blank_comments(&self.text[base..span.end as usize - 1]);
        let mut options = Vec::new();
        for (offset, part) in split_keep_offsets(&inner, ';') {
            let at = base + offset + (part.len() - part.trim_start().len());
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let Some((name, value)) = part.split_once('=') else {
                return Err(Box::new(Diagnostic::error(
                    "g4-syntax",
                    format!("expected `name = value;` in options, found `{part}`"),
                    Span::new(at, at + part.len()),
                )));
            };
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(Box::new(Diagnostic::error(
                    "g4-syntax",
                    format!("expected an option name before `=`, found `{name}`"),
                    Span::new(at, at + part.len()),
                )));
            }
            let value = value.trim().trim_matches('\'').to_string();
            options.push((name.to_string(), value, Span::new(at, at + part.len())));
        }
        Ok(options)
    }

    fn name_list(&mut self) -> PResult<Vec<(String, Span)>> {
        // `tokens { A, B }` is tokenized as an action span: read the names inside.
        let (tok, span) = self.bump();
        if tok != Tok::Action(false) {
            return Err(self.expected_prev("`{` with a list of names"));
        }
        let inner = blank_comments(&self.text[span.start as usize + 1..span.end as usize - 1]);
        let mut names = Vec::new();
        let mut offset = span.start as usize + 1;
        for part in inner.split(',') {
            let name = part.trim();
            let lead = part.len() - part.trim_start().len();
            let at = offset + lead;
            if !name.is_empty() {
                if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    || name.starts_with(|c: char| c.is_ascii_digit())
                {
                    return Err(Box::new(Diagnostic::error(
                        "g4-syntax",
                        format!("expected a token name, found `{name}`"),
                        Span::new(at, at + name.len()),
                    )));
                }
                names.push((name.to_string(), Span::new(at, at + name.len())));
            }
            offset += part.len() + 1;
        }
        Ok(names)
    }

    fn rule(&mut self, mode: Option<String>) -> PResult<RuleDef> {
        let mut fragment = false;
        if self.is_ident("fragment") && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            fragment = true;
        }
        let (name, span) = self.ident("a rule name")?;
        let lexer = name.starts_with(|c: char| c.is_ascii_uppercase());
        if fragment && !lexer {
            return Err(Box::new(Diagnostic::error(
                "g4-syntax",
                format!("`fragment` on parser rule `{name}`: only lexer rules can be fragments"),
                span,
            )));
        }
        let mut actions = Vec::new();
        let mut case_insensitive = None;
        // Parser rule prequel: arguments, returns, locals, throws, options, @init.
        loop {
            match self.peek().clone() {
                Tok::Bracket(_) if !lexer => actions.push(self.bump().1),
                Tok::Ident(w) if (w == "returns" || w == "locals") && !lexer => {
                    self.bump();
                    match self.bump() {
                        (Tok::Bracket(_), s) => actions.push(s),
                        _ => return Err(self.expected_prev("`[...]`")),
                    }
                }
                Tok::Ident(w) if w == "throws" && !lexer => {
                    self.bump();
                    self.ident("an exception name")?;
                    while self.is(",") {
                        self.bump();
                        self.ident("an exception name")?;
                    }
                }
                Tok::Ident(w) if w == "options" => {
                    self.bump();
                    for (name, value, _) in self.options()? {
                        if name == "caseInsensitive" {
                            case_insensitive = Some(value == "true");
                        }
                    }
                }
                Tok::Punct("@") => {
                    let start = self.bump().1;
                    self.ident("`init` or `after`")?;
                    match self.bump() {
                        (Tok::Action(false), end) => actions.push(start.to(end)),
                        _ => return Err(self.expected_prev("an action `{...}`")),
                    }
                }
                _ => break,
            }
        }
        if !self.is(":") {
            return Err(self.expected(&format!("`:` after the rule name `{name}`")));
        }
        self.bump();
        self.in_lexer_rule = lexer;
        self.alt_right_assoc.clear();
        let mut alts = vec![self.outer_alt()?];
        while self.is("|") {
            self.bump();
            alts.push(self.outer_alt()?);
        }
        if !self.is(";") {
            return Err(self.expected(&format!("`;` or `|` to end rule `{name}`")));
        }
        self.bump();
        while self.is_ident("catch") || self.is_ident("finally") {
            let at = self.bump().1;
            if matches!(self.peek(), Tok::Bracket(_)) {
                self.bump();
            }
            match self.bump() {
                (Tok::Action(false), end) => actions.push(at.to(end)),
                _ => return Err(self.expected_prev("an action `{...}`")),
            }
        }
        Ok(RuleDef {
            name,
            span,
            fragment,
            mode: if lexer { mode } else { None },
            alts,
            actions,
            case_insensitive,
            right_assoc: std::mem::take(&mut self.alt_right_assoc),
        })
    }

    /// An alternative of a rule, with its `#Label` or `-> commands`.
    fn outer_alt(&mut self) -> PResult<(Elem, Vec<Command>)> {
        self.right_assoc = false;
        let elem = self.sequence()?;
        self.alt_right_assoc.push(self.right_assoc);
        let mut commands = Vec::new();
        if self.is("#") {
            self.bump();
            self.ident("an alternative label after `#`")?;
        }
        if self.is("->") {
            if !self.in_lexer_rule {
                return Err(self.expected("an element (lexer commands `->` are for lexer rules)"));
            }
            self.bump();
            loop {
                commands.push(self.command()?);
                if !self.is(",") {
                    break;
                }
                self.bump();
            }
        }
        Ok((elem, commands))
    }

    /// A lexer command. ANTLR knows the commands by their exact names and, failing
    /// that, looks for a code template named after the command with its first letter
    /// capitalized, so `Channel(X)` is emitted as the target code of `channel(X)`
    /// (`_channel = X`): the same command in the Java and C# targets, a failure in the
    /// Python one. thicket reads such a spelling as the command it names (and the
    /// translation warns that ANTLR makes target code of it).
    fn command(&mut self) -> PResult<Command> {
        let (written, span) =
            self.ident("a lexer command (skip, more, channel, type, pushMode, popMode, mode)")?;
        let name = match written.chars().next() {
            Some(first) if first.is_ascii_uppercase() => {
                let name = format!("{}{}", first.to_ascii_lowercase(), &written[1..]);
                if COMMANDS.contains(&name.as_str()) {
                    self.template_commands.push((written.clone(), span));
                }
                name
            }
            _ => written.clone(),
        };
        let arg = |p: &mut Self| -> PResult<(String, Span)> {
            p.expect("(")?;
            let value = p.ident("a name")?;
            p.expect(")")?;
            Ok(value)
        };
        Ok(match name.as_str() {
            "skip" => Command::Skip,
            "more" => Command::More,
            "popMode" => Command::PopMode,
            "channel" => {
                self.expect("(")?;
                let channel = match self.bump() {
                    (Tok::Int(n), _) => n,
                    (Tok::Ident(n), at) => {
                        self.channel_refs.push((n.clone(), at));
                        n
                    }
                    _ => return Err(self.expected_prev("a channel name or number")),
                };
                self.expect(")")?;
                Command::Channel(channel)
            }
            "type" => Command::Type(arg(self)?.0),
            "pushMode" | "mode" => {
                let (mode, at) = arg(self)?;
                self.mode_refs.push((mode.clone(), at));
                if name == "mode" {
                    Command::Mode(mode)
                } else {
                    Command::PushMode(mode)
                }
            }
            _ => {
                return Err(Box::new(
                    Diagnostic::error("g4-syntax", format!("unknown lexer command `{written}`"), span)
                        .with_note("lexer commands are skip, more, popMode, channel(X), type(X), pushMode(X), mode(X)"),
                ));
            }
        })
    }

    fn alternatives(&mut self) -> PResult<Elem> {
        let mut alts = vec![self.sequence()?];
        while self.is("|") {
            self.bump();
            alts.push(self.sequence()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Elem::Seq(Vec::new()))
        } else {
            Elem::Alt(alts)
        })
    }

    fn sequence(&mut self) -> PResult<Elem> {
        let mut items = Vec::new();
        // `<assoc=right>` and other element options at the start of an alternative.
        if self.is("<") {
            self.element_options()?;
        }
        loop {
            match self.peek() {
                Tok::Punct("|" | ")" | ";" | "#" | "->") | Tok::End => break,
                _ => items.push(self.element()?),
            }
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Elem::Seq(Vec::new()))
        } else {
            Elem::Seq(items)
        })
    }

    fn element_options(&mut self) -> PResult<()> {
        self.expect("<")?;
        loop {
            let (name, _) = self.ident("an element option name")?;
            if self.is("=") {
                self.bump();
                match self.bump() {
                    (Tok::Ident(value), _) => {
                        if name == "assoc" && value == "right" && self.depth == 0 {
                            self.right_assoc = true;
                        }
                    }
                    (Tok::Str(_) | Tok::Int(_) | Tok::Action(_), _) => {}
                    _ => return Err(self.expected_prev("an option value")),
                }
            }
            if self.is(",") {
                self.bump();
                continue;
            }
            self.expect(">")?;
            return Ok(());
        }
    }

    fn element(&mut self) -> PResult<Elem> {
        // Labels: `x=` and `x+=` are dropped.
        if matches!(self.peek(), Tok::Ident(_)) && matches!(self.peek_at(1), Tok::Punct("=" | "+="))
        {
            self.bump();
            self.bump();
        }
        let atom = match self.peek().clone() {
            Tok::Action(predicate) => {
                let span = self.bump().1;
                return Ok(if predicate {
                    Elem::Predicate(span)
                } else {
                    Elem::Action(span)
                });
            }
            Tok::Punct("(") => {
                let open = self.bump().1;
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(Box::new(Diagnostic::error(
                        "g4-nesting",
                        format!("parentheses nested more than {MAX_NESTING} deep"),
                        open,
                    )));
                }
                // `( options {...} : ...)`, and `( : ...)` (the prequel left empty).
                let prequel = self.is_ident("options");
                if prequel {
                    self.bump();
                    self.options()?;
                }
                if prequel || self.is(":") {
                    self.expect(":")?;
                }
                let inner = self.alternatives()?;
                self.depth -= 1;
                if !self.is(")") {
                    return Err(Box::new(
                        Diagnostic::error(
                            "g4-syntax",
                            format!("expected `)` or `|`, found {}", self.peek().describe()),
                            self.span(),
                        )
                        .with_label_message("expected `)`")
                        .with_secondary(open, "to close this `(`"),
                    ));
                }
                self.bump();
                inner
            }
            Tok::Punct("~") => {
                let at = self.bump().1;
                let inner = self.not_operand()?;
                if self.in_lexer_rule {
                    let mut set = self.set_of(&inner)?;
                    set.negated = !set.negated;
                    Elem::Set(set, at)
                } else {
                    Elem::NotTokens(Box::new(inner), at)
                }
            }
            _ => self.atom()?,
        };
        if self.is("<") {
            self.element_options()?;
        }
        let (min, max) = match self.peek() {
            Tok::Punct("?") => (0, Some(1)),
            Tok::Punct("*") => (0, None),
            Tok::Punct("+") => (1, None),
            _ => return Ok(atom),
        };
        self.bump();
        let greedy = if self.is("?") {
            self.bump();
            false
        } else {
            true
        };
        Ok(Elem::Repeat {
            item: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    /// What `~` applies to: an atom or a parenthesised set of alternatives.
    fn not_operand(&mut self) -> PResult<Elem> {
        if self.is("(") {
            let open = self.bump().1;
            let inner = self.alternatives()?;
            if !self.is(")") {
                return Err(Box::new(
                    self.expected("`)`")
                        .with_secondary(open, "to close this `(`"),
                ));
            }
            self.bump();
            Ok(inner)
        } else {
            self.atom()
        }
    }

    /// The set of characters `elem` matches, for `~`: sets, one-character literals and
    /// ranges, and alternatives of those.
    fn set_of(&self, elem: &Elem) -> PResult<CharSet> {
        match elem {
            Elem::Set(set, _) if !set.negated => Ok(set.clone()),
            Elem::Literal(text, span) => {
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(CharSet {
                        ranges: vec![(c as u32, c as u32)],
                        ..CharSet::default()
                    }),
                    _ => Err(Box::new(Diagnostic::error(
                        "g4-set",
                        "`~` applies to sets and one-character literals only",
                        *span,
                    ))),
                }
            }
            Elem::Alt(alts) => {
                let mut set = CharSet::default();
                for alt in alts {
                    let part = self.set_of(alt)?;
                    set.ranges.extend(part.ranges);
                    set.properties.extend(part.properties);
                }
                Ok(set)
            }
            other => Err(Box::new(Diagnostic::error(
                "g4-set",
                "`~` applies to sets, one-character literals and their alternatives only",
                elem_span(other).unwrap_or(self.span()),
            ))),
        }
    }

    fn atom(&mut self) -> PResult<Elem> {
        let (tok, span) = self.bump();
        match tok {
            Tok::Ident(name) => {
                if name == "EOF" {
                    return Ok(Elem::Eof(span));
                }
                // Rule arguments `expr[0]` are target code.
                if !self.in_lexer_rule && matches!(self.peek(), Tok::Bracket(_)) {
                    let args = self.bump().1;
                    return Ok(Elem::Seq(vec![Elem::Ref(name, span), Elem::Action(args)]));
                }
                Ok(Elem::Ref(name, span))
            }
            Tok::Str(text) => {
                if text.is_empty() {
                    return Err(Box::new(Diagnostic::error(
                        "g4-syntax",
                        "empty string literal '' (not allowed in ANTLR)",
                        span,
                    )));
                }
                if self.is("..") {
                    self.bump();
                    let (tok, end) = self.bump();
                    let Tok::Str(high) = tok else {
                        return Err(self.expected_prev("a string literal after `..`"));
                    };
                    let one = |s: &str, at: Span| -> PResult<u32> {
                        let mut it = s.chars();
                        match (it.next(), it.next()) {
                            (Some(c), None) => Ok(c as u32),
                            _ => Err(Box::new(Diagnostic::error(
                                "g4-set",
                                "a range `'a'..'z'` takes one-character literals",
                                at,
                            ))),
                        }
                    };
                    let (lo, hi) = (one(&text, span)?, one(&high, end)?);
                    if lo > hi {
                        return Err(Box::new(Diagnostic::error(
                            "g4-set",
                            "empty range: the first character is above the second",
                            span.to(end),
                        )));
                    }
                    return Ok(Elem::Set(
                        CharSet {
                            ranges: vec![(lo, hi)],
                            ..CharSet::default()
                        },
                        span.to(end),
                    ));
                }
                Ok(Elem::Literal(text, span))
            }
            Tok::Bracket(raw) => {
                if !self.in_lexer_rule {
                    return Err(Box::new(Diagnostic::error(
                        "g4-syntax",
                        "a character set `[...]` in a parser rule (sets are for lexer rules)",
                        span,
                    )));
                }
                Ok(Elem::Set(
                    parse_set(self.text, &raw, span.start as usize + 1)?,
                    span,
                ))
            }
            Tok::Punct(".") => Ok(Elem::Any(span)),
            _ => Err(self.expected_prev(
                "an element (a rule or token name, a 'literal', a set [..], `.`, `~` or `(`)",
            )),
        }
    }
}

/// `text` with its `//` and `/* */` comments (outside quotes) turned into spaces, so
/// that offsets into it are offsets into `text`.
fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let skip = if c == '\'' {
            // A quoted value, its escapes included.
            let mut end = 1;
            let bytes = rest.as_bytes();
            while end < bytes.len() && bytes[end] != b'\'' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(rest.len());
            let end = (end..=rest.len())
                .find(|&e| rest.is_char_boundary(e))
                .unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        } else if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if let Some(body) = rest.strip_prefix("/*") {
            body.find("*/").map_or(rest.len(), |e| e + 4)
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        // A space for each byte of the comment, its line breaks kept.
        for c in rest[..skip].chars() {
            if c == '\n' {
                out.push('\n');
            } else {
                out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
        }
        rest = &rest[skip..];
    }
    out
}

/// The `sep`-separated parts of `text` with their byte offsets.
fn split_keep_offsets(text: &str, sep: char) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split(sep).map(move |part| {
        let at = offset;
        offset += part.len() + sep.len_utf8();
        (at, part)
    })
}

/// Where an element is written, if it has a single place.
pub fn elem_span(elem: &Elem) -> Option<Span> {
    match elem {
        Elem::Ref(_, s)
        | Elem::Literal(_, s)
        | Elem::Set(_, s)
        | Elem::Any(s)
        | Elem::NotTokens(_, s)
        | Elem::Eof(s)
        | Elem::Action(s)
        | Elem::Predicate(s) => Some(*s),
        Elem::Alt(items) | Elem::Seq(items) => items.iter().find_map(elem_span),
        Elem::Repeat { item, .. } => elem_span(item),
    }
}

/// The lexer commands, by their names.
const COMMANDS: [&str; 7] = [
    "skip", "more", "popMode", "channel", "type", "pushMode", "mode",
];

/// Parses a `.g4` file's text.
pub fn parse_g4(text: &str) -> Result<G4File, Box<Diagnostic>> {
    let toks = tokenize(text)?;
    let mut parser = Parser {
        text,
        toks,
        pos: 0,
        depth: 0,
        in_lexer_rule: false,
        mode_refs: Vec::new(),
        channel_refs: Vec::new(),
        template_commands: Vec::new(),
        right_assoc: false,
        alt_right_assoc: Vec::new(),
    };
    parser.file()
}
