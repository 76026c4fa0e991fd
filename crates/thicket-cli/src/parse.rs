//! `thicket parse`: inputs to derivation trees, or just a validity verdict.

use crate::exit;
use crate::inputs::InputArgs;
use crate::shared::{input_grammar, reader_for};
use crate::spec::SpecArgs;
use clap::{Args, ValueEnum};
use std::io::Write;
use thicket_driver::InputReader;
use thicket_driver::files::for_each_batch;
use thicket_driver::parsed::{Failure, ParseRequest, Parsed as Outcome, count_line, failure_line};
use thicket_parse::{ParseConfig, TreeCount};
use thicket_tree::Rendering;

/// Arguments of `thicket parse`.
#[derive(Args, Debug)]
#[command(
    after_help = "Reads each FILE (or stdin for `-` or no FILE), parses it with the spec's \
grammar and prints its derivation tree. Ambiguous inputs get the derivation the parser found \
first. A folder stands for every file below it (recursively, sorted; hidden ones skipped). \
An input that cannot be read is reported and the others are still parsed. Trees are written \
as they are read, without holding the whole rendering; the indented format shows depths beyond \
32 as `[depth]` instead of further indentation. Exit code 0 if every input parses, 1 if any \
is not in the language (and all could be read), 3 if the spec has errors, 4 if any input \
cannot be read or is over --max-input-size.\n\n\
Examples:\n  thicket parse specs/json.fan data.json\n  \
echo -n '1+2' | thicket parse specs/expr.fan --format sexp\n  \
thicket parse specs/csv.bnf --quiet *.csv && echo all valid\n  \
thicket parse specs/expr.fan in.txt --format dot | dot -Tsvg > tree.svg"
)]
pub struct ParseArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: InputArgs,

    /// How to print trees.
    #[arg(long, value_enum, default_value_t = TreeFormat::Tree)]
    format: TreeFormat,

    /// Print nothing; the exit code says whether every input parses.
    #[arg(short, long)]
    quiet: bool,

    /// Print every derivation tree of each input (up to --max-trees), in a fixed order,
    /// and their number on stderr. For inputs with finitely many trees.
    #[arg(long)]
    all: bool,

    /// With --all, the most trees printed per input.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "all")]
    max_trees: usize,

    /// Also count each input's derivation trees (exhaustive; for moderate inputs) and
    /// print the count on stderr (and as "trees" in JSON output).
    #[arg(long)]
    count: bool,

    /// Give up on an input after this many parser items (bounds memory: 20 bytes each).
    #[arg(long, value_name = "N", default_value_t = ParseConfig::default().max_items)]
    max_items: usize,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TreeFormat {
    /// Indented, one node per line.
    Tree,
    /// JSON lines: {"file", "ok", "tree"} or {"file", "ok": false, "error": {...}}. A
    /// terminal is ["text", []], or ["text", [], "hex"] when its bytes are not UTF-8:
    /// the text as constraints read it (each byte of an invalid sequence as the
    /// character of the same number, 0xFF as U+00FF) and the exact bytes in hex.
    Json,
    /// S-expressions.
    Sexp,
    /// Graphviz DOT.
    Dot,
}

impl TreeFormat {
    fn rendering(self) -> Rendering {
        match self {
            TreeFormat::Tree => Rendering::Indented,
            TreeFormat::Json => Rendering::FuzzingbookJson,
            TreeFormat::Sexp => Rendering::Sexp,
            TreeFormat::Dot => Rendering::Dot,
        }
    }
}

/// Runs `thicket parse`.
pub fn run(args: ParseArgs) -> anyhow::Result<u8> {
    // An ANTLR grammar is also decided exactly (its lexer, then its parser rules):
    // the byte grammar alone accepts more (see thicket-antlr).
    let antlr = match args.spec.antlr() {
        Ok(antlr) => antlr,
        Err(code) => return Ok(code),
    };
    let spec = match &antlr {
        Some(antlr) => antlr.spec.clone(),
        None => match args.spec.load() {
            Ok(spec) => spec,
            Err(code) => return Ok(code),
        },
    };
    let checker = antlr.as_ref().map(|a| a.checker());
    let grammar = &spec.grammar;
    let config = ParseConfig {
        max_items: args.max_items,
        ..ParseConfig::default()
    };
    // Inputs that pack bit fields into bytes are read one bit at a time.
    let input_grammar = match input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match reader_for(&spec, &input_grammar, config) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let inputs = match args.inputs.collect_or_report(true) {
        Ok(inputs) => inputs,
        Err(code) => return Ok(code),
    };
    let pool = args.jobs.pool()?;
    let request = ParseRequest {
        quiet: args.quiet,
        count: args.count,
        all: args.all,
        max_trees: args.max_trees,
        rendering: args.format.rendering(),
    };
    let json = args.format == TreeFormat::Json;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut rejected, mut unreadable) = (0, 0);
    let many = inputs.len() > 1;
    for_each_batch(
        &inputs,
        &pool,
        |input| match input.read(args.inputs.max_input_size) {
            Ok(text) => {
                // An ANTLR grammar's input is read as ANTLR reads it.
                let text = match antlr {
                    Some(_) => thicket_antlr::antlr_text(&text).into_owned(),
                    None => text,
                };
                request.parse(&reader, checker.as_ref(), grammar, text)
            }
            Err(e) => Outcome::Unreadable(e),
        },
        |batch, outcomes: Vec<Outcome>| {
            for (input, outcome) in batch.iter().zip(outcomes) {
                let name = input.name();
                // A large input may turn out to need counting in memory after all: its
                // outcome is then printed as a small one's.
                let mut next = Some(outcome);
                while let Some(outcome) = next.take() {
                    match outcome {
                        Outcome::Parsed(tree, count) => {
                            if args.quiet {
                                continue;
                            }
                            if let Some(count) = &count {
                                print_count(&name, count);
                            }
                            request.write_parsed(&mut out, &name, &tree, count.as_ref(), many)?;
                        }
                        Outcome::Large(text) => {
                            let InputReader::Text(parser) = &reader else {
                                unreachable!("only text inputs are left to be streamed")
                            };
                            // Parsed here, one at a time, and its tree written as it is read.
                            next = request.write_large(
                                &mut out,
                                parser,
                                grammar,
                                (&name, &text),
                                many,
                                &mut |count| print_count(&name, count),
                            )?;
                        }
                        failed => {
                            if let Some(line) =
                                failure_line(&name, &failed).filter(|_| json && !args.quiet)
                            {
                                writeln!(out, "{line}")?;
                            }
                            let (message, failure) =
                                failed.error(&name, args.quiet).expect("a failure");
                            if let Some(message) = message {
                                eprintln!("error: {message}");
                            }
                            match failure {
                                Failure::Rejected => rejected += 1,
                                Failure::Unreadable => unreadable += 1,
                            }
                        }
                    }
                }
            }
            out.flush()?;
            anyhow::Ok(())
        },
    )?;
    out.flush()?;
    Ok(if unreadable > 0 {
        exit::FAILURE
    } else if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}

/// The count of an input's trees, on stderr.
fn print_count(name: &str, count: &TreeCount) {
    eprintln!("{}", count_line(name, count));
}
