//! Request bodies: any JSON object (an empty body counts as `{}`).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde_json::Value;

use crate::error::ApiError;

/// Bodies above this are refused before parsing.
pub const MAX_BODY: usize = 4 << 20;

pub struct Body(pub Value);

/// The body as the caller layer already parsed it (to find its `userId`),
/// so a handler does not parse it again.
#[derive(Clone)]
pub(crate) struct Parsed(pub Value);

fn object(value: Value) -> Result<Body, ApiError> {
    if value.is_object() {
        Ok(Body(value))
    } else {
        Err(ApiError(wabp_core::Error::invalid(
            "the request body must be a JSON object",
        )))
    }
}

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(mut req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(Parsed(value)) = req.extensions_mut().remove::<Parsed>() {
            return object(value);
        }
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
        object(value)
    }
}
