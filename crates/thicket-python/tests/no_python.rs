//! `THICKET_PYTHON` names the interpreter; one that does not exist is reported with the
//! remedy. (A test binary of its own: it sets the variable, which no other thread may
//! read meanwhile.)

use thicket_python::{PYTHON_ENV, PythonConfig, PythonHost, StartError};

#[test]
fn thicket_python_names_the_interpreter() {
    // SAFETY: the only test of this binary, run before any thread reads the
    // environment.
    unsafe { std::env::set_var(PYTHON_ENV, "/nonexistent/bin/python3") };
    let config = PythonConfig::default();
    assert_eq!(
        config.python,
        std::path::Path::new("/nonexistent/bin/python3")
    );
    let err = PythonHost::new(Vec::new(), config)
        .err()
        .expect("no interpreter there");
    assert!(matches!(err, StartError::NoPython { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("the spec's Python code needs Python 3, but the interpreter `/nonexistent/bin/python3` cannot be started"),
        "{message}"
    );
    assert!(message.contains("install Python 3"), "{message}");
}
