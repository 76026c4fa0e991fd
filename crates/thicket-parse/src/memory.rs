//! Room under the address-space limit.
//!
//! Under a limit on address space (`ulimit -v`, `RLIMIT_AS`), an allocation past it
//! fails, and Rust aborts the process for a failed allocation. So while a limit is set,
//! a parse asks before each growth of its chart whether the growth fits with room to
//! spare for what comes after (the tree it will likely be read into, what the caller
//! builds from that: [`ParseConfig::reserve_per_byte`](crate::ParseConfig)), and
//! stops with [`ParseError::OutOfMemory`](crate::ParseError) when it does not, naming
//! the limit. Without a limit the kernel hands out memory it may not have (and its
//! out-of-memory killer ends a process that uses too much): nothing is asked then.

/// Address space that always stays free for what nobody estimates: thread stacks,
/// small allocations, the allocator's own bookkeeping.
pub const SLACK_BYTES: usize = 48 << 20;

/// Memory reading a tree needs per input byte beside its nodes: the tree's copy of the
/// text, the subtree caches, the second reader's working state.
pub(crate) const READING_PER_BYTE: usize = 4;

/// The address-space limit of this process (`RLIMIT_AS`, `ulimit -v`), in bytes, if one
/// is set (Linux; elsewhere none is known).
pub fn address_space_limit() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid rlimit struct to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
            || limit.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        Some(usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The address space this process maps now, in bytes (Linux: `/proc/self/statm`).
fn address_space_used() -> Option<usize> {
    use std::io::Read;
    let mut file = std::fs::File::open("/proc/self/statm").ok()?;
    let mut buffer = [0u8; 128];
    let len = file.read(&mut buffer).ok()?;
    let pages: usize = std::str::from_utf8(&buffer[..len])
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
}

/// How much more address space this process may map before it reaches its limit, if
/// one is set (`None`: no limit, or not known).
pub fn address_space_left() -> Option<usize> {
    let limit = address_space_limit()?;
    Some(limit.saturating_sub(address_space_used()?))
}

/// Whether `bytes` more fit under the address-space limit with `keep` to spare beside
/// [`SLACK_BYTES`] (always true without a limit).
pub fn fits(bytes: usize, keep: usize) -> bool {
    address_space_left()
        .is_none_or(|left| bytes.saturating_add(keep).saturating_add(SLACK_BYTES) <= left)
}

/// Bytes as MiB, rounded up, for messages.
pub fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1 << 20)
}
