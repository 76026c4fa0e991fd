//! # thicket-codeine
//!
//! CODEINE (Havrikov, Kampmann and Zeller, journal version of "Systematically Covering
//! Input Structure", §5): learn which input structure reaches which code.
//!
//! 1. A test suite is run once; per input, the named code locations it covered
//!    (`thicket_exec::Executor::covered_locations`: Python functions and lines, C
//!    functions, Java methods) form a [`CoverageMatrix`].
//! 2. Each input's features are the l-paths (l <= k) present in any of its parses
//!    ([`FeatureTable`]); features with one value on every input are dropped.
//! 3. One CART decision tree per location ([`cart::Tree`], depth <= 5, classes
//!    balanced by sub-sampling, locations never or always covered skipped), learned in
//!    parallel over locations: the [`Model`].
//!
//! The model explains a location (its tree's conditions as grammar patterns,
//! `thicket_cover::PatternRenderer`), turns the tree's covering leaves into path
//! constraints ([`PathConstraint`], infeasible ones dropped) from which
//! [`generate_targeted`] produces inputs aimed at the location without running the
//! program, and predicts from an input alone which locations it will cover.

#![warn(missing_docs)]

pub mod cart;
pub mod features;
pub mod matrix;
pub mod model;
pub mod target;

pub use features::{FeatureTable, input_paths};
pub use matrix::CoverageMatrix;
pub use model::{LearnConfig, LocationModel, Model, PathConstraint, grammar_fingerprint};
pub use target::{TargetStats, generate_targeted, violations};
