//! `thicket learn`: a probabilistic grammar from sample inputs (per-alternative and
//! per-repetition-count probabilities), for `generate --probabilities` and `fuzz`.

use crate::exit;
use crate::inputs::InputArgs;
use crate::spec::SpecArgs;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use thicket_gen::prob::{Counts, DEFAULT_SMOOTHING, Weights};
use thicket_grammar::Grammar;
use thicket_parse::ParseError;

/// Arguments of `thicket learn`.
#[derive(Args, Debug)]
#[command(
    after_help = "Each sample is parsed into its derivation tree; every alternation \
counts the alternative it took and every repetition its count. Probabilities are the \
counts with additive smoothing: (count + A) / (total + A * options), so an alternative \
no sample took keeps a small probability. Rules no sample reached stay uniform. The JSON \
is keyed by rule, then by each choice's text in spec syntax, then by alternative text or \
repetition count (docs/json-output.md). A sample outside the language is reported with \
its line and column and skipped; exit 1 if any was.\n\n\
Examples:\n  thicket learn specs/json.fan samples/ -o probs.json\n  \
thicket generate specs/json.fan --probabilities probs.json -n 10\n  \
thicket generate specs/json.fan --probabilities probs.json --inverse -n 10"
)]
pub struct LearnArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: InputArgs,

    /// Where to write the probabilities (JSON) [default: stdout].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// Additive smoothing A (0: the plain sample frequencies).
    #[arg(long, value_name = "A", default_value_t = DEFAULT_SMOOTHING)]
    smoothing: f64,
}

/// Runs `thicket learn`.
pub fn run(args: LearnArgs) -> anyhow::Result<u8> {
    if !(args.smoothing.is_finite() && args.smoothing >= 0.0) {
        eprintln!("error: --smoothing must be a number >= 0");
        return Ok(exit::USAGE);
    }
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let inputs = match args.inputs.collect_or_report(false) {
        Ok(inputs) => inputs,
        Err(code) => return Ok(code),
    };
    // Inputs that pack bit fields into bytes are read one bit at a time.
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match crate::shared::reader_for(&spec, &input_grammar, Default::default()) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let mut counts = Counts::new(&spec.grammar);
    let mut rejected = 0;
    // Inputs whose chart did not fit in memory.
    let mut failed = 0;
    for input in &inputs {
        let bytes = match input.read(args.inputs.max_input_size) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("error: {e}");
                rejected += 1;
                continue;
            }
        };
        // The chart's memory is free again before counting needs its own.
        match reader.read(&bytes) {
            Ok(tree) => counts.add_tree(&spec.grammar, &tree),
            Err(e @ ParseError::OutOfMemory { .. }) => {
                eprintln!("error: {}: {e}", input.name());
                failed += 1;
            }
            Err(e) => {
                eprintln!("error: {}:{e}", input.name());
                rejected += 1;
            }
        }
    }
    if counts.trees() == 0 {
        eprintln!("error: no sample could be parsed: nothing to learn from");
        return Ok(if failed > 0 {
            exit::FAILURE
        } else {
            exit::REJECTED
        });
    }
    let weights = Weights::learn(&spec.grammar, &counts, args.smoothing, None);
    let mut text = serde_json::to_string_pretty(&weights.to_json(
        &spec.grammar,
        args.smoothing,
        counts.trees(),
    ))?;
    text.push('\n');
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    eprintln!(
        "learned from {} samples{}",
        counts.trees(),
        if rejected > 0 {
            format!(" ({rejected} rejected)")
        } else {
            String::new()
        }
    );
    Ok(if failed > 0 {
        exit::FAILURE
    } else if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}

/// Reads a probabilities file written by `thicket learn` for `grammar` (inverted with
/// `inverse`), or prints why not (naming the file) and returns the exit code.
pub fn load_weights(path: &Path, grammar: &Grammar, inverse: bool) -> Result<Weights, u8> {
    let fail = |message: String| {
        eprintln!("error: {}: {message}", path.display());
        exit::FAILURE
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("not JSON: {e}")))?;
    let weights = Weights::from_json(grammar, &value).map_err(|e| fail(e.to_string()))?;
    Ok(if inverse {
        weights.inverted(grammar)
    } else {
        weights
    })
}
