//! Token-level path conditions from a Python target's tokenizer (`--tokenizer`): the
//! equality tests on token values, in order, with their outcomes; and on esprima, the
//! real subject of docs/whitebox.md.

use std::path::PathBuf;
use std::time::Duration;
use thicket_exec::{Executor, Limits, PythonExecutor, PythonTarget, TokenCond};

/// Whether python3 has the modules; with `THICKET_REQUIRE_<var>=1` (set by CI) their
/// absence fails the test.
fn have(modules: &str, var: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os(format!("THICKET_REQUIRE_{var}")).is_some_and(|v| v == "1") {
            panic!("python3 cannot import {modules} but THICKET_REQUIRE_{var}=1");
        }
        eprintln!("\n*** SKIPPED: python3 -c 'import {modules}' failed ***\n");
    }
    ok
}

fn executor(function: String, tokenizer: &str, include: &[&str]) -> PythonExecutor {
    let mut target = PythonTarget::new(function);
    target.tokenizer = Some(tokenizer.into());
    target.include = include.iter().map(|s| s.to_string()).collect();
    let limits = Limits {
        timeout: Duration::from_secs(10),
        memory_mb: None,
    };
    PythonExecutor::new(target, limits, None).unwrap()
}

fn cond(index: u32, value: &str, equal: bool) -> TokenCond {
    TokenCond {
        index,
        value: value.into(),
        equal,
    }
}

#[test]
fn comparisons_on_token_values_are_recorded_in_order() {
    if !have("coverage", "PYTHON") {
        return;
    }
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/targets/py/tokens_target.py");
    let mut ex = executor(
        format!("{}:target", file.display()),
        "thicket_target:Lexer.next_token",
        &[],
    );
    ex.run(b"let x = 1 ; echo y ;").unwrap();
    let trace = ex.token_trace().expect("a token trace");
    let values: Vec<&str> = trace.tokens.iter().map(|t| t.value.as_str()).collect();
    assert_eq!(values, ["let", "x", "=", "1", ";", "echo", "y", ";", ""]);
    assert_eq!((trace.tokens[5].start, trace.tokens[5].end), (12, 16));
    // `kind is not NAME` is not seen; `in` tests each element with ==.
    assert_eq!(
        trace.conds,
        [
            cond(0, "let", true),
            cond(2, "=", true),
            cond(4, ";", true),
            cond(5, "let", false),
            cond(5, "print", false),
            cond(5, "echo", true),
            cond(7, ";", true),
        ]
    );
    // A failing run has its trace too, up to the failure.
    let outcome = ex.run(b"let 1").unwrap();
    assert!(outcome.exception.is_some());
    assert_eq!(ex.token_trace().unwrap().conds, [cond(0, "let", true)]);
}

#[test]
fn a_missing_tokenizer_is_reported() {
    if !have("coverage", "PYTHON") {
        return;
    }
    let mut target = PythonTarget::new("json:loads");
    target.tokenizer = Some("json.decoder:NoSuchThing.scan".into());
    let err = PythonExecutor::new(target, Limits::default(), None)
        .err()
        .expect("an error");
    assert!(
        err.to_string().contains("cannot load the tokenizer"),
        "{err}"
    );
}

#[test]
fn esprima_token_conditions() {
    if !have("coverage, esprima", "ESPRIMA") {
        return;
    }
    let mut ex = executor(
        "esprima:parseScript".into(),
        "esprima.scanner:Scanner.lex",
        &[],
    );
    ex.run(b"function f(x) { return x * 2 }").unwrap();
    let trace = ex.token_trace().expect("a token trace");
    assert_eq!(trace.tokens.len(), 12, "{:?}", trace.tokens);
    // The parser asks whether token 0 is `function` and token 2 `(`, both true.
    assert!(trace.conds.contains(&cond(0, "function", true)));
    assert!(trace.conds.contains(&cond(2, "(", true)));
    assert!(trace.conds.iter().any(|c| !c.equal));
}
