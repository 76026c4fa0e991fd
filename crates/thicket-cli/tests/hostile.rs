//! Hostile inputs: each case either succeeds or exits with a clear message
//! naming the limit, within a generous time and an address-space bound, and never
//! aborts (no exit by signal, no allocation failure). Each case is small enough for CI.

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Address space a hostile case may use: far below what the unbounded behaviour needed
/// (tens of gigabytes), far above what a bounded run needs.
const ADDRESS_SPACE: u64 = 1 << 30;
/// Wall-clock bound of a hostile case (generous: CI machines are slow and shared).
const SECONDS: u64 = 60;

struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

fn thicket_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    thicket_within(dir, args, stdin, ADDRESS_SPACE)
}

/// `thicket_in` under an address-space limit of `address_space` bytes.
fn thicket_within(dir: &Path, args: &[&str], stdin: &[u8], address_space: u64) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_thicket"));
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: address_space,
                rlim_max: address_space,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let mut child = command.spawn().expect("thicket runs");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let started = Instant::now();
    let out_thread = {
        let mut out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut out, &mut v).ok();
            v
        })
    };
    let err_thread = {
        let mut err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut err, &mut v).ok();
            v
        })
    };
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(SECONDS) {
            child.kill().ok();
            panic!("thicket {args:?} ran for more than {SECONDS} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    feeder.join().ok();
    let output = Output {
        status,
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    };
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.signal().is_none(),
        "thicket {args:?} died by signal {:?}: {stderr}",
        output.status.signal()
    );
    assert!(
        !stderr.contains("panicked"),
        "thicket {args:?} panicked: {stderr}"
    );
    assert!(
        !stderr.contains("memory allocation"),
        "thicket {args:?} ran out of memory: {stderr}"
    );
    Run {
        code: output.status.code().expect("an exit code"),
        stdout: output.stdout,
        stderr,
    }
}

fn thicket(args: &[&str]) -> Run {
    thicket_in(&workspace(), args, b"")
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

// --- generation ---------------------------------------------------------------------

#[test]
fn a_huge_mandatory_repetition_is_refused_naming_the_limit_and_lint_warns() {
    let dir = temp();
    for (count, bytes) in [("4000000000", "4000000000"), ("100000000", "100000000")] {
        let spec = write(
            dir.path(),
            "big.fan",
            format!("<start> ::= \"a\"{{{count}}}\n"),
        );
        let run = thicket(&["generate", &spec, "-n", "2", "--seed", "1"]);
        assert_eq!(run.code, 4, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!("is {bytes} bytes")),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("--max-size"), "{}", run.stderr);
        let lint = thicket(&["lint", &spec]);
        assert_eq!(lint.code, 0, "a warning, not an error: {}", lint.stderr);
        let all = format!("{}{}", String::from_utf8_lossy(&lint.stdout), lint.stderr);
        assert!(all.contains("warning[large-minimum]"), "{all}");
    }
    // Each repetition is a step: 2 MB of "a" takes 2,000,000, over the default
    // --max-nodes; raising the limits is honoured.
    let spec = write(dir.path(), "mid.fan", "<start> ::= \"a\"{2000000}\n");
    let refused = thicket(&["generate", &spec, "-n", "1", "--seed", "1"]);
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--max-nodes 100000"),
        "{}",
        refused.stderr
    );
    let raised = &[
        "generate",
        &spec,
        "-n",
        "1",
        "--seed",
        "1",
        "--max-nodes",
        "3000000",
    ];
    let run = thicket(raised);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.len(), 2_000_001);
    let small = thicket(&[raised as &[&str], &["--max-size", "1000"]].concat());
    assert_eq!(small.code, 4);
    assert!(small.stderr.contains("--max-size 1000"), "{}", small.stderr);
}

#[test]
fn an_alternative_too_large_for_any_input_is_left_out_without_a_warning() {
    let dir = temp();
    let spec = write(
        dir.path(),
        "alt.fan",
        "<start> ::= \"x\" | \"a\"{4000000000}\n",
    );
    let run = thicket(&["generate", &spec, "-n", "20", "--seed", "1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).matches('x').count(),
        20
    );
    assert!(!run.stderr.contains("--max-nodes"), "{}", run.stderr);
}

#[test]
fn a_huge_regex_terminal_is_refused_and_lint_warns() {
    let dir = temp();
    let spec = write(
        dir.path(),
        "re.fan",
        "<start> ::= r\"a{1000}{1000}{1000}\"\n",
    );
    let run = thicket(&["generate", &spec, "-n", "1", "--seed", "1"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("1000000000 bytes"), "{}", run.stderr);
    assert!(run.stderr.contains("--max-size"), "{}", run.stderr);
    let lint = thicket(&["lint", &spec]);
    assert!(
        lint.stderr.contains("warning[large-minimum]"),
        "{}",
        lint.stderr
    );
    // Optional, it is refused too (sampling would take a billion repetitions).
    let spec = write(
        dir.path(),
        "opt.fan",
        "<start> ::= \"x\" | r\"(?:a?){1000}{1000}{1000}\"\n",
    );
    let run = thicket(&["generate", &spec, "-n", "1", "--seed", "1"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("--max-nodes"), "{}", run.stderr);
}

#[test]
fn repetitions_count_against_max_nodes_and_optional_huge_parts_are_not_chosen() {
    let dir = temp();
    let spec = write(
        dir.path(),
        "steps.fan",
        "<start> ::= <e>{4000000000}\n<e> ::= \"\"\n",
    );
    let run = thicket(&["generate", &spec, "-n", "1", "--seed", "1"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("--max-nodes 100000"), "{}", run.stderr);
    let spec = write(
        dir.path(),
        "opt.fan",
        "<start> ::= (\"x\" | <big>)+\n<big> ::= \"a\"{100000000} | r\"b{0,3000000}\"\n",
    );
    let run = thicket(&[
        "generate",
        &spec,
        "-n",
        "20",
        "--seed",
        "1",
        "--max-repetitions",
        "100000000",
        "--max-size",
        "100000",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for line in run.stdout.split(|&b| b == b'\n') {
        assert!(line.len() <= 100_000, "an input of {} bytes", line.len());
    }
}

// --- parse output ---------------------------------------------------------------------

#[test]
fn a_deeply_nested_tree_prints_in_linear_space_with_depths_shown_as_numbers() {
    let dir = temp();
    // 20 KB of JSON nested 10,000 deep: the indented tree used to be 4 GB.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let file = write(dir.path(), "deep.json", &deep);
    let run = thicket(&["parse", "specs/json.fan", &file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.len() < 20_000_000, "{} bytes of output", text.len());
    let widest = text.lines().map(str::len).max().unwrap();
    assert!(widest < 100, "a line of {widest} bytes");
    assert!(text.contains("] <array>\n"), "depths shown as numbers");
    // Large inputs (over 64 KiB) take the streaming path.
    let big = format!("[{}1]", "[1],".repeat(300_000));
    let file = write(dir.path(), "big.json", &big);
    let streamed = thicket(&["parse", "specs/json.fan", &file, "--format", "sexp"]);
    assert_eq!(streamed.code, 0, "{}", streamed.stderr);
    let small = write(dir.path(), "small.json", "[[1],1]");
    let run = thicket(&["parse", "specs/json.fan", &small, "--format", "sexp"]);
    let small_text = String::from_utf8(run.stdout).unwrap();
    let big_text = String::from_utf8(streamed.stdout).unwrap();
    assert!(big_text.ends_with('\n'));
    assert_eq!(
        big_text.matches("(<array>").count(),
        300_001,
        "{}",
        &small_text
    );
}

// --- input sizes and many inputs ---------------------------------------------------------

#[test]
fn endless_specs_and_inputs_stop_at_their_size_limits() {
    let lint = thicket(&["lint", "/dev/zero"]);
    assert_eq!(lint.code, 3, "{}", lint.stderr);
    assert!(lint.stderr.contains("16777216 bytes"), "{}", lint.stderr);
    assert!(lint.stderr.contains("--max-spec-size"), "{}", lint.stderr);
    // Each command goes on with the other inputs and exits 4.
    let plain: &[&str] = &["--mode", "plain", "--", "true"];
    for (command, extra) in [
        ("parse", &[][..]),
        ("check", &[]),
        ("cover", &[]),
        ("coverage", plain),
    ] {
        let args = [command, "specs/json.fan", "/dev/zero", "specs/json.fan"];
        let run = thicket(&[&args[..], &["--max-input-size", "100000000"], extra].concat());
        assert_eq!(run.code, 4, "{command}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("/dev/zero is larger than the limit of 100000000 bytes"),
            "{command}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("--max-input-size"), "{}", run.stderr);
        if command == "coverage" {
            let out = String::from_utf8_lossy(&run.stdout);
            let counts = "2 inputs (0 in the grammar's language, 1 unreadable)";
            assert!(out.contains(counts), "{out}");
        }
    }
    // A constraint file is capped like a spec.
    let run = thicket(&[
        "check",
        "specs/json.fan",
        "specs/json.fan",
        "--constraint",
        "/dev/zero",
        "--max-spec-size",
        "1000000",
    ]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "constraint: /dev/zero is larger than the limit of 1000000 bytes (raise it with --max-spec-size)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn one_bad_file_does_not_stop_the_others_and_folders_and_lists_are_inputs() {
    let dir = temp();
    std::fs::create_dir_all(dir.path().join("in/sub")).unwrap();
    write(dir.path(), "in/a.json", "[1]");
    write(dir.path(), "in/sub/b.json", "{}");
    write(dir.path(), "in/.hidden", "not json");
    let ok = dir.path().join("in/a.json").to_str().unwrap().to_owned();
    // A missing file: the good one is still reported, the exit code is 4.
    for command in ["parse", "check", "cover"] {
        let run = thicket(&[command, "specs/json.fan", &ok, "/nonexistent"]);
        assert_eq!(run.code, 4, "{command}: {}", run.stderr);
        assert!(
            run.stderr.contains("cannot read /nonexistent"),
            "{}",
            run.stderr
        );
    }
    let run = thicket(&[
        "parse",
        "specs/json.fan",
        &ok,
        "/nonexistent",
        "--format",
        "sexp",
    ]);
    assert!(String::from_utf8_lossy(&run.stdout).contains("(<start>"));
    // In JSON, the unreadable input has its line (parse, check) or its count (cover).
    let run = thicket(&[
        "parse",
        "specs/json.fan",
        &ok,
        "/nonexistent",
        "--format",
        "json",
    ]);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["error"]["unreadable"], true);
    let run = thicket(&["check", "specs/json.fan", &ok, "/nonexistent", "--json"]);
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&run.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["error"]["unreadable"], true, "{last}");
    let run = thicket(&["cover", "specs/json.fan", &ok, "/nonexistent", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        (report["inputs"].as_u64(), report["unreadable"].as_u64()),
        (Some(2), Some(1))
    );
    // A folder: every file below it, sorted, hidden ones skipped.
    let folder = dir.path().join("in").to_str().unwrap().to_owned();
    let run = thicket(&["cover", "specs/json.fan", &folder, "--per-input"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = String::from_utf8(run.stdout).unwrap();
    assert!(out.starts_with("2 inputs (0 rejected)"), "{out}");
    assert!(out.contains("in/sub/b.json: "), "{out}");
    let run = thicket(&["check", "specs/json.fan", &folder]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = String::from_utf8(run.stdout).unwrap();
    let names: Vec<&str> = out.lines().collect();
    assert_eq!(names.len(), 2, "{out}");
    assert!(names[0].ends_with("in/a.json: valid") && names[1].ends_with("in/sub/b.json: valid"));
    // 3,000 inputs through --files-from (stdin) and a file list.
    let mut list = String::new();
    for i in 0..3000 {
        let name = format!("f{i}.json");
        write(dir.path(), &name, format!("[{i}]"));
        list.push_str(&dir.path().join(name).to_string_lossy());
        list.push('\n');
    }
    let run = thicket_in(
        dir.path(),
        &[
            "parse",
            &workspace().join("specs/json.fan").to_string_lossy(),
            "--quiet",
            "--files-from",
            "-",
        ],
        list.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listed = write(dir.path(), "list.txt", &list);
    let run = thicket(&[
        "cover",
        "specs/json.fan",
        "--files-from",
        &listed,
        "-k",
        "1",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("3000 inputs"));
}

// --- counting trees -----------------------------------------------------------------

#[test]
fn counting_an_unambiguous_input_costs_its_one_tree_at_any_depth() {
    let dir = temp();
    // Nested 100,000 deep: counting gave up past about 250 levels of JSON ("unknown"),
    // and --all and --all-parses with it; before that, 3.2 KB nested 1,600 deep took
    // 16 s. The chart has no forks, so there is one tree.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let file = write(dir.path(), "deep.json", &deep);
    let run = thicket(&["parse", "specs/json.fan", &file, "--count", "--quiet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = thicket(&[
        "parse",
        "specs/json.fan",
        &file,
        "--count",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(": 1 derivation tree"), "{}", run.stderr);
    let run = thicket(&[
        "parse",
        "specs/json.fan",
        &file,
        "--all",
        "--format",
        "sexp",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        String::from_utf8_lossy(&run.stdout).starts_with("# tree 1 of 1\n"),
        "{}",
        run.stderr
    );
    let run = thicket(&[
        "cover",
        "specs/json.fan",
        &file,
        "--all-parses",
        "-k",
        "2",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("one tree"), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(
        report["coverage"][0]["covered"].as_u64().unwrap() > 5,
        "{report}"
    );
}

#[test]
fn a_large_input_is_counted_and_listed_as_a_small_one() {
    let dir = temp();
    // Over 64 KiB, an input's tree is streamed; with --count or --all it was built and
    // rendered in memory (1.4 MB of JSON: 1.6 GB). One tree is now streamed too, and an
    // ambiguous input still counted and listed.
    let items: Vec<String> = (0..10_000)
        .map(|i| format!("{{\"k\":[{i},true]}}"))
        .collect();
    let json = format!("[{}]", items.join(","));
    assert!(json.len() > 64 << 10);
    let file = write(dir.path(), "large.json", &json);
    let run = thicket(&[
        "parse",
        "specs/json.fan",
        &file,
        "--all",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(": 1 derivation tree"), "{}", run.stderr);
    let line: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(line["trees"], 1);
    assert_eq!(line["all"].as_array().unwrap().len(), 1);
    let spec = write(
        dir.path(),
        "two.fan",
        "<start> ::= <e>\n<e> ::= \"(\" <e> \")\" | <w>\n<w> ::= <u> | <v>\n<u> ::= \"a\"*\n<v> ::= \"a\"*\n",
    );
    let file = write(dir.path(), "large.txt", "a".repeat(70_000));
    let run = thicket(&["parse", &spec, &file, "--all", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(": 2 derivation trees"),
        "{}",
        run.stderr
    );
    let line: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        (
            line["trees"].as_u64(),
            line["all"].as_array().unwrap().len()
        ),
        (Some(2), 2)
    );
}

#[test]
fn counting_and_listing_a_deep_ambiguous_input_has_no_depth_limit() {
    let dir = temp();
    // Two trees per level: the counter recursed and gave up past about 2,000 levels
    // ("unknown (input nests too deeply to count)"), --all with it, and cover
    // --all-parses fell back to the one tree.
    let spec = write(
        dir.path(),
        "twice.fan",
        "<start> ::= <a>\n<a> ::= \"[\" <a> \"]\" | \"[\" <b> \"]\" | \"\"\n<b> ::= <a>\n",
    );
    let shallow = write(dir.path(), "shallow.txt", "[[[]]]");
    let run = thicket(&["parse", &spec, &shallow, "--count", "--format", "sexp"]);
    assert!(
        run.stderr.contains(": 8 derivation trees"),
        "{}",
        run.stderr
    );
    let deep = format!("{}{}", "[".repeat(3_000), "]".repeat(3_000));
    let file = write(dir.path(), "deep.txt", &deep);
    let run = thicket(&["parse", &spec, &file, "--count", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("more than 2^128"), "{}", run.stderr);
    let run = thicket(&["cover", &spec, &file, "--all-parses", "-k", "3", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("one tree"), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(
        report["coverage"][0]["covered"].as_u64().unwrap() >= 3,
        "{report}"
    );
    // Ambiguous only at the bottom, 10,000 deep: both trees are listed.
    let spec = write(
        dir.path(),
        "inner.fan",
        "<start> ::= <a>\n<a> ::= \"[\" <a> \"]\" | <b> | <c>\n<b> ::= \"x\"\n<c> ::= \"x\"\n",
    );
    let deep = format!("{}x{}", "[".repeat(10_000), "]".repeat(10_000));
    let file = write(dir.path(), "inner.txt", &deep);
    let run = thicket(&["parse", &spec, &file, "--all", "--format", "sexp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(": 2 derivation trees"),
        "{}",
        run.stderr
    );
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("# tree 2 of 2"), "{}", run.stderr);
    assert!(out.contains("(<b> \"x\")") && out.contains("(<c> \"x\")"));
}

// --- checking -----------------------------------------------------------------------

#[test]
fn checking_nested_subtrees_is_linear_for_lengths_and_bounded_by_max_steps() {
    let dir = temp();
    // 20,000 deep: str.len read every array's text (quadratic: 400 M bytes copied).
    let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
    let file = write(dir.path(), "deep.json", &deep);
    let run = thicket(&[
        "check",
        "specs/json.fan",
        &file,
        "-c",
        "forall <array> a: str.len(a) >= 2",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A constraint that does read each text: --max-steps bounds it.
    let run = thicket(&[
        "check",
        "specs/json.fan",
        &file,
        "-c",
        "forall <array> a: str.prefixof(\"[\", a)",
        "--max-steps",
        "100000",
    ]);
    assert_eq!(run.code, 1);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        out.contains("undecided: checking stopped after 100000 steps"),
        "{out}"
    );
    assert!(out.contains("--max-steps"), "{out}");
    // A subtree read as a predicate's number argument counts too.
    let run = thicket(&[
        "check",
        "specs/json.fan",
        &file,
        "-c",
        "forall <array> a: (count(a, \"<value>\", a) or true)",
        "--max-steps",
        "100000",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        out.contains("undecided: checking stopped after 100000 steps"),
        "{out}"
    );
}

#[test]
fn an_integer_quantifier_without_candidates_tries_zero() {
    let dir = temp();
    let file = write(dir.path(), "one.json", "[1]");
    let run = thicket(&[
        "check",
        "specs/json.fan",
        &file,
        "-c",
        "exists int n: n = n",
    ]);
    assert_eq!(
        run.code,
        0,
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        run.stderr
    );
    let run = thicket(&[
        "check",
        "specs/json.fan",
        &file,
        "-c",
        "exists int n: (n = n and str.len(\"x\") = 2)",
    ]);
    assert_eq!(run.code, 1);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        !out.contains("tried the values \n") && !out.ends_with("tried the values "),
        "{out}"
    );
}

// --- generate -o and options ---------------------------------------------------------

#[test]
fn generate_refuses_a_non_empty_folder_unless_forced_and_leaves_no_temporary_files() {
    let dir = temp();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let args = [
        "generate",
        "specs/expr.fan",
        "-n",
        "3",
        "--seed",
        "1",
        "-o",
        out_s,
    ];
    assert_eq!(thicket(&args).code, 0);
    let again = thicket(&args);
    assert_eq!(again.code, 4, "{}", again.stderr);
    assert!(
        again.stderr.contains("not empty") && again.stderr.contains("--force"),
        "{}",
        again.stderr
    );
    let forced = thicket(&[&args[..], &["--force"]].concat());
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["000000", "000001", "000002"],
        "no temporary files left"
    );
    // A write that fails (here: the name is taken by a folder; on a full disk alike)
    // is reported and leaves no partial or temporary file.
    let blocked = dir.path().join("blocked");
    std::fs::create_dir_all(blocked.join("000000")).unwrap();
    let blocked_s = blocked.to_str().unwrap();
    let run = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "1",
        "--seed",
        "1",
        "-o",
        blocked_s,
        "--force",
    ]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("cannot write"), "{}", run.stderr);
    let left: Vec<_> = std::fs::read_dir(&blocked).unwrap().collect();
    assert_eq!(left.len(), 1, "only the folder that was there");
}

#[test]
fn wrong_generate_options_are_usage_errors() {
    let cases: [&[&str]; 5] = [
        &["-k", "5"],
        &["--max-nodes", "0"],
        &["--max-size", "0"],
        &["--unique", "--max-draws-factor", "0"],
        &["-o", "/tmp/unused-thicket-dir", "--suffix", "/../../x"],
    ];
    for extra in cases {
        let run = thicket(
            &[
                &["generate", "specs/expr.fan", "-n", "1", "--seed", "1"],
                extra,
            ]
            .concat(),
        );
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(!run.stderr.is_empty(), "{extra:?} says why");
    }
    let run = thicket(&[
        "generate",
        "specs/expr.fan",
        "-n",
        "1",
        "--seed",
        "1",
        "--strategy",
        "kpath",
        "-k",
        "2",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_flat_chain_of_300_conjuncts_is_not_deep_nesting_and_a_bom_is_skipped() {
    let dir = temp();
    let file = write(dir.path(), "one.json", "[1]");
    let chain = vec!["str.len(\"x\") = 1"; 300].join(" and ");
    let run = thicket(&["check", "specs/json.fan", &file, "-c", &chain]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let chain = vec!["str.len(\"x\") = 2"; 300].join(" or ");
    let run = thicket(&["check", "specs/json.fan", &file, "-c", &chain]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // Nesting by parentheses is still capped.
    let nested = format!("{}true{}", "(".repeat(300), ")".repeat(300));
    let run = thicket(&["check", "specs/json.fan", &file, "-c", &nested]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    // A UTF-8 byte order mark before a spec is not part of it.
    let spec = write(dir.path(), "bom.fan", "\u{feff}<start> ::= \"a\"\n");
    let run = thicket(&["generate", &spec, "-n", "1", "--seed", "1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, b"a\n");
    // Nor before a constraint file.
    let constraint = write(dir.path(), "c.isla", "\u{feff}str.len(<start>) = 1");
    let input = write(dir.path(), "a.txt", "a");
    let run = thicket(&["check", &spec, &input, "--constraint", &constraint]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

// --- associative lists ---------------------------------------------------------------

#[test]
fn thousands_of_xml_attributes_parse_in_linear_time_and_still_count_every_bracketing() {
    let dir = temp();
    let attributes = |n: usize| {
        (0..n)
            .map(|i| format!("a{i}=\"v{i}\""))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // ISLa's <xml-attribute> ::= <xml-attribute> " " <xml-attribute>: every bracketing
    // of 10,000 attributes was a chart of 50 million items.
    let many = write(
        dir.path(),
        "many.xml",
        format!("<root {}>text</root>", attributes(10_000)),
    );
    let run = thicket(&["parse", "specs/xml.bnf", &many, "--quiet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let four = write(dir.path(), "four.xml", format!("<r {}/>", attributes(4)));
    let run = thicket(&[
        "parse",
        "specs/xml.bnf",
        &four,
        "--count",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(line["trees"], 5, "{line}");
}

#[test]
fn checking_an_element_of_thousands_of_children_does_not_overflow_the_stack() {
    // Its <inner-xml-tree> is a left-nested list 20,000 deep, which ISLa's balance
    // constraint's match expression searched recursively.
    let dir = temp();
    let doc = write(
        dir.path(),
        "wide.xml",
        format!("<r>{}</r>", "<e a=\"1\">t</e>".repeat(20_000)),
    );
    let run = thicket(&["check", "specs/xml.bnf", &doc]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("wide.xml: valid"),
        "{}",
        run.stderr
    );
}

// --- memory -------------------------------------------------------------------------

/// A JSON document of about `bytes` bytes: records of numbers, strings, booleans, nulls.
fn json_of(bytes: usize) -> String {
    let mut out = String::from("[\n");
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&format!(
            "  {{\"id\": {i}, \"tags\": [\"a\", \"b c\"], \"ok\": true, \"v\": null, \"x\": {i}.5e-3}},\n"
        ));
        i += 1;
    }
    out.push_str("  null\n]\n");
    out
}

#[test]
fn inputs_beyond_the_address_space_limit_are_reported_and_the_others_go_on() {
    // Far below what the large input needs (about 100 bytes per input byte to check),
    // above what the small one and the program itself need.
    const LIMIT: u64 = 400 << 20;
    let dir = temp();
    let large = write(dir.path(), "large.json", json_of(8 << 20));
    let small = write(dir.path(), "small.json", "[1, {\"a\": \"b\"}]\n");
    let model = dir.path().join("model.json");
    let json = "specs/json.fan";
    for args in [
        vec!["check", json, &large, &small, "-j", "1"],
        vec!["cover", json, &large, &small, "-j", "1"],
        vec!["learn", json, &large, &small, "-o", model.to_str().unwrap()],
        vec!["parse", json, &large, &small, "--quiet", "-j", "1"],
        vec!["parse", json, &large, &small, "--format", "json", "-j", "1"],
    ] {
        let run = thicket_within(&workspace(), &args, b"", LIMIT);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("large.json: not enough memory")
                && run.stderr.contains("`ulimit -v`")
                && !run.stderr.contains("small.json"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = thicket_within(&workspace(), &["check", json, &large, &small], b"", LIMIT);
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("small.json: valid"),
        "{}",
        run.stderr
    );
    // An input read without end stops at the limit too, not only at --max-input-size.
    let run = thicket_within(
        &workspace(),
        &["parse", json, "/dev/zero", "--max-input-size", "1000000000"],
        b"",
        LIMIT,
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("/dev/zero: not enough memory to read it"),
        "{}",
        run.stderr
    );
}

#[test]
fn memory_running_out_anywhere_ends_with_a_message_not_an_abort() {
    let dir = temp();
    // One input of 100 million nodes: its tree needs more than a gigabyte.
    let spec = write(dir.path(), "huge.fan", "<start> ::= \"a\"{100000000}\n");
    let run = thicket_within(
        dir.path(),
        &[
            "generate",
            &spec,
            "-n",
            "1",
            "--seed",
            "1",
            "--format",
            "json",
            "--max-size",
            "200000000",
            "--max-nodes",
            "200000000",
        ],
        b"",
        400 << 20,
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("error: out of memory") && run.stderr.contains("`ulimit -v`"),
        "{}",
        run.stderr
    );
}

// --- spec diagnostics ----------------------------------------------------------------

#[test]
fn thousands_of_undefined_rules_with_alike_names_are_reported_at_once() {
    let dir = temp();
    let mut spec = String::from("<start> ::= <rule_00000>\n");
    for i in 0..16_000 {
        spec.push_str(&format!("<rule_{i:05}> ::= <rulx_{i:05}>\n"));
    }
    let spec = write(dir.path(), "undefined.fan", spec);
    let run = thicket(&["lint", &spec]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("rule <rulx_00000> is used but never defined")
            && run.stderr.contains("did you mean <rule_00000>?")
            && run.stderr.contains("15900 more diagnostics are not shown"),
        "{}",
        run.stderr
    );
}

// --- machine-readable output ---------------------------------------------------------

#[test]
fn lint_json_reports_a_spec_that_cannot_be_read() {
    let dir = temp();
    let undefined = write(
        dir.path(),
        "u.fan",
        "<start> ::= <valeu>\n<value> ::= \"x\"\n",
    );
    let syntax = write(dir.path(), "s.fan", "<start> ::= (\"a\"\n");
    let missing = dir.path().join("missing.fan");
    for (spec, code, diagnostic) in [
        (undefined.as_str(), 3, "undefined-rule"),
        (syntax.as_str(), 3, ""),
        (missing.to_str().unwrap(), 4, "io"),
    ] {
        let run = thicket(&["lint", spec, "--format", "json"]);
        assert_eq!(run.code, code, "{spec}: {}", run.stderr);
        let report: serde_json::Value = serde_json::from_slice(&run.stdout)
            .unwrap_or_else(|e| panic!("{spec}: {e}: {:?}", String::from_utf8_lossy(&run.stdout)));
        assert_eq!(report["ok"], false, "{report}");
        assert!(report["errors"].as_u64().unwrap() >= 1, "{report}");
        assert!(
            report["rules"].is_null() && report["start"].is_null(),
            "{report}"
        );
        let first = &report["diagnostics"][0];
        assert_eq!(first["severity"], "error", "{report}");
        if !diagnostic.is_empty() {
            assert_eq!(first["code"], diagnostic, "{report}");
        }
    }
    let run = thicket(&["lint", &undefined, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let notes = report["diagnostics"][0]["notes"].to_string();
    assert!(notes.contains("did you mean <value>?"), "{report}");
}

/// The bytes of a fuzzingbook JSON tree's terminals, in order: a terminal is
/// `[text, []]`, or `[text, [], hex]` when its bytes are not UTF-8.
fn terminal_bytes(node: &serde_json::Value, out: &mut Vec<u8>) {
    let parts = node.as_array().expect("a node is an array");
    let children = parts[1].as_array().expect("children");
    if children.is_empty() {
        match parts.get(2) {
            Some(hex) => {
                let hex = hex.as_str().expect("hex is a string");
                out.extend(
                    (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("two hex digits")),
                );
            }
            None => out.extend_from_slice(parts[0].as_str().expect("text").as_bytes()),
        }
    }
    for child in children {
        terminal_bytes(child, out);
    }
}

fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    let text = std::str::from_utf8(stdout).expect("JSON output is UTF-8");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn json_output_holds_the_exact_bytes_of_terminals_that_are_not_utf8() {
    let dir = temp();
    let spec = write(
        dir.path(),
        "bytes.fan",
        "<start> ::= <chunk> (\",\" <chunk>)*\n<chunk> ::= r\"(?-u:[^,])+\"\n",
    );
    let small = b"a\xff\xc3\xa9,\"\\\x00\n,\xc3".to_vec();
    // Over 64 KiB, so that `parse` streams its tree as it reads it.
    let mut large = small.clone();
    while large.len() < 100_000 {
        large.extend_from_slice(b",z\xfe\x80");
    }
    for input in [&small, &large] {
        let file = write(dir.path(), "input.bin", input);
        let run = thicket(&["parse", &spec, &file, "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let lines = json_lines(&run.stdout);
        let mut bytes = Vec::new();
        terminal_bytes(&lines[0]["tree"], &mut bytes);
        assert_eq!(&bytes, input);
    }
    // The text beside the hex is the string constraints see.
    let file = write(dir.path(), "input.bin", &small);
    let run = thicket(&["parse", &spec, &file, "--format", "json"]);
    let tree = json_lines(&run.stdout)[0]["tree"].to_string();
    assert!(tree.contains(r#"["aÿé",[],"61ffc3a9"]"#), "{tree}");
    let run = thicket(&["parse", &spec, &file, "--format", "json", "--all"]);
    let mut bytes = Vec::new();
    terminal_bytes(&json_lines(&run.stdout)[0]["all"][0], &mut bytes);
    assert_eq!(bytes, small);

    let run = thicket(&[
        "check",
        &spec,
        &file,
        "--json",
        "-c",
        "forall <chunk> c: str.len(c) < 3",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let line = &json_lines(&run.stdout)[0];
    let bind = &line["violations"][0]["steps"][0];
    assert_eq!(bind["text_hex"], "61ffc3a9", "{line}");
    assert!(bind.get("text").is_none(), "{line}");

    // A file name that is not UTF-8 either (in a folder given as the input).
    use std::os::unix::ffi::OsStrExt;
    let names = dir.path().join("names");
    std::fs::create_dir(&names).unwrap();
    std::fs::write(
        names.join(std::ffi::OsStr::from_bytes(b"odd-\xff.bin")),
        &small,
    )
    .unwrap();
    let run = thicket(&[
        "cover",
        &spec,
        names.to_str().unwrap(),
        &file,
        "--json",
        "--per-input",
        "--missing",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let _: serde_json::Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stdout)));

    let run = thicket(&[
        "generate", &spec, "-n", "20", "--seed", "3", "--format", "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for line in json_lines(&run.stdout) {
        let mut bytes = Vec::new();
        terminal_bytes(&line["tree"], &mut bytes);
        let input = match line["input"].as_str() {
            Some(text) => text.as_bytes().to_vec(),
            None => {
                let hex = line["input_hex"].as_str().expect("input or input_hex");
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect()
            }
        };
        assert_eq!(bytes, input, "{line}");
    }
}
