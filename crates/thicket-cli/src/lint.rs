//! `thicket lint`: grammar checks and a summary of every rule.

use crate::exit;
use crate::spec::{SpecArgs, report_load, spec_error_code};
use clap::{Args, ValueEnum};
use thicket_driver::LoadError;
use thicket_grammar::diag::render_diagnostics;
use thicket_grammar::summary::{LintSummary, unloadable_json};

/// Arguments of `thicket lint`.
#[derive(Args, Debug)]
#[command(
    after_help = "Checks: undefined rules (with a did-you-mean), duplicate rules, a missing \
start rule, rules that can never finish (naming the cycle), regexes that match nothing \
(errors); rules unreachable from the start rule (warnings). Of a Fandango .fan spec, the \
grammar is checked; its Python code, generators, computed repetitions and non-ISLa \
constraints are accepted as they are, and a protocol spec (parties) is noted.\n\n\
Example:\n  thicket lint specs/json.fan\n  thicket lint specs/json.fan --format json | jq .rules"
)]
pub struct LintArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    format: LintFormat,

    /// Treat warnings as errors (exit code 3).
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LintFormat {
    /// Diagnostics rustc-style on stderr, the summary table on stdout.
    Text,
    /// One JSON object on stdout, also when the spec has errors that stop it from being
    /// read (then what only a read grammar tells is null; see docs/json-output.md).
    Json,
}

/// Runs `thicket lint`.
pub fn run(args: LintArgs) -> anyhow::Result<u8> {
    // Compiled as every command compiles them, without running any Python.
    let loaded = match args.spec.try_compile(true) {
        Ok(compiled) => compiled.loaded,
        Err(LoadError::Spec(error)) if matches!(args.format, LintFormat::Json) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&unloadable_json(&error))?
            );
            return Ok(spec_error_code(&error));
        }
        Err(error) => return Ok(report_load(error)),
    };
    let constraints = loaded.constraints.len();
    let notes = loaded.notes();
    let spec = &loaded.spec;
    let grammar = &spec.grammar;
    let summary = LintSummary::new(grammar, spec.fandango.warnings.iter().cloned());
    let failed = summary.failed(args.deny_warnings);
    match args.format {
        LintFormat::Json => {
            let value = summary.to_json(
                grammar,
                &spec.source,
                &notes,
                spec.fandango.is_protocol(),
                constraints,
                args.deny_warnings,
            );
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        LintFormat::Text => {
            eprint!("{}", render_diagnostics(&summary.diagnostics, &spec.source));
            for note in &notes {
                eprintln!("note: {}: {note}", spec.source.name());
            }
            for line in summary.text_lines(grammar, &spec.source, constraints) {
                println!("{line}");
            }
        }
    }
    Ok(if failed { exit::BAD_SPEC } else { exit::OK })
}
