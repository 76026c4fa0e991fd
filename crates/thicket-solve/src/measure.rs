//! Subtrees of an exact measure: a given length (`str.len(x) = n`, in characters as
//! `str.len` counts them: UTF-8 characters, each byte of an invalid sequence one) or a
//! given number of `<needle>` nodes (`count(x, "<needle>", n)`).
//!
//! Both measures add up over a derivation (a node's measure is the sum of its
//! children's, plus one for a needle reference), so the values a node can take are a
//! dynamic programme over the grammar graph: for every expression and every depth budget
//! `r` (rule expansions still allowed), the set of achievable values up to a cap, as a
//! bitset. References read their rule's body one level down, so the table is built
//! level by level, and inside a level in expression-id order (children have smaller ids
//! than their parents). Generation then walks down choosing, at every alternative,
//! repetition count and split of a sequence, uniformly among the choices that keep the
//! target achievable; the depth budget shrinks at every reference, so it terminates on
//! any grammar, cycles of empty derivations included.
//!
//! Each expression has two sets: the values within the generator's repetition cap
//! (`--max-repetitions`, for the grammar's repetitions and its regexes'), and all the
//! values. The cap shapes random inputs; it is not part of the language, and a
//! constraint asking for a record of 7 fields, or a document of 2,000 characters, needs more
//! repetitions than the cap gives. A value within the cap is generated within it (the
//! shape the generator gives); one beyond it is generated beyond it, each part within
//! the cap where that part's value allows. The grammar's own bounds (`{2,4}`) and the
//! depth budget hold either way, and no length exceeds the generator's `max_size`.
//!
//! Regex terminals are generated at an exact length by the same choices inside the
//! regex (`regex_len.rs`).

use crate::bits::{self, Bits};
use crate::regex_len::RegexLengths;
use rand::Rng;
use thicket_gen::{Generator, RegexSampler, below};
use thicket_grammar::{Expr, ExprId, SymbolId};
use thicket_tree::TreeSink;

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Characters of text, as `str.len` counts them.
    Length,
    /// Nodes of this rule (nested ones included).
    Count(SymbolId),
}

/// Largest value a table tracks: longer texts or more needles are not produced by
/// exact measure (the repair falls back to other moves).
pub const MEASURE_CAP: usize = 2048;

/// The values of one expression at one depth budget.
#[derive(Clone, PartialEq, Eq)]
struct Sets {
    /// Within the generator's repetition cap.
    capped: Bits,
    /// All of them.
    full: Bits,
}

impl Sets {
    fn both(set: Bits) -> Sets {
        Sets {
            capped: set.clone(),
            full: set,
        }
    }

    fn empty() -> Sets {
        Sets::both(Bits::empty())
    }
}

/// The achievable values of every expression at every depth budget, for one measure.
///
/// Only what depends on the depth budget is kept per level: an expression that
/// reaches no reference (a terminal, or alternatives, sequences and repetitions of
/// terminals: most of a character-level grammar) has its sets once, in `fixed`. And a
/// level equal to the one below it ends the levels: a level's sets follow from the
/// level below alone, so every later level would be the same; a budget past the last
/// level kept reads that one.
pub struct MeasureTable {
    measure: Measure,
    /// Per expression, where its sets are: in `fixed` or in each level.
    places: Vec<Place>,
    /// The sets of the expressions that do not depend on the budget.
    fixed: Vec<Sets>,
    /// Per depth budget from 0 (up to the first that equals the one before), the sets
    /// of the expressions that depend on it.
    levels: Vec<Vec<Sets>>,
    /// The greatest depth budget (the generator's `max_depth`).
    depth: usize,
    /// Per level and expression, the largest value (saturating), `None` if nothing
    /// derives within the level: whether the sets, capped, hold every value.
    maxima: Vec<Vec<Option<u64>>>,
    /// The generator's repetition cap.
    max_repetitions: u32,
    /// Per regex terminal (by expression index): its exact lengths (the length
    /// measure), or a sampler (needles: a regex holds none).
    regexes: Vec<Option<RegexTerminal>>,
}

enum RegexTerminal {
    Lengths(Box<RegexLengths>),
    Sampler(RegexSampler),
}

/// The sets of `expr`: in `fixed`, or in `level` (one level's sets).
fn pick<'a>(places: &[Place], fixed: &'a [Sets], level: &'a [Sets], expr: ExprId) -> &'a Sets {
    match places[expr.index()] {
        Place::Fixed(k) => &fixed[k as usize],
        Place::Level(k) => &level[k as usize],
    }
}

/// Where an expression's sets are kept (see [`MeasureTable`]).
#[derive(Clone, Copy)]
enum Place {
    /// In `fixed`, at this index: the same at every budget.
    Fixed(u32),
    /// In each level, at this index.
    Level(u32),
}

impl MeasureTable {
    /// The table for `measure` over `grammar` with `max_depth` levels, repetitions
    /// capped as the generator caps them in the capped sets.
    pub fn new(generator: &Generator<'_>, measure: Measure) -> MeasureTable {
        let grammar = generator.grammar();
        let config = generator.config();
        let cap = config.max_repetitions;
        // No length beyond the generator's byte limit (a character takes a byte at
        // least).
        let limit = match measure {
            Measure::Length => usize::try_from(config.max_size).unwrap_or(usize::MAX),
            Measure::Count(_) => usize::MAX,
        }
        .min(MEASURE_CAP - 1);
        let regexes: Vec<Option<RegexTerminal>> = grammar
            .expr_ids()
            .map(|id| match grammar.expr(id) {
                Expr::Regex(regex) => match measure {
                    Measure::Length => Some(RegexTerminal::Lengths(Box::new(RegexLengths::new(
                        &regex.hir, cap, limit,
                    )))),
                    Measure::Count(_) => RegexSampler::new(&regex.hir, cap)
                        .ok()
                        .map(RegexTerminal::Sampler),
                },
                _ => None,
            })
            .collect();
        let depth = config.max_depth as usize;
        // Whether each expression reaches a reference (children have smaller ids).
        let mut places: Vec<Place> = Vec::with_capacity(grammar.expr_count());
        let (mut fixed_count, mut level_count) = (0u32, 0u32);
        for id in grammar.expr_ids() {
            let dynamic = match grammar.expr(id) {
                Expr::Ref(_) => true,
                Expr::Literal(_) | Expr::Regex(_) => false,
                Expr::Alt(children) | Expr::Seq(children) => children
                    .iter()
                    .any(|c| matches!(places[c.index()], Place::Level(_))),
                Expr::Repeat(rep) => matches!(places[rep.item.index()], Place::Level(_)),
            };
            places.push(if dynamic {
                level_count += 1;
                Place::Level(level_count - 1)
            } else {
                fixed_count += 1;
                Place::Fixed(fixed_count - 1)
            });
        }
        // The sets of `id` from its children's (in `fixed` and `level`); `below` is the
        // level one down, where a reference reads its body (none at budget 0).
        let compute = |id: ExprId, fixed: &[Sets], level: &[Sets], below: Option<&[Sets]>| {
            let get = |c: ExprId| pick(&places, fixed, level, c);
            let mut sets = match grammar.expr(id) {
                Expr::Literal(bytes) => Sets::both(Bits::single(match measure {
                    Measure::Length => thicket_constraint::eval::input_string(bytes)
                        .chars()
                        .count(),
                    Measure::Count(_) => 0,
                })),
                Expr::Regex(_) => match &regexes[id.index()] {
                    Some(RegexTerminal::Lengths(re)) => Sets {
                        capped: re.capped().clone(),
                        full: re.full().clone(),
                    },
                    Some(RegexTerminal::Sampler(_)) => Sets::both(Bits::single(0)),
                    None => Sets::empty(),
                },
                Expr::Ref(symbol) => match below {
                    None => Sets::empty(),
                    Some(below) => {
                        let body = pick(&places, fixed, below, grammar.rule(*symbol).body).clone();
                        match measure {
                            Measure::Count(needle) if needle == *symbol => {
                                let one = Bits::single(1);
                                Sets {
                                    capped: body.capped.sum(&one),
                                    full: body.full.sum(&one),
                                }
                            }
                            _ => body,
                        }
                    }
                },
                Expr::Alt(children) => {
                    let mut sets = Sets::empty();
                    for &c in children {
                        let child = get(c);
                        sets.capped.union(&child.capped);
                        sets.full.union(&child.full);
                    }
                    sets
                }
                Expr::Seq(children) => {
                    let mut sets = Sets::both(Bits::single(0));
                    for &c in children {
                        let child = get(c);
                        sets.capped = sets.capped.sum(&child.capped);
                        sets.full = sets.full.sum(&child.full);
                    }
                    sets
                }
                Expr::Repeat(rep) => {
                    let item = get(rep.item);
                    let (min, max) = repeat_bounds(rep, cap);
                    Sets {
                        capped: item.capped.repeated(min, Some(max)),
                        full: item.full.repeated(rep.min, rep.max),
                    }
                }
            };
            sets.capped.truncate(limit);
            sets.full.truncate(limit);
            sets
        };
        let mut fixed: Vec<Sets> = Vec::with_capacity(fixed_count as usize);
        for id in grammar.expr_ids() {
            if let Place::Fixed(_) = places[id.index()] {
                let sets = compute(id, &fixed, &[], None);
                fixed.push(sets);
            }
        }
        let mut levels: Vec<Vec<Sets>> = Vec::new();
        for _ in 0..=depth {
            let mut level: Vec<Sets> = Vec::with_capacity(level_count as usize);
            for id in grammar.expr_ids() {
                if let Place::Level(_) = places[id.index()] {
                    let sets = compute(id, &fixed, &level, levels.last().map(Vec::as_slice));
                    level.push(sets);
                }
            }
            if levels.last() == Some(&level) {
                break;
            }
            levels.push(level);
        }
        let maxima = maxima(generator, measure);
        MeasureTable {
            measure,
            places,
            fixed,
            levels,
            depth,
            maxima,
            max_repetitions: cap,
            regexes,
        }
    }

    /// The values a subtree of `expr` at `depth` can have below the cap, and whether
    /// those are all it can have (no value at or past the cap).
    pub(crate) fn possible(&self, expr: ExprId, depth: u32) -> (Bits, bool) {
        let Some(sets) = self.get(expr, depth) else {
            return (Bits::empty(), true);
        };
        let remaining = self.depth - depth as usize;
        let exact = self.maxima[remaining][expr.index()].is_none_or(|m| m < MEASURE_CAP as u64);
        (sets.full.clone(), exact)
    }

    /// The measure.
    pub fn measure(&self) -> Measure {
        self.measure
    }

    /// The sets of `expr` at `depth`, `None` past the greatest depth.
    fn get(&self, expr: ExprId, depth: u32) -> Option<&Sets> {
        let remaining = self.depth.checked_sub(depth as usize)?;
        let level = &self.levels[remaining.min(self.levels.len() - 1)];
        Some(pick(&self.places, &self.fixed, level, expr))
    }

    /// Whether a subtree of `expr` expanded at `depth` can have measure `value`
    /// (within the generator's repetition cap or beyond it).
    pub fn achievable(&self, expr: ExprId, depth: u32, value: usize) -> bool {
        self.get(expr, depth)
            .is_some_and(|sets| sets.full.contains(value))
    }

    /// The values a subtree of `expr` at `depth` can have, ascending.
    pub fn values(&self, expr: ExprId, depth: u32) -> Vec<usize> {
        self.get(expr, depth)
            .map(|sets| sets.full.iter().collect())
            .unwrap_or_default()
    }

    /// Generates a subtree of `expr` at `depth` whose measure is exactly `value` into
    /// `sink`. Returns false (having emitted a partial subtree: build into a scratch
    /// builder) if the value is not achievable, or, past the cap (up to
    /// [`LARGE_VALUE_LIMIT`]), if the draw did not reach it.
    ///
    /// Past the cap the sets stop, and a value is built from parts below it: a
    /// repetition takes items of the values its item can have (larger ones first),
    /// until what is left lies below the cap and is finished exactly; a sequence gives
    /// one part that can grow the rest, the others values of their own; an alternative
    /// is one whose largest value reaches it. That can miss (a remainder of the wrong
    /// parity); the caller tries again.
    pub fn generate<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        if value > LARGE_VALUE_LIMIT {
            return false;
        }
        self.fit(generator, expr, depth, value, rng, sink)
    }

    /// Whether a subtree of `expr` at `depth` may reach `value`: below the cap, exactly;
    /// past it, its largest value is at least `value`.
    fn may_reach(&self, expr: ExprId, depth: u32, value: usize) -> bool {
        if value < MEASURE_CAP {
            return self.achievable(expr, depth, value);
        }
        let Some(remaining) = self.depth.checked_sub(depth as usize) else {
            return false;
        };
        self.maxima[remaining][expr.index()].is_some_and(|m| m >= value as u64)
    }

    /// Emits a subtree of `expr` of measure `value`, below the cap or past it.
    fn fit<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        if !self.may_reach(expr, depth, value) {
            return false;
        }
        if value < MEASURE_CAP {
            self.emit(generator, expr, depth, value, rng, sink)
        } else {
            self.emit_large(generator, expr, depth, value, rng, sink)
        }
    }

    /// Emits a subtree of `expr` of a measure `value` at or past the cap (see
    /// [`MeasureTable::generate`]).
    fn emit_large<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        let grammar = generator.grammar();
        match grammar.expr(expr) {
            // Literals and regex matches that long are not built (their lengths are
            // known below the cap only).
            Expr::Literal(_) | Expr::Regex(_) => false,
            Expr::Ref(symbol) => {
                let own = usize::from(self.measure == Measure::Count(*symbol));
                sink.open(expr);
                let body = grammar.rule(*symbol).body;
                let ok = self.fit(generator, body, depth + 1, value - own, rng, sink);
                sink.close();
                ok
            }
            Expr::Alt(children) => {
                let options: Vec<ExprId> = children
                    .iter()
                    .copied()
                    .filter(|&c| self.may_reach(c, depth, value))
                    .collect();
                if options.is_empty() {
                    return false;
                }
                let choice = options[below(rng, options.len() as u32) as usize];
                sink.open(expr);
                let ok = self.fit(generator, choice, depth, value, rng, sink);
                sink.close();
                ok
            }
            Expr::Seq(children) => {
                // One part grows; the others take values of their own, within the cap.
                let growing: Vec<usize> = (0..children.len())
                    .filter(|&i| self.may_reach(children[i], depth, MEASURE_CAP))
                    .collect();
                if growing.is_empty() {
                    return false;
                }
                let big = growing[below(rng, growing.len() as u32) as usize];
                let mut values = Vec::with_capacity(children.len());
                let mut others = 0usize;
                for (i, &c) in children.iter().enumerate() {
                    if i == big {
                        values.push(0);
                        continue;
                    }
                    let sets = self.sets(c, depth);
                    let pool = if sets.capped.iter().next().is_some() {
                        &sets.capped
                    } else {
                        &sets.full
                    };
                    let options: Vec<usize> = pool.iter().collect();
                    let Some(&v) = options.get(below(rng, options.len() as u32) as usize) else {
                        return false;
                    };
                    values.push(v);
                    others += v;
                }
                let Some(rest) = value.checked_sub(others) else {
                    return false;
                };
                values[big] = rest;
                self.emit_parts(generator, expr, children, &values, depth, rng, sink)
            }
            Expr::Repeat(rep) => {
                let item = self.sets(rep.item, depth);
                let natural_max = repeat_bounds(rep, self.max_repetitions).1;
                let Some(values) = large_repeat(item, rep, natural_max, value, rng) else {
                    return false;
                };
                let items = vec![rep.item; values.len()];
                self.emit_parts(generator, expr, &items, &values, depth, rng, sink)
            }
        }
    }

    fn sets(&self, expr: ExprId, depth: u32) -> &Sets {
        self.get(expr, depth).expect("depth within the table")
    }

    /// Emits a subtree of `expr` of measure `value`: within the repetition cap if the
    /// value is achievable within it, else beyond it, preferring for each part a value
    /// it can take within the cap.
    fn emit<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        let grammar = generator.grammar();
        let sets = self.sets(expr, depth);
        if value == 0 && sets.full == Bits::single(0) {
            // Whatever is derived measures nothing (a field's text, counting fields):
            // the generator's own choices.
            generator.expand(expr, depth, rng, sink);
            return true;
        }
        let capped = sets.capped.contains(value);
        let set = |e: ExprId| {
            let sets = self.sets(e, depth);
            if capped { &sets.capped } else { &sets.full }
        };
        let preferred = |e: ExprId| (!capped).then(|| &self.sets(e, depth).capped);
        match grammar.expr(expr) {
            Expr::Literal(bytes) => {
                sink.terminal(expr, bytes);
                true
            }
            Expr::Regex(_) => {
                let mut out = Vec::new();
                let ok = match &self.regexes[expr.index()] {
                    Some(RegexTerminal::Lengths(re)) => re.sample(value, rng, &mut out),
                    Some(RegexTerminal::Sampler(sampler)) => {
                        sampler.sample(rng, &mut out);
                        true
                    }
                    None => false,
                };
                if ok {
                    sink.terminal(expr, &out);
                }
                ok
            }
            Expr::Ref(symbol) => {
                let own = usize::from(self.measure == Measure::Count(*symbol));
                sink.open(expr);
                let ok = self.emit(
                    generator,
                    grammar.rule(*symbol).body,
                    depth + 1,
                    value - own,
                    rng,
                    sink,
                );
                sink.close();
                ok
            }
            Expr::Alt(children) => {
                let options: Vec<ExprId> = children
                    .iter()
                    .copied()
                    .filter(|&c| set(c).contains(value))
                    .collect();
                let liked: Vec<ExprId> = options
                    .iter()
                    .copied()
                    .filter(|&c| preferred(c).is_some_and(|p| p.contains(value)))
                    .collect();
                let pool = if liked.is_empty() { options } else { liked };
                if pool.is_empty() {
                    return false;
                }
                let choice = pool[below(rng, pool.len() as u32) as usize];
                sink.open(expr);
                let ok = self.emit(generator, choice, depth, value, rng, sink);
                sink.close();
                ok
            }
            Expr::Seq(children) => {
                let sets: Vec<&Bits> = children.iter().map(|&c| set(c)).collect();
                let liked: Option<Vec<&Bits>> = (!capped).then(|| {
                    children
                        .iter()
                        .map(|&c| &self.sets(c, depth).capped)
                        .collect()
                });
                let Some(values) = bits::split(&sets, liked.as_deref(), value, rng) else {
                    return false;
                };
                self.emit_parts(generator, expr, children, &values, depth, rng, sink)
            }
            Expr::Repeat(rep) => {
                let natural_max = repeat_bounds(rep, self.max_repetitions).1;
                let max = if capped { Some(natural_max) } else { rep.max };
                let Some(values) = bits::repeat(
                    set(rep.item),
                    preferred(rep.item),
                    rep.min,
                    max,
                    natural_max,
                    value,
                    rng,
                ) else {
                    return false;
                };
                let items = vec![rep.item; values.len()];
                self.emit_parts(generator, expr, &items, &values, depth, rng, sink)
            }
        }
    }

    /// Emits a node of `expr` whose children are `parts` with measures `values`.
    #[allow(clippy::too_many_arguments)]
    fn emit_parts<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        parts: &[ExprId],
        values: &[usize],
        depth: u32,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        sink.open(expr);
        let ok = parts
            .iter()
            .zip(values)
            .all(|(&part, &v)| self.fit(generator, part, depth, v, rng, sink));
        sink.close();
        ok
    }
}

/// Largest value past the cap [`MeasureTable::generate`] builds: a tree for a million
/// characters is tens of megabytes already.
pub const LARGE_VALUE_LIMIT: usize = 1 << 20;

/// The items' values of a repetition summing to `value`, at or past the cap: items of
/// the values the item can take below it (from the larger half: fewer items) until
/// what is left lies below the cap, which is finished exactly; the last item allowed
/// by a bounded repetition takes all that is left.
fn large_repeat<R: Rng + ?Sized>(
    item: &Sets,
    rep: &thicket_grammar::Repeat,
    natural_max: u32,
    value: usize,
    rng: &mut R,
) -> Option<Vec<usize>> {
    let any = item.full.up_to(None);
    let mut values: Vec<usize> = Vec::new();
    let mut left = value;
    loop {
        let done = values.len() as u32;
        if left < MEASURE_CAP {
            let rest = bits::repeat(
                &item.full,
                Some(&item.capped),
                rep.min.saturating_sub(done),
                rep.max.map(|m| m.saturating_sub(done)),
                natural_max.saturating_sub(done),
                left,
                rng,
            )?;
            values.extend(rest);
            return Some(values);
        }
        match rep.max {
            Some(max) if done >= max => return None,
            Some(max) if done + 1 == max => {
                values.push(left);
                return Some(values);
            }
            _ => {}
        }
        // Leave a remainder the items can finish, if it falls below the cap.
        let options: Vec<usize> = item
            .full
            .iter()
            .filter(|&v| v > 0 && v <= left && (left - v >= MEASURE_CAP || any.contains(left - v)))
            .collect();
        if options.is_empty() {
            return None;
        }
        let upper = &options[options.len() / 2..];
        let v = upper[below(rng, upper.len() as u32) as usize];
        values.push(v);
        left -= v;
    }
}

/// Per depth level and expression, the largest measure a subtree can have (`u64::MAX`
/// when unbounded), or `None` if none derives within the level's budget. Lengths of
/// regexes are bounded by their longest match in bytes (a character takes at least one).
fn maxima(generator: &Generator<'_>, measure: Measure) -> Vec<Vec<Option<u64>>> {
    let grammar = generator.grammar();
    let depth = generator.config().max_depth as usize;
    let mut levels: Vec<Vec<Option<u64>>> = Vec::with_capacity(depth + 1);
    for r in 0..=depth {
        let mut level: Vec<Option<u64>> = Vec::with_capacity(grammar.expr_count());
        for id in grammar.expr_ids() {
            let most = match grammar.expr(id) {
                Expr::Literal(bytes) => Some(match measure {
                    Measure::Length => bytes.len() as u64,
                    Measure::Count(_) => 0,
                }),
                Expr::Regex(regex) => Some(match measure {
                    Measure::Length => regex
                        .hir
                        .properties()
                        .maximum_len()
                        .map_or(u64::MAX, |m| m as u64),
                    Measure::Count(_) => 0,
                }),
                Expr::Ref(_) if r == 0 => None,
                Expr::Ref(symbol) => levels[r - 1][grammar.rule(*symbol).body.index()]
                    .map(|m| m.saturating_add(u64::from(measure == Measure::Count(*symbol)))),
                Expr::Alt(children) => children.iter().filter_map(|c| level[c.index()]).max(),
                Expr::Seq(children) => children
                    .iter()
                    .map(|c| level[c.index()])
                    .try_fold(0u64, |sum, m| m.map(|m| sum.saturating_add(m))),
                Expr::Repeat(rep) => match level[rep.item.index()] {
                    None => (rep.min == 0).then_some(0),
                    Some(0) => Some(0),
                    Some(m) => Some(rep.max.map_or(u64::MAX, |k| m.saturating_mul(u64::from(k)))),
                },
            };
            level.push(most);
        }
        levels.push(level);
    }
    levels
}

/// The repetition counts generation allows: the generator's cap, but never below the
/// mandatory minimum.
fn repeat_bounds(rep: &thicket_grammar::Repeat, max_repetitions: u32) -> (u32, u32) {
    let cap = rep.min.max(max_repetitions);
    (rep.min, rep.max.map_or(cap, |m| m.min(cap)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::GenConfig;
    use thicket_tree::TreeBuilder;

    fn spec(text: &str) -> thicket_grammar::Spec {
        thicket_grammar::load_spec_bytes("m.fan", text.as_bytes(), &Default::default()).unwrap()
    }

    #[test]
    fn generates_every_achievable_length_exactly() {
        let spec = spec("<start> ::= <a>\n<a> ::= \"xy\" <a> | \"z\" | \"\"\n");
        let g = Generator::new(&spec.grammar, GenConfig::default()).unwrap();
        let table = MeasureTable::new(&g, Measure::Length);
        let root = spec.grammar.root();
        // Lengths 0..=2*29+1 are reachable within depth 30.
        assert!(table.achievable(root, 0, 0));
        assert!(table.achievable(root, 0, 7));
        assert!(!table.achievable(root, 0, 200));
        let mut rng = Generator::rng_for(1, 0);
        for target in [0, 1, 2, 3, 10, 41] {
            let mut b = TreeBuilder::new();
            assert!(table.generate(&g, root, 0, target, &mut rng, &mut b));
            let tree = b.finish();
            assert_eq!(tree.bytes().len(), target, "{:?}", tree.bytes());
        }
    }

    #[test]
    fn generates_an_exact_number_of_needles() {
        let spec = spec(
            "<start> ::= <record>\n<record> ::= <field> (\",\" <field>)*\n<field> ::= r\"[a-z]\"*\n",
        );
        let g = Generator::new(&spec.grammar, GenConfig::default()).unwrap();
        let field = spec.grammar.symbol("field").unwrap();
        let table = MeasureTable::new(&g, Measure::Count(field));
        let root = spec.grammar.root();
        // One field plus any number of repetitions: the generator's cap of 5 shapes
        // random records, it does not bound what a constraint may ask for.
        assert_eq!(table.values(root, 0)[..3], [1, 2, 3]);
        assert!(!table.achievable(root, 0, 0));
        let mut rng = Generator::rng_for(7, 0);
        for target in [1, 2, 6, 7, 9, 300] {
            let mut b = TreeBuilder::new();
            assert!(table.generate(&g, root, 0, target, &mut rng, &mut b));
            let tree = b.finish();
            let commas = tree.bytes().iter().filter(|&&c| c == b',').count();
            assert_eq!(commas + 1, target);
        }
    }

    #[test]
    fn a_grammars_own_bounds_hold_beyond_the_cap() {
        let spec = spec("<start> ::= <f> (\",\" <f>){0,3}\n<f> ::= \"x\"\n");
        let g = Generator::new(&spec.grammar, GenConfig::default()).unwrap();
        let f = spec.grammar.symbol("f").unwrap();
        let table = MeasureTable::new(&g, Measure::Count(f));
        assert_eq!(table.values(spec.grammar.root(), 0), vec![1, 2, 3, 4]);
    }

    #[test]
    fn lengths_within_the_cap_keep_the_generators_shape() {
        // `<ws>` can be any length; asked for a short document, the generator's caps
        // hold (no run of 40 blanks), asked for a long one, the rest is generated
        // beyond them.
        let spec = spec(
            "<start> ::= <ws> <list> <ws>\n<list> ::= \"[\" (<item> (\",\" <item>)*)? \"]\"\n\
             <item> ::= r\"[a-z]+\" | <list>\n<ws> ::= \"\" | r\"[ ]+\"\n",
        );
        let g = Generator::new(&spec.grammar, GenConfig::default()).unwrap();
        let table = MeasureTable::new(&g, Measure::Length);
        let root = spec.grammar.root();
        let mut rng = Generator::rng_for(11, 0);
        for target in [2, 20, 300, 2000] {
            for _ in 0..10 {
                let mut b = TreeBuilder::new();
                assert!(table.generate(&g, root, 0, target, &mut rng, &mut b));
                let tree = b.finish();
                assert_eq!(tree.bytes().len(), target);
                if target <= 20 {
                    assert!(!tree.bytes().starts_with(b"      "), "{:?}", tree.bytes());
                }
            }
        }
        assert!(!table.achievable(root, 0, 1));
    }
}
