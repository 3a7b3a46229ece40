//! Attaching to a browser someone else runs (`--connect`): every URL form a
//! CDP service documents, a second socket that reaches the same browser,
//! and endpoints shown without their credentials.
//!
//! - `ws://` and `wss://`, with a path and a query (`?token=`), as given; an
//!   empty path is `/` (a request line is never `GET ?token=`).
//! - `http://` and `https://`: discovery at `/json/version` under the
//!   given path, with the given query; the socket URL it answers keeps that
//!   query, and a loopback host in it is replaced by the host that answered
//!   (a service behind a proxy reports its own address).
//! - A service that starts a browser per connection (browserless'
//!   `/chromium`) must not be dialled twice: any URL that does not name its
//!   browser (`/devtools/browser/<id>`) is dialled once and shared
//!   (`cdp_mux.rs`).

use std::time::Duration;

use url::Url;

use crate::error::{Error, ErrorCode, Result};

const DISCOVERY_LIMIT: Duration = Duration::from_secs(10);

fn refused(endpoint: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::DevtoolsInitFailed,
        format!("could not attach to {}: {why}", shown(endpoint)),
    )
}

/// The WebSocket URL to dial for `endpoint`.
pub async fn websocket_url(endpoint: &str) -> Result<String> {
    let url = Url::parse(endpoint).map_err(|e| refused(endpoint, format!("not a URL ({e})")))?;
    match url.scheme() {
        "ws" | "wss" => Ok(url.to_string()),
        "http" | "https" => discover(endpoint, url).await,
        other => Err(refused(
            endpoint,
            format!("{other}: is not ws://, wss://, http:// or https://"),
        )),
    }
}

async fn discover(endpoint: &str, url: Url) -> Result<String> {
    let mut version = url.clone();
    if !version
        .path()
        .trim_end_matches('/')
        .ends_with("/json/version")
    {
        let path = format!("{}/json/version", version.path().trim_end_matches('/'));
        version.set_path(&path);
    }
    let client = reqwest::Client::builder()
        .timeout(DISCOVERY_LIMIT)
        .build()
        .map_err(|e| refused(endpoint, e))?;
    let answer: serde_json::Value = client
        .get(version.clone())
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| refused(endpoint, without_url(e)))?
        .json()
        .await
        .map_err(|e| {
            refused(
                endpoint,
                format!("/json/version did not answer JSON ({})", without_url(e)),
            )
        })?;
    let socket = answer["webSocketDebuggerUrl"]
        .as_str()
        .ok_or_else(|| refused(endpoint, "/json/version has no webSocketDebuggerUrl"))?;
    let mut socket = Url::parse(socket)
        .map_err(|e| refused(endpoint, format!("its webSocketDebuggerUrl: {e}")))?;
    let reported_loopback = socket.host_str().is_some_and(|h| {
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if reported_loopback && url.host_str() != socket.host_str() {
        let _ = socket.set_host(url.host_str());
        let _ = socket.set_port(url.port());
        if url.scheme() == "https" {
            let _ = socket.set_scheme("wss");
        }
    }
    if socket.query().is_none() {
        socket.set_query(url.query());
    }
    Ok(socket.to_string())
}

/// reqwest's error without the URL it names (which holds the token).
fn without_url(error: reqwest::Error) -> String {
    error.without_url().to_string()
}

/// Whether `ws_url` names one browser (`/devtools/browser/<id>`), which
/// takes more than one connection.
pub fn names_its_browser(ws_url: &str) -> bool {
    Url::parse(ws_url).is_ok_and(|u| u.path().starts_with("/devtools/browser/"))
}

/// `endpoint` as logs and status show it: user info and every query value
/// hidden (`?token=***`).
pub fn shown(endpoint: &str) -> String {
    let Ok(mut url) = Url::parse(endpoint) else {
        // Not a URL: show none of it past the host-ish part.
        let cut: String = endpoint
            .chars()
            .take_while(|c| *c != '?' && *c != '@')
            .collect();
        return crate::error::cut(&cut).to_string();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let keys: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    if keys.is_empty() {
        url.set_query(None);
    } else {
        let hidden: Vec<String> = keys.iter().map(|k| format!("{k}=***")).collect();
        url.set_query(Some(&hidden.join("&")));
    }
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn websocket_forms_are_kept_with_a_path() {
        assert_eq!(
            websocket_url("ws://host:3000?token=T").await.unwrap(),
            "ws://host:3000/?token=T"
        );
        assert_eq!(
            websocket_url("wss://cdp.example/chromium?token=T&timeout=6")
                .await
                .unwrap(),
            "wss://cdp.example/chromium?token=T&timeout=6"
        );
        let err = websocket_url("ftp://host?token=SECRET").await.unwrap_err();
        assert!(!err.message.contains("SECRET"), "{}", err.message);
    }

    #[tokio::test]
    async fn discovery_keeps_the_token_and_the_host_that_answered() {
        use axum::routing::get;
        let router = axum::Router::new().route(
            "/base/json/version",
            get(|q: axum::extract::RawQuery| async move {
                assert_eq!(q.0.as_deref(), Some("token=T"));
                axum::Json(serde_json::json!({
                    "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/browser/abc"
                }))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await });
        let found = websocket_url(&format!("http://127.0.0.2:{port}/base?token=T"))
            .await
            .unwrap();
        assert_eq!(
            found,
            format!("ws://127.0.0.2:{port}/devtools/browser/abc?token=T")
        );
        let missing = websocket_url(&format!("http://127.0.0.2:{port}/nothing?token=SECRET"))
            .await
            .unwrap_err();
        assert!(
            missing.message.contains("token=***") && !missing.message.contains("SECRET"),
            "{}",
            missing.message
        );
    }

    #[test]
    fn urls_that_name_their_browser_are_told_apart() {
        assert!(names_its_browser("ws://h:9222/devtools/browser/B2?token=T"));
        assert!(!names_its_browser("ws://bl:3000/chromium?token=T"));
        assert!(!names_its_browser("ws://bl:3000/?token=T"));
    }

    #[test]
    fn credentials_are_never_shown() {
        assert_eq!(
            shown("wss://user:pw@cdp.example/chromium?token=SECRET&stealth=true"),
            "wss://cdp.example/chromium?token=***&stealth=***"
        );
        assert_eq!(
            shown("ws://h:9222/devtools/browser/x"),
            "ws://h:9222/devtools/browser/x"
        );
        assert!(!shown("not a url?token=SECRET").contains("SECRET"));
    }
}
