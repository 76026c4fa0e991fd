//! Reading one derivation tree out of the chart (iteratively, for any depth).

use crate::chart::ParseResult;
use crate::compile::{Op, Parser};
use crate::token;
use thicket_grammar::ExprId;
use thicket_tree::{DerivationTree, TreeBuilder, TreeSink};

impl ParseResult<'_, '_> {
    /// The derivation tree (see the crate docs for which one, if the input is ambiguous).
    pub fn tree(&self) -> DerivationTree {
        let mut builder = TreeBuilder::new();
        self.build_into(&mut builder);
        builder.finish()
    }

    /// Reports the derivation tree to a sink in preorder.
    pub fn build_into<S: TreeSink>(&self, sink: &mut S) {
        enum Frame {
            Node { node: u32, start: usize, end: usize },
            Close,
        }
        let p = self.parser;
        let mut stack = vec![Frame::Node {
            node: p.root,
            start: 0,
            end: self.text.len(),
        }];
        let mut spans: Vec<(u32, usize, usize)> = Vec::new();
        let mut scratch = token::SplitScratch::default();
        while let Some(frame) = stack.pop() {
            let (node, start, end) = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Node { node, start, end } => (node, start, end),
            };
            let expr = ExprId::from_index(node as usize);
            let op = p.ops[node as usize];
            if matches!(op, Op::Literal | Op::Regex) {
                sink.terminal(expr, &self.text[start..end]);
                continue;
            }
            if start == end || p.is_token(node) {
                // Leaves of the chart: their subtrees depend only on the node and the
                // bytes, and the same ones recur (indentation, keys, `true`).
                p.emit_leaf(
                    node,
                    start == end,
                    self.text,
                    start,
                    end,
                    sink,
                    &mut scratch,
                );
                continue;
            }
            sink.open(expr);
            stack.push(Frame::Close);
            let s32 = start as u32;
            match op {
                Op::Ref { body } => stack.push(Frame::Node {
                    node: body,
                    start,
                    end,
                }),
                Op::Alt { start: first, .. } => {
                    let item = self
                        .find(end, node, s32, 1)
                        .expect("a complete alternation spans its subtree");
                    let child = p.children[(first + item.back) as usize];
                    stack.push(Frame::Node {
                        node: child,
                        start,
                        end,
                    });
                }
                Op::Seq { start: first, len } => {
                    let mut item = self
                        .find(end, node, s32, len)
                        .expect("a complete sequence spans its subtree");
                    let mut right = end;
                    for dot in (0..len).rev() {
                        let left = item.back as usize;
                        stack.push(Frame::Node {
                            node: p.children[(first + dot) as usize],
                            start: left,
                            end: right,
                        });
                        right = left;
                        if dot > 0 {
                            item = self
                                .find(left, node, s32, dot)
                                .expect("sequence prefixes are in the chart");
                        }
                    }
                }
                Op::Repeat { item: child, .. } => {
                    let mut item = self
                        .complete_repeat(end, node, s32)
                        .expect("a complete repetition spans its subtree");
                    let mut right = end;
                    spans.clear();
                    while !(item.dot == 0 && right == start) {
                        let left = item.back as usize;
                        spans.push((child, left, right));
                        let previous = item
                            .dot
                            .checked_sub(1)
                            .and_then(|dot| self.find(left, node, s32, dot))
                            .or_else(|| {
                                self.find(left, node, s32, item.dot)
                                    .filter(|_| left < right)
                            });
                        match previous {
                            Some(prev) => item = prev,
                            None => break,
                        }
                        right = left;
                    }
                    for &(c, l, r) in &spans {
                        stack.push(Frame::Node {
                            node: c,
                            start: l,
                            end: r,
                        });
                    }
                }
                Op::Literal | Op::Regex => unreachable!("handled above"),
            }
        }
    }
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
