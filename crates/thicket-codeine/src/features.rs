//! Input features (CODEINE §5.1): the presence of every l-path (l <= k) in *any* parse
//! of an input, read from the parse forest with memoisation per forest node
//! (`thicket_parse::ParseResult::paths_in_any_parse`); paths no input has are not
//! features, and paths every input has (the root's 1-path) are dropped as constant.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use thicket_cover::{KPath, KPathGraph};
use thicket_grammar::ExprId;
use thicket_parse::Parser;

/// The k-paths of one input in any of its parses (longer paths than `k` are not listed).
pub fn input_paths(
    parser: &Parser<'_>,
    graph: &KPathGraph,
    text: &[u8],
    k: usize,
) -> Result<FxHashSet<KPath>, String> {
    let parsed = parser.parse(text).map_err(|e| e.to_string())?;
    Ok(parsed.paths_in_any_parse(|x| graph.is_node(ExprId::from_index(x as usize)), k))
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
