//! The token constraint solver of grammar-based whitebox fuzzing (Godefroid, Kiezun,
//! Levin, PLDI'08): given the grammar over tokens ([`thicket_grammar::Tokens`]) and
//! token sets `C0..C(n-1)`, a shortest token sequence in the grammar's language whose
//! token `i` lies in `Ci` for every `i < n` (the tokens after `n` are free), or UNSAT.
//!
//! Rather than the paper's unroll-and-prune (which loops on left recursion), this is
//! Earley's recogniser run over the sets instead of a string: at position `i` it scans
//! every token kind of `Ci` that an item expects. That is the intersection of the
//! grammar with the automaton `C0 C1 .. C(n-1) T*`, so it terminates on every grammar
//! (left recursion, empty rules, cycles) in time polynomial in `n`. A set may also
//! allow the end of input ([`TokenSet::eof`]): a sequence of length `m < n` is a
//! solution if its last set has a complete parse and every `Cj`, `j >= m`, allows the
//! end. Past position `n` the recogniser does not scan: each item of set `n` is
//! finished with the shortest strings of the rest of its rule, and the completions
//! that this makes are ordered by Dijkstra's algorithm on the number of extra tokens,
//! so the witness is a shortest one. Results are cached by the sets.

use std::collections::HashMap;
use std::time::{Duration, Instant};
use thicket_grammar::{Grammar, TokSym, TokenGrammar, Tokens};

/// A set of token kinds, and whether the input may end at this position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenSet {
    bits: Vec<u64>,
    /// The input may end before this position (end of input is allowed here).
    pub eof: bool,
}

impl TokenSet {
    /// Every kind of `kinds`, and the end of input.
    pub fn all(kinds: usize) -> TokenSet {
        let mut bits = vec![u64::MAX; kinds.div_ceil(64)];
        if !kinds.is_multiple_of(64) {
            *bits.last_mut().expect("nonempty") = (1u64 << (kinds % 64)) - 1;
        }
        TokenSet { bits, eof: true }
    }

    /// No kind, no end.
    pub fn none(kinds: usize) -> TokenSet {
        TokenSet {
            bits: vec![0; kinds.div_ceil(64)],
            eof: false,
        }
    }

    /// Whether kind `k` is in the set.
    pub fn contains(&self, k: u32) -> bool {
        self.bits
            .get(k as usize / 64)
            .is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    /// Adds kind `k`.
    pub fn insert(&mut self, k: u32) {
        self.bits[k as usize / 64] |= 1 << (k % 64);
    }

    /// Removes kind `k`.
    pub fn remove(&mut self, k: u32) {
        self.bits[k as usize / 64] &= !(1 << (k % 64));
    }

    /// Keeps only what `other` holds too.
    pub fn intersect(&mut self, other: &TokenSet) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a &= b;
        }
        self.eof &= other.eof;
    }

    /// Whether the set holds no kind and no end.
    pub fn is_empty(&self) -> bool {
        !self.eof && self.bits.iter().all(|&w| w == 0)
    }

    /// The kinds in the set, in order.
    pub fn kinds(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| (i * 64 + b) as u32)
        })
    }

    /// Reads one set per text of `texts`, in order (see [`TokenSet::parse`]); the first
    /// error.
    pub fn parse_all(tokens: &Tokens, texts: &[String]) -> Result<Vec<TokenSet>, String> {
        let sets = texts.iter().enumerate();
        sets.map(|(i, text)| TokenSet::parse(tokens, text, i))
            .collect()
    }

    /// Reads the set of `tokens` written as `text` (the `position`-th, from 0, for
    /// messages): kinds separated by `,` (a literal's text, or a token rule with or
    /// without angle brackets; a lone `,` is the comma), `*` for any token, `$` for
    /// the end of input, a leading `!` for the complement.
    pub fn parse(tokens: &Tokens, text: &str, position: usize) -> Result<TokenSet, String> {
        let n = tokens.kinds().len();
        let (negate, body) = match text.strip_prefix('!') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, text),
        };
        let mut set = TokenSet::none(n);
        // A lone `,` is a kind, not a separator.
        let parts: Vec<&str> = if body == "," {
            vec![","]
        } else {
            body.split(',').collect()
        };
        for part in parts {
            match part {
                "*" => {
                    set = TokenSet::all(n);
                }
                "$" => set.eof = true,
                name => {
                    let k = tokens.kind_by_name(name).ok_or_else(|| {
                        format!(
                            "set {} (`{text}`): the spec has no token `{name}` (--list shows them)",
                            position + 1
                        )
                    })?;
                    set.insert(k);
                }
            }
        }
        if negate {
            let mut all = TokenSet::all(n);
            for k in set.kinds() {
                all.remove(k);
            }
            all.eof = !set.eof;
            set = all;
        }
        Ok(set)
    }
}

/// The text of a token sequence `kinds` of `tokens` (a solver's witness): each
/// literal as written, each token rule's (or regex's) shortest value, separated where
/// the tokens would run together (see [`Tokens::detokenize`]).
pub fn witness_text(grammar: &Grammar, tokens: &Tokens, kinds: &[u32]) -> Vec<u8> {
    let generator = thicket_gen::Generator::new(grammar, thicket_gen::GenConfig::default()).ok();
    let texts: Vec<Vec<u8>> = kinds
        .iter()
        .map(|&k| {
            let kind = &tokens.kinds()[k as usize];
            if let Some(l) = &kind.literal {
                return l.to_vec();
            }
            let expr = kind.rule.map(|r| grammar.rule(r).body).or(kind.regex);
            let mut sink = thicket_tree::ByteSink { bytes: Vec::new() };
            if let (Some(g), Some(e)) = (&generator, expr) {
                g.expand_smallest(e, &mut thicket_gen::Generator::rng_for(0, 0), &mut sink);
            }
            sink.bytes
        })
        .collect();
    Tokens::detokenize(&texts)
}

/// A shortest input whose tokens lie in given sets, or that there is none (`thicket
/// solve-tokens`); serialized, its JSON answer.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Answer {
    /// Whether an input was found.
    pub sat: bool,
    /// The witness's token kinds, by name.
    pub tokens: Vec<String>,
    /// The witness's text (`None`: unsatisfiable).
    pub input: Option<String>,
    /// Milliseconds the solver took.
    pub time_ms: f64,
    /// Token kinds of the spec.
    pub kinds: usize,
}

impl Answer {
    /// Solves `sets` (one per leading token) over the `tokens` of `grammar` and
    /// reads the witness's text ([`witness_text`], bytes that are not UTF-8 replaced).
    pub fn solve(grammar: &Grammar, tokens: &Tokens, sets: &[TokenSet]) -> Answer {
        let mut solver = TokenSolver::new(tokens.grammar(), tokens.kinds().len());
        let start = Instant::now();
        let answer = solver.solve(sets);
        let time_ms = start.elapsed().as_secs_f64() * 1000.0;
        let witness = answer.as_deref().unwrap_or_default();
        let input = witness_text(grammar, tokens, witness);
        Answer {
            sat: answer.is_some(),
            tokens: witness
                .iter()
                .map(|&k| tokens.kinds()[k as usize].name.clone())
                .collect(),
            input: answer
                .is_some()
                .then(|| String::from_utf8_lossy(&input).into_owned()),
            time_ms,
            kinds: tokens.kinds().len(),
        }
    }
}

/// Figures of a solver's work.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TokenSolveStats {
    /// Queries asked.
    pub calls: u64,
    /// Queries answered from the cache.
    pub cache_hits: u64,
    /// Queries (not from the cache) with no solution.
    pub unsat: u64,
    /// Time spent solving (not counting cache hits).
    #[serde(serialize_with = "secs")]
    pub time: Duration,
    /// The longest query solved (number of sets).
    pub max_len: usize,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

const NONE: u32 = u32::MAX;
const INF: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Item {
    prod: u32,
    dot: u32,
    origin: u32,
}

/// How an item was first derived (indices are (set, item) pairs).
#[derive(Clone, Copy)]
enum Link {
    Predicted,
    Scanned { prev: u32, kind: u32 },
    Completed { prev: u32, child: (u32, u32) },
    Nullable { prev: u32 },
}

#[derive(Default)]
struct Set {
    items: Vec<(Item, Link)>,
    index: HashMap<Item, u32>,
    /// Items waiting for each nonterminal (indices into `items`).
    waiting: HashMap<u32, Vec<u32>>,
}

impl Set {
    fn add(&mut self, item: Item, link: Link) {
        if !self.index.contains_key(&item) {
            self.index.insert(item, self.items.len() as u32);
            self.items.push((item, link));
        }
    }
}

/// The solver for one token grammar, with its cache.
pub struct TokenSolver {
    kinds: usize,
    lhs: Vec<u32>,
    rhs: Vec<Vec<TokSym>>,
    by_lhs: Vec<Vec<u32>>,
    nullable: Vec<bool>,
    /// Shortest length of each nonterminal's strings ([`INF`]: none).
    min_len: Vec<u64>,
    /// A production giving a shortest string, using only nonterminals finalised before.
    best: Vec<u32>,
    cache: HashMap<Vec<TokenSet>, Option<Vec<u32>>>,
    stats: TokenSolveStats,
}

impl TokenSolver {
    /// A solver for `grammar` over `kinds` token kinds.
    pub fn new(grammar: &TokenGrammar, kinds: usize) -> TokenSolver {
        let nts = grammar.productions.len();
        let mut lhs = Vec::new();
        let mut rhs = Vec::new();
        let mut by_lhs = vec![Vec::new(); nts];
        for (nt, alts) in grammar.productions.iter().enumerate() {
            for alt in alts {
                by_lhs[nt].push(lhs.len() as u32);
                lhs.push(nt as u32);
                rhs.push(alt.clone());
            }
        }
        // Knuth's generalisation of Dijkstra: finalise the nonterminal with the smallest
        // candidate length, using only productions over finalised nonterminals, so the
        // chosen productions expand without cycles.
        let mut min_len = vec![INF; nts];
        let mut best = vec![NONE; nts];
        let mut done = vec![false; nts];
        loop {
            let mut pick: Option<(u64, usize, u32)> = None;
            for (p, r) in rhs.iter().enumerate() {
                let a = lhs[p] as usize;
                if done[a] {
                    continue;
                }
                let mut len = 0u64;
                let mut ok = true;
                for s in r {
                    match *s {
                        TokSym::Token(_) => len += 1,
                        TokSym::Nonterminal(b) if done[b as usize] => len += min_len[b as usize],
                        TokSym::Nonterminal(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok && pick.is_none_or(|(l, _, _)| len < l) {
                    pick = Some((len, a, p as u32));
                }
            }
            let Some((len, a, p)) = pick else { break };
            done[a] = true;
            min_len[a] = len;
            best[a] = p;
        }
        let nullable = min_len.iter().map(|&l| l == 0).collect();
        TokenSolver {
            kinds,
            lhs,
            rhs,
            by_lhs,
            nullable,
            min_len,
            best,
            cache: HashMap::new(),
            stats: TokenSolveStats::default(),
        }
    }

    /// The figures so far.
    pub fn stats(&self) -> &TokenSolveStats {
        &self.stats
    }

    /// Number of token kinds.
    pub fn kinds(&self) -> usize {
        self.kinds
    }

    /// Whether the grammar has any string at all.
    pub fn is_empty_language(&self) -> bool {
        self.min_len.first().is_none_or(|&l| l == INF)
    }

    fn suffix_min(&self, prod: u32, dot: u32) -> u64 {
        let mut len = 0u64;
        for s in &self.rhs[prod as usize][dot as usize..] {
            let l = match *s {
                TokSym::Token(_) => 1,
                TokSym::Nonterminal(b) => self.min_len[b as usize],
            };
            if l == INF {
                return INF;
            }
            len += l;
        }
        len
    }

    /// A shortest token sequence (kinds) of the grammar whose token `i` is in
    /// `sets[i]` for every `i < sets.len()` (or, past its end, `sets[i]` allows the end
    /// of input); `None` if there is none.
    pub fn solve(&mut self, sets: &[TokenSet]) -> Option<Vec<u32>> {
        self.stats.calls += 1;
        // Trailing free sets change nothing.
        let free = TokenSet::all(self.kinds);
        let mut n = sets.len();
        while n > 0 && sets[n - 1] == free {
            n -= 1;
        }
        let key = sets[..n].to_vec();
        if let Some(hit) = self.cache.get(&key) {
            self.stats.cache_hits += 1;
            return hit.clone();
        }
        let start = Instant::now();
        let result = self.solve_uncached(&key);
        self.stats.time += start.elapsed();
        self.stats.max_len = self.stats.max_len.max(n);
        if result.is_none() {
            self.stats.unsat += 1;
        }
        self.cache.insert(key, result.clone());
        result
    }

    fn solve_uncached(&self, sets: &[TokenSet]) -> Option<Vec<u32>> {
        if self.is_empty_language() {
            return None;
        }
        let n = sets.len();
        // The earliest length at which the input may end (every later set allows it).
        let mut end_from = n;
        while end_from > 0 && sets[end_from - 1].eof {
            end_from -= 1;
        }
        let mut chart: Vec<Set> = (0..=n).map(|_| Set::default()).collect();
        for &p in &self.by_lhs[0] {
            chart[0].add(
                Item {
                    prod: p,
                    dot: 0,
                    origin: 0,
                },
                Link::Predicted,
            );
        }
        for i in 0..n {
            if chart[i].items.is_empty() {
                return None;
            }
            let mut j = 0;
            while j < chart[i].items.len() {
                let (item, _) = chart[i].items[j];
                let rhs = &self.rhs[item.prod as usize];
                if item.dot as usize == rhs.len() {
                    let a = self.lhs[item.prod as usize];
                    let origin = item.origin as usize;
                    let waiters = chart[origin].waiting.get(&a).cloned().unwrap_or_default();
                    for w in waiters {
                        let (wi, _) = chart[origin].items[w as usize];
                        chart[i].add(
                            Item {
                                dot: wi.dot + 1,
                                ..wi
                            },
                            Link::Completed {
                                prev: w,
                                child: (i as u32, j as u32),
                            },
                        );
                    }
                } else {
                    match rhs[item.dot as usize] {
                        TokSym::Token(k) => {
                            if sets[i].contains(k) {
                                chart[i + 1].add(
                                    Item {
                                        dot: item.dot + 1,
                                        ..item
                                    },
                                    Link::Scanned {
                                        prev: j as u32,
                                        kind: k,
                                    },
                                );
                            }
                        }
                        TokSym::Nonterminal(b) => {
                            if self.min_len[b as usize] == INF {
                                j += 1;
                                continue;
                            }
                            let first = !chart[i].waiting.contains_key(&b);
                            chart[i].waiting.entry(b).or_default().push(j as u32);
                            if first {
                                for &q in &self.by_lhs[b as usize] {
                                    chart[i].add(
                                        Item {
                                            prod: q,
                                            dot: 0,
                                            origin: i as u32,
                                        },
                                        Link::Predicted,
                                    );
                                }
                            }
                            if self.nullable[b as usize] {
                                chart[i].add(
                                    Item {
                                        dot: item.dot + 1,
                                        ..item
                                    },
                                    Link::Nullable { prev: j as u32 },
                                );
                            }
                        }
                    }
                }
                j += 1;
            }
            // A complete parse here, and the rest may be the end of input?
            if i >= end_from
                && let Some(idx) = self.complete_start(&chart[i])
            {
                return Some(self.tokens_of(&chart, i as u32, idx, Vec::new()));
            }
        }
        self.finish_at_end(&chart, n)
    }

    fn complete_start(&self, set: &Set) -> Option<u32> {
        set.items
            .iter()
            .position(|(it, _)| {
                self.lhs[it.prod as usize] == 0
                    && it.origin == 0
                    && it.dot as usize == self.rhs[it.prod as usize].len()
            })
            .map(|i| i as u32)
    }

    /// Past the last set: Dijkstra over completions `(nonterminal, origin)` at `n`,
    /// weighted by the tokens added after position `n`.
    fn finish_at_end(&self, chart: &[Set], n: usize) -> Option<Vec<u32>> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        #[derive(Clone, Copy)]
        enum How {
            /// Item of set `n`, finished minimally.
            Base(u32),
            /// Waiter (in set `origin` of the child) advanced over the child's node.
            Via { waiter: u32, child: (u32, u32) },
        }
        let mut best: HashMap<(u32, u32), (u64, How)> = HashMap::new();
        let mut heap = BinaryHeap::new();
        let push = |best: &mut HashMap<(u32, u32), (u64, How)>,
                    heap: &mut BinaryHeap<Reverse<(u64, u32, u32)>>,
                    node: (u32, u32),
                    cost: u64,
                    how: How| {
            if best.get(&node).is_none_or(|&(c, _)| cost < c) {
                best.insert(node, (cost, how));
                heap.push(Reverse((cost, node.0, node.1)));
            }
        };
        for (idx, (item, _)) in chart[n].items.iter().enumerate() {
            let rest = self.suffix_min(item.prod, item.dot);
            if rest == INF {
                continue;
            }
            let node = (self.lhs[item.prod as usize], item.origin);
            push(&mut best, &mut heap, node, rest, How::Base(idx as u32));
        }
        let mut done: HashMap<(u32, u32), ()> = HashMap::new();
        let mut goal = None;
        while let Some(Reverse((cost, a, o))) = heap.pop() {
            if done.insert((a, o), ()).is_some() || best[&(a, o)].0 != cost {
                continue;
            }
            if a == 0 && o == 0 {
                goal = Some((a, o));
                break;
            }
            if o as usize >= n {
                continue;
            }
            for &w in chart[o as usize].waiting.get(&a).map_or(&[][..], |v| v) {
                let (wi, _) = chart[o as usize].items[w as usize];
                let rest = self.suffix_min(wi.prod, wi.dot + 1);
                if rest == INF {
                    continue;
                }
                let node = (self.lhs[wi.prod as usize], wi.origin);
                push(
                    &mut best,
                    &mut heap,
                    node,
                    cost + rest,
                    How::Via {
                        waiter: w,
                        child: (a, o),
                    },
                );
            }
        }
        let goal = goal?;
        // Rebuild: a node's tokens are its item's (or waiter's) prefix, the child's,
        // then the shortest strings of the rest of the rule. Nodes form a chain from the
        // goal down to a base item, so collect it and emit from the bottom up.
        let mut chain = Vec::new();
        let mut node = goal;
        loop {
            let (_, how) = best[&node];
            chain.push((node, how));
            match how {
                How::Base(_) => break,
                How::Via { child, .. } => node = child,
            }
        }
        // Emit: outermost waiter prefix first, ..., base item, then the suffixes from
        // the innermost outwards.
        let mut out = Vec::new();
        for &(_, how) in &chain {
            if let How::Via { waiter, child } = how {
                // The waiter sits in the set where its child starts.
                out = self.tokens_of(chart, child.1, waiter, out);
            }
        }
        let (_, base) = chain.last().copied().expect("chain ends in a base");
        let How::Base(idx) = base else { unreachable!() };
        out = self.tokens_of(chart, n as u32, idx, out);
        let (item, _) = chart[n].items[idx as usize];
        self.emit_min(&self.rhs[item.prod as usize][item.dot as usize..], &mut out);
        for &(_, how) in chain.iter().rev() {
            if let How::Via { waiter, child } = how {
                let (wi, _) = chart[child.1 as usize].items[waiter as usize];
                self.emit_min(&self.rhs[wi.prod as usize][wi.dot as usize + 1..], &mut out);
            }
        }
        Some(out)
    }

    /// Appends a shortest string of `syms`.
    fn emit_min(&self, syms: &[TokSym], out: &mut Vec<u32>) {
        let mut stack: Vec<TokSym> = syms.iter().rev().copied().collect();
        while let Some(s) = stack.pop() {
            match s {
                TokSym::Token(k) => out.push(k),
                TokSym::Nonterminal(b) => {
                    let p = self.best[b as usize];
                    stack.extend(self.rhs[p as usize].iter().rev().copied());
                }
            }
        }
    }

    /// Appends the tokens an item of `set` has read (its rule's part before the dot,
    /// through its first derivation).
    fn tokens_of(&self, chart: &[Set], set: u32, idx: u32, mut out: Vec<u32>) -> Vec<u32> {
        enum Job {
            Item(u32, u32),
            Emit(u32),
            Min(u32),
        }
        let mut stack = vec![Job::Item(set, idx)];
        while let Some(job) = stack.pop() {
            match job {
                Job::Emit(k) => out.push(k),
                Job::Min(b) => self.emit_min(&[TokSym::Nonterminal(b)], &mut out),
                Job::Item(s, i) => {
                    let (item, link) = chart[s as usize].items[i as usize];
                    match link {
                        Link::Predicted => {}
                        Link::Scanned { prev, kind } => {
                            stack.push(Job::Emit(kind));
                            stack.push(Job::Item(s - 1, prev));
                        }
                        Link::Completed { prev, child } => {
                            let (ci, _) = chart[child.0 as usize].items[child.1 as usize];
                            stack.push(Job::Item(child.0, child.1));
                            stack.push(Job::Item(ci.origin, prev));
                        }
                        Link::Nullable { prev } => {
                            // The skipped nonterminal derives the empty string.
                            let TokSym::Nonterminal(b) =
                                self.rhs[item.prod as usize][item.dot as usize - 1]
                            else {
                                unreachable!("only nonterminals are nullable")
                            };
                            stack.push(Job::Min(b));
                            stack.push(Job::Item(s, prev));
                        }
                    }
                }
            }
        }
        out
    }
}
