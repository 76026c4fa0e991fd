//! Sets of small naturals (`0..MEASURE_CAP`) as bitsets, and the draws that split a
//! value among parts whose achievable values are such sets: the arithmetic behind
//! exact-measure generation (`measure.rs`, `regex_len.rs`).

use crate::measure::MEASURE_CAP;
use rand::Rng;
use thicket_gen::below;

const WORDS: usize = MEASURE_CAP / 64;

/// Values of a set up to which a sum shifts the other set once per value.
const SPARSE: u32 = 8;

/// Counts of a repetition up to which [`repeat`] draws the count first.
const FEW_COUNTS: u32 = 64;

/// A set of values `0..MEASURE_CAP`; sums drop what lies beyond.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Bits([u64; WORDS]);

impl Bits {
    pub(crate) fn empty() -> Bits {
        Bits([0; WORDS])
    }

    pub(crate) fn single(v: usize) -> Bits {
        let mut b = Bits::empty();
        b.insert(v);
        b
    }

    /// `lo..=hi`, clipped to the cap.
    #[cfg(test)]
    pub(crate) fn range(lo: usize, hi: usize) -> Bits {
        let mut b = Bits::empty();
        for v in lo..=hi.min(MEASURE_CAP - 1) {
            b.insert(v);
        }
        b
    }

    pub(crate) fn insert(&mut self, v: usize) {
        if v < MEASURE_CAP {
            self.0[v / 64] |= 1 << (v % 64);
        }
    }

    pub(crate) fn contains(&self, v: usize) -> bool {
        v < MEASURE_CAP && self.0[v / 64] & (1 << (v % 64)) != 0
    }

    pub(crate) fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= b;
        }
    }

    /// Removes every value above `max`.
    pub(crate) fn truncate(&mut self, max: usize) {
        for (w, word) in self.0.iter_mut().enumerate() {
            let first = w * 64;
            if first > max {
                *word = 0;
            } else if max - first < 63 {
                *word &= (1u64 << (max - first + 1)) - 1;
            }
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + bit)
            })
        })
    }

    /// The smallest value above 0, if any.
    pub(crate) fn min_above_zero(&self) -> Option<usize> {
        self.iter().find(|&v| v > 0)
    }

    /// `{v + k | v in self}`, capped.
    fn shifted(&self, k: usize) -> Bits {
        let mut out = Bits::empty();
        self.shift_into(k, &mut out);
        out
    }

    /// Adds `{v + k | v in self}`, capped, to `out`.
    fn shift_into(&self, k: usize, out: &mut Bits) {
        let (words, bits) = (k / 64, k % 64);
        for i in (words..WORDS).rev() {
            let lo = self.0[i - words];
            let hi = if bits > 0 && i > words {
                self.0[i - words - 1] >> (64 - bits)
            } else {
                0
            };
            out.0[i] |= (lo << bits) | hi;
        }
    }

    /// How many values.
    fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The maximal runs of consecutive values, as `(first, length)`.
    fn runs(&self) -> Vec<(usize, usize)> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for v in self.iter() {
            match runs.last_mut() {
                Some((first, len)) if *first + *len == v => *len += 1,
                _ => runs.push((v, 1)),
            }
        }
        runs
    }

    /// How many runs: the cost of using this side as the shifts of a sum.
    fn run_count(&self) -> u32 {
        let mut carry = 0;
        let mut count = 0;
        for &word in &self.0 {
            count += (word & !((word << 1) | carry)).count_ones();
            carry = word >> 63;
        }
        count
    }

    /// `{a + b | a in self, b in other}`, capped. One side is taken run by run: a run
    /// of `n` values adds the other side shifted by each of them, which doubling
    /// (`x | x << 1`, then `| << 2`, ...) makes `log n` shifts; grammar sets are a few
    /// runs, so a sum costs a few dozen passes over the words.
    pub(crate) fn sum(&self, other: &Bits) -> Bits {
        // A side of a few values (a count's `{0}` or `{1}`, a literal's length): one
        // shift of the other per value, without the runs.
        let (a, b) = (self.count(), other.count());
        if a.min(b) <= SPARSE {
            let (few, many) = if a <= b { (self, other) } else { (other, self) };
            let mut out = Bits::empty();
            for v in few.iter() {
                many.shift_into(v, &mut out);
            }
            return out;
        }
        let (runs, shifted) = if self.run_count() <= other.run_count() {
            (self, other)
        } else {
            (other, self)
        };
        let mut out = Bits::empty();
        for (first, len) in runs.runs() {
            let mut smeared = shifted.clone();
            let mut covered = 1;
            while covered < len {
                let step = covered.min(len - covered);
                let more = smeared.shifted(step);
                smeared.union(&more);
                covered += step;
            }
            out.union(&smeared.shifted(first));
        }
        out
    }

    /// The sums of exactly `n` values of `self`.
    pub(crate) fn power(&self, mut n: u32) -> Bits {
        let mut result = Bits::single(0);
        let mut base = self.clone();
        while n > 0 {
            if n & 1 == 1 {
                result = result.sum(&base);
            }
            n >>= 1;
            if n > 0 {
                base = base.sum(&base);
            }
        }
        result
    }

    /// The sums of at most `n` values of `self` (all sums when `n` is `None`).
    pub(crate) fn up_to(&self, n: Option<u32>) -> Bits {
        // U(1) = {0} ∪ self, and U(a) + U(b) = U(a + b); beyond the cap no count adds
        // anything new.
        let n = n.map_or(MEASURE_CAP as u32, |n| n.min(MEASURE_CAP as u32));
        let mut base = Bits::single(0);
        base.union(self);
        let mut result = Bits::single(0);
        let mut left = n;
        while left > 0 {
            if left & 1 == 1 {
                result = result.sum(&base);
            }
            left >>= 1;
            if left > 0 {
                let next = base.sum(&base);
                if next == base {
                    // Closed: more values add nothing.
                    result = result.sum(&base);
                    break;
                }
                base = next;
            }
        }
        result
    }

    /// The sums of `min` to `max` values of `self` (`max` unbounded if `None`).
    pub(crate) fn repeated(&self, min: u32, max: Option<u32>) -> Bits {
        let extra = max.map(|m| m.saturating_sub(min));
        self.power(min).sum(&self.up_to(extra))
    }
}

/// One value in `options` drawn at random, from those also in `preferred` when there
/// are any (in full mode, the values within the generator's caps: a natural shape).
fn draw<R: Rng + ?Sized>(
    options: Vec<usize>,
    preferred: Option<&Bits>,
    rng: &mut R,
) -> Option<usize> {
    let liked: Vec<usize> = match preferred {
        Some(p) => options.iter().copied().filter(|&v| p.contains(v)).collect(),
        None => Vec::new(),
    };
    let pool = if liked.is_empty() { options } else { liked };
    (!pool.is_empty()).then(|| pool[below(rng, pool.len() as u32) as usize])
}

/// The values of the parts of a sequence, `sets[i]` those part `i` can take, summing
/// to `value`: drawn part by part among those that leave the rest achievable, those in
/// `preferred[i]` first. `None` if `value` is not achievable.
pub(crate) fn split<R: Rng + ?Sized>(
    sets: &[&Bits],
    preferred: Option<&[&Bits]>,
    value: usize,
    rng: &mut R,
) -> Option<Vec<usize>> {
    // suffix[i]: the values parts[i..] can sum to.
    let mut suffix = vec![Bits::single(0); sets.len() + 1];
    for i in (0..sets.len()).rev() {
        suffix[i] = sets[i].sum(&suffix[i + 1]);
    }
    let suffix: Vec<&Bits> = suffix.iter().collect();
    split_with(sets, &suffix, preferred, value, rng)
}

/// [`split`] with `suffix[i]`, the values `sets[i..]` can sum to, given.
fn split_with<R: Rng + ?Sized>(
    sets: &[&Bits],
    suffix: &[&Bits],
    preferred: Option<&[&Bits]>,
    value: usize,
    rng: &mut R,
) -> Option<Vec<usize>> {
    let mut left = value;
    let mut values = Vec::with_capacity(sets.len());
    for (i, set) in sets.iter().enumerate() {
        let options: Vec<usize> = set
            .iter()
            .take_while(|&v| v <= left)
            .filter(|&v| suffix[i + 1].contains(left - v))
            .collect();
        let v = draw(options, preferred.map(|p| p[i]), rng)?;
        values.push(v);
        left -= v;
    }
    (left == 0).then_some(values)
}

/// The values of the items of a repetition of `min` to `max` items (`max` unbounded
/// if `None`), each taking a value of `item`, summing to `value`; items' values in
/// `preferred` first. `None` if `value` is not achievable.
///
/// With few counts possible (a small `max`: within the generator's cap, say), a
/// count is drawn among those that can sum to `value`, then the items' values. Otherwise the items are drawn one by one
/// among the values that leave the rest achievable, each beyond the mandatory ones
/// above 0, until nothing is left; then, if an item can add nothing (a field's text,
/// counting fields), items of value 0 are slipped in at random places up to a count
/// drawn as the generator draws one (`min..=natural_max`), so that such parts are not
/// all empty.
#[allow(clippy::too_many_arguments)]
pub(crate) fn repeat<R: Rng + ?Sized>(
    item: &Bits,
    preferred: Option<&Bits>,
    min: u32,
    max: Option<u32>,
    natural_max: u32,
    value: usize,
    rng: &mut R,
) -> Option<Vec<usize>> {
    let step = item.min_above_zero();
    // Items that add something: at most value / step of them beyond the minimum.
    let enough = step.map_or(0, |s| value / s) as u32;
    // Counts are drawn first where they are few: within the generator's cap, or
    // fewer than the value could use.
    let bounded = max.filter(|&m| {
        let extra = m.saturating_sub(min);
        extra <= FEW_COUNTS || extra < enough
    });
    if let Some(max) = bounded {
        // powers[k]: the sums of k items; also what the last k items of a split can
        // sum to.
        let mut powers = vec![Bits::single(0)];
        for _ in 0..max {
            let next = powers.last().expect("non-empty").sum(item);
            powers.push(next);
        }
        let counts: Vec<usize> = (min as usize..=max as usize)
            .filter(|&k| powers[k].contains(value))
            .collect();
        let k = *counts.get(below(rng, counts.len() as u32) as usize)?;
        let sets = vec![item; k];
        let suffix: Vec<&Bits> = (0..=k).map(|i| &powers[k - i]).collect();
        let preferred = preferred.map(|p| vec![p; k]);
        return split_with(&sets, &suffix, preferred.as_deref(), value, rng);
    }
    // reach[r]: what r more mandatory items and any number of others can sum to.
    let any = item.up_to(None);
    let mut reach = vec![any];
    for r in 1..=min as usize {
        let next = item.sum(&reach[r - 1]);
        reach.push(next);
    }
    if !reach[min as usize].contains(value) {
        return None;
    }
    let mut values = Vec::new();
    let mut left = value;
    loop {
        let mandatory = (min as usize).saturating_sub(values.len());
        if mandatory == 0 && left == 0 {
            break;
        }
        let rest = &reach[mandatory.saturating_sub(1)];
        let options: Vec<usize> = item
            .iter()
            .take_while(|&v| v <= left)
            .filter(|&v| (mandatory > 0 || v > 0) && rest.contains(left - v))
            .collect();
        let v = draw(options, preferred, rng)?;
        values.push(v);
        left -= v;
    }
    if item.contains(0) && natural_max > min {
        let count = (min + below(rng, natural_max - min + 1)) as usize;
        let count = count.min(max.map_or(usize::MAX, |m| m as usize));
        while values.len() < count {
            let at = below(rng, values.len() as u32 + 1) as usize;
            values.insert(at, 0);
        }
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(values: &[usize]) -> Bits {
        let mut b = Bits::empty();
        values.iter().for_each(|&v| b.insert(v));
        b
    }

    #[test]
    fn sums_shift_across_words_whatever_side_is_sparser() {
        let a = Bits::single(3);
        let b = set(&[62, 200]);
        assert_eq!(a.sum(&b).iter().collect::<Vec<_>>(), vec![65, 203]);
        assert_eq!(b.sum(&a).iter().collect::<Vec<_>>(), vec![65, 203]);
        // Runs: {1..=100} + {0, 1000..=1010} = {1..=100} ∪ {1001..=1110}.
        let runs = Bits::range(1, 100);
        let other = {
            let mut o = Bits::range(1000, 1010);
            o.insert(0);
            o
        };
        let expected: Vec<usize> = (1..=100).chain(1001..=1110).collect();
        assert_eq!(runs.sum(&other).iter().collect::<Vec<_>>(), expected);
        assert_eq!(other.sum(&runs).iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn powers_and_bounded_sums_count_items() {
        let item = set(&[2, 3]);
        assert_eq!(item.power(0).iter().collect::<Vec<_>>(), vec![0]);
        assert_eq!(item.power(3).iter().collect::<Vec<_>>(), vec![6, 7, 8, 9]);
        assert_eq!(
            item.up_to(Some(2)).iter().collect::<Vec<_>>(),
            vec![0, 2, 3, 4, 5, 6]
        );
        let all = item.up_to(None);
        assert!(!all.contains(1));
        assert!((2..MEASURE_CAP).all(|v| all.contains(v)));
        assert_eq!(
            item.repeated(1, Some(2)).iter().collect::<Vec<_>>(),
            vec![2, 3, 4, 5, 6]
        );
        let mut t = Bits::range(0, 300);
        t.truncate(70);
        assert_eq!(t.iter().last(), Some(70));
    }

    #[test]
    fn repetitions_reach_any_count_the_value_needs() {
        let mut rng = thicket_gen::Generator::rng_for(3, 0);
        let one = Bits::single(1);
        for value in [0, 1, 7, 40] {
            let values = repeat(&one, None, 0, None, 5, value, &mut rng).unwrap();
            assert_eq!(values.len(), value);
        }
        // Bounded by the grammar: at most 3 items.
        assert!(repeat(&one, None, 0, Some(3), 3, 7, &mut rng).is_none());
        let values = repeat(&set(&[0, 5]), None, 2, None, 5, 15, &mut rng).unwrap();
        assert_eq!(values.iter().sum::<usize>(), 15);
        assert!(values.len() >= 3);
        // Items that add nothing are as many as the generator would make.
        let counts: std::collections::HashSet<usize> = (0..50)
            .map(|_| {
                repeat(&Bits::single(0), None, 0, None, 5, 0, &mut rng)
                    .unwrap()
                    .len()
            })
            .collect();
        assert_eq!(counts.len(), 6);
        let parts = split(&[&set(&[1, 2]), &Bits::range(0, 50)], None, 30, &mut rng).unwrap();
        assert_eq!(parts.iter().sum::<usize>(), 30);
    }
}
