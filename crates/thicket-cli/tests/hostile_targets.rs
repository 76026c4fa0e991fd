//! Hostile targets that were once handled badly (a daemon holding the output, Java hangs
//! over the limit, a parser's rejections reported as crashes, parallel campaigns without
//! a stats.json): each is kept here so that it stays handled.

mod common;
use common::{repo, text, thicket};
use std::time::{Duration, Instant};

/// A target that leaves a daemon holding its stdout (a `setsid` child with the pipes
/// inherited) ends when it ends: no run waits for the time limit or counts as a hang, and
/// the user is told once why.
#[test]
fn a_daemon_holding_the_output_is_no_hang_and_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    for i in 0..4 {
        std::fs::write(inputs.join(format!("{i}.json")), format!("[{i}]")).unwrap();
    }
    // The target waits until its daemon has a session of its own, then exits.
    let ready = dir.path().join("ready");
    let script = format!(
        "setsid sh -c 'touch {r}; exec sleep 30' & while [ ! -e {r} ]; do sleep 0.01; done; \
         rm {r}; cat; exit 0",
        r = ready.display()
    );
    let started = Instant::now();
    let out = thicket(&[
        "coverage",
        &repo("specs/json.fan"),
        inputs.to_str().unwrap(),
        "--timeout",
        "10000",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Runs that waited for the daemon would take the time limit each: 40 s.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the runs waited for the daemon: {:?}",
        started.elapsed()
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["hangs"], 0, "{report}");
    assert_eq!(report["held_output_runs"], 4, "{report}");
    assert_eq!(
        stderr
            .matches("the target left a process holding its output open")
            .count(),
        1,
        "{stderr}"
    );
}

/// A small key=value parser (in the repository) with its own error type, deriving from
/// ValueError, and one bug.
fn kv_parser() -> String {
    format!(
        "{}:parse",
        repo("crates/thicket-exec/tests/targets/py/kv_parser.py")
    )
}

const KV_SPEC: &str = "<start> ::= <line> (\"\\n\" <line>)*\n\
<line> ::= <key> \"=\" <value> | <key> | \"#\" <key>\n\
<key> ::= (\"a\" | \"b\" | \"c\")*\n\
<value> ::= <key> | \"[\" <key> (\",\" <key>)* \"]\" | \"[\" <key>\n";

/// A parser's rejections of invalid input (its own error type, raised at several
/// places) are told apart from its real crash: named as likely rejections, with the
/// option that sets them aside, and the crash listed on its own.
#[test]
fn a_parsers_own_error_type_is_reported_as_likely_rejections() {
    if !common::have_coverage("the likely-rejection test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("kv.fan");
    std::fs::write(&spec, KV_SPEC).unwrap();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let texts = [
        "a", "b", "=1", "=2", "a=1\na=2", "b=1\nb=3", "a=[x", "b=[y", "c", "a=[]", "a=1",
    ];
    for (i, t) in texts.iter().enumerate() {
        std::fs::write(inputs.join(format!("{i:02}")), t).unwrap();
    }
    let run = |format: &str| {
        thicket(&[
            "coverage",
            spec.to_str().unwrap(),
            inputs.to_str().unwrap(),
            "--python",
            &kv_parser(),
            "--format",
            format,
        ])
    };
    let out = run("json");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &report["likely_rejection"];
    assert_eq!(r["class"], "thicket_target.ParseError", "{report}");
    assert_eq!(r["reason"], "own_error_type", "{report}");
    assert_eq!(r["distinct_failures"], 4, "{report}");
    assert_eq!(r["runs"], 9, "{report}");
    assert_eq!(r["failing_runs"], 10, "{report}");
    let out = run("text");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("failure python IndexError @"), "{stdout}");
    assert!(
        stdout.contains("thicket_target.ParseError: 4 distinct (9 runs), likely rejections"),
        "{stdout}"
    );
    assert!(
        stderr.contains("--expected-exception thicket_target.ParseError"),
        "{stderr}"
    );

    // A campaign says it too, in its summary and stats.json.
    let out_dir = dir.path().join("out");
    let out = thicket(&[
        "fuzz",
        spec.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--seed",
        "1",
        "--execs",
        "300",
        "--python",
        &kv_parser(),
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["target_package"], "thicket_target", "{stats}");
    assert_eq!(
        stats["likely_rejection"]["class"], "thicket_target.ParseError",
        "{stats}"
    );
    assert!(
        stats["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["class"] == "thicket_target.ParseError"),
        "{stats}"
    );
    assert!(
        stderr.contains("likely rejections")
            && stderr.contains("--expected-exception thicket_target.ParseError"),
        "{stderr}"
    );
    // With the option, they are no failures; the bug still is, if the campaign met it.
    let out_dir = dir.path().join("out2");
    let out = thicket(&[
        "fuzz",
        spec.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--seed",
        "1",
        "--execs",
        "300",
        "--python",
        &kv_parser(),
        "--expected-exception",
        "thicket_target.ParseError",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("stats.json")).unwrap())
            .unwrap();
    assert!(stats["likely_rejection"].is_null(), "{stats}");
    assert!(
        stats["failures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["class"] != "thicket_target.ParseError"),
        "{stats}"
    );
}

/// `fuzz -j 2` writes the workers' figures combined into OUT/stats.json, in the fields
/// of a campaign's, so that a script reading OUT/stats.json finds them; a campaign
/// without -j does not take that folder for its own.
#[test]
fn parallel_campaigns_write_combined_figures_to_out() {
    if !common::have_coverage("the parallel stats test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("kv.fan");
    std::fs::write(&spec, KV_SPEC).unwrap();
    let out_dir = dir.path().join("out");
    let fuzz = |extra: &[&str]| {
        let mut args = vec![
            "fuzz",
            spec.to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
            "--seed",
            "3",
            "--execs",
            "150",
        ];
        args.extend_from_slice(extra);
        let target = kv_parser();
        args.extend(["--python", &target]);
        thicket(&args)
    };
    let out = fuzz(&["-j", "2"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let read = |path: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path.join("stats.json")).unwrap()).unwrap()
    };
    let all = read(&out_dir);
    let workers = [
        read(&out_dir.join("worker-0")),
        read(&out_dir.join("worker-1")),
    ];
    assert_eq!(all["execs"], 300, "{all}");
    assert_eq!(all["seed"], 3, "{all}");
    assert_eq!(all["workers"].as_array().unwrap().len(), 2, "{all}");
    assert_eq!(all["workers"][1]["seed"], 4, "{all}");
    let sum = |field: &str| -> u64 { workers.iter().map(|w| w[field].as_u64().unwrap()).sum() };
    assert_eq!(all["failing_runs"], sum("failing_runs"), "{all}");
    // Every field of a campaign's stats.json is there.
    for key in workers[0].as_object().unwrap().keys() {
        assert!(all.get(key).is_some(), "{key} missing from {all}");
    }
    let failures = all["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "{all}");
    for f in failures {
        let file = f["file"].as_str().unwrap();
        assert!(out_dir.join(file).is_file(), "{file}");
    }
    assert_eq!(
        all["distinct_failures"].as_u64().unwrap() as usize,
        failures.iter().filter(|f| f["kind"] != "hang").count()
    );
    assert_eq!(
        all["likely_rejection"]["class"], "thicket_target.ParseError",
        "{all}"
    );
    assert!(stderr.contains("all 2 workers: 300 execs"), "{stderr}");
    // The combined file is no campaign to resume without -j.
    let out = fuzz(&["--resume"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("-j"), "{}", text(&out.stderr));
}
