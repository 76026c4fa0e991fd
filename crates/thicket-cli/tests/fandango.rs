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

#[test]
fn fandango_spellings_of_the_command_line_work() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("small.fan");
    std::fs::write(&spec, "<start> ::= <digit>+\n").unwrap();
    let spec = spec.to_str().unwrap();
    let values = |args: &[&str]| -> Vec<u128> {
        let out = thicket(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect()
    };
    let median = |mut v: Vec<u128>| {
        v.sort();
        v[v.len() / 2]
    };
    // `-f SPEC` and `--random-seed` mean SPEC and `--seed`.
    let plain = values(&["generate", spec, "-n", "40", "--seed", "3", "-0"]);
    let flagged = values(&[
        "generate",
        "-n",
        "40",
        "-f",
        spec,
        "--random-seed",
        "3",
        "-0",
    ]);
    assert_eq!(plain, flagged);
    // --minimize / --min and --maximize / --max rank the inputs as a spec's goals do.
    let small = values(&[
        "generate",
        "-f",
        spec,
        "-n",
        "40",
        "--seed",
        "3",
        "-0",
        "--min",
        "int(<start>)",
    ]);
    let large = values(&[
        "generate",
        "--fandango-file",
        spec,
        "-n",
        "40",
        "--seed",
        "3",
        "-0",
        "--maximize",
        "int(<start>)",
    ]);
    let (small, plain, large) = (median(small), median(plain), median(large));
    assert!(
        small < plain && plain < large,
        "{small} < {plain} < {large}"
    );
    // `parse -f SPEC FILE`: the input stays an input.
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "123").unwrap();
    let out = thicket(&["parse", "-f", spec, input.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // `-d DIR` writes a file per input, as `-o DIR` does.
    let out_dir = dir.path().join("out");
    let out = thicket(&[
        "generate",
        "-f",
        spec,
        "-n",
        "3",
        "-d",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 3);
    // A broken goal is a spec error that names the flag.
    let out = thicket(&["generate", spec, "--max", "int(<nosuch>)"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--maximize"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn generate_writes_bit_fields_packed_into_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("flags.fan");
    std::fs::write(
        &spec,
        "<start> ::= b'<' <flags> b'>'\n<flags> ::= 1 0 <bit>{6}\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = thicket(&[
        "generate",
        spec.to_str().unwrap(),
        "-n",
        "20",
        "--seed",
        "1",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut flags = std::collections::HashSet::new();
    for entry in std::fs::read_dir(&out_dir).unwrap() {
        let input = std::fs::read(entry.unwrap().path()).unwrap();
        let [b'<', byte, b'>'] = input[..] else {
            panic!("not one byte between < and >: {input:?}")
        };
        // The first two bits, most significant first, are the fixed `1 0`.
        assert_eq!(byte >> 6, 0b10, "{byte:08b}");
        flags.insert(byte);
    }
    assert!(flags.len() > 5, "{flags:?}");
    // Bits that cannot fill a byte make no input, and the warning says why.
    std::fs::write(&spec, "<start> ::= 0 | 1\n").unwrap();
    let out = thicket(&["generate", spec.to_str().unwrap(), "-n", "2"]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("do not fill a whole byte") || err.contains("does not fill a whole byte"),
        "{err}"
    );
    // k-path production packs them too, and leaves out trees whose bits fill no byte
    // (here the four-bit alternative, which no input can hold).
    std::fs::write(
        &spec,
        "<start> ::= b'<' <flags> b'>' | <bit>{4}\n<flags> ::= 1 0 <bit>{6}\n",
    )
    .unwrap();
    for strategy in ["kpath", "kpath-random"] {
        let kpath_dir = dir.path().join(strategy);
        let out = thicket(&[
            "generate",
            spec.to_str().unwrap(),
            "--strategy",
            strategy,
            "-n",
            "6",
            "--seed",
            "1",
            "-o",
            kpath_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let mut count = 0;
        for entry in std::fs::read_dir(&kpath_dir).unwrap() {
            let input = std::fs::read(entry.unwrap().path()).unwrap();
            let [b'<', byte, b'>'] = input[..] else {
                panic!("{strategy}: not one byte between < and >: {input:?}")
            };
            assert_eq!(byte >> 6, 0b10, "{strategy}: {byte:08b}");
            count += 1;
        }
        assert!(count > 0, "{strategy}: no input");
        // And they read back.
        let out = thicket(&[
            "parse",
            spec.to_str().unwrap(),
            "--quiet",
            kpath_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}
