//! Resolution: from the surface syntax to Core, against a grammar. Every name is looked
//! up (nonterminals, variables, functions, predicates), sorts and predicate arguments
//! are checked, match expressions are compiled and checked for being able to match at
//! all, and simplified ISLa is translated:
//!
//! - an omitted `in` ranges over the constant (`start`); an omitted name gets a fresh
//!   variable;
//! - a free nonterminal `<a>` in an atom, a predicate argument or an `in` becomes a
//!   universal quantifier `forall <a> v in start` around that atom (or quantifier); the
//!   same nonterminal twice in one atom is one variable;
//! - `x.<a>[i]` becomes a universal over the i-th direct `<a>` child of `x` (none: the
//!   atom holds vacuously), `x..<a>` a universal over every `<a>` in `x`;
//! - `implies`, `xor`, `iff` stay connectives (for explanations).

use crate::formula::{Domain, Formula, PredArg, PredicateCall, Quantifier, Var, VarId, VarType};
use crate::matching::{MAX_OPTIONALS, MatchExpr, Piece};
use crate::predicates::{ArgKind, Predicates};
use crate::smt::{FUNCTIONS, Func, Sort, Term, Value};
use crate::syntax::{ConstraintSyntax, InTarget, Name, SFormula, STerm, STermKind, XPathStep};
use std::collections::HashMap;
use thicket_grammar::grammar::suggest;
use thicket_grammar::{Diagnostic, Expr, ExprId, Grammar, Span, SymbolId};

type RResult<T> = Result<T, Box<Diagnostic>>;

/// A constraint resolved into Core.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The formula.
    pub formula: Formula,
    /// Its variables; the constant is the first.
    pub vars: Vec<Var>,
}

/// A universal quantifier introduced for a free nonterminal or an XPath step, wrapped
/// around the atom it occurs in.
struct Lift {
    key: String,
    var: VarId,
    symbol: SymbolId,
    domain: Domain,
    span: Span,
}

/// Facts about the grammar resolution needs: which symbols can be direct children and
/// descendants of which.
pub struct GrammarFacts {
    children: Vec<Vec<SymbolId>>,
}

impl GrammarFacts {
    /// Computes the direct-child relation of `grammar`'s symbols.
    pub fn new(grammar: &Grammar) -> GrammarFacts {
        let children = grammar
            .rules()
            .iter()
            .map(|rule| {
                let mut out = Vec::new();
                let mut stack = vec![rule.body];
                while let Some(e) = stack.pop() {
                    match grammar.expr(e) {
                        Expr::Ref(s) => {
                            if !out.contains(s) {
                                out.push(*s);
                            }
                        }
                        other => stack.extend(other.children().iter().copied()),
                    }
                }
                out
            })
            .collect();
        GrammarFacts { children }
    }

    /// Whether `child` can be a direct child of `parent`.
    pub fn is_child(&self, parent: SymbolId, child: SymbolId) -> bool {
        self.children[parent.index()].contains(&child)
    }

    /// Whether `inner` can occur in a `outer` subtree (or is `outer`).
    pub fn can_contain(&self, outer: SymbolId, inner: SymbolId) -> bool {
        let mut seen = vec![false; self.children.len()];
        let mut stack = vec![outer];
        while let Some(s) = stack.pop() {
            if s == inner {
                return true;
            }
            if !std::mem::replace(&mut seen[s.index()], true) {
                stack.extend(self.children[s.index()].iter().copied());
            }
        }
        false
    }
}

/// Resolves one constraint.
pub fn resolve(
    syntax: &ConstraintSyntax,
    grammar: &Grammar,
    facts: &GrammarFacts,
    predicates: &Predicates,
) -> RResult<Resolved> {
    let (name, span) = match &syntax.constant {
        Some(decl) => {
            let ty = symbol(grammar, &decl.ty)?;
            if ty != grammar.start() {
                return Err(Box::new(
                    Diagnostic::error(
                        "constant-type",
                        format!(
                            "the constant stands for the whole input, of type {}, not <{}>",
                            grammar.display_symbol(grammar.start()),
                            decl.ty.text
                        ),
                        decl.ty.span,
                    )
                    .with_note("choose the start rule with `--start` to check other inputs"),
                ));
            }
            (decl.name.text.clone(), decl.name.span)
        }
        None => ("start".to_string(), syntax.span),
    };
    let mut r = Resolver {
        grammar,
        facts,
        predicates,
        vars: Vec::new(),
        scope: Vec::new(),
        constant: VarId(0),
    };
    let constant = r.declare(&name, VarType::Tree(grammar.start()), span);
    r.scope.push((name, constant));
    let formula = r.formula(&syntax.formula)?;
    Ok(Resolved {
        formula,
        vars: r.vars,
    })
}

fn symbol(grammar: &Grammar, name: &Name) -> RResult<SymbolId> {
    grammar.symbol(&name.text).ok_or_else(|| {
        let names: Vec<String> = grammar.rules().iter().map(|r| r.name.clone()).collect();
        let mut d = Diagnostic::error(
            "unknown-nonterminal",
            format!("the grammar has no nonterminal <{}>", name.text),
            name.span,
        )
        .with_label_message("not a rule of the grammar");
        if let Some(s) = suggest(&name.text, names.iter()) {
            d = d.with_note(format!("did you mean <{s}>?"));
        }
        Box::new(d)
    })
}

fn error(code: &'static str, message: impl Into<String>, span: Span) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(code, message, span))
}

struct Resolver<'a> {
    grammar: &'a Grammar,
    facts: &'a GrammarFacts,
    predicates: &'a Predicates,
    vars: Vec<Var>,
    scope: Vec<(String, VarId)>,
    constant: VarId,
}

impl Resolver<'_> {
    fn declare(&mut self, name: &str, ty: VarType, span: Span) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            span,
        });
        id
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    fn unknown_variable(&self, name: &str, span: Span) -> Box<Diagnostic> {
        let names: Vec<String> = self.scope.iter().map(|(n, _)| n.clone()).collect();
        let mut d = Diagnostic::error(
            "unbound-variable",
            format!("`{name}` is not a bound variable"),
            span,
        )
        .with_label_message("unbound");
        if let Some(s) = suggest(name, names.iter()) {
            d = d.with_note(format!("did you mean `{s}`?"));
        } else {
            d = d.with_note(format!(
                "variables are bound by `forall` and `exists`; in scope here: {}",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Box::new(d)
    }

    fn tree_var(&self, name: &Name) -> RResult<(VarId, SymbolId)> {
        let var = self
            .lookup(&name.text)
            .ok_or_else(|| self.unknown_variable(&name.text, name.span))?;
        match self.vars[var.index()].ty {
            VarType::Tree(s) => Ok((var, s)),
            VarType::Int => Err(error(
                "int-as-tree",
                format!("`{}` is an int variable, not a tree", name.text),
                name.span,
            )),
        }
    }

    fn var_symbol(&self, var: VarId) -> SymbolId {
        match self.vars[var.index()].ty {
            VarType::Tree(s) => s,
            VarType::Int => unreachable!("only tree variables are lifted"),
        }
    }

    fn formula(&mut self, f: &SFormula) -> RResult<Formula> {
        Ok(match f {
            SFormula::Not(inner, _) => Formula::Not(Box::new(self.formula(inner)?)),
            SFormula::Binary(connective, a, b, _) => Formula::Binary(
                *connective,
                Box::new(self.formula(a)?),
                Box::new(self.formula(b)?),
            ),
            SFormula::IntQuantifier {
                universal,
                var,
                body,
                span,
            } => {
                let id = self.declare(&var.text, VarType::Int, var.span);
                self.scope.push((var.text.clone(), id));
                let body = self.formula(body);
                self.scope.pop();
                Formula::IntQuantifier {
                    universal: *universal,
                    var: id,
                    body: Box::new(body?),
                    span: *span,
                }
            }
            SFormula::Quantifier {
                universal,
                ty,
                var,
                mexpr,
                within,
                body,
                span,
            } => self.quantifier(
                *universal,
                ty,
                var.as_ref(),
                mexpr.as_ref(),
                within.as_ref(),
                body,
                *span,
            )?,
            SFormula::Atom(term) => self.atom(term)?,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn quantifier(
        &mut self,
        universal: bool,
        ty: &Name,
        var: Option<&Name>,
        mexpr: Option<&(crate::lexer::StringLit, Span)>,
        within: Option<&InTarget>,
        body: &SFormula,
        span: Span,
    ) -> RResult<Formula> {
        let symbol = symbol(self.grammar, ty)?;
        let mut lifts = Vec::new();
        let (outer, outer_span) = match within {
            None => (self.constant, span),
            Some(InTarget::Var(name)) => (self.tree_var(name)?.0, name.span),
            Some(InTarget::Nonterminal(name)) => {
                let term = STerm {
                    kind: STermKind::Nonterminal(name.text.clone()),
                    span: name.span,
                };
                (self.tree_operand(&term, &mut lifts)?, name.span)
            }
            Some(InTarget::XPath(term)) => (self.tree_operand(term, &mut lifts)?, term.span),
        };
        let outer_symbol = self.var_symbol(outer);
        if !self.facts.can_contain(outer_symbol, symbol) {
            return Err(Box::new(
                Diagnostic::error(
                    "unreachable-type",
                    format!(
                        "no <{}> can occur inside {}",
                        ty.text,
                        self.grammar.display_symbol(outer_symbol)
                    ),
                    ty.span,
                )
                .with_secondary(outer_span, "the quantifier ranges over this"),
            ));
        }
        let name = var.map_or_else(|| format!("<{}>", ty.text), |v| v.text.clone());
        let bound = self.declare(
            &name,
            VarType::Tree(symbol),
            var.map_or(ty.span, |v| v.span),
        );
        let scope_len = self.scope.len();
        if let Some(v) = var {
            self.scope.push((v.text.clone(), bound));
        }
        let compiled = match mexpr {
            Some((lit, lit_span)) => Some(self.match_expr(symbol, lit, *lit_span)?),
            None => None,
        };
        let body = self.formula(body)?;
        self.scope.truncate(scope_len);
        let outermost_only =
            Quantifier::nested_instances_implied(universal, bound, compiled.as_ref(), &body);
        let local = Quantifier::instance_local(bound, compiled.as_ref(), &body);
        let distinct = Quantifier::pairwise_distinct(
            universal,
            bound,
            Domain::Within(outer),
            symbol,
            compiled.as_ref(),
            &body,
        );
        let formula = Formula::Quantifier(Box::new(Quantifier {
            universal,
            var: bound,
            symbol,
            domain: Domain::Within(outer),
            mexpr: compiled,
            body,
            span,
            outermost_only,
            local,
            distinct,
        }));
        Ok(wrap(formula, lifts))
    }

    fn match_expr(
        &mut self,
        symbol: SymbolId,
        lit: &crate::lexer::StringLit,
        span: Span,
    ) -> RResult<MatchExpr> {
        let pieces = parse_mexpr(self.grammar, lit, false)?;
        let mut binders = Vec::new();
        collect_binders(&pieces, &mut binders);
        let mut vars = Vec::new();
        for (binder_symbol, name, binder_span) in binders {
            if vars
                .iter()
                .any(|&v: &VarId| self.vars[v.index()].name == name)
            {
                return Err(error(
                    "duplicate-binder",
                    format!("`{name}` is bound twice in this match expression"),
                    binder_span,
                ));
            }
            let id = self.declare(&name, VarType::Tree(binder_symbol), binder_span);
            self.scope.push((name, id));
            vars.push(id);
        }
        let mexpr = MatchExpr::new(&pieces, &vars, span);
        check_can_match(self.grammar, symbol, &mexpr, lit, span)?;
        Ok(mexpr)
    }

    /// An atom: a predicate call or an SMT formula, wrapped in the quantifiers its free
    /// nonterminals and XPath expressions need.
    fn atom(&mut self, term: &STerm) -> RResult<Formula> {
        let mut lifts = Vec::new();
        let formula = match &term.kind {
            STermKind::App { op, args, .. } if self.predicates.get(&op.text).is_some() => {
                self.predicate_call(op, args, term.span, &mut lifts)?
            }
            _ => {
                let (t, sort) = self.term(term, &mut lifts)?;
                if sort != Sort::Bool {
                    return Err(Box::new(
                        Diagnostic::error(
                            "not-a-formula",
                            format!("this is a term of sort {sort}, not a formula"),
                            term.span,
                        )
                        .with_note("compare it with something, e.g. `str.len(x) > 3`"),
                    ));
                }
                Formula::Smt(t, term.span)
            }
        };
        Ok(wrap(formula, lifts))
    }

    fn predicate_call(
        &mut self,
        op: &Name,
        args: &[STerm],
        span: Span,
        lifts: &mut Vec<Lift>,
    ) -> RResult<Formula> {
        let predicate = self.predicates.get(&op.text).expect("checked").clone();
        let params = predicate.params();
        if params.len() != args.len() {
            return Err(error(
                "predicate-arity",
                format!(
                    "`{}` takes {} argument{}, found {}",
                    op.text,
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                span,
            ));
        }
        let mut resolved = Vec::new();
        for (kind, arg) in params.iter().zip(args) {
            let wrong = |what: &str| {
                error(
                    "predicate-argument",
                    format!("argument of `{}` must be {what}", op.text),
                    arg.span,
                )
            };
            let value = match (kind, &arg.kind) {
                (
                    ArgKind::Tree,
                    STermKind::Var(_) | STermKind::Nonterminal(_) | STermKind::XPath { .. },
                ) => PredArg::Var(self.tree_operand(arg, lifts)?),
                (ArgKind::Tree, _) => {
                    return Err(wrong("a tree: a variable, `<nonterminal>` or XPath"));
                }
                (ArgKind::Number, STermKind::Int(i)) => PredArg::Int(*i),
                (ArgKind::Number, STermKind::Str(s)) => match s.parse::<i128>() {
                    Ok(i) => PredArg::Int(i),
                    Err(_) => return Err(wrong("a number")),
                },
                (ArgKind::Number, STermKind::Var(name)) => PredArg::Var(
                    self.lookup(name)
                        .ok_or_else(|| self.unknown_variable(name, arg.span))?,
                ),
                (ArgKind::Number, STermKind::Nonterminal(_) | STermKind::XPath { .. }) => {
                    PredArg::Var(self.tree_operand(arg, lifts)?)
                }
                (ArgKind::Number, _) => return Err(wrong("a number or an int variable")),
                (ArgKind::Text, STermKind::Str(s)) => PredArg::Text(s.clone()),
                (ArgKind::Text, _) => return Err(wrong("a string literal")),
                (ArgKind::Symbol, STermKind::Str(s)) => {
                    let inner = s
                        .strip_prefix('<')
                        .and_then(|s| s.strip_suffix('>'))
                        .ok_or_else(|| wrong("a nonterminal in quotes, e.g. \"<field>\""))?;
                    PredArg::Symbol(symbol(
                        self.grammar,
                        &Name {
                            text: inner.to_string(),
                            span: arg.span,
                        },
                    )?)
                }
                (ArgKind::Symbol, _) => {
                    return Err(wrong("a nonterminal in quotes, e.g. \"<field>\""));
                }
            };
            resolved.push(value);
        }
        if let Err((index, message)) = predicate.validate(&resolved, self.grammar) {
            return Err(error("predicate-argument", message, args[index].span));
        }
        Ok(Formula::Predicate(PredicateCall {
            predicate,
            args: resolved,
            span,
        }))
    }

    /// A variable, free nonterminal or XPath expression standing for a subtree.
    fn tree_operand(&mut self, term: &STerm, lifts: &mut Vec<Lift>) -> RResult<VarId> {
        match &term.kind {
            STermKind::Var(name) => Ok(self
                .tree_var(&Name {
                    text: name.clone(),
                    span: term.span,
                })?
                .0),
            STermKind::Nonterminal(name) => {
                let key = format!("<{name}>");
                if let Some(l) = lifts.iter().find(|l| l.key == key) {
                    return Ok(l.var);
                }
                let symbol = symbol(
                    self.grammar,
                    &Name {
                        text: name.clone(),
                        span: term.span,
                    },
                )?;
                let var = self.declare(&key, VarType::Tree(symbol), term.span);
                lifts.push(Lift {
                    key,
                    var,
                    symbol,
                    domain: Domain::Within(self.constant),
                    span: term.span,
                });
                Ok(var)
            }
            STermKind::XPath { base, steps } => {
                let mut current = self.tree_operand(base, lifts)?;
                let mut key = self.vars[current.index()].name.clone();
                for step in steps {
                    let parent_symbol = self.var_symbol(current);
                    let (name, domain, step_key) = match step {
                        XPathStep::Child(name, index) => (
                            name,
                            Domain::Child {
                                parent: current,
                                index: *index,
                            },
                            format!(".<{}>[{index}]", name.text),
                        ),
                        XPathStep::Descendant(name) => {
                            (name, Domain::Within(current), format!("..<{}>", name.text))
                        }
                    };
                    key.push_str(&step_key);
                    if let Some(l) = lifts.iter().find(|l| l.key == key) {
                        current = l.var;
                        continue;
                    }
                    let symbol = symbol(self.grammar, name)?;
                    let possible = match step {
                        XPathStep::Child(..) => self.facts.is_child(parent_symbol, symbol),
                        XPathStep::Descendant(_) => self.facts.can_contain(parent_symbol, symbol),
                    };
                    if !possible {
                        return Err(error(
                            "impossible-xpath",
                            format!(
                                "<{}> is never a {} of {}",
                                name.text,
                                if matches!(step, XPathStep::Child(..)) {
                                    "direct child"
                                } else {
                                    "descendant"
                                },
                                self.grammar.display_symbol(parent_symbol)
                            ),
                            name.span,
                        ));
                    }
                    let var = self.declare(&key, VarType::Tree(symbol), name.span);
                    lifts.push(Lift {
                        key: key.clone(),
                        var,
                        symbol,
                        domain,
                        span: name.span,
                    });
                    current = var;
                }
                Ok(current)
            }
            _ => Err(error(
                "not-a-tree",
                "expected a variable, a nonterminal or an XPath expression",
                term.span,
            )),
        }
    }

    fn term(&mut self, term: &STerm, lifts: &mut Vec<Lift>) -> RResult<(Term, Sort)> {
        Ok(match &term.kind {
            STermKind::Bool(b) => (Term::Const(Value::Bool(*b)), Sort::Bool),
            STermKind::Int(i) => (Term::Const(Value::Int(*i)), Sort::Int),
            STermKind::Str(s) => (Term::Const(Value::Str(s.clone())), Sort::Str),
            STermKind::Var(name) => match self.lookup(name) {
                Some(v) => (Term::Var(v), Sort::Str),
                None => match Func::by_name(name).filter(|f| f.is_constant()) {
                    Some(f) => (Term::App(f, Vec::new(), Vec::new()), Sort::Re),
                    None => return Err(self.unknown_variable(name, term.span)),
                },
            },
            STermKind::Nonterminal(_) | STermKind::XPath { .. } => {
                (Term::Var(self.tree_operand(term, lifts)?), Sort::Str)
            }
            STermKind::App { op, indices, args } => {
                let Some(func) = Func::by_name(&op.text) else {
                    if self.predicates.get(&op.text).is_some() {
                        return Err(Box::new(
                            Diagnostic::error(
                                "predicate-in-term",
                                format!("`{}` is a predicate; it cannot be used inside a term", op.text),
                                op.span,
                            )
                            .with_note("predicates are formulas of their own: combine them with `and`, `or`, `not`"),
                        ));
                    }
                    let known: Vec<String> = FUNCTIONS
                        .iter()
                        .map(|(n, _)| n.to_string())
                        .chain(self.predicates.names().cloned())
                        .collect();
                    let mut d = Diagnostic::error(
                        "unknown-function",
                        format!("unknown function or predicate `{}`", op.text),
                        op.span,
                    );
                    if let Some(s) = suggest(&op.text, known.iter()) {
                        d = d.with_note(format!("did you mean `{s}`?"));
                    }
                    if let Some((_, ours)) = PYTHON_NAMES.iter().find(|(p, _)| *p == op.text) {
                        d = d.with_note(format!(
                            "constraints are written in ISLa's language (SMT-LIB functions), not \
                             Python as in Fandango: `{}(x)` is `{ours}(x)`",
                            op.text
                        ));
                    }
                    return Err(Box::new(d));
                };
                let mut terms = Vec::new();
                let mut sorts = Vec::new();
                for a in args {
                    let (t, s) = self.term(a, lifts)?;
                    terms.push(t);
                    sorts.push(s);
                }
                let func = if func == Func::Sub && terms.len() == 1 {
                    Func::Neg
                } else {
                    func
                };
                let sort = func
                    .check(&op.text, &sorts, indices.len())
                    .map_err(|m| error("sort-mismatch", m, term.span))?;
                (Term::App(func, indices.clone(), terms), sort)
            }
        })
    }
}

/// Python functions Fandango constraints use, and their SMT-LIB counterparts.
const PYTHON_NAMES: &[(&str, &str)] = &[
    ("int", "str.to_int"),
    ("len", "str.len"),
    ("str", "str.from_int"),
    ("startswith", "str.prefixof"),
    ("endswith", "str.suffixof"),
];

/// Wraps `formula` in the universal quantifiers of `lifts`, the first outermost.
fn wrap(mut formula: Formula, lifts: Vec<Lift>) -> Formula {
    for lift in lifts.into_iter().rev() {
        let outermost_only = Quantifier::nested_instances_implied(true, lift.var, None, &formula);
        let local = Quantifier::instance_local(lift.var, None, &formula);
        let distinct =
            Quantifier::pairwise_distinct(true, lift.var, lift.domain, lift.symbol, None, &formula);
        formula = Formula::Quantifier(Box::new(Quantifier {
            universal: true,
            var: lift.var,
            symbol: lift.symbol,
            domain: lift.domain,
            mexpr: None,
            body: formula,
            span: lift.span,
            outermost_only,
            local,
            distinct,
        }));
    }
    formula
}

fn collect_binders(pieces: &[Piece], out: &mut Vec<(SymbolId, String, Span)>) {
    for p in pieces {
        match p {
            Piece::Binder(s, name, span) => out.push((*s, name.clone(), *span)),
            Piece::Optional(inner) => collect_binders(inner, out),
            _ => {}
        }
    }
}

/// Splits a match expression into text, placeholders, binders and optional parts.
fn parse_mexpr(
    grammar: &Grammar,
    lit: &crate::lexer::StringLit,
    in_optional: bool,
) -> RResult<Vec<Piece>> {
    let text = &lit.text;
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    let mut optionals = 0;
    let flush = |literal: &mut String, pieces: &mut Vec<Piece>| {
        if !literal.is_empty() {
            pieces.push(Piece::Text(std::mem::take(literal)));
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                let close = text[i..].find('}').map(|c| i + c).ok_or_else(|| {
                    error(
                        "mexpr-syntax",
                        "`{` without `}` in the match expression",
                        lit.span_of(i..i + 1),
                    )
                })?;
                let inner = text[i + 1..close].trim();
                let (ty, name) = inner
                    .strip_prefix('<')
                    .and_then(|rest| rest.split_once('>'))
                    .map(|(ty, name)| (ty.trim(), name.trim()))
                    .filter(|(ty, name)| {
                        !ty.is_empty() && !name.is_empty() && !name.contains(char::is_whitespace)
                    })
                    .ok_or_else(|| {
                        Box::new(
                            Diagnostic::error(
                                "mexpr-syntax",
                                "a binder is written `{<type> name}`",
                                lit.span_of(i..close + 1),
                            )
                            .with_label_message("not a binder"),
                        )
                    })?;
                if in_optional {
                    return Err(Box::new(
                        Diagnostic::error(
                            "binder-in-optional",
                            "binders inside `[...]` are not supported",
                            lit.span_of(i..close + 1),
                        )
                        .with_note("a variable bound only when the optional part is present would be unbound otherwise"),
                    ));
                }
                let symbol = symbol(
                    grammar,
                    &Name {
                        text: ty.to_string(),
                        span: lit.span_of(i + 1..close),
                    },
                )?;
                flush(&mut literal, &mut pieces);
                pieces.push(Piece::Binder(
                    symbol,
                    name.to_string(),
                    lit.span_of(i..close + 1),
                ));
                i = close + 1;
            }
            b'[' if !in_optional => {
                let close = text[i..].find(']').map(|c| i + c).ok_or_else(|| {
                    error(
                        "mexpr-syntax",
                        "`[` without `]` in the match expression",
                        lit.span_of(i..i + 1),
                    )
                })?;
                optionals += 1;
                if optionals > MAX_OPTIONALS {
                    return Err(error(
                        "mexpr-too-many-optionals",
                        format!(
                            "at most {MAX_OPTIONALS} optional parts are supported in one match expression"
                        ),
                        lit.span_of(i..close + 1),
                    ));
                }
                let inner = crate::lexer::StringLit {
                    text: text[i + 1..close].to_string(),
                    offsets: lit.offsets[i + 1..=close].to_vec(),
                };
                flush(&mut literal, &mut pieces);
                pieces.push(Piece::Optional(parse_mexpr(grammar, &inner, true)?));
                i = close + 1;
            }
            b'<' => {
                // `<name>` is a placeholder when `name` is a rule, text otherwise.
                let close = text[i + 1..]
                    .find(['>', '<', ' '])
                    .map(|c| i + 1 + c)
                    .filter(|&c| bytes[c] == b'>' && c > i + 1);
                match close.and_then(|c| grammar.symbol(&text[i + 1..c]).map(|s| (c, s))) {
                    Some((c, symbol)) => {
                        flush(&mut literal, &mut pieces);
                        pieces.push(Piece::Placeholder(symbol));
                        i = c + 1;
                    }
                    None => {
                        literal.push('<');
                        i += 1;
                    }
                }
            }
            _ => {
                let c = text[i..].chars().next().expect("in bounds");
                literal.push(c);
                i += c.len_utf8();
            }
        }
    }
    flush(&mut literal, &mut pieces);
    Ok(pieces)
}

/// Rejects a match expression that no `<symbol>` tree can match: if one did, putting
/// any text of the right type in its placeholders would give text in the language of
/// `<symbol>`, so a variant whose shortest instance does not parse can never match.
fn check_can_match(
    grammar: &Grammar,
    symbol: SymbolId,
    mexpr: &MatchExpr,
    lit: &crate::lexer::StringLit,
    span: Span,
) -> RResult<()> {
    let fragment = grammar.with_start(symbol);
    let Ok(parser) = thicket_parse::Parser::new(&fragment, thicket_parse::ParseConfig::default())
    else {
        return Ok(());
    };
    // Shortest texts: with the depth budget used up from the start, the generator takes
    // the shallowest choice everywhere, and the fewest repetitions.
    let depth = thicket_grammar::Analysis::new(grammar).grammar_min_depth(grammar);
    let Ok(generator) = thicket_gen::Generator::new(
        grammar,
        thicket_gen::GenConfig {
            max_depth: depth,
            max_repetitions: 0,
            ..thicket_gen::GenConfig::default()
        },
    ) else {
        return Ok(());
    };
    let mut shortest: HashMap<SymbolId, Vec<u8>> = HashMap::new();
    let mut instance_of = |atoms: &[crate::matching::Atom]| {
        let mut out = Vec::new();
        for atom in atoms {
            match atom {
                crate::matching::Atom::Byte(b) => out.push(*b),
                crate::matching::Atom::Slot(s, _) => {
                    let text = shortest.entry(*s).or_insert_with(|| {
                        let mut sink = thicket_tree::ByteSink::default();
                        let body: ExprId = grammar.rule(*s).body;
                        let mut rng = thicket_gen::Generator::rng_for(0, 0);
                        generator.expand(body, depth, &mut rng, &mut sink);
                        sink.bytes
                    });
                    out.extend_from_slice(text);
                }
            }
        }
        out
    };
    let mut instances = Vec::new();
    for atoms in &mexpr.variants {
        let instance = instance_of(atoms);
        if parser.recognize(&instance).is_ok() {
            return Ok(());
        }
        instances.push(instance);
    }
    let shown = String::from_utf8_lossy(&instances[0]).into_owned();
    let mut d = Diagnostic::error(
        "mexpr-cannot-match",
        format!(
            "this match expression can never match a {}",
            grammar.display_symbol(symbol)
        ),
        span,
    )
    .with_note(format!(
        "with the shortest text for each placeholder it reads {shown:?}, which is not a {}",
        grammar.display_symbol(symbol)
    ));
    // A `<name>` that is not a rule was read as text: the likely cause.
    let mut rest = lit.text.as_str();
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        if let Some(close) = rest.find('>') {
            let name = &rest[..close];
            if !name.contains([' ', '<']) && grammar.symbol(name).is_none() && !name.is_empty() {
                let names: Vec<String> = grammar.rules().iter().map(|r| r.name.clone()).collect();
                let hint = suggest(name, names.iter())
                    .map(|s| format!("; did you mean <{s}>?"))
                    .unwrap_or_default();
                d = d.with_note(format!(
                    "<{name}> is not a nonterminal, so it is read as text{hint}"
                ));
                break;
            }
        }
    }
    Err(Box::new(d))
}
