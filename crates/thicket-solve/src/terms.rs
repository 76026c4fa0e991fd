//! Small facts about SMT terms and integer comparisons, shared by the planner and the
//! static checks.

use thicket_constraint::VarId;
use thicket_constraint::smt::{FUNCTIONS, Func, Term};

/// Above every bound a comparison sets (the top of an interval with no upper bound).
pub(crate) const UNBOUNDED_ABOVE: i128 = 1 << 62;

/// Whether `term` is `func` applied to the variable alone (`str.len(x)`).
pub(crate) fn applied_to(term: &Term, func: Func, var: VarId) -> bool {
    matches!(term, Term::App(f, _, args) if *f == func && matches!(&args[..], [Term::Var(v)] if *v == var))
}

/// Whether any variable occurs in `term`.
pub(crate) fn has_var(term: &Term) -> bool {
    match term {
        Term::Var(_) => true,
        Term::App(_, _, args) => args.iter().any(has_var),
        Term::Const(_) => false,
    }
}

/// The variables of `term`, each once, in order of occurrence.
pub(crate) fn term_vars(term: &Term, out: &mut Vec<VarId>) {
    match term {
        Term::Var(v) => {
            if !out.contains(v) {
                out.push(*v);
            }
        }
        Term::App(_, _, args) => args.iter().for_each(|a| term_vars(a, out)),
        Term::Const(_) => {}
    }
}

/// The comparison that holds exactly when `op` does not.
pub(crate) fn negate(op: Func) -> Func {
    match op {
        Func::Lt => Func::Ge,
        Func::Le => Func::Gt,
        Func::Gt => Func::Le,
        Func::Ge => Func::Lt,
        other => other,
    }
}

/// `a op b` as `b flip(op) a`.
pub(crate) fn flip(op: Func) -> Func {
    match op {
        Func::Lt => Func::Gt,
        Func::Le => Func::Ge,
        Func::Gt => Func::Lt,
        Func::Ge => Func::Le,
        other => other,
    }
}

/// The values `x` with `x op other` (`=` for any other function).
pub(crate) fn interval(op: Func, other: i128) -> (i128, i128) {
    match op {
        Func::Lt => (-UNBOUNDED_ABOVE, other - 1),
        Func::Le => (-UNBOUNDED_ABOVE, other),
        Func::Gt => (other + 1, UNBOUNDED_ABOVE),
        Func::Ge => (other, UNBOUNDED_ABOVE),
        _ => (other, other),
    }
}

/// The SMT-LIB name of a function (the first of its spellings: SMT-LIB 2.6's).
pub(crate) fn smt_name(func: Func) -> &'static str {
    match func {
        Func::Neg => "-",
        // "/" is real division in SMT-LIB.
        Func::Div => "div",
        _ => FUNCTIONS
            .iter()
            .find(|&&(_, f)| f == func)
            .map_or("?", |&(name, _)| name),
    }
}

/// The rules a constraint's truth is confined to: the symbols of its outermost
/// quantifiers, when each ranges over the whole input (`in start`) and nothing else
/// looks at the input as a whole. Then the constraint's value depends only on the
/// subtrees of those rules' nodes (inner quantifiers range inside them, atoms and
/// predicates see bound subtrees, and the structural predicates kept here compare
/// positions of bound nodes), so an edit that touches none of those nodes (is not
/// inside one, holds none before or after) leaves it as it was. `None` where that is
/// not known: `start` used in an atom, a quantifier over `start`'s children, a
/// predicate that looks between or beside bound nodes (`consecutive`, `nth`), or a
/// host expression (`python`, which may walk from a bound tree to its parents).
/// The string constants the constraints' SMT atoms hold.
pub(crate) fn literals(
    constraints: &[thicket_constraint::Constraint],
) -> std::collections::HashSet<Vec<u8>> {
    fn collect(term: &Term, out: &mut std::collections::HashSet<Vec<u8>>) {
        match term {
            Term::Const(thicket_constraint::smt::Value::Str(s)) => {
                out.insert(s.as_bytes().to_vec());
            }
            Term::App(_, _, args) => args.iter().for_each(|a| collect(a, out)),
            _ => {}
        }
    }
    let mut out = std::collections::HashSet::new();
    for c in constraints {
        c.formula.visit(&mut |f| {
            if let thicket_constraint::Formula::Smt(term, _) = f {
                collect(term, &mut out);
            }
        });
    }
    out
}

pub(crate) fn scope(
    formula: &thicket_constraint::Formula,
) -> Option<Vec<thicket_grammar::SymbolId>> {
    use thicket_constraint::Formula;
    use thicket_constraint::formula::{Domain, PredArg};
    let mut ok = true;
    formula.visit(&mut |f| match f {
        Formula::Smt(term, _) => {
            ok &= !term.mentions(VarId::START);
        }
        Formula::Predicate(call) => {
            ok &= !matches!(call.predicate.name(), "consecutive" | "nth" | "python")
                && !call
                    .args
                    .iter()
                    .any(|a| matches!(a, PredArg::Var(v) if *v == VarId::START));
        }
        Formula::Quantifier(q) => {
            ok &= !matches!(
                q.domain,
                Domain::Child { parent, .. } | Domain::Children { parent } if parent == VarId::START
            );
        }
        _ => {}
    });
    fn outermost(f: &Formula, out: &mut Vec<thicket_grammar::SymbolId>) -> bool {
        match f {
            Formula::Smt(..) | Formula::Predicate(_) => true,
            Formula::Not(inner) => outermost(inner, out),
            Formula::Binary(_, a, b) => outermost(a, out) && outermost(b, out),
            Formula::IntQuantifier { body, .. } => outermost(body, out),
            Formula::Quantifier(q) => {
                if !out.contains(&q.symbol) {
                    out.push(q.symbol);
                }
                q.domain == Domain::Within(VarId::START)
            }
        }
    }
    let mut symbols = Vec::new();
    (ok && outermost(formula, &mut symbols)).then_some(symbols)
}

#[cfg(test)]
mod tests {
    use thicket_constraint::Predicates;

    /// The scopes of each constraint of a spec with `<start> ::= <a>+`,
    /// `<a> ::= "x" <b> | "y"`, `<b> ::= "1" | "2"`, by symbol name.
    fn scopes(constraints: &str) -> Vec<Option<Vec<String>>> {
        let text = format!(
            "<start> ::= <a>+\n<a> ::= \"x\" <b> | \"y\"\n<b> ::= \"1\" | \"2\"\n{constraints}"
        );
        let spec = thicket_grammar::load_spec_bytes("s.fan", text.as_bytes(), &Default::default())
            .unwrap();
        let constraints = thicket_constraint::from_spec(&spec, &Predicates::standard()).unwrap();
        constraints
            .iter()
            .map(|c| {
                super::scope(&c.formula).map(|symbols| {
                    symbols
                        .iter()
                        .map(|&s| spec.grammar.display_symbol(s))
                        .collect()
                })
            })
            .collect()
    }

    #[test]
    fn scope_is_the_outermost_quantified_rules_or_unknown() {
        let got = scopes(
            "where forall <a> x in start: forall <b> y in x: y = \"1\"\n\
             where exists <b> y in start: y = \"2\" and forall <a> x: not x = \"y\"\n\
             where str.len(start) > 3\n\
             where forall <a> x in start: forall <a> z in start: \
               (consecutive(x, z) implies x = z)\n",
        );
        assert_eq!(got[0], Some(vec!["<a>".to_string()]));
        assert_eq!(got[1], Some(vec!["<b>".to_string(), "<a>".to_string()]));
        // The whole input's text, and leaves between bound nodes, can change anywhere.
        assert_eq!(got[2], None);
        assert_eq!(got[3], None);
    }
}
