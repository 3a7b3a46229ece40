//! The flight recorder: sessions, actions (with their screenshots) and
//! events. A caller reads and deletes only the rows recorded for it;
//! another user's action or event is not found.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wabp_core::{Error, ErrorCode, Result};
use wabp_history::{
    ActionFilter, ActionRecord, EventFilter, EventRecord, HistoryStore, RowOwner, ScreenshotKind,
    SessionRecord,
};

use super::{Nothing, json, to_json};
use crate::{Ctx, Operation, Output, Scope, history_error};

fn store(ctx: &Ctx) -> Result<&HistoryStore> {
    ctx.history.as_ref().ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            "history is not recorded by this engine",
        )
    })
}

fn owner(ctx: &Ctx) -> RowOwner {
    RowOwner::Only(ctx.caller.user_id().map(str::to_string))
}

fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorCode::NotFound, format!("{what} {id} not found"))
}

#[derive(Serialize, JsonSchema)]
struct Sessions {
    sessions: Vec<SessionRecord>,
    total: usize,
}

#[derive(Serialize, JsonSchema)]
struct Actions {
    actions: Vec<ActionRecord>,
    total: usize,
}

#[derive(Serialize, JsonSchema)]
struct Events {
    events: Vec<EventRecord>,
    total: usize,
}

/// How many records were deleted.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Deleted {
    pub(crate) deleted: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Id {
    /// The record's id.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct ExportInput {
    /// The session's id.
    id: String,
    /// Put each action's screenshots in the document (base64 WebP), so it
    /// shows the session on its own (`wabp view FILE`).
    #[serde(default)]
    screenshots: bool,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
enum Which {
    Before,
    #[default]
    After,
}

#[derive(Deserialize, JsonSchema)]
struct ActionShot {
    /// The action's id.
    id: String,
    /// `after` (default: the page after the action) or `before`.
    #[serde(default)]
    which: Option<Which>,
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(session_operations());
    all.extend(record_operations());
    all
}

/// Sessions and their export.
fn session_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "history_sessions",
            "The engine's recorded sessions.",
            |ctx, _: Nothing| async move {
                let sessions = store(&ctx)?.list_sessions().await.map_err(history_error)?;
                let total = sessions.len();
                json(to_json(&Sessions { sessions, total })?)
            },
        )
        .get("/history/sessions")
        .answers::<Sessions>(),
        Operation::new(
            "history_current_session",
            "The session being recorded now.",
            |ctx, _: Nothing| async move {
                let session = store(&ctx)?
                    .current_session()
                    .await
                    .map_err(history_error)?
                    .ok_or_else(|| not_found("session", "current"))?;
                json(to_json(&session)?)
            },
        )
        .get("/history/sessions/current")
        .answers::<SessionRecord>(),
        Operation::new(
            "history_session",
            "One recorded session.",
            |ctx, input: Id| async move {
                let session = store(&ctx)?
                    .get_session(&input.id)
                    .await
                    .map_err(history_error)?
                    .ok_or_else(|| not_found("session", &input.id))?;
                json(to_json(&session)?)
            },
        )
        .get("/history/sessions/{id}")
        .answers::<SessionRecord>(),
        Operation::new(
            "history_export",
            "A session with the caller's actions and events, as one JSON document; with screenshots=true, each action's screenshots too (open it with `wabp view FILE`).",
            |ctx, input: ExportInput| async move {
                let store = store(&ctx)?;
                let mut export = store
                    .export_session(&input.id, owner(&ctx))
                    .await
                    .map_err(history_error)?
                    .ok_or_else(|| not_found("session", &input.id))?;
                if input.screenshots {
                    use base64::Engine as _;
                    let mut shots = std::collections::BTreeMap::new();
                    for action in &export.actions {
                        let read = |kind| {
                            let store = store.clone();
                            let id = action.id.clone();
                            let owner = owner(&ctx);
                            async move {
                                store
                                    .action_screenshot(&id, kind, owner)
                                    .await
                                    .ok()
                                    .flatten()
                                    .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
                            }
                        };
                        let before = read(ScreenshotKind::Before).await;
                        let after = read(ScreenshotKind::After).await;
                        if before.is_some() || after.is_some() {
                            shots.insert(
                                action.id.clone(),
                                wabp_history::ActionScreenshots { before, after },
                            );
                        }
                    }
                    export.screenshots = Some(shots);
                }
                json(to_json(&export)?)
            },
        )
        .get("/history/sessions/{id}/export")
        .answers::<wabp_history::SessionExport>(),
    ]
}

/// Recorded actions and events.
fn record_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "history_actions",
            "The caller's recorded actions, oldest first.",
            |ctx, filter: ActionFilter| async move {
                let filter = ActionFilter {
                    owner: owner(&ctx),
                    ..filter
                };
                let actions = store(&ctx)?
                    .list_actions(filter)
                    .await
                    .map_err(history_error)?;
                let total = actions.len();
                json(to_json(&Actions { actions, total })?)
            },
        )
        .get("/history/actions")
        .answers::<Actions>(),
        Operation::new(
            "history_delete_actions",
            "Delete the caller's recorded actions that match the filter.",
            |ctx, filter: ActionFilter| async move {
                let filter = ActionFilter {
                    owner: owner(&ctx),
                    ..filter
                };
                let deleted = store(&ctx)?
                    .delete_actions(filter)
                    .await
                    .map_err(history_error)?;
                json(to_json(&Deleted { deleted })?)
            },
        )
        .delete("/history/actions")
        .answers::<Deleted>()
        .scope(Scope::Act),
        Operation::new(
            "history_action",
            "One recorded action.",
            |ctx, input: Id| async move {
                let action = store(&ctx)?
                    .get_action(&input.id)
                    .await
                    .map_err(history_error)?
                    .filter(|a| owner(&ctx).sees(a.user_id.as_deref()))
                    .ok_or_else(|| not_found("action", &input.id))?;
                json(to_json(&action)?)
            },
        )
        .get("/history/actions/{id}")
        .answers::<ActionRecord>(),
        Operation::new(
            "history_action_screenshot",
            "A recorded action's screenshot (WebP), after the action or before it.",
            |ctx, input: ActionShot| async move {
                let kind = match input.which.unwrap_or_default() {
                    Which::Before => ScreenshotKind::Before,
                    Which::After => ScreenshotKind::After,
                };
                let bytes = store(&ctx)?
                    .action_screenshot(&input.id, kind, owner(&ctx))
                    .await
                    .map_err(history_error)?
                    .ok_or_else(|| not_found("screenshot of action", &input.id))?;
                Ok(Output::Bytes {
                    mime: "image/webp",
                    bytes,
                })
            },
        )
        .get("/history/actions/{id}/screenshot")
        .answers_bytes("image/webp"),
        Operation::new(
            "history_events",
            "The caller's recorded events, oldest first.",
            |ctx, filter: EventFilter| async move {
                let filter = EventFilter {
                    owner: owner(&ctx),
                    ..filter
                };
                let events = store(&ctx)?
                    .list_events(filter)
                    .await
                    .map_err(history_error)?;
                let total = events.len();
                json(to_json(&Events { events, total })?)
            },
        )
        .get("/history/events")
        .answers::<Events>(),
        Operation::new(
            "history_delete_events",
            "Delete the caller's recorded events that match the filter.",
            |ctx, filter: EventFilter| async move {
                let filter = EventFilter {
                    owner: owner(&ctx),
                    ..filter
                };
                let deleted = store(&ctx)?
                    .delete_events(filter)
                    .await
                    .map_err(history_error)?;
                json(to_json(&Deleted { deleted })?)
            },
        )
        .delete("/history/events")
        .answers::<Deleted>()
        .scope(Scope::Act),
        Operation::new(
            "history_event",
            "One recorded event.",
            |ctx, input: Id| async move {
                let event = store(&ctx)?
                    .get_event(&input.id)
                    .await
                    .map_err(history_error)?
                    .filter(|e| owner(&ctx).sees(e.user_id.as_deref()))
                    .ok_or_else(|| not_found("event", &input.id))?;
                json(to_json(&event)?)
            },
        )
        .get("/history/events/{id}")
        .answers::<EventRecord>(),
        Operation::new(
            "history_delete_all",
            "Delete everything recorded for the caller (the current session stays).",
            |ctx, _: Nothing| async move {
                let counts = store(&ctx)?
                    .delete_all(owner(&ctx))
                    .await
                    .map_err(history_error)?;
                json(to_json(&counts)?)
            },
        )
        .delete("/history")
        .answers::<wabp_history::DeletedCounts>()
        .scope(Scope::Act),
    ]
}
