//! `thicket mine`: constraints from samples, with and without a program.

use std::path::Path;

mod common;
use common::{text, thicket};

const PAIR: &str = "<start> ::= <pair>\n<pair> ::= <key> \"=\" <key>\n<key> ::= r\"[a-d]{1,3}\"\n";

fn write_all(dir: &Path, inputs: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("{i}.txt")), input).unwrap();
    }
}

#[test]
fn mines_balance_from_samples_and_writes_isla_that_check_reads() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("pair.fan");
    std::fs::write(&spec, PAIR).unwrap();
    write_all(
        &dir.path().join("pos"),
        &["a=a", "bc=bc", "dd=dd", "abc=abc", "c=c"],
    );
    write_all(
        &dir.path().join("neg"),
        &["a=b", "bc=cb", "dd=d", "abc=abd"],
    );
    let mined = dir.path().join("mined.isla");
    let out = thicket(&[
        "mine",
        spec.to_str().unwrap(),
        "--positive",
        dir.path().join("pos").to_str().unwrap(),
        "--negative",
        dir.path().join("neg").to_str().unwrap(),
        "--json",
        "-o",
        mined.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("step nonterminals: made"), "{stderr}");
    assert!(stderr.contains("candidates/s"), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let best = &json["results"][0];
    assert_eq!(best["recall"], 1.0, "{json}");
    assert_eq!(best["specificity"], 1.0, "{json}");
    assert_eq!(
        (best["tp"].as_u64(), best["tn"].as_u64()),
        (Some(5), Some(4))
    );
    assert!(json["steps"].as_array().unwrap().len() >= 5);
    // The written constraint is ISLa that `thicket check` applies.
    let checked = thicket(&[
        "check",
        spec.to_str().unwrap(),
        "--constraint",
        mined.to_str().unwrap(),
        "-q",
        dir.path().join("pos").to_str().unwrap(),
    ]);
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    let rejected = thicket(&[
        "check",
        spec.to_str().unwrap(),
        "--constraint",
        mined.to_str().unwrap(),
        "-q",
        dir.path().join("neg/0.txt").to_str().unwrap(),
    ]);
    assert_eq!(rejected.status.code(), Some(1));
}

#[test]
fn labels_with_a_program_and_validates_with_the_solver() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("pair.fan");
    std::fs::write(&spec, PAIR).unwrap();
    write_all(&dir.path().join("pos"), &["a=a", "bc=bc"]);
    // The program accepts a pair whose sides are equal.
    let check = "IFS== read -r a b < \"$1\"; [ \"$a\" = \"$b\" ]";
    let out = thicket(&[
        "mine",
        spec.to_str().unwrap(),
        "--positive",
        dir.path().join("pos").to_str().unwrap(),
        "--pattern",
        "Balance",
        "--pattern",
        "String Existence",
        "--generate",
        "40",
        "--mutate",
        "40",
        "--validate",
        "5",
        "--seed",
        "3",
        "--",
        "sh",
        "-c",
        check,
        "sh",
        "@@",
    ]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("labelled by the program: 40 generated and 40 mutated"),
        "{stderr}"
    );
    assert!(stderr.contains("validate:"), "{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(
        first.contains("program accepted 5/5 solved inputs"),
        "{stdout}"
    );
    assert!(stdout.contains("opid = clid"), "{stdout}");
}

#[test]
fn bad_catalog_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let patterns = dir.path().join("p.isla");
    std::fs::write(
        &patterns,
        "[Mine]\nforall <?NONTERMINAL> x in start:\n  x = <?STRNG(x)>\n",
    )
    .unwrap();
    let out = thicket(&[
        "mine",
        &common::repo("specs/csv.bnf"),
        "--positive",
        dir.path().to_str().unwrap(),
        "--patterns",
        patterns.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("p.isla:3:7: unknown placeholder `<?STRNG>`"),
        "{stderr}"
    );
}

#[test]
fn a_pattern_with_an_isla_syntax_error_is_reported_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples");
    std::fs::create_dir(&samples).unwrap();
    std::fs::write(samples.join("a.csv"), "a,b\n1,2\n").unwrap();
    let patterns = dir.path().join("p.isla");
    std::fs::write(
        &patterns,
        "[Mine]\nforall <?NONTERMINAL> x in start:\n  (x = <?STRING(x)> or )\n",
    )
    .unwrap();
    let out = thicket(&[
        "mine",
        &common::repo("specs/csv.bnf"),
        "--positive",
        samples.to_str().unwrap(),
        "--patterns",
        patterns.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("p.isla:3:24: ISLa syntax"), "{stderr}");
    assert!(!stderr.contains("ill-typed"), "{stderr}");
}

#[test]
fn needs_samples_or_a_program() {
    let out = thicket(&["mine", &common::repo("specs/csv.bnf")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--positive"));
}

#[test]
fn a_percentage_out_of_range_is_a_usage_error_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("pair.fan");
    std::fs::write(&spec, PAIR).unwrap();
    write_all(&dir.path().join("pos"), &["a=a"]);
    let pos = dir.path().join("pos");
    for option in ["--min-recall", "--min-specificity"] {
        let out = thicket(&[
            "mine",
            spec.to_str().unwrap(),
            "--positive",
            pos.to_str().unwrap(),
            option,
            "150",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(option) && stderr.contains("not a percentage"),
            "{stderr}"
        );
    }
}
