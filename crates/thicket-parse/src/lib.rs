//! # thicket-parse
//!
//! A general context-free parser: any grammar the spec format accepts (ambiguous, with
//! empty rules, left and right recursion, EBNF quantifiers, regex and byte terminals),
//! over bytes, into the same [`DerivationTree`](thicket_tree::DerivationTree)s the generator produces, so that
//! `unparse(parse(x)) == x` and trees from both sides can be compared.
//!
//! ## Algorithm
//!
//! Earley's algorithm run directly on the grammar graph (no rewriting to BNF): an item
//! is `(node, dot, origin)` where `node` is any non-terminal grammar node. A sequence's
//! dot is the number of children matched; a reference, an alternation: 0 (expecting) or
//! 1 (complete); a repetition's dot counts repetitions, capped at `min` for unbounded
//! ones, so `x*` needs one item per position and a long repetition parses in linear
//! time. Terminals are matched where they are expected (literals by comparison, regexes
//! by an anchored DFA reporting every match end) and the advanced item lands in the set
//! at the match end. Empty derivations use Aycock and Horspool's fix: expecting a
//! nullable node advances at once. A node is predicted only where the next byte is in
//! its FIRST set, and a match or completion is dropped where the next byte is not in
//! its FOLLOW set (it could be part of no derivation of the whole input).
//!
//! A rule reference that is predicted (not scanned as a token) has no items: expecting
//! it predicts the rule's body, whose complete item is the reference's child in trees.
//!
//! Who waits for a completed node is static (its parent in the graph, or every reference
//! to its rule), so completion looks only in the origin set, through a per-set index
//! sorted by `(node, origin, dot)`.
//!
//! ## Which tree (ambiguity)
//!
//! Every item remembers how it was first derived (`back`: where its last child starts,
//! or which alternative completed it). The tree returned is the one these first
//! derivations spell: **the derivation the parser found first**, processing positions
//! left to right and items in the order they arose (a reference, having no items,
//! takes no step of its own in that order). Because an item can only be first
//! derived from items that existed before it, this tree is always finite, even for
//! grammars with cycles such as `<a> ::= <a> | "x"`. Empty subtrees are built from a
//! static choice (the shallowest empty derivation), for the same reason. The
//! number of trees is available separately ([`ParseResult::count_trees`]).
//!
//! An associative rule, `A ::= A x A | ...` (ISLa's XML attributes are
//! `<xml-attribute> ::= <xml-attribute> " " <xml-attribute>`), derives a list of n
//! operands in every bracketing, which would cost the chart n² items and n³ steps. Its
//! right operands are parsed through the rule's other alternatives only: the same
//! language, since every derivation rotates into the left-nested one, and that is the
//! tree returned (`((a a) a) a`). Counting, listing and every-parse k-paths parse such
//! an input again with all bracketings.

#![warn(missing_docs)]

mod chart;
mod compile;
mod count;
mod earley;
mod error;
mod fresh;
pub mod memory;
mod terminal;
mod token;
mod tree;

pub use chart::ParseResult;
pub use compile::Parser;
pub use count::TreeCount;
pub use error::{CompileError, ParseError, Rejection};
pub use terminal::{RegexCache, RegexMatcher};

/// Limits of the parser.
#[derive(Clone, Copy, Debug)]
pub struct ParseConfig {
    /// Most Earley items kept for one input before giving up; bounds memory (an item
    /// costs 24 bytes, and about as much again goes to the other parts of the chart).
    pub max_items: usize,
    /// Most bytes of finished parses' chart vectors a [`Parser`] keeps for its next
    /// inputs (emptied, with their capacity), so that parsing many inputs with one
    /// parser does not allocate and touch fresh memory for each. Memory a parse wrote
    /// beyond this is returned to the allocator. 0 keeps nothing.
    pub keep_bytes: usize,
    /// Whether a large input may use helper threads (on a machine with two cores or
    /// more): one faulting in the memory its chart and tree are about to write while the
    /// first thread parses (256 KiB or more, Linux: fresh pages cost microseconds each
    /// on a VM, a third of the time of a large parse), and one reading half of its tree
    /// (128 KiB or more). Only while no other parse of the same [`Parser`] is running,
    /// so a pool of workers parsing many inputs at once starts none. Off by default: a
    /// library does not start threads unless asked (the `thicket` binary turns them
    /// on). Trees are the same either way.
    pub threads: bool,
    /// Memory the caller needs per input byte once the parse is done, beside the
    /// chart and the tree (what it builds from the tree while the chart is still
    /// held). Under an address-space limit the chart grows only while the tree and
    /// this still fit, so that a large input fails with
    /// [`ParseError::OutOfMemory`] rather than later, in an allocation Rust cannot
    /// recover from (see [`memory`]). 0 by default.
    pub reserve_per_byte: usize,
}

impl Default for ParseConfig {
    /// 100 million items, 128 MiB of chart vectors kept per parser, no helper threads,
    /// nothing reserved for the caller.
    fn default() -> Self {
        ParseConfig {
            max_items: 100_000_000,
            keep_bytes: 128 << 20,
            threads: false,
            reserve_per_byte: 0,
        }
    }
}
