//! Recursive-descent parser of the constraint language (ISLa's `IslaLanguage.g4`).
//!
//! ```text
//! constraint := ('const' ID ':' NT ';')? formula
//! formula    := iff
//! iff        := implies ('iff' implies)*        -- all binary connectives are left-
//! implies    := xor ('implies' xor)*            -- associative, `and` binds tightest,
//! xor        := or ('xor' or)*                  -- as in ISLa
//! or         := and ('or' and)*
//! and        := unary ('and' unary)*
//! unary      := 'not' unary | quantifier | '(' formula ')' | term
//! quantifier := ('forall' | 'exists') 'int' ID ':' unary
//!             | ('forall' | 'exists') NT ID? ('=' STRING)? ('in' (ID | NT | xpath))? ':' unary
//! term       := sum (('=' | '>=' | '<=' | '>' | '<') sum)?
//! sum        := product (('+' | '-') product)*
//! product    := concat (('*' | '/') concat)*
//! concat     := prefix (('str.++' | 're.++' | 'str.<=' | 'str.<') prefix)*
//! prefix     := '-' prefix | primary
//! primary    := INT | STRING | 'true' | 'false' | ID '(' term (',' term)* ')'
//!             | (ID | NT) xpath-step* | '(' op prefix+ ')' | '(' term ')'
//! ```
//!
//! Decisions where ISLa's grammar is silent or surprising, kept deliberately:
//! - A quantifier's body is a *unary* formula, as ANTLR parses ISLa's prefix
//!   alternatives: `forall <a> x: p and q` is `(forall <a> x: p) and q`. Write
//!   parentheses around a body with connectives (all of ISLa's examples do).
//! - Arithmetic uses the usual precedence (`*` and `/` above `+` and `-`); ISLa's
//!   generated parser lets `+` bind tighter than `*`, which no constraint relies on.
//! - `(` at formula level is read as a term when that succeeds and is followed by a
//!   connective, `)` or the end (`(= a b)`, `(x) = "1"`), and as a parenthesised formula
//!   otherwise (`(not p(a) implies q)`).

use crate::lexer::{Token, TokenKind, tokenize};
use crate::syntax::{
    Connective, ConstDecl, ConstraintSyntax, InTarget, Name, SFormula, STerm, STermKind, XPathStep,
};
use thicket_grammar::{Diagnostic, Span};

/// Deepest nesting accepted: parentheses, prefix operators and chains of binary
/// operators all count, since each makes the syntax tree one level deeper and every
/// later pass (resolution, evaluation) recurses over it.
pub const MAX_NESTING: usize = 256;

/// Parsing stops with an error after this many steps, so that no constraint, however
/// hostile, makes the backtracking in `(` exponential.
const MAX_STEPS: usize = 1_000_000;

type PResult<T> = Result<T, Box<Diagnostic>>;

const KEYWORDS: &[&str] = &[
    "forall", "exists", "not", "and", "or", "xor", "implies", "iff", "in", "const", "where",
];

/// Parses one constraint in `text[start..end]`.
pub fn parse_constraint(text: &str, start: usize, end: usize) -> PResult<ConstraintSyntax> {
    let tokens = tokenize(text, start, end)?;
    let mut parser = Parser::new(tokens);
    let constraint = parser.constraint()?;
    parser.expect_eof()?;
    Ok(constraint)
}

/// Parses the `where` blocks that follow a grammar in a spec: each `where` starts one
/// constraint, which runs up to the next `where` or the end.
pub fn parse_where_blocks(text: &str, start: usize) -> PResult<Vec<ConstraintSyntax>> {
    let tokens = tokenize(text, start, text.len())?;
    let mut parser = Parser::new(tokens);
    let mut constraints = Vec::new();
    while !parser.at_eof() {
        parser.expect_keyword("where")?;
        constraints.push(parser.constraint()?);
        if !parser.at_eof() && !parser.at_keyword("where") {
            return Err(parser.unexpected("`where`, a connective or the end of the spec"));
        }
    }
    Ok(constraints)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    steps: usize,
    depth: usize,
}

impl Parser {
    fn new(tokens: Vec<Token>) -> Parser {
        Parser {
            tokens,
            pos: 0,
            steps: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, n: usize) -> &Token {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)]
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek().kind, TokenKind::Eof)
    }

    fn at_keyword(&self, word: &str) -> bool {
        matches!(&self.peek().kind, TokenKind::Ident(w) if w == word)
    }

    fn at_punct(&self, p: &str) -> bool {
        matches!(&self.peek().kind, TokenKind::Punct(q) if *q == p)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let at = self.at_punct(p);
        if at {
            self.bump();
        }
        at
    }

    /// The span of the token read last (the first token if none was).
    fn last_span(&self) -> Span {
        self.tokens[self.pos.clamp(1, self.tokens.len()) - 1].span
    }

    fn expect_punct(&mut self, p: &str, what: &str) -> PResult<Span> {
        if self.at_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_keyword(&mut self, word: &str) -> PResult<Span> {
        if self.at_keyword(word) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    fn expect_eof(&self) -> PResult<()> {
        if self.at_eof() {
            Ok(())
        } else {
            Err(self.unexpected("a connective (`and`, `or`, `implies`, ...) or the end"))
        }
    }

    fn unexpected(&self, expected: &str) -> Box<Diagnostic> {
        let token = self.peek();
        let found = describe(&token.kind);
        Box::new(
            Diagnostic::error(
                "constraint-syntax",
                format!("expected {expected}, found {found}"),
                token.span,
            )
            .with_label_message(format!("expected {expected}")),
        )
    }

    fn step(&mut self) -> PResult<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Box::new(Diagnostic::error(
                "constraint-too-complex",
                "the constraint is too complex to parse",
                self.peek().span,
            )));
        }
        Ok(())
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Box::new(
                Diagnostic::error(
                    "constraint-too-deep",
                    format!("the constraint nests deeper than {MAX_NESTING} levels"),
                    self.peek().span,
                )
                .with_label_message("too deep here"),
            ));
        }
        Ok(())
    }

    fn ident(&mut self, what: &str) -> PResult<Name> {
        match &self.peek().kind {
            TokenKind::Ident(word) if !KEYWORDS.contains(&word.as_str()) => {
                let text = word.clone();
                let span = self.bump().span;
                Ok(Name { text, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn nonterminal(&mut self, what: &str) -> PResult<Name> {
        match &self.peek().kind {
            TokenKind::Nonterminal(name) => {
                let text = name.clone();
                let span = self.bump().span;
                Ok(Name { text, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn constraint(&mut self) -> PResult<ConstraintSyntax> {
        let start = self.peek().span;
        let constant = if self.at_keyword("const") {
            self.bump();
            let name = self.ident("the constant's name")?;
            self.expect_punct(":", "`:` and the constant's type")?;
            let ty = self.nonterminal("the constant's type, a nonterminal such as `<start>`")?;
            self.expect_punct(";", "`;` after the constant declaration")?;
            Some(ConstDecl { name, ty })
        } else {
            None
        };
        let formula = self.formula()?;
        // To the last token read: a formula in parentheses ends with the `)`.
        let span = start.to(formula.span()).to(self.last_span());
        Ok(ConstraintSyntax {
            constant,
            formula,
            span,
        })
    }

    fn formula(&mut self) -> PResult<SFormula> {
        self.binary(0)
    }

    /// Binary connectives by level: 0 `iff` (loosest) ... 4 `and`, 5 unary.
    fn binary(&mut self, level: usize) -> PResult<SFormula> {
        const LEVELS: [(&str, Connective); 5] = [
            ("iff", Connective::Iff),
            ("implies", Connective::Implies),
            ("xor", Connective::Xor),
            ("or", Connective::Or),
            ("and", Connective::And),
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let (word, connective) = LEVELS[level];
        let depth = self.depth;
        let mut left = self.binary(level + 1)?;
        if matches!(
            connective,
            Connective::And | Connective::Or | Connective::Xor
        ) {
            // Associative: a flat chain `a and b and ...` is no nesting. Its operands
            // are gathered and joined as a balanced tree (evaluated left to right as
            // before), which nests only log2(operands) levels; those count.
            let mut operands = vec![left];
            while self.at_keyword(word) {
                self.bump();
                operands.push(self.binary(level + 1)?);
            }
            let mut levels = 0;
            while (1usize << levels) < operands.len() {
                self.enter()?;
                levels += 1;
            }
            self.depth = depth;
            return Ok(balanced(connective, operands));
        }
        while self.at_keyword(word) {
            self.bump();
            self.enter()?;
            let right = self.binary(level + 1)?;
            let span = left.span().to(right.span());
            left = SFormula::Binary(connective, Box::new(left), Box::new(right), span);
        }
        self.depth = depth;
        Ok(left)
    }

    fn unary(&mut self) -> PResult<SFormula> {
        self.step()?;
        self.enter()?;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> PResult<SFormula> {
        if self.at_keyword("not") {
            let not = self.bump().span;
            let inner = self.unary()?;
            let span = not.to(inner.span());
            return Ok(SFormula::Not(Box::new(inner), span));
        }
        if self.at_keyword("forall") || self.at_keyword("exists") {
            return self.quantifier();
        }
        if self.at_punct("(") {
            let saved = self.pos;
            let as_term = self.term();
            match as_term {
                Ok(term) if self.at_formula_end() => return Ok(SFormula::Atom(term)),
                _ => {}
            }
            let term_error = match as_term {
                Ok(_) => self.unexpected("a connective, `)` or the end"),
                Err(e) => e,
            };
            self.pos = saved;
            let open = self.bump().span;
            let inner = self.formula();
            let inner = inner.and_then(|mut f| {
                let close = self.expect_punct(")", "`)` or a connective")?;
                f.widen(open.to(close));
                Ok(f)
            });
            return inner.map_err(|formula_error| furthest(term_error, formula_error));
        }
        Ok(SFormula::Atom(self.term()?))
    }

    fn at_formula_end(&self) -> bool {
        match &self.peek().kind {
            TokenKind::Eof => true,
            TokenKind::Punct(p) => *p == ")",
            TokenKind::Ident(w) => {
                matches!(
                    w.as_str(),
                    "and" | "or" | "xor" | "implies" | "iff" | "where"
                )
            }
            _ => false,
        }
    }

    fn quantifier(&mut self) -> PResult<SFormula> {
        let head = self.bump();
        let universal = matches!(&head.kind, TokenKind::Ident(w) if w == "forall");
        if self.at_keyword("int") {
            self.bump();
            let var = self.ident("the name of the integer variable")?;
            let colon = self.expect_punct(":", "`:` before the quantifier's body")?;
            let body = self.unary()?;
            return Ok(SFormula::IntQuantifier {
                universal,
                var,
                body: Box::new(body),
                span: head.span.to(colon),
            });
        }
        let ty = self.nonterminal("a nonterminal type such as `<id>`, or `int`")?;
        let var = match &self.peek().kind {
            TokenKind::Ident(w) if !KEYWORDS.contains(&w.as_str()) => Some(self.ident("")?),
            _ => None,
        };
        let mexpr = if self.eat_punct("=") {
            match self.peek().kind.clone() {
                TokenKind::Str(lit) => {
                    let span = self.bump().span;
                    Some((lit, span))
                }
                _ => return Err(self.unexpected("a match expression in quotes")),
            }
        } else {
            None
        };
        let within = if self.at_keyword("in") {
            self.bump();
            let target = self.primary()?;
            Some(match target.kind {
                STermKind::Var(name) => InTarget::Var(Name {
                    text: name,
                    span: target.span,
                }),
                STermKind::Nonterminal(name) => InTarget::Nonterminal(Name {
                    text: name,
                    span: target.span,
                }),
                STermKind::XPath { .. } => InTarget::XPath(Box::new(target)),
                _ => {
                    return Err(Box::new(
                        Diagnostic::error(
                            "constraint-syntax",
                            "a quantifier ranges over a variable, a nonterminal or an XPath expression",
                            target.span,
                        )
                        .with_label_message("not a variable"),
                    ));
                }
            })
        } else {
            None
        };
        let colon = self.expect_punct(
            ":",
            if within.is_some() {
                "`:` before the quantifier's body"
            } else {
                "a variable name, `=\"...\"`, `in` or `:`"
            },
        )?;
        let body = self.unary()?;
        Ok(SFormula::Quantifier {
            universal,
            ty,
            var,
            mexpr,
            within,
            body: Box::new(body),
            span: head.span.to(colon),
        })
    }

    fn term(&mut self) -> PResult<STerm> {
        let left = self.sum()?;
        let op = match &self.peek().kind {
            TokenKind::Punct(p @ ("=" | ">=" | "<=" | ">" | "<")) => *p,
            _ => return Ok(left),
        };
        let op_span = self.bump().span;
        let right = self.sum()?;
        Ok(app(op, op_span, vec![left, right]))
    }

    fn sum(&mut self) -> PResult<STerm> {
        let depth = self.depth;
        let mut left = self.product()?;
        while let TokenKind::Punct(p @ ("+" | "-")) = &self.peek().kind {
            let op = *p;
            let op_span = self.bump().span;
            self.enter()?;
            let right = self.product()?;
            left = app(op, op_span, vec![left, right]);
        }
        self.depth = depth;
        Ok(left)
    }

    fn product(&mut self) -> PResult<STerm> {
        let depth = self.depth;
        let mut left = self.concat()?;
        while let TokenKind::Punct(p @ ("*" | "/")) = &self.peek().kind {
            let op = *p;
            let op_span = self.bump().span;
            self.enter()?;
            let right = self.concat()?;
            left = app(op, op_span, vec![left, right]);
        }
        self.depth = depth;
        Ok(left)
    }

    fn concat(&mut self) -> PResult<STerm> {
        let depth = self.depth;
        let mut left = self.prefix()?;
        while let TokenKind::Ident(w) = &self.peek().kind {
            let op = match w.as_str() {
                "str.++" => "str.++",
                "re.++" => "re.++",
                "str.<=" => "str.<=",
                "str.<" => "str.<",
                _ => break,
            };
            let op_span = self.bump().span;
            self.enter()?;
            let right = self.prefix()?;
            left = app(op, op_span, vec![left, right]);
        }
        self.depth = depth;
        Ok(left)
    }

    fn prefix(&mut self) -> PResult<STerm> {
        if self.at_punct("-") {
            let minus = self.bump().span;
            self.enter()?;
            let operand = self.prefix();
            self.depth -= 1;
            let operand = operand?;
            return Ok(app("-", minus, vec![operand]));
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<STerm> {
        self.step()?;
        self.enter()?;
        let result = self.primary_inner();
        self.depth -= 1;
        result
    }

    fn primary_inner(&mut self) -> PResult<STerm> {
        let token = self.peek().clone();
        match token.kind {
            TokenKind::Int(value) => {
                self.bump();
                Ok(STerm {
                    kind: STermKind::Int(value),
                    span: token.span,
                })
            }
            TokenKind::Str(lit) => {
                self.bump();
                Ok(STerm {
                    kind: STermKind::Str(lit.text),
                    span: token.span,
                })
            }
            TokenKind::Nonterminal(name) => {
                self.bump();
                let base = STerm {
                    kind: STermKind::Nonterminal(name),
                    span: token.span,
                };
                self.xpath(base)
            }
            TokenKind::Ident(word) if word == "true" || word == "false" => {
                self.bump();
                Ok(STerm {
                    kind: STermKind::Bool(word == "true"),
                    span: token.span,
                })
            }
            TokenKind::Ident(word) if !KEYWORDS.contains(&word.as_str()) => {
                self.bump();
                if self.at_punct("(") {
                    self.bump();
                    let mut args = Vec::new();
                    if !self.at_punct(")") {
                        loop {
                            args.push(self.term()?);
                            if !self.eat_punct(",") {
                                break;
                            }
                        }
                    }
                    let close = self.expect_punct(")", "`,` or `)` after an argument")?;
                    return Ok(STerm {
                        kind: STermKind::App {
                            op: Name {
                                text: word,
                                span: token.span,
                            },
                            indices: Vec::new(),
                            args,
                        },
                        span: token.span.to(close),
                    });
                }
                let base = STerm {
                    kind: STermKind::Var(word),
                    span: token.span,
                };
                self.xpath(base)
            }
            TokenKind::Punct("(") => self.parenthesised(),
            _ => Err(self.unexpected("a term (a variable, nonterminal, string, number or `(`)")),
        }
    }

    /// `(op arg+)` in SMT-LIB style, or `(term)`.
    fn parenthesised(&mut self) -> PResult<STerm> {
        let open = self.bump().span;
        let saved = self.pos;
        let as_sexpr = self.sexpr_application(open);
        let sexpr_error = match as_sexpr {
            Ok(term) => return Ok(term),
            Err(e) => e,
        };
        self.pos = saved;
        let inner = self.term().and_then(|inner| {
            let close = self.expect_punct(")", "`)`")?;
            Ok((inner, close))
        });
        inner
            .map(|(mut inner, close)| {
                inner.span = open.to(close);
                inner
            })
            .map_err(|term_error| furthest(sexpr_error, term_error))
    }

    fn sexpr_application(&mut self, open: Span) -> PResult<STerm> {
        let token = self.peek().clone();
        let (op, indices) = match &token.kind {
            TokenKind::Punct(p @ ("=" | ">=" | "<=" | ">" | "<" | "+" | "-" | "*" | "/")) => {
                self.bump();
                (
                    Name {
                        text: p.to_string(),
                        span: token.span,
                    },
                    Vec::new(),
                )
            }
            TokenKind::Ident(word) if !matches!(word.as_str(), "forall" | "exists" | "in") => {
                self.bump();
                (
                    Name {
                        text: word.clone(),
                        span: token.span,
                    },
                    Vec::new(),
                )
            }
            TokenKind::Punct("(") if matches!(&self.peek_at(1).kind, TokenKind::Ident(w) if w == "_") =>
            {
                // `(_ re.loop 1 3)`: an indexed identifier.
                self.bump();
                self.bump();
                let name = match &self.peek().kind {
                    TokenKind::Ident(w) => w.clone(),
                    _ => return Err(self.unexpected("an indexed function name such as `re.loop`")),
                };
                let span = self.bump().span;
                let mut indices = Vec::new();
                while let TokenKind::Int(i) = self.peek().kind {
                    self.bump();
                    indices.push(u32::try_from(i).unwrap_or(u32::MAX));
                }
                self.expect_punct(")", "an index or `)`")?;
                (Name { text: name, span }, indices)
            }
            _ => return Err(self.unexpected("a function name after `(`")),
        };
        let mut args = Vec::new();
        while !self.at_punct(")") {
            if self.at_eof() {
                return Err(self.unexpected("`)`"));
            }
            args.push(self.prefix()?);
        }
        if args.is_empty() {
            return Err(self.unexpected("an argument"));
        }
        let close = self.bump().span;
        Ok(STerm {
            kind: STermKind::App { op, indices, args },
            span: open.to(close),
        })
    }

    fn xpath(&mut self, base: STerm) -> PResult<STerm> {
        let mut steps = Vec::new();
        let mut span = base.span;
        loop {
            let descendant = if self.at_punct("..") {
                true
            } else if self.at_punct(".") {
                false
            } else {
                break;
            };
            if !matches!(self.peek_at(1).kind, TokenKind::Nonterminal(_)) {
                break;
            }
            self.bump();
            let name = self.nonterminal("a nonterminal after `.`")?;
            span = span.to(name.span);
            if descendant {
                steps.push(XPathStep::Descendant(name));
                continue;
            }
            let mut index = 1;
            if self.at_punct("[") {
                self.bump();
                match self.peek().kind {
                    TokenKind::Int(i) if i >= 1 && i <= u32::MAX as i128 => {
                        index = i as u32;
                        self.bump();
                    }
                    _ => return Err(self.unexpected("a position (1 for the first child)")),
                }
                span = span.to(self.expect_punct("]", "`]`")?);
            }
            steps.push(XPathStep::Child(name, index));
        }
        if steps.is_empty() {
            return Ok(base);
        }
        Ok(STerm {
            kind: STermKind::XPath {
                base: Box::new(base),
                steps,
            },
            span,
        })
    }
}

fn app(op: &str, op_span: Span, args: Vec<STerm>) -> STerm {
    let span = args.iter().fold(op_span, |s, a| s.to(a.span));
    STerm {
        kind: STermKind::App {
            op: Name {
                text: op.to_string(),
                span: op_span,
            },
            indices: Vec::new(),
            args,
        },
        span,
    }
}

/// Of two errors from alternative readings, the one that got further is the one to show.
fn furthest(a: Box<Diagnostic>, b: Box<Diagnostic>) -> Box<Diagnostic> {
    let at = |d: &Diagnostic| d.primary_span().map_or(0, |s| s.start);
    if at(&b) >= at(&a) { b } else { a }
}

fn describe(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Ident(w) => format!("`{w}`"),
        TokenKind::Nonterminal(n) => format!("`<{n}>`"),
        TokenKind::Int(i) => format!("the number {i}"),
        TokenKind::Str(_) => "a string".to_string(),
        TokenKind::Punct(p) => format!("`{p}`"),
        TokenKind::Eof => "the end of the constraint".to_string(),
    }
}

/// Operands of an associative connective joined as a balanced tree, in order
/// (recursion depth log2 of their number).
fn balanced(connective: Connective, mut operands: Vec<SFormula>) -> SFormula {
    if operands.len() == 1 {
        return operands.pop().expect("one operand");
    }
    let right = operands.split_off(operands.len() / 2);
    let (left, right) = (balanced(connective, operands), balanced(connective, right));
    let span = left.span().to(right.span());
    SFormula::Binary(connective, Box::new(left), Box::new(right), span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ConstraintSyntax {
        parse_constraint(text, 0, text.len()).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    fn shape(f: &SFormula) -> String {
        match f {
            SFormula::Quantifier {
                universal,
                ty,
                body,
                ..
            } => {
                format!(
                    "({} {} {})",
                    if *universal { "A" } else { "E" },
                    ty.text,
                    shape(body)
                )
            }
            SFormula::IntQuantifier {
                universal,
                var,
                body,
                ..
            } => {
                format!(
                    "({}int {} {})",
                    if *universal { "A" } else { "E" },
                    var.text,
                    shape(body)
                )
            }
            SFormula::Not(inner, _) => format!("(not {})", shape(inner)),
            SFormula::Binary(c, a, b, _) => format!("({c:?} {} {})", shape(a), shape(b)),
            SFormula::Atom(t) => term_shape(t),
        }
    }

    fn term_shape(t: &STerm) -> String {
        match &t.kind {
            STermKind::Bool(b) => b.to_string(),
            STermKind::Int(i) => i.to_string(),
            STermKind::Str(s) => format!("{s:?}"),
            STermKind::Var(v) => v.clone(),
            STermKind::Nonterminal(n) => format!("<{n}>"),
            STermKind::XPath { base, steps } => {
                let steps: String = steps
                    .iter()
                    .map(|s| match s {
                        XPathStep::Child(n, i) => format!(".<{}>[{i}]", n.text),
                        XPathStep::Descendant(n) => format!("..<{}>", n.text),
                    })
                    .collect();
                format!("{}{steps}", term_shape(base))
            }
            STermKind::App { op, args, .. } => format!(
                "[{} {}]",
                op.text,
                args.iter().map(term_shape).collect::<Vec<_>>().join(" ")
            ),
        }
    }

    #[test]
    fn quantifier_bodies_are_unary_and_and_binds_tighter_than_or() {
        let c = parse("forall <a> x: p(x) and q(x) or not r(x)");
        assert_eq!(
            shape(&c.formula),
            "(Or (And (A a [p x]) [q x]) (not [r x]))"
        );
        let c = parse("forall <a> x: (p(x) and q(x))");
        assert_eq!(shape(&c.formula), "(A a (And [p x] [q x]))");
    }

    #[test]
    fn infix_and_prefix_smt_terms() {
        let c = parse("str.len(t1) + str.len(t2) * 2 > 150");
        assert_eq!(
            shape(&c.formula),
            "[> [+ [str.len t1] [* [str.len t2] 2]] 150]"
        );
        let c = parse("(>= (str.len underline) (str.len titletxt))");
        assert_eq!(
            shape(&c.formula),
            "[>= [str.len underline] [str.len titletxt]]"
        );
        let c = parse("((= a b) and (not (= c d)))");
        assert_eq!(shape(&c.formula), "(And [= a b] [not [= c d]])");
        let c = parse("(not same_position(a, b) implies not (= c d))");
        assert_eq!(
            shape(&c.formula),
            "(Implies (not [same_position a b]) (not [= c d]))"
        );
        let c = parse("(str.len(x)) = 3 and str.in_re(x, re.+(re.range(\"a\", \"z\")))");
        assert_eq!(
            shape(&c.formula),
            "(And [= [str.len x] 3] [str.in_re x [re.+ [re.range \"a\" \"z\"]]])"
        );
        let c = parse("str.in_re(x, ((_ re.loop 1 3) (str.to_re \"a\")))");
        assert_eq!(
            shape(&c.formula),
            "[str.in_re x [re.loop [str.to_re \"a\"]]]"
        );
    }

    #[test]
    fn xpath_and_match_expressions() {
        let c = parse(
            "forall <xml-tree> tree=\"<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>\" in start: (= opid clid)",
        );
        let SFormula::Quantifier {
            mexpr: Some((lit, _)),
            var,
            ..
        } = &c.formula
        else {
            panic!()
        };
        assert_eq!(var.as_ref().unwrap().text, "tree");
        assert!(lit.text.starts_with("<{<id> opid}"));
        let c = parse("str.len(<section-title>.<underline>) >= str.len(<a>..<b>.<c>[2])");
        assert_eq!(
            shape(&c.formula),
            "[>= [str.len <section-title>.<underline>[1]] [str.len <a>..<b>.<c>[2]]]"
        );
    }

    #[test]
    fn const_int_quantifiers_and_where_blocks() {
        let c = parse("const c: <csv-file>; exists int n: count(c, \"<raw-field>\", n)");
        assert_eq!(c.constant.unwrap().name.text, "c");
        assert_eq!(shape(&c.formula), "(Eint n [count c \"<raw-field>\" n])");
        let text = "<a> ::= \"x\"\nwhere str.len(<a>) = 1\nwhere forall <a> x: x = \"x\"\n";
        let blocks = parse_where_blocks(text, 12).unwrap();
        assert_eq!(blocks.len(), 2);
    }

    #[test]
    fn errors_point_at_the_offending_token() {
        let e = parse_constraint("forall <a> x in : y", 0, 19).unwrap_err();
        assert_eq!(e.code, "constraint-syntax");
        assert_eq!(e.primary_span(), Some(Span::new(16, 17)));
        let e = parse_constraint("x = ", 0, 4).unwrap_err();
        assert!(e.message.contains("end of the constraint"), "{}", e.message);
        let deep = "(".repeat(10_000) + "x";
        let e = parse_constraint(&deep, 0, deep.len()).unwrap_err();
        assert_eq!(e.code, "constraint-too-deep");
    }
}
