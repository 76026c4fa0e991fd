//! Lexer rules that are not regular: a rule that reaches itself through its fragments
//! (Lua's long brackets, `NESTED : '=' NESTED '=' | '[' .*? ']'`). ANTLR's lexer runs an
//! automaton with a stack of rule invocations; so does this matcher. Each rule is an
//! automaton over code points whose fragment references push the state to return to;
//! all configurations (state, stack) advance together one character at a time, and
//! the match ends are where a configuration with an empty stack finishes the rule.
//! Regular rules come here only with a non-greedy loop (below) or when their DFA is
//! too large to build ([`Program::from_hir`]); the others stay DFAs.
//!
//! Non-greedy loops are read as ANTLR's lexer reads them: configurations are kept in
//! priority order (alternatives in order, a greedy loop's body before its exit, a
//! non-greedy loop's exit before its body), a configuration that has passed a
//! non-greedy decision carries a mark, and once a configuration finishes the rule,
//! the marked configurations of lower priority are dropped. Those of higher priority
//! go on: `COMMENT : '/*' (COMMENT | .)*? '*/'` reads `/* /* a */ */` as one nested
//! comment, because the path through the inner `COMMENT` comes before the one that
//! reads `/*` as two characters and stops at the first `*/`.

use std::collections::{HashMap, HashSet};

/// A lexer rule's body, as the translation hands it over.
#[derive(Clone, Debug)]
pub enum Node {
    /// A sequence.
    Seq(Vec<Node>),
    /// Alternatives.
    Alt(Vec<Node>),
    /// `item{min,max}` (`max` `None`: unbounded).
    Repeat {
        /// The repeated node.
        item: Box<Node>,
        /// Least repetitions.
        min: u32,
        /// Most repetitions.
        max: Option<u32>,
        /// Whether another repetition comes before stopping (`*`, `+`, `?`), or
        /// stopping first (`*?`, `+?`, `??`).
        greedy: bool,
    },
    /// One code point from these inclusive ranges.
    Class(Vec<(u32, u32)>),
    /// A reference to procedure `i` of the [`Program`].
    Call(usize),
    /// `EOF`: the end of the input, reading nothing (`'//' .*? ('\n' | EOF)` ends a
    /// comment at the line's end or the input's, not right after `//`).
    End,
}

/// A recursive lexer rule: procedure 0 is the rule, the others its fragments.
#[derive(Clone, Debug)]
pub struct Program {
    /// The bodies, by index.
    pub procs: Vec<Node>,
}

impl Program {
    /// A regular rule's regular expression (Unicode classes and literals, as the
    /// translation writes them) as a program of one procedure, or `None` for what a
    /// program cannot say (look-around, bytes that are not UTF-8). The automaton
    /// reports the same non-empty match ends as the regex's DFA; it stands in for a DFA
    /// too large to build.
    pub fn from_hir(hir: &regex_syntax::hir::Hir) -> Option<Program> {
        Some(Program {
            procs: vec![node_of_hir(hir)?],
        })
    }

    /// For each byte, whether a non-empty match of procedure 0 can start with it (as
    /// `RegexMatcher::first_bytes` says of a DFA; a class's characters give the
    /// lead bytes of their UTF-8 forms, a few more where a range spans them).
    pub fn first_bytes(&self) -> [bool; 256] {
        // Each procedure's first bytes and whether it can read nothing, to a fixed
        // point: procedures call each other.
        let mut nullable = vec![false; self.procs.len()];
        let mut first = vec![[false; 256]; self.procs.len()];
        loop {
            let mut changed = false;
            for (i, body) in self.procs.iter().enumerate() {
                let mut bytes = first[i];
                let empty = first_of(body, &nullable, &first, &mut bytes);
                if empty != nullable[i] || bytes != first[i] {
                    (nullable[i], first[i], changed) = (empty, bytes, true);
                }
            }
            if !changed {
                return first[0];
            }
        }
    }
}

fn node_of_hir(hir: &regex_syntax::hir::Hir) -> Option<Node> {
    use regex_syntax::hir::{Class, HirKind};
    let all = |items: &[regex_syntax::hir::Hir]| -> Option<Vec<Node>> {
        items.iter().map(node_of_hir).collect()
    };
    Some(match hir.kind() {
        HirKind::Empty => Node::Seq(Vec::new()),
        HirKind::Literal(literal) => Node::Seq(
            std::str::from_utf8(&literal.0)
                .ok()?
                .chars()
                .map(|c| Node::Class(vec![(c as u32, c as u32)]))
                .collect(),
        ),
        HirKind::Class(Class::Unicode(class)) => Node::Class(
            class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        ),
        HirKind::Class(Class::Bytes(class)) => Node::Class(
            class
                .ranges()
                .iter()
                .map(|r| (r.end() < 0x80).then_some((u32::from(r.start()), u32::from(r.end()))))
                .collect::<Option<_>>()?,
        ),
        HirKind::Look(_) => return None,
        HirKind::Repetition(rep) => Node::Repeat {
            item: Box::new(node_of_hir(&rep.sub)?),
            min: rep.min,
            max: rep.max,
            greedy: rep.greedy,
        },
        HirKind::Capture(capture) => node_of_hir(&capture.sub)?,
        HirKind::Concat(items) => Node::Seq(all(items)?),
        HirKind::Alternation(items) => Node::Alt(all(items)?),
    })
}

/// Adds to `bytes` the first bytes of `node`'s non-empty matches; whether it can
/// match nothing. `nullable` and `first`: what is known of each procedure so far.
fn first_of(
    node: &Node,
    nullable: &[bool],
    first: &[[bool; 256]],
    bytes: &mut [bool; 256],
) -> bool {
    match node {
        Node::Seq(items) => items.iter().all(|i| first_of(i, nullable, first, bytes)),
        Node::Alt(items) => {
            // Every alternative adds its bytes: no stopping at one that reads nothing.
            let mut empty = false;
            for item in items {
                empty |= first_of(item, nullable, first, bytes);
            }
            empty
        }
        Node::Repeat { item, min, .. } => first_of(item, nullable, first, bytes) || *min == 0,
        Node::Class(ranges) => {
            for &(lo, hi) in ranges {
                // UTF-8 lead bytes grow with the code point.
                for b in utf8_lead(lo)..=utf8_lead(hi) {
                    bytes[usize::from(b)] = true;
                }
            }
            false
        }
        Node::Call(p) => {
            for (b, yes) in first[*p].iter().enumerate() {
                bytes[b] |= yes;
            }
            nullable[*p]
        }
        Node::End => true,
    }
}

/// The first byte of the UTF-8 form of code point `c`.
fn utf8_lead(c: u32) -> u8 {
    match c {
        0..0x80 => c as u8,
        0x80..0x800 => 0xC0 | (c >> 6) as u8,
        0x800..0x10000 => 0xE0 | (c >> 12) as u8,
        _ => 0xF0 | (c >> 18).min(7) as u8,
    }
}

#[derive(Clone, Debug)]
enum Edge {
    Eps(u32),
    Class(u32, u32),
    /// Enter procedure (its start state), return to the second state.
    Call(u32, u32),
    /// Only at the end of the input, reading nothing.
    End(u32),
}

/// The compiled automaton.
#[derive(Clone, Debug)]
pub struct Matcher {
    /// Outgoing edges per state.
    edges: Vec<Vec<Edge>>,
    /// Character classes, by index.
    classes: Vec<Vec<(u32, u32)>>,
    /// Start and final state of each procedure.
    procs: Vec<(u32, u32)>,
    /// Whether each state is the final state of a procedure.
    final_of: Vec<bool>,
    /// Whether each state is the decision of a non-greedy loop: configurations passing
    /// it are marked (see the module's documentation).
    non_greedy: Vec<bool>,
}

/// A configuration: state, stack, and whether it passed a non-greedy decision.
type Config = (u32, u32, bool);

/// Deepest stack of rule invocations followed; deeper configurations are dropped (a
/// left-recursive lexer rule, which ANTLR refuses, would otherwise never end).
const MAX_STACK: usize = 10_000;

/// Most configurations alive at once; beyond it the match stops where it is.
const MAX_CONFIGS: usize = 100_000;

impl Matcher {
    /// Compiles a program.
    pub fn new(program: &Program) -> Matcher {
        let mut m = Matcher {
            edges: Vec::new(),
            classes: Vec::new(),
            procs: Vec::new(),
            final_of: Vec::new(),
            non_greedy: Vec::new(),
        };
        for _ in &program.procs {
            let start = m.state();
            let end = m.state();
            m.procs.push((start, end));
        }
        for (i, body) in program.procs.iter().enumerate() {
            let (start, end) = m.procs[i];
            m.final_of[end as usize] = true;
            m.compile(body, start, end);
        }
        m
    }

    fn state(&mut self) -> u32 {
        self.edges.push(Vec::new());
        self.final_of.push(false);
        self.non_greedy.push(false);
        (self.edges.len() - 1) as u32
    }

    fn eps(&mut self, from: u32, to: u32) {
        self.edges[from as usize].push(Edge::Eps(to));
    }

    fn compile(&mut self, node: &Node, from: u32, to: u32) {
        match node {
            Node::Seq(items) => {
                let mut at = from;
                for (i, item) in items.iter().enumerate() {
                    let next = if i + 1 == items.len() {
                        to
                    } else {
                        self.state()
                    };
                    self.compile(item, at, next);
                    at = next;
                }
                if items.is_empty() {
                    self.eps(from, to);
                }
            }
            Node::Alt(items) => {
                // Each alternative from a state of its own, in order: the edges of
                // `from` are the alternatives' priorities.
                for item in items {
                    let own = self.state();
                    self.eps(from, own);
                    self.compile(item, own, to);
                }
            }
            Node::Repeat {
                item,
                min,
                max,
                greedy,
            } => {
                let mut at = from;
                for _ in 0..*min {
                    let next = self.state();
                    self.compile(item, at, next);
                    at = next;
                }
                match max {
                    None => {
                        // The loop's decision, passed before each repetition: another
                        // one or the exit, in the order the loop prefers.
                        let decision = self.state();
                        let body = self.state();
                        self.non_greedy[decision as usize] = !greedy;
                        self.eps(at, decision);
                        self.decide(decision, body, to, *greedy);
                        let body_end = self.state();
                        self.compile(item, body, body_end);
                        self.eps(body_end, decision);
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            let decision = self.state();
                            let body = self.state();
                            let next = self.state();
                            self.non_greedy[decision as usize] = !greedy;
                            self.eps(at, decision);
                            self.decide(decision, body, to, *greedy);
                            self.compile(item, body, next);
                            at = next;
                        }
                        self.eps(at, to);
                    }
                }
            }
            Node::Class(ranges) => {
                let class = self.classes.len() as u32;
                self.classes.push(ranges.clone());
                self.edges[from as usize].push(Edge::Class(class, to));
            }
            Node::Call(p) => {
                let (start, _) = self.procs[*p];
                self.edges[from as usize].push(Edge::Call(start, to));
            }
            Node::End => self.edges[from as usize].push(Edge::End(to)),
        }
    }

    /// The edges of a loop's decision: into the body and out, greedy first into the body.
    fn decide(&mut self, decision: u32, body: u32, out: u32, greedy: bool) {
        if greedy {
            self.eps(decision, body);
            self.eps(decision, out);
        } else {
            self.eps(decision, out);
            self.eps(decision, body);
        }
    }

    /// Calls `found` with every end of a match of procedure 0 that starts at `start`,
    /// in increasing order, until it returns `false` (ends cut off by a non-greedy loop,
    /// as ANTLR cuts them, are not ends; nor is an empty match). Input that is not UTF-8 ends the match where
    /// it starts. `EOF` matches at the end of `input` only if `input_ends` (`input` is
    /// not a piece of a longer text).
    pub fn match_ends(
        &self,
        input: &[u8],
        start: usize,
        input_ends: bool,
        mut found: impl FnMut(usize) -> bool,
    ) {
        let mut stacks = Stacks::default();
        let mut current: Vec<Config> = Vec::new();
        let mut seen: HashSet<Config> = HashSet::new();
        let start_state = self.procs[0].0;
        let mut accepted = false;
        self.closure(
            (start_state, EMPTY, false),
            input_ends && start == input.len(),
            &mut accepted,
            &mut stacks,
            &mut current,
            &mut seen,
        );
        let mut pos = start;
        loop {
            if accepted && pos > start && !found(pos) {
                return;
            }
            if current.is_empty() || pos >= input.len() {
                return;
            }
            let Some((c, len)) = decode(&input[pos..]) else {
                return;
            };
            pos += len;
            seen.clear();
            let before = std::mem::take(&mut current);
            // In priority order; once a configuration finishes the rule, the marked
            // ones after it are dropped.
            accepted = false;
            for (state, stack, marked) in before {
                if accepted && marked {
                    continue;
                }
                for e in &self.edges[state as usize] {
                    if let Edge::Class(class, to) = e
                        && contains(&self.classes[*class as usize], c)
                    {
                        self.closure(
                            (*to, stack, marked),
                            input_ends && pos == input.len(),
                            &mut accepted,
                            &mut stacks,
                            &mut current,
                            &mut seen,
                        );
                    }
                }
            }
        }
    }

    /// Adds to `out`, in priority order, the configurations reachable from `from`
    /// without reading that can read a character; sets `accepted` where the rule can
    /// end here. Once it has, marked configurations are not added (ANTLR's lexer drops
    /// them: the non-greedy loop has stopped).
    fn closure(
        &self,
        from: Config,
        at_end: bool,
        accepted: &mut bool,
        stacks: &mut Stacks,
        out: &mut Vec<Config>,
        seen: &mut HashSet<Config>,
    ) {
        // Depth first in edge order, as ANTLR's closure: the stack holds what to visit
        // next on top.
        let mut work: Vec<Config> = vec![from];
        while let Some((state, stack, marked)) = work.pop() {
            if !seen.insert((state, stack, marked)) || seen.len() > MAX_CONFIGS {
                continue;
            }
            if self.final_of[state as usize] {
                if stack == EMPTY {
                    *accepted = true;
                } else {
                    let (ret, parent) = stacks.top(stack);
                    work.push((ret, parent, marked));
                }
                continue;
            }
            let edges = &self.edges[state as usize];
            if edges.iter().any(|e| matches!(e, Edge::Class(..))) && !(*accepted && marked) {
                out.push((state, stack, marked));
            }
            for e in edges.iter().rev() {
                match e {
                    Edge::Eps(to) => {
                        work.push((*to, stack, marked || self.non_greedy[*to as usize]))
                    }
                    Edge::Class(..) => {}
                    Edge::End(to) => {
                        if at_end {
                            work.push((*to, stack, marked));
                        }
                    }
                    Edge::Call(callee, ret) => {
                        if stacks.depth(stack) < MAX_STACK {
                            let pushed = stacks.push(*ret, stack);
                            work.push((*callee, pushed, marked));
                        }
                    }
                }
            }
        }
    }
}

/// The empty stack.
const EMPTY: u32 = 0;

/// Interned stacks of return states: a stack is an index, equal stacks equal indexes.
struct Stacks {
    /// (return state, parent stack, depth), by index; index 0 is the empty stack.
    nodes: Vec<(u32, u32, u32)>,
    index: HashMap<(u32, u32), u32>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            nodes: vec![(0, 0, 0)],
            index: HashMap::new(),
        }
    }
}

impl Stacks {
    fn push(&mut self, ret: u32, parent: u32) -> u32 {
        if let Some(&i) = self.index.get(&(ret, parent)) {
            return i;
        }
        let depth = self.nodes[parent as usize].2 + 1;
        self.nodes.push((ret, parent, depth));
        let i = (self.nodes.len() - 1) as u32;
        self.index.insert((ret, parent), i);
        i
    }

    fn top(&self, stack: u32) -> (u32, u32) {
        let (ret, parent, _) = self.nodes[stack as usize];
        (ret, parent)
    }

    fn depth(&self, stack: u32) -> usize {
        self.nodes[stack as usize].2 as usize
    }
}

fn contains(ranges: &[(u32, u32)], c: u32) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

/// The code point at the start of `bytes` and its length in bytes.
fn decode(bytes: &[u8]) -> Option<(u32, usize)> {
    let len = match bytes[0] {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let text = std::str::from_utf8(bytes.get(..len)?).ok()?;
    text.chars().next().map(|c| (c as u32, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(c: char) -> Node {
        Node::Class(vec![(c as u32, c as u32)])
    }

    /// `NESTED : '=' NESTED '=' | '[' .*? ']'` behind `'['`.
    fn long_bracket() -> Matcher {
        let any = Node::Class(vec![(0, 0x10FFFF)]);
        Matcher::new(&Program {
            procs: vec![
                Node::Seq(vec![lit('['), Node::Call(1), lit(']')]),
                Node::Alt(vec![
                    Node::Seq(vec![lit('='), Node::Call(1), lit('=')]),
                    Node::Seq(vec![
                        lit('['),
                        Node::Repeat {
                            item: Box::new(any),
                            min: 0,
                            max: None,
                            greedy: false,
                        },
                        lit(']'),
                    ]),
                ]),
            ],
        })
    }

    /// `C : '/*' (C | .)*? '*/'`.
    fn nested_comment() -> Matcher {
        let any = Node::Class(vec![(0, 0x10FFFF)]);
        Matcher::new(&Program {
            procs: vec![Node::Seq(vec![
                lit('/'),
                lit('*'),
                Node::Repeat {
                    item: Box::new(Node::Alt(vec![Node::Call(0), any])),
                    min: 0,
                    max: None,
                    greedy: false,
                },
                lit('*'),
                lit('/'),
            ])],
        })
    }

    fn ends(m: &Matcher, input: &str) -> Vec<usize> {
        let mut out = Vec::new();
        m.match_ends(input.as_bytes(), 0, true, |e| {
            out.push(e);
            true
        });
        out
    }

    #[test]
    fn a_regex_read_as_a_program_ends_where_the_regex_does() {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse("(?:[ab]*a(?:é|x)+)?")
            .unwrap();
        let program = Program::from_hir(&hir).unwrap();
        // Bytes: b a é(2) x é(2) space; the empty match is no end (see `match_ends`).
        assert_eq!(ends(&Matcher::new(&program), "baéxé c"), [4, 5, 7]);
        let first = program.first_bytes();
        let starting: Vec<u8> = (0..=255u8).filter(|&b| first[usize::from(b)]).collect();
        assert_eq!(starting, b"ab");
    }

    #[test]
    fn first_bytes_pass_through_a_procedure_that_can_read_nothing() {
        let program = Program {
            procs: vec![
                Node::Seq(vec![Node::Call(1), lit('x')]),
                Node::Alt(vec![lit('é'), Node::Seq(Vec::new())]),
            ],
        };
        let first = program.first_bytes();
        let starting: Vec<u8> = (0..=255u8).filter(|&b| first[usize::from(b)]).collect();
        assert_eq!(starting, [b'x', "é".as_bytes()[0]]);
    }

    #[test]
    fn nested_brackets_match_their_own_level() {
        let m = long_bracket();
        assert_eq!(ends(&m, "[==[ a ]] ]=] ]==] x"), [18]);
        // `.*?` stops at the first `]`, as in ANTLR: no end after it.
        assert_eq!(ends(&m, "[[a]] b]]"), [5]);
        assert!(ends(&m, "[=[ a ]==]").is_empty());
    }

    #[test]
    fn non_greedy_loops_stop_as_antlr_stops_them() {
        let m = nested_comment();
        // The first `*/` ends the comment; what follows is no end.
        assert_eq!(ends(&m, "/* a */ b */"), [7]);
        // The inner comment comes first in the loop, so the path through it goes on
        // past the first `*/` (where the path reading `/*` as two characters ends).
        assert_eq!(ends(&m, "/* /* a */ */ x */"), [10, 13]);
        assert!(ends(&m, "/* a").is_empty());
    }
}
