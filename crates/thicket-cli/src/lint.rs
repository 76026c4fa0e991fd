//! `thicket lint`: grammar checks and a summary of every rule.

use crate::exit;
use crate::spec::{SpecArgs, report};
use clap::{Args, ValueEnum};
use thicket_grammar::diag::render_diagnostics;
use thicket_grammar::{Analysis, Expr, Grammar, Spec, SpecError, SpecFormat, UNBOUNDED, lint};

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
    /// One JSON object on stdout.
    Json,
}

struct RuleSummary {
    name: String,
    alternatives: usize,
    min_depth: Option<u32>,
    min_length: Option<u64>,
    reachable: bool,
}

/// Error codes of `thicket-constraint` that say a `where` block is not ISLa at all
/// (rather than a wrong ISLa constraint): its syntax, or a call of a function ISLa does
/// not know.
const NOT_ISLA: &[&str] = &[
    "constraint-syntax",
    "unexpected-character",
    "unterminated-string",
    "bad-escape",
    "mexpr-syntax",
    "not-a-formula",
    "unknown-function",
    "unbound-variable",
];

/// Whether a `.fan` spec's `where` blocks failed to compile because they are Fandango's
/// Python constraints, not ISLa's: lint accepts those unchecked for now.
fn python_constraints(spec: &Spec, error: &SpecError) -> bool {
    SpecFormat::of(spec.source.name()) == SpecFormat::Fandango
        && !spec.fandango.constraints.is_empty()
        && error
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .all(|d| NOT_ISLA.contains(&d.code))
}

/// What lint says about a Fandango spec's parts it does not check.
fn fandango_notes(spec: &Spec, python_constraints: bool) -> Vec<String> {
    let fan = &spec.fandango;
    let mut notes = Vec::new();
    if fan.is_protocol() {
        notes.push(format!(
            "a protocol spec: its parties ({}) send the messages it names; their messages are \
             checked as the rules they name, but running the protocol (Fandango's `talk`) is not \
             supported yet",
            fan.parties.join(", ")
        ));
    }
    if fan.uses_bits {
        notes.push(
            "the grammar has bits (0, 1): they are checked as the characters \"0\" and \"1\"; \
             generating bit-level inputs is not supported yet"
                .to_string(),
        );
    }
    let mut unchecked = Vec::new();
    let count = |n: usize, what: &str| {
        (n > 0).then(|| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
    };
    unchecked.extend(count(fan.python.len(), "Python block"));
    unchecked.extend(count(fan.generators.len(), "generator"));
    unchecked.extend(count(fan.computed_repeats.len(), "computed repetition"));
    // The `where` blocks read as ISLa: the main file's from `constraints_start` on.
    let isla = |c: &thicket_grammar::FanConstraint| {
        !python_constraints
            && c.kind == thicket_grammar::ConstraintKind::Where
            && std::sync::Arc::ptr_eq(&c.block.source, &spec.source)
            && spec
                .constraints_start
                .is_some_and(|start| c.block.span.start as usize >= start)
    };
    let python_where = fan.constraints.iter().filter(|c| !isla(c)).count();
    unchecked.extend(count(python_where, "Python constraint"));
    unchecked.extend(count(fan.settings.len(), "setting"));
    if !unchecked.is_empty() {
        notes.push(format!(
            "accepted without checking their Python: {}",
            unchecked.join(", ")
        ));
    }
    notes
}

/// Runs `thicket lint`.
pub fn run(args: LintArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load_grammar() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let (constraints, python_constraints) = match args.spec.spec_constraints(&spec) {
        Ok(constraints) => (constraints.len(), false),
        Err(e) if python_constraints(&spec, &e) => (0, true),
        Err(e) => return Ok(report(&e)),
    };
    let notes = fandango_notes(&spec, python_constraints);
    let grammar = &spec.grammar;
    let analysis = Analysis::new(grammar);
    let mut diagnostics = lint(grammar, &analysis);
    diagnostics.extend(spec.fandango.warnings.iter().cloned());
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let rules = summarize(grammar, &analysis);
    let terminals = grammar
        .expr_ids()
        .filter(|&e| matches!(grammar.expr(e), Expr::Literal(_) | Expr::Regex(_)))
        .count();
    let alternatives: usize = rules.iter().map(|r| r.alternatives).sum();
    let min_depth = rule_depth(&analysis, grammar.start());
    let min_length = rule_length(&analysis, grammar.start());
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn rule_depth(analysis: &Analysis, symbol: thicket_grammar::SymbolId) -> Option<u32> {
    Some(analysis.rule_min_depth(symbol)).filter(|&d| d != UNBOUNDED)
}

fn rule_length(analysis: &Analysis, symbol: thicket_grammar::SymbolId) -> Option<u64> {
    analysis
        .is_productive(symbol)
        .then(|| analysis.rule_min_len(symbol))
}

fn summarize(grammar: &Grammar, analysis: &Analysis) -> Vec<RuleSummary> {
    grammar
        .symbols()
        .map(|s| {
            let rule = grammar.rule(s);
            RuleSummary {
                name: rule.name.clone(),
                alternatives: match grammar.expr(rule.body) {
                    Expr::Alt(alts) => alts.len(),
                    _ => 1,
                },
                min_depth: rule_depth(analysis, s),
                min_length: rule_length(analysis, s),
                reachable: analysis.is_reachable(s),
            }
        })
        .collect()
}
