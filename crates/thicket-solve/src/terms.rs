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

/// Whether `var` occurs in `term`.
pub(crate) fn mentions(term: &Term, var: VarId) -> bool {
    match term {
        Term::Var(v) => *v == var,
        Term::App(_, _, args) => args.iter().any(|a| mentions(a, var)),
        Term::Const(_) => false,
    }
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
