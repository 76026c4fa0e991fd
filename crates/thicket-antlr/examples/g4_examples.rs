//! Reads a grammars-v4 folder's `.g4` files and parses each of its `examples/` inputs
//! with the byte grammar and the exact reading, printing one line per input and a
//! summary: `cargo run --release -p thicket-antlr --example g4_examples -- DIR [START]`.

use std::path::{Path, PathBuf};
use std::time::Instant;
use thicket_parse::{ParseConfig, Parser};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: g4_examples DIR [START]");
        std::process::exit(2);
    };
    let start = args.next();
    let mut grammars: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("grammar folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| thicket_antlr::is_g4(p))
        .collect();
    grammars.sort();
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
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).expect("parser");
    let checker = spec.checker();
    println!("parsers built in {:.2?}", clock.elapsed());
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir.join("examples"))
        .expect("examples folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            !name.ends_with(".tree") && !name.ends_with(".errors") && p.is_file()
        })
        .collect();
    inputs.sort();
    let (mut both, mut total, mut negative, mut rejected) = (0, 0, 0, 0);
    for input in &inputs {
        let text = std::fs::read(input).expect("example");
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
            exact.map_or_else(|r| format!("REJECTS {r}"), |()| "accepts".into()),
            bytes.map_or_else(|r| format!("REJECTS {r}"), |()| "accepts".into()),
        );
    }
    println!(
        "{both}/{total} examples accepted by both readings; {rejected}/{negative} negative examples rejected"
    );
}
