//! Parsing generated inputs gives back trees that unparse to the same bytes, for every
//! bundled grammar; and tricky grammars parse.

use std::path::PathBuf;
use thicket_gen::{GenConfig, Generator};
use thicket_grammar::{Grammar, LoadOptions, load_spec_file, load_spec_text};
use thicket_parse::{ParseConfig, ParseError, Parser};
use thicket_tree::{DerivationTree, NodeId};

fn bundled(name: &str) -> Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    load_spec_file(&path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()))
        .grammar
}

fn roundtrip(grammar: &Grammar, count: u64, max_depth: u32) {
    let generator = Generator::new(
        grammar,
        GenConfig {
            max_depth,
            ..GenConfig::default()
        },
    )
    .unwrap();
    let parser = Parser::new(grammar, ParseConfig::default()).unwrap();
    for i in 0..count {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(11, i));
        let input = tree.bytes();
        let parsed = parser.parse(input).unwrap_or_else(|e| {
            panic!(
                "input {i} {:?} rejected: {e}",
                String::from_utf8_lossy(input)
            )
        });
        let back = parsed.tree();
        assert_eq!(back.bytes(), input, "unparse(parse(x)) == x for input {i}");
    }
}

/// One test per bundled spec (so they run in parallel): 10,000 inputs at the default
/// depth limit parse, and the tree spells the input byte for byte.
macro_rules! round_trip_tests {
    ($($test:ident: $spec:literal,)*) => {$(
        #[test]
        fn $test() {
            roundtrip(&bundled($spec), 10_000, GenConfig::default().max_depth);
        }
    )*};
}

round_trip_tests! {
    expr_round_trips: "expr.fan",
    json_round_trips: "json.fan",
    csv_round_trips: "csv.bnf",
    url_round_trips: "url.fan",
    xml_round_trips: "xml.bnf",
    markdown_round_trips: "markdown.fan",
    scriptsizec_round_trips: "scriptsizec.bnf",
    rest_round_trips: "rest.bnf",
    tar_round_trips: "tar.bnf",
}

/// On an unambiguous grammar the parse tree is the generated one, node for node: every
/// reference is there, though the chart keeps items only for rule bodies
/// (`Parser::chart_node`), including chains of rules whose body is one reference, a
/// reference predicted inside a repetition, and a nullable reference.
#[test]
fn unambiguous_grammars_give_back_the_generated_tree() {
    let chains = load_spec_text(
        "t.fan",
        b"<start> ::= <a>\n<a> ::= <b>\n<b> ::= <c> | \"[\" <a>* \"]\" <opt>\n\
          <c> ::= \"x\" <a> | \"y\"\n<opt> ::= <more>\n<more> ::= \"!\" <more> | \"\"",
    )
    .unwrap();
    for (name, grammar) in [
        ("json.fan", bundled("json.fan")),
        ("csv.bnf", bundled("csv.bnf")),
        ("chains", chains),
    ] {
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        for i in 0..300 {
            let (generated, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            let parsed = parser.parse(generated.bytes()).unwrap().tree();
            assert_eq!(
                parsed.to_sexp(&grammar),
                generated.to_sexp(&grammar),
                "{name} input {i}"
            );
            assert_same_tree(&parsed, &generated);
        }
    }
}

#[test]
fn ambiguous_and_recursive_grammars() {
    for spec in [
        "<start> ::= <a>\n<a> ::= <a> <a> | \"x\"",
        "<start> ::= <a>\n<a> ::= <a> | \"x\"",
        "<start> ::= <a>\n<a> ::= <b> <a> | \"\"\n<b> ::= \"x\" | \"\"",
        "<start> ::= <a>\n<a> ::= <b> \"x\" | \"y\"\n<b> ::= <c> <a>\n<c> ::= \"\"",
        "<start> ::= (\"a\" | \"aa\")* \"b\"?",
        "<start> ::= <e>*\n<e> ::= \"\" | \"q\"",
    ] {
        let grammar = load_spec_text("t.fan", spec.as_bytes()).unwrap();
        roundtrip(&grammar, 200, 10);
    }
}

#[test]
fn rejections_say_where_and_what_was_expected() {
    let grammar = bundled("json.fan");
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let err = parser.parse(b"[1, 2,\n  ]").map(|_| ()).unwrap_err();
    let ParseError::Rejected(r) = err else {
        panic!("{err:?}")
    };
    assert_eq!((r.line, r.column, r.offset), (2, 3, 9));
    assert_eq!(r.found, Some(b']'));
    assert!(r.expected.iter().any(|e| e == "\"[\""), "{:?}", r.expected);
    let err = parser.parse(b"{\"a\": ").map(|_| ()).unwrap_err();
    let ParseError::Rejected(r) = err else {
        panic!()
    };
    assert_eq!(r.found, None);
    assert_eq!(r.offset, 6);
}

#[test]
fn long_repetitions_parse() {
    let grammar = load_spec_text("t.fan", b"<start> ::= <x>*\n<x> ::= \"a\" | \"b\"").unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let input: Vec<u8> = (0..1_000_000)
        .map(|i| if i % 3 == 0 { b'a' } else { b'b' })
        .collect();
    let parsed = parser.parse(&input).unwrap();
    assert!(
        parsed.item_count() < 10 * input.len(),
        "{} items",
        parsed.item_count()
    );
    assert_eq!(parsed.tree().bytes(), &input[..]);
}

#[test]
fn right_recursion_stays_linear_thanks_to_leo() {
    // ISLa-style BNF lists are right-recursive; without Leo's optimisation every
    // position would complete the whole spine above it (quadratic items).
    let grammar = load_spec_text(
        "t.fan",
        b"<start> ::= <list>\n<list> ::= <item> <list> | \"\"\n<item> ::= \"a\" | \"b\" <start> \"c\"",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let mut input = b"a".repeat(30_000);
    input.extend_from_slice(b"b");
    input.extend_from_slice(&b"a".repeat(30_000));
    input.extend_from_slice(b"c");
    let parsed = parser.parse(&input).unwrap();
    assert!(
        parsed.item_count() < 20 * input.len(),
        "{} items for {} bytes",
        parsed.item_count(),
        input.len()
    );
    let tree = parsed.tree();
    assert_eq!(tree.bytes(), &input[..]);
    // The tree has the grammar's shape: one <item> per "a", "b...c" included.
    let items = tree
        .descendants(tree.root())
        .filter(|&n| grammar.display_expr(tree.expr(n)) == "<item>")
        .count();
    assert_eq!(items, 60_001);
}

/// A parser reused across inputs keeps its chart vectors (`ParseConfig::keep_bytes`),
/// and dropped trees leave their node vectors for the next: whatever was parsed before,
/// every tree is the one a parser that keeps nothing reads, and so is every rejection.
#[test]
fn reused_parser_reads_the_same_trees_as_one_that_keeps_nothing() {
    let grammar = bundled("json.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let inputs: Vec<Vec<u8>> = (0..300)
        .map(|i| {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            tree.bytes().to_vec()
        })
        .collect();
    // One large input first, so that the smaller ones after it get vectors with stale
    // contents; a rejected input in between.
    let mut big = b"[".to_vec();
    big.extend(inputs.join(&b","[..]));
    big.push(b']');
    let mut sequence = vec![big, b"[1,".to_vec()];
    sequence.extend(inputs);
    thicket_tree::keep_spare_nodes(128 << 20);
    let reused = Parser::new(&grammar, THREADS).unwrap();
    let keep_nothing = ParseConfig {
        keep_bytes: 0,
        ..ParseConfig::default()
    };
    let plain = Parser::new(&grammar, keep_nothing).unwrap();
    for (i, input) in sequence.iter().enumerate() {
        match (reused.parse(input), plain.parse(input)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.item_count(), b.item_count(), "input {i}");
                let (a, b) = (a.tree(), b.tree());
                assert_eq!(a.to_sexp(&grammar), b.to_sexp(&grammar), "input {i}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "input {i}"),
            (a, b) => panic!("input {i}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
        }
    }
}

/// The `thicket` binary's settings: helper threads for large inputs.
const THREADS: ParseConfig = ParseConfig {
    max_items: 100_000_000,
    keep_bytes: 128 << 20,
    threads: true,
    reserve_per_byte: 0,
};

/// A JSON array of generated documents (`seed`), of at least `bytes` bytes.
fn generated_json_array(grammar: &Grammar, seed: u64, bytes: usize) -> Vec<u8> {
    let generator = Generator::new(grammar, GenConfig::default()).unwrap();
    let mut text = b"[".to_vec();
    let mut i = 0;
    while text.len() < bytes {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(seed, i));
        if i > 0 {
            text.push(b',');
        }
        text.extend_from_slice(tree.bytes());
        i += 1;
    }
    text.push(b']');
    text
}

/// `a` and `b` are the same tree, node for node, with the same text under every node.
fn assert_same_tree(a: &DerivationTree, b: &DerivationTree) {
    assert_eq!(a.len(), b.len());
    for node in (0..b.len()).map(NodeId::from_index) {
        assert_eq!(a.expr(node), b.expr(node), "node {node:?}");
        assert_eq!(a.text_range(node), b.text_range(node), "node {node:?}");
        assert_eq!(a.subtree_end(node), b.subtree_end(node), "node {node:?}");
    }
    assert_eq!(a.bytes(), b.bytes());
}

/// A large input's tree is read by two threads (the later half of a long run of
/// siblings into a builder of its own, then appended): it is the tree a single-threaded
/// read reports, node for node, with the right text under every node.
#[test]
fn tree_read_by_two_threads_is_the_one_read_by_one() {
    let grammar = bundled("json.fan");
    // Well past the size from which two threads read (128 KiB).
    let text = generated_json_array(&grammar, 9, 400_000);
    let parser = Parser::new(&grammar, THREADS).unwrap();
    let parsed = parser.parse(&text).unwrap();
    let forked = parsed.tree();
    let mut builder = thicket_tree::TreeBuilder::with_text(&text);
    parsed.build_into(&mut builder);
    let single = builder.finish();
    assert_same_tree(&forked, &single);
    assert_eq!(forked.bytes(), &text[..]);
}

/// Large inputs have their chart and tree memory reserved from what earlier ones
/// needed per byte and faulted in ahead by another thread (`ParseConfig::threads`):
/// whether the reservation is too small (a denser input than before) or too large (a
/// sparser one), or an input is only recognised in between, every tree is the one a
/// parser that prefaults and keeps nothing reads.
#[test]
fn memory_reserved_and_faulted_in_ahead_changes_no_tree() {
    let grammar = bundled("json.fan");
    // Past the size from which memory is faulted in ahead (256 KiB); generated
    // documents, and one of small numbers (about twice as many nodes per byte).
    let generated = generated_json_array(&grammar, 11, 300_000);
    let mut numbers = b"[".to_vec();
    for i in 0..100_000 {
        numbers.extend_from_slice(format!("{},", i % 10).as_bytes());
    }
    numbers.extend_from_slice(b"0]");
    let ahead = Parser::new(&grammar, THREADS).unwrap();
    let plain = Parser::new(
        &grammar,
        ParseConfig {
            threads: false,
            keep_bytes: 0,
            ..ParseConfig::default()
        },
    )
    .unwrap();
    for (i, text) in [&generated, &numbers, &generated, &numbers, &generated]
        .into_iter()
        .enumerate()
    {
        if i == 3 {
            ahead.recognize(text).unwrap();
        }
        let (a, b) = (ahead.parse(text).unwrap(), plain.parse(text).unwrap());
        assert_eq!(a.item_count(), b.item_count(), "input {i}");
        assert_same_tree(&a.tree(), &b.tree());
    }
}

/// `parse_as` reads a text as any rule: every subtree of a generated tree parses back
/// as its rule to a tree with the same text, rooted at a reference to that rule; the
/// same text as the start rule is rejected when it is not a whole input.
#[test]
fn every_subtree_parses_back_as_its_own_rule() {
    let grammar = bundled("json.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let mut checked = 0;
    for i in 0..20 {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
        for node in tree.descendants(tree.root()) {
            let thicket_grammar::Expr::Ref(symbol) = grammar.expr(tree.expr(node)) else {
                continue;
            };
            let text = tree.text(node);
            let result = parser
                .parse_as(*symbol, text)
                .unwrap_or_else(|e| panic!("{text:?} as {symbol:?}: {e}"));
            let again = result.tree();
            assert_eq!(again.bytes(), text);
            assert!(matches!(
                grammar.expr(again.expr(again.root())),
                thicket_grammar::Expr::Ref(s) if s == symbol
            ));
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} subtrees");
    let member = grammar.symbol("member").expect("json.fan has <member>");
    assert!(parser.parse_as(member, b"\"k\": 1").is_ok());
    assert!(parser.parse(b"\"k\": 1").is_err());
    assert!(parser.parse_as(member, b"\"k\" 1").is_err());
}
