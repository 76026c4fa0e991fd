//! The bundled Fandango specs (`specs/*.fan`) mean to Fandango what they mean to
//! thicket: Fandango reads each one and accepts every input thicket generates from it
//! (`fandango parse -f SPEC --validate`). Skipped unless Fandango is installed
//! (`fandango` on the `PATH`, or its path in `THICKET_FANDANGO`); with
//! `THICKET_REQUIRE_FANDANGO=1` (as CI sets it) a missing Fandango fails the test.

mod common;

use common::BIN;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Inputs per spec: one `fandango parse` run judges them all (each run starts a Python
/// interpreter and reads the spec). Fandango parses javascript.fan's programs slowly
/// (seconds each, its whitespace rules being ambiguous), so it gets fewer.
fn inputs_for(spec: &str) -> usize {
    if spec == "javascript" { 3 } else { 20 }
}

fn bundled_fandango_specs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fan"))
        .collect();
    specs.sort();
    specs
}

#[test]
fn fandango_accepts_the_bundled_fandango_specs_and_their_inputs() {
    let Some(fandango) = common::fandango() else {
        return;
    };
    let specs = bundled_fandango_specs();
    assert!(specs.len() >= 5, "{specs:?}");
    let temp = tempfile::tempdir().unwrap();
    for spec in &specs {
        let name = spec.file_stem().unwrap().to_string_lossy().into_owned();
        let out = temp.path().join(&name);
        let n = inputs_for(&name);
        let generated = Command::new(BIN)
            .arg("generate")
            .arg(spec)
            .args(["-n", &n.to_string(), "--seed", "1", "-d"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            generated.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&generated.stderr)
        );
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert_eq!(inputs.len(), n, "{name}");
        let judged = Command::new(&fandango)
            .args(["parse", "-f"])
            .arg(spec)
            .arg("--validate")
            .args(&inputs)
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", fandango.display()));
        assert!(
            judged.status.success(),
            "{name}: Fandango rejects thicket's inputs or the spec: {}",
            String::from_utf8_lossy(&judged.stderr)
        );
    }
}
