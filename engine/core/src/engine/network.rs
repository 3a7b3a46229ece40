//! Network operations: saving a tab's capture, its live buffer, and
//! requests made by the page itself (`curl`).

use super::Engine;
use crate::caller::Caller;
use crate::clock::now_ms;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use serde_json::Value;
use serde_json::json;
use std::time::Duration;

impl Engine {
    // ---- network capture ----

    /// `POST /network/save`: the tab's buffer (the active tab's by default)
    /// saved under `tag`.
    pub async fn save_network(
        &self,
        caller: &Caller,
        tab_id: Option<&str>,
        tag: &str,
    ) -> Result<usize> {
        if tag.is_empty() {
            return Err(Error::invalid("\"tag\" must not be empty"));
        }
        let tab_id = match tab_id {
            Some(id) => id.to_string(),
            None => self
                .active_tab(caller)
                .ok_or_else(|| Error::invalid("no active tab; pass \"tab_id\""))?,
        };
        let tab = self.tab(caller, &tab_id)?;
        let log = self
            .action_log
            .read()
            .clone()
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "this engine records no history"))?;
        // Calls whose bodies are still being fetched get them (bounded).
        tab.bodies_settled(Duration::from_secs(2)).await;
        log.save_network(tag, tab.network_calls(), tab.owner())
            .await
    }

    /// `POST /tabs/{id}/curl`: an HTTP request made by the page's own
    /// `fetch` from an isolated world, so it carries the tab's cookies and
    /// credentials. Nothing thaws: the network is not frozen, timers are.
    pub async fn curl(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: CurlRequest,
    ) -> Result<super::answers::CurlAnswer> {
        let method = request.method.to_ascii_uppercase();
        if method.is_empty() || !method.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(Error::invalid(format!(
                "method {:?} is not an HTTP method",
                request.method
            )));
        }
        if request.body.is_some() && (method == "GET" || method == "HEAD") {
            return Err(Error::invalid(format!(
                "a {method} request can't have a body"
            )));
        }
        crate::rules::url::check_url(&request.url, &self.config.extra_schemes)?;
        let tab = self.live_tab(caller, tab_id).await?;
        let started = now_ms();
        let spec = json!({
            "url": request.url,
            "method": method,
            "headers": request.headers,
            "body": request.body,
            "max": MAX_CURL_BODY,
        });
        let answer = tab
            .session
            .evaluate_as_page(&format!("({CURL_JS})({spec})"))
            .await?;
        if let Some(error) = answer.get("error").and_then(Value::as_str) {
            return Err(Error::new(
                ErrorCode::NetworkError,
                format!(
                    "the request to {} failed in the page: {error} (a cross-origin URL needs CORS)",
                    request.url
                ),
            ));
        }
        let answer: super::answers::CurlAnswer = serde_json::from_value(answer)
            .map_err(|e| Error::internal(format!("the page's answer to the request: {e}")))?;
        if let Some(tag) = request.tag.filter(|t| !t.is_empty()) {
            let call = crate::network::NetworkCall {
                id: crate::ids::random_id("net"),
                tab_id: tab.id.clone(),
                action_id: None,
                url: answer.url.clone(),
                method: method.clone(),
                status: Some(answer.status),
                resource_type: "Fetch".into(),
                request_headers: request.headers.clone(),
                response_headers: answer.headers.clone(),
                request_body: request.body.clone(),
                response_body: Some(answer.body.clone()),
                request_body_truncated: false,
                response_body_truncated: answer.truncated,
                body_encoding: Some(answer.body_encoding.clone()),
                timing_ms: Some(now_ms() - started),
                timestamp_ms: started as i64,
                state: "completed",
                error: None,
                intercepted_by: None,
                request_id: String::new(),
                mime_type: String::new(),
            };
            let log = self.action_log.read().clone().ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    "this engine records no history to tag into",
                )
            })?;
            log.save_network(&tag, vec![call], tab.owner()).await?;
        }
        Ok(answer)
    }

    /// The tab's in-memory capture (unsaved), with how many calls fell out.
    pub fn tab_network(
        &self,
        caller: &Caller,
        tab_id: &str,
    ) -> Result<(Vec<crate::network::NetworkCall>, u64)> {
        let tab = self.tab(caller, tab_id)?;
        Ok((tab.network_calls(), tab.network_dropped()))
    }
}

/// A `POST /tabs/{id}/curl` request.
/// The most of a response body `curl` reads (the answer says `truncated`).
pub const MAX_CURL_BODY: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct CurlRequest {
    pub url: String,
    pub method: String,
    pub headers: serde_json::Map<String, Value>,
    pub body: Option<String>,
    pub tag: Option<String>,
}

/// Page-side (isolated world): the request with the page's credentials; the
/// body as text when it decodes as UTF-8 text, else base64.
const CURL_JS: &str = include_str!("../tab/js/curl.js");
