//! A tab's network capture: its last calls (requests, responses, bodies)
//! as the event pump reports them, and the bodies still being fetched. Its
//! own state and lock; it never sees the tab. The pump fetches a body when
//! [`NetworkCapture::ended`] (or a request whose end came first) asks for
//! one and hands it back with [`NetworkCapture::body_done`], fetched or not.
//! The pump reads each kind of event from its own stream, so a call's
//! response or end can come before its request: they wait for it.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::network::{
    EventRequestWillBeSent, EventResponseReceived,
};

use crate::clock::now_ms_i64;
use crate::ids::random_id;
use crate::network::{NetworkBuffer, NetworkCall, header_map, limit_body, wants_body};

#[derive(Debug, Default)]
pub struct NetworkCapture {
    buffer: Mutex<NetworkBuffer>,
    bodies_in_flight: AtomicUsize,
    /// Interception labels of requests paused before the capture saw them
    /// leave, by network request id.
    intercepted_early: Mutex<std::collections::HashMap<String, String>>,
    /// Responses read before their request, by network request id: the pump
    /// reads each kind of event from a stream of its own, and the browser's
    /// order between kinds is not kept.
    responses_early: Mutex<std::collections::HashMap<String, EventResponseReceived>>,
    /// Ends (finished or failed) read before their request, likewise.
    ends_early: Mutex<std::collections::HashMap<String, CallEnd>>,
}

/// How a call ended.
#[derive(Debug, Clone)]
pub enum CallEnd {
    /// Loaded; `session` is the out-of-process frame's session that has
    /// its body, `None` for the page's own.
    Finished {
        session: Option<String>,
    },
    Failed {
        error: String,
    },
}

/// A body to fetch from the browser, then hand to [`NetworkCapture::body_done`].
#[derive(Debug, Clone, PartialEq)]
pub struct BodyFetch {
    pub request_id: String,
    pub session: Option<String>,
}

impl NetworkCapture {
    fn buffer(&self) -> parking_lot::MutexGuard<'_, NetworkBuffer> {
        self.buffer.lock()
    }

    /// A request left (a redirect closes its previous hop first). What was
    /// read for it before is applied now; a body to fetch when its end was.
    pub fn request_started(&self, tab_id: &str, e: &EventRequestWillBeSent) -> Option<BodyFetch> {
        let mut buffer = self.buffer();
        if let Some(redirect) = &e.redirect_response {
            // Redirects reuse the request id: close the previous hop.
            if let Some(call) = buffer.by_request(e.request_id.inner()) {
                call.status = u16::try_from(redirect.status).ok();
                call.response_headers =
                    header_map(&serde_json::to_value(&redirect.headers).unwrap_or_default());
                call.state = "completed";
                call.timing_ms = Some((now_ms_i64() - call.timestamp_ms) as f64);
            }
        }
        let body = e.request.post_data_entries.as_ref().map(|entries| {
            let bytes: Vec<u8> = entries
                .iter()
                .filter_map(|entry| entry.bytes.as_ref())
                .filter_map(|b| {
                    base64::engine::general_purpose::STANDARD
                        .decode(AsRef::<str>::as_ref(b))
                        .ok()
                })
                .flatten()
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        });
        let (request_body, request_body_truncated) = match body {
            Some(text) => {
                let (text, cut) = limit_body(text);
                (Some(text), cut)
            }
            None => (None, false),
        };
        buffer.push(NetworkCall {
            id: random_id("net"),
            tab_id: tab_id.to_string(),
            action_id: None,
            url: e.request.url.clone(),
            method: e.request.method.clone(),
            status: None,
            resource_type: e
                .r#type
                .as_ref()
                .map(|t| t.as_ref().to_string())
                .unwrap_or_else(|| "Other".into()),
            request_headers: header_map(
                &serde_json::to_value(&e.request.headers).unwrap_or_default(),
            ),
            response_headers: Default::default(),
            request_body,
            response_body: None,
            request_body_truncated,
            response_body_truncated: false,
            body_encoding: None,
            timing_ms: None,
            timestamp_ms: now_ms_i64(),
            state: "pending",
            error: None,
            intercepted_by: self.intercepted_early.lock().remove(e.request_id.inner()),
            request_id: e.request_id.inner().clone(),
            mime_type: String::new(),
        });
        let early = self.responses_early.lock().remove(e.request_id.inner());
        if let (Some(response), Some(call)) = (early, buffer.by_request(e.request_id.inner())) {
            apply_response(call, &response);
        }
        drop(buffer);
        let end = self.ends_early.lock().remove(e.request_id.inner())?;
        self.ended(e.request_id.inner(), end)
    }

    /// An interception rule answered the request `request_id` (its network
    /// id); `label` says which and how.
    pub fn intercepted(&self, request_id: &str, label: String) {
        if let Some(call) = self.buffer().by_request(request_id) {
            call.intercepted_by = Some(label);
            return;
        }
        keep_early(&self.intercepted_early, request_id, label);
    }

    pub fn response_received(&self, e: &EventResponseReceived) {
        if let Some(call) = self.buffer().by_request(e.request_id.inner()) {
            apply_response(call, e);
            return;
        }
        keep_early(&self.responses_early, e.request_id.inner(), e.clone());
    }

    /// A call ended. A body to fetch when it finished and its body is text
    /// worth keeping: fetch it, then call `body_done`.
    pub fn ended(&self, request_id: &str, end: CallEnd) -> Option<BodyFetch> {
        let wants = {
            let mut buffer = self.buffer();
            let Some(call) = buffer.by_request(request_id) else {
                drop(buffer);
                keep_early(&self.ends_early, request_id, end);
                return None;
            };
            call.timing_ms = Some((now_ms_i64() - call.timestamp_ms) as f64);
            match &end {
                CallEnd::Finished { .. } => {
                    call.state = "completed";
                    wants_body(&call.resource_type, &call.mime_type)
                }
                CallEnd::Failed { error } => {
                    call.state = "failed";
                    call.error = Some(error.clone());
                    false
                }
            }
        };
        let CallEnd::Finished { session } = end else {
            return None;
        };
        wants.then(|| {
            self.bodies_in_flight.fetch_add(1, Ordering::SeqCst);
            BodyFetch {
                request_id: request_id.to_string(),
                session,
            }
        })
    }

    /// The body `finished` asked for: `(text, base64_encoded)`, or `None`
    /// when it could not be fetched.
    pub fn body_done(&self, request_id: &str, body: Option<(String, bool)>) {
        if let Some((body, base64_encoded)) = body {
            let (text, cut) = limit_body(body);
            if let Some(call) = self.buffer().by_request(request_id) {
                call.response_body = Some(text);
                call.response_body_truncated = cut;
                call.body_encoding = Some(if base64_encoded { "base64" } else { "text" }.into());
            }
        }
        self.bodies_in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Waits (bounded) until the bodies being fetched are in, so a save
    /// right after an action keeps them.
    pub async fn bodies_settled(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while self.bodies_in_flight.load(Ordering::SeqCst) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The captured calls, oldest first.
    pub fn calls(&self) -> Vec<NetworkCall> {
        self.buffer().all()
    }

    /// Calls started since `since_ms` (wall clock), of the given types.
    pub fn calls_since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall> {
        self.buffer().since(since_ms, types)
    }

    /// See `NetworkBuffer::pending_since`.
    pub fn pending_since(&self, since_ms: i64) -> Vec<(String, String, String)> {
        self.buffer().pending_since(since_ms)
    }

    /// Calls pushed out by newer ones since the tab opened.
    pub fn dropped(&self) -> u64 {
        self.buffer().dropped
    }
}

/// Keeps what came for request `id` before the request itself showed.
/// Bounded: what belongs to a request that never shows is dropped.
fn keep_early<T>(early: &Mutex<std::collections::HashMap<String, T>>, id: &str, value: T) {
    let mut early = early.lock();
    if early.len() > 1000 {
        early.clear();
    }
    early.insert(id.to_string(), value);
}

fn apply_response(call: &mut NetworkCall, e: &EventResponseReceived) {
    call.status = u16::try_from(e.response.status).ok();
    call.response_headers =
        header_map(&serde_json::to_value(&e.response.headers).unwrap_or_default());
    call.mime_type = e.response.mime_type.clone();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(capture: &NetworkCapture, request_id: &str, mime: &str) {
        let mut buffer = capture.buffer();
        buffer.push(NetworkCall {
            id: random_id("net"),
            tab_id: "t".into(),
            action_id: None,
            url: "http://x/".into(),
            method: "GET".into(),
            status: None,
            resource_type: "Fetch".into(),
            request_headers: Default::default(),
            response_headers: Default::default(),
            request_body: None,
            response_body: None,
            request_body_truncated: false,
            response_body_truncated: false,
            body_encoding: None,
            timing_ms: None,
            timestamp_ms: now_ms_i64(),
            state: "pending",
            error: None,
            intercepted_by: None,
            request_id: request_id.into(),
            mime_type: mime.into(),
        });
    }

    #[test]
    fn a_response_read_before_its_request_is_kept_for_it() {
        let capture = NetworkCapture::default();
        let response = response("r9", 201);
        capture.response_received(&response);
        assert!(capture.calls().is_empty());
        capture.request_started("t", &request("r9"));
        let calls = capture.calls();
        assert_eq!(calls[0].status, Some(201));
        assert_eq!(calls[0].mime_type, "application/json");
        assert_eq!(calls[0].response_headers["x-kind"], "created");
        // In order, as before.
        let mut second = response.clone();
        second.request_id = "r10".to_string().into();
        capture.request_started("t", &request("r10"));
        capture.response_received(&second);
        assert_eq!(capture.calls()[1].status, Some(201));
    }

    #[test]
    fn an_end_read_before_its_request_completes_the_call_and_asks_for_its_body() {
        let capture = NetworkCapture::default();
        let frame = Some("frame-session".to_string());
        let ends = [
            (
                "r1",
                CallEnd::Finished {
                    session: frame.clone(),
                },
            ),
            (
                "r2",
                CallEnd::Failed {
                    error: "net::ERR_FAILED".into(),
                },
            ),
        ];
        for (id, end) in ends {
            assert!(
                capture.ended(id, end).is_none(),
                "no call yet, nothing to fetch"
            );
        }
        assert!(capture.calls().is_empty());
        capture.response_received(&response("r1", 200));
        let fetch = capture.request_started("t", &request("r1"));
        assert_eq!(
            fetch,
            Some(BodyFetch {
                request_id: "r1".into(),
                session: frame
            }),
            "the body is fetched once the call is known, from the frame that has it"
        );
        assert!(capture.request_started("t", &request("r2")).is_none());
        let calls = capture.calls();
        assert_eq!((calls[0].state, calls[0].status), ("completed", Some(200)));
        assert_eq!(calls[1].state, "failed");
        assert_eq!(calls[1].error.as_deref(), Some("net::ERR_FAILED"));
        capture.body_done("r1", Some(("{}".into(), false)));
        assert_eq!(capture.calls()[0].response_body.as_deref(), Some("{}"));
    }

    fn response(id: &str, status: u16) -> EventResponseReceived {
        serde_json::from_value(serde_json::json!({
            "requestId": id, "loaderId": "l", "timestamp": 1.0, "type": "Fetch",
            "hasExtraInfo": false,
            "response": {
                "url": "http://x/api", "status": status, "statusText": "",
                "headers": { "x-kind": "created" },
                "mimeType": "application/json", "charset": "",
                "connectionReused": false, "connectionId": 1.0,
                "encodedDataLength": 10.0, "securityState": "neutral"
            }
        }))
        .unwrap()
    }

    fn request(id: &str) -> EventRequestWillBeSent {
        serde_json::from_value(serde_json::json!({
            "requestId": id, "loaderId": "l", "documentURL": "http://x/",
            "timestamp": 0.5, "wallTime": 0.5, "type": "Fetch",
            "initiator": { "type": "script" },
            "redirectHasExtraInfo": false,
            "request": {
                "url": "http://x/api", "method": "POST", "headers": {},
                "initialPriority": "High", "referrerPolicy": "no-referrer"
            }
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn bodies_are_awaited_until_done_fetched_or_not() {
        let capture = NetworkCapture::default();
        call(&capture, "r1", "application/json");
        call(&capture, "r2", "image/png");
        let finished = |id: &str| capture.ended(id, CallEnd::Finished { session: None });
        assert_eq!(
            finished("r1").map(|f| f.request_id),
            Some("r1".to_string()),
            "a JSON body is kept"
        );
        assert!(finished("r2").is_none(), "an image's is not");
        assert!(finished("unknown").is_none());
        let started = std::time::Instant::now();
        capture.bodies_settled(Duration::from_millis(30)).await;
        assert!(
            started.elapsed() >= Duration::from_millis(30),
            "r1 is awaited"
        );
        capture.body_done("r1", Some(("{\"a\":1}".into(), false)));
        capture.bodies_settled(Duration::from_secs(5)).await;
        let calls = capture.calls();
        assert_eq!(calls[0].state, "completed");
        assert_eq!(calls[0].response_body.as_deref(), Some("{\"a\":1}"));
        assert_eq!(calls[0].body_encoding.as_deref(), Some("text"));
        capture.ended(
            "r2",
            CallEnd::Failed {
                error: "net::ERR_FAILED".into(),
            },
        );
        assert_eq!(capture.calls()[1].state, "failed");
    }
}
