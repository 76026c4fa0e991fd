//! Probabilistic grammars (`thicket learn`, `generate --probabilities [--inverse]`) and
//! the campaign strategies (`thicket fuzz --strategy NAME`).

use std::path::Path;

mod common;
use common::{repo, text, thicket};

const SPEC: &str = "<start> ::= <item>*\n<item> ::= \"a\" | \"b\" | \"(\" <item>? \")\"\n";

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn learned_probabilities_reproduce_the_sample_frequencies() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "t.fan", SPEC);
    let samples = dir.path().join("samples");
    std::fs::create_dir(&samples).unwrap();
    // <item> alternatives: a 5, b 2, ( 2 (the parentheses hold a, then nothing).
    write(&samples, "1", "aaab");
    write(&samples, "2", "(a)()");
    write(&samples, "3", "ab");
    let probs = dir.path().join("probs.json");
    let o = thicket(&[
        "learn",
        &spec,
        samples.to_str().unwrap(),
        "-o",
        probs.to_str().unwrap(),
        "--smoothing",
        "0",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let p = json_file(&probs);
    assert_eq!(p["format"], "thicket-probabilities/1");
    assert_eq!(p["samples"], 3);
    let item = &p["rules"]["<item>"]["\"a\" | \"b\" | \"(\" <item>? \")\""];
    let close = |v: &serde_json::Value, p: f64| (v.as_f64().unwrap() - p).abs() < 1e-6;
    assert!(close(&item["\"a\""], 5.0 / 9.0), "{item}");
    assert!(close(&item["\"b\""], 2.0 / 9.0), "{item}");
    assert!(close(&item["\"(\" <item>? \")\""], 2.0 / 9.0), "{item}");
    // Top-level repetition counts 4, 2, 2 (of three samples); `?` took 1 once, 0 once.
    let star = &p["rules"]["<start>"]["<item>*"];
    assert!(
        (star["2"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-6,
        "{star}"
    );
    assert!(
        star.get("0").is_none(),
        "unseen counts have no mass without smoothing"
    );
    assert_eq!(p["rules"]["<item>"]["<item>?"]["1"], 0.5);

    // Generation by them reproduces the frequencies: relearn from 2,000 outputs.
    let out = dir.path().join("out");
    let o = thicket(&[
        "generate",
        &spec,
        "--probabilities",
        probs.to_str().unwrap(),
        "-n",
        "2000",
        "--seed",
        "3",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let again = dir.path().join("again.json");
    let o = thicket(&[
        "learn",
        &spec,
        out.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
        "--smoothing",
        "0",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let item = &json_file(&again)["rules"]["<item>"]["\"a\" | \"b\" | \"(\" <item>? \")\""];
    let a = item["\"a\""].as_f64().unwrap();
    assert!((a - 5.0 / 9.0).abs() < 0.03, "a relearned as {a}");
}

#[test]
fn inverse_probabilities_make_measurably_different_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = repo("specs/json.fan");
    // Seeds: flat arrays of small numbers.
    let samples = dir.path().join("samples");
    std::fs::create_dir(&samples).unwrap();
    for i in 0..20 {
        write(&samples, &format!("{i}"), &format!("[{i}, {}, 7]", i * 3));
    }
    let probs = dir.path().join("probs.json");
    let o = thicket(&[
        "learn",
        &spec,
        samples.to_str().unwrap(),
        "-o",
        probs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let generate = |inverse: bool| {
        let mut args = vec![
            "generate",
            &spec,
            "--probabilities",
            probs.to_str().unwrap(),
            "-n",
            "500",
            "--seed",
            "1",
            "-0",
        ];
        if inverse {
            args.push("--inverse");
        }
        let o = thicket(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let inputs: Vec<Vec<u8>> = o
            .stdout
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        let bytes: Vec<u8> = inputs.concat();
        let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
        (
            digits as f64 / bytes.len() as f64,
            bytes.len() as f64 / inputs.len() as f64,
        )
    };
    let (prob_digits, prob_size) = generate(false);
    let (inv_digits, inv_size) = generate(true);
    // The seeds are arrays of numbers: learned, a quarter of the bytes are digits
    // (0.28 at seed 1); inverted, numbers are the rarest value (0.02), and the inputs
    // are larger (containers, strings: 14.6 against 254 bytes).
    assert!(prob_digits > 5.0 * inv_digits, "{prob_digits} {inv_digits}");
    assert!(inv_size > 3.0 * prob_size, "{prob_size} {inv_size}");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"rules": {"<nope>": {}}}"#).unwrap();
    let o = thicket(&["generate", &spec, "--probabilities", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4));
    assert!(text(&o.stderr).contains("rule <nope> is not in the grammar"));
}

#[test]
fn every_strategy_runs_with_the_same_output_layout() {
    if !common::have_coverage("`fuzz --strategy` tests") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = repo("specs/json.fan");
    let harness = format!(
        "{}:target",
        repo("crates/thicket-exec/tests/targets/py/json_target.py")
    );
    let mut lines = Vec::new();
    for strategy in [
        "coverage",
        "random",
        "probabilistic",
        "inverse",
        "evogfuzz",
        "fdloop",
    ] {
        let out = dir.path().join(strategy);
        let o = thicket(&[
            "fuzz",
            &spec,
            "-o",
            out.to_str().unwrap(),
            "--seed",
            "1",
            "--execs",
            "200",
            "--max-depth",
            "10",
            "--strategy",
            strategy,
            "--track-features",
            "--python",
            &harness,
            "--python-include",
            "*/json/*",
        ]);
        assert!(o.status.success(), "{strategy}: {}", text(&o.stderr));
        for entry in [
            "queue",
            "crashes",
            "hangs",
            "meta",
            "stats.json",
            "plot_data.csv",
        ] {
            assert!(out.join(entry).exists(), "{strategy}: no {entry}");
        }
        let stats = json_file(&out.join("stats.json"));
        assert_eq!(stats["strategy"], strategy);
        assert_eq!(stats["execs"], 200, "{strategy}");
        assert!(stats["queue"].as_u64().unwrap() >= 1, "{strategy}");
        assert!(stats["code_features"].as_u64().unwrap() > 0, "{strategy}");
        assert!(stats["mappings"].as_u64().unwrap() > 0, "{strategy}");
        lines.push(stats["coverage"]["lines"].as_u64().unwrap());
        if matches!(strategy, "evogfuzz" | "fdloop") {
            let generations = std::fs::read_to_string(out.join("generations.csv")).unwrap();
            // 200 runs: fdloop 2 x 5 per generation, evogfuzz 10.
            assert_eq!(generations.lines().count(), 1 + 20, "{strategy}");
            assert_eq!(stats["strategy_stats"]["generations"], 20);
        }
    }
    // FdLoop mutates inputs (leaves) and so reaches the decoder's error paths, which
    // generation from the grammar alone (random) never does.
    assert!(
        lines[5] > lines[1],
        "fdloop {} random {}",
        lines[5],
        lines[1]
    );
    // Same seed, same campaign (without the run-time term, which the clock decides).
    let run = |name: &str| {
        let out = dir.path().join(name);
        let o = thicket(&[
            "fuzz",
            &spec,
            "-o",
            out.to_str().unwrap(),
            "--seed",
            "1",
            "--execs",
            "100",
            "--max-depth",
            "10",
            "--strategy",
            "fdloop",
            "--fitness-weights",
            "1,1,0,1",
            "--python",
            &harness,
            "--python-include",
            "*/json/*",
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read_to_string(out.join("generations.csv")).unwrap()
    };
    assert_eq!(run("again1"), run("again2"));
    let o = thicket(&[
        "fuzz",
        &spec,
        "-o",
        dir.path().join("x").to_str().unwrap(),
        "--strategy",
        "nope",
        "--python",
        &harness,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown strategy `nope`"));
}

/// The blanks (spaces, tabs) and all bytes of the inputs `generate` writes for `spec`
/// with `extra` options.
fn blanks_of_generated(spec: &str, extra: &[&str]) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["generate", spec, "-n", "500", "--seed", "1", "-d"];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(extra);
    let o = thicket(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (mut blanks, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(&out).unwrap() {
        let input = std::fs::read(entry.unwrap().path()).unwrap();
        bytes += input.len();
        blanks += input.iter().filter(|&&b| b == b' ' || b == b'\t').count();
    }
    (blanks, bytes)
}

#[test]
fn whitespace_rules_give_blanks_seldom_unless_raised() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "toml_like.fan",
        concat!(
            "<start> ::= <ws> (<line> <nl>)*\n",
            "<line> ::= <ws> (<pair> | <table>) <ws>\n",
            "<table> ::= \"[\" <ws> <key> <ws> \"]\"\n",
            "<pair> ::= <key> <ws> \"=\" <ws> <value>\n",
            "<key> ::= (\"a\" | \"b\" | \"x\")+\n",
            "<value> ::= (\"0\" | \"1\")+ | \"[\" <ws> (<value> <ws> (\",\" <ws> <value> <ws>)*)? \"]\"\n",
            "<ws> ::= (\" \" | \"\\t\")*\n",
            "<nl> ::= \"\\n\" (<ws> \"\\n\")*\n",
        ),
    );
    // Uniform choices made these inputs more than half blanks; now a choice inside a
    // whitespace rule goes past its minimum with probability 0.05.
    let (quiet, bytes) = blanks_of_generated(&spec, &[]);
    assert!(quiet > 0, "blanks still come now and then");
    assert!(quiet * 10 < bytes, "{quiet} blanks of {bytes} bytes");
    let (none, _) = blanks_of_generated(&spec, &["--hidden-probability", "0"]);
    assert_eq!(
        none, 0,
        "probability 0: every whitespace rule at its minimum"
    );
    let (loud, bytes) = blanks_of_generated(&spec, &["--whitespace-probability", "1"]);
    assert!(loud * 3 > bytes, "{loud} blanks of {bytes} bytes");

    // Generation steered otherwise has no whitespace weights to set: refused, not
    // ignored.
    for other in [
        &["--strategy", "kpath"][..],
        &["--probabilities", "p.json"][..],
    ] {
        let mut args = vec!["generate", spec.as_str(), "--hidden-probability", "0.5"];
        args.extend_from_slice(other);
        let o = thicket(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("--hidden-probability"),
            "{}",
            text(&o.stderr)
        );
    }
    // Nor does k-path generation from an ANTLR grammar draw hidden text by it.
    let g4 = write(
        dir.path(),
        "W.g4",
        "grammar W;\nwords : WORD+ EOF ;\nWORD : [a-z]+ ;\nWS : ' '+ -> skip ;\n",
    );
    let kpath = ["generate", g4.as_str(), "--strategy", "kpath"];
    assert_eq!(thicket(&kpath).status.code(), Some(0));
    let o = thicket(&[&kpath[..], &["--hidden-probability", "0.5"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--hidden-probability"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn unique_inputs_of_a_small_language_with_whitespace_rules_are_all_found() {
    let dir = tempfile::tempdir().unwrap();
    // 4 x 4 inputs; under the whitespace weights `a   b   c` comes once in 10^5 draws.
    let spec = write(
        dir.path(),
        "abc.fan",
        "<start> ::= \"a\" <ws> \"b\" <ws> \"c\"\n<ws> ::= \" \"{0,3}\n",
    );
    let o = thicket(&["generate", &spec, "--unique", "-n", "16", "--seed", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    let inputs: std::collections::HashSet<&str> = stdout.lines().collect();
    assert_eq!(inputs.len(), 16, "{inputs:?}");
    assert!(inputs.contains("a   b   c"), "{inputs:?}");
}
