//! Subtrees of an exact measure: a given length in bytes (`str.len(x) = n`) or a given
//! number of `<needle>` nodes (`count(x, "<needle>", n)`).
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
//! Regex terminals: a pattern with a fixed length (a character class, a literal) is
//! exact; otherwise its lengths are taken as the whole range between its shortest and
//! longest match, and a length inside it is drawn by sampling (up to a few dozen
//! tries), which can fail: the caller then tries another repair.

use rand::Rng;
use thicket_gen::{Generator, RegexSampler, below};
use thicket_grammar::{Expr, ExprId, SymbolId};
use thicket_tree::TreeSink;

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Bytes of text.
    Length,
    /// Nodes of this rule (nested ones included).
    Count(SymbolId),
}

/// Largest value a table tracks: longer texts or more needles are not produced by
/// exact measure (the repair falls back to other moves).
pub const MEASURE_CAP: usize = 2048;

const WORDS: usize = MEASURE_CAP / 64;

/// A set of values `0..MEASURE_CAP`.
#[derive(Clone, PartialEq, Eq)]
struct Bits([u64; WORDS]);

impl Bits {
    fn empty() -> Bits {
        Bits([0; WORDS])
    }
    fn single(v: usize) -> Bits {
        let mut b = Bits::empty();
        b.insert(v);
        b
    }
    fn insert(&mut self, v: usize) {
        if v < MEASURE_CAP {
            self.0[v / 64] |= 1 << (v % 64);
        }
    }
    fn contains(&self, v: usize) -> bool {
        v < MEASURE_CAP && self.0[v / 64] & (1 << (v % 64)) != 0
    }
    fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + bit)
            })
        })
    }
    /// `{a + b | a in self, b in other}`, capped.
    fn sum(&self, other: &Bits) -> Bits {
        let mut out = Bits::empty();
        for a in self.iter() {
            // Shift `other` left by `a` bits.
            let (words, bits) = (a / 64, a % 64);
            for i in (words..WORDS).rev() {
                let lo = other.0[i - words];
                let hi = if bits > 0 && i > words {
                    other.0[i - words - 1] >> (64 - bits)
                } else {
                    0
                };
                out.0[i] |= (lo << bits) | hi;
            }
        }
        out
    }
}

/// The achievable values of every expression at every depth budget, for one measure.
pub struct MeasureTable {
    measure: Measure,
    levels: Vec<Vec<Bits>>,
    /// The generator's repetition cap.
    max_repetitions: u32,
    /// A sampler per regex terminal (by expression index), compiled once: lengths are
    /// drawn by sampling until one fits.
    samplers: Vec<Option<RegexSampler>>,
}

impl MeasureTable {
    /// The table for `measure` over `grammar` with `max_depth` levels, repetitions
    /// capped as the generator caps them.
    pub fn new(generator: &Generator<'_>, measure: Measure) -> MeasureTable {
        let grammar = generator.grammar();
        let config = generator.config();
        let n = grammar.expr_count();
        let depth = config.max_depth as usize;
        let mut levels: Vec<Vec<Bits>> = Vec::with_capacity(depth + 1);
        for r in 0..=depth {
            let mut level: Vec<Bits> = Vec::with_capacity(n);
            for id in grammar.expr_ids() {
                let set = match grammar.expr(id) {
                    Expr::Literal(bytes) => match measure {
                        Measure::Length => Bits::single(bytes.len()),
                        Measure::Count(_) => Bits::single(0),
                    },
                    Expr::Regex(regex) => match measure {
                        Measure::Length => {
                            let props = regex.hir.properties();
                            let min = props.minimum_len().unwrap_or(0);
                            let max = props
                                .maximum_len()
                                .unwrap_or(MEASURE_CAP)
                                .min(MEASURE_CAP - 1);
                            let mut b = Bits::empty();
                            for v in min..=max.max(min) {
                                b.insert(v);
                            }
                            b
                        }
                        Measure::Count(_) => Bits::single(0),
                    },
                    Expr::Ref(symbol) => {
                        if r == 0 {
                            Bits::empty()
                        } else {
                            let body = &levels[r - 1][grammar.rule(*symbol).body.index()];
                            match measure {
                                Measure::Count(needle) if needle == *symbol => {
                                    body.sum(&Bits::single(1))
                                }
                                _ => body.clone(),
                            }
                        }
                    }
                    Expr::Alt(children) => {
                        let mut b = Bits::empty();
                        for c in children {
                            b.union(&level[c.index()]);
                        }
                        b
                    }
                    Expr::Seq(children) => {
                        let mut b = Bits::single(0);
                        for c in children {
                            b = b.sum(&level[c.index()]);
                        }
                        b
                    }
                    Expr::Repeat(rep) => {
                        let item = &level[rep.item.index()];
                        let (min, max) = repeat_bounds(rep, config.max_repetitions);
                        let mut power = Bits::single(0);
                        let mut b = Bits::empty();
                        for k in 0..=max {
                            if k >= min {
                                b.union(&power);
                            }
                            if k < max {
                                let next = power.sum(item);
                                if next == power && k >= min {
                                    break;
                                }
                                power = next;
                            }
                        }
                        b
                    }
                };
                level.push(set);
            }
            levels.push(level);
        }
        let samplers = grammar
            .expr_ids()
            .map(|id| match grammar.expr(id) {
                Expr::Regex(regex) => {
                    RegexSampler::new(&regex.hir, config.max_repetitions.max(8)).ok()
                }
                _ => None,
            })
            .collect();
        MeasureTable {
            measure,
            levels,
            max_repetitions: config.max_repetitions,
            samplers,
        }
    }

    /// The measure.
    pub fn measure(&self) -> Measure {
        self.measure
    }

    fn level(&self, depth: u32) -> Option<&Vec<Bits>> {
        let remaining = (self.levels.len() - 1).checked_sub(depth as usize)?;
        self.levels.get(remaining)
    }

    /// Whether a subtree of `expr` expanded at `depth` can have measure `value`.
    pub fn achievable(&self, expr: ExprId, depth: u32, value: usize) -> bool {
        self.level(depth)
            .is_some_and(|l| l[expr.index()].contains(value))
    }

    /// The values a subtree of `expr` at `depth` can have, ascending.
    pub fn values(&self, expr: ExprId, depth: u32) -> Vec<usize> {
        self.level(depth)
            .map(|l| l[expr.index()].iter().collect())
            .unwrap_or_default()
    }

    /// Generates a subtree of `expr` at `depth` whose measure is exactly `value` into
    /// `sink`. Returns false (having emitted a partial subtree: build into a scratch
    /// builder) if a regex terminal could not be sampled at the length needed, or if
    /// the value is not achievable.
    pub fn generate<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        if !self.achievable(expr, depth, value) {
            return false;
        }
        self.emit(generator, expr, depth, value, rng, sink)
    }

    fn set(&self, expr: ExprId, depth: u32) -> &Bits {
        &self.level(depth).expect("depth within the table")[expr.index()]
    }

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
        match grammar.expr(expr) {
            Expr::Literal(bytes) => {
                sink.terminal(expr, bytes);
                true
            }
            Expr::Regex(_) => {
                let Some(sampler) = &self.samplers[expr.index()] else {
                    return false;
                };
                let mut out = Vec::new();
                for _ in 0..64 {
                    out.clear();
                    sampler.sample(rng, &mut out);
                    if self.measure != Measure::Length || out.len() == value {
                        sink.terminal(expr, &out);
                        return true;
                    }
                }
                false
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
                    .filter(|c| self.set(*c, depth).contains(value))
                    .collect();
                if options.is_empty() {
                    return false;
                }
                let choice = options[below(rng, options.len() as u32) as usize];
                sink.open(expr);
                let ok = self.emit(generator, choice, depth, value, rng, sink);
                sink.close();
                ok
            }
            Expr::Seq(children) => {
                let sets: Vec<&Bits> = children.iter().map(|c| self.set(*c, depth)).collect();
                // suffix[i]: the values children[i..] can sum to.
                let mut suffix = vec![Bits::single(0); children.len() + 1];
                for i in (0..children.len()).rev() {
                    suffix[i] = sets[i].sum(&suffix[i + 1]);
                }
                let suffix: Vec<&Bits> = suffix.iter().collect();
                self.split(
                    generator, expr, children, &sets, &suffix, depth, value, rng, sink,
                )
            }
            Expr::Repeat(rep) => {
                let item = self.set(rep.item, depth);
                let (min, max) = repeat_bounds(rep, self.max_repetitions);
                // k-fold sums of the item's values, for every feasible count.
                let mut powers = vec![Bits::single(0)];
                for _ in 0..max {
                    let next = powers.last().expect("non-empty").sum(item);
                    powers.push(next);
                }
                let counts: Vec<u32> = (min..=max)
                    .filter(|&k| powers[k as usize].contains(value))
                    .collect();
                if counts.is_empty() {
                    return false;
                }
                let k = counts[below(rng, counts.len() as u32) as usize] as usize;
                let items = vec![rep.item; k];
                let sets = vec![item; k];
                // What the last k - i items can sum to: the powers, already computed.
                let suffix: Vec<&Bits> = (0..=k).map(|i| &powers[k - i]).collect();
                self.split(
                    generator, expr, &items, &sets, &suffix, depth, value, rng, sink,
                )
            }
        }
    }

    /// Emits a node of `expr` whose children are `parts` in order, their measures
    /// summing to `value`.
    #[allow(clippy::too_many_arguments)]
    fn split<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        expr: ExprId,
        parts: &[ExprId],
        sets: &[&Bits],
        suffix: &[&Bits],
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        sink.open(expr);
        let ok = self.split_parts(generator, parts, sets, suffix, depth, value, rng, sink);
        sink.close();
        ok
    }

    #[allow(clippy::too_many_arguments)]
    fn split_parts<R: Rng + ?Sized, S: TreeSink>(
        &self,
        generator: &Generator<'_>,
        parts: &[ExprId],
        sets: &[&Bits],
        suffix: &[&Bits],
        depth: u32,
        value: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        // `suffix[i]`: the values parts[i..] can sum to.
        let mut left = value;
        for (i, &part) in parts.iter().enumerate() {
            let options: Vec<usize> = sets[i]
                .iter()
                .take_while(|&v| v <= left)
                .filter(|&v| suffix[i + 1].contains(left - v))
                .collect();
            if options.is_empty() {
                return false;
            }
            let v = options[below(rng, options.len() as u32) as usize];
            if !self.emit(generator, part, depth, v, rng, sink) {
                return false;
            }
            left -= v;
        }
        left == 0
    }
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
    fn bitset_sums_shift_across_words() {
        let a = Bits::single(3);
        let mut b = Bits::single(62);
        b.insert(200);
        let s = a.sum(&b);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![65, 203]);
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
        // One field plus at most 5 repetitions.
        assert_eq!(table.values(root, 0), vec![1, 2, 3, 4, 5, 6]);
        let mut rng = Generator::rng_for(7, 0);
        for target in 1..=6 {
            let mut b = TreeBuilder::new();
            assert!(table.generate(&g, root, 0, target, &mut rng, &mut b));
            let tree = b.finish();
            let commas = tree.bytes().iter().filter(|&&c| c == b',').count();
            assert_eq!(commas + 1, target);
        }
        let mut b = TreeBuilder::new();
        assert!(!table.generate(&g, root, 0, 9, &mut rng, &mut b));
    }
}
