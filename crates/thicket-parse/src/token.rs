//! Regular parts of a grammar, matched as single tokens.
//!
//! A node is *regular* when no reference below it leads back into a recursive rule: then
//! its language is regular and one DFA recognises it. The Earley parser scans such a
//! node in one step wherever it is expected (a JSON string or number is one token,
//! rather than a dozen items per character), which is what makes parsing fast.
//!
//! The tree inside a token is rebuilt on demand: a node's children are found by a small
//! forward search over positions (a one-level chart) whose steps are the children's own
//! DFA matches, then each child is rebuilt the same way. The first path found wins,
//! children matched in order and each child's match ends tried shortest first.

use crate::compile::{Op, Parser};
use crate::terminal::RegexMatcher;
use regex_syntax::hir::{Hir, Repetition};
use rustc_hash::FxHashMap;
use thicket_grammar::{Expr, ExprId, TokenMatch};
use thicket_tree::{Recorder, Recording, TreeSink};

enum Frame {
    Node(u32, usize, usize),
    Close,
}

/// Buffers reused across the tokens of one tree, and the subtrees already built.
#[derive(Default)]
pub(crate) struct SplitScratch<'t> {
    frames: Vec<Frame>,
    spans: Vec<(u32, usize, usize)>,
    previous: Vec<u32>,
    queue: std::collections::VecDeque<(u32, usize)>,
    ends: Vec<usize>,
    /// Small subtrees of the chart's leaves (tokens, empty spans) by `(node, empty
    /// derivation?, bytes)`, as recordings: building one means splitting it child by
    /// child through DFAs, while grafting one copies its nodes, and the same ones
    /// recur (indentation, keys, `true`). Only at the chart's leaves: caching every
    /// small subtree inside a token costs more in lookups and recording than it saves.
    /// A leaf seen once has no recording (`None`): it is recorded when seen again, so
    /// leaves that never repeat (most numbers) are built straight into the sink rather
    /// than recorded and copied.
    cache: FxHashMap<LeafKey<'t>, Option<Recording>>,
    /// Nodes in `cache` and `tiny`.
    cached_nodes: usize,
    /// Leaves in `cache` seen once (without a recording).
    seen_once: usize,
    /// Records the subtrees for `cache` (reused).
    recorder: Recorder,
    /// Subtrees of at most one byte inside tokens, by `(node, byte)` (256: empty).
    tiny: FxHashMap<(u32, u16), Recording>,
    /// Records the subtrees for `tiny` (reused).
    tiny_recorder: Recorder,
}

/// No upper bound on a derivation's length.
const UNBOUNDED: u32 = u32::MAX;
/// Length bounds not computed yet.
const UNKNOWN: (u32, u32) = (u32::MAX, 0);

/// A leaf subtree: its node, whether it is the empty derivation, and its bytes.
/// Which matches the chart takes where it scans a terminal or token (see
/// `Parser::scan_take`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// Every match: a plain terminal's language.
    All,
    /// Only the longest: a lexer's token.
    Longest,
    /// Only the longest, and none where its text is one the marked token (this node)
    /// never has.
    LongestUntaken(ExprId),
}

type LeafKey<'t> = (u32, bool, &'t [u8]);

/// Longest span whose subtree is cached: long tokens (strings, comments) rarely recur.
const CACHED_SPAN: usize = 32;
/// Most nodes kept, to bound the cache's memory (20 bytes each).
const CACHED_NODES: usize = 1 << 19;
/// Most leaves kept as seen once, to bound the cache's memory (about 50 bytes each).
const SEEN_ONCE: usize = 1 << 18;

/// No predecessor yet.
const NONE: u32 = u32::MAX;
/// The predecessor of the start state.
const START: u32 = u32::MAX - 1;

impl Parser<'_> {
    /// Marks the nodes whose subtrees reach no recursive rule, no phrase rule and no
    /// token taking its shortest match below themselves (`Grammar::set_token_match`:
    /// such a node is a DFA of its own cut after its first match, which no regex of a
    /// larger node can say). A reference to a rule whose body is such a token is that
    /// token too. Tokens taking their longest match stay inside larger DFAs (which read
    /// their whole language, a superset): only where the chart scans them does the
    /// mark count (`Parser::scans_longest`).
    pub(crate) fn compute_regular(&mut self) {
        let rules = self.grammar.rules().len();
        // Least fixpoint: a rule is regular once every rule its body uses is; rules on a
        // cycle never get there.
        let mut rule_regular = vec![false; rules];
        loop {
            let mut changed = false;
            for symbol in self.grammar.symbols() {
                // References to phrase rules are never regular (see
                // `Grammar::set_phrase`); nodes that use only token rules stay regular.
                if rule_regular[symbol.index()] || self.grammar.is_phrase(symbol) {
                    continue;
                }
                let body = self.grammar.rule(symbol).body.index() as u32;
                // A reference inlines the body: a shortest body makes it irregular.
                if self.subtree_refs_all(body, &rule_regular, false) {
                    rule_regular[symbol.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for x in 0..self.ops.len() as u32 {
            self.regular[x as usize] = self.subtree_refs_all(x, &rule_regular, true);
        }
        for x in 0..self.ops.len() as u32 {
            if let Some(token) = self.marked_token(x, TokenMatch::Shortest) {
                self.regular[x as usize] = self.regular[token as usize];
            }
        }
    }

    /// Whether every reference below `node` is to a rule `rule_ok` accepts and no node
    /// below it is a token taking its shortest match (`node` itself may be, if
    /// `token_root`).
    fn subtree_refs_all(&self, node: u32, rule_ok: &[bool], token_root: bool) -> bool {
        let mut stack = vec![node];
        while let Some(x) = stack.pop() {
            let id = ExprId::from_index(x as usize);
            if self.grammar.token_match(id) == Some(TokenMatch::Shortest)
                && (x != node || !token_root)
            {
                return false;
            }
            match self.grammar.expr(id) {
                Expr::Ref(s) if !rule_ok[s.index()] => return false,
                Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_) => {}
                other => stack.extend(other.children().iter().map(|c| c.index() as u32)),
            }
        }
        true
    }

    /// The node marked as a token taking `how` (`Grammar::set_token_match`) that
    /// `node` stands for: itself, or through references the body of the rule they lead
    /// to.
    fn marked_token(&self, node: u32, how: TokenMatch) -> Option<u32> {
        let mut at = node;
        // A cycle of references marks nothing.
        for _ in 0..self.ops.len() {
            match self.grammar.token_match(ExprId::from_index(at as usize)) {
                Some(found) if found == how => return Some(at),
                Some(_) => return None,
                None => {}
            }
            match self.ops[at as usize] {
                Op::Ref { body } => at = body,
                _ => return None,
            }
        }
        None
    }

    /// Which of its matches the chart takes when it scans `node` (a regex terminal or
    /// a token): all, or only the longest, as a lexer reads the token it stands for,
    /// and then perhaps not where that text is one a rule of higher priority takes
    /// (`Grammar::set_token_taken_texts`).
    pub(crate) fn scan_take(&self, node: u32) -> Take {
        match self.marked_token(node, TokenMatch::Longest) {
            None => Take::All,
            Some(token)
                if self
                    .grammar
                    .has_token_taken_texts(ExprId::from_index(token as usize)) =>
            {
                Take::LongestUntaken(ExprId::from_index(token as usize))
            }
            Some(_) => Take::Longest,
        }
    }

    /// The matcher of a regex terminal or of a regular node, built on first use.
    #[inline]
    pub(crate) fn matcher(&self, node: u32) -> Option<&RegexMatcher> {
        match self.ops[node as usize] {
            Op::Regex => self.regexes[node as usize].as_ref(),
            Op::Literal => None,
            _ if self.regular[node as usize] => match self.tokens[node as usize].get() {
                Some(matcher) => matcher.as_ref(),
                None => self.build_matcher(node),
            },
            _ => None,
        }
    }

    /// `matcher`'s first use of a regular node, kept out of line: `matcher` runs for
    /// every child match inside tokens, where the matcher is almost always built.
    #[cold]
    #[inline(never)]
    fn build_matcher(&self, node: u32) -> Option<&RegexMatcher> {
        self.tokens[node as usize]
            .get_or_init(|| {
                let hir = self.to_hir(node);
                let matcher = self.matcher_of(&hir).ok()?;
                Some(match self.marked_token(node, TokenMatch::Shortest) {
                    Some(_) => matcher.taking(TokenMatch::Shortest),
                    None => matcher,
                })
            })
            .as_ref()
    }

    /// The DFA of any regular node, literals included (for analyses of the grammar,
    /// not for scanning: see `matcher`), built on first use.
    pub(crate) fn language(&self, node: u32) -> Option<&RegexMatcher> {
        match self.ops[node as usize] {
            Op::Regex => self.regexes[node as usize].as_ref(),
            _ if self.regular[node as usize] => self.build_matcher(node),
            _ => None,
        }
    }

    /// The DFA of the regular nodes `parts` in a row, or (`repeated`) of the one node
    /// `parts[0]` repeated any number of times, for analyses of the grammar; `None` if
    /// too large.
    pub(crate) fn language_of(&self, parts: &[u32], repeated: bool) -> Option<RegexMatcher> {
        let hir = if repeated {
            Hir::repetition(Repetition {
                min: 0,
                max: None,
                greedy: true,
                sub: Box::new(self.to_hir(parts[0])),
            })
        } else {
            Hir::concat(parts.iter().map(|&p| self.to_hir(p)).collect())
        };
        self.matcher_of(&hir).ok()
    }

    /// Whether `node` is scanned as one token.
    #[inline]
    pub(crate) fn is_token(&self, node: u32) -> bool {
        !matches!(self.ops[node as usize], Op::Literal | Op::Regex) && self.matcher(node).is_some()
    }

    /// The regular language of a regular node as a regex.
    fn to_hir(&self, node: u32) -> Hir {
        match self.grammar.expr(ExprId::from_index(node as usize)) {
            Expr::Literal(bytes) => Hir::literal(bytes.clone()),
            Expr::Regex(r) => r.hir.clone(),
            Expr::Ref(s) => self.to_hir(self.grammar.rule(*s).body.index() as u32),
            Expr::Seq(items) => Hir::concat(
                items
                    .iter()
                    .map(|i| self.to_hir(i.index() as u32))
                    .collect(),
            ),
            Expr::Alt(alts) => {
                Hir::alternation(alts.iter().map(|a| self.to_hir(a.index() as u32)).collect())
            }
            Expr::Repeat(r) => Hir::repetition(Repetition {
                min: r.min,
                max: r.max,
                greedy: true,
                sub: Box::new(self.to_hir(r.item.index() as u32)),
            }),
        }
    }

    /// Every end `e <= limit` such that `node` derives `text[at..e]`, ascending.
    pub(crate) fn ends(
        &self,
        node: u32,
        text: &[u8],
        at: usize,
        limit: usize,
        out: &mut Vec<usize>,
    ) {
        self.ends_where(node, text, at, limit, out, |_| true);
    }

    /// `ends`, keeping only the ends `keep` accepts.
    #[inline]
    fn ends_where(
        &self,
        node: u32,
        text: &[u8],
        at: usize,
        limit: usize,
        out: &mut Vec<usize>,
        keep: impl Fn(usize) -> bool,
    ) {
        out.clear();
        match self.ops[node as usize] {
            Op::Literal => {
                let Expr::Literal(bytes) = self.grammar.expr(ExprId::from_index(node as usize))
                else {
                    unreachable!("literal op")
                };
                if text[at..limit].starts_with(bytes) && keep(at + bytes.len()) {
                    out.push(at + bytes.len());
                }
            }
            _ => {
                if let Some(m) = self.matcher(node) {
                    m.match_ends(&text[..limit], at, |e| {
                        if keep(e) {
                            out.push(e);
                        }
                    });
                }
            }
        }
    }

    /// Whether `node` derives exactly `text[start..end]`.
    pub(crate) fn derives(&self, node: u32, text: &[u8], start: usize, end: usize) -> bool {
        match self.ops[node as usize] {
            Op::Literal => {
                let Expr::Literal(bytes) = self.grammar.expr(ExprId::from_index(node as usize))
                else {
                    unreachable!("literal op")
                };
                text[start..end] == bytes[..]
            }
            _ => self
                .matcher(node)
                .is_some_and(|m| m.matches_at(text, start, end)),
        }
    }

    /// Emits the subtree over `text[start..end]` of a node the chart does not split:
    /// its shallowest empty derivation if `empty`, else (a regular node) the one
    /// `build_regular` finds. Small ones come from the cache.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit_leaf<'t, S: TreeSink>(
        &self,
        node: u32,
        empty: bool,
        text: &'t [u8],
        start: usize,
        end: usize,
        sink: &mut S,
        scratch: &mut SplitScratch<'t>,
    ) {
        let span = &text[start..end];
        if span.len() > CACHED_SPAN {
            self.build_leaf(node, empty, text, start, end, sink, scratch);
            return;
        }
        match scratch.cache.get(&(node, empty, span)) {
            Some(Some(recording)) => {
                sink.graft(recording, span);
                return;
            }
            Some(None) => {}
            None => {
                // First seen: built in place, remembered.
                if scratch.seen_once < SEEN_ONCE {
                    scratch.seen_once += 1;
                    scratch.cache.insert((node, empty, span), None);
                }
                self.build_leaf(node, empty, text, start, end, sink, scratch);
                return;
            }
        }
        let mut recorder = std::mem::take(&mut scratch.recorder);
        self.build_leaf(node, empty, text, start, end, &mut recorder, scratch);
        let recording = recorder.take();
        scratch.recorder = recorder;
        sink.graft(&recording, span);
        if scratch.cached_nodes + recording.len() <= CACHED_NODES {
            scratch.cached_nodes += recording.len();
            scratch.cache.insert((node, empty, span), Some(recording));
        }
    }

    /// `emit_leaf` without the cache.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn build_leaf<'t, S: TreeSink>(
        &self,
        node: u32,
        empty: bool,
        text: &'t [u8],
        start: usize,
        end: usize,
        sink: &mut S,
        scratch: &mut SplitScratch<'t>,
    ) {
        if empty {
            self.emit_empty(node, sink);
        } else {
            self.build_regular(node, text, start, end, sink, scratch);
        }
    }

    /// Emits the subtree of a regular node that derives `text[start..end]`.
    pub(crate) fn build_regular<'t, S: TreeSink>(
        &self,
        node: u32,
        text: &'t [u8],
        start: usize,
        end: usize,
        sink: &mut S,
        scratch: &mut SplitScratch<'t>,
    ) {
        self.build_regular_with(node, text, start, end, sink, scratch, true);
    }

    /// `build_regular`; with `tiny_cache`, subtrees of at most one byte inside the node
    /// come from `SplitScratch::tiny` (digits, characters, absent optional parts: few
    /// distinct ones, each otherwise rebuilt through several DFA runs).
    #[allow(clippy::too_many_arguments)]
    fn build_regular_with<'t, S: TreeSink>(
        &self,
        node: u32,
        text: &'t [u8],
        start: usize,
        end: usize,
        sink: &mut S,
        scratch: &mut SplitScratch<'t>,
        tiny_cache: bool,
    ) {
        let mut stack = std::mem::take(&mut scratch.frames);
        stack.push(Frame::Node(node, start, end));
        let mut spans = std::mem::take(&mut scratch.spans);
        let mut root = true;
        while let Some(frame) = stack.pop() {
            let (node, start, end) = match frame {
                Frame::Close => {
                    sink.close();
                    continue;
                }
                Frame::Node(node, start, end) => (node, start, end),
            };
            if self.emit_terminal(node, &text[start..end], sink) {
                root = false;
                continue;
            }
            let expr = ExprId::from_index(node as usize);
            let op = self.ops[node as usize];
            if tiny_cache && !std::mem::replace(&mut root, false) && end - start <= 1 {
                let key = (
                    node,
                    if end > start {
                        u16::from(text[start])
                    } else {
                        256
                    },
                );
                let span = &text[start..end];
                if let Some(recording) = scratch.tiny.get(&key) {
                    sink.graft(recording, span);
                    continue;
                }
                if scratch.cached_nodes < CACHED_NODES {
                    // Built the same way as below, once, by a nested call that does not
                    // cache (so the nesting is one level deep).
                    let mut recorder = std::mem::take(&mut scratch.tiny_recorder);
                    self.build_regular_with(node, text, start, end, &mut recorder, scratch, false);
                    let recording = recorder.take();
                    scratch.tiny_recorder = recorder;
                    sink.graft(&recording, span);
                    scratch.cached_nodes += recording.len();
                    scratch.tiny.insert(key, recording);
                    continue;
                }
            }

            sink.open(expr);
            stack.push(Frame::Close);
            match op {
                Op::Ref { body } | Op::Operand { body } => {
                    stack.push(Frame::Node(body, start, end))
                }
                Op::Alt { start: first, len } => {
                    let child = self.choose(first, len, text, start, end);
                    stack.push(Frame::Node(child, start, end));
                }
                Op::Seq { start: first, len } => {
                    let kids = &self.children[first as usize..(first + len) as usize];
                    self.split_seq(kids, text, start, end, &mut spans, scratch);
                    for &(child, l, r) in spans.iter().rev() {
                        stack.push(Frame::Node(child, l, r));
                    }
                }
                Op::Repeat { item, min, max } => {
                    spans.clear();
                    match self.lengths[item as usize] {
                        // Every repetition spans `n` bytes: the split is forced.
                        (n, m) if n == m && n > 0 => {
                            // A terminal (or a reference to one) is emitted now rather
                            // than pushed and popped next: per byte of a field, the
                            // frames cost most. Whether it is, the first repetition tells.
                            let mut direct = true;
                            for l in (start..end).step_by(n as usize) {
                                let span = &text[l..l + n as usize];
                                if !(direct && self.emit_terminal(item, span, sink)) {
                                    direct = false;
                                    spans.push((item, l, l + n as usize));
                                }
                            }
                        }
                        // The search stops at the first count reaching the minimum.
                        (0, 0) => spans.extend((0..min).map(|_| (item, start, start))),
                        _ if self
                            .split_by_first_bytes(item, text, start, end, min, max, &mut spans) => {
                        }
                        _ => self.split(
                            text,
                            start,
                            end,
                            min,
                            Some(max),
                            |_| item,
                            &mut spans,
                            scratch,
                        ),
                    }
                    for &(child, l, r) in spans.iter().rev() {
                        stack.push(Frame::Node(child, l, r));
                    }
                }
                Op::Literal | Op::Regex => unreachable!("terminals handled above"),
            }
        }
        scratch.frames = stack;
        scratch.spans = spans;
    }

    /// Emits the subtree of `node` over `span` if `node` is a terminal or a reference to
    /// one (directly: cheaper than a frame, a lookup and a graft); whether it did.
    #[inline(always)]
    fn emit_terminal<S: TreeSink>(&self, node: u32, span: &[u8], sink: &mut S) -> bool {
        let expr = ExprId::from_index(node as usize);
        match self.ops[node as usize] {
            Op::Literal | Op::Regex => sink.terminal(expr, span),
            Op::Ref { body } if matches!(self.ops[body as usize], Op::Literal | Op::Regex) => {
                sink.open(expr);
                sink.terminal(ExprId::from_index(body as usize), span);
                sink.close();
            }
            _ => return false,
        }
        true
    }

    /// Splits `text[start..end]` among repetitions of `item` (at least `min`, at most
    /// `max`) if the first byte of each repetition tells its length (`item` is never
    /// empty, and all its derivations that start with that byte are that long: a UTF-8
    /// character, a JSON string character other than an escape). The split is then the
    /// only one, so it is the one the search would find, found without running DFAs.
    /// `false`, with `spans` empty, if some byte does not tell.
    #[allow(clippy::too_many_arguments)]
    fn split_by_first_bytes(
        &self,
        item: u32,
        text: &[u8],
        start: usize,
        end: usize,
        min: u32,
        max: Option<u32>,
        spans: &mut Vec<(u32, usize, usize)>,
    ) -> bool {
        if self.lengths[item as usize].0 == 0 {
            return false;
        }
        let lengths = self.lengths_by_first_byte[item as usize].get_or_init(|| {
            self.matcher(item)
                .map(crate::terminal::RegexMatcher::length_by_first_byte)
        });
        let Some(lengths) = lengths else {
            return false;
        };
        let mut at = start;
        while at < end {
            let len = usize::from(lengths[usize::from(text[at])]);
            if len == 0 || at + len > end {
                spans.clear();
                return false;
            }
            spans.push((item, at, at + len));
            at += len;
        }
        let count = spans.len() as u32;
        if count < min || max.is_some_and(|max| count > max) {
            spans.clear();
            return false;
        }
        true
    }

    /// The first of the alternatives `children[first..first + len]` that derives
    /// `text[start..end]`; one of them does. Alternatives whose lengths or first bytes
    /// rule the span out are passed over without running their DFAs, and the last one
    /// left is taken without.
    fn choose(&self, first: u32, len: u32, text: &[u8], start: usize, end: usize) -> u32 {
        let span = (end - start) as u32;
        let mut candidates = [0u32; 8];
        let mut count = 0;
        for i in first..first + len {
            let c = self.children[i as usize];
            let (min, max) = self.lengths[c as usize];
            if span < min
                || span > max
                || (span > 0 && !self.first[c as usize].contains(text[start]))
            {
                continue;
            }
            if count == candidates.len() {
                // Many left: test them in order.
                return (first..first + len)
                    .map(|i| self.children[i as usize])
                    .find(|&c| self.derives(c, text, start, end))
                    .expect("a regular alternation derives its span through one alternative");
            }
            candidates[count] = c;
            count += 1;
        }
        let (last, rest) = candidates[..count]
            .split_last()
            .expect("a regular alternation derives its span through one alternative");
        rest.iter()
            .copied()
            .find(|&c| self.derives(c, text, start, end))
            .unwrap_or(*last)
    }

    /// Splits `text[start..end]` among `kids`, the children of a sequence, into `spans`.
    /// Children of fixed length at either end have forced spans; the search splits what
    /// is left between them (the states it skips each have one way in, so the path it
    /// finds is the same).
    fn split_seq(
        &self,
        kids: &[u32],
        text: &[u8],
        start: usize,
        end: usize,
        spans: &mut Vec<(u32, usize, usize)>,
        scratch: &mut SplitScratch<'_>,
    ) {
        spans.clear();
        let fixed = |c: u32| {
            let (min, max) = self.lengths[c as usize];
            (min == max).then_some(min as usize)
        };
        let (mut i, mut left) = (0, start);
        while let Some(&c) = kids.get(i) {
            let Some(n) = fixed(c) else {
                break;
            };
            spans.push((c, left, left + n));
            left += n;
            i += 1;
        }
        let (mut j, mut right) = (kids.len(), end);
        while j > i {
            let Some(n) = fixed(kids[j - 1]) else {
                break;
            };
            right -= n;
            j -= 1;
        }
        match &kids[i..j] {
            [] => {}
            &[c] => spans.push((c, left, right)),
            middle => {
                let count = middle.len() as u32;
                self.split(
                    text,
                    left,
                    right,
                    count,
                    None,
                    |dot| middle[dot as usize],
                    spans,
                    scratch,
                );
            }
        }
        for &c in &kids[j..] {
            let n = fixed(c).expect("fixed suffix");
            spans.push((c, right, right + n));
            right += n;
        }
    }

    /// The shortest and longest derivations of every node, `(min, max)` (`max` is
    /// `UNBOUNDED` for none; both bound the language, which may be smaller; nodes that
    /// are not regular get `(0, UNBOUNDED)`). Computed once per parser (they guide
    /// token splits); iterative, as regular nodes can nest deeply.
    pub(crate) fn compute_lengths(&mut self) {
        let mut memo = vec![UNKNOWN; self.ops.len()];
        for node in 0..self.ops.len() as u32 {
            self.lengths_into(node, &mut memo);
        }
        self.lengths = memo;
    }

    /// Fills `memo` for `node` and the nodes below it.
    fn lengths_into(&self, node: u32, memo: &mut [(u32, u32)]) {
        let mut stack = vec![(node, false)];
        while let Some((x, ready)) = stack.pop() {
            if memo[x as usize] != UNKNOWN {
                continue;
            }
            if !self.regular[x as usize] {
                // Not below a token (and maybe recursive): no bound claimed.
                memo[x as usize] = (0, UNBOUNDED);
                continue;
            }
            let kids: &[u32] = match &self.ops[x as usize] {
                Op::Ref { body } | Op::Operand { body } => std::slice::from_ref(body),
                Op::Seq { start, len } | Op::Alt { start, len } => {
                    &self.children[*start as usize..(*start + *len) as usize]
                }
                Op::Repeat { item, .. } => std::slice::from_ref(item),
                Op::Literal | Op::Regex => &[],
            };
            if !ready {
                stack.push((x, true));
                stack.extend(
                    kids.iter()
                        .filter(|&&c| memo[c as usize] == UNKNOWN)
                        .map(|&c| (c, false)),
                );
                continue;
            }
            let bound = |n: u64| u32::try_from(n).unwrap_or(UNBOUNDED);
            let max_of = |m: u32| {
                if m == UNBOUNDED {
                    u64::MAX
                } else {
                    u64::from(m)
                }
            };
            memo[x as usize] = match &self.ops[x as usize] {
                Op::Literal | Op::Regex => {
                    match self.grammar.expr(ExprId::from_index(x as usize)) {
                        Expr::Literal(bytes) => {
                            (bound(bytes.len() as u64), bound(bytes.len() as u64))
                        }
                        Expr::Regex(r) => {
                            let props = r.hir.properties();
                            (
                                props.minimum_len().map_or(0, |n| bound(n as u64)),
                                props.maximum_len().map_or(UNBOUNDED, |n| bound(n as u64)),
                            )
                        }
                        _ => (0, UNBOUNDED),
                    }
                }
                Op::Ref { body } | Op::Operand { body } => memo[*body as usize],
                Op::Seq { .. } => kids.iter().fold((0, 0), |(lo, hi), &c| {
                    let (a, b) = memo[c as usize];
                    (
                        bound(u64::from(lo) + u64::from(a)),
                        bound(max_of(hi).saturating_add(max_of(b))),
                    )
                }),
                Op::Alt { .. } => kids.iter().fold((UNBOUNDED, 0), |(lo, hi), &c| {
                    let (a, b) = memo[c as usize];
                    (lo.min(a), hi.max(b))
                }),
                Op::Repeat { item, min, max } => {
                    let (a, b) = memo[*item as usize];
                    let hi = match max {
                        _ if b == 0 => 0,
                        None => UNBOUNDED,
                        Some(m) => bound(u64::from(*m).saturating_mul(max_of(b))),
                    };
                    (bound(u64::from(*min) * u64::from(a)), hi)
                }
            };
        }
    }

    /// Splits `text[start..end]` among the children of a sequence (`repeat: None`, `count`
    /// children) or the repetitions of an item (`repeat: Some(max)`, at least `count`),
    /// by a forward search over `(children matched, position)`. Appends to `spans` in
    /// order.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        count: u32,
        repeat: Option<Option<u32>>,
        child_at: impl Fn(u32) -> u32,
        spans: &mut Vec<(u32, usize, usize)>,
        scratch: &mut SplitScratch<'_>,
    ) {
        // For unbounded repetitions, counts beyond the minimum are all alike.
        let cap = match repeat {
            None => count,
            Some(Some(max)) => max,
            Some(None) => count,
        };
        let done = |dot: u32, pos: usize| {
            pos == end
                && (if repeat.is_some() {
                    dot >= count
                } else {
                    dot == count
                })
        };
        let can_step = |dot: u32| match repeat {
            None => dot < count,
            Some(Some(max)) => dot < max,
            Some(None) => true,
        };
        let next_dot = |dot: u32| match repeat {
            Some(None) => (dot + 1).min(cap),
            _ => dot + 1,
        };
        // An end whose next byte nothing after `child` can start with is dropped: no path
        // through its state reaches the goal, so skipping it changes no path found.
        let keep = |child: u32| {
            let follow = &self.follow[child as usize];
            move |e: usize| e == end || follow.contains(text[e])
        };
        // First a walk, while each state reached has one way on (a record or field ends
        // where the next byte says, `-` is followed by a digit): then the search below
        // would reach the same states, in the same order, and find the same path.
        let base = spans.len();
        let (mut dot, mut pos) = (0u32, start);
        loop {
            if done(dot, pos) {
                return;
            }
            if !can_step(dot) {
                break;
            }
            let child = child_at(dot);
            self.ends_where(child, text, pos, end, &mut scratch.ends, keep(child));
            let next = next_dot(dot);
            let mut ways = scratch.ends.iter().filter(|&&e| next != dot || e != pos);
            let (Some(&e), None) = (ways.next(), ways.next()) else {
                break;
            };
            spans.push((child, pos, e));
            (dot, pos) = (next, e);
        }
        spans.truncate(base);
        // States `(dot, position)`, numbered densely; the predecessor of each state
        // reached, `NONE` for not yet reached.
        let width = end - start + 1;
        let state = |dot: u32, pos: usize| dot as usize * width + (pos - start);
        let previous = &mut scratch.previous;
        previous.clear();
        previous.resize((cap as usize + 1) * width, NONE);
        let queue = &mut scratch.queue;
        queue.clear();
        queue.push_back((0u32, start));
        previous[state(0, start)] = START;
        let ends = &mut scratch.ends;
        let mut goal = None;
        while let Some((dot, pos)) = queue.pop_front() {
            if done(dot, pos) {
                goal = Some((dot, pos));
                break;
            }
            if !can_step(dot) {
                continue;
            }
            let child = child_at(dot);
            self.ends_where(child, text, pos, end, ends, keep(child));
            let next = next_dot(dot);
            for &e in ends.iter() {
                if next == dot && e == pos {
                    continue; // an empty repetition past the minimum changes nothing
                }
                let slot = &mut previous[state(next, e)];
                if *slot == NONE {
                    *slot = state(dot, pos) as u32;
                    queue.push_back((next, e));
                }
            }
        }
        let (mut dot, mut pos) = goal.expect("a regular node derives its span");
        loop {
            let prev = previous[state(dot, pos)];
            if prev == START {
                break;
            }
            let (prev_dot, prev_pos) = (
                (prev as usize / width) as u32,
                prev as usize % width + start,
            );
            spans.push((child_at(prev_dot), prev_pos, pos));
            (dot, pos) = (prev_dot, prev_pos);
        }
        spans[base..].reverse();
    }
}

#[cfg(test)]
mod phrase_tests {
    use crate::{ParseConfig, Parser};
    use thicket_grammar::{Expr, load_spec_text};

    const SPEC: &str = "<start> ::= <pair> (\",\" <pair>)*\n\
                        <pair> ::= <word> \"=\" <word>\n\
                        <word> ::= r\"[a-z]+\"\n";

    /// The ids of the bodies of `<start>`, `<pair>` and `<word>`, and whether each is
    /// regular in `parser`.
    fn regular_bodies(parser: &Parser<'_>) -> Vec<bool> {
        let g = parser.grammar;
        ["start", "pair", "word"]
            .iter()
            .map(|n| parser.regular[g.rule(g.symbol(n).unwrap()).body.index()])
            .collect()
    }

    #[test]
    fn phrase_rules_are_parsed_by_their_parts_with_the_same_trees() {
        let plain = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        let mut marked = plain.clone();
        marked.set_phrase(marked.symbol("pair").unwrap());
        let (p, m) = (
            Parser::new(&plain, ParseConfig::default()).unwrap(),
            Parser::new(&marked, ParseConfig::default()).unwrap(),
        );
        // Without phrases the whole grammar is one token; with `<pair>` a phrase,
        // `<start>` that uses it is not, while `<pair>`'s own body (over tokens only)
        // and `<word>` stay tokens.
        assert_eq!(regular_bodies(&p), [true, true, true]);
        assert_eq!(regular_bodies(&m), [false, true, true]);
        let start_body = marked.rule(marked.symbol("start").unwrap()).body;
        let first = marked.expr(start_body).children()[0];
        assert!(!m.regular[first.index()], "the reference to <pair>");
        // The `"="` literal and the `<word>` references inside a phrase stay tokens.
        let pair_body = marked.rule(marked.symbol("pair").unwrap()).body;
        for &child in marked.expr(pair_body).children() {
            assert!(m.regular[child.index()], "{}", marked.display_expr(child));
            assert!(matches!(
                marked.expr(child),
                Expr::Ref(_) | Expr::Literal(_)
            ));
        }
        for input in ["a=b", "a=b,cd=e,f=g"] {
            let (tp, tm) = (p.parse(input.as_bytes()), m.parse(input.as_bytes()));
            assert_eq!(
                tp.unwrap().tree().to_sexp(&plain),
                tm.unwrap().tree().to_sexp(&marked),
                "{input}"
            );
        }
        for input in ["a=", "a=b,", "=b", "a=b;c=d"] {
            assert!(m.recognize(input.as_bytes()).is_err(), "{input}");
        }
    }
}
