//! `/history/*`: the flight recorder's sessions, actions (with their
//! screenshots) and events, as ABP lists them. A request reads and deletes
//! only the rows recorded for its own `userId` (or for none, without one);
//! another user's action or event answers 404, as if it did not exist.

use axum::extract::{Extension, Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_core::{Error, ErrorCode};
use wabp_history::{ActionFilter, EventFilter, HistoryStore, RowOwner, ScreenshotKind};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use wabp_core::Caller;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/history", axum::routing::delete(delete_all))
        .route("/history/sessions", get(sessions))
        .route("/history/sessions/current", get(current_session))
        .route("/history/sessions/{id}", get(session))
        .route("/history/sessions/{id}/export", get(export_session))
        .route("/history/actions", get(actions).delete(delete_actions))
        .route("/history/actions/{id}", get(action))
        .route("/history/actions/{id}/screenshot", get(action_screenshot))
        .route("/history/events", get(events).delete(delete_events))
        .route("/history/events/{id}", get(event))
}

impl From<wabp_history::Error> for ApiError {
    fn from(err: wabp_history::Error) -> Self {
        let code = match &err {
            wabp_history::Error::InvalidFilter { .. } => ErrorCode::InvalidRequest,
            wabp_history::Error::NotFound { .. } => ErrorCode::NotFound,
            _ => ErrorCode::Internal,
        };
        ApiError(Error::new(code, format!("history: {err}")))
    }
}

fn store(state: &AppState) -> ApiResult<&HistoryStore> {
    state.history.as_ref().ok_or_else(|| {
        ApiError(Error::new(
            ErrorCode::NotFound,
            "history is not recorded by this engine",
        ))
    })
}

fn not_found(what: &str, id: &str) -> ApiError {
    ApiError(Error::new(
        ErrorCode::NotFound,
        format!("{what} {id} not found"),
    ))
}

fn query<T>(q: Result<Query<T>, axum::extract::rejection::QueryRejection>) -> ApiResult<T> {
    q.map(|Query(v)| v)
        .map_err(|e| ApiError::invalid(format!("bad query: {e}")))
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

async fn sessions(State(s): State<AppState>) -> ApiResult<Json<Value>> {
    let sessions = store(&s)?.list_sessions().await?;
    Ok(Json(
        json!({ "sessions": to_json(&sessions), "total": sessions.len() }),
    ))
}

async fn current_session(State(s): State<AppState>) -> ApiResult<Json<Value>> {
    let session = store(&s)?
        .current_session()
        .await?
        .ok_or_else(|| not_found("session", "current"))?;
    Ok(Json(to_json(&session)))
}

async fn session(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let session = store(&s)?
        .get_session(&id)
        .await?
        .ok_or_else(|| not_found("session", &id))?;
    Ok(Json(to_json(&session)))
}

/// The rows a request may see.
fn owner(caller: &Caller) -> RowOwner {
    RowOwner::Only(caller.user_id().map(str::to_string))
}

async fn export_session(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        store(&s)?
            .export_session(&id, owner(&caller))
            .await?
            .ok_or_else(|| not_found("session", &id))?,
    ))
}

async fn actions(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<ActionFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let filter = ActionFilter {
        owner: owner(&caller),
        ..query(q)?
    };
    let actions = store(&s)?.list_actions(filter).await?;
    Ok(Json(
        json!({ "actions": to_json(&actions), "total": actions.len() }),
    ))
}

async fn action(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let action = store(&s)?
        .get_action(&id)
        .await?
        .filter(|a| owner(&caller).sees(a.user_id.as_deref()))
        .ok_or_else(|| not_found("action", &id))?;
    Ok(Json(to_json(&action)))
}

#[derive(Deserialize)]
struct WhichShot {
    /// `before` or `after` (the default: the page after the action).
    which: Option<String>,
}

async fn action_screenshot(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    q: Result<Query<WhichShot>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    let kind = match query(q)?.which.as_deref() {
        None | Some("after") => ScreenshotKind::After,
        Some("before") => ScreenshotKind::Before,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "which must be \"before\" or \"after\", not {other:?}"
            )));
        }
    };
    let bytes = store(&s)?
        .action_screenshot(&id, kind, owner(&caller))
        .await?
        .ok_or_else(|| not_found("screenshot of action", &id))?;
    Ok(([(header::CONTENT_TYPE, "image/webp")], bytes).into_response())
}

async fn delete_actions(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<ActionFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let filter = ActionFilter {
        owner: owner(&caller),
        ..query(q)?
    };
    let deleted = store(&s)?.delete_actions(filter).await?;
    Ok(Json(json!({ "deleted": deleted })))
}

async fn events(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<EventFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let filter = EventFilter {
        owner: owner(&caller),
        ..query(q)?
    };
    let events = store(&s)?.list_events(filter).await?;
    Ok(Json(
        json!({ "events": to_json(&events), "total": events.len() }),
    ))
}

async fn event(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let event = store(&s)?
        .get_event(&id)
        .await?
        .filter(|e| owner(&caller).sees(e.user_id.as_deref()))
        .ok_or_else(|| not_found("event", &id))?;
    Ok(Json(to_json(&event)))
}

async fn delete_events(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<EventFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let filter = EventFilter {
        owner: owner(&caller),
        ..query(q)?
    };
    let deleted = store(&s)?.delete_events(filter).await?;
    Ok(Json(json!({ "deleted": deleted })))
}

async fn delete_all(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    let counts = store(&s)?.delete_all(owner(&caller)).await?;
    Ok(Json(to_json(&counts)))
}
