//! What is refused before any search: constraints proved unsatisfiable, and atoms
//! outside what the solver handles (see the crate docs).

use crate::measure::Measure;
use crate::{SolveError, Solver};
use thicket_constraint::formula::{Connective, Domain, Formula};
use thicket_constraint::smt::{Func, Term, Value};
use thicket_constraint::{Constraint, VarId};
use thicket_grammar::{Expr, ExprId, Grammar, Span, SymbolId};

/// Functions whose atoms need an SMT solver: the repairs cannot aim at them.
const NEEDS_SMT: &[Func] = &[
    Func::StrReplace,
    Func::StrReplaceAll,
    Func::StrReplaceRe,
    Func::StrReplaceReAll,
    Func::StrIndexOf,
    Func::StrFromCode,
    Func::StrToCode,
    Func::StrLt,
    Func::StrLe,
    Func::ReComp,
    Func::ReDiff,
    Func::ReInter,
];

pub(crate) fn check(solver: &Solver<'_>) -> Result<(), SolveError> {
    for (i, c) in solver.constraints.iter().enumerate() {
        let mut error = None;
        c.formula.visit(&mut |f| {
            if error.is_some() {
                return;
            }
            match f {
                Formula::IntQuantifier {
                    universal: true,
                    span,
                    ..
                } => {
                    error = Some(unsupported(
                        c,
                        i,
                        *span,
                        "`forall int` is outside what thicket solves (only `exists int`, \
                         whose values the predicates propose)"
                            .into(),
                    ));
                }
                Formula::Smt(term, span) => {
                    if let Some(func) = needs_smt(term) {
                        error = Some(unsupported(
                            c,
                            i,
                            *span,
                            format!(
                                "this atom uses {func:?}, which thicket's native solver does \
                                 not handle (it needs an SMT solver; no `z3` feature in this \
                                 build); `thicket check` can still decide it"
                            ),
                        ));
                    } else if !has_var(term) && term_value(term) == Some(false) {
                        error = Some(SolveError::Unsatisfiable {
                            constraint: i,
                            location: location(c, *span),
                            why: "this atom is false whatever the input".into(),
                        });
                    }
                }
                _ => {}
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
        for conjunct in conjuncts(&c.formula) {
            top_level(solver, c, i, conjunct)?;
        }
    }
    Ok(())
}

fn unsupported(c: &Constraint, i: usize, span: Span, why: String) -> SolveError {
    SolveError::Unsupported {
        constraint: i,
        location: location(c, span),
        why,
    }
}

fn location(c: &Constraint, span: Span) -> String {
    format!(
        "{}:{}",
        c.source.name(),
        c.source.line_col(span.start as usize)
    )
}

fn needs_smt(term: &Term) -> Option<Func> {
    match term {
        Term::App(f, _, args) => {
            if NEEDS_SMT.contains(f) {
                Some(*f)
            } else {
                args.iter().find_map(needs_smt)
            }
        }
        _ => None,
    }
}

fn has_var(term: &Term) -> bool {
    match term {
        Term::Var(_) => true,
        Term::App(_, _, args) => args.iter().any(has_var),
        Term::Const(_) => false,
    }
}

fn term_value(term: &Term) -> Option<bool> {
    match thicket_constraint::smt::eval(term, &|_| None) {
        Ok(Value::Bool(b)) => Some(b),
        _ => None,
    }
}

fn conjuncts(f: &Formula) -> Vec<&Formula> {
    match f {
        Formula::Binary(Connective::And, a, b) => {
            let mut out = conjuncts(a);
            out.extend(conjuncts(b));
            out
        }
        other => vec![other],
    }
}

/// A top-level conjunct over the whole input: an `exists` whose type no input holds,
/// or a `forall` over a rule every input holds whose length bounds no subtree meets.
fn top_level(
    solver: &Solver<'_>,
    c: &Constraint,
    i: usize,
    f: &Formula,
) -> Result<(), SolveError> {
    let Formula::Quantifier(q) = f else {
        return Ok(());
    };
    let Domain::Within(outer) = q.domain else {
        return Ok(());
    };
    if outer.index() != 0 {
        return Ok(());
    }
    let grammar = solver.grammar;
    let start = grammar.root();
    if !q.universal && !solver.reach.reaches(start, q.symbol) {
        return Err(SolveError::Unsatisfiable {
            constraint: i,
            location: location(c, q.span),
            why: format!(
                "no input contains {}: the start rule never derives it",
                grammar.display_symbol(q.symbol)
            ),
        });
    }
    if q.mexpr.is_some() {
        return Ok(());
    }
    // Length bounds on the bound variable alone, in a conjunction.
    let (mut lo, mut hi) = (0i128, i128::MAX);
    let mut bounded = false;
    for atom in conjuncts(&q.body) {
        if let Formula::Smt(Term::App(op, _, args), _) = atom
            && args.len() == 2
        {
            let bound = match (&args[0], &args[1]) {
                (l, Term::Const(Value::Int(k))) if is_len_of(l, q.var) => Some((*op, *k)),
                (Term::Const(Value::Int(k)), r) if is_len_of(r, q.var) => Some((flip(*op), *k)),
                _ => None,
            };
            if let Some((op, k)) = bound {
                bounded = true;
                match op {
                    Func::Eq => {
                        lo = lo.max(k);
                        hi = hi.min(k);
                    }
                    Func::Lt => hi = hi.min(k - 1),
                    Func::Le => hi = hi.min(k),
                    Func::Gt => lo = lo.max(k + 1),
                    Func::Ge => lo = lo.max(k),
                    _ => {}
                }
            }
        }
    }
    if !bounded || !q.universal || avoidable(grammar, q.symbol) {
        return Ok(());
    }
    let table = solver.table(Measure::Length);
    let body = grammar.rule(q.symbol).body;
    let fits = lo <= hi
        && table
            .values(body, 1)
            .into_iter()
            .any(|v| (lo..=hi).contains(&(v as i128)));
    let all_long = table
        .values(body, 1)
        .last()
        .is_some_and(|&m| m + 1 >= crate::measure::MEASURE_CAP);
    if !fits && !all_long {
        return Err(SolveError::Unsatisfiable {
            constraint: i,
            location: location(c, q.span),
            why: format!(
                "every input contains {}, and no {} has a length in {}..={}",
                grammar.display_symbol(q.symbol),
                grammar.display_symbol(q.symbol),
                lo,
                if hi == i128::MAX {
                    "∞".to_string()
                } else {
                    hi.to_string()
                }
            ),
        });
    }
    Ok(())
}

fn is_len_of(term: &Term, var: VarId) -> bool {
    matches!(term, Term::App(Func::StrLen, _, args) if matches!(&args[..], [Term::Var(v)] if *v == var))
}

fn flip(op: Func) -> Func {
    match op {
        Func::Lt => Func::Gt,
        Func::Le => Func::Ge,
        Func::Gt => Func::Lt,
        Func::Ge => Func::Le,
        other => other,
    }
}

/// Whether some input avoids `symbol` altogether: the start rule derives a finite
/// text without it (a fixpoint of productivity with `symbol` left out).
fn avoidable(grammar: &Grammar, symbol: SymbolId) -> bool {
    let mut ok = vec![false; grammar.expr_count()];
    loop {
        let mut changed = false;
        for id in grammar.expr_ids() {
            if ok[id.index()] {
                continue;
            }
            let now = match grammar.expr(id) {
                Expr::Literal(_) | Expr::Regex(_) => true,
                Expr::Ref(s) => *s != symbol && ok[grammar.rule(*s).body.index()],
                Expr::Alt(children) => children.iter().any(|c| ok[c.index()]),
                Expr::Seq(children) => children.iter().all(|c| ok[c.index()]),
                Expr::Repeat(rep) => rep.min == 0 || ok[rep.item.index()],
            };
            if now {
                ok[id.index()] = true;
                changed = true;
            }
        }
        if !changed {
            let root: ExprId = grammar.root();
            return ok[root.index()];
        }
    }
}
