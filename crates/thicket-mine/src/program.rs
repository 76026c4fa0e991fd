//! Mining with a program: samples labelled by whether the program accepts them, and
//! results validated by running inputs solved for them.
//!
//! The program is a closure (`accepts`: an input's tree to whether the program accepts
//! the input it stands for, or why it could not be run; the caller knows how a tree
//! stands for its input: its text, or Fandango's bit fields packed into bytes), so this
//! crate needs no executor: `thicket
//! mine` passes one that runs its target through a `thicket_exec::Judge`.

use crate::Mined;
use thicket_gen::Generator;
use thicket_solve::{Solver, SolverConfig};
use thicket_tree::DerivationTree;

/// How many samples [`label`] made and how the program judged them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Labelled {
    /// Inputs generated from the grammar, as asked.
    pub generated: usize,
    /// Mutants of the positives, as asked (none without positives: then generated
    /// inputs stand in for them).
    pub mutated: usize,
    /// Samples the program accepted (added to the positives).
    pub accepted: usize,
    /// Samples it rejected (added to the negatives).
    pub rejected: usize,
}

/// Adds `generate` inputs from `generator` and `mutate` mutants of the current
/// `positives` (a rule's subtree regenerated) to the samples, each labelled by
/// `accepts`: accepted inputs are positives, the rest negatives. Sample `i` comes from
/// stream `i` of `seed`.
pub fn label<E>(
    generator: &Generator<'_>,
    positives: &mut Vec<DerivationTree>,
    negatives: &mut Vec<DerivationTree>,
    (generate, mutate): (usize, usize),
    seed: u64,
    accepts: &mut dyn FnMut(&DerivationTree) -> Result<bool, E>,
) -> Result<Labelled, E> {
    let originals = positives.clone();
    let mut labelled = Labelled {
        generated: generate,
        mutated: if originals.is_empty() { 0 } else { mutate },
        ..Labelled::default()
    };
    for i in 0..generate + mutate {
        let mut rng = Generator::rng_for(seed, i as u64);
        let tree = if i < generate || originals.is_empty() {
            generator.generate_tree(&mut rng).0
        } else {
            let parent = &originals[(i - generate) % originals.len()];
            match thicket_mutate::regenerate(generator, parent, &mut rng) {
                Some(tree) => tree,
                None => continue,
            }
        };
        if accepts(&tree)? {
            labelled.accepted += 1;
            positives.push(tree);
        } else {
            labelled.rejected += 1;
            negatives.push(tree);
        }
    }
    Ok(labelled)
}

/// How a result fared in [`validate`]: of the inputs solved for it, how many the
/// program accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Validated {
    /// Solved inputs the program accepted.
    pub accepted: usize,
    /// Inputs solved for the result and run.
    pub solved: usize,
}

/// Validates each of `mined`'s results by the program: up to `per_result` inputs that
/// satisfy it are solved for (from `seed`) and run through `accepts`, and a result is
/// kept only if the program accepts them all. Returns the validation of each kept
/// result, in order (`None` where the solver could make no inputs for it: such a
/// result is kept, and `note` hears why it was not validated).
pub fn validate<E>(
    grammar: &thicket_grammar::Grammar,
    mined: &mut Mined,
    per_result: usize,
    seed: u64,
    accepts: &mut dyn FnMut(&DerivationTree) -> Result<bool, E>,
    note: &mut dyn FnMut(&str),
) -> Result<Vec<Option<Validated>>, E> {
    let mut validation = Vec::with_capacity(mined.results.len());
    for (i, result) in mined.results.iter().enumerate() {
        let Ok(constraint) = crate::compile(grammar, "mined", &result.text) else {
            validation.push(None);
            continue;
        };
        let solver = match Solver::new(grammar, vec![constraint], SolverConfig::default()) {
            Ok(solver) => solver,
            Err(e) => {
                note(&format!(
                    "result {} not validated: the solver cannot make inputs for it: {e}",
                    i + 1
                ));
                validation.push(None);
                continue;
            }
        };
        let mut validated = Validated {
            accepted: 0,
            solved: 0,
        };
        for tree in solver.solutions(seed).take(per_result).flatten() {
            validated.solved += 1;
            validated.accepted += usize::from(accepts(&tree)?);
        }
        validation.push(Some(validated));
    }
    let mut kept = Vec::new();
    let mut kept_validation = Vec::new();
    for (result, v) in mined.results.drain(..).zip(validation) {
        if v.is_none_or(|v| v.accepted == v.solved) {
            kept.push(result);
            kept_validation.push(v);
        }
    }
    mined.results = kept;
    Ok(kept_validation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scored;
    use thicket_gen::GenConfig;
    use thicket_grammar::load_spec_text;

    const DIGITS: &str = "<start> ::= <d> <d>\n<d> ::= \"1\" | \"2\" | \"3\"\n";

    fn scored(text: &str) -> Scored {
        Scored {
            text: text.to_string(),
            patterns: vec![],
            parts: 1,
            tp: 1,
            fn_: 0,
            fp: 0,
            tn: 1,
        }
    }

    #[test]
    fn the_program_labels_samples_and_rejects_results_it_does_not_accept() {
        let grammar = load_spec_text("t.bnf", DIGITS.as_bytes()).unwrap();
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        // The program accepts inputs without a 3.
        let mut accepts = |tree: &DerivationTree| Ok::<_, ()>(!tree.bytes().contains(&b'3'));
        let (mut positives, mut negatives) = (Vec::new(), Vec::new());
        let labelled = label(
            &generator,
            &mut positives,
            &mut negatives,
            (30, 10),
            1,
            &mut accepts,
        )
        .unwrap();
        // No positives to mutate: every sample is generated.
        assert_eq!((labelled.generated, labelled.mutated), (30, 0));
        assert_eq!(labelled.accepted + labelled.rejected, 40);
        assert!(positives.iter().all(|t| !t.bytes().contains(&b'3')));
        assert!(negatives.iter().all(|t| t.bytes().contains(&b'3')));
        assert_eq!(positives.len(), labelled.accepted);

        let mut mined = Mined {
            results: vec![
                scored("forall <d> d in start: (not (= d \"3\"))"),
                scored("forall <d> d in start: (= d \"3\")"),
            ],
            ..Mined::default()
        };
        let validation = validate(&grammar, &mut mined, 5, 1, &mut accepts, &mut |_| {}).unwrap();
        // Only the result whose inputs the program accepts stays.
        assert_eq!(mined.results.len(), 1);
        assert!(mined.results[0].text.starts_with("forall"));
        let v = validation[0].expect("validated");
        assert!(v.solved > 0 && v.accepted == v.solved);
    }
}
