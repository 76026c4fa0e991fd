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

#[test]
fn ambiguity_the_chart_does_not_see_is_still_counted() {
    // Inside tokens (regular parts scanned by one DFA): overlapping alternatives, a
    // split that is not forced, repetitions whose item can go on into the next.
    let nest = "<start> ::= <x>\n<x> ::= \"[\" <x> \"]\" | <t>\n";
    for (token, input, trees) in [
        ("<t> ::= \"a\"* \"a\"*", "[[aa]]", 3),
        ("<t> ::= \"a\" | r\"a\"", "[a]", 2),
        ("<t> ::= \"ab\" | \"a\" \"b\"", "[[ab]]", 2),
        ("<t> ::= (\"a\" | \"aa\")*", "[aaaa]", 5),
        ("<t> ::= (\"a\"?){2}", "[a]", 2),
        ("<t> ::= \"a\"+ \"b\"", "[aab]", 1),
        ("<t> ::= (\"ab\" | \"a\")* \"b\"", "[abb]", 1),
    ] {
        assert_eq!(
            count(&format!("{nest}{token}"), input),
            TreeCount::Finite(trees),
            "{token} on {input}"
        );
    }
    // Empty subtrees, chosen statically: two empty derivations of a recursive rule.
    assert_eq!(
        count(
            "<start> ::= <x>\n<x> ::= \"(\" <x> \")\" <y> | \"\"\n<y> ::= <x> | \"\"",
            "()"
        ),
        TreeCount::Finite(2)
    );
}

#[test]
fn an_unambiguous_input_is_counted_at_any_depth() {
    // Nested 20,000 deep: the counter's recursion gave up at about 2,000 levels.
    let grammar = load_spec_text(
        "json.fan",
        &std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/json.fan")).unwrap(),
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let deep = format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000));
    let parsed = parser.parse(deep.as_bytes()).unwrap();
    assert!(parsed.known_unambiguous());
    assert_eq!(parsed.count_trees(), TreeCount::Finite(1));
    let (trees, total) = parsed.trees(5).unwrap();
    assert_eq!((trees.len(), total), (1, 1));
    assert_eq!(trees[0].bytes(), deep.as_bytes());
    // Paths of every parse are those of the one tree.
    let paths = parsed.paths_in_any_parse(|_| true, 2);
    assert!(paths.iter().all(|p| (1..=2).contains(&p.len())));
    assert!(paths.len() > 5);
    // An ambiguous grammar is not taken for an unambiguous one.
    let grammar = load_spec_text("t.fan", b"<start> ::= <a>\n<a> ::= <a> <a> | \"x\"").unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    assert!(!parser.parse(b"xxx").unwrap().known_unambiguous());
}

#[test]
fn inputs_known_unambiguous_have_one_tree_by_counting_too() {
    // Small generated inputs of every bundled spec: wherever the chart says one tree
    // without counting, counting agrees.
    let specs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/");
    let mut known = 0;
    for spec in [
        "expr.fan",
        "json.fan",
        "csv.bnf",
        "url.fan",
        "xml.bnf",
        "markdown.fan",
        "scriptsizec.bnf",
        "rest.bnf",
        "tar.bnf",
    ] {
        let text = std::fs::read(format!("{specs}{spec}")).unwrap();
        let grammar = load_spec_text(spec, &text).unwrap();
        let config = thicket_gen::GenConfig {
            max_size: 4000,
            ..thicket_gen::GenConfig::default()
        };
        let generator = thicket_gen::Generator::new(&grammar, config).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        for i in 0..40 {
            let mut input = Vec::new();
            generator.generate_bytes(&mut thicket_gen::Generator::rng_for(9, i), &mut input);
            let parsed = parser.parse(&input).unwrap();
            if parsed.known_unambiguous() {
                known += 1;
                assert_eq!(
                    parsed.count_trees_exhaustively(),
                    TreeCount::Finite(1),
                    "{spec} input {i}: {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }
    assert!(known >= 100, "{known} inputs known unambiguous");
}

#[test]
fn an_ambiguous_input_is_counted_and_listed_at_any_depth() {
    // The counter recursed and gave up past about 2,000 levels.
    let grammar = load_spec_text(
        "t.fan",
        b"<start> ::= <a>\n<a> ::= \"[\" <a> \"]\" | <b> | <c>\n<b> ::= \"x\"\n<c> ::= \"x\"",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let deep = format!("{}x{}", "[".repeat(20_000), "]".repeat(20_000));
    let parsed = parser.parse(deep.as_bytes()).unwrap();
    assert!(!parsed.known_unambiguous());
    assert_eq!(parsed.count_trees(), TreeCount::Finite(2));
    let (trees, total) = parsed.trees(5).unwrap();
    assert_eq!((trees.len(), total), (2, 2));
    assert!(trees.iter().all(|t| t.bytes() == deep.as_bytes()));
    assert_ne!(format!("{:?}", trees[0]), format!("{:?}", trees[1]));
    assert!(parsed.paths_in_any_parse(|_| true, 3).len() > 5);
    // Two trees per level: more than 2^128, still counted.
    let grammar = load_spec_text(
        "t.fan",
        b"<start> ::= <a>\n<a> ::= \"[\" <a> \"]\" | \"[\" <b> \"]\" | \"\"\n<b> ::= <a>",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let deep = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    let parsed = parser.parse(deep.as_bytes()).unwrap();
    assert_eq!(parsed.count_trees(), TreeCount::Overflow);
}

#[test]
fn associative_lists_cost_linear_items_read_left_nested_and_count_every_bracketing() {
    // ISLa's shape of a list: <list> ::= <list> " " <list> | <item> (XML attributes).
    let grammar = load_spec_text(
        "t.fan",
        b"<start> ::= <list>\n<list> ::= <list> \" \" <list> | <item>\n<item> ::= \"a\" | \"bb\"",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let items = |n: usize| {
        let input = vec!["a"; n].join(" ");
        parser.parse(input.as_bytes()).unwrap().item_count()
    };
    let (small, large) = (items(500), items(2_000));
    // Four times the operands, four times the items (every bracketing would be sixteen).
    assert!(
        large < 5 * small,
        "{small} items for 500 operands, {large} for 2,000"
    );
    let parsed = parser.parse(b"a bb a a").unwrap();
    let sexp = parsed.tree().to_sexp(&grammar);
    let left_nested = "(<start> (<list> (<list> (<list> (<list> (<item> \"a\")) \" \" (<list> (<item> \"bb\"))) \" \" (<list> (<item> \"a\"))) \" \" (<list> (<item> \"a\"))))";
    assert_eq!(sexp, left_nested);
    // Counting and listing see every bracketing all the same.
    assert_eq!(parsed.count_trees(), TreeCount::Finite(5));
    let (trees, total) = parsed.trees(10).unwrap();
    assert_eq!((trees.len(), total), (5, 5));
    // And so do the paths of every parse: a right operand that is a list of its own.
    let body = grammar.rule(grammar.symbol("list").unwrap()).body;
    let thicket_grammar::Expr::Alt(alternatives) = grammar.expr(body) else {
        panic!("<list> has alternatives");
    };
    let thicket_grammar::Expr::Seq(children) = grammar.expr(alternatives[0]) else {
        panic!("the first alternative is a sequence");
    };
    let id = |e: thicket_grammar::ExprId| e.index() as u32;
    let right_list: Box<[u32]> = Box::new([id(children[2]), id(body), id(alternatives[0])]);
    let paths = parsed.paths_in_any_parse(|_| true, 3);
    assert!(paths.contains(&right_list), "{paths:?}");
    let left_nested_only = parser.parse(b"a bb").unwrap();
    assert!(
        !left_nested_only
            .paths_in_any_parse(|_| true, 3)
            .contains(&right_list)
    );
}

#[test]
fn the_paths_of_every_parse_are_followed_only_within_the_budget() {
    let grammar = load_spec_text("t.fan", b"<start> ::= <a>\n<a> ::= <a> <a> | \"x\"").unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    // A small forest: the same paths as without a budget.
    let parsed = parser.parse(b"xxx").unwrap();
    assert_eq!(
        parsed.paths_in_any_parse_within(|_| true, 3, 1_000),
        Some(parsed.paths_in_any_parse(|_| true, 3))
    );
    // Every split of 80 leaves: thousands of forest states, past a budget of 1,000,
    // whatever the order they are counted in; and the same answer on a second parse.
    let run = "x".repeat(80);
    for _ in 0..2 {
        let parsed = parser.parse(run.as_bytes()).unwrap();
        assert_eq!(parsed.paths_in_any_parse_within(|_| true, 3, 1_000), None);
        assert!(
            parsed
                .paths_in_any_parse_within(|_| true, 3, usize::MAX)
                .is_some()
        );
    }
}
