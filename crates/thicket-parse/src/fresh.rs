//! Fresh memory faulted in ahead of its first write, by another thread.
//!
//! A large parse writes about 100 bytes of fresh memory per input byte (chart items,
//! waiting entries, tree nodes), and the first write to each page of it is a page
//! fault: on a VM about 2–4 µs, which made page faults a third to a half of the time
//! of parsing a 10 MB document. The recogniser runs on one thread, so while it works a
//! second core is idle: a [`Prefaulter`] thread asks the kernel to map the pages the
//! chart is about to grow into, and the tree's node vectors, before they are written
//! (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14 and later; it maps pages as a write
//! would, without changing what they hold, so it needs no synchronisation with the
//! thread that writes them). Elsewhere, or on an older kernel, nothing is faulted in
//! ahead and the parse is as before.
//!
//! What is faulted in keeps [`AHEAD_BYTES`] of input ahead of the recogniser ([`Ahead`]):
//! the chart's vectors at the rate they grew so far, the tree's node vectors in
//! proportion to the input read. So an input rejected early (100 MB of junk) has next
//! to nothing faulted in, and memory the parse will not write is never mapped beyond
//! a window.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex};

/// Inputs from this size on get a prefaulter: below it, its thread costs more than the
/// faults it takes off the parse.
pub(crate) const PREFAULT_BYTES: usize = 256 << 10;

/// Ranges are faulted in this much at a time, taking turns, so that the vectors the
/// recogniser fills at once all stay ahead of it.
const CHUNK: usize = 2 << 20;

/// Ranges smaller than this are left to fault on first write.
const MIN_RANGE: usize = 64 << 10;

/// How far ahead of the recogniser memory is faulted in, in input bytes.
pub(crate) const AHEAD_BYTES: usize = 256 << 10;

/// How often (in input bytes) the recogniser asks for more.
const STEP_BYTES: usize = 16 << 10;

/// What the trees of one parser's large inputs needed per input byte (0: not known
/// yet), so that the next one's tree can be reserved and faulted in while its chart is
/// built: the inputs of one grammar need much the same per byte. (The chart's vectors
/// need no such estimate: they are faulted in ahead at the rate they grow.)
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerByte {
    pub(crate) tree_nodes: f64,
    /// Of the tree's nodes, those a second thread read (0 if none did).
    pub(crate) fork_nodes: f64,
}

impl PerByte {
    /// What a parser assumes before its first large tree: three nodes per byte, the
    /// density of character-level grammars (a node per character, its rule and its
    /// terminal; measured: JSON 2.8, CSV 3.2, XML 2.5), half of them read by a second
    /// thread. Guessing high costs little: the room is address space, only the part
    /// the input read so far stands for is faulted in (by the idle core), and what the
    /// tree leaves unused is handed back when it is finished. Guessing nothing would
    /// leave a first large tree's hundreds of megabytes to fault in the reading
    /// threads (10 MB of JSON: about 0.3 s of its 1.3 s).
    pub(crate) const TYPICAL: PerByte = PerByte {
        tree_nodes: 3.0,
        fork_nodes: 1.5,
    };

    /// This, or `TYPICAL` if no tree was measured yet.
    pub(crate) fn or_typical(self) -> PerByte {
        if self.tree_nodes > 0.0 {
            self
        } else {
            PerByte::TYPICAL
        }
    }

    /// How many elements an input of `bytes` bytes likely needs, at `per_byte`, with a
    /// twentieth to spare (0 if not known).
    pub(crate) fn estimate(per_byte: f64, bytes: usize) -> usize {
        (per_byte * bytes as f64 * 1.05) as usize
    }
}

/// What is left to fault in.
#[derive(Default)]
struct Queue {
    /// Memory about to be written (the chart's vectors as they grow): first, in turns.
    soon: VecDeque<Range<usize>>,
    /// Memory written later (the tree's nodes): once nothing is due soon.
    later: VecDeque<Range<usize>>,
    stopped: bool,
}

impl Queue {
    /// The next chunk to fault in: the front range's first chunk, the rest of the range
    /// going to the back of its queue.
    fn next_chunk(&mut self) -> Option<Range<usize>> {
        let queue = if self.soon.is_empty() {
            &mut self.later
        } else {
            &mut self.soon
        };
        let range = queue.pop_front()?;
        let end = range.end.min(range.start + CHUNK);
        if end < range.end {
            queue.push_back(end..range.end);
        }
        Some(range.start..end)
    }
}

/// A large parse's memory faulted in [`AHEAD_BYTES`] of input ahead of the recogniser.
pub(crate) struct Ahead {
    fresh: Prefaulter,
    text_len: usize,
    /// How many items and waiting entries have been asked for.
    items: usize,
    waiting: usize,
    /// The tree's node vectors (addresses), and how much of each has been asked for.
    rooms: Vec<(Range<usize>, usize)>,
    /// The position from which to ask for more.
    next: usize,
}

impl Ahead {
    /// For an input of `text_len` bytes whose tree will be read into `rooms`.
    pub(crate) fn new(fresh: Prefaulter, text_len: usize, rooms: Vec<Range<usize>>) -> Ahead {
        Ahead {
            fresh,
            text_len,
            items: 0,
            waiting: 0,
            rooms: rooms.into_iter().map(|room| (room, 0)).collect(),
            next: 0,
        }
    }

    /// At position `j`, with the chart's vectors: asks for more once every
    /// [`STEP_BYTES`].
    #[inline(always)]
    pub(crate) fn at<I, W>(&mut self, j: usize, items: &Vec<I>, waiting: &Vec<W>) {
        if j >= self.next {
            self.ask(j, items, waiting);
        }
    }

    /// Asks for what the input up to [`AHEAD_BYTES`] past `j` will likely write: of each
    /// chart vector, at its rate so far and a quarter more (as far as its capacity:
    /// after it doubles, again); of the tree's rooms, their share of the input read.
    #[cold]
    #[inline(never)]
    pub(crate) fn ask<I, W>(&mut self, j: usize, items: &Vec<I>, waiting: &Vec<W>) {
        let reach = (j + AHEAD_BYTES).min(self.text_len);
        let likely =
            |len: usize| (len as f64 * (reach + 1) as f64 / (j + 1) as f64 * 1.25) as usize;
        self.items = self.ask_for(items, self.items, likely(items.len()));
        self.waiting = self.ask_for(waiting, self.waiting, likely(waiting.len()));
        let share = reach as f64 / self.text_len.max(1) as f64;
        for (room, asked) in &mut self.rooms {
            let until = room.start + (room.len() as f64 * share) as usize;
            if until > *asked {
                self.fresh.later(room.start.max(*asked)..until);
                *asked = until;
            }
        }
        self.next = j + STEP_BYTES;
    }

    /// Asks for `vector`'s capacity from element `asked` (or its length) up to element
    /// `until`; returns how far it has been asked for now.
    fn ask_for<T>(&self, vector: &Vec<T>, asked: usize, until: usize) -> usize {
        let until = until.min(vector.capacity());
        if until > asked {
            self.fresh
                .soon(unwritten(vector, asked.max(vector.len()), until));
        }
        until.max(asked)
    }
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// A thread faulting in memory ranges it is given, until dropped.
pub(crate) struct Prefaulter {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prefaulter {
    /// A prefaulter for a parse of `bytes` bytes, if it pays: a large input, two cores,
    /// and a system that can fault in ahead.
    pub(crate) fn for_input(bytes: usize) -> Option<Prefaulter> {
        if bytes < PREFAULT_BYTES || !cfg!(target_os = "linux") || !crate::tree::two_threads() {
            return None;
        }
        let shared = Arc::new(Shared::default());
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("thicket-prefault".into())
            .spawn(move || worker.run())
            .ok()?;
        Some(Prefaulter {
            shared,
            thread: Some(thread),
        })
    }

    /// Faults in `range` (addresses) ahead of writes about to happen there.
    pub(crate) fn soon(&self, range: Range<usize>) {
        self.request(range, |queue| &mut queue.soon);
    }

    /// Faults in `range` once nothing is due soon.
    pub(crate) fn later(&self, range: Range<usize>) {
        self.request(range, |queue| &mut queue.later);
    }

    fn request(
        &self,
        range: Range<usize>,
        which: impl FnOnce(&mut Queue) -> &mut VecDeque<Range<usize>>,
    ) {
        if range.len() < MIN_RANGE {
            return;
        }
        if let Ok(mut queue) = self.shared.queue.lock() {
            which(&mut queue).push_back(range);
            self.shared.wake.notify_one();
        }
    }
}

impl Drop for Prefaulter {
    /// Stops the thread (after the chunk it is faulting in, at most a millisecond or so).
    fn drop(&mut self) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.stopped = true;
        }
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn run(&self) {
        loop {
            let chunk = {
                let Ok(mut queue) = self.queue.lock() else {
                    return;
                };
                loop {
                    if queue.stopped {
                        return;
                    }
                    if let Some(chunk) = queue.next_chunk() {
                        break chunk;
                    }
                    queue = match self.wake.wait(queue) {
                        Ok(queue) => queue,
                        Err(_) => return,
                    };
                }
            };
            if !populate(chunk) {
                return;
            }
        }
    }
}

/// The addresses of the capacity of `vector` from `from` elements on, up to `to`
/// elements (unwritten memory, to fault in).
pub(crate) fn unwritten<T>(vector: &Vec<T>, from: usize, to: usize) -> Range<usize> {
    let start = vector.as_ptr() as usize;
    let size = size_of::<T>();
    let to = to.min(vector.capacity());
    start + from.min(to) * size..start + to * size
}

/// Maps the whole pages of `range` for writing, without changing their contents. Says
/// whether to go on: `false` if the kernel cannot (older than 5.14).
#[cfg(target_os = "linux")]
fn populate(range: Range<usize>) -> bool {
    const PAGE: usize = 4096;
    let start = range.start.next_multiple_of(PAGE);
    let end = range.end / PAGE * PAGE;
    if start >= end {
        return true;
    }
    // SAFETY: MADV_POPULATE_WRITE only maps pages (as a write fault would) and leaves
    // their contents as they are; on addresses that are not mapped (a vector moved or
    // freed meanwhile) it fails with ENOMEM and does nothing.
    let done = unsafe {
        libc::madvise(
            start as *mut libc::c_void,
            end - start,
            libc::MADV_POPULATE_WRITE,
        )
    };
    done == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
}

#[cfg(not(target_os = "linux"))]
fn populate(_: Range<usize>) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_take_turns_between_ranges_and_later_ones_wait() {
        let mut queue = Queue::default();
        queue.later.push_back(0..100);
        queue.soon.push_back(1 << 30..(1 << 30) + 3 * CHUNK);
        queue.soon.push_back(1 << 31..(1 << 31) + CHUNK / 2);
        let a = 1 << 30;
        let b = 1 << 31;
        let order: Vec<_> = std::iter::from_fn(|| queue.next_chunk()).collect();
        assert_eq!(
            order,
            vec![
                a..a + CHUNK,
                b..b + CHUNK / 2,
                a + CHUNK..a + 2 * CHUNK,
                a + 2 * CHUNK..a + 3 * CHUNK,
                0..100,
            ]
        );
    }

    #[test]
    fn the_tree_is_faulted_in_as_far_as_the_input_read_and_the_chart_at_its_rate() {
        let Some(fresh) = Prefaulter::for_input(PREFAULT_BYTES) else {
            return; // one core: nothing is faulted in ahead
        };
        let n = 64 * AHEAD_BYTES;
        let room: Vec<u64> = Vec::with_capacity(1 << 20);
        let addresses = unwritten(&room, 0, room.capacity());
        let mut ahead = Ahead::new(fresh, n, vec![addresses.clone()]);
        let mut items: Vec<u64> = Vec::with_capacity(1 << 20);
        let waiting: Vec<u32> = Vec::new();
        // An input rejected at its first byte: a 64th of the tree's room (the window
        // ahead), and of the chart what one byte's rate says.
        items.extend(0..2);
        ahead.at(0, &items, &waiting);
        let asked = |ahead: &Ahead| ahead.rooms[0].1 - addresses.start;
        assert_eq!(asked(&ahead), addresses.len() / 64);
        assert_eq!(
            ahead.items,
            (2.0 * (AHEAD_BYTES + 1) as f64 * 1.25) as usize
        );
        // Nothing more until the next step; then the window has moved on.
        ahead.at(STEP_BYTES - 1, &items, &waiting);
        assert_eq!(asked(&ahead), addresses.len() / 64);
        items.extend(0..900_000);
        ahead.at(n - AHEAD_BYTES, &items, &waiting);
        assert_eq!(asked(&ahead), addresses.len());
        // 900,000 items so far, so about as many a quarter more: as far as capacity.
        assert_eq!(ahead.items, items.capacity());
    }

    #[test]
    fn faulted_in_memory_keeps_what_it_holds() {
        let mut vector: Vec<u64> = (0..1000).collect();
        vector.reserve(1 << 20);
        let range = vector.as_ptr() as usize..vector.as_ptr() as usize + vector.capacity() * 8;
        populate(range);
        assert!(vector.iter().copied().eq(0..1000));
        vector.extend(1000..2000);
        assert!(vector.iter().copied().eq(0..2000));
    }
}
