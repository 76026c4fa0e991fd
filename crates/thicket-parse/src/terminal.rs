//! Matching terminals at a position: literals by comparison, regex terminals by walking
//! an anchored DFA over the input, reporting every end at which the regex matches (a
//! general parser needs all of them, not just the longest).

use regex_automata::Anchored;
use regex_automata::dfa::{Automaton, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_syntax::hir::Hir;

/// Largest DFA built for one regex terminal.
const DFA_SIZE_LIMIT: usize = 16 << 20;

/// An anchored DFA for one regex terminal.
#[derive(Clone, Debug)]
pub struct RegexMatcher {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
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
        Ok(RegexMatcher { dfa, start })
    }

    /// Calls `found(end)` for every `end` (ascending) such that `text[at..end]` matches.
    pub fn match_ends(&self, text: &[u8], at: usize, mut found: impl FnMut(usize)) {
        // DFA match states are entered one byte after the match ends.
        let mut state = self.start;
        for (offset, &byte) in text[at..].iter().enumerate() {
            state = self.dfa.next_state(state, byte);
            if self.dfa.is_match_state(state) {
                found(at + offset);
            }
            if self.dfa.is_dead_state(state) {
                return;
            }
        }
        if self.dfa.is_match_state(self.dfa.next_eoi_state(state)) {
            found(text.len());
        }
    }

    /// Whether some non-empty match starts with `byte`.
    pub fn can_start_with(&self, byte: u8) -> bool {
        !self
            .dfa
            .is_dead_state(self.dfa.next_state(self.start, byte))
    }

    /// Whether the whole of `span` matches.
    pub fn matches_exactly(&self, span: &[u8]) -> bool {
        let mut state = self.start;
        for &byte in span {
            state = self.dfa.next_state(state, byte);
            if self.dfa.is_dead_state(state) {
                return false;
            }
        }
        self.dfa.is_match_state(self.dfa.next_eoi_state(state))
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
}
