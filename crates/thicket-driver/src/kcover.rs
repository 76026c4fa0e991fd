//! The k-path coverage of a set of input files (`thicket cover`): each input's own
//! coverage, read in parallel a batch at a time, merged in input order into the total
//! and its growth curve, with the report of it all as data and the curve as CSV.

use crate::InputReader;
use crate::files::{Input, for_each_batch};
use serde::Serialize;
use thicket_cover::{Coverage, KPathGraph};
use thicket_grammar::Grammar;
use thicket_parse::ParseError;

/// Why an input's coverage is not counted.
#[derive(Clone, Debug)]
pub enum Uncounted {
    /// It could not be read, or its chart did not fit in memory (the message names
    /// the file).
    Unreadable(String),
    /// The grammar rejects it (the message follows the file's name).
    Rejected(String),
}

impl Uncounted {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Uncounted::Unreadable(m) | Uncounted::Rejected(m) => m,
        }
    }
}

/// The k-path coverage of a set of inputs, for paths up to `max_k` long.
pub struct CoverageRun {
    /// The longest paths measured.
    pub max_k: usize,
    /// The grammar's number of k-paths for each k = 1..=max_k.
    pub totals: Vec<u128>,
    /// Each input's own coverage, or why it is not counted.
    pub per_input: Vec<Result<Coverage, Uncounted>>,
    /// The union of the inputs' coverage.
    pub total: Coverage,
    /// The paths covered of each length after each input.
    pub curve: Vec<Vec<usize>>,
    /// Inputs the grammar rejects.
    pub rejected: usize,
    /// Inputs that could not be read.
    pub unreadable: usize,
}

impl CoverageRun {
    /// Measures `inputs` (each read under `max_size` bytes) with `reader` on `pool`:
    /// the paths of the tree the parser chooses, or with `all_parses` of every
    /// derivation.
    pub fn measure(
        inputs: &[Input],
        pool: &rayon::ThreadPool,
        reader: &InputReader<'_>,
        graph: &KPathGraph,
        max_k: usize,
        all_parses: bool,
        max_size: u64,
    ) -> CoverageRun {
        let mut per_input = Vec::with_capacity(inputs.len());
        let work = |input: &Input| {
            let text = input.read(max_size).map_err(Uncounted::Unreadable)?;
            reader
                .coverage(graph, &text, max_k, all_parses)
                .map_err(|e| match e {
                    // Not counted, as an input that cannot be read.
                    ParseError::OutOfMemory { .. } => {
                        Uncounted::Unreadable(format!("{}: {e}", input.name()))
                    }
                    e => Uncounted::Rejected(e.to_string()),
                })
        };
        let merged = for_each_batch(inputs, pool, work, |_, results: Vec<_>| {
            per_input.extend(results);
            Ok::<(), std::convert::Infallible>(())
        });
        let Ok(()) = merged;
        let mut run = CoverageRun {
            max_k,
            totals: (1..=max_k).map(|k| graph.count(k)).collect(),
            per_input: Vec::new(),
            total: Coverage::new(max_k),
            curve: Vec::with_capacity(inputs.len()),
            rejected: 0,
            unreadable: 0,
        };
        for own in &per_input {
            match own {
                Ok(own) => run.total.merge(own),
                Err(Uncounted::Unreadable(_)) => run.unreadable += 1,
                Err(Uncounted::Rejected(_)) => run.rejected += 1,
            }
            run.curve
                .push((1..=max_k).map(|k| run.total.covered(k)).collect());
        }
        run.per_input = per_input;
        run
    }

    /// The share of the grammar's `k`-paths that `covered` is (0 for a grammar without
    /// any).
    pub fn fraction(&self, covered: usize, k: usize) -> f64 {
        if self.totals[k - 1] == 0 {
            0.0
        } else {
            covered as f64 / self.totals[k - 1] as f64
        }
    }

    /// The growth curve as CSV: `inputs,k1,k2,...`, a row per input with the share of
    /// each length's paths covered after it.
    pub fn curve_csv(&self) -> String {
        let mut csv = String::from("inputs");
        for k in 1..=self.max_k {
            csv.push_str(&format!(",k{k}"));
        }
        csv.push('\n');
        for (i, row) in self.curve.iter().enumerate() {
            csv.push_str(&(i + 1).to_string());
            for (k, &covered) in row.iter().enumerate() {
                csv.push_str(&format!(",{:.6}", self.fraction(covered, k + 1)));
            }
            csv.push('\n');
        }
        csv
    }

    /// The growth curve as one series per length: the share covered after each input.
    pub fn curve_series(&self) -> Vec<Vec<f64>> {
        (1..=self.max_k)
            .map(|k| {
                self.curve
                    .iter()
                    .map(|row| self.fraction(row[k - 1], k))
                    .collect()
            })
            .collect()
    }

    /// The paths of each length the inputs miss, at most `limit` each.
    pub fn missing(&self, graph: &KPathGraph, grammar: &Grammar, limit: usize) -> Vec<Vec<String>> {
        (1..=self.max_k)
            .map(|k| self.total.missing(graph, grammar, k, limit))
            .collect()
    }

    /// The error message of each input of `inputs` whose coverage is not counted, in
    /// order.
    pub fn errors(&self, inputs: &[Input]) -> Vec<String> {
        let uncounted = inputs.iter().zip(&self.per_input);
        uncounted
            .filter_map(|(input, own)| match own.as_ref().err()? {
                Uncounted::Unreadable(e) => Some(format!("{e} (not counted)")),
                Uncounted::Rejected(e) => Some(format!("{}:{e} (not counted)", input.name())),
            })
            .collect()
    }

    /// The report as `thicket cover` prints it for people: the inputs counted, a table
    /// of the paths covered per length, with `per_input` each input's share per
    /// length, then the `missing` paths listed per length (with how many there are).
    pub fn text_lines(
        &self,
        spec: &str,
        inputs: &[Input],
        missing: &[Vec<String>],
        per_input: bool,
    ) -> Vec<String> {
        let (total, totals) = (&self.total, &self.totals);
        let mut lines = vec![
            format!(
                "{} inputs ({} rejected{}), {spec}",
                inputs.len(),
                self.rejected,
                crate::files::unreadable_note(self.unreadable),
            ),
            format!(
                "{:>3}  {:>10}  {:>10}  {:>8}",
                "k", "covered", "total", "coverage"
            ),
        ];
        for k in 1..=self.max_k {
            lines.push(format!(
                "{k:>3}  {:>10}  {:>10}  {:>7.2}%",
                total.covered(k),
                totals[k - 1],
                100.0 * self.fraction(total.covered(k), k)
            ));
        }
        if per_input {
            lines.push(String::new());
            for (input, own) in inputs.iter().zip(&self.per_input) {
                let name = input.name();
                lines.push(match own {
                    Ok(own) => {
                        let cells: Vec<String> = (1..=self.max_k)
                            .map(|k| {
                                format!("k{k} {:.1}%", 100.0 * self.fraction(own.covered(k), k))
                            })
                            .collect();
                        format!("{name}: {}", cells.join(", "))
                    }
                    Err(Uncounted::Unreadable(_)) => format!("{name}: unreadable"),
                    Err(Uncounted::Rejected(_)) => format!("{name}: rejected"),
                });
            }
        }
        for (k, list) in (1..).zip(missing) {
            let absent = totals[k - 1].saturating_sub(total.covered(k) as u128);
            if absent == 0 {
                continue;
            }
            let first = if absent as usize > list.len() {
                format!(", first {}", list.len())
            } else {
                String::new()
            };
            lines.push(format!("\nmissing {k}-paths ({absent}{first}):"));
            lines.extend(list.iter().map(|path| format!("  {path}")));
        }
        lines
    }

    /// The report as data (`thicket cover --json`; docs/json-output.md): the figures
    /// per length (with `missing` paths if listed), and with `per_input` each input's.
    pub fn report<'a>(
        &'a self,
        spec: &'a str,
        inputs: &[Input],
        missing: &'a [Vec<String>],
        per_input: bool,
    ) -> CoverReport<'a> {
        let coverage = (1..=self.max_k)
            .map(|k| PerK {
                k,
                covered: self.total.covered(k),
                total: self.totals[k - 1],
                fraction: self.fraction(self.total.covered(k), k),
                missing: missing.get(k - 1).map(Vec::as_slice),
            })
            .collect();
        let per_input = if per_input {
            inputs
                .iter()
                .zip(&self.per_input)
                .map(|(input, own)| PerInput {
                    file: input.name(),
                    covered: own
                        .as_ref()
                        .ok()
                        .map(|own| (1..=self.max_k).map(|k| own.covered(k)).collect()),
                    error: own.as_ref().err().map(Uncounted::message),
                })
                .collect()
        } else {
            Vec::new()
        };
        CoverReport {
            spec,
            inputs: inputs.len(),
            rejected: self.rejected,
            unreadable: self.unreadable,
            coverage,
            per_input,
        }
    }
}

/// The k-path coverage of a set of inputs as data. Typed rather than a JSON value:
/// totals are `u128`, which serde_json writes as exact numbers.
#[derive(Serialize)]
pub struct CoverReport<'a> {
    /// The spec's name.
    pub spec: &'a str,
    /// Inputs named.
    pub inputs: usize,
    /// Inputs the grammar rejects.
    pub rejected: usize,
    /// Inputs that could not be read.
    pub unreadable: usize,
    /// The figures per path length.
    pub coverage: Vec<PerK<'a>>,
    /// Each input's figures, if asked for.
    pub per_input: Vec<PerInput<'a>>,
}

/// The coverage of paths of one length.
#[derive(Serialize)]
pub struct PerK<'a> {
    /// The length.
    pub k: usize,
    /// Paths covered.
    pub covered: usize,
    /// Paths of the grammar.
    pub total: u128,
    /// `covered / total`.
    pub fraction: f64,
    /// Paths missed (at most the limit asked for), if listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<&'a [String]>,
}

/// One input's coverage.
#[derive(Serialize)]
pub struct PerInput<'a> {
    /// Its name.
    pub file: String,
    /// Paths covered per length, if counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covered: Option<Vec<usize>>,
    /// Why it is not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejected_and_unreadable_inputs_are_not_counted() {
        let spec = thicket_grammar::load_spec_bytes(
            "t.bnf",
            b"<start> ::= \"a\" | \"b\" <start>\n",
            &thicket_grammar::LoadOptions::default(),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            Input::at(path)
        };
        let inputs = vec![
            write("1", b"ba"),
            write("2", b"c"),
            Input::at(dir.path().join("missing")),
        ];
        let grammar = crate::InputGrammar::new(&spec).unwrap();
        let reader = grammar.reader(Default::default()).unwrap();
        let graph = KPathGraph::new(&spec.grammar);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let run = CoverageRun::measure(&inputs, &pool, &reader, &graph, 2, false, 1 << 20);
        assert_eq!((run.rejected, run.unreadable), (1, 1));
        assert_eq!(run.curve.len(), 3);
        assert_eq!(run.curve[0], run.curve[2]);
        assert!(run.curve_csv().starts_with("inputs,k1,k2\n1,"));
        let report = serde_json::to_string(&run.report("t.bnf", &inputs, &[], true)).unwrap();
        assert!(
            report.contains("\"rejected\":1,\"unreadable\":1"),
            "{report}"
        );
    }
}
