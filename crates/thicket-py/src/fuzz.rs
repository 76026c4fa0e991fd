//! `thicket.fuzz`: a Python callable fuzzed in this interpreter. The loop is
//! thicket-fuzz's [`Campaign`](thicket_fuzz::Campaign) (strategies, keeping, findings,
//! minimisation), made of its parts by `thicket_fuzz::setup::CampaignParts`, and every
//! run goes through thicket-exec's [`Judge`]; what is particular to Python in-process is
//! the executor, [`InProcess`], which calls the target with the GIL held and measures
//! its lines and branches with `thicket._coverage` (sys.monitoring, or sys.settrace
//! before 3.12). The campaign itself runs with the GIL released.
//!
//! A hang is stopped by a watchdog thread: when a call outlives its time limit, the
//! watchdog raises `thicket.TargetTimeout` in the target's thread
//! (`PyThreadState_SetAsyncExc`), which Python delivers at the target's next bytecode
//! instruction. Python code that loops is therefore stopped; a call blocked in C code
//! (a `time.sleep`, a C extension's loop) is stopped only when it returns to Python.

use crate::{GenerateError, Spec, TargetTimeout, json_to_py};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use thicket_exec::python::PyFileTrace;
use thicket_exec::{ExecError, Executor, Judge, Location, Outcome, PyTrace, Status, Trace};
use thicket_fuzz::FuzzConfig;
use thicket_fuzz::minimize::{MinimizeLimits, reduce_decoded};

/// Executions of a call that gives neither `execs` nor `time`.
pub(crate) const DEFAULT_EXECS: u64 = 10_000;

/// Most runs spent minimising one finding (as `thicket fuzz --minimize`).
const MINIMIZE_RUNS: u64 = 10_000;

/// Bits of a line number or halved offset in a coverage key (see `_coverage.py`).
const FIELD_BITS: u32 = 21;
const FIELD: u64 = (1 << FIELD_BITS) - 1;
/// The key of a branch between two instructions (sys.monitoring).
const INSTRUCTION_BRANCH: u64 = 1 << 63;

/// What the executor knows of one measured code object.
struct CodeInfo {
    /// Index into [`InProcess::files`].
    file: usize,
    /// Its function's qualified name.
    function: String,
    /// Lines holding a conditional jump (sys.settrace), sorted.
    branch_lines: Vec<u32>,
    /// The line of each halved bytecode offset (sys.monitoring).
    offset_lines: Vec<u32>,
}

/// One run's lines, branches and code objects (by index) in one file.
type FileHits = (Vec<u32>, Vec<(i32, i32)>, Vec<usize>);

/// Why the last run stopped the campaign: Ctrl-C (the `KeyboardInterrupt` to raise
/// once the campaign has stopped), or the collector failing.
type Interrupt = Arc<Mutex<Option<PyErr>>>;

/// Runs a Python callable in this interpreter, with line and branch coverage of the
/// measured files (see the module docs).
pub(crate) struct InProcess {
    target: Py<PyAny>,
    collector: Py<PyAny>,
    report: Py<PyAny>,
    settle: Py<PyAny>,
    expected: Py<PyTuple>,
    text: bool,
    timeout: Duration,
    watchdog: Watchdog,
    codes: Vec<CodeInfo>,
    files: Vec<String>,
    file_ids: FxHashMap<String, usize>,
    trace: PyTrace,
    description: String,
    package: Option<String>,
    empty_runs: u64,
    stop: Arc<AtomicBool>,
    interrupt: Interrupt,
    /// The exception the last run raised, if it is a failure.
    last_exception: Arc<Mutex<Option<Py<PyAny>>>>,
}

impl InProcess {
    /// Records why the campaign must stop and fails the run (a run the judge does not
    /// book).
    fn interrupted(&self, error: PyErr) -> ExecError {
        self.stop.store(true, Ordering::SeqCst);
        let mut slot = self.interrupt.lock().expect("not poisoned");
        slot.get_or_insert(error);
        ExecError::Python("interrupted".into())
    }

    /// Reads the collector's keys of one run into [`InProcess::trace`].
    fn absorb(&mut self, py: Python<'_>, hits: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut per_file: FxHashMap<usize, FileHits> = FxHashMap::default();
        for key in hits.try_iter()? {
            let key: u64 = key?.extract()?;
            let code = ((key >> (2 * FIELD_BITS)) & FIELD) as usize;
            while self.codes.len() <= code {
                self.learn(py, self.codes.len())?;
            }
            let info = &self.codes[code];
            let entry = per_file.entry(info.file).or_default();
            if !entry.2.contains(&code) {
                entry.2.push(code);
            }
            let (from, to) = ((key >> FIELD_BITS) & FIELD, key & FIELD);
            if key & INSTRUCTION_BRANCH != 0 {
                let line = |offset: u64| info.offset_lines.get(offset as usize).copied();
                if let (Some(from), Some(to)) = (line(from), line(to)) {
                    entry.1.push((from as i32, to as i32));
                }
                continue;
            }
            entry.0.push(to as u32);
            if from != 0 && info.branch_lines.binary_search(&(from as u32)).is_ok() {
                entry.1.push((from as i32, to as i32));
            }
        }
        self.trace.files.clear();
        for (file, (mut lines, mut branches, codes)) in per_file {
            lines.sort_unstable();
            lines.dedup();
            branches.sort_unstable();
            branches.dedup();
            let mut functions: Vec<String> = codes
                .iter()
                .map(|&c| self.codes[c].function.clone())
                .collect();
            functions.sort_unstable();
            functions.dedup();
            self.trace.files.push(PyFileTrace {
                path: self.files[file].clone(),
                lines,
                branches,
                statements: 0,
                branch_total: 0,
                functions,
            });
        }
        self.trace.files.sort_by(|a, b| a.path.cmp(&b.path));
        if self.trace.files.is_empty() {
            self.empty_runs += 1;
        }
        Ok(())
    }

    /// Asks the collector about code object `index`, first seen now.
    fn learn(&mut self, py: Python<'_>, index: usize) -> PyResult<()> {
        let info = self
            .collector
            .bind(py)
            .call_method1(intern!(py, "code_info"), (index,))?;
        let (path, function, branch_lines, offset_lines): (String, String, Vec<u32>, Vec<u32>) =
            info.extract()?;
        let next = self.files.len();
        let file = *self.file_ids.entry(path.clone()).or_insert(next);
        if file == next {
            self.files.push(path);
        }
        self.codes.push(CodeInfo {
            file,
            function,
            branch_lines,
            offset_lines,
        });
        Ok(())
    }

    /// One call of the target, the GIL held.
    fn call(&mut self, py: Python<'_>, input: &[u8]) -> Result<Outcome, ExecError> {
        // Stopped (Ctrl-C): no more runs, so that minimisation ends too.
        if self.stop.load(Ordering::SeqCst) {
            return Err(ExecError::Python("interrupted".into()));
        }
        if let Err(error) = py.check_signals() {
            return Err(self.interrupted(error));
        }
        let argument = if self.text {
            PyString::new(py, &String::from_utf8_lossy(input)).into_any()
        } else {
            PyBytes::new(py, input).into_any()
        };
        let collector = self.collector.bind(py).clone();
        if let Err(error) = collector.call_method0(intern!(py, "begin")) {
            return Err(self.interrupted(error));
        }
        let started = Instant::now();
        self.watchdog.arm(self.timeout);
        let result = self.target.bind(py).call1((argument,));
        let hung = self.watchdog.disarm();
        let time = started.elapsed();
        // A pending timeout is delivered before any more of our Python code runs.
        let unsettled = if hung {
            self.settle.bind(py).call0().err()
        } else {
            None
        };
        let absorbed = collector
            .call_method0(intern!(py, "end"))
            .and_then(|hits| self.absorb(py, &hits));
        if let Some(error) = unsettled.filter(|e| !e.is_instance_of::<TargetTimeout>(py)) {
            return Err(self.interrupted(error));
        }
        if let Err(error) = absorbed {
            return Err(self.interrupted(error));
        }
        let mut outcome = Outcome::new(
            if hung {
                Status::Timeout
            } else {
                Status::Exited(0)
            },
            time,
        );
        let mut last = self.last_exception.lock().expect("not poisoned");
        *last = None;
        let Err(error) = result else {
            return Ok(outcome);
        };
        if hung {
            return Ok(outcome);
        }
        if error.is_instance_of::<PyKeyboardInterrupt>(py) {
            drop(last);
            return Err(self.interrupted(error));
        }
        if error.is_instance(py, self.expected.bind(py).as_any()) {
            return Ok(outcome);
        }
        let value = error.into_value(py);
        let reported = self
            .report
            .bind(py)
            .call1((value.bind(py),))
            .and_then(|r| r.extract::<(String, String, String)>());
        let (class, frame, message) = match reported {
            Ok(report) => report,
            Err(error) => {
                drop(last);
                return Err(self.interrupted(error));
            }
        };
        outcome.exception = Some(thicket_exec::Exception {
            language: "python",
            class,
            frame,
            message,
        });
        *last = Some(value.into_any());
        Ok(outcome)
    }
}

impl Executor for InProcess {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        Python::attach(|py| self.call(py, input))
    }

    fn trace(&self) -> Trace<'_> {
        Trace::Python(&self.trace)
    }

    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        self.trace.covered_locations(out);
        true
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    fn wants_text(&self) -> bool {
        self.text
    }

    fn empty_runs(&self) -> u64 {
        self.empty_runs
    }

    fn target_package(&self) -> Option<String> {
        self.package.clone()
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.watchdog.quit();
    }
}

/// The watchdog's state, shared with its thread.
#[derive(Default)]
struct Watch {
    /// The call being watched (its number) and when it is over time.
    armed: Option<(u64, Instant)>,
    /// Calls watched so far.
    calls: u64,
    /// How long a call may run; the timeout is raised again each period a call that
    /// caught it goes on.
    period: Duration,
    /// Whether the timeout was raised in the current call.
    fired: bool,
    quit: bool,
}

/// Raises `TargetTimeout` in the target's thread when a call is over time (see the
/// module docs).
struct Watchdog {
    shared: Arc<(Mutex<Watch>, Condvar)>,
}

impl Watchdog {
    /// A watchdog for calls made in the current thread (the GIL held), raising
    /// `exception` (a class).
    fn start(_py: Python<'_>, exception: Py<PyAny>) -> PyResult<Watchdog> {
        // SAFETY: the GIL is held; the call only reads the current thread's id.
        let thread_ident = unsafe { ffi::PyThread_get_thread_ident() };
        let shared = Arc::new((Mutex::new(Watch::default()), Condvar::new()));
        let theirs = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("thicket-watchdog".into())
            .spawn(move || watch(&theirs, thread_ident, &exception))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
        Ok(Watchdog { shared })
    }

    fn arm(&self, period: Duration) {
        let (lock, wake) = &*self.shared;
        let mut watch = lock.lock().expect("not poisoned");
        watch.calls += 1;
        watch.period = period;
        watch.fired = false;
        watch.armed = Some((watch.calls, Instant::now() + period));
        wake.notify_one();
    }

    /// Ends watching the call; whether it went over time. A timeout raised but not yet
    /// delivered (the call returned from C code first) is still pending: the caller
    /// lets it be delivered (`settle`). Withdrawing it with `PyThreadState_SetAsyncExc`
    /// and no exception would leave the interpreter's "pending" flag set, and CPython
    /// (3.11) would then spin at its next check.
    fn disarm(&self) -> bool {
        let mut watch = self.shared.0.lock().expect("not poisoned");
        watch.armed = None;
        watch.fired
    }

    fn quit(&self) {
        let (lock, wake) = &*self.shared;
        let mut watch = lock.lock().expect("not poisoned");
        watch.armed = None;
        watch.quit = true;
        wake.notify_one();
    }
}

/// The watchdog thread's loop.
fn watch(shared: &(Mutex<Watch>, Condvar), thread: std::ffi::c_ulong, exception: &Py<PyAny>) {
    let (lock, wake) = shared;
    let mut state = lock.lock().expect("not poisoned");
    loop {
        if state.quit {
            return;
        }
        let Some((call, deadline)) = state.armed else {
            state = wake.wait(state).expect("not poisoned");
            continue;
        };
        let now = Instant::now();
        if now < deadline {
            state = wake
                .wait_timeout(state, deadline - now)
                .expect("not poisoned")
                .0;
            continue;
        }
        // The GIL first, then the state (the order the target's thread takes them in):
        // while this thread holds the GIL the call cannot end, so a call still armed
        // now is the one over time.
        drop(state);
        Python::attach(|_py| {
            let mut state = lock.lock().expect("not poisoned");
            if state.armed.is_some_and(|(c, _)| c == call) {
                // SAFETY: the GIL is held; `exception` is a live exception class.
                unsafe {
                    ffi::PyThreadState_SetAsyncExc(thread as _, exception.as_ptr());
                }
                state.fired = true;
                let period = state.period;
                state.armed = Some((call, Instant::now() + period));
            }
        });
        state = lock.lock().expect("not poisoned");
    }
}

/// A failure `thicket.fuzz` found.
#[pyclass(frozen, module = "thicket", get_all)]
pub(crate) struct Finding {
    /// `"exception"` or `"hang"`.
    kind: String,
    /// The exception's class, qualified by its module unless built in (`None` for a
    /// hang).
    #[pyo3(name = "type")]
    exception_type: Option<String>,
    /// The exception's message (for a hang: how long it ran).
    message: String,
    /// The innermost frame, `file:line in function` (`None` for a hang).
    location: Option<String>,
    /// The traceback Python prints for the minimised input (`None` for a hang).
    traceback: Option<String>,
    /// The exception raised by the minimised input, with its `__traceback__`.
    exception: Option<Py<PyAny>>,
    /// The smallest input found that fails the same way (the input as found, if it was
    /// not minimised).
    input: Py<PyBytes>,
    /// The input as the campaign found it.
    original: Py<PyBytes>,
    /// Runs that failed this way.
    count: u64,
}

#[pymethods]
impl Finding {
    fn __repr__(&self) -> String {
        match &self.exception_type {
            Some(class) => format!(
                "<thicket.Finding {class} at {}>",
                self.location.as_deref().unwrap_or("?")
            ),
            None => format!("<thicket.Finding {}: {}>", self.kind, self.message),
        }
    }
}

/// What `thicket.fuzz` returns.
#[pyclass(frozen, module = "thicket", get_all)]
pub(crate) struct FuzzResult {
    /// The distinct failures, each with its minimised input.
    findings: Vec<Py<Finding>>,
    /// The inputs kept for reaching new code, in the order they were kept.
    corpus: Vec<Py<PyBytes>>,
    /// The campaign's figures, as `stats.json` of `thicket fuzz` has them.
    stats: Py<PyAny>,
    /// Executions (the minimisation's not counted).
    execs: u64,
    /// Executions per second.
    execs_per_sec: f64,
    /// Lines of the measured files the inputs ran.
    lines: usize,
    /// Branches of the measured files the inputs took.
    branches: usize,
    /// The seed (drawn when none was given).
    seed: u64,
}

#[pymethods]
impl FuzzResult {
    fn __repr__(&self) -> String {
        format!(
            "<thicket.FuzzResult {} findings, {} kept inputs, {} execs, {} lines, {} branches>",
            self.findings.len(),
            self.corpus.len(),
            self.execs,
            self.lines,
            self.branches
        )
    }
}

/// A finding as the campaign thread gathers it, before it becomes a [`Finding`].
struct Found {
    kind: String,
    class: Option<String>,
    location: Option<String>,
    summary: String,
    original: Vec<u8>,
    input: Vec<u8>,
    count: u64,
    exception: Option<Py<PyAny>>,
}

/// What the campaign thread hands back.
struct Outcomes {
    stats: thicket_fuzz::Stats,
    found: Vec<Found>,
    corpus: Vec<Vec<u8>>,
}

/// The settings of one `thicket.fuzz` call, checked.
pub(crate) struct Settings {
    pub execs: Option<u64>,
    pub time: Option<Duration>,
    pub seed: Option<u64>,
    pub timeout: Duration,
    pub include: Option<Vec<String>>,
    pub text: bool,
    pub strategy: thicket_fuzz::strategy::StrategyKind,
    pub minimize: bool,
    pub out: Option<PathBuf>,
    pub limits: crate::generate::Limits,
    pub constraints: bool,
    pub valid_only: bool,
    pub havoc: thicket_fuzz::havoc::HavocShare,
}

/// Reads `havoc` as given from Python: `"auto"` (or `None`), `"off"`, or a share of
/// rounds between 0 and 1, as `thicket fuzz --havoc` reads it. A valid-only campaign
/// runs no byte havoc, so asking for both is refused, as the CLI refuses it.
pub(crate) fn havoc_share(
    havoc: Option<&Bound<'_, PyAny>>,
    valid_only: bool,
) -> PyResult<thicket_fuzz::havoc::HavocShare> {
    use thicket_fuzz::havoc::HavocShare;
    let Some(havoc) = havoc else {
        return Ok(HavocShare::Auto);
    };
    let text = if let Ok(text) = havoc.extract::<String>() {
        text
    } else if let (false, Ok(share)) = (havoc.is_instance_of::<PyBool>(), havoc.extract::<f64>()) {
        share.to_string()
    } else {
        return Err(PyTypeError::new_err(format!(
            "havoc is \"auto\", \"off\" or a share between 0 and 1, not {}",
            havoc.repr()?
        )));
    };
    let share =
        HavocShare::parse(&text).map_err(|e| PyValueError::new_err(format!("havoc: {e}")))?;
    if valid_only && share != HavocShare::Auto {
        return Err(PyValueError::new_err(
            "havoc and valid_only exclude each other: byte havoc leaves the grammar, a \
             valid-only campaign runs only inputs in it",
        ));
    }
    Ok(share)
}

/// Reads a duration in seconds given from Python.
pub(crate) fn seconds(what: &str, value: f64) -> PyResult<Duration> {
    if value.is_finite() && value > 0.0 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(PyValueError::new_err(format!(
            "{what} is a number of seconds greater than 0, not {value}"
        )))
    }
}

/// The exception classes of `expected`: a class, a tuple of classes, or nothing.
pub(crate) fn expected_classes<'py>(
    py: Python<'py>,
    expected: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let Some(expected) = expected else {
        return Ok(PyTuple::empty(py));
    };
    let classes = if let Ok(tuple) = expected.cast::<PyTuple>() {
        tuple.clone()
    } else if let Ok(list) = expected.cast::<pyo3::types::PyList>() {
        list.to_tuple()
    } else {
        PyTuple::new(py, [expected])?
    };
    let base = py.get_type::<pyo3::exceptions::PyBaseException>();
    for class in classes.iter() {
        let is_exception = class
            .cast::<PyType>()
            .is_ok_and(|t| t.is_subclass(base.as_any()).unwrap_or(false));
        if !is_exception {
            return Err(PyTypeError::new_err(format!(
                "expected holds exception classes (e.g. expected=(ValueError,)), not {}",
                class.repr()?
            )));
        }
    }
    Ok(classes)
}

/// Runs the campaign (see [`crate::fuzz`]).
pub(crate) fn run(
    py: Python<'_>,
    spec: &Spec,
    target: &Bound<'_, PyAny>,
    expected: Bound<'_, PyTuple>,
    settings: Settings,
) -> PyResult<FuzzResult> {
    if !target.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "target must be a callable taking one input, not {}",
            target.repr()?
        )));
    }
    let coverage = py.import("thicket._coverage")?;
    let include = match &settings.include {
        Some(include) => include.clone(),
        None => coverage
            .call_method1("_default_include", (target,))?
            .extract()?,
    };
    let collector = coverage.getattr("Collector")?.call1((include.clone(),))?;
    let name = target
        .getattr("__qualname__")
        .or_else(|_| target.repr().map(|r| r.into_any()))?
        .to_string();
    let module: Option<String> = target
        .getattr("__module__")
        .ok()
        .and_then(|m| m.extract().ok());
    let package = module
        .as_deref()
        .map(|m| m.split('.').next().unwrap_or(m).to_string());
    let backend: String = collector.call_method0("describe")?.extract()?;
    let description = format!(
        "in-process Python ({backend}, line and branch coverage of {}): {}{name}",
        include.join(", "),
        module.as_deref().map_or(String::new(), |m| format!("{m}:")),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let interrupt: Interrupt = Arc::new(Mutex::new(None));
    let last_exception = Arc::new(Mutex::new(None));
    let timeout_class = py.get_type::<TargetTimeout>().into_any().unbind();
    let executor = InProcess {
        target: target.clone().unbind(),
        collector: collector.clone().unbind(),
        report: coverage.getattr("exception_report")?.unbind(),
        settle: coverage.getattr("settle")?.unbind(),
        expected: expected.unbind(),
        text: settings.text,
        timeout: settings.timeout,
        watchdog: Watchdog::start(py, timeout_class)?,
        codes: Vec::new(),
        files: Vec::new(),
        file_ids: FxHashMap::default(),
        trace: PyTrace::default(),
        description,
        package,
        empty_runs: 0,
        stop: Arc::clone(&stop),
        interrupt: Arc::clone(&interrupt),
        last_exception: Arc::clone(&last_exception),
    };
    let seed = settings.seed.unwrap_or_else(thicket_gen::draw_seed);
    let loaded = Arc::clone(&spec.loaded);
    let constraints = settings.constraints && spec.constraints_apply;
    let kept_dir = settings.out.clone();
    let outcome = py.detach(|| -> Result<Outcomes, RunError> {
        let temporary;
        let out = match &kept_dir {
            Some(dir) => dir.clone(),
            None => {
                temporary = tempfile::tempdir().map_err(|e| {
                    RunError::Campaign(format!("cannot create a temporary folder: {e}"))
                })?;
                temporary.path().to_path_buf()
            }
        };
        campaign(&loaded, constraints, executor, &settings, seed, &stop, &out)
    });
    let closed = collector.call_method0("close");
    if let Some(error) = interrupt.lock().expect("not poisoned").take() {
        return Err(error);
    }
    closed?;
    let outcomes = match outcome {
        Ok(outcomes) => outcomes,
        Err(RunError::Spec(errors)) => return Err(crate::spec_error(py, &errors)),
        Err(RunError::Generate(why)) => return Err(GenerateError::new_err(why)),
        Err(RunError::Campaign(why)) => {
            return Err(PyRuntimeError::new_err(format!("thicket.fuzz: {why}")));
        }
    };
    let format = coverage.getattr("format_traceback")?;
    let findings = outcomes
        .found
        .into_iter()
        .map(|found| {
            let traceback = match &found.exception {
                Some(e) => Some(format.call1((e.bind(py),))?.extract::<String>()?),
                None => None,
            };
            let message = match &found.exception {
                Some(e) => e.bind(py).str()?.to_string(),
                None => found.summary,
            };
            Py::new(
                py,
                Finding {
                    kind: found.kind,
                    exception_type: found.class,
                    message,
                    location: found.location,
                    traceback,
                    exception: found.exception,
                    input: PyBytes::new(py, &found.input).unbind(),
                    original: PyBytes::new(py, &found.original).unbind(),
                    count: found.count,
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    let stats = &outcomes.stats;
    let json = serde_json::to_value(stats).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(FuzzResult {
        findings,
        corpus: outcomes
            .corpus
            .iter()
            .map(|b| PyBytes::new(py, b).unbind())
            .collect(),
        stats: json_to_py(py, &json)?.unbind(),
        execs: stats.execs,
        execs_per_sec: stats.execs_per_sec,
        lines: stats.coverage.lines.unwrap_or(0),
        branches: stats.coverage.branches.unwrap_or(0),
        seed,
    })
}

/// Why the campaign thread stopped without results.
enum RunError {
    /// The spec's errors stop the generator.
    Spec(thicket_grammar::SpecError),
    /// The generator or solver cannot be built for these limits.
    Generate(String),
    /// The campaign failed (its folder, or the target cannot be run).
    Campaign(String),
}

/// The campaign, with the GIL released: the generator and solver of the spec, the
/// campaign run to its budget, then its findings minimised and run once more (for
/// their exceptions).
fn campaign(
    loaded: &thicket_fandango::LoadedSpec,
    constraints: bool,
    executor: InProcess,
    settings: &Settings,
    seed: u64,
    stop: &AtomicBool,
    out: &std::path::Path,
) -> Result<Outcomes, RunError> {
    let grammar = &loaded.spec.grammar;
    let config = settings.limits.config();
    let generator = thicket_fandango::generator(&loaded.spec, config).map_err(|e| match e {
        thicket_fandango::GeneratorRefusal::Limits(why) => RunError::Generate(why),
        thicket_fandango::GeneratorRefusal::Spec { errors, .. } => RunError::Spec(errors),
    })?;
    let core = if constraints {
        loaded.core_constraints()
    } else {
        Vec::new()
    };
    let solver = thicket_fandango::solver(
        grammar,
        core,
        thicket_fuzz::solver_config(config),
        loaded.solver_parts(),
        false,
    )
    .map_err(|e| RunError::Generate(e.to_string()))?;
    let last_exception = Arc::clone(&executor.last_exception);
    let timeout = executor.timeout;
    let judge = Judge::new(Box::new(executor), thicket_exec::Classifier::default());
    let fuzz_config = FuzzConfig {
        seed,
        max_execs: settings.execs,
        max_time: settings.time,
        valid_only: settings.valid_only,
        havoc: settings.havoc,
        spec_id: loaded.spec.source.name().to_string(),
        ..FuzzConfig::default()
    };
    // Fandango's bit fields: each tree runs as its bits packed into bytes (as `thicket
    // fuzz` runs them), and inputs not made from a tree are read one bit at a time.
    let input_grammar = thicket_driver::InputGrammar::new(&loaded.spec).map_err(RunError::Spec)?;
    let packed = input_grammar
        .encoding(Default::default())
        .map_err(|e| RunError::Campaign(e.to_string()))?;
    let encoding = packed
        .as_ref()
        .map(|p| p as &dyn thicket_fuzz::strategy::Encoding);
    let campaign_error = |e: thicket_fuzz::FuzzError| RunError::Campaign(e.to_string());
    let parts = thicket_fuzz::setup::CampaignParts {
        generator: &generator,
        solver: solver.as_ref(),
        encoding,
        strategy: thicket_fuzz::choice::StrategyChoice::Campaign(settings.strategy),
        seeds: &[],
        fdloop: thicket_fuzz::strategy::FdLoopConfig::default(),
        whitebox: None,
    };
    let mut campaign = parts
        .campaign(judge, fuzz_config, out)
        .map_err(campaign_error)?;
    let stats = campaign.run(stop, |_| {}).map_err(campaign_error)?;
    let mut judge = campaign.into_judge();
    let read = |file: &str| {
        std::fs::read(out.join(file))
            .map_err(|e| RunError::Campaign(format!("cannot read {file} of the campaign: {e}")))
    };
    let mut corpus: Vec<String> = std::fs::read_dir(out.join("queue"))
        .map_err(|e| RunError::Campaign(format!("cannot read the campaign's queue: {e}")))?
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .filter(|name| name.starts_with("id:"))
        .collect();
    corpus.sort();
    let corpus = corpus
        .iter()
        .map(|name| read(&format!("queue/{name}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut found = Vec::new();
    for record in &stats.failures {
        let original = read(&record.file)?;
        let (kind, class) = match &record.kind {
            thicket_exec::FailureKind::Exception { class, .. } => {
                ("exception".to_string(), Some(class.clone()))
            }
            thicket_exec::FailureKind::Hang => ("hang".to_string(), None),
            other => (other.label(), None),
        };
        let location = record.key.split_once(" @ ").map(|(_, l)| l.to_string());
        let location = location.filter(|l| l != "?");
        let hang = record.kind == thicket_exec::FailureKind::Hang;
        let mut input = original.clone();
        if settings.minimize && !hang && !stop.load(Ordering::SeqCst) {
            let limits = MinimizeLimits {
                max_runs: MINIMIZE_RUNS,
                deadline: None,
            };
            let reduced = reduce_decoded(
                grammar,
                encoding,
                &mut judge,
                &original,
                limits,
                seed,
                false,
                &mut |_| {},
            )
            .map_err(|e| RunError::Campaign(e.to_string()))?;
            // `None`: the failure did not come back (a flaky one); keep the original.
            if let Some(reduced) = reduced {
                input = reduced.bytes;
            }
        }
        let mut exception = None;
        if !hang && !stop.load(Ordering::SeqCst) {
            // Once more, for the exception object and its traceback.
            let _ = judge.run(&input);
            exception = last_exception.lock().expect("not poisoned").take();
        }
        found.push(Found {
            kind,
            class,
            location,
            summary: if hang {
                format!("no end within {} ms", timeout.as_millis())
            } else {
                record.summary.clone()
            },
            original,
            input,
            count: record.count,
            exception,
        });
    }
    Ok(Outcomes {
        stats,
        found,
        corpus,
    })
}
