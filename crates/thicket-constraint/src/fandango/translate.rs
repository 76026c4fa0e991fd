//! Translation of parsed Fandango constraints into Core (see the module docs of
//! [`crate::fandango`] for what is native and what goes to the host).

use super::ast::{self, BinOp, CmpOp, DotKind, DotSelection, Expr, ExprKind, UnOp};
use super::atoms::{Assignment, HostKind, HostPredicate, ParamSource, PathStep, SelectionCount};
use super::lexer::{StrValue, Tok};
use crate::formula::{
    Connective, Domain, Formula, PredArg, PredicateCall, Quantifier, Var, VarId, VarType,
};
use crate::host::{HostExpr, Joint, SharedHost};
use crate::predicates;
use crate::smt::{Func, Term, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use thicket_grammar::{Diagnostic, Expr as GExpr, Grammar, Span, SymbolId};

type TResult<T> = Result<T, Box<Diagnostic>>;

/// A host expression a constraint uses, and why it is not native.
#[derive(Clone, Debug)]
pub struct HostUse {
    /// The expression and its parameters.
    pub expr: HostExpr,
    /// Where its Fandango text is.
    pub span: Span,
    /// What each parameter stands for, as written in the constraint.
    pub params: Vec<String>,
    /// The construct that needs Python, in words.
    pub reason: String,
}

/// Why an expression is not translated natively: the construct and where it is.
#[derive(Clone, Debug)]
pub(crate) struct NotNative {
    pub reason: String,
    pub span: Span,
}

fn not_native<T>(reason: impl Into<String>, span: Span) -> Result<T, NotNative> {
    Err(NotNative {
        reason: reason.into(),
        span,
    })
}

/// What the characters of a symbol's texts can be, for `int()`; each class holds the
/// ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum NumClass {
    /// ASCII digits only.
    Digits,
    /// ASCII digits, `+` and `-`.
    Signed,
    /// ASCII characters (where Python's `int()` reads no Unicode digit).
    Ascii,
    /// Anything else.
    Other,
}

impl NumClass {
    /// The class of texts joined from texts of both classes.
    fn join(self, other: NumClass) -> NumClass {
        self.max(other)
    }
}

/// What a string term is known to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StrInfo {
    class: NumClass,
    nonempty: bool,
}

/// How a symbol's text can be empty. Fandango's `int(tree)` of an empty tree is 0 when
/// the tree has no terminal at all (an empty repetition), and raises when it has an
/// empty terminal (`""`, a regex matching nothing): the tree's value is empty rather
/// than the empty string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Emptiness {
    /// Empty with no terminal in the tree.
    bare: bool,
    /// Empty with an empty terminal in the tree.
    terminal: bool,
}

/// Facts about the grammar's symbols that translation needs.
pub(crate) struct SymbolFacts {
    class: Vec<NumClass>,
    nonempty: Vec<bool>,
    empty: Vec<Emptiness>,
    /// Per symbol: whether its subtrees can hold bits (Fandango's `0`/`1`), whose
    /// value is not their text but the bytes or the integer they pack into.
    bits: Vec<bool>,
}

impl SymbolFacts {
    pub(crate) fn new(grammar: &Grammar) -> SymbolFacts {
        let n = grammar.rules().len();
        // Bytes each symbol can produce (and whether a non-ASCII character can), to a
        // fixed point over the rules.
        let mut bytes = vec![[false; 256]; n];
        let mut non_ascii = vec![false; n];
        loop {
            let mut changed = false;
            for s in 0..n {
                let mut set = bytes[s];
                let mut wide = non_ascii[s];
                collect_bytes(
                    grammar,
                    grammar.rules()[s].body,
                    &bytes,
                    &non_ascii,
                    &mut set,
                    &mut wide,
                );
                if set != bytes[s] || wide != non_ascii[s] {
                    bytes[s] = set;
                    non_ascii[s] = wide;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let analysis = thicket_grammar::Analysis::new(grammar);
        let class = (0..n)
            .map(|s| {
                let only = |ok: &dyn Fn(u8) -> bool| {
                    !non_ascii[s] && (0..=255u8).all(|b| !bytes[s][b as usize] || ok(b))
                };
                if only(&|b: u8| b.is_ascii_digit()) {
                    NumClass::Digits
                } else if only(&|b: u8| b.is_ascii_digit() || b == b'+' || b == b'-') {
                    NumClass::Signed
                } else if only(&|b: u8| b.is_ascii()) {
                    NumClass::Ascii
                } else {
                    NumClass::Other
                }
            })
            .collect();
        let nonempty = (0..n)
            .map(|s| analysis.rule_min_len(SymbolId::from_index(s)) > 0)
            .collect();
        let mut empty = vec![Emptiness::default(); n];
        loop {
            let mut changed = false;
            for s in 0..n {
                let e = emptiness(grammar, grammar.rules()[s].body, &empty);
                if e != empty[s] {
                    empty[s] = e;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        SymbolFacts {
            class,
            nonempty,
            empty,
            bits: vec![false; n],
        }
    }

    /// Records which terminals of `grammar` are bits, and so which symbols hold them.
    pub(crate) fn set_bits(
        &mut self,
        grammar: &Grammar,
        bit_terminals: &[thicket_grammar::ExprId],
    ) {
        fn holds(
            grammar: &Grammar,
            expr: thicket_grammar::ExprId,
            bit_terminals: &[thicket_grammar::ExprId],
            bits: &[bool],
        ) -> bool {
            match grammar.expr(expr) {
                GExpr::Literal(_) | GExpr::Regex(_) => bit_terminals.contains(&expr),
                GExpr::Ref(s) => bits[s.index()],
                other => other
                    .children()
                    .iter()
                    .any(|&c| holds(grammar, c, bit_terminals, bits)),
            }
        }
        self.bits = vec![false; grammar.rules().len()];
        if bit_terminals.is_empty() {
            return;
        }
        loop {
            let mut changed = false;
            for (s, rule) in grammar.rules().iter().enumerate() {
                if !self.bits[s] && holds(grammar, rule.body, bit_terminals, &self.bits) {
                    self.bits[s] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Whether a tree of `symbol` can hold bits.
    fn holds_bits(&self, symbol: SymbolId) -> bool {
        self.bits.get(symbol.index()).copied().unwrap_or(false)
    }

    fn info(&self, symbol: SymbolId) -> StrInfo {
        StrInfo {
            class: self.class[symbol.index()],
            nonempty: self.nonempty[symbol.index()],
        }
    }
}

fn emptiness(grammar: &Grammar, expr: thicket_grammar::ExprId, symbols: &[Emptiness]) -> Emptiness {
    match grammar.expr(expr) {
        GExpr::Literal(lit) => Emptiness {
            bare: false,
            terminal: lit.is_empty(),
        },
        GExpr::Regex(r) => Emptiness {
            bare: false,
            terminal: r.hir.properties().minimum_len() == Some(0),
        },
        GExpr::Ref(s) => symbols[s.index()],
        GExpr::Seq(items) => {
            let parts: Vec<Emptiness> = items
                .iter()
                .map(|&c| emptiness(grammar, c, symbols))
                .collect();
            Emptiness {
                bare: parts.iter().all(|p| p.bare),
                terminal: parts.iter().all(|p| p.bare || p.terminal)
                    && parts.iter().any(|p| p.terminal),
            }
        }
        GExpr::Alt(items) => items.iter().fold(Emptiness::default(), |acc, &c| {
            let e = emptiness(grammar, c, symbols);
            Emptiness {
                bare: acc.bare || e.bare,
                terminal: acc.terminal || e.terminal,
            }
        }),
        GExpr::Repeat(r) => {
            let item = emptiness(grammar, r.item, symbols);
            Emptiness {
                bare: r.min == 0 || item.bare,
                terminal: item.terminal,
            }
        }
    }
}

fn collect_bytes(
    grammar: &Grammar,
    expr: thicket_grammar::ExprId,
    bytes: &[[bool; 256]],
    non_ascii: &[bool],
    set: &mut [bool; 256],
    wide: &mut bool,
) {
    match grammar.expr(expr) {
        GExpr::Literal(lit) => lit.iter().for_each(|&b| set[b as usize] = true),
        GExpr::Ref(s) => {
            for (b, &on) in bytes[s.index()].iter().enumerate() {
                set[b] |= on;
            }
            *wide |= non_ascii[s.index()];
        }
        GExpr::Regex(r) => hir_bytes(&r.hir, set, wide),
        other => {
            for &c in other.children() {
                collect_bytes(grammar, c, bytes, non_ascii, set, wide);
            }
        }
    }
}

fn hir_bytes(hir: &regex_syntax::hir::Hir, set: &mut [bool; 256], wide: &mut bool) {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => lit.0.iter().for_each(|&b| set[b as usize] = true),
        HirKind::Class(Class::Bytes(c)) => {
            for r in c.iter() {
                (r.start()..=r.end()).for_each(|b| set[b as usize] = true);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            for r in c.iter() {
                if r.end() as u32 > 0x7F {
                    *wide = true;
                }
                let (lo, hi) = (r.start() as u32, (r.end() as u32).min(0x7F));
                (lo..=hi).for_each(|b| set[b as usize] = true);
            }
        }
        HirKind::Repetition(r) => hir_bytes(&r.sub, set, wide),
        HirKind::Capture(c) => hir_bytes(&c.sub, set, wide),
        HirKind::Concat(v) | HirKind::Alternation(v) => {
            v.iter().for_each(|h| hir_bytes(h, set, wide))
        }
    }
}

/// A resolved step of a selector.
#[derive(Clone, Debug)]
enum RStep {
    /// A bound `<x>`: that tree, once per current tree.
    Bound(VarId),
    /// Every `<a>` in the current tree (itself included).
    Desc(SymbolId),
    /// The direct `<a>` children.
    Child(SymbolId),
    /// `[slices]`: children by index (host only).
    Item(Vec<ast::RsSlice>),
    /// A nonterminal the grammar does not have: selects nothing.
    Unknown(String),
}

#[derive(Clone, Debug)]
struct RPath {
    /// Steps with the offset in the source where each ends (for variable names).
    steps: Vec<(RStep, u32)>,
    /// Where the selector starts.
    start: u32,
}

/// A quantifier layer a selector turns into.
#[derive(Clone, Debug)]
struct Layer {
    var: VarId,
    symbol: SymbolId,
    domain: Domain,
    span: Span,
}

/// A placeholder of an atom: a selector occurrence.
#[derive(Clone, Debug)]
struct Placeholder {
    kind: PKind,
    path: RPath,
    /// The expression it is written as (`<a>.<b>`, `*<a>`, `|<a>|`, `len(*<a>)`).
    span: Span,
    /// For a tree placeholder bound natively: its variable and symbol.
    bound: Option<(VarId, SymbolId)>,
    /// For a tree placeholder with trailing `[...]`: the slices (applied in Python).
    item: Option<Vec<ast::RsSlice>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PKind {
    Tree,
    Star,
    Count,
}

/// A natively translated value.
#[derive(Clone, Debug)]
enum Val {
    Bool(Formula),
    Int(Term),
    Str(Term, StrInfo),
    Tree(VarId, SymbolId),
    /// `t.value()`.
    TreeValue(VarId, SymbolId),
    /// A tuple, list or set display.
    Seq(Vec<Native>),
}

/// A value and when computing it raises (Python semantics).
#[derive(Clone, Debug)]
struct Native {
    val: Val,
    raises: Option<Formula>,
}

impl Native {
    fn plain(val: Val) -> Native {
        Native { val, raises: None }
    }
}

fn app(f: Func, args: Vec<Term>) -> Term {
    Term::App(f, Vec::new(), args)
}

fn int(i: i128) -> Term {
    Term::Const(Value::Int(i))
}

fn string(s: &str) -> Term {
    Term::Const(Value::Str(s.to_string()))
}

fn constant(b: bool, span: Span) -> Formula {
    Formula::Smt(Term::Const(Value::Bool(b)), span)
}

fn f_not(f: Formula) -> Formula {
    match f {
        Formula::Smt(Term::Const(Value::Bool(b)), s) => constant(!b, s),
        Formula::Not(inner) => *inner,
        other => Formula::Not(Box::new(other)),
    }
}

fn f_bin(c: Connective, a: Formula, b: Formula) -> Formula {
    let konst = |f: &Formula| match f {
        Formula::Smt(Term::Const(Value::Bool(b)), _) => Some(*b),
        _ => None,
    };
    match (c, konst(&a), konst(&b)) {
        (Connective::And, Some(true), _) | (Connective::Or, Some(false), _) => b,
        (Connective::And, _, Some(true)) | (Connective::Or, _, Some(false)) => a,
        (Connective::And, Some(false), _) | (Connective::Or, Some(true), _) => a,
        (Connective::And, _, Some(false)) | (Connective::Or, _, Some(true)) => b,
        _ => Formula::Binary(c, Box::new(a), Box::new(b)),
    }
}

fn f_and(a: Formula, b: Formula) -> Formula {
    f_bin(Connective::And, a, b)
}

fn f_or(a: Formula, b: Formula) -> Formula {
    f_bin(Connective::Or, a, b)
}

fn or_opt(a: Option<Formula>, b: Option<Formula>) -> Option<Formula> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(f_or(a, b)),
    }
}

fn and_opt(cond: Formula, raises: Option<Formula>) -> Option<Formula> {
    raises.map(|r| f_and(cond, r))
}

/// The term of an SMT formula (for `ite`), if it is one.
fn as_term(f: &Formula) -> Option<Term> {
    match f {
        Formula::Smt(t, _) => Some(t.clone()),
        Formula::Not(inner) => as_term(inner).map(|t| app(Func::Not, vec![t])),
        Formula::Binary(c @ (Connective::And | Connective::Or), a, b) => {
            let f = if *c == Connective::And {
                Func::And
            } else {
                Func::Or
            };
            Some(app(f, vec![as_term(a)?, as_term(b)?]))
        }
        _ => None,
    }
}

/// Builds a Core quantifier with its evaluation hints.
pub(crate) fn quantifier(
    universal: bool,
    var: VarId,
    symbol: SymbolId,
    domain: Domain,
    body: Formula,
    span: Span,
) -> Formula {
    let outermost_only = Quantifier::nested_instances_implied(universal, var, None, &body);
    let local = Quantifier::instance_local(var, None, &body);
    let distinct = Quantifier::pairwise_distinct(universal, var, domain, symbol, None, &body);
    Formula::Quantifier(Box::new(Quantifier {
        universal,
        var,
        symbol,
        domain,
        mexpr: None,
        body,
        span,
        outermost_only,
        local,
        distinct,
    }))
}

/// What a host atom evaluates.
#[derive(Clone, Copy)]
enum HostSides {
    Expression(Span),
    Comparison(Span, CmpOp, Span),
}

/// A scope entry: a quantifier's bound name.
#[derive(Clone, Debug)]
struct Scoped {
    nonterminal: bool,
    name: String,
    var: VarId,
    symbol: SymbolId,
}

/// The translator of one constraint or goal.
pub(crate) struct Translator<'a> {
    grammar: &'a Grammar,
    text: &'a str,
    facts: &'a SymbolFacts,
    host: Option<SharedHost>,
    /// Names the spec's Python code defines: a call of such a name is the spec's
    /// function, never a built-in the translator knows.
    spec_names: &'a BTreeSet<String>,
    pub vars: Vec<Var>,
    scope: Vec<Scoped>,
    pub hosts: Vec<HostUse>,
    pub warnings: Vec<Diagnostic>,
    /// Whether the constraint is a single atom (Fandango checks its symbols).
    top_level_atom: bool,
    next_param: usize,
}

impl<'a> Translator<'a> {
    pub(crate) fn new(
        grammar: &'a Grammar,
        text: &'a str,
        facts: &'a SymbolFacts,
        host: Option<SharedHost>,
        spec_names: &'a BTreeSet<String>,
        span: Span,
    ) -> Translator<'a> {
        let start = Var {
            name: "start".into(),
            ty: VarType::Tree(grammar.start()),
            span,
        };
        Translator {
            grammar,
            text,
            facts,
            host,
            spec_names,
            vars: vec![start],
            scope: Vec::new(),
            hosts: Vec::new(),
            warnings: Vec::new(),
            top_level_atom: false,
            next_param: 0,
        }
    }

    fn declare(&mut self, name: String, ty: VarType, span: Span) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(Var { name, ty, span });
        id
    }

    fn written(&self, span: Span) -> String {
        self.text[span.range()]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn error(&self, code: &'static str, message: impl Into<String>, span: Span) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(code, message, span))
    }

    /// The Core formula of a constraint.
    pub(crate) fn constraint(&mut self, f: &ast::Formula) -> TResult<Formula> {
        self.top_level_atom = matches!(f, ast::Formula::Comparison(_) | ast::Formula::Expr(_));
        self.formula(f)
    }

    fn formula(&mut self, f: &ast::Formula) -> TResult<Formula> {
        Ok(match f {
            ast::Formula::Quantifier(q) => self.quantifier(q)?,
            ast::Formula::Or(parts, _) | ast::Formula::And(parts, _) => {
                let c = if matches!(f, ast::Formula::Or(..)) {
                    Connective::Or
                } else {
                    Connective::And
                };
                let mut out: Option<Formula> = None;
                for p in parts {
                    let g = self.formula(p)?;
                    out = Some(match out {
                        None => g,
                        Some(acc) => Formula::Binary(c, Box::new(acc), Box::new(g)),
                    });
                }
                out.expect("two or more parts")
            }
            ast::Formula::Implies(a, b, _) => {
                let a = self.formula(a)?;
                let b = self.formula(b)?;
                Formula::Binary(Connective::Implies, Box::new(a), Box::new(b))
            }
            ast::Formula::Comparison(c) => self.comparison_atom(c)?,
            ast::Formula::Expr(e) => self.expression_atom(e)?,
        })
    }

    // --- selectors ------------------------------------------------------------------

    fn lookup_nonterminal(&self, name: &str) -> Option<&Scoped> {
        self.scope
            .iter()
            .rev()
            .find(|s| s.nonterminal && s.name == name)
    }

    fn lookup_identifier(&self, name: &str) -> Option<&Scoped> {
        self.scope
            .iter()
            .rev()
            .find(|s| !s.nonterminal && s.name == name)
    }

    /// Resolves a selector into steps (`direct`: its first selection takes direct
    /// children rather than descendants).
    fn path(&self, sel: &DotSelection) -> TResult<RPath> {
        let mut steps = Vec::new();
        self.flatten(sel, false, &mut steps)?;
        Ok(RPath {
            steps,
            start: sel.span.start,
        })
    }

    fn flatten(
        &self,
        sel: &DotSelection,
        direct: bool,
        out: &mut Vec<(RStep, u32)>,
    ) -> TResult<()> {
        match &sel.kind {
            DotKind::Selection(s) => self.selection(s, direct, out),
            DotKind::Child(base, s) => {
                self.flatten(base, direct, out)?;
                self.selection(s, true, out)
            }
            DotKind::Descendant(base, s) => {
                self.flatten(base, direct, out)?;
                self.selection(s, false, out)
            }
        }
    }

    fn selection(
        &self,
        s: &ast::Selection,
        direct: bool,
        out: &mut Vec<(RStep, u32)>,
    ) -> TResult<()> {
        match &s.base {
            ast::BaseSelection::Nonterminal(n) => {
                let step = match self.lookup_nonterminal(&n.text) {
                    Some(b) => RStep::Bound(b.var),
                    None => match self.grammar.symbol(&n.text) {
                        Some(sym) if direct => RStep::Child(sym),
                        Some(sym) => RStep::Desc(sym),
                        None => {
                            if self.top_level_atom {
                                let names: Vec<String> = self
                                    .grammar
                                    .rules()
                                    .iter()
                                    .map(|r| r.name.clone())
                                    .collect();
                                let mut d = Diagnostic::error(
                                    "unknown-nonterminal",
                                    format!("the grammar has no nonterminal <{}>", n.text),
                                    n.span,
                                )
                                .with_label_message("not a rule of the grammar");
                                if let Some(s) =
                                    thicket_grammar::grammar::suggest(&n.text, names.iter())
                                {
                                    d = d.with_note(format!("did you mean <{s}>?"));
                                }
                                return Err(Box::new(d));
                            }
                            RStep::Unknown(n.text.clone())
                        }
                    },
                };
                out.push((step, n.span.end));
            }
            ast::BaseSelection::Paren(inner) => self.flatten(inner, direct, out)?,
        }
        match &s.suffix {
            None => {}
            Some(ast::Suffix::Slices(slices, span)) => {
                out.push((RStep::Item(slices.clone()), span.end))
            }
            Some(ast::Suffix::Pairs(pairs, span)) => {
                // `{*<a>}` selects every `<a>` in each tree, as `..<a>` does; slices and
                // several pairs (list arithmetic in Fandango's order) are not supported.
                if let [
                    ast::RsPair {
                        symbol,
                        slice: None,
                    },
                ] = pairs.as_slice()
                {
                    match self.grammar.symbol(&symbol.text) {
                        Some(sym) => out.push((RStep::Desc(sym), span.end)),
                        None => out.push((RStep::Unknown(symbol.text.clone()), span.end)),
                    }
                } else {
                    return Err(self.error(
                        "fandango-unsupported",
                        "selections with several `*<a>` pairs or slices inside `{...}` are not supported",
                        *span,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Quantifier layers binding each tree a path selects: the final variable and its
    /// symbol, or `None` if the path selects nothing (an unknown nonterminal). Fails on
    /// `[...]` (which only Python evaluates).
    fn layers(
        &mut self,
        path: &RPath,
        final_name: Option<&str>,
    ) -> TResult<Option<(Vec<Layer>, VarId, SymbolId)>> {
        let mut layers = Vec::new();
        let mut current = VarId::START;
        let mut symbol = self.grammar.start();
        let last = path.steps.len().saturating_sub(1);
        for (i, (step, end)) in path.steps.iter().enumerate() {
            let span = Span::new(path.start as usize, *end as usize);
            let name = match final_name {
                Some(n) if i == last => n.to_string(),
                _ => self.written(span),
            };
            let (sym, domain) = match step {
                RStep::Bound(v) => {
                    current = *v;
                    symbol = match self.vars[v.index()].ty {
                        VarType::Tree(s) => s,
                        VarType::Int => unreachable!("bound selectors are trees"),
                    };
                    continue;
                }
                RStep::Desc(s) => (*s, Domain::Within(current)),
                RStep::Child(s) => (*s, Domain::Children { parent: current }),
                RStep::Unknown(n) => {
                    self.warnings.push(
                        Diagnostic::warning(
                            "unknown-nonterminal",
                            format!("the grammar has no nonterminal <{n}>: this selects nothing"),
                            span,
                        )
                        .with_note("Fandango, too, selects nothing here"),
                    );
                    return Ok(None);
                }
                RStep::Item(_) => {
                    return Err(self.error(
                        "fandango-unsupported",
                        "selecting children by index (`[...]`) is supported only at the end of a selector inside an expression",
                        span,
                    ));
                }
            };
            let var = self.declare(name, VarType::Tree(sym), span);
            layers.push(Layer {
                var,
                symbol: sym,
                domain,
                span,
            });
            current = var;
            symbol = sym;
        }
        Ok(Some((layers, current, symbol)))
    }

    fn wrap(universal: bool, layers: &[Layer], mut body: Formula) -> Formula {
        for l in layers.iter().rev() {
            body = quantifier(universal, l.var, l.symbol, l.domain, body, l.span);
        }
        body
    }

    /// The path of a `*`/`|..|` selection for a predicate: steps from the root, and
    /// the bound variables its bound steps refer to (appended to `bound`).
    fn predicate_path(
        &self,
        path: &RPath,
        bound: &mut Vec<VarId>,
        span: Span,
    ) -> TResult<Vec<PathStep>> {
        let mut steps = Vec::new();
        for (step, _) in &path.steps {
            steps.push(match step {
                RStep::Bound(v) => {
                    let i = bound.iter().position(|b| b == v).unwrap_or_else(|| {
                        bound.push(*v);
                        bound.len() - 1
                    });
                    PathStep::Bound(i)
                }
                RStep::Desc(s) => PathStep::Descendants(*s),
                RStep::Child(s) => PathStep::Children(*s),
                RStep::Unknown(n) => {
                    return Err(self.error(
                        "unknown-nonterminal",
                        format!("the grammar has no nonterminal <{n}>"),
                        span,
                    ));
                }
                RStep::Item(_) => {
                    return Err(self.error(
                        "fandango-unsupported",
                        "selecting children by index (`[...]`) inside `*...` or `|...|` is not supported",
                        span,
                    ));
                }
            });
        }
        Ok(steps)
    }

    // --- quantifiers ----------------------------------------------------------------

    fn quantifier(&mut self, q: &ast::Quantifier) -> TResult<Formula> {
        let path = self.path(&q.domain)?;
        let name = q.bound.name();
        let display = match &q.bound {
            ast::Bound::Nonterminal(n) => format!("<{}>", n.text),
            ast::Bound::Identifier(n) => n.text.clone(),
        };
        if let Some((_, span)) = path.steps.iter().find(|(s, _)| matches!(s, RStep::Item(_))) {
            return Err(self.error(
                "fandango-unsupported",
                "quantifying over children by index (`[...]`) is not supported",
                Span::new(path.start as usize, *span as usize),
            ));
        }
        let Some((layers, var, symbol)) = self.layers(&path, Some(&display))? else {
            // Nothing to range over.
            return Ok(constant(q.universal, q.head));
        };
        let mark = self.scope.len();
        self.scope.push(Scoped {
            nonterminal: matches!(q.bound, ast::Bound::Nonterminal(_)),
            name: name.text.clone(),
            var,
            symbol,
        });
        let body = self.formula(&q.body);
        self.scope.truncate(mark);
        let mut body = body?;
        // Layers carry the head's span, for explanations.
        let layers: Vec<Layer> = layers
            .into_iter()
            .map(|l| Layer { span: q.head, ..l })
            .collect();
        body = Self::wrap(q.universal, &layers, body);
        Ok(body)
    }

    // --- atoms ----------------------------------------------------------------------

    fn collect(&self, e: &Expr, out: &mut Vec<Placeholder>) -> TResult<()> {
        let mut push = |kind: PKind, sel: &DotSelection, span: Span, this: &Self| -> TResult<()> {
            let path = this.path(sel)?;
            let mut item = None;
            let mut path = path;
            if kind == PKind::Tree
                && let Some((RStep::Item(slices), _)) = path.steps.last()
            {
                item = Some(slices.clone());
                path.steps.pop();
            }
            out.push(Placeholder {
                kind,
                path,
                span,
                bound: None,
                item,
            });
            Ok(())
        };
        match &e.kind {
            ExprKind::Selector(s) => push(PKind::Tree, s, e.span, self)?,
            ExprKind::Star(s) => push(PKind::Star, s, e.span, self)?,
            ExprKind::Length(s) => push(PKind::Count, s, e.span, self)?,
            ExprKind::DoubleStar(_) => {
                return Err(Box::new(
                    Diagnostic::error(
                        "fandango-population",
                        "population-wide selections (`**`) are not supported",
                        e.span,
                    )
                    .with_note("Fandango 1.3 no longer supports them either; use `*`"),
                ));
            }
            _ => {}
        }
        for child in children(e) {
            self.collect(child, out)?;
        }
        Ok(())
    }

    /// Binds an atom's tree placeholders: their quantifier layers (all universal: every
    /// combination must satisfy the atom), or `None` if one selects nothing.
    fn bind_placeholders(
        &mut self,
        placeholders: &mut [Placeholder],
    ) -> TResult<Option<Vec<Layer>>> {
        let mut layers = Vec::new();
        for p in placeholders.iter_mut() {
            if p.kind != PKind::Tree {
                continue;
            }
            let written = self.written(p.span);
            match self.layers(&p.path, Some(&written))? {
                None => return Ok(None),
                Some((l, var, symbol)) => {
                    layers.extend(l);
                    p.bound = Some((var, symbol));
                }
            }
        }
        Ok(Some(layers))
    }

    fn expression_atom(&mut self, e: &Expr) -> TResult<Formula> {
        let mut ps = Vec::new();
        self.collect(e, &mut ps)?;
        let Some(layers) = self.bind_placeholders(&mut ps)? else {
            return Ok(constant(true, e.span));
        };
        let mut counts = Vec::new();
        let native = self.native(e, true, &mut ps, &mut counts);
        let body = match native {
            Ok(n) => {
                let value = self.truthy(&n, e.span);
                match value {
                    Ok(v) => f_and(n.raises.map_or(constant(true, e.span), f_not), v),
                    Err(why) => {
                        counts.clear();
                        self.expression_host(e, &mut ps, why)?
                    }
                }
            }
            Err(why) => {
                counts.clear();
                // `a and b`: each conjunct on its own (an exception in one makes the
                // conjunction false either way).
                if let ExprKind::BoolOp(true, parts) = &e.kind {
                    let mut acc: Option<Formula> = None;
                    for part in parts {
                        let mut part_counts = Vec::new();
                        let f = match self.native(part, true, &mut ps, &mut part_counts) {
                            Ok(n) => match self.truthy(&n, part.span) {
                                Ok(v) => {
                                    f_and(n.raises.map_or(constant(true, part.span), f_not), v)
                                }
                                Err(why) => {
                                    part_counts.clear();
                                    self.expression_host(part, &mut ps, why)?
                                }
                            },
                            Err(why) => self.expression_host(part, &mut ps, why)?,
                        };
                        let f = self.wrap_counts(part_counts, f);
                        acc = Some(match acc {
                            None => f,
                            Some(a) => f_and(a, f),
                        });
                    }
                    acc.expect("two or more parts")
                } else {
                    self.expression_host(e, &mut ps, why)?
                }
            }
        };
        let body = self.wrap_counts(counts, body);
        Ok(Self::wrap(true, &layers, body))
    }

    fn comparison_atom(&mut self, c: &ast::Comparison) -> TResult<Formula> {
        let mut ps = Vec::new();
        self.collect(&c.left, &mut ps)?;
        self.collect(&c.right, &mut ps)?;
        let Some(layers) = self.bind_placeholders(&mut ps)? else {
            return Ok(constant(true, c.span));
        };
        let mut counts = Vec::new();
        let native = (|| {
            let l = self.native(&c.left, false, &mut ps, &mut counts)?;
            let r = self.native(&c.right, false, &mut ps, &mut counts)?;
            let (v, cmp_raises) = self.compare(c.op, &l.val, &r.val, c.span)?;
            let checked = f_and(cmp_raises.map_or(constant(true, c.span), f_not), v);
            // A side that raises skips the combination.
            Ok(match or_opt(l.raises, r.raises) {
                Some(skip) => f_or(skip, checked),
                None => checked,
            })
        })();
        let body = match native {
            Ok(f) => self.wrap_counts(counts, f),
            Err(why) => self.comparison_host(c, &mut ps, why)?,
        };
        Ok(Self::wrap(true, &layers, body))
    }

    /// Wraps `body` in `exists int n: selection_count(..., n) and ...` for each count.
    fn wrap_counts(&mut self, counts: Vec<(VarId, Formula)>, mut body: Formula) -> Formula {
        for (var, call) in counts.into_iter().rev() {
            let span = match &call {
                Formula::Predicate(p) => p.span,
                _ => Span::default(),
            };
            body = Formula::IntQuantifier {
                universal: false,
                var,
                body: Box::new(f_and(call, body)),
                span,
            };
        }
        body
    }

    // --- host atoms -----------------------------------------------------------------

    fn require_host(&self, why: &NotNative) -> TResult<SharedHost> {
        self.host.clone().ok_or_else(|| {
            Box::new(
                Diagnostic::error(
                    "needs-python",
                    format!("this constraint needs Python: {}", why.reason),
                    why.span,
                )
                .with_label_message("evaluated by Python in Fandango")
                .with_note(
                    "thicket translates selectors, comparisons, `str`, `int`, `len` and \
                     arithmetic itself; other Python needs a Python host",
                ),
            )
        })
    }

    /// The parameters of a host expression over `span`: the placeholders inside it and
    /// the bound identifiers it reads. Returns the Python source, the predicate's tree
    /// arguments, the parameter sources, names and what each stands for.
    #[allow(clippy::type_complexity)]
    fn host_params(
        &mut self,
        spans: &[Span],
        ps: &[Placeholder],
    ) -> TResult<(
        Vec<String>,
        Vec<VarId>,
        Vec<ParamSource>,
        Vec<String>,
        Vec<String>,
    )> {
        let mut args: Vec<VarId> = Vec::new();
        let arg_index = |v: VarId, args: &mut Vec<VarId>| {
            args.iter().position(|&a| a == v).unwrap_or_else(|| {
                args.push(v);
                args.len() - 1
            })
        };
        let mut sources = Vec::new();
        let mut names = Vec::new();
        let mut meaning = Vec::new();
        let mut replacements: Vec<(Span, String)> = Vec::new();
        let inside = |s: Span| spans.iter().any(|o| o.start <= s.start && s.end <= o.end);
        for p in ps.iter().filter(|p| inside(p.span)) {
            let name = format!("_fan{}", self.next_param);
            self.next_param += 1;
            let source = match p.kind {
                PKind::Tree => {
                    let (var, _) = p.bound.expect("tree placeholders are bound");
                    ParamSource::Tree(arg_index(var, &mut args))
                }
                PKind::Star | PKind::Count => {
                    let mut bound = Vec::new();
                    let steps = self.predicate_path(&p.path, &mut bound, p.span)?;
                    let base = arg_index(VarId::START, &mut args);
                    let steps = steps
                        .into_iter()
                        .map(|s| match s {
                            PathStep::Bound(i) => PathStep::Bound(arg_index(bound[i], &mut args)),
                            other => other,
                        })
                        .collect();
                    if p.kind == PKind::Star {
                        ParamSource::Trees { base, steps }
                    } else {
                        ParamSource::Count { base, steps }
                    }
                }
            };
            let text = match &p.item {
                Some(slices) => format!("{name}[{}]", python_slices(slices)),
                None => name.clone(),
            };
            replacements.push((p.span, text));
            sources.push(source);
            meaning.push(self.written(p.span));
            names.push(name);
        }
        // Identifiers bound by `any`/`all` that the expression reads.
        let placeholder_spans: Vec<Span> = ps.iter().map(|p| p.span).collect();
        for span in spans {
            for ident in self.free_identifiers(*span, &placeholder_spans) {
                if let Some(s) = self.lookup_identifier(&ident).cloned()
                    && !names.contains(&ident)
                {
                    sources.push(ParamSource::Tree(arg_index(s.var, &mut args)));
                    meaning.push(ident.clone());
                    names.push(ident);
                }
            }
        }
        let sources_text = spans
            .iter()
            .map(|s| python_source(self.text, *s, &replacements))
            .collect();
        Ok((sources_text, args, sources, names, meaning))
    }

    /// Names read in the expression at `span` that are not bound inside it (by a
    /// lambda or comprehension).
    fn free_identifiers(&self, span: Span, placeholders: &[Span]) -> Vec<String> {
        let Ok(tokens) =
            super::lexer::tokenize(self.text, span.start as usize, span.end as usize, 0)
        else {
            return Vec::new();
        };
        // Conservative: every name token that is not an attribute (after `.`) and not
        // a keyword argument; names a lambda or comprehension binds that shadow a
        // quantifier's identifier are passed too, harmlessly.
        let mut out = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            if placeholders
                .iter()
                .any(|p| p.start <= t.span.start && t.span.end <= p.end)
            {
                continue;
            }
            if let Tok::Name(n) = &t.tok {
                let after_dot = i > 0 && tokens[i - 1].tok == Tok::Op(".");
                let keyword = tokens.get(i + 1).is_some_and(|n| n.tok == Tok::Op("="));
                if !after_dot && !keyword && !out.contains(n) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    /// A host atom over `sides`: one expression (an expression constraint) or the two
    /// sides of a comparison constraint.
    fn host_atom(
        &mut self,
        whole: Span,
        sides: HostSides,
        ps: &[Placeholder],
        why: NotNative,
    ) -> TResult<Formula> {
        let host = self.require_host(&why)?;
        let spans = match sides {
            HostSides::Expression(e) => vec![e],
            HostSides::Comparison(l, _, r) => vec![l, r],
        };
        let (texts, args, sources, names, meaning) = self.host_params(&spans, ps)?;
        let expr = |source: String| HostExpr {
            source,
            params: names.clone(),
        };
        let (main, kind) = match sides {
            HostSides::Expression(_) => (expr(texts[0].clone()), HostKind::Expression),
            HostSides::Comparison(_, op, _) => (
                expr(format!("({}) {} ({})", texts[0], op.python(), texts[1])),
                HostKind::Comparison {
                    left: expr(format!("({}) is None or True", texts[0])),
                    right: expr(format!("({}) is None or True", texts[1])),
                    assign: (op == CmpOp::Eq)
                        .then(|| assignment(&texts, &names, &sources))
                        .flatten()
                        .map(|(target, param, side)| {
                            let holds_bits = match self.vars[args[target].index()].ty {
                                VarType::Tree(s) => self.facts.holds_bits(s),
                                VarType::Int => false,
                            };
                            let value = &texts[side];
                            if holds_bits {
                                return Box::new(Assignment {
                                    target,
                                    value: expr(bits_of(value, &names[param])),
                                    joint: None,
                                });
                            }
                            let (a, b) = (&texts[0], &texts[1]);
                            let t = &names[param];
                            let joint = if side == 1 {
                                format!(
                                    "(({a}) == ({JOINT_VALUE} := {WATCHED}({t}, lambda: ({b}))), \
                                     {JOINT_VALUE})"
                                )
                            } else {
                                format!(
                                    "(({JOINT_VALUE} := {WATCHED}({t}, lambda: ({a}))) == ({b}), \
                                     {JOINT_VALUE})"
                                )
                            };
                            Box::new(Assignment {
                                target,
                                value: expr(value.clone()),
                                joint: Some(Joint {
                                    expr: expr(joint),
                                    target: param,
                                }),
                            })
                        }),
                },
            ),
        };
        self.hosts.push(HostUse {
            expr: main.clone(),
            span: whole,
            params: meaning,
            reason: why.reason,
        });
        let arity = args.len();
        let predicate = HostPredicate::new(main, sources, kind, host, arity);
        Ok(Formula::Predicate(PredicateCall {
            predicate: Arc::new(predicate),
            args: args.into_iter().map(PredArg::Var).collect(),
            span: whole,
        }))
    }

    fn expression_host(
        &mut self,
        e: &Expr,
        ps: &mut [Placeholder],
        why: NotNative,
    ) -> TResult<Formula> {
        self.host_atom(e.span, HostSides::Expression(e.span), ps, why)
    }

    fn comparison_host(
        &mut self,
        c: &ast::Comparison,
        ps: &mut [Placeholder],
        why: NotNative,
    ) -> TResult<Formula> {
        self.host_atom(
            c.span,
            HostSides::Comparison(c.left.span, c.op, c.right.span),
            ps,
            why,
        )
    }

    // --- native expressions ---------------------------------------------------------

    fn placeholder_at(&self, ps: &[Placeholder], span: Span) -> Option<usize> {
        ps.iter().position(|p| p.span == span)
    }

    /// Translates `e` natively; `boolean`: whether only its truth value matters.
    fn native(
        &mut self,
        e: &Expr,
        boolean: bool,
        ps: &mut [Placeholder],
        counts: &mut Vec<(VarId, Formula)>,
    ) -> Result<Native, NotNative> {
        let span = e.span;
        match &e.kind {
            ExprKind::Selector(_) => {
                let i = self.placeholder_at(ps, span).expect("collected");
                if ps[i].item.is_some() {
                    return not_native("selecting children by index (`[...]`) on a tree", span);
                }
                let (var, symbol) = ps[i].bound.expect("bound");
                self.tree_value(var, symbol, span)
            }
            ExprKind::Length(_) => {
                let i = self.placeholder_at(ps, span).expect("collected");
                let var = {
                    {
                        let mut bound = Vec::new();
                        let steps =
                            self.predicate_path(&ps[i].path, &mut bound, span)
                                .map_err(|d| NotNative {
                                    reason: d.message,
                                    span,
                                })?;
                        let written = self.written(span);
                        let var = self.declare(written.clone(), VarType::Int, span);
                        let predicate = SelectionCount::new(steps, bound.len(), written);
                        let mut args = vec![PredArg::Var(VarId::START), PredArg::Var(var)];
                        args.extend(bound.into_iter().map(PredArg::Var));
                        counts.push((
                            var,
                            Formula::Predicate(PredicateCall {
                                predicate: Arc::new(predicate),
                                args,
                                span,
                            }),
                        ));
                        var
                    }
                };
                Ok(Native::plain(Val::Int(app(
                    Func::StrToInt,
                    vec![Term::Var(var)],
                ))))
            }
            ExprKind::Star(_) => not_native("a list of trees (`*...`) used as a value", span),
            ExprKind::DoubleStar(_) => not_native("`**`", span),
            ExprKind::Name(n) => match self.lookup_identifier(n) {
                Some(s) => self.tree_value(s.var, s.symbol, span),
                None => not_native(format!("`{n}` is a name of the spec's Python code"), span),
            },
            ExprKind::Int(Some(i)) => Ok(Native::plain(Val::Int(int(*i)))),
            ExprKind::Int(None) => not_native("an integer beyond 128 bits", span),
            ExprKind::Float => not_native("floating-point numbers", span),
            ExprKind::Str(Some(StrValue::Text(t))) => {
                Ok(Native::plain(Val::Str(string(t), literal_info(t))))
            }
            ExprKind::Str(Some(StrValue::Bytes(b))) if b.is_ascii() => {
                let t = String::from_utf8(b.clone()).expect("ASCII");
                Ok(Native::plain(Val::Str(string(&t), literal_info(&t))))
            }
            ExprKind::Str(_) => not_native("a bytes literal with non-ASCII bytes", span),
            ExprKind::Bool(b) => Ok(Native::plain(Val::Bool(constant(*b, span)))),
            ExprKind::None => not_native("`None`", span),
            ExprKind::Ellipsis => not_native("`...`", span),
            ExprKind::FString(parts) => {
                let mut terms = Vec::new();
                let mut raises = None;
                for part in parts {
                    match part {
                        ast::FPart::Text(t) => terms.push(string(t)),
                        ast::FPart::Field {
                            expr,
                            conversion: None,
                            spec,
                        } if spec.is_empty() => {
                            let n = self.native(expr, false, ps, counts)?;
                            let (t, _) = self.to_str(&n.val, expr.span)?;
                            raises = or_opt(raises, n.raises);
                            terms.push(t);
                        }
                        ast::FPart::Field { .. } => {
                            return not_native("f-string conversions and format specs", span);
                        }
                    }
                }
                let term = match terms.len() {
                    0 => string(""),
                    1 => terms.pop().expect("one"),
                    _ => app(Func::StrConcat, terms),
                };
                Ok(Native {
                    val: Val::Str(
                        term,
                        StrInfo {
                            class: NumClass::Other,
                            nonempty: false,
                        },
                    ),
                    raises,
                })
            }
            ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::Set(items) => {
                let mut out = Vec::new();
                for item in items {
                    if matches!(item.kind, ExprKind::Starred(_)) {
                        return not_native("unpacking (`*x`) in a display", item.span);
                    }
                    out.push(self.native(item, false, ps, counts)?);
                }
                Ok(Native::plain(Val::Seq(out)))
            }
            ExprKind::Unary(UnOp::Not, inner) => {
                let n = self.native(inner, true, ps, counts)?;
                let v = self.truthy(&n, inner.span)?;
                Ok(Native {
                    val: Val::Bool(f_not(v)),
                    raises: n.raises,
                })
            }
            ExprKind::Unary(op, inner) => {
                let n = self.native(inner, false, ps, counts)?;
                let Val::Int(t) = n.val else {
                    return not_native("unary arithmetic on a non-integer", span);
                };
                let t = match op {
                    UnOp::Neg => app(Func::Neg, vec![t]),
                    UnOp::Pos => t,
                    UnOp::Invert => app(Func::Sub, vec![app(Func::Neg, vec![t]), int(1)]),
                    UnOp::Not => unreachable!("handled above"),
                };
                Ok(Native {
                    val: Val::Int(t),
                    raises: n.raises,
                })
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, span, ps, counts),
            ExprKind::BoolOp(and, parts) => {
                if !boolean {
                    return not_native("`and`/`or` used for a value, not a truth value", span);
                }
                let mut value: Option<Formula> = None;
                let mut raises: Option<Formula> = None;
                // Raises if a part raises and every part before it let evaluation go on.
                let mut reached = constant(true, span);
                for part in parts {
                    let n = self.native(part, true, ps, counts)?;
                    let v = self.truthy(&n, part.span)?;
                    raises = or_opt(raises, and_opt(reached.clone(), n.raises));
                    reached = f_and(reached, if *and { v.clone() } else { f_not(v.clone()) });
                    value = Some(match value {
                        None => v,
                        Some(acc) => {
                            if *and {
                                f_and(acc, v)
                            } else {
                                f_or(acc, v)
                            }
                        }
                    });
                }
                Ok(Native {
                    val: Val::Bool(value.expect("two or more parts")),
                    raises,
                })
            }
            ExprKind::Compare(first, rest) => {
                let mut left = self.native(first, false, ps, counts)?;
                let mut value = constant(true, span);
                let mut raises = left.raises.take();
                for (op, right_expr) in rest {
                    let right = self.native(right_expr, false, ps, counts)?;
                    raises = or_opt(raises, and_opt(value.clone(), right.raises.clone()));
                    let (v, cmp_raises) = match op {
                        CmpOp::In | CmpOp::NotIn => {
                            let v = self.contains(&left.val, &right.val, span)?;
                            (if *op == CmpOp::In { v } else { f_not(v) }, None)
                        }
                        CmpOp::Is | CmpOp::IsNot => return not_native("`is`", span),
                        _ => self.compare(*op, &left.val, &right.val, span)?,
                    };
                    raises = or_opt(raises, and_opt(value.clone(), cmp_raises));
                    value = f_and(value, v);
                    left = right;
                }
                Ok(Native {
                    val: Val::Bool(value),
                    raises,
                })
            }
            ExprKind::IfExp { test, body, orelse } => {
                let t = self.native(test, true, ps, counts)?;
                let c = self.truthy(&t, test.span)?;
                let a = self.native(body, boolean, ps, counts)?;
                let b = self.native(orelse, boolean, ps, counts)?;
                let raises = or_opt(
                    t.raises,
                    or_opt(
                        and_opt(c.clone(), a.raises.clone()),
                        and_opt(f_not(c.clone()), b.raises.clone()),
                    ),
                );
                let val = if boolean {
                    let (va, vb) = (self.truthy(&a, body.span)?, self.truthy(&b, orelse.span)?);
                    Val::Bool(f_or(f_and(c.clone(), va), f_and(f_not(c), vb)))
                } else {
                    let Some(ct) = as_term(&c) else {
                        return not_native("a conditional whose condition calls Python", span);
                    };
                    match (a.val, b.val) {
                        (Val::Int(x), Val::Int(y)) => Val::Int(app(Func::Ite, vec![ct, x, y])),
                        (Val::Str(x, i), Val::Str(y, j)) => Val::Str(
                            app(Func::Ite, vec![ct, x, y]),
                            StrInfo {
                                class: i.class.join(j.class),
                                nonempty: i.nonempty && j.nonempty,
                            },
                        ),
                        _ => {
                            return not_native("a conditional of mixed or non-scalar values", span);
                        }
                    }
                };
                Ok(Native { val, raises })
            }
            ExprKind::Call(func, args) => self.call(func, args, span, ps, counts),
            ExprKind::Subscript(obj, index) => {
                let n = self.native(obj, false, ps, counts)?;
                let (t, info) = match &n.val {
                    Val::Str(t, info) => (t.clone(), *info),
                    Val::Tree(..) | Val::TreeValue(..) => {
                        return not_native("indexing a tree (its children)", span);
                    }
                    _ => return not_native("indexing a non-string", span),
                };
                let len = app(Func::StrLen, vec![t.clone()]);
                let literal = |e: &Option<Box<Expr>>| -> Result<Option<i128>, NotNative> {
                    match e.as_deref() {
                        None => Ok(None),
                        Some(Expr {
                            kind: ExprKind::Int(Some(i)),
                            ..
                        }) if *i >= 0 => Ok(Some(*i)),
                        Some(other) => not_native(
                            "a slice bound that is not a non-negative literal",
                            other.span,
                        ),
                    }
                };
                let info = StrInfo {
                    class: info.class,
                    nonempty: false,
                };
                match &index.kind {
                    ExprKind::Int(Some(i)) => {
                        let (at, out_of_range) = if *i >= 0 {
                            (int(*i), app(Func::Le, vec![len.clone(), int(*i)]))
                        } else {
                            (
                                app(Func::Add, vec![len.clone(), int(*i)]),
                                app(Func::Lt, vec![len.clone(), int(-*i)]),
                            )
                        };
                        Ok(Native {
                            val: Val::Str(
                                app(Func::StrAt, vec![t, at]),
                                StrInfo {
                                    class: info.class,
                                    nonempty: true,
                                },
                            ),
                            raises: or_opt(n.raises, Some(Formula::Smt(out_of_range, span))),
                        })
                    }
                    ExprKind::Unary(UnOp::Neg, inner)
                        if matches!(inner.kind, ExprKind::Int(Some(_))) =>
                    {
                        let ExprKind::Int(Some(k)) = inner.kind else {
                            unreachable!()
                        };
                        Ok(Native {
                            val: Val::Str(
                                app(
                                    Func::StrAt,
                                    vec![t, app(Func::Sub, vec![len.clone(), int(k)])],
                                ),
                                StrInfo {
                                    class: info.class,
                                    nonempty: true,
                                },
                            ),
                            raises: or_opt(
                                n.raises,
                                Some(Formula::Smt(app(Func::Lt, vec![len, int(k)]), span)),
                            ),
                        })
                    }
                    ExprKind::Slice(lo, hi, None) => {
                        let lo = literal(lo)?.unwrap_or(0);
                        let sub = match literal(hi)? {
                            Some(hi) => {
                                app(Func::StrSubstr, vec![t, int(lo), int((hi - lo).max(0))])
                            }
                            None => app(
                                Func::StrSubstr,
                                vec![t, int(lo), app(Func::Sub, vec![len, int(lo)])],
                            ),
                        };
                        Ok(Native {
                            val: Val::Str(sub, info),
                            raises: n.raises,
                        })
                    }
                    _ => not_native("this kind of index or slice", index.span),
                }
            }
            ExprKind::Attribute(..) => not_native("attribute access", span),
            ExprKind::Dict(_) => not_native("dictionaries", span),
            ExprKind::Starred(_) => not_native("unpacking (`*x`)", span),
            ExprKind::Comprehension { .. } => not_native("a comprehension used as a value", span),
            ExprKind::Slice(..) => not_native("a slice", span),
            ExprKind::Lambda { .. } => not_native("`lambda`", span),
            ExprKind::Await(_) => not_native("`await`", span),
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        span: Span,
        ps: &mut [Placeholder],
        counts: &mut Vec<(VarId, Formula)>,
    ) -> Result<Native, NotNative> {
        let x = self.native(a, false, ps, counts)?;
        let y = self.native(b, false, ps, counts)?;
        let raises = or_opt(x.raises, y.raises);
        let text = |v: &Val| match v {
            Val::Str(t, i) => Some((t.clone(), *i)),
            Val::TreeValue(var, s) | Val::Tree(var, s) => {
                Some((Term::Var(*var), self.facts.info(*s)))
            }
            _ => None,
        };
        let val = match (op, &x.val, &y.val) {
            (BinOp::Add, Val::Int(p), Val::Int(q)) => {
                Val::Int(app(Func::Add, vec![p.clone(), q.clone()]))
            }
            (BinOp::Sub, Val::Int(p), Val::Int(q)) => {
                Val::Int(app(Func::Sub, vec![p.clone(), q.clone()]))
            }
            (BinOp::Mul, Val::Int(p), Val::Int(q)) => {
                Val::Int(app(Func::Mul, vec![p.clone(), q.clone()]))
            }
            (BinOp::FloorDiv | BinOp::Mod, Val::Int(p), Val::Int(Term::Const(Value::Int(d))))
                if *d > 0 =>
            {
                // Floor and Euclidean division agree for positive divisors.
                let f = if op == BinOp::FloorDiv {
                    Func::Div
                } else {
                    Func::Mod
                };
                Val::Int(app(f, vec![p.clone(), int(*d)]))
            }
            (BinOp::Pow, Val::Int(p), Val::Int(Term::Const(Value::Int(k))))
                if (0..=16).contains(k) =>
            {
                let mut t = int(1);
                for _ in 0..*k {
                    t = app(Func::Mul, vec![t, p.clone()]);
                }
                Val::Int(t)
            }
            // A tree's value takes the type of the other operand: `tree + 1` is
            // `int(tree) + 1`, `tree + "a"` joins texts.
            (BinOp::Add | BinOp::Sub, Val::Tree(..) | Val::TreeValue(..), Val::Int(n))
            | (BinOp::Add | BinOp::Sub, Val::Int(n), Val::Tree(..) | Val::TreeValue(..)) => {
                let tree_first = matches!(x.val, Val::Tree(..) | Val::TreeValue(..));
                let (t, r) = self.to_int(if tree_first { &x.val } else { &y.val }, span)?;
                let (p, q) = if tree_first {
                    (t, n.clone())
                } else {
                    (n.clone(), t)
                };
                let f = if op == BinOp::Add {
                    Func::Add
                } else {
                    Func::Sub
                };
                return Ok(Native {
                    val: Val::Int(app(f, vec![p, q])),
                    raises: or_opt(raises, r),
                });
            }
            (BinOp::Add, _, _) if text(&x.val).is_some() && text(&y.val).is_some() => {
                let ((p, i), (q, j)) = (text(&x.val).expect("text"), text(&y.val).expect("text"));
                Val::Str(
                    app(Func::StrConcat, vec![p, q]),
                    StrInfo {
                        class: i.class.join(j.class),
                        nonempty: i.nonempty || j.nonempty,
                    },
                )
            }
            _ => {
                return not_native(
                    format!("the operator `{}` on these values", binop_text(op)),
                    span,
                );
            }
        };
        Ok(Native { val, raises })
    }

    fn call(
        &mut self,
        func: &Expr,
        args: &[ast::Arg],
        span: Span,
        ps: &mut [Placeholder],
        counts: &mut Vec<(VarId, Formula)>,
    ) -> Result<Native, NotNative> {
        let positional: Vec<&Expr> = args
            .iter()
            .filter_map(|a| match a {
                ast::Arg::Positional(e) if !matches!(e.kind, ExprKind::Starred(_)) => Some(e),
                _ => None,
            })
            .collect();
        if positional.len() != args.len() {
            return not_native("keyword or unpacked arguments", span);
        }
        match &func.kind {
            ExprKind::Name(name)
                if self.lookup_identifier(name).is_none() && !self.spec_names.contains(name) =>
            {
                match (name.as_str(), positional.as_slice()) {
                    ("str", [x]) => {
                        let n = self.native(x, false, ps, counts)?;
                        let (t, info) = self.to_str(&n.val, x.span)?;
                        Ok(Native {
                            val: Val::Str(t, info),
                            raises: n.raises,
                        })
                    }
                    ("int", [x]) => {
                        let n = self.native(x, false, ps, counts)?;
                        let (t, r) = self.to_int(&n.val, x.span)?;
                        Ok(Native {
                            val: Val::Int(t),
                            raises: or_opt(n.raises, r),
                        })
                    }
                    ("int", [x, base]) => {
                        let n = self.native(x, false, ps, counts)?;
                        let base = match self.native(base, false, ps, counts)?.val {
                            Val::Int(Term::Const(Value::Int(b))) if (2..=36).contains(&b) => {
                                b as u32
                            }
                            _ => {
                                return not_native(
                                    "`int()` with a base other than a number from 2 to 36",
                                    span,
                                );
                            }
                        };
                        match &n.val {
                            // `int(tree, base)` raises TypeError: a tree is no string.
                            Val::Tree(..) => Ok(Native {
                                val: Val::Int(int(0)),
                                raises: Some(constant(true, span)),
                            }),
                            Val::Str(t, info) if info.class != NumClass::Other => {
                                let (value, malformed) = int_with_base(t, base, span);
                                Ok(Native {
                                    val: Val::Int(value),
                                    raises: or_opt(n.raises, Some(malformed)),
                                })
                            }
                            Val::Str(..) => not_native(
                                "`int()` with a base of text that may hold non-ASCII characters (Python reads Unicode digits)",
                                span,
                            ),
                            _ => {
                                not_native("`int()` with a base of a value that is no string", span)
                            }
                        }
                    }
                    ("len", [x]) => {
                        let n = self.native(x, false, ps, counts)?;
                        let val = match &n.val {
                            Val::Str(t, _) => Val::Int(app(Func::StrLen, vec![t.clone()])),
                            Val::Seq(items) => Val::Int(int(items.len() as i128)),
                            Val::Tree(..) => {
                                return not_native(
                                    "`len()` of a tree (its number of children)",
                                    span,
                                );
                            }
                            _ => return not_native("`len()` of this value", span),
                        };
                        Ok(Native {
                            val,
                            raises: n.raises,
                        })
                    }
                    ("abs", [x]) => {
                        let n = self.native(x, false, ps, counts)?;
                        match n.val {
                            Val::Int(t) => Ok(Native {
                                val: Val::Int(app(Func::Abs, vec![t])),
                                raises: n.raises,
                            }),
                            _ => not_native("`abs()` of a non-integer", span),
                        }
                    }
                    ("bool", [x]) => {
                        let n = self.native(x, true, ps, counts)?;
                        let v = self.truthy(&n, x.span)?;
                        Ok(Native {
                            val: Val::Bool(v),
                            raises: n.raises,
                        })
                    }
                    ("min" | "max", items) if items.len() >= 2 => {
                        let mut acc: Option<Term> = None;
                        let mut raises = None;
                        for item in items {
                            let n = self.native(item, false, ps, counts)?;
                            let Val::Int(t) = n.val else {
                                return not_native(format!("`{name}()` of non-integers"), span);
                            };
                            raises = or_opt(raises, n.raises);
                            acc = Some(match acc {
                                None => t,
                                Some(a) => {
                                    let keep = if name == "min" { Func::Le } else { Func::Ge };
                                    app(
                                        Func::Ite,
                                        vec![app(keep, vec![a.clone(), t.clone()]), a, t],
                                    )
                                }
                            });
                        }
                        Ok(Native {
                            val: Val::Int(acc.expect("two or more")),
                            raises,
                        })
                    }
                    ("any" | "all", [arg]) => {
                        self.comprehension(name == "all", arg, span, ps, counts)
                    }
                    ("is_before" | "is_after", [scope, x, y]) => {
                        let mut tree = |e: &Expr| -> Result<VarId, NotNative> {
                            match self.native(e, false, ps, counts)?.val {
                                Val::Tree(v, _) => Ok(v),
                                _ => {
                                    not_native(format!("`{name}` of a value that is no tree"), span)
                                }
                            }
                        };
                        let (scope, x, y) = (tree(scope)?, tree(x)?, tree(y)?);
                        // `is_after(t, a, b)` is `is_before(t, b, a)`.
                        let (first, second) = if name == "is_before" { (x, y) } else { (y, x) };
                        let call = |predicate, a, b| {
                            Formula::Predicate(PredicateCall {
                                predicate,
                                args: vec![PredArg::Var(a), PredArg::Var(b)],
                                span,
                            })
                        };
                        let mut holds = call(predicates::precedes(), first, second);
                        if scope != VarId::START {
                            holds = f_and(
                                f_and(
                                    call(predicates::inside(), first, scope),
                                    call(predicates::inside(), second, scope),
                                ),
                                holds,
                            );
                        }
                        Ok(Native::plain(Val::Bool(holds)))
                    }
                    _ => not_native(format!("a call of `{name}`"), span),
                }
            }
            ExprKind::Attribute(obj, method) => {
                let n = self.native(obj, false, ps, counts)?;
                let text = match &n.val {
                    Val::Str(t, i) => Some((t.clone(), *i)),
                    Val::Tree(v, s) | Val::TreeValue(v, s) => {
                        Some((Term::Var(*v), self.facts.info(*s)))
                    }
                    _ => None,
                };
                let Some((t, _)) = text else {
                    return not_native(format!("the method `{}`", method.text), span);
                };
                match (method.text.as_str(), positional.as_slice()) {
                    ("value", []) => match n.val {
                        Val::Tree(v, s) => Ok(Native::plain(Val::TreeValue(v, s))),
                        _ => not_native("`.value()` of a non-tree", span),
                    },
                    (m @ ("startswith" | "endswith"), [arg]) => {
                        let a = self.native(arg, false, ps, counts)?;
                        let Val::Str(p, _) = a.val else {
                            return not_native(format!("`{m}` with a non-string argument"), span);
                        };
                        let f = if m == "startswith" {
                            Func::StrPrefixOf
                        } else {
                            Func::StrSuffixOf
                        };
                        Ok(Native {
                            val: Val::Bool(Formula::Smt(app(f, vec![p, t]), span)),
                            raises: or_opt(n.raises, a.raises),
                        })
                    }
                    ("find", [arg]) => {
                        let a = self.native(arg, false, ps, counts)?;
                        let Val::Str(p, _) = a.val else {
                            return not_native("`find` with a non-string argument", span);
                        };
                        Ok(Native {
                            val: Val::Int(app(Func::StrIndexOf, vec![t, p, int(0)])),
                            raises: or_opt(n.raises, a.raises),
                        })
                    }
                    _ => not_native(format!("the method `{}`", method.text), span),
                }
            }
            _ => not_native("this call", span),
        }
    }

    /// `any(body for x in *SEL)` / `all(...)` as Python evaluates it: native when the
    /// body cannot raise (then the order of the list does not matter).
    fn comprehension(
        &mut self,
        universal: bool,
        arg: &Expr,
        span: Span,
        ps: &mut [Placeholder],
        counts: &mut Vec<(VarId, Formula)>,
    ) -> Result<Native, NotNative> {
        let ExprKind::Comprehension {
            kind: ast::CompKind::Generator | ast::CompKind::List,
            elt,
            generators,
            ..
        } = &arg.kind
        else {
            return not_native(
                "`any()`/`all()` of something other than a comprehension",
                span,
            );
        };
        let [generator] = generators.as_slice() else {
            return not_native("a comprehension with several `for`s", span);
        };
        let ExprKind::Name(name) = &generator.target.kind else {
            return not_native(
                "a comprehension target that is not a name",
                generator.target.span,
            );
        };
        let ExprKind::Star(_) = &generator.iter.kind else {
            return not_native(
                "iterating over something other than `*SEL` (a tree iterates over its children)",
                generator.iter.span,
            );
        };
        let i = self
            .placeholder_at(ps, generator.iter.span)
            .expect("collected");
        let path = ps[i].path.clone();
        let layers = match self.layers(&path, Some(name)) {
            Ok(Some(l)) => l,
            Ok(None) => {
                return Ok(Native::plain(Val::Bool(constant(universal, span))));
            }
            Err(d) => return not_native(d.message, span),
        };
        let (layers, var, symbol) = layers;
        let mark = self.scope.len();
        self.scope.push(Scoped {
            nonterminal: false,
            name: name.clone(),
            var,
            symbol,
        });
        let body = (|| {
            let mut conds = Vec::new();
            for cond in &generator.ifs {
                let n = self.native(cond, true, ps, counts)?;
                if n.raises.is_some() {
                    return not_native("a comprehension condition that may raise", cond.span);
                }
                conds.push(self.truthy(&n, cond.span)?);
            }
            let n = self.native(elt, true, ps, counts)?;
            if n.raises.is_some() {
                return not_native("a comprehension body that may raise", elt.span);
            }
            let mut v = self.truthy(&n, elt.span)?;
            for c in conds.into_iter().rev() {
                v = if universal {
                    f_or(f_not(c), v)
                } else {
                    f_and(c, v)
                };
            }
            Ok(v)
        })();
        self.scope.truncate(mark);
        let v = body?;
        let layers: Vec<Layer> = layers.into_iter().map(|l| Layer { span, ..l }).collect();
        Ok(Native::plain(Val::Bool(Self::wrap(universal, &layers, v))))
    }

    // --- value conversions ----------------------------------------------------------

    /// A bound tree as a native value: its text, unless it can hold bits.
    fn tree_value(&self, var: VarId, symbol: SymbolId, span: Span) -> Result<Native, NotNative> {
        if self.facts.holds_bits(symbol) {
            return not_native(
                "a tree that holds bits (`0`/`1`): its value is the bytes or the integer \
                 its bits pack into",
                span,
            );
        }
        Ok(Native::plain(Val::Tree(var, symbol)))
    }

    fn to_str(&self, v: &Val, span: Span) -> Result<(Term, StrInfo), NotNative> {
        Ok(match v {
            Val::Str(t, i) => (t.clone(), *i),
            Val::Tree(var, s) | Val::TreeValue(var, s) => (Term::Var(*var), self.facts.info(*s)),
            Val::Int(t) => (
                app(
                    Func::Ite,
                    vec![
                        app(Func::Ge, vec![t.clone(), int(0)]),
                        app(Func::StrFromInt, vec![t.clone()]),
                        app(
                            Func::StrConcat,
                            vec![
                                string("-"),
                                app(Func::StrFromInt, vec![app(Func::Neg, vec![t.clone()])]),
                            ],
                        ),
                    ],
                ),
                StrInfo {
                    class: NumClass::Signed,
                    nonempty: true,
                },
            ),
            Val::Bool(f) => match as_term(f) {
                Some(b) => (
                    app(Func::Ite, vec![b, string("True"), string("False")]),
                    StrInfo {
                        class: NumClass::Other,
                        nonempty: true,
                    },
                ),
                None => return not_native("`str()` of a truth value Python computes", span),
            },
            Val::Seq(_) => return not_native("`str()` of a tuple or list", span),
        })
    }

    /// Python's `int()` of a value: the term and when it raises.
    fn to_int(&self, v: &Val, span: Span) -> Result<(Term, Option<Formula>), NotNative> {
        // An empty tree without terminals has an empty value, whose `int()` is 0.
        let (t, r) = self.text_to_int(v, span)?;
        let (Val::Tree(var, s) | Val::TreeValue(var, s)) = v else {
            return Ok((t, r));
        };
        let empty = self.facts.empty[s.index()];
        if !empty.bare {
            return Ok((t, r));
        }
        if empty.terminal {
            return not_native(
                "`int()` of a tree that may be empty with or without an empty terminal (0 or an error)",
                span,
            );
        }
        let is_empty = app(
            Func::Eq,
            vec![app(Func::StrLen, vec![Term::Var(*var)]), int(0)],
        );
        let raises = r.map(|r| {
            f_and(
                Formula::Smt(app(Func::Not, vec![is_empty.clone()]), span),
                r,
            )
        });
        Ok((app(Func::Ite, vec![is_empty, int(0), t]), raises))
    }

    /// Python's `int()` of a value's text: the term and when it raises.
    fn text_to_int(&self, v: &Val, span: Span) -> Result<(Term, Option<Formula>), NotNative> {
        let (t, info) = match v {
            Val::Int(t) => return Ok((t.clone(), None)),
            Val::Bool(f) => match as_term(f) {
                Some(b) => return Ok((app(Func::Ite, vec![b, int(1), int(0)]), None)),
                None => return not_native("`int()` of a truth value Python computes", span),
            },
            other => self.to_str(other, span)?,
        };
        match info.class {
            NumClass::Digits => {
                let raises = (!info.nonempty).then(|| {
                    Formula::Smt(
                        app(Func::Eq, vec![app(Func::StrLen, vec![t.clone()]), int(0)]),
                        span,
                    )
                });
                Ok((app(Func::StrToInt, vec![t]), raises))
            }
            NumClass::Signed => {
                let digits = app(
                    Func::RePlus,
                    vec![app(Func::ReRange, vec![string("0"), string("9")])],
                );
                let sign = app(
                    Func::ReOpt,
                    vec![app(
                        Func::ReUnion,
                        vec![
                            app(Func::StrToRe, vec![string("+")]),
                            app(Func::StrToRe, vec![string("-")]),
                        ],
                    )],
                );
                let well_formed = app(
                    Func::StrInRe,
                    vec![t.clone(), app(Func::ReConcat, vec![sign, digits])],
                );
                let rest = app(
                    Func::StrToInt,
                    vec![app(
                        Func::StrSubstr,
                        vec![
                            t.clone(),
                            int(1),
                            app(Func::Sub, vec![app(Func::StrLen, vec![t.clone()]), int(1)]),
                        ],
                    )],
                );
                let value = app(
                    Func::Ite,
                    vec![
                        app(Func::StrPrefixOf, vec![string("-"), t.clone()]),
                        app(Func::Neg, vec![rest.clone()]),
                        app(
                            Func::Ite,
                            vec![
                                app(Func::StrPrefixOf, vec![string("+"), t.clone()]),
                                rest,
                                app(Func::StrToInt, vec![t]),
                            ],
                        ),
                    ],
                );
                Ok((
                    value,
                    Some(Formula::Smt(app(Func::Not, vec![well_formed]), span)),
                ))
            }
            NumClass::Ascii => {
                let (value, malformed) = int_with_base(&t, 10, span);
                Ok((value, Some(malformed)))
            }
            NumClass::Other => not_native(
                "`int()` of text that may hold non-ASCII characters (Python reads Unicode digits)",
                span,
            ),
        }
    }

    fn truthy(&self, n: &Native, span: Span) -> Result<Formula, NotNative> {
        Ok(match &n.val {
            Val::Bool(f) => f.clone(),
            Val::Int(t) => f_not(Formula::Smt(app(Func::Eq, vec![t.clone(), int(0)]), span)),
            Val::Str(t, _) => Formula::Smt(
                app(Func::Gt, vec![app(Func::StrLen, vec![t.clone()]), int(0)]),
                span,
            ),
            Val::Seq(items) => constant(!items.is_empty(), span),
            Val::Tree(..) => {
                return not_native("the truth value of a tree (whether it has children)", span);
            }
            Val::TreeValue(..) => return not_native("the truth value of a tree's value", span),
        })
    }

    /// `a in b` for strings: substring.
    fn contains(&self, a: &Val, b: &Val, span: Span) -> Result<Formula, NotNative> {
        if let Val::Seq(items) = b {
            let mut out = constant(false, span);
            for item in items {
                if item.raises.is_some() {
                    return not_native("`in` over a display whose items may raise", span);
                }
                let (v, r) = self.compare(CmpOp::Eq, a, &item.val, span)?;
                if r.is_some() {
                    return not_native("`in` comparing values Python may fail to compare", span);
                }
                out = f_or(out, v);
            }
            return Ok(out);
        }
        let Val::Str(needle, _) = a else {
            return not_native("`in` with a non-string on the left", span);
        };
        let hay = match b {
            Val::Str(t, _) => t.clone(),
            Val::Tree(v, _) | Val::TreeValue(v, _) => Term::Var(*v),
            _ => return not_native("`in` over this value", span),
        };
        Ok(Formula::Smt(
            app(Func::StrContains, vec![hay, needle.clone()]),
            span,
        ))
    }

    /// `a OP b` with Python's (and Fandango's tree) semantics: the truth value and when
    /// the comparison itself raises.
    fn compare(
        &self,
        op: CmpOp,
        a: &Val,
        b: &Val,
        span: Span,
    ) -> Result<(Formula, Option<Formula>), NotNative> {
        let smt = |f: Func, x: Term, y: Term| Formula::Smt(app(f, vec![x, y]), span);
        let equality = matches!(op, CmpOp::Eq | CmpOp::NotEq);
        let finish = |eq: Formula| if op == CmpOp::NotEq { f_not(eq) } else { eq };
        let order = |x: Term, y: Term, strings: bool| -> Formula {
            let (lt, le) = if strings {
                (Func::StrLt, Func::StrLe)
            } else {
                (Func::Lt, Func::Le)
            };
            match op {
                CmpOp::Lt => smt(lt, x, y),
                CmpOp::LtE => smt(le, x, y),
                CmpOp::Gt => smt(lt, y, x),
                CmpOp::GtE => smt(le, y, x),
                _ => unreachable!("an ordering"),
            }
        };
        let text = |v: &Val| match v {
            Val::Str(t, i) => Some((t.clone(), *i)),
            Val::Tree(var, s) | Val::TreeValue(var, s) => {
                Some((Term::Var(*var), self.facts.info(*s)))
            }
            _ => None,
        };
        match (a, b) {
            // Trees compare structurally: same symbol and (approximately) same text.
            (Val::Tree(x, s), Val::Tree(y, t)) => {
                // Ordering compares the texts (a tree's value converts to a string).
                if !equality {
                    return Ok((order(Term::Var(*x), Term::Var(*y), true), None));
                }
                let eq = if s == t {
                    smt(Func::Eq, Term::Var(*x), Term::Var(*y))
                } else {
                    constant(false, span)
                };
                Ok((finish(eq), None))
            }
            (Val::Int(x), Val::Int(y)) => Ok((
                if equality {
                    finish(smt(Func::Eq, x.clone(), y.clone()))
                } else {
                    order(x.clone(), y.clone(), false)
                },
                None,
            )),
            (Val::Bool(f), Val::Bool(g)) if equality => {
                let eq = f_or(
                    f_and(f.clone(), g.clone()),
                    f_and(f_not(f.clone()), f_not(g.clone())),
                );
                Ok((finish(eq), None))
            }
            (Val::Bool(f), Val::Int(_)) | (Val::Int(_), Val::Bool(f)) if equality => {
                let as_int = match as_term(f) {
                    Some(b) => app(Func::Ite, vec![b, int(1), int(0)]),
                    None => {
                        return not_native(
                            "comparing a truth value Python computes with a number",
                            span,
                        );
                    }
                };
                let other = match (a, b) {
                    (Val::Int(t), _) | (_, Val::Int(t)) => t.clone(),
                    _ => unreachable!("one is an int"),
                };
                Ok((finish(smt(Func::Eq, as_int, other)), None))
            }
            // A tree (or its value) against a number: the tree's text as an int.
            (Val::Tree(..) | Val::TreeValue(..), Val::Int(n))
            | (Val::Int(n), Val::Tree(..) | Val::TreeValue(..)) => {
                let tree = if matches!(a, Val::Int(_)) { b } else { a };
                let (t, raises) = self.to_int(tree, span)?;
                let (x, y) = if matches!(a, Val::Int(_)) {
                    (n.clone(), t)
                } else {
                    (t, n.clone())
                };
                let v = if equality {
                    finish(smt(Func::Eq, x, y))
                } else {
                    order(x, y, false)
                };
                Ok((v, raises))
            }
            _ if text(a).is_some() && text(b).is_some() => {
                let ((x, _), (y, _)) = (text(a).expect("text"), text(b).expect("text"));
                Ok((
                    if equality {
                        finish(smt(Func::Eq, x, y))
                    } else {
                        order(x, y, true)
                    },
                    None,
                ))
            }
            // Strings never equal numbers in Python.
            (Val::Str(..), Val::Int(_)) | (Val::Int(_), Val::Str(..)) if equality => {
                Ok((constant(op == CmpOp::NotEq, span), None))
            }
            _ => not_native("comparing these kinds of values", span),
        }
    }
}

/// Python's `int(t, base)` of ASCII text `t`: its value, and when it raises (the text is
/// no integer literal in that base, as [`crate::smt::python_int`] reads them).
fn int_with_base(t: &Term, base: u32, span: Span) -> (Term, Formula) {
    let re = |s: &str| app(Func::StrToRe, vec![string(s)]);
    let range = |a: char, b: char| {
        app(
            Func::ReRange,
            vec![string(&a.to_string()), string(&b.to_string())],
        )
    };
    let union = |mut parts: Vec<Term>| {
        if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            app(Func::ReUnion, parts)
        }
    };
    let digit_count = base.min(10);
    let mut digit_parts = vec![range(
        '0',
        char::from_digit(digit_count - 1, 10).expect("a digit"),
    )];
    if base > 10 {
        let last = (b'a' + (base - 11) as u8) as char;
        digit_parts.push(range('a', last));
        digit_parts.push(range('A', last.to_ascii_uppercase()));
    }
    let digit = union(digit_parts);
    let space = app(
        Func::ReStar,
        vec![union(vec![
            range('\t', '\r'),
            re(" "),
            re("\u{85}"),
            re("\u{a0}"),
            re("\u{1680}"),
            range('\u{2000}', '\u{200a}'),
            re("\u{2028}"),
            re("\u{2029}"),
            re("\u{202f}"),
            re("\u{205f}"),
            re("\u{3000}"),
        ])],
    );
    let sign = app(Func::ReOpt, vec![union(vec![re("+"), re("-")])]);
    let digits = app(
        Func::ReConcat,
        vec![
            digit.clone(),
            app(
                Func::ReStar,
                vec![app(
                    Func::ReConcat,
                    vec![app(Func::ReOpt, vec![re("_")]), digit],
                )],
            ),
        ],
    );
    let mut body = vec![space.clone(), sign];
    let mark = match base {
        2 => Some('b'),
        8 => Some('o'),
        16 => Some('x'),
        _ => None,
    };
    if let Some(mark) = mark {
        body.push(app(
            Func::ReOpt,
            vec![app(
                Func::ReConcat,
                vec![
                    re("0"),
                    union(vec![
                        re(&mark.to_string()),
                        re(&mark.to_ascii_uppercase().to_string()),
                    ]),
                    app(Func::ReOpt, vec![re("_")]),
                ],
            )],
        ));
    }
    body.push(digits);
    body.push(space);
    let well_formed = app(Func::StrInRe, vec![t.clone(), app(Func::ReConcat, body)]);
    (
        app(Func::StrToIntBase, vec![t.clone(), int(i128::from(base))]),
        Formula::Smt(app(Func::Not, vec![well_formed]), span),
    )
}

fn literal_info(t: &str) -> StrInfo {
    StrInfo {
        class: if t.bytes().all(|b| b.is_ascii_digit()) {
            NumClass::Digits
        } else if t
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'+' || b == b'-')
        {
            NumClass::Signed
        } else if t.is_ascii() {
            NumClass::Ascii
        } else {
            NumClass::Other
        },
        nonempty: !t.is_empty(),
    }
}

fn binop_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
        BinOp::MatMul => "@",
        BinOp::LShift => "<<",
        BinOp::RShift => ">>",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::BitAnd => "&",
    }
}

fn python_slices(slices: &[ast::RsSlice]) -> String {
    slices
        .iter()
        .map(|s| match s {
            ast::RsSlice::Index(i) => i.to_string(),
            ast::RsSlice::Range(a, b, c) => {
                let f = |x: &Option<i64>| x.map(|v| v.to_string()).unwrap_or_default();
                match c {
                    Some(_) => format!("{}:{}:{}", f(a), f(b), f(c)),
                    None => format!("{}:{}", f(a), f(b)),
                }
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The direct subexpressions of an expression.
fn children(e: &Expr) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &e.kind {
        ExprKind::Tuple(v) | ExprKind::List(v) | ExprKind::Set(v) | ExprKind::BoolOp(_, v) => {
            out.extend(v)
        }
        ExprKind::Dict(items) => {
            for (k, v) in items {
                out.extend(k.iter());
                out.push(v);
            }
        }
        ExprKind::Starred(x) | ExprKind::Unary(_, x) | ExprKind::Await(x) => out.push(x),
        ExprKind::Comprehension {
            elt,
            value,
            generators,
            ..
        } => {
            out.push(elt);
            out.extend(value.iter().map(|v| &**v));
            for g in generators {
                out.push(&g.target);
                out.push(&g.iter);
                out.extend(&g.ifs);
            }
        }
        ExprKind::Attribute(x, _) => out.push(x),
        ExprKind::Call(f, args) => {
            out.push(f);
            for a in args {
                match a {
                    ast::Arg::Positional(x)
                    | ast::Arg::Keyword(_, x)
                    | ast::Arg::DoubleStarred(x) => out.push(x),
                }
            }
        }
        ExprKind::Subscript(x, i) => {
            out.push(x);
            out.push(i);
        }
        ExprKind::Slice(a, b, c) => out.extend([a, b, c].into_iter().flatten().map(|x| &**x)),
        ExprKind::Binary(_, a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::Compare(first, rest) => {
            out.push(first);
            out.extend(rest.iter().map(|(_, x)| x));
        }
        ExprKind::IfExp { test, body, orelse } => {
            out.push(body);
            out.push(test);
            out.push(orelse);
        }
        ExprKind::Lambda { defaults, body, .. } => {
            out.extend(defaults);
            out.push(body);
        }
        ExprKind::FString(parts) => fparts(parts, &mut out),
        _ => {}
    }
    out
}

fn fparts<'e>(parts: &'e [ast::FPart], out: &mut Vec<&'e Expr>) {
    for p in parts {
        if let ast::FPart::Field { expr, spec, .. } = p {
            out.push(expr);
            fparts(spec, out);
        }
    }
}

/// The Python source of `text[span]` with each placeholder span replaced, comments and
/// line continuations dropped, tokens separated by single spaces where the text had
/// space, and `<>` written `!=`.
pub(crate) fn python_source(text: &str, span: Span, replacements: &[(Span, String)]) -> String {
    let Ok(tokens) = super::lexer::tokenize(text, span.start as usize, span.end as usize, 0) else {
        return text[span.range()].to_string();
    };
    let mut out = String::new();
    let mut last_end: Option<u32> = None;
    let mut skip_until = 0u32;
    for t in tokens {
        if matches!(t.tok, Tok::Newline | Tok::Indent | Tok::Dedent | Tok::Eof) {
            continue;
        }
        if t.span.start < skip_until {
            continue;
        }
        if let Some(end) = last_end
            && t.span.start > end
        {
            out.push(' ');
        }
        last_end = Some(t.span.end);
        if let Some((r, with)) = replacements.iter().find(|(r, _)| r.start == t.span.start) {
            out.push_str(with);
            skip_until = r.end;
            last_end = Some(r.end);
            continue;
        }
        // Replacements inside an f-string token.
        let inner: Vec<&(Span, String)> = replacements
            .iter()
            .filter(|(r, _)| r.start > t.span.start && r.end <= t.span.end)
            .collect();
        if !inner.is_empty() {
            let mut pos = t.span.start as usize;
            let mut sorted = inner;
            sorted.sort_by_key(|(r, _)| r.start);
            for (r, with) in sorted {
                if (r.start as usize) < pos {
                    continue;
                }
                out.push_str(&text[pos..r.start as usize]);
                out.push_str(with);
                pos = r.end as usize;
            }
            out.push_str(&text[pos..t.span.end as usize]);
            continue;
        }
        match t.tok {
            Tok::Op("<>") => out.push_str("!="),
            _ => out.push_str(&text[t.span.range()]),
        }
    }
    out
}

/// The value of a soft goal for one combination of its placeholders.
#[derive(Clone)]
pub enum GoalValue {
    /// An integer term over the placeholders' variables; 0 where `raises` holds
    /// (Fandango counts an exception as 0). `counts` bind the `|SEL|` variables.
    Native {
        /// The value.
        term: Term,
        /// When computing it raises.
        raises: Option<Formula>,
        /// `selection_count` calls binding the `int` variables of `|SEL|`s.
        counts: Vec<(VarId, Formula)>,
    },
    /// A Python expression.
    Host {
        /// The expression.
        expr: HostExpr,
        /// The variables of its tree arguments.
        args: Vec<VarId>,
        /// Where each parameter's value comes from (indices into `args`).
        sources: Vec<ParamSource>,
        /// The interpreter.
        host: SharedHost,
    },
}

impl std::fmt::Debug for GoalValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoalValue::Native { term, .. } => f.debug_struct("Native").field("term", term).finish(),
            GoalValue::Host { expr, .. } => f.debug_struct("Host").field("expr", expr).finish(),
        }
    }
}

/// A quantifier layer of a goal: the placeholder variables whose combinations the
/// goal's value is averaged over.
pub(crate) type GoalLayer = (VarId, SymbolId, Domain, Span);

impl Translator<'_> {
    /// The layers and value of a `minimizing`/`maximizing` expression.
    pub(crate) fn goal(&mut self, e: &Expr) -> TResult<(Vec<GoalLayer>, GoalValue)> {
        self.top_level_atom = true;
        let mut ps = Vec::new();
        self.collect(e, &mut ps)?;
        let layers = self.bind_placeholders(&mut ps)?.unwrap_or_default();
        let layers = layers
            .into_iter()
            .map(|l| (l.var, l.symbol, l.domain, l.span))
            .collect();
        let mut counts = Vec::new();
        let native = self.native(e, false, &mut ps, &mut counts).and_then(|n| {
            let term = match n.val {
                Val::Int(t) => t,
                Val::Bool(ref f) => match as_term(f) {
                    Some(b) => app(Func::Ite, vec![b, int(1), int(0)]),
                    None => return not_native("a truth value Python computes", e.span),
                },
                _ => return not_native("a value that is not a number", e.span),
            };
            Ok((term, n.raises))
        });
        let value = match native {
            Ok((term, raises)) => GoalValue::Native {
                term,
                raises,
                counts,
            },
            Err(why) => {
                let host = self.require_host(&why)?;
                let (texts, args, sources, names, meaning) = self.host_params(&[e.span], &ps)?;
                let expr = HostExpr {
                    source: texts[0].clone(),
                    params: names,
                };
                self.hosts.push(HostUse {
                    expr: expr.clone(),
                    span: e.span,
                    params: meaning,
                    reason: why.reason,
                });
                GoalValue::Host {
                    expr,
                    args,
                    sources,
                    host,
                }
            }
        };
        Ok((layers, value))
    }
}

/// For an equality whose one side is `str(P)` or `P` (P a parameter standing for one
/// bound tree) and whose other side does not mention P: P's tree argument and the other
/// side, so that a repair can write the value into P's tree.
/// The Python source of `value` written as the text a tree of bits (the parameter
/// `target`) has in thicket: one `0`/`1` per bit, as many as the tree has now, for an
/// integer; eight per byte for bytes. A target that holds more than bits keeps the
/// value as it is.
fn bits_of(value: &str, target: &str) -> String {
    format!(
        "(lambda v, t: (v if not all(c in '01' for c in t.to_bits()) or len(t.to_bits()) == 0 \
         else ''.join(format(b, '08b') for b in v) if isinstance(v, bytes) \
         else format(int(v), '0%db' % len(t.to_bits()))))(({value}), {target})"
    )
}

/// For `<x> == value` (or `str(<x>) == value`, either way round) with `value` not
/// mentioning `<x>`: the tree argument that takes the value, its parameter's index,
/// and the value's source.
/// The name an [`Assignment::joint`] expression keeps its value side's value under (a
/// name of thicket's, in the expression's own scope).
const JOINT_VALUE: &str = "__thicket_value";

/// The function a [`Joint`] expression calls its value side through (see [`Joint`]).
const WATCHED: &str = "__thicket_watched";

/// For `texts` the two sides of an equality: the tree argument a repair writes into,
/// its parameter, and which side (0 or 1) is the value written.
fn assignment(
    texts: &[String],
    names: &[String],
    sources: &[ParamSource],
) -> Option<(usize, usize, usize)> {
    let param_of = |text: &str| {
        let inner = text
            .trim()
            .strip_prefix("str(")
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(text.trim());
        names.iter().position(|n| n == inner.trim())
    };
    let mentions = |text: &str, name: &str| {
        text.match_indices(name).any(|(at, _)| {
            let after = text[at + name.len()..].chars().next();
            !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    for (side, other) in [(0, 1), (1, 0)] {
        if let Some(j) = param_of(&texts[side])
            && !mentions(&texts[other], &names[j])
            && let ParamSource::Tree(target) = sources[j]
        {
            return Some((target, j, other));
        }
    }
    None
}
