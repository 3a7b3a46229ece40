//! Network capture: a bounded buffer of each tab's HTTP calls (request and
//! response headers, bodies up to a limit), in the ABP `GET /network` shape.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{Map, Value};

/// Calls kept per tab; the oldest go first, counted in `dropped`.
pub const BUFFER_CALLS: usize = 1000;
/// Bodies are cut at this many bytes (the cut is recorded).
pub const BODY_LIMIT: usize = 256 * 1024;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NetworkCall {
    pub id: String,
    pub tab_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    pub url: String,
    pub method: String,
    pub status: Option<u16>,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub request_headers: Map<String, Value>,
    pub response_headers: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    pub request_body_truncated: bool,
    pub response_body_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_encoding: Option<String>,
    pub timing_ms: Option<f64>,
    pub timestamp_ms: i64,
    /// `pending`, `completed` or `failed`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The interception rule that answered it, as `<rule id>:<action>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intercepted_by: Option<String>,
    #[serde(skip)]
    pub request_id: String,
    #[serde(skip)]
    pub mime_type: String,
}

#[derive(Debug, Default)]
pub struct NetworkBuffer {
    calls: VecDeque<NetworkCall>,
    /// Calls pushed out by newer ones since the tab opened.
    pub dropped: u64,
}

impl NetworkBuffer {
    pub fn push(&mut self, call: NetworkCall) {
        if self.calls.len() >= BUFFER_CALLS {
            self.calls.pop_front();
            self.dropped += 1;
        }
        self.calls.push_back(call);
    }

    /// The newest call for a CDP request id (redirects reuse the id).
    pub fn by_request(&mut self, request_id: &str) -> Option<&mut NetworkCall> {
        self.calls
            .iter_mut()
            .rev()
            .find(|c| c.request_id == request_id)
    }

    /// The calls still in flight that started at or after `since_ms`: their
    /// request id, URL and resource type (nothing else is copied).
    pub fn pending_since(&self, since_ms: i64) -> Vec<(String, String, String)> {
        self.calls
            .iter()
            .filter(|c| c.state == "pending" && c.timestamp_ms >= since_ms)
            .map(|c| (c.request_id.clone(), c.url.clone(), c.resource_type.clone()))
            .collect()
    }

    pub fn all(&self) -> Vec<NetworkCall> {
        self.calls.iter().cloned().collect()
    }

    /// Calls that started at or after `since_ms`, of the given types (all
    /// when empty; case-insensitive).
    pub fn since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall> {
        self.calls
            .iter()
            .filter(|c| c.timestamp_ms >= since_ms)
            .filter(|c| {
                types.is_empty()
                    || types
                        .iter()
                        .any(|t| t.eq_ignore_ascii_case(&c.resource_type))
            })
            .cloned()
            .collect()
    }
}

/// Cuts text at `BODY_LIMIT` bytes on a character boundary.
pub fn limit_body(text: String) -> (String, bool) {
    if text.len() <= BODY_LIMIT {
        return (text, false);
    }
    let mut end = BODY_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

/// Response bodies worth fetching: documents and API calls, as text.
pub fn wants_body(resource_type: &str, mime_type: &str) -> bool {
    // An empty type: the response event has not been seen yet (the CDP event
    // streams are merged without order), so the body may well be text.
    let textual = mime_type.is_empty()
        || mime_type.starts_with("text/")
        || mime_type.contains("json")
        || mime_type.contains("xml")
        || mime_type.contains("javascript")
        || mime_type.contains("x-www-form-urlencoded");
    matches!(resource_type, "XHR" | "Fetch" | "Document" | "Other") && textual
}

/// Header values as strings (CDP joins repeated headers with newlines).
pub fn header_map(headers: &Value) -> Map<String, Value> {
    headers
        .as_object()
        .map(|h| {
            h.iter()
                .map(|(k, v)| {
                    let text = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    (k.clone(), Value::String(text))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: i64, kind: &str) -> NetworkCall {
        NetworkCall {
            id: format!("net_{n}"),
            tab_id: "t".into(),
            action_id: None,
            url: format!("http://x/{n}"),
            method: "GET".into(),
            status: None,
            resource_type: kind.into(),
            request_headers: Map::new(),
            response_headers: Map::new(),
            request_body: None,
            response_body: None,
            request_body_truncated: false,
            response_body_truncated: false,
            body_encoding: None,
            timing_ms: None,
            timestamp_ms: n,
            state: "pending",
            error: None,
            intercepted_by: None,
            request_id: format!("r{n}"),
            mime_type: String::new(),
        }
    }

    #[test]
    fn the_buffer_drops_the_oldest_and_counts() {
        let mut b = NetworkBuffer::default();
        for n in 0..(BUFFER_CALLS as i64 + 5) {
            b.push(call(n, "Fetch"));
        }
        assert_eq!(b.all().len(), BUFFER_CALLS);
        assert_eq!(b.dropped, 5);
        assert_eq!(b.all()[0].timestamp_ms, 5);
        assert!(b.by_request("r7").is_some() && b.by_request("r2").is_none());
    }

    #[test]
    fn since_filters_by_time_and_type() {
        let mut b = NetworkBuffer::default();
        b.push(call(1, "Fetch"));
        b.push(call(5, "Image"));
        b.push(call(9, "XHR"));
        let types = vec!["xhr".to_string(), "fetch".to_string()];
        let got: Vec<i64> = b.since(2, &types).iter().map(|c| c.timestamp_ms).collect();
        assert_eq!(got, vec![9]);
        assert_eq!(b.since(0, &[]).len(), 3);
    }

    #[test]
    fn text_bodies_are_kept_and_an_unknown_type_is_fetched() {
        assert!(wants_body("Fetch", "application/json"));
        assert!(
            wants_body("XHR", ""),
            "the response event may come after loading finished"
        );
        assert!(!wants_body("Fetch", "image/png"));
        assert!(!wants_body("Image", ""));
    }

    #[test]
    fn bodies_are_cut_on_a_char_boundary() {
        let text = "é".repeat(BODY_LIMIT);
        let (cut, truncated) = limit_body(text);
        assert!(truncated && cut.len() <= BODY_LIMIT && cut.chars().all(|c| c == 'é'));
        assert_eq!(limit_body("ok".into()), ("ok".to_string(), false));
    }
}
