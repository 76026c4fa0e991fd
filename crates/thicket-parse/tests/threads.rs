//! A parser starts no thread unless asked (`ParseConfig::threads`), and with it a large
//! input gets its helpers (threads named `thicket-...`). Alone in its test binary: it
//! counts the process's threads.

#![cfg(target_os = "linux")]

#[path = "../benches/documents/mod.rs"]
#[allow(dead_code)] // csv_document
mod documents;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use thicket_grammar::{LoadOptions, load_spec_file};
use thicket_parse::{ParseConfig, Parser};

/// The most helper threads (named `thicket-...`) the process had while `work` ran,
/// sampled by a watcher thread.
fn most_threads(work: impl FnOnce()) -> usize {
    let done = AtomicBool::new(false);
    let sampled = AtomicBool::new(false);
    let most = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let now = std::fs::read_dir("/proc/self/task")
                    .unwrap()
                    .filter(|task| {
                        let comm = task.as_ref().unwrap().path().join("comm");
                        std::fs::read_to_string(comm).is_ok_and(|name| name.starts_with("thicket-"))
                    })
                    .count();
                most.fetch_max(now, Ordering::Relaxed);
                sampled.store(true, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        });
        // The watcher has counted at least once before the work starts.
        while !sampled.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        work();
        done.store(true, Ordering::Relaxed);
    });
    most.into_inner()
}

#[test]
fn helper_threads_only_when_asked() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/json.fan");
    let grammar = load_spec_file(path.as_ref(), &LoadOptions::default())
        .unwrap()
        .grammar;
    let text = documents::json_document(2 << 20);
    let parse = |config: ParseConfig| {
        let parser = Parser::new(&grammar, config).unwrap();
        most_threads(|| drop(parser.parse(&text).unwrap().tree()))
    };
    // The test's thread and the watcher.
    let baseline = most_threads(|| ());
    assert_eq!(
        parse(ParseConfig::default()),
        baseline,
        "a library's default"
    );
    if std::thread::available_parallelism().is_ok_and(|n| n.get() > 1) {
        let threads = ParseConfig {
            threads: true,
            ..ParseConfig::default()
        };
        assert!(parse(threads) > 0, "asked for");
    }
}
