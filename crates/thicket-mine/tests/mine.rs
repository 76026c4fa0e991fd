//! Mining on small grammars: the constraint that separates positives from negatives is
//! found, with exact counts, and the steps report what they made and dropped.

use thicket_mine::{Catalog, MineConfig, mine};
use thicket_parse::Parser;
use thicket_tree::DerivationTree;

fn spec(text: &str) -> thicket_grammar::Spec {
    thicket_grammar::load_spec_bytes("t.fan", text.as_bytes(), &Default::default()).unwrap()
}

fn trees(parser: &Parser<'_>, inputs: &[&str]) -> Vec<DerivationTree> {
    inputs
        .iter()
        .map(|i| parser.parse(i.as_bytes()).unwrap().tree())
        .collect()
}

const PAIR: &str = "<start> ::= <pair>\n<pair> ::= <key> \"=\" <key>\n<key> ::= r\"[a-d]{1,3}\"\n";

#[test]
fn balance_separates_equal_pairs() {
    let spec = spec(PAIR);
    let parser = Parser::new(&spec.grammar, Default::default()).unwrap();
    let pos = trees(
        &parser,
        &["a=a", "bc=bc", "dd=dd", "abc=abc", "c=c", "db=db"],
    );
    let neg = trees(
        &parser,
        &["a=b", "bc=cb", "dd=d", "abc=abd", "c=cc", "b=db"],
    );
    let mut catalog = Catalog::bundled();
    catalog.select(&["Balance".into()]).unwrap();
    let mut lines = Vec::new();
    let mined = mine(
        &spec.grammar,
        &catalog,
        &pos,
        &neg,
        &MineConfig::default(),
        &mut |l| lines.push(l.to_string()),
    );
    let best = &mined.results[0];
    assert_eq!(
        (best.tp, best.fn_, best.fp, best.tn),
        (6, 0, 0, 6),
        "{best:?}"
    );
    assert!(
        best.text.contains("{<key> opid}={<key> clid}"),
        "{}",
        best.text
    );
    assert_eq!(best.recall(), 1.0);
    assert_eq!(best.specificity(), 1.0);
    // Every step reported, with counts.
    let steps: Vec<&str> = mined.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "nonterminals",
            "match expressions",
            "strings and numbers",
            "resolve",
            "evaluate",
            "combine"
        ]
    );
    assert_eq!(mined.steps[0].made, 3, "{:?}", mined.steps[0]);
    assert!(mined.steps[1].made > 0, "{:?}", mined.steps[1]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step nonterminals: made")),
        "{lines:?}"
    );
    // The result is ISLa the checker reads, and it agrees with the counts.
    let c = thicket_mine::compile(&spec.grammar, "mined", &best.text).unwrap();
    let checker = thicket_constraint::Checker::new(&spec.grammar, vec![c]);
    assert!(pos.iter().all(|t| checker.check(t).is_empty()));
    assert!(neg.iter().all(|t| !checker.check(t).is_empty()));
}

#[test]
fn string_existence_and_disjunction() {
    // Positives start with x or with y; negatives with z: no single string separates
    // them, a disjunction of two does.
    let spec = spec(
        "<start> ::= <head> <tail>\n<head> ::= \"x\" | \"y\" | \"z\"\n<tail> ::= r\"[0-9]{1,3}\"\n",
    );
    let parser = Parser::new(&spec.grammar, Default::default()).unwrap();
    let pos = trees(&parser, &["x1", "x22", "y3", "y44", "x5", "y6"]);
    let neg = trees(&parser, &["z1", "z22", "z3"]);
    let mut catalog = Catalog::bundled();
    catalog.select(&["String Existence".into()]).unwrap();
    let config = MineConfig {
        max_conjunction: 1,
        ..MineConfig::default()
    };
    let mined = mine(&spec.grammar, &catalog, &pos, &neg, &config, &mut |_| {});
    let best = &mined.results[0];
    assert_eq!(
        (best.tp, best.fn_, best.fp, best.tn),
        (6, 0, 0, 3),
        "{}",
        best.text
    );
    assert_eq!(best.parts, 2, "{}", best.text);
    assert!(
        best.text.contains("\"x\"") && best.text.contains("\"y\"") && best.text.contains(" or"),
        "{}",
        best.text
    );
}

#[test]
fn checksum_pattern_on_hex_packets() {
    // Two bytes of data then an RFC 1071 checksum over all four, as hex text (ISLa's
    // ICMP spelling).
    let spec = spec(
        "<start> ::= <packet>\n<packet> ::= <data> <checksum>\n<data> ::= r\"[0-9a-f]{4} \"\n<checksum> ::= r\"[0-9a-f]{4}\"\n",
    );
    let parser = Parser::new(&spec.grammar, Default::default()).unwrap();
    let packet = |d: u16, ok: bool| {
        let sum = if ok { !d } else { !d ^ 1 };
        format!("{d:04x} {sum:04x}")
    };
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for d in [0x1234u16, 0xabcd, 0x0001, 0x7f7f, 0xfff0] {
        pos.push(parser.parse(packet(d, true).as_bytes()).unwrap().tree());
        neg.push(parser.parse(packet(d, false).as_bytes()).unwrap().tree());
    }
    let mut catalog = Catalog::bundled();
    catalog.select(&["Internet Checksum".into()]).unwrap();
    let mined = mine(
        &spec.grammar,
        &catalog,
        &pos,
        &neg,
        &MineConfig::default(),
        &mut |_| {},
    );
    let best = &mined.results[0];
    assert_eq!((best.tp, best.tn), (5, 5), "{}", best.text);
    assert!(best.text.contains("internet_checksum("), "{}", best.text);
}

#[test]
fn time_budget_stops_and_says_so() {
    let spec = spec(PAIR);
    let parser = Parser::new(&spec.grammar, Default::default()).unwrap();
    let pos = trees(&parser, &["a=a", "bc=bc"]);
    let config = MineConfig {
        time: Some(std::time::Duration::ZERO),
        ..MineConfig::default()
    };
    let mined = mine(
        &spec.grammar,
        &Catalog::bundled(),
        &pos,
        &[],
        &config,
        &mut |_| {},
    );
    assert!(mined.timed_out);
    assert_eq!(mined.evaluated, 0);
    assert!(
        mined.steps.iter().any(|s| s.note.contains("time budget")),
        "{:?}",
        mined.steps
    );
}

#[test]
fn balance_through_expanded_tags_with_angle_brackets() {
    // ISLa's XML balance shape: the tags' names sit one rule below the element, and
    // the literals hold `<`, which a match expression reads as text.
    let spec = spec(
        "<start> ::= <elem>\n<elem> ::= <open> <text> <close>\n<open> ::= \"<\" <name> \">\"\n<close> ::= \"</\" <name> \">\"\n<name> ::= r\"[a-c]{1,2}\"\n<text> ::= r\"[x-z]{0,3}\"\n",
    );
    let parser = Parser::new(&spec.grammar, Default::default()).unwrap();
    let pos = trees(
        &parser,
        &["<a>x</a>", "<bc></bc>", "<c>zz</c>", "<ab>y</ab>"],
    );
    let neg = trees(&parser, &["<a>x</b>", "<bc></cb>", "<c>zz</cc>"]);
    let mut catalog = Catalog::bundled();
    catalog.select(&["Balance".into()]).unwrap();
    let mined = mine(
        &spec.grammar,
        &catalog,
        &pos,
        &neg,
        &MineConfig::default(),
        &mut |_| {},
    );
    let best = &mined.results[0];
    assert_eq!((best.tp, best.tn), (4, 3), "{}", best.text);
    assert_eq!(
        best.text,
        "forall <elem> container=\"<{<name> opid}><text></{<name> clid}>\" in start: opid = clid"
    );
}
