//! # thicket-python
//!
//! The Python side of Fandango specs: a spec's Python code runs in a real CPython, as
//! it does in Fandango, and Python expressions are evaluated over thicket's derivation
//! trees — constraints that thicket cannot translate (calls to the spec's functions,
//! imported modules), generators (`<x> ::= ... := f(<y>)`), computed repetition bounds
//! (`<byte>{f(<len>)}`) and soft goals (`minimizing ...`).
//!
//! [`PythonHost`] implements [`thicket_constraint::host::Host`], the seam through which
//! the constraint solver evaluates a [`HostExpr`]; its own methods cover the rest
//! ([`PythonHost::eval_value`], [`PythonHost::generate`],
//! [`PythonHost::eval_constant`], [`PythonHost::eval_bool_many`]).
//!
//! ```no_run
//! use thicket_python::{CodeBlock, PythonConfig, PythonHost};
//! let blocks = vec![CodeBlock::new("spec.fan", 7, "def double(s):\n    return s + s\n")];
//! let host = PythonHost::new(blocks, PythonConfig::default())?;
//! let value = host.eval_constant("double('ab')")?;
//! assert_eq!(value, thicket_python::PyValue::Str("abab".into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Processes
//!
//! The default build needs no Python library: the interpreter is a separate,
//! long-lived `python3` process (or `$THICKET_PYTHON`, or [`PythonConfig::python`])
//! running thicket's runner (`runner.py`, embedded in the binary). Each process runs the
//! spec's code blocks once, in order, in one global namespace, as Fandango runs them;
//! each block is compiled under its `.fan` file's name with its lines at their line
//! numbers, so tracebacks and errors point into the spec. The solver evaluates from
//! several threads, so the host keeps a small pool of processes (started as needed, at
//! most [`PythonConfig::max_processes`], by default the machine's parallelism) rather
//! than one locked process; the first is started by [`PythonHost::new`] so that a
//! missing interpreter or a broken code block is reported when the spec is loaded.
//!
//! Processes are started from one thread of the host's own and ask the kernel to kill
//! them when it ends (they die with the host, even after `kill -9`), in a process group
//! of their own (killed with whatever they started), with their address space limited
//! ([`PythonConfig::memory_limit`]) and `PYTHONHASHSEED=0` (unless set), so that sets
//! iterate alike in every process.
//!
//! ## Protocol
//!
//! Requests go to the process's fd 3 and replies come from its fd 4 (the runner moves
//! both out of the way at once, so spec code cannot cut them); every message is a
//! 4-byte little-endian length and that many bytes. Spec code's stdout and stderr go to
//! thicket's stderr ([`PythonConfig::quiet`] discards them): thicket's stdout may carry
//! generated inputs. The first request is JSON: the code blocks, the seed, the time
//! limit, folders for `sys.path` (those of the code blocks' files, as Fandango adds
//! them); the reply says the process is ready or where a code block failed. Later
//! requests are binary: an expression (its source and parameters are sent once per
//! process, then only its number), the trees it reads, and one or more bindings of its
//! parameters; the reply has one result per binding. `runner.py` documents the layout.
//!
//! ## Trees
//!
//! Fandango's trees have a node per symbol: a nonterminal's children are the symbols
//! of the alternative it took, in order (groups, repetitions and options flattened
//! into it); terminals are leaves holding their value. thicket's trees have a node per
//! grammar expression, so a tree is sent with only its rule (`Ref`) and terminal nodes,
//! in preorder arrays, and the runner makes Python nodes of them when an expression
//! looks at them. A tree is sent to a process once and kept there (in
//! [`PythonConfig::tree_slots`] slots, least recently used first out), keyed by a hash
//! of its encoding: the solver evaluates many expressions on one tree in a row, and a
//! call on a tree the process keeps sends a few bytes. A call prefers an idle process
//! that keeps its tree.
//!
//! The Python class behaves as Fandango's `DerivationTree` does in specs: `symbol`
//! (`.name()` is `<x>`), `children`, `parent`, `str()`, `bytes()`, `int()`, `float()`,
//! `len()` (the number of children), `value()`, `to_string()`, `to_bytes()`,
//! `to_int()`, `to_bits()`, `is_terminal`, `is_non_terminal`, indexing and slicing
//! children, iteration, `find_subtrees`, `find_all_trees`, `get_index`, equality by
//! structure (symbols and terminal values) and with a str, bytes or int by value, and
//! the methods of str, bytes and int (`startswith`, `+`, `<`, `in`, ...) applied to the
//! value. Where Fandango has a property and its documentation a method (`is_terminal`,
//! `children`, `parent`), both spellings work. The names Fandango puts in the spec's
//! namespace are there too (`is_before`, `is_after`, `DerivationTree`, `NonTerminal`,
//! and the modules its I/O module exports: `re`, `os`, `sys`, `time`, ...); its
//! protocol parties are not.
//!
//! What a terminal holds — text, bytes or a bit — is [`PythonConfig::terminal_kinds`]'s
//! to say (a byte string literal `b"..."` in the spec is bytes, `0` and `1` are bits);
//! a terminal it does not cover is text if it is UTF-8, else bytes.
//!
//! ## Judging
//!
//! Fandango judges a constraint by its value's truthiness; thicket is explicit: `True`
//! and `False` are themselves, `None` is false (what `re.match` returns when it fails)
//! and a regex match true; any other value (an int, a str, a tree) is an error naming
//! the value, since it is almost always a mistake (`len(<x>)` for `len(<x>) > 0`). An
//! exception is an error with its type, message and the spec line it was raised at. A
//! call that runs longer than [`PythonConfig::call_timeout`] is interrupted (the error
//! says where it was) and its process killed and replaced, so state a half-finished
//! call left behind is gone; code that never returns to the interpreter is killed a
//! moment later. Processes that die are replaced; nothing hangs.
//!
//! ## Reproducibility
//!
//! Every process seeds `random` with [`PythonConfig::seed`] before it runs the code
//! blocks. A generator call reseeds `random` (and Faker, if the spec imported it) from
//! the host's seed ([`PythonHost::set_seed`]) and the caller's call index, so a
//! generator's output depends on the seed and the call, not on which process ran it or
//! what ran before.

#![warn(missing_docs)]

mod process;
mod sys;
mod tree;

use process::{CallError, Process, Spawner, human};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
pub use thicket_constraint::host::{Host, HostArg, HostError, HostExpr};
use thicket_grammar::Grammar;
use thicket_tree::{DerivationTree, NodeId};
use tree::{FlatTree, TreeKey, flatten};

/// The runner's source, shipped inside the binary.
pub const RUNNER: &str = include_str!("runner.py");

/// The environment variable naming the interpreter (default `python3` from `PATH`).
pub const PYTHON_ENV: &str = "THICKET_PYTHON";

/// One block of Python code from a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeBlock {
    /// The spec file's name, as errors and tracebacks show it.
    pub file: String,
    /// The line of the file the block's first line is (1-based).
    pub line: u32,
    /// The code.
    pub source: String,
}

impl CodeBlock {
    /// A block of `source` starting at line `line` of `file`.
    pub fn new(file: impl Into<String>, line: u32, source: impl Into<String>) -> CodeBlock {
        CodeBlock {
            file: file.into(),
            line,
            source: source.into(),
        }
    }
}

/// What a terminal of the grammar holds, as Python sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TerminalKind {
    /// Text if its bytes are UTF-8, else bytes.
    #[default]
    Auto,
    /// Text (`"..."` in a spec): a `str`, decoded as UTF-8 (bytes that are not UTF-8
    /// make it bytes after all).
    Text,
    /// Bytes (`b"..."` in a spec).
    Bytes,
    /// A bit (`0` or `1` in a spec): its text is one byte, `0`/`1` as a digit or as a
    /// value; anything else makes it bytes.
    Bit,
}

/// How [`PythonHost`] runs Python.
#[derive(Clone, Debug)]
pub struct PythonConfig {
    /// The interpreter: `$THICKET_PYTHON` if set, else `python3` from `PATH`.
    pub python: PathBuf,
    /// How long one evaluation may take (default 2 s).
    pub call_timeout: Duration,
    /// How long a process may take to run the code blocks (imports included) and
    /// report ready (default 60 s).
    pub start_timeout: Duration,
    /// The address space of each process, in bytes (default 4 GiB; `None`: no limit).
    pub memory_limit: Option<u64>,
    /// The most processes at once (0: the machine's available parallelism).
    pub max_processes: usize,
    /// The seed of `random` when the code blocks run (default 0).
    pub seed: u64,
    /// What each terminal holds, indexed by [`ExprId::index`](thicket_grammar::ExprId::index)
    /// of the grammar the trees come from; missing entries are [`TerminalKind::Auto`].
    pub terminal_kinds: Vec<TerminalKind>,
    /// Which construct needs Python, for the error when it cannot be started (default
    /// "the spec's Python code").
    pub needed_for: String,
    /// Discard what spec code prints (default: it goes to thicket's stderr).
    pub quiet: bool,
    /// How many trees each process keeps (default 32, at least 4).
    pub tree_slots: usize,
}

impl Default for PythonConfig {
    fn default() -> Self {
        PythonConfig {
            python: std::env::var_os(PYTHON_ENV)
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            call_timeout: Duration::from_secs(2),
            start_timeout: Duration::from_secs(60),
            memory_limit: Some(4 << 30),
            max_processes: 0,
            seed: 0,
            terminal_kinds: Vec::new(),
            needed_for: "the spec's Python code".to_string(),
            quiet: false,
            tree_slots: 32,
        }
    }
}

/// A Python value, as an expression returned it.
#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    /// `None`.
    None,
    /// A `bool`.
    Bool(bool),
    /// An `int` (one beyond 128 bits is an error).
    Int(i128),
    /// A `float`.
    Float(f64),
    /// A `str` (lone surrogates replaced).
    Str(String),
    /// `bytes` or a `bytearray`.
    Bytes(Vec<u8>),
    /// A derivation tree: its bytes.
    Tree(Vec<u8>),
}

/// Why [`PythonHost::new`] failed.
#[derive(Debug)]
pub enum StartError {
    /// The interpreter cannot be started.
    NoPython {
        /// The interpreter tried.
        python: PathBuf,
        /// Which construct needs it ([`PythonConfig::needed_for`]).
        needed_for: String,
        /// Why it cannot be started.
        error: std::io::Error,
    },
    /// A code block of the spec did not compile or raised.
    CodeBlock {
        /// The spec file.
        file: String,
        /// The line (1-based).
        line: u32,
        /// The column (1-based; 0 if unknown).
        column: u32,
        /// The error: `SyntaxError: ...`, `NameError: ...`.
        message: String,
        /// The source line.
        text: String,
    },
    /// Anything else (the interpreter ended or hung while starting, ...).
    Failed {
        /// What happened.
        message: String,
    },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::NoPython {
                python,
                needed_for,
                error,
            } => write!(
                f,
                "{needed_for} needs Python 3, but the interpreter `{}` cannot be started \
                 ({error}): install Python 3 (for example `apt install python3`) or set \
                 {PYTHON_ENV} to the interpreter's path",
                python.display()
            ),
            StartError::CodeBlock {
                file,
                line,
                column,
                message,
                text,
            } => {
                write!(f, "{file}:{line}")?;
                if *column > 0 {
                    write!(f, ":{column}")?;
                }
                write!(f, ": error in the spec's Python code: {message}")?;
                if !text.is_empty() {
                    write!(f, "\n    {text}")?;
                }
                Ok(())
            }
            StartError::Failed { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StartError::NoPython { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A parameter of a generator: a node of a tree (Fandango's generator "sources").
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The tree.
    pub tree: &'a DerivationTree,
    /// Its grammar.
    pub grammar: &'a Grammar,
    /// The node (a rule or terminal node).
    pub node: NodeId,
}

/// What a request asks of the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Judge the value as a truth value.
    Bool = 0,
    /// Return the value.
    Value = 1,
    /// Seed, then return the value.
    Generate = 2,
}

impl Mode {
    fn noun(self) -> &'static str {
        match self {
            Mode::Bool => "constraint",
            Mode::Value => "expression",
            Mode::Generate => "generator",
        }
    }
}

/// One binding's result from the runner.
#[derive(Clone)]
enum Reply {
    Value(PyValue),
    Raised { what: String, at: String },
    NotBool(String),
    BadValue(String),
    BadExpr(String),
    TimedOut { at: String },
}

struct Pool {
    idle: Vec<Process>,
    live: usize,
}

/// What a request's results depend on when it seeds nothing: the expression, how its
/// value is judged, the trees and the bindings. The spec's Python is taken to be a
/// function of them, as Fandango takes it, so a request asked again (the solver checks
/// a tree, then repairs it from the same values) is answered without a round trip.
#[derive(PartialEq, Eq, Hash)]
struct ResultKey {
    expr: u32,
    mode: u8,
    trees: Vec<TreeKey>,
    count: usize,
    bindings: Vec<u8>,
}

/// The most results kept; past it the memory starts afresh (a run moves on to other
/// trees, so old entries are rarely asked again).
const KEPT_RESULTS: usize = 1 << 14;

/// Evaluates Python expressions of a Fandango spec over derivation trees, in a pool of
/// Python processes that ran the spec's code blocks (see the crate docs).
pub struct PythonHost {
    config: PythonConfig,
    /// The configuration later processes start with: the interpreter the first one
    /// reported as its executable, so that a launcher in front of it (a pyenv shim
    /// runs a shell script or two, costing more than Python's own start) runs once.
    respawn: PythonConfig,
    init: Vec<u8>,
    max_processes: usize,
    spawner: Spawner,
    pool: Mutex<Pool>,
    available: Condvar,
    exprs: Mutex<FxHashMap<HostExpr, u32>>,
    results: Mutex<FxHashMap<ResultKey, Vec<Reply>>>,
    seed: AtomicU64,
    started: AtomicU64,
    python_version: String,
}

/// A process taken from the pool, given back (or, if it was dropped, counted out)
/// when the lease ends.
struct Lease<'h> {
    host: &'h PythonHost,
    process: Option<Process>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut pool = self.host.lock_pool();
        match self.process.take() {
            Some(process) => pool.idle.push(process),
            None => pool.live -= 1,
        }
        drop(pool);
        self.host.available.notify_one();
    }
}

/// An expression's source for messages (long ones cut).
fn shown(source: &str) -> String {
    let source = source.trim();
    if source.chars().count() <= 120 {
        source.to_string()
    } else {
        let cut: String = source.chars().take(117).collect();
        format!("{cut}...")
    }
}

fn error(message: String) -> HostError {
    HostError { message }
}

/// The seed of generator call `call` under `seed` (splitmix64 of both).
fn call_seed(seed: u64, call: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(call))
}

impl PythonHost {
    /// Starts a host for a spec with these code blocks (run in order in one namespace),
    /// starting its first process now: an error if Python cannot be started or a
    /// block does not compile or raises.
    pub fn new(blocks: Vec<CodeBlock>, config: PythonConfig) -> Result<PythonHost, StartError> {
        let mut paths: Vec<String> = Vec::new();
        for block in &blocks {
            let dir = std::path::Path::new(&block.file)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            if !paths.contains(&dir) {
                paths.push(dir);
            }
        }
        let init = serde_json::json!({
            "blocks": blocks
                .iter()
                .map(|b| serde_json::json!([b.file, b.line.max(1), b.source]))
                .collect::<Vec<_>>(),
            "seed": config.seed,
            "timeout": config.call_timeout.as_secs_f64(),
            "paths": paths,
        });
        let init = serde_json::to_vec(&init).expect("JSON of strings and numbers");
        let max_processes = if config.max_processes == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.max_processes
        };
        let spawner = Spawner::new().map_err(|e| StartError::Failed {
            message: format!("cannot start a thread: {e}"),
        })?;
        let first = Process::start(&config, &init, &spawner)?;
        let python_version = first.version().to_string();
        let mut respawn = config.clone();
        if let Some(executable) = first.executable().filter(|p| p.is_file()) {
            respawn.python = executable.to_path_buf();
        }
        Ok(PythonHost {
            seed: AtomicU64::new(config.seed),
            config,
            respawn,
            init,
            max_processes,
            spawner,
            pool: Mutex::new(Pool {
                idle: vec![first],
                live: 1,
            }),
            available: Condvar::new(),
            exprs: Mutex::new(FxHashMap::default()),
            results: Mutex::new(FxHashMap::default()),
            started: AtomicU64::new(1),
            python_version,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &PythonConfig {
        &self.config
    }

    /// The interpreter's version (`3.11.7`).
    pub fn python_version(&self) -> &str {
        &self.python_version
    }

    /// The most processes the host runs at once.
    pub fn max_processes(&self) -> usize {
        self.max_processes
    }

    /// How many processes the host has started (the first included): more than
    /// [`PythonHost::max_processes`] means some were replaced after a time-out or
    /// death.
    pub fn processes_started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Sets the seed generator calls derive theirs from (see [`PythonHost::generate`]).
    pub fn set_seed(&self, seed: u64) {
        self.seed.store(seed, Ordering::Relaxed);
    }

    /// Evaluates `expr` once per binding of its parameters (each as
    /// [`Host::eval_bool`] would), in one round trip to one process: what a quantifier
    /// over many subtrees of one tree needs. A binding that times out ends the
    /// process after the others are done.
    pub fn eval_bool_many<B: AsRef<[HostArg]>>(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        bindings: &[B],
    ) -> Vec<Result<bool, HostError>> {
        let all = |e: HostError| vec![Err(e); bindings.len()];
        if bindings.is_empty() {
            return Vec::new();
        }
        let flat = match flatten(tree, grammar, &self.config.terminal_kinds) {
            Ok(flat) => flat,
            Err(e) => return all(error(e)),
        };
        let mut args = Vec::new();
        for binding in bindings {
            if let Err(e) = encode_args(expr, binding.as_ref(), &flat, &mut args) {
                return all(e);
            }
        }
        let trees = [(flat, tree.bytes())];
        match self.run(Mode::Bool, expr, &trees, &args, bindings.len(), 0) {
            Ok(replies) => replies
                .into_iter()
                .map(|r| self.judge_bool(expr, r))
                .collect(),
            Err(e) => all(e),
        }
    }

    /// Evaluates `expr` with `args` over `tree` and returns its value: for soft goals
    /// (`minimizing f(<x>)`) and computed repetition bounds (`<byte>{f(<len>)}`).
    pub fn eval_value(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<PyValue, HostError> {
        let flat = flatten(tree, grammar, &self.config.terminal_kinds).map_err(error)?;
        let mut encoded = Vec::new();
        encode_args(expr, args, &flat, &mut encoded)?;
        let reply = self.run_one(Mode::Value, expr, &[(flat, tree.bytes())], &encoded, 0)?;
        self.judge_value(Mode::Value, expr, reply)
    }

    /// Evaluates a closed expression (no parameters, no trees) in the spec's namespace:
    /// constant repetition bounds (`<byte>{SIZE * 3}`), generators without parameters.
    pub fn eval_constant(&self, source: &str) -> Result<PyValue, HostError> {
        let expr = HostExpr {
            source: source.to_string(),
            params: Vec::new(),
        };
        let reply = self.run_one(Mode::Value, &expr, &[], &[0, 0], 0)?;
        self.judge_value(Mode::Value, &expr, reply)
    }

    /// Runs generator `expr` (`:= f(<y>)`): its parameters are bound to `sources` in
    /// order (each a node of its own tree, or of a shared one). Before the call,
    /// `random` (and Faker, if imported) is seeded from the host's seed and `call`, so
    /// that the value depends on them only; the caller numbers its calls (by input and
    /// position, say) to make a run reproducible from one seed whatever the threads do.
    /// The value is what the caller parses into the nonterminal (Fandango accepts a
    /// str, bytes, an int or a tree).
    pub fn generate(
        &self,
        expr: &HostExpr,
        sources: &[Source<'_>],
        call: u64,
    ) -> Result<PyValue, HostError> {
        if sources.len() != expr.params.len() {
            return Err(error(format!(
                "generator `{}` has {} parameters but {} sources were given",
                shown(&expr.source),
                expr.params.len(),
                sources.len()
            )));
        }
        if sources.len() > u8::MAX as usize {
            return Err(error(format!(
                "generator `{}` has more than 255 parameters",
                shown(&expr.source)
            )));
        }
        let mut flats: Vec<(FlatTree, &[u8])> = Vec::with_capacity(sources.len());
        let mut encoded = Vec::new();
        encoded.extend_from_slice(&(sources.len() as u16).to_le_bytes());
        for (k, source) in sources.iter().enumerate() {
            let flat =
                flatten(source.tree, source.grammar, &self.config.terminal_kinds).map_err(error)?;
            let node = flat.node(source.node).map_err(|e| {
                error(format!(
                    "generator `{}`: source {k}: {e}",
                    shown(&expr.source)
                ))
            })?;
            encoded.push(0);
            encoded.push(k as u8);
            encoded.extend_from_slice(&node.to_le_bytes());
            flats.push((flat, source.tree.bytes()));
        }
        let seed = call_seed(self.seed.load(Ordering::Relaxed), call);
        let reply = self.run_one(Mode::Generate, expr, &flats, &encoded, seed)?;
        self.judge_value(Mode::Generate, expr, reply)
    }

    fn lock_pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A process for a call, preferring an idle one that keeps tree `want`; starts one
    /// if none is idle and the pool has room, else waits for one.
    fn acquire(&self, want: Option<TreeKey>) -> Result<Lease<'_>, HostError> {
        let mut pool = self.lock_pool();
        loop {
            // A process that ended while idle (killed from outside) is replaced without
            // failing a call that never reached it.
            let before = pool.idle.len();
            pool.idle.retain_mut(|p| !p.has_ended());
            pool.live -= before - pool.idle.len();
            if !pool.idle.is_empty() {
                let pick = want
                    .and_then(|key| pool.idle.iter().rposition(|p| p.has(key)))
                    .unwrap_or(pool.idle.len() - 1);
                let process = pool.idle.remove(pick);
                return Ok(Lease {
                    host: self,
                    process: Some(process),
                });
            }
            if pool.live < self.max_processes {
                pool.live += 1;
                drop(pool);
                // From here the lease counts the process out again if starting fails.
                let mut lease = Lease {
                    host: self,
                    process: None,
                };
                let process = Process::start(&self.respawn, &self.init, &self.spawner)
                    .map_err(|e| error(format!("cannot start another Python process: {e}")))?;
                self.started.fetch_add(1, Ordering::Relaxed);
                lease.process = Some(process);
                return Ok(lease);
            }
            pool = self.available.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn expr_id(&self, expr: &HostExpr) -> u32 {
        let mut exprs = self.exprs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = exprs.get(expr) {
            return id;
        }
        let id = exprs.len() as u32;
        exprs.insert(expr.clone(), id);
        id
    }

    fn run_one(
        &self,
        mode: Mode,
        expr: &HostExpr,
        trees: &[(FlatTree, &[u8])],
        args: &[u8],
        seed: u64,
    ) -> Result<Reply, HostError> {
        let mut replies = self.run(mode, expr, trees, args, 1, seed)?;
        replies
            .pop()
            .ok_or_else(|| error("the Python runner sent no result".into()))
    }

    /// One request: `expr` over `trees` with `count` encoded bindings.
    fn run(
        &self,
        mode: Mode,
        expr: &HostExpr,
        trees: &[(FlatTree, &[u8])],
        bindings: &[u8],
        count: usize,
        seed: u64,
    ) -> Result<Vec<Reply>, HostError> {
        let id = self.expr_id(expr);
        // A generator is seeded per call: its results are not kept.
        let key = (mode != Mode::Generate).then(|| ResultKey {
            expr: id,
            mode: mode as u8,
            trees: trees.iter().map(|(t, _)| t.key).collect(),
            count,
            bindings: bindings.to_vec(),
        });
        if let Some(key) = &key
            && let Some(replies) = self.lock_results().get(key)
        {
            return Ok(replies.clone());
        }
        let replies = self.ask(id, mode, expr, trees, bindings, count, seed)?;
        // A call cut short is asked again next time.
        if let Some(key) = key
            && !replies.iter().any(|r| matches!(r, Reply::TimedOut { .. }))
        {
            let mut results = self.lock_results();
            if results.len() >= KEPT_RESULTS {
                results.clear();
            }
            results.insert(key, replies.clone());
        }
        Ok(replies)
    }

    fn lock_results(&self) -> std::sync::MutexGuard<'_, FxHashMap<ResultKey, Vec<Reply>>> {
        self.results.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one request to a process and reads its replies.
    #[allow(clippy::too_many_arguments)]
    fn ask(
        &self,
        id: u32,
        mode: Mode,
        expr: &HostExpr,
        trees: &[(FlatTree, &[u8])],
        bindings: &[u8],
        count: usize,
        seed: u64,
    ) -> Result<Vec<Reply>, HostError> {
        let mut lease = self.acquire(trees.first().map(|(t, _)| t.key))?;
        let process = lease.process.as_mut().expect("a leased process");
        let define = !process.is_defined(id);

        let mut request = Vec::with_capacity(64 + bindings.len());
        request.extend_from_slice(&[0; 4]);
        request.extend_from_slice(&[1, mode as u8, u8::from(define), trees.len() as u8]);
        request.extend_from_slice(&id.to_le_bytes());
        request.extend_from_slice(&seed.to_le_bytes());
        if define {
            request.extend_from_slice(&(expr.source.len() as u32).to_le_bytes());
            request.extend_from_slice(expr.source.as_bytes());
            request.extend_from_slice(&(expr.params.len() as u16).to_le_bytes());
            for p in &expr.params {
                let p = &p.as_bytes()[..p.len().min(u16::MAX as usize)];
                request.extend_from_slice(&(p.len() as u16).to_le_bytes());
                request.extend_from_slice(p);
            }
        }
        for (tree, text) in trees {
            let (slot, present) = process.place(tree.key);
            request.extend_from_slice(&slot.to_le_bytes());
            request.push(u8::from(!present));
            if !present {
                tree.write_payload(text, &mut request);
            }
        }
        request.extend_from_slice(&(count as u32).to_le_bytes());
        request.extend_from_slice(bindings);
        let length = (request.len() - 4) as u32;
        request[..4].copy_from_slice(&length.to_le_bytes());

        let limit = self.config.call_timeout * count.max(1) as u32;
        // The runner interrupts a call at the limit itself; this is for code that never
        // returns to the interpreter.
        let deadline = Instant::now() + limit + Duration::from_millis(500);
        let reply = match process.call(&request, deadline) {
            Ok(reply) => reply,
            Err(CallError::TimedOut) => {
                lease.process = None;
                return Err(error(format!(
                    "{} `{}` did not finish within {}: its Python process was stopped and a \
                     new one will be started",
                    mode.noun(),
                    shown(&expr.source),
                    human(limit)
                )));
            }
            Err(CallError::Ended(status)) => {
                lease.process = None;
                let mut message = format!(
                    "{} `{}`: the Python process ended during the call ({status})",
                    mode.noun(),
                    shown(&expr.source)
                );
                if let (Some(bytes), false) = (self.config.memory_limit, status.starts_with("exit"))
                {
                    message.push_str(&format!(
                        "; the memory limit of {} MiB may be too low",
                        bytes >> 20
                    ));
                }
                message.push_str("; a new one will be started");
                return Err(error(message));
            }
        };
        let replies = match parse_replies(&reply, count) {
            Some(replies) => replies,
            None => {
                lease.process = None;
                return Err(error(format!(
                    "{} `{}`: the Python runner sent a garbled reply",
                    mode.noun(),
                    shown(&expr.source)
                )));
            }
        };
        process.defined(id);
        if replies.iter().any(|r| matches!(r, Reply::TimedOut { .. })) {
            // A call cut short may have left the spec's state half-changed.
            lease.process = None;
        }
        Ok(replies)
    }

    fn common_error(&self, mode: Mode, expr: &HostExpr, reply: Reply) -> HostError {
        let noun = mode.noun();
        let source = shown(&expr.source);
        error(match reply {
            Reply::Raised { what, at } if at.is_empty() => {
                format!("{noun} `{source}` raised {what}")
            }
            Reply::Raised { what, at } => format!("{noun} `{source}` raised {what} (at {at})"),
            Reply::TimedOut { at } => {
                let mut message = format!(
                    "{noun} `{source}` did not finish within {}",
                    human(self.config.call_timeout)
                );
                if !at.is_empty() {
                    message.push_str(&format!(" (it was at {at})"));
                }
                message.push_str(": its Python process was stopped and a new one will be started");
                message
            }
            Reply::BadExpr(why) => format!("{noun} `{source}` cannot be evaluated: {why}"),
            Reply::NotBool(what) => format!(
                "{noun} `{source}` returned {what}, not a truth value (a constraint must give \
                 True or False; None counts as False and a regex match as True)"
            ),
            Reply::BadValue(what) => format!(
                "{noun} `{source}` returned {what}; expected None, a bool, an int, a float, a \
                 str, bytes or a derivation tree"
            ),
            Reply::Value(value) => format!("{noun} `{source}` returned {value:?} unexpectedly"),
        })
    }

    fn judge_bool(&self, expr: &HostExpr, reply: Reply) -> Result<bool, HostError> {
        match reply {
            Reply::Value(PyValue::Bool(b)) => Ok(b),
            other => Err(self.common_error(Mode::Bool, expr, other)),
        }
    }

    fn judge_value(&self, mode: Mode, expr: &HostExpr, reply: Reply) -> Result<PyValue, HostError> {
        match reply {
            Reply::Value(value) => Ok(value),
            other => Err(self.common_error(mode, expr, other)),
        }
    }
}

impl Host for PythonHost {
    fn eval_bool(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<bool, HostError> {
        self.eval_bool_many(expr, tree, grammar, &[args])
            .pop()
            .unwrap_or_else(|| Err(error("no result".into())))
    }

    fn eval_text(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<Vec<u8>, HostError> {
        match self.eval_value(expr, tree, grammar, args)? {
            PyValue::Str(s) => Ok(s.into_bytes()),
            PyValue::Bytes(b) | PyValue::Tree(b) => Ok(b),
            PyValue::Int(n) => Ok(n.to_string().into_bytes()),
            other => Err(error(format!(
                "`{}` should give a text, not {other:?}",
                shown(&expr.source)
            ))),
        }
    }

    fn eval_number(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<f64, HostError> {
        match self.eval_value(expr, tree, grammar, args)? {
            PyValue::Bool(b) => Ok(f64::from(u8::from(b))),
            PyValue::Int(i) => Ok(i as f64),
            PyValue::Float(f) => Ok(f),
            other => Err(error(format!(
                "`{}` is a goal, so its value must be a number, not {other:?}",
                shown(&expr.source)
            ))),
        }
    }
}

/// Appends one binding (`args` over tree 0) to `out`.
fn encode_args(
    expr: &HostExpr,
    args: &[HostArg],
    flat: &FlatTree,
    out: &mut Vec<u8>,
) -> Result<(), HostError> {
    if args.len() != expr.params.len() {
        return Err(error(format!(
            "`{}` has {} parameters but {} arguments were given",
            shown(&expr.source),
            expr.params.len(),
            args.len()
        )));
    }
    let node = |n: NodeId, i: usize| {
        flat.node(n).map_err(|e| {
            error(format!(
                "`{}`: argument {} ({}): {e}",
                shown(&expr.source),
                i + 1,
                expr.params[i]
            ))
        })
    };
    out.extend_from_slice(&(args.len() as u16).to_le_bytes());
    for (i, arg) in args.iter().enumerate() {
        match arg {
            HostArg::Tree(n) => {
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&node(*n, i)?.to_le_bytes());
            }
            HostArg::Trees(nodes) => {
                out.extend_from_slice(&[1, 0]);
                out.extend_from_slice(&(nodes.len() as u32).to_le_bytes());
                for n in nodes {
                    out.extend_from_slice(&node(*n, i)?.to_le_bytes());
                }
            }
            HostArg::Int(v) => {
                out.push(2);
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    Ok(())
}

/// The runner's results, one per binding (see `R_` in runner.py); `None` if garbled.
fn parse_replies(reply: &[u8], count: usize) -> Option<Vec<Reply>> {
    let mut out = Vec::with_capacity(count);
    let mut pos = 0;
    let take = |pos: &mut usize, n: usize| -> Option<&[u8]> {
        let bytes = reply.get(*pos..*pos + n)?;
        *pos += n;
        Some(bytes)
    };
    let blob = |pos: &mut usize| -> Option<Vec<u8>> {
        let len = u32::from_le_bytes(take(pos, 4)?.try_into().ok()?) as usize;
        Some(take(pos, len)?.to_vec())
    };
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    for _ in 0..count {
        let tag = *take(&mut pos, 1)?.first()?;
        out.push(match tag {
            0 => Reply::Value(PyValue::Bool(false)),
            1 => Reply::Value(PyValue::Bool(true)),
            2 => Reply::Value(PyValue::None),
            3 => Reply::Value(PyValue::Int(i128::from_le_bytes(
                take(&mut pos, 16)?.try_into().ok()?,
            ))),
            4 => Reply::Value(PyValue::Float(f64::from_le_bytes(
                take(&mut pos, 8)?.try_into().ok()?,
            ))),
            5 => Reply::Value(PyValue::Str(text(blob(&mut pos)?))),
            6 => Reply::Value(PyValue::Bytes(blob(&mut pos)?)),
            7 => Reply::Value(PyValue::Tree(blob(&mut pos)?)),
            16 => {
                let message = text(blob(&mut pos)?);
                let (what, at) = message.split_once('\0').unwrap_or((&message, ""));
                Reply::Raised {
                    what: what.to_string(),
                    at: at.to_string(),
                }
            }
            17 => Reply::NotBool(text(blob(&mut pos)?)),
            18 => Reply::BadValue(text(blob(&mut pos)?)),
            19 => Reply::BadExpr(text(blob(&mut pos)?)),
            20 => Reply::TimedOut {
                at: text(blob(&mut pos)?),
            },
            _ => return None,
        });
    }
    (pos == reply.len()).then_some(out)
}
