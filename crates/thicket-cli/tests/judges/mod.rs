//! The independent judges in this folder (Python scripts), run from the tests of
//! thicket-cli and thicket-solve (`#[path]`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `rest_docutils.py` on a manifest (lines `PATH<TAB>TITLES<TAB>ITEMS`): the lines
/// of the documents Docutils does not read as written, or `None` when python3 or
/// Docutils is missing (a failure with `THICKET_REQUIRE_PYTHON=1`, as CI sets).
pub fn rest_docutils(manifest: &str) -> Option<Vec<String>> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../thicket-cli/tests/judges/rest_docutils.py");
    let required = std::env::var_os("THICKET_REQUIRE_PYTHON").is_some_and(|v| v == "1");
    let child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert!(!required, "python3 is missing but THICKET_REQUIRE_PYTHON=1");
        eprintln!("python3 not found: Docutils did not judge the reST documents");
        return None;
    };
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(manifest.as_bytes())
        .expect("the judge reads its manifest");
    let out = child.wait_with_output().expect("the judge ends");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.code() == Some(3) {
        assert!(!required, "{text} but THICKET_REQUIRE_PYTHON=1");
        eprintln!("{text}: Docutils did not judge the reST documents");
        return None;
    }
    Some(text.lines().map(str::to_string).collect())
}

/// Reads CSV files with Python's csv module (`csv_python.py`): each file's records, or
/// what Python said when it could not read it; `None` when python3 is missing (a
/// failure with `THICKET_REQUIRE_PYTHON=1`, as CI sets).
pub fn python_csv(paths: &[PathBuf]) -> Option<Vec<Result<Vec<Vec<String>>, String>>> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../thicket-cli/tests/judges/csv_python.py");
    let required = std::env::var_os("THICKET_REQUIRE_PYTHON").is_some_and(|v| v == "1");
    let child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert!(!required, "python3 is missing but THICKET_REQUIRE_PYTHON=1");
        eprintln!("python3 not found: Python's csv did not judge the CSV files");
        return None;
    };
    let manifest: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
    let mut stdin = child.stdin.take().expect("piped");
    // Written from another thread: the judge answers as it reads.
    let writer = std::thread::spawn(move || stdin.write_all(manifest.as_bytes()));
    let out = child.wait_with_output().expect("the judge ends");
    writer
        .join()
        .expect("the manifest is written")
        .expect("the judge reads its manifest");
    assert!(
        out.status.success(),
        "csv_python.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("the judge writes UTF-8");
    let answers: Vec<_> = text
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            match value.get("error") {
                Some(e) => Err(e.to_string()),
                None => Ok(serde_json::from_value(value).expect("records of strings")),
            }
        })
        .collect();
    assert_eq!(answers.len(), paths.len(), "one answer per file");
    Some(answers)
}
