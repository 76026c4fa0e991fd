//! Reading Fandango `.fan` files: cutting a file into statements, following its
//! `include(...)`s, adding the standard library, and merging the rules as Fandango
//! does (a later definition of a rule replaces an earlier one).
//!
//! Every file read is attached to the main file's [`SourceFile`], so the grammar's spans
//! (and the diagnostics about it) point into the right file; [`FanBlock`]s keep each
//! file's own `SourceFile` and offsets.

use crate::ast::{AstExpr, AstExprKind, SpecAst};
use crate::diag::{Diagnostic, SpecError};
use crate::fandango::{
    ComputedRepeat, ConstraintKind, FanBlock, FanConstraint, FanGenerator, FanParts, PartyRef,
};
use crate::grammar::{Expr, Grammar};
use crate::parser::{self, FanGrammar};
use crate::pyscan;
use crate::source::{SourceFile, Span};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name the standard library is reported under.
pub const STDLIB_NAME: &str = "<fandango stdlib>";

/// thicket's reading of Fandango's standard library (see the file for what it holds).
const STDLIB: &str = include_str!("stdlib.fan");

/// At most this many files are included in one spec (a file included twice counts
/// twice): a diamond of includes cannot grow without bound.
pub const MAX_INCLUDES: usize = 256;

/// The kinds of statements of a `.fan` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatementKind {
    Production,
    Constraint(ConstraintKind),
    Include,
    Setting,
    Python,
}

/// A statement: its kind and its extent (first token to last token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Statement {
    kind: StatementKind,
    start: usize,
    end: usize,
}

/// Cuts a file into statements (see the module documentation of `crate::fandango`):
/// a logical line and the lines indented under it form one statement; a line that
/// starts with `|` or with `<name>` not followed by `::=` continues the production
/// before it (thicket's format always allowed this); consecutive Python statements
/// form one statement.
fn statements(text: &str) -> Result<Vec<Statement>, Box<Diagnostic>> {
    let lines = pyscan::logical_lines(text).map_err(|at| {
        Box::new(
            Diagnostic::error(
                "unterminated-string",
                "unterminated triple-quoted string",
                Span::new(at, (at + 3).min(text.len())),
            )
            .with_label_message("no closing quotes until the end of the file")
            .with_note("close the string; the rest of the file would be inside it"),
        )
    })?;
    let mut out: Vec<Statement> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let head = lines[i];
        let mut j = i + 1;
        while j < lines.len() && lines[j].indent > head.indent {
            j += 1;
        }
        let end = lines[j - 1].end;
        i = j;
        let (kind, continues) = classify(text, head.start);
        match out.last_mut() {
            Some(last)
                if (continues && last.kind == StatementKind::Production)
                    || (kind == StatementKind::Python && last.kind == StatementKind::Python) =>
            {
                last.end = end;
            }
            _ => out.push(Statement {
                kind,
                start: head.start,
                end,
            }),
        }
    }
    Ok(out)
}

/// What the statement starting at `at` is, and whether it continues a production.
fn classify(text: &str, at: usize) -> (StatementKind, bool) {
    let rest = &text[at..];
    let Some(c) = rest.chars().next() else {
        return (StatementKind::Production, false);
    };
    if c == '<' {
        let defines = rest
            .find('>')
            .filter(|&close| rest[1..close].chars().all(crate::lexer::is_name_char))
            .is_some_and(|close| {
                text[pyscan::skip_blanks(text, at + close + 1)..].starts_with("::=")
            });
        return (StatementKind::Production, !defines);
    }
    if c == '|' {
        return (StatementKind::Production, true);
    }
    if pyscan::is_identifier_start(c) {
        if pyscan::string_at(text, at).is_some() {
            return (StatementKind::Python, false);
        }
        let len = rest
            .find(|c: char| !pyscan::is_identifier_continue(c))
            .unwrap_or(rest.len());
        let after = pyscan::skip_blanks(text, at + len);
        let kind = match &rest[..len] {
            "where" => StatementKind::Constraint(ConstraintKind::Where),
            "minimizing" => StatementKind::Constraint(ConstraintKind::Minimizing),
            "maximizing" => StatementKind::Constraint(ConstraintKind::Maximizing),
            "include" if text[after..].starts_with('(') => StatementKind::Include,
            "setting" => StatementKind::Setting,
            _ => StatementKind::Python,
        };
        return (kind, false);
    }
    let python = c.is_ascii_digit()
        || matches!(
            c,
            '"' | '\'' | '(' | '[' | '{' | '@' | '-' | '+' | '~' | '*'
        )
        || (c == '.'
            && (rest.starts_with("...") || rest[1..].starts_with(|c: char| c.is_ascii_digit())));
    // Anything else cannot start a statement: the production parser says what it
    // expected.
    (
        if python {
            StatementKind::Python
        } else {
            StatementKind::Production
        },
        false,
    )
}

/// One statement of a file, read.
#[derive(Clone, Debug)]
enum Item {
    /// A rule: its index in the file's [`FanGrammar::rules`].
    Rule(usize),
    Python(Span),
    Constraint(ConstraintKind, Span),
    Setting(Span),
    Include {
        path: String,
        span: Span,
    },
}

/// A file read: its statements and its grammar, offsets its own.
struct ParsedFile {
    source: Arc<SourceFile>,
    items: Vec<Item>,
    grammar: FanGrammar,
    /// Offset of the first `where` when only `where` constraints follow it.
    constraints_start: Option<usize>,
}

/// Reads the statements of a file.
fn parse_file(source: Arc<SourceFile>) -> Result<ParsedFile, Box<Diagnostic>> {
    let text = source.text();
    let mut grammar = FanGrammar::default();
    let mut items = Vec::new();
    for statement in statements(text)? {
        let Statement { kind, start, end } = statement;
        match kind {
            StatementKind::Production => {
                let mut from = start;
                while from < end {
                    let before = grammar.rules.len();
                    let stop = parser::parse_fandango_productions(text, from, end, &mut grammar)?;
                    items.extend((before..grammar.rules.len()).map(Item::Rule));
                    let Some(at) = stop else { break };
                    // An indented `where` under a production ends where an indented
                    // definition starts, as in Fandango; the productions go on there.
                    from = next_definition(text, from, at, end).unwrap_or(end);
                    items.push(constraint(text, ConstraintKind::Where, at, from)?);
                }
            }
            StatementKind::Constraint(kind) => items.push(constraint(text, kind, start, end)?),
            StatementKind::Python => items.push(Item::Python(Span::new(start, end))),
            StatementKind::Setting => {
                let (s, e) = pyscan::trim_range(text, start + "setting".len(), end);
                items.push(Item::Setting(Span::new(s, e)));
            }
            StatementKind::Include => items.push(include(text, start, end)?),
        }
    }
    let first_where = items
        .iter()
        .position(|i| matches!(i, Item::Constraint(ConstraintKind::Where, _)));
    let constraints_start = first_where
        .filter(|&first| {
            items[first..]
                .iter()
                .all(|i| matches!(i, Item::Constraint(ConstraintKind::Where, _)))
        })
        .map(|first| match &items[first] {
            // The `where` keyword is right before the expression, blanks between.
            Item::Constraint(_, span) => keyword_start(text, span.start as usize, "where"),
            _ => unreachable!("found as a where constraint"),
        });
    Ok(ParsedFile {
        source,
        items,
        grammar,
        constraints_start,
    })
}

/// Where the keyword before the expression at `expression` starts.
fn keyword_start(text: &str, expression: usize, keyword: &str) -> usize {
    text[..expression].rfind(keyword).unwrap_or(expression)
}

/// A constraint statement starting with its keyword at `start`.
fn constraint(
    text: &str,
    kind: ConstraintKind,
    start: usize,
    end: usize,
) -> Result<Item, Box<Diagnostic>> {
    let keyword = match kind {
        ConstraintKind::Where => "where",
        ConstraintKind::Minimizing => "minimizing",
        ConstraintKind::Maximizing => "maximizing",
    };
    let (s, e) = pyscan::trim_range(text, start + keyword.len(), end);
    if s == e {
        return Err(Box::new(
            Diagnostic::error(
                "syntax",
                format!("expected an expression after `{keyword}`"),
                Span::new(start, start + keyword.len()),
            )
            .with_label_message("nothing follows"),
        ));
    }
    Ok(Item::Constraint(kind, Span::new(s, e)))
}

/// The start of the first logical line in `at..end` after the one holding `at` that
/// defines a rule (`<name> ::=`): no expression has such a line. `from`, at or before
/// `at`, starts a logical line: the lines are read from there, not from the file's start.
fn next_definition(text: &str, from: usize, at: usize, end: usize) -> Option<usize> {
    let lines = pyscan::logical_lines(&text[from..end]).ok()?;
    lines
        .iter()
        .map(|line| from + line.start)
        .filter(|&start| start > at)
        .find(|&start| {
            text[start..].starts_with('<')
                && classify(text, start) == (StatementKind::Production, false)
        })
}

/// An `include("path")` statement.
fn include(text: &str, start: usize, end: usize) -> Result<Item, Box<Diagnostic>> {
    let span = Span::new(start, end);
    let malformed = |at: usize, what: &str| {
        Box::new(
            Diagnostic::error(
                "syntax",
                format!("malformed include: {what}"),
                Span::new(at, (at + 1).min(end).max(at)),
            )
            .with_label_message("here")
            .with_note("an include is written include(\"file.fan\")"),
        )
    };
    let open = pyscan::skip_blanks(text, start + "include".len());
    let at = pyscan::skip_blanks(text, open + 1);
    let mut lexer = crate::lexer::Lexer::fandango(text, at, end);
    let token = lexer.next_token()?;
    let crate::lexer::TokenKind::Literal(bytes) = token.kind else {
        return Err(malformed(at, "expected a quoted file name"));
    };
    let Ok(path) = String::from_utf8(bytes) else {
        return Err(malformed(at, "the file name is not UTF-8"));
    };
    let close = lexer.next_token()?;
    if close.kind != crate::lexer::TokenKind::RParen {
        return Err(malformed(
            close.span.start as usize,
            "expected `)` after the file name",
        ));
    }
    let after = lexer.next_token()?;
    if !matches!(
        after.kind,
        crate::lexer::TokenKind::Eof | crate::lexer::TokenKind::Semi
    ) {
        return Err(malformed(
            after.span.start as usize,
            "nothing may follow `)`",
        ));
    }
    Ok(Item::Include { path, span })
}

/// The places an included file is looked for, in order (Fandango's, see
/// `docs/spec-format.md`): the `-I` directories, `$FANDANGO_PATH`, the including
/// file's directory, the current directory, then Fandango's data directories
/// (`$XDG_DATA_HOME/fandango`, default `~/.local/share/fandango`, and each of
/// `$XDG_DATA_DIRS`, default `/usr/local/share:/usr/share`, with `/fandango`; on macOS
/// `~/Library/Fandango` and `/Library/Fandango` before them).
pub fn include_search_path(including_dir: &Path, include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut dirs: Vec<PathBuf> = include_dirs.to_vec();
    if let Some(path) = env("FANDANGO_PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.push(including_dir.to_path_buf());
    dirs.push(PathBuf::from("."));
    let home = env("HOME").map(PathBuf::from);
    if cfg!(target_os = "macos")
        && let Some(home) = &home
    {
        dirs.push(home.join("Library").join("Fandango"));
    }
    match (env("XDG_DATA_HOME"), &home) {
        (Some(data), _) => dirs.push(PathBuf::from(data).join("fandango")),
        (None, Some(home)) => dirs.push(home.join(".local/share/fandango")),
        (None, None) => {}
    }
    if cfg!(target_os = "macos") {
        dirs.push(PathBuf::from("/Library/Fandango"));
    }
    let data_dirs = env("XDG_DATA_DIRS")
        .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
        .unwrap_or_else(|| {
            vec![
                PathBuf::from("/usr/local/share"),
                PathBuf::from("/usr/share"),
            ]
        });
    dirs.extend(data_dirs.into_iter().map(|d| d.join("fandango")));
    dirs
}

/// A file as [`load`] reads it: its text, or why not.
fn read_text(path: &Path, max_bytes: usize) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(max_bytes as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > max_bytes {
        return Err(format!(
            "{} is larger than the limit of {max_bytes} bytes",
            path.display()
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        format!(
            "{} is not valid UTF-8 (byte offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// The statements of the spec and the files it includes, merged in Fandango's order.
#[derive(Default)]
struct Merged {
    /// (file, rule index in the file's grammar)
    rules: Vec<(usize, usize)>,
    python: Vec<(usize, Span)>,
    constraints: Vec<(usize, ConstraintKind, Span)>,
    settings: Vec<(usize, Span)>,
}

impl Merged {
    /// Puts `inner` (an included file's statements) before everything so far.
    fn prepend(&mut self, mut inner: Merged) {
        inner.rules.append(&mut self.rules);
        inner.python.append(&mut self.python);
        inner.constraints.append(&mut self.constraints);
        inner.settings.append(&mut self.settings);
        *self = inner;
    }
}

/// Reads files and follows includes.
struct Reader<'a> {
    files: Vec<ParsedFile>,
    /// The directory each file is in, for its includes.
    dirs: Vec<PathBuf>,
    include_dirs: &'a [PathBuf],
    max_bytes: usize,
    includes: Vec<PathBuf>,
}

impl Reader<'_> {
    /// Merges the statements of file `index`, reading its includes; `stack` holds the
    /// canonical paths of the files including it (a cycle is an error).
    fn merge(&mut self, index: usize, stack: &mut Vec<PathBuf>) -> Result<Merged, SpecError> {
        let mut merged = Merged::default();
        let items = self.files[index].items.clone();
        for item in items {
            match item {
                Item::Rule(r) => merged.rules.push((index, r)),
                Item::Python(span) => merged.python.push((index, span)),
                Item::Constraint(kind, span) => merged.constraints.push((index, kind, span)),
                Item::Setting(span) => merged.settings.push((index, span)),
                Item::Include { path, span } => {
                    let inner = self.include(index, &path, span, stack)?;
                    merged.prepend(inner);
                }
            }
        }
        Ok(merged)
    }

    fn include(
        &mut self,
        from: usize,
        path: &str,
        span: Span,
        stack: &mut Vec<PathBuf>,
    ) -> Result<Merged, SpecError> {
        let source = self.files[from].source.clone();
        let fail = |code: &'static str, message: String, notes: Vec<String>| {
            let mut d =
                Diagnostic::error(code, message, span).with_label_message("in this include");
            for note in notes {
                d = d.with_note(note);
            }
            SpecError {
                source: source.clone(),
                diagnostics: vec![d],
            }
        };
        if self.includes.len() >= MAX_INCLUDES {
            return Err(fail(
                "include",
                format!("more than {MAX_INCLUDES} files are included"),
                vec!["a file included twice is read twice; include each file once".into()],
            ));
        }
        let wanted = Path::new(path);
        let candidates: Vec<PathBuf> = if wanted.is_absolute() {
            vec![wanted.to_path_buf()]
        } else {
            include_search_path(&self.dirs[from], self.include_dirs)
                .into_iter()
                .map(|d| d.join(wanted))
                .collect()
        };
        let Some(found) = candidates.iter().find(|c| c.is_file()).cloned() else {
            let searched: Vec<String> = candidates
                .iter()
                .map(|c| c.parent().unwrap_or(c).display().to_string())
                .collect();
            return Err(fail(
                "include-not-found",
                format!("included file {path:?} not found"),
                vec![
                    format!("searched in: {}", searched.join(", ")),
                    "add its directory with -I DIR".into(),
                ],
            ));
        };
        let canonical = found.canonicalize().unwrap_or_else(|_| found.clone());
        if let Some(at) = stack.iter().position(|p| *p == canonical) {
            let chain: Vec<String> = stack[at..]
                .iter()
                .chain(std::iter::once(&canonical))
                .map(|p| p.display().to_string())
                .collect();
            return Err(fail(
                "include-cycle",
                format!("{path:?} includes itself"),
                vec![format!("the includes go round: {}", chain.join(" -> "))],
            ));
        }
        let text = read_text(&found, self.max_bytes).map_err(|e| fail("include", e, Vec::new()))?;
        let name = found.display().to_string();
        let included = Arc::new(SourceFile::new(name, text));
        let at = source.line_col(span.start as usize);
        let parsed = parse_file(included.clone()).map_err(|d| SpecError {
            source: included.clone(),
            diagnostics: vec![d.with_note(format!("included from {}:{at}", source.name()))],
        })?;
        self.includes.push(found.clone());
        self.files.push(parsed);
        self.dirs.push(
            found
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        );
        let index = self.files.len() - 1;
        stack.push(canonical);
        let merged = self.merge(index, stack);
        stack.pop();
        merged
    }
}

/// A span in one of the files read: the file's index and the span in its text.
type FileSpan = (usize, Span);

/// What [`load`] makes: the syntax tree to build, the combined source, and the
/// Fandango parts still to be tied to the built grammar ([`Pending::finish`]).
pub struct Loaded {
    /// The rules to build, in their final order.
    pub ast: SpecAst,
    /// The main file with every other file attached.
    pub source: SourceFile,
    /// The rest, spans in `source`'s offsets.
    pub pending: Pending,
}

/// The Fandango parts of a loaded spec, before the grammar is built.
pub struct Pending {
    /// Each file read (0 is the main file, the last the standard library if used) and
    /// its base offset in the combined source.
    files: Vec<(Arc<SourceFile>, usize)>,
    python: Vec<(usize, Span)>,
    constraints: Vec<(usize, ConstraintKind, Span)>,
    settings: Vec<(usize, Span)>,
    /// Rule name, file, generator span (file offsets).
    generators: Vec<(String, usize, Span)>,
    /// Repetition span (combined), min and max (file, span).
    computed: Vec<(Span, Option<FileSpan>, Option<FileSpan>)>,
    party_refs: Vec<(Span, String, Option<String>)>,
    bits: Vec<Span>,
    includes: Vec<PathBuf>,
    warnings: Vec<Diagnostic>,
}

/// Reads a Fandango spec: the main file's text, its includes, the standard library.
pub fn load(
    main: SourceFile,
    include_dirs: &[PathBuf],
    max_bytes: usize,
    stdlib: bool,
) -> Result<Loaded, SpecError> {
    let main = Arc::new(main);
    let parsed = parse_file(main.clone()).map_err(|d| SpecError {
        source: main.clone(),
        diagnostics: vec![*d],
    })?;
    let constraints_start = parsed.constraints_start;
    let main_dir = Path::new(main.name())
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut reader = Reader {
        files: vec![parsed],
        dirs: vec![main_dir],
        include_dirs,
        max_bytes,
        includes: Vec::new(),
    };
    let mut stack = vec![
        Path::new(main.name())
            .canonicalize()
            .unwrap_or_else(|_| PathBuf::from(main.name())),
    ];
    let merged = reader.merge(0, &mut stack)?;
    let stdlib_index = if stdlib {
        let source = Arc::new(SourceFile::new(STDLIB_NAME, STDLIB));
        let parsed = parse_file(source).map_err(|d| SpecError {
            source: Arc::new(SourceFile::new(STDLIB_NAME, STDLIB)),
            diagnostics: vec![*d],
        })?;
        reader.files.push(parsed);
        Some(reader.files.len() - 1)
    } else {
        None
    };
    // Attach every other file to the main one.
    let mut combined = (*main).clone();
    let mut files = vec![(main.clone(), 0)];
    for file in &reader.files[1..] {
        let base = combined
            .attach(file.source.clone())
            .ok_or_else(|| SpecError {
                source: main.clone(),
                diagnostics: vec![Diagnostic::error(
                    "too-large",
                    "the spec and the files it includes are larger than 4 GiB together",
                    Span::new(0, 0),
                )],
            })?;
        files.push((file.source.clone(), base));
    }
    let base = |file: usize| files[file].1;
    let shift = |file: usize, span: Span| {
        Span::new(
            base(file) + span.start as usize,
            base(file) + span.end as usize,
        )
    };

    // The user's rules: a later definition replaces an earlier one in its place.
    let mut order: Vec<String> = Vec::new();
    let mut definitions: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for &(file, r) in &merged.rules {
        let name = &reader.files[file].grammar.rules[r].0.name;
        let defs = definitions.entry(name.clone()).or_default();
        if defs.is_empty() {
            order.push(name.clone());
        }
        defs.push((file, r));
    }
    let mut warnings = Vec::new();
    for name in &order {
        let defs = &definitions[name];
        if defs.len() > 1 {
            let span_of = |&(file, r): &(usize, usize)| {
                shift(file, reader.files[file].grammar.rules[r].0.name_span)
            };
            let last = defs.last().expect("defined");
            warnings.push(
                Diagnostic::warning(
                    "redefined-rule",
                    format!(
                        "rule <{name}> is defined {} times; the last definition counts",
                        defs.len()
                    ),
                    span_of(last),
                )
                .with_label_message("this definition counts")
                .with_secondary(span_of(&defs[0]), "first defined here")
                .with_note("Fandango replaces a rule defined again; join the alternatives with `|` to keep both"),
            );
        }
    }
    let mut chosen: Vec<(usize, usize)> = order
        .iter()
        .map(|name| *definitions[name].last().expect("defined"))
        .collect();
    let user_names: HashSet<&str> = order.iter().map(String::as_str).collect();

    // The standard library's rules that the user does not define, if the spec reaches
    // them: from a rule, or from a constraint, generator or computed bound naming them.
    if let Some(lib) = stdlib_index {
        let lib_grammar = &reader.files[lib].grammar;
        let mut lib_rules: Vec<usize> = Vec::new();
        let mut lib_by_name: HashMap<&str, usize> = HashMap::new();
        for (r, (rule, _)) in lib_grammar.rules.iter().enumerate() {
            if user_names.contains(rule.name.as_str()) {
                continue;
            }
            match lib_by_name.get(rule.name.as_str()) {
                Some(&slot) => lib_rules[slot] = r,
                None => {
                    lib_by_name.insert(&rule.name, lib_rules.len());
                    lib_rules.push(r);
                }
            }
        }
        let mut reached: HashSet<String> = HashSet::new();
        let mut todo: Vec<String> = Vec::new();
        for &(file, r) in &chosen {
            let (rule, generator) = &reader.files[file].grammar.rules[r];
            collect_refs(&rule.body, &mut todo);
            if let Some(g) = generator {
                mentioned(reader.files[file].source.slice(*g), &mut todo);
            }
        }
        for &(file, _, span) in &merged.constraints {
            mentioned(reader.files[file].source.slice(span), &mut todo);
        }
        for file in &reader.files {
            for (_, lo, hi) in &file.grammar.computed_repeats {
                for span in lo.iter().chain(hi) {
                    mentioned(file.source.slice(*span), &mut todo);
                }
            }
        }
        while let Some(name) = todo.pop() {
            if user_names.contains(name.as_str()) || !reached.insert(name.clone()) {
                continue;
            }
            if let Some(&slot) = lib_by_name.get(name.as_str()) {
                collect_refs(&lib_grammar.rules[lib_rules[slot]].0.body, &mut todo);
            }
        }
        chosen.extend(
            lib_rules
                .iter()
                .filter(|&&r| reached.contains(&lib_grammar.rules[r].0.name))
                .map(|&r| (lib, r)),
        );
    }

    let mut rules = Vec::with_capacity(chosen.len());
    let mut generators = Vec::new();
    for &(file, r) in &chosen {
        let (rule, generator) = &reader.files[file].grammar.rules[r];
        let mut rule = rule.clone();
        rule.name_span = shift(file, rule.name_span);
        shift_expr(&mut rule.body, base(file));
        if let Some(g) = generator {
            generators.push((rule.name.clone(), file, *g));
        }
        rules.push(rule);
    }
    let mut computed = Vec::new();
    let mut party_refs = Vec::new();
    let mut bits = Vec::new();
    for (file, parsed) in reader.files.iter().enumerate() {
        let g = &parsed.grammar;
        computed.extend(g.computed_repeats.iter().map(|(repeat, lo, hi)| {
            (
                shift(file, *repeat),
                lo.map(|s| (file, s)),
                hi.map(|s| (file, s)),
            )
        }));
        party_refs.extend(g.party_refs.iter().map(|(span, sender, receiver)| {
            (shift(file, *span), sender.clone(), receiver.clone())
        }));
        bits.extend(g.bits.iter().map(|&span| shift(file, span)));
        warnings.extend(g.warnings.iter().map(|d| shift_diagnostic(d, base(file))));
    }
    warnings.sort_by_key(|d| d.primary_span().map(|s| s.start));
    Ok(Loaded {
        ast: SpecAst {
            rules,
            constraints_start,
        },
        source: combined,
        pending: Pending {
            files,
            python: merged.python,
            constraints: merged.constraints,
            settings: merged.settings,
            generators,
            computed,
            party_refs,
            bits,
            includes: reader.includes,
            warnings,
        },
    })
}

/// The rule names an expression refers to.
fn collect_refs(expr: &AstExpr, out: &mut Vec<String>) {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match &e.kind {
            AstExprKind::Alt(items) | AstExprKind::Seq(items) => stack.extend(items),
            AstExprKind::Repeat { item, .. } => stack.push(item),
            AstExprKind::Ref(name) => out.push(name.clone()),
            AstExprKind::Literal(_) | AstExprKind::Regex(_) | AstExprKind::Bit(_) => {}
        }
    }
}

/// The names `<name>` (or `<party:name>`) written in a piece of Python.
fn mentioned(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let len = rest
            .find(|c: char| !crate::lexer::is_name_char(c))
            .unwrap_or(rest.len());
        if len > 0 && rest[len..].starts_with('>') {
            let name = rest[..len].rsplit(':').next().unwrap_or_default();
            if !name.is_empty() {
                out.push(name.to_string());
            }
        }
    }
}

/// Moves every span of an expression by `base`.
fn shift_expr(expr: &mut AstExpr, base: usize) {
    if base == 0 {
        return;
    }
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        e.span = Span::new(base + e.span.start as usize, base + e.span.end as usize);
        match &mut e.kind {
            AstExprKind::Alt(items) | AstExprKind::Seq(items) => stack.extend(items.iter_mut()),
            AstExprKind::Repeat { item, .. } => stack.push(item),
            _ => {}
        }
    }
}

fn shift_diagnostic(d: &Diagnostic, base: usize) -> Diagnostic {
    let mut d = d.clone();
    for label in &mut d.labels {
        label.span = Span::new(
            base + label.span.start as usize,
            base + label.span.end as usize,
        );
    }
    d
}

impl Pending {
    /// The Fandango parts of the built grammar; `source` is the combined source (the
    /// spec's, in its `Arc`).
    pub fn finish(self, grammar: &Grammar, source: &Arc<SourceFile>) -> FanParts {
        let block = |file: usize, span: Span| FanBlock {
            source: if file == 0 {
                source.clone()
            } else {
                self.files[file].0.clone()
            },
            span,
        };
        // The nodes written at each span (a permutation copies nodes).
        let mut at: HashMap<Span, Vec<crate::ExprId>> = HashMap::new();
        for id in grammar.expr_ids() {
            at.entry(grammar.expr_span(id)).or_default().push(id);
        }
        let nodes = |span: Span, want: fn(&Expr) -> bool| -> Vec<crate::ExprId> {
            at.get(&span)
                .map(|ids| {
                    ids.iter()
                        .copied()
                        .filter(|&id| want(grammar.expr(id)))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut computed_repeats = Vec::new();
        for (repeat, lo, hi) in &self.computed {
            for expr in nodes(*repeat, |e| matches!(e, Expr::Repeat(_))) {
                computed_repeats.push(ComputedRepeat {
                    expr,
                    min: lo.map(|(f, s)| block(f, s)),
                    max: hi.map(|(f, s)| block(f, s)),
                });
            }
        }
        let mut party_refs = Vec::new();
        let mut parties: Vec<String> = Vec::new();
        for (span, sender, receiver) in &self.party_refs {
            let exprs = nodes(*span, |e| matches!(e, Expr::Ref(_)));
            if exprs.is_empty() {
                continue;
            }
            for party in std::iter::once(sender).chain(receiver) {
                if !parties.contains(party) {
                    parties.push(party.clone());
                }
            }
            party_refs.extend(exprs.into_iter().map(|expr| PartyRef {
                expr,
                sender: sender.clone(),
                receiver: receiver.clone(),
            }));
        }
        let bit_terminals: Vec<crate::ExprId> = self
            .bits
            .iter()
            .flat_map(|&span| nodes(span, |e| matches!(e, Expr::Literal(_))))
            .collect();
        let generators = self
            .generators
            .iter()
            .filter_map(|(name, file, span)| {
                Some(FanGenerator {
                    rule: grammar.symbol(name)?,
                    block: block(*file, *span),
                })
            })
            .collect();
        party_refs.sort_by_key(|p| p.expr);
        computed_repeats.sort_by_key(|c| c.expr);
        FanParts {
            python: self.python.iter().map(|&(f, s)| block(f, s)).collect(),
            constraints: self
                .constraints
                .iter()
                .map(|&(f, kind, s)| FanConstraint {
                    kind,
                    block: block(f, s),
                })
                .collect(),
            generators,
            computed_repeats,
            settings: self.settings.iter().map(|&(f, s)| block(f, s)).collect(),
            parties,
            party_refs,
            uses_bits: !bit_terminals.is_empty(),
            bit_terminals,
            includes: self.includes,
            warnings: self.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(StatementKind, &str)> {
        statements(text)
            .unwrap()
            .into_iter()
            .map(|s| (s.kind, &text[s.start..s.end]))
            .collect()
    }

    #[test]
    fn statements_follow_indentation_and_join_python() {
        let text = "import re\nfrom x import y\n\n<start> ::= <a>\n  | <b>\n<a> ::= 'a' := f(\n  1)\n| 'c'\nwhere forall <x> in <a>:\n    g(<x>)\n@dec\ndef f():\n    return 1\nelse_ = 2\ninclude(\"x.fan\")\nsetting <a> weight=2\nminimizing len(<a>)\n";
        assert_eq!(
            kinds(text),
            vec![
                (StatementKind::Python, "import re\nfrom x import y"),
                (StatementKind::Production, "<start> ::= <a>\n  | <b>"),
                (StatementKind::Production, "<a> ::= 'a' := f(\n  1)\n| 'c'"),
                (
                    StatementKind::Constraint(ConstraintKind::Where),
                    "where forall <x> in <a>:\n    g(<x>)"
                ),
                (
                    StatementKind::Python,
                    "@dec\ndef f():\n    return 1\nelse_ = 2"
                ),
                (StatementKind::Include, "include(\"x.fan\")"),
                (StatementKind::Setting, "setting <a> weight=2"),
                (
                    StatementKind::Constraint(ConstraintKind::Minimizing),
                    "minimizing len(<a>)"
                ),
            ]
        );
    }

    #[test]
    fn names_in_python_are_found() {
        let mut out = Vec::new();
        mentioned("int(<a>) < <In:b> and x<y>z", &mut out);
        assert_eq!(out, vec!["a", "b", "y"]);
    }
}
