//! The producer seam: whatever makes a fresh input from a random stream.
//!
//! Plain generation, generation by weights, k-path steering (thicket-cover), constraint
//! solving (thicket-solve, thicket-fandango) and ANTLR-aware generation (thicket-antlr)
//! all answer the same question: *given this random stream, what is the next input?*
//! They implement [`Producer`], so that whoever consumes inputs (`thicket generate`'s
//! driver, the Python module, CODEINE's targeted generation, the campaign) takes any of
//! them and never asks which one it has. As with ripgrep's `Matcher`, a producer that
//! cannot fail says so in its types ([`std::convert::Infallible`]), and one that can
//! (a solver that finds no valid tree in a stream) names its own [`Miss`].

use crate::{GenRng, GenStats, Generator, Weights};
use thicket_grammar::{ExprId, Grammar};
use thicket_tree::DerivationTree;

/// Why a producer made no input from a stream.
pub trait Miss: std::fmt::Display + Send {
    /// Whether the producer gave up because its deadline passed: later streams would
    /// fail for the same reason, so a driver stops instead of drawing the next one.
    fn deadline_passed(&self) -> bool {
        false
    }
}

impl Miss for std::convert::Infallible {}

/// A fresh tree and what making it took.
#[derive(Clone, Debug)]
pub struct Fresh {
    /// The input's derivation tree.
    pub tree: DerivationTree,
    /// The generator's figures (default for producers that do not count them).
    pub stats: GenStats,
}

/// Makes fresh inputs of a grammar from random streams.
///
/// Every random choice comes from the stream given, so the input a stream gives is a
/// function of the stream alone: drivers give input `i` of seed `s` the stream
/// [`Generator::rng_for`]`(s, i)` and may make inputs in parallel, in any order.
pub trait Producer: Sync {
    /// Why a stream may give no input.
    type Miss: Miss;

    /// The grammar the trees are derivations of.
    fn grammar(&self) -> &Grammar;

    /// A fresh tree from `rng`, or why this stream gives none.
    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss>;

    /// The bytes of the input [`Producer::tree`] gives from the same stream, appended
    /// to `out`; producers that can skip building the tree do (plain generation writes
    /// bytes straight into `out`).
    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Self::Miss> {
        let fresh = self.tree(rng)?;
        out.extend_from_slice(&self.input(&fresh.tree)?);
        Ok(fresh.stats)
    }

    /// The input a tree of this producer stands for: its text, unless the producer
    /// encodes trees otherwise (Fandango's bit fields, packed into bytes); or why the
    /// tree stands for no input.
    fn input<'t>(
        &self,
        tree: &'t DerivationTree,
    ) -> Result<std::borrow::Cow<'t, [u8]>, Self::Miss> {
        Ok(std::borrow::Cow::Borrowed(tree.bytes()))
    }
}

impl Producer for Generator<'_> {
    type Miss = std::convert::Infallible;

    fn grammar(&self) -> &Grammar {
        Generator::grammar(self)
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        let (tree, stats) = self.generate_tree(rng);
        Ok(Fresh { tree, stats })
    }

    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Self::Miss> {
        Ok(self.generate_bytes(rng, out))
    }
}

/// Generation whose choices follow weights per alternative and repetition count
/// (probabilistic grammars: learned, inverted, or a spec's own `prob` options).
#[derive(Clone, Copy)]
pub struct Weighted<'a, 'g> {
    /// The generator whose limits bound every choice.
    pub generator: &'a Generator<'g>,
    /// The weights among what fits the limits.
    pub weights: &'a Weights,
}

impl Producer for Weighted<'_, '_> {
    type Miss = std::convert::Infallible;

    fn grammar(&self) -> &Grammar {
        self.generator.grammar()
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        let (tree, stats) = self.generator.generate_tree_weighted(rng, self.weights);
        Ok(Fresh { tree, stats })
    }

    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Self::Miss> {
        Ok(self
            .generator
            .generate_bytes_weighted(rng, out, self.weights))
    }
}

impl<P: Producer + ?Sized> Producer for &P {
    type Miss = P::Miss;

    fn grammar(&self) -> &Grammar {
        (**self).grammar()
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        (**self).tree(rng)
    }

    fn bytes(&self, rng: &mut GenRng, out: &mut Vec<u8>) -> Result<GenStats, Self::Miss> {
        (**self).bytes(rng, out)
    }
}

/// How trees stand for inputs when an input is an encoding of its tree rather than its
/// text (Fandango's bit fields, packed into bytes): a fuzzing campaign encodes its trees
/// before they run, and decodes inputs it did not make (a resumed queue, other
/// instances' entries) into trees.
pub trait Encoding: Sync {
    /// The input `tree` stands for, or why it stands for none.
    fn encode(&self, tree: &DerivationTree) -> Result<Vec<u8>, String>;
    /// The tree of `input`, `None` if it is not in the language.
    fn decode(&self, input: &[u8]) -> Option<DerivationTree>;
    /// The texts terminal `expr` may have for a tree to stand for the input it says
    /// (Fandango's bits: `0` and `1`, any other text packs as a `0`); `None`: any text.
    /// A mutation of such a terminal picks another of them.
    fn leaf_texts(&self, expr: ExprId) -> Option<&'static [&'static [u8]]> {
        let _ = expr;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GenConfig;
    use thicket_grammar::load_spec_text;

    const SPEC: &str = "<start> ::= <item> | \"[\" <start> \"]\"\n<item> ::= r\"[a-z]{1,4}\"\n";

    /// A driver asking for bytes gets the input it would get asking for the tree.
    fn bytes_spell_trees<P: Producer>(producer: &P) {
        for index in 0..200 {
            let fresh = producer
                .tree(&mut Generator::rng_for(7, index))
                .unwrap_or_else(|_| panic!("no tree"));
            let mut bytes = Vec::new();
            let _ = producer.bytes(&mut Generator::rng_for(7, index), &mut bytes);
            assert_eq!(bytes, fresh.tree.bytes(), "stream {index}");
        }
    }

    #[test]
    fn plain_and_weighted_producers_give_the_same_input_as_bytes_or_tree() {
        let grammar = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        bytes_spell_trees(&generator);
        let weights = Weights::uniform(&grammar);
        bytes_spell_trees(&Weighted {
            generator: &generator,
            weights: &weights,
        });
        // Through a reference too (drivers take producers by reference).
        bytes_spell_trees(&&generator);
    }
}
