//! Request bodies: any JSON object (an empty body counts as `{}`), with
//! field helpers whose errors name the field.

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
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::invalid(format!("could not read the request body: {e}")))?;
        if bytes.len() > MAX_BODY {
            return Err(ApiError::invalid(format!(
                "request body is larger than {MAX_BODY} bytes"
            )));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body(Value::Object(Default::default())));
        }
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::invalid(format!("malformed JSON body: {e}")))?;
        if !value.is_object() {
            return Err(ApiError::invalid("the request body must be a JSON object"));
        }
        Ok(Body(value))
    }
}

pub fn required_str<'a>(body: &'a Value, field: &str) -> Result<&'a str, ApiError> {
    match body.get(field) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(ApiError::invalid(format!(
            "missing field \"{field}\" (a string)"
        ))),
        Some(_) => Err(ApiError::invalid(format!(
            "field \"{field}\" must be a string"
        ))),
    }
}

pub fn optional_str<'a>(body: &'a Value, field: &str) -> Result<Option<&'a str>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid(format!(
            "field \"{field}\" must be a string"
        ))),
    }
}

pub fn optional_bool(body: &Value, field: &str) -> Result<Option<bool>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ApiError::invalid(format!(
            "field \"{field}\" must be a boolean"
        ))),
    }
}

pub fn optional_u64(body: &Value, field: &str) -> Result<Option<u64>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ApiError::invalid(format!("field \"{field}\" must be a non-negative integer"))
        }),
    }
}
