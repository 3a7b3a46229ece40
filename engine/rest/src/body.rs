//! Request bodies: any JSON object (an empty body counts as `{}`).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde_json::Value;

use crate::error::ApiError;

/// Bodies above this are refused before parsing.
pub const MAX_BODY: usize = 4 << 20;

pub struct Body(pub Value);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            ApiError(wabp_core::Error::invalid(format!(
                "could not read the request body: {e}"
            )))
        })?;
        if bytes.len() > MAX_BODY {
            return Err(ApiError(wabp_core::Error::invalid(format!(
                "request body is larger than {MAX_BODY} bytes"
            ))));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body(Value::Object(Default::default())));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError(wabp_core::Error::invalid(format!(
                "malformed JSON body: {e}"
            )))
        })?;
        if !value.is_object() {
            return Err(ApiError(wabp_core::Error::invalid(
                "the request body must be a JSON object",
            )));
        }
        Ok(Body(value))
    }
}
