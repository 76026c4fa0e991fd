//! Making inputs for Python: the generator and solver a spec's limits give, and the
//! stream of inputs `thicket generate --seed S` writes (input `i` from the random
//! stream `(S, i)`; under constraints, streams the solver cannot satisfy are skipped).

use crate::GenerateError;
use crate::tree::{Tree, TreeData};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use thicket_fandango::{GeneratorRefusal, LoadedSpec};
use thicket_gen::{ChoicePolicy, GenConfig, Generator, Weights};
use thicket_solve::{Solver, SolverConfig};
use thicket_tree::DerivationTree;

/// Inputs made per call of `Spec.generate`'s loop (in parallel, with the GIL released);
/// the inputs never depend on it.
pub const BATCH: u64 = 2048;

/// Inputs made at a time by an iterator: small, so the first ones come soon.
const ITER_BATCH: u64 = 64;

/// The limits a call gives; `None` is `thicket generate`'s default.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_depth: Option<u32>,
    pub max_repetitions: Option<u32>,
    pub target_size: Option<u32>,
}

impl Limits {
    /// The generator configuration: `thicket generate`'s for the same flags.
    pub fn config(self) -> GenConfig {
        let default = GenConfig::default();
        GenConfig {
            max_depth: self.max_depth.unwrap_or(default.max_depth),
            max_repetitions: self.max_repetitions.unwrap_or(default.max_repetitions),
            policy: match self.target_size {
                None => default.policy,
                Some(0) => ChoicePolicy::Uniform,
                Some(bytes) => ChoicePolicy::Sized { bytes },
            },
            ..default
        }
    }
}

/// Why no inputs can be made.
pub enum BuildError {
    /// Errors in the spec the generator trips over (an unproductive start rule).
    Spec(thicket_grammar::SpecError),
    /// Anything else, said in a sentence.
    Refused(String),
}

impl BuildError {
    pub fn into_py_err(self, py: Python<'_>) -> PyErr {
        match self {
            BuildError::Spec(e) => crate::spec_error(py, &e),
            BuildError::Refused(why) => GenerateError::new_err(why),
        }
    }
}

/// What makes inputs of one spec under one set of limits.
pub struct Makers<'g> {
    generator: Generator<'g>,
    /// Present when constraints, goals or `:=` generators are in force.
    solver: Option<Solver<'g>>,
    /// A fuzzingbook grammar's `prob` options, for plain generation.
    weights: Option<Weights>,
}

self_cell::self_cell!(
    /// A spec and its makers, which borrow its grammar.
    pub struct Engine {
        owner: Arc<LoadedSpec>,
        #[not_covariant]
        dependent: Makers,
    }
);

/// One input made, before Python sees it.
struct Made {
    index: u64,
    bytes: Vec<u8>,
    /// The tree, when the maker built one anyway (the solver does).
    tree: Option<DerivationTree>,
}

impl Engine {
    /// The makers `thicket generate` builds for `loaded` with `config`; `constraints`
    /// false ignores the constraints and goals (`--no-constraints`).
    pub fn build(
        loaded: Arc<LoadedSpec>,
        config: GenConfig,
        constraints: bool,
    ) -> Result<Engine, BuildError> {
        loaded.generable().map_err(BuildError::Refused)?;
        Engine::try_new(loaded, |loaded| {
            let grammar = &loaded.spec.grammar;
            let generator =
                thicket_fandango::generator(&loaded.spec, config).map_err(|e| match e {
                    GeneratorRefusal::Limits(why) => BuildError::Refused(why),
                    GeneratorRefusal::Spec { errors, .. } => BuildError::Spec(errors),
                })?;
            let core = if constraints {
                loaded.core_constraints()
            } else {
                Vec::new()
            };
            let goals = constraints && !loaded.goals.is_empty();
            let solver_config = SolverConfig {
                generation: config,
                ..Default::default()
            };
            let solver = thicket_fandango::solver(
                grammar,
                core,
                solver_config,
                loaded.solver_parts(),
                goals,
            )
            .map_err(|e| BuildError::Refused(e.to_string()))?;
            let weights = Weights::from_spec(grammar).filter(|_| solver.is_none());
            Ok(Makers {
                generator,
                solver,
                weights,
            })
        })
    }

    fn solving(&self) -> bool {
        self.with_dependent(|_, makers| makers.solver.is_some())
    }

    /// Input `index` of `seed`, or why the solver found none in that stream.
    fn make(&self, seed: u64, index: u64) -> Result<Made, String> {
        self.with_dependent(|loaded, makers| {
            let mut rng = Generator::rng_for(seed, index);
            if let Some(solver) = &makers.solver {
                let (tree, _) = loaded
                    .solve(solver, &mut rng)
                    .map_err(|unsolved| unsolved.to_string())?;
                return Ok(Made {
                    index,
                    bytes: tree.bytes().to_vec(),
                    tree: Some(tree),
                });
            }
            let mut bytes = Vec::new();
            match &makers.weights {
                Some(weights) => makers
                    .generator
                    .generate_bytes_weighted(&mut rng, &mut bytes, weights),
                None => makers.generator.generate_bytes(&mut rng, &mut bytes),
            };
            Ok(Made {
                index,
                bytes,
                tree: None,
            })
        })
    }

    /// The tree of plain input `index` of `seed`: generated again from its stream
    /// (byte and tree generation make the same choices).
    fn regenerate(&self, seed: u64, index: u64) -> TreeData {
        self.with_dependent(|loaded, makers| {
            let mut rng = Generator::rng_for(seed, index);
            let tree = match &makers.weights {
                Some(weights) => makers.generator.generate_tree_weighted(&mut rng, weights).0,
                None => makers.generator.generate_tree(&mut rng).0,
            };
            TreeData::new(&tree, &loaded.spec.grammar)
        })
    }
}

/// The inputs of one seed, made a batch at a time.
pub struct Stream {
    engine: Arc<Engine>,
    seed: u64,
    /// How many inputs to make; `None`: without end.
    count: Option<u64>,
    /// Random streams used (input `i` of the seed is stream `i`).
    drawn: u64,
    /// Inputs made.
    written: u64,
    /// Streams without a solution, and the first one's reason.
    unsolved: u64,
    first_unsolved: Option<String>,
}

impl Stream {
    pub fn new(engine: Arc<Engine>, seed: u64, count: Option<u64>) -> Stream {
        Stream {
            engine,
            seed,
            count,
            drawn: 0,
            written: 0,
            unsolved: 0,
            first_unsolved: None,
        }
    }

    /// Whether the solver has failed on too many streams to go on: as in `thicket
    /// generate`, at most four draws per input asked for (and 64 more); without a
    /// count, three failures per input made (and 64 more).
    fn exhausted(&self) -> bool {
        match self.count {
            Some(count) => self.drawn >= thicket_fandango::solver_draw_budget(count),
            None => self.unsolved > self.written.saturating_mul(3).saturating_add(64),
        }
    }

    /// The next inputs (at most `size`), `None` when the count is reached; raises
    /// `GenerateError` when the constraints cannot be satisfied, and
    /// `KeyboardInterrupt` (between batches) on Ctrl-C.
    pub fn next_batch(&mut self, py: Python<'_>, size: u64) -> PyResult<Option<Vec<Input>>> {
        loop {
            let wanted = match self.count {
                Some(count) if self.written >= count => return Ok(None),
                Some(count) => (count - self.written).min(size),
                None => size,
            };
            py.check_signals()?;
            if self.engine.solving() && self.exhausted() {
                let asked = self
                    .count
                    .map_or(String::new(), |count| format!(" of {count}"));
                return Err(GenerateError::new_err(format!(
                    "only {}{asked} inputs satisfy the constraints within the solver's budget \
                     ({} of {} random streams gave none: {})",
                    self.written,
                    self.unsolved,
                    self.drawn,
                    self.first_unsolved.as_deref().unwrap_or("no solution")
                )));
            }
            let (engine, seed, from) = (self.engine.clone(), self.seed, self.drawn);
            let made: Vec<Result<Made, String>> = py.detach(|| {
                (from..from + wanted)
                    .into_par_iter()
                    .map(|index| engine.make(seed, index))
                    .collect()
            });
            self.drawn += wanted;
            let mut out = Vec::new();
            for item in made {
                match item {
                    Ok(made) => out.push(Input::new(made, &self.engine, seed)),
                    Err(why) => {
                        self.unsolved += 1;
                        self.first_unsolved.get_or_insert(why);
                    }
                }
            }
            self.written += out.len() as u64;
            if !out.is_empty() {
                return Ok(Some(out));
            }
        }
    }
}

/// One generated input (see the stub).
#[pyclass(frozen, module = "thicket")]
pub struct Input {
    bytes: Vec<u8>,
    seed: u64,
    index: u64,
    /// The solver's tree, if it made one.
    made_tree: Option<DerivationTree>,
    engine: Arc<Engine>,
    tree: OnceLock<Arc<TreeData>>,
}

impl Input {
    fn new(made: Made, engine: &Arc<Engine>, seed: u64) -> Input {
        Input {
            bytes: made.bytes,
            seed,
            index: made.index,
            made_tree: made.tree,
            engine: engine.clone(),
            tree: OnceLock::new(),
        }
    }
}

#[pymethods]
impl Input {
    /// The input decoded as UTF-8 (`UnicodeDecodeError` otherwise).
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyBytes::new(py, &self.bytes).call_method1("decode", ("utf-8",))
    }

    /// The seed the input was made from.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The input's random stream: `thicket generate --seed SEED` makes it from the
    /// same stream.
    #[getter]
    fn index(&self) -> u64 {
        self.index
    }

    /// The input's derivation tree.
    #[getter]
    fn tree(&self, py: Python<'_>) -> Tree {
        let data = self.tree.get_or_init(|| {
            py.detach(|| {
                Arc::new(match &self.made_tree {
                    Some(tree) => TreeData::new(tree, &self.engine.borrow_owner().spec.grammar),
                    None => self.engine.regenerate(self.seed, self.index),
                })
            })
        });
        Tree::root(data.clone())
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }

    fn __len__(&self) -> usize {
        self.bytes.len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(other) = other.cast::<Input>() {
            return other.get().bytes == self.bytes;
        }
        if let Ok(other) = other.cast::<PyBytes>() {
            return other.as_bytes() == self.bytes.as_slice();
        }
        false
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.bytes.hash(&mut hasher);
        hasher.finish()
    }

    fn __repr__(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let shown: String = text.chars().take(60).collect();
        let more = if text.chars().count() > 60 { "..." } else { "" };
        format!("<thicket.Input {shown:?}{more}>")
    }
}

/// Inputs made as they are asked for (see the stub).
#[pyclass(frozen, module = "thicket")]
pub struct InputIter {
    stream: Mutex<Stream>,
    ready: Mutex<VecDeque<Input>>,
}

impl InputIter {
    pub fn new(stream: Stream) -> InputIter {
        InputIter {
            stream: Mutex::new(stream),
            ready: Mutex::new(VecDeque::new()),
        }
    }
}

#[pymethods]
impl InputIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Input>> {
        let busy = || PyRuntimeError::new_err("this iterator is being advanced in another thread");
        // Never wait for a lock while holding the GIL: the holder may need it back.
        let mut ready = self.ready.try_lock().map_err(|_| busy())?;
        if let Some(input) = ready.pop_front() {
            return Ok(Some(input));
        }
        let mut stream = self.stream.try_lock().map_err(|_| busy())?;
        match stream.next_batch(py, ITER_BATCH)? {
            Some(batch) => {
                ready.extend(batch);
                Ok(ready.pop_front())
            }
            None => Ok(None),
        }
    }
}
