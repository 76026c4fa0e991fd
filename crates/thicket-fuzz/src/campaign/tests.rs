//! The campaign's loop and bookkeeping on a scripted target (no process, no Python).

use super::*;
use crate::strategy::{Ctx, RunReport, Strategy};
use std::path::Path;
use thicket_exec::{Classifier, ExecError, Executor, Outcome, Status, Trace};
use thicket_gen::{GenConfig, GenRng};
use thicket_grammar::load_spec_text;

const WORDS: &str = "<start> ::= <word> (\" \" <word>)*\n\
    <word> ::= \"alpha\" | \"beta\" | \"gamma\" | \"delta\" | \"boom\"\n";

const MAP: usize = 256;

/// A target whose edges are the input's byte pairs, which crashes on `boom`.
struct Bigrams {
    map: Vec<u8>,
    timeout: Duration,
}

fn edges_of(input: &[u8]) -> Vec<usize> {
    input
        .windows(2)
        .map(|w| (usize::from(w[0]) * 31 + usize::from(w[1])) % MAP)
        .collect()
}

impl Executor for Bigrams {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        self.map.iter_mut().for_each(|b| *b = 0);
        for e in edges_of(input) {
            self.map[e] = 1;
        }
        let boom = input.windows(4).any(|w| w == b"boom");
        let status = if boom {
            Status::Signaled(11)
        } else {
            Status::Exited(0)
        };
        Ok(Outcome::new(status, Duration::from_micros(10)))
    }
    fn trace(&self) -> Trace<'_> {
        Trace::Edges(&self.map)
    }
    fn describe(&self) -> String {
        "bigrams".into()
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }
}

fn judge() -> Judge {
    let executor = Bigrams {
        map: vec![0; MAP],
        timeout: Duration::from_millis(100),
    };
    Judge::new(Box::new(executor), Classifier::default())
}

fn config(execs: u64) -> FuzzConfig {
    FuzzConfig {
        seed: 7,
        max_execs: Some(execs),
        ..FuzzConfig::default()
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("id:"))
                .map(|e| {
                    let bytes = std::fs::read(e.path()).unwrap();
                    (e.file_name().to_string_lossy().into_owned(), bytes)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn run(
    generator: &Generator<'_>,
    config: FuzzConfig,
    out: &Path,
    strategy: Option<Box<dyn Strategy + '_>>,
) -> Stats {
    let mut campaign = Campaign::new(generator, judge(), config, out).unwrap();
    if let Some(s) = strategy {
        campaign = campaign.with_strategy(s).unwrap();
    }
    campaign.run(&AtomicBool::new(false), |_| {}).unwrap()
}

#[test]
fn kept_inputs_hold_the_campaigns_coverage_and_crashes_add_none() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stats = run(&generator, config(300), &out, None);
    assert_eq!(stats.execs, 300);
    let queue = files(&out.join("queue"));
    assert_eq!(queue.len(), stats.queue);
    assert!(stats.queue > 3, "{stats:?}");
    // The union of the kept inputs' edges is the campaign's coverage, and no kept
    // input crashes: a crash's coverage does not count.
    let mut union = std::collections::BTreeSet::new();
    for (_, bytes) in &queue {
        assert!(!bytes.windows(4).any(|w| w == b"boom"));
        union.extend(edges_of(bytes));
    }
    assert_eq!(Some(union.len()), stats.coverage.edges);
    // A signal without a location is saved once per new code it reaches.
    assert!(stats.crash_files >= 1 && stats.failing_runs >= stats.crash_files as u64);
    assert!(!files(&out.join("crashes")).is_empty());
    assert!(stats.mean_queue_input_size > 0.0);
    let written: Stats = crate::combined::read_stats(&out).unwrap();
    assert_eq!(written.execs, 300);
    assert_eq!(written.queue, stats.queue);
}

#[test]
fn the_same_seed_makes_the_same_campaign() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let contents = |name: &str| {
        let out = dir.path().join(name);
        run(&generator, config(200), &out, None);
        files(&out.join("queue"))
            .into_iter()
            .map(|(_, bytes)| bytes)
            .collect::<Vec<_>>()
    };
    assert_eq!(contents("a"), contents("b"));
}

#[test]
fn a_resumed_campaign_rebuilds_its_coverage_and_counts_on() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = run(&generator, config(150), &out, None);
    let resumed = Campaign::new(
        &generator,
        judge(),
        FuzzConfig {
            resume: true,
            ..config(300)
        },
        &out,
    )
    .unwrap();
    // Before any new round: the kept inputs, run again, reach the same coverage.
    assert_eq!(resumed.stats().coverage.edges, first.coverage.edges);
    assert_eq!(resumed.stats().queue, first.queue);
    assert_eq!(resumed.stats().execs, 150);
    let mut resumed = resumed;
    let second = resumed.run(&AtomicBool::new(false), |_| {}).unwrap();
    assert_eq!(second.execs, 300);
    assert!(second.coverage.edges >= first.coverage.edges);
}

/// [`Bigrams`] plus one edge of its own (past the bigrams' map) for a run of 8 equal
/// bytes: outside the language of [`WORDS`], and more bytes written next to each other
/// than the tree mutations' terminal edits (one byte each, at most three) write.
struct BigramsAndRuns(Bigrams);

impl Executor for BigramsAndRuns {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        let outcome = self.0.run(input)?;
        let run = input.windows(8).any(|w| w.iter().all(|&b| b == w[0]));
        self.0.map[MAP] = u8::from(run);
        Ok(outcome)
    }
    fn trace(&self) -> Trace<'_> {
        self.0.trace()
    }
    fn describe(&self) -> String {
        "bigrams and runs".into()
    }
    fn timeout(&self) -> Duration {
        self.0.timeout()
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.0.set_timeout(timeout);
    }
}

/// A campaign of `execs` executions on [`BigramsAndRuns`] with `havoc`: its figures and
/// its queue's inputs.
fn run_on_runs(havoc: crate::havoc::HavocShare, execs: u64) -> (Stats, Vec<(String, Vec<u8>)>) {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let executor = BigramsAndRuns(Bigrams {
        map: vec![0; MAP + 1],
        timeout: Duration::from_millis(100),
    });
    let judge = Judge::new(Box::new(executor), Classifier::default());
    let config = FuzzConfig {
        havoc,
        ..config(execs)
    };
    let mut campaign = Campaign::new(&generator, judge, config, &out).unwrap();
    let stats = campaign.run(&AtomicBool::new(false), |_| {}).unwrap();
    (stats, files(&out.join("queue")))
}

#[test]
fn havoc_reaches_what_the_grammar_does_not_once_the_campaign_stalls() {
    use crate::havoc::HavocShare;
    let has_run = |bytes: &[u8]| bytes.windows(8).any(|w| w.iter().all(|&b| b == w[0]));
    let (with, queue) = run_on_runs(HavocShare::Auto, 20_000);
    let (without, queue_off) = run_on_runs(HavocShare::Off, 20_000);
    assert!(
        queue
            .iter()
            .any(|(name, bytes)| name.ends_with("op:havoc,+cov") && has_run(bytes)),
        "{:?}",
        with.ops
    );
    assert!(!queue_off.iter().any(|(_, bytes)| has_run(bytes)));
    assert!(!without.ops.contains_key("havoc"), "{:?}", without.ops);
    assert!(with.coverage.edges > without.coverage.edges);
    // Havoc's runs and finds are counted, and when it started.
    let havoc = &with.ops["havoc"];
    assert!(havoc.kept >= 1 && havoc.runs > havoc.kept, "{havoc:?}");
    let first = with.strategy_stats["havoc"]["first_round"]
        .as_u64()
        .unwrap();
    assert!(first >= crate::havoc::STALL_EXECS, "{first}");
    assert!(without.strategy_stats["havoc"]["first_round"].is_null());
    // Up to the first havoc round the campaigns are the same: havoc drew nothing.
    let execs_of = |name: &str| {
        let field = name.split(',').find_map(|f| f.strip_prefix("execs:"));
        field.unwrap().parse::<u64>().unwrap()
    };
    let before: Vec<&Vec<u8>> = queue
        .iter()
        .filter(|(name, _)| execs_of(name) <= first)
        .map(|(_, bytes)| bytes)
        .collect();
    let off: Vec<&Vec<u8>> = queue_off.iter().map(|(_, bytes)| bytes).collect();
    assert!(!before.is_empty() && off.starts_with(&before));
}

/// [`BigramsAndRuns`] calling what overlaps a run before running it, as the forkserver
/// does once the target is started.
struct Overlapping(BigramsAndRuns);

impl Executor for Overlapping {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        self.0.run(input)
    }
    fn run_overlapping(
        &mut self,
        input: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<Outcome, ExecError> {
        meanwhile();
        self.0.run(input)
    }
    fn trace(&self) -> Trace<'_> {
        self.0.trace()
    }
    fn describe(&self) -> String {
        "overlapping".into()
    }
    fn timeout(&self) -> Duration {
        self.0.timeout()
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.0.set_timeout(timeout);
    }
}

/// The coverage-guided strategy made to wait for each run before making the next input.
#[derive(Default)]
struct MakesAfterEachRun(strategy::CoverageGuided);

impl Strategy for MakesAfterEachRun {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn next(&mut self, ctx: &Ctx<'_, '_>, rng: &mut GenRng) -> Option<Candidate> {
        self.0.next(ctx, rng)
    }
    fn observe(&mut self, report: &RunReport<'_>) {
        self.0.observe(report);
    }
    fn wants_features(&self) -> bool {
        self.0.wants_features()
    }
    fn summary(&self) -> serde_json::Value {
        self.0.summary()
    }
}

#[test]
fn inputs_made_while_the_target_runs_are_those_made_after_it() {
    // A campaign is reproducible from its seed whether each next input is made while
    // the target runs (kept runs making it again) or after: the same queue, figures
    // and havoc stage, through the stall and havoc's share growing every execution.
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let campaign = |name: &str, after: bool| {
        let out = dir.path().join(name);
        let executor = Overlapping(BigramsAndRuns(Bigrams {
            map: vec![0; MAP + 1],
            timeout: Duration::from_millis(100),
        }));
        let judge = Judge::new(Box::new(executor), Classifier::default());
        let mut campaign = Campaign::new(&generator, judge, config(12_000), &out).unwrap();
        if after {
            campaign = campaign
                .with_strategy(Box::<MakesAfterEachRun>::default())
                .unwrap();
        }
        let stats = campaign.run(&AtomicBool::new(false), |_| {}).unwrap();
        // Names without their time field, which the clock decides.
        let queue: Vec<(String, Vec<u8>)> = files(&out.join("queue"))
            .into_iter()
            .map(|(name, bytes)| {
                let fields: Vec<&str> = name
                    .split(',')
                    .filter(|f| !f.starts_with("time:"))
                    .collect();
                (fields.join(","), bytes)
            })
            .collect();
        (stats, queue)
    };
    let (ahead, queue_ahead) = campaign("ahead", false);
    let (after, queue_after) = campaign("after", true);
    assert!(ahead.ops.contains_key("havoc"), "{:?}", ahead.ops);
    assert!(queue_ahead.len() > 10, "{}", queue_ahead.len());
    assert_eq!(queue_ahead, queue_after);
    assert_eq!(format!("{:?}", ahead.ops), format!("{:?}", after.ops));
    assert_eq!(ahead.rounds, after.rounds);
    assert_eq!(ahead.strategy_stats, after.strategy_stats);
}

#[test]
fn havoc_is_off_in_valid_only_campaigns() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = FuzzConfig {
        valid_only: true,
        havoc: crate::havoc::HavocShare::Fixed(1000),
        ..config(500)
    };
    let stats = run(&generator, config, &dir.path().join("out"), None);
    assert!(!stats.ops.contains_key("havoc"), "{:?}", stats.ops);
}

/// A strategy giving bytes without trees, a fixed number of times.
struct Scripted {
    left: Vec<&'static [u8]>,
    reports: Vec<(String, bool, usize)>,
}

impl Strategy for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn next(&mut self, _ctx: &Ctx<'_, '_>, _rng: &mut GenRng) -> Option<Candidate> {
        let bytes = self.left.pop()?;
        Some(Candidate::bytes(bytes.to_vec(), "script", None))
    }
    fn observe(&mut self, report: &RunReport<'_>) {
        let mut edges = 0;
        report.trace.for_each_feature(|_| edges += 1);
        self.reports.push((
            String::from_utf8_lossy(report.input.bytes()).into_owned(),
            report.counts_for_coverage,
            edges,
        ));
    }
    fn finished(&self) -> bool {
        self.left.is_empty()
    }
    fn summary(&self) -> serde_json::Value {
        serde_json::json!({ "reports": self.reports.len() })
    }
    fn session_files(&mut self) -> Vec<(String, Vec<u8>)> {
        vec![("scripted.txt".into(), b"done\n".to_vec())]
    }
}

#[test]
fn a_strategy_sees_each_runs_trace_and_verdict_and_writes_its_files() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut campaign = Campaign::new(&generator, judge(), config(100), &out)
        .unwrap()
        .with_strategy(Box::new(Scripted {
            left: vec![b"boom", b"alpha beta", b"ab"],
            reports: Vec::new(),
        }))
        .unwrap();
    let stats = campaign.run(&AtomicBool::new(false), |_| {}).unwrap();
    // The strategy finished after three inputs, well within the budget.
    assert_eq!(stats.execs, 3);
    assert_eq!(stats.strategy, "scripted");
    assert_eq!(stats.strategy_stats["reports"], 3);
    assert_eq!(stats.ops["script"].runs, 3);
    // Inputs without trees are kept and saved like the others.
    assert_eq!(stats.queue, 2);
    assert_eq!(stats.crash_files, 1);
    assert_eq!(
        std::fs::read(out.join("scripted.txt")).unwrap(),
        b"done\n".to_vec()
    );
}

#[test]
fn own_time_per_execution_is_reported() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stats = run(&generator, config(100), &dir.path().join("out"), None);
    assert!(stats.own_us_per_exec > 0.0, "{stats:?}");
    // The scripted target reports 10 us a run.
    assert!(
        (stats.target_time_s - 100.0 * 10e-6).abs() < 1e-9,
        "{stats:?}"
    );
}

#[test]
fn the_smallest_input_per_feature_is_favoured() {
    let entry = |id| Entry {
        id,
        bytes: Box::default(),
        tree: None,
        favoured: false,
    };
    let mut corpus = vec![entry(0), entry(1), entry(2)];
    let mut favoured = Favoured::default();
    // Entry 0 (10 bytes) reaches edges 1 and 2; entry 1 (5 bytes) edge 2; entry 2 (20
    // bytes) edges 1 and 2: nothing smaller.
    assert!(favoured.rate(0, 10, &Trace::Edges(&[0, 1, 1, 0])));
    assert!(favoured.rate(1, 5, &Trace::Edges(&[0, 0, 1, 0])));
    assert!(!favoured.rate(2, 20, &Trace::Edges(&[0, 1, 1, 0])));
    favoured.mark(&mut corpus);
    let marks: Vec<bool> = corpus.iter().map(|e| e.favoured).collect();
    assert_eq!(marks, [true, true, false]);
    // A smaller input for edge 1 takes entry 0's place.
    corpus.push(entry(3));
    assert!(favoured.rate(3, 2, &Trace::Edges(&[0, 1, 0, 0])));
    favoured.mark(&mut corpus);
    let marks: Vec<bool> = corpus.iter().map(|e| e.favoured).collect();
    assert_eq!(marks, [false, true, false, true]);
}

#[test]
fn crashes_are_minimised_once_per_failure_into_minimized() {
    let grammar = load_spec_text("w.fan", WORDS.as_bytes()).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut campaign = Campaign::new(&generator, judge(), config(300), &out).unwrap();
    let stats = campaign.run(&AtomicBool::new(false), |_| {}).unwrap();
    assert!(stats.crash_files >= 1, "{stats:?}");
    let mut minimized = Vec::new();
    campaign
        .minimize_crashes(500, &mut |event| {
            if let crate::minimize::CrashEvent::Minimized { name, to, .. } = event {
                minimized.push((name.to_string(), to));
            }
        })
        .unwrap();
    // One failure (a signal without a location): one minimised crash, the word alone.
    assert_eq!(minimized.len(), 1, "{minimized:?}");
    let written = files(&out.join("minimized"));
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].0, minimized[0].0);
    assert_eq!(written[0].1, b"boom");
}

/// A word, then a word nested seven rules deep: at a generation depth of 10 the second
/// word has at most two letters, the first up to eight.
const NESTED_TAIL: &str = "<start> ::= <word> \":\" <deep>\n\
    <deep> ::= <d1>\n<d1> ::= <d2>\n<d2> ::= <d3>\n<d3> ::= <d4>\n<d4> ::= <d5>\n\
    <d5> ::= <word>\n\
    <word> ::= <letter> | <letter> <word>\n\
    <letter> ::= \"k\" | \"m\" | \"p\" | \"w\"\n";

/// The edge [`LongTail`] reports for a second word of four letters or more, three of
/// them different.
const LONG_TAIL_EDGE: usize = 200;

/// Whether the second word of a [`NESTED_TAIL`] input has four letters or more, three
/// of them different.
fn has_long_tail(input: &[u8]) -> bool {
    let Some(colon) = input.iter().position(|&b| b == b':') else {
        return false;
    };
    let tail = &input[colon + 1..];
    let letters = tail.iter().all(|b| b"kmpw".contains(b));
    let distinct = b"kmpw".iter().filter(|b| tail.contains(b)).count();
    letters && tail.len() >= 4 && distinct >= 3
}

/// A target of [`NESTED_TAIL`] with an edge per length of the first word, and
/// [`LONG_TAIL_EDGE`] for a second word that only a first word spliced into its place
/// makes: generation and regeneration keep it within two letters, recursion repeats
/// its first letter (two different letters at most), and byte edits write none of
/// its letters.
struct LongTail(Bigrams);

impl Executor for LongTail {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        self.0.map.iter_mut().for_each(|b| *b = 0);
        let head = input.iter().take_while(|&&b| b != b':').count();
        self.0.map[head.min(100)] = 1;
        self.0.map[LONG_TAIL_EDGE] = u8::from(has_long_tail(input));
        Ok(Outcome::new(Status::Exited(0), Duration::from_micros(10)))
    }
    fn trace(&self) -> Trace<'_> {
        self.0.trace()
    }
    fn describe(&self) -> String {
        "long tail".into()
    }
    fn timeout(&self) -> Duration {
        self.0.timeout()
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.0.set_timeout(timeout);
    }
}

#[test]
fn splices_may_take_a_mutant_past_the_generation_depth() {
    let grammar = load_spec_text("tail.fan", NESTED_TAIL.as_bytes()).unwrap();
    let gen_config = GenConfig {
        max_depth: 10,
        ..GenConfig::default()
    };
    let generator = Generator::new(&grammar, gen_config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let executor = LongTail(Bigrams {
        map: vec![0; MAP],
        timeout: Duration::from_millis(100),
    });
    let judge = Judge::new(Box::new(executor), Classifier::default());
    // Havoc's byte splices could copy the first word over the second: tree splices alone.
    let config = FuzzConfig {
        havoc: crate::havoc::HavocShare::Off,
        ..config(3000)
    };
    let mut campaign = Campaign::new(&generator, judge, config, &out).unwrap();
    let stats = campaign.run(&AtomicBool::new(false), |_| {}).unwrap();
    let queue = files(&out.join("queue"));
    let long_tail = queue.iter().find(|(_, bytes)| has_long_tail(bytes));
    let (name, bytes) = long_tail.unwrap_or_else(|| panic!("{:?}", stats.ops));
    assert!(name.contains("splice"), "{name}");
    // Deeper than generation goes, and still a tree of the grammar.
    let parser = thicket_parse::Parser::new(&grammar, Default::default()).unwrap();
    let tree = parser.parse(bytes).unwrap().tree();
    assert!(
        tree.depth(&grammar) > 10,
        "{}",
        String::from_utf8_lossy(bytes)
    );
}
