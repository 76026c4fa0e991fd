//! The surface syntax of a constraint as written (simplified and Core ISLa mixed), before
//! names are resolved against a grammar. [`crate::resolve`] turns it into Core.

use crate::lexer::StringLit;
use thicket_grammar::Span;

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    /// The name (a nonterminal's without brackets).
    pub text: String,
    /// Where it is.
    pub span: Span,
}

/// `const name: <type>;`
#[derive(Clone, Debug)]
pub struct ConstDecl {
    /// The constant's name.
    pub name: Name,
    /// Its nonterminal type.
    pub ty: Name,
}

/// One constraint: an optional constant declaration and a formula.
#[derive(Clone, Debug)]
pub struct ConstraintSyntax {
    /// `const` declaration, if any (by default the constant is `start: <start>`).
    pub constant: Option<ConstDecl>,
    /// The formula.
    pub formula: SFormula,
    /// The whole constraint's span.
    pub span: Span,
}

pub use crate::formula::Connective;

/// What a quantifier ranges over when written with `in`.
#[derive(Clone, Debug)]
pub enum InTarget {
    /// A variable.
    Var(Name),
    /// A free nonterminal (`in <header>`).
    Nonterminal(Name),
    /// An XPath expression (`in <header>.<checksum>`).
    XPath(Box<STerm>),
}

/// A formula as written.
#[derive(Clone, Debug)]
pub enum SFormula {
    /// `forall <T> x="mexpr" in y: body` and its `exists` twin; every part but the type
    /// and the body is optional.
    Quantifier {
        /// `forall` (true) or `exists`.
        universal: bool,
        /// The bound variable's type.
        ty: Name,
        /// The bound variable.
        var: Option<Name>,
        /// The match expression.
        mexpr: Option<(StringLit, Span)>,
        /// What it ranges over.
        within: Option<InTarget>,
        /// The body.
        body: Box<SFormula>,
        /// The quantifier's head (`forall ... :`).
        span: Span,
    },
    /// `forall int n: body` / `exists int n: body`.
    IntQuantifier {
        /// `forall` (true) or `exists`.
        universal: bool,
        /// The bound variable.
        var: Name,
        /// The body.
        body: Box<SFormula>,
        /// The head.
        span: Span,
    },
    /// `not φ`
    Not(Box<SFormula>, Span),
    /// `φ op ψ`
    Binary(Connective, Box<SFormula>, Box<SFormula>, Span),
    /// An SMT term of sort Bool, or a predicate call `p(a, b)` (told apart by name
    /// during resolution).
    Atom(STerm),
}

impl SFormula {
    /// Where the formula is written.
    pub fn span(&self) -> Span {
        match self {
            SFormula::Quantifier { span, body, .. }
            | SFormula::IntQuantifier { span, body, .. } => span.to(body.span()),
            SFormula::Not(_, span) | SFormula::Binary(_, _, _, span) => *span,
            SFormula::Atom(t) => t.span,
        }
    }

    /// Makes the formula's span `span` (its parentheses included); a quantifier keeps
    /// its head's.
    pub fn widen(&mut self, span: Span) {
        match self {
            SFormula::Not(_, s) | SFormula::Binary(_, _, _, s) => *s = span,
            SFormula::Atom(t) => t.span = span,
            SFormula::Quantifier { .. } | SFormula::IntQuantifier { .. } => {}
        }
    }
}

/// One step of an XPath expression.
#[derive(Clone, Debug, PartialEq)]
pub enum XPathStep {
    /// `.<child>[index]`: the index-th (1-based) direct child of that type.
    Child(Name, u32),
    /// `..<descendant>`: every descendant of that type.
    Descendant(Name),
}

/// A term as written.
#[derive(Clone, Debug)]
pub struct STerm {
    /// What it is.
    pub kind: STermKind,
    /// Where it is.
    pub span: Span,
}

/// The kinds of terms.
#[derive(Clone, Debug)]
pub enum STermKind {
    /// `true` / `false`
    Bool(bool),
    /// An integer literal.
    Int(i128),
    /// A string literal.
    Str(String),
    /// A variable (or a predicate's bare-word argument).
    Var(String),
    /// A free nonterminal `<x>`.
    Nonterminal(String),
    /// `base.<a>[i]..<b>`: the base is a variable or a free nonterminal.
    XPath {
        /// The base: a variable (`Var`) or free nonterminal (`Nonterminal`).
        base: Box<STerm>,
        /// The steps.
        steps: Vec<XPathStep>,
    },
    /// A function or predicate application, prefix (`f(a, b)`), S-expression
    /// (`(f a b)`) or infix (`a + b`).
    App {
        /// The function's name (`=`, `str.len`, `count`, `re.loop`).
        op: Name,
        /// Indices of an indexed identifier (`(_ re.loop 1 3)`).
        indices: Vec<u32>,
        /// The arguments.
        args: Vec<STerm>,
    },
}
