//! CART decision trees on binary features (Breiman et al.; the scikit-learn guide the
//! paper cites): each split asks whether one feature is present, chosen to minimise the
//! weighted Gini impurity of the two sides; growth stops at the depth limit, at pure
//! nodes, and where no split lowers the impurity. Small and exact: every feature present
//! in a node's samples is weighed, ties go to the lowest feature id (deterministic).

use serde::{Deserialize, Serialize};

/// One node of a tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Node {
    /// A question: is feature `feature` present? Children are node indices.
    Split {
        /// The feature asked about.
        feature: u32,
        /// The child for samples without the feature.
        absent: u32,
        /// The child for samples with the feature.
        present: u32,
    },
    /// An answer.
    Leaf {
        /// Whether the leaf predicts "covered".
        covered: bool,
        /// Training samples that reached the leaf.
        support: u32,
        /// Of those, how many have the predicted class.
        correct: u32,
    },
}

/// A decision tree; node 0 is the root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// The nodes, root first.
    pub nodes: Vec<Node>,
}

/// One condition on the way to a leaf: feature present (`true`) or absent.
pub type Condition = (u32, bool);

impl Tree {
    /// Fits a tree to `samples` (indices into `rows`, each row the sorted feature ids
    /// present in one input) with classes `label[sample]`, at most `max_depth` splits
    /// deep. `n_features` bounds the feature ids.
    pub fn fit(
        rows: &[Vec<u32>],
        label: &[bool],
        samples: &[u32],
        n_features: usize,
        max_depth: usize,
    ) -> Tree {
        let mut tree = Tree { nodes: Vec::new() };
        let mut counts = Counts {
            present: vec![0; n_features],
            present_pos: vec![0; n_features],
            touched: Vec::new(),
        };
        // Explicit stack of (node index to fill, samples, depth).
        tree.nodes.push(Node::Leaf {
            covered: false,
            support: 0,
            correct: 0,
        });
        let mut todo: Vec<(usize, Vec<u32>, usize)> = vec![(0, samples.to_vec(), 0)];
        while let Some((at, here, depth)) = todo.pop() {
            let pos = here.iter().filter(|&&s| label[s as usize]).count() as u32;
            let n = here.len() as u32;
            let leaf = Node::Leaf {
                covered: pos * 2 > n,
                support: n,
                correct: pos.max(n - pos),
            };
            if depth >= max_depth || pos == 0 || pos == n {
                tree.nodes[at] = leaf;
                continue;
            }
            match counts.best_split(rows, label, &here, pos) {
                None => tree.nodes[at] = leaf,
                Some(feature) => {
                    let (with, without): (Vec<u32>, Vec<u32>) = here
                        .iter()
                        .partition(|&&s| rows[s as usize].binary_search(&feature).is_ok());
                    let absent = tree.nodes.len();
                    tree.nodes.push(leaf.clone());
                    tree.nodes.push(leaf);
                    tree.nodes[at] = Node::Split {
                        feature,
                        absent: absent as u32,
                        present: absent as u32 + 1,
                    };
                    todo.push((absent, without, depth + 1));
                    todo.push((absent + 1, with, depth + 1));
                }
            }
        }
        tree
    }

    /// The leaf a row (sorted feature ids) reaches.
    pub fn leaf_of(&self, row: &[u32]) -> &Node {
        let mut at = 0;
        loop {
            match &self.nodes[at] {
                Node::Split {
                    feature,
                    absent,
                    present,
                } => {
                    at = if row.binary_search(feature).is_ok() {
                        *present
                    } else {
                        *absent
                    } as usize
                }
                leaf => return leaf,
            }
        }
    }

    /// Whether a row is predicted covered.
    pub fn predict(&self, row: &[u32]) -> bool {
        matches!(self.leaf_of(row), Node::Leaf { covered: true, .. })
    }

    /// Every leaf with the conditions on its way from the root (in root-to-leaf order).
    pub fn leaves(&self) -> Vec<(Vec<Condition>, &Node)> {
        let mut out = Vec::new();
        let mut todo: Vec<(usize, Vec<Condition>)> = vec![(0, Vec::new())];
        while let Some((at, conditions)) = todo.pop() {
            match &self.nodes[at] {
                Node::Split {
                    feature,
                    absent,
                    present,
                } => {
                    let mut yes = conditions.clone();
                    yes.push((*feature, true));
                    let mut no = conditions;
                    no.push((*feature, false));
                    todo.push((*present as usize, yes));
                    todo.push((*absent as usize, no));
                }
                leaf => out.push((conditions, leaf)),
            }
        }
        out
    }

    /// The features the tree asks about.
    pub fn features(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().filter_map(|n| match n {
            Node::Split { feature, .. } => Some(*feature),
            Node::Leaf { .. } => None,
        })
    }
}

/// Per-feature counts of one node's samples, reused across nodes.
struct Counts {
    present: Vec<u32>,
    present_pos: Vec<u32>,
    touched: Vec<u32>,
}

impl Counts {
    /// The feature whose split lowers the Gini impurity most (`None` if none lowers it).
    fn best_split(
        &mut self,
        rows: &[Vec<u32>],
        label: &[bool],
        samples: &[u32],
        pos: u32,
    ) -> Option<u32> {
        for &s in samples {
            let positive = u32::from(label[s as usize]);
            for &f in &rows[s as usize] {
                let f = f as usize;
                if self.present[f] == 0 {
                    self.touched.push(f as u32);
                }
                self.present[f] += 1;
                self.present_pos[f] += positive;
            }
        }
        let n = samples.len() as f64;
        // Gini impurity times the sample count: n * (1 - p^2 - q^2) = 2 * pos * neg / n.
        let weighted = |n: f64, pos: f64| {
            if n == 0.0 {
                0.0
            } else {
                2.0 * pos * (n - pos) / n
            }
        };
        let mut best = weighted(n, f64::from(pos)) - 1e-9;
        let mut choice = None;
        self.touched.sort_unstable();
        for &f in &self.touched {
            let (with, with_pos) = (self.present[f as usize], self.present_pos[f as usize]);
            if with as usize != samples.len() {
                let score = weighted(f64::from(with), f64::from(with_pos))
                    + weighted(n - f64::from(with), f64::from(pos - with_pos));
                if score < best {
                    best = score;
                    choice = Some(f);
                }
            }
            self.present[f as usize] = 0;
            self.present_pos[f as usize] = 0;
        }
        self.touched.clear();
        choice
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_conjunction_with_a_negation() {
        // covered iff feature 1 present and feature 2 absent; feature 0 is noise.
        let mut rows = Vec::new();
        let mut label = Vec::new();
        for i in 0..64u32 {
            let row: Vec<u32> = (0..3).filter(|b| i >> b & 1 == 1).collect();
            label.push(row.contains(&1) && !row.contains(&2));
            rows.push(row);
        }
        let samples: Vec<u32> = (0..64).collect();
        let tree = Tree::fit(&rows, &label, &samples, 3, 5);
        for (row, &l) in rows.iter().zip(&label) {
            assert_eq!(tree.predict(row), l, "{row:?}");
        }
        let covering: Vec<_> = tree
            .leaves()
            .into_iter()
            .filter(|(_, leaf)| matches!(leaf, Node::Leaf { covered: true, .. }))
            .map(|(c, _)| {
                let mut c = c.clone();
                c.sort_unstable();
                c
            })
            .collect();
        assert_eq!(covering, vec![vec![(1, true), (2, false)]]);
        assert!(!tree.features().any(|f| f == 0), "noise is never asked");
    }

    #[test]
    fn depth_limit_and_pure_nodes_stop_growth() {
        let rows: Vec<Vec<u32>> = (0..8u32).map(|i| vec![i]).collect();
        let label: Vec<bool> = (0..8).map(|i| i % 2 == 0).collect();
        let samples: Vec<u32> = (0..8).collect();
        let tree = Tree::fit(&rows, &label, &samples, 8, 1);
        assert_eq!(tree.nodes.len(), 3, "one split");
        let pure = Tree::fit(&rows, &[true; 8], &samples, 8, 5);
        assert_eq!(pure.nodes.len(), 1);
    }
}
