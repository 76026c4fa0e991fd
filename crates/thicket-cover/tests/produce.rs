//! k-path-covering production reaches every k-path that fits, for every bundled spec.

use std::path::PathBuf;
use thicket_cover::{Coverage, KPathGraph, cover_k_paths};
use thicket_gen::{GenConfig, Generator};
use thicket_grammar::{Grammar, LoadOptions, load_spec_file};

/// A grammar from a folder relative to this crate (`../../specs`, `tests/fixtures`).
fn grammar(folder: &str, name: &str) -> Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(folder)
        .join(name);
    load_spec_file(&path, &LoadOptions::default())
        .unwrap()
        .grammar
}

fn check(spec: &str, k: usize) -> (usize, usize, usize) {
    let grammar = grammar("../../specs", spec);
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let made = cover_k_paths(&generator, &graph, k, 7, usize::MAX);
    let mut coverage = Coverage::new(k);
    for tree in &made.trees {
        assert!(tree.depth(&grammar) <= GenConfig::default().max_depth);
        coverage.add_tree(&graph, tree);
    }
    for l in 1..=k {
        assert_eq!(made.total[l - 1] as u128, graph.count(l));
        assert_eq!(made.covered[l - 1], coverage.covered(l));
        let unfit = made.unfit.iter().filter(|u| u.len() == l).count();
        assert_eq!(
            coverage.covered(l) + unfit,
            made.total[l - 1],
            "{spec} k={k}: every {l}-path is covered or reported unfit"
        );
    }
    for unfit in &made.unfit {
        assert!(!coverage.contains(unfit));
    }
    (made.trees.len(), coverage.covered(k), made.unfit.len())
}

#[test]
fn every_bundled_spec_gets_full_k_path_coverage_for_k_1_to_3() {
    for spec in [
        "expr.fan",
        "json.fan",
        "csv.bnf",
        "url.fan",
        "xml.bnf",
        "markdown.fan",
        "scriptsizec.bnf",
        "rest.bnf",
        "tar.bnf",
    ] {
        for k in 1..=3 {
            let (inputs, covered, unfit) = check(spec, k);
            eprintln!("{spec} k={k}: {inputs} inputs cover {covered} k-paths, {unfit} unfit");
        }
    }
}

#[test]
fn k_4_on_the_tribble_subjects() {
    for spec in ["json.fan", "csv.bnf", "url.fan"] {
        let (inputs, covered, unfit) = check(spec, 4);
        eprintln!("{spec} k=4: {inputs} inputs cover {covered} k-paths, {unfit} unfit");
    }
}

/// The growth curves (k-paths covered after 1, 2, ..., n inputs) of plain random
/// generation and of the kpath-random stream, and the number of k-paths.
fn growth(spec: &str, k: usize, n: usize) -> (Vec<usize>, Vec<usize>, usize) {
    let grammar = grammar("../../specs", spec);
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let mut random = Coverage::new(k);
    let mut random_curve = Vec::new();
    for i in 0..n as u64 {
        random.add_tree(
            &graph,
            &generator.generate_tree(&mut Generator::rng_for(3, i)).0,
        );
        random_curve.push(random.covered(k));
    }
    let stream = thicket_cover::k_path_stream(&generator, &graph, k, 3, n);
    assert_eq!(
        stream.trees.len(),
        n,
        "the stream keeps going past full coverage"
    );
    let mut steered = Coverage::new(k);
    let mut steered_curve = Vec::new();
    for tree in &stream.trees {
        steered.add_tree(&graph, tree);
        steered_curve.push(steered.covered(k));
    }
    (random_curve, steered_curve, graph.count(k) as usize)
}

#[test]
fn kpath_random_grows_coverage_faster_than_random() {
    for spec in ["json.fan", "markdown.fan"] {
        let n = 50;
        let (random, steered, total) = growth(spec, 3, n);
        let area = |curve: &[usize]| curve.iter().sum::<usize>();
        let reached = |curve: &[usize]| {
            curve
                .iter()
                .position(|&c| c == total)
                .map_or(n + 1, |p| p + 1)
        };
        eprintln!(
            "{spec} k=3, {total} paths: after 5/10/20/50 inputs random {:?}, kpath-random {:?}; full coverage after {} vs {} inputs",
            [random[4], random[9], random[19], random[49]],
            [steered[4], steered[9], steered[19], steered[49]],
            reached(&random),
            reached(&steered)
        );
        // The whole curve: more k-paths covered summed over the first 50 inputs, and
        // full coverage no later.
        assert!(
            area(&steered) > area(&random),
            "{spec}: {} <= {}",
            area(&steered),
            area(&random)
        );
        assert!(reached(&steered) <= reached(&random));
    }
}

/// Inputs Tribble needed on average (Table 1 of the journal version of "Systematically
/// Covering Input Structure" by Havrikov, Kampmann and Zeller) for k = 1..4.
const TRIBBLE: [(&str, [usize; 4]); 3] = [
    ("grammars-v4-json.fan", [40, 35, 58, 201]),
    ("grammars-v4-csv.fan", [42, 38, 51, 221]),
    ("grammars-v4-url.fan", [43, 45, 72, 552]),
];

#[test]
fn no_more_inputs_than_tribble_on_the_same_grammars() {
    for (fixture, tribble) in TRIBBLE {
        let grammar = grammar("tests/fixtures", fixture);
        let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
        let graph = KPathGraph::new(&grammar);
        for (k, &theirs) in (1..=4).zip(tribble.iter()) {
            for seed in [1, 2, 3] {
                let made = cover_k_paths(&generator, &graph, k, seed, usize::MAX);
                assert_eq!(made.covered, made.total, "{fixture} k={k}");
                assert!(made.unfit.is_empty());
                let ours = made.trees.len();
                eprintln!("{fixture} k={k} seed {seed}: {ours} inputs (Tribble {theirs})");
                assert!(
                    ours <= theirs,
                    "{fixture} k={k} seed {seed}: {ours} > {theirs}"
                );
            }
        }
    }
}

/// A path that cannot be extended to k symbols is covered too: in grammars-v4's JSON
/// grammar nothing comes above the start rule's `<value>` or below its `"true"`, so no
/// 4-path contains that 2-path, and only a bare top-level `true` covers it.
#[test]
fn shorter_paths_that_cannot_be_extended_to_k_are_covered_too() {
    let grammar = grammar("tests/fixtures", "grammars-v4-json.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    for seed in [1, 2] {
        let made = cover_k_paths(&generator, &graph, 4, seed, usize::MAX);
        let mut coverage = Coverage::new(4);
        for tree in &made.trees {
            coverage.add_tree(&graph, tree);
        }
        for l in 1..=4 {
            assert_eq!(
                coverage.covered(l) as u128,
                graph.count(l),
                "seed {seed}: every {l}-path"
            );
        }
        assert!(
            made.trees.iter().any(|t| t.bytes() == b"true"),
            "a bare top-level true"
        );
    }
}

/// With a finishing step that rejects some inputs (as a constraint repair that fails
/// would), the paths counted are those of the finished inputs: every path is covered
/// by one, reported unfit, or reported lost after its retries, and lost paths are in
/// no finished input.
#[test]
fn paths_a_finishing_step_loses_are_retried_then_reported() {
    let grammar = grammar("../../specs", "json.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let k = 3;
    let mut seen = 0u64;
    let made = thicket_cover::cover_k_paths_until(
        &generator,
        &graph,
        k,
        7,
        usize::MAX,
        thicket_cover::Stop::at(None),
        &mut |tree, n| {
            assert_eq!(n, seen, "finish numbers its inputs in order");
            seen += 1;
            let text = tree.bytes();
            (!text.windows(4).any(|w| w == b"true")).then_some(tree)
        },
    );
    assert!(made.dropped > 0 && !made.lost.is_empty());
    let mut coverage = Coverage::new(k);
    for tree in &made.trees {
        assert!(!tree.bytes().windows(4).any(|w| w == b"true"));
        coverage.add_tree(&graph, tree);
    }
    for l in 1..=k {
        let unfit = made.unfit.iter().filter(|u| u.len() == l).count();
        let lost = made.lost.iter().filter(|u| u.len() == l).count();
        assert_eq!(made.covered[l - 1], coverage.covered(l));
        assert_eq!(
            coverage.covered(l) + unfit + lost,
            made.total[l - 1],
            "l={l}"
        );
    }
    for lost in &made.lost {
        assert!(!coverage.contains(lost));
    }
    // Each lost path was steered to FINISH_TRIES times.
    assert!(made.dropped >= made.lost.len() * thicket_cover::FINISH_TRIES as usize / 2);
}

#[test]
fn a_caller_can_stop_production_before_any_input() {
    let grammar = grammar("../../specs", "json.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let asked = std::cell::Cell::new(0);
    let interrupted = || {
        asked.set(asked.get() + 1);
        asked.get() > 3
    };
    let stop = thicket_cover::Stop {
        deadline: None,
        interrupted: &interrupted,
    };
    for stream in [false, true] {
        asked.set(0);
        let finish = &mut |tree, _| Some(tree);
        let made = if stream {
            thicket_cover::k_path_stream_until(&generator, &graph, 3, 1, 100, stop, finish)
        } else {
            thicket_cover::cover_k_paths_until(&generator, &graph, 3, 1, usize::MAX, stop, finish)
        };
        assert!(made.interrupted && !made.timed_out);
        assert!(made.trees.len() <= 3, "{} inputs", made.trees.len());
    }
}

/// A path grafted below a node of its own: the subtree is one of that node's
/// expression, contains the path, and `reaches` says where grafting is impossible.
#[test]
fn a_path_is_grafted_below_a_node_that_leads_to_it() {
    use thicket_cover::{PathSteering, for_each_tree_path};
    use thicket_grammar::{Expr, ExprId};
    use thicket_tree::TreeBuilder;
    let grammar = grammar("../../specs", "expr.fan");
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let steering = PathSteering::new(&grammar, &graph);
    // Every reference to a rule, and every 2-path of the graph.
    let refs: Vec<ExprId> = grammar
        .expr_ids()
        .filter(|&e| graph.is_node(e) && matches!(grammar.expr(e), Expr::Ref(_)))
        .collect();
    let mut grafted = 0;
    for (i, &at) in refs.iter().enumerate() {
        for &x in graph.nodes() {
            for &y in graph.successors(x) {
                let path = [x, y];
                let mut rng = Generator::rng_for(3, (i as u64) << 32 | u64::from(x));
                let mut sink = TreeBuilder::new();
                let ok = steering.subtree(&generator, &graph, at, 1, &path, &mut rng, &mut sink);
                assert_eq!(ok, steering.reaches(&graph, at, &path));
                if !ok {
                    continue;
                }
                let tree = sink.finish();
                assert_eq!(tree.expr(tree.root()), at);
                let mut found = false;
                for_each_tree_path(&graph, &tree, 2, |p| found |= p == path);
                assert!(found, "{path:?} below {at:?}");
                grafted += 1;
            }
        }
    }
    assert!(grafted > 100, "{grafted}");
    // `"x"` cannot be reached from below a digit.
    let digit = refs
        .iter()
        .copied()
        .find(|&e| {
            grammar.display_expr(e).contains("DecDigit")
                && !grammar.display_expr(e).contains("DecDigits")
        })
        .unwrap();
    let x = graph
        .nodes()
        .iter()
        .copied()
        .find(|&n| grammar.display_expr(ExprId::from_index(n as usize)) == "\"x\"")
        .unwrap();
    let identifier = graph
        .nodes()
        .iter()
        .copied()
        .find(|&n| graph.successors(n).contains(&x))
        .unwrap();
    assert!(!steering.reaches(&graph, digit, &[identifier, x]));
}
