//! Reading one derivation tree out of the chart (iteratively, for any depth).

use crate::chart::ParseResult;
use crate::compile::{Op, Parser};
use crate::earley::{Item, LEO, NO_ITEM};
use crate::token;
use thicket_grammar::ExprId;
use thicket_tree::{DerivationTree, TreeBuilder, TreeSink};

impl ParseResult<'_, '_> {
    /// The derivation tree (see the crate docs for which one, if the input is ambiguous).
    pub fn tree(&self) -> DerivationTree {
        let mut builder = TreeBuilder::with_text(self.text);
        self.build_into(&mut builder);
        builder.finish()
    }

    /// Reports the derivation tree to a sink in preorder.
    ///
    /// The tree is read by following each item's first derivation (`Item::pred` for the
    /// earlier children, `Item::child` for the last one), so no item is searched for;
    /// the items a Leo shortcut skipped are rebuilt from its chain when met.
    pub fn build_into<S: TreeSink>(&self, sink: &mut S) {
        let p = self.parser;
        let Some(root) = self.find(self.text.len(), p.root, 0, 1) else {
            unreachable!("a parse result has a complete root item")
        };
        let mut stack = vec![Frame::Item {
            item: root,
            end: self.text.len(),
        }];
        // Rebuilt Leo-skipped items, referred to by `Item::child` values from
        // `self.items.len()` on.
        let mut skipped: Vec<Item> = Vec::new();
        let mut children: Vec<Frame> = Vec::new();
        let mut scratch = token::SplitScratch::default();
        while let Some(frame) = stack.pop() {
            let (item, end) = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Leaf { node, start, end } => {
                    self.emit_leaf(node, start, end, sink, &mut scratch);
                    continue;
                }
                Frame::Item { item, end } => (item, end),
            };
            let node = item.node;
            let start = item.origin as usize;
            if start == end || p.is_token(node) {
                // The root, when the input is empty or the whole grammar is regular.
                self.emit_leaf(node, start, end, sink, &mut scratch);
                continue;
            }
            let mut item = item;
            if item.child & LEO != 0 && item.child != NO_ITEM {
                item.child = self.rebuild_leo_chain(&item, &mut skipped);
            }
            sink.open(ExprId::from_index(node as usize));
            stack.push(Frame::Close);
            // The children right to left: the last from `item`, then one per `pred`.
            children.clear();
            let mut right = end;
            match p.ops[node as usize] {
                Op::Ref { body } => {
                    children.push(self.child_frame(body, &item, start, right, &skipped));
                }
                Op::Alt { start: first, .. } => {
                    let child = p.children[(first + item.back) as usize];
                    children.push(self.child_frame(child, &item, start, right, &skipped));
                }
                Op::Seq { start: first, len } => {
                    for dot in (0..len).rev() {
                        let child = p.children[(first + dot) as usize];
                        let left = item.back as usize;
                        children.push(self.child_frame(child, &item, left, right, &skipped));
                        right = left;
                        if dot > 0 {
                            item = self.items[item.pred as usize];
                        }
                    }
                }
                Op::Repeat { item: child, .. } => {
                    // Back to the prediction, the one item without a predecessor.
                    while item.pred != NO_ITEM {
                        let left = item.back as usize;
                        children.push(self.child_frame(child, &item, left, right, &skipped));
                        right = left;
                        item = self.items[item.pred as usize];
                    }
                }
                Op::Literal | Op::Regex => unreachable!("terminals have no items"),
            }
            stack.append(&mut children);
        }
    }

    /// Emits a child the chart does not split: a terminal, or a token's or an empty
    /// span's subtree (which depend only on the node and the bytes).
    fn emit_leaf<'t, S: TreeSink>(
        &'t self,
        node: u32,
        start: usize,
        end: usize,
        sink: &mut S,
        scratch: &mut token::SplitScratch<'t>,
    ) {
        let p = self.parser;
        if matches!(p.ops[node as usize], Op::Literal | Op::Regex) {
            sink.terminal(ExprId::from_index(node as usize), &self.text[start..end]);
        } else {
            p.emit_leaf(node, start == end, self.text, start, end, sink, scratch);
        }
    }

    /// The frame of the last child (`node`) of `item`, which spans `start..end`.
    fn child_frame(
        &self,
        node: u32,
        item: &Item,
        start: usize,
        end: usize,
        skipped: &[Item],
    ) -> Frame {
        let index = item.child as usize;
        match item.child {
            NO_ITEM => Frame::Leaf { node, start, end },
            _ if index < self.items.len() => Frame::Item {
                item: self.items[index],
                end,
            },
            _ => Frame::Item {
                item: skipped[index - self.items.len()],
                end,
            },
        }
    }

    /// `item` was derived by a Leo shortcut (`item.child` is `LEO | r`): rebuilds the
    /// complete items the shortcut skipped, from the completion at its bottom up to
    /// `item`, into `skipped`, and returns what `item.child` stands for.
    fn rebuild_leo_chain(&self, item: &Item, skipped: &mut Vec<Item>) -> u32 {
        let step = self.leo[(item.child & !LEO) as usize];
        let mut child = step.bottom;
        self.leo_chain(step.origin, step.node, |mut link| {
            if (link.node, link.origin) == (item.node, item.origin) {
                return false; // reached `item`, the top of the chain
            }
            link.child = child;
            child = (self.items.len() + skipped.len()) as u32;
            skipped.push(link);
            true
        });
        child
    }
}

/// Work left in reading a tree.
enum Frame {
    /// A complete item ending at `end`: open its node, then its children.
    Item {
        item: Item,
        end: usize,
    },
    /// A child the chart does not split: a terminal, a token or an empty derivation.
    Leaf {
        node: u32,
        start: usize,
        end: usize,
    },
    Close,
}

impl Parser<'_> {
    /// Emits the shallowest empty derivation of `node`.
    pub(crate) fn emit_empty<S: TreeSink>(&self, node: u32, sink: &mut S) {
        enum Frame {
            Node(u32),
            Close,
        }
        let mut stack = vec![Frame::Node(node)];
        while let Some(frame) = stack.pop() {
            let node = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Node(node) => node,
            };
            let expr = ExprId::from_index(node as usize);
            match self.ops[node as usize] {
                Op::Literal | Op::Regex => {
                    sink.terminal(expr, b"");
                    continue;
                }
                _ => sink.open(expr),
            }
            stack.push(Frame::Close);
            match self.ops[node as usize] {
                Op::Ref { body } => stack.push(Frame::Node(body)),
                Op::Alt { start, .. } => stack.push(Frame::Node(
                    self.children[(start + self.empty_choice[node as usize]) as usize],
                )),
                Op::Seq { start, len } => {
                    for i in (0..len).rev() {
                        stack.push(Frame::Node(self.children[(start + i) as usize]));
                    }
                }
                Op::Repeat { item, min, .. } => {
                    for _ in 0..min {
                        stack.push(Frame::Node(item));
                    }
                }
                Op::Literal | Op::Regex => unreachable!("terminals handled above"),
            }
        }
    }
}
