//! What a Fandango `.fan` spec holds besides its grammar: Python code, constraints,
//! generators, computed repetition bounds, parties, bits and settings. thicket-grammar
//! reads the grammar and *captures* the rest as [`FanBlock`]s (where each piece of
//! Python is written) for the crates that evaluate Python and translate constraints.
//!
//! How a `.fan` file is cut into statements is described in `docs/spec-format.md`;
//! in short, as Fandango's own parser does: a statement is a logical line (Python's:
//! brackets and backslashes join physical lines) with the lines indented under it, and
//! it is a production (`<x> ::= ...`), a constraint (`where`, `minimizing`,
//! `maximizing`), an `include("file")`, a `setting` or else Python code.

use crate::Diagnostic;
use crate::grammar::{ExprId, SymbolId};
use crate::source::{LineCol, SourceFile, Span};
use std::path::PathBuf;
use std::sync::Arc;

/// A piece of Python (or constraint) text in a spec file, with the file it is in, so
/// that an included file's code is reported under its own name.
#[derive(Clone, Debug)]
pub struct FanBlock {
    /// The file the text is in (a spec's main file, or a file it includes).
    pub source: Arc<SourceFile>,
    /// Where the text is in `source`. It starts at its first token: when that is
    /// indented, the later lines keep their indentation as written (see
    /// [`FanBlock::indent`]).
    pub span: Span,
}

impl FanBlock {
    /// The text.
    pub fn text(&self) -> &str {
        self.source.slice(self.span)
    }

    /// Where the text starts.
    pub fn line_col(&self) -> LineCol {
        self.source.line_col(self.span.start as usize)
    }

    /// The column (0-based, in characters) the text starts at: the indentation of its
    /// first line, which a consumer removes from the later lines to run it alone.
    pub fn indent(&self) -> usize {
        self.line_col().column - 1
    }
}

/// The kind of a Fandango constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstraintKind {
    /// `where EXPR`: inputs must satisfy it.
    Where,
    /// `minimizing EXPR`: a soft goal, as small as possible.
    Minimizing,
    /// `maximizing EXPR`: a soft goal, as large as possible.
    Maximizing,
}

/// A constraint: its kind and its expression (the text after the keyword).
#[derive(Clone, Debug)]
pub struct FanConstraint {
    /// `where`, `minimizing` or `maximizing`.
    pub kind: ConstraintKind,
    /// The expression after the keyword, up to the end of the statement (with the
    /// lines indented under it, as in `where forall <x> in <y>:\n    body`).
    pub block: FanBlock,
}

/// A generator: `<x> ::= alternatives := EXPR` (or the deprecated `= EXPR`, `:: EXPR`).
#[derive(Clone, Debug)]
pub struct FanGenerator {
    /// The rule the generator makes values for.
    pub rule: SymbolId,
    /// The Python expression.
    pub block: FanBlock,
}

/// A repetition whose bounds are Python expressions, `<byte>{f(<len>)}` or
/// `<x>{lo, hi}`. In the grammar such a repetition is as loose as its literal bounds
/// allow: a computed least count is 0 and a computed greatest count is unbounded; the
/// expressions narrow it while generating.
#[derive(Clone, Debug)]
pub struct ComputedRepeat {
    /// The `Repeat` node (a permutation may copy it: each copy has its own entry).
    pub expr: ExprId,
    /// The least count's expression, if it is computed (`{e}` gives `e` for both).
    pub min: Option<FanBlock>,
    /// The greatest count's expression, if it is computed.
    pub max: Option<FanBlock>,
}

/// A reference that names parties, `<Sender:x>` or `<Sender:Receiver:x>` (a protocol
/// spec's message): in the grammar it refers to the rule `x`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartyRef {
    /// The `Ref` node.
    pub expr: ExprId,
    /// The party that sends the message.
    pub sender: String,
    /// The party that receives it, if named.
    pub receiver: Option<String>,
}

/// Everything of a Fandango spec that is not grammar, for the crates that run it.
/// Empty for ISLa `.bnf` grammars and JSON grammars.
///
/// Order: as Fandango orders it, each included file's statements come *before* the
/// statements of the including file (Fandango's parser prepends an included file's
/// productions, code and constraints to what it has read so far); otherwise file order.
#[derive(Clone, Debug, Default)]
pub struct FanParts {
    /// Python code, one block per run of consecutive Python statements.
    pub python: Vec<FanBlock>,
    /// `where`, `minimizing` and `maximizing` constraints (every one, whatever its
    /// dialect; `Spec::constraints_start` tells where ISLa-read `where` blocks begin).
    pub constraints: Vec<FanConstraint>,
    /// Generators of the rules that have one (the rule's last definition's).
    pub generators: Vec<FanGenerator>,
    /// Repetitions with computed bounds.
    pub computed_repeats: Vec<ComputedRepeat>,
    /// `setting ...` statements: the text after `setting`.
    pub settings: Vec<FanBlock>,
    /// The parties the grammar names, in order of first mention (senders and
    /// receivers). Not empty exactly when the spec is a protocol spec.
    pub parties: Vec<String>,
    /// The references that name parties.
    pub party_refs: Vec<PartyRef>,
    /// Whether the grammar has bits (`0`, `1`). thicket's trees are bytes: a bit is the
    /// one-byte literal `"0"` or `"1"` in the grammar, so lint and parsing of such
    /// text work, but the bytes Fandango makes from bits are not generated.
    pub uses_bits: bool,
    /// The literal nodes that stand for bits.
    pub bit_terminals: Vec<ExprId>,
    /// The files included (resolved paths), in the order they were read.
    pub includes: Vec<PathBuf>,
    /// Warnings about what was read (redefined rules, deprecated forms, invalid
    /// escapes, regex lookarounds left out), spans in the spec's source.
    pub warnings: Vec<Diagnostic>,
}

impl FanParts {
    /// Whether the spec is a protocol spec: its grammar names parties.
    pub fn is_protocol(&self) -> bool {
        !self.parties.is_empty()
    }
}
