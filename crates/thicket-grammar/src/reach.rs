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
}
