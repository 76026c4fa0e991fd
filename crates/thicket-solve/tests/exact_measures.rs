//! Exact counts and exact lengths, everyday requests on the bundled specs: a CSV file
//! whose every record has 7 fields (more than the generator's repetition cap gives a
//! random record), a JSON document of exactly 300 to 20,000 characters (beyond what
//! the cap and sampling a regex until its length fits could reach).

use std::path::Path;
use thicket_constraint::Predicates;
use thicket_grammar::Spec;
use thicket_solve::{Solver, SolverConfig};

fn load(name: &str) -> Spec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    thicket_grammar::load_spec_file(&path, &Default::default()).expect("bundled spec loads")
}

/// `n` solutions of seed 1 of the spec's constraints and `extra`, each checked by the
/// exact checker.
fn solve(spec: &Spec, extra: &str, n: u64) -> Vec<Vec<u8>> {
    let mut constraints = thicket_constraint::from_spec(spec, &Predicates::standard()).unwrap();
    constraints.push(
        thicket_constraint::from_text(&spec.grammar, &Predicates::standard(), "-c", extra).unwrap(),
    );
    let solver = Solver::new(&spec.grammar, constraints, SolverConfig::default())
        .unwrap_or_else(|e| panic!("{extra}: {e}"));
    (0..n)
        .map(|i| {
            let mut rng = Solver::rng_for(1, i);
            let (tree, _) = solver
                .solve(&mut rng)
                .unwrap_or_else(|e| panic!("{extra}: input {i}: {e}"));
            assert!(solver.violated(&tree).is_empty());
            tree.bytes().to_vec()
        })
        .collect()
}

#[test]
fn csv_records_of_exactly_seven_fields() {
    let spec = load("csv.bnf");
    let files = solve(
        &spec,
        "forall <csv-record> r: count(r, \"<raw-field>\", 7)",
        20,
    );
    let mut nonempty_fields = 0;
    for file in &files {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(file.as_slice());
        for record in reader.records() {
            let record = record.expect("the csv crate reads it");
            assert_eq!(record.len(), 7, "{}", String::from_utf8_lossy(file));
            nonempty_fields += record.iter().filter(|f| !f.is_empty()).count();
        }
    }
    // The fields are drawn as the generator draws them, not all left empty.
    assert!(nonempty_fields > 20, "{nonempty_fields} non-empty fields");
}

#[test]
fn json_documents_of_an_exact_length() {
    let spec = load("json.fan");
    // 5,000 and 20,000 lie past the measure table's cap: built from parts below it.
    for length in [300, 2000, 5000, 20000] {
        let docs = solve(&spec, &format!("str.len(<start>) = {length}"), 5);
        for doc in docs {
            let text = String::from_utf8(doc).expect("UTF-8");
            // `str.len` counts characters, as SMT-LIB does.
            assert_eq!(text.chars().count(), length);
        }
    }
}
