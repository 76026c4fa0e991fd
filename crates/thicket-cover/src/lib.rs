//! # thicket-cover
//!
//! k-path coverage (§3, Def. 3.1–3.2 of Havrikov, Kampmann and Zeller's journal version
//! of "Systematically Covering Input Structure", ASE 2019): a *k-path* is a chain of
//! k symbolic nodes of the grammar graph, each inside the right-hand side of the rule
//! the one before it references; an input covers the k-paths its derivation tree
//! contains. This crate counts and lists the k-paths of a grammar and measures which
//! ones a set of trees covers.
//!
//! Decisions (each tested):
//! - **Symbolic nodes** are the occurrences of references, literals and regex terminals
//!   in the rules' right-hand sides. The start rule itself has no node (the journal
//!   version's rooting): the root of the graph is the start rule's right-hand side, so
//!   for the paper's expression grammar `Expr := AddExpr` the first node is `AddExpr₀`,
//!   and the counts for k = 1..5 are 39, 125, 523, 2331, 10245.
//! - **Successors** of a reference to rule X are the symbolic nodes of X's right-hand
//!   side (reached through alternatives, groups and quantifiers); terminals have none.
//!   Paths are walks, so cycles through recursive rules count (`AddExpr₅ → AddExpr₅`).
//! - **Only nodes reachable from the start rule** belong to the graph.
//! - In a **tree**, the k-paths are the chains of k symbolic tree nodes, each the nearest
//!   symbolic ancestor of the next (the tree's root, the start rule, excluded).

#![warn(missing_docs)]

mod pattern;
mod produce;
mod summary;

pub use pattern::PatternRenderer;
pub use produce::{
    FINISH_TRIES, Finish, KPathProduction, PathSteering, SteeredTo, Stop, cover_k_paths,
    cover_k_paths_until, k_path_stream, k_path_stream_until,
};
pub use summary::{GenSummary, SUMMARY_K};

use rustc_hash::FxHashSet;
use thicket_grammar::{Expr, ExprId, Grammar};
use thicket_tree::DerivationTree;

/// A k-path: the expression ids of its symbolic nodes, outermost first.
pub type KPath = Box<[u32]>;

/// The symbolic nodes of a grammar and who follows whom.
#[derive(Clone, Debug)]
pub struct KPathGraph {
    /// Symbolic nodes reachable from the start rule, in id order.
    nodes: Vec<u32>,
    /// Whether an expression is one of `nodes`.
    is_node: Vec<bool>,
    /// Successors of each expression (empty for non-nodes and terminals).
    succ: Vec<Vec<u32>>,
}

impl KPathGraph {
    /// The graph of a grammar.
    pub fn new(grammar: &Grammar) -> KPathGraph {
        let n = grammar.expr_count();
        // The symbolic nodes of each rule's right-hand side (references are leaves of
        // the right-hand side's expression tree, so a walk stops at them).
        let mut rule_nodes: Vec<Vec<u32>> = vec![Vec::new(); grammar.rules().len()];
        for symbol in grammar.symbols() {
            let mut stack = vec![grammar.rule(symbol).body];
            while let Some(e) = stack.pop() {
                let expr = grammar.expr(e);
                if expr.is_symbolic() {
                    rule_nodes[symbol.index()].push(e.index() as u32);
                } else {
                    stack.extend(expr.children().iter().rev());
                }
            }
            rule_nodes[symbol.index()].sort_unstable();
        }
        let mut succ = vec![Vec::new(); n];
        for id in grammar.expr_ids() {
            if let Expr::Ref(s) = grammar.expr(id) {
                succ[id.index()] = rule_nodes[s.index()].clone();
            }
        }
        // Reachable from the start rule's right-hand side.
        let mut is_node = vec![false; n];
        let mut stack: Vec<u32> = rule_nodes[grammar.start().index()].clone();
        while let Some(x) = stack.pop() {
            if !std::mem::replace(&mut is_node[x as usize], true) {
                stack.extend(&succ[x as usize]);
            }
        }
        let nodes = (0..n as u32).filter(|&x| is_node[x as usize]).collect();
        KPathGraph {
            nodes,
            is_node,
            succ,
        }
    }

    /// The symbolic nodes (the 1-paths).
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// The successors of a node.
    pub fn successors(&self, node: u32) -> &[u32] {
        &self.succ[node as usize]
    }

    /// Whether an expression is a symbolic node of the graph.
    pub fn is_node(&self, expr: ExprId) -> bool {
        self.is_node.get(expr.index()).copied().unwrap_or(false)
    }

    /// Number of k-paths, by dynamic programming over the walks (no enumeration);
    /// saturates at `u128::MAX`.
    pub fn count(&self, k: usize) -> u128 {
        if k == 0 {
            return 0;
        }
        // ways[x]: walks of the current length that start at x.
        let mut ways: Vec<u128> = self.is_node.iter().map(|&b| u128::from(b)).collect();
        for _ in 1..k {
            ways = (0..ways.len())
                .map(|x| {
                    if !self.is_node[x] {
                        return 0;
                    }
                    self.succ[x]
                        .iter()
                        .fold(0u128, |acc, &s| acc.saturating_add(ways[s as usize]))
                })
                .collect();
        }
        ways.iter().fold(0u128, |acc, &w| acc.saturating_add(w))
    }

    /// Calls `visit` with every k-path (depth-first, in node order) until it returns
    /// `false`.
    pub fn for_each_path(&self, k: usize, mut visit: impl FnMut(&[u32]) -> bool) {
        if k == 0 {
            return;
        }
        let mut path: Vec<u32> = Vec::with_capacity(k);
        // Explicit stack of (depth, next successor index) to walk without recursion.
        for &first in &self.nodes {
            path.clear();
            path.push(first);
            let mut cursor: Vec<usize> = vec![0];
            loop {
                if path.len() == k {
                    if !visit(&path) {
                        return;
                    }
                    path.pop();
                    cursor.pop();
                    if path.is_empty() {
                        break;
                    }
                    continue;
                }
                let last = *path.last().expect("non-empty");
                let i = cursor.last_mut().expect("aligned with path");
                match self.succ[last as usize].get(*i) {
                    Some(&next) => {
                        *i += 1;
                        path.push(next);
                        cursor.push(0);
                    }
                    None => {
                        path.pop();
                        cursor.pop();
                        if path.is_empty() {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// A k-path in spec syntax with occurrence numbers: `<AddExpr>#3 -> "+"#7`.
    pub fn display(&self, grammar: &Grammar, path: &[u32]) -> String {
        path.iter()
            .map(|&x| {
                format!(
                    "{}#{x}",
                    grammar.display_expr(ExprId::from_index(x as usize))
                )
            })
            .collect::<Vec<_>>()
            .join(" -> ")
    }
}

/// The k-paths (for every length 1..=K) a set of trees covers.
#[derive(Clone, Debug)]
pub struct Coverage {
    max_k: usize,
    /// `covered[k - 1]`: the covered k-paths.
    covered: Vec<FxHashSet<KPath>>,
}

impl Coverage {
    /// Empty coverage for path lengths 1..=`max_k`.
    pub fn new(max_k: usize) -> Coverage {
        Coverage {
            max_k,
            covered: vec![FxHashSet::default(); max_k],
        }
    }

    /// The longest path length measured.
    pub fn max_k(&self) -> usize {
        self.max_k
    }

    /// Adds the k-paths of a tree; returns, per length, how many were new.
    pub fn add_tree(&mut self, graph: &KPathGraph, tree: &DerivationTree) -> Vec<usize> {
        let mut new = vec![0; self.max_k];
        for_each_tree_path(graph, tree, self.max_k, |path| {
            // Most paths of a tree are covered already: look them up before boxing one.
            let covered = &mut self.covered[path.len() - 1];
            if !covered.contains(path) {
                covered.insert(path.into());
                new[path.len() - 1] += 1;
            }
        });
        new
    }

    /// Adds k-paths given directly (e.g. those of every parse of an ambiguous input);
    /// longer ones are ignored. Returns, per length, how many were new.
    pub fn add_paths(&mut self, paths: impl IntoIterator<Item = KPath>) -> Vec<usize> {
        let mut new = vec![0; self.max_k];
        for path in paths {
            let len = path.len();
            if (1..=self.max_k).contains(&len) && self.covered[len - 1].insert(path) {
                new[len - 1] += 1;
            }
        }
        new
    }

    /// Adds everything another coverage has.
    pub fn merge(&mut self, other: &Coverage) {
        for (mine, theirs) in self.covered.iter_mut().zip(&other.covered) {
            mine.extend(theirs.iter().cloned());
        }
    }

    /// How many k-paths are covered.
    pub fn covered(&self, k: usize) -> usize {
        self.covered[k - 1].len()
    }

    /// Whether a k-path is covered.
    pub fn contains(&self, path: &[u32]) -> bool {
        self.covered
            .get(path.len().wrapping_sub(1))
            .is_some_and(|set| set.contains(path))
    }

    /// The first `limit` k-paths of `graph` (in its order) not covered, displayed.
    pub fn missing(
        &self,
        graph: &KPathGraph,
        grammar: &Grammar,
        k: usize,
        limit: usize,
    ) -> Vec<String> {
        let mut list = Vec::new();
        if limit == 0 {
            return list;
        }
        graph.for_each_path(k, |path| {
            if !self.contains(path) {
                list.push(graph.display(grammar, path));
            }
            list.len() < limit
        });
        list
    }
}

/// Calls `visit` with every distinct-position k'-path (1 <= k' <= max_k) of a tree: for
/// each symbolic node, the chains of its nearest symbolic ancestors ending there.
pub fn for_each_tree_path(
    graph: &KPathGraph,
    tree: &DerivationTree,
    max_k: usize,
    mut visit: impl FnMut(&[u32]),
) {
    // Symbolic ancestors of the current node, with the end of their subtrees.
    let mut chain: Vec<u32> = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    for node in tree.descendants(tree.root()) {
        while ends.last().is_some_and(|&end| end <= node.index()) {
            ends.pop();
            chain.pop();
        }
        let expr = tree.expr(node);
        if !graph.is_node(expr) {
            continue;
        }
        chain.push(expr.index() as u32);
        ends.push(tree.subtree_end(node));
        for k in 1..=max_k.min(chain.len()) {
            visit(&chain[chain.len() - k..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_grammar::load_spec_text;

    /// Fig. 1 of the k-path paper.
    const EXPR: &str = include_str!("../../../specs/expr.fan");

    #[test]
    fn missing_paths_are_those_no_tree_covers_up_to_the_limit() {
        let grammar = load_spec_text("t.bnf", b"<start> ::= \"a\" | \"b\" | \"c\"\n").unwrap();
        let graph = KPathGraph::new(&grammar);
        let mut coverage = Coverage::new(1);
        assert_eq!(coverage.missing(&graph, &grammar, 1, 10).len(), 3);
        assert_eq!(coverage.missing(&graph, &grammar, 1, 2).len(), 2);
        assert!(coverage.missing(&graph, &grammar, 1, 0).is_empty());
        let generator = thicket_gen::Generator::new(&grammar, Default::default()).unwrap();
        for i in 0..50 {
            let (tree, _) = generator.generate_tree(&mut thicket_gen::Generator::rng_for(1, i));
            coverage.add_tree(&graph, &tree);
        }
        assert!(coverage.missing(&graph, &grammar, 1, 10).is_empty());
    }

    #[test]
    fn the_papers_expression_grammar_has_the_published_counts() {
        let grammar = load_spec_text("expr.fan", EXPR.as_bytes()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let counts: Vec<u128> = (1..=5).map(|k| graph.count(k)).collect();
        assert_eq!(counts, vec![39, 125, 523, 2331, 10245]);
        for k in 1..=4 {
            let mut listed = 0u128;
            graph.for_each_path(k, |_| {
                listed += 1;
                true
            });
            assert_eq!(
                listed,
                graph.count(k),
                "enumeration agrees with the count for k = {k}"
            );
        }
    }

    #[test]
    fn the_worked_example_x_plus_42_covers_twelve_2_paths() {
        let grammar = load_spec_text("expr.fan", EXPR.as_bytes()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
        let tree = parser.parse(b"x+42").unwrap().tree();
        let mut coverage = Coverage::new(2);
        coverage.add_tree(&graph, &tree);
        // The paper lists the twelve: AddExpr0->AddExpr5, AddExpr5->MultExpr2, ...
        assert_eq!(coverage.covered(2), 12);
        let mut listed = Vec::new();
        graph.for_each_path(2, |p| {
            if coverage.contains(p) {
                listed.push(graph.display(&grammar, p));
            }
            true
        });
        assert_eq!(listed.len(), 12);
        assert!(
            listed
                .iter()
                .any(|p| p.starts_with("<DecDigits>") && p.contains("<DecDigit>")),
            "{listed:?}"
        );
    }
}
