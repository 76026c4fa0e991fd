//! Matches carried from one tree to an edited one (`SubtreeCache::carry`, for a solver
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
    let matches = ev.take_cache();
    // Nodes in the edited key or holding it changed; the others stayed where they were.
    let changed = second_pairs_last_key_changed(&grammar, &view);
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
    let mut reused = checker.evaluator(&view, c).with_cache(carried);
    assert!(fresh.holds(&c.formula));
    assert!(reused.holds(&c.formula));
    let Formula::Quantifier(q) = &c.formula else {
        panic!("a quantifier")
    };
    assert_eq!(fresh.instances(q), reused.instances(q));
}

/// The instances of a local universal that held are carried like matches: not visited
/// again where their subtree is the same, visited again where an edit changed it.
#[test]
fn carried_verdicts_are_dropped_where_the_edit_is() {
    let grammar = thicket_grammar::load_spec_text(
        "pairs.fan",
        b"<start> ::= <pair> (\";\" <pair>)*\n<pair> ::= <key> \"=\" <key>\n<key> ::= \"a\" | \"b\"\n",
    )
    .unwrap();
    let predicates = Predicates::standard();
    let local = thicket_constraint::from_text(
        &grammar,
        &predicates,
        "c.isla",
        "forall <pair> p=\"{<key> x}={<key> y}\": x = y",
    )
    .unwrap();
    let Formula::Quantifier(q) = &local.formula else {
        panic!("a quantifier")
    };
    assert!(q.local, "its body reads only the pair's own keys");
    // A body that looks outside the instance is not local.
    let global = thicket_constraint::from_text(
        &grammar,
        &predicates,
        "c.isla",
        "forall <pair> p=\"{<key> x}={<key> y}\": exists <key> k in start: k = x",
    )
    .unwrap();
    let Formula::Quantifier(q) = &global.formula else {
        panic!("a quantifier")
    };
    assert!(!q.local);

    let checker = Checker::new(&grammar, vec![local]);
    let c = &checker.constraints()[0];
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let before = parser.parse(b"a=a;b=b;a=a").unwrap().tree();
    // The second pair's second key rewritten: now it fails.
    let after = parser.parse(b"a=a;b=a;a=a").unwrap().tree();
    let view = TreeView::new(&before, &grammar);
    let mut ev = checker.evaluator(&view, c);
    assert!(ev.holds(&c.formula));
    let cache = ev.take_cache();
    assert_eq!(cache.held(), 3, "every pair held");
    let changed = second_pairs_last_key_changed(&grammar, &view);
    let carried = cache.carry(|n| (!changed(n)).then_some(n));
    assert_eq!(carried.held(), 2, "the second pair holds the edit");
    let view = TreeView::new(&after, &grammar);
    let mut reused = checker.evaluator(&view, c).with_cache(carried);
    assert!(
        !reused.holds(&c.formula),
        "the edited pair is evaluated again"
    );
}

/// Whether a node of the tree `view` shows changed when the second pair's last key is
/// rewritten: it lies in that key or holds it.
fn second_pairs_last_key_changed<'t>(
    grammar: &thicket_grammar::Grammar,
    view: &TreeView<'t>,
) -> impl Fn(NodeId) -> bool + 't {
    let tree = view.tree();
    let pair = grammar.symbol("pair").unwrap();
    let key = grammar.symbol("key").unwrap();
    let second = NodeId::from_index(view.nodes_of(pair, tree.root())[1] as usize);
    let edited = NodeId::from_index(*view.nodes_of(key, second).last().unwrap() as usize);
    move |n: NodeId| {
        let (x, end) = (n.index(), tree.subtree_end(n));
        (x <= edited.index() && edited.index() < end)
            || (edited.index() <= x && x < tree.subtree_end(edited))
    }
}
