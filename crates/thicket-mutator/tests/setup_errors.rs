//! A mutator that cannot start says why and ends the process with exit code 1: never a
//! crash inside the fuzzer that loaded it. Each case runs `afl_custom_init` in a child
//! process (this test binary again, selecting `child_init` by name), since it exits.

use std::path::Path;
use std::process::Command;

/// Set in the child: run `afl_custom_init` and, if it returns, one `afl_custom_fuzz`.
const CHILD: &str = "THICKET_MUTATOR_TEST_CHILD";

#[test]
fn child_init() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    // SAFETY: the entry points' contracts: a null AFL state is unused; the buffers are
    // valid for their lengths.
    unsafe {
        let data = thicket_mutator::afl_custom_init(std::ptr::null_mut(), 7);
        let input = b"{}";
        let mut out: *const u8 = std::ptr::null();
        let len = thicket_mutator::afl_custom_fuzz(
            data,
            input.as_ptr(),
            input.len(),
            &mut out,
            std::ptr::null(),
            0,
            4096,
        );
        println!("mutant of {len} bytes");
        thicket_mutator::afl_custom_deinit(data);
    }
}

/// Runs `child_init` with `env` (and `THICKET_SPEC` removed unless set there).
fn init_with(env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child_init",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .env_remove("THICKET_SPEC")
        .env_remove("THICKET_SEED")
        .env_remove("THICKET_MAX_DEPTH")
        .env_remove("THICKET_START");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_spec() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs/json.fan")
        .display()
        .to_string()
}

#[test]
fn every_setup_error_is_a_message_and_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let broken = write("broken.fan", b"<start> ::= (\n");
    let unproductive = write("loop.fan", b"<start> ::= <start> \"a\"\n");
    let huge = write("huge.fan", &vec![b'#'; 17 << 20]);
    let folder = dir.path().display().to_string();
    let json = json_spec();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![], "THICKET_SPEC is not set"),
        (
            vec![("THICKET_SPEC", "/no/such/spec.fan")],
            "cannot read spec",
        ),
        (vec![("THICKET_SPEC", &folder)], "cannot read spec"),
        (vec![("THICKET_SPEC", &broken)], "broken.fan:"),
        (vec![("THICKET_SPEC", &unproductive)], "start"),
        (vec![("THICKET_SPEC", &huge)], "larger than the limit"),
        (
            vec![("THICKET_SPEC", &json), ("THICKET_SEED", "abc")],
            "THICKET_SEED=abc is not a whole number",
        ),
        (
            vec![("THICKET_SPEC", &json), ("THICKET_MAX_DEPTH", "0")],
            "depth",
        ),
        (
            vec![("THICKET_SPEC", &json), ("THICKET_START", "nosuch")],
            "nosuch",
        ),
    ];
    for (env, expected) in cases {
        let (code, stdout, stderr) = init_with(&env);
        assert_eq!(code, Some(1), "{env:?}: {stderr}");
        assert!(stderr.contains(expected), "{env:?}: {stderr}");
        assert!(stderr.contains("afl-fuzz stops"), "{env:?}: {stderr}");
        assert!(!stdout.contains("mutant of"), "{env:?}: {stdout}");
    }
}

#[test]
fn an_antlr_grammar_is_read_as_antlr() {
    let dir = tempfile::tempdir().unwrap();
    let g4 = dir.path().join("Pairs.g4");
    std::fs::write(
        &g4,
        "grammar Pairs;\nstart : pair (',' pair)* ;\npair : ID '=' INT ;\nID : [a-z]+ ;\nINT : [0-9]+ ;\nWS : [ \\t]+ -> skip ;\n",
    )
    .unwrap();
    let (code, stdout, stderr) = init_with(&[("THICKET_SPEC", g4.to_str().unwrap())]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("mutant of"), "{stdout}");
}

#[test]
fn a_null_state_passes_the_input_through() {
    let input = b"[1, 2]";
    let mut out: *const u8 = std::ptr::null();
    // SAFETY: a null state is allowed; the buffers are valid for their lengths.
    let len = unsafe {
        thicket_mutator::afl_custom_fuzz(
            std::ptr::null_mut(),
            input.as_ptr(),
            input.len(),
            &mut out,
            std::ptr::null(),
            0,
            4,
        )
    };
    assert_eq!(len, 4);
    assert_eq!(out, input.as_ptr());
    // SAFETY: as above.
    let name = unsafe {
        std::ffi::CStr::from_ptr(thicket_mutator::afl_custom_describe(
            std::ptr::null_mut(),
            64,
        ))
    };
    assert_eq!(name.to_str().unwrap(), "thicket-uninitialised");
}
