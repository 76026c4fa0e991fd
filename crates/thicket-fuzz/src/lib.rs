//! # thicket-fuzz
//!
//! Feedback-directed generation: a coverage-guided campaign over derivation trees. Each
//! round makes an input — a fresh tree from the generator, or a mutant of a kept tree
//! (a rule's subtree regenerated, or spliced in from another kept tree with the same
//! rule, 1-3 times stacked) — runs it with a [`thicket_exec::Executor`], keeps it if it
//! reached code no earlier input reached, and saves failures and hangs, deduplicated.
//!
//! Every input but havoc's is a derivation tree of the grammar. Regenerated and spliced
//! mutants are in the grammar's language; a fifth of the mutations change a byte of a
//! terminal (FdLoop's leaf bit-flip), which leaves the language to reach error handling
//! — `valid_only` turns those off. When the tree mutations stall (no input kept for
//! [`havoc::STALL_EXECS`] executions), a growing share of the rounds, up to half, are
//! AFL-style byte havoc on the smallest kept inputs, bytes without a tree, for what lies
//! beyond the spec's language ([`havoc`], [`FuzzConfig::havoc`]; not with `valid_only`).
//! With a [`thicket_solve::Solver`]
//! ([`Campaign::with_solver`]) fresh inputs satisfy the spec's constraints, and with
//! `valid_only` every mutant is repaired to satisfy them (a round whose input cannot be
//! made valid is skipped: nothing runs). The feedback steers which inputs are made. All
//! randomness of round `i` flows from `Generator::rng_for(seed, i)`; with the same seed,
//! target and budget in executions a campaign makes the same inputs (up to timing: hangs
//! depend on the clock). Without feedback ([`FuzzConfig::feedback`] off) the inputs are
//! exactly those of `thicket generate --seed S` (which skips the streams that give no
//! valid input in the same way), the baseline to compare against.
//!
//! Round `i + 1`'s input is made while the target runs round `i`'s, where the executor
//! can wait for the target apart from starting it (the AFL++ forkserver, see
//! [`thicket_exec::Executor::run_overlapping`]) and the strategy can tell its next input
//! before it sees the run (the coverage strategy:
//! [`strategy::Strategy::next_if_nothing_kept`]). Only a run that keeps an input changes
//! what the next round makes, so after such a run (a few in a thousand once a campaign
//! is under way) the next input is made again: the inputs are those made one after the
//! other, and on a machine with a core to spare making them costs no time of its own.
//!
//! The output folder ([`output`]) follows AFL's layout, each finding written atomically
//! when found; a campaign can be resumed from it. [`choice::StrategyChoice`] names
//! every strategy (the loop's own and the whitebox searches) and makes it. [`report`]
//! puts a campaign's figures into lines for a person: the status line, and the summary
//! with the warnings its figures call for; [`setup`] checks a campaign's options
//! together before anything runs.

#![warn(missing_docs)]

mod campaign;
pub mod choice;
pub mod combined;
pub mod havoc;
pub mod minimize;
pub mod mutate;
pub mod output;
pub mod report;
pub mod setup;
pub mod stats;
pub mod strategy;
pub mod sync;
pub mod whitebox;

pub use campaign::Campaign;
pub use stats::{FailureRecord, OpCount, Stats};

use std::time::Duration;
use thicket_exec::ExecError;

/// The solver limits of a campaign: a campaign spends little on any one input, so a
/// tree gets 8 repair rounds (the solver's default is 32) and a check visits at most
/// 100,000 quantifier instances (default 2,000,000; over the budget counts as violated).
/// A mutant not repaired within that is dropped and the next round drawn; on xml.bnf a
/// mutant that duplicates attributes took up to 17 s to give up with the defaults.
pub fn solver_config(generation: thicket_gen::GenConfig) -> thicket_solve::SolverConfig {
    thicket_solve::SolverConfig {
        generation,
        max_rounds: 8,
        check_budget: 100_000,
        ..Default::default()
    }
}

/// Why a campaign stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The executor failed (the target cannot be run).
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// A file of the output folder.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The campaign cannot go on (or start).
    #[error("{0}")]
    Campaign(String),
}

/// Settings of a campaign.
#[derive(Clone, Debug)]
pub struct FuzzConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Stop after this many executions (in all, counting a resumed campaign's).
    pub max_execs: Option<u64>,
    /// Stop after this much time (of this session).
    pub max_time: Option<Duration>,
    /// Use coverage feedback (mutate kept inputs); off: plain generation.
    pub feedback: bool,
    /// Per mille of rounds that mutate a kept input rather than generate afresh (once
    /// any input is kept).
    pub mutate_per_mille: u32,
    /// Continue the campaign in the output folder.
    pub resume: bool,
    /// Only valid inputs: mutations that stay in the grammar's language (no byte
    /// changes in terminals), and with a solver, mutants repaired to satisfy the
    /// constraints.
    pub valid_only: bool,
    /// What the campaign runs on, e.g. the spec's path and a hash of its text
    /// (recorded in `stats.json`; `--resume` refuses another). Empty: not checked.
    pub spec_id: String,
    /// What the campaign runs, e.g. the target's command line (recorded and checked as
    /// `spec_id`). Empty: not checked.
    pub target_id: String,
    /// Import other instances' queue entries from a shared folder now and then
    /// (AFL++'s sync protocol; the output folder should be `dir/name`).
    pub sync: Option<sync::SyncConfig>,
    /// Count code and input features of every run (`mappings`, `code_features` in
    /// `stats.json`) even if the strategy does not need them.
    pub track_features: bool,
    /// Also write a line of `plot_data.csv` every this many executions (besides one a
    /// second), for plots of short campaigns over executions.
    pub plot_every_execs: Option<u64>,
    /// How much of the coverage-guided strategy's rounds go to byte havoc, off the
    /// grammar (see [`havoc`]; never with `valid_only`).
    pub havoc: havoc::HavocShare,
}

impl Default for FuzzConfig {
    fn default() -> FuzzConfig {
        FuzzConfig {
            seed: 0,
            max_execs: None,
            max_time: None,
            feedback: true,
            mutate_per_mille: 800,
            resume: false,
            valid_only: false,
            spec_id: String::new(),
            target_id: String::new(),
            sync: None,
            track_features: false,
            plot_every_execs: None,
            havoc: havoc::HavocShare::Auto,
        }
    }
}

/// A spec's identity as a campaign records it ([`FuzzConfig::spec_id`]): its path and a
/// hash of its text (FNV-1a), so that `--resume` notices another spec, or the same file
/// changed.
pub fn spec_id(path: &std::path::Path, text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text.as_bytes() {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let name = path
        .canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    format!("{name} (text {hash:016x})")
}

/// The seed recorded in a campaign's `stats.json` in `out`, if it is there and holds one
/// (for `--resume` without `--seed`).
pub fn recorded_seed(out: &std::path::Path) -> Option<u64> {
    let text = std::fs::read_to_string(out.join("stats.json")).ok()?;
    serde_json::from_str::<serde_json::Value>(&text).ok()?["seed"].as_u64()
}
