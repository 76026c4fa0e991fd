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
//!
//! A source may take arguments: fresh subtrees of other rules (Fandango's
//! `<item> ::= ... := encode(<data>)`), made for each call as Fandango makes them. An
//! argument's rule gets its own source's value when that source's arguments name no
//! rule on the way down to it (the argument's rule, the rule it is an argument of, and
//! that node's ancestors), and is plain random generation otherwise: so
//! `<number> := strip(<card>)` inside `<card> := add_digit(<number>)` draws `<number>`
//! from the grammar rather than looping.

use crate::Solver;
use thicket_grammar::{Expr, Grammar, SymbolId};
use thicket_tree::{DerivationTree, NodeId, TreeBuilder};

/// Where the subtrees of some rules come from.
pub trait SubtreeSource: Send + Sync {
    /// The rules whose subtrees this source makes.
    fn rules(&self) -> &[SymbolId];

    /// The rules of the arguments the source of `rule` takes, in order (none unless a
    /// source says so).
    fn params(&self, _rule: SymbolId) -> &[SymbolId] {
        &[]
    }

    /// The text of a new subtree for the call's node.
    fn text(&self, call: &SourceCall<'_>) -> Result<Vec<u8>, String>;

    /// The texts for several calls, in order: the generated nodes of one tree, asked
    /// at once. A source that can answer them together (in one round trip to an
    /// interpreter) overrides this; the results must be what [`SubtreeSource::text`]
    /// gives for each call.
    fn texts(&self, calls: &[SourceCall<'_>]) -> Vec<Result<Vec<u8>, String>> {
        calls.iter().map(|call| self.text(call)).collect()
    }
}

/// What a source is asked to make a text for.
pub struct SourceCall<'a> {
    /// The grammar of `tree` and the arguments.
    pub grammar: &'a Grammar,
    /// The tree the new subtree goes into (for an argument, a tree of its own).
    pub tree: &'a DerivationTree,
    /// The node to replace, of `rule`.
    pub node: NodeId,
    /// One of [`SubtreeSource::rules`].
    pub rule: SymbolId,
    /// The arguments: one tree per rule of [`SubtreeSource::params`], each rooted at a
    /// node of that rule.
    pub args: &'a [DerivationTree],
    /// Drawn from the solution's random stream.
    pub seed: u64,
    /// Numbers the calls made for one solution (arguments first, then in preorder of
    /// the nodes): with `seed` it makes a source's own randomness reproducible from
    /// the run's seed.
    pub call: u64,
}

/// How deeply arguments may nest (an argument whose source takes arguments...), a
/// guard against sources that name each other in a ring wider than the path rule
/// catches.
const MAX_ARGUMENT_NESTING: usize = 8;

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
    // Every hole's arguments and call number first (numbered as if each hole's call
    // came right after its arguments), then the texts of all holes in one go.
    let mut made = Vec::with_capacity(holes.len());
    let mut calls = 0u64;
    for &(node, symbol) in &holes {
        // The rules from the root down to the node, the node's own last.
        let mut path: Vec<SymbolId> = tree
            .path_to(node)
            .into_iter()
            .filter_map(|n| match grammar.expr(tree.expr(n)) {
                Expr::Ref(s) => Some(*s),
                _ => None,
            })
            .collect();
        let args = arguments(solver, source, symbol, &mut path, seed, &mut calls)?;
        made.push((args, calls));
        calls += 1;
    }
    let requests: Vec<SourceCall<'_>> = holes
        .iter()
        .zip(&made)
        .map(|(&(node, rule), (args, call))| SourceCall {
            grammar,
            tree: &tree,
            node,
            rule,
            args,
            seed,
            call: *call,
        })
        .collect();
    let texts = source.texts(&requests);
    if texts.len() != holes.len() {
        return Err(SourceError {
            rule: grammar.display_symbol(holes[0].1),
            message: format!(
                "the source gave {} texts for {} calls",
                texts.len(),
                holes.len()
            ),
        });
    }
    let mut parts = Vec::with_capacity(holes.len());
    for (&(_, symbol), text) in holes.iter().zip(texts) {
        parts.push(parsed(solver, symbol, text)?);
    }
    let nodes: Vec<NodeId> = holes.iter().map(|&(n, _)| n).collect();
    Ok(tree.replace_subtrees(grammar, &nodes, &mut |i, sink| {
        let part = &parts[i];
        part.emit_subtree(grammar, part.root(), tree.expr(nodes[i]), sink)
    }))
}

/// The parse of the source's text for `node` (of `symbol`, the last rule of `path`)
/// in `tree`, with its arguments made first.
#[allow(clippy::too_many_arguments)]
fn sourced(
    solver: &Solver<'_>,
    source: &dyn SubtreeSource,
    tree: &DerivationTree,
    node: NodeId,
    symbol: SymbolId,
    path: &mut Vec<SymbolId>,
    seed: u64,
    calls: &mut u64,
) -> Result<DerivationTree, SourceError> {
    let grammar = solver.grammar();
    let args = arguments(solver, source, symbol, path, seed, calls)?;
    let call = SourceCall {
        grammar,
        tree,
        node,
        rule: symbol,
        args: &args,
        seed,
        call: *calls,
    };
    *calls += 1;
    parsed(solver, symbol, source.text(&call))
}

/// The arguments of `symbol`'s source (the last rule of `path`), made in order.
fn arguments(
    solver: &Solver<'_>,
    source: &dyn SubtreeSource,
    symbol: SymbolId,
    path: &mut Vec<SymbolId>,
    seed: u64,
    calls: &mut u64,
) -> Result<Vec<DerivationTree>, SourceError> {
    source
        .params(symbol)
        .iter()
        .map(|&param| argument(solver, source, param, path, seed, calls))
        .collect()
}

/// The parse of a source's text (or its error) as `symbol`.
fn parsed(
    solver: &Solver<'_>,
    symbol: SymbolId,
    text: Result<Vec<u8>, String>,
) -> Result<DerivationTree, SourceError> {
    let grammar = solver.grammar();
    let fail = |message: String| SourceError {
        rule: grammar.display_symbol(symbol),
        message,
    };
    let text = text.map_err(fail)?;
    crate::repair::parse_as(solver, symbol, &text).ok_or_else(|| {
        fail(format!(
            "its value {:?} is not in the language of {}",
            String::from_utf8_lossy(&text),
            grammar.display_symbol(symbol)
        ))
    })
}

/// A fresh subtree of `symbol` as an argument of the last rule of `path`: from its
/// own source if that takes no rule of `path` (and `path` is not too deep), else
/// generated at random.
fn argument(
    solver: &Solver<'_>,
    source: &dyn SubtreeSource,
    symbol: SymbolId,
    path: &mut Vec<SymbolId>,
    seed: u64,
    calls: &mut u64,
) -> Result<DerivationTree, SourceError> {
    let grammar = solver.grammar();
    let Some(reference) = grammar.reference(symbol) else {
        return Err(SourceError {
            rule: grammar.display_symbol(symbol),
            message: "the rule is an argument of a generator but the grammar never refers to it"
                .into(),
        });
    };
    // A stream of its own, apart from the one the solution's trees are drawn from.
    let mut rng = Solver::rng_for(seed ^ 0x0a76_0a76, *calls);
    *calls += 1;
    let mut builder = TreeBuilder::new();
    solver
        .generator()
        .expand(reference, 1, &mut rng, &mut builder);
    let fresh = builder.finish();
    path.push(symbol);
    let own_source = source.rules().contains(&symbol)
        && path.len() <= MAX_ARGUMENT_NESTING
        && source.params(symbol).iter().all(|p| !path.contains(p));
    let made = if own_source {
        sourced(
            solver,
            source,
            &fresh,
            fresh.root(),
            symbol,
            path,
            seed,
            calls,
        )
    } else {
        Ok(fresh)
    };
    path.pop();
    made
}
