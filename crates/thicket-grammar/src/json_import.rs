//! Import of grammars written as JSON dictionaries, the form used by fuzzingbook and ISLa:
//! `{"<start>": ["<expr>"], "<expr>": ["<term> + <expr>", "<term>"], ...}`.
//!
//! In an alternative, every `<name>` without spaces or angle brackets inside is a
//! reference (fuzzingbook's `RE_NONTERMINAL = <[^<> ]*>`); all other text is literal.
//! An alternative may also be `["text", {options}]` (fuzzingbook `opts`): `prob` (a
//! number in [0, 1]) becomes the alternative's default probability
//! ([`Grammar::default_probabilities`](crate::Grammar::default_probabilities)); other
//! options are ignored.

use crate::ast::{AstExpr, AstExprKind, AstRule, SpecAst};
use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};
use serde_json::Value;

/// A fuzzingbook `prob` option: rule name, index of the alternative, probability.
pub type AltProbability = (String, usize, f64);

/// Parses a JSON grammar, with the `prob` options of its alternatives. Spans point at
/// the rule's key in the JSON text.
pub fn parse_json_grammar_with_probabilities(
    source: &SourceFile,
) -> Result<(SpecAst, Vec<AltProbability>), Box<Diagnostic>> {
    let mut probabilities = Vec::new();
    let value: Value = serde_json::from_str(source.text()).map_err(|e| {
        let offset = source.offset_of(e.line(), e.column().max(1));
        Box::new(
            Diagnostic::error(
                "bad-json",
                format!("not a JSON grammar: {e}"),
                Span::new(offset, offset + 1),
            )
            .with_label_message("here"),
        )
    })?;
    let Value::Object(map) = value else {
        return Err(Box::new(
            Diagnostic::error(
                "bad-json",
                "a JSON grammar must be an object mapping \"<rule>\" to a list of alternatives",
                Span::new(0, source.text().len().min(1)),
            )
            .with_note("e.g. {\"<start>\": [\"<digit>\"], \"<digit>\": [\"0\", \"1\"]}"),
        ));
    };
    let mut ast = SpecAst::default();
    let mut search_from = 0;
    for (key, alternatives) in &map {
        let quoted = serde_json::to_string(key).expect("string serializes");
        // The key is the next occurrence of the quoted name that a `:` follows (the same
        // text may occur before as an alternative, e.g. `"<a>": ["<b>"], "<b>": ...`).
        let text = source.text();
        let at = text[search_from..]
            .match_indices(&quoted)
            .map(|(i, _)| search_from + i)
            .find(|&i| text[i + quoted.len()..].trim_start().starts_with(':'))
            .unwrap_or(search_from);
        search_from = at;
        let span = Span::new(at, at + quoted.len());
        let name = key
            .strip_prefix('<')
            .and_then(|k| k.strip_suffix('>'))
            .filter(|k| !k.is_empty() && k.chars().all(crate::lexer::is_name_char));
        let Some(name) = name else {
            return Err(Box::new(
                Diagnostic::error(
                    "bad-json",
                    format!("rule name {quoted} is not of the form \"<name>\""),
                    span,
                )
                .with_label_message("rule names look like \"<name>\""),
            ));
        };
        let Value::Array(alternatives) = alternatives else {
            return Err(Box::new(
                Diagnostic::error(
                    "bad-json",
                    format!("the alternatives of {quoted} must be a list of strings"),
                    span,
                )
                .with_label_message("this rule"),
            ));
        };
        let mut alts = Vec::new();
        for (index, alternative) in alternatives.iter().enumerate() {
            let text = match alternative {
                Value::String(s) => s,
                Value::Array(pair) if matches!(pair.first(), Some(Value::String(_))) => {
                    if let Some(prob) = pair.get(1).and_then(|o| o.get("prob")) {
                        let Some(p) = prob.as_f64().filter(|p| (0.0..=1.0).contains(p)) else {
                            return Err(Box::new(
                                Diagnostic::error(
                                    "bad-json",
                                    format!(
                                        "alternative {} of {quoted} has \"prob\": {prob}, not a number between 0 and 1",
                                        index + 1
                                    ),
                                    span,
                                )
                                .with_label_message("in this rule"),
                            ));
                        };
                        probabilities.push((name.to_string(), index, p));
                    }
                    pair[0].as_str().expect("checked string")
                }
                other => {
                    return Err(Box::new(
                        Diagnostic::error(
                            "bad-json",
                            format!("an alternative of {quoted} is {other}, not a string"),
                            span,
                        )
                        .with_label_message("in this rule")
                        .with_note("alternatives are strings, or [\"text\", {options}] pairs"),
                    ));
                }
            };
            alts.push(split_alternative(text, span));
        }
        let body = if alts.len() == 1 {
            alts.pop().expect("one")
        } else if alts.is_empty() {
            return Err(Box::new(
                Diagnostic::error(
                    "bad-json",
                    format!("rule {quoted} has no alternatives"),
                    span,
                )
                .with_label_message("empty list"),
            ));
        } else {
            AstExpr {
                kind: AstExprKind::Alt(alts),
                span,
            }
        };
        ast.rules.push(AstRule {
            name: name.to_string(),
            name_span: span,
            body,
        });
    }
    Ok((ast, probabilities))
}

/// Splits `"<term> + <expr>"` into references and literal text.
fn split_alternative(text: &str, span: Span) -> AstExpr {
    let mut items = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'<'
            && let Some(len) = text[i + 1..].find(['<', '>', ' '])
            && bytes[i + 1 + len] == b'>'
        {
            if literal_start < i {
                items.push(literal(&text[literal_start..i], span));
            }
            items.push(AstExpr {
                kind: AstExprKind::Ref(text[i + 1..i + 1 + len].to_string()),
                span,
            });
            i += len + 2;
            literal_start = i;
        } else {
            i += 1;
        }
    }
    if literal_start < text.len() {
        items.push(literal(&text[literal_start..], span));
    }
    if items.len() == 1 {
        items.pop().expect("one")
    } else {
        AstExpr {
            kind: AstExprKind::Seq(items),
            span,
        }
    }
}

fn literal(text: &str, span: Span) -> AstExpr {
    AstExpr {
        kind: AstExprKind::Literal(text.as_bytes().to_vec()),
        span,
    }
}

#[cfg(test)]
mod tests {
    use crate::{Expr, load_spec_text};

    #[test]
    fn fuzzingbook_grammars_import_with_references_and_literal_text() {
        let g = load_spec_text(
            "expr.json",
            br#"{"<start>": ["<expr>"],
                "<expr>": ["<term> + <expr>", "<term>"],
                "<term>": ["1", ["2", {"prob": 0.5}], "<not a ref>", ""]}"#,
        )
        .unwrap();
        assert_eq!(g.rules().len(), 3);
        let expr = g.rule(g.symbol("expr").unwrap()).body;
        assert_eq!(g.display_expr(expr), r#"<term> " + " <expr> | <term>"#);
        let term = g.rule(g.symbol("term").unwrap()).body;
        let Expr::Alt(alts) = g.expr(term) else {
            panic!()
        };
        assert_eq!(alts.len(), 4);
        assert_eq!(g.display_expr(alts[2]), r#""<not a ref>""#);
        assert_eq!(g.default_probabilities(), &[(alts[1], 0.5)]);
    }

    #[test]
    fn malformed_json_grammars_point_at_the_problem() {
        for (text, needle) in [
            (&b"{\"<start>\": [\"a\",]}"[..], "not a JSON grammar"),
            (b"[1, 2]", "must be an object"),
            (b"{\"start\": [\"a\"]}", "not of the form"),
            (b"{\"<start>\": \"a\"}", "must be a list"),
            (b"{\"<start>\": [1]}", "not a string"),
            (b"{\"<start>\": []}", "no alternatives"),
            (
                b"{\"<start>\": [\"a\", [\"b\", {\"prob\": 2}]]}",
                "not a number between 0 and 1",
            ),
            (b"{\"<start>\": [\"<nope>\"]}", "never defined"),
        ] {
            let err = load_spec_text("g.json", text).unwrap_err();
            let message = &err.diagnostics[0].message;
            assert!(message.contains(needle), "{message}");
        }
        let err = load_spec_text("g.json", b"{\n  \"<start>\": [\"a\",]\n}").unwrap_err();
        let span = err.diagnostics[0].primary_span().unwrap();
        assert_eq!(err.source.line_col(span.start as usize).line, 2);
    }

    #[test]
    fn rule_errors_point_at_the_key_not_at_an_earlier_use_of_the_name() {
        let err =
            load_spec_text("g.json", b"{\"<start>\": [\"<d>\"],\n \"<d>\" : []}").unwrap_err();
        let span = err.diagnostics[0].primary_span().unwrap();
        let at = err.source.line_col(span.start as usize);
        assert_eq!((at.line, at.column), (2, 2));
    }
}
