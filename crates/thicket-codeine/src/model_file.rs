//! A model stored in a file, as `learn-coverage` writes it, read back for `explain`,
//! `predict` and `generate --target`: parsed, checked against the grammar it is used
//! with, and a location's path constraints taken from it.

use crate::model::{Model, PathConstraint, grammar_fingerprint};
use std::path::Path;

/// Why a stored model cannot be used.
#[derive(Debug)]
pub enum ModelFileError {
    /// The file cannot be read.
    Unreadable(std::io::Error),
    /// The file is no model: where it stops being one and why.
    NotAModel {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The model was learned on another grammar (or the spec was edited since).
    OtherGrammar,
    /// The model does not fit the grammar (cut short or edited by hand).
    Unusable(String),
}

impl std::fmt::Display for ModelFileError {
    /// What is wrong with a model file, to follow its name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelFileError::Unreadable(e) => write!(f, "{e}"),
            ModelFileError::NotAModel { message, .. } => {
                write!(f, "not a thicket model: {message}")
            }
            ModelFileError::OtherGrammar => write!(f, "learned on another grammar"),
            ModelFileError::Unusable(why) => write!(f, "not a usable model: {why}"),
        }
    }
}

/// Reads the model in `path`.
pub fn read_model(path: &Path) -> Result<Model, ModelFileError> {
    let text = std::fs::read(path).map_err(ModelFileError::Unreadable)?;
    serde_json::from_slice(&text).map_err(|e| ModelFileError::NotAModel {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

impl Model {
    /// Checks that the model was learned on `grammar` (the same structure) and fits it.
    pub fn check_grammar(&self, grammar: &thicket_grammar::Grammar) -> Result<(), ModelFileError> {
        if grammar_fingerprint(grammar) != self.grammar {
            return Err(ModelFileError::OtherGrammar);
        }
        self.validate(grammar).map_err(ModelFileError::Unusable)
    }

    /// The feasible constraints of `location`'s covering leaves (`generate --target`):
    /// an error if the location is unknown or no leaf gives a feasible one.
    pub fn target_constraints(&self, location: &str) -> Result<Vec<PathConstraint>, String> {
        let location = self.location(location)?;
        let constraints = location.constraints(&self.features);
        if constraints.is_empty() {
            return Err(format!(
                "the tree of `{}` has no feasible leaf that predicts it covered",
                location.name
            ));
        }
        Ok(constraints)
    }
}

/// The model and location of a target `MODEL:LOCATION`: the model is the longest
/// prefix before a `:` that is a file (a location's name may hold `:`).
pub fn split_target(target: &str) -> Option<(&Path, &str)> {
    target
        .match_indices(':')
        .map(|(i, _)| (&target[..i], &target[i + 1..]))
        .find(|(m, _)| Path::new(m).is_file())
        .map(|(m, l)| (Path::new(m), l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_splits_after_the_model_file_and_keeps_colons_in_the_location() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.json");
        std::fs::write(&model, "{}").unwrap();
        let target = format!("{}:line a.py:12", model.display());
        let (path, location) = split_target(&target).unwrap();
        assert_eq!(path, model.as_path());
        assert_eq!(location, "line a.py:12");
        assert!(split_target("nowhere.json:x").is_none());
    }

    #[test]
    fn a_file_that_is_no_model_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        std::fs::write(&path, "{\n  \"k\": true\n}").unwrap();
        match read_model(&path) {
            Err(ModelFileError::NotAModel { line, .. }) => assert_eq!(line, 2),
            other => panic!("{:?}", other.err()),
        }
    }
}
