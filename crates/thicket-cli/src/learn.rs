//! `thicket learn`: a probabilistic grammar from sample inputs (per-alternative and
//! per-repetition-count probabilities), for `generate --probabilities` and `fuzz`.

use crate::exit;
use crate::inputs::InputArgs;
use crate::spec::SpecArgs;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use thicket_driver::Skipped;
use thicket_gen::prob::DEFAULT_SMOOTHING;
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
    let counted = reader.count_choices(
        &spec.grammar,
        &inputs,
        args.inputs.max_input_size,
        &mut |input, skipped| match skipped {
            Skipped::Unreadable(e) => eprintln!("error: {e}"),
            Skipped::Rejected(e @ ParseError::OutOfMemory { .. }) => {
                eprintln!("error: {}: {e}", input.name())
            }
            Skipped::Rejected(e) => eprintln!("error: {}:{e}", input.name()),
        },
    );
    let (rejected, failed) = (counted.rejected, counted.out_of_memory);
    if counted.counts.trees() == 0 {
        eprintln!("error: no sample could be parsed: nothing to learn from");
        return Ok(if failed > 0 {
            exit::FAILURE
        } else {
            exit::REJECTED
        });
    }
    let text = counted.weights_json(&spec.grammar, args.smoothing);
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    eprintln!("{}", counted.summary());
    Ok(if failed > 0 {
        exit::FAILURE
    } else if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}
