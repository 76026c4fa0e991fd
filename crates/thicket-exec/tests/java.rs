//! The Java executor: JaCoCo coverage against a fresh JVM per input (on gson), failures
//! (throw, loop, System.exit, heap exhaustion, floods of output) and target errors.

use std::path::{Path, PathBuf};
use std::time::Duration;
use thicket_exec::java::JACOCO_JARS;
use thicket_exec::{
    Classifier, CoverageSet, ExecError, Executor, FailureKind, JavaExecutor, JavaTarget, Limits,
    Status, Trace,
};

const JARS: &str = "/usr/share/java";

/// Whether java, javac, JaCoCo's jars and gson are here; with `THICKET_REQUIRE_JAVA=1`
/// (set by CI) their absence fails the test.
fn have_java() -> bool {
    let tool = |name: &str| {
        std::process::Command::new(name)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut missing: Vec<String> = ["java", "javac"]
        .into_iter()
        .filter(|t| !tool(t))
        .map(str::to_string)
        .collect();
    for jar in JACOCO_JARS.iter().chain(&["gson.jar"]) {
        if !Path::new(JARS).join(jar).exists() {
            missing.push(format!("{JARS}/{jar}"));
        }
    }
    if missing.is_empty() {
        return true;
    }
    if std::env::var_os("THICKET_REQUIRE_JAVA").is_some_and(|v| v == "1") {
        panic!("missing {} but THICKET_REQUIRE_JAVA=1", missing.join(", "));
    }
    eprintln!(
        "\n*** SKIPPED: missing {} (apt-get install default-jdk-headless libjacoco-java \
         libgoogle-gson-java) ***\n",
        missing.join(", ")
    );
    false
}

/// The harness is cached under the target folder, not in the user's home.
fn target(method: &str, classpath: Vec<PathBuf>) -> JavaTarget {
    let mut t = JavaTarget::new(method, classpath);
    t.cache_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("thicket-cache");
    t
}

fn limits(timeout_ms: u64, memory_mb: Option<u64>) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        memory_mb,
    }
}

/// tests/targets/java/Targets.java, compiled once per test process.
fn targets_classes() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("java-targets-{}", std::process::id()));
        let source =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/targets/java/Targets.java");
        let status = std::process::Command::new("javac")
            .args(["--release", "11", "-d"])
            .arg(&out)
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success());
        out
    })
    .clone()
}

fn names(ex: &JavaExecutor) -> (Vec<String>, Vec<String>) {
    match ex.trace() {
        Trace::Java(t) => (t.method_names(), t.line_names()),
        other => panic!("not a Java trace: {other:?}"),
    }
}

#[test]
fn gson_coverage_equals_jacoco_in_a_fresh_jvm() {
    if !have_java() {
        return;
    }
    let t = target(
        "com.google.gson.JsonParser.parseString",
        vec![Path::new(JARS).join("gson.jar")],
    );
    let mut ex = JavaExecutor::new(t, limits(5000, None), None).unwrap();
    assert!(ex.wants_text());
    let inputs: [&[u8]; 4] = [
        br#"{"a": [1, 2.5e3, true, null, "x\u00e9"]}"#,
        b"[1,",
        br#"{"b": {"c": []}, "d": -0}"#,
        b"\"plain\"",
    ];
    let mut set = CoverageSet::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let outcome = ex.run(input).unwrap();
        let (methods, lines) = names(&ex);
        let novelty = set.add(&ex.trace());
        let fresh = ex.run_fresh(input, true).unwrap();
        assert_eq!(
            outcome.exception.as_ref().map(|e| e.class.clone()),
            fresh.exception,
            "input {i}"
        );
        assert!(methods.len() > 10, "input {i}: {methods:?}");
        if i == 0 {
            // The first call of a JVM runs exactly what a fresh JVM runs.
            assert_eq!(methods, fresh.methods, "input {i}");
            assert_eq!(lines, fresh.lines, "input {i}");
            assert!(
                novelty.new_methods > 10 && novelty.new_lines > 50,
                "{novelty:?}"
            );
        } else {
            // Later calls skip only what runs once per JVM (static initialisers and
            // what they call), which earlier calls of this JVM ran.
            let missing: Vec<&String> = fresh
                .methods
                .iter()
                .filter(|m| !methods.contains(m))
                .collect();
            assert!(
                missing.iter().all(|m| seen.contains(m)),
                "input {i}: {missing:?}"
            );
            assert!(
                missing.is_empty() || missing.iter().any(|m| m.contains(".<clinit>(")),
                "input {i}: {missing:?}"
            );
            assert!(
                methods.iter().all(|m| fresh.methods.contains(m)),
                "input {i}: {methods:?} vs {:?}",
                fresh.methods
            );
            assert!(lines.iter().all(|l| fresh.lines.contains(l)), "input {i}");
        }
        seen.extend(methods);
    }
    // Invalid JSON: gson's exception, located in gson.
    let o = ex.run(b"[1,").unwrap();
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(
        f.kind,
        FailureKind::Exception {
            language: "java".into(),
            class: "com.google.gson.JsonSyntaxException".into()
        }
    );
    assert!(
        f.location
            .as_deref()
            .unwrap()
            .starts_with("com.google.gson."),
        "{f:?}"
    );
    // The same input again adds nothing; the summary names gson's files.
    ex.run(inputs[0]).unwrap();
    assert!(!set.add(&ex.trace()).is_new());
    let summary = set.summary(None);
    assert_eq!(summary.kind, thicket_exec::CoverageKind::Java);
    assert!(
        summary.methods.unwrap() > 50
            && summary.method_total.unwrap() > summary.methods.unwrap() as u64
    );
    assert!(
        summary
            .files
            .iter()
            .any(|f| f.path == "com/google/gson/stream/JsonReader.java" && f.lines > 100)
    );
    assert_eq!(ex.starts(), 1);
}

#[test]
fn throw_loop_exit_heap_and_output_are_reported_and_the_next_input_runs() {
    if !have_java() {
        return;
    }
    let t = target("targets.Targets.run", vec![targets_classes()]);
    let mut ex = JavaExecutor::new(t, limits(1500, Some(128)), None).unwrap();
    let classifier = Classifier::default();
    let ok = |ex: &mut JavaExecutor| {
        let o = ex.run(b"12ab3").unwrap();
        assert_eq!(o.status, Status::Exited(0));
        assert!(o.exception.is_none(), "{o:?}");
        let (methods, _) = names(ex);
        assert!(
            methods.contains(&"targets.Targets.count(Ljava/lang/String;)I".to_string()),
            "{methods:?}"
        );
    };
    ok(&mut ex);

    let o = ex.run(b"throw").unwrap();
    let f = classifier.classify(&o).unwrap();
    assert_eq!(f.kind.label(), "java java.lang.IllegalStateException");
    assert_eq!(
        f.location.as_deref(),
        Some("targets.Targets.fail(Targets.java:45)")
    );
    assert!(f.summary.contains("asked to throw"), "{f:?}");
    ok(&mut ex);

    let o = ex.run(b"loop").unwrap();
    assert_eq!(o.status, Status::Timeout);
    assert!(classifier.classify(&o).unwrap().is_hang());
    ok(&mut ex);
    assert_eq!(ex.starts(), 2, "a hang restarts the JVM");

    let o = ex.run(b"exit").unwrap();
    assert_eq!(o.status, Status::Exited(3));
    let f = classifier.classify(&o).unwrap();
    assert_eq!(f.kind, FailureKind::Exit { code: 3 });
    assert_eq!(
        f.location.as_deref(),
        Some("targets.Targets.run(Targets.java:22)")
    );
    ok(&mut ex);
    assert_eq!(ex.starts(), 3);

    let o = ex.run(b"oom").unwrap();
    let f = classifier.classify(&o).unwrap();
    assert_eq!(f.kind.label(), "java java.lang.OutOfMemoryError");
    ok(&mut ex);
    assert_eq!(ex.starts(), 4, "a JVM out of heap is replaced");

    // 10 MB of output: at most 1 MiB reaches the file, all of it is counted, the tail
    // is kept.
    let o = ex.run(b"chatty").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    assert_eq!(o.stderr.total(), 100_000 * 101 + "the end\n".len() as u64);
    assert!(o.stderr.bytes().len() <= thicket_exec::outcome::TAIL_BYTES);
    ok(&mut ex);
    assert_eq!(ex.starts(), 4);
}

/// A loop in the first call of a fresh JVM is a hang after about the limit, not after
/// the ten seconds a first call may take to set up; a first call that loads classes
/// past the limit (gson's) is no hang.
#[test]
fn a_fresh_jvm_hangs_after_about_the_limit() {
    if !have_java() {
        return;
    }
    let t = target("targets.Targets.run", vec![targets_classes()]);
    let mut ex = JavaExecutor::new(t, limits(500, None), None).unwrap();
    for round in 0..2 {
        let started = std::time::Instant::now();
        let o = ex.run(b"loop").unwrap();
        assert_eq!(o.status, Status::Timeout, "round {round}: {o:?}");
        // The first call may take 10 s to set up; a loop loads nothing.
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "round {round}: the hang took {:?}",
            started.elapsed()
        );
    }
    let o = ex.run(b"12ab3").unwrap();
    assert_eq!(o.status, Status::Exited(0), "{o:?}");
    assert_eq!(ex.starts(), 3, "each hang restarts the JVM");

    let t = target(
        "com.google.gson.JsonParser.parseString",
        vec![Path::new(JARS).join("gson.jar")],
    );
    let mut ex = JavaExecutor::new(t, limits(20, None), None).unwrap();
    let o = ex.run(br#"{"a": [1, 2.5e3, true, null, "x"]}"#).unwrap();
    assert_eq!(o.status, Status::Exited(0), "{o:?}");
    assert!(o.exception.is_none(), "{o:?}");
}

#[test]
fn byte_array_methods_take_raw_bytes() {
    if !have_java() {
        return;
    }
    let t = target("targets.Targets.bytes", vec![targets_classes()]);
    let mut ex = JavaExecutor::new(t, limits(5000, None), None).unwrap();
    assert!(!ex.wants_text());
    assert!(ex.run(b"\xff\x01").unwrap().exception.is_none());
    let o = ex.run(b"\x00").unwrap();
    assert_eq!(
        o.exception.unwrap().class,
        "java.lang.IllegalArgumentException"
    );
}

#[test]
fn bad_targets_are_clear_errors() {
    if !have_java() {
        return;
    }
    let cp = vec![targets_classes()];
    let error = |method: &str| match JavaExecutor::new(
        target(method, cp.clone()),
        limits(1000, None),
        None,
    ) {
        Err(ExecError::Java(message)) => message,
        Err(e) => panic!("{method}: {e}"),
        Ok(_) => panic!("{method}: accepted"),
    };
    let e = error("targets.Missing.run");
    assert!(
        e.contains("class targets.Missing not found on the classpath"),
        "{e}"
    );
    let e = error("targets.Targets.instance");
    assert!(
        e.contains("must be a static method taking one String or byte[]"),
        "{e}"
    );
    assert!(e.contains("non-static"), "{e}");
    let e = error("targets.Targets.number");
    assert!(e.contains("must be a static method"), "{e}");
    let e = error("targets.Targets.nothing");
    assert!(e.contains("has no method named `nothing`"), "{e}");
    let e = error("NoDot");
    assert!(e.contains("is not CLASS.METHOD"), "{e}");
    let mut t = target("targets.Targets.run", cp.clone());
    t.jacoco_dir = PathBuf::from("/nonexistent");
    match JavaExecutor::new(t, limits(1000, None), None) {
        Err(ExecError::Java(e)) => assert!(e.contains("apt-get install libjacoco-java"), "{e}"),
        _ => panic!("missing JaCoCo accepted"),
    }
    let mut t = target("targets.Targets.run", cp);
    t.java = PathBuf::from("/nonexistent/java");
    match JavaExecutor::new(t, limits(1000, None), None) {
        Err(ExecError::Java(e)) => assert!(e.contains("not found"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("missing java accepted"),
    }
}
