//! The program under test as a user names it: a command line, a Python function or a
//! Java method, with the limits of a run and what counts as a failure. `thicket fuzz`,
//! `coverage`, `minimize`, `mine`, `learn-coverage` and `predict` fill one from their
//! options and get their executor and classifier from it.

use crate::{
    Classifier, ExecError, Executor, InputMode, JavaExecutor, JavaTarget, Limits, Mode,
    PythonExecutor, PythonTarget, Target,
};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// A Python function to test (see [`PythonTarget`]).
#[derive(Clone, Debug)]
pub struct PythonProgram {
    /// `module:function` or `path/to/file.py:function`.
    pub function: String,
    /// Globs of the files measured [empty: the function's own package].
    pub include: Vec<String>,
    /// Inputs passed as `bytes` rather than `str`.
    pub bytes: bool,
    /// The target's tokenizer, `module:callable`, whose tokens' comparisons are traced.
    pub tokenizer: Option<String>,
    /// The interpreter.
    pub python: PathBuf,
}

/// A Java method to test (see [`JavaTarget`]).
#[derive(Clone, Debug)]
pub struct JavaProgram {
    /// `CLASS.METHOD`, static, taking one `String` or `byte[]`.
    pub method: String,
    /// The subject's classpath, `:`-separated.
    pub classpath: Option<String>,
    /// JaCoCo patterns of the classes measured, each possibly `:`-separated [empty:
    /// every class outside the JDK].
    pub includes: Vec<String>,
}

/// Which program to run on the inputs, and how.
#[derive(Clone, Debug)]
pub struct ProgramConfig {
    /// The command line; `@@` stands for a file holding the input.
    pub command: Vec<OsString>,
    /// A Python function instead of a command.
    pub python: Option<PythonProgram>,
    /// A Java method instead of a command.
    pub java: Option<JavaProgram>,
    /// How the input reaches a command [`None`: a file if an argument holds `@@`, else
    /// stdin].
    pub input: Option<InputMode>,
    /// Which executor runs a command.
    pub mode: Mode,
    /// Time limit per run, in milliseconds (at least 1).
    pub timeout_ms: u64,
    /// Address-space limit per run in MiB (for Java the heap limit), if any.
    pub memory_mb: Option<u64>,
    /// Runs whose stderr or stdout matches this regex are failures.
    pub failure_pattern: Option<String>,
    /// Exception classes that are expected, not failures.
    pub expected_exceptions: Vec<String>,
}

impl ProgramConfig {
    /// The executor, and a note to show (e.g. that coverage is off). `budget` (a
    /// campaign's time) also bounds how long an interpreter may take to get ready.
    pub fn executor(
        &self,
        budget: Option<Duration>,
    ) -> Result<(Box<dyn Executor>, Option<String>), ExecError> {
        if self.timeout_ms == 0 {
            return Err(ExecError::Usage(
                "--timeout 0 would make every run a hang: give the time limit per run in \
                 milliseconds (at least 1; default 1000)"
                    .into(),
            ));
        }
        if self.memory_mb == Some(0) {
            return Err(ExecError::Usage(
                "--memory 0 leaves the target no memory at all: give the limit in MiB (or \
                 leave it out for none)"
                    .into(),
            ));
        }
        let limits = Limits {
            timeout: Duration::from_millis(self.timeout_ms),
            memory_mb: self.memory_mb,
        };
        if let Some(python) = &self.python {
            if !self.command.is_empty() {
                return Err(ExecError::Usage(
                    "give either --python or a command after --, not both".into(),
                ));
            }
            let target = PythonTarget {
                function: python.function.clone(),
                bytes: python.bytes,
                include: python.include.clone(),
                python: python.python.clone(),
                start_timeout: budget.map_or(crate::python::START_TIMEOUT, |b| {
                    b.clamp(Duration::from_secs(1), crate::python::START_TIMEOUT)
                }),
                tokenizer: python.tokenizer.clone(),
            };
            return Ok((Box::new(PythonExecutor::new(target, limits, None)?), None));
        }
        if let Some(java) = &self.java {
            if !self.command.is_empty() {
                return Err(ExecError::Usage(
                    "give either --java or a command after --, not both".into(),
                ));
            }
            let classpath: Vec<PathBuf> = java
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
            let mut target = JavaTarget::new(java.method.clone(), classpath);
            target.includes = java
                .includes
                .iter()
                .flat_map(|p| p.split(':'))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            target.start_timeout = budget.map_or(crate::java::START_TIMEOUT, |b| {
                b.clamp(Duration::from_secs(5), crate::java::START_TIMEOUT)
            });
            return Ok((Box::new(JavaExecutor::new(target, limits, None)?), None));
        }
        let target = Target::new(&self.command, self.input)?;
        crate::executor_for(target, self.mode, limits, None)
    }

    /// The target as a campaign records it (a resumed campaign refuses another): the
    /// Python function, the Java method and classpath, or the command line.
    pub fn identity(&self) -> String {
        if let Some(java) = &self.java {
            return format!(
                "--java {} --classpath {}",
                java.method,
                java.classpath.as_deref().unwrap_or("")
            );
        }
        match &self.python {
            Some(python) => format!(
                "--python {}{}",
                python.function,
                if python.bytes { " (bytes)" } else { "" }
            ),
            None => self
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The failure classifier, or why the failure pattern is no regex.
    pub fn classifier(&self) -> Result<Classifier, regex::Error> {
        let pattern = self
            .failure_pattern
            .as_deref()
            .map(regex::Regex::new)
            .transpose()?;
        Ok(Classifier {
            pattern,
            expected_exceptions: self.expected_exceptions.clone(),
        })
    }

    /// Whether a program is named at all (a command, a Python function or a Java
    /// method).
    pub fn is_given(&self) -> bool {
        !self.command.is_empty() || self.python.is_some() || self.java.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(args: &[&str]) -> ProgramConfig {
        ProgramConfig {
            command: args.iter().map(OsString::from).collect(),
            python: None,
            java: None,
            input: None,
            mode: Mode::Plain,
            timeout_ms: 1000,
            memory_mb: None,
            failure_pattern: None,
            expected_exceptions: Vec::new(),
        }
    }

    #[test]
    fn zero_limits_are_usage_errors() {
        let zero_time = ProgramConfig {
            timeout_ms: 0,
            ..command(&["true"])
        };
        assert!(
            matches!(zero_time.executor(None), Err(ExecError::Usage(m)) if m.contains("--timeout 0"))
        );
        let zero_memory = ProgramConfig {
            memory_mb: Some(0),
            ..command(&["true"])
        };
        assert!(
            matches!(zero_memory.executor(None), Err(ExecError::Usage(m)) if m.contains("--memory 0"))
        );
    }

    #[test]
    fn identity_names_the_program() {
        assert_eq!(command(&["./target", "@@"]).identity(), "./target @@");
        let python = ProgramConfig {
            python: Some(PythonProgram {
                function: "json:loads".into(),
                include: Vec::new(),
                bytes: true,
                tokenizer: None,
                python: "python3".into(),
            }),
            ..command(&[])
        };
        assert_eq!(python.identity(), "--python json:loads (bytes)");
        assert!(python.is_given() && !command(&[]).is_given());
    }
}
