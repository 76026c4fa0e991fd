//! # thicket-codeine
//!
//! CODEINE (Havrikov, Kampmann and Zeller, journal version of "Systematically Covering
//! Input Structure", §5): learn which input structure reaches which code.
//!
//! 1. A test suite is run once ([`run::coverage_matrix`]); per input, the named code
//!    locations it covered (`thicket_exec::Judge::covered_locations`: Python functions
//!    and lines, C functions, Java methods) form a [`CoverageMatrix`].
//! 2. Each input's features are the l-paths (l <= k) present in the derivation the
//!    parser returns for it ([`features`], [`FeatureTable`]); features with one value
//!    on every input are dropped.
//! 3. One CART decision tree per location ([`cart::Tree`], depth <= 5, classes
//!    balanced by sub-sampling, locations never or always covered skipped), learned in
//!    parallel over locations: the [`Model`].
//!
//! Each tree's prediction quality is measured by stratified cross-validation
//! ([`Validation`]), never on the inputs it was fitted on; a location with fewer
//! covering inputs than [`MIN_POSITIVES`] is not to be trusted.
//!
//! The model explains a location (its tree's conditions as grammar patterns,
//! `thicket_cover::PatternRenderer`), turns the tree's covering leaves into path
//! constraints ([`PathConstraint`], infeasible ones dropped) from which
//! [`generate_targeted`] produces inputs aimed at the location without running the
//! program (a best-first search after the paper's Algorithm 3), and predicts from an
//! input alone which locations it will cover ([`Prediction`], scored against the
//! coverage a program showed, and its report as data). A model stored in a file is read back
//! and checked against its grammar by [`model_file`]; a location's tree is explained
//! by [`explain::explain`]. With the program at hand, [`Refiner`]
//! closes the loop for one location: learn, aim, run, learn again
//! ([`refine`]), until a tree's pooled aimed rounds show the goal at a lower confidence
//! bound ([`Evidence`]); its trees keep covering inputs per leaf ([`Exemplars`]), and aimed
//! inputs are mutants of those that still satisfy the leaf, where one is found. Every run goes through `thicket_exec::Judge` ([`run`]). Around learning,
//! [`report`] holds what `learn-coverage` decides besides: the [`LocationKinds`] asked
//! for, a refinement's inputs written out, the warning for trees learned from too few
//! covering inputs. What the commands print for people is composed in [`text`]; a matrix given for a
//! command's inputs is read and checked by [`given`]; inputs are aimed at a stored
//! model's location by [`aimed`].

#![warn(missing_docs)]

pub mod aimed;
pub mod cart;
pub mod explain;
pub mod features;
pub mod given;
pub mod learning;
pub mod matrix;
pub mod model;
pub mod model_file;
pub mod predict;
pub mod refine;
pub mod report;
pub mod run;
pub mod target;
pub mod text;

pub use features::{
    FeatureTable, SMALL_FOREST_STATES, input_paths, parse_paths, small_forest_paths, tree_paths,
};
pub use matrix::CoverageMatrix;
pub use model::{
    EXEMPLARS_PER_LEAF, Exemplars, LearnConfig, LocationModel, MIN_POSITIVES, Model,
    PathConstraint, Validation, grammar_fingerprint,
};
pub use model_file::{ModelFileError, read_model, split_target};
pub use predict::{Prediction, PredictionReport};
pub use refine::{
    Ending, Evidence, GOAL_CONFIDENCE, Phase, RefineConfig, Refined, Refiner, Round, TrainingSet,
};
pub use report::LocationKinds;
pub use run::{RunError, covered_names};
pub use target::{
    DRAWS_PER_INPUT, TargetStats, Violated, aim_cycle, generate_targeted, violated, violated_in,
    violations,
};
