//! The forkserver executor on real afl-cc targets (and on a stand-in for AFL++ 4.20+).

mod common;

use common::{afl_target, argv, plain_target};
use std::time::Duration;
use thicket_exec::{
    Classifier, CoverageSet, Executor, FailureKind, ForkserverExecutor, Handshake, Limits, Mode,
    Status, Target, Trace,
};

fn limits(ms: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(ms),
        memory_mb: None,
    }
}

fn edges(executor: &dyn Executor) -> Vec<u8> {
    match executor.trace() {
        Trace::Edges(map) => map.to_vec(),
        other => panic!("expected an edge map, got {other:?}"),
    }
}

#[test]
fn debian_handshake_and_input_dependent_edges() {
    let Some(program) = afl_target("branches") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    assert_eq!(
        fs.handshake(),
        Handshake::Classic,
        "Debian ships AFL++ 4.04c"
    );
    assert!(
        fs.map_size() > 10 && fs.map_size() < 65536,
        "{}",
        fs.map_size()
    );
    let mut set = CoverageSet::new();
    let run = |fs: &mut ForkserverExecutor, input: &[u8]| {
        let outcome = fs.run(input).unwrap();
        (outcome, edges(fs))
    };
    let (o1, e1) = run(&mut fs, b"[1, 2, {\"a\": true}]");
    assert_eq!(o1.status, Status::Exited(0));
    assert!(
        o1.stdout.text().starts_with("2 1 2 1 0"),
        "{:?}",
        o1.stdout.text()
    );
    let first = set.add(&Trace::Edges(&e1));
    assert!(first.new_edges > 5, "{first:?}");
    let (_, e1b) = run(&mut fs, b"[1, 2, {\"a\": true}]");
    assert_eq!(e1, e1b, "the same input takes the same edges");
    assert!(!set.add(&Trace::Edges(&e1b)).is_new());
    let (o2, e2) = run(&mut fs, b"\"esc\\u0041\" [[[[-1.5e3]]]]");
    assert_eq!(o2.status, Status::Exited(0));
    assert_ne!(e1, e2);
    assert!(set.add(&Trace::Edges(&e2)).new_edges > 0);
    let (o3, _) = run(&mut fs, b"}");
    assert_eq!(o3.status, Status::Exited(1));
    // Nothing but an exit code: no failure.
    assert!(Classifier::default().classify(&o3).is_none());
    assert_eq!(fs.starts(), 1);
    assert!(
        fs.describe().contains("AFL++ <4.20 handshake"),
        "{}",
        fs.describe()
    );
}

#[test]
fn stdin_delivery_rewinds_the_shared_input() {
    let Some(program) = afl_target("branches") else {
        return;
    };
    let target = Target::new(&argv(&program, &[]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    for (input, expect) in [
        (&b"[[1]]"[..], "2 0 1 0 0"),
        (b"{}", "1 0 0 0 0"),
        (b"[\"x\", \"y\"]", "1 2 0 0 0"),
    ] {
        let o = fs.run(input).unwrap();
        assert!(
            o.stdout.text().starts_with(expect),
            "{input:?}: {:?}",
            o.stdout.text()
        );
    }
}

#[test]
fn crashes_are_classified_and_the_forkserver_keeps_going() {
    let Some(program) = afl_target("crash") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    let classifier = Classifier::default();
    assert_eq!(fs.run(b"hello").unwrap().status, Status::Exited(0));
    let o = fs.run(b"CRASH now").unwrap();
    assert_eq!(o.status, Status::Signaled(libc::SIGSEGV));
    let f = classifier.classify(&o).unwrap();
    assert_eq!(
        f.kind,
        FailureKind::Crash {
            signal: libc::SIGSEGV
        }
    );
    let o = fs.run(b"ABORT").unwrap();
    assert_eq!(o.status, Status::Signaled(libc::SIGABRT));
    for _ in 0..20 {
        assert_eq!(fs.run(b"fine").unwrap().status, Status::Exited(0));
    }
    assert_eq!(
        fs.starts(),
        1,
        "crashes of children do not restart the forkserver"
    );
}

#[test]
fn work_overlapping_a_run_is_done_once_and_leaves_the_run_as_it_was() {
    let Some(program) = afl_target("crash") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    for input in [&b"hello"[..], b"CRASH now", b"ABORT", b"fine"] {
        let alone = fs.run(input).unwrap();
        let alone_edges = edges(&fs);
        let mut calls = 0;
        let overlapped = fs.run_overlapping(input, &mut || calls += 1).unwrap();
        assert_eq!(calls, 1);
        assert_eq!(overlapped.status, alone.status);
        assert_eq!(edges(&fs), alone_edges);
    }
    let Some(program) = afl_target("hang") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(300), None).unwrap();
    let mut calls = 0;
    let o = fs
        .run_overlapping(b"please HANG", &mut || calls += 1)
        .unwrap();
    assert_eq!((o.status, calls), (Status::Timeout, 1));
    assert_eq!(fs.run(b"ok").unwrap().status, Status::Exited(0));
}

#[test]
fn hangs_are_killed_and_megabytes_of_output_stay_bounded() {
    let Some(program) = afl_target("hang") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(300), None).unwrap();
    let o = fs.run(b"please HANG").unwrap();
    assert_eq!(o.status, Status::Timeout);
    assert!(Classifier::default().classify(&o).unwrap().is_hang());
    assert_eq!(fs.run(b"ok").unwrap().status, Status::Exited(0));
    let o = fs.run(b"SPEAK").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    assert!(o.stdout.total() > 5_000_000, "{}", o.stdout.total());
    assert_eq!(o.stdout.bytes().len(), thicket_exec::outcome::TAIL_BYTES);
    assert!(o.stdout.text().ends_with("prints megabytes of output\n"));
    assert_eq!(o.stderr.text(), "done speaking\n");
    // The next run starts with empty output.
    let o = fs.run(b"quiet").unwrap();
    assert_eq!((o.stdout.total(), o.stderr.total()), (0, 0));
}

#[test]
fn uninstrumented_programs_are_reported_or_run_plain() {
    let program = plain_target("crash");
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    assert!(!target.is_afl_instrumented());
    let error = ForkserverExecutor::new(target.clone(), limits(500), None)
        .err()
        .expect("no forkserver in a plain binary");
    let message = error.to_string();
    assert!(message.contains("not instrumented"), "{message}");
    assert!(message.contains("crash-plain"), "{message}");
    let (mut plain, note) =
        thicket_exec::executor_for(target, Mode::Auto, limits(500), None).unwrap();
    assert!(note.unwrap().contains("without coverage"));
    assert_eq!(
        plain.run(b"CRASH").unwrap().status,
        Status::Signaled(libc::SIGSEGV)
    );
}

#[test]
fn auto_mode_picks_the_forkserver_for_instrumented_programs() {
    let Some(program) = afl_target("crash") else {
        return;
    };
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let (executor, note) =
        thicket_exec::executor_for(target, Mode::Auto, limits(500), None).unwrap();
    assert!(note.is_none());
    assert!(executor.describe().starts_with("AFL++ forkserver"));
}

#[test]
fn versioned_handshake_of_afl_4_20_with_shared_memory_inputs() {
    if !common::have("cc") {
        eprintln!("*** SKIPPED: no cc for the AFL++ 4.20 stand-in ***");
        return;
    }
    let program = plain_target("fake_afl420");
    let target = Target::new(&argv(&program, &[]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    assert_eq!(fs.handshake(), Handshake::Versioned(1));
    assert_eq!(fs.map_size(), 64);
    assert!(fs.describe().contains("shared memory"), "{}", fs.describe());
    let o = fs.run(b"ab").unwrap();
    assert_eq!(o.status, Status::Exited(0));
    let map = edges(&fs);
    assert_eq!(map.len(), 64);
    assert_eq!(map[0], 1);
    assert_eq!(map[1 + (b'a' as usize) % 63], 1);
    // Three hits of one entry land in bucket 4.
    fs.run(b"zzz").unwrap();
    assert_eq!(edges(&fs)[1 + (b'z' as usize) % 63], 4);
    assert_eq!(
        fs.run(b"CRASH").unwrap().status,
        Status::Signaled(libc::SIGSEGV)
    );
    assert_eq!(fs.run(b"ok").unwrap().status, Status::Exited(0));
}

#[test]
fn a_shorter_input_after_a_longer_one_reaches_the_target_alone() {
    if !common::have("cc") {
        eprintln!("*** SKIPPED: no cc for the classic forkserver stand-in ***");
        return;
    }
    let program = plain_target("fake_afl_file");
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    assert_eq!(fs.handshake(), Handshake::Classic);
    // The stand-in marks entry 1 + the length of the file it read.
    for len in [100usize, 3, 3, 250, 0, 17] {
        let input = vec![b'x'; len];
        assert_eq!(fs.run(&input).unwrap().status, Status::Exited(0));
        let map = edges(&fs);
        let marked: Vec<usize> = (0..map.len()).filter(|&i| map[i] != 0).collect();
        assert_eq!(marked, vec![1 + len], "after an input of {len} bytes");
    }
}

/// Processes with `marker` on their command line that are not zombies.
fn alive_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let path = e.path();
            let cmd = std::fs::read(path.join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(marker)
                && !stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
        })
        .count()
}

/// Daemons a forkserver target starts on each run are ended (thicket is their
/// subreaper) while the campaign runs and when the executor goes.
#[test]
fn daemons_of_forkserver_targets_are_reaped() {
    let Some(program) = afl_target("orphan") else {
        return;
    };
    let marker = format!("{}.{}", 800 + std::process::id() % 100, std::process::id());
    let target = Target::new(&argv(&program, &["@@"]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(5000), None).unwrap();
    for _ in 0..200 {
        assert_eq!(fs.run(marker.as_bytes()).unwrap().status, Status::Exited(0));
    }
    // Sweeps run at most every 20 ms: far fewer than 200 may be alive at any time.
    std::thread::sleep(Duration::from_millis(50));
    fs.run(marker.as_bytes()).unwrap();
    let during = alive_with(&marker);
    drop(fs);
    let mut after = alive_with(&marker);
    for _ in 0..50 {
        if after == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        after = alive_with(&marker);
    }
    assert_eq!(after, 0, "daemons still running after the executor ended");
    assert!(during < 100, "{during} daemons alive during the campaign");
}

#[test]
fn forkserver_targets_bind_their_symbols_at_start_unless_asked_to_bind_lazily() {
    let Some(program) = afl_target("bind_now") else {
        return;
    };
    let target = Target::new(&argv(&program, &[]), None).unwrap();
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    assert_eq!(fs.run(b"").unwrap().status, Status::Exited(0));

    let mut target = Target::new(&argv(&program, &[]), None).unwrap();
    target.env.push(("LD_BIND_LAZY".into(), "1".into()));
    let mut fs = ForkserverExecutor::new(target, limits(2000), None).unwrap();
    assert_eq!(fs.run(b"").unwrap().status, Status::Exited(5));
}
