//! Execution control and what an action leaves pending: `/tabs/{id}/execution`,
//! `/file-chooser/{id}`, `/select/{id}`, `/downloads`.

use axum::extract::{Extension, Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_core::downloads::DownloadState;

use crate::AppState;
use crate::body::{Body, optional_bool, optional_str};
use crate::error::{ApiError, ApiResult};
use wabp_core::Caller;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tabs/{tab}/execution", get(execution).post(set_execution))
        .route("/file-chooser/{id}", post(file_chooser))
        .route("/select/{id}", post(select))
        .route("/downloads", get(downloads))
        .route("/downloads/{id}", get(download))
        .route("/downloads/{id}/cancel", post(cancel_download))
}

fn execution_body(state: wabp_core::execution::ExecutionState) -> Json<Value> {
    Json(serde_json::to_value(state).unwrap_or_default())
}

async fn execution(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(execution_body(s.engine.execution(&caller, &tab).await?))
}

async fn set_execution(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let paused = optional_bool(&body, "paused")?
        .ok_or_else(|| ApiError::invalid("missing field \"paused\" (a boolean)"))?;
    let initial = match body.get("initial_virtual_time") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().filter(|t| t.is_finite() && *t >= 0.0).ok_or_else(|| {
            ApiError::invalid(
                "field \"initial_virtual_time\" must be a non-negative number of seconds since the Unix epoch",
            )
        })?),
    };
    Ok(execution_body(
        s.engine
            .set_execution(&caller, &tab, paused, initial)
            .await?,
    ))
}

fn string_list(body: &Value, field: &str) -> ApiResult<Option<Vec<String>>> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    ApiError::invalid(format!("field \"{field}\" must be a list of strings"))
                })
            })
            .collect::<ApiResult<Vec<_>>>()
            .map(Some),
        Some(_) => Err(ApiError::invalid(format!(
            "field \"{field}\" must be a list of strings"
        ))),
    }
}

async fn file_chooser(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let files = string_list(&body, "files")?;
    let path = optional_str(&body, "path")?.map(str::to_string);
    let cancel = optional_bool(&body, "cancel")?.unwrap_or(false);
    Ok(Json(
        s.engine
            .answer_file_chooser(&id, files, path, cancel, &caller)
            .await?,
    ))
}

async fn select(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let indices = match body.get("indices") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| {
                    v.as_u64().ok_or_else(|| {
                        ApiError::invalid(
                            "field \"indices\" must be a list of non-negative integers",
                        )
                    })
                })
                .collect::<ApiResult<Vec<u64>>>()?,
        ),
        Some(_) => {
            return Err(ApiError::invalid(
                "field \"indices\" must be a list of non-negative integers",
            ));
        }
    };
    let cancel = optional_bool(&body, "cancel")?.unwrap_or(false);
    Ok(Json(
        s.engine
            .answer_select(&id, indices, cancel, &caller)
            .await?,
    ))
}

#[derive(Deserialize)]
struct DownloadsQuery {
    state: Option<String>,
    limit: Option<usize>,
}

async fn downloads(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    query: Result<Query<DownloadsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let Query(query) = query.map_err(|e| ApiError::invalid(format!("bad query: {e}")))?;
    let state = match query.state.as_deref() {
        None | Some("") => None,
        Some(text) => Some(DownloadState::parse(text).ok_or_else(|| {
            ApiError::invalid(format!(
                "state must be in_progress, completed, cancelled or failed, not {text:?}"
            ))
        })?),
    };
    let limit = query.limit.unwrap_or(100).min(10_000);
    Ok(Json(
        json!({ "downloads": s.engine.downloads(state, limit, &caller) }),
    ))
}

async fn download(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.download(&caller, &id)?.detail()))
}

async fn cancel_download(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.cancel_download(&caller, &id).await?))
}
