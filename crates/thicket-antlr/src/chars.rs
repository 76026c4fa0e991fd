//! Characters as ANTLR's tool reads them: case-insensitive literals and sets
//! (`options { caseInsensitive = true; }`) and sets as regular-expression classes.
//!
//! ANTLR does not fold case the way regular expressions do. For each literal character
//! and each range `a-z` of a set it takes the lower and upper case of the *range's
//! borders* (Java's `Character.toLowerCase`/`toUpperCase`, one code point each) and, when
//! both borders change case alike, adds the two ranges `lower(a)-lower(z)` and
//! `upper(a)-upper(z)`; otherwise the range stays as written. So `'s'` matches `s` and
//! `S` and never `ſ` (U+017F), which a regex's `(?i)` would add, and a titlecase letter
//! such as `ǅ` matches `ǆ` and `Ǆ` but not itself. Unicode properties (`\p{..}`) are
//! taken as they are.

use crate::syntax::CharSet;

/// Java's `Character.toLowerCase(int)`: the simple lower-case mapping.
pub fn java_lower(c: u32) -> u32 {
    if c == 0x130 {
        // LATIN CAPITAL LETTER I WITH DOT ABOVE: simple mapping to `i`.
        return 0x69;
    }
    single(char::from_u32(c).map(|ch| ch.to_lowercase().collect()), c)
}

/// Java's `Character.toUpperCase(int)`: the simple upper-case mapping.
pub fn java_upper(c: u32) -> u32 {
    // Greek letters with ypogegrammeni: the full mapping has two characters, the
    // simple one is the titlecase letter.
    match c {
        0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => return c + 8,
        0x1FB3 => return 0x1FBC,
        0x1FC3 => return 0x1FCC,
        0x1FF3 => return 0x1FFC,
        _ => {}
    }
    single(char::from_u32(c).map(|ch| ch.to_uppercase().collect()), c)
}

/// The one character of a case mapping, or `c` itself where the full mapping has
/// several (they have no simple mapping).
fn single(mapped: Option<Vec<char>>, c: u32) -> u32 {
    match mapped.as_deref() {
        Some([one]) => *one as u32,
        _ => c,
    }
}

/// The ranges a case-insensitive rule matches for the range `from..=to` as written
/// (ANTLR's `RangeBorderCharactersData`).
pub fn case_insensitive_range(from: u32, to: u32) -> Vec<(u32, u32)> {
    let (lower_from, upper_from) = (java_lower(from), java_upper(from));
    let (lower_to, upper_to) = (java_lower(to), java_upper(to));
    let mixed = (lower_from == from) != (lower_to == to);
    let single = (lower_from == upper_from && lower_to == upper_to)
        || mixed
        || lower_to.wrapping_sub(lower_from) != upper_to.wrapping_sub(upper_from);
    if single || lower_from > lower_to || upper_from > upper_to {
        vec![(from, to)]
    } else {
        vec![(lower_from, lower_to), (upper_from, upper_to)]
    }
}

/// `set` as a case-insensitive rule reads it: each range through
/// [`case_insensitive_range`], properties unchanged.
pub fn case_insensitive_set(set: &CharSet) -> CharSet {
    CharSet {
        ranges: set
            .ranges
            .iter()
            .flat_map(|&(lo, hi)| case_insensitive_range(lo, hi))
            .collect(),
        properties: set.properties.clone(),
        negated: set.negated,
    }
}

/// `set` as a regex class.
pub fn set_regex(set: &CharSet) -> String {
    let mut out = String::from(if set.negated { "[^" } else { "[" });
    if set.ranges.is_empty() && set.properties.is_empty() {
        // An empty set matches nothing; negated, anything.
        return if set.negated {
            "(?s:.)".into()
        } else {
            NOTHING.into()
        };
    }
    for &(lo, hi) in &set.ranges {
        if lo == hi {
            out.push_str(&format!("\\x{{{lo:X}}}"));
        } else {
            out.push_str(&format!("\\x{{{lo:X}}}-\\x{{{hi:X}}}"));
        }
    }
    for (name, negated) in &set.properties {
        match antlr_only_property(name) {
            Some(class) if *negated => out.push_str(&format!("[^{}", &class[1..])),
            Some(class) => out.push_str(class),
            None => out.push_str(&format!("\\{}{{{name}}}", if *negated { 'P' } else { 'p' })),
        }
    }
    out.push(']');
    out
}

/// A property ANTLR defines beyond Unicode's own names, as a regex class (each one
/// starting with `[`): `EmojiPresentation=EmojiDefault` is Unicode's
/// `Emoji_Presentation`, `=TextDefault` an emoji drawn as text unless asked
/// (`Emoji` without `Emoji_Presentation`), `=Text` what is no emoji.
fn antlr_only_property(name: &str) -> Option<&'static str> {
    Some(match name {
        "EmojiPresentation=EmojiDefault" => "[\\p{Emoji_Presentation}]",
        "EmojiPresentation=TextDefault" => "[\\p{Emoji}&&\\P{Emoji_Presentation}]",
        "EmojiPresentation=Text" => "[\\P{Emoji}]",
        _ => return None,
    })
}

/// A regex matching nothing.
pub const NOTHING: &str = "[^\\x{0}-\\x{10FFFF}]";

/// A literal as a regex: each character itself, or the class of its two cases in a
/// case-insensitive rule.
pub fn literal_regex(text: &str, case_insensitive: bool) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let ranges = if case_insensitive {
            case_insensitive_range(c as u32, c as u32)
        } else {
            vec![(c as u32, c as u32)]
        };
        if ranges.len() == 1 && ranges[0].0 == ranges[0].1 {
            out.push_str(&regex_syntax::escape(c.encode_utf8(&mut [0; 4])));
        } else {
            out.push_str(&set_regex(&CharSet {
                ranges,
                ..CharSet::default()
            }));
        }
    }
    out
}

/// The code point ranges a regex class (as [`set_regex`] writes it, or `(?s:.)`)
/// stands for; `None` if it does not parse (an unknown Unicode property).
pub fn class_ranges(class: &str) -> Result<Vec<(u32, u32)>, String> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(class)
        .map_err(|e| e.to_string())?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Ok(c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect()),
        HirKind::Empty => Ok(Vec::new()),
        // A class of one character is read as that character.
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0).ok().and_then(|t| {
            let mut chars = t.chars();
            chars.next().filter(|_| chars.next().is_none())
        }) {
            Some(c) => Ok(vec![(c as u32, c as u32)]),
            None => Err(format!("`{class}` is not one character")),
        },
        _ => Err(format!("`{class}` is not a character class")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_insensitive_characters_are_their_two_cases_only() {
        assert_eq!(
            case_insensitive_range('s' as u32, 's' as u32),
            [(0x73, 0x73), (0x53, 0x53)]
        );
        assert_eq!(
            case_insensitive_range('k' as u32, 'k' as u32),
            [(0x6B, 0x6B), (0x4B, 0x4B)]
        );
        // Digits have no case.
        assert_eq!(
            case_insensitive_range('0' as u32, '9' as u32),
            [(0x30, 0x39)]
        );
        assert_eq!(
            case_insensitive_range('a' as u32, 'f' as u32),
            [(0x61, 0x66), (0x41, 0x46)]
        );
        // A titlecase letter: its lower and upper case, not itself.
        assert_eq!(
            case_insensitive_range(0x1C5, 0x1C5),
            [(0x1C6, 0x1C6), (0x1C4, 0x1C4)]
        );
        // Borders whose cases are unlike keep the range as written.
        assert_eq!(
            case_insensitive_range('A' as u32, 'z' as u32),
            [(0x41, 0x7A)]
        );
        assert_eq!(literal_regex("s-1", true), "[\\x{73}\\x{53}]\\-1");
    }

    #[test]
    fn antlr_s_emoji_presentation_properties_are_unicode_s_emoji_properties() {
        let class = |name: &str, negated: bool| {
            class_ranges(&set_regex(&CharSet {
                properties: vec![(name.to_string(), negated)],
                ..CharSet::default()
            }))
            .unwrap()
        };
        let holds = |ranges: &[(u32, u32)], c: char| {
            ranges
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)))
        };
        // U+263A WHITE SMILING FACE is an emoji drawn as text by default; U+1F600
        // GRINNING FACE is drawn as an emoji; `a` is no emoji.
        let text_default = class("EmojiPresentation=TextDefault", false);
        assert!(holds(&text_default, '\u{263A}'));
        assert!(!holds(&text_default, '\u{1F600}') && !holds(&text_default, 'a'));
        let emoji_default = class("EmojiPresentation=EmojiDefault", false);
        assert!(holds(&emoji_default, '\u{1F600}') && !holds(&emoji_default, '\u{263A}'));
        let text = class("EmojiPresentation=Text", false);
        assert!(holds(&text, 'a') && !holds(&text, '\u{263A}'));
        let not_text_default = class("EmojiPresentation=TextDefault", true);
        assert!(holds(&not_text_default, 'a') && !holds(&not_text_default, '\u{263A}'));
    }
}
