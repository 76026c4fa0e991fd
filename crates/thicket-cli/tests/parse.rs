//! `thicket parse` on inputs written by others: JSONTestSuite, the grammars-v4 examples,
//! the RFC 4180 examples; hostile inputs; output formats and exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Inputs written by others, copied into the repository (see `data/README.md`): a test
/// reads nothing outside it.
fn test_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn thicket(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("thicket runs")
}

fn thicket_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("thicket runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // The parser may reject early and close stdin; that is fine.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("thicket finishes");
    writer.join().expect("writer thread");
    out
}

fn files(dir: &Path, prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn jsontestsuite_accepts_every_y_file_and_rejects_every_n_file_with_a_position() {
    let dir = test_data().join("jsontestsuite/test_parsing");
    let accept = files(&dir, "y_");
    assert!(accept.len() > 90, "{} y_ files", accept.len());
    let mut args = vec!["parse", "specs/json.fan", "--quiet"];
    args.extend(accept.iter().map(String::as_str));
    let out = thicket(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let reject = files(&dir, "n_");
    assert!(reject.len() > 180, "{} n_ files", reject.len());
    let mut args = vec!["parse", "specs/json.fan", "--format", "json"];
    args.extend(reject.iter().map(String::as_str));
    let out = thicket(&args);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), reject.len());
    for (line, file) in lines.iter().zip(&reject) {
        assert_eq!(line["ok"], false, "{file} was accepted");
        let error = &line["error"];
        assert!(
            error["line"].as_u64().unwrap() >= 1 && error["column"].as_u64().unwrap() >= 1,
            "{file}: {error}"
        );
    }
    // Rejections name the file, line and column, show the line with a caret and say
    // what was expected.
    let err = stderr(&out);
    assert!(err.contains("n_array_extra_comma.json:1:"), "{err}");
    assert!(err.contains("^") && err.contains("expected"), "{err}");
}

#[test]
fn grammars_v4_examples_parse() {
    let v4 = test_data().join("grammars-v4");
    let json: Vec<String> = files(&v4.join("json/examples"), "");
    let mut args = vec!["parse", "specs/json.fan", "--quiet"];
    args.extend(json.iter().map(String::as_str));
    assert_eq!(thicket(&args).status.code(), Some(0));

    let csv = v4.join("csv/examples/example1.csv");
    let out = thicket(&["parse", "specs/csv.bnf", "--quiet", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Each URL example is one URL (some files end in a line break, which is not part
    // of the URL).
    for file in files(&v4.join("url/examples"), "") {
        let text = std::fs::read_to_string(&file).unwrap();
        let out = thicket_stdin(
            &["parse", "specs/url.fan", "--quiet"],
            text.trim_end().as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
    }
}

#[test]
fn rfc_4180_examples_parse() {
    for example in [
        "aaa,bbb,ccc\r\nzzz,yyy,xxx\r\n",
        "field_name,field_name,field_name\r\naaa,bbb,ccc\r\nzzz,yyy,xxx\r\n",
        "\"aaa\",\"bbb\",\"ccc\"\r\nzzz,yyy,xxx\r\n",
        "\"aaa\",\"b\r\nbb\",\"ccc\"\r\nzzz,yyy,xxx\r\n",
        "\"aaa\",\"b\"\"bb\",\"ccc\"\r\n",
    ] {
        let out = thicket_stdin(
            &["parse", "specs/csv.bnf", "--format", "sexp"],
            example.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{example:?}: {}", stderr(&out));
    }
    let out = thicket_stdin(&["parse", "specs/csv.bnf"], b"a,\"b\r\n");
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unterminated quote is rejected"
    );
}

#[test]
fn trees_print_in_every_format() {
    let input = b"1+x";
    let sexp = thicket_stdin(&["parse", "specs/expr.fan", "--format", "sexp"], input);
    assert_eq!(
        String::from_utf8(sexp.stdout).unwrap().trim(),
        r#"(<start> (<AddExpr> (<AddExpr> (<MultExpr> (<UnaryExpr> (<DecDigits> (<DecDigit> "1"))))) "+" (<MultExpr> (<UnaryExpr> (<Identifier> "x")))))"#
    );
    let tree = thicket_stdin(&["parse", "specs/expr.fan"], input);
    let tree = String::from_utf8(tree.stdout).unwrap();
    assert!(tree.starts_with("<start>\n  <AddExpr>\n"), "{tree}");
    let json = thicket_stdin(&["parse", "specs/expr.fan", "--format", "json"], input);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["ok"], true);
    assert_eq!(value["tree"][0], "<start>");
    let dot = thicket_stdin(&["parse", "specs/expr.fan", "--format", "dot"], input);
    let dot = String::from_utf8(dot.stdout).unwrap();
    assert!(dot.starts_with("digraph") && dot.contains("->"), "{dot}");
}

#[test]
fn exit_codes_tell_rejection_from_bad_spec_and_unreadable_input() {
    let rejected = thicket_stdin(&["parse", "specs/expr.fan"], b"1+");
    assert_eq!(rejected.status.code(), Some(1));
    assert!(
        stderr(&rejected).contains("<stdin>:1:3: unexpected end of input"),
        "{}",
        stderr(&rejected)
    );
    let bad_spec = thicket_stdin(
        &[
            "parse",
            "crates/thicket-cli/tests/malformed/duplicate_rule.bnf",
        ],
        b"x",
    );
    assert_eq!(bad_spec.status.code(), Some(3));
    let missing = thicket(&["parse", "specs/expr.fan", "/nonexistent/input.txt"]);
    assert_eq!(missing.status.code(), Some(4));
    assert!(stderr(&missing).contains("/nonexistent/input.txt"));
}

#[test]
fn hostile_inputs_are_rejected_or_parsed_without_crashing() {
    let deep_open = vec![b'['; 1 << 20];
    let mut balanced = vec![b'['; 200_000];
    balanced.extend(std::iter::repeat_n(b']', 200_000));
    let junk: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let invalid_utf8 = b"[\"\xff\xfe\"]".to_vec();
    for (name, input, code) in [
        ("1 MB of [", deep_open, 1),
        ("200,000 nested arrays", balanced, 0),
        ("8 MB of junk", junk, 1),
        ("invalid UTF-8 in a string", invalid_utf8, 1),
    ] {
        let started = std::time::Instant::now();
        let out = thicket_stdin(&["parse", "specs/json.fan", "--quiet"], &input);
        assert_eq!(out.status.code(), Some(code), "{name}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{name}");
        // A hang guard, not a timing test.
        assert!(
            started.elapsed().as_secs() < 120,
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn url_schemes_exclude_exactly_the_whatwg_special_ones() {
    for scheme in [
        "vnc", "ssh", "ftps", "file", "h", "ab", "wsx", "httpx", "HtTpS2",
    ] {
        let out = thicket_stdin(
            &["parse", "specs/url.fan", "--quiet"],
            format!("{scheme}:x").as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{scheme}: {}", stderr(&out));
    }
    for special in ["http", "https", "ws", "wss", "ftp", "HTTP", "Ftp"] {
        let out = thicket_stdin(
            &[
                "parse",
                "specs/url.fan",
                "--quiet",
                "--start",
                "alpha_scheme",
            ],
            special.as_bytes(),
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{special} is left to <special_uri>"
        );
    }
}

#[test]
fn all_lists_every_tree_of_an_ambiguous_input_and_counts_them() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("catalan.fan");
    std::fs::write(&spec, "<start> ::= <a>\n<a> ::= <a> <a> | \"x\"\n").unwrap();
    let spec = spec.to_str().unwrap();
    let out = thicket_stdin(&["parse", spec, "--all", "--format", "json"], b"xxxx");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["trees"], 5, "a number");
    assert_eq!(value["all"].as_array().unwrap().len(), 5);
    let bounded = thicket_stdin(
        &[
            "parse",
            spec,
            "--all",
            "--max-trees",
            "2",
            "--format",
            "sexp",
        ],
        b"xxxxxx",
    );
    let text = String::from_utf8(bounded.stdout).unwrap();
    assert_eq!(text.matches("# tree ").count(), 2);
    assert!(text.contains("# tree 2 of 42"), "{text}");
    let cyclic = temp.path().join("cyclic.fan");
    std::fs::write(&cyclic, "<start> ::= <a>\n<a> ::= <a> | \"x\"\n").unwrap();
    // An input with infinitely many trees is in the language: accepted, its first tree
    // listed as one of infinitely many.
    let out = thicket_stdin(
        &[
            "parse",
            cyclic.to_str().unwrap(),
            "--all",
            "--max-trees",
            "5",
        ],
        b"x",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.contains("# tree 1 of infinitely many"), "{listed}");
    // In JSON, a count is a number or null with the reason, and every input has a line.
    let cyclic = cyclic.to_str().unwrap();
    let out = thicket_stdin(&["parse", cyclic, "--count", "--format", "json"], b"x");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["trees"], serde_json::Value::Null, "{value}");
    assert_eq!(value["trees_unknown"], "infinite", "{value}");
    let out = thicket_stdin(&["parse", cyclic, "--all", "--format", "json"], b"x");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["ok"], true, "{value}");
    assert_eq!(value["trees_unknown"], "infinite", "{value}");
    assert_eq!(value["all"].as_array().unwrap().len(), 1, "{value}");
    let out = thicket_stdin(&["parse", cyclic, "--format", "json"], b"y");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = &value["error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("1:1: unexpected 'y'")
    );
    assert_eq!(error["found"], u64::from(b'y'));
    assert!(
        error["line"].is_u64() && error["expected"].is_array(),
        "{error}"
    );
}
