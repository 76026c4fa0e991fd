//! Lexer rules that are not regular: a rule that reaches itself through its fragments
//! (Lua's long brackets, `NESTED : '=' NESTED '=' | '[' .*? ']'`). ANTLR's lexer runs an
//! automaton with a stack of rule invocations; so does this matcher. Each rule is an
//! automaton over code points whose fragment references push the state to return to;
//! all configurations (state, stack) advance together one character at a time, and
//! the match ends are where a configuration with an empty stack finishes the rule.
//! Regular rules never come here: they stay DFAs.

use std::collections::HashMap;

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
    },
    /// One code point from these inclusive ranges.
    Class(Vec<(u32, u32)>),
    /// A reference to procedure `i` of the [`Program`].
    Call(usize),
}

/// A recursive lexer rule: procedure 0 is the rule, the others its fragments.
#[derive(Clone, Debug)]
pub struct Program {
    /// The bodies, by index.
    pub procs: Vec<Node>,
}

#[derive(Clone, Debug)]
enum Edge {
    Eps(u32),
    Class(u32, u32),
    /// Enter procedure (its start state), return to the second state.
    Call(u32, u32),
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
}

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
                for item in items {
                    self.compile(item, from, to);
                }
            }
            Node::Repeat { item, min, max } => {
                let mut at = from;
                for _ in 0..*min {
                    let next = self.state();
                    self.compile(item, at, next);
                    at = next;
                }
                match max {
                    None => {
                        // at -> loop -> at
                        let body_end = self.state();
                        let body_start = self.state();
                        self.eps(at, body_start);
                        self.compile(item, body_start, body_end);
                        self.eps(body_end, body_start);
                        self.eps(body_end, to);
                        self.eps(at, to);
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            let next = self.state();
                            self.eps(at, to);
                            self.compile(item, at, next);
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
        }
    }

    /// Calls `found` with every end of a match of procedure 0 that starts at `start`,
    /// in increasing order, until it returns `false`. Input that is not UTF-8 ends the
    /// match where it starts.
    pub fn match_ends(&self, input: &[u8], start: usize, mut found: impl FnMut(usize) -> bool) {
        let mut stacks = Stacks::default();
        let mut current: Vec<(u32, u32)> = Vec::new();
        let mut seen: HashMap<(u32, u32), ()> = HashMap::new();
        let start_state = self.procs[0].0;
        let mut accepted = self.closure(
            &[(start_state, EMPTY)],
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
            let moved: Vec<(u32, u32)> = current
                .iter()
                .flat_map(|&(state, stack)| {
                    self.edges[state as usize]
                        .iter()
                        .filter_map(move |e| match e {
                            Edge::Class(class, to)
                                if contains(&self.classes[*class as usize], c) =>
                            {
                                Some((*to, stack))
                            }
                            _ => None,
                        })
                })
                .collect();
            pos += len;
            seen.clear();
            current.clear();
            accepted = self.closure(&moved, &mut stacks, &mut current, &mut seen);
        }
    }

    /// The configurations reachable from `from` without reading (kept in `out` when
    /// they can read a character); whether the rule can end here.
    fn closure(
        &self,
        from: &[(u32, u32)],
        stacks: &mut Stacks,
        out: &mut Vec<(u32, u32)>,
        seen: &mut HashMap<(u32, u32), ()>,
    ) -> bool {
        let mut accepted = false;
        let mut work: Vec<(u32, u32)> = from.to_vec();
        while let Some((state, stack)) = work.pop() {
            if seen.insert((state, stack), ()).is_some() || seen.len() > MAX_CONFIGS {
                continue;
            }
            if self.final_of[state as usize] {
                if stack == EMPTY {
                    accepted = true;
                } else {
                    let (ret, parent) = stacks.top(stack);
                    work.push((ret, parent));
                }
            }
            let mut reads = false;
            for e in &self.edges[state as usize] {
                match e {
                    Edge::Eps(to) => work.push((*to, stack)),
                    Edge::Class(..) => reads = true,
                    Edge::Call(callee, ret) => {
                        if stacks.depth(stack) < MAX_STACK {
                            let pushed = stacks.push(*ret, stack);
                            work.push((*callee, pushed));
                        }
                    }
                }
            }
            if reads {
                out.push((state, stack));
            }
        }
        accepted
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
                        },
                        lit(']'),
                    ]),
                ]),
            ],
        })
    }

    fn ends(m: &Matcher, input: &str) -> Vec<usize> {
        let mut out = Vec::new();
        m.match_ends(input.as_bytes(), 0, |e| {
            out.push(e);
            true
        });
        out
    }

    #[test]
    fn nested_brackets_match_their_own_level() {
        let m = long_bracket();
        assert_eq!(ends(&m, "[==[ a ]] ]=] ]==] x"), [18]);
        assert_eq!(ends(&m, "[[a]] b]]"), [5, 9]);
        assert!(ends(&m, "[=[ a ]==]").is_empty());
    }
}
