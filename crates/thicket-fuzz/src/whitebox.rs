//! Grammar-based whitebox fuzzing (Godefroid, Kiezun, Levin, PLDI'08) and the two
//! strategies it is compared with, each a campaign strategy ([`WhiteboxSearch`]): the
//! campaign runs and books its inputs (same output folder, figures and budgets as
//! `thicket fuzz`), and each run's report carries the token trace the search feeds on.
//!
//! - [`Search::Whitebox`]: the generational search (the paper's Algorithm 1). Each
//!   input's run records its token-level path condition (an executor with a tokenizer
//!   hook: [`thicket_exec::TokenTrace`], the comparisons the target made on its tokens'
//!   values, in order). For every condition `c_i` from the input's bound on, the search
//!   asks the token solver ([`thicket_solve::tokens`]) for a shortest input of the
//!   grammar whose tokens satisfy `c_1 .. c_(i-1)` and `not c_i`; each answer is
//!   de-tokenized, run at once (failures saved as by `thicket fuzz`) and queued with
//!   bound `i + 1` (so `c_i` is not flipped back). The queue is ordered by the new
//!   lines and branches an input covered, then by age. UNSAT answers are counted.
//! - [`Search::WhiteboxNoGrammar`]: the same search without the grammar: a child is
//!   the parent's tokens with each constrained position changed to a value that
//!   satisfies its conditions (the grammar's tokens are the alphabet), truncated where
//!   only the end of input does.
//! - [`Search::BlackboxTokens`]: random inputs of the grammar with as many tokens as
//!   the seeds (drawn until one has a count in the seed range).
//!
//! Conditions are on token values (`token_i == "("` was true or false). A value that is
//! a literal token's text stands for that kind; a value in the language of a token rule
//! (an identifier compared with `"let"`) pins that rule's token to the value. Repeated
//! identical conditions are one (negating the repeat of a condition contradicts it),
//! and a query asked before is not asked again (counted as a duplicate). When the queue
//! runs dry, the search draws another seed.

use crate::FuzzError;
use crate::strategy::{Candidate, Ctx, RunReport};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};
use std::time::Instant;
use thicket_exec::{TokenCond, TokenTrace, Trace};
use thicket_gen::{GenRng, Generator};
use thicket_grammar::{Expr, Grammar, Tokens};
use thicket_solve::tokens::{TokenSet, TokenSolveStats, TokenSolver};
use thicket_tree::{ByteSink, DerivationTree, NodeId};

/// Which search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Search {
    /// Grammar-based whitebox: path conditions solved within the grammar.
    Whitebox,
    /// Whitebox over tokens without the grammar.
    #[serde(rename = "whitebox-nogrammar")]
    WhiteboxNoGrammar,
    /// Grammar-based blackbox: random inputs of the seeds' token counts.
    BlackboxTokens,
}

impl Search {
    /// Every search, with its name (`--strategy NAME`).
    pub const ALL: [(&'static str, Search); 3] = [
        ("whitebox", Search::Whitebox),
        ("whitebox-nogrammar", Search::WhiteboxNoGrammar),
        ("blackbox-tokens", Search::BlackboxTokens),
    ];

    /// Its name, also the operation of the inputs it makes.
    pub fn op(self) -> &'static str {
        match self {
            Search::Whitebox => "whitebox",
            Search::WhiteboxNoGrammar => "whitebox-nogrammar",
            Search::BlackboxTokens => "blackbox-tokens",
        }
    }

    /// Whether it needs the target's token comparisons (an executor with a tokenizer
    /// hook).
    pub fn needs_token_trace(self) -> bool {
        self != Search::BlackboxTokens
    }
}

/// A stage of the target (lexer, parser, code generator): the files matching a glob,
/// optionally only a range of their lines.
#[derive(Clone, Debug, Serialize)]
pub struct Stage {
    /// Its name.
    pub name: String,
    /// Glob over file paths (`*` matches any run of characters).
    pub glob: String,
    /// First and last line, if only part of the files.
    pub lines: Option<(u32, u32)>,
}

impl Stage {
    /// Reads `NAME=GLOB` or `NAME=GLOB:FROM-TO`.
    pub fn parse(text: &str) -> Result<Stage, String> {
        let (name, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not NAME=GLOB or NAME=GLOB:FROM-TO"))?;
        let (glob, lines) = match rest.rsplit_once(':') {
            Some((glob, range)) if range.contains('-') => {
                let (a, b) = range.split_once('-').expect("checked");
                let parse = |s: &str| {
                    s.parse::<u32>()
                        .map_err(|_| format!("`{range}` in `{text}` is not a line range FROM-TO"))
                };
                (glob, Some((parse(a)?, parse(b)?)))
            }
            _ => (rest, None),
        };
        if name.is_empty() || glob.is_empty() {
            return Err(format!("`{text}` is not NAME=GLOB or NAME=GLOB:FROM-TO"));
        }
        Ok(Stage {
            name: name.into(),
            glob: glob.into(),
            lines,
        })
    }

    fn covers(&self, path: &str, line: u32) -> bool {
        glob_match(&self.glob, path) && self.lines.is_none_or(|(a, b)| (a..=b).contains(&line))
    }
}

/// `*`-only glob matching, iterative.
fn glob_match(glob: &str, text: &str) -> bool {
    let (g, t) = (glob.as_bytes(), text.as_bytes());
    let (mut gi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if gi < g.len() && g[gi] == b'*' {
            star = Some((gi, ti));
            gi += 1;
        } else if gi < g.len() && g[gi] == t[ti] {
            gi += 1;
            ti += 1;
        } else if let Some((sg, st)) = star {
            gi = sg + 1;
            ti = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == b'*')
}

/// Settings of a whitebox campaign.
#[derive(Clone, Debug)]
pub struct WhiteboxConfig {
    /// The search.
    pub search: Search,
    /// Seeds generated from the grammar at the start (the paper: 50).
    pub seeds: usize,
    /// Token counts of seeds and blackbox inputs, inclusive (the paper: 15 to 20).
    pub seed_tokens: (usize, usize),
    /// Stages whose reach and coverage are reported.
    pub stages: Vec<Stage>,
    /// Conditions of one run that are negated at most (the rest are kept).
    pub max_conditions: usize,
}

/// A stage's figures.
#[derive(Clone, Debug, Serialize)]
pub struct StageStats {
    /// The stage.
    #[serde(flatten)]
    pub stage: Stage,
    /// Runs that executed any of its lines.
    pub reach_runs: u64,
    /// `reach_runs` as a share of all runs, in percent.
    pub reach_pct: f64,
    /// Lines covered, by file.
    pub covered: BTreeMap<String, BTreeSet<u32>>,
    /// Lines covered in all.
    pub covered_lines: usize,
}

/// The figures of a whitebox campaign (written to `OUT/whitebox.json`).
#[derive(Clone, Debug, Serialize)]
pub struct WhiteboxStats {
    /// The search.
    pub strategy: Search,
    /// Seeds run (the first ones, and those drawn when the queue ran dry).
    pub seeds: u64,
    /// Inputs run in all.
    pub inputs_run: u64,
    /// Runs that reported a token trace.
    pub traced_runs: u64,
    /// Distinct conditions recorded, in all.
    pub conditions: u64,
    /// Queries made (value-level contradictions included, duplicates not).
    pub queries: u64,
    /// Queries with no solution (value-level contradictions and solver UNSAT).
    pub unsat: u64,
    /// `unsat` as a share of `queries`, in percent.
    pub unsat_pct: f64,
    /// Queries skipped because the same one was asked before.
    pub duplicates: u64,
    /// Children run.
    pub children: u64,
    /// The token solver's own figures (grammar-based whitebox only).
    pub solver: TokenSolveStats,
    /// Mean solver time per call answered by solving, in milliseconds.
    pub solver_ms_per_call: f64,
    /// Share of the campaign's time spent in the solver, in percent.
    pub solver_time_pct: f64,
    /// Seconds of the campaign.
    pub elapsed_s: f64,
    /// Token kinds of the grammar.
    pub token_kinds: usize,
    /// Each stage's reach and coverage.
    pub stages: Vec<StageStats>,
}

/// The token kinds of the phrase-level token occurrences of a tree, in order.
pub fn tree_tokens(tree: &DerivationTree, tokens: &Tokens) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tree.len() {
        let node = NodeId::from_index(i);
        if let Some(k) = tokens.kind_of(tree.expr(node)) {
            out.push(k);
            i = tree.subtree_end(node);
        } else {
            i += 1;
        }
    }
    out
}

/// What the conditions say about one token position.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Pos {
    required: Option<String>,
    forbidden: BTreeSet<String>,
}

/// The positions' constraints of a conjunction of conditions; `None` if the values
/// contradict each other.
fn positions<'a>(conds: impl Iterator<Item = (&'a TokenCond, bool)>) -> Option<Vec<Pos>> {
    let mut out: Vec<Pos> = Vec::new();
    for (c, equal) in conds {
        let i = c.index as usize;
        if out.len() <= i {
            out.resize(i + 1, Pos::default());
        }
        let p = &mut out[i];
        if equal {
            if p.required.as_ref().is_some_and(|r| r != &c.value) || p.forbidden.contains(&c.value)
            {
                return None;
            }
            p.required = Some(c.value.clone());
        } else {
            if p.required.as_ref() == Some(&c.value) {
                return None;
            }
            p.forbidden.insert(c.value.clone());
        }
    }
    while out.last().is_some_and(|p| *p == Pos::default()) {
        out.pop();
    }
    Some(out)
}

/// Membership of texts in token kinds, and sample values.
struct Kinds<'g> {
    grammar: &'g Grammar,
    tokens: &'g Tokens,
    generator: &'g Generator<'g>,
    parser: thicket_parse::Parser<'g>,
    matchers: HashMap<u32, Option<thicket_parse::RegexMatcher>>,
    cache: HashMap<(u32, String), bool>,
}

impl<'g> Kinds<'g> {
    fn contains(&mut self, kind: u32, text: &str) -> bool {
        let k = &self.tokens.kinds()[kind as usize];
        if let Some(lit) = &k.literal {
            return lit.as_ref() == text.as_bytes();
        }
        if let Some(&hit) = self.cache.get(&(kind, text.to_string())) {
            return hit;
        }
        let hit = if let Some(rule) = k.rule {
            self.parser.parse_as(rule, text.as_bytes()).is_ok()
        } else if let Some(expr) = k.regex {
            let grammar = self.grammar;
            let m = self
                .matchers
                .entry(kind)
                .or_insert_with(|| match grammar.expr(expr) {
                    Expr::Regex(r) => thicket_parse::RegexMatcher::new(&r.hir).ok(),
                    _ => None,
                });
            let mut full = false;
            if let Some(m) = m {
                m.match_ends(text.as_bytes(), 0, |end| full |= end == text.len());
            }
            full
        } else {
            false
        };
        self.cache.insert((kind, text.to_string()), hit);
        hit
    }

    /// The kinds a value can be: the literal with that text, and the token rules whose
    /// language holds it.
    fn kinds_of(&mut self, text: &str) -> Vec<u32> {
        (0..self.tokens.kinds().len() as u32)
            .filter(|&k| self.contains(k, text))
            .collect()
    }

    fn sample(&self, kind: u32, rng: &mut GenRng) -> String {
        let k = &self.tokens.kinds()[kind as usize];
        if let Some(lit) = &k.literal {
            return String::from_utf8_lossy(lit).into_owned();
        }
        let expr = match (k.rule, k.regex) {
            (Some(rule), _) => self.grammar.rule(rule).body,
            (None, Some(expr)) => expr,
            _ => return String::new(),
        };
        let mut sink = ByteSink { bytes: Vec::new() };
        self.generator.expand(expr, 0, rng, &mut sink);
        String::from_utf8_lossy(&sink.bytes).into_owned()
    }

    /// The token set of a position's constraints.
    fn set_of(&mut self, pos: &Pos) -> TokenSet {
        let n = self.tokens.kinds().len();
        if let Some(v) = &pos.required {
            let mut set = TokenSet::none(n);
            if v.is_empty() {
                set.eof = true;
            }
            for k in self.kinds_of(v) {
                set.insert(k);
            }
            return set;
        }
        let mut set = TokenSet::all(n);
        for f in &pos.forbidden {
            if f.is_empty() {
                set.eof = false;
            } else if let Some(k) = self.tokens.literal_kind(f.as_bytes()) {
                set.remove(k);
            }
        }
        set
    }

    /// A value of `kind` at a position: the required one, else the parent's if it
    /// fits, else a sample that is not forbidden.
    fn value(
        &mut self,
        kind: u32,
        pos: Option<&Pos>,
        parent: Option<&str>,
        rng: &mut GenRng,
    ) -> String {
        let ok = |v: &str| pos.is_none_or(|p| !p.forbidden.contains(v));
        if let Some(v) = pos.and_then(|p| p.required.as_deref())
            && self.contains(kind, v)
        {
            return v.to_string();
        }
        if let Some(v) = parent
            && ok(v)
            && self.contains(kind, v)
        {
            return v.to_string();
        }
        let mut v = self.sample(kind, rng);
        for _ in 0..8 {
            if ok(&v) {
                break;
            }
            v = self.sample(kind, rng);
        }
        v
    }
}

struct Node {
    bytes: Vec<u8>,
    trace: Option<TokenTrace>,
    bound: usize,
}

/// The token texts of a run: each traced token's slice of the input (offsets are
/// characters for text targets), the end-of-input token left out.
fn token_texts(input: &[u8], trace: &TokenTrace) -> Vec<String> {
    let text = String::from_utf8_lossy(input);
    let chars: Vec<char> = text.chars().collect();
    let mut tokens: Vec<_> = trace.tokens.iter().collect();
    tokens.sort_by_key(|t| t.index);
    tokens
        .iter()
        .filter(|t| t.start >= 0 && t.end > t.start && (t.end as usize) <= chars.len())
        .map(|t| chars[t.start as usize..t.end as usize].iter().collect())
        .collect()
}

/// The node being expanded: its distinct conditions, its token texts, and the next
/// condition to negate.
struct Expansion {
    conds: Vec<TokenCond>,
    parent_texts: Vec<String>,
    next: usize,
}

/// A whitebox search (or its baseline) as a campaign [`Strategy`](crate::strategy::Strategy):
/// the campaign runs and books each input it gives; its report's token trace and
/// novelty feed the search.
pub struct WhiteboxSearch<'g> {
    config: WhiteboxConfig,
    tokens: &'g Tokens,
    kinds: Kinds<'g>,
    solver: TokenSolver,
    seed: u64,
    /// Seed streams drawn so far.
    draws: u64,
    /// Values of tokens are drawn from one stream of their own.
    rng: GenRng,
    queue: BinaryHeap<(u32, Reverse<u64>)>,
    nodes: HashMap<u64, Node>,
    next_id: u64,
    /// Queries asked before.
    seen: HashSet<Vec<Pos>>,
    /// Seeds still to run before the queue is searched.
    seeding: usize,
    expanding: Option<Expansion>,
    /// The bound of the seed or child given last, until its report arrives.
    running: Option<usize>,
    stats: WhiteboxStats,
    started: Option<Instant>,
}

impl<'g> WhiteboxSearch<'g> {
    /// A search over `tokens` of `generator`'s grammar; its random choices flow from
    /// `seed` (the campaign's).
    pub fn new(
        generator: &'g Generator<'g>,
        tokens: &'g Tokens,
        config: WhiteboxConfig,
        seed: u64,
    ) -> Result<WhiteboxSearch<'g>, FuzzError> {
        let grammar = generator.grammar();
        let parser = thicket_parse::Parser::new(grammar, thicket_parse::ParseConfig::default())
            .map_err(|e| FuzzError::Campaign(format!("cannot compile the grammar: {e}")))?;
        let kinds = Kinds {
            grammar,
            tokens,
            generator,
            parser,
            matchers: HashMap::new(),
            cache: HashMap::new(),
        };
        let stats = WhiteboxStats {
            strategy: config.search,
            seeds: 0,
            inputs_run: 0,
            traced_runs: 0,
            conditions: 0,
            queries: 0,
            unsat: 0,
            unsat_pct: 0.0,
            duplicates: 0,
            children: 0,
            solver: TokenSolveStats::default(),
            solver_ms_per_call: 0.0,
            solver_time_pct: 0.0,
            elapsed_s: 0.0,
            token_kinds: tokens.kinds().len(),
            stages: config
                .stages
                .iter()
                .map(|s| StageStats {
                    stage: s.clone(),
                    reach_runs: 0,
                    reach_pct: 0.0,
                    covered: BTreeMap::new(),
                    covered_lines: 0,
                })
                .collect(),
        };
        Ok(WhiteboxSearch {
            solver: TokenSolver::new(tokens.grammar(), tokens.kinds().len()),
            seeding: config.seeds,
            config,
            tokens,
            kinds,
            seed,
            draws: 0,
            rng: Generator::rng_for(seed ^ 0xB17E_B0C5, 0),
            queue: BinaryHeap::new(),
            nodes: HashMap::new(),
            next_id: 0,
            seen: HashSet::new(),
            expanding: None,
            running: None,
            stats,
            started: None,
        })
    }

    /// The figures so far (final once the campaign has run).
    pub fn stats(&self) -> WhiteboxStats {
        let mut ws = self.stats.clone();
        ws.elapsed_s = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        ws.solver = self.solver.stats().clone();
        ws.unsat_pct = 100.0 * ws.unsat as f64 / ws.queries.max(1) as f64;
        let solved = ws.solver.calls - ws.solver.cache_hits;
        ws.solver_ms_per_call = ws.solver.time.as_secs_f64() * 1000.0 / solved.max(1) as f64;
        ws.solver_time_pct = 100.0 * ws.solver.time.as_secs_f64() / ws.elapsed_s.max(1e-9);
        for st in &mut ws.stages {
            st.reach_pct = 100.0 * st.reach_runs as f64 / ws.inputs_run.max(1) as f64;
            st.covered_lines = st.covered.values().map(BTreeSet::len).sum();
        }
        ws
    }

    /// Stream `i` of the seed generator: a fresh tree of the campaign's producer with a
    /// token count in the range (the closest of 200 draws otherwise); `None` if no
    /// stream gave a tree (the solver found none).
    fn draw(&mut self, ctx: &Ctx<'_, '_>) -> Option<Vec<u8>> {
        let (lo, hi) = self.config.seed_tokens;
        let mut best: Option<(usize, Vec<u8>)> = None;
        for _ in 0..200 {
            let mut rng = Generator::rng_for(self.seed ^ 0x5EED_70CE, self.draws);
            self.draws += 1;
            let Some(tree) = ctx.fresh(&mut rng, None) else {
                continue;
            };
            let n = tree_tokens(&tree, self.tokens).len();
            let miss = if n < lo { lo - n } else { n.saturating_sub(hi) };
            if best.as_ref().is_none_or(|(m, _)| miss < *m) {
                best = Some((miss, tree.bytes().to_vec()));
            }
            if miss == 0 {
                break;
            }
        }
        best.map(|(_, bytes)| bytes)
    }

    /// The next child of the node being expanded: the next condition negated, solved
    /// and put into tokens; `None` when its conditions are done (or the campaign stops).
    fn next_child(&mut self, ctx: &Ctx<'_, '_>) -> Option<Candidate> {
        let exp = self.expanding.as_mut()?;
        while exp.next < exp.conds.len() {
            if ctx.stopping() {
                return None;
            }
            let i = exp.next;
            exp.next += 1;
            let query = exp.conds[..i]
                .iter()
                .map(|c| (c, c.equal))
                .chain(std::iter::once((&exp.conds[i], !exp.conds[i].equal)));
            let Some(pos) = positions(query) else {
                self.stats.queries += 1;
                self.stats.unsat += 1;
                continue;
            };
            if !self.seen.insert(pos.clone()) {
                self.stats.duplicates += 1;
                continue;
            }
            self.stats.queries += 1;
            let kinds = &mut self.kinds;
            let rng = &mut self.rng;
            let child: Option<Vec<String>> = match self.config.search {
                Search::Whitebox => {
                    let sets: Vec<TokenSet> = pos.iter().map(|p| kinds.set_of(p)).collect();
                    self.solver.solve(&sets).map(|witness| {
                        witness
                            .iter()
                            .enumerate()
                            .map(|(j, &k)| {
                                kinds.value(
                                    k,
                                    pos.get(j),
                                    exp.parent_texts.get(j).map(String::as_str),
                                    rng,
                                )
                            })
                            .collect()
                    })
                }
                Search::WhiteboxNoGrammar => no_grammar_child(kinds, &pos, &exp.parent_texts, rng),
                Search::BlackboxTokens => None,
            };
            let Some(child) = child else {
                self.stats.unsat += 1;
                continue;
            };
            self.stats.children += 1;
            self.running = Some(i + 1);
            return Some(Candidate::bytes(
                Tokens::detokenize(&child),
                self.config.search.op(),
                None,
            ));
        }
        None
    }
}

impl crate::strategy::Strategy for WhiteboxSearch<'_> {
    fn name(&self) -> &'static str {
        self.config.search.op()
    }

    fn wants_features(&self) -> bool {
        false
    }

    fn next(&mut self, ctx: &Ctx<'_, '_>, _rng: &mut GenRng) -> Option<Candidate> {
        self.started.get_or_insert_with(Instant::now);
        // An input given last and not reported ran into an executor error: dropped.
        self.running = None;
        if self.config.search == Search::BlackboxTokens {
            let op = self.config.search.op();
            return Some(Candidate::bytes(self.draw(ctx)?, op, None));
        }
        loop {
            if ctx.stopping() {
                return None;
            }
            if let Some(child) = self.next_child(ctx) {
                return Some(child);
            }
            self.expanding = None;
            if self.seeding > 0 || self.queue.is_empty() {
                // The first seeds, then one more whenever the queue is empty; seeds
                // wait until all are run (their scores decide the order).
                let seed = self.draw(ctx)?;
                self.seeding = self.seeding.saturating_sub(1);
                self.stats.seeds += 1;
                self.running = Some(0);
                return Some(Candidate::bytes(seed, "seed", None));
            }
            let Some((_, Reverse(id))) = self.queue.pop() else {
                continue;
            };
            let Some(node) = self.nodes.remove(&id) else {
                continue;
            };
            let Some(trace) = &node.trace else { continue };
            // The path condition: distinct conditions, first occurrence first.
            let mut distinct = HashSet::new();
            let conds: Vec<TokenCond> = trace
                .conds
                .iter()
                .filter(|c| distinct.insert(*c))
                .take(self.config.max_conditions)
                .cloned()
                .collect();
            self.stats.conditions += conds.len() as u64;
            self.expanding = Some(Expansion {
                parent_texts: token_texts(&node.bytes, trace),
                conds,
                next: node.bound,
            });
        }
    }

    fn observe(&mut self, report: &RunReport<'_>) {
        self.stats.inputs_run += 1;
        if let Trace::Python(t) = report.trace {
            for st in &mut self.stats.stages {
                let mut reached = false;
                for f in &t.files {
                    for &l in &f.lines {
                        if st.stage.covers(&f.path, l) {
                            reached = true;
                            st.covered.entry(f.path.clone()).or_default().insert(l);
                        }
                    }
                }
                st.reach_runs += u64::from(reached);
            }
        }
        let trace = report.token_trace.cloned();
        self.stats.traced_runs += u64::from(trace.is_some());
        let Some(bound) = self.running.take() else {
            return;
        };
        let novelty = &report.novelty;
        let score = novelty.new_lines + novelty.new_branches + novelty.new_edges;
        let id = self.next_id;
        self.next_id += 1;
        self.nodes.insert(
            id,
            Node {
                bytes: report.input.bytes().to_vec(),
                trace,
                bound,
            },
        );
        self.queue.push((score, Reverse(id)));
    }

    fn summary(&self) -> serde_json::Value {
        let mut ws = self.stats();
        // The covered lines go to whitebox.json only.
        for st in &mut ws.stages {
            st.covered.clear();
        }
        serde_json::to_value(&ws).expect("stats serialize")
    }

    fn session_files(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut json = serde_json::to_string_pretty(&self.stats()).expect("stats serialize");
        json.push('\n');
        vec![("whitebox.json".to_string(), json.into_bytes())]
    }
}

/// The lines `thicket fuzz` prints after a whitebox campaign, from the figures its
/// strategy put into `stats.json` ([`WhiteboxSearch`]'s summary).
pub fn summary_lines(summary: &serde_json::Value) -> Vec<String> {
    let num = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let mut lines = vec![format!(
        "{}: {} inputs ({} seeds, {} children), {} queries, {:.1}% UNSAT, {} duplicates; \
         solver {:.3} ms per call, {:.1}% of the time",
        summary["strategy"].as_str().unwrap_or("whitebox"),
        num(&summary["inputs_run"]),
        num(&summary["seeds"]),
        num(&summary["children"]),
        num(&summary["queries"]),
        num(&summary["unsat_pct"]),
        num(&summary["duplicates"]),
        num(&summary["solver_ms_per_call"]),
        num(&summary["solver_time_pct"]),
    )];
    for st in summary["stages"].as_array().into_iter().flatten() {
        lines.push(format!(
            "stage {}: reach {:.1}%, {} lines",
            st["name"].as_str().unwrap_or("?"),
            num(&st["reach_pct"]),
            num(&st["covered_lines"]),
        ));
    }
    lines
}

/// Whitebox without the grammar: the parent's tokens, each constrained position given
/// a value that satisfies it (kept if the parent's does), cut where only the end of
/// input is allowed; `None` if a position allows nothing.
fn no_grammar_child(
    kinds: &mut Kinds<'_>,
    pos: &[Pos],
    parent: &[String],
    rng: &mut GenRng,
) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let n = pos.len().max(parent.len());
    for i in 0..n {
        let p = pos.get(i);
        let current = parent.get(i);
        let fits = |v: &str| {
            p.is_none_or(|p| {
                p.required.as_deref().is_none_or(|r| r == v) && !p.forbidden.contains(v)
            })
        };
        match current {
            Some(v) if fits(v) => out.push(v.clone()),
            _ => {
                let p = p.expect("a position past the parent's end is constrained");
                if let Some(r) = &p.required {
                    if r.is_empty() {
                        break;
                    }
                    out.push(r.clone());
                    continue;
                }
                if current.is_none() && p.forbidden.iter().all(|f| !f.is_empty()) {
                    // Past the parent's end, and the end of input is allowed: done.
                    break;
                }
                // Any token kind whose value is not forbidden.
                let count = kinds.tokens.kinds().len() as u32;
                let mut picked = None;
                for _ in 0..16 {
                    let k = thicket_gen::below(rng, count);
                    let v = kinds.value(k, Some(p), None, rng);
                    if fits(&v) {
                        picked = Some(v);
                        break;
                    }
                }
                out.push(picked?);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_and_globs() {
        let s = Stage::parse("lexer=*/pyjsparser/parser.py:61-991").unwrap();
        assert_eq!(s.lines, Some((61, 991)));
        assert!(s.covers("/x/site-packages/pyjsparser/parser.py", 61));
        assert!(!s.covers("/x/site-packages/pyjsparser/parser.py", 992));
        assert!(!s.covers("/x/pyjsparser/std_nodes.py", 100));
        let s = Stage::parse("cg=*/js2py/translators/*").unwrap();
        assert!(s.covers("/a/js2py/translators/translator.py", 1));
        assert!(Stage::parse("nothing").is_err());
        assert!(Stage::parse("x=a:1-b").is_err());
    }

    #[test]
    fn value_conditions_combine_or_contradict() {
        let c = |index, value: &str, equal| TokenCond {
            index,
            value: value.into(),
            equal,
        };
        let (a, b, d) = (c(0, "(", true), c(0, "[", false), c(2, ")", false));
        let pos = positions([(&a, true), (&b, false), (&d, false)].into_iter()).unwrap();
        assert_eq!(pos.len(), 3);
        assert_eq!(pos[0].required.as_deref(), Some("("));
        assert_eq!(pos[1], Pos::default());
        assert!(positions([(&a, true), (&a, false)].into_iter()).is_none());
        assert!(positions([(&a, true), (&b, true)].into_iter()).is_none());
    }
}
