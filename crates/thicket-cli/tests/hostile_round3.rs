//! Hostile cases that were once handled badly (a panic, lost files): each is kept here
//! so that it stays handled.

mod common;
use common::{repo, text, thicket};

#[test]
fn durations_beyond_any_clock_are_usage_errors_not_panics() {
    let json = repo("specs/json.fan");
    for time in [
        "1e300",
        "2e19",
        "18446744073709551615s",
        "0",
        "-1",
        "nan",
        "5 weeks",
    ] {
        let out = thicket(&["generate", &json, "-n", "1", "--time", time]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--time {time}: {}",
            text(&out.stderr)
        );
        assert!(
            !text(&out.stderr).contains("panicked"),
            "{}",
            text(&out.stderr)
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = thicket(&[
        "fuzz",
        &json,
        "-o",
        out_dir.to_str().unwrap(),
        "--time",
        "18446744073709551615s",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("100 years"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn generate_and_fuzz_read_the_same_durations() {
    let json = repo("specs/json.fan");
    for time in ["15m", "90s", "1.5", "500ms", "2h"] {
        let out = thicket(&["generate", &json, "-n", "1", "--seed", "1", "--time", time]);
        assert!(out.status.success(), "--time {time}: {}", text(&out.stderr));
        assert!(!out.stdout.is_empty());
    }
}

#[test]
fn fuzz_refuses_a_folder_of_the_users_files_and_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join(".tmp")).unwrap();
    std::fs::write(mine.join(".tmp/important.txt"), b"keep me").unwrap();
    std::fs::write(mine.join("notes.txt"), b"mine too").unwrap();
    for jobs in ["1", "2"] {
        let out = thicket(&[
            "fuzz",
            &repo("specs/json.fan"),
            "-o",
            mine.to_str().unwrap(),
            "-j",
            jobs,
            "--execs",
            "5",
            "--",
            "true",
        ]);
        assert_ne!(out.status.code(), Some(0), "-j {jobs}");
        let err = text(&out.stderr);
        assert!(err.contains("not a campaign"), "-j {jobs}: {err}");
        assert_eq!(
            std::fs::read(mine.join(".tmp/important.txt")).unwrap(),
            b"keep me"
        );
        assert_eq!(std::fs::read(mine.join("notes.txt")).unwrap(), b"mine too");
        let names: Vec<_> = std::fs::read_dir(&mine)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "-j {jobs}: {names:?}");
    }
}

#[test]
fn an_interrupted_generate_leaves_only_whole_files() {
    for signal in ["INT", "TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut child = std::process::Command::new(common::BIN)
            .args([
                "generate",
                &repo("specs/json.fan"),
                "-n",
                "100000000",
                "--seed",
                "1",
            ])
            .args(["--target-size", "20000", "-o", out.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until files appear, then interrupt mid-stream.
        let started = std::time::Instant::now();
        while std::fs::read_dir(&out).map_or(0, |d| d.count()) < 20 {
            assert!(started.elapsed().as_secs() < 60, "no output after 60 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}: {status:?}");
        let partial: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert!(partial.is_empty(), "SIG{signal}: {partial:?}");
    }
}

#[test]
fn bad_option_values_are_usage_errors() {
    let json = repo("specs/json.fan");
    for separator in ["\\x4", "\\q", "\\xZZ", "\\"] {
        let out = thicket(&["generate", &json, "-n", "1", "--separator", separator]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{separator}: {}",
            text(&out.stderr)
        );
    }
    let out = thicket(&[
        "generate",
        &json,
        "-n",
        "2",
        "--seed",
        "1",
        "--separator",
        "\\x04",
    ]);
    assert!(out.status.success());
    assert_eq!(out.stdout.iter().filter(|&&b| b == 4).count(), 2);
    let dir = tempfile::tempdir().unwrap();
    let crash = dir.path().join("crash");
    std::fs::write(&crash, "[]").unwrap();
    let out = thicket(&[
        "minimize",
        &json,
        crash.to_str().unwrap(),
        "--failure-pattern",
        "(",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("regex"), "{}", text(&out.stderr));
}

#[test]
fn learning_from_nothing_is_an_error_not_an_empty_model() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let rejected = dir.path().join("rejected");
    std::fs::create_dir(&rejected).unwrap();
    std::fs::write(rejected.join("a"), "not json").unwrap();
    for inputs in [&empty, &rejected] {
        let model = dir.path().join("model.json");
        let out = thicket(&[
            "learn-coverage",
            &repo("specs/json.fan"),
            inputs.to_str().unwrap(),
            "-o",
            model.to_str().unwrap(),
            "--",
            "true",
        ]);
        assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("nothing to learn from"),
            "{}",
            text(&out.stderr)
        );
        assert!(!model.exists());
    }
}
