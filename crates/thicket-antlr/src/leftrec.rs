//! Left-recursive parser rules as ANTLR reads them: alternatives resolved by precedence.
//!
//! ANTLR rewrites a rule such as `e : e '*' e | e '+' e | INT ;` into precedence
//! climbing: `e[p] : (INT) ( {2 >= p}? '*' e[3] | {1 >= p}? '+' e[2] )* ;`, where
//! alternative *i* of *n* has precedence *n − i + 1* (earlier alternatives bind
//! tighter), a binary alternative's right operand is `e[prec + 1]` (`e[prec]` with
//! `<assoc=right>`), a prefix alternative's operand is `e[prec]`, and the loop is
//! greedy. So `1+2*3` is `1+(2*3)`, one tree.
//!
//! thicket's parser needs a context-free grammar, so the rewrite is into one rule per
//! precedence level instead, written so that every input has exactly the tree ANTLR
//! builds and every node of it is one of ANTLR's `e` nodes (no chain rules):
//!
//! - `E(p, c)` is an expression whose top-level operators have precedence at least
//!   `p` and which can be followed by an operator of precedence `c` without that
//!   operator belonging inside it (ANTLR's greedy loop would take it in: its right
//!   edge is an operand `e[r]` with `r ≤ c`, directly or through a prefix operator).
//! - `E(p, c)` has every primary alternative; every prefix alternative of precedence
//!   `π > c`, whose operand is `E(π, c)`; every suffix alternative of precedence
//!   `q ≥ p`, whose left operand is `E(p, q)`; and every binary alternative of
//!   precedence `q ≥ p` whose right operand's level `r` is above `c`, with operands
//!   `E(p, q)` and `E(r, c)`.
//!
//! Levels that derive the same alternatives from the same levels are one rule. The
//! rule other rules use, `E(0, none)`, keeps the rule's name; the others are named
//! `e[p]` after ANTLR's precedence argument (`e[p,c]` where the right edge matters).
//! Operands inside an alternative that are not its leftmost or rightmost element
//! (`e '?' e ':' e`'s middle) and those of primary alternatives are the whole rule,
//! as in ANTLR. A primary alternative whose last element holds the rule inside a
//! group (`'f' (e)`) is taken as closed: there the grammar may have two trees where
//! ANTLR's greedy loop picks one.

use crate::syntax::{Elem, RuleDef};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use thicket_grammar::Span;

/// One rule of the rewrite: its name and its alternatives.
pub struct LevelRule {
    /// `e`, or `e[p]` / `e[p,c]` for an inner level.
    pub name: String,
    /// The alternatives.
    pub alts: Vec<Elem>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `e op e`: right operand level.
    Binary(u32),
    /// `e op`.
    Suffix,
    /// `op e`: operand level.
    Prefix(u32),
    /// Anything else.
    Primary,
}

struct Alt<'a> {
    kind: Kind,
    /// Precedence (ANTLR's numbering).
    prec: u32,
    /// The elements without the leading operand (binary, suffix) and without the
    /// trailing operand (binary, prefix).
    middle: Vec<&'a Elem>,
    /// Where the trailing operand is written, its label dropped.
    last_span: Span,
    /// Actions and predicates after the trailing operand.
    trailer: Vec<&'a Elem>,
}

/// A level: (least precedence of top-level operators, precedence that may follow).
type Level = (u32, Option<u32>);

/// Whether `rule` is directly left-recursive (an alternative starts with the rule).
pub fn is_left_recursive(rule: &RuleDef) -> bool {
    !rule.is_lexer()
        && rule
            .alts
            .iter()
            .any(|(e, _)| first_is(e, &rule.name).is_some())
}

fn items(elem: &Elem) -> Vec<&Elem> {
    match elem {
        Elem::Seq(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// Elements that match nothing (target code).
fn is_code(elem: &Elem) -> bool {
    matches!(elem, Elem::Action(_) | Elem::Predicate(_))
}

/// The span of the first real element if it is a reference to `name`.
fn first_is(elem: &Elem, name: &str) -> Option<Span> {
    match items(elem).into_iter().find(|e| !is_code(e)) {
        Some(Elem::Ref(n, span)) if n == name => Some(*span),
        _ => None,
    }
}

/// The rewrite of a directly left-recursive rule (see the module docs).
pub fn rewrite(rule: &RuleDef) -> Vec<LevelRule> {
    let name = rule.name.as_str();
    let n = rule.alts.len() as u32;
    let mut alts = Vec::new();
    for (i, (elem, _)) in rule.alts.iter().enumerate() {
        let prec = n - i as u32;
        let all = items(elem);
        let start = all.iter().position(|e| !is_code(e)).unwrap_or(all.len());
        let end = all
            .iter()
            .rposition(|e| !is_code(e))
            .map_or(start, |i| i + 1);
        let real = &all[start..end];
        let leading = matches!(real.first(), Some(Elem::Ref(n2, _)) if n2 == name);
        let trailing = real.len() > usize::from(leading)
            && matches!(real.last(), Some(Elem::Ref(n2, _)) if n2 == name);
        let right = rule.right_assoc.get(i).copied().unwrap_or(false);
        let kind = match (leading, trailing) {
            (true, true) => Kind::Binary(if right { prec } else { prec + 1 }),
            (true, false) => Kind::Suffix,
            (false, true) => Kind::Prefix(prec),
            (false, false) => Kind::Primary,
        };
        let from = start + usize::from(leading);
        let to = if trailing { end - 1 } else { end };
        let mut middle: Vec<&Elem> = all[..start].to_vec();
        middle.extend(&all[from..to.max(from)]);
        let last_span = match real.last() {
            Some(Elem::Ref(_, s)) if trailing => *s,
            _ => Span::new(0, 0),
        };
        let trailer = if trailing {
            all[end..].to_vec()
        } else {
            middle.extend(&all[end..]);
            Vec::new()
        };
        alts.push(Alt {
            kind,
            prec,
            middle,
            last_span,
            trailer,
        });
    }
    let tail_precs: BTreeSet<u32> = alts
        .iter()
        .filter(|a| matches!(a.kind, Kind::Binary(_) | Kind::Suffix))
        .map(|a| a.prec)
        .collect();
    let thresholds: BTreeSet<u32> = alts
        .iter()
        .filter_map(|a| match a.kind {
            Kind::Binary(r) | Kind::Prefix(r) => Some(r),
            _ => None,
        })
        .collect();
    // Normal forms: `p` only matters through which tails have precedence ≥ p, `c`
    // through which thresholds are above it.
    let top = tail_precs.last().map_or(1, |m| m + 1);
    let norm = |(p, c): Level| -> Level {
        let p = tail_precs.range(p..).next().copied().unwrap_or(top);
        let c = c.and_then(|c| thresholds.range(..=c).next_back().copied());
        (p, c)
    };
    // Each level's alternatives: (alternative index, left operand, right operand).
    type Shape = Vec<(usize, Option<Level>, Option<Level>)>;
    let shape = |(p, c): Level| -> Shape {
        let above = |t: u32| c.is_none_or(|c| t > c);
        let mut out = Vec::new();
        for (i, a) in alts.iter().enumerate() {
            match a.kind {
                Kind::Primary => out.push((i, None, None)),
                Kind::Prefix(pi) if above(pi) => out.push((i, None, Some(norm((pi, c))))),
                Kind::Suffix if a.prec >= p => out.push((i, Some(norm((p, Some(a.prec)))), None)),
                Kind::Binary(r) if a.prec >= p && above(r) => {
                    out.push((i, Some(norm((p, Some(a.prec)))), Some(norm((r, c)))))
                }
                _ => {}
            }
        }
        out
    };
    let root = norm((0, None));
    let mut shapes: BTreeMap<Level, Shape> = BTreeMap::new();
    let mut todo = vec![root];
    while let Some(level) = todo.pop() {
        if shapes.contains_key(&level) {
            continue;
        }
        let s = shape(level);
        for (_, l, r) in &s {
            todo.extend(l.iter().chain(r.iter()).copied());
        }
        shapes.insert(level, s);
    }
    // Merge levels with the same alternatives over the same levels (Moore's
    // partition refinement).
    let levels: Vec<Level> = shapes.keys().copied().collect();
    let mut block: HashMap<Level, usize> = HashMap::new();
    {
        let mut first: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        for &l in &levels {
            let key: Vec<usize> = shapes[&l].iter().map(|(i, _, _)| *i).collect();
            let next = first.len();
            block.insert(l, *first.entry(key).or_insert(next));
        }
    }
    loop {
        // (block, alternatives over blocks) -> refined block
        type Signature = (usize, Vec<(usize, Option<usize>, Option<usize>)>);
        let mut first: BTreeMap<Signature, usize> = BTreeMap::new();
        let mut refined: HashMap<Level, usize> = HashMap::new();
        for &l in &levels {
            let key = (
                block[&l],
                shapes[&l]
                    .iter()
                    .map(|(i, a, b)| (*i, a.map(|a| block[&a]), b.map(|b| block[&b])))
                    .collect(),
            );
            let next = first.len();
            refined.insert(l, *first.entry(key).or_insert(next));
        }
        let same = first.len() == block.values().collect::<BTreeSet<_>>().len();
        block = refined;
        if same {
            break;
        }
    }
    // Names: the root block is the rule itself; the others after their smallest
    // level, one without a right-edge bound first (ANTLR's `e[p]`).
    let mut names: BTreeMap<usize, String> = BTreeMap::new();
    names.insert(block[&root], name.to_string());
    let mut by_name = levels.clone();
    by_name.sort_by_key(|&(p, c)| (c.is_some(), p, c));
    for &l in &by_name {
        let b = block[&l];
        names.entry(b).or_insert_with(|| match l.1 {
            None => format!("{name}[{}]", l.0),
            Some(c) => format!("{name}[{},{c}]", l.0),
        });
    }
    let reference = |level: Level, span: Span| Elem::Ref(names[&block[&level]].clone(), span);
    let mut out: Vec<LevelRule> = Vec::new();
    let mut done = BTreeSet::new();
    // The root first, then the others in level order.
    let order = std::iter::once(root).chain(levels.iter().copied());
    for level in order {
        let b = block[&level];
        if !done.insert(b) {
            continue;
        }
        let mut rule_alts = Vec::new();
        for (i, left, right) in &shapes[&level] {
            let a = &alts[*i];
            let mut seq: Vec<Elem> = Vec::new();
            if let Some(l) = left {
                let span = first_is(&rule.alts[*i].0, name).unwrap_or(Span::new(0, 0));
                seq.push(reference(*l, span));
            }
            seq.extend(a.middle.iter().map(|e| (*e).clone()));
            if let Some(r) = right {
                seq.push(reference(*r, a.last_span));
            }
            seq.extend(a.trailer.iter().map(|e| (*e).clone()));
            rule_alts.push(if seq.len() == 1 {
                seq.pop().expect("one element")
            } else {
                Elem::Seq(seq)
            });
        }
        out.push(LevelRule {
            name: names[&b].clone(),
            alts: rule_alts,
        });
    }
    out
}
