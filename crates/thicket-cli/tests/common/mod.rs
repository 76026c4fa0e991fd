//! What the CLI's test binaries share: running the binary, paths in the repository,
//! and C targets built for a test. Each test binary uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_thicket");

/// Runs `thicket ARGS`.
pub fn thicket(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("thicket runs")
}

/// Bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path in the repository.
pub fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// Whether a program is on the PATH.
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One of thicket-exec's test targets (`crates/thicket-exec/tests/targets/NAME.c`)
/// built with `compiler` (`cc`, or `afl-cc` for coverage) into `dir`.
pub fn c_target(dir: &Path, name: &str, compiler: &str) -> String {
    let out = dir.join(name);
    let status = Command::new(compiler)
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(repo(&format!("crates/thicket-exec/tests/targets/{name}.c")))
        .env("AFL_QUIET", "1")
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(status.success(), "{compiler} {name}.c");
    out.display().to_string()
}

/// Whether the AFL++ tools a test needs are here; if not, a loud message, or a
/// failure under `THICKET_REQUIRE_AFL=1`.
pub fn have_afl(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("THICKET_REQUIRE_AFL").is_none_or(|v| v != "1"),
        "{missing:?} missing but THICKET_REQUIRE_AFL=1"
    );
    eprintln!("\n*** SKIPPED: {missing:?} not found; AFL++ tests did not run ***\n");
    false
}

/// Whether python3 with coverage.py is here; if not, prints that `what` did not run (a
/// failure under `THICKET_REQUIRE_PYTHON=1`, set by CI).
pub fn have_coverage(what: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import coverage"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("THICKET_REQUIRE_PYTHON").is_none_or(|v| v != "1"),
            "coverage.py is missing but THICKET_REQUIRE_PYTHON=1"
        );
        eprintln!("\n*** SKIPPED: no coverage.py; {what} did not run ***\n");
    }
    ok
}

/// Fandango's command (`THICKET_FANDANGO`, else `fandango` on the `PATH`), the judge of
/// the tests that compare with it; `None` (the caller skips) when it is not installed,
/// unless `THICKET_REQUIRE_FANDANGO=1`, which makes a missing Fandango fail the test.
pub fn fandango() -> Option<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("THICKET_FANDANGO") {
        return Some(path.into());
    }
    let found = Command::new("fandango")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert_ne!(
            std::env::var("THICKET_REQUIRE_FANDANGO").as_deref(),
            Ok("1"),
            "THICKET_REQUIRE_FANDANGO=1 but Fandango is not installed (set THICKET_FANDANGO)"
        );
        eprintln!("skipping the Fandango judge: `fandango` is not on the PATH");
    }
    found.then(|| "fandango".into())
}
