//! Inputs whose choices come from Python: each choice the generator makes (which
//! alternative, how many repetitions, which character) is a call of a Python function,
//! so that a property-based tester (Hypothesis, in `thicket.hypothesis`) draws them
//! from its own data and shrinks a failing input by shrinking its choices. Options
//! are offered simplest first, so smaller choices mean smaller inputs. The tester may
//! also hear where each rule's subtree begins and ends (Hypothesis's spans), so that
//! its shrinker can delete a subtree's choices whole or put a subtree of the same rule
//! in its place.

use crate::generate::Engine;
use crate::tree::{Tree, TreeData};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::Arc;
use thicket_gen::{ChoiceSource, Generator};
use thicket_grammar::{Expr, ExprId, Grammar};
use thicket_tree::{TreeBuilder, TreeSink};

/// The first error a Python hook raised: it ends the input (every later choice is 0,
/// which closes it off, and no more hooks are called) and is raised again.
type Failure<'a> = &'a RefCell<Option<PyErr>>;

/// The choices of one input, from two Python functions.
struct PyChoices<'py, 'f> {
    /// `choose(n)`: an int in `0..n`.
    choose: Bound<'py, PyAny>,
    /// `bits()`: an int in `0..2**64`.
    bits: Bound<'py, PyAny>,
    /// `start(label)` and `stop()` of spans, if the tester takes them.
    spans: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    failure: Failure<'f>,
}

impl PyChoices<'_, '_> {
    fn call<T: for<'a> FromPyObject<'a, 'a>>(
        &self,
        result: PyResult<Bound<'_, PyAny>>,
    ) -> Option<T> {
        match result.and_then(|v| v.extract::<T>().map_err(Into::into)) {
            Ok(value) => Some(value),
            Err(e) => {
                self.failure.borrow_mut().get_or_insert(e);
                None
            }
        }
    }
}

impl ChoiceSource for PyChoices<'_, '_> {
    const SIMPLEST_FIRST: bool = true;
    const ITEM_BY_ITEM: bool = true;

    fn span_start(&mut self, label: u64) {
        if let Some((start, _)) = &self.spans
            && self.failure.borrow().is_none()
        {
            hook(self.failure, start.call1((label,)));
        }
    }

    fn span_end(&mut self) {
        if let Some((_, stop)) = &self.spans
            && self.failure.borrow().is_none()
        {
            hook(self.failure, stop.call0());
        }
    }

    fn choose(&mut self, n: u32) -> u32 {
        // A forced choice costs the tester nothing to shrink.
        if n <= 1 || self.failure.borrow().is_some() {
            return 0;
        }
        match self.call::<u32>(self.choose.call1((n,))) {
            Some(k) if k < n => k,
            Some(k) => {
                *self.failure.borrow_mut() = Some(PyValueError::new_err(format!(
                    "choose({n}) returned {k}, not a number in 0..{n}"
                )));
                0
            }
            None => 0,
        }
    }

    fn bits(&mut self) -> u64 {
        if self.failure.borrow().is_some() {
            return 0;
        }
        self.call::<u64>(self.bits.call0()).unwrap_or(0)
    }
}

/// A tree builder that also tells Python where each rule's subtree begins
/// (`start(label)`, the label the rule's own) and ends (`stop()`).
struct SpanSink<'py, 'f, 'g> {
    builder: TreeBuilder,
    hooks: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    grammar: &'g Grammar,
    /// For each open node: whether it told Python of a span.
    open: Vec<bool>,
    failure: Failure<'f>,
}

impl SpanSink<'_, '_, '_> {
    /// The span label of a rule's subtree: its symbol's, spread over 64 bits so that it
    /// meets no label of the tester's own.
    fn label(&self, expr: ExprId) -> Option<u64> {
        match self.grammar.expr(expr) {
            Expr::Ref(symbol) => {
                Some((symbol.index() as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 1)
            }
            _ => None,
        }
    }
}

/// Keeps the first error of a hook's call.
fn hook(failure: Failure<'_>, result: PyResult<Bound<'_, PyAny>>) {
    if let Err(e) = result {
        failure.borrow_mut().get_or_insert(e);
    }
}

impl TreeSink for SpanSink<'_, '_, '_> {
    fn open(&mut self, expr: ExprId) {
        self.builder.open(expr);
        let label = self.label(expr);
        let told = match (&self.hooks, label) {
            (Some((start, _)), Some(label)) if self.failure.borrow().is_none() => {
                hook(self.failure, start.call1((label,)));
                true
            }
            _ => false,
        };
        self.open.push(told);
    }

    fn terminal(&mut self, expr: ExprId, bytes: &[u8]) {
        self.builder.terminal(expr, bytes);
    }

    fn close(&mut self) {
        self.builder.close();
        if self.open.pop() == Some(true)
            && self.failure.borrow().is_none()
            && let Some((_, stop)) = &self.hooks
        {
            hook(self.failure, stop.call0());
        }
    }
}

/// Makes inputs of a spec from choices made in Python (see the stub).
#[pyclass(frozen, module = "thicket")]
pub struct ChoiceMaker {
    engine: Arc<Engine>,
}

impl ChoiceMaker {
    pub fn new(engine: Arc<Engine>) -> ChoiceMaker {
        ChoiceMaker { engine }
    }
}

#[pymethods]
impl ChoiceMaker {
    /// The tree of one input: its choices from `choose(n)` (an int in `0..n`, 0 the
    /// simplest option), under constraints the repairs' randomness from one call of
    /// `bits()` (an int in `0..2**64`), and each rule's subtree announced by
    /// `start(label)` and `stop()` if given; `None` if the solver cannot make the tree
    /// valid.
    #[pyo3(signature = (choose, bits, start = None, stop = None))]
    fn make(
        &self,
        py: Python<'_>,
        choose: Bound<'_, PyAny>,
        bits: Bound<'_, PyAny>,
        start: Option<Bound<'_, PyAny>>,
        stop: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Option<Tree>> {
        let failure = RefCell::new(None);
        let spans = start.zip(stop);
        let mut source = PyChoices {
            choose,
            bits,
            spans: spans.clone(),
            failure: &failure,
        };
        self.engine.with_makers(|loaded, generator, solver| {
            let mut sink = SpanSink {
                builder: TreeBuilder::new(),
                hooks: spans,
                grammar: &loaded.spec.grammar,
                open: Vec::new(),
                failure: &failure,
            };
            generator.generate_into_from(&mut source, &mut sink);
            let tree = sink.builder.finish();
            let seed = solver.map(|_| source.bits());
            if let Some(e) = failure.take() {
                return Err(e);
            }
            let tree = match (solver, seed) {
                (Some(solver), Some(seed)) => {
                    // The drawn tree is repaired; if the repairs cannot save it, fresh
                    // trees from the drawn seed are, as `thicket generate` would.
                    let solved = py.detach(|| {
                        let mut rng = Generator::rng_for(seed, 0);
                        solver.make_valid(tree, &mut rng).map(|(tree, _)| tree)
                    });
                    match solved {
                        Ok(tree) => tree,
                        Err(_) => return Ok(None),
                    }
                }
                _ => tree,
            };
            let data = py.detach(|| TreeData::new(&tree, &loaded.spec.grammar));
            Ok(Some(Tree::root(Arc::new(data))))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<thicket.ChoiceMaker {:?}>",
            self.engine.borrow_owner().spec.source.name()
        )
    }
}
