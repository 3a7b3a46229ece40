//! The caller of a request, resolved once by one layer for REST and `/mcp`.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use wabp_api::Backend;
use wabp_api::Tokens;
use wabp_core::ErrorCode;

use crate::body;
use crate::error::{ApiError, error_response};

/// What the caller layer needs: the engine (to count a user's activity)
/// and the tokens it accepts.
#[derive(Clone)]
pub struct Callers {
    pub engine: Arc<dyn Backend>,
    pub tokens: Arc<Tokens>,
}

/// Resolves the request's caller once and hands it to every handler as an
/// extension: its bearer token (401 when tokens are required and it is
/// missing or unknown), then its `userId` (query or JSON body; both must
/// agree; 403 when the token acts as another user). The core narrows every
/// operation by it, and the catalogue checks its scopes. Also counts the
/// request against the user's session (a busy session is never evicted).
pub async fn resolve_caller(
    axum::extract::State(callers): axum::extract::State<Callers>,
    request: Request,
    next: Next,
) -> Response {
    let bearer = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        // The scheme's name is case-insensitive (RFC 9110).
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let grant = match callers.tokens.authenticate(bearer) {
        Ok(grant) => grant,
        Err(e) => return ApiError(e).into_response(),
    };
    let invalid =
        |message: &str| error_response(StatusCode::BAD_REQUEST, ErrorCode::InvalidRequest, message);
    let mut in_query = query_pairs(request.uri().query())
        .into_iter()
        .filter(|(k, _)| k == "userId")
        .map(|(_, v)| v);
    let from_query = in_query.next();
    // Two would be ambiguous (a proxy appending its own must not lose).
    if in_query.next().is_some() {
        return invalid("userId is given more than once in the query");
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, body::MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::InvalidRequest,
                format!("request body is larger than {} bytes", body::MAX_BODY),
            );
        }
    };
    let parsed = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let from_body = match parsed.as_ref().and_then(|v| v.get("userId").cloned()) {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(user)) => Some(user),
        // A numeric id must not quietly mean "no user".
        Some(_) => return invalid("userId must be a string"),
    };
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
    let caller = match grant.caller(user.as_deref()) {
        Ok(caller) => caller,
        Err(e) => return ApiError(e).into_response(),
    };
    let _activity = caller.user_id().map(|u| callers.engine.user_activity(u));
    let mut request = Request::from_parts(parts, axum::body::Body::from(bytes));
    request.extensions_mut().insert(caller);
    if let Some(value) = parsed {
        request.extensions_mut().insert(body::Parsed(value));
    }
    next.run(request).await
}

/// Every query parameter, decoded, in order.
pub(crate) fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
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
            query_pairs(Some("a=1&userId=al%40ce+x")),
            vec![
                ("a".to_string(), "1".to_string()),
                ("userId".to_string(), "al@ce x".to_string())
            ]
        );
        assert_eq!(
            query_pairs(Some("userId=")),
            vec![("userId".to_string(), String::new())]
        );
        assert!(query_pairs(None).is_empty());
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
