//! # thicket-antlr
//!
//! One job: read ANTLR 4 grammars (`.g4` files: a combined grammar, or a parser grammar
//! with its lexer grammar) into thicket's [`Grammar`], so that
//! every thicket command works on them.
//!
//! ```
//! let g4 = b"grammar Pairs;\n\
//!            list : pair (',' pair)* EOF ;\n\
//!            pair : ID '=' INT ;\n\
//!            ID   : [a-z]+ ;\n\
//!            INT  : [0-9]+ ;\n\
//!            WS   : [ \\t\\r\\n]+ -> skip ;\n";
//! let spec = thicket_antlr::load_g4_texts(&[("Pairs.g4".into(), g4.to_vec())], None)?;
//! let grammar = &spec.spec.grammar;
//! assert_eq!(grammar.rule(grammar.start()).name, "list");
//! let check = spec.checker();
//! assert!(check.accepts(b"a = 1, bc=22").is_ok());
//! assert!(check.accepts(b"a = 1 b = 2").is_err());
//! # Ok::<(), thicket_grammar::SpecError>(())
//! ```
//!
//! ## How ANTLR's lexer becomes a context-free grammar over bytes
//!
//! thicket's parser and generator work on one context-free grammar over bytes
//! (scannerless), and every command shares its trees. ANTLR instead splits the input
//! into tokens first: the longest match of any lexer rule wins, and between equally long
//! matches the rule defined first (implicit tokens of literals in a combined grammar
//! come before every lexer rule). Rule order and longest match are not context-free
//! properties, so the translation keeps two readings of the grammar:
//!
//! 1. **The byte grammar** ([`AntlrSpec::spec`]) that every command uses. Each parser
//!    rule is a rule; each token used by the parser is preceded by `<_hidden>`, a
//!    repetition of the lexer rules with `-> skip` or a `channel(..)` other than the
//!    default (whitespace, comments), of the token's lexer mode (`<_hidden.MODE>`), and
//!    `EOF` is the hidden text at the end (a skipped catch-all rule, `WS : . -> skip`,
//!    is there as the characters no earlier rule takes). Lexer rules the parser reaches (tokens,
//!    fragments, skipped rules) become rules over bytes: literals, sets as regex
//!    classes (`~` sets as negated classes over all of Unicode, `\p{..}` kept),
//!    `.` as any character, case-insensitive literals and sets as `(?i:..)`
//!    regexes. A token of a mode entered by a `more` rule is written after that rule
//!    and the mode's own `more` rules (XML's `<?target ... ?>`). Hidden text that
//!    enters another mode (a `#` that pushes a directive mode, popped by the line end)
//!    is followed there: the hidden rules of that mode (and its `more` rules) up to
//!    where the lexer is back in its mode with the mode stack it had, through any
//!    chain of `pushMode`, `popMode` and `mode` commands, several to a rule
//!    (Verilog's `` `ifdef `` pushes a skipped branch that `` `endif ``'s
//!    `popMode, popMode, popMode` ends). Before the end of the input it need not come
//!    back (`<_hidden:end>`): ANTLR's lexer emits `EOF` in whatever mode it is, so a
//!    file may end inside a directive's line.
//!    Tokens end where the exact lexer ends them (`Grammar::set_token_match`): an
//!    alternative through a non-greedy loop at its shortest text (`'/*' .*? '*/'` at
//!    the first `*/`, `.+?` after one character; not where the lexer goes on: a greedy
//!    loop after it, an exit through `EOF`, which is split off and ends at the end of
//!    the input), the others at their longest
//!    (`123` one number, not `1` `23`; not for rules with a predicate or used inside
//!    other lexer rules); actions are the empty string, predicates true (each
//!    reported, see below), and such a token is never a text that a rule before it in
//!    its mode takes (a keyword before the identifier rule: `if` is no identifier,
//!    `Grammar::set_token_taken_texts`). This grammar accepts every input ANTLR
//!    accepts (with the same split into tokens), and more: it does not know that
//!    `intx` is one identifier, not the keyword `int` and `x`.
//! 2. **The exact reading** ([`AntlrSpec::checker`]): a real ANTLR-style [`Lexer`]
//!    (maximal munch over the lexer rules, rule order between equal lengths (a rule
//!    with a predicate before its text last, see [`lexer`]),
//!    shortest match on the paths through a non-greedy loop (each alternative of
//!    such a rule is matched apart, and the longest of their matches wins), modes
//!    with `pushMode`,
//!    `popMode` (an error on an empty mode stack, as in ANTLR's runtimes) and `mode`,
//!    `skip`, `more`, named and numbered channels, `type`; an
//!    empty token where only a rule matching the empty string applies and it leaves
//!    the mode)
//!    turns the input into tokens, and the parser rules are parsed over the token
//!    stream (thicket's own parser on a token-level grammar, each token type two
//!    bytes, the stream ended by an end-of-input code that `EOF` matches, so that
//!    `statement (';' | EOF)` ends a statement early only at the end). This decides
//!    membership the way ANTLR does. Regular lexer rules are
//!    DFAs; a rule that reaches itself through its fragments (nested long brackets,
//!    balanced parentheses) is matched by an automaton with a stack of rule
//!    invocations, as ANTLR's own lexer does ([`nfa`]), non-greedy loops in it
//!    stopped as ANTLR stops them (`'/*' (COMMENT | .)*? '*/'` reads a nested
//!    comment whole).
//!
//! An input is read as ANTLR's runtimes read a file ([`antlr_text`]): UTF-8, each
//! ill-formed sequence one U+FFFD.
//!
//! Characters are read as ANTLR's tool reads them ([`chars`]): `\uXXXX`, `\u{X..}`
//! and the other escapes, `\p{..}` properties in sets, and `caseInsensitive`
//! (the grammar's option or a lexer rule's own) as each character's lower and
//! upper case only (`'s'` never matches `ſ`, U+017F, which a regex's `(?i)` would).
//! `import` reads the imported grammars (from the importing grammar's folder); their
//! rules come after the importer's, which overrides rules of the same name. A parser
//! grammar alone brings the lexer grammar its `tokenVocab` names. Grammars ANTLR
//! refuses are refused with the place: a `pushMode`/`mode` naming no mode, a
//! `channel` naming no declared channel, modes or `channels {}` outside a lexer
//! grammar.
//!
//! ## Left recursion
//!
//! A directly left-recursive parser rule (`e : e '*' e | e '+' e | INT ;`) is read as
//! ANTLR reads it: its alternatives resolved by precedence (earlier alternatives bind
//! tighter, `<assoc=right>` honoured, prefix and suffix operators, ANTLR's greedy
//! loop), so that `1+2*3` has one tree, `1+(2*3)`, in both grammars. The rule becomes
//! one rule per precedence level ([`leftrec`]): the level other rules use keeps the
//! rule's name, inner levels are named `e[p]` after ANTLR's precedence argument, and
//! each node of a tree is one of ANTLR's `e` nodes ([`AntlrSpec::antlr_tree`] writes a
//! tree as ANTLR's `toStringTree` does). Long chains parse in linear time. The price
//! is the grammar's size: a rule of *n* alternatives becomes up to about *n* levels
//! of up to *n* alternatives each (JavaScript's `singleExpression`: 49 alternatives,
//! 45 levels, 1,608 alternatives), which makes parsing the byte grammar of such a
//! grammar several times slower per byte.
//!
//! Generation uses the byte grammar, with hidden text before a token only now and
//! then ([`DEFAULT_HIDDEN_PROBABILITY`], through the byte grammar's default
//! probabilities), and then [`AntlrSpec::separate`] makes each
//! generated input lex as intended: where the exact lexer would merge two tokens (two
//! identifiers, a keyword followed by a letter) or split them differently, it inserts
//! the shortest hidden text (a space) into the empty `<_hidden>` between them. Before
//! that, [`AntlrSpec::respell`] generates again the tokens the lexer would read as
//! another type (an identifier spelled `if`). Parser rules are marked as phrases
//! (`Grammar::set_phrase`), so the parser never compiles a parser rule together with
//! the rules below it into one DFA (css3's selectors would make one of 94,283 NFA
//! states); so are the `<_hidden>` rules, so that no DFA spans hidden text and the
//! tokens around it (a block comment read as any text, followed by tokens, makes
//! DFAs that fail at the size limit after seconds each: Arden's grammar).
//!
//! ## Target code
//!
//! Actions `{...}` and semantic predicates `{...}?` cannot run. Each one is reported as a
//! warning at its file:line:col saying how it was treated: actions (and rule
//! arguments, `returns`, `@init`, named actions) are ignored, predicates assumed true.
//!
//! One idiom of target code is read natively: a lexer that declares `tokens { INDENT,
//! DEDENT }` which no rule makes, beside a `NEWLINE` rule, gets them from the
//! indentation of lines as Python's tokenizer makes them ([`offside`]; reported as
//! `g4-indentation`). The exact reading follows the indentation; the byte grammar
//! reads `INDENT` and `DEDENT` as empty, and generation writes no indentation (it
//! takes no alternative that needs `INDENT`).
//!
//! ## Not supported
//!
//! In the byte grammar, `more` outside the mode-entry pattern above and hidden text,
//! and the lexer mode at the end of input (the default mode's hidden text is allowed
//! there, not an excursion into another mode that has not returned: an input that
//! ends inside a skipped preprocessor branch); the exact reading has both.

#![warn(missing_docs)]

pub mod chars;
pub mod generate;
pub mod leftrec;
pub mod lexer;
pub mod nfa;
pub mod offside;
mod produce;
pub mod syntax;
pub mod translate;

pub use lexer::{LexError, Lexer, Token};
pub use produce::AntlrProducer;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use syntax::GrammarKind;
use thicket_grammar::grammar::quote_bytes;
use thicket_grammar::{Diagnostic, Grammar, SourceFile, Span, Spec, SpecError, TokenMatch};
use thicket_parse::{ParseConfig, ParseError, Parser, Rejection};
use thicket_tree::{DerivationTree, NodeId, TreeBuilder};

/// Whether `path` names an ANTLR 4 grammar (ends in `.g4`).
pub fn is_g4(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "g4")
}

/// The lexer grammar of the parser grammar at `parser`: the file its
/// `options { tokenVocab = X; }` names, `X.g4` in the same folder, if it exists.
/// `None` for other grammars and unreadable files (loading reports those).
pub fn lexer_beside(parser: &Path) -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string(parser).ok()?;
    let file = syntax::parse_g4(&text).ok()?;
    if file.kind != GrammarKind::Parser {
        return None;
    }
    let path = parser.with_file_name(format!("{}.g4", file.option("tokenVocab")?));
    path.is_file().then_some(path)
}

/// An input file's text as ANTLR's runtimes read it: UTF-8, each ill-formed sequence
/// (a Latin-1 `©`, byte 0xA9) read as one U+FFFD replacement character (Java's
/// `CharStreams.fromPath` replaces malformed input, as Python's `errors="replace"`
/// does; grammars-v4's tests read their examples so). The lexer rules then see that
/// character, which `.` and most negated sets match, where a raw byte that is not
/// UTF-8 matches no rule. Both readings of a grammar take this text; valid UTF-8 is
/// returned as it is.
pub fn antlr_text(input: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match String::from_utf8_lossy(input) {
        std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(input),
        std::borrow::Cow::Owned(text) => std::borrow::Cow::Owned(text.into_bytes()),
    }
}

/// The probability that generation puts hidden text (whitespace, comments: skipped
/// and off-channel tokens) before a token: small, so that generated inputs look like
/// what a person writes; separators where tokens would merge come from
/// [`AntlrSpec::separate`] anyway. [`AntlrSpec::set_hidden_probability`] raises it
/// (for fuzzing a lexer). It is the probability other specs' whitespace rules take
/// more than their minimum with (`thicket_gen::prob::DEFAULT_WHITESPACE_PROBABILITY`).
pub const DEFAULT_HIDDEN_PROBABILITY: f64 = thicket_gen::prob::DEFAULT_WHITESPACE_PROBABILITY;

/// A read ANTLR grammar: the byte grammar every command uses, and what the exact
/// reading needs.
pub struct AntlrSpec {
    /// The byte grammar (scannerless; see the crate docs), its source the parser
    /// grammar's file.
    pub spec: Spec,
    /// The exact lexer.
    pub lexer: Lexer,
    /// The indentation idiom, where the grammar declares it: the exact reading makes
    /// `INDENT` and `DEDENT` from the indentation of lines ([`offside`]).
    pub offside: Option<offside::Offside>,
    /// The parser rules over token codes.
    token_grammar: Grammar,
    /// Token type names, by code.
    token_types: Vec<String>,
    /// Warnings about target code, each with the file it is in.
    pub warnings: Vec<(Arc<SourceFile>, Diagnostic)>,
    /// Alternatives of parser rules that begin with a predicate (generation takes
    /// them rarely, see [`generate::generation_weights`]).
    pub(crate) guarded: Vec<translate::GuardedAlternative>,
    /// The shortest text of each hidden rule, by symbol ([`AntlrSpec::separate`]),
    /// found once: it takes a parser of the whole byte grammar.
    separators: OnceLock<Vec<Option<Vec<u8>>>>,
}

/// Reads `.g4` files: one combined grammar, or a parser grammar and a lexer grammar in
/// either order. `start` is the start parser rule (default: the first parser rule).
/// Files are read up to `max_bytes` each. A parser grammar given alone brings the
/// lexer grammar its `tokenVocab` names ([`lexer_beside`]); grammars named by
/// `import` are read from the folder of the grammar importing them.
pub fn load_g4_files(
    paths: &[&Path],
    start: Option<&str>,
    max_bytes: usize,
) -> Result<AntlrSpec, SpecError> {
    let mut paths: Vec<std::path::PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    if let [only] = paths.as_slice()
        && let Some(lexer) = lexer_beside(only)
    {
        paths.push(lexer);
    }
    let mut files = Vec::new();
    for path in &paths {
        files.push((path.display().to_string(), read_limited(path, max_bytes)?));
    }
    // Imports, breadth first: each from the folder of the grammar that names it.
    let mut i = 0;
    let mut names: Vec<Option<String>> = files.iter().map(|(_, b)| grammar_name(b)).collect();
    let mut folders: Vec<std::path::PathBuf> = paths
        .iter()
        .map(|p| p.parent().map(Path::to_path_buf).unwrap_or_default())
        .collect();
    while i < files.len() {
        for import in imports_of(&files[i].1) {
            if names.iter().flatten().any(|n| *n == import) {
                continue;
            }
            let path = folders[i].join(format!("{import}.g4"));
            if !path.is_file() {
                // Reported by load_g4_texts, where the import is written.
                continue;
            }
            let bytes = read_limited(&path, max_bytes)?;
            names.push(Some(import));
            folders.push(folders[i].clone());
            files.push((path.display().to_string(), bytes));
        }
        i += 1;
    }
    load_g4_texts(&files, start)
}

/// A file's bytes, at most `max_bytes` of them (more is an error).
fn read_limited(path: &Path, max_bytes: usize) -> Result<Vec<u8>, SpecError> {
    use std::io::Read;
    let name = path.display().to_string();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| SpecError {
            source: Arc::new(SourceFile::new(name.clone(), "")),
            diagnostics: vec![Diagnostic::error(
                "io",
                format!("cannot read grammar {name}: {e}"),
                Span::new(0, 0),
            )],
        })?;
    if bytes.len() > max_bytes {
        return Err(SpecError {
            source: Arc::new(SourceFile::new(name, "")),
            diagnostics: vec![Diagnostic::error(
                "too-large",
                format!(
                    "the grammar is larger than the limit of {max_bytes} bytes (raise it with --max-spec-size)"
                ),
                Span::new(0, 0),
            )],
        });
    }
    Ok(bytes)
}

/// The name a grammar's text declares, if it reads.
fn grammar_name(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)).ok()?;
    syntax::parse_g4(text).ok().map(|f| f.name)
}

/// The grammars a grammar's text imports (none if it does not read).
fn imports_of(bytes: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes));
    text.ok()
        .and_then(|t| syntax::parse_g4(t).ok())
        .map(|f| f.imports.into_iter().map(|(n, _)| n).collect())
        .unwrap_or_default()
}

/// [`load_g4_files`] on texts given with the names errors are reported under. A
/// grammar that another of them imports is read as an import; every import must be
/// among the texts.
pub fn load_g4_texts(
    files: &[(String, Vec<u8>)],
    start: Option<&str>,
) -> Result<AntlrSpec, SpecError> {
    let mut sources = Vec::new();
    let mut read = Vec::new();
    for (name, bytes) in files {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes).map_err(|e| SpecError {
            source: Arc::new(SourceFile::new(
                name.clone(),
                String::from_utf8_lossy(bytes),
            )),
            diagnostics: vec![Diagnostic::error(
                "not-utf8",
                format!(
                    "the grammar is not valid UTF-8 (byte offset {})",
                    e.valid_up_to()
                ),
                Span::new(e.valid_up_to(), e.valid_up_to() + 1),
            )],
        })?;
        let source = Arc::new(SourceFile::new(name.clone(), text));
        let file = syntax::parse_g4(text).map_err(|d| SpecError {
            source: source.clone(),
            diagnostics: vec![*d],
        })?;
        sources.push(source);
        read.push(file);
    }
    // Imported grammars go after the grammars given, in the order first imported.
    let mut imported: Vec<usize> = Vec::new();
    for (fi, file) in read.iter().enumerate() {
        for (name, span) in &file.imports {
            match read.iter().position(|f| f.name == *name) {
                Some(i) if i == fi => {
                    return Err(SpecError {
                        source: sources[fi].clone(),
                        diagnostics: vec![Diagnostic::error(
                            "g4-import",
                            format!("grammar `{name}` imports itself"),
                            *span,
                        )],
                    });
                }
                Some(i) => {
                    if !imported.contains(&i) {
                        imported.push(i);
                    }
                }
                None => {
                    return Err(SpecError {
                        source: sources[fi].clone(),
                        diagnostics: vec![
                            Diagnostic::error(
                                "g4-import",
                                format!("cannot find the imported grammar `{name}`"),
                                *span,
                            )
                            .with_note(format!(
                                "it is read from {name}.g4 in the folder of the grammar importing it"
                            )),
                        ],
                    });
                }
            }
        }
    }
    let order: Vec<usize> = (0..read.len())
        .filter(|i| !imported.contains(i))
        .chain(imported.iter().copied())
        .collect();
    let roots = read.len() - imported.len();
    let mut slots: Vec<Option<syntax::G4File>> = read.into_iter().map(Some).collect();
    let read: Vec<syntax::G4File> = order.iter().filter_map(|&i| slots[i].take()).collect();
    let sources: Vec<Arc<SourceFile>> = order.iter().map(|&i| sources[i].clone()).collect();
    let fail = |file: usize, diagnostics: Vec<Diagnostic>| SpecError {
        source: sources[file].clone(),
        diagnostics,
    };
    let kinds: Vec<GrammarKind> = read[..roots].iter().map(|f| f.kind).collect();
    match kinds.as_slice() {
        [GrammarKind::Combined] | [GrammarKind::Parser] => {}
        [GrammarKind::Lexer] => {
            return Err(fail(
                0,
                vec![
                    Diagnostic::error(
                        "start",
                        "a lexer grammar alone has no parser rule to start from",
                        Span::new(0, 0),
                    )
                    .with_note("give the parser grammar too (the lexer with --lexer FILE)"),
                ],
            ));
        }
        [GrammarKind::Parser, GrammarKind::Lexer] | [GrammarKind::Lexer, GrammarKind::Parser] => {}
        _ => {
            return Err(fail(
                0,
                vec![Diagnostic::error(
                    "g4-files",
                    format!(
                        "expected one combined grammar, or one parser and one lexer grammar; got {} file(s) of kinds {kinds:?}",
                        roots
                    ),
                    Span::new(0, 0),
                )],
            ));
        }
    }
    let mut t = translate::translate(&read, roots, start).map_err(|errors| {
        let file = errors[0].0;
        fail(
            file,
            errors
                .into_iter()
                .filter(|(f, _)| *f == file)
                .map(|(_, d)| d)
                .collect(),
        )
    })?;
    let main = read[..roots]
        .iter()
        .position(|f| f.kind != GrammarKind::Lexer)
        .unwrap_or(0);
    let lexer = Lexer::new(std::mem::take(&mut t.lexer)).map_err(|failed| {
        let (rule, reason) = *failed;
        fail(
            rule.at.0,
            vec![Diagnostic::error(
                "g4-lexer",
                format!("lexer rule `{}` cannot be compiled: {reason}", rule.name),
                rule.at.1,
            )],
        )
    })?;
    // A token whose every text an earlier rule wins is in no input: the parts of the
    // parser rules that need it go, as for tokens only target code could emit.
    let unreachable = lexer.unreachable_rules();
    let never: Vec<String> = unreachable.iter().map(|u| u.rule.clone()).collect();
    let dropped = translate::drop_tokens(&mut t.ast, &t.start, &never, &t.parser_rules);
    for u in unreachable.iter().filter(|u| dropped.contains(&u.rule)) {
        t.warnings.push((
            u.at.0,
            Diagnostic::warning(
                "g4-unreachable-token",
                format!(
                    "token `{}` is never made: the lexer gives its text `{}` to `{}`, \
                     defined before it, so no input has it",
                    u.rule,
                    String::from_utf8_lossy(&u.text),
                    u.winner
                ),
                u.at.1,
            )
            .with_note("ANTLR's lexer takes the first of the rules that match the same text"),
        ));
    }
    let mut grammar = Grammar::build(&t.ast, &t.start).map_err(|d| fail(main, d))?;
    let token_grammar = Grammar::build(&t.token_ast, &t.start).map_err(|d| fail(main, d))?;
    // Parser rules of the byte grammar are phrase structure: no DFA spans more than
    // one parser rule's body. Compiled into one DFA with the parser rules below it and
    // the hidden text between their tokens, a large non-recursive part (css3's
    // `selectorGroup`: an NFA of 94,283 states) takes a minute to build. Lexer rules and their fragments stay tokens. The token grammar
    // keeps its regular parser rules as DFAs: over two-byte token codes without hidden
    // text they stay small (css3's first exact parse: 11 ms), and parsing by parts
    // there costs about twice the time on large inputs.
    for name in &t.parser_rules {
        if let Some(symbol) = grammar.symbol(name) {
            grammar.set_phrase(symbol);
        }
    }
    // Hidden text is a phrase too: no DFA spans the hidden text before a token and the
    // tokens around it. A DFA of `<_hidden> ID <_hidden> ':='` with the hidden rules
    // inside must follow every way through comments, keywords and whitespace at once:
    // Arden's rules made DFAs that failed at the size limit after seconds each, and a
    // 1 KB example took minutes. Each token and each stretch of hidden text stays one
    // DFA of its own.
    let hidden: Vec<thicket_grammar::SymbolId> = grammar
        .symbols()
        .filter(|&s| rule_role(&grammar, s) == RuleRole::Hidden)
        .collect();
    for symbol in hidden {
        grammar.set_phrase(symbol);
    }
    // Tokens end where the exact lexer ends them: through a non-greedy loop at the
    // first end (`.+?` is one character, a comment ends at its first `*/`), else at
    // the longest (`123` is one number). Read as plain languages, a non-greedy token
    // could end at every later position (Arden's `TEXT : .+?` made the parser's
    // pending items grow with the square of the input), and a run of digits split
    // into numbers in every way.
    // And a token never is a keyword that an earlier rule takes (`ENDCHAR` is no
    // `ARG : [A-Z0-9]+`): read as one, bdf's `'BITMAP' ARG*` ran on through the
    // keywords after it, and a 100 KB font took minutes.
    let mut taken: HashMap<&str, HashSet<Vec<u8>>> = HashMap::new();
    for mark in &t.token_matches {
        if let Some(alternative) = token_alternative(&grammar, mark) {
            grammar.set_token_match(alternative, mark.how);
            if mark.how == TokenMatch::Longest {
                let texts = taken
                    .entry(&mark.rule)
                    .or_insert_with(|| lexer.texts_taken_before(&mark.rule));
                // A token of a few texts loses the taken ones from its language, for
                // every reader: hidden text is scanned as one DFA, where a skipped
                // `WS : [ \t\r\n]` after `EOL : [\r\n]+` (ply) let a line of numbers
                // run on into the next ones. Its scans then need no check of them.
                let terminal = matches!(
                    grammar.expr(alternative),
                    thicket_grammar::Expr::Literal(_) | thicket_grammar::Expr::Regex(_)
                );
                if terminal
                    && mark.path.is_empty()
                    && !texts.is_empty()
                    && let Some(left) = lexer.texts_left(&mark.rule, texts)
                    && !left.is_empty()
                {
                    grammar.set_terminal_regex(alternative, regex_of_texts(&left));
                } else {
                    grammar.set_token_taken_texts(alternative, texts.clone());
                }
            }
        }
    }
    let mut spec = AntlrSpec {
        spec: Spec {
            grammar,
            source: sources[main].clone(),
            constraints_start: None,
            fandango: Default::default(),
        },
        lexer,
        offside: t.offside.take(),
        token_grammar,
        token_types: t.token_types,
        warnings: t
            .warnings
            .into_iter()
            .map(|(f, d)| (sources[f].clone(), d))
            .collect(),
        guarded: t.guarded,
        separators: OnceLock::new(),
    };
    spec.set_hidden_probability(DEFAULT_HIDDEN_PROBABILITY);
    Ok(spec)
}

/// A regex matching exactly `texts`.
fn regex_of_texts(texts: &[Vec<u8>]) -> thicket_grammar::RegexTerminal {
    use regex_syntax::hir::Hir;
    let pattern = texts
        .iter()
        .map(|t| regex_syntax::escape(&String::from_utf8_lossy(t)))
        .collect::<Vec<_>>()
        .join("|");
    let hir = Hir::alternation(
        texts
            .iter()
            .map(|t| Hir::literal(t.clone().into_boxed_slice()))
            .collect(),
    );
    thicket_grammar::RegexTerminal { pattern, hir }
}

/// The node of the byte grammar that `mark` names, if the rule's body has the shape the
/// translation built (an alternation it pruned is left unmarked).
fn token_alternative(
    grammar: &Grammar,
    mark: &translate::TokenAlternative,
) -> Option<thicket_grammar::ExprId> {
    let mut at = grammar.rule(grammar.symbol(&mark.rule)?).body;
    for &(index, of) in &mark.path {
        match grammar.expr(at) {
            thicket_grammar::Expr::Alt(children) if children.len() == of => at = children[index],
            _ => return None,
        }
    }
    Some(at)
}

/// A generated input in which some tokens merge whatever hidden text is put between
/// them: see [`AntlrSpec::separate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// The input with every boundary that a separator fixes fixed.
    pub bytes: Vec<u8>,
    /// The token nodes on both sides of the boundaries no separator fixes, in tree
    /// order.
    pub tokens: Vec<NodeId>,
}

/// Decides inputs the way an ANTLR-generated lexer and parser do: see
/// [`AntlrSpec::checker`].
pub struct Checker<'a> {
    spec: &'a AntlrSpec,
    parser: Parser<'a>,
}

impl AntlrSpec {
    /// Sets the probability that generation puts hidden text before a token (see
    /// [`DEFAULT_HIDDEN_PROBABILITY`]), as default probabilities of the byte grammar
    /// (`Grammar::default_probabilities`, which generation by weights follows): of
    /// hidden text drawn, nine times in ten one hidden token, else several. The hidden
    /// text before the end of the input leaves the default mode for good (an
    /// unfinished directive) with the same probability.
    pub fn set_hidden_probability(&mut self, p: f64) {
        for (alternative, probability) in self.hidden_choices(p) {
            self.spec
                .grammar
                .set_default_probability(alternative, probability);
        }
    }

    /// The probability of each alternative of the hidden rules when hidden text comes
    /// before a token with probability `p` (see [`AntlrSpec::set_hidden_probability`]).
    pub(crate) fn hidden_choices(&self, p: f64) -> Vec<(thicket_grammar::ExprId, f64)> {
        let p = p.clamp(0.0, 1.0);
        let grammar = &self.spec.grammar;
        let mut choices = Vec::new();
        for symbol in grammar.symbols() {
            if rule_role(grammar, symbol) != RuleRole::Hidden {
                continue;
            }
            let thicket_grammar::Expr::Alt(alts) = grammar.expr(grammar.rule(symbol).body) else {
                continue;
            };
            match alts[..] {
                [none, one, several] => {
                    choices.extend([(none, 1.0 - p), (one, 0.9 * p), (several, 0.1 * p)]);
                }
                [back, leaving] => choices.extend([(back, 1.0 - p), (leaving, p)]),
                _ => {}
            }
        }
        choices
    }

    /// The exact reading: lex, then parse the token stream.
    pub fn checker(&self) -> Checker<'_> {
        let parser = Parser::new(&self.token_grammar, ParseConfig::default())
            .expect("token grammars have no regex terminals beyond an empty class");
        Checker { spec: self, parser }
    }

    /// The token nodes of a byte-grammar tree (references to lexer rules from parser
    /// rules) whose text the exact lexer reads as another token type: an identifier
    /// generated as `if`. Only tokens of the default mode are checked (see
    /// [`Lexer::reads_as`]).
    pub fn misread_tokens(&self, tree: &DerivationTree) -> Vec<NodeId> {
        let grammar = &self.spec.grammar;
        let mut misread = Vec::new();
        let mut i = tree.root().index();
        while i < tree.len() {
            let node = NodeId::from_index(i);
            if let thicket_grammar::Expr::Ref(s) = grammar.expr(tree.expr(node)) {
                match rule_role(grammar, *s) {
                    // Nothing below hidden text is a token the parser sees.
                    RuleRole::Hidden => {
                        i = tree.subtree_end(node);
                        continue;
                    }
                    // A token or the synthetic root: only tokens are checked, and
                    // nothing below a token is one.
                    RuleRole::Lexer | RuleRole::Root => {
                        let name = &grammar.rule(*s).name;
                        let followed = tree.text_range(node).end < tree.bytes().len();
                        if let Some(ok) = self.lexer.reads_as(tree.text(node), name, followed) {
                            if !ok {
                                misread.push(node);
                            }
                            i = tree.subtree_end(node);
                            continue;
                        }
                    }
                    RuleRole::Parser => {}
                }
            }
            i += 1;
        }
        misread
    }

    /// A byte-grammar tree as ANTLR's `toStringTree` writes its parse tree: `(rule
    /// child ...)` for each parser rule, a token as its text, hidden text left out.
    /// The precedence levels of a left-recursive rule ([`leftrec`]) are written with
    /// the rule's own name, as ANTLR has one rule there. ANTLR's `<EOF>` leaf is not
    /// written.
    pub fn antlr_tree(&self, tree: &DerivationTree) -> String {
        use thicket_grammar::Expr;
        let grammar = &self.spec.grammar;
        let mut out = String::new();
        let mut open: Vec<usize> = Vec::new();
        let leaf = |out: &mut String, text: &[u8]| {
            if !out.is_empty() && !out.ends_with('(') {
                out.push(' ');
            }
            out.push_str(&String::from_utf8_lossy(text));
        };
        let mut i = tree.root().index();
        while i < tree.len() {
            while open.last().is_some_and(|&end| end <= i) {
                open.pop();
                out.push(')');
            }
            let node = NodeId::from_index(i);
            match grammar.expr(tree.expr(node)) {
                Expr::Ref(s) => match rule_role(grammar, *s) {
                    RuleRole::Hidden => {
                        i = tree.subtree_end(node);
                        continue;
                    }
                    RuleRole::Parser => {
                        let name = &grammar.rule(*s).name;
                        if !out.is_empty() {
                            out.push(' ');
                        }
                        out.push('(');
                        out.push_str(name.split('[').next().unwrap_or(name));
                        open.push(tree.subtree_end(node));
                    }
                    // A token.
                    RuleRole::Lexer if i != tree.root().index() => {
                        leaf(&mut out, tree.text(node));
                        i = tree.subtree_end(node);
                        continue;
                    }
                    RuleRole::Lexer | RuleRole::Root => {}
                },
                Expr::Literal(_) | Expr::Regex(_) => leaf(&mut out, tree.text(node)),
                Expr::Alt(_) | Expr::Seq(_) | Expr::Repeat(_) => {}
            }
            i += 1;
        }
        for _ in open {
            out.push(')');
        }
        out
    }

    /// Regenerates the tokens [`AntlrSpec::misread_tokens`] finds, each through
    /// `fill(expression, builder)` (which emits a fresh subtree of the token node's
    /// expression, e.g. `Generator::expand`), until none is misread or `rounds` rounds
    /// have passed; the tree returned may then still hold misread tokens. Cheaper than
    /// drawing a whole input again when one identifier came out as a keyword.
    pub fn respell(
        &self,
        tree: DerivationTree,
        rounds: usize,
        fill: &mut dyn FnMut(thicket_grammar::ExprId, &mut TreeBuilder),
    ) -> DerivationTree {
        let mut tree = tree;
        for _ in 0..rounds {
            let holes = self.misread_tokens(&tree);
            if holes.is_empty() {
                break;
            }
            tree = tree.replace_subtrees(&self.spec.grammar, &holes, &mut |i, builder| {
                fill(tree.expr(holes[i]), builder)
            });
        }
        tree
    }

    /// Makes a generated input lex as its tree intends: where the exact lexer does
    /// not start a token at the end of a `<_hidden>` node (the tokens would merge, or
    /// generated hidden text such as a `//` comment without its line end would swallow
    /// the next token), the hidden text there becomes the shortest hidden text of that
    /// mode (a space). So does an empty `<_hidden>` between two word characters
    /// (`1` then `Y`), which ANTLR splits but a person would not write together.
    /// Returns the input unchanged when it already lexes as intended. Every boundary
    /// that a separator fixes is fixed; where none does (a token that goes on through
    /// a space, such as a string whose last `\\]` escapes its own end, or a mode without
    /// hidden text), the input so far is returned as [`Merged`], with the tokens on
    /// both sides of each such boundary, for [`AntlrSpec::regenerate`]. Only
    /// boundaries are fixed: a token generated as text another rule wins (an
    /// identifier `if`) stays (see [`AntlrSpec::respell`]), and the [`Checker`]
    /// rejects it.
    pub fn separate(&self, tree: &DerivationTree) -> Result<Vec<u8>, Merged> {
        let grammar = &self.spec.grammar;
        // Each hidden node (it precedes a token): its text range and rule.
        let mut gaps: Vec<(std::ops::Range<usize>, thicket_grammar::SymbolId)> = Vec::new();
        for node in tree.descendants(tree.root()) {
            if let thicket_grammar::Expr::Ref(s) = grammar.expr(tree.expr(node))
                && rule_role(grammar, *s) == RuleRole::Hidden
            {
                let range = tree.text_range(node);
                if gaps.last().is_none_or(|(r, _)| r.end != range.end) {
                    gaps.push((range, *s));
                }
            }
        }
        // The gaps' places in the tree's own text, to name the tokens around them.
        let in_tree: Vec<std::ops::Range<usize>> = gaps.iter().map(|(r, _)| r.clone()).collect();
        let mut input = tree.bytes().to_vec();
        // The gaps' ranges follow `input` as gaps grow or shrink when they are fixed.
        let mut next = 0;
        // Gaps that no separator fixes, though every gap before them lexes as meant.
        let mut stuck: Vec<usize> = Vec::new();
        // Each pass lexes once and fixes every misplaced boundary it sees (a fix can
        // only make later boundaries more separate); the next pass checks again from
        // the first fix. Lexing once per fix instead made long inputs quadratic.
        loop {
            let (tokens, error) = self.lexer.tokens_until_error(&input);
            let starts: Vec<usize> = tokens.iter().map(|t| t.start).collect();
            // Past a lexer error nothing can be told.
            let limit = error.map_or(input.len(), |e| e.offset);
            let bad: Vec<usize> = (next..gaps.len())
                .filter(|&i| {
                    let (range, hidden) = &gaps[i];
                    let at = range.end;
                    !stuck.contains(&i)
                        && at < input.len()
                        && at < limit
                        && (starts.binary_search(&at).is_err()
                            || (range.is_empty()
                                && joins_words(&input, at)
                                && self.separator(*hidden).is_some()))
                })
                .collect();
            let Some(&first) = bad.first() else {
                break;
            };
            let mut fixed = None;
            // Back to front, so that the offsets of the gaps still to fix hold.
            for &i in bad.iter().rev() {
                let range = gaps[i].0.clone();
                let sep = match self.separator(gaps[i].1) {
                    Some(sep) if input[range.clone()] != *sep => sep,
                    // No hidden text of that mode is a separator: nothing fixes it
                    // (marked at once, or each pass would lex again for one gap).
                    None => {
                        stuck.push(i);
                        continue;
                    }
                    // A later boundary may be bad only because an earlier one is: it
                    // is stuck only once every one before it lexes as meant.
                    Some(_) => {
                        if i == first {
                            stuck.push(i);
                        }
                        continue;
                    }
                };
                input.splice(range.clone(), sep.iter().copied());
                let grown = sep.len() as isize - range.len() as isize;
                gaps[i].0.end = range.start + sep.len();
                for (later, _) in &mut gaps[i + 1..] {
                    later.start = later.start.saturating_add_signed(grown);
                    later.end = later.end.saturating_add_signed(grown);
                }
                fixed = Some(i);
            }
            match fixed {
                Some(i) => next = i + 1,
                // Nothing changed, so lexing again would find the same: every bad
                // boundary left is stuck.
                None => {
                    stuck.extend(
                        bad.iter()
                            .filter(|i| !stuck.contains(i))
                            .copied()
                            .collect::<Vec<_>>(),
                    );
                    break;
                }
            }
        }
        // Tokens with no hidden text before them (a mode without hidden rules) are
        // checked once the gaps are fixed: nothing can part them but other text. A
        // token whose rule goes on into the next (`more`) is no boundary.
        let nodes = self.token_nodes(tree);
        let (tokens, error) = self.lexer.tokens_until_error(&input);
        let limit = error.map_or(input.len(), |e| e.offset);
        let starts: Vec<usize> = tokens.iter().map(|t| t.start).collect();
        let grown = |at: usize| {
            let last = in_tree.partition_point(|r| r.end <= at);
            last.checked_sub(1)
                .map_or(0, |g| gaps[g].0.end as isize - in_tree[g].end as isize)
        };
        let mut merged: Vec<std::ops::Range<usize>> =
            stuck.iter().map(|&i| in_tree[i].clone()).collect();
        for pair in nodes.windows(2) {
            let (before, after) = (tree.text_range(pair[0]), tree.text_range(pair[1]));
            let at = after.start.saturating_add_signed(grown(after.start));
            let glued = match self.spec.grammar.expr(tree.expr(pair[0])) {
                thicket_grammar::Expr::Ref(rule) => {
                    self.lexer.continues(&self.spec.grammar.rule(*rule).name)
                }
                _ => false,
            };
            if before.end == after.start
                && !before.is_empty()
                && !after.is_empty()
                && !glued
                && at < limit
                && starts.binary_search(&at).is_err()
            {
                merged.push(after.start..after.start);
            }
        }
        if merged.is_empty() {
            return Ok(input);
        }
        // The tokens (references to lexer rules, outside hidden text) around each
        // boundary: the one ending where its gap starts and the one starting where it
        // ends.
        let mut around = Vec::new();
        for gap in merged {
            let before = nodes.iter().rev().find(|&&n| {
                let r = tree.text_range(n);
                r.end == gap.start && !r.is_empty()
            });
            let after = nodes.iter().find(|&&n| {
                let r = tree.text_range(n);
                r.start == gap.end && !r.is_empty()
            });
            around.extend(before.into_iter().chain(after).copied());
        }
        around.sort();
        around.dedup();
        Err(Merged {
            bytes: input,
            tokens: around,
        })
    }

    /// The token nodes of a byte-grammar tree in order: references to lexer rules
    /// outside hidden text, not the tokens' own parts.
    fn token_nodes(&self, tree: &DerivationTree) -> Vec<NodeId> {
        let grammar = &self.spec.grammar;
        let mut out = Vec::new();
        let mut i = tree.root().index();
        while i < tree.len() {
            let node = NodeId::from_index(i);
            if let thicket_grammar::Expr::Ref(s) = grammar.expr(tree.expr(node)) {
                match rule_role(grammar, *s) {
                    RuleRole::Hidden => {
                        i = tree.subtree_end(node);
                        continue;
                    }
                    RuleRole::Lexer if i != tree.root().index() => {
                        out.push(node);
                        i = tree.subtree_end(node);
                        continue;
                    }
                    RuleRole::Lexer | RuleRole::Root | RuleRole::Parser => {}
                }
            }
            i += 1;
        }
        out
    }

    /// The tree with the subtrees at `nodes` generated again through `fill`, as
    /// [`AntlrSpec::respell`] does (for the tokens [`Merged`] names).
    pub fn regenerate(
        &self,
        tree: &DerivationTree,
        nodes: &[NodeId],
        fill: &mut dyn FnMut(thicket_grammar::ExprId, &mut TreeBuilder),
    ) -> DerivationTree {
        tree.replace_subtrees(&self.spec.grammar, nodes, &mut |i, builder| {
            fill(tree.expr(nodes[i]), builder)
        })
    }

    /// The shortest text a hidden rule (`_hidden` or `_hidden.MODE`) matches: tried
    /// among a space, newline and tab.
    fn separator(&self, hidden_rule: thicket_grammar::SymbolId) -> Option<&[u8]> {
        self.separators
            .get_or_init(|| {
                let grammar = &self.spec.grammar;
                let parser = Parser::new(grammar, ParseConfig::default()).ok();
                grammar
                    .symbols()
                    .map(|symbol| {
                        let parser = parser.as_ref()?;
                        if rule_role(grammar, symbol) != RuleRole::Hidden {
                            return None;
                        }
                        [&b" "[..], b"\n", b"\t", b"\r\n"]
                            .into_iter()
                            .find(|sep| parser.parse_as(symbol, sep).is_ok())
                            .map(<[u8]>::to_vec)
                    })
                    .collect()
            })
            .get(hidden_rule.index())?
            .as_deref()
    }
}

/// Whether the bytes on both sides of `at` are word characters (letters, digits, `_`,
/// or part of a character past ASCII): tokens that ANTLR's lexer splits there (`1` and
/// `Y`, `else` and `1`) still read as one word to a person and to most real lexers
/// (GraphQL's `1Y` is an invalid number, C's `else1` an identifier).
fn joins_words(input: &[u8], at: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii();
    at > 0 && at < input.len() && word(input[at - 1]) && word(input[at])
}

/// What a rule of the byte grammar stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleRole {
    /// A parser rule (or a precedence level of one): a phrase.
    Parser,
    /// `<_hidden>` or `<_hidden.MODE>`: hidden text before a token, a choice among the
    /// lexer's hidden rules (a phrase too, so that no DFA spans it and its tokens).
    Hidden,
    /// The synthetic root (hidden text, then the start rule).
    Root,
    /// A lexer rule, a fragment, or hidden text inside another mode.
    Lexer,
}

/// The role of `symbol` in the byte grammar.
pub(crate) fn rule_role(grammar: &Grammar, symbol: thicket_grammar::SymbolId) -> RuleRole {
    let name = &grammar.rule(symbol).name;
    if name.starts_with(translate::HIDDEN) {
        RuleRole::Hidden
    } else if name == translate::INPUT {
        RuleRole::Root
    } else if grammar.is_phrase(symbol) {
        RuleRole::Parser
    } else {
        RuleRole::Lexer
    }
}

impl Checker<'_> {
    /// `Ok` if ANTLR's lexer and parser accept `input` whole; otherwise where it
    /// fails, with the token types the parser expected there (or, where no token
    /// matches, the lexer mode).
    pub fn accepts(&self, input: &[u8]) -> Result<(), Rejection> {
        let tokens = self.parser_tokens(input)?;
        let mut codes = Vec::with_capacity(tokens.len() * 2);
        for t in &tokens {
            let index = self.spec.token_types.iter().position(|n| *n == t.kind);
            // A token type the parser never names cannot be parsed: a code no rule has.
            codes.extend_from_slice(&translate::token_code(index.unwrap_or(0xFFFF)));
        }
        codes.extend_from_slice(&translate::EOF_CODE);
        match self.parser.recognize(&codes) {
            Ok(()) => Ok(()),
            Err(ParseError::Rejected(r)) => {
                let at = tokens.get(r.offset / 2);
                let names: Vec<String> = (0..self.spec.token_types.len())
                    .map(|i| quote_bytes(&translate::token_code(i)))
                    .collect();
                let expected = r
                    .expected
                    .iter()
                    .filter_map(|e| names.iter().position(|n| n == e))
                    .map(|i| self.spec.token_types[i].clone())
                    .collect();
                let rules = match at {
                    Some(t) => vec![format!(
                        "token {} {:?}",
                        t.kind,
                        String::from_utf8_lossy(&input[t.start..t.end])
                    )],
                    None => Vec::new(),
                };
                Err(Rejection::at(
                    input,
                    at.map_or(input.len(), |t| t.start),
                    expected,
                    rules,
                ))
            }
            Err(ParseError::TooComplex { max_items, .. }) => Err(Rejection::at(
                input,
                0,
                vec![format!(
                    "a token stream needing at most {max_items} parser items"
                )],
                Vec::new(),
            )),
            Err(e @ ParseError::OutOfMemory { .. }) => Err(Rejection::at(
                input,
                0,
                vec![format!("a token stream that fits in memory ({e})")],
                Vec::new(),
            )),
        }
    }

    /// The tokens the parser sees, or where the lexer (or the indentation idiom)
    /// rejects the input.
    pub fn parser_tokens(&self, input: &[u8]) -> Result<Vec<Token>, Rejection> {
        let lex_error = |e: LexError| {
            Rejection::at(
                input,
                e.offset,
                vec![if e.empty_stack {
                    format!(
                        "a token of lexer mode {} that pops no more modes than were pushed",
                        e.mode
                    )
                } else {
                    format!("a token of lexer mode {}", e.mode)
                }],
                Vec::new(),
            )
        };
        let Some(offside) = &self.spec.offside else {
            return self.spec.lexer.tokens(input).map_err(lex_error);
        };
        let all = self.spec.lexer.all_tokens(input).map_err(lex_error)?;
        offside
            .apply(input, all)
            .map_err(|e| Rejection::at(input, e.offset, vec![e.expected], Vec::new()))
    }

    /// The tokens the lexer gives the parser (without those of the indentation
    /// idiom: see [`Checker::parser_tokens`]).
    pub fn tokens(&self, input: &[u8]) -> Result<Vec<Token>, LexError> {
        self.spec.lexer.tokens(input)
    }
}
