//! `thicket generate`: depth-bounded random generation to stdout or to files.

use crate::exit;
use crate::shared::{remove_partial_files_on_interrupt, seed_or_draw};
use crate::spec::{SolveArgs, SpecArgs};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;
use thicket_cover::GenSummary;
use thicket_driver::ended;
use thicket_driver::kpath::Production;
use thicket_driver::output::{Framing, OutputSink, StreamOutput, digits};
use thicket_driver::{BuildError, MakerOptions, Makers};
use thicket_fandango::{GeneratorRefusal, StreamConfig};
use thicket_gen::{ChoicePolicy, GenConfig, Generator};

/// The limits of generation, shared by every subcommand that generates.
#[derive(Args, Debug, Clone, Copy)]
pub struct GenLimits {
    /// Greatest derivation depth (rule expansions on any root-to-leaf path).
    #[arg(long, value_name = "D", default_value_t = GenConfig::default().max_depth)]
    pub max_depth: u32,

    /// Cap on repetitions of `*`, `+`, `{n,}` (and of regex repetitions); a larger
    /// mandatory minimum such as `{7}` still wins.
    #[arg(long, value_name = "R", default_value_t = GenConfig::default().max_repetitions)]
    pub max_repetitions: u32,

    /// Rule expansions per input after which the rest of the input is closed off along
    /// the shortest derivations (keeps explosive grammars bounded); also the bound on
    /// rule expansions plus repetitions of any input: a grammar whose smallest input
    /// needs more is refused.
    #[arg(long, value_name = "N", default_value_t = GenConfig::default().max_nodes as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_nodes: u64,

    /// Bytes of any input [default: 16777216 = 16 MiB]: choices that would exceed it
    /// are not taken, and a grammar whose smallest input is larger is refused before
    /// anything is allocated.
    #[arg(long, value_name = "BYTES", default_value_t = thicket_gen::DEFAULT_MAX_SIZE,
          hide_default_value = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_size: u64,

    /// Size to aim each input at, in bytes beyond the grammar's smallest input: each
    /// input draws a target between 0 and twice this, prefers the recursive
    /// alternatives of a rule until it reaches the target, then closes off. 0 makes
    /// every choice uniform (Algorithm 2 of the k-path paper), which on grammars
    /// written for parsers gives small and often repeated inputs [default: 56; for a
    /// .g4 spec a quarter of its parser rules' smallest lengths summed, at most 56, or
    /// 0 where uniform inputs are as large (at most twice) and as varied; 0 with
    /// --probabilities, whose choices then follow the probabilities alone].
    #[arg(long, value_name = "BYTES")]
    pub target_size: Option<u32>,
}

impl GenLimits {
    /// The generator configuration these limits give.
    pub fn config(self) -> GenConfig {
        self.config_or(|| thicket_gen::DEFAULT_TARGET_SIZE)
    }

    /// The configuration with `target_size()` as the default of --target-size, asked
    /// only where none is given (a .g4 spec's draws samples; 0 for probabilities).
    pub fn config_or(self, target_size: impl FnOnce() -> u32) -> GenConfig {
        GenConfig {
            max_depth: self.max_depth,
            max_repetitions: self.max_repetitions,
            max_nodes: usize::try_from(self.max_nodes).unwrap_or(usize::MAX),
            max_size: self.max_size,
            policy: ChoicePolicy::for_target_size(self.target_size.unwrap_or_else(target_size)),
        }
    }
}

/// Arguments of `thicket generate`.
#[derive(Args, Debug)]
#[command(
    after_help = "Every random choice flows from --seed: input i of seed s is the same on \
every machine, whatever --jobs is. Without --seed a seed is drawn and printed on stderr.\n\n\
Output on stdout is unambiguous by default. If the grammar cannot produce a line break \
(\\n), each input is written on a line of its own. Otherwise each input is written after \
a header line `--- N (L bytes) ---` (N counts from 0) and followed by a line break: the L \
bytes after the header are exactly the input, whatever it contains. -0 (NUL after each \
input), --separator SEP, --format json (one JSON line per input) and -o DIR (a file \
each) choose other framings.\n\n\
Examples:\n  thicket generate specs/json.fan -n 10 --seed 1\n  \
thicket generate specs/csv.bnf -n 1000 --seed 7 -o out/ --suffix .csv\n  \
thicket generate specs/expr.fan -n 5 --max-depth 8 --format json\n  \
thicket generate specs/tar.bnf -n 100 -0 | xargs -0 ..."
)]
pub struct GenerateArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    solve: SolveArgs,

    /// Number of inputs to generate [default: 10, or no limit with --time; with
    /// --strategy kpath: as many as the k-paths need, at most N]. Making fewer (the time
    /// ran out, the constraints could not be satisfied, --unique found too few) is a
    /// failure: those made are written, the reason is printed, and the exit code is 4.
    #[arg(short = 'n', long = "count", value_name = "N")]
    count: Option<u64>,

    /// Stop generating after DURATION (`90`, `1.5` seconds, `90s`, `15m`, `2h`, `500ms`),
    /// counted from the start of the run: the inputs written are the first ones of the
    /// seed's stream, whole, so a run with -n set to their number writes the same.
    /// Without -n, generates until the time is up. The constraint solver stops at it
    /// too (no tree is begun and no repair round run after it). With -n, making fewer
    /// than N inputs in the time is a failure (exit 4, after writing those made), as is
    /// making none without -n. Inputs without constraints are made in batches of a few
    /// dozen per thread, so a run can exceed the time by one batch (with --strategy kpath
    /// or kpath-random, by one input: no input is begun after it, and the paths covered
    /// so far are reported).
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_budget)]
    time: Option<std::time::Duration>,

    /// Seed of all random choices [default: drawn at random and printed on stderr].
    #[arg(long, value_name = "S", visible_alias = "random-seed")]
    seed: Option<u64>,

    /// A goal: prefer inputs where the Fandango expression EXPR is small (as a spec's
    /// `minimizing EXPR`, after the spec's own goals). Each input is the best of a few
    /// valid candidates. Repeatable.
    #[arg(
        long = "minimize",
        visible_alias = "min",
        value_name = "EXPR",
        conflicts_with = "no_constraints"
    )]
    minimize: Vec<String>,

    /// A goal: prefer inputs where EXPR is large (as `maximizing EXPR`); see --minimize.
    #[arg(
        long = "maximize",
        visible_alias = "max",
        value_name = "EXPR",
        conflicts_with = "no_constraints"
    )]
    maximize: Vec<String>,

    /// How often blanks come beyond what the grammar needs, between 0 and 1 [default:
    /// 0.05]. For ANTLR grammars (.g4): the probability of hidden text (whitespace,
    /// comments) before each token; tokens the lexer would merge are separated by a
    /// space or line break whatever it is, and characters of negated sets and `.` are
    /// printable ASCII 95 times in 100. For other specs: the probability that a choice
    /// inside a whitespace rule (one whose every string is blanks, such as
    /// `<ws> ::= " "*`) takes more than its minimum. Raise it to fuzz what reads blanks.
    /// Random generation only: refused with --strategy kpath or kpath-random, --target
    /// and --probabilities.
    #[arg(long, value_name = "P", value_parser = parse_probability,
          visible_alias = "whitespace-probability")]
    hidden_probability: Option<f64>,

    #[command(flatten)]
    limits: GenLimits,

    /// Write each input to its own file in DIR (created if missing; refused if it holds
    /// files, unless --force) instead of stdout. Each file appears whole or not at all
    /// (written under a temporary name, then renamed). `-d` / `--directory` as in
    /// Fandango.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        short_alias = 'd',
        visible_alias = "directory"
    )]
    output: Option<PathBuf>,

    /// With -o, write into a folder that already holds files (same-named files are
    /// replaced; others are left as they are).
    #[arg(long, requires = "output")]
    force: bool,

    /// File name suffix for -o, e.g. `.json` (no path separators).
    #[arg(long, value_name = "SUFFIX", default_value = "", requires = "output",
          value_parser = parse_suffix)]
    suffix: String,

    /// Write SEP after each input on stdout instead of the default framing (see below);
    /// understands \n \t \r \0 \\ \xHH. Unambiguous only if no input contains SEP.
    #[arg(long, value_name = "SEP", conflicts_with = "null", value_parser = Framing::separator)]
    separator: Option<Framing>,

    /// Separate inputs on stdout with NUL bytes (for `xargs -0`).
    #[arg(short = '0', long = "null")]
    null: bool,

    /// How inputs are chosen: `random` draws N inputs by depth-bounded random generation
    /// (Algorithm 2); `kpath` builds inputs until every l-path of the grammar for
    /// l = 1..k that fits --max-depth is covered (Algorithm 1 of the k-path paper, plus the
    /// shorter paths no k-path contains, such as a bare top-level `true` in JSON; -n caps
    /// the count); `kpath-random` makes N inputs, each steered to an l-path (l <= k) not
    /// yet covered in the current round, so that k-path diversity grows as fast as
    /// possible.
    #[arg(long, value_enum, default_value_t = Strategy::Random)]
    strategy: Strategy,

    /// With --strategy kpath or kpath-random: the length of the k-paths to cover (1..=8)
    /// [default: 2]; every shorter path is covered too.
    #[arg(short = 'k', long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=8))]
    k: Option<u8>,

    /// Choose alternatives and repetition counts by the probabilities in FILE (written
    /// by `thicket learn`; docs/json-output.md) instead of uniformly, among what fits
    /// the limits (--strategy random only).
    #[arg(long, value_name = "FILE")]
    probabilities: Option<PathBuf>,

    /// With --probabilities: the inverted distribution, each option weighted by 1/p
    /// ("inputs from hell": unlike the samples).
    #[arg(long, requires = "probabilities")]
    inverse: bool,

    /// Aim the inputs at a code location (CODEINE): MODEL is a model from
    /// `thicket learn-coverage` on this spec, LOCATION a location it trained (or the end
    /// of its name). The location's tree's covering leaves become k-path constraints
    /// (paths that must and must not occur; infeasible ones dropped), taken in turn, each
    /// as often as the square of its leaf's precision on the training inputs relative
    /// to the best leaf's; each input is the result of a
    /// best-first search over trees (steered to the required paths, then slots refilled
    /// where a condition is violated; up to --tries trees) for one that satisfies its
    /// constraint. -n inputs [default: 10].
    #[arg(long, value_name = "MODEL:LOCATION", conflicts_with_all = ["strategy", "k", "time", "unique", "probabilities"])]
    target: Option<String>,

    /// With --target: trees the search builds per input before the best one is taken.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "target")]
    tries: u32,

    /// Output format: the raw inputs, or one JSON object per input with its derivation tree.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,

    /// Print throughput, mean size and the share of distinct inputs on stderr.
    #[arg(long)]
    stats: bool,

    /// Skip inputs equal to one already written, so that all N outputs differ. The
    /// outputs are still a function of --seed alone (each keeps its stream number as
    /// "index" in JSON output). A language with fewer distinct inputs than N (counted
    /// from the grammar before generating, when it has at most about a million
    /// derivations within --max-depth and --max-repetitions) is said at once; all its
    /// inputs are written and the run stops, a failure (exit 4) when -n asked for more.
    #[arg(long)]
    unique: bool,

    /// With --unique, give up after this many draws per input asked for.
    #[arg(long, value_name = "K", default_value_t = 100, requires = "unique",
          value_parser = clap::value_parser!(u64).range(1..))]
    max_draws_factor: u64,

    #[command(flatten)]
    jobs: crate::shared::JobsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Strategy {
    /// Depth-bounded random generation.
    Random,
    /// Cover every k-path (see -k).
    Kpath,
    /// A stream steered towards uncovered k-paths, round after round.
    KpathRandom,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// The inputs themselves.
    Text,
    /// JSON lines: {"index", "seed", "input" (or "input_hex"), "tree"} with the tree in the
    /// fuzzingbook/ISLa form ["<start>", [children]]; a terminal whose bytes are not
    /// UTF-8 is ["text", [], "hex"] (as in `thicket parse --format json`).
    Json,
}

/// A probability (`--hidden-probability`, `fuzz --mutate-share`): between 0 and 1.
pub fn parse_probability(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("`{text}` is not a probability between 0 and 1")),
    }
}

/// `--suffix`: a file name ending, so no path separators (nor `..`).
fn parse_suffix(suffix: &str) -> Result<String, String> {
    if suffix.contains(['/', '\\', '\0']) || suffix == ".." {
        return Err(format!(
            "{suffix:?} would make file names leave the output folder: a suffix may not contain `/`, `\\` or NUL"
        ));
    }
    Ok(suffix.to_string())
}

/// Runs `thicket generate`.
pub fn run(args: GenerateArgs) -> anyhow::Result<u8> {
    // --time counts from here: loading the spec and building the solver are part of
    // the run the user bounds.
    let started = Instant::now();
    let deadline = args.time.and_then(|t| started.checked_add(t));
    if args.k.is_some() && args.strategy == Strategy::Random {
        eprintln!(
            "error: -k sets the k-path length of --strategy kpath or kpath-random; \
             random generation has none (add --strategy kpath)"
        );
        return Ok(exit::USAGE);
    }
    let (compiled, constraints) = match args.solve.load_compiled(&args.spec) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let (mut loaded, mut antlr) = (compiled.loaded, compiled.antlr);
    if let Err(e) = thicket_driver::add_goals(&mut loaded, &args.minimize, &args.maximize) {
        return Ok(crate::spec::report(&e));
    }
    // An ANTLR grammar's inputs are separated where its lexer would merge tokens and
    // checked by its exact reading (see `thicket_antlr::AntlrProducer`).
    if let (Some(p), Some(antlr)) = (args.hidden_probability, &mut antlr) {
        antlr.set_hidden_probability(p);
    }
    // The probability steers plain random generation only.
    let steered_otherwise =
        args.strategy != Strategy::Random || args.target.is_some() || args.probabilities.is_some();
    if args.hidden_probability.is_some() && steered_otherwise {
        eprintln!(
            "error: --hidden-probability steers random generation (whitespace rules, an \
             ANTLR grammar's hidden text); it does not combine with --strategy kpath or \
             kpath-random, --target or --probabilities"
        );
        return Ok(exit::USAGE);
    }
    let config = if args.probabilities.is_some() {
        args.limits.config_or(|| 0)
    } else if let Some(antlr) = &antlr {
        args.limits
            .config_or(|| thicket_antlr::generate::target_size(antlr))
    } else {
        args.limits.config()
    };
    let options = MakerOptions {
        config,
        constraints,
        goals: !args.solve.no_constraints,
        antlr: antlr.is_some(),
        deadline,
        whitespace_probability: args
            .hidden_probability
            .unwrap_or(thicket_gen::prob::DEFAULT_WHITESPACE_PROBABILITY),
    };
    let mut makers = match Makers::new(&loaded, options) {
        Ok(makers) => makers,
        Err(e) => return Ok(report_build(e)),
    };
    let spec = &loaded.spec;
    if let Some(path) = &args.probabilities {
        if args.strategy != Strategy::Random || makers.solver.is_some() || antlr.is_some() {
            eprintln!(
                "error: --probabilities steers random generation from .fan/.bnf/.json \
                 grammars; it does not combine with --strategy kpath, constraints or .g4 \
                 specs"
            );
            return Ok(exit::USAGE);
        }
        match thicket_gen::prob::Weights::read_file(path, &spec.grammar, args.inverse) {
            Ok(weights) => makers.weights = Some(weights),
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return Ok(exit::FAILURE);
            }
        }
    }
    let (generator, solver) = (&makers.generator, makers.solver.as_ref());
    let seed = seed_or_draw(args.seed);
    let framing = if args.null {
        Framing::Separator(vec![0])
    } else if let Some(separator) = &args.separator {
        separator.clone()
    } else {
        Framing::default_for(&spec.grammar)
    };
    if let Some(dir) = &args.output {
        remove_partial_files_on_interrupt();
        if let Err(e) = thicket_driver::output::prepare_dir(dir, args.force) {
            eprintln!("error: {e}");
            return Ok(exit::FAILURE);
        }
    }
    let pool = args.jobs.pool()?;
    let json = args.format == OutputFormat::Json;
    let stdout = std::io::stdout();
    let mut sink = OutputSink {
        out: std::io::BufWriter::with_capacity(1 << 16, stdout.lock()),
        dir: args.output.clone(),
        suffix: args.suffix.clone(),
        width: 6,
        framing,
        json,
    };
    if let Some(target) = &args.target {
        return run_targeted(&args, target, generator, &loaded, seed, &mut sink);
    }
    if args.strategy != Strategy::Random {
        return run_kpath(
            &args,
            generator,
            solver,
            &loaded,
            seed,
            (started, deadline),
            &mut sink,
        );
    }
    let count = ended::count_or_default(args.count, args.time.is_some());
    // --unique on a small language: how many distinct inputs there are, known from the
    // grammar before anything is drawn (ANTLR inputs are respelled and separated after
    // generation, so their number is not the grammar's).
    let language = if args.unique && antlr.is_none() {
        ended::small_language(generator, &mut makers.weights, count)
    } else {
        None
    };
    if let Some(found) = &language {
        let note = ended::small_language_note(spec.source.name(), found, &config);
        eprintln!("note: {note}");
    }
    // What this run can make: the count asked for, or all of a small language.
    let goal = language.map_or(count, |found| found.count);
    sink.width = digits(goal.saturating_sub(1)).clamp(6, 9);
    let progress = progress_bar(goal, solver.is_some());
    let mut summary = GenSummary::new(&spec.grammar, args.stats);
    let stream = StreamConfig {
        seed,
        count: (goal != u64::MAX).then_some(goal),
        unique: args.unique.then_some(args.max_draws_factor),
        deadline,
        // JSON lines show the tree; --stats counts the k-paths of the solver's trees
        // (plain trees are made again from their streams, outside the timing).
        trees: json || (args.stats && solver.is_some()),
    };
    let mut out = StreamOutput {
        pool: &pool,
        sink: &mut sink,
        summary: &mut summary,
        written: &|| progress.inc(1),
    };
    let maker = antlr.as_ref().map(thicket_antlr::generate::InputMaker::new);
    let producer = makers.producer(&loaded, maker.as_ref());
    // ANTLR inputs and packed bits are not their trees' text: no k-paths counted.
    let state = out.write(&producer, stream, producer.inputs_are_text())?;
    let drawn = state.drawn();
    let written = state.made();
    summary.set_draws(drawn);
    sink.out.flush()?;
    progress.finish_and_clear();
    let end = ended::RunEnd {
        count,
        asked: args.count.is_some(),
        goal,
        written,
        drawn,
        stopped: state.stopped(),
        unique: args.unique.then_some(args.max_draws_factor),
        language: language.as_ref(),
        solver: solver.map(|solver| solver.config()),
        config: &config,
        seconds: started.elapsed().as_secs_f64(),
    };
    for warning in end.warnings(state.misses(), summary.budget_exhausted()) {
        eprintln!("warning: {warning}");
    }
    if args.stats {
        eprintln!("thicket: {}", summary.line(started.elapsed()));
    }
    let shortfall = end.shortfall();
    match shortfall {
        Some(why) => {
            eprintln!("error: {why}");
            Ok(exit::FAILURE)
        }
        None => Ok(exit::OK),
    }
}

/// Prints why a spec's inputs cannot be made and returns the exit code.
fn report_build(error: BuildError) -> u8 {
    let code = match &error {
        // Shown where they are, as `thicket lint` does, with the code for spec errors.
        BuildError::Generator(GeneratorRefusal::Spec { errors, .. }) => crate::spec::report(errors),
        BuildError::Unsolvable(_) => exit::BAD_SPEC,
        _ => exit::FAILURE,
    };
    if let Some(message) = error.message() {
        eprintln!("error: {message}");
    }
    code
}

/// `--target MODEL:LOCATION`: inputs aimed at a code location (see thicket-codeine).
fn run_targeted<W: Write>(
    args: &GenerateArgs,
    target: &str,
    generator: &Generator<'_>,
    loaded: &thicket_fandango::LoadedSpec,
    seed: u64,
    sink: &mut OutputSink<W>,
) -> anyhow::Result<u8> {
    let grammar = &loaded.spec.grammar;
    let Some((model_path, location)) = thicket_codeine::split_target(target) else {
        eprintln!("error: --target {target}: expected MODEL:LOCATION with MODEL an existing file");
        return Ok(exit::USAGE);
    };
    let (model, _) = match crate::codeine::load_model(model_path, Some(&args.spec.spec)) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let count = args.count.unwrap_or(10) as usize;
    let aimed = match model.aim(location, generator, count, args.tries, seed) {
        Ok(aimed) => aimed,
        Err(e) => {
            eprintln!("error: --target: {e}");
            return Ok(exit::FAILURE);
        }
    };
    let trees = &aimed.trees;
    // With bit fields, each tree's input is its bits packed into bytes; a tree whose
    // bits fill no whole byte stands for no input.
    let (inputs, loose) = thicket_driver::kpath::inputs_of(loaded, trees);
    if let Some(why) = loose {
        eprintln!(
            "warning: {} of {} targeted trees are no input and were left out: {why}",
            trees.len() - inputs.len(),
            trees.len()
        );
    }
    let mut summary = GenSummary::new(grammar, args.stats);
    sink.write_trees(&inputs, seed, grammar, &mut summary)?;
    let summary = aimed
        .stats
        .summary(trees.len(), aimed.constraints, args.tries);
    eprintln!("thicket: {summary}");
    Ok(exit::OK)
}

/// `--strategy kpath` (Algorithm 1 until every k-path that fits is covered) and
/// `--strategy kpath-random` (a stream steered to uncovered k-paths); `clock`: when
/// the run started, and the --time deadline.
fn run_kpath<W: Write>(
    args: &GenerateArgs,
    generator: &Generator<'_>,
    solver: Option<&thicket_solve::Solver<'_>>,
    loaded: &thicket_fandango::LoadedSpec,
    seed: u64,
    clock: (Instant, Option<Instant>),
    sink: &mut OutputSink<W>,
) -> anyhow::Result<u8> {
    let grammar = &loaded.spec.grammar;
    let (started, deadline) = clock;
    let k = usize::from(args.k.unwrap_or(2));
    let graph = thicket_cover::KPathGraph::new(grammar);
    // No input is begun after --time; those made are written.
    let production = match args.strategy {
        Strategy::KpathRandom => Production::Stream,
        _ => Production::Cover,
    };
    let limit = production.limit(args.count, args.time.is_some());
    let made = thicket_driver::kpath::produce(
        loaded,
        generator,
        solver,
        &graph,
        production,
        k,
        seed,
        limit,
        thicket_cover::Stop::at(deadline),
    );
    let mut summary = GenSummary::new(grammar, args.stats);
    // Bit fields packed into bytes (kpath_finish kept only trees whose bits do).
    let (inputs, _) = thicket_driver::kpath::inputs_of(loaded, &made.trees);
    sink.write_trees(&inputs, seed, grammar, &mut summary)?;
    let outcome = thicket_driver::kpath::outcome(
        &made,
        production,
        k,
        solver.is_some(),
        args.count,
        &graph,
        grammar,
        generator.config().max_depth,
    );
    eprintln!("thicket: {}", outcome.summary);
    for warning in &outcome.warnings {
        eprintln!("warning: {warning}");
    }
    if args.stats {
        eprintln!("thicket: {}", summary.line(started.elapsed()));
    }
    // -n is a count with kpath-random, a cap with kpath; no input at all is a failure
    // either way.
    if let Some(failure) = outcome.failure {
        eprintln!("error: {failure}");
        return Ok(exit::FAILURE);
    }
    Ok(exit::OK)
}

/// A progress line on stderr (a terminal only) for long runs: at least 20,000 inputs,
/// or 1,000 with constraints to solve (a few hundred to a few thousand per second),
/// or no count at all (--time alone).
fn progress_bar(count: u64, solving: bool) -> indicatif::ProgressBar {
    let long = count >= if solving { 1_000 } else { 20_000 };
    if !long || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    if count == u64::MAX {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{pos} inputs, {per_sec}, {elapsed}")
                .expect("valid template"),
        );
        return bar;
    }
    let bar = indicatif::ProgressBar::new(count);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} inputs, {per_sec}, eta {eta}",
        )
        .expect("valid template"),
    );
    bar
}
