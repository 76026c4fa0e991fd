//! `thicket cover`: k-path coverage of a set of inputs.

use crate::exit;
use crate::spec::SpecArgs;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use thicket_cover::{Coverage, KPathGraph};
use thicket_driver::files::for_each_batch;
use thicket_parse::{ParseConfig, ParseError};

/// Arguments of `thicket cover`.
#[derive(Args, Debug)]
#[command(
    after_help = "Parses every input with the spec's grammar and reports, for each k' = 1..K, \
how many of the grammar's k'-paths the inputs cover (k-path coverage, Havrikov & Zeller). A k-path \
is a chain of k symbols, each inside the rule the one before it references; `#n` in paths names the \
occurrence (its expression id), since one symbol may appear in several places.\n\n\
An INPUT that is a folder stands for every file below it (recursively, sorted; hidden ones \
skipped); --files-from adds a list of paths. Exit code 0 if every input is counted, 1 if any \
is not in the language, 3 if the spec has errors, 4 if an input cannot be read or is over \
--max-input-size (reported and not counted; the others still are).\n\n\
Examples:\n  thicket cover specs/json.fan inputs/ -k 3\n  \
thicket cover specs/expr.fan tests/*.txt -k 2 --missing\n  \
thicket cover specs/csv.bnf corpus/* -k 4 --curve growth.csv --plot growth.svg --json"
)]
pub struct CoverArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: crate::inputs::InputArgs,

    /// Longest k-path length measured (1..=8).
    #[arg(short, long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=8))]
    k: u8,

    /// Count a k-path as covered if any derivation tree of an input has it, not only the
    /// one the parser picks (matters for ambiguous grammars). An input the parse shows
    /// unambiguous costs its one tree; any other is followed exhaustively, for inputs
    /// of moderate size (about 1-5 KB of memory per input byte).
    #[arg(long)]
    all_parses: bool,

    /// Also report each input's own coverage.
    #[arg(long)]
    per_input: bool,

    /// List the k-paths the inputs miss (for k' = 1..K, at most --missing-limit each).
    #[arg(long)]
    missing: bool,

    /// With --missing, the most paths listed per length.
    #[arg(long, value_name = "N", default_value_t = 50)]
    missing_limit: usize,

    /// Write the growth curve (coverage after each input, per k') as CSV.
    #[arg(long, value_name = "FILE")]
    curve: Option<PathBuf>,

    /// Plot the growth curve as SVG.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    /// One JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,
}

/// Runs `thicket cover`.
pub fn run(args: CoverArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let grammar = &spec.grammar;
    // Inputs that pack bit fields into bytes are read one bit at a time.
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match crate::shared::reader_for(&spec, &input_grammar, ParseConfig::default()) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let graph = KPathGraph::new(grammar);
    let max_k = usize::from(args.k);
    let totals: Vec<u128> = (1..=max_k).map(|k| graph.count(k)).collect();
    let inputs = match args.inputs.collect_or_report(false) {
        Ok(inputs) => inputs,
        Err(code) => return Ok(code),
    };
    let pool = args.jobs.pool()?;
    // Each input's own coverage, in parallel, a batch at a time (the texts of a batch
    // only); merged in input order for the curve. An error says whether the input could
    // not be read (`true`) or was rejected.
    let mut per_input: Vec<Result<Coverage, (bool, String)>> = Vec::with_capacity(inputs.len());
    for_each_batch(
        &inputs,
        &pool,
        |input| {
            let text = input
                .read(args.inputs.max_input_size)
                .map_err(|e| (true, e))?;
            let failed = |e| match e {
                // Not counted, as an input that cannot be read.
                ParseError::OutOfMemory { .. } => (true, format!("{}: {e}", input.name())),
                e => (false, e.to_string()),
            };
            reader
                .coverage(&graph, &text, max_k, args.all_parses)
                .map_err(failed)
        },
        |_, results: Vec<_>| {
            per_input.extend(results);
            anyhow::Ok(())
        },
    )?;
    let mut total = Coverage::new(max_k);
    let mut curve: Vec<Vec<usize>> = Vec::with_capacity(inputs.len());
    let (mut rejected, mut unreadable) = (0, 0);
    for (input, own) in inputs.iter().zip(&per_input) {
        match own {
            Ok(own) => total.merge(own),
            Err((true, e)) => {
                unreadable += 1;
                eprintln!("error: {e} (not counted)");
            }
            Err((false, e)) => {
                rejected += 1;
                eprintln!("error: {}:{e} (not counted)", input.name());
            }
        }
        curve.push((1..=max_k).map(|k| total.covered(k)).collect());
    }
    let fraction = |covered: usize, k: usize| {
        if totals[k - 1] == 0 {
            0.0
        } else {
            covered as f64 / totals[k - 1] as f64
        }
    };
    let missing: Vec<Vec<String>> = if args.missing {
        (1..=max_k)
            .map(|k| total.missing(&graph, grammar, k, args.missing_limit))
            .collect()
    } else {
        Vec::new()
    };
    if let Some(file) = &args.curve {
        let mut csv = String::from("inputs");
        for k in 1..=max_k {
            csv.push_str(&format!(",k{k}"));
        }
        csv.push('\n');
        for (i, row) in curve.iter().enumerate() {
            csv.push_str(&(i + 1).to_string());
            for (k, &covered) in row.iter().enumerate() {
                csv.push_str(&format!(",{:.6}", fraction(covered, k + 1)));
            }
            csv.push('\n');
        }
        std::fs::write(file, csv).with_context(|| format!("cannot write {}", file.display()))?;
    }
    if let Some(file) = &args.plot {
        let series: Vec<Vec<f64>> = (1..=max_k)
            .map(|k| curve.iter().map(|row| fraction(row[k - 1], k)).collect())
            .collect();
        crate::plot::growth_svg(file, spec.source.name(), &series)?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        // Typed rather than `json!`: totals are u128 and serde_json writes them as exact
        // numbers (a `Value` cannot hold one beyond u64). Schema: docs/json-output.md.
        #[derive(serde::Serialize)]
        struct PerK<'a> {
            k: usize,
            covered: usize,
            total: u128,
            fraction: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            missing: Option<&'a [String]>,
        }
        #[derive(serde::Serialize)]
        struct PerInput<'a> {
            file: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            covered: Option<Vec<usize>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
        }
        #[derive(serde::Serialize)]
        struct Report<'a> {
            spec: &'a str,
            inputs: usize,
            rejected: usize,
            unreadable: usize,
            coverage: Vec<PerK<'a>>,
            per_input: Vec<PerInput<'a>>,
        }
        let coverage = (1..=max_k)
            .map(|k| PerK {
                k,
                covered: total.covered(k),
                total: totals[k - 1],
                fraction: fraction(total.covered(k), k),
                missing: missing.get(k - 1).map(Vec::as_slice),
            })
            .collect();
        let per_input = if args.per_input {
            inputs
                .iter()
                .zip(&per_input)
                .map(|(input, own)| PerInput {
                    file: input.name(),
                    covered: own
                        .as_ref()
                        .ok()
                        .map(|own| (1..=max_k).map(|k| own.covered(k)).collect()),
                    error: own.as_ref().err().map(|(_, e)| e.as_str()),
                })
                .collect()
        } else {
            Vec::new()
        };
        let report = Report {
            spec: spec.source.name(),
            inputs: inputs.len(),
            rejected,
            unreadable,
            coverage,
            per_input,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        writeln!(
            out,
            "{} inputs ({} rejected{}), {}",
            inputs.len(),
            rejected,
            crate::inputs::unreadable_note(unreadable),
            spec.source.name()
        )?;
        writeln!(
            out,
            "{:>3}  {:>10}  {:>10}  {:>8}",
            "k", "covered", "total", "coverage"
        )?;
        for k in 1..=max_k {
            writeln!(
                out,
                "{k:>3}  {:>10}  {:>10}  {:>7.2}%",
                total.covered(k),
                totals[k - 1],
                100.0 * fraction(total.covered(k), k)
            )?;
        }
        if args.per_input {
            writeln!(out)?;
            for (input, own) in inputs.iter().zip(&per_input) {
                let name = input.name();
                match own {
                    Ok(own) => {
                        let cells: Vec<String> = (1..=max_k)
                            .map(|k| format!("k{k} {:.1}%", 100.0 * fraction(own.covered(k), k)))
                            .collect();
                        writeln!(out, "{name}: {}", cells.join(", "))?;
                    }
                    Err((true, _)) => writeln!(out, "{name}: unreadable")?,
                    Err((false, _)) => writeln!(out, "{name}: rejected")?,
                }
            }
        }
        for (k, list) in missing.iter().enumerate() {
            let k = k + 1;
            let absent = totals[k - 1].saturating_sub(total.covered(k) as u128);
            if absent == 0 {
                continue;
            }
            writeln!(
                out,
                "\nmissing {k}-paths ({absent}{}):",
                if absent as usize > list.len() {
                    format!(", first {}", list.len())
                } else {
                    String::new()
                }
            )?;
            for path in list {
                writeln!(out, "  {path}")?;
            }
        }
    }
    out.flush()?;
    Ok(if unreadable > 0 {
        exit::FAILURE
    } else if rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}
