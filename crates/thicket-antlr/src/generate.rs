//! Drawing inputs of an ANTLR grammar: generated from the byte grammar, then made to
//! lex as their trees intend and checked by the exact reading. Shared by `thicket
//! generate` and the Python module, so that input `i` of a seed is the same in both.

use crate::{AntlrSpec, Checker};
use thicket_gen::{GenRng, GenStats, Generator, Weights};
use thicket_tree::DerivationTree;

/// Percent of characters drawn from negated sets and `.` of ANTLR grammars that are
/// printable ASCII (the rest any member of the set): give it to the generator's
/// `set_printable_ascii_share`, so that such text looks like text.
pub const PRINTABLE_PERCENT: u8 = 95;

/// Draws of a whole input before the last one is kept though the exact reading
/// rejects it.
const DRAWS: usize = 16;

/// Rounds of regenerating tokens the lexer reads as another type.
const RESPELLS: usize = 8;

/// Makes inputs of an ANTLR grammar with a generator of its byte grammar.
pub struct InputMaker<'a> {
    antlr: &'a AntlrSpec,
    checker: Checker<'a>,
    /// How often hidden text comes before a token, as weights of the byte grammar.
    weights: Option<Weights>,
}

/// One input drawn.
pub struct Drawn {
    /// The input, separated where the lexer would merge tokens.
    pub bytes: Vec<u8>,
    /// Its tree in the byte grammar before separation (its text may differ from
    /// `bytes` where separators were put in).
    pub tree: DerivationTree,
    /// Whether the exact reading accepts `bytes` (else every draw was rejected and
    /// the last is kept).
    pub accepted: bool,
    /// What generating the kept draw took.
    pub stats: GenStats,
}

impl<'a> InputMaker<'a> {
    /// A maker for `antlr`'s inputs (its hidden-text probability as set now).
    pub fn new(antlr: &'a AntlrSpec) -> InputMaker<'a> {
        InputMaker {
            antlr,
            checker: antlr.checker(),
            weights: Weights::from_spec(&antlr.spec.grammar),
        }
    }

    /// An input drawn from `rng` by `generator` (of `antlr.spec.grammar`): its tokens
    /// that the lexer reads as another type (an identifier generated as a keyword)
    /// generated again from the same stream (up to 8 rounds), separated where the
    /// lexer would merge tokens, and kept if the exact reading (lexer, then parser
    /// rules) accepts it; otherwise drawn again from the stream (up to 16 times), the
    /// last draw kept if none is accepted.
    pub fn draw(&self, generator: &Generator<'_>, rng: &mut GenRng) -> Drawn {
        let mut last = None;
        for _ in 0..DRAWS {
            let (tree, stats) = match &self.weights {
                Some(weights) => generator.generate_tree_weighted(rng, weights),
                None => generator.generate_tree(rng),
            };
            // A token generated as text another lexer rule wins (an identifier `if`) is
            // generated again from the same stream, rather than the whole input.
            let tree = self.antlr.respell(tree, RESPELLS, &mut |expr, builder| {
                generator.expand(expr, 0, rng, builder);
            });
            let bytes = self
                .antlr
                .separate(&tree)
                .unwrap_or_else(|| tree.bytes().to_vec());
            let accepted = self.checker.accepts(&bytes).is_ok();
            let drawn = Drawn {
                bytes,
                tree,
                accepted,
                stats,
            };
            if accepted {
                return drawn;
            }
            last = Some(drawn);
        }
        last.expect("at least one draw")
    }

    /// Input `index` of `seed`: [`InputMaker::draw`] from the seed's stream `index`,
    /// as `thicket generate --seed SEED` writes it.
    pub fn input(&self, generator: &Generator<'_>, seed: u64, index: u64) -> Drawn {
        self.draw(generator, &mut Generator::rng_for(seed, index))
    }

    /// The spec this maker draws inputs of.
    pub fn spec(&self) -> &'a AntlrSpec {
        self.antlr
    }

    /// The exact reading this maker checks inputs with.
    pub fn checker(&self) -> &Checker<'a> {
        &self.checker
    }
}
