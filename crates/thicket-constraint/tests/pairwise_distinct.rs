//! `Quantifier::distinct`: ISLa's "no two the same" idiom (`forall x in D: forall y in
//! D: not same_position(x, y) implies not (= i j)` and its equivalent forms) is
//! recognised, and deciding it with one pass over a set gives the verdicts of the
//! general, quadratic evaluation on many generated inputs.

mod common;

use thicket_constraint::formula::Distinct;
use thicket_constraint::{Constraint, Formula, Predicates};

const GRAMMAR: &[u8] = b"<start> ::= <list>\n\
<list> ::= <pair> | <list> \",\" <list> | \"(\" <list> \")\"\n\
<pair> ::= <key> \":\" <val>\n\
<key> ::= \"a\" | \"b\" | \"c\" | \"d\" | \"e\" | \"f\" | \"g\"\n\
<val> ::= \"1\" | \"2\"\n";

fn constraint(grammar: &thicket_grammar::Grammar, text: &str) -> Constraint {
    thicket_constraint::from_text(grammar, &Predicates::standard(), "c.isla", text).unwrap()
}

/// The `distinct` flags of the constraint's quantifiers, outermost first.
fn flags(c: &Constraint) -> Vec<Option<Distinct>> {
    let mut out = Vec::new();
    c.formula.visit(&mut |f| {
        if let Formula::Quantifier(q) = f {
            out.push(q.distinct);
        }
    });
    out
}

/// The constraint with every `distinct` flag cleared: the general evaluation.
fn general(c: &Constraint) -> Constraint {
    fn clear(f: &mut Formula) {
        match f {
            Formula::Quantifier(q) => {
                q.distinct = None;
                clear(&mut q.body);
            }
            Formula::Not(inner) => clear(inner),
            Formula::Binary(_, a, b) => {
                clear(a);
                clear(b);
            }
            Formula::IntQuantifier { body, .. } => clear(body),
            Formula::Smt(..) | Formula::Predicate(_) => {}
        }
    }
    let mut c = c.clone();
    clear(&mut c.formula);
    c
}

/// No key twice in a parenthesised list (the shape of ISLa's no-duplicate-attribute).
const NESTED: &str = "forall <list> l in start: \
    forall <pair> p=\"{<key> k}:<val>\" in l: forall <pair> q=\"{<key> j}:<val>\" in l: \
    (not same_position(p, q) implies not (= k j))";
/// No key twice in the input (the shape of Scriptsize-C's no-redefinition).
const XOR: &str = "forall <pair> p=\"{<key> k}:<val>\" in start: \
    forall <pair> q=\"{<key> j}:<val>\" in start: (same_position(p, q) xor not (= k j))";
/// No value twice, compared as whole instances.
const INSTANCES: &str = "forall <val> a in start: forall <val> b in start: \
    (different_position(a, b) implies not (= a b))";

#[test]
fn the_idiom_is_recognised_in_its_forms_and_nothing_else_is() {
    let grammar = thicket_grammar::load_spec_text("pairs.fan", GRAMMAR).unwrap();
    let flags_of = |text: &str| flags(&constraint(&grammar, text));
    assert_eq!(
        flags_of(NESTED),
        [None, Some(Distinct::Binder(0)), None],
        "the inner pair of quantifiers"
    );
    assert_eq!(flags_of(XOR), [Some(Distinct::Binder(0)), None]);
    assert_eq!(flags_of(INSTANCES), [Some(Distinct::Instance), None]);
    // The contrapositive says the same.
    assert_eq!(
        flags_of(
            "forall <val> a in start: forall <val> b in start: ((= a b) implies same_position(a, b))"
        ),
        [Some(Distinct::Instance), None]
    );
    let not_the_idiom = [
        // All the same, not all different.
        "forall <val> a in start: forall <val> b in start: \
         (not same_position(a, b) implies (= a b))",
        // Different patterns: the second only ranges over pairs with value 1.
        "forall <pair> p=\"{<key> k}:<val>\" in start: \
         forall <pair> q=\"{<key> j}:1\" in start: (not same_position(p, q) implies not (= k j))",
        // Different domains.
        "forall <list> l in start: forall <val> a in l: forall <val> b in start: \
         (not same_position(a, b) implies not (= a b))",
        // Another atom in the body.
        "forall <val> a in start: forall <val> b in start: \
         (not same_position(a, b) implies (not (= a b) or str.len(a) > 3))",
        // An existential.
        "forall <val> a in start: exists <val> b in start: \
         (not same_position(a, b) implies not (= a b))",
        // The pattern's key compared with the other's whole pair.
        "forall <pair> p=\"{<key> k}:<val>\" in start: \
         forall <pair> q=\"{<key> j}:<val>\" in start: (not same_position(p, q) implies not (= k q))",
    ];
    for text in not_the_idiom {
        assert!(
            flags_of(text).iter().all(Option::is_none),
            "{text}: {:?}",
            flags_of(text)
        );
    }
}

#[test]
fn one_pass_gives_the_verdicts_of_the_general_evaluation() {
    let grammar = thicket_grammar::load_spec_text("pairs.fan", GRAMMAR).unwrap();
    for text in [NESTED, XOR, INSTANCES] {
        let fast = constraint(&grammar, text);
        let slow = general(&fast);
        assert!(flags(&slow).iter().all(Option::is_none));
        common::assert_same_verdicts(&grammar, fast, slow, text, (11, 600, 8, 20));
    }
}
