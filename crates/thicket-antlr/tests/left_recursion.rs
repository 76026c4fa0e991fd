//! Left-recursive rules resolved by precedence as ANTLR resolves them: one tree per
//! input, the one ANTLR builds. The expected trees are ANTLR's own (`toStringTree` of
//! the parser antlr-ng generates, run by antlr4-python3-runtime 4.13.2; `<EOF>`
//! dropped): `antlr_still_builds_the_recorded_trees` asks ANTLR again where it is
//! installed (see `antlr_verdicts.rs`).

use std::path::Path;
use thicket_antlr::AntlrSpec;
use thicket_parse::{ParseConfig, Parser, TreeCount};

/// Every kind of alternative ANTLR's rewrite knows: suffix (`.`, call, `!`), prefix
/// (`-`, low-precedence `not`), binary left- and right-associative, a ternary, a
/// group and atoms.
const OPS: &str = "grammar Ops;
s : e EOF ;
e : e '.' ID
  | e '(' e? ')'
  | '-' e
  | e '!'
  | <assoc=right> e '^' e
  | e ('*' | '/') e
  | e ('+' | '-') e
  | 'not' e
  | e 'and' e
  | <assoc=right> e '?' e ':' e
  | '(' e ')'
  | INT
  | ID
  ;
INT : [0-9]+ ;
ID : [a-z]+ ;
WS : ' ' -> skip ;
";

/// Inputs and the trees ANTLR 4.13 builds for them.
const TREES: &[(&str, &str)] = &[
    ("1+2*3", "(s (e (e 1) + (e (e 2) * (e 3))))"),
    ("1*2+3", "(s (e (e (e 1) * (e 2)) + (e 3)))"),
    ("1-2-3", "(s (e (e (e 1) - (e 2)) - (e 3)))"),
    ("2^3^4", "(s (e (e 2) ^ (e (e 3) ^ (e 4))))"),
    ("-1^2", "(s (e (e - (e 1)) ^ (e 2)))"),
    ("1!+2", "(s (e (e (e 1) !) + (e 2)))"),
    ("1+2!", "(s (e (e 1) + (e (e 2) !)))"),
    ("a.b.c", "(s (e (e (e a) . b) . c))"),
    ("f(1)(2)", "(s (e (e (e f) ( (e 1) )) ( (e 2) )))"),
    ("-f(1)", "(s (e - (e (e f) ( (e 1) ))))"),
    ("not a and b", "(s (e (e not (e a)) and (e b)))"),
    (
        "a and not b and c",
        "(s (e (e (e a) and (e not (e b))) and (e c)))",
    ),
    ("not a + b", "(s (e not (e (e a) + (e b))))"),
    (
        "a ? b : c ? d : e",
        "(s (e (e a) ? (e b) : (e (e c) ? (e d) : (e e))))",
    ),
    ("1 * not 2 * 3", "(s (e (e 1) * (e not (e (e 2) * (e 3)))))"),
    ("(1+2)*3", "(s (e (e ( (e (e 1) + (e 2)) )) * (e 3)))"),
    ("1+2*3!", "(s (e (e 1) + (e (e 2) * (e (e 3) !))))"),
    ("- - 1 !", "(s (e (e - (e - (e 1))) !))"),
    (
        "a ? b and c : d and e",
        "(s (e (e a) ? (e (e b) and (e c)) : (e (e d) and (e e))))",
    ),
    (
        "x.y(1+2).z",
        "(s (e (e (e (e x) . y) ( (e (e 1) + (e 2)) )) . z))",
    ),
];

fn load(text: &str) -> AntlrSpec {
    thicket_antlr::load_g4_texts(&[("Ops.g4".into(), text.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()))
}

#[test]
fn each_input_has_one_tree_the_one_antlr_builds() {
    let spec = load(OPS);
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    let check = spec.checker();
    for &(input, antlr) in TREES {
        let result = parser
            .parse(input.as_bytes())
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert!(
            matches!(result.count_trees(), TreeCount::Finite(1)),
            "{input}: {} trees",
            result.count_trees()
        );
        assert_eq!(spec.antlr_tree(&result.tree()), antlr, "{input}");
        check.accepts(input.as_bytes()).unwrap();
    }
}

#[test]
fn the_smallest_grammar_gives_one_tree_for_1_plus_2_times_3() {
    let spec = load("grammar E;\ns : e EOF ;\ne : e '*' e | e '+' e | INT ;\nINT : [0-9]+ ;\n");
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    let result = parser.parse(b"1+2*3").unwrap();
    assert!(matches!(result.count_trees(), TreeCount::Finite(1)));
    assert_eq!(
        spec.antlr_tree(&result.tree()),
        "(s (e (e 1) + (e (e 2) * (e 3))))"
    );
    // The levels keep the rule's name for every command: `e` is still `e`.
    let grammar = &spec.spec.grammar;
    assert!(grammar.symbol("e").is_some());
}

#[test]
fn long_chains_parse_with_one_tree() {
    // 20,000 terms: within the parser's default item budget, one tree (an ambiguous
    // reading has a Catalan number of trees and a cubic chart).
    let spec = load("grammar E;\ns : e EOF ;\ne : e '*' e | e '+' e | INT ;\nINT : [0-9]+ ;\n");
    let input: String = (0..20_000)
        .map(|i| format!("{}{}", i % 97, if i % 3 == 0 { "*" } else { "+" }))
        .collect::<String>()
        + "1";
    let config = ParseConfig {
        max_items: 50 * input.len(),
        ..ParseConfig::default()
    };
    let parser = Parser::new(&spec.spec.grammar, config).unwrap();
    let result = parser.parse(input.as_bytes()).unwrap();
    assert!(matches!(result.count_trees(), TreeCount::Finite(1)));
    spec.checker().accepts(input.as_bytes()).unwrap();
}

#[test]
fn generated_expressions_parse_back_to_their_own_tree() {
    use thicket_gen::{GenConfig, Generator};
    // Keywords as symbols: the byte grammar alone does not know that `not` is no
    // identifier, so `not(a)` would also be a call there (the exact reading knows).
    let spec = load(&OPS.replace("'not'", "'~'").replace("'and'", "'&'"));
    let generator = Generator::new(&spec.spec.grammar, GenConfig::default()).unwrap();
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    for i in 0..200 {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(3, i));
        let Ok(bytes) = spec.separate(&tree) else {
            continue;
        };
        if bytes != tree.bytes() {
            continue;
        }
        let parsed = parser.parse(&bytes).unwrap();
        assert!(
            matches!(parsed.count_trees(), TreeCount::Finite(1)),
            "{:?}: {} trees, {}",
            String::from_utf8_lossy(&bytes),
            parsed.count_trees(),
            spec.antlr_tree(&tree)
        );
        assert_eq!(
            spec.antlr_tree(&parsed.tree()),
            spec.antlr_tree(&tree),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

#[test]
fn antlr_still_builds_the_recorded_trees() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/antlr_oracle.py");
    let required = std::env::var("THICKET_REQUIRE_ANTLR").is_ok_and(|v| v == "1");
    let probe = std::process::Command::new("python3")
        .arg(&script)
        .arg("--probe")
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(!required, "THICKET_REQUIRE_ANTLR=1 but ANTLR is missing");
        eprintln!("skipped: ANTLR's tool or runtime is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grammar = dir.path().join("Ops.g4");
    std::fs::write(&grammar, OPS).unwrap();
    let inputs: Vec<&str> = TREES.iter().map(|(i, _)| *i).collect();
    let mut child = std::process::Command::new("python3")
        .arg(&script)
        .args(["--tree", "--stdin-json", "--cache"])
        .arg(dir.path().join("cache"))
        .arg(&grammar)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(&inputs).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for ((input, recorded), line) in TREES.iter().zip(lines) {
        let tree = line["tree"].as_str().unwrap().replace(" <EOF>", "");
        assert_eq!(&tree, recorded, "{input}");
    }
}
