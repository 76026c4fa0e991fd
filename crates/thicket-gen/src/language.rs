//! How many distinct inputs a generator can make, when they are few: what
//! `generate --unique` needs to stop once a small language is exhausted (`"a" | "b" |
//! "c"` has three inputs, and asking for ten million unique ones should say so at once,
//! not draw forever).
//!
//! Derivations are counted first, as the generator makes them: a rule reference costs
//! one level of the depth limit, repetitions (of the grammar and of its regexes) go up
//! to the repetition cap. That is a dynamic programme over the expressions, one level
//! per depth budget, with saturating counts, and costs nothing like listing. Only when
//! there are at most `limit` derivations are their texts listed (with duplicates
//! removed at every node, since an ambiguous grammar derives a text more than once;
//! within a budget of bytes, since few derivations can still be long texts) and
//! counted. Inputs that `max_size` or `max_nodes` close off can make the
//! generator's own set smaller still: the figure is then an upper bound.

use crate::Generator;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use thicket_grammar::{Expr, ExprId, UNBOUNDED};

/// The texts of one expression, distinct.
type Texts = Rc<Vec<Vec<u8>>>;

/// How many distinct inputs a generator makes (see [`Generator::distinct_inputs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistinctInputs {
    /// Distinct texts within the generator's depth limit and repetition cap.
    pub count: u64,
    /// Whether the grammar has more beyond those limits (a deeper derivation, a longer
    /// repetition): raising them would give more.
    pub more_beyond_limits: bool,
}

pub(crate) fn distinct_inputs(generator: &Generator<'_>, limit: usize) -> Option<DistinctInputs> {
    let grammar = generator.grammar();
    let config = generator.config();
    let cap = config.max_repetitions;
    let limit = limit as u128;
    // Derivations of each regex terminal, as the regex sampler bounds it.
    let regex_counts: Vec<u128> = grammar
        .expr_ids()
        .map(|id| match grammar.expr(id) {
            Expr::Regex(r) => regex_count(&r.hir, cap),
            _ => 0,
        })
        .collect();
    let depth = config.max_depth as usize;
    let mut levels: Vec<Vec<u128>> = Vec::with_capacity(depth + 1);
    for r in 0..=depth {
        let mut level: Vec<u128> = Vec::with_capacity(grammar.expr_count());
        for id in grammar.expr_ids() {
            let count = match grammar.expr(id) {
                Expr::Literal(_) => 1,
                Expr::Regex(_) => regex_counts[id.index()],
                Expr::Ref(s) if r > 0 => levels[r - 1][grammar.rule(*s).body.index()],
                Expr::Ref(_) => 0,
                Expr::Alt(alts) => alts
                    .iter()
                    .fold(0u128, |n, a| n.saturating_add(level[a.index()])),
                Expr::Seq(items) => items
                    .iter()
                    .fold(1u128, |n, i| n.saturating_mul(level[i.index()])),
                Expr::Repeat(rep) => {
                    let cap = rep.min.max(cap);
                    let max = rep.max.map_or(cap, |m| m.min(cap));
                    repetitions(level[rep.item.index()], rep.min, max)
                }
            };
            level.push(count);
        }
        levels.push(level);
    }
    let root = grammar.root();
    if levels[depth][root.index()] > limit {
        return None;
    }
    let mut lister = Lister {
        generator,
        levels: &levels,
        memo: HashMap::new(),
        budget: Budget(std::cell::Cell::new(LISTING_BYTES)),
        cut: false,
    };
    let count = lister.texts(root, depth)?.len() as u64;
    Some(DistinctInputs {
        count,
        more_beyond_limits: lister.cut,
    })
}

/// Sum of `item^k` for `k` in `min..=max`, saturating: the derivations of a
/// repetition whose item has `item` of them.
fn repetitions(item: u128, min: u32, max: u32) -> u128 {
    if max < min {
        return 0;
    }
    match item {
        0 => u128::from(min == 0),
        1 => u128::from(max - min + 1),
        _ => {
            let mut total = 0u128;
            let mut power = 1u128;
            for k in 0..=max {
                if k >= min {
                    total = total.saturating_add(power);
                }
                if total == u128::MAX {
                    break;
                }
                power = power.saturating_mul(item);
            }
            total
        }
    }
}

/// Matches of a regex as the generator's sampler draws them (repetitions capped at
/// `cap` when unbounded), counted with multiplicity, saturating.
fn regex_count(hir: &Hir, cap: u32) -> u128 {
    match hir.kind() {
        HirKind::Empty | HirKind::Literal(_) => 1,
        HirKind::Look(_) => 0,
        HirKind::Capture(c) => regex_count(&c.sub, cap),
        HirKind::Concat(items) => items
            .iter()
            .fold(1u128, |n, h| n.saturating_mul(regex_count(h, cap))),
        HirKind::Alternation(alts) => alts
            .iter()
            .fold(0u128, |n, h| n.saturating_add(regex_count(h, cap))),
        HirKind::Repetition(rep) => {
            let bound = rep.min.max(cap);
            let max = rep.max.map_or(bound, |m| m.min(bound));
            repetitions(regex_count(&rep.sub, cap), rep.min, max)
        }
        HirKind::Class(class) => class_members(class).count(),
    }
}

/// The members of a class (code points without surrogates, or bytes), as ranges.
struct Members {
    ranges: Vec<(u32, u32)>,
    unicode: bool,
}

impl Members {
    fn count(&self) -> u128 {
        self.ranges
            .iter()
            .map(|&(s, e)| u128::from(e - s + 1))
            .sum()
    }

    fn texts(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for &(s, e) in &self.ranges {
            for value in s..=e {
                if self.unicode {
                    let c = char::from_u32(value).expect("surrogates were left out");
                    out.push(c.to_string().into_bytes());
                } else {
                    out.push(vec![value as u8]);
                }
            }
        }
        out
    }
}

fn class_members(class: &Class) -> Members {
    match class {
        Class::Unicode(c) => Members {
            ranges: c
                .ranges()
                .iter()
                .flat_map(|r| {
                    let (start, end) = (r.start() as u32, r.end() as u32);
                    let low = (start < 0xD800).then(|| (start, end.min(0xD7FF)));
                    let high = (end > 0xDFFF).then(|| (start.max(0xE000), end));
                    low.into_iter().chain(high)
                })
                .collect(),
            unicode: true,
        },
        Class::Bytes(c) => Members {
            ranges: c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect(),
            unicode: false,
        },
    }
}

/// Bytes of text listing may build in all: few derivations can still be long texts
/// (a long literal in each), and those are not worth listing.
const LISTING_BYTES: u64 = 64 << 20;

/// What is left of [`LISTING_BYTES`].
struct Budget(std::cell::Cell<u64>);

impl Budget {
    /// Takes `bytes` from the budget; `None` once it is spent.
    fn take(&self, bytes: usize) -> Option<()> {
        let left = self.0.get().checked_sub(bytes as u64)?;
        self.0.set(left);
        Some(())
    }
}

/// Every text of `parts`' texts concatenated in order, distinct; `None` if building
/// them would spend the budget.
fn product(parts: &[Texts], budget: &Budget) -> Option<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<u8>> = vec![Vec::new()];
    for part in parts {
        let mut next = HashSet::with_capacity(out.len() * part.len());
        for prefix in &out {
            for text in part.iter() {
                budget.take(prefix.len() + text.len())?;
                let mut t = prefix.clone();
                t.extend_from_slice(text);
                next.insert(t);
            }
        }
        out = next.into_iter().collect();
    }
    Some(out)
}

fn union(parts: impl IntoIterator<Item = Vec<Vec<u8>>>) -> Vec<Vec<u8>> {
    let set: HashSet<Vec<u8>> = parts.into_iter().flatten().collect();
    set.into_iter().collect()
}

/// Matches of a regex as the sampler draws them, distinct (called only when they are
/// few: the count came first); `None` if the budget is spent.
fn regex_texts(hir: &Hir, cap: u32, budget: &Budget) -> Option<Vec<Vec<u8>>> {
    Some(match hir.kind() {
        HirKind::Empty => vec![Vec::new()],
        HirKind::Literal(lit) => vec![lit.0.to_vec()],
        HirKind::Look(_) => Vec::new(),
        HirKind::Capture(c) => regex_texts(&c.sub, cap, budget)?,
        HirKind::Concat(items) => {
            let parts = items
                .iter()
                .map(|h| regex_texts(h, cap, budget).map(Rc::new))
                .collect::<Option<Vec<Texts>>>()?;
            product(&parts, budget)?
        }
        HirKind::Alternation(alts) => union(
            alts.iter()
                .map(|h| regex_texts(h, cap, budget))
                .collect::<Option<Vec<_>>>()?,
        ),
        HirKind::Repetition(rep) => {
            let bound = rep.min.max(cap);
            let max = rep.max.map_or(bound, |m| m.min(bound));
            let item = Rc::new(regex_texts(&rep.sub, cap, budget)?);
            repeat_texts(&item, rep.min, max, budget)?
        }
        HirKind::Class(class) => class_members(class).texts(),
    })
}

/// Whether the sampler's cap leaves out matches of a regex: a repetition of a part
/// with a nonempty match, unbounded or bounded above the cap.
fn regex_capped(hir: &Hir, cap: u32) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) | HirKind::Class(_) => false,
        HirKind::Capture(c) => regex_capped(&c.sub, cap),
        HirKind::Concat(items) | HirKind::Alternation(items) => {
            items.iter().any(|h| regex_capped(h, cap))
        }
        HirKind::Repetition(rep) => {
            let bound = rep.min.max(cap);
            let nonempty = rep.sub.properties().maximum_len() != Some(0);
            (nonempty && rep.max.is_none_or(|m| m > bound)) || regex_capped(&rep.sub, cap)
        }
    }
}

/// The texts of `min..=max` items, distinct; `None` if the budget is spent.
fn repeat_texts(item: &Texts, min: u32, max: u32, budget: &Budget) -> Option<Vec<Vec<u8>>> {
    let mut all: HashSet<Vec<u8>> = HashSet::new();
    let mut power: Vec<Vec<u8>> = vec![Vec::new()];
    for k in 0..=max {
        if k >= min {
            all.extend(power.iter().cloned());
        }
        if k < max {
            power = product(&[Rc::new(power), item.clone()], budget)?;
        }
    }
    Some(all.into_iter().collect())
}

/// Lists the texts of expressions at depth budgets, once each.
struct Lister<'a, 'g> {
    generator: &'a Generator<'g>,
    levels: &'a [Vec<u128>],
    memo: HashMap<(ExprId, usize), Texts>,
    budget: Budget,
    /// Whether a limit left out texts of a part listed: a derivation deeper than the
    /// budget, or a repetition (of the grammar or a regex) longer than the cap.
    cut: bool,
}

impl Lister<'_, '_> {
    /// The distinct texts of `expr` with `r` rule expansions left; `None` if listing
    /// them would spend the budget.
    fn texts(&mut self, expr: ExprId, r: usize) -> Option<Texts> {
        if let Some(known) = self.memo.get(&(expr, r)) {
            return Some(known.clone());
        }
        let grammar = self.generator.grammar();
        let cap = self.generator.config().max_repetitions;
        let levels = self.levels;
        let count = |e: ExprId| levels[r][e.index()];
        let texts: Vec<Vec<u8>> = match grammar.expr(expr) {
            _ if count(expr) == 0 => {
                // Derivable, only not within the depth left.
                self.cut |= self.generator.analysis().expr_min_depth(expr) != UNBOUNDED;
                Vec::new()
            }
            Expr::Literal(bytes) => vec![bytes.to_vec()],
            Expr::Regex(re) => {
                self.cut |= regex_capped(&re.hir, cap);
                regex_texts(&re.hir, cap, &self.budget)?
            }
            Expr::Ref(s) => {
                let body = self.texts(grammar.rule(*s).body, r - 1)?;
                return Some(self.remember(expr, r, body));
            }
            Expr::Alt(alts) => {
                let mut parts = Vec::with_capacity(alts.len());
                for &a in alts.iter() {
                    parts.push(self.texts(a, r)?.as_ref().clone());
                }
                union(parts)
            }
            Expr::Seq(items) => {
                let parts = items
                    .iter()
                    .map(|&i| self.texts(i, r))
                    .collect::<Option<Vec<Texts>>>()?;
                product(&parts, &self.budget)?
            }
            Expr::Repeat(rep) => {
                let rep_cap = rep.min.max(cap);
                let max = rep.max.map_or(rep_cap, |m| m.min(rep_cap));
                let item = self.texts(rep.item, r)?;
                self.cut |= rep.max.is_none_or(|m| m > max) && item.iter().any(|t| !t.is_empty());
                repeat_texts(&item, rep.min, max, &self.budget)?
            }
        };
        Some(self.remember(expr, r, Rc::new(texts)))
    }

    fn remember(&mut self, expr: ExprId, r: usize, texts: Texts) -> Texts {
        self.memo.insert((expr, r), texts.clone());
        texts
    }
}

#[cfg(test)]
mod tests {
    use crate::{GenConfig, Generator};

    /// (distinct inputs, whether there are more beyond the limits).
    fn distinct(text: &str, limit: usize) -> Option<(u64, bool)> {
        let spec = thicket_grammar::load_spec_bytes("l.fan", text.as_bytes(), &Default::default())
            .unwrap();
        let found = Generator::new(&spec.grammar, GenConfig::default())
            .unwrap()
            .distinct_inputs(limit)?;
        Some((found.count, found.more_beyond_limits))
    }

    #[test]
    fn small_languages_are_counted_and_large_ones_are_not_listed() {
        assert_eq!(
            distinct("<start> ::= \"a\" | \"b\" | \"c\"\n", 1000),
            Some((3, false))
        );
        // Ambiguous: "ab" derives twice.
        assert_eq!(
            distinct(
                "<start> ::= <x> <y>\n<x> ::= \"a\" | \"ab\"\n<y> ::= \"b\" | \"\"\n",
                1000
            ),
            Some((3, false))
        );
        assert_eq!(
            distinct("<start> ::= r\"[0-9]\" \"-\" r\"[ab]?\"\n", 1000),
            Some((30, false))
        );
        // Up to the repetition cap (5): "", "x", ..., "xxxxx"; more beyond it.
        assert_eq!(distinct("<start> ::= \"x\"*\n", 1000), Some((6, true)));
        assert_eq!(
            distinct("<start> ::= (\"\" | \"y\")*\n", 1000),
            Some((6, true))
        );
        assert_eq!(distinct("<start> ::= \"\"*\n", 1000), Some((1, false)));
        assert_eq!(distinct("<start> ::= r\"z{2,9}\"\n", 1000), Some((4, true)));
        // Recursion bounded by the depth limit.
        assert_eq!(
            distinct("<start> ::= \"(\" <start> \")\" | \"\"\n", 1000),
            Some((30, true))
        );
        assert_eq!(distinct("<start> ::= r\"[a-z]+\"\n", 1000), None);
        assert_eq!(distinct("<start> ::= \"a\" | \"b\" | \"c\"\n", 2), None);
    }
}
