//! The mutator's own cost per AFL++ call, on the bundled JSON spec: an entry already
//! parsed (the cache answers, as for every call after an entry's first) against one
//! parsed anew each call, beside generating a fresh input (the baseline a campaign
//! pays anyway). Run with `cargo bench -p thicket-mutator`.

use divan::{Bencher, black_box};
use std::path::Path;
use thicket_grammar::LoadOptions;
use thicket_mutator::{GrammarMutator, MutatorConfig};

fn main() {
    divan::main();
}

const ENTRY: &[u8] = br#"{"name": "thicket", "tags": ["grammar", "fuzzing", 1, 2.5e3], "nested": {"a": [true, false, null, {"b": "\u00e9"}]}}"#;

fn mutator() -> GrammarMutator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/json.fan");
    let spec = thicket_grammar::load_spec_file(Path::new(path), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    GrammarMutator::new(
        spec.grammar,
        MutatorConfig {
            seed: 1,
            valid_only: false,
            max_depth: 30,
        },
    )
    .unwrap()
}

#[divan::bench]
fn mutate_cached_entry(bencher: Bencher) {
    let mut mutator = mutator();
    mutator.mutate(ENTRY, None, 1 << 20);
    bencher.bench_local(|| black_box(mutator.mutate(black_box(ENTRY), None, 1 << 20).len()));
}

#[divan::bench]
fn mutate_new_entry(bencher: Bencher) {
    let mut mutator = mutator();
    let mut n = 0u64;
    bencher.bench_local(|| {
        // A different entry each call (a trailing space count), so each is parsed.
        n += 1;
        let mut entry = ENTRY.to_vec();
        entry.extend(std::iter::repeat_n(b' ', (n % 4096) as usize));
        black_box(mutator.mutate(&entry, None, 1 << 20).len())
    });
}
