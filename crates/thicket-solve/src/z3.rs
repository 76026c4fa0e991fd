//! The `z3` feature: atoms with SMT functions the repairs cannot aim at (`str.replace`,
//! `str.indexof`, `str.<`, `re.comp`, ...: `unsat::NEEDS_SMT`) solved by Z3, as ISLa
//! solves its SMT atoms (the paper's rule 9).
//!
//! For such an atom under the planner's bindings, each variable bound to a rule's
//! subtree becomes a String constant; variables bound elsewhere (an int variable, a
//! subtree overlapping one already taken) are their current text. The query asserts
//! the atom with the wanted truth value, the other SMT atoms of the same conjunction
//! over the same variables, and for each constant the language of its rule as a Z3
//! regex (exact for a rule below which no rule is recursive; references to recursive
//! rules become `re.all`, an over-approximation). Models are asked for one after the
//! other, each blocking the last, under a random seed from the solution's random
//! stream (diverse values, reproducible runs); each value is read back as its rule
//! with the solver's parser (`repair::parse_as`), and a value that does not parse is
//! blocked for its constant alone. One of the models that parse is chosen at random.
//! Every check runs under [`SolverConfig::smt_timeout_ms`]: a timeout,
//! "unknown" or "unsat" makes this atom's repair fail for the round, and the budget
//! decides the rest. Whatever Z3 says, a solution is returned only when the exact
//! checker accepts it.
//!
//! The text goes to Z3 as SMT-LIB (`Solver::from_string`): z3 0.22 has no typed
//! `str.to_int`, `str.replace_re` or `str.to_code`, and the text is the same for any
//! version of libz3.
//!
//! [`SolverConfig::smt_timeout_ms`]: crate::SolverConfig::smt_timeout_ms

use crate::terms::{smt_name, term_vars};
use crate::unsat::needs_smt;
use crate::{Solver, repair::parse_as};
use ::z3::ast::{Bool, String as ZString};
use ::z3::{Params, SatResult, Solver as Z3Solver};
use rand::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::fmt::Write as _;
use std::sync::OnceLock;
use thicket_constraint::eval::input_string;
use thicket_constraint::formula::Connective;
use thicket_constraint::smt::{Func, Term, Value};
use thicket_constraint::{Binding, Constraint, Evaluator, Formula, VarId};
use thicket_gen::below;
use thicket_grammar::{Expr, ExprId, Grammar, Reach, SymbolId};
use thicket_tree::{DerivationTree, NodeId};

/// What the solver keeps for Z3: each rule's language as a Z3 regex, built on first use.
pub(crate) struct Smt {
    /// Per rule, whether its body reaches the rule again.
    recursive: Vec<bool>,
    /// Per rule, its body as an SMT-LIB regex and the rules that text names.
    regexes: Vec<OnceLock<(String, Vec<SymbolId>)>>,
}

impl Smt {
    pub(crate) fn new(grammar: &Grammar, reach: &Reach) -> Smt {
        Smt {
            recursive: grammar
                .symbols()
                .map(|s| reach.reaches(grammar.rule(s).body, s))
                .collect(),
            regexes: (0..grammar.rules().len())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    fn regex(&self, grammar: &Grammar, symbol: SymbolId) -> &(String, Vec<SymbolId>) {
        self.regexes[symbol.index()].get_or_init(|| {
            let mut out = String::new();
            let mut uses = Vec::new();
            self.expr_regex(grammar, grammar.rule(symbol).body, &mut out, &mut uses);
            (out, uses)
        })
    }

    /// The language of `expr` as an SMT-LIB regex: references to other rules by name
    /// (`R<index>`, recorded in `uses`), to recursive rules as `re.all`.
    fn expr_regex(
        &self,
        grammar: &Grammar,
        expr: ExprId,
        out: &mut String,
        uses: &mut Vec<SymbolId>,
    ) {
        let mut list = |op: &str, items: &[ExprId], out: &mut String| {
            if items.len() == 1 {
                return self.expr_regex(grammar, items[0], out, uses);
            }
            write!(out, "({op}").unwrap();
            for &item in items {
                out.push(' ');
                self.expr_regex(grammar, item, out, uses);
            }
            out.push(')');
        };
        match grammar.expr(expr) {
            Expr::Literal(bytes) => to_re(&input_string(bytes), out),
            Expr::Regex(r) => hir_regex(&r.hir, out),
            Expr::Ref(s) if self.recursive[s.index()] => out.push_str("re.all"),
            Expr::Ref(s) => {
                write!(out, "R{}", s.index()).unwrap();
                if !uses.contains(s) {
                    uses.push(*s);
                }
            }
            Expr::Seq(items) if items.is_empty() => out.push_str("(str.to_re \"\")"),
            Expr::Seq(items) => list("re.++", items, out),
            Expr::Alt(items) if items.is_empty() => out.push_str("re.none"),
            Expr::Alt(items) => list("re.union", items, out),
            Expr::Repeat(rep) => {
                let mut item = String::new();
                self.expr_regex(grammar, rep.item, &mut item, uses);
                repeat(&item, rep.min, rep.max, out);
            }
        }
    }

    /// `define-fun`s for `symbol`'s regex and every one it names, each after those it
    /// names (the references form no cycle: recursive rules are `re.all`).
    fn define(
        &self,
        grammar: &Grammar,
        symbol: SymbolId,
        done: &mut Vec<SymbolId>,
        out: &mut String,
    ) {
        if done.contains(&symbol) {
            return;
        }
        done.push(symbol);
        let (text, uses) = self.regex(grammar, symbol);
        for &s in uses {
            self.define(grammar, s, done, out);
        }
        writeln!(out, "(define-fun R{} () RegLan {text})", symbol.index()).unwrap();
    }
}

/// Edits that make `term` take the value `want`, from Z3's models: `None` if the atom
/// uses no function that needs an SMT solver (the native repairs handle it); an empty
/// list if Z3 found nothing usable in time.
pub(crate) fn solve_atom<R: Rng + ?Sized>(
    solver: &Solver<'_>,
    constraint: &Constraint,
    tree: &DerivationTree,
    term: &Term,
    want: bool,
    ev: &Evaluator<'_, '_>,
    rng: &mut R,
) -> Option<Vec<(NodeId, DerivationTree)>> {
    needs_smt(term)?;
    let grammar = solver.grammar;
    let mut atoms = vec![(term, want)];
    let mut vars = Vec::new();
    term_vars(term, &mut vars);
    if want {
        for other in conjunction(&constraint.formula, term) {
            let mut theirs = Vec::new();
            term_vars(other, &mut theirs);
            if theirs.iter().all(|v| vars.contains(v)) {
                atoms.push((other, true));
            }
        }
    }
    // The unknowns: subtrees of rules, pairwise disjoint (in random order, so that of
    // two nested ones either may be solved for).
    let mut order: Vec<usize> = (0..vars.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, below(rng, i as u32 + 1) as usize);
    }
    let mut unknowns: Vec<(VarId, NodeId, SymbolId)> = Vec::new();
    for i in order {
        let Binding::Node(node) = ev.binding(vars[i]) else {
            continue;
        };
        let Expr::Ref(symbol) = grammar.expr(tree.expr(node)) else {
            continue;
        };
        let disjoint = unknowns.iter().all(|&(_, other, _)| {
            let (a, b) = (node.index(), other.index());
            !((b <= a && a < tree.subtree_end(other)) || (a <= b && b < tree.subtree_end(node)))
        });
        if disjoint {
            unknowns.push((vars[i], node, *symbol));
        }
    }
    if unknowns.is_empty() {
        return Some(Vec::new());
    }
    let value = |v: VarId| -> Option<String> {
        if let Some(i) = unknowns.iter().position(|u| u.0 == v) {
            return Some(format!("x{i}"));
        }
        match ev.binding(v) {
            Binding::Node(n) => Some(literal(&input_string(tree.text(n)))),
            Binding::Int(i) => Some(literal(&i.to_string())),
            Binding::Unbound => None,
        }
    };
    let mut query = String::new();
    let mut defined = Vec::new();
    for (i, &(_, _, symbol)) in unknowns.iter().enumerate() {
        solver.smt.define(grammar, symbol, &mut defined, &mut query);
        writeln!(
            query,
            "(declare-const x{i} String)\n(assert (str.in_re x{i} R{}))",
            symbol.index()
        )
        .unwrap();
    }
    let mut asserted = unknowns.len();
    for (k, (atom, holds)) in atoms.iter().enumerate() {
        let mut text = String::new();
        if smt_text(atom, &value, &mut text).is_none() {
            if k == 0 {
                // The atom itself has no SMT-LIB form here: the native repairs try.
                return None;
            }
            continue;
        }
        if *holds {
            writeln!(query, "(assert {text})").unwrap();
        } else {
            writeln!(query, "(assert (not {text}))").unwrap();
        }
        asserted += 1;
    }
    let seed = rng.next_u32();
    let query = Query {
        solver,
        text: query,
        asserted,
        unknowns: &unknowns,
    };
    let mut found = query.models(seed);
    if found.is_empty() {
        return Some(Vec::new());
    }
    let pick = below(rng, found.len() as u32) as usize;
    Some(found.swap_remove(pick))
}

/// One atom's query, ready for Z3.
struct Query<'q, 's, 'g> {
    solver: &'s Solver<'g>,
    /// SMT-LIB text declaring `x0`, `x1`, ... (the unknowns) and asserting the atoms.
    text: String,
    /// How many assertions `text` makes.
    asserted: usize,
    unknowns: &'q [(VarId, NodeId, SymbolId)],
}

impl Query<'_, '_, '_> {
    /// Up to [`crate::SolverConfig::smt_models`] distinct models whose values all parse
    /// as their rules, as edits, each model blocked before the next is asked for. A
    /// fresh Z3 solver: libz3 4.8.12 can crash when a solver that answered "unknown"
    /// (a timeout) is asked again, so a solver is never asked after that.
    fn models(&self, seed: u32) -> Vec<Vec<(NodeId, DerivationTree)>> {
        let z3 = Z3Solver::new();
        let mut params = Params::new();
        params.set_u32("timeout", self.solver.config.smt_timeout_ms.max(1));
        params.set_u32("random_seed", seed);
        z3.set_params(&params);
        z3.from_string(self.text.as_str());
        if z3.get_assertions().len() != self.asserted {
            // Z3 did not read the text (a function this libz3 lacks): nothing to propose.
            return Vec::new();
        }
        let consts: Vec<ZString> = (0..self.unknowns.len())
            .map(|i| ZString::new_const(format!("x{i}")))
            .collect();
        let mut found = Vec::new();
        let wanted = self.solver.config.smt_models.max(1) as usize;
        for _ in 0..4 * wanted {
            if found.len() == wanted {
                break;
            }
            if z3.check() != SatResult::Sat {
                break;
            }
            let Some(model) = z3.get_model() else { break };
            let mut edits = Vec::new();
            let mut same = Vec::new();
            for (c, &(_, node, symbol)) in consts.iter().zip(self.unknowns) {
                let Some(v) = model.eval(c, true) else {
                    return found;
                };
                let parsed = v
                    .as_string()
                    .map(|s| unescape(&s))
                    .and_then(|text| parse_as(self.solver, symbol, text.as_bytes()));
                match parsed {
                    Some(subtree) => edits.push((node, subtree)),
                    // Never a value of this rule: block it alone.
                    None => z3.assert(c.eq(&v).not()),
                }
                same.push(c.eq(&v));
            }
            z3.assert(Bool::and(&same).not());
            if edits.len() == self.unknowns.len() {
                found.push(edits);
            }
        }
        found
    }
}

/// The other SMT atoms of the largest conjunction of `f` that holds `atom` as a
/// conjunct (by address).
fn conjunction<'f>(f: &'f Formula, atom: &Term) -> Vec<&'f Term> {
    fn conjuncts<'f>(f: &'f Formula, out: &mut Vec<&'f Term>) {
        match f {
            Formula::Binary(Connective::And, a, b) => {
                conjuncts(a, out);
                conjuncts(b, out);
            }
            Formula::Smt(t, _) => out.push(t),
            _ => {}
        }
    }
    match f {
        Formula::Binary(Connective::And, ..) => {
            let mut atoms = Vec::new();
            conjuncts(f, &mut atoms);
            if atoms.iter().any(|t| std::ptr::eq(*t, atom)) {
                atoms.retain(|t| !std::ptr::eq(*t, atom));
                return atoms;
            }
        }
        Formula::Smt(..) | Formula::Predicate(_) => return Vec::new(),
        _ => {}
    }
    // The atom is deeper: in a side that is not a conjunction, or under a quantifier.
    match f {
        Formula::Not(inner) => conjunction(inner, atom),
        Formula::Binary(_, a, b) => {
            let found = conjunction(a, atom);
            if found.is_empty() {
                conjunction(b, atom)
            } else {
                found
            }
        }
        Formula::Quantifier(q) => conjunction(&q.body, atom),
        Formula::IntQuantifier { body, .. } => conjunction(body, atom),
        Formula::Smt(..) | Formula::Predicate(_) => Vec::new(),
    }
}

/// `term` as SMT-LIB text, its variables as `value` names them; `None` if a variable
/// has no value or a term has no SMT-LIB form here.
fn smt_text(term: &Term, value: &dyn Fn(VarId) -> Option<String>, out: &mut String) -> Option<()> {
    match term {
        Term::Var(v) => out.push_str(&value(*v)?),
        Term::Const(Value::Bool(b)) => write!(out, "{b}").unwrap(),
        Term::Const(Value::Int(i)) if *i < 0 => write!(out, "(- {})", i.unsigned_abs()).unwrap(),
        Term::Const(Value::Int(i)) => write!(out, "{i}").unwrap(),
        Term::Const(Value::Str(s)) => out.push_str(&literal(s)),
        Term::Const(Value::Re(_)) => return None,
        // Python's `int(s, base)` has no SMT-LIB form.
        Term::App(Func::StrToIntBase, ..) => return None,
        Term::App(Func::StrIsDigit, _, args) => {
            // Not in every libz3 (4.8.12 answers "unknown").
            out.push_str("(str.in_re ");
            smt_text(&args[0], value, out)?;
            out.push_str(" (re.range \"0\" \"9\"))");
        }
        Term::App(f, _, args) if f.is_constant() && args.is_empty() => out.push_str(smt_name(*f)),
        Term::App(f, indices, args) => {
            out.push('(');
            match (f, &indices[..], &args[..]) {
                (Func::ReLoop | Func::RePower, [], [_, rest @ ..]) => {
                    // Bounds as arguments: they must be constants.
                    write!(out, "(_ {}", smt_name(*f)).unwrap();
                    for bound in rest {
                        match bound {
                            Term::Const(Value::Int(i)) if *i >= 0 => write!(out, " {i}").unwrap(),
                            _ => return None,
                        }
                    }
                    out.push(')');
                    out.push(' ');
                    return smt_text(&args[0], value, out).map(|()| out.push(')'));
                }
                (_, [], _) => out.push_str(smt_name(*f)),
                (_, indices, _) => {
                    write!(out, "(_ {}", smt_name(*f)).unwrap();
                    for i in indices {
                        write!(out, " {i}").unwrap();
                    }
                    out.push(')');
                }
            }
            for arg in args {
                out.push(' ');
                smt_text(arg, value, out)?;
            }
            out.push(')');
        }
    }
    Some(())
}

/// An SMT-LIB string literal: printable ASCII as it is (`"` doubled), everything else
/// as `\u{..}`.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\"\""),
            ' '..='~' if c != '\\' => out.push(c),
            _ => write!(out, "\\u{{{:x}}}", c as u32).unwrap(),
        }
    }
    out.push('"');
    out
}

/// A model's string as libz3 prints it (characters outside printable ASCII as
/// `\u{..}`, the rest as they are) back to the string.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("\\u{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let decoded = after.find('}').and_then(|end| {
            let c = u32::from_str_radix(&after[..end], 16)
                .ok()
                .and_then(char::from_u32)?;
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("\\u{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn to_re(s: &str, out: &mut String) {
    write!(out, "(str.to_re {})", literal(s)).unwrap();
}

/// `item` repeated `min..=max` times (`max` `None`: unbounded).
fn repeat(item: &str, min: u32, max: Option<u32>, out: &mut String) {
    match (min, max) {
        (_, Some(0)) => out.push_str("(str.to_re \"\")"),
        (_, Some(max)) => write!(out, "((_ re.loop {min} {max}) {item})").unwrap(),
        (0, None) => write!(out, "(re.* {item})").unwrap(),
        (1, None) => write!(out, "(re.+ {item})").unwrap(),
        (min, None) => write!(
            out,
            "(re.++ ((_ re.loop {min} {min}) {item}) (re.* {item}))"
        )
        .unwrap(),
    }
}

/// Most ranges a class keeps; a larger class becomes one range from its lowest to its
/// highest character (more than it holds: a value outside it does not parse and is
/// blocked).
const MAX_CLASS_RANGES: usize = 32;

/// A regex terminal's language as an SMT-LIB regex.
fn hir_regex(hir: &Hir, out: &mut String) {
    let list = |op: &str, items: &[Hir], out: &mut String| {
        if items.len() == 1 {
            return hir_regex(&items[0], out);
        }
        write!(out, "({op}").unwrap();
        for item in items {
            out.push(' ');
            hir_regex(item, out);
        }
        out.push(')');
    };
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => out.push_str("(str.to_re \"\")"),
        HirKind::Literal(lit) => to_re(&input_string(&lit.0), out),
        HirKind::Class(class) => {
            let ranges: Vec<(char, char)> = match class {
                Class::Unicode(c) => c.ranges().iter().map(|r| (r.start(), r.end())).collect(),
                Class::Bytes(c) => c
                    .ranges()
                    .iter()
                    .map(|r| (char::from(r.start()), char::from(r.end())))
                    .collect(),
            };
            let ranges = if ranges.len() > MAX_CLASS_RANGES {
                vec![(ranges[0].0, ranges[ranges.len() - 1].1)]
            } else {
                ranges
            };
            match ranges.len() {
                0 => out.push_str("re.none"),
                1 => range(ranges[0], out),
                _ => {
                    out.push_str("(re.union");
                    for r in ranges {
                        out.push(' ');
                        range(r, out);
                    }
                    out.push(')');
                }
            }
        }
        HirKind::Repetition(rep) => {
            let mut item = String::new();
            hir_regex(&rep.sub, &mut item);
            repeat(&item, rep.min, rep.max, out);
        }
        HirKind::Capture(c) => hir_regex(&c.sub, out),
        HirKind::Concat(items) => list("re.++", items, out),
        HirKind::Alternation(items) => list("re.union", items, out),
    }
}

fn range((lo, hi): (char, char), out: &mut String) {
    write!(
        out,
        "(re.range {} {})",
        literal(&lo.to_string()),
        literal(&hi.to_string())
    )
    .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_escapes_round_trip() {
        assert_eq!(literal("a\"b\\"), "\"a\"\"b\\u{5c}\"");
        assert_eq!(literal("é\n"), "\"\\u{e9}\\u{a}\"");
        assert_eq!(unescape("a\\u{e9}\\u{1f600}b\\u{"), "aé😀b\\u{");
    }
}
