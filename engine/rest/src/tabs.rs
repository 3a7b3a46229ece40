//! `/tabs/*`: tab management, navigation, input actions (built-in plugin
//! actions), plugin actions, screenshots, script, text, wait, dialogs.

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_core::ActionOptions;
use wabp_core::action::action_params;

use crate::AppState;
use crate::body::{Body, optional_bool, optional_str, optional_u64, required_str};
use crate::error::{ApiError, ApiResult};
use wabp_core::Caller;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tabs", get(list).post(create))
        .route("/tabs/{tab}", get(info).delete(close))
        .route("/tabs/{tab}/activate", post(activate))
        .route("/tabs/{tab}/stop", post(stop))
        .route("/tabs/{tab}/navigate", post(navigate))
        .route("/tabs/{tab}/back", post(back))
        .route("/tabs/{tab}/forward", post(forward))
        .route("/tabs/{tab}/reload", post(reload))
        .route(
            "/tabs/{tab}/click",
            post(|s, c, p, b| builtin(s, c, p, b, "click")),
        )
        .route(
            "/tabs/{tab}/move",
            post(|s, c, p, b| builtin(s, c, p, b, "move")),
        )
        .route(
            "/tabs/{tab}/hover",
            post(|s, c, p, b| builtin(s, c, p, b, "hover")),
        )
        .route(
            "/tabs/{tab}/scroll",
            post(|s, c, p, b| builtin(s, c, p, b, "scroll")),
        )
        .route(
            "/tabs/{tab}/type",
            post(|s, c, p, b| builtin(s, c, p, b, "type")),
        )
        .route(
            "/tabs/{tab}/fill",
            post(|s, c, p, b| builtin(s, c, p, b, "fill")),
        )
        .route(
            "/tabs/{tab}/keyboard/press",
            post(|s, c, p, b| builtin(s, c, p, b, "keyboard_press")),
        )
        .route(
            "/tabs/{tab}/keyboard/down",
            post(|s, c, p, b| builtin(s, c, p, b, "keyboard_down")),
        )
        .route(
            "/tabs/{tab}/keyboard/up",
            post(|s, c, p, b| builtin(s, c, p, b, "keyboard_up")),
        )
        .route("/tabs/{tab}/actions/{name}", post(plugin_action))
        .route("/tabs/{tab}/execute", post(execute))
        .route("/tabs/{tab}/text", post(text))
        .route("/tabs/{tab}/wait", post(wait))
        .route(
            "/tabs/{tab}/screenshot",
            get(screenshot_binary).post(screenshot_envelope),
        )
        .route("/tabs/{tab}/dialog", get(dialog))
        .route("/tabs/{tab}/dialog/accept", post(dialog_accept))
        .route("/tabs/{tab}/dialog/dismiss", post(dialog_dismiss))
}

fn envelope(result: wabp_core::Result<wabp_core::Envelope>) -> ApiResult<Json<Value>> {
    let envelope = result?;
    Ok(Json(serde_json::to_value(envelope).map_err(|e| {
        ApiError(wabp_core::Error::internal(e.to_string()))
    })?))
}

async fn list(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        serde_json::to_value(s.engine.list_tabs(&caller).await?).unwrap_or_default(),
    ))
}

async fn create(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Body(body): Body,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let url = optional_str(&body, "url")?;
    let active = optional_bool(&body, "active")?.unwrap_or(true);
    let index = optional_u64(&body, "index")?.map(|i| i as usize);
    Ok((
        StatusCode::CREATED,
        Json(s.engine.create_tab(&caller, url, active, index).await?),
    ))
}

async fn info(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.tab_info(&caller, &tab).await?))
}

async fn close(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    s.engine.close_tab(&caller, &tab).await?;
    Ok(Json(json!({})))
}

async fn activate(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.activate_tab(&caller, &tab).await?))
}

async fn stop(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.stop_tab(&caller, &tab).await?))
}

async fn navigate(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let url = required_str(&body, "url")?;
    let referrer = optional_str(&body, "referrer")?;
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(
        s.engine
            .navigate(&caller, &tab, url, referrer, &options)
            .await,
    )
}

async fn back(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(s.engine.history_step(&caller, &tab, -1, &options).await)
}

async fn forward(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(s.engine.history_step(&caller, &tab, 1, &options).await)
}

async fn reload(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(s.engine.reload(&caller, &tab, &options).await)
}

/// Built-in input actions are the `core-actions` plugin's, reached by name.
async fn builtin(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
    name: &'static str,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(
        s.engine
            .plugin_action(&caller, &tab, name, action_params(&body), &options)
            .await,
    )
}

async fn plugin_action(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path((tab, name)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "action_complete")?;
    envelope(
        s.engine
            .plugin_action(&caller, &tab, &name, action_params(&body), &options)
            .await,
    )
}

async fn execute(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    // MCP's parameter is `expression`; accept it here too.
    let script = match optional_str(&body, "script")? {
        Some(script) => script,
        None => optional_str(&body, "expression")?
            .ok_or_else(|| ApiError::invalid("missing field \"script\" (a string)"))?,
    };
    Ok(Json(
        json!({ "result": s.engine.execute(&caller, &tab, script).await? }),
    ))
}

async fn text(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let selector = optional_str(&body, "selector")?;
    Ok(Json(
        json!({ "text": s.engine.text(&caller, &tab, selector).await? }),
    ))
}

async fn wait(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let ms = optional_u64(&body, "ms")
        .map_err(|_| ApiError::invalid("field \"ms\" must be an integer from 0 to 60000"))?
        .ok_or_else(|| ApiError::invalid("missing field \"ms\" (an integer from 0 to 60000)"))?;
    let options = ActionOptions::from_request(&body, "time")?;
    envelope(s.engine.wait(&caller, &tab, ms, &options).await)
}

#[derive(Deserialize)]
struct ScreenshotQuery {
    disable_markup: Option<String>,
    markup: Option<String>,
    cursor: Option<bool>,
}

fn tag_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

async fn screenshot_binary(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    query: Result<Query<ScreenshotQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    let Query(query) = query.map_err(|e| ApiError::invalid(format!("bad query: {e}")))?;
    let mut screenshot = json!({ "cursor": query.cursor.unwrap_or(true) });
    if let Some(disabled) = &query.disable_markup {
        screenshot["disable_markup"] = json!(tag_list(disabled));
    }
    if let Some(markup) = &query.markup {
        screenshot["markup"] = json!(tag_list(markup));
    }
    let options = ActionOptions::from_request(&json!({ "screenshot": screenshot }), "immediate")?;
    let tags = options.markup_tags(s.engine.registry.as_ref())?;
    let shot = s
        .engine
        .screenshot(&caller, &tab, tags, options.screenshot.cursor)
        .await?;
    Ok((
        [(header::CONTENT_TYPE, "image/webp")],
        shot.data.as_ref().clone(),
    )
        .into_response())
}

async fn screenshot_envelope(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let options = ActionOptions::from_request(&body, "immediate")?;
    envelope(s.engine.screenshot_action(&caller, &tab, &options).await)
}

async fn dialog(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.engine.dialog(&caller, &tab).await?))
}

async fn dialog_accept(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let prompt = optional_str(&body, "prompt_text")?.map(str::to_string);
    Ok(Json(
        s.engine.handle_dialog(&caller, &tab, true, prompt).await?,
    ))
}

async fn dialog_dismiss(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        s.engine.handle_dialog(&caller, &tab, false, None).await?,
    ))
}
