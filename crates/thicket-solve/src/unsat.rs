//! What is refused before any search: constraints proved unsatisfiable, and atoms
//! outside what the solver handles (see the crate docs).

use crate::measure::Measure;
use crate::terms::{UNBOUNDED_ABOVE, applied_to, flip, has_var, interval, smt_name};
use crate::{SolveError, Solver};
use thicket_constraint::formula::{Connective, Domain, Formula};
use thicket_constraint::smt::{Func, Term, Value};
use thicket_constraint::{Constraint, VarId};
use thicket_grammar::{Expr, ExprId, Grammar, Span, SymbolId};

/// Functions whose atoms need an SMT solver: the repairs cannot aim at them (with the
/// `z3` feature, Z3 solves them: `crate::z3`).
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
    let mut bounds = Bounds::new();
    for (i, c) in solver.constraints().iter().enumerate() {
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
                    if let Some(func) = needs_smt(term).filter(|_| !cfg!(feature = "z3")) {
                        error = Some(unsupported(
                            c,
                            i,
                            *span,
                            format!(
                                "this atom uses `{}`, which needs an SMT solver: thicket \
                                 built with the `z3` feature (`--features z3`, with the \
                                 system libz3) solves it; `thicket check` can still decide it",
                                smt_name(func)
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
            top_level(solver, c, i, conjunct, &mut bounds)?;
        }
    }
    // Every instance of an unavoidable rule must meet all the length bounds given on
    // it, in whichever constraints.
    for (symbol, (lo, hi, i, location)) in bounds {
        length_bounds_fit(solver, symbol, lo, hi).map_err(|why| SolveError::Unsatisfiable {
            constraint: i,
            location,
            why,
        })?;
    }
    if let Some(found) = crate::contradiction::find(solver) {
        let c = &solver.constraints()[found.constraint];
        return Err(SolveError::Unsatisfiable {
            constraint: found.constraint,
            location: location(c, c.span),
            why: format!(
                "this constraint{} is false whatever the input: its atoms cannot be true \
                 and false as it needs at once (as in `A xor A`), or ask for a length or \
                 count no subtree has within the generation limits",
                if found.with_others {
                    " together with the ones before it"
                } else {
                    ""
                }
            ),
        });
    }
    Ok(())
}

/// Length bounds of top-level universals over each unavoidable rule: the interval, and
/// the constraint and place of the last one.
type Bounds = std::collections::BTreeMap<SymbolId, (i128, i128, usize, String)>;

fn length_bounds_fit(
    solver: &Solver<'_>,
    symbol: SymbolId,
    lo: i128,
    hi: i128,
) -> Result<(), String> {
    let grammar = solver.grammar;
    let table = solver.table(Measure::Length);
    let values = table.values(grammar.rule(symbol).body, 1);
    let fits = lo <= hi && values.iter().any(|&v| (lo..=hi).contains(&(v as i128)));
    // The table is exact below its cap; lengths past it are known only when none can
    // reach it, and none exceeds the byte limit.
    let (_, exact) = table.possible(grammar.rule(symbol).body, 1);
    let open_ended = lo <= hi
        && hi >= crate::measure::MEASURE_CAP as i128 - 1
        && !exact
        && lo <= i128::from(solver.config.generation.max_size);
    if fits || open_ended {
        return Ok(());
    }
    Err(format!(
        "every input contains {}, and none of its subtrees can have a length in {}..={}",
        grammar.display_symbol(symbol),
        lo,
        if hi >= UNBOUNDED_ABOVE {
            "∞".to_string()
        } else {
            hi.to_string()
        }
    ))
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

/// The first function of `term` that needs an SMT solver, if any.
pub(crate) fn needs_smt(term: &Term) -> Option<Func> {
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
    bounds: &mut Bounds,
) -> Result<(), SolveError> {
    let grammar = solver.grammar;
    if let Some((lo, hi)) = length_bounds(f, VarId::START) {
        // Bounds on the whole input: the start rule is in every input.
        let entry = bounds
            .entry(grammar.start())
            .or_insert((0, i128::MAX, i, location(c, c.span)));
        entry.0 = entry.0.max(lo);
        entry.1 = entry.1.min(hi);
    }
    let Formula::Quantifier(q) = f else {
        return Ok(());
    };
    let Domain::Within(outer) = q.domain else {
        return Ok(());
    };
    if outer.index() != 0 {
        return Ok(());
    }
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
    if q.universal
        && !avoidable(grammar, q.symbol)
        && let Some(span) = membership_impossible(solver, q.symbol, q.var, &q.body)
    {
        return Err(SolveError::Unsatisfiable {
            constraint: i,
            location: location(c, span),
            why: format!(
                "every input contains {}, and no string its rule derives satisfies this \
                 atom (the two regular languages do not meet)",
                grammar.display_symbol(q.symbol)
            ),
        });
    }
    let Some((lo, hi)) = length_bounds(&q.body, q.var) else {
        return Ok(());
    };
    if !q.universal || avoidable(grammar, q.symbol) {
        return Ok(());
    }
    let entry = bounds
        .entry(q.symbol)
        .or_insert((0, i128::MAX, i, String::new()));
    entry.0 = entry.0.max(lo);
    entry.1 = entry.1.min(hi);
    entry.2 = i;
    entry.3 = location(c, q.span);
    Ok(())
}

/// The interval `str.len(var)` is bounded to by the comparisons with constants in a
/// conjunction (of formulas or inside an SMT `and`), if there are any.
fn length_bounds(f: &Formula, var: VarId) -> Option<(i128, i128)> {
    let mut atoms = Vec::new();
    for conjunct in conjuncts(f) {
        if let Formula::Smt(term, _) = conjunct {
            smt_conjuncts(term, &mut atoms);
        }
    }
    let (mut lo, mut hi) = (0i128, i128::MAX);
    let mut bounded = false;
    for atom in atoms {
        let Term::App(op, _, args) = atom else {
            continue;
        };
        if args.len() != 2 {
            continue;
        }
        let (op, k) = match (&args[0], &args[1]) {
            (l, Term::Const(Value::Int(k))) if applied_to(l, Func::StrLen, var) => (*op, *k),
            (Term::Const(Value::Int(k)), r) if applied_to(r, Func::StrLen, var) => (flip(*op), *k),
            _ => continue,
        };
        bounded = true;
        if matches!(op, Func::Eq | Func::Lt | Func::Le | Func::Gt | Func::Ge) {
            let (l, h) = interval(op, k);
            lo = lo.max(l);
            hi = hi.min(h);
        }
    }
    bounded.then_some((lo, hi))
}

fn smt_conjuncts<'t>(term: &'t Term, out: &mut Vec<&'t Term>) {
    match term {
        Term::App(Func::And, _, args) => args.iter().for_each(|a| smt_conjuncts(a, out)),
        other => out.push(other),
    }
}

/// Whether some input avoids `symbol` altogether: the start rule derives a finite
/// text without it (a fixpoint of productivity with `symbol` left out).
/// A conjunct of `body` that is a membership atom on `var` (`str.in_re` with a
/// constant regex, prefix / suffix / contains with a constant needle, or its negation)
/// no string of `symbol`'s language satisfies, where that language is regular
/// (`language.rs`) and the emptiness of the intersection is decided.
fn membership_impossible(
    solver: &Solver<'_>,
    symbol: SymbolId,
    var: VarId,
    body: &Formula,
) -> Option<Span> {
    let language = solver.language(symbol)?;
    conjuncts(body).into_iter().find_map(|f| {
        let (term, span, want) = match f {
            Formula::Smt(term, span) => (term, *span, true),
            Formula::Not(inner) => match &**inner {
                Formula::Smt(term, span) => (term, *span, false),
                _ => return None,
            },
            _ => return None,
        };
        let Term::App(func, _, args) = term else {
            return None;
        };
        let (subject, other) = match (func, args.as_slice()) {
            (Func::StrPrefixOf | Func::StrSuffixOf, [a, b]) => (b, a),
            (Func::StrInRe | Func::StrContains, [a, b]) => (a, b),
            _ => return None,
        };
        if *subject != Term::Var(var) || has_var(other) {
            return None;
        }
        let other = thicket_constraint::smt::eval(other, &|_| None).ok()?;
        let wanted = crate::language::membership(*func, &other, want)?;
        let both = thicket_constraint::regex::Regex::inter(language.clone(), wanted);
        (both.is_empty(crate::language::EMPTINESS_STATES) == Some(true)).then_some(span)
    })
}

pub(crate) fn avoidable(grammar: &Grammar, symbol: SymbolId) -> bool {
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
