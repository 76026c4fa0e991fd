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

mod edit;
mod render;

pub use render::{MAX_INDENT_DEPTH, Renderer, Rendering};
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
    /// Where the subtree's text starts. Where it ends is not stored: a subtree's text is
    /// followed by that of the next node in preorder (or ends the text), so it ends
    /// where node `end` starts (12 bytes per node rather than 16).
    text_start: u32,
}

impl Node {
    /// The node moved into a run that starts at node `base` and text offset `at` (a
    /// recorded node grafted).
    #[inline]
    fn shifted(self, base: u32, at: u32) -> Node {
        Node {
            expr: self.expr,
            end: self.end + base,
            text_start: self.text_start + at,
        }
    }
}

/// Where the text of `nodes[index]` ends, in a preorder run of nodes deriving
/// `text_len` bytes (see [`Node::text_start`]).
#[inline]
fn text_end(nodes: &[Node], index: usize, text_len: usize) -> usize {
    nodes
        .get(nodes[index].end as usize)
        .map_or(text_len, |next| next.text_start as usize)
}

/// A derivation tree in preorder. See the crate docs for the shape.
#[derive(Clone, Debug)]
pub struct DerivationTree {
    nodes: Vec<Node>,
    text: Vec<u8>,
}

/// Node vectors of dropped trees, for the next trees read out of a parse
/// ([`TreeBuilder::with_text`]): a large tree's nodes are fresh memory, and on a VM each
/// fresh page costs microseconds (writing a parse tree into fresh memory took as long
/// as reading it out of the chart). Only vectors malloc would return to the system are
/// kept (smaller ones it reuses itself), at most [`keep_spare_nodes`]'s limit in all:
/// none unless a program asks (a library keeps no process-wide memory by itself; the
/// `thicket` binary keeps up to 128 MiB).
static SPARE_NODES: std::sync::Mutex<Vec<Vec<Node>>> = std::sync::Mutex::new(Vec::new());

/// The limit of [`SPARE_NODES`], in bytes of capacity (0: the pool is off).
static SPARE_NODE_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Smaller node vectors are not kept (the allocator reuses their memory itself).
const MIN_SPARE_NODE_BYTES: usize = 128 << 10;

/// Most node vectors kept (about one per thread reading trees at once).
const MAX_SPARE_NODES: usize = 8;

/// Keeps the node vectors of dropped large trees (128 KiB or more each, up to `bytes`
/// in all, at most 8) for the next trees read out of parses, so that a process reading
/// many large trees writes them into memory already mapped rather than fresh pages.
/// Process-wide; off (0) unless a program turns it on (128 MiB holds a tree of about 5
/// million nodes read in two parts). Lowering the limit frees what no longer fits;
/// `keep_spare_nodes(0)` frees everything kept.
pub fn keep_spare_nodes(bytes: usize) {
    SPARE_NODE_BYTES.store(bytes, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut spares) = SPARE_NODES.lock() {
        let mut kept = 0;
        spares.retain(|v| {
            kept += v.capacity() * size_of::<Node>();
            kept <= bytes
        });
        if spares.is_empty() {
            *spares = Vec::new();
        }
    }
}

/// Frees the node vectors kept from dropped trees (see [`keep_spare_nodes`]), for a
/// long-running process that is done reading large trees; the pool stays on.
pub fn free_spare_nodes() {
    if let Ok(mut spares) = SPARE_NODES.lock() {
        *spares = Vec::new();
    }
}

/// The limit of the pool, 0 when it is off.
fn spare_node_limit() -> usize {
    SPARE_NODE_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// A kept node vector (emptied), or a new one.
fn take_spare_nodes() -> Vec<Node> {
    if spare_node_limit() == 0 {
        return Vec::new();
    }
    let spare = SPARE_NODES.lock().ok().and_then(|mut spares| spares.pop());
    spare.unwrap_or_default()
}

/// Keeps a node vector for the next tree, if the pool is on, the vector is large and
/// there is room.
fn keep_spare(mut nodes: Vec<Node>) {
    let bytes = nodes.capacity() * size_of::<Node>();
    let limit = spare_node_limit();
    if bytes < MIN_SPARE_NODE_BYTES || bytes > limit {
        return;
    }
    let Ok(mut spares) = SPARE_NODES.lock() else {
        return;
    };
    let kept: usize = spares
        .iter()
        .map(|v| v.capacity() * size_of::<Node>())
        .sum();
    if spares.len() < MAX_SPARE_NODES && kept + bytes <= limit {
        nodes.clear();
        spares.push(nodes);
    }
}

/// The memory a tree node takes, in bytes.
pub const NODE_BYTES: usize = size_of::<Node>();

/// Room for the nodes of a tree not read yet: a node vector reserved ahead, whose
/// memory another thread can fault in (see [`NodeRoom::addresses`]) while the input is
/// still being parsed, so that reading a large tree writes into memory already mapped
/// (on a VM a first touch of a page costs microseconds). Given to
/// [`TreeBuilder::with_text_in`]; a room never used is kept for later trees like the
/// nodes of a dropped tree.
pub struct NodeRoom(Vec<Node>);

impl NodeRoom {
    /// Room for `nodes` nodes (a kept vector of a dropped tree, or a new one), or less
    /// if the allocator refuses that much: the tree grows its vector as usual then.
    pub fn with_capacity(nodes: usize) -> NodeRoom {
        let mut room = NodeRoom::default();
        let _ = room.0.try_reserve(nodes);
        room
    }

    /// How many nodes fit.
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// The addresses of the room's memory, nothing of which is written yet: for faulting
    /// it in ahead (for instance with `madvise(MADV_POPULATE_WRITE)`, which does not
    /// change what the memory holds).
    pub fn addresses(&self) -> std::ops::Range<usize> {
        let start = self.0.as_ptr() as usize;
        start..start + self.0.capacity() * size_of::<Node>()
    }
}

impl Default for NodeRoom {
    /// Room as large as a kept vector of a dropped tree, or none yet.
    fn default() -> NodeRoom {
        NodeRoom(take_spare_nodes())
    }
}

impl Drop for NodeRoom {
    fn drop(&mut self) {
        keep_spare(std::mem::take(&mut self.0));
    }
}

impl Drop for DerivationTree {
    fn drop(&mut self) {
        keep_spare(std::mem::take(&mut self.nodes));
    }
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

    /// Hands back the memory reserved for nodes the tree did not need (a parser
    /// reserves a large input's tree from an estimate).
    pub fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
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
        &self.text[self.text_range(node)]
    }

    /// Byte range of the subtree's text within [`DerivationTree::bytes`].
    pub fn text_range(&self, node: NodeId) -> std::ops::Range<usize> {
        let start = self.nodes[node.index()].text_start as usize;
        start..text_end(&self.nodes, node.index(), self.text.len())
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
        // The subtree ends of the open `Ref` ancestors: only they add depth, so a node's
        // depth is their number (a campaign checks the depth of every spliced mutant,
        // so this walk stays light: no entry for the other nodes).
        let mut open: Vec<u32> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !matches!(grammar.expr(n.expr), Expr::Ref(_)) {
                continue;
            }
            while open.last().is_some_and(|&end| end <= i as u32) {
                open.pop();
            }
            open.push(n.end);
            max = max.max(open.len() as u32);
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
                Expr::Literal(_) | Expr::Regex(_) => {
                    visit(SymbolicEvent::Terminal(self.text(NodeId(i as u32))))
                }
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
        self.render_string(grammar, Rendering::FuzzingbookJson)
    }

    /// The tree as indented text, one node per line: rules by name, terminals quoted.
    /// Lines deeper than [`MAX_INDENT_DEPTH`] levels keep that indent and start with
    /// their depth, `[40] `, so the text stays linear in the tree's size.
    pub fn to_indented(&self, grammar: &Grammar) -> String {
        self.render_string(grammar, Rendering::Indented)
    }

    /// The tree as an S-expression: `(<start> (<digit> "1"))`.
    pub fn to_sexp(&self, grammar: &Grammar) -> String {
        self.render_string(grammar, Rendering::Sexp)
    }

    /// The tree in Graphviz DOT.
    pub fn to_dot(&self, grammar: &Grammar) -> String {
        self.render_string(grammar, Rendering::Dot)
    }

    /// Writes the tree in `rendering` to `out` as it walks it (nothing is rendered in
    /// memory first).
    pub fn render_to<W: std::io::Write>(
        &self,
        grammar: &Grammar,
        rendering: Rendering,
        out: W,
    ) -> std::io::Result<W> {
        let mut renderer = Renderer::new(grammar, rendering, out);
        // As sink events, so each rule's name is made once, not once per node (a
        // campaign writes the tree of every input it keeps).
        self.emit_subtree(grammar, self.root(), self.expr(self.root()), &mut renderer);
        renderer.finish()
    }

    fn render_string(&self, grammar: &Grammar, rendering: Rendering) -> String {
        let bytes = self
            .render_to(grammar, rendering, Vec::new())
            .expect("writing to memory cannot fail");
        // Every piece written is a `str` (names, quoted or lossy text), so the whole is.
        String::from_utf8(bytes).expect("renderings are UTF-8")
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

/// Bytes as text, the way constraints read them: UTF-8 where it is valid, and each byte
/// of an invalid sequence as the character of the same number (0xFF as `ÿ`, U+00FF), so
/// that no byte is lost or merged with another. Borrowed when the bytes are UTF-8.
pub fn text_of_bytes(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let mut rest = match std::str::from_utf8(bytes) {
        Ok(text) => return std::borrow::Cow::Borrowed(text),
        Err(_) => bytes,
    };
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 2);
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.push_str(std::str::from_utf8(&rest[..good]).expect("valid prefix"));
                let bad = e.error_len().unwrap_or(rest.len() - good);
                out.extend(rest[good..good + bad].iter().map(|&b| char::from(b)));
                rest = &rest[good + bad..];
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Bytes as lowercase hexadecimal, two digits a byte: how JSON output writes bytes that
/// are not UTF-8 (`_hex` fields).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
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

    /// Reports the subtrees of `recording` again, over `text` (which must be as long as
    /// the text they were recorded over; terminals take their bytes from it in order).
    /// By default one event at a time; a [`TreeBuilder`] appends them in one go.
    ///
    /// # Panics
    /// If `text` is not as long as the recorded text.
    fn graft(&mut self, recording: &Recording, text: &[u8]) {
        recording.replay(text, self);
    }

    /// Reports `tree`'s subtree at `node`, its root instantiating `root_expr` (see
    /// [`DerivationTree::emit_subtree`]). By default one event at a time; a
    /// [`TreeBuilder`] copies the nodes in one go.
    fn subtree(
        &mut self,
        grammar: &Grammar,
        tree: &DerivationTree,
        node: NodeId,
        root_expr: ExprId,
    ) {
        tree.emit_with_holes(grammar, node, root_expr, &[], self, &mut |_, _| {});
    }
}

/// No open node.
const NO_NODE: u32 = u32::MAX;

/// Builds a [`DerivationTree`] from sink events.
#[derive(Debug)]
pub struct TreeBuilder {
    nodes: Vec<Node>,
    /// The text derived so far, or with [`TreeBuilder::with_text`] the whole text, of
    /// which the first `at` bytes are derived so far.
    text: Vec<u8>,
    at: usize,
    /// Whether `text` was given up front.
    preset: bool,
    /// The innermost open node, `NO_NODE` if none. An open node's `end` holds the next
    /// open node out (the open nodes are a stack threaded through them).
    top: u32,
}

impl Default for TreeBuilder {
    fn default() -> TreeBuilder {
        TreeBuilder {
            nodes: Vec::new(),
            text: Vec::new(),
            at: 0,
            preset: false,
            top: NO_NODE,
        }
    }
}

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> TreeBuilder {
        TreeBuilder::default()
    }

    /// A builder for a tree whose text is known up front (a parse): terminals are
    /// checked against it rather than copied, and the finished tree must derive all of
    /// it.
    pub fn with_text(text: &[u8]) -> TreeBuilder {
        TreeBuilder::with_text_in(text, NodeRoom::default())
    }

    /// [`TreeBuilder::with_text`], writing its nodes into `room` (reserved ahead).
    pub fn with_text_in(text: &[u8], mut room: NodeRoom) -> TreeBuilder {
        TreeBuilder {
            nodes: std::mem::take(&mut room.0),
            text: text.to_vec(),
            preset: true,
            ..TreeBuilder::default()
        }
    }

    /// The finished tree.
    ///
    /// # Panics
    /// If a node is still open, nothing was built, or (with [`TreeBuilder::with_text`])
    /// the terminals did not spell the whole text: all are bugs in the producer.
    pub fn finish(self) -> DerivationTree {
        assert!(self.top == NO_NODE, "tree finished with open nodes");
        assert!(!self.nodes.is_empty(), "tree finished without nodes");
        assert!(
            self.at == self.text.len(),
            "tree finished before the end of its text"
        );
        DerivationTree {
            nodes: self.nodes,
            text: self.text,
        }
    }

    /// Appends what `part` built over the text that follows this builder's text so far
    /// (a [`TreeBuilder::with_text`] of it): its nodes, as siblings at the current place,
    /// after the nodes built here. Lets two threads build the two halves of a long run
    /// of siblings.
    ///
    /// # Panics
    /// If `part` has open nodes or did not spell its whole text, or its text is not the
    /// text that follows here.
    pub fn append(&mut self, mut part: TreeBuilder) {
        assert!(part.top == NO_NODE, "appended part has open nodes");
        assert!(part.at == part.text.len(), "appended part is unfinished");
        let (base, at) = (self.nodes.len() as u32, self.at as u32);
        self.nodes
            .extend(part.nodes.iter().map(|&node| node.shifted(base, at)));
        self.spell(&part.text);
        keep_spare(std::mem::take(&mut part.nodes));
    }

    /// Appends a copy of `tree`'s subtree at `node`, its root instantiating
    /// `root_expr`, at the current place: what [`DerivationTree::emit_subtree`] emits,
    /// copied in one go rather than node by node.
    fn push_subtree(&mut self, tree: &DerivationTree, node: NodeId, root_expr: ExprId) {
        let (start, end) = (node.index(), tree.subtree_end(node));
        let text = tree.text(node);
        let base = self.nodes.len() as i64 - start as i64;
        let at = self.at as i64 - i64::from(tree.nodes[start].text_start);
        self.nodes
            .extend(tree.nodes[start..end].iter().map(|n| Node {
                expr: n.expr,
                end: (i64::from(n.end) + base) as u32,
                text_start: (i64::from(n.text_start) + at) as u32,
            }));
        self.nodes[(start as i64 + base) as usize].expr = root_expr;
        self.spell(text);
    }

    /// Appends a copy of `tree`'s subtree at `node`, its root instantiating
    /// `root_expr`, with the subtree at `hole` (a node strictly inside it) replaced by
    /// what `fill` emits: [`DerivationTree::emit_with_holes`] for one hole, the runs
    /// before and after the hole copied node by node with their offsets shifted rather
    /// than replayed as sink events (a recursive mutation nests hundreds of these).
    ///
    /// # Panics
    /// If `hole` is not strictly inside `node`'s subtree, or `fill` leaves a node open.
    pub fn push_subtree_with_hole(
        &mut self,
        tree: &DerivationTree,
        node: NodeId,
        root_expr: ExprId,
        hole: NodeId,
        fill: impl FnOnce(&mut TreeBuilder),
    ) {
        let (start, end) = (node.index(), tree.subtree_end(node));
        let (inner, inner_end) = (hole.index(), tree.subtree_end(hole));
        assert!(
            start < inner && inner_end <= end,
            "the hole is not inside the subtree"
        );
        let old = &tree.nodes;
        // Before the hole: the hole's ancestors are opened (closed after the fill, at
        // their old ends), the other nodes copied with shifted offsets.
        let first = self.nodes.len() as u32;
        let base = i64::from(first) - start as i64;
        let at = self.at as i64 - i64::from(old[start].text_start);
        for (i, n) in old[start..inner].iter().enumerate() {
            let text_start = (i64::from(n.text_start) + at) as u32;
            let expr = if i == 0 { root_expr } else { n.expr };
            if n.end as usize > inner {
                let index = self.nodes.len() as u32;
                self.nodes.push(Node {
                    expr,
                    end: self.top,
                    text_start,
                });
                self.top = index;
            } else {
                self.nodes.push(Node {
                    expr,
                    end: (i64::from(n.end) + base) as u32,
                    text_start,
                });
            }
        }
        let hole_text = tree.text_range(hole);
        self.spell(&tree.text[old[start].text_start as usize..hole_text.start]);
        fill(self);
        // After the hole: an open ancestor (one of this call's, at or after `first`)
        // closes where its old subtree ended.
        let base = self.nodes.len() as i64 - inner_end as i64;
        let at = self.at as i64 - hole_text.end as i64;
        let old_end_of_top = |builder: &TreeBuilder| {
            (builder.top != NO_NODE && builder.top >= first).then(|| {
                old[(i64::from(builder.top) - (i64::from(first) - start as i64)) as usize].end
            })
        };
        for (i, n) in old.iter().enumerate().take(end).skip(inner_end) {
            while old_end_of_top(self).is_some_and(|e| e as usize <= i) {
                self.close();
            }
            self.nodes.push(Node {
                expr: n.expr,
                end: (i64::from(n.end) + base) as u32,
                text_start: (i64::from(n.text_start) + at) as u32,
            });
        }
        while old_end_of_top(self).is_some() {
            self.close();
        }
        let text_end = text_end(old, start, tree.text.len());
        self.spell(&tree.text[hole_text.end..text_end]);
    }

    /// Makes room for `nodes` more nodes and `bytes` more bytes of text, for a caller
    /// that knows how large what it emits will be (a mutation repeating a part of a
    /// tree), so the vectors grow once rather than by doubling, copying each time.
    pub fn reserve(&mut self, nodes: usize, bytes: usize) {
        self.nodes.reserve(nodes);
        if !self.preset {
            self.text.reserve(bytes);
        }
    }

    /// Text derived so far.
    pub fn bytes(&self) -> &[u8] {
        &self.text[..self.at]
    }

    /// Number of nodes so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Appends `bytes` to the text derived (or checks them against the preset text).
    #[inline]
    fn spell(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        if self.preset {
            // Most terminals are one byte: no call to memcmp for those.
            let same = match bytes {
                [byte] => self.text.get(self.at) == Some(byte),
                _ => self.text.get(self.at..end) == Some(bytes),
            };
            assert!(same, "terminal bytes differ from the tree's text");
        } else if let [byte] = bytes {
            self.text.push(*byte);
        } else {
            self.text.extend_from_slice(bytes);
        }
        self.at = end;
    }
}

impl TreeSink for TreeBuilder {
    #[inline]
    fn open(&mut self, expr: ExprId) {
        let at = self.at as u32;
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            expr,
            end: self.top,
            text_start: at,
        });
        self.top = index;
    }

    #[inline]
    fn terminal(&mut self, expr: ExprId, bytes: &[u8]) {
        let start = self.at as u32;
        self.spell(bytes);
        let end = self.nodes.len() as u32 + 1;
        self.nodes.push(Node {
            expr,
            end,
            text_start: start,
        });
    }

    #[inline]
    fn close(&mut self) {
        assert!(self.top != NO_NODE, "close without open");
        let end = self.nodes.len() as u32;
        let node = &mut self.nodes[self.top as usize];
        self.top = node.end;
        node.end = end;
    }

    fn subtree(&mut self, _: &Grammar, tree: &DerivationTree, node: NodeId, root_expr: ExprId) {
        self.push_subtree(tree, node, root_expr);
    }

    fn graft(&mut self, recording: &Recording, text: &[u8]) {
        let placed = recording.placed(text, self.nodes.len() as u32, self.at as u32);
        self.nodes.extend(placed.map(|(n, _)| n));
        self.spell(text);
    }
}

/// Complete subtrees recorded by a [`Recorder`], to be reported again over other text of
/// the same length with [`TreeSink::graft`] (a producer's cache of subtrees it would
/// otherwise build again).
#[derive(Clone, Debug)]
pub struct Recording {
    /// The nodes in preorder, `end` and text offsets relative to the recording's start;
    /// whether each is a terminal.
    nodes: Box<[(Node, bool)]>,
    text_len: u32,
}

impl Recording {
    /// The recorded nodes placed at node `base` and text offset `at` of a run, grafted
    /// over `text`, with whether each is a terminal.
    ///
    /// # Panics
    /// If `text` is not as long as the recorded text.
    fn placed(&self, text: &[u8], base: u32, at: u32) -> impl Iterator<Item = (Node, bool)> + '_ {
        assert_eq!(text.len(), self.text_len as usize, "grafted text length");
        self.nodes
            .iter()
            .map(move |&(n, terminal)| (n.shifted(base, at), terminal))
    }

    /// Number of nodes recorded.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Reports the recorded subtrees to `sink` one event at a time, terminals taking
    /// their bytes from `text` (the default [`TreeSink::graft`]).
    ///
    /// # Panics
    /// If `text` is not as long as the recorded text.
    pub fn replay<S: TreeSink + ?Sized>(&self, text: &[u8], sink: &mut S) {
        assert_eq!(text.len(), self.text_len as usize, "replayed text length");
        // Ends of the open nodes' subtrees.
        let mut open: Vec<u32> = Vec::new();
        for (i, &(n, terminal)) in self.nodes.iter().enumerate() {
            while open.last().is_some_and(|&end| end <= i as u32) {
                open.pop();
                sink.close();
            }
            if terminal {
                let text_end = self
                    .nodes
                    .get(n.end as usize)
                    .map_or(text.len(), |(next, _)| next.text_start as usize);
                sink.terminal(n.expr, &text[n.text_start as usize..text_end]);
            } else {
                sink.open(n.expr);
                open.push(n.end);
            }
        }
        for _ in open {
            sink.close();
        }
    }
}

/// A sink that records complete subtrees into a [`Recording`].
#[derive(Debug)]
pub struct Recorder {
    nodes: Vec<(Node, bool)>,
    at: u32,
    /// The innermost open node, threaded as in [`TreeBuilder`].
    top: u32,
}

impl Default for Recorder {
    fn default() -> Recorder {
        Recorder {
            nodes: Vec::new(),
            at: 0,
            top: NO_NODE,
        }
    }
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// The subtrees recorded since the last call (or since the start); the recorder
    /// starts over, keeping its buffer.
    ///
    /// # Panics
    /// If a node is still open.
    pub fn take(&mut self) -> Recording {
        assert!(self.top == NO_NODE, "recording taken with open nodes");
        let recording = Recording {
            nodes: self.nodes.as_slice().into(),
            text_len: self.at,
        };
        self.nodes.clear();
        self.at = 0;
        recording
    }
}

impl TreeSink for Recorder {
    fn open(&mut self, expr: ExprId) {
        let index = self.nodes.len() as u32;
        self.nodes.push((
            Node {
                expr,
                end: self.top,
                text_start: self.at,
            },
            false,
        ));
        self.top = index;
    }

    fn terminal(&mut self, expr: ExprId, bytes: &[u8]) {
        let start = self.at;
        self.at += bytes.len() as u32;
        let end = self.nodes.len() as u32 + 1;
        self.nodes.push((
            Node {
                expr,
                end,
                text_start: start,
            },
            true,
        ));
    }

    fn close(&mut self) {
        assert!(self.top != NO_NODE, "close without open");
        let end = self.nodes.len() as u32;
        let (node, _) = &mut self.nodes[self.top as usize];
        self.top = node.end;
        node.end = end;
    }

    fn graft(&mut self, recording: &Recording, text: &[u8]) {
        let placed = recording.placed(text, self.nodes.len() as u32, self.at);
        self.nodes.extend(placed);
        self.at += recording.text_len;
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

    /// The node pool keeps nothing unless turned on, and frees what it kept when
    /// turned off. (The only test touching the process-wide pool.)
    #[test]
    fn the_node_pool_is_off_until_asked_for() {
        let pooled = || SPARE_NODES.lock().unwrap().len();
        let large_tree = || {
            let mut builder = TreeBuilder::with_text_in(b"", NodeRoom(Vec::with_capacity(1 << 16)));
            builder.open(ExprId::from_index(0));
            builder.close();
            builder.finish()
        };
        drop(large_tree());
        assert_eq!(pooled(), 0, "off by default");
        keep_spare_nodes(128 << 20);
        drop(large_tree());
        assert_eq!(pooled(), 1);
        keep_spare_nodes(0);
        assert_eq!(pooled(), 0, "turning it off frees it");
        drop(large_tree());
        assert_eq!(pooled(), 0);
    }

    use super::*;
    use thicket_grammar::load_spec_text;

    /// The grammar `"a" <b>*` and its nodes: the start rule's sequence, the literal, the
    /// repetition, its item and `<b>`'s body.
    struct AThenBs {
        g: Grammar,
        body: ExprId,
        a: ExprId,
        rep: ExprId,
        item: ExprId,
        b_body: ExprId,
    }

    fn a_then_bs() -> AThenBs {
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
        AThenBs {
            body,
            a,
            rep,
            item: r.item,
            b_body,
            g,
        }
    }

    /// Builds the tree of `"a" "b"*` deriving "abb" by hand.
    #[test]
    fn builder_records_structure_and_text() {
        let AThenBs {
            g,
            body,
            a,
            rep,
            item,
            b_body,
        } = a_then_bs();
        let mut t = TreeBuilder::new();
        t.open(g.root());
        t.open(body);
        t.terminal(a, b"a");
        t.open(rep);
        for _ in 0..2 {
            t.open(item);
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

    /// Text ranges are not stored but derived from the next node in preorder: check them
    /// against the terminals below each node, with empty subtrees first, in the middle,
    /// nested and last.
    #[test]
    fn text_ranges_follow_from_preorder() {
        let g = load_spec_text(
            "t",
            b"<start> ::= <e> \"ab\" <e> <e> \"c\" <e>\n<e> ::= \"\" | \"x\"",
        )
        .unwrap();
        let body = g.rule(g.start()).body;
        let Expr::Seq(items) = g.expr(body) else {
            panic!()
        };
        let e_body = g.rule(g.symbol("e").unwrap()).body;
        let mut t = TreeBuilder::new();
        t.open(g.root());
        t.open(body);
        for (i, &item) in items.iter().enumerate() {
            match g.expr(item) {
                Expr::Literal(bytes) => t.terminal(item, bytes),
                _ => {
                    t.open(item);
                    t.open(e_body);
                    t.terminal(e_body, if i == 3 { b"x" } else { b"" });
                    t.close();
                    t.close();
                }
            }
        }
        t.close();
        t.close();
        let tree = t.finish();
        assert_eq!(tree.bytes(), b"abxc");
        for node in tree.descendants(tree.root()) {
            // The terminals of the subtree spell its text, from where it starts.
            let spelled: Vec<u8> = tree
                .descendants(node)
                .filter(|&d| tree.children(d).next().is_none())
                .flat_map(|d| tree.text(d).to_vec())
                .collect();
            assert_eq!(tree.text(node), &spelled[..], "node {}", node.index());
            let range = tree.text_range(node);
            assert_eq!(&tree.bytes()[range], &spelled[..]);
        }
        let seq = tree.children(tree.root()).next().unwrap();
        let texts: Vec<&[u8]> = tree.children(seq).map(|c| tree.text(c)).collect();
        assert_eq!(texts, [&b""[..], b"ab", b"", b"x", b"c", b""]);
        assert_eq!(tree.text_range(tree.children(seq).last().unwrap()), 4..4);
    }

    /// A recording grafted by a builder (in one go) and replayed into one (event by
    /// event) gives the tree built directly; a builder given its text checks terminals.
    #[test]
    fn recordings_graft_like_events() {
        let AThenBs {
            g,
            body,
            a,
            rep,
            item,
            b_body,
        } = a_then_bs();
        let two_bs = |t: &mut dyn FnMut(ExprId, Option<&[u8]>)| {
            for _ in 0..2 {
                t(item, None);
                t(b_body, Some(b"b"));
                t(item, Some(b"close"));
            }
        };
        fn feed<S: TreeSink>(s: &mut S, e: ExprId, bytes: Option<&[u8]>) {
            match bytes {
                None => s.open(e),
                Some(b"close") => s.close(),
                Some(b) => s.terminal(e, b),
            }
        }
        let mut recorder = Recorder::new();
        two_bs(&mut |e, b| feed(&mut recorder, e, b));
        let recording = recorder.take();
        assert_eq!(recording.len(), 4);
        let build = |graft: bool, preset: bool| {
            let mut t = if preset {
                TreeBuilder::with_text(b"abb")
            } else {
                TreeBuilder::new()
            };
            t.open(g.root());
            t.open(body);
            t.terminal(a, b"a");
            t.open(rep);
            if graft {
                t.graft(&recording, b"bb");
            } else {
                recording.replay(b"bb", &mut t);
            }
            t.close();
            t.close();
            t.close();
            t.finish()
        };
        let expected = build(false, false).to_sexp(&g);
        assert_eq!(expected, r#"(<start> "a" (<b> "b") (<b> "b"))"#);
        for (graft, preset) in [(true, false), (true, true), (false, true)] {
            let tree = build(graft, preset);
            assert_eq!(tree.to_sexp(&g), expected);
            assert_eq!(tree.len(), 8);
            assert_eq!(tree.bytes(), b"abb");
        }
        let wrong = std::panic::catch_unwind(|| {
            let mut t = TreeBuilder::with_text(b"ab");
            t.terminal(a, b"x");
        });
        assert!(wrong.is_err());
    }
}
