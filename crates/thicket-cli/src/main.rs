//! # thicket (command-line tool)
//!
//! The `thicket` binary: reads a spec, checks it, generates inputs. Each subcommand lives
//! in its own module; this file holds the argument model and the exit-code policy.

mod check;
mod codeine;
mod cover;
mod coverage;
mod fuzz;
mod generate;
mod inputs;
mod learn;
mod lint;
mod mine;
mod minimize;
mod parallel;
mod parse;
mod plot;
mod shared;
mod solve_tokens;
mod spec;
mod target;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Fandango names the spec with `-f FILE` / `--fandango-file FILE`; thicket with its
/// first argument. The flag is moved to where the argument goes (right after the
/// subcommand), so a script's `thicket parse -f spec.fan input` means what `fandango
/// parse -f spec.fan input` does. Nothing after `--` (a target's own arguments) is
/// touched.
fn spec_flag_as_argument(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut rest = Vec::with_capacity(args.len());
    let mut specs = Vec::new();
    let mut subcommand = None;
    let mut iter = args.into_iter();
    rest.extend(iter.next());
    while let Some(arg) = iter.next() {
        let text = arg.to_str().unwrap_or("");
        if text == "--" {
            rest.push(arg);
            rest.extend(iter.by_ref());
            break;
        }
        if text == "-f" || text == "--fandango-file" {
            match iter.next() {
                Some(path) => specs.push(path),
                None => rest.push(arg),
            }
        } else if let Some(path) = text.strip_prefix("--fandango-file=") {
            specs.push(path.into());
        } else {
            if subcommand.is_none() && !text.starts_with('-') {
                subcommand = Some(rest.len());
            }
            rest.push(arg);
        }
    }
    if let Some(at) = subcommand {
        rest.splice(at + 1..at + 1, specs);
    } else {
        rest.extend(specs);
    }
    rest
}

/// Running out of memory ends the process with a message, never with an abort.
#[global_allocator]
static ALLOCATOR: thicket_driver::alloc::ExitWhenExhausted =
    thicket_driver::alloc::ExitWhenExhausted;

/// Exit codes, the same for every subcommand.
pub mod exit {
    /// Everything worked.
    pub const OK: u8 = 0;
    /// An input was rejected (reserved for `parse` and `check`).
    pub const REJECTED: u8 = 1;
    /// The command line is wrong (clap's own code).
    pub const USAGE: u8 = 2;
    /// The spec has errors.
    pub const BAD_SPEC: u8 = 3;
    /// Anything else: unreadable files, unwritable output, impossible limits.
    pub const FAILURE: u8 = 4;

    /// Prints `error` as a usage error and gives its code.
    pub fn usage(error: impl std::fmt::Display) -> u8 {
        eprintln!("error: {error}");
        USAGE
    }
}

#[derive(Parser)]
#[command(
    name = "thicket",
    version,
    about = "Grammar-based test generation: valid, diverse, aimed inputs from a grammar",
    long_about = "Grammar-based test generation: valid, diverse, aimed inputs from a grammar.\n\n\
        A spec is a grammar in ISLa .bnf / Fandango .fan syntax (`<name> ::= alt | alt`) or a \
        fuzzingbook JSON grammar. See docs/spec-format.md.",
    after_help = "Examples:\n  thicket generate specs/json.fan -n 10 --seed 1\n  thicket lint specs/csv.bnf\n  \
        thicket parse specs/json.fan input.json\n  \
        thicket generate specs/json.fan --strategy kpath -k 3 -o out/\n  \
        thicket learn specs/json.fan samples/ -o probs.json\n  \
        thicket cover specs/json.fan out/* -k 3\n  \
        thicket check specs/xml.bnf doc.xml\n  \
        thicket fuzz specs/json.fan -o out --execs 100000 -- ./target @@\n  \
        thicket coverage specs/json.fan out/queue -- ./target @@\n  \
        thicket minimize specs/json.fan out/crashes/id:000000* -- ./target @@\n  \
        thicket learn-coverage specs/expr.fan train/ -o m.json --python eval/targets/expr_eval.py:evaluate\n  \
        thicket generate specs/expr.fan --target m.json:paren_subtraction_in_product -n 100\n\n\
        Exit codes: 0 ok, 1 input rejected, 2 usage error, 3 the spec has errors, 4 other failure."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate inputs from a spec: random, or covering every k-path.
    Generate(generate::GenerateArgs),
    /// Learn a probabilistic grammar (probabilities of alternatives and repetition
    /// counts) from sample inputs, for `generate --probabilities` and `fuzz`.
    Learn(learn::LearnArgs),
    /// Check a spec for errors and print a summary of its rules.
    Lint(lint::LintArgs),
    /// Parse inputs into derivation trees, or check that they are in the language.
    Parse(parse::ParseArgs),
    /// Measure the k-path coverage of a set of inputs (grammar coverage; no program runs).
    Cover(cover::CoverArgs),
    /// Check inputs against the grammar and the semantic constraints (ISLa syntax).
    Check(check::CheckArgs),
    /// Run a program on generated inputs, keeping those that reach new code and saving
    /// failures and hangs (coverage-guided fuzzing).
    Fuzz(Box<fuzz::FuzzArgs>),
    /// Measure the code coverage a set of inputs reaches in a program (edges, or Python
    /// lines and branches), and the failures they cause.
    Coverage(coverage::CoverageArgs),
    /// Reduce a failing input while it keeps failing the same way (kind and location),
    /// through its derivation tree so that it stays in the grammar.
    Minimize(minimize::MinimizeArgs),
    /// Learn which input structure (k-paths) reaches which code location: run the
    /// program once per input, then one decision tree per location (CODEINE).
    LearnCoverage(codeine::LearnArgs),
    /// Show a learned location's tree as grammar patterns, with support and accuracy.
    Explain(codeine::ExplainArgs),
    /// Predict from inputs alone which code locations they cover (and score it).
    Predict(codeine::PredictArgs),
    /// Solve token constraints: a shortest input of the grammar whose first tokens lie
    /// in given sets, or UNSAT.
    SolveTokens(solve_tokens::SolveTokensArgs),
    /// Find the semantic constraints (ISLa) that sample inputs share, from a catalog of
    /// patterns, optionally labelling and validating with the program (ISLearn).
    Mine(mine::MineArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(spec_flag_as_argument(std::env::args_os().collect()));
    // A program that parses many large inputs (check, cover, fuzz) writes their trees
    // into the memory of dropped ones rather than fresh pages; a library does not by
    // default.
    thicket_tree::keep_spare_nodes(128 << 20);
    let result = match cli.command {
        Command::Generate(args) => generate::run(args),
        Command::Learn(args) => learn::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Parse(args) => parse::run(args),
        Command::Cover(args) => cover::run(args),
        Command::Check(args) => check::run(args),
        Command::Fuzz(args) => fuzz::run(*args),
        Command::Coverage(args) => coverage::run(args),
        Command::Minimize(args) => minimize::run(args),
        Command::LearnCoverage(args) => codeine::run_learn(args),
        Command::Explain(args) => codeine::run_explain(args),
        Command::Predict(args) => codeine::run_predict(args),
        Command::SolveTokens(args) => solve_tokens::run(args),
        Command::Mine(args) => mine::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            if is_broken_pipe(&error) {
                // The reader went away (e.g. `| head`): not an error for a generator.
                return ExitCode::from(exit::OK);
            }
            eprintln!("error: {error:#}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
