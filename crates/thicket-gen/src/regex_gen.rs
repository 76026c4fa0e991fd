//! Random strings from regex terminals, written into a caller's buffer (no allocation
//! per sample, which matters: JSON's string characters are one regex sample each).
//!
//! Choices follow the generator's rules: alternatives and class members are uniform, a
//! repetition count is uniform in `[min, min(max, max(min, max_repetitions))]`.

use crate::below;
use rand::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};

/// A compiled sampler for one regex.
#[derive(Clone, Debug)]
pub struct RegexSampler {
    node: Node,
}

#[derive(Clone, Debug)]
enum Node {
    Literal(Box<[u8]>),
    /// A class of single bytes (or ASCII characters), as a table of its members: one
    /// random index picks one, the common case for character-level grammars.
    Bytes(Box<[u8]>),
    /// Code points (or bytes) as ranges `start..=end` with the running count of members
    /// before each range, so a uniform index maps to a member by binary search.
    Class {
        ranges: Box<[(u32, u32)]>,
        before: Box<[u32]>,
        total: u32,
        unicode: bool,
    },
    Repeat {
        item: Box<Node>,
        min: u32,
        max: u32,
    },
    Concat(Box<[Node]>),
    Alt(Box<[Node]>),
}

/// Why a regex cannot be sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegexSampleError {
    /// Anchors and word boundaries have no meaning for a lone terminal.
    LookAround,
    /// A character class with no members: the regex matches nothing.
    EmptyClass,
}

impl RegexSampler {
    /// Compiles a parsed regex; unbounded repetitions are capped at `max_repetitions`.
    pub fn new(hir: &Hir, max_repetitions: u32) -> Result<RegexSampler, RegexSampleError> {
        Ok(RegexSampler {
            node: compile(hir, max_repetitions)?,
        })
    }

    /// Appends one random match to `out`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<u8>) {
        sample(&self.node, rng, out);
    }
}

fn compile(hir: &Hir, cap: u32) -> Result<Node, RegexSampleError> {
    Ok(match hir.kind() {
        HirKind::Empty => Node::Literal(Box::default()),
        HirKind::Literal(lit) => Node::Literal(lit.0.clone()),
        HirKind::Look(_) => return Err(RegexSampleError::LookAround),
        HirKind::Capture(c) => compile(&c.sub, cap)?,
        HirKind::Concat(items) => Node::Concat(
            items
                .iter()
                .map(|h| compile(h, cap))
                .collect::<Result<_, _>>()?,
        ),
        HirKind::Alternation(alts) => Node::Alt(
            alts.iter()
                .map(|h| compile(h, cap))
                .collect::<Result<_, _>>()?,
        ),
        HirKind::Repetition(rep) => {
            let bound = rep.min.max(cap);
            Node::Repeat {
                item: Box::new(compile(&rep.sub, cap)?),
                min: rep.min,
                max: rep.max.map_or(bound, |m| m.min(bound)),
            }
        }
        HirKind::Class(class) => {
            let (ranges, unicode): (Vec<(u32, u32)>, bool) = match class {
                Class::Unicode(c) => (
                    c.ranges()
                        .iter()
                        .flat_map(|r| split_surrogates(r.start() as u32, r.end() as u32))
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
            let mut before = Vec::with_capacity(ranges.len());
            let mut total = 0u32;
            for &(start, end) in &ranges {
                before.push(total);
                total += end - start + 1;
            }
            if total == 0 {
                return Err(RegexSampleError::EmptyClass);
            }
            let single_bytes = if unicode { 0x80 } else { 0x100 };
            if ranges.iter().all(|&(_, end)| end < single_bytes) {
                let members = ranges
                    .iter()
                    .flat_map(|&(start, end)| start..=end)
                    .map(|b| b as u8)
                    .collect();
                return Ok(Node::Bytes(members));
            }
            Node::Class {
                ranges: ranges.into_boxed_slice(),
                before: before.into_boxed_slice(),
                total,
                unicode,
            }
        }
    })
}

/// Code point ranges never include surrogates, which are not `char`s.
fn split_surrogates(start: u32, end: u32) -> impl Iterator<Item = (u32, u32)> {
    let low = (start < 0xD800).then(|| (start, end.min(0xD7FF)));
    let high = (end > 0xDFFF).then(|| (start.max(0xE000), end));
    low.into_iter().chain(high)
}

fn sample<R: Rng + ?Sized>(node: &Node, rng: &mut R, out: &mut Vec<u8>) {
    match node {
        Node::Literal(bytes) => out.extend_from_slice(bytes),
        Node::Bytes(members) => out.push(members[below(rng, members.len() as u32) as usize]),
        Node::Class {
            ranges,
            before,
            total,
            unicode,
        } => {
            let index = below(rng, *total);
            let range = before.partition_point(|&b| b <= index) - 1;
            let value = ranges[range].0 + (index - before[range]);
            if *unicode {
                let c = char::from_u32(value).expect("surrogates were split out");
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                out.push(value as u8);
            }
        }
        Node::Repeat { item, min, max } => {
            let count = min + below(rng, max - min + 1);
            for _ in 0..count {
                sample(item, rng, out);
            }
        }
        Node::Concat(items) => {
            for item in items {
                sample(item, rng, out);
            }
        }
        Node::Alt(alts) => sample(&alts[below(rng, alts.len() as u32) as usize], rng, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn samples(pattern: &str, n: usize) -> Vec<Vec<u8>> {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        let sampler = RegexSampler::new(&hir, 5).unwrap();
        let mut rng = crate::GenRng::seed_from_u64(0);
        (0..n)
            .map(|_| {
                let mut out = Vec::new();
                sampler.sample(&mut rng, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn samples_match_the_regex() {
        for pattern in [
            r"[a-z][a-z0-9]*",
            r"[\x{D000}-\x{E100}]",
            r"(ab|c){2,3}d?",
            r"[^\x00-\x7F]",
            r"(?-u:[\x80-\xff])+",
            r"\d{4}-\d{2}",
        ] {
            let check = regex::bytes::Regex::new(&format!("^(?:{pattern})$")).unwrap();
            for s in samples(pattern, 300) {
                assert!(check.is_match(&s), "{pattern} produced {s:?}");
            }
        }
    }

    #[test]
    fn classes_are_sampled_uniformly_enough_to_reach_every_member() {
        let seen: std::collections::HashSet<_> = samples("[a-e]|[x-z]", 500).into_iter().collect();
        assert_eq!(seen.len(), 8);
    }
}
