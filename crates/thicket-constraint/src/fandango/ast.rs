//! The syntax of Fandango constraints as written: the constraint level (quantifiers,
//! `and`/`or` of formulas, comparisons, implication) around Python expressions that
//! hold selectors. Every node has the [`Span`] it was read from.

use super::lexer::StrValue;
use thicket_grammar::Span;

/// A name (a nonterminal's without brackets, or a Python identifier) and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    /// The name.
    pub text: String,
    /// Where it is written (for a nonterminal: `<`..`>`).
    pub span: Span,
}

/// A constraint formula.
#[derive(Clone, Debug)]
pub enum Formula {
    /// `forall <x> in SEL: body`, `exists ...`, `all(body for x in *SEL)`, `any(...)`.
    Quantifier(Box<Quantifier>),
    /// `a or b or ...` (formulas).
    Or(Vec<Formula>, Span),
    /// `a and b and ...` (formulas).
    And(Vec<Formula>, Span),
    /// `a -> b` (deprecated in Fandango).
    Implies(Box<Formula>, Box<Formula>, Span),
    /// `a OP b` with OP one of `< > == >= <= != <>`: a comparison whose sides are
    /// evaluated separately (a side that raises skips the combination). A chain
    /// `a < b < c` is the conjunction of its links, as in Fandango.
    Comparison(Box<Comparison>),
    /// Any other Python expression, judged by its truth value.
    Expr(Expr),
}

impl Formula {
    /// Where the formula is written.
    pub fn span(&self) -> Span {
        match self {
            Formula::Quantifier(q) => q.span,
            Formula::Or(_, s) | Formula::And(_, s) | Formula::Implies(_, _, s) => *s,
            Formula::Comparison(c) => c.span,
            Formula::Expr(e) => e.span,
        }
    }
}

/// A quantifier.
#[derive(Clone, Debug)]
pub struct Quantifier {
    /// `forall`/`all` (true) or `exists`/`any`.
    pub universal: bool,
    /// What the instances are bound to.
    pub bound: Bound,
    /// What it ranges over. In `any`/`all` the selection is starred (`*SEL`), which
    /// ranges over the same trees.
    pub domain: DotSelection,
    /// The body.
    pub body: Formula,
    /// The whole quantifier.
    pub span: Span,
    /// The head (`forall <x> in SEL:` or `for x in *SEL`), for explanations.
    pub head: Span,
}

/// The variable a quantifier binds.
#[derive(Clone, Debug)]
pub enum Bound {
    /// `<x>`: a nonterminal name that selectors then resolve to the instance.
    Nonterminal(Name),
    /// `x` (in `any`/`all`): a Python variable of the body's expressions.
    Identifier(Name),
}

impl Bound {
    /// The bound name and where it is written.
    pub fn name(&self) -> &Name {
        match self {
            Bound::Nonterminal(n) | Bound::Identifier(n) => n,
        }
    }
}

/// `left OP right` at the constraint level.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The operator.
    pub op: CmpOp,
    /// The left side.
    pub left: Expr,
    /// The right side.
    pub right: Expr,
    /// The whole comparison.
    pub span: Span,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=` or `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtE,
    /// `>`
    Gt,
    /// `>=`
    GtE,
    /// `in`
    In,
    /// `not in`
    NotIn,
    /// `is`
    Is,
    /// `is not`
    IsNot,
}

impl CmpOp {
    /// The operator as Python writes it.
    pub fn python(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::NotEq => "!=",
            CmpOp::Lt => "<",
            CmpOp::LtE => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtE => ">=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
        }
    }
}

/// A selector: `SEL`, `SEL.sel`, `SEL..sel` (`dot_selection`).
#[derive(Clone, Debug)]
pub struct DotSelection {
    /// What it is.
    pub kind: DotKind,
    /// Where it is.
    pub span: Span,
}

/// The kinds of selectors.
#[derive(Clone, Debug)]
pub enum DotKind {
    /// One selection.
    Selection(Selection),
    /// `base.sel`: in each tree `base` selects, the direct children `sel` selects.
    Child(Box<DotSelection>, Selection),
    /// `base..sel`: in each tree `base` selects, every subtree `sel` selects.
    Descendant(Box<DotSelection>, Selection),
}

/// `<x>`, `(SEL)`, either with `[slices]` or `{pairs}`.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The base.
    pub base: BaseSelection,
    /// The suffix, if any.
    pub suffix: Option<Suffix>,
    /// Where it is.
    pub span: Span,
}

/// The base of a selection.
#[derive(Clone, Debug)]
pub enum BaseSelection {
    /// `<x>`.
    Nonterminal(Name),
    /// `( SEL )`.
    Paren(Box<DotSelection>),
}

/// A selection's suffix.
#[derive(Clone, Debug)]
pub enum Suffix {
    /// `[0]`, `[1:3]`, `[0, 2]`: children by index (terminals included).
    Slices(Vec<RsSlice>, Span),
    /// `{*<a>, *<b>: 1:2}`.
    Pairs(Vec<RsPair>, Span),
}

/// An index or a slice, non-negative literals only (Fandango's `rs_slice`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsSlice {
    /// `[i]`
    Index(i64),
    /// `[start:stop:step]`
    Range(Option<i64>, Option<i64>, Option<i64>),
}

/// `*<a>` or `*<a>: slice` inside `{...}`.
#[derive(Clone, Debug)]
pub struct RsPair {
    /// The nonterminal.
    pub symbol: Name,
    /// The slice, if any.
    pub slice: Option<RsSlice>,
}

/// A Python expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `not`
    Not,
    /// `-`
    Neg,
    /// `+`
    Pos,
    /// `~`
    Invert,
}

/// Binary (arithmetic and bitwise) operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Mod,
    /// `**`
    Pow,
    /// `@`
    MatMul,
    /// `<<`
    LShift,
    /// `>>`
    RShift,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
}

/// Kinds of comprehensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompKind {
    /// `(x for x in y)`
    Generator,
    /// `[x for x in y]`
    List,
    /// `{x for x in y}`
    Set,
    /// `{k: v for x in y}`
    Dict,
}

/// `for target in iter if cond ...`
#[derive(Clone, Debug)]
pub struct CompFor {
    /// The target (names, tuples of names).
    pub target: Expr,
    /// The iterable.
    pub iter: Expr,
    /// The `if` conditions.
    pub ifs: Vec<Expr>,
}

/// An argument of a call.
#[derive(Clone, Debug)]
pub enum Arg {
    /// `x` or `*x`.
    Positional(Expr),
    /// `name=x`.
    Keyword(Name, Expr),
    /// `**x`.
    DoubleStarred(Expr),
}

/// A part of an f-string.
#[derive(Clone, Debug)]
pub enum FPart {
    /// Text (braces undoubled, escapes decoded).
    Text(String),
    /// `{expr!conv:spec}`.
    Field {
        /// The expression.
        expr: Box<Expr>,
        /// `!r`, `!s`, `!a`.
        conversion: Option<char>,
        /// The format spec, itself an f-string.
        spec: Vec<FPart>,
    },
}

/// The kinds of Python expressions.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A name.
    Name(String),
    /// An integer; `None` beyond 128 bits.
    Int(Option<i128>),
    /// A float or imaginary number.
    Float,
    /// A string or bytes literal (adjacent ones joined); `None` if not decoded here.
    Str(Option<StrValue>),
    /// An f-string (adjacent literals joined).
    FString(Vec<FPart>),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `...`.
    Ellipsis,
    /// A selector standing for one tree at a time (a placeholder).
    Selector(DotSelection),
    /// `*SEL`: the list of all trees it selects.
    Star(DotSelection),
    /// `**SEL` (population-wide; Fandango no longer supports it).
    DoubleStar(DotSelection),
    /// `|SEL|` or `len(*SEL)`: how many trees it selects.
    Length(DotSelection),
    /// `(a, b)`.
    Tuple(Vec<Expr>),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{a, b}`.
    Set(Vec<Expr>),
    /// `{k: v, **d}` (a `None` key is `**d`).
    Dict(Vec<(Option<Expr>, Expr)>),
    /// `*x` in a display or call.
    Starred(Box<Expr>),
    /// A comprehension; `value` only for dict comprehensions.
    Comprehension {
        /// Which.
        kind: CompKind,
        /// The element (a dict comprehension's key).
        elt: Box<Expr>,
        /// A dict comprehension's value.
        value: Option<Box<Expr>>,
        /// The `for` clauses.
        generators: Vec<CompFor>,
    },
    /// `x.name`.
    Attribute(Box<Expr>, Name),
    /// `f(args)`.
    Call(Box<Expr>, Vec<Arg>),
    /// `x[i]`.
    Subscript(Box<Expr>, Box<Expr>),
    /// `a:b:c` inside a subscript.
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b and ...` (true) / `a or b or ...`.
    BoolOp(bool, Vec<Expr>),
    /// `a < b <= c`.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `body if test else orelse`.
    IfExp {
        /// The condition.
        test: Box<Expr>,
        /// Its value when true.
        body: Box<Expr>,
        /// Its value when false.
        orelse: Box<Expr>,
    },
    /// `lambda params: body`.
    Lambda {
        /// Parameter names.
        params: Vec<String>,
        /// Default values.
        defaults: Vec<Expr>,
        /// The body.
        body: Box<Expr>,
    },
    /// `await x`.
    Await(Box<Expr>),
}
