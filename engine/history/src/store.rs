//! `HistoryStore`: the async handle over the writer and reader lanes.

use parking_lot::Mutex;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actions::{self, ActionFilter, ActionRecord, NewAction};
use crate::error::{Error, Failure, Result};
use crate::events::{self, EventFilter, EventRecord, NewEvent};
use crate::ids::{self, now_ms};
use crate::lane::Lane;
use crate::network::{self, NetworkCall, NetworkFilter};
use crate::schema;
use crate::screenshots::{self, ScreenshotKind};
use crate::sessions::{self, SessionRecord};
use crate::sql::RowOwner;

pub const DATABASE_FILE: &str = "history.db";

/// One session as one document (`GET /history/sessions/{id}/export`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionExport {
    pub session: SessionRecord,
    /// Oldest first, screenshots as paths under the session folder.
    pub actions: Vec<ActionRecord>,
    pub events: Vec<EventRecord>,
    /// With their bodies (secrets redacted unless recorded).
    pub network_calls: Vec<NetworkCall>,
    /// Each action's screenshots (WebP, base64) by action id, when asked
    /// for (`screenshots=true`): a file that shows the session on its own
    /// (`wabp view`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshots: Option<std::collections::BTreeMap<String, ActionScreenshots>>,
}

/// An action's screenshots in an export, base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionScreenshots {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// Settings for [`HistoryStore::open_with`].
#[derive(Debug, Clone)]
pub struct HistoryOptions {
    /// How long a statement waits for another connection's lock before it
    /// fails with `StorageFault::Locked`.
    pub busy_timeout: Duration,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// Row counts removed by [`HistoryStore::delete_all`].
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct DeletedCounts {
    pub sessions: usize,
    pub actions: usize,
    pub events: usize,
    pub network_calls: usize,
}

/// What [`HistoryStore::prune_to`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PrunedSessions {
    /// The sessions deleted, oldest first.
    pub sessions: Vec<String>,
    /// Screenshot and body bytes held afterwards.
    pub bytes_left: u64,
}

/// The flight recorder of one session directory. Cheap to clone; every clone
/// talks to the same two threads.
#[derive(Clone)]
pub struct HistoryStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HistoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryStore")
            .field("session_dir", &self.inner.session_dir)
            .field("current_session", &self.current_session_id())
            .finish()
    }
}

struct Inner {
    session_dir: PathBuf,
    /// Writes, in order, each committed before its call returns.
    writer: Lane,
    /// Reads; WAL lets them run while the writer commits.
    reader: Lane,
    /// The session `start_session` began in this process, until it ends.
    current_session: Mutex<Option<String>>,
}

impl HistoryStore {
    /// Opens (creating) `<session_dir>/history.db` with default options.
    pub fn open(session_dir: &Path) -> Result<HistoryStore> {
        HistoryStore::open_with(session_dir, HistoryOptions::default())
    }

    /// Creates the session directory, opens the database, applies missing
    /// migrations and starts the two threads. Blocking (file creation and
    /// migration): call it at startup, or from `spawn_blocking`.
    pub fn open_with(session_dir: &Path, options: HistoryOptions) -> Result<HistoryStore> {
        let opened = (|| {
            fs::create_dir_all(session_dir).map_err(Failure::io(session_dir))?;
            let screenshots_dir = session_dir.join(screenshots::DIR);
            fs::create_dir_all(&screenshots_dir).map_err(Failure::io(&screenshots_dir))?;
            let database = session_dir.join(DATABASE_FILE);
            let writer = schema::open_writer(&database, options.busy_timeout)?;
            let reader = schema::open_reader(&database, options.busy_timeout)?;
            Ok::<_, Failure>((
                Lane::spawn("writer", writer).map_err(Failure::io(&database))?,
                Lane::spawn("reader", reader).map_err(Failure::io(&database))?,
            ))
        })();
        let (writer, reader) = opened.map_err(|failure| failure.into_error("open"))?;
        Ok(HistoryStore {
            inner: Arc::new(Inner {
                session_dir: session_dir.to_path_buf(),
                writer,
                reader,
                current_session: Mutex::new(None),
            }),
        })
    }

    pub fn session_dir(&self) -> &Path {
        &self.inner.session_dir
    }

    pub fn database_path(&self) -> PathBuf {
        self.inner.session_dir.join(DATABASE_FILE)
    }

    pub fn screenshots_dir(&self) -> PathBuf {
        self.inner.session_dir.join(screenshots::DIR)
    }

    /// Finishes queued work and closes both connections (checkpointing the
    /// WAL). Optional: dropping every handle does the same, and a killed
    /// process loses nothing committed. Later calls fail with `Error::Closed`.
    pub async fn close(&self) -> Result<()> {
        // The writer closes last: the last connection checkpoints the WAL.
        self.inner.reader.close().await?;
        self.inner.writer.close().await
    }

    // ----- sessions -----------------------------------------------------

    /// Starts a session and makes it current (ending none: a previous current
    /// session stays open until `end_session`).
    pub async fn start_session(&self, metadata: Value) -> Result<SessionRecord> {
        let session = SessionRecord {
            id: ids::new_id(ids::SESSION),
            started_ms: now_ms(),
            ended_ms: None,
            session_dir: self.inner.session_dir.clone(),
            metadata,
        };
        let inserted = session.clone();
        self.inner
            .writer
            .run("start session", move |conn| {
                sessions::insert(conn, &inserted)?;
                Ok(())
            })
            .await?;
        *self.current_lock() = Some(session.id.clone());
        Ok(session)
    }

    /// Marks the session ended (first end wins) and, if it was current,
    /// leaves the store with no current session.
    pub async fn end_session(&self, session_id: &str) -> Result<SessionRecord> {
        let id = session_id.to_owned();
        let ended = self
            .inner
            .writer
            .run("end session", move |conn| {
                sessions::end(conn, &id, now_ms())
            })
            .await?;
        let mut current = self.current_lock();
        if current.as_deref() == Some(session_id) {
            *current = None;
        }
        Ok(ended)
    }

    /// Oldest first.
    pub async fn list_sessions(&self) -> Result<Vec<SessionRecord>> {
        self.read("list sessions", |conn, _| Ok(sessions::list(conn)?))
            .await
    }

    pub async fn current_session(&self) -> Result<Option<SessionRecord>> {
        let Some(id) = self.current_session_id() else {
            return Ok(None);
        };
        self.get_session(&id).await
    }

    /// The current session's id, without a database round trip.
    pub fn current_session_id(&self) -> Option<String> {
        self.current_lock().clone()
    }

    pub async fn get_session(&self, session_id: &str) -> Result<Option<SessionRecord>> {
        let id = session_id.to_owned();
        self.read("get session", move |conn, _| Ok(sessions::get(conn, &id)?))
            .await
    }

    /// The session, its actions, events and network calls,
    /// the rows `owner` sees, read in one transaction (a consistent
    /// snapshot). Network calls carry their bodies. `None` if there is no
    /// such session.
    pub async fn export_session(
        &self,
        session_id: &str,
        owner: RowOwner,
    ) -> Result<Option<SessionExport>> {
        let id = session_id.to_owned();
        self.read("export session", move |conn, session_dir| {
            let tx = conn.transaction()?;
            let Some(session) = sessions::get(&tx, &id)? else {
                return Ok(None);
            };
            let actions = actions::list(
                &tx,
                &session_dir,
                &ActionFilter {
                    session_id: Some(id.clone()),
                    owner: owner.clone(),
                    ..ActionFilter::default()
                },
            )?;
            let events = events::list(
                &tx,
                &EventFilter {
                    session_id: Some(id.clone()),
                    owner: owner.clone(),
                    ..EventFilter::default()
                },
            )?;
            let everything = NetworkFilter {
                include_body: true,
                owner,
                ..NetworkFilter::default()
            }
            .compile()?;
            let network_calls = network::query(&tx, Some(&id), &everything)?;
            tx.commit()?;
            Ok(Some(SessionExport {
                session,
                actions,
                events,
                network_calls,
                screenshots: None,
            }))
        })
        .await
    }

    // ----- actions ------------------------------------------------------

    /// Writes the screenshots to files, then the action row and its events in
    /// one transaction, and returns after the commit: once this answers, the
    /// action survives a killed process (and, with `synchronous=FULL`, power
    /// loss).
    pub async fn record_action(&self, action: NewAction) -> Result<ActionRecord> {
        let session_id = self.session_or_current(action.session_id.clone())?;
        let id = ids::new_id(ids::ACTION);
        self.write("record action", move |conn, session_dir| {
            actions::record(conn, &session_dir, id, session_id, action, now_ms())
        })
        .await
    }

    /// Adds events to an action already recorded (what a repair that
    /// followed it found), under the action's session and user.
    pub async fn add_action_events(
        &self,
        action_id: &str,
        new_events: Vec<NewEvent>,
    ) -> Result<Vec<EventRecord>> {
        let id = action_id.to_owned();
        self.write("add action events", move |conn, session_dir| {
            let action = actions::get(conn, &session_dir, &id)?.ok_or_else(|| Error::NotFound {
                kind: "action",
                id: id.clone(),
            })?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let recorded_ms = now_ms();
            let records = new_events
                .into_iter()
                .map(|mut event| {
                    event.user_id = action.user_id.clone();
                    events::insert(&tx, &action.session_id, Some(&id), event, recorded_ms)
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            tx.commit()?;
            Ok(records)
        })
        .await
    }

    pub async fn list_actions(&self, filter: ActionFilter) -> Result<Vec<ActionRecord>> {
        self.read("list actions", move |conn, session_dir| {
            Ok(actions::list(conn, &session_dir, &filter)?)
        })
        .await
    }

    pub async fn get_action(&self, action_id: &str) -> Result<Option<ActionRecord>> {
        let id = action_id.to_owned();
        self.read("get action", move |conn, session_dir| {
            Ok(actions::get(conn, &session_dir, &id)?)
        })
        .await
    }

    /// The image bytes; `None` if the action does not exist, is not the
    /// owner's, or has no such screenshot. A row whose file is gone is an
    /// error (the history is damaged).
    pub async fn action_screenshot(
        &self,
        action_id: &str,
        kind: ScreenshotKind,
        owner: RowOwner,
    ) -> Result<Option<Vec<u8>>> {
        let id = action_id.to_owned();
        self.read("read screenshot", move |conn, session_dir| {
            let Some(action) = actions::get(conn, &session_dir, &id)? else {
                return Ok(None);
            };
            if !owner.sees(action.user_id.as_deref()) {
                return Ok(None);
            }
            let Some(path) = action.screenshot_path(kind) else {
                return Ok(None);
            };
            Ok(Some(fs::read(path).map_err(Failure::io(path))?))
        })
        .await
    }

    /// Deletes the selected actions, their events and their screenshot files;
    /// returns how many actions went.
    pub async fn delete_actions(&self, filter: ActionFilter) -> Result<usize> {
        self.write("delete actions", move |conn, session_dir| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let deleted = actions::delete(&tx, &filter)?;
            tx.commit()?;
            screenshots::remove_all(&session_dir, &deleted.screenshot_files);
            Ok(deleted.actions)
        })
        .await
    }

    // ----- events -------------------------------------------------------

    /// Records events that happened outside any action (a tab closed by the
    /// user, a download finishing later), in one transaction.
    pub async fn record_events(
        &self,
        session_id: Option<String>,
        new_events: Vec<NewEvent>,
    ) -> Result<Vec<EventRecord>> {
        let session_id = self.session_or_current(session_id)?;
        self.write("record events", move |conn, _| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            sessions::require(&tx, &session_id)?;
            let recorded_ms = now_ms();
            let records = new_events
                .into_iter()
                .map(|event| events::insert(&tx, &session_id, None, event, recorded_ms))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            tx.commit()?;
            Ok(records)
        })
        .await
    }

    pub async fn list_events(&self, filter: EventFilter) -> Result<Vec<EventRecord>> {
        self.read("list events", move |conn, _| {
            Ok(events::list(conn, &filter)?)
        })
        .await
    }

    pub async fn get_event(&self, event_id: &str) -> Result<Option<EventRecord>> {
        let id = event_id.to_owned();
        self.read("get event", move |conn, _| Ok(events::get(conn, &id)?))
            .await
    }

    pub async fn delete_events(&self, filter: EventFilter) -> Result<usize> {
        self.write("delete events", move |conn, _| {
            Ok(events::delete(conn, &filter)?)
        })
        .await
    }

    /// Deletes every action, event, network call and screenshot `owner`
    /// sees, then every session left with no rows, except the current
    /// session's row: it is kept (emptied) so the engine keeps recording into
    /// it without starting a new one.
    pub async fn delete_all(&self, owner: RowOwner) -> Result<DeletedCounts> {
        let keep = self.current_session_id();
        self.write("delete all", move |conn, session_dir| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let deleted = actions::delete(
                &tx,
                &ActionFilter {
                    owner: owner.clone(),
                    ..ActionFilter::default()
                },
            )?;
            let other_events = events::delete(
                &tx,
                &EventFilter {
                    owner: owner.clone(),
                    ..EventFilter::default()
                },
            )?;
            let network_calls = network::delete(&tx, None, &owner)?;
            // Sessions other users still have rows in stay.
            let unused = "NOT EXISTS (SELECT 1 FROM actions a WHERE a.session_id = sessions.id)
                 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = sessions.id)
                 AND NOT EXISTS (SELECT 1 FROM network_calls n WHERE n.session_id = sessions.id)";
            let sessions = match &keep {
                Some(id) => tx.execute(
                    &format!("DELETE FROM sessions WHERE id != ?1 AND {unused}"),
                    [id],
                )?,
                None => tx.execute(&format!("DELETE FROM sessions WHERE {unused}"), [])?,
            };
            tx.commit()?;
            match owner {
                RowOwner::Any => screenshots::remove_every_action_file(&session_dir),
                RowOwner::Only(_) => {
                    screenshots::remove_all(&session_dir, &deleted.screenshot_files)
                }
            }
            Ok(DeletedCounts {
                sessions,
                actions: deleted.actions,
                events: deleted.events + other_events,
                network_calls,
            })
        })
        .await
    }

    /// Keeps what history holds (screenshot files and saved network
    /// bodies) under `max_bytes` by deleting whole sessions, oldest first;
    /// never the current one. Returns the sessions deleted.
    pub async fn prune_to(&self, max_bytes: u64) -> Result<PrunedSessions> {
        let keep = self.current_session_id();
        self.write("prune history", move |conn, session_dir| {
            let mut pruned = PrunedSessions::default();
            loop {
                let used = screenshots::bytes_on_disk(&session_dir)
                    + conn.query_row(
                        "SELECT COALESCE(SUM(LENGTH(request_body) + LENGTH(response_body)), 0) FROM network_calls",
                        [],
                        |row| row.get::<_, i64>(0),
                    )? as u64;
                pruned.bytes_left = used;
                if used <= max_bytes {
                    return Ok(pruned);
                }
                let oldest: Option<String> = conn
                    .query_row(
                        "SELECT id FROM sessions WHERE id != ?1 ORDER BY started_ms, rowid LIMIT 1",
                        [keep.clone().unwrap_or_default()],
                        |row| row.get(0),
                    )
                    .ok();
                let Some(session) = oldest else {
                    // Only the current session is left: it stays, over or not.
                    return Ok(pruned);
                };
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let deleted = actions::delete(
                    &tx,
                    &ActionFilter {
                        session_id: Some(session.clone()),
                        ..ActionFilter::default()
                    },
                )?;
                events::delete(
                    &tx,
                    &EventFilter {
                        session_id: Some(session.clone()),
                        ..EventFilter::default()
                    },
                )?;
                tx.execute("DELETE FROM network_calls WHERE session_id = ?1", [&session])?;
                tx.execute("DELETE FROM sessions WHERE id = ?1", [&session])?;
                tx.commit()?;
                screenshots::remove_all(&session_dir, &deleted.screenshot_files);
                pruned.sessions.push(session);
            }
        })
        .await
    }

    // ----- network ------------------------------------------------------

    /// Saves calls under `tag` in the current session (none if no session
    /// is current), each with a fresh `net_` id, in one transaction. Saving
    /// the same buffer twice stores it twice (once per tag).
    pub async fn save_network_calls(&self, tag: &str, calls: Vec<NetworkCall>) -> Result<usize> {
        let tag = tag.to_owned();
        let session_id = self.current_session_id();
        self.write("save network calls", move |conn, _| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut saved = 0;
            for mut call in calls {
                call.id = ids::new_id(ids::NETWORK_CALL);
                call.tag = tag.clone();
                call.session_id = session_id.clone();
                network::insert(&tx, &call)?;
                saved += 1;
            }
            tx.commit()?;
            Ok(saved)
        })
        .await
    }

    /// Calls matching every set filter (regexes, see [`NetworkFilter`]),
    /// oldest first. An invalid regex fails before any I/O.
    pub async fn query_network(&self, filter: NetworkFilter) -> Result<Vec<NetworkCall>> {
        let compiled = filter.compile()?;
        self.read("query network", move |conn, _| {
            Ok(network::query(conn, None, &compiled)?)
        })
        .await
    }

    /// Deletes the calls `owner` sees saved under exactly `tag`, or all of them.
    pub async fn delete_network(&self, tag: Option<&str>, owner: RowOwner) -> Result<usize> {
        let tag = tag.map(str::to_owned);
        self.write("delete network calls", move |conn, _| {
            Ok(network::delete(conn, tag.as_deref(), &owner)?)
        })
        .await
    }

    // ----- plumbing -----------------------------------------------------

    async fn write<T, F>(&self, operation: &'static str, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, PathBuf) -> Result<T, Failure> + Send + 'static,
    {
        let session_dir = self.inner.session_dir.clone();
        self.inner
            .writer
            .run(operation, move |conn| job(conn, session_dir))
            .await
    }

    async fn read<T, F>(&self, operation: &'static str, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, PathBuf) -> Result<T, Failure> + Send + 'static,
    {
        let session_dir = self.inner.session_dir.clone();
        self.inner
            .reader
            .run(operation, move |conn| job(conn, session_dir))
            .await
    }

    fn session_or_current(&self, explicit: Option<String>) -> Result<String> {
        explicit
            .or_else(|| self.current_session_id())
            .ok_or(Error::NoCurrentSession)
    }

    fn current_lock(&self) -> parking_lot::MutexGuard<'_, Option<String>> {
        // The guarded value is a plain id, valid even after a panic elsewhere.
        self.inner.current_session.lock()
    }

    /// Runs raw SQL on the writer connection (tests simulate faults with it).
    #[cfg(test)]
    pub(crate) async fn execute_on_writer(&self, sql: &'static str) -> Result<()> {
        self.inner
            .writer
            .run("test statement", move |conn| Ok(conn.execute_batch(sql)?))
            .await
    }

    /// Sends the writer a job that panics (tests check the lane survives).
    #[cfg(test)]
    pub(crate) async fn panic_on_writer(&self) -> Result<()> {
        self.inner
            .writer
            .run("test panic", |_| -> Result<(), Failure> {
                panic!("deliberate test panic")
            })
            .await
    }
}
