//! Errors as ABP answers them: `{"error": "...", "code": "..."}` with the
//! status the code implies. 5xx details are logged too.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use wabp_core::{Error, ErrorCode};

pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::error!(code = self.0.code.as_str(), "{}", self.0.message);
        }
        let mut body = json!({ "error": self.0.message, "code": self.0.code.as_str() });
        if let (Some(details), Some(fields)) = (self.0.details, body.as_object_mut()) {
            fields.extend(*details);
        }
        (status, Json(body)).into_response()
    }
}

pub fn error_response(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({ "error": message.into(), "code": code.as_str() })),
    )
        .into_response()
}
