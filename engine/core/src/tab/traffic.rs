//! The tab's side of its network capture (`network.rs`): a finished call's
//! body fetched off the pump, the calls shown with their secrets redacted
//! (unless `--record-secrets`), and the requests in flight that an action's
//! wait starts from.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::network::{
    EventRequestWillBeSent, GetResponseBodyParams, RequestId,
};
use serde_json::json;

use super::network::{BodyFetch, CallEnd};
use super::{Tab, same_site};
use crate::network::NetworkCall;
use crate::plugin::{RequestInfo, WaitSignal};

impl Tab {
    pub(super) fn capture_request(&self, e: &EventRequestWillBeSent) {
        if let Some(fetch) = self.network.request_started(&self.id, e) {
            self.fetch_body(fetch);
        }
    }

    /// A finished call: its timing, and its body when it is text worth
    /// keeping.
    pub(super) fn capture_finished(&self, request_id: &str, session: Option<String>) {
        if let Some(fetch) = self
            .network
            .ended(request_id, CallEnd::Finished { session })
        {
            self.fetch_body(fetch);
        }
    }

    /// Fetches a finished call's body from the browser, off the event pump.
    fn fetch_body(&self, fetch: BodyFetch) {
        let BodyFetch {
            request_id,
            session,
        } = fetch;
        let Some(tab) = self.self_ref.upgrade() else {
            self.network.body_done(&request_id, None);
            return;
        };
        tokio::spawn(async move {
            const LIMIT: Duration = Duration::from_secs(5);
            let fetched = match session {
                // A frame rendered out of process: its renderer has the body.
                Some(session) => tab
                    .session
                    .raw_on_within(
                        Some(&session),
                        "Network.getResponseBody",
                        json!({ "requestId": request_id }),
                        LIMIT,
                    )
                    .await
                    .ok()
                    .and_then(|body| {
                        Some((
                            body.get("body")?.as_str()?.to_string(),
                            body.get("base64Encoded")?.as_bool()?,
                        ))
                    }),
                None => tab
                    .session
                    .execute_within(
                        GetResponseBodyParams::new(RequestId::new(request_id.clone())),
                        LIMIT,
                    )
                    .await
                    .ok()
                    .map(|body| (body.result.body.clone(), body.result.base64_encoded)),
            };
            tab.network.body_done(&request_id, fetched);
        });
    }

    /// Waits (bounded) until the response bodies being fetched are in the
    /// buffer, so a save right after an action keeps them.
    pub async fn bodies_settled(&self, limit: Duration) {
        self.network.bodies_settled(limit).await
    }

    /// See `ActionTab::in_flight_now`. Calls older than two minutes that
    /// never ended (their end fell out of the capture) don't count.
    pub fn in_flight_now(&self) -> Vec<WaitSignal> {
        let (navigation, page_url) = {
            let state = self.navigation.lock();
            let navigation = state
                .document_requests
                .values()
                .next()
                .cloned()
                .or_else(|| {
                    (state.main_loading.committed_since_start() && !state.loaded_since_commit)
                        .then(|| state.url.clone())
                });
            (navigation, state.url.clone())
        };
        let mut signals: Vec<WaitSignal> = navigation
            .into_iter()
            .map(WaitSignal::NavigationStarted)
            .collect();
        let recent = crate::clock::now_ms_i64() - 120_000;
        signals.extend(self.network.pending_since(recent).into_iter().map(
            |(id, url, resource_type)| {
                WaitSignal::RequestStarted(RequestInfo {
                    id,
                    same_site: same_site(&url, &page_url),
                    url,
                    resource_type,
                })
            },
        ));
        signals
    }

    /// The tab's captured calls, oldest first, secrets redacted unless
    /// `--record-secrets`.
    pub fn network_calls(&self) -> Vec<NetworkCall> {
        self.shown(self.network.calls())
    }

    pub fn network_dropped(&self) -> u64 {
        self.network.dropped()
    }

    /// Calls started since `since_ms` (wall clock), of the given types.
    pub fn network_calls_since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall> {
        self.shown(self.network.calls_since(since_ms, types))
    }

    fn shown(&self, calls: Vec<NetworkCall>) -> Vec<NetworkCall> {
        if self.state.lock().record_secrets {
            calls
        } else {
            calls.into_iter().map(NetworkCall::redacted).collect()
        }
    }
}
