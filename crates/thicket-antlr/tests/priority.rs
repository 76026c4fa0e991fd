//! Lexer semantics: rule priority, longest match, fragments, hidden text, non-greedy
//! loops, modes, case-insensitivity, and the separation of generated tokens.

use thicket_antlr::AntlrSpec;
use thicket_gen::{GenConfig, Generator};
use thicket_parse::{ParseConfig, Parser};

fn load(text: &str) -> AntlrSpec {
    thicket_antlr::load_g4_texts(&[("T.g4".into(), text.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()))
}

fn kinds(spec: &AntlrSpec, input: &str) -> Vec<String> {
    let tokens = spec.lexer.tokens(input.as_bytes()).unwrap();
    tokens
        .iter()
        .map(|t| format!("{}:{}", t.kind, &input[t.start..t.end]))
        .collect()
}

const KEYWORDS: &str = r#"grammar K;
prog : stmt+ EOF ;
stmt : 'if' ID 'then' ID ';'
     | ID '=' ID ';'
     | INT ';'
     ;
ID   : LETTER (LETTER | DIGIT)* ;
INT  : DIGIT+ ;
fragment LETTER : [a-z] ;
fragment DIGIT  : [0-9] ;
WS   : [ \t\r\n]+ -> skip ;
COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
LINE : '//' ~[\r\n]* -> skip ;
"#;

#[test]
fn keyword_beats_identifier_at_equal_length() {
    let spec = load(KEYWORDS);
    assert_eq!(kinds(&spec, "if x"), ["'if':if", "ID:x"]);
    let check = spec.checker();
    check.accepts(b"if x then y;").unwrap();
    // `if` is a keyword, never an identifier: ANTLR rejects this...
    let r = check.accepts(b"if = y;").unwrap_err();
    assert_eq!((r.line, r.column), (1, 4), "{r}");
    // ... and so does the scannerless byte grammar: an identifier never has a text
    // that a keyword defined before it takes.
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    assert!(parser.recognize(b"if = y;").is_err());
    assert!(parser.recognize(b"iff = y;").is_ok());
}

#[test]
fn skipped_text_an_earlier_rule_takes_is_never_skipped() {
    // ply's lexer: a line end is always `EOL` (earlier, and at least as long), so a
    // line of three numbers is never a face, which needs four before its `EOL`.
    let spec = load(
        "grammar P; ply : (vertex | face)+ EOF ; vertex : N N N EOL ; face : N N N N+ EOL ;
         N : [0-9]+ ; EOL : [\\r\\n]+ ; WS : [ \\t\\r\\n] -> skip ;",
    );
    let check = spec.checker();
    check.accepts(b"1 2 3\n4 5 6 7\n").unwrap();
    let r = check.accepts(b"1 2 3\n4\n").unwrap_err();
    assert_eq!((r.line, r.column), (2, 2), "{r}");
    // The byte grammar read the first line end as skipped text, making one face of
    // both lines; and every line of numbers could run on into the next ones.
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    assert!(parser.recognize(b"1 2 3\n4\n").is_err());
    assert!(parser.recognize(b"1 2 3\n4 5 6 7\n").is_ok());
}

#[test]
fn longest_match_beats_rule_order() {
    let spec = load(KEYWORDS);
    assert_eq!(kinds(&spec, "iffy"), ["ID:iffy"]);
    assert_eq!(kinds(&spec, "then1"), ["ID:then1"]);
    let check = spec.checker();
    check.accepts(b"iffy = then1;").unwrap();
    // `ifx` is one identifier, so this is not `if x then y;`.
    assert!(check.accepts(b"ifx then y;").is_err());
}

#[test]
fn first_rule_wins_between_lexer_rules() {
    let spec = load("grammar P; s : (A | B)+ EOF ; A : 'ab' ; B : [a-z]+ ; WS : ' ' -> skip ;");
    assert_eq!(kinds(&spec, "ab abc"), ["A:ab", "B:abc"]);
    let spec = load("grammar P; s : (A | B)+ EOF ; B : [a-z]+ ; A : 'ab' ; WS : ' ' -> skip ;");
    assert_eq!(kinds(&spec, "ab abc"), ["B:ab", "B:abc"]);
}

#[test]
fn fragments_are_parts_of_tokens_only() {
    let spec = load(KEYWORDS);
    assert_eq!(kinds(&spec, "x1 42"), ["ID:x1", "INT:42"]);
    // A parser rule naming a fragment: ANTLR defines an implicit token, which no
    // input has (a warning, as ANTLR gives), so no input is accepted.
    let odd = "grammar F; s : DIGIT EOF ; fragment DIGIT : [0-9] ;";
    let spec = load(odd);
    assert!(
        spec.warnings
            .iter()
            .any(|(_, d)| d.message.contains("is a fragment, which makes no token")),
        "{:?}",
        spec.warnings
    );
    assert!(spec.checker().accepts(b"1").is_err());
}

#[test]
fn hidden_whitespace_and_comments_between_tokens() {
    let spec = load(KEYWORDS);
    let input = "/* a */ if x // line\n then /* b */ y ;\n";
    assert_eq!(
        kinds(&spec, input),
        ["'if':if", "ID:x", "'then':then", "ID:y", "';':;"]
    );
    spec.checker().accepts(input.as_bytes()).unwrap();
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    parser.recognize(input.as_bytes()).unwrap();
    // Non-greedy: the comment ends at the first `*/`.
    assert_eq!(kinds(&spec, "/* a */ 1; /* b */"), ["INT:1", "';':;"]);
}

#[test]
fn generated_inputs_separate_tokens_the_lexer_would_merge() {
    let spec = load(KEYWORDS);
    let generator = Generator::new(&spec.spec.grammar, GenConfig::default()).unwrap();
    let check = spec.checker();
    let (mut before, mut after, mut changed, mut keywords) = (0, 0, 0, 0);
    for i in 0..500 {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(7, i));
        before += usize::from(check.accepts(tree.bytes()).is_ok());
        let input = spec.separate(&tree).unwrap();
        changed += usize::from(input != tree.bytes());
        match check.accepts(&input) {
            Ok(()) => after += 1,
            // Separation fixes token boundaries; an identifier generated as a
            // keyword is another token type, and the caller draws another input.
            Err(r)
                if r.expected == ["ID"]
                    && r.rules
                        .iter()
                        .any(|t| t.starts_with("token 'if'") || t.starts_with("token 'then'")) =>
            {
                keywords += 1
            }
            Err(r) => panic!(
                "{:?} separated is rejected: {r}",
                String::from_utf8_lossy(&input)
            ),
        }
    }
    eprintln!(
        "{before}/500 accepted as generated, {after}/500 after separation ({changed} changed, \
         {keywords} with a keyword generated as an identifier)"
    );
    assert!(changed > 0, "some inputs needed a separator");
    assert!(after > before);
}

/// Identifiers over `a` and `b` are often spelled as one of the keywords.
const SHORT_KEYWORDS: &str = r#"grammar P;
s : (ID | 'b' | 'ab' | '(' ID ')')+ EOF ;
ID : [ab]+ ;
WS : ' '+ -> skip ;
"#;

#[test]
fn identifiers_generated_as_keywords_are_generated_again() {
    let spec = load(SHORT_KEYWORDS);
    let grammar = &spec.spec.grammar;
    // Parser rules are phrases of the byte grammar; lexer rules stay tokens.
    assert!(grammar.is_phrase(grammar.symbol("s").unwrap()));
    assert!(!grammar.is_phrase(grammar.symbol("ID").unwrap()));
    let generator = Generator::new(grammar, GenConfig::default()).unwrap();
    let check = spec.checker();
    let (mut misread, mut accepted) = (0, 0);
    for i in 0..300 {
        let mut rng = Generator::rng_for(11, i);
        let (tree, _) = generator.generate_tree(&mut rng);
        let before = spec.misread_tokens(&tree);
        for &node in &before {
            let text = tree.text(node);
            assert!(text == b"b" || text == b"ab", "{text:?} is an identifier");
        }
        misread += before.len();
        let tree = spec.respell(tree, 8, &mut |expr, builder| {
            generator.expand(expr, 0, &mut rng, builder);
        });
        assert!(
            spec.misread_tokens(&tree).is_empty(),
            "{:?}",
            String::from_utf8_lossy(tree.bytes())
        );
        let input = spec.separate(&tree).unwrap();
        match check.accepts(&input) {
            Ok(()) => accepted += 1,
            Err(r) => panic!("{:?} is rejected: {r}", String::from_utf8_lossy(&input)),
        }
    }
    assert!(misread > 20, "only {misread} identifiers were keywords");
    assert_eq!(accepted, 300);
}

#[test]
fn sets_escapes_and_properties() {
    let spec = load(
        r#"grammar S; s : (W | N | Q)+ EOF ;
        W : [a-z\u0041\p{Greek}_]+ ;
        N : ~[ \t\r\na-zA-Z_"\u0391-\u03FF]+ ;
        Q : '"' ('\\"' | ~["\\])* '"' ;
        WS : [ \t]+ -> skip ;"#,
    );
    assert_eq!(kinds(&spec, "abAλ 12"), ["W:abAλ", "N:12"]);
    assert_eq!(kinds(&spec, r#""x\"y""#), [r#"Q:"x\"y""#]);
    assert!(
        spec.lexer.tokens("B".as_bytes()).is_err(),
        "only A of the capitals"
    );
}

#[test]
fn case_insensitive_tokens_and_declared_tokens() {
    let spec = load(
        "grammar C; options { caseInsensitive = true; } tokens { UNUSED } \
         s : 'select' ID EOF ; ID : [a-z]+ ; WS : ' ' -> skip ;",
    );
    let check = spec.checker();
    check.accepts(b"SeLeCt Abc").unwrap();
    assert!(check.accepts(b"selec abc").is_err());
    let parser = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    parser.recognize(b"SELECT ABC").unwrap();
}

#[test]
fn modes_push_and_pop() {
    let lexer = r#"lexer grammar ML;
        OPEN : '<' -> pushMode(TAG) ;
        TEXT : ~[<]+ ;
        mode TAG;
        CLOSE : '>' -> popMode ;
        NAME : [a-z]+ ;
        S : ' ' -> skip ;"#;
    let parser = "parser grammar MP; options { tokenVocab = ML; } doc : (TEXT | tag)* EOF ; tag : '<' NAME+ '>' ;";
    let spec = thicket_antlr::load_g4_texts(
        &[
            ("MP.g4".into(), parser.into()),
            ("ML.g4".into(), lexer.into()),
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{}", e.render()));
    // Spaces are skipped inside tags only; outside they are text.
    assert_eq!(
        kinds(&spec, "a b< x y >c"),
        [
            "TEXT:a b", "OPEN:<", "NAME:x", "NAME:y", "CLOSE:>", "TEXT:c"
        ]
    );
    spec.checker().accepts(b"a b< x y >c").unwrap();
    let bytes = Parser::new(&spec.spec.grammar, ParseConfig::default()).unwrap();
    bytes.recognize(b"a b< x y >c").unwrap();
}

#[test]
fn actions_and_predicates_are_reported_where_they_are() {
    let spec = load(
        "grammar A;\n@members { int n; }\ns : {n++;} ID {n > 0}? EOF ;\nID : [a-z]+ {skip();} ;\n",
    );
    let found: Vec<(String, usize, usize)> = spec
        .warnings
        .iter()
        .map(|(source, d)| {
            let at = source.line_col(d.primary_span().unwrap().start as usize);
            (d.code.to_string(), at.line, at.column)
        })
        .collect();
    assert_eq!(
        found,
        [
            ("g4-action".to_string(), 2, 1),
            ("g4-action".to_string(), 3, 5),
            ("g4-predicate".to_string(), 3, 15),
            ("g4-action".to_string(), 4, 13),
        ]
    );
    let rendered = spec.warnings[2].1.render(&spec.warnings[2].0);
    assert!(rendered.contains("assumed true"), "{rendered}");
}

#[test]
fn hidden_text_is_occasional_unless_asked_for() {
    use thicket_gen::Weights;
    // Hidden text per generated input: the bytes that are not tokens.
    let hidden_share = |spec: &AntlrSpec| {
        let generator = Generator::new(&spec.spec.grammar, GenConfig::default()).unwrap();
        let weights = Weights::from_spec(&spec.spec.grammar).expect("hidden text is weighted");
        let (mut hidden, mut total) = (0, 0);
        for i in 0..300 {
            let (tree, _) =
                generator.generate_tree_weighted(&mut Generator::rng_for(5, i), &weights);
            let input = spec.separate(&tree).unwrap_or_else(|merged| merged.bytes);
            let tokens = spec.lexer.tokens(&input).unwrap_or_default();
            total += input.len();
            hidden += input.len() - tokens.iter().map(|t| t.end - t.start).sum::<usize>();
        }
        hidden as f64 / total as f64
    };
    let mut spec = load(KEYWORDS);
    let rare = hidden_share(&spec);
    spec.set_hidden_probability(0.9);
    let often = hidden_share(&spec);
    // Mostly the single spaces that keep tokens apart; with 0.9, mostly hidden text.
    assert!(rare < 0.25, "{rare}");
    assert!(often > 2.0 * rare, "{rare} {often}");
}

/// A maker given its own hidden probability draws what the spec set to that
/// probability draws (the Python module shares one read grammar between calls).
#[test]
fn a_makers_hidden_probability_is_the_specs() {
    use thicket_antlr::generate::InputMaker;
    let shared = load(KEYWORDS);
    let mut raised = load(KEYWORDS);
    raised.set_hidden_probability(0.9);
    let generator = Generator::new(&shared.spec.grammar, GenConfig::default()).unwrap();
    let inputs = |maker: &InputMaker<'_>| -> Vec<Vec<u8>> {
        (0..100)
            .map(|i| maker.input(&generator, 3, i).bytes)
            .collect()
    };
    let maker = InputMaker::with_hidden_probability(&shared, 0.9);
    let given = inputs(&maker);
    assert_eq!(given, inputs(&InputMaker::new(&raised)));
    assert_ne!(given, inputs(&InputMaker::new(&shared)));
    // The size target is sampled from the maker's weights too: grammars-v4's TOML
    // grammar keeps a target with seldom hidden text, none with frequent.
    let toml = || {
        let texts: Vec<(String, Vec<u8>)> = ["TomlParser.g4", "TomlLexer.g4"]
            .iter()
            .map(|f| {
                let path = format!("{}/tests/data/toml/{f}", env!("CARGO_MANIFEST_DIR"));
                (f.to_string(), std::fs::read(path).unwrap())
            })
            .collect();
        thicket_antlr::load_g4_texts(&texts, None).unwrap()
    };
    let (shared, mut raised) = (toml(), toml());
    raised.set_hidden_probability(0.5);
    let target = InputMaker::with_hidden_probability(&shared, 0.5).target_size();
    assert_eq!(target, thicket_antlr::generate::target_size(&raised));
    assert_ne!(target, InputMaker::new(&shared).target_size());
}
