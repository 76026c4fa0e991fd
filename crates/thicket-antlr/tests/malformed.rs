//! Malformed `.g4` files: each gives one clear error at the right file:line:col.

/// (grammar text, error code, line, column, part of the message)
const CASES: &[(&str, &str, usize, usize, &str)] = &[
    ("", "g4-syntax", 1, 1, "expected `grammar`"),
    (
        "grammar ;",
        "g4-syntax",
        1,
        9,
        "expected the grammar's name",
    ),
    ("grammar G", "g4-syntax", 1, 10, "expected `;`"),
    (
        "grammar G;\ns : 'a' ",
        "g4-syntax",
        2,
        9,
        "expected `;` or `|` to end rule `s`",
    ),
    (
        "grammar G;\ns 'a' ;",
        "g4-syntax",
        2,
        3,
        "expected `:` after the rule name `s`",
    ),
    (
        "grammar G;\ns : ('a' | 'b' ;",
        "g4-syntax",
        2,
        16,
        "expected `)` or `|`",
    ),
    (
        "grammar G;\ns : 'abc ;",
        "g4-unterminated",
        2,
        5,
        "unterminated string literal",
    ),
    (
        "grammar G;\n/* never closed",
        "g4-unterminated",
        2,
        1,
        "unterminated comment",
    ),
    (
        "grammar G;\nA : [a-z ;",
        "g4-unterminated",
        2,
        5,
        "unterminated `[`",
    ),
    (
        "grammar G;\ns : A { x = 1; ;",
        "g4-unterminated",
        2,
        7,
        "unterminated action",
    ),
    (
        "grammar G;\nA : 'a\\q' ;",
        "g4-escape",
        2,
        7,
        "invalid escape",
    ),
    ("grammar G;\nA : [z-a] ;", "g4-set", 2, 6, "empty range"),
    (
        "grammar G;\nA : 'ab'..'z' ;",
        "g4-set",
        2,
        5,
        "one-character literals",
    ),
    (
        "grammar G;\nA : 'a' -> jump ;",
        "g4-syntax",
        2,
        12,
        "unknown lexer command `jump`",
    ),
    // A parser rule naming a token no lexer rule makes is ANTLR's implicit token (a
    // warning); a lexer rule naming an undefined rule is an error.
    (
        "grammar G;\ns : A ;\nA : 'a' B ;",
        "undefined-rule",
        3,
        9,
        "undefined token or lexer rule `B`",
    ),
    (
        "grammar G;\ns : t ;\nA : 'a' ;",
        "undefined-rule",
        2,
        5,
        "undefined parser rule `t`",
    ),
    (
        "grammar G;\ns : A ;\ns : A ;\nA : 'a' ;",
        "duplicate-rule",
        3,
        1,
        "rule `s` is defined twice",
    ),
    (
        "lexer grammar L;\ns : A ;\nA : 'a' ;",
        "g4-syntax",
        2,
        1,
        "parser rule `s` in a lexer grammar",
    ),
    (
        "grammar G;\nimport Other;\ns : 'a' ;",
        "g4-import",
        2,
        8,
        "cannot find the imported grammar `Other`",
    ),
    (
        "grammar G;\ns : A ;\nA : 'a' -> pushMode(NOPE) ;",
        "g4-mode",
        3,
        21,
        "`NOPE` is not a recognized mode name",
    ),
    (
        "grammar G;\ns : A ;\nA : 'a' -> mode(NOPE) ;",
        "g4-mode",
        3,
        17,
        "`NOPE` is not a recognized mode name",
    ),
    (
        "grammar G;\ns : A ;\nA : 'a' -> channel(FOO) ;",
        "g4-channel",
        3,
        20,
        "`FOO` is not a recognized channel name",
    ),
    (
        "grammar G;\ns : [a-z] ;",
        "g4-syntax",
        2,
        5,
        "a character set `[...]` in a parser rule",
    ),
    (
        "grammar G;\nfragment s : 'a' ;",
        "g4-syntax",
        2,
        10,
        "only lexer rules can be fragments",
    ),
    (
        "grammar G;\ns : ~ ;",
        "g4-syntax",
        2,
        7,
        "expected an element",
    ),
    (
        "parser grammar P;\ns : 'a' ;",
        "g4-literal",
        2,
        5,
        "is no token of the lexer grammar",
    ),
    (
        "grammar G;\ns : x=A # ;\nA : 'a' ;",
        "g4-syntax",
        2,
        11,
        "alternative label",
    ),
];

#[test]
fn malformed_grammars_give_clear_errors() {
    assert!(CASES.len() >= 20);
    for &(text, code, line, column, message) in CASES {
        let error = match thicket_antlr::load_g4_texts(&[("bad.g4".into(), text.into())], None) {
            Ok(_) => panic!("{text:?} was read"),
            Err(e) => e,
        };
        let d = &error.diagnostics[0];
        let at = error
            .source
            .line_col(d.primary_span().unwrap().start as usize);
        let rendered = error.render();
        assert_eq!(
            (d.code, at.line, at.column),
            (code, line, column),
            "{text:?}:\n{rendered}"
        );
        assert!(d.message.contains(message), "{text:?}:\n{rendered}");
        assert!(
            rendered.contains(&format!("bad.g4:{line}:{column}")),
            "{rendered}"
        );
    }
}

#[test]
fn errors_in_a_lexer_grammar_name_that_file() {
    let parser = "parser grammar P; options { tokenVocab = L; } s : A ;";
    let lexer = "lexer grammar L;\nA : 'a\\z' ;";
    let error = thicket_antlr::load_g4_texts(
        &[
            ("P.g4".into(), parser.into()),
            ("L.g4".into(), lexer.into()),
        ],
        None,
    )
    .err()
    .expect("a bad escape");
    assert!(error.render().contains("L.g4:2:7"), "{}", error.render());
}

#[test]
fn hostile_nesting_is_refused() {
    let text = format!(
        "grammar G;\ns : {}'a'{} ;",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let error = thicket_antlr::load_g4_texts(&[("deep.g4".into(), text.into())], None)
        .err()
        .expect("too deep");
    assert_eq!(error.diagnostics[0].code, "g4-nesting");
}
