//! Did-you-mean: the known name closest to a misspelt one.
//!
//! A spec may name thousands of undefined rules, each looked up among thousands of
//! defined ones, so the known names are prepared once ([`Suggester`]): lowercased,
//! grouped by length, each with the set of characters it uses. A lookup compares a name
//! only with names whose length and characters allow a distance within the bound, by an
//! edit distance that stops as soon as it exceeds the best found so far; and a suggester
//! does a bounded amount of work in all (`WORK`), after which it suggests nothing, so a
//! spec of many misspellings costs linear time however alike its names are.

use std::cell::Cell;

/// Character comparisons a [`Suggester`] makes in all before it gives up suggesting:
/// far more than any hand-written spec needs (a lookup among 1,000 names of 20
/// characters makes at most 400,000), and a fraction of a second.
const WORK: u64 = 200_000_000;

/// A known name, prepared for comparisons.
struct Known<'a> {
    name: &'a str,
    lower: Vec<char>,
    /// One bit per character (modulo 64) of `lower`.
    chars: u64,
}

/// Known names, prepared for many did-you-mean lookups.
pub struct Suggester<'a> {
    /// By the number of characters of the original name.
    by_len: Vec<Vec<Known<'a>>>,
    /// Character comparisons left (see `WORK`).
    work: Cell<u64>,
}

fn char_set(chars: &[char]) -> u64 {
    chars.iter().fold(0, |set, &c| set | 1 << (c as u32 % 64))
}

/// The largest distance at which a name of `a` characters is a likely typo of one of
/// `b` characters: a third of the longer, at least one.
fn max_distance(a: usize, b: usize) -> usize {
    (a.max(b) / 3).max(1)
}

impl<'a> Suggester<'a> {
    /// Prepares `known` for lookups.
    pub fn new(known: impl IntoIterator<Item = &'a str>) -> Suggester<'a> {
        let mut by_len: Vec<Vec<Known<'a>>> = Vec::new();
        for name in known {
            let len = name.chars().count();
            if by_len.len() <= len {
                by_len.resize_with(len + 1, Vec::new);
            }
            let lower: Vec<char> = name.to_lowercase().chars().collect();
            by_len[len].push(Known {
                name,
                chars: char_set(&lower),
                lower,
            });
        }
        Suggester {
            by_len,
            work: Cell::new(WORK),
        }
    }

    /// The closest known name to `name`, if one is close enough to be a likely typo:
    /// within an edit distance of a third of the longer name (at least one), where a
    /// swap of two neighbours counts as one edit (`vaule`) and case does not count;
    /// among equally close names, the first in string order.
    pub fn suggest(&self, name: &str) -> Option<&'a str> {
        let len = name.chars().count();
        let lower: Vec<char> = name.to_lowercase().chars().collect();
        let chars = char_set(&lower);
        let mut best: Option<(usize, &'a str)> = None;
        let shortest = len.saturating_sub(max_distance(len, len));
        for (known_len, group) in self.by_len.iter().enumerate().skip(shortest) {
            let limit = max_distance(len, known_len);
            if known_len > len + limit {
                break;
            }
            if len.abs_diff(known_len) > limit {
                continue;
            }
            for known in group {
                let bound = best.map_or(limit, |(d, _)| d.min(limit));
                // Each character one name has and the other lacks costs an edit.
                if (chars & !known.chars).count_ones() as usize > bound
                    || (known.chars & !chars).count_ones() as usize > bound
                {
                    continue;
                }
                let cost = (lower.len() * known.lower.len()) as u64;
                let Some(left) = self.work.get().checked_sub(cost) else {
                    self.work.set(0);
                    return best.map(|(_, k)| k);
                };
                self.work.set(left);
                if let Some(d) = bounded_osa(&lower, &known.lower, bound)
                    && best.is_none_or(|b| (d, known.name) < b)
                {
                    best = Some((d, known.name));
                }
            }
        }
        best.map(|(_, k)| k)
    }
}

/// The optimal string alignment distance of `a` and `b` (insertions, deletions,
/// substitutions and swaps of neighbours, each character edited at most once), or
/// `None` once it is certainly above `bound`.
fn bounded_osa(a: &[char], b: &[char], bound: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    let width = b.len() + 1;
    // Rows i-2, i-1 and i of the dynamic program.
    let mut rows = vec![0usize; 3 * width];
    for (j, cell) in rows[width..2 * width].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (before, rest) = rows.split_at_mut(2 * width);
        let (two_up, up) = before.split_at_mut(width);
        let row = &mut rest[..width];
        row[0] = i;
        let mut smallest = i;
        for j in 1..=b.len() {
            let substitution = up[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut d = substitution.min(up[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(two_up[j - 2] + 1);
            }
            row[j] = d;
            smallest = smallest.min(d);
        }
        if smallest > bound {
            return None;
        }
        // Shift: row i-1 becomes i-2, row i becomes i-1.
        rows.copy_within(width..3 * width, 0);
    }
    let d = rows[width + b.len()];
    (d <= bound).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn osa(a: &str, b: &str) -> Option<usize> {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        bounded_osa(&a, &b, usize::MAX)
    }

    #[test]
    fn distances_are_optimal_string_alignment() {
        assert_eq!(osa("", ""), Some(0));
        assert_eq!(osa("abc", ""), Some(3));
        assert_eq!(osa("kitten", "sitting"), Some(3));
        assert_eq!(osa("vaule", "value"), Some(1));
        // Each character edited once: not "ca" -> "ac" -> "abc".
        assert_eq!(osa("ca", "abc"), Some(3));
        let c: Vec<char> = "kitten".chars().collect();
        let d: Vec<char> = "sitting".chars().collect();
        assert_eq!(bounded_osa(&c, &d, 2), None);
        assert_eq!(bounded_osa(&c, &d, 3), Some(3));
    }

    #[test]
    fn the_closest_name_is_suggested_and_ties_go_to_the_first_in_order() {
        let known = ["value", "values", "start", "vb", "va"];
        let s = Suggester::new(known);
        assert_eq!(s.suggest("vaule"), Some("value"));
        assert_eq!(s.suggest("Value"), Some("value"));
        assert_eq!(s.suggest("valuess"), Some("values"));
        assert_eq!(s.suggest("zebra"), None);
        assert_eq!(s.suggest("vc"), Some("va"));
    }

    #[test]
    fn many_lookups_among_many_alike_names_stay_bounded() {
        let known: Vec<String> = (0..20_000).map(|i| format!("rule{i:05}")).collect();
        let s = Suggester::new(known.iter().map(String::as_str));
        for i in 0..20_000 {
            s.suggest(&format!("rulx{i:05}"));
        }
        assert_eq!(s.work.get(), 0, "the work budget ran out rather than on");
        assert_eq!(
            s.suggest("rule00001"),
            None,
            "nothing once the budget is spent"
        );
    }
}
