//! Subtrees that come from elsewhere than the grammar's generator: Fandango's `:=`
//! generators (`<name> ::= <first> <last> := fake.name()`), whose value is computed by a
//! function and read back as the rule (as Fandango does: "the output is parsed
//! according to the symbol's rules"), so that constraints apply to its parts.
//!
//! The solver applies a [`SubtreeSource`] to each tree it starts from, before any
//! repair: every node of one of the source's rules that no other such node contains is
//! replaced by the parse of the text the source gives for it. A subtree inside a
//! generated one keeps what the parse gave it (Fandango does not call a generator for
//! the parts of another generator's value either). Repairs may later rewrite a
//! generated subtree like any other: the result is still in the rule's language.

use crate::Solver;
use thicket_grammar::{Expr, SymbolId};
use thicket_tree::{DerivationTree, NodeId};

/// Where the subtrees of some rules come from.
pub trait SubtreeSource: Send + Sync {
    /// The rules whose subtrees this source makes.
    fn rules(&self) -> &[SymbolId];

    /// The text of a new subtree for `node`, a node of `rule` (one of
    /// [`SubtreeSource::rules`]) in `tree`. `call` numbers the calls made for one
    /// solution, in preorder of the nodes, and `seed` is drawn from the solution's random
    /// stream: together they make a source's own randomness reproducible from the run's
    /// seed.
    fn text(
        &self,
        tree: &DerivationTree,
        node: NodeId,
        rule: SymbolId,
        seed: u64,
        call: u64,
    ) -> Result<Vec<u8>, String>;
}

/// Why a tree could not be completed from its sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// The rule whose subtree failed.
    pub rule: String,
    /// What went wrong: the source's error, or the text the rule does not derive.
    pub message: String,
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the generator of {}: {}", self.rule, self.message)
    }
}

/// `tree` with its outermost nodes of the source's rules replaced by the parses of
/// their generated texts.
pub(crate) fn apply(
    solver: &Solver<'_>,
    source: &dyn SubtreeSource,
    tree: DerivationTree,
    seed: u64,
) -> Result<DerivationTree, SourceError> {
    let grammar = solver.grammar();
    let rules = source.rules();
    let of_rule = |node: NodeId| match grammar.expr(tree.expr(node)) {
        Expr::Ref(s) if rules.contains(s) => Some(*s),
        _ => None,
    };
    // Outermost nodes only, in preorder: skip the subtree of each one found.
    let mut holes: Vec<(NodeId, SymbolId)> = Vec::new();
    let mut at = tree.root().index();
    while at < tree.len() {
        let node = NodeId::from_index(at);
        match of_rule(node) {
            Some(symbol) => {
                holes.push((node, symbol));
                at = tree.subtree_end(node);
            }
            None => at += 1,
        }
    }
    if holes.is_empty() {
        return Ok(tree);
    }
    let mut parts = Vec::with_capacity(holes.len());
    for (call, &(node, symbol)) in holes.iter().enumerate() {
        let fail = |message: String| SourceError {
            rule: grammar.display_symbol(symbol),
            message,
        };
        let text = source
            .text(&tree, node, symbol, seed, call as u64)
            .map_err(fail)?;
        let part = crate::repair::parse_as(solver, symbol, &text).ok_or_else(|| {
            fail(format!(
                "its value {:?} is not in the language of {}",
                String::from_utf8_lossy(&text),
                grammar.display_symbol(symbol)
            ))
        })?;
        parts.push(part);
    }
    let nodes: Vec<NodeId> = holes.iter().map(|&(n, _)| n).collect();
    Ok(tree.replace_subtrees(grammar, &nodes, &mut |i, sink| {
        let part = &parts[i];
        part.emit_subtree(grammar, part.root(), tree.expr(nodes[i]), sink)
    }))
}
