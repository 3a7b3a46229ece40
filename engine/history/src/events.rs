//! The `events` table: what happened in a tab (navigation, dialog, popup…),
//! usually during an action (`action_id`), sometimes between actions.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids;
use crate::sql::{Conditions, RowOwner, json_column, json_text, page_sql};

/// An event to record; the store adds ids, session, action and time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewEvent {
    pub tab_id: String,
    /// ABP event type: `navigation`, `dialog`, `popup`, `download_started`…
    pub event_type: String,
    pub virtual_time_ms: Option<i64>,
    pub data: Value,
    /// The tab owner's `userId`; an action's events take the action's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// A recorded event. Serialised with `type` for `event_type`, like the
/// events in an action envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventRecord {
    pub id: String,
    pub session_id: String,
    pub action_id: Option<String>,
    pub tab_id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub virtual_time_ms: Option<i64>,
    pub data: Value,
    pub recorded_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// Exact-match filters (unset = any) and a page. Results are in recording
/// order, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct EventFilter {
    pub session_id: Option<String>,
    pub action_id: Option<String>,
    pub tab_id: Option<String>,
    #[serde(alias = "type")]
    #[schemars(extend("x-aliases" = ["type"]))]
    pub event_type: Option<String>,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
    /// Set by the caller, never from a query string.
    #[serde(skip)]
    pub owner: RowOwner,
}

const COLUMNS: &str =
    "id, session_id, action_id, tab_id, event_type, virtual_time_ms, data, recorded_ms, user_id";

fn from_row(row: &Row<'_>) -> rusqlite::Result<EventRecord> {
    Ok(EventRecord {
        id: row.get("id")?,
        session_id: row.get("session_id")?,
        action_id: row.get("action_id")?,
        tab_id: row.get("tab_id")?,
        event_type: row.get("event_type")?,
        virtual_time_ms: row.get("virtual_time_ms")?,
        data: json_column(row, "data")?,
        recorded_ms: row.get("recorded_ms")?,
        user_id: row.get("user_id")?,
    })
}

pub(crate) fn insert(
    conn: &Connection,
    session_id: &str,
    action_id: Option<&str>,
    event: NewEvent,
    recorded_ms: i64,
) -> rusqlite::Result<EventRecord> {
    let record = EventRecord {
        id: ids::new_id(ids::EVENT),
        session_id: session_id.to_owned(),
        action_id: action_id.map(str::to_owned),
        tab_id: event.tab_id,
        event_type: event.event_type,
        virtual_time_ms: event.virtual_time_ms,
        data: event.data,
        recorded_ms,
        user_id: event.user_id,
    };
    conn.prepare_cached(&format!(
        "INSERT INTO events ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    ))?
    .execute(params![
        record.id,
        record.session_id,
        record.action_id,
        record.tab_id,
        record.event_type,
        record.virtual_time_ms,
        json_text(&record.data),
        record.recorded_ms,
        record.user_id,
    ])?;
    Ok(record)
}

fn conditions(filter: &EventFilter) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .equals("session_id", filter.session_id.as_deref())
        .equals("action_id", filter.action_id.as_deref())
        .equals("tab_id", filter.tab_id.as_deref())
        .equals("event_type", filter.event_type.as_deref())
        .owned_by("user_id", &filter.owner);
    conditions
}

pub(crate) fn list(conn: &Connection, filter: &EventFilter) -> rusqlite::Result<Vec<EventRecord>> {
    let conditions = conditions(filter);
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM events{} ORDER BY rowid{}",
        conditions.where_sql(),
        page_sql(filter.limit, filter.offset)
    ))?;
    statement
        .query_map(conditions.params(), from_row)?
        .collect()
}

pub(crate) fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<EventRecord>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM events WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()
}

/// Deletes the events the filter selects (its page included).
pub(crate) fn delete(conn: &Connection, filter: &EventFilter) -> rusqlite::Result<usize> {
    let conditions = conditions(filter);
    conn.execute(
        &format!(
            "DELETE FROM events WHERE rowid IN (SELECT rowid FROM events{} ORDER BY rowid{})",
            conditions.where_sql(),
            page_sql(filter.limit, filter.offset)
        ),
        conditions.params(),
    )
}

pub(crate) fn delete_for_action(conn: &Connection, action_id: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM events WHERE action_id = ?1")?
        .execute([action_id])
}
