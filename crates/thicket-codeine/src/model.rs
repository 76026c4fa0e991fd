//! The model: one decision tree per code location, over k-path features.

use crate::cart::{Condition, Node, Tree};
use crate::features::FeatureTable;
use crate::matrix::CoverageMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// Seeds the balancing sub-samples and the cross-validation folds.
    pub seed: u64,
    /// Folds of the cross-validation that measures each tree's prediction quality on
    /// inputs it was not fitted on (0: none).
    pub folds: u32,
}

impl Default for LearnConfig {
    fn default() -> LearnConfig {
        LearnConfig {
            k: 3,
            max_depth: 5,
            max_locations: 1000,
            seed: 0,
            folds: 5,
        }
    }
}

/// Below this many covering training inputs a location's tree is not to be trusted: a
/// depth-5 tree separates a handful of examples by whatever they happen to share (four
/// covering inputs gave a tree whose aimed inputs hit 1.5 % of the time), and each
/// cross-validation fold holds too few of them to say how well it predicts.
pub const MIN_POSITIVES: u32 = 20;

/// How well a tree predicts inputs it was not fitted on: the confusion counts of a
/// stratified k-fold cross-validation over the training inputs (each input predicted
/// by the tree fitted, the same way, on the other folds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    /// Folds (at most the number of covering inputs).
    pub folds: u32,
    /// Covering inputs predicted covered.
    pub true_positives: u32,
    /// Other inputs predicted covered.
    pub false_positives: u32,
    /// Other inputs predicted not covered.
    pub true_negatives: u32,
    /// Covering inputs predicted not covered.
    pub false_negatives: u32,
}

impl Validation {
    fn ratio(a: u32, b: u32) -> Option<f64> {
        (b > 0).then(|| f64::from(a) / f64::from(b))
    }

    /// Share of inputs predicted right (`None` without inputs).
    pub fn accuracy(&self) -> Option<f64> {
        let right = self.true_positives + self.true_negatives;
        Self::ratio(right, right + self.false_positives + self.false_negatives)
    }

    /// Share of inputs predicted covered that cover the location: what an aimed input's
    /// chance looks like if the tree's covering leaves describe the location (`None` if
    /// nothing was predicted covered).
    pub fn precision(&self) -> Option<f64> {
        Self::ratio(
            self.true_positives,
            self.true_positives + self.false_positives,
        )
    }

    /// Share of covering inputs predicted covered (`None` without covering inputs).
    pub fn recall(&self) -> Option<f64> {
        Self::ratio(
            self.true_positives,
            self.true_positives + self.false_negatives,
        )
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
    /// Its prediction quality on inputs it was not fitted on (`None`: not measured,
    /// fewer than two covering inputs, or a model written before it was).
    #[serde(default)]
    pub validation: Option<Validation>,
    /// Covering inputs kept per leaf that predicts "covered", for aimed inputs made by
    /// mutating them ([`crate::target`]); empty in a model learned once from a test
    /// suite, filled by the refinement loop, which has the inputs at hand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exemplars: Vec<Exemplars>,
    /// Feature paths no covering training input has although, were they unrelated to
    /// the location, several would ([`LocationModel::keep_blocked`]): every covering
    /// leaf's constraint forbids them besides its own conditions. Empty in a model
    /// learned once; filled by the refinement loop, whose aimed inputs that missed
    /// are the evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<u32>,
}

/// Covering training inputs that reach one leaf.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exemplars {
    /// The leaf's node index in the tree.
    pub leaf: u32,
    /// The inputs' texts.
    pub inputs: Vec<String>,
}

/// Covering inputs kept per leaf by [`LocationModel::keep_exemplars`].
pub const EXEMPLARS_PER_LEAF: usize = 32;

/// How many covering inputs a feature would be expected in, judged by its share
/// among the others, for its absence from all of them to block it
/// ([`LocationModel::keep_blocked`]). Were the feature unrelated to the location, none
/// of them having it would happen with a probability of about e^-5 (0.7 %).
pub const BLOCKING_EVIDENCE: f64 = 5.0;

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
            if let Some(f) = location
                .blocked
                .iter()
                .find(|&&f| f as usize >= self.features.len())
            {
                return Err(format!(
                    "location {}: blocked feature {f}, but the model has {} features",
                    location.name,
                    self.features.len()
                ));
            }
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
        let locations: Vec<LocationModel> = trainable
            .par_iter()
            .map(|&c| {
                let mut label = vec![false; rows.len()];
                for &j in &covered_by[c] {
                    label[j as usize] = true;
                }
                LocationModel::fit(
                    matrix.locations[c].clone(),
                    &rows,
                    &label,
                    n_features,
                    config,
                    c as u64,
                )
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

    /// Takes `location` (fitted over `features`, which may differ from this model's)
    /// into the model, replacing the location of the same name: its tree's features
    /// are renumbered into this model's, paths it lacks appended.
    pub fn adopt(&mut self, mut location: LocationModel, features: &[Vec<u32>]) {
        let mut ids: rustc_hash::FxHashMap<Vec<u32>, u32> = self
            .features
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect();
        let mut renumber = |feature: &mut u32| {
            let path = &features[*feature as usize];
            *feature = *ids.entry(path.clone()).or_insert_with(|| {
                self.features.push(path.clone());
                self.features.len() as u32 - 1
            });
        };
        for node in &mut location.tree.nodes {
            if let Node::Split { feature, .. } = node {
                renumber(feature);
            }
        }
        location.blocked.iter_mut().for_each(renumber);
        match self.locations.iter_mut().find(|l| l.name == location.name) {
            Some(old) => *old = location,
            None => {
                self.locations.push(location);
                self.locations.sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
    }

    /// The locations a row of features is predicted to cover (indices into
    /// `locations`).
    pub fn predict(&self, row: &[u32]) -> Vec<usize> {
        (0..self.locations.len())
            .filter(|&i| self.locations[i].tree.predict(row))
            .collect()
    }
}

impl LocationModel {
    /// Fits a location's tree to `rows` (each input's sorted feature ids, features
    /// below `n_features`) labelled `label` (covers the location or not), on a balanced
    /// sub-sample drawn from the seed and `salt`, and cross-validates it
    /// (`config.folds`).
    pub fn fit(
        name: String,
        rows: &[Vec<u32>],
        label: &[bool],
        n_features: usize,
        config: LearnConfig,
        salt: u64,
    ) -> LocationModel {
        let everyone: Vec<u32> = (0..rows.len() as u32).collect();
        let covered = label.iter().filter(|&&l| l).count() as u32;
        let tree = fit_on(rows, label, &everyone, n_features, config, salt);
        let validation = cross_validate(rows, label, n_features, config, salt);
        LocationModel {
            name,
            covered,
            inputs: rows.len() as u32,
            tree,
            validation,
            exemplars: Vec::new(),
            blocked: Vec::new(),
        }
    }

    /// Keeps as [`LocationModel::blocked`] the features that no covering input of
    /// `rows` (labelled `label`) has, while their share among the other inputs would
    /// put at least [`BLOCKING_EVIDENCE`] of them among the covering ones if having
    /// them did not matter. A tree names at most its depth's conditions on the way to
    /// a leaf; where reaching a location needs many things absent at once (every
    /// octet of an address in range, none empty), the misses of aimed inputs show
    /// each of them, and this keeps them all.
    pub fn keep_blocked(&mut self, rows: &[Vec<u32>], label: &[bool], n_features: usize) {
        let mut in_covering = vec![0u32; n_features];
        let mut in_others = vec![0u32; n_features];
        for (row, &covered) in rows.iter().zip(label) {
            let counts = if covered {
                &mut in_covering
            } else {
                &mut in_others
            };
            for &f in row {
                counts[f as usize] += 1;
            }
        }
        let covering = label.iter().filter(|&&l| l).count() as f64;
        let others = (label.len() as f64 - covering).max(1.0);
        self.blocked = (0..n_features as u32)
            .filter(|&f| {
                in_covering[f as usize] == 0
                    && covering * f64::from(in_others[f as usize]) / others >= BLOCKING_EVIDENCE
            })
            .collect();
    }

    /// Keeps, for each leaf predicting "covered", up to [`EXEMPLARS_PER_LEAF`] of the
    /// covering inputs that reach it (`rows`, `label` and `texts` in step; texts that
    /// are not UTF-8 are left out), spread evenly over them sorted by length, so that
    /// short and long ones are kept alike.
    pub fn keep_exemplars(&mut self, rows: &[Vec<u32>], label: &[bool], texts: &[&[u8]]) {
        let mut per_leaf: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for ((row, &covered), text) in rows.iter().zip(label).zip(texts) {
            if !covered {
                continue;
            }
            let leaf = self.tree.leaf_index_of(row);
            if !matches!(self.tree.nodes[leaf], Node::Leaf { covered: true, .. }) {
                continue;
            }
            if let Ok(text) = std::str::from_utf8(text) {
                per_leaf.entry(leaf).or_default().push(text);
            }
        }
        self.exemplars = per_leaf
            .into_iter()
            .map(|(leaf, mut inputs)| {
                inputs.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
                inputs.dedup();
                let n = inputs.len();
                let kept = n.min(EXEMPLARS_PER_LEAF);
                Exemplars {
                    leaf: leaf as u32,
                    inputs: (0..kept)
                        .map(|i| inputs[i * n / kept].to_string())
                        .collect(),
                }
            })
            .collect();
    }

    /// Whether the location has fewer covering training inputs than [`MIN_POSITIVES`].
    pub fn too_few_positives(&self) -> bool {
        self.covered < MIN_POSITIVES
    }
}

/// A tree fitted on the balanced sub-sample of `members` (indices into `rows`).
fn fit_on(
    rows: &[Vec<u32>],
    label: &[bool],
    members: &[u32],
    n_features: usize,
    config: LearnConfig,
    salt: u64,
) -> Tree {
    let member_labels: Vec<bool> = members.iter().map(|&i| label[i as usize]).collect();
    let samples: Vec<u32> = balanced(&member_labels, config.seed, salt)
        .into_iter()
        .map(|j| members[j as usize])
        .collect();
    Tree::fit(rows, label, &samples, members, n_features, config.max_depth)
}

/// Stratified k-fold cross-validation: the covering and the other inputs are each
/// shuffled (from the seed) and dealt round-robin into `config.folds` folds (fewer if
/// there are fewer covering inputs), so every fold holds its share of the rare class;
/// each fold is predicted by a tree fitted on the others. `None` with fewer than two
/// covering or two other inputs, or no folds asked for.
fn cross_validate(
    rows: &[Vec<u32>],
    label: &[bool],
    n_features: usize,
    config: LearnConfig,
    salt: u64,
) -> Option<Validation> {
    let (mut pos, mut neg): (Vec<u32>, Vec<u32>) =
        (0..label.len() as u32).partition(|&i| label[i as usize]);
    let folds = config.folds.min(pos.len() as u32).min(neg.len() as u32);
    if folds < 2 {
        return None;
    }
    let mut rng = Generator::rng_for(config.seed ^ 0xF01D_5EED, salt);
    for class in [&mut pos, &mut neg] {
        for i in (1..class.len()).rev() {
            let j = below(&mut rng, i as u32 + 1) as usize;
            class.swap(i, j);
        }
    }
    let mut fold_of = vec![0u32; label.len()];
    for class in [&pos, &neg] {
        for (n, &i) in class.iter().enumerate() {
            fold_of[i as usize] = n as u32 % folds;
        }
    }
    let mut v = Validation {
        folds,
        ..Validation::default()
    };
    for fold in 0..folds {
        let train: Vec<u32> = (0..label.len() as u32)
            .filter(|&i| fold_of[i as usize] != fold)
            .collect();
        let tree = fit_on(
            rows,
            label,
            &train,
            n_features,
            config,
            salt.wrapping_add(u64::from(fold + 1) << 32),
        );
        for i in (0..label.len()).filter(|&i| fold_of[i] == fold) {
            match (tree.predict(&rows[i]), label[i]) {
                (true, true) => v.true_positives += 1,
                (true, false) => v.false_positives += 1,
                (false, false) => v.true_negatives += 1,
                (false, true) => v.false_negatives += 1,
            }
        }
    }
    Some(v)
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
    /// The leaf's training support (on the balanced sub-sample).
    pub support: u32,
    /// The leaf's training samples of its class.
    pub correct: u32,
    /// All training inputs reaching the leaf that cover the location.
    #[serde(default)]
    pub inputs_covered: u32,
    /// All training inputs reaching the leaf that do not.
    #[serde(default)]
    pub inputs_not_covered: u32,
    /// Covering training inputs that reach the leaf (see [`LocationModel::exemplars`]):
    /// aimed inputs are made by mutating them where they can be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exemplars: Vec<String>,
}

impl PathConstraint {
    /// A leaf of one covering training input that requires `exists` and forbids
    /// `absent`, without exemplars: what the tests aim at.
    #[cfg(test)]
    pub(crate) fn of_one_input(exists: Vec<u32>, absent: Vec<u32>) -> PathConstraint {
        PathConstraint {
            exists,
            absent,
            support: 1,
            correct: 1,
            inputs_covered: 1,
            inputs_not_covered: 0,
            exemplars: Vec::new(),
        }
    }

    /// From a leaf's conditions.
    pub fn from_conditions(conditions: &[Condition], leaf: &Node) -> PathConstraint {
        let (support, correct, inputs_covered, inputs_not_covered) = match leaf {
            Node::Leaf {
                support,
                correct,
                inputs_covered,
                inputs_not_covered,
                ..
            } => (*support, *correct, *inputs_covered, *inputs_not_covered),
            Node::Split { .. } => (0, 0, 0, 0),
        };
        PathConstraint {
            exists: conditions.iter().filter(|c| c.1).map(|c| c.0).collect(),
            absent: conditions.iter().filter(|c| !c.1).map(|c| c.0).collect(),
            support,
            correct,
            inputs_covered,
            inputs_not_covered,
            exemplars: Vec::new(),
        }
    }

    /// The share of training inputs reaching the leaf that cover the location, with
    /// one of each class added (Laplace's rule), so that a leaf of two inputs does not
    /// outrank one of two hundred.
    pub fn smoothed_precision(&self) -> f64 {
        f64::from(self.inputs_covered + 1)
            / f64::from(self.inputs_covered + self.inputs_not_covered + 2)
    }

    /// The feasibility check of §5.3.2: infeasible if a required path contains a
    /// forbidden one (every input with the longer has the shorter).
    pub fn feasible(&self, features: &[Vec<u32>]) -> bool {
        !self
            .absent
            .iter()
            .any(|&a| self.requires_path_within(a, features))
    }

    /// Whether a required path contains feature `a`'s path.
    fn requires_path_within(&self, a: u32, features: &[Vec<u32>]) -> bool {
        self.exists.iter().any(|&e| {
            let (long, short) = (&features[e as usize], &features[a as usize]);
            short.len() <= long.len() && long.windows(short.len()).any(|w| w == &short[..])
        })
    }

    /// Forbids the `blocked` features too ([`LocationModel::blocked`]), but for any
    /// that a required path contains: those would make the constraint infeasible.
    pub fn forbid_also(&mut self, blocked: &[u32], features: &[Vec<u32>]) {
        for &b in blocked {
            if !self.absent.contains(&b) && !self.requires_path_within(b, features) {
                self.absent.push(b);
            }
        }
    }
}

impl LocationModel {
    /// The constraints of the leaves that predict "covered", feasible ones only, the
    /// most precise on all training inputs first (smoothed, see
    /// [`PathConstraint::smoothed_precision`]), then the best supported.
    pub fn constraints(&self, features: &[Vec<u32>]) -> Vec<PathConstraint> {
        let mut out: Vec<PathConstraint> = self
            .tree
            .indexed_leaves()
            .into_iter()
            .filter(|(_, _, leaf)| matches!(leaf, Node::Leaf { covered: true, .. }))
            .map(|(at, c, leaf)| PathConstraint {
                exemplars: self
                    .exemplars
                    .iter()
                    .find(|e| e.leaf as usize == at)
                    .map(|e| e.inputs.clone())
                    .unwrap_or_default(),
                ..PathConstraint::from_conditions(&c, leaf)
            })
            .filter(|c| c.feasible(features))
            .map(|mut c| {
                c.forbid_also(&self.blocked, features);
                c
            })
            .collect();
        out.sort_by(|a, b| {
            b.smoothed_precision()
                .total_cmp(&a.smoothed_precision())
                .then_with(|| (b.correct, b.support).cmp(&(a.correct, a.support)))
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leaf of one training input, predicting `covered`.
    fn leaf(covered: bool) -> Node {
        Node::Leaf {
            covered,
            support: 1,
            correct: 1,
            inputs_covered: 1,
            inputs_not_covered: 0,
        }
    }

    #[test]
    fn a_required_path_containing_a_forbidden_one_is_infeasible() {
        let features = vec![vec![1, 2, 3], vec![1, 2], vec![2, 3], vec![4]];
        let c = PathConstraint::of_one_input;
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
                validation: None,
                exemplars: Vec::new(),
                blocked: Vec::new(),
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
    fn cross_validation_shows_what_the_training_set_hides() {
        // Every input has a feature of its own, and the labels are noise: a tree that
        // memorises its inputs is right on all of them and predicts nothing.
        let n = 200u32;
        let rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i]).collect();
        let label: Vec<bool> = (0..n).map(|i| (i * 7919) % 13 < 4).collect();
        let config = LearnConfig {
            max_depth: 64,
            ..LearnConfig::default()
        };
        let location = LocationModel::fit("f".into(), &rows, &label, n as usize, config, 1);
        let v = location.validation.expect("cross-validated");
        assert_eq!(v.folds, 5);
        let total = v.true_positives + v.false_positives + v.true_negatives + v.false_negatives;
        assert_eq!(total, n, "every input predicted once");
        assert!(v.recall().unwrap() < 0.2, "{v:?}");
        // One with a real signal: feature 0 is the class.
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                if label[i as usize] {
                    vec![0, i + 1]
                } else {
                    vec![i + 1]
                }
            })
            .collect();
        let location = LocationModel::fit("g".into(), &rows, &label, n as usize + 1, config, 1);
        let v = location.validation.unwrap();
        assert_eq!(v.accuracy(), Some(1.0), "{v:?}");
        // Too few covering inputs for folds: not measured rather than made up.
        let one: Vec<bool> = (0..n).map(|i| i == 0).collect();
        let location = LocationModel::fit("h".into(), &rows, &one, n as usize + 1, config, 1);
        assert_eq!(location.validation, None);
        assert!(location.too_few_positives());
    }

    #[test]
    fn an_adopted_location_is_renumbered_into_the_models_features() {
        let mut model = Model {
            spec: "t.fan".into(),
            grammar: 0,
            k: 2,
            executor: "test".into(),
            features: vec![vec![1], vec![2, 3]],
            skipped: 0,
            locations: vec![],
        };
        let fitted = |name: &str, feature| LocationModel {
            name: name.into(),
            covered: 30,
            inputs: 60,
            tree: Tree {
                nodes: vec![
                    Node::Split {
                        feature,
                        absent: 1,
                        present: 2,
                    },
                    leaf(false),
                    leaf(true),
                ],
            },
            validation: None,
            exemplars: Vec::new(),
            blocked: Vec::new(),
        };
        // Its own features: [2, 3] (known to the model) and [4, 5, 6] (new).
        let own = vec![vec![4, 5, 6], vec![2, 3]];
        model.adopt(fitted("f", 1), &own);
        assert_eq!(
            model.locations[0].tree.features().collect::<Vec<_>>(),
            vec![1]
        );
        model.adopt(fitted("f", 0), &own);
        assert_eq!(model.locations.len(), 1, "replaced, not added");
        assert_eq!(model.features[2], vec![4, 5, 6]);
        assert_eq!(
            model.locations[0].tree.features().collect::<Vec<_>>(),
            vec![2]
        );
        // Its blocked paths are renumbered alike, and a file naming one the model
        // lacks is refused.
        model.adopt(
            LocationModel {
                blocked: vec![1, 0],
                ..fitted("f", 0)
            },
            &own,
        );
        assert_eq!(model.locations[0].blocked, vec![1, 2]);
        model.k = 3;
        let grammar = thicket_grammar::load_spec_text(
            "t.fan",
            b"<start> ::= \"a\" \"b\" \"c\" \"d\" \"e\" \"f\"",
        )
        .unwrap();
        assert_eq!(model.validate(&grammar), Ok(()));
        model.locations[0].blocked.push(9);
        assert!(
            model
                .validate(&grammar)
                .unwrap_err()
                .contains("blocked feature 9")
        );
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
