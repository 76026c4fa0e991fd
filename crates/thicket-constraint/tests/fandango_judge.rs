//! Fandango constraints, checked by thicket and judged by Fandango itself.
//!
//! Each case is a small spec written for this test (in the style of Fandango's
//! evaluation specs) with inputs and the verdicts expected. thicket's verdicts must
//! match them; when Fandango is installed (`fandango` on the `PATH`, or the path in
//! `THICKET_FANDANGO`), `fandango parse --validate` must agree as well. Without
//! Fandango the judge is skipped with a message, unless `THICKET_REQUIRE_FANDANGO=1`.
//! Host atoms are evaluated by a fake host written in Rust for the few Python
//! expressions the specs use.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use thicket_constraint::fandango::{BlockKind, Compiler, blocks};
use thicket_constraint::host::{Host, HostArg, HostError, HostExpr};
use thicket_constraint::{Checker, TreeView};
use thicket_grammar::{Grammar, SourceFile};
use thicket_tree::DerivationTree;

struct Case {
    name: &'static str,
    grammar: &'static str,
    /// Python code for Fandango (thicket's fake host implements it).
    python: &'static str,
    constraints: &'static str,
    /// Inputs and whether they satisfy every constraint.
    inputs: &'static [(&'static str, bool)],
    /// Whether every constraint is native.
    native: bool,
}

const VALUES: &str = r#"<start> ::= <a> ":" <b>
<a> ::= <digit>+
<b> ::= <letter>*
<digit> ::= "0" | "1" | "2" | "3"
<letter> ::= "x" | "y"
"#;

const CASES: &[Case] = &[
    Case {
        name: "underline at least as long as the title (rest)",
        grammar: r#"<start> ::= <section>+
<section> ::= <title> "\n" <underline> "\n"
<title> ::= <letter>+
<underline> ::= "="+
<letter> ::= "a" | "b"
"#,
        python: "",
        constraints: r#"
where forall <s> in <section>:
    len(str(<s>.<title>)) <= len(str(<s>.<underline>))
"#,
        inputs: &[
            ("ab\n==\n", true),
            ("ab\n=\n", false),
            ("a\n==\nab\n=\n", false),
            ("b\n===\n", true),
        ],
        native: true,
    },
    Case {
        name: "declared before use (is_before over the root, scriptsizec)",
        grammar: r#"<start> ::= <stmt>+
<stmt> ::= <decl> | <use>
<decl> ::= "int " <id> ";"
<use> ::= <id> ";"
<id> ::= "a" | "b"
"#,
        python: "",
        constraints: r#"
where forall <u> in <use>:
    exists <d> in <decl>:
        str(<d>.<id>) == str(<u>.<id>) and is_before(<start>, <d>, <u>)
"#,
        inputs: &[
            ("int a;a;", true),
            ("a;int a;", false),
            ("int b;a;", false),
            ("int a;int b;b;a;", true),
            ("int b;", true),
        ],
        native: true,
    },
    Case {
        name: "every use has a definition (exists, free selectors)",
        grammar: r#"<start> ::= <line>+
<line> ::= <define> "\n" | <use> "\n"
<define> ::= "def " <id>
<use> ::= "use " <id>
<id> ::= "x" | "y" | "z"
"#,
        python: "",
        constraints: r#"
where forall <u> in <use>:
    exists <d> in <define>:
        str(<d>.<id>) == str(<u>.<id>)
"#,
        inputs: &[
            ("def x\nuse x\n", true),
            ("def x\nuse y\n", false),
            ("use x\n", false),
            ("def y\n", true),
            ("use z\ndef z\n", true),
        ],
        native: true,
    },
    Case {
        name: "tags are balanced (tree equality, xml)",
        grammar: r#"<start> ::= <elem>
<elem> ::= <open> <inner> <close>
<inner> ::= <elem> | <text>
<open> ::= "<" <id> ">"
<close> ::= "</" <id> ">"
<id> ::= <l>+
<l> ::= "a" | "b"
<text> ::= "t"+
"#,
        python: "",
        constraints: r#"
where forall <e> in <elem>:
    <e>.<open>.<id> == <e>.<close>.<id>
"#,
        inputs: &[
            ("<a>t</a>", true),
            ("<a><b>t</b></a>", true),
            ("<a><b>t</a></b>", false),
            ("<ab>t</a>", false),
        ],
        native: true,
    },
    Case {
        name: "no attribute twice, unless the same (.., nested forall, !=)",
        grammar: r#"<start> ::= <tag>+
<tag> ::= "<" <id> <attrs> ">"
<attrs> ::= <attr>*
<attr> ::= " " <id> "=" <val>
<id> ::= "a" | "b" | "c"
<val> ::= "1" | "2"
"#,
        python: "",
        constraints: r#"
where forall <t> in <tag>:
    forall <a1> in <t>..<attr>:
        forall <a2> in <t>..<attr>:
            (not(<a1> != <a2>) or (str(<a1>.<id>) != str(<a2>.<id>)))
"#,
        inputs: &[
            ("<a b=1 c=2>", true),
            ("<a b=1 b=2>", false),
            // Structurally equal attributes are `==` in Fandango: allowed.
            ("<a b=1 b=1>", true),
            ("<a><b c=1 a=2 c=2>", false),
        ],
        native: true,
    },
    Case {
        name: "no declaration twice (scriptsizec's, tree ==)",
        grammar: r#"<start> ::= <decl>+
<decl> ::= "int " <id> ";"
<id> ::= "a" | "b" | "c"
"#,
        python: "",
        constraints: r#"
where forall <d1> in <decl>:
    forall <d2> in <decl>:
        not(str(<d1>.<id>) == str(<d2>.<id>)) or <d1> == <d2>
"#,
        inputs: &[
            ("int a;int b;", true),
            // Two declarations with the same text are equal trees.
            ("int a;int a;", true),
            ("int c;", true),
        ],
        native: true,
    },
    Case {
        name: "same number of fields in every record (csv, |..|, all children)",
        grammar: r#"<start> ::= <record>+
<record> ::= <fields> "\n"
<fields> ::= <field> ("," <field>)*
<field> ::= <letter>+
<letter> ::= "a" | "b" | "c"
"#,
        python: "",
        constraints: r#"
where forall <r1> in <record>:
    forall <r2> in <record>:
        |<r1>.<fields>.<field>| == |<r2>.<fields>.<field>|
"#,
        inputs: &[
            ("ab,c\nb,a\n", true),
            ("ab,c\nb\n", false),
            ("a\n", true),
            ("a,b,c\nc,b,a\nb,b\n", false),
        ],
        native: true,
    },
    Case {
        name: "a side that raises skips the combination (comparison)",
        grammar: r#"<start> ::= <num> "," <num>
<num> ::= <digit>*
<digit> ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
"#,
        python: "",
        constraints: r#"
where int(str(<num>)) % 7 != 3
"#,
        inputs: &[
            (",10", false),
            ("1,2", true),
            (",4", true),
            (",", true),
            ("17,3", false),
        ],
        native: true,
    },
    Case {
        name: "an exception makes an expression false",
        grammar: r#"<start> ::= <num> "," <num>
<num> ::= <digit>*
<digit> ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
"#,
        python: "",
        constraints: r#"
where not int(str(<num>)) == 5
"#,
        inputs: &[
            (",1", false),
            ("1,2", true),
            ("5,1", false),
            ("12,012", true),
        ],
        native: true,
    },
    Case {
        name: "int() of a tree without terminals is 0; of an empty terminal, an error",
        grammar: r#"<start> ::= <num> "," <word>
<num> ::= <digit>*
<word> ::= <digit>+ | ""
<digit> ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
"#,
        python: "",
        constraints: r#"
where not int(<num>) == 0
where not int(<word>) == 0
"#,
        inputs: &[
            (",5", false),
            ("3,5", true),
            ("3,", false),
            ("3,0", false),
            ("12,3", true),
        ],
        native: true,
    },
    Case {
        name: "counts with |..| and len(*..), chains",
        grammar: r#"<start> ::= <xs> ";" <ys>
<xs> ::= <x>*
<ys> ::= <y>*
<x> ::= "x"
<y> ::= "y"
"#,
        python: "",
        constraints: r#"
where |<xs>..<x>| == len(*<ys>.<y>)
where 0 < |<x>| <= 3
"#,
        inputs: &[
            ("xx;yy", true),
            ("x;yy", false),
            (";", false),
            ("xxxx;yyyy", false),
            ("xxx;yyy", true),
        ],
        native: true,
    },
    Case {
        name: "all/any comprehensions over *SEL",
        grammar: r#"<start> ::= <word> (" " <word>)*
<word> ::= <letter>+
<letter> ::= "a" | "b" | "c"
"#,
        python: "",
        constraints: r#"
where all(str(c) != "b" for c in *<word>..<letter>)
where any(<w> == "ca" for <w> in *<word>)
where all(len(str(w)) < 4 for w in *<word>) and True
"#,
        inputs: &[
            ("ca", true),
            ("ca ab", false),
            ("ac aa", false),
            ("aaaa ca", false),
            ("cc ca a", true),
        ],
        native: true,
    },
    Case {
        name: "or, string functions",
        grammar: r#"<start> ::= <first> ":" <second>
<first> ::= <letter>+
<second> ::= <letter>+
<letter> ::= "a" | "b" | "c"
"#,
        python: "",
        constraints: r#"
where str(<first>) != "a" or str(<second>) == "b"
where str(<second>).startswith("b") or "c" in str(<first>)
where str(<first>)[0] != "b" and str(<second>)[1:3] != "cc"
"#,
        inputs: &[
            ("a:b", true),
            ("a:c", false),
            ("c:a", true),
            ("ab:bacc", true),
            ("ab:bcc", false),
            ("ba:b", false),
        ],
        native: true,
    },
    Case {
        name: "free selectors: every occurrence on its own",
        grammar: r#"<start> ::= <a> "=" <a>
<a> ::= <c>+
<c> ::= "1" | "2"
"#,
        python: "",
        constraints: r#"
where str(<a>) == str(<a>)
where <a> > 1 and <a> != 22
"#,
        inputs: &[
            ("12=12", true),
            ("1=1", false),
            ("12=21", false),
            ("22=22", false),
        ],
        native: true,
    },
    Case {
        name: "text operations: +, f-strings, in a tuple, len",
        grammar: VALUES,
        python: "",
        constraints: r#"
where str(<b>) + str(<a>) != "x1" and f"{<a>}-{<b>}" != "2-y"
where str(<b>) in ("xx", "y", "") or len(str(<b>)) > 2
"#,
        inputs: &[
            ("1:x", false),
            ("2:y", false),
            ("3:xx", true),
            ("3:xy", false),
            ("3:xyx", true),
            ("3:", true),
        ],
        native: true,
    },
    Case {
        name: "arithmetic on trees, and an exception under and/not",
        grammar: VALUES,
        python: "",
        constraints: r#"
where int(<a>) - 1 != 0
where not (int(str(<a>)[5:]) > 0 and False)
"#,
        inputs: &[
            ("1:x", false),
            ("2:x", false),
            ("123012:x", true),
            ("1230120:", true),
            ("100000:y", true),
        ],
        native: true,
    },
    Case {
        name: "ordering trees, value(), bool(), max()",
        grammar: VALUES,
        python: "",
        constraints: r#"
where <b> < <a> or max(int(<a>), 2) == 3
where <a>.value() != "0" and bool(str(<b>))
"#,
        inputs: &[
            ("3:x", true),
            ("1:x", false),
            ("3:", false),
            ("0:", false),
            ("13:y", false),
        ],
        native: true,
    },
    Case {
        name: "the spec's own function (host)",
        grammar: r#"<start> ::= <stmt>+
<stmt> ::= <decl> | <use>
<decl> ::= "int " <id> ";"
<use> ::= "print " <id> ";"
<id> ::= "a" | "b"
"#,
        python: r#"
def declared_before(decl, use):
    return decl.get_root().get_index(decl) < use.get_root().get_index(use)
"#,
        constraints: r#"
where forall <u> in <use>:
    exists <d> in <decl>:
        str(<d>.<id>) == str(<u>.<id>) and declared_before(<d>, <u>)
"#,
        inputs: &[
            ("int a;print a;", true),
            ("print a;int a;", false),
            ("int b;print a;", false),
            ("int a;int b;print b;print a;", true),
        ],
        native: false,
    },
    Case {
        name: "octal sizes (int with a base, host) and children by index",
        grammar: r#"<start> ::= <size> ":" <name>
<size> ::= <octal> <octal> <octal>
<octal> ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7"
<name> ::= <letter>+
<letter> ::= "C" | "h" | "x"
"#,
        python: "",
        constraints: r#"
where int(str(<size>), 8) >= 10
where <name>[0] == "C"
"#,
        inputs: &[
            ("012:Ch", true),
            ("011:Ch", false),
            ("777:hC", false),
            ("100:C", true),
        ],
        native: false,
    },
];

/// The host for the Python expressions of [`CASES`].
struct FakeHost;

impl Host for FakeHost {
    fn eval_bool(
        &self,
        expr: &HostExpr,
        tree: &DerivationTree,
        grammar: &Grammar,
        args: &[HostArg],
    ) -> Result<bool, HostError> {
        let node = |i: usize| match &args[i] {
            HostArg::Tree(n) => *n,
            other => panic!("a tree argument, not {other:?}"),
        };
        let text = |i: usize| String::from_utf8_lossy(tree.text(node(i))).into_owned();
        let view = TreeView::new(tree, grammar);
        match expr.source.as_str() {
            "declared_before(_fan2, _fan3)" | "declared_before(_fan0, _fan1)" => {
                Ok(node(0).index() < node(1).index())
            }
            s if s.starts_with("(int(str(") && s.contains("), 8)) >= (10)") => {
                i64::from_str_radix(text(0).trim(), 8)
                    .map(|v| v >= 10)
                    .map_err(|e| HostError {
                        message: e.to_string(),
                    })
            }
            s if s.ends_with("is None or True") => Ok(true),
            s if s.ends_with("[0]) == (\"C\")") => {
                let first = view.children(node(0)).next();
                Ok(first.is_some_and(|c| tree.text(c) == b"C"))
            }
            other => Err(HostError {
                message: format!("the fake host does not know `{other}`"),
            }),
        }
    }
}

/// The spec Fandango reads: grammar, Python code, constraints.
fn spec_text(case: &Case) -> String {
    format!("{}{}{}", case.grammar, case.python, case.constraints)
}

/// thicket's verdict on each input.
fn thicket_verdicts(case: &Case) -> Vec<bool> {
    let spec =
        thicket_grammar::load_spec_bytes("case.fan", case.grammar.as_bytes(), &Default::default())
            .unwrap_or_else(|e| panic!("{}: {}", case.name, e.render()));
    let text = spec_text(case);
    let source = Arc::new(SourceFile::new("case.fan", text.clone()));
    let compiler = Compiler::new(&spec.grammar, Some(Arc::new(FakeHost)));
    let mut constraints = Vec::new();
    for block in blocks(&text) {
        assert_eq!(block.kind, BlockKind::Where);
        let c = compiler
            .constraint(source.clone(), block.span)
            .unwrap_or_else(|e| panic!("{}: {}", case.name, e.render()));
        assert!(c.warnings.is_empty(), "{}: {:?}", case.name, c.warnings);
        constraints.push(c);
    }
    assert_eq!(
        constraints.iter().all(|c| c.native),
        case.native,
        "{}: native?",
        case.name
    );
    let checker = Checker::new(
        &spec.grammar,
        constraints.into_iter().map(|c| c.constraint).collect(),
    );
    let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
    case.inputs
        .iter()
        .map(|(input, _)| {
            let tree = parser
                .parse(input.as_bytes())
                .unwrap_or_else(|e| panic!("{}: {input:?} does not parse: {e:?}", case.name))
                .tree();
            checker.check(&tree).is_empty()
        })
        .collect()
}

#[test]
fn thicket_agrees_with_the_expected_verdicts() {
    for case in CASES {
        let expected: Vec<bool> = case.inputs.iter().map(|(_, v)| *v).collect();
        assert_eq!(thicket_verdicts(case), expected, "{}", case.name);
    }
}

fn fandango() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("THICKET_FANDANGO") {
        return Some(PathBuf::from(path));
    }
    let found = Command::new("fandango")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    found.then(|| PathBuf::from("fandango"))
}

/// Fandango's verdicts: whether `fandango parse --validate` accepts each input (one
/// run per input: its messages do not say which input failed).
fn fandango_verdicts(fandango: &PathBuf, case: &Case, dir: &std::path::Path) -> Vec<bool> {
    let spec = dir.join("case.fan");
    std::fs::write(&spec, spec_text(case)).unwrap();
    let run = |i: usize, input: &str| {
        let path = dir.join(format!("input{i}.txt"));
        std::fs::write(&path, input).unwrap();
        let output = Command::new(fandango)
            .args(["parse", "-f"])
            .arg(&spec)
            .arg("--validate")
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", fandango.display()));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() || stderr.contains("Did not match") || stderr.contains("Error"),
            "{}: Fandango failed on {input:?}: {stderr}",
            case.name
        );
        assert!(
            !stderr.contains("during parsing")
                || stderr.contains("Did not match")
                || output.status.success(),
            "{}: Fandango cannot parse {input:?}: {stderr}",
            case.name
        );
        output.status.success()
    };
    // Two at a time: each run starts a Python interpreter.
    std::thread::scope(|scope| {
        let handles: Vec<_> = case
            .inputs
            .iter()
            .enumerate()
            .collect::<Vec<_>>()
            .chunks(case.inputs.len().div_ceil(2))
            .map(|chunk| {
                let chunk = chunk.to_vec();
                scope.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|(i, (input, _))| run(i, input))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

#[test]
fn fandango_agrees() {
    let Some(fandango) = fandango() else {
        if std::env::var("THICKET_REQUIRE_FANDANGO").as_deref() == Ok("1") {
            panic!(
                "THICKET_REQUIRE_FANDANGO=1 but Fandango is not installed (set THICKET_FANDANGO)"
            );
        }
        eprintln!(
            "skipping the Fandango judge: `fandango` is not on the PATH and THICKET_FANDANGO is not set"
        );
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    for case in CASES {
        let expected: Vec<bool> = case.inputs.iter().map(|(_, v)| *v).collect();
        let judged = fandango_verdicts(&fandango, case, &dir);
        assert_eq!(judged, expected, "Fandango's verdicts on {}", case.name);
        assert_eq!(thicket_verdicts(case), judged, "{}", case.name);
    }
}
