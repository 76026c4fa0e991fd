//! The Earley recogniser: builds the chart set by set, with Leo's optimisation for
//! deterministic right-recursive completions.

use crate::chart::{ParseResult, SetIndex};
use crate::compile::{NONE, Op, Parser};
use crate::error::{ParseError, Rejection};
use crate::fresh::{Ahead, PerByte, Prefaulter};
use crate::memory;
use crate::terminal::RegexMatcher;
use crate::token::Take;
use thicket_grammar::SymbolId;
use thicket_tree::NodeRoom;

/// The tops of the Leo chains found so far (the memo itself is in the waiting entries,
/// `Waiting::memo`): chains share their top, so it is stored once.
#[derive(Default)]
pub(crate) struct LeoMemo {
    tops: Vec<Item>,
    /// The chain being walked (reused).
    path: Vec<(usize, Item)>,
}

const MEMO_UNKNOWN: u32 = u32::MAX;
const MEMO_NO: u32 = u32::MAX - 1;
/// On the chain being walked: meeting it again means a unit cycle.
const MEMO_WALKING: u32 = u32::MAX - 2;

/// The finished part of the chart, for lookups while later sets are built.
pub(crate) struct Chart<'a> {
    pub(crate) items: &'a [Item],
    pub(crate) waiting: &'a [Waiting],
    pub(crate) sets: &'a SetIndex,
}

impl Chart<'_> {
    /// The waiting entries of set `o`, sorted by node, and the index of the first.
    #[inline]
    pub(crate) fn waiters(&self, o: usize) -> (usize, &[Waiting]) {
        let (lo, hi) = self.sets.waiting(o, self.waiting.len());
        (lo, &self.waiting[lo..hi])
    }
}

/// An item of a set waiting for `node` to complete from that set, with the Leo memo of
/// the entry (kept in the entry rather than in arrays beside the waiting entries: one
/// array to grow and to touch).
#[derive(Debug)]
pub(crate) struct Waiting {
    pub(crate) node: u32,
    /// Index of the waiting item.
    pub(crate) item: u32,
    /// For alternations: which alternative `node` is. (Stored: finding it again means
    /// scanning the alternatives, which for a large alternation costs more than the
    /// parse.)
    pub(crate) choice: u32,
    /// What is known about completing `node` from this set (kept at the first entry of
    /// each node's group): `MEMO_UNKNOWN` (not yet looked at), `MEMO_NO` (not
    /// deterministic: complete the ordinary way), `MEMO_WALKING`, or the top of the Leo
    /// chain as an index into `LeoMemo::tops`.
    memo: SharedU32,
    /// If this entry is a link of a Leo chain: the waiting entry of the next link up
    /// (`NO_ITEM` if none was walked), so that tree reading walks a chain by lookups
    /// (`ParseResult::leo_chain`).
    pub(crate) next: SharedU32,
}

/// A `u32` updated through shared references, like a `Cell`, that can also be read from
/// several threads (a large tree is read by two). Relaxed atomic loads and stores are
/// plain moves.
#[derive(Debug)]
pub(crate) struct SharedU32(std::sync::atomic::AtomicU32);

impl SharedU32 {
    fn new(value: u32) -> SharedU32 {
        SharedU32(std::sync::atomic::AtomicU32::new(value))
    }

    #[inline(always)]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&self, value: u32) {
        self.0.store(value, std::sync::atomic::Ordering::Relaxed);
    }
}

/// An Earley item: `node` has matched `dot` (see the crate docs) from `origin`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    pub(crate) node: u32,
    pub(crate) dot: u32,
    pub(crate) origin: u32,
    /// How the item was first derived: where its last child starts, or (alternations)
    /// which alternative completed it.
    pub(crate) back: u32,
    /// The chart index of the item this one advanced from (the same node and origin,
    /// one child less, in set `back`), `NO_ITEM` for a prediction.
    pub(crate) pred: u32,
    /// What derived the last child: the chart index of its complete item, `NO_ITEM`
    /// when it was scanned (a terminal or token) or derived empty, or `LEO | r` when a
    /// Leo shortcut skipped the chain below (`ParseResult::leo[r]` says where it starts).
    pub(crate) child: u32,
}

/// Node vectors reserved for the tree of a large input while it is parsed, their
/// memory faulted in ahead (see `fresh`).
pub(crate) struct TreeRooms {
    /// For the whole tree.
    pub(crate) main: NodeRoom,
    /// For the part a second thread reads, unless earlier trees had none.
    pub(crate) fork: Option<NodeRoom>,
}

impl TreeRooms {
    /// The memory of the rooms.
    fn bytes(&self) -> usize {
        let fork = self.fork.as_ref().map_or(0, NodeRoom::capacity);
        (self.main.capacity() + fork) * thicket_tree::NODE_BYTES
    }
}

/// No item: a prediction's `pred`, a scanned or empty child.
pub(crate) const NO_ITEM: u32 = u32::MAX;
/// Tags an `Item::child` that is the index of a Leo shortcut (`ParseResult::leo`).
pub(crate) const LEO: u32 = 1 << 31;

/// A completion that took a Leo shortcut: in set `set`, completing the item at chart
/// index `bottom` (whose origin is `origin`) jumped to the top of the chain. `slot` is
/// the first waiting entry for its node in set `origin`: the chain's first link (the
/// next ones follow `Waiting::next`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeoStep {
    pub(crate) set: u32,
    pub(crate) origin: u32,
    pub(crate) bottom: u32,
    pub(crate) slot: u32,
}

/// Sets up to this size are searched linearly (deduplication, chart lookups): most sets
/// are this small, and a scan of a few items is cheaper than hashing or sorting them.
pub(crate) const SMALL_SET: usize = 16;

/// Items scanned less than this far ahead wait in per-position lists (`Work::near`),
/// the rest in a heap.
const NEAR: usize = 64;

/// Six bits of hash of an item's key, for `Work::seen_bits`.
#[inline]
fn key_hash((node, dot, origin): (u32, u32, u32)) -> u32 {
    (node ^ dot.rotate_left(16) ^ origin.wrapping_mul(0x9E37_79B9)).wrapping_mul(0x2545_F491) >> 26
}

/// The keys of a large set being built: an open-addressing table of indices into it,
/// each slot stamped with the set it belongs to, so that starting a set clears nothing.
#[derive(Default)]
struct SeenTable {
    /// `(stamp, index)`; a slot is taken if its stamp is `stamp`.
    slots: Vec<(u32, u32)>,
    stamp: u32,
    /// `slots.len()` is `1 << bits` (0: not allocated).
    bits: u32,
}

impl SeenTable {
    /// Forgets the set's keys (a new stamp).
    #[inline]
    fn clear(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped around: old stamps could collide.
            self.slots.fill((0, 0));
            self.stamp = 1;
        }
    }

    #[inline(always)]
    fn slot_of(&self, (node, dot, origin): (u32, u32, u32)) -> usize {
        let x = ((node as u64) << 32 | origin as u64) ^ (dot as u64).rotate_left(21);
        (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// Indexes the items of `current`, all distinct.
    fn start(&mut self, current: &[Item]) {
        let want = (current.len() * 4).next_power_of_two().max(64);
        if self.slots.len() < want {
            self.bits = want.trailing_zeros();
            self.slots = vec![(0, 0); want];
            self.stamp = 1;
        }
        self.clear();
        for (i, it) in current.iter().enumerate() {
            self.place((it.node, it.dot, it.origin), i as u32);
        }
    }

    /// Puts index `i` with `key` (not present) in the first free slot.
    #[inline]
    fn place(&mut self, key: (u32, u32, u32), i: u32) {
        let mask = self.slots.len() - 1;
        let mut h = self.slot_of(key);
        while self.slots[h].0 == self.stamp {
            h = (h + 1) & mask;
        }
        self.slots[h] = (self.stamp, i);
    }

    /// Adds `key`, about to be pushed at `current.len()`, unless an item of `current`
    /// has it; returns that item's index in `current` if so.
    #[inline(always)]
    fn insert(&mut self, key: (u32, u32, u32), current: &[Item]) -> Option<usize> {
        let len = current.len();
        if 2 * len >= self.slots.len() {
            // At most half full: double, and index the set again.
            self.slots = vec![(0, 0); self.slots.len() * 2];
            self.bits += 1;
            self.stamp = 1;
            for (i, it) in current.iter().enumerate() {
                self.place((it.node, it.dot, it.origin), i as u32);
            }
        }
        let mask = self.slots.len() - 1;
        let mut h = self.slot_of(key);
        loop {
            let (stamp, i) = self.slots[h];
            if stamp != self.stamp {
                self.slots[h] = (self.stamp, len as u32);
                return None;
            }
            let it = &current[i as usize];
            if (it.node, it.dot, it.origin) == key {
                return Some(i as usize);
            }
            h = (h + 1) & mask;
        }
    }
}

/// An item scanned into a later set: ordered by that set's position, then by when it was
/// scanned, so each set receives its scanned items in the order they arose.
#[derive(Clone, Copy, Debug)]
struct Scanned {
    end: u32,
    item: Item,
    seq: u64,
}

impl PartialEq for Scanned {
    fn eq(&self, other: &Self) -> bool {
        (self.end, self.seq) == (other.end, other.seq)
    }
}

impl Eq for Scanned {}

impl PartialOrd for Scanned {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scanned {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: `BinaryHeap` is a max-heap, and the earliest must come out first.
        (other.end, other.seq).cmp(&(self.end, self.seq))
    }
}

/// How a node is matched where it is expected, looked up once per parse (a token's
/// matcher is behind a `OnceLock`, too slow to ask at every expectation).
#[derive(Clone, Copy, Debug)]
enum Scan<'p> {
    /// Not looked up yet.
    Unknown,
    Literal,
    /// A regex terminal or a token, and which of its matches it takes (a lexer's token
    /// only its longest: `Grammar::set_token_match`).
    Match(&'p RegexMatcher, Take),
    /// Anything else: predicted, as this node (`Parser::chart_node`: a reference's rule
    /// body rather than the reference).
    Predict(u32),
}

/// The parser's working state for the set being built, reused from set to set, and the
/// chart's items and waiting entries, to which each set is appended as it is built (no
/// copy of a finished set).
#[derive(Default)]
pub(crate) struct Work<'p> {
    /// How each node is scanned (`Scan::Unknown` until first expected).
    scan: Vec<Scan<'p>>,
    /// Position of the set being built.
    pub(crate) j: usize,
    /// Whether matches the next byte cannot follow are dropped.
    pub(crate) follow_filter: bool,
    /// The chart's items: those of set `j` (the current set) from `base` on, in the order
    /// they arose.
    pub(crate) items: Vec<Item>,
    pub(crate) base: usize,
    /// The keys of the current set once it outgrows `SMALL_SET` (until then it is
    /// scanned).
    seen: SeenTable,
    /// While the current set is small: one bit per key hash of its items, so that a new item
    /// (the usual case) is told apart without scanning the set.
    seen_bits: u64,
    /// Items scanned into the next `NEAR - 1` sets: the set at `end` in `near[end % NEAR]`,
    /// in the order they arose; bit `end % NEAR` of `near_mask` says it is not empty.
    near: Vec<Vec<Item>>,
    near_mask: u64,
    /// Items scanned further ahead. A heap rather than one list per position: a long
    /// token must not cost a list for every position it spans. Each set receives these
    /// before its `near` items, which were all scanned later.
    pending: std::collections::BinaryHeap<Scanned>,
    /// How many items have been scanned ahead so far (orders `pending`).
    scanned: u64,
    /// The chart's waiting entries: those of set `j` from `wait_base` on, recorded as
    /// items predict (sorted once the set is done).
    pub(crate) waiting: Vec<Waiting>,
    pub(crate) wait_base: usize,
    /// Terminals and tokens matched at `j`: `(node, start, len)` into `cache_ends`.
    pub(crate) cache_keys: Vec<(u32, u32, u32)>,
    pub(crate) cache_ends: Vec<usize>,
    /// For a large input: faults in the chart's and the tree's memory before they are
    /// written.
    ahead: Option<Ahead>,
    /// Whether some item arose by two derivations (see `ParseResult::forks`).
    forks: bool,
    /// Most items the chart may hold: `ParseConfig::max_items`, or 0 once memory ran
    /// short (one comparison per item serves both limits).
    limit: usize,
    /// Under an address-space limit: what to keep free while the chart grows.
    memory: Option<MemoryWatch>,
}

/// What a parse under an address-space limit watches as its chart grows.
struct MemoryWatch {
    /// Bytes to keep free for after the parse (the tree, the caller's needs).
    keep: usize,
    /// Bytes taken for the tree's nodes already (its rooms), for messages.
    taken: usize,
    /// Whether a growth did not fit.
    short: bool,
}

/// What a parse leaves behind for the next input of the same parser: the chart's
/// vectors and the recogniser's working lists, emptied but with their capacity. A parser
/// reused across inputs (as the library intends) then neither asks the allocator again
/// for each input nor touches fresh memory: on a VM a page fault costs microseconds,
/// and fresh pages were a third of the time of a large parse.
#[derive(Default)]
pub(crate) struct Spare {
    pub(crate) items: Vec<Item>,
    pub(crate) waiting: Vec<Waiting>,
    pub(crate) leo: Vec<LeoStep>,
    pub(crate) sets: SetIndex,
    memo: LeoMemo,
    seen: SeenTable,
    near: Vec<Vec<Item>>,
    pending: std::collections::BinaryHeap<Scanned>,
    cache_keys: Vec<(u32, u32, u32)>,
    cache_ends: Vec<usize>,
    /// While kept by a parser: the bytes it keeps in memory.
    kept_bytes: usize,
}

impl Spare {
    /// Bytes written in its vectors: what keeping it keeps in memory (capacity never
    /// written to costs no memory).
    fn bytes(&self) -> usize {
        fn of<T>(v: &[T]) -> usize {
            std::mem::size_of_val(v)
        }
        of(&self.items)
            + of(&self.waiting)
            + of(&self.leo)
            + self.sets.bytes()
            + of(&self.memo.tops)
            + of(&self.seen.slots)
            + self.near.iter().map(|v| v.capacity()).sum::<usize>() * size_of::<Item>()
            + self.pending.capacity() * size_of::<Scanned>()
            + of(&self.cache_keys)
            + of(&self.cache_ends)
    }

    /// Empties every vector, keeping its capacity.
    fn clear(&mut self) {
        self.items.clear();
        self.waiting.clear();
        self.leo.clear();
        self.memo.tops.clear();
        self.memo.path.clear();
        self.near.iter_mut().for_each(Vec::clear);
        self.pending.clear();
        self.cache_keys.clear();
        self.cache_ends.clear();
    }
}

/// Most spares a parser keeps: one per thread parsing with it at once, on most machines.
const MAX_SPARES: usize = 8;

impl Parser<'_> {
    /// A spare from an earlier parse, or a new one.
    fn take_spare(&self) -> Spare {
        let spare = self.spares.lock().ok().and_then(|mut spares| spares.pop());
        spare.unwrap_or_default()
    }

    /// Keeps a finished parse's vectors for the next input, unless they would take the
    /// kept memory past `ParseConfig::keep_bytes`.
    pub(crate) fn keep_spare(&self, mut spare: Spare) {
        let bytes = spare.bytes();
        spare.clear();
        let Ok(mut spares) = self.spares.lock() else {
            return;
        };
        let kept: usize = spares.iter().map(|s| s.kept_bytes).sum();
        if spares.len() < MAX_SPARES && kept + bytes <= self.config.keep_bytes {
            spare.kept_bytes = bytes;
            spares.push(spare);
        }
    }
}

impl<'p> Work<'p> {
    /// Working state for a new parse, in a spare's vectors.
    fn from_spare(
        spare: Spare,
        follow_filter: bool,
        nodes: usize,
        ahead: Option<Ahead>,
        limit: usize,
        keep: Option<(usize, usize)>,
    ) -> Work<'p> {
        let mut near = spare.near;
        near.resize_with(NEAR, Vec::new);
        Work {
            follow_filter,
            ahead,
            limit,
            memory: keep.map(|(keep, taken)| MemoryWatch {
                keep,
                taken,
                short: false,
            }),
            scan: vec![Scan::Unknown; nodes],
            items: spare.items,
            waiting: spare.waiting,
            seen: spare.seen,
            near,
            pending: spare.pending,
            cache_keys: spare.cache_keys,
            cache_ends: spare.cache_ends,
            ..Work::default()
        }
    }

    /// Why the chart outgrew `limit` at position `j`: memory ran short, or it holds more
    /// than `max_items`.
    fn over_limit(&self, j: usize, max_items: usize) -> ParseError {
        if self.memory.as_ref().is_some_and(|m| m.short) {
            ParseError::OutOfMemory {
                offset: j,
                chart_bytes: self.items.capacity() * size_of::<Item>()
                    + self.waiting.capacity() * size_of::<Waiting>(),
                tree_bytes: self.memory.as_ref().map_or(0, |m| m.keep + m.taken),
                limit_bytes: memory::address_space_limit().unwrap_or(0),
            }
        } else {
            ParseError::TooComplex {
                offset: j,
                max_items,
            }
        }
    }

    /// The vectors back, for the chart and the next parse.
    fn into_spare(self) -> Spare {
        Spare {
            items: self.items,
            waiting: self.waiting,
            seen: self.seen,
            near: self.near,
            pending: self.pending,
            cache_keys: self.cache_keys,
            cache_ends: self.cache_ends,
            ..Spare::default()
        }
    }

    /// Starts set `j` with the items scanned into it, duplicates dropped.
    #[inline]
    fn start_set(&mut self, j: usize) {
        self.j = j;
        self.base = self.items.len();
        self.wait_base = self.waiting.len();
        self.seen.clear();
        self.seen_bits = 0;
        while let Some(scanned) = self.pending.peek().filter(|s| s.end as usize == j) {
            let item = scanned.item;
            self.pending.pop();
            self.push_new(item);
        }
        let slot = j % NEAR;
        if self.near_mask & (1 << slot) != 0 {
            self.near_mask &= !(1 << slot);
            let mut near = std::mem::take(&mut self.near[slot]);
            for &item in &near {
                self.push_new(item);
            }
            near.clear();
            self.near[slot] = near;
        }

        self.cache_keys.clear();
        self.cache_ends.clear();
    }

    /// The position of the next set after `j` that has scanned items, if any.
    fn next_scanned(&self) -> Option<usize> {
        let far = self.pending.peek().map(|s| s.end as usize);
        if self.near_mask == 0 {
            return far;
        }
        // Bit `k` of the rotated mask is the set at `j + k` (`j`'s own is empty).
        let k = self
            .near_mask
            .rotate_right((self.j % NEAR) as u32)
            .trailing_zeros();
        let near = self.j + k as usize;
        Some(far.map_or(near, |far| far.min(near)))
    }

    /// Appends `item` to the current set unless an item with its key is there already
    /// (the first derivation wins).
    #[inline(always)]
    fn push_new(&mut self, item: Item) {
        let key = (item.node, item.dot, item.origin);
        let current = &self.items[self.base..];
        let len = current.len();
        if len < SMALL_SET {
            let bit = 1u64 << key_hash(key);
            if self.seen_bits & bit != 0
                && let Some(at) = current
                    .iter()
                    .position(|it| (it.node, it.dot, it.origin) == key)
            {
                self.note_duplicate(self.base + at, &item);
                return;
            }
            self.seen_bits |= bit;
        } else {
            if len == SMALL_SET {
                // Outgrown the linear scan: index what is there.
                self.seen.start(current);
            }
            if let Some(at) = self.seen.insert(key, current) {
                self.note_duplicate(self.base + at, &item);
                return;
            }
        }
        if self.items.len() == self.items.capacity() {
            self.grow(|work| &mut work.items);
        }
        self.items.push(item);
    }

    /// `item` arose again, as the item at chart index `existing`: if by another
    /// derivation, the chart has two ways to one item (`forks`). Predictions have no
    /// derivation, and an item advanced from itself (one more empty repetition past the
    /// minimum) is no new tree.
    #[inline(always)]
    fn note_duplicate(&mut self, existing: usize, item: &Item) {
        if item.pred == NO_ITEM || item.pred as usize == existing {
            return;
        }
        let old = &self.items[existing];
        if (old.pred, old.back, old.child) != (item.pred, item.back, item.child) {
            self.forks = true;
        }
    }

    /// Records that the item at chart index `item` waits for `node` (`choice`: which
    /// alternative it is).
    #[inline(always)]
    fn push_waiting(&mut self, node: u32, item: u32, choice: u32) {
        if self.waiting.len() == self.waiting.capacity() {
            self.grow(|work| &mut work.waiting);
        }
        self.waiting.push(Waiting {
            node,
            item,
            choice,
            memo: SharedU32::new(MEMO_UNKNOWN),
            next: SharedU32::new(NO_ITEM),
        });
    }

    /// Doubles a full chart vector (as `push` would) and, for a large input, has its
    /// new capacity faulted in ahead as far as the input ahead will likely write.
    /// Under an address-space limit, a growth that does not fit with the memory to keep
    /// is made smaller (an eighth), or to a last few elements while the parse stops.
    #[cold]
    #[inline(never)]
    fn grow<T>(&mut self, vector: impl FnOnce(&mut Self) -> &mut Vec<T>) {
        let keep = self.memory.as_ref().map(|m| m.keep);
        let vector = vector(self);
        let extra = vector.len().max(64);
        let mut short = false;
        match keep {
            None => vector.reserve(extra),
            Some(keep) => {
                let size = size_of::<T>();
                if memory::fits(extra * size, keep) {
                    vector.reserve_exact(extra);
                } else if memory::fits(extra / 8 * size, keep) {
                    vector.reserve_exact(extra / 8);
                } else {
                    // Room for the item at hand; the parse stops at the next one.
                    vector.reserve_exact(64);
                    short = true;
                }
            }
        }
        if short {
            self.limit = 0;
            if let Some(watch) = &mut self.memory {
                watch.short = true;
            }
        }
        if let Some(ahead) = &mut self.ahead {
            ahead.ask(self.j, &self.items, &self.waiting);
        }
    }

    /// Adds an item to the set at `end` (the current one, or a later one after a scan).
    #[inline(always)]
    fn add(&mut self, item: Item, end: usize) {
        if end == self.j {
            self.push_new(item);
        } else if end - self.j < NEAR {
            let slot = end % NEAR;
            self.near[slot].push(item);
            self.near_mask |= 1 << slot;
        } else {
            self.pending.push(Scanned {
                end: end as u32,
                seq: self.scanned,
                item,
            });
            self.scanned += 1;
        }
    }
}

impl<'g> Parser<'g> {
    /// Whether `text` is in the language (no tree is built).
    pub fn recognize(&self, text: &[u8]) -> Result<(), ParseError> {
        self.parse_for(text, false).map(|_| ())
    }

    /// Parses `text` from the grammar's start rule.
    pub fn parse<'p>(&'p self, text: &'p [u8]) -> Result<ParseResult<'p, 'g>, ParseError> {
        self.parse_for(text, true)
    }

    /// Parses `text` as a derivation of `symbol` instead of the start rule (to read a
    /// text back as a subtree, e.g. a solver's edit). The tree's root is a reference to
    /// `symbol` (an occurrence of it in the grammar; graft it elsewhere with
    /// `DerivationTree::emit_subtree`). The FOLLOW filter is off: what may follow
    /// `symbol` inside the grammar is no constraint on a text that ends with it.
    /// A symbol nothing refers to (the start rule has the grammar's root) derives no
    /// subtree, and every text is rejected at its start.
    pub fn parse_as<'p>(
        &'p self,
        symbol: SymbolId,
        text: &'p [u8],
    ) -> Result<ParseResult<'p, 'g>, ParseError> {
        let root = self.ref_nodes.get(symbol.index()).copied().unwrap_or(NONE);
        if root == NONE {
            let name = format!("<{}>", self.grammar.rule(symbol).name);
            return Err(ParseError::Rejected(Box::new(Rejection::at(
                text,
                0,
                Vec::new(),
                vec![name],
            ))));
        }
        self.run_from(root, text, false, true)
    }

    /// Parses `text` for reading its derivation into a sink
    /// ([`ParseResult::build_into`], e.g. rendering it as it is read) rather than into a
    /// [`thicket_tree::DerivationTree`]: no memory is reserved for a tree's nodes, so a
    /// large input costs its chart only. [`ParseResult::tree`] still works (slower).
    pub fn parse_streaming<'p>(
        &'p self,
        text: &'p [u8],
    ) -> Result<ParseResult<'p, 'g>, ParseError> {
        self.parse_for(text, false)
    }

    /// Parses `text`; `tree`: whether a tree will likely be read (its memory is then
    /// reserved and faulted in ahead for a large input).
    fn parse_for<'p>(
        &'p self,
        text: &'p [u8],
        tree: bool,
    ) -> Result<ParseResult<'p, 'g>, ParseError> {
        match self.run(text, true, tree) {
            // The FOLLOW filter drops the matches a rejection message is made of (where
            // the furthest items are, what they expected), so a rejected input is parsed
            // again without it; it never changes whether an input is accepted.
            Err(ParseError::Rejected(_)) => self.run(text, false, false),
            done => done,
        }
    }

    /// What the trees of large inputs needed per byte so far.
    pub(crate) fn per_byte(&self) -> PerByte {
        self.per_byte.lock().map(|known| *known).unwrap_or_default()
    }

    /// Records what the tree of a large input needed per byte.
    pub(crate) fn learn_per_byte(&self, update: impl FnOnce(&mut PerByte)) {
        if let Ok(mut known) = self.per_byte.lock() {
            update(&mut known);
        }
    }

    /// Builds the chart. With `follow_filter`, matches and completions of a node at a
    /// position where the next byte cannot follow it are dropped: they are in no
    /// derivation of the whole input, and neither is anything derived from them, so the
    /// items that remain arise in the same order with the same first derivations.
    ///
    /// For a large input a second thread faults in the memory the chart grows into, and
    /// (with `tree`, as large as earlier trees were, or `PerByte::TYPICAL`) the memory
    /// of the tree's nodes, while the chart is built.
    fn run<'p>(
        &'p self,
        text: &'p [u8],
        follow_filter: bool,
        tree: bool,
    ) -> Result<ParseResult<'p, 'g>, ParseError> {
        self.run_from(self.root, text, follow_filter, tree)
    }

    /// `run` with `root` as the node the whole of `text` must derive (the grammar's root,
    /// or a token's node when a rejection inside it is explained: see `error.rs`).
    pub(crate) fn run_from<'p>(
        &'p self,
        root: u32,
        text: &'p [u8],
        follow_filter: bool,
        tree: bool,
    ) -> Result<ParseResult<'p, 'g>, ParseError> {
        let n = text.len();
        let mut spare = self.take_spare();
        let mut sets = std::mem::take(&mut spare.sets);
        sets.reset(n + 1);
        let mut leo = std::mem::take(&mut spare.leo);
        let mut leo_memo = std::mem::take(&mut spare.memo);
        let _running = Running::start(&self.running);
        let fresh = self
            .may_start_threads(1)
            .then(|| Prefaulter::for_input(n))
            .flatten();
        // The tree's rooms only where they will be faulted in.
        let rooms = fresh.as_ref().and_then(|_| self.tree_rooms(n, tree));
        // Under an address-space limit, the chart grows only while the tree (unless its
        // rooms are taken already) and what the caller needs after the parse still fit.
        let keep = memory::address_space_limit().map(|_| {
            let nodes = if rooms.is_none() {
                self.tree_bytes(n)
            } else {
                0
            };
            let tree_bytes = if tree {
                nodes.saturating_add(memory::READING_PER_BYTE.saturating_mul(n))
            } else {
                0
            };
            let taken = rooms.iter().map(TreeRooms::bytes).sum();
            (
                tree_bytes.saturating_add(self.config.reserve_per_byte.saturating_mul(n)),
                taken,
            )
        });
        let ahead = fresh.map(|fresh| {
            let addresses = rooms.iter().flat_map(|rooms| {
                std::iter::once(&rooms.main)
                    .chain(&rooms.fork)
                    .map(NodeRoom::addresses)
            });
            Ahead::new(fresh, n, addresses.collect())
        });
        let mut work = Work::from_spare(
            spare,
            follow_filter,
            self.ops.len(),
            ahead,
            self.config.max_items,
            keep,
        );
        work.pending.push(Scanned {
            end: 0,
            item: Item {
                node: root,
                dot: 0,
                origin: 0,
                back: 0,
                pred: NO_ITEM,
                child: NO_ITEM,
            },
            seq: 0,
        });
        let mut furthest = 0;
        let mut j = 0;
        while j <= n {
            work.start_set(j);
            if let Some(ahead) = &mut work.ahead {
                ahead.at(j, &work.items, &work.waiting);
            }
            if work.items.len() == work.base {
                match work.next_scanned() {
                    None => {
                        return Err(self.reject(
                            text,
                            furthest,
                            &work.items,
                            &sets,
                            !follow_filter,
                        ));
                    }
                    Some(next) => {
                        // Nothing happens until then (inside a long token): no sets.
                        j = next;
                        continue;
                    }
                }
            }
            sets.open(j, work.base, work.wait_base);
            furthest = j;
            let mut k = work.base;
            while k < work.items.len() {
                let item = work.items[k];
                if work.items.len() > work.limit {
                    return Err(work.over_limit(j, self.config.max_items));
                }
                let op = self.ops[item.node as usize];
                if Self::op_complete(op, item.dot)
                    && item.origin != j as u32
                    && (!follow_filter || self.can_follow(item.node, text, j))
                {
                    let chart = Chart {
                        items: &work.items,
                        waiting: &work.waiting,
                        sets: &sets,
                    };
                    // One search for the node's waiters serves the Leo memo (kept at the
                    // first of them) and the completion; with none, there is nothing to do.
                    let (lo, waiters) = chart.waiters(item.origin as usize);
                    let first = waiters.partition_point(|w| w.node < item.node);
                    if waiters.get(first).is_some_and(|w| w.node == item.node) {
                        let end = lo + waiters.len();
                        match self.leo_top(&chart, item.origin, lo + first, end, &mut leo_memo) {
                            Some(top) => {
                                // Leo: a chain of right-recursive completions, each the
                                // only thing its origin waited for, collapses into its top.
                                work.add(
                                    Item {
                                        child: LEO | leo.len() as u32,
                                        ..top
                                    },
                                    j,
                                );
                                leo.push(LeoStep {
                                    set: j as u32,
                                    origin: item.origin,
                                    bottom: k as u32,
                                    slot: (lo + first) as u32,
                                });
                            }
                            None => self.complete(item, k as u32, lo + first..end, &mut work),
                        }
                    }
                }
                self.predict_and_scan(op, item, k as u32, text, &mut work);
                k += 1;
            }
            let new = &mut work.waiting[work.wait_base..];
            if new.len() > 1 {
                new.sort_unstable_by_key(|w| (w.node, w.item));
            }
            j += 1;
        }
        let forks = work.forks;
        let mut spare = work.into_spare();
        spare.memo = leo_memo;
        let (items, waiting) = (
            std::mem::take(&mut spare.items),
            std::mem::take(&mut spare.waiting),
        );
        sets.finish(items.len(), waiting.len());
        let result = ParseResult {
            parser: self,
            text,
            root,
            items,
            sets,
            big_index: Default::default(),
            waiting,
            leo,
            leo_cache: Default::default(),
            spare,
            rooms: std::cell::Cell::new(rooms),
            forks,
        };
        if result.root_item().is_none() {
            return Err(self.reject(text, n, &result.items, &result.sets, !follow_filter));
        }
        Ok(result)
    }

    /// With `tree`, node vectors for the tree of an input of `n` bytes, as large as
    /// earlier large trees say it will be (`PerByte::TYPICAL` before the first).
    /// Under an address-space limit, none unless they fit with room to spare.
    fn tree_rooms(&self, n: usize, tree: bool) -> Option<TreeRooms> {
        if !tree || !memory::fits(self.tree_bytes(n), 0) {
            return None;
        }
        let known = self.per_byte().or_typical();
        let nodes = PerByte::estimate(known.tree_nodes, n);
        let fork_nodes = PerByte::estimate(known.fork_nodes, n);
        Some(TreeRooms {
            main: NodeRoom::with_capacity(nodes),
            fork: (fork_nodes > 0).then(|| NodeRoom::with_capacity(fork_nodes)),
        })
    }

    /// The memory the tree of an input of `n` bytes likely needs while it is read (its
    /// nodes, and those of the part a second thread reads before they are appended).
    fn tree_bytes(&self, n: usize) -> usize {
        let known = self.per_byte().or_typical();
        (PerByte::estimate(known.tree_nodes, n) + PerByte::estimate(known.fork_nodes, n))
            .saturating_mul(thicket_tree::NODE_BYTES)
    }

    /// The one item of set `o` waiting for a node whose advance completes it, if there
    /// is exactly one waiter and it is such an item (Leo's deterministic reduction), with
    /// the waiter's index. `first` is the node's first waiting entry in set `o`, whose
    /// waiting entries end at `set_end`.
    #[inline]
    fn sole_penultimate_at(
        &self,
        chart: &Chart<'_>,
        o: u32,
        first: usize,
        set_end: usize,
    ) -> Option<(Item, u32)> {
        let w = &chart.waiting[first];
        if first + 1 < set_end && chart.waiting[first + 1].node == w.node {
            return None;
        }
        Some((self.penultimate_advanced(w, chart.items, o)?, w.item))
    }

    /// The item that `w`, a waiting entry of set `o`, advanced to as a link of a Leo chain
    /// (the recogniser's `sole_penultimate_at`), if it is one. Once the chart is built, the
    /// memo of every entry a chain reaches (a shortcut's first link, and each `next`)
    /// is final: a top if the entry is a link, `MEMO_NO` if not. So tree reading tells a
    /// link by its memo, without looking up its set again.
    #[inline]
    pub(crate) fn leo_link(&self, w: &Waiting, items: &[Item], o: u32) -> Option<Item> {
        (w.memo.get() < MEMO_WALKING).then(|| self.advanced_waiter(w, items, o))
    }

    /// The item that `w`, a waiting entry of set `o`, advances to when its node
    /// completes, if that advance completes it (a link of a Leo chain; repetitions are
    /// never links).
    #[inline]
    fn penultimate_advanced(&self, w: &Waiting, items: &[Item], o: u32) -> Option<Item> {
        let advanced = self.advanced_waiter(w, items, o);
        let op = self.ops[advanced.node as usize];
        (!matches!(op, Op::Repeat { .. }) && Self::op_complete(op, advanced.dot))
            .then_some(advanced)
    }

    /// The item that `w`, a waiting entry of set `o`, advances to when the node it waits
    /// for completes from `o` (its `child` left for the caller).
    #[inline]
    pub(crate) fn advanced_waiter(&self, w: &Waiting, items: &[Item], o: u32) -> Item {
        let waiter = items[w.item as usize];
        let (dot, back) = match self.ops[waiter.node as usize] {
            Op::Seq { .. } => (waiter.dot + 1, o),
            Op::Ref { .. } => (1, o),
            Op::Alt { .. } | Op::Operand { .. } => (1, w.choice),
            Op::Repeat { min, max, .. } => (Self::next_count(min, max, waiter.dot), o),
            Op::Literal | Op::Regex => unreachable!("terminals do not wait"),
        };
        Item {
            dot,
            back,
            pred: w.item,
            child: NO_ITEM,
            ..waiter
        }
    }

    /// The top of the Leo chain that completing a node from set `o` starts, memoised per
    /// `(o, node)` (at the first waiting entry for the node in set `o`). `None` if the
    /// completion is not deterministic.
    ///
    /// `start` is the memo slot of `(o, node)`: the index of the first waiting entry for
    /// the node in set `o`, whose waiting entries end at `end`.
    fn leo_top(
        &self,
        chart: &Chart<'_>,
        o: u32,
        start: usize,
        end: usize,
        memo: &mut LeoMemo,
    ) -> Option<Item> {
        let waiting = chart.waiting;
        // The first waiting entry for `key.1` in set `key.0`, and the end of the set's.
        let slot = |key: (u32, u32)| -> Option<(usize, usize)> {
            let (lo, waiters) = chart.waiters(key.0 as usize);
            let first = waiters.partition_point(|w| w.node < key.1);
            waiters
                .get(first)
                .filter(|w| w.node == key.1)
                .map(|_| (lo + first, lo + waiters.len()))
        };
        match waiting[start].memo.get() {
            MEMO_NO => return None,
            MEMO_UNKNOWN => {}
            top => return Some(memo.tops[top as usize]),
        }
        // Walk up the chain iteratively (it can be as long as the input), then fill the
        // memo for every link on the way back.
        let mut path = std::mem::take(&mut memo.path);
        let (mut o, mut here, mut set_end) = (o, start, end);
        let mut top = loop {
            let w = &waiting[here];
            match w.memo.get() {
                MEMO_NO => break None,
                MEMO_UNKNOWN => {}
                // A unit cycle (`<a> ::= <a> | ...`) led back here: stop before it.
                MEMO_WALKING => break None,
                top => break Some(top),
            }
            let Some((advanced, _)) = self.sole_penultimate_at(chart, o, here, set_end) else {
                w.memo.set(MEMO_NO);
                break None;
            };
            w.memo.set(MEMO_WALKING);
            path.push((here, advanced));
            o = advanced.origin;
            match slot((advanced.origin, advanced.node)) {
                Some((next, next_end)) => {
                    w.next.set(next as u32);
                    (here, set_end) = (next, next_end);
                }
                None => break None, // nobody waits further up: `advanced` is the top
            }
        };
        while let Some((slot, advanced)) = path.pop() {
            let found = top.unwrap_or_else(|| {
                memo.tops.push(advanced);
                (memo.tops.len() - 1) as u32
            });
            waiting[slot].memo.set(found);
            top = Some(found);
        }
        memo.path = path;
        match waiting[start].memo.get() {
            MEMO_NO | MEMO_UNKNOWN => None,
            top => Some(memo.tops[top as usize]),
        }
    }

    /// Advances whoever waited, at the item's origin, for the node it completes.
    /// `index` is the item's chart index; `waiting` (chart indices of waiting entries)
    /// runs from the first entry for the item's node to the end of the origin's set.
    fn complete(&self, item: Item, index: u32, waiting: std::ops::Range<usize>, work: &mut Work) {
        // The origin's entries are in a finished set, and completing adds items only:
        // lend the entries out as a slice while the current set grows (no bounds check
        // or copy per waiter; ambiguous grammars have many).
        let entries = std::mem::take(&mut work.waiting);
        for w in &entries[waiting] {
            if w.node != item.node {
                break;
            }
            let advanced = Item {
                child: index,
                ..self.advanced_waiter(w, &work.items, item.origin)
            };
            work.push_new(advanced);
        }
        work.waiting = entries;
    }

    /// Calls `f(child, choice)` for every child the item expects next (`choice` is the
    /// alternative's index for alternations).
    #[inline]
    pub(crate) fn for_each_expected(&self, item: &Item, mut f: impl FnMut(u32, u32)) {
        match self.ops[item.node as usize] {
            Op::Seq { start, len } if item.dot < len => {
                f(self.children[(start + item.dot) as usize], 0)
            }
            Op::Ref { body } if item.dot == 0 => f(body, 0),
            Op::Alt { start, len } if item.dot == 0 => {
                for i in 0..len {
                    f(self.children[(start + i) as usize], i);
                }
            }
            Op::Operand { body } if item.dot == 0 => {
                let Op::Alt { start, len } = self.ops[body as usize] else {
                    unreachable!("an operand's rule body is an alternation")
                };
                for i in 0..len {
                    let child = self.children[(start + i) as usize];
                    if !self.is_associative(child) {
                        f(child, i);
                    }
                }
            }
            Op::Repeat {
                item: child, max, ..
            } if Self::repeat_expects(max, item.dot) => f(child, 0),
            _ => {}
        }
    }

    /// Predicts or scans whatever the item expects next.
    /// `index` is the item's index in the chart, for the waiting entries of predictions.
    /// (The same cases as `for_each_expected`, written out: this is the hot loop.)
    #[inline]
    fn predict_and_scan<'p>(
        &'p self,
        op: Op,
        item: Item,
        index: u32,
        text: &[u8],
        work: &mut Work<'p>,
    ) {
        let j = work.j as u32;
        let advanced = |dot: u32, back: u32| Item {
            node: item.node,
            dot,
            origin: item.origin,
            back,
            pred: index,
            child: NO_ITEM,
        };
        match op {
            Op::Seq { start, len } if item.dot < len => {
                let child = self.children[(start + item.dot) as usize];
                self.expect_child(child, 0, advanced(item.dot + 1, j), index, text, work);
            }
            Op::Ref { body } if item.dot == 0 => {
                self.expect_child(body, 0, advanced(1, j), index, text, work);
            }
            Op::Alt { start, len } if item.dot == 0 => {
                for i in 0..len {
                    let child = self.children[(start + i) as usize];
                    self.expect_child(child, i, advanced(1, i), index, text, work);
                }
            }
            Op::Operand { body } if item.dot == 0 => {
                // The rule's alternatives but the associative ones (a right operand is
                // derived through those only: see `Parser::restrict_operands`).
                let Op::Alt { start, len } = self.ops[body as usize] else {
                    unreachable!("an operand's rule body is an alternation")
                };
                for i in 0..len {
                    let child = self.children[(start + i) as usize];
                    if !self.is_associative(child) {
                        self.expect_child(child, i, advanced(1, i), index, text, work);
                    }
                }
            }
            Op::Repeat {
                item: child,
                min,
                max,
            } if Self::repeat_expects(max, item.dot) => {
                let dot = Self::next_count(min, max, item.dot);
                self.expect_child(child, 0, advanced(dot, j), index, text, work);
            }
            _ => {}
        }
    }

    /// `expect`, and the waiting entry if `child` was predicted (only nodes predicted
    /// here can complete from here).
    #[inline]
    fn expect_child<'p>(
        &'p self,
        child: u32,
        choice: u32,
        advanced: Item,
        index: u32,
        text: &[u8],
        work: &mut Work<'p>,
    ) {
        let predicted = self.expect(child, advanced, text, work);
        if predicted != NONE {
            work.push_waiting(predicted, index, choice);
        }
    }

    /// `advanced` is the expecting item once `child` is matched: scan terminals and
    /// tokens, predict everything else. Returns the node it predicted for `child`
    /// (`child`, or for a reference its rule's body: see `Parser::chart_node`), or
    /// `NONE`.
    #[inline]
    fn expect<'p>(&'p self, child: u32, advanced: Item, text: &[u8], work: &mut Work<'p>) -> u32 {
        let j = work.j;
        let starts = text
            .get(j)
            .is_some_and(|&b| self.first[child as usize].contains(b));
        if !starts {
            // Only an empty derivation can fit here, and those need no items.
            if self.nullable(child) {
                work.add(advanced, j);
            }
            return NONE;
        }
        let scan = match work.scan[child as usize] {
            Scan::Unknown => {
                let scan = match self.ops[child as usize] {
                    Op::Literal => Scan::Literal,
                    _ => match self.matcher(child) {
                        Some(m) => Scan::Match(m, self.scan_take(child)),
                        None => Scan::Predict(self.chart_node(child)),
                    },
                };
                work.scan[child as usize] = scan;
                scan
            }
            known => known,
        };
        match scan {
            Scan::Literal => {
                let bytes = self.literal(child);
                if text[j..].starts_with(bytes)
                    && (!work.follow_filter || self.can_follow(child, text, j + bytes.len()))
                {
                    work.add(advanced, j + bytes.len());
                }
                NONE
            }
            Scan::Match(matcher, take) => {
                let (start, len) = match work.cache_keys.iter().find(|&&(node, _, _)| node == child)
                {
                    Some(&(_, start, len)) => (start as usize, len as usize),
                    None => {
                        let start = work.cache_ends.len();
                        let ends = &mut work.cache_ends;
                        let filter = work.follow_filter;
                        if take != Take::All {
                            let mut last = None;
                            matcher.match_ends(text, j, |e| last = Some(e));
                            let taken = |e: usize| match take {
                                Take::LongestUntaken(token) => {
                                    self.grammar.is_token_taken_text(token, &text[j..e])
                                }
                                _ => false,
                            };
                            ends.extend(last.filter(|&e| {
                                (!filter || self.can_follow(child, text, e)) && !taken(e)
                            }));
                        } else {
                            matcher.match_ends(text, j, |e| {
                                if !filter || self.can_follow(child, text, e) {
                                    ends.push(e)
                                }
                            });
                        }
                        let len = work.cache_ends.len() - start;
                        work.cache_keys.push((child, start as u32, len as u32));
                        (start, len)
                    }
                };
                for e in start..start + len {
                    let end = work.cache_ends[e];
                    work.add(advanced, end);
                }
                NONE
            }
            Scan::Unknown => unreachable!("looked up above"),
            Scan::Predict(node) => {
                work.add(
                    Item {
                        node,
                        dot: 0,
                        origin: j as u32,
                        back: j as u32,
                        pred: NO_ITEM,
                        child: NO_ITEM,
                    },
                    j,
                );
                if self.nullable(child) {
                    work.add(advanced, j);
                }
                node
            }
        }
    }
}

/// Counts a parse in `Parser::running` while it builds its chart.
struct Running<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Running<'a> {
    fn start(count: &'a std::sync::atomic::AtomicUsize) -> Running<'a> {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Running(count)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}
