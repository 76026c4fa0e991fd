//! The checker: ISLa's judgment (Definition 3.6) on a closed derivation tree, and an
//! explanation of why a constraint fails (the witness).
//!
//! - `forall <a> x in y: φ` holds if φ holds for every `<a>` subtree of `y` (`y` itself
//!   included); with a match expression, only subtrees that match count (the others
//!   hold vacuously), and φ must hold for every match.
//! - SMT atoms are evaluated exactly ([`crate::smt`]); an evaluation error (overflow,
//!   division by zero) makes the atom false, as a solver timeout does in ISLa.
//! - `exists int n: φ` and `forall int n: φ`: the paper leaves open how to decide them
//!   on a closed tree. Here the candidate values of `n` are those the semantic
//!   predicates in φ propose for it (`count(t, "<x>", n)` proposes the number of `<x>`
//!   in `t`, under every binding of the enclosing quantifiers), plus the integer
//!   literals in φ and their neighbours (0 if there are none). `exists` holds if some
//!   candidate satisfies φ;
//!   `forall` is checked on the candidates only (the numbers that matter to the
//!   predicates), which is exact for ISLa's uses and an approximation in general.

use crate::formula::{
    Connective, Distinct, Domain, Formula, PredArg, PredicateCall, Quantifier, Var, VarId,
};
use crate::predicates::{ArgKind, ArgValue, Outcome, PredicateContext};
use crate::smt::{self, EvalError, Func, Term, Value};
use crate::view::TreeView;
use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;
use thicket_grammar::{Grammar, Span};
use thicket_tree::NodeId;

/// Most candidate values tried for one `int` quantifier.
const MAX_INT_CANDIDATES: usize = 64;

/// Quantifier instances one evaluation may visit before it gives up (see
/// [`Evaluator::with_budget`]): constraints like ISLa's XML no-redef are cubic in the
/// number of attributes, and a hostile input must not make checking hang.
pub const DEFAULT_BUDGET: u64 = 20_000_000;

/// A variable's value during evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// No value yet.
    Unbound,
    /// A subtree.
    Node(NodeId),
    /// A number.
    Int(i128),
}

/// Why a predicate call cannot be evaluated yet.
enum Unready {
    /// A tree argument has no value.
    UnboundTree,
    /// A number argument is bound to a subtree whose text is not a number.
    NotANumber(String),
}

/// One step of an explanation.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A quantifier bound a variable to a subtree.
    Bind {
        /// The variable.
        var: VarId,
        /// The subtree.
        node: NodeId,
    },
    /// An `int` quantifier bound a variable to a number.
    BindInt {
        /// The variable.
        var: VarId,
        /// The value.
        value: i128,
    },
    /// A formula (atom or quantifier) and why it has the truth value it has.
    Fact {
        /// Where the formula is written.
        span: Span,
        /// Its truth value.
        holds: bool,
        /// What was computed.
        detail: String,
    },
}

/// What an [`Evaluator`] learnt that depends on a subtree alone: the matches of match
/// expressions (by the expression's [`crate::matching::MatchExpr::cache_key`] and the subtree's root), and the instances
/// of local universals ([`Quantifier::local`]) whose body held under every match (by
/// the quantifier's address and the instance's root). A solver that edits the tree
/// carries the entries of subtrees its edits left alone to the edited tree
/// ([`SubtreeCache::carry`]) and gives them to the next evaluator
/// ([`Evaluator::with_cache`]), which then neither matches those subtrees again nor
/// visits those instances.
#[derive(Default)]
pub struct SubtreeCache {
    matches: FxHashMap<(usize, NodeId), Rc<Matches>>,
    held: FxHashSet<(usize, NodeId)>,
}

/// The matches of a match expression on a subtree: per match, the node each binder
/// binds (in [`crate::matching::MatchExpr::binders`] order), as its offset from the
/// subtree's root. Offsets stay right wherever the unchanged subtree moves.
#[derive(Default)]
struct Matches {
    count: usize,
    offsets: Box<[u32]>,
}

impl SubtreeCache {
    /// The entries for the edited tree: `moved(n)` is where node `n` of the old tree is
    /// in the new one, `None` if its subtree changed (it lies in or holds an edit). An
    /// entry is kept when its subtree moved (its bound nodes lie in it).
    pub fn carry(self, moved: impl Fn(NodeId) -> Option<NodeId>) -> SubtreeCache {
        let matches = self
            .matches
            .into_iter()
            .filter_map(|((expr, node), found)| Some(((expr, moved(node)?), found)))
            .collect();
        let held = self
            .held
            .into_iter()
            .filter_map(|(q, node)| Some((q, moved(node)?)))
            .collect();
        SubtreeCache { matches, held }
    }

    /// Number of match entries.
    pub fn len(&self) -> usize {
        self.matches.len()
    }

    /// Whether there are no match entries.
    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }

    /// Number of instances known to hold.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

/// Evaluates Core formulas on one tree.
pub struct Evaluator<'a, 't> {
    view: &'a TreeView<'t>,
    grammar: &'a Grammar,
    env: Vec<Binding>,
    /// `int` variables whose candidate values are being collected, with the values
    /// seen. While non-empty, atoms that need an unbound variable count as true.
    discovering: Vec<(VarId, Vec<i128>)>,
    /// Bindings saved by the quantifiers being visited, innermost last.
    saved: Vec<Binding>,
    /// The cache entry of a subtree no match expression matches.
    no_match: Rc<Matches>,
    /// Matches of a match expression (by address) on a subtree: nested quantifiers
    /// match the same subtrees again and again, and the tree does not change. And the
    /// instances of local universals known to hold.
    cache: SubtreeCache,
    /// Quantifier instances visited, and how many may be.
    steps: u64,
    budget: u64,
    /// Steps spent materialising subtree texts (one per [`TEXT_STEP_BYTES`] bytes), so
    /// that the budget bounds all work, not only quantifier instances.
    text_steps: std::cell::Cell<u64>,
    /// Characters before each block of [`TEXT_STEP_BYTES`] bytes of the input, if it is
    /// UTF-8: `str.len` of a subtree in constant time (built on first use).
    char_index: std::cell::OnceCell<Option<Vec<u64>>>,
}

/// Bytes of subtree text that cost one step of the budget when a formula reads them
/// as a string.
pub const TEXT_STEP_BYTES: usize = 64;

/// Renders input bytes as a string the way [`crate::smt`] reads them: UTF-8, with
/// each byte of an invalid sequence read as the character of the same number.
pub fn input_string(bytes: &[u8]) -> String {
    thicket_tree::text_of_bytes(bytes).into_owned()
}

impl<'a, 't> Evaluator<'a, 't> {
    /// An evaluator for a constraint with variables `vars` whose first variable (the
    /// constant) is bound to the root of the tree.
    pub fn new(view: &'a TreeView<'t>, grammar: &'a Grammar, vars: &'a [Var]) -> Evaluator<'a, 't> {
        let mut env = vec![Binding::Unbound; vars.len()];
        env[0] = Binding::Node(view.tree().root());
        Evaluator {
            view,
            grammar,
            env,
            discovering: Vec::new(),
            saved: Vec::new(),
            no_match: Rc::new(Matches::default()),
            cache: SubtreeCache::default(),
            steps: 0,
            budget: DEFAULT_BUDGET,
            text_steps: std::cell::Cell::new(0),
            char_index: std::cell::OnceCell::new(),
        }
    }

    /// Lets evaluation visit at most `budget` quantifier instances; beyond that it
    /// stops and [`Evaluator::exhausted`] says so (the verdict is then meaningless).
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }

    /// Starts from what was learnt on this tree before (see [`SubtreeCache`]).
    pub fn with_cache(mut self, cache: SubtreeCache) -> Self {
        self.cache = cache;
        self
    }

    /// What was learnt so far, for a later evaluator (see [`SubtreeCache`]).
    pub fn take_cache(&mut self) -> SubtreeCache {
        std::mem::take(&mut self.cache)
    }

    /// The value of a variable.
    pub fn binding(&self, var: VarId) -> Binding {
        self.env[var.index()]
    }

    /// Every variable with its value, in [`VarId`] order.
    pub fn bindings(&self) -> impl Iterator<Item = (VarId, Binding)> + '_ {
        self.env
            .iter()
            .enumerate()
            .map(|(i, &b)| (VarId(i as u32), b))
    }

    /// Gives a variable a value (for a solver that evaluates a body under a binding it
    /// chose); the caller restores the old one.
    pub fn bind(&mut self, var: VarId, value: Binding) {
        self.env[var.index()] = value;
    }

    /// The value of an SMT term under the current bindings.
    pub fn value(&self, term: &Term) -> Result<Value, EvalError> {
        self.smt(term)
    }

    /// The instances of a quantifier under the current bindings, each as the values of
    /// its variable and of its match expression's binders (several per subtree when
    /// the pattern matches in several ways), in preorder.
    pub fn instances(&mut self, q: &Quantifier) -> Vec<Vec<(VarId, NodeId)>> {
        let mut out = Vec::new();
        self.for_each_instance(q, |ev| {
            let bound = std::iter::once(q.var)
                .chain(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()))
                .filter_map(|v| match ev.env[v.index()] {
                    Binding::Node(n) => Some((v, n)),
                    _ => None,
                })
                .collect();
            out.push(bound);
            true
        });
        out
    }

    /// The values an `int` quantifier's variable is tried with (see the module docs).
    pub fn int_values(&mut self, var: VarId, body: &Formula) -> Vec<i128> {
        self.int_candidates(var, body)
    }

    /// What a predicate call says under the current bindings: `None` if a tree
    /// argument has no value.
    pub fn predicate_outcome(&mut self, call: &PredicateCall) -> Option<Outcome> {
        match self.call(call, false) {
            Ok((outcome, _)) => Some(outcome),
            Err(Unready::UnboundTree) => None,
            Err(Unready::NotANumber(why)) => Some(Outcome::Fails {
                why,
                fix: Vec::new(),
            }),
        }
    }

    /// Evaluates a predicate call on its arguments' values, with the `int` variable
    /// left for it to bind (if any); `explaining`: whether a failure's reason is wanted.
    fn call(
        &self,
        call: &PredicateCall,
        explaining: bool,
    ) -> Result<(Outcome, Option<VarId>), Unready> {
        let params = call.predicate.params();
        // Calls run once per quantifier instance: their arguments go on the stack when
        // they fit (every bundled predicate takes at most four).
        const ON_STACK: usize = 4;
        let mut stack = [ArgValue::Number(None); ON_STACK];
        let mut heap = Vec::new();
        let count = call.args.len().min(params.len());
        let mut unbound = None;
        for (i, (arg, kind)) in call.args.iter().zip(params).enumerate() {
            let value = match (arg, kind) {
                (PredArg::Var(v), ArgKind::Tree) => match self.env[v.index()] {
                    Binding::Node(n) => ArgValue::Tree(n),
                    _ => return Err(Unready::UnboundTree),
                },
                (PredArg::Var(v), _) => match self.env[v.index()] {
                    Binding::Int(i) => ArgValue::Number(Some(i)),
                    Binding::Node(n) => {
                        let text = self.node_string(n);
                        match text.parse::<i128>() {
                            Ok(i) => ArgValue::Number(Some(i)),
                            Err(_) => {
                                return Err(Unready::NotANumber(format!(
                                    "{text:?} is not a number"
                                )));
                            }
                        }
                    }
                    Binding::Unbound => {
                        unbound = Some(*v);
                        ArgValue::Number(None)
                    }
                },
                (PredArg::Text(t), _) => ArgValue::Text(t),
                (PredArg::Int(i), _) => ArgValue::Number(Some(*i)),
                (PredArg::Symbol(s), _) => ArgValue::Symbol(*s),
            };
            if count <= ON_STACK {
                stack[i] = value;
            } else {
                heap.push(value);
            }
        }
        let args = if count <= ON_STACK {
            &stack[..count]
        } else {
            &heap[..]
        };
        let ctx = PredicateContext {
            view: self.view,
            grammar: self.grammar,
            explaining,
        };
        Ok((call.predicate.evaluate(&ctx, args), unbound))
    }

    /// Whether evaluation gave up because the budget ran out.
    pub fn exhausted(&self) -> bool {
        self.steps.saturating_add(self.text_steps.get()) > self.budget
    }

    /// The number of characters of a subtree's text (as [`input_string`] reads it), in
    /// constant time when the input is UTF-8.
    fn var_char_len(&self, var: VarId) -> Option<i128> {
        let Binding::Node(n) = self.env[var.index()] else {
            return None;
        };
        let bytes = self.view.tree().bytes();
        let index = self
            .char_index
            .get_or_init(|| {
                std::str::from_utf8(bytes).ok()?;
                let mut before = Vec::with_capacity(bytes.len() / TEXT_STEP_BYTES + 1);
                let mut count = 0u64;
                for block in bytes.chunks(TEXT_STEP_BYTES) {
                    before.push(count);
                    count += block.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
                }
                before.push(count);
                Some(before)
            })
            .as_ref()?;
        let range = self.view.tree().text_range(n);
        let chars_before = |at: usize| {
            let block = at / TEXT_STEP_BYTES;
            let partial = &bytes[block * TEXT_STEP_BYTES..at];
            index[block] + partial.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
        };
        Some(i128::from(
            chars_before(range.end) - chars_before(range.start),
        ))
    }

    /// A subtree's text as a string, its length counted against the budget.
    /// A subtree's text, its length counted against the budget.
    fn node_text(&self, n: NodeId) -> &[u8] {
        let text = self.view.tree().text(n);
        self.text_steps
            .set(self.text_steps.get() + (text.len() / TEXT_STEP_BYTES) as u64);
        text
    }

    fn node_string(&self, n: NodeId) -> String {
        input_string(self.node_text(n))
    }

    fn var_text(&self, var: VarId) -> Option<String> {
        match self.env[var.index()] {
            Binding::Unbound => None,
            Binding::Node(n) => Some(self.node_string(n)),
            Binding::Int(i) => Some(i.to_string()),
        }
    }

    fn smt(&self, term: &Term) -> Result<Value, EvalError> {
        if let Some(equal) = self.fast_string_equality(term) {
            return Ok(Value::Bool(equal));
        }
        smt::eval_with(term, &|v| self.var_text(v), &|v| self.var_char_len(v))
    }

    /// The bytes of a subtree variable or a string constant.
    fn string_bytes<'s>(&'s self, term: &'s Term) -> Option<&'s [u8]> {
        match term {
            Term::Var(v) => match self.env[v.index()] {
                Binding::Node(n) => Some(self.node_text(n)),
                _ => None,
            },
            Term::Const(Value::Str(s)) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// `(= a b)` over subtrees and string constants, decided on the bytes without
    /// building strings (the most common atom: def-use, tag balance). `None` where the
    /// bytes do not decide it: another term, a number, or text that is not UTF-8 (whose
    /// string reading maps bytes to characters, see [`input_string`]).
    fn fast_string_equality(&self, term: &Term) -> Option<bool> {
        let Term::App(Func::Eq, _, args) = term else {
            return None;
        };
        let [a, b] = args.as_slice() else {
            return None;
        };
        let (x, y) = (self.string_bytes(a)?, self.string_bytes(b)?);
        if x == y {
            Some(true)
        } else if std::str::from_utf8(x).is_ok() && std::str::from_utf8(y).is_ok() {
            Some(false)
        } else {
            None
        }
    }

    /// Whether the formula holds.
    pub fn holds(&mut self, f: &Formula) -> bool {
        match f {
            Formula::Smt(term, _) => match self.smt(term) {
                Ok(v) => v == Value::Bool(true),
                Err(EvalError::Unbound(_)) => !self.discovering.is_empty(),
                Err(_) => false,
            },
            Formula::Predicate(call) => self.predicate(call, false).0,
            Formula::Not(inner) => !self.holds(inner),
            Formula::Binary(c, a, b) => {
                let a = self.holds(a);
                match c {
                    Connective::And => a && self.holds(b),
                    Connective::Or => a || self.holds(b),
                    Connective::Implies => !a || self.holds(b),
                    Connective::Xor => a != self.holds(b),
                    Connective::Iff => a == self.holds(b),
                }
            }
            Formula::Quantifier(q) => {
                if let Some(which) = q.distinct
                    && self.discovering.is_empty()
                    && let Some(verdict) = self.pairwise_distinct(q, which)
                {
                    return verdict;
                }
                let universal = q.universal;
                // Local universals: instances known to hold are not visited, and those
                // found to hold under every match are remembered (an instance's matches
                // are visited in a row).
                let remember = universal && q.local && self.discovering.is_empty();
                let key = &**q as *const Quantifier as usize;
                let mut holding: Option<NodeId> = None;
                let mut found = false;
                let complete = self.for_each_instance(q, |ev| {
                    if remember {
                        let Binding::Node(node) = ev.env[q.var.index()] else {
                            unreachable!("an instance binds its variable to a node")
                        };
                        if holding != Some(node) {
                            if ev.cache.held.contains(&(key, node)) {
                                return true;
                            }
                            if let Some(done) = holding.replace(node) {
                                ev.cache.held.insert((key, done));
                            }
                        }
                    }
                    let holds = ev.holds(&q.body);
                    if holds != universal {
                        found = true;
                        return false;
                    }
                    true
                });
                if let Some(done) = holding
                    && complete
                    && !found
                    && !self.exhausted()
                {
                    self.cache.held.insert((key, done));
                }
                debug_assert!(complete || found || self.exhausted());
                if universal { !found } else { found }
            }
            Formula::IntQuantifier {
                universal,
                var,
                body,
                ..
            } => {
                let universal = *universal;
                let candidates = self.int_candidates(*var, body);
                let saved = self.env[var.index()];
                let mut result = universal;
                for value in candidates {
                    self.env[var.index()] = Binding::Int(value);
                    if self.holds(body) != universal {
                        result = !universal;
                        break;
                    }
                }
                self.env[var.index()] = saved;
                result
            }
        }
    }

    /// A pairwise-distinct quantifier ([`Quantifier::distinct`]): whether no two
    /// instances at different nodes have the same text, in one pass with a set;
    /// `None` where the general evaluation must decide (an instance node with several
    /// matches, a text that is not UTF-8, the budget spent).
    fn pairwise_distinct(&mut self, q: &Quantifier, which: Distinct) -> Option<bool> {
        let binder = match which {
            Distinct::Instance => q.var,
            Distinct::Binder(k) => *q.mexpr.as_ref()?.binders.get(k)?,
        };
        // (instance, node whose text must differ)
        let mut texts: Vec<(NodeId, NodeId)> = Vec::new();
        let complete = self.for_each_instance(q, |ev| {
            if let (Binding::Node(node), Binding::Node(text)) =
                (ev.env[q.var.index()], ev.env[binder.index()])
            {
                texts.push((node, text));
            }
            true
        });
        if !complete || texts.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let tree = self.view.tree();
        let mut seen = FxHashSet::with_capacity_and_hasher(texts.len(), Default::default());
        for &(_, node) in &texts {
            let text = tree.text(node);
            std::str::from_utf8(text).ok()?;
            if !seen.insert(text) {
                return Some(false);
            }
        }
        Some(true)
    }

    /// Candidate values for `var` in `body` (see the module docs).
    fn int_candidates(&mut self, var: VarId, body: &Formula) -> Vec<i128> {
        let saved = self.env[var.index()];
        self.env[var.index()] = Binding::Unbound;
        self.discovering.push((var, Vec::new()));
        self.holds(body);
        let (_, mut values) = self.discovering.pop().expect("pushed");
        self.env[var.index()] = saved;
        // Proposals first, in the order they were made, then the literals.
        let mut add = |x: i128| {
            if !values.contains(&x) {
                values.push(x);
            }
        };
        body.visit(&mut |f| {
            if let Formula::Smt(term, _) = f {
                literals(term, &mut add);
            }
            if let Formula::Predicate(call) = f {
                for arg in &call.args {
                    if let PredArg::Int(i) = arg {
                        add(*i);
                    }
                }
            }
        });
        // Nothing proposed and no literal (`exists int n: n = n`): any integer is as
        // good a witness as another, so 0 is tried rather than none.
        if values.is_empty() {
            values.push(0);
        }
        values.truncate(MAX_INT_CANDIDATES);
        values
    }

    /// Binds the quantifier's variable (and its match expression's) to each instance in
    /// turn and calls `visit`, which returns false to stop. Returns whether every
    /// instance was visited. Bindings are restored afterwards.
    fn for_each_instance(
        &mut self,
        q: &Quantifier,
        mut visit: impl FnMut(&mut Self) -> bool,
    ) -> bool {
        let (nodes, child, parent) = self.domain(q);
        let view: &'a TreeView<'t> = self.view;
        // The bindings to restore, on a stack shared by nested quantifiers (a nested
        // quantifier runs once per outer instance: no vector per run).
        let base = self.saved.len();
        for v in
            std::iter::once(q.var).chain(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()))
        {
            self.saved.push(self.env[v.index()]);
        }
        let mut complete = true;
        let symbol = q.symbol;
        let candidates = nodes
            .iter()
            .map(|&i| NodeId::from_index(i as usize))
            .chain(child)
            .chain(
                parent
                    .into_iter()
                    .flat_map(|p| view.children(p))
                    .filter(move |&c| view.symbol(c) == Some(symbol)),
            );
        // See `Quantifier::outermost_only`: instances inside one visited are skipped.
        let mut skip_below = 0;
        'outer: for node in candidates {
            if q.outermost_only {
                if node.index() < skip_below {
                    continue;
                }
                skip_below = self.view.tree().subtree_end(node);
            }
            self.steps += 1;
            if self.exhausted() {
                complete = false;
                break;
            }
            self.env[q.var.index()] = Binding::Node(node);
            match &q.mexpr {
                None => {
                    if !visit(self) {
                        complete = false;
                        break;
                    }
                }
                Some(mexpr) => {
                    let key = (mexpr.cache_key(), node);
                    let matches = match self.cache.matches.get(&key) {
                        Some(m) => m.clone(),
                        None => {
                            let found = mexpr.matches(self.view, self.grammar, node);
                            // Most subtrees of a domain do not match: they share one
                            // empty entry instead of allocating one each.
                            let m = if found.is_empty() {
                                self.no_match.clone()
                            } else {
                                let offsets = found
                                    .iter()
                                    .flatten()
                                    .map(|&(_, n)| (n.index() - node.index()) as u32)
                                    .collect();
                                Rc::new(Matches {
                                    count: found.len(),
                                    offsets,
                                })
                            };
                            self.cache.matches.insert(key, m.clone());
                            m
                        }
                    };
                    let stride = mexpr.binders.len();
                    for i in 0..matches.count {
                        // By position: the matches may be another expression's of the
                        // same shape (see `MatchExpr::cache_key`).
                        let offsets = &matches.offsets[i * stride..(i + 1) * stride];
                        for (&v, &offset) in mexpr.binders.iter().zip(offsets) {
                            let n = NodeId::from_index(node.index() + offset as usize);
                            self.env[v.index()] = Binding::Node(n);
                        }
                        if !visit(self) {
                            complete = false;
                            break 'outer;
                        }
                    }
                }
            }
        }
        for (i, v) in std::iter::once(q.var)
            .chain(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()))
            .enumerate()
        {
            self.env[v.index()] = self.saved[base + i];
        }
        self.saved.truncate(base);
        complete
    }

    /// The subtrees a quantifier ranges over: nodes of a descendant domain by index,
    /// the one child of a child domain, or the parent whose children of the
    /// quantifier's type a children domain takes.
    fn domain(&self, q: &Quantifier) -> (&'a [u32], Option<NodeId>, Option<NodeId>) {
        let view: &'a TreeView<'t> = self.view;
        match q.domain {
            Domain::Within(outer) => match self.env[outer.index()] {
                Binding::Node(n) => (view.nodes_of(q.symbol, n), None, None),
                _ => (&[], None, None),
            },
            Domain::Child { parent, index } => match self.env[parent.index()] {
                Binding::Node(n) => (
                    &[],
                    view.children(n)
                        .filter(|&c| view.symbol(c) == Some(q.symbol))
                        .nth(index as usize - 1),
                    None,
                ),
                _ => (&[], None, None),
            },
            Domain::Children { parent } => match self.env[parent.index()] {
                Binding::Node(n) => (&[], None, Some(n)),
                _ => (&[], None, None),
            },
        }
    }

    /// Evaluates a predicate call: whether it holds, and what it said.
    fn predicate(&mut self, call: &PredicateCall, explaining: bool) -> (bool, String) {
        let (outcome, unbound) = match self.call(call, explaining) {
            Ok(evaluated) => evaluated,
            Err(Unready::UnboundTree) => {
                return (
                    !self.discovering.is_empty(),
                    "a variable has no value".into(),
                );
            }
            Err(Unready::NotANumber(why)) => return (false, why),
        };
        match outcome {
            Outcome::Holds if explaining => (true, "holds".into()),
            Outcome::Holds => (true, String::new()),
            Outcome::Fails { why, .. } => (false, why),
            Outcome::Bind(value) => {
                let target =
                    unbound.and_then(|u| self.discovering.iter_mut().find(|(v, _)| *v == u));
                match target {
                    Some((_, values)) => {
                        if !values.contains(&value) {
                            values.push(value);
                        }
                        (true, String::new())
                    }
                    None => (
                        !self.discovering.is_empty(),
                        "a variable has no value".into(),
                    ),
                }
            }
        }
    }

    /// Explains why `f` has the truth value `holds` (which the caller computed): the
    /// bindings that lead to the deciding atom, and what the atom computed.
    pub fn explain(&mut self, f: &Formula, holds: bool, steps: &mut Vec<Step>) {
        match f {
            Formula::Smt(term, span) => {
                let detail = self.describe_smt(term);
                steps.push(Step::Fact {
                    span: *span,
                    holds,
                    detail,
                });
            }
            Formula::Predicate(call) => {
                let (_, why) = self.predicate(call, true);
                steps.push(Step::Fact {
                    span: call.span,
                    holds,
                    detail: why,
                });
            }
            Formula::Not(inner) => self.explain(inner, !holds, steps),
            Formula::Binary(c, a, b) => {
                let (va, vb) = (self.holds(a), self.holds(b));
                // The operands that decide the result.
                let (explain_a, explain_b) = match (c, holds) {
                    (Connective::And, false) => (!va, va),
                    (Connective::Or, true) => (va, !va),
                    (Connective::Implies, true) => (!va, va),
                    _ => (true, true),
                };
                if explain_a {
                    self.explain(a, va, steps);
                }
                if explain_b {
                    self.explain(b, vb, steps);
                }
            }
            Formula::Quantifier(q) => {
                // A counterexample of a false `forall`, the witness of a true `exists`.
                if q.universal != holds {
                    let mut witness = None;
                    let universal = q.universal;
                    self.for_each_instance(q, |ev| {
                        if ev.holds(&q.body) != universal {
                            let bound = std::iter::once(q.var)
                                .chain(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()))
                                .map(|v| (v, ev.env[v.index()]))
                                .collect::<Vec<_>>();
                            witness = Some(bound);
                            return false;
                        }
                        true
                    });
                    let Some(bound) = witness else { return };
                    let saved: Vec<_> = bound
                        .iter()
                        .map(|&(v, _)| (v, self.env[v.index()]))
                        .collect();
                    for &(v, b) in &bound {
                        self.env[v.index()] = b;
                        if let Binding::Node(node) = b {
                            steps.push(Step::Bind { var: v, node });
                        }
                    }
                    self.explain(&q.body, holds, steps);
                    for (v, b) in saved {
                        self.env[v.index()] = b;
                    }
                } else {
                    let mut count = 0usize;
                    self.for_each_instance(q, |_| {
                        count += 1;
                        true
                    });
                    let what = format!(
                        "{}{}",
                        self.grammar.display_symbol(q.symbol),
                        if q.mexpr.is_some() {
                            " matching the pattern"
                        } else {
                            ""
                        }
                    );
                    let detail = match (q.universal, count) {
                        (true, 0) => format!("holds vacuously: there is no {what}"),
                        (true, n) => format!("holds for all {n} instances of {what}"),
                        (false, 0) => format!("there is no {what} at all"),
                        (false, n) => format!("none of the {n} instances of {what} satisfies it"),
                    };
                    steps.push(Step::Fact {
                        span: q.span,
                        holds,
                        detail,
                    });
                }
            }
            Formula::IntQuantifier {
                universal,
                var,
                body,
                span,
            } => {
                let candidates = self.int_candidates(*var, body);
                let saved = self.env[var.index()];
                let decisive = candidates.iter().copied().find(|&value| {
                    self.env[var.index()] = Binding::Int(value);
                    self.holds(body) != *universal
                });
                let tried = candidates
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                match decisive {
                    Some(value) if *universal != holds => {
                        steps.push(Step::BindInt { var: *var, value });
                        self.env[var.index()] = Binding::Int(value);
                        self.explain(body, holds, steps);
                    }
                    // A false `exists`: no candidate works; show why the first fails.
                    _ if !*universal && !holds && !candidates.is_empty() => {
                        steps.push(Step::Fact {
                            span: *span,
                            holds,
                            detail: format!("no value works (tried {tried}); for the first:"),
                        });
                        steps.push(Step::BindInt {
                            var: *var,
                            value: candidates[0],
                        });
                        self.env[var.index()] = Binding::Int(candidates[0]);
                        self.explain(body, holds, steps);
                    }
                    _ => steps.push(Step::Fact {
                        span: *span,
                        holds,
                        detail: format!(
                            "tried the values {}",
                            candidates
                                .iter()
                                .map(|c| c.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }),
                }
                self.env[var.index()] = saved;
            }
        }
    }

    /// What an SMT atom computed: both sides of a comparison, or the value.
    fn describe_smt(&self, term: &Term) -> String {
        let show = |t: &Term| match self.smt(t) {
            Ok(v) => v.to_string(),
            Err(e) => format!("({e})"),
        };
        match term {
            Term::App(f @ (Func::Eq | Func::Lt | Func::Le | Func::Gt | Func::Ge), _, args)
                if args.len() == 2 =>
            {
                let op = match f {
                    Func::Eq => "=",
                    Func::Lt => "<",
                    Func::Le => "<=",
                    Func::Gt => ">",
                    _ => ">=",
                };
                format!("{} {op} {}", show(&args[0]), show(&args[1]))
            }
            Term::App(Func::Not, _, args) => format!("not ({})", self.describe_smt(&args[0])),
            _ => show(term),
        }
    }
}

fn literals(term: &Term, out: &mut impl FnMut(i128)) {
    match term {
        Term::Const(Value::Int(i)) => {
            for x in [i.saturating_sub(1), *i, i.saturating_add(1)] {
                if x >= 0 {
                    out(x);
                }
            }
        }
        Term::App(_, _, args) => args.iter().for_each(|a| literals(a, out)),
        _ => {}
    }
}
