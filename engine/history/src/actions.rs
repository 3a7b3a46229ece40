//! The `actions` table: one row per action the engine answered, with its
//! events (in `events`) and screenshot files (in `screenshots/`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Failure;
use crate::events::{self, NewEvent};
use crate::screenshots::{self, ScreenshotKind};
use crate::sessions;
use crate::sql::{
    Conditions, RowOwner, json_column, json_text, optional_json_column, optional_json_text,
    page_sql,
};

/// An action to record, as the action loop has it after answering.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewAction {
    /// `None`: the store's current session.
    pub session_id: Option<String>,
    pub tab_id: String,
    /// `click`, `navigate`, a plugin action's name…
    pub action_type: String,
    pub params: Value,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub started_ms: i64,
    pub completed_ms: i64,
    /// The envelope's `timing` object.
    pub timing: Option<Value>,
    /// The envelope's `scroll` object.
    pub scroll: Option<Value>,
    pub virtual_time_ms: Option<i64>,
    /// Events collected during the action; stored in the same transaction.
    pub events: Vec<NewEvent>,
    /// Encoded images (WebP), written to `screenshots/`.
    pub screenshot_before: Option<Vec<u8>>,
    pub screenshot_after: Option<Vec<u8>>,
    /// The `userId` of the tab's owner (`None`: no userId); its events get it too.
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionRecord {
    pub id: String,
    pub session_id: String,
    pub tab_id: String,
    pub action_type: String,
    pub params: Value,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub started_ms: i64,
    pub completed_ms: i64,
    pub duration_ms: i64,
    pub timing: Option<Value>,
    pub scroll: Option<Value>,
    /// Absolute paths (the row stores them relative to the session directory).
    pub screenshot_before: Option<PathBuf>,
    pub screenshot_after: Option<PathBuf>,
    pub virtual_time_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

impl ActionRecord {
    pub fn screenshot_path(&self, kind: ScreenshotKind) -> Option<&Path> {
        match kind {
            ScreenshotKind::Before => self.screenshot_before.as_deref(),
            ScreenshotKind::After => self.screenshot_after.as_deref(),
        }
    }
}

/// Exact-match filters (unset = any), a time window on `started_ms`
/// (`since_ms` inclusive, `until_ms` exclusive) and a page. Results are
/// oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ActionFilter {
    pub session_id: Option<String>,
    pub tab_id: Option<String>,
    #[serde(alias = "type")]
    #[schemars(extend("x-aliases" = ["type"]))]
    pub action_type: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
    /// Set by the caller, never from a query string.
    #[serde(skip)]
    pub owner: RowOwner,
}

const COLUMNS: &str = "id, session_id, tab_id, action_type, params, result, error, started_ms, \
    completed_ms, duration_ms, timing, scroll, screenshot_before, screenshot_after, virtual_time_ms, \
    user_id";

fn from_row(session_dir: &Path, row: &Row<'_>) -> rusqlite::Result<ActionRecord> {
    let absolute = |column: &str| -> rusqlite::Result<Option<PathBuf>> {
        Ok(row
            .get::<_, Option<String>>(column)?
            .map(|relative| session_dir.join(relative)))
    };
    Ok(ActionRecord {
        id: row.get("id")?,
        session_id: row.get("session_id")?,
        tab_id: row.get("tab_id")?,
        action_type: row.get("action_type")?,
        params: json_column(row, "params")?,
        result: optional_json_column(row, "result")?,
        error: row.get("error")?,
        started_ms: row.get("started_ms")?,
        completed_ms: row.get("completed_ms")?,
        duration_ms: row.get("duration_ms")?,
        timing: optional_json_column(row, "timing")?,
        scroll: optional_json_column(row, "scroll")?,
        screenshot_before: absolute("screenshot_before")?,
        screenshot_after: absolute("screenshot_after")?,
        virtual_time_ms: row.get("virtual_time_ms")?,
        user_id: row.get("user_id")?,
    })
}

/// Writes the screenshot files, then the row and its events in one
/// transaction; returns after the commit. Files of a failed insert are removed.
pub(crate) fn record(
    conn: &mut Connection,
    session_dir: &Path,
    id: String,
    session_id: String,
    action: NewAction,
    recorded_ms: i64,
) -> Result<ActionRecord, Failure> {
    sessions::require(conn, &session_id)?;

    let before = action
        .screenshot_before
        .as_ref()
        .map(|_| screenshots::relative_path(&id, ScreenshotKind::Before));
    let after = action
        .screenshot_after
        .as_ref()
        .map(|_| screenshots::relative_path(&id, ScreenshotKind::After));
    let images: Vec<(&str, &[u8])> = [
        (before.as_deref(), action.screenshot_before.as_deref()),
        (after.as_deref(), action.screenshot_after.as_deref()),
    ]
    .into_iter()
    .filter_map(|(path, bytes)| Some((path?, bytes?)))
    .collect();
    let files = screenshots::write_all(session_dir, &images)?;

    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let duration_ms = action.completed_ms.saturating_sub(action.started_ms).max(0);
    tx.execute(
        &format!(
            "INSERT INTO actions ({COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
        ),
        params![
            id,
            session_id,
            action.tab_id,
            action.action_type,
            json_text(&action.params),
            optional_json_text(action.result.as_ref()),
            action.error,
            action.started_ms,
            action.completed_ms,
            duration_ms,
            optional_json_text(action.timing.as_ref()),
            optional_json_text(action.scroll.as_ref()),
            before,
            after,
            action.virtual_time_ms,
            action.user_id,
        ],
    )?;
    for mut event in action.events {
        event.user_id = action.user_id.clone();
        events::insert(&tx, &session_id, Some(&id), event, recorded_ms)?;
    }
    tx.commit()?;
    files.keep();

    Ok(ActionRecord {
        screenshot_before: before.map(|relative| session_dir.join(relative)),
        screenshot_after: after.map(|relative| session_dir.join(relative)),
        id,
        session_id,
        tab_id: action.tab_id,
        action_type: action.action_type,
        params: action.params,
        result: action.result,
        error: action.error,
        started_ms: action.started_ms,
        completed_ms: action.completed_ms,
        duration_ms,
        timing: action.timing,
        scroll: action.scroll,
        virtual_time_ms: action.virtual_time_ms,
        user_id: action.user_id,
    })
}

fn conditions(filter: &ActionFilter) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .equals("session_id", filter.session_id.as_deref())
        .equals("tab_id", filter.tab_id.as_deref())
        .equals("action_type", filter.action_type.as_deref())
        .compare("started_ms", ">=", filter.since_ms)
        .compare("started_ms", "<", filter.until_ms)
        .owned_by("user_id", &filter.owner);
    conditions
}

pub(crate) fn list(
    conn: &Connection,
    session_dir: &Path,
    filter: &ActionFilter,
) -> rusqlite::Result<Vec<ActionRecord>> {
    let conditions = conditions(filter);
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM actions{} ORDER BY started_ms, rowid{}",
        conditions.where_sql(),
        page_sql(filter.limit, filter.offset)
    ))?;
    statement
        .query_map(conditions.params(), |row| from_row(session_dir, row))?
        .collect()
}

pub(crate) fn get(
    conn: &Connection,
    session_dir: &Path,
    id: &str,
) -> rusqlite::Result<Option<ActionRecord>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM actions WHERE id = ?1"),
        [id],
        |row| from_row(session_dir, row),
    )
    .optional()
}

/// What a delete removed from the database; the caller removes the files
/// after the commit.
pub(crate) struct Deleted {
    pub(crate) actions: usize,
    pub(crate) events: usize,
    pub(crate) screenshot_files: Vec<String>,
}

/// Deletes the actions the filter selects (its page included) and their
/// events, in the caller's transaction.
pub(crate) fn delete(conn: &Connection, filter: &ActionFilter) -> rusqlite::Result<Deleted> {
    let conditions = conditions(filter);
    let mut statement = conn.prepare(&format!(
        "SELECT id, screenshot_before, screenshot_after FROM actions{} \
         ORDER BY started_ms, rowid{}",
        conditions.where_sql(),
        page_sql(filter.limit, filter.offset)
    ))?;
    let selected: Vec<(String, Option<String>, Option<String>)> = statement
        .query_map(conditions.params(), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;

    let mut deleted = Deleted {
        actions: 0,
        events: 0,
        screenshot_files: Vec::new(),
    };
    let mut delete_action = conn.prepare_cached("DELETE FROM actions WHERE id = ?1")?;
    for (id, before, after) in selected {
        deleted.events += events::delete_for_action(conn, &id)?;
        deleted.actions += delete_action.execute([&id])?;
        deleted.screenshot_files.extend(before);
        deleted.screenshot_files.extend(after);
    }
    Ok(deleted)
}
