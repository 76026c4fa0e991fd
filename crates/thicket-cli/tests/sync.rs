//! Parallel campaigns: `fuzz -j` and `--sync-dir` with afl-fuzz as a peer.

use std::path::Path;
use std::process::Command;

mod common;
use common::{repo, text, thicket};

/// thicket-exec's JSON-ish scanner built with afl-cc, or `None` (a failure under
/// `THICKET_REQUIRE_AFL=1`).
fn branches(dir: &Path) -> Option<String> {
    common::have_afl(&["afl-cc", "afl-fuzz"]).then(|| common::c_target(dir, "branches", "afl-cc"))
}

fn stats(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap()
}

fn queue_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("queue"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("id:"))
        .collect()
}

#[test]
fn two_thicket_campaigns_and_afl_fuzz_import_each_others_finds() {
    let dir = tempfile::tempdir().unwrap();
    let Some(target) = branches(dir.path()) else {
        return;
    };
    let sync = dir.path().join("sync");
    let spec = repo("specs/json.fan");
    let campaign = |name: &str, execs: &str, resume: bool| {
        let sync = sync.to_str().unwrap();
        let mut args = vec![
            "fuzz",
            &spec,
            "--sync-dir",
            sync,
            "--name",
            name,
            "--seed",
            "1",
            "--execs",
            execs,
            "--sync-every",
            "0s",
        ];
        if resume {
            args.push("--resume");
        }
        args.extend(["--", &target, "@@"]);
        let o = thicket(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    // t1 alone first: its queue is what the others can import.
    campaign("t1", "400", false);
    assert!(queue_names(&sync.join("t1")).len() > 5);
    // afl-fuzz joins as the main instance (AFL++'s secondaries read only from a main)
    // and imports first (AFL_IMPORT_FIRST).
    let seeds = dir.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    std::fs::write(seeds.join("a.json"), r#"{"k": [1, 2]}"#).unwrap();
    let afl = Command::new("afl-fuzz")
        .args(["-M", "afl", "-V", "3", "-i"])
        .arg(&seeds)
        .arg("-o")
        .arg(&sync)
        .args(["--", &target, "@@"])
        .env("AFL_IMPORT_FIRST", "1")
        .env("AFL_NO_UI", "1")
        .env("AFL_NO_AFFINITY", "1")
        .env("AFL_SKIP_CPUFREQ", "1")
        .env("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1")
        .output()
        .unwrap();
    assert!(afl.status.success(), "{}", text(&afl.stderr));
    let afl_queue = queue_names(&sync.join("afl"));
    assert!(
        afl_queue.iter().any(|n| n.contains("sync:t1")),
        "afl-fuzz imported nothing from t1: {afl_queue:?}"
    );
    // t2 reads both before its first round (peers in name order: afl-fuzz's entries,
    // which include t1's, come first, so t1's own add little) and keeps what is new.
    let t1_entries = queue_names(&sync.join("t1")).len() as u64;
    campaign("t2", "300", false);
    let t2 = stats(&sync.join("t2"));
    assert!(t2["imported"].as_u64().unwrap() > 5, "{t2}");
    assert!(t2["sync_execs"].as_u64().unwrap() >= t1_entries, "{t2}");
    let t2_queue = queue_names(&sync.join("t2"));
    assert!(
        t2_queue.iter().any(|n| n.contains("op:sync-afl")),
        "{t2_queue:?}"
    );
    for peer in ["afl", "t1"] {
        assert!(
            sync.join("t2/.synced").join(peer).exists(),
            "t2 did not read {peer}"
        );
    }
    // t1, resumed, reads what afl-fuzz and t2 added since.
    campaign("t1", "500", true);
    let t1 = stats(&sync.join("t1"));
    assert!(t1["sync_execs"].as_u64().unwrap() > 0, "{t1}");
    for peer in ["afl", "t2"] {
        assert!(
            sync.join("t1/.synced").join(peer).exists(),
            "t1 did not read {peer}"
        );
    }
}

#[test]
fn parallel_workers_share_one_folder_and_sum_their_figures() {
    let dir = tempfile::tempdir().unwrap();
    let Some(target) = branches(dir.path()) else {
        return;
    };
    let out = dir.path().join("out");
    let o = thicket(&[
        "fuzz",
        &repo("specs/json.fan"),
        "-o",
        out.to_str().unwrap(),
        "-j",
        "2",
        "--seed",
        "5",
        "--execs",
        "300",
        "--",
        &target,
        "@@",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("all 2 workers: 600 execs"), "{err}");
    for (worker, seed) in [("worker-0", 5), ("worker-1", 6)] {
        let s = stats(&out.join(worker));
        assert_eq!(s["execs"], 300, "{s}");
        assert_eq!(s["seed"], seed, "{s}");
    }
    // Bad values are refused before anything starts.
    let o = thicket(&[
        "fuzz",
        &repo("specs/json.fan"),
        "-o",
        "x",
        "-j",
        "0",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = thicket(&[
        "fuzz",
        &repo("specs/json.fan"),
        "--sync-dir",
        dir.path().to_str().unwrap(),
        "--name",
        "../up",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
