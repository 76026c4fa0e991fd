//! A Rust fuzz target (serde_json's parser) whose mutations are thicket's: libFuzzer
//! calls the `fuzz_mutator!` closure instead of its own byte mutations, and the closure
//! hands the input to a `GrammarMutator` made from `THICKET_SPEC` (and the other
//! `THICKET_*` variables of thicket-mutator). Run from the repository's root:
//!
//! ```sh
//! THICKET_SPEC=specs/json.fan cargo +nightly fuzz run json_mutator
//! ```
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use std::cell::RefCell;
use thicket_mutator::GrammarMutator;

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<serde_json::Value>(data);
});

thread_local! {
    static MUTATOR: RefCell<GrammarMutator> = RefCell::new(
        GrammarMutator::from_env(0).unwrap_or_else(|e| panic!("thicket-mutator: {e}")),
    );
}

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    MUTATOR.with(|mutator| {
        let mut mutator = mutator.borrow_mut();
        mutator.reseed(u64::from(seed));
        let input = data[..size].to_vec();
        let mutant = mutator.mutate(&input, None, max_size);
        data[..mutant.len()].copy_from_slice(mutant);
        mutant.len()
    })
});
