//! Fandango constraints solved: every native construct the translation produces (all
//! direct children, descendants, counts, tree equality, `int()`, `len(str())`) reaches
//! valid inputs, each confirmed by the exact checker.

use std::sync::Arc;
use thicket_constraint::fandango::{Compiler, blocks};
use thicket_grammar::SourceFile;
use thicket_solve::{Solver, SolverConfig};

/// `n` solutions of a spec whose `where` blocks are Fandango constraints.
fn solutions(grammar: &str, constraints: &str, n: u64) -> Vec<String> {
    solutions_within(grammar, constraints, n, SolverConfig::default())
}

/// Like [`solutions`], under the solver limits `config`.
fn solutions_within(grammar: &str, constraints: &str, n: u64, config: SolverConfig) -> Vec<String> {
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
    let solver = Solver::new(&spec.grammar, constraints, config).expect("solvable");
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

/// One tree per input and a few rounds: what the solver must find within them is a
/// deletion, not a fix.
fn one_tree_few_rounds() -> SolverConfig {
    SolverConfig {
        max_attempts: 1,
        max_rounds: 10,
        ..SolverConfig::default()
    }
}

#[test]
fn a_construct_no_input_may_hold_is_removed() {
    // A label needs another label with its name that is a different tree; a label's
    // text is its name, so no input may hold one (reStructuredText's rule against
    // redefined link targets, read as Fandango reads it). Copying names between labels
    // never ends; only removing every label does.
    let grammar = r#"<start> ::= <item>+
<item> ::= <label> "\n" | <text> "\n"
<label> ::= ".. _" <id> ":"
<text> ::= <letter>+
<letter> ::= "t" | "u"
<id> ::= "a" | "b"
"#;
    let constraints = "where forall <l1> in <label>:\n    exists <l2> in <label>:\n        str(<l1>.<id>) == str(<l2>.<id>) and <l1> != <l2>\n";
    let docs = solutions_within(grammar, constraints, 30, one_tree_few_rounds());
    for doc in &docs {
        assert!(!doc.contains(".. _"), "{doc:?}");
    }
    // The rest of each input is kept: inputs still differ.
    let distinct: std::collections::HashSet<&String> = docs.iter().collect();
    assert!(distinct.len() > 20, "{docs:?}");
}

#[test]
fn uses_that_cannot_all_be_declared_are_removed() {
    // Every use needs a declaration before it whose name is the name of every
    // identifier of the program (the free `<id>` ranges over the whole input), and no
    // two declarations may share a name unless they are the same text: inserted
    // declarations bring initialisers with uses of their own, and renaming one
    // identifier breaks the others. Removing uses (a use becomes a number) ends it.
    let grammar = r#"<start> ::= <stmts>
<stmts> ::= <stmt> <stmts> | <stmt>
<stmt> ::= <decl> | <expr> ";" | "{" <stmts> "}"
<decl> ::= "int " <id> "=" <expr> ";"
<expr> ::= <term> | <term> "+" <expr>
<term> ::= <id> | <num> | "(" <expr> ")"
<num> ::= "1" | "2" | "3"
<id> ::= "a" | "b" | "c" | "d"
"#;
    let constraints = r#"where forall <use_id> in <stmt>..<expr>..<id>:
    exists <dec> in <decl>:
        str(<dec>.<id>) == str(<id>) and is_before(<start>, <dec>, <use_id>)
where forall <d1> in <decl>:
    forall <d2> in <decl>:
        not(str(<d1>.<id>) == str(<d2>.<id>)) or <d1> == <d2>
"#;
    for doc in solutions_within(grammar, constraints, 30, one_tree_few_rounds()) {
        // An independent reading: declarations `int x=` and all identifiers.
        let ids: Vec<(usize, char)> = doc
            .char_indices()
            .filter(|(_, c)| ('a'..='d').contains(c))
            .collect();
        let decls: Vec<usize> = doc.match_indices("int ").map(|(i, _)| i + 4).collect();
        for &(at, id) in &ids {
            if decls.contains(&at) {
                continue;
            }
            // A use: some declaration before it names it, and every identifier of
            // the program has that name.
            assert!(decls.iter().any(|&d| d < at), "{doc:?}");
            assert!(ids.iter().all(|&(_, other)| other == id), "{doc:?}");
        }
    }
}
