//! The engine's action log, backed by the SQLite flight recorder.

use async_trait::async_trait;
use serde_json::{Value, json};
use wabp_core::events::StampedEvent;
use wabp_core::network::NetworkCall;
use wabp_core::record::{ActionLog, LoggedAction};
use wabp_core::{Error, ErrorCode};
use wabp_history::{HistoryStore, NewAction, NewEvent};

pub struct HistoryLog {
    pub store: HistoryStore,
    /// Keep `Cookie`, `Set-Cookie` and `Authorization` values in saved
    /// calls (`--record-secrets`); else they are stored as `[redacted]`.
    pub record_secrets: bool,
}

/// Headers whose values are credentials.
const SECRET_HEADERS: [&str; 4] = [
    "cookie",
    "set-cookie",
    "authorization",
    "proxy-authorization",
];

fn storage_error(err: wabp_history::Error) -> Error {
    Error::new(ErrorCode::Internal, format!("history: {err}"))
}

#[async_trait]
impl ActionLog for HistoryLog {
    async fn record(&self, action: LoggedAction) -> wabp_core::Result<String> {
        let network = action.network;
        let (result, error, timing, scroll, virtual_time_ms, events, before, after) =
            match action.outcome {
                Ok(envelope) => {
                    let events = envelope
                        .events
                        .iter()
                        .map(|e| NewEvent {
                            tab_id: action.tab_id.clone(),
                            event_type: e.kind().to_string(),
                            virtual_time_ms: Some(e.virtual_time_ms as i64),
                            data: e.event.data(),
                            user_id: None, // the action's, set by the store
                        })
                        .collect();
                    let virtual_time = envelope
                        .screenshot_after
                        .as_ref()
                        .or(envelope.screenshot_before.as_ref())
                        .map(|s| s.virtual_time_ms as i64);
                    (
                        Some(envelope.result.clone()),
                        None,
                        serde_json::to_value(&envelope.timing).ok(),
                        serde_json::to_value(&envelope.scroll).ok(),
                        virtual_time,
                        events,
                        envelope.screenshot_before.map(|s| s.data.as_ref().clone()),
                        envelope.screenshot_after.map(|s| s.data.as_ref().clone()),
                    )
                }
                Err(message) => (
                    None,
                    Some(message),
                    None,
                    None,
                    None,
                    Vec::new(),
                    None,
                    None,
                ),
            };
        let record = self
            .store
            .record_action(NewAction {
                session_id: None,
                tab_id: action.tab_id,
                action_type: action.action_type,
                params: redact(action.params),
                result,
                error,
                started_ms: action.started_ms as i64,
                completed_ms: action.completed_ms as i64,
                timing,
                scroll,
                virtual_time_ms,
                events,
                screenshot_before: before,
                screenshot_after: after,
                user_id: action.user_id.clone(),
            })
            .await
            .map_err(storage_error)?;
        if let Some((tag, calls)) = network {
            let calls = calls
                .iter()
                .map(|c| self.to_history_call(c, Some(&record.id), action.user_id.clone()))
                .collect::<wabp_core::Result<Vec<_>>>()?;
            self.store
                .save_network_calls(&tag, calls)
                .await
                .map_err(storage_error)?;
        }
        Ok(record.id)
    }

    async fn add_events(
        &self,
        action_id: &str,
        tab_id: &str,
        events: Vec<StampedEvent>,
    ) -> wabp_core::Result<()> {
        let events = events
            .iter()
            .map(|e| NewEvent {
                tab_id: tab_id.to_string(),
                event_type: e.kind().to_string(),
                virtual_time_ms: Some(e.virtual_time_ms as i64),
                data: e.event.data(),
                user_id: None, // the action's, set by the store
            })
            .collect();
        self.store
            .add_action_events(action_id, events)
            .await
            .map_err(storage_error)?;
        Ok(())
    }

    async fn save_network(
        &self,
        tag: &str,
        calls: Vec<NetworkCall>,
        user_id: Option<String>,
    ) -> wabp_core::Result<usize> {
        let calls = calls
            .iter()
            .map(|c| self.to_history_call(c, None, user_id.clone()))
            .collect::<wabp_core::Result<Vec<_>>>()?;
        self.store
            .save_network_calls(tag, calls)
            .await
            .map_err(storage_error)
    }
}

impl HistoryLog {
    /// Core's captured call in the store's shape (the same ABP field
    /// names), its credentials redacted unless they are to be kept.
    fn to_history_call(
        &self,
        call: &NetworkCall,
        action_id: Option<&str>,
        user_id: Option<String>,
    ) -> wabp_core::Result<wabp_history::NetworkCall> {
        let mut value = serde_json::to_value(call).map_err(|e| Error::internal(e.to_string()))?;
        if let Some(id) = action_id {
            value["action_id"] = json!(id);
        }
        if !self.record_secrets {
            for side in ["request_headers", "response_headers"] {
                if let Some(headers) = value.get_mut(side).and_then(Value::as_object_mut) {
                    redact_secret_headers(headers);
                }
            }
            // A login form's password, a token in a JSON answer.
            for side in ["request_body", "response_body"] {
                if let Some(body) = value.get(side).and_then(Value::as_str) {
                    value[side] = json!(redact_body(body));
                }
            }
        }
        to_store_call(value, user_id)
    }
}

fn redact_secret_headers(headers: &mut serde_json::Map<String, Value>) {
    for (name, value) in headers.iter_mut() {
        if SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            *value = json!("[redacted]");
        }
    }
}

fn to_store_call(
    value: Value,
    user_id: Option<String>,
) -> wabp_core::Result<wabp_history::NetworkCall> {
    let mut call: wabp_history::NetworkCall =
        serde_json::from_value(value).map_err(|e| Error::internal(format!("network call: {e}")))?;
    call.user_id = user_id;
    Ok(call)
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

fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| lower.contains(s))
}

/// A body as captured, with the values under secret names redacted when it
/// is JSON or a form (`a=1&password=x`); any other body as it is.
fn redact_body(body: &str) -> String {
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
        out.append_pair(k, if secret_name(k) { "[redacted]" } else { v });
    }
    out.finish()
}

/// Params are kept as sent, except values under names that usually carry
/// secrets.
fn redact(params: Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    if secret_name(&k) {
                        (k, json!("[redacted]"))
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
