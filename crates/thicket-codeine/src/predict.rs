//! Prediction from inputs alone (`thicket predict`): which trained locations a model
//! predicts each input covers, scored against the coverage a program showed when it is
//! known, and the report of both as data.

use crate::learning::{Scores, score};
use crate::{CoverageMatrix, FeatureTable, Model};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use serde::Serialize;
use thicket_cover::KPath;

/// What a model predicts of a set of inputs.
pub struct Prediction {
    /// Per input, the indices of the model's locations predicted covered; `None` for an
    /// input the grammar rejects.
    pub predicted: Vec<Option<Vec<usize>>>,
    /// How well the predictions match the actual coverage, when it is known.
    pub scores: Option<Scores>,
}

impl Prediction {
    /// The predictions of `model` for `texts` whose paths `paths_of` reads (`None` for
    /// an input the grammar rejects), in parallel in the current thread pool, scored
    /// against `truth` (the coverage of the same inputs in the same order) if given.
    pub fn new(
        model: &Model,
        texts: &[Vec<u8>],
        paths_of: impl Fn(&[u8]) -> Option<FxHashSet<KPath>> + Sync,
        truth: Option<&CoverageMatrix>,
    ) -> Prediction {
        let ids = model.feature_ids();
        let predicted: Vec<Option<Vec<usize>>> = texts
            .par_iter()
            .map(|t| Some(model.predict(&FeatureTable::row_with(&ids, &paths_of(t)?))))
            .collect();
        let scores = truth.map(|m| score(model, m, &predicted));
        Prediction { predicted, scores }
    }

    /// Inputs the grammar rejects.
    pub fn rejected(&self) -> usize {
        self.predicted.iter().filter(|p| p.is_none()).count()
    }

    /// The report of the predictions for inputs called `names` (`thicket predict
    /// --json`).
    pub fn report<'a>(&'a self, model: &'a Model, names: &'a [String]) -> PredictionReport<'a> {
        PredictionReport {
            inputs: names
                .iter()
                .zip(&self.predicted)
                .map(|(input, p)| match p {
                    Some(p) => PredictedInput::Covers {
                        input,
                        covers: p
                            .iter()
                            .map(|&i| model.locations[i].name.as_str())
                            .collect(),
                    },
                    None => PredictedInput::Rejected {
                        input,
                        rejected: true,
                    },
                })
                .collect(),
            rejected: self.rejected(),
            locations: model.locations.len(),
            scores: self.scores.map(|s| {
                let [tp, fp, tn, fn_] = s.confusion;
                ScoreReport {
                    accuracy: s.accuracy,
                    precision: s.precision,
                    recall: s.recall,
                    confusion: Confusion { tp, fp, tn, fn_ },
                }
            }),
        }
    }
}

/// The predictions for a set of inputs as data (`thicket predict --json`).
#[derive(Serialize)]
pub struct PredictionReport<'a> {
    /// Per input, in order.
    pub inputs: Vec<PredictedInput<'a>>,
    /// Inputs the grammar rejects.
    pub rejected: usize,
    /// Trained locations.
    pub locations: usize,
    /// The scores against the actual coverage, when known.
    #[serde(flatten)]
    pub scores: Option<ScoreReport>,
}

/// One input's prediction.
#[derive(Serialize)]
#[serde(untagged)]
pub enum PredictedInput<'a> {
    /// The locations predicted covered.
    Covers {
        /// The input's name.
        input: &'a str,
        /// The names of the locations.
        covers: Vec<&'a str>,
    },
    /// The grammar rejects the input.
    Rejected {
        /// The input's name.
        input: &'a str,
        /// Always `true`.
        rejected: bool,
    },
}

/// [`Scores`] as data.
#[derive(Serialize)]
pub struct ScoreReport {
    /// Share of (input, location) pairs predicted right.
    pub accuracy: f64,
    /// Share of pairs predicted covered that were.
    pub precision: f64,
    /// Share of covered pairs predicted covered.
    pub recall: f64,
    /// The counts of the pairs.
    pub confusion: Confusion,
}

/// The confusion counts of (input, location) pairs.
#[derive(Serialize)]
pub struct Confusion {
    /// Predicted covered and covered.
    pub tp: u64,
    /// Predicted covered, not covered.
    pub fp: u64,
    /// Predicted not covered, not covered.
    pub tn: u64,
    /// Predicted not covered, covered.
    #[serde(rename = "fn")]
    pub fn_: u64,
}
