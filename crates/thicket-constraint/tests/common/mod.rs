//! Helpers shared by the evaluator's shortcut tests.

use thicket_constraint::{Checker, Constraint, TreeView};
use thicket_gen::{GenConfig, Generator};
use thicket_grammar::Grammar;
use thicket_parse::{ParseConfig, Parser};

/// Evaluates `fast` (a constraint with a shortcut) and `slow` (the same without it) on
/// `count` inputs generated from `seed` at `max_depth`, read back by the parser, and
/// asserts the verdicts are equal; and that each verdict occurs more than `min_each`
/// times, so that the comparison says something. `what` names the case in failures.
pub fn assert_same_verdicts(
    grammar: &Grammar,
    fast: Constraint,
    slow: Constraint,
    what: &str,
    (seed, count, max_depth, min_each): (u64, u64, u32, usize),
) {
    let parser = Parser::new(grammar, ParseConfig::default()).unwrap();
    let config = GenConfig {
        max_depth,
        ..GenConfig::default()
    };
    let generator = Generator::new(grammar, config).unwrap();
    let checker = Checker::new(grammar, vec![fast, slow]);
    let mut held = [0, 0];
    for i in 0..count {
        let mut bytes = Vec::new();
        generator.generate_bytes(&mut Generator::rng_for(seed, i), &mut bytes);
        let tree = parser.parse(&bytes).unwrap().tree();
        let view = TreeView::new(&tree, grammar);
        let [a, b] = [0, 1].map(|i| {
            let c = &checker.constraints()[i];
            checker.evaluator(&view, c).holds(&c.formula)
        });
        assert_eq!(a, b, "{what} on {}", String::from_utf8_lossy(&bytes));
        held[usize::from(a)] += 1;
    }
    assert!(held[0] > min_each && held[1] > min_each, "{what}: {held:?}");
}
