//! thicket as a Python module (`import thicket`): its one job is to translate between
//! Python and the library crates. Specs load through `thicket-grammar` and compile
//! through `thicket-fandango` (as every CLI command loads them), inputs come from
//! `thicket-gen` or, under constraints, from `thicket-solve` via
//! [`thicket_fandango::LoadedSpec::solve`], parsing is `thicket-parse` and checking
//! `thicket-constraint`'s explaining checker. Input `i` of seed `s` is the same as
//! `thicket generate --seed s` writes. Work that takes time runs with the GIL released.
//!
//! The Python-facing documentation is the type stub `python/thicket/__init__.pyi`; the
//! package `python/thicket` re-exports this module and adds its pure-Python parts.

mod choices;
mod fuzz;
mod generate;
mod kpath;
mod tree;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use thicket_antlr::generate::InputMaker;
use thicket_driver::InputReader;
use thicket_fandango::LoadedSpec;
use thicket_grammar::{LoadOptions, SpecError as RustSpecError};
use thicket_parse::{ParseConfig, ParseError as RustParseError};

create_exception!(
    thicket,
    SpecError,
    PyException,
    "A spec (or a constraint) that cannot be loaded: `file`, `line`, `column` and \
     `message` of its first error, `diagnostics` for all of them, and `str()` the \
     rendering `thicket` prints."
);
create_exception!(
    thicket,
    ParseError,
    PyException,
    "An input outside the spec's language: `offset`, `line`, `column`, `expected` and \
     `found` say where and what the parser wanted."
);
create_exception!(
    thicket,
    GenerateError,
    PyException,
    "Inputs cannot be made: the generator refuses the limits, or the constraints are \
     unsatisfiable (or not satisfied within the solver's budget)."
);

create_exception!(
    thicket,
    TargetTimeout,
    pyo3::exceptions::PyBaseException,
    "Raised inside a target `thicket.fuzz` runs when a call outlives its `timeout` (a \
     `BaseException`, so that `except Exception` in the target does not swallow it)."
);

self_cell::self_cell!(
    /// An ANTLR grammar's exact reading and input maker, which borrow the grammar
    /// (shared between makers of different hidden-text probabilities).
    pub struct AntlrCell {
        owner: Arc<thicket_antlr::AntlrSpec>,
        #[not_covariant]
        dependent: InputMaker,
    }
);

/// What a spec's reader borrows: the spec, and for a spec with bit fields the grammar
/// over its inputs' bits.
struct ReaderParts {
    loaded: Arc<LoadedSpec>,
    unpacked: Option<thicket_fandango::UnpackedGrammar>,
}

self_cell::self_cell!(
    /// How a spec's inputs are read into its trees: as they are, or, for a spec with
    /// bit fields, one bit at a time (thicket-driver's reader, as `thicket parse` and
    /// `thicket check` read them).
    struct Reader {
        owner: ReaderParts,
        #[not_covariant]
        dependent: InputReader,
    }
);

/// Why a spec's inputs cannot be read.
#[derive(Clone)]
enum ReaderError {
    /// A terminal beside bit fields cannot be read bit by bit: an error in the spec.
    Spec(RustSpecError),
    /// The parser cannot be built.
    Parser(String),
}

impl Reader {
    /// The reader of `loaded`'s inputs.
    fn build(loaded: Arc<LoadedSpec>) -> Result<Reader, ReaderError> {
        let name = loaded.spec.source.name().to_string();
        let unpacked =
            thicket_fandango::unpacked_grammar(&loaded.spec).map_err(ReaderError::Spec)?;
        Reader::try_new(ReaderParts { loaded, unpacked }, |parts| {
            InputReader::new(
                &parts.loaded.spec.grammar,
                parts.unpacked.as_ref(),
                ParseConfig::default(),
            )
        })
        .map_err(|e| ReaderError::Parser(format!("{name}: {e}")))
    }

    /// The spec's tree of `input`, or why it is not in the language.
    fn tree(&self, input: &[u8]) -> Result<thicket_tree::DerivationTree, RustParseError> {
        self.with_dependent(|_, reader| reader.read(input))
    }

    /// The k-path coverage of `input`'s tree for paths up to `max_k` long.
    fn coverage(
        &self,
        graph: &thicket_cover::KPathGraph,
        input: &[u8],
        max_k: usize,
    ) -> Result<thicket_cover::Coverage, RustParseError> {
        self.with_dependent(|_, reader| reader.coverage(graph, input, max_k, false))
    }
}

/// A compiled spec: its grammar, constraints, goals and generators.
#[pyclass(frozen, module = "thicket")]
struct Spec {
    loaded: Arc<LoadedSpec>,
    /// Whether the spec's `where` constraints are about the inputs at hand (not when
    /// another start rule was chosen).
    constraints_apply: bool,
    /// Built when first needed: compiling the parser costs time parsing does not.
    reader: OnceLock<Result<Arc<Reader>, ReaderError>>,
    /// An ANTLR grammar's exact reading, which its inputs are generated for and
    /// checked by (as `thicket` does).
    antlr: Option<Arc<AntlrCell>>,
}

/// The names a spec text is reported under, by its format.
const FORMATS: [&str; 4] = ["fan", "bnf", "json", "g4"];

#[pymethods]
impl Spec {
    /// A spec from its text; `format` is "fan", "bnf", "json" or "g4".
    #[new]
    #[pyo3(signature = (text, format = "fan", *, start = None))]
    fn new(py: Python<'_>, text: &str, format: &str, start: Option<&str>) -> PyResult<Spec> {
        if !FORMATS.contains(&format) {
            return Err(PyValueError::new_err(format!(
                "format {format:?}: thicket reads \"fan\", \"bnf\", \"json\" and \"g4\" specs"
            )));
        }
        let name = format!("<text>.{format}");
        if format == "g4" {
            let files = [(name, text.as_bytes().to_vec())];
            let read = py.detach(|| thicket_antlr::load_g4_texts(&files, start.map(bare)));
            return Spec::compile_antlr(py, read, start);
        }
        let options = load_options(start);
        let loaded =
            py.detach(|| thicket_grammar::load_spec_bytes(&name, text.as_bytes(), &options));
        Spec::compile(py, loaded, start, None)
    }

    /// A spec from a file: `.fan`, `.bnf`, a `.json` grammar dictionary or an ANTLR
    /// `.g4` grammar (with its `lexer` grammar, or the `tokenVocab` one beside it).
    #[staticmethod]
    #[pyo3(signature = (path, *, start = None, lexer = None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        start: Option<&str>,
        lexer: Option<PathBuf>,
    ) -> PyResult<Spec> {
        let mut file = thicket_driver::SpecFile::new(path);
        file.start = start.map(str::to_string);
        file.lexer = lexer;
        let compiled = py.detach(|| file.compile(false)).map_err(|e| match e {
            thicket_driver::LoadError::Spec(e) => spec_error(py, &e),
            thicket_driver::LoadError::LexerWithoutAntlr => PyValueError::new_err(
                "lexer is the lexer grammar of an ANTLR parser grammar (.g4 specs)",
            ),
        })?;
        let antlr = compiled.antlr.map(|antlr| {
            Arc::new(py.detach(|| AntlrCell::new(Arc::new(antlr), |a| InputMaker::new(a))))
        });
        Ok(Spec {
            loaded: Arc::new(compiled.loaded),
            constraints_apply: file.constraints_apply(),
            reader: OnceLock::new(),
            antlr,
        })
    }

    /// The name the spec was read under (its path, or `<text>.fan`).
    #[getter]
    fn name(&self) -> String {
        self.loaded.spec.source.name().to_string()
    }

    /// The spec's constraints, as written.
    #[getter]
    fn constraints(&self) -> Vec<String> {
        if !self.constraints_apply {
            return Vec::new();
        }
        self.loaded
            .constraints
            .iter()
            .map(|c| c.constraint.text().to_string())
            .collect()
    }

    /// `n` inputs (see the stub for the arguments).
    #[pyo3(signature = (n = None, *, seed = None, strategy = "random", k = None,
                        max_depth = None, max_repetitions = None, target_size = None,
                        constraints = true, hidden_probability = None))]
    #[allow(clippy::too_many_arguments)]
    fn generate(
        &self,
        py: Python<'_>,
        n: Option<u64>,
        seed: Option<u64>,
        strategy: &str,
        k: Option<u8>,
        max_depth: Option<u32>,
        max_repetitions: Option<u32>,
        target_size: Option<u32>,
        constraints: bool,
        hidden_probability: Option<f64>,
    ) -> PyResult<Vec<generate::Input>> {
        let hidden = generate::check_hidden_probability(hidden_probability)?;
        let limits = generate::Limits {
            max_depth,
            max_repetitions,
            target_size,
        };
        let production = match strategy {
            "random" if k.is_some() => {
                return Err(PyValueError::new_err(
                    "k is the k-path length of strategy=\"kpath\" or \"kpath-random\"; \
                     random generation has none",
                ));
            }
            "random" => None,
            "kpath" => Some(kpath::Production::Cover),
            "kpath-random" | "kpath_random" => Some(kpath::Production::Stream),
            other => {
                return Err(PyValueError::new_err(format!(
                    "strategy {other:?}: thicket generates by \"random\", \"kpath\" or \
                     \"kpath-random\""
                )));
            }
        };
        if let Some(production) = production {
            if hidden.is_some() {
                return Err(PyValueError::new_err(
                    "hidden_probability steers random generation (strategy=\"random\"); \
                     k-path strategies choose by the paths left to cover",
                ));
            }
            let k = kpath::check_k(k.unwrap_or(2))?;
            let seed = seed.unwrap_or_else(thicket_gen::draw_seed);
            let engine = self.engine(py, limits, constraints, None)?;
            // `n` caps Algorithm 1 (which stops when the paths are covered) and counts
            // the stream's inputs.
            let limit = match (production, n) {
                (_, Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
                (kpath::Production::Cover, None) => usize::MAX,
                (kpath::Production::Stream, None) => 10,
            };
            return kpath::produce(py, &engine, production, k, seed, limit);
        }
        let n = n.unwrap_or(10);
        let mut stream = self.stream(py, Some(n), seed, limits, constraints, hidden)?;
        let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(0).min(1 << 20));
        while let Some(batch) = stream.next_batch(py, generate::BATCH)? {
            out.extend(batch);
        }
        Ok(out)
    }

    /// An iterator over inputs, made a batch at a time (`n=None`: without end).
    #[pyo3(signature = (n = None, *, seed = None, max_depth = None, max_repetitions = None,
                        target_size = None, constraints = true, hidden_probability = None))]
    #[allow(clippy::too_many_arguments)]
    fn generate_iter(
        &self,
        py: Python<'_>,
        n: Option<u64>,
        seed: Option<u64>,
        max_depth: Option<u32>,
        max_repetitions: Option<u32>,
        target_size: Option<u32>,
        constraints: bool,
        hidden_probability: Option<f64>,
    ) -> PyResult<generate::InputIter> {
        let hidden = generate::check_hidden_probability(hidden_probability)?;
        let limits = generate::Limits {
            max_depth,
            max_repetitions,
            target_size,
        };
        let stream = self.stream(py, n, seed, limits, constraints, hidden)?;
        Ok(generate::InputIter::new(stream))
    }

    /// A maker of inputs whose choices come from Python (see the stub).
    #[pyo3(signature = (*, max_depth = None, max_repetitions = None, target_size = None,
                        constraints = true))]
    fn choice_maker(
        &self,
        py: Python<'_>,
        max_depth: Option<u32>,
        max_repetitions: Option<u32>,
        target_size: Option<u32>,
        constraints: bool,
    ) -> PyResult<choices::ChoiceMaker> {
        let limits = generate::Limits {
            max_depth,
            max_repetitions,
            target_size,
        };
        let engine = self.engine(py, limits, constraints, None)?;
        Ok(choices::ChoiceMaker::new(engine))
    }

    /// The k-path coverage of `inputs` for k-paths up to `k` (see the stub).
    #[pyo3(signature = (inputs, k = 3))]
    fn cover(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>, k: u8) -> PyResult<kpath::Coverage> {
        let k = kpath::check_k(k)?;
        let inputs = inputs
            .try_iter()?
            .map(|item| input_bytes(&item?))
            .collect::<PyResult<Vec<_>>>()?;
        let reader = self.reader(py)?;
        kpath::cover(py, &self.loaded, &reader, inputs, k)
    }

    /// The derivation tree of `data` (bytes or str), or `ParseError`.
    fn parse(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<tree::Tree> {
        let bytes = input_bytes(data)?;
        let reader = self.reader(py)?;
        let grammar = &self.loaded.spec.grammar;
        let parsed = py.detach(|| {
            self.antlr_accepts(&bytes)?;
            reader
                .tree(&bytes)
                .map(|tree| tree::TreeData::new(&tree, grammar))
        });
        match parsed {
            Ok(data) => Ok(tree::Tree::root(Arc::new(data))),
            Err(e) => Err(parse_error(py, &e)),
        }
    }

    /// The constraints `data` violates (empty: valid); `ParseError` if it is not in
    /// the language.
    fn check(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<Violation>> {
        let bytes = input_bytes(data)?;
        let reader = self.reader(py)?;
        let constraints = if self.constraints_apply {
            self.loaded.core_constraints()
        } else {
            Vec::new()
        };
        let grammar = &self.loaded.spec.grammar;
        let checked = py.detach(|| {
            self.antlr_accepts(&bytes)?;
            let tree = reader.tree(&bytes)?;
            let checker = thicket_constraint::Checker::new(grammar, constraints);
            Ok::<_, RustParseError>(
                checker
                    .explain(&tree)
                    .iter()
                    .map(|v| {
                        let c = &checker.constraints()[v.constraint];
                        (
                            c.text().to_string(),
                            c.location(),
                            checker.render(v, &tree),
                            checker.to_json(v, &tree),
                        )
                    })
                    .collect::<Vec<_>>(),
            )
        });
        let violations = checked.map_err(|e| parse_error(py, &e))?;
        violations
            .into_iter()
            .map(|(constraint, location, message, json)| {
                Ok(Violation {
                    constraint,
                    location,
                    message,
                    steps: json_to_py(py, &json["steps"])?.unbind(),
                })
            })
            .collect()
    }

    /// Whether `data` is in the language and satisfies every constraint.
    fn is_valid(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        match self.check(py, data) {
            Ok(violations) => Ok(violations.is_empty()),
            Err(e) if e.is_instance_of::<ParseError>(py) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn __repr__(&self) -> String {
        format!("<thicket.Spec {:?}>", self.loaded.spec.source.name())
    }
}

impl Spec {
    /// Compiles a loaded spec as `thicket generate` does (its Python started when
    /// something needs it), or raises its errors.
    fn compile(
        py: Python<'_>,
        loaded: Result<thicket_grammar::Spec, RustSpecError>,
        start: Option<&str>,
        antlr: Option<Arc<AntlrCell>>,
    ) -> PyResult<Spec> {
        let spec = loaded.map_err(|e| spec_error(py, &e))?;
        let constraints_apply = start.is_none_or(|s| bare(s) == thicket_grammar::DEFAULT_START);
        let options = thicket_fandango::Options {
            without_constraints: !constraints_apply,
            ..Default::default()
        };
        let loaded = py
            .detach(|| thicket_fandango::compile(spec, &options))
            .map_err(|e| spec_error(py, &e))?;
        Ok(Spec {
            loaded: Arc::new(loaded),
            constraints_apply,
            reader: OnceLock::new(),
            antlr,
        })
    }

    /// Compiles a read ANTLR grammar: its byte grammar as any spec, its exact reading
    /// beside it.
    fn compile_antlr(
        py: Python<'_>,
        read: Result<thicket_antlr::AntlrSpec, RustSpecError>,
        start: Option<&str>,
    ) -> PyResult<Spec> {
        let antlr = read.map_err(|e| spec_error(py, &e))?;
        let spec = antlr.spec.clone();
        let cell = py.detach(|| AntlrCell::new(Arc::new(antlr), |a| InputMaker::new(a)));
        Spec::compile(py, Ok(spec), start, Some(Arc::new(cell)))
    }

    /// Whether the exact reading of an ANTLR grammar (if this is one) accepts `bytes`.
    fn antlr_accepts(&self, bytes: &[u8]) -> Result<(), RustParseError> {
        match &self.antlr {
            Some(antlr) => antlr
                .with_dependent(|_, maker| maker.checker().accepts(bytes))
                .map_err(|r| RustParseError::Rejected(Box::new(r))),
            None => Ok(()),
        }
    }

    /// The reader of the spec's inputs, built on first use.
    fn reader(&self, py: Python<'_>) -> PyResult<Arc<Reader>> {
        if self.reader.get().is_none() {
            // Built with the GIL released, and not inside `get_or_init`: another
            // thread waiting there would hold the GIL this one needs back.
            let built = py.detach(|| Reader::build(self.loaded.clone()).map(Arc::new));
            let _ = self.reader.set(built);
        }
        let built = self.reader.get().expect("set above");
        built.clone().map_err(|e| match e {
            ReaderError::Spec(errors) => spec_error(py, &errors),
            ReaderError::Parser(why) => ParseError::new_err(why),
        })
    }

    fn stream(
        &self,
        py: Python<'_>,
        count: Option<u64>,
        seed: Option<u64>,
        limits: generate::Limits,
        constraints: bool,
        hidden_probability: Option<f64>,
    ) -> PyResult<generate::Stream> {
        let engine = self.engine(py, limits, constraints, hidden_probability)?;
        Ok(generate::Stream::new(
            engine,
            seed.unwrap_or_else(thicket_gen::draw_seed),
            count,
        ))
    }

    /// The generator and solver `thicket generate` builds for these limits (and
    /// `--hidden-probability`, if given).
    fn engine(
        &self,
        py: Python<'_>,
        limits: generate::Limits,
        constraints: bool,
        hidden_probability: Option<f64>,
    ) -> PyResult<Arc<generate::Engine>> {
        let loaded = self.loaded.clone();
        let constraints = constraints && self.constraints_apply;
        let antlr = match (&self.antlr, hidden_probability) {
            (Some(cell), Some(p)) => {
                let spec = cell.borrow_owner().clone();
                Some(Arc::new(py.detach(|| {
                    AntlrCell::new(spec, |a| InputMaker::with_hidden_probability(a, p))
                })))
            }
            (cell, _) => cell.clone(),
        };
        // An ANTLR grammar's default size target is its own, sampled with the hidden
        // probability asked for, as in `thicket generate`.
        let config = match &antlr {
            Some(cell) => limits
                .config_or(|| py.detach(|| cell.with_dependent(|_, maker| maker.target_size()))),
            None => limits.config(),
        };
        let whitespace_probability =
            hidden_probability.unwrap_or(thicket_gen::prob::DEFAULT_WHITESPACE_PROBABILITY);
        py.detach(|| {
            generate::Engine::build(loaded, config, constraints, antlr, whitespace_probability)
        })
        .map(Arc::new)
        .map_err(|e| e.into_py_err(py))
    }
}

/// A violated constraint: its text, where the spec states it, the rendering
/// `thicket check` prints, and the explanation's steps (bindings with their text and
/// position in the input, and the deciding facts).
#[pyclass(frozen, module = "thicket", get_all)]
struct Violation {
    constraint: String,
    location: String,
    message: String,
    steps: Py<PyAny>,
}

#[pymethods]
impl Violation {
    fn __repr__(&self) -> String {
        format!(
            "<thicket.Violation {} at {}>",
            self.constraint.lines().next().unwrap_or(""),
            self.location
        )
    }

    fn __str__(&self) -> String {
        self.message.clone()
    }
}

/// A rule name without angle brackets.
fn bare(name: &str) -> &str {
    name.trim_start_matches('<').trim_end_matches('>')
}

fn load_options(start: Option<&str>) -> LoadOptions {
    LoadOptions {
        start: start
            .map_or(thicket_grammar::DEFAULT_START, bare)
            .to_string(),
        ..LoadOptions::default()
    }
}

/// The bytes of an input given as `bytes`, `bytearray` or `str` (UTF-8), or as an
/// object `bytes()` converts (a generated `Input`, a `Tree`).
fn input_bytes(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = data.cast::<PyString>() {
        return Ok(text.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(input) = data.cast::<generate::Input>() {
        return Ok(input.get().bytes().to_vec());
    }
    if data.hasattr("__bytes__")? {
        let bytes = data.call_method0("__bytes__")?;
        return Ok(bytes.cast::<PyBytes>()?.as_bytes().to_vec());
    }
    data.extract::<Vec<u8>>()
}

/// A JSON value as Python objects (through Python's own `json`, so that numbers and
/// strings convert exactly as `json.loads` would).
fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}

/// A spec's errors as `thicket.SpecError`: its text is what `thicket` prints, its
/// attributes locate the first error.
fn spec_error(py: Python<'_>, error: &RustSpecError) -> PyErr {
    let errors = error.diagnostics.iter().filter(|d| d.is_error()).count();
    let rendered = format!(
        "{}error: {} has {errors} error{}",
        error.render(),
        error.source.name(),
        if errors == 1 { "" } else { "s" }
    );
    let err = SpecError::new_err(rendered);
    let set = || -> PyResult<()> {
        let value = err.value(py);
        let first = error
            .diagnostics
            .iter()
            .find(|d| d.is_error())
            .or(error.diagnostics.first());
        let source = &error.source;
        // An unreadable file's diagnostic points at no text.
        let located = first.filter(|d| d.code != "io");
        let (file, line, column) = match located.and_then(|d| d.primary_span()) {
            Some(span) => {
                let at = source.line_col(span.start as usize);
                (
                    source.name_at(span.start as usize).to_string(),
                    Some(at.line),
                    Some(at.column),
                )
            }
            None => (source.name().to_string(), None, None),
        };
        value.setattr("file", file)?;
        value.setattr("line", line)?;
        value.setattr("column", column)?;
        value.setattr("message", first.map(|d| d.message.clone()))?;
        let diagnostics: Vec<serde_json::Value> = error
            .diagnostics
            .iter()
            .map(|d| d.to_json(source))
            .collect();
        value.setattr(
            "diagnostics",
            json_to_py(py, &serde_json::Value::Array(diagnostics))?,
        )?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A parser's refusal as `thicket.ParseError`, located in the input.
fn parse_error(py: Python<'_>, error: &RustParseError) -> PyErr {
    parse_error_titled(py, error, error.to_string())
}

/// [`parse_error`] with `message` as its text (naming which input it is about).
fn parse_error_titled(py: Python<'_>, error: &RustParseError, message: String) -> PyErr {
    let err = ParseError::new_err(message.clone());
    let set = || -> PyResult<()> {
        let value = err.value(py);
        value.setattr("message", message)?;
        match error {
            RustParseError::Rejected(r) => {
                value.setattr("offset", r.offset)?;
                value.setattr("line", r.line)?;
                value.setattr("column", r.column)?;
                value.setattr("expected", r.expected.clone())?;
                value.setattr("rules", r.rules.clone())?;
                value.setattr("found", r.found.map(|b| PyBytes::new(py, &[b])))?;
            }
            RustParseError::TooComplex { offset, .. }
            | RustParseError::OutOfMemory { offset, .. } => {
                value.setattr("offset", *offset)?;
                value.setattr("line", None::<usize>)?;
                value.setattr("column", None::<usize>)?;
                value.setattr("expected", Vec::<String>::new())?;
                value.setattr("rules", Vec::<String>::new())?;
                value.setattr("found", None::<Py<PyAny>>)?;
            }
        }
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Fuzzes `target`, a Python callable, in this interpreter (see the stub).
#[pyfunction]
#[pyo3(signature = (spec, target, *, execs = None, time = None, seed = None, expected = None,
                    timeout = 1.0, include = None, text = true, strategy = "coverage",
                    minimize = true, out = None, max_depth = None, max_repetitions = None,
                    target_size = None, constraints = true, valid_only = false,
                    havoc = None))]
#[pyo3(name = "fuzz")]
#[allow(clippy::too_many_arguments)]
fn fuzz_target(
    py: Python<'_>,
    spec: &Spec,
    target: &Bound<'_, PyAny>,
    execs: Option<u64>,
    time: Option<f64>,
    seed: Option<u64>,
    expected: Option<&Bound<'_, PyAny>>,
    timeout: f64,
    include: Option<Vec<String>>,
    text: bool,
    strategy: &str,
    minimize: bool,
    out: Option<PathBuf>,
    max_depth: Option<u32>,
    max_repetitions: Option<u32>,
    target_size: Option<u32>,
    constraints: bool,
    valid_only: bool,
    havoc: Option<&Bound<'_, PyAny>>,
) -> PyResult<fuzz::FuzzResult> {
    let strategy = thicket_fuzz::strategy::StrategyKind::from_name(strategy).ok_or_else(|| {
        let names: Vec<&str> = thicket_fuzz::strategy::StrategyKind::ALL
            .iter()
            .map(|(name, _)| *name)
            .collect();
        PyValueError::new_err(format!(
            "strategy {strategy:?}: thicket fuzzes by {}",
            names.join(", ")
        ))
    })?;
    let time = time.map(|t| fuzz::seconds("time", t)).transpose()?;
    let havoc = fuzz::havoc_share(havoc, valid_only)?;
    // Without a budget a call would only end by Ctrl-C.
    let execs = match (execs, time) {
        (None, None) => Some(fuzz::DEFAULT_EXECS),
        (execs, _) => execs,
    };
    let settings = fuzz::Settings {
        execs,
        time,
        seed,
        timeout: fuzz::seconds("timeout", timeout)?,
        include,
        text,
        strategy,
        minimize,
        out,
        limits: generate::Limits {
            max_depth,
            max_repetitions,
            target_size,
        },
        constraints,
        valid_only,
        havoc,
    };
    let expected = fuzz::expected_classes(py, expected)?;
    fuzz::run(py, spec, target, expected, settings)
}

/// The native module `thicket._thicket`, which the package `thicket` re-exports.
#[pymodule]
#[pyo3(name = "_thicket")]
fn thicket_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Spec>()?;
    m.add_class::<generate::Input>()?;
    m.add_class::<generate::InputIter>()?;
    m.add_class::<tree::Tree>()?;
    m.add_class::<Violation>()?;
    m.add_class::<choices::ChoiceMaker>()?;
    m.add_class::<kpath::Coverage>()?;
    m.add_class::<fuzz::FuzzResult>()?;
    m.add_class::<fuzz::Finding>()?;
    m.add_function(wrap_pyfunction!(fuzz_target, m)?)?;
    m.add("TargetTimeout", py.get_type::<TargetTimeout>())?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("GenerateError", py.get_type::<GenerateError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
