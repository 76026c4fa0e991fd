//! Matching terminals at a position: literals by comparison, regex terminals by walking
//! an anchored DFA over the input, reporting every end at which the regex matches (a
//! general parser needs all of them, not just the longest).

use regex_automata::Anchored;
use regex_automata::dfa::{Automaton, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_syntax::hir::Hir;
use std::sync::Arc;
use thicket_grammar::TokenMatch;

/// Largest DFA built for one regex terminal.
const DFA_SIZE_LIMIT: usize = 16 << 20;

/// Longest match `RegexMatcher::length_by_first_byte` reports.
const MAX_FORCED_LENGTH: u8 = 16;

/// Most states `RegexMatcher::length_by_first_byte` follows at one length.
const MAX_FORCED_STATES: usize = 32;

/// Most states of a DFA copied into a `Table` (256 transitions of 4 bytes each).
const MAX_TABLE_STATES: usize = 1024;

/// An anchored DFA for one regex terminal. Cloning it shares the DFA.
#[derive(Clone, Debug)]
pub struct RegexMatcher {
    automaton: Arc<Compiled>,
    /// Which ends count where several do ([`RegexMatcher::for_token`]); all if `None`.
    only: Option<TokenMatch>,
}

/// What a [`RegexMatcher`] shares with its clones: the DFA and its start.
#[derive(Debug)]
struct Compiled {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
    /// The same DFA as a flat table for `match_ends`, unless it has too many states.
    table: Option<Table>,
}

/// Matchers built before, by regex, so that a regex met again is not determinized
/// again: grammars repeat a rule's regex under other names (ANTLR's Z grammar has 71
/// tokens defined as `NAME`, whose DFA over Unicode letter classes takes half a second
/// to build), and a grammar's analyses ask for the same languages more than once.
/// Owned by whoever builds the matchers (a lexer, a parser): no process-wide state.
#[derive(Debug, Default)]
pub struct RegexCache {
    /// By the regex's text; the regexes themselves are compared too, so that two
    /// regexes printed alike are never mistaken for each other.
    built: rustc_hash::FxHashMap<String, Vec<(Hir, Built)>>,
}

/// A matcher, or why the regex is too large for one.
type Built = Result<RegexMatcher, String>;

impl RegexCache {
    /// The matcher of `hir` (its whole language, as [`RegexMatcher::new`]), built on
    /// the first request for it.
    pub fn matcher(&mut self, hir: &Hir) -> Result<RegexMatcher, String> {
        let key = hir.to_string();
        if let Some(found) = self.get(&key, hir) {
            return found;
        }
        let built = RegexMatcher::new(hir);
        self.insert(key, hir, built.clone());
        built
    }

    /// The matcher of `hir` if it was built before; `key` is `hir`'s text.
    pub(crate) fn get(&self, key: &str, hir: &Hir) -> Option<Built> {
        self.built
            .get(key)?
            .iter()
            .find(|(h, _)| h == hir)
            .map(|(_, m)| m.clone())
    }

    /// Records the matcher built for `hir`, whose text is `key`.
    pub(crate) fn insert(&mut self, key: String, hir: &Hir, built: Built) {
        let same = self.built.entry(key).or_default();
        if !same.iter().any(|(h, _)| h == hir) {
            same.push((hir.clone(), built));
        }
    }
}

/// A DFA's transitions as one flat table, for the tightest scanning loop: a state is its
/// index times 256, and the next state on byte `b` is `trans[state + b]`. The dead state
/// is 0 and match states come right after it, so one comparison tells the usual state
/// (neither) apart.
#[derive(Clone, Debug)]
struct Table {
    trans: Vec<u32>,
    start: u32,
    /// The largest dead or match state.
    max_special: u32,
    /// For each state (by index): whether the input may end after it.
    eoi_match: Vec<bool>,
}

impl Table {
    /// Copies the states reachable from `start`, or `None` if there are too many.
    fn new(dfa: &dense::DFA<Vec<u32>>, start: StateID) -> Option<Table> {
        let mut states = vec![start];
        let mut seen: rustc_hash::FxHashSet<StateID> = Default::default();
        seen.insert(start);
        let mut at = 0;
        while at < states.len() {
            let state = states[at];
            at += 1;
            for b in 0..=255u8 {
                let next = dfa.next_state(state, b);
                if seen.insert(next) {
                    if states.len() == MAX_TABLE_STATES {
                        return None;
                    }
                    states.push(next);
                }
            }
        }
        // Renumber: the dead state (whether reached or not), match states, the rest.
        let dead = states.iter().copied().find(|&s| dfa.is_dead_state(s));
        let mut order: Vec<Option<StateID>> = vec![dead];
        order.extend(
            states
                .iter()
                .copied()
                .filter(|&s| dfa.is_match_state(s))
                .map(Some),
        );
        let max_special = ((order.len() - 1) * 256) as u32;
        order.extend(
            states
                .iter()
                .copied()
                .filter(|&s| !dfa.is_match_state(s) && !dfa.is_dead_state(s))
                .map(Some),
        );
        let mut number: rustc_hash::FxHashMap<StateID, u32> = Default::default();
        for (i, s) in order.iter().enumerate() {
            if let Some(s) = s {
                number.insert(*s, (i * 256) as u32);
            }
        }
        let mut trans = vec![0u32; order.len() * 256];
        let mut eoi_match = vec![false; order.len()];
        for (i, s) in order.iter().enumerate() {
            let Some(s) = *s else { continue };
            if dfa.is_dead_state(s) {
                continue; // all zero: stays dead
            }
            for b in 0..=255u8 {
                trans[i * 256 + usize::from(b)] = number[&dfa.next_state(s, b)];
            }
            eoi_match[i] = dfa.is_match_state(dfa.next_eoi_state(s));
        }
        Some(Table {
            trans,
            start: number[&start],
            max_special,
            eoi_match,
        })
    }
}

impl RegexMatcher {
    /// Builds the matcher, or says why the regex is too large.
    pub fn new(hir: &Hir) -> Result<RegexMatcher, String> {
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().shrink(true))
            .build_from_hir(hir)
            .map_err(|e| e.to_string())?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    // Every match, not just the leftmost-first one: a general parser
                    // needs all ends (`a|ab` on "ab" ends at 1 and at 2).
                    .match_kind(regex_automata::MatchKind::All)
                    .start_kind(regex_automata::dfa::StartKind::Anchored)
                    .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                    .determinize_size_limit(Some(DFA_SIZE_LIMIT)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| e.to_string())?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .map_err(|e| e.to_string())?;
        let table = Table::new(&dfa, start);
        Ok(RegexMatcher {
            automaton: Arc::new(Compiled { dfa, start, table }),
            only: None,
        })
    }

    /// The DFA.
    #[inline]
    fn dfa(&self) -> &dense::DFA<Vec<u32>> {
        &self.automaton.dfa
    }

    /// The DFA's anchored start state.
    #[inline]
    fn start(&self) -> StateID {
        self.automaton.start
    }

    /// This matcher for a lexer's token (see [`RegexMatcher::for_token`]), sharing its
    /// DFA.
    pub fn taking(&self, how: TokenMatch) -> RegexMatcher {
        RegexMatcher {
            automaton: Arc::clone(&self.automaton),
            only: Some(how),
        }
    }

    /// The matcher of a lexer's token (see `thicket_grammar::Grammar::set_token_match`):
    /// at each position only its shortest matches (the empty text if the regex matches
    /// it, and the first non-empty match: a non-greedy `/\*(?s:.)*\*/` ends at the
    /// first `*/`) or only its longest match (`[0-9]+` reads `123` whole). Scanning
    /// ([`RegexMatcher::match_ends`]) and [`RegexMatcher::matches_at`] honour it; the
    /// analyses of the grammar (disjointness, unique splits, lengths by first byte)
    /// read the regex's whole language, a superset, so what they conclude still holds.
    pub fn for_token(hir: &Hir, how: TokenMatch) -> Result<RegexMatcher, String> {
        Ok(RegexMatcher::new(hir)?.taking(how))
    }

    /// Calls `found(end)` for every `end` (ascending) such that `text[at..end]` matches
    /// (for a token's matcher, the ends it takes: see [`RegexMatcher::for_token`]).
    #[inline]
    pub fn match_ends(&self, text: &[u8], at: usize, mut found: impl FnMut(usize)) {
        if self.only == Some(TokenMatch::Longest) {
            let mut last = None;
            self.all_match_ends(text, at, |e| last = Some(e));
            if let Some(e) = last {
                found(e);
            }
            return;
        }
        self.all_match_ends(text, at, found);
    }

    /// `match_ends` for every end (only cut after the first non-empty one for a
    /// shortest-match token).
    #[inline]
    fn all_match_ends(&self, text: &[u8], at: usize, mut found: impl FnMut(usize)) {
        let shortest = self.only == Some(TokenMatch::Shortest);
        // DFA match states are entered one byte after the match ends.
        if let Some(table) = &self.automaton.table {
            let mut state = table.start;
            for (offset, &byte) in text[at..].iter().enumerate() {
                state = table.trans[state as usize + usize::from(byte)];
                if state <= table.max_special {
                    if state == 0 {
                        return;
                    }
                    found(at + offset);
                    if shortest && offset > 0 {
                        return;
                    }
                }
            }
            if table.eoi_match[state as usize / 256] {
                found(text.len());
            }
            return;
        }
        let mut state = self.start();
        for (offset, &byte) in text[at..].iter().enumerate() {
            state = self.dfa().next_state(state, byte);
            if self.dfa().is_match_state(state) {
                found(at + offset);
                if shortest && offset > 0 {
                    return;
                }
            }
            if self.dfa().is_dead_state(state) {
                return;
            }
        }
        if self.dfa().is_match_state(self.dfa().next_eoi_state(state)) {
            found(text.len());
        }
    }

    /// For each byte, whether some match starts with it (a match of the empty string
    /// starts with no byte).
    pub fn first_bytes(&self) -> [bool; 256] {
        let mut first = [false; 256];
        for (b, can) in first.iter_mut().enumerate() {
            *can = !self
                .dfa()
                .is_dead_state(self.dfa().next_state(self.start(), b as u8));
        }
        first
    }

    /// For each byte, the length of every match that starts with it, if they all have
    /// the same length (at most `MAX_FORCED_LENGTH`); 0 where they do not, or where no
    /// match starts with the byte. (A UTF-8 character: its lead byte tells its length.)
    pub(crate) fn length_by_first_byte(&self) -> Box<[u8; 256]> {
        // The bytes of one class take the DFA through the same states: one of each is
        // followed.
        let classes = self.dfa().byte_classes();
        let representatives: Vec<u8> = classes
            .representatives(0..=255u8)
            .filter_map(|unit| unit.as_u8())
            .collect();
        let mut by_class = [0u8; 256];
        let mut frontier: Vec<StateID> = Vec::new();
        let mut next: Vec<StateID> = Vec::new();
        for &first in &representatives {
            let state = self.dfa().next_state(self.start(), first);
            if self.dfa().is_dead_state(state) {
                continue;
            }
            // Breadth first over the states after `len` bytes, noting the lengths at
            // which the input may end in a match; given up on a second length, a long
            // or unbounded one, or too many states.
            frontier.clear();
            frontier.push(state);
            let mut found = None;
            let mut len = 1;
            let forced = loop {
                if frontier
                    .iter()
                    .any(|&s| self.dfa().is_match_state(self.dfa().next_eoi_state(s)))
                {
                    if found.is_some() {
                        break None;
                    }
                    found = Some(len);
                }
                next.clear();
                for &s in &frontier {
                    for &b in &representatives {
                        let t = self.dfa().next_state(s, b);
                        if !self.dfa().is_dead_state(t) && !next.contains(&t) {
                            next.push(t);
                        }
                    }
                }
                if next.is_empty() {
                    break found;
                }
                if len == MAX_FORCED_LENGTH || next.len() > MAX_FORCED_STATES {
                    break None;
                }
                std::mem::swap(&mut frontier, &mut next);
                len += 1;
            };
            by_class[usize::from(classes.get(first))] = forced.unwrap_or(0);
        }
        let mut lengths = Box::new([0u8; 256]);
        for b in 0..=255u8 {
            lengths[usize::from(b)] = by_class[usize::from(classes.get(b))];
        }
        lengths
    }

    /// Whether the bytes read into `state` are a match.
    fn accepts(&self, state: StateID) -> bool {
        self.dfa().is_match_state(self.dfa().next_eoi_state(state))
    }

    /// One byte of each class (bytes of one class take the DFA through the same states).
    fn representatives(&self) -> Vec<u8> {
        self.dfa()
            .byte_classes()
            .representatives(0..=255u8)
            .filter_map(|unit| unit.as_u8())
            .collect()
    }

    /// The bytes `c` by which some match `w` goes on to a longer match `w c ...`: where
    /// a part following this one must not start if the split between them is to be
    /// unique. `None` if the DFA has more than `limit` states to look at.
    pub(crate) fn extensions(&self, limit: usize) -> Option<crate::compile::ByteSet> {
        let classes = self.representatives();
        // The states reachable from the start, with their successors.
        let mut states = vec![self.start()];
        let mut number: rustc_hash::FxHashMap<StateID, usize> = Default::default();
        number.insert(self.start(), 0);
        let mut edges: Vec<(usize, u8, usize)> = Vec::new();
        let mut at = 0;
        while at < states.len() {
            let s = states[at];
            for &b in &classes {
                let t = self.dfa().next_state(s, b);
                if self.dfa().is_dead_state(t) {
                    continue;
                }
                let next = *number.entry(t).or_insert_with(|| {
                    states.push(t);
                    states.len() - 1
                });
                edges.push((at, b, next));
            }
            if states.len() > limit {
                return None;
            }
            at += 1;
        }
        // Those from which a match can still be reached (the DFA reports matches a byte
        // late, so a state after a match may be live for one step and lead nowhere).
        let mut live: Vec<bool> = states.iter().map(|&s| self.accepts(s)).collect();
        loop {
            let mut changed = false;
            for &(from, _, to) in &edges {
                if live[to] && !live[from] {
                    live[from] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut out = crate::compile::ByteSet::default();
        let dfa_classes = self.dfa().byte_classes();
        for &(from, b, to) in &edges {
            if live[to] && self.accepts(states[from]) {
                for c in 0..=255u8 {
                    if dfa_classes.get(c) == dfa_classes.get(b) {
                        out.insert(c);
                    }
                }
            }
        }
        Some(out)
    }

    /// Whether every text that is a match of `self` followed by a match of `rest`
    /// splits in one way only. It does not if some match `a` of `self` goes on by a
    /// non-empty `x` to a longer match `a x` where `x b` and `b` both match `rest`.
    /// `None` if that takes more pairs of states than are left in `budget`.
    pub(crate) fn splits_uniquely_before(
        &self,
        rest: &RegexMatcher,
        budget: &mut usize,
    ) -> Option<bool> {
        let take = |budget: &mut usize| budget.checked_sub(1).map(|left| *budget = left);
        // The matches of `self`: its accepting states.
        let mut states = vec![self.start()];
        let mut seen: rustc_hash::FxHashSet<StateID> = Default::default();
        seen.insert(self.start());
        let mut at = 0;
        while at < states.len() {
            let s = states[at];
            at += 1;
            for byte in 0..=255u8 {
                let t = self.dfa().next_state(s, byte);
                if !self.dfa().is_dead_state(t) && seen.insert(t) {
                    take(budget)?;
                    states.push(t);
                }
            }
        }
        // Read `x` in both from there; where `self` accepts again, `rest` is in state `q`
        // after `x`.
        let mut pairs: rustc_hash::FxHashSet<(StateID, StateID, bool)> = Default::default();
        let mut stack: Vec<(StateID, StateID, bool)> = states
            .iter()
            .filter(|&&s| self.accepts(s))
            .map(|&s| (s, rest.start(), false))
            .collect();
        pairs.extend(stack.iter().copied());
        let mut after_x: rustc_hash::FxHashSet<(StateID, StateID)> = Default::default();
        while let Some((a, b, moved)) = stack.pop() {
            if moved && self.accepts(a) && after_x.insert((b, rest.start())) {
                take(budget)?;
            }
            for byte in 0..=255u8 {
                let (x, y) = (
                    self.dfa().next_state(a, byte),
                    rest.dfa().next_state(b, byte),
                );
                if self.dfa().is_dead_state(x) || rest.dfa().is_dead_state(y) {
                    continue;
                }
                if pairs.insert((x, y, true)) {
                    take(budget)?;
                    stack.push((x, y, true));
                }
            }
        }
        // Some `b` that `rest` matches both from `q` and from its start?
        let mut stack: Vec<(StateID, StateID)> = after_x.iter().copied().collect();
        while let Some((q, r)) = stack.pop() {
            if rest.accepts(q) && rest.accepts(r) {
                return Some(false);
            }
            for byte in 0..=255u8 {
                let (x, y) = (
                    rest.dfa().next_state(q, byte),
                    rest.dfa().next_state(r, byte),
                );
                if rest.dfa().is_dead_state(x) || rest.dfa().is_dead_state(y) {
                    continue;
                }
                if after_x.insert((x, y)) {
                    take(budget)?;
                    stack.push((x, y));
                }
            }
        }
        Some(true)
    }

    /// Whether no text matches both `self` and `other`; `None` if that takes more pairs
    /// of states than are left in `budget` (each pair looked at is taken from it).
    pub(crate) fn disjoint(&self, other: &RegexMatcher, budget: &mut usize) -> Option<bool> {
        self.no_pair_where(other, budget, false, |a, b| a && b)
    }

    /// Whether every match of `self` is a match of `other` (their regexes' languages);
    /// `None` if that takes more pairs of states than are left in `budget`.
    pub fn within(&self, other: &RegexMatcher, budget: &mut usize) -> Option<bool> {
        if Arc::ptr_eq(&self.automaton, &other.automaton) {
            return Some(true);
        }
        // `other` dead is followed too: `self` may still reach a match.
        self.no_pair_where(other, budget, true, |a, b| a && !b)
    }

    /// Walks the pairs of states that one text takes `self` and `other` to: whether
    /// none has `bad(self accepts, other accepts)`; `None` if that takes more pairs than
    /// are left in `budget`. A pair where `self` is dead is never followed, nor one where
    /// `other` is, unless `through_other_dead`.
    fn no_pair_where(
        &self,
        other: &RegexMatcher,
        budget: &mut usize,
        through_other_dead: bool,
        bad: impl Fn(bool, bool) -> bool,
    ) -> Option<bool> {
        let mut seen: rustc_hash::FxHashSet<(StateID, StateID)> = Default::default();
        let mut stack = vec![(self.start(), other.start())];
        seen.insert((self.start(), other.start()));
        while let Some((a, b)) = stack.pop() {
            if bad(self.accepts(a), other.accepts(b)) {
                return Some(false);
            }
            for byte in 0..=255u8 {
                let x = self.dfa().next_state(a, byte);
                let y = other.dfa().next_state(b, byte);
                if self.dfa().is_dead_state(x)
                    || (!through_other_dead && other.dfa().is_dead_state(y))
                {
                    continue;
                }
                if seen.insert((x, y)) {
                    *budget = budget.checked_sub(1)?;
                    stack.push((x, y));
                }
            }
        }
        Some(true)
    }

    /// A shortest text that matches (the regex's language, as in
    /// [`RegexMatcher::matches_exactly`]), or `None` if none does.
    pub fn shortest_match(&self) -> Option<Vec<u8>> {
        // Breadth first from the start, each state with the state and byte it was
        // first reached from.
        let mut reached: rustc_hash::FxHashMap<StateID, Option<(StateID, u8)>> = Default::default();
        reached.insert(self.start(), None);
        let mut queue = std::collections::VecDeque::from([self.start()]);
        while let Some(state) = queue.pop_front() {
            if self.accepts(state) {
                let mut text = Vec::new();
                let mut at = state;
                while let Some(&Some((from, byte))) = reached.get(&at) {
                    text.push(byte);
                    at = from;
                }
                text.reverse();
                return Some(text);
            }
            for byte in 0..=255u8 {
                let next = self.dfa().next_state(state, byte);
                if !self.dfa().is_dead_state(next) && !reached.contains_key(&next) {
                    reached.insert(next, Some((state, byte)));
                    queue.push_back(next);
                }
            }
        }
        None
    }

    /// How many bytes of `text[at..]` begin some match: `at` plus this is the first byte
    /// no match can continue with (or the end of `text`). For explaining rejections; one
    /// DFA step per byte, and a look at every byte's step where a match ended.
    pub fn viable_prefix_len(&self, text: &[u8], at: usize) -> usize {
        let mut state = self.start();
        for (offset, &byte) in text[at..].iter().enumerate() {
            state = self.dfa().next_state(state, byte);
            if self.dfa().is_dead_state(state) {
                return offset;
            }
            // Matches are reported one byte late: a match state says `text[at..at +
            // offset]` matched, not that the byte just read continues a match.
            if self.dfa().is_match_state(state)
                && ((self.only == Some(TokenMatch::Shortest) && offset > 0)
                    || !self.continues(state))
            {
                return offset;
            }
        }
        text.len() - at
    }

    /// Whether the bytes read into `state` (a match state) begin some match: they match
    /// themselves, or some byte leads on.
    fn continues(&self, state: StateID) -> bool {
        self.dfa().is_match_state(self.dfa().next_eoi_state(state))
            || (0..=255u8).any(|b| !self.dfa().is_dead_state(self.dfa().next_state(state, b)))
    }

    /// Whether some non-empty match starts with `byte`.
    pub fn can_start_with(&self, byte: u8) -> bool {
        !self
            .dfa()
            .is_dead_state(self.dfa().next_state(self.start(), byte))
    }

    /// Whether the whole of `span` matches (the regex's language: a token's matcher
    /// may take a shorter or longer end, see [`RegexMatcher::matches_at`]).
    pub fn matches_exactly(&self, span: &[u8]) -> bool {
        let mut state = self.start();
        for &byte in span {
            state = self.dfa().next_state(state, byte);
            if self.dfa().is_dead_state(state) {
                return false;
            }
        }
        self.dfa().is_match_state(self.dfa().next_eoi_state(state))
    }

    /// Whether `text[start..end]` is a match that scanning `text` at `start` takes:
    /// for a token's matcher, one of the ends it takes there.
    pub fn matches_at(&self, text: &[u8], start: usize, end: usize) -> bool {
        match self.only {
            None => self.matches_exactly(&text[start..end]),
            Some(_) => {
                let mut taken = false;
                self.match_ends(text, start, |e| taken |= e == end);
                taken
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(pattern: &str) -> RegexMatcher {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        RegexMatcher::new(&hir).unwrap()
    }

    #[test]
    fn reports_every_match_end() {
        let m = matcher("a*");
        let mut ends = Vec::new();
        m.match_ends(b"xaaab", 1, |e| ends.push(e));
        assert_eq!(ends, vec![1, 2, 3, 4]);
        let mut ends = Vec::new();
        matcher("[0-9]+").match_ends(b"12", 0, |e| ends.push(e));
        assert_eq!(ends, vec![1, 2]);
        assert!(matcher("(?-u:\\xff)+").matches_exactly(&[0xff, 0xff]));
        assert!(!matcher("ab").matches_exactly(b"abc"));
        let mut ends = Vec::new();
        matcher("a|ab|(|q)*").match_ends(b"abq", 0, |e| ends.push(e));
        assert_eq!(ends, vec![0, 1, 2]);
    }

    #[test]
    fn viable_prefixes_end_at_the_first_byte_no_match_continues_with() {
        assert_eq!(matcher("ab|abcd").viable_prefix_len(b"abcx", 0), 3);
        assert_eq!(matcher("ab|abcd").viable_prefix_len(b"abx", 0), 2);
        assert_eq!(matcher("ab").viable_prefix_len(b"xaby", 1), 2);
        assert_eq!(matcher("[0-9]+").viable_prefix_len(b"12", 0), 2);
        assert_eq!(matcher("[0-9]+").viable_prefix_len(b"x", 0), 0);
        assert_eq!(
            matcher(r"a\\u[0-9]{4}").viable_prefix_len(br"a\u12x4", 0),
            5
        );
    }

    /// A token's matcher takes its first end (a non-greedy loop) or its last (longest
    /// match), and accepts no other.
    #[test]
    fn token_matchers_take_the_first_or_the_last_end() {
        let hir = |p: &str| {
            regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(p)
                .unwrap()
        };
        let ends = |m: &RegexMatcher, text: &[u8], at: usize| {
            let mut ends = Vec::new();
            m.match_ends(text, at, |e| ends.push(e));
            ends
        };
        let comment =
            RegexMatcher::for_token(&hir(r"/\*(?s:.)*\*/"), TokenMatch::Shortest).unwrap();
        assert_eq!(ends(&comment, b"x/* a */ b */", 1), vec![8]);
        assert!(comment.matches_at(b"/* a */ b */", 0, 7));
        assert!(!comment.matches_at(b"/* a */ b */", 0, 12));
        assert_eq!(comment.viable_prefix_len(b"/* a */ b */", 0), 7);
        // `.+?`: one character, whatever follows.
        let any = RegexMatcher::for_token(&hir("(?s:.)+"), TokenMatch::Shortest).unwrap();
        assert_eq!(ends(&any, "éab".as_bytes(), 0), vec![2]);
        // The empty match, if any, and then the first non-empty one.
        let star = RegexMatcher::for_token(&hir("a*"), TokenMatch::Shortest).unwrap();
        assert_eq!(ends(&star, b"aaa", 0), vec![0, 1]);
        // Longest: `123` is one number.
        let number = RegexMatcher::for_token(&hir("[0-9]+"), TokenMatch::Longest).unwrap();
        assert_eq!(ends(&number, b"123 4", 0), vec![3]);
        assert!(number.matches_at(b"123 4", 0, 3));
        assert!(!number.matches_at(b"123 4", 0, 2));
        assert!(ends(&number, b"x", 0).is_empty());
        // Without a mark every end is reported.
        assert_eq!(
            ends(&matcher(r"/\*(?s:.)*\*/"), b"/* a */ b */", 0),
            vec![7, 12]
        );
        assert_eq!(ends(&matcher("[0-9]+"), b"123", 0), vec![1, 2, 3]);
    }

    /// A regex met again is not determinized again: the cache hands out the DFA it
    /// built (ANTLR's Z grammar defines 71 tokens as `NAME`, a regex over Unicode
    /// letter classes whose DFA takes half a second to build).
    #[test]
    fn a_regex_met_again_shares_its_dfa() {
        let hir = |p: &str| {
            regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(p)
                .unwrap()
        };
        let mut cache = RegexCache::default();
        let name = cache
            .matcher(&hir(r"[\p{L}_][\p{L}\p{Nd}]*\x{2032}*"))
            .unwrap();
        let again = cache
            .matcher(&hir(r"[\p{L}_][\p{L}\p{Nd}]*\x{2032}*"))
            .unwrap();
        assert!(Arc::ptr_eq(&name.automaton, &again.automaton));
        let other = cache.matcher(&hir(r"[\p{L}_]+")).unwrap();
        assert!(!Arc::ptr_eq(&name.automaton, &other.automaton));
        assert!(again.matches_exactly("Δx1′′".as_bytes()));
        assert!(!again.matches_exactly("1x".as_bytes()));
        assert!(!other.matches_exactly("x1".as_bytes()));
        // A token's matcher made from it shares it too, and takes its own ends.
        let longest = again.taking(TokenMatch::Longest);
        assert!(Arc::ptr_eq(&name.automaton, &longest.automaton));
        let mut ends = Vec::new();
        longest.match_ends("ab c".as_bytes(), 0, |e| ends.push(e));
        assert_eq!(ends, vec![2]);
    }

    /// One language inside another, and a shortest text of each.
    #[test]
    fn tells_whether_every_match_is_a_match_of_another() {
        let name = matcher(r"[a-z_][a-z0-9_]*'*");
        let budget = &mut 10_000;
        assert_eq!(matcher(r"[a-z][a-z0-9]*").within(&name, budget), Some(true));
        assert_eq!(matcher(r"_[a-z]*").within(&name, budget), Some(true));
        assert_eq!(matcher(r"[a-z]+!").within(&name, budget), Some(false));
        assert_eq!(matcher(r"[0-9]+").within(&name, budget), Some(false));
        assert_eq!(name.within(&matcher(r"[a-z]+"), budget), Some(false));
        assert_eq!(name.within(&name.clone(), budget), Some(true));
        assert_eq!(matcher(r"[a-z]+").within(&name, &mut 1), None);
        assert_eq!(name.shortest_match(), Some(b"_".to_vec()));
        assert_eq!(
            matcher(r"ab+|x(yz)+").shortest_match(),
            Some(b"ab".to_vec())
        );
        assert_eq!(matcher(r"[a-z]*").shortest_match(), Some(Vec::new()));
        assert_eq!(matcher(r"(?-u:[^\x00-\xff])").shortest_match(), None);
    }

    /// Token splits take a repetition's first byte as its length only where every match
    /// starting with that byte is that long.
    #[test]
    fn tells_lengths_only_where_the_first_byte_decides() {
        let lengths =
            matcher("[a-w]|[0-9]{3}|x[yz]+|q|qq|\\\\(n|u[0-9]{4})").length_by_first_byte();
        assert_eq!(lengths[usize::from(b'a')], 1);
        assert_eq!(lengths[usize::from(b'5')], 3);
        assert_eq!(lengths[usize::from(b'x')], 0, "x[yz]+ is unbounded");
        assert_eq!(lengths[usize::from(b'q')], 0, "q and qq");
        assert_eq!(lengths[usize::from(b'\\')], 0, "\\n and \\uXXXX");
        assert_eq!(lengths[usize::from(b'#')], 0, "no match starts with #");
        // Unicode scalar values in UTF-8: the lead byte tells the length.
        let utf8 = matcher("[\\x{7F}-\\x{D7FF}\\x{E000}-\\x{10FFFF}]").length_by_first_byte();
        assert_eq!(
            [0x7f, 0xc3, 0xe2, 0xf0, 0x80].map(|b| utf8[b]),
            [1, 2, 3, 4, 0]
        );
    }
}
