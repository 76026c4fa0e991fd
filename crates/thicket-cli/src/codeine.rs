//! CODEINE on the command line (issue 18): `learn-coverage` learns which k-paths of the
//! inputs reach which code locations, `explain` shows a location's tree as grammar
//! patterns, `predict` says which locations inputs will cover; `generate --target`
//! (in generate.rs) aims inputs at a location.

use crate::exit;
use crate::inputs::InputArgs;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use thicket_codeine::cart::Node;
use thicket_codeine::{CoverageMatrix, FeatureTable, LearnConfig, Model, grammar_fingerprint};
use thicket_cover::{KPathGraph, PatternRenderer};
use thicket_exec::{Judge, Location};

/// Which named locations to learn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LocationKinds {
    /// Functions and methods.
    Functions,
    /// Source lines.
    Lines,
    /// Both.
    All,
}

/// Arguments of `thicket learn-coverage`.
#[derive(Args, Debug)]
#[command(
    after_help = "Runs the program (or --python function) once on every input, \
recording which named code locations each covers (Python: functions and lines), writes that \
matrix if --matrix is given (--from-matrix reuses one instead of running anything), reads \
each input's l-paths (l <= k) in any parse as its features, and learns one decision tree \
per location that some but not all inputs cover (CART, classes balanced by sub-sampling). \
Inputs the grammar rejects are left out of learning.\n\n\
Examples:\n  thicket generate specs/expr.fan -n 1000 --seed 1 -o train/\n  \
thicket learn-coverage specs/expr.fan train/ -o expr.model.json --python eval/targets/expr_eval.py:evaluate\n  \
thicket learn-coverage specs/json.fan train/ -o json.model.json --matrix json.matrix.json --python json:loads --locations functions\n  \
thicket learn-coverage specs/json.fan train/ -o json.model.json --from-matrix json.matrix.json -k 2"
)]
pub struct LearnArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    inputs: InputArgs,

    /// Where to write the model (JSON).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: PathBuf,

    /// Longest path length of the features.
    #[arg(short = 'k', long, value_name = "K", default_value_t = 3,
          value_parser = clap::value_parser!(u8).range(1..=6))]
    k: u8,

    /// Depth limit of each tree.
    #[arg(long, value_name = "D", default_value_t = 5)]
    tree_depth: usize,

    /// At most this many locations get a tree (the most balanced first).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_locations: usize,

    /// Which locations to learn.
    #[arg(long, value_enum, default_value_t = LocationKinds::All)]
    locations: LocationKinds,

    /// Write the coverage matrix (inputs x locations) to FILE.
    #[arg(long, value_name = "FILE")]
    matrix: Option<PathBuf>,

    /// Take the coverage from a matrix written by --matrix (for the same inputs, in the
    /// same order) instead of running the program.
    #[arg(long, value_name = "FILE", conflicts_with = "matrix")]
    from_matrix: Option<PathBuf>,

    /// Seeds the balancing sub-samples.
    #[arg(long, default_value_t = 0)]
    seed: u64,

    /// Worker threads [default: one per core].
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,

    #[command(flatten)]
    target: TargetArgs,
}

/// Reads every input (an error names the file).
fn read_inputs(args: &InputArgs) -> Result<(Vec<String>, Vec<Vec<u8>>), u8> {
    let files = args.collect_or_report(false)?;
    let mut names = Vec::with_capacity(files.len());
    let mut texts = Vec::with_capacity(files.len());
    for f in &files {
        match f.read(args.max_input_size) {
            Ok(t) => {
                names.push(f.name());
                texts.push(t);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return Err(exit::FAILURE);
            }
        }
    }
    Ok((names, texts))
}

/// Runs every input through the judge and records the named locations each covers
/// (by the judge's rule: none for a crash or a hang). Every input needs its row, so an
/// executor error is an error here.
pub fn coverage_matrix(
    judge: Judge,
    names: &[String],
    texts: &[Vec<u8>],
    keep: impl Fn(&Location) -> bool,
) -> anyhow::Result<CoverageMatrix> {
    let mut judge = judge.with_tolerance(1);
    let mut matrix = CoverageMatrix {
        executor: judge.executor().describe(),
        ..Default::default()
    };
    let mut index = FxHashMap::default();
    let mut covered: Vec<Location> = Vec::new();
    for (name, text) in names.iter().zip(texts) {
        let Some(verdict) = judge.run(text).with_context(|| format!("running {name}"))? else {
            anyhow::bail!("running {name}: the executor failed");
        };
        covered.clear();
        if !judge.covered_locations(&verdict, &mut covered) {
            anyhow::bail!(
                "{} names no code locations (edges cannot be named): use --python, or a \
                 target whose executor reports functions or lines",
                judge.executor().describe()
            );
        }
        matrix.push(
            name.clone(),
            covered.iter().filter(|l| keep(l)).map(|l| l.to_string()),
            &mut index,
        );
    }
    Ok(matrix)
}

/// Runs `thicket learn-coverage`.
pub fn run_learn(args: LearnArgs) -> anyhow::Result<u8> {
    let spec = match args.spec.load() {
        Ok(spec) => spec,
        Err(code) => return Ok(code),
    };
    let (names, texts) = match read_inputs(&args.inputs) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    if names.is_empty() {
        eprintln!(
            "error: nothing to learn from: no inputs (generate some with thicket generate -o DIR)"
        );
        return Ok(exit::FAILURE);
    }
    let pool = crate::shared::worker_pool(args.jobs)?;
    let kinds = args.locations;
    let keep = |name: &str| match kinds {
        LocationKinds::All => true,
        LocationKinds::Functions => name.starts_with("function ") || name.starts_with("method "),
        LocationKinds::Lines => name.starts_with("line "),
    };
    // Many small inputs: no helper thread per parse (`parser_for` starts one to fault
    // memory in for large inputs).
    let parser = match thicket_parse::Parser::new(&spec.grammar, Default::default()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", spec.source.name());
            return Ok(exit::FAILURE);
        }
    };
    let graph = KPathGraph::new(&spec.grammar);
    let k = usize::from(args.k);
    let started = Instant::now();
    let slices: Vec<&[u8]> = texts.iter().map(|t| &t[..]).collect();
    let table = pool.install(|| FeatureTable::extract(&parser, &graph, &slices, k));
    let featured = started.elapsed();
    if table.rows.iter().all(Option::is_none) {
        eprintln!(
            "error: nothing to learn from: all {} inputs are rejected by the grammar (the model \
             learns from inputs the grammar accepts)",
            names.len()
        );
        return Ok(exit::FAILURE);
    }
    let started = Instant::now();
    let mut matrix = match &args.from_matrix {
        Some(path) => {
            let m = CoverageMatrix::load(path).map_err(|e| anyhow::anyhow!(e))?;
            if m.inputs != names {
                eprintln!(
                    "error: {} lists {} inputs, not the {} given (in the same order)",
                    path.display(),
                    m.inputs.len(),
                    names.len()
                );
                return Ok(exit::USAGE);
            }
            m
        }
        None => {
            let judge = match args.target.executor_or_report(None) {
                Ok(e) => Judge::new(e, args.target.classifier()?),
                Err(code) => return Ok(code),
            };
            let m = coverage_matrix(judge, &names, &texts, |_| true)?;
            if let Some(path) = &args.matrix {
                m.save(path).map_err(|e| anyhow::anyhow!(e))?;
            }
            m
        }
    };
    let ran = started.elapsed();
    // Keep only the kinds asked for (columns renumbered).
    let kept: Vec<usize> = (0..matrix.locations.len())
        .filter(|&c| keep(&matrix.locations[c]))
        .collect();
    let mut renumber = vec![u32::MAX; matrix.locations.len()];
    for (new, &old) in kept.iter().enumerate() {
        renumber[old] = new as u32;
    }
    matrix.locations = kept.iter().map(|&c| matrix.locations[c].clone()).collect();
    for row in &mut matrix.covered {
        *row = row
            .iter()
            .map(|&c| renumber[c as usize])
            .filter(|&c| c != u32::MAX)
            .collect();
    }
    let started = Instant::now();
    let config = LearnConfig {
        k,
        max_depth: args.tree_depth,
        max_locations: args.max_locations,
        seed: args.seed,
    };
    let model = pool.install(|| {
        Model::learn(
            &table,
            &matrix,
            args.spec.spec.display().to_string(),
            grammar_fingerprint(&spec.grammar),
            config,
        )
    });
    let learned = started.elapsed();
    std::fs::write(&args.output, serde_json::to_vec(&model)?)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let rejected = table.rows.iter().filter(|r| r.is_none()).count();
    eprintln!(
        "{} inputs ({rejected} rejected by the grammar), {} locations: {} trees, {} never or \
         always covered; {} features (l-paths, l <= {k}); coverage {:.2} s, features {:.2} s, \
         learning {:.2} s; model in {}",
        names.len(),
        matrix.locations.len(),
        model.locations.len(),
        model.skipped,
        model.features.len(),
        ran.as_secs_f64(),
        featured.as_secs_f64(),
        learned.as_secs_f64(),
        args.output.display()
    );
    Ok(exit::OK)
}

/// Reads a model and the grammar it was learned on (`spec`, else the one it names),
/// checking that the grammar is the same.
pub fn load_model(path: &Path, spec: Option<&Path>) -> Result<(Model, thicket_grammar::Spec), u8> {
    let text = std::fs::read(path).map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        exit::FAILURE
    })?;
    let model: Model = serde_json::from_slice(&text).map_err(|e| {
        eprintln!(
            "error: {}:{}:{}: not a thicket model: {e}",
            path.display(),
            e.line(),
            e.column()
        );
        exit::FAILURE
    })?;
    let spec_path = spec.map_or_else(|| PathBuf::from(&model.spec), Path::to_path_buf);
    let spec_args = SpecArgs {
        spec: spec_path.clone(),
        start: None,
        lexer: None,
        max_spec_size: thicket_grammar::MAX_SPEC_BYTES,
        include_dirs: Vec::new(),
    };
    let spec = spec_args.load()?;
    if grammar_fingerprint(&spec.grammar) != model.grammar {
        eprintln!(
            "error: {} was learned on another grammar than {} (edited since?); learn again \
             or give the spec it was learned on with --spec",
            path.display(),
            spec_path.display()
        );
        return Err(exit::USAGE);
    }
    if let Err(e) = model.validate(&spec.grammar) {
        eprintln!("error: {}: not a usable model: {e}", path.display());
        return Err(exit::FAILURE);
    }
    Ok((model, spec))
}

/// Arguments of `thicket explain`.
#[derive(Args, Debug)]
#[command(
    after_help = "Prints the decision tree learned for LOCATION (its full name, or \
the end of one: `:paren_subtraction_in_product`) as conditions on grammar patterns (the \
paper's §5.2 rendering of k-paths), with each leaf's prediction, support (training samples \
reaching it) and accuracy on them.\n\n\
Examples:\n  thicket explain expr.model.json paren_subtraction_in_product\n  \
thicket explain json.model.json 'function /usr/lib/python3.11/json/decoder.py:py_scanstring' --json"
)]
pub struct ExplainArgs {
    /// The model (from learn-coverage).
    #[arg(value_name = "MODEL")]
    model: PathBuf,

    /// The location.
    #[arg(value_name = "LOCATION")]
    location: String,

    /// The spec the model was learned on [default: the path the model records].
    #[arg(long, value_name = "SPEC")]
    spec: Option<PathBuf>,

    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `thicket explain`.
pub fn run_explain(args: ExplainArgs) -> anyhow::Result<u8> {
    let (model, spec) = match load_model(&args.model, args.spec.as_deref()) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let location = match model.location(&args.location) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::USAGE);
        }
    };
    let renderer = PatternRenderer::new(&spec.grammar);
    let graph = KPathGraph::new(&spec.grammar);
    let path_text = |f: u32| {
        let p = &model.features[f as usize];
        (renderer.render(p), graph.display(&spec.grammar, p))
    };
    let leaves = location.tree.leaves();
    let constraints = location.constraints(&model.features);
    if args.json {
        let leaves: Vec<serde_json::Value> = leaves
            .iter()
            .map(|(conditions, leaf)| {
                let Node::Leaf {
                    covered,
                    support,
                    correct,
                } = leaf
                else {
                    unreachable!("leaves are leaves")
                };
                serde_json::json!({
                    "conditions": conditions.iter().map(|&(f, present)| {
                        let (pattern, path) = path_text(f);
                        serde_json::json!({"present": present, "pattern": pattern, "path": path})
                    }).collect::<Vec<_>>(),
                    "covered": covered,
                    "support": support,
                    "accuracy": f64::from(*correct) / f64::from((*support).max(1)),
                })
            })
            .collect();
        let report = serde_json::json!({
            "location": location.name,
            "covered": location.covered,
            "inputs": location.inputs,
            "leaves": leaves,
            "feasible_constraints": constraints.len(),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(exit::OK);
    }
    println!(
        "{}: covered by {} of {} training inputs",
        location.name, location.covered, location.inputs
    );
    for (conditions, leaf) in &leaves {
        let Node::Leaf {
            covered,
            support,
            correct,
        } = leaf
        else {
            unreachable!("leaves are leaves")
        };
        println!(
            "{} (support {support}, accuracy {:.3}) if:",
            if *covered { "COVERED" } else { "not covered" },
            f64::from(*correct) / f64::from((*support).max(1))
        );
        if conditions.is_empty() {
            println!("    (always)");
        }
        for &(f, present) in conditions {
            let (pattern, path) = path_text(f);
            println!(
                "    {} {pattern}    [{path}]",
                if present { "has   " } else { "has no" }
            );
        }
    }
    Ok(exit::OK)
}

/// Arguments of `thicket predict`.
#[derive(Args, Debug)]
#[command(
    after_help = "Says, for every input, which trained locations the model predicts \
it covers, from the input's k-paths alone. With --truth (a matrix from learn-coverage \
--matrix) or a target (-- COMMAND or --python) the actual coverage is compared: accuracy, \
precision and recall over all (input, location) pairs of trained locations.\n\n\
Examples:\n  thicket predict expr.model.json test/\n  \
thicket predict expr.model.json test/ --python eval/targets/expr_eval.py:evaluate --json"
)]
pub struct PredictArgs {
    /// The model (from learn-coverage).
    #[arg(value_name = "MODEL")]
    model: PathBuf,

    #[command(flatten)]
    inputs: InputArgs,

    /// The spec the model was learned on [default: the path the model records].
    #[arg(long, value_name = "SPEC")]
    spec: Option<PathBuf>,

    /// The actual coverage: a matrix for the same inputs in the same order.
    #[arg(long, value_name = "MATRIX")]
    truth: Option<PathBuf>,

    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    target: TargetArgs,
}

/// Runs `thicket predict`.
pub fn run_predict(args: PredictArgs) -> anyhow::Result<u8> {
    let (model, spec) = match load_model(&args.model, args.spec.as_deref()) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let (names, texts) = match read_inputs(&args.inputs) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    // Many small inputs: no helper thread per parse (`parser_for` starts one to fault
    // memory in for large inputs).
    let parser = match thicket_parse::Parser::new(&spec.grammar, Default::default()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", spec.source.name());
            return Ok(exit::FAILURE);
        }
    };
    let graph = KPathGraph::new(&spec.grammar);
    let ids = model.feature_ids();
    let predicted: Vec<Option<Vec<usize>>> = texts
        .par_iter()
        .map(|t| {
            let paths = thicket_codeine::input_paths(&parser, &graph, t, model.k).ok()?;
            Some(model.predict(&FeatureTable::row_with(&ids, &paths)))
        })
        .collect();
    let truth: Option<CoverageMatrix> = if let Some(path) = &args.truth {
        let m = CoverageMatrix::load(path).map_err(|e| anyhow::anyhow!(e))?;
        if m.inputs.len() != names.len() {
            eprintln!(
                "error: {} lists {} inputs, not the {} given",
                path.display(),
                m.inputs.len(),
                names.len()
            );
            return Ok(exit::USAGE);
        }
        Some(m)
    } else if args.target.python.is_some() || !args.target.command.is_empty() {
        let judge = match args.target.executor_or_report(None) {
            Ok(e) => Judge::new(e, args.target.classifier()?),
            Err(code) => return Ok(code),
        };
        Some(coverage_matrix(judge, &names, &texts, |_| true)?)
    } else {
        None
    };
    // Confusion counts over (input, trained location), parsed inputs only.
    let scores = truth.as_ref().map(|m| {
        let column: FxHashMap<&str, u32> = m
            .locations
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i as u32))
            .collect();
        let (mut tp, mut fp, mut tn, mut fn_) = (0u64, 0u64, 0u64, 0u64);
        for (row, p) in m.covered.iter().zip(&predicted) {
            let Some(p) = p else { continue };
            for (i, l) in model.locations.iter().enumerate() {
                let actual = column
                    .get(l.name.as_str())
                    .is_some_and(|c| row.binary_search(c).is_ok());
                match (p.contains(&i), actual) {
                    (true, true) => tp += 1,
                    (true, false) => fp += 1,
                    (false, false) => tn += 1,
                    (false, true) => fn_ += 1,
                }
            }
        }
        let ratio = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        (
            ratio(tp + tn, tp + tn + fp + fn_),
            ratio(tp, tp + fp),
            ratio(tp, tp + fn_),
            [tp, fp, tn, fn_],
        )
    });
    let rejected = predicted.iter().filter(|p| p.is_none()).count();
    if args.json {
        let inputs: Vec<serde_json::Value> = names
            .iter()
            .zip(&predicted)
            .map(|(n, p)| match p {
                Some(p) => serde_json::json!({"input": n, "covers": p.iter().map(|&i| &model.locations[i].name).collect::<Vec<_>>()}),
                None => serde_json::json!({"input": n, "rejected": true}),
            })
            .collect();
        let mut report = serde_json::json!({"inputs": inputs, "rejected": rejected, "locations": model.locations.len()});
        if let Some((accuracy, precision, recall, [tp, fp, tn, fn_])) = scores {
            report["accuracy"] = accuracy.into();
            report["precision"] = precision.into();
            report["recall"] = recall.into();
            report["confusion"] = serde_json::json!({"tp": tp, "fp": fp, "tn": tn, "fn": fn_});
        }
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (n, p) in names.iter().zip(&predicted) {
            match p {
                Some(p) => println!(
                    "{n}: {}",
                    p.iter()
                        .map(|&i| model.locations[i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => println!("{n}: rejected by the grammar"),
            }
        }
        if let Some((accuracy, precision, recall, _)) = scores {
            println!(
                "accuracy {accuracy:.3}, precision {precision:.3}, recall {recall:.3} over {} \
                 inputs x {} locations ({rejected} inputs rejected)",
                names.len() - rejected,
                model.locations.len()
            );
        }
    }
    Ok(exit::OK)
}

/// The model and location of `generate --target MODEL:LOCATION`: the model is the
/// longest prefix before a `:` that is a file.
pub fn split_target(target: &str) -> Option<(&Path, &str)> {
    target
        .match_indices(':')
        .map(|(i, _)| (&target[..i], &target[i + 1..]))
        .find(|(m, _)| Path::new(m).is_file())
        .map(|(m, l)| (Path::new(m), l))
}

/// The feasible constraints of a location's covering leaves, for `generate --target`.
pub fn target_constraints(
    model: &Model,
    location: &str,
) -> Result<Vec<thicket_codeine::PathConstraint>, String> {
    let location = model.location(location)?;
    let constraints = location.constraints(&model.features);
    if constraints.is_empty() {
        return Err(format!(
            "the tree of `{}` has no feasible leaf that predicts it covered",
            location.name
        ));
    }
    Ok(constraints)
}
