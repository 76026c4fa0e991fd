//! # thicket-grammar
//!
//! The grammar model of thicket and everything that reads it: the spec format (ISLa
//! `.bnf` and the grammar part of Fandango `.fan`, see `docs/spec-format.md`), import of
//! fuzzingbook/ISLa JSON grammars, resolution into a [`Grammar`] of typed ids, static
//! [`Analysis`] (minimal depth and length, productivity, reachability) and the [`lint`].
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
pub mod grammar;
mod json_import;
mod lexer;
mod parser;
pub mod reach;
pub mod source;
pub mod tokens;

pub use analysis::{Analysis, UNBOUNDED, lint};
pub use diag::{Diagnostic, Severity, SpecError};
pub use grammar::{Expr, ExprId, Grammar, RegexTerminal, Repeat, Rule, SymbolId};
pub use parser::MAX_NESTING;
pub use reach::{Components, Reach};
pub use source::{LineCol, SourceFile, Span};
pub use tokens::{TokSym, TokenGrammar, TokenKind, Tokens};

use std::path::Path;
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
    /// The text the grammar was read from.
    pub source: Arc<SourceFile>,
    /// Byte offset in `source` of the `where` constraints after the grammar, if any
    /// (read by `thicket-constraint`).
    pub constraints_start: Option<usize>,
}

/// Options for reading a spec.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Start rule name without angle brackets (default `start`).
    pub start: String,
    /// Largest spec read, in bytes (default [`MAX_SPEC_BYTES`]).
    pub max_bytes: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            start: DEFAULT_START.to_string(),
            max_bytes: MAX_SPEC_BYTES,
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

/// Reads a spec from bytes, reported under `name`. A name ending in `.json` selects the
/// JSON grammar format.
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
    let source = Arc::new(SourceFile::new(name, text));
    let ast = if name.ends_with(".json") {
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
    })
}
