//! The off-grammar stage of the coverage-guided strategy: byte havoc
//! ([`thicket_mutate::havoc`]) on the smallest kept inputs, spent when the grammar's
//! mutations stall.
//!
//! A grammar campaign reaches most of a parser early and then plateaus: what is left is
//! often beyond the language its spec describes (json-c reads C comments, `NaN` and
//! `Infinity`; specs/json.fan is RFC 8259 JSON), where stacked byte edits on small
//! inputs get and tree mutations rarely do. Spending executions on havoc from the start
//! would change every short campaign's draws for little; spending them once the
//! grammar's mutations have stopped finding anything costs what they would have wasted.
//!
//! **The stall rule** ([`HavocShare::Auto`], the default): let `s` be the executions
//! since a grammar round (fresh or a tree mutant, anything but havoc) last kept an
//! input. While `s` < [`STALL_EXECS`] no round is havoc (and no random number is
//! drawn for it, so a campaign that never stalls makes exactly the inputs it made
//! without this stage); from there the share of havoc rounds grows by one per mille
//! every [`RAMP_EXECS`] executions, up to [`AUTO_MAX_PER_MILLE`]. What havoc keeps does
//! not reset `s`: its inputs have no tree for the grammar's mutations to work on, and
//! while havoc finds and the grammar does not, havoc should keep its share. A grammar
//! round's find resets `s`, and havoc stops until the next stall. Executions, not
//! seconds, so a campaign is reproducible from its seed and budget in executions.
//!
//! **A havoc round**: a parent drawn uniformly among the quarter of kept inputs with
//! the fewest bytes (at least one input; any kept input, with a tree or without),
//! a donor for splices drawn uniformly among all kept inputs, the dictionary the
//! grammar's literal terminals, the mutant at most [`MAX_HAVOC_LEN`] bytes (or its
//! parent's size if larger); for a target that takes text, bytes that are not UTF-8 are
//! dropped. The candidate holds only bytes; its operation is `havoc`, so
//! `stats.json`'s `ops` counts havoc's runs and finds like every other operation's,
//! and its figures (share, stall) are under `strategy_stats.havoc`.
//! `--valid-only` campaigns never run havoc: its inputs leave the grammar by design.

use crate::campaign::Entry;
use crate::strategy::{Candidate, Ctx, RunReport};
use serde_json::{Value, json};
use thicket_gen::{GenRng, below};
use thicket_mutate::havoc::{Dictionary, havoc};

/// Executions without a grammar round's find before [`HavocShare::Auto`] runs havoc.
pub const STALL_EXECS: u64 = 2_000;

/// Executions of a stall per per-mille step of [`HavocShare::Auto`]'s share.
pub const RAMP_EXECS: u64 = 10;

/// The highest share of rounds [`HavocShare::Auto`] gives havoc (per mille), reached
/// `STALL_EXECS + 500 * RAMP_EXECS` = 7,000 executions into a stall: the other half
/// stays with the grammar's mutations, which still find now and then.
pub const AUTO_MAX_PER_MILLE: u32 = 500;

/// The longest mutant havoc makes from a parent shorter than this (bytes).
pub const MAX_HAVOC_LEN: usize = 1024;

/// How much of a campaign goes to byte havoc (`thicket fuzz --havoc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HavocShare {
    /// By the stall rule (see the module docs).
    #[default]
    Auto,
    /// Never.
    Off,
    /// This share of rounds (per mille) once an input is kept, stalled or not.
    Fixed(u32),
}

impl HavocShare {
    /// `auto`, `off`, or a share between 0 and 1 (`0.25`).
    pub fn parse(text: &str) -> Result<HavocShare, String> {
        match text {
            "auto" => Ok(HavocShare::Auto),
            "off" => Ok(HavocShare::Off),
            _ => match text.parse::<f64>() {
                Ok(p) if (0.0..=1.0).contains(&p) => {
                    Ok(HavocShare::Fixed((p * 1000.0).round() as u32))
                }
                _ => Err(format!(
                    "expected `auto`, `off` or a share between 0 and 1, not `{text}`"
                )),
            },
        }
    }

    /// The share of rounds (per mille) that are havoc `stalled` executions after a
    /// grammar round last kept an input.
    pub fn per_mille(self, stalled: u64) -> u32 {
        match self {
            HavocShare::Off => 0,
            HavocShare::Fixed(share) => share.min(1000),
            HavocShare::Auto if stalled < STALL_EXECS => 0,
            HavocShare::Auto => {
                let steps = (stalled - STALL_EXECS) / RAMP_EXECS;
                steps.min(u64::from(AUTO_MAX_PER_MILLE)) as u32
            }
        }
    }
}

/// The operation name of havoc's rounds (in `ops`, queue file names and `meta/`).
pub const HAVOC_OP: &str = "havoc";

/// The havoc stage's state within the coverage-guided strategy.
#[derive(Default)]
pub(crate) struct HavocStage {
    /// Executions since a grammar round last kept an input.
    stalled: u64,
    /// The execution (counted from this session's start) of the first havoc round.
    first_round: Option<u64>,
    /// Executions observed this session.
    observed: u64,
    /// The grammar's literals, gathered at the first havoc round.
    dictionary: Option<Dictionary>,
    /// Kept inputs as (length, corpus index), shortest first; the corpus only grows, so
    /// new entries are added as they appear.
    by_size: Vec<(usize, usize)>,
}

impl HavocStage {
    /// A havoc candidate for the round `ahead` runs from now (0: this round; 1: the
    /// next, made while this one runs, for a run that keeps nothing), if the share says
    /// so; `None` (drawing nothing from `rng` while the share is 0) leaves the round to
    /// the grammar.
    pub(crate) fn next(
        &mut self,
        ctx: &Ctx<'_, '_>,
        rng: &mut GenRng,
        ahead: u64,
    ) -> Option<Candidate> {
        if ctx.config.valid_only || !ctx.config.feedback || ctx.corpus.is_empty() {
            return None;
        }
        let share = ctx.config.havoc.per_mille(self.stalled + ahead);
        if share == 0 || below(rng, 1000) >= share {
            return None;
        }
        self.index(ctx.corpus);
        let pool = (self.by_size.len() / 4).max(1);
        let parent = &ctx.corpus[self.by_size[below(rng, pool as u32) as usize].1];
        let donor = &ctx.corpus[below(rng, ctx.corpus.len() as u32) as usize];
        let dictionary = self
            .dictionary
            .get_or_insert_with(|| Dictionary::of_grammar(ctx.generator.grammar()));
        let mut bytes = havoc(
            parent.bytes(),
            Some(donor.bytes()),
            dictionary,
            MAX_HAVOC_LEN,
            rng,
        );
        if ctx.text {
            bytes = valid_text(&bytes);
        }
        Some(Candidate::bytes(bytes, HAVOC_OP, Some(parent.id)))
    }

    /// Counts a run: a grammar round that kept its input ends the stall.
    pub(crate) fn observe(&mut self, report: &RunReport<'_>) {
        // Set here, not when the round is made: a round made ahead may not be run.
        if report.op == HAVOC_OP {
            self.first_round.get_or_insert(self.observed);
        }
        self.observed += 1;
        if report.op != HAVOC_OP && report.novelty.is_new() {
            self.stalled = 0;
        } else {
            self.stalled += 1;
        }
    }

    /// Its figures for `stats.json`'s `strategy_stats.havoc`.
    pub(crate) fn summary(&self, share: HavocShare) -> Value {
        json!({
            "share_per_mille": share.per_mille(self.stalled),
            "stalled_execs": self.stalled,
            "first_round": self.first_round,
            "dictionary_tokens": self.dictionary.as_ref().map(Dictionary::len),
        })
    }

    /// Adds the corpus entries not yet in `by_size`.
    fn index(&mut self, corpus: &[Entry]) {
        for (index, entry) in corpus.iter().enumerate().skip(self.by_size.len()) {
            let key = (entry.bytes().len(), index);
            let at = self.by_size.partition_point(|&k| k < key);
            self.by_size.insert(at, key);
        }
    }
}

/// The valid UTF-8 of `bytes`, invalid sequences dropped: a target that takes text
/// gets text, and no U+FFFD stands in for bytes (which a target could not tell from
/// an input decoded with replacement).
fn valid_text(bytes: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.extend_from_slice(chunk.valid().as_bytes());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_waits_for_a_stall_then_grows_to_half() {
        let auto = HavocShare::Auto;
        assert_eq!(auto.per_mille(0), 0);
        assert_eq!(auto.per_mille(STALL_EXECS - 1), 0);
        assert_eq!(auto.per_mille(STALL_EXECS), 0);
        assert_eq!(auto.per_mille(STALL_EXECS + 10 * RAMP_EXECS), 10);
        assert_eq!(auto.per_mille(STALL_EXECS + 250 * RAMP_EXECS), 250);
        assert_eq!(auto.per_mille(7_000), AUTO_MAX_PER_MILLE);
        assert_eq!(auto.per_mille(u64::MAX), AUTO_MAX_PER_MILLE);
        let shares: Vec<u32> = (0..10_000)
            .step_by(100)
            .map(|s| auto.per_mille(s))
            .collect();
        assert!(shares.windows(2).all(|w| w[0] <= w[1]), "never shrinks");
        assert_eq!(HavocShare::Off.per_mille(1_000_000), 0);
        assert_eq!(HavocShare::Fixed(300).per_mille(0), 300);
    }

    #[test]
    fn shares_from_text() {
        assert_eq!(HavocShare::parse("auto"), Ok(HavocShare::Auto));
        assert_eq!(HavocShare::parse("off"), Ok(HavocShare::Off));
        assert_eq!(HavocShare::parse("0.25"), Ok(HavocShare::Fixed(250)));
        assert_eq!(HavocShare::parse("1"), Ok(HavocShare::Fixed(1000)));
        assert!(HavocShare::parse("1.5").is_err());
        assert!(HavocShare::parse("-0.1").is_err());
        assert!(HavocShare::parse("half").is_err());
    }

    #[test]
    fn text_targets_get_the_valid_utf8_of_a_mutant() {
        assert_eq!(valid_text(b"a\xffb\xc3"), b"ab");
        assert_eq!(
            valid_text("é€\u{1f600}".as_bytes()),
            "é€\u{1f600}".as_bytes()
        );
        // A truncated sequence goes whole.
        assert_eq!(valid_text(b"x\xe2\x82"), b"x");
    }
}
