//! C functions as named locations: a program built with SanitizerCoverage's function
//! guards and thicket's runtime (`src/sancov_rt.c`), found by `executor_for` (auto mode)
//! and named by its symbols.

use std::path::{Path, PathBuf};
use std::process::Command;
use thicket_exec::{Limits, Mode, Target, executor_for};

/// clang with SanitizerCoverage, or a loud skip (a failure under
/// `THICKET_REQUIRE_SANCOV=1`, which CI sets: clang comes with its afl++).
fn have_clang() -> bool {
    let ok = Command::new("clang")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("THICKET_REQUIRE_SANCOV").is_none_or(|v| v != "1"),
            "clang is missing but THICKET_REQUIRE_SANCOV=1"
        );
        eprintln!("\n*** SKIPPED: no clang; the SanitizerCoverage tests did not run ***\n");
    }
    ok
}

fn build(dir: &Path) -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rt = dir.join("rt.o");
    let status = Command::new("cc")
        .args(["-c", "-O1", "-o"])
        .arg(&rt)
        .arg(here.join("src/sancov_rt.c"))
        .status()
        .unwrap();
    assert!(status.success());
    let program = dir.join("functions");
    let out = Command::new("clang")
        .args(["-fsanitize-coverage=func,trace-pc-guard", "-O1", "-o"])
        .arg(&program)
        .arg(here.join("tests/targets/functions.c"))
        .arg(&rt)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    program
}

#[test]
fn functions_a_run_entered_are_named() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = build(dir.path());
    let target = Target::new(&[program.clone().into_os_string()], None).unwrap();
    let (mut ex, note) = executor_for(target, Mode::Auto, Limits::default(), None).unwrap();
    assert!(note.is_none());
    assert!(
        ex.describe().contains("SanitizerCoverage"),
        "{}",
        ex.describe()
    );
    let mut names = |input: &[u8]| {
        ex.run(input).unwrap();
        let mut out = Vec::new();
        assert!(ex.covered_locations(&mut out));
        let mut names: Vec<String> = out.into_iter().map(|l| l.name).collect();
        names.sort();
        names
    };
    assert_eq!(names(b"*(-1)"), ["deep", "main", "product"]);
    assert_eq!(names(b"*(1)"), ["main", "product"]);
    assert_eq!(names(b"+1"), ["main", "sum"]);
    assert_eq!(
        names(b"x"),
        ["main"],
        "nothing carried over from earlier runs"
    );
}
