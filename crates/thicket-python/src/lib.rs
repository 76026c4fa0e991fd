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
//! A binding is sent with only the smallest subtree that holds its arguments, as a
//! tree of its own, and its result is kept for that subtree: the runner reports a call
//! that looked above it (asked for its root's parent, or the root), and such a call is
//! evaluated again over the whole tree (see `PythonHost::evaluate`). Several requests
//! can go in one message (a batch: a tree's generators).
//!
//! A comparison the solver repairs by writing a value (tar's `str(<checksum>) ==
//! f(<header>)`, a [`Joint`] judgement) has its value side watched: the runner notes
//! whether it read inside the tree the value goes into (that tree's children or text).
//! One that did not gives the same value after the write, so the host keeps the value
//! under the part with the target's interior left out (`ExpectedKey`) and answers the
//! judgement after the write from it, without Python. That halves the calls of a spec
//! whose function walks a whole header to compute the checksum inside it.
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
use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use thicket_constraint::host::judge_then_text;
pub use thicket_constraint::host::{Host, HostArg, HostError, HostExpr, Joint, Judged};
use thicket_grammar::{Expr, Grammar};
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
    /// The value is a pair `(verdict, value)`: judge the verdict, and where it is
    /// false return the value too.
    Judge = 3,
}

impl Mode {
    fn noun(self) -> &'static str {
        match self {
            Mode::Bool => "constraint",
            Mode::Value => "expression",
            Mode::Generate => "generator",
            Mode::Judge => "constraint",
        }
    }
}

/// One binding's result from the runner.
#[derive(Clone, Debug)]
enum Reply {
    Value(PyValue),
    /// A false verdict and the value that came with it (see [`Mode::Judge`]).
    FalseWith {
        value: Box<Reply>,
        /// The value side read nothing inside the tree it is written into, and gave
        /// a str (see [`Joint`]).
        target_free: bool,
    },
    Raised {
        what: String,
        at: String,
    },
    NotBool(String),
    BadValue(String),
    BadExpr(String),
    TimedOut {
        at: String,
    },
}

struct Pool {
    idle: Vec<Process>,
    live: usize,
}

/// What a binding's result depends on when it seeds nothing: the expression, how its
/// value is judged, the tree it was evaluated over and the binding. The spec's Python
/// is taken to be a function of them, as Fandango takes it, so a binding asked again
/// (the solver checks a tree, then repairs it from the same values) is answered
/// without a round trip. The tree is the part that holds the binding's arguments when
/// the call never looked above that part (see [`PythonHost::evaluate`]), so a result
/// outlives edits elsewhere in the tree.
#[derive(PartialEq, Eq, Hash)]
struct ResultKey {
    expr: u32,
    mode: u8,
    tree: Option<TreeKey>,
    binding: Vec<u8>,
}

/// What the value of a joint judgement ([`Joint`]) depends on when its value side read
/// nothing inside its target: the expression, the part of the tree it was evaluated
/// over with the target's interior left out, and the binding (nodes counted in that
/// part). The repair that writes the value changes only the target's interior, so the
/// judgement that follows is answered from the value kept under this key: true where
/// the target's text is now the value (see [`PythonHost::expectation`]).
#[derive(PartialEq, Eq, Hash)]
struct ExpectedKey {
    expr: u32,
    part: (u64, usize),
    binding: Vec<u8>,
}

/// One request to a runner: an expression over trees, with its bindings encoded.
struct Request<'a> {
    id: u32,
    mode: Mode,
    expr: &'a HostExpr,
    trees: Vec<(&'a FlatTree, &'a [u8])>,
    bindings: Vec<u8>,
    count: usize,
    seed: u64,
}

/// A request's replies, one per binding, and per binding whether its call looked
/// above the trees it was sent (asked for the parent of a root, or for the root).
struct Answer {
    replies: Vec<Reply>,
    above: Vec<bool>,
}

/// A tree as sent to the runner, and its text.
type TreeText<'a> = (FlatTree, &'a [u8]);

/// A binding's result, or why there is none; `None` while it is not known yet.
type Slot = Option<Result<Reply, HostError>>;

/// A generator call for [`PythonHost::generate_many`]: its expression, the nodes its
/// parameters are bound to, in order, and the call's number (see
/// [`PythonHost::generate`]).
#[derive(Clone, Debug)]
pub struct GeneratorCall<'a> {
    /// The generator's expression.
    pub expr: &'a HostExpr,
    /// The nodes its parameters are bound to.
    pub sources: Vec<Source<'a>>,
    /// The call's number, which seeds it.
    pub call: u64,
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
    /// Expressions (by id) that looked above the part of a tree they were sent: they
    /// are evaluated over whole trees.
    look_above: Mutex<FxHashSet<u32>>,
    results: Mutex<FxHashMap<ResultKey, Reply>>,
    /// The values joint judgements gave that writing into their target leaves as
    /// they are (see [`ExpectedKey`]).
    expected: Mutex<FxHashMap<ExpectedKey, Vec<u8>>>,
    /// Joint expressions (by id) whose value side has read nothing inside its target
    /// at least once: only theirs are looked up in `expected`, so no other judgement
    /// hashes its tree for a key.
    target_free: Mutex<FxHashSet<u32>>,
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

/// A result missing from the runner's reply.
fn no_result() -> HostError {
    error("the Python runner sent no result".into())
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
            look_above: Mutex::new(FxHashSet::default()),
            results: Mutex::new(FxHashMap::default()),
            expected: Mutex::new(FxHashMap::default()),
            target_free: Mutex::new(FxHashSet::default()),
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
        self.evaluate(Mode::Bool, expr, tree, grammar, bindings)
            .into_iter()
            .map(|r| r.and_then(|reply| self.judge_bool(expr, reply)))
            .collect()
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
        let reply = self.evaluate_one(Mode::Value, expr, tree, grammar, args)?;
        self.judge_value(Mode::Value, expr, reply)
    }

    /// Evaluates a closed expression (no parameters, no trees) in the spec's namespace:
    /// constant repetition bounds (`<byte>{SIZE * 3}`), generators without parameters.
    pub fn eval_constant(&self, source: &str) -> Result<PyValue, HostError> {
        let expr = HostExpr {
            source: source.to_string(),
            params: Vec::new(),
        };
        let id = self.expr_id(&expr);
        let key = ResultKey {
            expr: id,
            mode: Mode::Value as u8,
            tree: None,
            binding: vec![0, 0],
        };
        let kept = self.lock_results().get(&key).cloned();
        let reply = match kept {
            Some(reply) => reply,
            None => {
                let request = Request {
                    id,
                    mode: Mode::Value,
                    expr: &expr,
                    trees: Vec::new(),
                    bindings: key.binding.clone(),
                    count: 1,
                    seed: 0,
                };
                let reply = self
                    .ask(&[request])?
                    .pop()
                    .and_then(|a| a.replies.into_iter().next())
                    .ok_or_else(no_result)?;
                self.keep(key, &reply);
                reply
            }
        };
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
        let call = GeneratorCall {
            expr,
            sources: sources.to_vec(),
            call,
        };
        self.generate_many(&[call])
            .pop()
            .unwrap_or_else(|| Err(no_result()))
    }

    /// Runs several generator calls (each as [`PythonHost::generate`] runs it) in one
    /// round trip to one process: the generated nodes of one tree. The results are in
    /// the order of `calls`; a call that times out ends the process after the others
    /// are done.
    pub fn generate_many(&self, calls: &[GeneratorCall<'_>]) -> Vec<Result<PyValue, HostError>> {
        let mut results: Vec<Option<Result<PyValue, HostError>>> = vec![None; calls.len()];
        // Each call's trees and encoded sources, or why it cannot be made.
        let mut prepared: Vec<(usize, Vec<TreeText<'_>>, Vec<u8>)> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            match self.prepare_generator(call) {
                Ok((flats, encoded)) => prepared.push((i, flats, encoded)),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let seed = self.seed.load(Ordering::Relaxed);
        let requests: Vec<Request<'_>> = prepared
            .iter()
            .map(|(i, flats, encoded)| {
                let expr = calls[*i].expr;
                Request {
                    id: self.expr_id(expr),
                    mode: Mode::Generate,
                    expr,
                    trees: flats.iter().map(|(f, text)| (f, *text)).collect(),
                    bindings: encoded.clone(),
                    count: 1,
                    seed: call_seed(seed, calls[*i].call),
                }
            })
            .collect();
        if !requests.is_empty() {
            match self.ask(&requests) {
                Ok(answers) => {
                    for ((i, _, _), answer) in prepared.iter().zip(answers) {
                        let expr = calls[*i].expr;
                        results[*i] = Some(match answer.replies.into_iter().next() {
                            Some(reply) => self.judge_value(Mode::Generate, expr, reply),
                            None => Err(no_result()),
                        });
                    }
                }
                Err(e) => {
                    for (i, _, _) in &prepared {
                        results[*i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(no_result())))
            .collect()
    }

    /// A generator call's trees (each source's whole tree) and its encoded binding.
    fn prepare_generator<'c>(
        &self,
        call: &GeneratorCall<'c>,
    ) -> Result<(Vec<TreeText<'c>>, Vec<u8>), HostError> {
        let (expr, sources) = (call.expr, &call.sources);
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
        let mut flats: Vec<TreeText<'c>> = Vec::with_capacity(sources.len());
        let mut encoded = Vec::new();
        encoded.extend_from_slice(&(sources.len() as u16).to_le_bytes());
        for (k, source) in sources.iter().enumerate() {
            let flat = flatten(
                source.tree,
                source.tree.root(),
                source.grammar,
                &self.config.terminal_kinds,
            )
            .map_err(error)?;
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
        Ok((flats, encoded))
    }

    /// Evaluates `expr` once per binding over `tree`, from the results kept where it
    /// can, asking the runner the rest in one round trip.
    ///
    /// Each binding is evaluated over the smallest part of the tree that holds its
    /// arguments (a subtree rooted at a rule or terminal node), sent as a tree of its
    /// own, and its result is kept for that part: an edit elsewhere in the tree leaves
    /// it standing. That is sound because the runner reports every call that looked
    /// above the part it was sent (the parent of its root, or its root): a call that
    /// never did read nothing but the part (Python reaches other nodes only through
    /// parents), so with the spec's Python a function of what it reads, its result is
    /// the same in every tree that has this part. A call that did look above is
    /// evaluated again over the whole tree, and the expression from then on always is.
    fn evaluate<B: AsRef<[HostArg]>>(
        &self,
        mode: Mode,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        bindings: &[B],
    ) -> Vec<Result<Reply, HostError>> {
        let id = self.expr_id(expr);
        let mut results: Vec<Slot> = vec![None; bindings.len()];
        let kinds = &self.config.terminal_kinds;
        if !self.looks_above(id) {
            // The distinct parts, each flattened once, and the bindings over each.
            let mut parts: Vec<(NodeId, FlatTree, Vec<usize>)> = Vec::new();
            for (i, binding) in bindings.iter().enumerate() {
                let Some(root) = holder(tree, grammar, binding.as_ref()) else {
                    continue;
                };
                if root == tree.root() {
                    continue;
                }
                if let Some(part) = parts.iter_mut().find(|p| p.0 == root) {
                    part.2.push(i);
                } else if let Ok(flat) = flatten(tree, root, grammar, kinds) {
                    parts.push((root, flat, vec![i]));
                }
            }
            let groups: Vec<(&FlatTree, &[u8], &[usize])> = parts
                .iter()
                .map(|(root, flat, of)| (flat, tree.text(*root), of.as_slice()))
                .collect();
            if self.answer(id, mode, expr, &groups, bindings, false, &mut results) {
                self.lock_above().insert(id);
            }
        }
        let rest: Vec<usize> = (0..bindings.len())
            .filter(|&i| results[i].is_none())
            .collect();
        if !rest.is_empty() {
            match flatten(tree, tree.root(), grammar, kinds) {
                Ok(flat) => {
                    let groups = [(&flat, tree.bytes(), rest.as_slice())];
                    self.answer(id, mode, expr, &groups, bindings, true, &mut results);
                }
                Err(e) => {
                    for i in rest {
                        results[i] = Some(Err(error(e.clone())));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(no_result())))
            .collect()
    }

    /// [`PythonHost::evaluate`] with one binding.
    fn evaluate_one(
        &self,
        mode: Mode,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<Reply, HostError> {
        self.evaluate(mode, expr, tree, grammar, &[args])
            .pop()
            .unwrap_or_else(|| Err(no_result()))
    }

    /// Fills in the results of `groups`' bindings (indices into `bindings`, over the
    /// group's tree) from the results kept, asking the runner the rest in one round
    /// trip. Unless the trees are `whole`, a call that looked above its tree leaves its
    /// result out; returns whether one did.
    #[allow(clippy::too_many_arguments)]
    fn answer<B: AsRef<[HostArg]>>(
        &self,
        id: u32,
        mode: Mode,
        expr: &HostExpr,
        groups: &[(&FlatTree, &[u8], &[usize])],
        bindings: &[B],
        whole: bool,
        results: &mut [Slot],
    ) -> bool {
        let mut requests = Vec::new();
        let mut asked: Vec<Vec<(usize, ResultKey)>> = Vec::new();
        for &(flat, text, of) in groups {
            let mut encoded = Vec::new();
            let mut keys = Vec::new();
            for &i in of {
                let mut binding = Vec::new();
                if let Err(e) = encode_args(expr, bindings[i].as_ref(), flat, &mut binding) {
                    results[i] = Some(Err(e));
                    continue;
                }
                let key = ResultKey {
                    expr: id,
                    mode: mode as u8,
                    tree: Some(flat.key),
                    binding,
                };
                if let Some(reply) = self.lock_results().get(&key) {
                    results[i] = Some(Ok(reply.clone()));
                    continue;
                }
                encoded.extend_from_slice(&key.binding);
                keys.push((i, key));
            }
            if !keys.is_empty() {
                requests.push(Request {
                    id,
                    mode,
                    expr,
                    trees: vec![(flat, text)],
                    bindings: encoded,
                    count: keys.len(),
                    seed: 0,
                });
                asked.push(keys);
            }
        }
        if requests.is_empty() {
            return false;
        }
        let mut looked_above = false;
        match self.ask(&requests) {
            Ok(answers) => {
                for (answer, keys) in answers.into_iter().zip(asked) {
                    let replies = answer.replies.into_iter().zip(answer.above);
                    for ((reply, above), (i, key)) in replies.zip(keys) {
                        if above && !whole {
                            looked_above = true;
                            continue;
                        }
                        self.keep(key, &reply);
                        results[i] = Some(Ok(reply));
                    }
                }
            }
            Err(e) => {
                for (i, _) in asked.into_iter().flatten() {
                    results[i] = Some(Err(e.clone()));
                }
            }
        }
        looked_above
    }

    /// Keeps a result, unless the call was cut short (then it is asked again next
    /// time).
    fn keep(&self, key: ResultKey, reply: &Reply) {
        if matches!(reply, Reply::TimedOut { .. }) {
            return;
        }
        let mut results = self.lock_results();
        if results.len() >= KEPT_RESULTS {
            results.clear();
        }
        results.insert(key, reply.clone());
    }

    fn looks_above(&self, id: u32) -> bool {
        self.lock_above().contains(&id)
    }

    fn lock_above(&self) -> std::sync::MutexGuard<'_, FxHashSet<u32>> {
        self.look_above.lock().unwrap_or_else(|e| e.into_inner())
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

    fn lock_target_free(&self) -> std::sync::MutexGuard<'_, FxHashSet<u32>> {
        self.target_free.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_expected(&self) -> std::sync::MutexGuard<'_, FxHashMap<ExpectedKey, Vec<u8>>> {
        self.expected.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key a joint judgement's value is kept under if its value side reads nothing
    /// inside its target, and the target; `None` where no value is kept: the target is
    /// not one tree, another argument lies inside it, or it holds other than text (a
    /// kept value is a str's text, see `_watched` in runner.py). The part is the one
    /// [`PythonHost::evaluate`] sends: the whole tree if `whole`, else the holder of
    /// the arguments.
    fn expectation(
        &self,
        id: u32,
        joint: &Joint,
        whole: bool,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Option<(ExpectedKey, NodeId)> {
        let &HostArg::Tree(target) = args.get(joint.target)? else {
            return None;
        };
        std::str::from_utf8(tree.text(target)).ok()?;
        let kinds = &self.config.terminal_kinds;
        let text_only = tree.descendants(target).all(|n| {
            matches!(
                kinds.get(tree.expr(n).index()).copied().unwrap_or_default(),
                TerminalKind::Auto | TerminalKind::Text
            )
        });
        if !text_only {
            return None;
        }
        let root = match whole {
            true => tree.root(),
            false => holder(tree, grammar, args).unwrap_or(tree.root()),
        };
        let (base, end) = (root.index(), tree.subtree_end(root));
        let (t, t_end) = (target.index(), tree.subtree_end(target));
        if t < base || t_end > end {
            return None;
        }
        // Nodes counted in the part with the target's interior left out.
        let interior = t_end - t - 1;
        let rank = |n: NodeId| -> Option<u64> {
            let i = n.index();
            match i {
                _ if i < base || i >= end => None,
                _ if i <= t => Some((i - base) as u64),
                _ if i >= t_end => Some((i - base - interior) as u64),
                _ => None,
            }
        };
        let mut binding = Vec::new();
        for arg in args {
            match arg {
                HostArg::Tree(n) => {
                    binding.push(0);
                    binding.extend_from_slice(&rank(*n)?.to_le_bytes());
                }
                HostArg::Trees(nodes) => {
                    binding.push(1);
                    binding.extend_from_slice(&(nodes.len() as u64).to_le_bytes());
                    for n in nodes {
                        binding.extend_from_slice(&rank(*n)?.to_le_bytes());
                    }
                }
                HostArg::Int(v) => {
                    binding.push(2);
                    binding.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        // The part in preorder, each node by its expression and depth, each leaf with
        // its text: that determines the tree. The root by its rule, as Python sees it:
        // each reference to a rule is an expression of its own.
        let mut hasher = std::hash::DefaultHasher::new();
        if let Expr::Ref(symbol) = grammar.expr(tree.expr(root)) {
            hasher.write_usize(symbol.index());
        }
        let mut open: Vec<usize> = Vec::new();
        let mut i = base;
        while i < end {
            while open.last().is_some_and(|&e| e <= i) {
                open.pop();
            }
            let node = NodeId::from_index(i);
            let node_end = tree.subtree_end(node);
            if i > base {
                hasher.write_u64(tree.expr(node).index() as u64 | (open.len() as u64) << 32);
            }
            if i == t {
                hasher.write_u8(0xfe);
                i = t_end;
                continue;
            }
            if node_end == i + 1 {
                let text = tree.text(node);
                hasher.write_usize(text.len());
                hasher.write(text);
            } else {
                open.push(node_end);
            }
            i += 1;
        }
        let key = ExpectedKey {
            expr: id,
            part: (hasher.finish(), end - base - interior),
            binding,
        };
        Some((key, target))
    }

    fn lock_results(&self) -> std::sync::MutexGuard<'_, FxHashMap<ResultKey, Reply>> {
        self.results.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `requests` to one process, in one message (a batch if there are several),
    /// and reads their answers, in order.
    fn ask(&self, requests: &[Request<'_>]) -> Result<Vec<Answer>, HostError> {
        let Some(first) = requests.first() else {
            return Ok(Vec::new());
        };
        let mut lease = self.acquire(first.trees.first().map(|(t, _)| t.key))?;
        let process = lease.process.as_mut().expect("a leased process");

        let batch = requests.len() > 1;
        let mut message = Vec::with_capacity(64);
        message.extend_from_slice(&[0; 4]);
        if batch {
            message.push(2);
            message.extend_from_slice(&(requests.len() as u32).to_le_bytes());
        }
        for request in requests {
            let at = message.len();
            if batch {
                message.extend_from_slice(&[0; 4]);
            }
            encode_request(process, request, &mut message);
            if batch {
                let length = (message.len() - at - 4) as u32;
                message[at..at + 4].copy_from_slice(&length.to_le_bytes());
            }
        }
        let length = (message.len() - 4) as u32;
        message[..4].copy_from_slice(&length.to_le_bytes());

        let calls: usize = requests.iter().map(|r| r.count.max(1)).sum();
        let limit = self.config.call_timeout * calls.min(u32::MAX as usize) as u32;
        // The runner interrupts a call at the limit itself; this is for code that never
        // returns to the interpreter.
        let deadline = Instant::now() + limit + Duration::from_millis(500);
        let (mode, expr) = (first.mode, first.expr);
        let reply = match process.call(&message, deadline) {
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
        let answers = if batch {
            parse_batch(&reply, requests)
        } else {
            parse_answer(&reply, first.count).map(|a| vec![a])
        };
        let Some(answers) = answers else {
            lease.process = None;
            return Err(error(format!(
                "{} `{}`: the Python runner sent a garbled reply",
                mode.noun(),
                shown(&expr.source)
            )));
        };
        if answers
            .iter()
            .flat_map(|a| &a.replies)
            .any(|r| matches!(r, Reply::TimedOut { .. }))
        {
            // A call cut short may have left the spec's state half-changed.
            lease.process = None;
        }
        Ok(answers)
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
            Reply::FalseWith { value, .. } => {
                format!(
                    "{noun} `{source}` returned a verdict with a value unexpectedly ({value:?})"
                )
            }
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
        self.evaluate_one(Mode::Bool, expr, tree, grammar, args)
            .and_then(|reply| self.judge_bool(expr, reply))
    }

    fn eval_text(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<Vec<u8>, HostError> {
        text_of(expr, self.eval_value(expr, tree, grammar, args)?)
    }

    fn eval_bool_then_text(
        &self,
        expr: &HostExpr,
        value: &HostExpr,
        joint: Option<&Joint>,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Judged {
        let Some(joint) = joint else {
            return judge_then_text(self, expr, value, tree, grammar, args);
        };
        let id = self.expr_id(&joint.expr);
        let whole = self.looks_above(id);
        let keyed = || self.expectation(id, joint, whole, tree, grammar, args);
        let lookup = self.lock_target_free().contains(&id);
        let expectation = if lookup { keyed() } else { None };
        if let Some((key, target)) = &expectation
            && let Some(kept) = self.lock_expected().get(key)
        {
            return if tree.text(*target) == kept.as_slice() {
                (Ok(true), None)
            } else {
                (Ok(false), Some(Ok(kept.clone())))
            };
        }
        let reply = self.evaluate_one(Mode::Judge, &joint.expr, tree, grammar, args);
        // Errors name the comparison as written, not the joint expression.
        match reply {
            Ok(Reply::FalseWith {
                value: reply,
                target_free,
            }) => {
                let text = self
                    .judge_value(Mode::Value, value, *reply)
                    .and_then(|v| text_of(value, v));
                // A call that looked above its part was evaluated over the whole tree:
                // the key, made for the part, does not cover what it read.
                if let (true, Ok(text), false) = (target_free, &text, self.looks_above(id) != whole)
                    && let Some((key, _)) = expectation.or_else(keyed)
                {
                    let mut expected = self.lock_expected();
                    if expected.len() >= KEPT_RESULTS {
                        expected.clear();
                    }
                    expected.insert(key, text.clone());
                    drop(expected);
                    self.lock_target_free().insert(id);
                }
                (Ok(false), Some(text))
            }
            Ok(reply) => (self.judge_bool(expr, reply), None),
            Err(e) => (Err(e), None),
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

/// The text a subtree with `expr`'s value would have (see [`Host::eval_text`]).
fn text_of(expr: &HostExpr, value: PyValue) -> Result<Vec<u8>, HostError> {
    match value {
        PyValue::Str(s) => Ok(s.into_bytes()),
        PyValue::Bytes(b) | PyValue::Tree(b) => Ok(b),
        PyValue::Int(n) => Ok(n.to_string().into_bytes()),
        other => Err(error(format!(
            "`{}` should give a text, not {other:?}",
            shown(&expr.source)
        ))),
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

/// Appends `request` (an op-1 message of runner.py's `evaluate`, without its length) to
/// `out`, with the expression's definition and the trees the process lacks; the
/// process's records of both are updated (a failed call drops the process).
fn encode_request(process: &mut Process, request: &Request<'_>, out: &mut Vec<u8>) {
    let define = !process.is_defined(request.id);
    out.extend_from_slice(&[
        1,
        request.mode as u8,
        u8::from(define),
        request.trees.len() as u8,
    ]);
    out.extend_from_slice(&request.id.to_le_bytes());
    out.extend_from_slice(&request.seed.to_le_bytes());
    if define {
        let expr = request.expr;
        out.extend_from_slice(&(expr.source.len() as u32).to_le_bytes());
        out.extend_from_slice(expr.source.as_bytes());
        out.extend_from_slice(&(expr.params.len() as u16).to_le_bytes());
        for p in &expr.params {
            let p = &p.as_bytes()[..p.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(p.len() as u16).to_le_bytes());
            out.extend_from_slice(p);
        }
        process.defined(request.id);
    }
    for (tree, text) in &request.trees {
        let (slot, present) = process.place(tree.key);
        out.extend_from_slice(&slot.to_le_bytes());
        out.push(u8::from(!present));
        if !present {
            tree.write_payload(text, out);
        }
    }
    out.extend_from_slice(&(request.count as u32).to_le_bytes());
    out.extend_from_slice(&request.bindings);
}

/// The answers to a batch (see `evaluate_batch` in runner.py); `None` if garbled.
fn parse_batch(reply: &[u8], requests: &[Request<'_>]) -> Option<Vec<Answer>> {
    let mut answers = Vec::with_capacity(requests.len());
    let mut pos = 0;
    for request in requests {
        let length = u32::from_le_bytes(reply.get(pos..pos + 4)?.try_into().ok()?) as usize;
        pos += 4;
        answers.push(parse_answer(reply.get(pos..pos + length)?, request.count)?);
        pos += length;
    }
    (pos == reply.len()).then_some(answers)
}

/// One request's answer: its results, then a byte per binding saying whether the call
/// looked above its trees; `None` if garbled.
fn parse_answer(reply: &[u8], count: usize) -> Option<Answer> {
    let cut = reply.len().checked_sub(count)?;
    let replies = parse_replies(&reply[..cut], count)?;
    let above = reply[cut..].iter().map(|&b| b != 0).collect();
    Some(Answer { replies, above })
}

/// The smallest subtree of `tree` rooted at a rule or terminal node that holds every
/// node `args` names; `None` if they name none (or one outside the tree).
fn holder(tree: &DerivationTree, grammar: &Grammar, args: &[HostArg]) -> Option<NodeId> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for arg in args {
        let nodes: &[NodeId] = match arg {
            HostArg::Tree(n) => std::slice::from_ref(n),
            HostArg::Trees(nodes) => nodes,
            HostArg::Int(_) => &[],
        };
        for n in nodes {
            lo = lo.min(n.index());
            hi = hi.max(n.index());
        }
    }
    if lo == usize::MAX || hi >= tree.len() {
        return None;
    }
    tree.path_to(NodeId::from_index(lo))
        .into_iter()
        .rev()
        .find(|&n| {
            tree.subtree_end(n) > hi
                && matches!(
                    grammar.expr(tree.expr(n)),
                    Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_)
                )
        })
}

/// The runner's results, one per binding (see `R_` in runner.py); `None` if garbled.
fn parse_replies(reply: &[u8], count: usize) -> Option<Vec<Reply>> {
    let mut pos = 0;
    let out = (0..count)
        .map(|_| parse_reply(reply, &mut pos))
        .collect::<Option<Vec<Reply>>>()?;
    (pos == reply.len()).then_some(out)
}

/// One result from `reply` at `pos`, which moves past it; `None` if garbled.
fn parse_reply(reply: &[u8], pos: &mut usize) -> Option<Reply> {
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
    let tag = *take(pos, 1)?.first()?;
    Some(match tag {
        0 => Reply::Value(PyValue::Bool(false)),
        1 => Reply::Value(PyValue::Bool(true)),
        2 => Reply::Value(PyValue::None),
        3 => Reply::Value(PyValue::Int(i128::from_le_bytes(
            take(pos, 16)?.try_into().ok()?,
        ))),
        4 => Reply::Value(PyValue::Float(f64::from_le_bytes(
            take(pos, 8)?.try_into().ok()?,
        ))),
        5 => Reply::Value(PyValue::Str(text(blob(pos)?))),
        6 => Reply::Value(PyValue::Bytes(blob(pos)?)),
        7 => Reply::Value(PyValue::Tree(blob(pos)?)),
        16 => {
            let message = text(blob(pos)?);
            let (what, at) = message.split_once('\0').unwrap_or((&message, ""));
            Reply::Raised {
                what: what.to_string(),
                at: at.to_string(),
            }
        }
        17 => Reply::NotBool(text(blob(pos)?)),
        18 => Reply::BadValue(text(blob(pos)?)),
        19 => Reply::BadExpr(text(blob(pos)?)),
        20 => Reply::TimedOut {
            at: text(blob(pos)?),
        },
        // A false verdict, then its value's own result.
        21 | 22 => Reply::FalseWith {
            value: Box::new(parse_reply(reply, pos)?),
            target_free: tag == 22,
        },
        _ => return None,
    })
}
