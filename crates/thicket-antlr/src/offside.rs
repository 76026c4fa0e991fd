//! The indentation idiom (the off-side rule): `INDENT` and `DEDENT` tokens made from
//! the indentation of lines, as Python's tokenizer makes them.
//!
//! Grammars of indentation-sensitive languages (grammars-v4's Python grammars,
//! GDScript) declare `tokens { INDENT, DEDENT }` that no lexer rule makes: a lexer
//! base class in target code emits them. thicket recognises the idiom where a lexer
//! declares both names in `tokens {}`, no rule makes either, and a lexer rule
//! `NEWLINE` reads line ends; the parser's token at the end of a logical line is
//! `LINE_BREAK` where that name too is declared only in `tokens {}` (the grammar's
//! `NEWLINE` then being hidden), else `NEWLINE`. Loading reports it
//! (`g4-indentation`). The exact reading then passes the lexer's tokens through
//! [`Offside::apply`], which follows Python's rules (the Language Reference's
//! "Indentation", and the base classes of grammars-v4's Python targets):
//!
//! - a line end inside brackets (after more `(`, `[`, `{` tokens than `)`, `]`, `}`)
//!   is no line end; nor is one inside a token (a long string) or one a skipped token
//!   takes (`\` at the end of a line);
//! - a line with no token the parser sees (blank, or only a comment) is ignored;
//! - at the first token of every other line after a line end, the line-end token,
//!   then `INDENT` if the line is indented deeper than the enclosing block, or one
//!   `DEDENT` for each block it closes (a depth that matches no enclosing block is an
//!   error: "inconsistent dedent");
//! - the indentation is the line's leading spaces and tabs, a tab to the next multiple
//!   of 8, a form feed back to 0; the first line must not be indented;
//! - line ends before the first token are ignored, and at the end of the input come
//!   a line-end token (unless the last token is one, or a `DEDENT`) and a `DEDENT`
//!   for each open block.
//!
//! The grammars' base classes differ from this (and from Python) in corner cases that
//! this does not follow: Python3LexerBase (python3, and GDScript's copy) adds no line
//! end at the end of an input that lacks one outside blocks, and keeps a blank line
//! just before the end; python/python's base class counts a tab to the next multiple
//! of 4; none but python2_7_18's and python3_14's report an inconsistent dedent, and
//! those two also report the first mix of tabs and spaces, which this does not. A
//! grammar that declares the same tokens for another language's rules (grammars-v4's
//! Scala 3, whose base class keeps line ends inside braces) is read by Python's rules
//! all the same.
//!
//! The byte grammar cannot follow indentation (it is not context-free): there
//! `INDENT` and `DEDENT` are empty, a line end may also be hidden text (blank lines,
//! line ends inside brackets), and a `LINE_BREAK` is a line end. So it accepts
//! inputs with any indentation, and the exact reading decides.

use crate::lexer::Token;

/// The indentation idiom of a grammar: which token types it reads and makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offside {
    /// The token type made where a line is indented deeper (`INDENT`).
    pub indent: String,
    /// The token type made for each block a line closes (`DEDENT`).
    pub dedent: String,
    /// The type of the lexer's line-end tokens (`NEWLINE`, seen by the parser or not).
    pub line_end: String,
    /// The token type the parser sees at the end of a logical line: the line end
    /// itself (`NEWLINE`), or one only the idiom makes (`LINE_BREAK`).
    pub logical_line_end: String,
}

/// Columns to the next tab stop are counted up to a multiple of this.
pub const TAB_STOP: usize = 8;

/// Why the indentation of an input is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndentError {
    /// Byte offset of the first token of the offending line.
    pub offset: usize,
    /// What was expected there.
    pub expected: String,
}

impl Offside {
    /// The tokens the parser sees: `tokens` (every token of `input` in order, each
    /// with whether the parser sees it, as [`crate::Lexer::all_tokens`] gives them)
    /// with the line ends the parser does not see dropped and the idiom's tokens put in
    /// (each empty, at the first token of its line; those at the end at the input's
    /// end).
    pub fn apply(
        &self,
        input: &[u8],
        tokens: Vec<(Token, bool)>,
    ) -> Result<Vec<Token>, IndentError> {
        let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
        let mut levels: Vec<usize> = vec![0];
        let mut depth = 0usize;
        let mut started = false;
        // The first line end since the last token, outside brackets: it ends a
        // logical line if a token follows on a later line.
        let mut line_end: Option<(usize, usize)> = None;
        for (token, visible) in tokens {
            if token.kind == self.line_end {
                if started && depth == 0 && line_end.is_none() {
                    line_end = Some((token.start, token.end));
                }
                continue;
            }
            if !visible {
                continue;
            }
            let column = indentation(input, token.start);
            if let Some((start, end)) = line_end.take() {
                out.push(self.token(&self.logical_line_end, start, end));
                self.indent_to(column, &mut levels, token.start, &mut out)?;
            } else if !started && column > 0 {
                return Err(IndentError {
                    offset: token.start,
                    expected: "the first line not indented (unexpected indent)".into(),
                });
            }
            started = true;
            match &input[token.start..token.end] {
                b"(" | b"[" | b"{" => depth += 1,
                b")" | b"]" | b"}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            out.push(token);
        }
        if started {
            let ended = out
                .last()
                .is_some_and(|t| t.kind == self.logical_line_end || t.kind == self.dedent);
            if !ended {
                let (start, end) = line_end.unwrap_or((input.len(), input.len()));
                out.push(self.token(&self.logical_line_end, start, end));
            }
            for _ in 1..levels.len() {
                out.push(self.token(&self.dedent, input.len(), input.len()));
            }
        }
        Ok(out)
    }

    /// `INDENT`, or the `DEDENT`s, for a line at `column` whose first token is at
    /// `at`, with `levels` the enclosing blocks' columns.
    fn indent_to(
        &self,
        column: usize,
        levels: &mut Vec<usize>,
        at: usize,
        out: &mut Vec<Token>,
    ) -> Result<(), IndentError> {
        let top = levels.last().copied().unwrap_or(0);
        if column > top {
            levels.push(column);
            out.push(self.token(&self.indent, at, at));
            return Ok(());
        }
        while levels.last().is_some_and(|&l| l > column) {
            levels.pop();
            out.push(self.token(&self.dedent, at, at));
        }
        if levels.last().copied().unwrap_or(0) != column {
            return Err(IndentError {
                offset: at,
                expected: format!(
                    "an indentation of an enclosing block ({} columns), not {column} \
                     (inconsistent dedent)",
                    levels
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        Ok(())
    }

    fn token(&self, kind: &str, start: usize, end: usize) -> Token {
        Token {
            kind: kind.to_string(),
            start,
            end,
        }
    }
}

/// The indentation of the line holding byte `at`: its leading spaces and tabs in
/// columns (a tab to the next multiple of [`TAB_STOP`], a form feed back to 0).
pub fn indentation(input: &[u8], at: usize) -> usize {
    let start = input[..at]
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(0, |i| i + 1);
    let mut column = 0;
    for &b in &input[start..at] {
        match b {
            b' ' => column += 1,
            b'\t' => column += TAB_STOP - column % TAB_STOP,
            b'\x0c' => column = 0,
            _ => break,
        }
    }
    column
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_go_to_the_next_multiple_of_eight() {
        assert_eq!(indentation(b"x\n\tY", 3), 8);
        assert_eq!(indentation(b"x\n  \tY", 5), 8);
        assert_eq!(indentation(b"x\n\t  Y", 5), 10);
        assert_eq!(indentation(b"  \x0c Y", 4), 1);
        assert_eq!(indentation(b"Y", 0), 0);
    }
}
