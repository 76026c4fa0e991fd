//! Fandango's bits (`0` and `1` in a grammar) and the bytes they pack into.
//!
//! In thicket's derivation trees a bit is a one-byte terminal, `"0"` or `"1"`, so that
//! generating, repairing and checking work on bit fields as on any text. The input a
//! tree stands for is Fandango's serialisation of it: going through the terminals in
//! order, consecutive bits fill bytes, the first bit most significant, and every other
//! terminal appends its bytes. A terminal that is not a bit, or the end of the input,
//! must come at a byte boundary: Fandango refuses bits that do not fill whole bytes,
//! and so does [`BitLayout::pack`].
//!
//! Reading a packed input is the inverse ([`Unpacker`]): the input is unpacked into one
//! byte per bit and parsed with a grammar whose non-bit terminals match the bits of
//! their bytes ([`UnpackedGrammar`], node for node the spec's), as Fandango's parser
//! reads bits inside bytes; the tree's non-bit terminals are then packed again.

use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, HirKind, Repetition};
use regex_syntax::utf8::Utf8Sequences;
use rustc_hash::FxHashMap;
use thicket_grammar::{Expr, ExprId, Grammar, RegexTerminal};
use thicket_parse::{CompileError, ParseConfig, ParseError, Parser, Rejection};
use thicket_tree::{DerivationTree, NodeId, TreeBuilder, TreeSink};

/// Which terminals of a grammar are bits.
#[derive(Clone, Debug)]
pub struct BitLayout {
    /// Per expression (by index): whether it is a bit terminal.
    is_bit: Vec<bool>,
}

/// Bits of an input that do not fill a whole byte where a byte must begin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LooseBits {
    /// How many bits are left over (1 to 7).
    pub bits: usize,
    /// Where: the offset of the packed byte the next non-bit terminal would start at, or
    /// `None` at the end of the input.
    pub before_byte: Option<usize>,
}

impl std::fmt::Display for LooseBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (s, verb) = if self.bits == 1 {
            ("", "does")
        } else {
            ("s", "do")
        };
        match self.before_byte {
            Some(at) => write!(
                f,
                "{} bit{s} before byte {at} {} not fill a whole byte",
                self.bits, verb
            ),
            None => write!(
                f,
                "{} bit{s} at the end of the input {} not fill a whole byte",
                self.bits, verb
            ),
        }?;
        f.write_str(" (Fandango packs bits into whole bytes, first bit most significant)")
    }
}

impl BitLayout {
    /// The layout of `grammar` whose bit terminals are `bits`; `None` if there are none
    /// (a tree's text is then its input as it is).
    pub fn new(grammar: &Grammar, bits: &[ExprId]) -> Option<BitLayout> {
        if bits.is_empty() {
            return None;
        }
        let mut is_bit = vec![false; grammar.expr_count()];
        for &bit in bits {
            is_bit[bit.index()] = true;
        }
        Some(BitLayout { is_bit })
    }

    /// Whether `expr` is a bit terminal.
    pub fn is_bit(&self, expr: ExprId) -> bool {
        self.is_bit.get(expr.index()).copied().unwrap_or(false)
    }

    /// Whether every text of `rule` is made of bits alone (and it has a terminal at
    /// all): the rules whose generated `bytes` values are read bit by bit.
    pub fn derives_only_bits(&self, grammar: &Grammar, rule: thicket_grammar::SymbolId) -> bool {
        let mut seen_rules = vec![false; grammar.rules().len()];
        let mut todo = vec![grammar.rule(rule).body];
        seen_rules[rule.index()] = true;
        let mut any_bit = false;
        while let Some(expr) = todo.pop() {
            match grammar.expr(expr) {
                Expr::Ref(symbol) => {
                    if !std::mem::replace(&mut seen_rules[symbol.index()], true) {
                        todo.push(grammar.rule(*symbol).body);
                    }
                }
                Expr::Literal(bytes) if bytes.is_empty() => {}
                Expr::Literal(_) | Expr::Regex(_) => {
                    if !self.is_bit(expr) {
                        return false;
                    }
                    any_bit = true;
                }
                other => todo.extend_from_slice(other.children()),
            }
        }
        any_bit
    }

    /// The input `tree` stands for: its bits packed into bytes, its other terminals as
    /// they are; or where bits do not fill a whole byte.
    pub fn pack(&self, tree: &DerivationTree, grammar: &Grammar) -> Result<Vec<u8>, LooseBits> {
        let mut out = Vec::with_capacity(tree.bytes().len());
        let mut byte = 0u8;
        let mut filled = 0usize;
        for i in 0..tree.len() {
            let node = NodeId::from_index(i);
            let expr = tree.expr(node);
            if !matches!(grammar.expr(expr), Expr::Literal(_) | Expr::Regex(_)) {
                continue;
            }
            let text = tree.text(node);
            if self.is_bit(expr) {
                byte = byte << 1 | u8::from(matches!(text, [b'1'] | [1]));
                filled += 1;
                if filled == 8 {
                    out.push(byte);
                    (byte, filled) = (0, 0);
                }
                continue;
            }
            if filled != 0 {
                return Err(LooseBits {
                    bits: filled,
                    before_byte: Some(out.len()),
                });
            }
            out.extend_from_slice(text);
        }
        if filled != 0 {
            return Err(LooseBits {
                bits: filled,
                before_byte: None,
            });
        }
        Ok(out)
    }
}

/// A grammar over unpacked inputs, in which each bit of an input is one byte, `0` or
/// `1`, most significant first: the spec's bit terminals are unchanged, and every other
/// terminal matches the bits of its bytes. Its node ids are the spec grammar's, so a tree
/// read with it is a tree of the spec once its non-bit terminals are packed again.
#[derive(Clone, Debug)]
pub struct UnpackedGrammar {
    grammar: Grammar,
    layout: BitLayout,
    /// How each rewritten terminal is shown in the spec (`">"`), by how it is shown in
    /// the unpacked grammar: what a rejection expected, in the spec's words.
    shown: FxHashMap<String, String>,
}

/// A terminal whose bytes cannot be matched bit by bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotUnpackable {
    /// The terminal.
    pub expr: ExprId,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for NotUnpackable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The grammar that reads `spec`'s packed inputs one bit at a time; `None` when the spec
/// has no bit fields (its inputs are read as they are). A terminal that cannot be read bit
/// by bit is an error at the terminal's place in the spec.
pub fn unpacked_grammar(
    spec: &thicket_grammar::Spec,
) -> Result<Option<UnpackedGrammar>, thicket_grammar::SpecError> {
    let Some(layout) = BitLayout::new(&spec.grammar, &spec.fandango.bit_terminals) else {
        return Ok(None);
    };
    layout
        .unpacked_grammar(&spec.grammar)
        .map(Some)
        .map_err(|e| thicket_grammar::SpecError {
            source: spec.source.clone(),
            diagnostics: vec![
                thicket_grammar::Diagnostic::error(
                    "unpackable-terminal",
                    format!("{e}, and the spec's inputs pack bits into bytes"),
                    spec.grammar.expr_span(e.expr),
                )
                .with_note("a terminal beside bit fields is read one bit at a time"),
            ],
        })
}

impl BitLayout {
    /// The grammar that reads `grammar`'s packed inputs one bit at a time.
    pub fn unpacked_grammar(&self, grammar: &Grammar) -> Result<UnpackedGrammar, NotUnpackable> {
        let mut unpacked = grammar.clone();
        let mut rewritten = Vec::new();
        for expr in grammar.expr_ids() {
            if self.is_bit(expr) {
                continue;
            }
            let (pattern, hir) = match grammar.expr(expr) {
                Expr::Literal(bytes) => (literal_pattern(bytes), bits_of_literal(bytes)),
                Expr::Regex(regex) => {
                    let hir = bits_of_hir(&regex.hir).map_err(|reason| NotUnpackable {
                        expr,
                        reason: format!(
                            "the regex r'{}' {reason}, which cannot be matched one bit at a time",
                            regex.pattern
                        ),
                    })?;
                    (regex.pattern.clone(), hir)
                }
                _ => continue,
            };
            unpacked.set_terminal_regex(expr, RegexTerminal { pattern, hir });
            rewritten.push(expr);
        }
        let shown = rewritten
            .into_iter()
            .map(|e| (unpacked.display_expr(e), grammar.display_expr(e)))
            .collect();
        Ok(UnpackedGrammar {
            grammar: unpacked,
            layout: self.clone(),
            shown,
        })
    }
}

impl UnpackedGrammar {
    /// The grammar over unpacked inputs.
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// A parser of packed inputs.
    pub fn parser(&self, config: ParseConfig) -> Result<Unpacker<'_>, CompileError> {
        Ok(Unpacker {
            parser: Parser::new(&self.grammar, config)?,
            unpacked: self,
        })
    }
}

/// Reads packed inputs (Fandango's serialisation of trees with bit fields) into the
/// spec's trees: the input is unpacked into one byte per bit, parsed with the
/// [`UnpackedGrammar`], and the tree's non-bit terminals packed again. The inverse of
/// [`BitLayout::pack`]: a tree read from an input packs into that input.
pub struct Unpacker<'g> {
    parser: Parser<'g>,
    unpacked: &'g UnpackedGrammar,
}

impl Unpacker<'_> {
    /// The spec's tree of a packed input, or why it is not in the language (the
    /// rejection's offset is the packed input's byte where reading failed).
    pub fn parse(&self, input: &[u8]) -> Result<DerivationTree, ParseError> {
        self.with_parse(input, |result| result.tree())
            .and_then(|tree| self.repack(&tree, input))
    }

    /// Runs `read` on the parse of the unpacked `input` (e.g. to count its trees; a tree
    /// taken from it is over the unpacked input, see [`Unpacker::repack`]).
    pub fn with_parse<R>(
        &self,
        input: &[u8],
        read: impl FnOnce(&thicket_parse::ParseResult<'_, '_>) -> R,
    ) -> Result<R, ParseError> {
        let bits = unpack(input);
        match self.parser.parse(&bits) {
            Ok(result) => Ok(read(&result)),
            Err(error) => Err(self.packed_error(error, input)),
        }
    }

    /// The spec's tree of `tree`, a tree of the unpacked `input`: its non-bit terminals
    /// packed into bytes. A tree whose bits do not fill whole bytes before a non-bit
    /// terminal or the end stands for no input (Fandango reads no byte in the middle of
    /// one): it is rejected there.
    pub fn repack(
        &self,
        tree: &DerivationTree,
        input: &[u8],
    ) -> Result<DerivationTree, ParseError> {
        let grammar = &self.unpacked.grammar;
        let layout = &self.unpacked.layout;
        let mut builder = TreeBuilder::new();
        let mut open: Vec<usize> = Vec::new();
        let mut bits = 0usize;
        let mut packed = Vec::new();
        for i in 0..tree.len() {
            while open.last().is_some_and(|&end| end <= i) {
                open.pop();
                builder.close();
            }
            let node = NodeId::from_index(i);
            let expr = tree.expr(node);
            if !matches!(grammar.expr(expr), Expr::Literal(_) | Expr::Regex(_)) {
                builder.open(expr);
                open.push(tree.subtree_end(node));
                continue;
            }
            let text = tree.text(node);
            if layout.is_bit(expr) {
                builder.terminal(expr, text);
                bits += text.len();
                continue;
            }
            if !bits.is_multiple_of(8) {
                return Err(loose_bits(input, bits));
            }
            packed.clear();
            packed.extend(text.chunks(8).map(pack_byte));
            builder.terminal(expr, &packed);
            bits += text.len();
        }
        for _ in open {
            builder.close();
        }
        if !bits.is_multiple_of(8) {
            return Err(loose_bits(input, bits));
        }
        Ok(builder.finish())
    }

    /// `error`, from parsing the unpacked `input`, told of the packed input.
    fn packed_error(&self, error: ParseError, input: &[u8]) -> ParseError {
        match error {
            ParseError::Rejected(r) => {
                let shown = &self.unpacked.shown;
                let expected = r
                    .expected
                    .into_iter()
                    .map(|e| shown.get(&e).cloned().unwrap_or(e))
                    .collect();
                let mut at = Rejection::at(input, r.offset / 8, expected, r.rules);
                if !r.offset.is_multiple_of(8) {
                    // Reading failed inside the byte: the bits before are fine.
                    let note = format!(
                        "(at bit {} of the byte, the most significant being bit 0)",
                        r.offset % 8
                    );
                    match at.expected.last_mut() {
                        Some(last) => {
                            last.push(' ');
                            last.push_str(&note);
                        }
                        None => at.expected.push(note),
                    }
                }
                ParseError::Rejected(Box::new(at))
            }
            ParseError::TooComplex { offset, max_items } => ParseError::TooComplex {
                offset: offset / 8,
                max_items,
            },
            ParseError::OutOfMemory {
                offset,
                chart_bytes,
                tree_bytes,
                limit_bytes,
            } => ParseError::OutOfMemory {
                offset: offset / 8,
                chart_bytes,
                tree_bytes,
                limit_bytes,
            },
        }
    }
}

/// The rejection of a tree whose `bits` bits (so far) do not fill whole bytes where a
/// byte or the end comes.
fn loose_bits(input: &[u8], bits: usize) -> ParseError {
    let left = 8 - bits % 8;
    ParseError::Rejected(Box::new(Rejection::at(
        input,
        (bits / 8).min(input.len()),
        vec![format!(
            "{left} more bit{} to fill the byte (Fandango reads bytes only at byte boundaries)",
            if left == 1 { "" } else { "s" }
        )],
        Vec::new(),
    )))
}

/// Each bit of `input` as a byte `0` or `1`, most significant first.
pub fn unpack(input: &[u8]) -> Vec<u8> {
    input
        .iter()
        .flat_map(|&byte| (0..8).rev().map(move |i| b'0' + (byte >> i & 1)))
        .collect()
}

/// The byte of eight unpacked bits.
fn pack_byte(bits: &[u8]) -> u8 {
    bits.iter().fold(0, |byte, &bit| byte << 1 | (bit & 1))
}

/// How a literal is shown where a rejection lists what was expected.
fn literal_pattern(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => regex_syntax::escape(text),
        Err(_) => bytes.iter().map(|b| format!("\\x{b:02x}")).collect(),
    }
}

/// The unpacked bits of `bytes`.
fn bits_of_literal(bytes: &[u8]) -> Hir {
    Hir::literal(unpack(bytes))
}

/// A regex over unpacked bits matching what `hir` matches over bytes.
fn bits_of_hir(hir: &Hir) -> Result<Hir, String> {
    Ok(match hir.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => bits_of_literal(&literal.0),
        HirKind::Class(Class::Bytes(class)) => {
            let mut set = [false; 256];
            for range in class.ranges() {
                for b in range.start()..=range.end() {
                    set[usize::from(b)] = true;
                }
            }
            bits_of_byte_set(&set)
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut alternatives = Vec::new();
            for range in class.ranges() {
                for sequence in Utf8Sequences::new(range.start(), range.end()) {
                    let bytes = sequence
                        .as_slice()
                        .iter()
                        .map(|r| {
                            let mut set = [false; 256];
                            for b in r.start..=r.end {
                                set[usize::from(b)] = true;
                            }
                            bits_of_byte_set(&set)
                        })
                        .collect();
                    alternatives.push(Hir::concat(bytes));
                }
            }
            Hir::alternation(alternatives)
        }
        HirKind::Look(look) => return Err(format!("has the assertion {look:?}")),
        HirKind::Repetition(repetition) => Hir::repetition(Repetition {
            sub: Box::new(bits_of_hir(&repetition.sub)?),
            ..repetition.clone()
        }),
        HirKind::Capture(capture) => bits_of_hir(&capture.sub)?,
        HirKind::Concat(parts) => {
            Hir::concat(parts.iter().map(bits_of_hir).collect::<Result<_, _>>()?)
        }
        HirKind::Alternation(parts) => {
            Hir::alternation(parts.iter().map(bits_of_hir).collect::<Result<_, _>>()?)
        }
    })
}

/// Eight unpacked bits whose byte is in `set` (by byte value): a trie over the bits,
/// most significant first, whose full subtrees are `[01]{n}`.
fn bits_of_byte_set(set: &[bool; 256]) -> Hir {
    fn below(set: &[bool]) -> Option<Hir> {
        if set.iter().all(|&b| b) {
            let width = set.len().trailing_zeros();
            let any = Hir::class(Class::Bytes(ClassBytes::new([ClassBytesRange::new(
                b'0', b'1',
            )])));
            return Some(match width {
                0 => Hir::empty(),
                1 => any,
                n => Hir::repetition(Repetition {
                    min: n,
                    max: Some(n),
                    greedy: true,
                    sub: Box::new(any),
                }),
            });
        }
        if !set.iter().any(|&b| b) {
            return None;
        }
        let (zero, one) = set.split_at(set.len() / 2);
        let branch = |bit: u8, half: &[bool]| {
            below(half).map(|rest| Hir::concat(vec![Hir::literal([bit]), rest]))
        };
        match (branch(b'0', zero), branch(b'1', one)) {
            (Some(a), Some(b)) => Some(Hir::alternation(vec![a, b])),
            (Some(a), None) | (None, Some(a)) => Some(a),
            (None, None) => None,
        }
    }
    // An empty set matches nothing: an empty class.
    below(set).unwrap_or_else(|| Hir::class(Class::Bytes(ClassBytes::empty())))
}

/// Fandango's bit fields as an [`Encoding`](thicket_gen::Encoding): a tree stands for its
/// bits packed into bytes, and an input not made from a tree (a seed, a resumed queue,
/// another instance's entry) is read one bit at a time.
pub struct PackedBits<'g> {
    /// Where the spec's bit fields are.
    pub layout: &'g BitLayout,
    /// The spec's grammar.
    pub grammar: &'g Grammar,
    /// The reader of packed inputs.
    pub unpacker: Unpacker<'g>,
}

impl thicket_gen::Encoding for PackedBits<'_> {
    fn encode(&self, tree: &thicket_tree::DerivationTree) -> Result<Vec<u8>, String> {
        self.layout
            .pack(tree, self.grammar)
            .map_err(|loose| loose.to_string())
    }

    fn decode(&self, input: &[u8]) -> Option<thicket_tree::DerivationTree> {
        self.unpacker.parse(input).ok()
    }

    fn leaf_texts(&self, expr: ExprId) -> Option<&'static [&'static [u8]]> {
        const BITS: &[&[u8]] = &[b"0", b"1"];
        self.layout.is_bit(expr).then_some(BITS)
    }
}
