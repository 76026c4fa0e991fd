//! `thicket solve-tokens`: the token constraint solver by hand.

use crate::exit;
use crate::spec::SpecArgs;
use clap::Args;
use thicket_grammar::Tokens;
use thicket_solve::tokens::{Answer, TokenSet};

/// Arguments of `thicket solve-tokens`.
#[derive(Args, Debug)]
#[command(
    after_help = "Each SET constrains one token, in order: kinds separated by `,` \
(a literal's text such as `(` or `\"(\"`, or a token rule such as `<id>` or `id`), `*` for \
any token, `$` for the end of input (the input may end before this token), a leading `!` \
for the complement (`!)` is any token but `)`, and the end). Tokens after the last SET are \
free. Prints a shortest input of the grammar whose tokens lie in the sets (one space \
between tokens; a token rule's value is its shortest) and exits 0, or says UNSAT and exits \
1.\n\n\
The tokens of a spec: literals written in rules that are not tokens, and rules below \
which no recursive rule is reachable (regular rules), unless such a rule holds only \
whitespace (a separator, left out) or has separators inside (then its parts are tokens). \
--tokens names the token rules instead. --list shows the kinds.\n\n\
Examples:\n  thicket solve-tokens specs/javascript.fan 'function' '<identifier>' '(' '!)'\n  \
thicket solve-tokens specs/javascript.fan --list\n  \
thicket solve-tokens specs/javascript.fan '(' --json"
)]
pub struct SolveTokensArgs {
    #[command(flatten)]
    spec: SpecArgs,

    /// The token sets, one per position.
    #[arg(value_name = "SET")]
    sets: Vec<String>,

    /// The token rules, comma-separated (default: see below).
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    tokens: Vec<String>,

    /// List the token kinds and exit.
    #[arg(long)]
    list: bool,

    /// Print the answer as JSON: {"sat", "tokens", "input", "time_ms", "kinds"}.
    #[arg(long)]
    json: bool,
}

/// The tokens of a spec: `--tokens` rules, or the default.
pub fn tokens_of(grammar: &thicket_grammar::Grammar, rules: &[String]) -> Result<Tokens, String> {
    Tokens::with_rule_names(grammar, rules)
        .map_err(|rule| format!("--tokens: the spec has no rule {rule}"))
}

/// Runs `thicket solve-tokens`.
pub fn run(args: SolveTokensArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let tokens = match tokens_of(&spec.grammar, &args.tokens) {
        Ok(t) => t,
        Err(e) => return Ok(exit::usage(e)),
    };
    if args.list {
        for (i, k) in tokens.kinds().iter().enumerate() {
            println!("{i}\t{}", k.name);
        }
        return Ok(exit::OK);
    }
    let sets = match TokenSet::parse_all(&tokens, &args.sets) {
        Ok(sets) => sets,
        Err(e) => return Ok(exit::usage(e)),
    };
    let answer = Answer::solve(&spec.grammar, &tokens, &sets);
    let ms = answer.time_ms;
    if args.json {
        println!("{}", serde_json::to_string(&answer)?);
    } else if let Some(input) = &answer.input {
        println!("{input}");
        eprintln!(
            "thicket: {} tokens ({}) in {ms:.2} ms",
            answer.tokens.len(),
            answer.tokens.join(" ")
        );
    } else {
        println!("UNSAT");
        eprintln!("thicket: no input of the grammar has such tokens ({ms:.2} ms)");
    }
    Ok(if answer.sat { exit::OK } else { exit::REJECTED })
}
