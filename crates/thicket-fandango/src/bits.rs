//! Fandango's bits (`0` and `1` in a grammar) and the bytes they pack into.
//!
//! In thicket's derivation trees a bit is a one-byte terminal, `"0"` or `"1"`, so that
//! generating, repairing and checking work on bit fields as on any text. The input a
//! tree stands for is Fandango's serialisation of it: going through the terminals in
//! order, consecutive bits fill bytes, the first bit most significant, and every other
//! terminal appends its bytes. A terminal that is not a bit, or the end of the input,
//! must come at a byte boundary: Fandango refuses bits that do not fill whole bytes,
//! and so does [`BitLayout::pack`].

use thicket_grammar::{Expr, ExprId, Grammar};
use thicket_tree::{DerivationTree, NodeId};

/// Which terminals of a grammar are bits.
#[derive(Clone, Debug)]
pub struct BitLayout {
    /// Per expression (by index): whether it is a bit terminal.
    is_bit: Vec<bool>,
}

/// Bits of an input that do not fill a whole byte where a byte must begin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LooseBits {
    /// How many bits are left over (1 to 7).
    pub bits: usize,
    /// Where: the offset of the packed byte the next non-bit terminal would start at, or
    /// `None` at the end of the input.
    pub before_byte: Option<usize>,
}

impl std::fmt::Display for LooseBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (s, verb) = if self.bits == 1 {
            ("", "does")
        } else {
            ("s", "do")
        };
        match self.before_byte {
            Some(at) => write!(
                f,
                "{} bit{s} before byte {at} {} not fill a whole byte",
                self.bits, verb
            ),
            None => write!(
                f,
                "{} bit{s} at the end of the input {} not fill a whole byte",
                self.bits, verb
            ),
        }?;
        f.write_str(" (Fandango packs bits into whole bytes, first bit most significant)")
    }
}

impl BitLayout {
    /// The layout of `grammar` whose bit terminals are `bits`; `None` if there are none
    /// (a tree's text is then its input as it is).
    pub fn new(grammar: &Grammar, bits: &[ExprId]) -> Option<BitLayout> {
        if bits.is_empty() {
            return None;
        }
        let mut is_bit = vec![false; grammar.expr_count()];
        for &bit in bits {
            is_bit[bit.index()] = true;
        }
        Some(BitLayout { is_bit })
    }

    /// Whether `expr` is a bit terminal.
    pub fn is_bit(&self, expr: ExprId) -> bool {
        self.is_bit.get(expr.index()).copied().unwrap_or(false)
    }

    /// The input `tree` stands for: its bits packed into bytes, its other terminals as
    /// they are; or where bits do not fill a whole byte.
    pub fn pack(&self, tree: &DerivationTree, grammar: &Grammar) -> Result<Vec<u8>, LooseBits> {
        let mut out = Vec::with_capacity(tree.bytes().len());
        let mut byte = 0u8;
        let mut filled = 0usize;
        for i in 0..tree.len() {
            let node = NodeId::from_index(i);
            let expr = tree.expr(node);
            if !matches!(grammar.expr(expr), Expr::Literal(_) | Expr::Regex(_)) {
                continue;
            }
            let text = tree.text(node);
            if self.is_bit(expr) {
                byte = byte << 1 | u8::from(matches!(text, [b'1'] | [1]));
                filled += 1;
                if filled == 8 {
                    out.push(byte);
                    (byte, filled) = (0, 0);
                }
                continue;
            }
            if filled != 0 {
                return Err(LooseBits {
                    bits: filled,
                    before_byte: Some(out.len()),
                });
            }
            out.extend_from_slice(text);
        }
        if filled != 0 {
            return Err(LooseBits {
                bits: filled,
                before_byte: None,
            });
        }
        Ok(out)
    }
}
