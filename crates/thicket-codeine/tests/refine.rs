//! The refinement loop against a program whose location depends on input structure:
//! a scripted executor covers `f` when the input holds an `a`, a `b` and an `e` and no
//! `c` (about 2 % of random inputs of the grammar below).

use std::time::Duration;
use thicket_codeine::{LearnConfig, Phase, RefineConfig, Refiner, TrainingSet, input_paths};
use thicket_cover::KPathGraph;
use thicket_exec::{
    Classifier, ExecError, Executor, Judge, Location, LocationKind, Outcome, Status, Trace,
};
use thicket_gen::{ChoicePolicy, GenConfig, Generator};
use thicket_parse::Parser;

const SPEC: &[u8] = b"<start> ::= <node>\n\
    <node> ::= <leaf> | \"(\" <node> \" \" <node> \")\"\n\
    <leaf> ::= \"a\" | \"b\" | \"c\" | \"d\" | \"e\"";

/// Covers `function t.py:f` when `covers` says so, in `percent` of 100 runs (drawn from
/// the run's number: no input tells which), `function t.py:main` always.
struct Scripted {
    covers: fn(&[u8]) -> bool,
    percent: u64,
    last: bool,
    runs: u64,
}

/// A number from 0 to 99 drawn from `n` (SplitMix64's finaliser).
fn draw(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % 100
}

impl Executor for Scripted {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        self.runs += 1;
        self.last = (self.covers)(input) && draw(self.runs) < self.percent;
        Ok(Outcome::new(Status::Exited(0), Duration::from_millis(1)))
    }
    fn trace(&self) -> Trace<'_> {
        Trace::None
    }
    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        let at = |name: &str| Location {
            kind: LocationKind::Function,
            file: "t.py".into(),
            name: name.into(),
        };
        out.push(at("main"));
        if self.last {
            out.push(at("f"));
        }
        true
    }
    fn describe(&self) -> String {
        "scripted".into()
    }
    fn timeout(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn set_timeout(&mut self, _: Duration) {}
}

fn rare(input: &[u8]) -> bool {
    input.contains(&b'a')
        && input.contains(&b'b')
        && input.contains(&b'e')
        && !input.contains(&b'c')
}

/// The loop's settings for a goal, a budget of executions and a learning seed: rounds
/// of 50 aimed inputs, 2-paths.
fn aiming(goal: f64, max_executions: u64, seed: u64) -> RefineConfig {
    RefineConfig {
        goal,
        max_executions,
        batch: 50,
        learn: LearnConfig {
            k: 2,
            seed,
            ..LearnConfig::default()
        },
        ..RefineConfig::default()
    }
}

/// The loop's result on `covers`, from 100 random training inputs (seed 3).
fn refine(covers: fn(&[u8]) -> bool, config: RefineConfig) -> thicket_codeine::Refined {
    refine_on(SPEC, covers, config)
}

/// [`refine`] with the grammar `spec`.
fn refine_on(
    spec: &[u8],
    covers: fn(&[u8]) -> bool,
    config: RefineConfig,
) -> thicket_codeine::Refined {
    refine_flaky(spec, covers, 100, config)
}

/// [`refine_on`] with a program that reaches the location in `percent` of 100 runs of
/// an input `covers` accepts (the training inputs' labels drawn the same way).
fn refine_flaky(
    spec: &[u8],
    covers: fn(&[u8]) -> bool,
    percent: u64,
    config: RefineConfig,
) -> thicket_codeine::Refined {
    let grammar = thicket_grammar::load_spec_text("t.fan", spec).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let aim_generator = Generator::new(
        &grammar,
        GenConfig {
            policy: ChoicePolicy::Uniform,
            ..GenConfig::default()
        },
    )
    .unwrap();
    let parser = Parser::new(&grammar, Default::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let mut training = TrainingSet::default();
    for i in 0..100 {
        let (tree, _) = generator.generate_tree(&mut Generator::rng_for(3, i));
        let text = tree.bytes().to_vec();
        let paths = input_paths(&parser, &graph, &text, 2).ok();
        let covered = covers(&text) && draw(u64::MAX - i) < percent;
        training.push(text, paths, covered);
    }
    let executor = Scripted {
        covers,
        percent,
        last: false,
        runs: 0,
    };
    let mut judge = Judge::new(Box::new(executor), Classifier::default());
    let refiner = Refiner {
        generator: &generator,
        aim_generator: &aim_generator,
        parser: &parser,
        graph: &graph,
        k: 2,
    };
    let refined = refiner
        .refine(&mut judge, "function t.py:f", training, config, &mut |_| {})
        .unwrap();
    assert_eq!(
        judge.counts().runs,
        refined.executions,
        "every execution goes through the judge"
    );
    refined
}

#[test]
fn a_rare_location_is_gathered_for_then_aimed_at_until_the_goal() {
    let config = aiming(0.9, 5000, 1);
    let refined = refine(rare, config);
    assert!(refined.reached_goal(), "{:#?}", refined.rounds);
    assert!(refined.executions <= 5000);
    // Too few covering inputs at first: inputs are drawn before the first tree.
    assert_ne!(
        refined.rounds[0].phase,
        Phase::Aimed,
        "{:#?}",
        refined.rounds
    );
    let last = refined.rounds.last().unwrap();
    assert_eq!(last.phase, Phase::Aimed);
    // Every input the loop ran is reported, with whether it reached the location.
    assert_eq!(refined.added.len() as u64, refined.executions);
    assert!(refined.added.iter().all(|(text, hit)| rare(text) == *hit));
    let (location, _) = refined.location.expect("a tree at the end");
    // The goal is reached over two rounds or more of one tree, the first of which
    // reached it on its own, and the lower bound of them pooled is at the goal.
    let evidence = refined.evidence.clone().expect("the kept tree's rounds");
    assert!(evidence.rounds.len() >= 2, "{evidence:?}");
    assert!(evidence.lower_bound() >= 0.9, "{evidence:?}");
    let tree_rounds = &refined.rounds[refined.rounds.len() - evidence.rounds.len()..];
    assert!(tree_rounds.iter().all(|r| r.phase == Phase::Aimed));
    let (first_hits, first_inputs) = evidence.rounds[0];
    assert!(first_hits * 10 >= first_inputs * 9, "{evidence:?}");
    // The tree is the one that aimed them all (learned before their inputs ran), not
    // one learned again from them.
    let run_in_trial: u32 = tree_rounds.iter().map(|r| r.inputs - r.run_before).sum();
    assert_eq!(
        u64::from(location.inputs),
        100 + refined.executions - u64::from(run_in_trial)
    );
    assert!(location.covered >= thicket_codeine::MIN_POSITIVES);
    assert!(
        location.validation.is_some(),
        "the final tree is cross-validated"
    );
    // The same seed, the same loop.
    let again = refine(rare, config);
    assert_eq!(again.rounds, refined.rounds);
}

#[test]
fn a_location_nothing_reaches_spends_the_budget_and_says_so() {
    let config = RefineConfig {
        max_executions: 300,
        batch: 100,
        learn: LearnConfig {
            k: 2,
            ..LearnConfig::default()
        },
        ..RefineConfig::default()
    };
    let refined = refine(|text| text.starts_with(b"zz"), config);
    assert!(!refined.reached_goal());
    assert_eq!(refined.executions, 300);
    assert!(refined.location.is_none());
    assert!(refined.rounds.iter().all(|r| r.phase == Phase::Random));
}

/// Covered by a pair of `d` leaves, `(d d)`: the two children of one node alike, which
/// the presence of paths cannot say (every input with two `d` leaves has the same
/// paths).
fn twin_d(input: &[u8]) -> bool {
    input.windows(5).any(|w| w == b"(d d)")
}

#[test]
fn a_condition_paths_cannot_express_is_hit_by_mutating_covering_inputs() {
    let config = aiming(0.9, 2000, 2);
    let refined = refine(twin_d, config);
    assert!(refined.reached_goal(), "{:#?}", refined.rounds);
    let (location, _) = refined.location.expect("a tree at the end");
    // The kept tree carries covering inputs to mutate, each one that reached it.
    let exemplars: Vec<&String> = location.exemplars.iter().flat_map(|e| &e.inputs).collect();
    assert!(!exemplars.is_empty());
    assert!(exemplars.iter().all(|text| twin_d(text.as_bytes())));
}

/// [`SPEC`] with twelve leaves, seven of which keep [`valid_with_a`] from covering.
const MANY_LEAVES: &[u8] = b"<start> ::= <node>\n\
    <node> ::= <leaf> | \"(\" <node> \" \" <node> \")\"\n\
    <leaf> ::= \"a\" | \"b\" | \"c\" | \"d\" | \"e\" | \"f\" | \"g\" | \"h\" | \"i\" | \"j\" | \"k\" | \"l\"";

/// Covered by an `a` when no leaf is one of `f` to `l`: seven paths absent at once,
/// more than a tree of depth 5 says on the way to one leaf (as every octet of an
/// address must be in range for the address to be read).
fn valid_with_a(input: &[u8]) -> bool {
    input.contains(&b'a') && !input.iter().any(|c| (b'f'..=b'l').contains(c))
}

#[test]
fn a_location_that_needs_many_paths_absent_is_aimed_at_without_any_of_them() {
    let config = aiming(0.95, 2000, 4);
    let refined = refine_on(MANY_LEAVES, valid_with_a, config);
    assert!(refined.reached_goal(), "{:#?}", refined.rounds);
    let (location, features) = refined.location.expect("a tree at the end");
    // The paths no covering input has are kept, and every aim forbids them.
    let grammar = thicket_grammar::load_spec_text("t.fan", MANY_LEAVES).unwrap();
    let leaf_text = |f: u32| {
        let path = &features[f as usize];
        grammar
            .display_expr(thicket_grammar::ExprId::from_index(
                *path.last().unwrap() as usize
            ))
            .trim_matches('"')
            .to_string()
    };
    let blocked: Vec<String> = location.blocked.iter().map(|&f| leaf_text(f)).collect();
    for letter in ["f", "g", "h", "i", "j", "k", "l"] {
        assert!(
            blocked.iter().any(|b| b == letter),
            "{letter} not in {blocked:?}"
        );
    }
    for constraint in location.constraints(&features) {
        for &f in &location.blocked {
            assert!(constraint.absent.contains(&f));
        }
    }
}

#[test]
fn a_tree_learned_from_longer_paths_read_keeps_to_its_path_length() {
    let grammar = thicket_grammar::load_spec_text("t.fan", SPEC).unwrap();
    let generator = Generator::new(&grammar, GenConfig::default()).unwrap();
    let parser = Parser::new(&grammar, Default::default()).unwrap();
    let graph = KPathGraph::new(&grammar);
    let read = |k: usize| {
        let mut training = TrainingSet::default();
        for i in 0..200 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            let text = tree.bytes().to_vec();
            let paths = input_paths(&parser, &graph, &text, k).ok();
            let covered = rare(&text);
            training.push(text, paths, covered);
        }
        training
    };
    let config = LearnConfig {
        k: 2,
        seed: 1,
        ..LearnConfig::default()
    };
    // Paths read up to 4 elements, learned up to 2: the tree of paths read up to 2.
    let short = read(2).learn("function t.py:f", config, 1, 2).unwrap();
    let long = read(4).learn("function t.py:f", config, 1, 2).unwrap();
    assert!(long.1.iter().all(|p| p.len() <= 2));
    assert_eq!(short, long);
}

/// Two kinds of input: `x` and a digit (ten texts, alike in their paths) or a run of
/// `y`s.
const SMALL_LEAF: &[u8] = b"<start> ::= <small> | <big>\n\
    <small> ::= \"x\" r\"[0-9]\"\n\
    <big> ::= \"y\" <big> | \"y\"";

/// Covered by seven of the ten `x` texts: no path tells them from the other three, so
/// every tree's covering leaf is "an `x` text", which misses three times in ten.
fn x_below_7(input: &[u8]) -> bool {
    input.len() == 2 && input[0] == b'x' && (b'0'..=b'6').contains(&input[1])
}

#[test]
fn a_leaf_whose_inputs_were_all_run_before_ends_the_loop_within_its_draws() {
    let config = RefineConfig {
        goal: 0.9,
        max_executions: 2000,
        batch: 50,
        // A safety net only: the loop must end long before it.
        deadline: Some(std::time::Instant::now() + Duration::from_secs(120)),
        learn: LearnConfig {
            k: 2,
            seed: 6,
            ..LearnConfig::default()
        },
        ..RefineConfig::default()
    };
    let refined = refine_on(SMALL_LEAF, x_below_7, config);
    // The training inputs hold every `x` text, so the aimed rounds find no new input
    // and spend no execution (their hit rate that of their texts as run before): the
    // searches have their own budget.
    assert_eq!(refined.executions, 0);
    let aimed: Vec<&thicket_codeine::Round> = refined
        .rounds
        .iter()
        .filter(|r| r.phase == Phase::Aimed)
        .collect();
    assert!(
        aimed
            .iter()
            .all(|r| r.inputs > 0 && r.run_before == r.inputs)
    );
    assert_eq!(
        refined.ending,
        thicket_codeine::Ending::DrawsSpent,
        "{} rounds",
        refined.rounds.len()
    );
    assert!(!refined.reached_goal());
    let aimed = aimed.len();
    let most = (thicket_codeine::DRAWS_PER_INPUT as u64 * config.max_executions)
        .div_ceil(config.batch as u64);
    assert!(
        aimed as u64 <= most,
        "{aimed} aimed rounds for {} executions",
        refined.executions
    );
    assert!(refined.summary("f", 0.9).contains("stopped early"));
}

#[test]
fn a_tree_just_under_the_goal_does_not_end_the_loop_on_a_lucky_round() {
    let config = aiming(0.9, 1500, 1);
    // The program reaches the location in 88 of 100 runs of an input that can: no tree
    // aims better than 88 %.
    let refined = refine_flaky(SPEC, rare, 88, config);
    let aimed: Vec<&thicket_codeine::Round> = refined
        .rounds
        .iter()
        .filter(|r| r.phase == Phase::Aimed)
        .collect();
    // Rounds reach the goal by luck, and rounds that confirmed one would have passed
    // a point estimate of the two pooled ...
    let lucky = aimed.windows(2).any(|w| {
        w[0].hits * 10 >= w[0].inputs * 9
            && (w[0].hits + w[1].hits) * 10 >= (w[0].inputs + w[1].inputs) * 9
    });
    assert!(lucky, "{aimed:#?}");
    // ... but no tree's rounds put the bound of its rate at the goal.
    assert!(!refined.reached_goal(), "{:#?}", refined.evidence);
    assert_eq!(refined.ending, thicket_codeine::Ending::ExecutionsSpent);
    let evidence = refined.evidence.clone().expect("the kept tree's rounds");
    assert!(evidence.lower_bound() < 0.9);
    assert!(
        refined.summary("f", 0.9).contains(&evidence.line()),
        "the report says the bound"
    );
}

#[test]
fn a_clearly_good_tree_ends_the_loop_on_its_first_confirming_round() {
    let config = aiming(0.9, 3000, 1);
    // Two conditions, each a path: every tree after the first aims at them exactly.
    let refined = refine(|text| text.contains(&b'e') && !text.contains(&b'c'), config);
    assert!(refined.reached_goal(), "{:#?}", refined.rounds);
    let evidence = refined.evidence.expect("the kept tree's rounds");
    assert_eq!(
        evidence.rounds.len(),
        2,
        "{evidence:?} {:#?}",
        refined.rounds
    );
    assert!(refined.executions <= 200, "{:#?}", refined.rounds);
    assert!(evidence.lower_bound() >= 0.9);
}
