//! A finished chart: item lookups by `(set, node, origin, dot)`, the items Leo
//! shortcuts skipped, and where each node's derivations end.

use crate::compile::Parser;
use crate::earley::{Chart, Item, SMALL_SET, Waiting};
use rustc_hash::FxHashSet;

/// A successful parse: the chart, from which trees are read.
pub struct ParseResult<'p, 'g> {
    pub(crate) parser: &'p Parser<'g>,
    pub(crate) text: &'p [u8],
    pub(crate) items: Vec<Item>,
    /// `items[set_start[j]..set_start[j + 1]]` is Earley set `j`, in insertion order.
    pub(crate) set_start: Vec<u32>,
    /// Sorted indices of the sets too large to search linearly.
    pub(crate) big_index: BigIndex,
    /// Per set (`wait_start`), who waits there for which node, sorted by node.
    pub(crate) waiting: Vec<Waiting>,
    pub(crate) wait_start: Vec<u32>,
    /// Completions that took a Leo shortcut: `(set, origin, node)`, by set.
    pub(crate) leo: Vec<(u32, u32, u32)>,
    /// Items skipped by Leo shortcuts, rebuilt on demand for tree reading.
    pub(crate) leo_cache: std::cell::RefCell<rustc_hash::FxHashMap<(u32, u32, u32), Item>>,
}

/// The range of set `j` in the item arrays (the last set may still be open).
pub(crate) fn set_range(set_start: &[u32], len: usize, j: usize) -> (usize, usize) {
    let lo = set_start[j] as usize;
    let hi = set_start.get(j + 1).map_or(len, |&h| h as usize);
    (lo, hi)
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

impl ParseResult<'_, '_> {
    /// Number of Earley items the parse used (a measure of work and memory).
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// The item `(node, origin, dot)` in set `j`, if present.
    pub(crate) fn find(&self, j: usize, node: u32, origin: u32, dot: u32) -> Option<Item> {
        let (lo, hi) = set_range(&self.set_start, self.items.len(), j);
        let key = (node, origin, dot);
        if hi - lo <= SMALL_SET {
            return self.items[lo..hi]
                .iter()
                .find(|it| (it.node, it.origin, it.dot) == key)
                .copied()
                .or_else(|| self.leo_skipped(j, node, origin).filter(|it| it.dot == dot));
        }
        let slice = self.big_index.of(j, hi - lo);
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
    pub(crate) fn ends_index(&self) -> rustc_hash::FxHashMap<(u32, u32), Vec<u32>> {
        let mut index: rustc_hash::FxHashMap<(u32, u32), Vec<u32>> = Default::default();
        for j in 0..self.set_start.len().saturating_sub(1) {
            let (lo, hi) = set_range(&self.set_start, self.items.len(), j);
            for item in &self.items[lo..hi] {
                if self.parser.is_complete(item) {
                    index
                        .entry((item.node, item.origin))
                        .or_default()
                        .push(j as u32);
                }
            }
        }
        for &(j, o, x) in &self.leo {
            self.leo_chain(o, x, |skipped| {
                index
                    .entry((skipped.node, skipped.origin))
                    .or_default()
                    .push(j);
                true
            });
        }
        for ends in index.values_mut() {
            ends.sort_unstable();
            ends.dedup();
        }
        index
    }

    /// Walks the Leo chain that completing `node` from set `o` started, calling `visit`
    /// with each complete item the shortcut skipped, innermost first, until `visit`
    /// returns `false`, the chain ends, or it comes back to an item (a unit cycle).
    pub(crate) fn leo_chain(&self, o: u32, node: u32, mut visit: impl FnMut(Item) -> bool) {
        let chart = self.chart();
        let mut seen = FxHashSet::default();
        let mut key = (o, node);
        while let Some((skipped, _)) = self.parser.sole_penultimate_waiter(&chart, key.0, key.1) {
            if !seen.insert((skipped.node, skipped.origin)) || !visit(skipped) {
                break;
            }
            key = (skipped.origin, skipped.node);
        }
    }

    /// The finished chart, for Leo chain walks.
    pub(crate) fn chart(&self) -> Chart<'_> {
        Chart {
            items: &self.items,
            waiting: &self.waiting,
            wait_start: &self.wait_start,
        }
    }

    /// A complete item of set `j` that a Leo shortcut skipped, rebuilt from the chain.
    pub(crate) fn leo_skipped(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
        let j32 = j as u32;
        let first = self.leo.partition_point(|&(set, _, _)| set < j32);
        if self.leo.get(first).is_none_or(|&(set, _, _)| set != j32) {
            return None;
        }
        if let Some(&item) = self.leo_cache.borrow().get(&(j32, node, origin)) {
            return Some(item);
        }
        let marker = (j32, u32::MAX, u32::MAX);
        if self.leo_cache.borrow().contains_key(&marker) {
            return None; // this set's chains are already rebuilt
        }
        let mut cache = self.leo_cache.borrow_mut();
        cache.insert(
            marker,
            Item {
                node: 0,
                dot: 0,
                origin: 0,
                back: 0,
            },
        );
        for &(_, o, x) in self.leo[first..]
            .iter()
            .take_while(|&&(set, _, _)| set == j32)
        {
            // A chain shared with one rebuilt before is rebuilt from there on already.
            self.leo_chain(o, x, |skipped| {
                cache
                    .insert((j32, skipped.node, skipped.origin), skipped)
                    .is_none()
            });
        }
        cache.get(&(j32, node, origin)).copied()
    }

    /// The earliest-derived complete item of a repetition spanning `origin..j`.
    pub(crate) fn complete_repeat(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
        let (lo, hi) = set_range(&self.set_start, self.items.len(), j);
        if hi - lo <= SMALL_SET {
            // In insertion order, so the first is the earliest derived.
            return self.items[lo..hi]
                .iter()
                .find(|it| (it.node, it.origin) == (node, origin) && self.parser.is_complete(it))
                .copied();
        }
        let slice = self.big_index.of(j, hi - lo);
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
