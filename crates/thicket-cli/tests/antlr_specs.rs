//! `.g4` grammars as SPEC: lint, parse (exact: lexer then parser rules), generate
//! (separated, checked), and a parser + lexer pair found through `tokenVocab`.

use std::process::Command;

fn data(path: &str) -> String {
    format!(
        "{}/../thicket-antlr/tests/data/{path}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn thicket(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn lint_parse_and_generate_a_combined_grammar() {
    let spec = data("json/JSON.g4");
    let lint = thicket(&["lint", &spec]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stderr)
    );
    assert!(String::from_utf8_lossy(&lint.stdout).contains("start <json>"));
    let example = data("json/examples/example1.json");
    let parse = thicket(&["parse", "-q", &spec, &example]);
    assert_eq!(parse.status.code(), Some(0));
    let generated = thicket(&[
        "generate",
        &spec,
        "-n",
        "50",
        "--seed",
        "4",
        "--separator",
        "\\0",
    ]);
    assert!(generated.status.success());
    let inputs: Vec<&[u8]> = generated
        .stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(inputs.len(), 50);
    let dir = tempfile::tempdir().unwrap();
    for (i, input) in inputs.iter().enumerate() {
        let path = dir.path().join(format!("{i}.json"));
        std::fs::write(&path, input).unwrap();
        let parse = thicket(&["parse", "-q", &spec, path.to_str().unwrap()]);
        assert_eq!(
            parse.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn parse_is_exact_on_keywords() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("K.g4");
    std::fs::write(
        &spec,
        "grammar K; s : ('if' ID | ID '=' ID) ';' EOF ; ID : [a-z]+ ; WS : ' ' -> skip ;",
    )
    .unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "if = x;").unwrap();
    let out = thicket(&["parse", spec.to_str().unwrap(), input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1:4"), "{stderr}");
}

#[test]
fn parser_grammar_finds_its_lexer_and_start_rule() {
    let spec = data("xml/XMLParser.g4");
    let example = data("xml/examples/books.xml");
    let out = thicket(&["parse", "-q", &spec, &example]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lexer = data("xml/XMLLexer.g4");
    let out = thicket(&[
        "parse", "-q", "--lexer", &lexer, "--start", "element", &spec, &example,
    ]);
    assert_eq!(out.status.code(), Some(1), "books.xml starts with a prolog");
    let bad = thicket(&["lint", "--start", "nosuch", &spec]);
    assert_eq!(bad.status.code(), Some(3));
}
