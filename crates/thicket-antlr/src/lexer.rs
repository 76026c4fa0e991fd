//! The exact lexer: what an ANTLR-generated lexer does with the lexer rules. At each
//! position, in the current mode, every rule is matched (a DFA over bytes per rule,
//! fragments inlined); the longest match wins, and among equally long matches the rule
//! defined first (implicit literal tokens of a combined grammar come before every lexer
//! rule). A rule with a non-greedy loop is matched by an automaton that stops the loop
//! as ANTLR's does ([`crate::nfa`]): a path through the loop's exit ends the paths of
//! lower priority only, so `'/*' .*? '*/'` ends at the first `*/` and
//! `'"' ('\\"' | .)*? '"'` goes on past an escaped quote. A rule with a semantic predicate
//! before its text (assumed true) loses ties with rules without one: such predicates
//! check the context of a special case (JavaScript's `{this.IsInTemplateString()}? '}'`
//! closing a template expression), and taking them always would shadow the ordinary
//! token. A predicate after some text (JSX's `'<' {this.IsJsxPossible()}?`, the
//! `'let' {this.IsStrictMode()}?` keywords) leaves the rule its place in the order, as
//! ANTLR does with predicates true. A rule that reaches itself through its fragments
//! is not regular: it is matched by an automaton with a stack ([`crate::nfa`]), as is
//! a regular rule whose DFA would pass the size limit; the others by their DFA.
//! Commands: `skip` and channels other than the default one drop the token from the
//! parser's stream, `more` glues its text to the next token,
//! `pushMode`/`popMode`/`mode` switch the rule set. Where no rule matches any text, a
//! rule matching the empty string that leaves the mode makes an empty token.

use crate::nfa;
use crate::syntax::Command;
use crate::translate::{LexRuleSpec, Pattern};
use std::collections::{HashMap, HashSet};
use thicket_parse::{RegexCache, RegexMatcher};

/// Every text `regex` (a lexer rule's pattern) matches, if they are a small finite set:
/// up to a few hundred texts (a class of letters, a case-insensitive keyword).
fn exact_texts(regex: &str) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::Extractor;
    let hir = parse_regex(regex).ok()?;
    let texts = Extractor::new()
        .limit_class(128)
        .limit_total(512)
        .extract(&hir);
    let literals = texts.literals().filter(|_| texts.is_exact())?;
    Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// A lexer rule's regular expression as the translation writes it.
fn parse_regex(regex: &str) -> Result<regex_syntax::hir::Hir, String> {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .nest_limit(1000)
        .build()
        .parse(regex)
        .map_err(|e| e.to_string())
}

/// The automaton of `program`, with the bytes its matches start with.
fn automaton(program: &nfa::Program) -> Matcher {
    Matcher::Automaton(nfa::Matcher::new(program), Box::new(program.first_bytes()))
}

/// A token the parser sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Its type (the token name, or `'lit'` for an implicit literal token).
    pub kind: String,
    /// Byte offsets of its text.
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
}

/// Why the lexer stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// Byte offset where no rule matched, or where the token that popped an empty
    /// mode stack starts.
    pub offset: usize,
    /// The mode it was in.
    pub mode: String,
    /// Whether a `popMode` found no mode to return to: ANTLR's runtimes fail there
    /// (an empty stack exception), so the input is rejected.
    pub empty_stack: bool,
}

impl std::fmt::Display for LexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.empty_stack {
            return write!(
                f,
                "the token of mode {} at byte {} pops an empty mode stack",
                self.mode, self.offset
            );
        }
        write!(
            f,
            "no token of mode {} matches at byte {}",
            self.mode, self.offset
        )
    }
}

/// A lexer rule that never makes a token: see [`Lexer::unreachable_rules`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreachable {
    /// The rule.
    pub rule: String,
    /// Its file and place.
    pub at: (usize, thicket_grammar::Span),
    /// One of its texts.
    pub text: Vec<u8>,
    /// The token type an earlier rule gives that text.
    pub winner: String,
}

struct Rule {
    spec: LexRuleSpec,
    matcher: Matcher,
}

/// How a rule is matched.
enum Matcher {
    /// A regular rule: its DFA.
    Dfa(Box<RegexMatcher>),
    /// A recursive rule, a regular one with a non-greedy loop, or one whose DFA is too
    /// large to build: the automaton with a stack, and the bytes a match can start
    /// with.
    Automaton(nfa::Matcher, Box<[bool; 256]>),
}

impl Matcher {
    /// Calls `found` with the ends of matches from `start` in increasing order, while
    /// it returns `true`; `EOF` matches at the end of `input` if `input_ends`.
    fn match_ends(
        &self,
        input: &[u8],
        start: usize,
        input_ends: bool,
        mut found: impl FnMut(usize) -> bool,
    ) {
        match self {
            Matcher::Dfa(m) => {
                let mut more = true;
                m.match_ends(input, start, |e| {
                    if more {
                        more = found(e);
                    }
                });
            }
            Matcher::Automaton(m, _) => m.match_ends(input, start, input_ends, found),
        }
    }
}

/// The lexer rules whose texts are a small finite set (see [`exact_texts`]).
struct FiniteTexts {
    /// By rule: its texts, or none where they are not such a set.
    texts: Vec<Vec<Vec<u8>>>,
    /// By text: the rules that have it, in priority order.
    holders: HashMap<Vec<u8>, Vec<u32>>,
    /// By rule: the bytes a match can start with, for the rules matched by a DFA
    /// whose texts are not such a set.
    endless_first: Vec<Option<[bool; 256]>>,
}

/// An ANTLR-style lexer built from a grammar's lexer rules.
pub struct Lexer {
    rules: Vec<Rule>,
    /// Mode names; index 0 is the default mode.
    modes: Vec<String>,
    /// By mode, then by the next input byte: the rules of the mode that can match
    /// starting with that byte, in priority order (grammars with a thousand keywords
    /// try a handful at each position).
    candidates: Vec<Vec<Vec<u32>>>,
    /// The rules' texts where they are small finite sets, found on first use.
    finite_texts: std::sync::OnceLock<FiniteTexts>,
}

/// Name of the default mode.
pub const DEFAULT_MODE: &str = "DEFAULT_MODE";

impl Lexer {
    /// Compiles the rules (in priority order), or names the rule whose regex fails.
    pub fn new(specs: Vec<LexRuleSpec>) -> Result<Lexer, Box<(LexRuleSpec, String)>> {
        let mut modes = vec![DEFAULT_MODE.to_string()];
        let mut rules = Vec::new();
        // Rules often repeat another's regex (`PREP : NAME ;`): one DFA for each.
        let mut built = RegexCache::default();
        for spec in specs {
            if let Some(m) = &spec.mode
                && !modes.contains(m)
            {
                modes.push(m.clone());
            }
            let matcher = match &spec.pattern {
                Pattern::Regex(regex) => {
                    let dfa = parse_regex(regex).map(|h| (built.matcher(&h), h));
                    match dfa {
                        Ok((Ok(m), _)) => Matcher::Dfa(Box::new(m)),
                        // Past the DFA's size limit (Scala 3's interpolated strings
                        // after identifiers over Unicode classes): the automaton reads
                        // the same language without determinizing it, more slowly.
                        Ok((Err(e), hir)) => match nfa::Program::from_hir(&hir) {
                            Some(program) => automaton(&program),
                            None => return Err(Box::new((spec, e))),
                        },
                        Err(e) => return Err(Box::new((spec, e))),
                    }
                }
                Pattern::Recursive(program) | Pattern::Priority(program) => automaton(program),
            };
            rules.push(Rule { spec, matcher });
        }
        let candidates = modes
            .iter()
            .enumerate()
            .map(|(mode, name)| {
                let mut by_byte = vec![Vec::new(); 256];
                for (i, rule) in rules.iter().enumerate() {
                    let in_mode = match &rule.spec.mode {
                        None => mode == 0,
                        Some(m) => m == name,
                    };
                    if !in_mode {
                        continue;
                    }
                    let first = match &rule.matcher {
                        Matcher::Dfa(m) => m.first_bytes(),
                        Matcher::Automaton(_, first) => **first,
                    };
                    for (b, rules) in by_byte.iter_mut().enumerate() {
                        if first[b] {
                            rules.push(i as u32);
                        }
                    }
                }
                by_byte
            })
            .collect();
        Ok(Lexer {
            rules,
            modes,
            candidates,
            finite_texts: Default::default(),
        })
    }

    fn mode_index(&self, name: &str) -> usize {
        self.modes.iter().position(|m| m == name).unwrap_or(0)
    }

    /// Whether `text` on its own lexes as one token of the type lexer rule `rule`
    /// produces (`false` for an identifier spelled as a keyword, which an earlier rule
    /// wins); `None` where that cannot be told from the text alone: an unknown rule, a
    /// rule of another mode than the default one, or one that continues into the next
    /// token (`more`). With `followed`, more input comes after `text`, so `EOF` in a
    /// lexer rule does not match at its end (`'.' EOF` is no token before a name).
    pub fn reads_as(&self, text: &[u8], rule: &str, followed: bool) -> Option<bool> {
        let spec = &self.rules.iter().find(|r| r.spec.name == rule)?.spec;
        if spec.mode.is_some() || spec.commands.contains(&Command::More) {
            return None;
        }
        Some(match self.lex(text, false, !followed) {
            (tokens, None) => {
                tokens.len() == 1
                    && tokens[0].0.kind == spec.token
                    && (tokens[0].0.start, tokens[0].0.end) == (0, text.len())
            }
            (_, Some(_)) => false,
        })
    }

    /// The rules that never make a token: each of their texts (a finite set of
    /// literals, such as a keyword) is matched as long by a rule of higher priority,
    /// which wins it (`IDENTIFIER : [a-z]+` before `IF : 'if'`), so no input has the
    /// token. ANTLR warns of the same ("token unreachable"). A regular rule whose
    /// texts are not a small finite set, or that belongs to another mode than the
    /// default one, is judged by its language: unreachable where one earlier rule of
    /// its mode matches all of it (see `Lexer::covered_before`). Rules with commands
    /// other than `type` and rules with a predicate are not judged.
    pub fn unreachable_rules(&self) -> Vec<Unreachable> {
        let mut out = Vec::new();
        let first_bytes: Vec<Option<[bool; 256]>> = self
            .rules
            .iter()
            .map(|rule| match &rule.matcher {
                Matcher::Dfa(m) => Some(m.first_bytes()),
                _ => None,
            })
            .collect();
        for (index, rule) in self.rules.iter().enumerate() {
            let spec = &rule.spec;
            let plain = spec.commands.iter().all(|c| matches!(c, Command::Type(_)));
            let Pattern::Regex(regex) = &spec.pattern else {
                continue;
            };
            if spec.guarded || !plain {
                continue;
            }
            if spec.mode.is_some() {
                out.extend(self.covered_before(index, &first_bytes));
                continue;
            }
            let Some(literals) = exact_texts(regex) else {
                out.extend(self.covered_before(index, &first_bytes));
                continue;
            };
            if literals.is_empty() || literals.iter().any(Vec::is_empty) {
                continue;
            }
            let mut winner = None;
            for text in &literals {
                let text = text.as_slice();
                match self.tokens(text) {
                    Ok(tokens)
                        if tokens.len() == 1
                            && (tokens[0].start, tokens[0].end) == (0, text.len())
                            && tokens[0].kind != spec.token =>
                    {
                        winner.get_or_insert((text.to_vec(), tokens[0].kind.clone()));
                    }
                    _ => {
                        winner = None;
                        break;
                    }
                }
            }
            if let Some((text, winner)) = winner {
                out.push(Unreachable {
                    rule: spec.name.clone(),
                    at: spec.at,
                    text,
                    winner,
                });
            }
        }
        // A rule matched in parts (one per alternative) is unreachable when all its
        // parts are; it is named once.
        let count = |names: &mut dyn Iterator<Item = &String>, name: &str| {
            names.filter(|n| n.as_str() == name).count()
        };
        let found: Vec<String> = out.iter().map(|u| u.rule.clone()).collect();
        let mut named = std::collections::HashSet::new();
        out.retain(|u| {
            count(&mut found.iter(), &u.rule)
                == count(&mut self.rules.iter().map(|r| &r.spec.name), &u.rule)
                && named.insert(u.rule.clone())
        });
        out
    }

    /// The lexer rules' small finite sets of texts, found once for all the tokens
    /// asking (PL/SQL has two thousand keywords, each with the case variants of its
    /// letters).
    fn finite(&self) -> &FiniteTexts {
        self.finite_texts.get_or_init(|| {
            let texts: Vec<Vec<Vec<u8>>> = self
                .rules
                .iter()
                .map(|r| match &r.spec.pattern {
                    Pattern::Regex(regex) => exact_texts(regex).unwrap_or_default(),
                    _ => Vec::new(),
                })
                .collect();
            let mut holders: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
            for (index, texts) in texts.iter().enumerate() {
                for text in texts.iter().filter(|t| !t.is_empty()) {
                    holders.entry(text.clone()).or_default().push(index as u32);
                }
            }
            let endless_first = self
                .rules
                .iter()
                .zip(&texts)
                .map(|(r, texts)| match &r.matcher {
                    Matcher::Dfa(m) if texts.is_empty() => Some(m.first_bytes()),
                    _ => None,
                })
                .collect();
            FiniteTexts {
                texts,
                holders,
                endless_first,
            }
        })
    }

    /// The texts of `rule` other than `taken`, if its texts are a small finite set
    /// and one lexer rule gives them: the language a token of it has in ANTLR's
    /// token stream (`taken`: [`Lexer::texts_taken_before`]).
    pub fn texts_left(&self, rule: &str, taken: &HashSet<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
        let mut parts = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.spec.name == rule);
        let (index, _) = parts.next()?;
        if parts.next().is_some() {
            return None;
        }
        let texts = &self.finite().texts[index];
        (!texts.is_empty()).then(|| {
            texts
                .iter()
                .filter(|t| !taken.contains(*t))
                .cloned()
                .collect()
        })
    }

    /// The whole texts a token of `rule` never has: each text of a rule before it in
    /// its mode that it matches too (a keyword before an identifier rule), since the
    /// earlier rule wins every tie. Asked of the earlier rules whose texts are a small
    /// finite set (literals, case-insensitive keywords), except those with a
    /// predicate before their text (they lose ties) and those giving `rule`'s own token
    /// type (`-> type(ID)`); answered for the parts of `rule` matched by a DFA.
    pub fn texts_taken_before(&self, rule: &str) -> HashSet<Vec<u8>> {
        let mut taken = HashSet::new();
        let Some(first) = self.rules.iter().position(|r| r.spec.name == rule) else {
            return taken;
        };
        let spec = &self.rules[first].spec;
        // A token that is a keyword itself looks its own texts up rather than
        // matching the earlier keywords' texts.
        let finite = self.finite();
        let takes = |earlier: &Rule| {
            earlier.spec.mode == spec.mode
                && !earlier.spec.guarded
                && earlier.spec.token != spec.token
        };
        if !finite.texts[first].is_empty() {
            for text in &finite.texts[first] {
                let held_before = finite.holders.get(text).is_some_and(|rules| {
                    rules
                        .iter()
                        .any(|&r| (r as usize) < first && takes(&self.rules[r as usize]))
                });
                if held_before {
                    taken.insert(text.clone());
                }
            }
            // An earlier rule with endless texts takes a few too: ply's `EOL :
            // [\r\n]+` before `WS : [ \t\r\n] -> skip` leaves WS no line end, and
            // read as one, every line of numbers could run into the next.
            // (Long case-insensitive keywords have too many variants to be listed:
            // most of them cannot start any of the token's texts.)
            let mut own_first = [false; 256];
            for text in &finite.texts[first] {
                if let Some(&b) = text.first() {
                    own_first[usize::from(b)] = true;
                }
            }
            for (earlier, starts) in self.rules[..first].iter().zip(&finite.endless_first) {
                let (Matcher::Dfa(m), Some(starts)) = (&earlier.matcher, starts) else {
                    continue;
                };
                if !takes(earlier) || !(0..256).any(|b| starts[b] && own_first[b]) {
                    continue;
                }
                for text in &finite.texts[first] {
                    if text.first().is_some_and(|&b| starts[usize::from(b)])
                        && m.matches_exactly(text)
                    {
                        taken.insert(text.clone());
                    }
                }
            }
            return taken;
        }
        let own: Vec<&RegexMatcher> = self.rules[first..]
            .iter()
            .filter(|r| r.spec.name == rule)
            .filter_map(|r| match &r.matcher {
                Matcher::Dfa(m) => Some(&**m),
                _ => None,
            })
            .collect();
        // Most earlier texts cannot start a match of the token (a long keyword's case
        // variants are too many to list, so it is asked here): one byte tells.
        let mut starts = [false; 256];
        for m in &own {
            for (b, yes) in m.first_bytes().into_iter().enumerate() {
                starts[b] |= yes;
            }
        }
        for (earlier, texts) in self.rules[..first].iter().zip(&finite.texts) {
            if !takes(earlier) {
                continue;
            }
            for text in texts {
                if text.first().is_some_and(|&b| starts[usize::from(b)])
                    && own.iter().any(|m| m.matches_exactly(text))
                {
                    taken.insert(text.clone());
                }
            }
        }
        taken
    }

    /// Whether a rule of its mode before `rules[index]` (a regular rule) matches
    /// every text it matches: that rule wins each of them, as long and
    /// earlier (`PREP : NAME ;` after `NAME`, or an identifier rule after a wider
    /// one). The earlier rule must hold no predicate (it would lose ties); a rule
    /// matching the empty text is not judged. `first_bytes`: each rule's
    /// [`RegexMatcher::first_bytes`], for the rules matched by a DFA.
    fn covered_before(
        &self,
        index: usize,
        first_bytes: &[Option<[bool; 256]>],
    ) -> Option<Unreachable> {
        /// Pairs of states looked at for one rule: a DFA over Unicode classes has
        /// thousands.
        const BUDGET: usize = 200_000;
        let Matcher::Dfa(late) = &self.rules[index].matcher else {
            return None;
        };
        let late_first = first_bytes[index]?;
        if late.matches_exactly(b"") {
            return None;
        }
        let mut budget = BUDGET;
        for (rule, first) in self.rules[..index].iter().zip(first_bytes) {
            let (Matcher::Dfa(early), Some(first)) = (&rule.matcher, first) else {
                continue;
            };
            if rule.spec.mode != self.rules[index].spec.mode
                || rule.spec.guarded
                || (0..256).any(|b| late_first[b] && !first[b])
            {
                continue;
            }
            match late.within(early, &mut budget) {
                Some(true) => {
                    let spec = &self.rules[index].spec;
                    return Some(Unreachable {
                        rule: spec.name.clone(),
                        at: spec.at,
                        text: late.shortest_match()?,
                        winner: rule.spec.token.clone(),
                    });
                }
                Some(false) => {}
                None => return None,
            }
        }
        None
    }

    /// Whether lexer rule `rule` glues its text to the next token (`more`).
    pub fn continues(&self, rule: &str) -> bool {
        self.rules
            .iter()
            .any(|r| r.spec.name == rule && r.spec.commands.contains(&Command::More))
    }

    /// The first rule of `mode` (in priority order) that matches the empty string at
    /// `pos` and whose commands leave `mode` (with `stack` the modes pushed): a rule
    /// that stays would match the empty string there for ever.
    fn empty_match(
        &self,
        input: &[u8],
        pos: usize,
        mode: usize,
        stack: &[usize],
    ) -> Option<(usize, &Rule)> {
        self.rules
            .iter()
            .find(|rule| {
                let in_mode = match &rule.spec.mode {
                    None => mode == 0,
                    Some(m) => *m == self.modes[mode],
                };
                let mut next = mode;
                for c in &rule.spec.commands {
                    match c {
                        Command::PushMode(m) | Command::Mode(m) => next = self.mode_index(m),
                        Command::PopMode => next = stack.last().copied().unwrap_or(mode),
                        _ => {}
                    }
                }
                let mut empty = false;
                if in_mode && next != mode {
                    // Inside the input (`pos` is before its end): `EOF` matches nowhere.
                    rule.matcher.match_ends(input, pos, true, |e| {
                        empty |= e == pos;
                        false
                    });
                }
                empty
            })
            .map(|rule| (pos, rule))
    }

    /// The tokens the parser sees in `input` (skipped and hidden tokens dropped).
    pub fn tokens(&self, input: &[u8]) -> Result<Vec<Token>, LexError> {
        match self.tokens_until_error(input) {
            (tokens, None) => Ok(tokens),
            (_, Some(error)) => Err(error),
        }
    }

    /// The tokens the parser sees in `input` up to where no rule matches, and the
    /// error there if there is one.
    pub fn tokens_until_error(&self, input: &[u8]) -> (Vec<Token>, Option<LexError>) {
        let (tokens, error) = self.lex(input, false, true);
        (tokens.into_iter().map(|(t, _)| t).collect(), error)
    }

    /// Every token in `input`, skipped and hidden ones too, each with whether the
    /// parser sees it: what an indentation idiom reads ([`crate::offside`]).
    pub fn all_tokens(&self, input: &[u8]) -> Result<Vec<(Token, bool)>, LexError> {
        match self.lex(input, true, true) {
            (tokens, None) => Ok(tokens),
            (_, Some(error)) => Err(error),
        }
    }

    /// The tokens up to where no rule matches, each with whether the parser sees it
    /// (the ones it does not see only if `keep_hidden`); `EOF` in a lexer rule matches
    /// at the end of `input` only if `input_ends`.
    fn lex(
        &self,
        input: &[u8],
        keep_hidden: bool,
        input_ends: bool,
    ) -> (Vec<(Token, bool)>, Option<LexError>) {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut mode = 0;
        let mut pos = 0;
        let mut token_start = None;
        let mut empty_at = None;
        while pos < input.len() {
            let mut best: Option<(usize, &Rule)> = None;
            for &i in &self.candidates[mode][usize::from(input[pos])] {
                let rule = &self.rules[i as usize];
                // The longest match (an automaton of a non-greedy loop gives only the
                // ends ANTLR's priorities leave).
                let mut end = None;
                rule.matcher.match_ends(input, pos, input_ends, |e| {
                    if e > pos {
                        end = Some(e);
                    }
                    true
                });
                // Longest match; at equal length the rule defined first, except that
                // a rule guarded by a predicate before its text yields to one that is
                // not.
                if let Some(e) = end
                    && best.is_none_or(|(b, r): (usize, &Rule)| {
                        e > b || (e == b && r.spec.guarded && !rule.spec.guarded)
                    })
                {
                    best = Some((e, rule));
                }
            }
            // No rule matches text here: a rule that matches the empty string and moves the
            // lexer to another mode makes an empty token (golang's `OTHER : -> mode(..)`
            // leaves the mode that inserts semicolons at line ends), as ANTLR's does.
            // One empty token a position: two could send the lexer round in a circle.
            let best = best.or_else(|| {
                (empty_at != Some(pos))
                    .then(|| self.empty_match(input, pos, mode, &stack))
                    .flatten()
            });
            empty_at = best.filter(|&(end, _)| end == pos).map(|_| pos);
            let Some((end, rule)) = best else {
                let error = LexError {
                    offset: pos,
                    mode: self.modes[mode].clone(),
                    empty_stack: false,
                };
                return (out, Some(error));
            };
            let start = token_start.take().unwrap_or(pos);
            let mode_before = mode;
            let mut emit = true;
            for c in &rule.spec.commands {
                match c {
                    Command::Skip => emit = false,
                    c if c.is_hidden_channel() => emit = false,
                    Command::More => {
                        emit = false;
                        token_start = Some(start);
                    }
                    Command::PushMode(m) => {
                        stack.push(mode);
                        mode = self.mode_index(m);
                    }
                    Command::PopMode => match stack.pop() {
                        Some(below) => mode = below,
                        None => {
                            let error = LexError {
                                offset: start,
                                mode: self.modes[mode_before].clone(),
                                empty_stack: true,
                            };
                            return (out, Some(error));
                        }
                    },
                    Command::Mode(m) => mode = self.mode_index(m),
                    Command::Type(_) | Command::Channel(_) => {}
                }
            }
            // A `more` token is part of the next one, not a token of its own.
            let more = token_start.is_some();
            if emit || (keep_hidden && !more) {
                let token = Token {
                    kind: rule.spec.token.clone(),
                    start,
                    end,
                };
                out.push((token, emit));
            }
            pos = end;
        }
        (out, None)
    }
}
