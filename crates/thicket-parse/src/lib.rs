//! # thicket-parse
//!
//! A general context-free parser: any grammar the spec format accepts (ambiguous, with
//! empty rules, left and right recursion, EBNF quantifiers, regex and byte terminals),
//! over bytes, into the same [`DerivationTree`]s the generator produces, so that
//! `unparse(parse(x)) == x` and trees from both sides can be compared.
//!
//! ## Algorithm
//!
//! Earley's algorithm run directly on the grammar graph (no rewriting to BNF): an item
//! is `(node, dot, origin)` where `node` is any non-terminal grammar node. A sequence's
//! dot is the number of children matched; a reference, an alternation: 0 (expecting) or
//! 1 (complete); a repetition's dot counts repetitions, capped at `min` for unbounded
//! ones, so `x*` needs one item per position and a long repetition parses in linear
//! time. Terminals are matched where they are expected (literals by comparison, regexes
//! by an anchored DFA reporting every match end) and the advanced item lands in the set
//! at the match end. Empty derivations use Aycock and Horspool's fix: expecting a
//! nullable node advances at once.
//!
//! Who waits for a completed node is static (its parent in the graph, or every reference
//! to its rule), so completion looks only in the origin set, through a per-set index
//! sorted by `(node, origin, dot)`.
//!
//! ## Which tree (ambiguity)
//!
//! Every item remembers how it was first derived (`back`: where its last child starts,
//! or which alternative completed it). The tree returned is the one these first
//! derivations spell: **the derivation the parser found first**, processing positions
//! left to right and items in the order they arose. Because an item can only be first
//! derived from items that existed before it, this tree is always finite, even for
//! grammars with cycles such as `<a> ::= <a> | "x"`. Empty subtrees are built from a
//! static choice (the shallowest empty derivation), for the same reason. The
//! number of trees is available separately ([`ParseResult::count_trees`]).

#![warn(missing_docs)]

mod count;
mod terminal;
mod token;

pub use count::TreeCount;
pub use terminal::RegexMatcher;

use rustc_hash::FxHashSet;
use std::collections::VecDeque;
use std::sync::OnceLock;
use thicket_grammar::{Expr, ExprId, Grammar, SymbolId};
use thicket_tree::{DerivationTree, TreeBuilder, TreeSink};

/// Limits of the parser.
#[derive(Clone, Copy, Debug)]
pub struct ParseConfig {
    /// Most Earley items kept for one input before giving up; bounds memory (an item
    /// costs 20 bytes).
    pub max_items: usize,
}

impl Default for ParseConfig {
    fn default() -> Self {
        ParseConfig {
            max_items: 100_000_000,
        }
    }
}

/// Why an input could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The input is not in the language of the grammar.
    #[error("{0}")]
    Rejected(Box<Rejection>),
    /// The input needs more work than [`ParseConfig::max_items`] allows.
    #[error("input too complex: more than {max_items} parser items at byte offset {offset}")]
    TooComplex {
        /// Where the budget ran out.
        offset: usize,
        /// The budget.
        max_items: usize,
    },
}

/// Where and why an input left the language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Byte offset of the first byte that cannot be parsed (the input length if the
    /// input ended too early).
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    /// 1-based column (in bytes) of `offset`.
    pub column: usize,
    /// The byte found there, or `None` at the end of the input.
    pub found: Option<u8>,
    /// Terminals that would have been accepted there, in spec syntax.
    pub expected: Vec<String>,
    /// The rules being parsed there (`<name>`).
    pub rules: Vec<String>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let found = match self.found {
            None => "unexpected end of input".to_string(),
            Some(b) if b.is_ascii_graphic() || b == b' ' => format!("unexpected {:?}", b as char),
            Some(b) => format!("unexpected byte 0x{b:02x}"),
        };
        write!(f, "{}:{}: {found}", self.line, self.column)?;
        if !self.expected.is_empty() {
            write!(f, "; expected {}", self.expected.join(", "))?;
        }
        if !self.rules.is_empty() {
            write!(f, " (in {})", self.rules.join(", "))?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Literal,
    Regex,
    Ref {
        body: u32,
    },
    Seq {
        start: u32,
        len: u32,
    },
    Alt {
        start: u32,
        len: u32,
    },
    Repeat {
        item: u32,
        min: u32,
        max: Option<u32>,
    },
}

/// What the Leo memo knows about completing a node from a set.
#[derive(Clone, Copy, Debug)]
enum LeoMemo {
    Unknown,
    /// Not deterministic: complete the ordinary way.
    No,
    /// The chain's top item.
    Top(Item),
}

/// The finished part of the chart, for lookups while later sets are built.
struct Chart<'a> {
    items: &'a [Item],
    waiting: &'a [Waiting],
    wait_start: &'a [u32],
}

impl Chart<'_> {
    /// The waiting entries of set `o`, sorted by node.
    fn waiters(&self, o: usize) -> &[Waiting] {
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
struct Waiting {
    node: u32,
    /// Index of the waiting item.
    item: u32,
    /// For alternations: which alternative `node` is.
    choice: u32,
}

const NONE: u32 = u32::MAX;

/// A parser for one grammar: build once, parse many inputs, from many threads.
pub struct Parser<'g> {
    grammar: &'g Grammar,
    config: ParseConfig,
    ops: Vec<Op>,
    children: Vec<u32>,
    /// For each node: the depth of its shallowest empty derivation, or `NONE`.
    empty_depth: Vec<u32>,
    /// For alternations that can derive empty: the alternative to use.
    empty_choice: Vec<u32>,
    regexes: Vec<Option<RegexMatcher>>,
    /// The rule whose right-hand side contains each node (for error messages).
    owner: Vec<u32>,
    /// Nodes whose language is regular (no recursive rule below them).
    regular: Vec<bool>,
    /// DFAs of regular nodes, built on first use (`None` if too large).
    tokens: Vec<OnceLock<Option<RegexMatcher>>>,
    /// The bytes each node's non-empty derivations can start with.
    first: Vec<ByteSet>,
    root: u32,
}

/// An Earley item: `node` has matched `dot` (see the crate docs) from `origin`.
#[derive(Clone, Copy, Debug)]
struct Item {
    node: u32,
    dot: u32,
    origin: u32,
    /// How the item was first derived: where its last child starts, or (alternations)
    /// which alternative completed it.
    back: u32,
}

/// A set of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
}

/// The parser's working state for the set being built, reused from set to set.
#[derive(Default)]
struct Work {
    /// Position of the set being built.
    j: usize,
    /// Items of set `j`, in the order they arose.
    current: Vec<Item>,
    seen: FxHashSet<(u32, u32, u32)>,
    /// Items already scanned into sets `j + 1`, `j + 2`, ...
    pending: VecDeque<Vec<Item>>,
    /// Emptied vectors, for reuse.
    spare: Vec<Vec<Item>>,
    /// Terminals and tokens matched at `j`: `(node, start, len)` into `cache_ends`.
    cache_keys: Vec<(u32, u32, u32)>,
    cache_ends: Vec<usize>,
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

/// A successful parse: the chart, from which trees are read.
pub struct ParseResult<'p, 'g> {
    parser: &'p Parser<'g>,
    text: &'p [u8],
    items: Vec<Item>,
    /// `items[set_start[j]..set_start[j + 1]]` is Earley set `j`, in insertion order.
    set_start: Vec<u32>,
    /// Per set, indices into `items` sorted by `(node, origin, dot)`.
    index: Vec<u32>,
    /// Per set (`wait_start`), who waits there for which node, sorted by node.
    waiting: Vec<Waiting>,
    wait_start: Vec<u32>,
    /// Completions that took a Leo shortcut: `(set, origin, node)`, by set.
    leo: Vec<(u32, u32, u32)>,
    /// Items skipped by Leo shortcuts, rebuilt on demand for tree reading.
    leo_cache: std::cell::RefCell<rustc_hash::FxHashMap<(u32, u32, u32), Item>>,
}

impl<'g> Parser<'g> {
    /// Prepares a parser (compiles regex terminals into DFAs).
    pub fn new(grammar: &'g Grammar, config: ParseConfig) -> Result<Parser<'g>, String> {
        let n = grammar.expr_count();
        let mut parser = Parser {
            grammar,
            config,
            ops: Vec::with_capacity(n),
            children: Vec::new(),
            empty_depth: vec![NONE; n],
            empty_choice: vec![NONE; n],
            regexes: Vec::with_capacity(n),
            owner: vec![NONE; n],
            regular: vec![false; n],
            tokens: (0..n).map(|_| OnceLock::new()).collect(),
            first: vec![ByteSet::default(); n],
            root: grammar.root().index() as u32,
        };
        let index = |e: ExprId| e.index() as u32;
        for id in grammar.expr_ids() {
            let (op, regex) = match grammar.expr(id) {
                Expr::Literal(_) => (Op::Literal, None),
                Expr::Regex(r) => (
                    Op::Regex,
                    Some(
                        RegexMatcher::new(&r.hir)
                            .map_err(|e| format!("regex terminal r\"{}\": {e}", r.pattern))?,
                    ),
                ),
                Expr::Ref(s) => {
                    let body = index(grammar.rule(*s).body);
                    (Op::Ref { body }, None)
                }
                Expr::Seq(items) => {
                    let start = parser.children.len() as u32;
                    parser
                        .children
                        .extend(items.iter().map(|&item| index(item)));
                    (
                        Op::Seq {
                            start,
                            len: items.len() as u32,
                        },
                        None,
                    )
                }
                Expr::Alt(alts) => {
                    let start = parser.children.len() as u32;
                    parser.children.extend(alts.iter().map(|&alt| index(alt)));
                    (
                        Op::Alt {
                            start,
                            len: alts.len() as u32,
                        },
                        None,
                    )
                }
                Expr::Repeat(r) => (
                    Op::Repeat {
                        item: index(r.item),
                        min: r.min,
                        max: r.max,
                    },
                    None,
                ),
            };
            parser.ops.push(op);
            parser.regexes.push(regex);
        }
        parser.compute_empty_derivations();
        parser.compute_owners();
        parser.compute_regular();
        parser.compute_first();
        Ok(parser)
    }

    /// The grammar.
    pub fn grammar(&self) -> &'g Grammar {
        self.grammar
    }

    /// Shallowest empty derivation of every node, by fixpoint (children precede parents).
    fn compute_empty_derivations(&mut self) {
        loop {
            let mut changed = false;
            for id in self.grammar.expr_ids() {
                let x = id.index();
                let (depth, choice) = match (self.ops[x], self.grammar.expr(id)) {
                    (_, Expr::Literal(b)) => (if b.is_empty() { 0 } else { NONE }, NONE),
                    (_, Expr::Regex(r)) => (
                        if r.hir.properties().minimum_len() == Some(0) {
                            0
                        } else {
                            NONE
                        },
                        NONE,
                    ),
                    (Op::Ref { body }, _) => {
                        (self.empty_depth[body as usize].saturating_add(1), NONE)
                    }
                    (Op::Seq { start, len }, _) => {
                        let kids = &self.children[start as usize..(start + len) as usize];
                        let depth = kids
                            .iter()
                            .map(|&k| self.empty_depth[k as usize])
                            .max()
                            .unwrap_or(0);
                        (depth, NONE)
                    }
                    (Op::Alt { start, len }, _) => {
                        let kids = &self.children[start as usize..(start + len) as usize];
                        kids.iter()
                            .enumerate()
                            .map(|(i, &k)| (self.empty_depth[k as usize], i as u32))
                            .min()
                            .filter(|&(d, _)| d != NONE)
                            .unwrap_or((NONE, NONE))
                    }
                    (Op::Repeat { item, min, .. }, _) => (
                        if min == 0 {
                            0
                        } else {
                            self.empty_depth[item as usize]
                        },
                        NONE,
                    ),
                    _ => unreachable!("ops mirror expressions"),
                };
                if depth < self.empty_depth[x] {
                    self.empty_depth[x] = depth;
                    self.empty_choice[x] = choice;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// FIRST sets by fixpoint: which byte can begin a non-empty derivation of each node.
    /// Expecting a node whose FIRST set lacks the next byte predicts nothing (only its
    /// empty derivation, if any, is used), which keeps Earley sets small.
    fn compute_first(&mut self) {
        for id in self.grammar.expr_ids() {
            let x = id.index();
            match self.grammar.expr(id) {
                Expr::Literal(bytes) => {
                    if let Some(&b) = bytes.first() {
                        self.first[x].insert(b);
                    }
                }
                Expr::Regex(_) => {
                    let matcher = self.regexes[x].as_ref().expect("regex op has a matcher");
                    for b in 0..=255u8 {
                        if matcher.can_start_with(b) {
                            self.first[x].insert(b);
                        }
                    }
                }
                _ => {}
            }
        }
        loop {
            let mut changed = false;
            for x in 0..self.ops.len() {
                let mut set = self.first[x];
                match self.ops[x] {
                    Op::Literal | Op::Regex => continue,
                    Op::Ref { body } => set.union(&self.first[body as usize]),
                    Op::Alt { start, len } => {
                        for &c in &self.children[start as usize..(start + len) as usize] {
                            set.union(&self.first[c as usize]);
                        }
                    }
                    Op::Seq { start, len } => {
                        for &c in &self.children[start as usize..(start + len) as usize] {
                            set.union(&self.first[c as usize]);
                            if !self.nullable(c) {
                                break;
                            }
                        }
                    }
                    Op::Repeat { item, max, .. } => {
                        if max != Some(0) {
                            set.union(&self.first[item as usize]);
                        }
                    }
                }
                if set != self.first[x] {
                    self.first[x] = set;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn compute_owners(&mut self) {
        for symbol in self.grammar.symbols() {
            let mut stack = vec![self.grammar.rule(symbol).body.index() as u32];
            while let Some(x) = stack.pop() {
                self.owner[x as usize] = symbol.index() as u32;
                match self.ops[x as usize] {
                    Op::Seq { start, len } | Op::Alt { start, len } => {
                        stack.extend_from_slice(
                            &self.children[start as usize..(start + len) as usize],
                        );
                    }
                    Op::Repeat { item, .. } => stack.push(item),
                    _ => {}
                }
            }
        }
    }

    fn empty_literal(&self, node: u32) -> bool {
        matches!(self.grammar.expr(ExprId::from_index(node as usize)), Expr::Literal(b) if b.is_empty())
    }

    fn nullable(&self, node: u32) -> bool {
        self.empty_depth[node as usize] != NONE
    }

    fn is_complete(&self, item: &Item) -> bool {
        match self.ops[item.node as usize] {
            Op::Seq { len, .. } => item.dot == len,
            Op::Ref { .. } | Op::Alt { .. } => item.dot == 1,
            Op::Repeat { min, .. } => item.dot >= min,
            Op::Literal | Op::Regex => false,
        }
    }

    /// The dot after one more repetition.
    fn next_count(min: u32, max: Option<u32>, dot: u32) -> u32 {
        match max {
            Some(_) => dot + 1,
            None => (dot + 1).min(min),
        }
    }

    fn repeat_expects(max: Option<u32>, dot: u32) -> bool {
        max.is_none_or(|m| dot < m)
    }

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
    fn sole_penultimate_waiter(&self, chart: &Chart<'_>, o: u32, node: u32) -> Option<(Item, u32)> {
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
    fn for_each_expected(&self, item: &Item, mut f: impl FnMut(u32, u32)) {
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

    fn reject(&self, text: &[u8], at: usize, items: &[Item], set_start: &[u32]) -> ParseError {
        let (lo, hi) = set_range(set_start, items.len(), at);
        let mut expected: Vec<String> = Vec::new();
        let mut rules: Vec<String> = Vec::new();
        let mut seen = FxHashSet::default();
        for item in &items[lo..hi] {
            self.for_each_expected(item, |child, _| {
                // Terminals and tokens that could come next, found through the
                // nonterminals that were not predicted here.
                let mut stack = vec![(child, item.node)];
                while let Some((node, parent)) = stack.pop() {
                    if !seen.insert(node) {
                        continue;
                    }
                    // Named tokens read best by their rule (`<string>`); anonymous ones
                    // by what they start with.
                    let named_token =
                        matches!(self.ops[node as usize], Op::Ref { .. }) && self.is_token(node);
                    if self.empty_literal(node) {
                        continue; // derives nothing, so it cannot be what is missing
                    }
                    if matches!(self.ops[node as usize], Op::Literal | Op::Regex) || named_token {
                        let shown = self.grammar.display_expr(ExprId::from_index(node as usize));
                        if !expected.contains(&shown) {
                            expected.push(shown);
                        }
                        let owner = self.owner[parent as usize];
                        if owner != NONE {
                            let name = self.grammar.display_symbol(symbol(owner));
                            if !rules.contains(&name) {
                                rules.push(name);
                            }
                        }
                        continue;
                    }
                    match self.ops[node as usize] {
                        Op::Ref { body } => stack.push((body, node)),
                        Op::Alt { start, len } => {
                            for &c in self.children[start as usize..(start + len) as usize]
                                .iter()
                                .rev()
                            {
                                stack.push((c, node));
                            }
                        }
                        Op::Seq { start, len } => {
                            let kids = &self.children[start as usize..(start + len) as usize];
                            let upto = kids
                                .iter()
                                .position(|&k| !self.nullable(k))
                                .map_or(kids.len(), |p| p + 1);
                            for &c in kids[..upto].iter().rev() {
                                stack.push((c, node));
                            }
                        }
                        Op::Repeat { item, max, .. } if max != Some(0) => stack.push((item, node)),
                        _ => {}
                    }
                }
            });
        }
        let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        ParseError::Rejected(Box::new(Rejection {
            offset: at,
            line,
            column,
            found: text.get(at).copied(),
            expected,
            rules,
        }))
    }
}

fn symbol(index: u32) -> SymbolId {
    SymbolId::from_index(index as usize)
}

/// The range of set `j` in the item arrays (the last set may still be open).
fn set_range(set_start: &[u32], len: usize, j: usize) -> (usize, usize) {
    let lo = set_start[j] as usize;
    let hi = set_start.get(j + 1).map_or(len, |&h| h as usize);
    (lo, hi)
}

impl ParseResult<'_, '_> {
    /// Number of Earley items the parse used (a measure of work and memory).
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// The item `(node, origin, dot)` in set `j`, if present.
    fn find(&self, j: usize, node: u32, origin: u32, dot: u32) -> Option<Item> {
        let (lo, hi) = set_range(&self.set_start, self.items.len(), j);
        let slice = &self.index[lo..hi];
        let key = (node, origin, dot);
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
    fn leo_chain(&self, o: u32, node: u32, mut visit: impl FnMut(Item) -> bool) {
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
    fn chart(&self) -> Chart<'_> {
        Chart {
            items: &self.items,
            waiting: &self.waiting,
            wait_start: &self.wait_start,
        }
    }

    /// A complete item of set `j` that a Leo shortcut skipped, rebuilt from the chain.
    fn leo_skipped(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
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
    fn complete_repeat(&self, j: usize, node: u32, origin: u32) -> Option<Item> {
        let (lo, hi) = set_range(&self.set_start, self.items.len(), j);
        let slice = &self.index[lo..hi];
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
            if start == end {
                p.emit_empty(node, sink);
                continue;
            }
            if p.is_token(node) {
                p.build_regular(node, self.text, start, end, sink, &mut scratch);
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
    fn emit_empty<S: TreeSink>(&self, node: u32, sink: &mut S) {
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
