//! The inputs of `parse`, `check` and `cover`: files, folders (every file below,
//! recursively, in sorted order), lists of paths (`--files-from`), stdin; each read with
//! a size cap, and each failure reported for its own input without stopping the run.

use clap::Args;
use std::path::PathBuf;

/// Default of `--max-input-size`: 256 MiB.
pub const DEFAULT_MAX_INPUT_SIZE: u64 = 256 << 20;

/// Where the inputs come from.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Inputs: files, folders (every file below them, recursively, sorted by path;
    /// hidden files and folders skipped), or `-` for stdin.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Also read the paths of inputs from FILE, one per line (`-`: stdin), for more
    /// inputs than a command line holds.
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,

    /// Largest input read, in bytes [default: 268435456 = 256 MiB]; a larger input is
    /// reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_INPUT_SIZE, hide_default_value = true)]
    pub max_input_size: u64,
}

pub use thicket_driver::files::{Input, read_path};

impl InputArgs {
    /// Every input in order: the arguments (folders expanded), then the paths listed in
    /// `--files-from`; stdin if there is none (when `stdin_if_none`). Problems with one
    /// entry (a folder that cannot be listed) become that entry's error; only an
    /// unreadable `--files-from` list fails the whole call.
    pub fn collect(&self, stdin_if_none: bool) -> Result<Vec<Input>, String> {
        thicket_driver::files::collect(
            &self.inputs,
            self.files_from.as_deref(),
            self.max_input_size,
            stdin_if_none,
        )
    }

    /// [`InputArgs::collect`], or the exit code after saying why not: the list could not
    /// be read (4), or none was named and stdin is not read for none (2). (An empty
    /// folder or list is no error: it holds no inputs.)
    pub fn collect_or_report(&self, stdin_if_none: bool) -> Result<Vec<Input>, u8> {
        match self.collect(stdin_if_none) {
            Ok(_) if self.inputs.is_empty() && self.files_from.is_none() && !stdin_if_none => {
                eprintln!("error: no inputs: name files or folders, or give --files-from");
                Err(crate::exit::USAGE)
            }
            Ok(inputs) => {
                if inputs.is_empty() {
                    eprintln!("note: no inputs: the folders and lists named hold no files");
                }
                Ok(inputs)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Err(crate::exit::FAILURE)
            }
        }
    }
}
