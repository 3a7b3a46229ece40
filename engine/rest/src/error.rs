//! Errors as ABP answers them: `{"error": "...", "code": "..."}` with the
//! status the code implies, said for a REST client (`wabp_api::errors`:
//! next steps as routes, internal failures as an id the log has).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use wabp_api::errors::{Voice, said};
use wabp_core::{Error, ErrorCode};

pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = status_of(self.0.code);
        if status.is_server_error() && !wabp_api::errors::is_internal(self.0.code) {
            tracing::error!(code = self.0.code.as_str(), "{}", self.0.message);
        }
        let text = said(&self.0, Voice::Rest);
        let mut body = json!({ "error": text, "code": self.0.code.as_str() });
        if let (Some(details), Some(fields)) = (self.0.details, body.as_object_mut()) {
            fields.extend(*details);
        }
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // A balancer or client may try again, here or elsewhere.
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static(RETRY_AFTER_SECS),
            );
        }
        response
    }
}

/// What a 503 asks a client to wait before trying again.
pub const RETRY_AFTER_SECS: &str = "2";

/// The HTTP status of each kind of failure.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidRequest
        | ErrorCode::ElementNotVisible
        | ErrorCode::ElementNotInteractable
        | ErrorCode::DialogNotPresent
        | ErrorCode::FileNotFound
        | ErrorCode::FileNotReadable
        | ErrorCode::DownloadFailed
        | ErrorCode::EvaluationError => StatusCode::BAD_REQUEST,
        ErrorCode::TabNotFound
        | ErrorCode::NotFound
        | ErrorCode::FileChooserNotPresent
        | ErrorCode::DownloadNotFound
        | ErrorCode::ElementNotFound
        | ErrorCode::SelectorNotFound => StatusCode::NOT_FOUND,
        ErrorCode::HumanMode | ErrorCode::StaleRef | ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::LimitReached => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::WaitTimeout => StatusCode::REQUEST_TIMEOUT,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden | ErrorCode::PolicyDenied | ErrorCode::ApprovalRequired => {
            StatusCode::FORBIDDEN
        }
        ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::NotReady
        | ErrorCode::Draining
        | ErrorCode::EngineFull
        | ErrorCode::BrowserServiceBusy => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::WrongEngine => StatusCode::MISDIRECTED_REQUEST,
        // The page or address the client named could not be reached: the
        // engine itself is fine.
        ErrorCode::NetworkError | ErrorCode::NavigationFailed => StatusCode::BAD_REQUEST,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::BrowserInitFailed
        | ErrorCode::DevtoolsInitFailed
        | ErrorCode::PluginFailed
        | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub fn error_response(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({ "error": message.into(), "code": code.as_str() })),
    )
        .into_response()
}
