//! Which rules each node of the grammar graph can reach: the grammar fact behind
//! "can this subtree ever hold a `<x>`?" that constraint solving asks when it inserts
//! a subtree, steers a regeneration towards a rule, or proves an `exists` impossible.

use crate::grammar::{Expr, ExprId, Grammar, SymbolId};

/// For every expression, the set of rules whose references occur in some derivation
/// from it (the expression itself included when it is a reference), as a bitset.
#[derive(Clone, Debug)]
pub struct Reach {
    words: usize,
    /// `words` 64-bit words per expression, expression-major.
    bits: Vec<u64>,
}

impl Reach {
    /// Computes the sets by a fixpoint over the rules (cycles run through references).
    pub fn new(grammar: &Grammar) -> Reach {
        let words = grammar.rules().len().div_ceil(64).max(1);
        let mut reach = Reach {
            words,
            bits: vec![0; words * grammar.expr_count()],
        };
        // Children have smaller ids than their parents, so one pass in id order sees
        // every child first; references read their rule's body from the last pass.
        loop {
            let mut changed = false;
            for id in grammar.expr_ids() {
                let mut set = vec![0u64; words];
                match grammar.expr(id) {
                    Expr::Ref(symbol) => {
                        set[symbol.index() / 64] |= 1 << (symbol.index() % 64);
                        let body = grammar.rule(*symbol).body;
                        for (w, b) in set.iter_mut().zip(reach.row(body)) {
                            *w |= b;
                        }
                    }
                    other => {
                        for &child in other.children() {
                            for (w, b) in set.iter_mut().zip(reach.row(child)) {
                                *w |= b;
                            }
                        }
                    }
                }
                let row = &mut reach.bits[id.index() * words..(id.index() + 1) * words];
                if row != set.as_slice() {
                    row.copy_from_slice(&set);
                    changed = true;
                }
            }
            if !changed {
                return reach;
            }
        }
    }

    fn row(&self, id: ExprId) -> &[u64] {
        &self.bits[id.index() * self.words..(id.index() + 1) * self.words]
    }

    /// Whether a derivation from `expr` can contain a reference to `symbol`.
    pub fn reaches(&self, expr: ExprId, symbol: SymbolId) -> bool {
        self.row(expr)[symbol.index() / 64] & (1 << (symbol.index() % 64)) != 0
    }
}

/// The strongly connected components of the rule graph (an edge from each rule to every
/// rule its body refers to), by Tarjan's algorithm without recursion: two rules are in
/// one component when each can derive the other, and a part of a rule's body can
/// derive the rule again exactly when it refers to a rule of the rule's component.
/// Linear in the grammar's size (where [`Reach`] is quadratic).
#[derive(Clone, Debug)]
pub struct Components {
    /// Component number of each rule.
    of: Vec<u32>,
}

impl Components {
    /// Computes the components.
    pub fn new(grammar: &Grammar) -> Components {
        let rules = grammar.rules().len();
        // The rules each rule's body refers to.
        let mut starts = Vec::with_capacity(rules + 1);
        let mut edges = Vec::new();
        for symbol in grammar.symbols() {
            starts.push(edges.len());
            refs_in(grammar, grammar.rule(symbol).body, |s| {
                edges.push(s.index())
            });
        }
        starts.push(edges.len());
        const NONE: u32 = u32::MAX;
        let mut index = vec![NONE; rules];
        let mut low = vec![0u32; rules];
        let mut on_stack = vec![false; rules];
        let mut of = vec![NONE; rules];
        let mut stack = Vec::new();
        let mut next = 0u32;
        let mut components = 0u32;
        // (rule, next edge to look at)
        let mut work: Vec<(usize, usize)> = Vec::new();
        for root in 0..rules {
            if index[root] != NONE {
                continue;
            }
            work.push((root, starts[root]));
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (rule, ref mut edge)) = work.last_mut() {
                if *edge < starts[rule + 1] {
                    let to = edges[*edge];
                    *edge += 1;
                    if index[to] == NONE {
                        index[to] = next;
                        low[to] = next;
                        next += 1;
                        stack.push(to);
                        on_stack[to] = true;
                        work.push((to, starts[to]));
                    } else if on_stack[to] {
                        low[rule] = low[rule].min(index[to]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[rule]);
                }
                if low[rule] == index[rule] {
                    while let Some(member) = stack.pop() {
                        on_stack[member] = false;
                        of[member] = components;
                        if member == rule {
                            break;
                        }
                    }
                    components += 1;
                }
            }
        }
        Components { of }
    }

    /// The number of `rule`'s component. Components are numbered in reverse
    /// topological order: every rule that `rule` refers to outside its component has
    /// a smaller number.
    pub fn number(&self, rule: SymbolId) -> u32 {
        self.of[rule.index()]
    }

    /// Whether `a` and `b` can each derive the other (or are the same rule).
    pub fn same(&self, a: SymbolId, b: SymbolId) -> bool {
        self.of[a.index()] == self.of[b.index()]
    }
}

/// Calls `f` on each rule referred to in `expr`'s subtree (not through references).
pub fn refs_in(grammar: &Grammar, expr: ExprId, mut f: impl FnMut(SymbolId)) {
    let mut stack = vec![expr];
    while let Some(id) = stack.pop() {
        match grammar.expr(id) {
            Expr::Ref(symbol) => f(*symbol),
            other => stack.extend_from_slice(other.children()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_spec_bytes;

    #[test]
    fn reaches_through_cycles_and_not_elsewhere() {
        let spec = load_spec_bytes(
            "r.fan",
            b"<start> ::= <a> | <b>\n<a> ::= \"x\" <a> | <c>\n<c> ::= \"c\"\n<b> ::= \"b\"\n",
            &Default::default(),
        )
        .unwrap();
        let g = &spec.grammar;
        let reach = Reach::new(g);
        let sym = |n: &str| g.symbol(n).unwrap();
        let body = |n: &str| g.rule(sym(n)).body;
        assert!(reach.reaches(g.root(), sym("c")));
        assert!(reach.reaches(body("a"), sym("a")));
        assert!(reach.reaches(body("a"), sym("c")));
        assert!(!reach.reaches(body("a"), sym("b")));
        assert!(!reach.reaches(body("c"), sym("a")));
    }

    #[test]
    fn components_join_rules_that_derive_each_other() {
        let spec = load_spec_bytes(
            "r.fan",
            b"<start> ::= <a> | <b>\n<a> ::= \"x\" <b> | <c>\n<b> ::= \"b\" <a> | \"y\"\n\
              <c> ::= \"c\" <c>?\n",
            &Default::default(),
        )
        .unwrap();
        let g = &spec.grammar;
        let components = Components::new(g);
        let sym = |n: &str| g.symbol(n).unwrap();
        assert!(components.same(sym("a"), sym("b")));
        assert!(!components.same(sym("a"), sym("c")));
        assert!(!components.same(sym("start"), sym("a")));
        assert!(components.same(sym("c"), sym("c")));
    }
}
