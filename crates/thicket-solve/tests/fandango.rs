//! Fandango constraints solved: every native construct the translation produces (all
//! direct children, descendants, counts, tree equality, `int()`, `len(str())`) reaches
//! valid inputs, each confirmed by the exact checker.

use std::sync::Arc;
use thicket_constraint::fandango::{Compiler, blocks};
use thicket_grammar::SourceFile;
use thicket_solve::{Solver, SolverConfig};

/// `n` solutions of a spec whose `where` blocks are Fandango constraints.
fn solutions(grammar: &str, constraints: &str, n: u64) -> Vec<String> {
    let spec =
        thicket_grammar::load_spec_bytes("case.fan", grammar.as_bytes(), &Default::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
    let text = format!("{grammar}{constraints}");
    let source = Arc::new(SourceFile::new("case.fan", text.clone()));
    let compiler = Compiler::new(&spec.grammar, None);
    let constraints = blocks(&text)
        .into_iter()
        .map(|b| {
            let c = compiler
                .constraint(source.clone(), b.span)
                .unwrap_or_else(|e| panic!("{}", e.render()));
            assert!(c.native);
            c.constraint
        })
        .collect();
    let solver =
        Solver::new(&spec.grammar, constraints, SolverConfig::default()).expect("solvable");
    (0..n)
        .map(|i| {
            let (tree, _) = solver
                .solve(&mut Solver::rng_for(7, i))
                .unwrap_or_else(|e| panic!("input {i}: {e}"));
            assert!(solver.violated(&tree).is_empty());
            String::from_utf8(tree.bytes().to_vec()).unwrap()
        })
        .collect()
}

#[test]
fn balanced_tags_through_all_direct_children() {
    let grammar = r#"<start> ::= <elem>
<elem> ::= <open> <inner> <close>
<inner> ::= <elem> | <text>
<open> ::= "<" <id> ">"
<close> ::= "</" <id> ">"
<id> ::= <l>+
<l> ::= "a" | "b" | "c"
<text> ::= "t"+
"#;
    for doc in solutions(
        grammar,
        "where forall <e> in <elem>:\n    <e>.<open>.<id> == <e>.<close>.<id>\n",
        20,
    ) {
        // Every tag closes as it opened.
        let mut stack = Vec::new();
        for part in doc.split('<').skip(1) {
            let name = part.split('>').next().unwrap();
            match name.strip_prefix('/') {
                Some(closing) => assert_eq!(stack.pop(), Some(closing.to_string()), "{doc}"),
                None => stack.push(name.to_string()),
            }
        }
    }
}

#[test]
fn definitions_before_uses_and_counts() {
    let grammar = r#"<start> ::= <line>+
<line> ::= <define> "\n" | <use> "\n"
<define> ::= "def " <id>
<use> ::= "use " <id>
<id> ::= "x" | "y" | "z"
"#;
    let constraints = "where forall <u> in <use>:\n    exists <d> in <define>:\n        str(<d>.<id>) == str(<u>.<id>)\nwhere |<use>| >= 1\n";
    for doc in solutions(grammar, constraints, 20) {
        let defined: Vec<&str> = doc.lines().filter_map(|l| l.strip_prefix("def ")).collect();
        let used: Vec<&str> = doc.lines().filter_map(|l| l.strip_prefix("use ")).collect();
        assert!(!used.is_empty(), "{doc:?}");
        assert!(used.iter().all(|u| defined.contains(u)), "{doc:?}");
    }
}

#[test]
fn numbers_and_lengths() {
    let grammar = r#"<start> ::= <age> " " <name> "\n" <line> "\n"
<age> ::= <digit>+
<digit> ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<name> ::= <letter>+
<line> ::= "="+
<letter> ::= "a" | "b"
"#;
    let constraints =
        "where int(<age>) > 20 and int(<age>) < 30\nwhere len(str(<name>)) <= len(str(<line>))\n";
    for doc in solutions(grammar, constraints, 20) {
        let (first, line) = doc.trim_end().split_once('\n').unwrap();
        let (age, name) = first.split_once(' ').unwrap();
        let age: u64 = age.parse().unwrap();
        assert!((21..30).contains(&age), "{doc:?}");
        assert!(name.len() <= line.len(), "{doc:?}");
    }
}
