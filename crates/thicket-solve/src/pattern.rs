//! Instantiating match expressions without a parser: each variant of a quantifier's
//! match expression is parsed once, when the solver is built, as a *skeleton* (its
//! placeholders filled with a smallest text, the nodes that hold them found in the
//! parse). A new subtree matching the variant is then the skeleton emitted with fresh
//! subtrees at those nodes.
//!
//! This is exact because the grammar is context-free: any subtree of a placeholder's
//! rule can stand where another one stands, the literal text around it is unchanged,
//! and the matcher cuts at a node of the placeholder's rule wherever the pattern has
//! one. A skeleton is kept only if the variant matches it with its binders on the
//! placeholder nodes; a variant without one (its text is ambiguous around a
//! placeholder, or does not parse as the rule) is instantiated the old way, by
//! generating its text and parsing it back.

use crate::Solver;
use rand::Rng;
use std::collections::HashMap;
use thicket_constraint::matching::{Atom, MatchExpr};
use thicket_constraint::{Formula, TreeView};
use thicket_grammar::{Expr, SymbolId};
use thicket_tree::{ByteSink, DerivationTree, NodeId, TreeBuilder};

/// A variant of a match expression as a subtree of the quantifier's rule, with the
/// nodes that hold its placeholders.
pub(crate) struct Skeleton {
    tree: DerivationTree,
    /// The placeholders' nodes, in order (sorted, disjoint).
    slots: Vec<NodeId>,
}

/// Skeletons by match expression (its address, as in the checker's match cache) and
/// variant.
pub(crate) type Skeletons = HashMap<(usize, usize), Skeleton>;

/// The skeletons of every match expression of the solver's constraints.
pub(crate) fn skeletons(solver: &Solver<'_>) -> Skeletons {
    let mut out = Skeletons::new();
    for c in solver.constraints() {
        c.formula.visit(&mut |f| {
            if let Formula::Quantifier(q) = f
                && let Some(mexpr) = &q.mexpr
            {
                for variant in 0..mexpr.variants.len() {
                    if let Some(skeleton) = skeleton(solver, q.symbol, mexpr, variant) {
                        out.insert((mexpr as *const MatchExpr as usize, variant), skeleton);
                    }
                }
            }
        });
    }
    out
}

fn skeleton(
    solver: &Solver<'_>,
    symbol: SymbolId,
    mexpr: &MatchExpr,
    variant: usize,
) -> Option<Skeleton> {
    let grammar = solver.grammar;
    // The same smallest texts on every machine: the skeleton's shape is fixed.
    let mut rng = Solver::rng_for(0, 0);
    let mut sink = ByteSink::default();
    let mut ranges = Vec::new();
    for atom in &mexpr.variants[variant] {
        match atom {
            Atom::Byte(b) => sink.bytes.push(*b),
            Atom::Slot(s, _) => {
                let start = sink.bytes.len();
                solver
                    .repairer
                    .expand_smallest(grammar.rule(*s).body, &mut rng, &mut sink);
                ranges.push((*s, start..sink.bytes.len()));
            }
        }
    }
    let tree = crate::repair::parse_as(solver, symbol, &sink.bytes)?;
    // The outermost node of the placeholder's rule spanning exactly its text.
    let mut slots = Vec::with_capacity(ranges.len());
    for (s, range) in ranges {
        let node = tree.descendants(tree.root()).find(|&n| {
            matches!(grammar.expr(tree.expr(n)), Expr::Ref(r) if *r == s)
                && tree.text_range(n) == range
                && slots
                    .last()
                    .is_none_or(|&m: &NodeId| tree.subtree_end(m) <= n.index())
        })?;
        slots.push(node);
    }
    // The variant must match the skeleton with each binder on its placeholder's node.
    let binders: Vec<_> = mexpr.variants[variant]
        .iter()
        .filter(|a| matches!(a, Atom::Slot(..)))
        .zip(&slots)
        .filter_map(|(a, &n)| match a {
            Atom::Slot(_, Some(v)) => Some((*v, n)),
            _ => None,
        })
        .collect();
    let view = TreeView::new(&tree, grammar);
    let matched = mexpr
        .matches(&view, grammar, tree.root())
        .iter()
        .any(|bindings| binders.iter().all(|b| bindings.contains(b)));
    matched.then_some(Skeleton { tree, slots })
}

impl Skeleton {
    /// A new subtree matching the variant: the skeleton with each placeholder's node
    /// generated afresh, `depth` rule expansions deep already, or a copy of the node
    /// `copy(i)` gives for placeholder `i` (a node of the placeholder's rule).
    pub(crate) fn instantiate<'t, R: Rng + ?Sized>(
        &self,
        solver: &Solver<'_>,
        depth: u32,
        rng: &mut R,
        copy: impl Fn(usize) -> Option<(&'t DerivationTree, NodeId)>,
    ) -> DerivationTree {
        let tree = &self.tree;
        let mut sink = TreeBuilder::new();
        tree.emit_with_holes(
            solver.grammar,
            tree.root(),
            tree.expr(tree.root()),
            &self.slots,
            &mut sink,
            &mut |i, sink| {
                let expr = tree.expr(self.slots[i]);
                match copy(i) {
                    Some((from, node)) => from.emit_subtree(solver.grammar, node, expr, sink),
                    None => {
                        solver.repairer.expand(expr, depth, &mut *rng, sink);
                    }
                }
            },
        );
        sink.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SolverConfig;
    use thicket_constraint::Predicates;

    /// Every variant of the XML spec's match expressions (tag balance, prefixed tags
    /// with their optional attributes, close tags and slashes, declarations) gets a
    /// skeleton, and every instantiation matches its variant with its binders bound.
    #[test]
    fn instantiated_skeletons_match_their_variant() {
        let spec = thicket_grammar::load_spec_bytes(
            "xml.bnf",
            include_bytes!("../../../specs/xml.bnf"),
            &Default::default(),
        )
        .unwrap();
        let constraints = thicket_constraint::from_spec(&spec, &Predicates::standard()).unwrap();
        let solver = Solver::new(&spec.grammar, constraints, SolverConfig::default()).unwrap();
        let grammar = &spec.grammar;
        let mut rng = Solver::rng_for(3, 0);
        let (mut variants, mut missing) = (0, 0);
        for c in solver.constraints() {
            c.formula.visit(&mut |f| {
                let Formula::Quantifier(q) = f else { return };
                let Some(mexpr) = &q.mexpr else { return };
                for variant in 0..mexpr.variants.len() {
                    let key = (mexpr as *const MatchExpr as usize, variant);
                    let Some(skeleton) = solver.skeletons.get(&key) else {
                        // The prefixed-tag pattern `<p:n[ attrs][/]>[<inner></close>]`
                        // (bit i of a variant leaves out optional i): an element has
                        // either the slash or the content, so the variants with both or
                        // neither derive nothing.
                        let (slash, content) = (variant & 2 == 0, variant & 4 == 0);
                        assert!(
                            mexpr.variants.len() == 8 && slash == content,
                            "no skeleton for variant {variant} of {:?}",
                            mexpr.span
                        );
                        missing += 1;
                        continue;
                    };
                    variants += 1;
                    for _ in 0..20 {
                        let tree = skeleton.instantiate(&solver, 20, &mut rng, |_| None);
                        let view = TreeView::new(&tree, grammar);
                        let matches = mexpr.matches(&view, grammar, tree.root());
                        assert!(
                            matches.iter().any(|b| b.len() == mexpr.binders.len()),
                            "{:?} does not match variant {variant}",
                            String::from_utf8_lossy(tree.bytes())
                        );
                    }
                }
            });
        }
        assert_eq!((variants, missing), (13, 4));
        assert_eq!(solver.skeletons.len(), variants);
    }
}
