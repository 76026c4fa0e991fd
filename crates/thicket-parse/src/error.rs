//! Why an input was rejected: the furthest position reached, with line and column, the
//! terminals expected there and the rules being parsed.

use crate::chart::SetIndex;
use crate::compile::{NONE, Op, Parser};
use crate::earley::Item;
use rustc_hash::FxHashSet;
use thicket_grammar::{ExprId, SymbolId};

/// Why an input could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The input is not in the language of the grammar.
    #[error("{0}")]
    Rejected(Box<Rejection>),
    /// The input needs more work than [`ParseConfig::max_items`](crate::ParseConfig::max_items) allows.
    #[error("input too complex: more than {max_items} parser items at byte offset {offset}")]
    TooComplex {
        /// Where the budget ran out.
        offset: usize,
        /// The budget.
        max_items: usize,
    },
}

/// Where and why an input left the language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Byte offset of the first byte that cannot be parsed (the input length if the
    /// input ended too early).
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    /// 1-based column (in bytes) of `offset`.
    pub column: usize,
    /// The byte found there, or `None` at the end of the input.
    pub found: Option<u8>,
    /// Terminals that would have been accepted there, in spec syntax.
    pub expected: Vec<String>,
    /// The rules being parsed there (`<name>`).
    pub rules: Vec<String>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let found = match self.found {
            None => "unexpected end of input".to_string(),
            Some(b) if b.is_ascii_graphic() || b == b' ' => format!("unexpected {:?}", b as char),
            Some(b) => format!("unexpected byte 0x{b:02x}"),
        };
        write!(f, "{}:{}: {found}", self.line, self.column)?;
        if !self.expected.is_empty() {
            write!(f, "; expected {}", self.expected.join(", "))?;
        }
        if !self.rules.is_empty() {
            write!(f, " (in {})", self.rules.join(", "))?;
        }
        Ok(())
    }
}

impl Parser<'_> {
    pub(crate) fn reject(
        &self,
        text: &[u8],
        at: usize,
        items: &[Item],
        sets: &SetIndex,
    ) -> ParseError {
        let (lo, hi) = sets.items(at, items.len());
        let mut expected: Vec<String> = Vec::new();
        let mut rules: Vec<String> = Vec::new();
        let mut seen = FxHashSet::default();
        for item in &items[lo..hi] {
            self.for_each_expected(item, |child, _| {
                // Terminals and tokens that could come next, found through the
                // nonterminals that were not predicted here.
                let mut stack = vec![(child, item.node)];
                while let Some((node, parent)) = stack.pop() {
                    if !seen.insert(node) {
                        continue;
                    }
                    // Named tokens read best by their rule (`<string>`); anonymous ones
                    // by what they start with.
                    let named_token =
                        matches!(self.ops[node as usize], Op::Ref { .. }) && self.is_token(node);
                    if self.empty_literal(node) {
                        continue; // derives nothing, so it cannot be what is missing
                    }
                    if matches!(self.ops[node as usize], Op::Literal | Op::Regex) || named_token {
                        let shown = self.grammar.display_expr(ExprId::from_index(node as usize));
                        if !expected.contains(&shown) {
                            expected.push(shown);
                        }
                        let owner = self.owner[parent as usize];
                        if owner != NONE {
                            let name = self.grammar.display_symbol(symbol(owner));
                            if !rules.contains(&name) {
                                rules.push(name);
                            }
                        }
                        continue;
                    }
                    match self.ops[node as usize] {
                        Op::Ref { body } => stack.push((body, node)),
                        Op::Alt { start, len } => {
                            for &c in self.children[start as usize..(start + len) as usize]
                                .iter()
                                .rev()
                            {
                                stack.push((c, node));
                            }
                        }
                        Op::Seq { start, len } => {
                            let kids = &self.children[start as usize..(start + len) as usize];
                            let upto = kids
                                .iter()
                                .position(|&k| !self.nullable(k))
                                .map_or(kids.len(), |p| p + 1);
                            for &c in kids[..upto].iter().rev() {
                                stack.push((c, node));
                            }
                        }
                        Op::Repeat { item, max, .. } if max != Some(0) => stack.push((item, node)),
                        _ => {}
                    }
                }
            });
        }
        let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        ParseError::Rejected(Box::new(Rejection {
            offset: at,
            line,
            column,
            found: text.get(at).copied(),
            expected,
            rules,
        }))
    }
}

pub(crate) fn symbol(index: u32) -> SymbolId {
    SymbolId::from_index(index as usize)
}
