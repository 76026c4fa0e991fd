//! ISLa's width predicates (`ljust_crop`, `rjust_crop`, `extend_crop`, `crop`, `ljust`,
//! `rjust`) and `hex_to_decimal`: verdicts, bindings and the fixes they propose, called
//! through the `Predicate` trait on parsed trees, and in constraints.

use thicket_constraint::{ArgValue, Checker, Outcome, PredicateContext, Predicates, TreeView};
use thicket_grammar::Grammar;
use thicket_parse::{ParseConfig, Parser};
use thicket_tree::NodeId;

const SPEC: &str =
    "<start> ::= <f> \";\" <h>\n<f> ::= r\"[a-z =é]*\"\n<h> ::= r\"[0-9a-fA-F ]+\"\n";

/// Evaluates `name` on the `<symbol>` node of `input` with the other arguments.
fn outcome(input: &str, name: &str, symbol: &str, rest: &[ArgValue<'_>]) -> Outcome {
    let grammar = thicket_grammar::load_spec_text("w.fan", SPEC.as_bytes()).unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let tree = parser.parse(input.as_bytes()).unwrap().tree();
    let view = TreeView::new(&tree, &grammar);
    let node = node_of(&view, &grammar, symbol);
    let mut args = vec![ArgValue::Tree(node)];
    args.extend_from_slice(rest);
    let predicates = Predicates::standard();
    let predicate = predicates.get(name).unwrap();
    predicate.evaluate(
        &PredicateContext {
            view: &view,
            grammar: &grammar,
            explaining: true,
        },
        &args,
    )
}

fn node_of(view: &TreeView<'_>, grammar: &Grammar, symbol: &str) -> NodeId {
    let symbol = grammar.symbol(symbol).unwrap();
    NodeId::from_index(view.nodes_of(symbol, view.tree().root())[0] as usize)
}

/// The text a failing outcome's fix proposes (for its only node).
fn fixed(outcome: Outcome) -> Option<String> {
    match outcome {
        Outcome::Fails { fix, .. } => fix
            .into_iter()
            .next()
            .map(|(_, text)| String::from_utf8(text).unwrap()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

const N: fn(i128) -> ArgValue<'static> = |n| ArgValue::Number(Some(n));

#[test]
fn justify_and_crop_hold_at_their_width_and_fix_to_it() {
    let space = ArgValue::Text(" ");
    let dot = ArgValue::Text("=");
    // Exactly the width: holds.
    for name in ["ljust", "rjust", "ljust_crop", "rjust_crop"] {
        assert_eq!(outcome("abc;0", name, "f", &[N(3), space]), Outcome::Holds);
    }
    assert_eq!(
        outcome("===;0", "extend_crop", "f", &[N(3)]),
        Outcome::Holds
    );
    // crop: at most the width.
    assert_eq!(outcome("abc;0", "crop", "f", &[N(5)]), Outcome::Holds);
    assert_eq!(
        fixed(outcome("abcdef;0", "crop", "f", &[N(2)])).unwrap(),
        "ab"
    );
    // Padding on either side, with the fill given.
    assert_eq!(
        fixed(outcome("ab;0", "ljust_crop", "f", &[N(5), dot])).unwrap(),
        "ab==="
    );
    assert_eq!(
        fixed(outcome("ab;0", "rjust_crop", "f", &[N(5), dot])).unwrap(),
        "===ab"
    );
    assert_eq!(
        fixed(outcome("ab;0", "ljust", "f", &[N(4), space])).unwrap(),
        "ab  "
    );
    assert_eq!(
        fixed(outcome("ab;0", "rjust", "f", &[N(4), space])).unwrap(),
        "  ab"
    );
    // Cropping keeps the first (ljust) or the last (rjust) characters; plain
    // justification does not crop, so it offers no fix.
    assert_eq!(
        fixed(outcome("abcdef;0", "ljust_crop", "f", &[N(2), space])).unwrap(),
        "ab"
    );
    assert_eq!(
        fixed(outcome("abcdef;0", "rjust_crop", "f", &[N(2), space])).unwrap(),
        "ef"
    );
    assert_eq!(
        fixed(outcome("abcdef;0", "ljust", "f", &[N(2), space])),
        None
    );
    // extend_crop repeats the text's first character.
    assert_eq!(
        fixed(outcome("==;0", "extend_crop", "f", &[N(4)])).unwrap(),
        "===="
    );
    assert_eq!(
        fixed(outcome("=====;0", "extend_crop", "f", &[N(1)])).unwrap(),
        "="
    );
    assert_eq!(fixed(outcome(";0", "extend_crop", "f", &[N(3)])), None);
    // Characters, not bytes.
    assert_eq!(
        outcome("éé;0", "ljust_crop", "f", &[N(2), space]),
        Outcome::Holds
    );
    assert_eq!(fixed(outcome("ééé;0", "crop", "f", &[N(2)])).unwrap(), "éé");
    // An unbound width is bound to the length.
    for (name, rest) in [
        ("ljust_crop", &[ArgValue::Number(None), space][..]),
        ("extend_crop", &[ArgValue::Number(None)][..]),
        ("crop", &[ArgValue::Number(None)][..]),
    ] {
        assert_eq!(
            outcome("abcd;0", name, "f", rest),
            Outcome::Bind(4),
            "{name}"
        );
    }
    // A negative width never holds and has no fix.
    assert_eq!(
        fixed(outcome("ab;0", "ljust_crop", "f", &[N(-1), space])),
        None
    );
}

#[test]
fn hex_to_decimal_reads_hex_text_and_writes_the_fix_in_its_layout() {
    assert_eq!(
        outcome("x;00 1c ", "hex_to_decimal", "h", &[N(28)]),
        Outcome::Holds
    );
    assert_eq!(
        outcome("x;FF", "hex_to_decimal", "h", &[N(255)]),
        Outcome::Holds
    );
    assert_eq!(
        outcome("x;0a0b", "hex_to_decimal", "h", &[ArgValue::Number(None)]),
        Outcome::Bind(0x0a0b)
    );
    // The digits are rewritten in place: spacing and case kept, zero-padded.
    assert_eq!(
        fixed(outcome("x;00 1c ", "hex_to_decimal", "h", &[N(300)])).unwrap(),
        "01 2c "
    );
    assert_eq!(
        fixed(outcome("x;AB", "hex_to_decimal", "h", &[N(10)])).unwrap(),
        "0A"
    );
    // A number that needs more digits than the field has: no fix.
    assert_eq!(
        fixed(outcome("x;ff", "hex_to_decimal", "h", &[N(256)])),
        None
    );
    assert!(matches!(
        outcome("x;  ", "hex_to_decimal", "h", &[N(0)]),
        Outcome::Fails { .. }
    ));
}

#[test]
fn width_predicates_in_constraints() {
    let grammar = thicket_grammar::load_spec_text("w.fan", SPEC.as_bytes()).unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let predicates = Predicates::standard();
    // The width of <f> is the value of <h>, read through an int variable.
    let constraint = "exists int n: (hex_to_decimal(<h>, n) and ljust_crop(<f>, n, \" \"))";
    let c = thicket_constraint::from_text(&grammar, &predicates, "c", constraint)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let checker = Checker::new(&grammar, vec![c]);
    for (input, valid) in [
        ("abc;3", true),
        ("abc;03", true),
        ("abcd;3", false),
        (";0", true),
    ] {
        let tree = parser.parse(input.as_bytes()).unwrap().tree();
        assert_eq!(checker.check(&tree).is_empty(), valid, "{input}");
    }
    // A fill of two characters is refused when compiling.
    let bad = "ljust_crop(<f>, 3, \"ab\")";
    let err = thicket_constraint::from_text(&grammar, &predicates, "c", bad)
        .err()
        .unwrap();
    assert!(
        err.render().contains("exactly one character"),
        "{}",
        err.render()
    );
}
