//! Every strategy a campaign runs, by name: one of the loop's own
//! ([`StrategyKind`]) or a whitebox search ([`Search`]), which runs in the coverage
//! campaign's loop (its output, stats and budgets), and the strategy it makes.

use crate::FuzzError;
use crate::strategy::{FdLoopConfig, Strategy, StrategyKind, make_strategy};
use crate::whitebox::{Search, WhiteboxConfig, WhiteboxSearch};
use thicket_gen::Generator;
use thicket_grammar::Tokens;
use thicket_tree::DerivationTree;

/// A strategy by name (`thicket fuzz --strategy NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyChoice {
    /// A strategy of the campaign's loop.
    Campaign(StrategyKind),
    /// A generational search over token-level path conditions, or its baselines.
    Whitebox(Search),
}

impl StrategyChoice {
    /// The strategy of a name, or an error listing the names there are.
    pub fn from_name(text: &str) -> Result<StrategyChoice, String> {
        if let Some(kind) = StrategyKind::from_name(text) {
            return Ok(StrategyChoice::Campaign(kind));
        }
        if let Some((_, search)) = Search::ALL.iter().find(|(n, _)| *n == text) {
            return Ok(StrategyChoice::Whitebox(*search));
        }
        let names: Vec<&str> = StrategyKind::ALL
            .iter()
            .map(|(n, _)| *n)
            .chain(Search::ALL.iter().map(|(n, _)| *n))
            .collect();
        Err(format!(
            "unknown strategy `{text}`; one of {}",
            names.join(", ")
        ))
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            StrategyChoice::Campaign(kind) => StrategyKind::ALL
                .iter()
                .find(|(_, k)| *k == kind)
                .map_or("coverage", |(n, _)| n),
            StrategyChoice::Whitebox(search) => search.op(),
        }
    }

    /// The loop it runs in: a whitebox search runs in the coverage campaign's.
    pub fn kind(self) -> StrategyKind {
        match self {
            StrategyChoice::Campaign(kind) => kind,
            StrategyChoice::Whitebox(_) => StrategyKind::Coverage,
        }
    }

    /// The whitebox search, if it is one.
    pub fn search(self) -> Option<Search> {
        match self {
            StrategyChoice::Whitebox(search) => Some(search),
            StrategyChoice::Campaign(_) => None,
        }
    }

    /// The strategy to give [`crate::Campaign::with_strategy`], `None` for the
    /// campaign's own coverage strategy. `seeds` are the trees learning strategies
    /// learn from; a whitebox search needs the spec's `tokens` and its settings
    /// (`whitebox`, whose `search` this choice sets) and draws from `seed`.
    pub fn build<'g>(
        self,
        generator: &'g Generator<'g>,
        seeds: &[DerivationTree],
        fdloop: FdLoopConfig,
        whitebox: Option<(&'g Tokens, WhiteboxConfig)>,
        seed: u64,
    ) -> Result<Option<Box<dyn Strategy + 'g>>, FuzzError> {
        Ok(match self {
            StrategyChoice::Campaign(StrategyKind::Coverage) => None,
            StrategyChoice::Campaign(kind) => Some(make_strategy(kind, generator, seeds, fdloop)),
            StrategyChoice::Whitebox(search) => {
                let (tokens, config) = whitebox.ok_or_else(|| {
                    FuzzError::Campaign(format!("--strategy {}: no token rules", search.op()))
                })?;
                let config = WhiteboxConfig { search, ..config };
                Some(Box::new(WhiteboxSearch::new(
                    generator, tokens, config, seed,
                )?))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_itself_and_unknown_ones_list_the_names() {
        for name in StrategyKind::ALL
            .iter()
            .map(|(n, _)| *n)
            .chain(Search::ALL.iter().map(|(n, _)| *n))
        {
            assert_eq!(StrategyChoice::from_name(name).unwrap().name(), name);
        }
        let whitebox = StrategyChoice::from_name("whitebox").unwrap();
        assert_eq!(whitebox.kind(), StrategyKind::Coverage);
        assert_eq!(whitebox.search(), Some(Search::Whitebox));
        let error = StrategyChoice::from_name("afl").unwrap_err();
        assert!(error.contains("unknown strategy `afl`"), "{error}");
        assert!(
            error.contains("fdloop") && error.contains("blackbox-tokens"),
            "{error}"
        );
    }
}
