//! The tab's side of request interception: while any rule may apply to it,
//! the Fetch domain pauses each of its requests (out-of-process frames'
//! too), and each paused request gets its answer here: the first matching
//! rule's, or on its way. Every paused request is answered, bounded.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::Tab;
use crate::error::Result;
use crate::intercept::{InterceptAction, InterceptRule};

const ANSWER_LIMIT: Duration = Duration::from_secs(5);

/// A request the Fetch domain paused.
#[derive(Debug, Clone)]
pub struct PausedRequest {
    /// Fetch's id, to answer it.
    pub request_id: String,
    /// The Network domain's id, where the capture knows it.
    pub network_id: Option<String>,
    pub url: String,
    pub headers: serde_json::Map<String, Value>,
    /// The frame target that paused it (`None`: the page's session).
    pub session: Option<String>,
}

impl PausedRequest {
    /// From a `Fetch.requestPaused` event's params.
    pub fn from_params(params: &Value, session: Option<String>) -> Option<PausedRequest> {
        Some(PausedRequest {
            request_id: params.get("requestId")?.as_str()?.to_string(),
            network_id: params
                .get("networkId")
                .and_then(Value::as_str)
                .map(str::to_string),
            url: params.pointer("/request/url")?.as_str()?.to_string(),
            headers: params
                .pointer("/request/headers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            session,
        })
    }
}

impl Tab {
    /// The rules this tab's requests are held against (shared with the
    /// engine, which adds and removes them).
    pub fn set_intercept_rules(&self, rules: Arc<std::sync::Mutex<Vec<InterceptRule>>>) {
        *self.intercept_rules.lock().unwrap() = Some(rules);
    }

    /// Whether some rule may apply to this tab now.
    fn has_intercept_rules(&self) -> bool {
        let owner = self.owner();
        self.intercept_rules
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|rules| {
                rules
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|r| r.user == owner && r.tab_id.as_deref().is_none_or(|t| t == self.id))
            })
    }

    /// Pauses this tab's requests while a rule may apply, and stops when
    /// none does (an idle tab costs nothing).
    pub async fn sync_interception(&self) -> Result<()> {
        let wanted = self.has_intercept_rules();
        {
            let mut state = self.state.lock().unwrap();
            if state.intercepting == wanted {
                return Ok(());
            }
            state.intercepting = wanted;
        }
        let (method, params) = if wanted {
            (
                "Fetch.enable",
                json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] }),
            )
        } else {
            ("Fetch.disable", json!({}))
        };
        if let Some(targets) = self.session.frame_targets() {
            targets.set_interception(wanted).await;
        }
        self.session
            .raw_regardless(method, params, ANSWER_LIMIT)
            .await
            .map(|_| ())
    }

    /// Answers a paused request: the first rule of the tab's user that
    /// matches it, or on its way.
    pub(super) async fn answer_paused(&self, paused: PausedRequest) {
        let owner = self.owner();
        let rule = self
            .intercept_rules
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|rules| {
                let mut rules = rules.lock().unwrap();
                let rule = rules
                    .iter_mut()
                    .find(|r| r.user == owner && r.matches(&self.id, &paused.url))?;
                rule.hits += 1;
                Some(rule.clone())
            });
        let (method, params) = match &rule {
            None => (
                "Fetch.continueRequest",
                json!({ "requestId": paused.request_id }),
            ),
            Some(rule) => answer(rule, &paused),
        };
        if let (Some(rule), Some(network_id)) = (&rule, &paused.network_id) {
            let action = serde_json::to_value(rule.action).unwrap_or_default();
            self.network.intercepted(
                network_id,
                format!("{}:{}", rule.id, action.as_str().unwrap_or_default()),
            );
        }
        let sent = match &paused.session {
            Some(session) => match self.session.frame_targets() {
                Some(targets) => targets
                    .navigator()
                    .send(Some(session), method, params, ANSWER_LIMIT)
                    .await
                    .map(|_| ()),
                None => Ok(()),
            },
            None => self
                .session
                .raw_regardless(method, params, ANSWER_LIMIT)
                .await
                .map(|_| ()),
        };
        if let Err(e) = sent {
            tracing::debug!(tab = %self.id, "a paused request could not be answered: {}", e.message);
        }
    }
}

/// The Fetch command that carries out `rule` on `paused`.
fn answer(rule: &InterceptRule, paused: &PausedRequest) -> (&'static str, Value) {
    let id = &paused.request_id;
    match rule.action {
        InterceptAction::Abort => (
            "Fetch.failRequest",
            json!({ "requestId": id, "errorReason": "BlockedByClient" }),
        ),
        InterceptAction::Fulfill => {
            let headers: Vec<Value> = rule
                .headers
                .iter()
                .flatten()
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect();
            let body = base64::engine::general_purpose::STANDARD
                .encode(rule.body.as_deref().unwrap_or_default());
            (
                "Fetch.fulfillRequest",
                json!({
                    "requestId": id,
                    "responseCode": rule.status.unwrap_or(200),
                    "responseHeaders": headers,
                    "body": body,
                }),
            )
        }
        InterceptAction::Continue => {
            let mut params = json!({ "requestId": id });
            if let Some(changed) = &rule.headers {
                // The request's headers, those named in the rule replaced.
                let mut headers: Vec<Value> = paused
                    .headers
                    .iter()
                    .filter(|(name, _)| !changed.keys().any(|c| c.eq_ignore_ascii_case(name)))
                    .map(|(name, value)| {
                        json!({ "name": name, "value": value.as_str().unwrap_or_default() })
                    })
                    .collect();
                headers.extend(
                    changed
                        .iter()
                        .map(|(name, value)| json!({ "name": name, "value": value })),
                );
                params["headers"] = Value::Array(headers);
            }
            ("Fetch.continueRequest", params)
        }
    }
}
