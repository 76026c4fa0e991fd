//! grammars-v4 grammars (copied into `tests/data`, see its README): every example input
//! is accepted by both readings, and generated inputs are accepted by the exact reading
//! and by an independent parser of the language.

use std::path::{Path, PathBuf};
use thicket_antlr::AntlrSpec;
use thicket_gen::{GenConfig, Generator};
use thicket_parse::{ParseConfig, Parser};

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

/// Reads the `.g4` files of a grammar folder.
fn load(dir: &str) -> AntlrSpec {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(data(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| thicket_antlr::is_g4(p))
        .collect();
    paths.sort();
    let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    thicket_antlr::load_g4_files(&paths, None, 1 << 20).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn examples_parse(dir: &str, expected: usize) {
    let spec = load(dir);
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    let checker = spec.checker();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(data(dir).join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    inputs.sort();
    assert_eq!(inputs.len(), expected, "{dir}: examples copied");
    for input in &inputs {
        let text = std::fs::read(input).unwrap();
        if let Err(r) = checker.accepts(&text) {
            panic!("{}: exact reading rejects: {r}", input.display());
        }
        if let Err(e) = parser.recognize(&text) {
            panic!("{}: byte grammar rejects: {e}", input.display());
        }
    }
}

#[test]
fn json_examples_parse() {
    examples_parse("json", 2);
}

#[test]
fn csv_examples_parse() {
    examples_parse("csv", 1);
}

#[test]
fn url_examples_parse() {
    examples_parse("url", 29);
}

#[test]
fn xml_examples_parse() {
    examples_parse("xml", 3);
}

#[test]
fn toml_examples_parse() {
    examples_parse("toml", 4);
}

#[test]
fn tinyc_examples_parse() {
    examples_parse("tinyc", 5);
}

/// Generates `n` inputs (seed 1), separated where the lexer would merge tokens, and
/// returns them with how many the exact reading accepts before and after separation.
fn generate(spec: &AntlrSpec, n: u64) -> (Vec<Vec<u8>>, usize, usize) {
    let generator = Generator::new(&spec.spec.grammar, GenConfig::default()).unwrap();
    let checker = spec.checker();
    let (mut raw_ok, mut ok) = (0, 0);
    let mut out = Vec::new();
    for i in 0..n {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(1, i));
        raw_ok += usize::from(checker.accepts(tree.bytes()).is_ok());
        let input = spec.separate(&tree).expect("a separator exists");
        ok += usize::from(checker.accepts(&input).is_ok());
        out.push(input);
    }
    (out, raw_ok, ok)
}

/// Whether `input` holds a `\uD800`-`\uDFFF` escape: RFC 8259 (section 8.2) allows
/// these lone surrogates and the grammar generates them; serde_json refuses them.
fn has_surrogate_escape(input: &[u8]) -> bool {
    input.windows(6).enumerate().any(|(i, w)| {
        // An escaped backslash before `u` is no escape: count the backslashes.
        let backslashes = input[..i + 1]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        w[0] == b'\\'
            && backslashes % 2 == 1
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

#[test]
fn generated_json_is_json() {
    let spec = load("json");
    let (inputs, _, exact) = generate(&spec, 1000);
    let (mut valid, mut surrogates) = (0, 0);
    for input in &inputs {
        match serde_json::from_slice::<serde_json::Value>(input) {
            Ok(_) => valid += 1,
            Err(_) if has_surrogate_escape(input) => surrogates += 1,
            Err(e) => panic!(
                "serde_json rejects {:?}: {e}",
                String::from_utf8_lossy(input)
            ),
        }
    }
    eprintln!(
        "json: {exact}/1000 accepted by the exact reading, {valid}/1000 by serde_json, \
         {surrogates} refused only for a lone surrogate escape"
    );
    assert_eq!(exact, 1000);
    assert_eq!(valid + surrogates, 1000);
    assert!(valid >= 900, "most inputs have no surrogate escape");
}

#[test]
fn generated_csv_is_csv_with_the_same_fields() {
    let spec = load("csv");
    let (inputs, _, exact) = generate(&spec, 1000);
    let mut valid = 0;
    for input in &inputs {
        // The fields as the grammar reads them: rows end at '\n', fields at ','; a
        // quoted field is unquoted ("" is a quote).
        let tokens = spec.lexer.tokens(input).unwrap();
        // Each row with whether it has any token (the csv crate skips empty lines,
        // which the grammar reads as one empty field).
        let mut rows: Vec<(Vec<String>, bool)> = vec![(vec![String::new()], false)];
        for t in &tokens {
            let text = String::from_utf8_lossy(&input[t.start..t.end]).into_owned();
            let row = rows.last_mut().unwrap();
            match t.kind.as_str() {
                "'\n'" | "'\r'" => {}
                "','" => {
                    row.0.push(String::new());
                    row.1 = true;
                }
                "STRING" => {
                    *row.0.last_mut().unwrap() = text[1..text.len() - 1].replace("\"\"", "\"");
                    row.1 = true;
                }
                "TEXT" => {
                    *row.0.last_mut().unwrap() = text;
                    row.1 = true;
                }
                other => panic!("unexpected token {other}"),
            }
            if t.kind == "'\n'" {
                rows.push((vec![String::new()], false));
            }
        }
        rows.pop();
        let rows: Vec<Vec<String>> = rows.into_iter().filter(|r| r.1).map(|r| r.0).collect();
        let records: Result<Vec<Vec<String>>, _> = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&input[..])
            .records()
            .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
            .collect();
        match records {
            Ok(records) if records == rows => valid += 1,
            other => panic!(
                "the csv crate reads {:?} as {other:?}, the grammar as {rows:?}",
                String::from_utf8_lossy(input)
            ),
        }
    }
    eprintln!(
        "csv: {exact}/1000 accepted by the exact reading, {valid}/1000 read by the csv crate with the same rows and fields"
    );
    assert_eq!(exact, 1000);
    assert_eq!(valid, 1000);
}
