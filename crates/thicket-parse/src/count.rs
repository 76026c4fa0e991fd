//! Counting the derivation trees of a parsed input.
//!
//! Trees are counted over the same shapes the parser builds, with one rule that keeps
//! counts finite where the grammar allows endless padding: repetitions beyond a
//! quantifier's minimum must derive something (an extra empty repetition is not a new
//! tree). Grammars that still derive a span in infinitely many ways (unit or empty
//! cycles, such as `<a> ::= <a> | "x"`) are reported as [`TreeCount::Infinite`].
//!
//! Most inputs have one tree, and for them the chart says so at no cost: the recogniser
//! notes whether any item arose by two different derivations (`ParseResult::forks`);
//! without such a fork every item has one derivation, so the input has one tree, as
//! long as what the chart does not see has one too: the inside of a token (a regular
//! part scanned by its DFA) and empty subtrees (derived statically). The grammar is
//! checked for that once per parser (`Parser::chart_decides`): every token has at most
//! one tree for any text, and every node that derives the empty text derives it one way.
//! Such an input costs what its one tree costs, at any depth.
//!
//! Otherwise counting is exhaustive (dynamic programming over spans, iterative at any
//! depth) and meant for inputs of moderate size: it keeps a count per forest node it
//! visits, about 1 KB per input byte.

use crate::compile::{Op, Parser};
use crate::{ParseError, ParseResult};
use rustc_hash::{FxHashMap, FxHashSet};
use thicket_grammar::ExprId;
use thicket_tree::{DerivationTree, TreeBuilder, TreeSink};

/// How many derivation trees an input has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeCount {
    /// Exactly this many.
    Finite(u128),
    /// More than `u128::MAX`.
    Overflow,
    /// Infinitely many (the grammar has unit or empty cycles that this input uses).
    Infinite,
    /// Not known: counting needs the input parsed with every derivation (see
    /// [`Parser`](crate::Parser) on associative rules), and that parse needs more items
    /// than [`ParseConfig::max_items`](crate::ParseConfig::max_items) or more memory
    /// than there is.
    Unknown,
}

impl std::fmt::Display for TreeCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TreeCount::Finite(n) => write!(f, "{n}"),
            TreeCount::Overflow => f.write_str("more than 2^128"),
            TreeCount::Infinite => f.write_str("infinitely many"),
            TreeCount::Unknown => f.write_str("unknown (too complex to count)"),
        }
    }
}

/// A count in progress: finite (saturating into `Overflow`) or infinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum N {
    Finite(u128),
    Overflow,
    Infinite,
}

impl N {
    const ZERO: N = N::Finite(0);
    const ONE: N = N::Finite(1);

    fn is_zero(self) -> bool {
        self == N::ZERO
    }

    fn add(self, other: N) -> N {
        match (self, other) {
            (N::Infinite, _) | (_, N::Infinite) => N::Infinite,
            (N::Finite(a), N::Finite(b)) => a.checked_add(b).map_or(N::Overflow, N::Finite),
            _ => N::Overflow,
        }
    }

    fn mul(self, other: N) -> N {
        if self.is_zero() || other.is_zero() {
            return N::ZERO;
        }
        match (self, other) {
            (N::Infinite, _) | (_, N::Infinite) => N::Infinite,
            (N::Finite(a), N::Finite(b)) => a.checked_mul(b).map_or(N::Overflow, N::Finite),
            _ => N::Overflow,
        }
    }
}

/// A forest node: `node` deriving `text[i..j]`.
type Key = (u32, usize, usize);

struct Counter<'a, 'p, 'g> {
    result: &'a ParseResult<'p, 'g>,
    memo: FxHashMap<Key, N>,
    /// The forest nodes being counted (on the counter's stack): one needed again
    /// derives its own span through itself, infinitely often.
    active: FxHashSet<Key>,
    /// Ways for the rest of a sequence or repetition to finish: `(node, children done
    /// or repetitions so far, position, end)`.
    suffixes: FxHashMap<(u32, u32, usize, usize), N>,
    /// Where each nonterminal node can end when it starts at a position: `(node, start)`
    /// to ends, from the chart's complete items (Leo-skipped ones included).
    ends_index: crate::chart::EndsIndex,
    /// How many forest states (memoised counts and suffixes) counting may keep before
    /// it gives up (`exhausted`): a bound on the work, for callers that only want small
    /// forests followed.
    budget: usize,
    /// Whether counting gave up for the budget; every count since is meaningless.
    exhausted: bool,
}

impl<'p, 'g> ParseResult<'p, 'g> {
    fn counter(&self) -> Counter<'_, '_, '_> {
        Counter {
            result: self,
            memo: FxHashMap::default(),
            active: FxHashSet::default(),
            suffixes: FxHashMap::default(),
            ends_index: self.ends_index(),
            budget: usize::MAX,
            exhausted: false,
        }
    }

    /// Whether the input is known to have exactly one tree without counting: its chart
    /// has no forks and the grammar's tokens and empty derivations are unambiguous (see
    /// the module docs). `false` says nothing: the input may still have one tree.
    pub fn known_unambiguous(&self) -> bool {
        !self.forks && !self.parser.restricts && self.parser.chart_decides()
    }

    /// For a parse whose chart holds one bracketing of each chain of associative
    /// alternatives (`Parser::restrict_operands`): the input parsed again with every
    /// derivation, which counting needs; `None` when this chart has them all.
    fn with_every_derivation(&self) -> Option<Result<ParseResult<'p, 'g>, ParseError>> {
        self.parser
            .restricts
            .then(|| self.parser.exhaustive().parse_streaming(self.text))
    }

    /// Up to `limit` distinct derivation trees of the input, in a fixed order (first
    /// alternatives first, then shorter first children), together with how many there
    /// are in all. Only for inputs with finitely many trees; otherwise the count says why
    /// there is no list. An input [known to be
    /// unambiguous](ParseResult::known_unambiguous) costs its one tree.
    pub fn trees(&self, limit: usize) -> Result<(Vec<DerivationTree>, u128), TreeCount> {
        if let Some(every) = self.with_every_derivation() {
            let every = every.map_err(|_| TreeCount::Unknown)?;
            if !every.known_unambiguous() {
                return every.trees(limit);
            }
        }
        if self.known_unambiguous() || self.parser.restricts {
            let trees = if limit == 0 {
                Vec::new()
            } else {
                vec![self.tree()]
            };
            return Ok((trees, 1));
        }
        let mut counter = self.counter();
        let total = match counter.count(self.root, 0, self.text.len()) {
            N::Finite(n) => n,
            N::Overflow => return Err(TreeCount::Overflow),
            N::Infinite => return Err(TreeCount::Infinite),
        };
        let mut trees = Vec::new();
        for rank in 0..total.min(limit as u128) {
            let mut builder = TreeBuilder::new();
            counter.unrank(self.root, 0, self.text.len(), rank, &mut builder);
            trees.push(builder.finish());
        }
        Ok((trees, total))
    }

    /// The number of derivation trees of the input (see the module docs).
    pub fn count_trees(&self) -> TreeCount {
        if let Some(every) = self.with_every_derivation() {
            return every.map_or(TreeCount::Unknown, |every| every.count_trees());
        }
        if self.known_unambiguous() {
            return TreeCount::Finite(1);
        }
        self.count_trees_exhaustively()
    }

    /// The number of derivation trees by dynamic programming alone, without asking
    /// the chart whether the input is unambiguous (for tests: the two must agree).
    #[doc(hidden)]
    pub fn count_trees_exhaustively(&self) -> TreeCount {
        if let Some(every) = self.with_every_derivation() {
            return every.map_or(TreeCount::Unknown, |every| every.count_trees_exhaustively());
        }
        let mut counter = self.counter();
        match counter.count(self.root, 0, self.text.len()) {
            N::Finite(n) => TreeCount::Finite(n),
            N::Overflow => TreeCount::Overflow,
            N::Infinite => TreeCount::Infinite,
        }
    }
}

impl Counter<'_, '_, '_> {
    fn parser(&self) -> &Parser<'_> {
        self.result.parser
    }

    /// Every `to` in `from..=limit` such that `node` can derive `text[from..to]`,
    /// ascending: the candidates a split needs to look at (rather than every position).
    fn ends(&self, node: u32, from: usize, limit: usize) -> Vec<usize> {
        let p = self.parser();
        let mut out = Vec::new();
        match p.ops[node as usize] {
            Op::Literal | Op::Regex => p.ends(node, self.result.text, from, limit, &mut out),
            _ if p.is_token(node) => p.ends(node, self.result.text, from, limit, &mut out),
            _ => {
                if p.nullable(node) {
                    out.push(from);
                }
                let in_chart = p.chart_node(node);
                out.extend(
                    self.ends_index
                        .ends(in_chart, from as u32)
                        .map(|e| e as usize)
                        .filter(|&e| e > from && e <= limit),
                );
                out.sort_unstable();
                out.dedup();
            }
        }
        out
    }

    /// Whether `node` can derive `text[i..j]` at all (a cheap filter before counting).
    fn may_derive(&self, node: u32, i: usize, j: usize) -> bool {
        let p = self.parser();
        match p.ops[node as usize] {
            Op::Literal | Op::Regex => p.derives(node, self.result.text, i, j),
            _ if i == j => p.nullable(node),
            _ if p.is_token(node) => p.derives(node, self.result.text, i, j),
            // Only predicted nodes have items; those whose FIRST set excludes the byte
            // were never predicted.
            _ => self.result.complete_any(j, node, i as u32),
        }
    }

    /// The count of a forest node, if known without counting anything: none if the node
    /// cannot derive the span, memoised, or infinite if it is being counted (a cycle).
    fn known(&self, key: Key) -> Option<N> {
        let key = self.keyed(key);
        let (node, i, j) = key;
        if !self.may_derive(node, i, j) {
            return Some(N::ZERO);
        }
        if matches!(self.parser().ops[node as usize], Op::Literal | Op::Regex) {
            return Some(N::ONE); // not memoised: nothing to count
        }
        if let Some(&n) = self.memo.get(&key) {
            return Some(n);
        }
        self.active.contains(&key).then_some(N::Infinite)
    }

    /// The number of trees of `node` over `text[i..j]`. Iterative at any depth: a
    /// forest node on the stack is counted from the counts of its children; those not
    /// known yet are pushed above it, and it is counted again once they are (at most
    /// twice: the first attempt asks for every child it may need).
    fn count(&mut self, node: u32, i: usize, j: usize) -> N {
        if let Some(n) = self.known((node, i, j)) {
            return n;
        }
        let (node, i, j) = self.keyed((node, i, j));
        let mut stack = vec![(node, i, j)];
        let mut missing = Vec::new();
        while let Some(&key) = stack.last() {
            if self.exhausted || self.memo.len() + self.suffixes.len() > self.budget {
                self.exhausted = true;
                return N::Overflow;
            }
            if self.memo.contains_key(&key) {
                stack.pop();
                continue;
            }
            self.active.insert(key);
            missing.clear();
            match self.try_count(key, &mut missing) {
                Some(n) => {
                    self.memo.insert(key, n);
                    self.active.remove(&key);
                    stack.pop();
                }
                // In reverse, so that they are counted in the order they were needed.
                None => stack.extend(missing.drain(..).rev()),
            }
        }
        self.memo[&(node, i, j)]
    }

    /// The count of `key` from the counts of its children, or `None` with the children
    /// not known yet in `missing`.
    fn try_count(&mut self, key: Key, missing: &mut Vec<Key>) -> Option<N> {
        let (node, i, j) = key;
        let p = self.parser();
        match p.ops[node as usize] {
            Op::Literal | Op::Regex => Some(N::ONE),
            Op::Ref { body } | Op::Operand { body } => self.known_or_ask((body, i, j), missing),
            Op::Alt { start, len } => {
                let mut total = Some(N::ZERO);
                for a in start..start + len {
                    let child = self.parser().children[a as usize];
                    let n = self.known_or_ask((child, i, j), missing);
                    total = total.zip(n).map(|(total, n)| total.add(n));
                }
                total
            }
            Op::Seq { .. } => self
                .fill_sequence(node, 0, i, j, missing)
                .then(|| self.suffixes[&(node, 0, i, j)]),
            Op::Repeat { .. } => self
                .fill_repeat(node, 0, i, j, missing)
                .then(|| self.suffixes[&(node, 0, i, j)]),
        }
    }

    /// `known`, or `None` with `key` added to `missing`.
    fn known_or_ask(&self, key: Key, missing: &mut Vec<Key>) -> Option<N> {
        let n = self.known(key);
        if n.is_none() {
            missing.push(self.keyed(key));
        }
        n
    }

    /// The forest node a count is kept under: a reference's is its rule body's (the
    /// same trees, one node higher), so references cost no entry.
    fn keyed(&self, (node, i, j): Key) -> Key {
        (self.parser().chart_node(node), i, j)
    }
}

impl ParseResult<'_, '_> {
    /// Whether some complete item of `node` (or of the node standing for it in the
    /// chart, see `Parser::chart_node`) spans `origin..j`.
    pub(crate) fn complete_any(&self, j: usize, node: u32, origin: u32) -> bool {
        let node = self.parser.chart_node(node);
        match self.parser.ops[node as usize] {
            Op::Seq { len, .. } => self.find(j, node, origin, len).is_some(),
            Op::Ref { .. } | Op::Alt { .. } => self.find(j, node, origin, 1).is_some(),
            _ => self.complete_repeat(j, node, origin).is_some(),
        }
    }
}

impl Counter<'_, '_, '_> {
    /// Ways for children `t..` of the sequence `node` to derive `text[m..j]`.
    fn sequence_suffix(&mut self, node: u32, t: u32, m: usize, j: usize) -> N {
        let Op::Seq { len, .. } = self.parser().ops[node as usize] else {
            unreachable!("a sequence")
        };
        if t >= len {
            return if m == j { N::ONE } else { N::ZERO };
        }
        self.resolve(|counter, missing| counter.fill_sequence(node, t, m, j, missing));
        self.suffixes
            .get(&(node, t, m, j))
            .copied()
            .unwrap_or(N::ZERO)
    }

    /// Ways for further repetitions of `node`, `done` of them so far, to derive
    /// `text[m..j]` (those past the minimum non-empty, as in counting).
    fn repeat_suffix(&mut self, node: u32, done: u32, m: usize, j: usize) -> N {
        let Op::Repeat { min, max, .. } = self.parser().ops[node as usize] else {
            unreachable!("a repetition")
        };
        // Past the minimum of an unbounded repetition, the count no longer matters.
        let done = if max.is_none() { done.min(min) } else { done };
        self.resolve(|counter, missing| counter.fill_repeat(node, done, m, j, missing));
        self.suffixes
            .get(&(node, done, m, j))
            .copied()
            .unwrap_or(N::ZERO)
    }

    /// Runs `fill` until it completes, counting what it misses in between (the
    /// states a count reached are already filled: this is for the others).
    fn resolve(&mut self, mut fill: impl FnMut(&mut Self, &mut Vec<Key>) -> bool) {
        let mut missing = Vec::new();
        // Each round counts what the last one missed; one with nothing missing is done.
        while !fill(self, &mut missing) && !missing.is_empty() && !self.exhausted {
            for (node, i, j) in std::mem::take(&mut missing) {
                self.count(node, i, j);
            }
        }
    }

    /// Records `sequence_suffix` of every state `(t', m')` that children `t..` of `node`
    /// reach from position `m` on the way to `j`, as far as the children's counts are
    /// known; says whether `(t, m)`'s is, and lists the counts it needs in `missing`.
    /// Iterative and sparse: only the positions where a child can end are visited (the
    /// chart says where), so an unambiguous input costs about one state per child, not
    /// one per byte of the span (counting a deeply nested input took cubic time).
    fn fill_sequence(
        &mut self,
        node: u32,
        t0: u32,
        m0: usize,
        j: usize,
        missing: &mut Vec<Key>,
    ) -> bool {
        let Op::Seq { start, len } = self.parser().ops[node as usize] else {
            unreachable!("a sequence")
        };
        if t0 >= len || self.suffixes.contains_key(&(node, t0, m0, j)) {
            return true;
        }
        // Forward: the positions each child can start at, with its ends.
        let mut layers: Vec<Vec<(usize, Vec<usize>)>> = Vec::new();
        let mut at = vec![m0];
        for t in t0..len {
            let kid = self.parser().children[(start + t) as usize];
            let mut layer = Vec::with_capacity(at.len());
            let mut next = Vec::new();
            for &m in &at {
                if self.suffixes.contains_key(&(node, t, m, j)) {
                    continue;
                }
                let ends = self.ends(kid, m, j);
                next.extend_from_slice(&ends);
                layer.push((m, ends));
            }
            next.sort_unstable();
            next.dedup();
            layers.push(layer);
            at = next;
        }
        // Backward: the rest first, then the child, for the states whose rest can finish.
        // A rest not recorded is one this pass could not finish: unknown.
        for (offset, layer) in layers.into_iter().enumerate().rev() {
            let t = t0 + offset as u32;
            let kid = self.parser().children[(start + t) as usize];
            for (m, ends) in layer {
                let mut total = Some(N::ZERO);
                for to in ends {
                    let rest = if t + 1 == len {
                        Some(if to == j { N::ONE } else { N::ZERO })
                    } else {
                        self.suffixes.get(&(node, t + 1, to, j)).copied()
                    };
                    if rest.is_some_and(N::is_zero) {
                        continue;
                    }
                    let here = self.known_or_ask((kid, m, to), missing);
                    total = match (total, here, rest) {
                        (Some(total), Some(c), Some(rest)) => Some(total.add(c.mul(rest))),
                        _ => None,
                    };
                }
                if let Some(total) = total {
                    self.suffixes.insert((node, t, m, j), total);
                }
            }
        }
        self.suffixes.contains_key(&(node, t0, m0, j))
    }

    /// Records `repeat_suffix` of every state reachable from `(done, m)`, as far as the
    /// item's counts are known (as `fill_sequence`). States are processed in decreasing
    /// position (a repetition past the minimum is non-empty, and before it the count of
    /// repetitions grows), so each state's successors are known before it.
    fn fill_repeat(
        &mut self,
        node: u32,
        done0: u32,
        m0: usize,
        j: usize,
        missing: &mut Vec<Key>,
    ) -> bool {
        let Op::Repeat { item, min, max } = self.parser().ops[node as usize] else {
            unreachable!("a repetition")
        };
        let cap = |done: u32| if max.is_none() { done.min(min) } else { done };
        let done0 = cap(done0);
        if self.suffixes.contains_key(&(node, done0, m0, j)) {
            return true;
        }
        let mut states: FxHashMap<(u32, usize), Vec<usize>> = FxHashMap::default();
        let mut frontier = vec![(done0, m0)];
        while let Some((done, m)) = frontier.pop() {
            if states.contains_key(&(done, m)) || self.suffixes.contains_key(&(node, done, m, j)) {
                continue;
            }
            let mut ends = Vec::new();
            if max.is_none_or(|max| done < max) {
                let first_to = if done >= min { m + 1 } else { m };
                ends = self.ends(item, m, j);
                ends.retain(|&to| to >= first_to);
                frontier.extend(ends.iter().map(|&to| (cap(done + 1), to)));
            }
            states.insert((done, m), ends);
        }
        let mut order: Vec<(usize, u32)> = states.keys().map(|&(d, m)| (m, d)).collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        for (m, done) in order {
            let ends = states.remove(&(done, m)).unwrap_or_default();
            let mut total = Some(if m == j && done >= min {
                N::ONE
            } else {
                N::ZERO
            });
            for to in ends {
                let rest = self.suffixes.get(&(node, cap(done + 1), to, j)).copied();
                if rest.is_some_and(N::is_zero) {
                    continue;
                }
                let here = self.known_or_ask((item, m, to), missing);
                total = match (total, here, rest) {
                    (Some(total), Some(c), Some(rest)) => Some(total.add(c.mul(rest))),
                    _ => None,
                };
            }
            if let Some(total) = total {
                self.suffixes.insert((node, done, m, j), total);
            }
        }
        self.suffixes.contains_key(&(node, done0, m0, j))
    }

    /// Emits tree number `rank` (0-based, in enumeration order) of `node` over `i..j`.
    /// Iterative: each node's children and their ranks are chosen, then emitted from a
    /// stack.
    fn unrank(&mut self, node: u32, i: usize, j: usize, rank: u128, sink: &mut TreeBuilder) {
        // `Some((node, i, j, rank))` to emit, `None` to close a node.
        let mut stack = vec![Some((node, i, j, rank))];
        let mut kids = Vec::new();
        while let Some(task) = stack.pop() {
            let Some((node, i, j, rank)) = task else {
                sink.close();
                continue;
            };
            let expr = ExprId::from_index(node as usize);
            if matches!(self.parser().ops[node as usize], Op::Literal | Op::Regex) {
                sink.terminal(expr, &self.result.text[i..j]);
                continue;
            }
            sink.open(expr);
            kids.clear();
            self.choose(node, i, j, rank, &mut kids);
            stack.push(None);
            stack.extend(kids.drain(..).rev().map(Some));
        }
    }

    /// The children `(child, start, end, rank)` of tree number `rank` of a nonterminal
    /// `node` over `i..j`, in order.
    fn choose(
        &mut self,
        node: u32,
        i: usize,
        j: usize,
        mut rank: u128,
        out: &mut Vec<(u32, usize, usize, u128)>,
    ) {
        match self.parser().ops[node as usize] {
            Op::Ref { body } | Op::Operand { body } => out.push((body, i, j, rank)),
            Op::Alt { start, len } => {
                for a in start..start + len {
                    let child = self.parser().children[a as usize];
                    let c = finite(self.count(child, i, j));
                    if rank < c {
                        out.push((child, i, j, rank));
                        break;
                    }
                    rank -= c;
                }
            }
            Op::Seq { start, len } => {
                let mut m = i;
                for t in 0..len {
                    let kid = self.parser().children[(start + t) as usize];
                    for to in self.ends(kid, m, j) {
                        // The rest first: a child with infinitely many trees may sit
                        // where the rest cannot follow (and so counts for nothing).
                        let rest = self.sequence_suffix(node, t + 1, to, j);
                        if rest.is_zero() {
                            continue;
                        }
                        let (c, rest) = (finite(self.count(kid, m, to)), finite(rest));
                        if rank < c * rest {
                            out.push((kid, m, to, rank / rest));
                            rank %= rest;
                            m = to;
                            break;
                        }
                        rank -= c * rest;
                    }
                }
            }
            Op::Repeat { item, min, max } => {
                let (mut done, mut m) = (0u32, i);
                loop {
                    if m == j && done >= min {
                        if rank == 0 {
                            break;
                        }
                        rank -= 1;
                    }
                    let first_to = if done >= min { m + 1 } else { m };
                    let mut stepped = false;
                    if max.is_none_or(|max| done < max) {
                        for to in self
                            .ends(item, m, j)
                            .into_iter()
                            .filter(|&to| to >= first_to)
                        {
                            let rest = self.repeat_suffix(node, done + 1, to, j);
                            if rest.is_zero() {
                                continue;
                            }
                            let (c, rest) = (finite(self.count(item, m, to)), finite(rest));
                            if rank < c * rest {
                                out.push((item, m, to, rank / rest));
                                rank %= rest;
                                (done, m) = (done + 1, to);
                                stepped = true;
                                break;
                            }
                            rank -= c * rest;
                        }
                    }
                    if !stepped {
                        break; // rank was within the total, so this is the end
                    }
                }
            }
            Op::Literal | Op::Regex => unreachable!("terminals have no children"),
        }
    }
}

/// A count known to be finite (enumeration only runs when the total is).
fn finite(n: N) -> u128 {
    match n {
        N::Finite(n) => n,
        _ => unreachable!("enumeration runs only on finite counts"),
    }
}

impl<'p, 'g> ParseResult<'p, 'g> {
    /// The chains of "symbolic" nodes (as `is_symbolic` says) of length 1..=`max_k` that
    /// occur in *any* derivation tree of the input: for k-path coverage of ambiguous
    /// inputs ("present in any parse", as CODEINE counts). Each chain lists expression
    /// ids outermost first; a chain runs from a symbolic node to the next symbolic node
    /// below it. An input [known to be unambiguous](ParseResult::known_unambiguous)
    /// costs its one tree; any other is followed exhaustively over the forest (at any
    /// depth, but about 1-5 KB of memory per input byte: for inputs of moderate size).
    /// Derivations that revisit a span through a unit or empty cycle are followed once.
    pub fn paths_in_any_parse(
        &self,
        is_symbolic: impl Fn(u32) -> bool,
        max_k: usize,
    ) -> FxHashSet<Box<[u32]>> {
        match self.with_every_derivation() {
            Some(Ok(every)) => return every.paths_in_any_parse(is_symbolic, max_k),
            // Too complex to follow every derivation: the first tree's paths at least.
            Some(Err(_)) => return one_tree_paths(&self.tree(), is_symbolic, max_k),
            None => {}
        }
        self.forest_paths(&is_symbolic, max_k, usize::MAX)
            .unwrap_or_else(|| one_tree_paths(&self.tree(), &is_symbolic, max_k))
    }

    /// [`ParseResult::paths_in_any_parse`] if the input's forest is small: `None` when
    /// counting its derivations needs more than `max_states` forest states (a count per
    /// forest node and per partial split of a sequence or repetition), so that a caller
    /// pays for following the forest only where it is cheap. Whether an input is
    /// followed depends on the input (and the grammar) alone: the same text always
    /// gets the same answer. An input known to be unambiguous costs its one tree.
    pub fn paths_in_any_parse_within(
        &self,
        is_symbolic: impl Fn(u32) -> bool,
        max_k: usize,
        max_states: usize,
    ) -> Option<FxHashSet<Box<[u32]>>> {
        match self.with_every_derivation() {
            Some(Ok(every)) => every.paths_in_any_parse_within(is_symbolic, max_k, max_states),
            Some(Err(_)) => None,
            None => self.forest_paths(&is_symbolic, max_k, max_states),
        }
    }

    /// The paths of every derivation, read from this chart; `None` if counting needs
    /// more than `max_states` forest states.
    fn forest_paths(
        &self,
        is_symbolic: &impl Fn(u32) -> bool,
        max_k: usize,
        max_states: usize,
    ) -> Option<FxHashSet<Box<[u32]>>> {
        if self.known_unambiguous() {
            return Some(one_tree_paths(&self.tree(), is_symbolic, max_k));
        }
        let mut collector = PathCollector {
            counter: Counter {
                budget: max_states,
                ..self.counter()
            },
            is_symbolic,
            max_k,
            down: FxHashMap::default(),
            active: FxHashSet::default(),
        };
        let root = self.root;
        let n = self.text.len();
        let total = collector.counter.count(root, 0, n);
        if collector.counter.exhausted {
            return None;
        }
        // Counted within the budget: following the derivations visits the forest
        // nodes just counted, so it is not bounded again.
        collector.counter.budget = usize::MAX;
        if total.is_zero() {
            return Some(FxHashSet::default());
        }
        // Every forest node in some derivation, from the root down; the paths starting
        // at each symbolic one are its `down` set.
        let mut all = FxHashSet::default();
        let mut seen = FxHashSet::default();
        let mut stack = vec![(root, 0, n)];
        while let Some((node, i, j)) = stack.pop() {
            if !seen.insert((node, i, j)) {
                continue;
            }
            if is_symbolic(node) {
                all.extend(collector.down(node, i, j).iter().cloned());
            }
            stack.extend(collector.children(node, i, j));
        }
        Some(all)
    }
}

/// Chains of symbolic nodes, shared between the forest nodes that have them.
type Chains = std::rc::Rc<Vec<Box<[u32]>>>;

struct PathCollector<'a, 'p, 'g, F: Fn(u32) -> bool> {
    counter: Counter<'a, 'p, 'g>,
    is_symbolic: &'a F,
    max_k: usize,
    /// Chains starting at the first symbolic node at or below `(node, i, j)`.
    down: FxHashMap<Key, Chains>,
    active: FxHashSet<Key>,
}

impl<F: Fn(u32) -> bool> PathCollector<'_, '_, '_, F> {
    /// The children `(child, start, end)` of `(node, i, j)` in some derivation.
    fn children(&mut self, node: u32, i: usize, j: usize) -> Vec<(u32, usize, usize)> {
        let parser = self.counter.parser();
        let mut out = Vec::new();
        match parser.ops[node as usize] {
            Op::Literal | Op::Regex => {}
            Op::Ref { body } | Op::Operand { body } => out.push((body, i, j)),
            Op::Alt { start, len } => {
                let kids: Vec<u32> =
                    parser.children[start as usize..(start + len) as usize].to_vec();
                for c in kids {
                    if !self.counter.count(c, i, j).is_zero() {
                        out.push((c, i, j));
                    }
                }
            }
            Op::Seq { start, len } => {
                let kids: Vec<u32> =
                    parser.children[start as usize..(start + len) as usize].to_vec();
                // reach: where the children before `t` can end (sparse, sorted).
                let mut reach = vec![i];
                for (t, &kid) in kids.iter().enumerate() {
                    let mut next = Vec::new();
                    for &from in &reach {
                        for to in self.counter.ends(kid, from, j) {
                            if self
                                .counter
                                .sequence_suffix(node, t as u32 + 1, to, j)
                                .is_zero()
                                || self.counter.count(kid, from, to).is_zero()
                            {
                                continue;
                            }
                            out.push((kid, from, to));
                            next.push(to);
                        }
                    }
                    next.sort_unstable();
                    next.dedup();
                    reach = next;
                }
            }
            Op::Repeat { item, min, max } => {
                // States (repetitions so far, position) reachable from the start that
                // can still finish at j.
                let cap = |done: u32| if max.is_none() { done.min(min) } else { done };
                let mut frontier = vec![(0u32, i)];
                let mut visited = FxHashSet::default();
                while let Some((done, from)) = frontier.pop() {
                    if !visited.insert((done, from)) || max.is_some_and(|m| done >= m) {
                        continue;
                    }
                    let first_to = if done >= min { from + 1 } else { from };
                    for to in self
                        .counter
                        .ends(item, from, j)
                        .into_iter()
                        .filter(|&to| to >= first_to)
                    {
                        if self.counter.repeat_suffix(node, done + 1, to, j).is_zero()
                            || self.counter.count(item, from, to).is_zero()
                        {
                            continue;
                        }
                        out.push((item, from, to));
                        frontier.push((cap(done + 1), to));
                    }
                }
                out.sort_unstable();
                out.dedup();
            }
        }
        out
    }

    /// Chains (length <= max_k) starting at the first symbolic node at or below
    /// `(node, i, j)`, over all its derivations. Iterative at any depth, as counting: a
    /// forest node's chains are made once its children's are known; a child being
    /// worked on (a cycle back to its span) adds nothing new.
    fn down(&mut self, node: u32, i: usize, j: usize) -> Chains {
        let mut stack = vec![(node, i, j)];
        while let Some(&key) = stack.last() {
            if self.down.contains_key(&key) {
                stack.pop();
                continue;
            }
            self.active.insert(key);
            let children = self.children(key.0, key.1, key.2);
            let missing: Vec<Key> = children
                .iter()
                .filter(|c| !self.down.contains_key(c) && !self.active.contains(c))
                .copied()
                .collect();
            if !missing.is_empty() {
                stack.extend(missing.into_iter().rev());
                continue;
            }
            let below: Vec<&Chains> = children.iter().filter_map(|c| self.down.get(c)).collect();
            let result = if !(self.is_symbolic)(key.0) && below.len() == 1 {
                below[0].clone() // shared, not copied, down a chain of single children
            } else {
                let below: FxHashSet<&Box<[u32]>> =
                    below.into_iter().flat_map(|c| c.iter()).collect();
                let result: Vec<Box<[u32]>> = if (self.is_symbolic)(key.0) {
                    std::iter::once(Box::from([key.0]))
                        .chain(below.into_iter().filter(|q| q.len() < self.max_k).map(|q| {
                            let mut chain = Vec::with_capacity(q.len() + 1);
                            chain.push(key.0);
                            chain.extend_from_slice(q);
                            chain.into_boxed_slice()
                        }))
                        .collect()
                } else {
                    below.into_iter().cloned().collect()
                };
                std::rc::Rc::new(result)
            };
            self.active.remove(&key);
            self.down.insert(key, result);
            stack.pop();
        }
        self.down[&(node, i, j)].clone()
    }
}

/// The chains of symbolic nodes of length 1..=`max_k` in one tree (as
/// `paths_in_any_parse` lists them for all trees): every run of consecutive symbolic
/// ancestors, found in one preorder pass.
fn one_tree_paths(
    tree: &DerivationTree,
    is_symbolic: impl Fn(u32) -> bool,
    max_k: usize,
) -> FxHashSet<Box<[u32]>> {
    let mut all = FxHashSet::default();
    // The symbolic ancestors of the current node, with where their subtrees end.
    let mut open: Vec<(usize, u32)> = Vec::new();
    for index in 0..tree.len() {
        let id = thicket_tree::NodeId::from_index(index);
        while open.last().is_some_and(|&(end, _)| end <= index) {
            open.pop();
        }
        let x = tree.expr(id).index() as u32;
        if is_symbolic(x) {
            open.push((tree.subtree_end(id), x));
            for from in open.len().saturating_sub(max_k)..open.len() {
                all.insert(open[from..].iter().map(|&(_, x)| x).collect());
            }
        }
    }
    all
}

/// Budget of DFA state pairs for telling the alternatives of one grammar apart.
const PAIR_BUDGET: usize = 4_000_000;

/// Most DFA states looked at for one node's extensions.
const STATE_LIMIT: usize = 1 << 14;

impl Parser<'_> {
    /// Whether a chart without forks means exactly one tree: every node that derives the
    /// empty text derives it in one way (empty subtrees are chosen statically, unseen by
    /// the chart), and every token (a regular part scanned by its DFA, its inside unseen
    /// by the chart) has at most one tree for any text. Conservative (a `false` only costs
    /// counting); computed once per parser.
    pub(crate) fn chart_decides(&self) -> bool {
        *self.chart_decides.get_or_init(|| {
            self.empty_unique() && (!self.scans_tokens || self.tokens_unambiguous())
        })
    }

    fn kids(&self, node: u32) -> &[u32] {
        match self.ops[node as usize] {
            Op::Seq { start, len } | Op::Alt { start, len } => {
                &self.children[start as usize..(start + len) as usize]
            }
            Op::Ref { ref body } | Op::Operand { ref body } | Op::Repeat { item: ref body, .. } => {
                std::slice::from_ref(body)
            }
            Op::Literal | Op::Regex => &[],
        }
    }

    /// Whether every nullable node has one empty tree (the counter's convention:
    /// repetitions past the minimum are not empty). A greatest fixpoint, children
    /// before parents in the arena, so only references need further rounds.
    fn empty_unique(&self) -> bool {
        let n = self.ops.len();
        let mut unique = vec![true; n];
        loop {
            let mut changed = false;
            for x in 0..n as u32 {
                if !unique[x as usize] || !self.nullable(x) {
                    continue;
                }
                let ok = match self.ops[x as usize] {
                    Op::Literal | Op::Regex => true,
                    Op::Ref { body } | Op::Operand { body } => unique[body as usize],
                    Op::Seq { .. } => self.kids(x).iter().all(|&c| unique[c as usize]),
                    Op::Alt { .. } => {
                        let mut empty = self.kids(x).iter().filter(|&&c| self.nullable(c));
                        empty.next().is_some_and(|&c| unique[c as usize]) && empty.next().is_none()
                    }
                    Op::Repeat { item, min, .. } => min == 0 || unique[item as usize],
                };
                if !ok {
                    unique[x as usize] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        (0..n).all(|x| unique[x] || !self.nullable(x as u32))
    }

    /// Whether every token (a regular node expected by a part that is not one) has at
    /// most one tree for any text.
    fn tokens_unambiguous(&self) -> bool {
        let mut memo: FxHashMap<u32, bool> = FxHashMap::default();
        let mut budget = PAIR_BUDGET;
        // Every regular child of a part that is not, and every rule's body (a reference
        // may be the root of `Parser::parse_as`).
        let tops = (0..self.ops.len() as u32)
            .filter(|&x| {
                !self.regular[x as usize] || matches!(self.ops[x as usize], Op::Ref { .. })
            })
            .flat_map(|x| self.kids(x).to_vec());
        for token in tops {
            if !self.regular[token as usize]
                || matches!(self.ops[token as usize], Op::Literal | Op::Regex)
            {
                continue;
            }
            if !self.regular_unambiguous(token, &mut memo, &mut budget) {
                return false;
            }
        }
        true
    }

    /// Whether the regular node `top` has at most one tree for any text (the counter's
    /// convention for repetitions). Sufficient conditions, by the nodes' DFAs:
    /// alternatives match disjoint texts; in a sequence, no child's match goes on (see
    /// `RegexMatcher::extensions`) with a byte that the rest of the sequence can start
    /// with, so every split is forced; the same between repetitions, whose item derives
    /// no empty text where empty repetitions could be counted. Iterative (regular parts
    /// can nest deeply), memoised in `memo`; `budget` bounds the DFA pairs looked at.
    fn regular_unambiguous(
        &self,
        top: u32,
        memo: &mut FxHashMap<u32, bool>,
        budget: &mut usize,
    ) -> bool {
        let mut stack = vec![(top, false)];
        while let Some((x, kids_done)) = stack.pop() {
            if memo.contains_key(&x) {
                continue;
            }
            if !kids_done {
                stack.push((x, true));
                stack.extend(
                    self.kids(x)
                        .iter()
                        .filter(|c| !memo.contains_key(c))
                        .map(|&c| (c, false)),
                );
                continue;
            }
            let ok = self.kids(x).iter().all(|c| memo[c]) && self.splits_forced(x, budget);
            memo.insert(x, ok);
        }
        memo[&top]
    }

    /// For a regular node whose children are unambiguous: whether it is too (see
    /// `regular_unambiguous`).
    fn splits_forced(&self, x: u32, budget: &mut usize) -> bool {
        let extensions = |c: u32| self.language(c).and_then(|m| m.extensions(STATE_LIMIT));
        let overlaps = |set: &crate::compile::ByteSet, other: &crate::compile::ByteSet| {
            (0..=255u8).any(|b| set.contains(b) && other.contains(b))
        };
        match self.ops[x as usize] {
            Op::Literal | Op::Regex | Op::Ref { .. } | Op::Operand { .. } => true,
            Op::Alt { .. } => {
                let kids = self.kids(x);
                for (k, &a) in kids.iter().enumerate() {
                    for &b in &kids[k + 1..] {
                        if self.nullable(a) && self.nullable(b) {
                            return false;
                        }
                        if !overlaps(&self.first[a as usize], &self.first[b as usize]) {
                            continue; // only the empty text could be shared: not both
                        }
                        if let (Some(&(a_min, a_max)), Some(&(b_min, b_max))) =
                            (self.lengths.get(a as usize), self.lengths.get(b as usize))
                            && (a_max < b_min || b_max < a_min)
                        {
                            continue;
                        }
                        let (Some(ma), Some(mb)) = (self.language(a), self.language(b)) else {
                            return false;
                        };
                        if ma.disjoint(mb, budget) != Some(true) {
                            return false;
                        }
                    }
                }
                true
            }
            Op::Seq { .. } => {
                // Bytes the children from `t` on can start a non-empty text with.
                let kids = self.kids(x);
                let mut rest = crate::compile::ByteSet::default();
                for (t, &c) in kids.iter().enumerate().rev() {
                    if t + 1 < kids.len() {
                        let Some(ext) = extensions(c) else {
                            return false;
                        };
                        // A match of the child that goes on with a byte the rest can
                        // start with: the DFAs tell whether the rest can then match too.
                        if overlaps(&ext, &rest)
                            && !self.split_unique(c, &kids[t + 1..], false, budget)
                        {
                            return false;
                        }
                    }
                    if !self.nullable(c) {
                        rest = crate::compile::ByteSet::default();
                    }
                    rest.union(&self.first[c as usize]);
                }
                true
            }
            Op::Repeat { item, min, max } => {
                if min > 0 && self.nullable(item) {
                    return false;
                }
                if max.is_some_and(|max| max <= 1) {
                    return true;
                }
                extensions(item).is_some_and(|ext| {
                    !overlaps(&ext, &self.first[item as usize])
                        || self.split_unique(item, &[item], true, budget)
                })
            }
        }
    }

    /// Whether a match of `first` followed by one of `rest` in a row (`repeated`: by
    /// any number of matches of `rest[0]`) splits in one way only, by the DFAs
    /// (`RegexMatcher::splits_uniquely_before`).
    fn split_unique(&self, first: u32, rest: &[u32], repeated: bool, budget: &mut usize) -> bool {
        let (Some(head), Some(tail)) = (self.language(first), self.language_of(rest, repeated))
        else {
            return false;
        };
        head.splits_uniquely_before(&tail, budget) == Some(true)
    }
}
