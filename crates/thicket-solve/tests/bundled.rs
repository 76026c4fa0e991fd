//! The bundled subjects with their constraints: every solution satisfies them by the
//! exact checker and by an independent reader (the csv crate and Python's csv module,
//! the tar crate, Python's ElementTree with namespaces, the C compiler), and hostile constraints end with one
//! of the three outcomes (unsatisfiable, unsupported, no solution within the budget).

use std::path::Path;
use std::process::Command;
use thicket_constraint::Predicates;
use thicket_grammar::{Expr, Spec};
use thicket_solve::{SolveError, Solver, SolverConfig};

#[path = "../../thicket-cli/tests/judges/mod.rs"]
mod judges;

fn load(name: &str) -> Spec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    thicket_grammar::load_spec_file(&path, &Default::default()).expect("bundled spec loads")
}

/// `n` solutions of seed 1 at the given depth, each checked by the exact checker.
fn solutions(spec: &Spec, depth: u32, n: u64) -> Vec<Vec<u8>> {
    solved_trees(spec, depth, n)
        .iter()
        .map(|tree| tree.bytes().to_vec())
        .collect()
}

/// [`solutions`] as derivation trees.
fn solved_trees(spec: &Spec, depth: u32, n: u64) -> Vec<thicket_tree::DerivationTree> {
    let constraints = thicket_constraint::from_spec(spec, &Predicates::standard()).unwrap();
    assert!(!constraints.is_empty());
    let mut config = SolverConfig::default();
    config.generation.max_depth = depth;
    let solver = Solver::new(&spec.grammar, constraints, config).expect("solvable");
    let mut out = Vec::new();
    for i in 0..n {
        let mut rng = Solver::rng_for(1, i);
        let (tree, _) = solver
            .solve(&mut rng)
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        assert!(solver.violated(&tree).is_empty(), "input {i} is invalid");
        out.push(tree);
    }
    out
}

fn distinct_share(inputs: &[Vec<u8>]) -> f64 {
    let set: std::collections::HashSet<&Vec<u8>> = inputs.iter().collect();
    set.len() as f64 / inputs.len() as f64
}

/// The records of a CSV file as the csv crate reads them (strictly: every record as
/// long as the first).
fn rust_csv(input: &[u8]) -> Result<Vec<Vec<String>>, csv::Error> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(input)
        .records()
        .map(|r| r.map(|record| record.iter().map(str::to_string).collect()))
        .collect()
}

#[test]
fn csv_records_have_the_header_s_column_count_in_rust_and_python_alike() {
    let spec = load("csv.bnf");
    let trees = solved_trees(&spec, 30, 1000);
    let inputs: Vec<&[u8]> = trees.iter().map(|tree| tree.bytes()).collect();
    let record = spec.grammar.symbol("csv-record").expect("<csv-record>");
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    let mut rust = Vec::new();
    for (i, (tree, input)) in trees.iter().zip(&inputs).enumerate() {
        let records = tree
            .descendants(tree.root())
            .filter(|&n| matches!(spec.grammar.expr(tree.expr(n)), Expr::Ref(s) if *s == record))
            .count();
        let rows = rust_csv(input).unwrap_or_else(|e| panic!("input {i}: {e}"));
        // No record is skipped (an empty line would be) and all have one length.
        assert_eq!(rows.len(), records, "input {i}: {input:?}");
        assert!(
            rows.windows(2).all(|w| w[0].len() == w[1].len()),
            "input {i}"
        );
        rust.push(rows);
        let path = dir.path().join(format!("{i}.csv"));
        std::fs::write(&path, input).unwrap();
        paths.push(path);
    }
    if let Some(python) = judges::python_csv(&paths) {
        for (i, (python, rust)) in python.iter().zip(&rust).enumerate() {
            assert_eq!(
                python.as_ref(),
                Ok(rust),
                "input {i}: Python reads {:?} otherwise",
                String::from_utf8_lossy(inputs[i])
            );
        }
    }
    let inputs: Vec<Vec<u8>> = inputs.iter().map(|input| input.to_vec()).collect();
    assert!(distinct_share(&inputs) > 0.95);
    let mean = inputs.iter().map(Vec::len).sum::<usize>() / inputs.len();
    assert!(mean > 20, "mean size {mean}");
}

#[test]
fn tar_archives_have_right_checksums_and_sizes() {
    let inputs = solutions(&load("tar.bnf"), 30, 30);
    for (i, input) in inputs.iter().enumerate() {
        let mut archive = tar::Archive::new(&input[..]);
        let entries = archive
            .entries()
            .unwrap_or_else(|e| panic!("input {i}: {e}"));
        let mut seen = 0;
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("input {i}: {e}"));
            // The size field is the content's length (what the second constraint says).
            assert!(entry.header().size().is_ok(), "input {i}");
            seen += 1;
        }
        assert!(seen >= 1, "input {i}: no entry");
    }
}

#[test]
fn xml_documents_are_well_formed_with_namespaces() {
    let inputs = solutions(&load("xml.bnf"), 10, 300);
    let Some(python) = python() else {
        eprintln!("python3 not found: only the exact checker judged the XML");
        return;
    };
    let temp = tempdir();
    let dir = temp.path();
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("{i}.xml")), input).unwrap();
    }
    let script = "import sys, os, xml.etree.ElementTree as ET\n\
                  bad = []\n\
                  for f in sorted(os.listdir(sys.argv[1])):\n\
                  \x20   try: ET.parse(os.path.join(sys.argv[1], f))\n\
                  \x20   except Exception as e: bad.append(f + ': ' + str(e))\n\
                  print('\\n'.join(bad[:5])); sys.exit(1 if bad else 0)\n";
    let out = Command::new(python)
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ElementTree rejects: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(distinct_share(&inputs) > 0.9);
}

#[test]
fn scriptsize_c_programs_compile() {
    let inputs = solutions(&load("scriptsizec.bnf"), 10, 100);
    let Some(cc) = ["cc", "gcc", "clang"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok())
    else {
        eprintln!("no C compiler: only the exact checker judged the programs");
        return;
    };
    let temp = tempdir();
    let dir = temp.path();
    for (i, input) in inputs.iter().enumerate() {
        let mut program = b"int main(void) {\n".to_vec();
        program.extend_from_slice(input);
        program.extend_from_slice(b"\nreturn 0;\n}\n");
        let path = dir.join(format!("p{i}.c"));
        std::fs::write(&path, &program).unwrap();
        let out = Command::new(cc)
            .args([
                "-fsyntax-only",
                "-std=c11",
                "-Werror=implicit-function-declaration",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "program {i} does not compile: {}\n{}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Solved reST documents (all four constraints) are what Docutils reads: no warning
/// or error, every title and list item the tree holds (the judge of thicket-cli's
/// bundled-spec tests, `judges/rest_docutils.py`), but for the known gaps of rest.bnf's
/// header in at most 2% of them.
#[test]
fn rest_documents_are_read_by_docutils() {
    let spec = load("rest.bnf");
    let inputs = solutions(&spec, 30, 300);
    assert!(distinct_share(&inputs) > 0.9);
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    let count = |tree: &thicket_tree::DerivationTree, name: &str| {
        let view = thicket_constraint::TreeView::new(tree, &spec.grammar);
        view.nodes_of(spec.grammar.symbol(name).unwrap(), tree.root())
            .len()
    };
    let temp = tempdir();
    let dir = temp.path();
    let mut manifest = String::new();
    for (i, input) in inputs.iter().enumerate() {
        let path = dir.join(format!("{i}.rst"));
        std::fs::write(&path, input).unwrap();
        let tree = parser.parse(input).unwrap().tree();
        manifest.push_str(&format!(
            "{}\t{}\t{}\n",
            path.display(),
            count(&tree, "section-title"),
            count(&tree, "enumeration_item")
        ));
    }
    let Some(failures) = judges::rest_docutils(&manifest) else {
        return;
    };
    // At most 2%: the gaps rest.bnf's header names (letter enumerators, blank list
    // items, "::"), which ISLa's grammar and constraints have too.
    assert!(
        failures.len() * 50 <= inputs.len(),
        "{} of {} documents are not what Docutils reads:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

fn python() -> Option<&'static str> {
    ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
}

/// A temporary folder, removed when the value is dropped (also when a test fails).
fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// A small grammar for the hostile cases.
const KV: &str = "<start> ::= <pair> (\";\" <pair>)*\n<pair> ::= <key> \"=\" <value>\n\
                  <key> ::= r\"[a-z]{1,4}\"\n<value> ::= r\"[0-9]{1,3}\"\n<unused> ::= \"u\"\n";

enum Expect {
    /// The constraint itself is refused (resolver error with a position).
    Refused,
    Unsat,
    Unsupported,
    Budget,
    Solved,
}

fn outcome(constraint: &str) -> Expect {
    let spec =
        thicket_grammar::load_spec_bytes("kv.fan", KV.as_bytes(), &Default::default()).unwrap();
    let Ok(c) =
        thicket_constraint::from_text(&spec.grammar, &Predicates::standard(), "c", constraint)
    else {
        return Expect::Refused;
    };
    let config = SolverConfig {
        max_attempts: 4,
        max_rounds: 8,
        ..Default::default()
    };
    match Solver::new(&spec.grammar, vec![c], config) {
        Err(SolveError::Unsatisfiable { .. }) => Expect::Unsat,
        Err(SolveError::Unsupported { .. }) => Expect::Unsupported,
        Err(e) => panic!("{constraint}: {e}"),
        Ok(solver) => {
            let mut rng = Solver::rng_for(1, 0);
            match solver.solve(&mut rng) {
                Ok((tree, _)) => {
                    assert!(solver.violated(&tree).is_empty());
                    Expect::Solved
                }
                Err(_) => Expect::Budget,
            }
        }
    }
}

#[test]
fn hostile_constraints_end_with_a_clear_outcome() {
    use Expect::*;
    const SMT: Expect = if cfg!(feature = "z3") {
        Solved
    } else {
        Unsupported
    };
    let cases: &[(&str, Expect)] = &[
        ("str.len(<start>) > 5 and str.len(<start>) < 3", Unsat),
        // Keys have at most 4 letters (`[a-z]{1,4}`): the lengths are known exactly.
        ("forall <key> k: str.len(k) > 9", Unsat),
        ("false", Unsat),
        ("(= \"a\" \"b\")", Unsat),
        ("forall int n: n = n", Unsupported),
        // SMT functions: Z3 solves them where the `z3` feature is on.
        ("forall <key> k: str.indexof(k, \"a\", 0) = 0", SMT),
        ("forall <key> k: str.replace(k, \"a\", \"b\") = k", SMT),
        ("forall <key> k: str.len(k) = 3", Solved),
        ("forall <value> v: str.to_int(v) > 500", Solved),
        ("forall <pair> p: p.<value> = \"42\"", Solved),
        ("exists <pair> p: p.<key> = \"abcd\"", Solved),
        (
            "forall <key> a: forall <key> b: (same_position(a, b) or not a = b)",
            Solved,
        ),
        ("forall <value> v: str.to_int(v) > 5000", Budget),
        ("forall <key> k: (str.len(k) = 2 and str.len(k) = 3)", Unsat),
        ("forall <pair> p: exists <key> k in p: k = \"zz\"", Solved),
        ("count(start, \"<pair>\", \"3\")", Solved),
        // Beyond the generator's repetition cap, which shapes random inputs and does
        // not bound what a constraint asks for.
        ("count(start, \"<pair>\", \"99\")", Solved),
        (
            "forall <value> v: str.in_re(v, re.+(str.to_re(\"7\")))",
            Solved,
        ),
        ("forall <key> k: str.prefixof(\"ab\", k)", Solved),
        ("forall <key> k: str.suffixof(\"z\", k)", Solved),
        ("forall <key> k: str.contains(k, \"q\")", Solved),
        (
            "forall <key> k: not str.in_re(k, re.+(re.range(\"a\", \"m\")))",
            Solved,
        ),
        // Keys are letters: the rule's language and the regex do not meet (decided by
        // intersecting them, `language.rs`).
        (
            "forall <key> k: str.in_re(k, re.+(re.range(\"0\", \"9\")))",
            Unsat,
        ),
        // A regex most of whose strings no key is (any characters after the `q`):
        // strings are drawn from the intersection.
        (
            "forall <key> k: str.in_re(k, re.++(str.to_re(\"q\"), re.*(re.allchar)))",
            Solved,
        ),
        ("forall <key> k: str.prefixof(\"abcde\", k)", Unsat),
        ("forall <value> v: str.suffixof(\"x\", v)", Unsat),
        ("forall <key> k: not str.contains(k, \"a\")", Solved),
        (
            "forall <key> k: not str.in_re(k, re.+(re.range(\"a\", \"z\")))",
            Unsat,
        ),
        ("forall <key> k: str.len(k) = 7", Unsat),
        ("forall <key> k: str.len(k) > 4", Unsat),
        // Past the table's cap (2,048): built from parts below it.
        ("str.len(<start>) = 5000", Solved),
        // Past what is built exactly (2^20 characters), within the byte limit: neither
        // built nor proved impossible (docs/solver.md), so this ends with the budget.
        ("str.len(<start>) = 2000000", Budget),
        // Contradictions found before any search (`contradiction.rs`).
        (
            "forall <value> v: (str.to_int(v) > 10 and str.to_int(v) < 5)",
            Unsat,
        ),
        ("str.len(<start>) > 3 xor str.len(<start>) > 3", Unsat),
        // Alike but over different rules: keys are never that long, pairs can be.
        (
            "(exists <key> a: str.len(a) > 6) or (exists <pair> b: str.len(b) > 6)",
            Solved,
        ),
        (
            "(forall <key> a: str.prefixof(\"q\", a)) and not (forall <key> b: str.prefixof(\"q\", b))",
            Unsat,
        ),
        ("exists <pair> p: (level(\"GT\", \"<pair>\", p, p))", Unsat),
        // Each pair is a pair within itself, nested deeper and shallower at once.
        (
            "forall <pair> a: forall <pair> b in a: \
             (level(\"GT\", \"<pair>\", a, b) and level(\"LT\", \"<pair>\", a, b))",
            Unsat,
        ),
        // Beyond the byte limit (16 MiB): no input is that long.
        ("str.len(<start>) > 20000000", Unsat),
        ("exists <pair> p: str.len(start) > 20000000", Unsat),
        (
            "forall <pair> p: (p.<key> = \"a\" and p.<value> = \"1\")",
            Solved,
        ),
        ("forall <key> k: not k = k", Budget),
        ("forall <key> k: str.to_code(k) = 97", SMT),
        ("forall <key> k: (str.< k \"b\")", SMT),
        ("forall <value> v: str.to_int(v) = str.len(v)", Solved),
        ("forall <key> k: k = \"abcde\"", Budget),
        (
            "forall <pair> p: forall <pair> q: forall <pair> r: \
             ((same_position(p, q) or not p.<key> = q.<key>) and \
              (same_position(q, r) or not q.<value> = r.<value>))",
            Solved,
        ),
        // Every input has a pair.
        ("count(start, \"<pair>\", \"0\")", Unsat),
        ("exists <unused> u: true", Refused),
        ("forall <nothing> n: true", Refused),
        (
            "exists int n: (str.to_int(n) > 2 and count(start, \"<pair>\", n))",
            Solved,
        ),
    ];
    for (constraint, expected) in cases {
        let got = outcome(constraint);
        assert!(
            std::mem::discriminant(&got) == std::mem::discriminant(expected),
            "{constraint}: got {}",
            match got {
                Refused => "refused",
                Unsat => "unsatisfiable",
                Unsupported => "unsupported",
                Budget => "no solution within the budget",
                Solved => "solved",
            }
        );
    }
}
