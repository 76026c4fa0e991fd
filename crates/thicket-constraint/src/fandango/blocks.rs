//! Finding constraint blocks in a `.fan` file, and telling Fandango's constraint
//! syntax from ISLa's.

use thicket_grammar::Span;

/// What a constraint block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// `where FORMULA`: a hard constraint.
    Where,
    /// `minimizing EXPR`: a soft goal.
    Minimizing,
    /// `maximizing EXPR`: a soft goal.
    Maximizing,
}

/// A constraint block of a `.fan` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Which keyword starts it.
    pub kind: BlockKind,
    /// The block, its keyword included.
    pub span: Span,
}

/// The constraint blocks of a `.fan` file: each starts with `where`, `minimizing` or
/// `maximizing` at the start of a line and ends at the first line end outside brackets
/// (and not escaped by `\`) after which no more deeply indented line follows.
/// Triple-quoted strings and the bodies of `def`/`class` statements are skipped.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines = line_starts(text);
    let mut i = 0;
    let mut in_python_body: Option<usize> = None;
    while i < lines.len() {
        let start = lines[i];
        let line = line_at(text, start);
        let indent = super::lexer::indentation_of_line(text, start);
        let trimmed = line.trim_start();
        if let Some(body_indent) = in_python_body {
            if trimmed.is_empty() || trimmed.starts_with('#') || indent > body_indent {
                i += 1;
                continue;
            }
            in_python_body = None;
        }
        if trimmed.starts_with("def ")
            || trimmed.starts_with("class ")
            || trimmed.starts_with("async def ")
        {
            in_python_body = Some(indent);
        }
        let keyword = [
            ("where", BlockKind::Where),
            ("minimizing", BlockKind::Minimizing),
            ("maximizing", BlockKind::Maximizing),
        ]
        .into_iter()
        .find(|(kw, _)| {
            trimmed.starts_with(kw)
                && !trimmed[kw.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        let Some((_, kind)) = keyword else {
            // Skip over a triple-quoted string that starts on this line.
            i = skip_strings(text, &lines, i);
            continue;
        };
        let block_start = start + (line.len() - trimmed.len());
        let end = block_end(text, block_start, indent);
        out.push(Block {
            kind,
            span: Span::new(block_start, end),
        });
        while i < lines.len() && lines[i] < end {
            i += 1;
        }
    }
    out
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect()
}

fn line_at(text: &str, start: usize) -> &str {
    let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
    text[start..end].trim_end_matches('\r')
}

/// The index of the line after the one at `i`, past any triple-quoted string opened
/// on it.
fn skip_strings(text: &str, lines: &[usize], i: usize) -> usize {
    let start = lines[i];
    let line = line_at(text, start);
    let mut open: Option<&str> = None;
    let mut pos = start;
    let mut rest = line;
    loop {
        let found = match open {
            None => ["\"\"\"", "'''"]
                .iter()
                .filter_map(|q| rest.find(q).map(|p| (p, *q)))
                .min_by_key(|&(p, _)| p),
            Some(q) => rest.find(q).map(|p| (p, q)),
        };
        let Some((p, q)) = found else { break };
        // A `#` before an opening quote comments it out.
        if open.is_none() && rest[..p].contains('#') {
            break;
        }
        open = if open.is_some() { None } else { Some(q) };
        pos += p + 3;
        rest = &text[pos..start + line.len()];
    }
    let Some(q) = open else { return i + 1 };
    match text[pos..].find(q) {
        Some(close) => {
            let close = pos + close;
            lines.iter().position(|&l| l > close).unwrap_or(lines.len())
        }
        None => lines.len(),
    }
}

/// Where a block starting at `start` on a line indented `indent` ends: after its last
/// character that is neither space nor comment.
fn block_end(text: &str, start: usize, indent: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    let mut code_end = start;
    let mut quote: Option<(u8, bool)> = None;
    let triple_at = |i: usize, q: u8| bytes[i..].starts_with(&[q, q, q]);
    while i < bytes.len() {
        let b = bytes[i];
        if let Some((q, triple)) = quote {
            if b == b'\\' {
                i = (i + 2).min(bytes.len());
                code_end = i;
                continue;
            }
            if b == q && (!triple || triple_at(i, q)) {
                quote = None;
                i += if triple { 3 } else { 1 };
                code_end = i;
                continue;
            }
            if b != b'\n' || triple {
                i += 1;
                code_end = i;
                continue;
            }
            // A line end ends an unclosed short string.
            quote = None;
        }
        match b {
            b'"' | b'\'' => {
                let triple = triple_at(i, b);
                quote = Some((b, triple));
                i += if triple { 3 } else { 1 };
                code_end = i;
                continue;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 2;
                continue;
            }
            b'\n' if depth == 0 => {
                // Continues if a later non-blank, non-comment line is indented deeper.
                let mut j = i + 1;
                loop {
                    if j >= bytes.len() {
                        return code_end;
                    }
                    let line = line_at(text, j);
                    let t = line.trim_start();
                    if t.is_empty() || t.starts_with('#') {
                        j += line.len() + 1;
                        continue;
                    }
                    if super::lexer::indentation_of_line(text, j) > indent {
                        break;
                    }
                    return code_end;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                code_end = i + 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                code_end = i + 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' => {}
            _ => code_end = i + 1,
        }
        i += 1;
    }
    code_end
}

/// The constraint language a `where` block is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Fandango's: selectors and Python expressions.
    Fandango,
    /// ISLa's: match expressions, SMT-LIB functions, `forall <t> name in x`.
    Isla,
}

/// Which language the constraint in `text[span]` (a `where` block, its keyword
/// included or not) is written in: Fandango's if it parses as a Fandango constraint
/// and calls no SMT-LIB function (`str.len`, `str.to.int`, `re.++`, ...); ISLa's
/// otherwise. ISLa's other syntax (`forall <t> name in`, match expressions,
/// S-expressions such as `(= a b)`, `=` as a comparison, `in start`) never parses as
/// Fandango's.
pub fn dialect(text: &str, span: Span) -> Dialect {
    let (start, end) = (span.start as usize, span.end as usize);
    if super::parser::parse_where(text, start, end).is_err() {
        return Dialect::Isla;
    }
    let Ok(tokens) = super::lexer::tokenize(text, start, end, 0) else {
        return Dialect::Isla;
    };
    for t in &tokens {
        if !matches!(&t.tok, super::lexer::Tok::Name(n) if n == "str" || n == "re" || n == "int") {
            continue;
        }
        let written: String = text[t.span.start as usize..end]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._+*<=^".contains(*c))
            .collect();
        let smt = crate::smt::FUNCTIONS
            .iter()
            .any(|(name, _)| name.contains('.') && written.starts_with(name));
        if smt {
            return Dialect::Isla;
        }
    }
    Dialect::Fandango
}
