//! The Earley recogniser: builds the chart set by set, with Leo's optimisation for
//! deterministic right-recursive completions.

use crate::chart::ParseResult;
use crate::compile::{Op, Parser};
use crate::error::ParseError;
use rustc_hash::FxHashSet;
use std::collections::VecDeque;
use thicket_grammar::{Expr, ExprId};

/// What the Leo memo knows about completing a node from a set.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LeoMemo {
    Unknown,
    /// Not deterministic: complete the ordinary way.
    No,
    /// The chain's top item.
    Top(Item),
}

/// The finished part of the chart, for lookups while later sets are built.
pub(crate) struct Chart<'a> {
    pub(crate) items: &'a [Item],
    pub(crate) waiting: &'a [Waiting],
    pub(crate) wait_start: &'a [u32],
}

impl Chart<'_> {
    /// The waiting entries of set `o`, sorted by node.
    pub(crate) fn waiters(&self, o: usize) -> &[Waiting] {
        let lo = self.wait_start[o] as usize;
        let hi = self
            .wait_start
            .get(o + 1)
            .map_or(self.waiting.len(), |&h| h as usize);
        &self.waiting[lo..hi]
    }
}

/// An item of a set waiting for `node` to complete from that set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiting {
    pub(crate) node: u32,
    /// Index of the waiting item.
    pub(crate) item: u32,
    /// For alternations: which alternative `node` is.
    pub(crate) choice: u32,
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
}

/// The parser's working state for the set being built, reused from set to set.
#[derive(Default)]
pub(crate) struct Work {
    /// Position of the set being built.
    pub(crate) j: usize,
    /// Items of set `j`, in the order they arose.
    pub(crate) current: Vec<Item>,
    pub(crate) seen: FxHashSet<(u32, u32, u32)>,
    /// Items already scanned into sets `j + 1`, `j + 2`, ...
    pub(crate) pending: VecDeque<Vec<Item>>,
    /// Emptied vectors, for reuse.
    pub(crate) spare: Vec<Vec<Item>>,
    /// Terminals and tokens matched at `j`: `(node, start, len)` into `cache_ends`.
    pub(crate) cache_keys: Vec<(u32, u32, u32)>,
    pub(crate) cache_ends: Vec<usize>,
}

impl Work {
    /// Starts set `j` with the items scanned into it, duplicates dropped.
    fn start_set(&mut self, j: usize) {
        self.j = j;
        let mut scanned = self.pending.pop_front().unwrap_or_default();
        self.seen.clear();
        self.current.clear();
        for item in scanned.drain(..) {
            if self.seen.insert((item.node, item.dot, item.origin)) {
                self.current.push(item);
            }
        }
        self.spare.push(scanned);
        self.cache_keys.clear();
        self.cache_ends.clear();
    }

    /// Adds an item to the set at `end` (the current one, or a later one after a scan).
    fn add(&mut self, item: Item, end: usize) {
        if end == self.j {
            if self.seen.insert((item.node, item.dot, item.origin)) {
                self.current.push(item);
            }
        } else {
            let slot = end - self.j - 1;
            while self.pending.len() <= slot {
                let vec = self.spare.pop().unwrap_or_default();
                self.pending.push_back(vec);
            }
            self.pending[slot].push(item);
        }
    }
}

impl<'g> Parser<'g> {
    /// Whether `text` is in the language (no tree is built).
    pub fn recognize(&self, text: &[u8]) -> Result<(), ParseError> {
        self.parse(text).map(|_| ())
    }

    /// Parses `text` from the grammar's start rule.
    pub fn parse<'p>(&'p self, text: &'p [u8]) -> Result<ParseResult<'p, 'g>, ParseError> {
        let n = text.len();
        let mut items: Vec<Item> = Vec::new();
        let mut set_start: Vec<u32> = Vec::with_capacity(n + 2);
        let mut index: Vec<u32> = Vec::new();
        let mut waiting: Vec<Waiting> = Vec::new();
        let mut wait_start: Vec<u32> = Vec::with_capacity(n + 2);
        let mut leo: Vec<(u32, u32, u32)> = Vec::new();
        // Leo memo per waiting entry (used at the first entry of each node's group).
        let mut leo_memo: Vec<LeoMemo> = Vec::new();
        let mut work = Work::default();
        work.pending.push_back(vec![Item {
            node: self.root,
            dot: 0,
            origin: 0,
            back: 0,
        }]);
        let mut furthest = 0;
        for j in 0..=n {
            set_start.push(items.len() as u32);
            work.start_set(j);
            if work.current.is_empty() {
                wait_start.push(waiting.len() as u32);
                if work.pending.iter().all(Vec::is_empty) {
                    return Err(self.reject(text, furthest, &items, &set_start));
                }
                continue;
            }
            furthest = j;
            let mut k = 0;
            while k < work.current.len() {
                let item = work.current[k];
                k += 1;
                if items.len() + work.current.len() > self.config.max_items {
                    return Err(ParseError::TooComplex {
                        offset: j,
                        max_items: self.config.max_items,
                    });
                }
                if self.is_complete(&item) && item.origin != j as u32 {
                    let chart = Chart {
                        items: &items,
                        waiting: &waiting,
                        wait_start: &wait_start,
                    };
                    match self.leo_top(&chart, item.origin, item.node, &mut leo_memo) {
                        Some(top) => {
                            // Leo: a chain of right-recursive completions, each the only
                            // thing its origin waited for, collapses into its top item.
                            leo.push((j as u32, item.origin, item.node));
                            work.add(top, j);
                        }
                        None => {
                            let waiters = chart.waiters(item.origin as usize);
                            self.complete(item, &items, waiters, &mut work);
                        }
                    }
                }
                self.predict_and_scan(item, text, &mut work);
            }
            let base = items.len();
            items.extend_from_slice(&work.current);
            index.extend(base as u32..items.len() as u32);
            index[base..].sort_unstable_by_key(|&i| {
                let it = &items[i as usize];
                (it.node, it.origin, it.dot, i)
            });
            wait_start.push(waiting.len() as u32);
            let wait_base = waiting.len();
            for (k, item) in work.current.iter().enumerate() {
                self.for_each_expected(item, |child, choice| {
                    // Only nodes that were predicted here can complete from here.
                    let predicted = !matches!(self.ops[child as usize], Op::Literal | Op::Regex)
                        && text
                            .get(j)
                            .is_some_and(|&b| self.first[child as usize].contains(b))
                        && !self.is_token(child);
                    if predicted {
                        waiting.push(Waiting {
                            node: child,
                            item: (base + k) as u32,
                            choice,
                        });
                    }
                });
            }
            waiting[wait_base..].sort_unstable_by_key(|w| (w.node, w.item));
            leo_memo.resize(waiting.len(), LeoMemo::Unknown);
        }
        set_start.push(items.len() as u32);
        wait_start.push(waiting.len() as u32);
        let result = ParseResult {
            parser: self,
            text,
            items,
            set_start,
            index,
            waiting,
            wait_start,
            leo,
            leo_cache: Default::default(),
        };
        if result.find(n, self.root, 0, 1).is_none() {
            return Err(self.reject(text, n, &result.items, &result.set_start));
        }
        Ok(result)
    }

    /// The one item of set `o` waiting for `node` whose advance completes it, if there
    /// is exactly one waiter and it is such an item (Leo's deterministic reduction).
    pub(crate) fn sole_penultimate_waiter(
        &self,
        chart: &Chart<'_>,
        o: u32,
        node: u32,
    ) -> Option<(Item, u32)> {
        let waiters = chart.waiters(o as usize);
        let first = waiters.partition_point(|w| w.node < node);
        let w = waiters.get(first).filter(|w| w.node == node)?;
        if waiters.get(first + 1).is_some_and(|next| next.node == node) {
            return None;
        }
        let waiter = chart.items[w.item as usize];
        let advanced = match self.ops[waiter.node as usize] {
            Op::Seq { len, .. } if waiter.dot + 1 == len => Item {
                dot: len,
                back: o,
                ..waiter
            },
            Op::Ref { .. } => Item {
                dot: 1,
                back: o,
                ..waiter
            },
            Op::Alt { .. } => Item {
                dot: 1,
                back: w.choice,
                ..waiter
            },
            _ => return None,
        };
        Some((advanced, w.item))
    }

    /// The top of the Leo chain that completing `node` from set `o` starts, memoised per
    /// `(o, node)` (at the first waiting entry for `node` in set `o`). `None` if the
    /// completion is not deterministic.
    fn leo_top(&self, chart: &Chart<'_>, o: u32, node: u32, memo: &mut [LeoMemo]) -> Option<Item> {
        let slot = |key: (u32, u32)| -> Option<usize> {
            let lo = chart.wait_start[key.0 as usize] as usize;
            let waiters = chart.waiters(key.0 as usize);
            let first = waiters.partition_point(|w| w.node < key.1);
            waiters
                .get(first)
                .filter(|w| w.node == key.1)
                .map(|_| lo + first)
        };
        let start = slot((o, node))?;
        match memo[start] {
            LeoMemo::No => return None,
            LeoMemo::Top(top) => return Some(top),
            LeoMemo::Unknown => {}
        }
        // Walk up the chain iteratively (it can be as long as the input), then fill the
        // memo for every link on the way back.
        let mut path: Vec<(usize, Item)> = Vec::new();
        let mut visited = FxHashSet::default();
        let mut key = (o, node);
        let mut here = start;
        let mut top = loop {
            match memo[here] {
                LeoMemo::No => break None,
                LeoMemo::Top(top) => break Some(top),
                LeoMemo::Unknown => {}
            }
            // A unit cycle (`<a> ::= <a> | ...`) would lead back here: stop before it.
            if !visited.insert(here) {
                break None;
            }
            let Some((advanced, _)) = self.sole_penultimate_waiter(chart, key.0, key.1) else {
                memo[here] = LeoMemo::No;
                break None;
            };
            path.push((here, advanced));
            key = (advanced.origin, advanced.node);
            match slot(key) {
                Some(next) => here = next,
                None => break None, // nobody waits further up: `advanced` is the top
            }
        };
        while let Some((slot, advanced)) = path.pop() {
            let found = top.unwrap_or(advanced);
            memo[slot] = LeoMemo::Top(found);
            top = Some(found);
        }
        match memo[start] {
            LeoMemo::Top(top) => Some(top),
            _ => None,
        }
    }

    /// Advances whoever waited, at the item's origin, for the node it completes.
    fn complete(&self, item: Item, items: &[Item], waiting: &[Waiting], work: &mut Work) {
        let first = waiting.partition_point(|w| w.node < item.node);
        for w in &waiting[first..] {
            if w.node != item.node {
                break;
            }
            let waiter = items[w.item as usize];
            let (dot, back) = match self.ops[waiter.node as usize] {
                Op::Seq { .. } => (waiter.dot + 1, item.origin),
                Op::Ref { .. } => (1, item.origin),
                Op::Alt { .. } => (1, w.choice),
                Op::Repeat { min, max, .. } => {
                    (Self::next_count(min, max, waiter.dot), item.origin)
                }
                Op::Literal | Op::Regex => unreachable!("terminals do not wait"),
            };
            work.add(
                Item {
                    node: waiter.node,
                    dot,
                    origin: waiter.origin,
                    back,
                },
                work.j,
            );
        }
    }

    /// Calls `f(child, choice)` for every child the item expects next (`choice` is the
    /// alternative's index for alternations).
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
            Op::Repeat {
                item: child, max, ..
            } if Self::repeat_expects(max, item.dot) => f(child, 0),
            _ => {}
        }
    }

    /// Predicts or scans whatever the item expects next.
    fn predict_and_scan(&self, item: Item, text: &[u8], work: &mut Work) {
        let j = work.j as u32;
        self.for_each_expected(&item, |child, choice| {
            let (dot, back) = match self.ops[item.node as usize] {
                Op::Seq { .. } => (item.dot + 1, j),
                Op::Alt { .. } => (1, choice),
                Op::Ref { .. } => (1, j),
                Op::Repeat { min, max, .. } => (Self::next_count(min, max, item.dot), j),
                Op::Literal | Op::Regex => unreachable!("terminals expect nothing"),
            };
            let advanced = Item {
                node: item.node,
                dot,
                origin: item.origin,
                back,
            };
            self.expect(child, advanced, text, work);
        });
    }

    /// `advanced` is the expecting item once `child` is matched: scan terminals and
    /// tokens, predict everything else.
    fn expect(&self, child: u32, advanced: Item, text: &[u8], work: &mut Work) {
        let j = work.j;
        let starts = text
            .get(j)
            .is_some_and(|&b| self.first[child as usize].contains(b));
        if !starts {
            // Only an empty derivation can fit here, and those need no items.
            if self.nullable(child) {
                work.add(advanced, j);
            }
            return;
        }
        match self.ops[child as usize] {
            Op::Literal => {
                let Expr::Literal(bytes) = self.grammar.expr(ExprId::from_index(child as usize))
                else {
                    unreachable!("literal op")
                };
                if text[j..].starts_with(bytes) {
                    work.add(advanced, j + bytes.len());
                }
            }
            _ if matches!(self.ops[child as usize], Op::Regex) || self.is_token(child) => {
                let (start, len) = match work.cache_keys.iter().find(|&&(node, _, _)| node == child)
                {
                    Some(&(_, start, len)) => (start as usize, len as usize),
                    None => {
                        let start = work.cache_ends.len();
                        let ends = &mut work.cache_ends;
                        self.matcher(child)
                            .expect("regexes and tokens have matchers")
                            .match_ends(text, j, |e| ends.push(e));
                        let len = work.cache_ends.len() - start;
                        work.cache_keys.push((child, start as u32, len as u32));
                        (start, len)
                    }
                };
                for e in start..start + len {
                    let end = work.cache_ends[e];
                    work.add(advanced, end);
                }
            }
            _ => {
                work.add(
                    Item {
                        node: child,
                        dot: 0,
                        origin: j as u32,
                        back: j as u32,
                    },
                    j,
                );
                if self.nullable(child) {
                    work.add(advanced, j);
                }
            }
        }
    }
}
