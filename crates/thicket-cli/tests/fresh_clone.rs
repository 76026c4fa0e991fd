//! What a fresh clone needs: the test suite reads nothing outside the repository, and the
//! licence the manifests name is there. (`.ci/run` also runs the tests from a copy of
//! the checkout with nothing beside it.)

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // Test data is inputs, not code.
            if path
                .file_name()
                .is_some_and(|n| n != "data" && n != "target")
            {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_code_reads_beside_the_checkout() {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates"), &mut files);
    assert!(files.len() > 50, "{} Rust files", files.len());
    // Paths that only exist beside this project's own checkout (spelled in two pieces so
    // that this file does not match itself).
    let beside = [concat!("../", "shared"), concat!("/work", "/shared")];
    let mut offenders = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if beside.iter().any(|b| line.contains(b)) {
                offenders.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn the_licences_the_manifest_names_are_in_the_repository() {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    assert!(manifest.contains(r#"license = "MIT OR Apache-2.0""#));
    assert!(!manifest.contains("example.invalid"), "placeholder address");
    let mit = std::fs::read_to_string(workspace().join("LICENSE-MIT")).unwrap();
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = std::fs::read_to_string(workspace().join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0"));
}

#[test]
fn copied_test_data_keeps_its_licence_and_origin() {
    let data = workspace().join("crates/thicket-cli/tests/data");
    let readme = std::fs::read_to_string(data.join("README.md")).unwrap();
    for dir in [
        "jsontestsuite",
        "grammars-v4/json",
        "grammars-v4/csv",
        "grammars-v4/url",
    ] {
        assert!(data.join(dir).join("LICENSE").is_file(), "{dir}/LICENSE");
        assert!(readme.contains(&format!("`{dir}/")), "README names {dir}");
    }
}

/// Whether `line` names a local paper file (three digits, `_`, 16 hex digits, `.txt`), which only
/// exists beside this project's checkout: papers are cited by title.
fn names_a_local_paper_file(line: &str) -> bool {
    let bytes = line.as_bytes();
    (0..bytes.len()).any(|i| {
        let rest = &bytes[i..];
        rest.len() >= 24
            && rest[..3].iter().all(u8::is_ascii_digit)
            && rest[3] == b'_'
            && rest[4..20].iter().all(u8::is_ascii_hexdigit)
            && rest[20..].starts_with(b".txt")
    })
}

#[test]
fn papers_are_cited_by_title_not_by_a_local_file_name() {
    assert!(names_a_local_paper_file(concat!(
        "(",
        "000_ae2666836b97a715",
        ".txt §3)"
    )));
    let mut files = Vec::new();
    rust_files(&workspace().join("crates"), &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .any(names_a_local_paper_file)
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}
