//! # thicket-driver
//!
//! The drivers `thicket` (the command line) and `thicket` (the Python module) share, so
//! that a shell user, a Rust user and a Python user get the same behaviour from the same
//! spec and options:
//!
//! - [`SpecFile`]: a spec read from a file in any format thicket reads (`.fan`, `.bnf`,
//!   a `.json` grammar dictionary, an ANTLR 4 `.g4` grammar with its lexer) and compiled
//!   into a [`thicket_fandango::LoadedSpec`], and the constraints a user gives beside
//!   it ([`extra_constraints`]) and the goals ([`add_goals`]);
//! - [`Makers`] and [`InputProducer`]: the producer of fresh inputs a spec's options
//!   give (the constraint solver, ANTLR-aware generation, weights, plain generation;
//!   Fandango's bit fields packed into bytes), one [`thicket_gen::Producer`] whoever
//!   drives it;
//! - [`InputGrammar`] and [`InputReader`]: an input file read into the spec's tree,
//!   bit by bit when the spec packs bit fields into bytes
//!   ([`thicket_fandango::Unpacker`]), as its text otherwise; sample inputs' choices
//!   counted for a probabilistic grammar ([`InputReader::count_choices`]), samples to
//!   mine and a campaign's seeds read ([`InputReader::read_samples`],
//!   [`InputReader::seed_trees`]), CODEINE's features of an input
//!   ([`InputReader::feature_paths`]);
//! - [`checked`]: an input checked against the spec's grammar and constraints, its
//!   violations explained, as `thicket check` reports them (and prints them);
//! - [`files`]: the input files of a command (files, folders expanded in path order,
//!   stdin), each read whole under a size cap;
//! - [`kcover`]: the k-path coverage of a set of input files, its growth curve and
//!   its report as data and as text (`thicket cover`);
//! - [`parsed`]: what `thicket parse` makes of one input (parsed, counted, listed,
//!   rendered or left to be streamed), its tree written (a large one's as it is read)
//!   and the JSON line and message of an input that failed;
//! - [`output`]: generated inputs written as `thicket generate` writes them (a file
//!   each, or framed on one stream, raw or as JSON lines with their trees), counted;
//! - [`kpath`]: k-path production of a loaded spec, repaired under its constraints,
//!   and what it covered and missed;
//! - [`ended`]: how a run of generated inputs ended against what was asked (a small
//!   language's distinct inputs, the reason for a shortfall);
//! - [`runs`]: a set of input files run through a program's judge, tallied, with the
//!   growth of their coverage and the report as data and as text (`thicket
//!   coverage`), and a program's acceptance of a tree as the spec's input ([`runs::accepts`]);
//! - [`minimize`]: a failing input reduced as its spec reads it (as text, or as the
//!   bits it packs);
//! - [`alloc`]: the allocator thicket's binaries install, which ends the process with
//!   a message naming the limit to raise when memory runs out;
//! - [`workers`]: a parallel fuzzing campaign, N campaign processes sharing their
//!   finds through one folder, their figures combined.

#![warn(missing_docs)]

pub mod alloc;
pub mod checked;
pub mod ended;
pub mod files;
pub mod kcover;
pub mod kpath;
mod load;
pub mod minimize;
pub mod output;
pub mod parsed;
mod produce;
mod read;
pub mod runs;
pub mod workers;

pub use load::{Compiled, ConstraintError, LoadError, SpecFile, add_goals, extra_constraints};
pub use produce::{BuildError, InputProducer, MakerOptions, Makers};
pub use read::{ChoiceCounts, InputGrammar, InputReader, Skipped};
