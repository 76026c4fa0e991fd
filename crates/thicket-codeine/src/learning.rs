//! A model learned from a set of inputs as `thicket learn-coverage` learns it: each
//! input's paths (every derivation's if its forest is small, else the parser's tree's:
//! [`crate::features`]) as its features, one tree per location of the coverage matrix
//! (of the kinds asked for), and, with the program at hand, one location's tree
//! refined by running inputs aimed at it ([`Refiner`]).

use crate::{
    CoverageMatrix, FeatureTable, LearnConfig, Model, RefineConfig, Refined, Refiner, Round,
    RunError, TrainingSet, grammar_fingerprint,
};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use thicket_cover::{KPath, KPathGraph};
use thicket_exec::Judge;
use thicket_gen::{ChoicePolicy, GenConfig, Generator};
use thicket_grammar::Grammar;
use thicket_parse::Parser;

/// The inputs a model learns from, with their features.
pub struct Inputs {
    /// Each input's bytes.
    pub texts: Vec<Vec<u8>>,
    /// Each input's l-paths as [`crate::input_paths`] reads them (`None`: the grammar
    /// rejects it).
    pub paths: Vec<Option<FxHashSet<KPath>>>,
}

impl Inputs {
    /// The inputs `texts` with their paths read by `paths_of` (`None` for an input the
    /// grammar rejects), in parallel in the current thread pool.
    pub fn read(
        texts: Vec<Vec<u8>>,
        paths_of: impl Fn(&[u8]) -> Option<FxHashSet<KPath>> + Sync,
    ) -> Inputs {
        let paths = texts.par_iter().map(|text| paths_of(text)).collect();
        Inputs { texts, paths }
    }

    /// Inputs the grammar rejects.
    pub fn rejected(&self) -> usize {
        self.paths.iter().filter(|p| p.is_none()).count()
    }
}

/// One location's tree refined with the program (see [`Refiner`]).
pub struct Focus<'a, 'g> {
    /// The location: its full name, or the end of a name the matrix holds.
    pub location: &'a str,
    /// Runs the program.
    pub judge: &'a mut Judge,
    /// Reads each aimed input's paths (a parser of the grammar learned on).
    pub parser: &'a Parser<'g>,
    /// The loop's goal and budget; its `learn` is replaced by the model's.
    pub config: RefineConfig,
}

/// What [`learn`] reports while it works.
pub enum LearnEvent<'a> {
    /// Refinement of `location` starts, `covering` of the `inputs` covering it.
    FocusStarts {
        /// The location's full name.
        location: &'a str,
        /// Inputs that cover it.
        covering: u32,
        /// Inputs in all.
        inputs: usize,
    },
    /// A refinement round ended.
    Round(&'a Round),
}

/// Why no model was learned.
#[derive(Debug)]
pub enum LearnError {
    /// The grammar rejects every input: nothing to learn from.
    AllRejected,
    /// The focus location is not in the matrix (the reason).
    UnknownFocus(String),
    /// The grammar's generator refuses it (the reason).
    Generator(String),
    /// The program could not be run.
    Run(RunError),
}

impl std::fmt::Display for LearnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LearnError::AllRejected => f.write_str(
                "all inputs are rejected by the grammar (the model learns from inputs the \
                 grammar accepts)",
            ),
            LearnError::UnknownFocus(why) | LearnError::Generator(why) => f.write_str(why),
            LearnError::Run(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LearnError {}

/// A learned model, and what refining its focus location did.
pub struct Learned {
    /// The model (with the refined tree of the focus location, if one was learned).
    pub model: Model,
    /// The locations of the matrix of the kinds kept.
    pub locations: usize,
    /// How long learning the trees took (before any refinement).
    pub learning_time: std::time::Duration,
    /// The focus location's full name and its refinement.
    pub refined: Option<(String, Refined)>,
}

/// What a model is learned from.
pub struct Learning<'a> {
    /// The grammar learned on.
    pub grammar: &'a Grammar,
    /// The spec's path, recorded in the model.
    pub spec: String,
    /// The inputs and their features.
    pub inputs: Inputs,
    /// Their coverage, rows in the same order.
    pub matrix: CoverageMatrix,
    /// Which of the matrix's locations get a tree.
    pub keep: &'a dyn Fn(&str) -> bool,
    /// How the trees are learned.
    pub config: LearnConfig,
    /// The threads the trees are learned in (`None`: the current rayon pool's).
    pub pool: Option<&'a rayon::ThreadPool>,
}

impl Learning<'_> {
    /// Learns a model, then refines `focus`'s location with the program, if given.
    pub fn run(
        self,
        focus: Option<Focus<'_, '_>>,
        events: &mut dyn FnMut(LearnEvent<'_>),
    ) -> Result<Learned, LearnError> {
        let Learning {
            grammar,
            spec,
            inputs,
            mut matrix,
            keep,
            config,
            pool,
        } = self;
        if inputs.paths.iter().all(Option::is_none) {
            return Err(LearnError::AllRejected);
        }
        // The focus location's name and which inputs cover it, before other kinds are
        // dropped.
        let focus = focus
            .map(|focus| {
                let (name, column) = matrix
                    .find_location(focus.location)
                    .map_err(LearnError::UnknownFocus)?;
                Ok((focus, name, matrix.covering(column)))
            })
            .transpose()?;
        matrix.retain_locations(keep);
        let table = FeatureTable::from_path_sets(&inputs.paths);
        let started = std::time::Instant::now();
        let fingerprint = grammar_fingerprint(grammar);
        let learn = || Model::learn(&table, &matrix, spec, fingerprint, config);
        let mut model = match pool {
            Some(pool) => pool.install(learn),
            None => learn(),
        };
        let learning_time = started.elapsed();
        let Some((focus, name, covered)) = focus else {
            return Ok(Learned {
                model,
                locations: matrix.locations.len(),
                learning_time,
                refined: None,
            });
        };
        let training = TrainingSet {
            texts: inputs.texts,
            paths: inputs.paths,
            covered,
        };
        let generator = Generator::new(grammar, GenConfig::default())
            .map_err(|e| LearnError::Generator(e.to_string()))?;
        let aim_generator = Generator::new(
            grammar,
            GenConfig {
                policy: ChoicePolicy::Uniform,
                ..Default::default()
            },
        )
        .map_err(|e| LearnError::Generator(e.to_string()))?;
        let graph = KPathGraph::new(grammar);
        let refiner = Refiner {
            generator: &generator,
            aim_generator: &aim_generator,
            parser: focus.parser,
            graph: &graph,
            k: config.k,
        };
        let refine_config = RefineConfig {
            max_k: focus.config.max_k.max(config.k),
            learn: config,
            ..focus.config
        };
        events(LearnEvent::FocusStarts {
            location: &name,
            covering: training.positives(),
            inputs: training.paths.len(),
        });
        let refined = refiner
            .refine(focus.judge, &name, training, refine_config, &mut |round| {
                events(LearnEvent::Round(round))
            })
            .map_err(LearnError::Run)?;
        if let Some((location, features)) = &refined.location {
            model.k = model.k.max(refined.k);
            model.adopt(location.clone(), features);
        }
        Ok(Learned {
            model,
            locations: matrix.locations.len(),
            learning_time,
            refined: Some((name, refined)),
        })
    }
}

/// How well a model's predictions match the coverage a program showed, over every
/// (input, trained location) pair of the inputs the grammar accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Share of pairs predicted right.
    pub accuracy: f64,
    /// Share of pairs predicted covered that were (1 when none were predicted).
    pub precision: f64,
    /// Share of covered pairs predicted covered (1 when none were covered).
    pub recall: f64,
    /// True positives, false positives, true negatives, false negatives.
    pub confusion: [u64; 4],
}

/// Scores `predicted` (per input, the indices of the model's locations predicted
/// covered; `None` for an input the grammar rejects, left out) against `truth`, the
/// coverage of the same inputs in the same order.
pub fn score(model: &Model, truth: &CoverageMatrix, predicted: &[Option<Vec<usize>>]) -> Scores {
    let column: rustc_hash::FxHashMap<&str, u32> = truth
        .locations
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i as u32))
        .collect();
    let (mut tp, mut fp, mut tn, mut fn_) = (0u64, 0u64, 0u64, 0u64);
    for (row, p) in truth.covered.iter().zip(predicted) {
        let Some(p) = p else { continue };
        for (i, l) in model.locations.iter().enumerate() {
            let actual = column
                .get(l.name.as_str())
                .is_some_and(|c| row.binary_search(c).is_ok());
            match (p.contains(&i), actual) {
                (true, true) => tp += 1,
                (true, false) => fp += 1,
                (false, false) => tn += 1,
                (false, true) => fn_ += 1,
            }
        }
    }
    let ratio = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    Scores {
        accuracy: ratio(tp + tn, tp + tn + fp + fn_),
        precision: ratio(tp, tp + fp),
        recall: ratio(tp, tp + fn_),
        confusion: [tp, fp, tn, fn_],
    }
}
