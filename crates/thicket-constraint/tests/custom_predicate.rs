//! Users extend the language with their own predicates through the `Predicate` trait.

use std::sync::Arc;
use thicket_constraint::{
    ArgKind, ArgValue, Checker, Outcome, Predicate, PredicateContext, Predicates,
};

/// `palindrome(t)`: the subtree's text reads the same backwards.
struct Palindrome;

impl Predicate for Palindrome {
    fn name(&self) -> &str {
        "palindrome"
    }
    fn params(&self) -> &[ArgKind] {
        &[ArgKind::Tree]
    }
    fn is_structural(&self) -> bool {
        false
    }
    fn evaluate(&self, ctx: &PredicateContext<'_, '_>, args: &[ArgValue<'_>]) -> Outcome {
        let ArgValue::Tree(node) = args[0] else {
            unreachable!()
        };
        let text = ctx.text(node);
        if text.iter().eq(text.iter().rev()) {
            Outcome::Holds
        } else {
            Outcome::Fails {
                why: "not a palindrome".into(),
                fix: Vec::new(),
            }
        }
    }
}

#[test]
fn a_registered_predicate_is_checked_and_explained() {
    let grammar = thicket_grammar::load_spec_text(
        "words.fan",
        b"<start> ::= <word> (\" \" <word>)*\n<word> ::= r\"[a-z]+\"\n",
    )
    .unwrap();
    let mut predicates = Predicates::standard();
    predicates.register(Arc::new(Palindrome));
    let constraint = thicket_constraint::from_text(
        &grammar,
        &predicates,
        "p.isla",
        "forall <word> w: palindrome(w)",
    )
    .unwrap();
    // Without the registration the name is unknown, with a pointer to what exists.
    let unknown = thicket_constraint::from_text(
        &grammar,
        &Predicates::standard(),
        "p.isla",
        "palindrome(<word>)",
    )
    .unwrap_err();
    assert_eq!(unknown.diagnostics[0].code, "unknown-function");
    // Wrong arity is caught when compiling.
    let arity = thicket_constraint::from_text(
        &grammar,
        &predicates,
        "p.isla",
        "palindrome(<word>, <word>)",
    )
    .unwrap_err();
    assert_eq!(arity.diagnostics[0].code, "predicate-arity");

    let checker = Checker::new(&grammar, vec![constraint]);
    let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
    let good = parser.parse(b"level noon abba").unwrap().tree();
    assert!(checker.check(&good).is_empty());
    let bad = parser.parse(b"noon thicket").unwrap().tree();
    let violations = checker.explain(&bad);
    assert_eq!(violations.len(), 1);
    let text = checker.render(&violations[0], &bad);
    assert!(text.contains("w = <word> at 1:6 \"thicket\""), "{text}");
    assert!(text.contains("not a palindrome"), "{text}");
}
