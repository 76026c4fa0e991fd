//! Subtrees from a source (Fandango's `:=` generators): their texts are read back as
//! their rule, constraints still hold on the result, and a source's failure or a text
//! outside the rule's language is reported, not written.

use std::sync::Arc;
use thicket_constraint::Predicates;
use thicket_grammar::SymbolId;
use thicket_solve::sources::{SourceCall, SubtreeSource};
use thicket_solve::{Solver, SolverConfig};
use thicket_tree::NodeId;

/// Makes `<num>` from a fixed list, by seed and call.
struct Numbers {
    rules: Vec<SymbolId>,
    texts: Vec<&'static str>,
}

impl SubtreeSource for Numbers {
    fn rules(&self) -> &[SymbolId] {
        &self.rules
    }

    fn text(&self, call: &SourceCall<'_>) -> Result<Vec<u8>, String> {
        let i = (call.seed.wrapping_add(call.call) % self.texts.len() as u64) as usize;
        match self.texts[i] {
            "fail" => Err("ValueError: no number today".into()),
            text => Ok(text.as_bytes().to_vec()),
        }
    }
}

const SPEC: &[u8] = b"<start> ::= <pair> (\";\" <pair>)*\n<pair> ::= <name> \"=\" <num>\n\
<name> ::= r\"[a-z]{1,3}\"\n<num> ::= <digit>+\n<digit> ::= r\"[0-9]\"\n";

fn solver_with<'g>(
    spec: &'g thicket_grammar::Spec,
    constraint: Option<&str>,
    texts: Vec<&'static str>,
) -> Solver<'g> {
    let grammar = &spec.grammar;
    let constraints = constraint
        .map(|c| {
            vec![thicket_constraint::from_text(grammar, &Predicates::standard(), "-c", c).unwrap()]
        })
        .unwrap_or_default();
    let numbers = Numbers {
        rules: vec![grammar.symbol("num").unwrap()],
        texts,
    };
    Solver::new(grammar, constraints, SolverConfig::default())
        .unwrap()
        .with_source(Arc::new(numbers))
}

fn spec() -> thicket_grammar::Spec {
    thicket_grammar::load_spec_bytes("pairs.fan", SPEC, &Default::default()).unwrap()
}

#[test]
fn every_subtree_of_the_rule_comes_from_the_source_and_is_parsed_as_it() {
    let spec = spec();
    let solver = solver_with(&spec, None, vec!["7", "42", "1000"]);
    let num = spec.grammar.symbol("num").unwrap();
    let digit = spec.grammar.symbol("digit").unwrap();
    for i in 0..50 {
        let (tree, _) = solver.solve(&mut Solver::rng_for(3, i)).unwrap();
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        for pair in text.split(';') {
            let value = pair.split('=').nth(1).unwrap();
            assert!(["7", "42", "1000"].contains(&value), "{text}");
        }
        // The values are trees of the rule, down to its digits.
        let view = thicket_constraint::TreeView::new(&tree, &spec.grammar);
        let nums = view.nodes_of(num, tree.root());
        let digits = view.nodes_of(digit, tree.root());
        let chars: usize = nums
            .iter()
            .map(|&n| tree.text(NodeId::from_index(n as usize)).len())
            .sum();
        assert_eq!(digits.len(), chars, "{text}");
    }
    // Same seed, same inputs.
    let a = solver.solve(&mut Solver::rng_for(3, 7)).unwrap().0;
    let b = solver.solve(&mut Solver::rng_for(3, 7)).unwrap().0;
    assert_eq!(a.bytes(), b.bytes());
}

#[test]
fn constraints_hold_on_generated_values() {
    let spec = spec();
    let solver = solver_with(
        &spec,
        Some("forall <pair> p: str.len(p.<name>) = 2"),
        vec!["5", "66"],
    );
    for i in 0..30 {
        let (tree, _) = solver.solve(&mut Solver::rng_for(1, i)).unwrap();
        assert!(solver.violated(&tree).is_empty());
    }
}

#[test]
fn a_failing_source_or_a_value_outside_the_rule_is_reported() {
    let spec = spec();
    let failing = solver_with(&spec, None, vec!["fail"]);
    let err = failing.solve(&mut Solver::rng_for(1, 0)).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("<num>") && message.contains("no number today"),
        "{message}"
    );
    assert_eq!(
        err.attempts, 1,
        "a source's failure ends the search at once"
    );
    let foreign = solver_with(&spec, None, vec!["x1"]);
    let message = foreign
        .solve(&mut Solver::rng_for(1, 0))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"x1\" is not in the language of <num>"),
        "{message}"
    );
}

/// `<num> := len(<word>) * 11` and `<word> := twice(<num>)`: each value from a fresh
/// argument tree, the argument's own source skipped where it would loop.
struct Lengths {
    rules: Vec<SymbolId>,
    params: Vec<Vec<SymbolId>>,
}

impl SubtreeSource for Lengths {
    fn rules(&self) -> &[SymbolId] {
        &self.rules
    }

    fn params(&self, rule: SymbolId) -> &[SymbolId] {
        let i = self.rules.iter().position(|&r| r == rule).unwrap();
        &self.params[i]
    }

    fn text(&self, call: &SourceCall<'_>) -> Result<Vec<u8>, String> {
        let [arg] = call.args else {
            return Err(format!("{} arguments", call.args.len()));
        };
        let param = self.params(call.rule)[0];
        assert!(
            matches!(call.grammar.expr(arg.expr(arg.root())), thicket_grammar::Expr::Ref(s) if *s == param),
            "an argument is rooted at its rule"
        );
        let text = arg.bytes();
        Ok(if call.rule == self.rules[0] {
            (text.len() * 11).to_string().into_bytes()
        } else {
            text.repeat(2)
        })
    }
}

#[test]
fn a_source_gets_fresh_subtrees_of_its_arguments_rules() {
    let spec = thicket_grammar::load_spec_bytes(
        "lengths.fan",
        b"<start> ::= <num> \":\" <word>\n<num> ::= <digit>+\n<digit> ::= r\"[0-9]\"\n\
<word> ::= r\"[a-z]{1,4}\" | <digit>+\n",
        &Default::default(),
    )
    .unwrap();
    let grammar = &spec.grammar;
    let (num, word) = (
        grammar.symbol("num").unwrap(),
        grammar.symbol("word").unwrap(),
    );
    let source = Lengths {
        rules: vec![num, word],
        params: vec![vec![word], vec![num]],
    };
    let solver = Solver::new(grammar, Vec::new(), SolverConfig::default())
        .unwrap()
        .with_source(Arc::new(source));
    for i in 0..30 {
        let (tree, _) = solver.solve(&mut Solver::rng_for(5, i)).unwrap();
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let (n, w) = text.split_once(':').unwrap();
        // <num> is 11 times the length of a fresh <word> drawn from the grammar (its
        // own source would need <num>, the rule being made).
        let n: usize = n.parse().unwrap();
        assert!(n > 0 && n.is_multiple_of(11), "{text}");
        // <word> doubles a fresh <num>: a number of 1+ digits, written twice.
        let (a, b) = w.split_at(w.len() / 2);
        assert!(a == b && a.bytes().all(|c| c.is_ascii_digit()), "{text}");
    }
}

/// [`Numbers`], recording how many calls each request for a tree's texts holds.
struct Batched {
    inner: Numbers,
    batches: std::sync::Mutex<Vec<usize>>,
}

impl SubtreeSource for Batched {
    fn rules(&self) -> &[SymbolId] {
        self.inner.rules()
    }

    fn text(&self, call: &SourceCall<'_>) -> Result<Vec<u8>, String> {
        self.inner.text(call)
    }

    fn texts(&self, calls: &[SourceCall<'_>]) -> Vec<Result<Vec<u8>, String>> {
        self.batches.lock().unwrap().push(calls.len());
        calls.iter().map(|call| self.inner.text(call)).collect()
    }
}

#[test]
fn a_trees_generated_nodes_are_asked_at_once_and_get_what_one_by_one_gets() {
    let spec = spec();
    let grammar = &spec.grammar;
    let values = vec!["7", "42", "1000"];
    let one_by_one = solver_with(&spec, None, values.clone());
    let batched = Arc::new(Batched {
        inner: Numbers {
            rules: vec![grammar.symbol("num").unwrap()],
            texts: values,
        },
        batches: std::sync::Mutex::new(Vec::new()),
    });
    let at_once = Solver::new(grammar, Vec::new(), SolverConfig::default())
        .unwrap()
        .with_source(batched.clone());
    for i in 0..30 {
        let (a, _) = one_by_one.solve(&mut Solver::rng_for(5, i)).unwrap();
        let (b, _) = at_once.solve(&mut Solver::rng_for(5, i)).unwrap();
        assert_eq!(a.bytes(), b.bytes());
        // One request per tree, holding every pair's number.
        let pairs = b.bytes().split(|&c| c == b';').count();
        assert_eq!(batched.batches.lock().unwrap().last(), Some(&pairs));
    }
}
