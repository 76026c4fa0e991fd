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
        /// Samples of the balanced sub-sample the tree was fitted on that reached the
        /// leaf.
        support: u32,
        /// Of those, how many have the predicted class.
        correct: u32,
        /// All training inputs (not only the sub-sample) that reached the leaf and
        /// cover the location (0 in models written before this was recorded).
        #[serde(default)]
        inputs_covered: u32,
        /// All training inputs that reached the leaf and do not cover the location.
        #[serde(default)]
        inputs_not_covered: u32,
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
    /// deep. `n_features` bounds the feature ids. Splits equally good on `samples` (a
    /// balanced sub-sample, where two features often coincide) are decided by their
    /// impurity on `population` (all training samples) reaching the same node, then by
    /// the lowest feature id.
    pub fn fit(
        rows: &[Vec<u32>],
        label: &[bool],
        samples: &[u32],
        population: &[u32],
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
            inputs_covered: 0,
            inputs_not_covered: 0,
        });
        type Task = (usize, Vec<u32>, Vec<u32>, usize);
        let mut todo: Vec<Task> = vec![(0, samples.to_vec(), population.to_vec(), 0)];
        while let Some((at, here, everyone, depth)) = todo.pop() {
            let pos = here.iter().filter(|&&s| label[s as usize]).count() as u32;
            let n = here.len() as u32;
            let everyone_pos = everyone.iter().filter(|&&s| label[s as usize]).count() as u32;
            let leaf = Node::Leaf {
                covered: pos * 2 > n,
                support: n,
                correct: pos.max(n - pos),
                inputs_covered: everyone_pos,
                inputs_not_covered: everyone.len() as u32 - everyone_pos,
            };
            if depth >= max_depth || pos == 0 || pos == n {
                tree.nodes[at] = leaf;
                continue;
            }
            match counts.best_split(rows, label, &here, pos, &everyone) {
                None => tree.nodes[at] = leaf,
                Some(feature) => {
                    let has = |&&s: &&u32| rows[s as usize].binary_search(&feature).is_ok();
                    let (with, without): (Vec<u32>, Vec<u32>) = here.iter().partition(has);
                    let (all_with, all_without): (Vec<u32>, Vec<u32>) =
                        everyone.iter().partition(has);
                    let absent = tree.nodes.len();
                    tree.nodes.push(leaf.clone());
                    tree.nodes.push(leaf);
                    tree.nodes[at] = Node::Split {
                        feature,
                        absent: absent as u32,
                        present: absent as u32 + 1,
                    };
                    todo.push((absent, without, all_without, depth + 1));
                    todo.push((absent + 1, with, all_with, depth + 1));
                }
            }
        }
        tree
    }

    /// Checks a tree read from a file: a root, children after their parent and within
    /// the tree (so that every walk ends at a leaf), and feature ids below `n_features`.
    pub fn validate(&self, n_features: usize) -> Result<(), String> {
        if self.nodes.is_empty() {
            return Err("a tree has no nodes".into());
        }
        for (at, node) in self.nodes.iter().enumerate() {
            if let Node::Split {
                feature,
                absent,
                present,
            } = node
            {
                if *feature as usize >= n_features {
                    return Err(format!(
                        "node {at} asks about feature {feature}, but the model has {n_features} features"
                    ));
                }
                for child in [*absent, *present] {
                    if child as usize <= at || child as usize >= self.nodes.len() {
                        return Err(format!(
                            "node {at} has child {child}, outside nodes {}..{}",
                            at + 1,
                            self.nodes.len()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The leaf a row (sorted feature ids) reaches.
    pub fn leaf_of(&self, row: &[u32]) -> &Node {
        &self.nodes[self.leaf_index_of(row)]
    }

    /// The index of the leaf a row (sorted feature ids) reaches.
    pub fn leaf_index_of(&self, row: &[u32]) -> usize {
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
                Node::Leaf { .. } => return at,
            }
        }
    }

    /// Whether a row is predicted covered.
    pub fn predict(&self, row: &[u32]) -> bool {
        matches!(self.leaf_of(row), Node::Leaf { covered: true, .. })
    }

    /// Every leaf with the conditions on its way from the root (in root-to-leaf order).
    pub fn leaves(&self) -> Vec<(Vec<Condition>, &Node)> {
        self.indexed_leaves()
            .into_iter()
            .map(|(_, conditions, leaf)| (conditions, leaf))
            .collect()
    }

    /// Every leaf with its node index and the conditions on its way from the root.
    pub fn indexed_leaves(&self) -> Vec<(usize, Vec<Condition>, &Node)> {
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
                leaf => out.push((at, conditions, leaf)),
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
    /// The feature whose split lowers the Gini impurity most (`None` if none lowers it);
    /// ties go to the lower impurity on `everyone`, then to the lowest id.
    fn best_split(
        &mut self,
        rows: &[Vec<u32>],
        label: &[bool],
        samples: &[u32],
        pos: u32,
        everyone: &[u32],
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
        let mut tied: Vec<u32> = Vec::new();
        self.touched.sort_unstable();
        for &f in &self.touched {
            let (with, with_pos) = (self.present[f as usize], self.present_pos[f as usize]);
            if with as usize != samples.len() {
                let score = weighted(f64::from(with), f64::from(with_pos))
                    + weighted(n - f64::from(with), f64::from(pos - with_pos));
                if score < best - 1e-9 {
                    best = score;
                    tied.clear();
                    tied.push(f);
                } else if score <= best + 1e-9 && !tied.is_empty() {
                    tied.push(f);
                }
            }
            self.present[f as usize] = 0;
            self.present_pos[f as usize] = 0;
        }
        self.touched.clear();
        if tied.len() <= 1 {
            return tied.first().copied();
        }
        // Equally good on the sub-sample: the lowest impurity on everyone here.
        let all = everyone.len() as f64;
        let all_pos = everyone.iter().filter(|&&s| label[s as usize]).count() as f64;
        let score_on_all = |f: u32| {
            let (mut with, mut with_pos) = (0.0, 0.0);
            for &s in everyone {
                if rows[s as usize].binary_search(&f).is_ok() {
                    with += 1.0;
                    with_pos += f64::from(u8::from(label[s as usize]));
                }
            }
            weighted(with, with_pos) + weighted(all - with, all_pos - with_pos)
        };
        let mut choice = tied[0];
        let mut choice_score = score_on_all(choice);
        for &f in &tied[1..] {
            let score = score_on_all(f);
            if score < choice_score - 1e-9 {
                (choice, choice_score) = (f, score);
            }
        }
        Some(choice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_on_the_sub_sample_go_to_the_better_split_on_everyone() {
        // Features 0 and 1 separate the sub-sample {0, 1, 2, 3} alike; on everyone only
        // feature 1 is the class (input 4 has feature 0 and is not covered).
        let rows = vec![vec![0, 1], vec![0, 1], vec![], vec![], vec![0], vec![]];
        let label = [true, true, false, false, false, false];
        let tree = Tree::fit(&rows, &label, &[0, 1, 2, 3], &[0, 1, 2, 3, 4, 5], 2, 5);
        assert_eq!(tree.features().collect::<Vec<_>>(), vec![1]);
        let lowest = Tree::fit(&rows, &label, &[0, 1, 2, 3], &[0, 1, 2, 3], 2, 5);
        assert_eq!(lowest.features().collect::<Vec<_>>(), vec![0]);
    }

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
        let tree = Tree::fit(&rows, &label, &samples, &samples, 3, 5);
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
    fn leaves_count_all_training_inputs_by_class_not_only_the_sub_sample() {
        // Feature 0 marks the 3 covering inputs and 2 of the 17 others; the tree is
        // fitted on a balanced sub-sample of 6.
        let rows: Vec<Vec<u32>> = (0..20u32)
            .map(|i| if i < 5 { vec![0] } else { vec![] })
            .collect();
        let label: Vec<bool> = (0..20).map(|i| i < 3).collect();
        let everyone: Vec<u32> = (0..20).collect();
        let tree = Tree::fit(&rows, &label, &[0, 1, 2, 10, 11, 12], &everyone, 1, 5);
        let covering: Vec<&Node> = tree
            .leaves()
            .into_iter()
            .map(|(_, leaf)| leaf)
            .filter(|leaf| matches!(leaf, Node::Leaf { covered: true, .. }))
            .collect();
        assert_eq!(
            covering,
            vec![&Node::Leaf {
                covered: true,
                support: 3,
                correct: 3,
                inputs_covered: 3,
                inputs_not_covered: 2,
            }],
            "pure on the sub-sample, 3 of 5 on all inputs"
        );
    }

    #[test]
    fn depth_limit_and_pure_nodes_stop_growth() {
        let rows: Vec<Vec<u32>> = (0..8u32).map(|i| vec![i]).collect();
        let label: Vec<bool> = (0..8).map(|i| i % 2 == 0).collect();
        let samples: Vec<u32> = (0..8).collect();
        let tree = Tree::fit(&rows, &label, &samples, &samples, 8, 1);
        assert_eq!(tree.nodes.len(), 3, "one split");
        let pure = Tree::fit(&rows, &[true; 8], &samples, &samples, 8, 5);
        assert_eq!(pure.nodes.len(), 1);
    }
}
