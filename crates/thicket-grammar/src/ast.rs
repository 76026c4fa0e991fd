//! The syntax tree of a spec, as written: rule names are still strings. Both the text
//! format and the JSON import produce it; [`crate::Grammar::build`] resolves it.

use crate::source::Span;

/// A whole spec: its rules in the order written.
#[derive(Clone, Debug, Default)]
pub struct SpecAst {
    /// The rules, in source order.
    pub rules: Vec<AstRule>,
    /// Byte offset of the first `where` (the constraints after the grammar), if any.
    pub constraints_start: Option<usize>,
}

/// `<name> ::= body`.
#[derive(Clone, Debug)]
pub struct AstRule {
    /// The name without angle brackets.
    pub name: String,
    /// Where the name (with brackets) is written.
    pub name_span: Span,
    /// The right-hand side.
    pub body: AstExpr,
}

/// An expression on a right-hand side.
#[derive(Clone, Debug)]
pub struct AstExpr {
    /// What it is.
    pub kind: AstExprKind,
    /// Where it is written.
    pub span: Span,
}

/// The kinds of right-hand-side expressions.
#[derive(Clone, Debug)]
pub enum AstExprKind {
    /// Two or more alternatives.
    Alt(Vec<AstExpr>),
    /// A concatenation of zero (the empty string) or two or more items.
    Seq(Vec<AstExpr>),
    /// `item*`, `item+`, `item?`, `item{n,m}`.
    Repeat {
        /// The repeated expression.
        item: Box<AstExpr>,
        /// Least number of repetitions.
        min: u32,
        /// Greatest number of repetitions; `None` for unbounded.
        max: Option<u32>,
    },
    /// A reference to the rule of this name (without angle brackets).
    Ref(String),
    /// A literal byte string.
    Literal(Vec<u8>),
    /// A regex terminal, as written between the quotes of `r"..."` (for Fandango
    /// specs, translated from Python's regex syntax to Rust's).
    Regex(String),
    /// A Fandango bit, `0` (false) or `1` (true). [`crate::Grammar::build`] makes it
    /// the one-byte literal `"0"` or `"1"`: thicket's derivation trees are bytes.
    Bit(bool),
}
