//! How many Python evaluations per second the host makes: a trivial constraint over a
//! subtree of a tree of about 100 nodes, on the same tree (kept by the process), on a
//! new tree each call (sent each time), many bindings per round trip, and from
//! several threads.
//!
//! `cargo run -p thicket-python --example speed [calls]`

use std::sync::Arc;
use std::time::Instant;
use thicket_grammar::{Expr, Grammar, load_spec_text};
use thicket_parse::{ParseConfig, Parser};
use thicket_python::{Host, HostArg, HostExpr, PythonConfig, PythonHost};
use thicket_tree::{DerivationTree, NodeId};

const SPEC: &str = r#"
<start> ::= <pair> ("," <pair>)*
<pair>  ::= <key> "=" <num>
<key>   ::= r"[a-z]+"
<num>   ::= <digit>+
<digit> ::= r"[0-9]"
"#;

fn tree(grammar: &Grammar, variant: usize) -> DerivationTree {
    // 8 pairs of a key and a two-digit number: about 100 thicket nodes.
    let text: Vec<String> = (0..8)
        .map(|i| {
            format!(
                "k{}={:02}",
                &"abcdefghij".repeat(variant / 10 + 1)[..variant % 10 + 1],
                (i * 7 + variant) % 100
            )
        })
        .collect();
    let parser = Parser::new(grammar, ParseConfig::default()).expect("a parser");
    parser
        .parse(text.join(",").as_bytes())
        .expect("parses")
        .tree()
}

fn first(grammar: &Grammar, tree: &DerivationTree, name: &str) -> NodeId {
    tree.descendants(tree.root())
        .find(|&n| matches!(grammar.expr(tree.expr(n)), Expr::Ref(s) if grammar.rule(*s).name == name))
        .expect("a node")
}

fn report(what: &str, calls: usize, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{what:<48} {calls:>7} calls in {secs:6.2} s: {:>8.0} calls/s ({:.1} µs each)",
        calls as f64 / secs,
        secs * 1e6 / calls as f64
    );
}

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let grammar = load_spec_text("speed.fan", SPEC.as_bytes()).expect("a spec");
    let host = PythonHost::new(Vec::new(), PythonConfig::default()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let same = tree(&grammar, 0);
    println!(
        "Python {}, tree of {} nodes ({} bytes)",
        host.python_version(),
        same.len(),
        same.bytes().len()
    );
    let expr = HostExpr {
        source: "len(str(t)) > 0".into(),
        params: vec!["t".into()],
    };
    let pair = first(&grammar, &same, "pair");

    let started = Instant::now();
    for _ in 0..calls {
        assert_eq!(
            host.eval_bool(&expr, &same, &grammar, &[HostArg::Tree(pair)]),
            Ok(true)
        );
    }
    report("same tree, one call per evaluation", calls, started);

    let trees: Vec<DerivationTree> = (0..200).map(|v| tree(&grammar, v)).collect();
    let pairs: Vec<NodeId> = trees.iter().map(|t| first(&grammar, t, "pair")).collect();
    let started = Instant::now();
    for i in 0..calls {
        let k = i % trees.len();
        let args = [HostArg::Tree(pairs[k])];
        assert_eq!(host.eval_bool(&expr, &trees[k], &grammar, &args), Ok(true));
    }
    report("200 trees in turn (each sent once a turn)", calls, started);

    let bindings: Vec<Vec<HostArg>> = same
        .descendants(same.root())
        .filter(|&n| matches!(grammar.expr(same.expr(n)), Expr::Ref(_)))
        .map(|n| vec![HostArg::Tree(n)])
        .collect();
    let started = Instant::now();
    let mut done = 0;
    while done < calls {
        let results = host.eval_bool_many(&expr, &same, &grammar, &bindings);
        assert!(results.iter().all(|r| *r == Ok(true)));
        done += bindings.len();
    }
    report(
        &format!("same tree, {} bindings per round trip", bindings.len()),
        done,
        started,
    );

    // A large tree: the encoding and its hash are made on every call (the process
    // keeps the tree, so only the key is sent).
    let large = {
        let text: Vec<String> = (0..1500).map(|i| format!("k={i}")).collect();
        let parser = Parser::new(&grammar, ParseConfig::default()).expect("a parser");
        parser
            .parse(text.join(",").as_bytes())
            .expect("parses")
            .tree()
    };
    let pair = first(&grammar, &large, "pair");
    let started = Instant::now();
    let large_calls = calls / 10;
    for _ in 0..large_calls {
        assert_eq!(
            host.eval_bool(&expr, &large, &grammar, &[HostArg::Tree(pair)]),
            Ok(true)
        );
    }
    report(
        &format!("same tree of {} nodes", large.len()),
        large_calls,
        started,
    );

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let host = Arc::new(host);
    let grammar = Arc::new(grammar);
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let host = Arc::clone(&host);
            let grammar = Arc::clone(&grammar);
            let expr = expr.clone();
            std::thread::spawn(move || {
                let own = tree(&grammar, 300 + w);
                let pair = first(&grammar, &own, "pair");
                for _ in 0..calls / threads {
                    assert_eq!(
                        host.eval_bool(&expr, &own, &grammar, &[HostArg::Tree(pair)]),
                        Ok(true)
                    );
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker");
    }
    report(
        &format!("{threads} threads, a tree each"),
        calls / threads * threads,
        started,
    );
    println!("processes started: {}", host.processes_started());
}
