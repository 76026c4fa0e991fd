//! What the mutator's test binaries share.

use std::path::PathBuf;

/// A library file of this crate as cargo built it for this test: beside the test's
/// binary in `target/<profile>/deps/` (only a `cargo build` copies it one level up).
pub fn built_library(file: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join(file)
}
