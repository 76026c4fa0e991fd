//! Core constraints: what a [`crate::Constraint`] is after resolution against a grammar.
//! Variables are typed ids, nonterminals are [`SymbolId`]s, simplified syntax (free
//! nonterminals, XPath, omitted names, `implies`) has been translated, and every
//! predicate and function is known. The checker evaluates this form; the solver will
//! transform it.

use crate::matching::{Atom, MatchExpr};
use crate::predicates::Predicate;
use crate::smt::Term;
use std::sync::Arc;
use thicket_grammar::{Span, SymbolId};

/// A variable of a constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub(crate) u32);

impl VarId {
    /// The constant bound to the whole input (every constraint's first variable).
    pub const START: VarId = VarId(0);

    /// Position in [`crate::Constraint::vars`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a variable stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// A subtree whose root is this nonterminal.
    Tree(SymbolId),
    /// A natural number (ISLa's `int`), written as a string of digits in SMT atoms.
    Int,
}

/// A variable's declaration.
#[derive(Clone, Debug)]
pub struct Var {
    /// Its name as written, or a generated one (`<id>` for a free nonterminal,
    /// `<a>.<b>` for an XPath step, `_3` for an omitted name).
    pub name: String,
    /// Its type.
    pub ty: VarType,
    /// Where it is introduced.
    pub span: Span,
}

/// The binary connectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connective {
    /// Both hold.
    And,
    /// At least one holds.
    Or,
    /// Exactly one holds.
    Xor,
    /// The first does not hold, or the second does.
    Implies,
    /// Both hold or neither does.
    Iff,
}

/// The subtrees a quantifier ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Every subtree of the variable's tree, the tree itself included (`in x`).
    Within(VarId),
    /// The `index`-th (1-based) direct child of the given type (XPath `x.<c>[i]`); no
    /// subtree if there is none, so that a universal over it holds vacuously.
    Child {
        /// The parent.
        parent: VarId,
        /// 1-based position among the parent's children of the quantifier's type.
        index: u32,
    },
    /// Every direct child of the quantifier's type (Fandango's `x.<c>`), in order.
    Children {
        /// The parent.
        parent: VarId,
    },
}

impl Domain {
    /// The variable whose tree the domain lies in.
    pub fn outer(self) -> VarId {
        match self {
            Domain::Within(v)
            | Domain::Child { parent: v, .. }
            | Domain::Children { parent: v } => v,
        }
    }
}

/// `forall`/`exists` over subtrees.
#[derive(Clone, Debug)]
pub struct Quantifier {
    /// `forall` (true) or `exists`.
    pub universal: bool,
    /// The bound variable.
    pub var: VarId,
    /// Its nonterminal.
    pub symbol: SymbolId,
    /// What it ranges over.
    pub domain: Domain,
    /// Subtrees must match this (binding its variables) to count.
    pub mexpr: Option<MatchExpr>,
    /// The body.
    pub body: Formula,
    /// Where the quantifier is written (its head).
    pub span: Span,
    /// Whether only the outermost instances need evaluating: an instance nested in
    /// another instance of the same quantifier run cannot be false when the enclosing
    /// one is true (see [`Quantifier::nested_instances_implied`]). Set by resolution.
    pub outermost_only: bool,
    /// Whether an instance's truth depends on the instance's subtree alone (see
    /// [`Quantifier::instance_local`]). Set by resolution.
    pub local: bool,
    /// Set (by resolution) when this quantifier and its body say that its instances'
    /// texts are pairwise distinct (see [`Quantifier::pairwise_distinct`]): then one
    /// pass with a set decides it instead of a pass per instance.
    pub distinct: Option<Distinct>,
}

/// Which text must differ between two instances of a pairwise-distinct quantifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinct {
    /// The instance's own text.
    Instance,
    /// The text its match expression's binder at this index binds.
    Binder(usize),
}

impl Quantifier {
    /// Whether `forall x: body` needs only its outermost instances: true when the
    /// quantifier is universal without a match expression and `x` occurs in `body` only
    /// as the `in x` domain of universal quantifiers in positive position (or
    /// existential ones in negative position). Then `body` is antitone in the subtree
    /// `x` ranges over: for a `y` inside `x`, `body(x)` implies `body(y)`, since every
    /// `in y` domain is part of the `in x` one. ISLa's no-duplicate-attribute
    /// constraint (`forall attr in start: forall a in attr: forall b in attr: ...`) is
    /// such a formula, and the outermost attribute of a tag holds all pairs the nested
    /// ones do: evaluating only it is quadratic in a tag's attributes instead of cubic.
    pub fn nested_instances_implied(
        universal: bool,
        var: VarId,
        mexpr: Option<&MatchExpr>,
        body: &Formula,
    ) -> bool {
        universal && mexpr.is_none() && only_in_universal_domains(body, var, true)
    }
}

impl Quantifier {
    /// Whether each instance of `q var ... : body` is true or false by the instance's
    /// subtree alone: every variable the body reads is `var`, one the match expression
    /// binds (inside the instance), or one bound inside the body by a quantifier ranging
    /// within those (never `start`, nor a variable bound outside), and every predicate
    /// it calls is local ([`crate::Predicate::is_local`]). An instance that held then
    /// holds in any tree where its subtree is the same, wherever the subtree moved: an
    /// evaluator that carries verdicts from tree to edited tree need not visit it again
    /// ([`crate::SubtreeCache`]). Tag balance and no duplicate attribute are local;
    /// declared-before-use (`exists ... in start`) is not.
    pub fn instance_local(var: VarId, mexpr: Option<&MatchExpr>, body: &Formula) -> bool {
        let mut bound: Vec<VarId> = std::iter::once(var)
            .chain(mexpr.iter().flat_map(|m| m.binders.iter().copied()))
            .collect();
        reads_only(body, &mut bound)
    }
}

impl Quantifier {
    /// Recognises ISLa's "no two the same" idiom: `forall <a> x="P" in D: forall <a>
    /// y="P" in D: B` where both quantifiers range over the same domain with the same
    /// pattern `P` (up to the names it binds), and `B` is built from
    /// `same_position(x, y)` (or `different_position`) and the equality of the two
    /// instances' texts (or of the texts of the same binder of `P`) so that, at
    /// different positions, `B` says the texts differ, and at the same position `B`
    /// holds: `not same_position(x, y) implies not (= i j)`, `same_position(x, y) xor
    /// not (= i j)`, ... Then the outer quantifier holds exactly when no two instances
    /// at different nodes have the same text (an instance node with several matches is
    /// evaluated the general way). ISLa's no-duplicate-attribute and Scriptsize-C's
    /// no-redefinition constraints have this shape; the general evaluation is quadratic
    /// in the instances.
    pub fn pairwise_distinct(
        universal: bool,
        var: VarId,
        domain: Domain,
        symbol: SymbolId,
        mexpr: Option<&MatchExpr>,
        body: &Formula,
    ) -> Option<Distinct> {
        let Formula::Quantifier(inner) = body else {
            return None;
        };
        if !universal
            || !inner.universal
            || inner.domain != domain
            || inner.symbol != symbol
            || domain.outer() == var
        {
            return None;
        }
        // The same pattern, binder k of one standing for binder k of the other.
        let texts: Vec<(VarId, VarId, Distinct)> = match (mexpr, inner.mexpr.as_ref()) {
            (None, None) => vec![(var, inner.var, Distinct::Instance)],
            (Some(m), Some(n)) => {
                let same_atoms = |a: &Atom, b: &Atom| match (a, b) {
                    (Atom::Byte(x), Atom::Byte(y)) => x == y,
                    (Atom::Slot(s, u), Atom::Slot(t, w)) => {
                        let index = |v: &Option<VarId>, binders: &[VarId]| {
                            v.map(|v| binders.iter().position(|&b| b == v))
                        };
                        s == t && index(u, &m.binders) == index(w, &n.binders)
                    }
                    _ => false,
                };
                let same = m.variants.len() == n.variants.len()
                    && m.variants.iter().zip(&n.variants).all(|(a, b)| {
                        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_atoms(x, y))
                    });
                if !same || m.binders.len() != n.binders.len() {
                    return None;
                }
                std::iter::once((var, inner.var, Distinct::Instance))
                    .chain(
                        m.binders
                            .iter()
                            .zip(&n.binders)
                            .enumerate()
                            .map(|(k, (&a, &b))| (a, b, Distinct::Binder(k))),
                    )
                    .collect()
            }
            _ => return None,
        };
        // Which texts the body compares, and whether it says what the idiom says.
        let mut compared = None;
        let pair = |a: VarId, b: VarId| (a, b) == (var, inner.var) || (b, a) == (var, inner.var);
        let says = |same: bool, equal: bool, compared: &mut Option<Distinct>| {
            distinct_truth(&inner.body, same, equal, &pair, &texts, compared)
        };
        let idiom = says(false, true, &mut compared) == Some(false)
            && says(false, false, &mut compared) == Some(true)
            && says(true, true, &mut compared) == Some(true);
        idiom.then_some(compared?)
    }
}

/// The truth of `f` when its only atoms are the position test of `pair` (same or
/// different position: `same`) and one text equality among `texts` (`equal`); `None`
/// if it has another atom or compares two different kinds of text. `compared` gets the
/// texts compared.
fn distinct_truth(
    f: &Formula,
    same: bool,
    equal: bool,
    pair: &impl Fn(VarId, VarId) -> bool,
    texts: &[(VarId, VarId, Distinct)],
    compared: &mut Option<Distinct>,
) -> Option<bool> {
    let recurse = |g: &Formula, compared: &mut Option<Distinct>| {
        distinct_truth(g, same, equal, pair, texts, compared)
    };
    match f {
        Formula::Predicate(call) => {
            let [PredArg::Var(a), PredArg::Var(b)] = call.args.as_slice() else {
                return None;
            };
            if !pair(*a, *b) {
                return None;
            }
            match call.predicate.name() {
                "same_position" => Some(same),
                "different_position" => Some(!same),
                _ => None,
            }
        }
        Formula::Smt(crate::smt::Term::App(crate::smt::Func::Eq, _, args), _) => {
            let [crate::smt::Term::Var(a), crate::smt::Term::Var(b)] = args.as_slice() else {
                return None;
            };
            let &(_, _, which) = texts
                .iter()
                .find(|&&(x, y, _)| (x, y) == (*a, *b) || (y, x) == (*a, *b))?;
            if compared.is_some_and(|c| c != which) {
                return None;
            }
            *compared = Some(which);
            Some(equal)
        }
        Formula::Not(inner) => recurse(inner, compared).map(|v| !v),
        Formula::Binary(c, a, b) => {
            let (a, b) = (recurse(a, compared)?, recurse(b, compared)?);
            Some(match c {
                Connective::And => a && b,
                Connective::Or => a || b,
                Connective::Xor => a != b,
                Connective::Implies => !a || b,
                Connective::Iff => a == b,
            })
        }
        _ => None,
    }
}

/// Whether `f` reads only variables of `bound` and those it binds itself within them,
/// and calls only local predicates.
fn reads_only(f: &Formula, bound: &mut Vec<VarId>) -> bool {
    match f {
        Formula::Smt(term, _) => {
            let mut ok = true;
            term.for_each_var(&mut |v| ok &= bound.contains(&v));
            ok
        }
        Formula::Predicate(call) => {
            call.predicate.is_local()
                && call.args.iter().all(|a| match a {
                    PredArg::Var(v) => bound.contains(v),
                    _ => true,
                })
        }
        Formula::Not(inner) => reads_only(inner, bound),
        Formula::Binary(_, a, b) => reads_only(a, bound) && reads_only(b, bound),
        Formula::Quantifier(q) => {
            if !bound.contains(&q.domain.outer()) {
                return false;
            }
            let mark = bound.len();
            bound.push(q.var);
            bound.extend(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()));
            let ok = reads_only(&q.body, bound);
            bound.truncate(mark);
            ok
        }
        Formula::IntQuantifier { var, body, .. } => {
            bound.push(*var);
            let ok = reads_only(body, bound);
            bound.pop();
            ok
        }
    }
}

/// Whether `var` occurs in `f` only as the `in var` domain of quantifiers that are
/// universal where `f` is in positive position (`positive`), existential where in
/// negative.
fn only_in_universal_domains(f: &Formula, var: VarId, positive: bool) -> bool {
    match f {
        Formula::Smt(term, _) => !term.mentions(var),
        Formula::Predicate(call) => !call.args.contains(&PredArg::Var(var)),
        Formula::Not(inner) => only_in_universal_domains(inner, var, !positive),
        Formula::Binary(c, a, b) => {
            let first = match c {
                Connective::And | Connective::Or => positive,
                Connective::Implies => !positive,
                // Both polarities at once: `var` must not occur at all.
                Connective::Xor | Connective::Iff => {
                    return [a, b].iter().all(|g| {
                        only_in_universal_domains(g, var, true)
                            && only_in_universal_domains(g, var, false)
                    });
                }
            };
            only_in_universal_domains(a, var, first) && only_in_universal_domains(b, var, positive)
        }
        Formula::Quantifier(q) => {
            let domain_ok = match q.domain {
                Domain::Within(outer) => outer != var || q.universal == positive,
                Domain::Child { parent, .. } | Domain::Children { parent } => parent != var,
            };
            domain_ok && only_in_universal_domains(&q.body, var, positive)
        }
        Formula::IntQuantifier { body, .. } => only_in_universal_domains(body, var, positive),
    }
}

/// A call of a structural or semantic predicate.
#[derive(Clone)]
pub struct PredicateCall {
    /// The predicate.
    pub predicate: Arc<dyn Predicate>,
    /// The arguments.
    pub args: Vec<PredArg>,
    /// Where the call is written.
    pub span: Span,
}

impl std::fmt::Debug for PredicateCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PredicateCall")
            .field("predicate", &self.predicate.name())
            .field("args", &self.args)
            .finish()
    }
}

/// An argument of a predicate call.
#[derive(Clone, Debug, PartialEq)]
pub enum PredArg {
    /// A tree or int variable.
    Var(VarId),
    /// A string literal.
    Text(String),
    /// An integer literal.
    Int(i128),
    /// A nonterminal named by a string literal (`"<raw-field>"`), resolved.
    Symbol(SymbolId),
}

/// A Core formula.
#[derive(Clone, Debug)]
pub enum Formula {
    /// An SMT term of sort Bool over the variables' strings.
    Smt(Term, Span),
    /// A predicate call.
    Predicate(PredicateCall),
    /// Negation.
    Not(Box<Formula>),
    /// A binary connective.
    Binary(Connective, Box<Formula>, Box<Formula>),
    /// A quantifier over subtrees.
    Quantifier(Box<Quantifier>),
    /// `forall int n` / `exists int n`.
    IntQuantifier {
        /// `forall` (true) or `exists`.
        universal: bool,
        /// The bound variable.
        var: VarId,
        /// The body.
        body: Box<Formula>,
        /// Where the quantifier is written.
        span: Span,
    },
}

impl Formula {
    /// Visits this formula and every subformula, outermost first.
    pub fn visit(&self, f: &mut impl FnMut(&Formula)) {
        f(self);
        match self {
            Formula::Smt(..) | Formula::Predicate(_) => {}
            Formula::Not(inner) => inner.visit(f),
            Formula::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Formula::Quantifier(q) => q.body.visit(f),
            Formula::IntQuantifier { body, .. } => body.visit(f),
        }
    }
}
