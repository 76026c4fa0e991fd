//! Tree renderings (indented text, fuzzingbook JSON, S-expressions, DOT) written to any
//! [`std::io::Write`] as the nodes are visited, so that neither the rendering nor (when
//! fed by a parser through [`TreeSink`]) the tree itself has to be held in memory.
//!
//! Each rendering costs output linear in the number of nodes. The indented form indents
//! two spaces per level up to [`MAX_INDENT_DEPTH`] levels; deeper lines keep that indent
//! and start with their depth in brackets (`[40] <value>`), so 10,000 levels of nesting
//! cost 10,000 lines of bounded width, not 100 MB of spaces.

use crate::{SymbolicEvent, TreeSink, hex, quote, text_of_bytes};
use std::io::Write;
use thicket_grammar::{Expr, ExprId, Grammar};

/// Levels of nesting the indented rendering shows by indentation; deeper lines show
/// their depth as a number.
pub const MAX_INDENT_DEPTH: usize = 32;

/// A rendering of derivation trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rendering {
    /// One node per line, rules by name, terminals quoted, indented by depth.
    Indented,
    /// `["<start>", [children...]]` (fuzzingbook/ISLa); a terminal is `["text", []]`.
    /// A terminal whose bytes are not UTF-8 is `["text", [], "hex"]`: the text as
    /// constraints read it ([`crate::text_of_bytes`]: each byte of an invalid sequence
    /// as the character of the same number) and the exact bytes in hex.
    FuzzingbookJson,
    /// `(<start> (<digit> "1"))`.
    Sexp,
    /// Graphviz DOT.
    Dot,
}

/// Writes one tree in a [`Rendering`] as its symbolic events arrive, either from a
/// [`TreeSink`] producer (a parser reading a tree, a generator) or from
/// [`crate::DerivationTree::render_to`]. Memory: a bit per open node, and for DOT the
/// id of each open rule node. The first write error is kept, later writes are skipped,
/// and [`Renderer::finish`] returns it.
pub struct Renderer<'g, W: Write> {
    grammar: &'g Grammar,
    rendering: Rendering,
    out: W,
    error: Option<std::io::Error>,
    /// For each open node (sink events): whether it is a rule node.
    open_is_rule: Vec<bool>,
    /// Open rule nodes.
    depth: usize,
    /// JSON: whether the next item is the first in its list. S-expressions: whether
    /// nothing or an opening parenthesis was written last.
    first: bool,
    /// DOT: the next node id and the ids of the open rule nodes.
    next_id: usize,
    parents: Vec<usize>,
    /// Display names of rules met so far, by symbol index (sink events).
    names: Vec<Option<Box<str>>>,
    /// JSON: a string item's quoted form, written here first.
    scratch: Vec<u8>,
}

impl<'g, W: Write> Renderer<'g, W> {
    /// A renderer writing to `out`.
    pub fn new(grammar: &'g Grammar, rendering: Rendering, out: W) -> Renderer<'g, W> {
        let mut renderer = Renderer {
            grammar,
            rendering,
            out,
            error: None,
            open_is_rule: Vec::new(),
            depth: 0,
            first: true,
            next_id: 0,
            parents: Vec::new(),
            names: Vec::new(),
            scratch: Vec::new(),
        };
        if rendering == Rendering::Dot {
            renderer.write(b"digraph tree {\n  node [shape=box, fontname=monospace];\n");
        }
        renderer
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    fn indent(&mut self) {
        const SPACES: &[u8] = &[b' '; 2 * MAX_INDENT_DEPTH];
        let depth = self.depth;
        self.write(&SPACES[..2 * depth.min(MAX_INDENT_DEPTH)]);
        if depth > MAX_INDENT_DEPTH {
            self.write(format!("[{depth}] ").as_bytes());
        }
    }

    fn json_item(&mut self, label: &str) {
        if !self.first {
            self.write(b",");
        }
        self.write(b"[");
        let mut quoted = std::mem::take(&mut self.scratch);
        quoted.clear();
        serde_json::to_writer(&mut quoted, label).expect("strings serialize");
        self.write(&quoted);
        self.scratch = quoted;
        self.write(b",[");
    }

    fn dot_node(&mut self, label: &str, terminal: bool) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        let shape = if terminal { ", shape=plaintext" } else { "" };
        let line = format!(
            "  n{id} [label={}{shape}];\n",
            serde_json::to_string(label).expect("strings serialize")
        );
        self.write(line.as_bytes());
        if let Some(parent) = self.parents.last() {
            let edge = format!("  n{parent} -> n{id};\n");
            self.write(edge.as_bytes());
        }
        id
    }

    /// Renders one symbolic event.
    pub fn event(&mut self, event: SymbolicEvent<'_>) {
        match event {
            SymbolicEvent::Open(name) => self.open_rule(&name),
            SymbolicEvent::Terminal(bytes) => self.leaf(bytes),
            SymbolicEvent::Close => self.close_rule(),
        }
    }

    fn open_rule(&mut self, name: &str) {
        self.render(SymbolicEvent::Open(String::new()), name);
    }

    fn leaf(&mut self, bytes: &[u8]) {
        self.render(SymbolicEvent::Terminal(bytes), "");
    }

    fn close_rule(&mut self) {
        self.render(SymbolicEvent::Close, "");
    }

    /// `event`, with the name of an opened rule in `name` (not in the event).
    fn render(&mut self, event: SymbolicEvent<'_>, name: &str) {
        match (self.rendering, event) {
            (Rendering::Indented, SymbolicEvent::Open(_)) => {
                self.indent();
                self.write(name.as_bytes());
                self.write(b"\n");
                self.depth += 1;
            }
            (Rendering::Indented, SymbolicEvent::Terminal(bytes)) => {
                self.indent();
                self.write(quote(bytes).as_bytes());
                self.write(b"\n");
            }
            (Rendering::FuzzingbookJson, SymbolicEvent::Open(_)) => {
                self.json_item(name);
                self.first = true;
                self.depth += 1;
            }
            (Rendering::FuzzingbookJson, SymbolicEvent::Terminal(bytes)) => {
                self.json_item(&text_of_bytes(bytes));
                if std::str::from_utf8(bytes).is_ok() {
                    self.write(b"]]");
                } else {
                    // The exact bytes, as a third element only such terminals have.
                    self.write(b"],\"");
                    self.write(hex(bytes).as_bytes());
                    self.write(b"\"]");
                }
                self.first = false;
            }
            (Rendering::FuzzingbookJson, SymbolicEvent::Close) => {
                self.write(b"]]");
                self.first = false;
                self.depth -= 1;
            }
            (Rendering::Sexp, SymbolicEvent::Open(_)) => {
                if !self.first {
                    self.write(b" ");
                }
                self.write(b"(");
                self.write(name.as_bytes());
                self.first = false;
                self.depth += 1;
            }
            (Rendering::Sexp, SymbolicEvent::Terminal(bytes)) => {
                self.write(b" ");
                self.write(quote(bytes).as_bytes());
                self.first = false;
            }
            (Rendering::Sexp, SymbolicEvent::Close) => {
                self.write(b")");
                self.first = false;
                self.depth -= 1;
            }
            (Rendering::Dot, SymbolicEvent::Open(_)) => {
                let id = self.dot_node(name, false);
                self.parents.push(id);
                self.depth += 1;
            }
            (Rendering::Dot, SymbolicEvent::Terminal(bytes)) => {
                self.dot_node(&quote(bytes), true);
            }
            (Rendering::Dot, SymbolicEvent::Close) => {
                self.parents.pop();
                self.depth -= 1;
            }
            (Rendering::Indented, SymbolicEvent::Close) => self.depth -= 1,
        }
    }

    /// Ends the rendering (DOT's closing brace) and hands back the writer, or the first
    /// write error.
    pub fn finish(mut self) -> std::io::Result<W> {
        if self.rendering == Rendering::Dot {
            self.write(b"}\n");
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> Renderer<'_, W> {
    /// Opens the rule node of `symbol`, its display name computed once per rule.
    fn open_symbol(&mut self, symbol: thicket_grammar::SymbolId) {
        let i = symbol.index();
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        let name = self.names[i]
            .take()
            .unwrap_or_else(|| self.grammar.display_symbol(symbol).into_boxed_str());
        self.open_rule(&name);
        self.names[i] = Some(name);
    }
}

impl<W: Write> TreeSink for Renderer<'_, W> {
    fn open(&mut self, expr: ExprId) {
        let rule = match self.grammar.expr(expr) {
            Expr::Ref(s) => {
                self.open_symbol(*s);
                true
            }
            _ => false,
        };
        self.open_is_rule.push(rule);
    }

    fn terminal(&mut self, expr: ExprId, bytes: &[u8]) {
        match self.grammar.expr(expr) {
            Expr::Literal(_) | Expr::Regex(_) => self.leaf(bytes),
            Expr::Ref(s) => {
                self.open_symbol(*s);
                self.close_rule();
            }
            Expr::Alt(_) | Expr::Seq(_) | Expr::Repeat(_) => {}
        }
    }

    fn close(&mut self) {
        if self.open_is_rule.pop() == Some(true) {
            self.close_rule();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TreeBuilder;
    use thicket_grammar::load_spec_text;

    /// `<start> ::= "(" <start> ")" | "x"` nested `depth` times, reported to `sink`.
    fn nested<S: TreeSink>(g: &Grammar, depth: usize, sink: &mut S) {
        let find = |want: &dyn Fn(&Expr) -> bool| {
            g.expr_ids()
                .find(|&e| want(g.expr(e)))
                .expect("node exists")
        };
        let alt = find(&|e| matches!(e, Expr::Alt(_)));
        let seq = find(&|e| matches!(e, Expr::Seq(_)));
        let inner = find(&|e| matches!(e, Expr::Ref(_)));
        let lit =
            |text: &'static [u8]| find(&move |e| matches!(e, Expr::Literal(b) if &b[..] == text));
        sink.open(g.root());
        for _ in 0..depth {
            sink.open(alt);
            sink.open(seq);
            sink.terminal(lit(b"("), b"(");
            sink.open(inner);
        }
        sink.open(alt);
        sink.terminal(lit(b"x"), b"x");
        sink.close();
        for _ in 0..depth {
            sink.close();
            sink.terminal(lit(b")"), b")");
            sink.close();
            sink.close();
        }
        sink.close();
    }

    #[test]
    fn streamed_renderings_equal_the_tree_renderings_and_indents_are_capped() {
        let g = load_spec_text("t.fan", b"<start> ::= \"(\" <start> \")\" | \"x\"").unwrap();
        for depth in [0, 3, 100] {
            let mut builder = TreeBuilder::new();
            nested(&g, depth, &mut builder);
            let tree = builder.finish();
            for rendering in [
                Rendering::Indented,
                Rendering::FuzzingbookJson,
                Rendering::Sexp,
                Rendering::Dot,
            ] {
                let mut sink = Renderer::new(&g, rendering, Vec::new());
                nested(&g, depth, &mut sink);
                let streamed = sink.finish().unwrap();
                let walked = tree.render_to(&g, rendering, Vec::new()).unwrap();
                assert_eq!(streamed, walked, "{rendering:?} at depth {depth}");
                // The symbolic walk (a name per rule node) renders the same.
                let mut by_events = Renderer::new(&g, rendering, Vec::new());
                tree.walk_symbolic(&g, |event| by_events.event(event));
                let by_events = by_events.finish().unwrap();
                assert_eq!(by_events, walked, "{rendering:?} at depth {depth}");
            }
        }
        let mut builder = TreeBuilder::new();
        nested(&g, 3, &mut builder);
        assert_eq!(
            builder.finish().to_sexp(&g),
            "(<start> \"(\" (<start> \"(\" (<start> \"(\" (<start> \"x\") \")\") \")\") \")\")"
        );
        let mut builder = TreeBuilder::new();
        nested(&g, 10_000, &mut builder);
        let text = builder.finish().to_indented(&g);
        let widest = text.lines().map(str::len).max().unwrap();
        assert!(
            widest <= 2 * MAX_INDENT_DEPTH + 20,
            "a line of {widest} bytes"
        );
        assert!(text.contains(&format!("{}[10000] <start>\n", " ".repeat(64))));
    }
}
