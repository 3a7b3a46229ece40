//! Opening connections and migrating the schema.
//!
//! The schema version lives in `PRAGMA user_version`. `MIGRATIONS[i]` takes a
//! database from version `i` to `i + 1`; each runs in its own immediate
//! transaction together with the version bump, so a crash mid-migration
//! leaves the previous version intact. Never edit a shipped migration: append.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::{Error, Failure, StorageFault};

pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: sessions, actions (with screenshot file paths), events, network calls.
    "
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        started_ms  INTEGER NOT NULL,
        ended_ms    INTEGER,
        session_dir TEXT NOT NULL,
        metadata    TEXT NOT NULL
    ) STRICT;

    CREATE TABLE actions (
        id                TEXT PRIMARY KEY,
        session_id        TEXT NOT NULL REFERENCES sessions(id),
        tab_id            TEXT NOT NULL,
        action_type       TEXT NOT NULL,
        params            TEXT NOT NULL,
        result            TEXT,
        error             TEXT,
        started_ms        INTEGER NOT NULL,
        completed_ms      INTEGER NOT NULL,
        duration_ms       INTEGER NOT NULL,
        timing            TEXT,
        scroll            TEXT,
        screenshot_before TEXT,
        screenshot_after  TEXT,
        virtual_time_ms   INTEGER
    ) STRICT;
    CREATE INDEX actions_by_session ON actions(session_id, started_ms);
    CREATE INDEX actions_by_started ON actions(started_ms);

    CREATE TABLE events (
        id              TEXT PRIMARY KEY,
        session_id      TEXT NOT NULL REFERENCES sessions(id),
        action_id       TEXT REFERENCES actions(id),
        tab_id          TEXT NOT NULL,
        event_type      TEXT NOT NULL,
        virtual_time_ms INTEGER,
        data            TEXT NOT NULL,
        recorded_ms     INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX events_by_session ON events(session_id);
    CREATE INDEX events_by_action ON events(action_id);

    -- action_id has no foreign key: calls are saved under a tag while the
    -- action that caused them is still running, before its row exists.
    CREATE TABLE network_calls (
        id                      TEXT PRIMARY KEY,
        session_id              TEXT REFERENCES sessions(id),
        tag                     TEXT NOT NULL,
        tab_id                  TEXT NOT NULL,
        action_id               TEXT,
        url                     TEXT NOT NULL,
        method                  TEXT NOT NULL,
        status                  INTEGER,
        resource_type           TEXT NOT NULL,
        request_headers         TEXT NOT NULL,
        response_headers        TEXT NOT NULL,
        request_body            TEXT,
        response_body           TEXT,
        request_body_truncated  INTEGER NOT NULL DEFAULT 0,
        response_body_truncated INTEGER NOT NULL DEFAULT 0,
        body_encoding           TEXT,
        timing_ms               REAL,
        timestamp_ms            INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX network_by_tag ON network_calls(tag);
    CREATE INDEX network_by_session ON network_calls(session_id);
    ",
    // 2: the `userId` each row was recorded for (NULL: none), so a user reads
    // and deletes only their own history and network calls.
    "
    ALTER TABLE actions ADD COLUMN user_id TEXT;
    ALTER TABLE events ADD COLUMN user_id TEXT;
    ALTER TABLE network_calls ADD COLUMN user_id TEXT;
    CREATE INDEX actions_by_user ON actions(user_id, started_ms);
    CREATE INDEX events_by_user ON events(user_id);
    CREATE INDEX network_by_user ON network_calls(user_id);
    ",
    // 3: which interception rule or plugin answered a call (NULL: none).
    "
    ALTER TABLE network_calls ADD COLUMN intercepted_by TEXT;
    ",
];

/// The schema version this build writes.
pub(crate) fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Opens (creating) the database for the writer thread: WAL, FULL sync,
/// foreign keys, busy timeout; then migrates.
pub(crate) fn open_writer(path: &Path, busy_timeout: Duration) -> Result<Connection, Failure> {
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(busy_timeout)?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        // Some file systems (e.g. network mounts) cannot do WAL; SQLite falls
        // back to a rollback journal, which is still durable, only slower.
        tracing::warn!(path = %path.display(), mode, "history database is not in WAL mode");
    }
    // FULL: every commit fsyncs the WAL, so an answered action survives power
    // loss too, not only a killed process (see the crate docs).
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// Opens the reader thread's connection: same file, never writes.
pub(crate) fn open_reader(path: &Path, busy_timeout: Duration) -> Result<Connection, Failure> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(busy_timeout)?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(conn)
}

/// Applies the migrations this database has not seen yet, one transaction each.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), Failure> {
    loop {
        // Immediate: take the write lock before reading the version, so two
        // processes opening the same file cannot both apply a migration.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version < 0 || version > current_version() {
            return Err(Error::Storage {
                operation: "open",
                fault: StorageFault::Incompatible,
                message: format!(
                    "the database has schema version {version}; this build knows up to {}",
                    current_version()
                ),
            }
            .into());
        }
        let Some(migration) = usize::try_from(version)
            .ok()
            .and_then(|index| MIGRATIONS.get(index))
        else {
            return Ok(()); // up to date; dropping `tx` ends the empty transaction
        };
        tx.execute_batch(migration)?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
}
