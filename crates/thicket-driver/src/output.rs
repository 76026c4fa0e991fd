//! Generated inputs written out, as `thicket generate` writes them: each to a file of
//! its own in a folder (whole or not at all), or to one stream framed so that inputs
//! can be told apart (a separator, or a header line with the length), as raw bytes or
//! as JSON lines with their trees; and the figures of what was written counted on the
//! way ([`thicket_cover::GenSummary`]).

use rayon::prelude::*;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use thicket_cover::GenSummary;
use thicket_fandango::{InputStream, Made, StreamConfig};
use thicket_gen::{GenStats, Generator, Producer};
use thicket_grammar::Grammar;
use thicket_tree::DerivationTree;

/// Inputs generated per parallel batch; output order never depends on it.
const BATCH: u64 = 2048;

/// How inputs written to one stream are told apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framing {
    /// These bytes after each input (a line break by default when the grammar cannot
    /// produce one; NUL; a separator of the user's).
    Separator(Vec<u8>),
    /// A line `--- N (L bytes) ---` before each input and a line break after it: the
    /// default when inputs may contain line breaks.
    Header,
}

impl Framing {
    /// The framing that keeps `grammar`'s inputs apart when none is asked for: a line
    /// break after each if no input can hold one, else a header line.
    pub fn default_for(grammar: &Grammar) -> Framing {
        if grammar.may_produce_byte(b'\n') {
            Framing::Header
        } else {
            Framing::Separator(vec![b'\n'])
        }
    }

    /// A separator written with escapes: `\n \t \r \0 \\` and `\xHH` with exactly
    /// two hex digits; other characters stand for their UTF-8 bytes.
    pub fn separator(text: &str) -> Result<Framing, String> {
        let mut out = Vec::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            match chars.next() {
                Some('n') => out.push(b'\n'),
                Some('t') => out.push(b'\t'),
                Some('r') => out.push(b'\r'),
                Some('0') => out.push(0),
                Some('\\') => out.push(b'\\'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    let byte = (hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                        .then(|| u8::from_str_radix(&hex, 16).ok())
                        .flatten()
                        .ok_or_else(|| {
                            format!(
                                "`\\x{hex}`: `\\x` must be followed by two hex digits, as in \\x04"
                            )
                        })?;
                    out.push(byte);
                }
                other => {
                    return Err(format!(
                        "unknown escape `\\{}`; use \\n \\t \\r \\0 \\\\ or \\xHH",
                        other.map(String::from).unwrap_or_default()
                    ));
                }
            }
        }
        Ok(Framing::Separator(out))
    }
}

/// One generated input, ready to write.
pub struct Generated {
    /// What is written: the input itself, or its JSON line.
    pub output: Vec<u8>,
    /// Length of the input (not of its JSON line).
    pub input_len: usize,
    /// Hash of the input, for the share of distinct inputs.
    pub input_hash: u64,
    /// The generator's figures for it.
    pub stats: GenStats,
    /// The input's tree, kept for the figures where the producer made one anyway.
    pub tree: Option<DerivationTree>,
    /// The input's random stream.
    pub index: u64,
}

impl Generated {
    fn new(output: Vec<u8>, input: &[u8], stats: GenStats) -> Generated {
        // Fx: fast and the same on every run; for uniqueness and the distinct share.
        let mut hasher = rustc_hash::FxHasher::default();
        input.hash(&mut hasher);
        Generated {
            input_len: input.len(),
            input_hash: hasher.finish(),
            output,
            stats,
            tree: None,
            index: 0,
        }
    }

    /// An input written as it is.
    fn raw(input: Vec<u8>, stats: GenStats) -> Generated {
        let mut item = Generated::new(Vec::new(), &input, stats);
        item.output = input;
        item
    }

    /// An input of the seed's stream: as it is, or (`json`) as a JSON line with its
    /// tree; the tree kept with `keep_tree`.
    pub fn from_made(
        made: Made,
        seed: u64,
        grammar: &Grammar,
        json: bool,
        keep_tree: bool,
    ) -> Generated {
        let mut item = match &made.tree {
            // The input is the stream's bytes: the tree's text, or its bits packed.
            Some(tree) if json => Generated::from_tree_input(
                tree,
                &made.bytes,
                made.index,
                seed,
                grammar,
                true,
                made.stats,
            ),
            _ => Generated::raw(made.bytes, made.stats),
        };
        item.index = made.index;
        item.tree = made.tree.filter(|_| keep_tree);
        item
    }

    /// The input `input` a tree stands for (its text, or its bits packed): as it is, or
    /// (`json`) as a JSON line with the tree.
    pub fn from_tree_input(
        tree: &DerivationTree,
        input: &[u8],
        index: u64,
        seed: u64,
        grammar: &Grammar,
        json: bool,
        stats: GenStats,
    ) -> Generated {
        if json {
            let line = json_line(index, seed, input, &tree.to_fuzzingbook_json(grammar));
            Generated::new(line.into_bytes(), input, stats)
        } else {
            Generated::raw(input.to_vec(), stats)
        }
    }
}

/// Where generated inputs go: files in a folder, or one stream, framed.
pub struct OutputSink<W: Write> {
    /// The stream (when there is no folder).
    pub out: W,
    /// The folder each input gets a file in, named after its number.
    pub dir: Option<PathBuf>,
    /// The file names' ending.
    pub suffix: String,
    /// Digits in file names (numbers zero-padded to it).
    pub width: usize,
    /// How inputs on the stream are told apart (JSON lines need none).
    pub framing: Framing,
    /// JSON lines rather than the inputs themselves.
    pub json: bool,
}

impl<W: Write> OutputSink<W> {
    /// Writes input number `n` (its file is named after `n`).
    pub fn write(&mut self, n: u64, item: &Generated) -> std::io::Result<()> {
        match &self.dir {
            Some(dir) => {
                let name = format!("{n:0width$}{}", self.suffix, width = self.width);
                write_atomically(dir, &name, &item.output)?;
            }
            None if self.json => {
                self.out.write_all(&item.output)?;
                self.out.write_all(b"\n")?;
            }
            None => match &self.framing {
                Framing::Separator(separator) => {
                    self.out.write_all(&item.output)?;
                    self.out.write_all(separator)?;
                }
                Framing::Header => {
                    writeln!(self.out, "--- {n} ({} bytes) ---", item.output.len())?;
                    self.out.write_all(&item.output)?;
                    self.out.write_all(b"\n")?;
                }
            },
        }
        Ok(())
    }

    /// Writes trees and the inputs they stand for, numbered from 0 (files named with at
    /// least six digits), counting them and their k-paths in `summary`; then flushes.
    pub fn write_trees(
        &mut self,
        trees: &[(&DerivationTree, Vec<u8>)],
        seed: u64,
        grammar: &Grammar,
        summary: &mut GenSummary,
    ) -> std::io::Result<()> {
        self.width = digits(trees.len().saturating_sub(1) as u64).max(6);
        for (n, (tree, input)) in trees.iter().enumerate() {
            let item = Generated::from_tree_input(
                tree,
                input,
                n as u64,
                seed,
                grammar,
                self.json,
                GenStats::default(),
            );
            summary.add(item.input_len, item.input_hash, &item.stats);
            summary.add_paths(Some(tree), || None);
            self.write(n as u64, &item)?;
        }
        self.out.flush()
    }
}

/// Where a stream's inputs go: written as they are made (each batch in `pool`) and
/// counted in `summary`; `written` is told of each.
pub struct StreamOutput<'a, W: Write> {
    /// The threads each batch is made on.
    pub pool: &'a rayon::ThreadPool,
    /// Where the inputs are written.
    pub sink: &'a mut OutputSink<W>,
    /// Their figures.
    pub summary: &'a mut GenSummary,
    /// Called after each input written (a progress bar's step).
    pub written: &'a dyn Fn(),
}

impl<W: Write> StreamOutput<'_, W> {
    /// Writes the inputs of `producer`'s stream (their k-paths counted too with
    /// `count_paths`); returns the stream's state at its end.
    pub fn write<P: Producer>(
        &mut self,
        producer: &P,
        config: StreamConfig,
        count_paths: bool,
    ) -> std::io::Result<InputStream> {
        let mut stream = InputStream::new(config);
        // Against a deadline, small batches: 32 inputs per thread.
        let streams = match config.deadline {
            Some(_) => BATCH.min(32 * self.pool.current_num_threads() as u64),
            None => BATCH,
        };
        let (seed, grammar, json) = (config.seed, producer.grammar(), self.sink.json);
        let keep_trees = self.summary.counts_paths();
        while stream.stopped().is_none() {
            let first = stream.made();
            let batch: Vec<Generated> = self.pool.install(|| {
                stream
                    .next_batch(producer, streams)
                    .into_par_iter()
                    .map(|made| Generated::from_made(made, seed, grammar, json, keep_trees))
                    .collect()
            });
            for (n, item) in (first..).zip(&batch) {
                self.summary
                    .add(item.input_len, item.input_hash, &item.stats);
                if count_paths {
                    // The tree again from the input's own stream (the same input: byte
                    // and tree generation make the same choices), outside the
                    // throughput's timing.
                    self.summary.add_paths(item.tree.as_ref(), || {
                        let mut rng = Generator::rng_for(seed, item.index);
                        producer.tree(&mut rng).ok().map(|fresh| fresh.tree)
                    });
                }
                self.sink.write(n, item)?;
                (self.written)();
            }
        }
        Ok(stream)
    }
}

/// An input's JSON line: `{"index", "seed", "input" (or "input_hex" when it is not
/// UTF-8), "tree"}`, `tree` being the tree's JSON already.
pub fn json_line(index: u64, seed: u64, input: &[u8], tree: &str) -> String {
    let input_field = match std::str::from_utf8(input) {
        Ok(text) => format!(
            "\"input\":{}",
            serde_json::to_string(text).expect("strings serialize")
        ),
        Err(_) => format!("\"input_hex\":\"{}\"", thicket_tree::hex(input)),
    };
    format!("{{\"index\":{index},\"seed\":{seed},{input_field},\"tree\":{tree}}}")
}

/// The decimal digits of `n`.
pub fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Temporary files [`write_atomically`] is writing now, for
/// [`remove_files_in_flight`].
static IN_FLIGHT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the temporary files [`write_atomically`] is writing now: for a program's
/// interrupt handler, so that an interrupted run leaves only whole files behind. The
/// list stays locked afterwards, so that no writer creates another temporary file
/// before the process exits: call it only right before exiting.
pub fn remove_files_in_flight() {
    let files = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    for file in files.iter() {
        let _ = std::fs::remove_file(file);
    }
    std::mem::forget(files);
}

/// Makes `dir` ready for a file per input: created if missing, and refused if it
/// holds files, unless `force` (same-named files are then replaced, others stay). The
/// error names the folder and says what to do.
pub fn prepare_dir(dir: &Path, force: bool) -> Result<(), String> {
    let display = dir.display();
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {display}: {e}"))?;
    let occupied = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read output directory {display}: {e}"))?
        .next()
        .is_some();
    if occupied && !force {
        return Err(format!(
            "output directory {display} is not empty; give --force to write into it \
             anyway (same-named files are replaced, others stay)"
        ));
    }
    Ok(())
}

/// Writes `dir/name` whole or not at all: into a hidden temporary file first (removed
/// again if writing fails, e.g. on a full disk, or by [`remove_files_in_flight`]), then
/// renamed over `name`. The error names the file.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let path = dir.join(name);
    let temp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let in_flight = || IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    // Listed and created under one lock: an interrupt handler that removed the listed
    // files never sees a file created after it looked.
    let created = {
        let mut files = in_flight();
        files.push(temp.clone());
        std::fs::File::create(&temp)
    };
    let written = created.and_then(|mut file| {
        file.write_all(bytes)?;
        file.flush()
    });
    let result = written.and_then(|()| std::fs::rename(&temp, &path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    in_flight().retain(|t| t != &temp);
    result
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_read_their_escapes() {
        assert_eq!(
            Framing::separator(r"--\n\x04\0"),
            Ok(Framing::Separator(b"--\n\x04\0".to_vec()))
        );
        assert!(
            Framing::separator(r"\x4")
                .unwrap_err()
                .contains("two hex digits")
        );
        assert!(
            Framing::separator(r"\q")
                .unwrap_err()
                .starts_with("unknown escape `\\q`")
        );
    }

    #[test]
    fn json_lines_carry_text_as_a_string_and_other_bytes_as_hex() {
        assert_eq!(
            json_line(3, 7, b"a\"b", "[]"),
            r#"{"index":3,"seed":7,"input":"a\"b","tree":[]}"#
        );
        assert_eq!(
            json_line(0, 1, &[0xff, 0x00], "[]"),
            r#"{"index":0,"seed":1,"input_hex":"ff00","tree":[]}"#
        );
    }

    #[test]
    fn files_are_written_whole_and_named_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = OutputSink {
            out: Vec::new(),
            dir: Some(dir.path().to_path_buf()),
            suffix: ".txt".into(),
            width: 6,
            framing: Framing::Header,
            json: false,
        };
        let item = Generated::raw(b"hello".to_vec(), GenStats::default());
        sink.write(12, &item).unwrap();
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["000012.txt"]);
        assert_eq!(
            std::fs::read(dir.path().join("000012.txt")).unwrap(),
            b"hello"
        );
        assert!(sink.out.is_empty());
    }

    #[test]
    fn a_header_frames_each_input_with_its_length() {
        let mut sink = OutputSink {
            out: Vec::new(),
            dir: None,
            suffix: String::new(),
            width: 6,
            framing: Framing::Header,
            json: false,
        };
        sink.write(0, &Generated::raw(b"a\nb".to_vec(), GenStats::default()))
            .unwrap();
        assert_eq!(sink.out, b"--- 0 (3 bytes) ---\na\nb\n");
        assert_eq!(digits(0), 1);
        assert_eq!(digits(999_999), 6);
    }
}
