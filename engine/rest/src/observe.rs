//! Reading pages for agents: `GET /tabs/{id}/snapshot` (accessibility tree
//! with refs), `GET /tabs/{id}/state` and `POST /tabs/{id}/state/action`
//! (browser-use state and actions by index).

use axum::extract::{Extension, Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;
use wabp_core::observe::SnapshotRequest;
use wabp_core::snapshot::SnapshotFormat;
use wabp_core::{ActionOptions, Caller};

use crate::AppState;
use crate::body::Body;
use crate::error::{ApiError, ApiResult};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tabs/{tab}/snapshot", get(snapshot))
        .route("/tabs/{tab}/state", get(state))
        .route("/tabs/{tab}/state/action", post(state_action))
}

#[derive(Debug, Deserialize)]
struct SnapshotQuery {
    offset: Option<String>,
    format: Option<String>,
    #[serde(rename = "includeScreenshot", alias = "include_screenshot")]
    include_screenshot: Option<String>,
}

fn parse_bool(field: &str, value: Option<&str>) -> ApiResult<bool> {
    match value {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ApiError::invalid(format!(
            "query parameter {field} must be true or false, got {other:?}"
        ))),
    }
}

async fn snapshot(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    query: Result<Query<SnapshotQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let Query(query) = query.map_err(|e| ApiError::invalid(format!("bad query: {e}")))?;
    let offset = match query.offset.as_deref() {
        None | Some("") => 0,
        Some(text) => text.parse::<usize>().map_err(|_| {
            ApiError::invalid(format!(
                "query parameter offset must be a non-negative integer (a nextOffset), got {text:?}"
            ))
        })?,
    };
    let format = match query.format.as_deref() {
        None | Some("") | Some("text") => SnapshotFormat::Text,
        Some("json") => SnapshotFormat::Json,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "query parameter format must be text or json, got {other:?}"
            )));
        }
    };
    let include_screenshot = parse_bool("includeScreenshot", query.include_screenshot.as_deref())?;
    let request = SnapshotRequest {
        format,
        offset,
        include_screenshot,
    };
    Ok(Json(s.engine.snapshot(&caller, &tab, request).await?))
}

async fn state(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.state(&caller, &tab).await?))
}

async fn state_action(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    // browser-use sends {"action": {...}} or the action object itself.
    let action = body
        .get("action")
        .filter(|a| a.is_object())
        .unwrap_or(&body);
    let envelope = s
        .engine
        .state_action(&caller, &tab, action, &options)
        .await?;
    let mut value = serde_json::to_value(envelope)
        .map_err(|e| ApiError(wabp_core::Error::internal(e.to_string())))?;
    value["success"] = Value::Bool(true);
    Ok(Json(value))
}
