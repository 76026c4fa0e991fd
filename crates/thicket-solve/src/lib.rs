//! # thicket-solve
//!
//! Inputs that satisfy semantic constraints: the solver behind `thicket generate` on a
//! spec with `where` constraints. [`Solver::new`] takes a grammar and resolved
//! [`Constraint`]s; [`Solver::solve`] makes one valid derivation tree, [`Solver::repair`]
//! turns a given tree (a mutant, a k-path-steered tree) into a valid one where it can.
//!
//! ## How it solves, and how that relates to ISLa
//!
//! ISLa's solver (Steinhöfel & Zeller, "Input Invariants", §4) searches over
//! *conditioned derivation trees*: open trees with the formulas still to satisfy,
//! expanded one step at a time, universal quantifiers instantiated on the subtrees that
//! exist so far, SMT atoms solved en bloc with Z3 once no universal is left, and
//! existentials satisfied by matching or by inserting a subtree. It is precise (every
//! output satisfies the constraint) and complete in theory, and slow in practice: tens
//! of inputs per second at best.
//!
//! thicket takes a faster route with the same precision guarantee:
//!
//! 1. **Generate a closed tree** with the grammar's generator (random, or steered to
//!    k-paths): every free nonterminal is closed in one step, as ISLa's rule 15 does,
//!    and the tree's shape is the generator's, so outputs are as large and diverse as
//!    plain generation.
//! 2. **Repair it under the checker's bindings.** The exact checker
//!    ([`thicket_constraint::Evaluator`]) evaluates each constraint on the tree. For a
//!    violated one, the planner ([`repair`]) walks the formula with the truth value it
//!    needs and proposes edits from the instances that break it: a universal fixes every
//!    failing instance (or, failing that, removes the instance by regenerating one of its
//!    bound subtrees, or by dropping the repetition item that holds it; once a constraint
//!    has been violated in a few rounds of one tree's repair, its fixes are not sticking
//!    and removal comes first); an existential first looks for an instance whose
//!    structure already fits and fixes its atoms (ISLa's rules 11/12), otherwise it
//!    *inserts* a subtree of the quantifier's type, built to match its match expression,
//!    by self-embedding into a recursive rule or a repetition (rules 13/14); an
//!    `exists int` tries the values the predicates propose. Atoms are solved natively:
//!    equality by copying a subtree (or its text, parsed back as the other nonterminal),
//!    `str.len` and `count` by generating a subtree of an exact length or number of
//!    needles ([`measure`]), `str.to_int` and linear arithmetic by solving for one
//!    variable and writing its digits, semantic predicates by their fixes (checksums,
//!    octal fields). Anything else (a disequality, `str.in_re`, an atom no rule solves)
//!    is repaired by regenerating one of its subtrees.
//! 3. **Apply the edits** (disjoint subtrees, one pass) and check again, for at most
//!    [`SolverConfig::max_rounds`] rounds; a tree that is still invalid is dropped and a
//!    fresh one tried, up to [`SolverConfig::max_attempts`]. A tree is returned only
//!    when the exact checker finds every constraint satisfied: precision is 100% by
//!    construction (ISLa's Theorem 4.7), whatever the repairs did.
//!
//! What is given up is ISLa's theoretical completeness: a constraint whose solutions the
//! repairs cannot reach ends with [`Unsolved`] ("no solution within the budget", with
//! what was left violated; or, with [`Solver::with_deadline`], "no solution before the
//! deadline"). What is proved unsatisfiable before any search
//! ([`SolveError::Unsatisfiable`]): a constant-false atom, an `exists` over a
//! nonterminal no input can contain, length bounds on a nonterminal every input
//! contains that no subtree of it can meet, and constraints that contradict themselves
//! or each other as propositional formulas over their atoms (`A xor A`; lengths,
//! numbers and counts in intervals no subtree meets; see `contradiction.rs`). Atoms outside what thicket solves natively
//! (string functions that need an SMT solver such as `str.replace` or `str.indexof`,
//! and `forall int`) are refused up front ([`SolveError::Unsupported`]) with their
//! position; with the cargo feature `z3`, Z3 solves the former (models read back into
//! the grammar as ISLa does; `docs/solver.md`).

#![warn(missing_docs)]

mod bits;
mod contradiction;
mod language;
pub mod measure;
mod pattern;
mod regex_len;
mod repair;
pub mod sources;
mod terms;
pub mod tokens;
mod unsat;
#[cfg(feature = "z3")]
mod z3;

use measure::{Measure, MeasureTable};
use rand::Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use thicket_constraint::{Checker, Constraint};
use thicket_gen::{GenConfig, GenError, GenRng, Generator, Weights};
use thicket_grammar::{Grammar, Reach, SymbolId};
use thicket_parse::{ParseConfig, Parser};
use thicket_tree::DerivationTree;

/// Most texts read back the solver remembers.
const READ_BACK_MAX_ENTRIES: usize = 4096;
/// Texts read back as a rule, and the subtree (if the rule derives the text).
type ReadBack = HashMap<(SymbolId, Vec<u8>), Option<DerivationTree>>;

/// Limits of the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolverConfig {
    /// The generator's limits (depth, repetitions, nodes), for the trees it starts from
    /// and the subtrees repairs generate.
    pub generation: GenConfig,
    /// Repair rounds (check, plan edits, apply) per tree before it is given up.
    pub max_rounds: u32,
    /// Trees tried per solution before [`Solver::solve`] reports [`Unsolved`].
    pub max_attempts: u32,
    /// Quantifier instances one check of one constraint may visit.
    pub check_budget: u64,
    /// With the `z3` feature: Z3's time limit per check (milliseconds). A check that
    /// runs out fails its atom's repair for that round.
    pub smt_timeout_ms: u32,
    /// With the `z3` feature: distinct models asked for per query, one of which is
    /// taken at random (more: more diverse values, more time).
    pub smt_models: u32,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            generation: GenConfig::default(),
            max_rounds: 32,
            max_attempts: 64,
            check_budget: 2_000_000,
            smt_timeout_ms: 200,
            smt_models: 2,
        }
    }
}

/// Why a solver cannot be built for these constraints.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// The constraints are proved to have no solution.
    #[error("{location}: unsatisfiable: {why}")]
    Unsatisfiable {
        /// Index of the constraint.
        constraint: usize,
        /// `file:line:col` of the part that cannot hold.
        location: String,
        /// Why.
        why: String,
    },
    /// A constraint uses something thicket does not solve.
    #[error("{location}: {why}")]
    Unsupported {
        /// Index of the constraint.
        constraint: usize,
        /// `file:line:col` of the atom.
        location: String,
        /// What is not supported.
        why: String,
    },
    /// The grammar cannot generate (depth too small, no finite input).
    #[error(transparent)]
    Generator(#[from] GenError),
}

/// No valid tree was found within the budget.
#[derive(Clone, Debug)]
pub struct Unsolved {
    /// Constraints the last tree tried still violated (indices).
    pub violated: Vec<usize>,
    /// Trees tried.
    pub attempts: u32,
    /// Why no tree could even be started: a generator ([`sources::SubtreeSource`])
    /// failed. Then `violated` is empty and no further attempt is made.
    pub source_error: Option<sources::SourceError>,
    /// Why a started tree could not be rewritten by the solver's [`TreeFixup`]. Then
    /// `violated` is empty and no further attempt is made.
    pub fixup_error: Option<String>,
    /// Whether the search stopped at the solver's deadline ([`Solver::with_deadline`])
    /// rather than at the end of its budget.
    pub deadline_passed: bool,
}

impl thicket_gen::Miss for Unsolved {
    fn deadline_passed(&self) -> bool {
        self.deadline_passed
    }
}

/// A solver is a producer of valid trees: each stream gives a tree that satisfies every
/// constraint, or [`Unsolved`].
impl thicket_gen::Producer for Solver<'_> {
    type Miss = Unsolved;

    fn grammar(&self) -> &Grammar {
        self.grammar
    }

    fn tree(&self, rng: &mut GenRng) -> Result<thicket_gen::Fresh, Unsolved> {
        let (tree, _) = self.solve(rng)?;
        Ok(thicket_gen::Fresh {
            tree,
            stats: thicket_gen::GenStats::default(),
        })
    }
}

/// A rewrite of every tree the solver starts from, for a property that neither the
/// grammar nor the constraints express (Fandango's repetition counts computed from
/// other fields of the input, `<byte>{f(<len>)}`). It is applied after the
/// [`sources::SubtreeSource`] and before the repairs; a repaired tree is returned only
/// if the property still holds (else the rewrite and the repairs run again, a few
/// times, before the tree is given up).
pub trait TreeFixup: Send + Sync {
    /// `tree` rewritten so that the property holds, drawing what it adds from `seed`;
    /// an error says why it cannot be (then solving stops with that reason).
    fn fix(
        &self,
        solver: &Solver<'_>,
        tree: DerivationTree,
        seed: u64,
    ) -> Result<DerivationTree, String>;

    /// Whether the property holds of `tree`.
    fn holds(&self, solver: &Solver<'_>, tree: &DerivationTree) -> bool;
}

/// How often a tree is rewritten by the [`TreeFixup`] and repaired again when the
/// repairs undid the rewrite, before the tree is given up.
const FIXUP_ROUNDS: usize = 3;

impl std::fmt::Display for Unsolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(e) = &self.source_error {
            return write!(f, "{e}");
        }
        if let Some(e) = &self.fixup_error {
            return f.write_str(e);
        }
        let violated = if self.violated.is_empty() {
            String::new()
        } else {
            format!(
                "; still violated: constraint{} {}",
                if self.violated.len() == 1 { "" } else { "s" },
                self.violated
                    .iter()
                    .map(|i| (i + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if self.deadline_passed {
            return write!(
                f,
                "no solution before the deadline ({} trees tried){violated}",
                self.attempts
            );
        }
        write!(
            f,
            "no solution within the budget ({} trees tried, each repaired for up to the \
             round limit){violated}",
            self.attempts
        )
    }
}

/// What solving one input took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolveStats {
    /// Trees tried (1 if the first one was repaired into a solution).
    pub attempts: u32,
    /// Repair rounds over all attempts.
    pub rounds: u32,
    /// Edits applied over all attempts.
    pub edits: u32,
}

/// Makes derivation trees that satisfy a set of constraints.
pub struct Solver<'g> {
    grammar: &'g Grammar,
    generator: Generator<'g>,
    /// Generates the subtrees repairs put in (see [`repair_config`]).
    repairer: Generator<'g>,
    /// The constraints, and the exact checker every output must pass.
    checker: Checker<'g>,
    reach: Reach,
    config: SolverConfig,
    tables: Mutex<HashMap<Measure, Arc<MeasureTable>>>,
    /// Reads texts back as subtrees (`Parser::parse_as`); `None` if the grammar has a
    /// regex the parser cannot compile (then texts are never written, only generated).
    parser: OnceLock<Option<Parser<'g>>>,
    /// Per constraint, the rules its truth is confined to (`terms::scope`): a
    /// constraint that held is not evaluated again after edits that touch none.
    scopes: Vec<Option<Vec<SymbolId>>>,
    /// Per symbol, the shortest route to it from each expression (see [`routes`]).
    routes: Vec<OnceLock<Vec<u32>>>,
    /// Per symbol, its language as a regex where it is regular (`language.rs`).
    languages: Vec<OnceLock<Option<thicket_constraint::regex::Regex>>>,
    /// Per symbol, a generator that avoids it (to remove a quantifier's instances).
    avoiders: Vec<OnceLock<Option<Generator<'g>>>>,
    /// The constraints' string literals.
    literals: std::collections::HashSet<Vec<u8>>,
    /// Literals read back as a rule (`repair::parse_as`), and the result.
    read_back: Mutex<ReadBack>,
    /// Match expressions' variants parsed once, to instantiate without parsing.
    skeletons: pattern::Skeletons,
    /// Where some rules' subtrees come from instead of the generator (Fandango's
    /// `:=` generators).
    source: Option<Arc<dyn sources::SubtreeSource>>,
    /// A rewrite of each started tree (see [`TreeFixup`]).
    fixup: Option<Arc<dyn TreeFixup>>,
    /// The rules' languages as Z3 regexes (the `z3` feature).
    #[cfg(feature = "z3")]
    smt: crate::z3::Smt,
    /// When the search stops, whatever is left of the budget ([`Solver::with_deadline`]).
    deadline: Option<Instant>,
    /// The weights fresh trees are drawn by ([`Solver::with_start_weights`]).
    start_weights: Option<Weights>,
}

impl<'g> Solver<'g> {
    /// A solver for trees of `grammar` satisfying all of `constraints` (resolved against
    /// `grammar`). Refuses constraints it can prove unsatisfiable or does not solve.
    pub fn new(
        grammar: &'g Grammar,
        constraints: Vec<Constraint>,
        config: SolverConfig,
    ) -> Result<Solver<'g>, SolveError> {
        let generator = Generator::new(grammar, config.generation)?;
        let repairer = Generator::new(grammar, repair_config(config.generation))?;
        let reach = Reach::new(grammar);
        let scopes = constraints
            .iter()
            .map(|c| terms::scope(&c.formula))
            .collect();
        let mut solver = Solver {
            source: None,
            fixup: None,
            deadline: None,
            start_weights: None,
            scopes,
            skeletons: pattern::Skeletons::new(),
            literals: terms::literals(&constraints),
            read_back: Mutex::new(HashMap::new()),
            #[cfg(feature = "z3")]
            smt: crate::z3::Smt::new(grammar, &reach),
            grammar,
            generator,
            repairer,
            checker: Checker::new(grammar, constraints).with_budget(config.check_budget),
            reach,
            config,
            tables: Mutex::new(HashMap::new()),
            parser: OnceLock::new(),
            routes: (0..grammar.rules().len())
                .map(|_| OnceLock::new())
                .collect(),
            avoiders: (0..grammar.rules().len())
                .map(|_| OnceLock::new())
                .collect(),
            languages: (0..grammar.rules().len())
                .map(|_| OnceLock::new())
                .collect(),
        };
        unsat::check(&solver)?;
        solver.skeletons = pattern::skeletons(&solver);
        Ok(solver)
    }

    /// Takes the subtrees of `source`'s rules from it in every tree the solver starts
    /// from (see [`sources`]).
    pub fn with_source(mut self, source: Arc<dyn sources::SubtreeSource>) -> Solver<'g> {
        self.source = Some(source);
        self
    }

    /// Rewrites every tree the solver starts from with `fixup`, after the source's
    /// subtrees are in and before the repairs (see [`TreeFixup`]).
    pub fn with_fixup(mut self, fixup: Arc<dyn TreeFixup>) -> Solver<'g> {
        self.fixup = Some(fixup);
        self
    }

    /// Draws the trees [`Solver::solve`] starts from by `weights` (made for the
    /// solver's grammar: a spec's probabilities, its whitespace rules' weights), not
    /// uniformly; the subtrees repairs put in are drawn as before.
    pub fn with_start_weights(mut self, weights: Option<Weights>) -> Solver<'g> {
        self.start_weights = weights;
        self
    }

    /// A fresh tree to start a search from (see [`Solver::with_start_weights`]).
    fn fresh_tree<R: Rng + ?Sized>(&self, rng: &mut R) -> DerivationTree {
        match &self.start_weights {
            Some(weights) => self.generator.generate_tree_weighted(rng, weights).0,
            None => self.generator.generate_tree(rng).0,
        }
    }

    /// Stops every search at `deadline`: no tree is begun and no repair round run after
    /// it, and a solve that could not finish ends with an [`Unsolved`] that says so
    /// (`deadline_passed`). A search step under way (one planning pass, one check)
    /// finishes first.
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> Solver<'g> {
        self.deadline = deadline;
        self
    }

    /// Whether the deadline, if any, has passed.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The parser that reads texts back as subtrees, built on first use: many runs
    /// never write a text (a spec without generators or string repairs), and building
    /// it is a good part of a short run's start-up.
    pub(crate) fn parser(&self) -> Option<&Parser<'g>> {
        self.parser
            .get_or_init(|| Parser::new(self.grammar, ParseConfig::default()).ok())
            .as_ref()
    }

    /// The grammar.
    pub fn grammar(&self) -> &'g Grammar {
        self.grammar
    }

    /// The generator trees start from.
    pub fn generator(&self) -> &Generator<'g> {
        &self.generator
    }

    /// The constraints.
    pub fn constraints(&self) -> &[Constraint] {
        self.checker.constraints()
    }

    /// The limits in force.
    pub fn config(&self) -> SolverConfig {
        self.config
    }

    /// The random number generator for solution `index` of `seed` (the generator's).
    pub fn rng_for(seed: u64, index: u64) -> GenRng {
        Generator::rng_for(seed, index)
    }

    /// The indices of the constraints `tree` violates (a check exceeding the budget
    /// counts as violated).
    pub fn violated(&self, tree: &DerivationTree) -> Vec<usize> {
        self.checker.check(tree)
    }

    /// One valid tree: generated, repaired, and if that fails regenerated, up to
    /// [`SolverConfig::max_attempts`] trees.
    pub fn solve<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> Result<(DerivationTree, SolveStats), Unsolved> {
        self.solve_from(rng, |solver, rng| solver.fresh_tree(rng))
    }

    /// `tree` made valid: repaired, and if the repairs cannot save it, fresh trees
    /// from `rng` are, as in [`Solver::solve`].
    pub fn make_valid<R: Rng + ?Sized>(
        &self,
        tree: DerivationTree,
        rng: &mut R,
    ) -> Result<(DerivationTree, SolveStats), Unsolved> {
        let mut first = Some(tree);
        self.solve_from(rng, |solver, rng| {
            first.take().unwrap_or_else(|| solver.fresh_tree(rng))
        })
    }

    /// Like [`Solver::solve`], each attempt starting from the tree `start` makes.
    pub fn solve_from<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        mut start: impl FnMut(&Self, &mut R) -> DerivationTree,
    ) -> Result<(DerivationTree, SolveStats), Unsolved> {
        let mut stats = SolveStats::default();
        let mut violated = Vec::new();
        for _ in 0..self.config.max_attempts.max(1) {
            if self.past_deadline() {
                return Err(Unsolved {
                    violated,
                    attempts: stats.attempts,
                    source_error: None,
                    fixup_error: None,
                    deadline_passed: true,
                });
            }
            stats.attempts += 1;
            let mut tree = start(self, rng);
            if let Some(source) = &self.source {
                tree = match sources::apply(self, source.as_ref(), tree, rng.next_u64()) {
                    Ok(tree) => tree,
                    Err(e) => {
                        return Err(Unsolved {
                            violated: Vec::new(),
                            attempts: stats.attempts,
                            source_error: Some(e),
                            fixup_error: None,
                            deadline_passed: false,
                        });
                    }
                };
            }
            let Some(fixup) = &self.fixup else {
                match repair::repair(self, tree, rng, &mut stats) {
                    Ok(tree) => return Ok((tree, stats)),
                    Err(left) => violated = left,
                }
                continue;
            };
            for _ in 0..FIXUP_ROUNDS {
                tree = match fixup.fix(self, tree, rng.next_u64()) {
                    Ok(tree) => tree,
                    Err(e) => {
                        return Err(Unsolved {
                            violated: Vec::new(),
                            attempts: stats.attempts,
                            source_error: None,
                            fixup_error: Some(e),
                            deadline_passed: false,
                        });
                    }
                };
                match repair::repair(self, tree, rng, &mut stats) {
                    Ok(repaired) if fixup.holds(self, &repaired) => return Ok((repaired, stats)),
                    Ok(repaired) => {
                        violated = Vec::new();
                        tree = repaired;
                    }
                    Err(left) => {
                        violated = left;
                        break;
                    }
                }
            }
        }
        Err(Unsolved {
            violated,
            attempts: stats.attempts,
            source_error: None,
            fixup_error: None,
            deadline_passed: self.past_deadline(),
        })
    }

    /// Turns `tree` into a tree that satisfies every constraint, by the repairs alone
    /// (no fresh tree): `Err` with what is still violated if the rounds run out.
    pub fn repair<R: Rng + ?Sized>(
        &self,
        tree: DerivationTree,
        rng: &mut R,
    ) -> Result<DerivationTree, Unsolved> {
        let mut stats = SolveStats::default();
        repair::repair(self, tree, rng, &mut stats).map_err(|violated| Unsolved {
            violated,
            attempts: 1,
            source_error: None,
            fixup_error: None,
            deadline_passed: self.past_deadline(),
        })
    }

    /// Solutions `0, 1, 2, ...` of `seed`: solution `i` comes from
    /// [`Solver::rng_for`]`(seed, i)` alone, so any subset can be made in parallel.
    pub fn solutions(&self, seed: u64) -> Solutions<'_, 'g> {
        Solutions {
            solver: self,
            seed,
            index: 0,
        }
    }

    fn table(&self, measure: Measure) -> Arc<MeasureTable> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .entry(measure)
            .or_insert_with(|| Arc::new(MeasureTable::new(&self.generator, measure)))
            .clone()
    }

    /// The values `measure` can take on a subtree of `symbol` below the measure's cap,
    /// and, if some may lie past the cap, the bound of those (a length within the byte
    /// limit, a count within the node limit).
    fn measure_values(&self, symbol: SymbolId, measure: Measure) -> (bits::Bits, Option<i128>) {
        let table = self.table(measure);
        let (below_cap, exact) = table.possible(self.grammar.rule(symbol).body, 1);
        let limit = match measure {
            Measure::Length => self.config.generation.max_size,
            Measure::Count(_) => self.config.generation.max_nodes as u64,
        };
        (below_cap, (!exact).then_some(i128::from(limit)))
    }

    /// Per expression, the fewest rule expansions from it to a reference to `symbol`
    /// ([`NO_ROUTE`] if none): the route an inserted subtree takes to its target.
    fn route_to(&self, symbol: SymbolId) -> &[u32] {
        self.routes[symbol.index()].get_or_init(|| routes(self.grammar, symbol))
    }

    /// The language of `symbol` as a regex, where it is regular by its shape.
    fn language(&self, symbol: SymbolId) -> Option<&thicket_constraint::regex::Regex> {
        self.languages[symbol.index()]
            .get_or_init(|| language::rule_language(self.grammar, symbol))
            .as_ref()
    }

    fn avoider(&self, symbol: SymbolId) -> Option<&Generator<'g>> {
        self.avoiders[symbol.index()]
            .get_or_init(|| {
                Generator::avoiding(
                    self.grammar,
                    repair_config(self.config.generation),
                    &[symbol],
                )
                .ok()
            })
            .as_ref()
    }
}

/// No route to the symbol (see [`routes`]).
const NO_ROUTE: u32 = u32::MAX;

/// Per expression of `grammar`, the fewest rule expansions (references passed through)
/// from it to a reference to `target`, or [`NO_ROUTE`]: a fixpoint in id order, since
/// children have smaller ids than their parents and references read their rule's body
/// from the last pass.
fn routes(grammar: &Grammar, target: SymbolId) -> Vec<u32> {
    use thicket_grammar::Expr;
    let mut dist = vec![NO_ROUTE; grammar.expr_count()];
    loop {
        let mut changed = false;
        for id in grammar.expr_ids() {
            let d = match grammar.expr(id) {
                Expr::Ref(s) if *s == target => 0,
                Expr::Ref(s) => dist[grammar.rule(*s).body.index()].saturating_add(1),
                Expr::Literal(_) | Expr::Regex(_) => NO_ROUTE,
                other => other
                    .children()
                    .iter()
                    .map(|c| dist[c.index()])
                    .min()
                    .unwrap_or(NO_ROUTE),
            };
            if d < dist[id.index()] {
                dist[id.index()] = d;
                changed = true;
            }
        }
        if !changed {
            return dist;
        }
    }
}

/// The mean size target (bytes) of subtrees a repair generates.
const REPAIR_TARGET_SIZE: u32 = 4;

/// The generator limits for subtrees a repair puts into a tree: the same limits with
/// sized choices of a small target ([`REPAIR_TARGET_SIZE`]). The default policy draws
/// a whole input's target for every subtree, so each regenerated identifier,
/// expression or branch grew towards an input's size and brought new uses and
/// attributes, hence new repairs (Scriptsize-C: 264 B solved against 96 B plain);
/// uniform choices at depth 30 make even larger subtrees. The input's size is the
/// starting tree's, which the policy in force chose.
fn repair_config(generation: GenConfig) -> GenConfig {
    GenConfig {
        policy: thicket_gen::ChoicePolicy::Sized {
            bytes: REPAIR_TARGET_SIZE,
        },
        ..generation
    }
}

/// The solutions of one seed, in order (see [`Solver::solutions`]).
pub struct Solutions<'s, 'g> {
    solver: &'s Solver<'g>,
    seed: u64,
    index: u64,
}

impl Iterator for Solutions<'_, '_> {
    type Item = Result<DerivationTree, Unsolved>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut rng = Solver::rng_for(self.seed, self.index);
        self.index += 1;
        Some(self.solver.solve(&mut rng).map(|(tree, _)| tree))
    }
}
