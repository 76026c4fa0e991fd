//! Parallel campaigns by AFL++'s sync protocol: instances share one folder, each
//! writing its own `SYNC/NAME/` (a campaign's output folder: `queue/id:...` files) and
//! now and then reading the queue entries the others added since its last look. A
//! thicket campaign is then a peer of `afl-fuzz -M/-S` instances on the same folder (they
//! import thicket's queue as thicket imports theirs) and of other thicket campaigns
//! (`thicket fuzz -j N` starts N of them).
//!
//! What was read from each peer is recorded in the campaign's own folder,
//! `.synced/<peer>` (the next id to read, as text), so a resumed campaign does not
//! import the same entries again.

use crate::FuzzError;
use crate::output::id_of;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where and how often a campaign syncs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncConfig {
    /// The shared folder; the campaign's output folder is `dir/name`.
    pub dir: PathBuf,
    /// This instance's name (its folder in `dir`).
    pub name: String,
    /// Time between two imports.
    pub every: Duration,
}

/// A peer's queue entry not imported yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerEntry {
    /// The peer's name.
    pub peer: String,
    /// The entry's AFL id in the peer's queue.
    pub id: usize,
    /// The file.
    pub path: PathBuf,
}

/// The peers' queue entries added since the marks in `own/.synced/`, by peer name,
/// then id. A peer is a folder of `config.dir` other than this instance's, with a
/// `queue/` folder.
pub fn new_entries(config: &SyncConfig, own: &Path) -> Result<Vec<PeerEntry>, FuzzError> {
    let io = |what: &Path| {
        let what = what.display().to_string();
        move |e| FuzzError::Io(format!("cannot read {what}"), e)
    };
    let mut peers: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&config.dir).map_err(io(&config.dir))? {
        let entry = entry.map_err(io(&config.dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let queue = entry.path().join("queue");
        if name != config.name && !name.starts_with('.') && queue.is_dir() {
            peers.push((name, queue));
        }
    }
    peers.sort();
    let mut found = Vec::new();
    for (peer, queue) in peers {
        let next = next_id(own, &peer);
        let mut entries: Vec<PeerEntry> = Vec::new();
        for entry in std::fs::read_dir(&queue).map_err(io(&queue))? {
            let entry = entry.map_err(io(&queue))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(id) = id_of(&name)
                && id >= next
                && entry.path().is_file()
            {
                entries.push(PeerEntry {
                    peer: peer.clone(),
                    id,
                    path: entry.path(),
                });
            }
        }
        entries.sort_by_key(|e| e.id);
        found.extend(entries);
    }
    Ok(found)
}

/// The next id to read from `peer` (0 if never read).
fn next_id(own: &Path, peer: &str) -> usize {
    std::fs::read_to_string(own.join(".synced").join(peer))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Records that `peer`'s entries below `next` were read.
pub fn mark_read(own: &Path, peer: &str, next: usize) -> Result<(), FuzzError> {
    let dir = own.join(".synced");
    let io = |e| FuzzError::Io(format!("cannot write {}", dir.display()), e);
    std::fs::create_dir_all(&dir).map_err(io)?;
    let temp = dir.join(format!(".{peer}.tmp"));
    std::fs::write(&temp, format!("{next}\n")).map_err(io)?;
    std::fs::rename(&temp, dir.join(peer)).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_once_per_peer_and_the_own_folder_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        };
        write("me/queue/id:000000,gen");
        write("afl/queue/id:000000,time:0,execs:0,orig:seed");
        write("afl/queue/id:000001,src:000000,+cov");
        write("afl/queue/.state/ignored");
        write("other/queue/id:000003,gen");
        write("other/README.txt");
        write("not-a-peer/notes");
        let config = SyncConfig {
            dir: dir.path().to_path_buf(),
            name: "me".into(),
            every: Duration::from_secs(1),
        };
        let own = dir.path().join("me");
        let found = new_entries(&config, &own).unwrap();
        let ids: Vec<(String, usize)> = found.iter().map(|e| (e.peer.clone(), e.id)).collect();
        assert_eq!(
            ids,
            [("afl".into(), 0), ("afl".into(), 1), ("other".into(), 3)]
        );
        mark_read(&own, "afl", 2).unwrap();
        mark_read(&own, "other", 4).unwrap();
        assert!(new_entries(&config, &own).unwrap().is_empty());
        write("afl/queue/id:000002,src:000001");
        let found = new_entries(&config, &own).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].peer.as_str(), found[0].id), ("afl", 2));
    }
}
