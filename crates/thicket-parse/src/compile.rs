//! The grammar graph compiled for parsing: one operation per expression node, child
//! lists, empty derivations, FIRST sets and rule owners.

use crate::ParseConfig;
use crate::earley::{Item, Spare};
use crate::error::CompileError;
use crate::terminal::{RegexCache, RegexMatcher};
use regex_syntax::hir::Hir;
use std::sync::{Arc, Mutex, OnceLock};
use thicket_grammar::{Expr, ExprId, Grammar, TokenMatch};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Literal,
    Regex,
    Ref {
        body: u32,
    },
    /// The last child of an associative alternative `A ::= A ... A` (a reference to
    /// `A`): its items stand for `A`'s body restricted to the alternatives that are not
    /// associative (see `Parser::restrict_operands`), the alternative in `back` as an
    /// alternation's.
    Operand {
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

pub(crate) const NONE: u32 = u32::MAX;

/// A parser for one grammar: build once, parse many inputs, from many threads.
pub struct Parser<'g> {
    pub(crate) grammar: &'g Grammar,
    pub(crate) config: ParseConfig,
    pub(crate) ops: Vec<Op>,
    pub(crate) children: Vec<u32>,
    /// For each node: the depth of its shallowest empty derivation, or `NONE`.
    pub(crate) empty_depth: Vec<u32>,
    /// For alternations that can derive empty: the alternative to use.
    pub(crate) empty_choice: Vec<u32>,
    /// Shared with the parser `untokenized` makes.
    pub(crate) regexes: Arc<[Option<RegexMatcher>]>,
    /// The rule whose right-hand side contains each node (for error messages).
    pub(crate) owner: Vec<u32>,
    /// Nodes whose language is regular (no recursive rule below them).
    pub(crate) regular: Vec<bool>,
    /// Each node's shortest and longest derivation, `(min, max)` (see
    /// `Parser::compute_lengths`).
    pub(crate) lengths: Vec<(u32, u32)>,
    /// DFAs of regular nodes, built on first use (`None` if too large).
    pub(crate) tokens: Vec<OnceLock<Option<RegexMatcher>>>,
    /// Every DFA built so far, by regex (shared with the derived parsers): the regular
    /// nodes of different rules often have the same language (`PREP : NAME ;`).
    pub(crate) built: Arc<Mutex<RegexCache>>,
    /// For regular nodes repeated inside tokens: the length of the node's derivations
    /// by their first byte, where that byte tells it (see `token.rs`), built on first
    /// use.
    pub(crate) lengths_by_first_byte: Vec<OnceLock<Option<Box<[u8; 256]>>>>,
    /// The bytes each node's non-empty derivations can start with.
    pub(crate) first: Vec<ByteSet>,
    /// Each literal's bytes as a range of `literal_bytes` (empty for other nodes), so
    /// scanning a literal does not go through the grammar's expression arena.
    pub(crate) literals: Vec<(u32, u32)>,
    pub(crate) literal_bytes: Vec<u8>,
    /// The bytes that can follow each node in some derivation from the root, and whether
    /// the end of the input can.
    pub(crate) follow: Vec<ByteSet>,
    pub(crate) follow_end: Vec<bool>,
    pub(crate) root: u32,
    /// Per symbol, a node referencing it (the start rule has at least the root; `NONE`
    /// for a symbol nothing references), where [`Parser::parse_as`] starts.
    pub(crate) ref_nodes: Vec<u32>,
    /// Vectors of finished parses, for the next inputs (see `Spare`).
    pub(crate) spares: std::sync::Mutex<Vec<Spare>>,
    /// How many tree nodes large inputs needed per byte (see `fresh::PerByte`).
    pub(crate) per_byte: std::sync::Mutex<crate::fresh::PerByte>,
    /// Parses of this parser building their chart right now (helper threads are only
    /// started for a parse running alone: see `ParseConfig::threads`).
    pub(crate) running: std::sync::atomic::AtomicUsize,
    /// Whether regular nodes are scanned as tokens (always, except in `untokenized`).
    pub(crate) scans_tokens: bool,
    /// Whether a chart without forks means one tree (see `count.rs`), found on first use.
    pub(crate) chart_decides: OnceLock<bool>,
    /// Whether some rule's operands are restricted (`Op::Operand`): the chart then holds
    /// one bracketing of each chain of associative alternatives, and counting asks
    /// `exhaustive`.
    pub(crate) restricts: bool,
    /// For a parser that restricts operands: the same grammar with every derivation in
    /// its charts.
    pub(crate) exhaustive: Option<Box<Parser<'g>>>,
}

/// A set of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    pub(crate) fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    #[inline]
    pub(crate) fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    pub(crate) fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
}

impl<'g> Parser<'g> {
    /// The DFA of `hir`'s whole language, built unless this parser (or the one it was
    /// derived from) built it before. Not built under the lock: other threads scanning
    /// with this parser may need other DFAs meanwhile.
    pub(crate) fn matcher_of(&self, hir: &Hir) -> Result<RegexMatcher, String> {
        let key = hir.to_string();
        if let Some(found) = self.built.lock().ok().and_then(|b| b.get(&key, hir)) {
            return found;
        }
        let built = RegexMatcher::new(hir);
        if let Ok(mut cache) = self.built.lock() {
            cache.insert(key, hir, built.clone());
        }
        built
    }

    /// Whether a parse may start helper threads now: asked for, and no other parse of
    /// this parser is building its chart (its thread would compete with the helpers).
    pub(crate) fn may_start_threads(&self, running_besides: usize) -> bool {
        self.config.threads
            && self.running.load(std::sync::atomic::Ordering::Relaxed) <= running_besides
    }

    /// The grammar compiled without tokens (every rule parsed by its parts; regex
    /// terminals stay DFAs, shared with this parser), for explaining a rejection inside
    /// a token (see `error.rs`); `None` for such a parser itself. Made from this
    /// parser's tables, so only rejections pay for it.
    pub(crate) fn untokenized(&self) -> Option<Parser<'g>> {
        if !self.scans_tokens {
            return None;
        }
        let mut parser = self.derived(
            self.ops.clone(),
            vec![false; self.ops.len()],
            Vec::new(),
            false,
            self.restricts,
        );
        parser.compute_lengths();
        Some(parser)
    }

    /// This parser with every derivation in its charts (operands unrestricted), for
    /// counting trees: itself if it restricts nothing, and for the untokenized parser
    /// that explains rejections (which counts nothing).
    pub(crate) fn exhaustive(&self) -> &Parser<'g> {
        self.exhaustive.as_deref().unwrap_or(self)
    }

    /// The same parser with its operands unrestricted (its DFAs built anew, on first
    /// use: only counting needs them).
    fn unrestricted(&self) -> Parser<'g> {
        let ops = self
            .ops
            .iter()
            .map(|&op| match op {
                Op::Operand { body } => Op::Ref { body },
                op => op,
            })
            .collect();
        self.derived(
            ops,
            self.regular.clone(),
            self.lengths.clone(),
            self.scans_tokens,
            false,
        )
    }

    /// A parser for another use of this one's compiled grammar: its tables and regex
    /// DFAs shared or copied, the given ops and per-rule facts, fresh caches, one
    /// thread and no kept bytes.
    fn derived(
        &self,
        ops: Vec<Op>,
        regular: Vec<bool>,
        lengths: Vec<(u32, u32)>,
        scans_tokens: bool,
        restricts: bool,
    ) -> Parser<'g> {
        let n = ops.len();
        Parser {
            grammar: self.grammar,
            config: ParseConfig {
                threads: false,
                keep_bytes: 0,
                ..self.config
            },
            ops,
            children: self.children.clone(),
            empty_depth: self.empty_depth.clone(),
            empty_choice: self.empty_choice.clone(),
            regexes: Arc::clone(&self.regexes),
            owner: self.owner.clone(),
            regular,
            lengths,
            tokens: (0..n).map(|_| OnceLock::new()).collect(),
            built: Arc::clone(&self.built),
            lengths_by_first_byte: (0..n).map(|_| OnceLock::new()).collect(),
            first: self.first.clone(),
            literals: self.literals.clone(),
            literal_bytes: self.literal_bytes.clone(),
            follow: self.follow.clone(),
            follow_end: self.follow_end.clone(),
            root: self.root,
            ref_nodes: self.ref_nodes.clone(),
            spares: Default::default(),
            per_byte: Default::default(),
            running: Default::default(),
            scans_tokens,
            chart_decides: OnceLock::new(),
            restricts,
            exhaustive: None,
        }
    }

    /// Prepares a parser (compiles regex terminals into DFAs).
    pub fn new(grammar: &'g Grammar, config: ParseConfig) -> Result<Parser<'g>, CompileError> {
        let n = grammar.expr_count();

        let mut parser = Parser {
            grammar,
            config,
            ops: Vec::with_capacity(n),
            children: Vec::new(),
            empty_depth: vec![NONE; n],
            empty_choice: vec![NONE; n],
            regexes: Arc::from(Vec::new()),
            owner: vec![NONE; n],
            regular: vec![false; n],
            lengths: Vec::new(),
            tokens: (0..n).map(|_| OnceLock::new()).collect(),
            built: Default::default(),
            lengths_by_first_byte: (0..n).map(|_| OnceLock::new()).collect(),
            first: vec![ByteSet::default(); n],
            literals: vec![(0, 0); n],
            literal_bytes: Vec::new(),
            follow: vec![ByteSet::default(); n],
            follow_end: vec![false; n],
            root: grammar.root().index() as u32,
            ref_nodes: vec![NONE; grammar.rules().len()],
            spares: Default::default(),
            per_byte: Default::default(),
            running: Default::default(),
            scans_tokens: true,
            chart_decides: OnceLock::new(),
            restricts: false,
            exhaustive: None,
        };
        let index = |e: ExprId| e.index() as u32;
        let mut regexes = Vec::with_capacity(n);
        for id in grammar.expr_ids() {
            let (op, regex) = match grammar.expr(id) {
                Expr::Literal(bytes) => {
                    let start = parser.literal_bytes.len() as u32;
                    parser.literal_bytes.extend_from_slice(bytes);
                    parser.literals[id.index()] = (start, parser.literal_bytes.len() as u32);
                    (Op::Literal, None)
                }
                Expr::Regex(r) => {
                    // A longest-match token's mark counts where the chart scans it
                    // (`Parser::scans_longest`), a shortest one's in its matcher.
                    let matcher =
                        parser
                            .matcher_of(&r.hir)
                            .map(|m| match grammar.token_match(id) {
                                Some(TokenMatch::Shortest) => m.taking(TokenMatch::Shortest),
                                _ => m,
                            });
                    (
                        Op::Regex,
                        Some(matcher.map_err(|reason| CompileError::Regex {
                            pattern: r.pattern.clone(),
                            reason,
                        })?),
                    )
                }
                Expr::Ref(s) => {
                    let body = index(grammar.rule(*s).body);
                    if parser.ref_nodes[s.index()] == NONE {
                        parser.ref_nodes[s.index()] = index(id);
                    }
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
            regexes.push(regex);
        }
        parser.regexes = regexes.into();
        parser.compute_empty_derivations();
        parser.compute_owners();
        parser.compute_regular();
        parser.compute_lengths();
        parser.compute_first();
        parser.compute_follow();
        parser.restrict_operands();
        if parser.restricts {
            parser.exhaustive = Some(Box::new(parser.unrestricted()));
        }
        Ok(parser)
    }

    /// Restricts the right operands of associative rules. A rule whose alternatives
    /// include `A ::= A x A` (the first and last child references to `A` itself, as in
    /// ISLa's `<xml-attribute> ::= <xml-attribute> " " <xml-attribute>` or `E ::= E "+"
    /// E`) derives every text of every bracketing: `a a a a` as `((a a) a) a`, `(a a)
    /// (a a)`, ... Earley's chart holds an item for each operand span, from every start,
    /// so such a list of n operands costs n² items and n³ steps (XML with 3,000
    /// attributes: a minute). Every derivation can be rotated into the left-nested one
    /// (`A(A1 x A(A2 y A3))` into `A(A(A1 x A2) y A3)`), whose right operands derive
    /// through the other alternatives only, so the language stays the same when the last
    /// child of each such alternative expects just those: then a list of n operands
    /// costs n items, and its tree is the left-nested one, as the parser found first
    /// before. Counting trees parses with every derivation (`Parser::exhaustive`).
    fn restrict_operands(&mut self) {
        for symbol in self.grammar.symbols() {
            let body = self.grammar.rule(symbol).body.index() as u32;
            let Op::Alt { start, len } = self.ops[body as usize] else {
                continue;
            };
            let alternatives = &self.children[start as usize..(start + len) as usize];
            let refers_here = |node: u32| {
                matches!(self.grammar.expr(ExprId::from_index(node as usize)),
                    Expr::Ref(s) if *s == symbol)
            };
            let operands: Vec<u32> = alternatives
                .iter()
                .filter_map(|&alt| match self.ops[alt as usize] {
                    Op::Seq { start, len } if len >= 2 => {
                        let first = self.children[start as usize];
                        let last = self.children[(start + len - 1) as usize];
                        (refers_here(first) && refers_here(last)).then_some(last)
                    }
                    _ => None,
                })
                .collect();
            // Only where some alternative is not associative: otherwise the rule
            // derives nothing finite, and nothing is gained.
            if operands.is_empty() || operands.len() == alternatives.len() {
                continue;
            }
            for operand in operands {
                self.ops[operand as usize] = Op::Operand { body };
                self.restricts = true;
            }
        }
    }

    /// Whether `alternative` (of a rule's body) is associative, `A ::= A ... A` with its
    /// last child restricted: an `Op::Operand` does not expect it.
    #[inline]
    pub(crate) fn is_associative(&self, alternative: u32) -> bool {
        match self.ops[alternative as usize] {
            Op::Seq { start, len } => matches!(
                self.ops[self.children[(start + len - 1) as usize] as usize],
                Op::Operand { .. }
            ),
            _ => false,
        }
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
                    (Op::Ref { body } | Op::Operand { body }, _) => {
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
                    Op::Ref { body } | Op::Operand { body } => {
                        set.union(&self.first[body as usize])
                    }
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

    /// FOLLOW sets by fixpoint (an over-approximation, as usual: every byte that can
    /// follow a node in some sentential form from the root). A node completed at `j`
    /// where `text[j]` cannot follow it is in no derivation of the whole input; the
    /// parser drops such matches (see `earley.rs`).
    fn compute_follow(&mut self) {
        self.follow_end[self.root as usize] = true;
        loop {
            let mut changed = false;
            // Parents before children would converge faster, but ids put children first;
            // the fixpoint is cheap either way.
            for x in (0..self.ops.len()).rev() {
                let (set, end) = (self.follow[x], self.follow_end[x]);
                let mut flow = |parser: &mut Self, child: u32, set: &ByteSet, end: bool| {
                    let c = child as usize;
                    let mut grown = parser.follow[c];
                    grown.union(set);
                    if grown != parser.follow[c] || (end && !parser.follow_end[c]) {
                        parser.follow[c] = grown;
                        parser.follow_end[c] |= end;
                        changed = true;
                    }
                };
                match self.ops[x] {
                    Op::Literal | Op::Regex => {}
                    Op::Ref { body } | Op::Operand { body } => flow(self, body, &set, end),
                    Op::Alt { start, len } => {
                        for i in start..start + len {
                            let c = self.children[i as usize];
                            flow(self, c, &set, end);
                        }
                    }
                    Op::Seq { start, len } => {
                        // Walk right to left, carrying what can follow the child.
                        let (mut after, mut after_end) = (set, end);
                        for i in (start..start + len).rev() {
                            let c = self.children[i as usize];
                            flow(self, c, &after, after_end);
                            if self.nullable(c) {
                                after.union(&self.first[c as usize]);
                            } else {
                                after = self.first[c as usize];
                                after_end = false;
                            }
                        }
                    }
                    Op::Repeat { item, max, .. } => {
                        let mut after = set;
                        if max.is_none_or(|m| m > 1) {
                            after.union(&self.first[item as usize]);
                        }
                        flow(self, item, &after, end);
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Whether a derivation of `node` ending at `end` can be followed by the rest of
    /// `text`.
    #[inline]
    pub(crate) fn can_follow(&self, node: u32, text: &[u8], end: usize) -> bool {
        match text.get(end) {
            Some(&b) => self.follow[node as usize].contains(b),
            None => self.follow_end[node as usize],
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

    pub(crate) fn empty_literal(&self, node: u32) -> bool {
        matches!(self.grammar.expr(ExprId::from_index(node as usize)), Expr::Literal(b) if b.is_empty())
    }

    /// The bytes of a literal node.
    #[inline]
    pub(crate) fn literal(&self, node: u32) -> &[u8] {
        let (start, end) = self.literals[node as usize];
        &self.literal_bytes[start as usize..end as usize]
    }

    /// The node whose items stand for `node` in the chart. A reference that is
    /// predicted (not scanned as a token) is transparent: expecting it predicts its
    /// rule's body (through any references that body is), the expecting item waits for
    /// the body, and the body's complete item is the reference's child in trees. This
    /// spares two items and a waiting entry per reference expected (on JSON, a quarter
    /// of the items). Only the root, never expected, is a reference with items. A body
    /// that is a terminal stays behind its reference (terminals have no items).
    pub(crate) fn chart_node(&self, node: u32) -> u32 {
        let mut at = node;
        // At most one step per node: a cycle of references (which derives nothing)
        // leaves `node` as it is.
        for _ in 0..self.ops.len() {
            let Op::Ref { body } = self.ops[at as usize] else {
                return at;
            };
            if self.is_token(at) || matches!(self.ops[body as usize], Op::Literal | Op::Regex) {
                return at;
            }
            at = body;
        }
        node
    }

    #[inline]
    pub(crate) fn nullable(&self, node: u32) -> bool {
        self.empty_depth[node as usize] != NONE
    }

    #[inline]
    pub(crate) fn is_complete(&self, item: &Item) -> bool {
        Self::op_complete(self.ops[item.node as usize], item.dot)
    }

    /// Whether an item of a node with this op is complete at `dot`.
    #[inline]
    pub(crate) fn op_complete(op: Op, dot: u32) -> bool {
        match op {
            Op::Seq { len, .. } => dot == len,
            Op::Ref { .. } | Op::Operand { .. } | Op::Alt { .. } => dot == 1,
            Op::Repeat { min, .. } => dot >= min,
            Op::Literal | Op::Regex => false,
        }
    }

    /// The dot after one more repetition.
    #[inline]
    pub(crate) fn next_count(min: u32, max: Option<u32>, dot: u32) -> u32 {
        match max {
            Some(_) => dot + 1,
            None => (dot + 1).min(min),
        }
    }

    #[inline]
    pub(crate) fn repeat_expects(max: Option<u32>, dot: u32) -> bool {
        max.is_none_or(|m| dot < m)
    }
}
