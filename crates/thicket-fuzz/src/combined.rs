//! The figures of parallel campaigns (`thicket fuzz -j N`): the workers, each a campaign
//! in `OUT/worker-I` with its own `stats.json`, added up into one `OUT/stats.json` in the
//! same shape, so that a script reading `OUT/stats.json` works with or without `-j`.
//!
//! How each figure combines ([`combine`]): counts of runs, rounds, files, restarts and
//! errors, `execs_per_sec`, `target_time_s` and the per-operation counts (`ops`) are
//! summed; `elapsed_s`, `last_find_exec` and `code_features` are the largest of the
//! workers'; `queue` counts each worker's own finds (its queue without what it imported
//! from the others, which are copies); `failures` are merged by key (runs summed, the
//! first worker's file, as a path below `OUT`), and `distinct_failures` counts the keys;
//! `coverage` is the largest of the workers' (each imports the others' finds every few
//! seconds, so each approaches their union, which no worker measures); `mean_input_size`
//! is the mean over all runs; `seed`, `spec`, `target`, `executor`, `feedback`,
//! `strategy` and `target_package` are the first worker's (worker `I` runs seed `S+I`);
//! `likely_rejection` is judged again over the merged failures; `strategy_stats` (a
//! strategy's own figures, whose shape only it knows) holds each worker's under its
//! name. `workers` lists each
//! worker's own headline figures, and marks the file as a parallel campaign's.

use crate::{FailureRecord, FuzzError, Stats};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// One worker's headline figures in [`Combined::workers`].
#[derive(Clone, Debug, Serialize)]
pub struct WorkerFigures {
    /// Its name, which is its folder in `OUT`.
    pub name: String,
    /// Its seed.
    pub seed: u64,
    /// Its executions.
    pub execs: u64,
    /// Its executions per second.
    pub execs_per_sec: f64,
    /// Inputs it kept (its own and those it imported).
    pub queue: usize,
    /// Inputs it imported from the others.
    pub imported: u64,
    /// Its distinct failures.
    pub distinct_failures: usize,
    /// Its coverage, in one line (`412 lines, 160 branches`).
    pub coverage: String,
}

/// The combined figures of a parallel campaign, as written to `OUT/stats.json`: the
/// fields of a campaign's [`Stats`] (combined as the module docs say) and `workers`.
#[derive(Clone, Debug, Serialize)]
pub struct Combined {
    /// The totals.
    #[serde(flatten)]
    pub totals: Stats,
    /// Each worker's own figures, in worker order (those whose figures could be read).
    pub workers: Vec<WorkerFigures>,
}

/// A campaign's `stats.json` in `dir`, if it is there and readable.
pub fn read_stats(dir: &Path) -> Option<Stats> {
    let text = std::fs::read_to_string(dir.join("stats.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether a `stats.json` (as JSON) is a parallel campaign's combined figures.
pub fn is_combined(stats: &serde_json::Value) -> bool {
    stats["workers"].is_array()
}

/// The workers' figures (name and stats, in worker order) combined; `None` if there are
/// none.
pub fn combine(workers: &[(String, Stats)]) -> Option<Combined> {
    let (_, first) = workers.first()?;
    let mut totals = Stats {
        seed: first.seed,
        spec: first.spec.clone(),
        target: first.target.clone(),
        executor: first.executor.clone(),
        feedback: first.feedback,
        strategy: first.strategy.clone(),
        target_package: first.target_package.clone(),
        ..Stats::default()
    };
    let mut failures: BTreeMap<String, FailureRecord> = BTreeMap::new();
    let mut input_bytes = 0.0;
    let (mut own_us, mut queue_bytes, mut queue_entries) = (0.0, 0.0, 0);
    let mut best = &first.coverage;
    for (name, s) in workers {
        totals.execs += s.execs;
        totals.rounds += s.rounds;
        totals.unsolved_rounds += s.unsolved_rounds;
        totals.unencodable_rounds += s.unencodable_rounds;
        totals.elapsed_s = totals.elapsed_s.max(s.elapsed_s);
        totals.execs_per_sec += s.execs_per_sec;
        totals.queue += s.queue.saturating_sub(s.imported as usize);
        totals.crash_files += s.crash_files;
        totals.hang_files += s.hang_files;
        totals.failing_runs += s.failing_runs;
        totals.hanging_runs += s.hanging_runs;
        totals.hangs_dismissed += s.hangs_dismissed;
        totals.restarts += s.restarts;
        totals.empty_coverage_runs += s.empty_coverage_runs;
        totals.held_output_runs += s.held_output_runs;
        totals.executor_errors += s.executor_errors;
        totals.last_find_exec = totals.last_find_exec.max(s.last_find_exec);
        totals.sync_execs += s.sync_execs;
        totals.imported += s.imported;
        totals.imported_outside_grammar += s.imported_outside_grammar;
        totals.mappings += s.mappings;
        totals.code_features = totals.code_features.max(s.code_features);
        totals.target_time_s += s.target_time_s;
        input_bytes += s.mean_input_size * s.execs as f64;
        own_us += s.own_us_per_exec * s.execs as f64;
        queue_bytes += s.mean_queue_input_size * s.queue as f64;
        queue_entries += s.queue;
        if s.coverage.amount() > best.amount() {
            best = &s.coverage;
        }
        for (op, count) in &s.ops {
            let total = totals.ops.entry(op.clone()).or_default();
            total.runs += count.runs;
            total.kept += count.kept;
        }
        for record in &s.failures {
            failures
                .entry(record.key.clone())
                .and_modify(|r| r.count += record.count)
                .or_insert_with(|| FailureRecord {
                    file: format!("{name}/{}", record.file),
                    ..record.clone()
                });
        }
    }
    if workers.iter().any(|(_, s)| !s.strategy_stats.is_null()) {
        totals.strategy_stats = workers
            .iter()
            .map(|(name, s)| (name.clone(), s.strategy_stats.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    totals.mean_input_size = input_bytes / totals.execs.max(1) as f64;
    totals.own_us_per_exec = own_us / totals.execs.max(1) as f64;
    totals.mean_queue_input_size = queue_bytes / queue_entries.max(1) as f64;
    totals.coverage = best.clone();
    totals.failures = failures.into_values().collect();
    totals.distinct_failures = totals
        .failures
        .iter()
        .filter(|f| !matches!(f.kind, thicket_exec::FailureKind::Hang))
        .count();
    totals.likely_rejection = thicket_exec::likely_rejection(
        totals.failures.iter().map(|r| (&r.kind, r.count)),
        totals.target_package.as_deref(),
    );
    let workers = workers
        .iter()
        .map(|(name, s)| WorkerFigures {
            name: name.clone(),
            seed: s.seed,
            execs: s.execs,
            execs_per_sec: s.execs_per_sec,
            queue: s.queue,
            imported: s.imported,
            distinct_failures: s.distinct_failures,
            coverage: s.coverage.headline(),
        })
        .collect();
    Some(Combined { totals, workers })
}

/// Writes `combined` to `out/stats.json` atomically (a temporary file renamed over it).
pub fn write(out: &Path, combined: &Combined) -> Result<(), FuzzError> {
    let dest = out.join("stats.json");
    let tmp = out.join(format!(".stats.json.{}", std::process::id()));
    let io = |e| FuzzError::Io(format!("cannot write {}", dest.display()), e);
    let mut json = serde_json::to_string_pretty(combined).expect("stats serialize");
    json.push('\n');
    let mut file = std::fs::File::create(&tmp).map_err(io)?;
    file.write_all(json.as_bytes()).map_err(io)?;
    drop(file);
    std::fs::rename(&tmp, &dest).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_exec::FailureKind;

    fn worker(
        execs: u64,
        queue: usize,
        imported: u64,
        lines: usize,
        failures: &[(&str, u64)],
    ) -> Stats {
        Stats {
            seed: 7,
            execs,
            execs_per_sec: execs as f64 / 10.0,
            elapsed_s: 10.0 + execs as f64 / 1000.0,
            queue,
            imported,
            failing_runs: failures.iter().map(|(_, n)| n).sum(),
            mean_input_size: 10.0,
            coverage: thicket_exec::CoverageSummary {
                kind: thicket_exec::CoverageKind::Python,
                lines: Some(lines),
                ..Default::default()
            },
            failures: failures
                .iter()
                .map(|(key, count)| FailureRecord {
                    key: key.to_string(),
                    kind: FailureKind::Exception {
                        language: "python".into(),
                        class: key.split(' ').nth(1).unwrap().into(),
                    },
                    file: format!("crashes/{key}"),
                    summary: String::new(),
                    count: *count,
                })
                .collect(),
            ..Stats::default()
        }
    }

    #[test]
    fn workers_add_up_and_failures_merge_by_key() {
        let workers = vec![
            (
                "worker-0".to_string(),
                worker(1000, 5, 2, 40, &[("python ValueError @ a", 3)]),
            ),
            (
                "worker-1".to_string(),
                worker(
                    3000,
                    7,
                    1,
                    55,
                    &[("python ValueError @ a", 4), ("python KeyError @ b", 1)],
                ),
            ),
        ];
        let c = combine(&workers).unwrap();
        let t = &c.totals;
        assert_eq!(t.execs, 4000);
        assert_eq!(t.execs_per_sec, 400.0);
        assert_eq!(t.elapsed_s, 13.0);
        assert_eq!(t.queue, 3 + 6, "each worker's own finds");
        assert_eq!(t.failing_runs, 8);
        assert_eq!(t.distinct_failures, 2);
        assert_eq!(t.coverage.lines, Some(55), "the largest coverage");
        assert_eq!(t.mean_input_size, 10.0);
        let value_error = t
            .failures
            .iter()
            .find(|f| f.key.contains("ValueError"))
            .unwrap();
        assert_eq!(value_error.count, 7);
        assert_eq!(value_error.file, "worker-0/crashes/python ValueError @ a");
        assert_eq!(c.workers.len(), 2);
        assert_eq!(c.workers[1].execs, 3000);
        // The file is a campaign's stats.json with the workers besides, and reads back.
        let json = serde_json::to_value(&c).unwrap();
        assert!(is_combined(&json));
        let single = serde_json::to_value(&workers[0].1).unwrap();
        for key in single.as_object().unwrap().keys() {
            assert!(json.get(key).is_some(), "{key} missing");
        }
        let back: Stats = serde_json::from_value(json).unwrap();
        assert_eq!(back.execs, 4000);
        assert!(combine(&[]).is_none());
    }
}
