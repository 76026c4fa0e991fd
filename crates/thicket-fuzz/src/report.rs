//! What a campaign's figures say, as lines for a person: the status line while it runs,
//! and the summary at its end with the warnings its figures call for (the command line
//! prints them on stderr; a parallel campaign's combined figures use the same failure
//! lines).

use crate::{FailureRecord, Stats};
use std::path::Path;
use thicket_exec::{CoverageKind, FailureKind, LikelyRejection};

/// The one-line status of a running campaign.
pub fn status_line(stats: &Stats) -> String {
    let mut line = format!(
        "{} execs ({:.0}/s) | {} | queue {} | failures {} distinct ({} files) | hangs {}",
        stats.execs,
        stats.execs_per_sec,
        stats.coverage.headline(),
        stats.queue,
        stats.distinct_failures,
        stats.crash_files,
        stats.hang_files
    );
    if stats.hangs_dismissed > 0 {
        line.push_str(&format!(" (+{} dismissed)", stats.hangs_dismissed));
    }
    if stats.restarts > 0 {
        line.push_str(&format!(" | restarts {}", stats.restarts));
    }
    line.push_str(&format!(
        " | own {:.0} us/exec | mean input {:.0} B (queue {:.0} B)",
        stats.own_us_per_exec, stats.mean_input_size, stats.mean_queue_input_size
    ));
    line
}

/// The line of a resumed campaign: the executions, kept inputs and coverage it goes on
/// from.
pub fn resumed_line(stats: &Stats) -> String {
    format!(
        "resumed at {} executions with {} kept inputs, {}",
        stats.execs,
        stats.queue,
        stats.coverage.headline()
    )
}

/// The summary of a finished campaign whose output is in `out` (`interrupted`: stopped
/// by the user): its figures, its failures, and a warning (`warning: ...`) or note for
/// each figure that says something went wrong.
pub fn summary_lines(stats: &Stats, out: &Path, interrupted: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "thicket fuzz: {}{} execs in {:.1} s ({:.0}/s): {}, {} kept, {} distinct failures \
         ({} files in crashes/), {} hangs -> {}",
        if interrupted {
            "interrupted after "
        } else {
            ""
        },
        stats.execs,
        stats.elapsed_s,
        stats.execs_per_sec,
        stats.coverage.headline(),
        stats.queue,
        stats.distinct_failures,
        stats.crash_files,
        stats.hang_files,
        out.display()
    )];
    if let Some(havoc) = stats.ops.get(crate::havoc::HAVOC_OP) {
        lines.push(format!(
            "thicket: byte havoc (off the grammar) ran {} inputs and kept {}",
            havoc.runs, havoc.kept
        ));
    }
    if stats.hangs_dismissed > 0 {
        lines.push(format!(
            "thicket: {} candidate hangs ended when re-run with a longer limit and were not saved",
            stats.hangs_dismissed
        ));
    }
    lines.extend(failure_lines(
        &stats.failures,
        stats.likely_rejection.as_ref(),
    ));
    if stats.unsolved_rounds > 0 {
        lines.push(format!(
            "thicket: {} of {} rounds made no input that satisfies the constraints within the \
             solver's budget, and ran nothing",
            stats.unsolved_rounds, stats.rounds
        ));
    }
    if stats.unencodable_rounds > 0 {
        lines.push(format!(
            "thicket: {} of {} rounds made a tree whose bit fields fill no whole byte (no \
             input), and ran nothing",
            stats.unencodable_rounds, stats.rounds
        ));
    }
    if let Some(warning) = stats
        .coverage
        .nothing_covered_warning(&stats.executor)
        .filter(|_| stats.execs > 0)
    {
        lines.push(format!("warning: {warning}"));
    } else if stats.empty_coverage_runs > 0 && stats.coverage.kind == CoverageKind::Python {
        lines.push(format!(
            "warning: {} of {} executions reported no coverage at all",
            stats.empty_coverage_runs, stats.execs
        ));
    }
    // Restarts cost start-up time: worth a word once they are one run in twenty.
    if stats.restarts > 0 && stats.restarts * 20 > stats.execs {
        lines.push(format!(
            "warning: the target's process was restarted {} times in {} executions (after \
             hangs and deaths, e.g. os._exit or System.exit): each restart costs start-up time, which is \
             why executions were slow",
            stats.restarts, stats.execs
        ));
    }
    if stats.held_output_runs > 0 {
        lines.push(format!(
            "warning: {}",
            thicket_exec::plain::held_output_warning(stats.held_output_runs, stats.execs)
        ));
    }
    if stats.executor_errors > 0 {
        lines.push(format!(
            "warning: the executor failed {} times and recovered",
            stats.executor_errors
        ));
    }
    lines
}

/// The failures of a campaign, one line each; those of a likely rejection last, as one
/// line, and a note that says what they probably are.
pub fn failure_lines(
    failures: &[FailureRecord],
    rejection: Option<&LikelyRejection>,
) -> Vec<String> {
    let (rejected, others): (Vec<_>, Vec<_>) = failures
        .iter()
        .partition(|f| rejection.is_some_and(|r| r.covers(&f.kind)));
    let mut lines: Vec<String> = others
        .iter()
        .map(|f| format!("  {} ({} runs): {}", f.key, f.count, f.file))
        .collect();
    let (Some(r), Some(first)) = (rejection, rejected.first()) else {
        return lines;
    };
    lines.push(format!(
        "  {} {}: {} distinct failures ({} runs), likely rejections: {}{}",
        r.language,
        r.class,
        r.distinct_failures,
        r.runs,
        first.file,
        match rejected.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        }
    ));
    let other_failures = others
        .iter()
        .filter(|f| f.kind != FailureKind::Hang)
        .count();
    lines.push(format!("note: {}", r.note(other_failures)));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_warns_of_frequent_restarts_only() {
        let stats = Stats {
            execs: 100,
            restarts: 2,
            ..Stats::default()
        };
        let warned = |s: &Stats| {
            summary_lines(s, Path::new("out"), false)
                .iter()
                .any(|l| l.starts_with("warning: the target's process was restarted"))
        };
        assert!(!warned(&stats));
        assert!(warned(&Stats {
            restarts: 6,
            ..stats
        }));
    }
}
