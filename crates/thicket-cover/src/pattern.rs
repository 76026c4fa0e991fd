//! k-paths as readable grammar patterns (§5.2 of Havrikov, Kampmann and Zeller's
//! journal version, "grammar patterns"): the path `UnaryExpr₁₅ → AddExpr₃₆ → "-"₁₁` of
//! the expression grammar reads `MultExpr (* | / | %) ( AddExpr - MultExpr )`.
//!
//! The first node is replaced by the alternative of its rule that contains it; then each
//! reference on the path is replaced by the alternative of the referenced rule that
//! contains the next node. Sibling alternations stay as `(a | b | c)` groups, an
//! alternation on the path is narrowed to the element taken, a repetition on the path
//! shows the one repetition the path runs through; names lose their angle brackets and
//! literals their quotes (unless empty or holding white space or control characters,
//! which would otherwise vanish).

use thicket_grammar::grammar::quote_bytes;
use thicket_grammar::{Expr, ExprId, Grammar};

/// Renders k-paths of one grammar as patterns.
#[derive(Clone, Debug)]
pub struct PatternRenderer<'g> {
    grammar: &'g Grammar,
    /// Parent of every expression inside a right-hand side (`u32::MAX` for bodies).
    parent: Vec<u32>,
}

impl<'g> PatternRenderer<'g> {
    /// A renderer for the paths of `grammar`.
    pub fn new(grammar: &'g Grammar) -> PatternRenderer<'g> {
        let mut parent = vec![u32::MAX; grammar.expr_count()];
        for id in grammar.expr_ids() {
            for &child in grammar.expr(id).children() {
                parent[child.index()] = id.index() as u32;
            }
        }
        PatternRenderer { grammar, parent }
    }

    /// The pattern of a path (expression ids, outermost first, as [`crate::KPath`]s
    /// list them); empty for an empty path.
    pub fn render(&self, path: &[u32]) -> String {
        let Some(&first) = path.first() else {
            return String::new();
        };
        let mut out = String::new();
        let alternative = self.alternative_of(first);
        self.write_on_path(alternative, path, &mut out);
        out
    }

    /// The alternative of its rule's right-hand side that contains `x` (the whole body
    /// if that is no alternation).
    fn alternative_of(&self, x: u32) -> u32 {
        let (mut below, mut a) = (x, x);
        while self.parent[a as usize] != u32::MAX {
            below = a;
            a = self.parent[a as usize];
        }
        match self.grammar.expr(ExprId::from_index(a as usize)) {
            Expr::Alt(_) if a != x => below,
            _ => a,
        }
    }

    /// Whether `inner` lies inside `outer`'s subtree of its right-hand side.
    fn contains(&self, outer: u32, inner: u32) -> bool {
        let mut x = inner;
        loop {
            if x == outer {
                return true;
            }
            x = self.parent[x as usize];
            if x == u32::MAX {
                return false;
            }
        }
    }

    /// Writes `e`, which contains `path[0]`, expanding the path below it.
    fn write_on_path(&self, e: u32, path: &[u32], out: &mut String) {
        let expr = self.grammar.expr(ExprId::from_index(e as usize));
        if e == path[0] {
            match expr {
                Expr::Ref(_) if path.len() > 1 => {
                    let alternative = self.alternative_of(path[1]);
                    self.write_on_path(alternative, &path[1..], out);
                }
                _ => self.write_plain(e, false, out),
            }
            return;
        }
        match expr {
            Expr::Alt(alts) => {
                let on = alts
                    .iter()
                    .map(|a| a.index() as u32)
                    .find(|&a| self.contains(a, path[0]))
                    .expect("the path runs through one alternative");
                self.write_on_path(on, path, out);
            }
            Expr::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    let item = item.index() as u32;
                    if self.contains(item, path[0]) {
                        self.write_on_path(item, path, out);
                    } else {
                        self.write_plain(item, true, out);
                    }
                }
            }
            Expr::Repeat(r) => self.write_on_path(r.item.index() as u32, path, out),
            Expr::Ref(_) | Expr::Literal(_) | Expr::Regex(_) => {
                unreachable!("a symbolic node contains only itself")
            }
        }
    }

    /// Writes `e` off the path, in spec syntax without brackets and quotes.
    fn write_plain(&self, e: u32, nested: bool, out: &mut String) {
        let id = ExprId::from_index(e as usize);
        match self.grammar.expr(id) {
            Expr::Alt(alts) => {
                out.push('(');
                for (i, a) in alts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    self.write_plain(a.index() as u32, false, out);
                }
                out.push(')');
            }
            Expr::Seq(items) if items.is_empty() => out.push_str("\"\""),
            Expr::Seq(items) => {
                if nested {
                    out.push('(');
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    self.write_plain(item.index() as u32, true, out);
                }
                if nested {
                    out.push(')');
                }
            }
            Expr::Repeat(_) => out.push_str(
                &self
                    .grammar
                    .display_expr(id)
                    .replace(['<', '>'], "")
                    .to_string(),
            ),
            Expr::Ref(s) => out.push_str(&self.grammar.rule(*s).name),
            Expr::Literal(bytes) => match std::str::from_utf8(bytes) {
                Ok(text)
                    if !text.is_empty()
                        && !text.chars().any(|c| c.is_whitespace() || c.is_control()) =>
                {
                    out.push_str(text)
                }
                _ => out.push_str(&quote_bytes(bytes)),
            },
            Expr::Regex(r) => {
                out.push_str("r\"");
                out.push_str(&r.pattern);
                out.push('"');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thicket_grammar::load_spec_text;

    const EXPR: &str = include_str!("../../../specs/expr.fan");

    /// The node of `rule`'s right-hand side displayed as `shown` (the `n`-th such).
    fn node(grammar: &Grammar, rule: &str, shown: &str, n: usize) -> u32 {
        let body = grammar.rule(grammar.symbol(rule).unwrap()).body;
        let mut found = Vec::new();
        let mut stack = vec![body];
        while let Some(e) = stack.pop() {
            if grammar.display_expr(e) == shown && grammar.expr(e).is_symbolic() {
                found.push(e.index() as u32);
            }
            stack.extend(grammar.expr(e).children());
        }
        found.sort_unstable();
        found[n]
    }

    #[test]
    fn the_papers_example_renders_as_in_section_5_2() {
        let grammar = load_spec_text("expr.fan", EXPR.as_bytes()).unwrap();
        // UnaryExpr (in MultExpr's product) -> AddExpr (in parentheses) -> "-".
        let unary = node(&grammar, "MultExpr", "<UnaryExpr>", 1);
        let add = node(&grammar, "UnaryExpr", "<AddExpr>", 0);
        let minus = node(&grammar, "AddExpr", "\"-\"", 0);
        let renderer = PatternRenderer::new(&grammar);
        assert_eq!(
            renderer.render(&[unary, add, minus]),
            "MultExpr (* | / | %) ( AddExpr - MultExpr )"
        );
        assert_eq!(
            renderer.render(&[unary, add]),
            "MultExpr (* | / | %) ( AddExpr )"
        );
        assert_eq!(renderer.render(&[minus]), "AddExpr - MultExpr");
    }
}
