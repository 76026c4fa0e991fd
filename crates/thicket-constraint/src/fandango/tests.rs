//! Translation of Fandango constraints: what is native, what goes to the host and
//! with which arguments, and the verdicts on small inputs (a Rust closure stands in
//! for Python).

use super::*;
use crate::Checker;
use crate::host::{Host, HostArg, HostError, HostExpr};
use std::sync::Mutex;
use thicket_grammar::Spec;

type HostFn =
    dyn Fn(&HostExpr, &DerivationTree, &[HostArg]) -> Result<bool, HostError> + Send + Sync;

/// A host whose truth values a closure computes; it records every call.
struct FnHost {
    f: Box<HostFn>,
    calls: Mutex<Vec<(String, Vec<HostArg>)>>,
}

impl Host for FnHost {
    fn eval_bool(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        _: &Grammar,
        args: &[HostArg],
    ) -> Result<bool, HostError> {
        self.calls
            .lock()
            .unwrap()
            .push((expr.source.clone(), args.to_vec()));
        (self.f)(expr, tree, args)
    }

    fn eval_number(
        &self,
        expr: &HostExpr,
        _: &DerivationTree,
        _: &Grammar,
        args: &[HostArg],
    ) -> Result<f64, HostError> {
        match (expr.source.as_str(), args) {
            ("weight(_fan0)", [HostArg::Tree(n)]) => Ok(n.index() as f64),
            _ => Err(HostError {
                message: "unknown".into(),
            }),
        }
    }
}

fn host(
    f: impl Fn(&HostExpr, &DerivationTree, &[HostArg]) -> Result<bool, HostError>
    + Send
    + Sync
    + 'static,
) -> Arc<FnHost> {
    Arc::new(FnHost {
        f: Box::new(f),
        calls: Mutex::new(Vec::new()),
    })
}

const WORDS: &str = r#"<start> ::= <word> ("," <word>)*
<word> ::= <letter>+ <digits>
<letter> ::= "a" | "b" | "c"
<digits> ::= <digit>*
<digit> ::= "0" | "1" | "2" | "3"
"#;

fn spec(grammar: &str) -> Spec {
    thicket_grammar::load_spec_bytes("t.fan", grammar.as_bytes(), &Default::default()).unwrap()
}

fn compile(
    spec: &Spec,
    text: &str,
    host: Option<SharedHost>,
) -> Result<FandangoConstraint, SpecError> {
    let source = Arc::new(SourceFile::new("t.fan", text));
    from_fandango(&spec.grammar, host, source, Span::new(0, text.len()))
}

fn holds(spec: &Spec, c: &FandangoConstraint, input: &str) -> bool {
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    let tree = parser.parse(input.as_bytes()).unwrap().tree();
    Checker::new(&spec.grammar, vec![c.constraint.clone()])
        .check(&tree)
        .is_empty()
}

#[test]
fn native_constructs_need_no_host() {
    let spec = spec(WORDS);
    for text in [
        "forall <w> in <word>: len(str(<w>.<letter>)) == 1",
        "exists <w> in <word>: <w>..<letter> == \"c\"",
        "all(str(l) != \"b\" for l in *<word>.<letter>)",
        "any(<l> == \"a\" for <l> in *<letter>)",
        "int(<digits>) < 20 and |<word>| <= 3",
        "len(*<word>.<letter>) == |<letter>|",
        "str(<word>).startswith(\"a\") or \"c\" in str(<word>)",
        "str(<word>)[0] == \"a\" and str(<word>)[1:] != \"\"",
        "<word> != <word> or <letter> in (\"a\", \"b\")",
        "(int(<digits>) + 1) * 2 // 3 % 5 == abs(-1) and max(1, 2, int(<digits>)) > 0",
        "str(<word>) == f\"{<letter>}1\"",
        "all(str(c) != \"b\" for c in *<letter>) and not <word> == \"x\"",
        "1 < |<letter>| < 4",
        "str(<word>) == \"a\" -> |<word>| == 1",
    ] {
        let c = compile(&spec, text, None).unwrap_or_else(|e| panic!("{text}: {}", e.render()));
        assert!(c.native, "{text}");
    }
}

#[test]
fn python_goes_to_the_host_with_the_construct_named() {
    let spec = spec(WORDS);
    for (text, reason) in [
        ("is_valid(str(<word>))", "a call of `is_valid`"),
        (
            "int(str(<digits>), len(str(<word>))) > 3",
            "`int()` with a base other than a number",
        ),
        ("len(<word>) == 2", "`len()` of a tree"),
        ("<word>[0] == \"a\"", "selecting children by index"),
        ("str(<word>).upper() == \"A\"", "the method `upper`"),
        ("<word>", "the truth value of a tree"),
        ("int(<digits>) / 2 > 1", "the operator `/`"),
    ] {
        let e = compile(&spec, text, None).unwrap_err();
        let shown = e.render();
        assert!(
            shown.contains("needs Python") && shown.contains(reason),
            "{text}: {shown}"
        );
        assert!(shown.contains("t.fan:1:"), "{shown}");
        let c = compile(&spec, text, Some(host(|_, _, _| Ok(true)))).unwrap();
        assert!(!c.native);
        assert_eq!(c.host_exprs.len(), 1, "{text}");
        assert!(c.host_exprs[0].reason.contains(reason), "{text}");
    }
}

#[test]
fn host_expressions_are_python_over_their_parameters() {
    let spec = spec(WORDS);
    let h = host(|_, _, _| Ok(true));
    let c = compile(
        &spec,
        "forall <w> in <word>: check(<w>, <w>.<digits>, *<w>..<letter>, |<letter>|,\n    # a comment\n    [x for x in range(3)]) <> 0",
        Some(h),
    )
    .unwrap();
    let used = &c.host_exprs[0];
    assert_eq!(
        used.expr.source,
        "(check(_fan0, _fan1, _fan2, _fan3, [x for x in range(3)])) != (0)"
    );
    assert_eq!(used.expr.params, ["_fan0", "_fan1", "_fan2", "_fan3"]);
    assert_eq!(
        used.params,
        ["<w>", "<w>.<digits>", "*<w>..<letter>", "|<letter>|"]
    );
    // Selectors inside f-strings; `<>` is Python 3's `!=`.
    let c = compile(
        &spec,
        "ok(f\"{<word>!r}-\") and not ok(<letter>) in [1 <> 2]",
        Some(host(|_, _, _| Ok(true))),
    )
    .unwrap();
    let sources: Vec<&str> = c
        .host_exprs
        .iter()
        .map(|h| h.expr.source.as_str())
        .collect();
    assert_eq!(
        sources,
        ["ok(f\"{_fan0!r}-\")", "not ok(_fan1) in [1 != 2]"]
    );
    // A name bound by `all(... for x in ...)` is a parameter too.
    let c = compile(
        &spec,
        "all(ok(x) for x in *<word>)",
        Some(host(|_, _, _| Ok(true))),
    )
    .unwrap();
    assert_eq!(c.host_exprs[0].expr.source, "ok(x)");
    assert_eq!(c.host_exprs[0].expr.params, ["x"]);
}

#[test]
fn host_arguments_follow_fandango() {
    let spec = spec(WORDS);
    let h = host(|_, _, _| Ok(true));
    let c = compile(
        &spec,
        "f(*<start>..<letter>, |<word>.<letter>|, <word>)",
        Some(h.clone()),
    )
    .unwrap();
    assert!(holds(&spec, &c, "ab1,c"));
    let calls = h.calls.lock().unwrap();
    // One call per `<word>` (the only tree placeholder); the list and count are whole.
    assert_eq!(calls.len(), 2);
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    let tree = parser.parse(b"ab1,c").unwrap().tree();
    let view = TreeView::new(&tree, &spec.grammar);
    let letter = spec.grammar.symbol("letter").unwrap();
    let letters: Vec<_> = view
        .nodes_of(letter, tree.root())
        .iter()
        .map(|&i| thicket_tree::NodeId::from_index(i as usize))
        .collect();
    let HostArg::Trees(listed) = &calls[0].1[0] else {
        panic!("{:?}", calls[0])
    };
    assert_eq!(listed, &letters);
    assert_eq!(calls[0].1[1], HostArg::Int(3));
}

#[test]
fn breadth_first_order_for_descendants() {
    // `<n>`s nested: Fandango lists the outer ones first.
    let spec = spec("<start> ::= <n>\n<n> ::= \"(\" <n> <n> \")\" | \"x\"\n");
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    let tree = parser.parse(b"((xx)x)").unwrap().tree();
    let view = TreeView::new(&tree, &spec.grammar);
    let n = spec.grammar.symbol("n").unwrap();
    let listed = atoms::select(&view, tree.root(), &[PathStep::Descendants(n)], &[]);
    let texts: Vec<&[u8]> = listed.iter().map(|&i| tree.text(i)).collect();
    assert_eq!(texts, [&b"((xx)x)"[..], b"(xx)", b"x", b"x", b"x"]);
}

#[test]
fn exceptions_count_as_fandango_counts_them() {
    let spec = spec(WORDS);
    let raise = || {
        host(|_, _, _| {
            Err(HostError {
                message: "ZeroDivisionError".into(),
            })
        })
    };
    // An expression that raises is false.
    let c = compile(&spec, "f(<word>)", Some(raise())).unwrap();
    assert!(!holds(&spec, &c, "a"));
    // A comparison whose side raises is skipped.
    let c = compile(&spec, "f(<word>) == 1", Some(raise())).unwrap();
    assert!(holds(&spec, &c, "a"));
    // The comparison itself raising (the sides do not) makes it false.
    let h = host(|e, _, _| {
        if e.source.ends_with("is None or True") {
            Ok(true)
        } else {
            Err(HostError {
                message: "TypeError".into(),
            })
        }
    });
    let c = compile(&spec, "f(<word>) < g(<word>)", Some(h)).unwrap();
    assert!(!holds(&spec, &c, "a"));
    // Natively: `int("")` raises; in a comparison that skips, in an expression fails.
    let c = compile(&spec, "int(str(<digits>)) > 5", None).unwrap();
    assert!(holds(&spec, &c, "a"));
    assert!(!holds(&spec, &c, "a1"));
    let c = compile(&spec, "not int(str(<digits>)) < 5", None).unwrap();
    assert!(!holds(&spec, &c, "a"));
    // `int()` of a tree without terminals is 0.
    let c = compile(&spec, "int(<digits>) == 0", None).unwrap();
    assert!(holds(&spec, &c, "a,b0"));
}

const SIZES: &str = r#"<start> ::= <entry>+
<entry> ::= <size> ";"
<size> ::= <pad> <ch>+ <pad>
<pad> ::= "" | " "
<ch> ::= "0" | "1" | "2" | "4" | "5" | "7" | "9" | "_" | "o" | "-"
"#;

#[test]
fn int_with_a_base_is_native_and_reads_as_python_reads() {
    let spec = spec(SIZES);
    let text =
        "forall <e> in <entry>: int(str(<e>.<size>), 8) >= 10 and int(str(<e>.<size>), 8) <= 100";
    let c = compile(&spec, text, None).unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(c.native);
    // Given a host, it is still not asked.
    let h = host(|_, _, _| Ok(false));
    let with_host = compile(&spec, text, Some(h.clone())).unwrap();
    assert!(with_host.host_exprs.is_empty());
    // Python 3: int(" 12 ", 8) == 10, int("0o_17", 8) == 15, int("144", 8) == 100,
    // int("1_0", 8) == 8, int("145", 8) == 101, int("-12", 8) == -10.
    for (input, expected) in [
        (" 12 ;", true),
        ("0o_17;", true),
        ("144;", true),
        ("12;1_0;", false),
        ("145;", false),
        ("-12;", false),
        ("12;144;0o17 ;", true),
    ] {
        assert_eq!(holds(&spec, &with_host, input), expected, "{input:?}");
    }
    // A malformed literal raises ValueError: the comparison is skipped, as Fandango
    // skips it, and `not` of one that raises is false.
    for input in ["19;", "1__2;", "0o;", "_12;"] {
        assert!(holds(&spec, &with_host, input), "{input:?}");
    }
    let negated = compile(&spec, "not int(str(<size>), 8) < 5", None).unwrap();
    assert!(!holds(&spec, &negated, "19;"));
    assert!(holds(&spec, &negated, "5;"));
    assert!(h.calls.lock().unwrap().is_empty());
}

#[test]
fn int_of_text_with_non_ascii_characters_goes_to_python() {
    // Python's `int()` reads Unicode digits ("\u0663" is 3), which thicket does not.
    let spec = spec("<start> ::= <d>+\n<d> ::= \"1\" | \"\u{663}\"\n");
    for text in ["int(str(<start>), 8) > 1", "int(str(<start>)) > 1"] {
        let e = compile(&spec, text, None).unwrap_err();
        assert!(e.render().contains("non-ASCII"), "{}", e.render());
    }
}

#[test]
fn conjuncts_split_between_native_and_host() {
    let spec = spec(WORDS);
    let h = host(|e, tree, args| match args {
        [HostArg::Tree(n)] => Ok(e.source == "ok(_fan0)" && tree.text(*n).starts_with(b"a")),
        _ => Ok(false),
    });
    let c = compile(&spec, "str(<word>) != \"x\" and ok(<word>)", Some(h)).unwrap();
    assert_eq!(c.host_exprs.len(), 1);
    assert!(holds(&spec, &c, "a,ab"));
    assert!(!holds(&spec, &c, "a,b"));
}

#[test]
fn selectors_mean_what_they_mean_in_fandango() {
    let spec = spec(WORDS);
    let check = |text: &str, input: &str| {
        let c = compile(&spec, text, None).unwrap_or_else(|e| panic!("{text}: {}", e.render()));
        holds(&spec, &c, input)
    };
    // `.` is every direct child, not the first.
    assert!(!check("forall <w> in <word>: <w>.<letter> == \"a\"", "ab"));
    assert!(check("forall <w> in <word>: <w>.<letter> == \"a\"", "aa"));
    // Each occurrence of a free selector on its own.
    assert!(!check("str(<word>) == str(<word>)", "a,b"));
    assert!(check("str(<word>) == str(<word>)", "a,a"));
    // A selector that selects nothing makes the atom hold.
    assert!(check("int(<digit>) > 100", "a,b"));
    // `exists` needs one.
    assert!(!check("exists <d> in <digit>: True", "a"));
    // Nested quantifiers, and `..` from a bound tree.
    assert!(check(
        "forall <w> in <word>: exists <l> in <w>..<letter>: str(<l>) == \"c\"",
        "ac,cb"
    ));
    assert!(!check(
        "forall <w> in <word>: exists <l> in <w>..<letter>: str(<l>) == \"c\"",
        "ac,b"
    ));
    // A bound nonterminal as a quantifier's domain is that tree.
    assert!(check(
        "forall <w> in <word>: forall <v> in <w>: <v> == <w>",
        "ab,c"
    ));
    // Implication.
    assert!(check("str(<word>) == \"b\" -> |<word>| == 1", "a,c"));
    assert!(check("str(<word>) == \"b\" -> |<word>| == 1", "b"));
    assert!(!check("str(<word>) == \"b\" -> |<word>| == 1", "b,b"));
    // Python's `all` over `*SEL`.
    assert!(check(
        "all(str(c) != \"b\" for c in *<letter>) and True",
        "ac,c"
    ));
    assert!(!check(
        "all(str(c) != \"b\" for c in *<letter>) and True",
        "ac,b"
    ));
    assert!(check(
        "any(str(c) == \"b\" for c in *<letter> if c != \"a\")",
        "ab"
    ));
    // Trees of different symbols are never equal; a tree equals a string by its text.
    assert!(!check("<word> == <letter>", "a"));
    assert!(check("<word> == \"a\"", "a"));
    // A tree against a number reads the number.
    assert!(check("<digits> > 12", "a13"));
    assert!(!check("<digits> > 12", "a12"));
}

#[test]
fn unknown_nonterminals() {
    let spec = spec(WORDS);
    // In a lone atom, an error as in Fandango, with a suggestion.
    let e = compile(&spec, "str(<wrod>) == \"a\"", None).unwrap_err();
    let shown = e.render();
    assert!(
        shown.contains("no nonterminal <wrod>") && shown.contains("did you mean <word>?"),
        "{shown}"
    );
    // Inside a quantifier, it selects nothing (a warning).
    let c = compile(
        &spec,
        "forall <w> in <word>: str(<w>.<wrod>) == \"a\"",
        None,
    )
    .unwrap();
    assert_eq!(c.warnings.len(), 1);
    assert!(holds(&spec, &c, "a"));
}

#[test]
fn syntax_errors_say_where_and_what() {
    let spec = spec(WORDS);
    for (text, expected, column) in [
        ("forall <w> in <word> str(<w>) == \"a\"", "expected `:`", 22),
        ("str(<word>) == ", "expected an expression", 16),
        ("str(<word>==\"a\")", "expected `>`", 10),
        ("f(**<word>)", "population-wide", 3),
        ("x := 1", "expected", 3),
    ] {
        let e = compile(&spec, text, None).unwrap_err();
        let d = &e.diagnostics[0];
        assert!(d.message.contains(expected), "{text}: {}", d.message);
        let at = e.source.line_col(d.primary_span().unwrap().start as usize);
        assert_eq!((at.line, at.column), (1, column), "{text}: {}", d.message);
    }
}

#[test]
fn soft_goals_average_over_combinations() {
    let spec = spec(WORDS);
    let source = |t: &str| Arc::new(SourceFile::new("t.fan", t));
    let compiler = Compiler::new(&spec.grammar, Some(host(|_, _, _| Ok(true))));
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    let tree = parser.parse(b"ab1,c,a23").unwrap().tree();
    let text = "maximizing |<word>| * 10";
    let goal = compiler
        .goal(source(text), Span::new(0, text.len()), None)
        .unwrap();
    assert!(goal.native && !goal.minimize);
    assert_eq!(goal.values(&tree, &spec.grammar), [30.0]);
    let text = "minimizing len(str(<word>))";
    let goal = compiler
        .goal(source(text), Span::new(0, text.len()), None)
        .unwrap();
    assert_eq!(goal.values(&tree, &spec.grammar), [3.0, 1.0, 3.0]);
    assert!((goal.fitness(&tree, &spec.grammar) - 7.0 / 3.0).abs() < 1e-9);
    // `int("")` raises: that combination counts 0.
    let text = "int(str(<digits>)) + 1";
    let goal = compiler
        .goal(source(text), Span::new(0, text.len()), Some(true))
        .unwrap();
    assert_eq!(goal.values(&tree, &spec.grammar), [2.0, 0.0, 24.0]);
    // A host goal.
    let text = "maximizing weight(<word>)";
    let goal = compiler
        .goal(source(text), Span::new(0, text.len()), None)
        .unwrap();
    assert!(!goal.native);
    assert_eq!(goal.values(&tree, &spec.grammar).len(), 3);
}

#[test]
fn blocks_end_where_fandango_ends_them() {
    let text = "<start> ::= <a>\nwhere forall <x> in <a>:\n    f(<x>,\n  1)\n\n    # still the block\n    and True\nwhere a \\\n  == b # comment\n<a> ::= \"x\"\ndef f(x):\n    where = 1\n    return x\nminimizing |<a>|\n\"\"\"\nwhere not a constraint\n\"\"\"\nmaximizing 1\n";
    let found: Vec<(BlockKind, &str)> = blocks(text)
        .into_iter()
        .map(|b| (b.kind, &text[b.span.range()]))
        .collect();
    assert_eq!(
        found,
        [
            (
                BlockKind::Where,
                "where forall <x> in <a>:\n    f(<x>,\n  1)\n\n    # still the block\n    and True"
            ),
            (BlockKind::Where, "where a \\\n  == b"),
            (BlockKind::Minimizing, "minimizing |<a>|"),
            (BlockKind::Maximizing, "maximizing 1"),
        ]
    );
}

#[test]
fn the_bundled_specs_are_isla_and_fandango_style_blocks_are_fandango() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bnf") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for b in blocks(&text)
            .into_iter()
            .filter(|b| b.kind == BlockKind::Where)
        {
            seen += 1;
            assert_eq!(
                dialect(&text, b.span),
                Dialect::Isla,
                "{}: {}",
                path.display(),
                &text[b.span.range()]
            );
        }
    }
    assert!(seen >= 10, "{seen} blocks");
    for fandango in [
        "where forall <r1> in <record>:\n    forall <r2> in <record>:\n        |<r1>.<fields>.<field>| == |<r2>.<fields>.<field>|",
        "where forall <b> in <items>:\n    len(str(<b>.<item>.<title>)) <= len(str(<b>.<item>.<line>))",
        "where forall <u> in <use>:\n    exists <d> in <decl>:\n        str(<d>.<id>) == str(<id>) and before(<start>, <d>, <u>)",
        "where forall <e> in <entry>:\n    int(str(<e>.<header>.<size>), 8) >= 10",
        "where forall <t> in <tree>:\n    <t>.<open>.<id> == <t>.<close>.<id>",
        "where forall <o> in <tree>.<open>:\n    forall <a1> in <o>..<attr>:\n        (not(<a1> != <a1>) or (str(<a1>.<id>) != \"x\"))",
        "where int(<age>) > 20",
        "where <length> == uint16(len(bytes(<content>)))",
    ] {
        assert_eq!(
            dialect(fandango, Span::new(0, fandango.len())),
            Dialect::Fandango,
            "{fandango}"
        );
    }
    for isla in [
        "where forall <a> x in start: str.len(x) > 2",
        "where str.len(<a>) > 2",
        "where forall <a> in <b>: (= <a> \"x\")",
        "where exists int n: count(start, \"<a>\", n)",
        "where forall <a> x=\"{<b> y}\": y = \"1\"",
    ] {
        assert_eq!(
            dialect(isla, Span::new(0, isla.len())),
            Dialect::Isla,
            "{isla}"
        );
    }
}

#[test]
fn hostile_text_is_an_error_not_a_panic() {
    const FRAGMENTS: &[&str] = &[
        "<word>",
        "<letter>",
        "<x>",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "*",
        "**",
        "|",
        ".",
        "..",
        ":",
        ",",
        "forall",
        "exists",
        "in",
        "any",
        "all",
        "for",
        "if",
        "else",
        "not",
        "and",
        "or",
        "lambda",
        "->",
        ";",
        "==",
        "<",
        ">",
        "<=",
        "!=",
        "<>",
        "+",
        "-",
        "//",
        "%",
        "1",
        "0x1F",
        "007",
        "1.5",
        "\"a\"",
        "'b'",
        "b\"\\xff\"",
        "f\"{",
        "f\"{<word>}\"",
        "}\"",
        "\"",
        "'''",
        "\\",
        "\n",
        "\n    ",
        "\n  ",
        "#c\n",
        " ",
        "str",
        "int",
        "len",
        "é",
        "€",
        "\t",
        "=",
        ":=",
        "...",
        "@",
        "~",
        "^",
        "&",
        "<<",
        "x",
        "_fan0",
        "\r\n",
    ];
    let spec = spec(WORDS);
    let h: SharedHost = host(|_, _, _| Ok(true));
    let mut state = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = (next() % 12) as usize + 1;
        let text: String = (0..len)
            .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(if next() % 3 == 0 { "" } else { " " });
        let source = Arc::new(SourceFile::new("t.fan", text.clone()));
        let span = Span::new(0, text.len());
        let _ = from_fandango(&spec.grammar, Some(h.clone()), source.clone(), span);
        let _ = Compiler::new(&spec.grammar, None).goal(source, span, Some(true));
        let _ = dialect(&text, span);
        let _ = blocks(&text);
    }
    // Deep nesting is refused, not a stack overflow.
    let deep = format!("{}1{} == 1", "(".repeat(5000), ")".repeat(5000));
    let e = compile(&spec, &deep, None).unwrap_err();
    assert!(
        e.diagnostics[0].message.contains("nest"),
        "{}",
        e.diagnostics[0].message
    );
}

#[test]
fn is_before_and_is_after_are_native_document_order() {
    // Declarations before uses, as Fandango's scriptsizec spec asks.
    let spec = spec(
        r#"<start> ::= <stmt>+
<stmt> ::= <decl> | <use>
<decl> ::= "int " <id> ";"
<use> ::= <id> ";"
<id> ::= "a" | "b"
"#,
    );
    let text = "forall <u> in <use>: exists <d> in <decl>: \
                str(<d>.<id>) == str(<u>.<id>) and is_before(<start>, <d>, <u>)";
    let c = compile(&spec, text, None).unwrap();
    assert!(c.native, "is_before over trees needs no Python");
    assert!(holds(&spec, &c, "int a;a;"));
    assert!(!holds(&spec, &c, "a;int a;"));
    assert!(!holds(&spec, &c, "int b;a;"));
    // An ancestor comes before its descendants in document order.
    let nested = compile(
        &spec,
        "forall <d> in <decl>: is_before(<start>, <d>, <d>.<id>)",
        None,
    )
    .unwrap();
    assert!(holds(&spec, &nested, "int a;int b;"));
    // `is_after(t, a, b)` is `is_before(t, b, a)`; outside the scope, neither holds.
    let after = compile(
        &spec,
        "forall <s> in <stmt>: forall <u> in <s>.<use>: forall <d> in <decl>: \
         is_after(<s>, <u>, <d>)",
        None,
    )
    .unwrap();
    assert!(after.native);
    assert!(
        !holds(&spec, &after, "int a;a;"),
        "the declaration is outside <s>"
    );
    assert!(holds(&spec, &after, "a;"), "no declaration at all");
}

#[test]
fn a_function_the_spec_defines_is_called_in_python() {
    let spec = spec(WORDS);
    let text = "is_before(<start>, <word>, <letter>) and len(str(<word>)) > 0";
    for (code, native) in [
        ("import random\n", true),
        ("def is_before(tree, a, b):\n    return True\n", false),
        ("from mymod import is_before as other, len\n", false),
        ("is_before = lambda t, a, b: True\n", false),
        ("if is_before == None:\n    pass\n", true),
    ] {
        let source = Arc::new(SourceFile::new("t.fan", text));
        let host = host(|_, _, _| Ok(true));
        let c = Compiler::new(&spec.grammar, Some(host))
            .with_spec_python([code])
            .constraint(source, Span::new(0, text.len()))
            .unwrap();
        assert_eq!(c.native, native, "with the code {code:?}");
    }
}
