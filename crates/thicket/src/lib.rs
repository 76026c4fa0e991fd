//! # thicket
//!
//! Grammar-based test generation as a library: one crate that re-exports the parts of
//! thicket a program needs, in the way ripgrep's `grep` crate re-exports its searcher,
//! matchers and printer. The parts are crates of their own and can be used directly;
//! this crate only saves naming them.
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`grammar`] | `thicket-grammar` | read specs (`.fan`, `.bnf`, JSON grammars), analyse and lint them |
//! | [`tree`] | `thicket-tree` | derivation trees and their renderings; the [`tree::TreeSink`] seam |
//! | [`generate`] | `thicket-gen` | depth-bounded random generation |
//! | [`parse`] | `thicket-parse` | a general (Earley) parser for any spec grammar |
//! | `cover` (feature `cover`) | `thicket-cover` | k-path coverage and k-path-covering production |
//! | `constraint` (feature `constraint`) | `thicket-constraint` | ISLa constraints and their checker |
//! | `solve` (feature `solve`) | `thicket-solve` | generating inputs that satisfy constraints |
//! | `exec` (feature `exec`) | `thicket-exec` | running a program under test, with code coverage |
//! | `fuzz` (feature `fuzz`) | `thicket-fuzz` | the coverage-guided campaign |
//!
//! The types most programs start from are also at the top: [`load_spec_text`],
//! [`load_spec_file`], [`Grammar`], [`Generator`], [`GenConfig`], [`Parser`],
//! [`ParseConfig`], [`DerivationTree`].
//!
//! ## Example: generate inputs, parse one back
//!
//! ```
//! use thicket::{GenConfig, Generator, ParseConfig, Parser};
//!
//! // A grammar in Fandango's .fan syntax (ISLa's .bnf is the same without constraints).
//! let grammar = thicket::load_spec_text(
//!     "config.fan",
//!     br#"
//! <start> ::= <entry> (";" <entry>)*
//! <entry> ::= <key> "=" <value>
//! <key>   ::= r"[a-z]{1,8}"
//! <value> ::= <digit>+ | "[" <start> "]"
//! <digit> ::= r"[0-9]"
//! "#,
//! )?;
//!
//! // Input `i` of a seed is the same on every machine.
//! let generator = Generator::new(&grammar, GenConfig::default())?;
//! let inputs: Vec<Vec<u8>> = (0..5)
//!     .map(|i| {
//!         let mut bytes = Vec::new();
//!         generator.generate_bytes(&mut Generator::rng_for(42, i), &mut bytes);
//!         bytes
//!     })
//!     .collect();
//!
//! // The parser reads any input of the grammar back into the same kind of tree.
//! let parser = Parser::new(&grammar, ParseConfig::default())?;
//! for input in &inputs {
//!     let tree = parser.parse(input)?.tree();
//!     assert_eq!(tree.bytes(), &input[..]);
//! }
//! println!("{}", parser.parse(&inputs[0])?.tree().to_indented(&grammar));
//!
//! // And rejects what is not in it, saying where and what was expected.
//! let error = parser.parse(b"key=").err().expect("rejected");
//! assert!(error.to_string().contains("expected"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Side effects
//!
//! With their defaults the parts start no threads, keep no process-wide memory and
//! print nothing. A program that owns its process and parses many large inputs can turn
//! on what the `thicket` binary uses: [`ParseConfig::threads`] (helper threads for large
//! inputs) and [`tree::keep_spare_nodes`] (a pool of node vectors of dropped trees).

#![warn(missing_docs)]

pub use thicket_gen as generate;
pub use thicket_grammar as grammar;
pub use thicket_parse as parse;
pub use thicket_tree as tree;

#[cfg(feature = "constraint")]
pub use thicket_constraint as constraint;
#[cfg(feature = "cover")]
pub use thicket_cover as cover;
#[cfg(feature = "exec")]
pub use thicket_exec as exec;
#[cfg(feature = "fuzz")]
pub use thicket_fuzz as fuzz;
#[cfg(feature = "solve")]
pub use thicket_solve as solve;

pub use thicket_gen::{GenConfig, Generator};
pub use thicket_grammar::{Grammar, Spec, SpecError, load_spec_file, load_spec_text};
pub use thicket_parse::{ParseConfig, ParseError, Parser};
pub use thicket_tree::DerivationTree;
