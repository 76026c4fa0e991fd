//! `thicket parse`: inputs to derivation trees, or just a validity verdict.

use crate::exit;
use crate::spec::SpecArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use std::io::{Read, Write};
use std::path::PathBuf;
use thicket_grammar::Grammar;
use thicket_parse::{ParseConfig, ParseError, Parser, Rejection, TreeCount};

/// Arguments of `thicket parse`.
#[derive(Args, Debug)]
#[command(
    after_help = "Reads each FILE (or stdin for `-` or no FILE), parses it with the spec's \
grammar and prints its derivation tree. Ambiguous inputs get the derivation the parser found \
first. Exit code 0 if every input parses, 1 if any is not in the language, 3 if the spec has \
errors, 4 if a file cannot be read.\n\n\
Examples:\n  thicket parse specs/json.fan data.json\n  \
echo -n '1+2' | thicket parse specs/expr.fan --format sexp\n  \
thicket parse specs/csv.fan --quiet *.csv && echo all valid\n  \
thicket parse specs/expr.fan in.txt --format dot | dot -Tsvg > tree.svg"
)]
pub struct ParseArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// Inputs to parse; `-` reads stdin.
    #[arg(value_name = "FILE")]
    inputs: Vec<PathBuf>,

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

    /// Worker threads [default: one per core].
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TreeFormat {
    /// Indented, one node per line.
    Tree,
    /// JSON lines: {"file", "ok", "tree"} or {"file", "ok": false, "error": {...}}.
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
    /// In the language, but --all cannot list its trees (infinitely many, ...).
    Uncountable(String),
}

impl Outcome {
    /// The outcome of an input the parser did not accept.
    fn failed(text: &[u8], error: ParseError) -> Outcome {
        match error {
            ParseError::Rejected(r) => Outcome::Rejected(excerpt(text, &r), r),
            e @ ParseError::TooComplex { .. } => Outcome::TooComplex(e.to_string()),
        }
    }
}

/// Runs `thicket parse`.
pub fn run(args: ParseArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let grammar = &spec.grammar;
    let config = ParseConfig {
        max_items: args.max_items,
        ..ParseConfig::default()
    };
    let parser = match parser_for(&spec, config) {
        Ok(parser) => parser,
        Err(code) => return Ok(code),
    };
    let inputs = inputs_or_stdin(&args.inputs);
    let texts = read_inputs(&inputs)?;
    let pool = worker_pool(args.jobs)?;
    let outcomes: Vec<Outcome> = pool.install(|| {
        texts
            .par_iter()
            .map(|text| {
                if args.quiet && !args.count && !args.all {
                    // Only the verdict: recognising reserves and reads no tree.
                    return match parser.recognize(text) {
                        Ok(()) => Outcome::Parsed(String::new(), None),
                        Err(e) => Outcome::failed(text, e),
                    };
                }
                match parser.parse(text) {
                    Ok(result) if args.all => match result.trees(args.max_trees) {
                        Ok((trees, total)) => Outcome::Parsed(
                            list_trees(&trees, total, grammar, args.format),
                            Some(TreeCount::Finite(total)),
                        ),
                        Err(count) => {
                            Outcome::Uncountable(format!("cannot list the trees: {count}"))
                        }
                    },
                    Ok(result) => {
                        let count = args.count.then(|| result.count_trees());
                        let rendered = if args.quiet {
                            String::new()
                        } else {
                            render(&result.tree(), grammar, args.format)
                        };
                        Outcome::Parsed(rendered, count)
                    }
                    Err(e) => Outcome::failed(text, e),
                }
            })
            .collect()
    });
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut rejected = 0;
    for (path, outcome) in inputs.iter().zip(&outcomes) {
        let name = display_name(path);
        match outcome {
            Outcome::Parsed(tree, count) => {
                if args.quiet {
                    continue;
                }
                if let Some(count) = count {
                    eprintln!(
                        "{name}: {count} derivation tree{}",
                        if *count == TreeCount::Finite(1) {
                            ""
                        } else {
                            "s"
                        }
                    );
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
                        Some(TreeCount::TooDeep) => {
                            ",\"trees\":null,\"trees_unknown\":\"too_deep\"".to_string()
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
                    if inputs.len() > 1 {
                        writeln!(out, "# {name}")?;
                    }
                    write!(out, "{tree}")?;
                    if !tree.ends_with('\n') {
                        writeln!(out)?;
                    }
                }
            }
            Outcome::Rejected(excerpt, r) => {
                rejected += 1;
                if args.quiet {
                    continue;
                }
                if args.format == TreeFormat::Json {
                    writeln!(
                        out,
                        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{},\"offset\":{},\"line\":{},\"column\":{},\"found\":{},\"expected\":{},\"rules\":{}}}}}",
                        json_str(&name),
                        json_str(&r.to_string()),
                        r.offset,
                        r.line,
                        r.column,
                        r.found.map_or("null".to_string(), |b| b.to_string()),
                        serde_json::to_string(&r.expected)?,
                        serde_json::to_string(&r.rules)?,
                    )?;
                }
                eprintln!("error: {name}:{r}\n{excerpt}");
            }
            Outcome::Uncountable(message) | Outcome::TooComplex(message) => {
                rejected += 1;
                if args.quiet {
                    continue;
                }
                if args.format == TreeFormat::Json {
                    // Every input has its line: an error without a position.
                    writeln!(
                        out,
                        "{{\"file\":{},\"ok\":false,\"error\":{{\"message\":{}}}}}",
                        json_str(&name),
                        json_str(message)
                    )?;
                }
                eprintln!("error: {name}: {message}");
            }
        }
    }
    out.flush()?;
    Ok(if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}

/// Several trees of one input: a JSON array, or each rendering under a `# tree k of n`
/// heading.
fn list_trees(
    trees: &[thicket_tree::DerivationTree],
    total: u128,
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

/// A parser for the spec's grammar, or the exit code after reporting why not.
pub fn parser_for(spec: &thicket_grammar::Spec, config: ParseConfig) -> Result<Parser<'_>, u8> {
    Parser::new(&spec.grammar, config).map_err(|e| {
        eprintln!("error: {}: {e}", spec.source.name());
        exit::FAILURE
    })
}

/// A pool of `jobs` worker threads (0 or none: one per core).
pub fn worker_pool(jobs: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .context("cannot start worker threads")
}

/// The inputs named on the command line, or stdin if none.
pub fn inputs_or_stdin(inputs: &[PathBuf]) -> Vec<PathBuf> {
    if inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        inputs.to_vec()
    }
}

/// Reads every input (`-` is stdin), failing on the first that cannot be read.
pub fn read_inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<Vec<u8>>> {
    paths.iter().map(read_input).collect()
}

fn read_input(path: &PathBuf) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
        Ok(bytes)
    } else {
        std::fs::read(path).with_context(|| format!("cannot read input {}", path.display()))
    }
}

/// How an input is named in messages (`<stdin>` for `-`).
pub fn display_name(path: &std::path::Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

pub fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The offending line with a caret under the error position.
pub fn excerpt(text: &[u8], r: &Rejection) -> String {
    let line_start = text[..r.offset]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line_end = text[r.offset..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |p| r.offset + p);
    // Keep long lines readable: at most 60 bytes either side of the error.
    let from = line_start.max(r.offset.saturating_sub(60));
    let to = line_end.min(r.offset + 60);
    let shown: String = String::from_utf8_lossy(&text[from..to])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let before = String::from_utf8_lossy(&text[from..r.offset])
        .chars()
        .count();
    let gutter = r.line.to_string();
    format!(
        "{pad} |\n{gutter} | {shown}\n{pad} | {}^",
        " ".repeat(before),
        pad = " ".repeat(gutter.len())
    )
}
