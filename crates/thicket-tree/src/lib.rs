//! # thicket-tree
//!
//! Derivation trees: what generation produces and parsing will produce, so that trees
//! from both sides can be compared, measured and mutated alike.
//!
//! A [`DerivationTree`] is an arena of nodes in preorder. Every node instantiates one node
//! of the grammar graph (an [`ExprId`]): the root instantiates [`Grammar::root`], a
//! `Ref` node has one child (its rule's body), an `Alt` node exactly one child (the chosen
//! alternative), a `Seq` node one child per item, a `Repeat` node one child per
//! repetition, and terminals are leaves. The text of every subtree is one contiguous
//! slice of the tree's output bytes, so `str(t)` of any subtree costs nothing.
//!
//! Trees are built through the [`TreeSink`] events `open` / `terminal` / `close`; a
//! generator that only needs bytes feeds the same events into a [`ByteSink`] instead and
//! never builds a tree.

#![warn(missing_docs)]

use thicket_grammar::{Expr, ExprId, Grammar};

/// Index of a node in a [`DerivationTree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// Position of the node in preorder.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The node at preorder position `index` (of some tree; the caller keeps it in
    /// bounds).
    pub fn from_index(index: usize) -> NodeId {
        NodeId(index as u32)
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    expr: ExprId,
    /// One past the last node of this subtree (preorder), i.e. the next sibling's index.
    end: u32,
    text_start: u32,
    text_end: u32,
}

/// A derivation tree in preorder. See the crate docs for the shape.
#[derive(Clone, Debug)]
pub struct DerivationTree {
    nodes: Vec<Node>,
    text: Vec<u8>,
}

impl DerivationTree {
    /// The root node.
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no nodes (never true for a finished tree).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The grammar node a tree node instantiates.
    pub fn expr(&self, node: NodeId) -> ExprId {
        self.nodes[node.index()].expr
    }

    /// The bytes the subtree derives.
    pub fn text(&self, node: NodeId) -> &[u8] {
        let n = &self.nodes[node.index()];
        &self.text[n.text_start as usize..n.text_end as usize]
    }

    /// Byte range of the subtree's text within [`DerivationTree::bytes`].
    pub fn text_range(&self, node: NodeId) -> std::ops::Range<usize> {
        let n = &self.nodes[node.index()];
        n.text_start as usize..n.text_end as usize
    }

    /// The whole derived input (the unparse of the tree).
    pub fn bytes(&self) -> &[u8] {
        &self.text
    }

    /// The children of a node, in order.
    pub fn children(&self, node: NodeId) -> Children<'_> {
        Children {
            tree: self,
            next: node.0 + 1,
            end: self.nodes[node.index()].end,
        }
    }

    /// One past the last node of the subtree, in preorder (the next sibling's index).
    pub fn subtree_end(&self, node: NodeId) -> usize {
        self.nodes[node.index()].end as usize
    }

    /// All nodes of the subtree in preorder, the node itself first.
    pub fn descendants(&self, node: NodeId) -> impl Iterator<Item = NodeId> + use<> {
        (node.0..self.nodes[node.index()].end).map(NodeId)
    }

    /// Maximal number of rule expansions (`Ref` nodes) on a root-to-leaf path: the
    /// measure `--max-depth` bounds.
    pub fn depth(&self, grammar: &Grammar) -> u32 {
        let mut max = 0;
        // (end of subtree, depth inside it) for the open ancestors.
        let mut open: Vec<(u32, u32)> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            while open.last().is_some_and(|&(end, _)| end <= i as u32) {
                open.pop();
            }
            let outer = open.last().map_or(0, |&(_, d)| d);
            let d = outer + u32::from(matches!(grammar.expr(n.expr), Expr::Ref(_)));
            max = max.max(d);
            open.push((n.end, d));
        }
        max
    }

    /// Walks the rule and terminal nodes in preorder, flattening the synthetic ones
    /// (alternatives, groups, repetitions) away, as tools without EBNF expect. Iterative,
    /// so deep trees cannot overflow the stack.
    pub fn walk_symbolic(&self, grammar: &Grammar, mut visit: impl FnMut(SymbolicEvent<'_>)) {
        let mut open_ends: Vec<u32> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            while open_ends.last().is_some_and(|&end| end <= i as u32) {
                open_ends.pop();
                visit(SymbolicEvent::Close);
            }
            match grammar.expr(n.expr) {
                Expr::Ref(s) => {
                    visit(SymbolicEvent::Open(grammar.display_symbol(*s)));
                    open_ends.push(n.end);
                }
                Expr::Literal(_) | Expr::Regex(_) => visit(SymbolicEvent::Terminal(
                    &self.text[n.text_start as usize..n.text_end as usize],
                )),
                Expr::Alt(_) | Expr::Seq(_) | Expr::Repeat(_) => {}
            }
        }
        for _ in open_ends {
            visit(SymbolicEvent::Close);
        }
    }

    /// The tree in the fuzzingbook/ISLa JSON form, `["<start>", [children...]]`, where a
    /// terminal is `["text", []]`; synthetic nodes are flattened away (see
    /// [`DerivationTree::walk_symbolic`]). Text that is not UTF-8 is written lossily.
    pub fn to_fuzzingbook_json(&self, grammar: &Grammar) -> String {
        let mut out = String::with_capacity(self.text.len() * 4 + 16);
        let mut first_in_list = true;
        let item = |out: &mut String, first: &mut bool, label: &str| {
            if !*first {
                out.push(',');
            }
            out.push('[');
            out.push_str(&serde_json::to_string(label).expect("strings serialize"));
            out.push_str(",[");
        };
        self.walk_symbolic(grammar, |event| match event {
            SymbolicEvent::Open(name) => {
                item(&mut out, &mut first_in_list, &name);
                first_in_list = true;
            }
            SymbolicEvent::Terminal(bytes) => {
                item(
                    &mut out,
                    &mut first_in_list,
                    &String::from_utf8_lossy(bytes),
                );
                out.push_str("]]");
                first_in_list = false;
            }
            SymbolicEvent::Close => {
                out.push_str("]]");
                first_in_list = false;
            }
        });
        out
    }

    /// The tree as indented text, one node per line: rules by name, terminals quoted.
    pub fn to_indented(&self, grammar: &Grammar) -> String {
        let mut out = String::new();
        let mut depth = 0usize;
        self.walk_symbolic(grammar, |event| match event {
            SymbolicEvent::Open(name) => {
                out.push_str(&"  ".repeat(depth));
                out.push_str(&name);
                out.push('\n');
                depth += 1;
            }
            SymbolicEvent::Terminal(bytes) => {
                out.push_str(&"  ".repeat(depth));
                out.push_str(&quote(bytes));
                out.push('\n');
            }
            SymbolicEvent::Close => depth -= 1,
        });
        out
    }

    /// The tree as an S-expression: `(<start> (<digit> "1"))`.
    pub fn to_sexp(&self, grammar: &Grammar) -> String {
        let mut out = String::new();
        self.walk_symbolic(grammar, |event| match event {
            SymbolicEvent::Open(name) => {
                if !out.is_empty() && !out.ends_with('(') {
                    out.push(' ');
                }
                out.push('(');
                out.push_str(&name);
            }
            SymbolicEvent::Terminal(bytes) => {
                out.push(' ');
                out.push_str(&quote(bytes));
            }
            SymbolicEvent::Close => out.push(')'),
        });
        out
    }

    /// The tree in Graphviz DOT.
    pub fn to_dot(&self, grammar: &Grammar) -> String {
        let mut out = String::from("digraph tree {\n  node [shape=box, fontname=monospace];\n");
        let mut parents: Vec<usize> = Vec::new();
        let mut next = 0usize;
        self.walk_symbolic(grammar, |event| {
            let label = match &event {
                SymbolicEvent::Open(name) => name.clone(),
                SymbolicEvent::Terminal(bytes) => quote(bytes),
                SymbolicEvent::Close => {
                    parents.pop();
                    return;
                }
            };
            let id = next;
            next += 1;
            let shape = if matches!(event, SymbolicEvent::Terminal(_)) {
                ", shape=plaintext"
            } else {
                ""
            };
            out.push_str(&format!(
                "  n{id} [label={}{shape}];\n",
                serde_json::to_string(&label).expect("strings serialize")
            ));
            if let Some(parent) = parents.last() {
                out.push_str(&format!("  n{parent} -> n{id};\n"));
            }
            if matches!(event, SymbolicEvent::Open(_)) {
                parents.push(id);
            }
        });
        out.push_str("}\n");
        out
    }
}

/// What [`DerivationTree::walk_symbolic`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolicEvent<'a> {
    /// A rule node starts (`<name>`).
    Open(String),
    /// A terminal leaf with its bytes.
    Terminal(&'a [u8]),
    /// The innermost open rule node ends.
    Close,
}

/// A terminal's text in spec syntax (`"..."` with escapes; non-UTF-8 bytes as `\xHH`).
fn quote(bytes: &[u8]) -> String {
    thicket_grammar::grammar::quote_bytes(bytes)
}

/// Iterator over the children of a node.
pub struct Children<'a> {
    tree: &'a DerivationTree,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let id = NodeId(self.next);
        self.next = self.tree.nodes[id.index()].end;
        Some(id)
    }
}

/// Receives a derivation in preorder: `open` a node, its children, `close` it; terminals
/// are leaves announced with their bytes.
pub trait TreeSink {
    /// Whether the sink uses `open`/`close` at all. A producer may skip those calls (and
    /// the bookkeeping behind them) when this is `false`.
    const STRUCTURED: bool = true;

    /// Starts a node instantiating `expr`.
    fn open(&mut self, expr: ExprId);
    /// A terminal leaf instantiating `expr` that derives `bytes`.
    fn terminal(&mut self, expr: ExprId, bytes: &[u8]);
    /// Ends the most recently opened node.
    fn close(&mut self);

    /// A terminal leaf whose bytes `fill` appends to a buffer (`scratch` unless the sink
    /// can take them in place).
    #[inline]
    fn terminal_with(
        &mut self,
        expr: ExprId,
        scratch: &mut Vec<u8>,
        fill: impl FnOnce(&mut Vec<u8>),
    ) {
        scratch.clear();
        fill(scratch);
        self.terminal(expr, scratch);
    }
}

/// Builds a [`DerivationTree`] from sink events.
#[derive(Debug, Default)]
pub struct TreeBuilder {
    nodes: Vec<Node>,
    text: Vec<u8>,
    open: Vec<u32>,
}

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> TreeBuilder {
        TreeBuilder::default()
    }

    /// The finished tree.
    ///
    /// # Panics
    /// If a node is still open or nothing was built: both are bugs in the producer.
    pub fn finish(self) -> DerivationTree {
        assert!(self.open.is_empty(), "tree finished with open nodes");
        assert!(!self.nodes.is_empty(), "tree finished without nodes");
        DerivationTree {
            nodes: self.nodes,
            text: self.text,
        }
    }

    /// Text derived so far.
    pub fn bytes(&self) -> &[u8] {
        &self.text
    }

    /// Number of nodes so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

impl TreeSink for TreeBuilder {
    fn open(&mut self, expr: ExprId) {
        let at = self.text.len() as u32;
        self.open.push(self.nodes.len() as u32);
        self.nodes.push(Node {
            expr,
            end: 0,
            text_start: at,
            text_end: at,
        });
    }

    fn terminal(&mut self, expr: ExprId, bytes: &[u8]) {
        let start = self.text.len() as u32;
        self.text.extend_from_slice(bytes);
        let end = self.nodes.len() as u32 + 1;
        self.nodes.push(Node {
            expr,
            end,
            text_start: start,
            text_end: self.text.len() as u32,
        });
    }

    fn close(&mut self) {
        let index = self.open.pop().expect("close without open") as usize;
        let end = self.nodes.len() as u32;
        let text_end = self.text.len() as u32;
        let node = &mut self.nodes[index];
        node.end = end;
        node.text_end = text_end;
    }
}

/// A sink that keeps only the derived bytes: generation without building a tree.
#[derive(Debug, Default)]
pub struct ByteSink {
    /// The bytes derived so far.
    pub bytes: Vec<u8>,
}

impl TreeSink for ByteSink {
    const STRUCTURED: bool = false;

    #[inline]
    fn terminal_with(
        &mut self,
        _expr: ExprId,
        _scratch: &mut Vec<u8>,
        fill: impl FnOnce(&mut Vec<u8>),
    ) {
        fill(&mut self.bytes);
    }

    #[inline]
    fn open(&mut self, _expr: ExprId) {}

    #[inline]
    fn terminal(&mut self, _expr: ExprId, bytes: &[u8]) {
        // Most terminals are one byte; a push avoids a call to memcpy.
        if let [byte] = bytes {
            self.bytes.push(*byte);
        } else {
            self.bytes.extend_from_slice(bytes);
        }
    }

    #[inline]
    fn close(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_grammar::load_spec_text;

    /// Builds the tree of `"a" "b"*` deriving "abb" by hand.
    #[test]
    fn builder_records_structure_and_text() {
        let g = load_spec_text("t", b"<start> ::= \"a\" <b>*\n<b> ::= \"b\"").unwrap();
        let body = g.rule(g.start()).body;
        let Expr::Seq(items) = g.expr(body) else {
            panic!()
        };
        let (a, rep) = (items[0], items[1]);
        let Expr::Repeat(r) = g.expr(rep) else {
            panic!()
        };
        let b_body = g.rule(g.symbol("b").unwrap()).body;
        let mut t = TreeBuilder::new();
        t.open(g.root());
        t.open(body);
        t.terminal(a, b"a");
        t.open(rep);
        for _ in 0..2 {
            t.open(r.item);
            t.terminal(b_body, b"b");
            t.close();
        }
        t.close();
        t.close();
        t.close();
        let tree = t.finish();
        assert_eq!(tree.bytes(), b"abb");
        assert_eq!(tree.len(), 8);
        let seq = tree.children(tree.root()).next().unwrap();
        let kids: Vec<_> = tree.children(seq).collect();
        assert_eq!(kids.len(), 2);
        assert_eq!(tree.text(kids[1]), b"bb");
        assert_eq!(tree.children(kids[1]).count(), 2);
        assert_eq!(tree.depth(&g), 2);
        assert_eq!(
            tree.to_fuzzingbook_json(&g),
            r#"["<start>",[["a",[]],["<b>",[["b",[]]]],["<b>",[["b",[]]]]]]"#
        );
        assert_eq!(tree.to_sexp(&g), r#"(<start> "a" (<b> "b") (<b> "b"))"#);
        assert_eq!(
            tree.to_indented(&g),
            "<start>\n  \"a\"\n  <b>\n    \"b\"\n  <b>\n    \"b\"\n"
        );
        let dot = tree.to_dot(&g);
        assert_eq!(dot.matches(" -> ").count(), 5, "{dot}");
    }
}
