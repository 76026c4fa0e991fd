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
