//! The producer of fresh inputs a spec's options give.

use std::borrow::Cow;
use std::time::Instant;
use thicket_antlr::AntlrProducer;
use thicket_antlr::generate::InputMaker;
use thicket_constraint::Constraint;
use thicket_fandango::{
    BitPacked, GeneratorRefusal, LoadedSpec, PackMiss, SpecProducer, SpecSolver,
};
use thicket_gen::prob::DEFAULT_WHITESPACE_PROBABILITY;
use thicket_gen::{Fresh, GenConfig, GenRng, GenStats, Generator, Producer, Weights};
use thicket_grammar::Grammar;
use thicket_solve::{SolveError, Solver, SolverConfig, Unsolved};
use thicket_tree::DerivationTree;

/// What the makers of a spec's inputs are built with.
#[derive(Clone, Debug)]
pub struct MakerOptions {
    /// The generator's limits (the solver's generation too).
    pub config: GenConfig,
    /// The constraints every input must satisfy (none: plain generation, unless the
    /// spec's `:=` generators or computed counts need the solver).
    pub constraints: Vec<Constraint>,
    /// Whether the spec's goals (`minimizing`, `maximizing`) rank the solver's
    /// solutions.
    pub goals: bool,
    /// Whether the inputs are an ANTLR grammar's (their text of negated sets and `.`
    /// is printable ASCII mostly).
    pub antlr: bool,
    /// When the solver stops: no tree is begun and no repair round run after it.
    pub deadline: Option<Instant>,
    /// The probability that a choice inside one of the spec's whitespace rules takes
    /// more than its smallest option (see [`Weights::quiet_whitespace`]); not for
    /// ANTLR grammars, whose hidden text the spec's own probability governs.
    pub whitespace_probability: f64,
}

impl Default for MakerOptions {
    fn default() -> Self {
        MakerOptions {
            config: GenConfig::default(),
            constraints: Vec::new(),
            goals: false,
            antlr: false,
            deadline: None,
            whitespace_probability: DEFAULT_WHITESPACE_PROBABILITY,
        }
    }
}

/// Why a spec's inputs cannot be made.
#[derive(Debug)]
pub enum BuildError {
    /// The spec holds what is read but not generated yet (the reason, a sentence).
    NotGenerable(String),
    /// The generator refuses the grammar or the limits.
    Generator(GeneratorRefusal),
    /// No solver can be built for the constraints (unsatisfiable, unsupported).
    Unsolvable(SolveError),
}

impl BuildError {
    /// What stops the spec's inputs, for people (invisible characters escaped), besides
    /// the spec's own errors when the generator refuses the spec (rendered where they
    /// are, from [`GeneratorRefusal::Spec`]); `None` when those say it all.
    pub fn message(&self) -> Option<String> {
        let escaped = |text: &str| thicket_grammar::diag::escape_invisible(text).into_owned();
        match self {
            BuildError::NotGenerable(why) => Some(why.clone()),
            BuildError::Generator(GeneratorRefusal::Limits(why)) => Some(escaped(why)),
            BuildError::Generator(GeneratorRefusal::Spec { also, .. }) => {
                also.as_deref().map(escaped)
            }
            BuildError::Unsolvable(e) => Some(escaped(&e.to_string())),
        }
    }
}

/// What makes the inputs of one spec under one set of options: its generator, its
/// solver when constraints, goals or `:=` generators are in force, and the weights
/// that steer plain generation.
pub struct Makers<'g> {
    /// The generator.
    pub generator: Generator<'g>,
    /// The solver, when there is something to solve.
    pub solver: Option<Solver<'g>>,
    /// Whether the spec's goals rank the solver's solutions.
    pub goals: bool,
    /// Weights of plain generation: a fuzzingbook grammar's `prob` options and the
    /// whitespace rules' weights by default (none for ANTLR grammars; under a solver
    /// the solver has them, for the trees it starts from); a driver may set learned
    /// ones.
    pub weights: Option<Weights>,
}

impl<'g> Makers<'g> {
    /// The makers of `loaded`'s inputs under `options`.
    pub fn new(loaded: &'g LoadedSpec, options: MakerOptions) -> Result<Makers<'g>, BuildError> {
        loaded.generable().map_err(BuildError::NotGenerable)?;
        let grammar = &loaded.spec.grammar;
        let mut generator = thicket_fandango::generator(&loaded.spec, options.config)
            .map_err(BuildError::Generator)?;
        if options.antlr {
            generator.set_printable_ascii_share(thicket_antlr::generate::PRINTABLE_PERCENT);
        }
        let goals = options.goals && !loaded.goals.is_empty();
        let solver_config = SolverConfig {
            generation: options.config,
            ..Default::default()
        };
        let weights = (!options.antlr)
            .then(|| generation_weights(&generator, &options))
            .flatten();
        let solver = thicket_fandango::solver(
            grammar,
            options.constraints,
            solver_config,
            loaded.solver_parts(),
            goals,
        )
        .map_err(BuildError::Unsolvable)?
        .map(|solver| {
            solver
                .with_deadline(options.deadline)
                .with_start_weights(weights.clone())
        });
        let weights = weights.filter(|_| solver.is_none());
        Ok(Makers {
            generator,
            solver,
            goals,
            weights,
        })
    }

    /// The producer of `loaded`'s inputs (the spec these makers were built for): an
    /// ANTLR grammar's through its `antlr` input maker; with bit fields, the trees'
    /// bits packed into bytes; else the solver's, the weighted or the plain generator's.
    pub fn producer<'a>(
        &'a self,
        loaded: &'a LoadedSpec,
        antlr: Option<&'a InputMaker<'a>>,
    ) -> InputProducer<'a, 'g> {
        if let Some(maker) = antlr {
            return InputProducer::Antlr(Box::new(AntlrProducer::new(&self.generator, maker)));
        }
        let solver = self.solver.as_ref().map(|solver| SpecSolver {
            solver,
            goals: self.goals.then_some(loaded),
        });
        let producer = SpecProducer::choose(&self.generator, solver, self.weights.as_ref());
        if loaded.bits.is_some() {
            InputProducer::Packed(BitPacked {
                inner: producer,
                spec: loaded,
            })
        } else {
            InputProducer::Spec(producer)
        }
    }
}

/// The weights generation draws a spec's inputs by: the probabilities the spec gives,
/// and its whitespace rules' (taking more than their minimum with the options'
/// probability); `None` where both leave every choice uniform.
fn generation_weights(generator: &Generator<'_>, options: &MakerOptions) -> Option<Weights> {
    let grammar = generator.grammar();
    let given = Weights::from_spec(grammar);
    let separators = thicket_grammar::tokens::separator_rules(grammar);
    if separators.is_empty() {
        return given;
    }
    let mut weights = given.unwrap_or_else(|| Weights::uniform(grammar));
    weights.quiet_whitespace(
        grammar,
        generator.analysis(),
        &separators,
        options.whitespace_probability,
        options.config.max_repetitions,
    );
    Some(weights)
}

/// The producer [`Makers::producer`] chooses.
pub enum InputProducer<'a, 'g> {
    /// An ANTLR grammar's inputs: separated where its lexer would merge tokens and
    /// accepted by its exact reading.
    Antlr(Box<AntlrProducer<'a>>),
    /// A spec with bit fields: each input is its tree's bits packed into bytes.
    Packed(BitPacked<'a, SpecProducer<'a, 'g>>),
    /// The solver's, the weighted or the plain generator's inputs: the trees' text.
    Spec(SpecProducer<'a, 'g>),
}

impl InputProducer<'_, '_> {
    /// Whether each input is its tree's text (not for ANTLR inputs, respelled after
    /// generation, nor for packed bits), so that its k-paths are its tree's.
    pub fn inputs_are_text(&self) -> bool {
        matches!(self, InputProducer::Spec(_))
    }

    /// Whether streams may give no input (the solver's may).
    pub fn solving(&self) -> bool {
        match self {
            InputProducer::Antlr(_) => false,
            InputProducer::Packed(p) => p.inner.solving(),
            InputProducer::Spec(p) => p.solving(),
        }
    }
}

impl Producer for InputProducer<'_, '_> {
    type Miss = PackMiss<Unsolved>;

    fn grammar(&self) -> &Grammar {
        match self {
            InputProducer::Antlr(p) => p.grammar(),
            InputProducer::Packed(p) => p.grammar(),
            InputProducer::Spec(p) => p.grammar(),
        }
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        match self {
            InputProducer::Antlr(p) => p.tree(rng).map_err(|never| match never {}),
            InputProducer::Packed(p) => p.tree(rng),
            InputProducer::Spec(p) => p.tree(rng).map_err(PackMiss::Inner),
        }
    }

    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Self::Miss> {
        match self {
            InputProducer::Antlr(p) => p.bytes(rng, out).map_err(|never| match never {}),
            InputProducer::Packed(p) => p.bytes(rng, out),
            InputProducer::Spec(p) => p.bytes(rng, out).map_err(PackMiss::Inner),
        }
    }

    fn input<'t>(&self, tree: &'t DerivationTree) -> Result<Cow<'t, [u8]>, Self::Miss> {
        match self {
            InputProducer::Antlr(p) => p.input(tree).map_err(|never| match never {}),
            InputProducer::Packed(p) => p.input(tree),
            InputProducer::Spec(p) => p.input(tree).map_err(PackMiss::Inner),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::Producer;

    fn compiled(text: &str) -> LoadedSpec {
        let spec = thicket_grammar::load_spec_bytes(
            "t.fan",
            text.as_bytes(),
            &thicket_grammar::LoadOptions::default(),
        )
        .unwrap();
        let options = thicket_fandango::Options {
            no_python: true,
            ..Default::default()
        };
        thicket_fandango::compile(spec, &options).unwrap()
    }

    /// The blanks among the bytes of 300 inputs of `loaded`, and the bytes.
    fn blanks(loaded: &LoadedSpec, options: MakerOptions) -> (usize, usize) {
        let makers = Makers::new(loaded, options).unwrap();
        let producer = makers.producer(loaded, None);
        let (mut blanks, mut bytes) = (0, 0);
        for i in 0..300 {
            let fresh = producer.tree(&mut Generator::rng_for(1, i)).unwrap();
            bytes += fresh.tree.bytes().len();
            blanks += fresh.tree.bytes().iter().filter(|&&b| b == b' ').count();
        }
        (blanks, bytes)
    }

    #[test]
    fn whitespace_rules_are_quiet_with_and_without_constraints() {
        let loaded = compiled(
            "<start> ::= <ws> <pair> (<nl> <pair>)* <ws>\n\
             <pair> ::= <d>+ <ws> \"=\" <ws> <d>+\n<d> ::= \"1\" | \"2\"\n\
             <ws> ::= \" \"*\n<nl> ::= \"\\n\" <ws>\n",
        );
        let constraint = loaded
            .extra_constraint("c", "str(<d>) != \"3\"")
            .unwrap()
            .constraint;
        for constraints in [Vec::new(), vec![constraint]] {
            let with = |whitespace_probability| MakerOptions {
                constraints: constraints.clone(),
                whitespace_probability,
                ..Default::default()
            };
            let (none, _) = blanks(&loaded, with(0.0));
            let (quiet, bytes) = blanks(&loaded, with(DEFAULT_WHITESPACE_PROBABILITY));
            let (loud, _) = blanks(&loaded, with(1.0));
            assert_eq!(none, 0, "the minimum: no blank");
            assert!(
                quiet > 0 && quiet * 10 < bytes,
                "{quiet} blanks in {bytes} bytes"
            );
            assert!(loud > 4 * quiet, "{loud} against {quiet}");
        }
    }

    #[test]
    fn constraints_choose_the_solver_and_its_inputs_satisfy_them() {
        let loaded = compiled("<start> ::= <d> <d>\n<d> ::= \"1\" | \"2\"\n");
        let constraint = loaded
            .extra_constraint("c", "str(<start>) == \"21\"")
            .unwrap()
            .constraint;
        let options = MakerOptions {
            constraints: vec![constraint],
            ..Default::default()
        };
        let makers = Makers::new(&loaded, options).unwrap();
        let producer = makers.producer(&loaded, None);
        assert!(producer.solving() && producer.inputs_are_text());
        for i in 0..5 {
            let fresh = producer.tree(&mut Generator::rng_for(1, i)).unwrap();
            assert_eq!(fresh.tree.bytes(), b"21");
        }
    }

    #[test]
    fn bit_fields_are_packed_into_bytes() {
        let loaded = compiled("<start> ::= <bit>{8}\n<bit> ::= 0 | 1\n");
        let makers = Makers::new(&loaded, MakerOptions::default()).unwrap();
        let producer = makers.producer(&loaded, None);
        assert!(!producer.inputs_are_text());
        let mut out = Vec::new();
        producer
            .bytes(&mut Generator::rng_for(3, 0), &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
    }
}
