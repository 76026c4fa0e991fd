//! # thicket-mutator
//!
//! thicket's grammar mutations inside other fuzzers. As an AFL++ custom mutator: build this crate
//! (`cargo build --release -p thicket-mutator`) and run
//!
//! ```sh
//! THICKET_SPEC=specs/json.fan \
//! AFL_CUSTOM_MUTATOR_LIBRARY=target/release/libthicket_mutator.so \
//!     afl-fuzz -i seeds -o out -- ./target @@
//! ```
//!
//! Each queue entry AFL++ hands over is parsed into a derivation tree (cached by its
//! bytes), mutated with the campaign's own stack of tree mutations
//! ([`thicket_mutate::stack`]: regenerate a subtree, splice a subtree of the
//! entry AFL++ offers for splicing, recursion, repetition, a terminal's byte) and
//! written back. An entry outside the grammar (AFL++'s own havoc made it) cannot be
//! mutated through a tree: a fresh input is generated instead, and counted.
//!
//! Settings, from the environment (read once, at `afl_custom_init`):
//! - `THICKET_SPEC` (required): the spec, a `.fan`/`.bnf` grammar or JSON grammar;
//! - `THICKET_START`: the start rule (default `start`);
//! - `THICKET_SEED`: the seed (default: the one AFL++ passes, itself from `-s` or drawn);
//! - `THICKET_VALID_ONLY=1`: no byte changes, so every mutant of an entry in the grammar
//!   is in the grammar (constraints are not repaired here);
//! - `THICKET_MAX_DEPTH`: the generation depth (default 30);
//! - `THICKET_MUTATOR_STATS`: a file that receives the counts at `afl_custom_deinit`.
//!
//! AFL++ calls `afl_custom_init`, `afl_custom_fuzz`, `afl_custom_describe` and
//! `afl_custom_deinit` (the C ABI of `docs/custom_mutators.md`); [`GrammarMutator`] is
//! the same as a Rust type.
//!
//! The same mutations serve libFuzzer ([`libfuzzer`]): link the static library
//! (`target/release/libthicket_mutator.a`) into a `-fsanitize=fuzzer` harness and
//! `LLVMFuzzerCustomMutator` / `LLVMFuzzerCustomCrossOver` replace libFuzzer's own
//! mutations, configured by the same variables.

#[cfg(feature = "libfuzzer-hooks")]
pub mod libfuzzer;

use rustc_hash::{FxHashMap, FxHasher};
use std::ffi::{CString, c_char, c_uint, c_void};
use std::hash::Hasher;
use std::path::Path;
use thicket_gen::{GenConfig, GenRng, Generator};
use thicket_grammar::{Grammar, LoadOptions};
use thicket_parse::Parser;
use thicket_tree::DerivationTree;

/// Parsed queue entries kept; past this the cache starts afresh.
const MAX_CACHED_TREES: usize = 4096;

/// Settings of a [`GrammarMutator`].
#[derive(Clone, Debug)]
pub struct MutatorConfig {
    /// Seed of every choice.
    pub seed: u64,
    /// No byte changes: mutants of entries in the grammar stay in it.
    pub valid_only: bool,
    /// The generation depth limit.
    pub max_depth: u32,
}

/// What a mutator has done.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MutatorStats {
    /// Calls of [`GrammarMutator::mutate`].
    pub calls: u64,
    /// Entries parsed (not found in the cache).
    pub parsed: u64,
    /// Calls whose entry is outside the grammar: a fresh input was generated.
    pub fresh: u64,
    /// Mutants over the size AFL++ allows, replaced by a fresh input.
    pub oversized: u64,
}

/// A grammar, its generator and parser, and the parsed entries: the state behind the
/// C functions.
pub struct GrammarMutator {
    generator: Generator<'static>,
    parser: Parser<'static>,
    config: MutatorConfig,
    trees: FxHashMap<u64, Option<DerivationTree>>,
    rng: GenRng,
    out: Vec<u8>,
    description: CString,
    stats: MutatorStats,
}

impl GrammarMutator {
    /// A mutator over `grammar`. The grammar lives as long as the process (AFL++ loads
    /// one mutator per run).
    pub fn new(grammar: Grammar, config: MutatorConfig) -> Result<GrammarMutator, String> {
        let grammar: &'static Grammar = Box::leak(Box::new(grammar));
        let generator = Generator::new(
            grammar,
            GenConfig {
                max_depth: config.max_depth,
                ..GenConfig::default()
            },
        )
        .map_err(|e| e.to_string())?;
        let parser = Parser::new(grammar, Default::default()).map_err(|e| e.to_string())?;
        Ok(GrammarMutator {
            generator,
            parser,
            rng: Generator::rng_for(config.seed, 0),
            config,
            trees: FxHashMap::default(),
            out: Vec::new(),
            description: CString::new("thicket").expect("no NUL"),
            stats: MutatorStats::default(),
        })
    }

    /// A mutator configured from the environment (see the crate docs).
    pub fn from_env(afl_seed: u64) -> Result<GrammarMutator, String> {
        let spec = std::env::var_os("THICKET_SPEC").ok_or(
            "THICKET_SPEC is not set: give the path of the spec (.fan, .bnf, .json or .g4)",
        )?;
        let mut options = LoadOptions::default();
        if let Ok(start) = std::env::var("THICKET_START") {
            options.start = start.trim_matches(['<', '>']).to_string();
        }
        let path = Path::new(&spec);
        let grammar = if thicket_antlr::is_g4(path) {
            // An ANTLR parser grammar finds its lexer beside it, as on the command line.
            let mut paths = vec![path.to_path_buf()];
            paths.extend(thicket_antlr::lexer_beside(path));
            let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
            let start = std::env::var("THICKET_START").ok();
            let start = start.as_deref().map(|s| s.trim_matches(['<', '>']));
            thicket_antlr::load_g4_files(&paths, start, options.max_bytes)
                .map_err(|e| e.render())?
                .spec
                .grammar
        } else {
            thicket_grammar::load_spec_file(path, &options)
                .map_err(|e| e.render())?
                .grammar
        };
        let number = |name: &str| -> Result<Option<u64>, String> {
            std::env::var(name)
                .ok()
                .map(|v| {
                    v.parse()
                        .map_err(|_| format!("{name}={v} is not a whole number"))
                })
                .transpose()
        };
        let config = MutatorConfig {
            seed: number("THICKET_SEED")?.unwrap_or(afl_seed),
            valid_only: std::env::var("THICKET_VALID_ONLY").is_ok_and(|v| v == "1"),
            max_depth: number("THICKET_MAX_DEPTH")?.map_or(30, |d| d.min(u32::MAX.into()) as u32),
        };
        GrammarMutator::new(grammar, config)
    }

    /// Draws the next choices from stream `index` of the seed, so that a mutation is a
    /// function of (seed, index, input): libFuzzer passes a seed per call.
    pub fn reseed(&mut self, index: u64) {
        self.rng = Generator::rng_for(self.config.seed, index);
    }

    /// A crossover of `a` and `b` of at most `max_size` bytes: a subtree of `a`
    /// replaced by a subtree of `b` of the same rule; where that is impossible (an input
    /// outside the grammar, no rule in common), a mutation of `a` with `b` as donor.
    pub fn crossover(&mut self, a: &[u8], b: &[u8], max_size: usize) -> &[u8] {
        if let (Some(tree), Some(donor)) = (self.tree_of(a), self.tree_of(b))
            && let Some(child) =
                thicket_mutate::splice(&self.generator, &tree, &donor, &mut self.rng)
            && child.bytes().len() <= max_size
        {
            self.stats.calls += 1;
            self.out = child.bytes().to_vec();
            self.description = CString::new("thicket-splice").expect("no NUL");
            return &self.out;
        }
        self.mutate(a, Some(b), max_size)
    }

    /// What the mutator has done so far.
    pub fn stats(&self) -> &MutatorStats {
        &self.stats
    }

    /// The tree of `bytes`, parsed once.
    fn tree_of(&mut self, bytes: &[u8]) -> Option<DerivationTree> {
        let mut hasher = FxHasher::default();
        hasher.write(bytes);
        let key = hasher.finish();
        if let Some(tree) = self.trees.get(&key) {
            return tree.clone();
        }
        if self.trees.len() >= MAX_CACHED_TREES {
            self.trees.clear();
        }
        self.stats.parsed += 1;
        let tree = self.parser.parse(bytes).ok().map(|r| r.tree());
        self.trees.insert(key, tree.clone());
        tree
    }

    /// A mutant of `input` of at most `max_size` bytes, with `donor` (another entry)
    /// to splice from; the mutant's name for AFL++'s queue file goes to
    /// [`GrammarMutator::description`].
    pub fn mutate(&mut self, input: &[u8], donor: Option<&[u8]>, max_size: usize) -> &[u8] {
        self.stats.calls += 1;
        let donor = donor.and_then(|d| self.tree_of(d));
        let (bytes, name) = match self.tree_of(input) {
            Some(tree) => {
                let budget = (input.len() * 4).max(4096).min(max_size);
                let grammar = self.generator.grammar();
                let donor = donor.map(|d| thicket_mutate::Donor::new(grammar, d));
                let donors: Vec<&thicket_mutate::Donor> = donor.iter().collect();
                let (mutant, applied) = thicket_mutate::stack(
                    &self.generator,
                    &tree,
                    &donors,
                    budget,
                    self.config.valid_only,
                    thicket_mutate::LeafEdits::default(),
                    &mut self.rng,
                );
                (mutant.bytes().to_vec(), applied.name())
            }
            None => {
                self.stats.fresh += 1;
                (self.fresh(), "gen".to_string())
            }
        };
        let (bytes, name) = if bytes.len() > max_size {
            self.stats.oversized += 1;
            let mut fresh = self.fresh();
            fresh.truncate(max_size);
            (fresh, "gen".to_string())
        } else {
            (bytes, name)
        };
        self.out = bytes;
        self.description = CString::new(format!("thicket-{name}")).expect("no NUL");
        &self.out
    }

    /// A freshly generated input.
    fn fresh(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        self.generator.generate_bytes(&mut self.rng, &mut out);
        out
    }

    /// The last mutant's description (`thicket-regen+splice`, `thicket-gen`, ...).
    pub fn description(&self) -> &CString {
        &self.description
    }
}

/// AFL++: creates the mutator from the environment, or prints why it cannot and ends
/// the process with exit code 1. Returning NULL is not an option: some AFL++ versions
/// go on and call [`afl_custom_fuzz`] with it, so the user would see a segmentation
/// fault after the message instead of the message alone.
///
/// # Safety
/// Called by AFL++ with its state (unused) and a seed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn afl_custom_init(_afl: *mut c_void, seed: c_uint) -> *mut c_void {
    match GrammarMutator::from_env(u64::from(seed)) {
        Ok(mutator) => Box::into_raw(Box::new(mutator)).cast(),
        Err(e) => {
            eprintln!("thicket-mutator: {e}");
            eprintln!(
                "thicket-mutator: cannot start; afl-fuzz stops (see the THICKET_* variables)"
            );
            std::process::exit(1)
        }
    }
}

/// AFL++: mutates `buf` (with `add_buf` to splice from) into a buffer the mutator owns
/// until its next call; returns the mutant's length (at most `max_size`).
///
/// # Safety
/// `data` comes from [`afl_custom_init`]; `buf`/`add_buf` point to `buf_size` /
/// `add_buf_size` readable bytes (or are NULL); `out_buf` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn afl_custom_fuzz(
    data: *mut c_void,
    buf: *const u8,
    buf_size: usize,
    out_buf: *mut *const u8,
    add_buf: *const u8,
    add_buf_size: usize,
    max_size: usize,
) -> usize {
    if data.is_null() {
        // No mutator (a host that ignored a failed init): the input, unchanged.
        // SAFETY: the caller's contract above.
        unsafe { *out_buf = buf };
        return if buf.is_null() {
            0
        } else {
            buf_size.min(max_size)
        };
    }
    // SAFETY: the caller's contract above.
    let mutator = unsafe { &mut *data.cast::<GrammarMutator>() };
    let slice = |ptr: *const u8, len: usize| -> Option<&[u8]> {
        // SAFETY: the caller's contract above.
        (!ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(ptr, len) })
    };
    let input = slice(buf, buf_size).unwrap_or(&[]);
    let donor = slice(add_buf, add_buf_size);
    let mutant = mutator.mutate(input, donor, max_size);
    // SAFETY: the caller's contract above.
    unsafe { *out_buf = mutant.as_ptr() };
    mutant.len()
}

/// AFL++: a name for the last mutant (it goes into the queue file's name).
///
/// # Safety
/// `data` comes from [`afl_custom_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn afl_custom_describe(
    data: *mut c_void,
    _max_description_len: usize,
) -> *const c_char {
    if data.is_null() {
        return c"thicket-uninitialised".as_ptr();
    }
    // SAFETY: the caller's contract above.
    let mutator = unsafe { &*data.cast::<GrammarMutator>() };
    mutator.description().as_ptr()
}

/// AFL++: frees the mutator, writing its counts to `THICKET_MUTATOR_STATS` if set.
///
/// # Safety
/// `data` comes from [`afl_custom_init`] and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn afl_custom_deinit(data: *mut c_void) {
    if data.is_null() {
        return;
    }
    // SAFETY: the caller's contract above.
    let mutator = unsafe { Box::from_raw(data.cast::<GrammarMutator>()) };
    if let Some(path) = std::env::var_os("THICKET_MUTATOR_STATS") {
        let s = mutator.stats();
        let text = format!(
            "calls {}\nparsed {}\nfresh {}\noversized {}\n",
            s.calls, s.parsed, s.fresh, s.oversized
        );
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!(
                "thicket-mutator: cannot write {}: {e}",
                Path::new(&path).display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_mutator(valid_only: bool) -> GrammarMutator {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/json.fan");
        let spec = thicket_grammar::load_spec_file(Path::new(path), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        GrammarMutator::new(
            spec.grammar,
            MutatorConfig {
                seed: 7,
                valid_only,
                max_depth: 30,
            },
        )
        .unwrap()
    }

    #[test]
    fn mutants_of_entries_in_the_grammar_stay_in_it_with_valid_only() {
        let mut mutator = json_mutator(true);
        let parser_check = json_mutator(true);
        let mut entry = br#"{"a": [1, 2, {"b": null}], "c": "text"}"#.to_vec();
        let donor = br#"[true, false, -1.5e3, "x"]"#.to_vec();
        let mut names = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let mutant = mutator.mutate(&entry, Some(&donor), 1 << 16).to_vec();
            assert!(
                parser_check.parser.parse(&mutant).is_ok(),
                "{}",
                String::from_utf8_lossy(&mutant)
            );
            names.insert(mutator.description().to_str().unwrap().to_string());
            // Mutants of mutants, as a campaign makes them (kept small: tests are debug).
            if mutant.len() < 2_000 {
                entry = mutant;
            }
        }
        assert!(names.iter().any(|n| n.contains("splice")), "{names:?}");
        assert!(names.iter().any(|n| n.contains("regen")), "{names:?}");
        assert_eq!(mutator.stats().fresh, 0);
        assert!(mutator.stats().parsed <= 502);
    }

    #[test]
    fn crossovers_take_a_subtree_of_the_other_input_and_repeat_under_a_seed() {
        // Valid only: where no splice applies, the fallback mutation keeps to the grammar.
        let mut mutator = json_mutator(true);
        let check = json_mutator(true);
        let (a, b) = (
            br#"[1, 2, 3]"#.as_slice(),
            br#"{"key": "value"}"#.as_slice(),
        );
        let mut children = std::collections::BTreeSet::new();
        for index in 0..100 {
            mutator.reseed(index);
            let child = mutator.crossover(a, b, 1024).to_vec();
            assert!(check.parser.parse(&child).is_ok());
            mutator.reseed(index);
            assert_eq!(mutator.crossover(a, b, 1024), child.as_slice());
            children.insert(String::from_utf8(child).unwrap());
        }
        assert!(children.iter().any(|c| c.contains("value")), "{children:?}");
    }

    #[test]
    fn entries_outside_the_grammar_get_fresh_inputs_within_the_size() {
        let mut mutator = json_mutator(false);
        let parser_check = json_mutator(true);
        for _ in 0..50 {
            let mutant = mutator.mutate(b"{not json", None, 1 << 16).to_vec();
            assert!(parser_check.parser.parse(&mutant).is_ok());
        }
        assert_eq!(mutator.stats().fresh, 50);
        // Parsed once: the cache answers the other 49 calls.
        assert_eq!(mutator.stats().parsed, 1);
        for _ in 0..200 {
            assert!(mutator.mutate(b"[1, 2, 3]", None, 8).len() <= 8);
        }
    }
}
