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
