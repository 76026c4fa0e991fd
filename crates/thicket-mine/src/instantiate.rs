//! Step-by-step instantiation of the catalog's placeholders with pruning.

use crate::catalog::{Catalog, Kind, Placeholder, placeholders};
use crate::{MineConfig, StepCount};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;
use thicket_constraint::{Checker, Constraint, Predicates, TreeView};
use thicket_grammar::{Expr, ExprId, Grammar, Reach, SymbolId};
use thicket_tree::DerivationTree;

/// A partly instantiated pattern: its text and the types of its variables so far.
#[derive(Clone, Debug)]
struct Partial {
    pattern: usize,
    text: String,
    types: Vec<(String, SymbolId)>,
}

impl Partial {
    fn type_of(&self, var: &str) -> Option<SymbolId> {
        self.types
            .iter()
            .rev()
            .find(|(v, _)| v == var)
            .map(|(_, s)| *s)
    }
    fn first(&self, kinds: &[Kind]) -> Option<Placeholder> {
        placeholders(&self.text)
            .ok()?
            .into_iter()
            .find(|p| kinds.contains(&p.kind))
    }
    fn replaced(&self, p: &Placeholder, with: &str) -> Partial {
        let mut text = self.text.clone();
        text.replace_range(p.range.clone(), with);
        Partial {
            text,
            ..self.clone()
        }
    }
}

/// What the learning set contains.
struct Index {
    /// Per symbol: occurs in some learning input.
    occurs: Vec<bool>,
    /// (outer, inner): a node of `inner` lies in (or is) a node of `outer`.
    inside: FxHashSet<(u32, u32)>,
    /// Per symbol: its texts, with the number of learning inputs they occur in.
    texts: Vec<FxHashMap<Vec<u8>, usize>>,
    /// Per symbol: the least and greatest length of its texts (characters).
    lens: Vec<Option<(i128, i128)>>,
}

/// Longest text kept as a string constant.
const MAX_STRING: usize = 40;
/// Distinct texts remembered per symbol.
const MAX_TEXTS: usize = 2_000;

impl Index {
    fn new(grammar: &Grammar, learning: &[&DerivationTree]) -> Index {
        let n = grammar.rules().len();
        let mut index = Index {
            occurs: vec![false; n],
            inside: FxHashSet::default(),
            texts: vec![FxHashMap::default(); n],
            lens: vec![None; n],
        };
        for tree in learning {
            let view = TreeView::new(tree, grammar);
            let mut seen: FxHashSet<(u32, Vec<u8>)> = FxHashSet::default();
            for node in tree.descendants(tree.root()) {
                let Some(sym) = view.symbol(node) else {
                    continue;
                };
                let s = sym.index() as u32;
                index.occurs[sym.index()] = true;
                index.inside.insert((s, s));
                for a in view.ancestors(node) {
                    if let Some(outer) = view.symbol(a) {
                        index.inside.insert((outer.index() as u32, s));
                    }
                }
                let text = tree.text(node);
                let len = String::from_utf8_lossy(text).chars().count() as i128;
                let range = &mut index.lens[sym.index()];
                *range = Some(range.map_or((len, len), |(lo, hi)| (lo.min(len), hi.max(len))));
                if text.len() <= MAX_STRING && seen.insert((s, text.to_vec())) {
                    let texts = &mut index.texts[sym.index()];
                    if texts.len() < MAX_TEXTS || texts.contains_key(text) {
                        *texts.entry(text.to_vec()).or_default() += 1;
                    }
                }
            }
        }
        index
    }

    /// Texts of `sym`, most widespread first, then shortest, then in byte order.
    fn strings(&self, sym: SymbolId, max: usize, min_inputs: usize) -> Vec<String> {
        let mut all: Vec<(&Vec<u8>, &usize)> = self.texts[sym.index()]
            .iter()
            .filter(|(_, n)| **n >= min_inputs)
            .collect();
        all.sort_by(|a, b| {
            b.1.cmp(a.1)
                .then(a.0.len().cmp(&b.0.len()))
                .then(a.0.cmp(b.0))
        });
        all.into_iter()
            .filter_map(|(t, _)| std::str::from_utf8(t).ok())
            .filter(|t| !t.is_empty())
            .take(max)
            .map(str::to_string)
            .collect()
    }
}

/// An ISLa string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The quantifier around a `<?NONTERMINAL>` that ends at `end`: its variable (if
/// named) and the variable it ranges `in` (if any).
fn quantifier_after(text: &str, end: usize) -> (Option<String>, Option<String>) {
    let rest = &text[end..];
    let trimmed = rest.trim_start();
    let var: String = trimmed
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let mut after = &trimmed[var.len()..];
    let var = (!var.is_empty() && !matches!(var.as_str(), "in")).then_some(var);
    // Skip a match expression string.
    if let Some(s) = after.trim_start().strip_prefix('=') {
        let s = s.trim_start();
        if let Some(body) = s.strip_prefix('"') {
            let mut escaped = false;
            let mut close = body.len();
            for (i, c) in body.char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => {
                        close = i + 1;
                        break;
                    }
                    _ => {}
                }
            }
            after = &body[close..];
        }
    }
    let container = after
        .trim_start()
        .strip_prefix("in")
        .filter(|r| r.starts_with(char::is_whitespace))
        .map(|r| {
            r.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|c| !c.is_empty());
    (var, container)
}

/// The type of the quantifier whose match expression holds the placeholder at `at`:
/// `<type> name="` right before it.
fn match_type(grammar: &Grammar, text: &str, at: usize) -> Option<SymbolId> {
    let before = text[..at]
        .strip_suffix('"')?
        .trim_end()
        .strip_suffix('=')?
        .trim_end();
    let before = before.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let before = before.trim_end().strip_suffix('>')?;
    let open = before.rfind('<')?;
    grammar.symbol(&before[open + 1..])
}

/// A piece of a match-expression shape.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Lit(String),
    Ref(SymbolId),
    Opt(Vec<Item>),
}

/// The alternatives of a rule as item sequences (those a match expression can spell:
/// literals and references only).
fn alternatives(grammar: &Grammar, sym: SymbolId) -> Vec<Vec<Item>> {
    let body = grammar.rule(sym).body;
    let alts: Vec<ExprId> = match grammar.expr(body) {
        Expr::Alt(a) => a.to_vec(),
        _ => vec![body],
    };
    let item = |e: ExprId| -> Option<Item> {
        match grammar.expr(e) {
            Expr::Ref(s) => Some(Item::Ref(*s)),
            Expr::Literal(b) => {
                let s = std::str::from_utf8(b).ok()?;
                // Match-expression syntax gives these characters meanings; a `<` is
                // text unless a name follows it.
                let name_after_lt = s
                    .as_bytes()
                    .windows(2)
                    .any(|w| w[0] == b'<' && (w[1].is_ascii_alphanumeric() || w[1] == b'_'));
                (!s.contains(['{', '}', '[', ']']) && !name_after_lt)
                    .then(|| Item::Lit(s.to_string()))
            }
            _ => None,
        }
    };
    let mut out: Vec<Vec<Item>> = alts
        .into_iter()
        .filter_map(|a| match grammar.expr(a) {
            Expr::Seq(items) => items.iter().map(|&e| item(e)).collect(),
            _ => item(a).map(|i| vec![i]),
        })
        .collect();
    // Two alternatives that differ by an inserted run: also their merge with `[...]`.
    let mut merged = Vec::new();
    for a in &out {
        for b in &out {
            if b.len() <= a.len() {
                continue;
            }
            let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            let suf = a[pre..]
                .iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y)
                .count();
            if pre + suf == a.len() {
                let mut m = b[..pre].to_vec();
                m.push(Item::Opt(b[pre..b.len() - suf].to_vec()));
                m.extend_from_slice(&b[b.len() - suf..]);
                merged.push(m);
            }
        }
    }
    out.extend(merged);
    out
}

/// Match-expression shapes of `sym`: its alternatives, with each reference to a
/// non-recursive rule left as is or expanded into one of that rule's alternatives.
fn shapes(grammar: &Grammar, reach: &Reach, sym: SymbolId, max: usize) -> Vec<Vec<Item>> {
    let mut out = Vec::new();
    for alt in alternatives(grammar, sym) {
        let mut partial: Vec<Vec<Item>> = vec![Vec::new()];
        for item in alt {
            let options: Vec<Vec<Item>> = match &item {
                Item::Ref(s) if !reach.reaches(grammar.rule(*s).body, *s) => {
                    let mut o = vec![vec![item.clone()]];
                    o.extend(alternatives(grammar, *s));
                    o
                }
                _ => vec![vec![item.clone()]],
            };
            let mut next = Vec::new();
            for p in &partial {
                for o in &options {
                    if next.len() >= max {
                        break;
                    }
                    let mut q = p.clone();
                    q.extend(o.iter().cloned());
                    next.push(q);
                }
            }
            partial = next;
        }
        out.extend(partial);
        if out.len() >= max {
            out.truncate(max);
            break;
        }
    }
    out
}

/// The match expressions of a shape binding `vars`, in order, to references outside
/// optional parts (every choice of positions).
fn bind(
    grammar: &Grammar,
    shape: &[Item],
    vars: &[String],
    out: &mut Vec<(String, Vec<(String, SymbolId)>)>,
    max: usize,
) {
    let slots: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::Ref(_)))
        .map(|(i, _)| i)
        .collect();
    let k = vars.len();
    if slots.len() < k {
        return;
    }
    // Increasing position tuples.
    let mut pick: Vec<usize> = (0..k).collect();
    loop {
        if out.len() >= max {
            return;
        }
        let mut text = String::new();
        let mut types = Vec::new();
        for (i, item) in shape.iter().enumerate() {
            if let Some(v) = pick.iter().position(|&p| slots[p] == i) {
                let Item::Ref(s) = item else {
                    unreachable!("slots are references")
                };
                text.push_str(&format!("{{<{}> {}}}", grammar.rule(*s).name, vars[v]));
                types.push((vars[v].clone(), *s));
            } else {
                write_item(grammar, item, &mut text);
            }
        }
        out.push((text, types));
        // Next combination.
        let mut i = k;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            if pick[i] < slots.len() - k + i {
                pick[i] += 1;
                for j in i + 1..k {
                    pick[j] = pick[j - 1] + 1;
                }
                break;
            }
        }
    }
}

fn write_item(grammar: &Grammar, item: &Item, out: &mut String) {
    match item {
        Item::Lit(s) => {
            let q = quote(s);
            out.push_str(&q[1..q.len() - 1]);
        }
        Item::Ref(s) => out.push_str(&format!("<{}>", grammar.rule(*s).name)),
        Item::Opt(items) => {
            out.push('[');
            for i in items {
                write_item(grammar, i, out);
            }
            out.push(']');
        }
    }
}

/// Instantiates a catalog against a grammar and a learning set.
pub struct Instantiator<'a> {
    grammar: &'a Grammar,
    predicates: &'a Predicates,
    learning: Vec<TreeView<'a>>,
    index: Index,
    reach: Reach,
    config: &'a MineConfig,
    deadline: Option<Instant>,
    /// Whether the time budget stopped a step.
    pub timed_out: bool,
    /// Match expressions already probed on the learning set (the same type's
    /// expressions recur in every partial candidate that quantifies over it).
    probed: FxHashMap<String, bool>,
}

impl<'a> Instantiator<'a> {
    /// Indexes the learning set.
    pub fn new(
        grammar: &'a Grammar,
        predicates: &'a Predicates,
        learning: &[&'a DerivationTree],
        config: &'a MineConfig,
        deadline: Option<Instant>,
    ) -> Instantiator<'a> {
        Instantiator {
            grammar,
            predicates,
            learning: learning.iter().map(|t| TreeView::new(t, grammar)).collect(),
            index: Index::new(grammar, learning),
            reach: Reach::new(grammar),
            config,
            deadline,
            timed_out: false,
            probed: FxHashMap::default(),
        }
    }

    fn out_of_time(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() > d) {
            self.timed_out = true;
        }
        self.timed_out
    }

    fn compile(&self, text: &str) -> Option<Constraint> {
        thicket_constraint::from_text(self.grammar, self.predicates, "candidate", text).ok()
    }

    /// Whether some learning input satisfies `c`.
    fn some_learning_input(&self, c: &Constraint) -> bool {
        let checker = Checker::new(self.grammar, Vec::new()).with_budget(self.config.check_budget);
        self.learning.iter().any(|v| {
            let mut e = checker.evaluator(v, c);
            e.holds(&c.formula) && !e.exhausted()
        })
    }

    /// Every pattern instantiated: (pattern name, resolved candidate), pruned, counted
    /// per step in `steps`.
    pub fn run(
        &mut self,
        catalog: &Catalog,
        steps: &mut Vec<StepCount>,
        progress: &mut dyn FnMut(&str),
    ) -> Vec<(String, Constraint)> {
        let mut work: Vec<Partial> = catalog
            .patterns
            .iter()
            .enumerate()
            .map(|(i, p)| Partial {
                pattern: i,
                text: p.body.trim().to_string(),
                types: Vec::new(),
            })
            .collect();
        let step_kinds: [(&str, &[Kind]); 3] = [
            ("nonterminals", &[Kind::Nonterminal]),
            ("match expressions", &[Kind::MatchExpr]),
            (
                "strings and numbers",
                &[
                    Kind::String,
                    Kind::DStrings,
                    Kind::MaxLen,
                    Kind::MinLen,
                    Kind::MaxInt,
                    Kind::MinInt,
                ],
            ),
        ];
        for (name, kinds) in step_kinds {
            let mut count = StepCount {
                step: name.into(),
                ..StepCount::default()
            };
            let mut cut: std::collections::BTreeSet<String> = Default::default();
            // Instantiate one placeholder of these kinds at a time, pruning in between.
            loop {
                let mut per_pattern: FxHashMap<usize, usize> = FxHashMap::default();
                let (open, done): (Vec<Partial>, Vec<Partial>) =
                    work.into_iter().partition(|p| p.first(kinds).is_some());
                work = done;
                if open.is_empty() {
                    break;
                }
                for p in open {
                    if self.out_of_time() {
                        count.note = "time budget reached".into();
                        break;
                    }
                    let ph = p.first(kinds).expect("partitioned on it");
                    let (made, dropped) = self.expand(&p, &ph);
                    count.made += made.len() + dropped;
                    count.dropped += dropped;
                    // Each pattern gets its own share, so one that explodes cannot crowd
                    // out the others.
                    let have = per_pattern.entry(p.pattern).or_insert(0usize);
                    let room = self.config.max_candidates.saturating_sub(*have);
                    if made.len() > room {
                        count.dropped += made.len() - room;
                        cut.insert(catalog.patterns[p.pattern].name.clone());
                    }
                    *have += made.len().min(room);
                    work.extend(made.into_iter().take(room));
                }
                if self.timed_out {
                    break;
                }
            }
            if !cut.is_empty() {
                let names: Vec<String> = cut.into_iter().collect();
                count.note = format!(
                    "cut at --max-candidates {} per pattern: {}",
                    self.config.max_candidates,
                    names.join(", ")
                );
            }
            progress(&format!(
                "step {name}: made {}, dropped {}, {} candidates left{}",
                count.made,
                count.dropped,
                work.len(),
                if count.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", count.note)
                }
            ));
            steps.push(count);
        }
        // Resolve (type-check) and keep the finished ones a learning input satisfies.
        let mut seen = FxHashSet::default();
        let before = work.len();
        work.retain(|p| seen.insert(p.text.clone()));
        let duplicates = before - work.len();
        let compiled: Vec<Option<(String, Constraint, bool)>> = work
            .par_iter()
            .map(|p| {
                if self.deadline.is_some_and(|d| Instant::now() > d) {
                    return None;
                }
                let c = self.compile(&p.text)?;
                let ok = self.some_learning_input(&c);
                Some((catalog.patterns[p.pattern].name.clone(), c, ok))
            })
            .collect();
        if self.out_of_time() {
            progress(
                "step resolve: time budget reached; candidates not resolved by then are dropped",
            );
        }
        // Under the time budget, unresolved ones also count here.
        let ill_typed = compiled.iter().filter(|c| c.is_none()).count();
        let unsatisfied = compiled.iter().flatten().filter(|c| !c.2).count();
        let out: Vec<(String, Constraint)> = compiled
            .into_iter()
            .flatten()
            .filter(|c| c.2)
            .map(|(n, c, _)| (n, c))
            .collect();
        progress(&format!(
            "step resolve: {} candidates, {duplicates} duplicates, {ill_typed} ill-typed, \
             {unsatisfied} no learning input satisfies: {} left",
            before,
            out.len()
        ));
        steps.push(StepCount {
            step: "resolve".into(),
            made: before,
            dropped: duplicates + ill_typed + unsatisfied,
            note: format!("{duplicates} duplicates, {ill_typed} ill-typed, {unsatisfied} satisfied by no learning input"),
        });
        out
    }

    /// Conservative: every equality `a = b` between two typed variables needs a text
    /// that both types have in the learning set, else it never holds there.
    fn equalities_can_hold(&self, p: &Partial) -> bool {
        let words: Vec<&str> = p.text.split_whitespace().collect();
        words.windows(3).all(|w| {
            if w[1] != "=" {
                return true;
            }
            let a = w[0].trim_start_matches('(');
            let b = w[2].trim_end_matches(')');
            match (p.type_of(a), p.type_of(b)) {
                (Some(x), Some(y)) if x != y => {
                    let (tx, ty) = (&self.index.texts[x.index()], &self.index.texts[y.index()]);
                    tx.keys().any(|t| ty.contains_key(t))
                }
                _ => true,
            }
        })
    }

    /// The instances of one placeholder, and how many were dropped.
    fn expand(&mut self, p: &Partial, ph: &Placeholder) -> (Vec<Partial>, usize) {
        let g = self.grammar;
        let mut out = Vec::new();
        let mut dropped = 0;
        match ph.kind {
            Kind::Nonterminal => {
                let (var, container) = quantifier_after(&p.text, ph.range.end);
                let outer = match container.as_deref() {
                    None | Some("start") => None,
                    Some(c) => p.type_of(c),
                };
                for sym in g.symbols() {
                    let s = sym.index();
                    let fits = self.index.occurs[s]
                        && outer.is_none_or(|o| {
                            self.index.inside.contains(&(o.index() as u32, s as u32))
                        });
                    if !fits {
                        dropped += 1;
                        continue;
                    }
                    let mut q = p.replaced(ph, &format!("<{}>", g.rule(sym).name));
                    if let Some(v) = &var {
                        q.types.push((v.clone(), sym));
                    }
                    out.push(q);
                }
            }
            Kind::MatchExpr => {
                let Some(sym) = match_type(g, &p.text, ph.range.start) else {
                    return (Vec::new(), 1);
                };
                let mut exprs = Vec::new();
                for shape in shapes(g, &self.reach, sym, self.config.max_match_exprs) {
                    bind(g, &shape, &ph.args, &mut exprs, self.config.max_match_exprs);
                }
                for (text, types) in exprs {
                    // Conservative: the expression must match a subtree of the learning set.
                    let probe = format!(
                        "exists <{}> probe_match=\"{}\" in start: true",
                        g.rule(sym).name,
                        text
                    );
                    let matches = match self.probed.get(&probe) {
                        Some(&m) => m,
                        None => {
                            let m = self
                                .compile(&probe)
                                .is_some_and(|c| self.some_learning_input(&c));
                            self.probed.insert(probe, m);
                            m
                        }
                    };
                    if !matches {
                        dropped += 1;
                        continue;
                    }
                    let mut q = p.replaced(ph, &text);
                    q.types.extend(types);
                    if !self.equalities_can_hold(&q) {
                        dropped += 1;
                        continue;
                    }
                    out.push(q);
                }
            }
            Kind::String | Kind::DStrings => {
                let Some(sym) = p.type_of(&ph.args[0]) else {
                    return (Vec::new(), 1);
                };
                let min_inputs = if ph.kind == Kind::DStrings { 2 } else { 1 };
                let strings = self.index.strings(sym, self.config.max_strings, min_inputs);
                if ph.kind == Kind::DStrings {
                    let v = &ph.args[0];
                    let atom = if strings.is_empty() {
                        "false".to_string()
                    } else {
                        let parts: Vec<String> = strings
                            .iter()
                            .map(|s| format!("{v} = {}", quote(s)))
                            .collect();
                        format!("({})", parts.join(" or "))
                    };
                    out.push(p.replaced(ph, &atom));
                } else {
                    for s in strings {
                        out.push(p.replaced(ph, &quote(&s)));
                    }
                }
            }
            Kind::MaxLen | Kind::MinLen | Kind::MaxInt | Kind::MinInt => {
                let Some(sym) = p.type_of(&ph.args[0]) else {
                    return (Vec::new(), 1);
                };
                let texts = self.index.texts[sym.index()].keys();
                let value = match ph.kind {
                    Kind::MaxLen => self.index.lens[sym.index()].map(|r| r.1),
                    Kind::MinLen => self.index.lens[sym.index()].map(|r| r.0),
                    _ => {
                        let ints = texts.filter_map(|t| {
                            std::str::from_utf8(t).ok()?.trim().parse::<i128>().ok()
                        });
                        if ph.kind == Kind::MaxInt {
                            ints.max()
                        } else {
                            ints.min()
                        }
                    }
                };
                match value {
                    Some(v) if v >= 0 => out.push(p.replaced(ph, &v.to_string())),
                    Some(v) => out.push(p.replaced(ph, &format!("(- {})", -v))),
                    None => dropped += 1,
                }
            }
        }
        (out, dropped)
    }
}
