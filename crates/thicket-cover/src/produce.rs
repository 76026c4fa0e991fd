//! k-path-covering production: Algorithm 1 ("GenerateKPaths") of the k-path paper.
//!
//! For every k-path still uncovered (in an order shuffled by the seed), and then for
//! every shorter path still uncovered (the (k-1)-paths, then the (k-2)-paths, ...,
//! each in shuffled order), one input is built that contains it: from the root, the derivation is steered along the shortest
//! route (in the graph of symbolic nodes) to the path's first node and then along the
//! path itself, choosing at each alternation the alternative that leads on; a
//! quantified item on the way is repeated as often as the close-off would (at least
//! once), the steered repetition at a random place (Tribble repeats `max(min, 1)` times;
//! more repetitions cover more by accident, so fewer inputs are needed). Every other
//! open slot is closed off by the depth-bounded random generator (Algorithm 2). Then every
//! l-path (l <= k) the finished tree covers, by design or by accident, is struck off.
//!
//! Decision: covering k-paths covers every path that is part of one, but not a path that
//! cannot be extended to k symbols (on a JSON grammar, the start rule's `<value>` followed
//! by a `true` terminal: nothing comes above the start rule or below a terminal). A user
//! asking for k-paths expects every l-path for l <= k covered, so the shorter paths are
//! on the agenda too; after the k-paths almost all of them are covered already and cost
//! nothing.
//!
//! Decision: a path whose steered input would exceed the depth limit is not produced but
//! reported as unfit, so the inputs always respect `--max-depth`.

use crate::{KPathGraph, for_each_tree_path};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;
use std::time::Instant;
use thicket_gen::{Fresh, GenRng, GenStats, Generator, Producer, below};
use thicket_grammar::{Expr, ExprId, Grammar};
use thicket_tree::{DerivationTree, TreeBuilder, TreeSink};

/// What k-path-covering production made.
#[derive(Debug)]
pub struct KPathProduction {
    /// The inputs, in the order they were made.
    pub trees: Vec<DerivationTree>,
    /// The l-paths (l <= k) that cannot be covered within the depth limit.
    pub unfit: Vec<Box<[u32]>>,
    /// For l = 1..=k (at index l - 1), the number of l-paths of the grammar.
    pub total: Vec<usize>,
    /// For l = 1..=k (at index l - 1), how many of them the trees cover (in the first
    /// round, for the stream).
    pub covered: Vec<usize>,
    /// The l-paths the finishing step (see [`cover_k_paths_until`]) lost every time an
    /// input steered to them was finished.
    pub lost: Vec<Box<[u32]>>,
    /// Steered inputs the finishing step could not finish (dropped).
    pub dropped: usize,
    /// Whether the deadline stopped the production before its agenda or limit did.
    pub timed_out: bool,
    /// Whether the caller's [`Stop::interrupted`] stopped it.
    pub interrupted: bool,
}

/// When production stops before its agenda or limit: at a deadline, or when the caller
/// says so (a user's Ctrl-C); both are looked at before each input is begun.
#[derive(Clone, Copy)]
pub struct Stop<'a> {
    /// No input is begun after it.
    pub deadline: Option<Instant>,
    /// Asked before each input; `true` stops the production.
    pub interrupted: &'a dyn Fn() -> bool,
}

impl Stop<'_> {
    /// At `deadline` only.
    pub fn at(deadline: Option<Instant>) -> Stop<'static> {
        Stop {
            deadline,
            interrupted: &|| false,
        }
    }
}

/// What becomes of each steered input before its paths are counted: the identity for
/// plain production; for constrained production, a repair into a valid input (which
/// may lose paths, or fail: `None`). Called with the input and a number unique to it
/// within the run (for a random stream of its own).
pub type Finish<'a> = dyn FnMut(DerivationTree, u64) -> Option<DerivationTree> + 'a;

/// How often a path is steered to before the finishing step is said to lose it.
pub const FINISH_TRIES: u32 = 4;

/// Builds inputs until every l-path (l = 1..=k) of the grammar that fits the generator's
/// depth limit is covered, or `limit` inputs are made.
pub fn cover_k_paths(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    k: usize,
    seed: u64,
    limit: usize,
) -> KPathProduction {
    cover_k_paths_until(
        generator,
        graph,
        k,
        seed,
        limit,
        Stop::at(None),
        &mut |tree, _| Some(tree),
    )
}

/// [`cover_k_paths`] where each input is finished (e.g. repaired to satisfy
/// constraints) before its paths are counted, so that the paths covered are those of
/// the finished inputs: a path a finished input lost is steered to again, up to four
/// times, then reported in `lost`. No input is begun once `stop` says to stop
/// ([`KPathProduction::timed_out`], [`KPathProduction::interrupted`]).
pub fn cover_k_paths_until(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    k: usize,
    seed: u64,
    limit: usize,
    stop: Stop<'_>,
    finish: &mut Finish<'_>,
) -> KPathProduction {
    produce(generator, graph, k, seed, limit, false, stop, finish)
}

/// A stream of `count` inputs whose k-path diversity grows as fast as possible
/// ("kpath-random", beyond Tribble). Each input is the best, by l-paths (l <= k) still
/// open, of an input steered (as in [`cover_k_paths`]) to the next open path and a few
/// random inputs; once every path is covered the record is cleared and a new round
/// begins (as ISLa does with its global k-path record). `covered` counts the first round.
pub fn k_path_stream(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    k: usize,
    seed: u64,
    count: usize,
) -> KPathProduction {
    k_path_stream_until(
        generator,
        graph,
        k,
        seed,
        count,
        Stop::at(None),
        &mut |tree, _| Some(tree),
    )
}

/// [`k_path_stream`] with each input finished before its paths are counted, and no
/// input begun once `stop` says to stop (see [`cover_k_paths_until`]).
pub fn k_path_stream_until(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    k: usize,
    seed: u64,
    count: usize,
    stop: Stop<'_>,
    finish: &mut Finish<'_>,
) -> KPathProduction {
    produce(generator, graph, k, seed, count, true, stop, finish)
}

#[allow(clippy::too_many_arguments)]
fn produce(
    generator: &Generator<'_>,
    graph: &KPathGraph,
    k: usize,
    seed: u64,
    limit: usize,
    cycle: bool,
    stop: Stop<'_>,
    finish: &mut Finish<'_>,
) -> KPathProduction {
    let grammar = generator.grammar();
    // The agenda: the k-paths, then the (k-1)-paths, ..., then the 1-paths, each length
    // shuffled with the seed (Fisher-Yates), as Tribble does.
    let mut targets: Vec<Box<[u32]>> = Vec::new();
    let mut total = vec![0; k];
    let mut rng = Generator::rng_for(seed, u64::MAX);
    for l in (1..=k).rev() {
        let from = targets.len();
        graph.for_each_path(l, |p| {
            targets.push(p.into());
            true
        });
        total[l - 1] = targets.len() - from;
        for i in (1..total[l - 1]).rev() {
            let j = below(&mut rng, i as u32 + 1) as usize;
            targets.swap(from + i, from + j);
        }
    }
    let agenda = targets.len();
    let mut open: FxHashSet<Box<[u32]>> = targets.iter().cloned().collect();
    let steering = Steering::new(grammar, graph);
    let max_depth = generator.config().max_depth;
    let mut trees = Vec::new();
    let mut unfit: Vec<Box<[u32]>> = Vec::new();
    let mut covered = vec![0; k];
    let mut round: u64 = 0;
    let mut position = 0;
    // Steerings of the current target so far, and what the finishing step lost.
    let mut tries: u32 = 0;
    let mut lost: Vec<Box<[u32]>> = Vec::new();
    let mut dropped = 0;
    let mut timed_out = false;
    let mut interrupted = false;
    while trees.len() < limit && !targets.is_empty() {
        if stop.deadline.is_some_and(|d| Instant::now() >= d) {
            timed_out = true;
            break;
        }
        if (stop.interrupted)() {
            interrupted = true;
            break;
        }
        if position == targets.len() {
            // The agenda is done. With `cycle`, start a new round, forgetting what is
            // covered but not what cannot fit.
            if !cycle || unfit.len() == targets.len() {
                break;
            }
            round += 1;
            position = 0;
            let unfit_set: FxHashSet<&[u32]> = unfit.iter().map(|u| &u[..]).collect();
            open = targets
                .iter()
                .filter(|t| !unfit_set.contains(&t[..]))
                .cloned()
                .collect();
        }
        let index = position as u64 + round * agenda as u64;
        let target = &targets[position];
        position += 1;
        if !open.contains(target) {
            continue;
        }
        let Some(shortest) = steering.route(target) else {
            open.remove(target);
            unfit.push(target.clone());
            continue;
        };
        // A retried target gets a stream of its own.
        let mut rng = Generator::rng_for(seed, index + u64::from(tries) * (1 << 40));
        let steered = {
            let mut builder = TreeBuilder::new();
            steering.build(generator, &shortest, &mut rng, &mut builder);
            builder.finish()
        };
        if steered.depth(grammar) > max_depth {
            open.remove(target);
            if round == 0 {
                unfit.push(target.clone());
            }
            continue;
        }
        // The stream keeps the best of the steered input and a few random ones (the
        // one covering the most k-paths still open), so that each of its inputs adds at
        // least about as much as a random input would, and usually more.
        let mut tree = steered;
        let mut steered_won = true;
        if cycle {
            let mut best = new_paths(graph, &tree, k, &open);
            for r in 0..STREAM_CANDIDATES {
                let mut rng =
                    Generator::rng_for(seed ^ 0x005E_ED0F_C0DE, index * STREAM_CANDIDATES + r);
                let (candidate, _) = generator.generate_tree(&mut rng);
                let gain = new_paths(graph, &candidate, k, &open);
                if gain > best {
                    (tree, best) = (candidate, gain);
                    steered_won = false;
                }
            }
        }
        // Every input handed to `finish` is kept or dropped: their count numbers it.
        let finished_tree = finish(tree, (trees.len() + dropped) as u64);
        if let Some(tree) = &finished_tree {
            for_each_tree_path(graph, tree, k, |p| {
                // A path given up as lost may still come with a later input.
                let found_lost = || lost.iter().position(|l| &l[..] == p);
                let new = open.remove(p) || found_lost().map(|i| lost.remove(i)).is_some();
                if new && round == 0 {
                    covered[p.len() - 1] += 1;
                }
            });
        }
        match finished_tree {
            Some(tree) => trees.push(tree),
            None => dropped += 1,
        }
        if open.contains(target) && !steered_won {
            // A random candidate won; the target stays on the agenda for a later pass.
            position -= 1;
            continue;
        }
        if open.contains(target) {
            // Finishing lost the target or failed: another steering, a few times.
            tries += 1;
            if tries < FINISH_TRIES {
                position -= 1;
                continue;
            }
            open.remove(target);
            if round == 0 {
                lost.push(target.clone());
            }
        }
        tries = 0;
    }
    KPathProduction {
        trees,
        unfit,
        total,
        covered,
        lost,
        dropped,
        timed_out,
        interrupted,
    }
}

/// Trees steered to contain `path` (see [`PathSteering::tree`]), as a [`Producer`]:
/// where no tree reaches the path, a plain tree from the same stream.
pub struct SteeredTo<'a, 'g> {
    /// The routes.
    pub steering: &'a PathSteering<'g>,
    /// The generator that closes everything else off.
    pub generator: &'a Generator<'g>,
    /// The k-path graph `path` is a walk of.
    pub graph: &'a KPathGraph,
    /// The path every tree should contain: symbolic nodes, outermost first.
    pub path: &'a [u32],
}

impl Producer for SteeredTo<'_, '_> {
    type Miss = std::convert::Infallible;

    fn grammar(&self) -> &Grammar {
        self.generator.grammar()
    }

    fn tree(&self, rng: &mut GenRng) -> Result<Fresh, Self::Miss> {
        Ok(
            match self
                .steering
                .tree(self.generator, self.graph, self.path, rng)
            {
                Some(tree) => Fresh {
                    tree,
                    stats: GenStats::default(),
                },
                None => {
                    let (tree, stats) = self.generator.generate_tree(rng);
                    Fresh { tree, stats }
                }
            },
        )
    }
}

/// Builds trees steered to contain a given path, as [`cover_k_paths`] does for each path
/// on its agenda: from the root along the shortest route to the path's first node, then
/// along the path, everything else closed off by the generator. For targeted generation
/// (CODEINE's "exists" constraints).
pub struct PathSteering<'g> {
    steering: Steering<'g>,
}

impl<'g> PathSteering<'g> {
    /// Routes through `graph`, the k-path graph of `grammar`.
    pub fn new(grammar: &'g Grammar, graph: &'g KPathGraph) -> PathSteering<'g> {
        PathSteering {
            steering: Steering::new(grammar, graph),
        }
    }

    /// A tree containing `path` (symbolic nodes, outermost first), its other choices
    /// drawn from `rng`; `None` if no derivation from the start rule reaches the path's
    /// first node, or the path is no walk of the graph. The tree may exceed the
    /// generator's depth limit by the route's length.
    pub fn tree(
        &self,
        generator: &Generator<'_>,
        graph: &KPathGraph,
        path: &[u32],
        rng: &mut GenRng,
    ) -> Option<DerivationTree> {
        let nodes = path
            .iter()
            .all(|&x| graph.is_node(ExprId::from_index(x as usize)));
        if !nodes
            || !path
                .windows(2)
                .all(|w| graph.successors(w[0]).contains(&w[1]))
        {
            return None;
        }
        let chain = self.steering.route(path)?;
        let mut builder = TreeBuilder::new();
        self.steering.build(generator, &chain, rng, &mut builder);
        Some(builder.finish())
    }
}

impl PathSteering<'_> {
    /// Emits into `sink` a subtree for the symbolic node `at` (at `depth` rule
    /// expansions from the root) that contains `path`: along a route in the graph from
    /// `at` down to the path's first node, then the path, everything else closed off by
    /// the generator. The route is a shortest one with up to [`MAX_DETOURS`] steps (their
    /// number drawn from `rng`) to a random successor that still leads there, so that
    /// a graft may nest the path deeper and leave sibling slots for other content. For
    /// grafting a required path into a tree at a node of its own (CODEINE's search).
    /// Returns `false`, emitting nothing, if `path` is no walk of the graph or cannot
    /// be reached from `at`.
    #[allow(clippy::too_many_arguments)]
    pub fn subtree(
        &self,
        generator: &Generator<'_>,
        graph: &KPathGraph,
        at: ExprId,
        depth: u32,
        path: &[u32],
        rng: &mut GenRng,
        sink: &mut TreeBuilder,
    ) -> bool {
        let Some(chain) = self.route_from(graph, at.index() as u32, path, Some(rng)) else {
            return false;
        };
        self.steering.steer(generator, at, depth, &chain, rng, sink);
        true
    }

    /// Whether `path` can be grafted below the symbolic node `at` (see
    /// [`PathSteering::subtree`]).
    pub fn reaches(&self, graph: &KPathGraph, at: ExprId, path: &[u32]) -> bool {
        self.route_from(graph, at.index() as u32, path, None)
            .is_some()
    }

    /// The chain from `from` to the end of `path`: a route to `path[0]` (shortest, with
    /// random detours if `rng` is given), then the path.
    fn route_from(
        &self,
        graph: &KPathGraph,
        from: u32,
        path: &[u32],
        rng: Option<&mut GenRng>,
    ) -> Option<Vec<u32>> {
        let first = *path.first()?;
        let walk = path
            .iter()
            .all(|&x| graph.is_node(ExprId::from_index(x as usize)))
            && path
                .windows(2)
                .all(|w| graph.successors(w[0]).contains(&w[1]));
        if !walk || !graph.is_node(ExprId::from_index(from as usize)) {
            return None;
        }
        // Distances to `first` of the nodes reachable from `from`: breadth first from
        // `from`, then backwards over the edges found.
        let mut seen: rustc_hash::FxHashMap<u32, Vec<u32>> = rustc_hash::FxHashMap::default();
        seen.insert(from, Vec::new());
        let mut queue = VecDeque::from([from]);
        while let Some(x) = queue.pop_front() {
            for &s in graph.successors(x) {
                if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(s) {
                    e.insert(Vec::new());
                    queue.push_back(s);
                }
                seen.get_mut(&s).expect("just inserted").push(x);
            }
        }
        seen.get(&first)?;
        let mut dist: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
        dist.insert(first, 0);
        let mut queue = VecDeque::from([first]);
        while let Some(x) = queue.pop_front() {
            let d = dist[&x];
            for &p in &seen[&x] {
                if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(p) {
                    e.insert(d + 1);
                    queue.push_back(p);
                }
            }
        }
        let mut rng = rng;
        let mut detours = match rng.as_mut() {
            Some(rng) => below(*rng, MAX_DETOURS + 1),
            None => 0,
        };
        let mut chain = vec![from];
        let mut x = from;
        while x != first {
            let leads: Vec<u32> = graph
                .successors(x)
                .iter()
                .copied()
                .filter(|s| dist.contains_key(s))
                .collect();
            let shortest: Vec<u32> = leads
                .iter()
                .copied()
                .filter(|s| dist[s] + 1 == dist[&x])
                .collect();
            let options = if detours > 0 { &leads } else { &shortest };
            x = match rng.as_mut() {
                Some(rng) => options[below(*rng, options.len() as u32) as usize],
                None => shortest[0],
            };
            detours = detours.saturating_sub(1);
            chain.push(x);
        }
        chain.extend_from_slice(&path[1..]);
        Some(chain)
    }
}

/// Random steps a graft's route may take before it heads straight for its path.
pub const MAX_DETOURS: u32 = 3;

/// Random candidates the stream weighs against each steered input.
const STREAM_CANDIDATES: u64 = 3;

/// How many l-paths (l <= k) of a tree are still open.
fn new_paths(
    graph: &KPathGraph,
    tree: &DerivationTree,
    k: usize,
    open: &FxHashSet<Box<[u32]>>,
) -> usize {
    let mut seen: FxHashSet<Box<[u32]>> = FxHashSet::default();
    for_each_tree_path(graph, tree, k, |p| {
        if open.contains(p) {
            seen.insert(p.into());
        }
    });
    seen.len()
}

/// Routes through the grammar graph and steered tree building.
struct Steering<'g> {
    grammar: &'g Grammar,
    /// Parent of every expression inside a right-hand side (`u32::MAX` for bodies).
    parent: Vec<u32>,
    /// Predecessor of each symbolic node on a shortest route from the start rule's
    /// right-hand side (`u32::MAX` at the start), by breadth-first search.
    route_back: Vec<u32>,
}

impl<'g> Steering<'g> {
    fn new(grammar: &'g Grammar, graph: &'g KPathGraph) -> Steering<'g> {
        let n = grammar.expr_count();
        let mut parent = vec![u32::MAX; n];
        for id in grammar.expr_ids() {
            for &child in grammar.expr(id).children() {
                parent[child.index()] = id.index() as u32;
            }
        }
        // The first nodes of any route: the symbolic nodes of the start rule's body.
        let mut route_back = vec![u32::MAX - 1; n]; // MAX - 1: not reached
        let mut queue = VecDeque::new();
        for &node in graph.successors(grammar.root().index() as u32) {
            if route_back[node as usize] == u32::MAX - 1 {
                route_back[node as usize] = u32::MAX;
                queue.push_back(node);
            }
        }
        while let Some(x) = queue.pop_front() {
            for &s in graph.successors(x) {
                if route_back[s as usize] == u32::MAX - 1 {
                    route_back[s as usize] = x;
                    queue.push_back(s);
                }
            }
        }
        Steering {
            grammar,
            parent,
            route_back,
        }
    }

    /// The chain of symbolic nodes from the start rule's body down to the end of
    /// `target`: the shortest route to its first node, then the path itself.
    fn route(&self, target: &[u32]) -> Option<Vec<u32>> {
        let mut chain = Vec::new();
        let mut x = *target.first()?;
        loop {
            let back = self.route_back[x as usize];
            if back == u32::MAX - 1 {
                return None;
            }
            chain.push(x);
            if back == u32::MAX {
                break;
            }
            x = back;
        }
        chain.reverse();
        chain.extend_from_slice(&target[1..]);
        Some(chain)
    }

    /// Builds the tree that follows `chain` from the root, closing off everything else.
    fn build(
        &self,
        generator: &Generator<'_>,
        chain: &[u32],
        rng: &mut GenRng,
        sink: &mut TreeBuilder,
    ) {
        let root = self.grammar.root();
        sink.open(root);
        let Expr::Ref(start) = self.grammar.expr(root) else {
            unreachable!("the root references the start rule")
        };
        self.steer(
            generator,
            self.grammar.rule(*start).body,
            1,
            chain,
            rng,
            sink,
        );
        sink.close();
    }

    /// Expands `e` (at `depth` rule expansions) so that `chain[0]`, a symbolic node inside
    /// `e`'s part of a right-hand side, appears, and below it the rest of the chain.
    fn steer(
        &self,
        generator: &Generator<'_>,
        e: ExprId,
        depth: u32,
        chain: &[u32],
        rng: &mut GenRng,
        sink: &mut TreeBuilder,
    ) {
        let here = e.index() as u32;
        if here == chain[0] {
            match self.grammar.expr(e) {
                Expr::Ref(s) if chain.len() > 1 => {
                    sink.open(e);
                    self.steer(
                        generator,
                        self.grammar.rule(*s).body,
                        depth + 1,
                        &chain[1..],
                        rng,
                        sink,
                    );
                    sink.close();
                }
                _ => {
                    generator.expand(e, depth, rng, sink);
                }
            }
            return;
        }
        // The child of `e` on the way down to chain[0].
        let mut on_way = chain[0];
        while self.parent[on_way as usize] != here {
            on_way = self.parent[on_way as usize];
            debug_assert!(on_way != u32::MAX, "chain[0] lies inside e");
        }
        sink.open(e);
        match self.grammar.expr(e) {
            Expr::Alt(_) => self.steer(
                generator,
                ExprId::from_index(on_way as usize),
                depth,
                chain,
                rng,
                sink,
            ),
            Expr::Seq(items) => {
                for &item in items.iter() {
                    if item.index() as u32 == on_way {
                        self.steer(generator, item, depth, chain, rng, sink);
                    } else {
                        generator.expand(item, depth, rng, sink);
                    }
                }
            }
            Expr::Repeat(r) => {
                // As many repetitions as the close-off would draw (at least one), the
                // steered one at a random place: more accidental coverage per input than
                // Tribble's max(min, 1), so fewer inputs.
                let cap = r.min.max(generator.config().max_repetitions);
                let hi = r.max.map_or(cap, |m| m.min(cap)).max(1);
                let lo = r.min.max(1);
                let count = lo + below(rng, hi - lo + 1);
                let steered = below(rng, count);
                for i in 0..count {
                    if i == steered {
                        self.steer(generator, r.item, depth, chain, rng, sink);
                    } else {
                        generator.expand(r.item, depth, rng, sink);
                    }
                }
            }
            Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_) => {
                unreachable!("symbolic nodes have no children on the way")
            }
        }
        sink.close();
    }
}
