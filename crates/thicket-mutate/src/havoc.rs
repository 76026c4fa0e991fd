//! AFL-style byte havoc: a stack of 2 to 128 random byte edits of an input, with no
//! regard for the grammar (flip a bit, set an interesting 8-, 16- or 32-bit value, add
//! to a byte, set a random byte, set or insert a punctuation byte, delete, duplicate or
//! overwrite a chunk, insert or overwrite a token of a [`Dictionary`], splice in a chunk
//! of another input).
//!
//! Tree mutations stay in the grammar's language, or leave it by one byte of one
//! terminal; a parser's extensions beyond the language a spec describes (json-c reads C
//! comments, `NaN` and `Infinity`, which RFC 8259 JSON has not) need several bytes
//! written next to each other between tokens, which stacked byte edits on small inputs
//! make (afl-fuzz finds them so). The edits follow AFL's `havoc_stage`: the same
//! interesting values, the stack size `2^(1..=7)`, chunk lengths mostly up to 32 bytes,
//! a dictionary token as AFL's `-x` dictionary gives; one edit is not AFL's, a
//! punctuation byte set or inserted, since the targets here mostly read text.

use rand::Rng;
use thicket_gen::below;
use thicket_grammar::{Expr, Grammar};

/// AFL's interesting 8-bit values (as bytes).
const INTERESTING_8: [i8; 9] = [-128, -1, 0, 1, 16, 32, 64, 100, 127];

/// AFL's interesting 16-bit values beyond the 8-bit ones.
const INTERESTING_16: [i16; 10] = [-32768, -129, 128, 255, 256, 512, 1000, 1024, 4096, 32767];

/// AFL's interesting 32-bit values beyond the 16-bit ones.
const INTERESTING_32: [i32; 8] = [
    i32::MIN,
    -100_663_046,
    -32769,
    32768,
    65535,
    65536,
    100_663_045,
    i32::MAX,
];

/// Bytes that delimit things in text formats: ASCII punctuation and whitespace. A parser
/// of text branches on these, and a bit flip reaches few of them from letters.
const PUNCTUATION: &[u8] = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r";

/// Longest token a dictionary keeps: longer literals are rarely worth inserting whole.
pub const MAX_TOKEN_LEN: usize = 64;

/// Tokens havoc inserts whole, as AFL's `-x` dictionary: the grammar's literals (its
/// keywords and punctuation), and whatever else a caller adds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dictionary {
    /// Distinct tokens, sorted (so a dictionary made from the same tokens draws the same).
    tokens: Vec<Box<[u8]>>,
}

impl Dictionary {
    /// A dictionary of `tokens` (empty ones and those over [`MAX_TOKEN_LEN`] bytes
    /// dropped, duplicates once).
    pub fn new(tokens: impl IntoIterator<Item = Box<[u8]>>) -> Dictionary {
        let mut tokens: Vec<Box<[u8]>> = tokens
            .into_iter()
            .filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN_LEN)
            .collect();
        tokens.sort();
        tokens.dedup();
        Dictionary { tokens }
    }

    /// The literal terminals of `grammar`.
    pub fn of_grammar(grammar: &Grammar) -> Dictionary {
        Dictionary::new(grammar.expr_ids().filter_map(|id| match grammar.expr(id) {
            Expr::Literal(bytes) => Some(bytes.clone()),
            _ => None,
        }))
    }

    /// How many tokens it holds.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Its tokens, sorted.
    pub fn tokens(&self) -> impl Iterator<Item = &[u8]> {
        self.tokens.iter().map(|t| &t[..])
    }

    fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<&[u8]> {
        (!self.tokens.is_empty())
            .then(|| &self.tokens[below(rng, self.tokens.len() as u32) as usize][..])
    }
}

/// The kinds of edit, drawn uniformly for each edit of a stack.
const EDITS: u32 = 13;

/// A copy of `input` with 2 to 128 byte edits stacked on it (see the module docs);
/// `donor`, another input, gives the chunks a splice inserts or overwrites with
/// (without one, a splice copies a chunk of the input itself). The result is at most
/// `max_len` bytes, or `input`'s length if that is more: an edit that would grow it
/// past that is skipped. Every choice is drawn from `rng`.
pub fn havoc<R: Rng + ?Sized>(
    input: &[u8],
    donor: Option<&[u8]>,
    dictionary: &Dictionary,
    max_len: usize,
    rng: &mut R,
) -> Vec<u8> {
    let cap = max_len.max(input.len());
    let mut bytes = input.to_vec();
    let stack = 1u32 << (1 + below(rng, 7));
    for _ in 0..stack {
        edit(&mut bytes, donor, dictionary, cap, rng);
    }
    bytes
}

/// One edit of `bytes`, staying within `cap` bytes.
fn edit<R: Rng + ?Sized>(
    bytes: &mut Vec<u8>,
    donor: Option<&[u8]>,
    dictionary: &Dictionary,
    cap: usize,
    rng: &mut R,
) {
    let len = bytes.len();
    let at = |rng: &mut R, room: usize| below(rng, (len + 1 - room) as u32) as usize;
    // An edit that needs more bytes than there are (a 16- or 32-bit value, a deletion
    // from a single byte) falls through to a splice.
    match below(rng, EDITS) {
        // The edits that change bytes in place need some.
        0..=6 if len == 0 => insert_chunk(bytes, b" ", cap, rng),
        0 => {
            let i = at(rng, 1);
            bytes[i] ^= 1 << below(rng, 8);
        }
        1 => {
            let i = at(rng, 1);
            bytes[i] = INTERESTING_8[below(rng, 9) as usize] as u8;
        }
        2 if len >= 2 => {
            let value = interesting_16(rng);
            let i = at(rng, 2);
            write_either_endian(
                &mut bytes[i..i + 2],
                value.to_le_bytes(),
                value.to_be_bytes(),
                rng,
            );
        }
        3 if len >= 4 => {
            let value = interesting_32(rng);
            let i = at(rng, 4);
            write_either_endian(
                &mut bytes[i..i + 4],
                value.to_le_bytes(),
                value.to_be_bytes(),
                rng,
            );
        }
        4 => {
            // AFL's ARITH_MAX: small steps up or down, wrapping.
            let i = at(rng, 1);
            let step = 1 + below(rng, 35) as u8;
            bytes[i] = if below(rng, 2) == 0 {
                bytes[i].wrapping_add(step)
            } else {
                bytes[i].wrapping_sub(step)
            };
        }
        5 => {
            let i = at(rng, 1);
            bytes[i] ^= 1 + below(rng, 255) as u8;
        }
        6 => {
            // Set or insert: delimiters of two bytes (`/*`, `//`, `<!`) need both.
            let byte = PUNCTUATION[below(rng, PUNCTUATION.len() as u32) as usize];
            if below(rng, 2) == 0 {
                let i = at(rng, 1);
                bytes[i] = byte;
            } else {
                insert_chunk(bytes, &[byte], cap, rng);
            }
        }
        7 if len >= 2 => {
            // Never the whole input: AFL keeps at least a byte.
            let n = chunk_len(rng, len - 1);
            let i = at(rng, n);
            bytes.drain(i..i + n);
        }
        8 | 9 => {
            let chunk = own_chunk_or_block(bytes, rng);
            if below(rng, 2) == 0 || len == 0 {
                insert_chunk(bytes, &chunk, cap, rng);
            } else {
                overwrite_chunk(bytes, &chunk, rng);
            }
        }
        10 | 11 => {
            let Some(token) = dictionary.draw(rng) else {
                let byte = PUNCTUATION[below(rng, PUNCTUATION.len() as u32) as usize];
                return insert_chunk(bytes, &[byte], cap, rng);
            };
            if below(rng, 2) == 0 || len < token.len() {
                insert_chunk(bytes, token, cap, rng);
            } else {
                overwrite_chunk(bytes, token, rng);
            }
        }
        _ => {
            let source = donor.filter(|d| !d.is_empty()).unwrap_or(bytes.as_slice());
            if source.is_empty() {
                return;
            }
            let n = chunk_len(rng, source.len());
            let from = below(rng, (source.len() + 1 - n) as u32) as usize;
            let chunk = source[from..from + n].to_vec();
            if below(rng, 2) == 0 {
                insert_chunk(bytes, &chunk, cap, rng);
            } else {
                overwrite_chunk(bytes, &chunk, rng);
            }
        }
    }
}

/// A chunk to insert or write over: 3 times in 4 a copy of a chunk of `bytes` (AFL's
/// clone), else a block of one byte repeated (a random one, or one of the input's).
fn own_chunk_or_block<R: Rng + ?Sized>(bytes: &[u8], rng: &mut R) -> Vec<u8> {
    if !bytes.is_empty() && below(rng, 4) != 0 {
        let n = chunk_len(rng, bytes.len());
        let from = below(rng, (bytes.len() + 1 - n) as u32) as usize;
        return bytes[from..from + n].to_vec();
    }
    let n = chunk_len(rng, usize::MAX);
    let byte = if !bytes.is_empty() && below(rng, 2) == 0 {
        bytes[below(rng, bytes.len() as u32) as usize]
    } else {
        below(rng, 256) as u8
    };
    vec![byte; n]
}

/// Inserts `chunk` at a random place, unless that would take `bytes` past `cap`.
fn insert_chunk<R: Rng + ?Sized>(bytes: &mut Vec<u8>, chunk: &[u8], cap: usize, rng: &mut R) {
    if bytes.len() + chunk.len() > cap {
        return;
    }
    let i = below(rng, bytes.len() as u32 + 1) as usize;
    bytes.splice(i..i, chunk.iter().copied());
}

/// Writes `chunk` over bytes at a random place (as much of it as fits from there).
fn overwrite_chunk<R: Rng + ?Sized>(bytes: &mut [u8], chunk: &[u8], rng: &mut R) {
    if bytes.is_empty() {
        return;
    }
    let n = chunk.len().min(bytes.len());
    let i = below(rng, (bytes.len() + 1 - n) as u32) as usize;
    bytes[i..i + n].copy_from_slice(&chunk[..n]);
}

/// Writes a value's little- or big-endian bytes (drawn evenly) into `to`.
fn write_either_endian<const N: usize, R: Rng + ?Sized>(
    to: &mut [u8],
    le: [u8; N],
    be: [u8; N],
    rng: &mut R,
) {
    to.copy_from_slice(if below(rng, 2) == 0 { &le } else { &be });
}

/// A chunk length from 1 to `most` (at least 1): 1-32 bytes seven times in eight, else
/// up to 128, as AFL's `choose_block_len` draws in its first queue cycles.
fn chunk_len<R: Rng + ?Sized>(rng: &mut R, most: usize) -> usize {
    let limit = if below(rng, 8) == 0 { 128 } else { 32 };
    let most = most.clamp(1, limit);
    1 + below(rng, most as u32) as usize
}

fn interesting_16<R: Rng + ?Sized>(rng: &mut R) -> u16 {
    let n = INTERESTING_8.len() + INTERESTING_16.len();
    interesting_16_at(below(rng, n as u32) as usize) as u16
}

fn interesting_32<R: Rng + ?Sized>(rng: &mut R) -> u32 {
    let small = INTERESTING_8.len() + INTERESTING_16.len();
    match below(rng, (small + INTERESTING_32.len()) as u32) as usize {
        i if i < small => i32::from(interesting_16_at(i)) as u32,
        i => INTERESTING_32[i - small] as u32,
    }
}

/// The `i`-th 16-bit interesting value, the 8-bit ones first (sign-extended).
fn interesting_16_at(i: usize) -> i16 {
    if i < INTERESTING_8.len() {
        i16::from(INTERESTING_8[i])
    } else {
        INTERESTING_16[i - INTERESTING_8.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::Generator;
    use thicket_grammar::load_spec_text;

    fn dictionary() -> Dictionary {
        let grammar = load_spec_text(
            "t.fan",
            b"<start> ::= \"[\" <n> (\",\" <n>)* \"]\" | \"null\"\n<n> ::= r\"[0-9]+\"\n",
        )
        .unwrap();
        Dictionary::of_grammar(&grammar)
    }

    #[test]
    fn the_grammars_literals_are_the_dictionary() {
        let dictionary = dictionary();
        let tokens: Vec<&[u8]> = dictionary.tokens().collect();
        assert_eq!(tokens, [&b","[..], b"[", b"]", b"null"]);
        let long = vec![b'x'; MAX_TOKEN_LEN + 1].into_boxed_slice();
        let d = Dictionary::new([long, Box::from(&b""[..]), Box::from(&b"a"[..])]);
        assert_eq!(d.len(), 1, "empty and over-long tokens are dropped");
    }

    #[test]
    fn havoc_is_the_same_from_the_same_seed_and_differs_across_seeds() {
        let dictionary = dictionary();
        let input = b"[1,22,333]";
        let mutant = |seed, round| {
            havoc(
                input,
                Some(&b"null"[..]),
                &dictionary,
                256,
                &mut Generator::rng_for(seed, round),
            )
        };
        for round in 0..50 {
            assert_eq!(mutant(3, round), mutant(3, round));
        }
        let distinct: std::collections::BTreeSet<Vec<u8>> =
            (0..200).map(|round| mutant(3, round)).collect();
        assert!(distinct.len() > 190, "{}", distinct.len());
    }

    #[test]
    fn havoc_stays_within_its_size_cap() {
        let dictionary = dictionary();
        for round in 0..2_000 {
            let mut rng = Generator::rng_for(5, round);
            let input = vec![b'7'; below(&mut rng, 40) as usize];
            let cap = 48;
            let out = havoc(&input, Some(&[b'x'; 200][..]), &dictionary, cap, &mut rng);
            assert!(out.len() <= cap, "{} bytes", out.len());
            // An input already over the cap does not grow.
            let big = vec![b'1'; 100];
            let out = havoc(&big, None, &dictionary, cap, &mut rng);
            assert!(out.len() <= big.len(), "{} bytes", out.len());
        }
    }

    #[test]
    fn havoc_writes_tokens_blocks_and_bytes_no_grammar_mutation_writes() {
        // Within a few hundred mutants of a small input: a dictionary token inserted,
        // a block of 8 equal bytes, a splice from the donor, the empty input grown.
        let dictionary = dictionary();
        let (mut token, mut block, mut spliced, mut grown) = (false, false, false, false);
        for round in 0..500 {
            let mut rng = Generator::rng_for(9, round);
            let out = havoc(b"[1]", Some(&b"@@@"[..]), &dictionary, 1024, &mut rng);
            token |= out.windows(4).any(|w| w == b"null");
            block |= out.windows(8).any(|w| w.iter().all(|&b| b == w[0]));
            spliced |= out.contains(&b'@');
            grown |= !havoc(b"", None, &dictionary, 1024, &mut rng).is_empty();
        }
        assert!(token && block && spliced && grown);
    }
}
