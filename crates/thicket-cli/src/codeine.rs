//! CODEINE on the command line: `learn-coverage` learns which k-paths of the
//! inputs reach which code locations, `explain` shows a location's tree as grammar
//! patterns, `predict` says which locations inputs will cover; `generate --target`
//! (in generate.rs) aims inputs at a location.

use crate::exit;
use crate::inputs::InputArgs;
use crate::spec::SpecArgs;
use crate::target::TargetArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Instant;
use thicket_codeine::given::GivenMatrixError;
use thicket_codeine::learning::{Focus, Inputs, LearnError, Learning};
use thicket_codeine::text::LearnTimes;
use thicket_codeine::{CoverageMatrix, LearnConfig, Model, ModelFileError, Prediction};
use thicket_cover::KPathGraph;
use thicket_driver::{InputGrammar, InputReader};
use thicket_exec::Judge;

/// Which named locations to learn (see [`thicket_codeine::LocationKinds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LocationKinds {
    /// Functions and methods.
    Functions,
    /// Source lines.
    Lines,
    /// Both.
    All,
}

impl LocationKinds {
    fn kinds(self) -> thicket_codeine::LocationKinds {
        match self {
            LocationKinds::Functions => thicket_codeine::LocationKinds::Functions,
            LocationKinds::Lines => thicket_codeine::LocationKinds::Lines,
            LocationKinds::All => thicket_codeine::LocationKinds::All,
        }
    }
}

/// Arguments of `thicket learn-coverage`.
#[derive(Args, Debug)]
#[command(
    after_help = "Runs the program (or --python function) once on every input, \
recording which named code locations each covers (Python: functions and lines), writes that \
matrix if --matrix is given (--from-matrix reuses one instead of running anything), reads \
each input's l-paths (l <= k) in every derivation if its parse forest is small, else in \
the derivation the parser returns (the one `thicket parse` prints), as its features, and learns one decision tree \
per location that some but not all inputs cover (CART, classes balanced by sub-sampling). \
Inputs the grammar rejects are left out of learning. Each tree is cross-validated \
(--folds); locations with fewer than 20 covering inputs are listed with a warning.\n\n\
With --focus LOCATION the program is used further for that location: while it has fewer \
than --min-positives (5) covering inputs, more inputs are drawn (random, then steered to the \
k-paths its covering inputs share); then rounds of --batch inputs aimed at it by the \
current tree are run and added with their coverage, and the tree is learned again, until a \
tree's rounds, pooled (two or more), put the lower 95 % confidence bound of its hit rate at \
--goal, or --execs executions (or --focus-time) are spent. The model then holds the refined tree for \
LOCATION.\n\n\
Examples:\n  thicket generate specs/expr.fan -n 1000 --seed 1 -o train/\n  \
thicket learn-coverage specs/expr.fan train/ -o expr.model.json --python eval/targets/expr_eval.py:evaluate\n  \
thicket learn-coverage specs/json.fan train/ -o json.model.json --python json:loads --focus 'line /usr/lib/python3.11/json/decoder.py:120' --execs 5000\n  \
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

    /// Folds of the cross-validation that measures each tree on inputs it was not
    /// fitted on (0: none).
    #[arg(long, value_name = "N", default_value_t = 5)]
    folds: u32,

    /// Refine the tree of LOCATION (its full name, or the end of a name the inputs
    /// cover) with the program: aimed inputs are run and learned from until --goal or
    /// the budget.
    #[arg(long, value_name = "LOCATION")]
    focus: Option<String>,

    /// With --focus: the hit rate of aimed inputs to show (at 95 % confidence).
    #[arg(long, value_name = "RATE", default_value_t = 0.9, requires = "focus",
          value_parser = crate::generate::parse_probability)]
    goal: f64,

    /// With --focus: executions of the program to spend at most (the inputs given not
    /// counted).
    #[arg(long, value_name = "N", default_value_t = 5000, requires = "focus")]
    execs: u64,

    /// With --focus: no round is begun after this long (e.g. 10m).
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_budget, requires = "focus")]
    focus_time: Option<std::time::Duration>,

    /// With --focus: inputs per round.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "focus")]
    batch: usize,

    /// With --focus: covering inputs needed before the first tree (fewer than the 20
    /// a tree needs to be trusted: the loop checks its trees by running their inputs).
    #[arg(long, value_name = "N", default_value_t = thicket_codeine::refine::LOOP_MIN_POSITIVES, requires = "focus")]
    min_positives: u32,

    /// With --focus: trees the search builds per aimed input.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "focus")]
    tries: u32,

    /// With --focus: the longest feature paths the loop may go to. When --patience
    /// aimed rounds in a row gain nothing, the paths grow by one: a location may depend
    /// on more context than -k paths hold.
    #[arg(long, value_name = "K", default_value_t = 6, requires = "focus",
          value_parser = clap::value_parser!(u8).range(1..=6))]
    max_k: u8,

    /// With --focus: aimed rounds without progress (5 points over the best hit rate)
    /// before the paths grow.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "focus")]
    patience: u32,

    /// With --focus: write the inputs the loop ran into DIR (`NNNNNN-hit` or
    /// `NNNNNN-miss`).
    #[arg(long, value_name = "DIR", requires = "focus")]
    save_inputs: Option<PathBuf>,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,

    #[command(flatten)]
    target: TargetArgs,
}

/// Reads every input (an error names the file).
fn read_inputs(args: &InputArgs) -> Result<(Vec<String>, Vec<Vec<u8>>), u8> {
    let files = args.collect_or_report(false)?;
    thicket_driver::files::read_all(&files, args.max_input_size).map_err(|e| {
        eprintln!("error: {e}");
        exit::FAILURE
    })
}

/// A reader of many small inputs: no helper thread per parse (`shared::reader_for`
/// starts one to fault memory in for large inputs); or the exit code after saying why
/// not.
fn small_inputs_reader<'g>(
    spec: &thicket_grammar::Spec,
    grammar: &'g InputGrammar<'_>,
) -> Result<InputReader<'g>, u8> {
    grammar.reader(Default::default()).map_err(|e| {
        eprintln!("error: {}: {e}", spec.source.name());
        exit::FAILURE
    })
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
    let pool = args.jobs.pool()?;
    let kinds = args.locations.kinds();
    let keep = |name: &str| kinds.keeps(name);
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    if input_grammar.packs_bits() && args.focus.is_some() {
        eprintln!(
            "error: {} has bit fields; --focus runs the text of the inputs it aims and does \
             not pack bits (learn without --focus)",
            spec.source.name()
        );
        return Ok(exit::USAGE);
    }
    let reader = match small_inputs_reader(&spec, &input_grammar) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let graph = KPathGraph::new(&spec.grammar);
    let k = usize::from(args.k);
    let started = Instant::now();
    let inputs = pool.install(|| Inputs::read(texts, |t| reader.feature_paths(&graph, t, k)));
    let featured = started.elapsed();
    let rejected = inputs.rejected();
    if let Some(why) = inputs.nothing_to_learn() {
        eprintln!("error: {why}");
        return Ok(exit::FAILURE);
    }
    let needs_program = args.from_matrix.is_none() || args.focus.is_some();
    let mut judge = if needs_program {
        match args.target.executor_or_report(None) {
            Ok(e) => Some(Judge::new(e, args.target.classifier()?)),
            Err(code) => return Ok(code),
        }
    } else {
        None
    };
    let started = Instant::now();
    let matrix = match &args.from_matrix {
        Some(path) => match CoverageMatrix::load_for(path, &names, true) {
            Ok(m) => m,
            Err(e) => return Ok(matrix_error(e)),
        },
        None => {
            let judge = judge.as_mut().expect("made when no matrix is given");
            let m = thicket_codeine::run::coverage_matrix(judge, &names, &inputs.texts)?;
            if let Some(path) = &args.matrix {
                m.save(path).map_err(|e| anyhow::anyhow!(e))?;
            }
            m
        }
    };
    let ran = started.elapsed();
    let config = LearnConfig {
        k,
        max_depth: args.tree_depth,
        max_locations: args.max_locations,
        seed: args.seed,
        folds: args.folds,
    };
    let focus = match (&args.focus, judge.as_mut()) {
        (Some(location), Some(judge)) => Some(Focus {
            location,
            judge,
            parser: reader
                .text_parser()
                .expect("bit fields refused with --focus"),
            config: thicket_codeine::RefineConfig {
                goal: args.goal,
                max_executions: args.execs,
                deadline: args.focus_time.map(|t| Instant::now() + t),
                batch: args.batch,
                min_positives: args.min_positives,
                tries: args.tries,
                max_k: usize::from(args.max_k),
                patience: args.patience,
                learn: config,
            },
        }),
        _ => None,
    };
    let learning = Learning {
        grammar: &spec.grammar,
        spec: args.spec.spec.display().to_string(),
        inputs,
        matrix,
        keep: &keep,
        config,
        pool: Some(&pool),
    };
    let learned = learning.run(focus, &mut |event| eprintln!("{}", event.line()));
    let learned = match learned {
        Ok(learned) => learned,
        Err(LearnError::UnknownFocus(e)) => {
            eprintln!("error: --focus: {e}");
            return Ok(exit::USAGE);
        }
        Err(e) => return Err(e.into()),
    };
    let model = &learned.model;
    if let Some((name, refined)) = &learned.refined {
        if let Some(dir) = &args.save_inputs {
            refined.save_inputs(dir).map_err(anyhow::Error::msg)?;
        }
        eprintln!("{}", refined.summary(name, args.goal));
        if let Some(warning) = refined.no_tree_warning(name) {
            eprintln!("warning: {warning}");
        }
    }
    std::fs::write(&args.output, serde_json::to_vec(model)?)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let times = LearnTimes {
        coverage: ran,
        features: featured,
    };
    let output = args.output.display().to_string();
    eprintln!(
        "{}",
        learned.summary(names.len(), rejected, k, times, &output)
    );
    if let Some(warning) = model.few_positives_warning() {
        eprintln!("warning: {warning}");
    }
    Ok(exit::OK)
}

/// Says why a matrix given for the inputs cannot be used; the exit code.
fn matrix_error(error: GivenMatrixError) -> u8 {
    match error {
        GivenMatrixError::Unreadable(e) => {
            eprintln!("error: {e}");
            exit::FAILURE
        }
        GivenMatrixError::OtherInputs(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

/// Reads a model and the grammar it was learned on (`spec`, else the one it names),
/// checking that the grammar is the same.
pub fn load_model(path: &Path, spec: Option<&Path>) -> Result<(Model, thicket_grammar::Spec), u8> {
    let model = thicket_codeine::read_model(path).map_err(|e| {
        eprintln!("error: {}", e.message(path, None));
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
    match model.check_grammar(&spec.grammar) {
        Ok(()) => Ok((model, spec)),
        Err(e) => {
            eprintln!("error: {}", e.message(path, Some(&spec_path)));
            Err(match e {
                ModelFileError::OtherGrammar => exit::USAGE,
                _ => exit::FAILURE,
            })
        }
    }
}

/// Arguments of `thicket explain`.
#[derive(Args, Debug)]
#[command(
    after_help = "Prints the decision tree learned for LOCATION (its full name, or \
the end of one: `:paren_subtraction_in_product`) as conditions on grammar patterns (the \
paper's §5.2 rendering of k-paths), with each leaf's prediction and the training inputs \
reaching it by class, and the tree's prediction quality on inputs it was not fitted on \
(cross-validated accuracy, precision, recall). A location with fewer than 20 covering \
inputs is flagged: its tree is not to be trusted.\n\n\
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
    let explained = thicket_codeine::explain::explain(&model, location, &spec.grammar);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&explained)?);
        return Ok(exit::OK);
    }
    // The support and the tree's quality, then the warning, then the leaves.
    let lines = explained.text_lines();
    let (head, leaves) = lines.split_at(2);
    head.iter().for_each(|line| println!("{line}"));
    if let Some(w) = &explained.warning {
        eprintln!("warning: {w}");
    }
    leaves.iter().for_each(|line| println!("{line}"));
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
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let reader = match small_inputs_reader(&spec, &input_grammar) {
        Ok(reader) => reader,
        Err(code) => return Ok(code),
    };
    let graph = KPathGraph::new(&spec.grammar);
    let truth: Option<CoverageMatrix> = if let Some(path) = &args.truth {
        match CoverageMatrix::load_for(path, &names, false) {
            Ok(m) => Some(m),
            Err(e) => return Ok(matrix_error(e)),
        }
    } else if args.target.python.is_some() || !args.target.command.is_empty() {
        let mut judge = match args.target.executor_or_report(None) {
            Ok(e) => Judge::new(e, args.target.classifier()?),
            Err(code) => return Ok(code),
        };
        Some(thicket_codeine::run::coverage_matrix(
            &mut judge, &names, &texts,
        )?)
    } else {
        None
    };
    let prediction = Prediction::new(
        &model,
        &texts,
        |t| reader.feature_paths(&graph, t, model.k),
        truth.as_ref(),
    );
    if args.json {
        let report = prediction.report(&model, &names);
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for line in prediction.text_lines(&model, &names) {
            println!("{line}");
        }
    }
    Ok(exit::OK)
}
