//! Random strings from regex terminals, written into a caller's buffer (no allocation
//! per sample, which matters: JSON's string characters are one regex sample each).
//!
//! Choices follow the generator's rules: alternatives and class members are uniform, a
//! repetition count is uniform in `[min, min(max, max(min, max_repetitions))]`.
//!
//! Size is bounded: a sample is given a byte budget beyond the regex's minimal match
//! ([`RegexSampler::sample_within`]); a choice that would overrun it (an extra
//! repetition, a longer alternative, a multi-byte character) is replaced by the smallest
//! one, so a sample never exceeds its minimum plus the budget. The minimal match itself
//! and the mandatory repetitions (`a{1000}{1000}{1000}` is a billion of them) are known
//! when compiling, so the generator refuses such a regex before sampling.

use crate::choices::{ChoiceSource, Random, kth_simplest};
use rand::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};

/// A compiled sampler for one regex.
#[derive(Clone, Debug)]
pub struct RegexSampler {
    node: Node,
    /// Percent of draws from a class that take a printable ASCII member when the class
    /// has some and other members too (see [`RegexSampler::set_printable_ascii_share`]).
    ascii_percent: u8,
    /// Bytes of the shortest match.
    min_len: u64,
    /// Repetitions any match takes at least (each repeated item counts one).
    min_steps: u64,
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
        /// Its printable ASCII members (space to `~`).
        ascii: Box<[u8]>,
    },
    Repeat {
        item: Box<Node>,
        min: u32,
        max: u32,
        /// The item's shortest match, in bytes.
        item_len: u64,
    },
    Concat(Box<[Node]>),
    /// Alternatives with the shortest match of each.
    Alt(Box<[Node]>, Box<[u64]>),
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
        let node = compile(hir, max_repetitions)?;
        let (min_len, min_steps) = minimum(&node);
        Ok(RegexSampler {
            node,
            min_len,
            min_steps,
            ascii_percent: 0,
        })
    }

    /// Bytes of the shortest match.
    pub fn min_len(&self) -> u64 {
        self.min_len
    }

    /// Repetitions every sample takes at least (`a{1000}{1000}` takes 1,001,000).
    pub fn min_steps(&self) -> u64 {
        self.min_steps
    }

    /// Appends one random match to `out`, of any length the repetition cap allows.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<u8>) {
        let mut budget = u64::MAX;
        sample(
            &self.node,
            &mut Random(rng),
            out,
            &mut budget,
            self.ascii_percent,
        );
    }

    /// Appends one random match to `out` of at most `min_len() + *budget` bytes, taking
    /// what it uses beyond the minimum from `budget`.
    pub fn sample_within<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<u8>, budget: &mut u64) {
        sample(
            &self.node,
            &mut Random(rng),
            out,
            budget,
            self.ascii_percent,
        );
    }

    /// [`RegexSampler::sample_within`] with its choices from `choices`.
    pub fn sample_from<C: ChoiceSource>(
        &self,
        choices: &mut C,
        out: &mut Vec<u8>,
        budget: &mut u64,
    ) {
        sample(&self.node, choices, out, budget, self.ascii_percent);
    }

    /// Makes a class that holds printable ASCII characters (space to `~`) and others
    /// (a negated set, any character) draw a printable ASCII member `percent` percent
    /// of the time, and any member uniformly otherwise, so that text from `[^"]` or
    /// `.` looks like text rather than a sample of all of Unicode. 0, the default,
    /// draws every member uniformly.
    pub fn set_printable_ascii_share(&mut self, percent: u8) {
        self.ascii_percent = percent.min(100);
    }
}

/// The shortest match of a node in bytes and the repetitions it takes (saturating).
fn minimum(node: &Node) -> (u64, u64) {
    match node {
        Node::Literal(bytes) => (bytes.len() as u64, 0),
        Node::Bytes(_) => (1, 0),
        Node::Class {
            ranges, unicode, ..
        } => (class_min_len(ranges, *unicode), 0),
        Node::Repeat { item, min, .. } => {
            let (len, steps) = minimum(item);
            let min = u64::from(*min);
            (
                len.saturating_mul(min),
                steps.saturating_add(1).saturating_mul(min),
            )
        }
        Node::Concat(items) => items.iter().map(minimum).fold((0, 0), |(l, s), (il, is)| {
            (l.saturating_add(il), s.saturating_add(is))
        }),
        Node::Alt(alts, _) => alts
            .iter()
            .map(minimum)
            .fold((u64::MAX, u64::MAX), |(l, s), (al, as_)| {
                (l.min(al), s.min(as_))
            }),
    }
}

/// UTF-8 length of a code point (or 1 for a byte).
fn encoded_len(value: u32, unicode: bool) -> u64 {
    match value {
        _ if !unicode => 1,
        0..0x80 => 1,
        0x80..0x800 => 2,
        0x800..0x10000 => 3,
        _ => 4,
    }
}

/// The shortest member's length: ranges are sorted, so it is the first one's start.
fn class_min_len(ranges: &[(u32, u32)], unicode: bool) -> u64 {
    ranges
        .first()
        .map_or(0, |&(start, _)| encoded_len(start, unicode))
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
        HirKind::Alternation(alts) => {
            let alts: Box<[Node]> = alts
                .iter()
                .map(|h| compile(h, cap))
                .collect::<Result<_, _>>()?;
            let lens = alts.iter().map(|a| minimum(a).0).collect();
            Node::Alt(alts, lens)
        }
        HirKind::Repetition(rep) => {
            let bound = rep.min.max(cap);
            let item = compile(&rep.sub, cap)?;
            Node::Repeat {
                item_len: minimum(&item).0,
                item: Box::new(item),
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
            let ascii = (0x20..=0x7Eu32)
                .filter(|c| ranges.iter().any(|&(s, e)| s <= *c && *c <= e))
                .map(|c| c as u8)
                .collect();
            Node::Class {
                ranges: ranges.into_boxed_slice(),
                before: before.into_boxed_slice(),
                total,
                unicode,
                ascii,
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

/// Appends a random match of `node`; what it takes beyond the node's minimal match comes
/// out of `budget`, and choices that would overrun it take the smallest option.
fn sample<C: ChoiceSource>(
    node: &Node,
    rng: &mut C,
    out: &mut Vec<u8>,
    budget: &mut u64,
    ascii_percent: u8,
) {
    match node {
        Node::Literal(bytes) => out.extend_from_slice(bytes),
        Node::Bytes(members) => out.push(members[rng.choose(members.len() as u32) as usize]),
        Node::Class {
            ranges,
            before,
            total,
            unicode,
            ascii,
        } => {
            if ascii_percent > 0 && !ascii.is_empty() && rng.choose(100) < u32::from(ascii_percent)
            {
                out.push(ascii[rng.choose(ascii.len() as u32) as usize]);
                return;
            }
            let index = rng.choose(*total);
            let range = before.partition_point(|&b| b <= index) - 1;
            let mut value = ranges[range].0 + (index - before[range]);
            if *unicode {
                let extra = encoded_len(value, true) - class_min_len(ranges, true);
                if extra > *budget {
                    value = ranges[0].0;
                } else {
                    *budget -= extra;
                }
                let c = char::from_u32(value).expect("surrogates were split out");
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                out.push(value as u8);
            }
        }
        Node::Repeat {
            item,
            min,
            max,
            item_len,
        } => {
            let mut count = min + rng.choose(max - min + 1);
            let extra = u64::from(count - min);
            if *item_len > 0 && extra.saturating_mul(*item_len) > *budget {
                count = min + (*budget / item_len) as u32;
            }
            *budget -= u64::from(count - min) * item_len;
            for _ in 0..count {
                sample(item, rng, out, budget, ascii_percent);
            }
        }
        Node::Concat(items) => {
            for item in items {
                sample(item, rng, out, budget, ascii_percent);
            }
        }
        Node::Alt(alts, lens) => {
            let shortest = lens.iter().copied().min().unwrap_or(0);
            let mut chosen = rng.choose(alts.len() as u32) as usize;
            if C::SIMPLEST_FIRST {
                chosen = kth_simplest(alts.len(), chosen, |i| lens[i]);
            }
            if lens[chosen] - shortest > *budget {
                chosen = lens.iter().position(|&l| l == shortest).unwrap_or(0);
            }
            *budget -= lens[chosen] - shortest;
            sample(&alts[chosen], rng, out, budget, ascii_percent);
        }
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
    fn a_budget_bounds_every_sample_and_the_minimum_is_known() {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(r"(a{0,1000}|bb){1000}[\x{80}-\x{10FFFF}]{2,9}")
            .unwrap();
        let sampler = RegexSampler::new(&hir, 1000).unwrap();
        assert_eq!(sampler.min_len(), 4);
        assert_eq!(sampler.min_steps(), 1002);
        let mut rng = crate::GenRng::seed_from_u64(1);
        for budget in [0u64, 10, 5000] {
            let mut left = budget;
            let mut out = Vec::new();
            sampler.sample_within(&mut rng, &mut out, &mut left);
            assert!(
                out.len() as u64 <= 4 + budget,
                "{} > 4 + {budget}",
                out.len()
            );
            assert_eq!(out.len() as u64, 4 + budget - left);
        }
        let huge = regex_syntax::ParserBuilder::new()
            .build()
            .parse("a{1000}{1000}{1000}")
            .unwrap();
        let sampler = RegexSampler::new(&huge, 5).unwrap();
        assert_eq!(sampler.min_len(), 1_000_000_000);
    }

    #[test]
    fn a_printable_ascii_share_makes_negated_sets_mostly_printable() {
        let hir = regex_syntax::Parser::new().parse("[^\"]").unwrap();
        let mut sampler = RegexSampler::new(&hir, 5).unwrap();
        let printable = |sampler: &RegexSampler| {
            let mut rng = crate::GenRng::seed_from_u64(7);
            (0..1000)
                .filter(|_| {
                    let mut out = Vec::new();
                    sampler.sample(&mut rng, &mut out);
                    out.len() == 1 && (0x20..0x7F).contains(&out[0])
                })
                .count()
        };
        // Uniform over all of Unicode: almost never ASCII.
        assert!(printable(&sampler) < 10);
        sampler.set_printable_ascii_share(90);
        let share = printable(&sampler);
        assert!((850..=950).contains(&share), "{share}");
    }

    #[test]
    fn classes_are_sampled_uniformly_enough_to_reach_every_member() {
        let seen: std::collections::HashSet<_> = samples("[a-e]|[x-z]", 500).into_iter().collect();
        assert_eq!(seen.len(), 8);
    }
}
