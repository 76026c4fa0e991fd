//! Rejections point at the byte that fails, also inside a token (a string scanned as one
//! DFA match), and say what the grammar's rules expected there.

use thicket_grammar::{Grammar, LoadOptions, load_spec_file};
use thicket_parse::{ParseConfig, ParseError, Parser, Rejection};

fn spec(name: &str) -> Grammar {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    load_spec_file(&path, &LoadOptions::default())
        .unwrap()
        .grammar
}

fn rejection(parser: &Parser<'_>, input: &str) -> Rejection {
    match parser.parse(input.as_bytes()) {
        Err(ParseError::Rejected(r)) => *r,
        Err(e) => panic!("{input:?}: {e}"),
        Ok(_) => panic!("{input:?} was accepted"),
    }
}

#[test]
fn a_bad_escape_inside_a_string_is_reported_where_it_fails() {
    let grammar = spec("json.fan");
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    // A high surrogate escape (column 4) must be followed by a low one: the string
    // fails at the 'c' of column 10, where `\u` was expected.
    let r = rejection(&parser, r#""ab\uD800cd""#);
    assert_eq!((r.offset, r.line, r.column), (9, 1, 10), "{r}");
    assert_eq!(r.found, Some(b'c'));
    assert_eq!(r.expected, vec![r#""\\u""#.to_string()], "{r}");
    assert_eq!(r.rules, vec!["<escape>".to_string()], "{r}");
    // An unknown escape: every escape letter is expected there, on its line.
    let r = rejection(&parser, "[1,\n \"x\\q\"]");
    assert_eq!((r.line, r.column), (2, 5), "{r}");
    assert!(r.expected.contains(&r#""n""#.to_string()), "{r}");
    assert!(r.expected.contains(&r#""u""#.to_string()), "{r}");
    // A keyword cut short, inside the <scalar> token.
    let r = rejection(&parser, r#"{"a": tru}"#);
    assert_eq!((r.column, r.found), (10, Some(b'}')), "{r}");
    assert_eq!(r.expected, vec![r#""true""#.to_string()], "{r}");
    // An unterminated string fails at the end of the input.
    let r = rejection(&parser, r#"["abc"#);
    assert_eq!((r.offset, r.found), (5, None), "{r}");
    assert!(r.expected.contains(&r#""\"""#.to_string()), "{r}");
}

#[test]
fn a_wrong_first_byte_is_still_reported_at_the_token_start() {
    let grammar = spec("json.fan");
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let r = rejection(&parser, "[1, @]");
    assert_eq!(r.column, 5, "{r}");
    assert!(r.expected.contains(&"<scalar>".to_string()), "{r}");
    // Outside tokens nothing changes: the operator expected after a complete operand.
    let grammar = spec("expr.fan");
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let r = rejection(&parser, "1+2*y7");
    assert_eq!(r.column, 6, "{r}");
    assert!(r.expected.contains(&r#""*""#.to_string()), "{r}");
}

#[test]
fn a_regex_terminal_fails_at_the_byte_it_cannot_take() {
    let grammar = thicket_grammar::load_spec_text(
        "t.fan",
        b"<start> ::= \"id:\" r\"[a-z]{2}[0-9]{3}\" \";\"\n",
    )
    .unwrap();
    let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
    let r = rejection(&parser, "id:ab1x3;");
    assert_eq!((r.column, r.found), (7, Some(b'x')), "{r}");
    assert_eq!(
        r.expected,
        vec![r#"r"[a-z]{2}[0-9]{3}""#.to_string()],
        "{r}"
    );
}

#[test]
fn a_regex_too_large_for_a_dfa_is_a_typed_error() {
    // The n-th byte from the end is an `a`: a DFA needs 2^n states.
    let grammar =
        thicket_grammar::load_spec_text("t.fan", b"<start> ::= r\"[ab]*a[ab]{24}\"\n").unwrap();
    match Parser::new(&grammar, ParseConfig::default()) {
        Err(thicket_parse::CompileError::Regex { pattern, reason }) => {
            assert_eq!(pattern, "[ab]*a[ab]{24}");
            assert!(!reason.is_empty());
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a 2^24-state DFA was built"),
    }
}
