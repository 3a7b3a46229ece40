//! wabp-history: the flight recorder. Every answered action, the events it
//! saw, its before/after screenshots, and tagged network calls, kept in one
//! SQLite database per session directory (ABP's "History" and "Network
//! Capture").
//!
//! # Storage layout
//!
//! ```text
//! <session_dir>/
//!   history.db            sessions, actions, events, network_calls (+ -wal, -shm)
//!   screenshots/
//!     <action_id>_before.webp
//!     <action_id>_after.webp
//! ```
//!
//! Screenshots are files, not blobs: rows stay small and the images can be
//! served or copied as they are. A row stores the path relative to the session
//! directory (so the directory can be moved whole); records expose it absolute.
//! The schema is versioned with `PRAGMA user_version`; `schema::MIGRATIONS` is
//! applied in order, one transaction per step, when the store opens.
//!
//! # Durability
//!
//! WAL journal with `synchronous=FULL`. The rule is: once
//! [`HistoryStore::record_action`] has answered, the action is on disk. In WAL
//! mode, `NORMAL` would already survive a killed process (the commit is in the
//! OS page cache), but a power loss could drop the last commits; `FULL` fsyncs
//! the WAL on every commit, so it survives that too. The cost is one fsync per
//! recorded action (plus one per screenshot file and one for the directory),
//! small next to an action's own time, and it is paid on the writer thread,
//! never on the async runtime. Screenshot files are written to a temporary
//! name, fsynced and renamed into place *before* the row is committed, so a
//! committed row never points at a missing or partial file; if the commit
//! fails they are removed.
//!
//! # Threading
//!
//! [`HistoryStore`] is a cheap, cloneable (`Send + Sync`) handle over two std
//! threads, each owning one `rusqlite::Connection`:
//! - the **writer** runs every write in order; each public write is one
//!   transaction, committed before its `async fn` returns;
//! - the **reader** (a `query_only` connection) runs queries, exports and
//!   screenshot reads, so a large export never delays a recording; WAL lets
//!   it read while the writer commits, and it sees every write that has
//!   already answered.
//!
//! Calls send a closure over a channel and await a `tokio::sync::oneshot`.
//! A failed statement is an `Err` answer and the thread goes on; if a thread
//! has stopped (after [`HistoryStore::close`], or if it died) calls fail with
//! [`Error::Closed`] instead of hanging. A caller that stops waiting does not
//! cancel its write: the job still commits.

mod actions;
mod error;
mod events;
pub mod har;
mod ids;
mod lane;
mod network;
mod schema;
mod screenshots;
mod sessions;
mod sql;
mod store;

pub use actions::{ActionFilter, ActionRecord, NewAction};
pub use error::{Error, Result, StorageFault};
pub use events::{EventFilter, EventRecord, NewEvent};
pub use ids::now_ms;
pub use network::{NetworkCall, NetworkFilter};
pub use screenshots::ScreenshotKind;
pub use sessions::SessionRecord;
pub use sql::RowOwner;
pub use store::{
    ActionScreenshots, DATABASE_FILE, DeletedCounts, HistoryOptions, HistoryStore, PrunedSessions,
    SessionExport,
};

#[cfg(test)]
mod tests;
