//! The Python host against a real interpreter: the tree object specs see, bindings,
//! the spec's globals, errors, time-outs, judging, generators and threads.
//!
//! These tests need `python3` (or `$THICKET_PYTHON`); without it they print that they
//! are skipped, unless `THICKET_REQUIRE_PYTHON=1` (set by CI) makes that a failure.

use std::sync::Arc;
use std::time::{Duration, Instant};
use thicket_grammar::{Expr, Grammar, load_spec_text};
use thicket_parse::{ParseConfig, Parser};
use thicket_python::{
    CodeBlock, GeneratorCall, Host, HostArg, HostExpr, Joint, PyValue, PythonConfig, PythonHost,
    Source, StartError, TerminalKind,
};
use thicket_tree::{DerivationTree, NodeId};

/// Whether the interpreter runs; a failure under `THICKET_REQUIRE_PYTHON=1`.
fn have_python() -> bool {
    let python = PythonConfig::default().python;
    let ok = std::process::Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("THICKET_REQUIRE_PYTHON").is_some_and(|v| v == "1") {
            panic!(
                "{} does not run but THICKET_REQUIRE_PYTHON=1",
                python.display()
            );
        }
        eprintln!("\n*** SKIPPED: {} does not run ***\n", python.display());
    }
    ok
}

fn grammar(spec: &str) -> Grammar {
    load_spec_text("test.fan", spec.as_bytes()).expect("a valid spec")
}

fn parse(grammar: &Grammar, text: &str) -> DerivationTree {
    parse_bytes(grammar, text.as_bytes())
}

fn parse_bytes(grammar: &Grammar, text: &[u8]) -> DerivationTree {
    let parser = Parser::new(grammar, ParseConfig::default()).expect("a parser");
    parser.parse(text).expect("the text parses").tree()
}

/// The rule nodes named `name`, in preorder.
fn nodes(grammar: &Grammar, tree: &DerivationTree, name: &str) -> Vec<NodeId> {
    tree.descendants(tree.root())
        .filter(|&n| match grammar.expr(tree.expr(n)) {
            Expr::Ref(s) => grammar.rule(*s).name == name,
            _ => false,
        })
        .collect()
}

fn expr(source: &str, params: &[&str]) -> HostExpr {
    HostExpr {
        source: source.to_string(),
        params: params.iter().map(|p| p.to_string()).collect(),
    }
}

fn host(blocks: Vec<CodeBlock>) -> PythonHost {
    host_with(blocks, PythonConfig::default())
}

fn host_with(blocks: Vec<CodeBlock>, config: PythonConfig) -> PythonHost {
    match PythonHost::new(blocks, config) {
        Ok(host) => host,
        Err(e) => panic!("cannot start the host: {e}"),
    }
}

const PAIRS: &str = r#"
<start> ::= <pair> ("," <pair>)*
<pair>  ::= <key> "=" <num>
<key>   ::= r"[a-z]+"
<num>   ::= <digit>+
<digit> ::= r"[0-9]"
"#;

/// Asserts that each expression over `t` (the first `<pair>` of `text`) is True.
fn assert_all_true(host: &PythonHost, text: &str, checks: &[&str]) {
    let g = grammar(PAIRS);
    let tree = parse(&g, text);
    let pair = nodes(&g, &tree, "pair")[0];
    for check in checks {
        let got = host.eval_bool(&expr(check, &["t"]), &tree, &g, &[HostArg::Tree(pair)]);
        assert_eq!(got, Ok(true), "{check}");
    }
}

#[test]
fn the_tree_object_behaves_as_fandangos() {
    if !have_python() {
        return;
    }
    let host = host(Vec::new());
    assert_all_true(
        &host,
        "ab=12,c=3",
        &[
            // Text and conversions.
            "str(t) == 'ab=12'",
            "bytes(t) == b'ab=12'",
            "t.to_string() == 'ab=12' and t.to_bytes() == b'ab=12'",
            "int(t[2]) == 12 and t[2].to_int() == 12 and float(t[2]) == 12.0",
            "t[2] == 12 and t[2] != 13 and t == 'ab=12' and t == b'ab=12'",
            "isinstance(t.value(), type(t.value())) and str(t.value()) == 'ab=12'",
            "t[1].value() == '=' and t[1].to_bits() == '00111101'",
            // Shape: children are the symbols of the alternative, groups flattened.
            "len(t) == 3 and len(t.children) == 3 and len(t.children()) == 3",
            "[c.symbol.name() for c in t.children if c.is_non_terminal] == ['<key>', '<num>']",
            "str(t.symbol) == '<pair>' and t.symbol.name() == '<pair>'",
            "t[1].is_terminal and t[1].is_terminal() and not t.is_terminal",
            "t.is_nonterminal() and t[0].is_non_terminal",
            "[str(c) for c in t] == ['ab', '=', '12']",
            "str(t[-1]) == '12' and str(t[0:2]) == 'ab=' and len(t[1:]) == 2",
            "len(t[2]) == 2 and [str(d) for d in t[2]] == ['1', '2']",
            // The whole tree through parents.
            "t.parent.symbol.name() == '<start>' and t.parent() is t.parent",
            "len(t.parent) == 3 and str(t.parent) == 'ab=12,c=3'",
            "t.get_root().parent is None and str(t.get_root()) == 'ab=12,c=3'",
            "t[2][0].parent.parent == t",
            "[str(p) for p in t.parent.find_all_trees('<pair>')] == ['ab=12', 'c=3']",
            "[str(d) for d in t.find_subtrees(NonTerminal('<digit>'))] == ['1', '2']",
            "len(t.descendants()) == 8 and t.get_index(t[2]) == 4",
            // Methods of str applied to the value.
            "t.startswith('ab') and t.endswith('12') and t.upper() == 'AB=12'",
            "t + '!' == 'ab=12!' and 'b=1' in t and t.find('=') == 2",
            "t[2] < 13 and t[2] >= 12 and t.split('=') == ['ab', '12']",
            "isinstance(t, DerivationTree) and repr(t).startswith('DerivationTree(<pair>')",
        ],
    );
}

#[test]
fn trees_are_equal_by_structure_and_hash_alike() {
    if !have_python() {
        return;
    }
    let host = host(Vec::new());
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1,a=1,a=2");
    let pairs = nodes(&g, &tree, "pair");
    let check = |source: &str, a: usize, b: usize| {
        host.eval_bool(
            &expr(source, &["x", "y"]),
            &tree,
            &g,
            &[HostArg::Tree(pairs[a]), HostArg::Tree(pairs[b])],
        )
    };
    assert_eq!(
        check("x == y and hash(x) == hash(y) and x is not y", 0, 1),
        Ok(true)
    );
    assert_eq!(
        check("x != y and x[2] != y[2] and x[0] == y[0]", 0, 2),
        Ok(true)
    );
    assert_eq!(check("len({x, y}) == 1", 0, 1), Ok(true));
    // A tree built in Python equals one thicket sent when symbols and values agree.
    assert_eq!(
        check(
            "x[0][0] == DerivationTree(x[0][0].symbol) and x[0] == DerivationTree(NonTerminal('<key>'), [DerivationTree(x[0][0].symbol)])",
            0,
            0
        ),
        Ok(true)
    );
}

#[test]
fn bindings_of_every_kind() {
    if !have_python() {
        return;
    }
    let host = host(Vec::new());
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1,bb=22,ccc=333");
    let keys = nodes(&g, &tree, "key");
    let nums = nodes(&g, &tree, "num");
    let e = expr(
        "[str(k) for k in ks] == ['a', 'bb', 'ccc'] and n == 3 and int(first) == 1",
        &["ks", "n", "first"],
    );
    let args = [
        HostArg::Trees(keys.clone()),
        HostArg::Int(3),
        HostArg::Tree(nums[0]),
    ];
    assert_eq!(host.eval_bool(&e, &tree, &g, &args), Ok(true));

    // Many bindings in one round trip, each judged alone.
    let e = expr("len(str(k)) == int(n)", &["k", "n"]);
    let bindings: Vec<Vec<HostArg>> = (0..3)
        .map(|i| {
            vec![
                HostArg::Tree(keys[i]),
                HostArg::Int(if i == 1 { 5 } else { i as i64 + 1 }),
            ]
        })
        .collect();
    let e2 = expr("len(str(k)) == n", &["k", "n"]);
    assert_eq!(
        host.eval_bool_many(&e2, &tree, &g, &bindings),
        vec![Ok(true), Ok(false), Ok(true)]
    );
    // A wrong argument count or a node that is not a rule node is an error, not a
    // guess.
    assert!(host.eval_bool(&e, &tree, &g, &[]).is_err());
    let synthetic = tree
        .descendants(tree.root())
        .find(|&n| matches!(g.expr(tree.expr(n)), Expr::Repeat(_)))
        .unwrap();
    let err = host
        .eval_bool(
            &expr("True", &["x"]),
            &tree,
            &g,
            &[HostArg::Tree(synthetic)],
        )
        .unwrap_err();
    assert!(err.message.contains("not a rule or terminal node"), "{err}");
}

#[test]
fn bytes_and_bits() {
    if !have_python() {
        return;
    }
    let g = grammar(
        r#"
<start> ::= <bits> <blob>
<bits>  ::= <bit>{8}
<bit>   ::= "0" | "1"
<blob>  ::= b"\xff\x00" "AB"
"#,
    );
    let mut kinds = vec![TerminalKind::Auto; g.expr_count()];
    for id in g.expr_ids() {
        if let Expr::Literal(bytes) = g.expr(id) {
            kinds[id.index()] = match &bytes[..] {
                b"0" | b"1" => TerminalKind::Bit,
                _ => TerminalKind::Bytes,
            };
        }
    }
    let config = PythonConfig {
        terminal_kinds: kinds,
        ..PythonConfig::default()
    };
    let typed = host_with(Vec::new(), config);
    let tree = parse_bytes(&g, b"01000001\xff\x00AB");
    let bits = nodes(&g, &tree, "bits")[0];
    let blob = nodes(&g, &tree, "blob")[0];
    let start = tree.root();
    for check in [
        "int(b) == 65 and b == 65 and b.to_bits() == '01000001' and bytes(b) == b'A'",
        "b.contains_bits() and not b.contains_bytes() and b[1].value() == 1 and len(b) == 8",
        "bytes(x) == b'\\xff\\x00AB' and x.value() == b'\\xff\\x00AB' and x == b'\\xff\\x00AB'",
        "str(x) == '\\xff\\x00AB' and x.contains_bytes() and x.startswith(b'\\xff')",
        "bytes(s) == b'A\\xff\\x00AB' and s.should_be_serialized_to_bytes()",
    ] {
        let e = expr(check, &["b", "x", "s"]);
        let args = [
            HostArg::Tree(bits),
            HostArg::Tree(blob),
            HostArg::Tree(start),
        ];
        assert_eq!(typed.eval_bool(&e, &tree, &g, &args), Ok(true), "{check}");
    }
    // Without kinds, a terminal is text if it is UTF-8, else bytes.
    let host = host(Vec::new());
    let e = expr(
        "x.value() == b'\\xff\\x00AB' and x[1].value() == 'AB'",
        &["x"],
    );
    assert_eq!(
        host.eval_bool(&e, &tree, &g, &[HostArg::Tree(blob)]),
        Ok(true)
    );
}

#[test]
fn globals_of_the_code_blocks() {
    if !have_python() {
        return;
    }
    let host = host(vec![
        CodeBlock::new(
            "spec.fan",
            3,
            "import base64\nfrom struct import pack\nLIMIT = 3\n\nclass Box:\n    def __init__(self, v):\n        self.v = v\n",
        ),
        CodeBlock::new(
            "spec.fan",
            20,
            "def short(s):\n    return len(s) <= LIMIT\n",
        ),
    ]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "abc=1,abcd=2");
    let keys = nodes(&g, &tree, "key");
    let e = expr(
        "short(str(k)) and Box(k).v is k and base64.b64encode(bytes(k)) == b'YWJj' and pack('<H', 1) == b'\\x01\\x00'",
        &["k"],
    );
    assert_eq!(
        host.eval_bool(&e, &tree, &g, &[HostArg::Tree(keys[0])]),
        Ok(true)
    );
    assert_eq!(
        host.eval_bool(
            &expr("short(str(k))", &["k"]),
            &tree,
            &g,
            &[HostArg::Tree(keys[1])]
        ),
        Ok(false)
    );
    // Fandango's helpers and the modules its namespace has without an import.
    let e = expr(
        "is_before(k.get_root(), k, n) and not is_after(k.get_root(), k, n) and re.fullmatch('[a-z]+', str(k)) is not None and bool(sys and os and time)",
        &["k", "n"],
    );
    let num = nodes(&g, &tree, "num")[0];
    assert_eq!(
        host.eval_bool(&e, &tree, &g, &[HostArg::Tree(keys[0]), HostArg::Tree(num)]),
        Ok(true)
    );
    // Comprehensions see the parameters (an expression is a function of them).
    let e = expr("all(len(str(x)) >= len(str(k)) for x in [k, k])", &["k"]);
    assert_eq!(
        host.eval_bool(&e, &tree, &g, &[HostArg::Tree(keys[0])]),
        Ok(true)
    );
    assert_eq!(host.eval_constant("LIMIT * 2"), Ok(PyValue::Int(6)));
}

#[test]
fn exceptions_name_the_spec_line() {
    if !have_python() {
        return;
    }
    let host = host(vec![CodeBlock::new(
        "dir/spec.fan",
        10,
        "def ratio(s):\n    n = len(s)\n    return 10 / (n - n)\n",
    )]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1");
    let key = nodes(&g, &tree, "key")[0];
    let err = host
        .eval_bool(
            &expr("ratio(str(k)) > 1", &["k"]),
            &tree,
            &g,
            &[HostArg::Tree(key)],
        )
        .unwrap_err();
    assert!(
        err.message.contains("ZeroDivisionError: division by zero"),
        "{err}"
    );
    assert!(
        err.message
            .contains("dir/spec.fan:12 in ratio: return 10 / (n - n)"),
        "{err}"
    );
    assert!(err.message.contains("`ratio(str(k)) > 1`"), "{err}");
    // An error in the expression itself, and one of syntax.
    let err = host
        .eval_bool(
            &expr("int(k) > 0", &["k"]),
            &tree,
            &g,
            &[HostArg::Tree(key)],
        )
        .unwrap_err();
    assert!(err.message.contains("ValueError"), "{err}");
    let err = host
        .eval_bool(&expr("k >", &["k"]), &tree, &g, &[HostArg::Tree(key)])
        .unwrap_err();
    assert!(err.message.contains("SyntaxError"), "{err}");
    // The host goes on.
    assert_eq!(
        host.eval_bool(&expr("k == 'a'", &["k"]), &tree, &g, &[HostArg::Tree(key)]),
        Ok(true)
    );
}

#[test]
fn only_truth_values_are_judged() {
    if !have_python() {
        return;
    }
    let host = host(vec![CodeBlock::new("spec.fan", 1, "import re\n")]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    let judge = |source: &str| host.eval_bool(&expr(source, &["k"]), &tree, &g, &key);
    assert_eq!(judge("None"), Ok(false));
    assert_eq!(judge("re.match('a', str(k))"), Ok(true));
    assert_eq!(judge("re.match('b', str(k))"), Ok(false));
    let err = judge("len(str(k)) + 1").unwrap_err();
    assert!(
        err.message.contains("returned int 3, not a truth value"),
        "{err}"
    );
    let err = judge("k").unwrap_err();
    assert!(err.message.contains("returned DerivationTree"), "{err}");
}

#[test]
fn values_of_expressions() {
    if !have_python() {
        return;
    }
    let host = host(Vec::new());
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=12");
    let num = [HostArg::Tree(nodes(&g, &tree, "num")[0])];
    let value = |source: &str| host.eval_value(&expr(source, &["n"]), &tree, &g, &num);
    assert_eq!(value("int(n) * 2"), Ok(PyValue::Int(24)));
    assert_eq!(value("-(2 ** 100)"), Ok(PyValue::Int(-(1i128 << 100))));
    assert_eq!(value("int(n) / 8"), Ok(PyValue::Float(1.5)));
    assert_eq!(value("str(n) + 'é'"), Ok(PyValue::Str("12é".into())));
    assert_eq!(value("bytes(n)"), Ok(PyValue::Bytes(b"12".to_vec())));
    assert_eq!(value("n.parent"), Ok(PyValue::Tree(b"ab=12".to_vec())));
    assert_eq!(value("None"), Ok(PyValue::None));
    assert_eq!(value("n == '12'"), Ok(PyValue::Bool(true)));
    let err = value("2 ** 200").unwrap_err();
    assert!(err.message.contains("does not fit in 128 bits"), "{err}");
    let err = value("[1, 2]").unwrap_err();
    assert!(err.message.contains("returned list [1, 2]"), "{err}");
}

#[test]
fn a_call_that_never_ends_times_out_and_the_next_one_works() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        call_timeout: Duration::from_millis(300),
        max_processes: 1,
        ..PythonConfig::default()
    };
    let host = host_with(
        vec![CodeBlock::new(
            "spec.fan",
            5,
            "def spin():\n    while True:\n        pass\n",
        )],
        config,
    );
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    let started = Instant::now();
    let err = host
        .eval_bool(&expr("spin()", &["k"]), &tree, &g, &key)
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.message.contains("did not finish within 300 ms"),
        "{err}"
    );
    assert!(
        err.message.contains("spec.fan:6 in spin") || err.message.contains("spec.fan:7 in spin"),
        "{err}"
    );
    assert_eq!(host.processes_started(), 1);
    assert_eq!(
        host.eval_bool(&expr("k == 'a'", &["k"]), &tree, &g, &key),
        Ok(true)
    );
    assert_eq!(
        host.processes_started(),
        2,
        "the stuck process was replaced"
    );

    // Code that never returns to the interpreter (a regex backtracking in C) is killed.
    let started = Instant::now();
    let err = host
        .eval_bool(
            &expr("re.match(r'(a+)+$', 'a' * 40 + 'b') is None", &["k"]),
            &tree,
            &g,
            &key,
        )
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.message.contains("did not finish within 300 ms"),
        "{err}"
    );
    // (Another expression: the one above is answered from the kept results.)
    assert_eq!(
        host.eval_bool(&expr("k != 'b'", &["k"]), &tree, &g, &key),
        Ok(true)
    );
    assert_eq!(host.processes_started(), 3);
}

#[test]
fn a_process_that_dies_is_replaced() {
    if !have_python() {
        return;
    }
    let host = host(vec![CodeBlock::new("spec.fan", 1, "import os\n")]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    let err = host
        .eval_bool(&expr("os._exit(3)", &["k"]), &tree, &g, &key)
        .unwrap_err();
    assert!(
        err.message.contains("ended during the call (exit code 3)"),
        "{err}"
    );
    assert_eq!(
        host.eval_bool(&expr("k == 'a'", &["k"]), &tree, &g, &key),
        Ok(true)
    );
}

#[test]
fn a_process_killed_while_idle_is_replaced_quietly() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        max_processes: 1,
        ..PythonConfig::default()
    };
    let host = host_with(Vec::new(), config);
    let suicide = "threading.Timer(0.05, lambda: os.kill(os.getpid(), 9)).start() is None";
    assert_eq!(host.eval_constant(suicide), Ok(PyValue::Bool(true)));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(host.eval_constant("1 + 1"), Ok(PyValue::Int(2)));
    assert_eq!(host.processes_started(), 2);
}

#[test]
fn prints_do_not_disturb_the_protocol() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        quiet: true,
        ..PythonConfig::default()
    };
    let host = host_with(
        vec![CodeBlock::new(
            "spec.fan",
            1,
            "import sys\nprint('loading')\n",
        )],
        config,
    );
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    let e = expr(
        "print('x' * 200000) is None and sys.stdout.write('y' * 100000) > 0 and sys.stderr.write('z') == 1",
        &["k"],
    );
    assert_eq!(host.eval_bool(&e, &tree, &g, &key), Ok(true));
}

#[test]
fn memory_is_limited() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        memory_limit: Some(1 << 30),
        ..PythonConfig::default()
    };
    let host = host_with(Vec::new(), config);
    let err = host.eval_constant("len(bytearray(2 ** 32))").unwrap_err();
    assert!(err.message.contains("MemoryError"), "{err}");
    assert_eq!(
        host.eval_constant("len(bytearray(2 ** 20))"),
        Ok(PyValue::Int(1 << 20))
    );
}

#[test]
fn broken_code_blocks_are_reported_at_their_line() {
    if !have_python() {
        return;
    }
    let err = PythonHost::new(
        vec![
            CodeBlock::new("spec.fan", 2, "x = 1\n"),
            CodeBlock::new("spec.fan", 8, "def f():\n    return (1 +\n"),
        ],
        PythonConfig::default(),
    )
    .err()
    .expect("a syntax error");
    match &err {
        StartError::CodeBlock {
            file,
            line,
            message,
            ..
        } => {
            assert_eq!(file, "spec.fan");
            assert!((9..=10).contains(line), "{err}");
            assert!(message.starts_with("SyntaxError"), "{err}");
        }
        other => panic!("not a code block error: {other}"),
    }
    assert!(err.to_string().starts_with("spec.fan:"), "{err}");

    let err = PythonHost::new(
        vec![CodeBlock::new(
            "other.fan",
            30,
            "import os\n\nvalue = undefined_name + 1\n",
        )],
        PythonConfig::default(),
    )
    .err()
    .expect("a NameError");
    assert!(
        err.to_string()
            .starts_with("other.fan:32: error in the spec's Python code: NameError"),
        "{err}"
    );
    assert!(
        err.to_string().contains("value = undefined_name + 1"),
        "{err}"
    );

    // Fandango's protocol parties are named as unsupported.
    let err = PythonHost::new(
        vec![CodeBlock::new(
            "p.fan",
            1,
            "class Client(NetworkParty):\n    pass\n",
        )],
        PythonConfig::default(),
    )
    .err()
    .expect("a NameError");
    assert!(
        err.to_string().contains("not supported by thicket"),
        "{err}"
    );
}

#[test]
fn a_missing_interpreter_is_named_with_the_remedy() {
    let config = PythonConfig {
        python: "/nonexistent/python3".into(),
        needed_for: "constraint `f(<x>)` at spec.fan:4".into(),
        ..PythonConfig::default()
    };
    let err = PythonHost::new(Vec::new(), config)
        .err()
        .expect("no interpreter");
    assert!(matches!(err, StartError::NoPython { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("constraint `f(<x>)` at spec.fan:4 needs Python 3"),
        "{message}"
    );
    assert!(message.contains("/nonexistent/python3"), "{message}");
    assert!(message.contains("THICKET_PYTHON"), "{message}");
}

#[test]
fn generators_are_reproducible_from_the_seed() {
    if !have_python() {
        return;
    }
    let blocks = vec![CodeBlock::new(
        "gen.fan",
        1,
        "import random, base64\nSTART = random.random()\ndef pick():\n    return str(random.randint(0, 10 ** 12))\n",
    )];
    let make = |seed: u64| {
        let host = host_with(
            blocks.clone(),
            PythonConfig {
                seed,
                ..PythonConfig::default()
            },
        );
        host.set_seed(seed);
        host
    };
    let a = make(7);
    let b = make(7);
    let pick = expr("pick()", &[]);
    let first = a.generate(&pick, &[], 1).unwrap();
    // The same call under the same seed gives the same value, whatever ran before.
    a.generate(&pick, &[], 2).unwrap();
    assert_eq!(a.generate(&pick, &[], 1).unwrap(), first);
    assert_eq!(b.generate(&pick, &[], 1).unwrap(), first);
    assert_ne!(a.generate(&pick, &[], 2).unwrap(), first);
    b.set_seed(8);
    assert_ne!(b.generate(&pick, &[], 1).unwrap(), first);
    // Code blocks run under the configured seed.
    assert_eq!(
        a.eval_constant("START").unwrap(),
        make(7).eval_constant("START").unwrap()
    );
    assert_ne!(
        a.eval_constant("START").unwrap(),
        make(9).eval_constant("START").unwrap()
    );

    // A generator over a source tree (`<item> ::= ... := base64.b64encode(bytes(<data>))`).
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=12");
    let key = nodes(&g, &tree, "key")[0];
    let e = expr("base64.b64encode(bytes(d))", &["d"]);
    let source = Source {
        tree: &tree,
        grammar: &g,
        node: key,
    };
    assert_eq!(
        a.generate(&e, &[source], 0),
        Ok(PyValue::Bytes(b"YWI=".to_vec()))
    );
    assert!(a.generate(&e, &[], 0).is_err());
}

#[test]
fn generator_calls_asked_together_give_what_each_gives_alone() {
    if !have_python() {
        return;
    }
    let blocks = vec![CodeBlock::new(
        "gen.fan",
        1,
        "import random\ndef pick(n):\n    return str(n) + ':' + str(random.randint(0, 10 ** 12))\n",
    )];
    let host = host_with(blocks, PythonConfig::default());
    host.set_seed(5);
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=12,cd=3");
    let keys = nodes(&g, &tree, "key");
    let pick = expr("pick(k)", &["k"]);
    let broken = expr("pick(k) + 1", &["k"]);
    let call = |e, node, call| GeneratorCall {
        expr: e,
        sources: vec![Source {
            tree: &tree,
            grammar: &g,
            node,
        }],
        call,
    };
    let calls = [
        call(&pick, keys[0], 3),
        call(&broken, keys[0], 4),
        call(&pick, keys[1], 5),
        call(&pick, keys[0], 3),
    ];
    let together = host.generate_many(&calls);
    assert_eq!(together.len(), 4);
    for (c, got) in calls.iter().zip(&together) {
        assert_eq!(got, &host.generate(c.expr, &c.sources, c.call));
    }
    assert!(matches!(&together[0], Ok(PyValue::Str(s)) if s.starts_with("ab:")));
    assert!(together[1].is_err(), "{:?}", together[1]);
    assert!(matches!(&together[2], Ok(PyValue::Str(s)) if s.starts_with("cd:")));
    assert_eq!(together[0], together[3]);
}

/// A host with one process, whose spec counts the calls of its functions.
fn counting_host() -> PythonHost {
    let blocks = vec![CodeBlock::new(
        "count.fan",
        1,
        "CALLS = [0]\n\
         def own(p):\n    CALLS[0] += 1\n    return str(p)\n\
         def outer(p):\n    CALLS[0] += 1\n    return str(p.parent)\n\
         def up_from_child(p):\n    CALLS[0] += 1\n    return str(p.children[0].parent.parent)\n\
         def root(p):\n    CALLS[0] += 1\n    return str(p.get_root())\n",
    )];
    host_with(
        blocks,
        PythonConfig {
            max_processes: 1,
            ..PythonConfig::default()
        },
    )
}

#[test]
fn a_result_is_kept_for_the_part_of_the_tree_its_call_read() {
    if !have_python() {
        return;
    }
    let host = counting_host();
    let g = grammar(PAIRS);
    let judge = |text: &str, source: &str| {
        let tree = parse(&g, text);
        let pair = nodes(&g, &tree, "pair")[0];
        host.eval_bool(&expr(source, &["t"]), &tree, &g, &[HostArg::Tree(pair)])
    };
    let calls = |n: u32| {
        host.eval_constant(&format!("CALLS[0] + {n} - {n}"))
            .unwrap()
    };
    // `own` reads only its argument: an edit elsewhere leaves its result standing.
    assert_eq!(judge("a=1,b=2", "own(t) == 'a=1'"), Ok(true));
    assert_eq!(judge("a=1,b=3", "own(t) == 'a=1'"), Ok(true));
    assert_eq!(judge("a=1", "own(t) == 'a=1'"), Ok(true));
    assert_eq!(calls(1), PyValue::Int(1));
    // An edit inside the argument is judged again.
    assert_eq!(judge("a=2,b=3", "own(t) == 'a=1'"), Ok(false));
    assert_eq!(judge("a=2,b=3", "own(t) == 'a=2'"), Ok(true));
    assert_eq!(calls(2), PyValue::Int(3));
}

#[test]
fn a_comparison_and_the_value_to_write_come_from_one_call() {
    if !have_python() {
        return;
    }
    let host = counting_host();
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    let judge = |value: &str| {
        let compared = expr(&format!("str(k) == {value}"), &["k"]);
        let written = expr(value, &["k"]);
        let joint = Joint {
            expr: expr(
                &format!("((str(k)) == (__thicket_value := ({value})), __thicket_value)"),
                &["k"],
            ),
            target: 0,
        };
        let together = host.eval_bool_then_text(&compared, &written, Some(&joint), &tree, &g, &key);
        let apart = host.eval_bool_then_text(&compared, &written, None, &tree, &g, &key);
        assert_eq!(together, apart, "{value}");
        together
    };
    // False: the value comes with the verdict, from the one call of `own`.
    assert_eq!(
        judge("own(k).upper()"),
        (Ok(false), Some(Ok(b"AB".to_vec())))
    );
    assert_eq!(judge("own(k)"), (Ok(true), None));
    let raised = judge("own(k) + 1");
    assert!(
        matches!(&raised, (Err(e), None) if e.message.contains("TypeError")),
        "{raised:?}"
    );
    // `own` ran once per joint judgement; apart, once to judge and once more for
    // the value where the verdict is false: (1 + 2) + (1 + 1) + (1 + 1).
    assert_eq!(host.eval_constant("CALLS[0]").unwrap(), PyValue::Int(7));
}

/// Records of a digit sum and digits, `<sum>` the sum of the digits after it (a
/// checksum over a header, as tar has).
const RECORDS: &str = r#"
<start>  ::= <record> (";" <record>)*
<record> ::= <sum> ":" <body>
<sum>    ::= <digit>+
<body>   ::= <digit>+
<digit>  ::= r"[0-9]"
"#;

#[test]
fn a_value_that_reads_nothing_of_its_target_is_not_evaluated_again_after_the_write() {
    if !have_python() {
        return;
    }
    let blocks = vec![CodeBlock::new(
        "sums.fan",
        1,
        "CALLS = [0]\n\
         def total(r):\n\
         \x20   CALLS[0] += 1\n\
         \x20   def walk(t):\n\
         \x20       if t.is_terminal:\n\
         \x20           return sum(int(c) for c in str(t) if c.isdigit())\n\
         \x20       if t.symbol.name() == '<sum>':\n\
         \x20           return 0\n\
         \x20       return sum(walk(c) for c in t.children)\n\
         \x20   return str(walk(r))\n\
         def total_of_text(r):\n\
         \x20   CALLS[0] += 1\n\
         \x20   return str(sum(int(c) for c in str(r).split(':')[1]))\n",
    )];
    let host = host_with(
        blocks,
        PythonConfig {
            max_processes: 1,
            ..PythonConfig::default()
        },
    );
    let g = grammar(RECORDS);
    // Each question in its own words: a constant's value is kept.
    let asked = std::cell::Cell::new(0);
    let calls = || {
        asked.set(asked.get() + 1);
        let question = format!("CALLS[0] + {0} - {0}", asked.get());
        match host.eval_constant(&question).unwrap() {
            PyValue::Int(n) => n,
            other => panic!("{other:?}"),
        }
    };
    let judge = |function: &str, text: &str, record: usize| {
        let tree = parse(&g, text);
        let args = [
            HostArg::Tree(nodes(&g, &tree, "sum")[record]),
            HostArg::Tree(nodes(&g, &tree, "record")[record]),
        ];
        let compared = expr(&format!("str(s) == {function}(r)"), &["s", "r"]);
        let written = expr(&format!("{function}(r)"), &["s", "r"]);
        let joint = Joint {
            expr: expr(
                &format!(
                    "((str(s)) == (__thicket_value := __thicket_watched(s, lambda: \
                     ({function}(r)))), __thicket_value)"
                ),
                &["s", "r"],
            ),
            target: 0,
        };
        host.eval_bool_then_text(&compared, &written, Some(&joint), &tree, &g, &args)
    };
    let wrong = |sum: &str| (Ok(false), Some(Ok(sum.as_bytes().to_vec())));

    assert_eq!(judge("total", "0:123", 0), wrong("6"));
    assert_eq!(calls(), 1);
    // The repair writes the value: judged from the value kept, whatever the sum's
    // length, and also in another record or tree with the same record.
    assert_eq!(judge("total", "6:123", 0), (Ok(true), None));
    assert_eq!(judge("total", "06:123", 0), wrong("6"));
    assert_eq!(judge("total", "1:0;6:123", 1), (Ok(true), None));
    assert_eq!(calls(), 1);
    // Anything else in the record changed: evaluated again.
    assert_eq!(judge("total", "6:124", 0), wrong("7"));
    assert_eq!(calls(), 2);

    // A value that reads the sum's text is evaluated again after every write.
    assert_eq!(judge("total_of_text", "0:123", 0), wrong("6"));
    assert_eq!(judge("total_of_text", "6:123", 0), (Ok(true), None));
    assert_eq!(calls(), 4);
}

#[test]
fn a_call_that_looks_above_its_arguments_sees_the_whole_tree() {
    if !have_python() {
        return;
    }
    let host = counting_host();
    let g = grammar(PAIRS);
    // The first pair is the same in both trees, what lies above it is not: a result
    // kept for the pair alone would be stale in the second tree.
    for function in ["outer", "up_from_child", "root"] {
        let source = format!("{function}(t) == 'a=1,b=2'");
        let judge = |text: &str| {
            let tree = parse(&g, text);
            let pair = nodes(&g, &tree, "pair")[0];
            host.eval_bool(&expr(&source, &["t"]), &tree, &g, &[HostArg::Tree(pair)])
        };
        assert_eq!(judge("a=1,b=2"), Ok(true), "{function}");
        assert_eq!(judge("a=1,b=3"), Ok(false), "{function}");
        assert_eq!(judge("a=1,b=2"), Ok(true), "{function}");
    }
}

#[test]
fn many_threads_share_a_pool() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        max_processes: 3,
        ..PythonConfig::default()
    };
    let host = Arc::new(host_with(
        vec![CodeBlock::new(
            "spec.fan",
            1,
            "def twice(s):\n    return s + s\n",
        )],
        config,
    ));
    let g = Arc::new(grammar(PAIRS));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let host: Arc<PythonHost> = Arc::clone(&host);
            let g = Arc::clone(&g);
            std::thread::spawn(move || {
                let shared: Arc<dyn Host> = host.clone();
                for i in 0..100 {
                    let key = format!(
                        "{}{}",
                        "abcdefgh".as_bytes()[t] as char,
                        "x".repeat(i % 9 + 1)
                    );
                    let text = format!("{key}=1");
                    let tree = parse(&g, &text);
                    let k = nodes(&g, &tree, "key")[0];
                    let e = expr(&format!("twice(str(k)) == '{key}{key}'"), &["k"]);
                    assert_eq!(
                        shared.eval_bool(&e, &tree, &g, &[HostArg::Tree(k)]),
                        Ok(true)
                    );
                    let e = expr("twice(str(k)) == str(k)", &["k"]);
                    assert_eq!(
                        shared.eval_bool(&e, &tree, &g, &[HostArg::Tree(k)]),
                        Ok(false)
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(host.processes_started() <= 3);
}

/// Spec code in the styles Fandango's examples use: walking `_children` with the
/// `is_non_terminal` property, comparing trees to strings, `is_before` over the root.
#[test]
fn spec_code_in_fandangos_styles() {
    if !have_python() {
        return;
    }
    let host = host(vec![CodeBlock::new(
        "styles.fan",
        40,
        r#"
def blank_out(tree, name):
    # The tree's text with the subtrees named `name` replaced by spaces.
    if tree.is_non_terminal:
        if tree.symbol.name() == name:
            return " " * len(str(tree))
        return "".join(blank_out(child, name) for child in tree._children)
    if tree.is_terminal:
        return str(tree)
    raise ValueError("neither terminal nor nonterminal")

def digit_sum(number):
    return str(sum(int(c) for c in number) % 10)
"#,
    )]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "ab=12,cd=34");
    let pairs = nodes(&g, &tree, "pair");
    let nums = nodes(&g, &tree, "num");
    let start = tree.root();
    let check = |source: &str, args: &[HostArg]| {
        let params: Vec<&str> = ["a", "b", "c"][..args.len()].to_vec();
        host.eval_bool(&expr(source, &params), &tree, &g, args)
    };
    assert_eq!(
        check(
            "blank_out(a, '<num>') == 'ab=  ,cd=  '",
            &[HostArg::Tree(start)]
        ),
        Ok(true)
    );
    assert_eq!(
        check(
            "a[1] == digit_sum('11') and a[0] != digit_sum('11')",
            &[HostArg::Tree(nums[0])]
        ),
        Ok(true)
    );
    assert_eq!(
        check("str(a) == '12' and a == '12'", &[HostArg::Tree(nums[0])]),
        Ok(true)
    );
    assert_eq!(
        check(
            "is_before(a, b, c) and not is_before(a, c, b)",
            &[
                HostArg::Tree(start),
                HostArg::Tree(nums[0]),
                HostArg::Tree(pairs[1])
            ]
        ),
        Ok(true)
    );
    // A generator may return a tree (its bytes), an int or text.
    let gen_tree = host.generate(
        &expr("a.parent", &["a"]),
        &[Source {
            tree: &tree,
            grammar: &g,
            node: nums[1],
        }],
        0,
    );
    assert_eq!(gen_tree, Ok(PyValue::Tree(b"cd=34".to_vec())));
    assert_eq!(
        host.generate(&expr("int(digit_sum('99'))", &[]), &[], 0),
        Ok(PyValue::Int(8))
    );
}

#[test]
fn a_start_that_never_ends_times_out() {
    if !have_python() {
        return;
    }
    let config = PythonConfig {
        start_timeout: Duration::from_millis(500),
        ..PythonConfig::default()
    };
    let started = Instant::now();
    let err = PythonHost::new(
        vec![CodeBlock::new(
            "slow.fan",
            1,
            "import time\ntime.sleep(100)\n",
        )],
        config.clone(),
    )
    .err()
    .expect("too slow");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.to_string().contains("did not finish within 500 ms"),
        "{err}"
    );

    // An "interpreter" that never reads its requests, sent more than a pipe holds.
    let temp = tempfile::tempdir().unwrap();
    let fake = temp.path().join("never-ready.sh");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 100\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let big = format!("x = '{}'\n", "a".repeat(1 << 20));
    let started = Instant::now();
    let err = PythonHost::new(
        vec![CodeBlock::new("big.fan", 1, big)],
        PythonConfig {
            python: fake.clone(),
            ..config
        },
    )
    .err()
    .expect("never ready");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.to_string().contains("did not finish within 500 ms"),
        "{err}"
    );
}

#[test]
fn a_constraint_asked_again_on_the_same_tree_is_not_run_again() {
    if !have_python() {
        return;
    }
    let host = host(vec![CodeBlock::new(
        "spec.fan",
        1,
        "calls = []\ndef seen(k):\n    calls.append(str(k))\n    return len(str(k)) < 4\n",
    )]);
    let g = grammar(PAIRS);
    let tree = parse(&g, "abc=1,abcd=2");
    let keys = nodes(&g, &tree, "key");
    let e = expr("seen(k)", &["k"]);
    for _ in 0..3 {
        assert_eq!(
            host.eval_bool(&e, &tree, &g, &[HostArg::Tree(keys[0])]),
            Ok(true)
        );
        assert_eq!(
            host.eval_bool(&e, &tree, &g, &[HostArg::Tree(keys[1])]),
            Ok(false)
        );
    }
    // The same key in another tree is not run again (`seen` reads only its
    // argument); another key is a new request.
    let other = parse(&g, "abc=1,abcd=3");
    let other_keys = nodes(&g, &other, "key");
    assert_eq!(
        host.eval_bool(&e, &other, &g, &[HostArg::Tree(other_keys[0])]),
        Ok(true)
    );
    let third = parse(&g, "abd=1");
    let third_key = nodes(&g, &third, "key")[0];
    assert_eq!(
        host.eval_bool(&e, &third, &g, &[HostArg::Tree(third_key)]),
        Ok(true)
    );
    assert_eq!(host.eval_constant("len(calls)"), Ok(PyValue::Int(3)));
    assert_eq!(
        host.eval_constant("','.join(calls)"),
        Ok(PyValue::Str("abc,abcd,abd".into()))
    );
}

#[test]
fn a_launcher_in_front_of_python_runs_once() {
    if !have_python() {
        return;
    }
    // A launcher (as pyenv's shims are) that notes each start, then runs Python.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts");
    let launcher = dir.path().join("python-launcher");
    let python = PythonConfig::default().python;
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            python.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = PythonConfig {
        python: launcher,
        call_timeout: Duration::from_millis(300),
        max_processes: 1,
        ..PythonConfig::default()
    };
    let host = host_with(
        vec![CodeBlock::new(
            "spec.fan",
            1,
            "def spin():\n    while True:\n        pass\n",
        )],
        config,
    );
    let g = grammar(PAIRS);
    let tree = parse(&g, "a=1");
    let key = [HostArg::Tree(nodes(&g, &tree, "key")[0])];
    // A call that times out ends its process; the next call starts another.
    assert!(
        host.eval_bool(&expr("spin()", &["k"]), &tree, &g, &key)
            .is_err()
    );
    assert_eq!(
        host.eval_bool(&expr("k == 'a'", &["k"]), &tree, &g, &key),
        Ok(true)
    );
    assert_eq!(host.processes_started(), 2);
    let starts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(starts.lines().count(), 1, "{starts}");
}
