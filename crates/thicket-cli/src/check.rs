//! `thicket check`: inputs against the grammar and the semantic constraints.

use crate::exit;
use crate::inputs::InputArgs;
use crate::shared::{input_grammar, reader_for};
use crate::spec::{ConstraintArgs, SpecArgs};
use clap::Args;
use std::io::Write;
use thicket_constraint::Checker;
use thicket_driver::checked::{Checked as Verdict, Tally};
use thicket_driver::files::for_each_batch;
use thicket_parse::ParseConfig;

/// Arguments of `thicket check`.
#[derive(Args, Debug)]
#[command(
    after_help = "Parses each INPUT (or stdin for `-` or no INPUT; a folder stands for every \
file below it, recursively, sorted; --files-from adds a list of paths) with the spec's grammar \
and evaluates every constraint on its derivation tree: the spec's own `where` blocks, plus \
those given with --constraint and -c (ISLa syntax; all must hold). For each input it prints \
`valid` or `invalid` and, for an invalid one, each violated constraint with its witness: the \
subtrees bound to its variables (text and line:column in the input) and what the deciding \
atom computed. Ambiguous inputs are checked on the derivation the parser finds first.\n\n\
Exit code 0 if every input is valid, 1 if any is invalid or not in the language, 3 if the \
spec or a constraint has errors (reported before any input is read), 4 if an input cannot be \
read or is over --max-input-size (reported; the others are still checked).\n\n\
Examples:\n  thicket check specs/xml.bnf doc.xml\n  \
thicket check specs/csv.bnf data.csv -c 'forall <csv-record> r: count(r, \"<raw-field>\", \"3\")'\n  \
thicket check specs/tar.bnf a.tar --json\n  \
thicket generate specs/csv.bnf -n 1000 --seed 1 -o out/ --suffix .csv\n  \
thicket check specs/csv.bnf out/ --quiet\n\n\
The language is ISLa's; see docs/constraints.md."
)]
pub struct CheckArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: InputArgs,

    #[command(flatten)]
    constraints: ConstraintArgs,

    /// Ignore the spec's own `where` constraints.
    #[arg(long)]
    no_spec_constraints: bool,

    /// JSON lines: {"file", "valid", "violations": [...]} or {"file", "valid": false,
    /// "error": {...}} for an input outside the language. A witness's text that is not
    /// UTF-8 is in "text_hex" (hex) instead of "text".
    #[arg(long)]
    json: bool,

    /// Print nothing; the exit code says whether every input is valid.
    #[arg(short, long)]
    quiet: bool,

    /// Give up on a constraint after this many steps per input (the input then counts
    /// as invalid, explained as undecided): a step is a quantifier instance visited or
    /// 64 bytes of subtree text read as a string (`str.len` of a variable reads none).
    /// Some constraints are cubic in the input, and checking must not hang.
    #[arg(long, value_name = "N", default_value_t = thicket_constraint::eval::DEFAULT_BUDGET)]
    max_steps: u64,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,
}

/// Runs `thicket check`.
pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let loaded = match args.spec.load_compiled() {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let (mut constraints, note) = thicket_driver::checked::spec_constraints(
        &loaded,
        args.no_spec_constraints,
        args.spec.constraints_apply(),
    );
    if let Some(note) = note.filter(|_| !args.quiet) {
        eprintln!("note: {note}");
    }
    match args.constraints.compile(&loaded, args.spec.max_spec_size) {
        Ok(extra) => constraints.extend(extra),
        Err(code) => return Ok(code),
    }
    let spec = loaded.spec;
    let note = thicket_driver::checked::no_constraints_note(spec.source.name(), &constraints);
    if let Some(note) = note.filter(|_| !args.quiet) {
        eprintln!("note: {note}");
    }
    let grammar = &spec.grammar;
    // Inputs that pack bit fields into bytes are read one bit at a time.
    let input_grammar = match input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match reader_for(&spec, &input_grammar, ParseConfig::default()) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let checker = Checker::new(grammar, constraints).with_budget(args.max_steps);
    let inputs = match args.inputs.collect_or_report(true) {
        Ok(inputs) => inputs,
        Err(code) => return Ok(code),
    };
    let pool = args.jobs.pool()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut tally = Tally::default();
    for_each_batch(
        &inputs,
        &pool,
        |input| match input.read(args.inputs.max_input_size) {
            Ok(text) => Verdict::check(&reader, &checker, &text, !args.quiet),
            Err(e) => Verdict::Unreadable(e),
        },
        |batch, verdicts: Vec<Verdict>| {
            for (input, verdict) in batch.iter().zip(&verdicts) {
                let name = input.name();
                tally.add(verdict);
                if let Some(error) = verdict.error(&name) {
                    eprintln!("error: {error}");
                }
                if args.quiet {
                    continue;
                }
                if args.json {
                    writeln!(out, "{}", verdict.json_line(&name))?;
                    continue;
                }
                for line in verdict.text_lines(&name) {
                    writeln!(out, "{line}")?;
                }
            }
            out.flush()?;
            anyhow::Ok(())
        },
    )?;
    out.flush()?;
    if !args.quiet && inputs.len() > 1 {
        eprintln!("{}", tally.line(inputs.len()));
    }
    let Tally {
        invalid,
        rejected,
        unreadable,
        ..
    } = tally;
    Ok(if unreadable > 0 {
        exit::FAILURE
    } else if invalid + rejected > 0 {
        exit::REJECTED
    } else {
        exit::OK
    })
}
