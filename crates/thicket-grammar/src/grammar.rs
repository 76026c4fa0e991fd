//! The resolved grammar: rules and right-hand-side expressions in arenas, referenced by
//! typed ids. This is the grammar graph of the k-path papers: every `Expr` node is one
//! occurrence (two `"+"` literals are two nodes), `Alt`/`Seq`/`Repeat` are the synthetic
//! nodes, `Ref`/`Literal`/`Regex` the symbolic ones, and cycles run through `Ref`.

use crate::ast::{AstExpr, AstExprKind, SpecAst};
use crate::diag::Diagnostic;
use crate::source::Span;
use crate::suggest::Suggester;
use regex_syntax::hir::Hir;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Index of a rule (a nonterminal) in [`Grammar::rules`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId(u32);

/// Index of an expression node in the grammar's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(u32);

impl SymbolId {
    /// The position of the rule in [`Grammar::rules`].
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id at a position previously obtained from [`SymbolId::index`].
    pub fn from_index(index: usize) -> SymbolId {
        SymbolId(index as u32)
    }
}

impl ExprId {
    /// The position of the node in the expression arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id at a position previously obtained from [`ExprId::index`] (for tables that
    /// mirror the arena). Using it with [`Grammar::expr`] panics if out of range.
    pub fn from_index(index: usize) -> ExprId {
        ExprId(index as u32)
    }
}

/// A rule `<name> ::= body`.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The name, without angle brackets.
    pub name: String,
    /// The right-hand side.
    pub body: ExprId,
    /// Where the rule's name is written.
    pub name_span: Span,
}

/// A node of a right-hand side.
#[derive(Clone, Debug)]
pub struct ExprNode {
    /// What the node is.
    pub kind: Expr,
    /// Where it is written (the root reference spans the start rule's name).
    pub span: Span,
}

/// The kinds of expression nodes.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Two or more alternatives (an ALT node).
    Alt(Box<[ExprId]>),
    /// A concatenation (a CAT node). Empty for the empty string; never of length one.
    Seq(Box<[ExprId]>),
    /// A quantified item (a QUANT node).
    Repeat(Repeat),
    /// A reference to a rule.
    Ref(SymbolId),
    /// A literal byte string (possibly empty).
    Literal(Box<[u8]>),
    /// A regex terminal.
    Regex(Box<RegexTerminal>),
}

/// `item{min,max}`.
#[derive(Clone, Copy, Debug)]
pub struct Repeat {
    /// The repeated node.
    pub item: ExprId,
    /// Least number of repetitions.
    pub min: u32,
    /// Greatest number of repetitions; `None` if unbounded.
    pub max: Option<u32>,
}

/// Which end of a token a parser takes where its language allows several (see
/// [`Grammar::set_token_match`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenMatch {
    /// The first: the empty text if the language has it, and each non-empty text with
    /// no shorter non-empty prefix in the language (a lexer's non-greedy loop: a
    /// comment ends at its first `*/`).
    Shortest,
    /// The last: the longest text the language has from that position (a lexer's
    /// longest match: `123` is one number, never `1` and `23`).
    Longest,
}

/// A terminal given as a regular expression, compiled once.
#[derive(Clone, Debug)]
pub struct RegexTerminal {
    /// The pattern as written.
    pub pattern: String,
    /// The compiled pattern.
    pub hir: Hir,
}

impl Expr {
    /// The child nodes (none for terminals and references).
    pub fn children(&self) -> &[ExprId] {
        match self {
            Expr::Alt(c) | Expr::Seq(c) => c,
            Expr::Repeat(r) => std::slice::from_ref(&r.item),
            Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_) => &[],
        }
    }

    /// Whether the node is symbolic (a reference or a terminal) rather than synthetic.
    pub fn is_symbolic(&self) -> bool {
        matches!(self, Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_))
    }
}

/// A context-free grammar over bytes, with EBNF quantifiers and regex terminals.
///
/// Invariants (upheld by [`Grammar::build`], relied on everywhere):
/// - every `Ref` names an existing rule; rule names are unique;
/// - child expression ids are smaller than their parent's, so iterating the arena in id
///   order visits children before parents;
/// - `Seq` never has exactly one child and `Alt` has at least two;
/// - the root is a synthetic `Ref` to the start rule that no right-hand side contains.
#[derive(Clone, Debug)]
pub struct Grammar {
    rules: Vec<Rule>,
    exprs: Vec<ExprNode>,
    by_name: HashMap<String, SymbolId>,
    start: SymbolId,
    root: ExprId,
    /// Rules a parser must not compile into one token (see [`Grammar::set_phrase`]),
    /// by [`SymbolId::index`]; empty when there are none.
    phrase: Vec<bool>,
    /// Nodes a parser matches as a lexer's token (see [`Grammar::set_token_match`]),
    /// by [`ExprId::index`]; empty when there are none.
    token_match: Vec<Option<TokenMatch>>,
    /// Whole texts a longest-match token never has (see
    /// [`Grammar::set_token_taken_texts`]); empty for most nodes.
    token_taken: HashMap<ExprId, HashSet<Vec<u8>>>,
    /// Probabilities the spec gives alternatives (fuzzingbook's `prob`).
    default_probabilities: Vec<(ExprId, f64)>,
}

impl Grammar {
    /// Resolves a syntax tree into a grammar whose start symbol is `start` (without
    /// brackets). Reports every undefined reference (with a did-you-mean), duplicate
    /// rule, malformed regex and a missing start rule.
    pub fn build(ast: &SpecAst, start: &str) -> Result<Grammar, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        let mut by_name: HashMap<String, SymbolId> = HashMap::new();
        let mut rules = Vec::new();
        let mut first_span: HashMap<&str, Span> = HashMap::new();
        for rule in &ast.rules {
            if let Some(&first) = first_span.get(rule.name.as_str()) {
                errors.push(
                    Diagnostic::error(
                        "duplicate-rule",
                        format!("rule <{}> is defined more than once", rule.name),
                        rule.name_span,
                    )
                    .with_label_message("defined again here")
                    .with_secondary(first, "first defined here")
                    .with_note("join the alternatives into one rule with `|`"),
                );
                continue;
            }
            first_span.insert(&rule.name, rule.name_span);
            by_name.insert(rule.name.clone(), SymbolId(rules.len() as u32));
            rules.push(Rule {
                name: rule.name.clone(),
                body: ExprId(0),
                name_span: rule.name_span,
            });
        }
        if ast.rules.is_empty() {
            errors.push(
                Diagnostic::error("empty-spec", "the spec defines no rules", Span::new(0, 0))
                    .with_note("a spec needs at least `<start> ::= ...`"),
            );
            return Err(errors);
        }
        let suggester = Suggester::new(by_name.keys().map(String::as_str));
        let mut builder = Builder {
            exprs: Vec::new(),
            by_name: &by_name,
            errors: &mut errors,
            suggester: &suggester,
            suggested: HashMap::new(),
        };
        let mut seen = std::collections::HashSet::new();
        for rule in &ast.rules {
            if !seen.insert(rule.name.as_str()) {
                continue;
            }
            let body = builder.lower(&rule.body);
            rules[by_name[&rule.name].index()].body = body;
        }
        let Some(&start_id) = by_name.get(start) else {
            let mut d = Diagnostic::error(
                "missing-start",
                format!("the start rule <{start}> is not defined"),
                Span::new(0, 0),
            );
            if let Some(suggestion) = suggester.suggest(start) {
                d = d.with_note(format!("did you mean <{suggestion}>?"));
            }
            let unreferenced = unreferenced_rules(&builder.exprs, &rules);
            if unreferenced.len() == 1 {
                d = d.with_note(format!(
                    "<{}> is the only rule no other rule uses: pass `--start {}`",
                    rules[unreferenced[0]].name, rules[unreferenced[0]].name
                ));
            } else {
                d = d.with_note("define it, or choose another start rule with `--start NAME`");
            }
            errors.push(d);
            return Err(errors);
        };
        let root = builder.push(Expr::Ref(start_id), rules[start_id.index()].name_span);
        let exprs = builder.exprs;
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Grammar {
            phrase: Vec::new(),
            token_match: Vec::new(),
            token_taken: HashMap::new(),
            default_probabilities: Vec::new(),
            rules,
            exprs,
            by_name,
            start: start_id,
            root,
        })
    }

    /// The same grammar with `start` as its start symbol (a new synthetic root refers to
    /// it), e.g. to parse a fragment of the language.
    pub fn with_start(&self, start: SymbolId) -> Grammar {
        let mut grammar = self.clone();
        grammar.start = start;
        grammar.root = ExprId(grammar.exprs.len() as u32);
        grammar.exprs.push(ExprNode {
            kind: Expr::Ref(start),
            span: self.rules[start.index()].name_span,
        });
        grammar
    }

    /// A reference to `symbol` (an `Expr::Ref` node), to root a subtree of it at: the
    /// first in the grammar, `None` if no rule refers to it (see
    /// [`Grammar::add_reference`]).
    pub fn reference(&self, symbol: SymbolId) -> Option<ExprId> {
        self.exprs
            .iter()
            .position(|e| matches!(e.kind, Expr::Ref(s) if s == symbol))
            .map(|i| ExprId(i as u32))
    }

    /// A reference to `symbol`, added (used by no rule) if the grammar has none: for
    /// subtrees of a rule that only a spec's code names, such as a Fandango
    /// generator's argument (`:= encode(<data>)`).
    pub fn add_reference(&mut self, symbol: SymbolId) -> ExprId {
        self.reference(symbol).unwrap_or_else(|| {
            self.exprs.push(ExprNode {
                kind: Expr::Ref(symbol),
                span: self.rules[symbol.index()].name_span,
            });
            ExprId(self.exprs.len() as u32 - 1)
        })
    }

    /// Sets the bounds of the repetition `expr` (a [`Expr::Repeat`] node; others are
    /// left alone), for bounds a spec computes once it is loaded (Fandango's
    /// `<byte>{SIZE * 3}`).
    pub fn set_repeat_bounds(&mut self, expr: ExprId, min: u32, max: Option<u32>) {
        if let Expr::Repeat(r) = &mut self.exprs[expr.index()].kind {
            r.min = min;
            r.max = max;
        }
    }

    /// Replaces the terminal `expr` (a literal or regex node; others are left alone) by
    /// `regex`, keeping its id: for a grammar over another encoding of the same inputs
    /// (Fandango's bit fields read one bit per byte) whose trees are the original
    /// grammar's node for node.
    pub fn set_terminal_regex(&mut self, expr: ExprId, regex: RegexTerminal) {
        let kind = &mut self.exprs[expr.index()].kind;
        if matches!(kind, Expr::Literal(_) | Expr::Regex(_)) {
            *kind = Expr::Regex(Box::new(regex));
        }
    }

    /// Marks a rule as a *phrase*: a parser never compiles a reference to it into a
    /// token (a DFA), even when its language is regular, so the rules that use it are
    /// parsed by their parts. Its own body stays one token where it uses tokens only:
    /// a DFA holds at most one phrase rule's body, never the rules below it. For
    /// readers of other grammar formats that know which rules are tokens (ANTLR's
    /// lexer rules) and which are phrase structure (ANTLR's parser rules), whose
    /// non-recursive parts can make huge DFAs. Rules of `.fan` specs are never phrases.
    pub fn set_phrase(&mut self, symbol: SymbolId) {
        if self.phrase.is_empty() {
            self.phrase = vec![false; self.rules.len()];
        }
        self.phrase[symbol.index()] = true;
    }

    /// Marks a node as a lexer's token: a parser scanning it at a position takes only
    /// the one end `how` says, as a lexer reads tokens, where the node's language
    /// alone would allow several. For readers of lexer grammars (ANTLR's): read as
    /// plain languages, a token with a non-greedy loop (`'/*' .*? '*/'`, `.+?`) may end
    /// anywhere later, and a run of digits may be split into numbers in every way,
    /// which costs a parser time with the square of the input or worse. A parser
    /// honours the mark where it scans the node as one DFA, and at the references to a
    /// rule whose body it marks. A shortest match cannot be said inside a larger DFA,
    /// so the nodes above such a token are parsed by their parts (a mark below another
    /// marked node is read as the plain language inside it); a longest-match token
    /// inside a larger DFA is read as its whole language. Generation does not read it.
    pub fn set_token_match(&mut self, expr: ExprId, how: TokenMatch) {
        if self.token_match.is_empty() {
            self.token_match = vec![None; self.exprs.len()];
        }
        self.token_match[expr.index()] = Some(how);
    }

    /// How [`Grammar::set_token_match`] marked the node, if it did.
    pub fn token_match(&self, expr: ExprId) -> Option<TokenMatch> {
        self.token_match.get(expr.index()).copied().flatten()
    }

    /// Records the whole texts a node marked as a longest-match token
    /// ([`Grammar::set_token_match`]) never has, because a lexer gives them to a rule
    /// of higher priority: a keyword defined before the identifier rule (`ENDCHAR` is
    /// never an `ARG : [A-Z0-9]+`). A parser scanning the token drops a longest match
    /// whose text is one of them. Read as a plain language, such a token would take
    /// every keyword too, and a loop of them (`'BITMAP' ARG*`) could run on through
    /// the keywords that end it, which costs a general parser time with the cube of
    /// the input. Analyses of the grammar and generation read the whole language.
    pub fn set_token_taken_texts(&mut self, expr: ExprId, texts: HashSet<Vec<u8>>) {
        if texts.is_empty() {
            self.token_taken.remove(&expr);
        } else {
            self.token_taken.insert(expr, texts);
        }
    }

    /// Whether [`Grammar::set_token_taken_texts`] recorded texts for the node.
    pub fn has_token_taken_texts(&self, expr: ExprId) -> bool {
        self.token_taken.contains_key(&expr)
    }

    /// Whether `text` is one of the texts [`Grammar::set_token_taken_texts`] recorded
    /// for the node.
    pub fn is_token_taken_text(&self, expr: ExprId, text: &[u8]) -> bool {
        self.token_taken
            .get(&expr)
            .is_some_and(|t| t.contains(text))
    }

    /// Records that the spec gives `alternative` (an alternative of a rule's top-level
    /// alternation) probability `p` (fuzzingbook JSON grammars' `prob` option); a
    /// probability given before for the same alternative is replaced.
    pub fn set_default_probability(&mut self, alternative: ExprId, p: f64) {
        match self
            .default_probabilities
            .iter_mut()
            .find(|(a, _)| *a == alternative)
        {
            Some(given) => given.1 = p,
            None => self.default_probabilities.push((alternative, p)),
        }
    }

    /// The probabilities the spec gives alternatives (alternatives without one share
    /// what is left of their alternation, as in fuzzingbook's `ProbabilisticGrammarFuzzer`).
    pub fn default_probabilities(&self) -> &[(ExprId, f64)] {
        &self.default_probabilities
    }

    /// Whether [`Grammar::set_phrase`] marked the rule.
    pub fn is_phrase(&self, symbol: SymbolId) -> bool {
        self.phrase.get(symbol.index()).copied().unwrap_or(false)
    }

    /// All rules, indexed by [`SymbolId::index`].
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule of a symbol.
    pub fn rule(&self, id: SymbolId) -> &Rule {
        &self.rules[id.index()]
    }

    /// The symbol of a rule name (without brackets).
    pub fn symbol(&self, name: &str) -> Option<SymbolId> {
        self.by_name.get(name).copied()
    }

    /// Every symbol id.
    pub fn symbols(&self) -> impl Iterator<Item = SymbolId> + '_ {
        (0..self.rules.len() as u32).map(SymbolId)
    }

    /// The start symbol.
    pub fn start(&self) -> SymbolId {
        self.start
    }

    /// The synthetic reference to the start rule: the root of every derivation tree.
    pub fn root(&self) -> ExprId {
        self.root
    }

    /// An expression node.
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()].kind
    }

    /// Where an expression node is written.
    pub fn expr_span(&self, id: ExprId) -> Span {
        self.exprs[id.index()].span
    }

    /// Number of expression nodes.
    pub fn expr_count(&self) -> usize {
        self.exprs.len()
    }

    /// Every expression id, children before parents.
    pub fn expr_ids(&self) -> impl Iterator<Item = ExprId> + '_ {
        (0..self.exprs.len() as u32).map(ExprId)
    }

    /// Whether a derivation from the start rule may contain `byte`: some terminal reachable
    /// from the root is a literal containing it or a regex whose character classes or
    /// literals include it. An over-approximation (a terminal reachable only through an
    /// unproductive rule, or a regex repetition of at most zero, still counts), so `false`
    /// is a guarantee: no input of the grammar contains the byte.
    pub fn may_produce_byte(&self, byte: u8) -> bool {
        let mut seen = vec![false; self.exprs.len()];
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id.index()], true) {
                continue;
            }
            match self.expr(id) {
                Expr::Literal(bytes) if bytes.contains(&byte) => return true,
                Expr::Regex(regex) if hir_may_match_byte(&regex.hir, byte) => return true,
                Expr::Ref(symbol) => stack.push(self.rule(*symbol).body),
                other => stack.extend_from_slice(other.children()),
            }
        }
        false
    }

    /// `<name>` of a symbol.
    pub fn display_symbol(&self, id: SymbolId) -> String {
        format!("<{}>", self.rule(id).name)
    }

    /// The expression in spec syntax, e.g. `(<a> | "b")*`.
    pub fn display_expr(&self, id: ExprId) -> String {
        let mut out = String::new();
        self.write_expr(id, &mut out, false);
        out
    }

    fn write_expr(&self, id: ExprId, out: &mut String, nested: bool) {
        use std::fmt::Write;
        match self.expr(id) {
            Expr::Alt(alts) => {
                if nested {
                    out.push('(');
                }
                for (i, &a) in alts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    self.write_expr(a, out, false);
                }
                if nested {
                    out.push(')');
                }
            }
            Expr::Seq(items) if items.is_empty() => out.push_str("\"\""),
            Expr::Seq(items) => {
                if nested {
                    out.push('(');
                }
                for (i, &item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    self.write_expr(item, out, true);
                }
                if nested {
                    out.push(')');
                }
            }
            Expr::Repeat(r) => {
                self.write_expr(r.item, out, true);
                match (r.min, r.max) {
                    (0, None) => out.push('*'),
                    (1, None) => out.push('+'),
                    (0, Some(1)) => out.push('?'),
                    (n, None) => write!(out, "{{{n},}}").expect("string write"),
                    (n, Some(m)) if n == m => write!(out, "{{{n}}}").expect("string write"),
                    (n, Some(m)) => write!(out, "{{{n},{m}}}").expect("string write"),
                }
            }
            Expr::Ref(s) => out.push_str(&self.display_symbol(*s)),
            Expr::Literal(bytes) => out.push_str(&quote_bytes(bytes)),
            Expr::Regex(r) => write!(out, "r\"{}\"", r.pattern).expect("string write"),
        }
    }
}

/// Whether some string `hir` matches may contain `byte` (over-approximated as for
/// [`Grammar::may_produce_byte`]); an explicit stack, whatever the nesting.
fn hir_may_match_byte(hir: &Hir, byte: u8) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    let mut stack = vec![hir];
    while let Some(hir) = stack.pop() {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(literal) => {
                if literal.0.contains(&byte) {
                    return true;
                }
            }
            HirKind::Class(Class::Bytes(class)) => {
                if class
                    .ranges()
                    .iter()
                    .any(|r| (r.start()..=r.end()).contains(&byte))
                {
                    return true;
                }
            }
            HirKind::Class(Class::Unicode(class)) => {
                // A byte of a multi-byte UTF-8 sequence is never ASCII: a non-ASCII
                // byte may be in any class that reaches beyond ASCII.
                let hit = |r: &regex_syntax::hir::ClassUnicodeRange| {
                    if byte.is_ascii() {
                        (r.start()..=r.end()).contains(&char::from(byte))
                    } else {
                        r.end() > '\u{7f}'
                    }
                };
                if class.ranges().iter().any(hit) {
                    return true;
                }
            }
            HirKind::Repetition(rep) => stack.push(&rep.sub),
            HirKind::Capture(cap) => stack.push(&cap.sub),
            HirKind::Concat(items) | HirKind::Alternation(items) => stack.extend(items),
        }
    }
    false
}

/// A literal in spec syntax: `"..."` with escapes, or `b"..."` if it is not UTF-8.
pub fn quote_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => format!("{text:?}"),
        Err(_) => {
            let mut out = String::from("b\"");
            for &b in bytes {
                match b {
                    b'"' => out.push_str("\\\""),
                    b'\\' => out.push_str("\\\\"),
                    0x20..=0x7e => out.push(b as char),
                    _ => out.push_str(&format!("\\x{b:02x}")),
                }
            }
            out.push('"');
            out
        }
    }
}

impl fmt::Display for Grammar {
    /// The grammar in spec syntax, one rule per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rule in &self.rules {
            writeln!(f, "<{}> ::= {}", rule.name, self.display_expr(rule.body))?;
        }
        Ok(())
    }
}

struct Builder<'a> {
    exprs: Vec<ExprNode>,
    by_name: &'a HashMap<String, SymbolId>,
    errors: &'a mut Vec<Diagnostic>,
    suggester: &'a Suggester<'a>,
    /// Suggestions made so far, by undefined name (a typo is often repeated).
    suggested: HashMap<String, Option<&'a str>>,
}

impl Builder<'_> {
    fn push(&mut self, kind: Expr, span: Span) -> ExprId {
        self.exprs.push(ExprNode { kind, span });
        ExprId(self.exprs.len() as u32 - 1)
    }

    /// Lowers children first, so that child ids are smaller than parent ids.
    fn lower(&mut self, e: &AstExpr) -> ExprId {
        let kind = match &e.kind {
            AstExprKind::Alt(alts) => Expr::Alt(alts.iter().map(|a| self.lower(a)).collect()),
            AstExprKind::Seq(items) => Expr::Seq(items.iter().map(|i| self.lower(i)).collect()),
            AstExprKind::Repeat { item, min, max } => Expr::Repeat(Repeat {
                item: self.lower(item),
                min: *min,
                max: *max,
            }),
            AstExprKind::Ref(name) => match self.by_name.get(name) {
                Some(&id) => Expr::Ref(id),
                None => {
                    let mut d = Diagnostic::error(
                        "undefined-rule",
                        format!("rule <{name}> is used but never defined"),
                        e.span,
                    )
                    .with_label_message("not defined");
                    let suggestion = match self.suggested.get(name) {
                        Some(&known) => known,
                        None => {
                            let found = self.suggester.suggest(name);
                            self.suggested.insert(name.clone(), found);
                            found
                        }
                    };
                    if let Some(s) = suggestion {
                        d = d.with_note(format!("did you mean <{s}>?"));
                    }
                    self.errors.push(d);
                    Expr::Literal(Box::default())
                }
            },
            AstExprKind::Literal(bytes) => Expr::Literal(bytes.clone().into_boxed_slice()),
            // Bits are written as the characters `0` and `1`: thicket's trees are bytes
            // (see `FanParts::uses_bits`).
            AstExprKind::Bit(bit) => Expr::Literal(Box::new([if *bit { b'1' } else { b'0' }])),
            AstExprKind::Regex(pattern) => match compile_regex(pattern) {
                Ok(hir) => Expr::Regex(Box::new(RegexTerminal {
                    pattern: pattern.clone(),
                    hir,
                })),
                Err(d) => {
                    // The pattern starts after `r"`.
                    let at = e.span.start as usize + 2;
                    let span = d
                        .span
                        .map_or(e.span, |(s, t)| Span::new(at + s, at + t.max(s + 1)));
                    self.errors.push(
                        Diagnostic::error(
                            "bad-regex",
                            format!("invalid regex terminal: {}", d.message),
                            span,
                        )
                        .with_label_message("here")
                        .with_secondary(e.span, "in this regex")
                        .with_note("regex terminals use Rust `regex` syntax"),
                    );
                    Expr::Literal(Box::default())
                }
            },
        };
        self.push(kind, e.span)
    }
}

pub(crate) struct RegexError {
    pub(crate) message: String,
    pub(crate) span: Option<(usize, usize)>,
}

/// Compiles a regex terminal. `(?-u:\xFF)` and friends allow arbitrary bytes.
pub(crate) fn compile_regex(pattern: &str) -> Result<Hir, RegexError> {
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .nest_limit(100)
        .build()
        .parse(pattern)
        .map_err(|e| {
            let (message, span) = match &e {
                regex_syntax::Error::Parse(p) => (p.kind().to_string(), Some(p.span())),
                regex_syntax::Error::Translate(t) => (t.kind().to_string(), Some(t.span())),
                _ => (e.to_string(), None),
            };
            RegexError {
                message,
                span: span.map(|s| (s.start.offset, s.end.offset)),
            }
        })?;
    // A terminal is matched or generated on its own, so there is no context for an
    // anchor or a word boundary to look at.
    if !hir.properties().look_set().is_empty() {
        return Err(RegexError {
            message: "anchors (`^`, `$`) and word boundaries (`\\b`) are not supported in regex terminals"
                .to_string(),
            span: None,
        });
    }
    Ok(hir)
}

fn unreferenced_rules(exprs: &[ExprNode], rules: &[Rule]) -> Vec<usize> {
    let mut used = vec![false; rules.len()];
    for e in exprs {
        if let Expr::Ref(s) = e.kind {
            used[s.index()] = true;
        }
    }
    (0..rules.len()).filter(|&i| !used[i]).collect()
}

/// The closest known name to `name`, if one is close enough to be a likely typo (see
/// [`Suggester::suggest`]; prepare a [`Suggester`] once for many lookups).
pub fn suggest<'a>(name: &str, known: impl Iterator<Item = &'a String>) -> Option<&'a str> {
    Suggester::new(known.map(String::as_str)).suggest(name)
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggestions_count_a_swap_of_neighbours_as_one_typo() {
        let known = [
            "value".to_string(),
            "values".to_string(),
            "start".to_string(),
        ];
        assert_eq!(suggest("vaule", known.iter()), Some("value"));
        assert_eq!(suggest("Value", known.iter()), Some("value"));
        assert_eq!(suggest("zebra", known.iter()), None);
    }

    #[test]
    fn may_produce_byte_sees_literals_and_regexes_reachable_from_the_start() {
        let grammar = |text: &str| crate::load_spec_text("t.fan", text.as_bytes()).unwrap();
        let one_line = grammar("<start> ::= \"a\" <b>\n<b> ::= r\"[0-9]+\"\n<c> ::= \"\\n\"\n");
        assert!(!one_line.may_produce_byte(b'\n'), "<c> is unreachable");
        assert!(one_line.may_produce_byte(b'7') && one_line.may_produce_byte(b'a'));
        assert!(grammar("<start> ::= \"a\\nb\"\n").may_produce_byte(b'\n'));
        assert!(grammar("<start> ::= r\"[ \\t\\n]*\"\n").may_produce_byte(b'\n'));
        assert!(grammar("<start> ::= r\"[^x]\"\n").may_produce_byte(b'\n'));
        let unicode = grammar("<start> ::= r\"[a-z\u{e9}]\"\n");
        assert!(unicode.may_produce_byte(0xc3) && !unicode.may_produce_byte(b'\n'));
    }
}
