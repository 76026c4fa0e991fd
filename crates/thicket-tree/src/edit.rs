//! Editing trees: copying a subtree into a sink (under another occurrence of its rule),
//! replacing subtrees by new ones, and the depth at which a node sits. A tree is an
//! immutable preorder arena, so an edit writes a new tree in one pass; what callers
//! edit (mutation, constraint repair) is small next to what they generate.

use crate::{DerivationTree, NodeId, TreeBuilder, TreeSink};
use thicket_grammar::{Expr, ExprId, Grammar};

impl DerivationTree {
    /// Emits the subtree at `node` into `sink` in preorder, its root instantiating
    /// `root_expr` instead of its own expression (to graft it under another occurrence
    /// of the same rule; pass `self.expr(node)` to copy it as it is).
    pub fn emit_subtree<S: TreeSink + ?Sized>(
        &self,
        grammar: &Grammar,
        node: NodeId,
        root_expr: ExprId,
        sink: &mut S,
    ) {
        self.emit_with_holes(grammar, node, root_expr, &[], sink, &mut |_, _| {});
    }

    /// Emits the subtree at `node` like [`DerivationTree::emit_subtree`], with the
    /// subtrees at `holes` (sorted by index, disjoint, all inside the subtree) replaced
    /// by what `fill(i, sink)` emits for `holes[i]`.
    pub fn emit_with_holes<S: TreeSink + ?Sized>(
        &self,
        grammar: &Grammar,
        node: NodeId,
        root_expr: ExprId,
        holes: &[NodeId],
        sink: &mut S,
        fill: &mut dyn FnMut(usize, &mut S),
    ) {
        let mut open_ends: Vec<usize> = Vec::new();
        let mut next_hole = 0;
        let mut current = node.index();
        let end = self.subtree_end(node);
        while current < end {
            while open_ends.last().is_some_and(|&e| e <= current) {
                open_ends.pop();
                sink.close();
            }
            let id = NodeId::from_index(current);
            if holes.get(next_hole) == Some(&id) {
                fill(next_hole, sink);
                next_hole += 1;
                current = self.subtree_end(id);
                continue;
            }
            let expr = if id == node { root_expr } else { self.expr(id) };
            match grammar.expr(expr) {
                Expr::Literal(_) | Expr::Regex(_) => sink.terminal(expr, self.text(id)),
                _ => {
                    sink.open(expr);
                    open_ends.push(self.subtree_end(id));
                }
            }
            current += 1;
        }
        for _ in open_ends {
            sink.close();
        }
    }

    /// A copy of the tree with the subtree at each of `holes` replaced by what
    /// `fill(i, builder)` emits for `holes[i]` (one complete subtree, normally of the
    /// hole's expression, so that the result is again a derivation tree of the
    /// grammar). Holes may come in any order; a hole inside another hole's subtree is
    /// replaced along with it (its `fill` is not called).
    pub fn replace_subtrees(
        &self,
        grammar: &Grammar,
        holes: &[NodeId],
        fill: &mut dyn FnMut(usize, &mut TreeBuilder),
    ) -> DerivationTree {
        let mut order: Vec<usize> = (0..holes.len()).collect();
        order.sort_by_key(|&i| holes[i]);
        // Keep only outermost holes, in preorder.
        let mut kept: Vec<usize> = Vec::with_capacity(order.len());
        for i in order {
            let inside_kept = kept
                .last()
                .is_some_and(|&k| holes[i].index() < self.subtree_end(holes[k]));
            if !inside_kept {
                kept.push(i);
            }
        }
        let sorted: Vec<NodeId> = kept.iter().map(|&i| holes[i]).collect();
        let mut builder = TreeBuilder::new();
        self.emit_with_holes(
            grammar,
            self.root(),
            self.expr(self.root()),
            &sorted,
            &mut builder,
            &mut |n, sink| fill(kept[n], sink),
        );
        builder.finish()
    }

    /// Rule expansions (`Ref` nodes) strictly above `node`: the depth at which a
    /// generator would expand it.
    pub fn depth_above(&self, grammar: &Grammar, node: NodeId) -> u32 {
        let path = self.path_to(node);
        path[..path.len() - 1]
            .iter()
            .filter(|&&n| matches!(grammar.expr(self.expr(n)), Expr::Ref(_)))
            .count() as u32
    }

    /// The nodes on the path from the root down to `node`, the root first and `node`
    /// last.
    pub fn path_to(&self, node: NodeId) -> Vec<NodeId> {
        let mut path = vec![self.root()];
        let mut current = self.root();
        while current != node {
            match self
                .children(current)
                .find(|&c| c.index() <= node.index() && node.index() < self.subtree_end(c))
            {
                Some(child) => {
                    path.push(child);
                    current = child;
                }
                None => break,
            }
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use crate::{DerivationTree, NodeId, TreeBuilder, TreeSink};
    use thicket_grammar::{Expr, Grammar, load_spec_bytes};

    fn grammar() -> Grammar {
        load_spec_bytes(
            "t.fan",
            b"<start> ::= <pair> <pair>\n<pair> ::= <d> \"=\" <d>\n<d> ::= \"0\" | \"1\"\n",
            &Default::default(),
        )
        .unwrap()
        .grammar
    }

    /// The tree of `00` digits given, built by hand through the grammar.
    fn tree(g: &Grammar, digits: &[u8; 4]) -> DerivationTree {
        let start_body = g.rule(g.start()).body;
        let Expr::Seq(pairs) = g.expr(start_body).clone() else {
            panic!()
        };
        let mut b = TreeBuilder::new();
        b.open(g.root());
        b.open(start_body);
        for (p, pair_ref) in pairs.iter().enumerate() {
            b.open(*pair_ref);
            let Expr::Ref(pair) = g.expr(*pair_ref) else {
                panic!()
            };
            let body = g.rule(*pair).body;
            let Expr::Seq(items) = g.expr(body).clone() else {
                panic!()
            };
            b.open(body);
            for (i, item) in items.iter().enumerate() {
                match g.expr(*item) {
                    Expr::Literal(_) => b.terminal(*item, b"="),
                    Expr::Ref(d) => {
                        b.open(*item);
                        let alt = g.rule(*d).body;
                        let Expr::Alt(choices) = g.expr(alt).clone() else {
                            panic!()
                        };
                        b.open(alt);
                        let digit = digits[p * 2 + i / 2];
                        let choice = choices[usize::from(digit - b'0')];
                        b.terminal(choice, &[digit]);
                        b.close();
                        b.close();
                    }
                    _ => panic!(),
                }
            }
            b.close();
            b.close();
        }
        b.close();
        b.close();
        b.finish()
    }

    fn first_of(g: &Grammar, t: &DerivationTree, name: &str, skip: usize) -> NodeId {
        let symbol = g
            .symbol(name.trim_matches(|c| c == '<' || c == '>'))
            .unwrap();
        t.descendants(t.root())
            .filter(|&n| matches!(g.expr(t.expr(n)), Expr::Ref(s) if *s == symbol))
            .nth(skip)
            .unwrap()
    }

    #[test]
    fn replaces_disjoint_subtrees_in_one_pass() {
        let g = grammar();
        let t = tree(&g, b"0101");
        assert_eq!(t.bytes(), b"0=10=1");
        let donor = tree(&g, b"1111");
        let first_d = first_of(&g, &t, "<d>", 0);
        let last_d = first_of(&g, &t, "<d>", 3);
        let donor_d = first_of(&g, &donor, "<d>", 0);
        // Given in reverse order: the result does not depend on it.
        let edited = t.replace_subtrees(&g, &[last_d, first_d], &mut |i, sink| {
            let at = [last_d, first_d][i];
            donor.emit_subtree(&g, donor_d, t.expr(at), sink);
        });
        assert_eq!(edited.bytes(), b"1=10=1");
        assert_eq!(edited.len(), t.len());
        // The copy is a tree of the grammar: same shape as a tree built for its text.
        let expected = tree(&g, b"1101");
        let shape = |t: &DerivationTree| {
            t.descendants(t.root())
                .map(|n| (t.expr(n), t.subtree_end(n)))
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&edited), shape(&expected));
    }

    #[test]
    fn a_hole_inside_another_goes_with_it() {
        let g = grammar();
        let t = tree(&g, b"0101");
        let donor = tree(&g, b"1111");
        let pair = first_of(&g, &t, "<pair>", 0);
        let inner = first_of(&g, &t, "<d>", 0);
        let donor_pair = first_of(&g, &donor, "<pair>", 0);
        let mut calls = Vec::new();
        let edited = t.replace_subtrees(&g, &[inner, pair], &mut |i, sink| {
            calls.push(i);
            donor.emit_subtree(&g, donor_pair, t.expr(pair), sink);
        });
        assert_eq!(calls, vec![1]);
        assert_eq!(edited.bytes(), b"1=10=1");
    }

    #[test]
    fn depth_and_path_of_a_node() {
        let g = grammar();
        let t = tree(&g, b"0101");
        let d = first_of(&g, &t, "<d>", 2);
        // root, <pair> above the <d>: the <d> itself is not counted.
        assert_eq!(t.depth_above(&g, d), 2);
        let path = t.path_to(d);
        assert_eq!(path.first(), Some(&t.root()));
        assert_eq!(path.last(), Some(&d));
        assert_eq!(t.depth_above(&g, t.root()), 0);
    }
}
