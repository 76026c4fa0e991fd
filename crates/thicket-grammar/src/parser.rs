//! Recursive-descent parser of the text spec format (see `docs/spec-format.md`).
//!
//! ```text
//! spec        := rule*
//! rule        := NONTERMINAL '::=' alternation ';'?
//! alternation := sequence ('|' sequence)*
//! sequence    := (atom quantifier?)*     -- ends before `|`, `)`, `;`, EOF or `<x> ::=`
//! atom        := NONTERMINAL | LITERAL | REGEX | '(' alternation ')'
//! quantifier  := '*' | '+' | '?' | '{n}' | '{n,}' | '{,m}' | '{n,m}'
//! ```
//!
//! The parser stops at the first syntax error: later errors are usually consequences.
//!
//! The same parser reads the productions of Fandango `.fan` files
//! ([`parse_fandango_productions`]; the statements around them are found by
//! `crate::fanfile`), with Fandango's additions:
//!
//! ```text
//! rule        := NONTERMINAL '::=' alternation ((':=' | '=' | '::') PYTHON-EXPRESSION)? ';'?
//! atom        := ... | BIT | '[[' (atom quantifier?)+ ']]' | '[' '^'? LITERAL ']'
//! quantifier  := ... | '{' bound '}' | '{' bound? ',' bound? '}'   -- bound: integer or Python
//! NONTERMINAL := '<' (PARTY ':' (PARTY ':')?)? NAME '>'
//! ```

use crate::ast::{AstExpr, AstExprKind, AstRule, SpecAst};
use crate::diag::Diagnostic;
use crate::lexer::{Dialect, Lexer, RepeatBound, Token, TokenKind};
use crate::source::Span;
use std::collections::VecDeque;

/// Permutations `[[ ... ]]` of more items than this are refused: their expansion into
/// alternatives grows as the factorial of the count.
pub const MAX_PERMUTATION_ITEMS: usize = 5;

/// Deepest nesting of parentheses accepted. Deeper specs are rejected rather than
/// risking the stack of this parser and of every later pass over the grammar.
pub const MAX_NESTING: usize = 128;

/// Fandango words that start a construct an ISLa `.bnf` grammar cannot hold, with what
/// to say.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "def",
        "Python function definitions (`def`) are Fandango code",
    ),
    ("import", "Python `import` statements are Fandango code"),
    (
        "from",
        "Python `from ... import` statements are Fandango code",
    ),
    ("class", "Python class definitions are Fandango code"),
    ("minimizing", "`minimizing` goals are Fandango constraints"),
    ("maximizing", "`maximizing` goals are Fandango constraints"),
    ("include", "`include(...)` is a Fandango statement"),
    ("setting", "`setting` lines are Fandango statements"),
    ("fuzz", "Fandango `fuzz` directives are not supported"),
];

/// Parses ISLa-dialect spec text (a `.bnf` grammar) into its syntax tree.
pub fn parse_spec(text: &str) -> Result<SpecAst, Box<Diagnostic>> {
    let mut parser = Parser {
        text,
        lexer: Lexer::new(text),
        lookahead: VecDeque::new(),
        depth: 0,
        dialect: Dialect::Isla,
        fan: FanGrammar::default(),
    };
    parser.spec()
}

/// What the productions of a Fandango file hold besides their rules, offsets in the
/// file's text.
#[derive(Clone, Debug, Default)]
pub struct FanGrammar {
    /// The rules in order, each with its generator's Python expression, if any.
    pub rules: Vec<(AstRule, Option<Span>)>,
    /// Repetitions with computed bounds: the repetition's span and the bounds' spans.
    pub computed_repeats: Vec<(Span, Option<Span>, Option<Span>)>,
    /// References with parties: the reference's span, the sender, the receiver.
    pub party_refs: Vec<(Span, String, Option<String>)>,
    /// Where bits are written.
    pub bits: Vec<Span>,
    /// Warnings about what was read (deprecated forms, invalid escapes, lookarounds).
    pub warnings: Vec<Diagnostic>,
}

impl FanGrammar {
    /// The node written at `from` is now written at `to` (a group's parentheses are
    /// part of its content's span): what is recorded about it follows. Only the latest
    /// records can be about it.
    fn respan(&mut self, from: Span, to: Span) {
        let recent = |span: &Span| span.start >= from.start;
        for (span, ..) in self
            .computed_repeats
            .iter_mut()
            .rev()
            .take_while(|r| recent(&r.0))
        {
            if *span == from {
                *span = to;
            }
        }
        for (span, ..) in self
            .party_refs
            .iter_mut()
            .rev()
            .take_while(|r| recent(&r.0))
        {
            if *span == from {
                *span = to;
            }
        }
        for span in self.bits.iter_mut().rev().take_while(|s| recent(s)) {
            if *span == from {
                *span = to;
            }
        }
    }
}

/// Parses Fandango productions in `text[start..end]` into `into`. Stops at a `where`
/// that begins a constraint among them: its offset, if one does.
pub fn parse_fandango_productions(
    text: &str,
    start: usize,
    end: usize,
    into: &mut FanGrammar,
) -> Result<Option<usize>, Box<Diagnostic>> {
    let mut parser = Parser {
        text,
        lexer: Lexer::fandango(text, start, end),
        lookahead: VecDeque::new(),
        depth: 0,
        dialect: Dialect::Fandango,
        fan: std::mem::take(into),
    };
    let result = parser.productions();
    let warnings = parser.lexer.take_warnings();
    *into = parser.fan;
    into.warnings.extend(warnings);
    result
}

struct Parser<'a> {
    text: &'a str,
    lexer: Lexer<'a>,
    lookahead: VecDeque<Token>,
    depth: usize,
    dialect: Dialect,
    fan: FanGrammar,
}

type PResult<T> = Result<T, Box<Diagnostic>>;

impl Parser<'_> {
    fn peek_nth(&mut self, n: usize) -> PResult<&Token> {
        while self.lookahead.len() <= n {
            let token = self.lexer.next_token()?;
            self.lookahead.push_back(token);
        }
        Ok(&self.lookahead[n])
    }

    fn peek(&mut self) -> PResult<&Token> {
        self.peek_nth(0)
    }

    fn next(&mut self) -> PResult<Token> {
        self.peek()?;
        Ok(self.lookahead.pop_front().expect("peeked"))
    }

    /// Whether the next two tokens start a new rule: `<name> ::=`.
    fn at_rule_start(&mut self) -> PResult<bool> {
        Ok(matches!(self.peek()?.kind, TokenKind::Nonterminal(_))
            && self.peek_nth(1)?.kind == TokenKind::Define)
    }

    fn spec(&mut self) -> PResult<SpecAst> {
        let mut ast = SpecAst::default();
        loop {
            if matches!(&self.peek()?.kind, TokenKind::Word(w) if w == "where") {
                // Constraints follow; the grammar ends here. Their text is read by
                // thicket-constraint, which knows their language.
                ast.constraints_start = Some(self.peek()?.span.start as usize);
                break;
            }
            let token = self.next()?;
            match token.kind {
                TokenKind::Eof => break,
                TokenKind::Nonterminal(name) => {
                    let define = self.next()?;
                    if define.kind != TokenKind::Define {
                        return Err(expected(
                            &define,
                            "`::=` after the rule name",
                            "a rule is written `<name> ::= alternatives`",
                        ));
                    }
                    let body = self.alternation()?;
                    if self.peek()?.kind == TokenKind::Semi {
                        self.next()?;
                    }
                    ast.rules.push(AstRule {
                        name,
                        name_span: token.span,
                        body,
                    });
                }
                TokenKind::RParen => {
                    return Err(Box::new(
                        Diagnostic::error("syntax", "unmatched `)`", token.span)
                            .with_label_message("no `(` is open here")
                            .with_note("remove it or add the missing `(`; to use `)` as text, quote it: \")\""),
                    ));
                }
                _ => {
                    return Err(unsupported(&token).unwrap_or_else(|| {
                        expected(
                            &token,
                            "a rule `<name> ::= ...`",
                            "every rule starts with its name",
                        )
                    }));
                }
            }
        }
        Ok(ast)
    }

    /// Fandango productions up to the end of the lexer's range or a `where`.
    fn productions(&mut self) -> PResult<Option<usize>> {
        loop {
            if let TokenKind::Word(w) = &self.peek()?.kind
                && w == "where"
            {
                return Ok(Some(self.peek()?.span.start as usize));
            }
            let token = self.next()?;
            match token.kind {
                TokenKind::Eof => return Ok(None),
                TokenKind::Nonterminal(written) => {
                    let (name, parties) = split_parties(&written, token.span)?;
                    if let Some(sender) = parties.first() {
                        return Err(Box::new(
                            Diagnostic::error(
                                "syntax",
                                format!("a rule is defined for <{name}>, not for a party's message <{sender}:...>"),
                                token.span,
                            )
                            .with_label_message("parties go on references, not on definitions")
                            .with_note(format!("write `<{name}> ::= ...` and refer to it as `<{written}>`")),
                        ));
                    }
                    let define = self.next()?;
                    if define.kind != TokenKind::Define {
                        return Err(expected(
                            &define,
                            "`::=` after the rule name",
                            "a rule is written `<name> ::= alternatives`",
                        ));
                    }
                    let body = self.alternation()?;
                    let generator = self.generator()?;
                    if self.peek()?.kind == TokenKind::Semi {
                        self.next()?;
                    }
                    self.fan.rules.push((
                        AstRule {
                            name,
                            name_span: token.span,
                            body,
                        },
                        generator,
                    ));
                }
                TokenKind::RParen => {
                    return Err(Box::new(
                        Diagnostic::error("syntax", "unmatched `)`", token.span)
                            .with_label_message("no `(` is open here")
                            .with_note("remove it or add the missing `(`; to use `)` as text, quote it: \")\""),
                    ));
                }
                _ => {
                    return Err(expected(
                        &token,
                        "a rule `<name> ::= ...`",
                        "every rule starts with its name",
                    ));
                }
            }
        }
    }

    /// A generator after a rule's alternatives: `:= expression` (or the deprecated `=`
    /// and `::`), the expression's span; the lexer moves past it.
    fn generator(&mut self) -> PResult<Option<Span>> {
        if !matches!(
            self.peek()?.kind,
            TokenKind::Walrus | TokenKind::Assign | TokenKind::DoubleColon
        ) {
            return Ok(None);
        }
        let op = self.next()?;
        debug_assert!(
            self.lookahead.is_empty(),
            "the operator was the only token peeked"
        );
        let limit = self.text.len().min(self.lexer_limit());
        let start = crate::pyscan::skip_blanks(self.text, op.span.end as usize);
        let end = crate::pyscan::expression_end(self.text, start, limit).max(start);
        if end == start {
            return Err(Box::new(
                Diagnostic::error(
                    "syntax",
                    format!("expected a Python expression after {}", op.kind.describe()),
                    op.span,
                )
                .with_label_message("a generator needs an expression")
                .with_note("a generator is written `<name> ::= alternatives := expression`"),
            ));
        }
        if op.kind != TokenKind::Walrus {
            self.fan.warnings.push(
                Diagnostic::warning(
                    "deprecated-generator",
                    format!("{} for generators is deprecated", op.kind.describe()),
                    op.span,
                )
                .with_label_message("write `:=`"),
            );
        }
        self.lexer.seek(end);
        Ok(Some(Span::new(start, end)))
    }

    /// One past the last offset the lexer reads.
    fn lexer_limit(&self) -> usize {
        self.lexer.limit()
    }

    fn alternation(&mut self) -> PResult<AstExpr> {
        let mut alternatives = vec![self.sequence()?];
        while self.peek()?.kind == TokenKind::Pipe {
            self.next()?;
            alternatives.push(self.sequence()?);
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().expect("one alternative")
        } else {
            let span = alternatives[0]
                .span
                .to(alternatives.last().expect("two").span);
            AstExpr {
                kind: AstExprKind::Alt(alternatives),
                span,
            }
        })
    }

    fn sequence(&mut self) -> PResult<AstExpr> {
        let start = self.peek()?.span.start as usize;
        let mut items = Vec::new();
        loop {
            if self.at_rule_start()? {
                break;
            }
            let fandango = self.dialect == Dialect::Fandango;
            match &self.peek()?.kind {
                TokenKind::Pipe | TokenKind::RParen | TokenKind::Semi | TokenKind::Eof => break,
                TokenKind::Walrus
                | TokenKind::Assign
                | TokenKind::DoubleColon
                | TokenKind::RBracket
                    if fandango =>
                {
                    break;
                }
                TokenKind::Word(w) if w == "where" => break,
                _ => {}
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            let span = match (items.first(), items.last()) {
                (Some(first), Some(last)) => first.span.to(last.span),
                _ => Span::new(start, start),
            };
            AstExpr {
                kind: AstExprKind::Seq(items),
                span,
            }
        })
    }

    fn quantified(&mut self, atom: AstExpr) -> PResult<AstExpr> {
        let mut computed = None;
        let (min, max) = match &self.peek()?.kind {
            TokenKind::Star => (0, None),
            TokenKind::Plus => (1, None),
            TokenKind::Question => (0, Some(1)),
            TokenKind::Braces { min, max } => (*min, *max),
            TokenKind::FanBraces { min, max } => {
                // A computed bound is as loose as it can be in the grammar (0, or no
                // greatest count); the bound itself is kept for the generator.
                let lo = match min {
                    RepeatBound::Count(n) => *n,
                    RepeatBound::Absent | RepeatBound::Computed(_) => 0,
                };
                let hi = match max {
                    RepeatBound::Count(n) => Some(*n),
                    RepeatBound::Absent | RepeatBound::Computed(_) => None,
                };
                let span_of = |b: &RepeatBound| match b {
                    RepeatBound::Computed(span) => Some(*span),
                    _ => None,
                };
                let (lo_expr, hi_expr) = (span_of(min), span_of(max));
                if lo_expr.is_some() || hi_expr.is_some() {
                    computed = Some((lo_expr, hi_expr));
                }
                (lo, hi)
            }
            _ => return Ok(atom),
        };
        let quantifier = self.next()?;
        if let TokenKind::Star
        | TokenKind::Plus
        | TokenKind::Question
        | TokenKind::Braces { .. }
        | TokenKind::FanBraces { .. } = self.peek()?.kind
        {
            let extra = self.next()?;
            return Err(Box::new(
                Diagnostic::error(
                    "double-quantifier",
                    format!("{} cannot follow another quantifier", extra.kind.describe()),
                    extra.span,
                )
                .with_secondary(quantifier.span, "the first quantifier")
                .with_note("to repeat a repetition, group it: (<a>*)+"),
            ));
        }
        let span = atom.span.to(quantifier.span);
        if let Some((lo, hi)) = computed {
            self.fan.computed_repeats.push((span, lo, hi));
        }
        Ok(AstExpr {
            span,
            kind: AstExprKind::Repeat {
                item: Box::new(atom),
                min,
                max,
            },
        })
    }

    fn atom(&mut self) -> PResult<AstExpr> {
        let token = self.next()?;
        let kind = match token.kind {
            TokenKind::Nonterminal(name) if self.dialect == Dialect::Fandango => {
                let (name, parties) = split_parties(&name, token.span)?;
                let mut parties = parties.into_iter();
                if let Some(sender) = parties.next() {
                    self.fan
                        .party_refs
                        .push((token.span, sender, parties.next()));
                }
                AstExprKind::Ref(name)
            }
            TokenKind::Nonterminal(name) => AstExprKind::Ref(name),
            TokenKind::Literal(bytes) => AstExprKind::Literal(bytes),
            TokenKind::Regex {
                pattern,
                bytes,
                body,
            } => {
                if self.dialect == Dialect::Fandango {
                    AstExprKind::Regex(self.python_regex(&pattern, bytes, body, token.span)?)
                } else {
                    AstExprKind::Regex(pattern)
                }
            }
            TokenKind::Number(n) if self.dialect == Dialect::Fandango && (n == "0" || n == "1") => {
                self.fan.bits.push(token.span);
                AstExprKind::Bit(n == "1")
            }
            TokenKind::Number(n) if self.dialect == Dialect::Fandango => {
                return Err(Box::new(
                    Diagnostic::error(
                        "syntax",
                        format!("`{n}` is not a bit: only the numbers 0 and 1 stand in grammars"),
                        token.span,
                    )
                    .with_label_message("not 0 or 1")
                    .with_note("to mean the text, quote it, e.g. \"42\""),
                ));
            }
            TokenKind::LBracket if self.dialect == Dialect::Fandango => {
                return self.bracketed(token);
            }
            TokenKind::LParen => {
                if self.depth >= MAX_NESTING {
                    return Err(Box::new(
                        Diagnostic::error(
                            "nesting-too-deep",
                            format!("parentheses nest deeper than {MAX_NESTING} levels"),
                            token.span,
                        )
                        .with_label_message("this group is too deep")
                        .with_note("split the expression into named rules"),
                    ));
                }
                self.depth += 1;
                let inner = self.alternation()?;
                self.depth -= 1;
                let close = self.next()?;
                if close.kind != TokenKind::RParen {
                    return Err(Box::new(
                        Diagnostic::error(
                            "unclosed-group",
                            format!("expected `)`, found {}", close.kind.describe()),
                            close.span,
                        )
                        .with_secondary(token.span, "this `(` is not closed"),
                    ));
                }
                // A group is only syntax: its content takes its place, with the parentheses
                // in its span.
                let span = token.span.to(close.span);
                self.fan.respan(inner.span, span);
                return Ok(AstExpr {
                    kind: inner.kind,
                    span,
                });
            }
            TokenKind::Star | TokenKind::Plus | TokenKind::Question | TokenKind::Braces { .. } => {
                return Err(Box::new(
                    Diagnostic::error(
                        "dangling-quantifier",
                        format!("{} must follow something to repeat", token.kind.describe()),
                        token.span,
                    )
                    .with_label_message("nothing to repeat here")
                    .with_note("to use it as text, quote it, e.g. \"*\""),
                ));
            }
            TokenKind::Walrus if self.dialect == Dialect::Isla => {
                return Err(Box::new(
                    Diagnostic::error(
                        "unsupported",
                        "generators (`:= ...`) are Fandango's: they are read from .fan specs",
                        token.span,
                    )
                    .with_label_message("not in a .bnf grammar")
                    .with_note("remove the generator, or name the spec .fan"),
                ));
            }
            _ => {
                return Err(unsupported(&token).unwrap_or_else(|| {
                    let hint = match &token.kind {
                        TokenKind::Word(_) => "literals must be quoted, e.g. \"text\"",
                        TokenKind::Number(_) => "literals must be quoted, e.g. \"0\" (bits are Fandango's: they are read from .fan specs)",
                        TokenKind::Define => "is a `<name>` missing before `::=`?",
                        _ => "a rule name, a quoted literal, a regex r\"...\" or a group ( ... )",
                    };
                    expected(&token, "a rule name, a literal or `(`", hint)
                }));
            }
        };
        Ok(AstExpr {
            kind,
            span: token.span,
        })
    }
}

impl Parser<'_> {
    /// A Fandango regex terminal: translated from Python's syntax and checked, errors
    /// pointing into the pattern; dropped lookarounds are warned about.
    fn python_regex(
        &mut self,
        pattern: &str,
        bytes: bool,
        body: usize,
        span: Span,
    ) -> PResult<String> {
        let bad = |message: String, at: (usize, usize)| {
            Box::new(
                Diagnostic::error(
                    "bad-regex",
                    format!("invalid regex terminal: {message}"),
                    Span::new(body + at.0, body + at.1.max(at.0 + 1)),
                )
                .with_label_message("here")
                .with_secondary(span, "in this regex")
                .with_note("regex terminals of .fan specs use Python `re` syntax"),
            )
        };
        let translation =
            crate::pyregex::translate(pattern, bytes).map_err(|e| bad(e.message, e.span))?;
        if let Err(e) = crate::grammar::compile_regex(&translation.pattern) {
            let at = e.span.map_or((0, pattern.len()), |(s, t)| {
                let origin = |i: usize| translation.origin[i.min(translation.origin.len() - 1)];
                (origin(s), origin(t))
            });
            return Err(bad(e.message, at));
        }
        for &(s, t) in &translation.dropped_lookarounds {
            self.fan.warnings.push(
                Diagnostic::warning(
                    "regex-lookaround",
                    "a lookaround in a regex terminal is left out: the terminal matches more than in Fandango",
                    Span::new(body + s, body + t),
                )
                .with_label_message("left out")
                .with_note("a regular terminal cannot look around it; express the exception with a constraint"),
            );
        }
        Ok(translation.pattern)
    }

    /// After a `[`: a permutation `[[ items ]]` or a character set `[ ^? "chars" ]`.
    fn bracketed(&mut self, open: Token) -> PResult<AstExpr> {
        if self.peek()?.kind == TokenKind::LBracket {
            self.next()?;
            return self.permutation(open);
        }
        let negated = self.peek()?.kind == TokenKind::Caret;
        if negated {
            self.next()?;
        }
        let chars = self.next()?;
        let TokenKind::Literal(bytes) = chars.kind else {
            return Err(expected(
                &chars,
                "a quoted string of characters after `[`",
                "a character set is written [\"abc\"] or [^\"abc\"]; a permutation [[ <a> <b> ]]",
            ));
        };
        let close = self.next()?;
        if close.kind != TokenKind::RBracket {
            return Err(Box::new(
                Diagnostic::error(
                    "unclosed-group",
                    format!("expected `]`, found {}", close.kind.describe()),
                    close.span,
                )
                .with_secondary(open.span, "this `[` is not closed"),
            ));
        }
        let span = open.span.to(close.span);
        if bytes.is_empty() {
            return Err(Box::new(
                Diagnostic::error("syntax", "an empty character set matches nothing", span)
                    .with_label_message("no characters"),
            ));
        }
        let caret = if negated { "^" } else { "" };
        let class = match std::str::from_utf8(&bytes) {
            Ok(text) => {
                let items: String = text
                    .chars()
                    .map(|c| format!("\\x{{{:X}}}", c as u32))
                    .collect();
                format!("[{caret}{items}]")
            }
            Err(_) => {
                let items: String = bytes.iter().map(|b| format!("\\x{b:02X}")).collect();
                format!("(?-u:[{caret}{items}])")
            }
        };
        Ok(AstExpr {
            kind: AstExprKind::Regex(class),
            span,
        })
    }

    /// The items of a permutation `[[ ... ]]` (after its `[[`): the alternatives of
    /// every order of the items, nested as Fandango nests them (a choice of the first
    /// item, then a permutation of the rest).
    fn permutation(&mut self, open: Token) -> PResult<AstExpr> {
        let mut items = Vec::new();
        let close = loop {
            let token = self.peek()?.clone();
            if token.kind == TokenKind::RBracket {
                self.next()?;
                let second = self.next()?;
                if second.kind != TokenKind::RBracket {
                    return Err(expected(
                        &second,
                        "`]]` to close the permutation",
                        "a permutation is written [[ <a> <b> ... ]]",
                    ));
                }
                break second;
            }
            if matches!(
                token.kind,
                TokenKind::Eof | TokenKind::Pipe | TokenKind::RParen
            ) {
                return Err(Box::new(
                    Diagnostic::error(
                        "unclosed-group",
                        format!("expected `]]`, found {}", token.kind.describe()),
                        token.span,
                    )
                    .with_secondary(open.span, "this `[[` is not closed"),
                ));
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        };
        let span = open.span.to(close.span);
        if items.is_empty() {
            return Err(Box::new(
                Diagnostic::error("syntax", "an empty permutation", span)
                    .with_label_message("no items between `[[` and `]]`"),
            ));
        }
        if items.len() > MAX_PERMUTATION_ITEMS {
            return Err(Box::new(
                Diagnostic::error(
                    "permutation-too-large",
                    format!(
                        "a permutation of {} items has too many orders ({}); at most {MAX_PERMUTATION_ITEMS} items are supported",
                        items.len(),
                        (1..=items.len() as u128).product::<u128>()
                    ),
                    span,
                )
                .with_label_message("too many items")
                .with_note("split it into smaller permutations, or allow any order with a repetition and a constraint"),
            ));
        }
        Ok(permutations(&items, span))
    }
}

/// Every order of `items` as nested alternatives (see [`Parser::permutation`]).
fn permutations(items: &[AstExpr], span: Span) -> AstExpr {
    if items.len() == 1 {
        return items[0].clone();
    }
    let alternatives = (0..items.len())
        .map(|i| {
            let mut rest = items.to_vec();
            let first = rest.remove(i);
            AstExpr {
                kind: AstExprKind::Seq(vec![first, permutations(&rest, span)]),
                span,
            }
        })
        .collect();
    AstExpr {
        kind: AstExprKind::Alt(alternatives),
        span,
    }
}

/// A nonterminal as written in Fandango, `<name>`, `<party:name>` or
/// `<sender:receiver:name>`: the rule name and the parties.
fn split_parties(written: &str, span: Span) -> PResult<(String, Vec<String>)> {
    let mut parts: Vec<&str> = written.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(Box::new(
            Diagnostic::error(
                "bad-rule-name",
                format!("`<{written}>` is not a rule name"),
                span,
            )
            .with_label_message("expected <name>, <party:name> or <sender:receiver:name>"),
        ));
    }
    let name = parts.pop().expect("at least one part").to_string();
    Ok((name, parts.into_iter().map(str::to_string).collect()))
}

fn expected(token: &Token, what: &str, hint: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            "syntax",
            format!("expected {what}, found {}", token.kind.describe()),
            token.span,
        )
        .with_label_message(format!("unexpected {}", token.kind.describe()))
        .with_note(hint.to_string()),
    )
}

fn unsupported(token: &Token) -> Option<Box<Diagnostic>> {
    let TokenKind::Word(word) = &token.kind else {
        return None;
    };
    let (_, what) = UNSUPPORTED.iter().find(|(w, _)| w == word)?;
    Some(Box::new(
        Diagnostic::error(
            "unsupported",
            format!("{what} (found `{word}`)"),
            token.span,
        )
        .with_label_message("not in a .bnf grammar")
        .with_note(
            "ISLa .bnf grammars hold rules only; Fandango constructs are read from .fan specs",
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(e: &AstExpr) -> String {
        match &e.kind {
            AstExprKind::Alt(a) => {
                format!("({})", a.iter().map(shape).collect::<Vec<_>>().join("|"))
            }
            AstExprKind::Seq(s) => {
                format!("[{}]", s.iter().map(shape).collect::<Vec<_>>().join(" "))
            }
            AstExprKind::Repeat { item, min, max } => format!("{}{{{min},{max:?}}}", shape(item)),
            AstExprKind::Ref(n) => format!("<{n}>"),
            AstExprKind::Literal(b) => format!("{:?}", String::from_utf8_lossy(b)),
            AstExprKind::Regex(r) => format!("r{r:?}"),
            AstExprKind::Bit(b) => u8::from(*b).to_string(),
        }
    }

    #[test]
    fn rules_span_lines_and_end_at_the_next_rule() {
        let ast = parse_spec(
            "<start> ::= <a>\n  | \"x\" <b>*\n<a> ::= ('y' | <b>)+ ;\n<b> ::= r\"[0-9]\"{2,3} |",
        )
        .unwrap();
        let shapes: Vec<_> = ast
            .rules
            .iter()
            .map(|r| format!("{} = {}", r.name, shape(&r.body)))
            .collect();
        assert_eq!(
            shapes,
            vec![
                "start = (<a>|[\"x\" <b>{0,None}])",
                "a = (\"y\"|<b>){1,None}",
                "b = (r\"[0-9]\"{2,Some(3)}|[])",
            ]
        );
    }

    #[test]
    fn unsupported_fandango_constructs_are_named() {
        for text in [
            "<a> ::= <b> := f()",
            "import random\n<a> ::= \"x\"",
            "<a> ::= 0 | 1",
        ] {
            let err = parse_spec(text).unwrap_err();
            assert!(
                matches!(err.code, "unsupported" | "syntax"),
                "{text}: {err:?}"
            );
        }
        let err = parse_spec("<a> ::= \"x\"\ndef f(): pass").unwrap_err();
        assert!(err.message.contains("`def`"), "{}", err.message);
    }

    #[test]
    fn the_grammar_ends_where_constraints_begin() {
        let text = "<a> ::= \"x\" <b>\n<b> ::= \"y\"\nwhere str.len(<a>) = 2 @ anything";
        let ast = parse_spec(text).unwrap();
        assert_eq!(ast.rules.len(), 2);
        assert_eq!(ast.constraints_start, Some(text.find("where").unwrap()));
        assert_eq!(parse_spec("<a> ::= \"x\"").unwrap().constraints_start, None);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!("<a> ::= {}\"x\"", "(".repeat(1_000_000));
        assert_eq!(parse_spec(&text).unwrap_err().code, "nesting-too-deep");
    }
}
