//! Fandango `.fan` specs as a whole: statements of every kind, includes, the standard
//! library, and the grammar additions (bits, permutations, computed repetitions,
//! parties, Python literals and regexes). The specs here are small ones written for
//! these tests.

use std::path::{Path, PathBuf};
use thicket_grammar::{
    ConstraintKind, Expr, Grammar, LoadOptions, Spec, SpecError, load_spec_bytes, load_spec_file,
};

fn load(text: &str) -> Spec {
    load_spec_bytes("test.fan", text.as_bytes(), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()))
}

fn error(text: &str) -> SpecError {
    load_spec_bytes("test.fan", text.as_bytes(), &LoadOptions::default())
        .expect_err("the spec is malformed")
}

fn rule_names(grammar: &Grammar) -> Vec<&str> {
    grammar.rules().iter().map(|r| r.name.as_str()).collect()
}

fn body(grammar: &Grammar, name: &str) -> String {
    let symbol = grammar
        .symbol(name)
        .unwrap_or_else(|| panic!("no <{name}>"));
    grammar.display_expr(grammar.rule(symbol).body)
}

/// A fresh directory for files a test writes, removed when the value is dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn python_constraints_and_rules_interleave() {
    let text = "\
import random
from math import floor

<start> ::= <pair>+
def double(n):
    '''Twice n.'''
    return 2 * n
where int(<pair>.<num>) < double(10)
<pair> ::= <num> ':' <num>
LIMIT = {
    'high': 99,
}
where forall <p> in <start>.<pair>:
    int(<p>.<num>) > 0
<num> ::= r'[0-9]+'
minimizing len(str(<start>))
maximizing int(<num>)
";
    let spec = load(text);
    assert_eq!(rule_names(&spec.grammar)[..3], ["start", "pair", "num"]);
    let fan = &spec.fandango;
    let python: Vec<&str> = fan.python.iter().map(|b| b.text()).collect();
    assert_eq!(
        python,
        vec![
            "import random\nfrom math import floor",
            "def double(n):\n    '''Twice n.'''\n    return 2 * n",
            "LIMIT = {\n    'high': 99,\n}",
        ]
    );
    let constraints: Vec<(ConstraintKind, &str)> = fan
        .constraints
        .iter()
        .map(|c| (c.kind, c.block.text()))
        .collect();
    assert_eq!(
        constraints,
        vec![
            (ConstraintKind::Where, "int(<pair>.<num>) < double(10)"),
            (
                ConstraintKind::Where,
                "forall <p> in <start>.<pair>:\n    int(<p>.<num>) > 0"
            ),
            (ConstraintKind::Minimizing, "len(str(<start>))"),
            (ConstraintKind::Maximizing, "int(<num>)"),
        ]
    );
    // Rules and code follow the first `where`: it is no ISLa tail.
    assert_eq!(spec.constraints_start, None);
    assert_eq!(fan.constraints[1].block.line_col().line, 13);
    assert!(!fan.is_protocol() && !fan.uses_bits);
}

#[test]
fn a_tail_of_where_blocks_is_where_isla_reading_starts() {
    let text = "<start> ::= <d>+\n<d> ::= \"1\"\n# checks\nwhere forall <d> x in start:\n  x = \"1\"\nwhere str.len(<start>) > 0\n";
    let spec = load(text);
    assert_eq!(spec.constraints_start, text.find("where"));
    assert_eq!(spec.fandango.constraints.len(), 2);
}

#[test]
fn generators_belong_to_the_last_definition_of_their_rule() {
    let text = "\
<start> ::= <number> <check>
<number> ::= <digit>{3} := str(random.randint(100, 999))
<check> ::= <digit> = compute(str(<number>))
<check> ::= <digit>{2} :: twice(<number>)
";
    let spec = load(text);
    let fan = &spec.fandango;
    let generators: Vec<(String, &str)> = fan
        .generators
        .iter()
        .map(|g| (spec.grammar.display_symbol(g.rule), g.block.text()))
        .collect();
    assert_eq!(
        generators,
        vec![
            ("<number>".to_string(), "str(random.randint(100, 999))"),
            ("<check>".to_string(), "twice(<number>)"),
        ]
    );
    assert_eq!(body(&spec.grammar, "check"), "<digit>{2}");
    let codes: Vec<&str> = fan.warnings.iter().map(|w| w.code).collect();
    assert_eq!(
        codes,
        vec![
            "deprecated-generator",
            "redefined-rule",
            "deprecated-generator"
        ]
    );
    assert!(
        fan.warnings[1]
            .message
            .contains("<check> is defined 2 times")
    );
}

#[test]
fn computed_repetitions_are_loose_in_the_grammar_and_keep_their_bounds() {
    let text = "\
<start> ::= <len> <byte>{from_uint16(bytes(<len>))} <tail>
<len> ::= <byte>{2}
<tail> ::= 'x'{2, limit(<len>)} 'y'{(0x10)} 'z'{,n + 1}
";
    let spec = load(text);
    let grammar = &spec.grammar;
    assert_eq!(body(grammar, "start"), "<len> <byte>* <tail>");
    assert_eq!(body(grammar, "tail"), "\"x\"{2,} \"y\"{16} \"z\"*");
    let repeats: Vec<(String, Option<&str>, Option<&str>)> = spec
        .fandango
        .computed_repeats
        .iter()
        .map(|c| {
            (
                grammar.display_expr(c.expr),
                c.min.as_ref().map(|b| b.text()),
                c.max.as_ref().map(|b| b.text()),
            )
        })
        .collect();
    assert_eq!(
        repeats,
        vec![
            (
                "<byte>*".to_string(),
                Some("from_uint16(bytes(<len>))"),
                Some("from_uint16(bytes(<len>))")
            ),
            ("\"x\"{2,}".to_string(), None, Some("limit(<len>)")),
            ("\"z\"*".to_string(), None, Some("n + 1")),
        ]
    );
    match grammar.expr(spec.fandango.computed_repeats[0].expr) {
        Expr::Repeat(r) => assert_eq!((r.min, r.max), (0, None)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn permutations_are_every_order_of_their_items() {
    let spec = load("<start> ::= 'a' [[ <x> <y> 'z' ]] 'b'\n<x> ::= 'x'\n<y> ::= 'y'\n");
    assert_eq!(
        body(&spec.grammar, "start"),
        "\"a\" (<x> (<y> \"z\" | \"z\" <y>) | <y> (<x> \"z\" | \"z\" <x>) | \"z\" (<x> <y> | <y> <x>)) \"b\""
    );
    let err = error("<start> ::= [[ 'a' 'b' 'c' 'd' 'e' 'f' ]]\n");
    assert_eq!(err.diagnostics[0].code, "permutation-too-large");
    assert!(err.to_string().contains("test.fan:1:13"), "{err}");
}

#[test]
fn bits_are_one_byte_literals_and_are_recorded() {
    let spec = load("<start> ::= <flag> <bit>{3} 0 1\n<flag> ::= 1\n");
    let fan = &spec.fandango;
    assert!(fan.uses_bits);
    let bits: Vec<String> = fan
        .bit_terminals
        .iter()
        .map(|&e| spec.grammar.display_expr(e))
        .collect();
    // `0 1` of <start>, `1` of <flag>, `0 | 1` of the standard library's <_bit>.
    assert_eq!(bits.len(), 5, "{bits:?}");
    assert!(bits.iter().all(|b| b == "\"0\"" || b == "\"1\""));
    assert_eq!(body(&spec.grammar, "_bit"), "\"0\" | \"1\"");
    assert_eq!(error("<start> ::= 2\n").diagnostics[0].code, "syntax");
}

#[test]
fn parties_name_the_rules_of_their_messages() {
    let spec = load(
        "<start> ::= <Client:request> <Server:Client:reply> <log>\n<request> ::= 'GET'\n<reply> ::= 'OK'\n<log> ::= <StdOut:request>\n",
    );
    let fan = &spec.fandango;
    assert!(fan.is_protocol());
    assert_eq!(fan.parties, vec!["Client", "Server", "StdOut"]);
    let refs: Vec<(String, &str, Option<&str>)> = fan
        .party_refs
        .iter()
        .map(|p| {
            (
                spec.grammar.display_expr(p.expr),
                p.sender.as_str(),
                p.receiver.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            ("<request>".to_string(), "Client", None),
            ("<reply>".to_string(), "Server", Some("Client")),
            ("<request>".to_string(), "StdOut", None),
        ]
    );
    assert_eq!(
        error("<Client:start> ::= 'x'\n").diagnostics[0].code,
        "syntax"
    );
    assert_eq!(
        error("<start> ::= <a:b:c:d>\n").diagnostics[0].code,
        "bad-rule-name"
    );
}

#[test]
fn the_standard_library_is_there_when_reached_and_can_be_redefined() {
    let spec = load("<start> ::= <digit>+ <ascii_control>\n");
    let names = rule_names(&spec.grammar);
    // The spec's own rules first, then what it reaches of the library.
    assert_eq!(names[0], "start");
    for name in ["digit", "_digit", "ascii_control", "NUL", "_DEL", "SP"] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
    assert!(
        !names.contains(&"byte") && !names.contains(&"char"),
        "{names:?}"
    );
    // Redefining <digit> replaces it; <_digit> is not reached any more.
    let spec = load("<start> ::= <digit>+\n<digit> ::= '7'\n");
    assert_eq!(rule_names(&spec.grammar), vec!["start", "digit"]);
    assert!(
        spec.fandango.warnings.is_empty(),
        "{:?}",
        spec.fandango.warnings
    );
    // A name the constraints mention is reached too.
    let spec = load("<start> ::= 'a'\nwhere len(<hexdigit>) > 0\n");
    assert!(spec.grammar.symbol("hexdigit").is_some());
    // Library terminals: <byte> is any byte, <char> any character with newline,
    // <alphanum> takes `_` (Fandango's second definition), the dancer is one emoji.
    let spec = load("<start> ::= <byte> <char> <alphanum> <fandango_dancer>\n");
    let grammar = &spec.grammar;
    assert!(grammar.may_produce_byte(0xff) && grammar.may_produce_byte(b'\n'));
    assert_eq!(body(grammar, "_alphanum"), "r\"[a-zA-Z0-9_]\"");
    assert_eq!(body(grammar, "_fandango_dancer"), "\"\u{1F483}\"");
    // ISLa grammars have no library.
    let err =
        load_spec_bytes("t.bnf", b"<start> ::= <digit>\n", &LoadOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "undefined-rule");
}

#[test]
fn python_literals_and_regexes_read_as_python_reads_them() {
    let spec = load(concat!(
        "<start> ::= '''tri\nple''' \"\\f\\v\\101\\x41\" b'\\xff' u'\\u00e9' <re>\n",
        "<re> ::= r'(?i)ab[\\<\\>]' | rb'[\\x80-\\xff]{2}' | R\"[0-9]+\" | r'^(?!no$)[a-z]+$'\n",
        "<warn> ::= '\\q'\n",
    ));
    let grammar = &spec.grammar;
    assert_eq!(
        body(grammar, "start"),
        "\"tri\\nple\" \"\\u{c}\\u{b}AA\" b\"\\xff\" \"é\" <re>"
    );
    assert_eq!(
        body(grammar, "re"),
        "r\"(?i)ab[<>]\" | r\"(?-u:[\\x80-\\xff]{2})\" | r\"[0-9]+\" | r\"[a-z]+\""
    );
    let codes: Vec<&str> = spec.fandango.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, vec!["regex-lookaround", "invalid-escape"]);
    assert_eq!(body(grammar, "warn"), "\"\\\\q\"");
    assert_eq!(
        error("<start> ::= f'x{1}'\n").diagnostics[0].code,
        "unsupported"
    );
    let err = error("<start> ::= r'(a)\\1'\n");
    assert_eq!(err.diagnostics[0].code, "bad-regex");
    assert!(err.to_string().contains("test.fan:1:18"), "{err}");
}

#[test]
fn character_sets_are_classes_of_their_characters() {
    let spec = load("<start> ::= [\"a-c\"] [^\"\\n\"]\n");
    assert_eq!(
        body(&spec.grammar, "start"),
        "r\"[\\x{61}\\x{2D}\\x{63}]\" r\"[^\\x{A}]\""
    );
}

#[test]
fn includes_are_found_beside_the_spec_and_in_include_dirs() {
    let temp = scratch();
    let dir = temp.path().to_path_buf();
    write(
        &dir,
        "lib/common.fan",
        "import base64\n<word> ::= <letter>+\n<letter> ::= 'a' | 'b'\nwhere len(<word>) < 10\n",
    );
    write(&dir, "spec/beside.fan", "<start> ::= 'beside'\n");
    let main = write(
        &dir,
        "spec/main.fan",
        "import os\ninclude('common.fan')\n<start> ::= <word> ' ' <other>\ninclude(\"beside.fan\")\n<other> ::= <letter>\n<letter> ::= 'c'\n",
    );
    // Without -I the library is not found.
    let err = load_spec_file(&main, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "include-not-found");
    assert!(err.to_string().contains("main.fan:2:1"), "{err}");
    assert!(err.render().contains("-I DIR"), "{}", err.render());
    let options = LoadOptions {
        include_dirs: vec![dir.join("lib")],
        ..LoadOptions::default()
    };
    let spec = load_spec_file(&main, &options).unwrap_or_else(|e| panic!("{}", e.render()));
    let grammar = &spec.grammar;
    // Fandango puts an included file's statements before the including file's: the
    // main file's <start> and <letter> replace the included ones.
    assert_eq!(body(grammar, "start"), "<word> \" \" <other>");
    assert_eq!(body(grammar, "letter"), "\"c\"");
    let fan = &spec.fandango;
    assert_eq!(fan.includes.len(), 2);
    let python: Vec<(&str, String)> = fan
        .python
        .iter()
        .map(|b| {
            (
                b.text(),
                b.source.name().rsplit('/').next().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        python,
        vec![
            ("import base64", "common.fan".to_string()),
            ("import os", "main.fan".to_string()),
        ]
    );
    let constraint = &fan.constraints[0].block;
    assert!(constraint.source.name().ends_with("common.fan"));
    assert_eq!(constraint.line_col().line, 4);
    // Diagnostics about included rules point into their file.
    let letter = grammar.symbol("word").unwrap();
    let at = grammar.rule(letter).name_span.start as usize;
    assert!(spec.source.name_at(at).ends_with("common.fan"));
    assert_eq!(spec.source.line_col(at).line, 2);
}

#[test]
fn include_errors_name_the_file_and_place() {
    let temp = scratch();
    let dir = temp.path().to_path_buf();
    let a = write(&dir, "a.fan", "<start> ::= <b>\ninclude('b.fan')\n");
    write(&dir, "b.fan", "<b> ::= 'b'\n\ninclude('a.fan')\n");
    let err = load_spec_file(&a, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "include-cycle");
    assert!(err.to_string().contains("b.fan:3:1"), "{err}");
    // A syntax error in an included file is reported in that file.
    let c = write(&dir, "c.fan", "include('d.fan')\n<start> ::= <d>\n");
    write(&dir, "d.fan", "<d> ::= 'd'\n<e> ::= (\n");
    let err = load_spec_file(&c, &LoadOptions::default()).unwrap_err();
    assert!(err.to_string().contains("d.fan:2:"), "{err}");
    assert!(err.render().contains("included from"), "{}", err.render());
    // An undefined rule in an included file too.
    let e = write(&dir, "e.fan", "include('f.fan')\n<start> ::= <f>\n");
    write(&dir, "f.fan", "\n<f> ::= <g>\n");
    let err = load_spec_file(&e, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "undefined-rule");
    assert!(err.to_string().contains("f.fan:2:9"), "{err}");
    assert!(err.render().contains("f.fan:2:9"), "{}", err.render());
}

#[test]
fn statements_end_where_fandango_ends_them() {
    // A production continues on indented lines and on lines that start with `|`; a
    // backslash joins lines; `;` ends a production.
    let spec = load(
        "<start> ::= <a>\n    | <b> \\\n  <c>\n| 'd'; <a> ::= 'a'\n<b> ::= 'b'\n  <c> ::= ('c'\n'C')\n",
    );
    assert_eq!(body(&spec.grammar, "start"), "<a> | <b> <c> | \"d\"");
    assert_eq!(body(&spec.grammar, "c"), "\"c\" \"C\"");
    // A where block ends at its line unless lines are indented under it; strings and
    // comments hide what looks like the end.
    let spec = load(
        "<start> ::= 'x'\nwhere f(\"\"\"\n)\"\"\", '#') # )\nwhere g(<start>,\n  1)\nx = ')'\n",
    );
    let constraints: Vec<&str> = spec
        .fandango
        .constraints
        .iter()
        .map(|c| c.block.text())
        .collect();
    assert_eq!(
        constraints,
        vec!["f(\"\"\"\n)\"\"\", '#')", "g(<start>,\n  1)"]
    );
    assert_eq!(spec.fandango.python[0].text(), "x = ')'");
    // A `where` indented under a production ends where an indented definition starts
    // (Fandango's own indentation test spec has one).
    let spec = load(
        "<start> ::= <x>+\n    where len(str(<start>)) > 3 and f(<start>,\n        1)\n\n    <x> ::= 'a' | 'b'\n",
    );
    assert_eq!(body(&spec.grammar, "x"), "\"a\" | \"b\"");
    assert_eq!(
        spec.fandango.constraints[0].block.text(),
        "len(str(<start>)) > 3 and f(<start>,\n        1)"
    );
    // Something that is no statement is a syntax error where it stands.
    let err = error("<start> ::= 'x'\n::= 'y'\n");
    assert!(err.to_string().contains("test.fan:2:1"), "{err}");
}

#[test]
fn settings_are_captured() {
    let spec = load("<start> ::= <a>\n<a> ::= 'a'\nsetting <a> weight=2\n");
    assert_eq!(spec.fandango.settings[0].text(), "<a> weight=2");
}
