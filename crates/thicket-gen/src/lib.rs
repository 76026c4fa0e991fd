//! # thicket-gen
//!
//! Producing inputs from a grammar. This crate has the depth-bounded random generator of
//! Algorithm 2 ("BoundedTree") of the k-path paper (§4.2 of the journal version of
//! "Systematically Covering Input Structure" by Havrikov, Kampmann and Zeller):
//! every choice — which alternative, whether an optional part appears, how often a
//! repetition repeats — is limited to what still fits into the depth limit, using the
//! minimal depths precomputed by [`thicket_grammar::Analysis`].
//!
//! Decisions where the paper leaves room (each tested in this crate):
//! - **Depth** counts rule expansions (see [`thicket_grammar::analysis`]); a choice *fits*
//!   when `depth + min_depth(choice) <= max_depth`, so a tree never exceeds `max_depth`.
//! - **Slot order.** Algorithm 2 fills open slots in random order. Each slot's choice
//!   depends only on its own depth, so the order does not change the distribution of
//!   trees; we expand depth-first, left to right, which lets output stream into a
//!   [`TreeSink`] without building a tree.
//! - **Choices** among fitting alternatives are uniform; a repetition count is uniform in
//!   `[min, min(max, max(min, max_repetitions))]` (Tribble's rule), and `min` when the
//!   item does not fit. Mandatory items (`min >= 1`) always fit, because their parent
//!   was only chosen if its minimal subtree fits. That is [`ChoicePolicy::Uniform`].
//! - **Sized choices** (beyond the paper, the default: [`ChoicePolicy::Sized`]). Uniform
//!   choices suit grammars whose recursive alternatives are many; grammars written for
//!   parsers have mostly leaf alternatives (JSON's `<value>`: two containers, five
//!   leaves), so a tree is a subcritical branching process and most inputs are tiny
//!   and repeated (grammars-v4's JSON: a mean of 17 bytes, 35% of 100,000 distinct).
//!   So each input draws a size target and prefers the alternatives that recurse until
//!   its committed size reaches it, then the others: 71.5 bytes and 96% distinct there.
//!   We judge its cost by bytes per second, not inputs per second (larger inputs take
//!   longer to write, whatever the policy): 0.8-1.1x uniform's bytes/s, so 4-5x fewer
//!   (4.2x larger) inputs per second on that grammar, and 1.45x fewer on the bundled
//!   `json.fan` (87 B / 99.5% distinct against 58 B / 69%). The choice stays a function of `(seed, index)`
//!   alone, with no memory across inputs, so inputs can still be made in parallel.
//! - **Uniform where it suffices** ([`ChoicePolicy::sized_unless_uniform_suffices`],
//!   the default of ANTLR grammars). Steering pays where uniform choices make inputs
//!   smaller than the target asks (JSON's leaves) and where they run into the node
//!   budget (explosive grammars). Where neither holds, steering does not grow the
//!   inputs, but past its target it closes recursion off, which changes the mix of
//!   constructs: text outside the recursion (comments, a preamble of statements)
//!   spends the target first, and what lies deep (css3's declarations' values, their
//!   dimensions and functions) is seldom reached (css3: 68 dimensions in 1,000
//!   inputs sized, 424 uniform, at about the same mean size). So a grammar whose
//!   uniform inputs (256 drawn, seed 0) are on average at least as large as the
//!   sized ones and at most twice as large (sized targets are drawn up to twice
//!   their mean), none running into the node budget, and no fewer of them distinct,
//!   gets uniform choices. The last condition is there because a mean hides how
//!   uniform sizes spread: most uniform inputs are a leaf or two, the same few again
//!   and again, and a few deep ones carry the mean (json5 of grammars-v4: uniform
//!   inputs 7.8 bytes on average, 143 of 256 distinct; sized 6.5 bytes, 154). The
//!   samples are drawn much as the caller makes its inputs (an ANTLR grammar's blank
//!   draws are drawn again): raw draws of json5 are blank half the time, which hid
//!   that difference (90 distinct of 256 either way).
//! - **Node budget** (beyond the paper): the depth limit alone does not bound size (a
//!   binary rule of depth 30 has 2^30 leaves), so after `max_nodes` rule expansions the
//!   generator closes the tree off along the shortest derivations. [`GenStats`] says when.
//! - **Size bounds** (beyond the paper): every input stays within `max_size` bytes and
//!   `max_nodes` steps (rule expansions plus repetitions, each repeated item counting
//!   one). The generator keeps the minimal completion of what it has chosen so far
//!   (from [`Analysis`]' minimal lengths and steps) within both, and a choice that would
//!   overrun them (a longer alternative, more repetitions, a longer regex match) gives
//!   way to the smallest one. So `"a"{4000000000}` is refused when the generator is
//!   built ([`GenError::TooLarge`]), not when memory runs out, and an optional huge part
//!   is simply never chosen. Repetitions are expanded one at a time, so a large count
//!   costs no memory up front.
//! - **Weights** (beyond the paper; [`prob`]): `generate_*_weighted` draws each
//!   alternative in proportion to its weight among those the policy allows (with
//!   [`ChoicePolicy::Sized`]: within the class, recursive or not, that the size target
//!   picks; so sizes stay steered and weights shape the rest), and each repetition
//!   count in proportion to its weight among the counts that fit. Without weights the
//!   generator takes the same path as before (one predictable branch per choice).
//! - **Randomness** comes from SplitMix64 (fast, one 64-bit word of state, passes
//!   BigCrush), started per input at a hash of `(seed, index)`, so input `i` of seed `s`
//!   is the same on every machine and independent of how many threads produce the
//!   others. A choice among `n` options uses the top bits of
//!   `next_u32() * n` (Lemire's multiply, without the rejection step): its bias is below
//!   `n / 2^32`, far under anything a test campaign can observe, and it is cheap, which
//!   matters because generation makes one choice every few bytes.
//! - **Other choice sources** ([`choices`]): the choices can come from elsewhere, e.g. a
//!   property-based tester's data ([`Generator::generate_into_from`]); such a source may
//!   ask for options simplest first and repetitions item by item, so that shrinking its
//!   choices shrinks the input. Seeded generation goes through the same code with
//!   [`Random`], unchanged.

#![warn(missing_docs)]

pub mod choices;
mod language;
pub mod prob;
mod produce;
mod regex_gen;

pub use choices::{ChoiceSource, Random};
pub use language::DistinctInputs;
pub use prob::{Counts, Weights};
pub use produce::{Encoding, Fresh, Miss, Producer, Weighted};
pub use regex_gen::{RegexSampleError, RegexSampler};

use std::collections::HashSet;

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;
use thicket_grammar::{Analysis, Expr, ExprId, Grammar, UNBOUNDED};
use thicket_tree::{ByteSink, DerivationTree, TreeBuilder, TreeSink};

/// How the generator makes its choices among what fits the limits.
///
/// This is the generator's policy seam: the limits ([`GenConfig`]'s other fields) say
/// what may be chosen, the policy says how it is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChoicePolicy {
    /// Algorithm 2 as the paper has it: alternatives uniformly among those that fit,
    /// repetition counts uniformly. On grammars written for parsers (where most
    /// alternatives of a recursive rule are leaves, as in JSON's `<value>`) this makes
    /// small trees: on grammars-v4's JSON grammar a mean of 17 bytes, a third of them
    /// distinct.
    Uniform,
    /// Sized generation: each input draws a target of extra bytes (beyond the smallest
    /// input) uniformly in `0..=2 * bytes`, so that every size stays possible.
    /// While the input's committed size (the minimal completion of what has been
    /// chosen so far, the measure the size bound uses) is under the target, an
    /// alternation chooses uniformly among its *recursive* alternatives (those whose
    /// derivations can contain the enclosing rule again, like `<obj>` and `<arr>` in
    /// JSON's `<value>`), if one fits the depth limit. Past the target it chooses
    /// uniformly among the others (strings, numbers, `true`, ...), and repetitions of
    /// a recursive item take their minimum (with weights that give such a repetition's
    /// counts a row: a count drawn from the row, its items closing off the same way,
    /// until the input reaches twice its target, so that a small input's list can
    /// still have a second item), so the tree closes off in a few steps.
    /// Everything else (non-recursive choices, repetition counts below the target,
    /// every limit) is as in [`ChoicePolicy::Uniform`]; a grammar without recursion
    /// draws no target and gets the same inputs as with [`ChoicePolicy::Uniform`].
    Sized {
        /// Mean target, in bytes beyond the grammar's smallest input.
        bytes: u32,
    },
}

/// The default target of [`ChoicePolicy::Sized`]: 56 bytes, which on grammars-v4's JSON
/// grammar gives a mean of 70 bytes, all of 100,000 inputs distinct (Fandango's
/// figures there: 65-70 bytes, all distinct).
pub const DEFAULT_TARGET_SIZE: u32 = 56;

impl ChoicePolicy {
    /// The policy a size target of `bytes` asks for (`--target-size`): sized, or
    /// uniform choices for 0.
    pub fn for_target_size(bytes: u32) -> ChoicePolicy {
        match bytes {
            0 => ChoicePolicy::Uniform,
            bytes => ChoicePolicy::Sized { bytes },
        }
    }
}

/// Inputs drawn under each policy by [`ChoicePolicy::sized_unless_uniform_suffices`]
/// (inputs `0..256` of seed 0, so the answer is a function of the grammar alone).
pub const POLICY_SAMPLE: u64 = 256;

impl ChoicePolicy {
    /// [`ChoicePolicy::Sized`] with a target of `bytes`, unless uniform choices already
    /// make inputs at least as large on average and at most twice as large, none of
    /// them running into the node budget and no fewer of them distinct (see the crate
    /// docs, "Uniform where it suffices"): then [`ChoicePolicy::Uniform`]. `config`'s
    /// limits apply to both samples ([`POLICY_SAMPLE`] inputs each); `prepare` sets up
    /// each sampling generator as the caller's own will be (a printable share), and
    /// `draw` appends one input to the buffer as the caller will make it (with its
    /// weights, redrawing what its checks reject), saying what generating it took.
    pub fn sized_unless_uniform_suffices(
        grammar: &Grammar,
        config: GenConfig,
        bytes: u32,
        prepare: impl Fn(&mut Generator<'_>),
        draw: impl Fn(&Generator<'_>, &mut GenRng, &mut Vec<u8>) -> GenStats,
    ) -> ChoicePolicy {
        let sized = ChoicePolicy::for_target_size(bytes);
        if sized == ChoicePolicy::Uniform {
            return sized;
        }
        // The sample under `policy`: its mean bytes and how many of its inputs are
        // distinct; None if an input ran into the node budget (uniform choices that do
        // not close inputs off on their own).
        let sample = |policy| {
            let mut generator = Generator::new(grammar, GenConfig { policy, ..config }).ok()?;
            prepare(&mut generator);
            let mut out = Vec::new();
            let mut ends = Vec::with_capacity(POLICY_SAMPLE as usize);
            for index in 0..POLICY_SAMPLE {
                let rng = &mut Generator::rng_for(0, index);
                if draw(&generator, rng, &mut out).budget_exhausted {
                    return None;
                }
                ends.push(out.len());
            }
            let starts = std::iter::once(0).chain(ends.iter().copied());
            let distinct: HashSet<&[u8]> = starts
                .zip(&ends)
                .map(|(start, &end)| &out[start..end])
                .collect();
            Some((out.len() as f64 / POLICY_SAMPLE as f64, distinct.len()))
        };
        let Some((uniform_mean, uniform_distinct)) = sample(ChoicePolicy::Uniform) else {
            return sized;
        };
        match sample(sized) {
            Some((sized_mean, sized_distinct))
                if uniform_mean >= sized_mean
                    && uniform_mean <= 2.0 * sized_mean
                    && uniform_distinct >= sized_distinct =>
            {
                ChoicePolicy::Uniform
            }
            _ => sized,
        }
    }
}

/// A seed drawn from the clock, for a run given none (which should say which it drew,
/// so that the run can be repeated).
pub fn draw_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Default for ChoicePolicy {
    /// [`ChoicePolicy::Sized`] with [`DEFAULT_TARGET_SIZE`].
    fn default() -> Self {
        ChoicePolicy::Sized {
            bytes: DEFAULT_TARGET_SIZE,
        }
    }
}

/// Limits of the bounded random generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenConfig {
    /// Greatest number of rule expansions on any root-to-leaf path (the paper's `d`).
    pub max_depth: u32,
    /// Cap on the repetitions of `*`, `+`, `{n,}` and of regex repetitions.
    pub max_repetitions: u32,
    /// Rule expansions after which the rest of the tree is closed off minimally; also
    /// the bound on steps (rule expansions plus repetitions) of any input.
    pub max_nodes: usize,
    /// Bytes of any input (16 MiB by default).
    pub max_size: u64,
    /// How choices are made within the limits.
    pub policy: ChoicePolicy,
}

/// Default of [`GenConfig::max_size`]: 16 MiB.
pub const DEFAULT_MAX_SIZE: u64 = 16 << 20;

impl Default for GenConfig {
    /// Depth 30 (as in the paper's evaluation), 5 repetitions (Fandango's default),
    /// 100,000 rule expansions, 16 MiB, sized choices ([`DEFAULT_TARGET_SIZE`]).
    fn default() -> Self {
        GenConfig {
            max_depth: 30,
            max_repetitions: 5,
            max_nodes: 100_000,
            max_size: DEFAULT_MAX_SIZE,
            policy: ChoicePolicy::default(),
        }
    }
}

/// Why a generator cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GenError {
    /// The depth limit is below the least depth of any tree.
    #[error(
        "--max-depth {given} is too small: the smallest tree of this grammar has depth {required}"
    )]
    DepthTooSmall {
        /// The grammar's minimal depth.
        required: u32,
        /// The limit that was asked for.
        given: u32,
    },
    /// Even the smallest input is over a limit: refused before anything is allocated.
    #[error(
        "the smallest input of this grammar {what}, over the limit {option} {limit}; raise {option} if inputs this large are meant (`thicket lint` shows where)"
    )]
    TooLarge {
        /// What the smallest input needs, e.g. "is 4000000000 bytes".
        what: String,
        /// The option that sets the limit (`--max-size` or `--max-nodes`).
        option: &'static str,
        /// The limit in force.
        limit: u64,
    },
    /// The start rule cannot derive any finite input.
    #[error("the start rule {0} can never finish (run `thicket lint` for the cycle)")]
    Unproductive(String),
    /// A regex terminal that the regex generator cannot handle.
    #[error("cannot generate from regex terminal r\"{pattern}\": {reason}")]
    Regex {
        /// The pattern.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
}

/// What happened while generating one input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Rule expansions in the tree.
    pub rule_expansions: usize,
    /// Whether the node budget ran out and the tree was closed off minimally.
    pub budget_exhausted: bool,
}

/// A depth-bounded random generator for one grammar; build once, use for many inputs
/// (from many threads: it is `Sync`).
pub struct Generator<'g> {
    grammar: &'g Grammar,
    analysis: Analysis,
    config: GenConfig,
    /// The grammar compiled for generation, indexed like the grammar's expressions.
    ops: Vec<Op>,
    /// Child lists of `Seq` ops, and `Alt` alternatives sorted by minimal depth.
    children: Vec<u32>,
    /// Minimal depth of each entry of `children` (used for `Alt` alternatives).
    child_depths: Vec<u32>,
    /// Bytes of all literals.
    literals: Vec<u8>,
    /// Compiled regex terminals.
    regexes: Vec<RegexSampler>,
    /// For each `Alt` (by its `split` field): its recursive and other alternatives.
    splits: Vec<Split>,
    /// Whether some choice leads back to its rule (else sized choices are uniform ones,
    /// and draw no target, so the inputs are the same).
    recursive: bool,
}

/// An alternation's alternatives in two classes for [`ChoicePolicy::Sized`], each a range of
/// `children` sorted by minimal depth.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Alternatives whose derivations can contain the enclosing rule.
    recursive: Class,
    /// The other alternatives.
    other: Class,
}

/// A range of `children` sorted by minimal depth (`deepest` is the last one's).
#[derive(Clone, Copy, Debug)]
struct Class {
    start: u32,
    len: u32,
    deepest: u32,
}

/// One grammar node, flattened for the generator's inner loop: no pointers to chase,
/// references resolved to their rule's body, repetition bounds precomputed.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// `literals[start..start + len]`.
    Literal { start: u32, len: u32 },
    /// `regexes[index]`.
    Regex { index: u32 },
    /// A rule reference: expand `body` one level deeper.
    Ref { body: u32 },
    /// `children[start..start + len]`, in order.
    Seq { start: u32, len: u32 },
    /// `children[start..start + len]`, sorted by minimal depth; `deepest` is the largest;
    /// `splits[split]` classifies them.
    Alt {
        start: u32,
        len: u32,
        deepest: u32,
        split: u32,
    },
    /// `item` repeated `min..=max` times (`max` already capped), if `item` fits;
    /// `recursive` if `item`'s derivations can contain the enclosing rule.
    Repeat {
        item: u32,
        item_depth: u32,
        min: u32,
        max: u32,
        recursive: bool,
    },
}

/// The random number generator of generation (see the crate docs).
pub type GenRng = SplitMix64;

/// A uniform choice in `0..n` (`n >= 1`), by Lemire's multiply (see the crate docs).
#[inline]
pub fn below<R: Rng + ?Sized>(rng: &mut R, n: u32) -> u32 {
    ((u64::from(rng.next_u32()) * u64::from(n)) >> 32) as u32
}

/// An index drawn in proportion to `weights`; `None` if they are all zero (or not
/// finite), so the caller falls back to a uniform draw.
fn weighted<C: ChoiceSource>(
    choices: &mut C,
    weights: impl Iterator<Item = f64> + Clone,
) -> Option<usize> {
    let total: f64 = weights.clone().sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    // 53 random bits as a fraction of the total.
    let mut x = (choices.bits() >> 11) as f64 / (1u64 << 53) as f64 * total;
    let mut last = None;
    for (i, w) in weights.enumerate() {
        if w > 0.0 {
            if x < w {
                return Some(i);
            }
            x -= w;
            last = Some(i);
        }
    }
    last
}

/// SplitMix64's output function: spreads `(seed, index)` over the seed space.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

enum Task {
    Expand {
        op: u32,
        depth: u32,
    },
    /// `left` more repetitions of `op` (one is expanded when popped).
    Repeat {
        op: u32,
        depth: u32,
        left: u32,
    },
    /// Up to `left` optional repetitions of `op` (item by item: a choice before each),
    /// within spans of `label`, `spans` of which are open.
    More {
        op: u32,
        depth: u32,
        left: u32,
        label: u64,
        spans: u32,
    },
    /// A span begins (see [`ChoiceSource::span_start`]).
    SpanStart {
        label: u64,
    },
    /// The innermost span ends.
    SpanEnd,
    Close,
}

/// The label of the spans of the repetition `op` (spread over 64 bits).
fn span_label(op: u32) -> u64 {
    splitmix64(u64::from(op) ^ 0x5EA1_5EA1) >> 1
}

/// What an input may still take beyond the minimal completion of what is chosen so far.
struct Room {
    bytes: u64,
    steps: u64,
}

/// Which parts of a rule's body lead back to the rule: the "recursive" alternatives and
/// repetition items of [`ChoicePolicy::Sized`].
struct Recursion<'g> {
    grammar: &'g Grammar,
    components: thicket_grammar::Components,
    /// The rule whose body holds each expression (`None` for synthetic roots).
    owner: Vec<Option<thicket_grammar::SymbolId>>,
}

impl<'g> Recursion<'g> {
    fn new(grammar: &'g Grammar) -> Recursion<'g> {
        let mut owner = vec![None; grammar.expr_count()];
        for symbol in grammar.symbols() {
            let mut stack = vec![grammar.rule(symbol).body];
            while let Some(id) = stack.pop() {
                owner[id.index()] = Some(symbol);
                stack.extend_from_slice(grammar.expr(id).children());
            }
        }
        Recursion {
            grammar,
            components: thicket_grammar::Components::new(grammar),
            owner,
        }
    }

    /// Whether derivations of `part`, a child of `parent`, can contain the rule that
    /// holds `parent`: whether `part` refers to a rule of that rule's component.
    fn is_recursive(&self, parent: ExprId, part: ExprId) -> bool {
        let Some(rule) = self.owner[parent.index()] else {
            return false;
        };
        let mut recursive = false;
        thicket_grammar::reach::refs_in(self.grammar, part, |s| {
            recursive |= self.components.same(s, rule);
        });
        recursive
    }
}

/// Opens a node in the sink and schedules its close, if the sink cares about structure.
#[inline]
fn open<S: TreeSink>(sink: &mut S, stack: &mut Vec<Task>, expr: ExprId) {
    if S::STRUCTURED {
        sink.open(expr);
        stack.push(Task::Close);
    }
}

impl<'g> Generator<'g> {
    /// Prepares a generator, checking that the grammar can produce anything within the
    /// limits.
    pub fn new(grammar: &'g Grammar, config: GenConfig) -> Result<Generator<'g>, GenError> {
        Generator::with_analysis(grammar, config, Analysis::new(grammar), true)
    }

    /// A generator that never derives the rules in `avoid` where the grammar leaves a
    /// choice (see [`Analysis::avoiding`]): [`Generator::expand`] on a node that can
    /// avoid them produces a subtree without them. The start rule need not be able to
    /// avoid them; [`Generator::can_avoid`] tells which nodes can.
    pub fn avoiding(
        grammar: &'g Grammar,
        config: GenConfig,
        avoid: &[thicket_grammar::SymbolId],
    ) -> Result<Generator<'g>, GenError> {
        Generator::with_analysis(grammar, config, Analysis::avoiding(grammar, avoid), false)
    }

    /// Whether a subtree of `expr` expanded at `depth` fits the depth limit (for a
    /// generator made by [`Generator::avoiding`]: avoiding its rules).
    pub fn can_avoid(&self, expr: ExprId, depth: u32) -> bool {
        let min = self.analysis.expr_min_depth(expr);
        min != UNBOUNDED && depth.saturating_add(min) <= self.config.max_depth
    }

    fn with_analysis(
        grammar: &'g Grammar,
        config: GenConfig,
        analysis: Analysis,
        check_start: bool,
    ) -> Result<Generator<'g>, GenError> {
        let required = if check_start {
            analysis.grammar_min_depth(grammar)
        } else {
            0
        };
        if required == UNBOUNDED {
            return Err(GenError::Unproductive(
                grammar.display_symbol(grammar.start()),
            ));
        }
        if required > config.max_depth {
            return Err(GenError::DepthTooSmall {
                required,
                given: config.max_depth,
            });
        }
        let min_len = analysis.expr_min_len(grammar.root());
        if min_len > config.max_size {
            return Err(GenError::TooLarge {
                what: format!("is {min_len} bytes"),
                option: "--max-size",
                limit: config.max_size,
            });
        }
        let min_steps = analysis.expr_min_steps(grammar.root());
        if min_steps > config.max_nodes as u64 {
            return Err(GenError::TooLarge {
                what: format!("takes {min_steps} rule expansions and repetitions"),
                option: "--max-nodes",
                limit: config.max_nodes as u64,
            });
        }
        let mut generator = Generator {
            grammar,
            analysis,
            config,
            ops: Vec::with_capacity(grammar.expr_count()),
            children: Vec::new(),
            child_depths: Vec::new(),
            literals: Vec::new(),
            regexes: Vec::new(),
            splits: Vec::new(),
            recursive: false,
        };
        let recursive = Recursion::new(grammar);
        for id in grammar.expr_ids() {
            let op = generator.compile(id, &recursive)?;
            generator.ops.push(op);
        }
        Ok(generator)
    }

    /// Appends `alts` (sorted by minimal depth) to `children` as one class.
    fn push_class(&mut self, alts: impl Iterator<Item = (u32, ExprId)>) -> Class {
        let start = self.children.len() as u32;
        let mut deepest = 0;
        for (depth, alt) in alts {
            self.children.push(alt.index() as u32);
            self.child_depths.push(depth);
            deepest = depth;
        }
        Class {
            start,
            len: self.children.len() as u32 - start,
            deepest,
        }
    }

    fn compile(&mut self, id: ExprId, recursion: &Recursion) -> Result<Op, GenError> {
        let index = |e: ExprId| e.index() as u32;
        Ok(match self.grammar.expr(id) {
            Expr::Literal(bytes) => {
                let start = self.literals.len() as u32;
                self.literals.extend_from_slice(bytes);
                Op::Literal {
                    start,
                    len: bytes.len() as u32,
                }
            }
            Expr::Regex(r) => {
                let sampler =
                    RegexSampler::new(&r.hir, self.config.max_repetitions).map_err(|e| {
                        GenError::Regex {
                            pattern: r.pattern.clone(),
                            reason: format!("{e:?}"),
                        }
                    })?;
                // Sampling takes time in the repetitions, whatever their length: a regex
                // that always repeats more than the step budget is refused here, even
                // in a part of the grammar that is never chosen.
                if sampler.min_steps() > self.config.max_nodes as u64 {
                    return Err(GenError::Regex {
                        pattern: r.pattern.clone(),
                        reason: format!(
                            "every match takes at least {} repetitions, over the limit --max-nodes {}",
                            sampler.min_steps(),
                            self.config.max_nodes
                        ),
                    });
                }
                if sampler.min_len() > self.config.max_size {
                    return Err(GenError::Regex {
                        pattern: r.pattern.clone(),
                        reason: format!(
                            "every match is at least {} bytes, over the limit --max-size {}",
                            sampler.min_len(),
                            self.config.max_size
                        ),
                    });
                }
                self.regexes.push(sampler);
                Op::Regex {
                    index: self.regexes.len() as u32 - 1,
                }
            }
            Expr::Ref(symbol) => Op::Ref {
                body: index(self.grammar.rule(*symbol).body),
            },
            Expr::Seq(items) => {
                let start = self.children.len() as u32;
                for &item in items.iter() {
                    self.children.push(index(item));
                    self.child_depths.push(self.analysis.expr_min_depth(item));
                }
                Op::Seq {
                    start,
                    len: items.len() as u32,
                }
            }
            Expr::Alt(alts) => {
                let mut sorted: Vec<(u32, ExprId)> = alts
                    .iter()
                    .map(|&a| (self.analysis.expr_min_depth(a), a))
                    .collect();
                sorted.sort_by_key(|&(depth, _)| depth);
                let all = self.push_class(sorted.iter().copied());
                let split = Split {
                    recursive: self.push_class(
                        sorted
                            .iter()
                            .copied()
                            .filter(|&(_, alt)| recursion.is_recursive(id, alt)),
                    ),
                    other: self.push_class(
                        sorted
                            .iter()
                            .copied()
                            .filter(|&(_, alt)| !recursion.is_recursive(id, alt)),
                    ),
                };
                self.recursive |= split.recursive.len > 0;
                self.splits.push(split);
                Op::Alt {
                    start: all.start,
                    len: all.len,
                    deepest: all.deepest,
                    split: self.splits.len() as u32 - 1,
                }
            }
            Expr::Repeat(r) => {
                let cap = r.min.max(self.config.max_repetitions);
                Op::Repeat {
                    item: index(r.item),
                    item_depth: self.analysis.expr_min_depth(r.item),
                    min: r.min,
                    max: r.max.map_or(cap, |m| m.min(cap)),
                    recursive: {
                        let recursive = recursion.is_recursive(id, r.item);
                        self.recursive |= recursive;
                        recursive
                    },
                }
            }
        })
    }

    /// The grammar.
    pub fn grammar(&self) -> &'g Grammar {
        self.grammar
    }

    /// The grammar's analysis.
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// The limits in force.
    pub fn config(&self) -> GenConfig {
        self.config
    }

    /// How many distinct inputs this generator can make, if there are at most
    /// `limit` derivations within its depth limit and repetition cap: their texts
    /// listed, each once. `None` if there may be more, or if listing them would build
    /// more than 64 MiB of text. An upper bound when `max_size` or `max_nodes` close
    /// some of them off. Counting costs a pass per depth level; listing, at most
    /// `limit` texts.
    pub fn distinct_inputs(&self, limit: usize) -> Option<DistinctInputs> {
        language::distinct_inputs(self, limit)
    }

    /// The random number generator for input `index` of `seed`.
    pub fn rng_for(seed: u64, index: u64) -> GenRng {
        GenRng::seed_from_u64(splitmix64(seed) ^ splitmix64(index ^ 0x6A09_E667_F3BC_C909))
    }

    /// Generates one input as a derivation tree.
    pub fn generate_tree<R: Rng + ?Sized>(&self, rng: &mut R) -> (DerivationTree, GenStats) {
        let mut builder = TreeBuilder::new();
        let stats = self.generate_into(rng, &mut builder);
        (builder.finish(), stats)
    }

    /// Generates one input, appending its bytes to `out` (no tree is built).
    pub fn generate_bytes<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<u8>) -> GenStats {
        let mut sink = ByteSink {
            bytes: std::mem::take(out),
        };
        let stats = self.generate_into(rng, &mut sink);
        *out = sink.bytes;
        stats
    }

    /// Generates one input, reporting the derivation to `sink` in preorder.
    pub fn generate_into<R: Rng + ?Sized, S: TreeSink>(
        &self,
        rng: &mut R,
        sink: &mut S,
    ) -> GenStats {
        self.expand(self.grammar.root(), 0, rng, sink)
    }

    /// Generates one input as a derivation tree, its choices from `choices` (see
    /// [`choices`]); with [`Random`] of an rng, the tree [`Generator::generate_tree`]
    /// makes from it.
    pub fn generate_tree_from<C: ChoiceSource>(
        &self,
        choices: &mut C,
    ) -> (DerivationTree, GenStats) {
        let mut builder = TreeBuilder::new();
        let stats = self.generate_into_from(choices, &mut builder);
        (builder.finish(), stats)
    }

    /// Generates one input into `sink`, its choices from `choices`. Choices and sink
    /// events come in preorder: an alternation's or repetition's choice just before
    /// its node is opened, a regex terminal's just before the terminal.
    pub fn generate_into_from<C: ChoiceSource, S: TreeSink>(
        &self,
        choices: &mut C,
        sink: &mut S,
    ) -> GenStats {
        let start = self.grammar.root();
        let room = self.room_for(start);
        self.expand_within::<false, _, _>(start, 0, choices, sink, room, None)
    }

    /// Makes character classes that hold printable ASCII and other characters (negated
    /// sets, any character) draw printable ASCII `percent` percent of the time (see
    /// [`RegexSampler::set_printable_ascii_share`]); 0, the default, draws uniformly.
    pub fn set_printable_ascii_share(&mut self, percent: u8) {
        for regex in &mut self.regexes {
            regex.set_printable_ascii_share(percent);
        }
    }

    /// Generates one input as a derivation tree, choosing by `weights` (made for this
    /// grammar; see the crate docs on how they combine with the policy).
    pub fn generate_tree_weighted<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        weights: &Weights,
    ) -> (DerivationTree, GenStats) {
        let mut builder = TreeBuilder::new();
        let stats = self.generate_into_weighted(rng, &mut builder, weights);
        (builder.finish(), stats)
    }

    /// Generates one input's bytes, choosing by `weights`.
    pub fn generate_bytes_weighted<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut Vec<u8>,
        weights: &Weights,
    ) -> GenStats {
        let mut sink = ByteSink {
            bytes: std::mem::take(out),
        };
        let stats = self.generate_into_weighted(rng, &mut sink, weights);
        *out = sink.bytes;
        stats
    }

    /// [`Generator::generate_into`], choosing by `weights`.
    pub fn generate_into_weighted<R: Rng + ?Sized, S: TreeSink>(
        &self,
        rng: &mut R,
        sink: &mut S,
        weights: &Weights,
    ) -> GenStats {
        assert!(self.fits(weights), "weights made for another grammar");
        let start = self.grammar.root();
        let room = self.room_for(start);
        self.expand_within::<true, _, _>(start, 0, &mut Random(rng), sink, room, Some(weights))
    }

    fn room_for(&self, start: ExprId) -> Room {
        Room {
            bytes: self
                .config
                .max_size
                .saturating_sub(self.analysis.expr_min_len(start)),
            steps: (self.config.max_nodes as u64)
                .saturating_sub(self.analysis.expr_min_steps(start)),
        }
    }

    /// Expands one node at `depth` (rule expansions above it) into `sink`: the close-off
    /// of Algorithm 2 from a single open slot. The k-path generator uses this to finish
    /// the slots it does not steer. If the node's smallest subtree does not fit below
    /// `depth`, the shallowest choices are taken and the tree exceeds the limit (the
    /// caller checks).
    pub fn expand<R: Rng + ?Sized, S: TreeSink>(
        &self,
        start: ExprId,
        depth: u32,
        rng: &mut R,
        sink: &mut S,
    ) -> GenStats {
        let room = self.room_for(start);
        self.expand_within::<false, _, _>(start, depth, &mut Random(rng), sink, room, None)
    }

    /// Emits a smallest subtree of `start`: every alternation takes an alternative of
    /// least minimal length (ties drawn from `rng`), every repetition its minimum count,
    /// every regex terminal a shortest match. The depth limit is not applied (a smallest
    /// subtree can be deeper than a random one). Minimisation replaces subtrees by these.
    pub fn expand_smallest<R: Rng + ?Sized, S: TreeSink>(
        &self,
        start: ExprId,
        rng: &mut R,
        sink: &mut S,
    ) {
        // With no room beyond the minimal completion, every choice is a least one.
        let room = Room { bytes: 0, steps: 0 };
        self.expand_within::<false, _, _>(start, 0, &mut Random(rng), sink, room, None);
    }

    /// [`Generator::expand`] with `room` beyond the minimal completion of `start`,
    /// choosing by `weights` if given.
    ///
    /// `WEIGHTED` is a constant so that the unweighted path compiles without a trace
    /// of the weights (the generation benchmark runs at the same speed as before).
    fn expand_within<const WEIGHTED: bool, C: ChoiceSource, S: TreeSink>(
        &self,
        start: ExprId,
        depth: u32,
        rng: &mut C,
        sink: &mut S,
        mut room: Room,
        weights: Option<&Weights>,
    ) -> GenStats {
        let max_depth = self.config.max_depth;
        let mut stats = GenStats::default();
        // Pending work, last first. The node being expanded is kept out of the stack
        // (`current`), which saves a push and a pop for every first child.
        let mut stack: Vec<Task> = Vec::with_capacity(64);
        let mut scratch = Vec::new();
        // Sized choices: grow while the room left is above `grow_until`.
        // Past it, a recursive repetition with a weight row still draws its count while
        // the input is under twice its target (`lists_until`), then takes its minimum:
        // items holding such repetitions again would otherwise keep recursion alive.
        let (grow_until, lists_until) = match self.config.policy {
            ChoicePolicy::Sized { bytes } if self.recursive => {
                let target = u64::from(rng.choose(bytes.saturating_mul(2).saturating_add(1)));
                let floor = room.bytes.saturating_sub(target);
                (Some(floor), Some(floor.saturating_sub(target)))
            }
            _ => (None, None),
        };
        let mut current = Some((start.index() as u32, depth));
        loop {
            let Some((op, depth)) = current.take() else {
                match stack.pop() {
                    None => break,
                    Some(Task::Close) => sink.close(),
                    Some(Task::SpanStart { label }) => rng.span_start(label),
                    Some(Task::SpanEnd) => rng.span_end(),
                    Some(Task::More {
                        op,
                        depth,
                        left,
                        label,
                        spans,
                    }) => {
                        let extra = self.one_more(op, &room).filter(|_| left > 0);
                        if let Some((len, steps)) = extra.filter(|_| !stats.budget_exhausted)
                            && rng.choose(2) == 1
                        {
                            room.bytes -= len;
                            room.steps -= steps;
                            rng.span_start(label);
                            stack.push(Task::More {
                                op,
                                depth,
                                left: left - 1,
                                label,
                                spans: spans + 1,
                            });
                            current = Some((op, depth));
                        } else {
                            for _ in 0..spans {
                                rng.span_end();
                            }
                        }
                    }
                    Some(Task::Expand { op, depth }) => current = Some((op, depth)),
                    Some(Task::Repeat { op, depth, left }) => {
                        if left > 1 {
                            stack.push(Task::Repeat {
                                op,
                                depth,
                                left: left - 1,
                            });
                        }
                        current = Some((op, depth));
                    }
                }
                continue;
            };
            let expr = || self.expr_id(op);
            match self.ops[op as usize] {
                Op::Literal { start, len } => {
                    sink.terminal(
                        expr(),
                        &self.literals[start as usize..(start + len) as usize],
                    );
                }
                Op::Regex { index } => {
                    let regex = &self.regexes[index as usize];
                    sink.terminal_with(expr(), &mut scratch, |out| {
                        regex.sample_from(rng, out, &mut room.bytes)
                    });
                }
                Op::Ref { body } => {
                    stats.rule_expansions += 1;
                    stats.budget_exhausted |= stats.rule_expansions >= self.config.max_nodes;
                    open(sink, &mut stack, expr());
                    current = Some((body, depth + 1));
                }
                Op::Seq { start, len } if C::ITEM_BY_ITEM => {
                    open(sink, &mut stack, expr());
                    let items = &self.children[start as usize..(start + len) as usize];
                    // An item just before a repetition (`<e> ("," <e>)*`) begins a span
                    // of the repetition's label that ends after the repetition.
                    let mut tasks = Vec::with_capacity(items.len() + 2);
                    let mut i = 0;
                    while i < items.len() {
                        let (item, next) = (items[i], items.get(i + 1).copied());
                        let repeats = |op: u32| matches!(self.ops[op as usize], Op::Repeat { .. });
                        match next {
                            Some(next) if repeats(next) && !repeats(item) => {
                                tasks.push(Task::SpanStart {
                                    label: span_label(next),
                                });
                                tasks.push(Task::Expand { op: item, depth });
                                tasks.push(Task::Expand { op: next, depth });
                                tasks.push(Task::SpanEnd);
                                i += 2;
                            }
                            _ => {
                                tasks.push(Task::Expand { op: item, depth });
                                i += 1;
                            }
                        }
                    }
                    stack.extend(tasks.into_iter().rev());
                }
                Op::Seq { start, len } => {
                    open(sink, &mut stack, expr());
                    let items = &self.children[start as usize..(start + len) as usize];
                    if let Some((&first, rest)) = items.split_first() {
                        stack.extend(rest.iter().rev().map(|&op| Task::Expand { op, depth }));
                        current = Some((first, depth));
                    }
                }
                Op::Alt { .. } => {
                    let chosen = self.choose(
                        op,
                        depth,
                        rng,
                        &mut stats,
                        &mut room,
                        grow_until,
                        weights.filter(|_| WEIGHTED),
                    );
                    open(sink, &mut stack, expr());
                    // A terminal alternative (`"a" | "b" | <digit>`) is emitted at once,
                    // saving rounds through the dispatch.
                    if !self.emit_terminal(
                        chosen,
                        rng,
                        sink,
                        &mut scratch,
                        &mut stats,
                        &mut room.bytes,
                    ) {
                        current = Some((chosen, depth));
                    }
                }
                Op::Repeat {
                    item,
                    item_depth,
                    min,
                    max,
                    recursive,
                } => {
                    let item_fits = depth.saturating_add(item_depth) <= max_depth;
                    // Past a sized target, recursion stops: a recursive repetition takes
                    // its minimum, unless the weights give its counts a row and the input
                    // is under twice its target (its items then close off along the
                    // non-recursive alternatives, so a list still gets a second item in
                    // a small input).
                    let row = weights
                        .filter(|_| WEIGHTED)
                        .map(|w| w.repetition_row(expr()))
                        .filter(|row| !row.is_empty());
                    let stop = if row.is_some() {
                        lists_until
                    } else {
                        grow_until
                    };
                    let grown = recursive && stop.is_some_and(|floor| room.bytes <= floor);
                    if C::ITEM_BY_ITEM && !WEIGHTED {
                        // The minimum now, then one choice per optional item.
                        let optional = if !item_fits || stats.budget_exhausted || grown {
                            0
                        } else {
                            max - min
                        };
                        open(sink, &mut stack, expr());
                        if optional > 0 {
                            stack.push(Task::More {
                                op: item,
                                depth,
                                left: optional,
                                label: span_label(op),
                                spans: 0,
                            });
                        }
                        if min > 1 {
                            stack.push(Task::Repeat {
                                op: item,
                                depth,
                                left: min - 1,
                            });
                        }
                        if min > 0 {
                            current = Some((item, depth));
                        }
                        continue;
                    }
                    let mut count = if !item_fits || stats.budget_exhausted || grown {
                        min
                    } else if let Some(row) = row {
                        let options = row.get(min as usize..row.len().min(max as usize + 1));
                        match options.and_then(|o| weighted(rng, o.iter().copied())) {
                            Some(i) => min + i as u32,
                            None => min + rng.choose(max - min + 1),
                        }
                    } else {
                        min + rng.choose(max - min + 1)
                    };
                    if count > min {
                        // Extra repetitions only as far as the room allows.
                        let item_expr = self.expr_id(item);
                        let len = self.analysis.expr_min_len(item_expr);
                        let steps = self.analysis.expr_min_steps(item_expr).saturating_add(1);
                        let fits = (room.bytes.checked_div(len).unwrap_or(u64::MAX))
                            .min(room.steps / steps);
                        if u64::from(count - min) > fits {
                            count = min + fits as u32;
                            stats.budget_exhausted = true;
                        }
                        let extra = u64::from(count - min);
                        room.bytes -= extra * len;
                        room.steps -= extra * steps;
                    }
                    open(sink, &mut stack, expr());
                    if count > 1 {
                        stack.push(Task::Repeat {
                            op: item,
                            depth,
                            left: count - 1,
                        });
                    }
                    if count > 0 {
                        current = Some((item, depth));
                    }
                }
            }
        }
        stats
    }

    /// Chooses an alternative of the alternation `op` at `depth`: uniformly among those
    /// that fit the depth limit (with [`ChoicePolicy::Sized`]: among the recursive ones while
    /// the room left is above `grow_until`, else among the others, if any of them fits
    /// and, choosing by weights, any of them weighs more than nothing),
    /// or the shortest once the node budget is spent or when the one drawn does not fit
    /// the room left (then the budget counts as spent).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn choose<C: ChoiceSource>(
        &self,
        op: u32,
        depth: u32,
        rng: &mut C,
        stats: &mut GenStats,
        room: &mut Room,
        grow_until: Option<u64>,
        weights: Option<&Weights>,
    ) -> u32 {
        let Op::Alt {
            start,
            len,
            deepest,
            split,
        } = self.ops[op as usize]
        else {
            unreachable!("choose is called on alternations")
        };
        let all = Class {
            start,
            len,
            deepest,
        };
        let range = start as usize..(start + len) as usize;
        // Nothing fits only when expansion starts deeper than the limit allows (as the
        // k-path steering may): then the shallowest alternative, and the caller sees a
        // tree over the limit.
        let fitting = self.fitting(all, depth).max(1);
        let mut chosen = if stats.budget_exhausted {
            self.shortest(&self.children[range.clone()][..fitting as usize])
        } else {
            let steered = grow_until.map(|floor| {
                let split = self.splits[split as usize];
                let class = if room.bytes > floor {
                    split.recursive
                } else {
                    split.other
                };
                (class, self.fitting(class, depth))
            });
            // A class whose every alternative weighs nothing is not steered to: a
            // zero weight means never, which the size steering must not override.
            let weightless = |class: Class, n: u32| {
                weights.is_some_and(|w| {
                    self.children[class.start as usize..(class.start + n) as usize]
                        .iter()
                        .all(|&o| w.alternative(self.expr_id(o)) <= 0.0)
                })
            };
            let (class, n) = match steered {
                Some((class, n)) if n > 0 && !weightless(class, n) => (class, n),
                _ => (all, fitting),
            };
            let options = &self.children[class.start as usize..(class.start + n) as usize];
            let drawn = weights.and_then(|w| {
                weighted(rng, options.iter().map(|&o| w.alternative(self.expr_id(o))))
            });
            let k = match drawn {
                Some(k) => k,
                None if C::SIMPLEST_FIRST => self.simplest(options, rng.choose(n) as usize),
                None => rng.choose(n) as usize,
            };
            options[k]
        };
        let (len, steps) = self.extra(op, chosen);
        if len > room.bytes || steps > room.steps {
            // An alternative no input within the limits can hold (`"a"{4000000000}`)
            // is just not taken; one that the room left cannot hold means the budget
            // is spent, and the rest of the input closes off.
            let never_fits = len > self.config.max_size || steps > self.config.max_nodes as u64;
            stats.budget_exhausted |= !never_fits;
            chosen = self.shortest(&self.children[range][..fitting as usize]);
        }
        // The shortest that fits the depth may still be larger than the alternation's
        // minimum (when the minimum is too deep): the room then just runs out.
        let (len, steps) = self.extra(op, chosen);
        room.bytes = room.bytes.saturating_sub(len);
        room.steps = room.steps.saturating_sub(steps);
        chosen
    }

    /// How many alternatives of `class` (sorted by minimal depth) fit at `depth`.
    #[inline]
    fn fitting(&self, class: Class, depth: u32) -> u32 {
        let max_depth = self.config.max_depth;
        // Usually every alternative fits; only near the limit is a search needed.
        if depth.saturating_add(class.deepest) <= max_depth {
            class.len
        } else {
            self.child_depths[class.start as usize..(class.start + class.len) as usize]
                .partition_point(|&d| depth.saturating_add(d) <= max_depth) as u32
        }
    }

    /// What choosing alternative `chosen` of `op` adds to the minimal completion.
    #[inline]
    fn extra(&self, op: u32, chosen: u32) -> (u64, u64) {
        let (op, chosen) = (self.expr_id(op), self.expr_id(chosen));
        (
            self.analysis
                .expr_min_len(chosen)
                .saturating_sub(self.analysis.expr_min_len(op)),
            self.analysis
                .expr_min_steps(chosen)
                .saturating_sub(self.analysis.expr_min_steps(op)),
        )
    }

    /// Emits `op` at once if it is a terminal, or (for sinks without structure) a
    /// reference to a rule whose body is a terminal; says whether it did.
    #[inline]
    fn emit_terminal<C: ChoiceSource, S: TreeSink>(
        &self,
        op: u32,
        rng: &mut C,
        sink: &mut S,
        scratch: &mut Vec<u8>,
        stats: &mut GenStats,
        room_bytes: &mut u64,
    ) -> bool {
        let mut target = op;
        if let Op::Ref { body } = self.ops[op as usize] {
            if S::STRUCTURED
                || !matches!(
                    self.ops[body as usize],
                    Op::Literal { .. } | Op::Regex { .. }
                )
            {
                return false;
            }
            stats.rule_expansions += 1;
            stats.budget_exhausted |= stats.rule_expansions >= self.config.max_nodes;
            target = body;
        }
        match self.ops[target as usize] {
            Op::Literal { start, len } => {
                sink.terminal(
                    self.expr_id(target),
                    &self.literals[start as usize..(start + len) as usize],
                );
                true
            }
            Op::Regex { index } => {
                let regex = &self.regexes[index as usize];
                sink.terminal_with(self.expr_id(target), scratch, |out| {
                    regex.sample_from(rng, out, room_bytes)
                });
                true
            }
            _ => false,
        }
    }

    /// The grammar expression an op was compiled from (ops are indexed like expressions).
    fn expr_id(&self, op: u32) -> ExprId {
        ExprId::from_index(op as usize)
    }

    /// What one more repetition of `item` adds to the minimal completion (bytes,
    /// steps), if the room left holds it.
    fn one_more(&self, item: u32, room: &Room) -> Option<(u64, u64)> {
        let item = self.expr_id(item);
        let len = self.analysis.expr_min_len(item);
        let steps = self.analysis.expr_min_steps(item).saturating_add(1);
        (len <= room.bytes && steps <= room.steps).then_some((len, steps))
    }

    /// The position in `options` (alternatives sorted by minimal depth) of the `k`-th
    /// simplest: by minimal length, ties by minimal depth.
    fn simplest(&self, options: &[u32], k: usize) -> usize {
        choices::kth_simplest(options.len(), k, |i| {
            self.analysis.expr_min_len(self.expr_id(options[i]))
        })
    }

    /// The fitting alternative with the shortest minimal output (ties: shallowest).
    fn shortest(&self, fitting: &[u32]) -> u32 {
        *fitting
            .iter()
            .min_by_key(|&&op| self.analysis.expr_min_len(self.expr_id(op)))
            .expect("at least one alternative fits")
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use thicket_grammar::load_spec_text;

    fn generator(spec: &str, config: GenConfig) -> (Grammar, GenConfig) {
        (load_spec_text("t.fan", spec.as_bytes()).unwrap(), config)
    }

    #[test]
    fn smallest_subtrees_take_the_least_choices() {
        let (g, c) = generator(
            "<start> ::= <item>+ \";\"\n<item> ::= \"[\" <item> \"]\" | r\"[0-9]{3,5}\" | <word>\n\
             <word> ::= r\"[a-z]{3,9}\" | \"(\" <word>* \")\"",
            GenConfig::default(),
        );
        let generator = Generator::new(&g, c).unwrap();
        let item = g.rule(g.symbol("item").unwrap()).body;
        for seed in 0..20 {
            let mut rng = Generator::rng_for(seed, 0);
            let mut builder = TreeBuilder::new();
            generator.expand_smallest(g.root(), &mut rng, &mut builder);
            // One item, the empty parenthesised word list ("()" beats three letters).
            assert_eq!(builder.finish().bytes(), b"();");
            let mut builder = TreeBuilder::new();
            generator.expand_smallest(item, &mut rng, &mut builder);
            assert_eq!(builder.finish().bytes(), b"()");
        }
    }

    #[test]
    fn same_seed_same_output_and_streams_differ() {
        let (g, c) = generator(
            "<start> ::= <d>+\n<d> ::= r\"[0-9a-z]\"",
            GenConfig::default(),
        );
        let gen_ = Generator::new(&g, c).unwrap();
        let run = |seed, index| {
            let mut out = Vec::new();
            gen_.generate_bytes(&mut Generator::rng_for(seed, index), &mut out);
            out
        };
        assert_eq!(run(7, 3), run(7, 3));
        let distinct: std::collections::HashSet<_> = (0..50).map(|i| run(7, i)).collect();
        assert!(distinct.len() > 40, "only {} distinct", distinct.len());
    }

    #[test]
    fn trees_never_exceed_the_depth_limit_and_unparse_to_the_bytes() {
        let (g, _) = generator(
            "<start> ::= <e>\n<e> ::= <e> \"+\" <e> | \"(\" <e> \")\" | <n>\n<n> ::= \"1\" | \"2\"",
            GenConfig::default(),
        );
        for max_depth in [3, 5, 12] {
            let config = GenConfig {
                max_depth,
                ..GenConfig::default()
            };
            let gen_ = Generator::new(&g, config).unwrap();
            let mut deepest = 0;
            for i in 0..300 {
                let (tree, _) = gen_.generate_tree(&mut Generator::rng_for(1, i));
                let depth = tree.depth(&g);
                assert!(depth <= max_depth, "depth {depth} > {max_depth}");
                deepest = deepest.max(depth);
                let mut bytes = Vec::new();
                gen_.generate_bytes(&mut Generator::rng_for(1, i), &mut bytes);
                assert_eq!(tree.bytes(), &bytes[..], "tree and byte sink agree");
            }
            assert_eq!(
                deepest, max_depth,
                "the limit is reached, not just respected"
            );
        }
    }

    #[test]
    fn a_depth_limit_below_the_minimum_names_the_minimum() {
        let (g, _) = generator(
            "<start> ::= <a>\n<a> ::= <b>\n<b> ::= \"x\"",
            GenConfig::default(),
        );
        let err = Generator::new(
            &g,
            GenConfig {
                max_depth: 2,
                ..GenConfig::default()
            },
        )
        .err()
        .unwrap();
        assert_eq!(
            err,
            GenError::DepthTooSmall {
                required: 3,
                given: 2
            }
        );
        assert!(err.to_string().contains("depth 3"));
    }

    #[test]
    fn repetitions_respect_quantifier_bounds_and_the_cap() {
        let (g, _) = generator(
            "<start> ::= \"a\"{2,4} \"b\"* \"c\"{7}",
            GenConfig::default(),
        );
        let gen_ = Generator::new(
            &g,
            GenConfig {
                max_repetitions: 3,
                ..GenConfig::default()
            },
        )
        .unwrap();
        for i in 0..200 {
            let mut out = Vec::new();
            gen_.generate_bytes(&mut Generator::rng_for(0, i), &mut out);
            let s = String::from_utf8(out).unwrap();
            let a = s.matches('a').count();
            let b = s.matches('b').count();
            assert!((2..=3).contains(&a), "{s}");
            assert!(b <= 3, "{s}");
            assert_eq!(
                s.matches('c').count(),
                7,
                "mandatory count beats the cap: {s}"
            );
        }
    }

    #[test]
    fn sized_choices_give_way_to_uniform_ones_only_where_those_suffice() {
        let policy = |spec: &str, bytes: u32| {
            let (g, c) = generator(spec, GenConfig::default());
            ChoicePolicy::sized_unless_uniform_suffices(
                &g,
                c,
                bytes,
                |_| {},
                |generator, rng, out| generator.generate_bytes(rng, out),
            )
        };
        // Mostly leaf alternatives: uniform inputs are tiny, steering grows them.
        let json = "<start> ::= <v>\n<v> ::= \"[\" <v> \"]\" | \"{\" <v> \"}\" | \"1\" | \"2\" | \"t\" | \"f\" | \"n\"";
        assert_eq!(policy(json, 56), ChoicePolicy::Sized { bytes: 56 });
        // Uniform choices run into the node budget: steering closes inputs off.
        let explosive = "<start> ::= <a>\n<a> ::= <a> <a> <a> | \"x\"";
        assert_eq!(policy(explosive, 56), ChoicePolicy::Sized { bytes: 56 });
        // Text outside the recursion (a preamble of words) already makes inputs as
        // large as the target asks: steering would only close the nesting off.
        let preamble =
            "<start> ::= <w>+ <e>\n<w> ::= r\"[a-z]{5}\" \" \"\n<e> ::= \"(\" <e> \")\" | \"y\"";
        assert_eq!(policy(preamble, 2), ChoicePolicy::Uniform);
        // Uniform inputs as large on average (1.5 times), but most of them a leaf or
        // two and repeated, a few deep ones carrying the mean: steering makes twice
        // as many distinct inputs.
        let nesting = "<start> ::= <v>\n<v> ::= \"[\" <v>* \"]\" | \"{\" <v> \"}\" | \"1\" | \"2\"";
        assert_eq!(policy(nesting, 6), ChoicePolicy::Sized { bytes: 6 });
        // 0 asks for uniform choices whatever the grammar.
        assert_eq!(policy(json, 0), ChoicePolicy::Uniform);
    }

    #[test]
    fn the_node_budget_closes_off_explosive_grammars() {
        let (g, _) = generator(
            "<start> ::= <a>\n<a> ::= <a> <a> <a> | \"x\"",
            GenConfig::default(),
        );
        let config = GenConfig {
            max_nodes: 1000,
            policy: ChoicePolicy::Uniform,
            ..GenConfig::default()
        };
        let gen_ = Generator::new(&g, config).unwrap();
        let mut exhausted = 0;
        for i in 0..50 {
            let mut out = Vec::new();
            let stats = gen_.generate_bytes(&mut Generator::rng_for(3, i), &mut out);
            // Past the budget every open slot closes with one "x" per pending slot; the
            // stack holds at most 2 pending slots per level of depth.
            assert!(out.len() <= 1000 + 2 * 30, "{} bytes", out.len());
            exhausted += usize::from(stats.budget_exhausted);
        }
        assert!(exhausted > 0, "a supercritical grammar hits the budget");
    }

    #[test]
    fn inputs_stay_within_max_size_and_huge_minimums_are_refused_up_front() {
        let (g, _) = generator(
            "<start> ::= <part>+\n<part> ::= \"x\" | \"a\"{100000000} | \"b\"* | r\"c{0,100000}\" | <part> <part>",
            GenConfig::default(),
        );
        let config = GenConfig {
            max_repetitions: 1_000_000,
            max_size: 5000,
            ..GenConfig::default()
        };
        let gen_ = Generator::new(&g, config).unwrap();
        for i in 0..200 {
            let mut out = Vec::new();
            gen_.generate_bytes(&mut Generator::rng_for(5, i), &mut out);
            assert!(out.len() <= 5000, "{} bytes", out.len());
            assert!(!out.contains(&b'a'), "the huge alternative is never chosen");
            let (tree, _) = gen_.generate_tree(&mut Generator::rng_for(5, i));
            assert_eq!(tree.bytes(), &out[..]);
        }
        let (g, _) = generator("<start> ::= \"ab\"{4000000000}", GenConfig::default());
        let err = Generator::new(&g, GenConfig::default()).err().unwrap();
        assert!(
            matches!(
                err,
                GenError::TooLarge {
                    option: "--max-size",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("8000000000 bytes"), "{err}");
        let (g, _) = generator(
            "<start> ::= <e>{200000}\n<e> ::= \"\"",
            GenConfig::default(),
        );
        let err = Generator::new(&g, GenConfig::default()).err().unwrap();
        assert!(
            matches!(
                err,
                GenError::TooLarge {
                    option: "--max-nodes",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn byte_literals_and_byte_regexes_produce_raw_bytes() {
        let (g, _) = generator(
            "<start> ::= b\"\\x00\\xff\" r\"(?-u:[\\x80-\\xff])\"",
            GenConfig::default(),
        );
        let gen_ = Generator::new(&g, GenConfig::default()).unwrap();
        let mut out = Vec::new();
        gen_.generate_bytes(&mut Generator::rng_for(0, 0), &mut out);
        assert_eq!(&out[..2], &[0, 0xff]);
        assert!(out[2] >= 0x80 && out.len() == 3, "{out:?}");
    }

    /// Mean size and share of distinct inputs among `n` inputs of seed 1.
    fn mean_and_distinct(gen_: &Generator, n: u64) -> (f64, f64) {
        let mut total = 0;
        let mut distinct = std::collections::HashSet::new();
        for i in 0..n {
            let mut out = Vec::new();
            gen_.generate_bytes(&mut Generator::rng_for(1, i), &mut out);
            total += out.len();
            distinct.insert(out);
        }
        (total as f64 / n as f64, distinct.len() as f64 / n as f64)
    }

    #[test]
    fn sized_choices_make_large_distinct_inputs_where_uniform_ones_are_small() {
        // grammars-v4's JSON grammar: most alternatives of <value> are leaves.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../thicket-cover/tests/fixtures/grammars-v4-json.fan"
        );
        let (g, _) = generator(
            &std::fs::read_to_string(path).unwrap(),
            GenConfig::default(),
        );
        let uniform = GenConfig {
            policy: ChoicePolicy::Uniform,
            ..GenConfig::default()
        };
        let (mean, distinct) = mean_and_distinct(&Generator::new(&g, uniform).unwrap(), 5000);
        assert!(mean < 25.0 && distinct < 0.5, "{mean} {distinct}");
        let sized = Generator::new(&g, GenConfig::default()).unwrap();
        let (mean, distinct) = mean_and_distinct(&sized, 5000);
        assert!(mean >= 65.0 && distinct >= 0.95, "{mean} {distinct}");
        // Targets scale the mean; trees still respect the limits.
        let (small, _) = mean_and_distinct(
            &Generator::new(
                &g,
                GenConfig {
                    policy: ChoicePolicy::Sized { bytes: 16 },
                    ..GenConfig::default()
                },
            )
            .unwrap(),
            2000,
        );
        assert!(small < mean / 2.0, "{small} {mean}");
        for i in 0..500 {
            let (tree, _) = sized.generate_tree(&mut Generator::rng_for(2, i));
            assert!(tree.depth(&g) <= sized.config().max_depth);
        }
    }

    #[test]
    fn past_the_target_recursion_stops_so_explosive_grammars_stay_near_it() {
        // Supercritical under uniform choices (see the node budget test), and a
        // recursive repetition: both close off once the target is reached.
        for spec in [
            "<start> ::= <a>\n<a> ::= <a> <a> <a> | \"x\"",
            "<start> ::= <e>\n<e> ::= \"(\" <e>* \")\"",
        ] {
            let (g, _) = generator(spec, GenConfig::default());
            let config = GenConfig {
                policy: ChoicePolicy::Sized { bytes: 100 },
                ..GenConfig::default()
            };
            let gen_ = Generator::new(&g, config).unwrap();
            for i in 0..200 {
                let mut out = Vec::new();
                let stats = gen_.generate_bytes(&mut Generator::rng_for(4, i), &mut out);
                assert!(!stats.budget_exhausted, "{spec}");
                // Target at most 150 bytes; what is open then closes minimally
                // (at most 2 pending slots per level of depth, 2 bytes each).
                assert!(out.len() <= 150 + 4 * 30, "{spec}: {} bytes", out.len());
            }
        }
    }

    /// An alternative weighing nothing is never taken, though the size steering would
    /// grow the input through it (the only recursive alternative of `<s>`).
    #[test]
    fn a_weightless_alternative_is_never_taken_even_to_grow() {
        let (g, _) = generator(
            "<start> ::= <s>\n<s> ::= \"(\" <s> \")\" | \"x\"",
            GenConfig::default(),
        );
        let gen_ = Generator::new(&g, GenConfig::default()).unwrap();
        let mut weights = crate::prob::Weights::uniform(&g);
        let s = g.symbol("s").unwrap();
        let thicket_grammar::Expr::Alt(alts) = g.expr(g.rule(s).body) else {
            panic!("an alternation")
        };
        weights.set_alternative(alts[0], 0.0);
        for i in 0..100 {
            let mut out = Vec::new();
            gen_.generate_bytes_weighted(&mut Generator::rng_for(1, i), &mut out, &weights);
            assert_eq!(out, b"x");
        }
    }

    #[test]
    fn past_the_target_a_recursive_repetition_with_a_weight_row_still_takes_items() {
        // Depth first, a list's first item grows until the target is reached, so the
        // rest of the list comes after it: without a row, every list has one item.
        let (g, _) = generator(
            "<start> ::= <v>\n<v> ::= \"[\" <v> (\",\" <v>)* \"]\" | \"a\"",
            GenConfig::default(),
        );
        let config = GenConfig {
            policy: ChoicePolicy::Sized { bytes: 4 },
            ..GenConfig::default()
        };
        let generator = Generator::new(&g, config).unwrap();
        let repeat = g
            .expr_ids()
            .find(|&id| matches!(g.expr(id), Expr::Repeat(_)))
            .unwrap();
        let lists = |weights: &Weights| {
            let (mut commas, mut bytes) = (0, 0);
            for i in 0..300 {
                let mut out = Vec::new();
                generator.generate_bytes_weighted(&mut Generator::rng_for(1, i), &mut out, weights);
                commas += out.iter().filter(|&&b| b == b',').count();
                bytes += out.len();
            }
            (commas, bytes)
        };
        let uniform = Weights::uniform(&g);
        assert_eq!(lists(&uniform).0, 0);
        let mut rows = Weights::uniform(&g);
        rows.set_repetition(repeat, vec![0.5, 0.25, 0.25]);
        let (commas, bytes) = lists(&rows);
        assert!(commas > 50, "{commas} second items");
        // The items close off: inputs stay near the target.
        assert!(bytes < 300 * 20, "{bytes} bytes");
    }

    /// A source that always makes choice 0.
    struct Zeros;

    impl ChoiceSource for Zeros {
        const SIMPLEST_FIRST: bool = true;
        fn choose(&mut self, _: u32) -> u32 {
            0
        }
        fn bits(&mut self) -> u64 {
            0
        }
    }

    #[test]
    fn a_random_choice_source_makes_the_seeded_inputs() {
        let (g, c) = generator(
            "<start> ::= <v>\n<v> ::= \"[\" <v>* \"]\" | r\"-?[0-9]{1,3}\" | \"true\"",
            GenConfig::default(),
        );
        let generator = Generator::new(&g, c).unwrap();
        for index in 0..50 {
            let (seeded, _) = generator.generate_tree(&mut Generator::rng_for(3, index));
            let mut rng = Generator::rng_for(3, index);
            let (from, _) = generator.generate_tree_from(&mut Random(&mut rng));
            assert_eq!(seeded.bytes(), from.bytes());
        }
    }

    #[test]
    fn choice_zero_of_a_simplest_first_source_is_the_smallest_input() {
        // By minimal depth "true" and the number come first; by length the number does,
        // and its shortest match: one digit, the class's first member.
        let (g, c) = generator(
            "<start> ::= <v>\n<v> ::= \"true\" | r\"-?[0-9]{1,3}|x\" | \"[\" <v>* \"]\"",
            GenConfig::default(),
        );
        let generator = Generator::new(&g, c).unwrap();
        let (tree, _) = generator.generate_tree_from(&mut Zeros);
        assert_eq!(tree.bytes(), b"0");
    }

    /// A source that takes every optional item and records its spans.
    #[derive(Default)]
    struct Greedy {
        spans: Vec<(u64, bool)>,
    }

    impl ChoiceSource for Greedy {
        const SIMPLEST_FIRST: bool = true;
        const ITEM_BY_ITEM: bool = true;
        fn choose(&mut self, n: u32) -> u32 {
            n - 1
        }
        fn bits(&mut self) -> u64 {
            0
        }
        fn span_start(&mut self, label: u64) {
            self.spans.push((label, true));
        }
        fn span_end(&mut self) {
            self.spans.push((0, false));
        }
    }

    #[test]
    fn item_by_item_repetitions_take_one_choice_per_item_and_nest_list_tails() {
        let (g, c) = generator(
            "<start> ::= <e> (\",\" <e>)*\n<e> ::= \"x\"",
            GenConfig::default(),
        );
        let generator = Generator::new(&g, c).unwrap();
        let mut greedy = Greedy::default();
        let (tree, _) = generator.generate_tree_from(&mut greedy);
        // The first item, then every optional one up to the cap of 5.
        assert_eq!(tree.bytes(), b"x,x,x,x,x,x");
        // A span from the first item on, and one from each optional item on, nested,
        // all of one label: any of them can stand for the one around it.
        let starts: Vec<u64> = greedy.spans.iter().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(starts.len(), 6);
        assert!(starts.iter().all(|&l| l == starts[0]));
        // Each stays open to the end of the list.
        let ends: Vec<bool> = greedy.spans.iter().map(|s| s.1).collect();
        assert_eq!(ends, [[true; 6], [false; 6]].concat());
    }
}
