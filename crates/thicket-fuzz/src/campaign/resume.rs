//! Resuming a campaign from its output folder: the figures of `stats.json`, the kept
//! inputs run again through the judge to rebuild the coverage (by the same rule as the
//! loop's runs), the failures already saved.

use super::{Campaign, Entry};
use crate::FuzzError;
use crate::output::{self, id_of};
use crate::stats::{FailureRecord, OpCount};
use std::collections::BTreeMap;
use thicket_exec::FailureKind;

impl Campaign<'_> {
    /// Loads a campaign to resume: figures from `stats.json`, the kept inputs (run again
    /// to rebuild the coverage; parsed into trees so they can be mutated), and the
    /// failures already saved.
    pub(super) fn load(&mut self) -> Result<(), FuzzError> {
        let path = self.out.root().join("stats.json");
        // Runs per failure key, as the campaign last wrote them.
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(&path) {
            let old: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                FuzzError::Campaign(format!("--resume: {} is unreadable: {e}", path.display()))
            })?;
            if crate::combined::is_combined(&old) {
                return Err(FuzzError::Campaign(format!(
                    "--resume: {} holds a parallel campaign (fuzz -j): resume it with -j",
                    self.out.root().display()
                )));
            }
            if let Some(seed) = old["seed"].as_u64()
                && seed != self.config.seed
            {
                return Err(FuzzError::Campaign(format!(
                    "--resume: the campaign used --seed {seed}; resume it with that seed"
                )));
            }
            for (what, field, now) in [
                ("spec", "spec", &self.config.spec_id),
                ("target", "target", &self.config.target_id),
            ] {
                if let Some(was) = old[field].as_str()
                    && !was.is_empty()
                    && !now.is_empty()
                    && was != now
                {
                    return Err(FuzzError::Campaign(format!(
                        "--resume: {} holds a campaign with another {what}: it ran {was}, \
                         this one is {now}; use another output folder",
                        self.out.root().display()
                    )));
                }
            }
            self.stats.execs = old["execs"].as_u64().unwrap_or(0);
            self.stats.rounds = old["rounds"].as_u64().unwrap_or(self.stats.execs);
            self.stats.unsolved_rounds = old["unsolved_rounds"].as_u64().unwrap_or(0);
            self.hangs_dismissed_before = old["hangs_dismissed"].as_u64().unwrap_or(0);
            self.restarts_before = old["restarts"].as_u64().unwrap_or(0);
            self.elapsed_before = old["elapsed_s"].as_f64().unwrap_or(0.0);
            self.stats.last_find_exec = old["last_find_exec"].as_u64().unwrap_or(0);
            self.stats.failing_runs = old["failing_runs"].as_u64().unwrap_or(0);
            self.stats.hanging_runs = old["hanging_runs"].as_u64().unwrap_or(0);
            self.stats.sync_execs = old["sync_execs"].as_u64().unwrap_or(0);
            self.stats.imported = old["imported"].as_u64().unwrap_or(0);
            self.stats.imported_outside_grammar =
                old["imported_outside_grammar"].as_u64().unwrap_or(0);
            for failure in old["failures"].as_array().into_iter().flatten() {
                if let (Some(key), Some(count)) =
                    (failure["key"].as_str(), failure["count"].as_u64())
                {
                    counts.insert(key.to_string(), count);
                }
            }
            if let Some(ops) = old["ops"].as_object() {
                for (name, count) in ops {
                    self.stats.ops.insert(
                        name.clone(),
                        OpCount {
                            runs: count["runs"].as_u64().unwrap_or(0),
                            kept: count["kept"].as_u64().unwrap_or(0),
                        },
                    );
                }
            }
        }
        for (name, path) in self.out.list("queue")? {
            let bytes = std::fs::read(&path)
                .map_err(|e| FuzzError::Io(format!("cannot read {}", path.display()), e))?;
            let tree = self.tree_of(&bytes)?;
            let verdict = self.execute(&bytes)?;
            if let Some(verdict) = &verdict {
                self.cover(verdict);
            }
            self.queue_bytes += bytes.len() as u64;
            let id = id_of(&name).unwrap_or(self.corpus.len());
            let has_tree = tree.is_some();
            self.corpus.push(Entry::new(self.grammar, id, tree, &bytes));
            if has_tree && verdict.is_some_and(|v| v.counts_for_coverage()) {
                self.rate_last_entry(bytes.len());
            }
        }
        for folder in ["crashes", "hangs"] {
            for (name, path) in self.out.list(folder)? {
                if folder == "crashes" {
                    self.next_crash = self.next_crash.max(id_of(&name).map_or(0, |i| i + 1));
                    // Rebuild the coverage that tells location-less crashes apart.
                    if let Ok(bytes) = std::fs::read(&path)
                        && self.execute(&bytes)?.is_some()
                    {
                        self.crash_coverage.add(&self.judge.trace());
                    }
                } else {
                    self.next_hang = self.next_hang.max(id_of(&name).map_or(0, |i| i + 1));
                }
                let meta_path = self.out.root().join(format!("meta/{folder}/{name}.json"));
                let meta: serde_json::Value = std::fs::read_to_string(&meta_path)
                    .ok()
                    .and_then(|t| output::read_meta(&t))
                    .unwrap_or_default();
                let kind = serde_json::from_value::<FailureKind>(meta["failure"].clone());
                if let (Some(key), Ok(kind)) = (meta["key"].as_str(), kind) {
                    self.failures
                        .entry(key.to_string())
                        .and_modify(|r| r.count += 1)
                        .or_insert(FailureRecord {
                            key: key.to_string(),
                            kind,
                            file: format!("{folder}/{name}"),
                            summary: meta["failure"]["summary"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string(),
                            count: 1,
                        });
                }
            }
        }
        for record in self.failures.values_mut() {
            if let Some(&count) = counts.get(&record.key) {
                record.count = record.count.max(count);
            }
        }
        Ok(())
    }
}
