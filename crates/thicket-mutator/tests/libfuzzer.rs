//! A libFuzzer harness linked with the static library fuzzes with thicket's mutations.

use std::path::{Path, PathBuf};
use std::process::Command;

fn here(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

mod common;

fn library() -> PathBuf {
    common::built_library("libthicket_mutator.a")
}

/// Builds the harness with `clang -fsanitize=fuzzer`, or `None` with a loud message
/// (a failure under `THICKET_REQUIRE_LIBFUZZER=1`).
fn harness(dir: &Path) -> Option<PathBuf> {
    let out = dir.join("json_shape");
    let built = Command::new("clang")
        .args(["-g", "-O1", "-Wall", "-Werror", "-fsanitize=fuzzer", "-o"])
        .arg(&out)
        .arg("-I")
        .arg(here("include"))
        .arg(here("tests/harness/json_shape.c"))
        // libFuzzer refers to its hooks weakly, which does not pull them out of an
        // archive: name them.
        .args([
            "-Wl,-u,LLVMFuzzerCustomMutator",
            "-Wl,-u,LLVMFuzzerCustomCrossOver",
        ])
        .arg(library())
        .args(["-lpthread", "-ldl", "-lm"])
        .output();
    match built {
        Ok(o) if o.status.success() => Some(out),
        other => {
            assert!(
                std::env::var_os("THICKET_REQUIRE_LIBFUZZER").is_none_or(|v| v != "1"),
                "clang -fsanitize=fuzzer failed but THICKET_REQUIRE_LIBFUZZER=1: {other:?}"
            );
            eprintln!(
                "\n*** SKIPPED: no clang with libFuzzer; the libFuzzer mutator test did not run ***\n"
            );
            None
        }
    }
}

#[test]
fn libfuzzer_mutates_with_the_grammar_and_keeps_inputs_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(harness) = harness(dir.path()) else {
        return;
    };
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("seed"), r#"{"a": [1, "x"]}"#).unwrap();
    let run = Command::new(&harness)
        .arg(&corpus)
        .args(["-runs=3000", "-seed=1", "-max_len=4096"])
        .env("THICKET_SPEC", here("../../specs/json.fan"))
        .env("THICKET_VALID_ONLY", "1")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{log}");
    assert!(log.contains("LLVMFuzzerCustomMutator"), "{log}");
    // libFuzzer kept the inputs that reached new branches: all made by the grammar's
    // mutations, so all JSON in the grammar.
    let grammar =
        thicket_grammar::load_spec_file(&here("../../specs/json.fan"), &Default::default())
            .unwrap()
            .grammar;
    let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
    let kept: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(kept.len() > 3, "{kept:?}\n{log}");
    for input in &kept {
        let bytes = std::fs::read(input).unwrap();
        assert!(
            parser.parse(&bytes).is_ok(),
            "{}: {}",
            input.display(),
            String::from_utf8_lossy(&bytes)
        );
    }
}

#[test]
fn a_missing_spec_stops_the_harness_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let Some(harness) = harness(dir.path()) else {
        return;
    };
    let run = Command::new(&harness)
        .args(["-runs=10", "-seed=1"])
        .env_remove("THICKET_SPEC")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(!run.status.success(), "{log}");
    assert!(log.contains("THICKET_SPEC is not set"), "{log}");
}
