//! # thicket-fandango
//!
//! A whole spec as a user writes it, ready to generate from, parse and check: the
//! grammar ([`thicket_grammar`]), its `where` constraints in ISLa's or Fandango's
//! language ([`thicket_constraint::spec_constraints`]), the spec's Python run in a real
//! CPython when something needs it ([`thicket_python::PythonHost`]), Fandango's `:=`
//! generators as a [`SubtreeSource`] for the solver, and `minimizing` / `maximizing`
//! goals as a ranking of valid candidates. The command line (and any other front end)
//! loads specs through [`compile`], so that every front end gets the same behaviour.
//!
//! Python starts only when the spec needs it: a constraint that is not native, a
//! generator, a goal evaluated in Python. A spec whose Python code is never called
//! runs without an interpreter; one that needs it on a machine without one gets an
//! error naming what needs Python and what to install.
//!
//! Bits (`0`/`1`) are one-byte terminals in thicket's trees; the input a tree stands
//! for packs them into bytes as Fandango does ([`LoadedSpec::input_bytes`], [`bits`]).
//! Repetition counts computed from other fields (`<byte>{f(<len>)}`) are made to hold
//! by the solver ([`counts`]).
//!
//! What is read but not generated yet is refused by [`LoadedSpec::generable`] with the
//! reason: protocol specs (parties; Fandango's `talk`).

#![warn(missing_docs)]

pub mod bits;
pub mod counts;
pub mod stream;

pub use bits::{
    BitLayout, LooseBits, NotUnpackable, PackedBits, UnpackedGrammar, Unpacker, unpacked_grammar,
};
pub use counts::ComputedCounts;
pub use stream::{
    BitPacked, InputStream, Made, PackMiss, SpecProducer, SpecSolver, Stop, StreamConfig,
};

use std::sync::{Arc, OnceLock};
use thicket_constraint::host::{Host, HostArg, HostError, HostExpr, SharedHost};
use thicket_constraint::{Constraint, Predicates, SoftGoal, SpecConstraint};
use thicket_gen::{GenConfig, GenError, Generator};
use thicket_grammar::fandango::{ConstraintKind, FanBlock};
use thicket_grammar::{Diagnostic, Expr, Grammar, Spec, SpecError, SymbolId};
use thicket_python::{CodeBlock, PyValue, PythonConfig, PythonHost};
use thicket_solve::sources::{SourceCall, SubtreeSource};
use thicket_solve::{SolveError, SolveStats, Solver, SolverConfig, TreeFixup, Unsolved};
use thicket_tree::DerivationTree;

/// How to compile a spec.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The interpreter and its limits, for specs that need Python.
    pub python: PythonConfig,
    /// Leave the `where` constraints and goals out (they are not about the inputs at
    /// hand, e.g. with another start rule).
    pub without_constraints: bool,
    /// Compile only: do not start Python even if the spec needs it (its Python parts
    /// then fail when first evaluated). For reading a spec without running it (lint).
    pub no_python: bool,
}

/// A spec with everything it says, compiled.
pub struct LoadedSpec {
    /// The grammar and where it was read from.
    pub spec: Spec,
    /// Its `where` constraints, with their dialect and what runs in Python.
    pub constraints: Vec<SpecConstraint>,
    /// Its `minimizing` / `maximizing` goals, in order (the first one ranks first).
    pub goals: Vec<SoftGoal>,
    /// Fandango's `:=` generators, as a source of subtrees for the solver.
    pub generators: Option<Arc<PythonGenerators>>,
    /// Repetition counts computed from other fields of the input, for the solver.
    pub counts: Option<Arc<ComputedCounts>>,
    /// Which terminals are bits, if any.
    pub bits: Option<BitLayout>,
    host: Arc<LazyHost>,
}

/// What a solver takes from a spec besides its constraints: the subtrees of its
/// generated rules, and the counts of its computed repetitions.
#[derive(Clone, Default)]
pub struct SolverParts {
    /// Fandango's `:=` generators.
    pub generators: Option<Arc<PythonGenerators>>,
    /// Repetition counts computed from the input.
    pub counts: Option<Arc<ComputedCounts>>,
}

impl SolverParts {
    /// Whether there is anything: a spec without either needs a solver only for its
    /// constraints or goals.
    pub fn is_empty(&self) -> bool {
        self.generators.is_none() && self.counts.is_none()
    }
}

impl LoadedSpec {
    /// The compiled constraints, for a checker or a solver.
    pub fn core_constraints(&self) -> Vec<Constraint> {
        self.constraints
            .iter()
            .map(|c| c.constraint.clone())
            .collect()
    }

    /// The Python interpreter, if the spec needed one and it has started.
    pub fn python(&self) -> Option<&PythonHost> {
        self.host
            .started
            .get()
            .and_then(|r| r.as_ref().ok())
            .map(|h| h.as_ref())
    }

    /// What a solver over this spec takes besides the constraints.
    pub fn solver_parts(&self) -> SolverParts {
        SolverParts {
            generators: self.generators.clone(),
            counts: self.counts.clone(),
        }
    }

    /// The input `tree` stands for: its text, or with bits, the bytes they pack into
    /// (as Fandango writes it); an error where bits do not fill whole bytes.
    pub fn input_bytes<'t>(
        &self,
        tree: &'t DerivationTree,
    ) -> Result<std::borrow::Cow<'t, [u8]>, LooseBits> {
        match &self.bits {
            None => Ok(std::borrow::Cow::Borrowed(tree.bytes())),
            Some(layout) => layout
                .pack(tree, &self.spec.grammar)
                .map(std::borrow::Cow::Owned),
        }
    }

    /// Whether inputs can be generated from the spec; otherwise why not. Parsing and
    /// checking work for every spec that loads.
    pub fn generable(&self) -> Result<(), String> {
        let parts = &self.spec.fandango;
        if parts.is_protocol() {
            return Err(format!(
                "{} is a protocol spec (parties {}): it is read, and its messages parse and \
                 check, but running it against a live client or server (Fandango's `talk`) \
                 is not supported yet",
                self.spec.source.name(),
                parts.parties.join(", ")
            ));
        }
        Ok(())
    }

    /// Of candidate trees that all satisfy the constraints, the index of the best by
    /// the goals: the first goal decides, later ones break ties (Fandango sums its
    /// goals' fitness with the constraints'; with every candidate valid, only the goals
    /// are left to compare). `None` if there are no candidates.
    pub fn best(&self, candidates: &[DerivationTree]) -> Option<usize> {
        let scores: Vec<Vec<f64>> = candidates.iter().map(|t| self.score(t)).collect();
        (0..candidates.len()).min_by(|&a, &b| compare(&scores[a], &scores[b]))
    }

    /// One valid tree from `solver` (built over this spec): with goals, the best of
    /// [`GOAL_CANDIDATES`] solutions drawn in turn from `rng`, else the first.
    pub fn solve<R: rand::Rng + ?Sized>(
        &self,
        solver: &Solver<'_>,
        rng: &mut R,
    ) -> Result<(DerivationTree, SolveStats), Unsolved> {
        if self.goals.is_empty() {
            return solver.solve(rng);
        }
        let mut best: Option<(Vec<f64>, (DerivationTree, SolveStats))> = None;
        for _ in 0..GOAL_CANDIDATES {
            let candidate = solver.solve(rng)?;
            let score = self.score(&candidate.0);
            if best
                .as_ref()
                .is_none_or(|(b, _)| compare(&score, b).is_lt())
            {
                best = Some((score, candidate));
            }
        }
        Ok(best.expect("at least one candidate").1)
    }

    /// A tree's goal values, each as a number to minimise, first goal first.
    fn score(&self, tree: &DerivationTree) -> Vec<f64> {
        self.goals
            .iter()
            .map(|g| {
                let v = g.fitness(tree, &self.spec.grammar);
                if g.minimize { v } else { -v }
            })
            .collect()
    }

    /// A compiler of Fandango constraints over this spec, told its Python code.
    fn compiler(&self, host: Option<SharedHost>) -> thicket_constraint::fandango::Compiler<'_> {
        thicket_constraint::fandango::Compiler::new(&self.spec.grammar, host)
            .with_bits(&self.spec.fandango.bit_terminals)
            .with_spec_python(self.spec.fandango.python.iter().map(|b| b.text()))
    }

    /// One more constraint, from the command line (`-c TEXT`) or a file, reported under
    /// `name`: in Fandango's language, or ISLa's where Fandango's cannot read it (the
    /// rule of a spec's `where` blocks); Python parts run on the spec's interpreter.
    pub fn extra_constraint(&self, name: &str, text: &str) -> Result<SpecConstraint, SpecError> {
        let source = Arc::new(thicket_grammar::SourceFile::new(name, text));
        let span = thicket_grammar::Span::new(0, text.len());
        match thicket_constraint::fandango::dialect(text, span) {
            thicket_constraint::Dialect::Fandango => {
                let shared: SharedHost = self.host.clone();
                let c = self.compiler(Some(shared)).constraint(source, span)?;
                if !c.host_exprs.is_empty() {
                    self.host.get().map_err(|e| SpecError {
                        source: c.constraint.source.clone(),
                        diagnostics: vec![Diagnostic::error("python", e.message, span)],
                    })?;
                }
                Ok(SpecConstraint {
                    constraint: c.constraint,
                    dialect: thicket_constraint::Dialect::Fandango,
                    host_exprs: c.host_exprs,
                    warnings: c.warnings,
                })
            }
            thicket_constraint::Dialect::Isla => Ok(SpecConstraint {
                constraint: thicket_constraint::from_text(
                    &self.spec.grammar,
                    &Predicates::standard(),
                    name,
                    text,
                )?,
                dialect: thicket_constraint::Dialect::Isla,
                host_exprs: Vec::new(),
                warnings: Vec::new(),
            }),
        }
    }

    /// Adds a goal from the command line (Fandango's `--minimize EXPR` / `--maximize
    /// EXPR`), reported under `name`, after the spec's own: it ranks candidates only
    /// where they tie on those. `text` is the expression, or a whole `minimizing ...` /
    /// `maximizing ...` goal, whose keyword then wins over `minimize`.
    pub fn add_goal(&mut self, name: &str, text: &str, minimize: bool) -> Result<(), SpecError> {
        let source = Arc::new(thicket_grammar::SourceFile::new(name, text));
        let span = thicket_grammar::Span::new(0, text.len());
        let shared: SharedHost = self.host.clone();
        let goal = self
            .compiler(Some(shared))
            .goal(source.clone(), span, Some(minimize))?;
        if !goal.native {
            self.host.get().map_err(|e| SpecError {
                source,
                diagnostics: vec![Diagnostic::error("python", e.message, span)],
            })?;
        }
        self.goals.push(goal);
        Ok(())
    }

    /// Whether evaluating the spec calls Python: a constraint or goal that is not
    /// native, or a generator.
    pub fn needs_python(&self) -> bool {
        self.generators.as_ref().is_some_and(|g| g.call_python())
            || self.counts.is_some()
            || self.constraints.iter().any(|c| !c.host_exprs.is_empty())
            || self.goals.iter().any(|g| !g.native)
    }

    /// What `thicket lint` says about the spec's Fandango parts, a line each: what is
    /// read but not generated yet, which constraints run natively and which call Python
    /// (and why), and whether the spec's Python runs at all.
    pub fn notes(&self) -> Vec<String> {
        let fan = &self.spec.fandango;
        let mut notes = Vec::new();
        if let Err(why) = self.generable() {
            notes.push(why);
        }
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let python = self
            .constraints
            .iter()
            .filter(|c| !c.host_exprs.is_empty())
            .count();
        let goals_python = self.goals.iter().filter(|g| !g.native).count();
        if !self.constraints.is_empty() || !self.goals.is_empty() {
            notes.push(format!(
                "{} solved natively, {} calling Python; {}",
                count(self.constraints.len() - python, "constraint"),
                python,
                count(self.goals.len(), "goal")
                    + &if goals_python > 0 {
                        format!(" ({goals_python} in Python)")
                    } else {
                        String::new()
                    }
            ));
        }
        for c in &self.constraints {
            for host in &c.host_exprs {
                notes.push(format!(
                    "{}: in Python: {}",
                    c.constraint.location(),
                    host.reason
                ));
            }
        }
        if self.needs_python() || !fan.python.is_empty() {
            let mut parts = Vec::new();
            if !fan.python.is_empty() {
                parts.push(count(fan.python.len(), "Python block"));
            }
            if !fan.generators.is_empty() {
                parts.push(count(fan.generators.len(), "generator"));
            }
            notes.push(format!(
                "{}: {}",
                if self.needs_python() {
                    "runs in Python (python3 on PATH, or $THICKET_PYTHON)"
                } else {
                    "its Python is never called"
                },
                if parts.is_empty() {
                    "the constraints above".to_string()
                } else {
                    parts.join(", ")
                }
            ));
        }
        notes
    }
}

/// Valid candidates drawn per input of a spec with `minimizing` / `maximizing` goals
/// ([`LoadedSpec::solve`]). Fandango ranks its whole population by the goals; ranking a
/// few candidates per input keeps inputs independent of each other (any subset can be
/// made in parallel) while moving them towards the goal.
pub const GOAL_CANDIDATES: usize = 8;

/// Why no generator can be built for a spec under some limits.
#[derive(Debug)]
pub enum GeneratorRefusal {
    /// Errors in the spec the generator trips over (a start rule that can never finish,
    /// a regex that matches nothing), located as `lint` locates them; `also` is the
    /// generator's own sentence when it adds to them.
    Spec {
        /// The spec's errors.
        errors: SpecError,
        /// The generator's refusal, naming the spec, if the errors do not say it all.
        also: Option<String>,
    },
    /// The limits are too small for the grammar, or a refusal the spec's errors do not
    /// explain: a sentence naming the spec.
    Limits(String),
}

/// The generator of `spec` under `config`, or why there is none: the spec's errors
/// where they explain the refusal, so that every front end shows them where they are.
pub fn generator(spec: &Spec, config: GenConfig) -> Result<Generator<'_>, GeneratorRefusal> {
    Generator::new(&spec.grammar, config).map_err(|e| {
        let message = format!("{}: {e}", spec.source.name());
        if matches!(e, GenError::DepthTooSmall { .. }) {
            return GeneratorRefusal::Limits(message);
        }
        let analysis = thicket_grammar::Analysis::new(&spec.grammar);
        let diagnostics: Vec<_> = thicket_grammar::lint(&spec.grammar, &analysis)
            .into_iter()
            .filter(|d| d.is_error())
            .collect();
        if diagnostics.is_empty() {
            return GeneratorRefusal::Limits(message);
        }
        GeneratorRefusal::Spec {
            errors: SpecError {
                source: spec.source.clone(),
                diagnostics,
            },
            // An unproductive rule is what the errors already say.
            also: (!matches!(e, GenError::Unproductive(_))).then_some(message),
        }
    })
}

/// The k-path production's finish step under a spec's constraints: tree `n` of the
/// production of `seed` repaired into a valid one (a fresh solution where the repairs
/// cannot save it), from a random stream of its own; without a solver, the tree as it
/// is. A tree whose bit fields do not fill whole bytes stands for no input (see
/// [`LoadedSpec::input_bytes`]) and is dropped, so that its paths are steered to again.
/// `thicket generate --strategy kpath` and the Python module share it, so that both
/// give the same inputs.
pub fn kpath_finish(
    spec: &LoadedSpec,
    solver: Option<&Solver<'_>>,
    seed: u64,
    tree: DerivationTree,
    n: u64,
) -> Option<DerivationTree> {
    let tree = match solver {
        None => tree,
        Some(solver) => {
            let mut rng = Generator::rng_for(seed ^ 0x5eed_501e, n);
            solver.make_valid(tree, &mut rng).ok()?.0
        }
    };
    spec.input_bytes(&tree).is_ok().then_some(tree)
}

/// Random streams a run may draw under a solver to make `n` inputs: a stream whose
/// constraints the solver cannot satisfy is skipped and the next one drawn, and this
/// keeps constraints that are unsatisfiable in practice from drawing forever.
pub fn solver_draw_budget(n: u64) -> u64 {
    n.saturating_mul(4).max(n.saturating_add(64))
}

/// The solver for `constraints` with the limits `config`, taking the subtrees of the
/// generated rules from `parts`' generators and making its computed counts hold; `None`
/// if there is nothing to solve (no constraints, nothing in `parts`, and no goals to
/// rank solutions by: `goals` false).
pub fn solver<'g>(
    grammar: &'g Grammar,
    constraints: Vec<Constraint>,
    config: SolverConfig,
    parts: SolverParts,
    goals: bool,
) -> Result<Option<Solver<'g>>, SolveError> {
    if constraints.is_empty() && parts.is_empty() && !goals {
        return Ok(None);
    }
    let mut solver = Solver::new(grammar, constraints, config)?;
    if let Some(g) = parts.generators {
        solver = solver.with_source(g);
    }
    if let Some(counts) = parts.counts {
        let fixup: Arc<dyn TreeFixup> = counts;
        solver = solver.with_fixup(fixup);
    }
    Ok(Some(solver))
}

/// Orders goal scores: the first goal decides, later ones break ties.
fn compare(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.total_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Compiles `spec`: its constraints and goals, and its Python where needed. Errors
/// are spec errors at the constraint, generator or code block they concern.
pub fn compile(mut spec: Spec, options: &Options) -> Result<LoadedSpec, SpecError> {
    // The generators' arguments, each rule given a reference to root its fresh
    // subtrees at (before anything compiles against the grammar).
    let mut generator_exprs = Vec::new();
    let mut generator_params = Vec::new();
    let mut generator_constants = Vec::new();
    for g in &spec.fandango.generators {
        generator_constants.push(thicket_constraint::fandango::generator_constant(
            g.block.source.text(),
            g.block.span,
        ));
        let (expr, names) =
            thicket_constraint::fandango::generator_expr(g.block.source.text(), g.block.span);
        let mut params = Vec::new();
        for name in names {
            let Some(symbol) = spec.grammar.symbol(&name) else {
                return Err(SpecError {
                    source: g.block.source.clone(),
                    diagnostics: vec![Diagnostic::error(
                        "undefined-rule",
                        format!("the generator takes <{name}>, which no rule defines"),
                        g.block.span,
                    )],
                });
            };
            params.push(symbol);
        }
        for &symbol in &params {
            spec.grammar.add_reference(symbol);
        }
        generator_exprs.push(expr);
        generator_params.push(params);
    }
    let blocks: Vec<CodeBlock> = spec.fandango.python.iter().map(code_block).collect();
    let mut config = options.python.clone();
    config.needed_for = format!("the Python of {}", spec.source.name());
    let bits = BitLayout::new(&spec.grammar, &spec.fandango.bit_terminals);
    if let Some(layout) = &bits {
        // Python sees a bit as Fandango's `0`/`1` value, not as a character.
        config.terminal_kinds = (0..spec.grammar.expr_count())
            .map(|i| {
                if layout.is_bit(thicket_grammar::ExprId::from_index(i)) {
                    thicket_python::TerminalKind::Bit
                } else {
                    thicket_python::TerminalKind::Auto
                }
            })
            .collect();
    }
    let host = Arc::new(LazyHost {
        blocks,
        config,
        started: OnceLock::new(),
    });
    if !options.no_python {
        constant_repeat_bounds(&mut spec, &host)?;
    }
    let counts = ComputedCounts::new(&spec.grammar, &spec.fandango.computed_repeats, host.clone())?
        .map(Arc::new);
    let parts = &spec.fandango;
    let shared: SharedHost = host.clone();
    let (constraints, goals) = if options.without_constraints {
        (Vec::new(), Vec::new())
    } else {
        let constraints = thicket_constraint::spec_constraints(
            &spec,
            &Predicates::standard(),
            Some(shared.clone()),
        )?;
        let goal_blocks: Vec<_> = parts
            .constraints
            .iter()
            .filter(|c| c.kind != ConstraintKind::Where)
            .collect();
        let goals = if goal_blocks.is_empty() {
            Vec::new()
        } else {
            let compiler = thicket_constraint::fandango::Compiler::new(&spec.grammar, Some(shared))
                .with_bits(&parts.bit_terminals)
                .with_spec_python(parts.python.iter().map(|b| b.text()));
            goal_blocks
                .iter()
                .map(|c| {
                    let minimize = c.kind == ConstraintKind::Minimizing;
                    compiler.goal(c.block.source.clone(), c.block.span, Some(minimize))
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        (constraints, goals)
    };
    let generator_rules_of_bits = parts
        .generators
        .iter()
        .map(|g| {
            bits.as_ref()
                .is_some_and(|layout| layout.derives_only_bits(&spec.grammar, g.rule))
        })
        .collect();
    let generators = (!parts.generators.is_empty()).then(|| {
        Arc::new(PythonGenerators {
            host: host.clone(),
            rules: parts.generators.iter().map(|g| g.rule).collect(),
            exprs: generator_exprs,
            params: generator_params,
            constants: generator_constants,
            bit_valued: generator_rules_of_bits,
        })
    });
    let loaded = LoadedSpec {
        spec,
        constraints,
        goals,
        generators,
        counts,
        bits,
        host,
    };
    if loaded.needs_python()
        && !options.no_python
        && let Err(message) = loaded.host.get()
    {
        let parts = &loaded.spec.fandango;
        let at = parts
            .generators
            .first()
            .map(|g| g.block.clone())
            .or_else(|| parts.python.first().cloned());
        let (source, span) = match at {
            Some(b) => (b.source, b.span),
            None => (loaded.spec.source.clone(), thicket_grammar::Span::new(0, 0)),
        };
        return Err(SpecError {
            source,
            diagnostics: vec![Diagnostic::error("python", message.message, span)],
        });
    }
    Ok(loaded)
}

/// Computes the repetition bounds that name no nonterminal (`<byte>{SIZE * 3}`) in the
/// spec's Python once, and writes them into the grammar: such a repetition is then an
/// ordinary one. Bounds that depend on the input (`<byte>{f(<len>)}`) stay computed.
fn constant_repeat_bounds(spec: &mut Spec, host: &LazyHost) -> Result<(), SpecError> {
    let computed = std::mem::take(&mut spec.fandango.computed_repeats);
    let mut left = Vec::new();
    for repeat in computed {
        let &Expr::Repeat(written) = spec.grammar.expr(repeat.expr) else {
            left.push(repeat);
            continue;
        };
        // Each computed bound's Python source, if it names no nonterminal.
        let source = |b: &FanBlock| {
            let (expr, names) =
                thicket_constraint::fandango::generator_expr(b.source.text(), b.span);
            names.is_empty().then_some(expr.source)
        };
        let (min_source, max_source) = (
            repeat.min.as_ref().map(source),
            repeat.max.as_ref().map(source),
        );
        if matches!(min_source, Some(None)) || matches!(max_source, Some(None)) {
            left.push(repeat);
            continue;
        }
        let min = match (&repeat.min, min_source.flatten()) {
            (Some(block), Some(source)) => constant_count(block, &source, host)?,
            _ => written.min,
        };
        let max = match (&repeat.max, max_source.flatten()) {
            (Some(block), Some(source)) => Some(constant_count(block, &source, host)?),
            _ => written.max,
        };
        spec.grammar
            .set_repeat_bounds(repeat.expr, min, max.map(|m| m.max(min)));
    }
    spec.fandango.computed_repeats = left;
    Ok(())
}

/// The value of the constant repetition bound written at `block` (its Python `source`),
/// computed in the spec's Python.
fn constant_count(block: &FanBlock, source: &str, host: &LazyHost) -> Result<u32, SpecError> {
    let fail = |message: String| SpecError {
        source: block.source.clone(),
        diagnostics: vec![Diagnostic::error("python", message, block.span)],
    };
    let host = host.get().map_err(|e| fail(e.message))?;
    match host.eval_constant(source).map_err(|e| fail(e.message))? {
        PyValue::Int(n) if (0..=i128::from(u32::MAX)).contains(&n) => Ok(n as u32),
        other => Err(fail(format!(
            "a repetition count must be an integer from 0 to {}, not {other:?}",
            u32::MAX
        ))),
    }
}

/// A code block as the interpreter runs it: its later lines without the indentation
/// its first line has in the file.
fn code_block(block: &FanBlock) -> CodeBlock {
    let indent = block.indent();
    let text: String = block
        .text()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let line = if i == 0 {
                line
            } else {
                let cut = line
                    .char_indices()
                    .take_while(|(j, c)| *j < indent && c.is_whitespace())
                    .count();
                &line[cut..]
            };
            format!("{line}\n")
        })
        .collect();
    CodeBlock::new(block.source.name(), block.line_col().line as u32, text)
}

/// The spec's Python interpreter, started on first use.
struct LazyHost {
    blocks: Vec<CodeBlock>,
    config: PythonConfig,
    started: OnceLock<Result<Arc<PythonHost>, String>>,
}

impl LazyHost {
    fn get(&self) -> Result<&Arc<PythonHost>, HostError> {
        self.started
            .get_or_init(|| {
                PythonHost::new(self.blocks.clone(), self.config.clone())
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| HostError {
                message: message.clone(),
            })
    }
}

impl Host for LazyHost {
    fn eval_bool(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<bool, HostError> {
        self.get()?.eval_bool(expr, tree, grammar, args)
    }

    fn eval_number(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<f64, HostError> {
        self.get()?.eval_number(expr, tree, grammar, args)
    }

    fn eval_text(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<Vec<u8>, HostError> {
        self.get()?.eval_text(expr, tree, grammar, args)
    }

    fn eval_bool_then_text(
        &self,
        expr: &HostExpr,
        value: &HostExpr,
        joint: Option<&thicket_constraint::host::Joint>,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> thicket_constraint::host::Judged {
        match self.get() {
            Ok(host) => host.eval_bool_then_text(expr, value, joint, tree, grammar, args),
            Err(e) => (Err(e), None),
        }
    }
}

/// Fandango's `:=` generators: the subtrees of their rules are the parses of what
/// their Python expressions return (`str`, `bytes`, an `int` as its decimal digits, a
/// tree as its text).
pub struct PythonGenerators {
    host: Arc<LazyHost>,
    rules: Vec<SymbolId>,
    exprs: Vec<HostExpr>,
    /// Per generator, the rules of its arguments (`:= f(<x>)`), in parameter order.
    params: Vec<Vec<SymbolId>>,
    /// Per generator, its value if its expression is a literal (`:= "'100'"`): given
    /// without asking Python, which such specs then never start.
    constants: Vec<Option<Vec<u8>>>,
    /// Per generator, whether its rule is made of bits alone: a `bytes` value is then
    /// read bit by bit, first bit most significant, as Fandango's parser reads bytes
    /// against bits (`<byte>+ := s.encode()`). A `str` value is read as text, whose
    /// `0` and `1` characters are thicket's bits.
    bit_valued: Vec<bool>,
}

impl SubtreeSource for PythonGenerators {
    fn rules(&self) -> &[SymbolId] {
        &self.rules
    }

    fn params(&self, rule: SymbolId) -> &[SymbolId] {
        self.index(rule).map_or(&[], |i| &self.params[i])
    }

    fn text(&self, call: &SourceCall<'_>) -> Result<Vec<u8>, String> {
        self.texts(std::slice::from_ref(call))
            .pop()
            .unwrap_or_else(|| Err("the generator gave no value".into()))
    }

    fn texts(&self, calls: &[SourceCall<'_>]) -> Vec<Result<Vec<u8>, String>> {
        let mut texts: Vec<Option<Result<Vec<u8>, String>>> = calls
            .iter()
            .map(|call| self.constant(call.rule).map(|value| Ok(value.to_vec())))
            .collect();
        if texts.iter().all(Option::is_some) {
            return texts.into_iter().flatten().collect();
        }
        let host = match self.host.get() {
            Ok(host) => host,
            Err(e) => return vec![Err(e.message); calls.len()],
        };
        let mut asked = Vec::with_capacity(calls.len());
        let mut generator_calls = Vec::with_capacity(calls.len());
        for (k, call) in calls.iter().enumerate() {
            if texts[k].is_some() {
                continue;
            }
            match self.generator_call(call) {
                Ok(g) => {
                    asked.push(k);
                    generator_calls.push(g);
                }
                Err(e) => texts[k] = Some(Err(e)),
            }
        }
        for (k, value) in asked.into_iter().zip(host.generate_many(&generator_calls)) {
            let of_bits = self
                .index(calls[k].rule)
                .is_some_and(|i| self.bit_valued[i]);
            texts[k] = Some(value.map_err(|e| e.message).and_then(|value| match value {
                PyValue::Bytes(bytes) if of_bits => Ok(bits::unpack(&bytes)),
                value => value_text(value),
            }));
        }
        texts
            .into_iter()
            .map(|t| t.unwrap_or_else(|| Err("the generator gave no value".into())))
            .collect()
    }
}

impl PythonGenerators {
    /// Whether some generator's expression is more than a literal, so that Python runs.
    fn call_python(&self) -> bool {
        self.constants.iter().any(Option::is_none)
    }

    /// The index of `rule`'s generator.
    fn index(&self, rule: SymbolId) -> Option<usize> {
        self.rules.iter().position(|&r| r == rule)
    }

    /// The value of `rule`'s generator if its expression is a literal.
    fn constant(&self, rule: SymbolId) -> Option<&[u8]> {
        self.constants[self.index(rule)?].as_deref()
    }

    /// The host's call for a solver's call of a generated rule.
    fn generator_call<'c>(
        &'c self,
        call: &SourceCall<'c>,
    ) -> Result<thicket_python::GeneratorCall<'c>, String> {
        let i = self.index(call.rule).ok_or("not a generated rule")?;
        let sources = call
            .args
            .iter()
            .map(|tree| thicket_python::Source {
                tree,
                grammar: call.grammar,
                node: tree.root(),
            })
            .collect();
        // Python's `random` is reseeded per call from the host's seed and this number:
        // the solution's seed and the call's place in it.
        Ok(thicket_python::GeneratorCall {
            expr: &self.exprs[i],
            sources,
            call: call.seed.rotate_left(17) ^ call.call,
        })
    }
}

/// The text a generator's value stands for (Fandango parses a str, bytes, an int or a
/// tree into the rule).
fn value_text(value: PyValue) -> Result<Vec<u8>, String> {
    match value {
        PyValue::Str(s) => Ok(s.into_bytes()),
        PyValue::Bytes(b) | PyValue::Tree(b) => Ok(b),
        PyValue::Int(n) => Ok(n.to_string().into_bytes()),
        PyValue::Bool(b) => Ok(if b { "True" } else { "False" }.into()),
        PyValue::Float(f) => Ok(f.to_string().into_bytes()),
        PyValue::None => Err("the generator returned None".into()),
    }
}
