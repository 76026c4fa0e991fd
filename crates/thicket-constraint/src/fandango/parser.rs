//! Recursive-descent parser of Fandango's constraint language (Fandango 1.3's
//! `FandangoParser.g4`, rules `constraint` to `rs_slice`, and the Python expression
//! grammar it embeds).
//!
//! ```text
//! where-body   := implies
//! implies      := disjunction '->' disjunction TERM | quantifier
//! quantifier   := ('forall' | 'exists') NT 'in' dot_sel ':' (NEWLINE INDENT quantifier DEDENT | quantifier)
//!               | ('any' | 'all') '(' ['[' | '{' | '('] in_line 'for' (NT | NAME) 'in' star_sel [']' | '}' | ')'] ')' TERM
//!               | disjunction TERM                                    TERM := ';' | NEWLINE | EOF
//! in_line      := ('any' | 'all') '(' ... ')' | disjunction
//! disjunction  := conjunction ('or' conjunction)*
//! conjunction  := atom ('and' atom)*
//! atom         := bitwise_or (CMP bitwise_or)+  |  '(' in_line ')'  |  expr
//! expr         := inversion ['if' inversion 'else' inversion]         CMP := < > == >= <= != <>
//! dot_sel      := selection ('.' selection | '..' selection)*
//! selection    := (NT | '(' dot_sel ')') ['[' rs_slices ']' | '{' rs_pairs '}']
//! star_sel     := '*' dot_sel | '**' dot_sel
//! ```
//!
//! The three alternatives of a formula atom overlap; ANTLR takes the first that parses
//! to a token that may follow an atom, and so does this parser: `a == b` is a
//! comparison (each side evaluated on its own), `(a or b)` a parenthesised formula,
//! `not a == b` and `a in b` Python expressions. Python expressions follow Python's
//! grammar; inside them a selector (`<a>.<b>`), `*SEL`, `|SEL|` and `len(*SEL)` are
//! atoms.

use super::ast::*;
use super::lexer::{StrValue, Tok, Token, indentation_of_line, tokenize};
use thicket_grammar::{Diagnostic, Span};

type PResult<T> = Result<T, Box<Diagnostic>>;

/// Deepest nesting of parentheses, operators and quantifiers accepted.
pub const MAX_NESTING: usize = 200;

/// Parsing stops with an error after this many token visits, so that no constraint
/// makes the backtracking between a formula atom's alternatives expensive.
const MAX_STEPS: usize = 2_000_000;

/// Words that are never names in a constraint: Python's keywords and Fandango's.
const RESERVED: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "forall",
    "exists",
    "where",
    "minimizing",
    "maximizing",
    "include",
    "setting",
];

/// Parses a `where` block's formula in `text[start..end]` (a leading `where` is
/// skipped).
pub fn parse_where(text: &str, start: usize, end: usize) -> PResult<Formula> {
    let mut p = Parser::new(text, start, end)?;
    p.eat_name("where");
    let formula = p.run(|p| {
        let f = p.implies()?;
        p.finish()?;
        Ok(f)
    })?;
    Ok(formula)
}

/// Parses the expression of a `minimizing`/`maximizing` block in `text[start..end]`;
/// a leading keyword is skipped and returned (`Some(true)`: minimizing).
pub fn parse_goal(text: &str, start: usize, end: usize) -> PResult<(Option<bool>, Expr)> {
    let mut p = Parser::new(text, start, end)?;
    let direction = if p.eat_name("minimizing") {
        Some(true)
    } else if p.eat_name("maximizing") {
        Some(false)
    } else {
        None
    };
    let expr = p.run(|p| {
        let e = p.expr_rule()?;
        p.terminator()?;
        p.finish()?;
        Ok(e)
    })?;
    Ok((direction, expr))
}

/// Where a diagnostic points.
fn at(d: &Diagnostic) -> u32 {
    d.primary_span().map_or(0, |s| s.start)
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    /// The error that got furthest, reported if no alternative parses.
    best: Option<Box<Diagnostic>>,
    depth: usize,
    steps: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, start: usize, end: usize) -> PResult<Parser<'a>> {
        let toks = tokenize(text, start, end, indentation_of_line(text, start))?;
        Ok(Parser {
            text,
            toks,
            pos: 0,
            best: None,
            depth: 0,
            steps: 0,
        })
    }

    /// Runs the top rule, reporting the furthest error if it fails.
    fn run<T>(&mut self, rule: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        match rule(self) {
            Ok(v) => Ok(v),
            Err(e) => Err(match self.best.take() {
                Some(best) if at(&best) > at(&e) => best,
                _ => e,
            }),
        }
    }

    // --- tokens -------------------------------------------------------------------

    fn tok(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn tok_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            self.toks[0].span.start
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    fn from(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.start),
        }
    }

    fn bump(&mut self) -> PResult<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Box::new(Diagnostic::error(
                "fandango-too-complex",
                "this constraint is too complex to parse",
                self.span(),
            )));
        }
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        Ok(())
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(self.tok(), Tok::Op(o) if *o == op)
    }

    fn at_op_n(&self, n: usize, op: &str) -> bool {
        matches!(self.tok_at(n), Tok::Op(o) if *o == op)
    }

    fn at_name(&self, name: &str) -> bool {
        matches!(self.tok(), Tok::Name(n) if n == name)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.at_op(op) {
            // Cannot exceed the budget on a token already looked at.
            self.pos = (self.pos + 1).min(self.toks.len() - 1);
            true
        } else {
            false
        }
    }

    fn eat_name(&mut self, name: &str) -> bool {
        if self.at_name(name) {
            self.pos = (self.pos + 1).min(self.toks.len() - 1);
            true
        } else {
            false
        }
    }

    fn describe(tok: &Tok, text: &str, span: Span) -> String {
        match tok {
            Tok::Newline => "the end of the line".into(),
            Tok::Indent => "an indented line".into(),
            Tok::Dedent => "the end of the indented block".into(),
            Tok::Eof => "the end of the constraint".into(),
            _ => format!("`{}`", text[span.range()].trim()),
        }
    }

    /// An error at the current token: expected `what`.
    fn expected(&mut self, what: &str) -> Box<Diagnostic> {
        let span = self.span();
        let found = Self::describe(self.tok(), self.text, span);
        let mut d = Diagnostic::error(
            "fandango-syntax",
            format!("expected {what}, found {found}"),
            span,
        )
        .with_label_message(format!("expected {what}"));
        if let (Tok::Op(">=" | ">>" | ">>="), Some(Tok::Name(_))) = (
            self.tok(),
            self.pos.checked_sub(1).map(|p| &self.toks[p].tok),
        ) {
            d = d.with_note(
                "`>=` after a nonterminal name is one operator: write a space after `>` \
                 (`<a> == 1`, not `<a>==1`)",
            );
        }
        let d = Box::new(d);
        self.record(&d);
        d
    }

    fn record(&mut self, d: &Diagnostic) {
        let further = match &self.best {
            None => true,
            Some(best) => at(d) > at(best),
        };
        if further {
            self.best = Some(Box::new(d.clone()));
        }
    }

    fn expect_op(&mut self, op: &str) -> PResult<Span> {
        if self.at_op(op) {
            let span = self.span();
            self.bump()?;
            Ok(span)
        } else {
            Err(self.expected(&format!("`{op}`")))
        }
    }

    fn expect_name_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.at_name(kw) {
            let span = self.span();
            self.bump()?;
            Ok(span)
        } else {
            Err(self.expected(&format!("`{kw}`")))
        }
    }

    fn identifier(&mut self) -> PResult<Name> {
        match self.tok().clone() {
            Tok::Name(n) if !RESERVED.contains(&n.as_str()) => {
                let span = self.span();
                self.bump()?;
                Ok(Name { text: n, span })
            }
            _ => Err(self.expected("a name")),
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let d = Box::new(Diagnostic::error(
                "fandango-too-deep",
                format!("constraints may nest at most {MAX_NESTING} levels deep"),
                self.span(),
            ));
            self.depth -= 1;
            return Err(d);
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Tries `f`; on failure restores the position and returns `None` (the error is
    /// kept if it got furthest).
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<Option<T>> {
        let saved = self.pos;
        match f(self) {
            Ok(v) => Ok(Some(v)),
            Err(e) if matches!(e.code, "fandango-too-complex" | "fandango-too-deep") => Err(e),
            Err(e) => {
                self.record(&e);
                self.pos = saved;
                Ok(None)
            }
        }
    }

    fn finish(&mut self) -> PResult<()> {
        while matches!(self.tok(), Tok::Newline | Tok::Dedent) {
            self.bump()?;
        }
        if matches!(self.tok(), Tok::Eof) {
            Ok(())
        } else {
            Err(self.expected("the end of the constraint"))
        }
    }

    fn at_terminator(&self) -> bool {
        matches!(self.tok(), Tok::Newline | Tok::Eof) || self.at_op(";")
    }

    fn terminator(&mut self) -> PResult<()> {
        match self.tok() {
            Tok::Newline => self.bump(),
            Tok::Eof => Ok(()),
            Tok::Op(";") => self.bump(),
            _ => Err(self.expected("`and`, `or`, `;` or the end of the line")),
        }
    }

    /// Whether the current token may follow a formula atom.
    fn at_atom_follow(&self) -> bool {
        self.at_terminator()
            || self.at_name("and")
            || self.at_name("or")
            || self.at_name("for")
            || self.at_op(")")
            || self.at_op("->")
    }

    // --- constraint level ---------------------------------------------------------

    fn implies(&mut self) -> PResult<Formula> {
        let start = self.span();
        // The deprecated `a -> b` only where an arrow is written.
        if !self.toks[self.pos..].iter().any(|t| t.tok == Tok::Op("->")) {
            return self.quantifier();
        }
        let implication = self.attempt(|p| {
            let a = p.disjunction()?;
            p.expect_op("->")?;
            let b = p.disjunction()?;
            let span = p.from(start);
            p.terminator()?;
            Ok(Formula::Implies(Box::new(a), Box::new(b), span))
        })?;
        match implication {
            Some(f) => Ok(f),
            None => self.quantifier(),
        }
    }

    fn quantifier(&mut self) -> PResult<Formula> {
        self.nested(|p| {
            let start = p.span();
            if p.at_name("forall") || p.at_name("exists") {
                let universal = p.at_name("forall");
                p.bump()?;
                let bound = p.nonterminal()?;
                p.expect_name_kw("in")?;
                let domain = p.dot_selection()?;
                p.expect_op(":")?;
                let head = p.from(start);
                let body = if matches!(p.tok(), Tok::Newline) && matches!(p.tok_at(1), Tok::Indent)
                {
                    p.bump()?;
                    p.bump()?;
                    let body = p.quantifier()?;
                    match p.tok() {
                        Tok::Dedent => p.bump()?,
                        Tok::Eof => {}
                        _ => return Err(p.expected("the end of the indented block")),
                    }
                    body
                } else if matches!(p.tok(), Tok::Newline) {
                    return Err(p.expected("the quantifier's body, indented on the next line"));
                } else {
                    p.quantifier()?
                };
                return Ok(Formula::Quantifier(Box::new(Quantifier {
                    universal,
                    bound: Bound::Nonterminal(bound),
                    domain,
                    span: p.from(start),
                    head,
                    body,
                })));
            }
            if (p.at_name("any") || p.at_name("all"))
                && p.at_op_n(1, "(")
                && let Some(q) = p.attempt(|p| {
                    let q = p.comprehension_quantifier()?;
                    p.terminator()?;
                    Ok(q)
                })?
            {
                return Ok(q);
            }
            let f = p.disjunction()?;
            p.terminator()?;
            Ok(f)
        })
    }

    /// `any(body for x in *SEL)` and its bracketed variants.
    fn comprehension_quantifier(&mut self) -> PResult<Formula> {
        let start = self.span();
        let universal = self.at_name("all");
        self.bump()?;
        self.expect_op("(")?;
        let close = if self.eat_op("[") {
            Some("]")
        } else if self.eat_op("{") {
            Some("}")
        } else if self.at_op("(") {
            // `all((body for ...))`: the inner parenthesis is the generator's.
            let saved = self.pos;
            self.bump()?;
            let inner = self.attempt(|p| {
                let b = p.in_line()?;
                if p.at_name("for") {
                    Ok(b)
                } else {
                    Err(p.expected("`for`"))
                }
            })?;
            match inner {
                Some(body) => return self.comprehension_rest(start, universal, body, Some(")")),
                None => {
                    self.pos = saved;
                    None
                }
            }
        } else {
            None
        };
        let body = self.in_line()?;
        self.comprehension_rest(start, universal, body, close)
    }

    fn comprehension_rest(
        &mut self,
        start: Span,
        universal: bool,
        body: Formula,
        close: Option<&str>,
    ) -> PResult<Formula> {
        let head_start = self.expect_name_kw("for")?;
        let bound = if self.at_op("<") {
            Bound::Nonterminal(self.nonterminal()?)
        } else {
            Bound::Identifier(self.identifier()?)
        };
        self.expect_name_kw("in")?;
        if self.at_op("**") {
            let span = self.span();
            return Err(Box::new(
                Diagnostic::error(
                    "fandango-population",
                    "population-wide selections (`**`) are not supported",
                    span,
                )
                .with_note("Fandango 1.3 no longer supports them either; use `*`"),
            ));
        }
        self.expect_op("*")?;
        let domain = self.dot_selection()?;
        let head = self.from(head_start);
        if let Some(close) = close {
            self.expect_op(close)?;
        }
        self.expect_op(")")?;
        Ok(Formula::Quantifier(Box::new(Quantifier {
            universal,
            bound,
            domain,
            body,
            span: self.from(start),
            head,
        })))
    }

    fn in_line(&mut self) -> PResult<Formula> {
        self.nested(|p| {
            if (p.at_name("any") || p.at_name("all"))
                && p.at_op_n(1, "(")
                && let Some(q) = p.attempt(|p| p.comprehension_quantifier())?
                && (p.at_name("for") || p.at_op(")") || p.at_op("]") || p.at_op("}"))
            {
                return Ok(q);
            }
            p.disjunction()
        })
    }

    fn disjunction(&mut self) -> PResult<Formula> {
        let start = self.span();
        let mut parts = vec![self.conjunction()?];
        while self.eat_name("or") {
            parts.push(self.conjunction()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Formula::Or(parts, self.from(start))
        })
    }

    fn conjunction(&mut self) -> PResult<Formula> {
        let start = self.span();
        let mut parts = vec![self.formula_atom()?];
        while self.eat_name("and") {
            parts.push(self.formula_atom()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Formula::And(parts, self.from(start))
        })
    }

    fn formula_atom(&mut self) -> PResult<Formula> {
        self.nested(|p| {
            let start = p.span();
            // 1. A comparison chain of bitwise-or operands.
            let comparison = p.attempt(|p| {
                let mut operands = vec![p.bitwise_or()?];
                let mut ops = Vec::new();
                while let Some(op) = p.formula_cmp_op() {
                    p.bump()?;
                    ops.push(op);
                    operands.push(p.bitwise_or()?);
                }
                if ops.is_empty() {
                    return Err(p.expected("a comparison operator"));
                }
                if !p.at_atom_follow() {
                    return Err(p.expected("`and`, `or` or the end of the constraint"));
                }
                let links: Vec<Formula> = ops
                    .iter()
                    .enumerate()
                    .map(|(i, &op)| {
                        let (left, right) = (operands[i].clone(), operands[i + 1].clone());
                        let span = left.span.to(right.span);
                        Formula::Comparison(Box::new(Comparison {
                            op,
                            left,
                            right,
                            span,
                        }))
                    })
                    .collect();
                Ok(if links.len() == 1 {
                    links.into_iter().next().expect("one")
                } else {
                    Formula::And(links, p.from(start))
                })
            })?;
            if let Some(c) = comparison {
                return Ok(c);
            }
            // 2. A parenthesised formula.
            if p.at_op("(") {
                let paren = p.attempt(|p| {
                    p.bump()?;
                    let inner = p.in_line()?;
                    p.expect_op(")")?;
                    if !p.at_atom_follow() {
                        return Err(p.expected("`and`, `or` or the end of the constraint"));
                    }
                    Ok(inner)
                })?;
                if let Some(f) = paren {
                    return Ok(f);
                }
            }
            // 3. A Python expression.
            let e = p.expr_rule()?;
            if !p.at_atom_follow() {
                return Err(p.expected("`and`, `or`, a comparison or the end of the constraint"));
            }
            Ok(Formula::Expr(e))
        })
    }

    fn formula_cmp_op(&self) -> Option<CmpOp> {
        match self.tok() {
            Tok::Op("==") => Some(CmpOp::Eq),
            Tok::Op("!=" | "<>") => Some(CmpOp::NotEq),
            Tok::Op("<") => Some(CmpOp::Lt),
            Tok::Op("<=") => Some(CmpOp::LtE),
            Tok::Op(">") => Some(CmpOp::Gt),
            Tok::Op(">=") => Some(CmpOp::GtE),
            _ => None,
        }
    }

    /// Fandango's `expr`: an inversion, or `a if b else c` of inversions.
    fn expr_rule(&mut self) -> PResult<Expr> {
        let start = self.span();
        let body = self.inversion()?;
        if self.eat_name("if") {
            let test = self.inversion()?;
            self.expect_name_kw("else")?;
            let orelse = self.inversion()?;
            return Ok(Expr {
                kind: ExprKind::IfExp {
                    test: Box::new(test),
                    body: Box::new(body),
                    orelse: Box::new(orelse),
                },
                span: self.from(start),
            });
        }
        Ok(body)
    }

    // --- selectors ----------------------------------------------------------------

    fn nonterminal(&mut self) -> PResult<Name> {
        let start = self.span();
        self.expect_op("<")?;
        let Tok::Name(name) = self.tok().clone() else {
            return Err(self.expected("a nonterminal name"));
        };
        self.bump()?;
        if !self.at_op(">") {
            return Err(self.expected("`>`"));
        }
        self.bump()?;
        Ok(Name {
            text: name,
            span: self.from(start),
        })
    }

    /// Whether a selector starts here: `<name>` or `(` followed by one.
    fn at_selector(&self) -> bool {
        let mut n = 0;
        while matches!(self.tok_at(n), Tok::Op("(")) {
            n += 1;
        }
        matches!(self.tok_at(n), Tok::Op("<"))
            && matches!(self.tok_at(n + 1), Tok::Name(_))
            && matches!(self.tok_at(n + 2), Tok::Op(">"))
    }

    fn dot_selection(&mut self) -> PResult<DotSelection> {
        self.nested(|p| {
            let start = p.span();
            let first = p.selection()?;
            let mut sel = DotSelection {
                span: first.span,
                kind: DotKind::Selection(first),
            };
            loop {
                let child = if p.at_op(".") && (p.at_op_n(1, "<") || p.at_op_n(1, "(")) {
                    true
                } else if p.at_op("..") {
                    false
                } else {
                    break;
                };
                let saved = p.pos;
                p.bump()?;
                if !p.at_selector() {
                    p.pos = saved;
                    break;
                }
                let next = p.selection()?;
                let span = p.from(start);
                sel = DotSelection {
                    kind: if child {
                        DotKind::Child(Box::new(sel), next)
                    } else {
                        DotKind::Descendant(Box::new(sel), next)
                    },
                    span,
                };
            }
            Ok(sel)
        })
    }

    fn selection(&mut self) -> PResult<Selection> {
        let start = self.span();
        let base = if self.at_op("(") {
            self.bump()?;
            let inner = self.dot_selection()?;
            self.expect_op(")")?;
            BaseSelection::Paren(Box::new(inner))
        } else {
            BaseSelection::Nonterminal(self.nonterminal()?)
        };
        let suffix = if self.at_op("[") {
            let open = self.span();
            self.attempt(|p| {
                p.bump()?;
                let mut slices = vec![p.rs_slice()?];
                while p.eat_op(",") {
                    if p.at_op("]") {
                        break;
                    }
                    slices.push(p.rs_slice()?);
                }
                p.expect_op("]")?;
                Ok(Suffix::Slices(slices, p.from(open)))
            })?
        } else if self.at_op("{") {
            let open = self.span();
            self.bump()?;
            let mut pairs = Vec::new();
            loop {
                self.expect_op("*")?;
                let symbol = self.nonterminal()?;
                let slice = if self.eat_op(":") {
                    Some(self.rs_slice()?)
                } else {
                    None
                };
                pairs.push(RsPair { symbol, slice });
                if !self.eat_op(",") || self.at_op("}") {
                    break;
                }
            }
            self.expect_op("}")?;
            Some(Suffix::Pairs(pairs, self.from(open)))
        } else {
            None
        };
        Ok(Selection {
            base,
            suffix,
            span: self.from(start),
        })
    }

    fn rs_number(&mut self) -> PResult<Option<i64>> {
        match self.tok() {
            Tok::Int(Some(i)) => {
                let v = i64::try_from(*i).map_err(|_| self.expected("a smaller index"))?;
                self.bump()?;
                Ok(Some(v))
            }
            _ => Ok(None),
        }
    }

    fn rs_slice(&mut self) -> PResult<RsSlice> {
        let first = self.rs_number()?;
        if !self.eat_op(":") {
            return match first {
                Some(i) => Ok(RsSlice::Index(i)),
                None => Err(self.expected("an index (a number) or a slice")),
            };
        }
        let stop = self.rs_number()?;
        let step = if self.eat_op(":") {
            self.rs_number()?
        } else {
            None
        };
        Ok(RsSlice::Range(first, stop, step))
    }

    // --- Python expressions ---------------------------------------------------------

    /// `expression`: a conditional expression or a lambda.
    fn expression(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            if p.at_name("lambda") {
                return p.lambda();
            }
            let start = p.span();
            let body = p.py_disjunction()?;
            if p.at_name("if") {
                p.bump()?;
                let test = p.py_disjunction()?;
                p.expect_name_kw("else")?;
                let orelse = p.expression()?;
                return Ok(Expr {
                    kind: ExprKind::IfExp {
                        test: Box::new(test),
                        body: Box::new(body),
                        orelse: Box::new(orelse),
                    },
                    span: p.from(start),
                });
            }
            Ok(body)
        })
    }

    fn lambda(&mut self) -> PResult<Expr> {
        let start = self.span();
        self.bump()?;
        let mut params = Vec::new();
        let mut defaults = Vec::new();
        while !self.at_op(":") {
            if self.eat_op("*") || self.eat_op("**") {
                if self.at_op(",") || self.at_op(":") {
                    // A bare `*`.
                } else {
                    params.push(self.identifier()?.text);
                }
            } else if self.eat_op("/") {
            } else {
                params.push(self.identifier()?.text);
                if self.eat_op("=") {
                    defaults.push(self.expression()?);
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(":")?;
        let body = self.expression()?;
        Ok(Expr {
            kind: ExprKind::Lambda {
                params,
                defaults,
                body: Box::new(body),
            },
            span: self.from(start),
        })
    }

    fn py_disjunction(&mut self) -> PResult<Expr> {
        self.bool_chain("or", |p| p.py_conjunction(), false)
    }

    fn py_conjunction(&mut self) -> PResult<Expr> {
        self.bool_chain("and", |p| p.inversion(), true)
    }

    fn bool_chain(
        &mut self,
        kw: &str,
        mut operand: impl FnMut(&mut Self) -> PResult<Expr>,
        and: bool,
    ) -> PResult<Expr> {
        let start = self.span();
        let mut parts = vec![operand(self)?];
        while self.eat_name(kw) {
            parts.push(operand(self)?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Expr {
                kind: ExprKind::BoolOp(and, parts),
                span: self.from(start),
            }
        })
    }

    fn inversion(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            let start = p.span();
            if p.eat_name("not") {
                let inner = p.inversion()?;
                return Ok(Expr {
                    kind: ExprKind::Unary(UnOp::Not, Box::new(inner)),
                    span: p.from(start),
                });
            }
            p.comparison()
        })
    }

    fn py_cmp_op(&mut self) -> PResult<Option<CmpOp>> {
        if let Some(op) = self.formula_cmp_op() {
            self.bump()?;
            return Ok(Some(op));
        }
        if self.at_name("in") {
            self.bump()?;
            return Ok(Some(CmpOp::In));
        }
        if self.at_name("not") && matches!(self.tok_at(1), Tok::Name(n) if n == "in") {
            self.bump()?;
            self.bump()?;
            return Ok(Some(CmpOp::NotIn));
        }
        if self.at_name("is") {
            self.bump()?;
            if self.eat_name("not") {
                return Ok(Some(CmpOp::IsNot));
            }
            return Ok(Some(CmpOp::Is));
        }
        Ok(None)
    }

    fn comparison(&mut self) -> PResult<Expr> {
        let start = self.span();
        let first = self.bitwise_or()?;
        let mut rest = Vec::new();
        while let Some(op) = self.py_cmp_op()? {
            rest.push((op, self.bitwise_or()?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr {
                kind: ExprKind::Compare(Box::new(first), rest),
                span: self.from(start),
            }
        })
    }

    fn binary_level(
        &mut self,
        ops: &[(&str, BinOp)],
        mut operand: impl FnMut(&mut Self) -> PResult<Expr>,
    ) -> PResult<Expr> {
        let start = self.span();
        let mut left = operand(self)?;
        while let Some(&(_, op)) = ops.iter().find(|(s, _)| self.at_op(s)) {
            self.bump()?;
            let right = operand(self)?;
            left = Expr {
                kind: ExprKind::Binary(op, Box::new(left), Box::new(right)),
                span: self.from(start),
            };
        }
        Ok(left)
    }

    fn bitwise_or(&mut self) -> PResult<Expr> {
        self.nested(|p| p.binary_level(&[("|", BinOp::BitOr)], |p| p.bitwise_xor()))
    }

    fn bitwise_xor(&mut self) -> PResult<Expr> {
        self.binary_level(&[("^", BinOp::BitXor)], |p| p.bitwise_and())
    }

    fn bitwise_and(&mut self) -> PResult<Expr> {
        self.binary_level(&[("&", BinOp::BitAnd)], |p| p.shift())
    }

    fn shift(&mut self) -> PResult<Expr> {
        self.binary_level(&[("<<", BinOp::LShift), (">>", BinOp::RShift)], |p| p.sum())
    }

    fn sum(&mut self) -> PResult<Expr> {
        self.binary_level(&[("+", BinOp::Add), ("-", BinOp::Sub)], |p| p.term())
    }

    fn term(&mut self) -> PResult<Expr> {
        self.binary_level(
            &[
                ("*", BinOp::Mul),
                ("//", BinOp::FloorDiv),
                ("/", BinOp::Div),
                ("%", BinOp::Mod),
                ("@", BinOp::MatMul),
            ],
            |p| p.factor(),
        )
    }

    fn factor(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            let start = p.span();
            let op = match p.tok() {
                Tok::Op("-") => Some(UnOp::Neg),
                Tok::Op("+") => Some(UnOp::Pos),
                Tok::Op("~") => Some(UnOp::Invert),
                _ => None,
            };
            if let Some(op) = op {
                p.bump()?;
                let inner = p.factor()?;
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(inner)),
                    span: p.from(start),
                });
            }
            p.power()
        })
    }

    fn power(&mut self) -> PResult<Expr> {
        let start = self.span();
        let base = if self.eat_name("await") {
            let inner = self.primary()?;
            Expr {
                kind: ExprKind::Await(Box::new(inner)),
                span: self.from(start),
            }
        } else {
            self.primary()?
        };
        if self.eat_op("**") {
            let exponent = self.factor()?;
            return Ok(Expr {
                kind: ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exponent)),
                span: self.from(start),
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let mut e = self.atom()?;
        loop {
            if self.at_op(".") && matches!(self.tok_at(1), Tok::Name(_)) {
                self.bump()?;
                let name = self.identifier()?;
                e = Expr {
                    kind: ExprKind::Attribute(Box::new(e), name),
                    span: self.from(start),
                };
            } else if self.at_op("(") {
                self.bump()?;
                let args = self.call_args()?;
                self.expect_op(")")?;
                e = Expr {
                    kind: ExprKind::Call(Box::new(e), args),
                    span: self.from(start),
                };
            } else if self.at_op("[") {
                self.bump()?;
                let index = self.slices()?;
                self.expect_op("]")?;
                e = Expr {
                    kind: ExprKind::Subscript(Box::new(e), Box::new(index)),
                    span: self.from(start),
                };
            } else {
                break;
            }
        }
        Ok(e)
    }

    fn call_args(&mut self) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        while !self.at_op(")") {
            let start = self.span();
            if self.at_op("**") && !self.at_selector_after(1) {
                self.bump()?;
                args.push(Arg::DoubleStarred(self.expression()?));
            } else if matches!(self.tok(), Tok::Name(_)) && self.at_op_n(1, "=") {
                let name = self.identifier()?;
                self.bump()?;
                args.push(Arg::Keyword(name, self.expression()?));
            } else {
                let e = self.starred_or_expression()?;
                // `f(x for x in y)`: a generator as the only argument.
                if self.at_name("for") && args.is_empty() {
                    let generators = self.comp_fors()?;
                    args.push(Arg::Positional(Expr {
                        kind: ExprKind::Comprehension {
                            kind: CompKind::Generator,
                            elt: Box::new(e),
                            value: None,
                            generators,
                        },
                        span: self.from(start),
                    }));
                } else {
                    args.push(Arg::Positional(e));
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(args)
    }

    fn at_selector_after(&self, n: usize) -> bool {
        let mut k = n;
        while matches!(self.tok_at(k), Tok::Op("(")) {
            k += 1;
        }
        matches!(self.tok_at(k), Tok::Op("<"))
            && matches!(self.tok_at(k + 1), Tok::Name(_))
            && matches!(self.tok_at(k + 2), Tok::Op(">"))
    }

    /// `*x` (Python unpacking) or an expression; `*<a>` is a star selection, an atom.
    fn starred_or_expression(&mut self) -> PResult<Expr> {
        let start = self.span();
        if self.at_op("*") && !self.at_selector_after(1) {
            self.bump()?;
            let inner = self.bitwise_or()?;
            return Ok(Expr {
                kind: ExprKind::Starred(Box::new(inner)),
                span: self.from(start),
            });
        }
        self.named_expression()
    }

    fn named_expression(&mut self) -> PResult<Expr> {
        let e = self.expression()?;
        if self.at_op(":=") {
            let span = self.span();
            let d = Box::new(
                Diagnostic::error(
                    "fandango-unsupported",
                    "assignment expressions (`:=`) are not supported in constraints",
                    span,
                )
                .with_note("Fandango does not support them either"),
            );
            self.record(&d);
            return Err(d);
        }
        Ok(e)
    }

    fn slices(&mut self) -> PResult<Expr> {
        let start = self.span();
        let first = self.slice_item()?;
        if !self.at_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_op("]") {
                break;
            }
            items.push(self.slice_item()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: self.from(start),
        })
    }

    fn slice_item(&mut self) -> PResult<Expr> {
        let start = self.span();
        let lower = if self.at_op(":") {
            None
        } else {
            let e = self.starred_or_expression()?;
            if !self.at_op(":") {
                return Ok(e);
            }
            Some(Box::new(e))
        };
        self.expect_op(":")?;
        let upper = if self.at_op(":") || self.at_op("]") || self.at_op(",") {
            None
        } else {
            Some(Box::new(self.expression()?))
        };
        let step = if self.eat_op(":") {
            if self.at_op("]") || self.at_op(",") {
                None
            } else {
                Some(Box::new(self.expression()?))
            }
        } else {
            None
        };
        Ok(Expr {
            kind: ExprKind::Slice(lower, upper, step),
            span: self.from(start),
        })
    }

    fn comp_fors(&mut self) -> PResult<Vec<CompFor>> {
        let mut out = Vec::new();
        while self.at_name("for")
            || (self.at_name("async") && matches!(self.tok_at(1), Tok::Name(n) if n == "for"))
        {
            if self.at_name("async") {
                self.bump()?;
            }
            self.bump()?;
            let target = self.target_list()?;
            self.expect_name_kw("in")?;
            let iter = self.py_disjunction()?;
            let mut ifs = Vec::new();
            while self.eat_name("if") {
                ifs.push(self.py_disjunction()?);
            }
            out.push(CompFor { target, iter, ifs });
        }
        Ok(out)
    }

    fn target_list(&mut self) -> PResult<Expr> {
        let start = self.span();
        let first = self.target()?;
        if !self.at_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_name("in") {
                break;
            }
            items.push(self.target()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: self.from(start),
        })
    }

    fn target(&mut self) -> PResult<Expr> {
        let start = self.span();
        if self.eat_op("*") {
            let inner = self.target()?;
            return Ok(Expr {
                kind: ExprKind::Starred(Box::new(inner)),
                span: self.from(start),
            });
        }
        if self.at_op("(") || self.at_op("[") {
            let close = if self.at_op("(") { ")" } else { "]" };
            self.bump()?;
            let mut items = Vec::new();
            while !self.at_op(close) {
                items.push(self.target()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(close)?;
            return Ok(Expr {
                kind: ExprKind::Tuple(items),
                span: self.from(start),
            });
        }
        let name = self.identifier()?;
        Ok(Expr {
            kind: ExprKind::Name(name.text),
            span: name.span,
        })
    }

    fn atom(&mut self) -> PResult<Expr> {
        self.nested(|p| p.atom_inner())
    }

    fn atom_inner(&mut self) -> PResult<Expr> {
        let start = self.span();
        let simple = |kind: ExprKind, p: &mut Self| -> PResult<Expr> {
            p.bump()?;
            Ok(Expr { kind, span: start })
        };
        match self.tok().clone() {
            Tok::Int(i) => simple(ExprKind::Int(i), self),
            Tok::Float => simple(ExprKind::Float, self),
            Tok::Str(_) | Tok::FString(_) => self.strings(),
            Tok::Name(n) => match n.as_str() {
                "True" => simple(ExprKind::Bool(true), self),
                "False" => simple(ExprKind::Bool(false), self),
                "None" => simple(ExprKind::None, self),
                "len"
                    if self.at_op_n(1, "(")
                        && self.at_op_n(2, "*")
                        && self.at_selector_after(3) =>
                {
                    let saved = self.pos;
                    let length = self.attempt(|p| {
                        p.bump()?;
                        p.bump()?;
                        p.bump()?;
                        let sel = p.dot_selection()?;
                        p.expect_op(")")?;
                        Ok(Expr {
                            kind: ExprKind::Length(sel),
                            span: p.from(start),
                        })
                    })?;
                    match length {
                        Some(e) => Ok(e),
                        None => {
                            self.pos = saved;
                            let name = self.identifier()?;
                            Ok(Expr {
                                kind: ExprKind::Name(name.text),
                                span: name.span,
                            })
                        }
                    }
                }
                _ => {
                    let name = self.identifier()?;
                    Ok(Expr {
                        kind: ExprKind::Name(name.text),
                        span: name.span,
                    })
                }
            },
            Tok::Op("...") => simple(ExprKind::Ellipsis, self),
            Tok::Op("|") => {
                self.bump()?;
                let sel = self.dot_selection()?;
                self.expect_op("|")?;
                Ok(Expr {
                    kind: ExprKind::Length(sel),
                    span: self.from(start),
                })
            }
            Tok::Op("*") if self.at_selector_after(1) => {
                self.bump()?;
                let sel = self.dot_selection()?;
                Ok(Expr {
                    kind: ExprKind::Star(sel),
                    span: self.from(start),
                })
            }
            Tok::Op("**") if self.at_selector_after(1) => {
                self.bump()?;
                let sel = self.dot_selection()?;
                Ok(Expr {
                    kind: ExprKind::DoubleStar(sel),
                    span: self.from(start),
                })
            }
            Tok::Op("<") => {
                let sel = self.dot_selection()?;
                Ok(Expr {
                    span: sel.span,
                    kind: ExprKind::Selector(sel),
                })
            }
            Tok::Op("(") => {
                // `(<a>.<b>).<c>`: a selector with a parenthesised base.
                if self.at_selector()
                    && let Some(sel) = self.attempt(|p| {
                        let sel = p.dot_selection()?;
                        let bare = matches!(&sel.kind, DotKind::Selection(s) if s.suffix.is_none());
                        if bare {
                            Err(p.expected("a selector"))
                        } else {
                            Ok(sel)
                        }
                    })?
                {
                    return Ok(Expr {
                        span: sel.span,
                        kind: ExprKind::Selector(sel),
                    });
                }
                self.bump()?;
                if self.at_op(")") {
                    self.bump()?;
                    return Ok(Expr {
                        kind: ExprKind::Tuple(Vec::new()),
                        span: self.from(start),
                    });
                }
                if self.at_name("yield") {
                    return Err(self.expected("an expression (`yield` is not allowed here)"));
                }
                let first = self.starred_or_expression()?;
                if self.at_name("for") {
                    let generators = self.comp_fors()?;
                    self.expect_op(")")?;
                    return Ok(Expr {
                        kind: ExprKind::Comprehension {
                            kind: CompKind::Generator,
                            elt: Box::new(first),
                            value: None,
                            generators,
                        },
                        span: self.from(start),
                    });
                }
                if self.eat_op(")") {
                    if matches!(first.kind, ExprKind::Starred(_)) {
                        return Err(self.expected("`,` after a starred expression"));
                    }
                    // A group: the expression itself (its span widened).
                    return Ok(Expr {
                        kind: first.kind,
                        span: self.from(start),
                    });
                }
                let mut items = vec![first];
                while self.eat_op(",") {
                    if self.at_op(")") {
                        break;
                    }
                    items.push(self.starred_or_expression()?);
                }
                self.expect_op(")")?;
                Ok(Expr {
                    kind: ExprKind::Tuple(items),
                    span: self.from(start),
                })
            }
            Tok::Op("[") => {
                self.bump()?;
                if self.eat_op("]") {
                    return Ok(Expr {
                        kind: ExprKind::List(Vec::new()),
                        span: self.from(start),
                    });
                }
                let first = self.starred_or_expression()?;
                if self.at_name("for") {
                    let generators = self.comp_fors()?;
                    self.expect_op("]")?;
                    return Ok(Expr {
                        kind: ExprKind::Comprehension {
                            kind: CompKind::List,
                            elt: Box::new(first),
                            value: None,
                            generators,
                        },
                        span: self.from(start),
                    });
                }
                let mut items = vec![first];
                while self.eat_op(",") {
                    if self.at_op("]") {
                        break;
                    }
                    items.push(self.starred_or_expression()?);
                }
                self.expect_op("]")?;
                Ok(Expr {
                    kind: ExprKind::List(items),
                    span: self.from(start),
                })
            }
            Tok::Op("{") => self.brace_display(),
            _ => Err(self.expected("an expression")),
        }
    }

    fn brace_display(&mut self) -> PResult<Expr> {
        let start = self.span();
        self.bump()?;
        if self.eat_op("}") {
            return Ok(Expr {
                kind: ExprKind::Dict(Vec::new()),
                span: self.from(start),
            });
        }
        // The first entry tells a dict from a set.
        let first_key = if self.eat_op("**") {
            None
        } else {
            Some(self.starred_or_expression()?)
        };
        let is_dict = first_key.is_none() || self.at_op(":");
        if !is_dict {
            let first = first_key.expect("a set element");
            if self.at_name("for") {
                let generators = self.comp_fors()?;
                self.expect_op("}")?;
                return Ok(Expr {
                    kind: ExprKind::Comprehension {
                        kind: CompKind::Set,
                        elt: Box::new(first),
                        value: None,
                        generators,
                    },
                    span: self.from(start),
                });
            }
            let mut items = vec![first];
            while self.eat_op(",") {
                if self.at_op("}") {
                    break;
                }
                items.push(self.starred_or_expression()?);
            }
            self.expect_op("}")?;
            return Ok(Expr {
                kind: ExprKind::Set(items),
                span: self.from(start),
            });
        }
        let first = match first_key {
            None => (None, self.bitwise_or()?),
            Some(k) => {
                self.expect_op(":")?;
                (Some(k), self.expression()?)
            }
        };
        if first.0.is_some() && self.at_name("for") {
            let generators = self.comp_fors()?;
            self.expect_op("}")?;
            let (k, v) = first;
            return Ok(Expr {
                kind: ExprKind::Comprehension {
                    kind: CompKind::Dict,
                    elt: Box::new(k.expect("a key")),
                    value: Some(Box::new(v)),
                    generators,
                },
                span: self.from(start),
            });
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_op("}") {
                break;
            }
            if self.eat_op("**") {
                items.push((None, self.bitwise_or()?));
            } else {
                let k = self.expression()?;
                self.expect_op(":")?;
                items.push((Some(k), self.expression()?));
            }
        }
        self.expect_op("}")?;
        Ok(Expr {
            kind: ExprKind::Dict(items),
            span: self.from(start),
        })
    }

    /// Adjacent string literals, joined as Python joins them.
    fn strings(&mut self) -> PResult<Expr> {
        let start = self.span();
        let mut value: Option<Option<StrValue>> = None;
        let mut fparts: Option<Vec<FPart>> = None;
        loop {
            match self.tok().clone() {
                Tok::Str(lit) => {
                    let span = self.span();
                    self.bump()?;
                    if let Some(parts) = &mut fparts {
                        match lit.value {
                            Some(StrValue::Text(t)) => parts.push(FPart::Text(t)),
                            Some(StrValue::Bytes(_)) => {
                                return Err(self.mixed_bytes(span));
                            }
                            None => parts.push(FPart::Text(String::new())),
                        }
                        continue;
                    }
                    value = Some(match (value, lit.value) {
                        (None, v) => v,
                        (Some(Some(StrValue::Text(a))), Some(StrValue::Text(b))) => {
                            Some(StrValue::Text(a + &b))
                        }
                        (Some(Some(StrValue::Bytes(mut a))), Some(StrValue::Bytes(b))) => {
                            a.extend(b);
                            Some(StrValue::Bytes(a))
                        }
                        (Some(Some(StrValue::Bytes(_))), _)
                        | (Some(_), Some(StrValue::Bytes(_))) => {
                            return Err(self.mixed_bytes(span));
                        }
                        _ => None,
                    });
                }
                Tok::FString(f) => {
                    let span = self.span();
                    self.bump()?;
                    let mut parts = match (fparts.take(), value.take()) {
                        (Some(p), _) => p,
                        (None, Some(Some(StrValue::Text(t)))) => vec![FPart::Text(t)],
                        (None, Some(Some(StrValue::Bytes(_)))) => {
                            return Err(self.mixed_bytes(span));
                        }
                        (None, _) => Vec::new(),
                    };
                    parts.extend(self.fstring_parts(f.body, f.raw)?);
                    fparts = Some(parts);
                }
                _ => break,
            }
        }
        let span = self.from(start);
        Ok(match fparts {
            Some(parts) => Expr {
                kind: ExprKind::FString(parts),
                span,
            },
            None => Expr {
                kind: ExprKind::Str(value.flatten()),
                span,
            },
        })
    }

    fn mixed_bytes(&mut self, span: Span) -> Box<Diagnostic> {
        let d = Box::new(Diagnostic::error(
            "fandango-syntax",
            "bytes and non-bytes literals cannot be joined",
            span,
        ));
        self.record(&d);
        d
    }

    /// The parts of an f-string body (`body` in the source).
    fn fstring_parts(&mut self, body: Span, raw: bool) -> PResult<Vec<FPart>> {
        let text = &self.text[..body.end as usize];
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut i = body.start as usize;
        let end = body.end as usize;
        let flush = |literal: &mut String, parts: &mut Vec<FPart>| -> PResult<()> {
            if !literal.is_empty() {
                parts.push(FPart::Text(std::mem::take(literal)));
            }
            Ok(())
        };
        let mut lit_start = i;
        while i < end {
            let c = text[i..].chars().next().expect("in bounds");
            match c {
                '{' if text[i + 1..].starts_with('{') => {
                    literal.push_str(&self.decode_fragment(lit_start, i, raw)?);
                    literal.push('{');
                    i += 2;
                    lit_start = i;
                }
                '}' if text[i + 1..end].starts_with('}') => {
                    literal.push_str(&self.decode_fragment(lit_start, i, raw)?);
                    literal.push('}');
                    i += 2;
                    lit_start = i;
                }
                '{' => {
                    literal.push_str(&self.decode_fragment(lit_start, i, raw)?);
                    flush(&mut literal, &mut parts)?;
                    let (field, next) = self.fstring_field(i + 1, end, raw)?;
                    parts.push(field);
                    i = next;
                    lit_start = i;
                }
                '}' => {
                    let d = Box::new(Diagnostic::error(
                        "fandango-syntax",
                        "single `}` in an f-string: write `}}`",
                        Span::new(i, i + 1),
                    ));
                    self.record(&d);
                    return Err(d);
                }
                _ => i += c.len_utf8(),
            }
        }
        literal.push_str(&self.decode_fragment(lit_start, end, raw)?);
        flush(&mut literal, &mut parts)?;
        Ok(parts)
    }

    fn decode_fragment(&mut self, start: usize, end: usize, raw: bool) -> PResult<String> {
        match super::lexer::decode(&self.text[start..end], raw, false) {
            Ok(Some(StrValue::Text(t))) => Ok(t),
            Ok(_) => Ok(String::new()),
            Err((offset, message)) => {
                let d = Box::new(Diagnostic::error(
                    "fandango-syntax",
                    message,
                    Span::new(start + offset, start + offset + 1),
                ));
                self.record(&d);
                Err(d)
            }
        }
    }

    /// A replacement field starting after its `{` at `start`; returns the part and the
    /// offset after its `}`.
    fn fstring_field(&mut self, start: usize, end: usize, raw: bool) -> PResult<(FPart, usize)> {
        // The field's end: the `}` that closes it, brackets and strings skipped.
        let text = self.text;
        let mut depth = 0usize;
        let mut i = start;
        let mut expr_end = None;
        let mut close = None;
        while i < end {
            let c = text[i..].chars().next().expect("in bounds");
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' if depth > 0 => depth -= 1,
                '}' => {
                    expr_end.get_or_insert(i);
                    close = Some(i);
                    break;
                }
                '!' if depth == 0 && !text[i + 1..].starts_with('=') && expr_end.is_none() => {
                    expr_end = Some(i)
                }
                ':' if depth == 0 && expr_end.is_none() => expr_end = Some(i),
                '\'' | '"' => {
                    let q = c;
                    i += 1;
                    while i < end && !text[i..].starts_with(q) {
                        i += text[i..].chars().next().map_or(1, char::len_utf8);
                    }
                }
                _ => {}
            }
            i += c.len_utf8().max(1);
        }
        let (Some(expr_end), Some(close)) = (expr_end, close) else {
            let d = Box::new(Diagnostic::error(
                "fandango-syntax",
                "`{` in an f-string is never closed",
                Span::new(start - 1, start),
            ));
            self.record(&d);
            return Err(d);
        };
        // `{x=}`: the `=` is part of the field, not the expression.
        let mut e_end = expr_end;
        let trimmed = text[start..expr_end].trim_end();
        if trimmed.ends_with('=') && !trimmed.ends_with("==") && !trimmed.ends_with("!=") {
            e_end = start + trimmed.len() - 1;
        }
        let mut sub = Parser::new(text, start, e_end).inspect_err(|d| self.record(d))?;
        // Inside a field newlines are free, as inside brackets.
        sub.toks
            .retain(|t| !matches!(t.tok, Tok::Newline | Tok::Indent | Tok::Dedent));
        let expr = sub.run(|p| {
            let e = p.starred_or_expression()?;
            if !matches!(p.tok(), Tok::Eof) {
                return Err(p.expected("`}`, `!` or `:` ending the f-string field"));
            }
            Ok(e)
        });
        let expr = expr.inspect_err(|d| self.record(d))?;
        let mut conversion = None;
        let mut spec = Vec::new();
        let mut j = expr_end;
        if text[j..].starts_with('!') {
            conversion = text[j + 1..].chars().next();
            if !matches!(conversion, Some('r' | 's' | 'a')) {
                let d = Box::new(Diagnostic::error(
                    "fandango-syntax",
                    "an f-string conversion is `!r`, `!s` or `!a`",
                    Span::new(j, j + 2),
                ));
                self.record(&d);
                return Err(d);
            }
            j += 2;
        }
        if text[j..].starts_with(':') {
            spec = self.fstring_parts(Span::new(j + 1, close), raw)?;
        }
        Ok((
            FPart::Field {
                expr: Box::new(expr),
                conversion,
                spec,
            },
            close + 1,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Formula {
        parse_where(text, 0, text.len()).unwrap_or_else(|e| panic!("{text}: {}", e.message))
    }

    fn is_comparison(f: &Formula) -> bool {
        matches!(f, Formula::Comparison(_))
    }

    #[test]
    fn formula_atoms_resolve_as_fandango_does() {
        assert!(is_comparison(&parse("int(<a>) > 5")));
        assert!(matches!(parse("not str(<a>) == \"1\""), Formula::Expr(_)));
        assert!(matches!(parse("str(<a>) in [\"1\"]"), Formula::Expr(_)));
        assert!(matches!(parse("(int(<a>) == 2) or False"), Formula::Or(..)));
        assert!(matches!(parse("1 < int(<a>) < 3"), Formula::And(..)));
        assert!(matches!(parse("|<a>.<b>| == 2"), Formula::Comparison(_)));
        let Formula::Or(parts, _) = parse("(str(<a>) == \"1\" or str(<c>) == \"2\")") else {
            panic!()
        };
        assert_eq!(parts.len(), 2);
    }

    #[test]
    fn quantifiers_in_both_forms() {
        let f = parse(
            "forall <x> in <a>.<b>:\n    exists <y> in <x>..<c>:\n        str(<y>) == \"a\"\n",
        );
        let Formula::Quantifier(q) = f else { panic!() };
        assert!(q.universal);
        assert!(matches!(q.body, Formula::Quantifier(_)));
        let f = parse("all(str(c) == \"a\" for c in *<a>..<b>)");
        let Formula::Quantifier(q) = f else { panic!() };
        assert!(matches!(q.bound, Bound::Identifier(_)));
        let f = parse("any([str(<c>) == \"a\" for <c> in *<b>])");
        assert!(matches!(f, Formula::Quantifier(_)));
        // Not a quantifier: followed by `and`, so a Python call.
        assert!(matches!(
            parse("all(str(c) == \"a\" for c in *<a>) and True"),
            Formula::And(..)
        ));
    }

    #[test]
    fn python_expressions() {
        for text in [
            "f(x, *y, k=1, **z) == (lambda a, b=2: a + b)",
            "x[1:2, ::3] == {1: 2, **d} and {1, 2} != (1,)",
            "[y for x in z if x for y in x] == b'\\x00' b'a' if c else d",
            "0x1F | 2 ^ 3 & ~4 << 1 >> 2 // 3 % 4 ** -2 == 1",
            "f\"{<a>!r:>{width}}\" == 'x' and x is not None and y not in z",
            "<start>[0].<last_name>..<l> == \"x\"",
            "<name>[0:2] == \"Ch\" and <a>{*<b>: 1:2} == 1",
            "(<a>.<b>).<c> == len(*<x>)",
        ] {
            parse(text);
        }
    }

    #[test]
    fn errors_point_at_the_problem() {
        let text = "forall <x> in <a>: str(<x>) ==";
        let e = parse_where(text, 0, text.len()).unwrap_err();
        assert!(
            e.message.contains("expected an expression"),
            "{}",
            e.message
        );
        assert_eq!(e.primary_span().unwrap().start as usize, text.len());
        let text = "<a>==\"1\"";
        let e = parse_where(text, 0, text.len()).unwrap_err();
        assert!(e.notes.iter().any(|n| n.contains("space")), "{e:?}");
        let text = "forall <x> in <a>\n  str(<x>) == \"1\"";
        let e = parse_where(text, 0, text.len()).unwrap_err();
        assert!(e.message.contains("`:`"), "{}", e.message);
    }
}
