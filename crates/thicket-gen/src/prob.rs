//! Probabilistic grammars: weights for the generator's choices, learned from sample
//! derivation trees ("Inputs from Hell", FdLoop's grammar gene).
//!
//! A [`Weights`] gives every alternative of every alternation a weight, and every
//! repetition a weight per count; [`Generator::generate_tree_weighted`](crate::Generator)
//! draws by them among what fits the limits. [`Counts`] tallies which alternative and
//! which count each node of sample trees took; [`Weights::learn`] turns counts into
//! probabilities with additive smoothing, so an alternative the samples never took keeps
//! a small probability (without it, learning from one input would freeze the language).
//!
//! Decisions:
//! - **Smoothing** is additive (Laplace with `alpha`, default [`DEFAULT_SMOOTHING`] = 1):
//!   `p = (count + alpha) / (total + alpha * n)`; `alpha = 0` gives the plain frequencies.
//! - **Repetition counts** are learned over `min..=upper`, where `upper` is the
//!   quantifier's maximum, or for unbounded ones the larger of the greatest count seen and
//!   `min +` [`DEFAULT_REPETITIONS`]; the generator caps them again at its
//!   `max_repetitions` (counts over it get no weight).
//! - **Choices the samples never reached** keep their previous weights when a previous
//!   model is given (FdLoop relearning from one input), else they are uniform.
//! - **Inversion** ([`Weights::inverted`], "inputs from hell") gives each option a weight
//!   proportional to `1 / p`, renormalised; smoothing keeps every `p` above zero.
//! - **The JSON form** ([`Weights::to_json`], documented in `docs/json-output.md`) is
//!   keyed by rule name, then by each choice's text in spec syntax, then by alternative
//!   text or count; a text repeated inside one rule gets `#2`, `#3`, ... appended.
//! - **Whitespace rules** ([`Weights::quiet_whitespace`]): a spec's rules that only
//!   ever make whitespace (`<ws> ::= (" " | "\t")*`; the separators of
//!   `thicket_grammar::tokens`) are where uniform choices pile up blanks (a TOML-like
//!   spec's inputs were 72% blanks). Generation lets each choice inside them take its
//!   smallest option (a repetition its minimum count, an alternation its empty
//!   alternative) but with probability [`DEFAULT_WHITESPACE_PROBABILITY`], as an
//!   ANTLR grammar's hidden text is drawn; when more is drawn, it is one more nine
//!   times in ten. The language is unchanged: every blank the grammar allows can
//!   still come out, only less often. Probabilities the spec gives itself win.

use crate::Generator;
use serde_json::{Map, Value, json};
use thicket_grammar::{Expr, ExprId, Grammar, SymbolId};
use thicket_tree::{DerivationTree, NodeId};

/// Default additive smoothing of [`Weights::learn`].
pub const DEFAULT_SMOOTHING: f64 = 1.0;

/// Counts learned for an unbounded repetition beyond its minimum, if the samples saw
/// none larger (Fandango's default repetition cap).
pub const DEFAULT_REPETITIONS: u32 = 5;

/// The probability that a choice inside a whitespace rule takes more than its smallest
/// option in generated inputs (see the module docs; the option to raise it is for
/// fuzzing what reads blanks).
pub const DEFAULT_WHITESPACE_PROBABILITY: f64 = 0.05;

/// How often sample trees took each alternative and each repetition count.
#[derive(Clone, Debug)]
pub struct Counts {
    /// Per expression: times it was the chosen alternative of its alternation.
    alt: Vec<u64>,
    /// Per repetition expression: times each count occurred (index = count).
    rep: Vec<Vec<u64>>,
    /// Trees added.
    trees: u64,
}

impl Counts {
    /// No counts yet.
    pub fn new(grammar: &Grammar) -> Counts {
        Counts {
            alt: vec![0; grammar.expr_count()],
            rep: vec![Vec::new(); grammar.expr_count()],
            trees: 0,
        }
    }

    /// Adds the choices of one derivation tree of `grammar`.
    pub fn add_tree(&mut self, grammar: &Grammar, tree: &DerivationTree) {
        self.trees += 1;
        for index in 0..tree.len() {
            let node = NodeId::from_index(index);
            match grammar.expr(tree.expr(node)) {
                Expr::Alt(_) => {
                    if let Some(child) = tree.children(node).next() {
                        self.alt[tree.expr(child).index()] += 1;
                    }
                }
                Expr::Repeat(_) => {
                    let n = tree.children(node).count();
                    let counts = &mut self.rep[tree.expr(node).index()];
                    if counts.len() <= n {
                        counts.resize(n + 1, 0);
                    }
                    counts[n] += 1;
                }
                _ => {}
            }
        }
    }

    /// Trees added.
    pub fn trees(&self) -> u64 {
        self.trees
    }

    /// Times `alternative` was chosen.
    pub fn alternative(&self, alternative: ExprId) -> u64 {
        self.alt[alternative.index()]
    }

    /// Times the repetition `repeat` repeated `count` times.
    pub fn repetition(&self, repeat: ExprId, count: u32) -> u64 {
        self.rep[repeat.index()]
            .get(count as usize)
            .copied()
            .unwrap_or(0)
    }
}

/// Weights of the generator's choices: per alternative of each alternation, and per
/// count of each repetition (the probabilities of a probabilistic grammar when learned).
/// Weights of one alternation need not sum to 1; the generator draws in proportion.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// Per expression: its weight as an alternative (1 for uniform).
    alt: Vec<f64>,
    /// Per repetition expression: weight of each count (index = count); empty: uniform.
    rep: Vec<Vec<f64>>,
}

/// The alternations and repetitions of a rule's body (not through references), in
/// preorder: the choices that rule owns.
pub fn choices_of(grammar: &Grammar, symbol: SymbolId) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut stack = vec![grammar.rule(symbol).body];
    while let Some(id) = stack.pop() {
        let expr = grammar.expr(id);
        if matches!(expr, Expr::Alt(_) | Expr::Repeat(_)) {
            out.push(id);
        }
        if !matches!(expr, Expr::Ref(_)) {
            stack.extend(expr.children().iter().rev());
        }
    }
    out
}

/// `min..=upper` of the counts a repetition's weights cover, given the largest count seen.
fn count_range(grammar: &Grammar, repeat: ExprId, seen_max: usize) -> (u32, u32) {
    let Expr::Repeat(r) = grammar.expr(repeat) else {
        unreachable!("a repetition")
    };
    let upper = r.max.unwrap_or_else(|| {
        (seen_max as u32)
            .max(r.min.saturating_add(DEFAULT_REPETITIONS))
            .max(r.min)
    });
    (r.min, upper.max(r.min))
}

/// Why a probabilities file cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct WeightsError(pub String);

impl Weights {
    /// Every choice uniform (the generator's behaviour without weights).
    pub fn uniform(grammar: &Grammar) -> Weights {
        Weights {
            alt: vec![1.0; grammar.expr_count()],
            rep: vec![Vec::new(); grammar.expr_count()],
        }
    }

    /// The probabilities the spec gives (fuzzingbook JSON grammars' `prob` options,
    /// [`Grammar::default_probabilities`]), `None` if it gives none. As in fuzzingbook,
    /// the alternatives of an alternation without one share what the others leave
    /// (nothing if they take 1 or more).
    pub fn from_spec(grammar: &Grammar) -> Option<Weights> {
        let given = grammar.default_probabilities();
        if given.is_empty() {
            return None;
        }
        let mut weights = Weights::uniform(grammar);
        for id in grammar.expr_ids() {
            let Expr::Alt(alts) = grammar.expr(id) else {
                continue;
            };
            let of = |a: &ExprId| given.iter().find(|(e, _)| e == a).map(|&(_, p)| p);
            if alts.iter().all(|a| of(a).is_none()) {
                continue;
            }
            let taken: f64 = alts.iter().filter_map(of).sum();
            let free = alts.iter().filter(|a| of(a).is_none()).count();
            let rest = if free > 0 {
                (1.0 - taken).max(0.0) / free as f64
            } else {
                0.0
            };
            for a in alts.iter() {
                weights.alt[a.index()] = of(a).unwrap_or(rest);
            }
            weights.normalise_alt(alts);
        }
        Some(weights)
    }

    /// Probabilities from `counts` with additive smoothing `alpha` (see the module docs);
    /// choices never reached keep their weights in `previous` (normalised), else uniform.
    pub fn learn(
        grammar: &Grammar,
        counts: &Counts,
        alpha: f64,
        previous: Option<&Weights>,
    ) -> Weights {
        let mut weights = match previous {
            Some(p) => p.clone(),
            None => Weights::uniform(grammar),
        };
        for id in grammar.expr_ids() {
            match grammar.expr(id) {
                Expr::Alt(alts) => {
                    let total: u64 = alts.iter().map(|a| counts.alt[a.index()]).sum();
                    if total == 0 {
                        weights.normalise_alt(alts);
                        continue;
                    }
                    let denominator = total as f64 + alpha * alts.len() as f64;
                    for a in alts.iter() {
                        weights.alt[a.index()] =
                            (counts.alt[a.index()] as f64 + alpha) / denominator;
                    }
                }
                Expr::Repeat(_) => {
                    let seen = &counts.rep[id.index()];
                    let total: u64 = seen.iter().sum();
                    if total == 0 {
                        weights.normalise_rep(id);
                        continue;
                    }
                    let (min, upper) = count_range(grammar, id, seen.len().saturating_sub(1));
                    let n = f64::from(upper - min + 1);
                    let denominator = total as f64 + alpha * n;
                    let mut row = vec![0.0; upper as usize + 1];
                    for (count, slot) in row.iter_mut().enumerate().skip(min as usize) {
                        *slot =
                            (seen.get(count).copied().unwrap_or(0) as f64 + alpha) / denominator;
                    }
                    weights.rep[id.index()] = row;
                }
                _ => {}
            }
        }
        weights
    }

    fn normalise_alt(&mut self, alts: &[ExprId]) {
        let total: f64 = alts.iter().map(|a| self.alt[a.index()]).sum();
        if total > 0.0 && total.is_finite() {
            for a in alts {
                self.alt[a.index()] /= total;
            }
        } else {
            for a in alts {
                self.alt[a.index()] = 1.0 / alts.len() as f64;
            }
        }
    }

    fn normalise_rep(&mut self, id: ExprId) {
        let row = &mut self.rep[id.index()];
        let total: f64 = row.iter().sum();
        if total > 0.0 && total.is_finite() {
            row.iter_mut().for_each(|w| *w /= total);
        } else {
            row.clear();
        }
    }

    /// The "inputs from hell" inversion: each option of each choice weighted by `1 / p`,
    /// renormalised (options with weight 0 stay 0; uniform choices stay uniform).
    pub fn inverted(&self, grammar: &Grammar) -> Weights {
        let mut out = self.clone();
        for id in grammar.expr_ids() {
            match grammar.expr(id) {
                Expr::Alt(alts) => {
                    for a in alts.iter() {
                        let w = self.alt[a.index()];
                        out.alt[a.index()] = if w > 0.0 { 1.0 / w } else { 0.0 };
                    }
                    out.normalise_alt(alts);
                }
                Expr::Repeat(_) => {
                    for w in out.rep[id.index()].iter_mut() {
                        *w = if *w > 0.0 { 1.0 / *w } else { 0.0 };
                    }
                    out.normalise_rep(id);
                }
                _ => {}
            }
        }
        out
    }

    /// FdLoop's grammar mutation: every choice of `symbol`'s body becomes uniform.
    pub fn reset_rule(&mut self, grammar: &Grammar, symbol: SymbolId) {
        for id in choices_of(grammar, symbol) {
            match grammar.expr(id) {
                Expr::Alt(alts) => {
                    for a in alts.iter() {
                        self.alt[a.index()] = 1.0 / alts.len() as f64;
                    }
                }
                _ => self.rep[id.index()].clear(),
            }
        }
    }

    /// Weights under which the choices in the bodies of `rules` (a spec's whitespace
    /// rules, `thicket_grammar::tokens::separator_rules`) take their smallest option
    /// but with probability `p` (see the module docs):
    /// - a repetition its minimum count; else one more nine times in ten, else any
    ///   larger count alike, up to the count the generator caps it at (its maximum,
    ///   or `max(min, max_repetitions)` for the generator's `max_repetitions`);
    /// - an alternation with an empty alternative (`"" | r"[ \t]+"`) an empty one;
    ///   else the others alike. Alternations without one choose between blanks the
    ///   grammar needs (`"\r\n" | "\n"`) and stay as they are, as do those whose
    ///   alternatives the spec gives probabilities.
    ///
    /// A regex terminal's own repetitions are not choices of the grammar: a rule
    /// `<ws> ::= r"[ \t]*"` draws its blanks as before.
    /// `analysis` is the grammar's (the generator's: [`Generator::analysis`]).
    pub fn quiet_whitespace(
        &mut self,
        grammar: &Grammar,
        analysis: &thicket_grammar::Analysis,
        rules: &[SymbolId],
        p: f64,
        max_repetitions: u32,
    ) {
        let p = p.clamp(0.0, 1.0);
        let given = grammar.default_probabilities();
        for &rule in rules {
            for id in choices_of(grammar, rule) {
                match grammar.expr(id) {
                    Expr::Alt(alts) => {
                        if alts.iter().any(|a| given.iter().any(|(e, _)| e == a)) {
                            continue;
                        }
                        let empty = |a: &ExprId| analysis.expr_min_len(*a) == 0;
                        let empties = alts.iter().filter(|a| empty(a)).count();
                        if empties == 0 || empties == alts.len() {
                            continue;
                        }
                        let others = alts.len() - empties;
                        for a in alts.iter() {
                            self.alt[a.index()] = if empty(a) {
                                (1.0 - p) / empties as f64
                            } else {
                                p / others as f64
                            };
                        }
                    }
                    Expr::Repeat(r) => {
                        let (min, cap) = (r.min, r.min.max(max_repetitions));
                        let upper = r.max.map_or(cap, |max| max.min(cap));
                        if upper <= min {
                            continue;
                        }
                        let mut row = vec![0.0; upper as usize + 1];
                        row[min as usize] = 1.0 - p;
                        if upper == min + 1 {
                            row[upper as usize] = p;
                        } else {
                            row[min as usize + 1] = 0.9 * p;
                            let larger = (upper - min - 1) as f64;
                            for slot in &mut row[min as usize + 2..] {
                                *slot = 0.1 * p / larger;
                            }
                        }
                        self.rep[id.index()] = row;
                    }
                    _ => {}
                }
            }
        }
    }

    /// The weight of `alternative` (an alternative of some alternation).
    pub fn alternative(&self, alternative: ExprId) -> f64 {
        self.alt[alternative.index()]
    }

    /// The weight of count `count` of `repeat`, `None` if its counts are uniform.
    pub fn repetition(&self, repeat: ExprId, count: u32) -> Option<f64> {
        let row = &self.rep[repeat.index()];
        (!row.is_empty()).then(|| row.get(count as usize).copied().unwrap_or(0.0))
    }

    /// The per-count weights of `repeat` (index = count), empty for uniform.
    pub(crate) fn repetition_row(&self, repeat: ExprId) -> &[f64] {
        &self.rep[repeat.index()]
    }

    /// Sets the weight of `alternative` (e.g. from a fuzzingbook grammar's `prob`).
    pub fn set_alternative(&mut self, alternative: ExprId, weight: f64) {
        self.alt[alternative.index()] = weight;
    }

    /// Sets the weights of the counts of `repeat` (index = count; counts past the
    /// row's end weigh nothing); an empty row makes its counts uniform again.
    pub fn set_repetition(&mut self, repeat: ExprId, row: Vec<f64>) {
        self.rep[repeat.index()] = row;
    }

    /// The weights as readable JSON (see the module docs and `docs/json-output.md`):
    /// `{"format", "smoothing", "samples", "rules": {"<rule>": {"choice text":
    /// {"alternative text" | "count": probability}}}}`.
    pub fn to_json(&self, grammar: &Grammar, smoothing: f64, samples: u64) -> Value {
        let mut rules = Map::new();
        for symbol in grammar.symbols() {
            let mut choices = Map::new();
            for id in choices_of(grammar, symbol) {
                let mut options = Map::new();
                match grammar.expr(id) {
                    Expr::Alt(alts) => {
                        let total: f64 = alts.iter().map(|a| self.alt[a.index()]).sum();
                        for a in alts.iter() {
                            let key = unique_key(&options, grammar.display_expr(*a));
                            options.insert(key, json!(round(self.alt[a.index()] / total)));
                        }
                    }
                    _ => {
                        let row = &self.rep[id.index()];
                        if row.is_empty() {
                            continue;
                        }
                        for (count, w) in row.iter().enumerate() {
                            if *w > 0.0 {
                                options.insert(count.to_string(), json!(round(*w)));
                            }
                        }
                    }
                }
                let key = unique_key(&choices, grammar.display_expr(id));
                choices.insert(key, Value::Object(options));
            }
            if !choices.is_empty() {
                rules.insert(grammar.display_symbol(symbol), Value::Object(choices));
            }
        }
        json!({
            "format": "thicket-probabilities/1",
            "smoothing": smoothing,
            "samples": samples,
            "rules": rules,
        })
    }

    /// Reads a probabilities file (the JSON of [`Weights::to_json`], as `thicket learn`
    /// writes it) for `grammar`, inverted with `inverse` ([`Weights::inverted`]); an
    /// error says why, without the file's name.
    pub fn read_file(
        path: &std::path::Path,
        grammar: &Grammar,
        inverse: bool,
    ) -> Result<Weights, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let value: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
        let weights = Weights::from_json(grammar, &value).map_err(|e| e.to_string())?;
        Ok(if inverse {
            weights.inverted(grammar)
        } else {
            weights
        })
    }

    /// Reads the JSON of [`Weights::to_json`] for `grammar`: every rule and choice named
    /// must exist with the same text; choices not named stay uniform. Errors name the
    /// rule and choice.
    pub fn from_json(grammar: &Grammar, value: &Value) -> Result<Weights, WeightsError> {
        let err = |m: String| WeightsError(m);
        let rules = value
            .get("rules")
            .and_then(Value::as_object)
            .ok_or_else(|| err("expected an object with a \"rules\" object".into()))?;
        let mut weights = Weights::uniform(grammar);
        for (rule, choices) in rules {
            let name = rule
                .strip_prefix('<')
                .and_then(|r| r.strip_suffix('>'))
                .unwrap_or(rule);
            let symbol = grammar
                .symbol(name)
                .ok_or_else(|| err(format!("rule {rule} is not in the grammar")))?;
            let choices = choices
                .as_object()
                .ok_or_else(|| err(format!("{rule}: expected an object of choices")))?;
            let mut keyed = Map::new();
            let mut ids = Vec::new();
            for id in choices_of(grammar, symbol) {
                let key = unique_key(&keyed, grammar.display_expr(id));
                keyed.insert(key.clone(), Value::Null);
                ids.push((key, id));
            }
            for (key, options) in choices {
                let Some(&(_, id)) = ids.iter().find(|(k, _)| k == key) else {
                    return Err(err(format!(
                        "{rule}: no choice `{key}` in this rule (its choices: {})",
                        ids.iter()
                            .map(|(k, _)| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                };
                let options = options
                    .as_object()
                    .ok_or_else(|| err(format!("{rule}: `{key}`: expected an object")))?;
                let number = |option: &str, v: &Value| {
                    v.as_f64()
                        .filter(|p| p.is_finite() && *p >= 0.0)
                        .ok_or_else(|| {
                            err(format!(
                                "{rule}: `{key}`: `{option}`: expected a number >= 0, found {v}"
                            ))
                        })
                };
                match grammar.expr(id) {
                    Expr::Alt(alts) => {
                        let mut seen = Map::new();
                        let mut named = Vec::new();
                        for a in alts.iter() {
                            let k = unique_key(&seen, grammar.display_expr(*a));
                            seen.insert(k.clone(), Value::Null);
                            named.push((k, *a));
                        }
                        for (option, v) in options {
                            let Some(&(_, a)) = named.iter().find(|(k, _)| k == option) else {
                                return Err(err(format!(
                                    "{rule}: `{key}` has no alternative `{option}`"
                                )));
                            };
                            weights.alt[a.index()] = number(option, v)?;
                        }
                        // Alternatives not named keep weight 0 only if others are named.
                        for (k, a) in &named {
                            if !options.contains_key(k) {
                                weights.alt[a.index()] = 0.0;
                            }
                        }
                        weights.normalise_alt(alts);
                    }
                    _ => {
                        let mut row = Vec::new();
                        for (option, v) in options {
                            let count: usize = option.parse().map_err(|_| {
                                err(format!(
                                    "{rule}: `{key}`: `{option}` is not a repetition count"
                                ))
                            })?;
                            if count > 1 << 20 {
                                return Err(err(format!(
                                    "{rule}: `{key}`: count {count} is too large"
                                )));
                            }
                            if row.len() <= count {
                                row.resize(count + 1, 0.0);
                            }
                            row[count] = number(option, v)?;
                        }
                        weights.rep[id.index()] = row;
                        weights.normalise_rep(id);
                    }
                }
            }
        }
        Ok(weights)
    }
}

/// `text`, or `text#2`, `text#3`, ... if `map` has it already.
fn unique_key(map: &Map<String, Value>, text: String) -> String {
    if !map.contains_key(&text) {
        return text;
    }
    (2..)
        .map(|i| format!("{text}#{i}"))
        .find(|k| !map.contains_key(k))
        .expect("some suffix is free")
}

/// Six significant decimals: readable files, and equal files for equal models.
fn round(p: f64) -> f64 {
    (p * 1e6).round() / 1e6
}

/// Learns weights from sample trees (a convenience over [`Counts`] and [`Weights::learn`]).
pub fn learn_from_trees<'t>(
    grammar: &Grammar,
    trees: impl IntoIterator<Item = &'t DerivationTree>,
    alpha: f64,
) -> (Weights, Counts) {
    let mut counts = Counts::new(grammar);
    for tree in trees {
        counts.add_tree(grammar, tree);
    }
    (Weights::learn(grammar, &counts, alpha, None), counts)
}

impl Generator<'_> {
    /// Whether `weights` were made for this generator's grammar.
    pub fn fits(&self, weights: &Weights) -> bool {
        weights.alt.len() == self.grammar().expr_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChoicePolicy, GenConfig};
    use thicket_grammar::load_spec_text;

    const SPEC: &str = "<start> ::= <item>*\n<item> ::= \"a\" | \"b\" | \"(\" <item>? \")\"\n";

    fn tree_of(grammar: &Grammar, text: &[u8]) -> DerivationTree {
        // Build the tree by generation under weights that force `text`: simpler to
        // search the stream for it.
        let generator = Generator::new(
            grammar,
            GenConfig {
                policy: ChoicePolicy::Uniform,
                ..GenConfig::default()
            },
        )
        .unwrap();
        (0..100_000)
            .map(|i| generator.generate_tree(&mut Generator::rng_for(9, i)).0)
            .find(|t| t.bytes() == text)
            .expect("the stream has it")
    }

    #[test]
    fn learned_probabilities_are_the_smoothed_sample_frequencies() {
        let g = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        // Per <item> node: "aab" takes a, a, b; "(a)" takes the parentheses and a.
        let trees = [tree_of(&g, b"aab"), tree_of(&g, b"(a)")];
        let (w, counts) = learn_from_trees(&g, trees.iter(), 0.0);
        let item = g.rule(g.symbol("item").unwrap()).body;
        let Expr::Alt(alts) = g.expr(item) else {
            panic!()
        };
        assert_eq!(
            alts.iter()
                .map(|a| counts.alternative(*a))
                .collect::<Vec<_>>(),
            [3, 1, 1]
        );
        let p: Vec<f64> = alts.iter().map(|a| w.alternative(*a)).collect();
        assert_eq!(p, [0.6, 0.2, 0.2]);
        // Smoothing alpha = 1: (3+1)/(5+3), (1+1)/8.
        let (w, _) = learn_from_trees(&g, trees.iter(), 1.0);
        let p: Vec<f64> = alts.iter().map(|a| w.alternative(*a)).collect();
        assert_eq!(p, [0.5, 0.25, 0.25]);
        // The start repetition repeated 3 and 1 times: unbounded, so counts 0..=5.
        let star = g.rule(g.start()).body;
        assert_eq!(counts.repetition(star, 3), 1);
        assert_eq!(w.repetition(star, 3), Some(2.0 / 8.0));
        assert_eq!(w.repetition(star, 0), Some(1.0 / 8.0));
        assert_eq!(w.repetition(star, 6), Some(0.0));
    }

    #[test]
    fn generation_under_learned_weights_reproduces_the_frequencies() {
        let g = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        let item = g.rule(g.symbol("item").unwrap()).body;
        let Expr::Alt(alts) = g.expr(item) else {
            panic!()
        };
        let mut w = Weights::uniform(&g);
        for (a, p) in alts.iter().zip([0.7, 0.2, 0.1]) {
            w.set_alternative(*a, p);
        }
        let generator = Generator::new(
            &g,
            GenConfig {
                policy: ChoicePolicy::Uniform,
                ..GenConfig::default()
            },
        )
        .unwrap();
        let trees: Vec<_> = (0..4000)
            .map(|i| {
                generator
                    .generate_tree_weighted(&mut Generator::rng_for(1, i), &w)
                    .0
            })
            .collect();
        let (learned, _) = learn_from_trees(&g, trees.iter(), 0.0);
        for (a, p) in alts.iter().zip([0.7, 0.2, 0.1]) {
            let got = learned.alternative(*a);
            assert!((got - p).abs() < 0.03, "{p} learned as {got}");
        }
    }

    #[test]
    fn json_round_trips_and_inversion_favours_the_rare() {
        let g = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        let trees = [tree_of(&g, b"aab")];
        let (w, _) = learn_from_trees(&g, trees.iter(), 1.0);
        let json = w.to_json(&g, 1.0, 1);
        assert_eq!(
            json["rules"]["<item>"]["\"a\" | \"b\" | \"(\" <item>? \")\""]["\"a\""],
            0.5
        );
        let back = Weights::from_json(&g, &json).unwrap();
        let item = g.rule(g.symbol("item").unwrap()).body;
        let Expr::Alt(alts) = g.expr(item) else {
            panic!()
        };
        for a in alts.iter() {
            assert!((back.alternative(*a) - w.alternative(*a)).abs() < 1e-6);
        }
        let inv = w.inverted(&g);
        // p = 3/6, 2/6, 1/6 -> 1/p = 2, 3, 6 -> 2/11, 3/11, 6/11.
        assert!((inv.alternative(alts[2]) - 6.0 / 11.0).abs() < 1e-9);
        let mut bad = json.clone();
        bad["rules"]["<item>"]["nope"] = json!({});
        let e = Weights::from_json(&g, &bad).unwrap_err();
        assert!(e.0.contains("<item>: no choice `nope`"), "{e}");
    }

    #[test]
    fn fuzzingbook_prob_options_become_the_default_weights() {
        let g = load_spec_text(
            "g.json",
            br#"{"<start>": ["<d>"], "<d>": [["1", {"prob": 0.7}], "2", "3"]}"#,
        )
        .unwrap();
        let w = Weights::from_spec(&g).unwrap();
        let Expr::Alt(alts) = g.expr(g.rule(g.symbol("d").unwrap()).body) else {
            panic!()
        };
        let p: Vec<f64> = alts.iter().map(|a| w.alternative(*a)).collect();
        assert!(
            (p[0] - 0.7).abs() < 1e-9 && (p[1] - 0.15).abs() < 1e-9,
            "{p:?}"
        );
        let plain = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        assert!(Weights::from_spec(&plain).is_none());
    }

    #[test]
    fn reset_makes_a_rule_uniform_and_unseen_rules_keep_previous_weights() {
        let g = load_spec_text("t.fan", SPEC.as_bytes()).unwrap();
        let item = g.rule(g.symbol("item").unwrap()).body;
        let Expr::Alt(alts) = g.expr(item) else {
            panic!()
        };
        let mut w = Weights::uniform(&g);
        w.set_alternative(alts[0], 8.0);
        w.set_alternative(alts[1], 1.0);
        w.set_alternative(alts[2], 1.0);
        // A tree without <item>: the rule keeps its (normalised) weights.
        let empty = tree_of(&g, b"");
        let mut counts = Counts::new(&g);
        counts.add_tree(&g, &empty);
        let learned = Weights::learn(&g, &counts, 1.0, Some(&w));
        assert!((learned.alternative(alts[0]) - 0.8).abs() < 1e-9);
        let mut reset = learned.clone();
        reset.reset_rule(&g, g.symbol("item").unwrap());
        assert!((reset.alternative(alts[0]) - 1.0 / 3.0).abs() < 1e-9);
    }

    /// A TOML-like spec whose whitespace rules are where uniform choices pile up
    /// blanks.
    const SPACED: &str = r##"
<start> ::= <ws> (<line> <nl>)*
<line> ::= <ws> (<pair> | <table>) <ws> <comment>?
<table> ::= "[" <ws> <key> <ws> "]"
<pair> ::= <key> <ws> "=" <ws> <value>
<key> ::= ("a" | "b" | "x")+
<value> ::= <digit>+ | "true" | "[" <ws> (<value> <ws> ("," <ws> <value> <ws>)*)? "]"
<digit> ::= "0" | "1" | "7"
<comment> ::= "#" ("a" | "b")*
<ws> ::= (" " | "\t")*
<nl> ::= "\n" <blank>*
<blank> ::= <ws> "\n"
<opt> ::= "" | " " | "  "
<eol> ::= "\r\n" | "\n"
"##;

    /// Per count of all inputs, the share of their bytes that are blanks, and whether
    /// some input had a blank that no whitespace rule's minimum needs.
    fn blank_share(grammar: &Grammar, weights: Option<&Weights>) -> (f64, bool) {
        let generator = Generator::new(grammar, GenConfig::default()).unwrap();
        let (mut blanks, mut total, mut spare) = (0usize, 0usize, false);
        let mut out = Vec::new();
        for i in 0..2000 {
            out.clear();
            let mut rng = Generator::rng_for(1, i);
            match weights {
                Some(w) => generator.generate_bytes_weighted(&mut rng, &mut out, w),
                None => generator.generate_bytes(&mut rng, &mut out),
            };
            total += out.len();
            blanks += out.iter().filter(|&&b| b == b' ' || b == b'\t').count();
            spare |= out.windows(2).any(|w| w == b"\n\n") || out.starts_with(b" ");
        }
        (blanks as f64 / total.max(1) as f64, spare)
    }

    #[test]
    fn whitespace_rules_take_their_minimum_but_now_and_then() {
        let g = load_spec_text("t.fan", SPACED.as_bytes()).unwrap();
        let rules = thicket_grammar::tokens::separator_rules(&g);
        let analysis = thicket_grammar::Analysis::new(&g);
        let names: Vec<&str> = rules.iter().map(|&s| g.rule(s).name.as_str()).collect();
        assert_eq!(names, ["ws", "nl", "blank", "opt", "eol"]);

        let quiet = |p: f64| {
            let mut w = Weights::uniform(&g);
            w.quiet_whitespace(
                &g,
                &analysis,
                &rules,
                p,
                GenConfig::default().max_repetitions,
            );
            w
        };
        let w = quiet(DEFAULT_WHITESPACE_PROBABILITY);
        // `(" " | "\t")*`: the minimum, one more nine times in ten of the rest, then
        // the larger counts alike; the alternation inside is equally short and stays.
        let ws = g.rule(g.symbol("ws").unwrap()).body;
        // The generator caps `*` at 5 by default.
        let row: Vec<f64> = (0..=6).map(|c| w.repetition(ws, c).unwrap()).collect();
        let p = DEFAULT_WHITESPACE_PROBABILITY;
        let larger = 0.1 * p / 4.0;
        let expected = [1.0 - p, 0.9 * p, larger, larger, larger, larger, 0.0];
        for (got, want) in row.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{row:?}");
        }
        // A higher cap spreads the larger counts further.
        let mut wide = Weights::uniform(&g);
        wide.quiet_whitespace(&g, &analysis, &rules, p, 50);
        assert!((wide.repetition(ws, 50).unwrap() - 0.1 * p / 49.0).abs() < 1e-12);
        let Expr::Repeat(r) = g.expr(ws) else {
            panic!()
        };
        let Expr::Alt(blanks) = g.expr(r.item) else {
            panic!()
        };
        assert!(blanks.iter().all(|&a| w.alternative(a) == 1.0));
        // `"" | " " | "  "`: the empty alternative, else the others alike; `"\r\n" |
        // "\n"` has none: both are line breaks the grammar needs.
        let Expr::Alt(opt) = g.expr(g.rule(g.symbol("opt").unwrap()).body) else {
            panic!()
        };
        let weights: Vec<f64> = opt.iter().map(|&a| w.alternative(a)).collect();
        assert_eq!(weights, [1.0 - p, p / 2.0, p / 2.0]);
        let Expr::Alt(eol) = g.expr(g.rule(g.symbol("eol").unwrap()).body) else {
            panic!()
        };
        assert!(eol.iter().all(|&a| w.alternative(a) == 1.0));

        // Uniform choices make inputs of mostly blanks; the whitespace weights few,
        // and still every blank the grammar allows now and then.
        let (uniform, _) = blank_share(&g, None);
        let (quieted, spare) = blank_share(&g, Some(&w));
        assert!(uniform > 0.4, "uniform choices: {uniform}");
        assert!(quieted < 0.1, "whitespace weights: {quieted}");
        assert!(spare, "blanks beyond the minimum still come");
        // Probability 0: the minimum always; 1: never the minimum.
        assert_eq!(blank_share(&g, Some(&quiet(0.0))), (0.0, false));
        let (raised, _) = blank_share(&g, Some(&quiet(1.0)));
        assert!(raised > quieted, "{raised} against {quieted}");
    }
}
