//! The tokens of a spec: which parts of the grammar are its lexical level, the grammar
//! over those tokens that the token constraint solver works on, and the de-tokenizer.
//!
//! By default a **token** is
//! - a reference, from the phrase level, to a *regular* rule (one from which no
//!   recursive rule is reachable: the parts `thicket-parse` scans as one DFA token),
//!   unless that rule is a separator or has separators inside (then it is a phrase and
//!   its parts are tokens);
//! - a literal or regex terminal written directly at the phrase level (each distinct
//!   literal text is one token kind: every `"("` is the same kind).
//!
//! A **separator** is a regular rule, literal or regex whose every string is whitespace
//! (space, tab, CR, LF, VT, FF) or empty: separators are not tokens and are left out of
//! the token grammar; the de-tokenizer puts one space between tokens instead, which is
//! what a grammar with optional or mandatory whitespace between tokens accepts (and
//! what keeps `+ +` from becoming `++`). The phrase level is what the start rule derives
//! through references to rules that are not tokens. A caller can name the token rules
//! instead ([`Tokens::with_token_rules`]).

use crate::grammar::{Expr, ExprId, Grammar, SymbolId};
use crate::reach::{Components, refs_in};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::HashMap;

/// One kind of token.
#[derive(Clone, Debug)]
pub struct TokenKind {
    /// How it is shown: `"("` for a literal, `<identifier>` for a rule, `r"..."` for a
    /// regex.
    pub name: String,
    /// The text of a literal kind (its only value).
    pub literal: Option<Box<[u8]>>,
    /// The rule of a rule kind.
    pub rule: Option<SymbolId>,
    /// The regex terminal of a regex kind (its first occurrence).
    pub regex: Option<ExprId>,
}

/// A symbol of the token grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokSym {
    /// A token kind (index into [`Tokens::kinds`]).
    Token(u32),
    /// A nonterminal (index into [`TokenGrammar::names`]).
    Nonterminal(u32),
}

/// A context-free grammar over token kinds, in BNF: every nonterminal has a list of
/// alternatives, each a sequence of symbols. Nonterminal 0 is the start.
#[derive(Clone, Debug, Default)]
pub struct TokenGrammar {
    /// A name per nonterminal (a rule's name, or the expression it stands for).
    pub names: Vec<String>,
    /// The alternatives of each nonterminal.
    pub productions: Vec<Vec<Vec<TokSym>>>,
}

/// The tokens of a grammar, its token grammar and its de-tokenizer.
#[derive(Clone, Debug)]
pub struct Tokens {
    kinds: Vec<TokenKind>,
    /// Token kind of each phrase-level token occurrence.
    occurrence: HashMap<ExprId, u32>,
    grammar: TokenGrammar,
    token_rules: Vec<SymbolId>,
    separators: Vec<SymbolId>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whether every string of a regex is whitespace (or empty).
fn hir_whitespace_only(hir: &Hir) -> bool {
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(l) => {
                if !l.0.iter().all(|&b| is_space(b)) {
                    return false;
                }
            }
            HirKind::Class(Class::Unicode(c)) => {
                if !c
                    .ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(|ch| ch.is_ascii() && is_space(ch as u8)))
                {
                    return false;
                }
            }
            HirKind::Class(Class::Bytes(c)) => {
                if !c
                    .ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(is_space))
                {
                    return false;
                }
            }
            HirKind::Repetition(rep) => stack.push(&rep.sub),
            HirKind::Capture(cap) => stack.push(&cap.sub),
            HirKind::Concat(items) | HirKind::Alternation(items) => stack.extend(items),
        }
    }
    true
}

impl Tokens {
    /// The default tokens (see the module docs).
    pub fn new(grammar: &Grammar) -> Tokens {
        Tokens::build(grammar, None)
    }

    /// The tokens when exactly `rules` are the token rules (separators are still found
    /// as by default).
    pub fn with_token_rules(grammar: &Grammar, rules: &[SymbolId]) -> Tokens {
        Tokens::build(grammar, Some(rules))
    }

    /// The tokens when the rules named in `names` (`<name>` or `name`) are the token
    /// rules, the default tokens when `names` is empty; or the name of a rule the
    /// grammar lacks.
    pub fn with_rule_names<S: AsRef<str>>(
        grammar: &Grammar,
        names: &[S],
    ) -> Result<Tokens, String> {
        if names.is_empty() {
            return Ok(Tokens::new(grammar));
        }
        let mut ids = Vec::new();
        for name in names {
            let name = name
                .as_ref()
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>');
            ids.push(grammar.symbol(name).ok_or_else(|| format!("<{name}>"))?);
        }
        Ok(Tokens::with_token_rules(grammar, &ids))
    }

    fn build(grammar: &Grammar, explicit: Option<&[SymbolId]>) -> Tokens {
        let n = grammar.rules().len();
        let Lexical { regular, separator } = Lexical::of(grammar);
        let ws_expr = |e: ExprId| whitespace_only(grammar, &separator, e);
        let is_token_rule: Vec<bool> = match explicit {
            Some(rules) => {
                let mut v = vec![false; n];
                for s in rules {
                    v[s.index()] = true;
                }
                v
            }
            None => grammar
                .symbols()
                .map(|s| {
                    regular[s.index()]
                        && !separator[s.index()]
                        && s != grammar.start()
                        && !reach_any(grammar, grammar.rule(s).body, &separator)
                })
                .collect(),
        };
        let mut tokens = Tokens {
            kinds: Vec::new(),
            occurrence: HashMap::new(),
            grammar: TokenGrammar::default(),
            token_rules: grammar
                .symbols()
                .filter(|s| is_token_rule[s.index()])
                .collect(),
            separators: grammar.symbols().filter(|s| separator[s.index()]).collect(),
        };
        let mut builder = Builder {
            grammar,
            separator: &separator,
            is_token_rule: &is_token_rule,
            ws_expr: &ws_expr,
            rule_nt: HashMap::new(),
            expr_nt: HashMap::new(),
            literal_kind: HashMap::new(),
            rule_kind: HashMap::new(),
            regex_kind: HashMap::new(),
            todo: Vec::new(),
        };
        // Nonterminal 0: the start.
        tokens.grammar.names.push("start'".into());
        tokens.grammar.productions.push(Vec::new());
        let root = builder.sym(grammar.root(), &mut tokens);
        tokens.grammar.productions[0] = vec![root.into_iter().collect()];
        while let Some((nt, expr)) = builder.todo.pop() {
            let alts = builder.productions(expr, &mut tokens);
            tokens.grammar.productions[nt as usize] = alts;
        }
        tokens
    }

    /// The token kinds.
    pub fn kinds(&self) -> &[TokenKind] {
        &self.kinds
    }

    /// The grammar over the token kinds.
    pub fn grammar(&self) -> &TokenGrammar {
        &self.grammar
    }

    /// The rules that are tokens.
    pub fn token_rules(&self) -> &[SymbolId] {
        &self.token_rules
    }

    /// The separator rules (left out between tokens).
    pub fn separators(&self) -> &[SymbolId] {
        &self.separators
    }

    /// The kind of a token occurrence: a node of the grammar graph that, in a
    /// derivation tree, spans exactly one token.
    pub fn kind_of(&self, expr: ExprId) -> Option<u32> {
        self.occurrence.get(&expr).copied()
    }

    /// A kind by its name as shown (`"("`, `<identifier>`), or by a literal's text
    /// written plainly (`(`) or a rule's name without brackets.
    pub fn kind_by_name(&self, name: &str) -> Option<u32> {
        let hit = |k: &TokenKind| {
            k.name == name
                || k.literal.as_deref() == Some(name.as_bytes())
                || k.name.trim_start_matches('<').trim_end_matches('>') == name
        };
        // A literal's own text wins over a rule of the same name.
        self.kinds
            .iter()
            .position(|k| k.literal.as_deref() == Some(name.as_bytes()))
            .or_else(|| self.kinds.iter().position(hit))
            .map(|i| i as u32)
    }

    /// The literal kinds whose text is `text`.
    pub fn literal_kind(&self, text: &[u8]) -> Option<u32> {
        self.kinds
            .iter()
            .position(|k| k.literal.as_deref() == Some(text))
            .map(|i| i as u32)
    }

    /// Joins token texts into an input: one space between tokens (see the module docs).
    pub fn detokenize<T: AsRef<[u8]>>(texts: &[T]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(t.as_ref());
        }
        out
    }
}

/// The separator rules of `grammar` (see the module docs): the regular rules every
/// string of which is whitespace or empty, found without building its tokens.
pub fn separator_rules(grammar: &Grammar) -> Vec<SymbolId> {
    let separator = Lexical::of(grammar).separator;
    grammar.symbols().filter(|s| separator[s.index()]).collect()
}

/// Which rules are regular and which of those are separators, per symbol.
struct Lexical {
    regular: Vec<bool>,
    separator: Vec<bool>,
}

impl Lexical {
    /// Each rule is decided once, from the rules it refers to, taken in an order where
    /// those come first (the components' numbering): no reachability sets, whose size
    /// is quadratic in the number of rules.
    fn of(grammar: &Grammar) -> Lexical {
        let n = grammar.rules().len();
        let components = Components::new(grammar);
        let mut size = vec![0u32; n];
        for s in grammar.symbols() {
            size[components.number(s) as usize] += 1;
        }
        let mut order: Vec<SymbolId> = grammar.symbols().collect();
        order.sort_by_key(|&s| components.number(s));
        let (mut regular, mut separator) = (vec![false; n], vec![false; n]);
        for s in order {
            let body = grammar.rule(s).body;
            let (mut refs_regular, mut recursive) = (true, false);
            refs_in(grammar, body, |r| {
                recursive |= r == s;
                refs_regular &= regular[r.index()];
            });
            recursive |= size[components.number(s) as usize] > 1;
            regular[s.index()] = !recursive && refs_regular;
            separator[s.index()] = regular[s.index()] && whitespace_only(grammar, &separator, body);
        }
        Lexical { regular, separator }
    }
}

/// Whether every terminal `e` can reach is whitespace: its own terminals are, and every
/// rule it refers to is a separator.
fn whitespace_only(grammar: &Grammar, separator: &[bool], e: ExprId) -> bool {
    let mut stack = vec![e];
    while let Some(id) = stack.pop() {
        match grammar.expr(id) {
            Expr::Literal(b) => {
                if !b.iter().all(|&b| is_space(b)) {
                    return false;
                }
            }
            Expr::Regex(r) => {
                if !hir_whitespace_only(&r.hir) {
                    return false;
                }
            }
            Expr::Ref(s) => {
                if !separator[s.index()] {
                    return false;
                }
            }
            other => stack.extend_from_slice(other.children()),
        }
    }
    true
}

/// Whether any rule flagged in `flags` is referred to below `expr` (through references).
fn reach_any(grammar: &Grammar, expr: ExprId, flags: &[bool]) -> bool {
    let mut stack = vec![expr];
    let mut seen = vec![false; flags.len()];
    while let Some(id) = stack.pop() {
        match grammar.expr(id) {
            Expr::Ref(s) => {
                if flags[s.index()] {
                    return true;
                }
                if !std::mem::replace(&mut seen[s.index()], true) {
                    stack.push(grammar.rule(*s).body);
                }
            }
            other => stack.extend_from_slice(other.children()),
        }
    }
    false
}

struct Builder<'a, F: Fn(ExprId) -> bool> {
    grammar: &'a Grammar,
    separator: &'a [bool],
    is_token_rule: &'a [bool],
    ws_expr: &'a F,
    rule_nt: HashMap<SymbolId, u32>,
    expr_nt: HashMap<ExprId, u32>,
    literal_kind: HashMap<Box<[u8]>, u32>,
    rule_kind: HashMap<SymbolId, u32>,
    regex_kind: HashMap<String, u32>,
    /// Nonterminals whose productions are still to be made, with their expression.
    todo: Vec<(u32, ExprId)>,
}

impl<F: Fn(ExprId) -> bool> Builder<'_, F> {
    fn new_nt(&mut self, name: String, expr: ExprId, tokens: &mut Tokens) -> u32 {
        let nt = tokens.grammar.names.len() as u32;
        tokens.grammar.names.push(name);
        tokens.grammar.productions.push(Vec::new());
        self.todo.push((nt, expr));
        nt
    }

    fn kind(&mut self, tokens: &mut Tokens, kind: TokenKind) -> u32 {
        let id = tokens.kinds.len() as u32;
        tokens.kinds.push(kind);
        id
    }

    /// The token-grammar symbol for a phrase-level node; `None` for separators and
    /// the empty string.
    fn sym(&mut self, expr: ExprId, tokens: &mut Tokens) -> Option<TokSym> {
        let g = self.grammar;
        match g.expr(expr) {
            Expr::Literal(bytes) => {
                if bytes.iter().all(|&b| is_space(b)) {
                    return None;
                }
                let k = match self.literal_kind.get(bytes) {
                    Some(&k) => k,
                    None => {
                        let k = self.kind(
                            tokens,
                            TokenKind {
                                name: crate::grammar::quote_bytes(bytes),
                                literal: Some(bytes.clone()),
                                rule: None,
                                regex: None,
                            },
                        );
                        self.literal_kind.insert(bytes.clone(), k);
                        k
                    }
                };
                tokens.occurrence.insert(expr, k);
                Some(TokSym::Token(k))
            }
            Expr::Regex(r) => {
                if (self.ws_expr)(expr) {
                    return None;
                }
                let k = match self.regex_kind.get(&r.pattern) {
                    Some(&k) => k,
                    None => {
                        let k = self.kind(
                            tokens,
                            TokenKind {
                                name: format!("r{:?}", r.pattern),
                                literal: None,
                                rule: None,
                                regex: Some(expr),
                            },
                        );
                        self.regex_kind.insert(r.pattern.clone(), k);
                        k
                    }
                };
                tokens.occurrence.insert(expr, k);
                Some(TokSym::Token(k))
            }
            Expr::Ref(s) => {
                let s = *s;
                if self.separator[s.index()] && !self.is_token_rule[s.index()] {
                    return None;
                }
                if self.is_token_rule[s.index()] {
                    let k = match self.rule_kind.get(&s) {
                        Some(&k) => k,
                        None => {
                            let k = self.kind(
                                tokens,
                                TokenKind {
                                    name: format!("<{}>", g.rule(s).name),
                                    literal: None,
                                    rule: Some(s),
                                    regex: None,
                                },
                            );
                            self.rule_kind.insert(s, k);
                            k
                        }
                    };
                    tokens.occurrence.insert(expr, k);
                    return Some(TokSym::Token(k));
                }
                let nt = match self.rule_nt.get(&s) {
                    Some(&nt) => nt,
                    None => {
                        let nt =
                            self.new_nt(format!("<{}>", g.rule(s).name), g.rule(s).body, tokens);
                        self.rule_nt.insert(s, nt);
                        nt
                    }
                };
                Some(TokSym::Nonterminal(nt))
            }
            Expr::Alt(_) | Expr::Seq(_) | Expr::Repeat(_) => {
                let nt = match self.expr_nt.get(&expr) {
                    Some(&nt) => nt,
                    None => {
                        let nt = self.new_nt(g.display_expr(expr), expr, tokens);
                        self.expr_nt.insert(expr, nt);
                        nt
                    }
                };
                Some(TokSym::Nonterminal(nt))
            }
        }
    }

    /// The alternatives of the nonterminal standing for `expr`.
    fn productions(&mut self, expr: ExprId, tokens: &mut Tokens) -> Vec<Vec<TokSym>> {
        let g = self.grammar;
        match g.expr(expr) {
            Expr::Alt(children) => children
                .iter()
                .map(|&c| self.sym(c, tokens).into_iter().collect())
                .collect(),
            Expr::Seq(children) => {
                vec![
                    children
                        .iter()
                        .filter_map(|&c| self.sym(c, tokens))
                        .collect(),
                ]
            }
            Expr::Repeat(rep) => {
                let Some(item) = self.sym(rep.item, tokens) else {
                    return vec![Vec::new()];
                };
                let head = vec![item; rep.min as usize];
                match rep.max {
                    None => {
                        // N -> item^min R; R -> ε | R item (left recursion: cheap for Earley).
                        let r = tokens.grammar.names.len() as u32;
                        tokens
                            .grammar
                            .names
                            .push(format!("{}*", g.display_expr(rep.item)));
                        tokens
                            .grammar
                            .productions
                            .push(vec![Vec::new(), vec![TokSym::Nonterminal(r), item]]);
                        let mut p = head;
                        p.push(TokSym::Nonterminal(r));
                        vec![p]
                    }
                    Some(max) => {
                        // N -> item^min O_k; O_j -> ε | item O_(j-1): linear in max - min.
                        let mut tail: Option<u32> = None;
                        for _ in rep.min..max {
                            let o = tokens.grammar.names.len() as u32;
                            tokens
                                .grammar
                                .names
                                .push(format!("{}?", g.display_expr(rep.item)));
                            let mut more = vec![item];
                            more.extend(tail.map(TokSym::Nonterminal));
                            tokens.grammar.productions.push(vec![Vec::new(), more]);
                            tail = Some(o);
                        }
                        let mut p = head;
                        p.extend(tail.map(TokSym::Nonterminal));
                        vec![p]
                    }
                }
            }
            Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_) => {
                vec![self.sym(expr, tokens).into_iter().collect()]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_spec_text;

    #[test]
    fn literals_and_regular_rules_are_tokens_whitespace_is_not() {
        let g = load_spec_text(
            "t.fan",
            b"<start> ::= <ws> <e> <ws>\n<e> ::= <e> <ws> \"+\" <ws> <id> | \"(\" <e> \")\" | <id>\n\
              <id> ::= r\"[a-z]+\"\n<ws> ::= \" \"*\n",
        )
        .unwrap();
        let t = Tokens::new(&g);
        let names: Vec<&str> = t.kinds().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        for n in ["\"+\"", "\"(\"", "\")\"", "<id>"] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        assert_eq!(t.separators().len(), 1);
        assert_eq!(t.kind_by_name("+"), t.kind_by_name("\"+\""));
        assert_eq!(t.kind_by_name("id"), t.kind_by_name("<id>"));
        assert!(t.kind_by_name("-").is_none());
        assert_eq!(Tokens::detokenize(&["a", "+", "+"]), b"a + +");
    }

    #[test]
    fn separators_are_regular_rules_of_whitespace_only() {
        let g = load_spec_text(
            "t.fan",
            b"<start> ::= <ws> <nl> <loop> <word> <mixed> <cycle>\n<ws> ::= \" \"* | r\"[\\t ]+\"\n\
              <nl> ::= \"\\n\" <ws>\n<loop> ::= \"\" | \" \" <loop>\n<word> ::= \"a\" <ws>\n\
              <mixed> ::= <ws> | <word>\n<cycle> ::= \" \" <back> | \"\"\n<back> ::= <cycle>\n",
        )
        .unwrap();
        let names: Vec<&str> = separator_rules(&g)
            .iter()
            .map(|&s| g.rule(s).name.as_str())
            .collect();
        // `<loop>` and `<cycle>` make only blanks but are recursive; `<word>` and
        // `<mixed>` can make a letter.
        assert_eq!(names, ["ws", "nl"]);
    }

    #[test]
    fn a_regular_rule_with_separators_inside_is_a_phrase() {
        let g = load_spec_text(
            "t.fan",
            b"<start> ::= <decl>\n<decl> ::= \"var\" <sp> <id> \";\"\n<id> ::= r\"[a-z]+\"\n<sp> ::= \" \"+\n",
        )
        .unwrap();
        let t = Tokens::new(&g);
        assert_eq!(t.kinds().len(), 3);
        let explicit = Tokens::with_token_rules(&g, &[g.symbol("decl").unwrap()]);
        assert_eq!(explicit.kinds().len(), 1);
    }

    #[test]
    fn token_rules_by_name_with_or_without_brackets() {
        let g = crate::load_spec_text(
            "t.bnf",
            b"<start> ::= <word> (\" \" <word>)*\n<word> ::= <letter>+\n<letter> ::= r\"[a-z]\"\n",
        )
        .unwrap();
        let word = g.symbol("word").unwrap();
        let by_name = Tokens::with_rule_names(&g, &["<word>"]).unwrap();
        let by_id = Tokens::with_token_rules(&g, &[word]);
        assert_eq!(by_name.kinds().len(), by_id.kinds().len());
        assert_eq!(
            Tokens::with_rule_names(&g, &[" word "])
                .unwrap()
                .kinds()
                .len(),
            by_id.kinds().len()
        );
        let none: [&str; 0] = [];
        assert_eq!(
            Tokens::with_rule_names(&g, &none).unwrap().kinds().len(),
            Tokens::new(&g).kinds().len()
        );
        assert_eq!(
            Tokens::with_rule_names(&g, &["<nope>"]).err(),
            Some("<nope>".to_string())
        );
    }
}
