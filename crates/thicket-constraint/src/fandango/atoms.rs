//! The predicates a Fandango constraint compiles into where Core has no construct:
//! [`HostPredicate`] (a Python expression evaluated by a [`Host`](crate::host::Host)) and
//! [`SelectionCount`] (the number of trees a selector selects, `|SEL|`), and the
//! evaluation of selector paths on a tree in Fandango's order.

use crate::host::{HostArg, HostExpr, Joint, SharedHost};
use crate::predicates::{ArgKind, ArgValue, Outcome, Predicate, PredicateContext};
use crate::view::TreeView;
use std::collections::VecDeque;
use thicket_grammar::SymbolId;
use thicket_tree::NodeId;

/// One step of a selector path that can be evaluated natively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// Every subtree of this symbol in the current tree, the tree itself included, in
    /// Fandango's breadth-first order (`..<a>`, or a free `<a>` from the root).
    Descendants(SymbolId),
    /// The direct children of this symbol, in order (`.<a>`).
    Children(SymbolId),
    /// The tree bound to the predicate's tree argument at this index (a bound `<x>`),
    /// once per current tree.
    Bound(usize),
}

/// The trees a path selects from `base` (with `bound` the values of the predicate's
/// tree arguments), in Fandango's order, repeated as often as Fandango repeats them.
pub fn select(
    view: &TreeView<'_>,
    base: NodeId,
    steps: &[PathStep],
    bound: &[NodeId],
) -> Vec<NodeId> {
    let mut current = vec![base];
    for step in steps {
        let mut next = Vec::new();
        for &node in &current {
            match *step {
                PathStep::Descendants(symbol) => breadth_first(view, node, symbol, &mut next),
                PathStep::Children(symbol) => next.extend(
                    view.children(node)
                        .filter(|&c| view.symbol(c) == Some(symbol)),
                ),
                PathStep::Bound(i) => next.push(bound[i]),
            }
        }
        current = next;
    }
    current
}

/// How many trees a path selects (as [`select`] counts them).
pub fn count(view: &TreeView<'_>, base: NodeId, steps: &[PathStep], bound: &[NodeId]) -> usize {
    match steps.split_last() {
        Some((PathStep::Descendants(symbol), rest)) => select(view, base, rest, bound)
            .iter()
            .map(|&n| view.nodes_of(*symbol, n).len())
            .sum(),
        _ => select(view, base, steps, bound).len(),
    }
}

fn breadth_first(view: &TreeView<'_>, root: NodeId, symbol: SymbolId, out: &mut Vec<NodeId>) {
    // Most subtrees hold no instance: nothing to order.
    if view.nodes_of(symbol, root).is_empty() {
        return;
    }
    let mut queue = VecDeque::from([root]);
    while let Some(n) = queue.pop_front() {
        if view.symbol(n) == Some(symbol) {
            out.push(n);
        }
        queue.extend(view.children(n));
    }
}

/// How a host expression's parameter gets its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamSource {
    /// The predicate's tree argument at this index.
    Tree(usize),
    /// The trees a path selects from the tree argument at `base` (`*SEL`).
    Trees {
        /// The tree argument the path starts from.
        base: usize,
        /// The path.
        steps: Vec<PathStep>,
    },
    /// How many trees a path selects (`|SEL|`, `len(*SEL)`).
    Count {
        /// The tree argument the path starts from.
        base: usize,
        /// The path.
        steps: Vec<PathStep>,
    },
}

/// How a host atom treats an exception, as Fandango's two kinds of atoms do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// An expression constraint: an exception makes the combination false.
    Expression,
    /// `left OP right` at the constraint level: a side that raises skips the
    /// combination (it counts as satisfied); an exception in the comparison itself
    /// makes it false. The two sides are given as expressions over the same
    /// parameters, each evaluated on its own only when the whole raised.
    Comparison {
        /// `(left) is None or True`: raises exactly when the left side does.
        left: HostExpr,
        /// The same for the right side.
        right: HostExpr,
        /// For `str(<x>) == expr` (or `<x> == expr`, either way round) with `expr` not
        /// mentioning `<x>`: how to satisfy it, by writing `expr`'s value into `<x>`.
        assign: Option<Box<Assignment>>,
    },
}

/// A comparison that a repair can satisfy by writing a value: tar's
/// `str(<checksum>) == checksum_of(<header>)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The predicate's tree argument that takes the value.
    pub target: usize,
    /// The value, over the same parameters as the comparison.
    pub value: HostExpr,
    /// The comparison and its value side in one expression (see [`Joint`]). `None`
    /// where the value written is not the side's value as it is (bit fields).
    pub joint: Option<Joint>,
}

/// A Python expression over the trees a constraint's quantifiers bind, evaluated by
/// a [`Host`](crate::host::Host). Its parameters are all trees (the bound trees its
/// selectors stand for, or the bases their `*`/`|..|` paths start from).
pub struct HostPredicate {
    /// The expression.
    pub expr: HostExpr,
    /// Where each parameter's value comes from.
    pub sources: Vec<ParamSource>,
    /// How exceptions count.
    pub kind: HostKind,
    /// The interpreter.
    pub host: SharedHost,
    params: Vec<ArgKind>,
}

impl HostPredicate {
    /// A host atom with `arity` tree arguments.
    pub fn new(
        expr: HostExpr,
        sources: Vec<ParamSource>,
        kind: HostKind,
        host: SharedHost,
        arity: usize,
    ) -> HostPredicate {
        HostPredicate {
            expr,
            sources,
            kind,
            host,
            params: vec![ArgKind::Tree; arity],
        }
    }
}

/// The host arguments of parameters with `sources`, the tree arguments being `trees`.
pub fn host_args(view: &TreeView<'_>, sources: &[ParamSource], trees: &[NodeId]) -> Vec<HostArg> {
    sources
        .iter()
        .map(|s| match s {
            ParamSource::Tree(i) => HostArg::Tree(trees[*i]),
            ParamSource::Trees { base, steps } => {
                HostArg::Trees(select(view, trees[*base], steps, trees))
            }
            ParamSource::Count { base, steps } => {
                HostArg::Int(count(view, trees[*base], steps, trees) as i64)
            }
        })
        .collect()
}

impl Predicate for HostPredicate {
    fn name(&self) -> &str {
        "python"
    }
    fn params(&self) -> &[ArgKind] {
        &self.params
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let trees: Vec<NodeId> = args
            .iter()
            .map(|a| match a {
                ArgValue::Tree(n) => *n,
                _ => unreachable!("host atoms take trees only"),
            })
            .collect();
        let host_args = host_args(ctx.view, &self.sources, &trees);
        let tree = ctx.view.tree();
        let eval = |e: &HostExpr| self.host.eval_bool(e, tree, ctx.grammar, &host_args);
        let (judged, value) = match &self.kind {
            HostKind::Comparison {
                assign: Some(assign),
                ..
            } => self.host.eval_bool_then_text(
                &self.expr,
                &assign.value,
                assign.joint.as_ref(),
                tree,
                ctx.grammar,
                &host_args,
            ),
            _ => (eval(&self.expr), None),
        };
        let verdict = match (judged, &self.kind) {
            (
                Ok(false),
                HostKind::Comparison {
                    assign: Some(assign),
                    ..
                },
            ) => {
                // The fix: the value the other side has, for the solver to write.
                let value = value.unwrap_or_else(|| {
                    self.host
                        .eval_text(&assign.value, tree, ctx.grammar, &host_args)
                });
                let fix = value
                    .map(|text| vec![(trees[assign.target], text)])
                    .unwrap_or_default();
                let why = if ctx.explaining {
                    format!("the Python expression `{}` is false", self.expr.source)
                } else {
                    String::new()
                };
                return Outcome::Fails { why, fix };
            }
            (Ok(v), _) => Ok(v),
            (Err(e), HostKind::Expression) => Err(e),
            (Err(e), HostKind::Comparison { left, right, .. }) => {
                // A side that raises skips the combination.
                match (eval(left), eval(right)) {
                    (Err(side), _) | (Ok(_), Err(side)) => {
                        return ctx.outcome(true, || side.message);
                    }
                    _ => Err(e),
                }
            }
        };
        match verdict {
            Ok(holds) => ctx.outcome(holds, || {
                format!("the Python expression `{}` is false", self.expr.source)
            }),
            Err(e) => ctx.outcome(false, || {
                format!("the Python expression `{}` raised: {e}", self.expr.source)
            }),
        }
    }
}

/// `selection_count(base, n)`: `n` is the number of trees a selector path selects from
/// `base` (Fandango's `|SEL|` and `len(*SEL)`); with `n` unbound it proposes the count.
/// Its further tree arguments are the trees the path's bound steps refer to.
pub struct SelectionCount {
    steps: Vec<PathStep>,
    params: Vec<ArgKind>,
    /// The selector as written, for explanations.
    written: String,
}

impl SelectionCount {
    /// The count of `steps` from the first tree argument; `bound` more tree arguments
    /// follow the number.
    pub fn new(steps: Vec<PathStep>, bound: usize, written: String) -> SelectionCount {
        let mut params = vec![ArgKind::Tree, ArgKind::Number];
        params.extend(std::iter::repeat_n(ArgKind::Tree, bound));
        SelectionCount {
            steps,
            params,
            written,
        }
    }
}

impl Predicate for SelectionCount {
    fn name(&self) -> &str {
        "selection_count"
    }
    fn params(&self) -> &[ArgKind] {
        &self.params
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let ArgValue::Tree(base) = args[0] else {
            unreachable!("the base is a tree")
        };
        let bound: Vec<NodeId> = args[2..]
            .iter()
            .map(|a| match a {
                ArgValue::Tree(n) => *n,
                _ => unreachable!("bound trees"),
            })
            .collect();
        // The path's bound steps index the trees after the base.
        let steps: Vec<PathStep> = self.steps.clone();
        let found = count(ctx.view, base, &steps, &bound) as i128;
        match args[1] {
            ArgValue::Number(None) => Outcome::Bind(found),
            ArgValue::Number(Some(n)) => ctx.outcome(n == found, || {
                format!("|{}| is {found}, not {n}", self.written)
            }),
            _ => unreachable!("a number"),
        }
    }
}
