//! Where the generator's choices come from: the seam between what may be chosen (the
//! generator's limits and policy) and who chooses.
//!
//! Seeded generation draws every choice from a random number generator ([`Random`]: the
//! draws the crate docs describe, so input `i` of a seed never changes). Another source
//! can make the choices instead: a property-based tester's own data (Hypothesis), which
//! then shrinks a failing input by shrinking its choices towards 0. For that to mean
//! smaller inputs, such a source asks for its options simplest first
//! ([`ChoiceSource::SIMPLEST_FIRST`]): choice 0 is then an alternative of least
//! minimal length, the fewest repetitions, the first member of a class.

use crate::below;
use rand::Rng;

/// A source of the generator's choices.
pub trait ChoiceSource {
    /// Whether choice 0 should be the simplest option: alternatives (of the grammar
    /// and of regexes) are then offered by least minimal length, ties by least depth.
    /// Repetition counts, size targets and class members are already offered smallest
    /// first. `false` keeps the seeded generator's order (by minimal depth), so that
    /// the bytes of a seed do not change.
    const SIMPLEST_FIRST: bool = false;

    /// Whether repetitions beyond their minimum are decided one item at a time (a
    /// choice among 2 before each: 1 for one more item, 0 to stop) rather than by a
    /// count drawn before the first item. A shrinker then ends a repetition early by
    /// lowering one choice, and drops an item by deleting its choices. With it, the
    /// source also hears of spans (see [`ChoiceSource::span_start`]).
    const ITEM_BY_ITEM: bool = false;

    /// A choice among `n` options (`n >= 1`): a number in `0..n`.
    fn choose(&mut self, n: u32) -> u32;

    /// With [`ChoiceSource::ITEM_BY_ITEM`]: a span of choices begins, one that a later
    /// span of the same `label` inside it could replace (the rest of a list from one
    /// item on: the item before a repetition and the repetition, each item of the
    /// repetition and the items after it), so that a shrinker can drop the items
    /// before one. Spans nest; each ends with [`ChoiceSource::span_end`].
    fn span_start(&mut self, _label: u64) {}

    /// The innermost span open ends.
    fn span_end(&mut self) {}

    /// 64 bits, for draws in proportion to weights (see [`crate::prob`]).
    fn bits(&mut self) -> u64;
}

/// A random number generator as a choice source: the seeded generator's draws.
pub struct Random<'r, R: ?Sized>(pub &'r mut R);

impl<R: Rng + ?Sized> ChoiceSource for Random<'_, R> {
    #[inline]
    fn choose(&mut self, n: u32) -> u32 {
        below(self.0, n)
    }

    #[inline]
    fn bits(&mut self) -> u64 {
        self.0.next_u64()
    }
}

/// The position among `options` of the `k`-th simplest of them by `key` (ties keep
/// their order): how a [`ChoiceSource::SIMPLEST_FIRST`] source's choice `k` is read.
pub(crate) fn kth_simplest<K: Ord>(len: usize, k: usize, key: impl Fn(usize) -> K) -> usize {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by_key(|&i| key(i));
    order[k.min(len - 1)]
}
