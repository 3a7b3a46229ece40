//! `/network*`: saved network calls (regex queries, HAR export), saving a
//! tab's buffer under a tag, and the live buffer of a tab (wabp addition).
//! Saved calls are read, exported and deleted per `userId`, like history.

use axum::extract::{Extension, Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_core::{Error, ErrorCode};
use wabp_history::{NetworkFilter, RowOwner};

use crate::AppState;
use crate::body::{Body, optional_str, required_str};
use crate::error::{ApiError, ApiResult};
use wabp_core::Caller;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/network", get(query).delete(clear))
        .route("/network/save", post(save))
        .route("/network/har", get(har))
        .route("/tabs/{tab}/network", get(live))
        .route("/tabs/{tab}/curl", post(curl))
}

fn store(state: &AppState) -> ApiResult<&wabp_history::HistoryStore> {
    state.history.as_ref().ok_or_else(|| {
        ApiError(Error::new(
            ErrorCode::NotFound,
            "network calls are not saved by this engine",
        ))
    })
}

/// The query's filter, narrowed to the caller's own calls.
fn filter(
    q: Result<Query<NetworkFilter>, axum::extract::rejection::QueryRejection>,
    caller: &Caller,
) -> ApiResult<NetworkFilter> {
    q.map(|Query(f)| NetworkFilter {
        owner: RowOwner::Only(caller.user_id().map(str::to_string)),
        ..f
    })
    .map_err(|e| ApiError::invalid(format!("bad query: {e}")))
}

async fn query(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<NetworkFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let calls = store(&s)?.query_network(filter(q, &caller)?).await?;
    Ok(Json(json!({ "total": calls.len(), "calls": calls })))
}

async fn save(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let tag = required_str(&body, "tag")?;
    // The tab must be the caller's: named, or the active tab when it is.
    let tab = optional_str(&body, "tab_id")?;
    let saved = s.engine.save_network(&caller, tab, tag).await?;
    Ok(Json(json!({ "saved": saved, "tag": tag })))
}

#[derive(Deserialize)]
struct ClearQuery {
    tag: Option<String>,
}

async fn clear(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<ClearQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let Query(q) = q.map_err(|e| ApiError::invalid(format!("bad query: {e}")))?;
    let deleted = store(&s)?
        .delete_network(
            q.tag.as_deref(),
            RowOwner::Only(caller.user_id().map(str::to_string)),
        )
        .await?;
    Ok(Json(json!({ "deleted": deleted })))
}

/// HAR 1.2 of the saved calls the filter selects (bodies included).
async fn har(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    q: Result<Query<NetworkFilter>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let mut f = filter(q, &caller)?;
    f.include_body = true;
    let calls = store(&s)?.query_network(f).await?;
    Ok(Json(wabp_history::har::to_har(
        &calls,
        env!("CARGO_PKG_VERSION"),
    )))
}

async fn live(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
) -> ApiResult<Json<Value>> {
    let (calls, dropped) = s.engine.tab_network(&caller, &tab)?;
    Ok(Json(
        json!({ "total": calls.len(), "dropped": dropped, "calls": calls }),
    ))
}

async fn curl(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(tab): Path<String>,
    Body(body): Body,
) -> ApiResult<Json<Value>> {
    let url = required_str(&body, "url")?.to_string();
    let method = optional_str(&body, "method")?.unwrap_or("GET").to_string();
    let headers = match body.get("headers") {
        None | Some(Value::Null) => Default::default(),
        Some(Value::Object(h)) => {
            if h.values().any(|v| !v.is_string()) {
                return Err(ApiError::invalid("\"headers\" values must be strings"));
            }
            h.clone()
        }
        Some(_) => {
            return Err(ApiError::invalid(
                "\"headers\" must be an object of strings",
            ));
        }
    };
    let request_body = optional_str(&body, "body")?
        .filter(|b| !b.is_empty())
        .map(str::to_string);
    let tag = optional_str(&body, "tag")?.map(str::to_string);
    Ok(Json(
        s.engine
            .curl(
                &caller,
                &tab,
                wabp_core::engine::CurlRequest {
                    url,
                    method,
                    headers,
                    body: request_body,
                    tag,
                },
            )
            .await?,
    ))
}
