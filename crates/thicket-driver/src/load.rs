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
}
