//! `thicket generate` within its bounds: `--time` stops the constraint solver too, a
//! run that makes fewer inputs than asked for fails and says why, constraints that
//! cannot hold are refused before any search, `--unique` stops when a small language
//! is exhausted, and exact counts and lengths are solved.

mod common;
use common::{repo, text, thicket};
use std::time::{Duration, Instant};

/// Runs `thicket ARGS` and how long it took.
fn timed(args: &[&str]) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = thicket(args);
    (out, started.elapsed())
}

#[test]
fn time_limit_stops_the_solver_and_making_nothing_fails() {
    // Constrained XML aimed at 20 kB: the repairs of such trees took 99 s before the
    // solver looked at the time. The bound below is loose (a busy machine, a debug
    // build): what is checked is that the run ends near its limit, not after the
    // solver's whole budget.
    let xml = repo("specs/xml.bnf");
    let (out, took) = timed(&[
        "generate",
        &xml,
        "--target-size",
        "20000",
        "-n",
        "2",
        "--time",
        "2",
        "--seed",
        "1",
    ]);
    let stderr = text(&out.stderr);
    assert!(took < Duration::from_secs(30), "{took:?}: {stderr}");
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("--time ran out after"), "{stderr}");
    assert!(stderr.contains("of 2 inputs"), "{stderr}");

    // Without a count, as many as the time allows: none is a failure too.
    let out = thicket(&[
        "generate",
        &xml,
        "--target-size",
        "20000",
        "--time",
        "1",
        "--seed",
        "1",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("--time ran out before any input was made"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no input satisfied the constraints"),
        "{stderr}"
    );
}

#[test]
fn constraints_that_cannot_hold_are_refused_before_any_search() {
    let json = repo("specs/json.fan");
    let xml = repo("specs/xml.bnf");
    let cases: &[(&str, &[&str])] = &[
        // A contradiction whatever the atom means.
        (
            &json,
            &["-c", "str.len(<start>) > 3 xor str.len(<start>) > 3"],
        ),
        (
            &json,
            &[
                "-c",
                "exists <string> s: str.prefixof(\"a\", s)",
                "-c",
                "not exists <string> t: str.prefixof(\"a\", t)",
            ],
        ),
        // A node nested deeper than another, and the other deeper than it.
        (
            &xml,
            &[
                "-c",
                "exists <xml-tree> a: exists <xml-tree> b in start: \
                 (level(\"GT\", \"<xml-tree>\", a, b) and level(\"LT\", \"<xml-tree>\", a, b))",
            ],
        ),
        // Longer than any input within --max-size.
        (
            &json,
            &[
                "--max-size",
                "1000000",
                "-c",
                "exists <string> s: str.len(s) > 3000000",
            ],
        ),
    ];
    for (spec, extra) in cases {
        let mut args = vec!["generate", spec, "-n", "3", "--time", "10", "--seed", "1"];
        args.extend_from_slice(extra);
        let out = thicket(&args);
        let stderr = text(&out.stderr);
        // Exit 3: refused as unsatisfiable (a search that gives up exits 4).
        assert_eq!(out.status.code(), Some(3), "{extra:?}: {stderr}");
        assert!(stderr.contains("unsatisfiable"), "{extra:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn unique_stops_when_a_small_language_is_exhausted() {
    let dir = tempfile::tempdir().unwrap();
    let three = dir.path().join("three.fan");
    std::fs::write(&three, "<start> ::= \"a\" | \"b\" | \"c\"\n").unwrap();
    let three = three.to_str().unwrap();
    // Ten million asked for: before, this drew for ever and wrote nothing.
    let out = thicket(&[
        "generate", three, "-n", "10000000", "--unique", "--seed", "1",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let mut lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["a", "b", "c"]);
    assert!(stderr.contains("only 3 distinct inputs"), "{stderr}");
    assert!(stderr.contains("whole language"), "{stderr}");
    // Said before anything is generated.
    let note = stderr.find("only 3 distinct inputs").unwrap();
    let error = stderr.find("error:").unwrap();
    assert!(note < error, "{stderr}");
    // Without a count, all of them is what was asked for.
    let out = thicket(&["generate", three, "--time", "5", "--unique", "--seed", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 3);
    // A language the limits cut says which limits.
    let stars = dir.path().join("stars.fan");
    std::fs::write(&stars, "<start> ::= \"*\"+\n").unwrap();
    let out = thicket(&[
        "generate",
        stars.to_str().unwrap(),
        "-n",
        "50",
        "--unique",
        "--max-repetitions",
        "3",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 3);
    assert!(stderr.contains("--max-repetitions 3"), "{stderr}");
}

#[test]
fn exact_column_counts_and_lengths_are_solved() {
    let dir = tempfile::tempdir().unwrap();
    let csv_dir = dir.path().join("csv");
    let out = thicket(&[
        "generate",
        &repo("specs/csv.bnf"),
        "-n",
        "20",
        "--seed",
        "1",
        "-o",
        csv_dir.to_str().unwrap(),
        "-c",
        "forall <csv-record> r: count(r, \"<raw-field>\", 7)",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut files = 0;
    for entry in std::fs::read_dir(&csv_dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes.as_slice());
        for record in reader.records() {
            assert_eq!(record.unwrap().len(), 7, "{}", text(&bytes));
        }
        files += 1;
    }
    assert_eq!(files, 20);
    for length in [300usize, 2000] {
        let out = thicket(&[
            "generate",
            &repo("specs/json.fan"),
            "-n",
            "5",
            "--seed",
            "1",
            "--format",
            "json",
            "-c",
            &format!("str.len(<start>) = {length}"),
        ]);
        assert!(out.status.success(), "{length}: {}", text(&out.stderr));
        let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert_eq!(lines.len(), 5);
        for line in lines {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            let input = item["input"].as_str().unwrap();
            assert_eq!(input.chars().count(), length);
            serde_json::from_str::<serde_json::Value>(input).expect("valid JSON");
        }
    }
}
