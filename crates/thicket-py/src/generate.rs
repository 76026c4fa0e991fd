//! Making inputs for Python: the generator and solver a spec's limits give, and the
//! stream of inputs `thicket generate --seed S` writes (input `i` from the random
//! stream `(S, i)`; under constraints, streams the solver cannot satisfy are skipped).

use crate::tree::{Tree, TreeData};
use crate::{AntlrCell, GenerateError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use thicket_driver::{BuildError as DriverError, MakerOptions};
use thicket_fandango::{GeneratorRefusal, InputStream, LoadedSpec, Made, Stop, StreamConfig};
use thicket_gen::{ChoicePolicy, GenConfig, Generator};
use thicket_solve::Solver;
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
        self.config_or(|| thicket_gen::DEFAULT_TARGET_SIZE)
    }

    /// The configuration with `target_size()` as the default size target (an ANTLR
    /// grammar's own, `thicket_antlr::generate::target_size`), asked only where none is
    /// given: an ANTLR grammar's draws samples.
    pub fn config_or(self, target_size: impl FnOnce() -> u32) -> GenConfig {
        let default = GenConfig::default();
        GenConfig {
            max_depth: self.max_depth.unwrap_or(default.max_depth),
            max_repetitions: self.max_repetitions.unwrap_or(default.max_repetitions),
            policy: ChoicePolicy::for_target_size(self.target_size.unwrap_or_else(target_size)),
            ..default
        }
    }
}

/// `hidden_probability`, checked: a probability, as `--hidden-probability` takes.
pub fn check_hidden_probability(p: Option<f64>) -> PyResult<Option<f64>> {
    match p {
        Some(p) if !(0.0..=1.0).contains(&p) => Err(pyo3::exceptions::PyValueError::new_err(
            format!("hidden_probability {p}: a probability between 0 and 1"),
        )),
        p => Ok(p),
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

/// What makes inputs of one spec under one set of limits: `thicket generate`'s makers
/// (see [`thicket_driver::Makers`]), and an ANTLR grammar's input maker.
pub struct Makers<'g> {
    makers: thicket_driver::Makers<'g>,
    /// An ANTLR grammar's input maker: plain inputs are drawn by it.
    antlr: Option<Arc<AntlrCell>>,
}

self_cell::self_cell!(
    /// A spec and its makers, which borrow its grammar.
    pub struct Engine {
        owner: Arc<LoadedSpec>,
        #[not_covariant]
        dependent: Makers,
    }
);

impl Engine {
    /// The makers `thicket generate` builds for `loaded` with `config`; `constraints`
    /// false ignores the constraints and goals (`--no-constraints`);
    /// `whitespace_probability` is `--hidden-probability` (an ANTLR grammar's maker
    /// carries it too, and draws its inputs by it).
    pub fn build(
        loaded: Arc<LoadedSpec>,
        config: GenConfig,
        constraints: bool,
        antlr: Option<Arc<AntlrCell>>,
        whitespace_probability: f64,
    ) -> Result<Engine, BuildError> {
        Engine::try_new(loaded, |loaded| {
            let options = MakerOptions {
                config,
                constraints: if constraints {
                    loaded.core_constraints()
                } else {
                    Vec::new()
                },
                goals: constraints,
                antlr: antlr.is_some(),
                whitespace_probability,
                ..MakerOptions::default()
            };
            let makers = thicket_driver::Makers::new(loaded, options).map_err(|e| match e {
                DriverError::NotGenerable(why) => BuildError::Refused(why),
                DriverError::Generator(GeneratorRefusal::Limits(why)) => BuildError::Refused(why),
                DriverError::Generator(GeneratorRefusal::Spec { errors, .. }) => {
                    BuildError::Spec(errors)
                }
                DriverError::Unsolvable(e) => BuildError::Refused(e.to_string()),
            })?;
            Ok(Makers { makers, antlr })
        })
    }

    /// Runs `f` with the spec, its generator and (under constraints) its solver: for
    /// makers of inputs other than a seed's stream.
    pub fn with_makers<T>(
        &self,
        f: impl FnOnce(&LoadedSpec, &Generator<'_>, Option<&Solver<'_>>) -> T,
    ) -> T {
        self.with_dependent(|loaded, makers| {
            let makers = &makers.makers;
            f(loaded, &makers.generator, makers.solver.as_ref())
        })
    }

    fn solving(&self) -> bool {
        self.with_dependent(|_, makers| makers.makers.solver.is_some())
    }

    /// The next inputs of `stream` (see [`InputStream::next_batch`]); the solver's
    /// come with their trees.
    fn next_batch(&self, stream: &mut InputStream, streams: u64) -> Vec<Made> {
        self.with_dependent(|loaded, makers| match &makers.antlr {
            Some(antlr) => antlr.with_dependent(|_, maker| {
                stream.next_batch(&makers.makers.producer(loaded, Some(maker)), streams)
            }),
            None => stream.next_batch(&makers.makers.producer(loaded, None), streams),
        })
    }

    /// The tree of plain input `index` of `seed`: generated again from its stream
    /// (byte and tree generation make the same choices).
    fn regenerate(&self, seed: u64, index: u64) -> TreeData {
        self.with_dependent(|loaded, makers| {
            let grammar = &loaded.spec.grammar;
            if let Some(antlr) = &makers.antlr {
                // Drawn again; its separated text parsed by the byte grammar (whose
                // first derivation is the one `thicket generate --format json` shows).
                let generator = &makers.makers.generator;
                let drawn = antlr.with_dependent(|_, maker| maker.input(generator, seed, index));
                let parsed = thicket_parse::Parser::new(grammar, Default::default())
                    .ok()
                    .and_then(|parser| parser.parse(&drawn.bytes).ok().map(|r| r.tree()));
                return TreeData::new(parsed.as_ref().unwrap_or(&drawn.tree), grammar);
            }
            let mut rng = Generator::rng_for(seed, index);
            // The solver's inputs keep their trees; plain ones are made again.
            let makers = &makers.makers;
            let tree = match &makers.weights {
                Some(weights) => makers.generator.generate_tree_weighted(&mut rng, weights).0,
                None => makers.generator.generate_tree(&mut rng).0,
            };
            TreeData::new(&tree, &loaded.spec.grammar)
        })
    }
}

/// The inputs of one seed, made a batch at a time by the stream `thicket generate`
/// drives ([`InputStream`]), so that they are its inputs.
pub struct Stream {
    engine: Arc<Engine>,
    state: InputStream,
}

impl Stream {
    pub fn new(engine: Arc<Engine>, seed: u64, count: Option<u64>) -> Stream {
        let config = StreamConfig {
            // The solver's trees are kept: making them again would mean solving again.
            trees: engine.solving(),
            ..StreamConfig::new(seed, count)
        };
        Stream {
            engine,
            state: InputStream::new(config),
        }
    }

    /// The next inputs (at most `size`), `None` when the count is reached; raises
    /// `GenerateError` when the constraints cannot be satisfied within the draw budget
    /// ([`thicket_fandango::Stop::Budget`]), and `KeyboardInterrupt` (between batches)
    /// on Ctrl-C.
    pub fn next_batch(&mut self, py: Python<'_>, size: u64) -> PyResult<Option<Vec<Input>>> {
        loop {
            match self.state.stopped() {
                Some(Stop::Budget) => {
                    let asked = self
                        .state
                        .config()
                        .count
                        .map_or(String::new(), |count| format!(" of {count}"));
                    let (misses, first) = self.state.misses();
                    return Err(GenerateError::new_err(format!(
                        "only {}{asked} inputs satisfy the constraints within the solver's budget \
                         ({misses} of {} random streams gave none: {})",
                        self.state.made(),
                        self.state.drawn(),
                        first.unwrap_or("no solution")
                    )));
                }
                Some(_) => return Ok(None),
                None => {}
            }
            py.check_signals()?;
            let (engine, state) = (&self.engine, &mut self.state);
            let made = py.detach(|| engine.next_batch(state, size));
            let seed = self.state.config().seed;
            let out: Vec<Input> = made
                .into_iter()
                .map(|made| Input::new(made, &self.engine, seed))
                .collect();
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
    /// An input made as a tree other than from a seed's stream (by k-path production):
    /// `index` is its place among the call's inputs.
    pub fn from_tree(tree: DerivationTree, engine: &Arc<Engine>, seed: u64, index: u64) -> Input {
        // With bit fields, the tree's bits packed into bytes (a k-path tree is kept
        // only if they fill whole bytes).
        let bytes = engine
            .borrow_owner()
            .input_bytes(&tree)
            .map_or_else(|_| tree.bytes().to_vec(), |input| input.into_owned());
        let made = Made {
            index,
            bytes,
            tree: Some(tree),
            stats: Default::default(),
        };
        Input::new(made, engine, seed)
    }

    /// The input's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

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
