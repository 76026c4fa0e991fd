//! k-path generation and coverage for Python: `Spec.generate(strategy="kpath")` (inputs
//! until every k-path of the grammar is covered, Algorithm 1), `strategy="kpath-random"`
//! (a stream steered to the paths not covered yet) and `Spec.cover`: the same
//! `thicket-cover` calls as `thicket generate --strategy kpath` and `thicket cover`.

use crate::generate::{Engine, Input};
use crate::parse_error_titled;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};
use thicket_cover::{Coverage as PathCoverage, KPathGraph, Stop};
use thicket_fandango::LoadedSpec;

pub use thicket_driver::kpath::Production;

/// The longest k-path length `thicket` measures.
pub const MAX_K: u8 = 8;

/// `k` checked against `1..=MAX_K`.
pub fn check_k(k: u8) -> PyResult<usize> {
    if (1..=MAX_K).contains(&k) {
        Ok(usize::from(k))
    } else {
        Err(PyValueError::new_err(format!(
            "k={k}: k-paths of length 1 to {MAX_K} are measured"
        )))
    }
}

/// The inputs of a k-path production, as `thicket generate --strategy kpath[-random]
/// --seed SEED` writes them; under constraints each steered input is repaired (or
/// replaced by a fresh solution) before its paths count. Ctrl-C stops it between inputs
/// with `KeyboardInterrupt`.
pub fn produce(
    py: Python<'_>,
    engine: &Arc<Engine>,
    production: Production,
    k: usize,
    seed: u64,
    limit: usize,
) -> PyResult<Vec<Input>> {
    let pending: Mutex<Option<PyErr>> = Mutex::new(None);
    let interrupted = || {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                true
            }
        })
    };
    let made = py.detach(|| {
        engine.with_makers(|loaded, generator, solver| {
            let graph = KPathGraph::new(&loaded.spec.grammar);
            let stop = Stop {
                deadline: None,
                interrupted: &interrupted,
            };
            thicket_driver::kpath::produce(
                loaded, generator, solver, &graph, production, k, seed, limit, stop,
            )
        })
    });
    if let Some(e) = pending.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let inputs: Vec<Input> = made
        .trees
        .into_iter()
        .enumerate()
        .map(|(n, tree)| Input::from_tree(tree, engine, seed, n as u64))
        .collect();
    if inputs.is_empty() || (production == Production::Stream && inputs.len() < limit) {
        return Err(crate::GenerateError::new_err(format!(
            "{} valid inputs made of the {} asked for: the constraints could not be \
             satisfied within the solver's budget",
            inputs.len(),
            if production == Production::Stream {
                limit.to_string()
            } else {
                "at least one".to_string()
            }
        )));
    }
    Ok(inputs)
}

/// The k-path coverage of a set of inputs (see the stub).
#[pyclass(frozen, module = "thicket")]
pub struct Coverage {
    loaded: Arc<LoadedSpec>,
    graph: KPathGraph,
    paths: PathCoverage,
    totals: Vec<u128>,
    inputs: usize,
}

/// Inputs parsed at a time (in parallel, with the GIL released); Ctrl-C is looked at
/// between batches.
const COVER_BATCH: usize = 256;

/// The coverage of `inputs` (each read by `reader`) for k-paths up to `k`; the first
/// input outside the language raises `ParseError`, its message naming it.
pub fn cover(
    py: Python<'_>,
    loaded: &Arc<LoadedSpec>,
    reader: &crate::Reader,
    inputs: Vec<Vec<u8>>,
    k: usize,
) -> PyResult<Coverage> {
    let graph = KPathGraph::new(&loaded.spec.grammar);
    let mut paths = PathCoverage::new(k);
    for (b, batch) in inputs.chunks(COVER_BATCH).enumerate() {
        py.check_signals()?;
        let covered: Vec<Result<PathCoverage, (usize, thicket_parse::ParseError)>> =
            py.detach(|| {
                batch
                    .par_iter()
                    .enumerate()
                    .map(|(i, input)| {
                        reader
                            .coverage(&graph, input, k)
                            .map_err(|e| (b * COVER_BATCH + i, e))
                    })
                    .collect()
            });
        for own in covered {
            match own {
                Ok(own) => paths.merge(&own),
                Err((index, e)) => {
                    let err = parse_error_titled(py, &e, format!("input {index}: {e}"));
                    err.value(py).setattr("index", index)?;
                    return Err(err);
                }
            }
        }
    }
    let totals = (1..=k).map(|l| graph.count(l)).collect();
    Ok(Coverage {
        loaded: loaded.clone(),
        graph,
        paths,
        totals,
        inputs: inputs.len(),
    })
}

#[pymethods]
impl Coverage {
    /// The longest k-path length measured.
    #[getter]
    fn k(&self) -> usize {
        self.paths.max_k()
    }

    /// How many inputs were measured.
    #[getter]
    fn inputs(&self) -> usize {
        self.inputs
    }

    /// The `k`-paths the inputs cover (`k` = the longest measured if not given).
    #[pyo3(signature = (k = None))]
    fn covered(&self, k: Option<u8>) -> PyResult<usize> {
        let k = self.length(k)?;
        Ok(self.paths.covered(k))
    }

    /// The `k`-paths of the grammar.
    #[pyo3(signature = (k = None))]
    fn total(&self, k: Option<u8>) -> PyResult<u128> {
        let k = self.length(k)?;
        Ok(self.totals[k - 1])
    }

    /// The share of the grammar's `k`-paths covered (0.0 to 1.0; 0.0 if it has none).
    #[pyo3(signature = (k = None))]
    fn fraction(&self, k: Option<u8>) -> PyResult<f64> {
        let k = self.length(k)?;
        let total = self.totals[k - 1];
        Ok(if total == 0 {
            0.0
        } else {
            self.paths.covered(k) as f64 / total as f64
        })
    }

    /// Up to `limit` `k`-paths the inputs miss, as `thicket cover --missing` lists them.
    #[pyo3(signature = (k = None, limit = 50))]
    fn missing(&self, py: Python<'_>, k: Option<u8>, limit: usize) -> PyResult<Vec<String>> {
        let k = self.length(k)?;
        let grammar = &self.loaded.spec.grammar;
        Ok(py.detach(|| {
            let mut list = Vec::new();
            if limit == 0 {
                return list;
            }
            self.graph.for_each_path(k, |p| {
                if !self.paths.contains(p) {
                    list.push(self.graph.display(grammar, p));
                }
                list.len() < limit
            });
            list
        }))
    }

    fn __repr__(&self) -> String {
        let per_length: Vec<String> = (1..=self.paths.max_k())
            .rev()
            .map(|l| {
                format!(
                    "{} of {} {l}-paths",
                    self.paths.covered(l),
                    self.totals[l - 1]
                )
            })
            .collect();
        format!(
            "<thicket.Coverage of {} inputs: {}>",
            self.inputs,
            per_length.join(", ")
        )
    }
}

impl Coverage {
    fn length(&self, k: Option<u8>) -> PyResult<usize> {
        let max = self.paths.max_k();
        match k {
            None => Ok(max),
            Some(k) if (1..=max).contains(&usize::from(k)) => Ok(usize::from(k)),
            Some(k) => Err(PyValueError::new_err(format!(
                "k={k}: this coverage measured k-paths of length 1 to {max}"
            ))),
        }
    }
}
