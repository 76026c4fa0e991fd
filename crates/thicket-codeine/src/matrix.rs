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
    /// Per input, whether it covered `column` (`None`: a location no input covered).
    pub fn covering(&self, column: Option<u32>) -> Vec<bool> {
        self.covered
            .iter()
            .map(|row| column.is_some_and(|c| row.binary_search(&c).is_ok()))
            .collect()
    }

    /// Keeps only the locations `keep` accepts, renumbering the columns.
    pub fn retain_locations(&mut self, keep: impl Fn(&str) -> bool) {
        let kept: Vec<usize> = (0..self.locations.len())
            .filter(|&c| keep(&self.locations[c]))
            .collect();
        let mut renumber = vec![u32::MAX; self.locations.len()];
        for (new, &old) in kept.iter().enumerate() {
            renumber[old] = new as u32;
        }
        self.locations = kept.iter().map(|&c| self.locations[c].clone()).collect();
        for row in &mut self.covered {
            *row = row
                .iter()
                .map(|&c| renumber[c as usize])
                .filter(|&c| c != u32::MAX)
                .collect();
        }
    }

    /// A location's full name and its column (`None`: no input covers it), for a name a
    /// user gives: an exact name, else the one location whose name ends with `name`, else
    /// a full name no input covered yet (`function FILE:NAME`, `line FILE:N`, `method ...`).
    pub fn find_location(&self, name: &str) -> Result<(String, Option<u32>), String> {
        if let Some(c) = self.locations.iter().position(|l| l == name) {
            return Ok((name.to_string(), Some(c as u32)));
        }
        let matches: Vec<usize> = (0..self.locations.len())
            .filter(|&c| self.locations[c].ends_with(name))
            .collect();
        match matches.as_slice() {
            [one] => Ok((self.locations[*one].clone(), Some(*one as u32))),
            [] if ["function ", "method ", "line "]
                .iter()
                .any(|kind| name.starts_with(kind)) =>
            {
                Ok((name.to_string(), None))
            }
            [] => Err(format!(
                "no input covers a location named `{name}` or ending with it; name it in full \
                 (`function FILE:NAME`, `line FILE:N`) to look for it"
            )),
            many => Err(format!(
                "`{name}` is ambiguous: {} locations end with it (e.g. `{}`, `{}`)",
                many.len(),
                self.locations[many[0]],
                self.locations[many[1]]
            )),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::CoverageMatrix;

    #[test]
    fn a_location_is_found_by_its_name_or_the_one_name_ending_with_it() {
        let matrix = CoverageMatrix {
            locations: vec![
                "function /a/p.py:parse".to_string(),
                "line /a/p.py:12".to_string(),
                "line /b/q.py:12".to_string(),
            ],
            ..CoverageMatrix::default()
        };
        let found = |name| matrix.find_location(name);
        assert_eq!(
            found("line /b/q.py:12"),
            Ok(("line /b/q.py:12".into(), Some(2)))
        );
        assert_eq!(
            found("p.py:parse"),
            Ok(("function /a/p.py:parse".into(), Some(0)))
        );
        assert!(found(".py:12").unwrap_err().contains("ambiguous"));
        assert_eq!(found("line /c/r.py:3"), Ok(("line /c/r.py:3".into(), None)));
        assert!(found("nowhere").is_err());
    }

    #[test]
    fn kept_locations_are_renumbered_in_every_row() {
        let mut matrix = CoverageMatrix {
            locations: vec!["function f".into(), "line 1".into(), "line 2".into()],
            covered: vec![vec![0, 1, 2], vec![2], vec![]],
            ..CoverageMatrix::default()
        };
        assert_eq!(matrix.covering(Some(2)), [true, true, false]);
        assert_eq!(matrix.covering(None), [false, false, false]);
        matrix.retain_locations(|l| l.starts_with("line"));
        assert_eq!(matrix.locations, ["line 1", "line 2"]);
        assert_eq!(matrix.covered, [vec![0, 1], vec![1], vec![]]);
    }
}
