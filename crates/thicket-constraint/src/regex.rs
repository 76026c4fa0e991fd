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
        let mut parts = Vec::new();
        for r in [a, b] {
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

    fn is_none(&self) -> bool {
        matches!(&*self.0, Node::None)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn digits() -> Regex {
        Regex::range('0', '9')
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
