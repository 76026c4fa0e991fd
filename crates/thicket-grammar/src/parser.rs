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

use crate::ast::{AstExpr, AstExprKind, AstRule, SpecAst};
use crate::diag::Diagnostic;
use crate::lexer::{Lexer, Token, TokenKind};
use crate::source::Span;
use std::collections::VecDeque;

/// Deepest nesting of parentheses accepted. Deeper specs are rejected rather than
/// risking the stack of this parser and of every later pass over the grammar.
pub const MAX_NESTING: usize = 128;

/// Fandango words that start a construct thicket does not support yet, with what to say.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "def",
        "Python function definitions (`def`) are not supported",
    ),
    ("import", "Python `import` statements are not supported"),
    (
        "from",
        "Python `from ... import` statements are not supported",
    ),
    ("class", "Python class definitions are not supported"),
    ("minimizing", "`minimizing` goals are not supported yet"),
    ("maximizing", "`maximizing` goals are not supported yet"),
    (
        "include",
        "`include(...)` of other specs is not supported yet",
    ),
    ("setting", "Fandango `setting` lines are not supported"),
    ("fuzz", "Fandango `fuzz` directives are not supported"),
];

/// Parses spec text into its syntax tree.
pub fn parse_spec(text: &str) -> Result<SpecAst, Box<Diagnostic>> {
    let mut parser = Parser {
        lexer: Lexer::new(text),
        lookahead: VecDeque::new(),
        depth: 0,
    };
    parser.spec()
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    lookahead: VecDeque<Token>,
    depth: usize,
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
            match &self.peek()?.kind {
                TokenKind::Pipe | TokenKind::RParen | TokenKind::Semi | TokenKind::Eof => break,
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
        let (min, max) = match self.peek()?.kind {
            TokenKind::Star => (0, None),
            TokenKind::Plus => (1, None),
            TokenKind::Question => (0, Some(1)),
            TokenKind::Braces { min, max } => (min, max),
            _ => return Ok(atom),
        };
        let quantifier = self.next()?;
        if let TokenKind::Star | TokenKind::Plus | TokenKind::Question | TokenKind::Braces { .. } =
            self.peek()?.kind
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
        Ok(AstExpr {
            span: atom.span.to(quantifier.span),
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
            TokenKind::Nonterminal(name) => AstExprKind::Ref(name),
            TokenKind::Literal(bytes) => AstExprKind::Literal(bytes),
            TokenKind::Regex(pattern) => AstExprKind::Regex(pattern),
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
                return Ok(AstExpr {
                    kind: inner.kind,
                    span: token.span.to(close.span),
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
            TokenKind::Walrus => {
                return Err(Box::new(
                    Diagnostic::error(
                        "unsupported",
                        "Fandango generators (`:= ...`) are not supported",
                        token.span,
                    )
                    .with_label_message("not supported")
                    .with_note("remove the generator; thicket derives the value from the grammar"),
                ));
            }
            _ => {
                return Err(unsupported(&token).unwrap_or_else(|| {
                    let hint = match &token.kind {
                        TokenKind::Word(_) => "literals must be quoted, e.g. \"text\"",
                        TokenKind::Number(_) => "literals must be quoted, e.g. \"0\" (Fandango bit literals are not supported)",
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
        .with_label_message("not supported by thicket")
        .with_note("thicket reads the grammar part of Fandango specs; remove this construct"),
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
