//! Malformed constraints: each gets a clear error with a stable code at the right
//! place, before any input is read, and never a panic.

use thicket_constraint::Predicates;
use thicket_grammar::{LoadOptions, Spec};

fn xml() -> Spec {
    let path = format!("{}/../../specs/xml.bnf", env!("CARGO_MANIFEST_DIR"));
    thicket_grammar::load_spec_file(path.as_ref(), &LoadOptions::default()).unwrap()
}

/// (constraint, error code, line:column of the error, a word the message or notes hold)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "forall <xml-tree> t in start: (= t",
        "constraint-syntax",
        "1:35",
        "`)`",
    ),
    (
        "forall <nope> x: x = \"a\"",
        "unknown-nonterminal",
        "1:8",
        "<nope>",
    ),
    (
        "forall <xml-tre> x: x = \"a\"",
        "unknown-nonterminal",
        "1:8",
        "did you mean <xml-tree>?",
    ),
    (
        "forall <id> x: y = \"a\"",
        "unbound-variable",
        "1:16",
        "`y`",
    ),
    (
        "forall <id> x: str.len(x) = \"a\"",
        "sort-mismatch",
        "1:16",
        "Int",
    ),
    (
        "forall <id> x: str.len(x)",
        "not-a-formula",
        "1:16",
        "sort Int",
    ),
    (
        "forall <id> x: inside(x)",
        "predicate-arity",
        "1:16",
        "2 arguments",
    ),
    (
        "forall <id> x: count(x, \"<nope>\", 1)",
        "unknown-nonterminal",
        "1:25",
        "<nope>",
    ),
    (
        "forall <id> x: count(x, \"raw\", 1)",
        "predicate-argument",
        "1:25",
        "nonterminal in quotes",
    ),
    (
        "forall <id> x: level(\"XX\", \"<xml-tree>\", x, x)",
        "predicate-argument",
        "1:22",
        "\"GE\"",
    ),
    ("forall <id> x: foo(x)", "unknown-function", "1:16", "`foo`"),
    (
        "forall <id> x: str.lenn(x) = 1",
        "unknown-function",
        "1:16",
        "did you mean `str.len`?",
    ),
    (
        "forall <id> x: str.len(count(x, \"<id>\", 1)) = 1",
        "predicate-in-term",
        "1:24",
        "predicate",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a>x</{<id> b}>\": a = b",
        "mexpr-syntax",
        "1:23",
        "binder",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a}[ <xml-attribute>>\": a = \"x\"",
        "mexpr-syntax",
        "1:31",
        "`]`",
    ),
    (
        "forall <xml-tree> t=\"<{id a}>\": a = \"x\"",
        "mexpr-syntax",
        "1:23",
        "{<type> name}",
    ),
    (
        "forall <xml-tree> t=\"{<nope> a}\": a = \"x\"",
        "unknown-nonterminal",
        "1:23",
        "<nope>",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a}[ {<xml-attribute> b}]>x</{<id> c}>\": a = c",
        "binder-in-optional",
        "1:33",
        "optional",
    ),
    (
        "forall <xml-tree> t=\"[a][a][a][a][a][a][a][a][a]\": t = \"x\"",
        "mexpr-too-many-optionals",
        "1:46",
        "8",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a}>\": a = \"x\"",
        "mexpr-cannot-match",
        "1:21",
        "can never match",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a}><inner-xml-tre></{<id> b}>\": a = b",
        "mexpr-cannot-match",
        "1:21",
        "did you mean <inner-xml-tree>?",
    ),
    (
        "forall <xml-tree> t=\"<{<id> a}>x</{<id> a}>\": a = \"x\"",
        "duplicate-binder",
        "1:35",
        "bound twice",
    ),
    (
        "forall <xml-tree> t in <xml-tree>.<nope>: t = \"a\"",
        "unknown-nonterminal",
        "1:35",
        "<nope>",
    ),
    (
        "<xml-tree>.<text> = \"a\"",
        "impossible-xpath",
        "1:12",
        "direct child",
    ),
    (
        "<xml-tree>..<start> = \"a\"",
        "impossible-xpath",
        "1:13",
        "descendant",
    ),
    (
        "forall <xml-tree> t in x: t = \"a\"",
        "unbound-variable",
        "1:24",
        "`x`",
    ),
    (
        "exists int n: forall <id> x in n: x = \"a\"",
        "int-as-tree",
        "1:32",
        "int variable",
    ),
    (
        "forall <xml-tree> t: forall <start> s in t: s = \"a\"",
        "unreachable-type",
        "1:29",
        "no <start>",
    ),
    (
        "const c: <xml-tree>; c = \"a\"",
        "constant-type",
        "1:10",
        "whole input",
    ),
    (
        "const c <start>; c = \"a\"",
        "constraint-syntax",
        "1:9",
        "`:`",
    ),
    (
        "forall <id> x: x = \"a",
        "unterminated-string",
        "1:20",
        "never closed",
    ),
    ("forall <id> x: x = \"\\q\"", "bad-escape", "1:21", "escape"),
    (
        "forall <id> x: x @ \"a\"",
        "unexpected-character",
        "1:18",
        "`@`",
    ),
    (
        "forall <id> x: str.len(x) = 99999999999999999999999999999999999999999",
        "integer-too-large",
        "1:29",
        "too large",
    ),
    (
        "forall x: x = \"a\"",
        "constraint-syntax",
        "1:8",
        "nonterminal type",
    ),
    (
        "forall <id> x x = \"a\"",
        "constraint-syntax",
        "1:15",
        "`:`",
    ),
    (
        "forall <id> x: str.in_re(x, re.loop(re.allchar, 1))",
        "sort-mismatch",
        "1:29",
        "3 arguments",
    ),
    ("", "constraint-syntax", "1:1", "a term"),
    (
        "forall <id> x: x = \"a\" and",
        "constraint-syntax",
        "1:27",
        "end of the constraint",
    ),
    (
        "forall <id> x: x = \"a\")",
        "constraint-syntax",
        "1:23",
        "connective",
    ),
    (
        "forall <id> x: ite(x, 1, 2) = 1",
        "sort-mismatch",
        "1:16",
        "Bool condition",
    ),
    (
        "forall <id> x: nth(\"a\", x, x)",
        "predicate-argument",
        "1:20",
        "a number",
    ),
    (
        "forall <id> x: inside(x, \"a\")",
        "predicate-argument",
        "1:26",
        "a tree",
    ),
    (
        "forall <id> x: exists <id> y in x: before(x, 3)",
        "predicate-argument",
        "1:46",
        "a tree",
    ),
];

#[test]
fn malformed_constraints_get_clear_errors() {
    let spec = xml();
    let predicates = Predicates::standard();
    for &(text, code, at, word) in CASES {
        let Err(error) =
            thicket_constraint::from_text(&spec.grammar, &predicates, "bad.isla", text)
        else {
            panic!("{text:?} was accepted");
        };
        let d = &error.diagnostics[0];
        let span = d.primary_span().expect("errors have a position");
        let position = error.source.line_col(span.start as usize).to_string();
        let rendered = error.render();
        assert_eq!(
            (d.code, position.as_str()),
            (code, at),
            "{text:?}:\n{rendered}"
        );
        assert!(
            rendered.contains(word),
            "{text:?}: {word:?} not in\n{rendered}"
        );
        assert!(rendered.contains(&format!("bad.isla:{at}")), "{rendered}");
    }
    assert!(CASES.len() >= 30);
}

#[test]
fn hostile_constraints_end_in_errors_not_hangs_or_overflows() {
    let spec = xml();
    let predicates = Predicates::standard();
    for text in [
        "(".repeat(100_000),
        "not ".repeat(100_000) + "true",
        format!("{}x{}", "(f ".repeat(5_000), ")".repeat(5_000)),
        format!("{}true", "forall <id> x: ".repeat(10_000)),
        "\"".repeat(1_000_001),
        "x = ".to_string() + &"1 + ".repeat(100_000) + "1",
    ] {
        let result =
            thicket_constraint::from_text(&spec.grammar, &predicates, "hostile.isla", &text);
        assert!(result.is_err(), "{}…", &text[..40.min(text.len())]);
    }
}
