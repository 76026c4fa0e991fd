//! The repair loop and its planner: from a violated formula and the checker's bindings,
//! the edits that should make it hold (see the crate docs for the rules).

use crate::measure::Measure;
use crate::terms::{applied_to, flip, interval, negate, term_vars};
use crate::{SolveStats, Solver};
use rand::Rng;
use std::collections::{HashMap, HashSet};
use thicket_constraint::formula::{Connective, Domain, Quantifier};
use thicket_constraint::regex::Regex;
use thicket_constraint::smt::{Func, Sort, Term, Value};
use thicket_constraint::{
    Binding, Constraint, Evaluator, Formula, Outcome, SubtreeCache, TreeView, VarId,
};
use thicket_gen::below;
use thicket_grammar::{Expr, ExprId, SymbolId};
use thicket_tree::{ByteSink, DerivationTree, NodeId, TreeBuilder, TreeSink};

/// Repairs `tree` until every constraint holds; `Err` with the constraints still
/// violated when the rounds run out or no edit is left to try.
pub(crate) fn repair<R: Rng + ?Sized>(
    solver: &Solver<'_>,
    mut tree: DerivationTree,
    rng: &mut R,
    stats: &mut SolveStats,
) -> Result<DerivationTree, Vec<usize>> {
    let grammar = solver.grammar;
    let mut violated = Vec::new();
    let constraints = solver.constraints();
    // The node ranges the last round's edits wrote (see `Planner::make_equal`).
    let mut recent: Vec<(usize, usize)> = Vec::new();
    // Constraints that held and that the last round's edits did not touch (see
    // `Solver::scopes`): not evaluated this round. A tree is returned only after a
    // round that evaluated every constraint.
    let mut skip = vec![false; constraints.len()];
    // The matches of the constraints' match expressions and the instances known to
    // hold, carried from round to round for the subtrees no edit changed (one cache
    // for all constraints: ISLa's XML constraints repeat their patterns).
    let mut cache = SubtreeCache::default();
    // Per constraint, the rounds it was found violated in: once that reaches
    // [`STUCK_ROUNDS`], its fixes are not sticking (they undo each other, or another
    // constraint's undo them, the two taking turns), and failing instances of its
    // universals are removed rather than fixed.
    let mut stuck = vec![0u32; constraints.len()];
    for round in 0..solver.config.max_rounds.max(1) {
        if round > 0 && solver.past_deadline() {
            break;
        }
        stats.rounds += 1;
        let view = TreeView::new(&tree, grammar);
        let mut edits = Edits::default();
        violated.clear();
        // Each round plans from the next constraint on: where two constraints' edits
        // meet (balance copies a close tag's prefixed name into the open tag whose
        // prefix the namespace constraint removes), the one planned first wins, and a
        // fixed order let the same one win every round.
        let first = round as usize % constraints.len().max(1);
        let order = (first..constraints.len()).chain(0..first);
        // Those taken as holding come last, and only if all others held.
        let (deferred, now): (Vec<usize>, Vec<usize>) = order.partition(|&i| skip[i]);
        let all_held = std::cell::Cell::new(true);
        let then = deferred.into_iter().take_while(|_| all_held.get());
        for i in now.into_iter().chain(then) {
            let c = &constraints[i];
            let mut ev = solver
                .checker
                .evaluator(&view, c)
                .with_cache(std::mem::take(&mut cache));
            if ev.holds(&c.formula) && !ev.exhausted() {
                cache = ev.take_cache();
                continue;
            }
            stuck[i] += 1;
            all_held.set(false);
            violated.push(i);
            if ev.exhausted() {
                continue;
            }
            let mut planner = Planner {
                solver,
                constraint: c,
                view: &view,
                edits: &mut edits,
                rng: &mut *rng,
                context: Vec::new(),
                steps: 0,
                inserted: false,
                taken: HashMap::new(),
                unfit: HashSet::new(),
                hosts: HashMap::new(),
                witnesses: Vec::new(),
                recent: &recent,
                remove_first: stuck[i] >= STUCK_ROUNDS,
            };
            planner.fix(&c.formula, true, &mut ev);
            cache = ev.take_cache();
        }
        if violated.is_empty() {
            return Ok(tree);
        }
        violated.sort_unstable();
        if edits.list.is_empty() {
            break;
        }
        stats.edits += edits.list.len() as u32;
        for (i, scope) in solver.scopes.iter().enumerate() {
            skip[i] = !violated.contains(&i)
                && scope
                    .as_ref()
                    .is_some_and(|symbols| !edits.touch(grammar, &view, symbols));
        }
        let (edited, lens) = edits.apply(solver, &tree);
        recent = edits.written(&tree, &lens);
        cache = cache.carry(edits.mover(&tree, &lens));
        tree = edited;
    }
    if skip.contains(&true) {
        violated = solver.checker.check(&tree);
    }
    Err(violated)
}

/// Rounds a constraint may be found violated in, in one tree's repair, before the
/// planner removes its universals' failing instances instead of fixing them. A fix
/// that holds takes a round or two (a copy, then the copy's own consequences); one
/// that is undone again and again (a label that needs a twin with the same name that
/// is a different tree, which no tree has; declarations that must precede every use
/// when each inserted declaration brings uses of its own) never converges, and
/// removing the instance (the label, the use) is what makes the tree valid.
const STUCK_ROUNDS: u32 = 3;

/// What a subtree is replaced by.
enum Replacement {
    /// A copy of another subtree of the same tree.
    Copy(NodeId),
    /// A new subtree (its root is emitted as the hole's expression).
    Tree(DerivationTree),
}

/// The edits of one round: disjoint subtrees and what replaces each.
#[derive(Default)]
struct Edits {
    list: Vec<(NodeId, Replacement)>,
}

impl Edits {
    /// Whether `node` overlaps (contains, or lies in) a subtree already edited.
    fn overlaps(&self, tree: &DerivationTree, node: NodeId) -> bool {
        self.list.iter().any(|&(other, _)| {
            let (a, b) = (node.index(), other.index());
            (b <= a && a < tree.subtree_end(other)) || (a <= b && b < tree.subtree_end(node))
        })
    }

    /// Whether `node` lies inside a subtree already edited (not at its root): a copy
    /// from it would copy what the edit throws away. (A copy from an edited subtree or
    /// from one holding edits copies it as edited, see [`Edits::apply`].)
    fn within(&self, tree: &DerivationTree, node: NodeId) -> bool {
        self.list.iter().any(|&(other, _)| {
            other.index() < node.index() && node.index() < tree.subtree_end(other)
        })
    }

    /// Whether a copy edit lies at or inside `node`.
    fn copies_within(&self, tree: &DerivationTree, node: NodeId) -> bool {
        self.list.iter().any(|(hole, with)| {
            matches!(with, Replacement::Copy(_))
                && node.index() <= hole.index()
                && hole.index() < tree.subtree_end(node)
        })
    }

    /// Whether emitting `from` as edited would emit `to`'s replacement: a copy edit
    /// at or inside `from` whose source, as edited, holds `to`.
    fn copies_into(&self, tree: &DerivationTree, from: NodeId, to: NodeId) -> bool {
        let overlap = |a: NodeId, b: NodeId| {
            a.index() < tree.subtree_end(b) && b.index() < tree.subtree_end(a)
        };
        // Sources still to follow; each edit is followed once.
        let mut todo = vec![from];
        let mut followed = vec![false; self.list.len()];
        while let Some(source) = todo.pop() {
            for (i, (hole, with)) in self.list.iter().enumerate() {
                let inside =
                    source.index() <= hole.index() && hole.index() < tree.subtree_end(source);
                if let Replacement::Copy(next) = with
                    && !followed[i]
                    && inside
                {
                    followed[i] = true;
                    if overlap(*next, to) {
                        return true;
                    }
                    todo.push(*next);
                }
            }
        }
        false
    }

    /// Whether an edit touches a node of one of `symbols`: replaces a subtree inside
    /// one, or removes or adds one.
    fn touch(
        &self,
        grammar: &thicket_grammar::Grammar,
        view: &TreeView<'_>,
        symbols: &[SymbolId],
    ) -> bool {
        let tree = view.tree();
        self.list.iter().any(|(hole, with)| {
            tree.path_to(*hole)
                .into_iter()
                .any(|n| view.symbol(n).is_some_and(|s| symbols.contains(&s)))
                || symbols.iter().any(|&s| !view.nodes_of(s, *hole).is_empty())
                || match with {
                    Replacement::Copy(from) => {
                        symbols.iter().any(|&s| !view.nodes_of(s, *from).is_empty())
                    }
                    Replacement::Tree(new) => new.descendants(new.root()).any(|n| {
                        matches!(grammar.expr(new.expr(n)), Expr::Ref(s) if symbols.contains(s))
                    }),
                }
        })
    }

    /// Where a node of `tree` is after the edits are applied (`lens`: the node count
    /// of each edit's replacement, from [`Edits::apply`]): `None` if it lies in an
    /// edited subtree or holds one, else its index shifted by the edits before it.
    fn mover<'t>(
        &self,
        tree: &'t DerivationTree,
        lens: &[usize],
    ) -> impl Fn(NodeId) -> Option<NodeId> + 't {
        let mut holes: Vec<(usize, usize, usize)> = self
            .list
            .iter()
            .zip(lens)
            .map(|((hole, _), &len)| (hole.index(), tree.subtree_end(*hole), len))
            .collect();
        holes.sort_unstable();
        move |node: NodeId| {
            let (x, end) = (node.index(), tree.subtree_end(node));
            let mut shift = 0isize;
            for &(start, stop, len) in &holes {
                if stop <= x {
                    shift += len as isize - (stop - start) as isize;
                } else if start < end {
                    // Overlaps: inside the hole, or holding it.
                    return None;
                } else {
                    break;
                }
            }
            Some(NodeId::from_index((x as isize + shift) as usize))
        }
    }

    /// Where the new subtrees lie in the tree [`Edits::apply`] made (`lens` as for
    /// [`Edits::mover`]): `(start, end)` node indices (the edits are disjoint).
    fn written(&self, tree: &DerivationTree, lens: &[usize]) -> Vec<(usize, usize)> {
        let mut sized: Vec<(NodeId, usize)> = self
            .list
            .iter()
            .zip(lens)
            .map(|((hole, _), &len)| (*hole, len))
            .collect();
        sized.sort_by_key(|&(hole, _)| hole);
        let mut shift = 0isize;
        sized
            .into_iter()
            .map(|(hole, len)| {
                let start = (hole.index() as isize + shift) as usize;
                shift += len as isize - (tree.subtree_end(hole) - hole.index()) as isize;
                (start, start + len)
            })
            .collect()
    }

    /// The edited tree, and the node count of each edit's replacement. A copy takes
    /// its source as this round's edits leave it: when one constraint renames an open
    /// tag and another copies the open tag's name into the close tag, the close tag
    /// gets the new name in the same round instead of the old one (which would undo
    /// the rename a round later, or take a round more).
    fn apply(&self, solver: &Solver<'_>, tree: &DerivationTree) -> (DerivationTree, Vec<usize>) {
        let grammar = solver.grammar;
        let holes: Vec<NodeId> = self.list.iter().map(|(n, _)| *n).collect();
        let mut lens = vec![0; holes.len()];
        let mut active = Vec::new();
        let edited = tree.replace_subtrees(grammar, &holes, &mut |i, sink| {
            self.emit(grammar, tree, i, tree.expr(holes[i]), sink, &mut active);
            lens[i] = sink.node_count();
        });
        (edited, lens)
    }

    /// Emits edit `i`'s replacement, its root as `root_expr`. `active`: the edits being
    /// emitted (a copy whose source holds an active edit gets that part as it was, so
    /// copies that copy each other end).
    fn emit(
        &self,
        grammar: &thicket_grammar::Grammar,
        tree: &DerivationTree,
        i: usize,
        root_expr: ExprId,
        sink: &mut TreeBuilder,
        active: &mut Vec<usize>,
    ) {
        active.push(i);
        match &self.list[i].1 {
            Replacement::Tree(new) => new.emit_subtree(grammar, new.root(), root_expr, sink),
            Replacement::Copy(from) => {
                let (start, end) = (from.index(), tree.subtree_end(*from));
                let mut inner: Vec<usize> = (0..self.list.len())
                    .filter(|&j| {
                        let h = self.list[j].0.index();
                        start <= h && h < end && !active.contains(&j)
                    })
                    .collect();
                inner.sort_by_key(|&j| self.list[j].0);
                match inner.first() {
                    Some(&j) if self.list[j].0 == *from => {
                        self.emit(grammar, tree, j, root_expr, sink, active);
                    }
                    None => tree.emit_subtree(grammar, *from, root_expr, sink),
                    _ => {
                        let holes: Vec<NodeId> = inner.iter().map(|&j| self.list[j].0).collect();
                        tree.emit_with_holes(
                            grammar,
                            *from,
                            root_expr,
                            &holes,
                            sink,
                            &mut |k, sink| {
                                let j = inner[k];
                                self.emit(grammar, tree, j, tree.expr(holes[k]), sink, active);
                            },
                        );
                    }
                }
            }
        }
        active.pop();
    }
}

/// Most formula nodes one planning pass visits per constraint (a guard against
/// formulas with very many instances).
const MAX_PLAN_STEPS: u32 = 100_000;

/// Formula nodes a planning pass visits between two looks at the solver's deadline.
const DEADLINE_STEPS: u32 = 256;

/// Proposes edits that make a formula take a truth value.
struct Planner<'a, 's, 'g, 't, R: ?Sized> {
    solver: &'s Solver<'g>,
    /// The constraint being planned for.
    constraint: &'a Constraint,
    view: &'a TreeView<'t>,
    edits: &'a mut Edits,
    rng: &'a mut R,
    /// The subtrees bound by the enclosing quantifiers, innermost last: where an
    /// inserted subtree should go.
    context: Vec<NodeId>,
    steps: u32,
    /// Whether this pass inserted a subtree already: one insertion per round, since
    /// an insertion can satisfy other instances too, and hosts overlap.
    inserted: bool,
    /// Per rule, the texts its nodes have or were given this pass (see
    /// `Planner::regenerate_fresh`), filled on first use.
    taken: HashMap<SymbolId, HashSet<Vec<u8>>>,
    /// Hosts where an insertion for a quantifier (by address) did not fit this pass:
    /// not tried again for the other instances (the uses of one expression share
    /// their hosts, and whether a declaration fits depends on where it goes, not on
    /// which use asked for it).
    unfit: HashSet<(usize, NodeId)>,
    /// Per quantifier (by address) and domain, the hosts an insertion can go to
    /// ([`Planner::hosts_in`]), found once per pass.
    hosts: HashMap<(usize, NodeId), std::rc::Rc<Vec<NodeId>>>,
    /// Variables bound by the existential instances whose bodies are being fixed: a
    /// witness may be shared (one declaration, many uses), so an equality is made by
    /// writing into the other side first.
    witnesses: Vec<VarId>,
    /// The node ranges the previous round's edits wrote: an equality copies from a
    /// side written there rather than undo that repair (balance copying a close tag's
    /// old name back over the open tag the namespace constraint just renamed).
    recent: &'a [(usize, usize)],
    /// Whether the constraint was violated in [`STUCK_ROUNDS`] rounds: a failing
    /// instance of a universal is removed first, fixed only where it cannot be.
    remove_first: bool,
}

impl<R: Rng + ?Sized> Planner<'_, '_, '_, '_, R> {
    fn tree(&self) -> &DerivationTree {
        self.view.tree()
    }

    fn shuffled<T>(&mut self, mut items: Vec<T>) -> Vec<T> {
        for i in (1..items.len()).rev() {
            let j = below(self.rng, i as u32 + 1) as usize;
            items.swap(i, j);
        }
        items
    }

    /// Proposes edits after which `f` should have the value `want`; false if it found
    /// none (the edits proposed on the way are then withdrawn).
    fn fix(&mut self, f: &Formula, want: bool, ev: &mut Evaluator<'_, '_>) -> bool {
        self.steps += 1;
        if self.steps > MAX_PLAN_STEPS
            || (self.steps.is_multiple_of(DEADLINE_STEPS) && self.solver.past_deadline())
        {
            // Out of steps or time: what is planned so far is kept by the callers
            // that already succeeded; this part proposes nothing.
            self.steps = MAX_PLAN_STEPS + 1;
            return false;
        }
        let mark = self.edits.list.len();
        let ok = self.fix_inner(f, want, ev);
        if !ok {
            self.edits.list.truncate(mark);
        }
        ok
    }

    fn fix_inner(&mut self, f: &Formula, want: bool, ev: &mut Evaluator<'_, '_>) -> bool {
        match f {
            Formula::Smt(term, _) => {
                if matches!(ev.value(term), Ok(Value::Bool(b)) if b == want) {
                    return true;
                }
                self.fix_smt(term, want, ev)
            }
            Formula::Predicate(call) => {
                let Some(outcome) = ev.predicate_outcome(call) else {
                    return false;
                };
                let holds = outcome == Outcome::Holds;
                if holds == want {
                    return true;
                }
                if call.predicate.is_structural() || !want {
                    return false;
                }
                match outcome {
                    Outcome::Fails { fix, .. } if !fix.is_empty() => fix
                        .into_iter()
                        .all(|(node, text)| self.write_text(node, &text)),
                    _ => self.fix_count(call, ev),
                }
            }
            Formula::Not(inner) => self.fix(inner, !want, ev),
            Formula::Binary(c, a, b) => {
                // The sides' values matter only to the two that must differ or agree.
                let mut values = || (ev.holds(a), ev.holds(b));
                match (c, want) {
                    (Connective::And, true) => self.fix(a, true, ev) && self.fix(b, true, ev),
                    (Connective::Or, false) => self.fix(a, false, ev) && self.fix(b, false, ev),
                    (Connective::Implies, false) => self.fix(a, true, ev) && self.fix(b, false, ev),
                    (Connective::And, false) => self.either(&[(a, false), (b, false)], ev),
                    (Connective::Or, true) => self.either(&[(a, true), (b, true)], ev),
                    (Connective::Implies, true) => self.either(&[(a, false), (b, true)], ev),
                    // Xor true / Iff false: the two must differ; flip one of them.
                    (Connective::Xor, true) | (Connective::Iff, false) => {
                        let (va, vb) = values();
                        self.either(&[(a, !vb), (b, !va)], ev)
                    }
                    (Connective::Xor, false) | (Connective::Iff, true) => {
                        let (va, vb) = values();
                        self.either(&[(a, vb), (b, va)], ev)
                    }
                }
            }
            Formula::Quantifier(q) => self.fix_quantifier(q, want, ev),
            Formula::IntQuantifier {
                universal,
                var,
                body,
                ..
            } => {
                if *universal == want {
                    // `forall int` true or `exists int` false: refused when the solver
                    // is built; nothing to propose.
                    return false;
                }
                let values = ev.int_values(*var, body);
                let saved = ev.binding(*var);
                // Small values first (a size field of 12 octal digits proposes a
                // number no content can match), then the rest in random order.
                let mut values = self.shuffled(values);
                values.sort_by_key(|v| v.unsigned_abs() > crate::measure::MEASURE_CAP as u128);
                let mut done = false;
                for value in values {
                    ev.bind(*var, Binding::Int(value));
                    if ev.holds(body) == want || self.fix(body, want, ev) {
                        done = true;
                        break;
                    }
                }
                ev.bind(*var, saved);
                done
            }
        }
    }

    /// Makes one of the options hold, trying them in random order.
    fn either(&mut self, options: &[(&Formula, bool)], ev: &mut Evaluator<'_, '_>) -> bool {
        let order = self.shuffled((0..options.len()).collect());
        order.into_iter().any(|i| {
            let (f, want) = options[i];
            self.fix(f, want, ev)
        })
    }

    fn fix_quantifier(&mut self, q: &Quantifier, want: bool, ev: &mut Evaluator<'_, '_>) -> bool {
        // forall true / exists false: every instance's body must be `want`.
        let every = q.universal == want;
        let instances = ev.instances(q);
        let saved: Vec<(VarId, Binding)> = std::iter::once(q.var)
            .chain(q.mexpr.iter().flat_map(|m| m.binders.iter().copied()))
            .map(|v| (v, ev.binding(v)))
            .collect();
        let bind = |ev: &mut Evaluator<'_, '_>, instance: &[(VarId, NodeId)]| {
            for &(v, n) in instance {
                ev.bind(v, Binding::Node(n));
            }
        };
        let mut result = true;
        if every {
            for instance in &instances {
                bind(ev, instance);
                if ev.holds(&q.body) != want {
                    self.context.push(instance[0].1);
                    // Removal goes to the innermost universal (`forall <s> in
                    // <statement>: forall <i> in <s>..<id>: ...` removes the use, not
                    // the statement around it).
                    let remove_first = self.remove_first && !nested_universal(&q.body, want);
                    let fixed = (remove_first && self.eliminate(q, instance, ev, true))
                        || self.fix(&q.body, want, ev)
                        || (!remove_first && self.eliminate(q, instance, ev, false));
                    self.context.pop();
                    result &= fixed;
                }
            }
        } else {
            let found = instances.iter().any(|instance| {
                bind(ev, instance);
                ev.holds(&q.body) == want
            });
            if !found {
                result = false;
                let mark = self.witnesses.len();
                self.witnesses.extend(saved.iter().map(|&(v, _)| v));
                for instance in self.shuffled(instances) {
                    bind(ev, &instance);
                    self.context.push(instance[0].1);
                    let fixed = self.fix(&q.body, want, ev);
                    self.context.pop();
                    if fixed {
                        result = true;
                        break;
                    }
                }
                self.witnesses.truncate(mark);
                if !result && want {
                    result = self.insert(q, ev);
                }
            }
        }
        for (v, b) in saved {
            ev.bind(v, b);
        }
        result
    }

    // ----- atoms -----

    fn fix_smt(&mut self, term: &Term, want: bool, ev: &mut Evaluator<'_, '_>) -> bool {
        #[cfg(feature = "z3")]
        if let Some(edits) = crate::z3::solve_atom(
            self.solver,
            self.constraint,
            self.view.tree(),
            term,
            want,
            ev,
            self.rng,
        ) {
            let mut edits = edits.into_iter().peekable();
            return edits.peek().is_some()
                && edits.all(|(node, tree)| self.propose(node, Replacement::Tree(tree)));
        }
        match term {
            Term::App(Func::Not, _, args) if args.len() == 1 => {
                return self.fix_smt(&args[0], !want, ev);
            }
            Term::App(Func::Eq, _, args) if args.len() == 2 && want => {
                if sort_of(&args[0], ev) == Some(Sort::Str) {
                    if let Some(done) = self.make_equal(&args[0], &args[1], ev) {
                        return done;
                    }
                } else if let Some(done) = self.solve_numeric(Func::Eq, &args[0], &args[1], ev) {
                    return done;
                }
            }
            Term::App(f @ (Func::Lt | Func::Le | Func::Gt | Func::Ge), _, args)
                if args.len() == 2 =>
            {
                let op = if want { *f } else { negate(*f) };
                if let Some(done) = self.solve_numeric(op, &args[0], &args[1], ev) {
                    return done;
                }
            }
            Term::App(Func::Eq, _, args)
                if args.len() == 2 && sort_of(&args[0], ev) == Some(Sort::Str) =>
            {
                // A string disequality: a text nothing else of the rule has.
                let mut vars = Vec::new();
                tree_vars(term, ev, &mut vars);
                let vars = self.shuffled(vars);
                return vars.into_iter().any(|node| self.regenerate_fresh(node));
            }
            Term::App(Func::Eq, _, args)
                if args.len() == 2 && sort_of(&args[0], ev) != Some(Sort::Str) =>
            {
                // A numeric disequality: move one side off the value.
                if let Some(done) = self.solve_numeric(Func::Lt, &args[0], &args[1], ev) {
                    return done;
                }
            }
            Term::App(
                f @ (Func::StrInRe | Func::StrPrefixOf | Func::StrSuffixOf | Func::StrContains),
                _,
                args,
            ) if args.len() == 2 && self.fix_membership(*f, &args[0], &args[1], want, ev) => {
                return true;
            }
            _ => {}
        }
        // Anything else: regenerate one of the atom's subtrees (a search step).
        let mut vars = Vec::new();
        tree_vars(term, ev, &mut vars);
        let vars = self.shuffled(vars);
        vars.into_iter().any(|node| self.regenerate(node))
    }

    /// `str.in_re`, `str.prefixof`, `str.suffixof`, `str.contains` with a subtree as
    /// the string: write a text of the language (sampled from the regex by
    /// derivatives; for the others, the needle spliced into the current text) that the
    /// subtree's rule derives. Tries a few texts; false if none was read back.
    fn fix_membership(
        &mut self,
        f: Func,
        a: &Term,
        b: &Term,
        want: bool,
        ev: &mut Evaluator<'_, '_>,
    ) -> bool {
        let (subject, other) = match f {
            Func::StrPrefixOf | Func::StrSuffixOf => (b, a),
            _ => (a, b),
        };
        let Term::Var(v) = subject else {
            return false;
        };
        let Binding::Node(node) = ev.binding(*v) else {
            return false;
        };
        let other = match ev.value(other) {
            Ok(value) => value,
            Err(_) => return false,
        };
        let current = thicket_constraint::eval::input_string(self.tree().text(node));
        // Where a needle can go: the current text's character boundaries, ends included.
        let cuts = || {
            current
                .char_indices()
                .map(|(i, _)| i)
                .chain([current.len()])
                .collect::<Vec<usize>>()
        };
        // The strings that make the atom take the value wanted, within the rule's
        // language where it is regular: then a string drawn is one the rule derives,
        // and none is tried if there is none.
        let wanted = crate::language::membership(f, &other, want);
        let language = self.symbol(node).and_then(|s| self.solver.language(s));
        let wanted = match (wanted, language) {
            (Some(re), Some(language)) => {
                let both = Regex::inter(language.clone(), re);
                if both.is_empty(crate::language::EMPTINESS_STATES) == Some(true) {
                    return false;
                }
                Some(both)
            }
            (wanted, _) => wanted,
        };
        let samples = |draw: &mut dyn FnMut(u32) -> u32| -> Vec<String> {
            wanted
                .iter()
                .flat_map(|re| {
                    (0..8)
                        .filter_map(|_| re.sample(&mut *draw, 64))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let candidates: Vec<String> = match (f, other, want) {
            (Func::StrInRe, Value::Re(_), _) => samples(&mut |n| below(self.rng, n)),
            (Func::StrPrefixOf, Value::Str(needle), true) => cuts()
                .into_iter()
                .take(3)
                .map(|i| format!("{needle}{}", &current[i..]))
                .collect(),
            (Func::StrSuffixOf, Value::Str(needle), true) => cuts()
                .into_iter()
                .rev()
                .take(3)
                .map(|i| format!("{}{needle}", &current[..i]))
                .collect(),
            (Func::StrContains, Value::Str(needle), true) => {
                let cuts = cuts();
                (0..4)
                    .map(|_| {
                        let i = cuts[below(self.rng, cuts.len() as u32) as usize];
                        format!("{}{needle}{}", &current[..i], &current[i..])
                    })
                    .collect()
            }
            // Not a prefix, suffix or part: strings of the complement.
            (Func::StrPrefixOf | Func::StrSuffixOf | Func::StrContains, Value::Str(_), false) => {
                samples(&mut |n| below(self.rng, n))
            }
            _ => return false,
        };
        // Splicing keeps the current text; where the rule cannot derive a splice, a
        // string of the intersection.
        let candidates: Vec<String> = if want && f != Func::StrInRe {
            candidates
                .into_iter()
                .chain(samples(&mut |n| below(self.rng, n)))
                .collect()
        } else {
            candidates
        };
        candidates
            .into_iter()
            .any(|text| self.write_text(node, text.as_bytes()))
    }

    /// `a = b` over strings: copy one side into the other (or write a literal).
    fn make_equal(&mut self, a: &Term, b: &Term, ev: &mut Evaluator<'_, '_>) -> Option<bool> {
        let node = |t: &Term| match t {
            Term::Var(v) => match ev.binding(*v) {
                Binding::Node(n) => Some(n),
                _ => None,
            },
            _ => None,
        };
        match (node(a), node(b)) {
            (Some(x), Some(y)) => {
                let witness = |t: &Term| matches!(t, Term::Var(v) if self.witnesses.contains(v));
                // Written last round, or holding a part that was (a renamed prefix).
                let tree = self.view.tree();
                let recent = |n: NodeId| {
                    let (i, end) = (n.index(), tree.subtree_end(n));
                    self.recent.iter().any(|&(s, e)| s < end && i < e)
                };
                let (from, to) = match (witness(a), witness(b), recent(x), recent(y)) {
                    (true, false, _, _) => (x, y),
                    (false, true, _, _) => (y, x),
                    (_, _, true, false) => (x, y),
                    (_, _, false, true) => (y, x),
                    _ if below(self.rng, 2) == 0 => (x, y),
                    _ => (y, x),
                };
                // Not from or to a side another edit of this round replaces.
                Some(
                    self.copy(from, to, true)
                        || self.copy(to, from, true)
                        || self.copy(from, to, false),
                )
            }
            (Some(x), None) | (None, Some(x)) => {
                let other = if node(a).is_some() { b } else { a };
                match ev.value(other) {
                    Ok(Value::Str(s)) => Some(self.write_text(x, s.as_bytes())),
                    _ => None,
                }
            }
            (None, None) => None,
        }
    }

    /// `lhs op rhs` over integers: pick a side that is `±len(x) + c` or
    /// `±to_int(x) + c` with the rest known, and give `x` a value that makes it hold.
    fn solve_numeric(
        &mut self,
        op: Func,
        lhs: &Term,
        rhs: &Term,
        ev: &mut Evaluator<'_, '_>,
    ) -> Option<bool> {
        let sides = if below(self.rng, 2) == 0 {
            [(lhs, rhs, op), (rhs, lhs, flip(op))]
        } else {
            [(rhs, lhs, flip(op)), (lhs, rhs, op)]
        };
        let mut any = false;
        for (side, other, op) in sides {
            let Ok(Value::Int(other)) = ev.value(other) else {
                continue;
            };
            let mut vars = Vec::new();
            term_vars(side, &mut vars);
            for var in vars {
                let Binding::Node(node) = ev.binding(var) else {
                    continue;
                };
                let Some((inner, a, b)) = linear(side, var, ev) else {
                    continue;
                };
                any = true;
                // side = a * inner + b, a = ±1; side op other.
                let (lo, hi) = interval(op, other);
                let (lo, hi) = if a == 1 {
                    (lo.saturating_sub(b), hi.saturating_sub(b))
                } else {
                    (b.saturating_sub(hi), b.saturating_sub(lo))
                };
                let done = match inner {
                    Inner::Len => self.set_length(node, lo.max(0), hi),
                    Inner::ToInt => self.set_number(node, lo.max(0), hi),
                };
                if done {
                    return Some(true);
                }
            }
        }
        any.then_some(false)
    }

    /// Replaces `node` by a subtree whose length lies in `lo..=hi`.
    fn set_length(&mut self, node: NodeId, lo: i128, hi: i128) -> bool {
        let expr = self.tree().expr(node);
        let depth = self.tree().depth_above(self.solver.grammar, node);
        let table = self.solver.table(Measure::Length);
        let mut options: Vec<usize> = table
            .values(expr, depth)
            .into_iter()
            .filter(|&v| (lo..=hi).contains(&(v as i128)))
            .collect();
        if options.is_empty() {
            // Past the table's cap (within the byte limit): the lengths nearest the
            // bound, built from parts below the cap.
            let cap = crate::measure::MEASURE_CAP as i128;
            let most = (crate::measure::LARGE_VALUE_LIMIT as i128)
                .min(i128::from(self.solver.config.generation.max_size));
            let (from, to) = (lo.max(cap), hi.min(most));
            if from > to {
                return false;
            }
            options = (from..=to.min(from + 8)).map(|v| v as usize).collect();
        }
        // Near the current length when possible: keeps texts natural.
        let current = thicket_constraint::eval::input_string(self.tree().text(node))
            .chars()
            .count();
        let near: Vec<usize> = options
            .iter()
            .copied()
            .filter(|&v| v.abs_diff(current) <= 8)
            .collect();
        let pool = if near.is_empty() { options } else { near };
        for _ in 0..4 {
            let value = pool[below(self.rng, pool.len() as u32) as usize];
            let mut builder = TreeBuilder::new();
            if table.generate(
                &self.solver.repairer,
                expr,
                depth,
                value,
                self.rng,
                &mut builder,
            ) {
                return self.propose(node, Replacement::Tree(builder.finish()));
            }
        }
        false
    }

    /// Writes a number in `lo..=hi` as the text of `node`.
    fn set_number(&mut self, node: NodeId, lo: i128, hi: i128) -> bool {
        if lo > hi {
            return false;
        }
        for _ in 0..8 {
            let span = (hi - lo).min(100);
            let value = lo + i128::from(below(self.rng, span as u32 + 1));
            if self.write_text(node, value.to_string().as_bytes()) {
                return true;
            }
        }
        false
    }

    /// `count(tree, "<needle>", n)` with `n` known: regenerate the tree with exactly
    /// `n` needles.
    fn fix_count(
        &mut self,
        call: &thicket_constraint::formula::PredicateCall,
        ev: &mut Evaluator<'_, '_>,
    ) -> bool {
        use thicket_constraint::formula::PredArg;
        if call.predicate.name() != "count" {
            return false;
        }
        let (PredArg::Var(t), PredArg::Symbol(needle)) = (&call.args[0], &call.args[1]) else {
            return false;
        };
        let Binding::Node(node) = ev.binding(*t) else {
            return false;
        };
        let n = match &call.args[2] {
            PredArg::Int(i) => *i,
            PredArg::Var(v) => match ev.binding(*v) {
                Binding::Int(i) => i,
                Binding::Node(n) => match String::from_utf8_lossy(self.tree().text(n)).parse() {
                    Ok(i) => i,
                    Err(_) => return false,
                },
                Binding::Unbound => return false,
            },
            _ => return false,
        };
        let Ok(n) = usize::try_from(n) else {
            return false;
        };
        let expr = self.tree().expr(node);
        let depth = self.tree().depth_above(self.solver.grammar, node);
        let table = self.solver.table(Measure::Count(*needle));
        let mut builder = TreeBuilder::new();
        table.generate(
            &self.solver.repairer,
            expr,
            depth,
            n,
            self.rng,
            &mut builder,
        ) && self.propose(node, Replacement::Tree(builder.finish()))
    }

    // ----- edits -----

    /// Whether an edit of `node` would wait for the next round (it overlaps one
    /// already proposed): then nothing needs to be built for it now.
    fn waits(&self, node: NodeId) -> bool {
        self.edits.overlaps(self.tree(), node)
    }

    fn propose(&mut self, node: NodeId, with: Replacement) -> bool {
        let tree = self.view.tree();
        let waits = self.edits.overlaps(tree, node)
            || matches!(with, Replacement::Copy(from) if self.edits.copies_into(tree, from, node));
        if !waits {
            self.edits.list.push((node, with));
        }
        // An overlapping edit waits for the next round (the tree will have changed), as
        // does a copy that would take in its own target (`a := b` after `b := a`).
        true
    }

    fn symbol(&self, node: NodeId) -> Option<SymbolId> {
        match self.solver.grammar.expr(self.tree().expr(node)) {
            Expr::Ref(s) => Some(*s),
            _ => None,
        }
    }

    /// Makes `to`'s text equal `from`'s: a copy of the subtree if both are the same
    /// rule (`from` as this round's edits leave it), else the text read back as `to`'s
    /// rule. `strict`: false (nothing proposed) if the copy would be dropped (`to`
    /// overlaps an edit of this round) or write an old text (`from` lies in an edit,
    /// or holds one and the text is read back).
    fn copy(&mut self, from: NodeId, to: NodeId, strict: bool) -> bool {
        let tree = self.view.tree();
        let edited = self.edits.overlaps(tree, from);
        if from == to || (!edited && tree.text(from) == tree.text(to)) {
            return true;
        }
        let same_rule = self.symbol(from).is_some() && self.symbol(from) == self.symbol(to);
        let stale = if same_rule {
            self.edits.within(tree, from) || self.edits.copies_within(tree, from)
        } else {
            edited
        };
        if strict && (self.edits.overlaps(tree, to) || stale) {
            return false;
        }
        if same_rule {
            return self.propose(to, Replacement::Copy(from));
        }
        let text = self.tree().text(from).to_vec();
        self.write_text(to, &text)
    }

    /// Replaces `node` by the subtree its rule derives `text` with (parsed); false if
    /// the rule cannot derive it.
    fn write_text(&mut self, node: NodeId, text: &[u8]) -> bool {
        if self.tree().text(node) == text {
            return true;
        }
        if self.waits(node) && self.symbol(node).is_some() {
            return true;
        }
        let Some(symbol) = self.symbol(node) else {
            return false;
        };
        match parse_as(self.solver, symbol, text) {
            Some(tree) => self.propose(node, Replacement::Tree(tree)),
            None => false,
        }
    }

    /// Replaces `node` by a fresh random subtree of its expression (a different text
    /// when a few tries find one).
    fn regenerate(&mut self, node: NodeId) -> bool {
        self.regenerate_until(node, 4, |_: &mut Self, _: &[u8]| true)
    }

    /// Replaces `node` by a fresh random subtree whose text no other node of its rule
    /// has (nor had one proposed this pass), where a few tries find one; else like
    /// [`Planner::regenerate`]. For disequalities: when many subtrees must differ
    /// pairwise (no attribute twice), a merely different text often meets a third one,
    /// and the repair would go round after round.
    fn regenerate_fresh(&mut self, node: NodeId) -> bool {
        let Some(symbol) = self.symbol(node) else {
            return self.regenerate(node);
        };
        if !self.taken.contains_key(&symbol) {
            let tree = self.view.tree();
            let texts = tree
                .descendants(tree.root())
                .filter(|&n| self.symbol(n) == Some(symbol))
                .map(|n| tree.text(n).to_vec())
                .collect();
            self.taken.insert(symbol, texts);
        }
        let fresh = |planner: &mut Self, text: &[u8]| {
            let taken = planner.taken.entry(symbol).or_default();
            !taken.contains(text) && taken.insert(text.to_vec())
        };
        self.regenerate_until(node, 8, fresh) || self.regenerate(node)
    }

    /// Proposes a fresh random subtree for `node` with a different text that `accept`
    /// takes, trying up to `tries` times.
    fn regenerate_until(
        &mut self,
        node: NodeId,
        tries: u32,
        mut accept: impl FnMut(&mut Self, &[u8]) -> bool,
    ) -> bool {
        if self.waits(node) {
            return true;
        }
        let expr = self.tree().expr(node);
        let depth = self.tree().depth_above(self.solver.grammar, node);
        for _ in 0..tries {
            let mut builder = TreeBuilder::new();
            self.solver
                .repairer
                .expand(expr, depth, self.rng, &mut builder);
            let new = builder.finish();
            if new.bytes() != self.tree().text(node) && accept(self, new.bytes()) {
                return self.propose(node, Replacement::Tree(new));
            }
        }
        false
    }

    /// Proposes a fresh subtree for `node` (inside `top`) after which `mexpr` no
    /// longer matches `top`, where a few tries find one. Each try copies `top`'s
    /// subtree with the new part in and matches it.
    fn regenerate_unmatched(
        &mut self,
        top: NodeId,
        node: NodeId,
        mexpr: &thicket_constraint::matching::MatchExpr,
    ) -> bool {
        if self.waits(node) {
            return true;
        }
        let grammar = self.solver.grammar;
        let tree = self.view.tree();
        let expr = tree.expr(node);
        let depth = tree.depth_above(grammar, node);
        for _ in 0..3 {
            let mut builder = TreeBuilder::new();
            self.solver
                .repairer
                .expand(expr, depth, self.rng, &mut builder);
            let new = builder.finish();
            let mut sink = TreeBuilder::new();
            tree.emit_with_holes(
                grammar,
                top,
                tree.expr(top),
                &[node],
                &mut sink,
                &mut |_, sink| new.emit_subtree(grammar, new.root(), expr, sink),
            );
            let instance = sink.finish();
            let view = TreeView::new(&instance, grammar);
            if mexpr.matches(&view, grammar, instance.root()).is_empty() {
                return self.propose(node, Replacement::Tree(new));
            }
        }
        false
    }

    /// Removes a failing instance of a universal. With a match expression, first by
    /// regenerating a rule node between the instance and one of its bound subtrees (so
    /// that it may no longer match); otherwise by regenerating a node on the way from
    /// the quantifier's domain down to the instance with a generator that avoids the
    /// quantifier's rule, so the instance disappears (an undeclared variable in an
    /// expression becomes a number), or where no node on the way can avoid the rule, by
    /// dropping the repetition item that holds the instance ([`Planner::remove_item`]).
    /// `strict`: only by edits that do remove it (not the last resort of regenerating
    /// any node between, which may just rename a bound subtree, as a fix that is not
    /// sticking would).
    fn eliminate(
        &mut self,
        q: &Quantifier,
        instance: &[(VarId, NodeId)],
        ev: &Evaluator<'_, '_>,
        strict: bool,
    ) -> bool {
        let Some(&(_, top)) = instance.first() else {
            return false;
        };
        let view = self.view;
        let tree = view.tree();
        let rule_node = |n: NodeId| matches!(self.solver.grammar.expr(tree.expr(n)), Expr::Ref(_));
        if let Some(mexpr) = &q.mexpr {
            // Rule nodes between the instance and its bound subtrees, and whether a
            // choice (an alternative, a repetition) lies between the node and a bound
            // subtree: regenerating a node without one rebuilds the same shape around
            // the slots (`<id-with-prefix>` stays `_:_`), so the pattern still matches.
            let grammar = self.solver.grammar;
            let mut below_top: Vec<(NodeId, bool)> = Vec::new();
            for &(_, bound) in &instance[1..] {
                let path = tree.path_to(bound);
                for (i, &n) in path.iter().enumerate() {
                    if n.index() <= top.index() || !rule_node(n) {
                        continue;
                    }
                    let choice = path[i + 1..].iter().any(|&m| {
                        m != bound
                            && matches!(grammar.expr(tree.expr(m)), Expr::Alt(_) | Expr::Repeat(_))
                    });
                    match below_top.iter_mut().find(|(m, _)| *m == n) {
                        Some((_, c)) => *c |= choice,
                        None => below_top.push((n, choice)),
                    }
                }
            }
            let order = self.shuffled(below_top);
            // First a regeneration after which the pattern no longer matches there
            // (a regenerated name is prefixed again half the time), at the deepest
            // node with a choice first: it removes the least (a tag's name, not the tag
            // with its attributes), then any.
            let mut deepest: Vec<NodeId> = order
                .iter()
                .filter(|&&(_, choice)| choice)
                .map(|&(n, _)| n)
                .collect();
            deepest.sort_by_key(|n| std::cmp::Reverse(n.index()));
            for n in deepest {
                if self.regenerate_unmatched(top, n, mexpr) {
                    return true;
                }
            }
            let order: Vec<NodeId> = order.into_iter().map(|(n, _)| n).collect();
            if !strict && order.into_iter().any(|n| self.regenerate(n)) {
                return true;
            }
        }
        let domain = match ev.binding(q.domain.outer()) {
            Binding::Node(n) => n,
            _ => tree.root(),
        };
        let Some(avoider) = self.solver.avoider(q.symbol) else {
            return self.remove_item(top, domain);
        };
        // Each node with the rule expansions above it, counted down the one path.
        let mut depth = 0;
        let candidates: Vec<(NodeId, u32)> = tree
            .path_to(top)
            .into_iter()
            .map(|n| {
                let above = depth;
                depth += u32::from(rule_node(n));
                (n, above)
            })
            .filter(|&(n, _)| n.index() >= domain.index() && n != tree.root() && rule_node(n))
            // Past the depth limit too (an insertion above pushed the instance down):
            // there the avoider closes off along its shallowest choices, which avoid
            // the rule wherever some choice does.
            .filter(|&(n, _)| avoider.can_avoid(tree.expr(n), 0))
            .collect();
        // The deepest: it removes the least.
        let Some(&(n, above)) = candidates.last() else {
            return self.remove_item(top, domain);
        };
        if self.waits(n) {
            return true;
        }
        let mut builder = TreeBuilder::new();
        avoider.expand(tree.expr(n), above, self.rng, &mut builder);
        self.propose(n, Replacement::Tree(builder.finish()))
    }

    /// Removes the item holding `top` from the deepest repetition between `domain` and
    /// `top` that has more items than its minimum. For an instance that no rule on the
    /// way can leave out, because what holds it is an item of a repetition (a chunk of
    /// a file: `<chunk>*`): a constraint whose free nonterminals range over every item
    /// (a length or checksum field and the data of every chunk of its kind) holds only
    /// with fewer items, and fixing one item's fields breaks them for the others.
    fn remove_item(&mut self, top: NodeId, domain: NodeId) -> bool {
        let grammar = self.solver.grammar;
        let tree = self.view.tree();
        let path = tree.path_to(top);
        let spare = path.windows(2).rev().find_map(|pair| {
            let (repetition, item) = (pair[0], pair[1]);
            let Expr::Repeat(rep) = grammar.expr(tree.expr(repetition)) else {
                return None;
            };
            let count = tree.children(repetition).count();
            (repetition.index() >= domain.index() && count > rep.min as usize)
                .then_some((repetition, item))
        });
        let Some((repetition, item)) = spare else {
            return false;
        };
        if self.waits(repetition) {
            return true;
        }
        let mut builder = TreeBuilder::new();
        builder.open(tree.expr(repetition));
        for child in tree.children(repetition).filter(|&c| c != item) {
            tree.emit_subtree(grammar, child, tree.expr(child), &mut builder);
        }
        builder.close();
        self.propose(repetition, Replacement::Tree(builder.finish()))
    }

    /// Inserts a subtree of the quantifier's type into its domain (ISLa's tree
    /// insertion): into a repetition whose item can hold one, or by self-embedding a
    /// node of a recursive rule whose other parts can. The new subtree matches the
    /// quantifier's match expression where one is given; the next round binds it.
    fn insert(&mut self, q: &Quantifier, ev: &mut Evaluator<'_, '_>) -> bool {
        let Domain::Within(outer) = q.domain else {
            return false;
        };
        if self.inserted {
            // Deferred to the next round, which sees the first insertion.
            return true;
        }
        let Binding::Node(domain) = ev.binding(outer) else {
            return false;
        };
        // A witness that must hold a node already there (`inside(x, witness)`) cannot
        // be a new subtree: every insertion would be built and checked in vain.
        if must_hold_bound(&q.body, q.var, ev) {
            return false;
        }
        // Inside a universal's instance, inserting competes with removing the instance
        // (the caller's fallback): half the time leave it to that, so that a repair that
        // keeps inserting (a declaration whose initialiser uses yet another variable)
        // cannot crowd the other out.
        if !self.context.is_empty() && below(self.rng, 2) == 0 {
            return false;
        }
        let target = q.symbol;
        let tree = self.view.tree();
        let key = q as *const Quantifier as usize;
        let hosts = match self.hosts.get(&(key, domain)) {
            Some(hosts) => hosts.clone(),
            None => {
                let hosts = std::rc::Rc::new(self.hosts_in(domain, target));
                self.hosts.insert((key, domain), hosts.clone());
                hosts
            }
        };
        if hosts.is_empty() {
            return false;
        }
        // Prefer the nearest host around the instance (a declaration goes into the
        // innermost list that holds the use).
        let mut hosts = hosts.to_vec();
        if let Some(&ctx) = self.context.first() {
            let mut around: Vec<NodeId> = hosts
                .iter()
                .copied()
                .filter(|&h| h.index() <= ctx.index() && ctx.index() < tree.subtree_end(h))
                .collect();
            if !around.is_empty() {
                around.sort_by_key(|h| std::cmp::Reverse(h.index()));
                around.truncate(4);
                hosts = around;
            }
        } else {
            hosts = self.shuffled(hosts);
        }
        // A witness that must come before a bound node (`before(decl, expr)`) goes
        // before it: hosts are built with the target ahead of the node's part.
        let first = before_bound(&q.body, q.var, ev);
        hosts.retain(|&h| !self.unfit.contains(&(key, h)));
        if hosts.is_empty() {
            return false;
        }
        let new_part = q.mexpr.as_ref().and_then(|m| {
            let equal = equal_bound(&q.body, &m.binders, ev);
            self.instantiate_pattern(target, m, &equal)
        });
        for host in hosts.into_iter().take(4) {
            if let Some(embedding) = self.embed(host, target, new_part.as_ref(), first)
                && self.insertion_fits(q, ev, &embedding)
            {
                self.inserted = true;
                return self.propose(host, Replacement::Tree(embedding.tree));
            }
            self.unfit.insert((key, host));
        }
        false
    }

    /// Nodes in the subtree of `domain` that can take a new subtree of `target` while
    /// keeping what they hold: repetitions whose item can hold one (below their cap),
    /// nodes of recursive rules that can self-embed beside one.
    fn hosts_in(&self, domain: NodeId, target: SymbolId) -> Vec<NodeId> {
        let grammar = self.solver.grammar;
        let reach = &self.solver.reach;
        let tree = self.view.tree();
        let mut hosts = Vec::new();
        let mut embeds: Vec<Option<bool>> = vec![None; grammar.rules().len()];
        for n in tree.descendants(domain) {
            let fits = match grammar.expr(tree.expr(n)) {
                Expr::Ref(a) => *embeds[a.index()].get_or_insert_with(|| {
                    self_embedding(grammar, reach, grammar.rule(*a).body, *a, target, false)
                }),
                Expr::Repeat(rep) => {
                    let count = tree.children(n).count() as u32;
                    let cap = rep.min.max(self.solver.config.generation.max_repetitions);
                    reach.reaches(rep.item, target)
                        && rep.max.is_none_or(|m| count < m)
                        && count < cap + 2
                }
                _ => false,
            };
            if fits && n != tree.root() {
                hosts.push(n);
            }
        }
        hosts
    }

    /// Whether the inserted subtree can be the quantifier's witness: in the tree with
    /// the insertion made, under the same bindings (moved with their nodes), the
    /// structural predicates of the body hold for it. Structure is what later value
    /// fixes cannot change: a declaration inserted after its use, or in a block the use
    /// cannot see, would be repaired in vain round after round. Costs a copy of the
    /// tree, once per insertion tried.
    fn insertion_fits(
        &self,
        q: &Quantifier,
        ev: &Evaluator<'_, '_>,
        embedding: &Embedding,
    ) -> bool {
        let grammar = self.solver.grammar;
        let old = self.view.tree();
        let host_expr = old.expr(embedding.host);
        let tree = old.replace_subtrees(grammar, &[embedding.host], &mut |_, sink| {
            embedding
                .tree
                .emit_subtree(grammar, embedding.tree.root(), host_expr, sink)
        });
        let view = TreeView::new(&tree, grammar);
        let mut trial = self.solver.checker.evaluator(&view, self.constraint);
        for (var, binding) in ev.bindings() {
            let moved = match binding {
                Binding::Node(n) => embedding
                    .moved(old, n)
                    .map_or(Binding::Unbound, Binding::Node),
                other => other,
            };
            trial.bind(var, moved);
        }
        let target = NodeId::from_index(embedding.host.index() + embedding.target_at);
        // The target's instances only, if it lies in the quantifier's domain (as bound
        // in the new tree): matching every node of the type again is most of a check.
        let in_domain = match q.domain {
            // The domain itself may be the host, replaced by its embedding.
            Domain::Within(v) => match ev.binding(v) {
                Binding::Node(d) if d == embedding.host => true,
                _ => match trial.binding(v) {
                    Binding::Node(d) => {
                        d.index() <= target.index() && target.index() < tree.subtree_end(d)
                    }
                    _ => false,
                },
            },
            // A direct child is not inserted (the instance would be the host's).
            Domain::Child { .. } | Domain::Children { .. } => false,
        };
        if !in_domain {
            return false;
        }
        let matches = match &q.mexpr {
            None => vec![Vec::new()],
            Some(mexpr) => mexpr.matches(&view, grammar, target),
        };
        trial.bind(q.var, Binding::Node(target));
        matches.iter().any(|bindings| {
            for &(v, n) in bindings {
                trial.bind(v, Binding::Node(n));
            }
            structure_holds(&q.body, &mut trial)
        })
    }

    /// A tree of `symbol` matching one variant of the pattern: its placeholders
    /// generated (a binder in `equal` a copy of its node instead), its text parsed
    /// back unless the variant has a skeleton.
    fn instantiate_pattern(
        &mut self,
        symbol: SymbolId,
        mexpr: &thicket_constraint::matching::MatchExpr,
        equal: &[(VarId, NodeId)],
    ) -> Option<DerivationTree> {
        use thicket_constraint::matching::Atom;
        let grammar = self.solver.grammar;
        // Small: what a placeholder holds is not what the pattern asks for, and every
        // part of it may need repairs of its own.
        let depth = self.solver.config.generation.max_depth.saturating_sub(3);
        for _ in 0..4 {
            let index = below(self.rng, mexpr.variants.len() as u32) as usize;
            let key = (
                mexpr as *const thicket_constraint::matching::MatchExpr as usize,
                index,
            );
            if let Some(skeleton) = self.solver.skeletons.get(&key) {
                let variant = &mexpr.variants[index];
                let tree = self.view.tree();
                return Some(skeleton.instantiate(self.solver, depth, self.rng, |slot| {
                    let Some(Atom::Slot(symbol, Some(var))) = variant
                        .iter()
                        .filter(|a| matches!(a, Atom::Slot(..)))
                        .nth(slot)
                    else {
                        return None;
                    };
                    // A copy where the node is of the placeholder's rule.
                    let &(_, node) = equal.iter().find(|(v, _)| v == var)?;
                    matches!(grammar.expr(tree.expr(node)), Expr::Ref(s) if s == symbol)
                        .then_some((tree, node))
                }));
            }
            let variant = &mexpr.variants[index];
            let mut sink = ByteSink { bytes: Vec::new() };
            for atom in variant {
                match atom {
                    Atom::Byte(b) => sink.bytes.push(*b),
                    Atom::Slot(s, _) => {
                        let body = grammar.rule(*s).body;
                        self.solver
                            .repairer
                            .expand(body, depth, self.rng, &mut sink);
                    }
                }
            }
            if let Some(tree) = parse_as(self.solver, symbol, &sink.bytes) {
                return Some(tree);
            }
        }
        None
    }

    /// The host's subtree again with a new `target` subtree beside its content:
    /// repetition hosts get one more item, rule hosts are self-embedded (the old
    /// subtree goes into a recursive occurrence of the rule, the new one elsewhere).
    fn embed(
        &mut self,
        host: NodeId,
        target: SymbolId,
        new_part: Option<&DerivationTree>,
        before: Option<NodeId>,
    ) -> Option<Embedding> {
        let solver = self.solver;
        let grammar = solver.grammar;
        let tree = self.view.tree();
        let depth = tree.depth_above(grammar, host);
        // The node the target must precede, if it lies in the host (then in the kept part).
        let before = before.filter(|&n| {
            host.index() <= n.index() && n.index() < tree.subtree_end(host) && n != host
        });
        let mut needs = Needs {
            keep: None,
            target: Some((target, new_part)),
        };
        let mut production = Production {
            solver,
            tree,
            rng: &mut *self.rng,
            sink: TreeBuilder::new(),
            copied: Vec::new(),
            target_at: None,
            target_first: before.is_some(),
        };
        match grammar.expr(tree.expr(host)) {
            Expr::Repeat(rep) => {
                let children: Vec<NodeId> = tree.children(host).collect();
                // Up to the child holding `before`, if any.
                let last = before.map_or(children.len(), |n| {
                    children
                        .iter()
                        .position(|&c| n.index() < tree.subtree_end(c))
                        .unwrap_or(children.len())
                });
                let at = below(production.rng, last as u32 + 1) as usize;
                production.sink.open(tree.expr(host));
                // The new item goes before child `at` (after the last if `at` is the
                // count).
                for i in 0..=children.len() {
                    if i == at {
                        production.produce(rep.item, depth, &mut needs, 0)?;
                    }
                    if let Some(&child) = children.get(i) {
                        production.copy(child, tree.expr(child));
                    }
                }
                production.sink.close();
            }
            Expr::Ref(a) => {
                needs.keep = Some((*a, host));
                production.sink.open(tree.expr(host));
                production.produce(grammar.rule(*a).body, depth + 1, &mut needs, 0)?;
                production.sink.close();
            }
            _ => return None,
        }
        if !needs.is_empty() {
            return None;
        }
        Some(Embedding {
            host,
            copied: production.copied,
            target_at: production.target_at?,
            tree: production.sink.finish(),
        })
    }
}

/// Whether `f`, made to take the value `want`, is itself a universal over instances
/// (a `forall` made true or an `exists` made false), under negations.
fn nested_universal(f: &Formula, want: bool) -> bool {
    match f {
        Formula::Quantifier(q) => q.universal == want,
        Formula::Not(inner) => nested_universal(inner, !want),
        _ => false,
    }
}

/// A host's new subtree with a target inserted, and where the old parts went.
struct Embedding {
    host: NodeId,
    tree: DerivationTree,
    /// Old subtrees copied verbatim: `(old root, old end, root in `tree`)`.
    copied: Vec<(usize, usize, usize)>,
    /// The target's root in `tree`.
    target_at: usize,
}

impl Embedding {
    /// Where a node of the old tree is in the tree with the host replaced; `None` if it was not kept.
    fn moved(&self, old: &DerivationTree, node: NodeId) -> Option<NodeId> {
        let (host, end) = (self.host.index(), old.subtree_end(self.host));
        let x = node.index();
        let at = if x < host {
            x
        } else if x >= end {
            x + self.tree.len() - (end - host)
        } else {
            let &(root, _, new_root) = self
                .copied
                .iter()
                .find(|&&(root, end, _)| root <= x && x < end)?;
            host + new_root + (x - root)
        };
        Some(NodeId::from_index(at))
    }
}

/// What a produced subtree must contain.
struct Needs<'a> {
    /// A rule and an old node of it, to be re-emitted at an occurrence of the rule.
    keep: Option<(SymbolId, NodeId)>,
    /// A rule to contain, with the subtree to put there (else generated).
    target: Option<(SymbolId, Option<&'a DerivationTree>)>,
}

impl Needs<'_> {
    fn satisfiable_in(&self, reach: &thicket_grammar::Reach, expr: ExprId) -> bool {
        self.keep.is_none_or(|(a, _)| reach.reaches(expr, a))
            && self.target.is_none_or(|(t, _)| reach.reaches(expr, t))
    }
    fn is_empty(&self) -> bool {
        self.keep.is_none() && self.target.is_none()
    }
}

/// Whether a rule body can hold both a recursive occurrence of its rule `a` and a
/// `target` beside it (in one alternative; with `target_first`, before it).
fn self_embedding(
    grammar: &thicket_grammar::Grammar,
    reach: &thicket_grammar::Reach,
    body: ExprId,
    a: SymbolId,
    target: SymbolId,
    target_first: bool,
) -> bool {
    match grammar.expr(body) {
        Expr::Alt(children) => children
            .iter()
            .any(|&c| self_embedding(grammar, reach, c, a, target, target_first)),
        Expr::Seq(children) => children.iter().enumerate().any(|(i, &c)| {
            reach.reaches(c, a)
                && children
                    .iter()
                    .enumerate()
                    .any(|(j, &d)| j != i && (!target_first || j < i) && reach.reaches(d, target))
        }),
        Expr::Repeat(rep) => {
            rep.max.is_none_or(|m| m >= 2)
                && reach.reaches(rep.item, a)
                && reach.reaches(rep.item, target)
        }
        _ => false,
    }
}

/// Most nested steps a produced subtree may take to meet its needs.
const MAX_PRODUCE_DEPTH: u32 = 64;

/// Builds a subtree that meets some [`Needs`], and records where its parts went: the
/// old subtrees copied verbatim and the target, so that nodes of the old tree can be
/// found in the new one (see `Planner::insertion_fits`).
struct Production<'p, 's, 'g, R: ?Sized> {
    solver: &'s Solver<'g>,
    /// The tree kept subtrees come from.
    tree: &'p DerivationTree,
    rng: &'p mut R,
    sink: TreeBuilder,
    /// Old subtrees emitted verbatim: `(old root, old end, new root)`.
    copied: Vec<(usize, usize, usize)>,
    /// Where the target's subtree starts.
    target_at: Option<usize>,
    /// Whether the target must come before the kept subtree (see [`before_bound`]).
    target_first: bool,
}

impl<R: Rng + ?Sized> Production<'_, '_, '_, R> {
    /// Emits the old subtree at `node` as an instance of `expr`, recording where.
    fn copy(&mut self, node: NodeId, expr: ExprId) {
        let at = self.sink.node_count();
        self.copied
            .push((node.index(), self.tree.subtree_end(node), at));
        self.tree
            .emit_subtree(self.solver.grammar, node, expr, &mut self.sink);
    }

    /// Emits a subtree of `expr` at `depth` that meets `needs` (taking them off as it
    /// meets them), the rest generated at random. `None` if the needs cannot be met.
    fn produce(
        &mut self,
        expr: ExprId,
        depth: u32,
        needs: &mut Needs<'_>,
        steps: u32,
    ) -> Option<()> {
        let solver = self.solver;
        let grammar = solver.grammar;
        let reach = &solver.reach;
        if needs.is_empty() || !needs.satisfiable_in(reach, expr) {
            solver
                .repairer
                .expand(expr, depth, self.rng, &mut self.sink);
            return Some(());
        }
        if steps > MAX_PRODUCE_DEPTH {
            return None;
        }
        match grammar.expr(expr) {
            Expr::Ref(s) => {
                if let Some((a, old)) = needs.keep
                    && *s == a
                    && needs.target.is_none_or(|(t, _)| t != a)
                {
                    needs.keep = None;
                    self.copy(old, expr);
                    return Some(());
                }
                if let Some((t, part)) = needs.target
                    && *s == t
                    && needs.keep.is_none()
                {
                    needs.target = None;
                    self.target_at = Some(self.sink.node_count());
                    match part {
                        Some(p) => p.emit_subtree(grammar, p.root(), expr, &mut self.sink),
                        None => {
                            solver
                                .repairer
                                .expand(expr, depth, self.rng, &mut self.sink);
                        }
                    }
                    return Some(());
                }
                self.sink.open(expr);
                self.produce(grammar.rule(*s).body, depth + 1, needs, steps + 1)?;
                self.sink.close();
            }
            Expr::Alt(children) => {
                let options: Vec<ExprId> = children
                    .iter()
                    .copied()
                    .filter(|&c| needs.satisfiable_in(reach, c))
                    .collect();
                // Prefer an alternative that directly holds the kept rule beside the target.
                let direct: Vec<ExprId> = options
                    .iter()
                    .copied()
                    .filter(|&c| match (needs.keep, needs.target) {
                        (Some((a, _)), Some((t, _))) => {
                            self_embedding(grammar, reach, c, a, t, self.target_first)
                        }
                        _ => true,
                    })
                    .collect();
                let mut pool = if direct.is_empty() { options } else { direct };
                if pool.is_empty() {
                    return None;
                }
                // Towards a target by one of the shortest routes, three times in four:
                // a random route wanders through nested statements or elements whose
                // random parts bring repairs of their own (new uses, new attributes).
                if let Some((t, _)) = needs.target
                    && needs.keep.is_none()
                    && below(self.rng, 4) != 0
                {
                    let routes = solver.route_to(t);
                    let best = pool.iter().map(|c| routes[c.index()]).min();
                    pool.retain(|c| Some(routes[c.index()]) == best);
                }
                let choice = pool[below(self.rng, pool.len() as u32) as usize];
                self.sink.open(expr);
                self.produce(choice, depth, needs, steps + 1)?;
                self.sink.close();
            }
            Expr::Seq(children) => {
                // The kept rule goes to a child that is a reference to it if there is
                // one, the target to another child that can hold it.
                // With the target first, the last such child, and the target before it.
                let first = self.target_first;
                let find = |pred: &dyn Fn(ExprId) -> bool| {
                    if first {
                        children.iter().rposition(|&c| pred(c))
                    } else {
                        children.iter().position(|&c| pred(c))
                    }
                };
                let keep_at = needs.keep.and_then(|(a, _)| {
                    find(&|c| matches!(grammar.expr(c), Expr::Ref(s) if *s == a))
                        .or_else(|| find(&|c| reach.reaches(c, a)))
                });
                let target_options: Vec<usize> = needs.target.map_or(Vec::new(), |(t, _)| {
                    (0..children.len())
                        .filter(|&i| Some(i) != keep_at && reach.reaches(children[i], t))
                        .filter(|&i| !first || keep_at.is_none_or(|k| i < k))
                        .collect()
                });
                let target_at = if target_options.is_empty() {
                    keep_at
                } else {
                    Some(target_options[below(self.rng, target_options.len() as u32) as usize])
                };
                let (keep, target) = (needs.keep.take(), needs.target.take());
                self.sink.open(expr);
                for (i, &child) in children.iter().enumerate() {
                    let mut part = Needs {
                        keep: if Some(i) == keep_at { keep } else { None },
                        target: if Some(i) == target_at { target } else { None },
                    };
                    self.produce(child, depth, &mut part, steps + 1)?;
                    if !part.is_empty() {
                        return None;
                    }
                }
                self.sink.close();
            }
            Expr::Repeat(rep) => {
                let parts = usize::from(needs.keep.is_some()) + usize::from(needs.target.is_some());
                let cap = rep.min.max(solver.config.generation.max_repetitions);
                let max = rep.max.map_or(cap, |m| m.min(cap)).max(parts as u32);
                let min = rep.min.max(1);
                let count = min + below(self.rng, max.saturating_sub(min) + 1);
                let (keep_at, target_at) = match (parts == 2 && count >= 2, self.target_first) {
                    (true, false) => (0, 1 + below(self.rng, count - 1) as usize),
                    (true, true) => {
                        let keep_at = 1 + below(self.rng, count - 1) as usize;
                        (keep_at, below(self.rng, keep_at as u32) as usize)
                    }
                    (false, _) => (0, 0),
                };
                let (keep, target) = (needs.keep.take(), needs.target.take());
                self.sink.open(expr);
                for i in 0..count as usize {
                    let mut part = Needs {
                        keep: if i == keep_at { keep } else { None },
                        target: if i == target_at { target } else { None },
                    };
                    self.produce(rep.item, depth, &mut part, steps + 1)?;
                    if !part.is_empty() {
                        return None;
                    }
                }
                self.sink.close();
            }
            Expr::Literal(_) | Expr::Regex(_) => return None,
        }
        Some(())
    }
}

/// The text read as a subtree of `symbol`, if the rule derives it. The constraints'
/// string literals are remembered as read ([`Solver::read_back`]): they are written
/// again and again (the `xmlns` an attribute's prefix becomes), other texts seldom.
pub(crate) fn parse_as(
    solver: &Solver<'_>,
    symbol: SymbolId,
    text: &[u8],
) -> Option<DerivationTree> {
    let parser = solver.parser()?;
    let parse = || Some(parser.parse_as(symbol, text).ok()?.tree());
    if !solver.literals.contains(text) {
        return parse();
    }
    let key = (symbol, text.to_vec());
    if let Some(known) = solver.read_back.lock().ok()?.get(&key) {
        return known.clone();
    }
    let tree = parse();
    let mut known = solver.read_back.lock().ok()?;
    if known.len() < crate::READ_BACK_MAX_ENTRIES {
        known.insert(key, tree.clone());
    }
    tree
}

/// The node a quantifier's witness must come before: `before(var, x)` in the
/// conjunction `f`, with `x` bound to a node.
fn before_bound(f: &Formula, var: VarId, ev: &Evaluator<'_, '_>) -> Option<NodeId> {
    use thicket_constraint::formula::PredArg;
    match f {
        Formula::Predicate(call) if call.predicate.name() == "before" => {
            match call.args.as_slice() {
                [PredArg::Var(a), PredArg::Var(b)] if *a == var => match ev.binding(*b) {
                    Binding::Node(n) => Some(n),
                    _ => None,
                },
                _ => None,
            }
        }
        Formula::Binary(Connective::And, a, b) => {
            before_bound(a, var, ev).or_else(|| before_bound(b, var, ev))
        }
        _ => None,
    }
}

/// The binders of a match expression that `f`, the quantifier's body, says (in a
/// conjunction) equal a bound node: `prefix_use = prefix_def` makes
/// an inserted declaration's `prefix_def` a copy of `prefix_use`, so the insertion
/// needs no second round to rename it.
fn equal_bound(f: &Formula, binders: &[VarId], ev: &Evaluator<'_, '_>) -> Vec<(VarId, NodeId)> {
    let mut out = Vec::new();
    let mut visit = |f: &Formula| {
        if let Formula::Smt(Term::App(Func::Eq, _, args), _) = f
            && let [Term::Var(a), Term::Var(b)] = args.as_slice()
        {
            for (x, y) in [(*a, *b), (*b, *a)] {
                if binders.contains(&x)
                    && !binders.contains(&y)
                    && let Binding::Node(n) = ev.binding(y)
                {
                    out.push((x, n));
                }
            }
        }
    };
    conjuncts(f, &mut visit);
    out
}

/// Calls `visit` with each conjunct of `f` (`f` itself if it is not a conjunction).
fn conjuncts(f: &Formula, visit: &mut impl FnMut(&Formula)) {
    match f {
        Formula::Binary(Connective::And, a, b) => {
            conjuncts(a, visit);
            conjuncts(b, visit);
        }
        _ => visit(f),
    }
}

/// Whether `f`, a quantifier's body, needs (in a conjunction) its variable `var` to
/// hold a node bound outside the quantifier: `inside(x, var)` with `x` bound.
fn must_hold_bound(f: &Formula, var: VarId, ev: &Evaluator<'_, '_>) -> bool {
    use thicket_constraint::formula::PredArg;
    match f {
        Formula::Predicate(call) if call.predicate.name() == "inside" => {
            matches!(call.args.as_slice(),
                [PredArg::Var(a), PredArg::Var(b)]
                    if *b == var && *a != var && matches!(ev.binding(*a), Binding::Node(_)))
        }
        Formula::Binary(Connective::And, a, b) => {
            must_hold_bound(a, var, ev) || must_hold_bound(b, var, ev)
        }
        _ => false,
    }
}

/// Whether the structural predicates of `f` allow it to hold (its other atoms are
/// taken as satisfiable): conjunctions and disjunctions are followed, anything
/// under a negation or a quantifier is left to later rounds.
fn structure_holds(f: &Formula, ev: &mut Evaluator<'_, '_>) -> bool {
    match f {
        Formula::Predicate(call) if call.predicate.is_structural() => {
            !matches!(ev.predicate_outcome(call), Some(Outcome::Fails { .. }))
        }
        Formula::Binary(Connective::And, a, b) => structure_holds(a, ev) && structure_holds(b, ev),
        Formula::Binary(Connective::Or, a, b) => structure_holds(a, ev) || structure_holds(b, ev),
        _ => true,
    }
}

// ----- terms -----

enum Inner {
    Len,
    ToInt,
}

/// `term` as `a * inner(var) + b` with `a = ±1`, the other parts evaluated.
fn linear(term: &Term, var: VarId, ev: &Evaluator<'_, '_>) -> Option<(Inner, i128, i128)> {
    let known = |t: &Term| match ev.value(t) {
        Ok(Value::Int(i)) => Some(i),
        _ => None,
    };
    match term {
        _ if applied_to(term, Func::StrLen, var) => Some((Inner::Len, 1, 0)),
        _ if applied_to(term, Func::StrToInt, var) => Some((Inner::ToInt, 1, 0)),
        Term::App(Func::Add, _, args) => {
            let mut found = None;
            let mut rest = 0i128;
            for arg in args {
                if arg.mentions(var) {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(linear(arg, var, ev)?);
                } else {
                    rest = rest.checked_add(known(arg)?)?;
                }
            }
            let (inner, a, b) = found?;
            Some((inner, a, b.checked_add(rest)?))
        }
        // x - y: the variable on one side only; the other side is known.
        Term::App(Func::Sub, _, args) if args.len() == 2 => {
            let (x, y) = (&args[0], &args[1]);
            match (x.mentions(var), y.mentions(var)) {
                (true, false) => {
                    let (inner, a, b) = linear(x, var, ev)?;
                    Some((inner, a, b.checked_sub(known(y)?)?))
                }
                (false, true) => {
                    let (inner, a, b) = linear(y, var, ev)?;
                    Some((inner, -a, known(x)?.checked_sub(b)?))
                }
                _ => None,
            }
        }
        Term::App(Func::Neg, _, args) if args.len() == 1 => {
            let (inner, a, b) = linear(&args[0], var, ev)?;
            Some((inner, -a, -b))
        }
        _ => None,
    }
}

/// The subtrees bound to the term's variables.
fn tree_vars(term: &Term, ev: &Evaluator<'_, '_>, out: &mut Vec<NodeId>) {
    let mut vars = Vec::new();
    term_vars(term, &mut vars);
    for v in vars {
        if let Binding::Node(n) = ev.binding(v)
            && !out.contains(&n)
        {
            out.push(n);
        }
    }
}

fn sort_of(term: &Term, ev: &Evaluator<'_, '_>) -> Option<Sort> {
    match term {
        Term::Var(_) => Some(Sort::Str),
        _ => match ev.value(term) {
            Ok(Value::Str(_)) => Some(Sort::Str),
            Ok(Value::Int(_)) => Some(Sort::Int),
            Ok(Value::Bool(_)) => Some(Sort::Bool),
            Ok(Value::Re(_)) => Some(Sort::Re),
            Err(_) => None,
        },
    }
}
