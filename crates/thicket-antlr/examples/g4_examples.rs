//! Reads a grammars-v4 folder's `.g4` files and parses each of its `examples/` inputs
//! with the byte grammar and the exact reading, printing one line per input and a
//! summary: `cargo run --release -p thicket-antlr --example g4_examples -- DIR [START]`.
//! `g4_examples --grammar FILE... [--start RULE] -- INPUT...` reads the grammar files
//! named and parses the inputs named instead (grammars whose folder holds other `.g4`
//! files, or whose examples are elsewhere).

use std::path::{Path, PathBuf};
use std::time::Instant;
use thicket_parse::{ParseConfig, Parser};

/// What to read and what to parse.
struct Job {
    grammars: Vec<PathBuf>,
    start: Option<String>,
    inputs: Vec<PathBuf>,
}

const USAGE: &str = "usage: g4_examples DIR [START]\n       g4_examples --grammar FILE... [--start RULE] -- INPUT...";

fn job_from_args() -> Result<Job, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a.starts_with("--")) {
        let mut job = Job {
            grammars: Vec::new(),
            start: None,
            inputs: Vec::new(),
        };
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--grammar" => job
                    .grammars
                    .push(rest.next().ok_or("--grammar needs a file")?.into()),
                "--start" => job.start = Some(rest.next().ok_or("--start needs a rule")?.clone()),
                "--" => job.inputs.extend(rest.by_ref().map(PathBuf::from)),
                other => return Err(format!("unknown argument {other}")),
            }
        }
        if job.grammars.is_empty() {
            return Err("no --grammar given".into());
        }
        return Ok(job);
    }
    let dir = PathBuf::from(args.first().ok_or("no folder given")?);
    let files = |dir: &Path| -> Result<Vec<PathBuf>, String> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        found.sort();
        Ok(found)
    };
    let grammars = files(&dir)?
        .into_iter()
        .filter(|p| thicket_antlr::is_g4(p))
        .collect();
    let inputs = files(&dir.join("examples"))?
        .into_iter()
        .filter(|p| {
            let name = p.to_string_lossy();
            !name.ends_with(".tree") && !name.ends_with(".errors") && p.is_file()
        })
        .collect();
    Ok(Job {
        grammars,
        start: args.get(1).cloned(),
        inputs,
    })
}

fn main() {
    let Job {
        grammars,
        start,
        inputs,
    } = match job_from_args() {
        Ok(job) => job,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let paths: Vec<&Path> = grammars.iter().map(|p| p.as_path()).collect();
    let clock = Instant::now();
    let spec = match thicket_antlr::load_g4_files(&paths, start.as_deref(), 1 << 24) {
        Ok(spec) => spec,
        Err(e) => {
            eprint!("{}", e.render());
            std::process::exit(3);
        }
    };
    println!(
        "read {} file(s) in {:.2?}: {} warnings",
        paths.len(),
        clock.elapsed(),
        spec.warnings.len()
    );
    // THICKET_SHOW_EXPR=N prints node N of the byte grammar (to find slow DFAs).
    if let Some(n) = std::env::var("THICKET_SHOW_EXPR")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        let grammar = &spec.spec.grammar;
        println!(
            "node {n}: {}",
            grammar.display_expr(thicket_grammar::ExprId::from_index(n))
        );
    }
    let clock = Instant::now();
    let parser = match Parser::new(&spec.spec.grammar, ParseConfig::default()) {
        Ok(parser) => parser,
        Err(e) => {
            eprintln!("the byte grammar's parser: {e}");
            std::process::exit(3);
        }
    };
    let checker = spec.checker();
    println!("parsers built in {:.2?}", clock.elapsed());
    let (mut both, mut total, mut negative, mut rejected) = (0, 0, 0, 0);
    for input in &inputs {
        // Read as ANTLR reads a file (bytes that are not UTF-8 as U+FFFD).
        let text = match std::fs::read(input) {
            Ok(text) => thicket_antlr::antlr_text(&text).into_owned(),
            Err(e) => {
                println!("{}: unreadable: {e}", input.display());
                continue;
            }
        };
        // grammars-v4 marks an input that must fail with a `NAME.errors` file beside it.
        let mut errors = input.clone().into_os_string();
        errors.push(".errors");
        if Path::new(&errors).exists() {
            negative += 1;
            let verdict = checker.accepts(&text);
            rejected += usize::from(verdict.is_err());
            println!(
                "{}: negative example, exact {}",
                input.display(),
                verdict.map_or_else(|r| format!("rejects: {r}"), |()| "ACCEPTS".into())
            );
            continue;
        }
        total += 1;
        let clock = Instant::now();
        let exact = checker.accepts(&text);
        let t_exact = clock.elapsed();
        let clock = Instant::now();
        let bytes = parser.recognize(&text);
        let t_bytes = clock.elapsed();
        if exact.is_ok() && bytes.is_ok() {
            both += 1;
        }
        println!(
            "{}: exact {} ({t_exact:.2?}), byte grammar {} ({t_bytes:.2?})",
            input.display(),
            exact.map_or_else(|r| one_line(format!("REJECTS {r}")), |()| "accepts".into()),
            bytes.map_or_else(|r| one_line(format!("REJECTS {r}")), |()| "accepts".into()),
        );
    }
    println!(
        "{both}/{total} examples accepted by both readings; {rejected}/{negative} negative examples rejected"
    );
}

/// A message on one line, so that each input's verdict is one line of output.
fn one_line(message: String) -> String {
    message.replace('\n', " / ")
}
