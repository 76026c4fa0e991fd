//! Minimisation of a failing input: the smallest input found that still fails the same
//! way (the caller's test says what "the same way" is; the CLI compares
//! [`Failure::key`](thicket_exec::Failure::key), kind and location).
//!
//! An input in the grammar is reduced through its derivation tree, so every candidate
//! is again in the grammar, in passes repeated until none makes the input smaller:
//! 1. **Repetitions**: delta debugging over the items of each `*`, `+`, `{m,n}` (halves,
//!    then quarters, ... down to single items, never below the minimum count): a long
//!    list shrinks to the items that matter in a logarithmic number of runs.
//! 2. **Hoisting**: a rule's subtree is replaced by one of its nearest descendants of the
//!    same rule (`[[[x]]]` becomes `[x]`, then `x`): deep nesting collapses.
//! 3. **Smallest subtrees**: a rule's subtree is replaced by the smallest derivation of
//!    its rule ([`Generator::expand_smallest`]), top-down, so whole irrelevant parts
//!    become one byte or none.
//! 4. **Terminal bytes**: delta debugging over the bytes of each terminal longer than
//!    its shortest match, keeping a candidate only if it still parses.
//!
//! An input outside the grammar (a byte mutation's find) is reduced by delta debugging
//! over its bytes ([`Minimizer::minimize_bytes`]), as `afl-tmin` does; the CLI does that
//! after the tree passes too when asked (`--bytes`), leaving the grammar if it must.
//!
//! Every candidate is tried at most once (a set of their hashes), and a budget of runs
//! and an optional deadline bound the work: at the budget's end the smallest failing
//! input so far is the result, which is always one that was seen failing.

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::borrow::Cow;
use std::hash::Hasher;
use std::time::Instant;
use thicket_gen::{Encoding, GenRng, Generator};
use thicket_grammar::{Expr, Grammar, SymbolId};
use thicket_parse::Parser;
use thicket_tree::{DerivationTree, NodeId, TreeSink};

use crate::mutate::rule_of;

/// Bounds of one minimisation.
#[derive(Clone, Copy, Debug)]
pub struct MinimizeLimits {
    /// Most runs of the test (candidates tried before are not run again).
    pub max_runs: u64,
    /// When to stop trying candidates, if ever.
    pub deadline: Option<Instant>,
}

impl Default for MinimizeLimits {
    /// 10,000 runs, no deadline.
    fn default() -> MinimizeLimits {
        MinimizeLimits {
            max_runs: 10_000,
            deadline: None,
        }
    }
}

/// What a minimisation did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MinimizeStats {
    /// Runs of the test.
    pub runs: u64,
    /// Candidates not run because an identical one had been tried.
    pub repeats: u64,
    /// Candidates that still failed (each made the input smaller).
    pub steps: u64,
    /// Whether the run budget or the deadline ended the work early.
    pub budget_spent: bool,
}

/// Reduces failing inputs; `test(candidate)` says whether a candidate still fails the
/// same way (an `Err` stops the minimisation: the target cannot be run any more).
pub struct Minimizer<'a, F> {
    grammar: &'a Grammar,
    generator: &'a Generator<'a>,
    parser: Option<&'a Parser<'a>>,
    /// How a tree stands for its input when that is not its text.
    encoding: Option<&'a dyn Encoding>,
    test: F,
    limits: MinimizeLimits,
    tried: FxHashSet<u64>,
    rng: GenRng,
    stats: MinimizeStats,
}

impl<'a, F, E> Minimizer<'a, F>
where
    F: FnMut(&[u8]) -> Result<bool, E>,
{
    /// A minimiser over `generator`'s grammar. With a `parser` (of the same grammar),
    /// terminal bytes are reduced too (a candidate must parse); the smallest subtrees'
    /// remaining choices are drawn from `seed`.
    pub fn new(
        generator: &'a Generator<'a>,
        parser: Option<&'a Parser<'a>>,
        test: F,
        limits: MinimizeLimits,
        seed: u64,
    ) -> Minimizer<'a, F> {
        Minimizer {
            grammar: generator.grammar(),
            generator,
            parser,
            encoding: None,
            test,
            limits,
            tried: FxHashSet::default(),
            rng: Generator::rng_for(seed, 0),
            stats: MinimizeStats::default(),
        }
    }

    /// A minimiser whose candidates run as `encoding` encodes their trees (Fandango's
    /// bit fields packed into bytes) rather than as their text; a candidate tree that
    /// stands for no input is not taken.
    pub fn with_encoding(mut self, encoding: &'a dyn Encoding) -> Minimizer<'a, F> {
        self.encoding = Some(encoding);
        self
    }

    /// The input `tree` stands for: its text, or its encoding (`None` if it stands for
    /// none).
    fn input_of<'t>(&self, tree: &'t DerivationTree) -> Option<Cow<'t, [u8]>> {
        match self.encoding {
            None => Some(Cow::Borrowed(tree.bytes())),
            Some(encoding) => encoding.encode(tree).ok().map(Cow::Owned),
        }
    }

    /// What the minimisation has done so far.
    pub fn stats(&self) -> &MinimizeStats {
        &self.stats
    }

    /// Whether the budget or the deadline is spent (then no candidate is run).
    fn spent(&mut self) -> bool {
        if !self.stats.budget_spent {
            self.stats.budget_spent = self.stats.runs >= self.limits.max_runs
                || self.limits.deadline.is_some_and(|d| Instant::now() >= d);
        }
        self.stats.budget_spent
    }

    /// Runs the test on a candidate not tried before, within the budget; `false` for
    /// candidates tried before or past the budget.
    fn fails(&mut self, candidate: &[u8]) -> Result<bool, E> {
        if !self.tried.insert(candidate_key(candidate)) {
            self.stats.repeats += 1;
            return Ok(false);
        }
        if self.spent() {
            return Ok(false);
        }
        self.stats.runs += 1;
        let fails = (self.test)(candidate)?;
        if fails {
            self.stats.steps += 1;
        }
        Ok(fails)
    }

    /// Takes `candidate` if it is smaller than `tree` and still fails.
    fn take_if_fails(
        &mut self,
        tree: &mut DerivationTree,
        candidate: DerivationTree,
    ) -> Result<bool, E> {
        if candidate.bytes().len() >= tree.bytes().len() {
            return Ok(false);
        }
        let Some(input) = self.input_of(&candidate) else {
            return Ok(false);
        };
        if !self.fails(&input)? {
            return Ok(false);
        }
        *tree = candidate;
        Ok(true)
    }

    /// Reduces a failing input given as its derivation tree (it must fail: it is not
    /// run again), through the grammar: the result is a tree of the same grammar.
    pub fn minimize_tree(&mut self, mut tree: DerivationTree) -> Result<DerivationTree, E> {
        if let Some(input) = self.input_of(&tree) {
            self.tried.insert(candidate_key(&input));
        }
        loop {
            let before = tree.bytes().len();
            self.shrink_repetitions(&mut tree)?;
            self.hoist(&mut tree)?;
            self.cut_between_siblings(&mut tree)?;
            self.replace_by_smallest(&mut tree)?;
            self.shrink_terminals(&mut tree)?;
            if tree.bytes().len() >= before || self.spent() {
                return Ok(tree);
            }
        }
    }

    /// Delta debugging over the items of every repetition, outermost first.
    fn shrink_repetitions(&mut self, tree: &mut DerivationTree) -> Result<(), E> {
        let mut index = 0;
        while index < tree.len() && !self.spent() {
            let node = NodeId::from_index(index);
            index += 1;
            let Expr::Repeat(repeat) = self.grammar.expr(tree.expr(node)) else {
                continue;
            };
            let min = repeat.min as usize;
            let mut chunk = tree.children(node).count().saturating_sub(min);
            while chunk > 0 && !self.spent() {
                let mut start = 0;
                loop {
                    let children: Vec<NodeId> = tree.children(node).collect();
                    if children.len() <= min || start >= children.len() || self.spent() {
                        break;
                    }
                    // Never below the minimum count.
                    let end = (start + chunk)
                        .min(children.len())
                        .min(start + children.len() - min);
                    let expr = tree.expr(node);
                    let candidate = tree.replace_subtrees(self.grammar, &[node], &mut |_, b| {
                        b.open(expr);
                        for (i, &child) in children.iter().enumerate() {
                            if !(start..end).contains(&i) {
                                tree.emit_subtree(self.grammar, child, tree.expr(child), b);
                            }
                        }
                        b.close();
                    });
                    // Removed: the items after the chunk moved to `start`.
                    if !self.take_if_fails(tree, candidate)? {
                        start = end;
                    }
                }
                chunk /= 2;
            }
        }
        Ok(())
    }

    /// Replaces rule subtrees by their nearest descendants of the same rule.
    fn hoist(&mut self, tree: &mut DerivationTree) -> Result<(), E> {
        let mut index = 0;
        'nodes: while index < tree.len() && !self.spent() {
            let node = NodeId::from_index(index);
            let Some(rule) = rule_of(self.grammar, tree, node) else {
                index += 1;
                continue;
            };
            for inner in self.nearest_of_rule(tree, node, rule) {
                let expr = tree.expr(node);
                let candidate = tree.replace_subtrees(self.grammar, &[node], &mut |_, b| {
                    tree.emit_subtree(self.grammar, inner, expr, b)
                });
                if self.take_if_fails(tree, candidate)? {
                    // The new subtree at `node` may hoist again.
                    continue 'nodes;
                }
            }
            index += 1;
        }
        Ok(())
    }

    /// The descendants of `node` that expand `rule` with no other such node between.
    fn nearest_of_rule(
        &self,
        tree: &DerivationTree,
        node: NodeId,
        rule: thicket_grammar::SymbolId,
    ) -> Vec<NodeId> {
        let mut found = Vec::new();
        let end = tree.subtree_end(node);
        let mut index = node.index() + 1;
        while index < end {
            let inner = NodeId::from_index(index);
            if rule_of(self.grammar, tree, inner) == Some(rule) {
                found.push(inner);
                index = tree.subtree_end(inner);
            } else {
                index += 1;
            }
        }
        found
    }

    /// Removes a rule's subtree together with what separates it from the next (or
    /// previous) subtree of the same rule, as in the first item of `<value> ("," <value>)*`
    /// with its comma, which no repetition or hoisting removes; a candidate must parse,
    /// and its parse is the new tree. Without a parser, nothing is done.
    fn cut_between_siblings(&mut self, tree: &mut DerivationTree) -> Result<(), E> {
        let Some(parser) = self.parser else {
            return Ok(());
        };
        // Each rule's nodes in preorder, made again whenever the tree changes: the
        // neighbours of a node are found by binary search, not by walking the tree.
        let by_rule = |tree: &DerivationTree| {
            let mut by_rule: FxHashMap<SymbolId, Vec<NodeId>> = FxHashMap::default();
            for node in (0..tree.len()).map(NodeId::from_index) {
                if let Some(rule) = rule_of(self.grammar, tree, node) {
                    by_rule.entry(rule).or_default().push(node);
                }
            }
            by_rule
        };
        let mut same_rule = by_rule(tree);
        let mut index = 0;
        'nodes: while index < tree.len() && !self.spent() {
            let node = NodeId::from_index(index);
            index += 1;
            let Some(rule) = rule_of(self.grammar, tree, node) else {
                continue;
            };
            let here = tree.text_range(node);
            let nodes = &same_rule[&rule];
            let at = nodes.partition_point(|&n| n < node);
            let after = tree.subtree_end(node);
            let next = nodes[at..].iter().copied().find(|n| n.index() >= after);
            // Earlier nodes of the rule are ancestors (their subtrees hold `node`) or
            // end before it.
            let previous = nodes[..at]
                .iter()
                .rev()
                .copied()
                .find(|&n| tree.subtree_end(n) <= node.index());
            let cuts = [
                next.map(|n| here.start..tree.text_range(n).start),
                previous.map(|p| tree.text_range(p).end..here.end),
            ];
            for cut in cuts.into_iter().flatten() {
                if cut.is_empty() {
                    continue;
                }
                let mut candidate = tree.bytes().to_vec();
                candidate.drain(cut);
                if let Ok(parsed) = parser.parse(&candidate)
                    && self.fails(&candidate)?
                {
                    *tree = parsed.tree();
                    same_rule = by_rule(tree);
                    // Parsed anew: start over from the cut's node index, which is at
                    // or before the first changed node.
                    index = node.index();
                    continue 'nodes;
                }
            }
        }
        Ok(())
    }

    /// Replaces rule subtrees by the smallest derivations of their rules, top-down.
    fn replace_by_smallest(&mut self, tree: &mut DerivationTree) -> Result<(), E> {
        let mut index = 0;
        while index < tree.len() && !self.spent() {
            let node = NodeId::from_index(index);
            if rule_of(self.grammar, tree, node).is_none() {
                index += 1;
                continue;
            }
            let expr = tree.expr(node);
            let (generator, rng) = (self.generator, &mut self.rng);
            let candidate = tree.replace_subtrees(self.grammar, &[node], &mut |_, b| {
                generator.expand_smallest(expr, rng, b)
            });
            index = if self.take_if_fails(tree, candidate)? {
                tree.subtree_end(node)
            } else {
                index + 1
            };
        }
        Ok(())
    }

    /// Delta debugging over the bytes of each regex terminal (a literal has no shorter
    /// form); a candidate must parse, and its parse is the new tree. Without a parser,
    /// nothing is done.
    fn shrink_terminals(&mut self, tree: &mut DerivationTree) -> Result<(), E> {
        let Some(parser) = self.parser else {
            return Ok(());
        };
        let mut index = 0;
        while index < tree.len() && !self.spent() {
            let mut leaf = NodeId::from_index(index);
            index += 1;
            if !matches!(self.grammar.expr(tree.expr(leaf)), Expr::Regex(_)) {
                continue;
            }
            let mut chunk = tree.text_range(leaf).len() / 2;
            while chunk > 0 && !self.spent() {
                let mut start = 0;
                while !self.spent() {
                    let range = tree.text_range(leaf);
                    if start >= range.len() {
                        break;
                    }
                    let end = (start + chunk).min(range.len());
                    let mut candidate = tree.bytes().to_vec();
                    candidate.drain(range.start + start..range.start + end);
                    let parsed = match parser.parse(&candidate) {
                        Ok(parsed) if self.fails(&candidate)? => parsed.tree(),
                        _ => {
                            start = end;
                            continue;
                        }
                    };
                    *tree = parsed;
                    // The tree was parsed anew: go on with the terminal that now
                    // starts where this one did.
                    match regex_leaf_at(self.grammar, tree, range.start) {
                        Some(same) => {
                            leaf = same;
                            index = same.index() + 1;
                        }
                        None => return Ok(()),
                    }
                }
                chunk /= 2;
            }
        }
        Ok(())
    }

    /// Reduces a failing input by delta debugging over its bytes (it must fail: it is
    /// not run again): removes chunks from half the input down to single bytes, then
    /// replaces single bytes by `'0'`, keeping every change that still fails.
    pub fn minimize_bytes(&mut self, input: &[u8]) -> Result<Vec<u8>, E> {
        self.tried.insert(candidate_key(input));
        let mut input = input.to_vec();
        let mut chunk = input.len() / 2;
        while chunk > 0 && !self.spent() {
            let mut start = 0;
            while start < input.len() && !self.spent() {
                let end = (start + chunk).min(input.len());
                let mut candidate = input.clone();
                candidate.drain(start..end);
                if self.fails(&candidate)? {
                    input = candidate;
                } else {
                    start = end;
                }
            }
            chunk /= 2;
        }
        for i in 0..input.len() {
            if self.spent() {
                break;
            }
            if input[i] != b'0' {
                let mut candidate = input.clone();
                candidate[i] = b'0';
                if self.fails(&candidate)? {
                    input = candidate;
                }
            }
        }
        Ok(input)
    }
}

/// A failing input made smaller by [`reduce`].
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The smallest input found that fails the same way.
    pub bytes: Vec<u8>,
    /// How it fails ([`Failure::key`](thicket_exec::Failure::key): kind and location).
    pub key: String,
    /// Whether it is in the grammar (the tree passes only; no byte pass ran).
    pub in_grammar: bool,
    /// What the minimisation did.
    pub stats: MinimizeStats,
}

/// What [`reduce`] reports while it works, for a caller that shows progress.
#[derive(Debug)]
pub enum ReduceEvent<'a> {
    /// The input fails with this key; minimisation starts.
    Fails {
        /// The failure's key.
        key: &'a str,
    },
    /// The input does not parse: only its bytes are reduced.
    OutsideGrammar {
        /// Why it does not parse.
        error: &'a thicket_parse::ParseError,
    },
    /// A second has passed since the last progress event.
    Progress {
        /// Seconds since minimisation started.
        seconds: f64,
        /// The smallest failing input so far, in bytes.
        smallest: usize,
    },
}

impl Reduced {
    /// The closing line of `thicket minimize`: the input's size (`from` bytes) and the
    /// result's, whether it is in the grammar, the runs it took in `seconds`, how it
    /// fails and where it was written (`output`).
    pub fn summary(&self, from: usize, seconds: f64, output: &str) -> String {
        format!(
            "thicket: {from} -> {} bytes{} in {} runs ({} repeated candidates skipped), \
             {seconds:.1} s; still fails with `{}`; written to {output}",
            self.bytes.len(),
            if self.in_grammar {
                ", in the grammar"
            } else {
                ""
            },
            self.stats.runs,
            self.stats.repeats,
            self.key,
        )
    }
}

impl ReduceEvent<'_> {
    /// The event as a line for people, of the minimisation of `what` (`len` bytes).
    pub fn line(&self, what: &str, len: usize) -> String {
        match self {
            ReduceEvent::Fails { key } => {
                format!("thicket: {what} ({len} bytes) fails with `{key}`; minimizing")
            }
            ReduceEvent::OutsideGrammar { error } => {
                format!("note: {what} is not in the grammar ({error}): reducing its bytes")
            }
            ReduceEvent::Progress { seconds, smallest } => {
                format!("thicket: {seconds:.0} s: smallest so far {smallest} bytes")
            }
        }
    }
}

impl CrashEvent<'_> {
    /// The event as a line for people.
    pub fn line(&self) -> String {
        match self {
            CrashEvent::Reduce { path, len, event } => {
                event.line(&path.display().to_string(), *len)
            }
            CrashEvent::Flaky { path } => format!(
                "note: {} does not fail any more (flaky): not minimised",
                path.display()
            ),
            CrashEvent::Minimized {
                name,
                from,
                to,
                key,
            } => format!("thicket: minimized/{name}: {from} -> {to} bytes, `{key}`"),
        }
    }
}

/// What [`Campaign::minimize_crashes`](crate::Campaign::minimize_crashes) reports.
#[derive(Debug)]
pub enum CrashEvent<'a> {
    /// An event of the minimisation of the saved crash at `path` (`len` bytes).
    Reduce {
        /// The crash's file.
        path: &'a std::path::Path,
        /// Its size.
        len: usize,
        /// What its minimisation reports.
        event: ReduceEvent<'a>,
    },
    /// The saved crash at `path` does not fail any more (a flaky failure).
    Flaky {
        /// The crash's file.
        path: &'a std::path::Path,
    },
    /// A crash minimised into `minimized/NAME`.
    Minimized {
        /// The file's name, the crash's.
        name: &'a str,
        /// The crash's size.
        from: usize,
        /// The minimised input's size.
        to: usize,
        /// How it fails.
        key: &'a str,
    },
}

/// Minimises `input` against the target, each candidate run and judged by `judge`
/// (hangs confirmed, executor errors tolerated), keeping candidates that fail with the
/// input's own [`Failure::key`](thicket_exec::Failure::key): through its derivation tree
/// if it parses (then bytes too with `bytes`), else by its bytes. `None` if the input
/// does not fail; `events` hears of the start and of progress every second.
pub fn reduce(
    grammar: &Grammar,
    judge: &mut thicket_exec::Judge,
    input: &[u8],
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
    events: &mut dyn FnMut(ReduceEvent<'_>),
) -> Result<Option<Reduced>, crate::FuzzError> {
    shrink(
        grammar,
        judge,
        input,
        Reading::Text,
        limits,
        seed,
        bytes,
        events,
    )
}

/// An input that is an encoding of its tree (Fandango's bit fields packed into bytes),
/// for [`reduce_encoded`].
pub struct Encoded<'a> {
    /// The input.
    pub input: &'a [u8],
    /// Its tree, read by the caller, or why it has none.
    pub tree: Result<DerivationTree, thicket_parse::ParseError>,
    /// How trees stand for inputs.
    pub encoding: &'a dyn Encoding,
}

/// [`reduce`] for an input that is an encoding of its tree: each candidate tree runs
/// as `encoded.encoding` encodes it, and the terminals' bytes are not edited (an edit
/// of the text is no edit of the input); the bytes of an input without a tree, or with
/// `bytes` after the tree passes, are reduced as they are.
pub fn reduce_encoded(
    grammar: &Grammar,
    judge: &mut thicket_exec::Judge,
    encoded: Encoded<'_>,
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
    events: &mut dyn FnMut(ReduceEvent<'_>),
) -> Result<Option<Reduced>, crate::FuzzError> {
    let reading = Reading::Encoded {
        tree: encoded.tree.map_err(Some),
        encoding: encoded.encoding,
    };
    shrink(
        grammar,
        judge,
        encoded.input,
        reading,
        limits,
        seed,
        bytes,
        events,
    )
}

/// [`reduce`], or [`reduce_encoded`] with the tree `encoding` decodes: a campaign's
/// inputs, which are their trees' text unless the campaign has an encoding.
#[allow(clippy::too_many_arguments)]
pub fn reduce_decoded(
    grammar: &Grammar,
    encoding: Option<&dyn Encoding>,
    judge: &mut thicket_exec::Judge,
    input: &[u8],
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
    events: &mut dyn FnMut(ReduceEvent<'_>),
) -> Result<Option<Reduced>, crate::FuzzError> {
    let reading = encoding.map_or(Reading::Text, Reading::Decoded);
    shrink(grammar, judge, input, reading, limits, seed, bytes, events)
}

/// How a failing input's tree is read, once it is known to fail.
enum Reading<'a> {
    /// Parsed as text: the parser then reduces the terminals' bytes too.
    Text,
    /// Given by the caller, or why there is none (`None`: no reason given), the input
    /// an encoding of it.
    Encoded {
        tree: Result<DerivationTree, Option<thicket_parse::ParseError>>,
        encoding: &'a dyn Encoding,
    },
    /// Decoded by the encoding the input is in.
    Decoded(&'a dyn Encoding),
}

/// Reduces `input` if it fails: through its tree if it has one, read as `reading` says
/// (then bytes too with `bytes`), else by its bytes.
#[allow(clippy::too_many_arguments)]
fn shrink(
    grammar: &Grammar,
    judge: &mut thicket_exec::Judge,
    input: &[u8],
    reading: Reading<'_>,
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
    events: &mut dyn FnMut(ReduceEvent<'_>),
) -> Result<Option<Reduced>, crate::FuzzError> {
    let Some(key) = failure_key(judge, input)? else {
        return Ok(None);
    };
    events(ReduceEvent::Fails { key: &key });
    let (parser, tree, encoding) = match reading {
        Reading::Text => {
            let parser = Parser::new(grammar, Default::default())
                .map_err(|e| crate::FuzzError::Campaign(e.to_string()))?;
            let tree = parser.parse(input).map(|parsed| parsed.tree());
            (Some(parser), tree.map_err(Some), None)
        }
        Reading::Encoded { tree, encoding } => (None, tree, Some(encoding)),
        Reading::Decoded(encoding) => (None, encoding.decode(input).ok_or(None), Some(encoding)),
    };
    let generator = Generator::new(grammar, thicket_gen::GenConfig::default())
        .map_err(|e| crate::FuzzError::Campaign(e.to_string()))?;
    // Read before the minimiser borrows `events`: the tree, or why there is none.
    let tree = match tree {
        Ok(tree) => Some(tree),
        Err(error) => {
            if let Some(error) = &error {
                events(ReduceEvent::OutsideGrammar { error });
            }
            None
        }
    };
    let started = Instant::now();
    let mut smallest = input.len();
    let mut last_report = Instant::now();
    let test = |candidate: &[u8]| -> Result<bool, crate::FuzzError> {
        let same = failure_key(judge, candidate)?.as_deref() == Some(&key);
        if same {
            smallest = smallest.min(candidate.len());
        }
        if last_report.elapsed() >= std::time::Duration::from_secs(1) {
            last_report = Instant::now();
            events(ReduceEvent::Progress {
                seconds: started.elapsed().as_secs_f64(),
                smallest,
            });
        }
        Ok(same)
    };
    let mut minimizer = Minimizer::new(&generator, parser.as_ref(), test, limits, seed);
    if let Some(encoding) = encoding {
        minimizer = minimizer.with_encoding(encoding);
    }
    let (reduced, in_grammar) = match tree {
        Some(tree) => {
            let tree = minimizer.minimize_tree(tree)?;
            // The tree taken last failed as its input, so it stands for one.
            let reduced = minimizer
                .input_of(&tree)
                .map_or_else(|| input.to_vec(), Cow::into_owned);
            if bytes {
                (minimizer.minimize_bytes(&reduced)?, false)
            } else {
                (reduced, true)
            }
        }
        None => (minimizer.minimize_bytes(input)?, false),
    };
    let stats = minimizer.stats().clone();
    Ok(Some(Reduced {
        bytes: reduced,
        key,
        in_grammar,
        stats,
    }))
}

/// How `input` makes the target fail (kind and location), if it does (a run the
/// executor could not make does not fail).
fn failure_key(
    judge: &mut thicket_exec::Judge,
    input: &[u8],
) -> Result<Option<String>, thicket_exec::ExecError> {
    Ok(judge
        .run(input)?
        .and_then(|verdict| verdict.failure)
        .map(|f| f.key()))
}

/// What identifies a candidate among those tried (a 64-bit hash: a collision skips one
/// candidate, nothing worse).
fn candidate_key(bytes: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(bytes);
    hasher.write_usize(bytes.len());
    hasher.finish()
}

/// The first regex terminal whose text starts at or after `offset`.
fn regex_leaf_at(grammar: &Grammar, tree: &DerivationTree, offset: usize) -> Option<NodeId> {
    (0..tree.len()).map(NodeId::from_index).find(|&n| {
        matches!(grammar.expr(tree.expr(n)), Expr::Regex(_)) && tree.text_range(n).start >= offset
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::GenConfig;
    use thicket_grammar::load_spec_text;

    const LISTS: &str = "<start> ::= <value>\n\
        <value> ::= \"[\" <items>? \"]\" | <num>\n\
        <items> ::= <value> (\",\" <value>)*\n\
        <num> ::= r\"[0-9]+\"\n";

    fn minimize(
        input: &str,
        limits: MinimizeLimits,
        fails: impl Fn(&[u8]) -> bool,
    ) -> (String, MinimizeStats) {
        let grammar = load_spec_text("t.fan", LISTS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let parser = Parser::new(&grammar, Default::default()).unwrap();
        let tree = parser.parse(input.as_bytes()).unwrap().tree();
        let mut minimizer = Minimizer::new(
            &generator,
            Some(&parser),
            |c: &[u8]| Ok::<_, ()>(fails(c)),
            limits,
            1,
        );
        let tree = minimizer.minimize_tree(tree).unwrap();
        // Every result is in the grammar.
        assert!(parser.parse(tree.bytes()).is_ok());
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        (text, minimizer.stats().clone())
    }

    #[test]
    fn nesting_lists_and_terminals_shrink_to_what_fails() {
        let input = "[[1,2],[3,[45,6789],[[[[0]]]]],0,[11,12,13,14,15,16,17,18,19]]";
        let (text, stats) = minimize(input, MinimizeLimits::default(), |c| c.contains(&b'8'));
        assert_eq!(text, "8");
        assert!(!stats.budget_spent);
        // Needs two features: a list of two numbers, one with a 9 and one with a 7.
        let (text, _) = minimize(input, MinimizeLimits::default(), |c| {
            let s = String::from_utf8_lossy(c);
            s.contains('9') && s.contains('7') && s.starts_with('[')
        });
        // `<items>`' first item is outside its repetition, so one number may stay
        // before the two that matter (a local minimum of these moves).
        let items = text.split(',').count();
        assert!(text.len() <= 7 && items <= 3, "{text}");
    }

    /// An encoding that stands for a tree by its text reversed, and for no input when
    /// the text holds a 5.
    struct Reversed;

    impl Encoding for Reversed {
        fn encode(&self, tree: &DerivationTree) -> Result<Vec<u8>, String> {
            if tree.bytes().contains(&b'5') {
                return Err("a 5 stands for no input".to_string());
            }
            Ok(tree.bytes().iter().rev().copied().collect())
        }

        fn decode(&self, _: &[u8]) -> Option<DerivationTree> {
            None
        }
    }

    #[test]
    fn with_an_encoding_candidates_run_encoded_and_trees_without_input_are_skipped() {
        let grammar = load_spec_text("t.fan", LISTS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let parser = Parser::new(&grammar, Default::default()).unwrap();
        let tree = parser.parse(b"[1,[5,23],4]").unwrap().tree();
        let mut ran = Vec::new();
        let mut minimizer = Minimizer::new(
            &generator,
            None,
            |c: &[u8]| {
                ran.push(c.to_vec());
                // Fails while the encoded input ends with `]` then the 3 (`[...3]`
                // reversed starts `]3`): the run sees the encoding, not the text.
                Ok::<_, ()>(c.starts_with(b"]") && c.contains(&b'3'))
            },
            MinimizeLimits::default(),
            1,
        )
        .with_encoding(&Reversed);
        let tree = minimizer.minimize_tree(tree).unwrap();
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        assert!(text.contains('3') && text.ends_with(']'), "{text}");
        assert!(text.len() < "[1,[5,23],4]".len(), "{text}");
        assert!(
            ran.iter().all(|input| !input.contains(&b'5')),
            "a 5 was run"
        );
    }

    #[test]
    fn the_budget_ends_the_work_with_a_failing_input() {
        let input = "[[1,2],[3,[45,6789]],0]";
        let limits = MinimizeLimits {
            max_runs: 3,
            deadline: None,
        };
        let (text, stats) = minimize(input, limits, |c| c.contains(&b'8'));
        assert!(stats.budget_spent);
        assert_eq!(stats.runs, 3);
        assert!(text.contains('8') && text.len() < input.len(), "{text}");
    }

    #[test]
    fn bytes_shrink_outside_the_grammar_and_errors_stop_the_work() {
        let grammar = load_spec_text("t.fan", LISTS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let mut minimizer = Minimizer::new(
            &generator,
            None,
            |c: &[u8]| Ok::<_, ()>(c.contains(&b'X')),
            MinimizeLimits::default(),
            1,
        );
        assert_eq!(minimizer.minimize_bytes(b"[1,2,{X}]]]").unwrap(), b"X");
        let mut runs = 0;
        let mut minimizer = Minimizer::new(
            &generator,
            None,
            |_: &[u8]| {
                runs += 1;
                if runs == 2 {
                    Err("target gone")
                } else {
                    Ok(true)
                }
            },
            MinimizeLimits::default(),
            1,
        );
        assert_eq!(minimizer.minimize_bytes(b"abcdef"), Err("target gone"));
    }

    /// A target that crashes (SIGSEGV) on the inputs `crashes` says.
    struct CrashesWhen(fn(&[u8]) -> bool);

    impl thicket_exec::Executor for CrashesWhen {
        fn run(&mut self, input: &[u8]) -> Result<thicket_exec::Outcome, thicket_exec::ExecError> {
            let status = if (self.0)(input) {
                thicket_exec::Status::Signaled(11)
            } else {
                thicket_exec::Status::Exited(0)
            };
            Ok(thicket_exec::Outcome::new(
                status,
                std::time::Duration::from_micros(10),
            ))
        }
        fn trace(&self) -> thicket_exec::Trace<'_> {
            thicket_exec::Trace::None
        }
        fn describe(&self) -> String {
            "crashes on some inputs".into()
        }
        fn timeout(&self) -> std::time::Duration {
            std::time::Duration::from_secs(1)
        }
        fn set_timeout(&mut self, _: std::time::Duration) {}
    }

    /// Crashes when the input holds `77`.
    fn holds_77(input: &[u8]) -> bool {
        input.windows(2).any(|w| w == b"77")
    }

    #[test]
    fn reduce_keeps_the_failure_and_the_grammar_and_says_when_it_leaves_it() {
        let grammar = load_spec_text("t.fan", LISTS.as_bytes()).unwrap();
        let mut judge = thicket_exec::Judge::new(
            Box::new(CrashesWhen(holds_77)),
            thicket_exec::Classifier::default(),
        );
        let mut events = Vec::new();
        let mut note = |e: ReduceEvent<'_>| events.push(format!("{e:?}"));
        let limits = MinimizeLimits::default();
        let reduced = reduce(
            &grammar,
            &mut judge,
            b"[1,[2,377],[4]]",
            limits,
            1,
            false,
            &mut note,
        )
        .unwrap()
        .expect("fails");
        assert_eq!(reduced.bytes, b"77");
        assert!(reduced.in_grammar);
        assert!(events[0].starts_with("Fails"), "{events:?}");
        // Outside the grammar: bytes only, said before the work starts.
        let mut events = Vec::new();
        let mut note = |e: ReduceEvent<'_>| events.push(format!("{e:?}"));
        let reduced = reduce(
            &grammar,
            &mut judge,
            b"[1,, 77]]",
            limits,
            1,
            false,
            &mut note,
        )
        .unwrap()
        .expect("fails");
        assert_eq!(reduced.bytes, b"77");
        assert!(!reduced.in_grammar);
        assert!(events[1].starts_with("OutsideGrammar"), "{events:?}");
        // An input that does not fail is not minimised.
        let passes = reduce(&grammar, &mut judge, b"[1]", limits, 1, false, &mut |_| {});
        assert!(passes.unwrap().is_none());
    }

    /// Bytes spelled as their bits between brackets in the tree (`<01000001>`), packed
    /// into bytes in the input (`<A>`): Fandango's bit fields in small.
    const PACKED: &str =
        "<start> ::= \"<\" <byte>+ \">\"\n<byte> ::= <bit>{8}\n<bit> ::= \"0\" | \"1\"\n";

    struct Packed<'g> {
        parser: Parser<'g>,
    }

    impl Encoding for Packed<'_> {
        fn encode(&self, tree: &DerivationTree) -> Result<Vec<u8>, String> {
            let text = tree.bytes();
            let bits = &text[1..text.len() - 1];
            let mut input = vec![b'<'];
            input.extend(
                bits.chunks(8)
                    .map(|byte| byte.iter().fold(0u8, |b, &bit| b << 1 | (bit - b'0'))),
            );
            input.push(b'>');
            Ok(input)
        }

        fn decode(&self, input: &[u8]) -> Option<DerivationTree> {
            let (b'<', Some((b'>', bytes))) = (*input.first()?, input[1..].split_last()) else {
                return None;
            };
            let mut text = vec![b'<'];
            text.extend(
                bytes
                    .iter()
                    .flat_map(|&b| (0..8).rev().map(move |i| b'0' + (b >> i & 1))),
            );
            text.push(b'>');
            self.parser.parse(&text).ok().map(|r| r.tree())
        }
    }

    /// Crashes when a byte between the brackets has its low bit set.
    fn odd_byte_between_brackets(input: &[u8]) -> bool {
        let framed = input.len() > 2 && input[0] == b'<' && input[input.len() - 1] == b'>';
        framed && input[1..input.len() - 1].iter().any(|b| b & 1 == 1)
    }

    #[test]
    fn an_encoded_input_is_reduced_through_its_tree_and_encoded_again() {
        let grammar = load_spec_text("t.fan", PACKED.as_bytes()).unwrap();
        let encoding = Packed {
            parser: Parser::new(&grammar, Default::default()).unwrap(),
        };
        let mut judge = thicket_exec::Judge::new(
            Box::new(CrashesWhen(odd_byte_between_brackets)),
            thicket_exec::Classifier::default(),
        );
        let reduced = reduce_decoded(
            &grammar,
            Some(&encoding),
            &mut judge,
            b"<\x02\x40\x03\x04>",
            MinimizeLimits::default(),
            1,
            false,
            &mut |_| {},
        )
        .unwrap()
        .expect("fails");
        // The one byte that matters, still packed between the brackets (read as
        // text, the input's bytes would have been cut to `\x03` or `<\x03`).
        assert_eq!(reduced.bytes, b"<\x03>");
        assert!(reduced.in_grammar);
    }
}
