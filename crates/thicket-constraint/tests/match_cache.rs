//! Matches carried from one tree to an edited one (`MatchCache::carry`, for a solver
//! that repairs a tree round after round) give the verdicts of a fresh evaluation.

use thicket_constraint::{Checker, Formula, Predicates, TreeView};
use thicket_parse::{ParseConfig, Parser};
use thicket_tree::NodeId;

#[test]
fn carried_matches_give_the_verdicts_of_fresh_ones() {
    let grammar = thicket_grammar::load_spec_text(
        "pairs.fan",
        b"<start> ::= <pair> (\";\" <pair>)*\n<pair> ::= <key> \"=\" <key>\n<key> ::= \"a\" | \"b\"\n",
    )
    .unwrap();
    let constraint = thicket_constraint::from_text(
        &grammar,
        &Predicates::standard(),
        "c.isla",
        "forall <pair> p=\"{<key> x}={<key> y}\": x = y",
    )
    .unwrap();
    let checker = Checker::new(&grammar, vec![constraint]);
    let c = &checker.constraints()[0];
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let before = parser.parse(b"a=a;b=a;b=b").unwrap().tree();
    // The second pair's second key rewritten: the same shape, so the same node ids.
    let after = parser.parse(b"a=a;b=b;b=b").unwrap().tree();
    assert_eq!(before.len(), after.len());

    let view = TreeView::new(&before, &grammar);
    let mut ev = checker.evaluator(&view, c);
    assert!(!ev.holds(&c.formula));
    let matches = ev.take_matches();
    let pair = grammar.symbol("pair").unwrap();
    let key = grammar.symbol("key").unwrap();
    let second = NodeId::from_index(view.nodes_of(pair, before.root())[1] as usize);
    let edited = NodeId::from_index(*view.nodes_of(key, second).last().unwrap() as usize);
    // Nodes in the edited key or holding it changed; the others stayed where they were.
    let changed = |n: NodeId| {
        let (x, end) = (n.index(), before.subtree_end(n));
        (x <= edited.index() && edited.index() < end)
            || (edited.index() <= x && x < before.subtree_end(edited))
    };
    let full = matches.len();
    let carried = matches.carry(|n| (!changed(n)).then_some(n));
    // The first and third pairs' matches survive; the second pair's does not.
    assert!(
        !carried.is_empty() && carried.len() < full,
        "{} of {full}",
        carried.len()
    );

    let view = TreeView::new(&after, &grammar);
    let mut fresh = checker.evaluator(&view, c);
    let mut reused = checker.evaluator(&view, c).with_matches(carried);
    assert!(fresh.holds(&c.formula));
    assert!(reused.holds(&c.formula));
    let Formula::Quantifier(q) = &c.formula else {
        panic!("a quantifier")
    };
    assert_eq!(fresh.instances(q), reused.instances(q));
}
