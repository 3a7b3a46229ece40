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
use crate::intercept::{InterceptAction, InterceptRule, Interception};
use crate::plugin::{InterceptOutcome, InterceptedRequest};

const ANSWER_LIMIT: Duration = Duration::from_secs(5);

/// A request the Fetch domain paused.
#[derive(Debug, Clone)]
pub struct PausedRequest {
    /// Fetch's id, to answer it.
    pub request_id: String,
    /// The Network domain's id, where the capture knows it.
    pub network_id: Option<String>,
    pub url: String,
    pub method: String,
    /// CDP resource type: Document, Script, Image, XHR, Fetch, ...
    pub resource_type: String,
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
            method: params
                .pointer("/request/method")
                .and_then(Value::as_str)
                .unwrap_or("GET")
                .to_string(),
            resource_type: params
                .get("resourceType")
                .and_then(Value::as_str)
                .unwrap_or("Other")
                .to_string(),
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
    /// What this tab's requests are held against (shared with the engine,
    /// which adds and removes rules).
    pub fn set_interception(&self, interception: Arc<Interception>) {
        *self.interception.lock() = Some(interception);
    }

    fn interception(&self) -> Option<Arc<Interception>> {
        self.interception.lock().clone()
    }

    /// Whether some rule or interceptor plugin may apply to this tab now.
    fn has_intercept_rules(&self) -> bool {
        let owner = self.owner();
        self.interception()
            .is_some_and(|i| i.applies_to(owner.as_deref(), &self.id))
    }

    /// Pauses this tab's requests while a rule may apply, and stops when
    /// none does (an idle tab costs nothing).
    pub async fn sync_interception(&self) -> Result<()> {
        let wanted = self.has_intercept_rules();
        {
            let mut state = self.state.lock();
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
    /// matches it, else what the interceptor plugins make of it, else on its
    /// way.
    pub(super) async fn answer_paused(&self, paused: PausedRequest) {
        let owner = self.owner();
        let interception = self.interception();
        let rule = interception
            .as_ref()
            .and_then(|i| i.rule_for(owner.as_deref(), &self.id, &paused.url));
        let (method, params, label) = match &rule {
            Some(rule) => {
                let (method, params) = answer(rule, &paused);
                let action = serde_json::to_value(rule.action).unwrap_or_default();
                let label = format!("{}:{}", rule.id, action.as_str().unwrap_or_default());
                (method, params, Some(label))
            }
            None => match &interception {
                Some(i) => self.ask_interceptors(i, &paused, owner).await,
                None => (
                    "Fetch.continueRequest",
                    json!({ "requestId": paused.request_id }),
                    None,
                ),
            },
        };
        if let (Some(label), Some(network_id)) = (label, &paused.network_id) {
            self.network.intercepted(network_id, label);
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

    /// The interceptor plugins in turn: the first to fulfill or abort
    /// answers; headers they set accumulate; one that fails is skipped.
    async fn ask_interceptors(
        &self,
        interception: &Interception,
        paused: &PausedRequest,
        user: Option<String>,
    ) -> (&'static str, Value, Option<String>) {
        let mut request = InterceptedRequest {
            url: paused.url.clone(),
            method: paused.method.clone(),
            headers: paused
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            resource_type: paused.resource_type.clone(),
            tab_url: self.url(),
            user,
        };
        let mut changed = false;
        for plugin in interception.registry.interceptors() {
            match plugin.intercept(&request).await {
                Ok(InterceptOutcome::Proceed(set)) => {
                    for (name, value) in set {
                        request
                            .headers
                            .retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                        request.headers.push((name, value));
                        changed = true;
                    }
                }
                Ok(InterceptOutcome::Fulfill {
                    status,
                    headers,
                    body,
                }) => {
                    let headers: Vec<Value> = headers
                        .iter()
                        .map(|(name, value)| json!({ "name": name, "value": value }))
                        .collect();
                    return (
                        "Fetch.fulfillRequest",
                        json!({
                            "requestId": paused.request_id,
                            "responseCode": status,
                            "responseHeaders": headers,
                            "body": base64::engine::general_purpose::STANDARD.encode(body),
                        }),
                        Some(format!("plugin {}:fulfill", plugin.plugin_name())),
                    );
                }
                Ok(InterceptOutcome::Abort(reason)) => {
                    tracing::debug!(tab = %self.id, plugin = plugin.plugin_name(), %reason, "request blocked");
                    return (
                        "Fetch.failRequest",
                        json!({ "requestId": paused.request_id, "errorReason": "BlockedByClient" }),
                        Some(format!("plugin {}:abort", plugin.plugin_name())),
                    );
                }
                Err(failure) => {
                    tracing::warn!(tab = %self.id, "interceptor {} failed, the request goes on: {}", failure.plugin, failure.message);
                }
            }
        }
        let mut params = json!({ "requestId": paused.request_id });
        if changed {
            params["headers"] = request
                .headers
                .iter()
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect();
        }
        ("Fetch.continueRequest", params, None)
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
