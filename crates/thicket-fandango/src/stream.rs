//! The inputs of a seed, as `thicket generate` writes them and the Python module
//! returns them: input `i` comes from the random stream `(seed, i)`; a stream the
//! producer makes nothing of (the solver found no valid tree) is skipped, and so is,
//! with `unique`, an input equal to one made before. Both front ends drive the same
//! [`InputStream`], so a shell, a Rust program and a Python script get the same bytes
//! for the same seed and options.
//!
//! The stream also owns the rules for when to stop: the count asked for, a budget of
//! draws (so that constraints no stream satisfies, or a language with fewer distinct
//! inputs than asked for, end the run instead of looping), and a deadline.

use crate::LoadedSpec;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::hash::{Hash, Hasher};
use std::time::Instant;
use thicket_gen::{Fresh, GenRng, GenStats, Generator, Miss, Producer, Weighted};
use thicket_grammar::Grammar;
use thicket_solve::{Solver, Unsolved};
use thicket_tree::DerivationTree;

/// What an [`InputStream`] makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// The seed every random choice flows from.
    pub seed: u64,
    /// How many inputs to make; `None`: without end (until the deadline, the draw
    /// budget, or as long as the caller asks).
    pub count: Option<u64>,
    /// With `Some(k)`: skip inputs equal to one made before, giving up after `k`
    /// draws per input asked for.
    pub unique: Option<u64>,
    /// No stream is begun after this instant (a producer with a deadline of its own,
    /// such as a solver's, also stops inside a stream).
    pub deadline: Option<Instant>,
    /// Whether each input comes with its tree; otherwise only the bytes are made
    /// (faster for plain generation, which then builds no tree).
    pub trees: bool,
}

impl StreamConfig {
    /// `count` inputs of `seed`, bytes only, every stream kept, no deadline.
    pub fn new(seed: u64, count: Option<u64>) -> StreamConfig {
        StreamConfig {
            seed,
            count,
            unique: None,
            deadline: None,
            trees: false,
        }
    }
}

/// One input of the stream.
#[derive(Clone, Debug)]
pub struct Made {
    /// Its random stream: [`Generator::rng_for`]`(seed, index)` makes it again.
    pub index: u64,
    /// The input.
    pub bytes: Vec<u8>,
    /// Its tree, when [`StreamConfig::trees`] asked for it.
    pub tree: Option<DerivationTree>,
    /// The generator's figures for it.
    pub stats: GenStats,
}

/// Why an [`InputStream`] makes no more inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The count asked for is made.
    Count,
    /// The deadline passed.
    Deadline,
    /// The budget of draws is spent: with `unique`, [`StreamConfig::unique`] draws per
    /// input asked for; else [`crate::solver_draw_budget`] of the count, or, without a
    /// count or a deadline, more than three missed streams per input made (and 64).
    Budget,
}

/// The state of a seed's stream of inputs; the producer is given to each
/// [`InputStream::next_batch`], so that the state can live apart from what it borrows.
#[derive(Debug)]
pub struct InputStream {
    config: StreamConfig,
    /// Random streams used (input `i` of the seed is stream `i`).
    drawn: u64,
    /// Inputs made (kept).
    made: u64,
    /// With `unique`: hashes of the inputs made.
    seen: FxHashSet<u64>,
    /// Streams the producer made nothing of, and the first one's reason.
    misses: u64,
    first_miss: Option<String>,
    /// Set when a stream ran into the deadline: the inputs after it are not made, so
    /// that those made are still the first of the seed's.
    cut_at_deadline: bool,
}

impl InputStream {
    /// A stream that has made nothing yet.
    pub fn new(config: StreamConfig) -> InputStream {
        InputStream {
            config,
            drawn: 0,
            made: 0,
            seen: FxHashSet::default(),
            misses: 0,
            first_miss: None,
            cut_at_deadline: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> StreamConfig {
        self.config
    }

    /// Random streams drawn so far.
    pub fn drawn(&self) -> u64 {
        self.drawn
    }

    /// Inputs made so far.
    pub fn made(&self) -> u64 {
        self.made
    }

    /// Streams that gave no input (deadline aside), and the first one's reason.
    pub fn misses(&self) -> (u64, Option<&str>) {
        (self.misses, self.first_miss.as_deref())
    }

    /// Why the stream makes no more inputs, if it does not.
    pub fn stopped(&self) -> Option<Stop> {
        let goal = self.config.count.unwrap_or(u64::MAX);
        if self.made >= goal {
            return Some(Stop::Count);
        }
        if self.cut_at_deadline || self.config.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(Stop::Deadline);
        }
        let spent = match (self.config.unique, self.config.count) {
            (Some(per_input), _) => self.drawn >= goal.saturating_mul(per_input),
            (None, Some(count)) => self.drawn >= crate::solver_draw_budget(count),
            (None, None) if self.config.deadline.is_none() => {
                self.misses > self.made.saturating_mul(3).saturating_add(64)
            }
            (None, None) => false,
        };
        spent.then_some(Stop::Budget)
    }

    /// How many streams to draw for `wanted` more inputs: as many as the share of
    /// streams that gave an input so far predicts (the others missed or, with `unique`,
    /// repeated one), so that a producer whose inputs are expensive (a spec calling
    /// Python) makes none it throws away; `wanted` before the first stream, and twice
    /// the streams drawn while none gave an input.
    fn draws_for(&self, wanted: u64) -> u64 {
        if self.drawn == 0 {
            return wanted;
        }
        if self.made == 0 {
            return self.drawn.saturating_mul(2).max(wanted);
        }
        let expected = u128::from(wanted) * u128::from(self.drawn);
        u64::try_from(expected.div_ceil(u128::from(self.made))).unwrap_or(u64::MAX)
    }

    /// The next inputs, from at most `streams` random streams made in parallel (in the
    /// current rayon pool; as many as [`InputStream::draws_for`] expects to need):
    /// none when [`InputStream::stopped`], and possibly none when every stream of the
    /// round was skipped. The inputs never depend on `streams`.
    pub fn next_batch<P: Producer>(&mut self, producer: &P, streams: u64) -> Vec<Made> {
        if self.stopped().is_some() {
            return Vec::new();
        }
        let goal = self.config.count.unwrap_or(u64::MAX);
        let wanted = goal - self.made;
        let round = self.draws_for(wanted).min(streams.max(1));
        let budget = match (self.config.unique, self.config.count) {
            (Some(per_input), _) => goal.saturating_mul(per_input),
            (None, Some(count)) => crate::solver_draw_budget(count),
            (None, None) => u64::MAX,
        };
        let end = self.drawn.saturating_add(round).min(budget);
        let (seed, trees) = (self.config.seed, self.config.trees);
        let results: Vec<Result<Made, P::Miss>> = (self.drawn..end)
            .into_par_iter()
            .map(|index| make(producer, seed, index, trees))
            .collect();
        self.drawn = end;
        let mut out = Vec::new();
        for result in results {
            if self.made == goal {
                break;
            }
            let made = match result {
                Ok(made) => made,
                Err(miss) if miss.deadline_passed() => {
                    self.cut_at_deadline = true;
                    break;
                }
                Err(miss) => {
                    self.misses += 1;
                    self.first_miss.get_or_insert_with(|| miss.to_string());
                    continue;
                }
            };
            if self.config.unique.is_some() && !self.seen.insert(input_hash(&made.bytes)) {
                continue;
            }
            self.made += 1;
            out.push(made);
        }
        out
    }
}

/// Input `index` of `seed`.
fn make<P: Producer>(producer: &P, seed: u64, index: u64, tree: bool) -> Result<Made, P::Miss> {
    let mut rng = Generator::rng_for(seed, index);
    if tree {
        let Fresh { tree, stats } = producer.tree(&mut rng)?;
        let bytes = producer.input(&tree)?.into_owned();
        return Ok(Made {
            index,
            bytes,
            tree: Some(tree),
            stats,
        });
    }
    let mut bytes = Vec::new();
    let stats = producer.bytes(&mut rng, &mut bytes)?;
    Ok(Made {
        index,
        bytes,
        tree: None,
        stats,
    })
}

/// A hash of an input: Fx, fast and the same on every run.
pub fn input_hash(input: &[u8]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    input.hash(&mut hasher);
    hasher.finish()
}

/// Valid trees of a spec: its solver's, ranked by the spec's goals when `goals` is
/// given (the best of [`crate::GOAL_CANDIDATES`] solutions, see [`LoadedSpec::solve`]).
#[derive(Clone, Copy)]
pub struct SpecSolver<'a, 'g> {
    /// The solver.
    pub solver: &'a Solver<'g>,
    /// The spec whose goals rank solutions; `None`: the first solution.
    pub goals: Option<&'a LoadedSpec>,
}

impl Producer for SpecSolver<'_, '_> {
    type Miss = Unsolved;

    fn grammar(&self) -> &Grammar {
        self.solver.grammar()
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Unsolved> {
        let (tree, _) = match self.goals {
            Some(spec) => spec.solve(self.solver, rng)?,
            None => self.solver.solve(rng)?,
        };
        Ok(Fresh {
            tree,
            stats: GenStats::default(),
        })
    }
}

/// The producer a spec's options give: solving when constraints, goals or `:=`
/// generators are in force, else generation by the given weights (learned, or the
/// spec's own `prob` options), else plain generation.
#[derive(Clone, Copy)]
pub enum SpecProducer<'a, 'g> {
    /// Valid trees.
    Solved(SpecSolver<'a, 'g>),
    /// Trees whose choices follow weights.
    Weighted(Weighted<'a, 'g>),
    /// Depth-bounded random trees.
    Plain(&'a Generator<'g>),
}

impl<'a, 'g> SpecProducer<'a, 'g> {
    /// The solver's producer if there is a solver, else the weighted one if there are
    /// weights, else the generator.
    pub fn choose(
        generator: &'a Generator<'g>,
        solver: Option<SpecSolver<'a, 'g>>,
        weights: Option<&'a thicket_gen::Weights>,
    ) -> SpecProducer<'a, 'g> {
        match (solver, weights) {
            (Some(solver), _) => SpecProducer::Solved(solver),
            (None, Some(weights)) => SpecProducer::Weighted(Weighted { generator, weights }),
            (None, None) => SpecProducer::Plain(generator),
        }
    }

    /// Whether streams may give no input (the solver's may).
    pub fn solving(&self) -> bool {
        matches!(self, SpecProducer::Solved(_))
    }
}

impl Producer for SpecProducer<'_, '_> {
    type Miss = Unsolved;

    fn grammar(&self) -> &Grammar {
        match self {
            SpecProducer::Solved(p) => p.grammar(),
            SpecProducer::Weighted(p) => p.grammar(),
            SpecProducer::Plain(p) => Producer::grammar(*p),
        }
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Unsolved> {
        match self {
            SpecProducer::Solved(p) => p.tree(rng),
            SpecProducer::Weighted(p) => Ok(infallible(p.tree(rng))),
            SpecProducer::Plain(p) => Ok(infallible(p.tree(rng))),
        }
    }

    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Unsolved> {
        match self {
            SpecProducer::Solved(p) => p.bytes(rng, out),
            SpecProducer::Weighted(p) => Ok(infallible(p.bytes(rng, out))),
            SpecProducer::Plain(p) => Ok(infallible(p.bytes(rng, out))),
        }
    }
}

fn infallible<T>(result: Result<T, std::convert::Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::GenConfig;
    use thicket_grammar::load_spec_text;

    fn grammar(text: &str) -> Grammar {
        load_spec_text("t.fan", text.as_bytes()).unwrap()
    }

    fn all<P: Producer>(producer: &P, config: StreamConfig, streams: u64) -> Vec<Made> {
        drain(producer, config, streams).0
    }

    /// Every input of a stream until it stops, and the stream.
    fn drain<P: Producer>(
        producer: &P,
        config: StreamConfig,
        streams: u64,
    ) -> (Vec<Made>, InputStream) {
        let mut stream = InputStream::new(config);
        let mut out = Vec::new();
        while stream.stopped().is_none() {
            out.extend(stream.next_batch(producer, streams));
        }
        (out, stream)
    }

    #[test]
    fn the_inputs_do_not_depend_on_the_batch_size_and_input_i_is_stream_i() {
        let grammar = grammar("<start> ::= <d>+\n<d> ::= r\"[0-9]\"\n");
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let config = StreamConfig::new(5, Some(100));
        let one = all(&generator, config, 1);
        let many = all(&generator, config, 2048);
        assert_eq!(one.len(), 100);
        for (i, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!((a.index, &a.bytes), (b.index, &b.bytes));
            assert_eq!(a.index, i as u64);
        }
        // With trees, the same bytes.
        let with_trees = all(
            &generator,
            StreamConfig {
                trees: true,
                ..config
            },
            7,
        );
        for (a, b) in one.iter().zip(&with_trees) {
            assert_eq!(Some(a.bytes.as_slice()), b.tree.as_ref().map(|t| t.bytes()));
        }
    }

    #[test]
    fn unique_skips_repeats_and_stops_at_the_budget_on_a_small_language() {
        let grammar = grammar("<start> ::= \"a\" | \"b\" | \"c\"\n");
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let config = StreamConfig {
            unique: Some(10),
            ..StreamConfig::new(1, Some(5))
        };
        let (made, stream) = drain(&generator, config, 2048);
        let mut bytes: Vec<_> = made.iter().map(|m| m.bytes.clone()).collect();
        bytes.sort();
        assert_eq!(bytes, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(stream.stopped(), Some(Stop::Budget));
        assert!(stream.drawn() <= 50);
    }

    #[test]
    fn unique_draws_no_stream_it_does_not_need() {
        // Ten digits: a repeat among 30 inputs is a chance of about 1 in 20 million.
        let grammar = grammar("<start> ::= <d>{10}\n<d> ::= r\"[0-9]\"\n");
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let config = StreamConfig {
            unique: Some(10),
            ..StreamConfig::new(2, Some(30))
        };
        let (_, stream) = drain(&generator, config, 2048);
        assert_eq!((stream.made(), stream.drawn()), (30, 30));
    }

    /// A producer whose odd streams give nothing.
    struct EvenOnly<'g>(Generator<'g>);

    #[derive(Debug)]
    struct Odd;

    impl std::fmt::Display for Odd {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("odd stream")
        }
    }

    impl Miss for Odd {}

    impl Producer for EvenOnly<'_> {
        type Miss = Odd;

        fn grammar(&self) -> &Grammar {
            self.0.grammar()
        }

        fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Odd> {
            use rand::Rng;
            if rng.next_u32() % 2 == 1 {
                return Err(Odd);
            }
            let (tree, stats) = self.0.generate_tree(rng);
            Ok(Fresh { tree, stats })
        }
    }

    #[test]
    fn missed_streams_are_skipped_counted_and_the_count_still_met() {
        let grammar = grammar("<start> ::= <d>+\n<d> ::= r\"[0-9]\"\n");
        let producer = EvenOnly(Generator::new(&grammar, GenConfig::default()).unwrap());
        let config = StreamConfig::new(3, Some(40));
        let (made, stream) = drain(&producer, config, 16);
        assert_eq!(made.len(), 40);
        assert_eq!(stream.stopped(), Some(Stop::Count));
        let (misses, first) = stream.misses();
        assert!(misses > 0);
        assert_eq!(first, Some("odd stream"));
        assert!(stream.drawn() >= stream.made() + misses);
    }
}

/// A producer whose trees hold Fandango bit fields: each input is its tree's bits
/// packed into bytes as Fandango packs them ([`LoadedSpec::input_bytes`]); a tree whose
/// bits fill no whole byte is no input, and its stream is skipped.
pub struct BitPacked<'a, P> {
    /// The producer of the trees.
    pub inner: P,
    /// The spec whose bit layout packs them.
    pub spec: &'a LoadedSpec,
}

/// Why a [`BitPacked`] stream gives no input.
#[derive(Debug)]
pub enum PackMiss<M> {
    /// The inner producer's reason.
    Inner(M),
    /// The tree's bits fill no whole byte.
    LooseBits(crate::LooseBits),
}

impl<M: std::fmt::Display> std::fmt::Display for PackMiss<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackMiss::Inner(miss) => miss.fmt(f),
            PackMiss::LooseBits(loose) => write!(f, "a tree that is no input: {loose}"),
        }
    }
}

impl<M: Miss> Miss for PackMiss<M> {
    fn deadline_passed(&self) -> bool {
        matches!(self, PackMiss::Inner(miss) if miss.deadline_passed())
    }
}

impl<P: Producer> Producer for BitPacked<'_, P> {
    type Miss = PackMiss<P::Miss>;

    fn grammar(&self) -> &Grammar {
        self.inner.grammar()
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        self.inner.tree(rng).map_err(PackMiss::Inner)
    }

    fn input<'t>(
        &self,
        tree: &'t DerivationTree,
    ) -> Result<std::borrow::Cow<'t, [u8]>, Self::Miss> {
        self.spec.input_bytes(tree).map_err(PackMiss::LooseBits)
    }
}
