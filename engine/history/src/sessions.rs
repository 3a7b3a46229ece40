//! The `sessions` table: one row per engine run recorded in this database.

use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Failure};
use crate::sql::{json_column, json_text};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionRecord {
    pub id: String,
    pub started_ms: i64,
    /// `None` while the session runs, or if the process died before ending it.
    pub ended_ms: Option<i64>,
    pub session_dir: PathBuf,
    /// Whatever the caller passed to `start_session` (browser version, flags…).
    pub metadata: Value,
}

const COLUMNS: &str = "id, started_ms, ended_ms, session_dir, metadata";

fn from_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        id: row.get("id")?,
        started_ms: row.get("started_ms")?,
        ended_ms: row.get("ended_ms")?,
        session_dir: PathBuf::from(row.get::<_, String>("session_dir")?),
        metadata: json_column(row, "metadata")?,
    })
}

pub(crate) fn insert(conn: &Connection, session: &SessionRecord) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO sessions (id, started_ms, ended_ms, session_dir, metadata)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            session.id,
            session.started_ms,
            session.ended_ms,
            session.session_dir.to_string_lossy(),
            json_text(&session.metadata),
        ],
    )?;
    Ok(())
}

/// Sets `ended_ms` unless already set (ending twice keeps the first time).
pub(crate) fn end(conn: &Connection, id: &str, ended_ms: i64) -> Result<SessionRecord, Failure> {
    conn.execute(
        "UPDATE sessions SET ended_ms = ?2 WHERE id = ?1 AND ended_ms IS NULL",
        params![id, ended_ms],
    )?;
    get(conn, id)?.ok_or_else(|| not_found(id).into())
}

pub(crate) fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionRecord>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()
}

/// Oldest first.
pub(crate) fn list(conn: &Connection) -> rusqlite::Result<Vec<SessionRecord>> {
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM sessions ORDER BY started_ms, rowid"
    ))?;
    statement.query_map([], from_row)?.collect()
}

/// Fails with `NotFound` unless the session exists: a clearer answer than
/// the foreign-key error SQLite would give.
pub(crate) fn require(conn: &Connection, id: &str) -> Result<(), Failure> {
    let exists = conn
        .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some();
    if exists {
        Ok(())
    } else {
        Err(not_found(id).into())
    }
}

fn not_found(id: &str) -> Error {
    Error::NotFound {
        kind: "session",
        id: id.to_owned(),
    }
}
