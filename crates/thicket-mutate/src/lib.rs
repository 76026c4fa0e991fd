//! Mutations of derivation trees through the grammar: replace a rule's subtree by a
//! freshly generated one (regeneration), or by another tree's subtree of the same rule
//! (splicing); the results are again derivation trees of the grammar, so those mutants
//! are valid inputs. One mutation leaves the language on purpose: changing a byte of a
//! terminal (FdLoop's leaf bit-flip), which reaches the target's error handling.
//! [`havoc`] leaves it altogether: AFL-style stacked byte edits of an input's bytes, for
//! what lies beyond the language a spec describes.

#![warn(missing_docs)]

pub mod havoc;

use rand::Rng;
use thicket_gen::{Encoding, Generator, below};
use thicket_grammar::{Expr, ExprId, Grammar, SymbolId};
use thicket_tree::{DerivationTree, NodeId, TreeBuilder, TreeSink};

/// The rule a node expands, if it is a rule reference (and not the root).
pub fn rule_of(grammar: &Grammar, tree: &DerivationTree, node: NodeId) -> Option<SymbolId> {
    match grammar.expr(tree.expr(node)) {
        Expr::Ref(symbol) if node.index() > 0 => Some(*symbol),
        _ => None,
    }
}

/// The rule-reference nodes of a tree other than the root: where mutations apply.
pub fn rule_nodes(grammar: &Grammar, tree: &DerivationTree) -> Vec<NodeId> {
    // Room for every node up front: collected from a filter, the vector would grow by
    // doubling, and this runs for most mutations.
    let mut nodes = Vec::with_capacity(tree.len());
    nodes.extend(
        tree.descendants(tree.root())
            .filter(|&n| rule_of(grammar, tree, n).is_some()),
    );
    nodes
}

/// A uniformly chosen element, `None` (drawing nothing) if there is none.
fn choose<R: Rng + ?Sized, T: Copy>(rng: &mut R, items: &[T]) -> Option<T> {
    (!items.is_empty()).then(|| items[below(rng, items.len() as u32) as usize])
}

/// A node of `nodes` chosen group first: a group (`key`: the rule a node expands, or
/// its repetition) uniformly among those present, then one of its nodes uniformly.
/// Chosen uniformly over nodes, mutations land on the groups with the most nodes: 70 % of
/// the rule nodes of kept JSON inputs are characters, digits and whitespace, so members,
/// elements and values, the structure, rarely change; on xml.bnf an attribute's name
/// rarely gets spliced (docs/fuzz-eval.md). `None` if `nodes` is empty.
fn choose_grouped<R: Rng + ?Sized, K: PartialEq>(
    rng: &mut R,
    nodes: &[NodeId],
    key: impl Fn(NodeId) -> K,
) -> Option<NodeId> {
    if nodes.is_empty() {
        return None;
    }
    // Groups in order of first appearance, so the choice depends only on the tree.
    let mut keys: Vec<K> = Vec::new();
    for &node in nodes {
        let k = key(node);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let group = keys.swap_remove(below(rng, keys.len() as u32) as usize);
    choose_where(rng, || nodes.iter().copied(), |n| key(n) == group)
}

/// [`choose`] over the items of `items` that `keep` accepts, without collecting them (the
/// same draw as collecting them first): a campaign makes thousands of mutants a second,
/// and a vector of candidates per mutant costs more than a second pass.
fn choose_where<R: Rng + ?Sized, T: Copy, I: Iterator<Item = T>>(
    rng: &mut R,
    items: impl Fn() -> I,
    mut keep: impl FnMut(T) -> bool,
) -> Option<T> {
    let count = items().filter(|&item| keep(item)).count();
    if count == 0 {
        return None;
    }
    let nth = below(rng, count as u32) as usize;
    items().filter(|&item| keep(item)).nth(nth)
}

/// A rule node of `nodes`, the rule chosen first (see [`choose_grouped`]).
fn choose_by_rule<R: Rng + ?Sized>(
    rng: &mut R,
    grammar: &Grammar,
    tree: &DerivationTree,
    nodes: &[NodeId],
) -> Option<NodeId> {
    RuleGroups::new(grammar, tree, nodes).choose(rng)
}

/// Nodes grouped by the rule they expand, for drawing the rule first and then one of its
/// nodes: the draw of [`choose_grouped`] keyed by rule, with each node's rule looked up
/// once (a splice draws up to 4 times from the same nodes, a recursion up to 8, and
/// this runs for most mutations of a campaign).
struct RuleGroups<'n> {
    nodes: &'n [NodeId],
    /// Per node, its group: the rule's index, or the number of rules for a node that
    /// expands none.
    slots: Vec<u32>,
    /// The groups present, in order of first appearance.
    order: Vec<u32>,
    /// Nodes per group.
    counts: Vec<u32>,
}

impl<'n> RuleGroups<'n> {
    fn new(grammar: &Grammar, tree: &DerivationTree, nodes: &'n [NodeId]) -> RuleGroups<'n> {
        let none = grammar.rules().len();
        let mut counts = vec![0u32; none + 1];
        let mut order = Vec::new();
        let slots = nodes
            .iter()
            .map(|&node| {
                let slot = rule_of(grammar, tree, node).map_or(none, SymbolId::index);
                if counts[slot] == 0 {
                    order.push(slot as u32);
                }
                counts[slot] += 1;
                slot as u32
            })
            .collect();
        RuleGroups {
            nodes,
            slots,
            order,
            counts,
        }
    }

    /// A group drawn uniformly among those present, then one of its nodes uniformly;
    /// `None` (drawing nothing) if there are no nodes.
    fn choose<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<NodeId> {
        if self.nodes.is_empty() {
            return None;
        }
        let group = self.order[below(rng, self.order.len() as u32) as usize];
        let nth = below(rng, self.counts[group as usize]) as usize;
        let at = self
            .slots
            .iter()
            .enumerate()
            .filter(|&(_, &slot)| slot == group)
            .nth(nth)
            .map(|(i, _)| i)?;
        Some(self.nodes[at])
    }
}

/// The rule nodes of a tree that have a descendant expanding the same rule: where
/// recursive mutation applies. One preorder walk with a stack of open rule nodes per
/// rule (a node marks only its nearest open ancestor of its rule: that one marked the
/// ancestors above it when it was visited).
pub fn recursive_nodes(grammar: &Grammar, tree: &DerivationTree) -> Vec<NodeId> {
    let mut open: Vec<Vec<NodeId>> = vec![Vec::new(); grammar.rules().len()];
    // Open rule nodes (any rule), innermost last, to close them in order.
    let mut path: Vec<(NodeId, SymbolId)> = Vec::new();
    let mut marked = vec![false; tree.len()];
    for node in tree.descendants(tree.root()) {
        while let Some(&(top, rule)) = path.last() {
            if node.index() < tree.subtree_end(top) {
                break;
            }
            path.pop();
            open[rule.index()].pop();
        }
        if let Some(rule) = rule_of(grammar, tree, node) {
            if let Some(&ancestor) = open[rule.index()].last() {
                marked[ancestor.index()] = true;
            }
            open[rule.index()].push(node);
            path.push((node, rule));
        }
    }
    (0..tree.len())
        .filter(|&i| marked[i])
        .map(NodeId::from_index)
        .collect()
}

/// A tree to splice from, with its rule nodes grouped by rule (each group in preorder):
/// a splice then looks at the donor's nodes of one rule instead of walking the whole
/// donor, which a campaign did for every splice of every mutant, over kept inputs larger
/// on average than the parents it mutates.
pub struct Donor {
    tree: DerivationTree,
    /// Where each rule's group starts in `nodes` (by symbol index; one more at the end).
    starts: Vec<u32>,
    nodes: Vec<NodeId>,
}

impl Donor {
    /// Groups `tree`'s rule nodes (see [`rule_nodes`]) by rule.
    pub fn new(grammar: &Grammar, tree: DerivationTree) -> Donor {
        let rules = grammar.rules().len();
        let mut starts = vec![0u32; rules + 1];
        for node in tree.descendants(tree.root()) {
            if let Some(rule) = rule_of(grammar, &tree, node) {
                starts[rule.index() + 1] += 1;
            }
        }
        for i in 1..=rules {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut nodes = vec![NodeId::from_index(0); starts[rules] as usize];
        for node in tree.descendants(tree.root()) {
            if let Some(rule) = rule_of(grammar, &tree, node) {
                let slot = &mut next[rule.index()];
                nodes[*slot as usize] = node;
                *slot += 1;
            }
        }
        Donor {
            tree,
            starts,
            nodes,
        }
    }

    /// The tree.
    pub fn tree(&self) -> &DerivationTree {
        &self.tree
    }

    /// The nodes expanding `rule`, in preorder.
    pub fn rule_nodes(&self, rule: SymbolId) -> &[NodeId] {
        let i = rule.index();
        &self.nodes[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// A copy of `tree` with the subtree at `hole` replaced by what `fill` emits.
fn replace(
    tree: &DerivationTree,
    hole: NodeId,
    fill: impl FnOnce(&mut TreeBuilder),
) -> DerivationTree {
    tree.replace_subtree(hole, fill)
}

/// Replaces the subtree at a rule node (the rule drawn first, see [`choose_grouped`]) by
/// a fresh one from the generator (within its depth limit). `None` if the tree has no
/// rule node below the root.
pub fn regenerate<R: Rng + ?Sized>(
    generator: &Generator<'_>,
    tree: &DerivationTree,
    rng: &mut R,
) -> Option<DerivationTree> {
    let grammar = generator.grammar();
    let hole = choose_by_rule(rng, grammar, tree, &rule_nodes(grammar, tree))?;
    let depth = tree.depth_above(grammar, hole);
    let expr = tree.expr(hole);
    Some(replace(tree, hole, |sink| {
        generator.expand(expr, depth, rng, sink);
    }))
}

/// Replaces the subtree at a rule node of `tree` (the rule drawn first) by the subtree of
/// a node of `donor` that expands the same rule (a different text), if there is one and
/// the result stays within the generator's `max_depth`.
pub fn splice<R: Rng + ?Sized>(
    generator: &Generator<'_>,
    tree: &DerivationTree,
    donor: &DerivationTree,
    rng: &mut R,
) -> Option<DerivationTree> {
    let grammar = generator.grammar();
    let max_depth = generator.config().max_depth;
    let within = |mutant: &DerivationTree| mutant.depth(grammar) <= max_depth;
    splice_from(grammar, tree, donor, rng, within, |rule| {
        donor
            .descendants(donor.root())
            .filter(move |&n| rule_of(grammar, donor, n) == Some(rule))
    })
}

/// [`splice`] from a [`Donor`], whose nodes of the hole's rule are looked up rather than
/// found by walking the whole donor (the same draws: the same nodes in the same order),
/// bounded by bytes rather than depth: the result is at most `max_len` bytes long, at any
/// depth, as [`recurse`] and [`repeat`] bound theirs. A subtree spliced near the
/// generation depth limit may take the result past it (a five-letter name of xml.bnf is
/// seven levels deep, so an attribute's name in a tag of several attributes could never
/// become a donor's `xmlns`); the limit bounds what generation makes, not what a kept
/// input may hold.
pub fn splice_donor<R: Rng + ?Sized>(
    generator: &Generator<'_>,
    tree: &DerivationTree,
    donor: &Donor,
    max_len: usize,
    rng: &mut R,
) -> Option<DerivationTree> {
    let within = |mutant: &DerivationTree| mutant.bytes().len() <= max_len;
    splice_from(
        generator.grammar(),
        tree,
        &donor.tree,
        rng,
        within,
        |rule| donor.rule_nodes(rule).iter().copied(),
    )
}

/// [`splice`], the donor's nodes of a rule, in preorder, given by `nodes_of`; a mutant is
/// returned if `within` accepts it (else the next of four tries).
fn splice_from<R: Rng + ?Sized, I: Iterator<Item = NodeId>>(
    grammar: &Grammar,
    tree: &DerivationTree,
    donor: &DerivationTree,
    rng: &mut R,
    within: impl Fn(&DerivationTree) -> bool,
    nodes_of: impl Fn(SymbolId) -> I,
) -> Option<DerivationTree> {
    let nodes = rule_nodes(grammar, tree);
    let groups = RuleGroups::new(grammar, tree, &nodes);
    // A few tries to find a rule the donor also expands.
    for _ in 0..4 {
        let hole = groups.choose(rng)?;
        let rule = rule_of(grammar, tree, hole).expect("a rule node");
        let Some(part) = choose_where(rng, || nodes_of(rule), |n| donor.text(n) != tree.text(hole))
        else {
            continue;
        };
        let expr = tree.expr(hole);
        let result = replace(tree, hole, |sink| {
            donor.emit_subtree(grammar, part, expr, sink);
        });
        if within(&result) {
            return Some(result);
        }
    }
    None
}

/// Emits the subtree at `outer` with `levels - 1` more copies of the recursion from
/// `outer` down to `inner` (same rule), the last one ending in `inner`'s own subtree.
#[allow(clippy::too_many_arguments)]
fn pump(
    grammar: &Grammar,
    tree: &DerivationTree,
    outer: NodeId,
    inner: NodeId,
    root_expr: ExprId,
    levels: u32,
    sink: &mut TreeBuilder,
) {
    if levels == 0 {
        tree.emit_subtree(grammar, inner, root_expr, sink);
    } else {
        sink.push_subtree_with_hole(tree, outer, root_expr, inner, |s| {
            pump(grammar, tree, outer, inner, tree.expr(inner), levels - 1, s)
        });
    }
}

/// Most copies one recursive or repetition mutation adds.
const MAX_PUMP: usize = 1024;

/// A count in `1..=most` (`most` >= 1), log-uniform: each power of two up to `most` is
/// as likely, then a count uniformly within it; small counts stay common while counts in
/// the hundreds (a parser's nesting limit, a hash table's resize) are within reach.
fn log_uniform<R: Rng + ?Sized>(rng: &mut R, most: u32) -> u32 {
    let most = most.max(1);
    let bits = 32 - most.leading_zeros();
    let low = 1u32 << below(rng, bits);
    let high = (low * 2 - 1).min(most);
    low + below(rng, high - low + 1)
}

/// Recursive mutation (Nautilus): picks a rule node `outer` with a descendant `inner` of
/// the same rule (the rule drawn first among those with such nodes) and repeats the part of the tree between them more times (1 to 1,024,
/// log-uniform; the innermost copy ending in `inner`'s subtree), so a recursion the tree
/// already takes goes deeper. The result is a derivation tree of the grammar that may exceed the generator's
/// depth limit; its text stays within `max_len` bytes. `None` if the tree has no
/// recursion that grows it within the budget.
pub fn recurse<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    max_len: usize,
    rng: &mut R,
) -> Option<DerivationTree> {
    let nodes = recursive_nodes(grammar, tree);
    let groups = RuleGroups::new(grammar, tree, &nodes);
    for _ in 0..8 {
        let outer = groups.choose(rng)?;
        let rule = rule_of(grammar, tree, outer);
        let Some(inner) = choose_where(
            rng,
            || tree.descendants(outer),
            |n| n != outer && rule_of(grammar, tree, n) == rule,
        ) else {
            continue;
        };
        let growth = tree.text(outer).len() - tree.text(inner).len();
        let len = tree.bytes().len();
        if growth == 0 || len + growth > max_len {
            continue;
        }
        let most = ((max_len - len) / growth).min(MAX_PUMP) as u32;
        let extra = log_uniform(rng, most);
        let expr = tree.expr(outer);
        // The mutant's size is known: each extra level adds the nodes and text between
        // `outer` and `inner`.
        let level_nodes =
            (tree.subtree_end(outer) - outer.index()) - (tree.subtree_end(inner) - inner.index());
        let more_nodes = tree.len() + extra as usize * level_nodes;
        let more_text = len + extra as usize * growth;
        return Some(replace(tree, outer, |sink| {
            sink.reserve(
                more_nodes.saturating_sub(sink.node_count()),
                more_text.saturating_sub(sink.bytes().len()),
            );
            pump(grammar, tree, outer, inner, expr, extra + 1, sink)
        }));
    }
    None
}

/// Repetition mutation: picks a repetition (`*`, `+`, `{m,n}`) that has iterations (the
/// repetition of the grammar drawn first, then one of its nodes) and repeats one of them more times (1 to 1,024, log-uniform, within the repetition's
/// maximum and `max_len` bytes of text), so a list, an object or a string grows where
/// the tree already has one: the counterpart of [`recurse`] for repetitions. The result
/// is a derivation tree of the grammar. `None` if no repetition can grow within the
/// budget.
pub fn repeat<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    max_len: usize,
    rng: &mut R,
) -> Option<DerivationTree> {
    let repetitions: Vec<NodeId> = tree
        .descendants(tree.root())
        .filter(|&n| {
            matches!(grammar.expr(tree.expr(n)), Expr::Repeat(r)
                if r.max.is_none_or(|max| max as usize > tree.children(n).count()))
                && tree.children(n).any(|c| !tree.text(c).is_empty())
        })
        .collect();
    let node = choose_grouped(rng, &repetitions, |n| tree.expr(n))?;
    let Expr::Repeat(r) = grammar.expr(tree.expr(node)) else {
        unreachable!("filtered");
    };
    let children: Vec<NodeId> = tree.children(node).collect();
    let grown: Vec<NodeId> = children
        .iter()
        .copied()
        .filter(|&c| !tree.text(c).is_empty())
        .collect();
    let item = choose(rng, &grown)?;
    let growth = tree.text(item).len();
    let len = tree.bytes().len();
    if len + growth > max_len {
        return None;
    }
    let room = r
        .max
        .map_or(usize::MAX, |max| max as usize - children.len());
    let most = ((max_len - len) / growth).min(room).min(MAX_PUMP) as u32;
    let extra = log_uniform(rng, most);
    let expr = tree.expr(node);
    let more_nodes = tree.len() + extra as usize * (tree.subtree_end(item) - item.index());
    let more_text = len + extra as usize * growth;
    Some(replace(tree, node, |sink| {
        sink.reserve(
            more_nodes.saturating_sub(sink.node_count()),
            more_text.saturating_sub(sink.bytes().len()),
        );
        sink.open(expr);
        for &child in &children {
            let copies = if child == item { 1 + extra } else { 1 };
            for _ in 0..copies {
                tree.emit_subtree(grammar, child, tree.expr(child), sink);
            }
        }
        sink.close();
    }))
}

/// FdLoop's subtree swap: exchanges the subtrees of two disjoint nodes of the same rule
/// (with different texts) within one tree, the rule drawn first among rules that have
/// such a pair. The result is a derivation tree of the grammar (each subtree sits under
/// an occurrence of its own rule); it may exceed the generation depth limit. `None` if
/// no rule has two disjoint nodes with different texts.
pub fn swap<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    rng: &mut R,
) -> Option<DerivationTree> {
    let nodes = rule_nodes(grammar, tree);
    let mut by_rule: std::collections::BTreeMap<SymbolId, Vec<NodeId>> = Default::default();
    for &n in &nodes {
        if let Some(rule) = rule_of(grammar, tree, n) {
            by_rule.entry(rule).or_default().push(n);
        }
    }
    // Only rules with two nodes whose texts differ can swap to something new.
    let rules: Vec<&Vec<NodeId>> = by_rule
        .values()
        .filter(|ns| ns.iter().any(|&n| tree.text(n) != tree.text(ns[0])))
        .collect();
    for _ in 0..8 {
        let group: &[NodeId] = choose(rng, &rules)?;
        let a = choose(rng, group)?;
        let b = choose(rng, group)?;
        let disjoint = |x: NodeId, y: NodeId| {
            x.index() < y.index() && tree.subtree_end(x) <= y.index()
                || y.index() < x.index() && tree.subtree_end(y) <= x.index()
        };
        if !disjoint(a, b) || tree.text(a) == tree.text(b) {
            continue;
        }
        let holes = [a, b];
        return Some(tree.replace_subtrees(grammar, &holes, &mut |i, sink| {
            let (into, from) = (holes[i], holes[1 - i]);
            tree.emit_subtree(grammar, from, tree.expr(into), sink);
        }));
    }
    None
}

/// Bytes worth inserting: delimiters, quotes, escapes, digits, letters, and bytes that
/// are not text.
const INTERESTING: &[u8] = b"\"'\\/{}[]()<>,;:.-+eE0129azAZ \t\n\r\x00\x7f\xc3\xff";

/// Changes one byte of a random terminal: flips a bit, replaces, deletes or inserts a
/// byte. The tree keeps its shape; its text leaves the grammar's language (usually).
pub fn mutate_leaf<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    rng: &mut R,
) -> Option<DerivationTree> {
    edit_leaf(grammar, tree, LeafEdits::default(), rng).map(|(mutant, _)| mutant)
}

/// One random edit of a terminal's bytes (see [`mutate_leaf`]).
fn edit_bytes<R: Rng + ?Sized>(rng: &mut R, text: &mut Vec<u8>) {
    let pick = |rng: &mut R| INTERESTING[below(rng, INTERESTING.len() as u32) as usize];
    edit_one(rng, text, pick, |rng, byte| byte ^ (1 << below(rng, 8)));
}

/// The terminal leaves of a tree that `keep` accepts.
fn terminals(
    grammar: &Grammar,
    tree: &DerivationTree,
    keep: impl Fn(NodeId) -> bool,
) -> Vec<NodeId> {
    tree.descendants(tree.root())
        .filter(|&n| {
            matches!(
                grammar.expr(tree.expr(n)),
                Expr::Literal(_) | Expr::Regex(_)
            ) && keep(n)
        })
        .collect()
}

/// One random edit of a terminal's units (bytes or characters): insert one (`pick`),
/// flip one (`flip`), replace one (`pick`) or delete one; an empty text gets an insert.
fn edit_one<R: Rng + ?Sized, T>(
    rng: &mut R,
    units: &mut Vec<T>,
    pick: impl Fn(&mut R) -> T,
    flip: impl Fn(&mut R, &T) -> T,
) {
    match (below(rng, 4), units.len()) {
        (_, 0) | (3, _) => {
            let at = below(rng, units.len() as u32 + 1) as usize;
            units.insert(at, pick(rng));
        }
        (0, n) => {
            let at = below(rng, n as u32) as usize;
            units[at] = flip(rng, &units[at]);
        }
        (1, n) => {
            let at = below(rng, n as u32) as usize;
            units[at] = pick(rng);
        }
        (_, n) => {
            units.remove(below(rng, n as u32) as usize);
        }
    }
}

/// A copy of `tree` with the terminal `leaf` spelling `text`.
fn with_terminal_text(tree: &DerivationTree, leaf: NodeId, text: &[u8]) -> DerivationTree {
    let expr = tree.expr(leaf);
    replace(tree, leaf, |sink| sink.terminal(expr, text))
}

/// How a leaf mutation changes a terminal's text.
#[derive(Clone, Copy, Default)]
pub struct LeafEdits<'a> {
    /// The target takes text: a character changes ([`mutate_leaf_text`]), not a byte
    /// ([`mutate_leaf`]).
    pub text: bool,
    /// How trees stand for inputs, if not as their text: a terminal that may take only
    /// a few texts under it (Fandango's bits) gets another of those.
    pub encoding: Option<&'a dyn Encoding>,
}

/// Changes a random terminal as `edits` says; `true` with the mutant when the terminal
/// took another of the texts its encoding allows (a bit flipped), so the input still
/// says what its tree does.
pub fn edit_leaf<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    edits: LeafEdits<'_>,
    rng: &mut R,
) -> Option<(DerivationTree, bool)> {
    let leaves = terminals(grammar, tree, |n| {
        !edits.text || std::str::from_utf8(tree.text(n)).is_ok()
    });
    let leaf = choose(rng, &leaves)?;
    if let Some(texts) = edits.encoding.and_then(|e| e.leaf_texts(tree.expr(leaf))) {
        let text = choose_where(rng, || texts.iter().copied(), |t| t != tree.text(leaf))?;
        return Some((with_terminal_text(tree, leaf, text), true));
    }
    let text = if edits.text {
        let mut chars: Vec<char> = std::str::from_utf8(tree.text(leaf)).ok()?.chars().collect();
        edit_chars(rng, &mut chars);
        chars.into_iter().collect::<String>().into_bytes()
    } else {
        let mut bytes = tree.text(leaf).to_vec();
        edit_bytes(rng, &mut bytes);
        bytes
    };
    Some((with_terminal_text(tree, leaf, &text), false))
}

/// Characters text mutations insert: the bytes of [`INTERESTING`] that are characters
/// on their own, and a few beyond ASCII (two-, three- and four-byte UTF-8, a BOM, a line
/// separator).
const INTERESTING_CHARS: &[char] = &[
    '"',
    '\'',
    '\\',
    '/',
    '{',
    '}',
    '[',
    ']',
    '(',
    ')',
    '<',
    '>',
    ',',
    ';',
    ':',
    '.',
    '-',
    '+',
    'e',
    'E',
    '0',
    '1',
    '2',
    '9',
    'a',
    'z',
    'A',
    'Z',
    ' ',
    '\t',
    '\n',
    '\r',
    '\0',
    '\u{7f}',
    'é',
    'ÿ',
    '\u{2028}',
    '\u{feff}',
    '€',
    '\u{10348}',
    '\u{1f600}',
];

/// [`mutate_leaf`] for targets that take text: changes one *character* of a random
/// terminal (flips a bit of its code point, replaces, deletes or inserts one), so valid
/// UTF-8 stays valid UTF-8. Terminals whose text is not UTF-8 are left alone.
pub fn mutate_leaf_text<R: Rng + ?Sized>(
    grammar: &Grammar,
    tree: &DerivationTree,
    rng: &mut R,
) -> Option<DerivationTree> {
    let edits = LeafEdits {
        text: true,
        encoding: None,
    };
    edit_leaf(grammar, tree, edits, rng).map(|(mutant, _)| mutant)
}

/// One random edit of a terminal's characters (see [`mutate_leaf_text`]).
fn edit_chars<R: Rng + ?Sized>(rng: &mut R, chars: &mut Vec<char>) {
    let pick = |rng: &mut R| INTERESTING_CHARS[below(rng, INTERESTING_CHARS.len() as u32) as usize];
    // A bit of the code point among those it uses (at least the low 8), so ASCII stays
    // mostly ASCII; a flip into the surrogates or beyond U+10FFFF is skipped for a
    // replacement.
    let flip = |rng: &mut R, c: &char| {
        let c = *c as u32;
        let bits = (32 - c.leading_zeros()).max(8);
        char::from_u32(c ^ (1 << below(rng, bits))).unwrap_or_else(|| pick(rng))
    };
    edit_one(rng, chars, pick, flip);
}

/// Which mutations a [`stack`] applied: a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied(u8);

impl Applied {
    const NAMES: [(u8, &'static str); 6] = [
        (1, "regen"),
        (2, "splice"),
        (8, "rec"),
        (32, "rep"),
        (4, "byte"),
        (16, "bit"),
    ];

    /// Whether no mutation applied (the tree is its parent's copy).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether a mutation left the grammar (a terminal's byte changed; a bit flipped
    /// under an encoding is not counted: the input still says what its tree does).
    pub fn left_the_grammar(self) -> bool {
        self.0 & 4 != 0
    }

    /// `regen+splice`, ..., or `copy`.
    pub fn name(self) -> String {
        if self.is_empty() {
            return "copy".to_string();
        }
        Applied::NAMES
            .iter()
            .filter(|(bit, _)| self.0 & bit != 0)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join("+")
    }
}

/// One to three mutations stacked on a copy of `parent`: splice 2/7 (with one of `donors`,
/// within `budget` bytes at any depth: [`splice_donor`]),
/// regenerate 2/7, recursion 1/7, repetition 1/7, a terminal's text 1/7 (not with
/// `valid_only`; as `leaves` says: a byte, a character that keeps the input UTF-8, or
/// another of the texts the encoding allows, a bit flipped). Splicing falls
/// back to regeneration without a donor, recursion and repetition to regeneration on a
/// tree without them. Splicing, recursion and repetition grow the tree to at most `budget`
/// bytes.
pub fn stack<R: Rng + ?Sized>(
    generator: &Generator<'_>,
    parent: &DerivationTree,
    donors: &[&Donor],
    budget: usize,
    valid_only: bool,
    leaves: LeafEdits<'_>,
    rng: &mut R,
) -> (DerivationTree, Applied) {
    let grammar = generator.grammar();
    let mut applied = 0u8;
    // The parent is read, never copied: the first mutation that applies writes the
    // first copy, and a parent no mutation changed is copied once at the end.
    let mut mutant: Option<DerivationTree> = None;
    for _ in 0..1 + below(rng, 3) {
        let tree = mutant.as_ref().unwrap_or(parent);
        let next = match below(rng, if valid_only { 6 } else { 7 }) {
            4 => recurse(grammar, tree, budget, rng).map(|t| (t, 8)),
            5 => repeat(grammar, tree, budget, rng).map(|t| (t, 32)),
            6 => {
                // A tree without terminals stays as it is.
                if let Some((t, allowed)) = edit_leaf(grammar, tree, leaves, rng) {
                    applied |= if allowed { 16 } else { 4 };
                    mutant = Some(t);
                }
                continue;
            }
            c if c < 2 && !donors.is_empty() => {
                let donor = donors[below(rng, donors.len() as u32) as usize];
                splice_donor(generator, tree, donor, budget, rng).map(|t| (t, 2))
            }
            _ => None,
        };
        if let Some((t, bit)) = next.or_else(|| regenerate(generator, tree, rng).map(|t| (t, 1))) {
            mutant = Some(t);
            applied |= bit;
        }
    }
    (mutant.unwrap_or_else(|| parent.clone()), Applied(applied))
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_gen::GenConfig;
    use thicket_grammar::load_spec_text;

    const SPEC: &str = r#"
<start> ::= <list>
<list> ::= "[" <item> ("," <item>)* "]"
<item> ::= <num> | <list>
<num> ::= r"[0-9]{1,3}"
"#;

    fn grammar() -> Grammar {
        load_spec_text("t.fan", SPEC.as_bytes()).unwrap()
    }

    /// A tree is consistent if re-emitting it gives the same bytes and structure, and
    /// every Ref node's child is its rule's body.
    fn check(grammar: &Grammar, tree: &DerivationTree) {
        for node in tree.descendants(tree.root()) {
            if let Expr::Ref(symbol) = grammar.expr(tree.expr(node)) {
                let child = tree.children(node).next().expect("a Ref has a child");
                assert_eq!(tree.expr(child), grammar.rule(*symbol).body);
            }
        }
        let parser = thicket_parse::Parser::new(grammar, Default::default()).unwrap();
        assert!(
            parser.recognize(tree.bytes()).is_ok(),
            "{:?}",
            String::from_utf8_lossy(tree.bytes())
        );
    }

    #[test]
    fn mutants_are_trees_of_the_grammar_and_differ() {
        let grammar = grammar();
        let generator = Generator::new(
            &grammar,
            GenConfig {
                max_depth: 8,
                ..GenConfig::default()
            },
        )
        .unwrap();
        let mut changed = 0;
        for i in 0..200 {
            let mut rng = Generator::rng_for(7, i);
            let (tree, _) = generator.generate_tree(&mut rng);
            let (donor, _) = generator.generate_tree(&mut rng);
            let mutant = regenerate(&generator, &tree, &mut rng).unwrap();
            check(&grammar, &mutant);
            assert!(mutant.depth(&grammar) <= 8);
            changed += usize::from(mutant.bytes() != tree.bytes());
            if let Some(spliced) = splice(&generator, &tree, &donor, &mut rng) {
                check(&grammar, &spliced);
                assert_ne!(spliced.bytes(), tree.bytes());
            }
        }
        assert!(changed > 100, "{changed}");
    }

    #[test]
    fn splicing_from_a_donor_draws_as_splicing_from_its_tree() {
        // A campaign's donors carry their rule nodes grouped; the mutants must be those
        // of the plain splice (campaigns are reproducible from their seed). The plain
        // splice bounds depth, the donor's bytes: both bounds out of reach here.
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let deep = GenConfig {
            max_depth: 1000,
            ..GenConfig::default()
        };
        let unbounded = Generator::new(&grammar, deep).unwrap();
        let mut spliced = 0;
        for i in 0..300 {
            let mut rng = Generator::rng_for(21, i);
            let (tree, _) = generator.generate_tree(&mut rng);
            let (donor_tree, _) = generator.generate_tree(&mut rng);
            let donor = Donor::new(&grammar, donor_tree.clone());
            for node in rule_nodes(&grammar, &donor_tree) {
                let rule = rule_of(&grammar, &donor_tree, node).unwrap();
                assert!(donor.rule_nodes(rule).contains(&node));
            }
            assert_eq!(donor.nodes.len(), rule_nodes(&grammar, &donor_tree).len());
            let (mut a, mut b) = (Generator::rng_for(22, i), Generator::rng_for(22, i));
            let plain = splice(&unbounded, &tree, &donor_tree, &mut a);
            let indexed = splice_donor(&generator, &tree, &donor, usize::MAX, &mut b);
            assert_eq!(
                plain.as_ref().map(|t| t.bytes().to_vec()),
                indexed.as_ref().map(|t| t.bytes().to_vec())
            );
            assert_eq!(below(&mut a, 1000), below(&mut b, 1000), "same draws used");
            spliced += usize::from(plain.is_some());
        }
        assert!(spliced > 100, "{spliced}");
    }

    #[test]
    fn choosing_among_matches_draws_as_choosing_from_their_list() {
        // The same seed must give the same mutants whether candidates are collected or
        // counted (campaigns are reproducible from their seed).
        for i in 0..500u64 {
            let items: Vec<u32> = (0..(i % 37) as u32).collect();
            let keep = |x: u32| x % 3 != (i % 3) as u32;
            let listed: Vec<u32> = items.iter().copied().filter(|&x| keep(x)).collect();
            let (mut a, mut b) = (Generator::rng_for(5, i), Generator::rng_for(5, i));
            assert_eq!(
                choose_where(&mut a, || items.iter().copied(), keep),
                choose(&mut b, &listed)
            );
            assert_eq!(below(&mut a, 1000), below(&mut b, 1000), "same draws used");
        }
    }

    #[test]
    fn the_rule_first_choice_draws_as_grouping_by_rule() {
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        for i in 0..200 {
            let mut rng = Generator::rng_for(13, i);
            let (tree, _) = generator.generate_tree(&mut rng);
            let nodes = rule_nodes(&grammar, &tree);
            let (mut a, mut b) = (Generator::rng_for(17, i), Generator::rng_for(17, i));
            assert_eq!(
                choose_by_rule(&mut a, &grammar, &tree, &nodes),
                choose_grouped(&mut b, &nodes, |n| rule_of(&grammar, &tree, n))
            );
            assert_eq!(below(&mut a, 1000), below(&mut b, 1000), "same draws used");
        }
    }

    #[test]
    fn tree_depth_is_the_most_rule_expansions_on_a_path() {
        // The splice's depth check relies on it; mutants grown by recursion and
        // repetition nest deeper than generation does.
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        for i in 0..100 {
            let mut rng = Generator::rng_for(11, i);
            let (tree, _) = generator.generate_tree(&mut rng);
            let (tree, _) = stack(
                &generator,
                &tree,
                &[],
                600,
                true,
                LeafEdits::default(),
                &mut rng,
            );
            let by_paths = tree
                .descendants(tree.root())
                .map(|n| {
                    let own = matches!(grammar.expr(tree.expr(n)), Expr::Ref(_));
                    tree.depth_above(&grammar, n) + u32::from(own)
                })
                .max()
                .unwrap();
            assert_eq!(tree.depth(&grammar), by_paths);
        }
    }

    #[test]
    fn leaf_mutants_change_one_terminal() {
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        for i in 0..100 {
            let mut rng = Generator::rng_for(3, i);
            let (tree, _) = generator.generate_tree(&mut rng);
            let mutant = mutate_leaf(&grammar, &tree, &mut rng).unwrap();
            assert_eq!(mutant.len(), tree.len(), "same shape");
            let (a, b) = (tree.bytes(), mutant.bytes());
            assert!(a.len().abs_diff(b.len()) <= 1 && a != b || a.len() == b.len());
        }
    }

    #[test]
    fn recursive_mutation_goes_deeper_than_generation_within_the_budget() {
        let grammar = grammar();
        let config = GenConfig {
            max_depth: 8,
            ..GenConfig::default()
        };
        let generator = Generator::new(&grammar, config).unwrap();
        let mut deepest = 0;
        let mut grown = 0;
        for i in 0..200 {
            let (mut tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            let mut rng = Generator::rng_for(6, i);
            for _ in 0..4 {
                if let Some(t) = recurse(&grammar, &tree, 2000, &mut rng) {
                    check(&grammar, &t);
                    assert!(t.bytes().len() <= 2000);
                    assert!(t.bytes().len() > tree.bytes().len());
                    grown += 1;
                    tree = t;
                }
            }
            deepest = deepest.max(tree.depth(&grammar));
        }
        assert!(grown > 100, "{grown}");
        assert!(
            deepest > 8,
            "recursion never exceeded the generation depth: {deepest}"
        );
    }

    #[test]
    fn repetition_mutation_grows_lists_within_the_budget() {
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let (mut grown, mut longest) = (0, 0);
        for i in 0..200 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(8, i));
            let mut rng = Generator::rng_for(9, i);
            if let Some(t) = repeat(&grammar, &tree, 3000, &mut rng) {
                check(&grammar, &t);
                assert!(t.bytes().len() <= 3000);
                assert!(t.bytes().len() > tree.bytes().len());
                let items = t.bytes().iter().filter(|&&b| b == b',').count();
                longest = longest.max(items);
                grown += 1;
            }
        }
        assert!(grown > 20, "{grown}");
        assert!(longest > 100, "no list grew past 100 items: {longest}");
    }

    #[test]
    fn recursive_nodes_are_those_with_a_descendant_of_their_rule() {
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let mut found = 0;
        for i in 0..100 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(11, i));
            // By definition, walking each node's subtree.
            let expected: Vec<NodeId> = rule_nodes(&grammar, &tree)
                .into_iter()
                .filter(|&n| {
                    let rule = rule_of(&grammar, &tree, n);
                    tree.descendants(n)
                        .any(|d| d != n && rule_of(&grammar, &tree, d) == rule)
                })
                .collect();
            assert_eq!(recursive_nodes(&grammar, &tree), expected);
            found += expected.len();
        }
        assert!(found > 50, "{found}");
    }

    #[test]
    fn mutation_points_are_drawn_rule_first() {
        // A list of 60 numbers: 60 <num> nodes, one <list> (and <item>s). Uniformly over
        // rule nodes the list would be drawn about once in 121 times; rule first, once in 3.
        let grammar = grammar();
        let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
        let text = format!("[{}]", vec!["7"; 60].join(","));
        let tree = parser.parse(text.as_bytes()).unwrap().tree();
        let nodes = rule_nodes(&grammar, &tree);
        let list = grammar.symbol("list").unwrap();
        let mut rng = Generator::rng_for(1, 1);
        let lists = (0..3000)
            .filter(|_| {
                let n = choose_by_rule(&mut rng, &grammar, &tree, &nodes).unwrap();
                rule_of(&grammar, &tree, n) == Some(list)
            })
            .count();
        assert!((800..1200).contains(&lists), "{lists} of 3000");
        assert_eq!(choose_by_rule(&mut rng, &grammar, &tree, &[]), None);
    }

    #[test]
    fn log_uniform_counts_cover_small_and_large() {
        let mut rng = Generator::rng_for(1, 1);
        let draws: Vec<u32> = (0..2000).map(|_| log_uniform(&mut rng, 1024)).collect();
        assert!(draws.iter().all(|&d| (1..=1024).contains(&d)));
        assert!(draws.iter().filter(|&&d| d <= 8).count() > 500);
        assert!(draws.iter().filter(|&&d| d > 256).count() > 100);
        assert_eq!(log_uniform(&mut rng, 1), 1);
    }

    #[test]
    fn text_mutations_keep_text_valid_byte_mutations_do_not() {
        let grammar = load_spec_text(
            "t.fan",
            br#"<start> ::= r"[a-z\u00e9\u20ac]{1,8}" (" " <start>)?"#,
        )
        .unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let (mut invalid_bytes, mut invalid_text) = (0, 0);
        for i in 0..2000 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(3, i));
            let mut rng = Generator::rng_for(4, i);
            let t = mutate_leaf_text(&grammar, &tree, &mut rng).unwrap();
            invalid_text += usize::from(std::str::from_utf8(t.bytes()).is_err());
            let b = mutate_leaf(&grammar, &tree, &mut rng).unwrap();
            invalid_bytes += usize::from(std::str::from_utf8(b.bytes()).is_err());
        }
        assert_eq!(invalid_text, 0);
        assert!(invalid_bytes > 100, "{invalid_bytes}");
    }

    /// Bits as an encoding sees them: the terminals `0` and `1` may take only those
    /// texts.
    struct Bits(Vec<ExprId>);

    impl Encoding for Bits {
        fn encode(&self, tree: &DerivationTree) -> Result<Vec<u8>, String> {
            Ok(tree.bytes().to_vec())
        }

        fn decode(&self, _: &[u8]) -> Option<DerivationTree> {
            None
        }

        fn leaf_texts(&self, expr: ExprId) -> Option<&'static [&'static [u8]]> {
            const BITS: &[&[u8]] = &[b"0", b"1"];
            self.0.contains(&expr).then_some(BITS)
        }
    }

    #[test]
    fn leaf_edits_under_an_encoding_flip_bits_and_edit_other_terminals() {
        let grammar = load_spec_text(
            "t.fan",
            b"<start> ::= \"F\" <bit>{8} \"!\"\n<bit> ::= \"0\" | \"1\"\n",
        )
        .unwrap();
        let bits = Bits(
            grammar
                .expr_ids()
                .filter(|&e| matches!(grammar.expr(e), Expr::Literal(t) if matches!(&t[..], b"0" | b"1")))
                .collect(),
        );
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let edits = LeafEdits {
            text: false,
            encoding: Some(&bits),
        };
        let (mut flipped, mut edited) = (0, 0);
        for i in 0..300 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            let mut rng = Generator::rng_for(6, i);
            let (mutant, allowed) = edit_leaf(&grammar, &tree, edits, &mut rng).unwrap();
            let (a, b) = (tree.bytes(), mutant.bytes());
            let bits_of = |t: &DerivationTree| -> Vec<u8> {
                t.descendants(t.root())
                    .filter(|&n| bits.0.contains(&t.expr(n)))
                    .flat_map(|n| t.text(n).to_vec())
                    .collect()
            };
            if allowed {
                // One bit flipped, the rest as it was.
                assert_eq!(a.len(), b.len());
                let differ: Vec<usize> = (0..a.len()).filter(|&k| a[k] != b[k]).collect();
                assert_eq!(differ.len(), 1, "{a:?} {b:?}");
                assert!((1..9).contains(&differ[0]) && b"01".contains(&b[differ[0]]));
                flipped += 1;
            } else {
                // A literal around the bits got a byte edit; the bits are as they were.
                assert_eq!(bits_of(&tree), bits_of(&mutant));
                assert_ne!(a, b);
                edited += 1;
            }
        }
        assert!(flipped > 200 && edited > 20, "{flipped} {edited}");
    }

    #[test]
    fn mutation_is_deterministic() {
        let grammar = grammar();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(1, 1));
        let a = regenerate(&generator, &tree, &mut Generator::rng_for(1, 2)).unwrap();
        let b = regenerate(&generator, &tree, &mut Generator::rng_for(1, 2)).unwrap();
        assert_eq!(a.bytes(), b.bytes());
    }
}
