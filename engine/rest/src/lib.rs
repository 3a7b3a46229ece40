//! `wabp-rest`: the Agent Browser Protocol REST API at `/api/v1`, plus wabp's
//! additive extensions (plugin actions, `GET /plugins`). Thin: every handler
//! parses, calls one `wabp-core` operation, and shapes the answer.

mod body;
mod browser;
mod error;
mod execution;
pub mod guard;
mod history;
mod network;
mod observe;
mod tabs;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use wabp_core::{Caller, Engine, ErrorCode};

pub use error::{ApiError, error_response};
pub use guard::{ClientGuard, client_only};

#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    /// Notified by `POST /browser/shutdown`, so the server can exit.
    pub shutdown: Arc<tokio::sync::Notify>,
    /// The flight recorder (`/history/*`).
    pub history: Option<wabp_history::HistoryStore>,
}

/// Resolves the request's caller once, from its `userId` (query or JSON
/// body; both must agree), and hands it to every handler as an extension.
/// The core narrows every operation by it. Also counts the request against
/// the user's session (a busy session is never evicted).
pub async fn resolve_caller(
    axum::extract::State(engine): axum::extract::State<Arc<Engine>>,
    request: Request,
    next: Next,
) -> Response {
    let from_query = request
        .uri()
        .query()
        .and_then(|q| url_query_value(q, "userId"));
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, body::MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                ErrorCode::InvalidRequest,
                &format!("request body is larger than {} bytes", body::MAX_BODY),
            );
        }
    };
    let from_body = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("userId").cloned())
        .and_then(|v| v.as_str().map(str::to_string));
    let user = match (from_query, from_body) {
        (Some(q), Some(b)) if q != b => {
            return error_response(
                StatusCode::BAD_REQUEST,
                ErrorCode::InvalidRequest,
                "userId differs between the query and the body",
            );
        }
        (q, b) => q.or(b),
    };
    let caller = match Caller::from_user_id(user.as_deref()) {
        Ok(caller) => caller,
        Err(e) => return ApiError(e).into_response(),
    };
    let _activity = caller.user_id().map(|u| engine.user_activity(u));
    let mut request = Request::from_parts(parts, axum::body::Body::from(bytes));
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// One decoded query parameter.
fn url_query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            url_query_value("a=1&userId=al%40ce+x", "userId").as_deref(),
            Some("al@ce x")
        );
        assert_eq!(url_query_value("userId=", "userId").as_deref(), Some(""));
        assert_eq!(url_query_value("x=1", "userId"), None);
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}

/// The `/api/v1` router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(browser::router())
        .merge(tabs::router())
        .merge(execution::router())
        .merge(history::router())
        .merge(network::router())
        .merge(observe::router())
        .fallback(|| async {
            error_response(
                StatusCode::NOT_FOUND,
                ErrorCode::NotFound,
                "no such endpoint; see the ABP REST API",
            )
        })
        .method_not_allowed_fallback(|| async {
            error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::InvalidRequest,
                "method not allowed on this endpoint",
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.engine.clone(),
            resolve_caller,
        ))
        .with_state(state)
}

/// Requires `Authorization: Bearer <token>` when a token is configured.
pub async fn require_bearer(token: Arc<str>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    // Compare in constant time for equal lengths.
    let matches = presented.len() == token.len()
        && presented
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if matches {
        next.run(request).await
    } else {
        error_response(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or invalid bearer token (Authorization: Bearer <token>)",
        )
    }
}
