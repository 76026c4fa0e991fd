//! Expressions of a host language (Python, for Fandango specs) inside constraints.
//!
//! A Fandango constraint is a Python expression over derivation trees. What maps onto
//! Core (selectors, comparisons of strings and integers, `len`, `int`, `str`,
//! arithmetic, quantifiers) is translated and solved natively; what does not (calls to
//! the spec's own functions, `import`ed modules, ...) is kept as a [`HostExpr`] and
//! evaluated by a [`Host`] — a real interpreter, which another crate provides — on the
//! subtrees the surrounding quantifiers bind.
//!
//! The contract between the two sides:
//! - [`HostExpr::source`] is a Python expression. Each name in [`HostExpr::params`] is a
//!   free variable of it, bound to the argument at the same position: a
//!   [`HostArg::Tree`] becomes a Fandango `DerivationTree` object (the subtree rooted at
//!   that node, with the whole tree reachable through its parents), a
//!   [`HostArg::Trees`] a Python list of them, a [`HostArg::Int`] a Python `int`.
//! - The expression also sees every global name of the spec's Python code blocks.
//! - Its value is judged as Python's `bool()` judges it, as Fandango does.

use std::sync::Arc;
use thicket_grammar::Grammar;
use thicket_tree::{DerivationTree, NodeId};

/// One host-language expression and the names of its parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostExpr {
    /// The expression's source text, in the host language.
    pub source: String,
    /// The names its arguments are bound to, in order.
    pub params: Vec<String>,
}

/// An argument of a host expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostArg {
    /// One subtree.
    Tree(NodeId),
    /// Several subtrees (a Fandango `*<x>` selection), in the order Fandango lists
    /// them: breadth-first within each tree for `..<x>` and a free `<x>`, in order for
    /// `.<x>`.
    Trees(Vec<NodeId>),
    /// A number (a Fandango `|<x>|` count).
    Int(i64),
}

/// Why a host expression could not be evaluated: it raised, did not finish within its
/// time limit, or the interpreter is unavailable. The message is for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// What went wrong, with the host's own report (a Python traceback's last line).
    pub message: String,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HostError {}

/// An interpreter that evaluates [`HostExpr`]s over derivation trees.
pub trait Host: Send + Sync {
    /// Evaluates `expr` with `args` over `tree` (of `grammar`) and judges the value as a
    /// truth value.
    fn eval_bool(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<bool, HostError>;

    /// Evaluates `expr` to the text a subtree would have (a `str` as UTF-8, `bytes` as
    /// they are, an `int` as its decimal digits, a tree as its text), for a constraint
    /// `str(<x>) == expr` that the solver satisfies by writing the value into `<x>`. A
    /// host that cannot keeps this default, which says so.
    fn eval_text(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<Vec<u8>, HostError> {
        let _ = (expr, tree, grammar, args);
        Err(HostError {
            message: "this host evaluates truth values only".into(),
        })
    }

    /// Evaluates `expr` to a number, for a soft goal (`minimizing`/`maximizing`): an
    /// `int` or a `float` (a `bool` counts as 0 or 1). A host that cannot keeps this
    /// default, which says so.
    fn eval_number(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<f64, HostError> {
        let _ = (expr, tree, grammar, args);
        Err(HostError {
            message: "this host evaluates truth values only".into(),
        })
    }

    /// Judges `expr`, a comparison a repair satisfies by writing `value`'s text into a
    /// tree, and where it is false also gives that text (as [`Host::eval_text`] gives
    /// it; `None` if it was not asked for). `joint` is the comparison and its value
    /// side in one expression ([`Joint`]): a host that can use it evaluates that
    /// instead of both. By default `expr` is judged, then `value` evaluated where it
    /// is false ([`judge_then_text`]).
    fn eval_bool_then_text(
        &self,
        expr: &HostExpr,
        value: &HostExpr,
        joint: Option<&Joint>,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Judged {
        let _ = joint;
        judge_then_text(self, expr, value, tree, grammar, args)
    }
}

/// A comparison `target == value` and its value side in one expression, for
/// [`Host::eval_bool_then_text`]: a pair `(verdict, value)` that evaluates the value
/// side once, `((str(t)) == (__thicket_value := __thicket_watched(t, lambda: (v))),
/// __thicket_value)` for `str(t) == v` (see [`crate::fandango::Assignment::joint`]).
///
/// `__thicket_watched(t, thunk)` returns `thunk()`; a host that provides it may also
/// note whether the call read anything inside the tree `t` (its text, its children).
/// One that did not has a value that writing into `t` leaves as it is, so after the
/// repair writes it, the comparison holds while the rest of the tree is unchanged: a
/// host may answer that judgement without evaluating again (the spec's code is taken
/// to be a function of what it reads, as Fandango takes it when it caches a
/// constraint's result by tree).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Joint {
    /// The pair expression, over the comparison's parameters.
    pub expr: HostExpr,
    /// The parameter (an index into [`HostExpr::params`]) bound to the tree a repair
    /// writes the value into.
    pub target: usize,
}

/// [`Host::eval_bool_then_text`] in two evaluations: `expr` judged, then `value`'s text
/// where it is false. What a host does without a joint expression, or one it cannot
/// use.
pub fn judge_then_text<H: Host + ?Sized>(
    host: &H,
    expr: &HostExpr,
    value: &HostExpr,
    tree: &DerivationTree,
    grammar: &Grammar,
    args: &[HostArg],
) -> Judged {
    let verdict = host.eval_bool(expr, tree, grammar, args);
    let text = matches!(verdict, Ok(false)).then(|| host.eval_text(value, tree, grammar, args));
    (verdict, text)
}

/// A comparison's verdict and, where it is false, the text of the value a repair
/// writes (see [`Host::eval_bool_then_text`]).
pub type Judged = (Result<bool, HostError>, Option<Result<Vec<u8>, HostError>>);

/// A shared host.
pub type SharedHost = Arc<dyn Host>;
