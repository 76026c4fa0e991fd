//! The Python executor on Python's own json, csv and urllib.parse modules.

use std::path::PathBuf;
use std::time::Duration;
use thicket_exec::{
    Classifier, CoverageSet, Executor, FailureKind, Limits, PythonExecutor, PythonTarget, Status,
    Trace,
};

fn harness(file: &str, function: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/targets/py")
        .join(file);
    format!("{}:{function}", path.display())
}

/// Whether python3 with coverage.py is here; with `THICKET_REQUIRE_PYTHON=1` (set by CI)
/// its absence fails the test.
fn have_coverage() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import coverage"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("THICKET_REQUIRE_PYTHON").is_some_and(|v| v == "1") {
            panic!("python3 with coverage.py is missing but THICKET_REQUIRE_PYTHON=1");
        }
        eprintln!(
            "\n*** SKIPPED: python3 -c 'import coverage' failed (pip install coverage) ***\n"
        );
    }
    ok
}

fn executor(file: &str, include: &[&str], bytes: bool, timeout_ms: u64) -> PythonExecutor {
    let mut target = PythonTarget::new(harness(file, "target"));
    target.include = include.iter().map(|s| s.to_string()).collect();
    target.bytes = bytes;
    let limits = Limits {
        timeout: Duration::from_millis(timeout_ms),
        memory_mb: None,
    };
    PythonExecutor::new(target, limits, None).unwrap()
}

fn add(set: &mut CoverageSet, ex: &PythonExecutor) -> thicket_exec::Novelty {
    set.add(&ex.trace())
}

#[test]
fn json_lines_and_branches_grow_with_new_kinds_of_input() {
    if !have_coverage() {
        return;
    }
    let mut ex = executor("json_target.py", &["*/json/*"], false, 5000);
    let mut set = CoverageSet::new();
    assert_eq!(ex.run(b"1").unwrap().status, Status::Exited(0));
    let first = add(&mut set, &ex);
    assert!(first.new_lines > 10, "{first:?}");
    if let Trace::Python(trace) = ex.trace() {
        assert!(
            trace.files.iter().all(|f| f.path.contains("json")),
            "{trace:?}"
        );
        assert!(
            trace
                .files
                .iter()
                .any(|f| f.path.ends_with("decoder.py") && f.statements > 100)
        );
    }
    ex.run(b"1").unwrap();
    assert!(!add(&mut set, &ex).is_new(), "the same input adds nothing");
    ex.run(br#"{"a": [true, null, "x\u00e9\n"], "b": -1.5e3}"#)
        .unwrap();
    let more = add(&mut set, &ex);
    assert!(more.new_lines > 10 && more.new_branches > 5, "{more:?}");
    // Invalid JSON: an exception with its class and innermost frame.
    let o = ex.run(b"[1,").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(
        f.kind,
        FailureKind::Exception {
            language: "python".into(),
            class: "json.decoder.JSONDecodeError".into()
        }
    );
    assert!(f.location.as_deref().unwrap().contains("json/"), "{f:?}");
    let expected = Classifier {
        expected_exceptions: vec!["JSONDecodeError".into()],
        ..Classifier::default()
    };
    assert!(expected.classify(&o).is_none());
    assert_eq!(ex.starts(), 1);
}

#[test]
fn csv_module_coverage() {
    if !have_coverage() {
        return;
    }
    let mut ex = executor("csv_target.py", &["*/csv.py"], false, 5000);
    let mut set = CoverageSet::new();
    ex.run(b"a,b\n1,2\n").unwrap();
    let n1 = add(&mut set, &ex);
    ex.run(b"name;age\n\"x;y\";3\n'q';4\n").unwrap();
    let n2 = add(&mut set, &ex);
    assert!(n1.new_lines > 20, "{n1:?}");
    assert!(n2.is_new(), "{n2:?}");
    let summary = set.summary(None);
    assert_eq!(summary.files.len(), 1);
    assert!(summary.files[0].path.ends_with("csv.py"));
}

#[test]
fn urllib_parse_failures_and_coverage() {
    if !have_coverage() {
        return;
    }
    let mut ex = executor("url_target.py", &["*/urllib/parse.py"], false, 5000);
    let mut set = CoverageSet::new();
    let o = ex
        .run(b"http://user:pw@example.com:8080/p/a?q=1&r=#frag")
        .unwrap();
    assert!(Classifier::default().classify(&o).is_none());
    assert!(add(&mut set, &ex).new_lines > 30);
    let o = ex.run(b"http://[::1/x").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(f.kind.label(), "python ValueError");
    assert!(f.summary.contains("IPv6"), "{f:?}");
    assert!(f.location.unwrap().contains("urllib/parse.py"));
    let o = ex.run(b"http://example.com:99999999/").unwrap();
    assert_eq!(
        Classifier::default().classify(&o).unwrap().kind.label(),
        "python ValueError"
    );
}

#[test]
fn hangs_deaths_and_floods_restart_or_stay_bounded() {
    if !have_coverage() {
        return;
    }
    let mut ex = executor("misbehave.py", &["*/misbehave.py"], true, 500);
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    let o = ex.run(b"HANG").unwrap();
    assert_eq!(o.status, Status::Timeout);
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    assert_eq!(ex.starts(), 2, "a hang restarts the runner");
    let o = ex.run(b"DIE").unwrap();
    assert_eq!(o.status, Status::Exited(7));
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    assert_eq!(ex.starts(), 3);
    let o = ex.run(b"SPEAK").unwrap();
    assert!(o.stderr.total() > 5_000_000);
    assert!(o.stderr.bytes().len() <= thicket_exec::outcome::TAIL_BYTES);
    let o = ex.run(b"RAISE").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(f.kind.label(), "python KeyError");
    assert!(f.location.unwrap().contains("misbehave.py:16 in target"));
    assert_eq!(ex.run(b"calm").unwrap().stderr.total(), 0);
}

#[test]
fn unloadable_targets_are_clear_errors() {
    if !have_coverage() {
        return;
    }
    let e = PythonExecutor::new(
        PythonTarget::new("no_such_module_xyz:f"),
        Limits::default(),
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("no_such_module_xyz"), "{e}");
    let e = PythonExecutor::new(
        PythonTarget::new("json:no_such_function"),
        Limits::default(),
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("no_such_function"), "{e}");
    let mut missing = PythonTarget::new("json:loads");
    missing.python = "/no/such/python3".into();
    let e = PythonExecutor::new(missing, Limits::default(), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("/no/such/python3"), "{e}");
}

fn hostile(file: &str) -> String {
    harness(&format!("hostile/{file}"), "target")
}

/// Starting a runner that dies or stalls before its ready message is a clear error,
/// within the start-up timeout (it used to wait forever).
#[test]
fn runners_that_die_or_stall_at_start_are_clear_errors() {
    if !have_coverage() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let start = |mut target: PythonTarget, memory_mb: Option<u64>| {
        target.start_timeout = Duration::from_secs(3);
        let limits = Limits {
            timeout: Duration::from_millis(1000),
            memory_mb,
        };
        let began = std::time::Instant::now();
        let e = PythonExecutor::new(target, limits, Some(dir.path()))
            .err()
            .expect("the runner must not start")
            .to_string();
        // Generous: the start-up limit is 3 s; a loaded machine may add some.
        assert!(began.elapsed() < Duration::from_secs(30), "{e}");
        e
    };
    let mut t = PythonTarget::new("json:loads");
    t.python = "/bin/true".into();
    let e = start(t, None);
    assert!(
        e.contains("/bin/true") && e.contains("exited with code 0 before it was ready"),
        "{e}"
    );
    let wrapper = dir.path().join("python-wrapper");
    std::fs::write(&wrapper, "#!/bin/sh\necho wrapper failed >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut t = PythonTarget::new("json:loads");
    t.python = wrapper.clone();
    let e = start(t, None);
    assert!(
        e.contains("exited with code 1") && e.contains("wrapper failed"),
        "{e}"
    );
    let e = start(PythonTarget::new("json:loads"), Some(20));
    assert!(e.contains("memory limit of 20 MiB"), "{e}");
    let e = start(PythonTarget::new(hostile("loop_at_import.py")), None);
    assert!(e.contains("was not ready within 3 s"), "{e}");
    let e = start(PythonTarget::new(hostile("exit_at_import.py")), None);
    assert!(
        e.contains("exited with code 5") && e.contains("exit_at_import.py:4"),
        "{e}"
    );
    // Nothing is left behind in the work folder.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".thicket-exec-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A target that closes the runner's descriptors, ends the interpreter or recurses
/// without end: each is reported as what it is, located in the target.
#[test]
fn hostile_targets_are_reported_in_the_target() {
    if !have_coverage() {
        return;
    }
    let mut ex = executor("hostile/hostile.py", &["*/hostile.py"], true, 5000);
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    // Closing fds 3 and 4 (at import and in a call) does not cut the protocol; the
    // second close fails in the target (they were closed at import), where it is
    // reported.
    let o = ex.run(b"CLOSE").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(f.kind.label(), "python OSError");
    assert!(
        f.location
            .as_deref()
            .unwrap()
            .contains("hostile.py:24 in target"),
        "{f:?}"
    );
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    assert_eq!(ex.starts(), 1);
    // os._exit(3) in a call is a failure, located where it was called.
    let o = ex.run(b"EXIT").unwrap();
    let f = Classifier::default()
        .classify(&o)
        .expect("os._exit is reported");
    assert_eq!(f.kind, FailureKind::Exit { code: 3 });
    assert!(
        f.location
            .as_deref()
            .unwrap()
            .contains("hostile.py:20 in target"),
        "{f:?}"
    );
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    // A RecursionError is located in the target, not in coverage.py.
    let o = ex.run(b"RECURSE").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(f.kind.label(), "python RecursionError");
    assert!(
        {
            let l = f.location.as_deref().unwrap();
            l.contains("hostile/hostile.py:1") && l.ends_with(" in recurse")
        },
        "{f:?}"
    );
    // Children the target forks do not speak for it; daemons it leaves are ended.
    let marker = format!("{}.{}", 900 + std::process::id() % 100, std::process::id());
    for _ in 0..5 {
        let o = ex.run(format!("ORPHAN {marker}").as_bytes()).unwrap();
        assert!(Classifier::default().classify(&o).is_none(), "{o:?}");
    }
    assert_eq!(ex.starts(), 2, "the runner survived its children");
    // Cutting every descriptor is an executor error naming the cause, not an
    // exception in the runner's code; the next input gets a fresh runner.
    let e = ex.run(b"CUT").unwrap_err().to_string();
    assert!(e.contains("cut the runner's pipe"), "{e}");
    assert_eq!(ex.run(b"calm").unwrap().status, Status::Exited(0));
    drop(ex);
    let mut left = usize::MAX;
    for _ in 0..50 {
        left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                String::from_utf8_lossy(&cmd).contains(&marker)
                    && !stat
                        .rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
            })
            .count();
        if left == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(left, 0, "daemons of the target still running");
}

/// Analysing a newly imported source file is set-up work: it does not count against the
/// input's time, and a restarted runner does not repeat it.
#[test]
fn analysis_of_new_files_is_not_a_hang_and_is_not_repeated() {
    if !have_coverage() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut big = String::from("def f(n):\n    if n > 3:\n        return n + 1\n    return n\n");
    for _ in 0..150_000 {
        big.push_str("# a comment line that coverage.py must tokenize\n");
    }
    std::fs::write(dir.path().join("big_module.py"), big).unwrap();
    let harness_src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/targets/py/hostile/lazy_import.py");
    let lazy = dir.path().join("lazy_import.py");
    std::fs::copy(harness_src, &lazy).unwrap();
    let mut target = PythonTarget::new(format!("{}:target", lazy.display()));
    target.bytes = true;
    let limits = Limits {
        timeout: Duration::from_millis(1000),
        memory_mb: None,
    };
    let mut ex = PythonExecutor::new(target, limits, None).unwrap();
    let o = ex.run(b"abcd").unwrap();
    assert_eq!(
        o.status,
        Status::Exited(0),
        "analysis counted as the input's time"
    );
    let analysed = ex.files_analysed();
    assert!(analysed >= 2, "{analysed}");
    let mut set = CoverageSet::new();
    assert!(add(&mut set, &ex).new_lines >= 2);
    // A hang restarts the runner; the new one analyses nothing again.
    let o = ex.run(b"HANG").unwrap();
    assert_eq!(o.status, Status::Timeout);
    let o = ex.run(b"abcdefgh").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    assert_eq!(ex.starts(), 2);
    assert_eq!(ex.files_analysed(), analysed, "the new runner re-analysed");
    assert!(!add(&mut set, &ex).is_new() || ex.files_analysed() == analysed);
}

/// Named locations (CODEINE's per-location coverage): the functions and lines of the
/// running example's evaluator, its target function only for a parenthesised
/// subtraction inside a product.
#[test]
fn named_locations_are_the_functions_and_lines_a_run_entered() {
    if !have_coverage() {
        return;
    }
    let evaluator = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../eval/targets/expr_eval.py")
        .canonicalize()
        .unwrap();
    let target = PythonTarget::new(format!("{}:evaluate", evaluator.display()));
    let mut ex = PythonExecutor::new(target, Limits::default(), None).unwrap();
    let names = |ex: &PythonExecutor| {
        let mut out = Vec::new();
        assert!(ex.covered_locations(&mut out));
        out.iter().map(|l| l.to_string()).collect::<Vec<_>>()
    };
    ex.run(b"2*(3-1)").unwrap();
    let hit = names(&ex);
    let file = evaluator.display().to_string();
    assert!(
        hit.contains(&format!("function {file}:paren_subtraction_in_product")),
        "{hit:?}"
    );
    assert!(hit.contains(&format!("function {file}:Parser.unary_expr")));
    assert!(hit.iter().any(|l| l.starts_with(&format!("line {file}:"))));
    ex.run(b"2*(3+1)").unwrap();
    let miss = names(&ex);
    assert!(
        !miss
            .iter()
            .any(|l| l.ends_with(":paren_subtraction_in_product")),
        "{miss:?}"
    );
    assert!(miss.contains(&format!("function {file}:product")));
    // An executor without names says so.
    let plain = thicket_exec::PlainExecutor::new(
        thicket_exec::Target::new(&["true".into()], None).unwrap(),
        Limits::default(),
        None,
    )
    .unwrap();
    assert!(!plain.covered_locations(&mut Vec::new()));
}
