//! Derivation trees as Python sees them: rule nodes and terminals, with the synthetic
//! nodes (groups, alternatives, repetitions) flattened away as in
//! [`DerivationTree::walk_symbolic`], each node knowing its span of the input.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;
use thicket_grammar::Grammar;
use thicket_tree::{DerivationTree, SymbolicEvent};

/// One node: a rule (`symbol` is `<name>`) or a terminal (`symbol` is `None`).
struct Node {
    symbol: Option<String>,
    start: usize,
    end: usize,
    children: Vec<u32>,
}

/// A whole tree, shared by the `Tree` objects of its nodes.
pub struct TreeData {
    bytes: Vec<u8>,
    nodes: Vec<Node>,
}

impl TreeData {
    /// The symbolic view of `tree`, a tree of `grammar`.
    pub fn new(tree: &DerivationTree, grammar: &Grammar) -> TreeData {
        let mut nodes: Vec<Node> = Vec::new();
        let mut open: Vec<u32> = Vec::new();
        let mut at = 0;
        let add = |nodes: &mut Vec<Node>, open: &[u32], node: Node| {
            let id = nodes.len() as u32;
            if let Some(&parent) = open.last() {
                nodes[parent as usize].children.push(id);
            }
            nodes.push(node);
            id
        };
        tree.walk_symbolic(grammar, |event| match event {
            SymbolicEvent::Open(name) => {
                let node = Node {
                    symbol: Some(name),
                    start: at,
                    end: at,
                    children: Vec::new(),
                };
                let id = add(&mut nodes, &open, node);
                open.push(id);
            }
            SymbolicEvent::Terminal(text) => {
                let node = Node {
                    symbol: None,
                    start: at,
                    end: at + text.len(),
                    children: Vec::new(),
                };
                at += text.len();
                add(&mut nodes, &open, node);
            }
            SymbolicEvent::Close => {
                if let Some(id) = open.pop() {
                    nodes[id as usize].end = at;
                }
            }
        });
        TreeData {
            bytes: tree.bytes().to_vec(),
            nodes,
        }
    }
}

impl TreeData {
    /// Appends the nodes below `id` (not itself) to `out`.
    fn subtree(&self, id: u32, out: &mut Vec<u32>) {
        let mut stack: Vec<u32> = self.nodes[id as usize].children.clone();
        while let Some(id) = stack.pop() {
            out.push(id);
            stack.extend(&self.nodes[id as usize].children);
        }
    }
}

/// How a selector step reaches its nodes from the previous step's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    /// `.<b>`: children.
    Child,
    /// `..<b>`: descendants.
    Descendant,
    /// A leading `<a>`: the node itself and its descendants.
    SelfOrDescendant,
}

/// One step of a selector: an axis and the rule it picks (`<name>`).
struct Step {
    axis: Axis,
    symbol: String,
}

/// The steps of a selector such as `<a>.<b>..<c>` (or `..<c>`), or what is wrong with it,
/// with its column.
fn parse_selector(selector: &str) -> Result<Vec<Step>, String> {
    let bytes = selector.as_bytes();
    let mut steps = Vec::new();
    let mut at = 0;
    let error = |at: usize, what: &str| {
        format!(
            "selector {selector:?}, column {}: expected {what}",
            selector[..at].chars().count() + 1
        )
    };
    while at < bytes.len() || steps.is_empty() {
        let axis = if bytes[at..].starts_with(b"..") {
            at += 2;
            Axis::Descendant
        } else if bytes[at..].starts_with(b".") {
            at += 1;
            Axis::Child
        } else if steps.is_empty() {
            Axis::SelfOrDescendant
        } else {
            return Err(error(at, "`.` or `..` before the next `<name>`"));
        };
        if !bytes[at..].starts_with(b"<") {
            return Err(error(at, "`<name>`"));
        }
        let Some(len) = selector[at..].find('>') else {
            return Err(error(at, "`>` closing the name"));
        };
        let name = &selector[at + 1..at + len];
        if name.is_empty() || name.contains(['<', '.', ' ']) {
            return Err(error(at + 1, "a rule name"));
        }
        steps.push(Step {
            axis,
            symbol: format!("<{name}>"),
        });
        at += len + 1;
    }
    Ok(steps)
}

/// A node of a derivation tree (see the stub).
#[pyclass(frozen, module = "thicket")]
pub struct Tree {
    data: Arc<TreeData>,
    node: u32,
}

impl Tree {
    /// The root of `data`.
    pub fn root(data: Arc<TreeData>) -> Tree {
        Tree { data, node: 0 }
    }

    fn node(&self) -> &Node {
        &self.data.nodes[self.node as usize]
    }

    fn at(&self, node: u32) -> Tree {
        Tree {
            data: self.data.clone(),
            node,
        }
    }

    fn slice(&self) -> &[u8] {
        let node = self.node();
        &self.data.bytes[node.start..node.end]
    }
}

#[pymethods]
impl Tree {
    /// `<name>` for a rule node, `None` for a terminal.
    #[getter]
    fn symbol(&self) -> Option<String> {
        self.node().symbol.clone()
    }

    /// Whether this is a terminal (a leaf with text and no symbol).
    #[getter]
    fn is_terminal(&self) -> bool {
        self.node().symbol.is_none()
    }

    /// The children, in input order.
    #[getter]
    fn children(&self) -> Vec<Tree> {
        self.node().children.iter().map(|&c| self.at(c)).collect()
    }

    /// The node's text, decoded as UTF-8 (`UnicodeDecodeError` otherwise).
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyBytes::new(py, self.slice()).call_method1("decode", ("utf-8",))
    }

    /// Byte offset in the input where the node starts.
    #[getter]
    fn start(&self) -> usize {
        self.node().start
    }

    /// Byte offset in the input just after the node.
    #[getter]
    fn end(&self) -> usize {
        self.node().end
    }

    /// The nodes below this one (not itself) in preorder, those of rule `symbol`
    /// (`"<name>"` or `"name"`) only if given.
    #[pyo3(signature = (symbol = None))]
    fn descendants(&self, symbol: Option<&str>) -> Vec<Tree> {
        let wanted = symbol.map(|s| format!("<{}>", crate::bare(s)));
        let mut out = Vec::new();
        let mut stack: Vec<u32> = self.node().children.iter().rev().copied().collect();
        while let Some(id) = stack.pop() {
            let node = &self.data.nodes[id as usize];
            if wanted.is_none() || node.symbol == wanted {
                out.push(self.at(id));
            }
            stack.extend(node.children.iter().rev());
        }
        out
    }

    /// The nodes a Fandango-style selector picks (see the stub): `<a>.<b>` for the
    /// `<b>` children of `<a>` nodes, `<a>..<b>` for their `<b>` descendants; a
    /// selector starting with `<a>` begins at this node and its descendants, one
    /// starting with `.` or `..` below this node. In preorder, each node once.
    fn select(&self, selector: &str) -> PyResult<Vec<Tree>> {
        let steps = parse_selector(selector).map_err(PyValueError::new_err)?;
        let mut current: Vec<u32> = vec![self.node];
        for (i, step) in steps.iter().enumerate() {
            let mut next: Vec<u32> = Vec::new();
            for &id in &current {
                // The first step of a selector that starts with a name also looks at
                // the node itself.
                if i == 0 && step.axis == Axis::SelfOrDescendant {
                    next.push(id);
                }
                match step.axis {
                    Axis::Child => next.extend(&self.data.nodes[id as usize].children),
                    Axis::Descendant | Axis::SelfOrDescendant => self.data.subtree(id, &mut next),
                }
            }
            let wanted = Some(step.symbol.as_str());
            next.retain(|&id| self.data.nodes[id as usize].symbol.as_deref() == wanted);
            // Node ids are preorder positions.
            next.sort_unstable();
            next.dedup();
            current = next;
        }
        Ok(current.into_iter().map(|id| self.at(id)).collect())
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.slice())
    }

    fn __len__(&self) -> usize {
        self.node().children.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<Tree> {
        let children = &self.node().children;
        let len = children.len() as isize;
        let i = if index < 0 { index + len } else { index };
        if !(0..len).contains(&i) {
            return Err(PyIndexError::new_err("child index out of range"));
        }
        Ok(self.at(children[i as usize]))
    }

    fn __repr__(&self) -> String {
        let text = String::from_utf8_lossy(self.slice());
        let shown: String = text.chars().take(40).collect();
        let more = if text.chars().count() > 40 { "..." } else { "" };
        match &self.node().symbol {
            Some(symbol) => format!("<thicket.Tree {symbol} {shown:?}{more}>"),
            None => format!("<thicket.Tree terminal {shown:?}{more}>"),
        }
    }
}
