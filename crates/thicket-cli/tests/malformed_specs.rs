//! Malformed and hostile specs: every file in `tests/malformed/` must be rejected by the
//! built `thicket` binary with its expected diagnostic code at its expected
//! `file:line:col`, exit code 3, without a panic, without echoing control characters to
//! the terminal, and without hanging. Huge inputs are generated here rather than
//! committed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A run that takes longer than this is killed and fails the test: a hang guard, not a
/// timing test (every case here takes well under a second).
const HANG_GUARD: Duration = Duration::from_secs(20);

/// Exit code for "the spec has errors".
const BAD_SPEC: i32 = 3;

/// Every corpus file: the code of the first error `thicket lint` reports and where.
/// Change a row only together with the diagnostic it pins down.
const CORPUS: &[(&str, &str, &str)] = &[
    // Literals that never end.
    (
        "unterminated_double_quote.fan",
        "unterminated-string",
        "2:16",
    ),
    (
        "unterminated_single_quote.fan",
        "unterminated-string",
        "1:13",
    ),
    (
        "unterminated_byte_literal.fan",
        "unterminated-string",
        "1:13",
    ),
    ("unterminated_regex.fan", "unterminated-string", "1:13"),
    (
        "unterminated_string_at_eof.fan",
        "unterminated-string",
        "1:13",
    ),
    (
        "unterminated_string_across_newline.fan",
        "unterminated-string",
        "1:13",
    ),
    (
        "unterminated_escape_at_eof.fan",
        "unterminated-string",
        "1:13",
    ),
    // Escapes.
    ("bad_escape_unknown_q.bnf", "bad-escape", "1:15"),
    ("bad_escape_short_hex.fan", "bad-escape", "1:14"),
    ("bad_escape_codepoint_too_large.fan", "bad-escape", "1:14"),
    ("bad_escape_empty_braces.fan", "bad-escape", "1:14"),
    ("bad_escape_surrogate.fan", "bad-escape", "1:14"),
    ("byte_literal_non_ascii.fan", "bad-byte-literal", "1:18"),
    // Rule names.
    ("unterminated_rule_name.fan", "bad-rule-name", "1:13"),
    ("empty_rule_name.fan", "bad-rule-name", "1:13"),
    // Resolution.
    ("undefined_rule_near_miss.fan", "undefined-rule", "2:14"),
    ("undefined_rule_no_suggestion.bnf", "undefined-rule", "1:13"),
    ("duplicate_rule.bnf", "duplicate-rule", "3:1"),
    ("missing_start.fan", "missing-start", "1:1"),
    // Rules that can never finish (found by the lint, not by loading).
    ("left_recursion_no_exit.fan", "unproductive", "1:1"),
    ("unproductive_cycle.fan", "unproductive", "1:1"),
    // Nothing to read.
    ("empty_file.fan", "empty-spec", "1:1"),
    ("only_comments.fan", "empty-spec", "1:1"),
    // Bytes that are not spec text.
    ("binary_junk.fan", "not-utf8", "1:1"),
    ("invalid_utf8_in_literal.fan", "not-utf8", "1:17"),
    ("nul_byte.fan", "unexpected-character", "1:17"),
    ("stray_character.fan", "unexpected-character", "1:17"),
    // Grouping.
    ("unclosed_paren.fan", "unclosed-group", "2:1"),
    ("extra_close_paren.fan", "syntax", "1:20"),
    ("nesting_too_deep.fan", "nesting-too-deep", "1:141"),
    // Quantifiers.
    ("dangling_quantifier.fan", "dangling-quantifier", "1:13"),
    (
        "dangling_quantifier_after_pipe.fan",
        "dangling-quantifier",
        "1:19",
    ),
    ("double_quantifier.fan", "double-quantifier", "1:17"),
    ("repetition_min_exceeds_max.fan", "bad-repetition", "1:16"),
    ("repetition_not_a_number.bnf", "bad-repetition", "1:16"),
    ("repetition_unclosed.fan", "bad-repetition", "1:16"),
    ("repetition_empty.fan", "bad-repetition", "1:16"),
    ("repetition_too_large.fan", "bad-repetition", "1:16"),
    // Unquoted text.
    ("bare_word.fan", "syntax", "1:13"),
    ("bit_literals.bnf", "syntax", "2:11"),
    // A Fandango include of a file that is nowhere.
    ("fandango_include.fan", "include-not-found", "1:1"),
    // Rule structure.
    ("define_without_name.fan", "syntax", "1:1"),
    ("define_without_name_mid_spec.fan", "syntax", "2:5"),
    ("name_without_define.fan", "syntax", "1:9"),
    // `<a>` without `::=` at the end continues the rule before it.
    ("name_without_define_at_eof.fan", "undefined-rule", "1:13"),
    ("stray_semicolon.fan", "syntax", "1:17"),
    // Regex terminals.
    ("regex_invalid_class.fan", "bad-regex", "1:15"),
    ("regex_anchor.bnf", "bad-regex", "1:13"),
    ("regex_matches_nothing.fan", "empty-regex", "1:19"),
    // JSON grammars.
    ("json_syntax_error.json", "bad-json", "3:24"),
    ("json_empty_file.json", "bad-json", "1:1"),
    ("json_not_object.json", "bad-json", "1:1"),
    ("json_non_string_alternative.json", "bad-json", "3:3"),
    ("json_bad_rule_name.json", "bad-json", "3:3"),
    ("json_empty_alternatives.json", "bad-json", "3:3"),
    ("json_alternatives_not_a_list.json", "bad-json", "3:3"),
    ("json_undefined_rule.json", "undefined-rule", "2:3"),
];

/// Corpus files that `thicket generate` must reject exactly as `thicket lint` does.
/// (`regex_matches_nothing.fan` is not among them: its start rule can still finish, so
/// `generate` uses the other alternative; see its own test.)
const GENERATE_TOO: &[&str] = &[
    "unterminated_string_at_eof.fan",
    "bad_escape_unknown_q.bnf",
    "byte_literal_non_ascii.fan",
    "undefined_rule_near_miss.fan",
    "duplicate_rule.bnf",
    "missing_start.fan",
    "left_recursion_no_exit.fan",
    "unproductive_cycle.fan",
    "empty_file.fan",
    "binary_junk.fan",
    "nul_byte.fan",
    "unclosed_paren.fan",
    "double_quantifier.fan",
    "repetition_min_exceeds_max.fan",
    "regex_invalid_class.fan",
    "nesting_too_deep.fan",
    "json_syntax_error.json",
    "json_empty_alternatives.json",
];

struct Run {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `thicket` with `args`, killing it after [`HANG_GUARD`].
fn thicket(args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_thicket"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the thicket binary runs");
    // Drain both pipes while waiting, so a chatty child cannot block on a full pipe.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).expect("pipe reads");
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        if started.elapsed() > HANG_GUARD {
            child.kill().expect("kill works");
            child.wait().expect("wait works");
            panic!(
                "`thicket {}` ran longer than {HANG_GUARD:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        status,
        stdout: stdout.join().expect("stdout drained"),
        stderr: String::from_utf8(stderr.join().expect("stderr drained"))
            .expect("stderr is UTF-8 even for binary specs"),
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed")
}

fn corpus_file(name: &str) -> String {
    corpus_dir()
        .join(name)
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// A scratch directory for generated specs.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("malformed_specs")
        .join(test);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("spec written");
    path.to_str().expect("UTF-8 path").to_string()
}

/// What every rejected spec must look like on stderr.
fn assert_rejected(run: &Run, what: &str, path: &str, code: &str, at: &str) {
    let err = &run.stderr;
    assert_eq!(
        run.status.code(),
        Some(BAD_SPEC),
        "{what}: exit status\n{err}"
    );
    assert!(
        err.contains(&format!("error[{code}]")),
        "{what}: expected error[{code}]\n{err}"
    );
    assert!(
        err.contains(&format!("{path}:{at}")),
        "{what}: expected the location {path}:{at}\n{err}"
    );
    assert_sane_stderr(what, err);
}

/// No panic, and nothing from the spec that could drive the terminal.
fn assert_sane_stderr(what: &str, err: &str) {
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{what}: panic\n{err}"
    );
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: control characters on stderr\n{err:?}"
    );
}

#[test]
fn the_table_lists_every_corpus_file() {
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| {
            e.expect("entry")
                .file_name()
                .into_string()
                .expect("UTF-8 name")
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|(f, _, _)| f.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "tests/malformed/ and CORPUS must agree");
    assert!(CORPUS.len() >= 35);
    for name in GENERATE_TOO {
        assert!(listed.iter().any(|l| l == name), "{name} is not in CORPUS");
    }
}

#[test]
fn lint_rejects_every_corpus_file_with_its_code_and_location() {
    for &(name, code, at) in CORPUS {
        let path = corpus_file(name);
        let run = thicket(&["lint", &path]);
        assert_rejected(&run, &format!("lint {name}"), &path, code, at);
    }
}

#[test]
fn generate_rejects_corpus_files_like_lint() {
    for &name in GENERATE_TOO {
        let &(_, code, at) = CORPUS.iter().find(|(f, _, _)| *f == name).expect("listed");
        let path = corpus_file(name);
        let run = thicket(&["generate", &path, "-n", "3", "--seed", "1"]);
        assert_rejected(&run, &format!("generate {name}"), &path, code, at);
        assert!(run.stdout.is_empty(), "generate {name} wrote output");
    }
}

#[test]
fn messages_say_what_is_wrong() {
    let stderr = |name: &str| thicket(&["lint", &corpus_file(name)]).stderr;
    for (name, needles) in [
        (
            "undefined_rule_near_miss.fan",
            &[
                "rule <vaule> is used but never defined",
                "did you mean <value>?",
            ][..],
        ),
        (
            "json_undefined_rule.json",
            &["rule <digti> is used", "did you mean <digit>?"],
        ),
        (
            "missing_start.fan",
            &["<begin> is the only rule no other rule uses: pass `--start begin`"],
        ),
        (
            "duplicate_rule.bnf",
            &["first defined here", "defined again here"],
        ),
        (
            "left_recursion_no_exit.fan",
            &["every alternative needs <a> itself"],
        ),
        (
            "unproductive_cycle.fan",
            &["the cycle <a> -> <b> -> <c> -> <a>", "it needs <a>"],
        ),
        (
            "unterminated_single_quote.fan",
            &["no closing ' on its line"],
        ),
        (
            "unterminated_escape_at_eof.fan",
            &["no closing ' on its line"],
        ),
        ("unterminated_rule_name.fan", &["found the end of the line"]),
        ("bad_escape_unknown_q.bnf", &["unknown escape `\\q`"]),
        (
            "bad_escape_codepoint_too_large.fan",
            &["U+110000 is not a Unicode scalar value"],
        ),
        (
            "nul_byte.fan",
            &["control character U+0000", "\"a\" ␀ \"b\""],
        ),
        ("extra_close_paren.fan", &["unmatched `)`"]),
        ("bare_word.fan", &["literals must be quoted"]),
        ("bit_literals.bnf", &["bits are Fandango's"]),
        (
            "define_without_name_mid_spec.fan",
            &["is a `<name>` missing before `::=`?"],
        ),
        ("regex_anchor.bnf", &["anchors"]),
        ("regex_matches_nothing.fan", &["matches no string"]),
        (
            "json_empty_alternatives.json",
            &["rule \"<digit>\" has no alternatives"],
        ),
    ] {
        let err = stderr(name);
        for needle in needles {
            assert!(err.contains(needle), "{name}: expected {needle:?}\n{err}");
        }
    }
    let err = stderr("undefined_rule_no_suggestion.bnf");
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_regex_that_matches_nothing_is_a_lint_error() {
    let path = corpus_file("regex_matches_nothing.fan");
    let run = thicket(&["lint", &path, "--format", "json"]);
    assert_eq!(run.status.code(), Some(BAD_SPEC));
    let value: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
    let first = &value["diagnostics"][0];
    assert_eq!(first["code"], "empty-regex");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(1), Some(19))
    );
    // The start rule can still finish through "a", so `generate` may use that; if it
    // refuses the regex instead, it must say where the regex is, as a spec error.
    let run = thicket(&["generate", &path, "-n", "20", "--seed", "1"]);
    if run.status.code() == Some(0) {
        assert_eq!(run.stdout, "a\n".repeat(20).as_bytes());
    } else {
        assert_rejected(
            &run,
            "generate regex_matches_nothing.fan",
            &path,
            "empty-regex",
            "1:19",
        );
    }
}

#[test]
fn ten_megabytes_of_open_parentheses_stop_at_the_nesting_limit() {
    let dir = scratch("parens");
    let path = write(
        &dir,
        "parens.fan",
        format!("<start> ::= {}", "(".repeat(10 << 20)),
    );
    let run = thicket(&["lint", &path]);
    assert_rejected(&run, "10 MB of (", &path, "nesting-too-deep", "1:141");
    assert!(
        run.stderr.len() < 4096,
        "the 10 MB line is not echoed: {} bytes",
        run.stderr.len()
    );
}

#[test]
fn a_megabyte_string_that_never_ends_is_reported_briefly() {
    let dir = scratch("long_string");
    let path = write(
        &dir,
        "string.fan",
        format!("<start> ::= \"{}", "a".repeat(1 << 20)),
    );
    let run = thicket(&["lint", &path]);
    assert_rejected(&run, "1 MB string", &path, "unterminated-string", "1:13");
    assert!(
        run.stderr.len() < 4096,
        "the 1 MB line is not echoed: {} bytes",
        run.stderr.len()
    );
}

#[test]
fn deeply_nested_json_is_rejected() {
    let dir = scratch("json_nesting");
    let path = write(
        &dir,
        "deep.json",
        format!("{{\"<start>\": {}", "[".repeat(1 << 20)),
    );
    let run = thicket(&["lint", &path]);
    assert_rejected(&run, "deep JSON", &path, "bad-json", "1:139");
    assert!(run.stderr.contains("recursion limit"), "{}", run.stderr);
}

#[test]
fn many_duplicate_rules_are_reported_quickly_and_briefly() {
    let dir = scratch("duplicates");
    // ISLa grammars refuse a rule defined twice (Fandango specs take the last one).
    let path = write(&dir, "dup.bnf", "<a> ::= <a>\n".repeat(200_000));
    let run = thicket(&["lint", &path]);
    assert_rejected(&run, "200,000 duplicates", &path, "duplicate-rule", "2:1");
    // 199,999 duplicates and the missing <start>, of which 100 are shown.
    assert!(
        run.stderr.contains("199900 more diagnostics are not shown"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("has 200000 errors"), "{}", run.stderr);
}

#[test]
fn a_long_unproductive_chain_names_its_cycle() {
    let n = 100_000;
    let mut spec = String::from("<start> ::= <a0>\n");
    for i in 0..n {
        spec.push_str(&format!("<a{i}> ::= <a{}>\n", i + 1));
    }
    spec.push_str(&format!("<a{n}> ::= <a{n}>\n"));
    let path = write(&scratch("unproductive_chain"), "chain.fan", spec);
    let run = thicket(&["lint", &path]);
    assert_rejected(&run, "unproductive chain", &path, "unproductive", "1:1");
    assert!(
        run.stderr
            .contains(&format!("rule <start> can never finish: it needs <a{n}>")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("more diagnostics are not shown"),
        "{}",
        run.stderr
    );
    let run = thicket(&["generate", &path, "--seed", "1"]);
    assert_rejected(
        &run,
        "generate unproductive chain",
        &path,
        "unproductive",
        "1:1",
    );
}

#[test]
fn a_chain_of_100000_rules_lints_and_names_the_depth_it_needs() {
    let n = 100_000;
    let mut spec = String::from("<start> ::= <r0>\n");
    for i in 0..n - 1 {
        spec.push_str(&format!("<r{i}> ::= <r{}>\n", i + 1));
    }
    spec.push_str(&format!("<r{}> ::= \"x\"\n", n - 1));
    let path = write(&scratch("valid_chain"), "chain.fan", spec);

    let run = thicket(&["lint", &path]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let summary = String::from_utf8(run.stdout).expect("UTF-8");
    assert!(
        summary.contains("minimal depth 100001"),
        "{}",
        &summary[summary.len() - 300..]
    );
    assert!(
        summary.trim_end().ends_with("clean"),
        "{}",
        &summary[summary.len() - 300..]
    );

    let run = thicket(&["generate", &path, "--seed", "1"]);
    assert_eq!(run.status.code(), Some(4), "{}", run.stderr);
    assert!(
        run.stderr.contains("--max-depth 30 is too small"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("100001"), "{}", run.stderr);
    assert_sane_stderr("generate chain", &run.stderr);

    // Its smallest input takes 100,001 rule expansions, over the default --max-nodes:
    // refused, naming the option.
    let run = thicket(&["generate", &path, "--seed", "1", "--max-depth", "100001"]);
    assert_eq!(run.status.code(), Some(4), "{}", run.stderr);
    assert!(run.stderr.contains("--max-nodes 100000"), "{}", run.stderr);

    // At the depth and steps it needs, the chain generates, also as a 100,001-level
    // JSON tree.
    let run = thicket(&[
        "generate",
        &path,
        "-n",
        "2",
        "--seed",
        "1",
        "--max-depth",
        "100001",
        "--max-nodes",
        "100001",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, b"x\nx\n");
    let run = thicket(&[
        "generate",
        &path,
        "-n",
        "1",
        "--seed",
        "1",
        "--max-depth",
        "100001",
        "--max-nodes",
        "100001",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    assert_sane_stderr("generate chain as JSON", &run.stderr);
    assert!(run.stdout.starts_with(b"{") && run.stdout.ends_with(b"}\n"));
}

#[test]
fn deep_recursion_generates_without_overflowing_the_stack() {
    let path = write(
        &scratch("deep_recursion"),
        "nest.fan",
        "<start> ::= <a>\n<a> ::= \"(\" <a> \")\" | \"x\"\n",
    );
    for format in ["text", "json"] {
        let run = thicket(&[
            "generate",
            &path,
            "-n",
            "300",
            "--seed",
            "5",
            "--max-depth",
            "100000",
            "--format",
            format,
        ]);
        assert_eq!(run.status.code(), Some(0), "{format}: {}", run.stderr);
        assert_sane_stderr(format, &run.stderr);
        assert_eq!(run.stdout.iter().filter(|&&b| b == b'\n').count(), 300);
    }
    let run = thicket(&[
        "generate",
        &path,
        "-n",
        "300",
        "--seed",
        "5",
        "--max-depth",
        "100000",
    ]);
    for line in String::from_utf8(run.stdout).expect("UTF-8").lines() {
        let depth = line.len() / 2;
        assert_eq!(line, format!("{}x{}", "(".repeat(depth), ")".repeat(depth)));
    }
}
