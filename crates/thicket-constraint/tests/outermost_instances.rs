//! `Quantifier::outermost_only`: a universal whose variable is used only as the domain
//! of universal quantifiers needs only its outermost instances. The verdicts with the
//! shortcut equal those of evaluating every instance, on many generated inputs.

mod common;

use thicket_constraint::{Constraint, Formula, Predicates};

const GRAMMAR: &[u8] = b"<start> ::= <list>\n<list> ::= <item> | <list> \",\" <list> | \"(\" <list> \")\"\n<item> ::= \"a\" | \"b\" | \"c\" | \"d\" | \"e\"\n";

fn constraint(grammar: &thicket_grammar::Grammar, text: &str) -> Constraint {
    thicket_constraint::from_text(grammar, &Predicates::standard(), "c.isla", text).unwrap()
}

fn outermost_flag(c: &Constraint) -> bool {
    let Formula::Quantifier(q) = &c.formula else {
        panic!("a quantifier")
    };
    q.outermost_only
}

/// The constraint with the shortcut turned off on its outermost quantifier.
fn without_shortcut(c: &Constraint) -> Constraint {
    let mut c = c.clone();
    let Formula::Quantifier(q) = &mut c.formula else {
        panic!("a quantifier")
    };
    q.outermost_only = false;
    c
}

#[test]
fn the_shortcut_is_taken_only_where_nested_instances_are_implied() {
    let grammar = thicket_grammar::load_spec_text("lists.fan", GRAMMAR).unwrap();
    let distinct = "forall <list> l in start: forall <item> a in l: forall <item> b in l: \
                    (not same_position(a, b) implies not (= a b))";
    assert!(outermost_flag(&constraint(&grammar, distinct)));
    // An existential in positive position: a nested list may lack what the outer one
    // has, so every instance counts.
    let some_a = "forall <list> l in start: exists <item> a in l: (= a \"a\")";
    assert!(!outermost_flag(&constraint(&grammar, some_a)));
    // The variable used in an atom.
    let length = "forall <list> l in start: forall <item> a in l: str.len(l) > str.len(a)";
    assert!(!outermost_flag(&constraint(&grammar, length)));
    // Under a negation the universal becomes existential.
    let negated = "forall <list> l in start: not forall <item> a in l: (= a \"a\")";
    assert!(!outermost_flag(&constraint(&grammar, negated)));
    // A negated existential is universal.
    let no_e = "forall <list> l in start: not exists <item> a in l: (= a \"e\")";
    assert!(outermost_flag(&constraint(&grammar, no_e)));
}

#[test]
fn outermost_instances_give_the_verdicts_of_all_instances() {
    let grammar = thicket_grammar::load_spec_text("lists.fan", GRAMMAR).unwrap();
    let texts = [
        "forall <list> l in start: forall <item> a in l: forall <item> b in l: \
         (not same_position(a, b) implies not (= a b))",
        "forall <list> l in start: not exists <item> a in l: (= a \"e\")",
    ];
    for text in texts {
        let fast = constraint(&grammar, text);
        let slow = without_shortcut(&fast);
        common::assert_same_verdicts(&grammar, fast, slow, text, (7, 400, 9, 10));
    }
}
