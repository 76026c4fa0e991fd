//! Fandango specs compiled whole: Python only when something needs it, generators and
//! Python constraints in the solver, goals ranking candidates, and a clear error when
//! Python is needed but missing. Inputs are judged by checks written here in Rust,
//! independently of thicket's checker and of the spec's Python.
//!
//! Tests that run Python are skipped when `python3` does not run, unless
//! `THICKET_REQUIRE_PYTHON=1` (set by CI) makes that a failure.

use thicket_fandango::{Options, compile};
use thicket_python::PythonConfig;
use thicket_solve::{Solver, SolverConfig};

fn have_python() -> bool {
    let python = PythonConfig::default().python;
    let ok = std::process::Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("THICKET_REQUIRE_PYTHON").is_none_or(|v| v != "1"),
            "{} does not run but THICKET_REQUIRE_PYTHON=1",
            python.display()
        );
        eprintln!("\n*** SKIPPED: {} does not run ***\n", python.display());
    }
    ok
}

/// Options naming an interpreter that does not exist.
fn missing_python() -> Options {
    Options {
        python: PythonConfig {
            python: "/nonexistent/python3".into(),
            ..PythonConfig::default()
        },
        ..Options::default()
    }
}

fn load(text: &str, options: &Options) -> Result<thicket_fandango::LoadedSpec, String> {
    let spec = thicket_grammar::load_spec_bytes("test.fan", text.as_bytes(), &Default::default())
        .map_err(|e| e.render())?;
    compile(spec, options).map_err(|e| e.render())
}

/// A record: a name from a generator, digits, and a checksum over both that only the
/// spec's Python function computes.
const RECORD: &str = r##"
import random

def pick_name():
    return random.choice(["ada", "bob", "cy"]) + str(random.randint(0, 9))

def checksum(body):
    return "%02d" % (sum(bytes(str(body), "ascii")) % 100)

<start> ::= <body> "#" <sum>
<body> ::= <name> ":" <digit>+
<name> ::= <ascii_lowercase_letter>+ <digit> := pick_name()
<sum> ::= <digit> <digit>

where str(<sum>) == checksum(<body>)
"##;

/// The record's checksum, computed here.
fn checksum(body: &str) -> String {
    format!("{:02}", body.bytes().map(u32::from).sum::<u32>() % 100)
}

#[test]
fn generators_and_python_constraints_make_valid_records() {
    if !have_python() {
        return;
    }
    let loaded = load(RECORD, &Options::default()).unwrap();
    assert!(loaded.needs_python());
    assert_eq!(loaded.constraints.len(), 1);
    assert!(!loaded.constraints[0].host_exprs.is_empty());
    let solver = Solver::new(
        &loaded.spec.grammar,
        loaded.core_constraints(),
        SolverConfig::default(),
    )
    .unwrap()
    .with_source(loaded.generators.clone().unwrap());
    let mut names = std::collections::HashSet::new();
    for i in 0..30 {
        let (tree, _) = solver
            .solve(&mut Solver::rng_for(5, i))
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let (body, sum) = text.split_once('#').unwrap();
        assert_eq!(sum, checksum(body), "{text}");
        let name = body.split(':').next().unwrap();
        assert!(
            ["ada", "bob", "cy"].iter().any(|n| name.starts_with(n)) && name.len() <= 4,
            "{text}"
        );
        names.insert(name.to_string());
    }
    assert!(names.len() > 3, "the generator's values vary: {names:?}");
    // The same seed gives the same input, whichever Python process ran the generator.
    let a = solver.solve(&mut Solver::rng_for(5, 3)).unwrap().0;
    let b = solver.solve(&mut Solver::rng_for(5, 3)).unwrap().0;
    assert_eq!(a.bytes(), b.bytes());
}

#[test]
fn python_that_is_never_called_needs_no_interpreter_and_missing_python_is_named() {
    let missing = missing_python();
    // Native constraints only: the code block is never run.
    let native = "def unused():\n    return 1\n\n<start> ::= <digit>+\nwhere int(<start>) > 5\n";
    let loaded = load(native, &missing).unwrap();
    assert!(!loaded.needs_python());
    assert!(loaded.python().is_none());
    // A Python constraint without Python: an error naming the interpreter and the spec.
    let err = load(RECORD, &missing).err().unwrap();
    assert!(err.contains("/nonexistent/python3"), "{err}");
    assert!(err.contains("test.fan"), "{err}");
}

#[test]
fn generators_whose_expression_is_a_literal_need_no_interpreter() {
    let missing = missing_python();
    // Whitespace and quotes drawn freely but written as one space and `"`; a number as
    // an int literal; adjacent strings joined; bytes. As Python's values would give.
    let spec = "<start> ::= <q> <word> <q> <ws> <n> <ws> <tail>\n\
                <ws> ::= (' ' | '\\t')+ := ' '\n\
                <q> ::= ('\"' | \"'\")? := '\"'\n\
                <word> ::= <ascii_lowercase_letter>+\n\
                <n> ::= <digit>+ := 42\n\
                <tail> ::= <ascii_letter>+ := 'x' \"y\"\n";
    let loaded = load(spec, &missing).unwrap();
    assert!(!loaded.needs_python());
    let solver = Solver::new(&loaded.spec.grammar, Vec::new(), SolverConfig::default())
        .unwrap()
        .with_source(loaded.generators.clone().unwrap());
    for i in 0..20 {
        let (tree, _) = solver
            .solve(&mut Solver::rng_for(4, i))
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let word = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix("\" 42 xy"))
            .unwrap_or_else(|| panic!("{text:?}"));
        assert!(word.bytes().all(|b| b.is_ascii_lowercase()), "{text:?}");
    }
    // An expression that is more than a literal still needs Python, and says so.
    let computed = "<start> ::= <n>\n<n> ::= <digit>+ := 40 + 2\n";
    let err = load(computed, &missing).err().unwrap();
    assert!(err.contains("/nonexistent/python3"), "{err}");
}

#[test]
fn goals_pick_the_best_candidate() {
    if !have_python() {
        return;
    }
    let spec = "<start> ::= <digit>+\nminimizing int(<start>)\n";
    let loaded = load(spec, &Options::default()).unwrap();
    assert_eq!(loaded.goals.len(), 1);
    let parser = thicket_parse::Parser::new(&loaded.spec.grammar, Default::default()).unwrap();
    let trees: Vec<_> = ["907", "12", "55"]
        .iter()
        .map(|t| parser.parse(t.as_bytes()).unwrap().tree())
        .collect();
    assert_eq!(loaded.best(&trees), Some(1));
    let spec = "<start> ::= <digit>+\nmaximizing len(str(<start>))\n";
    let loaded = load(spec, &Options::default()).unwrap();
    assert_eq!(loaded.best(&trees), Some(0));
}

#[test]
fn what_cannot_be_generated_yet_says_why() {
    let protocol = "<start> ::= <Client:hello>\n<hello> ::= 'hi'\n";
    let loaded = load(protocol, &Options::default()).unwrap();
    assert!(loaded.generable().unwrap_err().contains("protocol spec"));
    // Bit fields are generated (their bytes: tests/bits_and_counts.rs).
    let bits = "<start> ::= <bit>{8}\n";
    let loaded = load(bits, &Options::default()).unwrap();
    assert!(loaded.generable().is_ok(), "{:?}", loaded.generable());
}

/// A file of chunks, as PNG's: optional notes and one or more blocks, each with a
/// checksum over its generated data. Read as Fandango reads it, each constraint's
/// `<..._sum>` and `<..._data>` range over every chunk of their kind, so only a file
/// with one block and at most one note is valid (or chunks with the same data), and
/// fixing one chunk's checksum breaks it for the others: the repairs must drop chunks.
const CHUNKS: &str = r##"
import random

def checksum(data):
    return "%02d" % (sum(bytes(str(data), "ascii")) % 100)

def fresh_data():
    return "".join(random.choice("abcdefgh") for _ in range(random.randint(3, 8)))

<start> ::= "P" <note>* <block>+ "E"
<note> ::= "n" <note_sum> <note_data> ";"
<note_sum> ::= <digit> <digit>
<note_data> ::= <ascii_lowercase_letter>+ := fresh_data()
<block> ::= "b" <block_sum> <block_data> ";"
<block_sum> ::= <digit> <digit>
<block_data> ::= <ascii_lowercase_letter>+ := fresh_data()

where str(<note_sum>) == checksum(<note_data>)
where str(<block_sum>) == checksum(<block_data>)
"##;

#[test]
fn chunks_whose_checksums_span_every_chunk_are_dropped_to_one() {
    if !have_python() {
        return;
    }
    let loaded = load(CHUNKS, &Options::default()).unwrap();
    // One tree per input and a few rounds: dropping chunks, not regenerating the file
    // until it has one block by chance, is what makes inputs.
    let config = SolverConfig {
        max_attempts: 1,
        max_rounds: 12,
        ..SolverConfig::default()
    };
    let solver = Solver::new(&loaded.spec.grammar, loaded.core_constraints(), config)
        .unwrap()
        .with_source(loaded.generators.clone().unwrap());
    let mut inputs = std::collections::HashSet::new();
    let mut with_note = 0;
    for i in 0..30 {
        let (tree, _) = solver
            .solve(&mut Solver::rng_for(3, i))
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let body = text.strip_prefix('P').and_then(|t| t.strip_suffix('E'));
        let chunks: Vec<&str> = body.unwrap().split_terminator(';').collect();
        // Each constraint over every pair of its kind's chunks, as Fandango reads it.
        for kind in ["n", "b"] {
            let of_kind: Vec<(&str, &str)> = chunks
                .iter()
                .filter_map(|c| c.strip_prefix(kind))
                .map(|c| c.split_at(2))
                .collect();
            for (sum, _) in &of_kind {
                for (_, data) in &of_kind {
                    assert_eq!(*sum, checksum(data), "{text}");
                }
            }
        }
        assert!(chunks.iter().any(|c| c.starts_with('b')), "{text}");
        with_note += usize::from(chunks.iter().any(|c| c.starts_with('n')));
        inputs.insert(text);
    }
    // Chunks are dropped, not all of them: notes remain, and inputs differ.
    assert!(with_note > 0, "{inputs:?}");
    assert!(inputs.len() > 20, "{inputs:?}");
}

/// A generator with an argument (`:= f(<data>)`) gets a fresh `<data>` made from the
/// grammar; a converter back (`<data> ::= ... := g(<item>)`) is not called for it, since
/// it would need the `<item>` being made. The hex digits are judged here.
const ENCODED: &str = r##"
<start> ::= "Data: " <item>
<item> ::= <hexdigit>+ := bytes(<data>).hex()
<data> ::= "key=" <digit>{2} := bytes.fromhex(str(<item>)).decode()
"##;

#[test]
fn generators_take_fresh_subtrees_of_the_rules_they_name() {
    if !have_python() {
        return;
    }
    let loaded = load(ENCODED, &Options::default()).unwrap();
    let solver = Solver::new(&loaded.spec.grammar, Vec::new(), SolverConfig::default())
        .unwrap()
        .with_source(loaded.generators.clone().unwrap());
    let mut seen = std::collections::HashSet::new();
    for i in 0..20 {
        let (tree, _) = solver
            .solve(&mut Solver::rng_for(9, i))
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let hex = text.strip_prefix("Data: ").unwrap();
        let decoded: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
            .collect();
        let decoded = String::from_utf8(decoded).unwrap();
        let digits = decoded.strip_prefix("key=").unwrap();
        assert!(
            digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit()),
            "{text}"
        );
        seen.insert(decoded);
    }
    assert!(seen.len() > 5, "fresh arguments vary: {seen:?}");
    // A generator naming a rule that does not exist is a spec error at the generator.
    let err = load(
        "<start> ::= <a>\n<a> ::= \"x\" := str(<nosuch>)\n",
        &Options::default(),
    )
    .err()
    .unwrap();
    assert!(
        err.contains("<nosuch>") && err.contains("test.fan:2"),
        "{err}"
    );
}

#[test]
fn constant_repetition_counts_are_computed_once() {
    if !have_python() {
        return;
    }
    let constant = "SIZE = 3\n<start> ::= <row>{SIZE * 2} \";\" <digit>{1, SIZE}\n\
                    <row> ::= \"r\" <digit>\n";
    let loaded = load(constant, &Options::default()).unwrap();
    assert!(loaded.generable().is_ok(), "{:?}", loaded.generable());
    let generator = thicket_gen::Generator::new(&loaded.spec.grammar, Default::default()).unwrap();
    for i in 0..20 {
        let (tree, _) = generator.generate_tree(&mut Solver::rng_for(2, i));
        let text = String::from_utf8(tree.bytes().to_vec()).unwrap();
        let (rows, digits) = text.split_once(';').unwrap();
        assert_eq!(rows.matches('r').count(), 6, "{text}");
        assert!((1..=3).contains(&digits.len()), "{text}");
    }
    // Without Python (lint), the bounds stay computed and nothing is run.
    let unrun = load(
        constant,
        &Options {
            no_python: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(unrun.counts.is_some());
    assert!(unrun.python().is_none());
    // A bound that is no count is an error at the bound.
    let err = load("<start> ::= \"x\"{'many'}\n", &Options::default())
        .err()
        .unwrap();
    assert!(
        err.contains("repetition count") && err.contains("test.fan:1"),
        "{err}"
    );
    // A count read from the input is left to the solver (tests/bits_and_counts.rs).
    let dependent = "<start> ::= <n> <digit>{int(<n>)}\n<n> ::= \"1\" | \"2\"\n";
    let loaded = load(dependent, &Options::default()).unwrap();
    assert!(loaded.generable().is_ok() && loaded.counts.is_some());
}

/// `thicket lint`'s notes: which constraints are native and which call Python (and
/// why), and whether the spec's Python runs. Compiling starts no Python.
#[test]
fn notes_tell_native_constraints_from_python_ones() {
    let loaded = load(RECORD, &Options::default()).unwrap();
    let notes = loaded.notes();
    assert!(
        notes
            .iter()
            .any(|n| n == "0 constraints solved natively, 1 calling Python; 0 goals"),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains(": in Python: ")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("runs in Python") && n.ends_with("1 Python block, 1 generator")),
        "{notes:?}"
    );
    let native = load(
        "<start> ::= <digit>+\nwhere len(str(<start>)) == 3\n",
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        native.notes(),
        vec!["1 constraint solved natively, 0 calling Python; 0 goals".to_string()]
    );
}
