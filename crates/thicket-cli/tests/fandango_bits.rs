//! Fandango specs with bit fields, on Fandango's own specs (`data/fandango/`, EUPL):
//! the inputs `thicket generate` writes (bits packed into bytes) and the inputs Fandango
//! makes are read back by `thicket parse` and `thicket check`, one bit at a time.
//! Fandango judges thicket's inputs (`fandango parse --validate`) and makes its own
//! when it is installed (`fandango` on the `PATH`, or its path in `THICKET_FANDANGO`;
//! with `THICKET_REQUIRE_FANDANGO=1` a missing Fandango fails the test).

mod common;

use common::{repo, text, thicket};
use std::path::Path;
use std::process::Command;

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
    let fandango = common::fandango();
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
    // Its k-paths are those of its tree.
    let out = thicket(&["cover", spec, &good, "-k", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(0 rejected)"),
        "{}",
        text(&out.stdout)
    );
    // The fixed bits read 0 0 here: rejected at the flags byte, with the bit expected.
    let wrong_bits = input("wrong_bits", b"F\x92!");
    let out = thicket(&["parse", spec, &wrong_bits]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("1:2"), "{err}");
    assert!(err.contains("expected \"1\""), "{err}");
    assert!(err.contains("at bit 1 of the byte"), "{err}");
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

#[test]
fn fuzzing_runs_bit_fields_packed_and_resumes_from_packed_inputs() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(
        &spec,
        "<start> ::= b'<' <flags> b'>'\n<flags> ::= 1 0 <bit>{6}\n",
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let runs = temp.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let out = temp.path().join("out");
    // The target keeps each input it is given.
    let fuzz = |extra: &[&str]| {
        let mut args = vec!["fuzz", spec, "-o", out.to_str().unwrap(), "--seed", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "--",
            "sh",
            "-c",
            "cat > \"$0/run.$$\"",
            runs.to_str().unwrap(),
        ]);
        thicket(&args)
    };
    let o = fuzz(&["--no-feedback", "--execs", "30"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let ran: Vec<Vec<u8>> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(ran.len() > 10, "{} runs kept", ran.len());
    for input in &ran {
        let [b'<', byte, b'>'] = input[..] else {
            panic!("not one packed byte between < and >: {input:?}")
        };
        assert_eq!(byte >> 6, 0b10, "{byte:08b}");
    }
    // With coverage feedback (a Python target branching on the bits), inputs are kept
    // packed, and a resumed campaign reads them back.
    if !common::have_coverage("the Python fuzzing test with bit fields") {
        return;
    }
    let target = temp.path().join("flags_target.py");
    std::fs::write(
        &target,
        "def target(data):\n    flags = ord(data[1]) if isinstance(data, str) else data[1]\n    if flags & 1:\n        a = 1\n    if flags & 2:\n        b = 2\n    if flags & 4:\n        c = 3\n",
    )
    .unwrap();
    let target = format!("{}:target", target.display());
    let out = temp.path().join("covered");
    let python = |extra: &[&str]| {
        let mut args = vec![
            "fuzz",
            spec,
            "-o",
            out.to_str().unwrap(),
            "--seed",
            "1",
            "--python",
            &target,
            "--python-include",
            "*flags_target.py",
        ];
        args.extend_from_slice(extra);
        thicket(&args)
    };
    let o = python(&["--execs", "40"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let queue = out.join("queue");
    let mut generated = 0;
    for entry in std::fs::read_dir(&queue).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().contains("op:gen") {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        assert!(
            matches!(input[..], [b'<', byte, b'>'] if byte >> 6 == 0b10),
            "{}: {input:?}",
            path.display()
        );
        generated += 1;
    }
    assert!(generated > 0, "no generated input kept");
    let o = python(&["--resume", "--execs", "80"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert!(stats["execs"].as_u64().unwrap() >= 80, "{stats}");
}

/// A spec whose inputs are bytes of eight bit fields each.
const BYTES: &str = "<start> ::= <byte>+\n<byte> ::= <bit>{8}\n";

/// Writes `files` (name, bytes) into `dir`, returning their paths in order.
fn write_inputs(dir: &Path, files: &[(String, Vec<u8>)]) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    files
        .iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect()
}

#[test]
fn minimize_reduces_a_packed_input_through_its_bit_fields() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("bytes.fan");
    std::fs::write(&spec, BYTES).unwrap();
    let input = temp.path().join("crash");
    std::fs::write(&input, b"packed input, X marks it").unwrap();
    let small = temp.path().join("small");
    // The target crashes on any input holding an X.
    let out = thicket(&[
        "minimize",
        spec.to_str().unwrap(),
        input.to_str().unwrap(),
        "-o",
        small.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "if grep -q X \"$0\"; then kill -SEGV $$; fi",
        "@@",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Read bit by bit, the input is in the grammar, and so is what it reduces to.
    assert!(!err.contains("not in the grammar"), "{err}");
    assert!(err.contains(", in the grammar"), "{err}");
    assert_eq!(std::fs::read(&small).unwrap(), b"X");
}

#[test]
fn learn_coverage_reads_packed_inputs_bit_by_bit() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(&spec, "<start> ::= <italic> <bit>{7}\n<italic> ::= <bit>\n").unwrap();
    // Inputs whose first bit is set cover the location.
    let files: Vec<(String, Vec<u8>)> = (0..40u8)
        .map(|i| (format!("{i:02}"), vec![i.wrapping_mul(37)]))
        .collect();
    let inputs = write_inputs(&temp.path().join("inputs"), &files);
    let matrix = serde_json::json!({
        "executor": "by hand",
        "inputs": inputs,
        "locations": ["line target.py:2"],
        "covered": files.iter().map(|(_, b)| if b[0] & 0x80 != 0 { vec![0] } else { vec![] }).collect::<Vec<_>>(),
    });
    let matrix_file = temp.path().join("matrix.json");
    std::fs::write(&matrix_file, matrix.to_string()).unwrap();
    let model = temp.path().join("model.json");
    let out = thicket(&[
        "learn-coverage",
        spec.to_str().unwrap(),
        temp.path().join("inputs").to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--from-matrix",
        matrix_file.to_str().unwrap(),
        "-k",
        "3",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("(0 rejected by the grammar)"), "{err}");
    // The location's tree tells the italic bit, read from the packed inputs, without
    // a mistake.
    let out = thicket(&[
        "explain",
        model.to_str().unwrap(),
        "target.py:2",
        "--spec",
        spec.to_str().unwrap(),
    ]);
    let explained = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(explained.contains("accuracy 1.000"), "{explained}");
}

#[test]
fn mine_reads_packed_samples_bit_by_bit() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(&spec, "<start> ::= <italic> <bit>{7}\n<italic> ::= <bit>\n").unwrap();
    let sample = |set: bool, i: u8| {
        let byte = (i * 29) & 0x7f;
        vec![if set { byte | 0x80 } else { byte }]
    };
    let positives: Vec<(String, Vec<u8>)> =
        (0..6).map(|i| (format!("p{i}"), sample(true, i))).collect();
    let negatives: Vec<(String, Vec<u8>)> = (0..6)
        .map(|i| (format!("n{i}"), sample(false, i)))
        .collect();
    write_inputs(&temp.path().join("good"), &positives);
    write_inputs(&temp.path().join("bad"), &negatives);
    let out = thicket(&[
        "mine",
        spec.to_str().unwrap(),
        "--positive",
        temp.path().join("good").to_str().unwrap(),
        "--negative",
        temp.path().join("bad").to_str().unwrap(),
        "--json",
    ]);
    let err = text(&out.stderr);
    assert!(!err.contains("not in the grammar"), "{err}");
    let report: serde_json::Value =
        serde_json::from_str(text(&out.stdout).trim()).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(report["positives"], 6, "{report}");
    assert_eq!(report["negatives"], 6, "{report}");
}

#[test]
fn learn_reads_packed_samples_bit_by_bit() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(&spec, "<start> ::= <italic> <bit>{7}\n<italic> ::= <bit>\n").unwrap();
    let samples: Vec<(String, Vec<u8>)> = (0..5u8)
        .map(|i| (format!("s{i}"), vec![0x80 | i]))
        .collect();
    let dir = temp.path().join("samples");
    write_inputs(&dir, &samples);
    let out = thicket(&["learn", spec.to_str().unwrap(), dir.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("learned from 5 samples"), "{err}");
}

#[test]
fn crashes_of_bit_specs_are_minimised_through_their_trees() {
    let temp = tempfile::tempdir().unwrap();
    let spec = temp.path().join("flags.fan");
    std::fs::write(
        &spec,
        "<start> ::= b'<' <flags>+ b'>'\n<flags> ::= 1 0 <bit>{6}\n",
    )
    .unwrap();
    let out = temp.path().join("out");
    // Crashes when the first byte after `<` has its low bit set. Mutants stay in the
    // grammar, so that every crash has a tree to reduce.
    let o = thicket(&[
        "fuzz",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seed",
        "1",
        "--execs",
        "200",
        "--valid-only",
        "--minimize",
        "--",
        "sh",
        "-c",
        "b=$(od -An -tu1 -j1 -N1 | tr -d ' '); [ $((b % 2)) -eq 1 ] && kill -SEGV $$; exit 0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let minimized: Vec<Vec<u8>> = std::fs::read_dir(out.join("minimized"))
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(!minimized.is_empty(), "{}", text(&o.stderr));
    // Reduced through the tree and packed again: one flags byte between the brackets,
    // its fixed bits kept, the low bit that fails set.
    for input in &minimized {
        assert!(
            matches!(input[..], [b'<', byte, b'>'] if byte >> 6 == 0b10 && byte & 1 == 1),
            "{input:?}"
        );
    }
}
