//! The engine's action log, backed by the SQLite flight recorder.

use async_trait::async_trait;
use serde_json::{Value, json};
use wabp_core::events::StampedEvent;
use wabp_core::network::NetworkCall;
use wabp_core::record::{ActionLog, LoggedAction};
use wabp_core::secrets::redact;
use wabp_core::{Error, ErrorCode};
use wabp_history::{HistoryStore, NewAction, NewEvent};

pub struct HistoryLog {
    pub store: HistoryStore,
    /// Keep `Cookie`, `Set-Cookie` and `Authorization` values in saved
    /// calls (`--record-secrets`); else they are stored as `[redacted]`.
    pub record_secrets: bool,
}

fn storage_error(err: wabp_history::Error) -> Error {
    Error::new(ErrorCode::Internal, format!("history: {err}"))
}

#[async_trait]
impl ActionLog for HistoryLog {
    async fn record(&self, action: LoggedAction) -> wabp_core::Result<String> {
        let network = action.network;
        let (result, error, timing, scroll, virtual_time_ms, mut events, before, after) =
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
        // What the page wrote to its console meanwhile (redacted and cut
        // by the tab): events of the action, type `console`.
        events.extend(action.console.iter().map(|message| NewEvent {
            tab_id: action.tab_id.clone(),
            event_type: "console".to_string(),
            virtual_time_ms: None,
            data: json!({
                "level": message.level,
                "text": message.text,
                "timestamp_ms": message.timestamp_ms,
            }),
            user_id: None, // the action's, set by the store
        }));
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
        // A login form's password, a token in a JSON answer, cookies.
        let call = if self.record_secrets {
            call.clone()
        } else {
            call.clone().redacted()
        };
        let mut value = serde_json::to_value(&call).map_err(|e| Error::internal(e.to_string()))?;
        if let Some(id) = action_id {
            value["action_id"] = json!(id);
        }
        to_store_call(value, user_id)
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
