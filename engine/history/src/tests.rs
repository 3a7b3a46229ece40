//! Store tests on real SQLite files in temporary directories.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::schema::MIGRATIONS;
use crate::*;

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "wabp-history-{name}-{}-{}",
            std::process::id(),
            crate::ids::new_id("t")
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn action(tab_id: &str, action_type: &str, started_ms: i64) -> NewAction {
    NewAction {
        tab_id: tab_id.into(),
        action_type: action_type.into(),
        params: json!({ "x": 10, "y": 20 }),
        result: Some(json!({ "ok": true })),
        started_ms,
        completed_ms: started_ms + 50,
        timing: Some(json!({ "action_started_ms": started_ms, "duration_ms": 50 })),
        scroll: Some(json!({ "vertical_px": 0 })),
        virtual_time_ms: Some(started_ms + 1),
        ..NewAction::default()
    }
}

fn event(tab_id: &str, event_type: &str) -> NewEvent {
    NewEvent {
        tab_id: tab_id.into(),
        event_type: event_type.into(),
        virtual_time_ms: Some(1_700_000_000_100),
        data: json!({ "url": "https://example.com/" }),
        user_id: None,
    }
}

fn with_screenshots(mut action: NewAction) -> NewAction {
    action.screenshot_before = Some(b"RIFF-before".to_vec());
    action.screenshot_after = Some(b"RIFF-after".to_vec());
    action.events = vec![
        event(&action.tab_id, "navigation"),
        event(&action.tab_id, "popup"),
    ];
    action
}

fn raw_connection(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap()
}

fn user_version(dir: &Path) -> i64 {
    raw_connection(dir)
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap()
}

async fn open_with_session(dir: &Path) -> (HistoryStore, SessionRecord) {
    let store = HistoryStore::open(dir).unwrap();
    let session = store.start_session(json!({ "test": true })).await.unwrap();
    (store, session)
}

// ----- schema ------------------------------------------------------------

#[tokio::test]
async fn migrations_apply_and_reopen_is_idempotent() {
    let dir = TempDir::new("migrate");
    let (store, session) = open_with_session(dir.path()).await;
    let recorded = store
        .record_action(action("tab_1", "click", 1000))
        .await
        .unwrap();
    store.close().await.unwrap();

    assert_eq!(user_version(dir.path()), MIGRATIONS.len() as i64);
    let conn = raw_connection(dir.path());
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(tables, ["actions", "events", "network_calls", "sessions"]);
    drop(conn);

    // Reopen twice: nothing re-applied, nothing lost.
    for _ in 0..2 {
        let store = HistoryStore::open(dir.path()).unwrap();
        assert_eq!(user_version(dir.path()), MIGRATIONS.len() as i64);
        assert_eq!(
            store.get_session(&session.id).await.unwrap().unwrap(),
            session
        );
        assert_eq!(
            store.get_action(&recorded.id).await.unwrap().unwrap(),
            recorded
        );
        // A reopened store has no current session until one starts.
        assert!(store.current_session().await.unwrap().is_none());
        store.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let dir = TempDir::new("newer");
    HistoryStore::open(dir.path())
        .unwrap()
        .close()
        .await
        .unwrap();
    raw_connection(dir.path())
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let error = HistoryStore::open(dir.path()).expect_err("refused");
    assert_eq!(error.fault(), Some(StorageFault::Incompatible), "{error}");
    assert!(error.to_string().contains("99"), "{error}");

    // A negative version is not "up to date" either.
    raw_connection(dir.path())
        .pragma_update(None, "user_version", -1)
        .unwrap();
    let error = HistoryStore::open(dir.path()).expect_err("refused");
    assert_eq!(error.fault(), Some(StorageFault::Incompatible), "{error}");
}

// ----- sessions ----------------------------------------------------------

#[tokio::test]
async fn sessions_start_end_list_and_current() {
    let dir = TempDir::new("sessions");
    let store = HistoryStore::open(dir.path()).unwrap();
    assert!(store.current_session().await.unwrap().is_none());

    let first = store
        .start_session(json!({ "browser": "chromium" }))
        .await
        .unwrap();
    assert!(first.id.starts_with("ses_"));
    assert_eq!(first.session_dir, dir.path());
    assert_eq!(store.current_session().await.unwrap().unwrap(), first);

    let ended = store.end_session(&first.id).await.unwrap();
    assert!(ended.ended_ms.is_some());
    assert!(store.current_session().await.unwrap().is_none());
    // Ending twice keeps the first end time.
    assert_eq!(store.end_session(&first.id).await.unwrap(), ended);

    let second = store.start_session(json!({})).await.unwrap();
    let listed = store.list_sessions().await.unwrap();
    assert_eq!(listed, [ended, second.clone()]);
    assert_eq!(store.current_session_id(), Some(second.id));

    let missing = store.end_session("ses_missing").await.unwrap_err();
    assert!(
        matches!(
            missing,
            Error::NotFound {
                kind: "session",
                ..
            }
        ),
        "{missing}"
    );
    assert!(store.get_session("ses_missing").await.unwrap().is_none());
}

#[tokio::test]
async fn recording_needs_a_session() {
    let dir = TempDir::new("no-session");
    let store = HistoryStore::open(dir.path()).unwrap();
    let error = store
        .record_action(action("tab_1", "click", 1))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::NoCurrentSession), "{error}");

    let mut named = with_screenshots(action("tab_1", "click", 1));
    named.session_id = Some("ses_unknown".into());
    let error = store.record_action(named).await.unwrap_err();
    assert!(matches!(error, Error::NotFound { kind: "session", ref id } if id == "ses_unknown"));
    // Nothing was left behind for the refused action.
    assert_eq!(
        std::fs::read_dir(store.screenshots_dir()).unwrap().count(),
        0
    );
}

// ----- actions -----------------------------------------------------------

#[tokio::test]
async fn record_action_with_screenshots_and_events_reads_back() {
    let dir = TempDir::new("record");
    let (store, session) = open_with_session(dir.path()).await;

    let recorded = store
        .record_action(with_screenshots(action("tab_1", "click", 1_000)))
        .await
        .unwrap();
    assert!(recorded.id.starts_with("act_"));
    assert_eq!(recorded.session_id, session.id);
    assert_eq!(recorded.duration_ms, 50);
    let before = dir
        .path()
        .join("screenshots")
        .join(format!("{}_before.webp", recorded.id));
    let after = dir
        .path()
        .join("screenshots")
        .join(format!("{}_after.webp", recorded.id));
    assert_eq!(
        recorded.screenshot_before.as_deref(),
        Some(before.as_path())
    );
    assert_eq!(recorded.screenshot_after.as_deref(), Some(after.as_path()));
    assert_eq!(std::fs::read(&before).unwrap(), b"RIFF-before");

    // The row stores paths relative to the session directory.
    let stored: String = raw_connection(dir.path())
        .query_row(
            "SELECT screenshot_after FROM actions WHERE id = ?1",
            [&recorded.id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stored, format!("screenshots/{}_after.webp", recorded.id));

    let read = store.get_action(&recorded.id).await.unwrap().unwrap();
    assert_eq!(read, recorded);
    assert_eq!(read.params, json!({ "x": 10, "y": 20 }));
    assert_eq!(read.result, Some(json!({ "ok": true })));
    assert_eq!(read.virtual_time_ms, Some(1_001));

    let image = store
        .action_screenshot(&recorded.id, ScreenshotKind::After, RowOwner::Any)
        .await
        .unwrap();
    assert_eq!(image.as_deref(), Some(&b"RIFF-after"[..]));

    let events = store
        .list_events(EventFilter {
            action_id: Some(recorded.id.clone()),
            ..EventFilter::default()
        })
        .await
        .unwrap();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["navigation", "popup"]);
    assert!(events.iter().all(|e| e.id.starts_with("evt_")
        && e.session_id == session.id
        && e.tab_id == "tab_1"
        && e.virtual_time_ms == Some(1_700_000_000_100)
        && e.data == json!({ "url": "https://example.com/" })));
    assert_eq!(
        store.get_event(&events[0].id).await.unwrap().as_ref(),
        Some(&events[0])
    );

    // An action without screenshots, a failed action, unknown ids.
    let mut failed = action("tab_1", "type", 2_000);
    failed.result = None;
    failed.error = Some("element not found".into());
    let failed = store.record_action(failed).await.unwrap();
    let read = store.get_action(&failed.id).await.unwrap().unwrap();
    assert_eq!(read.error.as_deref(), Some("element not found"));
    assert_eq!(read.result, None);
    assert!(read.screenshot_before.is_none());
    assert!(
        store
            .action_screenshot(&failed.id, ScreenshotKind::Before, RowOwner::Any)
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.get_action("act_missing").await.unwrap().is_none());
    assert!(
        store
            .action_screenshot("act_missing", ScreenshotKind::After, RowOwner::Any)
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.get_event("evt_missing").await.unwrap().is_none());
}

#[tokio::test]
async fn a_missing_screenshot_file_is_an_error() {
    let dir = TempDir::new("missing-file");
    let (store, _) = open_with_session(dir.path()).await;
    let recorded = store
        .record_action(with_screenshots(action("tab_1", "click", 1)))
        .await
        .unwrap();
    std::fs::remove_file(recorded.screenshot_after.as_ref().unwrap()).unwrap();
    let error = store
        .action_screenshot(&recorded.id, ScreenshotKind::After, RowOwner::Any)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Storage {
                operation: "read screenshot",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("_after.webp"), "{error}");
}

#[tokio::test]
async fn action_filters_and_pagination() {
    let dir = TempDir::new("filters");
    let (store, first_session) = open_with_session(dir.path()).await;
    for (tab, kind, started) in [
        ("tab_a", "click", 100),
        ("tab_b", "type", 200),
        ("tab_a", "scroll", 300),
        ("tab_a", "click", 400),
    ] {
        store
            .record_action(action(tab, kind, started))
            .await
            .unwrap();
    }
    let second_session = store.start_session(json!({})).await.unwrap();
    store
        .record_action(action("tab_a", "click", 500))
        .await
        .unwrap();

    let started = |filter: ActionFilter| {
        let store = store.clone();
        async move {
            store
                .list_actions(filter)
                .await
                .unwrap()
                .into_iter()
                .map(|a| a.started_ms)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        started(ActionFilter::default()).await,
        [100, 200, 300, 400, 500]
    );
    let by_tab = ActionFilter {
        tab_id: Some("tab_a".into()),
        ..ActionFilter::default()
    };
    assert_eq!(started(by_tab.clone()).await, [100, 300, 400, 500]);
    assert_eq!(
        started(ActionFilter {
            action_type: Some("click".into()),
            ..by_tab.clone()
        })
        .await,
        [100, 400, 500]
    );
    assert_eq!(
        started(ActionFilter {
            session_id: Some(first_session.id.clone()),
            ..ActionFilter::default()
        })
        .await,
        [100, 200, 300, 400]
    );
    assert_eq!(
        started(ActionFilter {
            session_id: Some(second_session.id.clone()),
            ..ActionFilter::default()
        })
        .await,
        [500]
    );
    // since inclusive, until exclusive.
    assert_eq!(
        started(ActionFilter {
            since_ms: Some(200),
            until_ms: Some(400),
            ..ActionFilter::default()
        })
        .await,
        [200, 300]
    );
    // Pages.
    let page = |offset, limit| ActionFilter {
        limit: Some(limit),
        offset: Some(offset),
        ..ActionFilter::default()
    };
    assert_eq!(started(page(0, 2)).await, [100, 200]);
    assert_eq!(started(page(2, 2)).await, [300, 400]);
    assert_eq!(started(page(4, 2)).await, [500]);
    assert!(started(page(6, 2)).await.is_empty());
    assert_eq!(
        started(ActionFilter {
            offset: Some(3),
            ..ActionFilter::default()
        })
        .await,
        [400, 500]
    );

    // Filters parse from query-string-like JSON, `type` included.
    let parsed: ActionFilter =
        serde_json::from_value(json!({ "type": "click", "limit": 1 })).unwrap();
    assert_eq!(started(parsed).await, [100]);
}

#[tokio::test]
async fn delete_actions_removes_rows_events_and_files() {
    let dir = TempDir::new("delete");
    let (store, _) = open_with_session(dir.path()).await;
    let mut recorded = Vec::new();
    for (tab, started) in [("tab_a", 1), ("tab_b", 2), ("tab_a", 3)] {
        recorded.push(
            store
                .record_action(with_screenshots(action(tab, "click", started)))
                .await
                .unwrap(),
        );
    }
    let outside = store
        .record_events(None, vec![event("tab_a", "tab_closed")])
        .await
        .unwrap();

    let deleted = store
        .delete_actions(ActionFilter {
            tab_id: Some("tab_a".into()),
            ..ActionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(deleted, 2);

    for gone in [&recorded[0], &recorded[2]] {
        assert!(store.get_action(&gone.id).await.unwrap().is_none());
        assert!(!gone.screenshot_before.as_ref().unwrap().exists());
        assert!(!gone.screenshot_after.as_ref().unwrap().exists());
        let events = store
            .list_events(EventFilter {
                action_id: Some(gone.id.clone()),
                ..EventFilter::default()
            })
            .await
            .unwrap();
        assert!(events.is_empty());
    }
    let kept = &recorded[1];
    assert!(store.get_action(&kept.id).await.unwrap().is_some());
    assert!(kept.screenshot_after.as_ref().unwrap().exists());
    // The kept action's two events and the event outside any action remain.
    let remaining = store.list_events(EventFilter::default()).await.unwrap();
    assert_eq!(remaining.len(), 3);
    assert!(remaining.iter().any(|e| e.id == outside[0].id));

    // Deleting with a page deletes only that page.
    store
        .record_action(action("tab_c", "click", 10))
        .await
        .unwrap();
    store
        .record_action(action("tab_c", "click", 11))
        .await
        .unwrap();
    let deleted = store
        .delete_actions(ActionFilter {
            tab_id: Some("tab_c".into()),
            limit: Some(1),
            ..ActionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(deleted, 1);
    let left = store
        .list_actions(ActionFilter {
            tab_id: Some("tab_c".into()),
            ..ActionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].started_ms, 11);
}

// ----- events ------------------------------------------------------------

#[tokio::test]
async fn event_filters_pages_and_delete() {
    let dir = TempDir::new("events");
    let (store, session) = open_with_session(dir.path()).await;
    let in_action = store
        .record_action(with_screenshots(action("tab_1", "click", 1)))
        .await
        .unwrap();
    let outside = store
        .record_events(
            Some(session.id.clone()),
            vec![
                event("tab_2", "dialog"),
                event("tab_2", "download_started"),
                event("tab_1", "dialog"),
            ],
        )
        .await
        .unwrap();
    assert!(outside.iter().all(|e| e.action_id.is_none()));

    let types = |events: Vec<EventRecord>| -> Vec<String> {
        events.into_iter().map(|e| e.event_type).collect()
    };
    let all = store.list_events(EventFilter::default()).await.unwrap();
    assert_eq!(
        types(all),
        [
            "navigation",
            "popup",
            "dialog",
            "download_started",
            "dialog"
        ]
    );
    let by_tab = EventFilter {
        tab_id: Some("tab_2".into()),
        ..EventFilter::default()
    };
    assert_eq!(
        types(store.list_events(by_tab.clone()).await.unwrap()),
        ["dialog", "download_started"]
    );
    let dialogs = EventFilter {
        event_type: Some("dialog".into()),
        ..EventFilter::default()
    };
    assert_eq!(store.list_events(dialogs.clone()).await.unwrap().len(), 2);
    let paged = EventFilter {
        limit: Some(2),
        offset: Some(1),
        ..EventFilter::default()
    };
    assert_eq!(
        types(store.list_events(paged).await.unwrap()),
        ["popup", "dialog"]
    );
    assert_eq!(
        store
            .list_events(EventFilter {
                action_id: Some(in_action.id.clone()),
                ..EventFilter::default()
            })
            .await
            .unwrap()
            .len(),
        2
    );

    // Serialised like envelope events: `type`, not `event_type`.
    let serialised = serde_json::to_value(&outside[0]).unwrap();
    assert_eq!(serialised["type"], "dialog");
    assert!(serialised.get("event_type").is_none());

    assert_eq!(store.delete_events(dialogs.clone()).await.unwrap(), 2);
    assert!(store.list_events(dialogs).await.unwrap().is_empty());
    assert_eq!(
        store
            .list_events(EventFilter::default())
            .await
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn delete_all_empties_history_but_keeps_the_current_session() {
    let dir = TempDir::new("delete-all");
    let (store, old) = open_with_session(dir.path()).await;
    let old_action = store
        .record_action(with_screenshots(action("tab_1", "click", 1)))
        .await
        .unwrap();
    store.end_session(&old.id).await.unwrap();
    let current = store.start_session(json!({})).await.unwrap();
    store
        .record_action(with_screenshots(action("tab_1", "click", 2)))
        .await
        .unwrap();
    store
        .record_events(None, vec![event("tab_1", "tab_closed")])
        .await
        .unwrap();
    store
        .save_network_calls("t", network_calls())
        .await
        .unwrap();

    // An orphan a crash left between writing files and committing the row.
    std::fs::write(
        store.screenshots_dir().join("act_orphan_after.webp.tmp"),
        b"x",
    )
    .unwrap();

    let counts = store.delete_all(RowOwner::Any).await.unwrap();
    assert_eq!(
        counts,
        DeletedCounts {
            sessions: 1,
            actions: 2,
            events: 5,
            network_calls: network_calls().len(),
        }
    );
    assert_eq!(
        store.list_sessions().await.unwrap(),
        std::slice::from_ref(&current)
    );
    assert!(
        store
            .list_actions(ActionFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_events(EventFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .query_network(NetworkFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!old_action.screenshot_before.unwrap().exists());
    assert_eq!(
        std::fs::read_dir(store.screenshots_dir()).unwrap().count(),
        0
    );
    // Recording goes on in the kept session.
    let next = store
        .record_action(action("tab_1", "click", 3))
        .await
        .unwrap();
    assert_eq!(next.session_id, current.id);
}

// ----- network -----------------------------------------------------------

fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn network_calls() -> Vec<NetworkCall> {
    vec![
        NetworkCall {
            tab_id: "tab_1".into(),
            action_id: Some("act_login".into()),
            url: "https://api.example.com/v1/login?next=home".into(),
            method: "POST".into(),
            status: Some(200),
            resource_type: "Fetch".into(),
            request_headers: headers(&[("content-type", "application/json")]),
            response_headers: headers(&[("content-type", "application/json")]),
            request_body: Some(r#"{"user":"alice"}"#.into()),
            response_body: Some(r#"{"token":"t"}"#.into()),
            body_encoding: Some("text".into()),
            timing_ms: Some(124.0),
            timestamp_ms: 1_000,
            ..NetworkCall::default()
        },
        NetworkCall {
            tab_id: "tab_1".into(),
            action_id: Some("act_login".into()),
            url: "https://api.example.com/v1/profile".into(),
            method: "GET".into(),
            status: Some(404),
            resource_type: "XHR".into(),
            response_body: Some("not found".into()),
            timing_ms: Some(12.5),
            timestamp_ms: 2_000,
            ..NetworkCall::default()
        },
        NetworkCall {
            tab_id: "tab_2".into(),
            url: "https://cdn.example.org/app.js?v=3".into(),
            method: "GET".into(),
            status: Some(503),
            resource_type: "Script".into(),
            timestamp_ms: 3_000,
            ..NetworkCall::default()
        },
        NetworkCall {
            tab_id: "tab_2".into(),
            url: "https://cdn.example.org/pending".into(),
            method: "GET".into(),
            status: None,
            resource_type: "Fetch".into(),
            timestamp_ms: 4_000,
            ..NetworkCall::default()
        },
    ]
}

#[tokio::test]
async fn network_regex_filters_on_every_field() {
    let dir = TempDir::new("network");
    let (store, session) = open_with_session(dir.path()).await;
    assert_eq!(
        store
            .save_network_calls("login-flow", network_calls())
            .await
            .unwrap(),
        4
    );
    let mut other = network_calls();
    other.truncate(1);
    store.save_network_calls("retry", other).await.unwrap();

    let urls = |filter: NetworkFilter| {
        let store = store.clone();
        async move {
            store
                .query_network(filter)
                .await
                .unwrap()
                .into_iter()
                .map(|call| call.url.rsplit('/').next().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let all = urls(NetworkFilter::default()).await;
    assert_eq!(
        all,
        [
            "login?next=home",
            "login?next=home",
            "profile",
            "app.js?v=3",
            "pending"
        ]
    );

    let cases: Vec<(NetworkFilter, Vec<&str>)> = vec![
        (
            NetworkFilter {
                tag: Some("^retry$".into()),
                ..Default::default()
            },
            vec!["login?next=home"],
        ),
        (
            NetworkFilter {
                tag: Some("login".into()),
                ..Default::default()
            },
            vec!["login?next=home", "profile", "app.js?v=3", "pending"],
        ),
        (
            NetworkFilter {
                tab_id: Some("_2$".into()),
                ..Default::default()
            },
            vec!["app.js?v=3", "pending"],
        ),
        (
            NetworkFilter {
                url: Some(r"\.js\?".into()),
                ..Default::default()
            },
            vec!["app.js?v=3"],
        ),
        (
            NetworkFilter {
                hostname: Some(r"^cdn\.".into()),
                ..Default::default()
            },
            vec!["app.js?v=3", "pending"],
        ),
        (
            NetworkFilter {
                path: Some("^/v1/pro".into()),
                ..Default::default()
            },
            vec!["profile"],
        ),
        (
            NetworkFilter {
                query: Some("^v=".into()),
                ..Default::default()
            },
            vec!["app.js?v=3"],
        ),
        (
            NetworkFilter {
                method: Some("POST".into()),
                tag: Some("login-flow".into()),
                ..Default::default()
            },
            vec!["login?next=home"],
        ),
        (
            NetworkFilter {
                status: Some(r"4\d\d".into()),
                ..Default::default()
            },
            vec!["profile"],
        ),
        (
            NetworkFilter {
                status: Some(r"^5".into()),
                ..Default::default()
            },
            vec!["app.js?v=3"],
        ),
        (
            NetworkFilter {
                resource_type: Some("^(XHR|Fetch)$".into()),
                tag: Some("login-flow".into()),
                ..Default::default()
            },
            vec!["login?next=home", "profile", "pending"],
        ),
        (
            NetworkFilter {
                action_id: Some("act_".into()),
                tag: Some("login-flow".into()),
                ..Default::default()
            },
            vec!["login?next=home", "profile"],
        ),
        (
            // Unanchored: a substring matches.
            NetworkFilter {
                url: Some("example".into()),
                hostname: Some("org".into()),
                ..Default::default()
            },
            vec!["app.js?v=3", "pending"],
        ),
    ];
    for (filter, expected) in cases {
        assert_eq!(urls(filter.clone()).await, expected, "{filter:?}");
    }

    let calls = store.query_network(NetworkFilter::default()).await.unwrap();
    assert!(calls.iter().all(|call| call.id.starts_with("net_")
        && call.session_id.as_deref() == Some(session.id.as_str())));
    assert_eq!(calls[0].tag, "login-flow");
    assert_eq!(calls[1].tag, "retry");

    // The REST layer can parse query parameters straight into the filter.
    let parsed: NetworkFilter = serde_json::from_value(json!({
        "type": "Script",
        "include_body": true,
    }))
    .unwrap();
    assert_eq!(urls(parsed).await, ["app.js?v=3"]);
}

#[tokio::test]
async fn an_invalid_regex_names_its_field() {
    let dir = TempDir::new("bad-regex");
    let store = HistoryStore::open(dir.path()).unwrap();
    for (filter, field) in [
        (
            NetworkFilter {
                status: Some(r"4\d{".into()),
                ..Default::default()
            },
            "status",
        ),
        (
            NetworkFilter {
                hostname: Some("(".into()),
                ..Default::default()
            },
            "hostname",
        ),
        (
            NetworkFilter {
                resource_type: Some("[".into()),
                ..Default::default()
            },
            "type",
        ),
    ] {
        let error = store.query_network(filter).await.unwrap_err();
        assert!(
            matches!(&error, Error::InvalidFilter { field: named, .. } if *named == field),
            "{error}"
        );
        assert!(error.to_string().contains(field), "{error}");
    }
}

#[tokio::test]
async fn include_body_controls_bodies() {
    let dir = TempDir::new("bodies");
    let (store, _) = open_with_session(dir.path()).await;
    let mut calls = network_calls();
    calls[1].response_body_truncated = true;
    store.save_network_calls("t", calls).await.unwrap();

    let without = store.query_network(NetworkFilter::default()).await.unwrap();
    assert!(without.iter().all(|call| call.request_body.is_none()
        && call.response_body.is_none()
        && call.body_encoding.is_none()));
    let json = serde_json::to_value(&without[0]).unwrap();
    for absent in ["request_body", "response_body", "body_encoding"] {
        assert!(json.get(absent).is_none(), "{absent} in {json}");
    }
    // The ABP shape.
    for present in [
        "id",
        "tag",
        "tab_id",
        "action_id",
        "url",
        "method",
        "status",
        "type",
        "request_headers",
        "response_headers",
        "timing_ms",
        "timestamp_ms",
    ] {
        assert!(json.get(present).is_some(), "{present} missing in {json}");
    }
    assert_eq!(json["request_headers"]["content-type"], "application/json");
    assert_eq!(json["status"], 200);
    assert_eq!(json["type"], "Fetch");

    let with = store
        .query_network(NetworkFilter {
            include_body: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(with[0].request_body.as_deref(), Some(r#"{"user":"alice"}"#));
    assert_eq!(with[0].response_body.as_deref(), Some(r#"{"token":"t"}"#));
    assert_eq!(with[0].body_encoding.as_deref(), Some("text"));
    assert_eq!(with[1].response_body.as_deref(), Some("not found"));
    assert!(with[1].response_body_truncated);
    assert!(without[1].response_body_truncated);
    assert_eq!(with[2].response_body, None);
}

#[tokio::test]
async fn delete_network_by_tag_or_all() {
    let dir = TempDir::new("delete-network");
    let (store, _) = open_with_session(dir.path()).await;
    store
        .save_network_calls("a", network_calls())
        .await
        .unwrap();
    store
        .save_network_calls("b", network_calls())
        .await
        .unwrap();
    store
        .save_network_calls("ab", network_calls())
        .await
        .unwrap();

    // Exactly the tag, not a regex: "a" leaves "ab".
    assert_eq!(
        store
            .delete_network(Some("a"), RowOwner::Any)
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        store
            .delete_network(Some("a"), RowOwner::Any)
            .await
            .unwrap(),
        0
    );
    let tags: Vec<String> = store
        .query_network(NetworkFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|call| call.tag)
        .collect();
    assert_eq!(tags.iter().filter(|tag| *tag == "b").count(), 4);
    assert_eq!(tags.iter().filter(|tag| *tag == "ab").count(), 4);
    assert_eq!(store.delete_network(None, RowOwner::Any).await.unwrap(), 8);
    assert!(
        store
            .query_network(NetworkFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn saved_calls_export_as_har() {
    let dir = TempDir::new("har");
    let (store, _) = open_with_session(dir.path()).await;
    store
        .save_network_calls("t", network_calls())
        .await
        .unwrap();
    let calls = store
        .query_network(NetworkFilter {
            include_body: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let har = har::to_har(&calls, "0.1.0");
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    assert_eq!(
        entries[0]["request"]["postData"]["text"],
        r#"{"user":"alice"}"#
    );
    assert_eq!(entries[1]["response"]["status"], 404);
    assert_eq!(entries[3]["response"]["status"], 0);
}

// ----- export ------------------------------------------------------------

#[tokio::test]
async fn export_session_has_session_actions_events_and_calls() {
    let dir = TempDir::new("export");
    let (store, session) = open_with_session(dir.path()).await;
    let first = store
        .record_action(with_screenshots(action("tab_1", "click", 1)))
        .await
        .unwrap();
    let second = store
        .record_action(action("tab_1", "navigate", 2))
        .await
        .unwrap();
    store
        .record_events(None, vec![event("tab_1", "tab_closed")])
        .await
        .unwrap();
    store
        .save_network_calls("t", network_calls())
        .await
        .unwrap();
    // Another session's records stay out of this export.
    store.start_session(json!({})).await.unwrap();
    store
        .record_action(action("tab_9", "click", 3))
        .await
        .unwrap();

    let export = serde_json::to_value(
        store
            .export_session(&session.id, RowOwner::Any)
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let object = export.as_object().unwrap();
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["actions", "events", "network_calls", "session"]);
    assert_eq!(export["session"]["id"], session.id.as_str());
    assert_eq!(export["session"]["metadata"], json!({ "test": true }));
    let action_ids: Vec<&str> = export["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(action_ids, [first.id.as_str(), second.id.as_str()]);
    assert_eq!(export["actions"][0]["action_type"], "click");
    assert!(export["actions"][0]["screenshot_before"].as_str().is_some());
    assert_eq!(export["events"].as_array().unwrap().len(), 3);
    assert_eq!(export["events"][2]["type"], "tab_closed");
    assert_eq!(export["network_calls"].as_array().unwrap().len(), 4);
    assert_eq!(
        export["network_calls"][0]["request_body"],
        r#"{"user":"alice"}"#
    );
    // Round-trips into the typed records.
    let actions: Vec<ActionRecord> = serde_json::from_value(export["actions"].clone()).unwrap();
    assert_eq!(actions[0], first);

    assert!(
        store
            .export_session("ses_missing", RowOwner::Any)
            .await
            .unwrap()
            .is_none()
    );
}

// ----- durability --------------------------------------------------------

const CRASH_CHILD_DIR: &str = "WABP_HISTORY_CRASH_CHILD_DIR";
const CRASH_CHILD_TEST: &str = "tests::crash_child_records_then_waits_to_be_killed";

/// Not a test on its own: `answered_writes_survive_sigkill` re-executes the
/// test binary with only this test and `CRASH_CHILD_DIR` set. Without the
/// variable it returns at once.
#[test]
fn crash_child_records_then_waits_to_be_killed() {
    let Some(dir) = std::env::var_os(CRASH_CHILD_DIR) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = HistoryStore::open(Path::new(&dir)).unwrap();
        store.start_session(json!({ "child": true })).await.unwrap();
        let mut stdout = std::io::stdout();
        for started in 0..5 {
            let recorded = store
                .record_action(with_screenshots(action("tab_1", "click", started)))
                .await
                .unwrap();
            writeln!(stdout, "child: recorded {}", recorded.id).unwrap();
        }
        let saved = store
            .save_network_calls("crash", network_calls())
            .await
            .unwrap();
        writeln!(stdout, "child: saved {saved}").unwrap();
        writeln!(stdout, "child: ready").unwrap();
        stdout.flush().unwrap();
        // The parent SIGKILLs us now; the store is never closed or dropped.
        std::thread::sleep(Duration::from_secs(60));
        std::process::abort();
    });
}

#[tokio::test]
async fn answered_writes_survive_sigkill() {
    let dir = TempDir::new("sigkill");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            CRASH_CHILD_TEST,
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Read the child's answers on a thread, so a stuck child cannot hang us.
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut recorded = Vec::new();
    let mut saved = 0;
    loop {
        // libtest's own output may share a line with the child's first one.
        match received.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => match line.split_once("child: ").map(|(_, said)| said) {
                Some("ready") => break,
                Some(said) => {
                    if let Some(id) = said.strip_prefix("recorded ") {
                        recorded.push(id.to_owned());
                    } else if let Some(count) = said.strip_prefix("saved ") {
                        saved = count.parse().unwrap();
                    }
                }
                None => {}
            },
            Err(error) => {
                let _ = child.kill();
                panic!("child did not get ready: {error}; recorded so far: {recorded:?}");
            }
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert_eq!(recorded.len(), 5);
    assert_eq!(saved, 4);
    // The child never closed its connection: its commits sit in the WAL.
    assert!(dir.path().join("history.db-wal").exists());

    let store = HistoryStore::open(dir.path()).unwrap();
    let actions = store.list_actions(ActionFilter::default()).await.unwrap();
    let ids: Vec<&str> = actions.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, recorded);
    for id in &recorded {
        let image = store
            .action_screenshot(id, ScreenshotKind::Before, RowOwner::Any)
            .await
            .unwrap();
        assert_eq!(image.as_deref(), Some(&b"RIFF-before"[..]));
    }
    assert_eq!(
        store
            .list_events(EventFilter::default())
            .await
            .unwrap()
            .len(),
        10
    );
    assert_eq!(
        store
            .query_network(NetworkFilter::default())
            .await
            .unwrap()
            .len(),
        4
    );
    // The killed session was never ended.
    let sessions = store.list_sessions().await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].ended_ms, None);
    // No temporary screenshot files were left behind.
    let leftovers = std::fs::read_dir(store.screenshots_dir())
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".tmp")
        })
        .count();
    assert_eq!(leftovers, 0);
}

// ----- faults ------------------------------------------------------------

#[tokio::test]
async fn opening_on_a_file_is_a_clear_error() {
    let dir = TempDir::new("on-file");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let error = HistoryStore::open(&file).expect_err("open must fail");
    assert!(
        matches!(
            error,
            Error::Storage {
                operation: "open",
                fault: StorageFault::CannotOpen,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("not-a-dir"), "{error}");
}

#[tokio::test]
async fn a_database_that_is_not_sqlite_is_a_clear_error() {
    let dir = TempDir::new("garbage");
    std::fs::write(
        dir.path().join(DATABASE_FILE),
        vec![0x5a; 8192], // not an SQLite header
    )
    .unwrap();
    let error = HistoryStore::open(dir.path()).expect_err("open must fail");
    assert_eq!(error.fault(), Some(StorageFault::Corrupt), "{error}");
}

#[tokio::test]
async fn disk_full_is_a_clear_error_and_the_writer_goes_on() {
    let dir = TempDir::new("full");
    let (store, _) = open_with_session(dir.path()).await;
    // Cap the file at its current size: the next page it needs is "disk full".
    store
        .execute_on_writer("PRAGMA max_page_count = 1")
        .await
        .unwrap();
    let mut big = with_screenshots(action("tab_1", "click", 1));
    big.params = json!({ "text": "x".repeat(256 * 1024) });
    let error = store.record_action(big).await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::Storage {
                operation: "record action",
                fault: StorageFault::DiskFull,
                ..
            }
        ),
        "{error}"
    );
    // The refused action left no files and no events.
    assert_eq!(
        std::fs::read_dir(store.screenshots_dir()).unwrap().count(),
        0
    );
    assert!(
        store
            .list_events(EventFilter::default())
            .await
            .unwrap()
            .is_empty()
    );

    store
        .execute_on_writer("PRAGMA max_page_count = 1073741823")
        .await
        .unwrap();
    let recorded = store
        .record_action(action("tab_1", "click", 2))
        .await
        .unwrap();
    assert!(store.get_action(&recorded.id).await.unwrap().is_some());
}

#[tokio::test]
async fn a_locked_database_is_a_clear_error_after_the_busy_timeout() {
    let dir = TempDir::new("locked");
    let store = HistoryStore::open_with(
        dir.path(),
        HistoryOptions {
            busy_timeout: Duration::from_millis(100),
        },
    )
    .unwrap();
    let other = raw_connection(dir.path());
    other.execute_batch("BEGIN IMMEDIATE").unwrap();

    let error = store.start_session(json!({})).await.unwrap_err();
    assert_eq!(error.fault(), Some(StorageFault::Locked), "{error}");
    assert!(error.to_string().contains("start session"), "{error}");
    assert!(store.current_session_id().is_none());

    other.execute_batch("COMMIT").unwrap();
    store.start_session(json!({})).await.unwrap();
}

#[tokio::test]
async fn a_read_only_database_is_a_clear_error() {
    let dir = TempDir::new("read-only");
    let (store, _) = open_with_session(dir.path()).await;
    // Root ignores file modes, so refuse writes in SQLite instead.
    store
        .execute_on_writer("PRAGMA query_only = 1")
        .await
        .unwrap();
    let error = store
        .record_action(action("tab_1", "click", 1))
        .await
        .unwrap_err();
    assert_eq!(error.fault(), Some(StorageFault::ReadOnly), "{error}");
    store
        .execute_on_writer("PRAGMA query_only = 0")
        .await
        .unwrap();
    store
        .record_action(action("tab_1", "click", 1))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_panicking_job_does_not_stop_the_writer() {
    let dir = TempDir::new("panic");
    let (store, _) = open_with_session(dir.path()).await;
    let error = store.panic_on_writer().await.unwrap_err();
    assert!(
        matches!(error, Error::Interrupted { thread: "writer" }),
        "{error}"
    );
    store
        .record_action(action("tab_1", "click", 1))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_closed_store_answers_closed_instead_of_hanging() {
    let dir = TempDir::new("closed");
    let (store, _) = open_with_session(dir.path()).await;
    let clone = store.clone();
    store.close().await.unwrap();
    let error = clone
        .record_action(action("tab_1", "click", 1))
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::Closed { thread: "writer" }),
        "{error}"
    );
    let error = clone.list_sessions().await.unwrap_err();
    assert!(
        matches!(error, Error::Closed { thread: "reader" }),
        "{error}"
    );
    // Closing again is harmless.
    clone.close().await.unwrap();
    // Closing checkpointed the WAL into the database file.
    let wal = dir.path().join("history.db-wal");
    assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);
}

// ----- threading ---------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clones_record_concurrently_from_many_tasks() {
    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync_clone::<HistoryStore>();

    let dir = TempDir::new("concurrent");
    let (store, _) = open_with_session(dir.path()).await;
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                for step in 0..5 {
                    let tab = format!("tab_{task}");
                    store
                        .record_action(action(&tab, "click", task * 100 + step))
                        .await
                        .unwrap();
                    // Reads see every answered write.
                    let seen = store
                        .list_actions(ActionFilter {
                            tab_id: Some(tab),
                            ..ActionFilter::default()
                        })
                        .await
                        .unwrap();
                    assert_eq!(seen.len() as i64, step + 1);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let all = store.list_actions(ActionFilter::default()).await.unwrap();
    assert_eq!(all.len(), 80);
    let _: Value = serde_json::to_value(&all[0]).unwrap();
}

#[tokio::test]
async fn rows_are_read_and_deleted_per_owner() {
    let dir = TempDir::new("owners");
    // A database written by schema version 1 (no user_id) keeps its rows,
    // which belong to no user after the upgrade.
    {
        let mut conn = raw_connection(dir.path());
        let tx = conn.transaction().unwrap();
        tx.execute_batch(MIGRATIONS[0]).unwrap();
        tx.pragma_update(None, "user_version", 1).unwrap();
        tx.execute(
            "INSERT INTO sessions (id, started_ms, session_dir, metadata) VALUES ('ses_old', 1, '.', '{}')",
            [],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO actions (id, session_id, tab_id, action_type, params, started_ms, completed_ms, duration_ms)
             VALUES ('act_old', 'ses_old', 'tab_old', 'click', '{}', 1, 2, 1)",
            [],
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let (store, _) = open_with_session(dir.path()).await;
    assert_eq!(user_version(dir.path()), MIGRATIONS.len() as i64);
    for (tab, user) in [
        ("tab_a", Some("alice")),
        ("tab_b", Some("bob")),
        ("tab_n", None),
    ] {
        let mut recorded = with_screenshots(action(tab, "click", 10));
        recorded.user_id = user.map(str::to_string);
        store.record_action(recorded).await.unwrap();
        let mut calls = network_calls();
        for call in &mut calls {
            call.tab_id = tab.into();
            call.user_id = user.map(str::to_string);
        }
        store.save_network_calls("t", calls).await.unwrap();
    }
    let only = |user: Option<&str>| RowOwner::Only(user.map(str::to_string));
    let tabs = |actions: Vec<ActionRecord>| -> Vec<String> {
        actions.into_iter().map(|a| a.tab_id).collect()
    };
    let list = |owner: RowOwner| {
        store.list_actions(ActionFilter {
            owner,
            ..ActionFilter::default()
        })
    };
    assert_eq!(tabs(list(only(Some("alice"))).await.unwrap()), ["tab_a"]);
    assert_eq!(tabs(list(only(None)).await.unwrap()), ["tab_old", "tab_n"]);
    assert_eq!(list(RowOwner::Any).await.unwrap().len(), 4);
    let events = store
        .list_events(EventFilter {
            owner: only(Some("bob")),
            ..EventFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(events.len(), 2, "bob's action's two events");
    assert!(events.iter().all(|e| e.user_id.as_deref() == Some("bob")));
    let bob_calls = store
        .query_network(NetworkFilter {
            owner: only(Some("bob")),
            ..NetworkFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(bob_calls.len(), 4);
    assert!(bob_calls.iter().all(|c| c.tab_id == "tab_b"));

    // Another owner's screenshot is not found; the owner's is.
    let alice_action = list(only(Some("alice"))).await.unwrap().remove(0);
    for (owner, found) in [(only(Some("bob")), false), (only(Some("alice")), true)] {
        let shot = store
            .action_screenshot(&alice_action.id, ScreenshotKind::After, owner)
            .await
            .unwrap();
        assert_eq!(shot.is_some(), found);
    }

    // Bob's delete-all takes only bob's rows and files; the old session
    // keeps its row while it still has actions.
    let counts = store.delete_all(only(Some("bob"))).await.unwrap();
    assert_eq!(
        (counts.actions, counts.network_calls, counts.sessions),
        (1, 4, 0)
    );
    assert_eq!(list(RowOwner::Any).await.unwrap().len(), 3);
    assert!(alice_action.screenshot_after.as_ref().unwrap().is_file());
    assert_eq!(
        store
            .delete_network(None, only(Some("alice")))
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        store
            .query_network(NetworkFilter::default())
            .await
            .unwrap()
            .len(),
        4,
        "the no-user calls are left"
    );
    let export = serde_json::to_value(
        store
            .export_session("ses_old", only(Some("alice")))
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(export["actions"].as_array().unwrap().len(), 0);
    let export = serde_json::to_value(
        store
            .export_session("ses_old", only(None))
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(export["actions"][0]["id"], "act_old");
}

#[tokio::test]
async fn pruning_deletes_the_oldest_sessions_first_and_never_the_current_one() {
    let dir = TempDir::new("prune");
    let (store, first) = open_with_session(dir.path()).await;
    let big = |mut action: NewAction| {
        action.screenshot_before = Some(vec![7u8; 4000]);
        action.screenshot_after = Some(vec![7u8; 4000]);
        action
    };
    let first_action = store
        .record_action(big(action("tab_1", "click", 1)))
        .await
        .unwrap();
    store.end_session(&first.id).await.unwrap();
    let second = store.start_session(json!({})).await.unwrap();
    store
        .record_action(big(action("tab_1", "click", 2)))
        .await
        .unwrap();
    store.end_session(&second.id).await.unwrap();
    let current = store.start_session(json!({})).await.unwrap();
    let current_action = store
        .record_action(big(action("tab_1", "click", 3)))
        .await
        .unwrap();

    // Under the limit: nothing goes.
    let pruned = store.prune_to(1_000_000).await.unwrap();
    assert_eq!(pruned.sessions, Vec::<String>::new());
    assert_eq!(pruned.bytes_left, 24_000);
    // Room for two sessions' screenshots: the oldest goes, with its files.
    let pruned = store.prune_to(16_000).await.unwrap();
    assert_eq!(pruned.sessions, vec![first.id.clone()]);
    assert_eq!(pruned.bytes_left, 16_000);
    assert!(store.get_action(&first_action.id).await.unwrap().is_none());
    for kind in [ScreenshotKind::Before, ScreenshotKind::After] {
        assert!(
            first_action
                .screenshot_path(kind)
                .is_some_and(|p| !p.exists())
        );
    }
    assert!(store.get_session(&first.id).await.unwrap().is_none());
    // Far under: every old session goes, the current one stays whole.
    let pruned = store.prune_to(1).await.unwrap();
    assert_eq!(pruned.sessions, vec![second.id.clone()]);
    assert_eq!(pruned.bytes_left, 8_000);
    assert!(store.get_session(&current.id).await.unwrap().is_some());
    assert!(
        store
            .get_action(&current_action.id)
            .await
            .unwrap()
            .is_some()
    );
}
