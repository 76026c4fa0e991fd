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
        let n = self.text.len() as u32;
        let Some(root) = self.root_item() else {
            unreachable!("a parse result has a complete root item")
        };
        // Items that are not in the chart (the root's copy, and the items Leo shortcuts
        // skipped, rebuilt when met), referred to by indices from `self.items.len()` on.
        let mut extra: Vec<Item> = vec![root];
        let mut stack = vec![Frame::Item {
            index: self.items.len() as u32,
            end: n,
        }];
        let mut scratch = token::SplitScratch::default();
        while let Some(frame) = stack.pop() {
            let (mut item, end) = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Leaf { node, start, end } => {
                    self.emit_leaf(node, start as usize, end as usize, sink, &mut scratch);
                    continue;
                }
                Frame::Item { index, end } => (self.item_at(index, &mut extra), end),
            };
            let node = item.node;
            let start = item.origin;
            // Tokens are scanned, never predicted, so only the root's item can be one.
            if start == end || (node == p.root && p.is_token(node)) {
                // The root, when the input is empty or the whole grammar is regular.
                self.emit_leaf(node, start as usize, end as usize, sink, &mut scratch);
                continue;
            }
            if item.child & LEO != 0 && item.child != NO_ITEM {
                item.child = self.rebuild_leo_chain(&item, &mut extra);
            }
            sink.open(ExprId::from_index(node as usize));
            stack.push(Frame::Close);
            // The children right to left (so the first is on top of the stack): the
            // last from `item`, then one per `pred`.
            let mut right = end;
            match p.ops[node as usize] {
                Op::Ref { body } => stack.push(Self::child_frame(body, &item, start, right)),
                Op::Alt { start: first, .. } => {
                    let child = p.children[(first + item.back) as usize];
                    stack.push(Self::child_frame(child, &item, start, right));
                }
                Op::Seq { start: first, len } => {
                    for dot in (0..len).rev() {
                        let child = p.children[(first + dot) as usize];
                        stack.push(Self::child_frame(child, &item, item.back, right));
                        right = item.back;
                        if dot > 0 {
                            item = self.items[item.pred as usize];
                        }
                    }
                }
                Op::Repeat { item: child, .. } => {
                    // Back to the prediction, the one item without a predecessor.
                    while item.pred != NO_ITEM {
                        stack.push(Self::child_frame(child, &item, item.back, right));
                        right = item.back;
                        item = self.items[item.pred as usize];
                    }
                }
                Op::Literal | Op::Regex => unreachable!("terminals have no items"),
            }
        }
    }

    /// The item at `index`: in the chart, or from `extra` past its end. Extra items are
    /// each read once, in the reverse of the order they were pushed (a chain is read from
    /// its top down, and a chain met inside a subtree is read before the walk leaves it),
    /// so the last one is popped: `extra` stays as short as the deepest nesting of
    /// chains rather than growing with the input.
    #[inline]
    fn item_at(&self, index: u32, extra: &mut Vec<Item>) -> Item {
        match self.items.get(index as usize) {
            Some(item) => *item,
            None => {
                let i = index as usize - self.items.len();
                let item = extra[i];
                if i + 1 == extra.len() {
                    extra.pop();
                }
                item
            }
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
    #[inline]
    fn child_frame(node: u32, item: &Item, start: u32, end: u32) -> Frame {
        match item.child {
            NO_ITEM => Frame::Leaf { node, start, end },
            index => Frame::Item { index, end },
        }
    }

    /// `item` was derived by a Leo shortcut (`item.child` is `LEO | r`): rebuilds the
    /// complete items the shortcut skipped, from the completion at its bottom up to
    /// `item`, into `extra`, and returns what `item.child` stands for.
    ///
    /// The same items as `ParseResult::leo_chain` visits, by a leaner walk: the
    /// recogniser found every link below the top to be its origin's sole waiter whose
    /// advance completes it (that is how the shortcut reached `item`), so those checks
    /// and the guard against unit cycles (the top comes before any repeat) are not
    /// needed again.
    fn rebuild_leo_chain(&self, item: &Item, extra: &mut Vec<Item>) -> u32 {
        let p = self.parser;
        let step = self.leo[(item.child & !LEO) as usize];
        let mut child = step.bottom;
        let (mut origin, mut slot) = (step.origin, step.slot);
        loop {
            let w = &self.waiting[slot as usize];
            let waiter = self.items[w.item as usize];
            if (waiter.node, waiter.origin) == (item.node, item.origin) {
                return child; // reached `item`, the top of the chain
            }
            debug_assert!(p.leo_link(w, &self.items, origin).is_some());
            extra.push(Item {
                child,
                ..p.advanced_waiter(w, &self.items, origin)
            });
            child = (self.items.len() + extra.len() - 1) as u32;
            origin = waiter.origin;
            slot = w.next.get();
            debug_assert!(slot != NO_ITEM, "a Leo chain ends at its top");
        }
    }
}

/// Work left in reading a tree.
enum Frame {
    /// A complete item (by index, see `ParseResult::item_at`) ending at `end`: open its
    /// node, then its children.
    Item {
        index: u32,
        end: u32,
    },
    /// A child the chart does not split: a terminal, a token or an empty derivation.
    Leaf {
        node: u32,
        start: u32,
        end: u32,
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
