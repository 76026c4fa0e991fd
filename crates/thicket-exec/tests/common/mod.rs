//! Builds the C targets of `tests/targets/` once per test binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Where the targets are built: under cargo's target directory, not the system's temp
/// folder (a static is never dropped, so a temporary folder would be left behind), and
/// kept between runs; each binary is rebuilt when its source is newer.
fn build_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("thicket-exec-c-targets");
        std::fs::create_dir_all(&dir).expect("build folder");
        dir
    })
}

/// Whether a compiler is on PATH.
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `tests/targets/NAME.c` compiled with afl-cc, or `None` (with a loud message) when
/// afl-cc is missing; with `THICKET_REQUIRE_AFL=1` (set by CI) a missing afl-cc fails.
pub fn afl_target(name: &str) -> Option<PathBuf> {
    if !have("afl-cc") {
        if std::env::var_os("THICKET_REQUIRE_AFL").is_some_and(|v| v == "1") {
            panic!("afl-cc is missing but THICKET_REQUIRE_AFL=1: install afl++");
        }
        eprintln!(
            "\n*** SKIPPED: afl-cc not found; the AFL++ tests of thicket-exec did not run \
             (apt-get install afl++) ***\n"
        );
        return None;
    }
    Some(compile("afl-cc", name, &format!("{name}-afl")))
}

/// `tests/targets/NAME.c` compiled with plain `cc` (no instrumentation).
pub fn plain_target(name: &str) -> PathBuf {
    compile("cc", name, &format!("{name}-plain"))
}

fn compile(compiler: &str, name: &str, out_name: &str) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = build_dir().join(out_name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/targets")
        .join(format!("{name}.c"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&out).is_some_and(|built| modified(&src).is_some_and(|s| s <= built)) {
        return out;
    }
    // Built under a name of this process's, then renamed: another test binary may be
    // building the same target.
    let partial = build_dir().join(format!("{out_name}.{}", std::process::id()));
    let output = Command::new(compiler)
        .args(["-O1", "-o"])
        .arg(&partial)
        .arg(&src)
        .env("AFL_QUIET", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        output.status.success(),
        "{compiler} {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::rename(&partial, &out).expect("rename the built target");
    out
}

/// A command line as the executors take it.
pub fn argv(program: &Path, args: &[&str]) -> Vec<std::ffi::OsString> {
    let mut v = vec![program.as_os_str().to_owned()];
    v.extend(args.iter().map(std::ffi::OsString::from));
    v
}
