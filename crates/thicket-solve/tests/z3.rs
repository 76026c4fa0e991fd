//! Atoms with SMT functions thicket does not solve natively (`str.replace*`,
//! `str.indexof`, `str.<`, `str.to_code`, `re.comp`, `re.diff`, `re.inter`): with the
//! `z3` feature Z3 solves them (every solution passes the exact checker and an
//! independent computation here); without it they are refused, naming the feature.

use thicket_constraint::Predicates;
use thicket_grammar::Spec;
use thicket_solve::{SolveError, Solver, SolverConfig};

/// One to three pairs of short words (each instance is a query of its own).
const PAIRS: &str = "<start> ::= <pair> (\";\" <pair>){0,2}\n<pair> ::= <a> \"=\" <b>\n\
                     <a> ::= r\"[a-e]{1,6}\"\n<b> ::= r\"[a-e]{1,6}\"\n";

/// Expressions: `<expr>` is recursive, so its language is over-approximated.
#[cfg(feature = "z3")]
const EXPRS: &str = "<start> ::= <expr>\n<expr> ::= <num> | \"(\" <expr> \"+\" <expr> \")\"\n\
                     <num> ::= r\"[1-9][0-9]{0,2}\"\n";

fn spec(text: &str) -> Spec {
    thicket_grammar::load_spec_bytes("t.fan", text.as_bytes(), &Default::default()).unwrap()
}

fn solver<'g>(spec: &'g Spec, constraint: &str) -> Result<Solver<'g>, SolveError> {
    let c = thicket_constraint::from_text(&spec.grammar, &Predicates::standard(), "c", constraint)
        .unwrap_or_else(|e| panic!("{constraint}: {e:?}"));
    let mut config = SolverConfig::default();
    config.generation.max_depth = 8;
    Solver::new(&spec.grammar, vec![c], config)
}

/// The `(a, b)` pairs of a PAIRS input.
#[cfg(feature = "z3")]
fn pairs(input: &str) -> Vec<(&str, &str)> {
    input
        .split(';')
        .map(|p| p.split_once('=').expect("a pair"))
        .collect()
}

/// `n` solutions of seed 1, each valid by the exact checker and by `holds`.
#[cfg(feature = "z3")]
fn solve_all(grammar: &str, constraint: &str, n: u64, holds: impl Fn(&str) -> bool) -> Vec<String> {
    let spec = spec(grammar);
    let solver = solver(&spec, constraint).unwrap_or_else(|e| panic!("{constraint}: {e}"));
    let mut out = Vec::new();
    for i in 0..n {
        let mut rng = Solver::rng_for(1, i);
        let (tree, _) = solver
            .solve(&mut rng)
            .unwrap_or_else(|e| panic!("{constraint}: input {i}: {e}"));
        assert!(solver.violated(&tree).is_empty(), "{constraint}: input {i}");
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        assert!(holds(&text), "{constraint}: input {i}: {text:?}");
        out.push(text);
    }
    // Z3 prefers short values (`str.replace` of "a" by "ee": often a = "a", b = "ee"),
    // but the random seeds and the rest of each tree keep many inputs apart.
    let distinct: std::collections::HashSet<&String> = out.iter().collect();
    assert!(
        distinct.len() * 3 > out.len(),
        "{constraint}: {} distinct",
        distinct.len()
    );
    out
}

#[cfg(feature = "z3")]
mod with_z3 {
    use super::*;

    #[test]
    fn str_replace_relates_two_subtrees() {
        solve_all(
            PAIRS,
            "forall <pair> p: str.replace(p.<a>, \"a\", \"ee\") = p.<b>",
            100,
            |s| pairs(s).iter().all(|(a, b)| a.replacen('a', "ee", 1) == *b),
        );
    }

    #[test]
    fn str_replace_and_a_length_in_one_conjunction() {
        solve_all(
            PAIRS,
            "forall <a> x: (str.len(x) = 5 and str.replace(x, \"cd\", \"\") = \"eee\")",
            100,
            |s| {
                pairs(s)
                    .iter()
                    .all(|(a, _)| a.len() == 5 && a.replacen("cd", "", 1) == "eee")
            },
        );
    }

    #[test]
    fn str_indexof_places_a_substring() {
        let inputs = solve_all(
            PAIRS,
            "forall <a> x: str.indexof(x, \"de\", 0) = 2",
            100,
            |s| pairs(s).iter().all(|(a, _)| a.find("de") == Some(2)),
        );
        // The values differ: the models are diverse.
        let firsts: std::collections::HashSet<&str> =
            inputs.iter().map(|s| pairs(s)[0].0).collect();
        assert!(firsts.len() > 10, "{firsts:?}");
    }

    #[test]
    fn str_lt_orders_two_subtrees() {
        solve_all(PAIRS, "forall <pair> p: str.<(p.<b>, p.<a>)", 100, |s| {
            pairs(s).iter().all(|(a, b)| b < a)
        });
    }

    #[test]
    fn str_le_negated() {
        solve_all(
            PAIRS,
            "forall <pair> p: not str.<=(p.<a>, p.<b>)",
            100,
            |s| pairs(s).iter().all(|(a, b)| a > b),
        );
    }

    #[test]
    fn str_to_code_relates_characters() {
        solve_all(
            PAIRS,
            "forall <a> x: str.to_code(str.at(x, 0)) + 2 = str.to_code(str.at(x, 1))",
            100,
            |s| {
                pairs(s).iter().all(|(a, _)| {
                    let b = a.as_bytes();
                    b.len() >= 2 && b[0] + 2 == b[1]
                })
            },
        );
    }

    #[test]
    fn re_comp_excludes_a_language() {
        solve_all(
            PAIRS,
            "forall <b> y: str.in_re(y, re.comp(re.*(re.range(\"a\", \"c\"))))",
            100,
            |s| pairs(s).iter().all(|(_, b)| b.contains(['d', 'e'])),
        );
    }

    #[test]
    fn re_inter_and_re_diff() {
        solve_all(
            PAIRS,
            "forall <a> x: str.in_re(x, re.inter(re.+(re.range(\"a\", \"b\")), \
             re.diff(re.all, re.*(str.to_re(\"a\")))))",
            100,
            |s| {
                pairs(s)
                    .iter()
                    .all(|(a, _)| a.chars().all(|c| c == 'a' || c == 'b') && a.contains('b'))
            },
        );
    }

    #[test]
    fn a_recursive_rule_is_over_approximated_and_parsed_back() {
        // `<expr>`'s language is not regular: Z3 sees `<num> | "(" .* "+" .* ")"`, and
        // values that are no expression are blocked.
        solve_all(
            EXPRS,
            "forall <expr> e: (str.indexof(e, \"(7+\", 0) = 0 or str.len(e) < 4)",
            100,
            |s| {
                fn check(e: &str) -> bool {
                    e.len() < 4 || e.starts_with("(7+")
                }
                // Every parenthesised subexpression (each starts at a "(").
                s.match_indices('(').all(|(i, _)| {
                    let mut depth = 0;
                    let end = s[i..]
                        .char_indices()
                        .find(|&(_, c)| {
                            depth += match c {
                                '(' => 1,
                                ')' => -1,
                                _ => 0,
                            };
                            depth == 0
                        })
                        .unwrap()
                        .0;
                    check(&s[i..=i + end])
                })
            },
        );
    }

    #[test]
    fn a_query_z3_cannot_decide_in_time_ends_within_the_budget() {
        // Nonlinear arithmetic over str.to_int of replaced texts: Z3 answers "unknown"
        // (or runs out of its 20 ms); the solve ends as "no solution within the
        // budget", quickly.
        let spec = spec(EXPRS);
        let c = thicket_constraint::from_text(
            &spec.grammar,
            &Predicates::standard(),
            "c",
            "forall <num> n: str.to_int(str.replace_all(n, \"1\", \"23\")) * \
             str.to_int(str.replace_all(n, \"2\", \"31\")) = 99999999977",
        )
        .unwrap();
        let mut config = SolverConfig {
            max_attempts: 3,
            max_rounds: 4,
            smt_timeout_ms: 20,
            ..Default::default()
        };
        config.generation.max_depth = 6;
        let solver = Solver::new(&spec.grammar, vec![c], config).unwrap();
        let start = std::time::Instant::now();
        let result = solver.solve(&mut Solver::rng_for(1, 0));
        assert!(
            result.is_err(),
            "solved: {:?}",
            result.map(|(t, _)| t.bytes().to_vec())
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
    }
}

#[cfg(not(feature = "z3"))]
#[test]
fn without_z3_the_error_names_the_atom_and_the_feature() {
    let spec = spec(PAIRS);
    let Err(e) = solver(&spec, "forall <a> x: str.indexof(x, \"de\", 0) = 2") else {
        panic!("solved without z3");
    };
    assert!(matches!(e, SolveError::Unsupported { .. }));
    let message = e.to_string();
    assert!(message.starts_with("c:1:15: "), "{message}");
    assert!(message.contains("`str.indexof`"), "{message}");
    assert!(message.contains("`z3` feature"), "{message}");
}
