//! Running inputs for CODEINE: every run goes through `thicket_exec::Judge` (hang
//! confirmation, tolerated executor errors, and its rule for the coverage of failing
//! runs), and a run's coverage is the named locations the judge reports.

use crate::matrix::CoverageMatrix;
use rustc_hash::FxHashMap;
use thicket_exec::{Judge, Location};

/// Why inputs could not be run for their coverage.
#[derive(Debug)]
pub enum RunError {
    /// The executor failed (more often in a row than the judge tolerates).
    Executor {
        /// The input's name.
        input: String,
        /// What failed.
        error: String,
    },
    /// The executor names no code locations (an AFL++ edge map cannot be named).
    Unnamed {
        /// The executor's description.
        executor: String,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Executor { input, error } => write!(f, "running {input}: {error}"),
            RunError::Unnamed { executor } => write!(
                f,
                "{executor} names no code locations (edges cannot be named): use --python, \
                 or a target whose executor reports functions or lines"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Runs one input and appends the names of the locations it covered (by the judge's
/// rule: none for a crash or a hang) to `out`. `Ok(false)`: the executor failed and the
/// judge tolerated it (the input has no coverage to learn from).
pub fn covered_names(
    judge: &mut Judge,
    name: &str,
    text: &[u8],
    scratch: &mut Vec<Location>,
    out: &mut Vec<String>,
) -> Result<bool, RunError> {
    let verdict = judge.run(text).map_err(|e| RunError::Executor {
        input: name.to_string(),
        error: e.to_string(),
    })?;
    let Some(verdict) = verdict else {
        return Ok(false);
    };
    scratch.clear();
    if !judge.covered_locations(&verdict, scratch) {
        return Err(RunError::Unnamed {
            executor: judge.executor().describe(),
        });
    }
    out.extend(scratch.iter().map(Location::to_string));
    Ok(true)
}

/// Runs every input through `judge` and records the named locations each covers.
/// Every input needs its row, so an executor error, even one the judge tolerates, is
/// an error here.
pub fn coverage_matrix(
    judge: &mut Judge,
    names: &[String],
    texts: &[Vec<u8>],
) -> Result<CoverageMatrix, RunError> {
    let mut matrix = CoverageMatrix {
        executor: judge.executor().describe(),
        ..Default::default()
    };
    let mut index = FxHashMap::default();
    let mut scratch = Vec::new();
    let mut covered = Vec::new();
    for (name, text) in names.iter().zip(texts) {
        covered.clear();
        if !covered_names(judge, name, text, &mut scratch, &mut covered)? {
            return Err(RunError::Executor {
                input: name.clone(),
                error: "the executor failed".into(),
            });
        }
        matrix.push(name.clone(), covered.drain(..), &mut index);
    }
    Ok(matrix)
}
