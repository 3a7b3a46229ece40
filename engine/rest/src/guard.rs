//! The door every HTTP request passes first (REST, `/mcp`, anything mounted
//! later): only clients drive the engine, never web pages.
//!
//! A page in any browser, the engine's own tabs included, can send requests
//! to a loopback port: `fetch(..., {mode: "no-cors"})` with a `text/plain`
//! body and HTML forms need no CORS preflight, and DNS rebinding lets a site
//! read the answers under its own host name. So:
//! - a request whose `Origin` is not the engine's own origin nor on the
//!   allowlist is refused (403); `Origin: null` is foreign, and so is a
//!   browser's `Sec-Fetch-Site: cross-site|same-site` without an allowed
//!   origin (no-cors GETs carry no `Origin`);
//! - on a loopback listener the `Host` must be a loopback name (403);
//! - a request body must be `application/json` (415): browsers can't send
//!   that cross-origin without a preflight, which the engine never grants.

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
    /// Why the request is refused, if it is.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
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
        let origin_allowed = match origin {
            Some(origin) => {
                if !self.origin_allowed(origin, host) {
                    return Err((
                        StatusCode::FORBIDDEN,
                        format!(
                            "requests from web pages (Origin {origin:?}) may not drive the engine; allow an origin with --allow-origin"
                        ),
                    ));
                }
                !self.is_own_origin(origin, host)
            }
            None => false,
        };
        let fetch_site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if matches!(fetch_site, "cross-site" | "same-site") && !origin_allowed {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "a {fetch_site} request from a web page may not drive the engine; allow its origin with --allow-origin"
                ),
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

    fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        self.is_own_origin(origin, host)
            || self
                .allowed_origins
                .iter()
                .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    }

    /// The engine's own origin: the one it is reached at. (Under DNS
    /// rebinding that would be the attacker's name, which the loopback Host
    /// check refuses first; off loopback the bearer token stands guard.)
    fn is_own_origin(&self, origin: &str, host: &str) -> bool {
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        !host.is_empty() && rest.eq_ignore_ascii_case(host)
    }
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        // "[::1]" alone ends in "1]", not in a port.
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    LOOPBACK_NAMES
        .iter()
        .any(|n| n.eq_ignore_ascii_case(name.trim_end_matches('.')))
}

/// Whether the request carries a body (a declared non-zero length, or one
/// streamed without a length).
fn has_body(method: &Method, headers: &HeaderMap) -> bool {
    if let Some(length) = headers.get(header::CONTENT_LENGTH) {
        return length
            .to_str()
            .ok()
            .and_then(|l| l.trim().parse::<u64>().ok())
            != Some(0);
    }
    headers.contains_key(header::TRANSFER_ENCODING)
        || (headers.contains_key(header::CONTENT_TYPE)
            && !matches!(*method, Method::GET | Method::HEAD | Method::DELETE))
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
    match guard.check(request.method(), request.headers()) {
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
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        let g = loopback();
        let h = headers(&[("host", "evil.example:8222")]);
        assert_eq!(
            g.check(&Method::GET, &h).unwrap_err().0,
            StatusCode::FORBIDDEN
        );
        let off_loopback = ClientGuard::default();
        assert!(off_loopback.check(&Method::GET, &h).is_ok());
    }

    #[test]
    fn origins_own_allowed_and_foreign() {
        let g = loopback();
        let ok = |o: &str| {
            g.check(
                &Method::GET,
                &headers(&[("host", "127.0.0.1:8222"), ("origin", o)]),
            )
            .is_ok()
        };
        assert!(ok("http://127.0.0.1:8222"));
        assert!(ok("https://dash.example"));
        assert!(
            !ok("http://127.0.0.1:9000"),
            "another port is another origin"
        );
        assert!(!ok("null"));
        assert!(
            !ok("http://localhost:8222"),
            "not the origin it is reached at"
        );
        assert!(!ok("https://evil.example"));
    }

    #[test]
    fn cross_site_fetches_without_origin_are_refused() {
        let g = loopback();
        let h = headers(&[("host", "127.0.0.1:8222"), ("sec-fetch-site", "same-site")]);
        assert!(g.check(&Method::GET, &h).is_err());
        let h = headers(&[("host", "127.0.0.1:8222"), ("sec-fetch-site", "none")]);
        assert!(g.check(&Method::GET, &h).is_ok());
        let h = headers(&[
            ("host", "127.0.0.1:8222"),
            ("sec-fetch-site", "cross-site"),
            ("origin", "https://dash.example"),
        ]);
        assert!(g.check(&Method::GET, &h).is_ok());
    }

    #[test]
    fn bodies_must_be_json() {
        let g = loopback();
        let check = |pairs: &[(&'static str, &str)]| {
            let mut all = vec![("host", "127.0.0.1")];
            all.extend_from_slice(pairs);
            g.check(&Method::POST, &headers(&all)).map_err(|e| e.0)
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
