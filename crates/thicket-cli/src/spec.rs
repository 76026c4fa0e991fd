//! Loading a spec from the command line: shared by every subcommand.

use crate::exit;
use clap::Args;
use std::path::PathBuf;
use thicket_constraint::Constraint;
use thicket_driver::{Compiled, ConstraintError, LoadError, SpecFile};
use thicket_grammar::diag::escape_invisible;
use thicket_grammar::{Grammar, Spec, SpecError};
use thicket_solve::{Solver, SolverConfig};

/// Where the spec is and which rule starts it.
#[derive(Args, Debug, Clone)]
pub struct SpecArgs {
    /// The spec: a .fan/.bnf grammar, a .json grammar dictionary, or an ANTLR 4 .g4
    /// grammar (combined, or a parser grammar whose lexer is --lexer or its
    /// `tokenVocab` file beside it). Fandango's `-f FILE` / `--fandango-file FILE` may
    /// name it instead.
    #[arg(value_name = "SPEC")]
    pub spec: PathBuf,

    /// Start rule, with or without angle brackets [default: <start>; for .g4 the first
    /// parser rule]. `-S` / `--start-symbol` as in Fandango.
    #[arg(long, short = 'S', visible_alias = "start-symbol", value_name = "NAME")]
    pub start: Option<String>,

    /// The lexer grammar (.g4) of a parser grammar given as SPEC.
    #[arg(long, value_name = "FILE")]
    pub lexer: Option<PathBuf>,

    /// Largest spec read, in bytes [default: 16777216 = 16 MiB].
    #[arg(long, value_name = "BYTES", default_value_t = thicket_grammar::MAX_SPEC_BYTES, hide_default_value = true)]
    pub max_spec_size: usize,

    /// A directory to look for the files a .fan spec includes (`include("x.fan")`),
    /// before $FANDANGO_PATH, the including file's directory and Fandango's data
    /// directories; repeatable, searched in order.
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
}

impl SpecArgs {
    /// The spec file these arguments name (see [`thicket_driver::SpecFile`]).
    pub fn file(&self) -> SpecFile {
        SpecFile {
            path: self.spec.clone(),
            start: self.start.clone(),
            lexer: self.lexer.clone(),
            max_bytes: self.max_spec_size,
            include_dirs: self.include_dirs.clone(),
        }
    }

    /// Loads the spec and checks its `where` constraints, or prints the errors to stderr
    /// and returns the exit code. Every subcommand refuses a spec whose constraints are
    /// broken, whether or not it uses them; the spec's Python is not started.
    pub fn load(&self) -> Result<Spec, u8> {
        self.compile(true).map(|compiled| compiled.loaded.spec)
    }

    /// The spec compiled whole: its constraints (ISLa or Fandango), goals and
    /// generators, its Python started if they need it; errors printed and the exit code.
    pub fn load_compiled(&self) -> Result<thicket_fandango::LoadedSpec, u8> {
        self.compile(false).map(|compiled| compiled.loaded)
    }

    /// [`SpecArgs::load_compiled`] with the ANTLR reading of a `.g4` spec, and without
    /// starting Python with `no_python` (for reading a spec without evaluating it).
    pub fn compile(&self, no_python: bool) -> Result<Compiled, u8> {
        self.try_compile(no_python).map_err(report_load)
    }

    /// [`SpecArgs::compile`] with the spec's errors returned rather than printed (for
    /// output in another form: `lint --format json`); an ANTLR grammar's warnings about
    /// target code are printed.
    pub fn try_compile(&self, no_python: bool) -> Result<Compiled, LoadError> {
        let compiled = self.file().compile(no_python)?;
        if let Some(antlr) = &compiled.antlr {
            print_warnings(antlr);
        }
        Ok(compiled)
    }

    /// The ANTLR reading of a `.g4` spec (`None` for other specs), its warnings about
    /// target code printed to stderr; errors printed and the exit code.
    pub fn antlr(&self) -> Result<Option<thicket_antlr::AntlrSpec>, u8> {
        let antlr = self.file().antlr().map_err(|e| report(&e))?;
        antlr.iter().for_each(print_warnings);
        Ok(antlr)
    }

    /// Whether the spec's `where` constraints speak about the inputs at hand: they are
    /// about whole inputs, so not when `--start` picks another rule.
    pub fn constraints_apply(&self) -> bool {
        self.file().constraints_apply()
    }
}

fn print_warnings(antlr: &thicket_antlr::AntlrSpec) {
    for (source, warning) in &antlr.warnings {
        eprint!("{}", warning.render(source));
    }
}

/// Constraints given on the command line, beside the spec's own `where` blocks.
#[derive(Args, Debug, Clone, Default)]
pub struct ConstraintArgs {
    /// A file holding one more constraint (ISLa syntax, e.g. a `.isla` file).
    #[arg(long = "constraint", value_name = "FILE")]
    pub constraint_files: Vec<PathBuf>,

    /// One more constraint, given inline.
    #[arg(short = 'c', long = "constraint-text", value_name = "TEXT")]
    pub constraint_texts: Vec<String>,
}

impl ConstraintArgs {
    /// The constraints given on the command line, compiled against the loaded spec
    /// (Fandango's language or ISLa's, as in `where` blocks), or the errors printed and
    /// the exit code. A constraint file is read up to `max_bytes` (the spec's limit,
    /// `--max-spec-size`).
    pub fn compile(
        &self,
        loaded: &thicket_fandango::LoadedSpec,
        max_bytes: usize,
    ) -> Result<Vec<Constraint>, u8> {
        thicket_driver::extra_constraints(
            loaded,
            &self.constraint_files,
            &self.constraint_texts,
            max_bytes,
        )
        .map_err(|e| match e {
            ConstraintError::Unreadable(e) => {
                eprintln!("error: constraint: {e}");
                exit::FAILURE
            }
            ConstraintError::Spec(e) => report(&e),
        })
    }
}

/// The constraints inputs must satisfy and the solver that satisfies them: shared by
/// the subcommands that make inputs (`generate`, `fuzz`).
#[derive(Args, Debug, Clone, Default)]
pub struct SolveArgs {
    #[command(flatten)]
    pub constraints: ConstraintArgs,

    /// Ignore every constraint (the spec's `where` blocks, -c and --constraint): plain
    /// generation from the grammar. By default every generated input satisfies them
    /// all (checked exactly; see docs/solver.md), and `fuzz --valid-only` repairs its
    /// mutants to satisfy them too.
    #[arg(long, conflicts_with_all = ["constraint_files", "constraint_texts"])]
    pub no_constraints: bool,
}

impl SolveArgs {
    /// The spec (see [`SpecArgs::load_compiled`]) and the constraints in force:
    /// its own and those on the command line (constraint files read up to the spec's
    /// size limit), or none with `--no-constraints`; errors printed and the exit code.
    pub fn load(&self, spec: &SpecArgs) -> Result<(Spec, Vec<Constraint>), u8> {
        let (compiled, constraints) = self.load_compiled(spec)?;
        Ok((compiled.loaded.spec, constraints))
    }

    /// [`SolveArgs::load`], keeping the whole compiled spec (its generators and goals).
    pub fn load_compiled(&self, spec: &SpecArgs) -> Result<(Compiled, Vec<Constraint>), u8> {
        let compiled = spec.compile(false)?;
        if self.no_constraints {
            return Ok((compiled, Vec::new()));
        }
        let loaded = &compiled.loaded;
        let mut constraints = loaded.core_constraints();
        constraints.extend(self.constraints.compile(loaded, spec.max_spec_size)?);
        Ok((compiled, constraints))
    }

    /// A solver for `constraints` with the limits `config`, taking the subtrees of
    /// generated rules and computed counts from `parts` (`None` if there are neither
    /// and no `goals` rank its solutions), or the reason it cannot be built
    /// (unsatisfiable, unsupported) printed and exit code 3.
    pub fn solver<'g>(
        grammar: &'g Grammar,
        constraints: Vec<Constraint>,
        config: SolverConfig,
        parts: thicket_fandango::SolverParts,
        goals: bool,
    ) -> Result<Option<Solver<'g>>, u8> {
        thicket_fandango::solver(grammar, constraints, config, parts, goals).map_err(|e| {
            eprintln!("error: {}", escape_invisible(&e.to_string()));
            exit::BAD_SPEC
        })
    }
}

/// Prints why a spec was not loaded and returns the exit code.
pub fn report_load(error: LoadError) -> u8 {
    match error {
        LoadError::Spec(error) => report(&error),
        LoadError::LexerWithoutAntlr => {
            eprintln!("error: --lexer is for ANTLR parser grammars (.g4 specs)");
            exit::USAGE
        }
    }
}

/// The exit code for a spec that has errors: 4 if it could not be read, 3 otherwise.
pub fn spec_error_code(error: &SpecError) -> u8 {
    if error.is_unreadable() {
        exit::FAILURE
    } else {
        exit::BAD_SPEC
    }
}

/// Prints a spec's errors rustc-style and returns the matching exit code.
pub fn report(error: &SpecError) -> u8 {
    eprint!("{}", error.render());
    eprintln!("error: {}", error.summary());
    spec_error_code(error)
}
