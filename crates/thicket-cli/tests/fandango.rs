//! `thicket lint` on Fandango specs: Python code, generators, constraints and includes
//! are accepted (what runs natively and what calls Python said, no Python run), `-I`
//! finds included files, and a protocol spec is noted as one.

mod common;

use common::{repo, text, thicket};

#[test]
fn lint_accepts_fandango_constructs_and_says_what_it_leaves_unchecked() {
    let dir = repo("crates/thicket-cli/tests/fandango");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for file in &files {
        let out = thicket(&["lint", file.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {err}", file.display());
        assert!(err.contains("Python"), "{}: {err}", file.display());
    }
    let out = thicket(&[
        "lint",
        &format!("{dir}/fandango_where.fan"),
        "--format",
        "json",
    ]);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["ok"], true);
    assert_eq!(value["protocol"], false);
    let notes: Vec<&str> = value["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("solved natively") && n.contains("calling Python")),
        "{value}"
    );
}

#[test]
fn include_dirs_are_searched_and_protocol_specs_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(
        lib.join("messages.fan"),
        "<hello> ::= 'HELO ' <name> '\\r\\n'\n<name> ::= <ascii_letter>+\n",
    )
    .unwrap();
    let spec = dir.path().join("talk.fan");
    std::fs::write(
        &spec,
        "include('messages.fan')\n<start> ::= <Client:hello> <Server:Client:reply>\n<reply> ::= '250 OK\\r\\n'\n",
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let out = thicket(&["lint", spec]);
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.contains("include-not-found") && err.contains("talk.fan:1:1"),
        "{err}"
    );
    for flag in ["-I", "--include-dir"] {
        let out = thicket(&["lint", flag, lib.to_str().unwrap(), spec]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains("is a protocol spec (parties Client, Server)")
                && err.contains("not supported yet"),
            "{err}"
        );
    }
    // Every subcommand takes -I.
    let out = thicket(&["parse", "-I", lib.to_str().unwrap(), spec, "-"]);
    let err = text(&out.stderr);
    assert!(!err.contains("include-not-found"), "{err}");
}

#[test]
fn a_minimizing_goal_moves_generated_inputs_towards_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("small.fan");
    std::fs::write(&spec, "<start> ::= <digit>+\nminimizing int(<start>)\n").unwrap();
    let spec = spec.to_str().unwrap();
    let values = |extra: &[&str]| -> Vec<u128> {
        let mut args = vec!["generate", spec, "-n", "50", "--seed", "3", "-0"];
        args.extend_from_slice(extra);
        let out = thicket(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect()
    };
    let mut ranked = values(&[]);
    let mut plain = values(&["--no-constraints"]);
    ranked.sort();
    plain.sort();
    assert_eq!(ranked.len(), 50);
    assert!(
        ranked[25] < plain[25],
        "median {} vs {}",
        ranked[25],
        plain[25]
    );
}
