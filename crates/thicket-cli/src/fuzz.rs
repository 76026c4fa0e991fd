//! `thicket fuzz`: a coverage-guided campaign that runs the program under test.

use crate::exit;
use crate::spec::{SolveArgs, SpecArgs};
use crate::target::TargetArgs;
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thicket_driver::Skipped;
use thicket_fuzz::FuzzConfig;
use thicket_fuzz::choice::StrategyChoice;
use thicket_fuzz::setup::CampaignParts;
use thicket_fuzz::strategy::Encoding;
use thicket_gen::Generator;

/// Arguments of `thicket fuzz`.
#[derive(Args, Debug)]
#[command(
    after_help = "The campaign runs the program on generated inputs, keeps those that \
reach new code (AFL++ edges for afl-cc builds, lines and branches for --python, methods and \
lines for --java), mutates \
their derivation trees (a rule's subtree regenerated or spliced from another kept input), \
and saves failures and hangs. OUT gets AFL's layout: queue/, crashes/, hangs/, and \
meta/<file>.json with each saved input's derivation tree and why it was kept, plus \
stats.json and plot_data.csv. Each finding is written when found, so Ctrl-C or a kill \
loses nothing; --resume continues.\n\n\
Failures do not change the exit code (0): they are in OUT/crashes and stats.json. Exit 4 \
if the target cannot be run (missing, not executable, dies at start), 3 if the spec has \
errors, 2 for usage errors.\n\n\
Examples:\n  afl-cc -o target target.c\n  \
thicket fuzz specs/json.fan -o out --seed 1 --execs 100000 -- ./target @@\n  \
thicket fuzz specs/json.fan -o out --time 10m -- ./target          (input on stdin)\n  \
thicket fuzz specs/url.fan -o out --python urllib.parse:urlsplit --python-include '*/urllib/*'\n  \
thicket fuzz specs/json.fan -o out --java com.google.gson.JsonParser.parseString \
--classpath /usr/share/java/gson.jar\n  \
thicket fuzz specs/json.fan -o out --resume --seed 1 -- ./target @@"
)]
pub struct FuzzArgs {
    #[command(flatten)]
    spec: SpecArgs,

    #[command(flatten)]
    solve: SolveArgs,

    /// Output folder (AFL layout; must not hold a campaign unless --resume). With -j,
    /// the folder of the workers' folders; with --sync-dir, not given (DIR/NAME).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        required_unless_present = "sync_dir",
        conflicts_with = "sync_dir"
    )]
    output: Option<PathBuf>,

    /// Share finds with other instances through DIR, by AFL++'s sync protocol (with
    /// `afl-fuzz -M/-S NAME -o DIR` instances or other thicket campaigns): this campaign
    /// writes DIR/NAME and runs the queue entries the others added every --sync-every,
    /// keeping those that reach new code.
    #[arg(long, value_name = "DIR", requires = "name")]
    sync_dir: Option<PathBuf>,

    /// This instance's name in --sync-dir.
    #[arg(long, value_name = "NAME", requires = "sync_dir", value_parser = thicket_fuzz::setup::instance_name)]
    name: Option<String>,

    /// Time between two imports from --sync-dir: `30s`, `5m`.
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_duration, default_value = "30s")]
    sync_every: Duration,

    /// Run N campaigns in parallel, each its own process with its own target process
    /// (OUT/worker-I, seed S+I), sharing finds every 5 s by the sync protocol; --execs
    /// and --time apply to each. The summary and OUT/stats.json (every second) combine
    /// their figures; each worker's own are in OUT/worker-I/stats.json.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: u32,

    /// Seed of every random choice [default: drawn at random and printed].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,

    /// Stop after N executions in all.
    #[arg(long, value_name = "N")]
    execs: Option<u64>,

    /// Stop after this long: `90`, `90s`, `15m`, `2h`, `500ms`. No run starts after
    /// it; the run under way ends first (within --timeout, and a candidate hang's
    /// confirmation within twice that more).
    #[arg(long, value_name = "DURATION", value_parser = crate::shared::parse_duration)]
    time: Option<Duration>,

    /// Generate without feedback (no mutation of kept inputs): the random baseline;
    /// input i is then input i of `thicket generate --seed S`.
    #[arg(long)]
    no_feedback: bool,

    /// Share of rounds that mutate a kept input instead of generating a fresh one,
    /// between 0 and 1 [default: 0.8].
    #[arg(long, value_name = "P", conflicts_with = "no_feedback",
          value_parser = crate::generate::parse_probability)]
    mutate_share: Option<f64>,

    /// Run only valid inputs: in the grammar's language (no mutation changes a
    /// terminal's bytes; by default a fifth of mutations do, to reach error handling)
    /// and satisfying the constraints (the spec's `where` blocks, -c, --constraint):
    /// each mutant is repaired by the solver, and one it cannot repair is not run.
    #[arg(long, conflicts_with = "no_feedback")]
    valid_only: bool,

    /// Byte havoc, off the grammar, on the smallest kept inputs (--strategy coverage):
    /// `auto` (once 2,000 executions keep nothing, a share of rounds growing to half),
    /// `off`, or a share of rounds from 0 to 1 (from the first kept input on).
    #[arg(long, value_name = "auto|off|SHARE", default_value = "auto",
          conflicts_with_all = ["valid_only", "no_feedback"],
          value_parser = thicket_fuzz::havoc::HavocShare::parse)]
    havoc: thicket_fuzz::havoc::HavocShare,

    /// Continue the campaign in OUT (its seed unless --seed is given, which must be the
    /// same; the same spec and target): kept inputs are run again to rebuild the
    /// coverage, then counting goes on.
    #[arg(long)]
    resume: bool,

    /// Print the figures as one JSON object per line on stdout, every second and at the
    /// end.
    #[arg(long)]
    json_stats: bool,

    /// After the campaign, minimise one saved crash per distinct failure (kind and
    /// location) into OUT/minimized/ under the crash's name, as `thicket minimize`
    /// does, with at most --minimize-runs runs each.
    #[arg(long)]
    minimize: bool,

    /// Runs of the target per minimised crash.
    #[arg(long, value_name = "N", default_value_t = 2_000, requires = "minimize")]
    minimize_runs: u64,

    /// What to run next and what the feedback means: `coverage` (keep inputs that reach
    /// new code and mutate them), `random` (uniform generation, no feedback),
    /// `probabilistic` (generation by probabilities learned from the seeds),
    /// `inverse` (the inverted probabilities), `evogfuzz` (probabilities evolved by
    /// exception feedback), `fdloop` (FdLoop: probabilities and inputs evolved by the
    /// weighted fitness of --goal); or the whitebox comparison of docs/whitebox.md:
    /// `whitebox` (grammar-based whitebox: the target's token-level path conditions,
    /// from --tokenizer, negated one by one and solved within the grammar),
    /// `whitebox-nogrammar` (the same without the grammar) and `blackbox-tokens`
    /// (random inputs of the grammar with the seeds' token counts). Same output layout
    /// for all; fdloop and evogfuzz also write OUT/generations.csv, the whitebox
    /// strategies OUT/whitebox.json.
    #[arg(long, value_name = "NAME", default_value = "coverage",
          value_parser = StrategyChoice::from_name)]
    strategy: StrategyChoice,

    /// Seed inputs the learning strategies learn probabilities from (files or
    /// folders; inputs outside the grammar are skipped with a warning) [default: 100
    /// inputs generated uniformly].
    #[arg(long, value_name = "PATH")]
    seeds: Vec<PathBuf>,

    /// FdLoop's goal: `mappings`, `coverage`, `runtime`, `exceptions`, or `multi` (all
    /// weighted 1). A single goal is weighted 10 and the others 1.
    #[arg(long, value_name = "GOAL", default_value = "multi")]
    goal: String,

    /// FdLoop: weight the --goal 0 and the others 1 (the paper's ignore-goal mode).
    #[arg(long)]
    ignore_goal: bool,

    /// FdLoop's fitness weights, overriding --goal: `MAPPINGS,COVERAGE,RUNTIME,EXCEPTIONS`.
    #[arg(long, value_name = "W,W,W,W")]
    fitness_weights: Option<String>,

    /// Inputs generated per generation [default: fdloop 5 (plus 5 mutated copies),
    /// evogfuzz 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    population: Option<u64>,

    /// Stop fdloop or evogfuzz after N generations.
    #[arg(long, value_name = "N")]
    generations: Option<u64>,

    /// FdLoop's M_max: mappings (input features x code features of a run) at which the
    /// mappings term of the fitness saturates.
    #[arg(long, value_name = "M", default_value_t = thicket_fuzz::strategy::DEFAULT_MAPPINGS_MAX)]
    mappings_max: f64,

    /// Count code and input features of every run (mappings and code_features in
    /// stats.json) with --strategy coverage too (the learning strategies always do).
    #[arg(long)]
    track_features: bool,

    /// Also write a line of OUT/plot_data.csv every N executions (for plots over
    /// executions of short campaigns).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    plot_every: Option<u64>,

    /// With the whitebox strategies: seeds generated from the grammar at the start.
    #[arg(long, value_name = "N", default_value_t = 50)]
    seed_count: usize,

    /// With the whitebox strategies: token counts of the seeds (and of blackbox-tokens
    /// inputs), `MIN-MAX`.
    #[arg(long, value_name = "MIN-MAX", default_value = "15-20", value_parser = thicket_fuzz::setup::token_range)]
    seed_tokens: (usize, usize),

    /// With the whitebox strategies: the token rules, comma-separated [default:
    /// regular rules referred to from the phrase level; see `thicket solve-tokens -h`].
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    tokens: Vec<String>,

    /// With the whitebox strategies: a stage of the target whose reach (share of runs
    /// that execute any of its lines) and line coverage whitebox.json reports,
    /// `NAME=GLOB` or `NAME=GLOB:FROM-TO` (lines); may be repeated.
    #[arg(long, value_name = "NAME=GLOB[:FROM-TO]", value_parser = thicket_fuzz::whitebox::Stage::parse)]
    stage: Vec<thicket_fuzz::whitebox::Stage>,

    /// With the whitebox strategies: conditions of one run that are negated at most.
    #[arg(long, value_name = "N", default_value_t = 500)]
    max_conditions: usize,

    #[command(flatten)]
    limits: crate::generate::GenLimits,

    #[command(flatten)]
    target: TargetArgs,
}

/// Seed trees for the learning strategies: the inputs in `paths` that parse (others
/// are reported and skipped), or 100 generated with `seed`.
fn seed_trees(
    paths: &[PathBuf],
    spec: &thicket_grammar::Spec,
    input_grammar: &thicket_driver::InputGrammar<'_>,
    generator: &Generator,
    seed: u64,
) -> Result<Vec<thicket_tree::DerivationTree>, u8> {
    if paths.is_empty() {
        return Ok(thicket_fuzz::strategy::generated_seeds(generator, seed));
    }
    let inputs = crate::inputs::InputArgs {
        inputs: paths.to_vec(),
        files_from: None,
        max_input_size: crate::inputs::DEFAULT_MAX_INPUT_SIZE,
    }
    .collect_or_report(false)?;
    let reader = crate::shared::reader_for(spec, input_grammar, Default::default())?;
    let max = crate::inputs::DEFAULT_MAX_INPUT_SIZE;
    let warn = &mut |input: &thicket_driver::files::Input, skipped| match skipped {
        Skipped::Unreadable(e) => eprintln!("warning: seed {e}; skipped"),
        Skipped::Rejected(e) => eprintln!("warning: seed {}:{e}; skipped", input.name()),
    };
    reader.seed_trees(&inputs, max, warn).map_err(|e| {
        eprintln!("error: {e}");
        exit::FAILURE
    })
}

impl FuzzArgs {
    /// FdLoop's settings as given.
    fn fdloop(&self) -> thicket_fuzz::setup::FdLoopOptions<'_> {
        thicket_fuzz::setup::FdLoopOptions {
            goal: &self.goal,
            ignore_goal: self.ignore_goal,
            fitness_weights: self.fitness_weights.as_deref(),
            population: self.population,
            generations: self.generations,
            mappings_max: self.mappings_max,
        }
    }

    /// The campaign's output folder: -o, or DIR/NAME with --sync-dir.
    fn out_dir(&self) -> PathBuf {
        match (&self.output, &self.sync_dir, &self.name) {
            (Some(out), _, _) => out.clone(),
            (None, Some(dir), Some(name)) => dir.join(name),
            _ => unreachable!("clap requires -o or --sync-dir with --name"),
        }
    }
}

/// Runs `thicket fuzz`.
pub fn run(args: FuzzArgs) -> anyhow::Result<u8> {
    if args.jobs > 1 {
        return crate::parallel::run(&args.out_dir(), args.jobs, args.seed, args.resume);
    }
    let (spec, constraints) = match args.solve.load(&args.spec) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    // The whitebox searches run in the coverage campaign's loop (its output, stats,
    // budgets); the options of the other strategies do not apply.
    let kind = args.strategy.kind();
    let given = thicket_fuzz::setup::OptionsGiven {
        no_feedback: args.no_feedback,
        mutate_share: args.mutate_share.is_some(),
        valid_only: args.valid_only,
        constraints: !constraints.is_empty(),
        sync: args.sync_dir.is_some(),
        seeds: !args.seeds.is_empty(),
    };
    let checked = args.fdloop().config();
    let fdloop = match checked.and_then(|fdloop| given.check(args.strategy).map(|()| fdloop)) {
        Ok(config) => config,
        Err(e) => return Ok(exit::usage(e)),
    };
    let target_size = thicket_fuzz::setup::default_target_size(kind);
    let config = args.limits.config_or(|| target_size);
    let generator = match Generator::new(&spec.grammar, config) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {}: {e}", spec.source.name());
            return Ok(exit::BAD_SPEC);
        }
    };
    let solver_config = thicket_fuzz::solver_config(config);
    let solver = match SolveArgs::solver(
        &spec.grammar,
        constraints,
        solver_config,
        thicket_fandango::SolverParts::default(),
        false,
    ) {
        Ok(solver) => solver,
        Err(code) => return Ok(code),
    };
    if let Some(solver) = &solver {
        let n = solver.constraints().len();
        let note = thicket_fuzz::setup::constraints_note(n, args.valid_only, args.no_feedback);
        eprintln!("thicket: {note}");
    }
    if let Err(e) = thicket_fuzz::setup::check_whitebox(
        args.strategy,
        args.target.tokenizer.is_some(),
        args.resume,
        args.sync_dir.is_some(),
    ) {
        return Ok(exit::usage(e));
    }
    let classifier = args.target.classifier()?;
    let executor = match args.target.executor_or_report(args.time) {
        Ok(executor) => executor,
        Err(code) => return Ok(code),
    };
    // Fandango's bit fields: each tree runs as its bits packed into bytes, and inputs
    // not made here are read one bit at a time.
    let input_grammar = match crate::shared::input_grammar(&spec) {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    if input_grammar.packs_bits() && args.strategy.search().is_some() {
        let error = thicket_fuzz::setup::whitebox_packed_bits_error(spec.source.name());
        eprintln!("error: {error}");
        return Ok(exit::USAGE);
    }
    let packed = match crate::shared::encoding_for(&spec, &input_grammar) {
        Ok(packed) => packed,
        Err(code) => return Ok(code),
    };
    let seed = campaign_seed(args.seed, args.resume, &args.out_dir());
    let seeds = if kind.learns() {
        match seed_trees(&args.seeds, &spec, &input_grammar, &generator, seed) {
            Ok(trees) => trees,
            Err(code) => return Ok(code),
        }
    } else {
        Vec::new()
    };
    let fuzz_config = FuzzConfig {
        seed,
        max_execs: args.execs,
        max_time: args.time,
        feedback: !args.no_feedback,
        mutate_per_mille: (args.mutate_share.unwrap_or(0.8) * 1000.0).round() as u32,
        resume: args.resume,
        valid_only: args.valid_only,
        spec_id: thicket_fuzz::spec_id(&args.spec.spec, spec.source.text()),
        target_id: args.target.identity(),
        sync: args
            .sync_dir
            .as_ref()
            .map(|dir| thicket_fuzz::sync::SyncConfig {
                dir: dir.clone(),
                name: args.name.clone().expect("clap requires --name"),
                every: args.sync_every,
            }),
        track_features: args.track_features,
        plot_every_execs: args.plot_every,
        havoc: args.havoc,
    };
    if let Some(dir) = &args.sync_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Borrowed by a whitebox search, so made before the campaign.
    let tokens;
    let whitebox = match args.strategy.search() {
        Some(search) => {
            tokens = match crate::solve_tokens::tokens_of(&spec.grammar, &args.tokens) {
                Ok(t) => t,
                Err(e) => return Ok(exit::usage(e)),
            };
            let config = thicket_fuzz::whitebox::WhiteboxConfig {
                search,
                seeds: args.seed_count,
                seed_tokens: args.seed_tokens,
                stages: args.stage.clone(),
                max_conditions: args.max_conditions,
            };
            Some((&tokens, config))
        }
        None => None,
    };
    let parts = CampaignParts {
        generator: &generator,
        solver: solver.as_ref(),
        encoding: packed.as_ref().map(|p| p as &dyn Encoding),
        strategy: args.strategy,
        seeds: &seeds,
        fdloop,
        whitebox,
    };
    let judge = thicket_exec::Judge::new(executor, classifier);
    let mut campaign = match parts.campaign(judge, fuzz_config, &args.out_dir()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::FAILURE);
        }
    };
    eprintln!("thicket: {}", campaign.stats().executor);
    if args.resume {
        let resumed = thicket_fuzz::report::resumed_line(campaign.stats());
        eprintln!("thicket: {resumed}");
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        ctrlc::set_handler(move || {
            // A second Ctrl-C stops at once; everything found is already on disk.
            if stop.swap(true, Ordering::SeqCst) {
                // Destructors do not run on this exit: end the target (and what it
                // started) and remove the temporary folders here.
                thicket_exec::cleanup_now();
                std::process::exit(130);
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let bar = status_bar();
    let json = args.json_stats;
    let mut last_json = std::time::Instant::now();
    let result = campaign.run(&stop, |stats| {
        bar.set_message(thicket_fuzz::report::status_line(stats));
        if json && last_json.elapsed() >= Duration::from_secs(1) {
            last_json = std::time::Instant::now();
            println!("{}", serde_json::to_string(stats).expect("stats serialize"));
        }
    });
    bar.finish_and_clear();
    let stats = match result {
        Ok(stats) => stats,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "thicket: findings so far are in {}",
                campaign.out_dir().display()
            );
            return Ok(exit::FAILURE);
        }
    };
    if json {
        println!("{}", serde_json::to_string(&stats)?);
    }
    for line in
        thicket_fuzz::report::summary_lines(&stats, &args.out_dir(), stop.load(Ordering::SeqCst))
    {
        eprintln!("{line}");
    }
    if args.strategy.search().is_some() {
        for line in thicket_fuzz::whitebox::summary_lines(&stats.strategy_stats) {
            eprintln!("thicket: {line}");
        }
    }
    if args.minimize && !stop.load(Ordering::SeqCst) {
        let result = campaign.minimize_crashes(args.minimize_runs, &mut |event| {
            eprintln!("{}", event.line())
        });
        result?;
    }
    Ok(exit::OK)
}

fn status_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// The seed of a campaign in `out`: `--seed`, else with `--resume` the one in its
/// stats.json, else a drawn one (printed).
pub fn campaign_seed(seed: Option<u64>, resume: bool, out: &std::path::Path) -> u64 {
    seed.or_else(|| resume.then(|| thicket_fuzz::recorded_seed(out)).flatten())
        .unwrap_or_else(|| crate::shared::seed_or_draw(None))
}
