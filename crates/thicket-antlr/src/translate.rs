//! From read `.g4` files to thicket's [`SpecAst`] (the scannerless byte grammar) and to
//! the regular expressions of the exact lexer.

use crate::chars::{NOTHING, case_insensitive_set, class_ranges, literal_regex, set_regex};
use crate::nfa::{Node, Program};
use crate::syntax::{CharSet, Command, Elem, G4File, GrammarKind, RuleDef, elem_span};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use thicket_grammar::ast::{AstExpr, AstExprKind, AstRule, SpecAst};
use thicket_grammar::{Diagnostic, Span, TokenMatch};

/// The rule before every token that skipped and hidden-channel tokens of the default
/// mode may fill (`_hidden.MODE` for other modes).
pub const HIDDEN: &str = "_hidden";

/// Hidden text before the end of the input: that of the default mode, which may end in
/// another mode (the input ends inside a directive's text: ANTLR's lexer emits `EOF`
/// in whatever mode it is).
pub const HIDDEN_AT_END: &str = "_hidden:end";

/// The rule added as the start when the start rule does not end in `EOF`.
pub const INPUT: &str = "_input";

/// A diagnostic about file `file` (an index into the files read).
pub type FileDiagnostic = (usize, Diagnostic);

/// One lexer rule in priority order, as the exact lexer needs it.
#[derive(Clone, Debug)]
pub struct LexRuleSpec {
    /// The rule's name (`T__n` style names for the implicit tokens of literals).
    pub name: String,
    /// The token type it produces (its name, or X of `type(X)`).
    pub token: String,
    /// Its mode (`None`: the default mode).
    pub mode: Option<String>,
    /// What the rule matches.
    pub pattern: Pattern,
    /// Whether a semantic predicate can come before its text: assumed true, but the
    /// rule loses ties with rules that have none there (see the crate docs). A
    /// predicate after the text leaves the rule its place in the order, as in ANTLR
    /// with predicates true.
    pub guarded: bool,
    /// Its commands.
    pub commands: Vec<Command>,
    /// Which file and where, for errors.
    pub at: (usize, Span),
}

/// What a lexer rule matches, as the exact lexer needs it.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// A regular rule as a regular expression over UTF-8 bytes (fragments inlined).
    Regex(String),
    /// A rule that reaches itself through its fragments: not regular, matched by
    /// [`crate::nfa::Matcher`].
    Recursive(crate::nfa::Program),
    /// A regular rule with a non-greedy loop: matched by the same automaton, which
    /// keeps ANTLR's priorities (`'"' ('\\"' | .)*? '"'` goes on past `\"` though the
    /// path reading `\` as any character could end there).
    Priority(crate::nfa::Program),
}

/// Why a lexer rule has no regular expression.
enum NotRegex {
    /// It reaches itself: see [`Pattern::Recursive`].
    Recursive,
    /// It cannot be compiled at all.
    Error(Diagnostic),
}

/// What the translation produces.
pub struct Translation {
    /// The indentation idiom, where the grammar declares it ([`crate::offside`]).
    pub offside: Option<crate::offside::Offside>,
    /// The scannerless grammar.
    pub ast: SpecAst,
    /// The start rule's name.
    pub start: String,
    /// The lexer rules, implicit literal tokens first, in priority order.
    pub lexer: Vec<LexRuleSpec>,
    /// The token-level grammar: the parser rules over token codes (see
    /// [`token_code`]), for checking a token stream exactly.
    pub token_ast: SpecAst,
    /// Token names that the parser sees, numbered for [`token_code`].
    pub token_types: Vec<String>,
    /// Warnings (actions ignored, predicates assumed true).
    pub warnings: Vec<FileDiagnostic>,
    /// The alternatives of parser rules that begin with a semantic predicate.
    pub guarded: Vec<GuardedAlternative>,
    /// The parser rules' names: phrases of the byte grammar (see
    /// `thicket_grammar::Grammar::set_phrase`), never compiled into one DFA.
    pub parser_rules: Vec<String>,
    /// The token rules (or their alternatives) of the byte grammar that are read as
    /// the exact lexer reads them: by their shortest text through a non-greedy loop,
    /// else their longest (`thicket_grammar::Grammar::set_token_match`).
    pub token_matches: Vec<TokenAlternative>,
}

/// A lexer rule of the byte grammar, or an alternative of one, that a parser scans as
/// the exact lexer matches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenAlternative {
    /// The lexer rule.
    pub rule: String,
    /// From the rule's body down to the alternative: at each step the index of the
    /// alternative taken and how many the alternation has (the body itself if empty).
    pub path: Vec<(usize, usize)>,
    /// Which end it takes.
    pub how: TokenMatch,
}

/// An alternative of a parser rule that begins with a semantic predicate
/// (`eos : ';' | {lineTerminatorAhead()}? ;`): assumed true, but valid only where the
/// target code would say so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardedAlternative {
    /// The rule (a precedence level's name for left-recursive rules).
    pub rule: String,
    /// Which of its alternatives, from 0.
    pub index: usize,
    /// How many alternatives the rule has.
    pub of: usize,
}

/// Whether `elem` begins with a semantic predicate (after any actions).
fn starts_with_predicate(elem: &Elem) -> bool {
    match elem {
        Elem::Predicate(_) => true,
        Elem::Seq(items) => items
            .iter()
            .find(|item| !matches!(item, Elem::Action(_)))
            .is_some_and(starts_with_predicate),
        _ => false,
    }
}

/// The two bytes a token type stands for in the token-level grammar.
pub fn token_code(index: usize) -> [u8; 2] {
    [(index >> 8) as u8, index as u8]
}

/// The code of the end of input in the token-level grammar: the checker ends every
/// token stream with it, so that `EOF` in a parser rule matches only there (ANTLR's
/// `statement (';' | EOF)` cannot end a statement in the middle of the input).
pub const EOF_CODE: [u8; 2] = [0xFF, 0xFE];

struct Rules<'f> {
    files: &'f [G4File],
    /// How many of `files` were given (the others are imported).
    roots: usize,
    /// Lexer rules by name, with their file.
    lexer: HashMap<&'f str, (usize, &'f RuleDef)>,
    /// Lexer rules in priority order.
    lexer_order: Vec<(usize, &'f RuleDef)>,
    parser: HashMap<&'f str, (usize, &'f RuleDef)>,
    parser_order: Vec<(usize, &'f RuleDef)>,
    case_insensitive: bool,
    /// Which file the spec's source is (spans into others are dropped).
    main_file: usize,
    /// Token names declared by `tokens {}` or produced by `type()`.
    declared: BTreeSet<String>,
    /// Parser literal -> token name (a lexer rule that is exactly that literal, or an
    /// implicit token `'lit'`).
    literal_tokens: BTreeMap<String, String>,
    /// Implicit literal tokens in order of appearance.
    implicit: Vec<(String, usize, Span)>,
    /// Where the parser first names each token that no lexer rule makes (in the
    /// spec's source; elsewhere its start), for diagnostics about that token.
    first_use: BTreeMap<String, Span>,
    /// The indentation idiom, if the grammar declares it.
    offside: Option<crate::offside::Offside>,
    warnings: Vec<FileDiagnostic>,
    errors: Vec<FileDiagnostic>,
}

/// Translates the files: the first `roots` are the grammars given (one combined
/// grammar, or a parser and a lexer grammar), the rest grammars they import. An
/// imported rule comes after the importing grammar's rules (so its lexer rules lose
/// ties with the importer's), and a rule the importer (or an earlier import) defines
/// is not taken, as ANTLR merges imports.
pub fn translate(
    files: &[G4File],
    roots: usize,
    start: Option<&str>,
) -> Result<Translation, Vec<FileDiagnostic>> {
    let main_file = files
        .iter()
        .take(roots)
        .position(|f| f.kind != GrammarKind::Lexer)
        .unwrap_or(0);
    let mut rules = Rules {
        files,
        roots,
        lexer: HashMap::new(),
        lexer_order: Vec::new(),
        parser: HashMap::new(),
        parser_order: Vec::new(),
        case_insensitive: files
            .iter()
            .take(roots)
            .filter(|f| f.kind != GrammarKind::Parser)
            .any(|f| f.option("caseInsensitive") == Some("true")),
        main_file,
        declared: BTreeSet::new(),
        literal_tokens: BTreeMap::new(),
        implicit: Vec::new(),
        first_use: BTreeMap::new(),
        offside: None,
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    rules.collect();
    rules.check_modes_and_channels();
    if !rules.errors.is_empty() {
        return Err(rules.errors);
    }
    rules.warn_actions();
    rules.recognise_offside();
    rules.map_literals();
    let start = match start {
        Some(s) => {
            if !rules.parser.contains_key(s) {
                let known: Vec<String> = rules.parser.keys().map(|k| k.to_string()).collect();
                let hint = thicket_grammar::grammar::suggest(s, known.iter())
                    .map(|k| format!("; did you mean `{k}`?"))
                    .unwrap_or_default();
                return Err(vec![(
                    main_file,
                    Diagnostic::error(
                        "start",
                        format!("the start rule `{s}` is not a parser rule of the grammar{hint}"),
                        Span::new(0, 0),
                    ),
                )]);
            }
            s.to_string()
        }
        None => match rules.parser_order.first() {
            Some((_, r)) => r.name.clone(),
            None => {
                return Err(vec![(
                    main_file,
                    Diagnostic::error(
                        "start",
                        "the grammar has no parser rule to start from",
                        Span::new(0, 0),
                    )
                    .with_note(
                        "a lexer grammar alone is not a language: give its parser grammar too",
                    ),
                )]);
            }
        },
    };
    let lexer = rules.lexer_specs();
    let (ast, root) = rules.byte_grammar(&start);
    let (token_ast, token_types) = rules.token_grammar(&root, &start);
    if !rules.errors.is_empty() {
        return Err(rules.errors);
    }
    let lexer = lexer?;
    let token_matches = rules.token_matches(&ast);
    let bodies = rules.parser_bodies();
    let guarded = bodies
        .iter()
        .flat_map(|(_, name, _, alts)| {
            alts.iter()
                .enumerate()
                .filter(|(_, alt)| starts_with_predicate(alt))
                .map(move |(i, _)| GuardedAlternative {
                    rule: name.clone(),
                    index: i,
                    of: alts.len(),
                })
        })
        .collect();
    let parser_rules = bodies.into_iter().map(|(_, name, _, _)| name).collect();
    Ok(Translation {
        offside: rules.offside,
        ast,
        start: root,
        lexer,
        token_ast,
        token_types,
        warnings: rules.warnings,
        parser_rules,
        guarded,
        token_matches,
    })
}

fn expr(kind: AstExprKind, span: Span) -> AstExpr {
    AstExpr { kind, span }
}

fn seq(items: Vec<AstExpr>, span: Span) -> AstExpr {
    if items.len() == 1 {
        items.into_iter().next().expect("one item")
    } else {
        expr(AstExprKind::Seq(items), span)
    }
}

fn alt(items: Vec<AstExpr>, span: Span) -> AstExpr {
    if items.len() == 1 {
        items.into_iter().next().expect("one item")
    } else {
        expr(AstExprKind::Alt(items), span)
    }
}

impl<'f> Rules<'f> {
    fn span(&self, file: usize, span: Span) -> Span {
        if file == self.main_file {
            span
        } else {
            Span::new(0, 0)
        }
    }

    fn collect(&mut self) {
        let files = self.files;
        for (fi, file) in files.iter().enumerate() {
            for (name, _) in &file.tokens {
                self.declared.insert(name.clone());
            }
            for rule in &file.rules {
                let (map, order) = if rule.is_lexer() {
                    (&mut self.lexer, &mut self.lexer_order)
                } else {
                    (&mut self.parser, &mut self.parser_order)
                };
                if let Some(&(pf, prev)) = map.get(rule.name.as_str()) {
                    if fi >= self.roots {
                        // Defined by the importing grammar: the import's rule is not taken.
                        continue;
                    }
                    let mut d = Diagnostic::error(
                        "duplicate-rule",
                        format!("rule `{}` is defined twice", rule.name),
                        rule.span,
                    );
                    if pf == fi {
                        d = d.with_secondary(prev.span, "first defined here");
                    }
                    self.errors.push((fi, d));
                    continue;
                }
                map.insert(&rule.name, (fi, rule));
                order.push((fi, rule));
                for (_, commands) in &rule.alts {
                    for c in commands {
                        if let Command::Type(t) = c {
                            self.declared.insert(t.clone());
                        }
                    }
                }
            }
        }
        // Every name used must be defined.
        let all: Vec<(usize, &RuleDef)> = self
            .lexer_order
            .iter()
            .chain(&self.parser_order)
            .copied()
            .collect();
        for (fi, rule) in all {
            for (elem, _) in &rule.alts {
                self.check_refs(fi, rule, elem);
            }
        }
    }

    /// Every mode a `pushMode`/`mode` command names and every channel a `channel`
    /// command names must be declared (ANTLR refuses the grammar otherwise).
    fn check_modes_and_channels(&mut self) {
        let files = self.files;
        let modes: BTreeSet<&str> = files
            .iter()
            .flat_map(|f| f.modes.iter().map(|(m, _)| m.as_str()))
            .chain([crate::lexer::DEFAULT_MODE])
            .collect();
        let channels: BTreeSet<&str> = files
            .iter()
            .flat_map(|f| f.channels.iter().map(|(c, _)| c.as_str()))
            .chain(["HIDDEN", "DEFAULT_TOKEN_CHANNEL"])
            .collect();
        for (fi, file) in files.iter().enumerate() {
            for (mode, span) in &file.mode_refs {
                if !modes.contains(mode.as_str()) {
                    let mut d = Diagnostic::error(
                        "g4-mode",
                        format!("`{mode}` is not a recognized mode name"),
                        *span,
                    );
                    let declared: Vec<String> = modes.iter().map(|m| m.to_string()).collect();
                    d = match thicket_grammar::grammar::suggest(mode, declared.iter()) {
                        Some(k) => d.with_note(format!("did you mean `{k}`?")),
                        None => d.with_note(format!("declared modes: {}", declared.join(", "))),
                    };
                    self.errors.push((fi, d));
                }
            }
            for (written, span) in &file.template_commands {
                self.warnings.push((
                    fi,
                    Diagnostic::warning(
                        "g4-target-command",
                        format!("`{written}` read as the lexer command it names"),
                        *span,
                    )
                    .with_note("ANTLR knows commands by their lower-case names and emits this spelling as target code, which sets the same state in the Java and C# targets and fails in the Python one"),
                ));
            }
            for (channel, span) in &file.channel_refs {
                if !channels.contains(channel.as_str()) {
                    self.errors.push((
                        fi,
                        Diagnostic::error(
                            "g4-channel",
                            format!("`{channel}` is not a recognized channel name"),
                            *span,
                        )
                        .with_note(
                            "declare it with `channels { NAME }`, or use HIDDEN or a number",
                        ),
                    ));
                }
            }
        }
    }

    fn check_refs(&mut self, fi: usize, rule: &RuleDef, elem: &Elem) {
        match elem {
            Elem::Alt(items) | Elem::Seq(items) => {
                for item in items {
                    self.check_refs(fi, rule, item);
                }
            }
            Elem::Repeat { item, .. } | Elem::NotTokens(item, _) => self.check_refs(fi, rule, item),
            Elem::Ref(name, span) => {
                let lexer_ref = name.starts_with(|c: char| c.is_ascii_uppercase());
                let ok = if rule.is_lexer() {
                    self.lexer.contains_key(name.as_str())
                } else if lexer_ref {
                    self.lexer
                        .get(name.as_str())
                        .is_some_and(|(_, r)| !r.fragment)
                        || self.declared.contains(name)
                } else {
                    self.parser.contains_key(name.as_str())
                };
                let fragment = self
                    .lexer
                    .get(name.as_str())
                    .is_some_and(|(_, r)| r.fragment);
                let lexer_given = !(self.roots == 1 && self.files[0].kind == GrammarKind::Parser);
                if !rule.is_lexer() && lexer_ref && !self.lexer.contains_key(name.as_str()) {
                    let at = self.span(fi, *span);
                    self.first_use.entry(name.clone()).or_insert(at);
                }
                if !ok && !rule.is_lexer() && lexer_ref && lexer_given {
                    // ANTLR defines a token the parser names and no lexer rule makes (a
                    // fragment makes none either): "implicit definition of token", a
                    // warning. Target code may emit it; without target code no input
                    // has it.
                    let why = if fragment {
                        "is a fragment, which makes no token"
                    } else {
                        "has no lexer rule"
                    };
                    self.warnings.push((
                        fi,
                        Diagnostic::warning(
                            "g4-implicit-token",
                            format!(
                                "token `{name}` {why}: ANTLR defines it implicitly, and no \
                                 input has it (only target code could emit it)"
                            ),
                            *span,
                        ),
                    ));
                    self.declared.insert(name.clone());
                    return;
                }
                if !ok {
                    let (what, known): (&str, Vec<String>) = if rule.is_lexer() || lexer_ref {
                        (
                            "token or lexer rule",
                            self.lexer.keys().map(|k| k.to_string()).collect(),
                        )
                    } else {
                        (
                            "parser rule",
                            self.parser.keys().map(|k| k.to_string()).collect(),
                        )
                    };
                    let mut d = Diagnostic::error(
                        "undefined-rule",
                        format!("undefined {what} `{name}`"),
                        *span,
                    );
                    if let Some(k) = thicket_grammar::grammar::suggest(name, known.iter()) {
                        d = d.with_note(format!("did you mean `{k}`?"));
                    }
                    if !rule.is_lexer() && lexer_ref && fragment {
                        d = d.with_note(
                            "fragment rules are parts of tokens; the parser cannot use them",
                        );
                    }
                    if !lexer_given {
                        d = d.with_note(
                            "this is a parser grammar: give its lexer grammar too (--lexer FILE)",
                        );
                    }
                    self.errors.push((fi, d));
                }
            }
            _ => {}
        }
    }

    /// Recognises the indentation idiom ([`crate::offside`]): `INDENT` and `DEDENT`
    /// declared in `tokens {}` and made by no rule, and a lexer rule `NEWLINE` of the
    /// default mode; the parser's line end is `LINE_BREAK` where it is declared the
    /// same way, else `NEWLINE` (which must then reach the parser). Reported as a
    /// warning where `INDENT` is declared.
    fn recognise_offside(&mut self) {
        let declared_only = |name: &str| {
            if self.lexer.contains_key(name) || !self.producers(name).is_empty() {
                return None;
            }
            self.files.iter().enumerate().find_map(|(fi, f)| {
                f.tokens
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, at)| (fi, *at))
            })
        };
        let (Some((fi, at)), Some(_)) = (declared_only("INDENT"), declared_only("DEDENT")) else {
            return;
        };
        let line_end = "NEWLINE";
        if !self
            .lexer
            .get(line_end)
            .is_some_and(|(_, r)| !r.fragment && r.mode.is_none())
        {
            return;
        }
        let logical = if declared_only("LINE_BREAK").is_some() {
            "LINE_BREAK"
        } else if !self.producers(line_end).is_empty() {
            line_end
        } else {
            return;
        };
        self.warnings.push((
            fi,
            Diagnostic::warning(
                "g4-indentation",
                format!(
                    "INDENT and DEDENT are made from the indentation of lines, as Python's \
                     tokenizer makes them (no lexer rule makes them: the grammar's target \
                     code would); {logical} ends each logical line"
                ),
                at,
            )
            .with_note(
                "line ends inside brackets and blank or comment-only lines are ignored, a \
                 tab counts to the next multiple of 8 columns, and the end of the input \
                 closes every block; the byte grammar does not check indentation",
            ),
        ));
        self.offside = Some(crate::offside::Offside {
            indent: "INDENT".into(),
            dedent: "DEDENT".into(),
            line_end: line_end.into(),
            logical_line_end: logical.into(),
        });
    }

    /// Reports every piece of target code and how it is treated.
    fn warn_actions(&mut self) {
        let files = self.files;
        for (fi, file) in files.iter().enumerate() {
            for &span in &file.named_actions {
                self.warnings.push((
                    fi,
                    Diagnostic::warning(
                        "g4-action",
                        "named action ignored: target code cannot run",
                        span,
                    ),
                ));
            }
            for rule in &file.rules {
                for &span in &rule.actions {
                    self.warnings.push((
                        fi,
                        Diagnostic::warning(
                            "g4-action",
                            format!("target code of rule `{}` ignored (arguments, returns, @init, catch)", rule.name),
                            span,
                        ),
                    ));
                }
                for (elem, _) in &rule.alts {
                    self.warn_in(fi, elem);
                }
            }
        }
    }

    fn warn_in(&mut self, fi: usize, elem: &Elem) {
        match elem {
            Elem::Alt(items) | Elem::Seq(items) => {
                for item in items {
                    self.warn_in(fi, item);
                }
            }
            Elem::Repeat { item, .. } | Elem::NotTokens(item, _) => self.warn_in(fi, item),
            Elem::Action(span) => self.warnings.push((
                fi,
                Diagnostic::warning("g4-action", "action ignored: target code cannot run", *span)
                    .with_label_message("ignored"),
            )),
            Elem::Predicate(span) => self.warnings.push((
                fi,
                Diagnostic::warning(
                    "g4-predicate",
                    "semantic predicate assumed true: target code cannot run",
                    *span,
                )
                .with_label_message("assumed true")
                .with_note("inputs the predicate would reject are accepted and may be generated; in a lexer rule, a predicate before the rule's text makes it lose ties with rules without one"),
            )),
            _ => {}
        }
    }

    /// The lexer rule a parser literal stands for: one whose only alternative is exactly
    /// that literal, or an implicit token (combined grammars only).
    fn map_literals(&mut self) {
        let mut exact: BTreeMap<String, String> = BTreeMap::new();
        for &(_, rule) in &self.lexer_order {
            if rule.fragment || rule.alts.len() != 1 {
                continue;
            }
            // ANTLR takes a rule that is one literal, with actions around it, as the
            // literal's token.
            let (body, commands) = &rule.alts[0];
            let literal = match body {
                Elem::Seq(items) => {
                    let mut rest = items.iter().filter(|e| !matches!(e, Elem::Action(_)));
                    match (rest.next(), rest.next()) {
                        (Some(only), None) => Some(only),
                        _ => None,
                    }
                }
                other => Some(other),
            };
            if let Some(Elem::Literal(text, _)) = literal
                && !commands
                    .iter()
                    .any(|c| matches!(c, Command::Skip | Command::More | Command::Channel(_)))
            {
                let token = commands
                    .iter()
                    .find_map(|c| match c {
                        Command::Type(t) => Some(t.clone()),
                        _ => None,
                    })
                    .unwrap_or_else(|| rule.name.clone());
                exact.entry(text.clone()).or_insert(token);
            }
        }
        let parser_rules = self.parser_order.clone();
        let split = self.files[..self.roots]
            .iter()
            .any(|f| f.kind == GrammarKind::Parser);
        for (fi, rule) in parser_rules {
            for (elem, _) in &rule.alts {
                self.literals_in(fi, elem, &exact, split);
            }
        }
    }

    fn literals_in(
        &mut self,
        fi: usize,
        elem: &Elem,
        exact: &BTreeMap<String, String>,
        split: bool,
    ) {
        match elem {
            Elem::Alt(items) | Elem::Seq(items) => {
                for item in items {
                    self.literals_in(fi, item, exact, split);
                }
            }
            Elem::Repeat { item, .. } | Elem::NotTokens(item, _) => {
                self.literals_in(fi, item, exact, split)
            }
            Elem::Literal(text, span) => {
                if self.literal_tokens.contains_key(text) {
                    return;
                }
                if let Some(token) = exact.get(text) {
                    self.literal_tokens.insert(text.clone(), token.clone());
                } else if split {
                    self.errors.push((
                        fi,
                        Diagnostic::error(
                            "g4-literal",
                            format!("the literal {text:?} is no token of the lexer grammar"),
                            *span,
                        )
                        .with_note("in a parser grammar every literal must be the whole of some lexer rule"),
                    ));
                } else {
                    let name = format!("'{}'", text);
                    self.literal_tokens.insert(text.clone(), name.clone());
                    self.implicit.push((text.clone(), fi, *span));
                }
            }
            _ => {}
        }
    }

    // ----- the exact lexer -----

    fn lexer_specs(&self) -> Result<Vec<LexRuleSpec>, Vec<FileDiagnostic>> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for (text, fi, span) in &self.implicit {
            out.push(LexRuleSpec {
                name: format!("'{text}'"),
                token: format!("'{text}'"),
                mode: None,
                pattern: Pattern::Regex(literal_regex(text, self.case_insensitive)),
                guarded: false,
                commands: Vec::new(),
                at: (*fi, *span),
            });
        }
        for &(fi, rule) in &self.lexer_order {
            if rule.fragment {
                continue;
            }
            let ci = self.ci(rule);
            // An alternative with a predicate on some of its paths only (Python's
            // `NEWLINE : ({atStartOfInput()}? SPACES | '\n' SPACES?)`) is matched in
            // two parts: first its paths without a predicate, which do not lose ties,
            // then the whole, which does (see `LexRuleSpec::guarded`).
            let parts = rule.alts.iter().flat_map(|(elem, commands)| {
                let unguarded = has_predicate(elem)
                    .then(|| unguarded_part(elem))
                    .flatten()
                    .map(|part| (std::borrow::Cow::Owned(part), commands, false));
                unguarded.into_iter().chain([(
                    std::borrow::Cow::Borrowed(elem),
                    commands,
                    predicate_before_text(elem),
                )])
            });
            for (elem, commands, guarded) in parts {
                let elem: &Elem = &elem;
                let whole = match self.lexer_pattern(elem, ci, &rule.name) {
                    Ok(whole) => whole,
                    Err(d) => {
                        errors.push((fi, d));
                        continue;
                    }
                };
                // ANTLR stops at the first match only on the paths through a
                // non-greedy loop, and only for paths of lower priority than the one
                // that ends: `'/*' .*? '*/' | '//' ~[\n]*` still takes the whole line
                // comment, and `'"' ('\\"' | .)*? '"'` goes on past `\"`. The
                // automaton that keeps those priorities matches such an alternative.
                // So does one reading `EOF`, which the automaton matches only at the
                // end of the input, where the regex could only read it as nothing
                // (`'.' EOF` would make a lone `.` this token anywhere).
                let pattern = match whole {
                    (Pattern::Regex(_), non_greedy)
                        if non_greedy || self.reads_eof(elem, &mut Vec::new()) =>
                    {
                        match self.priority_program(elem, ci) {
                            Ok(program) => Pattern::Priority(program),
                            Err(d) => {
                                errors.push((fi, d));
                                continue;
                            }
                        }
                    }
                    (pattern, _) => pattern,
                };
                {
                    out.push(LexRuleSpec {
                        name: rule.name.clone(),
                        token: commands
                            .iter()
                            .find_map(|c| match c {
                                Command::Type(t) => Some(t.clone()),
                                _ => None,
                            })
                            .unwrap_or_else(|| rule.name.clone()),
                        mode: rule.mode.clone(),
                        pattern,
                        guarded,
                        commands: commands.clone(),
                        at: (fi, rule.span),
                    });
                }
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// How the byte grammar's token rules end, as the exact lexer ends them: an
    /// alternative through a non-greedy loop at its shortest text (each alternative
    /// inside it apart; none where the lexer's priorities can take it further, see
    /// [`ends_past_shortest`]), the others at their
    /// longest (the lexer takes at least a rule's own longest match, so a token that
    /// ends earlier is never the lexer's). Found in the byte grammar's rule bodies, which
    /// `lexer_expr` builds with the same structure (groups of one alternative
    /// collapsed). Not the longest for a rule with a predicate (which may cut the match
    /// short) or one that other lexer rules use (inside them it may end earlier), nor
    /// for recursive rules.
    fn token_matches(&self, ast: &SpecAst) -> Vec<TokenAlternative> {
        let mut inside_others: HashSet<&str> = HashSet::new();
        for &(_, rule) in self.lexer.values() {
            for (elem, _) in &rule.alts {
                lexer_refs(elem, &mut inside_others);
            }
        }
        let mut out = Vec::new();
        for ast_rule in &ast.rules {
            let Some(&(_, rule)) = self.lexer.get(ast_rule.name.as_str()) else {
                continue;
            };
            if rule.fragment {
                continue;
            }
            let longest = !inside_others.contains(rule.name.as_str())
                && !rule.alts.iter().any(|(e, _)| has_predicate(e));
            let ci = self.ci(rule);
            let alts: Vec<std::borrow::Cow<'_, Elem>> = rule
                .alts
                .iter()
                .map(|(e, _)| end_of_input_apart(e))
                .collect();
            let of = alts.len();
            let patterns: Vec<_> = alts
                .iter()
                .map(|elem| self.lexer_pattern(elem, ci, &rule.name).ok())
                .collect();
            let mark = |path: Vec<(usize, usize)>, how| TokenAlternative {
                rule: rule.name.clone(),
                path,
                how,
            };
            if longest
                && patterns
                    .iter()
                    .all(|p| matches!(p, Some((Pattern::Regex(_), false))))
            {
                out.push(mark(Vec::new(), TokenMatch::Longest));
                continue;
            }
            for (i, (elem, pattern)) in alts.iter().zip(&patterns).enumerate() {
                let base: Vec<(usize, usize)> = if of > 1 { vec![(i, of)] } else { Vec::new() };
                match pattern {
                    Some((Pattern::Regex(_), false)) if longest => {
                        out.push(mark(base, TokenMatch::Longest));
                    }
                    Some((Pattern::Regex(_), true)) => {
                        for (piece, path) in alternative_paths(elem) {
                            let how = match self.lexer_pattern(piece, ci, &rule.name) {
                                // A piece ended by the end of the input runs to it:
                                // its longest match, which goes at least as far.
                                Ok((Pattern::Regex(_), _))
                                    if longest && piece_ends_in_eof(piece) =>
                                {
                                    TokenMatch::Longest
                                }
                                // Where the lexer's priorities can take it further,
                                // the piece is left its whole language (the exact
                                // reading decides).
                                Ok((Pattern::Regex(_), true))
                                    if ends_past_shortest(&self.inlined(piece, MAX_INLINED)) =>
                                {
                                    continue;
                                }
                                Ok((Pattern::Regex(_), true)) => TokenMatch::Shortest,
                                Ok((Pattern::Regex(_), false)) if longest => TokenMatch::Longest,
                                _ => continue,
                            };
                            out.push(mark(base.iter().copied().chain(path).collect(), how));
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// What the exact lexer matches for `elem` (an alternative of lexer rule `rule`),
    /// and whether it holds a non-greedy loop.
    fn lexer_pattern(
        &self,
        elem: &Elem,
        ci: bool,
        rule: &'f str,
    ) -> Result<(Pattern, bool), Diagnostic> {
        let mut non_greedy = false;
        let mut stack = vec![rule];
        match self.regex_of(elem, ci, &mut stack, &mut non_greedy) {
            Ok(regex) => Ok((Pattern::Regex(regex), non_greedy)),
            Err(NotRegex::Recursive) => {
                let mut procs = vec![Node::Seq(Vec::new())];
                let mut index = HashMap::new();
                procs[0] = self.program_node(elem, ci, &mut procs, &mut index, &mut non_greedy)?;
                // The automaton with a stack stops non-greedy loops itself, as ANTLR
                // does: the lexer takes its longest end, and the rule is not split.
                Ok((Pattern::Recursive(Program { procs }), false))
            }
            Err(NotRegex::Error(d)) => Err(d),
        }
    }

    /// `elem` with the lexer rules it names written in place, `depth` rules deep (a
    /// regular rule's references end; a name left as it is past that depth).
    fn inlined(&self, elem: &Elem, depth: usize) -> Elem {
        match elem {
            Elem::Alt(items) => Elem::Alt(items.iter().map(|e| self.inlined(e, depth)).collect()),
            Elem::Seq(items) => Elem::Seq(items.iter().map(|e| self.inlined(e, depth)).collect()),
            Elem::Repeat {
                item,
                min,
                max,
                greedy,
            } => Elem::Repeat {
                item: Box::new(self.inlined(item, depth)),
                min: *min,
                max: *max,
                greedy: *greedy,
            },
            Elem::Ref(name, _) if depth > 0 => match self.lexer.get(name.as_str()) {
                Some(&(_, rule)) => Elem::Alt(
                    rule.alts
                        .iter()
                        .map(|(e, _)| self.inlined(e, depth - 1))
                        .collect(),
                ),
                None => elem.clone(),
            },
            _ => elem.clone(),
        }
    }

    /// The automaton program of `elem` (an alternative of a lexer rule).
    fn priority_program(&self, elem: &Elem, ci: bool) -> Result<Program, Diagnostic> {
        let mut procs = vec![Node::Seq(Vec::new())];
        let mut index = HashMap::new();
        let mut non_greedy = false;
        procs[0] = self.program_node(elem, ci, &mut procs, &mut index, &mut non_greedy)?;
        Ok(Program { procs })
    }

    /// Whether `elem` reads `EOF`, itself or through the lexer rules it names (`seen`:
    /// the rules on the way, so that a recursive rule ends the walk).
    fn reads_eof(&self, elem: &Elem, seen: &mut Vec<&'f str>) -> bool {
        match elem {
            Elem::Eof(_) => true,
            Elem::Alt(items) | Elem::Seq(items) => items.iter().any(|e| self.reads_eof(e, seen)),
            Elem::Repeat { item, .. } => self.reads_eof(item, seen),
            Elem::Ref(name, _) => match self.lexer.get(name.as_str()) {
                Some(&(_, rule)) if !seen.contains(&rule.name.as_str()) => {
                    seen.push(&rule.name);
                    rule.alts.iter().any(|(e, _)| self.reads_eof(e, seen))
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether lexer rule `rule` is case-insensitive: its own option, else the
    /// grammar's.
    fn ci(&self, rule: &RuleDef) -> bool {
        rule.case_insensitive.unwrap_or(self.case_insensitive)
    }

    /// A set as a regex class, with the case-insensitive reading of `ci`.
    fn class(set: &CharSet, ci: bool) -> String {
        if ci {
            set_regex(&case_insensitive_set(set))
        } else {
            set_regex(set)
        }
    }

    fn regex_of(
        &self,
        elem: &Elem,
        ci: bool,
        stack: &mut Vec<&'f str>,
        non_greedy: &mut bool,
    ) -> Result<String, NotRegex> {
        Ok(match elem {
            Elem::Alt(items) => {
                let parts: Result<Vec<_>, _> = items
                    .iter()
                    .map(|i| self.regex_of(i, ci, stack, non_greedy))
                    .collect();
                format!("(?:{})", parts?.join("|"))
            }
            Elem::Seq(items) => {
                let parts: Result<Vec<_>, _> = items
                    .iter()
                    .map(|i| self.regex_of(i, ci, stack, non_greedy))
                    .collect();
                format!("(?:{})", parts?.join(""))
            }
            Elem::Repeat {
                item,
                min,
                max,
                greedy,
            } => {
                *non_greedy |= !greedy;
                let q = match (min, max) {
                    (0, Some(1)) => "?",
                    (0, _) => "*",
                    _ => "+",
                };
                format!("(?:{}){q}", self.regex_of(item, ci, stack, non_greedy)?)
            }
            Elem::Ref(name, span) => {
                let Some(&(_, rule)) = self.lexer.get(name.as_str()) else {
                    return Err(NotRegex::Error(Diagnostic::error(
                        "undefined-rule",
                        format!("undefined lexer rule `{name}`"),
                        *span,
                    )));
                };
                if stack.contains(&rule.name.as_str()) {
                    return Err(NotRegex::Recursive);
                }
                stack.push(&rule.name);
                let inner = self.ci(rule);
                let parts: Result<Vec<_>, _> = rule
                    .alts
                    .iter()
                    .map(|(e, _)| self.regex_of(e, inner, stack, non_greedy))
                    .collect();
                stack.pop();
                format!("(?:{})", parts?.join("|"))
            }
            Elem::Literal(text, _) => literal_regex(text, ci),
            Elem::Set(set, _) => Self::class(set, ci),
            Elem::Any(_) => "(?s:.)".into(),
            // EOF in a lexer rule, actions and predicates match the empty string.
            Elem::Eof(_) | Elem::Action(_) | Elem::Predicate(_) => String::new(),
            Elem::NotTokens(_, span) => {
                return Err(NotRegex::Error(Diagnostic::error(
                    "g4-set",
                    "`~` of tokens in a lexer rule",
                    *span,
                )));
            }
        })
    }

    /// A recursive lexer rule's alternative as a [`Program`] node; the rules it
    /// references become procedures of `procs` (numbered in `index`).
    fn program_node(
        &self,
        elem: &Elem,
        ci: bool,
        procs: &mut Vec<Node>,
        index: &mut HashMap<&'f str, usize>,
        non_greedy: &mut bool,
    ) -> Result<Node, Diagnostic> {
        let class = |regex: &str, span: Span| {
            class_ranges(regex)
                .map(Node::Class)
                .map_err(|e| Diagnostic::error("g4-set", format!("cannot read the set: {e}"), span))
        };
        Ok(match elem {
            Elem::Alt(items) => Node::Alt(
                items
                    .iter()
                    .map(|i| self.program_node(i, ci, procs, index, non_greedy))
                    .collect::<Result<_, _>>()?,
            ),
            Elem::Seq(items) => Node::Seq(
                items
                    .iter()
                    .map(|i| self.program_node(i, ci, procs, index, non_greedy))
                    .collect::<Result<_, _>>()?,
            ),
            Elem::Repeat {
                item,
                min,
                max,
                greedy,
            } => {
                *non_greedy |= !greedy;
                Node::Repeat {
                    item: Box::new(self.program_node(item, ci, procs, index, non_greedy)?),
                    min: *min,
                    max: *max,
                    greedy: *greedy,
                }
            }
            Elem::Ref(name, span) => {
                let Some(&(_, rule)) = self.lexer.get(name.as_str()) else {
                    return Err(Diagnostic::error(
                        "undefined-rule",
                        format!("undefined lexer rule `{name}`"),
                        *span,
                    ));
                };
                if let Some(&i) = index.get(rule.name.as_str()) {
                    return Ok(Node::Call(i));
                }
                let i = procs.len();
                procs.push(Node::Seq(Vec::new()));
                index.insert(&rule.name, i);
                let inner = self.ci(rule);
                let body = Node::Alt(
                    rule.alts
                        .iter()
                        .map(|(e, _)| self.program_node(e, inner, procs, index, non_greedy))
                        .collect::<Result<_, _>>()?,
                );
                procs[i] = body;
                Node::Call(i)
            }
            Elem::Literal(text, span) => Node::Seq(
                text.chars()
                    .map(|c| {
                        let one = CharSet {
                            ranges: vec![(c as u32, c as u32)],
                            ..CharSet::default()
                        };
                        class(&Self::class(&one, ci), *span)
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Elem::Set(set, span) => class(&Self::class(set, ci), *span)?,
            Elem::Any(_) => Node::Class(vec![(0, 0x10FFFF)]),
            Elem::Eof(_) => Node::End,
            Elem::Action(_) | Elem::Predicate(_) => Node::Seq(Vec::new()),
            Elem::NotTokens(_, span) => {
                return Err(Diagnostic::error(
                    "g4-set",
                    "`~` of tokens in a lexer rule",
                    *span,
                ));
            }
        })
    }

    /// The parser rules as the grammars get them: each with its file, name, where it
    /// is written and its alternatives; a left-recursive rule as its precedence
    /// levels ([`crate::leftrec`]).
    fn parser_bodies(&self) -> Vec<(usize, String, Span, Vec<Elem>)> {
        let mut out = Vec::new();
        for &(fi, rule) in &self.parser_order {
            if crate::leftrec::is_left_recursive(rule) {
                for level in crate::leftrec::rewrite(rule) {
                    out.push((fi, level.name, rule.span, level.alts));
                }
            } else {
                let alts = rule.alts.iter().map(|(e, _)| e.clone()).collect();
                out.push((fi, rule.name.clone(), rule.span, alts));
            }
        }
        out
    }

    // ----- the byte grammar -----

    /// The lexer rules producing token `token`: itself (unless skipped, `more` or
    /// retyped) and those with `type(token)`.
    fn producers(&self, token: &str) -> Vec<(usize, &'f RuleDef)> {
        self.lexer_order
            .iter()
            .filter(|(_, r)| {
                !r.fragment
                    && r.alts.iter().any(|(_, commands)| {
                        let retyped = commands.iter().find_map(|c| match c {
                            Command::Type(t) => Some(t.as_str()),
                            _ => None,
                        });
                        let dropped = commands.iter().any(|c| {
                            matches!(c, Command::Skip | Command::More) || c.is_hidden_channel()
                        });
                        !dropped && retyped.unwrap_or(&r.name) == token
                    })
            })
            .copied()
            .collect()
    }

    /// Names of skipped and hidden-channel rules, by mode. A rule that an earlier rule
    /// of its mode names as a whole alternative is left out: the earlier rule matches
    /// each of its texts as long and wins them (Hive's `QUERY_HINT : SHOW_HINT |
    /// HIDDEN_HINT` before the hidden comment rules makes every comment a token the
    /// parser sees), so its text is never hidden.
    fn hidden_rules(&self) -> BTreeMap<Option<String>, Vec<&'f str>> {
        let mut out: BTreeMap<Option<String>, Vec<&'f str>> = BTreeMap::new();
        for (at, &(_, r)) in self.lexer_order.iter().enumerate() {
            let hidden = r.alts.iter().any(|(_, commands)| {
                commands
                    .iter()
                    .any(|c| *c == Command::Skip || c.is_hidden_channel())
            });
            // A catch-all `.` rule off the default channel is error recovery (css3's
            // `UnexpectedCharacter: . -> channel(ERROR)`): as hidden text it would let
            // anything stand between any two tokens, so only the exact lexer keeps it.
            // A skipped one is the language's comments (brainfuck's `WS : . -> skip`:
            // every other character), read as the characters no earlier rule takes.
            let catch_all = r.alts.iter().all(|(e, _)| matches!(e, Elem::Any(_)));
            // Asked of hidden rules only: the earlier rules of grammars with thousands
            // of keywords are many.
            let won_before = || {
                self.lexer_order[..at].iter().any(|&(_, earlier)| {
                    !earlier.fragment
                        && earlier.mode == r.mode
                        && earlier.alts.iter().any(|(e, _)| names_only(e, &r.name))
                })
            };
            if hidden
                && !r.fragment
                && (!catch_all || self.catch_all_characters(r).is_some())
                && !won_before()
            {
                out.entry(r.mode.clone()).or_default().push(&r.name);
            }
        }
        out
    }

    /// For a catch-all rule that skips its character or leaves it to the next token
    /// (`WS : . -> skip`, `CONTENT : . -> more`, every alternative `.`), the
    /// characters it can take, as a regex class: those that no earlier rule of its mode
    /// matches as a whole token (an earlier rule wins a tie, so `+` is always `PLUS`,
    /// and pegen's `}` always ends an action, never continues it as `CONTENT`).
    /// Characters that only start a longer token of another rule stay in: the byte
    /// grammar may accept more than ANTLR, never less. `None` for other rules.
    fn catch_all_characters(&self, rule: &RuleDef) -> Option<String> {
        let catch_all = rule.alts.iter().all(|(e, commands)| {
            matches!(e, Elem::Any(_))
                && (commands.contains(&Command::Skip) || commands.contains(&Command::More))
        });
        if !catch_all || rule.fragment {
            return None;
        }
        let mut taken = regex_syntax::hir::ClassUnicode::empty();
        // The implicit tokens of a combined grammar's literals come before every rule.
        if rule.mode.is_none() {
            for (text, _, _) in &self.implicit {
                let mut chars = text.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    taken.push(regex_syntax::hir::ClassUnicodeRange::new(c, c));
                }
            }
        }
        for &(_, earlier) in &self.lexer_order {
            if std::ptr::eq(earlier, rule) {
                break;
            }
            if earlier.fragment || earlier.mode != rule.mode {
                continue;
            }
            for (elem, _) in &earlier.alts {
                let ci = self.ci(earlier);
                let one = match self.lexer_pattern(elem, ci, &earlier.name) {
                    Ok((Pattern::Regex(regex), _)) => regex_syntax::ParserBuilder::new()
                        .nest_limit(1000)
                        .build()
                        .parse(&regex)
                        .ok()
                        .map(|hir| one_character_texts(&hir)),
                    _ => None,
                };
                // A rule not read here (recursive) may take any character.
                taken.union(&one?);
            }
        }
        taken.negate();
        let ranges: String = taken
            .ranges()
            .iter()
            .map(|r| format!("\\x{{{:X}}}-\\x{{{:X}}}", r.start() as u32, r.end() as u32))
            .collect();
        (!ranges.is_empty()).then(|| format!("[{ranges}]"))
    }

    /// Rules whose text continues the next token (`more`) and that enter `mode`, and
    /// the `more` rules of `mode` itself.
    fn more_prefix(&self, mode: &Option<String>) -> (Vec<&'f str>, Vec<&'f str>) {
        let Some(m) = mode else {
            return (Vec::new(), Vec::new());
        };
        let mut enter = Vec::new();
        let mut inside = Vec::new();
        for &(_, r) in &self.lexer_order {
            for (_, commands) in &r.alts {
                if !commands.contains(&Command::More) {
                    continue;
                }
                if r.mode.as_ref() == Some(m) {
                    inside.push(r.name.as_str());
                } else if commands
                    .iter()
                    .any(|c| matches!(c, Command::PushMode(x) | Command::Mode(x) if x == m))
                {
                    enter.push(r.name.as_str());
                }
            }
        }
        (enter, inside)
    }

    /// Hidden text that changes the lexer's mode, as ANTLR lexes it: for each hidden
    /// rule of a mode that moves the lexer elsewhere, the rule (named in the result,
    /// keyed by mode and rule) of the hidden text that follows until the lexer is back
    /// in that mode with the mode stack it had. A preprocessor line (`#` pushes a
    /// directive mode whose line end pops it) is the simple case; the mode stack is
    /// followed whole, so that rules with several mode commands are read too
    /// (Verilog's `` `ifdef X `` pushes a mode whose skipped branch runs to an
    /// `` `endif `` that pops three frames, `` `else `` pops one and switches). This is
    /// the classic reading of a pushdown automaton as a grammar: a rule per mode,
    /// stack of modes pushed inside the excursion, and way it ends ([`ExcursionEnd`]).
    /// In an excursion, a mode's `more` rules are hidden text too (their text begins
    /// the next token, which is hidden there). An entry whose way back cannot be made
    /// of hidden text, or that pops a frame it did not push, stays as it was: its one
    /// token. Rules whose alternatives differ in their mode commands are not followed.
    #[allow(clippy::type_complexity)]
    fn excursions(
        &self,
        hidden: &BTreeMap<Option<String>, Vec<&'f str>>,
        used_lexer: &mut BTreeSet<&'f str>,
    ) -> Excursions<'f> {
        /// Where an excursion is: its mode, the modes pushed since it began (the last
        /// one on top), and how it must end.
        type Key = (Option<String>, Vec<Option<String>>, ExcursionEnd);
        /// A symbol of a production: a hidden rule, or another excursion.
        #[derive(Clone)]
        enum Sym<'f> {
            Token(&'f str),
            Rest(Key),
        }
        /// Modes pushed within one excursion beyond which it is not followed (a guard:
        /// a grammar whose rules push more modes than they pop has no end).
        const MAX_PUSHED: usize = 8;
        let commands_of = |name: &str| self.lexer.get(name).and_then(|&(_, r)| mode_commands(r));
        // The rules an excursion reads in each mode, each with whether it is `more`.
        let mut inside: BTreeMap<Option<String>, Vec<(&'f str, bool)>> = hidden
            .iter()
            .map(|(m, names)| (m.clone(), names.iter().map(|&n| (n, false)).collect()))
            .collect();
        for &(_, r) in &self.lexer_order {
            if !r.fragment && r.alts.iter().all(|(_, c)| c.contains(&Command::More)) {
                inside
                    .entry(r.mode.clone())
                    .or_default()
                    .push((r.name.as_str(), true));
            }
        }
        // What a rule that pops a frame leaves to the mode below: the commands after
        // its `popMode` (Verilog's `popMode, popMode, popMode` leaves two pops).
        let mut left_below: BTreeSet<Vec<ModeCommand>> = BTreeSet::new();
        for names in inside.values() {
            for commands in names.iter().filter_map(|&(n, _)| commands_of(n)) {
                for (i, c) in commands.iter().enumerate() {
                    if *c == ModeCommand::Pop {
                        left_below.insert(commands[i + 1..].to_vec());
                    }
                }
            }
        }
        let mut productions: BTreeMap<Key, Vec<Vec<Sym<'f>>>> = BTreeMap::new();
        let mut entry_keys: Vec<((Option<String>, &'f str), Key)> = Vec::new();
        let mut end_keys: Vec<(&'f str, Key)> = Vec::new();
        let mut todo: Vec<Key> = Vec::new();
        for (mode, names) in hidden {
            for &n in names {
                let Some(commands) = commands_of(n) else {
                    continue;
                };
                let (m, pushed) = match apply_mode_commands(&commands, mode, &[]) {
                    Moved::At(m, pushed) if (&m, pushed.len()) != (mode, 0) => (m, pushed),
                    _ => continue,
                };
                // Hidden text before the end of the input (that of the default mode)
                // need not come back.
                if mode.is_none() {
                    let key = (m.clone(), pushed.clone(), ExcursionEnd::Input);
                    end_keys.push((n, key.clone()));
                    todo.push(key);
                }
                let key = (m, pushed, ExcursionEnd::Back(mode.clone()));
                entry_keys.push(((mode.clone(), n), key.clone()));
                todo.push(key);
            }
        }
        /// The production of `first` followed by what remains after the lexer `moved`
        /// on the way to `end`; `None` where that way is not `end`'s.
        fn then<'f>(
            first: Sym<'f>,
            moved: Moved,
            end: &ExcursionEnd,
            todo: &mut Vec<Key>,
        ) -> Option<Vec<Sym<'f>>> {
            match moved {
                Moved::Exit(left) => (ExcursionEnd::Pop(left) == *end).then(|| vec![first]),
                Moved::At(m, pushed)
                    if pushed.is_empty() && *end == ExcursionEnd::Back(m.clone()) =>
                {
                    Some(vec![first])
                }
                Moved::At(_, pushed) if pushed.len() > MAX_PUSHED => None,
                Moved::At(m, pushed) => {
                    let rest = (m, pushed, end.clone());
                    todo.push(rest.clone());
                    Some(vec![first, Sym::Rest(rest)])
                }
            }
        }
        while let Some(key) = todo.pop() {
            if productions.contains_key(&key) {
                continue;
            }
            let (mode, pushed, end) = &key;
            let mut prods = Vec::new();
            match pushed.split_last() {
                // In the excursion's own frame: each rule of the mode, then the rest.
                None => {
                    if *end == ExcursionEnd::Input {
                        prods.push(Vec::new());
                    }
                    for &(n, more) in inside.get(mode).map(Vec::as_slice).unwrap_or_default() {
                        let Some(commands) = commands_of(n) else {
                            continue;
                        };
                        let moved = apply_mode_commands(&commands, mode, &[]);
                        let production = then(Sym::Token(n), moved, end, &mut todo);
                        // `more` text needs a token of the excursion after it.
                        if let Some(p) = production.filter(|p| !more || p.len() == 2) {
                            prods.push(p);
                        }
                    }
                }
                // In a frame pushed inside: the text up to its pop, then what the
                // popping rule leaves for the frame below, then the rest.
                Some((below_mode, below)) => {
                    // Or the input ends inside it.
                    if *end == ExcursionEnd::Input {
                        let inner = (mode.clone(), Vec::new(), ExcursionEnd::Input);
                        todo.push(inner.clone());
                        prods.push(vec![Sym::Rest(inner)]);
                    }
                    for left in &left_below {
                        let inner = (mode.clone(), Vec::new(), ExcursionEnd::Pop(left.clone()));
                        let moved = apply_mode_commands(left, below_mode, below);
                        if let Some(p) = then(Sym::Rest(inner.clone()), moved, end, &mut todo) {
                            todo.push(inner);
                            prods.push(p);
                        }
                    }
                }
            }
            productions.insert(key, prods);
        }
        // Only excursions that can end (a finite text returns to the mode).
        let mut ends: BTreeSet<Key> = BTreeSet::new();
        loop {
            let before = ends.len();
            for (key, prods) in &productions {
                if !ends.contains(key)
                    && prods.iter().any(|p| {
                        p.iter().all(|s| {
                            matches!(s, Sym::Token(_))
                                || matches!(s, Sym::Rest(k) if ends.contains(k))
                        })
                    })
                {
                    ends.insert(key.clone());
                }
            }
            if ends.len() == before {
                break;
            }
        }
        let mode_name = |m: &Option<String>| {
            m.as_deref()
                .unwrap_or(crate::lexer::DEFAULT_MODE)
                .to_string()
        };
        let name = |(mode, pushed, end): &Key| {
            let mut name = format!("_mode.{}", mode_name(mode));
            if !pushed.is_empty() {
                let below: Vec<String> = pushed.iter().map(mode_name).collect();
                name += &format!("[{}]", below.join(","));
            }
            match end {
                ExcursionEnd::Pop(left) if left.is_empty() => name += ".pop",
                ExcursionEnd::Pop(left) => {
                    let left: Vec<String> = left
                        .iter()
                        .map(|c| match c {
                            ModeCommand::Push(m) => format!("pushMode({})", mode_name(m)),
                            ModeCommand::Pop => "popMode".to_string(),
                            ModeCommand::Switch(m) => format!("mode({})", mode_name(m)),
                        })
                        .collect();
                    name += &format!(".pop.then({})", left.join(","));
                }
                ExcursionEnd::Back(back) => name += &format!(".to.{}", mode_name(back)),
                ExcursionEnd::Input => name += ".eof",
            }
            name
        };
        let span = Span::new(0, 0);
        let mut rules = Vec::new();
        for (key, prods) in &productions {
            if !ends.contains(key) {
                continue;
            }
            let alts = prods
                .iter()
                .filter(|p| {
                    p.iter()
                        .all(|s| !matches!(s, Sym::Rest(k) if !ends.contains(k)))
                })
                .map(|p| {
                    let items = p
                        .iter()
                        .map(|s| match s {
                            Sym::Token(n) => {
                                used_lexer.insert(n);
                                expr(AstExprKind::Ref(n.to_string()), span)
                            }
                            Sym::Rest(k) => expr(AstExprKind::Ref(name(k)), span),
                        })
                        .collect();
                    seq(items, span)
                })
                .collect();
            rules.push(AstRule {
                name: name(key),
                name_span: span,
                body: alt(alts, span),
            });
        }
        let entries = entry_keys
            .into_iter()
            .filter(|(_, key)| ends.contains(key))
            .map(|(at, key)| (at, name(&key)))
            .collect();
        let to_end = end_keys
            .into_iter()
            .filter(|(_, key)| ends.contains(key))
            .map(|(n, key)| (n, name(&key)))
            .collect();
        Excursions {
            entries,
            to_end,
            rules,
        }
    }

    fn hidden_name(mode: &Option<String>) -> String {
        match mode {
            None => HIDDEN.to_string(),
            Some(m) => format!("{HIDDEN}.{m}"),
        }
    }

    fn byte_grammar(&mut self, start: &str) -> (SpecAst, String) {
        let mut hidden = self.hidden_rules();
        // Under the indentation idiom a line end may be hidden text: a blank line, or
        // a line end inside brackets (the byte grammar does not know which).
        if let Some(offside) = &self.offside
            && let Some((&name, _)) = self.lexer.get_key_value(offside.line_end.as_str())
        {
            let default = hidden.entry(None).or_default();
            if !default.contains(&name) {
                default.push(name);
            }
        }
        let mut rules = Vec::new();
        let mut used_lexer: BTreeSet<&'f str> = BTreeSet::new();
        let mut used_hidden: BTreeSet<Option<String>> = BTreeSet::new();
        for (fi, name, span, bodies) in self.parser_bodies() {
            let span = self.span(fi, span);
            let alts = bodies
                .iter()
                .map(|e| self.parser_expr(fi, e, &hidden, &mut used_lexer, &mut used_hidden))
                .collect();
            rules.push(AstRule {
                name,
                name_span: span,
                body: alt(alts, span),
            });
        }
        // The whole input: the start rule and hidden text up to the end, unless the
        // start rule already ends in EOF.
        let root = if ends_in_eof(self.parser[start].1) {
            start.to_string()
        } else {
            let span = Span::new(0, 0);
            let mut items = vec![expr(AstExprKind::Ref(start.to_string()), span)];
            if hidden.contains_key(&None) {
                items.push(expr(AstExprKind::Ref(HIDDEN_AT_END.into()), span));
            }
            rules.push(AstRule {
                name: INPUT.into(),
                name_span: span,
                body: seq(items, span),
            });
            INPUT.to_string()
        };
        let excursions = self.excursions(&hidden, &mut used_lexer);
        rules.extend(excursions.rules);
        let entries = excursions.entries;
        // Before the end of the input (the root's or the start rule's `EOF`): the
        // default mode's hidden text, or that and a hidden token that leaves the mode,
        // with what follows it up to the end.
        if hidden.contains_key(&None) {
            used_hidden.insert(None);
            let span = Span::new(0, 0);
            let plain = expr(AstExprKind::Ref(HIDDEN.into()), span);
            let leaving: Vec<AstExpr> = excursions
                .to_end
                .iter()
                .map(|(n, rest)| {
                    used_lexer.insert(n);
                    let token = expr(AstExprKind::Ref(n.to_string()), span);
                    seq(
                        vec![token, expr(AstExprKind::Ref(rest.clone()), span)],
                        span,
                    )
                })
                .collect();
            let body = if leaving.is_empty() {
                plain
            } else {
                let last = seq(vec![plain.clone(), alt(leaving, span)], span);
                expr(AstExprKind::Alt(vec![plain, last]), span)
            };
            rules.push(AstRule {
                name: HIDDEN_AT_END.into(),
                name_span: span,
                body,
            });
        }
        for mode in &used_hidden {
            let names = &hidden[mode];
            for n in names {
                used_lexer.insert(n);
            }
            let span = Span::new(0, 0);
            let choice = alt(
                names
                    .iter()
                    .map(|n| {
                        let token = expr(AstExprKind::Ref(n.to_string()), span);
                        match entries.get(&(mode.clone(), *n)) {
                            Some(rest) => seq(
                                vec![token, expr(AstExprKind::Ref(rest.clone()), span)],
                                span,
                            ),
                            None => token,
                        }
                    })
                    .collect(),
                span,
            );
            // Nothing, one hidden token, or several: the same language as a
            // repetition, with alternatives that generation can weight (nothing
            // mostly; see `AntlrSpec::set_hidden_probability`).
            let more = expr(
                AstExprKind::Repeat {
                    item: Box::new(choice.clone()),
                    min: 1,
                    max: None,
                },
                span,
            );
            rules.push(AstRule {
                name: Self::hidden_name(mode),
                name_span: span,
                body: expr(
                    AstExprKind::Alt(vec![
                        expr(AstExprKind::Seq(Vec::new()), span),
                        choice.clone(),
                        expr(AstExprKind::Seq(vec![choice, more]), span),
                    ]),
                    span,
                ),
            });
        }
        // Lexer rules the parser reaches, with the fragments and rules they use.
        let mut todo: Vec<&'f str> = used_lexer.iter().copied().collect();
        let mut done: BTreeSet<&'f str> = BTreeSet::new();
        while let Some(name) = todo.pop() {
            if !done.insert(name) {
                continue;
            }
            let Some(&(fi, rule)) = self.lexer.get(name) else {
                continue;
            };
            let span = self.span(fi, rule.span);
            if let Some(class) = self.catch_all_characters(rule) {
                rules.push(AstRule {
                    name: rule.name.clone(),
                    name_span: span,
                    body: expr(AstExprKind::Regex(class), span),
                });
                continue;
            }
            // With the same alternatives as `token_matches` marks.
            let alts = rule
                .alts
                .iter()
                .map(|(e, _)| self.lexer_expr(fi, &end_of_input_apart(e), self.ci(rule), &mut todo))
                .collect();
            rules.push(AstRule {
                name: rule.name.clone(),
                name_span: span,
                body: alt(alts, span),
            });
        }
        // Tokens that no lexer rule produces (declared in `tokens {}` only, or named by
        // the parser alone) match nothing. `token_ref` refers to them by name.
        let orphans: Vec<String> = self
            .declared
            .iter()
            .filter(|t| !self.lexer.contains_key(t.as_str()))
            .cloned()
            .collect();
        for t in orphans {
            // Placed where the parser names the token, so that a diagnostic about the
            // rule (`lint`: it matches no string) points there.
            let at = self.first_use.get(&t).copied().unwrap_or(Span::new(0, 0));
            // The indentation idiom's tokens: `INDENT` and `DEDENT` empty (the byte
            // grammar does not follow indentation), a `LINE_BREAK` a line end.
            let body = match &self.offside {
                Some(o) if t == o.indent || t == o.dedent => expr(AstExprKind::Seq(Vec::new()), at),
                Some(o) if t == o.logical_line_end => {
                    expr(AstExprKind::Ref(o.line_end.clone()), at)
                }
                _ => expr(AstExprKind::Regex(NOTHING.into()), at),
            };
            rules.push(AstRule {
                name: t,
                name_span: at,
                body,
            });
        }
        let rules = prune_impossible(rules, &root);
        (
            SpecAst {
                rules,
                constraints_start: None,
            },
            root,
        )
    }

    /// A token reference in the parser: one of the rules producing it, each after the
    /// hidden text of the mode it begins in and, where `more` rules lead into its
    /// mode, after them (pegen's `STRING` is its own rule, or `'` with `more` into
    /// a mode whose `'` ends it as a `STRING`).
    fn token_ref(
        &self,
        token: &str,
        span: Span,
        hidden: &BTreeMap<Option<String>, Vec<&'f str>>,
        used_lexer: &mut BTreeSet<&'f str>,
        used_hidden: &mut BTreeSet<Option<String>>,
    ) -> AstExpr {
        let producers = self.producers(token);
        if producers.is_empty() {
            // A fragment named by the parser (no token; its name is the fragment's
            // rule in this grammar), or a token only declared (referenced by name: an
            // orphan rule matching nothing).
            let missing = if self.lexer.contains_key(token) {
                expr(AstExprKind::Regex(NOTHING.into()), span)
            } else {
                expr(AstExprKind::Ref(token.to_string()), span)
            };
            let before = self.hidden_before(&None, span, hidden, used_hidden);
            return seq(before.into_iter().chain([missing]).collect(), span);
        }
        /// The producers read one way: those of a mode that `more` rules enter
        /// (`enter`, then the mode's own `more` rules, `inside`), or all the others.
        struct Way<'f> {
            mode: Option<String>,
            enter: Vec<&'f str>,
            inside: Vec<&'f str>,
            producers: Vec<&'f str>,
        }
        // Producers of a mode that `more` rules enter are read apart, by mode; the
        // others together after the hidden text of the first one's mode (velocity
        // types tokens of five modes alike, and the hidden text of each mode there
        // took paths through its mode-changing skip rules that the byte grammar does
        // not follow).
        let mut ways: Vec<Way<'f>> = Vec::new();
        let mut plain: Option<usize> = None;
        for (_, r) in &producers {
            used_lexer.insert(&r.name);
            let (enter, inside) = self.more_prefix(&r.mode);
            let at = if enter.is_empty() {
                plain
            } else {
                ways.iter().position(|w| w.mode == r.mode)
            };
            match at {
                Some(i) => ways[i].producers.push(&r.name),
                None => {
                    if enter.is_empty() {
                        plain = Some(ways.len());
                    }
                    ways.push(Way {
                        mode: r.mode.clone(),
                        enter,
                        inside,
                        producers: vec![&r.name],
                    });
                }
            }
        }
        let refs = |names: &[&str]| {
            alt(
                names
                    .iter()
                    .map(|n| expr(AstExprKind::Ref(n.to_string()), span))
                    .collect(),
                span,
            )
        };
        let ways = ways
            .iter()
            .map(|way| {
                let mut items = Vec::new();
                if way.enter.is_empty() {
                    items.extend(self.hidden_before(&way.mode, span, hidden, used_hidden));
                } else {
                    // The token begins in the mode of the `more` rule that enters its
                    // own (pegen's `LBRACE : '{' -> more, pushMode(ACTION_MODE)`), so
                    // the hidden text before it is that mode's.
                    used_lexer.extend(way.enter.iter().copied());
                    items.push(alt(
                        way.enter
                            .iter()
                            .map(|&n| {
                                let from = self.lexer.get(n).and_then(|(_, r)| r.mode.clone());
                                let rule = expr(AstExprKind::Ref(n.to_string()), span);
                                match self.hidden_before(&from, span, hidden, used_hidden) {
                                    Some(before) => seq(vec![before, rule], span),
                                    None => rule,
                                }
                            })
                            .collect(),
                        span,
                    ));
                    if !way.inside.is_empty() {
                        used_lexer.extend(way.inside.iter().copied());
                        items.push(expr(
                            AstExprKind::Repeat {
                                item: Box::new(refs(&way.inside)),
                                min: 0,
                                max: None,
                            },
                            span,
                        ));
                    }
                }
                items.push(refs(&way.producers));
                seq(items, span)
            })
            .collect();
        alt(ways, span)
    }

    /// The hidden text of `mode` before a token, if the mode has hidden rules.
    fn hidden_before(
        &self,
        mode: &Option<String>,
        span: Span,
        hidden: &BTreeMap<Option<String>, Vec<&'f str>>,
        used_hidden: &mut BTreeSet<Option<String>>,
    ) -> Option<AstExpr> {
        hidden.contains_key(mode).then(|| {
            used_hidden.insert(mode.clone());
            expr(AstExprKind::Ref(Self::hidden_name(mode)), span)
        })
    }

    /// Every token the parser can see, for `.` and `~` in parser rules.
    fn visible_tokens(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .implicit
            .iter()
            .map(|(t, _, _)| format!("'{t}'"))
            .collect();
        let mut seen = BTreeSet::new();
        for &(_, r) in &self.lexer_order {
            for (_, commands) in &r.alts {
                let retyped = commands.iter().find_map(|c| match c {
                    Command::Type(t) => Some(t.clone()),
                    _ => None,
                });
                let token = retyped.unwrap_or_else(|| r.name.clone());
                if !r.fragment && !self.producers(&token).is_empty() && seen.insert(token.clone()) {
                    out.push(token);
                }
            }
        }
        out
    }

    fn parser_expr(
        &mut self,
        fi: usize,
        elem: &Elem,
        hidden: &BTreeMap<Option<String>, Vec<&'f str>>,
        used_lexer: &mut BTreeSet<&'f str>,
        used_hidden: &mut BTreeSet<Option<String>>,
    ) -> AstExpr {
        let span = elem_span(elem)
            .map(|s| self.span(fi, s))
            .unwrap_or(Span::new(0, 0));
        match elem {
            Elem::Alt(items) => {
                let items = items
                    .iter()
                    .map(|e| self.parser_expr(fi, e, hidden, used_lexer, used_hidden))
                    .collect();
                alt(items, span)
            }
            Elem::Seq(items) => {
                let items: Vec<_> = items
                    .iter()
                    .map(|e| self.parser_expr(fi, e, hidden, used_lexer, used_hidden))
                    .filter(|e| !matches!(&e.kind, AstExprKind::Seq(v) if v.is_empty()))
                    .collect();
                seq(items, span)
            }
            Elem::Repeat { item, min, max, .. } => expr(
                AstExprKind::Repeat {
                    item: Box::new(self.parser_expr(fi, item, hidden, used_lexer, used_hidden)),
                    min: *min,
                    max: *max,
                },
                span,
            ),
            Elem::Ref(name, _) if name.starts_with(|c: char| c.is_ascii_uppercase()) => {
                self.token_ref(name, span, hidden, used_lexer, used_hidden)
            }
            Elem::Ref(name, _) => expr(AstExprKind::Ref(name.clone()), span),
            Elem::Literal(text, _) => match self.literal_tokens.get(text).cloned() {
                Some(token) if !token.starts_with('\'') => {
                    self.token_ref(&token, span, hidden, used_lexer, used_hidden)
                }
                _ => {
                    let mut items = Vec::new();
                    if hidden.contains_key(&None) {
                        used_hidden.insert(None);
                        items.push(expr(AstExprKind::Ref(HIDDEN.into()), span));
                    }
                    items.push(Self::literal_expr(text, self.case_insensitive, span));
                    seq(items, span)
                }
            },
            Elem::Any(_) | Elem::NotTokens(..) => {
                let excluded: BTreeSet<String> = match elem {
                    Elem::NotTokens(inner, _) => self.token_names(inner),
                    _ => BTreeSet::new(),
                };
                let choices: Vec<AstExpr> = self
                    .visible_tokens()
                    .into_iter()
                    .filter(|t| !excluded.contains(t))
                    .map(
                        |t| match t.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
                            Some(lit) => {
                                let lit = lit.to_string();
                                self.parser_expr(
                                    fi,
                                    &Elem::Literal(lit, Span::new(0, 0)),
                                    hidden,
                                    used_lexer,
                                    used_hidden,
                                )
                            }
                            None => self.token_ref(&t, span, hidden, used_lexer, used_hidden),
                        },
                    )
                    .collect();
                alt(choices, span)
            }
            Elem::Eof(_) => {
                if hidden.contains_key(&None) {
                    expr(AstExprKind::Ref(HIDDEN_AT_END.into()), span)
                } else {
                    expr(AstExprKind::Seq(Vec::new()), span)
                }
            }
            Elem::Set(..) | Elem::Action(_) | Elem::Predicate(_) => {
                expr(AstExprKind::Seq(Vec::new()), span)
            }
        }
    }

    /// The token names an element of `~(...)` in a parser rule stands for.
    fn token_names(&self, elem: &Elem) -> BTreeSet<String> {
        match elem {
            Elem::Alt(items) | Elem::Seq(items) => {
                items.iter().flat_map(|e| self.token_names(e)).collect()
            }
            Elem::Ref(name, _) => [name.clone()].into(),
            Elem::Literal(text, _) => self.literal_tokens.get(text).cloned().into_iter().collect(),
            _ => BTreeSet::new(),
        }
    }

    fn literal_expr(text: &str, ci: bool, span: Span) -> AstExpr {
        let regex = literal_regex(text, ci);
        if ci && regex != literal_regex(text, false) {
            expr(AstExprKind::Regex(regex), span)
        } else {
            expr(AstExprKind::Literal(text.as_bytes().to_vec()), span)
        }
    }

    fn lexer_expr(&self, fi: usize, elem: &Elem, ci: bool, todo: &mut Vec<&'f str>) -> AstExpr {
        let span = elem_span(elem)
            .map(|s| self.span(fi, s))
            .unwrap_or(Span::new(0, 0));
        match elem {
            Elem::Alt(items) => alt(
                items
                    .iter()
                    .map(|e| self.lexer_expr(fi, e, ci, todo))
                    .collect(),
                span,
            ),
            Elem::Seq(items) => {
                let items: Vec<_> = items
                    .iter()
                    .map(|e| self.lexer_expr(fi, e, ci, todo))
                    .filter(|e| !matches!(&e.kind, AstExprKind::Seq(v) if v.is_empty()))
                    .collect();
                seq(items, span)
            }
            Elem::Repeat { item, min, max, .. } => expr(
                AstExprKind::Repeat {
                    item: Box::new(self.lexer_expr(fi, item, ci, todo)),
                    min: *min,
                    max: *max,
                },
                span,
            ),
            Elem::Ref(name, _) => {
                if let Some(&(_, r)) = self.lexer.get(name.as_str()) {
                    todo.push(&r.name);
                }
                expr(AstExprKind::Ref(name.clone()), span)
            }
            Elem::Literal(text, _) => Self::literal_expr(text, ci, span),
            Elem::Set(set, _) => expr(AstExprKind::Regex(Self::class(set, ci)), span),
            Elem::Any(_) => expr(AstExprKind::Regex("(?s:.)".into()), span),
            Elem::NotTokens(..) | Elem::Eof(_) | Elem::Action(_) | Elem::Predicate(_) => {
                expr(AstExprKind::Seq(Vec::new()), span)
            }
        }
    }

    // ----- the token-level grammar -----

    /// The parser rules over token codes: each token type is two bytes
    /// ([`token_code`]), the end of input [`EOF_CODE`]; hidden text is nothing.
    fn token_grammar(&self, root: &str, start: &str) -> (SpecAst, Vec<String>) {
        let mut types: Vec<String> = self.visible_tokens();
        for t in &self.declared {
            if !types.contains(t) {
                types.push(t.clone());
            }
        }
        let index: HashMap<String, usize> = types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i))
            .collect();
        let mut rules = Vec::new();
        for (_, name, _, bodies) in self.parser_bodies() {
            let alts = bodies.iter().map(|e| self.token_expr(e, &index)).collect();
            rules.push(AstRule {
                name,
                name_span: Span::new(0, 0),
                body: alt(alts, Span::new(0, 0)),
            });
        }
        if root != start {
            // A start rule without EOF: the end of input may still be matched inside
            // it (by an `EOF` in a loop), else here.
            let span = Span::new(0, 0);
            let end = expr(AstExprKind::Literal(EOF_CODE.to_vec()), span);
            rules.push(AstRule {
                name: root.to_string(),
                name_span: span,
                body: seq(
                    vec![
                        expr(AstExprKind::Ref(start.to_string()), span),
                        expr(
                            AstExprKind::Repeat {
                                item: Box::new(end),
                                min: 0,
                                max: Some(1),
                            },
                            span,
                        ),
                    ],
                    span,
                ),
            });
        }
        (
            SpecAst {
                rules,
                constraints_start: None,
            },
            types,
        )
    }

    fn token_expr(&self, elem: &Elem, index: &HashMap<String, usize>) -> AstExpr {
        let span = Span::new(0, 0);
        let code = |name: &str| match index.get(name) {
            Some(&i) => expr(AstExprKind::Literal(token_code(i).to_vec()), span),
            None => expr(AstExprKind::Regex(NOTHING.into()), span),
        };
        match elem {
            Elem::Alt(items) => alt(
                items.iter().map(|e| self.token_expr(e, index)).collect(),
                span,
            ),
            Elem::Seq(items) => seq(
                items.iter().map(|e| self.token_expr(e, index)).collect(),
                span,
            ),
            Elem::Repeat { item, min, max, .. } => expr(
                AstExprKind::Repeat {
                    item: Box::new(self.token_expr(item, index)),
                    min: *min,
                    max: *max,
                },
                span,
            ),
            Elem::Ref(name, _) if name.starts_with(|c: char| c.is_ascii_uppercase()) => code(name),
            Elem::Ref(name, _) => expr(AstExprKind::Ref(name.clone()), span),
            Elem::Literal(text, _) => match self.literal_tokens.get(text) {
                Some(t) => code(t),
                None => code(""),
            },
            Elem::Any(_) | Elem::NotTokens(..) => {
                let excluded: BTreeSet<String> = match elem {
                    Elem::NotTokens(inner, _) => self.token_names(inner),
                    _ => BTreeSet::new(),
                };
                alt(
                    self.visible_tokens()
                        .iter()
                        .filter(|t| !excluded.contains(*t))
                        .map(|t| code(t))
                        .collect(),
                    span,
                )
            }
            Elem::Eof(_) => expr(AstExprKind::Literal(EOF_CODE.to_vec()), span),
            Elem::Set(..) | Elem::Action(_) | Elem::Predicate(_) => {
                expr(AstExprKind::Seq(Vec::new()), span)
            }
        }
    }
}

/// Whether `elem` holds a semantic predicate.
/// The paths of a lexer rule's alternative that pass no predicate (`None` if every
/// path does).
fn unguarded_part(elem: &Elem) -> Option<Elem> {
    match elem {
        Elem::Predicate(_) => None,
        Elem::Alt(items) => {
            let mut kept: Vec<Elem> = items.iter().filter_map(unguarded_part).collect();
            match kept.len() {
                0 => None,
                1 => kept.pop(),
                _ => Some(Elem::Alt(kept)),
            }
        }
        Elem::Seq(items) => items
            .iter()
            .map(unguarded_part)
            .collect::<Option<Vec<Elem>>>()
            .map(Elem::Seq),
        Elem::Repeat {
            item,
            min,
            max,
            greedy,
        } => match unguarded_part(item) {
            Some(item) => Some(Elem::Repeat {
                item: Box::new(item),
                min: *min,
                max: *max,
                greedy: *greedy,
            }),
            None if *min == 0 => Some(Elem::Seq(Vec::new())),
            None => None,
        },
        other => Some(other.clone()),
    }
}

fn has_predicate(elem: &Elem) -> bool {
    match elem {
        Elem::Predicate(_) => true,
        Elem::Alt(items) | Elem::Seq(items) => items.iter().any(has_predicate),
        Elem::Repeat { item, .. } | Elem::NotTokens(item, _) => has_predicate(item),
        _ => false,
    }
}

/// Whether a semantic predicate of lexer rule alternative `elem` can come before any
/// of its text (`{this.IsInTemplateString()}? '}'`, or one alternative of a block that
/// begins the rule): such a predicate checks the context the rule applies in, and the
/// rule loses ties with rules without one (see [`LexRuleSpec::guarded`]). A predicate
/// after text (`'<' {this.IsJsxPossible()}?`) does not make the rule lose ties.
fn predicate_before_text(elem: &Elem) -> bool {
    match elem {
        Elem::Predicate(_) => true,
        Elem::Alt(items) => items.iter().any(predicate_before_text),
        Elem::Seq(items) => items
            .iter()
            .find(|item| !matches!(item, Elem::Action(_)))
            .is_some_and(predicate_before_text),
        Elem::Repeat { item, .. } => predicate_before_text(item),
        _ => false,
    }
}

/// Whether `elem` is a reference to lexer rule `name` and nothing else.
fn names_only(elem: &Elem, name: &str) -> bool {
    match elem {
        Elem::Ref(n, _) => n == name,
        Elem::Seq(items) | Elem::Alt(items) => {
            matches!(items.as_slice(), [only] if names_only(only, name))
        }
        _ => false,
    }
}

/// Whether every alternative of `rule` ends in `EOF`.
fn ends_in_eof(rule: &RuleDef) -> bool {
    rule.alts.iter().all(|(e, _)| match e {
        Elem::Eof(_) => true,
        Elem::Seq(items) => matches!(items.last(), Some(Elem::Eof(_))),
        _ => false,
    })
}

/// Whether `elem` (a piece of a lexer rule's alternative) ends in `EOF`.
fn piece_ends_in_eof(elem: &Elem) -> bool {
    match elem {
        Elem::Eof(_) => true,
        Elem::Seq(items) => items.last().is_some_and(piece_ends_in_eof),
        _ => false,
    }
}

/// The lexer rules `elem` names, into `out`.
fn lexer_refs<'e>(elem: &'e Elem, out: &mut HashSet<&'e str>) {
    match elem {
        Elem::Alt(items) | Elem::Seq(items) => {
            for item in items {
                lexer_refs(item, out);
            }
        }
        Elem::Repeat { item, .. } => lexer_refs(item, out),
        Elem::Ref(name, _) => {
            out.insert(name.as_str());
        }
        _ => {}
    }
}

/// The alternatives `elem` is a choice between, through groups (`(a | b)` and `a | b`
/// give `a` and `b`; anything else is its one alternative), each with its path in the
/// byte grammar's expression for `elem` (`Rules::lexer_expr`, where an alternation or
/// a sequence of one item is that item): the index taken and the alternation's size
/// at each step.
fn alternative_paths(elem: &Elem) -> Vec<(&Elem, Vec<(usize, usize)>)> {
    match elem {
        Elem::Alt(items) => items
            .iter()
            .enumerate()
            .flat_map(|(i, item)| {
                alternative_paths(item).into_iter().map(move |(e, path)| {
                    let step = (items.len() > 1).then_some((i, items.len()));
                    (e, step.into_iter().chain(path).collect())
                })
            })
            .collect(),
        Elem::Seq(items) if items.len() == 1 => alternative_paths(&items[0]),
        _ => vec![(elem, Vec::new())],
    }
}

/// The characters `hir` matches as a whole text of one character (fewer where it
/// cannot tell: never one it does not match).
fn one_character_texts(hir: &regex_syntax::hir::Hir) -> regex_syntax::hir::ClassUnicode {
    use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};
    fn nullable(hir: &regex_syntax::hir::Hir) -> bool {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => true,
            HirKind::Literal(l) => l.0.is_empty(),
            HirKind::Class(_) => false,
            HirKind::Repetition(r) => r.min == 0 || nullable(&r.sub),
            HirKind::Capture(c) => nullable(&c.sub),
            HirKind::Concat(items) => items.iter().all(nullable),
            HirKind::Alternation(items) => items.iter().any(nullable),
        }
    }
    let mut out = ClassUnicode::empty();
    match hir.kind() {
        HirKind::Literal(l) => {
            if let Ok(text) = std::str::from_utf8(&l.0) {
                let mut chars = text.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    out.push(ClassUnicodeRange::new(c, c));
                }
            }
        }
        HirKind::Class(Class::Unicode(c)) => out = c.clone(),
        HirKind::Class(Class::Bytes(c)) => {
            for r in c.ranges().iter().filter(|r| r.start() < 0x80) {
                out.push(ClassUnicodeRange::new(
                    char::from(r.start()),
                    char::from(r.end().min(0x7F)),
                ));
            }
        }
        HirKind::Repetition(r) if r.min <= 1 && r.max != Some(0) => {
            out = one_character_texts(&r.sub)
        }
        HirKind::Capture(c) => out = one_character_texts(&c.sub),
        HirKind::Alternation(items) => {
            for item in items {
                out.union(&one_character_texts(item));
            }
        }
        HirKind::Concat(items) => {
            for (i, item) in items.iter().enumerate() {
                let others_empty = items
                    .iter()
                    .enumerate()
                    .all(|(j, other)| j == i || nullable(other));
                if others_empty {
                    out.union(&one_character_texts(item));
                }
            }
        }
        _ => {}
    }
    out
}

/// A lexer rule's alternative as the byte grammar reads it: one that ends in a choice
/// with `EOF` (`'//' .*? ('\n' | EOF)`) split in two, the choice without `EOF` and the
/// text ended by the end of the input (`'//' .*? EOF`), so that each piece gets its own
/// end ([`Rules::token_matches`]): the first its shortest match, the second its
/// longest, which reaches the end of the input whenever the token does. Read as one,
/// `EOF` (the empty string in the byte grammar) would end the token's shortest match
/// right after `//`, and its whole language would let every comment end anywhere.
fn end_of_input_apart(elem: &Elem) -> std::borrow::Cow<'_, Elem> {
    use std::borrow::Cow;
    let is_eof = |e: &Elem| match e {
        Elem::Eof(_) => true,
        Elem::Seq(items) => matches!(items.as_slice(), [Elem::Eof(_)]),
        _ => false,
    };
    match elem {
        Elem::Alt(items) => {
            let parts: Vec<Cow<'_, Elem>> = items.iter().map(end_of_input_apart).collect();
            if parts.iter().all(|p| matches!(p, Cow::Borrowed(_))) {
                Cow::Borrowed(elem)
            } else {
                Cow::Owned(Elem::Alt(parts.into_iter().map(Cow::into_owned).collect()))
            }
        }
        Elem::Seq(items) => match items.split_last() {
            Some((Elem::Alt(exits), prefix))
                if exits.iter().any(is_eof) && !exits.iter().all(is_eof) =>
            {
                let eof = exits.iter().find(|e| is_eof(e)).cloned();
                let mut others: Vec<Elem> = exits.iter().filter(|e| !is_eof(e)).cloned().collect();
                let exit = if others.len() == 1 {
                    others.pop().expect("one exit")
                } else {
                    Elem::Alt(others)
                };
                let with = |last: Elem| Elem::Seq(prefix.iter().cloned().chain([last]).collect());
                Cow::Owned(Elem::Alt(vec![with(exit), with(eof.expect("an EOF exit"))]))
            }
            _ => Cow::Borrowed(elem),
        },
        _ => Cow::Borrowed(elem),
    }
}

/// How many rules deep [`Rules::inlined`] writes lexer rules in place.
const MAX_INLINED: usize = 32;

/// Whether the exact lexer may end `elem` (with the lexer rules it names written in
/// place) elsewhere than at its shortest match:
/// - a non-greedy loop whose body is more than one character, string or set in a row
///   (a choice, a rule, another loop) goes on where a higher-priority path does
///   (`('\\"' | .)*?` past `\"`), which the priority automaton follows and a shortest
///   match would not;
/// - a greedy loop after a non-greedy one goes on after the non-greedy loop has
///   stopped (`[a-z0-9]*? [a-z]+? [a-z0-9]*` reads `v1` whole, not `v`);
/// - `EOF` matches only at the end of the input, where the shortest match takes it
///   as the empty string anywhere (`'//' .*? ('\n' | EOF)` would end after `//`).
fn ends_past_shortest(elem: &Elem) -> bool {
    fn simple(elem: &Elem) -> bool {
        match elem {
            Elem::Seq(items) => items.iter().all(simple),
            Elem::Literal(..) | Elem::Set(..) | Elem::Any(_) => true,
            _ => false,
        }
    }
    fn any(elem: &Elem, hit: &dyn Fn(&Elem) -> bool) -> bool {
        hit(elem)
            || match elem {
                Elem::Alt(items) | Elem::Seq(items) => items.iter().any(|i| any(i, hit)),
                Elem::Repeat { item, .. } => any(item, hit),
                _ => false,
            }
    }
    let non_greedy = |e: &Elem| any(e, &|e| matches!(e, Elem::Repeat { greedy: false, .. }));
    let greedy = |e: &Elem| any(e, &|e| matches!(e, Elem::Repeat { greedy: true, .. }));
    if non_greedy(elem) && any(elem, &|e| matches!(e, Elem::Eof(_))) {
        return true;
    }
    match elem {
        Elem::Alt(items) => items.iter().any(ends_past_shortest),
        Elem::Seq(items) => items.iter().enumerate().any(|(i, item)| {
            ends_past_shortest(item) || (non_greedy(item) && items[i + 1..].iter().any(greedy))
        }),
        Elem::Repeat { item, greedy, .. } => {
            (!greedy && !simple(item)) || (*greedy && non_greedy(item)) || ends_past_shortest(item)
        }
        _ => false,
    }
}

/// A mode command of a lexer rule (`None`: the default mode).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ModeCommand {
    /// `pushMode(X)`.
    Push(Option<String>),
    /// `popMode`.
    Pop,
    /// `mode(X)`.
    Switch(Option<String>),
}

/// Hidden text that leaves a mode (`Rules::excursions`).
struct Excursions<'f> {
    /// By the mode it starts in and the hidden rule that leaves it: the rule of the
    /// text that follows, back to that mode.
    entries: BTreeMap<(Option<String>, &'f str), String>,
    /// By a hidden rule of the default mode that leaves it: the rule of the text that
    /// follows up to the end of the input.
    to_end: Vec<(&'f str, String)>,
    /// The rules of the text after each such rule.
    rules: Vec<AstRule>,
}

/// How hidden text that left a mode ends (`Rules::excursions`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ExcursionEnd {
    /// A rule pops the frame the excursion began in, leaving these of its commands
    /// (those after that `popMode`) to the frame below.
    Pop(Vec<ModeCommand>),
    /// The lexer is back in this mode, with the stack it had when the excursion began.
    Back(Option<String>),
    /// The input ends, in whatever mode and with whatever stack.
    Input,
}

/// Where mode commands leave the lexer, seen from the frame they start in.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Moved {
    /// They pop that frame, leaving these commands to the frame below.
    Exit(Vec<ModeCommand>),
    /// In this mode, with these modes pushed on the frame (the last one on top).
    At(Option<String>, Vec<Option<String>>),
}

/// The mode named in a command (`DEFAULT_MODE` is the default mode).
fn mode_named(name: &str) -> Option<String> {
    (name != crate::lexer::DEFAULT_MODE).then(|| name.to_string())
}

/// The mode commands of `rule` in their order, as ANTLR runs them; `None` where its
/// alternatives differ in them (not followed in the byte grammar).
fn mode_commands(rule: &RuleDef) -> Option<Vec<ModeCommand>> {
    let mut each = rule.alts.iter().map(|(_, commands)| {
        commands
            .iter()
            .filter_map(|c| match c {
                Command::PushMode(x) => Some(ModeCommand::Push(mode_named(x))),
                Command::PopMode => Some(ModeCommand::Pop),
                Command::Mode(x) => Some(ModeCommand::Switch(mode_named(x))),
                _ => None,
            })
            .collect::<Vec<_>>()
    });
    let first = each.next().unwrap_or_default();
    each.all(|c| c == first).then_some(first)
}

/// Runs `commands` in `mode` with `pushed` on the frame: `pushMode` saves the mode on
/// the stack, `popMode` takes it back (or leaves the frame when nothing is pushed),
/// `mode` replaces the current one.
fn apply_mode_commands(
    commands: &[ModeCommand],
    mode: &Option<String>,
    pushed: &[Option<String>],
) -> Moved {
    let mut mode = mode.clone();
    let mut pushed = pushed.to_vec();
    for (i, c) in commands.iter().enumerate() {
        match c {
            ModeCommand::Push(next) => pushed.push(std::mem::replace(&mut mode, next.clone())),
            ModeCommand::Switch(next) => mode = next.clone(),
            ModeCommand::Pop => match pushed.pop() {
                Some(saved) => mode = saved,
                None => return Moved::Exit(commands[i + 1..].to_vec()),
            },
        }
    }
    Moved::At(mode, pushed)
}

/// `ast` with the lexer rules named in `never` matching nothing (tokens no input has,
/// see [`crate::lexer::Lexer::unreachable_rules`]) and the parts of parser rules that
/// need them dropped, as for tokens only target code could emit. A rule another lexer
/// rule uses keeps its body (its text is still part of that token); the parser's
/// references to it match nothing instead. Returns the rules dropped.
pub(crate) fn drop_tokens(
    ast: &mut SpecAst,
    root: &str,
    never: &[String],
    parser_rules: &[String],
) -> Vec<String> {
    fn refs(e: &AstExpr, out: &mut HashSet<String>) {
        match &e.kind {
            AstExprKind::Ref(name) => {
                out.insert(name.clone());
            }
            AstExprKind::Seq(items) | AstExprKind::Alt(items) => {
                items.iter().for_each(|i| refs(i, out));
            }
            AstExprKind::Repeat { item, .. } => refs(item, out),
            AstExprKind::Literal(_) | AstExprKind::Regex(_) | AstExprKind::Bit(_) => {}
        }
    }
    let parser: HashSet<&str> = parser_rules.iter().map(String::as_str).collect();
    let mut in_tokens = HashSet::new();
    for rule in &ast.rules {
        if !parser.contains(rule.name.as_str()) && rule.name != root {
            refs(&rule.body, &mut in_tokens);
        }
    }
    /// `e` with each reference to one of `names` matching nothing.
    fn cut(e: &mut AstExpr, names: &[&String]) {
        match &mut e.kind {
            AstExprKind::Ref(name) if names.contains(&&*name) => {
                e.kind = AstExprKind::Regex(NOTHING.into());
            }
            AstExprKind::Seq(items) | AstExprKind::Alt(items) => {
                items.iter_mut().for_each(|i| cut(i, names));
            }
            AstExprKind::Repeat { item, .. } => cut(item, names),
            _ => {}
        }
    }
    let mut dropped = Vec::new();
    for rule in &mut ast.rules {
        if never.contains(&rule.name) && !in_tokens.contains(&rule.name) {
            rule.body = expr(AstExprKind::Regex(NOTHING.into()), rule.name_span);
            dropped.push(rule.name.clone());
        }
    }
    // A rule another lexer rule uses keeps its body there; the parser's references
    // to it match nothing (plucid's LETTER, whose every letter ALPHANUMERIC wins).
    let shared: Vec<&String> = never.iter().filter(|n| in_tokens.contains(*n)).collect();
    if !shared.is_empty() {
        for rule in &mut ast.rules {
            if parser.contains(rule.name.as_str()) {
                cut(&mut rule.body, &shared);
            }
        }
        dropped.extend(shared.into_iter().cloned());
    }
    if !dropped.is_empty() {
        ast.rules = prune_impossible(std::mem::take(&mut ast.rules), root);
    }
    dropped
}

/// The rules without the parts that need a token no input has (a regex matching
/// nothing: a token only target code could emit): alternatives that need one are
/// dropped, optional parts that need one become empty, and rules left with nothing are
/// removed. The language stays the same, and generation, which refuses a regex that
/// matches nothing even where it is never chosen, works. Only parts that are impossible
/// because of such tokens go; a rule that can never finish for another reason (a cycle)
/// stays for the generator and `lint` to report. Nothing is pruned if the start rule
/// itself needs such a token.
fn prune_impossible(rules: Vec<AstRule>, root: &str) -> Vec<AstRule> {
    fn impossible(e: &AstExpr, gone: &HashSet<String>) -> bool {
        match &e.kind {
            AstExprKind::Regex(r) => r == NOTHING,
            AstExprKind::Ref(name) => gone.contains(name),
            AstExprKind::Seq(items) => items.iter().any(|i| impossible(i, gone)),
            AstExprKind::Alt(items) => items.iter().all(|i| impossible(i, gone)),
            AstExprKind::Repeat { item, min, .. } => *min > 0 && impossible(item, gone),
            AstExprKind::Literal(_) | AstExprKind::Bit(_) => false,
        }
    }
    /// `e` without its impossible parts (`e` itself is possible).
    fn prune(e: AstExpr, gone: &HashSet<String>) -> AstExpr {
        let span = e.span;
        match e.kind {
            AstExprKind::Alt(items) => {
                let mut kept: Vec<AstExpr> = items
                    .into_iter()
                    .filter(|i| !impossible(i, gone))
                    .map(|i| prune(i, gone))
                    .collect();
                if kept.len() == 1 {
                    kept.pop().expect("one alternative")
                } else {
                    expr(AstExprKind::Alt(kept), span)
                }
            }
            AstExprKind::Seq(items) => expr(
                AstExprKind::Seq(items.into_iter().map(|i| prune(i, gone)).collect()),
                span,
            ),
            AstExprKind::Repeat { item, min, max } => {
                if impossible(&item, gone) {
                    expr(AstExprKind::Seq(Vec::new()), span)
                } else {
                    expr(
                        AstExprKind::Repeat {
                            item: Box::new(prune(*item, gone)),
                            min,
                            max,
                        },
                        span,
                    )
                }
            }
            kind => expr(kind, span),
        }
    }
    // The least set of rules that need such a token: grown until no rule is added.
    let mut gone: HashSet<String> = HashSet::new();
    loop {
        let before = gone.len();
        for rule in &rules {
            if !gone.contains(&rule.name) && impossible(&rule.body, &gone) {
                gone.insert(rule.name.clone());
            }
        }
        if gone.len() == before {
            break;
        }
    }
    // A part that needs such a token inline (a skipped token the parser names, `WS?`)
    // goes too when no whole rule does.
    if gone.contains(root) {
        return rules;
    }
    rules
        .into_iter()
        .filter(|rule| !gone.contains(&rule.name))
        .map(|rule| AstRule {
            body: prune(rule.body, &gone),
            ..rule
        })
        .collect()
}
