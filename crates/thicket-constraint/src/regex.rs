//! Regular languages of the SMT-LIB string theory (`re.*`), matched by Brzozowski
//! derivatives. Derivatives make complement and intersection as easy as union, which
//! is why this is not a wrapper around a backtracking or automaton regex crate; the
//! strings a constraint looks at are short, and smart constructors keep the
//! derivatives small.

use std::sync::Arc;

/// A regular language over Unicode characters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Regex(Arc<Node>);

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Node {
    None,
    Empty,
    /// One character from these inclusive ranges.
    Class(Vec<(char, char)>),
    Concat(Regex, Regex),
    Union(Vec<Regex>),
    Inter(Vec<Regex>),
    Star(Regex),
    /// `min..=max` repetitions.
    Loop(Regex, u32, u32),
    Comp(Regex),
}

impl Regex {
    fn new(node: Node) -> Regex {
        Regex(Arc::new(node))
    }

    /// The empty language.
    pub fn none() -> Regex {
        Regex::new(Node::None)
    }

    /// Every string.
    pub fn all() -> Regex {
        Regex::star(Regex::any_char())
    }

    /// Any one character.
    pub fn any_char() -> Regex {
        Regex::range('\0', char::MAX)
    }

    /// One character in `lo..=hi`.
    pub fn range(lo: char, hi: char) -> Regex {
        Regex::new(Node::Class(vec![(lo, hi)]))
    }

    /// Exactly the string `s`.
    pub fn literal(s: &str) -> Regex {
        s.chars()
            .map(|c| Regex::range(c, c))
            .reduce(Regex::concat)
            .unwrap_or_else(|| Regex::new(Node::Empty))
    }

    /// `a` followed by `b`.
    pub fn concat(a: Regex, b: Regex) -> Regex {
        match (&*a.0, &*b.0) {
            (Node::None, _) | (_, Node::None) => Regex::none(),
            (Node::Empty, _) => b,
            (_, Node::Empty) => a,
            _ => Regex::new(Node::Concat(a, b)),
        }
    }

    /// `a` or `b`.
    pub fn union(a: Regex, b: Regex) -> Regex {
        Regex::union_all([a, b])
    }

    /// Any of `regexes` (none: the empty language). One sort for all of them: folding
    /// [`Regex::union`] over a rule's hundred alternatives copies and sorts the growing
    /// union at each step.
    pub fn union_all(regexes: impl IntoIterator<Item = Regex>) -> Regex {
        let mut parts = Vec::new();
        for r in regexes {
            match &*r.0 {
                Node::Union(inner) => parts.extend(inner.iter().cloned()),
                Node::None => {}
                _ => parts.push(r),
            }
        }
        parts.sort();
        parts.dedup();
        if parts.iter().any(Regex::is_all) {
            return Regex::all();
        }
        match parts.len() {
            0 => Regex::none(),
            1 => parts.pop().expect("one"),
            _ => Regex::new(Node::Union(parts)),
        }
    }

    /// `a` and `b`.
    pub fn inter(a: Regex, b: Regex) -> Regex {
        let mut parts = Vec::new();
        for r in [a, b] {
            match &*r.0 {
                Node::Inter(inner) => parts.extend(inner.iter().cloned()),
                Node::None => return Regex::none(),
                _ if r.is_all() => {}
                _ => parts.push(r),
            }
        }
        parts.sort();
        parts.dedup();
        match parts.len() {
            0 => Regex::all(),
            1 => parts.pop().expect("one"),
            _ => Regex::new(Node::Inter(parts)),
        }
    }

    /// Zero or more `r`.
    pub fn star(r: Regex) -> Regex {
        match &*r.0 {
            Node::Star(_) => r,
            Node::None | Node::Empty => Regex::new(Node::Empty),
            _ => Regex::new(Node::Star(r)),
        }
    }

    /// Between `min` and `max` repetitions of `r` (none if `max < min`).
    pub fn repeat(r: Regex, min: i128, max: i128) -> Regex {
        let min = min.clamp(0, u32::MAX as i128) as u32;
        let max = max.clamp(-1, u32::MAX as i128);
        if max < min as i128 {
            return Regex::none();
        }
        let max = max as u32;
        match (min, max) {
            (0, 0) => Regex::new(Node::Empty),
            (1, 1) => r,
            _ => Regex::new(Node::Loop(r, min, max)),
        }
    }

    /// Every string not in `r`.
    pub fn comp(r: Regex) -> Regex {
        match &*r.0 {
            Node::Comp(inner) => inner.clone(),
            _ => Regex::new(Node::Comp(r)),
        }
    }

    fn is_all(&self) -> bool {
        matches!(&*self.0, Node::Star(inner) if matches!(&*inner.0, Node::Class(c) if c == &[('\0', char::MAX)]))
    }

    /// Whether the language holds the empty string.
    pub fn nullable(&self) -> bool {
        match &*self.0 {
            Node::None | Node::Class(_) => false,
            Node::Empty | Node::Star(_) => true,
            Node::Concat(a, b) => a.nullable() && b.nullable(),
            Node::Union(parts) => parts.iter().any(Regex::nullable),
            Node::Inter(parts) => parts.iter().all(Regex::nullable),
            Node::Loop(r, min, _) => *min == 0 || r.nullable(),
            Node::Comp(r) => !r.nullable(),
        }
    }

    /// The derivative by `c`: the strings `w` such that `c w` is in the language.
    pub fn derive(&self, c: char) -> Regex {
        match &*self.0 {
            Node::None | Node::Empty => Regex::none(),
            Node::Class(ranges) => {
                if ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) {
                    Regex::new(Node::Empty)
                } else {
                    Regex::none()
                }
            }
            Node::Concat(a, b) => {
                let first = Regex::concat(a.derive(c), b.clone());
                if a.nullable() {
                    Regex::union(first, b.derive(c))
                } else {
                    first
                }
            }
            Node::Union(parts) => parts
                .iter()
                .map(|p| p.derive(c))
                .fold(Regex::none(), Regex::union),
            Node::Inter(parts) => parts
                .iter()
                .map(|p| p.derive(c))
                .reduce(Regex::inter)
                .unwrap_or_else(Regex::all),
            Node::Star(r) => Regex::concat(r.derive(c), self.clone()),
            Node::Loop(r, min, max) => {
                if *max == 0 {
                    return Regex::none();
                }
                let rest =
                    Regex::repeat(r.clone(), min.saturating_sub(1) as i128, (*max - 1) as i128);
                Regex::concat(r.derive(c), rest)
            }
            Node::Comp(r) => Regex::comp(r.derive(c)),
        }
    }

    /// The characters a string of the language may start with, as ranges: an
    /// over-approximation (exact but for intersections and complements), so a
    /// derivative by one of them may still be empty.
    fn first_ranges(&self) -> Vec<(char, char)> {
        match &*self.0 {
            Node::None | Node::Empty => Vec::new(),
            Node::Class(ranges) => ranges.clone(),
            Node::Concat(a, b) => {
                let mut first = a.first_ranges();
                if a.nullable() {
                    first.extend(b.first_ranges());
                }
                first
            }
            Node::Union(parts) => parts.iter().flat_map(Regex::first_ranges).collect(),
            // A first character of every part; the part with the fewest ranges is a
            // close enough bound.
            Node::Inter(parts) => parts
                .iter()
                .map(Regex::first_ranges)
                .min_by_key(Vec::len)
                .unwrap_or_default(),
            Node::Star(r) => r.first_ranges(),
            Node::Loop(r, _, max) => {
                if *max == 0 {
                    Vec::new()
                } else {
                    r.first_ranges()
                }
            }
            Node::Comp(_) => vec![('\0', char::MAX)],
        }
    }

    /// A random string of the language of at most `max_len` characters, by a walk
    /// over derivatives (`below(n)` draws from `0..n`): at each step it stops with
    /// probability 1/2 where the string so far is in the language, else takes a
    /// character that leaves a non-empty derivative, printable ASCII preferred.
    /// `None` if the walk found no string (the language may still have one).
    pub fn sample(&self, below: &mut dyn FnMut(u32) -> u32, max_len: usize) -> Option<String> {
        let mut r = self.clone();
        let mut out = String::new();
        for _ in 0..max_len {
            if r.nullable() && below(2) == 0 {
                return Some(out);
            }
            let ranges = r.first_ranges();
            if ranges.is_empty() {
                break;
            }
            let step = (0..4).find_map(|_| {
                let (lo, hi) = ranges[below(ranges.len() as u32) as usize];
                let c = pick_char(lo, hi, below);
                let next = r.derive(c);
                (!next.is_none()).then_some((c, next))
            });
            let Some((c, next)) = step else {
                break;
            };
            out.push(c);
            r = next;
        }
        r.nullable().then_some(out)
    }

    fn is_none(&self) -> bool {
        matches!(&*self.0, Node::None)
    }

    /// Whether the language is empty, decided by exploring its derivatives: `None` if
    /// that takes more than `max_states` distinct derivatives. Exact: a derivative by
    /// a character depends only on which of the expression's character ranges hold
    /// it, so one character per block of the ranges' boundaries stands for all.
    pub fn is_empty(&self, max_states: usize) -> Option<bool> {
        let mut bounds = std::collections::BTreeSet::from(['\0']);
        self.range_bounds(&mut bounds);
        let letters: Vec<char> = bounds.into_iter().collect();
        let mut seen = std::collections::HashSet::from([self.clone()]);
        let mut todo = vec![self.clone()];
        while let Some(r) = todo.pop() {
            if r.nullable() {
                return Some(false);
            }
            for &c in &letters {
                let next = r.derive(c);
                if !next.is_none() && seen.insert(next.clone()) {
                    if seen.len() > max_states {
                        return None;
                    }
                    todo.push(next);
                }
            }
        }
        Some(true)
    }

    /// Where a block of characters the expression treats alike starts: each range's
    /// first character and the one after its last.
    fn range_bounds(&self, out: &mut std::collections::BTreeSet<char>) {
        match &*self.0 {
            Node::None | Node::Empty => {}
            Node::Class(ranges) => {
                for &(lo, hi) in ranges {
                    out.insert(lo);
                    // The next character (surrogates are not characters).
                    if let Some(next) = (hi as u32 + 1..=char::MAX as u32).find_map(char::from_u32)
                    {
                        out.insert(next);
                    }
                }
            }
            Node::Concat(a, b) => {
                a.range_bounds(out);
                b.range_bounds(out);
            }
            Node::Union(parts) | Node::Inter(parts) => {
                parts.iter().for_each(|p| p.range_bounds(out));
            }
            Node::Star(r) | Node::Loop(r, _, _) | Node::Comp(r) => r.range_bounds(out),
        }
    }

    /// Whether `s` is in the language.
    pub fn is_match(&self, s: &str) -> bool {
        let mut r = self.clone();
        for c in s.chars() {
            r = r.derive(c);
            if r.is_none() {
                return false;
            }
        }
        r.nullable()
    }

    /// Replaces the leftmost shortest match (every such match, left to right, if
    /// `all`) by `with`, as `str.replace_re` / `str.replace_re_all`. An empty match
    /// inserts `with` (once, for `str.replace_re`; `_all` skips empty matches).
    pub fn replace(&self, s: &str, with: &str, all: bool) -> String {
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        let mut replaced = false;
        while i <= chars.len() {
            let found = if replaced && !all {
                None
            } else {
                self.shortest_match_at(&chars, i, all)
            };
            match found {
                Some(end) => {
                    out.push_str(with);
                    replaced = true;
                    if end == i {
                        if let Some(&c) = chars.get(i) {
                            out.push(c);
                        }
                        i += 1;
                    } else {
                        i = end;
                    }
                }
                None => {
                    if let Some(&c) = chars.get(i) {
                        out.push(c);
                    }
                    i += 1;
                }
            }
        }
        out
    }

    fn shortest_match_at(&self, chars: &[char], start: usize, non_empty: bool) -> Option<usize> {
        if !non_empty && self.nullable() {
            return Some(start);
        }
        let mut r = self.clone();
        for (j, &c) in chars.iter().enumerate().skip(start) {
            r = r.derive(c);
            if r.is_none() {
                return None;
            }
            if r.nullable() {
                return Some(j + 1);
            }
        }
        None
    }
}

/// A character in `lo..=hi`: seven times in eight a printable ASCII one where the
/// range has some (constraints are mostly about readable text), else any.
fn pick_char(lo: char, hi: char, below: &mut dyn FnMut(u32) -> u32) -> char {
    let (lo, hi) = (lo as u32, hi as u32);
    let (alo, ahi) = (lo.max(0x20), hi.min(0x7e));
    let (from, to) = if alo <= ahi && below(8) != 0 {
        (alo, ahi)
    } else {
        (lo, hi)
    };
    let span = (to - from).saturating_add(1);
    char::from_u32(from + below(span)).unwrap_or(char::from_u32(lo).unwrap_or('a'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_union_of_many_is_the_union_of_each() {
        let parts: Vec<Regex> = ["b", "a", "ab", "a"]
            .iter()
            .map(|s| Regex::literal(s))
            .chain([Regex::none(), Regex::range('x', 'z')])
            .collect();
        let all = Regex::union_all(parts.clone());
        assert_eq!(all, parts.into_iter().fold(Regex::none(), Regex::union));
        for (text, member) in [
            ("a", true),
            ("ab", true),
            ("y", true),
            ("ba", false),
            ("", false),
        ] {
            assert_eq!(all.is_match(text), member, "{text:?}");
        }
        assert_eq!(Regex::union_all(Vec::new()).is_empty(10), Some(true));
        assert!(Regex::union_all([Regex::all(), Regex::literal("a")]).is_all());
    }

    #[test]
    fn emptiness_is_decided_through_intersections_and_complements() {
        let digits = Regex::star(Regex::range('0', '9'));
        let letters = Regex::concat(Regex::range('a', 'z'), Regex::star(Regex::range('a', 'z')));
        assert_eq!(
            Regex::inter(digits.clone(), letters.clone()).is_empty(100),
            Some(true)
        );
        // The empty string is a string of digits* but not of letters+.
        assert_eq!(
            Regex::inter(digits.clone(), Regex::comp(letters.clone())).is_empty(100),
            Some(false)
        );
        // "ab" followed by anything, and "a" then a digit: disjoint after one step.
        let ab = Regex::concat(Regex::literal("ab"), Regex::all());
        let a_digit = Regex::concat(Regex::literal("a"), Regex::range('0', '9'));
        assert_eq!(Regex::inter(ab.clone(), a_digit).is_empty(100), Some(true));
        // Strings of even length that are not of even length.
        let pair = Regex::concat(Regex::any_char(), Regex::any_char());
        let even = Regex::star(pair);
        assert_eq!(
            Regex::inter(even.clone(), Regex::comp(even)).is_empty(100),
            Some(true)
        );
        assert_eq!(Regex::none().is_empty(1), Some(true));
        assert_eq!(ab.is_empty(10), Some(false));
        // A language whose strings are long: its derivatives must be explored.
        let long = Regex::repeat(Regex::range('x', 'x'), 50, 50);
        assert_eq!(long.is_empty(10), None);
        assert_eq!(long.is_empty(100), Some(false));
    }

    fn digits() -> Regex {
        Regex::range('0', '9')
    }

    /// A small deterministic source for `sample`.
    fn draws(seed: u64) -> impl FnMut(u32) -> u32 {
        let mut state = seed;
        move |n| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % u64::from(n.max(1))) as u32
        }
    }

    #[test]
    fn samples_are_members_and_vary() {
        let cases = [
            Regex::concat(Regex::literal("ab"), Regex::star(digits())),
            Regex::repeat(Regex::union(Regex::literal("x"), digits()), 2, 5),
            Regex::inter(
                Regex::star(digits()),
                Regex::comp(Regex::concat(Regex::literal("0"), Regex::all())),
            ),
            Regex::comp(Regex::literal("")),
        ];
        for (k, re) in cases.iter().enumerate() {
            let mut below = draws(k as u64 + 1);
            let samples: Vec<String> = (0..50).filter_map(|_| re.sample(&mut below, 16)).collect();
            assert!(samples.len() >= 25, "case {k}: {samples:?}");
            assert!(
                samples.iter().all(|s| re.is_match(s)),
                "case {k}: {samples:?}"
            );
            let distinct: std::collections::HashSet<_> = samples.iter().collect();
            assert!(distinct.len() > 3, "case {k}: {samples:?}");
        }
        assert_eq!(Regex::none().sample(&mut draws(9), 16), None);
    }

    #[test]
    fn matching_with_every_constructor() {
        let number = Regex::concat(Regex::range('1', '9'), Regex::star(digits()));
        assert!(number.is_match("1203"));
        assert!(!number.is_match("0123"));
        assert!(!number.is_match(""));
        let not_number = Regex::comp(number.clone());
        assert!(not_number.is_match("0123") && !not_number.is_match("77"));
        let two_or_three = Regex::repeat(digits(), 2, 3);
        assert!(!two_or_three.is_match("1") && two_or_three.is_match("12"));
        assert!(two_or_three.is_match("123") && !two_or_three.is_match("1234"));
        let both = Regex::inter(number, two_or_three);
        assert!(both.is_match("10") && !both.is_match("01") && !both.is_match("1000"));
        let word = Regex::union(Regex::literal("ab"), Regex::literal("abc"));
        assert!(word.is_match("abc") && word.is_match("ab") && !word.is_match("a"));
        assert!(Regex::all().is_match("anything ✓") && !Regex::none().is_match(""));
        assert!(Regex::literal("").is_match(""));
    }

    #[test]
    fn replacement_takes_the_leftmost_shortest_match() {
        let digits_plus = Regex::concat(digits(), Regex::star(digits()));
        assert_eq!(digits_plus.replace("ab12cd345", "#", false), "ab#2cd345");
        assert_eq!(digits_plus.replace("ab12cd345", "#", true), "ab##cd###");
        assert_eq!(Regex::literal("x").replace("abc", "#", true), "abc");
    }

    #[test]
    fn derivatives_stay_small_on_long_inputs() {
        // (a|b)* a (a|b){3}: the classic blow-up for determinisation.
        let ab = Regex::union(Regex::range('a', 'a'), Regex::range('b', 'b'));
        let r = Regex::concat(
            Regex::star(ab.clone()),
            Regex::concat(Regex::literal("a"), Regex::repeat(ab, 3, 3)),
        );
        let text: String = "ab".repeat(2000) + "abbb";
        assert!(r.is_match(&text));
    }
}
