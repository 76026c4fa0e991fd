//! `thicket minimize` on a C target with a crash planted at depth.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{repo, text, thicket};

fn c_target(dir: &Path, name: &str) -> String {
    common::c_target(dir, name, "cc")
}

/// The target that crashes on a 7 nested three brackets deep.
fn deep_crash(dir: &Path) -> String {
    c_target(dir, "deep_crash")
}

fn crashes(target: &str, input: &Path) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let status = Command::new(target).arg(input).status().unwrap();
    status.signal() == Some(libc::SIGSEGV)
}

/// `thicket minimize specs/json.fan INPUT EXTRA... -- TARGET @@`.
fn minimize(input: &Path, extra: &[&str], target: &str) -> std::process::Output {
    let spec = repo("specs/json.fan");
    let mut args = vec!["minimize", &spec, input.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["--", target, "@@"]);
    thicket(&args)
}

/// A JSON array of about 10 KB: varied filler elements, and at `crash_at` one that
/// holds a 7 three brackets deep.
fn big_input(crash_at: usize) -> String {
    let fillers = [
        r#"{"name": "x", "items": [1, 2, 3], "flag": true}"#,
        r#"[17, 70, [1, [2, 3.5]], "seven", null]"#,
        r#""a string with [brackets] and 7 in it""#,
        r#"{"nested": {"deeper": {"list": [8, 9, 10]}}}"#,
        "-12.5e3",
    ];
    let mut items: Vec<String> = (0..240)
        .map(|i| fillers[i % fillers.len()].to_string())
        .collect();
    items[crash_at] = r#"{"a": [1, {"deep": ["x", 7, false]}], "b": 2}"#.to_string();
    format!("[{}]", items.join(",\n "))
}

#[test]
fn a_deep_crash_in_10_kb_reduces_to_a_few_bytes_in_the_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let target = deep_crash(dir.path());
    let input = dir.path().join("crash.json");
    let big = big_input(151);
    assert!(big.len() > 9_000, "{}", big.len());
    std::fs::write(&input, &big).unwrap();
    assert!(crashes(&target, &input));
    let small = dir.path().join("small.json");
    let o = minimize(&input, &["-o", small.to_str().unwrap()], &target);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fails with `crash SIGSEGV"), "{err}");
    assert!(err.contains("in the grammar"), "{err}");
    let result = std::fs::read_to_string(&small).unwrap();
    // The smallest crashing input of json.fan is `[[[7]]]` (7 bytes); the moves reach
    // `[{"":[7]}]` or smaller (an object is not turned into an array).
    assert!(result.len() <= 10, "{result:?}");
    assert!(crashes(&target, &small), "{result:?}");
    let parsed = thicket(&["parse", &repo("specs/json.fan"), small.to_str().unwrap()]);
    assert!(parsed.status.success(), "{}", text(&parsed.stderr));
    // The input is left as it was.
    assert_eq!(std::fs::read_to_string(&input).unwrap(), big);
}

#[test]
fn inputs_outside_the_grammar_shrink_by_bytes_and_budgets_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let target = deep_crash(dir.path());
    let input = dir.path().join("broken.json");
    // Not JSON (an unclosed string, a stray `}`), but it crashes the target.
    std::fs::write(&input, "[[[ }[1, 7]] \"abc").unwrap();
    assert!(crashes(&target, &input));
    let o = minimize(&input, &[], &target);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("is not in the grammar"), "{err}");
    let result = PathBuf::from(format!("{}.min", input.display()));
    let bytes = std::fs::read(&result).unwrap();
    assert!(bytes.len() <= 4, "{}", text(&bytes));
    assert!(crashes(&target, &result));

    // Two runs are not enough: the smallest failing input so far is written.
    std::fs::write(&input, big_input(3)).unwrap();
    let o = minimize(&input, &["--max-runs", "2"], &target);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("in 2 runs") && err.contains("the budget ran out"),
        "{err}"
    );
    assert!(crashes(&target, &result));
}

#[test]
fn an_input_that_does_not_fail_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = deep_crash(dir.path());
    let input = dir.path().join("fine.json");
    std::fs::write(&input, "[[7]]").unwrap();
    let o = minimize(&input, &[], &target);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("does not fail"),
        "{}",
        text(&o.stderr)
    );
    assert!(!dir.path().join("fine.json.min").exists());
}

#[test]
fn fuzz_minimizes_one_crash_per_failure() {
    let dir = tempfile::tempdir().unwrap();
    // Crashes on inputs starting with CRASH, aborts on ABORT.
    let target = c_target(dir.path(), "crash");
    let spec = dir.path().join("triggers.bnf");
    std::fs::write(
        &spec,
        "<start> ::= <word> <tail>\n<word> ::= \"CRASH\" | \"ABORT\" | \"fine\"\n\
         <tail> ::= \"\" | \" \" <tail> | \"x\" <tail>\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = thicket(&[
        "fuzz",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seed",
        "3",
        "--execs",
        "300",
        "--minimize",
        "--",
        &target,
        "@@",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let mut minimized: Vec<String> = std::fs::read_dir(out.join("minimized"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    minimized.sort();
    // One smallest input per failure (kind and location), however many crash files.
    assert_eq!(minimized, ["ABORT", "CRASH"], "{err}");
}
