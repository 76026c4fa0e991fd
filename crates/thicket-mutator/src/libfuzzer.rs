//! libFuzzer's custom mutator hooks. libFuzzer looks these symbols up in the harness
//! binary: linking the static library is enough. The mutator is made on the first
//! call from the environment (`THICKET_SPEC`, ...; see the crate docs) and lives in
//! the calling thread (libFuzzer mutates on one thread per process); a mutator that
//! cannot be made is reported and the process aborts, as a harness without its
//! mutator would fuzz something else than the user asked for.

use crate::GrammarMutator;
use std::cell::RefCell;
use std::ffi::c_uint;

thread_local! {
    static MUTATOR: RefCell<Option<GrammarMutator>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's mutator, made from the environment on first use.
fn with_mutator<T>(f: impl FnOnce(&mut GrammarMutator) -> T) -> T {
    MUTATOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let mutator = slot.get_or_insert_with(|| match GrammarMutator::from_env(0) {
            Ok(mutator) => mutator,
            Err(e) => {
                eprintln!("thicket-mutator: {e}");
                std::process::exit(1);
            }
        });
        f(mutator)
    })
}

/// Copies `bytes` into `out` (room for `max` bytes); returns the length.
///
/// # Safety
/// `out` points to `max` writable bytes and `bytes.len() <= max`.
unsafe fn write_out(bytes: &[u8], out: *mut u8, max: usize) -> usize {
    let len = bytes.len().min(max);
    // SAFETY: the caller's contract; `bytes` is the mutator's own buffer, not `out`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, len) };
    len
}

/// libFuzzer: mutates the `size` bytes at `data` in place (room for `max_size`);
/// returns the new size.
///
/// # Safety
/// `data` points to `max_size` writable bytes of which `size` hold the input.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn LLVMFuzzerCustomMutator(
    data: *mut u8,
    size: usize,
    max_size: usize,
    seed: c_uint,
) -> usize {
    with_mutator(|mutator| {
        mutator.reseed(u64::from(seed));
        // SAFETY: the caller's contract.
        let input = unsafe { std::slice::from_raw_parts(data, size) }.to_vec();
        let mutant = mutator.mutate(&input, None, max_size);
        // SAFETY: the mutant has at most `max_size` bytes; `data` has room for them.
        unsafe { write_out(mutant, data, max_size) }
    })
}

/// libFuzzer: writes a crossover of two inputs to `out` (room for `max_out_size`);
/// returns its size.
///
/// # Safety
/// `data1`/`data2` point to `size1`/`size2` readable bytes, `out` to `max_out_size`
/// writable ones.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn LLVMFuzzerCustomCrossOver(
    data1: *const u8,
    size1: usize,
    data2: *const u8,
    size2: usize,
    out: *mut u8,
    max_out_size: usize,
    seed: c_uint,
) -> usize {
    with_mutator(|mutator| {
        mutator.reseed(u64::from(seed));
        // SAFETY: the caller's contract.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(data1, size1),
                std::slice::from_raw_parts(data2, size2),
            )
        };
        let child = mutator.crossover(a, b, max_out_size);
        // SAFETY: the child has at most `max_out_size` bytes; `out` has room.
        unsafe { write_out(child, out, max_out_size) }
    })
}
