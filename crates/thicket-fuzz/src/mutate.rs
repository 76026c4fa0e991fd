//! The tree mutations the campaign applies: [`thicket_mutate`], re-exported here so that
//! `thicket_fuzz::mutate` keeps naming them. They live in a crate of their own so that
//! the AFL++/libFuzzer mutator needs no executor, solver or constraints.

pub use thicket_mutate::*;
