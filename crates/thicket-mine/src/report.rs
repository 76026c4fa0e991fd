//! What `thicket mine` reports of its results: each result's figures in one line, and
//! the whole run as data (`--json`).

use crate::program::{Labelled, Validated};
use crate::{Mined, Scored, StepCount};
use serde::Serialize;

impl Scored {
    /// Whether the result reaches the specificity `min` (a share; rounding spared).
    pub fn meets_specificity(&self, min: f64) -> bool {
        self.specificity() + 1e-12 >= min
    }

    /// Its figures in one line: recall, specificity, precision, accuracy (with their
    /// counts) and the patterns it comes from.
    pub fn figures(&self) -> String {
        format!(
            "recall {:.1}% ({}/{}), specificity {:.1}% ({}/{}), precision {:.1}%, accuracy {:.1}% [{}]",
            self.recall() * 100.0,
            self.tp,
            self.tp + self.fn_,
            self.specificity() * 100.0,
            self.tn,
            self.tn + self.fp,
            self.precision() * 100.0,
            self.accuracy() * 100.0,
            self.patterns.join(", ")
        )
    }
}

impl Labelled {
    /// The line on the samples the program labelled.
    pub fn line(&self) -> String {
        format!(
            "labelled by the program: {} generated and {} mutated inputs: {} accepted, {} rejected",
            self.generated, self.mutated, self.accepted, self.rejected
        )
    }
}

impl Mined {
    /// The results as `thicket mine` prints them: each numbered, with its figures, a
    /// flag when it is under `min_specificity_pct` (in percent, as given), how the
    /// program took the inputs solved for it (`validation`, one per result, in order),
    /// then its constraint; or a comment that none reaches `min_recall_pct`.
    pub fn text(
        &self,
        validation: &[Option<Validated>],
        min_recall_pct: f64,
        min_specificity_pct: f64,
    ) -> String {
        if self.results.is_empty() {
            return format!("# no constraint reaches recall {min_recall_pct}% on the positives\n");
        }
        let mut text = String::new();
        for (i, (r, v)) in self.results.iter().zip(validation).enumerate() {
            let flag = if !r.meets_specificity(min_specificity_pct / 100.0) {
                format!(" (under --min-specificity {min_specificity_pct}%)")
            } else {
                String::new()
            };
            let valid = v.map_or(String::new(), |v| {
                format!(
                    "; program accepted {}/{} solved inputs",
                    v.accepted, v.solved
                )
            });
            text.push_str(&format!(
                "# {}: {}{flag}{valid}\n{}\n\n",
                i + 1,
                r.figures(),
                r.text
            ));
        }
        text
    }

    /// The run as data: the samples counted, the steps, and each result with its
    /// figures, whether it meets `min_specificity` and, in `validation` (one per
    /// result, in order), how the program took the inputs solved for it.
    pub fn report<'a>(
        &'a self,
        positives: usize,
        negatives: usize,
        validation: &[Option<Validated>],
        min_specificity: f64,
    ) -> MineReport<'a> {
        MineReport {
            positives,
            negatives,
            learning_set: self.learning_set.len(),
            steps: &self.steps,
            evaluated: self.evaluated,
            evaluation_seconds: self.evaluation_seconds,
            timed_out: self.timed_out,
            results: self
                .results
                .iter()
                .zip(validation)
                .map(|(r, v)| ResultReport {
                    constraint: &r.text,
                    patterns: &r.patterns,
                    parts: r.parts,
                    tp: r.tp,
                    fn_: r.fn_,
                    fp: r.fp,
                    tn: r.tn,
                    recall: r.recall(),
                    specificity: r.specificity(),
                    precision: r.precision(),
                    accuracy: r.accuracy(),
                    meets_specificity: r.meets_specificity(min_specificity),
                    validated: *v,
                })
                .collect(),
        }
    }
}

/// A mining run as data (`thicket mine --json`).
#[derive(Serialize)]
pub struct MineReport<'a> {
    /// Positive samples.
    pub positives: usize,
    /// Negative samples.
    pub negatives: usize,
    /// Positives in the learning set.
    pub learning_set: usize,
    /// What each step did.
    pub steps: &'a [StepCount],
    /// Candidates evaluated.
    pub evaluated: usize,
    /// Seconds spent evaluating.
    pub evaluation_seconds: f64,
    /// Whether the time budget ran out.
    pub timed_out: bool,
    /// The results, best first.
    pub results: Vec<ResultReport<'a>>,
}

/// One result as data.
#[derive(Serialize)]
pub struct ResultReport<'a> {
    /// The constraint in ISLa syntax.
    pub constraint: &'a str,
    /// The patterns it comes from.
    pub patterns: &'a [String],
    /// Atomic candidates it combines.
    pub parts: usize,
    /// Positives it accepts.
    pub tp: usize,
    /// Positives it rejects.
    #[serde(rename = "fn")]
    pub fn_: usize,
    /// Negatives it accepts.
    pub fp: usize,
    /// Negatives it rejects.
    pub tn: usize,
    /// Share of positives accepted.
    pub recall: f64,
    /// Share of negatives rejected.
    pub specificity: f64,
    /// Share of accepted samples that are positive.
    pub precision: f64,
    /// Share of samples judged right.
    pub accuracy: f64,
    /// Whether it reaches the specificity asked for.
    pub meets_specificity: bool,
    /// How the program took the inputs solved for it, if validated.
    pub validated: Option<Validated>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_and_report_carry_the_counts() {
        let r = Scored {
            text: "true".into(),
            patterns: vec!["P".into()],
            parts: 1,
            tp: 9,
            fn_: 1,
            fp: 2,
            tn: 8,
        };
        assert_eq!(
            r.figures(),
            "recall 90.0% (9/10), specificity 80.0% (8/10), precision 81.8%, accuracy 85.0% [P]"
        );
        assert!(r.meets_specificity(0.8) && !r.meets_specificity(0.81));
        let mined = Mined {
            results: vec![r],
            ..Mined::default()
        };
        let validated = [Some(Validated {
            accepted: 3,
            solved: 3,
        })];
        let json = serde_json::to_string(&mined.report(10, 10, &validated, 0.6)).unwrap();
        assert!(
            json.contains("\"tp\":9,\"fn\":1,\"fp\":2,\"tn\":8"),
            "{json}"
        );
        assert!(
            json.contains("\"validated\":{\"accepted\":3,\"solved\":3}"),
            "{json}"
        );
    }
}
