//! A finished chart: item lookups by `(set, node, origin, dot)`, the items Leo
//! shortcuts skipped, and where each node's derivations end.

use crate::compile::Parser;
use crate::earley::{Item, LeoStep, NO_ITEM, SMALL_SET, Spare, TreeRooms, Waiting};
use rustc_hash::{FxHashMap, FxHashSet};

/// A successful parse: the chart, from which trees are read.
pub struct ParseResult<'p, 'g> {
    pub(crate) parser: &'p Parser<'g>,
    pub(crate) text: &'p [u8],
    /// The node the whole text derives: the parser's root, or a reference to the symbol
    /// of [`Parser::parse_as`](crate::Parser::parse_as).
    pub(crate) root: u32,
    pub(crate) items: Vec<Item>,
    /// Where each set's items and waiting entries are (sets in insertion order).
    pub(crate) sets: SetIndex,
    /// Sorted indices of the sets too large to search linearly, built on the first
    /// search of such a set (reading the tree follows pointers and never needs it).
    pub(crate) big_index: std::cell::OnceCell<BigIndex>,
    /// Per set (`sets`), who waits there for which node, sorted by node.
    pub(crate) waiting: Vec<Waiting>,
    /// Completions that took a Leo shortcut, by set.
    pub(crate) leo: Vec<LeoStep>,
    /// Items skipped by Leo shortcuts, rebuilt on demand for tree reading.
    pub(crate) leo_cache: std::cell::RefCell<LeoCache>,
    /// The recogniser's working lists, handed back to the parser with the chart's
    /// vectors when the result is dropped.
    pub(crate) spare: Spare,
    /// For a large input: the tree's node vectors, reserved and faulted in while the
    /// chart was built (taken by the first tree read).
    pub(crate) rooms: std::cell::Cell<Option<TreeRooms>>,
    /// Whether some item of the chart arose by two different derivations (the
    /// recogniser saw it again with another predecessor or last child). Without forks,
    /// every item has one derivation, so the input has one tree apart from what the
    /// chart does not see: the inside of tokens and empty subtrees (`count.rs`).
    pub(crate) forks: bool,
}

impl Drop for ParseResult<'_, '_> {
    /// Hands the chart's vectors back to the parser, for its next input.
    fn drop(&mut self) {
        let mut spare = std::mem::take(&mut self.spare);
        spare.items = std::mem::take(&mut self.items);
        spare.waiting = std::mem::take(&mut self.waiting);
        spare.leo = std::mem::take(&mut self.leo);
        spare.sets = std::mem::take(&mut self.sets);
        self.parser.keep_spare(spare);
    }
}

/// Where the sets are in the chart's items and waiting entries, by position. Only
/// positions with items have a set (inside a long token there are none), so positions
/// map to sets through a bitmap with running counts: a few bytes per 64 positions rather
/// than 8 per position.
#[derive(Default)]
pub(crate) struct SetIndex {
    /// Per 64 positions: which have a set, and how many sets come before them.
    blocks: Vec<(u64, u32)>,
    /// Blocks whose count is set (the ones up to the last set opened).
    counted: usize,
    /// Per set, where its items and its waiting entries start; after the last set, where
    /// they end (once finished).
    starts: Vec<(u32, u32)>,
}

impl SetIndex {
    /// Makes this an index for positions `0..len`, with no sets yet (keeping the
    /// vectors' capacity, for a parser's next input).
    pub(crate) fn reset(&mut self, len: usize) {
        self.blocks.clear();
        self.blocks.resize(len.div_ceil(64), (0, 0));
        self.counted = 0;
        self.starts.clear();
    }

    /// Bytes written in the index's vectors.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.blocks[..]) + std::mem::size_of_val(&self.starts[..])
    }

    /// Opens the set at position `j` (after every set so far), whose items and waiting
    /// entries start at `item` and `wait`.
    #[inline]
    pub(crate) fn open(&mut self, j: usize, item: usize, wait: usize) {
        let block = j >> 6;
        let sets = self.starts.len() as u32;
        while self.counted <= block {
            self.blocks[self.counted].1 = sets;
            self.counted += 1;
        }
        self.blocks[block].0 |= 1 << (j & 63);
        self.starts.push((item as u32, wait as u32));
    }

    /// Closes the last set: its items and waiting entries end at `item` and `wait`.
    pub(crate) fn finish(&mut self, item: usize, wait: usize) {
        let sets = self.starts.len() as u32;
        for block in &mut self.blocks[self.counted..] {
            block.1 = sets;
        }
        self.counted = self.blocks.len();
        self.starts.push((item as u32, wait as u32));
    }

    /// The number of the set at position `j`, if there is one.
    #[inline(always)]
    pub(crate) fn set_at(&self, j: usize) -> Option<usize> {
        let &(bits, before) = self.blocks.get(j >> 6)?;
        let bit = 1u64 << (j & 63);
        (bits & bit != 0).then(|| before as usize + (bits & (bit - 1)).count_ones() as usize)
    }

    /// The range of the set at position `j` in the items (empty if there is none; the
    /// last set may still be open, ending at `len`).
    #[inline]
    pub(crate) fn items(&self, j: usize, len: usize) -> (usize, usize) {
        match self.set_at(j) {
            Some(r) => self.range(r, len, |s| s.0),
            None => (0, 0),
        }
    }

    /// The range of the set at position `j` in the waiting entries (as `items`).
    #[inline]
    pub(crate) fn waiting(&self, j: usize, len: usize) -> (usize, usize) {
        match self.set_at(j) {
            Some(r) => self.range(r, len, |s| s.1),
            None => (0, 0),
        }
    }

    /// The range of set number `r`, by the start `of` picks.
    #[inline(always)]
    fn range(&self, r: usize, len: usize, of: impl Fn((u32, u32)) -> u32) -> (usize, usize) {
        let lo = of(self.starts[r]) as usize;
        let hi = self.starts.get(r + 1).map_or(len, |&s| of(s) as usize);
        (lo, hi)
    }

    /// The positions of the sets, in order.
    pub(crate) fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.blocks.iter().enumerate().flat_map(|(b, &(bits, _))| {
            (0..64)
                .filter(move |i| bits & (1 << i) != 0)
                .map(move |i| b * 64 + i)
        })
    }
}

/// For each set larger than `SMALL_SET`, indices into the chart's items sorted by
/// `(node, origin, dot)`. Smaller sets (most of them) are searched linearly, which costs
/// less than keeping an index for every item.
#[derive(Default)]
pub(crate) struct BigIndex {
    /// `(set, start in sorted)`, by set.
    sets: Vec<(u32, u32)>,
    sorted: Vec<u32>,
}

impl BigIndex {
    /// Indexes every large set of a chart.
    fn build(items: &[Item], sets: &SetIndex) -> BigIndex {
        let mut index = BigIndex::default();
        for j in sets.positions() {
            let (lo, hi) = sets.items(j, items.len());
            index.add_set(j, &items[lo..hi], lo);
        }
        index
    }

    /// Indexes set `j`, whose items are `items`, the first at chart index `base`, if it is
    /// large.
    pub(crate) fn add_set(&mut self, j: usize, items: &[Item], base: usize) {
        if items.len() <= SMALL_SET {
            return;
        }
        let start = self.sorted.len();
        self.sets.push((j as u32, start as u32));
        self.sorted.extend(base as u32..(base + items.len()) as u32);
        self.sorted[start..].sort_unstable_by_key(|&i| {
            let it = &items[i as usize - base];
            (it.node, it.origin, it.dot, i)
        });
    }

    /// The sorted indices of set `j`, whose size is `len` (a large set).
    fn of(&self, j: usize, len: usize) -> &[u32] {
        let at = self.sets.partition_point(|&(set, _)| (set as usize) < j);
        let start = self.sets[at].1 as usize;
        &self.sorted[start..start + len]
    }
}

/// The items Leo shortcuts skipped in a set (or, for `LeoCache::kept`, several),
/// rebuilt from the chains.
#[derive(Default)]
struct LeoSet {
    /// Searched linearly while small.
    items: Vec<Item>,
    /// By `(set, node, origin)` once `hashed`.
    map: FxHashMap<(u32, u32, u32), Item>,
    hashed: bool,
}

impl LeoSet {
    fn clear(&mut self) {
        self.items.clear();
        self.map.clear();
        self.hashed = false;
    }

    /// Adds a rebuilt item of set `j`; `false` if one with its key was there already
    /// (which it replaces).
    fn insert(&mut self, j: u32, item: Item) -> bool {
        if !self.hashed {
            if let Some(known) = self
                .items
                .iter_mut()
                .find(|it| (it.node, it.origin) == (item.node, item.origin))
            {
                // As a map insert would: the later chain's item replaces it.
                *known = item;
                return false;
            }
            if self.items.len() < SMALL_SET {
                self.items.push(item);
                return true;
            }
            self.hashed = true;
            for it in self.items.drain(..) {
                self.map.insert((j, it.node, it.origin), it);
            }
        }
        self.map.insert((j, item.node, item.origin), item).is_none()
    }

    fn find(&self, j: u32, node: u32, origin: u32) -> Option<Item> {
        if self.hashed {
            self.map.get(&(j, node, origin)).copied()
        } else {
            self.items
                .iter()
                .find(|it| (it.node, it.origin) == (node, origin))
                .copied()
        }
    }
}

/// Rebuilt Leo-skipped items: the last few sets asked for (a tree asks for a set's
/// items in bursts), and sets asked for again after they were dropped kept for good, so
/// no set is rebuilt more than twice.
#[derive(Default)]
pub(crate) struct LeoCache {
    recent: Vec<(u32, LeoSet)>,
    next: usize,
    /// Sets rebuilt once already.
    dropped: FxHashSet<u32>,
    /// Sets kept for good, all in one.
    kept: LeoSet,
    kept_sets: FxHashSet<u32>,
}

/// How many recently rebuilt sets are kept.
const RECENT_LEO_SETS: usize = 4;

impl LeoCache {
    /// The skipped item `(node, origin)` of set `j` (`Some(None)`: there is none), or
    /// `None` if the set is not rebuilt.
    fn get(&self, j: u32, node: u32, origin: u32) -> Option<Option<Item>> {
        if self.kept_sets.contains(&j) {
            return Some(self.kept.find(j, node, origin));
        }
        self.recent
            .iter()
            .find(|(set, _)| *set == j)
            .map(|(_, items)| items.find(j, node, origin))
    }

    /// Where to rebuild set `j`.
    fn make_room(&mut self, j: u32) -> &mut LeoSet {
        if !self.dropped.insert(j) {
            // Rebuilt before and dropped since: keep it this time, with the other kept
            // sets (keyed by set, so hashed from the start).
            self.kept_sets.insert(j);
            self.kept.hashed = true;
            return &mut self.kept;
        }
        if self.recent.len() < RECENT_LEO_SETS {
            self.recent.push((j, LeoSet::default()));
            return &mut self.recent.last_mut().expect("just pushed").1;
        }
        let slot = self.next;
        self.next = (self.next + 1) % RECENT_LEO_SETS;
        let (set, items) = &mut self.recent[slot];
        *set = j;
        items.clear();
        items
    }
}

impl ParseResult<'_, '_> {
    /// Number of Earley items the parse used (a measure of work and memory).
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// The index of the large sets, built on first use.
    fn big_index(&self) -> &BigIndex {
        self.big_index
            .get_or_init(|| BigIndex::build(&self.items, &self.sets))
    }

    /// The complete root item spanning the whole input, if the input was accepted.
    /// Nobody waits for the root, so it is never skipped by a Leo shortcut (though it
    /// can be the top one jumps to); the final set is scanned rather than indexed.
    pub(crate) fn root_item(&self) -> Option<Item> {
        let n = self.text.len();
        let root = self.root;
        let (lo, hi) = self.sets.items(n, self.items.len());
        self.items[lo..hi]
            .iter()
            .find(|it| (it.node, it.origin, it.dot) == (root, 0, 1))
            .copied()
    }

    /// The item `(node, origin, dot)` in set `j`, if present.
    pub(crate) fn find(&self, j: usize, node: u32, origin: u32, dot: u32) -> Option<Item> {
        let (lo, hi) = self.sets.items(j, self.items.len());
        let key = (node, origin, dot);
        if hi - lo <= SMALL_SET {
            return self.items[lo..hi]
                .iter()
                .find(|it| (it.node, it.origin, it.dot) == key)
                .copied()
                .or_else(|| self.leo_skipped(j, node, origin).filter(|it| it.dot == dot));
        }
        let slice = self.big_index().of(j, hi - lo);
        let at = slice.partition_point(|&i| {
            let it = &self.items[i as usize];
            (it.node, it.origin, it.dot) < key
        });
        slice
            .get(at)
            .map(|&i| self.items[i as usize])
            .filter(|it| (it.node, it.origin, it.dot) == key)
            .or_else(|| self.leo_skipped(j, node, origin).filter(|it| it.dot == dot))
    }

    /// Where each node's complete derivations from each start end: `(node, start)` to
    /// ends, over the chart, with the items Leo shortcuts skipped rebuilt.
    pub(crate) fn ends_index(&self) -> EndsIndex {
        let mut spans: Vec<(u32, u32, u32)> = Vec::new();
        for j in self.sets.positions() {
            let (lo, hi) = self.sets.items(j, self.items.len());
            for item in &self.items[lo..hi] {
                if self.parser.is_complete(item) {
                    spans.push((item.node, item.origin, j as u32));
                }
            }
        }
        for step in &self.leo {
            let j = step.set;
            self.leo_chain(step, |skipped| {
                spans.push((skipped.node, skipped.origin, j));
                true
            });
        }
        spans.sort_unstable();
        spans.dedup();
        EndsIndex { spans }
    }

    /// Walks the chain of a Leo shortcut, calling `visit` with each complete item it
    /// skipped, innermost first, until `visit` returns `false`, the chain ends, or it
    /// comes back to an item (a unit cycle: tree counts meet chains from any set, so
    /// they are guarded; reading a tree stops at its top first).
    pub(crate) fn leo_chain(&self, step: &LeoStep, mut visit: impl FnMut(Item) -> bool) {
        // Most chains are short: their links are checked for repeats in a small array,
        // and only a long chain pays for a hash set.
        let mut short = [(0u32, 0u32); SMALL_SET];
        let mut seen = FxHashSet::default();
        let links = LeoLinks::new(self.parser, &self.items, &self.waiting, step);
        for (steps, skipped) in links.enumerate() {
            let link = (skipped.node, skipped.origin);
            let repeated = if steps < SMALL_SET {
                let repeated = short[..steps].contains(&link);
                short[steps] = link;
                repeated
            } else {
                if steps == SMALL_SET {
                    seen.extend(short);
                }
                !seen.insert(link)
            };
            if repeated || !visit(skipped) {
                break;
            }
        }
    }

    /// A complete item of set `j` that a Leo shortcut skipped, rebuilt from the chain.
    pub(crate) fn leo_skipped(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
        let j32 = j as u32;
        let first = self.leo.partition_point(|step| step.set < j32);
        if self.leo.get(first).is_none_or(|step| step.set != j32) {
            return None;
        }
        let mut cache = self.leo_cache.borrow_mut();
        if let Some(found) = cache.get(j32, node, origin) {
            return found;
        }
        let cache = &mut *cache;
        let set = cache.make_room(j32);
        for step in self.leo[first..].iter().take_while(|step| step.set == j32) {
            // A chain shared with one rebuilt before is rebuilt from there on already.
            self.leo_chain(step, |skipped| set.insert(j32, skipped));
        }
        set.find(j32, node, origin)
    }

    /// The earliest-derived complete item of a repetition spanning `origin..j`.
    pub(crate) fn complete_repeat(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
        let (lo, hi) = self.sets.items(j, self.items.len());
        if hi - lo <= SMALL_SET {
            // In insertion order, so the first is the earliest derived.
            return self.items[lo..hi]
                .iter()
                .find(|it| (it.node, it.origin) == (node, origin) && self.parser.is_complete(it))
                .copied();
        }
        let slice = self.big_index().of(j, hi - lo);
        let at = slice.partition_point(|&i| {
            let it = &self.items[i as usize];
            (it.node, it.origin) < (node, origin)
        });
        slice[at..]
            .iter()
            .take_while(|&&i| {
                let it = &self.items[i as usize];
                (it.node, it.origin) == (node, origin)
            })
            .filter(|&&i| self.parser.is_complete(&self.items[i as usize]))
            .min()
            .map(|&i| self.items[i as usize])
    }
}

/// The complete items a Leo shortcut skipped, innermost first (their `child` left for
/// the caller), by lookups: the links are those the recogniser walked, from the
/// shortcut's first waiting entry, each link's next one in `Waiting::next`, never
/// searched. Ends where the recogniser's walk ended.
pub(crate) struct LeoLinks<'a, 'g> {
    parser: &'a Parser<'g>,
    items: &'a [Item],
    waiting: &'a [Waiting],
    origin: u32,
    slot: u32,
}

impl<'a, 'g> LeoLinks<'a, 'g> {
    /// The links of `step`'s chain in a chart's items and waiting entries.
    pub(crate) fn new(
        parser: &'a Parser<'g>,
        items: &'a [Item],
        waiting: &'a [Waiting],
        step: &LeoStep,
    ) -> LeoLinks<'a, 'g> {
        LeoLinks {
            parser,
            items,
            waiting,
            origin: step.origin,
            slot: step.slot,
        }
    }
}

impl Iterator for LeoLinks<'_, '_> {
    type Item = Item;

    #[inline]
    fn next(&mut self) -> Option<Item> {
        if self.slot == NO_ITEM {
            return None;
        }
        let w = &self.waiting[self.slot as usize];
        let skipped = self.parser.leo_link(w, self.items, self.origin)?;
        self.origin = skipped.origin;
        self.slot = w.next.get();
        Some(skipped)
    }
}

/// Where each node can end when it starts at a position, from the chart's complete
/// items (Leo-skipped ones included): `(node, start, end)` sorted, 12 bytes each (a map
/// of vectors cost about 80 bytes per start).
pub(crate) struct EndsIndex {
    spans: Vec<(u32, u32, u32)>,
}

impl EndsIndex {
    /// The ends of `node` from `start`, ascending.
    pub(crate) fn ends(&self, node: u32, start: u32) -> impl Iterator<Item = u32> + '_ {
        let from = self
            .spans
            .partition_point(|&(n, s, _)| (n, s) < (node, start));
        self.spans[from..]
            .iter()
            .take_while(move |&&(n, s, _)| (n, s) == (node, start))
            .map(|&(_, _, end)| end)
    }
}
