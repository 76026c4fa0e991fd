//! Input features (CODEINE §5.1): the presence of every l-path (l <= k) in the
//! derivations of an input; paths no input has are not features, and paths every input
//! has (the root's 1-path) are dropped as constant.
//!
//! Which derivations: every one when the input's parse forest is small (its
//! derivations counted within [`SMALL_FOREST_STATES`] forest states), else the one the
//! parser returns (the one it found first, as `thicket parse` prints it). Every parse is
//! the paper's reading, and it keeps a value a grammar names beside a pattern that also
//! matches it (`<h16> ::= r"[0-9a-fA-F]{1,4}" | "ffff"`: the parser returns the
//! pattern's derivation, and `ffff` would be no feature). But under an ambiguous grammar
//! following the forest costs time for every split of every span some derivation uses:
//! a 292-byte e-mail header value with a run of unclosed comments has 10^33
//! derivations, its forest took 0.3 s to follow and its one tree under a millisecond.
//! The bound keeps the forest for the inputs where it is cheap and the tree for the
//! others. Either way the reading is a function of the text alone, and the learner sees
//! inputs so everywhere: training inputs, the inputs a loop runs, a leaf's exemplars and
//! the candidates of targeted generation (whose text is read again before their
//! conditions are checked, [`crate::target`]), so a leaf's conditions hold of the text
//! they are checked on, whichever tree generated it.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use thicket_cover::{KPath, KPathGraph, for_each_tree_path};
use thicket_grammar::ExprId;
use thicket_parse::{ParseResult, Parser};
use thicket_tree::DerivationTree;

/// The forest states (counts of a forest node or of a partial split) within which an
/// input's derivations must be counted for its features to be read in every parse.
/// Following a forest costs about as much as its states; on 1,000 random inputs of
/// each subject, 1,024 takes every address of `ip.fan` (all but one fit in 256) and two
/// in three e-mail header values, whose heavy tail (runs of open
/// comments, up to 10^33 derivations) stays with the parser's tree: reading all 1,000
/// costs about twice the trees alone, against 60 times for every parse of every input.
pub const SMALL_FOREST_STATES: usize = 1_024;

/// The k-paths of one input (longer paths than `k` are not listed): in every
/// derivation if its forest is small, else in the one the parser returns (see the
/// module docs).
pub fn input_paths(
    parser: &Parser<'_>,
    graph: &KPathGraph,
    text: &[u8],
    k: usize,
) -> Result<FxHashSet<KPath>, String> {
    let parsed = parser.parse(text).map_err(|e| e.to_string())?;
    Ok(parse_paths(&parsed, graph, k))
}

/// The k-paths of a parsed input as [`input_paths`] reads them.
pub fn parse_paths(parsed: &ParseResult<'_, '_>, graph: &KPathGraph, k: usize) -> FxHashSet<KPath> {
    small_forest_paths(parsed, graph, k).unwrap_or_else(|| tree_paths(graph, &parsed.tree(), k))
}

/// The k-paths of every derivation of a parsed input if its forest is small
/// ([`SMALL_FOREST_STATES`]), else `None`: then its features are those of the tree the
/// parser returns.
pub fn small_forest_paths(
    parsed: &ParseResult<'_, '_>,
    graph: &KPathGraph,
    k: usize,
) -> Option<FxHashSet<KPath>> {
    let is_node = |x: u32| graph.is_node(ExprId::from_index(x as usize));
    parsed.paths_in_any_parse_within(is_node, k, SMALL_FOREST_STATES)
}

/// The l-paths (l <= `k`) of one tree.
pub fn tree_paths(graph: &KPathGraph, tree: &DerivationTree, k: usize) -> FxHashSet<KPath> {
    let mut paths = FxHashSet::default();
    for_each_tree_path(graph, tree, k, |p| {
        paths.insert(KPath::from(p));
    });
    paths
}

/// A feature table: which paths each input has.
#[derive(Clone, Debug, Default)]
pub struct FeatureTable {
    /// The features: paths, by feature id.
    pub paths: Vec<KPath>,
    /// Per input (in the order given), its feature ids, sorted; `None` for an input the
    /// grammar rejects.
    pub rows: Vec<Option<Vec<u32>>>,
}

impl FeatureTable {
    /// The features of `texts` (parsed in parallel), constant features dropped.
    pub fn extract(
        parser: &Parser<'_>,
        graph: &KPathGraph,
        texts: &[&[u8]],
        k: usize,
    ) -> FeatureTable {
        let per_input: Vec<Option<FxHashSet<KPath>>> = texts
            .par_iter()
            .map(|t| input_paths(parser, graph, t, k).ok())
            .collect();
        Self::from_path_sets(&per_input)
    }

    /// A table from each input's paths (`None`: rejected), constant features dropped;
    /// feature ids follow the paths' order (shorter first, then by node ids).
    pub fn from_path_sets(per_input: &[Option<FxHashSet<KPath>>]) -> FeatureTable {
        Self::from_path_sets_up_to(per_input, usize::MAX)
    }

    /// [`FeatureTable::from_path_sets`] with the paths of up to `k` elements only, for
    /// inputs whose paths were read longer.
    pub fn from_path_sets_up_to(per_input: &[Option<FxHashSet<KPath>>], k: usize) -> FeatureTable {
        let parsed = per_input.iter().flatten().count();
        let mut seen: FxHashMap<&KPath, usize> = FxHashMap::default();
        for set in per_input.iter().flatten() {
            for p in set.iter().filter(|p| p.len() <= k) {
                *seen.entry(p).or_insert(0) += 1;
            }
        }
        let mut paths: Vec<KPath> = seen
            .into_iter()
            .filter(|&(_, n)| n < parsed)
            .map(|(p, _)| p.clone())
            .collect();
        paths.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        let table = FeatureTable {
            rows: Vec::new(),
            paths,
        };
        let ids = table.ids();
        let rows = per_input
            .iter()
            .map(|set| set.as_ref().map(|s| Self::row_with(&ids, s)))
            .collect();
        FeatureTable { rows, ..table }
    }

    /// Feature ids by path.
    pub fn ids(&self) -> FxHashMap<KPath, u32> {
        self.paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect()
    }

    /// The sorted feature ids of an input with these paths (paths that are no feature
    /// are ignored).
    pub fn row_with(ids: &FxHashMap<KPath, u32>, paths: &FxHashSet<KPath>) -> Vec<u32> {
        let mut row: Vec<u32> = paths.iter().filter_map(|p| ids.get(p).copied()).collect();
        row.sort_unstable();
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_grammar::{ExprId, Grammar};
    use thicket_parse::ParseConfig;

    /// `"a"` has two derivations, through `<x>` and through `<y>`.
    const AMBIGUOUS: &[u8] = b"<start> ::= <x> | <y> | <z>\n<x> ::= \"a\"\n<y> ::= \"a\"\n\
        <z> ::= \"b\" <x>";

    /// The rules named by an input's paths.
    fn rules_in(grammar: &Grammar, paths: &FxHashSet<KPath>) -> Vec<String> {
        let mut names: Vec<String> = paths
            .iter()
            .flat_map(|p| p.iter())
            .map(|&x| grammar.display_expr(ExprId::from_index(x as usize)))
            .filter(|name| name.starts_with('<'))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The expressions named by an input's paths, as the grammar prints them.
    fn named_in(grammar: &Grammar, paths: &FxHashSet<KPath>) -> Vec<String> {
        let mut names: Vec<String> = paths
            .iter()
            .flat_map(|p| p.iter())
            .map(|&x| grammar.display_expr(ExprId::from_index(x as usize)))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn a_value_named_beside_a_pattern_that_matches_it_is_a_feature() {
        // A tester lists a boundary value beside the general form; the parser's tree
        // reads `ffff` by one alternative, the learner must see it by either.
        let grammar = thicket_grammar::load_spec_text(
            "t.fan",
            b"<start> ::= <group> \":\" <group>\n\
              <group> ::= r\"[0-9a-f]{1,4}\" | \"0\" | \"ffff\"",
        )
        .unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let paths = input_paths(&parser, &graph, b"ffff:1", 3).unwrap();
        let named = named_in(&grammar, &paths);
        assert!(named.iter().any(|n| n == "\"ffff\""), "{named:?}");
        assert!(named.iter().any(|n| n.starts_with("r\"")), "{named:?}");
        // The same text reads the same on every reading.
        assert_eq!(paths, input_paths(&parser, &graph, b"ffff:1", 3).unwrap());
    }

    #[test]
    fn an_input_with_a_large_forest_is_read_in_the_derivation_the_parser_returns() {
        // `x` by `<x>` or by `<y>`, and a run of them split in every way: a run of 60
        // has more derivations than fit in 128 bits, and a forest too large to follow.
        let grammar = thicket_grammar::load_spec_text(
            "t.fan",
            b"<start> ::= <s>\n<s> ::= <s> <s> | <x>\n<x> ::= \"x\" | <y>\n<y> ::= \"x\"",
        )
        .unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let is_node = |x: u32| graph.is_node(ExprId::from_index(x as usize));
        let small = parser.parse(b"x").unwrap();
        assert_eq!(
            input_paths(&parser, &graph, b"x", 3).unwrap(),
            small.paths_in_any_parse(is_node, 3)
        );
        let run = vec![b'x'; 60];
        let parsed = parser.parse(&run).unwrap();
        let paths = input_paths(&parser, &graph, &run, 3).unwrap();
        assert_eq!(paths, tree_paths(&graph, &parsed.tree(), 3));
        assert_ne!(paths, parsed.paths_in_any_parse(is_node, 3));
        assert_eq!(paths, input_paths(&parser, &graph, &run, 3).unwrap());
    }

    #[test]
    fn a_small_forest_is_read_in_every_derivation() {
        let grammar = thicket_grammar::load_spec_text("t.fan", AMBIGUOUS).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let parsed = parser.parse(b"a").unwrap();
        let is_node = |x: u32| graph.is_node(ExprId::from_index(x as usize));
        let paths = input_paths(&parser, &graph, b"a", 3).unwrap();
        assert_eq!(paths, parsed.paths_in_any_parse(is_node, 3));
        assert_eq!(rules_in(&grammar, &paths), ["<x>", "<y>"]);
        // An unambiguous input has no other derivation: its tree's paths.
        let parsed = parser.parse(b"ba").unwrap();
        assert_eq!(
            input_paths(&parser, &graph, b"ba", 3).unwrap(),
            tree_paths(&graph, &parsed.tree(), 3)
        );
    }
}
