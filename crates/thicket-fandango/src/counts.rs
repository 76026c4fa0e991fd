//! Repetition counts computed from other fields of the input (`<byte>{f(<len>)}`), as
//! Fandango computes them: the count's Python expression is evaluated with each
//! nonterminal it names bound to the last subtree of that rule that ends before the
//! repetition begins (in document order), and the repetition must repeat its item a
//! number of times between the computed least and greatest count.
//!
//! The grammar holds such a repetition with its loosest bounds (0, unbounded), so the
//! generator draws any count; the solver then rewrites every such repetition of a tree
//! it starts from, in document order, to the computed count ([`thicket_solve::TreeFixup`]):
//! it keeps the first repetitions and generates the missing ones. Counts that name no
//! nonterminal are computed once when the spec loads and are ordinary bounds.

use crate::LazyHost;
use std::sync::Arc;
use thicket_constraint::host::{Host, HostArg, HostExpr};
use thicket_grammar::fandango::{ComputedRepeat, FanBlock};
use thicket_grammar::{Diagnostic, Expr, ExprId, Grammar, SpecError, SymbolId};
use thicket_solve::{Solver, TreeFixup};
use thicket_tree::{DerivationTree, NodeId, TreeSink};

/// One bound of a repetition.
#[derive(Clone, Debug)]
enum Bound {
    /// Written as a number (or absent: 0 for the least, unbounded for the greatest).
    Fixed(Option<u32>),
    /// Computed in Python over the rules it names.
    Computed {
        expr: HostExpr,
        /// The rules of the expression's parameters, in parameter order.
        params: Vec<SymbolId>,
        /// Where the expression is written, `file:line:column`.
        at: String,
    },
}

/// A repetition whose count is computed from the input.
#[derive(Clone, Debug)]
struct CountedRepeat {
    /// The `Repeat` node.
    expr: ExprId,
    /// Its item.
    item: ExprId,
    min: Bound,
    max: Bound,
}

/// The repetitions of a spec whose counts are computed from the input, evaluated in the
/// spec's Python.
pub struct ComputedCounts {
    host: Arc<LazyHost>,
    repeats: Vec<CountedRepeat>,
}

impl ComputedCounts {
    /// The computed counts of `repeats` (each bound's nonterminals resolved in
    /// `grammar`); `None` if there are none. An error names a nonterminal no rule
    /// defines.
    pub(crate) fn new(
        grammar: &Grammar,
        repeats: &[ComputedRepeat],
        host: Arc<LazyHost>,
    ) -> Result<Option<ComputedCounts>, SpecError> {
        let mut counted = Vec::new();
        for repeat in repeats {
            let &Expr::Repeat(written) = grammar.expr(repeat.expr) else {
                continue;
            };
            let min = bound(grammar, repeat.min.as_ref(), Some(written.min))?;
            let max = bound(grammar, repeat.max.as_ref(), written.max)?;
            counted.push(CountedRepeat {
                expr: repeat.expr,
                item: written.item,
                min,
                max,
            });
        }
        Ok((!counted.is_empty()).then_some(ComputedCounts {
            host,
            repeats: counted,
        }))
    }

    fn repeat(&self, expr: ExprId) -> Option<&CountedRepeat> {
        self.repeats.iter().find(|r| r.expr == expr)
    }

    /// The least and greatest count of the repetition at `node` of `tree`.
    fn bounds(
        &self,
        repeat: &CountedRepeat,
        tree: &DerivationTree,
        node: NodeId,
        grammar: &Grammar,
    ) -> Result<(usize, Option<usize>), String> {
        let min = self.value(&repeat.min, tree, node, grammar)?.unwrap_or(0);
        let max = self.value(&repeat.max, tree, node, grammar)?;
        Ok((min, max))
    }

    /// A bound's value at `node` (`None`: unbounded).
    fn value(
        &self,
        bound: &Bound,
        tree: &DerivationTree,
        node: NodeId,
        grammar: &Grammar,
    ) -> Result<Option<usize>, String> {
        let (expr, params, at) = match bound {
            Bound::Fixed(n) => return Ok(n.map(|n| n as usize)),
            Bound::Computed { expr, params, at } => (expr, params, at),
        };
        let mut args = Vec::with_capacity(params.len());
        for &symbol in params {
            let found = last_before(tree, grammar, symbol, node).ok_or_else(|| {
                format!(
                    "the repetition count at {at} names {}, but none comes before the \
                     repetition",
                    grammar.display_symbol(symbol)
                )
            })?;
            args.push(HostArg::Tree(found));
        }
        let value = self
            .host
            .eval_number(expr, tree, grammar, &args)
            .map_err(|e| format!("the repetition count at {at}: {e}"))?;
        if value.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&value) {
            return Err(format!(
                "the repetition count at {at} is {value}, not a whole number from 0 to {}",
                u32::MAX
            ));
        }
        Ok(Some(value as usize))
    }
}

impl TreeFixup for ComputedCounts {
    fn fix(
        &self,
        solver: &Solver<'_>,
        mut tree: DerivationTree,
        seed: u64,
    ) -> Result<DerivationTree, String> {
        let grammar = solver.grammar();
        let mut rng = Solver::rng_for(seed, 0);
        let mut at = 0;
        // In document order: a count may name a field an earlier repetition holds.
        while at < tree.len() {
            let node = NodeId::from_index(at);
            at += 1;
            let Some(repeat) = self.repeat(tree.expr(node)) else {
                continue;
            };
            let (min, max) = self.bounds(repeat, &tree, node, grammar)?;
            let count = tree.children(node).count();
            let goal = count.max(min).min(max.unwrap_or(usize::MAX));
            if goal == count {
                continue;
            }
            if max.is_some_and(|max| max < min) {
                return Err(format!(
                    "the repetition counts of {} allow no count (least {min}, greatest {})",
                    grammar.display_expr(repeat.expr),
                    max.unwrap_or_default()
                ));
            }
            // Rule expansions above the new items, for the generator's depth limit.
            let depth = tree
                .path_to(node)
                .into_iter()
                .filter(|&n| matches!(grammar.expr(tree.expr(n)), Expr::Ref(_)))
                .count() as u32;
            let kept: Vec<NodeId> = tree.children(node).take(goal).collect();
            let rewritten = tree.replace_subtrees(grammar, &[node], &mut |_, builder| {
                builder.open(repeat.expr);
                for &child in &kept {
                    tree.emit_subtree(grammar, child, tree.expr(child), builder);
                }
                for _ in kept.len()..goal {
                    solver
                        .generator()
                        .expand(repeat.item, depth, &mut rng, builder);
                }
                builder.close();
            });
            tree = rewritten;
        }
        Ok(tree)
    }

    fn holds(&self, solver: &Solver<'_>, tree: &DerivationTree) -> bool {
        let grammar = solver.grammar();
        (0..tree.len()).map(NodeId::from_index).all(|node| {
            let Some(repeat) = self.repeat(tree.expr(node)) else {
                return true;
            };
            let count = tree.children(node).count();
            self.bounds(repeat, tree, node, grammar)
                .is_ok_and(|(min, max)| count >= min && max.is_none_or(|max| count <= max))
        })
    }
}

/// A bound as written at `block` (computed), else the grammar's `written` one.
fn bound(
    grammar: &Grammar,
    block: Option<&FanBlock>,
    written: Option<u32>,
) -> Result<Bound, SpecError> {
    let Some(block) = block else {
        return Ok(Bound::Fixed(written));
    };
    let (expr, names) =
        thicket_constraint::fandango::generator_expr(block.source.text(), block.span);
    let mut params = Vec::with_capacity(names.len());
    for name in names {
        let symbol = grammar.symbol(&name).ok_or_else(|| SpecError {
            source: block.source.clone(),
            diagnostics: vec![Diagnostic::error(
                "undefined-rule",
                format!("the repetition count names <{name}>, which no rule defines"),
                block.span,
            )],
        })?;
        params.push(symbol);
    }
    Ok(Bound::Computed {
        expr,
        params,
        at: format!("{}:{}", block.source.name(), block.line_col()),
    })
}

/// The last node of `symbol` in `tree` (in preorder) that ends before `node` begins.
fn last_before(
    tree: &DerivationTree,
    grammar: &Grammar,
    symbol: SymbolId,
    node: NodeId,
) -> Option<NodeId> {
    (0..node.index()).rev().map(NodeId::from_index).find(|&n| {
        tree.subtree_end(n) <= node.index()
            && matches!(grammar.expr(tree.expr(n)), Expr::Ref(s) if *s == symbol)
    })
}
