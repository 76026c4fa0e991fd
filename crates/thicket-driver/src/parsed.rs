//! What `thicket parse` makes of one input: parsed (with the ANTLR reading's verdict
//! first for `.g4` specs), counted or listed when asked, and rendered, in memory for
//! small inputs and left to be streamed for large ones; and the JSON line of an input
//! that failed, shared by `parse` and `check`.

use crate::InputReader;
use std::io::Write;
use thicket_grammar::Grammar;
use thicket_parse::{ParseError, ParseResult, Parser, Rejection, TreeCount};
use thicket_tree::{DerivationTree, Renderer, Rendering};

/// Inputs up to this size (64 KiB) are parsed and rendered in parallel, into memory;
/// larger ones are parsed when their turn comes to be printed, and their tree streamed
/// as it is read (memory: the chart's only).
pub const RENDER_IN_MEMORY: usize = 64 << 10;

/// What is asked of each input.
#[derive(Clone, Copy, Debug)]
pub struct ParseRequest {
    /// Only the verdict: no tree is rendered.
    pub quiet: bool,
    /// Count each input's trees.
    pub count: bool,
    /// List each input's trees (up to `max_trees`), and count them.
    pub all: bool,
    /// With `all`, the most trees listed per input.
    pub max_trees: usize,
    /// How trees are rendered.
    pub rendering: Rendering,
}

/// What became of one input.
pub enum Parsed {
    /// The rendered tree (or trees), and the tree count if asked for.
    Parsed(String, Option<TreeCount>),
    /// Not in the language: the excerpt of the input where it failed, and why.
    Rejected(String, Box<Rejection>),
    /// The parser gave up (the message says why).
    TooComplex(String),
    /// Not parsed: its chart did not fit in memory (the message names the limit).
    OutOfMemory(String),
    /// Accepted and large: its tree is to be streamed when its turn comes (see
    /// [`RENDER_IN_MEMORY`]).
    Large(Vec<u8>),
    /// Could not be read.
    Unreadable(String),
}

impl Parsed {
    /// The outcome of an input the parser did not accept.
    pub fn failed(text: &[u8], error: ParseError) -> Parsed {
        match error {
            ParseError::Rejected(r) => Parsed::Rejected(r.excerpt(text), r),
            e @ ParseError::TooComplex { .. } => Parsed::TooComplex(e.to_string()),
            e @ ParseError::OutOfMemory { .. } => Parsed::OutOfMemory(e.to_string()),
        }
    }
}

/// How an input failed, for `thicket parse`'s exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Not in the language, or the parser gave up on it.
    Rejected,
    /// Not read: unreadable, or its chart did not fit in memory.
    Unreadable,
}

impl Parsed {
    /// The error message of an input called `name` that failed (shown even with
    /// `quiet` only when it was not read), with the kind of failure; `None` for an
    /// accepted input.
    pub fn error(&self, name: &str, quiet: bool) -> Option<(Option<String>, Failure)> {
        let shown = |message: String| (!quiet).then_some(message);
        Some(match self {
            Parsed::Rejected(excerpt, r) => {
                (shown(format!("{name}:{r}\n{excerpt}")), Failure::Rejected)
            }
            Parsed::TooComplex(message) => (shown(format!("{name}: {message}")), Failure::Rejected),
            Parsed::OutOfMemory(message) => {
                (Some(format!("{name}: {message}")), Failure::Unreadable)
            }
            Parsed::Unreadable(message) => (Some(message.clone()), Failure::Unreadable),
            Parsed::Parsed(..) | Parsed::Large(_) => return None,
        })
    }
}

impl ParseRequest {
    /// Parses one input and renders what is to be shown of it; an ANTLR grammar's
    /// `checker` (its exact reading) decides first. Large accepted text inputs are left
    /// to be streamed ([`Parsed::Large`]).
    pub fn parse(
        &self,
        reader: &InputReader<'_>,
        checker: Option<&thicket_antlr::Checker<'_>>,
        grammar: &Grammar,
        text: Vec<u8>,
    ) -> Parsed {
        if let Some(Err(r)) = checker.map(|c| c.accepts(&text)) {
            return Parsed::Rejected(r.excerpt(&text), Box::new(r));
        }
        match reader {
            InputReader::Bits(unpacker) => self.parse_packed(unpacker, grammar, text),
            InputReader::Text(parser) => self.parse_text(parser, grammar, text),
        }
    }

    fn parse_text(&self, parser: &Parser<'_>, grammar: &Grammar, text: Vec<u8>) -> Parsed {
        if self.quiet && !self.count && !self.all {
            // Only the verdict: recognising reserves and reads no tree.
            return match parser.recognize(&text) {
                Ok(()) => Parsed::Parsed(String::new(), None),
                Err(e) => Parsed::failed(&text, e),
            };
        }
        if !self.quiet && text.len() > RENDER_IN_MEMORY {
            // Parsed when its turn comes to be printed, and its tree streamed then
            // (counted in memory only if the chart does not tell that there is one).
            return Parsed::Large(text);
        }
        // Quiet, a tree is only read to list trees: none is reserved.
        let parsed = if self.quiet {
            parser.parse_streaming(&text)
        } else {
            parser.parse(&text)
        };
        match parsed {
            Ok(result) => self.counted(&result, grammar),
            Err(e) => Parsed::failed(&text, e),
        }
    }

    /// An input that packs bit fields into bytes, rendered in memory whatever its size
    /// (such inputs are binary files of moderate size).
    fn parse_packed(
        &self,
        unpacker: &thicket_fandango::Unpacker<'_>,
        grammar: &Grammar,
        text: Vec<u8>,
    ) -> Parsed {
        if !self.all && !self.count {
            return match unpacker.parse(&text) {
                Ok(tree) if self.quiet => {
                    drop(tree);
                    Parsed::Parsed(String::new(), None)
                }
                Ok(tree) => Parsed::Parsed(render(&tree, grammar, self.rendering), None),
                Err(e) => Parsed::failed(&text, e),
            };
        }
        // The trees over the unpacked input, each packed again (one whose bits do not
        // fill whole bytes stands for no input and is left out).
        let read = unpacker.with_parse(&text, |result| {
            let count = result.count_trees();
            let trees = if self.all {
                result.trees(self.max_trees).map(|(trees, _)| trees)
            } else {
                Err(count)
            };
            (count, trees.unwrap_or_else(|_| vec![result.tree()]))
        });
        let (count, trees) = match read {
            Ok(read) => read,
            Err(e) => return Parsed::failed(&text, e),
        };
        let mut packed = Vec::new();
        let mut first_error = None;
        for tree in &trees {
            match unpacker.repack(tree, &text) {
                Ok(tree) => packed.push(tree),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if packed.is_empty() {
            return match first_error {
                Some(e) => Parsed::failed(&text, e),
                None => Parsed::Parsed(String::new(), Some(count)),
            };
        }
        if self.quiet {
            return Parsed::Parsed(String::new(), Some(count));
        }
        let rendered = if self.all {
            if self.max_trees == 0 {
                packed.clear();
            }
            list_trees(&packed, count, grammar, self.rendering)
        } else {
            render(&packed[0], grammar, self.rendering)
        };
        Parsed::Parsed(rendered, Some(count))
    }

    /// What is shown of an accepted input, rendered in memory: its tree, or with `all`
    /// its trees, and with `count` or `all` their number.
    pub fn counted(&self, result: &ParseResult<'_, '_>, grammar: &Grammar) -> Parsed {
        if self.all {
            return match result.trees(self.max_trees) {
                Ok((trees, total)) => Parsed::Parsed(
                    list_trees(&trees, TreeCount::Finite(total), grammar, self.rendering),
                    Some(TreeCount::Finite(total)),
                ),
                // Accepted all the same: its first derivation stands for the rest, which
                // cannot be listed (infinitely many, or more than 2^128).
                Err(count) => {
                    let first = if self.max_trees == 0 {
                        Vec::new()
                    } else {
                        vec![result.tree()]
                    };
                    Parsed::Parsed(
                        list_trees(&first, count, grammar, self.rendering),
                        Some(count),
                    )
                }
            };
        }
        let count = self.count.then(|| result.count_trees());
        if self.quiet {
            return Parsed::Parsed(String::new(), count);
        }
        let rendered = render(&result.tree(), grammar, self.rendering);
        Parsed::Parsed(rendered, count)
    }
}

/// Several trees of one input: a JSON array, or each rendering under a `# tree k of n`
/// heading.
pub fn list_trees(
    trees: &[DerivationTree],
    total: TreeCount,
    grammar: &Grammar,
    rendering: Rendering,
) -> String {
    let rendered = trees.iter().map(|t| render(t, grammar, rendering));
    if rendering == Rendering::FuzzingbookJson {
        format!("[{}]", rendered.collect::<Vec<_>>().join(","))
    } else {
        rendered
            .enumerate()
            .map(|(k, t)| format!("# tree {} of {total}\n{}", k + 1, t.trim_end()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A tree rendered in memory.
pub fn render(tree: &DerivationTree, grammar: &Grammar, rendering: Rendering) -> String {
    match rendering {
        Rendering::Indented => tree.to_indented(grammar),
        Rendering::FuzzingbookJson => tree.to_fuzzingbook_json(grammar),
        Rendering::Sexp => tree.to_sexp(grammar),
        Rendering::Dot => tree.to_dot(grammar),
    }
}

impl ParseRequest {
    /// Writes the tree (or trees) `tree` of an accepted input called `name`, rendered
    /// in memory, to `out` as `thicket parse` does: a JSON line with its `count`, or the
    /// rendering, headed by `# NAME` when the input is one of `many`.
    pub fn write_parsed(
        &self,
        out: &mut dyn Write,
        name: &str,
        tree: &str,
        count: Option<&TreeCount>,
        many: bool,
    ) -> std::io::Result<()> {
        if self.rendering == Rendering::FuzzingbookJson {
            let start = accepted_line_start(name, count, self.all);
            return writeln!(out, "{start}{tree}}}");
        }
        if many {
            writeln!(out, "# {name}")?;
        }
        write!(out, "{tree}")?;
        if !tree.ends_with('\n') {
            writeln!(out)?;
        }
        Ok(())
    }

    /// Parses a large input (`text`, [`Parsed::Large`], called `name`) with `parser`
    /// and writes its tree to `out` as it is read, as [`ParseRequest::write_parsed`]
    /// would write it: memory is the chart's, not the tree's or the rendering's.
    /// `count` hears its one tree's count when one is asked for. Returns the outcome
    /// to report instead when the tree is not written: the input failed, or its trees
    /// are to be counted or listed in memory after all (it may be ambiguous).
    pub fn write_large(
        &self,
        out: &mut dyn Write,
        parser: &Parser<'_>,
        grammar: &Grammar,
        (name, text): (&str, &[u8]),
        many: bool,
        count: &mut dyn FnMut(&TreeCount),
    ) -> std::io::Result<Option<Parsed>> {
        let result = match parser.parse_streaming(text) {
            Ok(result) => result,
            Err(e) => return Ok(Some(Parsed::failed(text, e))),
        };
        let counting = self.count || self.all;
        if counting && !result.known_unambiguous() {
            return Ok(Some(self.counted(&result, grammar)));
        }
        // Its one tree (`all` lists it, `count` counts it).
        if counting {
            count(&TreeCount::Finite(1));
        }
        let json = self.rendering == Rendering::FuzzingbookJson;
        if json {
            let one = counting.then_some(TreeCount::Finite(1));
            let start = accepted_line_start(name, one.as_ref(), self.all);
            write!(out, "{start}{}", if self.all { "[" } else { "" })?;
        } else {
            if many {
                writeln!(out, "# {name}")?;
            }
            if self.all {
                writeln!(out, "# tree 1 of 1")?;
            }
        }
        let mut renderer = Renderer::new(grammar, self.rendering, &mut *out);
        result.build_into(&mut renderer);
        renderer.finish()?;
        match self.rendering {
            Rendering::FuzzingbookJson if self.all => writeln!(out, "]}}")?,
            Rendering::FuzzingbookJson => writeln!(out, "}}")?,
            Rendering::Sexp => writeln!(out)?,
            Rendering::Indented | Rendering::Dot => {}
        }
        Ok(None)
    }
}

/// The line on an input's tree count (`thicket parse --count`, on stderr):
/// `NAME: N derivation trees`.
pub fn count_line(name: &str, count: &TreeCount) -> String {
    let plural = if *count == TreeCount::Finite(1) {
        ""
    } else {
        "s"
    };
    format!("{name}: {count} derivation tree{plural}")
}

/// The start of the JSON line of an accepted input called `name`, up to its tree or
/// trees: `{"file", "ok": true`, then with a `count` `"trees"` (a number, or null with
/// the reason in `"trees_unknown"`), then `"all":` (`all`: a list of trees follows) or
/// `"tree":`. The caller writes the tree and closes the object.
pub fn accepted_line_start(name: &str, count: Option<&TreeCount>, all: bool) -> String {
    let trees = match count {
        None => String::new(),
        Some(TreeCount::Finite(n)) => format!(",\"trees\":{n}"),
        Some(TreeCount::Infinite) => ",\"trees\":null,\"trees_unknown\":\"infinite\"".to_string(),
        Some(TreeCount::Overflow) => ",\"trees\":null,\"trees_unknown\":\"overflow\"".to_string(),
        Some(TreeCount::Unknown) => ",\"trees\":null,\"trees_unknown\":\"too_complex\"".to_string(),
    };
    let field = if all { "all" } else { "tree" };
    format!(
        "{{\"file\":{},\"ok\":true{trees},\"{field}\":",
        serde_json::Value::from(name)
    )
}

/// The error object of a rejected input (`parse --format json`, `check --json`):
/// message, position, the byte found, what was expected and in which rules.
pub fn rejection_json(r: &Rejection) -> serde_json::Value {
    serde_json::json!({
        "message": r.to_string(),
        "offset": r.offset, "line": r.line, "column": r.column,
        "found": r.found, "expected": r.expected, "rules": r.rules,
    })
}

/// The JSON line (`{"file", "ok": false, "error"}`) of an input that failed: rejected
/// (see [`rejection_json`]), or with a message alone, flagged `unreadable` or
/// `out_of_memory` when it is one of those.
pub fn failure_line(name: &str, failed: &Parsed) -> Option<String> {
    let error = match failed {
        Parsed::Rejected(_, r) => rejection_json(r),
        Parsed::TooComplex(message) => serde_json::json!({"message": message}),
        Parsed::OutOfMemory(message) => {
            serde_json::json!({"message": message, "out_of_memory": true})
        }
        Parsed::Unreadable(message) => {
            serde_json::json!({"message": message, "unreadable": true})
        }
        Parsed::Parsed(..) | Parsed::Large(_) => return None,
    };
    Some(serde_json::json!({"file": name, "ok": false, "error": error}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_has_its_json_line() {
        let spec = thicket_grammar::load_spec_bytes(
            "t.bnf",
            b"<start> ::= \"a\" <start> | \"b\"\n",
            &thicket_grammar::LoadOptions::default(),
        )
        .unwrap();
        let grammar = crate::InputGrammar::new(&spec).unwrap();
        let reader = grammar.reader(Default::default()).unwrap();
        let request = ParseRequest {
            quiet: false,
            count: true,
            all: false,
            max_trees: 10,
            rendering: Rendering::Sexp,
        };
        match request.parse(&reader, None, &spec.grammar, b"aab".to_vec()) {
            Parsed::Parsed(tree, Some(TreeCount::Finite(1))) => assert!(tree.contains("\"b\"")),
            _ => panic!("aab parses with one tree"),
        }
        let rejected = request.parse(&reader, None, &spec.grammar, b"ac".to_vec());
        let line = failure_line("in.txt", &rejected).unwrap();
        assert!(
            line.starts_with("{\"file\":\"in.txt\",\"ok\":false,\"error\":{\"message\":"),
            "{line}"
        );
        assert!(
            line.contains("\"offset\":1,\"line\":1,\"column\":2"),
            "{line}"
        );
        assert_eq!(
            accepted_line_start("a\"b", Some(&TreeCount::Infinite), true),
            "{\"file\":\"a\\\"b\",\"ok\":true,\"trees\":null,\"trees_unknown\":\"infinite\",\"all\":"
        );
    }
}
