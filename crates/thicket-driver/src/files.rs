//! The input files of a command: files, folders (every file below, recursively, in
//! sorted order), stdin; each read whole with a size cap that bounds the reader, and
//! each failure kept with its own input so that one bad input stops no run.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// How a path is named in messages (`<stdin>` for `-`).
pub fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// `, N unreadable` for a summary line of a set of inputs when some could not be read,
/// else nothing.
pub fn unreadable_note(unreadable: usize) -> String {
    if unreadable > 0 {
        format!(", {unreadable} unreadable")
    } else {
        String::new()
    }
}

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The path, `-` for stdin.
    pub path: PathBuf,
    /// Why it cannot be read, if already known (a folder that cannot be listed).
    pub error: Option<String>,
}

impl Input {
    /// How the input is named in messages (`<stdin>` for `-`).
    pub fn name(&self) -> String {
        display_name(&self.path)
    }

    /// An input at `path` (`-`: stdin), read when asked.
    pub fn at(path: PathBuf) -> Input {
        Input { path, error: None }
    }

    /// Reads the input whole, refusing one over `max` bytes: the reader is bounded, so
    /// `/dev/zero` costs `max` bytes, not all memory.
    pub fn read(&self, max: u64) -> Result<Vec<u8>, String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        read_path(&self.path, max, "--max-input-size")
    }

    /// The input's size if it is a file whose size is known up front.
    pub fn size_hint(&self) -> u64 {
        if self.path.as_os_str() == "-" || self.error.is_some() {
            return 0;
        }
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

/// Every input's name and text, each read whole under `max` bytes; the first that
/// cannot be read is the error (its message names the file).
pub fn read_all(inputs: &[Input], max: u64) -> Result<(Vec<String>, Vec<Vec<u8>>), String> {
    let mut names = Vec::with_capacity(inputs.len());
    let mut texts = Vec::with_capacity(inputs.len());
    for input in inputs {
        texts.push(input.read(max)?);
        names.push(input.name());
    }
    Ok((names, texts))
}

/// Reads the file at `path` (`-`: stdin) whole, refusing more than `max` bytes; the
/// message names `option`, which raises the limit.
pub fn read_path(path: &Path, max: u64, option: &str) -> Result<Vec<u8>, String> {
    if path.as_os_str() == "-" {
        read_bounded(std::io::stdin().lock(), max, "stdin", option)
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        read_bounded(file, max, &path.display().to_string(), option)
    }
}

/// Reads all of `reader`, failing once more than `max` bytes arrive, or once the bytes
/// read cannot grow under the address-space limit (`ulimit -v`).
pub fn read_bounded(
    reader: impl Read,
    max: u64,
    what: &str,
    option: &str,
) -> Result<Vec<u8>, String> {
    let mut reader = reader.take(max.saturating_add(1));
    let mut bytes = Vec::new();
    loop {
        // As much again as was read, asking first whether it fits.
        let chunk = bytes.len().max(64 << 10);
        if !thicket_parse::memory::fits(chunk, 0) {
            return Err(format!(
                "{what}: not enough memory to read it past {} MiB within the address-space \
                 limit of {} MiB (`ulimit -v`); raise the limit, or lower {option}",
                thicket_parse::memory::mib(bytes.len()),
                thicket_parse::memory::mib(
                    thicket_parse::memory::address_space_limit().unwrap_or(0)
                ),
            ));
        }
        bytes.reserve_exact(chunk);
        let read = (&mut reader)
            .take(chunk as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        if read == 0 {
            break;
        }
    }
    if bytes.len() as u64 > max {
        return Err(format!(
            "{what} is larger than the limit of {max} bytes (raise it with {option})"
        ));
    }
    Ok(bytes)
}

/// Every input in order: `paths` (folders expanded), then the paths listed one per line
/// in the file `list` (`-`: stdin; read under `max` bytes); stdin if none is named and
/// `stdin_if_none`. Problems with one entry (a folder that cannot be listed) become that
/// entry's error; only an unreadable list fails the whole call.
pub fn collect(
    paths: &[PathBuf],
    list: Option<&Path>,
    max: u64,
    stdin_if_none: bool,
) -> Result<Vec<Input>, String> {
    let mut out = Vec::new();
    for path in paths {
        expand(path, &mut out);
    }
    if let Some(list) = list {
        let text = read_path(list, max, "--max-input-size")
            .map_err(|e| format!("in --files-from: {e}"))?;
        for line in text.lines() {
            let line = line.map_err(|e| format!("in --files-from: {e}"))?;
            let line = line.trim_end_matches('\r');
            if !line.is_empty() {
                expand(Path::new(line), &mut out);
            }
        }
    }
    // Stdin only when nothing was named: an empty folder holds no inputs.
    if paths.is_empty() && stdin_if_none && list.is_none() {
        out.push(Input::at(PathBuf::from("-")));
    }
    Ok(out)
}

/// Adds `path`, or every file below it if it is a folder.
pub fn expand(path: &Path, out: &mut Vec<Input>) {
    if path.as_os_str() == "-" || !path.is_dir() {
        out.push(Input::at(path.to_path_buf()));
        return;
    }
    // Depth first and iterative: a folder's entries are pushed sorted in reverse, so
    // they are visited in path order.
    let mut stack = vec![(path.to_path_buf(), Kind::Folder)];
    while let Some((p, kind)) = stack.pop() {
        match kind {
            Kind::File => {
                out.push(Input::at(p));
                continue;
            }
            Kind::Special => {
                out.push(Input {
                    error: Some(format!(
                        "{} is not a regular file (a FIFO, socket or device): skipped; \
                         name it on its own to read it",
                        p.display()
                    )),
                    path: p,
                });
                continue;
            }
            Kind::Folder => {}
        }
        let entries = match std::fs::read_dir(&p) {
            Ok(entries) => entries,
            Err(e) => {
                out.push(Input {
                    error: Some(format!("cannot list folder {}: {e}", p.display())),
                    path: p,
                });
                continue;
            }
        };
        let mut inside: Vec<(PathBuf, Kind)> = entries
            .flatten()
            .filter(|entry| !is_hidden(&entry.path()))
            .map(|entry| (entry.path(), Kind::of(&entry)))
            .collect();
        inside.sort();
        stack.extend(inside.into_iter().rev());
    }
}

/// What a folder entry is, for expanding folders. Reading a FIFO or a device found in a
/// folder could block forever or never end, so those are reported, not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Folder,
    File,
    Special,
}

impl Kind {
    fn of(entry: &std::fs::DirEntry) -> Kind {
        match entry.file_type() {
            Ok(t) if t.is_dir() => Kind::Folder,
            Ok(t) if t.is_file() => Kind::File,
            // A link to a folder is not followed (no cycles); a link to a file is read.
            Ok(t) if t.is_symlink() => match std::fs::metadata(entry.path()) {
                Ok(m) if m.is_dir() || m.is_file() => Kind::File,
                Ok(_) => Kind::Special,
                // A dangling link: reading it reports why.
                Err(_) => Kind::File,
            },
            Ok(_) => Kind::Special,
            Err(_) => Kind::File,
        }
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Inputs worked on in parallel at once: at most this many, and (by their file sizes)
/// at most `BATCH_BYTES` of them, so that many or large inputs are never all held.
const BATCH_INPUTS: usize = 256;
const BATCH_BYTES: u64 = 64 << 20;

/// Splits inputs into batches of at most `BATCH_INPUTS` and about `BATCH_BYTES`.
pub fn batches(inputs: &[Input]) -> Vec<&[Input]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0u64;
    for (i, input) in inputs.iter().enumerate() {
        let size = input.size_hint();
        if i > start && (i - start >= BATCH_INPUTS || bytes + size > BATCH_BYTES) {
            out.push(&inputs[start..i]);
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < inputs.len() {
        out.push(&inputs[start..]);
    }
    out
}

/// Runs `work` on every input in parallel on `pool`, a batch at a time (see
/// [`batches`]), and hands each batch with its results, in input order, to `done`
/// before the next batch is begun: results are reported in order while only a
/// batch's inputs are held. The first error of `done` ends the run.
pub fn for_each_batch<T: Send, E>(
    inputs: &[Input],
    pool: &rayon::ThreadPool,
    work: impl Fn(&Input) -> T + Sync,
    mut done: impl FnMut(&[Input], Vec<T>) -> Result<(), E>,
) -> Result<(), E> {
    use rayon::prelude::*;
    for batch in batches(inputs) {
        let results: Vec<T> = pool.install(|| batch.par_iter().map(&work).collect());
        done(batch, results)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(path: &Path) -> Vec<Input> {
        let mut out = Vec::new();
        expand(path, &mut out);
        out
    }

    #[test]
    fn folders_expand_recursively_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in ["b/2", "b/1", "a", "c/d/e", "c/0", ".hidden", "b/.x"] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let got: Vec<String> = expanded(root)
            .iter()
            .map(|i| {
                i.path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(got, ["a", "b/1", "b/2", "c/0", "c/d/e"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_a_folder_is_reported_not_read_and_an_empty_folder_holds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !status.is_ok_and(|s| s.success()) {
            return;
        }
        let inputs = expanded(dir.path());
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs[0].read(10).unwrap(), b"x");
        let err = inputs[1].read(10).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(expanded(empty.path()), vec![]);
    }

    #[test]
    fn reading_stops_at_the_limit() {
        let err =
            read_bounded(std::io::repeat(0), 1000, "/dev/zero", "--max-input-size").unwrap_err();
        assert!(err.contains("limit of 1000 bytes"), "{err}");
        assert!(err.contains("--max-input-size"), "{err}");
        assert_eq!(read_bounded(&b"abc"[..], 3, "x", "-").unwrap(), b"abc");
    }

    #[test]
    fn batches_keep_every_input_in_order_and_bound_their_count() {
        let inputs: Vec<Input> = (0..600)
            .map(|i| Input::at(PathBuf::from(format!("/nonexistent/{i}"))))
            .collect();
        let parts = batches(&inputs);
        assert_eq!(
            parts.iter().map(|b| b.len()).collect::<Vec<_>>(),
            [256, 256, 88]
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut seen = Vec::new();
        for_each_batch(
            &inputs,
            &pool,
            |input| input.name(),
            |batch, names| {
                assert_eq!(batch.len(), names.len());
                seen.extend(names);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let expected: Vec<String> = inputs.iter().map(Input::name).collect();
        assert_eq!(seen, expected);
    }
}
