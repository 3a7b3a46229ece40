//! Screenshot files: `<session_dir>/screenshots/<action_id>_{before,after}.webp`.
//!
//! Images live beside the database rather than in it: rows stay small, WAL
//! traffic stays small, and the files can be served or copied as they are.
//! A row stores the path relative to the session directory, so a session
//! directory can be moved or archived as a whole.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Failure;

pub(crate) const DIR: &str = "screenshots";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScreenshotKind {
    Before,
    After,
}

impl ScreenshotKind {
    fn suffix(self) -> &'static str {
        match self {
            ScreenshotKind::Before => "before",
            ScreenshotKind::After => "after",
        }
    }
}

/// `screenshots/<action_id>_<kind>.webp`, relative to the session directory.
pub(crate) fn relative_path(action_id: &str, kind: ScreenshotKind) -> String {
    format!("{DIR}/{action_id}_{}.webp", kind.suffix())
}

/// Files written for an action that is not committed yet. Dropping it
/// removes them, so a failed insert leaves no orphan files; `keep` once the
/// row is committed.
pub(crate) struct PendingFiles {
    paths: Vec<PathBuf>,
}

impl PendingFiles {
    pub(crate) fn keep(mut self) {
        self.paths.clear();
    }
}

impl Drop for PendingFiles {
    fn drop(&mut self) {
        for path in &self.paths {
            let _ = fs::remove_file(path);
        }
    }
}

/// Writes each image durably: to a temporary name, fsync, rename into place,
/// then fsync the directory so the rename itself survives power loss. A
/// reader never sees a half-written file.
pub(crate) fn write_all(
    session_dir: &Path,
    images: &[(&str, &[u8])],
) -> Result<PendingFiles, Failure> {
    let mut pending = PendingFiles { paths: Vec::new() };
    if images.is_empty() {
        return Ok(pending);
    }
    let dir = session_dir.join(DIR);
    fs::create_dir_all(&dir).map_err(Failure::io(&dir))?;
    for (relative, bytes) in images {
        let path = session_dir.join(relative);
        let temporary = path.with_extension("webp.tmp");
        let written = File::create(&temporary)
            .and_then(|mut file| {
                file.write_all(bytes)?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temporary, &path));
        if let Err(error) = written {
            let _ = fs::remove_file(&temporary);
            return Err(Failure::io(&path)(error));
        }
        pending.paths.push(path);
    }
    sync_dir(&dir)?;
    Ok(pending)
}

/// Removes files of deleted actions. The rows are already gone, so a file
/// that cannot be removed is only an orphan: logged, not an error.
pub(crate) fn remove_all(session_dir: &Path, relative_paths: &[String]) {
    for relative in relative_paths {
        let path = session_dir.join(relative);
        if let Err(error) = fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %error, "could not remove screenshot");
        }
    }
}

/// Removes every action screenshot file, including orphans a crash left
/// between writing the files and committing the row (`delete_all` only: no
/// row may point into the directory afterwards).
pub(crate) fn remove_every_action_file(session_dir: &Path) {
    let dir = session_dir.join(DIR);
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("act_")
            && let Err(error) = fs::remove_file(entry.path())
        {
            tracing::warn!(path = %entry.path().display(), %error, "could not remove screenshot");
        }
    }
}

fn sync_dir(dir: &Path) -> Result<(), Failure> {
    // Opening a directory read-only and fsyncing it is how POSIX makes a
    // rename durable. Other platforms have no such call; skip it there.
    #[cfg(unix)]
    File::open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(Failure::io(dir))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Bytes of every screenshot file of the session directory.
pub(crate) fn bytes_on_disk(session_dir: &Path) -> u64 {
    fs::read_dir(session_dir.join(DIR))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}
