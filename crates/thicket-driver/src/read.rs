//! An input read into the spec's tree: as its text, or bit by bit when the spec packs
//! bit fields into bytes.

use crate::files::Input;
use rustc_hash::FxHashSet;
use thicket_cover::{Coverage, KPath, KPathGraph};
use thicket_fandango::{BitLayout, PackedBits, UnpackedGrammar, Unpacker};
use thicket_gen::prob::{Counts, Weights};
use thicket_grammar::{ExprId, Grammar, Spec, SpecError};
use thicket_parse::{CompileError, ParseConfig, ParseError, ParseResult, Parser};
use thicket_tree::DerivationTree;

/// The grammar a spec's inputs are read with: the spec's own, or, when its inputs pack
/// bit fields into bytes, the grammar over their bits ([`UnpackedGrammar`]).
pub struct InputGrammar<'s> {
    grammar: &'s Grammar,
    /// With bit fields: where they are, and the grammar over the inputs' bits.
    packed: Option<(BitLayout, UnpackedGrammar)>,
}

impl<'s> InputGrammar<'s> {
    /// The grammar `spec`'s inputs are read with, or the spec's error at the terminal
    /// that cannot be read one bit at a time.
    pub fn new(spec: &'s Spec) -> Result<InputGrammar<'s>, SpecError> {
        let layout = BitLayout::new(&spec.grammar, &spec.fandango.bit_terminals);
        let unpacked = thicket_fandango::unpacked_grammar(spec)?;
        Ok(InputGrammar {
            grammar: &spec.grammar,
            packed: layout.zip(unpacked),
        })
    }

    /// Whether the inputs pack bit fields into bytes (and are read bit by bit).
    pub fn packs_bits(&self) -> bool {
        self.packed.is_some()
    }

    /// A reader of the spec's inputs.
    pub fn reader(&self, config: ParseConfig) -> Result<InputReader<'_>, CompileError> {
        InputReader::new(self.grammar, self.packed.as_ref().map(|(_, u)| u), config)
    }

    /// How trees stand for inputs when the inputs pack bit fields into bytes (a
    /// campaign's or a minimisation's [`thicket_gen::Encoding`]); `None` when the
    /// inputs are their trees' text.
    pub fn encoding(&self, config: ParseConfig) -> Result<Option<PackedBits<'_>>, CompileError> {
        let Some((layout, unpacked)) = &self.packed else {
            return Ok(None);
        };
        Ok(Some(PackedBits {
            layout,
            grammar: self.grammar,
            unpacker: unpacked.parser(config)?,
        }))
    }
}

/// Reads a spec's inputs into its trees (see [`InputGrammar::reader`]).
pub enum InputReader<'g> {
    /// Inputs that are their trees' text.
    Text(Parser<'g>),
    /// Inputs that pack bit fields into bytes, read one bit at a time.
    Bits(Unpacker<'g>),
}

impl<'g> InputReader<'g> {
    /// A reader of the inputs of `grammar`, bit by bit with `unpacked` (the grammar over
    /// the bits of a spec whose inputs pack bit fields; see [`InputGrammar::new`]).
    pub fn new(
        grammar: &'g Grammar,
        unpacked: Option<&'g UnpackedGrammar>,
        config: ParseConfig,
    ) -> Result<InputReader<'g>, CompileError> {
        Ok(match unpacked {
            Some(unpacked) => InputReader::Bits(unpacked.parser(config)?),
            None => InputReader::Text(Parser::new(grammar, config)?),
        })
    }

    /// The spec's tree of `input`, or why it is not in the language (for packed
    /// inputs, the rejection's offset is the packed input's byte where reading failed).
    pub fn read(&self, input: &[u8]) -> Result<DerivationTree, ParseError> {
        match self {
            InputReader::Text(parser) => parser.parse(input).map(|result| result.tree()),
            InputReader::Bits(unpacker) => unpacker.parse(input),
        }
    }

    /// Runs `read` on the parse of `input` (for packed inputs, of the input unpacked
    /// into a byte per bit, whose trees' node ids are the spec's): for what every parse
    /// holds, such as the k-paths present in any derivation.
    pub fn with_parse<R>(
        &self,
        input: &[u8],
        read: impl FnOnce(&ParseResult<'_, '_>) -> R,
    ) -> Result<R, ParseError> {
        match self {
            InputReader::Text(parser) => parser.parse(input).map(|result| read(&result)),
            InputReader::Bits(unpacker) => unpacker.with_parse(input, read),
        }
    }

    /// The k-path coverage of `input` for paths up to `max_k` long: of the tree the
    /// parser chooses, or with `all_parses` of every derivation (an input the chart
    /// shows unambiguous has them all in its one tree). The tree of a packed input,
    /// unpacked, has the spec's nodes, so its paths are the packed input's.
    pub fn coverage(
        &self,
        graph: &KPathGraph,
        input: &[u8],
        max_k: usize,
        all_parses: bool,
    ) -> Result<Coverage, ParseError> {
        let is_node = |x: u32| graph.is_node(ExprId::from_index(x as usize));
        let mut own = Coverage::new(max_k);
        // Each input is parsed once: the paths of every parse are taken from the chart,
        // else the one tree.
        let tree = match self {
            InputReader::Text(parser) => {
                let parsed = parser.parse(input)?;
                if all_parses && !parsed.known_unambiguous() {
                    own.add_paths(parsed.paths_in_any_parse(is_node, max_k));
                    return Ok(own);
                }
                // The chart's memory is free again (at the end of this arm) before
                // coverage needs its own.
                parsed.tree()
            }
            InputReader::Bits(unpacker) if all_parses => {
                let parse = unpacker.with_parse(input, |parsed| {
                    if parsed.known_unambiguous() {
                        Err(parsed.tree())
                    } else {
                        Ok(parsed.paths_in_any_parse(is_node, max_k))
                    }
                })?;
                match parse {
                    Ok(paths) => {
                        own.add_paths(paths);
                        return Ok(own);
                    }
                    Err(unpacked) => unpacker.repack(&unpacked, input)?,
                }
            }
            InputReader::Bits(unpacker) => unpacker.parse(input)?,
        };
        own.add_tree(graph, &tree);
        Ok(own)
    }

    /// The k-paths of `input` in any of its parses, up to `max_k` long (`thicket cover
    /// --all-parses`'s reading; CODEINE's features are those of the one tree
    /// [`InputReader::read`] returns, `thicket_codeine::features`).
    pub fn paths_in_any_parse(
        &self,
        graph: &KPathGraph,
        input: &[u8],
        max_k: usize,
    ) -> Result<FxHashSet<KPath>, ParseError> {
        self.with_parse(input, |parsed| {
            parsed.paths_in_any_parse(|x| graph.is_node(ExprId::from_index(x as usize)), max_k)
        })
    }

    /// The k-paths of `input` (paths up to `k` long) as CODEINE reads an input's
    /// features ([`thicket_codeine::input_paths`]: in every derivation if its parse
    /// forest is small, else in the tree the parser returns), bit by bit when the
    /// inputs are packed; `None` if the grammar rejects it.
    pub fn feature_paths(
        &self,
        graph: &KPathGraph,
        input: &[u8],
        k: usize,
    ) -> Option<FxHashSet<KPath>> {
        let small = self
            .with_parse(input, |parsed| {
                thicket_codeine::small_forest_paths(parsed, graph, k)
            })
            .ok()?;
        match small {
            Some(paths) => Some(paths),
            // The tree of a packed input is the spec's once packed again: `read` does it.
            None => Some(thicket_codeine::tree_paths(
                graph,
                &self.read(input).ok()?,
                k,
            )),
        }
    }

    /// The parser of text inputs (`None` for packed ones).
    pub fn text_parser(&self) -> Option<&Parser<'_>> {
        match self {
            InputReader::Text(parser) => Some(parser),
            InputReader::Bits(_) => None,
        }
    }
}

/// Why [`InputReader::read_files`] left an input out.
#[derive(Debug)]
pub enum Skipped {
    /// It could not be read (the message names it).
    Unreadable(String),
    /// The grammar does not accept it.
    Rejected(ParseError),
}

impl InputReader<'_> {
    /// The trees of `inputs` in order, each read whole under `max` bytes; an input that
    /// cannot be read or is not in the language is left out after `skipped` is told,
    /// and an error of `skipped` ends the reading (seed inputs, samples to mine).
    pub fn read_files<E>(
        &self,
        inputs: &[Input],
        max: u64,
        skipped: &mut dyn FnMut(&Input, Skipped) -> Result<(), E>,
    ) -> Result<Vec<DerivationTree>, E> {
        let mut trees = Vec::new();
        for input in inputs {
            match input.read(max) {
                Ok(bytes) => match self.read(&bytes) {
                    Ok(tree) => trees.push(tree),
                    Err(e) => skipped(input, Skipped::Rejected(e))?,
                },
                Err(e) => skipped(input, Skipped::Unreadable(e))?,
            }
        }
        Ok(trees)
    }
}

impl InputReader<'_> {
    /// The trees of sample inputs (`thicket mine`'s positives and negatives), each read
    /// whole under `max` bytes, and how many the grammar rejects: those are left out,
    /// `rejected` told of each with its number among them (from 1). An input that
    /// cannot be read ends the reading (the message names it).
    pub fn read_samples(
        &self,
        inputs: &[Input],
        max: u64,
        rejected: &mut dyn FnMut(usize, &Input, &ParseError),
    ) -> Result<(Vec<DerivationTree>, usize), String> {
        let mut count = 0;
        let trees = self.read_files(inputs, max, &mut |input, skipped| match skipped {
            Skipped::Unreadable(e) => Err(e),
            Skipped::Rejected(e) => {
                count += 1;
                rejected(count, input, &e);
                Ok(())
            }
        })?;
        Ok((trees, count))
    }
}

impl InputReader<'_> {
    /// Seed trees for a campaign's learning strategies (`thicket fuzz --seeds`): the
    /// trees of `inputs` (each read whole under `max`), those that cannot be read or
    /// are not in the language left out after `skipped` is told; an error if none is
    /// left.
    pub fn seed_trees(
        &self,
        inputs: &[Input],
        max: u64,
        skipped: &mut dyn FnMut(&Input, Skipped),
    ) -> Result<Vec<DerivationTree>, String> {
        let read = self.read_files(inputs, max, &mut |input, why| {
            skipped(input, why);
            Ok::<(), std::convert::Infallible>(())
        });
        let trees = match read {
            Ok(trees) => trees,
            Err(never) => match never {},
        };
        if trees.is_empty() {
            return Err(
                "no seed input is in the grammar's language: nothing to learn from".to_string(),
            );
        }
        Ok(trees)
    }
}

/// The choices of sample inputs counted ([`InputReader::count_choices`]).
pub struct ChoiceCounts {
    /// Per alternation and repetition, the choices the samples' trees took.
    pub counts: Counts,
    /// Samples not counted: unreadable, or not in the language.
    pub rejected: usize,
    /// Samples not counted because their chart did not fit in memory.
    pub out_of_memory: usize,
}

impl ChoiceCounts {
    /// The probabilities learned from the counts with additive `smoothing`, as the
    /// JSON text `thicket learn` writes (docs/json-output.md), ending in a line break.
    pub fn weights_json(&self, grammar: &Grammar, smoothing: f64) -> String {
        let weights = Weights::learn(grammar, &self.counts, smoothing, None);
        let json = weights.to_json(grammar, smoothing, self.counts.trees());
        let mut text = serde_json::to_string_pretty(&json).expect("JSON values serialize");
        text.push('\n');
        text
    }

    /// What the probabilities were learned from: `learned from N samples (R rejected)`.
    pub fn summary(&self) -> String {
        let rejected = match self.rejected {
            0 => String::new(),
            n => format!(" ({n} rejected)"),
        };
        format!("learned from {} samples{rejected}", self.counts.trees())
    }
}

impl InputReader<'_> {
    /// Counts the choices of the trees of `inputs` (each read whole under `max` bytes)
    /// in `grammar` (`thicket learn`: the counts a probabilistic grammar is learned
    /// from); `skipped` hears each input not counted and why.
    pub fn count_choices(
        &self,
        grammar: &Grammar,
        inputs: &[Input],
        max: u64,
        skipped: &mut dyn FnMut(&Input, Skipped),
    ) -> ChoiceCounts {
        let mut counted = ChoiceCounts {
            counts: Counts::new(grammar),
            rejected: 0,
            out_of_memory: 0,
        };
        for input in inputs {
            let bytes = match input.read(max) {
                Ok(bytes) => bytes,
                Err(e) => {
                    counted.rejected += 1;
                    skipped(input, Skipped::Unreadable(e));
                    continue;
                }
            };
            // The chart's memory is free again before counting needs its own.
            match self.read(&bytes) {
                Ok(tree) => counted.counts.add_tree(grammar, &tree),
                Err(e) => {
                    match e {
                        ParseError::OutOfMemory { .. } => counted.out_of_memory += 1,
                        _ => counted.rejected += 1,
                    }
                    skipped(input, Skipped::Rejected(e));
                }
            }
        }
        counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Spec {
        thicket_grammar::load_spec_bytes(
            "t.fan",
            text.as_bytes(),
            &thicket_grammar::LoadOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn packed_inputs_are_read_bit_by_bit_and_text_as_text() {
        let bits = spec("<start> ::= <bit>{8}\n<bit> ::= 0 | 1\n");
        let grammar = InputGrammar::new(&bits).unwrap();
        assert!(grammar.packs_bits());
        let reader = grammar.reader(ParseConfig::default()).unwrap();
        // One byte is eight bits; the text "01000001" is eight bytes, no input.
        assert!(reader.read(b"A").is_ok());
        assert!(reader.read(b"01000001").is_err());
        let encoding = grammar.encoding(ParseConfig::default()).unwrap().unwrap();
        let tree = thicket_gen::Encoding::decode(&encoding, b"A").unwrap();
        assert_eq!(
            thicket_gen::Encoding::encode(&encoding, &tree).unwrap(),
            b"A"
        );
        let text = spec("<start> ::= \"a\"+\n");
        let grammar = InputGrammar::new(&text).unwrap();
        assert!(!grammar.packs_bits());
        assert!(grammar.encoding(ParseConfig::default()).unwrap().is_none());
        let reader = grammar.reader(ParseConfig::default()).unwrap();
        assert_eq!(reader.read(b"aa").unwrap().bytes(), b"aa");
        assert_eq!(reader.with_parse(b"a", |r| r.tree().len()).unwrap(), 3);
    }

    #[test]
    fn coverage_of_a_packed_input_is_its_trees_whether_or_not_all_parses_are_asked() {
        let bits = spec("<start> ::= <flag> <bit>{7}\n<flag> ::= <bit>\n");
        let grammar = InputGrammar::new(&bits).unwrap();
        let reader = grammar.reader(ParseConfig::default()).unwrap();
        let graph = KPathGraph::new(&bits.grammar);
        let mut by_tree = Coverage::new(3);
        by_tree.add_tree(&graph, &reader.read(b"A").unwrap());
        for all_parses in [false, true] {
            let own = reader.coverage(&graph, b"A", 3, all_parses).unwrap();
            for k in 1..=3 {
                assert_eq!(own.covered(k), by_tree.covered(k), "k {k}, {all_parses}");
            }
        }
        assert!(by_tree.covered(3) > 0);
        assert!(reader.coverage(&graph, b"", 3, false).is_err());
    }
}
