//! `thicket fuzz` and `thicket coverage` on a Java target (gson from Debian's
//! libgoogle-gson-java), and the errors of `--java`.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{BIN, repo, text};

const GSON: &str = "/usr/share/java/gson.jar";

/// Whether java, javac, JaCoCo and gson are here; with `THICKET_REQUIRE_JAVA=1` (set by
/// CI) their absence fails the test.
fn have_java() -> bool {
    let ok = common::have("java")
        && common::have("javac")
        && Path::new("/usr/share/java/org.jacoco.core.jar").exists()
        && Path::new(GSON).exists();
    if !ok {
        assert!(
            std::env::var_os("THICKET_REQUIRE_JAVA").is_none_or(|v| v != "1"),
            "java, javac, libjacoco-java or libgoogle-gson-java is missing but \
             THICKET_REQUIRE_JAVA=1"
        );
        eprintln!("\n*** SKIPPED: no JDK, JaCoCo or gson; Java `thicket` tests did not run ***\n");
    }
    ok
}

/// `thicket ARGS` with the harness cached under the target folder.
fn thicket(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env(
            "THICKET_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("thicket-cache"),
        )
        .output()
        .expect("thicket runs")
}

#[test]
fn fuzz_and_coverage_on_gson_report_methods_lines_and_exceptions() {
    if !have_java() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = repo("specs/json.fan");
    let java = [
        "--java",
        "com.google.gson.JsonParser.parseString",
        "--classpath",
        GSON,
        "--java-includes",
        "com.google.gson.*",
    ];
    let mut args = vec![
        "fuzz",
        &spec,
        "-o",
        out.to_str().unwrap(),
        "--seed",
        "1",
        "--execs",
        "300",
        "--max-depth",
        "8",
    ];
    args.extend_from_slice(&java);
    let o = thicket(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    let coverage = &stats["coverage"];
    assert_eq!(coverage["kind"], "java", "{stats}");
    let methods = coverage["methods"].as_u64().unwrap();
    assert!(methods > 40, "{stats}");
    assert!(coverage["method_total"].as_u64().unwrap() > methods);
    assert!(coverage["lines"].as_u64().unwrap() > 200, "{stats}");
    // Byte mutations make invalid JSON: gson's exception, located inside gson.
    let failures = stats["failures"].as_array().unwrap();
    assert!(
        failures.iter().any(|f| f["key"]
            .as_str()
            .unwrap()
            .starts_with("java com.google.gson.JsonSyntaxException @ com.google.gson.")),
        "{stats}"
    );
    assert!(stats["executor"].as_str().unwrap().contains("JaCoCo"));

    // The kept inputs' coverage, by `thicket coverage`.
    let queue = out.join("queue");
    let mut args = vec![
        "coverage",
        &spec,
        queue.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(&java);
    let o = thicket(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["coverage"]["kind"], "java");
    let reader = report["coverage"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "com/google/gson/stream/JsonReader.java")
        .expect("JsonReader ran");
    assert!(reader["methods"].as_u64().unwrap() > 10, "{reader}");
    assert!(reader["lines"].as_u64().unwrap() > 100, "{reader}");
}

#[test]
fn java_target_errors_are_clear() {
    if !have_java() {
        return;
    }
    let spec = repo("specs/json.fan");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.json");
    std::fs::write(&input, "[1]").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["coverage", &spec, input.to_str().unwrap()];
        args.extend_from_slice(extra);
        thicket(&args)
    };
    let o = run(&["--java", "com.google.gson.Nope.parse", "--classpath", GSON]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("class com.google.gson.Nope not found on the classpath"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["--java", "com.google.gson.Gson.toJson", "--classpath", GSON]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("must be a static method taking one String or byte[]"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["--java", "a.B.c", "--classpath", "/nonexistent.jar"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("/nonexistent.jar does not exist"));
    let o = run(&["--java", "a.B.c", "--", "./prog"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// eval/java/Subjects.java compiles against Debian's jars and each adapter runs a valid
/// input without an exception (measuring one small class each, to stay quick).
#[test]
fn every_eval_subject_runs_a_valid_input() {
    if !have_java() {
        return;
    }
    let jars = [
        "gson",
        "jackson-core",
        "jackson-databind",
        "jackson-annotations",
        "json-simple",
        "js",
        "cssparser",
        "sac",
        "commons-csv",
    ];
    let missing: Vec<&str> = jars
        .iter()
        .copied()
        .filter(|j| !Path::new(&format!("/usr/share/java/{j}.jar")).exists())
        .collect();
    if !missing.is_empty() {
        assert!(
            std::env::var_os("THICKET_REQUIRE_JAVA").is_none_or(|v| v != "1"),
            "subject jars {missing:?} are missing but THICKET_REQUIRE_JAVA=1"
        );
        eprintln!("\n*** SKIPPED: subject jars {missing:?} missing (see eval/java/build.sh) ***\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    let libs: Vec<String> = jars
        .iter()
        .map(|j| format!("/usr/share/java/{j}.jar"))
        .collect();
    let status = Command::new("javac")
        .args(["--release", "11", "-nowarn", "-cp", &libs.join(":"), "-d"])
        .arg(&classes)
        .arg(repo("eval/java/Subjects.java"))
        .status()
        .unwrap();
    assert!(status.success());
    let cp = format!("{}:{}", classes.display(), libs.join(":"));
    for (method, input, include) in [
        (
            "gson",
            r#"{"a": [1, true]}"#,
            "com.google.gson.stream.JsonReader",
        ),
        (
            "jacksonCore",
            r#"{"a": [1, true]}"#,
            "com.fasterxml.jackson.core.json.ReaderBasedJsonParser",
        ),
        (
            "jackson",
            r#"{"a": [1, true]}"#,
            "com.fasterxml.jackson.databind.ObjectMapper",
        ),
        (
            "jsonSimple",
            r#"{"a": [1, true]}"#,
            "org.json.simple.parser.JSONParser",
        ),
        (
            "rhino",
            "var x = [1, 2].map(function (a) { return a * 2; });",
            "org.mozilla.javascript.TokenStream",
        ),
        (
            "cssparser",
            "a { color: red; }",
            "com.steadystate.css.parser.CSSOMParser",
        ),
        (
            "commonsCsv",
            "a,b\n1,\"2\"\n",
            "org.apache.commons.csv.CSVParser",
        ),
    ] {
        let file = dir.path().join(format!("{method}.txt"));
        std::fs::write(&file, input).unwrap();
        let o = thicket(&[
            "coverage",
            &repo("specs/json.fan"),
            file.to_str().unwrap(),
            "--format",
            "json",
            "--java",
            &format!("thicket.subjects.Subjects.{method}"),
            "--classpath",
            &cp,
            "--java-includes",
            include,
            "--timeout",
            "10000",
        ]);
        assert!(o.status.success(), "{method}: {}", text(&o.stderr));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["failing_runs"], 0, "{method}: {report}");
        assert!(
            report["coverage"]["methods"].as_u64().unwrap() > 0,
            "{method}: {report}"
        );
    }
}

/// A Java target that loops is a hang after about `--timeout`, in every fresh JVM too
/// (not after the ten seconds a first call may take to set up), so a campaign's `--time`
/// holds and it finds more than one.
#[test]
fn java_hangs_are_found_after_about_the_timeout() {
    if !have_java() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    let status = Command::new("javac")
        .args(["--release", "11", "-d"])
        .arg(&classes)
        .arg(repo("crates/thicket-exec/tests/targets/java/Targets.java"))
        .status()
        .unwrap();
    assert!(status.success());
    let spec = dir.path().join("loop.fan");
    std::fs::write(&spec, "<start> ::= \"loop\"\n").unwrap();
    let out_dir = dir.path().join("out");
    let out = thicket(&[
        "fuzz",
        spec.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--seed",
        "1",
        "--time",
        "6s",
        "--timeout",
        "300",
        "--java",
        "targets.Targets.run",
        "--classpath",
        classes.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["hang_files"], 1, "{stats}");
    assert!(stats["hanging_runs"].as_u64().unwrap() >= 2, "{stats}");
    // A hang found after ten seconds, confirmed after ten more, overran --time by 14 s.
    let elapsed = stats["elapsed_s"].as_f64().unwrap();
    assert!(
        elapsed < 12.0,
        "the campaign of 6 s took {elapsed} s: {stats}"
    );
}
