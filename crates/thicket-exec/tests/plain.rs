//! The plain executor on ordinary programs.

use std::ffi::OsString;
use std::time::Duration;
use thicket_exec::{Classifier, Executor, InputMode, Limits, PlainExecutor, Status, Target};

fn plain(args: &[&str], mode: Option<InputMode>, timeout_ms: u64) -> PlainExecutor {
    let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    let target = Target::new(&argv, mode).unwrap();
    let limits = Limits {
        timeout: Duration::from_millis(timeout_ms),
        memory_mb: None,
    };
    PlainExecutor::new(target, limits, None).unwrap()
}

#[test]
fn stdin_file_and_argument_delivery() {
    let mut cat = plain(&["cat"], None, 5000);
    let o = cat.run(b"via stdin").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    assert_eq!(o.stdout.text(), "via stdin");
    assert!(o.peak_rss_kb.unwrap() > 0);
    let mut cat = plain(&["cat", "@@"], None, 5000);
    assert_eq!(cat.run(b"via a file").unwrap().stdout.text(), "via a file");
    let mut echo = plain(&["echo", "-n", "<@@>"], Some(InputMode::Arg), 5000);
    assert_eq!(
        echo.run(b"an argument").unwrap().stdout.text(),
        "<an argument>"
    );
}

#[test]
fn timeouts_kill_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let mut sh = plain(&["sh", "-c", &script], None, 300);
    let o = sh.run(b"").unwrap();
    assert_eq!(o.status, Status::Timeout);
    assert!(Classifier::default().classify(&o).unwrap().is_hang());
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The background sleep was in the group and is gone (perhaps a zombie for a moment
    // until init reaps it, so look at its state rather than its existence).
    let gone = (0..100).any(|_| {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let dead = state.is_empty() || state.split_whitespace().nth(2) == Some("Z");
        if !dead {
            std::thread::sleep(Duration::from_millis(20));
        }
        dead
    });
    assert!(gone, "the grandchild {pid} survived the timeout");
}

#[test]
fn megabytes_of_output_are_bounded() {
    let mut sh = plain(
        &[
            "sh",
            "-c",
            "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo tail >&2",
        ],
        None,
        20_000,
    );
    let o = sh.run(b"").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    assert_eq!(o.stdout.total(), 20_000_001);
    assert_eq!(o.stdout.bytes().len(), thicket_exec::outcome::TAIL_BYTES);
    assert_eq!(o.stderr.text(), "tail\n");
}

#[test]
fn python_scripts_tracebacks_and_memory_limits() {
    let mut py = plain(
        &[
            "python3",
            "-c",
            "import json, sys; json.loads(sys.stdin.read())",
        ],
        None,
        10_000,
    );
    let o = py.run(b"[1,").unwrap();
    assert_eq!(o.status, Status::Exited(1));
    let f = Classifier::default().classify(&o).unwrap();
    assert_eq!(f.kind.label(), "python json.decoder.JSONDecodeError");
    assert!(f.location.unwrap().contains("json/decoder.py"));
    assert!(
        Classifier::default()
            .classify(&py.run(b"[1]").unwrap())
            .is_none()
    );
    let argv: Vec<OsString> = ["python3", "-c", "x = bytearray(600 << 20)"]
        .iter()
        .map(OsString::from)
        .collect();
    let limits = Limits {
        timeout: Duration::from_secs(10),
        memory_mb: Some(200),
    };
    let mut hog = PlainExecutor::new(Target::new(&argv, None).unwrap(), limits, None).unwrap();
    let f = Classifier::default()
        .classify(&hog.run(b"").unwrap())
        .unwrap();
    assert_eq!(f.kind.label(), "python MemoryError");
}

#[test]
fn crashes_by_signal() {
    let mut sh = plain(&["sh", "-c", "kill -SEGV $$"], None, 5000);
    let o = sh.run(b"").unwrap();
    assert_eq!(o.status, Status::Signaled(libc::SIGSEGV));
    assert_eq!(
        Classifier::default().classify(&o).unwrap().kind.label(),
        "crash SIGSEGV"
    );
}

/// Processes with `marker` on their command line.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(marker)
        {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // Zombies are gone for every purpose but their table entry.
            if !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
            {
                found.push(name);
            }
        }
    }
    found
}

/// A target that starts a daemon of its own (`setsid`, out of the process group that a
/// timeout kills) leaves nothing running: thicket reaps what its targets abandon.
#[test]
fn daemons_a_target_leaves_behind_are_ended() {
    let marker = format!("{}.{}", 700 + std::process::id() % 100, std::process::id());
    let script = format!("setsid sleep {marker} >/dev/null 2>&1 < /dev/null & exit 0");
    let mut sh = plain(&["sh", "-c", &script], None, 5000);
    for _ in 0..20 {
        assert_eq!(sh.run(b"").unwrap().status, Status::Exited(0));
    }
    // Sweeps run at most every 20 ms; the executor's end sweeps for good.
    drop(sh);
    let mut left = processes_with(&marker);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "orphans still running: {left:?}");
}

/// A program that leaves a daemon holding its stdout (out of its process group, with
/// the pipes inherited) ends when the program ends: its output is kept, the run is no
/// hang, it does not wait for the daemon, and the executor counts such runs.
#[test]
fn a_daemon_holding_the_output_does_not_hold_the_run() {
    // The program waits until the daemon is in a session of its own.
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!(
        "setsid sh -c 'touch {r}; exec sleep 30' & while [ ! -e {r} ]; do sleep 0.01; done; \
         rm {r}; echo before; echo after >&2; exit 0",
        r = ready.display()
    );
    let mut sh = plain(&["sh", "-c", &script], None, 10_000);
    let started = std::time::Instant::now();
    for _ in 0..3 {
        let o = sh.run(b"").unwrap();
        assert_eq!(o.status, Status::Exited(0));
        assert_eq!(o.stdout.text(), "before\n");
        assert_eq!(o.stderr.text(), "after\n");
        assert!(Classifier::default().classify(&o).is_none());
    }
    // Three runs that waited for the daemon would take 30 s (the time limit each).
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "the runs waited for the daemon: {:?}",
        started.elapsed()
    );
    assert_eq!(sh.held_output_runs(), 3);
    // An ordinary program holds nothing.
    let mut echo = plain(&["sh", "-c", "echo ok; sleep 0 & exit 0"], None, 10_000);
    assert_eq!(echo.run(b"").unwrap().stdout.text(), "ok\n");
    assert_eq!(echo.held_output_runs(), 0);
}
