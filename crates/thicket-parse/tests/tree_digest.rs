//! The parser's regression gate: the digests of the trees it returns (generated inputs of
//! every bundled spec, damaged ones, the benchmark documents, small ambiguous grammars)
//! equal the committed `tree_digest.expected`. A speed change must not change them; a
//! deliberate change of which tree or which rejection message the parser gives updates
//! the file (`cargo run --release -p thicket-parse --example tree_digest >
//! crates/thicket-parse/tests/tree_digest.expected`) and says why in its commit.

mod digest;
#[path = "../benches/documents/mod.rs"]
mod documents;

#[test]
fn tree_digests_are_unchanged() {
    let expected = include_str!("tree_digest.expected");
    let actual = digest::report(digest::DEFAULT_COUNT);
    let differing: Vec<String> = expected
        .lines()
        .zip(actual.lines())
        .filter(|(e, a)| e != a)
        .map(|(e, a)| format!("expected {e}\n     got {a}"))
        .collect();
    assert!(
        differing.is_empty() && expected.lines().count() == actual.lines().count(),
        "the parser returns other trees or messages than tree_digest.expected:\n{}\n\nfull output:\n{actual}",
        differing.join("\n")
    );
}
