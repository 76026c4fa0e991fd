//! What the CODEINE commands print for people, composed beside the data: a location's
//! tree explained (`thicket explain`), predictions and their scores (`thicket
//! predict`), a learned model's figures (`thicket learn-coverage`) and a run of aimed
//! inputs (`thicket generate --target`). Their data as JSON is the serde form of the
//! same types.

use crate::explain::Explanation;
use crate::learning::{LearnEvent, Learned, Scores};
use crate::{Model, ModelFileError, Prediction, TargetStats};
use std::path::Path;
use std::time::Duration;

impl Explanation {
    /// The explanation as `thicket explain` prints it: the location's support, the
    /// tree's cross-validated quality (or why it was not measured), then each leaf's
    /// verdict and training inputs with its conditions, one per line (`has` or `has no`,
    /// the grammar pattern, the k-path). The warning is [`Explanation::warning`].
    pub fn text_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{}: covered by {} of {} training inputs",
            self.location, self.covered, self.inputs
        )];
        let share = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"));
        lines.push(match &self.cross_validated {
            Some(v) => format!(
                "predicting inputs it was not fitted on ({}-fold cross-validation): accuracy {}, \
                 precision {}, recall {}",
                v.folds,
                share(v.accuracy),
                share(v.precision),
                share(v.recall)
            ),
            None => "prediction quality not measured (no cross-validation: too few covering \
                     inputs, or a model learned with --folds 0)"
                .to_string(),
        });
        for leaf in &self.leaves {
            lines.push(format!(
                "{} (training inputs here: {} covering, {} not) if:",
                if leaf.covered {
                    "COVERED"
                } else {
                    "not covered"
                },
                leaf.training_inputs.covered,
                leaf.training_inputs.not_covered
            ));
            if leaf.conditions.is_empty() {
                lines.push("    (always)".to_string());
            }
            for c in &leaf.conditions {
                lines.push(format!(
                    "    {} {}    [{}]",
                    if c.present { "has   " } else { "has no" },
                    c.pattern,
                    c.path
                ));
            }
        }
        lines
    }
}

impl Prediction {
    /// The predictions as `thicket predict` prints them: per input called `names`, the
    /// locations of `model` predicted covered (or that the grammar rejects it), then the
    /// scores when the actual coverage was known.
    pub fn text_lines(&self, model: &Model, names: &[String]) -> Vec<String> {
        let mut lines: Vec<String> = names
            .iter()
            .zip(&self.predicted)
            .map(|(n, p)| match p {
                Some(p) => format!(
                    "{n}: {}",
                    p.iter()
                        .map(|&i| model.locations[i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!("{n}: rejected by the grammar"),
            })
            .collect();
        if let Some(Scores {
            accuracy,
            precision,
            recall,
            ..
        }) = self.scores
        {
            let rejected = self.rejected();
            lines.push(format!(
                "accuracy {accuracy:.3}, precision {precision:.3}, recall {recall:.3} over {} \
                 inputs x {} locations ({rejected} inputs rejected)",
                names.len() - rejected,
                model.locations.len()
            ));
        }
        lines
    }
}

impl LearnEvent<'_> {
    /// The event as a line for people: a refinement starts, or a round of it ended
    /// (indented under the first).
    pub fn line(&self) -> String {
        match self {
            LearnEvent::FocusStarts {
                location,
                covering,
                inputs,
            } => format!("focus {location}: {covering} of {inputs} inputs cover it"),
            LearnEvent::Round(round) => format!("  {}", round.line()),
        }
    }
}

/// What a run of `thicket learn-coverage` spent its time on besides learning.
pub struct LearnTimes {
    /// Running the program on the inputs (or reading the matrix).
    pub coverage: Duration,
    /// Reading the inputs' features.
    pub features: Duration,
}

impl Learned {
    /// The closing line of `thicket learn-coverage`: `inputs` inputs (of which
    /// `rejected` by the grammar), the locations and trees, the features (l-paths up to
    /// `k`), the time each part took and where the model was written (`output`).
    pub fn summary(
        &self,
        inputs: usize,
        rejected: usize,
        k: usize,
        times: LearnTimes,
        output: &str,
    ) -> String {
        let model = &self.model;
        format!(
            "{inputs} inputs ({rejected} rejected by the grammar), {} locations: {} trees, {} \
             never or always covered; {} features (l-paths, l <= {k}); coverage {:.2} s, \
             features {:.2} s, learning {:.2} s; model in {output}",
            self.locations,
            model.locations.len(),
            model.skipped,
            model.features.len(),
            times.coverage.as_secs_f64(),
            times.features.as_secs_f64(),
            self.learning_time.as_secs_f64(),
        )
    }
}

impl TargetStats {
    /// The closing line of `thicket generate --target`: `inputs` inputs aimed by
    /// `constraints` path constraints, how many satisfy theirs (each the best of
    /// `tries` trees), and the search's work.
    pub fn summary(&self, inputs: usize, constraints: usize, tries: u32) -> String {
        format!(
            "{inputs} inputs for {constraints} constraint(s): {} satisfy theirs, {} do not \
             (best of --tries {tries}); {} candidates, {} inputs searched past their steered \
             trees",
            self.satisfied, self.unsatisfied, self.candidates, self.searched
        )
    }
}

impl ModelFileError {
    /// The error as a message for people about the model in `model`, used with the
    /// spec at `spec` (if one was read): where a file stops being a model, or that the
    /// spec is not the one it was learned on, and what to do.
    pub fn message(&self, model: &Path, spec: Option<&Path>) -> String {
        match (self, spec) {
            (
                ModelFileError::NotAModel {
                    line,
                    column,
                    message,
                },
                _,
            ) => format!(
                "{}:{line}:{column}: not a thicket model: {message}",
                model.display()
            ),
            (ModelFileError::OtherGrammar, Some(spec)) => format!(
                "{} was learned on another grammar than {} (edited since?); learn again or \
                 give the spec it was learned on with --spec",
                model.display(),
                spec.display()
            ),
            (e, _) => format!("{}: {e}", model.display()),
        }
    }
}
