//! The program under test on the command line: shared by `fuzz` and `coverage`.

use clap::{Args, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use thicket_exec::{
    Classifier, ExecError, Executor, InputMode, JavaProgram, Mode, ProgramConfig, PythonProgram,
};

/// Which program to run on the inputs, and how.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// The program and its arguments, after `--`; `@@` stands for a file holding the
    /// input (else the input goes to stdin).
    #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString))]
    pub command: Vec<OsString>,

    /// Test a Python function instead of a program: `module:function` or
    /// `path/to/file.py:function`, called with each input in one long-lived interpreter
    /// with line and branch coverage (needs `pip install coverage`).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub python: Option<String>,

    /// With --python: measure only files matching this glob (coverage.py `include`),
    /// e.g. `*/json/*`; may be repeated [default: the target function's own package,
    /// e.g. `.../urllib/*` for `urllib.parse:urlsplit`, or the folder of a
    /// `file.py:function`].
    #[arg(long, value_name = "GLOB", requires = "python")]
    pub python_include: Vec<String>,

    /// With --python: pass inputs as `bytes` rather than `str` (with `str`, mutations
    /// keep inputs valid UTF-8 text).
    #[arg(long, requires = "python")]
    pub python_bytes: bool,

    /// With --python: the target's tokenizer, `module:callable` (e.g.
    /// `esprima.scanner:Scanner.lex`): the equality tests the target makes on the
    /// values of the tokens it returns are recorded per run (the token-level path
    /// condition that `fuzz --strategy whitebox` negates).
    #[arg(long, value_name = "MODULE:CALLABLE", requires = "python")]
    pub tokenizer: Option<String>,

    /// With --python: the interpreter.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "python3",
        requires = "python"
    )]
    pub python_exe: PathBuf,

    /// Test a Java method instead of a program: `CLASS.METHOD`, a static method taking
    /// one `String` or `byte[]`, called with each input in one long-lived JVM with method
    /// and line coverage from JaCoCo (needs a JDK and Debian's libjacoco-java); with
    /// --classpath.
    #[arg(long, value_name = "CLASS.METHOD", conflicts_with = "python")]
    pub java: Option<String>,

    /// With --java: the subject's classpath (jars and folders, `:`-separated).
    #[arg(long, value_name = "CP", requires = "java")]
    pub classpath: Option<String>,

    /// With --java: measure only classes matching this JaCoCo pattern (`*` and `?`
    /// wildcards over dotted class names), e.g. `com.google.gson.*`; may be repeated
    /// [default: every class outside the JDK: all of the classpath is the subject].
    #[arg(long, value_name = "PATTERN", requires = "java")]
    pub java_includes: Vec<String>,

    /// How the input reaches the program [default: file if an argument contains @@,
    /// else stdin].
    #[arg(long, value_enum, value_name = "HOW")]
    pub input: Option<InputArg>,

    /// How to run the program: `auto` uses the AFL++ forkserver (edge coverage) if the
    /// program is built with afl-cc, else plain runs without coverage.
    #[arg(long, value_enum, default_value_t = ModeArg::Auto)]
    pub mode: ModeArg,

    /// Time limit per run in milliseconds; a run over it is a hang and is killed with its
    /// process group.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub timeout: u64,

    /// Address-space limit per run in MiB (not for sanitizer builds); for --java the
    /// JVM's heap limit (-Xmx) [default for --java: 1024].
    #[arg(long, value_name = "MB")]
    pub memory: Option<u64>,

    /// Count runs whose stderr or stdout matches this regex as failures; the first
    /// capture group (else the match) is the failure's location for deduplication.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub failure_pattern: Option<String>,

    /// An exception class that is expected, not a failure (e.g. `JSONDecodeError`); may
    /// be repeated.
    #[arg(long, value_name = "CLASS")]
    pub expected_exception: Vec<String>,
}

/// `--input`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputArg {
    /// On standard input.
    Stdin,
    /// In a file whose path replaces @@.
    File,
    /// As an argument (replacing @@, or appended).
    Arg,
}

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// The forkserver for afl-cc builds, else plain.
    Auto,
    /// The AFL++ forkserver (fails for programs not built with afl-cc).
    Afl,
    /// Start the program per input, no coverage.
    Plain,
}

impl TargetArgs {
    /// The executor (printing its note, if any), or the exit code after reporting why
    /// the target cannot be run.
    ///
    /// `budget` (a campaign's `--time`) also bounds how long a Python interpreter may
    /// take to get ready.
    pub fn executor_or_report(&self, budget: Option<Duration>) -> Result<Box<dyn Executor>, u8> {
        match self.program().executor(budget) {
            Ok((executor, note)) => {
                if let Some(note) = note {
                    eprintln!("note: {note}");
                }
                Ok(executor)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Err(if matches!(e, ExecError::Usage(_)) {
                    crate::exit::USAGE
                } else {
                    crate::exit::FAILURE
                })
            }
        }
    }

    /// The program these arguments name, for thicket-exec.
    pub fn program(&self) -> ProgramConfig {
        ProgramConfig {
            command: self.command.clone(),
            python: self.python.as_ref().map(|function| PythonProgram {
                function: function.clone(),
                include: self.python_include.clone(),
                bytes: self.python_bytes,
                tokenizer: self.tokenizer.clone(),
                python: self.python_exe.clone(),
            }),
            java: self.java.as_ref().map(|method| JavaProgram {
                method: method.clone(),
                classpath: self.classpath.clone(),
                includes: self.java_includes.clone(),
            }),
            input: self.input.map(|i| match i {
                InputArg::Stdin => InputMode::Stdin,
                InputArg::File => InputMode::File,
                InputArg::Arg => InputMode::Arg,
            }),
            mode: match self.mode {
                ModeArg::Auto => Mode::Auto,
                ModeArg::Afl => Mode::Afl,
                ModeArg::Plain => Mode::Plain,
            },
            timeout_ms: self.timeout,
            memory_mb: self.memory,
            failure_pattern: self.failure_pattern.clone(),
            expected_exceptions: self.expected_exception.clone(),
        }
    }

    /// The target as a campaign records it (see [`ProgramConfig::identity`]).
    pub fn identity(&self) -> String {
        self.program().identity()
    }

    /// The failure classifier (`--failure-pattern` was checked when parsed).
    pub fn classifier(&self) -> anyhow::Result<Classifier> {
        self.program()
            .classifier()
            .map_err(|e| anyhow::anyhow!("--failure-pattern is not a valid regex: {e}"))
    }
}

/// `--failure-pattern`: checked when the command line is read, so that a bad regex is a
/// usage error.
fn parse_regex(text: &str) -> Result<String, String> {
    regex::Regex::new(text)
        .map(|_| text.to_string())
        .map_err(|e| format!("not a valid regex: {e}"))
}
