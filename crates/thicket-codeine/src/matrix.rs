//! The coverage matrix: inputs x named code locations, written once by running a test
//! suite and reusable for learning with other settings.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which locations each input covered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageMatrix {
    /// What ran the inputs (the executor's description).
    pub executor: String,
    /// The inputs, by name (file paths), in row order.
    pub inputs: Vec<String>,
    /// The locations (`function FILE:NAME`, `line FILE:N`, ...), by column.
    pub locations: Vec<String>,
    /// Per input, the columns it covered (sorted).
    pub covered: Vec<Vec<u32>>,
}

impl CoverageMatrix {
    /// Reads a matrix written by [`CoverageMatrix::save`].
    pub fn load(path: &Path) -> Result<CoverageMatrix, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let matrix: CoverageMatrix = serde_json::from_slice(&text)
            .map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
        let n = matrix.locations.len() as u32;
        if matrix.covered.len() != matrix.inputs.len() {
            return Err(format!(
                "{}: {} rows of coverage for {} inputs",
                path.display(),
                matrix.covered.len(),
                matrix.inputs.len()
            ));
        }
        if let Some(row) = matrix
            .covered
            .iter()
            .position(|r| r.iter().any(|&c| c >= n))
        {
            return Err(format!(
                "{}: row {row} names a location beyond the {n} listed",
                path.display()
            ));
        }
        Ok(matrix)
    }

    /// Writes the matrix as JSON.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_vec(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Adds a row: the input's name and the locations it covered (by name; new names
    /// become new columns).
    pub fn push(
        &mut self,
        input: String,
        covered: impl IntoIterator<Item = String>,
        index: &mut rustc_hash::FxHashMap<String, u32>,
    ) {
        let mut row: Vec<u32> = covered
            .into_iter()
            .map(|name| {
                *index.entry(name.clone()).or_insert_with(|| {
                    self.locations.push(name);
                    self.locations.len() as u32 - 1
                })
            })
            .collect();
        row.sort_unstable();
        row.dedup();
        self.inputs.push(input);
        self.covered.push(row);
    }
}
