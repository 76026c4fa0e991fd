//! # thicket-constraint
//!
//! Semantic constraints: the ISLa constraint language (Steinhöfel & Zeller, "Input
//! Invariants"), resolved against a grammar into Core formulas ([`formula`]), and an
//! exact checker over derivation trees that explains each violation with a witness.
//! The solver builds on the same [`Constraint`] and [`eval::Evaluator`].
//!
//! Fandango's constraint language (Python expressions over selectors) is read by
//! [`fandango`] into the same Core, with what Core cannot say kept as host-language
//! atoms ([`host`]).
//!
//! Data flow: text → [`lexer`] → [`parser`] (surface [`syntax`]) → [`resolve`] (Core,
//! with every name, sort, predicate argument and match expression checked before any
//! input is read) → [`Checker`] ([`view::TreeView`] + [`eval::Evaluator`]).
//!
//! ```
//! use thicket_constraint::{Checker, Predicates};
//! let spec = thicket_grammar::load_spec_bytes(
//!     "pair.fan",
//!     b"<start> ::= <a> \"=\" <a>\n<a> ::= r\"[0-9]+\"\nwhere forall <start> s=\"{<a> x}={<a> y}\": x = y\n",
//!     &Default::default(),
//! ).unwrap();
//! let constraints = thicket_constraint::from_spec(&spec, &Predicates::standard()).unwrap();
//! let checker = Checker::new(&spec.grammar, constraints);
//! let parser = thicket_parse::Parser::new(&spec.grammar, Default::default()).unwrap();
//! let good = parser.parse(b"12=12").unwrap().tree();
//! let bad = parser.parse(b"12=13").unwrap().tree();
//! assert!(checker.check(&good).is_empty());
//! assert_eq!(checker.check(&bad), vec![0]);
//! ```

#![warn(missing_docs)]

pub mod eval;
pub mod fandango;
pub mod formula;
pub mod host;
pub mod lexer;
pub mod matching;
pub mod parser;
pub mod predicates;
pub mod regex;
pub mod resolve;
pub mod smt;
pub mod syntax;
pub mod view;

pub use eval::{Binding, Evaluator, Step, SubtreeCache};
pub use fandango::{Dialect, FandangoConstraint, SoftGoal, from_fandango};
pub use formula::{Formula, Var, VarId, VarType};
pub use predicates::{ArgKind, ArgValue, Outcome, Predicate, PredicateContext, Predicates};
pub use view::TreeView;

use std::collections::HashMap;
use std::sync::Arc;
use thicket_grammar::{Diagnostic, Grammar, SourceFile, Span, Spec, SpecError};
use thicket_tree::{DerivationTree, NodeId};

/// A constraint, resolved against a grammar and ready to check.
#[derive(Clone, Debug)]
pub struct Constraint {
    /// The Core formula.
    pub formula: Formula,
    /// Its variables; the first is the constant bound to the whole input.
    pub vars: Vec<Var>,
    /// The text it was read from.
    pub source: Arc<SourceFile>,
    /// Where it is written in `source`.
    pub span: Span,
}

impl Constraint {
    /// The constraint as written.
    pub fn text(&self) -> &str {
        self.source.slice(self.span)
    }

    /// `file:line:col` of the constraint.
    pub fn location(&self) -> String {
        format!(
            "{}:{}",
            self.source.name(),
            self.source.line_col(self.span.start as usize)
        )
    }
}

fn spec_error(source: &Arc<SourceFile>, diagnostic: Diagnostic) -> SpecError {
    SpecError {
        source: source.clone(),
        diagnostics: vec![diagnostic],
    }
}

fn compile(
    syntax: &syntax::ConstraintSyntax,
    grammar: &Grammar,
    facts: &resolve::GrammarFacts,
    predicates: &Predicates,
    source: &Arc<SourceFile>,
) -> Result<Constraint, SpecError> {
    let resolved =
        resolve::resolve(syntax, grammar, facts, predicates).map_err(|d| spec_error(source, *d))?;
    Ok(Constraint {
        formula: resolved.formula,
        vars: resolved.vars,
        source: source.clone(),
        span: syntax.span,
    })
}

/// The constraints in a spec's `where` blocks (none if it has none).
pub fn from_spec(spec: &Spec, predicates: &Predicates) -> Result<Vec<Constraint>, SpecError> {
    Ok(spec_constraints(spec, predicates, None)?
        .into_iter()
        .map(|c| c.constraint)
        .collect())
}

/// A `where` constraint of a spec, compiled, with the language it is written in.
#[derive(Clone, Debug)]
pub struct SpecConstraint {
    /// The constraint.
    pub constraint: Constraint,
    /// ISLa's language or Fandango's.
    pub dialect: fandango::Dialect,
    /// The host (Python) expressions it uses, with why each is not native; empty for
    /// a constraint solved and checked natively.
    pub host_exprs: Vec<fandango::HostUse>,
    /// Warnings about it (a nonterminal the grammar lacks, which selects nothing).
    pub warnings: Vec<Diagnostic>,
}

/// Every `where` constraint of `spec`, compiled. In a Fandango `.fan` file each block
/// is read in Fandango's language, or in ISLa's where Fandango's cannot read it
/// ([`fandango::dialect`]: thicket's own specs keep their ISLa constraints); in other
/// specs (`.bnf`) the blocks after the grammar are ISLa's. What a Fandango block
/// cannot say natively is evaluated by `host`; without one such a block is an error
/// that names what needs Python.
pub fn spec_constraints(
    spec: &Spec,
    predicates: &Predicates,
    host: Option<host::SharedHost>,
) -> Result<Vec<SpecConstraint>, SpecError> {
    let fan_blocks: Vec<&thicket_grammar::fandango::FanBlock> = spec
        .fandango
        .constraints
        .iter()
        .filter(|c| c.kind == thicket_grammar::fandango::ConstraintKind::Where)
        .map(|c| &c.block)
        .collect();
    if fan_blocks.is_empty() {
        return Ok(isla_blocks(spec, predicates)?
            .into_iter()
            .map(|constraint| SpecConstraint {
                constraint,
                dialect: fandango::Dialect::Isla,
                host_exprs: Vec::new(),
                warnings: Vec::new(),
            })
            .collect());
    }
    let compiler = fandango::Compiler::new(&spec.grammar, host)
        .with_bits(&spec.fandango.bit_terminals)
        .with_spec_python(spec.fandango.python.iter().map(|b| b.text()));
    let facts = resolve::GrammarFacts::new(&spec.grammar);
    fan_blocks
        .into_iter()
        .map(|block| {
            let text = block.source.text();
            match fandango::dialect(text, block.span) {
                fandango::Dialect::Fandango => {
                    let c = compiler.constraint(block.source.clone(), block.span)?;
                    Ok(SpecConstraint {
                        constraint: c.constraint,
                        dialect: fandango::Dialect::Fandango,
                        host_exprs: c.host_exprs,
                        warnings: c.warnings,
                    })
                }
                fandango::Dialect::Isla => {
                    let (start, end) = (block.span.start as usize, block.span.end as usize);
                    let syntax = parser::parse_constraint(text, start, end)
                        .map_err(|d| spec_error(&block.source, *d))?;
                    let constraint =
                        compile(&syntax, &spec.grammar, &facts, predicates, &block.source)?;
                    Ok(SpecConstraint {
                        constraint,
                        dialect: fandango::Dialect::Isla,
                        host_exprs: Vec::new(),
                        warnings: Vec::new(),
                    })
                }
            }
        })
        .collect()
}

/// The ISLa `where` blocks after a spec's grammar (`Spec::constraints_start`).
fn isla_blocks(spec: &Spec, predicates: &Predicates) -> Result<Vec<Constraint>, SpecError> {
    let Some(start) = spec.constraints_start else {
        return Ok(Vec::new());
    };
    let blocks = parser::parse_where_blocks(spec.source.text(), start)
        .map_err(|d| spec_error(&spec.source, *d))?;
    let facts = resolve::GrammarFacts::new(&spec.grammar);
    blocks
        .iter()
        .map(|b| compile(b, &spec.grammar, &facts, predicates, &spec.source))
        .collect()
}

/// One constraint from text (an ISLa `.isla` file or a `-c` argument), reported under
/// `name`.
pub fn from_text(
    grammar: &Grammar,
    predicates: &Predicates,
    name: &str,
    text: &str,
) -> Result<Constraint, SpecError> {
    let source = Arc::new(SourceFile::new(name, text));
    let syntax = parser::parse_constraint(source.text(), 0, source.text().len())
        .map_err(|d| spec_error(&source, *d))?;
    let facts = resolve::GrammarFacts::new(grammar);
    compile(&syntax, grammar, &facts, predicates, &source)
}

/// A violated constraint and why: the bindings that lead to the deciding atom or
/// quantifier, and what it computed.
#[derive(Clone, Debug)]
pub struct Violation {
    /// Index of the constraint in the checker.
    pub constraint: usize,
    /// The explanation, outermost binding first.
    pub steps: Vec<Step>,
}

/// Checks trees against a set of constraints (all must hold).
pub struct Checker<'g> {
    grammar: &'g Grammar,
    constraints: Vec<Constraint>,
    budget: u64,
}

impl<'g> Checker<'g> {
    /// A checker for trees of `grammar`. Match expressions of the same shape are
    /// numbered alike ([`matching::MatchExpr::cache_key`]).
    pub fn new(grammar: &'g Grammar, mut constraints: Vec<Constraint>) -> Checker<'g> {
        fn number(f: &mut Formula, shapes: &mut HashMap<Vec<Vec<matching::Atom>>, u32>) {
            match f {
                Formula::Quantifier(q) => {
                    if let Some(m) = &mut q.mexpr {
                        let next = shapes.len() as u32;
                        m.shape = Some(*shapes.entry(m.shape()).or_insert(next));
                    }
                    number(&mut q.body, shapes);
                }
                Formula::Not(inner) => number(inner, shapes),
                Formula::Binary(_, a, b) => {
                    number(a, shapes);
                    number(b, shapes);
                }
                Formula::IntQuantifier { body, .. } => number(body, shapes),
                Formula::Smt(..) | Formula::Predicate(_) => {}
            }
        }
        let mut shapes = HashMap::new();
        for c in &mut constraints {
            number(&mut c.formula, &mut shapes);
        }
        Checker {
            grammar,
            constraints,
            budget: eval::DEFAULT_BUDGET,
        }
    }

    /// Lets each constraint visit at most `budget` quantifier instances per tree; a
    /// constraint that needs more counts as violated, explained as undecided.
    pub fn with_budget(mut self, budget: u64) -> Checker<'g> {
        self.budget = budget;
        self
    }

    /// An evaluator of constraint `c` (one of this checker's) on the tree `view`
    /// indexes, within the checker's budget: for callers that walk a formula
    /// themselves (a solver planning repairs).
    pub fn evaluator<'a, 't>(
        &'a self,
        view: &'a TreeView<'t>,
        c: &'a Constraint,
    ) -> Evaluator<'a, 't> {
        Evaluator::new(view, self.grammar, &c.vars).with_budget(self.budget)
    }

    /// The constraints.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Indices of the constraints the tree violates (empty: the tree is valid).
    pub fn check(&self, tree: &DerivationTree) -> Vec<usize> {
        let view = TreeView::new(tree, self.grammar);
        self.constraints
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                let mut evaluator = self.evaluator(&view, c);
                !evaluator.holds(&c.formula) || evaluator.exhausted()
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The violations of the tree, each explained.
    pub fn explain(&self, tree: &DerivationTree) -> Vec<Violation> {
        let view = TreeView::new(tree, self.grammar);
        let mut out = Vec::new();
        for (i, c) in self.constraints.iter().enumerate() {
            let mut evaluator = self.evaluator(&view, c);
            let holds = evaluator.holds(&c.formula);
            let mut steps = Vec::new();
            if evaluator.exhausted() {
                steps.push(Step::Fact {
                    span: c.span,
                    holds: false,
                    detail: format!(
                        "undecided: checking stopped after {} steps (quantifier instances, \
                         and 64-byte blocks of subtree text read) (raise the budget with --max-steps)",
                        self.budget
                    ),
                });
            } else if holds {
                continue;
            } else {
                evaluator.explain(&c.formula, false, &mut steps);
            }
            out.push(Violation {
                constraint: i,
                steps,
            });
        }
        out
    }

    /// A violation as text, e.g.
    ///
    /// ```text
    /// violates xml.bnf:31:7: forall <xml-tree> tree="<{<id> opid}...": (= opid clid)
    ///   tree = <xml-tree> at 1:1 "<a>x</b>"
    ///   opid = <id> at 1:2 "a"
    ///   clid = <id> at 1:8 "b"
    ///   (= opid clid) at xml.bnf:32:3 is false: "a" = "b"
    /// ```
    pub fn render(&self, violation: &Violation, tree: &DerivationTree) -> String {
        let c = &self.constraints[violation.constraint];
        let mut out = format!("violates {}: {}\n", c.location(), one_line(c.text(), 120));
        for step in &violation.steps {
            match step {
                Step::Bind { var, node } => {
                    let var = &c.vars[var.index()];
                    let (line, col) = input_line_col(tree, *node);
                    out.push_str(&format!(
                        "  {} = {} at {line}:{col} {}\n",
                        var.name,
                        self.node_label(tree, *node),
                        quote_input(tree.text(*node), 80)
                    ));
                }
                Step::BindInt { var, value } => {
                    out.push_str(&format!("  {} = {value}\n", c.vars[var.index()].name));
                }
                Step::Fact {
                    span,
                    holds,
                    detail,
                } => {
                    out.push_str(&format!(
                        "  {} at {}:{} is {}: {}\n",
                        one_line(c.source.slice(*span), 80),
                        c.source.name(),
                        c.source.line_col(span.start as usize),
                        holds,
                        detail
                    ));
                }
            }
        }
        out
    }

    /// A violation as JSON.
    pub fn to_json(&self, violation: &Violation, tree: &DerivationTree) -> serde_json::Value {
        let c = &self.constraints[violation.constraint];
        let steps: Vec<serde_json::Value> = violation
            .steps
            .iter()
            .map(|step| match step {
                Step::Bind { var, node } => {
                    let (line, column) = input_line_col(tree, *node);
                    let range = tree.text_range(*node);
                    let mut step = serde_json::json!({
                        "bind": c.vars[var.index()].name,
                        "nonterminal": self.node_label(tree, *node),
                        "offset": range.start,
                        "length": range.len(),
                        "line": line,
                        "column": column,
                    });
                    // Text that is not UTF-8 as hex, as in all JSON output.
                    let (key, text) = match std::str::from_utf8(tree.text(*node)) {
                        Ok(text) => ("text", text.to_string()),
                        Err(_) => ("text_hex", thicket_tree::hex(tree.text(*node))),
                    };
                    step[key] = serde_json::Value::String(text);
                    step
                }
                Step::BindInt { var, value } => serde_json::json!({
                    "bind": c.vars[var.index()].name,
                    // A number, as everywhere in JSON output: exact within 64 bits (a
                    // `Value` holds no more), the nearest double beyond.
                    "value": i64::try_from(*value)
                        .map_or_else(|_| serde_json::json!(*value as f64), |v| serde_json::json!(v)),
                }),
                Step::Fact {
                    span,
                    holds,
                    detail,
                } => {
                    let at = c.source.line_col(span.start as usize);
                    serde_json::json!({
                        "formula": c.source.slice(*span),
                        "line": at.line,
                        "column": at.column,
                        "holds": holds,
                        "detail": detail,
                    })
                }
            })
            .collect();
        serde_json::json!({
            "constraint": c.text(),
            "location": c.location(),
            "steps": steps,
        })
    }

    fn node_label(&self, tree: &DerivationTree, node: NodeId) -> String {
        self.grammar.display_expr(tree.expr(node))
    }
}

/// 1-based line and column (in characters) of a node's first byte in the input.
fn input_line_col(tree: &DerivationTree, node: NodeId) -> (usize, usize) {
    let before = &tree.bytes()[..tree.text_range(node).start];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = eval::input_string(&before[line_start..]).chars().count() + 1;
    (line, column)
}

fn quote_input(bytes: &[u8], max: usize) -> String {
    let text = eval::input_string(bytes);
    let mut shown: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        shown.push('…');
    }
    format!("{shown:?}")
}

fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > max {
        let cut: String = joined.chars().take(max).collect();
        format!("{cut}…")
    } else {
        joined
    }
}
