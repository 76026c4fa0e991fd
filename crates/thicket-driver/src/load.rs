//! A spec read from a file, in any format, and compiled.

use std::path::{Path, PathBuf};
use thicket_antlr::AntlrSpec;
use thicket_fandango::LoadedSpec;
use thicket_grammar::{LoadOptions, Spec, SpecError};

/// Where a spec is and how to read it.
#[derive(Clone, Debug)]
pub struct SpecFile {
    /// The spec: `.fan`, `.bnf`, a `.json` grammar dictionary, or an ANTLR 4 `.g4`
    /// grammar.
    pub path: PathBuf,
    /// The start rule, with or without angle brackets; `None`: `<start>` (for `.g4`,
    /// the first parser rule).
    pub start: Option<String>,
    /// The lexer grammar of a `.g4` parser grammar; `None`: its `tokenVocab` file
    /// beside it, if any.
    pub lexer: Option<PathBuf>,
    /// The largest spec read, in bytes.
    pub max_bytes: usize,
    /// Directories to look for the files a `.fan` spec includes, searched first.
    pub include_dirs: Vec<PathBuf>,
}

/// Why a spec was not loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The spec's errors.
    Spec(SpecError),
    /// A lexer grammar was given for a spec that is no ANTLR parser grammar.
    LexerWithoutAntlr,
}

/// A compiled spec, and for an ANTLR grammar its exact reading beside it.
pub struct Compiled {
    /// The spec compiled whole: its constraints, goals and generators.
    pub loaded: LoadedSpec,
    /// The ANTLR reading of a `.g4` spec (its byte grammar is `loaded`'s), with its
    /// warnings about target code.
    pub antlr: Option<AntlrSpec>,
}

/// Why a constraint given beside a spec was not compiled.
#[derive(Debug)]
pub enum ConstraintError {
    /// Its file could not be read, or is not UTF-8 (the message names the file).
    Unreadable(String),
    /// The constraint's errors.
    Spec(SpecError),
}

/// Goals given beside a spec (a user's `--minimize EXPR` and `--maximize EXPR`, as a
/// spec's `minimizing` and `maximizing`), added after the spec's own; each is named
/// `<--minimize N>` or `<--maximize N>` in messages.
pub fn add_goals(
    loaded: &mut thicket_fandango::LoadedSpec,
    minimize: &[String],
    maximize: &[String],
) -> Result<(), SpecError> {
    for (flag, smaller, goals) in [
        ("--minimize", true, minimize),
        ("--maximize", false, maximize),
    ] {
        for (i, text) in goals.iter().enumerate() {
            loaded.add_goal(&format!("<{flag} {}>", i + 1), text, smaller)?;
        }
    }
    Ok(())
}

/// Constraints given beside a spec (a user's `--constraint FILE` and `-c TEXT`),
/// compiled against it in its language (Fandango's or ISLa's, as in `where` blocks).
/// A file is read up to `max_bytes` (the spec's limit); a UTF-8 byte order mark is not
/// part of its text. An inline text is named `<-c N>` in messages.
pub fn extra_constraints(
    loaded: &LoadedSpec,
    files: &[PathBuf],
    texts: &[String],
    max_bytes: usize,
) -> Result<Vec<thicket_constraint::Constraint>, ConstraintError> {
    let mut constraints = Vec::new();
    for path in files {
        let bytes = crate::files::read_path(path, max_bytes as u64, "--max-spec-size")
            .map_err(ConstraintError::Unreadable)?;
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let text = String::from_utf8(bytes.to_vec()).map_err(|e| {
            ConstraintError::Unreadable(format!("{} is not UTF-8: {e}", path.display()))
        })?;
        let name = path.display().to_string();
        let compiled = loaded.extra_constraint(&name, &text);
        constraints.push(compiled.map_err(ConstraintError::Spec)?.constraint);
    }
    for (i, text) in texts.iter().enumerate() {
        let name = format!("<-c {}>", i + 1);
        let compiled = loaded.extra_constraint(&name, text);
        constraints.push(compiled.map_err(ConstraintError::Spec)?.constraint);
    }
    Ok(constraints)
}

impl SpecFile {
    /// The spec at `path`, with the default start rule and limits.
    pub fn new(path: impl Into<PathBuf>) -> SpecFile {
        SpecFile {
            path: path.into(),
            start: None,
            lexer: None,
            max_bytes: thicket_grammar::MAX_SPEC_BYTES,
            include_dirs: Vec::new(),
        }
    }

    /// The start rule asked for, without angle brackets.
    fn start_rule(&self) -> Option<&str> {
        self.start
            .as_deref()
            .map(|s| s.trim_start_matches('<').trim_end_matches('>'))
    }

    /// Whether the spec's `where` constraints speak about the inputs at hand: they are
    /// about whole inputs, so not when [`SpecFile::start`] picks another rule.
    pub fn constraints_apply(&self) -> bool {
        self.start_rule()
            .is_none_or(|s| s == thicket_grammar::DEFAULT_START)
    }

    /// The ANTLR reading of a `.g4` spec (with its lexer grammar), `None` for other
    /// specs.
    pub fn antlr(&self) -> Result<Option<AntlrSpec>, SpecError> {
        if !thicket_antlr::is_g4(&self.path) {
            return Ok(None);
        }
        let mut paths = vec![self.path.clone()];
        paths.extend(
            self.lexer
                .clone()
                .or_else(|| thicket_antlr::lexer_beside(&self.path)),
        );
        let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        thicket_antlr::load_g4_files(&paths, self.start_rule(), self.max_bytes).map(Some)
    }

    /// The spec's grammar, its `where` constraints not compiled, and the ANTLR reading
    /// of a `.g4` spec.
    pub fn read(&self) -> Result<(Spec, Option<AntlrSpec>), LoadError> {
        if let Some(antlr) = self.antlr().map_err(LoadError::Spec)? {
            return Ok((antlr.spec.clone(), Some(antlr)));
        }
        if self.lexer.is_some() {
            return Err(LoadError::LexerWithoutAntlr);
        }
        let options = LoadOptions {
            start: self
                .start_rule()
                .unwrap_or(thicket_grammar::DEFAULT_START)
                .to_string(),
            max_bytes: self.max_bytes,
            include_dirs: self.include_dirs.clone(),
        };
        let spec =
            thicket_grammar::load_spec_file(&self.path, &options).map_err(LoadError::Spec)?;
        Ok((spec, None))
    }

    /// The spec compiled whole ([`thicket_fandango::compile`]): its constraints (none
    /// when they do not apply, see [`SpecFile::constraints_apply`]), goals and
    /// generators; with `no_python` the spec's Python is not started (for reading a
    /// spec without evaluating it).
    pub fn compile(&self, no_python: bool) -> Result<Compiled, LoadError> {
        let (spec, antlr) = self.read()?;
        let options = thicket_fandango::Options {
            without_constraints: !self.constraints_apply(),
            no_python,
            ..Default::default()
        };
        let loaded = thicket_fandango::compile(spec, &options).map_err(LoadError::Spec)?;
        Ok(Compiled { loaded, antlr })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lexer_is_refused_beside_a_spec_that_is_no_antlr_grammar() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fan");
        std::fs::write(&path, "<start> ::= \"a\"\n").unwrap();
        let mut file = SpecFile::new(&path);
        assert!(file.compile(true).unwrap().antlr.is_none());
        file.lexer = Some(dir.path().join("L.g4"));
        assert!(matches!(file.read(), Err(LoadError::LexerWithoutAntlr)));
    }

    #[test]
    fn another_start_rule_sets_the_constraints_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fan");
        std::fs::write(
            &path,
            "<start> ::= <d>\n<d> ::= \"1\" | \"2\"\nwhere str(<d>) == \"1\"\n",
        )
        .unwrap();
        let mut file = SpecFile::new(&path);
        assert_eq!(file.compile(true).unwrap().loaded.constraints.len(), 1);
        file.start = Some("<d>".to_string());
        assert!(!file.constraints_apply());
        assert!(file.compile(true).unwrap().loaded.constraints.is_empty());
    }

    #[test]
    fn extra_constraints_are_read_without_a_byte_order_mark_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.bnf");
        std::fs::write(&path, "<start> ::= <d>\n<d> ::= \"1\" | \"2\"\n").unwrap();
        let loaded = SpecFile::new(&path).compile(true).unwrap().loaded;
        let file = dir.path().join("c.isla");
        std::fs::write(&file, "\u{feff}str.len(<d>) = 1").unwrap();
        let texts = ["<d> = \"1\"".to_string()];
        let both = extra_constraints(&loaded, std::slice::from_ref(&file), &texts, 1 << 20);
        assert_eq!(both.unwrap().len(), 2);
        let bad = ["<nope> = \"1\"".to_string()];
        match extra_constraints(&loaded, &[], &bad, 1 << 20) {
            Err(ConstraintError::Spec(e)) => assert_eq!(e.source.name(), "<-c 1>"),
            _ => panic!("an unknown rule is an error"),
        }
    }
}
