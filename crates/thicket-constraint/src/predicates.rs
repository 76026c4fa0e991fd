//! Predicates: ISLa's structural predicates (`before`, `inside`, `level`, ...) and
//! semantic predicates (`count`, checksums, `octal_to_decimal`, `hex_to_decimal`, the
//! width predicates `ljust_crop`, `rjust_crop`, `extend_crop`, `crop`, `ljust`,
//! `rjust`), behind one
//! [`Predicate`] trait that users implement to add their own and register in
//! [`Predicates`].
//!
//! Structural predicates use ISLa's path semantics ([`TreeView`] has the preorder
//! equivalents). Two deliberate choices: `after(a, b)` is `before(b, a)`, as the paper
//! defines it (ISLa's code also lets it hold when `b` contains `a`), and `consecutive`
//! follows ISLa exactly: `a` before `b` with no leaf (terminal, possibly empty) between.

use crate::formula::PredArg;
use crate::view::TreeView;
use std::collections::BTreeMap;
use std::sync::Arc;
use thicket_grammar::{Grammar, SymbolId};
use thicket_tree::NodeId;

/// What a predicate parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A subtree: a variable, a free nonterminal or an XPath expression.
    Tree,
    /// A natural number: a literal, a numeric string, an `int` variable (possibly
    /// unbound, for the predicate to bind) or a tree whose text is a number.
    Number,
    /// A string literal.
    Text,
    /// A nonterminal named by a string literal, e.g. `"<raw-field>"`.
    Symbol,
}

/// An argument's value when the predicate is evaluated.
#[derive(Clone, Copy, Debug)]
pub enum ArgValue<'a> {
    /// A subtree.
    Tree(NodeId),
    /// A number; `None` if it is an `int` variable without a value yet.
    Number(Option<i128>),
    /// A string literal.
    Text(&'a str),
    /// A nonterminal.
    Symbol(SymbolId),
}

/// The result of evaluating a predicate.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The predicate holds.
    Holds,
    /// The predicate does not hold; `why` says what is wrong, and `fix` (semantic
    /// predicates only, may be empty) gives new texts for subtrees that would make it
    /// hold, for a solver or a repair to use.
    Fails {
        /// What is wrong, for people.
        why: String,
        /// Replacement texts for subtrees.
        fix: Vec<(NodeId, Vec<u8>)>,
    },
    /// The (only) unbound number argument should take this value.
    Bind(i128),
}

/// What a predicate can see.
pub struct PredicateContext<'a, 't> {
    /// The tree, indexed.
    pub view: &'a TreeView<'t>,
    /// Its grammar.
    pub grammar: &'a Grammar,
    /// Whether a failure's `why` will be read (explaining a verdict). When false (a
    /// check, a solver's search) a predicate may leave it empty: failing calls are the
    /// common case inside an `exists`, and their messages would cost more than the test.
    pub explaining: bool,
}

impl PredicateContext<'_, '_> {
    /// The text of a subtree.
    pub fn text(&self, node: NodeId) -> &[u8] {
        self.view.tree().text(node)
    }

    /// `Holds`, or `Fails` without fixes, with `why()` as the reason when explaining.
    pub fn outcome(&self, holds: bool, why: impl FnOnce() -> String) -> Outcome {
        if holds {
            Outcome::Holds
        } else {
            Outcome::Fails {
                why: if self.explaining {
                    why()
                } else {
                    String::new()
                },
                fix: Vec::new(),
            }
        }
    }
}

/// A predicate of the constraint language.
pub trait Predicate: Send + Sync {
    /// The name constraints call it by.
    fn name(&self) -> &str;
    /// Its parameters.
    fn params(&self) -> &[ArgKind];
    /// Whether it only looks at tree positions (ISLa's structural predicates), as
    /// opposed to texts (semantic predicates).
    fn is_structural(&self) -> bool;
    /// Whether its outcome is decided by its tree arguments' subtrees and where they
    /// lie relative to each other, so that it cannot change while a subtree holding
    /// them all stays the same (see [`crate::formula::Quantifier::instance_local`]).
    /// False unless a predicate says so.
    fn is_local(&self) -> bool {
        false
    }
    /// Checks literal arguments when the constraint is compiled; returns the index of
    /// the bad argument and what is wrong.
    fn validate(&self, _args: &[PredArg], _grammar: &Grammar) -> Result<(), (usize, String)> {
        Ok(())
    }
    /// Evaluates the predicate on a closed tree.
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome;
}

/// The predicates a constraint may call, by name.
#[derive(Clone)]
pub struct Predicates {
    by_name: BTreeMap<String, Arc<dyn Predicate>>,
}

impl Default for Predicates {
    fn default() -> Self {
        Predicates::standard()
    }
}

impl Predicates {
    /// No predicates at all.
    pub fn empty() -> Predicates {
        Predicates {
            by_name: BTreeMap::new(),
        }
    }

    /// ISLa's structural and semantic predicates plus the checksums.
    pub fn standard() -> Predicates {
        let mut p = Predicates::empty();
        for (name, relation) in [
            ("before", Relation::Before),
            ("after", Relation::After),
            ("inside", Relation::Inside),
            ("direct_child", Relation::DirectChild),
            ("same_position", Relation::Same),
            ("different_position", Relation::Different),
            ("consecutive", Relation::Consecutive),
        ] {
            p.register(Arc::new(Structural { name, relation }));
        }
        p.register(Arc::new(Level));
        p.register(Arc::new(Nth));
        p.register(Arc::new(Count));
        p.register(Arc::new(TarChecksum));
        p.register(Arc::new(InternetChecksum));
        p.register(Arc::new(OctalToDecimal));
        p.register(Arc::new(HexToDecimal));
        for (name, way) in [
            ("ljust", Justify::Left),
            ("rjust", Justify::Right),
            ("ljust_crop", Justify::LeftCrop),
            ("rjust_crop", Justify::RightCrop),
            ("extend_crop", Justify::ExtendCrop),
            ("crop", Justify::Crop),
        ] {
            p.register(Arc::new(Width { name, way }));
        }
        p
    }

    /// Adds (or replaces) a predicate.
    pub fn register(&mut self, predicate: Arc<dyn Predicate>) {
        self.by_name.insert(predicate.name().to_string(), predicate);
    }

    /// The predicate of a name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Predicate>> {
        self.by_name.get(name)
    }

    /// Every registered name.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.by_name.keys()
    }
}

fn tree(args: &[ArgValue<'_>], i: usize) -> NodeId {
    match args[i] {
        ArgValue::Tree(n) => n,
        _ => unreachable!("arguments are checked against the parameters when compiling"),
    }
}

#[derive(Clone, Copy)]
enum Relation {
    Before,
    After,
    Inside,
    DirectChild,
    Same,
    Different,
    Consecutive,
    Precedes,
}

/// `precedes(a, b)`: `a` comes before `b` in document order (preorder), so an ancestor
/// precedes its descendants. Not one of ISLa's predicates (not registered in
/// [`Predicates::standard`]): Fandango's `is_before` compares preorder positions.
pub fn precedes() -> Arc<dyn Predicate> {
    Arc::new(Structural {
        name: "precedes",
        relation: Relation::Precedes,
    })
}

/// `inside(a, b)`: `a` lies in `b`'s subtree (or is `b`), as a predicate to call.
pub fn inside() -> Arc<dyn Predicate> {
    Arc::new(Structural {
        name: "inside",
        relation: Relation::Inside,
    })
}

struct Structural {
    name: &'static str,
    relation: Relation,
}

impl Predicate for Structural {
    fn name(&self) -> &str {
        self.name
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        true
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let (a, b) = (tree(args, 0), tree(args, 1));
        let v = ctx.view;
        let (holds, relation) = match self.relation {
            Relation::Before => (v.before(a, b), "before"),
            Relation::After => (v.before(b, a), "after"),
            Relation::Inside => (v.inside(a, b), "inside"),
            Relation::DirectChild => (v.parent(a) == Some(b), "a direct child of"),
            Relation::Same => (a == b, "the same node as"),
            Relation::Different => (a != b, "a different node from"),
            Relation::Consecutive => (
                v.before(a, b) && !v.leaf_between(a, b),
                "immediately before",
            ),
            Relation::Precedes => (a.index() < b.index(), "in document order before"),
        };
        ctx.outcome(holds, || {
            format!("the first argument is not {relation} the second")
        })
    }
}

/// `level(PRED, "<nt>", a, b)`: compares how deeply `a` and `b` are nested in `<nt>`.
struct Level;

const LEVEL_RELATIONS: [&str; 5] = ["EQ", "GE", "LE", "GT", "LT"];

impl Predicate for Level {
    fn name(&self) -> &str {
        "level"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Text, ArgKind::Symbol, ArgKind::Tree, ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        true
    }
    fn validate(&self, args: &[PredArg], _: &Grammar) -> Result<(), (usize, String)> {
        match &args[0] {
            PredArg::Text(t) if LEVEL_RELATIONS.contains(&t.as_str()) => Ok(()),
            _ => Err((
                0,
                "the relation must be one of \"EQ\", \"GE\", \"LE\", \"GT\", \"LT\"".to_string(),
            )),
        }
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let ArgValue::Text(relation) = args[0] else {
            unreachable!("checked when compiling")
        };
        let ArgValue::Symbol(scope) = args[1] else {
            unreachable!("checked when compiling")
        };
        let (a, b) = (tree(args, 2), tree(args, 3));
        let view = ctx.view;
        // ISLa: the candidate scopes are the root and every `scope` node that is a proper
        // ancestor of the smallest subtree holding both `a` and `b`.
        let lca = std::iter::once(a)
            .chain(view.ancestors(a))
            .find(|&x| view.inside(b, x))
            .unwrap_or(view.tree().root());
        let root = view.tree().root();
        let mut scopes = vec![root];
        scopes.extend(
            view.ancestors(lca)
                .filter(|&x| view.symbol(x) == Some(scope)),
        );
        // Number of `scope` nodes strictly between `top` and `node`.
        let nested = |node: NodeId, top: NodeId| {
            view.ancestors(node)
                .take_while(|&x| x != top)
                .filter(|&x| view.symbol(x) == Some(scope))
                .count()
        };
        let holds = scopes.iter().any(|&top| {
            let (na, nb) = (nested(a, top), nested(b, top));
            match relation {
                "EQ" => na == 0 && nb == 0,
                "GE" => na == 0,
                "LE" => nb == 0,
                "GT" => na == 0 && nb > 0,
                _ => nb == 0 && na > 0,
            }
        });
        ctx.outcome(holds, || {
            let name = ctx.grammar.display_symbol(scope);
            format!("the nesting levels in {name} are not related by {relation}")
        })
    }
}

/// `nth(N, a, b)`: `a` is the N-th node of its type in `b`, in preorder.
struct Nth;

impl Predicate for Nth {
    fn name(&self) -> &str {
        "nth"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Number, ArgKind::Tree, ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        true
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let (a, b) = (tree(args, 1), tree(args, 2));
        let position = ctx.view.symbol(a).and_then(|symbol| {
            ctx.view
                .nodes_of(symbol, b)
                .iter()
                .position(|&x| x as usize == a.index())
        });
        match (args[0], position) {
            (ArgValue::Number(None), Some(p)) => Outcome::Bind(p as i128 + 1),
            (ArgValue::Number(Some(n)), Some(p)) => ctx.outcome(n == p as i128 + 1, || {
                format!("it is occurrence {}, not {n}", p + 1)
            }),
            _ => ctx.outcome(false, || {
                "the first tree is not inside the second".to_string()
            }),
        }
    }
}

/// `count(tree, "<needle>", N)`: `tree` holds exactly N `<needle>` nodes.
struct Count;

impl Predicate for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Symbol, ArgKind::Number]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let ArgValue::Symbol(needle) = args[1] else {
            unreachable!("checked when compiling")
        };
        let found = ctx.view.nodes_of(needle, tree(args, 0)).len() as i128;
        match args[2] {
            ArgValue::Number(None) => Outcome::Bind(found),
            ArgValue::Number(Some(n)) => ctx.outcome(found == n, || {
                format!(
                    "it holds {found} {}, not {n}",
                    ctx.grammar.display_symbol(needle)
                )
            }),
            _ => unreachable!("checked when compiling"),
        }
    }
}

/// The octal number in a tar numeric field: octal digits, padded with spaces or NULs.
fn parse_octal(text: &[u8]) -> Option<i128> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect();
    let rest_is_padding = text
        .iter()
        .skip_while(|&&b| b == b' ')
        .skip(digits.len())
        .all(|&b| b == b' ' || b == 0);
    if digits.is_empty() || !rest_is_padding || digits.len() > 40 {
        return None;
    }
    Some(digits.iter().fold(0i128, |n, d| n * 8 + (d - b'0') as i128))
}

/// `tar_checksum(header, checksum)`: the ustar header checksum, the sum of the header's
/// bytes with the checksum field read as spaces, written as six octal digits, NUL, space
/// (ISLa's format; any octal padded with spaces or NULs is accepted when checking).
struct TarChecksum;

impl Predicate for TarChecksum {
    fn name(&self) -> &str {
        "tar_checksum"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let (header, field) = (tree(args, 0), tree(args, 1));
        let tree = ctx.view.tree();
        let (h, f) = (tree.text_range(header), tree.text_range(field));
        if f.start < h.start || f.end > h.end {
            return ctx.outcome(false, || {
                "the checksum field is not inside the header".into()
            });
        }
        let sum: i128 = tree.bytes()[h.clone()]
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if f.contains(&(h.start + i)) {
                    b' ' as i128
                } else {
                    b as i128
                }
            })
            .sum();
        let written = parse_octal(ctx.text(field));
        if written == Some(sum) {
            return Outcome::Holds;
        }
        let mut fixed = format!("{sum:06o}").into_bytes();
        fixed.extend_from_slice(b"\0 ");
        Outcome::Fails {
            why: match written {
                Some(w) => {
                    format!("the checksum field says {w:o} (octal), the header sums to {sum:o}")
                }
                None => {
                    format!("the checksum field is not an octal number; the header sums to {sum:o}")
                }
            },
            fix: vec![(field, fixed)],
        }
    }
}

/// Decodes hex text such as ISLa's ICMP packets (`"08 00 f7 ff "`): pairs of hex
/// digits, whitespace ignored.
fn decode_hex(text: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

/// `internet_checksum(container, checksum)`: RFC 1071, the ones' complement of the
/// ones' complement sum of the container's 16-bit words with the checksum field zeroed.
/// A 2-byte checksum field is binary (big-endian); otherwise container and field are
/// hex text, as in ISLa's ICMP grammar, and the field holds 4 hex digits.
struct InternetChecksum;

fn rfc1071(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in bytes.chunks(2) {
        let word = u32::from(pair[0]) << 8 | u32::from(*pair.get(1).unwrap_or(&0));
        sum += word;
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Predicate for InternetChecksum {
    fn name(&self) -> &str {
        "internet_checksum"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let (container, field) = (tree(args, 0), tree(args, 1));
        let tree = ctx.view.tree();
        let (c, f) = (tree.text_range(container), tree.text_range(field));
        if f.start < c.start || f.end > c.end {
            return ctx.outcome(false, || {
                "the checksum field is not inside the container".into()
            });
        }
        let all = tree.bytes();
        let binary = f.len() == 2;
        let decoded = if binary {
            Some((
                all[c.start..f.start].to_vec(),
                all[f.clone()].to_vec(),
                all[f.end..c.end].to_vec(),
            ))
        } else {
            decode_hex(&all[c.start..f.start])
                .zip(decode_hex(&all[f.clone()]))
                .zip(decode_hex(&all[f.end..c.end]))
                .map(|((a, b), c)| (a, b, c))
        };
        let Some((before, written, after)) = decoded.filter(|(_, w, _)| w.len() == 2) else {
            return ctx.outcome(false, || {
                "the packet is neither binary with a 2-byte checksum nor hex text".into()
            });
        };
        let mut packet = before;
        packet.extend_from_slice(&[0, 0]);
        packet.extend_from_slice(&after);
        let sum = rfc1071(&packet);
        let written = u16::from_be_bytes([written[0], written[1]]);
        if sum == written {
            return Outcome::Holds;
        }
        let fix = if binary {
            sum.to_be_bytes().to_vec()
        } else {
            format!("{:02x} {:02x} ", sum >> 8, sum & 0xff).into_bytes()
        };
        Outcome::Fails {
            why: format!("the checksum is {written:04x}, the data sums to {sum:04x}"),
            fix: vec![(field, fix)],
        }
    }
}

/// A number argument compared with the `value` a field holds: bound to it when unbound,
/// holds when equal, else `fails(n)` (the outcome with its fix).
fn number_is(value: i128, arg: ArgValue<'_>, fails: impl FnOnce(i128) -> Outcome) -> Outcome {
    match arg {
        ArgValue::Number(None) => Outcome::Bind(value),
        ArgValue::Number(Some(n)) if n == value => Outcome::Holds,
        ArgValue::Number(Some(n)) => fails(n),
        _ => unreachable!("checked when compiling"),
    }
}

/// `octal_to_decimal(octal, decimal)`: the octal field (tar style, padded with spaces
/// or NULs) has the value of the decimal number.
struct OctalToDecimal;

impl Predicate for OctalToDecimal {
    fn name(&self) -> &str {
        "octal_to_decimal"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Number]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let Some(value) = parse_octal(ctx.text(tree(args, 0))) else {
            return ctx.outcome(false, || "the first argument is not an octal number".into());
        };
        number_is(value, args[1], |n| {
            // The fix writes `n` in octal in the field's own layout: as many
            // digits as it has (zero-padded), then its padding.
            let field = ctx.text(tree(args, 0));
            let lead = field.iter().take_while(|&&b| b == b' ').count();
            let digits = field[lead..]
                .iter()
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count();
            let written = format!("{n:0digits$o}");
            let fix = if n >= 0 && written.len() == digits {
                let mut text = field[..lead].to_vec();
                text.extend_from_slice(written.as_bytes());
                text.extend_from_slice(&field[lead + digits..]);
                vec![(tree(args, 0), text)]
            } else {
                Vec::new()
            };
            Outcome::Fails {
                why: format!("octal {value:o} is {value}, not {n}"),
                fix,
            }
        })
    }
}

/// `hex_to_decimal(hex, decimal)`: the hex digits of `hex` (whitespace between them
/// ignored, as in ISLa's hex-text packets such as `"00 1c "`), read as one big-endian
/// number, are the decimal number. With `decimal` an unbound `int` variable, binds it.
/// The fix writes the number in hex into the field's own layout: its digit positions
/// (zero-padded), its whitespace, and upper case if the field uses it.
struct HexToDecimal;

impl Predicate for HexToDecimal {
    fn name(&self) -> &str {
        "hex_to_decimal"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree, ArgKind::Number]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let field = ctx.text(tree(args, 0));
        let Some(value) = parse_hex(field) else {
            return ctx.outcome(false, || "the first argument is not a hex number".into());
        };
        number_is(value, args[1], |n| {
            let digits = field.iter().filter(|b| b.is_ascii_hexdigit()).count();
            let upper = field.iter().any(u8::is_ascii_uppercase);
            let written = if upper {
                format!("{n:0digits$X}")
            } else {
                format!("{n:0digits$x}")
            };
            let fix = if n >= 0 && written.len() == digits {
                let mut new = written.bytes();
                let text = field
                    .iter()
                    .map(|&b| {
                        if b.is_ascii_hexdigit() {
                            new.next().unwrap_or(b)
                        } else {
                            b
                        }
                    })
                    .collect();
                vec![(tree(args, 0), text)]
            } else {
                Vec::new()
            };
            Outcome::Fails {
                why: format!("hex {value:x} is {value}, not {n}"),
                fix,
            }
        })
    }
}

/// The number in hex text: hex digits with whitespace anywhere, at most 30 of them.
fn parse_hex(text: &[u8]) -> Option<i128> {
    if !text
        .iter()
        .all(|b| b.is_ascii_hexdigit() || b.is_ascii_whitespace())
    {
        return None;
    }
    let digits: Vec<u8> = text.iter().copied().filter(u8::is_ascii_hexdigit).collect();
    if digits.is_empty() || digits.len() > 30 {
        return None;
    }
    let text = std::str::from_utf8(&digits).ok()?;
    i128::from_str_radix(text, 16).ok()
}

/// How a width predicate brings a text to its width (ISLa's `just` and `crop`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Justify {
    /// `ljust(t, w, c)`: exactly `w` long; the fix pads with `c` on the right (no fix
    /// when `t` is longer).
    Left,
    /// `rjust(t, w, c)`: exactly `w` long; the fix pads with `c` on the left.
    Right,
    /// `ljust_crop(t, w, c)`: exactly `w` long; the fix pads with `c` on the right or
    /// keeps the first `w` characters.
    LeftCrop,
    /// `rjust_crop(t, w, c)`: exactly `w` long; the fix pads with `c` on the left or
    /// keeps the last `w` characters.
    RightCrop,
    /// `extend_crop(t, w)`: `ljust_crop` with `t`'s own first character as the fill
    /// (ISLa uses it on runs of one character, such as a title's underline).
    ExtendCrop,
    /// `crop(t, w)`: at most `w` long; the fix keeps the first `w` characters.
    Crop,
}

/// ISLa's width predicates. Lengths count characters (as `str.len` does; bytes where
/// the text is not UTF-8). A width given as an unbound `int` variable is bound to the
/// text's length, so `exists int n: (ljust_crop(t, n, " ") and ...)` reads `n` off
/// the tree, as ISLa's solver does. As checks, every predicate but `crop` holds when
/// the text is exactly `w` long (in ISLa they hold when justifying would leave the
/// tree unchanged); their fixes are ISLa's justified texts, which a solver re-parses
/// as the same nonterminal before using them.
struct Width {
    name: &'static str,
    way: Justify,
}

impl Predicate for Width {
    fn name(&self) -> &str {
        self.name
    }
    fn params(&self) -> &[ArgKind] {
        match self.way {
            Justify::ExtendCrop | Justify::Crop => &[ArgKind::Tree, ArgKind::Number],
            _ => &[ArgKind::Tree, ArgKind::Number, ArgKind::Text],
        }
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn is_local(&self) -> bool {
        true
    }
    fn validate(&self, args: &[PredArg], _: &Grammar) -> Result<(), (usize, String)> {
        match args.get(2) {
            Some(PredArg::Text(fill)) if fill.chars().count() != 1 => Err((
                2,
                "the fill character must be exactly one character".to_string(),
            )),
            _ => Ok(()),
        }
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let node = tree(args, 0);
        let field = ctx.text(node);
        let text = String::from_utf8_lossy(field);
        let chars: Vec<char> = if std::str::from_utf8(field).is_ok() {
            text.chars().collect()
        } else {
            field.iter().map(|&b| char::from(b)).collect()
        };
        let len = chars.len();
        let width = match args[1] {
            ArgValue::Number(None) => return Outcome::Bind(len as i128),
            ArgValue::Number(Some(w)) => w,
            _ => unreachable!("checked when compiling"),
        };
        let holds = match self.way {
            Justify::Crop => len as i128 <= width,
            _ => len as i128 == width,
        };
        if holds {
            return Outcome::Holds;
        }
        let why = if !ctx.explaining {
            String::new()
        } else if self.way == Justify::Crop {
            format!("it is {len} characters long, more than {width}")
        } else {
            format!("it is {len} characters long, not {width}")
        };
        let Ok(width) = usize::try_from(width) else {
            return Outcome::Fails {
                why,
                fix: Vec::new(),
            };
        };
        let fill = match (self.way, args.get(2)) {
            (Justify::ExtendCrop, _) => chars.first().copied(),
            (_, Some(ArgValue::Text(fill))) => fill.chars().next(),
            _ => None,
        };
        let pad = |fill: Option<char>| -> Option<Vec<char>> {
            Some(std::iter::repeat_n(fill?, width.saturating_sub(len)).collect())
        };
        let fixed: Option<Vec<char>> = match self.way {
            Justify::Left | Justify::Right if len > width => None,
            Justify::Left | Justify::LeftCrop | Justify::ExtendCrop if len < width => {
                pad(fill).map(|p| [chars.clone(), p].concat())
            }
            Justify::Right | Justify::RightCrop if len < width => {
                pad(fill).map(|p| [p, chars.clone()].concat())
            }
            Justify::RightCrop => Some(chars[len - width..].to_vec()),
            _ => Some(chars[..width].to_vec()),
        };
        // A text that is not UTF-8 stays bytes (and a fill beyond one byte gives no fix).
        let bytes = |cs: Vec<char>| -> Option<Vec<u8>> {
            if std::str::from_utf8(field).is_ok() {
                Some(cs.into_iter().collect::<String>().into_bytes())
            } else {
                cs.into_iter().map(|c| u8::try_from(c).ok()).collect()
            }
        };
        Outcome::Fails {
            why,
            fix: fixed
                .and_then(bytes)
                .map(|f| vec![(node, f)])
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_fields_and_checksums() {
        assert_eq!(parse_octal(b"000644 \0"), Some(0o644));
        assert_eq!(parse_octal(b"   12\0\0"), Some(0o12));
        assert_eq!(parse_octal(b"0008"), None);
        assert_eq!(parse_octal(b""), None);
        // RFC 1071's example words 0001 f203 f4f5 f6f7 sum to ddf2 (complement 220d).
        assert_eq!(
            rfc1071(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
        assert_eq!(decode_hex(b"08 00 f7 ff "), Some(vec![8, 0, 0xf7, 0xff]));
        assert_eq!(decode_hex(b"0"), None);
    }
}
