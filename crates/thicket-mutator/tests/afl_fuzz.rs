//! afl-fuzz loads the mutator and fuzzes an afl-cc target with it alone.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

mod common;

fn library() -> PathBuf {
    common::built_library("libthicket_mutator.so")
}

#[test]
fn afl_fuzz_runs_with_the_grammar_mutator_and_its_finds_are_in_the_grammar() {
    if !have("afl-fuzz") || !have("afl-cc") {
        assert!(
            std::env::var_os("THICKET_REQUIRE_AFL").is_none_or(|v| v != "1"),
            "afl-fuzz is missing but THICKET_REQUIRE_AFL=1"
        );
        eprintln!("\n*** SKIPPED: afl-fuzz not found; the AFL++ mutator test did not run ***\n");
        return;
    }
    let library = library();
    assert!(library.exists(), "{} not built", library.display());
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("branches");
    let status = Command::new("afl-cc")
        .args(["-O1", "-o"])
        .arg(&target)
        .arg(repo("crates/thicket-exec/tests/targets/branches.c"))
        .env("AFL_QUIET", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let seeds = dir.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    std::fs::write(seeds.join("a.json"), r#"{"a": [1, "x"]}"#).unwrap();
    let out = dir.path().join("out");
    let stats_file = dir.path().join("mutator-stats");
    let run = Command::new("afl-fuzz")
        .args(["-V", "6", "-s", "1", "-i"])
        .arg(&seeds)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&target)
        .arg("@@")
        .env("AFL_CUSTOM_MUTATOR_LIBRARY", &library)
        .env("AFL_CUSTOM_MUTATOR_ONLY", "1")
        .env("THICKET_SPEC", repo("specs/json.fan"))
        .env("THICKET_VALID_ONLY", "1")
        .env("THICKET_MUTATOR_STATS", &stats_file)
        .env("AFL_NO_UI", "1")
        .env("AFL_NO_AFFINITY", "1")
        .env("AFL_SKIP_CPUFREQ", "1")
        .env("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1")
        .env("AFL_NO_STARTUP_CALIBRATION", "1")
        .output()
        .unwrap();
    let log =
        String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{log}");
    let stats = std::fs::read_to_string(out.join("default/fuzzer_stats")).unwrap();
    let execs: u64 = stats
        .lines()
        .find_map(|l| {
            l.strip_prefix("execs_done")
                .map(|v| v.trim_start_matches([' ', ':']).trim().parse().unwrap())
        })
        .unwrap();
    assert!(execs > 100, "{stats}");
    // The mutator's finds carry its names, and (valid only, mutator only) every queue
    // entry is JSON in the grammar.
    let queue: Vec<PathBuf> = std::fs::read_dir(out.join("default/queue"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    assert!(queue.len() > 1, "{queue:?}\n{log}");
    assert!(
        queue
            .iter()
            .any(|p| p.to_string_lossy().contains("thicket-")),
        "{queue:?}"
    );
    let grammar = thicket_grammar::load_spec_file(&repo("specs/json.fan"), &Default::default())
        .unwrap()
        .grammar;
    let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
    for entry in &queue {
        let bytes = std::fs::read(entry).unwrap();
        assert!(parser.parse(&bytes).is_ok(), "{}", entry.display());
    }
    let counts = std::fs::read_to_string(&stats_file).unwrap();
    assert!(counts.contains("fresh 0"), "{counts}");
}
