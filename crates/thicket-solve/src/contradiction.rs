//! Constraints that contradict themselves, found before any search: each constraint
//! (and all of them together) read as a propositional formula over its atoms, and
//! every assignment of truth values to the atoms tried (up to [`MAX_ATOMS`] of them),
//! so that `A xor A`, `A and not A` or `-c A -c 'not A'` is reported at once instead
//! of being searched for until the budget or `--time` runs out.
//!
//! Atoms written alike are one proposition: the same text up to the names of the
//! variables quantifiers bind (`(forall <k> a: P(a)) xor (forall <k> b: P(b))`). A
//! few atoms have a meaning the assignments must respect:
//!
//! - `str.len(x) op k` and `count(x, "<n>", k)` restrict one measure of `x` to an
//!   interval (or, false, to its complement); the measures `x`'s rule can take within
//!   the generation limits (`measure.rs`, exact below its cap, and no length above
//!   `max_size`) must meet all of them. This is also what makes a lone atom no input can
//!   satisfy (`exists <string> s: str.len(s) > 20000000` with a 16 MiB `max_size`)
//!   false whatever the input.
//! - `level("GT", "<s>", a, b)` and `level("LT", "<s>", a, b)` (the first with the
//!   nodes swapped) cannot both hold: each says one node is nested in a `<s>` the
//!   other is not, measured from the same scopes.
//!
//! A quantifier whose body cannot hold is false when existential, and when universal
//! where an instance always exists (no match expression; a rule every input contains,
//! over the whole input, or the rule of the subtree it ranges within, which is its own
//! instance); one whose body always holds is true when universal, and when existential
//! where an instance always exists. Any other quantifier is an atom.

use crate::Solver;
use crate::bits::Bits;
use crate::measure::{MEASURE_CAP, Measure};
use crate::terms::{UNBOUNDED_ABOVE, flip, interval, negate};
use std::collections::HashMap;
use std::rc::Rc;
use thicket_constraint::formula::{Connective, Domain, PredArg, Quantifier};
use thicket_constraint::matching::Atom;
use thicket_constraint::smt::{Func, Term, Value};
use thicket_constraint::{Constraint, Formula, VarId, VarType};
use thicket_grammar::SymbolId;

/// Most distinct atoms whose assignments are all tried (2^12 = 4,096 evaluations).
const MAX_ATOMS: usize = 12;

/// A formula over atoms (indices into [`Reader::atoms`]).
#[derive(Clone, Debug)]
enum Prop {
    Const(bool),
    Atom(usize),
    Not(Box<Prop>),
    Bin(Connective, Box<Prop>, Box<Prop>),
}

impl Prop {
    fn not(p: Prop) -> Prop {
        match p {
            Prop::Const(b) => Prop::Const(!b),
            Prop::Not(inner) => *inner,
            other => Prop::Not(Box::new(other)),
        }
    }

    fn bin(c: Connective, a: Prop, b: Prop) -> Prop {
        use Connective::*;
        match (c, &a, &b) {
            (And, Prop::Const(false), _) | (And, _, Prop::Const(false)) => Prop::Const(false),
            (And, Prop::Const(true), _) => b,
            (And, _, Prop::Const(true)) => a,
            (Or, Prop::Const(true), _) | (Or, _, Prop::Const(true)) => Prop::Const(true),
            (Or, Prop::Const(false), _) => b,
            (Or, _, Prop::Const(false)) => a,
            (Implies, Prop::Const(false), _) | (Implies, _, Prop::Const(true)) => Prop::Const(true),
            (Implies, Prop::Const(true), _) => b,
            (_, Prop::Const(x), Prop::Const(y)) => Prop::Const(match c {
                Xor => x != y,
                Iff => x == y,
                _ => unreachable!("and, or and implies are folded above"),
            }),
            _ => Prop::Bin(c, Box::new(a), Box::new(b)),
        }
    }

    fn eval(&self, values: &[bool]) -> bool {
        match self {
            Prop::Const(b) => *b,
            Prop::Atom(i) => values[*i],
            Prop::Not(p) => !p.eval(values),
            Prop::Bin(c, a, b) => {
                let (a, b) = (a.eval(values), b.eval(values));
                match c {
                    Connective::And => a && b,
                    Connective::Or => a || b,
                    Connective::Xor => a != b,
                    Connective::Implies => !a || b,
                    Connective::Iff => a == b,
                }
            }
        }
    }

    fn atoms(&self, out: &mut Vec<usize>) {
        match self {
            Prop::Const(_) => {}
            Prop::Atom(i) => {
                if !out.contains(i) {
                    out.push(*i);
                }
            }
            Prop::Not(p) => p.atoms(out),
            Prop::Bin(_, a, b) => {
                a.atoms(out);
                b.atoms(out);
            }
        }
    }
}

/// A number an atom says something about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Quantity {
    /// A measure of a subtree (`str.len`, `count`).
    Measure(Measure),
    /// `str.to_int` of a subtree.
    Number,
}

/// The values a quantity of a rule's subtrees can take.
enum Possible {
    /// Those below the measure's cap, and the bound of those that may lie past it.
    Table {
        below_cap: Box<Bits>,
        beyond: Option<i128>,
    },
    /// Every value from this one on (`str.to_int` is -1 on a text that is no number).
    From(i128),
}

/// What an atom says, where it says something the assignments must respect.
enum Meaning {
    Opaque,
    /// A quantity of the subtree named `var` lies in `lo..=hi`.
    Quantity {
        var: String,
        quantity: Quantity,
        possible: Rc<Possible>,
        lo: i128,
        hi: i128,
    },
    /// `a` is nested in a `<scope>` that `b` is not, from the same scopes
    /// (`level("GT", scope, a, b)`; `LT` is this with the nodes swapped).
    Deeper {
        scope: SymbolId,
        a: String,
        b: String,
    },
}

/// Reads constraints into [`Prop`]s over shared atoms.
struct Reader<'s, 'g> {
    solver: &'s Solver<'g>,
    /// Each atom's text (its identity) and meaning.
    atoms: Vec<(String, Meaning)>,
    /// The variables bound by the quantifiers around the part being read, outermost
    /// first: their names in atom texts are their positions.
    bound: Vec<VarId>,
    /// The values of each quantity of each rule, looked up once.
    possible: HashMap<(SymbolId, Quantity), Rc<Possible>>,
}

/// A constraint found to be a contradiction.
pub(crate) struct Contradiction {
    /// Its index.
    pub(crate) constraint: usize,
    /// Whether it contradicts only the constraints before it, not itself.
    pub(crate) with_others: bool,
}

/// The first constraint that is a contradiction, alone or with those before it.
pub(crate) fn find(solver: &Solver<'_>) -> Option<Contradiction> {
    let mut reader = Reader {
        solver,
        atoms: Vec::new(),
        bound: Vec::new(),
        possible: HashMap::new(),
    };
    let mut all = Prop::Const(true);
    for (i, c) in solver.constraints().iter().enumerate() {
        let prop = reader.formula(c, &c.formula);
        if reader.satisfiable(&prop) == Some(false) {
            return Some(Contradiction {
                constraint: i,
                with_others: false,
            });
        }
        all = Prop::bin(Connective::And, all, prop);
        if i > 0 && reader.satisfiable(&all) == Some(false) {
            return Some(Contradiction {
                constraint: i,
                with_others: true,
            });
        }
    }
    None
}

/// An interval `lo..=hi` a quantity is said to lie in (`true`) or not.
type Said = (i128, i128, bool);

/// Whether a quantity whose values are `possible` can lie in every interval said to
/// hold and in none said not to.
fn meets(possible: &Possible, said: &[Said]) -> bool {
    let (mut lo, mut hi) = (-UNBOUNDED_ABOVE, UNBOUNDED_ABOVE);
    let mut excluded: Vec<(i128, i128)> = Vec::new();
    for &(l, h, holds) in said {
        if holds {
            lo = lo.max(l);
            hi = hi.min(h);
        } else {
            excluded.push((l, h));
        }
    }
    let allowed = |v: i128| !excluded.iter().any(|&(l, h)| (l..=h).contains(&v));
    // A value in `from..=to` not excluded: the exclusions are intervals, so one is
    // found among their ends plus one, if any.
    let any_in = |from: i128, to: i128| {
        from <= to
            && std::iter::once(from)
                .chain(excluded.iter().map(|&(_, h)| h.saturating_add(1)))
                .any(|v| (from..=to).contains(&v) && allowed(v))
    };
    match possible {
        // A number too large for the evaluator makes every comparison false.
        Possible::From(_) if said.iter().all(|&(_, _, holds)| !holds) => true,
        Possible::From(floor) => any_in(lo.max(*floor), hi),
        Possible::Table { below_cap, beyond } => {
            let cap = MEASURE_CAP as i128;
            let low = lo.max(0);
            (low..=hi.min(cap - 1)).any(|v| below_cap.contains(v as usize) && allowed(v))
                || beyond.is_some_and(|limit| any_in(low.max(cap), hi.min(limit)))
        }
    }
}

impl Reader<'_, '_> {
    /// Whether some assignment of the atoms of `p` that respects their meanings makes
    /// it true; `None` if it has too many atoms to try them all.
    fn satisfiable(&self, p: &Prop) -> Option<bool> {
        let mut atoms = Vec::new();
        p.atoms(&mut atoms);
        if atoms.len() > MAX_ATOMS {
            return None;
        }
        let mut values = vec![false; self.atoms.len()];
        for assignment in 0u32..(1 << atoms.len()) {
            for (bit, &atom) in atoms.iter().enumerate() {
                values[atom] = assignment & (1 << bit) != 0;
            }
            if p.eval(&values) && self.consistent(&atoms, &values) {
                return Some(true);
            }
        }
        Some(false)
    }

    /// Whether the atoms' meanings allow these truth values together.
    fn consistent(&self, atoms: &[usize], values: &[bool]) -> bool {
        // Deeper(a, b) and Deeper(b, a) in the same scope cannot both hold.
        for (i, &x) in atoms.iter().enumerate() {
            let Meaning::Deeper { scope, a, b } = &self.atoms[x].1 else {
                continue;
            };
            if !values[x] {
                continue;
            }
            let swapped = atoms[i + 1..].iter().any(|&y| {
                values[y]
                    && matches!(&self.atoms[y].1,
                        Meaning::Deeper { scope: s, a: c, b: d } if s == scope && c == b && d == a)
            });
            if swapped {
                return false;
            }
        }
        // Every quantity of one subtree must meet all the intervals said of it.
        let mut groups: HashMap<(&str, Quantity), (&Possible, Vec<Said>)> = HashMap::new();
        for &x in atoms {
            if let Meaning::Quantity {
                var,
                quantity,
                possible,
                lo,
                hi,
            } = &self.atoms[x].1
            {
                groups
                    .entry((var.as_str(), *quantity))
                    .or_insert_with(|| (possible.as_ref(), Vec::new()))
                    .1
                    .push((*lo, *hi, values[x]));
            }
        }
        groups
            .into_values()
            .all(|(possible, said)| meets(possible, &said))
    }

    /// What a rule's subtrees can have of a quantity, looked up once.
    fn possible(&mut self, symbol: SymbolId, quantity: Quantity) -> Rc<Possible> {
        let solver = self.solver;
        self.possible
            .entry((symbol, quantity))
            .or_insert_with(|| {
                Rc::new(match quantity {
                    Quantity::Number => Possible::From(-1),
                    Quantity::Measure(measure) => {
                        let (below_cap, beyond) = solver.measure_values(symbol, measure);
                        Possible::Table {
                            below_cap: Box::new(below_cap),
                            beyond,
                        }
                    }
                })
            })
            .clone()
    }

    /// The atom `quantity(var) in lo..=hi`, written `text`.
    fn quantity(
        &mut self,
        c: &Constraint,
        var: VarId,
        quantity: Quantity,
        (lo, hi): (i128, i128),
        text: String,
    ) -> Prop {
        let Some(symbol) = symbol_of(c, var) else {
            return self.atom(text, Meaning::Opaque);
        };
        // Variables are named by position: the rule tells apart atoms of quantifiers
        // over different rules, whose values differ.
        let text = format!("{text} of <{}>", symbol.index());
        let possible = self.possible(symbol, quantity);
        let var = self.name(var);
        self.atom(
            text,
            Meaning::Quantity {
                var,
                quantity,
                possible,
                lo,
                hi,
            },
        )
    }

    fn atom(&mut self, text: String, meaning: Meaning) -> Prop {
        let index = match self.atoms.iter().position(|(t, _)| *t == text) {
            Some(i) => i,
            None => {
                self.atoms.push((text, meaning));
                self.atoms.len() - 1
            }
        };
        Prop::Atom(index)
    }

    /// A variable's name in atom texts: its position among the bound ones, or its id.
    fn name(&self, v: VarId) -> String {
        match self.bound.iter().rposition(|&b| b == v) {
            Some(i) => format!("#{i}"),
            None => format!("${}", v.index()),
        }
    }

    fn formula(&mut self, c: &Constraint, f: &Formula) -> Prop {
        match f {
            Formula::Smt(term, _) => self.term(c, term),
            Formula::Predicate(call) => {
                let text = self.text(f);
                match (call.predicate.name(), call.args.as_slice()) {
                    ("count", [PredArg::Var(t), PredArg::Symbol(needle), k]) => {
                        let k = match k {
                            PredArg::Int(k) => Some(*k),
                            PredArg::Text(k) => k.parse().ok(),
                            _ => None,
                        };
                        match k {
                            Some(k) => {
                                let quantity = Quantity::Measure(Measure::Count(*needle));
                                self.quantity(c, *t, quantity, (k, k), text)
                            }
                            None => self.atom(text, Meaning::Opaque),
                        }
                    }
                    (
                        "level",
                        [
                            PredArg::Text(relation),
                            PredArg::Symbol(scope),
                            PredArg::Var(a),
                            PredArg::Var(b),
                        ],
                    ) if relation == "GT" || relation == "LT" => {
                        let (a, b) = if relation == "GT" { (a, b) } else { (b, a) };
                        if a == b {
                            // A node is never nested deeper than itself.
                            return Prop::Const(false);
                        }
                        let (a, b) = (self.name(*a), self.name(*b));
                        let text = format!("level(GT, <{}>, {a}, {b})", scope.index());
                        self.atom(
                            text,
                            Meaning::Deeper {
                                scope: *scope,
                                a,
                                b,
                            },
                        )
                    }
                    _ => self.atom(text, Meaning::Opaque),
                }
            }
            Formula::Not(inner) => Prop::not(self.formula(c, inner)),
            Formula::Binary(op, a, b) => {
                let a = self.formula(c, a);
                let b = self.formula(c, b);
                Prop::bin(*op, a, b)
            }
            Formula::Quantifier(q) => self.quantifier(c, q),
            Formula::IntQuantifier {
                universal, body, ..
            } => {
                let text = self.text(f);
                let Formula::IntQuantifier { var, .. } = f else {
                    unreachable!("matched above")
                };
                self.bound.push(*var);
                let inner = self.formula(c, body);
                self.bound.pop();
                match (universal, self.satisfiable(&inner)) {
                    (false, Some(false)) => Prop::Const(false),
                    _ => self.atom(text, Meaning::Opaque),
                }
            }
        }
    }

    fn quantifier(&mut self, c: &Constraint, q: &Quantifier) -> Prop {
        let text = self.quantifier_text(q);
        let mark = self.bound.len();
        self.bind(q);
        let body = self.formula(c, &q.body);
        let holds = self.satisfiable(&body);
        let fails = self.satisfiable(&Prop::not(body));
        self.bound.truncate(mark);
        // Whether there is always an instance (with no pattern to match): a rule every
        // input contains, over the whole input; or, within a subtree of the same rule,
        // that subtree itself.
        let instance_always = q.mexpr.is_none()
            && match q.domain {
                Domain::Within(VarId::START) => {
                    !crate::unsat::avoidable(self.solver.grammar, q.symbol)
                }
                Domain::Within(outer) => symbol_of(c, outer) == Some(q.symbol),
                _ => false,
            };
        match (q.universal, holds, fails) {
            (false, Some(false), _) => Prop::Const(false),
            (true, _, Some(false)) => Prop::Const(true),
            (true, Some(false), _) if instance_always => Prop::Const(false),
            (false, _, Some(false)) if instance_always => Prop::Const(true),
            _ => self.atom(text, Meaning::Opaque),
        }
    }

    /// Binds the variables of `q` (its own and its pattern's).
    fn bind(&mut self, q: &Quantifier) {
        self.bound.push(q.var);
        if let Some(m) = &q.mexpr {
            self.bound.extend(m.binders.iter().copied());
        }
    }

    /// An SMT atom: a comparison of a quantity with a constant where it is one, its
    /// Boolean structure where it has one, else an opaque atom.
    fn term(&mut self, c: &Constraint, term: &Term) -> Prop {
        if !crate::terms::has_var(term)
            && let Ok(Value::Bool(b)) = thicket_constraint::smt::eval(term, &|_| None)
        {
            return Prop::Const(b);
        }
        match term {
            // A term whose evaluation fails is false as a whole, negations included:
            // its connectives are read as propositions only where nothing can fail.
            Term::App(Func::Not, _, args) if args.len() == 1 && !may_fail(term) => {
                return Prop::not(self.term(c, &args[0]));
            }
            Term::App(op @ (Func::And | Func::Or), _, args)
                if !args.is_empty() && !may_fail(term) =>
            {
                let connective = if *op == Func::And {
                    Connective::And
                } else {
                    Connective::Or
                };
                let mut parts = args.iter().map(|a| self.term(c, a)).collect::<Vec<_>>();
                let first = parts.remove(0);
                return parts
                    .into_iter()
                    .fold(first, |acc, p| Prop::bin(connective, acc, p));
            }
            Term::App(op @ (Func::Eq | Func::Lt | Func::Le | Func::Gt | Func::Ge), _, args)
                if args.len() == 2 =>
            {
                // `str.len(x)` or `str.to_int(x)`.
                let measured = |t: &Term| match t {
                    Term::App(f @ (Func::StrLen | Func::StrToInt), _, inner) => {
                        match inner.as_slice() {
                            [Term::Var(v)] => Some((*v, *f)),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let constant = |t: &Term| match t {
                    Term::Const(Value::Int(k)) => Some(*k),
                    _ => None,
                };
                let found = match (measured(&args[0]), constant(&args[1])) {
                    (Some(m), Some(k)) => Some((m, *op, k)),
                    _ => match (constant(&args[0]), measured(&args[1])) {
                        (Some(k), Some(m)) => Some((m, flip(*op), k)),
                        _ => None,
                    },
                };
                if let Some(((v, f), op, k)) = found {
                    // `<` and friends as `>=` and friends negated, so that `x < 3` and
                    // `x >= 3` are one atom.
                    let (op, negated) = match op {
                        Func::Lt | Func::Le => (negate(op), true),
                        other => (other, false),
                    };
                    let quantity = match f {
                        Func::StrLen => Quantity::Measure(Measure::Length),
                        _ => Quantity::Number,
                    };
                    let text = format!("{f:?}({}) {op:?} {k}", self.name(v));
                    let atom = self.quantity(c, v, quantity, interval(op, k), text);
                    return if negated { Prop::not(atom) } else { atom };
                }
            }
            _ => {}
        }
        let text = self.term_text(term);
        self.atom(text, Meaning::Opaque)
    }

    fn arg(&self, a: &PredArg) -> String {
        match a {
            PredArg::Var(v) => self.name(*v),
            PredArg::Text(t) => format!("{t:?}"),
            PredArg::Int(i) => i.to_string(),
            PredArg::Symbol(s) => format!("<{}>", s.index()),
        }
    }

    fn term_text(&self, term: &Term) -> String {
        match term {
            Term::Const(v) => format!("{v:?}"),
            Term::Var(v) => self.name(*v),
            Term::App(f, indices, args) => format!(
                "({f:?}{indices:?} {})",
                args.iter()
                    .map(|a| self.term_text(a))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        }
    }

    /// A quantifier's head and body as text, variables named by position.
    fn quantifier_text(&mut self, q: &Quantifier) -> String {
        let domain = match q.domain {
            Domain::Within(v) => format!("in {}", self.name(v)),
            Domain::Child { parent, index } => format!("child {index} of {}", self.name(parent)),
            Domain::Children { parent } => format!("children of {}", self.name(parent)),
        };
        let mark = self.bound.len();
        self.bind(q);
        let pattern = q.mexpr.as_ref().map(|m| {
            m.variants
                .iter()
                .map(|variant| {
                    variant
                        .iter()
                        .map(|atom| match atom {
                            Atom::Byte(b) => format!("{b:02x}"),
                            Atom::Slot(s, v) => format!(
                                "<{}{}>",
                                s.index(),
                                v.map(|v| format!(" {}", self.name(v))).unwrap_or_default()
                            ),
                        })
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("|")
        });
        let body = self.text(&q.body);
        self.bound.truncate(mark);
        format!(
            "({} <{}> {domain} {} [{body}])",
            if q.universal { "forall" } else { "exists" },
            q.symbol.index(),
            pattern.unwrap_or_default(),
        )
    }

    /// The text of a formula, variables named by position: an atom's identity.
    fn text(&mut self, f: &Formula) -> String {
        match f {
            Formula::Smt(term, _) => self.term_text(term),
            Formula::Predicate(call) => format!(
                "{}({})",
                call.predicate.name(),
                call.args
                    .iter()
                    .map(|a| self.arg(a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Formula::Not(inner) => format!("(not {})", self.text(inner)),
            Formula::Binary(op, a, b) => format!("({op:?} {} {})", self.text(a), self.text(b)),
            Formula::Quantifier(q) => self.quantifier_text(q),
            Formula::IntQuantifier {
                universal,
                var,
                body,
                ..
            } => {
                self.bound.push(*var);
                let body = self.text(body);
                self.bound.pop();
                format!("(int {universal} [{body}])")
            }
        }
    }
}

/// The rule of a tree variable.
fn symbol_of(c: &Constraint, v: VarId) -> Option<SymbolId> {
    match c.vars.get(v.index())?.ty {
        VarType::Tree(s) => Some(s),
        VarType::Int => None,
    }
}

/// Whether evaluating `term` can fail (an overflow, a division by zero), which makes
/// the atom false whatever its connectives say.
fn may_fail(term: &Term) -> bool {
    match term {
        Term::App(f, _, args) => {
            matches!(
                f,
                Func::StrToInt
                    | Func::StrToIntBase
                    | Func::Add
                    | Func::Sub
                    | Func::Mul
                    | Func::Div
                    | Func::Mod
                    | Func::Neg
                    | Func::Abs
            ) || args.iter().any(may_fail)
        }
        Term::Const(_) | Term::Var(_) => false,
    }
}
