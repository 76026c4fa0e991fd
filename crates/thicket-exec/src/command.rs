//! The program under test: which program, its arguments, and how an input reaches it.

use crate::ExecError;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The placeholder in a target's arguments that stands for the input (AFL's convention).
pub const PLACEHOLDER: &str = "@@";

/// How an input reaches the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    /// On standard input (read from a file, so the program may seek).
    Stdin,
    /// In a file whose path replaces `@@` in the arguments.
    File,
    /// As an argument: the input's bytes replace `@@` (appended if there is none). An
    /// argument cannot hold a NUL byte, so the input is cut at its first NUL.
    Arg,
}

/// A program to run, with its arguments and the way inputs are delivered.
#[derive(Clone, Debug)]
pub struct Target {
    /// The program as the user named it (for messages).
    pub name: String,
    /// The program's resolved path.
    pub program: PathBuf,
    /// The arguments, possibly containing `@@`.
    pub args: Vec<OsString>,
    /// How inputs are delivered.
    pub mode: InputMode,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
}

impl Target {
    /// A target from a command line (`argv[0]` is the program). The mode is `File` if an
    /// argument contains `@@`, else `Stdin`, unless `mode` says otherwise. Fails with a
    /// clear error if the program does not exist or cannot be executed.
    pub fn new(argv: &[OsString], mode: Option<InputMode>) -> Result<Target, ExecError> {
        let (first, args) = argv.split_first().ok_or(ExecError::NoCommand)?;
        let name = first.to_string_lossy().into_owned();
        let program = resolve(first).ok_or_else(|| not_found(first, &name))?;
        check_executable(&program, &name)?;
        let has_placeholder = args
            .iter()
            .any(|a| contains(a.as_bytes(), PLACEHOLDER.as_bytes()));
        let mode = mode.unwrap_or(if has_placeholder {
            InputMode::File
        } else {
            InputMode::Stdin
        });
        if mode == InputMode::File && !has_placeholder {
            return Err(ExecError::Usage(format!(
                "the input is to go to a file, but no argument of `{name}` contains @@ (where the file's path goes)"
            )));
        }
        Ok(Target {
            name,
            program,
            args: args.to_vec(),
            mode,
            env: Vec::new(),
        })
    }

    /// The arguments for one run: `@@` replaced by `file` (mode `File`) or by the input
    /// (mode `Arg`, appended if there is no `@@`).
    pub fn args_for(&self, file: &Path, input: &[u8]) -> Vec<OsString> {
        match self.mode {
            InputMode::Stdin => self.args.clone(),
            InputMode::File => self
                .args
                .iter()
                .map(|a| replace(a, file.as_os_str().as_bytes()))
                .collect(),
            InputMode::Arg => {
                let input = &input[..input.iter().position(|&b| b == 0).unwrap_or(input.len())];
                let mut args: Vec<OsString> = self.args.iter().map(|a| replace(a, input)).collect();
                if !self
                    .args
                    .iter()
                    .any(|a| contains(a.as_bytes(), PLACEHOLDER.as_bytes()))
                {
                    args.push(OsString::from_vec(input.to_vec()));
                }
                args
            }
        }
    }

    /// The command line for messages, e.g. `./target @@`.
    pub fn display(&self) -> String {
        let mut out = self.name.clone();
        for a in &self.args {
            out.push(' ');
            out.push_str(&a.to_string_lossy());
        }
        out
    }

    /// Whether the program is linked with thicket's SanitizerCoverage runtime (its
    /// marker string).
    pub fn has_sancov_runtime(&self) -> bool {
        std::fs::read(&self.program)
            .map(|bytes| contains(&bytes, crate::sancov::MARKER))
            .unwrap_or(false)
    }

    /// Whether the program file contains AFL++'s instrumentation (the name of the shared
    /// memory variable its runtime reads, as `afl-fuzz` checks).
    pub fn is_afl_instrumented(&self) -> bool {
        std::fs::read(&self.program)
            .map(|bytes| contains(&bytes, b"__AFL_SHM_ID"))
            .unwrap_or(false)
    }
}

fn replace(arg: &OsStr, with: &[u8]) -> OsString {
    let bytes = arg.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + with.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(PLACEHOLDER.as_bytes()) {
            out.extend_from_slice(with);
            i += PLACEHOLDER.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    OsString::from_vec(out)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Why a program was not found: a name without `/` that is a folder or a file here
/// rather than a program on `PATH` gets a hint.
fn not_found(program: &OsStr, name: &str) -> ExecError {
    let here = Path::new(program);
    if here.is_dir() {
        return ExecError::NotExecutable(
            name.to_string(),
            "it is a directory (give the program inside it)".into(),
        );
    }
    if here.is_file() {
        return ExecError::NotExecutable(
            name.to_string(),
            format!("it is not on PATH; for the file in this folder write ./{name}"),
        );
    }
    ExecError::NotFound(name.to_string())
}

/// The path of a program: as given if it contains a `/`, else searched in `PATH`.
fn resolve(program: &OsStr) -> Option<PathBuf> {
    let path = Path::new(program);
    if program.as_bytes().contains(&b'/') {
        return path.exists().then(|| path.to_path_buf());
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn check_executable(path: &Path, name: &str) -> Result<(), ExecError> {
    let meta = std::fs::metadata(path).map_err(|_| ExecError::NotFound(name.to_string()))?;
    if meta.is_dir() {
        return Err(ExecError::NotExecutable(
            name.to_string(),
            "it is a directory".into(),
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(ExecError::NotExecutable(
            name.to_string(),
            "it has no execute permission".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<OsString> {
        items.iter().map(OsString::from).collect()
    }

    #[test]
    fn mode_follows_the_placeholder() {
        let t = Target::new(&argv(&["cat"]), None).unwrap();
        assert_eq!(t.mode, InputMode::Stdin);
        let t = Target::new(&argv(&["cat", "--", "@@"]), None).unwrap();
        assert_eq!(t.mode, InputMode::File);
        assert_eq!(
            t.args_for(Path::new("/tmp/x"), b""),
            argv(&["--", "/tmp/x"])
        );
    }

    #[test]
    fn argument_mode_replaces_or_appends_and_cuts_at_nul() {
        let t = Target::new(&argv(&["echo", "-n"]), Some(InputMode::Arg)).unwrap();
        assert_eq!(t.args_for(Path::new("f"), b"ab\0cd"), argv(&["-n", "ab"]));
        let t = Target::new(&argv(&["echo", "x=@@"]), Some(InputMode::Arg)).unwrap();
        assert_eq!(t.args_for(Path::new("f"), b"1"), argv(&["x=1"]));
    }

    #[test]
    fn missing_and_unexecutable_programs_are_named() {
        let e = Target::new(&argv(&["./no-such-target-here"]), None).unwrap_err();
        assert!(e.to_string().contains("./no-such-target-here"), "{e}");
        let e = Target::new(&argv(&["no-such-program-on-path-xyz"]), None).unwrap_err();
        assert!(matches!(e, ExecError::NotFound(_)));
        let e = Target::new(&argv(&["/"]), None).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        // A folder named without a slash is a folder, not a missing program.
        let e = Target::new(&argv(&["src"]), None).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let file = tempfile::NamedTempFile::new().unwrap();
        let e = Target::new(&[file.path().as_os_str().to_owned()], None).unwrap_err();
        assert!(e.to_string().contains("execute permission"), "{e}");
        let e = Target::new(&argv(&["cat"]), Some(InputMode::File)).unwrap_err();
        assert!(e.to_string().contains("@@"), "{e}");
    }
}
