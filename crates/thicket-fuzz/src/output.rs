//! The campaign's output folder, in AFL's layout: `queue/`, `crashes/`, `hangs/`, plus
//! `meta/<same path>.json` per saved input (its derivation tree and why it was kept),
//! `stats.json` and `plot_data.csv`. Every file appears atomically (written under
//! `.tmp/`, then renamed), so a campaign killed at any moment leaves only whole files.

use crate::FuzzError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Reads the text of a `meta/*.json` file. Its `"tree"` nests two arrays per tree
/// node; a campaign writes it only for trees at most 60 rule levels
/// deep, so every meta file stays within the nesting serde_json (and other JSON
/// readers) accept by default.
pub fn read_meta(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(text).ok()
}

/// The subfolders holding inputs.
pub const FOLDERS: [&str; 3] = ["queue", "crashes", "hangs"];

/// An output folder, locked for as long as this value lives (`OUT/.lock`, an advisory
/// `flock`, released by the kernel however the process ends).
pub struct OutDir {
    root: PathBuf,
    tmp: PathBuf,
    counter: u64,
    _lock: std::fs::File,
}

impl OutDir {
    /// Opens `root` for a new campaign (it must not hold one already) or, with
    /// `resume`, for continuing the campaign in it.
    pub fn open(root: &Path, resume: bool) -> Result<OutDir, FuzzError> {
        let io = |e| FuzzError::Io(format!("cannot create {}", root.display()), e);
        let lock = if resume {
            if !root.is_dir() {
                return Err(FuzzError::Campaign(format!(
                    "--resume: {} holds no campaign (no stats.json or queue/)",
                    root.display()
                )));
            }
            lock(root)?
        } else {
            refuse_foreign_files(root)?;
            std::fs::create_dir_all(root).map_err(io)?;
            lock(root)?
        };
        let holds_campaign = root.join("stats.json").exists() || root.join("queue").exists();
        if holds_campaign && !resume {
            return Err(FuzzError::Campaign(format!(
                "{} already holds a campaign: continue it with --resume, or choose another folder",
                root.display()
            )));
        }
        if resume && !holds_campaign {
            return Err(FuzzError::Campaign(format!(
                "--resume: {} holds no campaign (no stats.json or queue/)",
                root.display()
            )));
        }
        for folder in FOLDERS {
            std::fs::create_dir_all(root.join(folder)).map_err(io)?;
            std::fs::create_dir_all(root.join("meta").join(folder)).map_err(io)?;
        }
        // Leftovers of an interrupted write (a full disk, a kill) are incomplete by
        // definition: nothing reads them, and they go.
        let tmp = root.join(".tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io)?;
        Ok(OutDir {
            root: root.to_path_buf(),
            tmp,
            counter: 0,
            _lock: lock,
        })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where executors may keep their scratch files.
    pub fn scratch(&self) -> &Path {
        &self.tmp
    }

    /// Writes `bytes` to `relative` (inside the folder) atomically.
    pub fn write(&mut self, relative: &str, bytes: &[u8]) -> Result<(), FuzzError> {
        self.counter += 1;
        let tmp = self
            .tmp
            .join(format!("write-{}-{}", std::process::id(), self.counter));
        let dest = self.root.join(relative);
        let io = |e| FuzzError::Io(format!("cannot write {}", dest.display()), e);
        let mut file = std::fs::File::create(&tmp).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        drop(file);
        std::fs::rename(&tmp, &dest).map_err(io)
    }

    /// Appends a line to `relative` (for `plot_data.csv`; a torn last line is the worst
    /// a kill can do).
    pub fn append(&self, relative: &str, line: &str) -> Result<(), FuzzError> {
        let path = self.root.join(relative);
        let io = |e| FuzzError::Io(format!("cannot write {}", path.display()), e);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)
    }

    /// The input files of a subfolder, sorted by name (AFL ids sort in order).
    pub fn list(&self, folder: &str) -> Result<Vec<(String, PathBuf)>, FuzzError> {
        let dir = self.root.join(folder);
        let io = |e| FuzzError::Io(format!("cannot read {}", dir.display()), e);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("id:") && entry.path().is_file() {
                files.push((name, entry.path()));
            }
        }
        files.sort();
        Ok(files)
    }
}

/// A new campaign goes into a new or empty folder, or one that holds a campaign (which
/// [`OutDir::open`] then refuses with its own message, and a parallel campaign's
/// workers likewise): a folder of the user's own files is refused, since a campaign
/// clears its `.tmp/` and could overwrite others.
pub fn refuse_foreign_files(root: &Path) -> Result<(), FuzzError> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Ok(());
    };
    let campaign = ["stats.json", "queue", "worker-0"]
        .iter()
        .any(|name| root.join(name).exists());
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".lock")
        .collect();
    if campaign || names.is_empty() {
        return Ok(());
    }
    names.sort();
    let shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    Err(FuzzError::Campaign(format!(
        "{} holds files that are not a campaign ({shown}{}): give a new or empty folder, \
         so that nothing of yours is overwritten or removed",
        root.display(),
        if names.len() > 3 { ", ..." } else { "" }
    )))
}

/// Takes the folder's lock, or says which process holds it.
fn lock(root: &Path) -> Result<std::fs::File, FuzzError> {
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    let path = root.join(".lock");
    let io = |e| FuzzError::Io(format!("cannot open {}", path.display()), e);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        return Err(FuzzError::Campaign(format!(
            "{} is in use by another campaign{}: wait for it to end, or choose another folder",
            root.display(),
            if holder.is_empty() {
                String::new()
            } else {
                format!(" (process {holder})")
            }
        )));
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    let _ = writeln!(file, "{}", std::process::id());
    Ok(file)
}

/// The AFL id of a file name (`id:000042,...` gives 42).
pub fn id_of(name: &str) -> Option<usize> {
    name.strip_prefix("id:")?.split(',').next()?.parse().ok()
}

/// Makes a label safe for a file name (letters, digits, `.`, `_`, `-`).
pub fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        assert_eq!(id_of("id:000042,src:000001,op:regen"), Some(42));
        assert_eq!(id_of("README.txt"), None);
        assert_eq!(
            file_safe("python json.decoder.JSONDecodeError"),
            "python_json.decoder.JSONDecodeError"
        );
    }

    #[test]
    fn refuses_to_mix_campaigns() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = OutDir::open(dir.path(), false).unwrap();
        out.write("queue/id:000000,op:gen", b"x").unwrap();
        assert_eq!(out.list("queue").unwrap().len(), 1);
        assert!(OutDir::open(dir.path(), false).is_err());
        drop(out);
        assert!(OutDir::open(dir.path(), true).is_ok());
        let empty = tempfile::tempdir().unwrap();
        assert!(OutDir::open(empty.path(), true).is_err());
    }

    #[test]
    fn a_folder_of_the_users_own_files_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".tmp")).unwrap();
        std::fs::write(dir.path().join(".tmp/important.txt"), b"mine").unwrap();
        let err = OutDir::open(dir.path(), false).err().unwrap().to_string();
        assert!(
            err.contains("not a campaign") && err.contains(".tmp"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(dir.path().join(".tmp/important.txt")).unwrap(),
            b"mine"
        );
        assert!(!dir.path().join("queue").exists());
        assert!(!dir.path().join(".lock").exists());
    }

    #[test]
    fn a_folder_in_use_is_refused_and_leftovers_do_not_matter() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = OutDir::open(dir.path(), false).unwrap();
        out.write("queue/id:000000,op:gen", b"x").unwrap();
        let e = OutDir::open(dir.path(), true).err().unwrap().to_string();
        assert!(
            e.contains("in use by another campaign") && e.contains(&std::process::id().to_string()),
            "{e}"
        );
        drop(out);
        // An interrupted write's leftovers, even unreadable ones, do not stop a resume.
        std::fs::write(dir.path().join(".tmp/write-1-1"), b"half a fi").unwrap();
        std::fs::create_dir_all(dir.path().join(".tmp/write-1-2/x")).unwrap();
        let out = OutDir::open(dir.path(), true).unwrap();
        assert_eq!(std::fs::read_dir(out.scratch()).unwrap().count(), 0);
    }
}
