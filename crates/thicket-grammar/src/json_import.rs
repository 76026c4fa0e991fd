//! Import of grammars written as JSON dictionaries, the form used by fuzzingbook and ISLa:
//! `{"<start>": ["<expr>"], "<expr>": ["<term> + <expr>", "<term>"], ...}`.
//!
//! In an alternative, every `<name>` without spaces or angle brackets inside is a
//! reference (fuzzingbook's `RE_NONTERMINAL = <[^<> ]*>`); all other text is literal.
//! An alternative may also be `["text", {options}]` (fuzzingbook `opts`); the options are
//! ignored for now.

use crate::ast::{AstExpr, AstExprKind, AstRule, SpecAst};
use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};
use serde_json::Value;

/// Parses a JSON grammar. Spans point at the rule's key in the JSON text.
pub fn parse_json_grammar(source: &SourceFile) -> Result<SpecAst, Box<Diagnostic>> {
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
        let at = source.text()[search_from..]
            .find(&quoted)
            .map_or(search_from, |i| search_from + i);
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
        for alternative in alternatives {
            let text = match alternative {
                Value::String(s) => s,
                Value::Array(pair) if matches!(pair.first(), Some(Value::String(_))) => {
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
                Diagnostic::error("bad-json", format!("rule {quoted} has no alternatives"), span)
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
    Ok(ast)
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
