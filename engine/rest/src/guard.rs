//! The door every API request passes first (REST, `/mcp`, the probes; the web
//! UI at `/ui` has a door of its own, `wabp_ui::guard`): only clients drive
//! the engine, never web pages.
//!
//! A page in any browser, the engine's own tabs included, can send requests
//! to a loopback port: `fetch(..., {mode: "no-cors"})` with a `text/plain`
//! body and HTML forms need no CORS preflight, DNS rebinding lets a site read
//! the answers under its own host name, and a tab sent to the engine's own
//! address would be "same-origin" with it. The engine serves no web page, so
//! a request a browser sends is refused unless its origin is on the
//! allowlist (`--allow-origin`):
//! - an `Origin` header (`null` included) not on the allowlist: 403;
//! - `Sec-Fetch-Site` without an allowed `Origin`: 403. Browsers send it on
//!   every request to a loopback or https origin, navigations and no-cors
//!   GETs (which carry no `Origin`) included. `Sec-Fetch-Mode` or
//!   `Sec-Fetch-Dest` alone are not a browser: Node's built-in fetch
//!   (undici) sends `Sec-Fetch-Mode: cors` on every request, and with it the
//!   TypeScript MCP SDK and every agent framework written for Node;
//! - on a loopback listener, a `Host` that is not a loopback name: 403;
//! - a request body that is not `application/json`: 415 (no CORS-simple
//!   request can carry one).
//!
//! Clients (curl, HTTP libraries, MCP SDKs, Node's fetch) send no `Origin`
//! and no `Sec-Fetch-Site`.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use wabp_core::ErrorCode;

use crate::error::error_response;

/// Who may talk to the engine over HTTP.
#[derive(Debug, Clone, Default)]
pub struct ClientGuard {
    /// The listener is on a loopback address: `Host` must name loopback.
    pub loopback: bool,
    /// Origins (`scheme://host[:port]`) allowed besides the engine's own
    /// (`--allow-origin`), e.g. a dashboard served elsewhere.
    pub allowed_origins: Vec<String>,
}

const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

impl ClientGuard {
    /// Why the request is refused, if it is. `authority` is the request
    /// URI's, for HTTP/2 requests that carry no `Host` header.
    pub fn check(
        &self,
        method: &Method,
        headers: &HeaderMap,
        authority: Option<&str>,
    ) -> Result<(), (StatusCode, String)> {
        let host = match headers.get(header::HOST) {
            Some(value) => value.to_str().unwrap_or(""),
            None => authority.unwrap_or(""),
        };
        if self.loopback && !is_loopback_host(host) {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "Host {host:?} is not a loopback name; this engine answers only to 127.0.0.1, localhost or [::1]"
                ),
            ));
        }
        let origin = headers
            .get(header::ORIGIN)
            .map(|v| v.to_str().unwrap_or(""));
        let allowed_origin = match origin {
            Some(origin) if self.is_allowed(origin) => true,
            Some(origin) => {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!(
                        "requests from web pages (Origin {origin:?}) may not drive the engine; allow an origin with --allow-origin"
                    ),
                ));
            }
            None => false,
        };
        let from_browser = headers.contains_key("sec-fetch-site");
        if from_browser && !allowed_origin {
            return Err((
                StatusCode::FORBIDDEN,
                "requests from web browsers may not drive the engine (only clients such as curl, HTTP libraries and MCP SDKs); allow an origin with --allow-origin".into(),
            ));
        }
        if has_body(method, headers) && !is_json(headers) {
            let given = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none");
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "request bodies must be JSON with Content-Type: application/json (got {given:?})"
                ),
            ));
        }
        Ok(())
    }

    /// On the allowlist (`scheme://host[:port]`, compared without case).
    fn is_allowed(&self, origin: &str) -> bool {
        self.allowed_origins
            .iter()
            .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    }
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
pub fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        // "[::1]" alone ends in "1]", not in a port.
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Whether the request carries a body (a declared non-zero length, or one
/// streamed without a length).
fn has_body(method: &Method, headers: &HeaderMap) -> bool {
    // A streamed body counts whatever length is also claimed.
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    if let Some(length) = headers.get(header::CONTENT_LENGTH) {
        return length
            .to_str()
            .ok()
            .and_then(|l| l.trim().parse::<u64>().ok())
            != Some(0);
    }
    headers.contains_key(header::CONTENT_TYPE)
        && !matches!(*method, Method::GET | Method::HEAD | Method::DELETE)
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The middleware: refuses what [`ClientGuard::check`] refuses, with the
/// usual `{"error", "code"}` body.
pub async fn client_only(guard: Arc<ClientGuard>, request: Request, next: Next) -> Response {
    let authority = request.uri().authority().map(|a| a.as_str().to_string());
    match guard.check(request.method(), request.headers(), authority.as_deref()) {
        Ok(()) => next.run(request).await,
        Err((status, message)) => {
            tracing::warn!(
                method = %request.method(),
                path = request.uri().path(),
                "refused: {message}"
            );
            let code = if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                ErrorCode::UnsupportedMediaType
            } else {
                ErrorCode::Forbidden
            };
            error_response(status, code, message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn loopback() -> ClientGuard {
        ClientGuard {
            loopback: true,
            allowed_origins: vec!["https://dash.example".into()],
        }
    }

    #[test]
    fn loopback_hosts_pass_others_do_not() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:8222",
            "localhost:8222",
            "LOCALHOST",
            "[::1]",
            "[::1]:8222",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example:8222",
            "127.0.0.1.evil.example",
            "localhost.evil:1",
            "",
            "[::2]:8222",
            "0.0.0.0:8222",
            "localhost.:8222",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        let g = loopback();
        let h = headers(&[("host", "evil.example:8222")]);
        assert_eq!(
            g.check(&Method::GET, &h, None).unwrap_err().0,
            StatusCode::FORBIDDEN
        );
        let off_loopback = ClientGuard::default();
        assert!(off_loopback.check(&Method::GET, &h, None).is_ok());
        // HTTP/2 carries the authority in the URI, not in a Host header.
        assert!(
            g.check(&Method::GET, &HeaderMap::new(), Some("127.0.0.1:8222"))
                .is_ok()
        );
        assert!(
            g.check(&Method::GET, &HeaderMap::new(), Some("evil.example"))
                .is_err()
        );
    }

    #[test]
    fn only_allowed_origins_pass() {
        let g = loopback();
        let ok = |o: &str| {
            g.check(
                &Method::GET,
                &headers(&[("host", "127.0.0.1:8222"), ("origin", o)]),
                None,
            )
            .is_ok()
        };
        assert!(ok("https://dash.example"));
        assert!(ok("HTTPS://DASH.EXAMPLE"));
        assert!(
            !ok("http://127.0.0.1:8222"),
            "the engine serves no page: its own origin is a tab sent to it"
        );
        assert!(!ok("http://127.0.0.1:9000"));
        assert!(!ok("null"));
        assert!(!ok("https://evil.example"));
        assert!(!ok("https://dash.example.evil"));
    }

    #[test]
    fn cross_site_fetches_without_origin_are_refused() {
        let g = loopback();
        let h = headers(&[("host", "127.0.0.1:8222"), ("sec-fetch-site", "same-site")]);
        assert!(g.check(&Method::GET, &h, None).is_err());
        // A tab navigated to the engine: no Origin, but fetch metadata.
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-site", "none"),
            ("sec-fetch-mode", "navigate"),
        ]);
        assert!(g.check(&Method::GET, &h, None).is_err());
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "no-cors"),
            ("sec-fetch-dest", "image"),
        ]);
        assert!(g.check(&Method::GET, &h, None).is_err());
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-site", "cross-site"),
            ("origin", "https://dash.example"),
        ]);
        assert!(g.check(&Method::GET, &h, None).is_ok());
    }

    #[test]
    fn node_fetch_is_a_client() {
        // What Node 20's built-in fetch (undici) sends: `Sec-Fetch-Mode: cors`
        // and nothing else of fetch metadata, no Origin.
        let g = loopback();
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-mode", "cors"),
            ("accept", "*/*"),
            ("user-agent", "node"),
        ]);
        assert!(g.check(&Method::GET, &h, None).is_ok());
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-mode", "cors"),
            ("content-type", "application/json"),
            ("content-length", "2"),
        ]);
        assert!(g.check(&Method::POST, &h, None).is_ok());
        // The same with an Origin is a page's fetch.
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-mode", "cors"),
            ("origin", "http://127.0.0.1:9000"),
        ]);
        assert!(g.check(&Method::GET, &h, None).is_err());
    }

    #[test]
    fn bodies_must_be_json() {
        let g = loopback();
        let check = |pairs: &[(&'static str, &str)]| {
            let mut all = vec![("host", "127.0.0.1")];
            all.extend_from_slice(pairs);
            g.check(&Method::POST, &headers(&all), None)
                .map_err(|e| e.0)
        };
        assert_eq!(
            check(&[("content-type", "text/plain"), ("content-length", "2")]),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            check(&[("content-length", "2")]),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            check(&[("transfer-encoding", "chunked")]),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            check(&[
                ("transfer-encoding", "chunked"),
                ("content-length", "0"),
                ("content-type", "text/plain")
            ]),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(check(&[("content-length", "0")]), Ok(()));
        assert_eq!(check(&[]), Ok(()));
        assert_eq!(
            check(&[
                ("content-type", "Application/JSON; charset=utf-8"),
                ("content-length", "2")
            ]),
            Ok(())
        );
    }
}
