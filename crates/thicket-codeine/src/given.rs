//! What a command is given, checked: a coverage matrix for its inputs
//! (`learn-coverage --from-matrix`, `predict --truth`), read and checked to be of
//! those inputs; inputs to learn from, checked to give something to learn.

use crate::CoverageMatrix;
use crate::learning::Inputs;
use std::path::Path;

/// Why a given matrix cannot be used.
#[derive(Debug)]
pub enum GivenMatrixError {
    /// It cannot be read, or is no matrix (the message names the file).
    Unreadable(String),
    /// It is of other inputs than those given (a usage error; the message says how).
    OtherInputs(String),
}

impl CoverageMatrix {
    /// Reads the matrix in `path` for the inputs called `names`: with `same_names`,
    /// it must list them in the same order; else as many inputs (their coverage taken
    /// in order).
    pub fn load_for(
        path: &Path,
        names: &[String],
        same_names: bool,
    ) -> Result<CoverageMatrix, GivenMatrixError> {
        let matrix = CoverageMatrix::load(path).map_err(GivenMatrixError::Unreadable)?;
        let fits = if same_names {
            matrix.inputs == names
        } else {
            matrix.inputs.len() == names.len()
        };
        if fits {
            return Ok(matrix);
        }
        Err(GivenMatrixError::OtherInputs(format!(
            "{} lists {} inputs, not the {} given{}",
            path.display(),
            matrix.inputs.len(),
            names.len(),
            if same_names {
                " (in the same order)"
            } else {
                ""
            }
        )))
    }
}

impl Inputs {
    /// Why these inputs give nothing to learn from: there are none, or the grammar
    /// rejects them all (a model learns from inputs the grammar accepts); `None` if
    /// some can be learned from.
    pub fn nothing_to_learn(&self) -> Option<String> {
        let inputs = self.texts.len();
        if inputs == 0 {
            return Some(
                "nothing to learn from: no inputs (generate some with thicket generate -o DIR)"
                    .to_string(),
            );
        }
        (self.rejected() == inputs).then(|| {
            format!(
                "nothing to learn from: all {inputs} inputs are rejected by the grammar (the \
                 model learns from inputs the grammar accepts)"
            )
        })
    }
}
