//! `thicket check` as users run it: verdicts, witnesses, JSON, exit codes, and
//! constraint errors reported before any input is read.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn thicket(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("thicket runs");
    use std::io::Write;
    // The command may exit before reading stdin (e.g. on a bad constraint).
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// `bytes` written to `name` in a new temporary folder, removed when the folder value
/// is dropped.
fn temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path.display().to_string())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn verdicts_witnesses_and_exit_codes() {
    let (_good_dir, good) = temp("good.xml", b"<a b=\"1\">x</a>");
    let (_bad_dir, bad) = temp("bad.xml", b"<a>x<b>y</c></a>");
    let out = thicket(&["check", "specs/xml.bnf", &good], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{good}: valid\n"));

    let out = thicket(&["check", "specs/xml.bnf", &good, &bad], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    // The balance constraint fails on the inner tree, with its two ids.
    for expected in [
        &format!("{bad}: invalid") as &str,
        "violates specs/xml.bnf:",
        "tree = <xml-tree> at 1:5 \"<b>y</c>\"",
        "opid = <id> at 1:6 \"b\"",
        "clid = <id> at 1:11 \"c\"",
        "is false: \"b\" = \"c\"",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in\n{stdout}");
    }
    assert!(text(&out.stderr).contains("2 inputs: 1 valid, 1 violate constraints"));

    let out = thicket(&["check", "specs/xml.bnf", "--quiet", &bad], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());

    // Outside the grammar: the parser's position and expectation.
    let out = thicket(&["check", "specs/xml.bnf", "-"], b"<a>x</a");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("not in the language"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn json_lines_for_tools() {
    let out = thicket(&["check", "specs/csv.bnf", "--json", "-"], b"a,b\n1,2\n3\n");
    assert_eq!(out.status.code(), Some(1));
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["file"], "<stdin>");
    assert_eq!(line["valid"], false);
    let violation = &line["violations"][0];
    assert!(
        violation["location"]
            .as_str()
            .unwrap()
            .starts_with("specs/csv.bnf:")
    );
    let steps = violation["steps"].as_array().unwrap();
    let record = steps.iter().find(|s| s["bind"] == "record").unwrap();
    assert_eq!(
        (record["line"].as_u64(), record["text"].as_str()),
        (Some(3), Some("3\n"))
    );
    assert!(steps.iter().any(|s| {
        s["holds"] == false
            && s["detail"]
                .as_str()
                .unwrap()
                .contains("1 <raw-field>, not 2")
    }));
}

#[test]
fn constraints_from_the_command_line() {
    let (_input_dir, input) = temp("three.csv", b"a,b,c\n1,2,3\n");
    let (_isla_dir, isla) = temp(
        "two.isla",
        b"forall <csv-record> r: count(r, \"<raw-field>\", 2)",
    );
    let out = thicket(
        &["check", "specs/csv.bnf", &input, "--constraint", &isla],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains(&format!("violates {isla}:1:1")));
    // -c adds to the spec's own constraints; --no-spec-constraints drops those.
    let arity = "forall <csv-record> r: count(r, \"<raw-field>\", 3)";
    let out = thicket(&["check", "specs/csv.bnf", &input, "-c", arity], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = thicket(
        &[
            "check",
            "specs/csv.bnf",
            &input,
            "--no-spec-constraints",
            "-c",
            "str.len(<raw-field>) = 1",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn constraint_errors_come_before_any_input_is_read() {
    // A bad -c: exit 3, the position in the argument, and stdin is never read.
    let out = thicket(
        &[
            "check",
            "specs/csv.bnf",
            "-c",
            "forall <csv-recrd> r: r = \"\"",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.contains("<-c 1>:1:8") && err.contains("did you mean <csv-record>?"),
        "{err}"
    );
    // A bad `where` block makes the spec itself bad, for every subcommand.
    let (_spec_dir, spec) = temp(
        "bad_where.fan",
        b"<start> ::= <d>+\n<d> ::= r\"[0-9]\"\nwhere forall <d> x:\n  str.len(x) = \"1\"\n",
    );
    for command in ["check", "generate", "lint", "parse"] {
        let out = thicket(&[command, &spec], b"1");
        assert_eq!(out.status.code(), Some(3), "{command}");
        let err = text(&out.stderr);
        assert!(
            err.contains("bad_where.fan:4:3") && err.contains("sort-mismatch"),
            "{command}: {err}"
        );
    }
}

#[test]
fn generate_satisfies_the_spec_constraints_unless_told_not_to() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("work");
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.to_str().unwrap();
    let out = thicket(
        &[
            "generate",
            "specs/csv.bnf",
            "-n",
            "50",
            "--seed",
            "1",
            "-o",
            dir_arg,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 50);
    let mut args = vec!["check", "specs/csv.bnf", "--quiet"];
    args.extend(files.iter().map(String::as_str));
    let out = thicket(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // A constraint proved unsatisfiable is an error of the constraint (exit 3).
    let out = thicket(
        &[
            "generate",
            "specs/expr.fan",
            "-n",
            "2",
            "--seed",
            "1",
            "-c",
            "str.len(<start>) > 5 and str.len(<start>) < 3",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("unsatisfiable"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spec_constraints_are_about_whole_inputs() {
    // With --start on a record, the spec's column constraint does not apply (and does
    // not stop other subcommands either).
    let out = thicket(
        &["check", "specs/csv.bnf", "--start", "csv-record", "-"],
        b"1,2\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not checked"));
    let out = thicket(
        &[
            "generate",
            "specs/csv.bnf",
            "--start",
            "<csv-record>",
            "-n",
            "2",
            "--seed",
            "1",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Constraints given on the command line still apply.
    let out = thicket(
        &[
            "check",
            "specs/csv.bnf",
            "--start",
            "csv-record",
            "-c",
            "count(start, \"<raw-field>\", 3)",
            "-",
        ],
        b"1,2\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn checking_gives_up_instead_of_hanging() {
    // ISLa's no-redef constraint visits every attribute of a tag (once: it is decided
    // with a set, see `Quantifier::distinct`); a budget below that stops the check.
    let attrs: Vec<String> = (0..60).map(|i| format!("k{i}=\"v\"")).collect();
    let (_input_dir, input) = temp(
        "attrs.xml",
        format!("<a {}>x</a>", attrs.join(" ")).as_bytes(),
    );
    let out = thicket(&["check", "specs/xml.bnf", &input], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = thicket(
        &["check", "specs/xml.bnf", &input, "--max-steps", "100"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("undecided: checking stopped after 100 "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn lint_counts_the_constraints() {
    let out = thicket(&["lint", "specs/xml.bnf"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("21 terminals, 4 constraints;"),
        "{}",
        text(&out.stdout)
    );
    let out = thicket(&["lint", "specs/csv.bnf", "--format", "json"], b"");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["totals"]["constraints"], 2);
}

#[test]
fn json_numbers_are_numbers_and_errors_match_parse() {
    // An `int` quantifier's value is a number, like every line and column.
    let out = thicket(&["check", "specs/csv.bnf", "--json", "-"], b"a,b,c\n1,2\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = line["violations"][0]["steps"].as_array().unwrap();
    let int = steps.iter().find(|s| s.get("value").is_some()).unwrap();
    assert_eq!(int["value"], 3, "{int}");
    assert!(
        steps
            .iter()
            .all(|s| s.get("line").is_none_or(|l| l.is_u64()))
    );
    // Not in the language: the same error object as `parse --format json`.
    let out = thicket(&["check", "specs/csv.bnf", "--json", "-"], b"a,\"b\n");
    let checked: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = thicket(
        &["parse", "specs/csv.bnf", "--format", "json", "-"],
        b"a,\"b\n",
    );
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(checked["error"], parsed["error"]);
    assert!(checked["error"]["message"].is_string(), "{checked}");
    assert!(checked["error"].get("found").is_some(), "{checked}");
}
