//! C functions as named locations: programs built with clang's SanitizerCoverage
//! (`-fsanitize-coverage=func,trace-pc-guard`) and thicket's small runtime
//! ([`RUNTIME`], `sancov_rt.c`), run per input like the plain executor. The runtime
//! records each function's first entry as an offset from the program's load base; the
//! offsets are named by the program's own symbol table (`nm --defined-only`), the
//! nearest function symbol at or below each. Functions of shared libraries are not
//! named (their guards report offsets outside the program's symbols and are dropped).

use crate::command::Target;
use crate::outcome::Outcome;
use crate::plain::PlainExecutor;
use crate::{ExecError, Executor, Limits, Location, LocationKind, Trace};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The runtime's C source, to compile and link with the program under test (see its
/// header for the commands).
pub const RUNTIME: &str = include_str!("sancov_rt.c");

/// The marker the runtime puts into a program.
pub const MARKER: &[u8] = b"__THICKET_SANCOV_V1";

/// Runs a SanitizerCoverage-instrumented program per input and names the functions
/// each run entered.
pub struct SancovExecutor {
    inner: PlainExecutor,
    name: String,
    out: PathBuf,
    _dir: crate::reap::TempDir,
    /// Function symbols: (address, name), sorted by address.
    symbols: Vec<(u64, String)>,
    /// Whether the program is position-dependent (ELF `ET_EXEC`): its symbols are
    /// absolute addresses, so offsets get the load base added back.
    absolute: bool,
    covered: Vec<String>,
}

impl SancovExecutor {
    /// An executor for `target`, which must be built with the runtime; reads its symbols
    /// with `nm` (an error if `nm` is missing or the program has no function symbols).
    pub fn new(
        mut target: Target,
        limits: Limits,
        work_dir: Option<&Path>,
    ) -> Result<SancovExecutor, ExecError> {
        let dir = crate::reap::TempDir::new(work_dir)?;
        let out = dir.path().join("sancov");
        target
            .env
            .push(("THICKET_SANCOV_OUT".into(), out.clone().into_os_string()));
        let name = target.name.clone();
        let symbols = function_symbols(&target.program)
            .map_err(|e| ExecError::Usage(format!("target `{name}`: {e}")))?;
        let header = std::fs::read(&target.program)
            .map_err(|e| ExecError::Io(format!("cannot read `{name}`"), e))?;
        // ELF e_type (little-endian) at offset 16: 2 = ET_EXEC.
        let absolute = header.len() > 18 && header[16] == 2 && header[17] == 0;
        Ok(SancovExecutor {
            inner: PlainExecutor::new(target, limits, work_dir)?,
            name,
            out,
            _dir: dir,
            symbols,
            absolute,
            covered: Vec::new(),
        })
    }

    fn symbol_at(&self, address: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.0 <= address);
        (i > 0).then(|| self.symbols[i - 1].1.as_str())
    }
}

/// The program's function symbols (text symbols), sorted by address.
fn function_symbols(program: &Path) -> Result<Vec<(u64, String)>, String> {
    let out = std::process::Command::new("nm")
        .args(["--defined-only"])
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run `nm` to name its functions: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`nm` cannot read its symbols: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut symbols: Vec<(u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let address = u64::from_str_radix(parts.next()?, 16).ok()?;
            let kind = parts.next()?;
            let name = parts.next()?;
            matches!(kind, "T" | "t" | "W" | "w").then(|| (address, name.to_string()))
        })
        .collect();
    if symbols.is_empty() {
        return Err("no function symbols (stripped?): build it without -s".into());
    }
    symbols.sort_unstable();
    Ok(symbols)
}

impl Executor for SancovExecutor {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        std::fs::write(&self.out, b"")
            .map_err(|e| ExecError::Io("cannot reset the coverage file".into(), e))?;
        let outcome = self.inner.run(input)?;
        let data = std::fs::read(&self.out)
            .map_err(|e| ExecError::Io("cannot read the coverage file".into(), e))?;
        self.covered.clear();
        let mut words = data
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
        let base = words.next().unwrap_or(0);
        let offsets: Vec<u64> = words.collect();
        for offset in offsets {
            let address = if self.absolute {
                offset.wrapping_add(base)
            } else {
                offset
            };
            // The call site lies inside the function; the call is at least one byte in.
            if let Some(name) = self.symbol_at(address.wrapping_sub(1))
                && !self.covered.iter().any(|c| c == name)
            {
                self.covered.push(name.to_string());
            }
        }
        self.covered.sort_unstable();
        Ok(outcome)
    }

    fn trace(&self) -> Trace<'_> {
        Trace::None
    }

    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        out.extend(self.covered.iter().map(|f| Location {
            kind: LocationKind::Function,
            file: self.name.clone(),
            name: f.clone(),
        }));
        true
    }

    fn describe(&self) -> String {
        format!(
            "SanitizerCoverage functions (thicket runtime, {} function symbols): {}",
            self.symbols.len(),
            self.name
        )
    }

    fn timeout(&self) -> Duration {
        self.inner.timeout()
    }

    fn set_timeout(&mut self, timeout: Duration) {
        self.inner.set_timeout(timeout);
    }

    fn held_output_runs(&self) -> u64 {
        self.inner.held_output_runs()
    }
}
