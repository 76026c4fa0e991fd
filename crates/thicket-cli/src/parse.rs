//! `thicket parse`: inputs to derivation trees, or just a validity verdict.

use crate::exit;
use crate::inputs::InputArgs;
use crate::shared::{input_grammar, reader_for};
use crate::spec::SpecArgs;
use clap::{Args, ValueEnum};
use std::io::Write;
use thicket_driver::InputReader;
use thicket_driver::files::for_each_batch;
use thicket_grammar::Grammar;
use thicket_parse::{ParseConfig, ParseError, Parser, Rejection, TreeCount};

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

enum Outcome {
    /// The rendered tree, and the tree count if asked for.
    Parsed(String, Option<TreeCount>),
    Rejected(String, Box<Rejection>),
    TooComplex(String),
    /// Not parsed: its chart did not fit in memory (the message names the limit).
    OutOfMemory(String),
    /// Accepted and large: its tree is streamed when its turn comes to be printed.
    Large(Vec<u8>),
    /// Could not be read.
    Unreadable(String),
}

/// Inputs up to this size (64 KiB) are parsed and rendered in parallel, into memory;
/// larger ones are parsed when their turn comes to be printed, and their tree streamed
/// to stdout as it is read (memory: the chart's only).
const RENDER_IN_MEMORY: usize = 64 << 10;

impl Outcome {
    /// The outcome of an input the parser did not accept.
    fn failed(text: &[u8], error: ParseError) -> Outcome {
        match error {
            ParseError::Rejected(r) => Outcome::Rejected(r.excerpt(text), r),
            e @ ParseError::TooComplex { .. } => Outcome::TooComplex(e.to_string()),
            e @ ParseError::OutOfMemory { .. } => Outcome::OutOfMemory(e.to_string()),
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
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut rejected, mut unreadable) = (0, 0);
    let many = inputs.len() > 1;
    for_each_batch(
        &inputs,
        &pool,
        |input| {
            let text = match input.read(args.inputs.max_input_size) {
                // An ANTLR grammar's input is read as ANTLR reads it.
                Ok(text) if antlr.is_some() => thicket_antlr::antlr_text(&text).into_owned(),
                Ok(text) => text,
                Err(e) => return Outcome::Unreadable(e),
            };
            if let Some(Err(r)) = checker.as_ref().map(|c| c.accepts(&text)) {
                return Outcome::Rejected(r.excerpt(&text), Box::new(r));
            }
            match &reader {
                InputReader::Bits(unpacker) => parse_packed(unpacker, grammar, &args, text),
                InputReader::Text(parser) => parse_one(parser, grammar, &args, text),
            }
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
                            if args.format == TreeFormat::Json {
                                // "trees" is a number, or null with the reason in "trees_unknown".
                                let trees = match count {
                                    None => String::new(),
                                    Some(TreeCount::Finite(n)) => format!(",\"trees\":{n}"),
                                    Some(TreeCount::Infinite) => {
                                        ",\"trees\":null,\"trees_unknown\":\"infinite\"".to_string()
                                    }
                                    Some(TreeCount::Overflow) => {
                                        ",\"trees\":null,\"trees_unknown\":\"overflow\"".to_string()
                                    }
                                    Some(TreeCount::Unknown) => {
                                        ",\"trees\":null,\"trees_unknown\":\"too_complex\""
                                            .to_string()
                                    }
                                };
                                // With --all, "all" holds the list of trees instead of "tree".
                                let field = if args.all { "all" } else { "tree" };
                                writeln!(
                                    out,
                                    "{{\"file\":{},\"ok\":true{trees},\"{field}\":{tree}}}",
                                    json_str(&name)
                                )?;
                            } else {
                                if many {
                                    writeln!(out, "# {name}")?;
                                }
                                write!(out, "{tree}")?;
                                if !tree.ends_with('\n') {
                                    writeln!(out)?;
                                }
                            }
                        }
                        Outcome::Large(text) => {
                            let InputReader::Text(parser) = &reader else {
                                unreachable!("only `parse_one` streams, and only text inputs")
                            };
                            // Parsed here, one at a time, and its tree written as it is read:
                            // memory is the chart's, not the tree's or the rendering's.
                            let result = match parser.parse_streaming(&text) {
                                Ok(result) => result,
                                Err(e) => {
                                    match Outcome::failed(&text, e) {
                                        Outcome::Rejected(excerpt, r) => {
                                            if args.format == TreeFormat::Json {
                                                writeln!(out, "{}", rejection_json(&name, &r)?)?;
                                            }
                                            eprintln!("error: {name}:{r}\n{excerpt}");
                                        }
                                        Outcome::TooComplex(message) => {
                                            if args.format == TreeFormat::Json {
                                                writeln!(out, "{}", message_json(&name, &message))?;
                                            }
                                            eprintln!("error: {name}: {message}")
                                        }
                                        Outcome::OutOfMemory(message) => {
                                            if args.format == TreeFormat::Json {
                                                writeln!(
                                                    out,
                                                    "{}",
                                                    out_of_memory_json(&name, &message)
                                                )?;
                                            }
                                            eprintln!("error: {name}: {message}");
                                            unreadable += 1;
                                            continue;
                                        }
                                        _ => unreachable!(
                                            "a parse fails by rejection, complexity or memory"
                                        ),
                                    }
                                    rejected += 1;
                                    continue;
                                }
                            };
                            let counting = args.count || args.all;
                            if counting && !result.known_unambiguous() {
                                next = Some(counted(&result, grammar, &args));
                                continue;
                            }
                            // Its one tree (`--all` lists it, `--count` counts it).
                            if counting {
                                print_count(&name, &TreeCount::Finite(1));
                            }
                            if args.format == TreeFormat::Json {
                                let trees = if counting { ",\"trees\":1" } else { "" };
                                let field = if args.all { "\"all\":[" } else { "\"tree\":" };
                                write!(
                                    out,
                                    "{{\"file\":{},\"ok\":true{trees},{field}",
                                    json_str(&name)
                                )?;
                            } else {
                                if many {
                                    writeln!(out, "# {name}")?;
                                }
                                if args.all {
                                    writeln!(out, "# tree 1 of 1")?;
                                }
                            }
                            let mut renderer =
                                Renderer::new(grammar, rendering(args.format), &mut out);
                            result.build_into(&mut renderer);
                            renderer.finish()?;
                            match args.format {
                                TreeFormat::Json if args.all => writeln!(out, "]}}")?,
                                TreeFormat::Json => writeln!(out, "}}")?,
                                TreeFormat::Sexp => writeln!(out)?,
                                TreeFormat::Tree | TreeFormat::Dot => {}
                            }
                        }
                        Outcome::Rejected(excerpt, r) => {
                            rejected += 1;
                            if args.quiet {
                                continue;
                            }
                            if args.format == TreeFormat::Json {
                                writeln!(out, "{}", rejection_json(&name, &r)?)?;
                            }
                            eprintln!("error: {name}:{r}\n{excerpt}");
                        }
                        Outcome::TooComplex(message) => {
                            rejected += 1;
                            if args.quiet {
                                continue;
                            }
                            if args.format == TreeFormat::Json {
                                writeln!(out, "{}", message_json(&name, &message))?;
                            }
                            eprintln!("error: {name}: {message}");
                        }
                        Outcome::OutOfMemory(message) => {
                            unreadable += 1;
                            if args.format == TreeFormat::Json && !args.quiet {
                                writeln!(out, "{}", out_of_memory_json(&name, &message))?;
                            }
                            eprintln!("error: {name}: {message}");
                        }
                        Outcome::Unreadable(message) => {
                            unreadable += 1;
                            if args.format == TreeFormat::Json && !args.quiet {
                                writeln!(out, "{}", unreadable_json(&name, &message))?;
                            }
                            eprintln!("error: {message}");
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
    let plural = if *count == TreeCount::Finite(1) {
        ""
    } else {
        "s"
    };
    eprintln!("{name}: {count} derivation tree{plural}");
}

/// The JSON line of an input that failed without a position: every input has its line.
fn message_json(name: &str, message: &str) -> String {
    format!(
        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{}}}}}",
        json_str(name),
        json_str(message)
    )
}

/// The JSON line of an input whose chart did not fit in memory.
fn out_of_memory_json(name: &str, message: &str) -> String {
    format!(
        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{},\"out_of_memory\":true}}}}",
        json_str(name),
        json_str(message)
    )
}

/// The JSON line of an input that could not be read.
fn unreadable_json(name: &str, message: &str) -> String {
    format!(
        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{},\"unreadable\":true}}}}",
        json_str(name),
        json_str(message)
    )
}

/// The JSON line of a rejected input.
fn rejection_json(name: &str, r: &Rejection) -> anyhow::Result<String> {
    Ok(format!(
        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{},\"offset\":{},\"line\":{},\"column\":{},\"found\":{},\"expected\":{},\"rules\":{}}}}}",
        json_str(name),
        json_str(&r.to_string()),
        r.offset,
        r.line,
        r.column,
        r.found.map_or("null".to_string(), |b| b.to_string()),
        serde_json::to_string(&r.expected)?,
        serde_json::to_string(&r.rules)?,
    ))
}

/// Parses one input and renders what is to be printed of it (large accepted inputs are
/// left to be streamed).
fn parse_one(parser: &Parser<'_>, grammar: &Grammar, args: &ParseArgs, text: Vec<u8>) -> Outcome {
    if args.quiet && !args.count && !args.all {
        // Only the verdict: recognising reserves and reads no tree.
        return match parser.recognize(&text) {
            Ok(()) => Outcome::Parsed(String::new(), None),
            Err(e) => Outcome::failed(&text, e),
        };
    }
    if !args.quiet && text.len() > RENDER_IN_MEMORY {
        // Parsed when its turn comes to be printed, and its tree streamed then (counted
        // in memory only if the chart does not tell that there is one).
        return Outcome::Large(text);
    }
    // Quiet, a tree is only read to list trees: none is reserved.
    let parsed = if args.quiet {
        parser.parse_streaming(&text)
    } else {
        parser.parse(&text)
    };
    match parsed {
        Ok(result) => counted(&result, grammar, args),
        Err(e) => Outcome::failed(&text, e),
    }
}

/// Parses one input that packs bit fields into bytes, and renders what is to be printed
/// of it (in memory, whatever its size: such inputs are binary files of moderate size).
fn parse_packed(
    unpacker: &thicket_fandango::Unpacker<'_>,
    grammar: &Grammar,
    args: &ParseArgs,
    text: Vec<u8>,
) -> Outcome {
    if !args.all && !args.count {
        return match unpacker.parse(&text) {
            Ok(tree) if args.quiet => {
                drop(tree);
                Outcome::Parsed(String::new(), None)
            }
            Ok(tree) => Outcome::Parsed(render(&tree, grammar, args.format), None),
            Err(e) => Outcome::failed(&text, e),
        };
    }
    // The trees over the unpacked input, each packed again (one whose bits do not fill
    // whole bytes stands for no input and is left out).
    let read = unpacker.with_parse(&text, |result| {
        let count = result.count_trees();
        let trees = if args.all {
            result.trees(args.max_trees).map(|(trees, _)| trees)
        } else {
            Err(count)
        };
        (count, trees.unwrap_or_else(|_| vec![result.tree()]))
    });
    let (count, trees) = match read {
        Ok(read) => read,
        Err(e) => return Outcome::failed(&text, e),
    };
    let mut packed = Vec::new();
    let mut first_error = None;
    for tree in &trees {
        match unpacker.repack(tree, &text) {
            Ok(tree) => packed.push(tree),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if packed.is_empty() {
        return match first_error {
            Some(e) => Outcome::failed(&text, e),
            None => Outcome::Parsed(String::new(), Some(count)),
        };
    }
    if args.quiet {
        return Outcome::Parsed(String::new(), Some(count));
    }
    let rendered = if args.all {
        if args.max_trees == 0 {
            packed.clear();
        }
        list_trees(&packed, count, grammar, args.format)
    } else {
        render(&packed[0], grammar, args.format)
    };
    Outcome::Parsed(rendered, Some(count))
}

/// What is printed of an accepted input, rendered in memory: its tree, or with `--all`
/// its trees, and with `--count` or `--all` their number.
fn counted(
    result: &thicket_parse::ParseResult<'_, '_>,
    grammar: &Grammar,
    args: &ParseArgs,
) -> Outcome {
    if args.all {
        return match result.trees(args.max_trees) {
            Ok((trees, total)) => Outcome::Parsed(
                list_trees(&trees, TreeCount::Finite(total), grammar, args.format),
                Some(TreeCount::Finite(total)),
            ),
            // Accepted all the same: its first derivation stands for the rest, which
            // cannot be listed (infinitely many, or more than 2^128).
            Err(count) => {
                let first = if args.max_trees == 0 {
                    Vec::new()
                } else {
                    vec![result.tree()]
                };
                Outcome::Parsed(list_trees(&first, count, grammar, args.format), Some(count))
            }
        };
    }
    let count = args.count.then(|| result.count_trees());
    if args.quiet {
        return Outcome::Parsed(String::new(), count);
    }
    let rendered = render(&result.tree(), grammar, args.format);
    Outcome::Parsed(rendered, count)
}

fn rendering(format: TreeFormat) -> Rendering {
    match format {
        TreeFormat::Tree => Rendering::Indented,
        TreeFormat::Json => Rendering::FuzzingbookJson,
        TreeFormat::Sexp => Rendering::Sexp,
        TreeFormat::Dot => Rendering::Dot,
    }
}

/// Several trees of one input: a JSON array, or each rendering under a `# tree k of n`
/// heading.
fn list_trees(
    trees: &[thicket_tree::DerivationTree],
    total: TreeCount,
    grammar: &Grammar,
    format: TreeFormat,
) -> String {
    let rendered = trees.iter().map(|t| render(t, grammar, format));
    if format == TreeFormat::Json {
        format!("[{}]", rendered.collect::<Vec<_>>().join(","))
    } else {
        rendered
            .enumerate()
            .map(|(k, t)| format!("# tree {} of {total}\n{}", k + 1, t.trim_end()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn render(tree: &thicket_tree::DerivationTree, grammar: &Grammar, format: TreeFormat) -> String {
    match format {
        TreeFormat::Tree => tree.to_indented(grammar),
        TreeFormat::Json => tree.to_fuzzingbook_json(grammar),
        TreeFormat::Sexp => tree.to_sexp(grammar),
        TreeFormat::Dot => tree.to_dot(grammar),
    }
}

use thicket_tree::{Renderer, Rendering};

pub fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}
