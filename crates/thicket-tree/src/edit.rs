//! Editing trees: copying a subtree into a sink (under another occurrence of its rule),
//! replacing subtrees by new ones, and the depth at which a node sits. A tree is an
//! immutable preorder arena, so an edit writes a new tree in one pass; what callers
//! edit (mutation, constraint repair) is small next to what they generate.

use crate::{DerivationTree, NO_NODE, Node, NodeId, TreeBuilder, TreeSink};
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
        sink.subtree(grammar, self, node, root_expr);
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

    /// A copy of the tree with the subtree at `hole` replaced by what `fill` emits (one
    /// complete subtree): [`DerivationTree::replace_subtrees`] for one hole, with the new
    /// subtree written straight into the copy. A mutation's new subtree can be most of
    /// the mutant (a recursion repeated a hundred times), and building it apart first
    /// wrote it twice and grew a second pair of vectors.
    ///
    /// # Panics
    /// If `fill` leaves a node open or emits nothing: a bug in the caller.
    pub fn replace_subtree(
        &self,
        hole: NodeId,
        fill: impl FnOnce(&mut TreeBuilder),
    ) -> DerivationTree {
        let (start, end) = (hole.index(), self.subtree_end(hole));
        let old_text = self.text_range(hole);
        // The nodes before the hole keep their places; only its ancestors' ends move.
        let mut nodes = Vec::with_capacity(self.nodes.len());
        nodes.extend_from_slice(&self.nodes[..start]);
        let mut text = Vec::with_capacity(self.text.len());
        text.extend_from_slice(&self.text[..old_text.start]);
        let mut builder = TreeBuilder {
            at: text.len(),
            nodes,
            text,
            ..TreeBuilder::default()
        };
        fill(&mut builder);
        assert!(builder.top == NO_NODE, "replacement left a node open");
        assert!(builder.nodes.len() > start, "replacement emitted nothing");
        let (mut nodes, mut text) = (
            std::mem::take(&mut builder.nodes),
            std::mem::take(&mut builder.text),
        );
        // Where the node after the hole's subtree, and its text, now start.
        let node_shift = nodes.len() as i64 - end as i64;
        let text_shift = text.len() as i64 - old_text.end as i64;
        for node in &mut nodes[..start] {
            if node.end as usize > start {
                node.end = (i64::from(node.end) + node_shift) as u32;
            }
        }
        nodes.extend(self.nodes[end..].iter().map(|n| Node {
            expr: n.expr,
            end: (i64::from(n.end) + node_shift) as u32,
            text_start: (i64::from(n.text_start) + text_shift) as u32,
        }));
        text.extend_from_slice(&self.text[old_text.end..]);
        DerivationTree { nodes, text }
    }

    /// A copy of the tree with the subtree at each of `holes` replaced by what
    /// `fill(i, builder)` emits for `holes[i]` (one complete subtree, normally of the
    /// hole's expression, so that the result is again a derivation tree of the
    /// grammar). Holes may come in any order; a hole inside another hole's subtree is
    /// replaced along with it (its `fill` is not called).
    pub fn replace_subtrees(
        &self,
        _grammar: &Grammar,
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
        // Each kept hole's new subtree, built on its own; then the tree is assembled in
        // one pass: the runs between holes are copied node by node with their `end` and
        // text offsets shifted by what the holes before them added (no sink events, no
        // stack of open nodes: a mutation copies whole trees, so this is the hot loop of
        // a fuzzing campaign).
        let parts: Vec<(NodeId, DerivationTree)> = kept
            .iter()
            .map(|&i| {
                let mut builder = TreeBuilder::new();
                fill(i, &mut builder);
                (holes[i], builder.finish())
            })
            .collect();
        let old_nodes = &self.nodes;
        // Per hole, in preorder: its start, and the nodes and bytes the tree has gained
        // up to and including it.
        let mut shifts: Vec<(u32, i64, i64)> = Vec::with_capacity(parts.len());
        let (mut node_delta, mut text_delta) = (0i64, 0i64);
        for (hole, part) in &parts {
            node_delta += part.nodes.len() as i64 - (self.subtree_end(*hole) - hole.index()) as i64;
            text_delta += part.text.len() as i64 - self.text_range(*hole).len() as i64;
            shifts.push((hole.0, node_delta, text_delta));
        }
        // Nodes gained by holes that start before old index `i`.
        let nodes_before = |i: u32| {
            shifts
                .iter()
                .take_while(|&&(start, _, _)| start < i)
                .last()
                .map_or(0, |&(_, d, _)| d)
        };
        let mut nodes: Vec<Node> =
            Vec::with_capacity((old_nodes.len() as i64 + node_delta).max(0) as usize);
        let mut text: Vec<u8> =
            Vec::with_capacity((self.text.len() as i64 + text_delta).max(0) as usize);
        let copy_run = |from: usize, to: usize, nodes: &mut Vec<Node>, text: &mut Vec<u8>| {
            if from >= to {
                return;
            }
            let text_shift = text.len() as i64 - i64::from(old_nodes[from].text_start);
            for node in &old_nodes[from..to] {
                nodes.push(Node {
                    expr: node.expr,
                    end: (i64::from(node.end) + nodes_before(node.end)) as u32,
                    text_start: (i64::from(node.text_start) + text_shift) as u32,
                });
            }
            let text_end = old_nodes
                .get(to)
                .map_or(self.text.len(), |n| n.text_start as usize);
            text.extend_from_slice(&self.text[old_nodes[from].text_start as usize..text_end]);
        };
        let mut next = 0usize;
        for (hole, part) in &parts {
            copy_run(next, hole.index(), &mut nodes, &mut text);
            let (base, at) = (nodes.len() as u32, text.len() as u32);
            nodes.extend(part.nodes.iter().map(|&n| n.shifted(base, at)));
            text.extend_from_slice(&part.text);
            next = self.subtree_end(*hole);
        }
        copy_run(next, old_nodes.len(), &mut nodes, &mut text);
        DerivationTree { nodes, text }
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
    use thicket_grammar::{Expr, ExprId, Grammar, load_spec_bytes};

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

    /// A sink that takes the default, event-by-event `subtree`.
    struct Events(TreeBuilder);

    impl TreeSink for Events {
        fn open(&mut self, expr: thicket_grammar::ExprId) {
            self.0.open(expr);
        }
        fn terminal(&mut self, expr: thicket_grammar::ExprId, bytes: &[u8]) {
            self.0.terminal(expr, bytes);
        }
        fn close(&mut self) {
            self.0.close();
        }
    }

    /// Each node's expression, subtree end and text range: what makes two trees the
    /// same.
    fn layout(t: &DerivationTree) -> Vec<(ExprId, usize, std::ops::Range<usize>)> {
        t.descendants(t.root())
            .map(|n| (t.expr(n), t.subtree_end(n), t.text_range(n)))
            .collect()
    }

    #[test]
    fn a_builder_copies_subtrees_as_the_events_would_build_them() {
        let g = grammar();
        let t = tree(&g, b"0110");
        // Every subtree, copied after some nodes and text already built; rule nodes
        // under another expression at their root.
        for node in t.descendants(t.root()) {
            let (mut fast, mut slow) = (TreeBuilder::new(), Events(TreeBuilder::new()));
            let other = g.root();
            fast.open(other);
            slow.open(other);
            fast.terminal(other, b"ab");
            slow.terminal(other, b"ab");
            let root_expr = match g.expr(t.expr(node)) {
                Expr::Literal(_) | Expr::Regex(_) => t.expr(node),
                _ => other,
            };
            t.emit_subtree(&g, node, root_expr, &mut fast);
            t.emit_subtree(&g, node, root_expr, &mut slow);
            fast.close();
            slow.close();
            let (fast, slow) = (fast.finish(), slow.0.finish());
            assert_eq!(layout(&fast), layout(&slow), "subtree at {node:?}");
            assert_eq!(fast.bytes(), slow.bytes());
        }
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
    fn replacements_that_grow_and_shrink_match_the_sink_built_tree() {
        let g = grammar();
        let t = tree(&g, b"0110");
        let donor = tree(&g, b"1001");
        let nodes: Vec<NodeId> = t.descendants(t.root()).skip(1).collect();
        // Every pair of nodes as holes (nested pairs too), each filled with something
        // smaller (one terminal) or larger (the donor's whole tree) than what it replaces.
        for (a, &x) in nodes.iter().enumerate() {
            for &y in &nodes[a..] {
                for sizes in [[0, 0], [0, 1], [1, 0], [1, 1]] {
                    let holes = [y, x];
                    let mut fill = |i: usize, sink: &mut TreeBuilder| {
                        if sizes[i] == 0 {
                            sink.terminal(t.expr(holes[i]), b"xy");
                        } else {
                            donor.emit_subtree(&g, donor.root(), t.expr(holes[i]), sink);
                        }
                    };
                    let fast = t.replace_subtrees(&g, &holes, &mut fill);
                    // The reference: the same edit through sink events.
                    let mut sorted: Vec<(NodeId, usize)> = vec![(x, 1), (y, 0)];
                    sorted.sort();
                    sorted.dedup_by_key(|e| e.0);
                    let outer: Vec<(NodeId, usize)> = sorted
                        .iter()
                        .copied()
                        .filter(|&(n, _)| {
                            !sorted
                                .iter()
                                .any(|&(m, _)| m < n && n.index() < t.subtree_end(m))
                        })
                        .collect();
                    let mut b = TreeBuilder::new();
                    let at: Vec<NodeId> = outer.iter().map(|e| e.0).collect();
                    t.emit_with_holes(&g, t.root(), t.expr(t.root()), &at, &mut b, &mut |n, s| {
                        fill(outer[n].1, s)
                    });
                    let reference = b.finish();
                    assert_eq!(fast.bytes(), reference.bytes(), "{x:?} {y:?} {sizes:?}");
                    assert_eq!(layout(&fast), layout(&reference), "{x:?} {y:?} {sizes:?}");
                }
            }
        }
    }

    #[test]
    fn one_hole_replaced_in_place_matches_the_general_replacement() {
        let g = grammar();
        let t = tree(&g, b"0110");
        let donor = tree(&g, b"1001");
        // Every node as the hole (the root too), filled with less (one terminal, or no
        // text) or more (the donor's whole tree) than it held.
        for hole in t.descendants(t.root()) {
            for size in 0..3 {
                let fill = |sink: &mut TreeBuilder| match size {
                    0 => sink.terminal(t.expr(hole), b"xy"),
                    1 => sink.terminal(t.expr(hole), b""),
                    _ => donor.emit_subtree(&g, donor.root(), t.expr(hole), sink),
                };
                let fast = t.replace_subtree(hole, fill);
                let reference = t.replace_subtrees(&g, &[hole], &mut |_, sink| fill(sink));
                assert_eq!(fast.bytes(), reference.bytes(), "{hole:?} {size}");
                assert_eq!(layout(&fast), layout(&reference), "{hole:?} {size}");
            }
        }
    }

    #[test]
    fn a_subtree_copied_around_a_hole_matches_the_events() {
        let g = grammar();
        let t = tree(&g, b"0110");
        // Every node with every node strictly inside it as the hole, after some nodes
        // already built; the hole filled by the same copy again (nested, as recursive
        // mutation pumps) or by a terminal.
        for node in t.descendants(t.root()) {
            for hole in t.descendants(node).skip(1) {
                for nested in [false, true] {
                    let (mut fast, mut slow) = (TreeBuilder::new(), Events(TreeBuilder::new()));
                    let other = g.root();
                    fast.open(other);
                    slow.open(other);
                    fast.terminal(other, b"ab");
                    slow.terminal(other, b"ab");
                    let root_expr = t.expr(node);
                    fast.push_subtree_with_hole(&t, node, root_expr, hole, |b| {
                        if nested {
                            b.push_subtree_with_hole(&t, node, root_expr, hole, |b| {
                                b.terminal(t.expr(hole), b"z")
                            });
                        } else {
                            b.terminal(t.expr(hole), b"z");
                        }
                    });
                    t.emit_with_holes(&g, node, root_expr, &[hole], &mut slow, &mut |_, s| {
                        if nested {
                            t.emit_with_holes(&g, node, root_expr, &[hole], s, &mut |_, s| {
                                s.terminal(t.expr(hole), b"z")
                            });
                        } else {
                            s.terminal(t.expr(hole), b"z");
                        }
                    });
                    fast.terminal(other, b"c");
                    slow.terminal(other, b"c");
                    fast.close();
                    slow.close();
                    let (fast, slow) = (fast.finish(), slow.0.finish());
                    assert_eq!(fast.bytes(), slow.bytes(), "{node:?} {hole:?} {nested}");
                    assert_eq!(layout(&fast), layout(&slow), "{node:?} {hole:?} {nested}");
                }
            }
        }
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
