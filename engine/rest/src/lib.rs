//! `wabp-rest`: the Agent Browser Protocol REST API at `/api/v1`, plus wabp's
//! additive extensions (plugin actions, `GET /plugins`). Thin: every handler
//! parses, calls one `wabp-core` operation, and shapes the answer.

mod body;
mod browser;
mod error;
mod execution;
mod history;
mod network;
mod tabs;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use wabp_core::{Engine, ErrorCode};

pub use error::{ApiError, error_response};

#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    /// Notified by `POST /browser/shutdown`, so the server can exit.
    pub shutdown: Arc<tokio::sync::Notify>,
    /// The flight recorder (`/history/*`).
    pub history: Option<wabp_history::HistoryStore>,
}

/// The `/api/v1` router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(browser::router())
        .merge(tabs::router())
        .merge(execution::router())
        .merge(history::router())
        .merge(network::router())
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
