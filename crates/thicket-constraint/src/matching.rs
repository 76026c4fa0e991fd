//! Match expressions: `"<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>"`.
//!
//! ISLa parses a match expression with a grammar in which every nonterminal may also
//! stand for itself, and matches the resulting pattern tree against a subtree: the
//! pattern must be the top of the subtree, its nonterminal leaves matching whole
//! subtrees of that type. Here the pattern is matched against the tree directly, which
//! is equivalent and needs no parser: walking down from the subtree's root, every rule
//! node is either *cut* (it stands for a placeholder `<a>` or binder `{<a> x}` of its
//! type at that point of the pattern) or *expanded* into its children, and terminals
//! must spell the pattern's text. Every way to do so is a match (ambiguous patterns give
//! several), which is ISLa's "keep all parses".
//!
//! Decisions where ISLa leaves room:
//! - In the text of a match expression, `<name>` is a placeholder if `name` is a rule of
//!   the grammar and literal text otherwise (so `"<{<id> a}>"` needs no escaping).
//! - Optional parts `[...]` may hold text and placeholders but no binders: a variable
//!   that is bound in only some variants would be unbound in the others.
//! - At most [`MAX_OPTIONALS`] optional parts (each doubles the variants).

use crate::formula::VarId;
use crate::view::TreeView;
use thicket_grammar::{Expr, Grammar, Span, SymbolId};
use thicket_tree::NodeId;

/// Most optional parts in one match expression.
pub const MAX_OPTIONALS: usize = 8;

/// Most matches kept for one subtree (an ambiguous pattern on a large subtree could
/// otherwise have exponentially many).
const MAX_MATCHES: usize = 256;

/// One element of a match expression variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// A byte of literal text.
    Byte(u8),
    /// A subtree of this symbol, optionally bound to a variable.
    Slot(SymbolId, Option<VarId>),
}

/// A compiled match expression: one atom sequence per choice of optional parts.
#[derive(Clone, Debug)]
pub struct MatchExpr {
    /// The variants, all optional parts present first.
    pub variants: Vec<Vec<Atom>>,
    /// Per variant, `next_slot[i]`: the first placeholder at or after atom `i` (computed
    /// once here, read at every node the matcher visits).
    next_slots: Vec<Vec<usize>>,
    /// The variables the expression binds, in order of appearance.
    pub binders: Vec<VarId>,
    /// Where it is written.
    pub span: Span,
    /// The number [`crate::Checker::new`] gave its shape (see [`MatchExpr::cache_key`]).
    pub(crate) shape: Option<u32>,
}

/// A piece of a match expression as written, before variants are formed.
#[derive(Clone, Debug)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// `<a>`.
    Placeholder(SymbolId),
    /// `{<a> x}`, with the variable's name and the span of the binder.
    Binder(SymbolId, String, Span),
    /// `[...]`.
    Optional(Vec<Piece>),
}

/// A binding of variables to subtrees produced by one match.
pub type Bindings = Vec<(VarId, NodeId)>;

impl MatchExpr {
    /// Forms the variants of `pieces`, whose binders have been given `vars` in order.
    pub fn new(pieces: &[Piece], vars: &[VarId], span: Span) -> MatchExpr {
        let optionals = pieces
            .iter()
            .filter(|p| matches!(p, Piece::Optional(_)))
            .count();
        let mut variants = Vec::with_capacity(1 << optionals);
        for mask in 0..1usize << optionals {
            // Bit i set = optional i left out; mask 0 keeps everything.
            let mut atoms = Vec::new();
            let mut optional_index = 0;
            let mut binder_index = 0;
            push_atoms(
                pieces,
                mask,
                &mut optional_index,
                &mut binder_index,
                vars,
                &mut atoms,
            );
            variants.push(atoms);
        }
        MatchExpr {
            next_slots: variants.iter().map(|v| next_slots(v)).collect(),
            variants,
            binders: vars.to_vec(),
            span,
            shape: None,
        }
    }

    /// The variants with each variable replaced by its position among the binders:
    /// two expressions with the same shape match the same subtrees the same way.
    pub(crate) fn shape(&self) -> Vec<Vec<Atom>> {
        let position = |v: &VarId| {
            let k = self.binders.iter().position(|b| b == v);
            VarId(k.expect("a binder of the expression") as u32)
        };
        self.variants
            .iter()
            .map(|atoms| {
                atoms
                    .iter()
                    .map(|a| match a {
                        Atom::Slot(s, v) => Atom::Slot(*s, v.as_ref().map(position)),
                        Atom::Byte(b) => Atom::Byte(*b),
                    })
                    .collect()
            })
            .collect()
    }

    /// The key of its matches in a [`crate::SubtreeCache`]: the number
    /// [`crate::Checker::new`] gave its shape, so that expressions written alike in
    /// several constraints (ISLa's XML constraints repeat theirs) share their matches;
    /// else its address, with the top bit set so as never to meet a number. A match
    /// binds the binders in order ([`MatchExpr::binders`]), whatever they are called.
    pub fn cache_key(&self) -> usize {
        match self.shape {
            Some(id) => id as usize,
            None => self as *const MatchExpr as usize | 1 << (usize::BITS - 1),
        }
    }

    /// Every match of the expression against the subtree at `node`.
    pub fn matches(&self, view: &TreeView<'_>, grammar: &Grammar, node: NodeId) -> Vec<Bindings> {
        let mut out: Vec<Bindings> = Vec::new();
        // One bindings buffer for the whole search: a step pushes its binding before
        // going on and pops it after, so matching allocates only for the results.
        let mut bound = Bindings::new();
        let mut ends = 0usize;
        for (atoms, next_slot) in self.variants.iter().zip(&self.next_slots) {
            let matcher = Matcher {
                view,
                grammar,
                atoms,
                next_slot,
                depth: std::cell::Cell::new(0),
            };
            let go_on = matcher.match_at(node, 0, &mut bound, &mut |end, bound| {
                // Bounds the search on ambiguous patterns as well as the results.
                ends += 1;
                if end == atoms.len() && !out.contains(bound) {
                    out.push(bound.clone());
                }
                out.len() < MAX_MATCHES && ends < MAX_ENDS
            });
            if !go_on {
                break;
            }
        }
        out
    }
}

/// Most ways to reach the end of a subtree (complete or not) tried in one call of
/// [`MatchExpr::matches`].
const MAX_ENDS: usize = MAX_MATCHES * 64;

/// Deepest a match looks into a subtree below where it started: the search recurses
/// (a continuation per level), and a left-nested list (XML's `<inner-xml-tree>` of
/// thousands of elements) is as deep as it is long. Matches need the pattern's text
/// around a placeholder, which a node this deep rarely has; like the bounds above,
/// what lies deeper is not searched.
const MAX_DEPTH: u32 = 1_000;

fn push_atoms(
    pieces: &[Piece],
    mask: usize,
    optional_index: &mut usize,
    binder_index: &mut usize,
    vars: &[VarId],
    atoms: &mut Vec<Atom>,
) {
    for piece in pieces {
        match piece {
            Piece::Text(text) => atoms.extend(text.bytes().map(Atom::Byte)),
            Piece::Placeholder(symbol) => atoms.push(Atom::Slot(*symbol, None)),
            Piece::Binder(symbol, _, _) => {
                atoms.push(Atom::Slot(*symbol, vars.get(*binder_index).copied()));
                *binder_index += 1;
            }
            Piece::Optional(inner) => {
                let keep = mask & (1 << *optional_index) == 0;
                *optional_index += 1;
                if keep {
                    push_atoms(inner, 0, &mut 0, binder_index, vars, atoms);
                }
            }
        }
    }
}

/// `next[i]` = index of the first slot at or after `i` (`atoms.len()` if none).
fn next_slots(atoms: &[Atom]) -> Vec<usize> {
    let mut next = vec![atoms.len(); atoms.len() + 1];
    for i in (0..atoms.len()).rev() {
        next[i] = if matches!(atoms[i], Atom::Slot(..)) {
            i
        } else {
            next[i + 1]
        };
    }
    next
}

struct Matcher<'a, 't> {
    view: &'a TreeView<'t>,
    grammar: &'a Grammar,
    atoms: &'a [Atom],
    next_slot: &'a [usize],
    /// How deep below the start the search is (see `MAX_DEPTH`).
    depth: std::cell::Cell<u32>,
}

/// What a match step calls with the pattern position after the subtree and the
/// bindings so far; returns false to stop the search.
type Then<'k> = dyn FnMut(usize, &mut Bindings) -> bool + 'k;

impl Matcher<'_, '_> {
    /// Calls `then` for every way to match the subtree at `node` starting at pattern
    /// position `pos`, with the position after it and `bound` extended by the bindings
    /// made (restored on return). Returns false if `then` stopped the search.
    fn match_at(
        &self,
        node: NodeId,
        pos: usize,
        bound: &mut Bindings,
        then: &mut Then<'_>,
    ) -> bool {
        let tree = self.view.tree();
        let atom = self.atoms.get(pos);
        // The text is needed only where the pattern has no placeholder here (most nodes
        // a match visits are cut or expanded at one).
        if !matches!(atom, Some(Atom::Slot(..))) {
            let text = tree.text(node);
            match (text.first(), atom) {
                // The pattern is used up: only an empty subtree fits.
                (Some(_), None) => return true,
                // The first byte of the subtree is the first thing it consumes: if the
                // pattern has a literal byte there, it must be that byte.
                (Some(&first), Some(Atom::Byte(b))) if first != *b => return true,
                _ => {}
            }
            // No placeholder in reach (one right after the text could still match an
            // empty subtree at the end): the subtree can only match as literal text.
            if self.next_slot[pos] > pos + text.len() {
                return !self.spells(pos, text) || then(pos + text.len(), bound);
            }
        }
        if let (Some(symbol), Some(Atom::Slot(want, var))) = (self.view.symbol(node), atom)
            && symbol == *want
        {
            if let Some(v) = var {
                bound.push((*v, node));
            }
            let go_on = then(pos + 1, bound);
            if var.is_some() {
                bound.pop();
            }
            if !go_on {
                return false;
            }
        }
        match self.grammar.expr(tree.expr(node)) {
            Expr::Literal(_) | Expr::Regex(_) => {
                let text = tree.text(node);
                !self.spells(pos, text) || then(pos + text.len(), bound)
            }
            _ if self.depth.get() >= MAX_DEPTH => true,
            _ => {
                let end = tree.subtree_end(node);
                // Children are the nodes after `node` in preorder, each followed by its
                // next sibling at its subtree's end.
                self.depth.set(self.depth.get() + 1);
                let go_on = self.match_children(node.index() + 1, end, pos, bound, then);
                self.depth.set(self.depth.get() - 1);
                go_on
            }
        }
    }

    /// Matches the siblings from node index `child` up to `end` in sequence from
    /// pattern position `pos`, calling `then` after the last.
    fn match_children(
        &self,
        child: usize,
        end: usize,
        pos: usize,
        bound: &mut Bindings,
        then: &mut Then<'_>,
    ) -> bool {
        if child >= end {
            return then(pos, bound);
        }
        let node = NodeId::from_index(child);
        let next = self.view.tree().subtree_end(node);
        if next >= end {
            // The last (often the only) child: no sequencing left.
            return self.match_at(node, pos, bound, then);
        }
        self.match_at(node, pos, bound, &mut |at, bound| {
            self.match_children(next, end, at, bound, then)
        })
    }

    /// Whether the pattern spells `text` as literal bytes from `pos`.
    fn spells(&self, pos: usize, text: &[u8]) -> bool {
        self.atoms.len() >= pos + text.len()
            && text
                .iter()
                .zip(&self.atoms[pos..])
                .all(|(b, a)| *a == Atom::Byte(*b))
    }
}
