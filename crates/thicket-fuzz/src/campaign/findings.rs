//! What a campaign saves: kept inputs in `queue/`, failures in `crashes/` and
//! `hangs/`, each with its `meta/` record, written atomically when found.

use super::{Campaign, Entry};
use crate::FuzzError;
use crate::minimize::{CrashEvent, MinimizeLimits, reduce_decoded};
use crate::output::file_safe;
use crate::stats::FailureRecord;
use crate::strategy::Input;
use serde::Serialize;
use thicket_exec::{Failure, Novelty, Outcome};

/// Deepest tree (rule expansions on a path) written into `meta/` files: its fuzzingbook
/// JSON nests about twice as deep, within the 128 levels serde_json reads by default.
const MAX_META_TREE_DEPTH: u32 = 60;

#[derive(Serialize)]
struct Meta<'a> {
    id: usize,
    file: &'a str,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    novelty: Option<Novelty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    op: &'a str,
    parent: Option<usize>,
    exec: u64,
    time_ms: u64,
    status: String,
    duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_hex: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    stderr_tail: String,
}

impl Campaign<'_> {
    /// Saves an input that reached new code in `queue/` and adds it to the corpus.
    pub(super) fn keep(
        &mut self,
        input: &Input,
        op: &str,
        parent: Option<usize>,
        novelty: Novelty,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        let id = self.corpus.len();
        let mut name = self.name(id, parent, op);
        if novelty.has_new_code() {
            name.push_str(",+cov");
        }
        let file = format!("queue/{name}");
        self.save(
            &file,
            input,
            "coverage",
            Some(novelty),
            None,
            op,
            parent,
            id,
            outcome,
        )?;
        self.queue_bytes += input.bytes().len() as u64;
        self.corpus.push(Entry::new(
            self.grammar,
            id,
            input.tree().cloned(),
            input.bytes(),
        ));
        // Only the tree mutations draw favoured inputs: an input without a tree (havoc's)
        // must not take a feature from the smallest tree reaching it.
        if input.tree().is_some() {
            self.rate_last_entry(input.bytes().len());
        }
        self.stats.last_find_exec = self.stats.execs;
        Ok(())
    }

    /// Counts a failure and saves its input if the failure is new (see the crate docs).
    pub(super) fn record_failure(
        &mut self,
        input: &Input,
        op: &str,
        parent: Option<usize>,
        failure: &Failure,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        let hang = failure.is_hang();
        if hang {
            self.stats.hanging_runs += 1;
        } else {
            self.stats.failing_runs += 1;
        }
        let key = failure.key();
        let new = if failure.location.is_some() {
            !self.failures.contains_key(&key)
        } else {
            // No location: distinct if it reached code no earlier such failure reached
            // (AFL's rule), or the first of its kind when there is no coverage.
            let trace = self.judge.trace();
            let set = if hang {
                &mut self.hang_coverage
            } else {
                &mut self.crash_coverage
            };
            let novelty = set.add(&trace);
            novelty.has_new_code() || !self.failures.contains_key(&key)
        };
        if !new {
            if let Some(record) = self.failures.get_mut(&key) {
                record.count += 1;
            }
            return Ok(());
        }
        let (folder, id) = if hang {
            self.next_hang += 1;
            ("hangs", self.next_hang - 1)
        } else {
            self.next_crash += 1;
            ("crashes", self.next_crash - 1)
        };
        let src = parent.map_or("none".to_string(), |p| format!("{p:06}"));
        let tag = match (&failure.kind, outcome.status) {
            (_, thicket_exec::Status::Signaled(sig)) => format!("sig:{sig:02}"),
            (kind, _) => format!("kind:{}", file_safe(&kind.label())),
        };
        let name = if hang {
            format!(
                "id:{id:06},src:{src},time:{},execs:{},op:{op}",
                self.elapsed_ms(),
                self.stats.execs
            )
        } else {
            format!(
                "id:{id:06},{tag},src:{src},time:{},execs:{},op:{op}",
                self.elapsed_ms(),
                self.stats.execs
            )
        };
        let file = format!("{folder}/{name}");
        self.save(
            &file,
            input,
            "failure",
            None,
            Some(failure),
            op,
            parent,
            id,
            outcome,
        )?;
        self.failures
            .entry(key.clone())
            .and_modify(|r| r.count += 1)
            .or_insert(FailureRecord {
                key,
                kind: failure.kind.clone(),
                file,
                summary: failure.summary.clone(),
                count: 1,
            });
        self.stats.last_find_exec = self.stats.execs;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn save(
        &mut self,
        file: &str,
        input: &Input,
        reason: &str,
        novelty: Option<thicket_exec::Novelty>,
        failure: Option<&Failure>,
        op: &str,
        parent: Option<usize>,
        id: usize,
        outcome: &Outcome,
    ) -> Result<(), FuzzError> {
        self.out.write(file, input.bytes())?;
        let text = std::str::from_utf8(input.bytes()).ok();
        let stderr = outcome.stderr.text();
        let stderr_tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            chars[chars.len().saturating_sub(2000)..].iter().collect()
        };
        let meta = Meta {
            id,
            file,
            reason,
            novelty,
            failure,
            key: failure.map(Failure::key),
            op,
            parent,
            exec: self.stats.execs,
            time_ms: self.elapsed_ms(),
            status: outcome.describe(),
            duration_us: outcome.time.as_micros() as u64,
            input: text,
            input_hex: text.is_none().then(|| hex(input.bytes())),
            stderr_tail: if failure.is_some() {
                stderr_tail
            } else {
                String::new()
            },
        };
        let mut json = serde_json::to_string(&meta).expect("meta serializes");
        json.pop();
        // A tree nested deeper than JSON readers go (serde_json 128 levels, Python's
        // json about 1,000; a recursive mutant can nest thousands) is left out: the
        // input parses back into it.
        if let Some(tree) = input.tree() {
            let depth = tree.depth(self.grammar);
            if depth <= MAX_META_TREE_DEPTH {
                json.push_str(",\"tree\":");
                json.push_str(&tree.to_fuzzingbook_json(self.grammar));
            } else {
                json.push_str(&format!(",\"tree_omitted_depth\":{depth}"));
            }
        }
        json.push_str("}\n");
        self.out
            .write(&format!("meta/{file}.json"), json.as_bytes())
    }

    fn name(&self, id: usize, parent: Option<usize>, op: &str) -> String {
        let src = parent.map_or("none".to_string(), |p| format!("{p:06}"));
        let ms = self.elapsed_ms();
        format!(
            "id:{id:06},src:{src},time:{ms},execs:{},op:{op}",
            self.stats.execs
        )
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Campaign<'_> {
    /// Minimises one saved crash per distinct failure (kind and location) into
    /// `minimized/` under the crash's name, with at most `max_runs` runs each, through
    /// the campaign's own judge (the same target process and rules) and seed; `events`
    /// hears of each crash.
    pub fn minimize_crashes(
        &mut self,
        max_runs: u64,
        events: &mut dyn FnMut(CrashEvent<'_>),
    ) -> Result<(), FuzzError> {
        let crashes = self.out.list("crashes")?;
        if crashes.is_empty() {
            return Ok(());
        }
        let root = self.out.root().to_path_buf();
        let into = root.join("minimized");
        std::fs::create_dir_all(&into)
            .map_err(|e| FuzzError::Io(format!("cannot create {}", into.display()), e))?;
        let limits = MinimizeLimits {
            max_runs,
            deadline: None,
        };
        let mut done = std::collections::HashSet::new();
        for (name, path) in crashes {
            // The campaign recorded each crash's failure: one minimisation per failure.
            let meta = root.join("meta/crashes").join(format!("{name}.json"));
            let key = std::fs::read_to_string(&meta)
                .ok()
                .and_then(|t| crate::output::read_meta(&t))
                .and_then(|m| m["key"].as_str().map(str::to_string));
            if key.as_ref().is_some_and(|k| done.contains(k)) {
                continue;
            }
            let input = std::fs::read(&path)
                .map_err(|e| FuzzError::Io(format!("cannot read {}", path.display()), e))?;
            let len = input.len();
            let reduced = reduce_decoded(
                self.grammar,
                self.encoding,
                &mut self.judge,
                &input,
                limits,
                self.config.seed,
                false,
                &mut |event| {
                    events(CrashEvent::Reduce {
                        path: &path,
                        len,
                        event,
                    })
                },
            )?;
            let Some(reduced) = reduced else {
                events(CrashEvent::Flaky { path: &path });
                continue;
            };
            let fresh = done.insert(reduced.key.clone());
            done.extend(key);
            if !fresh {
                // Fails like a crash minimised before (its location differed in the
                // campaign).
                continue;
            }
            self.out
                .write(&format!("minimized/{name}"), &reduced.bytes)?;
            events(CrashEvent::Minimized {
                name: &name,
                from: len,
                to: reduced.bytes.len(),
                key: &reduced.key,
            });
        }
        Ok(())
    }
}
