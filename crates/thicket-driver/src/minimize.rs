//! A failing input reduced as its spec reads it (`thicket minimize`): through the tree
//! of its text, or, when the spec packs bit fields into bytes, through the tree its
//! bits encode, each candidate tree run as its bits packed
//! ([`thicket_fuzz::minimize`] does the reducing).

use thicket_exec::Judge;
use thicket_fandango::PackedBits;
use thicket_fuzz::FuzzError;
use thicket_fuzz::minimize::{Encoded, MinimizeLimits, ReduceEvent, Reduced};
use thicket_grammar::Grammar;

/// Reduces `input` of `grammar` while `judge` sees it fail the same way: read as text,
/// or with `encoding` as the bits it packs (an input whose bits do not read is reduced
/// by its bytes, and the reason reported through `events`). `None` if it does not
/// fail. `seed`, `limits` and `bytes` as in [`thicket_fuzz::minimize::reduce`].
#[allow(clippy::too_many_arguments)]
pub fn reduce(
    grammar: &Grammar,
    encoding: Option<&PackedBits<'_>>,
    judge: &mut Judge,
    input: &[u8],
    limits: MinimizeLimits,
    seed: u64,
    bytes: bool,
    events: &mut dyn FnMut(ReduceEvent<'_>),
) -> Result<Option<Reduced>, FuzzError> {
    match encoding {
        Some(encoding) => {
            let encoded = Encoded {
                input,
                tree: encoding.unpacker.parse(input),
                encoding,
            };
            thicket_fuzz::minimize::reduce_encoded(
                grammar, judge, encoded, limits, seed, bytes, events,
            )
        }
        None => thicket_fuzz::minimize::reduce(grammar, judge, input, limits, seed, bytes, events),
    }
}
