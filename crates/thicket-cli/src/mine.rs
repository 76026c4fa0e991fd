//! `thicket mine`: the ISLa constraints that sample inputs share (ISLearn).

use crate::exit;
use crate::inputs::InputArgs;
use crate::shared::{input_grammar, reader_for};
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use thicket_driver::files::Input;
use thicket_exec::Judge;
use thicket_gen::{GenConfig, Generator};
use thicket_mine::{Catalog, MineConfig};
use thicket_parse::{ParseConfig, ParseError};
use thicket_tree::DerivationTree;

/// Arguments of `thicket mine`.
#[derive(Args, Debug)]
#[command(
    after_help = "Finds the semantic constraints that the --positive inputs share and \
the --negative inputs break, in ISLa syntax, ready for `thicket check --constraint` and \
`thicket generate --constraint`. Patterns from a catalog (thicket's own, in \
crates/thicket-mine/src/patterns.isla, plus --patterns FILE) are instantiated step by step \
(nonterminals, match expressions, strings and numbers from a learning set of positives chosen \
for k-path coverage), pruned after each step, evaluated on every sample, combined into \
disjunctions and conjunctions, and ranked by specificity, then recall (results under \
--min-recall are left out). Each step's counts go to stderr.\n\n\
With a program (-- COMMAND or --python M:F), --generate inputs made from the grammar and \
--mutate mutants of the positives are run and labelled: accepted (exit 0, no failure) is \
positive, anything else negative. Each result is then validated: --validate inputs that \
satisfy it are solved for and run, and a result is kept only if the program accepts them all.\n\n\
Examples:\n  thicket mine specs/xml.bnf --positive good/ --negative bad/\n  \
thicket mine specs/csv.bnf --positive good/ --negative bad/ --json\n  \
thicket mine dot.fan --positive samples/ --generate 200 -- dot -Tcanon @@\n  \
thicket mine specs/xml.bnf --positive good/ --negative bad/ -o mined.isla && \
thicket check specs/xml.bnf --no-spec-constraints --constraint mined.isla new/"
)]
pub struct MineArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// Inputs the constraints must accept: files or folders (recursively); may be
    /// repeated.
    #[arg(long, value_name = "PATH")]
    positive: Vec<PathBuf>,

    /// Inputs the constraints should reject; may be repeated.
    #[arg(long, value_name = "PATH")]
    negative: Vec<PathBuf>,

    /// More patterns (catalog format: `[Name]` then ISLa text with placeholders); a
    /// pattern named like a bundled one replaces it. May be repeated.
    #[arg(long, value_name = "FILE")]
    patterns: Vec<PathBuf>,

    /// Use only the patterns of these names (case-insensitive); may be repeated.
    #[arg(long, value_name = "NAME")]
    pattern: Vec<String>,

    /// Print the catalog's pattern names and exit.
    #[arg(long)]
    list_patterns: bool,

    /// Least recall of a result, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 90.0, value_parser = percentage)]
    min_recall: f64,

    /// Specificity a result should reach, in percent (results below are flagged).
    #[arg(long, value_name = "PCT", default_value_t = 60.0, value_parser = percentage)]
    min_specificity: f64,

    /// Most parts of a disjunction.
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_disjunction: usize,

    /// Most parts of a conjunction.
    #[arg(long, value_name = "N", default_value_t = 3)]
    max_conjunction: usize,

    /// Most string constants per string placeholder.
    #[arg(long, value_name = "N", default_value_t = 10)]
    max_strings: usize,

    /// Most candidates a pattern may have after each step (beyond, they are cut and the
    /// step says so).
    #[arg(long, value_name = "N", default_value_t = 2_000)]
    max_candidates: usize,

    /// Most positives the instantiation reads (chosen for k-path coverage).
    #[arg(long, value_name = "N", default_value_t = 10)]
    learning_set: usize,

    /// The k of the learning set's k-path coverage.
    #[arg(short, long, value_name = "K", default_value_t = 3)]
    k: usize,

    /// How many results to print.
    #[arg(long, value_name = "N", default_value_t = 5)]
    top: usize,

    /// Stop instantiating and evaluating after this long (e.g. 30s, 5m) and rank what
    /// was evaluated.
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_duration)]
    time: Option<Duration>,

    /// Quantifier instances one check of one candidate may visit (past it, the
    /// candidate counts as not satisfied on that input).
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    max_steps: u64,

    /// With a program: inputs generated from the grammar and labelled [default: 100
    /// with a program, else 0].
    #[arg(long, value_name = "N")]
    generate: Option<usize>,

    /// With a program: mutants of the positives made and labelled [default: 100 with a
    /// program, else 0].
    #[arg(long, value_name = "N")]
    mutate: Option<usize>,

    /// With a program: inputs solved for per result and run; a result is kept only if
    /// all are accepted (0: no validation).
    #[arg(long, value_name = "N", default_value_t = 10)]
    validate: usize,

    /// Seed of generation, mutation and validation.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,

    /// Write the best constraint (ISLa, with its figures as a comment) to FILE.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// One JSON object on stdout: steps, counts, results with their figures.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,

    /// Largest input read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::inputs::DEFAULT_MAX_INPUT_SIZE, hide_default_value = true)]
    max_input_size: u64,

    #[command(flatten)]
    target: TargetArgs,
}

/// A percentage (`--min-recall`, `--min-specificity`): between 0 and 100.
fn percentage(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("`{text}` is not a percentage (0 to 100)")),
    }
}

/// Runs `thicket mine`.
pub fn run(args: MineArgs) -> anyhow::Result<u8> {
    let mut catalog = Catalog::bundled();
    for file in &args.patterns {
        let text =
            crate::inputs::read_path(file, args.spec.max_spec_size as u64, "--max-spec-size")
                .map_err(anyhow::Error::msg)?;
        let text = String::from_utf8(text).map_err(|e| {
            anyhow::anyhow!(
                "{}: not UTF-8 (byte {})",
                file.display(),
                e.utf8_error().valid_up_to()
            )
        })?;
        match Catalog::parse(&file.display().to_string(), &text) {
            Ok(more) => catalog.extend(more),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(exit::BAD_SPEC);
            }
        }
    }
    if !args.pattern.is_empty()
        && let Err(name) = catalog.select(&args.pattern)
    {
        eprintln!("error: no pattern named `{name}` (see --list-patterns)");
        return Ok(exit::USAGE);
    }
    if args.list_patterns {
        for p in &catalog.patterns {
            println!("{}\t{}", p.name, p.location);
        }
        return Ok(exit::OK);
    }
    let has_target = !args.target.command.is_empty() || args.target.python.is_some();
    if args.positive.is_empty() && !has_target {
        eprintln!(
            "error: give --positive inputs, or a program (-- COMMAND or --python M:F) to label generated ones"
        );
        return Ok(exit::USAGE);
    }
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let grammar = &spec.grammar;
    // Inputs that pack bit fields into bytes are read one bit at a time, and the
    // program runs each tree's bits packed.
    let input_grammar = match input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match reader_for(&spec, &input_grammar, ParseConfig::default()) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let encoding = match crate::shared::encoding_for(&spec, &input_grammar) {
        Ok(encoding) => encoding,
        Err(code) => return Ok(code),
    };
    let accepts = |judge: &mut Judge, tree: &DerivationTree| {
        thicket_driver::runs::accepts(judge, encoding.as_ref(), tree)
    };
    let read_all = |paths: &[PathBuf], what: &str| -> Result<Vec<DerivationTree>, u8> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let inputs = InputArgs {
            inputs: paths.to_vec(),
            files_from: None,
            max_input_size: args.max_input_size,
        }
        .collect_or_report(false)?;
        let note = &mut |n: usize, input: &Input, e: &ParseError| {
            if n <= 3 {
                let name = input.name();
                eprintln!("note: {name} ({what}) is not in the grammar, skipped: {e}");
            }
        };
        let (trees, rejected) = reader
            .read_samples(&inputs, args.max_input_size, note)
            .map_err(|e| {
                eprintln!("error: {e}");
                exit::FAILURE
            })?;
        if rejected > 3 {
            eprintln!(
                "note: {rejected} {what} inputs in all are not in the grammar and were skipped"
            );
        }
        Ok(trees)
    };
    let mut positives = match read_all(&args.positive, "positive") {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let mut negatives = match read_all(&args.negative, "negative") {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let classifier = args.target.classifier()?;
    let mut judge = if has_target {
        match args.target.executor_or_report(args.time) {
            Ok(e) => Some(Judge::new(e, classifier)),
            Err(code) => return Ok(code),
        }
    } else {
        None
    };
    if let Some(judge) = judge.as_mut() {
        let generator = Generator::new(grammar, GenConfig::default())
            .map_err(|e| anyhow::anyhow!("cannot generate from {}: {e}", spec.source.name()))?;
        let asked = (args.generate.unwrap_or(100), args.mutate.unwrap_or(100));
        let labelled = thicket_mine::program::label(
            &generator,
            &mut positives,
            &mut negatives,
            asked,
            args.seed,
            &mut |tree| accepts(judge, tree),
        )?;
        eprintln!("{}", labelled.line());
    }
    if positives.is_empty() {
        eprintln!("error: no positive input in the grammar to learn from");
        return Ok(exit::FAILURE);
    }
    if negatives.is_empty() {
        eprintln!(
            "note: no negative inputs: specificity cannot be estimated, results are ranked by recall only"
        );
    }
    let config = MineConfig {
        min_recall: args.min_recall / 100.0,
        min_specificity: args.min_specificity / 100.0,
        max_disjunction: args.max_disjunction.max(1),
        max_conjunction: args.max_conjunction.max(1),
        max_strings: args.max_strings,
        max_match_exprs: 40,
        max_candidates: args.max_candidates,
        learning_set: args.learning_set.max(1),
        k: args.k.max(1),
        top: args.top.max(1),
        check_budget: args.max_steps,
        time: args.time,
    };
    let pool = args.jobs.pool()?;
    let mut mined = pool.install(|| {
        thicket_mine::mine(
            grammar,
            &catalog,
            &positives,
            &negatives,
            &config,
            &mut |line| eprintln!("{line}"),
        )
    });
    // Validation by the program: inputs that satisfy each result must be accepted.
    let mut validation = vec![None; mined.results.len()];
    if let Some(judge) = judge.as_mut()
        && args.validate > 0
    {
        let before = mined.results.len();
        validation = thicket_mine::program::validate(
            grammar,
            &mut mined,
            args.validate,
            args.seed,
            &mut |tree| accepts(judge, tree),
            &mut |line| eprintln!("note: {line}"),
        )?;
        eprintln!(
            "validate: {} of {before} results had every solved input accepted by the program",
            mined.results.len()
        );
    }
    if let Some(path) = &args.output {
        let best = mined
            .results
            .first()
            .context("no constraint reached the recall threshold")?;
        std::fs::write(path, format!("# {}\n{}\n", best.figures(), best.text))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let report = mined.report(
            positives.len(),
            negatives.len(),
            &validation,
            config.min_specificity,
        );
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        let text = mined.text(&validation, args.min_recall, args.min_specificity);
        write!(out, "{text}")?;
    }
    out.flush()?;
    Ok(if mined.results.is_empty() {
        exit::FAILURE
    } else {
        exit::OK
    })
}
