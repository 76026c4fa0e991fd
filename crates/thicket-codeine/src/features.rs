//! Input features (CODEINE §5.1): the presence of every l-path (l <= k) in the
//! derivation the parser returns for an input (the one it found first, as `thicket
//! parse` prints it; an unambiguous input has no other); paths no input has are not
//! features, and paths every input has (the root's 1-path) are dropped as constant.
//!
//! One derivation, not every one: under an ambiguous grammar the paths of every parse
//! cost time for every split of every span that some derivation uses (a 292-byte
//! e-mail header value with a run of unclosed comments has 10^33 derivations; its
//! forest took 0.3 s to follow, its one tree under a millisecond). And the learner
//! sees inputs as the parser reads them everywhere: training inputs, the inputs a
//! loop runs, a leaf's exemplars (parsed into that derivation before they are
//! mutated) and the candidates of targeted generation (read back through the parser
//! before their conditions are checked, [`crate::target`]), so a leaf's conditions
//! hold of the text they are checked on, whichever tree generated it.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use thicket_cover::{KPath, KPathGraph, for_each_tree_path};
use thicket_parse::Parser;
use thicket_tree::DerivationTree;

/// The k-paths of one input in the derivation the parser returns (longer paths than
/// `k` are not listed).
pub fn input_paths(
    parser: &Parser<'_>,
    graph: &KPathGraph,
    text: &[u8],
    k: usize,
) -> Result<FxHashSet<KPath>, String> {
    let tree = parser.parse(text).map_err(|e| e.to_string())?.tree();
    Ok(tree_paths(graph, &tree, k))
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

    #[test]
    fn features_are_the_paths_of_the_derivation_the_parser_returns() {
        let grammar = thicket_grammar::load_spec_text("t.fan", AMBIGUOUS).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        let parsed = parser.parse(b"a").unwrap();
        let is_node = |x: u32| graph.is_node(ExprId::from_index(x as usize));
        let every = parsed.paths_in_any_parse(is_node, 3);
        assert_eq!(rules_in(&grammar, &every), ["<x>", "<y>"]);
        // One derivation's: the tree `thicket parse` prints, the same on every reading.
        let paths = input_paths(&parser, &graph, b"a", 3).unwrap();
        assert_eq!(paths, tree_paths(&graph, &parsed.tree(), 3));
        assert_eq!(paths, input_paths(&parser, &graph, b"a", 3).unwrap());
        let rules = rules_in(&grammar, &paths);
        assert!(rules == ["<x>"] || rules == ["<y>"], "{rules:?}");
        // An unambiguous input has no other derivation: its paths are unchanged.
        let parsed = parser.parse(b"ba").unwrap();
        assert_eq!(
            input_paths(&parser, &graph, b"ba", 3).unwrap(),
            parsed.paths_in_any_parse(is_node, 3)
        );
    }
}
