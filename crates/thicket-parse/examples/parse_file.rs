//! Parses one file and prints the time, the throughput, the parser's item count and the
//! peak heap: a steady workload for profilers.
//!
//! `cargo run --release -p thicket-parse --example parse_file -- specs/json.fan big.json`
//!
//! Instead of a file, `json:SIZE` or `csv:SIZE` (bytes, `k`/`M` suffixes allowed) parses
//! the benchmark's document of that size. `--no-tree` stops after recognising (for
//! instruction counts of the recogniser alone under callgrind).
//!
//! Regular parts' DFAs are built on first use, so a parse of the first 64 KiB comes
//! first, unmeasured. The measured work is in `measured`, for
//! `valgrind --tool=callgrind --toggle-collect='*measured*'`.
//!
//! With `--again`, the file is parsed a second time with the same parser, which reuses
//! the chart vectors the first parse left (`ParseConfig::keep_bytes`): the figures of a
//! parser reused across inputs, as in the benchmarks, rather than of a first parse.
//! A reused parser also knows how much memory its inputs need per byte, so a large
//! input's tree memory is faulted in ahead too. The parser runs with the `thicket`
//! binary's settings (`ParseConfig::threads`, `thicket_tree::keep_spare_nodes`);
//! `--no-threads` takes a library's defaults instead (no helper threads: every page
//! faults in the parsing thread; no node pool), for comparison.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "../benches/documents/mod.rs"]
mod documents;

/// The system allocator, counting live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; only counters are
// added around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's pointer, layout and size.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Minor page faults of this process so far (Linux; 0 elsewhere): on a VM each costs
/// microseconds, so fresh memory touched is a large part of the wall time.
fn page_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            // The fields after the command name (which is in parentheses); minflt is
            // the 10th field of the line, the 8th after the name.
            let rest = &stat[stat.rfind(')')? + 2..];
            rest.split(' ').nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

fn size(text: &str) -> usize {
    let (digits, unit) = match text.as_bytes().last() {
        Some(b'k') => (&text[..text.len() - 1], 1 << 10),
        Some(b'M') => (&text[..text.len() - 1], 1 << 20),
        _ => (text, 1),
    };
    digits.parse::<usize>().expect("a size") * unit
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let no_tree = args.iter().any(|a| a == "--no-tree");
    let again = args.iter().any(|a| a == "--again");
    let threads = !args.iter().any(|a| a == "--no-threads");
    let mut args = args.into_iter().filter(|a| !a.starts_with("--"));
    let usage =
        "usage: parse_file SPEC (FILE | json:SIZE | csv:SIZE) [--no-tree] [--again] [--no-threads]";
    let spec = args.next().expect(usage);
    let file = args.next().expect(usage);
    let spec = thicket_grammar::load_spec_file(spec.as_ref(), &Default::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let text = if let Some(n) = file.strip_prefix("json:") {
        documents::json_document(size(n))
    } else if let Some(n) = file.strip_prefix("csv:") {
        documents::csv_document(size(n))
    } else {
        std::fs::read(&file).expect("readable input")
    };
    if threads {
        thicket_tree::keep_spare_nodes(128 << 20);
    }
    let config = thicket_parse::ParseConfig {
        threads,
        ..Default::default()
    };
    let parser = thicket_parse::Parser::new(&spec.grammar, config).expect("parser");
    let _ = parser.parse(&text[..text.len().min(64 << 10)]);
    measured(&parser, &text, no_tree);
    if again {
        print!("again: ");
        measured(&parser, &text, no_tree);
    }
}

#[inline(never)]
fn measured(parser: &thicket_parse::Parser<'_>, text: &[u8], no_tree: bool) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let faults = page_faults();
    let started = std::time::Instant::now();
    let result = parser.parse(text).unwrap_or_else(|e| panic!("{e}"));
    let parsed = started.elapsed().as_secs_f64();
    let faults_parse = page_faults() - faults;
    let peak_parse = PEAK.load(Ordering::Relaxed) - before;
    let mb = text.len() as f64 / 1e6;
    print!(
        "{} bytes: recognise {parsed:.3} s ({:.1} MB/s); {} items ({:.2} per byte); peak {} B ({:.1} B/byte), {faults_parse} page faults",
        text.len(),
        mb / parsed,
        result.item_count(),
        result.item_count() as f64 / text.len() as f64,
        peak_parse,
        peak_parse as f64 / text.len() as f64,
    );
    if !no_tree {
        let tree = result.tree();
        let total = started.elapsed().as_secs_f64();
        let peak = PEAK.load(Ordering::Relaxed) - before;
        let faults = page_faults() - faults;
        print!(
            "; with tree {total:.3} s ({:.1} MB/s), {} tree nodes, peak {peak} B ({:.1} B/byte), {faults} page faults",
            mb / total,
            tree.len(),
            peak as f64 / text.len() as f64,
        );
    }
    println!();
    // A same-process baseline for JSON, so that figures from a busy machine compare.
    let started = std::time::Instant::now();
    let value = serde_json::from_slice::<serde_json::Value>(text);
    let secs = started.elapsed().as_secs_f64();
    if value.is_ok() {
        println!(
            "baseline: serde_json::Value {secs:.3} s ({:.1} MB/s)",
            mb / secs
        );
    }
}
