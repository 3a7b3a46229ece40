//! Secrets in what the engine shows and keeps: cookie and authorization
//! headers, and values under secret names (password, token, api key, ...)
//! in JSON and form bodies and in action parameters. Every view of network
//! calls (a tab's live buffer, action envelopes, history, HAR, exports) goes
//! through [`NetworkCall::redacted`] unless `--record-secrets` keeps them.

use serde_json::{Value, json};

use crate::network::NetworkCall;

/// Headers whose values are credentials (matched without case).
pub const SECRET_HEADERS: [&str; 4] = [
    "cookie",
    "set-cookie",
    "authorization",
    "proxy-authorization",
];

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Replaces the values of credential headers.
pub fn redact_secret_headers(headers: &mut serde_json::Map<String, Value>) {
    for (name, value) in headers.iter_mut() {
        if SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            *value = json!(REDACTED);
        }
    }
}

impl NetworkCall {
    /// The call with its credential headers and the secret-named values of
    /// its bodies redacted.
    pub fn redacted(mut self) -> NetworkCall {
        redact_secret_headers(&mut self.request_headers);
        redact_secret_headers(&mut self.response_headers);
        for body in [&mut self.request_body, &mut self.response_body] {
            if let Some(text) = body.as_mut() {
                *text = redact_body(text);
            }
        }
        self
    }
}

/// Names under which values usually are secrets (matched in lower case,
/// anywhere in the name).
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "token",
    "secret",
    "cookie",
    "authorization",
    "api_key",
    "apikey",
    "api-key",
];

pub fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| lower.contains(s))
}

/// A body as captured, with the values under secret names redacted when it
/// is JSON or a form (`a=1&password=x`); any other body as it is.
pub fn redact_body(body: &str) -> String {
    let trimmed = body.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return match serde_json::from_str::<Value>(body) {
            Ok(parsed) => redact(parsed).to_string(),
            Err(_) => body.to_string(),
        };
    }
    let form_like = !body.is_empty()
        && body.contains('=')
        && !body.chars().any(|c| c.is_whitespace() || c.is_control());
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if !form_like || !pairs.iter().any(|(k, _)| secret_name(k)) {
        return body.to_string();
    }
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        out.append_pair(k, if secret_name(k) { REDACTED } else { v });
    }
    out.finish()
}

/// Params are kept as sent, except values under names that usually carry
/// secrets.
pub fn redact(params: Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    if secret_name(&k) {
                        (k, json!(REDACTED))
                    } else {
                        (k, redact(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_redacted_whatever_their_case() {
        let mut headers = json!({
            "Cookie": "session=SECRET",
            "set-cookie": "a=1\nb=2",
            "AUTHORIZATION": "Bearer x",
            "Proxy-Authorization": "Basic y",
            "Content-Type": "text/html",
        });
        redact_secret_headers(headers.as_object_mut().unwrap());
        assert_eq!(
            headers,
            json!({
                "Cookie": "[redacted]",
                "set-cookie": "[redacted]",
                "AUTHORIZATION": "[redacted]",
                "Proxy-Authorization": "[redacted]",
                "Content-Type": "text/html",
            })
        );
    }

    #[test]
    fn secrets_in_bodies_are_redacted() {
        assert_eq!(
            redact_body("username=alice&password=S3cret%21&remember=1"),
            "username=alice&password=%5Bredacted%5D&remember=1"
        );
        let json = redact_body(r#"{"user":"ada","auth":{"access_token":"t0k","ttl":60}}"#);
        assert!(
            !json.contains("t0k") && json.contains("ada") && json.contains("60"),
            "{json}"
        );
        // Not a form nor JSON, or nothing secret in it: kept as it is.
        for body in [
            "q=cats&page=2",
            "hello password=x world",
            "<xml>password</xml>",
            "",
        ] {
            assert_eq!(redact_body(body), body);
        }
    }

    #[test]
    fn secrets_in_params_are_redacted() {
        let v = redact(json!({ "user": "ada", "password": "x", "nested": { "apiToken": "t" } }));
        assert_eq!(
            v,
            json!({ "user": "ada", "password": "[redacted]", "nested": { "apiToken": "[redacted]" } })
        );
    }
}
