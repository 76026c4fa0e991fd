//! Regex terminals of an exact length: the lengths a regex can match (within the
//! generator's repetition cap, and without it), and a random match of a given length.
//! A length is counted in characters, as `str.len` counts them (a member of a byte
//! class is one character: a byte of an invalid sequence reads as one).
//!
//! Sampling until the length fits works for a character class, not for `[ \t]+` asked
//! for 40 characters: the sampler caps the repetition, and a long run is drawn with tiny
//! odds. Here the choices (alternative, repetition count) are made among those that
//! keep the length achievable, as the grammar's measure table does.

use crate::bits::{self, Bits};
use rand::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};
use thicket_gen::below;

/// A regex compiled for exact-length matches.
pub(crate) struct RegexLengths {
    root: Node,
}

struct Node {
    kind: Kind,
    /// The lengths with unbounded repetitions capped as the generator caps them.
    capped: Bits,
    /// All the lengths (up to the table's cap).
    full: Bits,
}

enum Kind {
    Literal(Box<[u8]>),
    /// Members as ranges of code points (of bytes, if not `unicode`), surrogates left
    /// out; `total` of them.
    Class {
        ranges: Vec<(u32, u32)>,
        total: u32,
        unicode: bool,
    },
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        item: Box<Node>,
        min: u32,
        max: Option<u32>,
        /// The generator's bound on this repetition.
        capped_max: u32,
    },
    /// Matches nothing a lone terminal can hold (an anchor, a word boundary).
    Never,
}

impl RegexLengths {
    /// `hir` compiled; unbounded repetitions capped at `max_repetitions` in the capped
    /// lengths, lengths above `limit` dropped.
    pub(crate) fn new(hir: &Hir, max_repetitions: u32, limit: usize) -> RegexLengths {
        RegexLengths {
            root: compile(hir, max_repetitions, limit),
        }
    }

    /// The lengths within the repetition cap.
    pub(crate) fn capped(&self) -> &Bits {
        &self.root.capped
    }

    /// All the lengths.
    pub(crate) fn full(&self) -> &Bits {
        &self.root.full
    }

    /// Appends a random match of exactly `len` characters to `out`; false if there is
    /// none.
    pub(crate) fn sample<R: Rng + ?Sized>(
        &self,
        len: usize,
        rng: &mut R,
        out: &mut Vec<u8>,
    ) -> bool {
        emit(&self.root, len, rng, out)
    }
}

fn node(kind: Kind, capped: Bits, full: Bits, limit: usize) -> Node {
    let (mut capped, mut full) = (capped, full);
    capped.truncate(limit);
    full.truncate(limit);
    Node { kind, capped, full }
}

fn compile(hir: &Hir, cap: u32, limit: usize) -> Node {
    match hir.kind() {
        HirKind::Empty => node(
            Kind::Literal(Box::default()),
            Bits::single(0),
            Bits::single(0),
            limit,
        ),
        HirKind::Literal(lit) => {
            let chars = thicket_constraint::eval::input_string(&lit.0)
                .chars()
                .count();
            let len = Bits::single(chars);
            node(Kind::Literal(lit.0.clone()), len.clone(), len, limit)
        }
        HirKind::Look(_) => node(Kind::Never, Bits::empty(), Bits::empty(), limit),
        HirKind::Capture(c) => compile(&c.sub, cap, limit),
        HirKind::Concat(items) => {
            let parts: Vec<Node> = items.iter().map(|h| compile(h, cap, limit)).collect();
            let (mut capped, mut full) = (Bits::single(0), Bits::single(0));
            for p in &parts {
                capped = capped.sum(&p.capped);
                full = full.sum(&p.full);
            }
            node(Kind::Concat(parts), capped, full, limit)
        }
        HirKind::Alternation(alts) => {
            let alts: Vec<Node> = alts.iter().map(|h| compile(h, cap, limit)).collect();
            let (mut capped, mut full) = (Bits::empty(), Bits::empty());
            for a in &alts {
                capped.union(&a.capped);
                full.union(&a.full);
            }
            node(Kind::Alt(alts), capped, full, limit)
        }
        HirKind::Repetition(rep) => {
            let item = compile(&rep.sub, cap, limit);
            // As the generator's regex sampler bounds it.
            let bound = rep.min.max(cap);
            let capped_max = rep.max.map_or(bound, |m| m.min(bound));
            let capped = item.capped.repeated(rep.min, Some(capped_max));
            let full = item.full.repeated(rep.min, rep.max);
            node(
                Kind::Repeat {
                    item: Box::new(item),
                    min: rep.min,
                    max: rep.max,
                    capped_max,
                },
                capped,
                full,
                limit,
            )
        }
        HirKind::Class(class) => {
            let (ranges, unicode): (Vec<(u32, u32)>, bool) = match class {
                Class::Unicode(c) => (
                    c.ranges()
                        .iter()
                        .flat_map(|r| {
                            // Surrogates are not `char`s.
                            let (start, end) = (r.start() as u32, r.end() as u32);
                            let low = (start < 0xD800).then(|| (start, end.min(0xD7FF)));
                            let high = (end > 0xDFFF).then(|| (start.max(0xE000), end));
                            low.into_iter().chain(high)
                        })
                        .collect(),
                    true,
                ),
                Class::Bytes(c) => (
                    c.ranges()
                        .iter()
                        .map(|r| (u32::from(r.start()), u32::from(r.end())))
                        .collect(),
                    false,
                ),
            };
            let total = ranges.iter().map(|&(s, e)| e - s + 1).sum();
            let one = if total > 0 {
                Bits::single(1)
            } else {
                Bits::empty()
            };
            node(
                Kind::Class {
                    ranges,
                    total,
                    unicode,
                },
                one.clone(),
                one,
                limit,
            )
        }
    }
}

/// Appends a match of `node` of exactly `len` characters: within the cap when the cap
/// allows that length (the shape the generator gives), otherwise beyond it.
fn emit<R: Rng + ?Sized>(node: &Node, len: usize, rng: &mut R, out: &mut Vec<u8>) -> bool {
    let capped = node.capped.contains(len);
    if !capped && !node.full.contains(len) {
        return false;
    }
    fn pick(n: &Node, capped: bool) -> &Bits {
        if capped { &n.capped } else { &n.full }
    }
    fn liked(n: &Node, capped: bool) -> Option<&Bits> {
        (!capped).then_some(&n.capped)
    }
    let set = |n| pick(n, capped);
    let preferred = |n| liked(n, capped);
    match &node.kind {
        Kind::Literal(bytes) => {
            out.extend_from_slice(bytes);
            true
        }
        Kind::Never => false,
        Kind::Class {
            ranges,
            total,
            unicode,
        } => {
            let mut index = below(rng, *total);
            for &(s, e) in ranges {
                let size = e - s + 1;
                if index < size {
                    let value = s + index;
                    if *unicode {
                        let c = char::from_u32(value).expect("surrogates were left out");
                        let mut buf = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    } else {
                        out.push(value as u8);
                    }
                    return true;
                }
                index -= size;
            }
            false
        }
        Kind::Concat(parts) => {
            let sets: Vec<&Bits> = parts.iter().map(set).collect();
            let liked: Option<Vec<&Bits>> =
                (!capped).then(|| parts.iter().map(|p| &p.capped).collect());
            let Some(values) = bits::split(&sets, liked.as_deref(), len, rng) else {
                return false;
            };
            parts.iter().zip(values).all(|(p, v)| emit(p, v, rng, out))
        }
        Kind::Alt(alts) => {
            let options: Vec<&Node> = alts.iter().filter(|a| set(a).contains(len)).collect();
            let liked: Vec<&Node> = options
                .iter()
                .copied()
                .filter(|a| preferred(a).is_some_and(|p| p.contains(len)))
                .collect();
            let pool = if liked.is_empty() { options } else { liked };
            if pool.is_empty() {
                return false;
            }
            let choice = pool[below(rng, pool.len() as u32) as usize];
            emit(choice, len, rng, out)
        }
        Kind::Repeat {
            item,
            min,
            max,
            capped_max,
        } => {
            let bound = if capped { Some(*capped_max) } else { *max };
            let Some(values) = bits::repeat(
                set(item),
                preferred(item),
                *min,
                bound,
                *capped_max,
                len,
                rng,
            ) else {
                return false;
            };
            values.into_iter().all(|v| emit(item, v, rng, out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(pattern: &str) -> RegexLengths {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        RegexLengths::new(&hir, 5, crate::measure::MEASURE_CAP - 1)
    }

    #[test]
    fn matches_of_every_length_asked_for() {
        let mut rng = thicket_gen::Generator::rng_for(5, 0);
        for (pattern, lens) in [
            (r"[ \t\n\r]+", &[1usize, 5, 6, 40, 700][..]),
            (r"[\x{7F}-\x{D7FF}\x{E000}-\x{FFFF}]{2}", &[2]),
            (r"é[\x{10000}-\x{10FFFF}]*", &[1, 4]),
            (r"(ab|c){2,3}d?", &[2, 3, 4, 5, 6, 7]),
            (r"[a-z][a-z0-9]*", &[1, 2, 100]),
        ] {
            let re = lengths(pattern);
            let check = regex::bytes::Regex::new(&format!("^(?:{pattern})$")).unwrap();
            for &len in lens {
                assert!(re.full().contains(len), "{pattern} {len}");
                for _ in 0..20 {
                    let mut out = Vec::new();
                    assert!(re.sample(len, &mut rng, &mut out), "{pattern} {len}");
                    assert_eq!(
                        String::from_utf8_lossy(&out).chars().count(),
                        len,
                        "{pattern}"
                    );
                    assert!(check.is_match(&out), "{pattern} gave {out:?}");
                }
            }
        }
        let ws = lengths(r"[ \t]+");
        assert!(ws.capped().contains(5) && !ws.capped().contains(6));
        assert!(!ws.full().contains(0));
        let mut out = Vec::new();
        assert!(!lengths(r"(ab){2,3}").sample(5, &mut rng, &mut out));
    }
}
