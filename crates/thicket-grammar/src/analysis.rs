//! Static facts about a grammar: minimal derivation depth and minimal output length of
//! every rule and expression node, productivity, reachability, and the lint built on them.
//!
//! **Depth** counts rule expansions: a tree that is only the start rule deriving a literal
//! has depth 1; synthetic nodes (alternatives, groups, quantifiers) add nothing. The
//! generator's `--max-depth` uses the same measure.

use crate::diag::Diagnostic;
use crate::grammar::{Expr, ExprId, Grammar, SymbolId};

/// Marks "cannot be derived at all" in depth tables.
pub const UNBOUNDED: u32 = u32::MAX;

/// Minimal depths and lengths, computed once per grammar.
#[derive(Clone, Debug)]
pub struct Analysis {
    expr_min_depth: Vec<u32>,
    rule_min_depth: Vec<u32>,
    expr_min_len: Vec<u64>,
    rule_min_len: Vec<u64>,
    expr_min_steps: Vec<u64>,
    rule_min_steps: Vec<u64>,
    reachable: Vec<bool>,
    /// Rules whose references count as underivable ([`Analysis::avoiding`]).
    avoided: Vec<bool>,
}

impl Analysis {
    /// Computes the tables by fixpoint iteration over the rules.
    pub fn new(grammar: &Grammar) -> Analysis {
        Analysis::avoiding(grammar, &[])
    }

    /// The same tables for derivations that never use the rules in `avoid`: a
    /// reference to one of them cannot be derived ([`UNBOUNDED`] depth), so a
    /// generator built on these tables steers around them wherever the grammar allows
    /// (a constraint solver removing the instances of a quantifier).
    pub fn avoiding(grammar: &Grammar, avoid: &[SymbolId]) -> Analysis {
        let rules = grammar.rules().len();
        let exprs = grammar.expr_count();
        let mut avoided = vec![false; rules];
        for s in avoid {
            avoided[s.index()] = true;
        }
        let mut analysis = Analysis {
            expr_min_depth: vec![UNBOUNDED; exprs],
            rule_min_depth: vec![UNBOUNDED; rules],
            expr_min_len: vec![u64::MAX; exprs],
            rule_min_len: vec![u64::MAX; rules],
            expr_min_steps: vec![u64::MAX; exprs],
            rule_min_steps: vec![u64::MAX; rules],
            reachable: vec![false; rules],
            avoided,
        };
        // The nodes of each rule's body, children before parents, and for each rule the
        // rules whose bodies refer to it.
        let mut body_nodes: Vec<Vec<ExprId>> = Vec::with_capacity(rules);
        let mut users: Vec<Vec<SymbolId>> = vec![Vec::new(); rules];
        for symbol in grammar.symbols() {
            let mut nodes = Vec::new();
            let mut stack = vec![grammar.rule(symbol).body];
            while let Some(e) = stack.pop() {
                nodes.push(e);
                let expr = grammar.expr(e);
                if let Expr::Ref(s) = expr
                    && users[s.index()].last() != Some(&symbol)
                {
                    users[s.index()].push(symbol);
                }
                stack.extend_from_slice(expr.children());
            }
            nodes.sort_unstable();
            body_nodes.push(nodes);
        }
        // A worklist fixpoint: a rule is re-evaluated only when a rule it uses improved,
        // so a chain of n rules costs O(n) whatever order its rules are written in
        // (re-evaluating every rule until nothing changes took O(n²)).
        let mut queue: std::collections::VecDeque<SymbolId> = grammar.symbols().collect();
        let mut queued = vec![true; rules];
        while let Some(symbol) = queue.pop_front() {
            let i = symbol.index();
            queued[i] = false;
            for &id in &body_nodes[i] {
                let (depth, len, steps) = analysis.eval(grammar, id);
                analysis.expr_min_depth[id.index()] = depth;
                analysis.expr_min_len[id.index()] = len;
                analysis.expr_min_steps[id.index()] = steps;
            }
            let body = grammar.rule(symbol).body.index();
            let depth = analysis.expr_min_depth[body].saturating_add(1);
            let len = analysis.expr_min_len[body];
            let steps = analysis.expr_min_steps[body];
            if depth < analysis.rule_min_depth[i]
                || len < analysis.rule_min_len[i]
                || steps < analysis.rule_min_steps[i]
            {
                analysis.rule_min_depth[i] = analysis.rule_min_depth[i].min(depth);
                analysis.rule_min_len[i] = analysis.rule_min_len[i].min(len);
                analysis.rule_min_steps[i] = analysis.rule_min_steps[i].min(steps);
                for &user in &users[i] {
                    if !queued[user.index()] {
                        queued[user.index()] = true;
                        queue.push_back(user);
                    }
                }
            }
        }
        // Nodes outside every rule body (the root) see the final rule values.
        for id in grammar.expr_ids() {
            let (depth, len, steps) = analysis.eval(grammar, id);
            analysis.expr_min_depth[id.index()] = depth;
            analysis.expr_min_len[id.index()] = len;
            analysis.expr_min_steps[id.index()] = steps;
        }
        analysis.reachable = reachable_rules(grammar);
        analysis
    }

    fn eval(&self, grammar: &Grammar, id: ExprId) -> (u32, u64, u64) {
        let depth = |e: &ExprId| self.expr_min_depth[e.index()];
        let len = |e: &ExprId| self.expr_min_len[e.index()];
        let steps = |e: &ExprId| self.expr_min_steps[e.index()];
        match grammar.expr(id) {
            Expr::Alt(alts) => (
                alts.iter().map(depth).min().unwrap_or(UNBOUNDED),
                alts.iter().map(len).min().unwrap_or(u64::MAX),
                alts.iter().map(steps).min().unwrap_or(u64::MAX),
            ),
            Expr::Seq(items) => {
                let d = if items.iter().any(|i| depth(i) == UNBOUNDED) {
                    UNBOUNDED
                } else {
                    items.iter().map(depth).max().unwrap_or(0)
                };
                (
                    d,
                    items.iter().map(len).fold(0u64, u64::saturating_add),
                    items.iter().map(steps).fold(0u64, u64::saturating_add),
                )
            }
            Expr::Repeat(r) if r.min == 0 => (0, 0, 0),
            Expr::Repeat(r) => (
                depth(&r.item),
                len(&r.item).saturating_mul(u64::from(r.min)),
                steps(&r.item)
                    .saturating_add(1)
                    .saturating_mul(u64::from(r.min)),
            ),
            Expr::Ref(s) if self.avoided[s.index()] => (UNBOUNDED, u64::MAX, u64::MAX),
            Expr::Ref(s) => (
                self.rule_min_depth[s.index()],
                self.rule_min_len[s.index()],
                self.rule_min_steps[s.index()].saturating_add(1),
            ),
            Expr::Literal(bytes) => (0, bytes.len() as u64, 0),
            Expr::Regex(r) => match r.hir.properties().minimum_len() {
                Some(n) => (0, n as u64, 0),
                None => (UNBOUNDED, u64::MAX, u64::MAX),
            },
        }
    }

    /// Least number of rule expansions below (and including, for a `Ref`) this node
    /// that any derivation from it needs; [`UNBOUNDED`] if it cannot finish.
    pub fn expr_min_depth(&self, id: ExprId) -> u32 {
        self.expr_min_depth[id.index()]
    }

    /// Least depth of a tree rooted at this rule; [`UNBOUNDED`] if unproductive.
    pub fn rule_min_depth(&self, id: SymbolId) -> u32 {
        self.rule_min_depth[id.index()]
    }

    /// Least number of bytes any derivation from this node produces.
    pub fn expr_min_len(&self, id: ExprId) -> u64 {
        self.expr_min_len[id.index()]
    }

    /// Least number of bytes this rule derives; `u64::MAX` if unproductive.
    pub fn rule_min_len(&self, id: SymbolId) -> u64 {
        self.rule_min_len[id.index()]
    }

    /// Least number of generation steps any derivation from this node takes: rule
    /// expansions plus repetitions (each repeated item counts one), the measure of the
    /// generator's `--max-nodes`; `u64::MAX` if it cannot finish.
    pub fn expr_min_steps(&self, id: ExprId) -> u64 {
        self.expr_min_steps[id.index()]
    }

    /// Whether the rule can derive a finite string at all.
    pub fn is_productive(&self, id: SymbolId) -> bool {
        self.rule_min_depth[id.index()] != UNBOUNDED
    }

    /// Whether the rule can be reached from the start rule.
    pub fn is_reachable(&self, id: SymbolId) -> bool {
        self.reachable[id.index()]
    }

    /// Least depth of any tree of the whole grammar.
    pub fn grammar_min_depth(&self, grammar: &Grammar) -> u32 {
        self.rule_min_depth(grammar.start())
    }

    /// What `thicket lint` tells of a rule of `grammar` (this analysis' grammar).
    pub fn rule_summary(&self, grammar: &Grammar, id: SymbolId) -> RuleSummary {
        let rule = grammar.rule(id);
        RuleSummary {
            name: rule.name.clone(),
            alternatives: match grammar.expr(rule.body) {
                Expr::Alt(alts) => alts.len(),
                _ => 1,
            },
            min_depth: self.is_productive(id).then(|| self.rule_min_depth(id)),
            min_length: self.is_productive(id).then(|| self.rule_min_len(id)),
            reachable: self.is_reachable(id),
        }
    }
}

/// A rule's shape and static facts ([`Analysis::rule_summary`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSummary {
    /// The rule's name, without angle brackets.
    pub name: String,
    /// Alternatives of its body (1 if the body is not an alternation).
    pub alternatives: usize,
    /// Least depth of its trees; `None` if it derives no finite string.
    pub min_depth: Option<u32>,
    /// Least length of its strings; `None` if it derives no finite string.
    pub min_length: Option<u64>,
    /// Whether the start rule reaches it.
    pub reachable: bool,
}

fn reachable_rules(grammar: &Grammar) -> Vec<bool> {
    let mut reachable = vec![false; grammar.rules().len()];
    let mut stack = vec![grammar.start()];
    reachable[grammar.start().index()] = true;
    while let Some(symbol) = stack.pop() {
        let mut exprs = vec![grammar.rule(symbol).body];
        while let Some(e) = exprs.pop() {
            let expr = grammar.expr(e);
            if let Expr::Ref(s) = expr
                && !reachable[s.index()]
            {
                reachable[s.index()] = true;
                stack.push(*s);
            }
            exprs.extend_from_slice(expr.children());
        }
    }
    reachable
}

/// The first rule, in the order written, that `symbol`'s body refers to and that can
/// never finish.
fn first_unproductive_ref(
    grammar: &Grammar,
    analysis: &Analysis,
    symbol: SymbolId,
) -> Option<SymbolId> {
    let mut exprs = vec![grammar.rule(symbol).body];
    while let Some(e) = exprs.pop() {
        let expr = grammar.expr(e);
        if let Expr::Ref(s) = expr
            && !analysis.is_productive(*s)
        {
            return Some(*s);
        }
        exprs.extend(expr.children().iter().rev());
    }
    None
}

/// For each unproductive rule, the rule it is stuck on: following each rule's first
/// unproductive reference leads either into a cycle (then the rule where the walk enters
/// it) or to a rule with no unproductive reference (stuck on a regex that matches
/// nothing). Also says which rules lie on a cycle. Linear in the size of the grammar.
fn unproductive_causes(
    grammar: &Grammar,
    analysis: &Analysis,
) -> (Vec<Option<SymbolId>>, Vec<bool>) {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let rules = grammar.rules().len();
    let next: Vec<Option<SymbolId>> = grammar
        .symbols()
        .map(|s| {
            if analysis.is_productive(s) {
                None
            } else {
                first_unproductive_ref(grammar, analysis, s)
            }
        })
        .collect();
    let mut state = vec![NEW; rules];
    let mut cause: Vec<Option<SymbolId>> = vec![None; rules];
    let mut on_cycle = vec![false; rules];
    for from in grammar.symbols() {
        if analysis.is_productive(from) || state[from.index()] != NEW {
            continue;
        }
        let mut path = Vec::new();
        let mut current = Some(from);
        // Where the walk ends: a rule it already saw, or the rule with no next.
        let end = loop {
            let Some(s) = current else {
                break path.last().copied();
            };
            match state[s.index()] {
                NEW => {
                    state[s.index()] = ON_PATH;
                    path.push(s);
                    current = next[s.index()];
                }
                ON_PATH => {
                    // A new cycle: the path from `s` on.
                    let mut c = s;
                    loop {
                        on_cycle[c.index()] = true;
                        cause[c.index()] = Some(c);
                        c = next[c.index()].expect("cycles continue");
                        if c == s {
                            break;
                        }
                    }
                    break Some(s);
                }
                _ => {
                    break if on_cycle[s.index()] {
                        Some(s)
                    } else {
                        cause[s.index()]
                    };
                }
            }
        };
        for &s in &path {
            state[s.index()] = DONE;
            if !on_cycle[s.index()] {
                cause[s.index()] = end;
            }
        }
    }
    (cause, on_cycle)
}

/// Grammar checks beyond resolution: unproductive rules (error, naming the cycle that
/// cannot finish), regex terminals that match nothing (error) and rules unreachable from
/// the start rule (warning).
pub fn lint(grammar: &Grammar, analysis: &Analysis) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for id in grammar.expr_ids() {
        if let Expr::Regex(r) = grammar.expr(id)
            && r.hir.properties().minimum_len().is_none()
        {
            // A rule that is nothing but such a regex is named: its regex may be one
            // the grammar's reader wrote (a token of an ANTLR grammar that no input
            // has), which the user never saw.
            let whole = grammar.symbols().find(|&s| grammar.rule(s).body == id);
            let message = match whole {
                Some(symbol) => {
                    format!("rule {} matches no string", grammar.display_symbol(symbol))
                }
                None => format!("regex terminal r\"{}\" matches no string", r.pattern),
            };
            out.push(
                Diagnostic::error("empty-regex", message, grammar.expr_span(id))
                    .with_label_message("can never be generated"),
            );
        }
    }
    let (cause, on_cycle) = unproductive_causes(grammar, analysis);
    let mut cycle_reported = vec![false; grammar.rules().len()];
    for symbol in grammar.symbols() {
        if analysis.is_productive(symbol) {
            continue;
        }
        let rule = grammar.rule(symbol);
        if on_cycle[symbol.index()] {
            if cycle_reported[symbol.index()] {
                continue;
            }
            // The cycle through this rule: follow first unproductive references back to it.
            let mut cycle = vec![symbol];
            loop {
                let next =
                    first_unproductive_ref(grammar, analysis, *cycle.last().expect("non-empty"))
                        .expect("a rule on a cycle has a next rule");
                if next == symbol {
                    break;
                }
                cycle.push(next);
            }
            for &s in &cycle {
                cycle_reported[s.index()] = true;
            }
            let names: Vec<String> = cycle
                .iter()
                .chain(std::iter::once(&cycle[0]))
                .map(|&s| grammar.display_symbol(s))
                .collect();
            let mut d = Diagnostic::error(
                "unproductive",
                format!(
                    "rule <{}> can never finish: {}",
                    rule.name,
                    if cycle.len() == 1 {
                        format!("every alternative needs <{}> itself", rule.name)
                    } else {
                        format!(
                            "every alternative goes round the cycle {}",
                            names.join(" -> ")
                        )
                    }
                ),
                rule.name_span,
            )
            .with_label_message("no finite derivation");
            for &other in &cycle[1..] {
                d = d.with_secondary(grammar.rule(other).name_span, "part of the cycle");
            }
            out.push(d.with_note(
                "give one rule of the cycle an alternative without the cycle, e.g. a literal",
            ));
        } else {
            let message = match cause[symbol.index()] {
                Some(culprit) if culprit != symbol => format!(
                    "rule <{}> can never finish: it needs {}, which can never finish",
                    rule.name,
                    grammar.display_symbol(culprit)
                ),
                _ => format!(
                    "rule <{}> can never finish: every alternative needs a regex terminal that matches no string",
                    rule.name
                ),
            };
            out.push(
                Diagnostic::error("unproductive", message, rule.name_span)
                    .with_label_message("no finite derivation"),
            );
        }
    }
    for symbol in grammar.symbols() {
        if !analysis.is_reachable(symbol) {
            let rule = grammar.rule(symbol);
            out.push(
                Diagnostic::warning(
                    "unreachable",
                    format!(
                        "rule <{}> cannot be reached from the start rule {}",
                        rule.name,
                        grammar.display_symbol(grammar.start())
                    ),
                    rule.name_span,
                )
                .with_label_message("never used"),
            );
        }
    }
    large_minimum(grammar, analysis, &mut out);
    out
}

/// Minimal output beyond which `lint` warns (1 MiB): inputs this large are rarely meant,
/// and `generate` refuses any input over `--max-size` (16 MiB by default).
pub const LARGE_MIN_LEN: u64 = 1 << 20;

/// Minimal generation steps (rule expansions and repetitions) beyond which `lint` warns:
/// `generate` refuses any input needing more than `--max-nodes` (100,000 by default).
pub const LARGE_MIN_STEPS: u64 = 1_000_000;

/// Warns at each part of the grammar where a huge minimal output or step count arises
/// (a node over the threshold whose children are all under it), such as `"a"{4000000000}`
/// or `r"a{1000}{1000}{1000}"`.
fn large_minimum(grammar: &Grammar, analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    for id in grammar.expr_ids() {
        let expr = grammar.expr(id);
        if matches!(expr, Expr::Ref(_) | Expr::Alt(_)) {
            continue;
        }
        let len = analysis.expr_min_len(id);
        let steps = analysis.expr_min_steps(id);
        let children = expr.children();
        let len_origin = len > LARGE_MIN_LEN
            && len != u64::MAX
            && children
                .iter()
                .all(|&c| analysis.expr_min_len(c) <= LARGE_MIN_LEN);
        let steps_origin = steps > LARGE_MIN_STEPS
            && steps != u64::MAX
            && children
                .iter()
                .all(|&c| analysis.expr_min_steps(c) <= LARGE_MIN_STEPS);
        if len_origin {
            out.push(
                Diagnostic::warning(
                    "large-minimum",
                    format!(
                        "every text derived here is at least {len} bytes (over the 1 MiB lint threshold)"
                    ),
                    grammar.expr_span(id),
                )
                .with_label_message(format!("at least {len} bytes"))
                .with_note(
                    "`thicket generate` refuses inputs over --max-size (default 16 MiB); \
                     lower the repetition count unless inputs this large are meant",
                ),
            );
        } else if steps_origin {
            out.push(
                Diagnostic::warning(
                    "large-minimum",
                    format!(
                        "every derivation here takes at least {steps} rule expansions and repetitions (over the lint threshold of 1,000,000)"
                    ),
                    grammar.expr_span(id),
                )
                .with_label_message(format!("at least {steps} steps"))
                .with_note(
                    "`thicket generate` refuses inputs needing more than --max-nodes steps (default 100000)",
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_spec_text;

    #[test]
    fn min_depth_and_length_follow_the_cheapest_alternative() {
        let g = load_spec_text(
            "t",
            b"<start> ::= <a> <b>\n<a> ::= <a> \"x\" | \"yy\"\n<b> ::= <b>? \"z\"{3}",
        )
        .unwrap();
        let a = Analysis::new(&g);
        let sym = |n| g.symbol(n).unwrap();
        assert_eq!(a.rule_min_depth(sym("a")), 1);
        assert_eq!(a.rule_min_depth(sym("start")), 2);
        assert_eq!(a.rule_min_len(sym("a")), 2);
        assert_eq!(a.rule_min_len(sym("b")), 3);
        assert_eq!(a.rule_min_len(sym("start")), 5);
    }

    #[test]
    fn unproductive_cycles_are_named() {
        let g = load_spec_text(
            "t",
            b"<start> ::= <a> | \"ok\"\n<a> ::= \"(\" <b>\n<b> ::= <a> \")\"",
        )
        .unwrap();
        let a = Analysis::new(&g);
        let diags = lint(&g, &a);
        let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
        assert_eq!(errors.len(), 1, "{diags:?}");
        assert!(
            errors[0].message.contains("<a> -> <b> -> <a>"),
            "{}",
            errors[0].message
        );
        assert!(a.is_productive(g.start()));
    }

    #[test]
    fn a_long_chain_written_start_first_is_analysed_in_one_sweep() {
        // Each rule's depth comes from the rule after it: re-evaluating every rule until
        // nothing changes would take one round per rule.
        let n = 20_000;
        let mut spec = String::from("<start> ::= <r0>\n");
        for i in 0..n - 1 {
            spec.push_str(&format!("<r{i}> ::= <r{}>\n", i + 1));
        }
        spec.push_str(&format!("<r{}> ::= \"x\"\n", n - 1));
        let g = load_spec_text("chain.fan", spec.as_bytes()).unwrap();
        let a = Analysis::new(&g);
        assert_eq!(a.grammar_min_depth(&g), n + 1);
        assert_eq!(a.rule_min_len(g.start()), 1);
        assert!(lint(&g, &a).is_empty());
    }

    #[test]
    fn rules_stuck_behind_a_cycle_or_an_empty_regex_name_the_culprit() {
        let g = load_spec_text(
            "t",
            b"<start> ::= <a>\n<a> ::= <b>\n<b> ::= <c> \"x\"\n<c> ::= <b>\n<d> ::= r\"[^\\s\\S]\"\n<e> ::= <d> | <e>",
        )
        .unwrap();
        let diags = lint(&g, &Analysis::new(&g));
        let errors: Vec<_> = diags
            .iter()
            .filter(|d| d.code == "unproductive")
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            errors,
            vec![
                "rule <start> can never finish: it needs <b>, which can never finish",
                "rule <a> can never finish: it needs <b>, which can never finish",
                "rule <b> can never finish: every alternative goes round the cycle <b> -> <c> -> <b>",
                "rule <d> can never finish: every alternative needs a regex terminal that matches no string",
                "rule <e> can never finish: it needs <d>, which can never finish",
            ]
        );
        assert!(diags.iter().any(|d| d.code == "empty-regex"));
    }

    #[test]
    fn a_long_unproductive_chain_is_reported_in_linear_time() {
        let n = 20_000;
        let mut spec = String::from("<start> ::= <r0>\n");
        for i in 0..n {
            spec.push_str(&format!("<r{i}> ::= <r{}>\n", i + 1));
        }
        spec.push_str(&format!("<r{n}> ::= <r{n}>\n"));
        let g = load_spec_text("chain.fan", spec.as_bytes()).unwrap();
        let diags = lint(&g, &Analysis::new(&g));
        assert_eq!(diags.len(), n + 2);
        assert!(
            diags[0].message.contains(&format!("it needs <r{n}>")),
            "{}",
            diags[0].message
        );
    }

    #[test]
    fn unreachable_rules_are_warnings() {
        let g = load_spec_text("t", b"<start> ::= \"x\"\n<lonely> ::= \"y\"").unwrap();
        let diags = lint(&g, &Analysis::new(&g));
        assert_eq!(diags.len(), 1);
        assert!(!diags[0].is_error());
        assert_eq!(diags[0].code, "unreachable");
    }

    #[test]
    fn rule_summaries_tell_shape_depth_length_and_reach() {
        let g = crate::load_spec_text(
            "t.bnf",
            b"<start> ::= <a> | \"xy\"\n<a> ::= \"z\" <a> | \"q\"\n<loop> ::= <loop>\n",
        )
        .unwrap();
        let analysis = Analysis::new(&g);
        let summary = |name: &str| {
            let id = g.symbols().find(|&s| g.rule(s).name == name).unwrap();
            analysis.rule_summary(&g, id)
        };
        assert_eq!(
            summary("start"),
            RuleSummary {
                name: "start".into(),
                alternatives: 2,
                min_depth: Some(1),
                min_length: Some(1),
                reachable: true,
            }
        );
        let unproductive = summary("loop");
        assert_eq!(
            (unproductive.min_depth, unproductive.min_length),
            (None, None)
        );
        assert!(!unproductive.reachable);
    }
}
