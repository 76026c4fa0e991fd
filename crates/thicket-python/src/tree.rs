//! thicket trees in Fandango's shape, encoded for the runner.
//!
//! A thicket [`DerivationTree`] has a node per grammar expression (references,
//! alternatives, sequences, repetitions, terminals); a Fandango tree has a node per
//! symbol: a nonterminal's children are the symbols of the alternative it took, in
//! order, with groups, repetitions and options flattened into it. So only `Ref` nodes
//! (nonterminals named by their rule) and terminals (leaves) are kept; every other
//! node's children move up into the nearest kept ancestor.

use crate::TerminalKind;
use std::hash::Hasher;
use thicket_grammar::{Expr, Grammar};
use thicket_tree::{DerivationTree, NodeId};

/// Leaf codes of the encoding (a nonterminal's code is the index of its name).
const TEXT_LEAF: i32 = -1;
const BYTES_LEAF: i32 = -2;
const BIT_LEAF: i32 = -3;

/// What a node's leaves hold (the runner picks fast paths by it).
const HAS_TERMINAL: u8 = 1;
const HAS_BYTES: u8 = 2;
const HAS_BITS: u8 = 4;

/// No Fandango node: the thicket node is synthetic (an alternative, a sequence, a
/// repetition).
pub(crate) const SYNTHETIC: u32 = u32::MAX;

/// A tree's identity in the runners' caches: a hash of what determines its encoding,
/// and its number of nodes (equal encodings give equal Python trees).
pub(crate) type TreeKey = (u64, usize);

/// A tree in Fandango's shape, in the arrays the runner reads (see `read_tree` in
/// runner.py), the text aside.
pub(crate) struct FlatTree {
    /// Its identity.
    pub(crate) key: TreeKey,
    /// The thicket node it was flattened from (the root, or the root of a part).
    base: usize,
    /// For each thicket node of the subtree (by index past `base`), its Fandango
    /// node, or [`SYNTHETIC`].
    pub(crate) index: Vec<u32>,
    names: Vec<String>,
    sym: Vec<i32>,
    end: Vec<u32>,
    start: Vec<u32>,
    stop: Vec<u32>,
    parent: Vec<i32>,
    mask: Vec<u8>,
}

impl FlatTree {
    /// The Fandango node of thicket node `node`, or why there is none.
    pub(crate) fn node(&self, node: NodeId) -> Result<u32, String> {
        match node
            .index()
            .checked_sub(self.base)
            .and_then(|k| self.index.get(k))
        {
            None => Err(format!(
                "node {} is outside the tree (nodes {} to {})",
                node.index(),
                self.base,
                self.base + self.index.len()
            )),
            Some(&SYNTHETIC) => Err(format!(
                "node {} is an alternative, sequence or repetition, not a rule or terminal \
                 node",
                node.index()
            )),
            Some(&i) => Ok(i),
        }
    }
}

/// The leaf code of a terminal node deriving `text`.
fn leaf_code(kind: TerminalKind, text: &[u8]) -> i32 {
    match kind {
        TerminalKind::Bit if matches!(text, [b'0' | b'1' | 0 | 1]) => BIT_LEAF,
        TerminalKind::Bytes | TerminalKind::Bit => BYTES_LEAF,
        TerminalKind::Text | TerminalKind::Auto => {
            if std::str::from_utf8(text).is_ok() {
                TEXT_LEAF
            } else {
                BYTES_LEAF
            }
        }
    }
}

/// The subtree of `tree` at `root` (a rule or terminal node) in Fandango's shape, as a
/// tree of its own, encoded, with terminals read as `kinds` says (indexed by
/// expression; missing entries are [`TerminalKind::Auto`]); an error if it is too
/// large for the encoding (4 GiB of text, 65535 rule names of up to 65535 bytes). Its
/// text is `tree.text(root)`.
pub(crate) fn flatten(
    tree: &DerivationTree,
    root: NodeId,
    grammar: &Grammar,
    kinds: &[TerminalKind],
) -> Result<FlatTree, String> {
    let base = root.index();
    let n = tree.subtree_end(root).saturating_sub(base);
    let text = tree.text(root);
    let text_base = tree.text_range(root).start;
    if text.len() > u32::MAX as usize || n > u32::MAX as usize - 1 {
        return Err(format!(
            "the tree is too large for Python ({} bytes, {n} nodes)",
            text.len()
        ));
    }
    let mut index = vec![SYNTHETIC; n];
    let mut sym: Vec<i32> = Vec::with_capacity(n);
    let mut end: Vec<u32> = Vec::with_capacity(n);
    let mut start: Vec<u32> = Vec::with_capacity(n);
    let mut stop: Vec<u32> = Vec::with_capacity(n);
    let mut parent: Vec<i32> = Vec::with_capacity(n);
    let mut mask: Vec<u8> = Vec::with_capacity(n);
    let mut names: Vec<String> = Vec::new();
    // Each rule's name index in this tree (-1: not seen yet).
    let mut name_index: Vec<i32> = vec![-1; grammar.rules().len()];
    // Open nonterminals: (end of the thicket subtree, Fandango index).
    let mut open: Vec<(usize, usize)> = Vec::new();

    fn close(open: &mut Vec<(usize, usize)>, end: &mut [u32], mask: &mut [u8], count: usize) {
        let (_, p) = open.pop().expect("an open node");
        end[p] = count as u32;
        if let Some(&(_, q)) = open.last() {
            mask[q] |= mask[p];
        }
    }

    for (k, slot) in index.iter_mut().enumerate() {
        let i = base + k;
        while open.last().is_some_and(|&(e, _)| e <= i) {
            close(&mut open, &mut end, &mut mask, sym.len());
        }
        let id = NodeId::from_index(i);
        let expr = tree.expr(id);
        let code = match grammar.expr(expr) {
            Expr::Ref(symbol) => {
                let known = &mut name_index[symbol.index()];
                if *known < 0 {
                    names.push(grammar.display_symbol(*symbol));
                    *known = names.len() as i32 - 1;
                }
                *known
            }
            Expr::Literal(_) | Expr::Regex(_) => leaf_code(
                kinds.get(expr.index()).copied().unwrap_or_default(),
                tree.text(id),
            ),
            Expr::Alt(_) | Expr::Seq(_) | Expr::Repeat(_) => continue,
        };
        let p = sym.len();
        *slot = p as u32;
        let range = tree.text_range(id);
        sym.push(code);
        start.push((range.start - text_base) as u32);
        stop.push((range.end - text_base) as u32);
        parent.push(open.last().map_or(-1, |&(_, q)| q as i32));
        if code >= 0 {
            end.push(0);
            mask.push(0);
            open.push((tree.subtree_end(id), p));
        } else {
            end.push(p as u32 + 1);
            let m = HAS_TERMINAL
                | match code {
                    BYTES_LEAF => HAS_BYTES,
                    BIT_LEAF => HAS_BITS,
                    _ => 0,
                };
            mask.push(m);
            if let Some(&(_, q)) = open.last() {
                mask[q] |= m;
            }
        }
    }
    while !open.is_empty() {
        close(&mut open, &mut end, &mut mask, sym.len());
    }

    if names.len() > u16::MAX as usize || names.iter().any(|n| n.len() > u16::MAX as usize) {
        return Err("the tree has too many or too long rule names for Python".to_string());
    }
    // The symbols, text ranges and parents determine the encoding (ends and masks
    // follow from them), so they, the names and the text make the key; the encoding
    // itself is written only for a process that lacks the tree.
    let mut hasher = std::hash::DefaultHasher::new();
    for name in &names {
        hasher.write(name.as_bytes());
        hasher.write_u8(0xff);
    }
    hasher.write(text);
    for i in 0..sym.len() {
        hasher.write_u64(u64::from(sym[i] as u32) | u64::from(parent[i] as u32) << 32);
        hasher.write_u64(u64::from(start[i]) | u64::from(stop[i]) << 32);
    }
    Ok(FlatTree {
        key: (hasher.finish(), sym.len()),
        base,
        index,
        names,
        sym,
        end,
        start,
        stop,
        parent,
        mask,
    })
}

impl FlatTree {
    /// Appends the tree's encoding (see `read_tree` in runner.py) to `out`.
    pub(crate) fn write_payload(&self, text: &[u8], out: &mut Vec<u8>) {
        let count = self.sym.len();
        out.reserve(10 + text.len() + self.names.len() * 16 + count * 21);
        out.extend_from_slice(&(count as u32).to_le_bytes());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.names.len() as u16).to_le_bytes());
        out.extend_from_slice(text);
        for name in &self.names {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        for v in &self.sym {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for array in [&self.end, &self.start, &self.stop] {
            for v in array.iter() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for v in &self.parent {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.mask);
    }
}
