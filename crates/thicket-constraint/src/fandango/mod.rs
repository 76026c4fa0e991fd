//! Fandango's constraint language: the `where` blocks, `minimizing`/`maximizing`
//! goals and `-c` constraints of Fandango 1.3 specs, read and translated into Core
//! [`Formula`]s that the [`Checker`](crate::Checker) and the solver use as they use
//! ISLa's.
//!
//! Data flow: text → [`lexer`] → [`parser`] ([`ast`], spans everywhere) → translation
//! (straight to Core: Fandango's selectors and its combination semantics have no
//! counterpart in ISLa's surface syntax) → [`FandangoConstraint`] / [`SoftGoal`].
//!
//! # Semantics (Fandango's, reproduced)
//!
//! - `forall <x> in SEL: C` / `exists ...` and `all(C for x in *SEL)` / `any(...)`
//!   (`x` a nonterminal or a Python name) quantify over the trees `SEL` selects.
//! - A selector: `<a>` is the tree bound to `<a>` if a quantifier binds it, else every
//!   `<a>` subtree of the input (the root included); `SEL.<b>` is every direct `<b>`
//!   child of each tree `SEL` selects (all of them, unlike ISLa's XPath `.<b>`, the
//!   first); `SEL..<b>` every `<b>` subtree of each; `SEL[i]` children by index,
//!   terminals included; `*SEL` the list of all; `|SEL|` and `len(*SEL)` their number.
//! - An atom (a comparison `a OP b` with `OP` one of `== != <> < <= > >=`, or any other
//!   Python expression) holds when it holds for *every combination* of the trees its
//!   selector occurrences select (each occurrence on its own, even if written twice),
//!   and trivially when some occurrence selects nothing.
//! - In an expression atom an exception makes the combination false; in a comparison
//!   atom an exception while computing a side skips the combination (it counts as
//!   satisfied), as Fandango's `ComparisonConstraint` does. `a < b < c` at the
//!   constraint level is `a < b and b < c`, each a comparison atom.
//! - `and`/`or` of formulas combine the formulas' verdicts; `(F)` is a formula; `not`,
//!   and `and`/`or` inside a Python expression, are Python's, inside one atom.
//! - `A -> B` (deprecated) is `not A or B`.
//!
//! # What is native and what goes to the host
//!
//! Native (translated into Core, solved and checked by thicket itself):
//! - quantifiers and the placeholders' combinations, as nested Core quantifiers
//!   (`.<b>` is [`Domain::Children`], `..<b>` and a free `<a>` [`Domain::Within`]);
//! - `|SEL|` and `len(*SEL)`, as `exists int n: selection_count(base, n) and ...`
//!   ([`SelectionCount`]);
//! - `str(x)`, `int(x)` and `int(s, base)` (a literal base from 2 to 36) where the
//!   texts are ASCII (the grammar decides): Python's rules for surrounding whitespace,
//!   a sign, the base's prefix and `_` between digits are Core's `str.to_int_base`,
//!   and a text Python's `int()` rejects raises, which is modelled; non-ASCII texts go
//!   to Python, which also reads Unicode digits;
//! - `len(str(..))`, string literals (bytes literals when ASCII), integer literals
//!   (hex, octal, binary), `True`/`False`, f-strings without conversions and specs;
//! - comparisons of strings, integers, trees (`tree == tree` is text equality when
//!   both have the same symbol and false otherwise: an approximation of Fandango's
//!   structural equality, exact for unambiguous grammars; ordering two trees compares
//!   their texts), a tree against a string (its text) or an integer (`int()` of its
//!   text);
//! - `+ - *`, `//` and `%` by a positive literal, `**` by a literal up to 16, unary
//!   `- + ~`, `abs`, `min`, `max`, `bool`, string `+`, `s[i]`, `s[a:b]` with literal
//!   bounds, `x in "..."`, `x in (literal, ...)`, `startswith`, `endswith`, `find`,
//!   `tree.value()`;
//! - Fandango's helpers `is_before(t, a, b)` and `is_after(t, a, b)` over trees: `a`
//!   and `b` lie in `t` and `a` comes before (after) `b` in document order, an ancestor
//!   before its descendants ([`precedes`](crate::predicates::precedes)). Fandango finds
//!   the first subtree of `t` *structurally equal* to each instead, which differs only
//!   when an equal copy occurs earlier than the tree itself;
//! - `and`, `or`, `not`, conditional expressions (in a truth-value position), Python's
//!   comparison chains, and `any`/`all` over a comprehension `for x in *SEL` whose
//!   body cannot raise.
//!
//! A name the spec's Python code defines or imports ([`Compiler::with_spec_python`])
//! is the spec's, never a built-in above.
//!
//! Host ([`HostPredicate`], a Python expression over the bound trees, evaluated by a
//! [`Host`](crate::host::Host)): everything else — calls of the spec's functions and
//! of modules, `int()` of non-ASCII text or with a computed base, floats, `/`, bit operations, `len()` and truth values of
//! trees, indexing trees (`<a>[0]`, applied in Python to the bound `<a>`), methods
//! other than the above, `is`, `None`, lambdas, comprehensions over anything but
//! `*SEL`. An expression atom `A and B` splits into its conjuncts, each native or
//! host; otherwise an atom is wholly native or wholly host. `*SEL` and `|SEL|`
//! inside a host expression are computed natively ([`HostArg::Trees`](crate::host::HostArg)
//! in Fandango's order, [`HostArg::Int`](crate::host::HostArg)).
//!
//! Deliberate differences: a tree's text is its bytes read as UTF-8 (an invalid byte
//! one character), as everywhere in thicket, where Fandango decodes a bytes-valued tree
//! as Latin-1: `str()` and `len(str())` of non-ASCII bytes can differ. An exception in
//! a comparison itself (`tree == 5` on a
//! non-numeric tree) aborts Fandango's whole check; here it makes that atom false.
//! Fandango's scope of bound nonterminals leaks out of a quantifier into later
//! siblings; here a name is bound only inside its quantifier. `{*<a>: slice}` and
//! several `*<a>` pairs are refused; `x[i]` is supported only at the end of a
//! selector inside an expression. A selection under a generator (`_sources`) is not
//! searched: thicket trees have none. Nonterminal names that are Python keywords
//! (`<def>`) are accepted, which Fandango's parser rejects. `a -> b` is accepted as
//! documented, though Fandango 1.3.1 itself fails on it (an `AttributeError`).

pub mod ast;
pub mod atoms;
pub mod blocks;
pub mod lexer;
pub mod parser;
mod translate;

pub use atoms::{Assignment, HostKind, HostPredicate, ParamSource, PathStep, SelectionCount};
pub use blocks::{Block, BlockKind, Dialect, blocks, dialect};
pub use translate::{GoalValue, HostUse};

use crate::eval::{Binding, Evaluator};
use crate::formula::{Domain, Formula, Quantifier, Var, VarId};
use crate::host::SharedHost;
use crate::smt::Value;
use crate::view::TreeView;
use crate::{Constraint, Outcome};
use lexer::StrValue;
use std::collections::BTreeSet;
use std::sync::Arc;
use thicket_grammar::{Diagnostic, Grammar, SourceFile, Span, SpecError, SymbolId};
use thicket_tree::DerivationTree;

/// A Fandango constraint translated into Core.
#[derive(Clone, Debug)]
pub struct FandangoConstraint {
    /// The Core constraint, for the [`Checker`](crate::Checker) and the solver.
    pub constraint: Constraint,
    /// Whether it needs no host (every atom native).
    pub native: bool,
    /// The host expressions it uses, with why each is not native.
    pub host_exprs: Vec<HostUse>,
    /// Warnings (a nonterminal the grammar does not have, which selects nothing).
    pub warnings: Vec<Diagnostic>,
}

/// A `minimizing`/`maximizing` goal: a number per combination of its placeholders,
/// averaged, as Fandango's soft values are.
#[derive(Clone, Debug)]
pub struct SoftGoal {
    /// Minimize (true) or maximize.
    pub minimize: bool,
    /// Its variables (the first is the whole input).
    pub vars: Vec<Var>,
    /// The text it was read from.
    pub source: Arc<SourceFile>,
    /// Where its expression is.
    pub span: Span,
    /// Whether it needs no host.
    pub native: bool,
    /// The host expressions it uses.
    pub host_exprs: Vec<HostUse>,
    /// The value of one combination.
    pub value: GoalValue,
    layers: Vec<(VarId, SymbolId, Domain, Span)>,
}

/// Translates Fandango constraints against one grammar (its facts computed once).
pub struct Compiler<'g> {
    grammar: &'g Grammar,
    facts: translate::SymbolFacts,
    host: Option<SharedHost>,
    spec_names: BTreeSet<String>,
}

fn spec_error(source: &Arc<SourceFile>, d: Diagnostic) -> SpecError {
    SpecError {
        source: source.clone(),
        diagnostics: vec![d],
    }
}

impl<'g> Compiler<'g> {
    /// A compiler for constraints over `grammar`; `host` evaluates what is not native
    /// (without one, such constraints are errors that say what needs Python).
    pub fn new(grammar: &'g Grammar, host: Option<SharedHost>) -> Compiler<'g> {
        Compiler {
            grammar,
            facts: translate::SymbolFacts::new(grammar),
            host,
            spec_names: BTreeSet::new(),
        }
    }

    /// The same compiler, told which terminals of the grammar are bits (Fandango's `0`
    /// and `1`): a tree that can hold them is evaluated in Python, where its value is
    /// what its bits pack into rather than its text.
    pub fn with_bits(mut self, bit_terminals: &[thicket_grammar::ExprId]) -> Self {
        self.facts.set_bits(self.grammar, bit_terminals);
        self
    }

    /// The same compiler, told the spec's Python code: a function the code defines
    /// (`def is_before(...)`, `len = ...`, `from m import str`) is called in Python even
    /// where a built-in of that name would be translated natively.
    pub fn with_spec_python<'b>(mut self, blocks: impl IntoIterator<Item = &'b str>) -> Self {
        for block in blocks {
            self.spec_names.extend(python_defined_names(block));
        }
        self
    }

    /// The constraint written at `span` in `source`: a `where` block (the keyword
    /// may be included) or a `-c` constraint.
    pub fn constraint(
        &self,
        source: Arc<SourceFile>,
        span: Span,
    ) -> Result<FandangoConstraint, SpecError> {
        let text = source.text();
        let formula = parser::parse_where(text, span.start as usize, span.end as usize)
            .map_err(|d| spec_error(&source, *d))?;
        let mut t = translate::Translator::new(
            self.grammar,
            text,
            &self.facts,
            self.host.clone(),
            &self.spec_names,
            span,
        );
        let core = t
            .constraint(&formula)
            .map_err(|d| spec_error(&source, *d))?;
        Ok(FandangoConstraint {
            native: t.hosts.is_empty(),
            constraint: Constraint {
                formula: core,
                vars: t.vars,
                source: source.clone(),
                span: formula.span(),
            },
            host_exprs: t.hosts,
            warnings: t.warnings,
        })
    }

    /// The goal written at `span` in `source`: `minimizing EXPR` or `maximizing EXPR`
    /// (then `minimize` may be `None`), or a bare expression with `minimize` given
    /// (`--minimize`/`--maximize` arguments).
    pub fn goal(
        &self,
        source: Arc<SourceFile>,
        span: Span,
        minimize: Option<bool>,
    ) -> Result<SoftGoal, SpecError> {
        let text = source.text();
        let (written, expr) = parser::parse_goal(text, span.start as usize, span.end as usize)
            .map_err(|d| spec_error(&source, *d))?;
        let Some(minimize) = written.or(minimize) else {
            return Err(spec_error(
                &source,
                Diagnostic::error(
                    "fandango-goal",
                    "a goal starts with `minimizing` or `maximizing`",
                    span,
                ),
            ));
        };
        let mut t = translate::Translator::new(
            self.grammar,
            text,
            &self.facts,
            self.host.clone(),
            &self.spec_names,
            span,
        );
        let (layers, value) = t.goal(&expr).map_err(|d| spec_error(&source, *d))?;
        Ok(SoftGoal {
            minimize,
            native: t.hosts.is_empty(),
            vars: t.vars,
            source: source.clone(),
            span: expr.span,
            host_exprs: t.hosts,
            value,
            layers,
        })
    }
}

/// A generator's expression (`f(<x>, <y>)` after `:=`, at `span` in `text`) as a
/// [`HostExpr`](crate::host::HostExpr) over the rules it names: each nonterminal
/// written in it becomes a parameter (one per rule, in order of first mention), whose
/// value is a fresh tree of that rule. Returns the expression and the rules' names.
pub fn generator_expr(text: &str, span: Span) -> (crate::host::HostExpr, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let mut replacements = Vec::new();
    if let Ok(tokens) = lexer::tokenize(text, span.start as usize, span.end as usize, 0) {
        for w in tokens.windows(3) {
            if let [
                lexer::Token {
                    tok: lexer::Tok::Op("<"),
                    span: open,
                },
                lexer::Token {
                    tok: lexer::Tok::Name(name),
                    span: at,
                },
                lexer::Token {
                    tok: lexer::Tok::Op(">"),
                    span: close,
                },
            ] = w
                && open.end == at.start
                && at.end == close.start
            {
                let k = match names.iter().position(|n| n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name.clone());
                        names.len() - 1
                    }
                };
                replacements.push((
                    Span::new(open.start as usize, close.end as usize),
                    format!("_fan{k}"),
                ));
            }
        }
    }
    let source = if replacements.is_empty() {
        text[span.range()].trim().to_string()
    } else {
        translate::python_source(text, span, &replacements)
    };
    let params = (0..names.len()).map(|k| format!("_fan{k}")).collect();
    (crate::host::HostExpr { source, params }, names)
}

/// The value of a generator whose expression is one literal (`:= "'100'"`, `:= b"\\x00"`,
/// `:= 42`, adjacent strings joined) as the text its rule's subtree is parsed from,
/// the text Python's value would give; `None` for any other expression. Such a
/// generator needs no Python: its value is the same on every call.
pub fn generator_constant(text: &str, span: Span) -> Option<Vec<u8>> {
    let (direction, expr) =
        parser::parse_goal(text, span.start as usize, span.end as usize).ok()?;
    if direction.is_some() {
        return None;
    }
    match expr.kind {
        ast::ExprKind::Str(Some(StrValue::Text(text))) => Some(text.into_bytes()),
        ast::ExprKind::Str(Some(StrValue::Bytes(bytes))) => Some(bytes),
        ast::ExprKind::Int(Some(n)) => Some(n.to_string().into_bytes()),
        _ => None,
    }
}

/// The top-level names a block of Python code binds: `def`, `class`, assignments and
/// imports at the start of a line. A line scan rather than a Python parser: it may see
/// a name that is only bound inside a function, which only makes a call run in Python.
fn python_defined_names(code: &str) -> Vec<String> {
    let identifier = |s: &str| -> Option<String> {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (end > 0 && !s.starts_with(|c: char| c.is_ascii_digit())).then(|| s[..end].to_string())
    };
    let mut names = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if let Some(rest) = line
            .strip_prefix("def ")
            .or_else(|| line.strip_prefix("async def "))
            .or_else(|| line.strip_prefix("class "))
        {
            names.extend(identifier(rest.trim_start()));
        } else if line.starts_with("import ") || line.starts_with("from ") {
            let imported = match line.split_once(" import ") {
                Some((_, names)) => names,
                None => &line["import ".len()..],
            };
            for item in imported.trim_matches(|c| c == '(' || c == ')').split(',') {
                let item = item.trim();
                let bound = item.rsplit_once(" as ").map_or(item, |(_, alias)| alias);
                // `import a.b` binds `a`.
                names.extend(identifier(bound.split('.').next().unwrap_or("")));
            }
        } else if let Some((lhs, _)) = line.split_once('=') {
            // Assignments (`a = `, `a, b = `, `a: int = `), not comparisons.
            if !lhs.ends_with(['=', '!', '<', '>']) && !line[lhs.len()..].starts_with("==") {
                for target in lhs.split(',') {
                    let target = target.split(':').next().unwrap_or("").trim();
                    names.extend(identifier(target).filter(|n| n.len() == target.len()));
                }
            }
        }
    }
    names
}

/// The Fandango constraint at `span` in `source` (a `where` block or a `-c`
/// constraint), translated against `grammar`; see [`Compiler`] to translate several.
pub fn from_fandango(
    grammar: &Grammar,
    host: Option<SharedHost>,
    source: Arc<SourceFile>,
    span: Span,
) -> Result<FandangoConstraint, SpecError> {
    Compiler::new(grammar, host).constraint(source, span)
}

impl SoftGoal {
    /// The goal's values on `tree`, one per combination of its placeholders (0 for one
    /// whose evaluation raises, as in Fandango).
    pub fn values(&self, tree: &DerivationTree, grammar: &Grammar) -> Vec<f64> {
        let view = TreeView::new(tree, grammar);
        let mut ev = Evaluator::new(&view, grammar, &self.vars);
        let quantifiers: Vec<Quantifier> = self
            .layers
            .iter()
            .map(|&(var, symbol, domain, span)| Quantifier {
                universal: true,
                var,
                symbol,
                domain,
                mexpr: None,
                body: Formula::Smt(crate::smt::Term::Const(Value::Bool(true)), span),
                span,
                outermost_only: false,
                local: false,
                distinct: None,
            })
            .collect();
        let mut out = Vec::new();
        self.combinations(&quantifiers, &mut ev, &view, grammar, &mut out);
        out
    }

    /// The goal's fitness on `tree`: the mean of [`SoftGoal::values`], 0 if there are
    /// none (Fandango's `ValueFitness`).
    pub fn fitness(&self, tree: &DerivationTree, grammar: &Grammar) -> f64 {
        let values = self.values(tree, grammar);
        if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    }

    fn combinations(
        &self,
        rest: &[Quantifier],
        ev: &mut Evaluator<'_, '_>,
        view: &TreeView<'_>,
        grammar: &Grammar,
        out: &mut Vec<f64>,
    ) {
        let Some((q, rest)) = rest.split_first() else {
            out.push(self.value_here(ev, view, grammar));
            return;
        };
        for instance in ev.instances(q) {
            let saved: Vec<(VarId, Binding)> =
                instance.iter().map(|&(v, _)| (v, ev.binding(v))).collect();
            for &(v, n) in &instance {
                ev.bind(v, Binding::Node(n));
            }
            self.combinations(rest, ev, view, grammar, out);
            for (v, b) in saved {
                ev.bind(v, b);
            }
        }
    }

    fn value_here(
        &self,
        ev: &mut Evaluator<'_, '_>,
        view: &TreeView<'_>,
        grammar: &Grammar,
    ) -> f64 {
        match &self.value {
            GoalValue::Native {
                term,
                raises,
                counts,
            } => {
                for (var, call) in counts {
                    ev.bind(*var, Binding::Unbound);
                    if let Formula::Predicate(call) = call
                        && let Some(Outcome::Bind(n)) = ev.predicate_outcome(call)
                    {
                        ev.bind(*var, Binding::Int(n));
                    }
                }
                if raises.as_ref().is_some_and(|r| ev.holds(r)) {
                    return 0.0;
                }
                match ev.value(term) {
                    Ok(Value::Int(i)) => i as f64,
                    _ => 0.0,
                }
            }
            GoalValue::Host {
                expr,
                args,
                sources,
                host,
            } => {
                let trees: Vec<thicket_tree::NodeId> = args
                    .iter()
                    .filter_map(|&v| match ev.binding(v) {
                        Binding::Node(n) => Some(n),
                        _ => None,
                    })
                    .collect();
                if trees.len() != args.len() {
                    return 0.0;
                }
                let host_args = atoms::host_args(view, sources, &trees);
                host.eval_number(expr, view.tree(), grammar, &host_args)
                    .unwrap_or(0.0)
            }
        }
    }
}

#[cfg(test)]
mod tests;
