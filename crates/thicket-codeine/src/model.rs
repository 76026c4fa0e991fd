//! The model: one decision tree per code location, over k-path features.

use crate::cart::{Condition, Node, Tree};
use crate::features::FeatureTable;
use crate::matrix::CoverageMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use thicket_gen::{Generator, below};

/// How to learn.
#[derive(Clone, Copy, Debug)]
pub struct LearnConfig {
    /// Longest path length of the features.
    pub k: usize,
    /// Depth limit of each tree (the paper's, from ALHAZEN: 5).
    pub max_depth: usize,
    /// At most this many locations get a tree (the paper's: 1000), the most balanced
    /// first.
    pub max_locations: usize,
    /// Seeds the balancing sub-samples.
    pub seed: u64,
}

impl Default for LearnConfig {
    fn default() -> LearnConfig {
        LearnConfig {
            k: 3,
            max_depth: 5,
            max_locations: 1000,
            seed: 0,
        }
    }
}

/// What a model says about one location.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocationModel {
    /// The location's name, as in the coverage matrix.
    pub name: String,
    /// Training inputs that covered it.
    pub covered: u32,
    /// Training inputs (parsed) in all.
    pub inputs: u32,
    /// The tree, trained on a balanced sub-sample (`2 * min(covered, not covered)`).
    pub tree: Tree,
}

/// A learned model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// The spec the features refer to (as given when learning).
    pub spec: String,
    /// A fingerprint of the spec's grammar ([`grammar_fingerprint`]): the features are
    /// expression ids of exactly that grammar.
    pub grammar: u64,
    /// Longest path length of the features.
    pub k: usize,
    /// What ran the training inputs.
    pub executor: String,
    /// The features: k-paths as expression ids, outermost first.
    pub features: Vec<Vec<u32>>,
    /// Locations every or no training input covered (no tree).
    pub skipped: u32,
    /// One entry per trainable location.
    pub locations: Vec<LocationModel>,
}

impl Model {
    /// Checks a model read from a file against the grammar it names: every feature a
    /// path of `grammar`'s expressions, every tree well formed over those features. A
    /// model cut short or edited by hand is refused here rather than failing later.
    pub fn validate(&self, grammar: &thicket_grammar::Grammar) -> Result<(), String> {
        for (i, path) in self.features.iter().enumerate() {
            if path.is_empty() || path.len() > self.k.max(1) {
                return Err(format!(
                    "feature {i} is a path of {} expressions, not 1 to k = {}",
                    path.len(),
                    self.k
                ));
            }
            if let Some(e) = path.iter().find(|&&e| e as usize >= grammar.expr_count()) {
                return Err(format!(
                    "feature {i} names expression {e}, but the grammar has {}",
                    grammar.expr_count()
                ));
            }
        }
        for location in &self.locations {
            location
                .tree
                .validate(self.features.len())
                .map_err(|e| format!("location {}: {e}", location.name))?;
        }
        Ok(())
    }
}

/// A fingerprint of a grammar's structure (its rules' names and expression graph):
/// equal for the same spec text, different after an edit that renumbers expressions.
pub fn grammar_fingerprint(grammar: &thicket_grammar::Grammar) -> u64 {
    // FNV-1a over the display of every rule and the expression count.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&(grammar.expr_count() as u64).to_le_bytes());
    for symbol in grammar.symbols() {
        let rule = grammar.rule(symbol);
        eat(rule.name.as_bytes());
        eat(grammar.display_expr(rule.body).as_bytes());
    }
    h
}

impl Model {
    /// Learns one tree per location the inputs cover sometimes (not never, not always),
    /// in parallel over locations. `table.rows[i]` are the features of
    /// `matrix.inputs[i]`; rejected inputs (`None`) are left out.
    pub fn learn(
        table: &FeatureTable,
        matrix: &CoverageMatrix,
        spec: String,
        grammar: u64,
        config: LearnConfig,
    ) -> Model {
        let used: Vec<usize> = (0..matrix.inputs.len())
            .filter(|&i| table.rows.get(i).is_some_and(|r| r.is_some()))
            .collect();
        let rows: Vec<Vec<u32>> = used
            .iter()
            .map(|&i| table.rows[i].clone().expect("parsed"))
            .collect();
        let n = used.len() as u32;
        let mut covered_by: Vec<Vec<u32>> = vec![Vec::new(); matrix.locations.len()];
        for (j, &i) in used.iter().enumerate() {
            for &c in &matrix.covered[i] {
                covered_by[c as usize].push(j as u32);
            }
        }
        let mut trainable: Vec<usize> = (0..matrix.locations.len())
            .filter(|&c| !covered_by[c].is_empty() && (covered_by[c].len() as u32) < n)
            .collect();
        let skipped = (matrix.locations.len() - trainable.len()) as u32;
        // The most balanced first, if there are more than the cap; then by name.
        trainable.sort_by_key(|&c| {
            let p = covered_by[c].len() as i64;
            ((2 * p - i64::from(n)).abs(), matrix.locations[c].clone())
        });
        trainable.truncate(config.max_locations);
        trainable.sort_by(|&a, &b| matrix.locations[a].cmp(&matrix.locations[b]));
        let n_features = table.paths.len();
        let everyone: Vec<u32> = (0..rows.len() as u32).collect();
        let locations: Vec<LocationModel> = trainable
            .par_iter()
            .map(|&c| {
                let mut label = vec![false; rows.len()];
                for &j in &covered_by[c] {
                    label[j as usize] = true;
                }
                let samples = balanced(&label, config.seed, c as u64);
                LocationModel {
                    name: matrix.locations[c].clone(),
                    covered: covered_by[c].len() as u32,
                    inputs: n,
                    tree: Tree::fit(
                        &rows,
                        &label,
                        &samples,
                        &everyone,
                        n_features,
                        config.max_depth,
                    ),
                }
            })
            .collect();
        Model {
            spec,
            grammar,
            k: config.k,
            executor: matrix.executor.clone(),
            features: table.paths.iter().map(|p| p.to_vec()).collect(),
            skipped,
            locations,
        }
    }

    /// The location named `name`: an exact name, else the one location whose name ends
    /// with it (`:paren_subtraction_in_product`); an error lists the candidates.
    pub fn location(&self, name: &str) -> Result<&LocationModel, String> {
        if let Some(l) = self.locations.iter().find(|l| l.name == name) {
            return Ok(l);
        }
        let matches: Vec<&LocationModel> = self
            .locations
            .iter()
            .filter(|l| l.name.ends_with(name))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(format!(
                "no trained location is named `{name}` or ends with it ({} locations \
                 trained{})",
                self.locations.len(),
                self.locations
                    .first()
                    .map(|l| format!(", e.g. `{}`", l.name))
                    .unwrap_or_default()
            )),
            many => Err(format!(
                "`{name}` is ambiguous: {} locations end with it (e.g. `{}`, `{}`)",
                many.len(),
                many[0].name,
                many[1].name
            )),
        }
    }

    /// The feature ids by path, for reading inputs' rows.
    pub fn feature_ids(&self) -> rustc_hash::FxHashMap<thicket_cover::KPath, u32> {
        self.features
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone().into_boxed_slice(), i as u32))
            .collect()
    }

    /// The locations a row of features is predicted to cover (indices into
    /// `locations`).
    pub fn predict(&self, row: &[u32]) -> Vec<usize> {
        (0..self.locations.len())
            .filter(|&i| self.locations[i].tree.predict(row))
            .collect()
    }
}

/// Balanced sub-sample: all of the smaller class and as many of the larger, drawn
/// without replacement (partial Fisher-Yates) from the seed and location.
fn balanced(label: &[bool], seed: u64, location: u64) -> Vec<u32> {
    let (mut pos, mut neg): (Vec<u32>, Vec<u32>) =
        (0..label.len() as u32).partition(|&i| label[i as usize]);
    let m = pos.len().min(neg.len());
    let mut rng = Generator::rng_for(seed ^ 0xC0DE_1E00, location);
    for class in [&mut pos, &mut neg] {
        for i in 0..m {
            let j = i + below(&mut rng, (class.len() - i) as u32) as usize;
            class.swap(i, j);
        }
        class.truncate(m);
    }
    let mut samples = pos;
    samples.extend(neg);
    samples.sort_unstable();
    samples
}

/// A constraint from one covering leaf (paper §5.3.1): paths that must exist and paths
/// that must not, as feature ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathConstraint {
    /// Feature ids that must be present.
    pub exists: Vec<u32>,
    /// Feature ids that must be absent.
    pub absent: Vec<u32>,
    /// The leaf's training support.
    pub support: u32,
    /// The leaf's training samples of its class.
    pub correct: u32,
}

impl PathConstraint {
    /// From a leaf's conditions.
    pub fn from_conditions(conditions: &[Condition], leaf: &Node) -> PathConstraint {
        let (support, correct) = match leaf {
            Node::Leaf {
                support, correct, ..
            } => (*support, *correct),
            Node::Split { .. } => (0, 0),
        };
        PathConstraint {
            exists: conditions.iter().filter(|c| c.1).map(|c| c.0).collect(),
            absent: conditions.iter().filter(|c| !c.1).map(|c| c.0).collect(),
            support,
            correct,
        }
    }

    /// The feasibility check of §5.3.2: infeasible if a required path contains a
    /// forbidden one (every input with the longer has the shorter).
    pub fn feasible(&self, features: &[Vec<u32>]) -> bool {
        !self.exists.iter().any(|&e| {
            self.absent.iter().any(|&a| {
                let (long, short) = (&features[e as usize], &features[a as usize]);
                short.len() <= long.len() && long.windows(short.len()).any(|w| w == &short[..])
            })
        })
    }
}

impl LocationModel {
    /// The constraints of the leaves that predict "covered", feasible ones only, the
    /// best supported first (by correct samples, then support).
    pub fn constraints(&self, features: &[Vec<u32>]) -> Vec<PathConstraint> {
        let mut out: Vec<PathConstraint> = self
            .tree
            .leaves()
            .into_iter()
            .filter(|(_, leaf)| matches!(leaf, Node::Leaf { covered: true, .. }))
            .map(|(c, leaf)| PathConstraint::from_conditions(&c, leaf))
            .filter(|c| c.feasible(features))
            .collect();
        out.sort_by_key(|c| std::cmp::Reverse((c.correct, c.support)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_required_path_containing_a_forbidden_one_is_infeasible() {
        let features = vec![vec![1, 2, 3], vec![1, 2], vec![2, 3], vec![4]];
        let c = |exists: Vec<u32>, absent: Vec<u32>| PathConstraint {
            exists,
            absent,
            support: 1,
            correct: 1,
        };
        assert!(!c(vec![0], vec![1]).feasible(&features));
        assert!(!c(vec![0], vec![2]).feasible(&features));
        assert!(c(vec![0], vec![3]).feasible(&features));
        assert!(
            c(vec![1], vec![0]).feasible(&features),
            "shorter required, longer forbidden"
        );
    }

    #[test]
    fn a_model_cut_short_or_edited_is_refused_with_the_reason() {
        let grammar =
            thicket_grammar::load_spec_text("t.fan", b"<start> ::= <a> | \"b\"\n<a> ::= \"a\"")
                .unwrap();
        let split = |feature, absent, present| Node::Split {
            feature,
            absent,
            present,
        };
        let leaf = |covered| Node::Leaf {
            covered,
            support: 1,
            correct: 1,
        };
        let model = |features: Vec<Vec<u32>>, nodes: Vec<Node>| Model {
            spec: "t.fan".into(),
            grammar: grammar_fingerprint(&grammar),
            k: 2,
            executor: "test".into(),
            features,
            skipped: 0,
            locations: vec![LocationModel {
                name: "f".into(),
                covered: 1,
                inputs: 2,
                tree: Tree { nodes },
            }],
        };
        let good = model(
            vec![vec![0], vec![1, 0]],
            vec![split(1, 1, 2), leaf(false), leaf(true)],
        );
        assert_eq!(good.validate(&grammar), Ok(()));
        let cut = model(vec![vec![0]], vec![split(1, 1, 2), leaf(false), leaf(true)]);
        assert!(cut.validate(&grammar).unwrap_err().contains("feature 1"));
        let cycle = model(vec![vec![0]], vec![split(0, 0, 1), leaf(true)]);
        assert!(cycle.validate(&grammar).unwrap_err().contains("child 0"));
        let empty = model(vec![vec![0]], vec![]);
        assert!(empty.validate(&grammar).is_err());
        let foreign = model(vec![vec![9999]], vec![leaf(true)]);
        assert!(foreign.validate(&grammar).unwrap_err().contains("9999"));
    }

    #[test]
    fn balancing_keeps_the_smaller_class_and_as_many_others() {
        let label: Vec<bool> = (0..100).map(|i| i % 10 == 0).collect();
        let s = balanced(&label, 7, 3);
        assert_eq!(s.len(), 20);
        assert_eq!(s.iter().filter(|&&i| label[i as usize]).count(), 10);
        assert_eq!(s, balanced(&label, 7, 3), "same seed, same sample");
        assert_ne!(s, balanced(&label, 8, 3));
    }
}
