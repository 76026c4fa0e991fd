//! A rule's language as a constraint [`Regex`], where the rule is regular by its shape:
//! nothing recursive below it but the rule's own linear recursion (`<text> ::=
//! <text-char> <text> | <text-char>` is `<text-char>* <text-char>`, by Arden's lemma).
//! `str.in_re(x, R)`, `str.prefixof`, `str.suffixof` and `str.contains` on such a rule
//! are solved by intersecting the two languages: a string drawn from the intersection
//! is one the rule derives, and an empty intersection is known to be empty (so a
//! constraint that needs one is refused as unsatisfiable, `unsat.rs`).
//!
//! Decisions: a regex terminal's look-arounds (the spec loader refuses anchors) would
//! make the rule irregular here (`None`); a byte class stands for the characters of the same numbers, as
//! [`thicket_constraint::eval::input_string`] reads bytes that are not UTF-8.

use regex_syntax::hir::{Class, Hir, HirKind};
use thicket_constraint::eval::input_string;
use thicket_constraint::regex::Regex;
use thicket_constraint::smt::{Func, Value};
use thicket_grammar::{Expr, ExprId, Grammar, SymbolId};

/// Derivatives explored to decide whether an intersection is empty before giving up.
pub(crate) const EMPTINESS_STATES: usize = 4096;

/// The strings for which `f(x, other)` (`str.in_re`, or `str.prefixof` / `suffixof` /
/// `contains` with `x` the string searched) takes the value `want`.
pub(crate) fn membership(f: Func, other: &Value, want: bool) -> Option<Regex> {
    let re = match (f, other) {
        (Func::StrInRe, Value::Re(re)) => re.clone(),
        (Func::StrPrefixOf, Value::Str(n)) => Regex::concat(Regex::literal(n), Regex::all()),
        (Func::StrSuffixOf, Value::Str(n)) => Regex::concat(Regex::all(), Regex::literal(n)),
        (Func::StrContains, Value::Str(n)) => {
            Regex::concat(Regex::all(), Regex::concat(Regex::literal(n), Regex::all()))
        }
        _ => return None,
    };
    Some(if want { re } else { Regex::comp(re) })
}

/// The language of `symbol`, if its shape makes it regular (see the module docs).
pub(crate) fn rule_language(grammar: &Grammar, symbol: SymbolId) -> Option<Regex> {
    Converter {
        grammar,
        open: Vec::new(),
    }
    .rule(symbol)
}

struct Converter<'g> {
    grammar: &'g Grammar,
    /// Rules being converted: meeting one again is recursion the conversion refuses.
    open: Vec<SymbolId>,
}

impl Converter<'_> {
    fn rule(&mut self, symbol: SymbolId) -> Option<Regex> {
        if self.open.contains(&symbol) {
            return None;
        }
        self.open.push(symbol);
        let language = self.linear(symbol);
        self.open.pop();
        language
    }

    /// The rule's body, its alternatives of the forms `P <X>` and `<X> S` (with `P`
    /// and `S` free of `<X>`) solved as `(P | ...)* B (S | ...)*`, `B` the union of the
    /// alternatives that do not mention `<X>`.
    fn linear(&mut self, symbol: SymbolId) -> Option<Regex> {
        let grammar = self.grammar;
        let body = grammar.rule(symbol).body;
        let alternatives: Vec<ExprId> = match grammar.expr(body) {
            Expr::Alt(alts) => alts.to_vec(),
            _ => vec![body],
        };
        let is_self = |e: ExprId| matches!(grammar.expr(e), Expr::Ref(s) if *s == symbol);
        let (mut base, mut before, mut after) = (Vec::new(), Vec::new(), Vec::new());
        for alt in alternatives {
            if !mentions(grammar, alt, symbol) {
                base.push(self.expr(alt)?);
                continue;
            }
            let Expr::Seq(items) = grammar.expr(alt) else {
                // `<X> ::= <X>` derives nothing new; anything else is not linear.
                if is_self(alt) {
                    continue;
                }
                return None;
            };
            let (first, last) = (items[0], items[items.len() - 1]);
            let rest = |items: &[ExprId]| items.iter().all(|&e| !mentions(grammar, e, symbol));
            if is_self(last) && rest(&items[..items.len() - 1]) {
                before.push(self.seq(&items[..items.len() - 1])?);
            } else if is_self(first) && rest(&items[1..]) {
                after.push(self.seq(&items[1..])?);
            } else {
                return None;
            }
        }
        let union = Regex::union_all;
        let star = |parts: Vec<Regex>| {
            if parts.is_empty() {
                Regex::literal("")
            } else {
                Regex::star(union(parts))
            }
        };
        Some(Regex::concat(
            star(before),
            Regex::concat(union(base), star(after)),
        ))
    }

    fn seq(&mut self, items: &[ExprId]) -> Option<Regex> {
        items.iter().try_fold(Regex::literal(""), |acc, &e| {
            Some(Regex::concat(acc, self.expr(e)?))
        })
    }

    fn expr(&mut self, e: ExprId) -> Option<Regex> {
        match self.grammar.expr(e) {
            Expr::Alt(alts) => Some(Regex::union_all(
                alts.iter()
                    .map(|&a| self.expr(a))
                    .collect::<Option<Vec<_>>>()?,
            )),
            Expr::Seq(items) => self.seq(items),
            Expr::Repeat(rep) => {
                let item = self.expr(rep.item)?;
                Some(repeat(item, rep.min, rep.max))
            }
            Expr::Literal(bytes) => Some(Regex::literal(&input_string(bytes))),
            Expr::Regex(terminal) => hir(&terminal.hir),
            Expr::Ref(s) => self.rule(*s),
        }
    }
}

/// Whether `e` refers to `symbol` directly (not through another rule).
fn mentions(grammar: &Grammar, e: ExprId, symbol: SymbolId) -> bool {
    match grammar.expr(e) {
        Expr::Ref(s) => *s == symbol,
        other => other
            .children()
            .iter()
            .any(|&c| mentions(grammar, c, symbol)),
    }
}

/// `min` to `max` (unbounded: `None`) repetitions.
fn repeat(item: Regex, min: u32, max: Option<u32>) -> Regex {
    match max {
        Some(max) => Regex::repeat(item, min.into(), max.into()),
        None => Regex::concat(
            Regex::repeat(item.clone(), min.into(), min.into()),
            Regex::star(item),
        ),
    }
}

fn hir(h: &Hir) -> Option<Regex> {
    let all = |items: &[Hir], join: fn(Regex, Regex) -> Regex, unit: Regex| {
        items
            .iter()
            .try_fold(unit, |acc, item| Some(join(acc, hir(item)?)))
    };
    match h.kind() {
        HirKind::Empty => Some(Regex::literal("")),
        HirKind::Look(_) => None,
        HirKind::Literal(lit) => Some(Regex::literal(&input_string(&lit.0))),
        HirKind::Class(Class::Unicode(c)) => Some(Regex::union_all(
            c.ranges().iter().map(|r| Regex::range(r.start(), r.end())),
        )),
        HirKind::Class(Class::Bytes(c)) => {
            Some(Regex::union_all(c.ranges().iter().map(|r| {
                Regex::range(char::from(r.start()), char::from(r.end()))
            })))
        }
        HirKind::Repetition(rep) => Some(repeat(hir(&rep.sub)?, rep.min, rep.max)),
        HirKind::Capture(c) => hir(&c.sub),
        HirKind::Concat(items) => all(items, Regex::concat, Regex::literal("")),
        HirKind::Alternation(items) => Some(Regex::union_all(
            items.iter().map(hir).collect::<Option<Vec<_>>>()?,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language(spec: &str, rule: &str) -> Option<Regex> {
        let spec = thicket_grammar::load_spec_bytes("l.fan", spec.as_bytes(), &Default::default())
            .unwrap();
        rule_language(&spec.grammar, spec.grammar.symbol(rule).unwrap())
    }

    #[test]
    fn linear_recursion_and_regex_terminals_give_the_rules_language() {
        let spec = "<start> ::= <id> \"=\" <text>\n\
                    <id> ::= r\"[a-c]\" <tail>\n<tail> ::= \"\" | r\"[0-9]\" <tail>\n\
                    <text> ::= <text> \"!\" | \"x\"{1,2}\n";
        let id = language(spec, "id").unwrap();
        for (s, member) in [
            ("a", true),
            ("b01", true),
            ("c9", true),
            ("d", false),
            ("a0x", false),
        ] {
            assert_eq!(id.is_match(s), member, "<id> {s}");
        }
        let text = language(spec, "text").unwrap();
        for (s, member) in [("x", true), ("xx!!", true), ("xxx", false), ("!x", false)] {
            assert_eq!(text.is_match(s), member, "<text> {s}");
        }
        let start = language(spec, "start").unwrap();
        assert!(start.is_match("b7=x!"));
        assert!(!start.is_match("b7x!"));
    }

    #[test]
    fn other_recursion_is_not_regular_here() {
        let spec = "<start> ::= <e>\n<e> ::= \"(\" <e> \")\" | \"1\"\n";
        assert!(language(spec, "e").is_none());
        assert!(language(spec, "start").is_none());
    }
}
