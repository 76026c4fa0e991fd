//! Running an input and judging the run: the one service through which a campaign (its
//! rounds, its resume, its imports from peers), `thicket coverage`, `minimize`, `mine`
//! and `learn-coverage` run a target.
//!
//! A [`Judge`] owns the executor and the classifier and applies, in one place:
//! - **failure classification** ([`Classifier::classify`]): a [`Verdict`] is the outcome
//!   and its failure, if any;
//! - **hang confirmation**: a run over the time limit is run again with a longer limit
//!   (twice the limit and 100 ms more, as AFL++ does with its hang timeout); only a run
//!   that hangs again is a hang, otherwise the second run's outcome stands and the
//!   candidate hang is counted as dismissed (a loaded machine, not the input);
//! - **tolerance of executor errors**: an executor that fails (a dying forkserver or
//!   interpreter it could not restart, a file it could not write) costs that input only,
//!   counted in [`JudgeCounts::executor_errors`]; after [`Judge::tolerance`] failures in a
//!   row the target is taken to be unusable and the error is returned;
//! - **the coverage rule** ([`Verdict::counts_for_coverage`]): the coverage of a run
//!   counts when the target ended the run itself: normally, by raising an exception, or
//!   with output matching the failure pattern. The coverage of a crash (a signal, a
//!   sanitizer report, an interpreter that exited during the call) or of a hang does not
//!   count: the run was cut short, its trace depends on where and when, and an input
//!   kept for its coverage must be one a loop can mutate and run again. Crashes and
//!   hangs are findings of their own (a campaign tells location-less ones apart by their
//!   raw [`Judge::trace`], as AFL does).

use crate::{Classifier, ExecError, Executor, Failure, FailureKind, Location, Outcome, Status};
use crate::{TokenTrace, Trace};
use std::time::Duration;

/// Executor errors in a row after which a [`Judge`] gives up by default.
pub const DEFAULT_TOLERANCE: u32 = 5;

/// A judged run: how it ended and the failure it shows, if any.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// How the run ended (after hang confirmation: a dismissed candidate hang's second
    /// run).
    pub outcome: Outcome,
    /// The failure, if the run failed.
    pub failure: Option<Failure>,
}

impl Verdict {
    /// Whether the run's coverage counts (see the module docs): no failure, an
    /// exception or a pattern match; not a crash, a sanitizer report, an exit during the
    /// call or a hang.
    pub fn counts_for_coverage(&self) -> bool {
        self.failure
            .as_ref()
            .is_none_or(|f| matches!(f.kind, FailureKind::Exception { .. } | FailureKind::Pattern))
    }

    /// Whether the run was confirmed as a hang.
    pub fn is_hang(&self) -> bool {
        self.failure.as_ref().is_some_and(Failure::is_hang)
    }

    /// Whether the program accepted the input: it exited 0 with no exception, and
    /// nothing counts as a failure (how `thicket mine` labels inputs).
    pub fn accepted(&self) -> bool {
        self.outcome.status == crate::Status::Exited(0)
            && self.outcome.exception.is_none()
            && self.failure.is_none()
    }
}

/// What a [`Judge`] has counted since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JudgeCounts {
    /// Inputs judged (a hang's confirming run not counted apart).
    pub runs: u64,
    /// Times the executor failed (each costs the input it was running).
    pub executor_errors: u64,
    /// Candidate hangs that ended when run again with a longer limit.
    pub hangs_dismissed: u64,
    /// Time the target spent on all runs, confirming runs included.
    pub target_time: Duration,
}

/// Runs inputs on a target and judges each run (see the module docs).
pub struct Judge {
    executor: Box<dyn Executor>,
    classifier: Classifier,
    tolerance: u32,
    consecutive_errors: u32,
    counts: JudgeCounts,
}

impl Judge {
    /// A judge running `executor`, classifying with `classifier`, tolerating
    /// [`DEFAULT_TOLERANCE`] executor errors in a row.
    pub fn new(executor: Box<dyn Executor>, classifier: Classifier) -> Judge {
        Judge {
            executor,
            classifier,
            tolerance: DEFAULT_TOLERANCE,
            consecutive_errors: 0,
            counts: JudgeCounts::default(),
        }
    }

    /// Gives up after `errors` executor errors in a row (at least 1: the first error is
    /// then returned).
    pub fn with_tolerance(mut self, errors: u32) -> Judge {
        self.tolerance = errors.max(1);
        self
    }

    /// Executor errors in a row after which [`Judge::run`] returns the error.
    pub fn tolerance(&self) -> u32 {
        self.tolerance
    }

    /// Runs `input` and judges the run. `Ok(None)`: the executor failed and the failure
    /// is tolerated (counted); `Err`: it failed [`Judge::tolerance`] times in a row.
    pub fn run(&mut self, input: &[u8]) -> Result<Option<Verdict>, ExecError> {
        self.run_overlapping(input, &mut || {})
    }

    /// [`Judge::run`], calling `meanwhile` once, while the target runs where the
    /// executor allows (see [`Executor::run_overlapping`]; a candidate hang's
    /// confirming run overlaps nothing).
    pub fn run_overlapping(
        &mut self,
        input: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<Option<Verdict>, ExecError> {
        let outcome = match self.executor.run_overlapping(input, meanwhile) {
            Ok(outcome) => outcome,
            Err(e) => {
                self.counts.executor_errors += 1;
                self.consecutive_errors += 1;
                if self.consecutive_errors >= self.tolerance {
                    return Err(e);
                }
                return Ok(None);
            }
        };
        self.consecutive_errors = 0;
        self.counts.runs += 1;
        self.counts.target_time += outcome.time;
        let outcome = self.confirm_hang(input, outcome);
        let failure = self.classifier.classify(&outcome);
        Ok(Some(Verdict { outcome, failure }))
    }

    /// A run over the time limit is run again with a longer limit; see the module docs.
    fn confirm_hang(&mut self, input: &[u8], outcome: Outcome) -> Outcome {
        if outcome.status != Status::Timeout {
            return outcome;
        }
        let limit = self.executor.timeout();
        self.executor
            .set_timeout(limit * 2 + Duration::from_millis(100));
        let again = self.executor.run(input);
        self.executor.set_timeout(limit);
        match again {
            Ok(again) => {
                self.counts.target_time += again.time;
                if again.status != Status::Timeout {
                    self.counts.hangs_dismissed += 1;
                }
                again
            }
            Err(_) => outcome,
        }
    }

    /// The coverage of the last run if `verdict` (that run's) says it counts, else
    /// [`Trace::None`].
    pub fn coverage(&self, verdict: &Verdict) -> Trace<'_> {
        if verdict.counts_for_coverage() {
            self.executor.trace()
        } else {
            Trace::None
        }
    }

    /// The named locations the last run covered, appended to `out` if `verdict` (that
    /// run's) says its coverage counts. Returns whether the executor names locations at
    /// all (see [`Executor::covered_locations`]).
    pub fn covered_locations(&self, verdict: &Verdict, out: &mut Vec<Location>) -> bool {
        let mut covered = Vec::new();
        let names = self.executor.covered_locations(&mut covered);
        if verdict.counts_for_coverage() {
            out.append(&mut covered);
        }
        names
    }

    /// The last run's trace whether or not its coverage counts: for telling failures
    /// without a location apart by the code they reached, and for reports on every run.
    pub fn trace(&self) -> Trace<'_> {
        self.executor.trace()
    }

    /// The token-level path condition of the last run (see
    /// [`Executor::token_trace`]).
    pub fn token_trace(&self) -> Option<&TokenTrace> {
        self.executor.token_trace()
    }

    /// The executor, for what it says of itself (description, time limit, restarts,
    /// map size); runs go through [`Judge::run`].
    pub fn executor(&self) -> &dyn Executor {
        &*self.executor
    }

    /// The classifier.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// What was counted so far.
    pub fn counts(&self) -> &JudgeCounts {
        &self.counts
    }
}

/// What a set of judged runs covered and how they failed (`thicket coverage`): the
/// union of the coverage that counts by the judge's rule, and each distinct failure.
#[derive(Default)]
pub struct Tally {
    /// The union of the coverage of the runs whose coverage counts.
    pub coverage: crate::CoverageSet,
    /// Runs whose coverage did not count (crashes, hangs).
    pub uncounted: usize,
    /// Failing runs, hangs excepted.
    pub failing: usize,
    /// Runs confirmed as hangs.
    pub hangs: usize,
    /// Per failure key ([`Failure::key`]): its kind, its runs and the name of the first
    /// input that showed it.
    pub failures: std::collections::BTreeMap<String, (FailureKind, u64, String)>,
}

impl Tally {
    /// Adds the last run of `judge`, judged `verdict`, of the input called `name`.
    pub fn add(&mut self, judge: &Judge, verdict: &Verdict, name: impl FnOnce() -> String) {
        self.coverage.add(&judge.coverage(verdict));
        self.uncounted += usize::from(!verdict.counts_for_coverage());
        if let Some(f) = &verdict.failure {
            if f.is_hang() {
                self.hangs += 1;
            } else {
                self.failing += 1;
            }
            self.failures
                .entry(f.key())
                .or_insert_with(|| (f.kind.clone(), 0, name()))
                .1 += 1;
        }
    }

    /// The coverage so far as two figures in the units of `judge`'s trace: edges (and
    /// 0), Python lines and branches, or Java lines and methods.
    pub fn figures(&self, judge: &Judge) -> (usize, usize) {
        match judge.trace() {
            Trace::Python(_) => (self.coverage.lines(), self.coverage.branches()),
            Trace::Java(_) => (self.coverage.lines(), self.coverage.methods()),
            _ => (self.coverage.edges(), 0),
        }
    }

    /// The failures that are likely how the target rejects invalid input (see
    /// [`crate::likely_rejection`]).
    pub fn likely_rejection(&self, judge: &Judge) -> Option<crate::LikelyRejection> {
        crate::likely_rejection(
            self.failures.values().map(|(kind, n, _)| (kind, *n)),
            judge.executor().target_package().as_deref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tail;

    /// An executor replaying scripted outcomes (`None`: an executor error).
    struct Scripted {
        outcomes: Vec<Option<Outcome>>,
        timeout: Duration,
        timeouts_seen: Vec<Duration>,
    }

    impl Executor for Scripted {
        fn run(&mut self, _input: &[u8]) -> Result<Outcome, ExecError> {
            self.timeouts_seen.push(self.timeout);
            self.outcomes
                .remove(0)
                .ok_or_else(|| ExecError::Usage("scripted failure".into()))
        }
        fn trace(&self) -> Trace<'_> {
            Trace::Edges(&[1, 0, 1])
        }
        fn describe(&self) -> String {
            "scripted".into()
        }
        fn timeout(&self) -> Duration {
            self.timeout
        }
        fn set_timeout(&mut self, timeout: Duration) {
            self.timeout = timeout;
        }
    }

    fn judge(outcomes: Vec<Option<Outcome>>) -> Judge {
        let executor = Scripted {
            outcomes,
            timeout: Duration::from_millis(100),
            timeouts_seen: Vec::new(),
        };
        Judge::new(Box::new(executor), Classifier::default())
    }

    fn ended(status: Status) -> Outcome {
        Outcome::new(status, Duration::from_millis(3))
    }

    #[test]
    fn a_candidate_hang_that_ends_when_run_again_is_dismissed() {
        let mut j = judge(vec![
            Some(ended(Status::Timeout)),
            Some(ended(Status::Exited(0))),
        ]);
        let v = j.run(b"x").unwrap().unwrap();
        assert_eq!(v.outcome.status, Status::Exited(0));
        assert!(v.failure.is_none() && v.counts_for_coverage());
        assert_eq!(j.counts().hangs_dismissed, 1);
        assert_eq!(j.counts().runs, 1);
        // The limit is back to what it was.
        assert_eq!(j.executor().timeout(), Duration::from_millis(100));
    }

    #[test]
    fn a_confirmed_hang_is_a_failure_whose_coverage_does_not_count() {
        let mut j = judge(vec![
            Some(ended(Status::Timeout)),
            Some(ended(Status::Timeout)),
        ]);
        let v = j.run(b"x").unwrap().unwrap();
        assert!(v.is_hang() && !v.counts_for_coverage());
        assert!(matches!(j.coverage(&v), Trace::None));
        assert!(matches!(j.trace(), Trace::Edges(_)));
        assert_eq!(j.counts().hangs_dismissed, 0);
    }

    #[test]
    fn crashes_do_not_count_for_coverage_exceptions_do() {
        let mut j = judge(vec![Some(ended(Status::Signaled(11)))]);
        let v = j.run(b"x").unwrap().unwrap();
        assert!(v.failure.is_some() && !v.counts_for_coverage());
        let mut exception = ended(Status::Exited(1));
        exception.exception = Some(crate::Exception {
            language: "python",
            class: "ValueError".into(),
            frame: "x.py:1 in f".into(),
            message: "bad".into(),
        });
        exception.stderr = Tail::new();
        let mut j = judge(vec![Some(exception)]);
        let v = j.run(b"x").unwrap().unwrap();
        assert!(v.failure.is_some() && v.counts_for_coverage());
        assert!(matches!(j.coverage(&v), Trace::Edges(_)));
    }

    #[test]
    fn executor_errors_are_tolerated_until_too_many_in_a_row() {
        let mut j = judge(vec![None, Some(ended(Status::Exited(0))), None, None, None]);
        j = j.with_tolerance(3);
        assert!(j.run(b"x").unwrap().is_none());
        assert!(j.run(b"x").unwrap().is_some());
        assert!(j.run(b"x").unwrap().is_none());
        assert!(j.run(b"x").unwrap().is_none());
        assert!(j.run(b"x").is_err());
        assert_eq!(j.counts().executor_errors, 4);
    }

    #[test]
    fn a_tally_counts_the_coverage_that_counts_and_each_failure_once() {
        let mut j = judge(vec![
            Some(ended(Status::Exited(0))),
            Some(ended(Status::Signaled(11))),
            Some(ended(Status::Signaled(11))),
            Some(ended(Status::Timeout)),
            Some(ended(Status::Timeout)),
        ]);
        let mut tally = Tally::default();
        for name in ["ok", "crash-1", "crash-2", "hang"] {
            let verdict = j.run(name.as_bytes()).unwrap().unwrap();
            tally.add(&j, &verdict, || name.to_string());
        }
        // The passing run's two edges count; the crashes' and the hang's do not.
        assert_eq!(tally.figures(&j), (2, 0));
        assert_eq!((tally.failing, tally.hangs, tally.uncounted), (2, 1, 3));
        // One key for both crashes (no location), the first input named.
        assert_eq!(tally.failures.len(), 2);
        let crash = tally
            .failures
            .values()
            .find(|(k, ..)| *k != FailureKind::Hang);
        assert_eq!(
            crash.map(|(_, n, first)| (*n, first.as_str())),
            Some((2, "crash-1"))
        );
    }
}
