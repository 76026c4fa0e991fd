//! Core constraints: what a [`crate::Constraint`] is after resolution against a grammar.
//! Variables are typed ids, nonterminals are [`SymbolId`]s, simplified syntax (free
//! nonterminals, XPath, omitted names, `implies`) has been translated, and every
//! predicate and function is known. The checker evaluates this form; the solver will
//! transform it.

use crate::matching::MatchExpr;
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
                Domain::Child { parent, .. } => parent != var,
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
