//! The web UI's door. The API's guard refuses every browser; the UI is for
//! browsers, so it lets in exactly one kind: the UI's own pages, and a
//! person opening it.
//!
//! - `Host` must name loopback on a loopback listener (DNS rebinding);
//! - an `Origin`, when sent, must be the engine's own (`http://{Host}`) or
//!   on the `--allow-origin` list;
//! - `Sec-Fetch-Site` (browsers send it to loopback and https origins):
//!   `same-origin` passes; `none` (a typed URL, a bookmark) passes only for
//!   a top-level page load; `same-site` (another port of 127.0.0.1: cookies
//!   ignore ports) and `cross-site` are refused; so is being framed;
//! - a request that changes anything (POST) must carry `HX-Request: true`,
//!   which no page of another origin can send without a CORS preflight the
//!   engine never answers.
//!
//! Every answer carries a Content-Security-Policy with no inline script and
//! `frame-ancestors 'none'`.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Who may open the web UI.
#[derive(Debug, Clone, Default)]
pub struct UiGuard {
    /// The listener is on a loopback address: `Host` must name loopback.
    pub loopback: bool,
    /// Origins allowed besides the engine's own (`--allow-origin`).
    pub allowed_origins: Vec<String>,
}

/// The policy of every page: scripts and styles from the engine only
/// (htmx's inline indicator styles are turned off in its config), images
/// from the engine or decoded frames, no frames, forms to itself.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; \
    base-uri 'none'; frame-ancestors 'none'";

/// Everything the engine answers outside the UI's pages: shown as a page,
/// it runs nothing and has an opaque origin.
pub const SANDBOXED: &str = "sandbox; default-src 'none'; frame-ancestors 'none'";

impl UiGuard {
    /// Why the request is refused, if it is.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), String> {
        let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("?"));
        let host = text("host").unwrap_or("");
        if self.loopback && !wabp_rest::guard::is_loopback_host(host) {
            return Err(format!(
                "Host {host:?} is not a loopback name; open the UI at 127.0.0.1, localhost or [::1]"
            ));
        }
        let origin = text("origin");
        if let Some(origin) = origin {
            let own = [format!("http://{host}"), format!("https://{host}")];
            let allowed = own.iter().any(|o| o.eq_ignore_ascii_case(origin))
                || self
                    .allowed_origins
                    .iter()
                    .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin));
            if !allowed {
                return Err(format!(
                    "requests from other web pages (Origin {origin:?}) may not use the web UI"
                ));
            }
        }
        match text("sec-fetch-site") {
            None | Some("same-origin") => {}
            Some("none") => {
                let navigation = text("sec-fetch-mode").is_none_or(|m| m == "navigate");
                if *method != Method::GET || !navigation {
                    return Err("the web UI takes changes only from its own pages".into());
                }
            }
            Some(site) => {
                return Err(format!(
                    "the web UI answers only its own pages, not a {site} request"
                ));
            }
        }
        if let Some(dest) = text("sec-fetch-dest")
            && matches!(
                dest,
                "iframe" | "frame" | "embed" | "object" | "fencedframe"
            )
        {
            return Err("the web UI may not be framed".into());
        }
        if *method != Method::GET && *method != Method::HEAD && text("hx-request") != Some("true") {
            return Err(
                "changes through the web UI come from its own pages (they send HX-Request: true)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The layer: refused requests get 403 with `{"error"}`; every answer gets
/// the UI's security headers.
pub async fn ui_only(guard: std::sync::Arc<UiGuard>, request: Request, next: Next) -> Response {
    let refused = guard.check(request.method(), request.headers()).err();
    let mut response = match &refused {
        None => next.run(request).await,
        Some(message) => (
            StatusCode::FORBIDDEN,
            axum::Json(serde_json::json!({ "error": message, "code": "FORBIDDEN" })),
        )
            .into_response(),
    };
    // A refusal opened as a page is sandboxed: an opaque origin, so a page
    // that sent itself here is not the UI's origin.
    let policy = match refused {
        None => CONTENT_SECURITY_POLICY,
        Some(_) => SANDBOXED,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, policy),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(method: Method, pairs: &[(&'static str, &'static str)]) -> Result<(), String> {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("127.0.0.1:8222"));
        for (k, v) in pairs {
            headers.insert(*k, HeaderValue::from_static(v));
        }
        UiGuard {
            loopback: true,
            allowed_origins: vec![],
        }
        .check(&method, &headers)
    }

    #[test]
    fn the_uis_own_pages_and_a_person_pass() {
        assert!(check(Method::GET, &[("sec-fetch-site", "same-origin")]).is_ok());
        assert!(
            check(
                Method::GET,
                &[("sec-fetch-site", "none"), ("sec-fetch-mode", "navigate")]
            )
            .is_ok()
        );
        assert!(
            check(
                Method::POST,
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("origin", "http://127.0.0.1:8222"),
                    ("hx-request", "true")
                ]
            )
            .is_ok()
        );
    }

    #[test]
    fn other_pages_are_refused() {
        for site in ["same-site", "cross-site"] {
            assert!(check(Method::GET, &[("sec-fetch-site", site)]).is_err());
        }
        // Another port of 127.0.0.1 is another origin.
        assert!(
            check(
                Method::POST,
                &[
                    ("origin", "http://127.0.0.1:9000"),
                    ("hx-request", "true"),
                    ("sec-fetch-site", "same-site")
                ]
            )
            .is_err()
        );
        // A form another page posts carries no HX-Request.
        assert!(
            check(
                Method::POST,
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("origin", "http://127.0.0.1:8222")
                ]
            )
            .is_err()
        );
        assert!(
            check(
                Method::POST,
                &[("sec-fetch-site", "none"), ("hx-request", "true")]
            )
            .is_err()
        );
        assert!(
            check(
                Method::GET,
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-dest", "iframe")
                ]
            )
            .is_err()
        );
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("evil.example:8222"));
        assert!(
            UiGuard {
                loopback: true,
                allowed_origins: vec![]
            }
            .check(&Method::GET, &headers)
            .is_err()
        );
    }
}
