//! `thicket solve-tokens` and `thicket fuzz --strategy whitebox|whitebox-nogrammar|
//! blackbox-tokens` on a small Python target (thicket-exec's tokens_target.py) and, when
//! esprima is installed, on esprima with specs/javascript.fan.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_thicket");

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn have(modules: &str, var: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os(format!("THICKET_REQUIRE_{var}")).is_none_or(|v| v != "1"),
            "python3 cannot import {modules} but THICKET_REQUIRE_{var}=1"
        );
        eprintln!("\n*** SKIPPED: python3 -c 'import {modules}' failed ***\n");
    }
    ok
}

fn solve(args: &[&str]) -> (i32, String, String) {
    let spec = repo("specs/javascript.fan");
    let out = Command::new(BIN)
        .arg("solve-tokens")
        .arg(&spec)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn solve_tokens_answers_sat_unsat_and_names_unknown_tokens() {
    // The paper's example: `function f(` then anything but `)` forces a parameter.
    let (code, out, _) = solve(&["function", "<identifier>", "(", "!)"]);
    assert_eq!(code, 0);
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(words.len(), 7, "{out}");
    assert_eq!(
        (words[0], words[2], words[4], words[5], words[6]),
        ("function", "(", ")", "{", "}")
    );
    assert!(words[1].chars().all(|c| c.is_ascii_lowercase()), "{out}");
    let (code, out, _) = solve(&["(", ")"]);
    assert_eq!((code, out.trim()), (1, "UNSAT"));
    let (code, _, err) = solve(&["(", "@@"]);
    assert_eq!(code, 2);
    assert!(err.contains("set 2") && err.contains("@@"), "{err}");
    let (code, out, _) = solve(&["if", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["sat"], true);
    assert_eq!(v["tokens"][0], "\"if\"");
    // 80 constrained tokens: `a = a + a + ...` stays in milliseconds (no timing here).
    let mut long = vec!["<identifier>", "="];
    for _ in 0..39 {
        long.extend(["<identifier>", "+"]);
    }
    let (code, out, _) = solve(&long);
    assert_eq!(code, 0);
    assert!(out.split(' ').count() >= 81, "{out}");
}

// The spaces are a separator rule: a regular rule with separators inside is a phrase.
const TOY: &str = "<start> ::= <stmt> (<sp> <stmt>)*\n\
<stmt> ::= \"let\" <sp> <name> <sp> \"=\" <sp> <num> <sp> \";\" | \"print\" <sp> <name> <sp> \";\"\n\
<name> ::= r\"[a-z]{1,3}\"\n<num> ::= r\"[0-9]{1,2}\"\n<sp> ::= \" \"\n";

fn whitebox(dir: &Path, strategy: &str) -> serde_json::Value {
    let spec = dir.join("toy.fan");
    std::fs::write(&spec, TOY).unwrap();
    let target = repo("crates/thicket-exec/tests/targets/py/tokens_target.py");
    let out = dir.join(strategy);
    let run = Command::new(BIN)
        .args(["fuzz", spec.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args([
            "--seed",
            "1",
            "--execs",
            "60",
            "--seed-count",
            "5",
            "--seed-tokens",
            "4-10",
        ])
        .args(["--strategy", strategy])
        .args(["--python", &format!("{}:target", target.display())])
        .args(["--tokenizer", "thicket_target:Lexer.next_token"])
        .args(["--expected-exception", "SyntaxError"])
        .args(["--stage", "all=*tokens_target.py"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["execs"], 60);
    serde_json::from_str(&std::fs::read_to_string(out.join("whitebox.json")).unwrap()).unwrap()
}

#[test]
fn the_three_strategies_run_on_a_python_target() {
    if !have("coverage", "PYTHON") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wb = whitebox(dir.path(), "whitebox");
    assert_eq!(wb["inputs_run"], 60);
    assert!(wb["seeds"].as_u64().unwrap() >= 5, "{wb}");
    assert_eq!(wb["token_kinds"], 6, "{wb}");
    assert!(wb["children"].as_u64().unwrap() > 0, "{wb}");
    // `echo` is compared with the first token but is no token of the grammar there.
    assert!(wb["unsat"].as_u64().unwrap() > 0, "{wb}");
    assert!(wb["solver"]["calls"].as_u64().unwrap() > 0, "{wb}");
    assert_eq!(wb["stages"][0]["reach_pct"], 100.0);
    let ng = whitebox(dir.path(), "whitebox-nogrammar");
    assert!(ng["children"].as_u64().unwrap() > 0, "{ng}");
    // Without the grammar, children leave the language (a statement not starting with
    // `let` or `print` reaches the `statement expected` error).
    let queue: Vec<String> = std::fs::read_dir(dir.path().join("whitebox-nogrammar/queue"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        queue
            .iter()
            .any(|q| !q.starts_with("let") && !q.starts_with("print")),
        "{queue:?}"
    );
    let bb = whitebox(dir.path(), "blackbox-tokens");
    assert_eq!(bb["children"], 0);
    assert_eq!(bb["queries"], 0);
}

#[test]
fn whitebox_without_a_tokenizer_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["fuzz", repo("specs/javascript.fan").to_str().unwrap(), "-o"])
        .arg(tempfile::tempdir().unwrap().path().join("o"))
        .args(["--strategy", "whitebox", "--python", "json:loads"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tokenizer"));
}

#[test]
fn grammar_based_whitebox_on_esprima() {
    if !have("coverage, esprima", "ESPRIMA") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let run = Command::new(BIN)
        .args(["fuzz", repo("specs/javascript.fan").to_str().unwrap(), "-o"])
        .arg(&out)
        .args([
            "--seed",
            "1",
            "--execs",
            "120",
            "--seed-count",
            "10",
            "--max-depth",
            "20",
        ])
        .args(["--strategy", "whitebox", "--python", "esprima:parseScript"])
        .args([
            "--tokenizer",
            "esprima.scanner:Scanner.lex",
            "--expected-exception",
            "Error",
        ])
        .args(["--stage", "parser=*/esprima/parser.py"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let wb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("whitebox.json")).unwrap()).unwrap();
    assert_eq!(wb["inputs_run"], 120);
    assert_eq!(wb["traced_runs"], 120);
    assert!(wb["children"].as_u64().unwrap() >= 100, "{wb}");
    assert!(wb["unsat"].as_u64().unwrap() > 0, "{wb}");
    assert!(
        wb["stages"][0]["covered_lines"].as_u64().unwrap() > 300,
        "{wb}"
    );
}
