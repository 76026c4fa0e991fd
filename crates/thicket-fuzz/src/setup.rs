//! A campaign's options as a user gives them, checked together before anything runs:
//! which options a strategy takes, FdLoop's settings from its goal or weights, the
//! whitebox searches' needs, and the values of the options a campaign alone reads
//! (an instance name for sync, a token count range); and the campaign made of its parts
//! ([`CampaignParts`]). The command line fills these from its arguments; a Rust user
//! and the Python module fill them the same way.

use crate::choice::StrategyChoice;
use crate::strategy::{Encoding, FdLoopConfig, FitnessWeights, StrategyKind};
use crate::whitebox::WhiteboxConfig;
use crate::{Campaign, FuzzConfig, FuzzError};
use thicket_exec::Judge;
use thicket_gen::Generator;
use thicket_grammar::Tokens;
use thicket_solve::Solver;
use thicket_tree::DerivationTree;

/// What a campaign is made of besides its judge, configuration and folder: the
/// producers of fresh trees, how trees stand for inputs, and the strategy with its
/// settings. The command line and the Python module fill one and make their campaign
/// with [`CampaignParts::campaign`].
pub struct CampaignParts<'g, 's> {
    /// Generates fresh trees.
    pub generator: &'g Generator<'g>,
    /// Makes fresh trees satisfy the constraints, if there are any.
    pub solver: Option<&'g Solver<'g>>,
    /// How trees stand for inputs when not as their text (Fandango's bit fields).
    pub encoding: Option<&'g dyn Encoding>,
    /// What runs next and what feedback means.
    pub strategy: StrategyChoice,
    /// The trees the learning strategies learn from.
    pub seeds: &'s [DerivationTree],
    /// FdLoop's and EvoGFuzz's settings.
    pub fdloop: FdLoopConfig,
    /// A whitebox search's tokens and settings.
    pub whitebox: Option<(&'g Tokens, WhiteboxConfig)>,
}

impl<'g> CampaignParts<'g, '_> {
    /// The campaign of these parts running `judge` under `config` into `out` (its
    /// folder opened, or taken up again when resumed).
    pub fn campaign(
        self,
        judge: Judge,
        config: FuzzConfig,
        out: &std::path::Path,
    ) -> Result<Campaign<'g>, FuzzError> {
        let seed = config.seed;
        let mut campaign =
            Campaign::with_encoding(self.generator, judge, config, out, self.encoding)?;
        if let Some(solver) = self.solver {
            campaign = campaign.with_solver(solver);
        }
        let strategy =
            self.strategy
                .build(self.generator, self.seeds, self.fdloop, self.whitebox, seed)?;
        match strategy {
            Some(strategy) => campaign.with_strategy(strategy),
            None => Ok(campaign),
        }
    }
}

/// The options given besides the strategy that only some strategies take.
#[derive(Clone, Copy, Debug, Default)]
pub struct OptionsGiven {
    /// Generation without feedback.
    pub no_feedback: bool,
    /// A share of mutating rounds.
    pub mutate_share: bool,
    /// Only valid inputs run.
    pub valid_only: bool,
    /// Constraints inputs must satisfy.
    pub constraints: bool,
    /// Sharing finds through a sync folder.
    pub sync: bool,
    /// Seed inputs to learn probabilities from.
    pub seeds: bool,
}

impl OptionsGiven {
    /// Whether `choice` takes these options: those of the coverage campaign are for it
    /// alone, seed inputs for the strategies that learn probabilities; the error names
    /// the option.
    pub fn check(&self, choice: StrategyChoice) -> Result<(), String> {
        let kind = choice.kind();
        if kind != StrategyKind::Coverage {
            for (given, option) in [
                (self.no_feedback, "--no-feedback"),
                (self.mutate_share, "--mutate-share"),
                (self.valid_only, "--valid-only"),
                (self.constraints, "constraints"),
                (self.sync, "--sync-dir"),
            ] {
                if given {
                    return Err(format!(
                        "{option} applies to --strategy coverage only, not to --strategy {}",
                        choice.name()
                    ));
                }
            }
        }
        if self.seeds && !kind.learns() {
            return Err(
                "--seeds is for the strategies that learn probabilities (probabilistic, \
                 inverse, evogfuzz, fdloop)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// What a whitebox search needs of the target and the campaign: the target's token
/// comparisons (a tokenizer) and a fresh campaign (no resume, no sync). Other
/// strategies need neither.
pub fn check_whitebox(
    choice: StrategyChoice,
    tokenizer: bool,
    resume: bool,
    sync: bool,
) -> Result<(), String> {
    let Some(search) = choice.search() else {
        return Ok(());
    };
    if search.needs_token_trace() && !tokenizer {
        return Err(
            "--strategy whitebox needs the target's token comparisons: give --python \
             with --tokenizer MODULE:CALLABLE (e.g. esprima.scanner:Scanner.lex)"
                .into(),
        );
    }
    if resume || sync {
        return Err("--resume and --sync-dir work with --strategy coverage only".into());
    }
    Ok(())
}

/// The error for a whitebox search on a spec (called `spec`) whose inputs pack bit
/// fields, which its token-level search cannot make.
pub fn whitebox_packed_bits_error(spec: &str) -> String {
    format!(
        "{spec} has bit fields; the whitebox searches put text tokens together \
         and do not pack bits (use --strategy coverage)"
    )
}

/// FdLoop's and EvoGFuzz's settings as a user gives them.
#[derive(Clone, Debug)]
pub struct FdLoopOptions<'a> {
    /// FdLoop's goal: `mappings`, `coverage`, `runtime`, `exceptions` or `multi`.
    pub goal: &'a str,
    /// Weight the goal 0 and the others 1.
    pub ignore_goal: bool,
    /// Weights `MAPPINGS,COVERAGE,RUNTIME,EXCEPTIONS`, overriding the goal.
    pub fitness_weights: Option<&'a str>,
    /// Inputs per generation [default: FdLoop's and EvoGFuzz's own].
    pub population: Option<u64>,
    /// Generations at most.
    pub generations: Option<u64>,
    /// Mappings at which the mappings term saturates (at least 1).
    pub mappings_max: f64,
}

impl FdLoopOptions<'_> {
    /// The settings, or why these options are wrong.
    pub fn config(&self) -> Result<FdLoopConfig, String> {
        let weights = match self.fitness_weights {
            Some(text) => FitnessWeights::parse(text)
                .map_err(|e| format!("--fitness-weights `{text}`: {e}"))?,
            None => FitnessWeights::for_goal(self.goal, self.ignore_goal)?,
        };
        if !(self.mappings_max.is_finite() && self.mappings_max >= 1.0) {
            return Err("--mappings-max must be a number >= 1".into());
        }
        let defaults = FdLoopConfig::default();
        Ok(FdLoopConfig {
            population: self.population.map_or(defaults.population, |n| n as usize),
            evogfuzz_population: self
                .population
                .map_or(defaults.evogfuzz_population, |n| n as usize),
            generations: self.generations,
            weights,
            mappings_max: self.mappings_max,
            ..defaults
        })
    }
}

/// The generator's size target a strategy of `kind` defaults to (`--target-size`):
/// the coverage campaign's sizing, or 0 for the other strategies, which choose
/// uniformly (random: Tribble's baseline) or by probabilities the sizing would skew.
pub fn default_target_size(kind: StrategyKind) -> u32 {
    if kind == StrategyKind::Coverage {
        thicket_gen::DEFAULT_TARGET_SIZE
    } else {
        0
    }
}

/// What a campaign with `constraints` constraints does with them, for the user.
pub fn constraints_note(constraints: usize, valid_only: bool, no_feedback: bool) -> String {
    format!(
        "generated inputs satisfy {constraints} constraint{} (--no-constraints ignores \
         them); {}",
        if constraints == 1 { "" } else { "s" },
        if valid_only {
            "mutants are repaired to satisfy them"
        } else if no_feedback {
            "nothing is mutated"
        } else {
            "mutants may violate them (--valid-only repairs them)"
        }
    )
}

/// Reads a token count range `MIN-MAX` (or one number) of the whitebox searches.
pub fn token_range(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{text}` is not a token count range MIN-MAX, e.g. 15-20");
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let (a, b) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a > b || b == 0 {
        return Err(bad());
    }
    Ok((a, b))
}

/// Checks an instance name of a sync folder: a plain file name, not hidden.
pub fn instance_name(text: &str) -> Result<String, String> {
    if text.is_empty()
        || text.starts_with('.')
        || !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(format!(
            "`{text}` is not an instance name: use letters, digits, `.`, `_` and `-`, not \
             starting with `.`"
        ));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_options_are_refused_with_other_strategies() {
        let random = StrategyChoice::from_name("random").unwrap();
        let coverage = StrategyChoice::from_name("coverage").unwrap();
        let given = OptionsGiven {
            valid_only: true,
            ..OptionsGiven::default()
        };
        assert!(given.check(coverage).is_ok());
        let error = given.check(random).unwrap_err();
        assert!(
            error.starts_with("--valid-only applies to --strategy coverage only"),
            "{error}"
        );
        let seeds = OptionsGiven {
            seeds: true,
            ..OptionsGiven::default()
        };
        assert!(seeds.check(coverage).is_err());
        assert!(
            seeds
                .check(StrategyChoice::from_name("fdloop").unwrap())
                .is_ok()
        );
    }

    #[test]
    fn whitebox_needs_a_tokenizer_and_a_fresh_campaign() {
        let whitebox = StrategyChoice::from_name("whitebox").unwrap();
        assert!(check_whitebox(whitebox, false, false, false).is_err());
        assert!(check_whitebox(whitebox, true, false, false).is_ok());
        assert!(check_whitebox(whitebox, true, true, false).is_err());
        let coverage = StrategyChoice::from_name("coverage").unwrap();
        assert!(check_whitebox(coverage, false, true, true).is_ok());
    }

    #[test]
    fn option_values_are_checked() {
        assert_eq!(token_range("15-20"), Ok((15, 20)));
        assert_eq!(token_range("7"), Ok((7, 7)));
        assert!(token_range("20-15").is_err() && token_range("0").is_err());
        assert!(instance_name("fuzzer-1.a").is_ok());
        assert!(instance_name(".hidden").is_err() && instance_name("a/b").is_err());
    }

    #[test]
    fn fdloop_options_check_the_saturation() {
        let options = FdLoopOptions {
            goal: "multi",
            ignore_goal: false,
            fitness_weights: None,
            population: Some(7),
            generations: None,
            mappings_max: 0.5,
        };
        assert!(options.config().is_err());
        let config = FdLoopOptions {
            mappings_max: 100.0,
            ..options
        }
        .config()
        .unwrap();
        assert_eq!((config.population, config.evogfuzz_population), (7, 7));
    }
}
