//! The pattern catalog: ISLa text with placeholders, one pattern per `[Name]` section.

use std::fmt;

/// The catalog shipped with thicket (`src/patterns.isla`).
pub const BUNDLED: &str = include_str!("patterns.isla");

/// The kinds of placeholder, in the order the miner instantiates them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `<?NONTERMINAL>`: a nonterminal.
    Nonterminal,
    /// `<?MATCHEXPR(a, ...)>`: a match expression binding the variables.
    MatchExpr,
    /// `<?STRING(v)>`: a string constant from the samples.
    String,
    /// `<?DSTRINGS(v)>`: a disjunction of equalities with recurring strings.
    DStrings,
    /// `<?MAXLEN(v)>`: the longest length of v's texts.
    MaxLen,
    /// `<?MINLEN(v)>`: the shortest length of v's texts.
    MinLen,
    /// `<?MAXINT(v)>`: the greatest integer value of v's texts.
    MaxInt,
    /// `<?MININT(v)>`: the least integer value of v's texts.
    MinInt,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "NONTERMINAL" => Kind::Nonterminal,
            "MATCHEXPR" => Kind::MatchExpr,
            "STRING" => Kind::String,
            "DSTRINGS" => Kind::DStrings,
            "MAXLEN" => Kind::MaxLen,
            "MINLEN" => Kind::MinLen,
            "MAXINT" => Kind::MaxInt,
            "MININT" => Kind::MinInt,
            _ => return None,
        })
    }

    /// How many arguments it takes: `None` for one or more.
    fn arity(self) -> Option<usize> {
        match self {
            Kind::Nonterminal => Some(0),
            Kind::MatchExpr => None,
            _ => Some(1),
        }
    }
}

/// A placeholder found in a text: its kind, arguments and byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placeholder {
    /// What it stands for.
    pub kind: Kind,
    /// Its arguments (variable names).
    pub args: Vec<String>,
    /// Where it is written (bytes of the text).
    pub range: std::ops::Range<usize>,
}

/// One pattern of the catalog.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// Its name (the `[Name]` line).
    pub name: String,
    /// The ISLa text with placeholders.
    pub body: String,
    /// `file:line` of its `[Name]` line.
    pub location: String,
}

/// A catalog that cannot be read: where and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for CatalogError {}

/// Patterns to instantiate.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// The patterns, in file order.
    pub patterns: Vec<Pattern>,
}

impl Catalog {
    /// The catalog shipped with thicket.
    pub fn bundled() -> Catalog {
        Catalog::parse("patterns.isla", BUNDLED).expect("the bundled catalog is well-formed")
    }

    /// Reads a catalog: `[Name]` lines start patterns, `#` starts a comment, every
    /// placeholder must be known and have its arguments.
    pub fn parse(file: &str, text: &str) -> Result<Catalog, CatalogError> {
        let err = |line: usize, column: usize, message: String| CatalogError {
            file: file.to_string(),
            line,
            column,
            message,
        };
        // Each pattern with the line of its name and the lines of its text.
        let mut patterns: Vec<(Pattern, usize, Vec<usize>)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = strip_comment(raw);
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix('[') {
                let column = line.len() - line.trim_start().len() + 1;
                let Some(name) = rest.strip_suffix(']') else {
                    return Err(err(
                        i + 1,
                        column + trimmed.len(),
                        "expected `]` closing the pattern name".into(),
                    ));
                };
                if name.trim().is_empty() {
                    return Err(err(i + 1, column + 1, "expected a pattern name".into()));
                }
                patterns.push((
                    Pattern {
                        name: name.trim().to_string(),
                        body: String::new(),
                        location: format!("{file}:{}", i + 1),
                    },
                    i + 1,
                    Vec::new(),
                ));
                continue;
            }
            let Some((pattern, _, lines)) = patterns.last_mut() else {
                let column = line.len() - line.trim_start().len() + 1;
                return Err(err(
                    i + 1,
                    column,
                    "expected a `[Name]` line before the pattern text".into(),
                ));
            };
            // Placeholders are checked line by line so that errors have positions.
            placeholders(line).map_err(|(col, m)| err(i + 1, col, m))?;
            pattern.body.push_str(line);
            pattern.body.push('\n');
            lines.push(i + 1);
        }
        for (pattern, line, lines) in &patterns {
            if pattern.body.trim().is_empty() {
                return Err(err(
                    *line,
                    1,
                    format!(
                        "pattern `{}` has no text: expected ISLa text after its name",
                        pattern.name
                    ),
                ));
            }
            check_syntax(&pattern.body).map_err(|(offset, message)| {
                // The body is the pattern's lines, each ended by a newline.
                let before = &pattern.body[..offset];
                let index = before.matches('\n').count().min(lines.len() - 1);
                let line_start = before.rfind('\n').map_or(0, |i| i + 1).min(offset);
                let column = pattern.body[line_start..offset].chars().count() + 1;
                err(lines[index], column, message)
            })?;
        }
        Ok(Catalog {
            patterns: patterns.into_iter().map(|(p, _, _)| p).collect(),
        })
    }

    /// Adds the patterns of `other` (a pattern of the same name replaces this one's).
    pub fn extend(&mut self, other: Catalog) {
        for pattern in other.patterns {
            match self.patterns.iter_mut().find(|p| p.name == pattern.name) {
                Some(old) => *old = pattern,
                None => self.patterns.push(pattern),
            }
        }
    }

    /// Keeps only the patterns whose names are in `names` (case-insensitive); `Err` with
    /// the first name that matches none.
    pub fn select(&mut self, names: &[String]) -> Result<(), String> {
        for name in names {
            if !self
                .patterns
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(name))
            {
                return Err(name.clone());
            }
        }
        self.patterns
            .retain(|p| names.iter().any(|n| p.name.eq_ignore_ascii_case(n)));
        Ok(())
    }
}

/// Checks a pattern's ISLa syntax before any instantiation, with each placeholder
/// replaced by a stand-in of its kind (a nonterminal, a string, an atom, a number), so
/// that a mistake in a user's pattern is reported where it is written rather than
/// counted as an ill-typed candidate. `Err((offset in body, message))`.
fn check_syntax(body: &str) -> Result<(), (usize, String)> {
    let found = placeholders(body).map_err(|(_, m)| (0, m))?;
    // The text with stand-ins, and where each stand-in is: (in the text, in the body).
    let mut text = String::with_capacity(body.len());
    let mut replaced = Vec::new();
    let mut from = 0;
    for p in &found {
        text.push_str(&body[from..p.range.start]);
        let stand_in = match p.kind {
            Kind::Nonterminal | Kind::MatchExpr => "<start>".to_string(),
            Kind::String => "\"\"".to_string(),
            Kind::DStrings => format!("({} = \"\")", p.args[0]),
            Kind::MaxLen | Kind::MinLen | Kind::MaxInt | Kind::MinInt => "0".to_string(),
        };
        replaced.push((text.len()..text.len() + stand_in.len(), p.range.clone()));
        text.push_str(&stand_in);
        from = p.range.end;
    }
    text.push_str(&body[from..]);
    let Err(diagnostic) = thicket_constraint::parser::parse_constraint(&text, 0, text.len()) else {
        return Ok(());
    };
    let at = diagnostic.primary_span().map_or(0, |s| s.start as usize);
    // Back to the body: inside a stand-in, its placeholder; after one, shifted.
    let mut offset = at;
    for (in_text, in_body) in &replaced {
        if at < in_text.start {
            break;
        }
        offset = if at < in_text.end {
            in_body.start
        } else {
            in_body.end + (at - in_text.end)
        };
    }
    Err((
        offset.min(body.len()),
        format!("ISLa syntax: {}", diagnostic.message),
    ))
}

/// The line without its `#` comment (a `#` inside a string literal is text).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The placeholders of a text, in order; `Err((column, message))` for a malformed one.
pub fn placeholders(text: &str) -> Result<Vec<Placeholder>, (usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("<?").map(|i| from + i) {
        let column = text[..at].chars().count() + 1;
        let close = text[at..]
            .find('>')
            .map(|i| at + i)
            .ok_or_else(|| (column, "expected `>` closing the placeholder".to_string()))?;
        let inner = &text[at + 2..close];
        let (name, args) = match inner.split_once('(') {
            Some((name, rest)) => {
                let args = rest.strip_suffix(')').ok_or_else(|| {
                    (
                        column,
                        format!("expected `)` closing the arguments of `<?{name}(`"),
                    )
                })?;
                let args: Vec<String> = args.split(',').map(|a| a.trim().to_string()).collect();
                if let Some(bad) = args.iter().find(|a| !is_ident(a)) {
                    return Err((
                        column,
                        format!(
                            "expected a variable name as argument of `<?{name}>`, found `{bad}`"
                        ),
                    ));
                }
                (name, args)
            }
            None => (inner, Vec::new()),
        };
        let kind = Kind::from_name(name).ok_or_else(|| {
            (
                column,
                format!(
                    "unknown placeholder `<?{name}>`: expected NONTERMINAL, MATCHEXPR, STRING, \
                     DSTRINGS, MAXLEN, MINLEN, MAXINT or MININT"
                ),
            )
        })?;
        match kind.arity() {
            Some(n) if n != args.len() => {
                return Err((
                    column,
                    format!(
                        "`<?{name}>` takes {n} argument{}",
                        if n == 1 { "" } else { "s" }
                    ),
                ));
            }
            None if args.is_empty() => {
                return Err((column, format!("`<?{name}(...)>` needs variable names")));
            }
            _ => {}
        }
        out.push(Placeholder {
            kind,
            args,
            range: at..close + 1,
        });
        from = close + 1;
    }
    Ok(out)
}

/// An ISLa variable name.
pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalog_reads() {
        let catalog = Catalog::bundled();
        assert!(catalog.patterns.len() >= 20);
        assert!(catalog.patterns.iter().any(|p| p.name == "Balance"));
        let balance = &catalog.patterns[0];
        let found = placeholders(&balance.body).unwrap();
        assert_eq!(found[0].kind, Kind::Nonterminal);
        assert_eq!(found[1].kind, Kind::MatchExpr);
        assert_eq!(found[1].args, ["opid", "clid"]);
    }

    #[test]
    fn errors_have_positions() {
        let e = Catalog::parse("p.isla", "[A]\nforall <?NONTERM> x: true\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 8));
        assert!(e.message.contains("unknown placeholder"), "{e}");
        let e = Catalog::parse("p.isla", "forall <a> x: true\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        let e = Catalog::parse("p.isla", "[A\n").unwrap_err();
        assert!(e.to_string().starts_with("p.isla:1:3: expected `]`"), "{e}");
        let e = Catalog::parse("p.isla", "[A]\nx = <?STRING>\n").unwrap_err();
        assert!(e.message.contains("takes 1 argument"), "{e}");
        let e = Catalog::parse("p.isla", "[A]\n# only a comment\n").unwrap_err();
        assert!(e.message.contains("has no text"), "{e}");
    }

    #[test]
    fn isla_syntax_errors_have_positions_in_the_file() {
        let e = Catalog::parse(
            "p.isla",
            "[A]\nforall <?NONTERMINAL> x in start:\n  (x = <?STRING(x)> or\n[B]\nx = 1\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.file.as_str()), (3, "p.isla"), "{e}");
        assert!(e.message.starts_with("ISLa syntax"), "{e}");
        let e = Catalog::parse(
            "p.isla",
            "[A]\n  forall <?NONTERMINAL> x in start: x ==== 1\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.column > 30, "{e}");
        // After a placeholder, columns are the file's, not the stand-in's.
        let e = Catalog::parse(
            "p.isla",
            "[A]\nforall <?NONTERMINAL> x in start: str.len(x) <= <?MAXLEN(x)> ) \n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (2, 62), "{e}");
    }

    #[test]
    fn user_patterns_replace_and_add() {
        let mut catalog = Catalog::bundled();
        let n = catalog.patterns.len();
        let mine = Catalog::parse(
            "mine.isla",
            "[Balance]\nforall <?NONTERMINAL> c=\"<?MATCHEXPR(a, b)>\": a = b # mine\n[New]\nexists <?NONTERMINAL> x: x = <?STRING(x)>\n",
        )
        .unwrap();
        catalog.extend(mine);
        assert_eq!(catalog.patterns.len(), n + 1);
        assert_eq!(catalog.patterns[0].location, "mine.isla:1");
        catalog.select(&["new".into()]).unwrap();
        assert_eq!(catalog.patterns.len(), 1);
        assert_eq!(catalog.select(&["nope".into()]), Err("nope".into()));
    }
}
