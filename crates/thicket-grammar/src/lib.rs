//! # thicket-grammar
//!
//! The grammar model of thicket and everything that reads it: the spec format (ISLa
//! `.bnf` grammars and Fandango `.fan` specs, whose Python parts are captured in
//! [`FanParts`]; see `docs/spec-format.md`), import of
//! fuzzingbook/ISLa JSON grammars, resolution into a [`Grammar`] of typed ids, static
//! [`Analysis`] (minimal depth and length, productivity, reachability) and the [`lint`]
//! (with the figures `thicket lint` reports, [`summary::LintSummary`]).
//!
//! ```
//! let grammar = thicket_grammar::load_spec_text("digits.fan", b"<start> ::= <d>+\n<d> ::= r\"[0-9]\"")?;
//! assert_eq!(grammar.rules().len(), 2);
//! # Ok::<(), thicket_grammar::SpecError>(())
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod ast;
pub mod diag;
pub mod fandango;
mod fanfile;
pub mod grammar;
mod json_import;
mod lexer;
mod parser;
mod pyregex;
mod pyscan;
pub mod reach;
pub mod source;
pub mod suggest;
pub mod summary;
pub mod tokens;

pub use analysis::{Analysis, RuleSummary, UNBOUNDED, lint};
pub use diag::{Diagnostic, Severity, SpecError};
pub use fandango::{
    ComputedRepeat, ConstraintKind, FanBlock, FanConstraint, FanGenerator, FanParts, PartyRef,
};
pub use fanfile::{MAX_INCLUDES, STDLIB_NAME, include_search_path};
pub use grammar::{Expr, ExprId, Grammar, RegexTerminal, Repeat, Rule, SymbolId, TokenMatch};
pub use parser::{MAX_NESTING, MAX_PERMUTATION_ITEMS};
pub use reach::{Components, Reach};
pub use source::{LineCol, SourceFile, Span};
pub use tokens::{TokSym, TokenGrammar, TokenKind, Tokens};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The start rule used when none is given.
pub const DEFAULT_START: &str = "start";

/// Specs larger than this (16 MiB) are refused, by default, before parsing; the reader
/// stops there, so `/dev/zero` as a spec costs 16 MiB, not all memory.
pub const MAX_SPEC_BYTES: usize = 16 << 20;

/// A grammar together with the source it came from, for error messages.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The resolved grammar.
    pub grammar: Grammar,
    /// The text the grammar was read from: the main file, with the files a Fandango
    /// spec includes (and its standard library) attached (see [`SourceFile::attach`]).
    pub source: Arc<SourceFile>,
    /// Byte offset in `source` of the `where` constraints after the grammar, if any
    /// (read by `thicket-constraint` as ISLa constraints): the first `where` of the main
    /// file when nothing but `where` constraints follows it. A `.fan` spec's `where`
    /// blocks are all in [`FanParts::constraints`] too, whether or not this is set.
    pub constraints_start: Option<usize>,
    /// What a Fandango spec holds besides its grammar (empty for other specs).
    pub fandango: FanParts,
}

/// Options for reading a spec.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Start rule name without angle brackets (default `start`).
    pub start: String,
    /// Largest spec read, in bytes (default [`MAX_SPEC_BYTES`]); each included file
    /// has the same limit.
    pub max_bytes: usize,
    /// Directories searched first for the files a `.fan` spec includes (`-I DIR`), in
    /// order; see [`include_search_path`] for the rest.
    pub include_dirs: Vec<PathBuf>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            start: DEFAULT_START.to_string(),
            max_bytes: MAX_SPEC_BYTES,
            include_dirs: Vec::new(),
        }
    }
}

/// The dialect a spec is read in, by its name: JSON grammars (`.json`), ISLa grammars
/// (`.bnf`), and Fandango specs (`.fan` and every other name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecFormat {
    /// A fuzzingbook/ISLa JSON grammar dictionary.
    Json,
    /// An ISLa `.bnf` grammar: rules only; no standard library, no Python.
    Isla,
    /// A Fandango `.fan` spec: rules, Python code, constraints, includes, the standard
    /// library.
    Fandango,
}

impl SpecFormat {
    /// The format of a spec named `name`.
    pub fn of(name: &str) -> SpecFormat {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            SpecFormat::Json
        } else if lower.ends_with(".bnf") {
            SpecFormat::Isla
        } else {
            SpecFormat::Fandango
        }
    }
}

/// Reads a spec file. Files ending in `.json` are read as JSON grammars.
pub fn load_spec_file(path: &Path, options: &LoadOptions) -> Result<Spec, SpecError> {
    use std::io::Read;
    let name = path.display().to_string();
    let io_error = |e: std::io::Error| SpecError {
        source: Arc::new(SourceFile::new(name.clone(), "")),
        diagnostics: vec![Diagnostic::error(
            "io",
            format!("cannot read spec {name}: {e}"),
            Span::new(0, 0),
        )],
    };
    // Read at most one byte past the limit: enough to know the spec is too large.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| {
            file.take(options.max_bytes as u64 + 1)
                .read_to_end(&mut bytes)
        })
        .map_err(io_error)?;
    load_spec_bytes(&name, &bytes, options)
}

/// Reads a spec from text with the default start rule; handy in tests and examples.
pub fn load_spec_text(name: &str, bytes: &[u8]) -> Result<Grammar, SpecError> {
    load_spec_bytes(name, bytes, &LoadOptions::default()).map(|s| s.grammar)
}

/// Reads a spec from bytes, reported under `name`; its format by the name
/// ([`SpecFormat::of`]). A Fandango spec's includes are looked for from the directory
/// of `name` (see [`include_search_path`]).
pub fn load_spec_bytes(name: &str, bytes: &[u8], options: &LoadOptions) -> Result<Spec, SpecError> {
    let fail = |source: SourceFile, diagnostic: Diagnostic| SpecError {
        source: Arc::new(source),
        diagnostics: vec![diagnostic],
    };
    if bytes.len() > options.max_bytes {
        return Err(fail(
            SourceFile::new(name, ""),
            Diagnostic::error(
                "too-large",
                format!(
                    "the spec is larger than the limit of {} bytes (raise it with --max-spec-size)",
                    options.max_bytes
                ),
                Span::new(0, 0),
            ),
        ));
    }
    // A UTF-8 byte order mark (as some editors write) is not part of the text.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(e) => {
            let at = e.valid_up_to();
            return Err(fail(
                SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned()),
                Diagnostic::error(
                    "not-utf8",
                    format!("the spec is not valid UTF-8 (byte offset {at})"),
                    Span::new(at, at + 1),
                )
                .with_label_message("invalid byte")
                .with_note("specs are UTF-8 text; write other bytes as b\"\\xHH\" literals"),
            ));
        }
    };
    let format = SpecFormat::of(name);
    if format == SpecFormat::Fandango {
        return load_fandango(SourceFile::new(name, text), options);
    }
    let source = Arc::new(SourceFile::new(name, text));
    let ast = if format == SpecFormat::Json {
        json_import::parse_json_grammar_with_probabilities(&source)
    } else {
        parser::parse_spec(source.text()).map(|ast| (ast, Vec::new()))
    };
    let (ast, probabilities) = ast.map_err(|d| SpecError {
        source: source.clone(),
        diagnostics: vec![*d],
    })?;
    let mut grammar = Grammar::build(&ast, &options.start).map_err(|diagnostics| SpecError {
        source: source.clone(),
        diagnostics,
    })?;
    for (rule, index, p) in probabilities {
        let Some(symbol) = grammar.symbol(&rule) else {
            continue;
        };
        if let Expr::Alt(alts) = grammar.expr(grammar.rule(symbol).body)
            && let Some(&alt) = alts.get(index)
        {
            grammar.set_default_probability(alt, p);
        }
    }
    Ok(Spec {
        grammar,
        source,
        constraints_start: ast.constraints_start,
        fandango: FanParts::default(),
    })
}

/// Reads a Fandango spec: its files, the standard library, the grammar, the rest.
fn load_fandango(main: SourceFile, options: &LoadOptions) -> Result<Spec, SpecError> {
    let loaded = fanfile::load(main, &options.include_dirs, options.max_bytes, true)?;
    let source = Arc::new(loaded.source);
    let grammar = Grammar::build(&loaded.ast, &options.start).map_err(|diagnostics| SpecError {
        source: source.clone(),
        diagnostics,
    })?;
    let fandango = loaded.pending.finish(&grammar, &source);
    Ok(Spec {
        grammar,
        source,
        constraints_start: loaded.ast.constraints_start,
        fandango,
    })
}
