//! Hot reload: a handle in front of a task that owns the file watcher.
//! Events are debounced, then the folder is rescanned; only changed bytes are
//! recompiled (the runtime caches by content hash).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::error::{Error, Result};
use crate::registry::Registry;

/// Quiet time after the last file event before reloading: writers (cargo,
/// cp) touch a file several times.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// Stops watching when dropped.
pub struct WatchHandle {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub fn watch(registry: Arc<Registry>, root: PathBuf) -> Result<WatchHandle> {
    std::fs::create_dir_all(&root).map_err(|e| Error::Io {
        path: root.clone(),
        source: e,
    })?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            if !matches!(event.kind, notify::EventKind::Access(_)) {
                let _ = tx.send(());
            }
        }
    })
    .map_err(|e| Error::Io {
        path: root.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| Error::Io {
            path: root.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Debounce: wait until no event has arrived for DEBOUNCE.
            while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, rx.recv()).await {}
            registry.scan(&root).await;
        }
    });
    Ok(WatchHandle {
        _watcher: watcher,
        task,
    })
}
