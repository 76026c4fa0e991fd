//! The ISLa view of a derivation tree: only rule nodes (`<a>`) and terminals count as
//! nodes; the synthetic nodes thicket keeps for alternatives, groups and repetitions are
//! transparent. A node's ISLa children are its nearest symbolic descendants, and ISLa's
//! path order is preorder, so every structural predicate works on preorder indices:
//! `a` is before `b` iff `a`'s subtree ends at or before `b` starts.

use thicket_grammar::{Expr, Grammar, SymbolId};
use thicket_tree::{DerivationTree, NodeId};

const NONE: u32 = u32::MAX;

/// A derivation tree indexed for constraint evaluation. Built once per tree, in one
/// preorder pass.
pub struct TreeView<'t> {
    tree: &'t DerivationTree,
    /// The symbol of each rule node, `NONE` for other nodes.
    label: Vec<u32>,
    /// The nearest symbolic proper ancestor (`NONE` at the top).
    parent: Vec<u32>,
    /// Whether the node is symbolic (a rule node or a terminal).
    symbolic: Vec<bool>,
    /// Whether the node is symbolic and has no symbolic descendant (an ISLa leaf).
    leaf: Vec<bool>,
    /// Rule nodes grouped by symbol, each group in preorder: symbol `s`'s nodes are
    /// `by_symbol[starts[s]..starts[s + 1]]` (one array, not one vector per symbol).
    by_symbol: Vec<u32>,
    starts: Vec<u32>,
}

impl<'t> TreeView<'t> {
    /// Indexes `tree`, a tree of `grammar`.
    pub fn new(tree: &'t DerivationTree, grammar: &Grammar) -> TreeView<'t> {
        let n = tree.len();
        let mut label = vec![NONE; n];
        let mut parent = vec![NONE; n];
        let mut symbolic = vec![false; n];
        let mut leaf = vec![false; n];
        let symbols = grammar.rules().len();
        let mut starts = vec![0u32; symbols + 1];
        // Open symbolic ancestors: (node, end of its subtree).
        let mut open: Vec<(u32, u32)> = Vec::new();
        for i in 0..n {
            let node = NodeId::from_index(i);
            while open.last().is_some_and(|&(_, end)| end as usize <= i) {
                open.pop();
            }
            let expr = grammar.expr(tree.expr(node));
            if !expr.is_symbolic() {
                continue;
            }
            symbolic[i] = true;
            leaf[i] = true;
            if let Some(&(p, _)) = open.last() {
                parent[i] = p;
                leaf[p as usize] = false;
            }
            if let Expr::Ref(symbol) = expr {
                label[i] = symbol.index() as u32;
                starts[symbol.index() + 1] += 1;
            }
            open.push((i as u32, tree.subtree_end(node) as u32));
        }
        // Counts to group starts, then each rule node into its group in preorder.
        for s in 0..symbols {
            starts[s + 1] += starts[s];
        }
        let mut by_symbol = vec![0u32; starts[symbols] as usize];
        let mut fill = starts.clone();
        for (i, &l) in label.iter().enumerate() {
            if l != NONE {
                by_symbol[fill[l as usize] as usize] = i as u32;
                fill[l as usize] += 1;
            }
        }
        TreeView {
            tree,
            starts,
            label,
            parent,
            symbolic,
            leaf,
            by_symbol,
        }
    }

    /// The tree.
    pub fn tree(&self) -> &'t DerivationTree {
        self.tree
    }

    /// The symbol of a rule node.
    pub fn symbol(&self, node: NodeId) -> Option<SymbolId> {
        let l = self.label[node.index()];
        (l != NONE).then(|| SymbolId::from_index(l as usize))
    }

    /// The nearest symbolic proper ancestor.
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        let p = self.parent[node.index()];
        (p != NONE).then(|| NodeId::from_index(p as usize))
    }

    /// The rule nodes of `symbol` in the subtree of `within` (itself included), in
    /// preorder.
    pub fn nodes_of(&self, symbol: SymbolId, within: NodeId) -> &[u32] {
        let list = &self.by_symbol
            [self.starts[symbol.index()] as usize..self.starts[symbol.index() + 1] as usize];
        let start = within.index() as u32;
        let end = self.tree.subtree_end(within) as u32;
        let lo = list.partition_point(|&x| x < start);
        let hi = list.partition_point(|&x| x < end);
        &list[lo..hi]
    }

    /// The symbolic children of a node, in order. Steps over each child's subtree, so
    /// the cost is the number of children and synthetic nodes between them, not the
    /// size of the subtree.
    pub fn children(&self, node: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let end = self.tree.subtree_end(node);
        let mut next = node.index() + 1;
        std::iter::from_fn(move || {
            while next < end {
                let i = next;
                if self.symbolic[i] {
                    next = self.tree.subtree_end(NodeId::from_index(i));
                    return Some(NodeId::from_index(i));
                }
                // A synthetic node (alternative, group, repetition): look inside.
                next += 1;
            }
            None
        })
    }

    /// `inside(a, b)`: `a` is in `b`'s subtree (or is `b`).
    pub fn inside(&self, a: NodeId, b: NodeId) -> bool {
        b.index() <= a.index() && a.index() < self.tree.subtree_end(b)
    }

    /// `before(a, b)`: `a` ends before `b` starts (neither contains the other).
    pub fn before(&self, a: NodeId, b: NodeId) -> bool {
        a.index() < b.index() && self.tree.subtree_end(a) <= b.index()
    }

    /// Whether a symbolic leaf lies strictly between the end of `a` and `b`.
    pub fn leaf_between(&self, a: NodeId, b: NodeId) -> bool {
        (self.tree.subtree_end(a)..b.index()).any(|i| self.leaf[i])
    }

    /// The symbolic proper ancestors of `node`, nearest first.
    pub fn ancestors(&self, node: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.parent(node), move |&p| self.parent(p))
    }
}
