//! `thicket lint`: grammar checks and a summary of every rule.

use crate::exit;
use crate::spec::{SpecArgs, report_load, spec_error_code};
use clap::{Args, ValueEnum};
use thicket_driver::LoadError;
use thicket_grammar::diag::render_diagnostics;
use thicket_grammar::{Analysis, Expr, lint};

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
    let analysis = Analysis::new(grammar);
    let mut diagnostics = lint(grammar, &analysis);
    diagnostics.extend(spec.fandango.warnings.iter().cloned());
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let rules: Vec<_> = grammar
        .symbols()
        .map(|s| analysis.rule_summary(grammar, s))
        .collect();
    let terminals = grammar
        .expr_ids()
        .filter(|&e| matches!(grammar.expr(e), Expr::Literal(_) | Expr::Regex(_)))
        .count();
    let alternatives: usize = rules.iter().map(|r| r.alternatives).sum();
    let start = analysis.rule_summary(grammar, grammar.start());
    let (min_depth, min_length) = (start.min_depth, start.min_length);
    let failed = errors > 0 || (args.deny_warnings && warnings > 0);
    match args.format {
        LintFormat::Json => {
            let value = serde_json::json!({
                "file": spec.source.name(),
                "ok": !failed,
                "start": grammar.display_symbol(grammar.start()),
                "errors": errors,
                "warnings": warnings,
                "diagnostics": diagnostics.iter().map(|d| d.to_json(&spec.source)).collect::<Vec<_>>(),
                "notes": notes,
                "protocol": spec.fandango.is_protocol(),
                "totals": {
                    "rules": rules.len(),
                    "alternatives": alternatives,
                    "terminals": terminals,
                    "min_depth": min_depth,
                    "min_length": min_length,
                    "constraints": constraints,
                },
                "rules": rules.iter().map(|r| serde_json::json!({
                    "name": format!("<{}>", r.name),
                    "alternatives": r.alternatives,
                    "min_depth": r.min_depth,
                    "min_length": r.min_length,
                    "reachable": r.reachable,
                })).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        LintFormat::Text => {
            eprint!("{}", render_diagnostics(&diagnostics, &spec.source));
            for note in &notes {
                eprintln!("note: {}: {note}", spec.source.name());
            }
            let width = rules
                .iter()
                .map(|r| r.name.len() + 2)
                .max()
                .unwrap_or(4)
                .max(4);
            println!(
                "{:width$}  {:>9}  {:>10}  {:>12}",
                "rule", "min depth", "min length", "alternatives"
            );
            for r in &rules {
                println!(
                    "{:width$}  {:>9}  {:>10}  {:>12}{}",
                    format!("<{}>", r.name),
                    r.min_depth.map_or("never".to_string(), |d| d.to_string()),
                    r.min_length.map_or("never".to_string(), |d| d.to_string()),
                    r.alternatives,
                    if r.reachable { "" } else { "  (unreachable)" }
                );
            }
            println!(
                "\n{}: {} rules, {alternatives} alternatives, {terminals} terminals, {constraints} constraint{}; start {}, minimal depth {}, minimal input length {}",
                spec.source.name(),
                rules.len(),
                plural(constraints),
                grammar.display_symbol(grammar.start()),
                min_depth.map_or("never".to_string(), |d| d.to_string()),
                min_length.map_or("never".to_string(), |d| format!(
                    "{d} byte{}",
                    if d == 1 { "" } else { "s" }
                )),
            );
            let verdict = match (errors, warnings) {
                (0, 0) => "clean".to_string(),
                (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
            };
            println!("{}: {verdict}", spec.source.name());
        }
    }
    Ok(if failed { exit::BAD_SPEC } else { exit::OK })
}

/// `lint --format json`'s object for a spec that could not be loaded: its diagnostics,
/// and `null` for what only a loaded grammar tells.
fn unloadable_json(error: &thicket_grammar::SpecError) -> serde_json::Value {
    let errors = error.diagnostics.iter().filter(|d| d.is_error()).count();
    serde_json::json!({
        "file": error.source.name(),
        "ok": false,
        "start": null,
        "errors": errors,
        "warnings": error.diagnostics.len() - errors,
        "diagnostics": error
            .diagnostics
            .iter()
            .map(|d| d.to_json(&error.source))
            .collect::<Vec<_>>(),
        "notes": [],
        "protocol": null,
        "totals": null,
        "rules": null,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
