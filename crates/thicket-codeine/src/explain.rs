//! A learned location explained (`thicket explain`): its tree's leaves with their
//! conditions as grammar patterns and k-paths, the training inputs at each, the tree's
//! cross-validated quality, and a warning when too few inputs covered the location
//! for the tree to be trusted. Serialized, it is `thicket explain --json`'s object.

use crate::cart::Node;
use crate::model::{LocationModel, MIN_POSITIVES, Model};
use serde::Serialize;
use thicket_cover::{KPathGraph, PatternRenderer};

/// A location's tree explained.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The location's name.
    pub location: String,
    /// Training inputs that cover it.
    pub covered: u32,
    /// Training inputs in all.
    pub inputs: u32,
    /// The tree's leaves, in root-to-leaf order of their conditions.
    pub leaves: Vec<LeafExplained>,
    /// The feasible path constraints of its covering leaves (`generate --target`).
    pub feasible_constraints: usize,
    /// Covering inputs a tree needs to be trusted ([`MIN_POSITIVES`]).
    pub minimum_covering_inputs: u32,
    /// The tree's quality on inputs it was not fitted on, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_validated: Option<CrossValidated>,
    /// Why the tree is not to be trusted, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One leaf of the tree.
#[derive(Clone, Debug, Serialize)]
pub struct LeafExplained {
    /// The conditions on the way to it.
    pub conditions: Vec<ConditionExplained>,
    /// Whether it predicts "covered".
    pub covered: bool,
    /// The training inputs that reach it.
    pub training_inputs: InputsAtLeaf,
    /// The balanced sub-sample the tree was fitted on, at this leaf.
    pub balanced_sample: SampleAtLeaf,
}

/// A condition: a k-path present or absent.
#[derive(Clone, Debug, Serialize)]
pub struct ConditionExplained {
    /// Whether the path must be present (else absent).
    pub present: bool,
    /// The path as a grammar pattern.
    pub pattern: String,
    /// The path itself.
    pub path: String,
}

/// Training inputs at a leaf, by class.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct InputsAtLeaf {
    /// Those covering the location.
    pub covered: u32,
    /// Those not covering it.
    pub not_covered: u32,
}

/// The fitted sub-sample at a leaf.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SampleAtLeaf {
    /// Samples that reached it.
    pub support: u32,
    /// Of those, how many have its class.
    pub of_its_class: u32,
}

/// Cross-validated quality.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CrossValidated {
    /// Folds.
    pub folds: u32,
    /// Accuracy, if defined.
    pub accuracy: Option<f64>,
    /// Precision, if defined.
    pub precision: Option<f64>,
    /// Recall, if defined.
    pub recall: Option<f64>,
    /// The confusion counts.
    pub confusion: Confusion,
}

/// Confusion counts.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Confusion {
    /// True positives.
    pub tp: u32,
    /// False positives.
    pub fp: u32,
    /// True negatives.
    pub tn: u32,
    /// False negatives.
    #[serde(rename = "fn")]
    pub fn_: u32,
}

/// Explains `location`, a location of `model`, whose grammar is `grammar`.
pub fn explain(
    model: &Model,
    location: &LocationModel,
    grammar: &thicket_grammar::Grammar,
) -> Explanation {
    let renderer = PatternRenderer::new(grammar);
    let graph = KPathGraph::new(grammar);
    let leaves = location
        .tree
        .leaves()
        .into_iter()
        .filter_map(|(conditions, leaf)| {
            let Node::Leaf {
                covered,
                support,
                correct,
                inputs_covered,
                inputs_not_covered,
            } = leaf
            else {
                return None;
            };
            let conditions = conditions
                .iter()
                .map(|&(f, present)| {
                    let p = &model.features[f as usize];
                    ConditionExplained {
                        present,
                        pattern: renderer.render(p),
                        path: graph.display(grammar, p),
                    }
                })
                .collect();
            Some(LeafExplained {
                conditions,
                covered: *covered,
                training_inputs: InputsAtLeaf {
                    covered: *inputs_covered,
                    not_covered: *inputs_not_covered,
                },
                balanced_sample: SampleAtLeaf {
                    support: *support,
                    of_its_class: *correct,
                },
            })
        })
        .collect();
    let warning = location.too_few_positives().then(|| {
        format!(
            "only {} of {} training inputs cover this location (fewer than {}): the tree \
             says what those inputs share, which need not be what reaches the location; give \
             more inputs that reach it, or refine it with the program: thicket learn-coverage \
             ... --focus '{}' --python ... (or -- PROGRAM)",
            location.covered, location.inputs, MIN_POSITIVES, location.name
        )
    });
    Explanation {
        location: location.name.clone(),
        covered: location.covered,
        inputs: location.inputs,
        leaves,
        feasible_constraints: location.constraints(&model.features).len(),
        minimum_covering_inputs: MIN_POSITIVES,
        cross_validated: location.validation.map(|v| CrossValidated {
            folds: v.folds,
            accuracy: v.accuracy(),
            precision: v.precision(),
            recall: v.recall(),
            confusion: Confusion {
                tp: v.true_positives,
                fp: v.false_positives,
                tn: v.true_negatives,
                fn_: v.false_negatives,
            },
        }),
        warning,
    }
}
