//! The program under test on the command line: shared by `fuzz` and `coverage`.

use clap::{Args, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use thicket_exec::{
    Classifier, ExecError, Executor, InputMode, JavaExecutor, JavaTarget, Limits, Mode,
    PythonExecutor, PythonTarget, Target,
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
        match self.executor(budget) {
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

    /// The executor, and a note to show (e.g. that coverage is off).
    pub fn executor(
        &self,
        budget: Option<Duration>,
    ) -> Result<(Box<dyn Executor>, Option<String>), ExecError> {
        if self.timeout == 0 {
            return Err(ExecError::Usage(
                "--timeout 0 would make every run a hang: give the time limit per run in \
                 milliseconds (at least 1; default 1000)"
                    .into(),
            ));
        }
        if self.memory == Some(0) {
            return Err(ExecError::Usage(
                "--memory 0 leaves the target no memory at all: give the limit in MiB (or \
                 leave it out for none)"
                    .into(),
            ));
        }
        let limits = Limits {
            timeout: Duration::from_millis(self.timeout),
            memory_mb: self.memory,
        };
        if let Some(function) = &self.python {
            if !self.command.is_empty() {
                return Err(ExecError::Usage(
                    "give either --python or a command after --, not both".into(),
                ));
            }
            let target = PythonTarget {
                function: function.clone(),
                bytes: self.python_bytes,
                include: self.python_include.clone(),
                python: self.python_exe.clone(),
                start_timeout: budget.map_or(thicket_exec::python::START_TIMEOUT, |b| {
                    b.clamp(Duration::from_secs(1), thicket_exec::python::START_TIMEOUT)
                }),
                tokenizer: self.tokenizer.clone(),
            };
            return Ok((Box::new(PythonExecutor::new(target, limits, None)?), None));
        }
        if let Some(method) = &self.java {
            if !self.command.is_empty() {
                return Err(ExecError::Usage(
                    "give either --java or a command after --, not both".into(),
                ));
            }
            let classpath: Vec<PathBuf> = self
                .classpath
                .as_deref()
                .unwrap_or("")
                .split(':')
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect();
            if let Some(missing) = classpath.iter().find(|p| !p.exists()) {
                return Err(ExecError::Usage(format!(
                    "--classpath: {} does not exist",
                    missing.display()
                )));
            }
            let mut target = JavaTarget::new(method.clone(), classpath);
            target.includes = self
                .java_includes
                .iter()
                .flat_map(|p| p.split(':'))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            target.start_timeout = budget.map_or(thicket_exec::java::START_TIMEOUT, |b| {
                b.clamp(Duration::from_secs(5), thicket_exec::java::START_TIMEOUT)
            });
            return Ok((Box::new(JavaExecutor::new(target, limits, None)?), None));
        }
        let mode = self.input.map(|i| match i {
            InputArg::Stdin => InputMode::Stdin,
            InputArg::File => InputMode::File,
            InputArg::Arg => InputMode::Arg,
        });
        let target = Target::new(&self.command, mode)?;
        let mode = match self.mode {
            ModeArg::Auto => Mode::Auto,
            ModeArg::Afl => Mode::Afl,
            ModeArg::Plain => Mode::Plain,
        };
        thicket_exec::executor_for(target, mode, limits, None)
    }

    /// The target as a campaign records it (`--resume` refuses another): the Python
    /// function, the Java method and classpath, or the command line.
    pub fn identity(&self) -> String {
        if let Some(method) = &self.java {
            return format!(
                "--java {method} --classpath {}",
                self.classpath.as_deref().unwrap_or("")
            );
        }
        match &self.python {
            Some(function) => format!(
                "--python {function}{}",
                if self.python_bytes { " (bytes)" } else { "" }
            ),
            None => self
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The failure classifier (`--failure-pattern` was checked when parsed).
    pub fn classifier(&self) -> anyhow::Result<Classifier> {
        let pattern = match &self.failure_pattern {
            Some(p) => Some(
                regex::Regex::new(p)
                    .map_err(|e| anyhow::anyhow!("--failure-pattern is not a valid regex: {e}"))?,
            ),
            None => None,
        };
        Ok(Classifier {
            pattern,
            expected_exceptions: self.expected_exception.clone(),
        })
    }
}

/// `--failure-pattern`: checked when the command line is read, so that a bad regex is a
/// usage error.
fn parse_regex(text: &str) -> Result<String, String> {
    regex::Regex::new(text)
        .map(|_| text.to_string())
        .map_err(|e| format!("not a valid regex: {e}"))
}
