//! How a run of generated inputs ended against what was asked (`thicket generate`):
//! a small language's distinct inputs, known from the grammar before anything is drawn
//! (so that `--unique` stops when all are written), and why a run that made fewer
//! inputs than asked for fell short.

use thicket_fandango::Stop;
use thicket_gen::{DistinctInputs, GenConfig, Generator, Weights};
use thicket_solve::SolverConfig;

/// Most derivations listed to learn how many distinct inputs a small language has (see
/// [`Generator::distinct_inputs`]).
pub const UNIQUE_LISTING_LIMIT: u64 = 1 << 20;

/// How many inputs a run makes for the `count` asked for (`-n`): that, else 10, or as
/// many as the time allows when `timed` (`--time` without `-n`).
pub fn count_or_default(count: Option<u64>, timed: bool) -> u64 {
    count.unwrap_or(if timed { u64::MAX } else { 10 })
}

/// For `--unique`: the distinct inputs of `generator`'s language when it has fewer
/// than `count` within the generator's limits (listing at most
/// [`UNIQUE_LISTING_LIMIT`] derivations), so that the run stops after them, saying so
/// ([`small_language_note`]); `None` for a larger language, or one too large to list.
/// A language of no more than `count` inputs is all the goal, so its inputs are drawn
/// uniformly: `weights` are dropped, which would make some of them rare (a whitespace
/// rule past its minimum) and leave the draws short.
pub fn small_language(
    generator: &Generator<'_>,
    weights: &mut Option<Weights>,
    count: u64,
) -> Option<DistinctInputs> {
    let limit = usize::try_from(count.min(UNIQUE_LISTING_LIMIT)).unwrap_or(usize::MAX);
    let listed = generator.distinct_inputs(limit)?;
    *weights = None;
    (listed.count < count).then_some(listed)
}

/// Where a small language's inputs end, for a message: the grammar itself, or the
/// limits of `config`.
pub fn within(found: &DistinctInputs, config: &GenConfig) -> String {
    if found.more_beyond_limits {
        format!(
            "within these limits (--max-depth {}, --max-repetitions {})",
            config.max_depth, config.max_repetitions
        )
    } else {
        "in its whole language".to_string()
    }
}

/// The note that `spec`'s language is small and `--unique` stops after its inputs.
pub fn small_language_note(spec: &str, found: &DistinctInputs, config: &GenConfig) -> String {
    format!(
        "{spec} has only {} distinct input{} {}; --unique stops after {}",
        found.count,
        if found.count == 1 { "" } else { "s" },
        within(found, config),
        if found.count == 1 { "it" } else { "them" },
    )
}

/// A finished run of generated inputs, against what was asked of it.
#[derive(Clone, Debug)]
pub struct RunEnd<'a> {
    /// The count asked for (`u64::MAX`: as many as the time allows).
    pub count: u64,
    /// Whether the count was given (rather than a default).
    pub asked: bool,
    /// What the run could make: the count, or all of a small language.
    pub goal: u64,
    /// Inputs written.
    pub written: u64,
    /// Random streams drawn.
    pub drawn: u64,
    /// Why the stream stopped, if it did before the goal.
    pub stopped: Option<Stop>,
    /// With `--unique`, the draws per input asked for before giving up.
    pub unique: Option<u64>,
    /// The small language whose inputs were all the run could write, if known.
    pub language: Option<&'a DistinctInputs>,
    /// The solver's limits, when constraints were solved.
    pub solver: Option<SolverConfig>,
    /// The generator's limits.
    pub config: &'a GenConfig,
    /// Seconds the run took.
    pub seconds: f64,
}

impl RunEnd<'_> {
    /// The warnings about the inputs of the run: `misses` (streams that gave no input,
    /// and the first one's reason) and inputs closed off along the shortest derivations
    /// at the limits (`budget_exhausted`).
    pub fn warnings(&self, misses: (u64, Option<&str>), budget_exhausted: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        if let (unsolved, Some(first)) = misses {
            warnings.push(format!(
                "{unsolved} of {} random streams gave no valid input: {first}",
                self.drawn
            ));
        }
        if budget_exhausted > 0 {
            warnings.push(format!(
                "{budget_exhausted} of {} inputs reached --max-nodes {} or --max-size {} and were closed off along the shortest derivations",
                self.written, self.config.max_nodes, self.config.max_size
            ));
        }
        warnings
    }

    /// Why the run is a failure: it made fewer inputs than asked for (or none with
    /// only a time given); `None` if it made what was asked.
    pub fn shortfall(&self) -> Option<String> {
        let RunEnd {
            count,
            asked,
            goal,
            written,
            drawn,
            seconds,
            ..
        } = *self;
        let exhausted = self.language.filter(|found| written == found.count);
        if let Some(found) = exhausted {
            // Every distinct input was written: short only of a count asked for.
            return asked.then(|| {
                format!(
                    "wrote all {written} distinct inputs there are {}, fewer than the {count} \
                     asked for{}",
                    within(found, self.config),
                    if found.more_beyond_limits {
                        " (raise the limits for more)"
                    } else {
                        ""
                    }
                )
            });
        }
        if written >= goal {
            return None;
        }
        if self.stopped == Some(Stop::Deadline) {
            // Without a count, as many as the time allowed is what was asked for,
            // unless none.
            let why = if self.solver.is_some() && written == 0 {
                "; no input satisfied the constraints before then"
            } else {
                ""
            };
            return if asked {
                Some(format!(
                    "--time ran out after {written} of {count} inputs ({seconds:.1} s){why}"
                ))
            } else {
                (written == 0).then(|| {
                    format!("--time ran out before any input was made ({seconds:.1} s){why}")
                })
            };
        }
        if let Some(factor) = self.unique {
            return Some(format!(
                "only {written} distinct inputs in {drawn} draws (--unique gives up after \
                 {factor} draws per input asked for): within these limits the grammar may \
                 have few more; raise --max-depth or --max-repetitions for more"
            ));
        }
        // Only solving skips streams without --unique.
        Some(match self.solver {
            Some(solver) => format!(
                "only {written} of {count} inputs satisfy the constraints within the budget \
                 (each stream tries {} trees of {} repair rounds)",
                solver.max_attempts, solver.max_rounds
            ),
            None => format!("only {written} of {count} inputs were made"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_n_a_run_makes_ten_or_what_the_time_allows_and_k_path_production_follows() {
        use crate::kpath::Production;
        assert_eq!(count_or_default(Some(3), true), 3);
        assert_eq!(count_or_default(None, false), 10);
        assert_eq!(count_or_default(None, true), u64::MAX);
        assert_eq!(Production::Stream.limit(None, false), 10);
        assert_eq!(Production::Cover.limit(None, false), usize::MAX);
        assert_eq!(Production::Cover.limit(Some(4), true), 4);
    }

    #[test]
    fn warnings_name_the_missed_streams_and_the_inputs_closed_off() {
        let config = GenConfig::default();
        let run = end(&config);
        assert!(run.warnings((0, None), 0).is_empty());
        let warnings = run.warnings((2, Some("unsat")), 1);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].starts_with("2 of 10 random streams gave no valid input: unsat"));
        assert!(warnings[1].starts_with("1 of 10 inputs reached --max-nodes"));
    }

    fn end<'a>(config: &'a GenConfig) -> RunEnd<'a> {
        RunEnd {
            count: 10,
            asked: true,
            goal: 10,
            written: 10,
            drawn: 10,
            stopped: None,
            unique: None,
            language: None,
            solver: None,
            config,
            seconds: 1.0,
        }
    }

    #[test]
    fn a_run_short_of_its_count_says_why() {
        let config = GenConfig::default();
        assert_eq!(end(&config).shortfall(), None);
        let timed_out = RunEnd {
            written: 4,
            stopped: Some(Stop::Deadline),
            ..end(&config)
        };
        assert_eq!(
            timed_out.shortfall().as_deref(),
            Some("--time ran out after 4 of 10 inputs (1.0 s)")
        );
        let open = RunEnd {
            asked: false,
            ..timed_out.clone()
        };
        assert_eq!(open.shortfall(), None);
        let unique = RunEnd {
            written: 4,
            unique: Some(100),
            ..end(&config)
        };
        assert!(
            unique
                .shortfall()
                .unwrap()
                .starts_with("only 4 distinct inputs")
        );
    }

    #[test]
    fn a_small_language_written_whole_is_short_only_of_a_count_asked_for() {
        let config = GenConfig::default();
        let found = DistinctInputs {
            count: 3,
            more_beyond_limits: false,
        };
        let all = RunEnd {
            goal: 3,
            written: 3,
            language: Some(&found),
            ..end(&config)
        };
        assert_eq!(
            all.shortfall().as_deref(),
            Some(
                "wrote all 3 distinct inputs there are in its whole language, fewer than the 10 asked for"
            )
        );
        assert_eq!(
            RunEnd {
                asked: false,
                ..all
            }
            .shortfall(),
            None
        );
    }
}
