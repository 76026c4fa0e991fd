//! A set of input files run through a program's [`Judge`] (`thicket coverage`): each
//! read, noted in the grammar's language or not, run and tallied ([`Tally`]: the union
//! of the coverage that counts, the distinct failures), with the growth of the
//! coverage after each input as CSV, and the report of it all as data.

use crate::files::Input;
use serde::Serialize;
use std::io::Write;
use thicket_exec::{CoverageSummary, ExecError, FailureKind, Judge, LikelyRejection, Tally};
use thicket_parse::Parser;

/// Whether the program `judge` runs accepts the input `tree` stands for: its text, or
/// with `encoding` its bits packed into bytes (a tree whose bits fill no whole byte
/// stands for no input, which no program accepts). A run the executor could not make
/// is not accepted.
pub fn accepts(
    judge: &mut Judge,
    encoding: Option<&thicket_fandango::PackedBits<'_>>,
    tree: &thicket_tree::DerivationTree,
) -> Result<bool, ExecError> {
    let packed;
    let input = match encoding {
        Some(encoding) => match thicket_gen::Encoding::encode(encoding, tree) {
            Ok(bytes) => {
                packed = bytes;
                &packed
            }
            Err(_) => return Ok(false),
        },
        None => tree.bytes(),
    };
    Ok(judge.run(input)?.is_some_and(|v| v.accepted()))
}

/// What running a set of inputs found.
#[derive(Default)]
pub struct Runs {
    /// The judged runs.
    pub tally: Tally,
    /// Inputs in the grammar's language.
    pub in_language: usize,
    /// Inputs that could not be read (not run).
    pub unreadable: usize,
    /// Inputs the executor failed to run.
    pub not_run: usize,
}

/// Why an input was not run.
pub enum Skip<'a> {
    /// It could not be read (the message names the file).
    Unreadable(&'a str),
    /// The executor failed on it.
    NotRun(&'a Input),
}

impl Runs {
    /// Runs every input of `inputs` (each read under `max_size` bytes) through `judge`,
    /// noting those `parser` accepts; `skipped` hears each input not run. With `growth`,
    /// a CSV line `index,file,coverage,branches` is written after each run (its header
    /// first). An error of the executor that it could not recover from ends the runs.
    pub fn run(
        inputs: &[Input],
        judge: &mut Judge,
        parser: &Parser<'_>,
        max_size: u64,
        mut growth: Option<&mut dyn Write>,
        skipped: &mut dyn FnMut(Skip<'_>),
    ) -> Result<Runs, RunsError> {
        if let Some(g) = growth.as_mut() {
            writeln!(g, "index,file,coverage,branches")?;
        }
        let mut runs = Runs::default();
        for (index, input) in inputs.iter().enumerate() {
            let bytes = match input.read(max_size) {
                Ok(bytes) => bytes,
                Err(e) => {
                    skipped(Skip::Unreadable(&e));
                    runs.unreadable += 1;
                    continue;
                }
            };
            runs.in_language += usize::from(parser.recognize(&bytes).is_ok());
            let Some(verdict) = judge.run(&bytes)? else {
                skipped(Skip::NotRun(input));
                runs.not_run += 1;
                continue;
            };
            runs.tally.add(judge, &verdict, || input.name());
            if let Some(g) = growth.as_mut() {
                let (coverage, branches) = runs.tally.figures(judge);
                writeln!(
                    g,
                    "{index},{},{coverage},{branches}",
                    csv_field(&input.name())
                )?;
            }
        }
        if let Some(g) = growth.as_mut() {
            g.flush()?;
        }
        Ok(runs)
    }

    /// Inputs run.
    pub fn ran(&self, inputs: usize) -> usize {
        inputs - self.unreadable - self.not_run
    }

    /// The warnings about `inputs` inputs run through `judge`, whose coverage is
    /// `summary`: runs whose output a process the target left behind held open, and
    /// runs that covered nothing the include patterns match.
    pub fn warnings(&self, judge: &Judge, inputs: usize, summary: &CoverageSummary) -> Vec<String> {
        let executor = judge.executor();
        let mut warnings = Vec::new();
        if executor.held_output_runs() > 0 {
            let runs = self.ran(inputs) as u64;
            warnings.push(thicket_exec::plain::held_output_warning(
                executor.held_output_runs(),
                runs,
            ));
        }
        if inputs > 0 {
            warnings.extend(summary.nothing_covered_warning(&executor.describe()));
        }
        warnings
    }

    /// The note that the coverage of the crashing or hanging runs is not counted, if
    /// there were any.
    pub fn uncounted_note(&self) -> Option<String> {
        let uncounted = self.tally.uncounted;
        (uncounted > 0).then(|| {
            format!(
                "the coverage of {uncounted} crashing or hanging runs is not counted (that \
                 of exceptions and pattern matches is), as in a campaign"
            )
        })
    }

    /// The report as `thicket coverage` prints it for people, of `inputs` inputs run
    /// through `judge`, whose coverage is `summary`: the target, the inputs' verdicts,
    /// the coverage ([`CoverageSummary::text_lines`]), each distinct failure but those
    /// `rejection` explains as the target's way of rejecting input, which get one line
    /// together and a note.
    pub fn text(
        &self,
        judge: &Judge,
        inputs: usize,
        summary: &CoverageSummary,
        rejection: Option<&LikelyRejection>,
    ) -> TextReport {
        let tally = &self.tally;
        let mut lines = vec![
            judge.executor().describe(),
            format!(
                "{inputs} inputs ({} in the grammar's language{}), {} failing, {} hanging",
                self.in_language,
                crate::files::unreadable_note(self.unreadable),
                tally.failing,
                tally.hangs
            ),
        ];
        lines.extend(summary.text_lines());
        let rejected = |kind: &FailureKind| rejection.is_some_and(|r| r.covers(kind));
        let failures = &tally.failures;
        for (key, (_, n, first)) in failures.iter().filter(|(_, (k, ..))| !rejected(k)) {
            lines.push(format!("failure {key} ({n} runs), first: {first}"));
        }
        let mut note = None;
        if let Some(r) = rejection {
            let first = failures
                .values()
                .find(|(k, ..)| rejected(k))
                .map_or("", |(.., f)| f.as_str());
            lines.push(format!(
                "failures {} {}: {} distinct ({} runs), likely rejections, first: {first}",
                r.language, r.class, r.distinct_failures, r.runs
            ));
            let others = failures
                .values()
                .filter(|(k, ..)| !rejected(k) && *k != FailureKind::Hang)
                .count();
            note = Some(r.note(others));
        }
        TextReport { lines, note }
    }

    /// The report as data (`thicket coverage --format json`) of `inputs` inputs run
    /// through `judge`, whose coverage is `summary`.
    pub fn report<'a>(
        &'a self,
        judge: &Judge,
        inputs: usize,
        summary: &'a CoverageSummary,
        rejection: Option<&'a LikelyRejection>,
    ) -> RunsReport<'a> {
        let tally = &self.tally;
        RunsReport {
            executor: judge.executor().describe(),
            inputs,
            unreadable: self.unreadable,
            not_run: self.not_run,
            runs_coverage_not_counted: tally.uncounted,
            in_language: self.in_language,
            failing_runs: tally.failing,
            hangs: tally.hangs,
            held_output_runs: judge.executor().held_output_runs(),
            failures: tally
                .failures
                .iter()
                .map(|(key, (kind, count, first))| FailureReport {
                    key,
                    count: *count,
                    first,
                    kind,
                })
                .collect(),
            likely_rejection: rejection,
            coverage: summary,
        }
    }
}

/// A set of runs as text ([`Runs::text`]).
pub struct TextReport {
    /// The lines of the report (stdout).
    pub lines: Vec<String>,
    /// A note on the failures that are likely rejections of invalid input (stderr).
    pub note: Option<String>,
}

/// Why a set of runs stopped.
#[derive(Debug)]
pub enum RunsError {
    /// The executor failed beyond recovery.
    Exec(ExecError),
    /// The growth curve could not be written.
    Io(std::io::Error),
}

impl std::fmt::Display for RunsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunsError::Exec(e) => write!(f, "{e}"),
            RunsError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Transparent: the error is the executor's or the file's.
impl std::error::Error for RunsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunsError::Exec(e) => e.source(),
            RunsError::Io(e) => e.source(),
        }
    }
}

impl From<ExecError> for RunsError {
    fn from(e: ExecError) -> RunsError {
        RunsError::Exec(e)
    }
}

impl From<std::io::Error> for RunsError {
    fn from(e: std::io::Error) -> RunsError {
        RunsError::Io(e)
    }
}

/// A set of runs as data.
#[derive(Serialize)]
pub struct RunsReport<'a> {
    /// The executor, described.
    pub executor: String,
    /// Inputs named.
    pub inputs: usize,
    /// Inputs that could not be read.
    pub unreadable: usize,
    /// Inputs the executor failed to run.
    pub not_run: usize,
    /// Runs whose coverage does not count (crashes, hangs).
    pub runs_coverage_not_counted: usize,
    /// Inputs in the grammar's language.
    pub in_language: usize,
    /// Runs that failed.
    pub failing_runs: usize,
    /// Runs that hung.
    pub hangs: usize,
    /// Runs whose output a process the target left behind held open.
    pub held_output_runs: u64,
    /// The distinct failures.
    pub failures: Vec<FailureReport<'a>>,
    /// The exception class that is likely the target's way of rejecting input.
    pub likely_rejection: Option<&'a LikelyRejection>,
    /// The coverage reached.
    pub coverage: &'a CoverageSummary,
}

/// A distinct failure as data: its key, runs, first input and its kind's fields.
#[derive(Serialize)]
pub struct FailureReport<'a> {
    /// `kind @ location`.
    pub key: &'a str,
    /// Runs that failed so.
    pub count: u64,
    /// The first input that did.
    pub first: &'a str,
    /// The kind and its fields.
    #[serde(flatten)]
    pub kind: &'a thicket_exec::FailureKind,
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("a.txt"), "a.txt");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
