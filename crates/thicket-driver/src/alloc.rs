//! An allocator for thicket's binaries: the system's, except that an allocation that
//! fails ends the process with a message naming the limit to raise (exit 4, the
//! command line's code for a failure), where Rust would abort with "memory allocation
//! of N bytes failed". A binary installs it with `#[global_allocator]`; a library (the
//! Python module) leaves the allocator to its host.
//!
//! The large allocations ask first (the parser's chart grows only while it fits under
//! the address-space limit, see `thicket_parse::memory`, and an input that does not fit
//! is reported while the others go on); this is for whatever remains, so that running
//! out of memory never ends in an abort.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write;

/// The system allocator that exits cleanly when memory runs out.
///
/// ```
/// #[global_allocator]
/// static ALLOCATOR: thicket_driver::alloc::ExitWhenExhausted =
///     thicket_driver::alloc::ExitWhenExhausted;
/// # fn main() {}
/// ```
pub struct ExitWhenExhausted;

// SAFETY: every call is passed on to the system allocator unchanged; a null result
// (which would make Rust abort) ends the process instead of being returned.
unsafe impl GlobalAlloc for ExitWhenExhausted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let memory = unsafe { System.alloc(layout) };
        if memory.is_null() {
            exhausted(layout.size());
        }
        memory
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let memory = unsafe { System.alloc_zeroed(layout) };
        if memory.is_null() {
            exhausted(layout.size());
        }
        memory
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let memory = unsafe { System.realloc(ptr, layout, new_size) };
        if memory.is_null() {
            exhausted(new_size);
        }
        memory
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The exit code when memory runs out: the command line's code for a failure that is
/// not the input's nor the spec's.
pub const EXIT_CODE: i32 = 4;

/// A message written into a fixed buffer: nothing may be allocated once memory ran out.
struct Message {
    bytes: [u8; 512],
    len: usize,
}

impl Write for Message {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = (self.len + s.len()).min(self.bytes.len());
        self.bytes[self.len..end].copy_from_slice(&s.as_bytes()[..end - self.len]);
        self.len = end;
        Ok(())
    }
}

/// Says that `bytes` could not be allocated and under which limit, and exits with 4.
#[cold]
fn exhausted(bytes: usize) -> ! {
    let mut message = Message {
        bytes: [0; 512],
        len: 0,
    };
    let _ = write!(
        message,
        "error: out of memory: {} more MiB could not be allocated",
        bytes.div_ceil(1 << 20)
    );
    let _ = match thicket_parse::memory::address_space_limit() {
        Some(limit) => writeln!(
            message,
            " within the address-space limit of {} MiB (`ulimit -v`); raise the limit, or \
             ask for less (smaller inputs, a lower --max-input-size or --max-size; \
             docs/bounds.md gives the memory each command needs)",
            limit >> 20
        ),
        None => writeln!(
            message,
            "; ask for less (smaller inputs, a lower --max-input-size or --max-size; \
             docs/bounds.md gives the memory each command needs)"
        ),
    };
    // SAFETY: writing a buffer we own to stderr, then ending the process without
    // running anything more (no destructor may allocate now).
    unsafe {
        libc::write(2, message.bytes.as_ptr().cast(), message.len);
        libc::_exit(EXIT_CODE);
    }
}
