//! Reading one derivation tree out of the chart (iteratively, for any depth).

use crate::chart::{LeoLinks, ParseResult};
use crate::compile::{Op, Parser};
use crate::earley::{Item, LEO, LeoStep, NO_ITEM, Waiting};
use crate::fresh::PREFAULT_BYTES;
use crate::token;
use thicket_grammar::ExprId;
use thicket_tree::{DerivationTree, NodeRoom, TreeBuilder, TreeSink};

/// Inputs from this size on have their tree read by two threads, if there are two.
const PARALLEL_TREE_BYTES: usize = 128 << 10;

impl ParseResult<'_, '_> {
    /// The derivation tree (see the crate docs for which one, if the input is ambiguous).
    ///
    /// A large input's tree is read by two threads when the machine has two and
    /// [`crate::ParseConfig::threads`] allows: where a
    /// node's children are a long run of siblings spanning most of the input (the
    /// elements of a JSON document's top array), the later half of the run is read into
    /// a builder of its own and appended. The tree is the same either way.
    pub fn tree(&self) -> DerivationTree {
        let reader = self.reader();
        let (room, fork_room) = match self.rooms.take() {
            Some(rooms) => (rooms.main, rooms.fork),
            None => (NodeRoom::default(), None),
        };
        let mut builder = TreeBuilder::with_text_in(self.text, room);
        let mut fork_nodes = 0;
        if self.text.len() >= PARALLEL_TREE_BYTES
            && self.parser.may_start_threads(0)
            && two_threads()
        {
            std::thread::scope(|scope| {
                let mut fork = ThreadFork::Open(scope, fork_room);
                reader.read(&mut builder, &mut fork);
                if let ThreadFork::Done(nodes) = fork {
                    fork_nodes = nodes;
                }
            });
        } else {
            reader.read(&mut builder, &mut NoFork);
        }
        let n = self.text.len();
        if n < PREFAULT_BYTES {
            return builder.finish();
        }
        self.parser.learn_per_byte(|known| {
            known.tree_nodes = builder.node_count() as f64 / n as f64;
            known.fork_nodes = fork_nodes as f64 / n as f64;
        });
        // Its room was reserved from an estimate, possibly too large: the rest goes
        // back (a large vector shrinks in place).
        let mut tree = builder.finish();
        tree.shrink_to_fit();
        tree
    }

    /// Reports the derivation tree to a sink in preorder.
    ///
    /// The tree is read by following each item's first derivation (`Item::pred` for the
    /// earlier children, `Item::child` for the last one), so no item is searched for;
    /// the items a Leo shortcut skipped are rebuilt from its chain when met.
    pub fn build_into<S: TreeSink>(&self, sink: &mut S) {
        self.reader().read(sink, &mut NoFork);
    }

    /// What reading a tree needs of the parse.
    fn reader(&self) -> Reader<'_, '_> {
        let Some(root) = self.root_item() else {
            unreachable!("a parse result has a complete root item")
        };
        Reader {
            root,
            parser: self.parser,
            text: self.text,
            items: &self.items,
            waiting: &self.waiting,
            leo: &self.leo,
        }
    }
}

/// Whether this process may run two threads at once (asked once: the answer comes from
/// system files, which costs more than reading a small tree).
pub(crate) fn two_threads() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

/// What reading a tree needs of a parse: the chart without its caches, so that two
/// threads can read one tree.
#[derive(Clone, Copy)]
struct Reader<'a, 'g> {
    /// The complete root item spanning the whole input.
    root: Item,
    parser: &'a Parser<'g>,
    text: &'a [u8],
    items: &'a [Item],
    waiting: &'a [Waiting],
    leo: &'a [LeoStep],
}

impl<'a> Reader<'a, '_> {
    /// Reads the whole tree into `sink`.
    fn read<S: TreeSink>(&self, sink: &mut S, fork: &mut impl Fork<'a, S>) {
        // Items that are not in the chart (the root's copy, and the items Leo shortcuts
        // skipped, rebuilt when met), referred to by indices from `self.items.len()` on.
        let extra: Vec<Item> = vec![self.root];
        let stack = vec![Frame::Item {
            index: self.items.len() as u32,
            end: self.text.len() as u32,
            node: self.root.node,
        }];
        self.read_frames(stack, extra, sink, fork);
    }

    /// Reads the subtrees `stack` holds (the top one first) into `sink`.
    fn read_frames<S: TreeSink>(
        &self,
        mut stack: Vec<Frame>,
        mut extra: Vec<Item>,
        sink: &mut S,
        fork: &mut impl Fork<'a, S>,
    ) {
        let p = self.parser;
        let mut scratch = token::SplitScratch::default();
        while let Some(frame) = stack.pop() {
            let (mut item, end, expected) = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Join => {
                    fork.join(sink);
                    continue;
                }
                Frame::Leaf { node, start, end } => {
                    self.emit_leaf(node, start as usize, end as usize, sink, &mut scratch);
                    continue;
                }
                Frame::Item { index, end, node } => (self.item_at(index, &mut extra), end, node),
            };
            let node = item.node;
            let start = item.origin;
            // Tokens are scanned, never predicted, so only the root's item can be one.
            if start == end || (node == p.root && p.is_token(node)) {
                // The root, when the input is empty or the whole grammar is regular.
                self.emit_leaf(expected, start as usize, end as usize, sink, &mut scratch);
                continue;
            }
            if item.child & LEO != 0 && item.child != NO_ITEM {
                item.child = self.rebuild_leo_chain(&item, &mut extra);
            }
            // The expected node, and down from a transparent reference (whose item is
            // its rule body's, `Parser::chart_node`) every node to the item's.
            let mut open = expected;
            loop {
                sink.open(ExprId::from_index(open as usize));
                stack.push(Frame::Close);
                if open == node {
                    break;
                }
                let Op::Ref { body } = p.ops[open as usize] else {
                    unreachable!("only references stand for other nodes in the chart")
                };
                open = body;
            }
            // The children right to left (so the first is on top of the stack): the
            // last from `item`, then one per `pred`.
            let mut right = end;
            match p.ops[node as usize] {
                Op::Ref { body } => stack.push(Self::child_frame(body, &item, start, right)),
                Op::Operand { body } => {
                    // The item stands for the rule's body with the alternative in `back`.
                    sink.open(ExprId::from_index(body as usize));
                    stack.push(Frame::Close);
                    let Op::Alt { start: first, .. } = p.ops[body as usize] else {
                        unreachable!("an operand's rule body is an alternation")
                    };
                    let child = p.children[(first + item.back) as usize];
                    stack.push(Self::child_frame(child, &item, start, right));
                }
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
            if 2 * (end - start) as usize >= self.text.len() {
                fork.offer(self, &mut stack, &extra);
            }
        }
    }

    /// The text span of a child's frame (not a `Close` or `Join`).
    fn frame_span(&self, frame: &Frame, extra: &[Item]) -> (usize, usize) {
        match *frame {
            Frame::Item { index, end, .. } => {
                (self.item(index, extra).origin as usize, end as usize)
            }
            Frame::Leaf { start, end, .. } => (start as usize, end as usize),
            Frame::Close | Frame::Join => unreachable!("not a child's frame"),
        }
    }

    /// The item at `index`: in the chart, or from `extra` past its end. Extra items are
    /// each read once, in the reverse of the order they were pushed (a chain is read from
    /// its top down, and a chain met inside a subtree is read before the walk leaves it),
    /// so the last one is popped: `extra` stays as short as the deepest nesting of
    /// chains rather than growing with the input.
    #[inline]
    fn item_at(&self, index: u32, extra: &mut Vec<Item>) -> Item {
        let item = self.item(index, extra);
        if index as usize + 1 == self.items.len() + extra.len() {
            extra.pop();
        }
        item
    }

    /// The item at `index`, in the chart or in `extra` past its end, left where it is.
    #[inline]
    fn item(&self, index: u32, extra: &[Item]) -> Item {
        match self.items.get(index as usize) {
            Some(item) => *item,
            None => extra[index as usize - self.items.len()],
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
            index => Frame::Item { index, end, node },
        }
    }

    /// `item` was derived by a Leo shortcut (`item.child` is `LEO | r`): rebuilds the
    /// complete items the shortcut skipped, from the completion at its bottom up to
    /// `item`, into `extra`, and returns what `item.child` stands for.
    ///
    /// The links are `ParseResult::leo_chain`'s without its guard against unit cycles:
    /// the recogniser reached `item` by walking them, so the top comes before any repeat.
    fn rebuild_leo_chain(&self, item: &Item, extra: &mut Vec<Item>) -> u32 {
        let step = &self.leo[(item.child & !LEO) as usize];
        let mut child = step.bottom;
        for mut link in LeoLinks::new(self.parser, self.items, self.waiting, step) {
            if (link.node, link.origin) == (item.node, item.origin) {
                return child; // reached `item`, the top of the chain
            }
            link.child = child;
            extra.push(link);
            child = (self.items.len() + extra.len() - 1) as u32;
        }
        unreachable!("a Leo chain ends at its top")
    }
}

/// Work left in reading a tree.
enum Frame {
    /// A complete item (by index, see `Reader::item_at`) ending at `end`, for grammar
    /// node `node`: open `node` (and, for a transparent reference, the references down
    /// to the item's node), then its children.
    Item {
        index: u32,
        end: u32,
        node: u32,
    },
    /// A child the chart does not split: a terminal, a token or an empty derivation.
    Leaf {
        node: u32,
        start: u32,
        end: u32,
    },
    Close,
    /// Where the later part of a run of siblings, read by another thread, is appended.
    Join,
}

/// Where a tree read may hand part of its work to another thread.
trait Fork<'a, S> {
    /// Called when the children of a node spanning at least half the input were pushed:
    /// may move the later part of the run of sibling frames on top of `stack` to
    /// another thread, leaving a `Frame::Join` in its place.
    fn offer(&mut self, reader: &Reader<'a, '_>, stack: &mut Vec<Frame>, extra: &[Item]);

    /// At the `Frame::Join`: appends the other thread's part to `sink`.
    fn join(&mut self, sink: &mut S);
}

/// Reads on one thread.
struct NoFork;

impl<S> Fork<'_, S> for NoFork {
    fn offer(&mut self, _: &Reader<'_, '_>, _: &mut Vec<Frame>, _: &[Item]) {}

    fn join(&mut self, _: &mut S) {
        unreachable!("nothing was forked")
    }
}

/// Hands the later half of the first long run of siblings to a second thread.
enum ThreadFork<'scope, 'env> {
    /// Not forked yet; the room reserved for the part, if any.
    Open(&'scope std::thread::Scope<'scope, 'env>, Option<NodeRoom>),
    Running(std::thread::ScopedJoinHandle<'scope, TreeBuilder>),
    /// Joined: how many nodes the other thread read.
    Done(usize),
}

impl<'scope, 'env: 'scope> Fork<'env, TreeBuilder> for ThreadFork<'scope, 'env> {
    fn offer(&mut self, reader: &Reader<'env, '_>, stack: &mut Vec<Frame>, extra: &[Item]) {
        let ThreadFork::Open(scope, room) = self else {
            return;
        };
        let scope = *scope;
        // The children just pushed: from the last (bottom) to the first (top).
        let lo = stack
            .iter()
            .rposition(|f| matches!(f, Frame::Close | Frame::Join))
            .map_or(0, |i| i + 1);
        if stack.len() - lo < 2 {
            return;
        }
        let run_start = reader.frame_span(&stack[stack.len() - 1], extra).0;
        let run_end = reader.frame_span(&stack[lo], extra).1;
        if 2 * (run_end - run_start) < reader.text.len() {
            return;
        }
        // The other thread takes the children that start in the run's later half.
        let middle = run_start + (run_end - run_start) / 2;
        let split = lo + stack[lo..].partition_point(|f| reader.frame_span(f, extra).0 >= middle);
        if split == lo || split == stack.len() {
            return;
        }
        // Only a balanced split pays for a thread (not a run of one large child and a
        // few small ones: its large child's children come next).
        let part_start = reader.frame_span(&stack[split - 1], extra).0;
        let quarter = (run_end - run_start) / 4;
        if run_end - part_start < quarter || part_start - run_start < quarter {
            return;
        }
        let part: Vec<Frame> = stack.splice(lo..split, [Frame::Join]).collect();
        let extra = extra.to_vec();
        let reader = *reader;
        let room = room.take();
        // Named, as the prefaulter is, so that a thread list tells whose it is (and, as
        // `Scope::spawn` does, a thread that cannot start is a panic).
        let handle = std::thread::Builder::new()
            .name("thicket-tree".into())
            .spawn_scoped(scope, move || {
                let text = &reader.text[part_start..run_end];
                let mut builder = TreeBuilder::with_text_in(text, room.unwrap_or_default());
                reader.read_frames(part, extra, &mut builder, &mut NoFork);
                builder
            })
            .expect("a thread starts");
        *self = ThreadFork::Running(handle);
    }

    fn join(&mut self, sink: &mut TreeBuilder) {
        let ThreadFork::Running(handle) = std::mem::replace(self, ThreadFork::Done(0)) else {
            unreachable!("joined before forking")
        };
        match handle.join() {
            Ok(part) => {
                *self = ThreadFork::Done(part.node_count());
                sink.append(part);
            }
            Err(panic) => std::panic::resume_unwind(panic),
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
                Op::Ref { body } | Op::Operand { body } => stack.push(Frame::Node(body)),
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
