//! Fandango specs with bit fields, on Fandango's own specs (`data/fandango/`, EUPL):
//! the inputs `thicket generate` writes (bits packed into bytes) and the inputs Fandango
//! makes are read back by `thicket parse` and `thicket check`, one bit at a time.
//! Fandango judges thicket's inputs (`fandango parse --validate`) and makes its own
//! when it is installed (`fandango` on the `PATH`, or its path in `THICKET_FANDANGO`;
//! with `THICKET_REQUIRE_FANDANGO=1` a missing Fandango fails the test).

mod common;

use common::{repo, text, thicket};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fandango() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("THICKET_FANDANGO") {
        return Some(PathBuf::from(path));
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
    found.then(|| PathBuf::from("fandango"))
}

fn files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// `thicket parse` and `thicket check` accept every file of `dir` as an input of `spec`.
fn thicket_accepts(spec: &str, dir: &Path, what: &str) {
    let inputs = files(dir);
    assert!(!inputs.is_empty(), "{spec}: no {what}");
    for command in ["parse", "check"] {
        let mut args = vec![command, spec, "--quiet"];
        args.extend(inputs.iter().map(String::as_str));
        let out = thicket(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{spec}: `thicket {command}` rejects {what}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn packed_inputs_of_fandangos_bit_specs_parse_and_check() {
    let fandango = fandango();
    let temp = tempfile::tempdir().unwrap();
    for name in ["bits", "gif89a", "byte_alternative", "bitstream-a"] {
        let spec = repo(&format!(
            "crates/thicket-cli/tests/data/fandango/{name}.fan"
        ));
        let ours = temp.path().join(format!("{name}-thicket"));
        let out = thicket(&[
            "generate",
            &spec,
            "-n",
            "20",
            "--seed",
            "1",
            "-o",
            ours.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        thicket_accepts(&spec, &ours, "thicket's inputs");
        let Some(fandango) = &fandango else { continue };
        let judged = Command::new(fandango)
            .args(["parse", "-f", &spec, "--validate"])
            .args(files(&ours))
            .output()
            .unwrap();
        assert!(
            judged.status.success(),
            "{name}: Fandango rejects thicket's inputs: {}",
            text(&judged.stderr)
        );
        let theirs = temp.path().join(format!("{name}-fandango"));
        let made = Command::new(fandango)
            .args(["fuzz", "-f", &spec, "-n", "10", "--random-seed", "1", "-d"])
            .arg(&theirs)
            .output()
            .unwrap();
        assert!(made.status.success(), "{name}: {}", text(&made.stderr));
        thicket_accepts(&spec, &theirs, "Fandango's inputs");
    }
}

/// Flags packed into one byte between two literals, with a constraint on a bit field.
const FLAGS: &str = "<start> ::= b'F' <flags> b'!'\n\
<flags> ::= <italic> 1 0 <brightness> <bit>\n\
<italic> ::= <bit>\n\
<brightness> ::= <bit>{4}\n\
where <brightness> == 9\n";

#[test]
fn a_packed_input_is_rejected_at_its_byte_and_its_bit_fields_checked() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(&spec, FLAGS).unwrap();
    let spec = spec.to_str().unwrap();
    let input = |name: &str, bytes: &[u8]| {
        let path = temp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    };
    // 1 1 0 1001 0: italic, the fixed 1 0, brightness 9, a free bit.
    let good = input("good", b"F\xd2!");
    let out = thicket(&["parse", spec, &good, "--format", "sexp"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tree = text(&out.stdout);
    assert!(
        tree.contains("(<brightness> (<bit> (<_bit> \"1\"))"),
        "{tree}"
    );
    assert!(
        !tree.contains("\\xd2"),
        "bits are read one at a time: {tree}"
    );
    // The fixed bits read 0 0 here: rejected at the flags byte, with the bit expected.
    let wrong_bits = input("wrong_bits", b"F\x92!");
    let out = thicket(&["parse", spec, &wrong_bits]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("1:2"), "{err}");
    assert!(err.contains("expected \"1\""), "{err}");
    if !common::have("python3") {
        return;
    }
    let out = thicket(&["check", spec, &good]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Brightness 3: in the language, but the constraint fails, and says on what.
    let dim = input("dim", b"F\xc6!");
    let out = thicket(&["check", spec, &dim]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("invalid"), "{report}");
    assert!(report.contains("<brightness> == 9"), "{report}");
}
