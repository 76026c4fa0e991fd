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
    /// The chart could not grow within the address-space limit (`ulimit -v`) and leave
    /// room for what follows the parse (see [`crate::memory`]).
    #[error("{}", out_of_memory(*offset, *chart_bytes, *tree_bytes, *limit_bytes))]
    OutOfMemory {
        /// Where the chart could not grow.
        offset: usize,
        /// The memory of the chart's vectors then.
        chart_bytes: usize,
        /// The memory reading the tree (and what the caller builds from it) needs beside
        /// the chart, taken or kept free.
        tree_bytes: usize,
        /// The address-space limit.
        limit_bytes: usize,
    },
}

/// The message of [`ParseError::OutOfMemory`].
fn out_of_memory(offset: usize, chart: usize, tree: usize, limit: usize) -> String {
    use crate::memory::mib;
    let room = if tree > 0 {
        format!(" beside the {} MiB reading its tree needs", mib(tree))
    } else {
        String::new()
    };
    format!(
        "not enough memory: at byte offset {offset} the parser's chart ({} MiB) cannot grow{room} within the address-space limit of {} MiB (`ulimit -v`); raise the limit, or parse a smaller input",
        mib(chart),
        mib(limit)
    )
}

/// Why a grammar cannot be compiled for parsing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// A regex terminal whose DFA cannot be built (larger than the size limit, or a
    /// construct the DFA does not support).
    #[error("regex terminal r\"{pattern}\": {reason}")]
    Regex {
        /// The pattern as written in the spec.
        pattern: String,
        /// What the DFA builder said.
        reason: String,
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

impl Rejection {
    /// A rejection at byte `offset` of `text`, with its line and column.
    pub fn at(text: &[u8], offset: usize, expected: Vec<String>, rules: Vec<String>) -> Rejection {
        let before = &text[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        Rejection {
            offset,
            line,
            column,
            found: text.get(offset).copied(),
            expected,
            rules,
        }
    }

    /// The line of `text` (the rejected input) where the rejection is, with a caret
    /// under its position, behind a gutter with the line number: at most 60 bytes
    /// either side of the position, control characters shown as spaces.
    pub fn excerpt(&self, text: &[u8]) -> String {
        let offset = self.offset.min(text.len());
        let line_start = text[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let line_end = text[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| offset + p);
        let from = line_start.max(offset.saturating_sub(60));
        let to = line_end.min(offset + 60);
        let shown: String = String::from_utf8_lossy(&text[from..to])
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let before = String::from_utf8_lossy(&text[from..offset]).chars().count();
        let gutter = self.line.to_string();
        format!(
            "{pad} |\n{gutter} | {shown}\n{pad} | {}^",
            " ".repeat(before),
            pad = " ".repeat(gutter.len())
        )
    }
}

impl Parser<'_> {
    /// Why `text` was rejected, `at` being the furthest position any item reached. With
    /// `inside_tokens`, a token expected there whose DFA reads on into the input before
    /// failing is looked into (see `reject_inside`), so the rejection points at the byte
    /// that fails inside it rather than at its start. Only rejected inputs get here.
    pub(crate) fn reject(
        &self,
        text: &[u8],
        at: usize,
        items: &[Item],
        sets: &SetIndex,
        inside_tokens: bool,
    ) -> ParseError {
        let (lo, hi) = sets.items(at, items.len());
        let mut expected: Vec<String> = Vec::new();
        let mut rules: Vec<String> = Vec::new();
        let mut seen = FxHashSet::default();
        // Terminals and tokens that could be scanned here.
        let mut scanned: Vec<u32> = Vec::new();
        for item in &items[lo..hi] {
            self.for_each_expected(item, |child, _| {
                // Terminals and tokens that could come next, found through the
                // nonterminals that were not predicted here.
                let mut stack = vec![(child, item.node)];
                while let Some((node, parent)) = stack.pop() {
                    if !seen.insert(node) {
                        continue;
                    }
                    if matches!(self.ops[node as usize], Op::Literal | Op::Regex)
                        || self.is_token(node)
                    {
                        scanned.push(node);
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
                        // All of an operand's alternatives: the same terminals can start it.
                        Op::Ref { body } | Op::Operand { body } => stack.push((body, node)),
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
        if inside_tokens && let Some(inside) = self.reject_inside(text, at, &scanned) {
            return ParseError::Rejected(Box::new(inside));
        }
        ParseError::Rejected(Box::new(Rejection::at(text, at, expected, rules)))
    }

    /// Where a rejection at `at` really happens when a terminal or token of `scanned`
    /// matches a few bytes there before it fails (a bad escape inside a string, `tru`):
    /// the one that reads furthest, if any reads at all. A literal or regex terminal
    /// fails at the first byte none of its matches can continue with, expecting the
    /// terminal; a token is parsed again, from `at` to that byte, as the rules it is made
    /// of (by a parser that scans no tokens), so that the rejection says which terminal
    /// its rules expected there and in which rule.
    fn reject_inside(&self, text: &[u8], at: usize, scanned: &[u32]) -> Option<Rejection> {
        let viable = |node: u32| {
            if matches!(self.ops[node as usize], Op::Literal) {
                let (start, end) = self.literals[node as usize];
                let literal = &self.literal_bytes[start as usize..end as usize];
                let common = literal
                    .iter()
                    .zip(&text[at..])
                    .take_while(|(a, b)| a == b)
                    .count();
                // A whole literal would have been scanned: the input went on after it.
                return Some(if common == literal.len() { 0 } else { common });
            }
            Some(self.matcher(node)?.viable_prefix_len(text, at))
        };
        let (node, len) = scanned
            .iter()
            .filter_map(|&node| Some((node, viable(node)?)))
            .fold(None, |best: Option<(u32, usize)>, (node, len)| match best {
                Some((_, most)) if most >= len => best,
                _ => Some((node, len)),
            })?;
        if len == 0 {
            return None; // the first byte is wrong: the rejection at `at` says so
        }
        let fails = at + len;
        let owner_rules = || {
            let owner = self.owner[node as usize];
            (owner != NONE)
                .then(|| self.grammar.display_symbol(symbol(owner)))
                .into_iter()
                .collect()
        };
        if matches!(self.ops[node as usize], Op::Literal | Op::Regex) {
            let shown = self.grammar.display_expr(ExprId::from_index(node as usize));
            return Some(Rejection::at(text, fails, vec![shown], owner_rules()));
        }
        // The token's bytes up to and including the one that fails.
        let span = &text[at..text.len().min(fails + 1)];
        let parts = self.untokenized()?;
        let inner = match parts.run_from(node, span, false, false) {
            Err(ParseError::Rejected(inner)) if inner.offset > 0 => inner,
            // Not explained by its rules (cannot happen for a token its DFA rejects):
            // where the DFA failed, expecting the token.
            _ => {
                let shown = self.grammar.display_expr(ExprId::from_index(node as usize));
                return Some(Rejection::at(text, fails, vec![shown], owner_rules()));
            }
        };
        Some(Rejection::at(
            text,
            at + inner.offset,
            inner.expected,
            inner.rules,
        ))
    }
}

pub(crate) fn symbol(index: u32) -> SymbolId {
    SymbolId::from_index(index as usize)
}

#[cfg(test)]
mod tests {
    use super::Rejection;

    #[test]
    fn an_excerpt_shows_the_line_with_a_caret_under_the_position() {
        let text = b"[1,\n [2, x],\n 3]";
        let r = Rejection::at(text, 9, vec![], vec![]);
        assert_eq!(
            r.excerpt(text),
            format!("  |\n2 |  [2, x],\n  | {}^", " ".repeat(5))
        );
        // A long line is cut to 60 bytes either side; the end of input is a position.
        let long = [b'a'; 200];
        let r = Rejection::at(&long, 200, vec![], vec![]);
        let excerpt = r.excerpt(&long);
        assert_eq!(
            excerpt.lines().nth(1).unwrap(),
            format!("1 | {}", "a".repeat(60))
        );
        assert!(excerpt.ends_with(&format!("{}^", " ".repeat(60))));
    }
}
