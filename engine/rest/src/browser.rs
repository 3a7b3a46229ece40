//! `/browser/*` and `/plugins`.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use wabp_core::InputMode;

use crate::AppState;
use crate::body::{Body, optional_u64, required_str};
use crate::error::{ApiError, ApiResult};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/browser/status", get(status))
        .route("/browser/shutdown", post(shutdown))
        .route("/browser/session-data", get(session_data))
        .route("/browser/input-mode", get(input_mode).post(set_input_mode))
        .route("/plugins", get(plugins))
}

async fn status(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "success": true, "data": state.engine.status() }))
}

async fn shutdown(State(state): State<AppState>, Body(body): Body) -> ApiResult<Json<Value>> {
    let timeout_ms = optional_u64(&body, "timeout_ms")?
        .unwrap_or(5000)
        .min(60_000);
    state
        .engine
        .shutdown(std::time::Duration::from_millis(timeout_ms))
        .await;
    state.shutdown.notify_waiters();
    Ok(Json(json!({ "success": true })))
}

async fn session_data(State(state): State<AppState>) -> Json<Value> {
    let dir = &state.engine.config.session_dir;
    Json(json!({
        "success": true,
        "data": {
            "session_dir": dir,
            "database_path": dir.join("history.db"),
            "screenshots_dir": dir.join("screenshots"),
            "screenshots_enabled": state.history.is_some(),
            "downloads_dir": state.engine.downloads_dir(),
        }
    }))
}

async fn input_mode(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "input_mode": state.engine.input_mode() }))
}

async fn set_input_mode(State(state): State<AppState>, Body(body): Body) -> ApiResult<Json<Value>> {
    let mode = match required_str(&body, "input_mode")? {
        "agent" => InputMode::Agent,
        "human" => InputMode::Human,
        other => {
            return Err(ApiError::invalid(format!(
                "input_mode must be \"agent\" or \"human\", not {other:?}"
            )));
        }
    };
    state.engine.set_input_mode(mode).await?;
    Ok(Json(json!({ "input_mode": mode })))
}

async fn plugins(State(state): State<AppState>) -> Json<Value> {
    let registry = &state.engine.registry;
    Json(json!({
        "plugins": registry.plugins(),
        "actions": registry.actions(),
        "markup_tags": registry.markup_tags(),
        "wait_types": registry.waits(),
    }))
}
