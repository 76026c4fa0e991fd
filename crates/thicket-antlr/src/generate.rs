//! Drawing inputs of an ANTLR grammar: generated from the byte grammar, then made to
//! lex as their trees intend and checked by the exact reading. Shared by `thicket
//! generate` and the Python module, so that input `i` of a seed is the same in both.

use crate::{AntlrSpec, Checker, RuleRole, rule_role};
use regex_syntax::hir::{Class, Hir, HirKind};
use thicket_gen::{GenRng, GenStats, Generator, Weights};
use thicket_grammar::{Analysis, Expr, ExprId, Grammar, SymbolId};
use thicket_tree::{DerivationTree, TreeBuilder};

/// Percent of characters drawn from negated sets and `.` of ANTLR grammars that are
/// printable ASCII (the rest any member of the set): give it to the generator's
/// `set_printable_ascii_share`, so that such text looks like text.
pub const PRINTABLE_PERCENT: u8 = 95;

/// The chance that a repetition takes one more item than it has (past its minimum):
/// counts are geometric, as in Grammarinator, so that lists, strings and runs of
/// whitespace are mostly short and now and then long (uniform counts up to the
/// repetition limit padded css3's inputs with whitespace tokens to kilobytes).
pub const REPEAT_CONTINUE: f64 = 0.5;

/// The share of hidden text drawn from the hidden rules that can start with
/// whitespace (rather than comments, byte order marks, directives).
pub const WHITESPACE_SHARE: f64 = 0.9;

/// How much likelier an alternative of a parser rule is than one that begins with a
/// semantic predicate: thicket assumes predicates true but cannot tell where the
/// target code would say so (`eos : ';' | {lineTerminatorAhead()}? ;` ends a
/// JavaScript statement without `;` only before a line break or `}`), so the
/// alternatives valid whatever it says are taken mostly.
pub const GUARDED_ODDS: f64 = 10.0;

/// Longest repetition count a weight row covers (the generator's limits cut sooner).
const ROW_LEN: u32 = 64;

/// Draws of a whole input before the last one is kept though the exact reading
/// rejects it.
const DRAWS: usize = 16;

/// Rounds of regenerating tokens the lexer reads as another type.
const RESPELLS: usize = 8;

/// Makes inputs of an ANTLR grammar with a generator of its byte grammar.
pub struct InputMaker<'a> {
    antlr: &'a AntlrSpec,
    checker: Checker<'a>,
    /// How likely each choice is ([`generation_weights`]).
    weights: Weights,
}

/// One input drawn.
pub struct Drawn {
    /// The input, separated where the lexer would merge tokens.
    pub bytes: Vec<u8>,
    /// Its tree in the byte grammar before separation (its text may differ from
    /// `bytes` where separators were put in).
    pub tree: DerivationTree,
    /// Whether the exact reading accepts `bytes` (else every draw was rejected and
    /// the last is kept).
    pub accepted: bool,
    /// What generating the kept draw took.
    pub stats: GenStats,
}

impl<'a> InputMaker<'a> {
    /// A maker for `antlr`'s inputs (its hidden-text probability as set now).
    pub fn new(antlr: &'a AntlrSpec) -> InputMaker<'a> {
        InputMaker {
            antlr,
            checker: antlr.checker(),
            weights: generation_weights(antlr),
        }
    }

    /// A maker for `antlr`'s inputs with hidden text before a token with probability
    /// `p` (see [`AntlrSpec::set_hidden_probability`]) whatever the spec's is now: for
    /// callers that share one read grammar between several probabilities.
    pub fn with_hidden_probability(antlr: &'a AntlrSpec, p: f64) -> InputMaker<'a> {
        InputMaker {
            antlr,
            checker: antlr.checker(),
            weights: weights_with_hidden(antlr, Some(p)),
        }
    }

    /// The default size target of this maker's inputs (see [`target_size`]).
    pub fn target_size(&self) -> u32 {
        target_size_by(self.antlr, &self.weights)
    }

    /// An input drawn from `rng` by `generator` (of `antlr.spec.grammar`): its tokens
    /// that the lexer reads as another type (an identifier generated as a keyword)
    /// generated again from the same stream (up to 8 rounds), separated where the
    /// lexer would merge tokens (tokens that merge whatever separates them generated
    /// again, up to 8 rounds), and kept if the exact reading (lexer, then parser
    /// rules) accepts it and it is not blank (empty or whitespace only); otherwise
    /// drawn again from the stream (up to 16 times), a blank accepted draw kept if no
    /// other is accepted, else the last draw.
    pub fn draw(&self, generator: &Generator<'_>, rng: &mut GenRng) -> Drawn {
        let mut last = None;
        let mut blank_accepted = None;
        for _ in 0..DRAWS {
            let (tree, stats) = generator.generate_tree_weighted(rng, &self.weights);
            // A token generated as text another lexer rule wins (an identifier `if`) is
            // generated again from the same stream, rather than the whole input.
            let mut tree = self.antlr.respell(tree, RESPELLS, &mut |expr, builder| {
                generator.expand(expr, 0, rng, builder);
            });
            // Tokens that merge whatever hidden text is put between them (a string
            // ending in an escape of its own end, then another string) are generated
            // again too, with the boundaries a separator fixes kept fixed.
            // A merge the grammar allows (VB6's ambiguousIdentifier reads `ab` and
            // `cd` as one identifier) leaves the input valid: it is kept as it is.
            let mut rounds = 0;
            let (bytes, accepted) = loop {
                match self.antlr.separate(&tree) {
                    Ok(bytes) => {
                        let accepted = self.checker.accepts(&bytes).is_ok();
                        break (bytes, accepted);
                    }
                    Err(merged) => {
                        let accepted = self.checker.accepts(&merged.bytes).is_ok();
                        if accepted || rounds == RESPELLS {
                            break (merged.bytes, accepted);
                        }
                        rounds += 1;
                        let fill = &mut |expr, builder: &mut TreeBuilder| {
                            generator.expand(expr, 0, rng, builder);
                        };
                        tree = self.antlr.regenerate(&tree, &merged.tokens, fill);
                        tree = self.antlr.respell(tree, RESPELLS, fill);
                    }
                }
            };
            let drawn = Drawn {
                bytes,
                tree,
                accepted,
                stats,
            };
            // An input of nothing (or only blanks) tests one case; where the start rule
            // may be empty (`json5 : value? EOF`) half the draws would be it.
            let blank = drawn.bytes.iter().all(u8::is_ascii_whitespace);
            match (accepted, blank) {
                (true, false) => return drawn,
                (true, true) => {
                    blank_accepted.get_or_insert(drawn);
                }
                (false, _) => last = Some(drawn),
            }
        }
        blank_accepted.or(last).expect("at least one draw")
    }

    /// Input `index` of `seed`: [`InputMaker::draw`] from the seed's stream `index`,
    /// as `thicket generate --seed SEED` writes it.
    pub fn input(&self, generator: &Generator<'_>, seed: u64, index: u64) -> Drawn {
        self.draw(generator, &mut Generator::rng_for(seed, index))
    }

    /// The spec this maker draws inputs of.
    pub fn spec(&self) -> &'a AntlrSpec {
        self.antlr
    }

    /// The exact reading this maker checks inputs with.
    pub fn checker(&self) -> &Checker<'a> {
        &self.checker
    }
}

/// The weights ANTLR-aware generation chooses by, so that inputs look like what a
/// person writes (the limits and the sized policy of the generator still apply):
///
/// - hidden text before a token as the byte grammar's default probabilities say
///   ([`AntlrSpec::set_hidden_probability`]), and when drawn, from a rule that can
///   start with whitespace [`WHITESPACE_SHARE`] of the time (comments, byte order
///   marks and directives share the rest), a hidden rule that can only start outside
///   printable ASCII and whitespace (a byte order mark, which real parsers take only
///   at the start of a file) by the share of such characters that sets and `.` get
///   ([`PRINTABLE_PERCENT`]);
/// - the count of every repetition geometric past its minimum ([`REPEAT_CONTINUE`]),
///   including a repetition whose item derives its own rule again (`value (','
///   value)*`): the sized policy stops recursion past its target, but such a count is
///   still drawn from its row there, its items closing off, so that a small input's
///   list can have a second item (with the minimum, a JSON input of 16 bytes never
///   had one);
/// - an alternative of a parser rule that begins with a semantic predicate
///   [`GUARDED_ODDS`] times less likely than the others;
/// - in lexer rules, each alternative weighted by one over the square of its shortest
///   text (a string's plain character over an escape, `\n` over `\U0010FFFF`, and an
///   identifier's letter well over a `\uXXXX` escape, whose random code point is
///   seldom a letter: JavaScript rejected one ecmascript input in five for it), and
///   an alternative that can only start with a character outside printable ASCII (a
///   zero-width joiner, a combining mark) by the share of such characters that sets
///   and `.` get ([`PRINTABLE_PERCENT`]).
pub fn generation_weights(antlr: &AntlrSpec) -> Weights {
    weights_with_hidden(antlr, None)
}

/// [`generation_weights`], with hidden text before a token with probability `hidden`
/// if given rather than the spec's (set before the rules that zero some hidden
/// alternatives, which then still win).
fn weights_with_hidden(antlr: &AntlrSpec, hidden: Option<f64>) -> Weights {
    let grammar = &antlr.spec.grammar;
    let analysis = Analysis::new(grammar);
    let mut weights = Weights::from_spec(grammar).unwrap_or_else(|| Weights::uniform(grammar));
    if let Some(p) = hidden {
        for (alternative, probability) in antlr.hidden_choices(p) {
            weights.set_alternative(alternative, probability);
        }
    }
    for (id, r) in repetitions(grammar) {
        let upper = r.min.saturating_add(ROW_LEN).min(r.max.unwrap_or(u32::MAX));
        // Each count past the minimum goes on with REPEAT_CONTINUE, up to the maximum:
        // `x?` takes its item half the time.
        let row = (0..=upper)
            .map(|count| match count.checked_sub(r.min) {
                None => 0.0,
                Some(extra) if count == upper => REPEAT_CONTINUE.powi(extra as i32),
                Some(extra) => REPEAT_CONTINUE.powi(extra as i32) * (1.0 - REPEAT_CONTINUE),
            })
            .collect();
        weights.set_repetition(id, row);
    }
    for guarded in &antlr.guarded {
        if let Some(symbol) = grammar.symbol(&guarded.rule)
            && let Expr::Alt(alts) = grammar.expr(grammar.rule(symbol).body)
            && alts.len() == guarded.of
        {
            let alt = alts[guarded.index];
            weights.set_alternative(alt, weights.alternative(alt) / GUARDED_ODDS);
        }
    }
    let printable = |c: char| (' '..='~').contains(&c);
    let whitespace = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c');
    let other_share = f64::from(100 - PRINTABLE_PERCENT.min(100)) / 100.0;
    for symbol in grammar.symbols() {
        let role = rule_role(grammar, symbol);
        if matches!(role, RuleRole::Parser | RuleRole::Root) {
            continue;
        }
        let body = grammar.rule(symbol).body;
        let mut stack = vec![body];
        while let Some(id) = stack.pop() {
            let expr = grammar.expr(id);
            if matches!(expr, Expr::Ref(_)) {
                continue;
            }
            stack.extend_from_slice(expr.children());
            let Expr::Alt(alts) = expr else { continue };
            // The top alternation of hidden text is nothing / one / several (its
            // weights are the hidden probability); the others choose among the hidden
            // rules.
            if role == RuleRole::Hidden && id != body {
                let spaces: Vec<bool> = alts
                    .iter()
                    .map(|&a| may_start_with(grammar, &analysis, a, &whitespace))
                    .collect();
                let n = spaces.iter().filter(|&&s| s).count();
                for (&alt, space) in alts.iter().zip(spaces) {
                    let share = if n == 0 || n == alts.len() {
                        1.0
                    } else if space {
                        WHITESPACE_SHARE / n as f64
                    } else {
                        (1.0 - WHITESPACE_SHARE) / (alts.len() - n) as f64
                    };
                    // Hidden text that can only start outside printable ASCII (a byte
                    // order mark, which a real parser takes only at the start) gets the
                    // share such characters get in sets and `.`.
                    let plain =
                        may_start_with(grammar, &analysis, alt, &|c| printable(c) || whitespace(c));
                    weights.set_alternative(alt, if plain { share } else { share * other_share });
                }
            } else if role == RuleRole::Lexer {
                for &alt in alts.iter() {
                    let len = analysis.expr_min_len(alt).max(1) as f64;
                    let ascii = may_start_with(grammar, &analysis, alt, &printable);
                    weights
                        .set_alternative(alt, if ascii { 1.0 } else { other_share } / (len * len));
                }
            }
        }
    }
    if let Some(offside) = &antlr.offside {
        never_indent(grammar, &analysis, offside, &mut weights);
    }
    weights
}

/// Under the indentation idiom, generation writes no indentation (not done: `INDENT`
/// and `DEDENT` are empty in the byte grammar), so it keeps to what it made before the
/// idiom was read: the alternatives that need `INDENT` are never taken, a line end
/// is never hidden text (it would end a statement in the middle), and neither is
/// hidden text that starts with a blank (before a line's first token it would indent
/// the line; separators between tokens come from [`AntlrSpec::separate`] anyway).
fn never_indent(
    grammar: &Grammar,
    analysis: &Analysis,
    offside: &crate::offside::Offside,
    weights: &mut Weights,
) {
    let blank = |c: char| matches!(c, ' ' | '\t' | '\x0c');
    let indent = grammar.symbol(&offside.indent);
    let line_end = grammar.symbol(&offside.line_end);
    // Whether every text of `id` passes through `symbol`.
    fn needs(grammar: &Grammar, id: ExprId, symbol: SymbolId) -> bool {
        match grammar.expr(id) {
            Expr::Ref(s) => *s == symbol,
            Expr::Seq(items) => items.iter().any(|&i| needs(grammar, i, symbol)),
            Expr::Alt(items) => items.iter().all(|&i| needs(grammar, i, symbol)),
            Expr::Repeat(r) => r.min > 0 && needs(grammar, r.item, symbol),
            Expr::Literal(_) | Expr::Regex(_) => false,
        }
    }
    for symbol in grammar.symbols() {
        // A line end stays a token; it is avoided as hidden text only.
        let avoid = match rule_role(grammar, symbol) {
            RuleRole::Parser | RuleRole::Root => indent,
            RuleRole::Hidden => line_end,
            RuleRole::Lexer => None,
        };
        let Some(avoid) = avoid else { continue };
        let hidden = rule_role(grammar, symbol) == RuleRole::Hidden;
        let body = grammar.rule(symbol).body;
        let mut stack = vec![body];
        while let Some(id) = stack.pop() {
            let expr = grammar.expr(id);
            stack.extend_from_slice(expr.children());
            if let Expr::Alt(alts) = expr {
                for (i, &alt) in alts.iter().enumerate() {
                    // (Not the top alternation's first alternative: no hidden text.)
                    let starts_blank = hidden
                        && (id != body || i > 0)
                        && may_start_with(grammar, analysis, alt, &blank);
                    if starts_blank || needs(grammar, alt, avoid) {
                        weights.set_alternative(alt, 0.0);
                    }
                }
            }
        }
        // Hidden text of which nothing is left: none at all.
        if hidden
            && let Expr::Alt(top) = grammar.expr(body)
            && let Some(Expr::Alt(choice)) = top.get(1).map(|&one| grammar.expr(one))
            && choice.iter().all(|&a| weights.alternative(a) <= 0.0)
        {
            for &more in &top[1..] {
                weights.set_alternative(more, 0.0);
            }
        }
    }
}

/// The default size target of an ANTLR grammar's sized generation
/// ([`thicket_gen::ChoicePolicy::Sized`], `thicket generate`'s `--target-size`): a
/// quarter of the sum of the smallest lengths of the parser rules the start rule
/// reaches (each rule once), at most [`thicket_gen::DEFAULT_TARGET_SIZE`]; 0 (uniform
/// choices) for a grammar whose rules are that short. The sum is about the size of an
/// input that holds one of each of the grammar's phrases; a quarter of it keeps a
/// grammar of a few rules small, as a person writes to try each construct (JSON's
/// five rules, 10 bytes: a target of 2, a mean of 8 bytes, half of the inputs
/// distinct, where the default made 70 bytes of nesting), while a grammar of
/// many rules keeps the default (twice it made some grammars' inputs three times as
/// large and their generation and judging several times slower). That target is then
/// kept only where steering toward it pays
/// ([`thicket_gen::ChoicePolicy::sized_unless_uniform_suffices`], with the generation
/// weights and printable share, blank draws drawn again as [`InputMaker::draw`] does,
/// not checked): else 0, uniform choices (css3, graphql and csv of
/// grammars-v4; css3's sized inputs were no larger, but reached its declarations'
/// values seldom).
pub fn target_size(antlr: &AntlrSpec) -> u32 {
    target_size_by(antlr, &generation_weights(antlr))
}

/// [`target_size`] for inputs drawn by `weights`.
fn target_size_by(antlr: &AntlrSpec, weights: &Weights) -> u32 {
    let grammar = &antlr.spec.grammar;
    let analysis = Analysis::new(grammar);
    let mut seen = vec![false; grammar.symbols().count()];
    let mut stack = vec![grammar.start()];
    let mut sum = 0u64;
    while let Some(symbol) = stack.pop() {
        if std::mem::replace(&mut seen[symbol.index()], true) {
            continue;
        }
        let body = grammar.rule(symbol).body;
        if rule_role(grammar, symbol) == RuleRole::Parser {
            sum = sum.saturating_add(analysis.expr_min_len(body));
        }
        thicket_grammar::reach::refs_in(grammar, body, |s| {
            if matches!(rule_role(grammar, s), RuleRole::Parser | RuleRole::Root) {
                stack.push(s);
            }
        });
    }
    let bytes = u32::try_from(sum / 4)
        .unwrap_or(u32::MAX)
        .min(thicket_gen::DEFAULT_TARGET_SIZE);
    let policy = thicket_gen::ChoicePolicy::sized_unless_uniform_suffices(
        grammar,
        thicket_gen::GenConfig::default(),
        bytes,
        |generator| generator.set_printable_ascii_share(PRINTABLE_PERCENT),
        |generator, rng, out| {
            // A blank draw is drawn again, as InputMaker::draw does (json5's start
            // rule may be empty: half the draws), but rejected ones are not: with the
            // exact reading's check and redraws, the samples made css3's
            // `thicket generate -n 10` 19 times slower, to the same decisions.
            let start = out.len();
            let mut stats = generator.generate_bytes_weighted(rng, out, weights);
            for _ in 1..DRAWS {
                if !out[start..].iter().all(u8::is_ascii_whitespace) {
                    break;
                }
                out.truncate(start);
                stats = generator.generate_bytes_weighted(rng, out, weights);
            }
            stats
        },
    );
    match policy {
        thicket_gen::ChoicePolicy::Sized { bytes } => bytes,
        thicket_gen::ChoicePolicy::Uniform => 0,
    }
}

/// Every repetition of the grammar, with its bounds.
fn repetitions(grammar: &Grammar) -> Vec<(ExprId, thicket_grammar::Repeat)> {
    grammar
        .expr_ids()
        .filter_map(|id| match grammar.expr(id) {
            Expr::Repeat(r) => Some((id, *r)),
            _ => None,
        })
        .collect()
}

/// Whether some text of `expr` may start with a character `ok` accepts (an
/// over-approximation: where a regex is not a plain class or literal, yes).
fn may_start_with(
    grammar: &Grammar,
    analysis: &Analysis,
    expr: ExprId,
    ok: &dyn Fn(char) -> bool,
) -> bool {
    let mut seen = vec![false; grammar.expr_count()];
    starts(grammar, analysis, expr, ok, &mut seen)
}

fn starts(
    grammar: &Grammar,
    analysis: &Analysis,
    expr: ExprId,
    ok: &dyn Fn(char) -> bool,
    seen: &mut [bool],
) -> bool {
    if std::mem::replace(&mut seen[expr.index()], true) {
        return false;
    }
    match grammar.expr(expr) {
        Expr::Literal(bytes) => first_char(bytes).is_none_or(ok),
        Expr::Regex(regex) => hir_may_start_with(&regex.hir, ok),
        Expr::Ref(symbol) => starts(grammar, analysis, grammar.rule(*symbol).body, ok, seen),
        Expr::Alt(alts) => alts.iter().any(|&a| starts(grammar, analysis, a, ok, seen)),
        Expr::Repeat(r) => starts(grammar, analysis, r.item, ok, seen),
        Expr::Seq(items) => {
            for &item in items.iter() {
                if starts(grammar, analysis, item, ok, seen) {
                    return true;
                }
                if analysis.expr_min_len(item) > 0 {
                    return false;
                }
            }
            false
        }
    }
}

/// The first character of `bytes` (a byte past ASCII that begins no UTF-8 character
/// reads as itself, as the generator writes such bytes).
fn first_char(bytes: &[u8]) -> Option<char> {
    let head = &bytes[..bytes.len().min(4)];
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    text.chars()
        .next()
        .or_else(|| bytes.first().map(|&b| char::from(b)))
}

fn hir_may_start_with(hir: &Hir, ok: &dyn Fn(char) -> bool) -> bool {
    match hir.kind() {
        HirKind::Literal(literal) => first_char(&literal.0).is_none_or(ok),
        HirKind::Class(Class::Unicode(class)) => class.ranges().iter().any(|r| {
            // Every ASCII member is tried; past ASCII, one member stands for the rest.
            let ascii_end = r.end().min('\u{7f}');
            (r.start()..=ascii_end).any(ok) || (r.end() > '\u{7f}' && ok(r.start().max('\u{80}')))
        }),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .any(|r| (r.start()..=r.end()).any(|b| ok(char::from(b)))),
        HirKind::Capture(capture) => hir_may_start_with(&capture.sub, ok),
        HirKind::Concat(items) => items.first().is_none_or(|h| hir_may_start_with(h, ok)),
        HirKind::Alternation(items) => items.iter().any(|h| hir_may_start_with(h, ok)),
        HirKind::Empty | HirKind::Look(_) | HirKind::Repetition(_) => true,
    }
}
