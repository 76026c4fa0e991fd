//! End-to-end behaviour of `thicket generate` and `thicket lint` that users rely on:
//! determinism, output modes, limits and exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

fn thicket(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("thicket runs")
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `text` written to `name` in a new temporary folder, removed when the folder value is
/// dropped.
fn write_spec(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn same_seed_gives_the_same_inputs_whatever_the_thread_count() {
    let one = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "3000",
        "--seed",
        "42",
        "-j",
        "1",
    ]);
    let two = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "3000",
        "--seed",
        "42",
        "-j",
        "2",
    ]);
    assert!(one.status.success(), "{}", stderr(&one));
    assert_eq!(one.stdout, two.stdout);
    let other = thicket(&["generate", "specs/expr.fan", "-n", "3000", "--seed", "43"]);
    assert_ne!(one.stdout, other.stdout);
    // A prefix of a run is the run with a smaller count.
    let short = thicket(&["generate", "specs/expr.fan", "-n", "10", "--seed", "42"]);
    assert!(one.stdout.starts_with(&short.stdout));
}

#[test]
fn without_a_seed_the_drawn_seed_is_printed_so_the_run_can_be_repeated() {
    let run = thicket(&["generate", "specs/expr.fan", "-n", "5"]);
    let err = stderr(&run);
    let seed = err
        .split("--seed ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("seed printed");
    let again = thicket(&["generate", "specs/expr.fan", "-n", "5", "--seed", seed]);
    assert_eq!(run.stdout, again.stdout);
}

/// Reads the default framing of inputs that may contain line breaks: a header line
/// `--- N (L bytes) ---`, L bytes, a line break.
fn unframe(mut out: &[u8]) -> Vec<Vec<u8>> {
    let mut inputs = Vec::new();
    while !out.is_empty() {
        let end = out.iter().position(|&b| b == b'\n').expect("a header line");
        let header = std::str::from_utf8(&out[..end]).unwrap();
        let expected = format!("--- {} (", inputs.len());
        assert!(header.starts_with(&expected), "{header:?}");
        let len: usize = header[expected.len()..]
            .strip_suffix(" bytes) ---")
            .unwrap()
            .parse()
            .unwrap();
        let rest = &out[end + 1..];
        inputs.push(rest[..len].to_vec());
        assert_eq!(rest[len], b'\n', "a line break after each input");
        out = &rest[len + 1..];
    }
    inputs
}

#[test]
fn default_output_tells_where_each_input_ends() {
    // JSON inputs contain line breaks: each comes after a header with its length.
    let out = thicket(&["generate", "specs/json.fan", "-n", "30", "--seed", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let framed = unframe(&out.stdout);
    let nul = thicket(&[
        "generate",
        "specs/json.fan",
        "-n",
        "30",
        "--seed",
        "1",
        "-0",
    ]);
    let items: Vec<Vec<u8>> = nul.stdout.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    assert_eq!(framed.len(), 30);
    assert_eq!(framed[..], items[..30], "the same inputs as -0");
    assert!(
        framed.iter().any(|i| i.contains(&b'\n')),
        "some input has a line break"
    );
    // A grammar that cannot produce a line break: one input per line, nothing else.
    let (_dir, spec) = write_spec("oneline.fan", "<start> ::= \"a\" | r\"[b-z]+\"");
    let out = thicket(&[
        "generate",
        spec.to_str().unwrap(),
        "-n",
        "20",
        "--seed",
        "1",
    ]);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 20);
    assert!(
        text.lines()
            .all(|l| l == "a" || l.bytes().all(|b| b.is_ascii_lowercase()))
    );
    // The help says so.
    let help = stdout(&thicket(&["generate", "--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("`--- N (L bytes) ---`"), "{help}");
}

#[test]
fn separators_null_and_files() {
    let (_dir, spec) = write_spec("sep.fan", "<start> ::= \"a\" | \"b\\nc\"");
    let spec = spec.to_str().unwrap();
    let nul = thicket(&["generate", spec, "-n", "20", "--seed", "1", "-0"]);
    let items: Vec<&[u8]> = nul.stdout.split(|&b| b == 0).collect();
    assert_eq!(items.len(), 21, "20 inputs, each followed by NUL");
    assert!(items[..20].iter().all(|i| *i == b"a" || *i == b"b\nc"));
    let custom = thicket(&[
        "generate",
        spec,
        "-n",
        "3",
        "--seed",
        "1",
        "--separator",
        "\\x1e",
    ]);
    assert_eq!(custom.stdout.iter().filter(|&&b| b == 0x1e).count(), 3);

    let temp = tempfile::tempdir().unwrap();

    let dir = temp.path().join("work");
    let files = thicket(&[
        "generate",
        spec,
        "-n",
        "12",
        "--seed",
        "1",
        "-o",
        dir.to_str().unwrap(),
        "--suffix",
        ".txt",
    ]);
    assert!(files.status.success(), "{}", stderr(&files));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 12);
    assert_eq!(names[0], "000000.txt");
    let first = std::fs::read(dir.join("000000.txt")).unwrap();
    assert_eq!(first, items[0]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn json_format_carries_the_input_and_its_derivation_tree() {
    let out = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "20",
        "--seed",
        "5",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = thicket(&["generate", "specs/expr.fan", "-n", "20", "--seed", "5"]);
    let text = stdout(&text);
    let lines = stdout(&out);
    assert_eq!(lines.lines().count(), 20);
    for (line, input) in lines.lines().zip(text.lines()) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["input"], input, "same input as text mode");
        let tree = &value["tree"];
        assert_eq!(tree[0], "<start>");
        // The leaves of the tree spell the input.
        fn leaves(node: &serde_json::Value, out: &mut String) {
            let children = node[1].as_array().unwrap();
            if children.is_empty() {
                out.push_str(node[0].as_str().unwrap());
            }
            for child in children {
                leaves(child, out);
            }
        }
        let mut spelled = String::new();
        leaves(tree, &mut spelled);
        assert_eq!(spelled, input);
    }
}

#[test]
fn a_depth_limit_below_the_minimum_is_a_clear_error() {
    let out = thicket(&[
        "generate",
        "specs/expr.fan",
        "--max-depth",
        "3",
        "--seed",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert!(err.contains("--max-depth 3 is too small"), "{err}");
    assert!(err.contains("depth 5"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn the_depth_limit_bounds_every_tree() {
    let out = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "500",
        "--seed",
        "3",
        "--max-depth",
        "7",
        "--format",
        "json",
    ]);
    fn depth(node: &serde_json::Value) -> usize {
        let is_rule =
            node[0].as_str().unwrap().starts_with('<') && !node[1].as_array().unwrap().is_empty();
        usize::from(is_rule)
            + node[1]
                .as_array()
                .unwrap()
                .iter()
                .map(depth)
                .max()
                .unwrap_or(0)
    }
    let deepest = stdout(&out)
        .lines()
        .map(|l| depth(&serde_json::from_str::<serde_json::Value>(l).unwrap()["tree"]))
        .max()
        .unwrap();
    assert_eq!(deepest, 7);
}

#[test]
fn start_can_be_overridden() {
    let out = thicket(&[
        "generate",
        "specs/expr.fan",
        "--start",
        "<DecDigit>",
        "-n",
        "50",
        "--seed",
        "1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .all(|l| l.len() == 1 && l.as_bytes()[0].is_ascii_digit())
    );
    let missing = thicket(&["generate", "specs/expr.fan", "--start", "DecDigt"]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        stderr(&missing).contains("did you mean <DecDigit>?"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn lint_summarises_rules_as_text_and_json() {
    let out = thicket(&["lint", "specs/expr.fan"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("minimal depth 5"), "{text}");
    assert!(text.contains("clean"), "{text}");
    let json = thicket(&["lint", "specs/expr.fan", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["ok"], true);
    assert_eq!(value["totals"]["rules"], 7);
    let unary = value["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "<UnaryExpr>")
        .unwrap();
    assert_eq!(unary["alternatives"], 7);
    assert_eq!(unary["min_depth"], 2);
}

#[test]
fn lint_warnings_do_not_fail_unless_denied() {
    let (_dir, spec) = write_spec("warn.fan", "<start> ::= \"x\"\n<unused> ::= \"y\"\n");
    let spec = spec.to_str().unwrap();
    let out = thicket(&["lint", spec]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("warning[unreachable]"),
        "{}",
        stderr(&out)
    );
    let denied = thicket(&["lint", spec, "--deny-warnings"]);
    assert_eq!(denied.status.code(), Some(3));
}

#[test]
fn stats_report_size_and_distinct_share() {
    let out = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "2000",
        "--seed",
        "1",
        "--stats",
    ]);
    let err = stderr(&out);
    assert!(err.contains("2000 inputs"), "{err}");
    assert!(
        err.contains("mean size") && err.contains("% distinct"),
        "{err}"
    );
}

#[test]
fn stats_report_the_k_path_coverage_that_cover_measures() {
    // scriptsizec (its constraints solved, and plain): its grammar is unambiguous, so
    // the trees the generator made are the trees `thicket cover` parses back and both
    // count the same 3-paths. (On an ambiguous grammar such as rest's, the parser may
    // pick another derivation of the same text, and the figures may differ.)
    for extra in [&[][..], &["--no-constraints"]] {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("work");
        let _ = std::fs::remove_dir_all(&dir);
        let mut args = vec![
            "generate",
            "specs/scriptsizec.bnf",
            "-n",
            "12",
            "--seed",
            "1",
            "--stats",
            "-o",
            dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = thicket(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        let reported = err
            .split("; ")
            .find_map(|part| part.strip_suffix(" 3-paths covered\n"))
            .unwrap_or_else(|| panic!("{err}"));
        let out = thicket(&["cover", "specs/scriptsizec.bnf", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let table = stdout(&out) + &stderr(&out);
        let row: Vec<&str> = table
            .lines()
            .find(|l| l.trim_start().starts_with("3 "))
            .unwrap_or_else(|| panic!("{table}"))
            .split_whitespace()
            .collect();
        assert_eq!(reported, format!("{} of {}", row[1], row[2]), "{err}");
        // Twelve inputs cover some of the paths, not all: the figure says something.
        assert_ne!(row[1], row[2]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Mean size and distinct share (in %) from `generate --stats` on stderr.
fn size_and_distinct(err: &str) -> (f64, f64) {
    let number_before = |marker: &str| -> f64 {
        let head = &err[..err.find(marker).unwrap_or_else(|| panic!("{err}"))];
        let word = head.trim_end().rsplit([' ', ';']).next().unwrap();
        word.parse().unwrap_or_else(|_| panic!("{word}: {err}"))
    };
    (number_before(" bytes; "), number_before("% distinct"))
}

#[test]
fn default_inputs_of_a_grammar_written_for_parsers_are_large_and_distinct() {
    // grammars-v4's JSON grammar: under uniform choices (--target-size 0) a mean of 17
    // bytes, a third distinct; by default at least Fandango's 65 bytes, 95% distinct.
    let spec = workspace().join("crates/thicket-cover/tests/fixtures/grammars-v4-json.fan");
    let run = |extra: &[&str]| {
        let mut args = vec![spec.to_str().unwrap(), "-n", "20000", "--seed", "3"];
        args.extend_from_slice(extra);
        let out = thicket(&[&["generate", "--stats"][..], &args].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        size_and_distinct(&stderr(&out))
    };
    let (mean, distinct) = run(&[]);
    assert!(mean >= 65.0 && distinct >= 95.0, "{mean} {distinct}");
    let (mean, distinct) = run(&["--target-size", "0"]);
    assert!(mean < 25.0 && distinct < 50.0, "{mean} {distinct}");
}

#[test]
fn help_explains_with_examples() {
    for args in [
        &["--help"][..],
        &["generate", "--help"],
        &["lint", "--help"],
    ] {
        let out = thicket(args);
        assert!(out.status.success());
        assert!(stdout(&out).contains("Example"), "{args:?}");
    }
}

#[test]
fn help_states_each_default_once() {
    for command in [
        "generate", "lint", "parse", "check", "cover", "fuzz", "coverage",
    ] {
        let out = thicket(&[command, "--help"]);
        assert!(out.status.success(), "{command}");
        // An option's entry starts with its flags, indented less than its text; it
        // shows its default once.
        let help = stdout(&out);
        let mut entries: Vec<String> = Vec::new();
        for line in help.lines() {
            let indent = line.len() - line.trim_start().len();
            if indent < 10 && line.trim_start().starts_with('-') || entries.is_empty() {
                entries.push(String::new());
            }
            entries.last_mut().unwrap().push_str(line);
        }
        assert!(entries.len() > 5, "{command}: {help}");
        for entry in entries {
            assert!(
                entry.matches("[default:").count() <= 1,
                "{command}: a default twice in\n{entry}"
            );
        }
    }
}

#[test]
fn unique_outputs_differ_and_a_small_language_is_reported() {
    let out = thicket(&[
        "generate",
        "specs/json.fan",
        "-n",
        "500",
        "--seed",
        "4",
        "--unique",
        "-0",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let items: Vec<&[u8]> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|i| !i.is_empty())
        .collect();
    let distinct: std::collections::HashSet<&[u8]> = items.iter().copied().collect();
    assert_eq!(items.len(), 500);
    assert_eq!(distinct.len(), 500);
    // The same seed gives the same unique set.
    let again = thicket(&[
        "generate",
        "specs/json.fan",
        "-n",
        "500",
        "--seed",
        "4",
        "--unique",
        "-0",
    ]);
    assert_eq!(out.stdout, again.stdout);

    let digits = thicket(&[
        "generate",
        "specs/expr.fan",
        "--start",
        "DecDigit",
        "-n",
        "20",
        "--seed",
        "1",
        "--unique",
    ]);
    // Fewer than asked for is a failure, said before generating; all ten are written.
    assert_eq!(digits.status.code(), Some(4), "{}", stderr(&digits));
    assert_eq!(stdout(&digits).lines().count(), 10, "only ten digits exist");
    assert!(
        stderr(&digits).contains("only 10 distinct inputs"),
        "{}",
        stderr(&digits)
    );
}

#[test]
fn cover_json_numbers_are_numbers_even_beyond_64_bits() {
    // 300 alternatives of a self-reference: about 300^7 * 600 8-paths, more than u64.
    let alternatives: Vec<String> = (0..300).map(|i| format!("\"{i}\" <a>")).collect();
    let (_dir, spec) = write_spec(
        "wide.fan",
        &format!(
            "<start> ::= <a>\n<a> ::= \"x\" | {}\n",
            alternatives.join(" | ")
        ),
    );
    let input = spec.with_file_name("wide-input.txt");
    std::fs::write(&input, "7x").unwrap();
    let out = thicket(&[
        "cover",
        spec.to_str().unwrap(),
        input.to_str().unwrap(),
        "-k",
        "8",
        "--json",
        "--per-input",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for row in value["coverage"].as_array().unwrap() {
        assert!(row["k"].is_u64() && row["covered"].is_u64(), "{row}");
        assert!(row["total"].is_number(), "{row}");
        assert!(row["fraction"].is_f64(), "{row}");
        assert!(row.get("missing").is_none(), "only with --missing: {row}");
    }
    let total: u128 = value["coverage"][7]["total"].to_string().parse().unwrap();
    assert!(total > u128::from(u64::MAX), "{total}");
    assert!(value["inputs"].is_u64() && value["rejected"].is_u64());
    let own = &value["per_input"][0];
    assert!(
        own["covered"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c.is_u64()),
        "{own}"
    );
}

#[test]
fn cover_reports_k_path_coverage_missing_paths_and_a_growth_curve() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("x_plus_42.txt");
    std::fs::write(&input, "x+42").unwrap();
    let curve = dir.join("curve.csv");
    let out = thicket(&[
        "cover",
        "specs/expr.fan",
        input.to_str().unwrap(),
        "-k",
        "2",
        "--json",
        "--missing",
        "--missing-limit",
        "1000",
        "--curve",
        curve.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The paper's worked example: "x+42" covers 12 of the 125 2-paths.
    assert_eq!(value["coverage"][1]["covered"], 12);
    assert_eq!(value["coverage"][1]["total"], 125);
    assert_eq!(
        value["coverage"][1]["missing"].as_array().unwrap().len(),
        113
    );
    assert_eq!(value["coverage"][0]["total"], 39);
    let csv = std::fs::read_to_string(&curve).unwrap();
    assert!(csv.starts_with("inputs,k1,k2\n1,"), "{csv}");
    let rejected = thicket(&[
        "cover",
        "specs/expr.fan",
        "crates/thicket-cli/tests/cli.rs",
        "-k",
        "1",
    ]);
    assert_eq!(
        rejected.status.code(),
        Some(1),
        "a rejected input is reported"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn kpath_strategy_covers_every_k_path_and_says_so() {
    let out = thicket(&[
        "generate",
        "specs/csv.bnf",
        "--strategy",
        "kpath",
        "-k",
        "3",
        "--seed",
        "2",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cover 36 of 36 3-paths"), "{err}");
    // ... and every shorter path, which it says too.
    let two = err.split("3-paths, ").nth(1).unwrap_or("");
    assert!(
        two.contains("2-paths, ") && two.contains("1-paths"),
        "{err}"
    );
    let (n, total) = {
        let counts: Vec<&str> = two
            .split(" 2-paths")
            .next()
            .unwrap()
            .split(" of ")
            .collect();
        (counts[0].to_string(), counts[1].to_string())
    };
    assert_eq!(n, total, "{err}");
    let lines = stdout(&out).lines().count();
    assert!((1..=36).contains(&lines), "{lines} inputs");
    // Same seed, same inputs.
    let again = thicket(&[
        "generate",
        "specs/csv.bnf",
        "--strategy",
        "kpath",
        "-k",
        "3",
        "--seed",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(out.stdout, again.stdout);
    // -n caps the count.
    let capped = thicket(&[
        "generate",
        "specs/json.fan",
        "--strategy",
        "kpath",
        "-k",
        "3",
        "--seed",
        "2",
        "-n",
        "3",
    ]);
    assert!(
        stderr(&capped).contains("3 inputs cover") && stderr(&capped).contains("stopped at -n"),
        "{}",
        stderr(&capped)
    );
}

/// The k-path strategy's output, measured by `thicket cover --all-parses`, covers every
/// l-path for l = 1..k of every bundled spec (all 9 specs, k = 4; tar's 3 KB inputs only
/// k = 2 here, to keep the suite fast: its higher k pass too, in about a minute).
#[test]
fn kpath_output_reaches_full_coverage_for_every_bundled_spec() {
    let specs = [
        "expr.fan",
        "json.fan",
        "csv.bnf",
        "url.fan",
        "markdown.fan",
        "xml.bnf",
        "scriptsizec.bnf",
        "rest.bnf",
        "tar.bnf",
    ];
    for spec in specs {
        let max_k = if spec == "tar.bnf" { 2 } else { 4 };
        {
            let k = max_k;
            let temp = tempfile::tempdir().unwrap();
            let dir = temp.path().join("work");
            let spec_path = format!("specs/{spec}");
            let k_text = k.to_string();
            // The grammar's own k-path production; with the spec's constraints the
            // repaired outputs can lose paths (see docs/solver.md).
            let made = thicket(&[
                "generate",
                &spec_path,
                "--no-constraints",
                "--strategy",
                "kpath",
                "-k",
                &k_text,
                "--seed",
                "1",
                "-o",
                dir.to_str().unwrap(),
            ]);
            assert!(made.status.success(), "{spec} k={k}: {}", stderr(&made));
            let mut files: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path().display().to_string())
                .collect();
            files.sort();
            let mut args = vec![
                "cover",
                spec_path.as_str(),
                "-k",
                k_text.as_str(),
                "--all-parses",
                "--json",
            ];
            args.extend(files.iter().map(String::as_str));
            let out = thicket(&args);
            assert!(out.status.success(), "{spec} k={k}: {}", stderr(&out));
            let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            // Every l-path for l <= k, not only the k-paths.
            for row in value["coverage"].as_array().unwrap() {
                assert_eq!(row["covered"], row["total"], "{spec} k={k}: {row}");
            }
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}

#[test]
fn kpath_strategy_reports_paths_that_cannot_fit_the_depth_limit() {
    let out = thicket(&[
        "generate",
        "specs/json.fan",
        "--strategy",
        "kpath",
        "-k",
        "3",
        "--max-depth",
        "8",
        "--seed",
        "1",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot be covered within --max-depth 8"),
        "{err}"
    );
    // Every input still respects the limit.
    fn depth(node: &serde_json::Value) -> usize {
        let children = node[1].as_array().unwrap();
        let is_rule = node[0].as_str().unwrap().starts_with('<') && !children.is_empty();
        usize::from(is_rule) + children.iter().map(depth).max().unwrap_or(0)
    }
    for line in stdout(&out).lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(depth(&value["tree"]) <= 8);
    }
}

#[test]
fn a_time_limit_writes_the_first_inputs_of_the_stream() {
    // Constrained XML: slow enough per input that half a second ends the run.
    let timed = thicket(&[
        "generate",
        "specs/xml.bnf",
        "--seed",
        "3",
        "--time",
        "0.5",
        "-0",
        "-j",
        "1",
    ]);
    assert!(timed.status.success(), "{}", stderr(&timed));
    let written = timed.stdout.iter().filter(|&&b| b == 0).count();
    assert!(written > 0, "some inputs within half a second");
    // The same inputs as asking for that many, whatever the thread count.
    let counted = thicket(&[
        "generate",
        "specs/xml.bnf",
        "--seed",
        "3",
        "-n",
        &written.to_string(),
        "-0",
    ]);
    assert_eq!(timed.stdout, counted.stdout);
    // With a count the time does not allow: what was made, and a failure saying so.
    let capped = thicket(&[
        "generate",
        "specs/xml.bnf",
        "--seed",
        "3",
        "-n",
        "100000000",
        "--time",
        "0.2",
        "-0",
    ]);
    assert_eq!(capped.status.code(), Some(4), "{}", stderr(&capped));
    assert!(!capped.stdout.is_empty());
    assert!(
        stderr(&capped).contains("--time ran out after"),
        "{}",
        stderr(&capped)
    );
    for bad in ["0", "-1", "soon"] {
        let refused = thicket(&["generate", "specs/xml.bnf", &format!("--time={bad}")]);
        assert!(!refused.status.success());
        assert!(stderr(&refused).contains("seconds"), "{}", stderr(&refused));
    }
    // k-path covering stops too: the inputs begun within the time, the same as asking
    // for that many, and the coverage so far reported as such. (Scriptsize-C's 6,678
    // 4-paths take over a second even in a release build.)
    let kpath = |extra: &[&str]| {
        let mut args = vec![
            "generate",
            "specs/scriptsizec.bnf",
            "--strategy",
            "kpath",
            "-k",
            "4",
            "--seed",
            "3",
            "-0",
        ];
        args.extend_from_slice(extra);
        let out = thicket(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let timed = kpath(&["--time", "0.5"]);
    assert!(
        stderr(&timed).contains("(stopped at --time)"),
        "{}",
        stderr(&timed)
    );
    let written = timed.stdout.iter().filter(|&&b| b == 0).count();
    assert!(written > 0, "{}", stderr(&timed));
    let counted = kpath(&["-n", &written.to_string()]);
    assert_eq!(timed.stdout, counted.stdout);
}

#[test]
fn generate_time_takes_a_duration_with_a_unit_as_fuzz_does() {
    let counted = thicket(&["generate", "specs/json.fan", "--seed", "1", "-n", "3"]);
    assert!(counted.status.success(), "{}", stderr(&counted));
    for time in ["15m", "2h", "90s", "90", "1.5"] {
        let timed = thicket(&[
            "generate",
            "specs/json.fan",
            "--seed",
            "1",
            "-n",
            "3",
            "--time",
            time,
        ]);
        assert!(timed.status.success(), "--time {time}: {}", stderr(&timed));
        assert_eq!(timed.stdout, counted.stdout, "--time {time}");
    }
}

#[test]
fn generate_refuses_option_combinations_before_loading_the_spec() {
    for args in [
        &["--minimize", "len(str(<start>))", "--no-constraints"][..],
        &["--maximize", "len(str(<start>))", "--no-constraints"][..],
        &["--hidden-probability", "1.5"][..],
        &["--hidden-probability", "soon"][..],
    ] {
        let mut all = vec!["generate", "specs/json.fan", "-n", "1"];
        all.extend_from_slice(args);
        let refused = thicket(&all);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&refused)
        );
        assert!(refused.stdout.is_empty(), "{args:?}");
    }
}
