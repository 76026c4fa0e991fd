//! Ambiguous and tricky grammars: tree counts, and a finite tree even where there are
//! infinitely many.

use thicket_grammar::load_spec_text;
use thicket_parse::{ParseConfig, Parser, TreeCount};

fn count(spec: &str, input: &str) -> TreeCount {
    let grammar = load_spec_text("t.fan", spec.as_bytes()).unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let parsed = parser
        .parse(input.as_bytes())
        .unwrap_or_else(|e| panic!("{input:?}: {e}"));
    assert_eq!(
        parsed.tree().bytes(),
        input.as_bytes(),
        "the chosen tree spells the input"
    );
    parsed.count_trees()
}

#[test]
fn binary_concatenation_has_catalan_many_parses() {
    // C(n-1) binary trees over n leaves.
    let catalan = [1u128, 1, 2, 5, 14, 42, 132, 429, 1430, 4862, 16796];
    for leaves in 1..=catalan.len() {
        let input = "x".repeat(leaves);
        assert_eq!(
            count("<start> ::= <a>\n<a> ::= <a> <a> | \"x\"", &input),
            TreeCount::Finite(catalan[leaves - 1]),
            "{leaves} leaves"
        );
    }
}

#[test]
fn unit_and_empty_cycles_have_infinitely_many_parses() {
    assert_eq!(
        count("<start> ::= <a>\n<a> ::= <a> | \"x\"", "x"),
        TreeCount::Infinite
    );
    assert_eq!(
        count(
            "<start> ::= <a>\n<a> ::= <b> <a> | \"\"\n<b> ::= \"x\" | \"\"",
            "xx"
        ),
        TreeCount::Infinite
    );
}

#[test]
fn nullable_right_recursion_and_hidden_left_recursion() {
    // Nullable right recursion: <l> ::= "x" <l> | "" — one tree per input.
    assert_eq!(
        count("<start> ::= <l>\n<l> ::= \"x\" <l> | \"\"", "xxxx"),
        TreeCount::Finite(1)
    );
    // Hidden left recursion: <a> ::= <e> <a> "y" | "x" with nullable <e>.
    assert_eq!(
        count(
            "<start> ::= <a>\n<a> ::= <e> <a> \"y\" | \"x\"\n<e> ::= \"\"",
            "xyyy"
        ),
        TreeCount::Finite(1)
    );
    // Ambiguous repetition: ("a" | "aa")* over "aaaa" is a composition of 4 into 1s and 2s.
    assert_eq!(
        count("<start> ::= (\"a\" | \"aa\")*", "aaaa"),
        TreeCount::Finite(5)
    );
    // Empty repetitions past the minimum do not make new trees.
    assert_eq!(
        count("<start> ::= <e>*\n<e> ::= \"\" | \"q\"", "qq"),
        TreeCount::Finite(1)
    );
}

#[test]
fn unambiguous_bundled_style_grammars_have_one_tree() {
    let expr = "<start> ::= <add>\n<add> ::= <add> \"+\" <mul> | <mul>\n<mul> ::= <mul> \"*\" <n> | <n>\n<n> ::= r\"[0-9]+\"";
    assert_eq!(count(expr, "1+2*3+4"), TreeCount::Finite(1));
}

#[test]
fn all_trees_are_enumerated_distinct_and_each_spells_the_input() {
    let grammar = load_spec_text("t.fan", b"<start> ::= <a>\n<a> ::= <a> <a> | \"x\"").unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let parsed = parser.parse(b"xxxxx").unwrap();
    let (trees, total) = parsed.trees(1000).unwrap();
    assert_eq!(total, 14);
    assert_eq!(trees.len(), 14);
    let shapes: std::collections::HashSet<String> =
        trees.iter().map(|t| t.to_sexp(&grammar)).collect();
    assert_eq!(shapes.len(), 14, "all distinct");
    assert!(trees.iter().all(|t| t.bytes() == b"xxxxx"));
    // Bounded: asking for fewer gives fewer, the total stays.
    let (some, total) = parsed.trees(3).unwrap();
    assert_eq!((some.len(), total), (3, 14));

    let repeat = load_spec_text("t.fan", b"<start> ::= (\"a\" | \"aa\")*").unwrap();
    let parser = Parser::new(&repeat, ParseConfig::default()).unwrap();
    let parsed = parser.parse(b"aaaa").unwrap();
    let (trees, total) = parsed.trees(100).unwrap();
    assert_eq!((trees.len(), total), (5, 5));
    let shapes: std::collections::HashSet<String> =
        trees.iter().map(|t| format!("{t:?}")).collect();
    assert_eq!(shapes.len(), 5);

    let cyclic = load_spec_text("t.fan", b"<start> ::= <a>\n<a> ::= <a> | \"x\"").unwrap();
    let parser = Parser::new(&cyclic, ParseConfig::default()).unwrap();
    assert_eq!(
        parser.parse(b"x").unwrap().trees(10).unwrap_err(),
        TreeCount::Infinite
    );
}

#[test]
fn ambiguous_right_recursion_returns_the_first_derivation() {
    // Leo shortcuts skip items that tree reading rebuilds from the chains. Every item,
    // skipped or not, keeps its first derivation: a top reached by a Leo shortcut is
    // read through the chain of the completion that first reached it. Pinned so that
    // faster ways of reading keep choosing the same tree.
    let grammar = load_spec_text(
        "t.fan",
        b"<start> ::= <r>\n<r> ::= \"a\" <r> | \"a\" <r> \"b\" | \"\"",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    for (input, tree) in [
        ("aab", "(<start> (<r> \"a\" (<r> \"a\" (<r> \"\")) \"b\"))"),
        (
            "aaabb",
            "(<start> (<r> \"a\" (<r> \"a\" (<r> \"a\" (<r> \"\")) \"b\") \"b\"))",
        ),
    ] {
        let parsed = parser.parse(input.as_bytes()).unwrap();
        assert_eq!(parsed.tree().to_sexp(&grammar), tree, "{input}");
    }
}
