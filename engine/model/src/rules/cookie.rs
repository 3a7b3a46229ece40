//! Cookies a client hands the engine: checked the same way wherever they
//! come in (`POST /cookies`, the one-shot screenshot), turned into the
//! browser's `Network.CookieParam`. Errors name a cookie by its name and
//! never by its value, and `Debug` leaves the value out: cookies are
//! credentials.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, Result, cut};

/// The longest value a cookie may carry, in bytes (the browser's own limit
/// for a whole cookie is 4096).
pub const MAX_VALUE: usize = 4096;
/// The longest name, domain and path.
const MAX_NAME: usize = 256;
const MAX_DOMAIN: usize = 253;
const MAX_PATH: usize = 1024;

/// A cookie to set: `url`, or `domain` (and `path`). Other fields (a
/// browser's export carries `hostOnly`, `session`, `storeId`...) are
/// ignored, so a cookie read back from `GET /cookies` or a browser sets as
/// it is.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct NewCookie {
    /// An RFC 6265 token: no spaces, separators or control characters.
    #[schemars(length(max = 256))]
    pub name: String,
    /// At most 4096 bytes, without control characters or ';'.
    #[serde(deserialize_with = "secret_string")]
    #[schemars(length(max = 4096))]
    pub value: String,
    /// The http(s) URL it belongs to (sets domain, path and secure from it).
    #[serde(default)]
    pub url: Option<String>,
    /// The host, or a parent domain with a leading dot for every subdomain.
    #[serde(default)]
    #[schemars(length(max = 253))]
    pub domain: Option<String>,
    /// Starts with `/` (default `/`).
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub path: Option<String>,
    #[serde(default)]
    pub secure: Option<bool>,
    #[serde(default, rename = "httpOnly")]
    pub http_only: Option<bool>,
    /// `Strict`, `Lax` or `None` (any case).
    #[serde(default, rename = "sameSite")]
    pub same_site: Option<String>,
    /// Seconds since the epoch; left out: a session cookie.
    #[serde(default)]
    pub expires: Option<f64>,
}

/// A cookie's value: a string, and a mistake that never shows what was
/// sent (serde's own message would quote it).
fn secret_string<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(value) => Ok(value),
        _ => Err(serde::de::Error::custom("a cookie value must be a string")),
    }
}

impl std::fmt::Debug for NewCookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewCookie")
            .field("name", &self.name)
            .field("value_len", &self.value.len())
            .field("url", &self.url.as_deref().map(cut))
            .field("domain", &self.domain)
            .field("path", &self.path)
            .finish()
    }
}

/// Patterns no legitimate cookie carries (markup or script injected
/// through a cookie the page later writes into itself).
const SUSPICIOUS: &[&str] = &[
    "<script",
    "</script",
    "javascript:",
    "vbscript:",
    "data:text/html",
    "<iframe",
    "<img",
    "<svg",
    "onerror=",
    "onload=",
    "eval(",
    "document.cookie",
    "expression(",
];

fn suspicious(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    SUSPICIOUS.iter().any(|p| lower.contains(p))
}

/// Cookie names are RFC 6265 tokens.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c))
}

fn valid_domain(domain: &str) -> bool {
    let bare = domain.strip_prefix('.').unwrap_or(domain);
    !bare.is_empty()
        && domain.len() <= MAX_DOMAIN
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        && !bare.starts_with('.')
        && !bare.ends_with('.')
}

/// The cookie's domain covers `host`: equal, or a parent domain
/// (`.example.com` or `example.com` for `app.example.com`). IP addresses and
/// localhost match only themselves.
pub fn domain_matches(domain: &str, host: &str) -> bool {
    let domain = domain
        .strip_prefix('.')
        .unwrap_or(domain)
        .to_ascii_lowercase();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if domain == host {
        return true;
    }
    let is_ip = host.parse::<std::net::IpAddr>().is_ok();
    !is_ip && host != "localhost" && host.ends_with(&format!(".{domain}")) && domain.contains('.')
}

/// Whether a request to `url` carries a cookie of this domain, path and
/// secure flag (what the browser would send).
pub fn sent_to(domain: &str, path: &str, secure: bool, url: &url::Url) -> bool {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let domain = domain.to_ascii_lowercase();
    let domain_ok = match domain.strip_prefix('.') {
        Some(bare) => host == bare || host.ends_with(&format!(".{bare}")),
        None => host == domain,
    };
    let wanted = url.path();
    let path_ok = wanted == path
        || (wanted.starts_with(path)
            && (path.ends_with('/') || wanted[path.len()..].starts_with('/')));
    // Browsers count localhost as a secure origin.
    let secure_ok = !secure || url.scheme() == "https" || host == "localhost";
    domain_ok && path_ok && secure_ok
}

impl NewCookie {
    /// The browser's `Network.CookieParam` for this cookie, checked. `page`
    /// is the page it is for, when there is one (the one-shot screenshot's
    /// URL): the cookie's domain must then cover its host, and a cookie that
    /// names neither `url` nor `domain` belongs to it.
    pub fn param(&self, page: Option<&url::Url>) -> Result<Value> {
        let label = format!("cookie {:?}", cut(&self.name));
        let fail = |what: String| Error::invalid(format!("{label}: {what}"));
        if !valid_name(&self.name) {
            return Err(Error::invalid(
                "a cookie name must be 1 to 256 characters without spaces, control characters or ()<>@,;:\\\"/[]?={}",
            ));
        }
        if self.value.len() > MAX_VALUE {
            return Err(fail(format!("the value is longer than {MAX_VALUE} bytes")));
        }
        if self.value.chars().any(|c| c.is_control() || c == ';') {
            return Err(fail("the value has control characters or ';'".into()));
        }
        if suspicious(&self.name) || suspicious(&self.value) {
            return Err(fail(
                "refused, it carries a suspicious pattern (script or markup)".into(),
            ));
        }
        let mut param = json!({ "name": self.name, "value": self.value });
        let host = page.and_then(url::Url::host_str).unwrap_or_default();
        match (&self.url, &self.domain, page) {
            (Some(url), _, _) => {
                let parsed = super::url::http_url(url, "url").map_err(|e| fail(e.message))?;
                if page.is_some() && !domain_matches(parsed.host_str().unwrap_or_default(), host) {
                    return Err(fail(format!("url does not match the target host {host}")));
                }
                param["url"] = json!(url);
            }
            (None, Some(domain), _) => {
                if !valid_domain(domain) || suspicious(domain) {
                    return Err(fail(
                        "the domain has characters a domain cannot have".into(),
                    ));
                }
                if page.is_some() && !domain_matches(domain, host) {
                    return Err(fail(format!(
                        "domain {domain} does not match the target host {host}"
                    )));
                }
                param["domain"] = json!(domain);
                param["path"] = json!("/");
            }
            (None, None, Some(page)) => param["url"] = json!(page.as_str()),
            (None, None, None) => {
                return Err(fail("give \"url\", or \"domain\" (and \"path\")".into()));
            }
        }
        if let Some(path) = &self.path {
            if !path.starts_with('/')
                || path.len() > MAX_PATH
                || path.chars().any(|c| c.is_control() || c == ';')
                || suspicious(path)
            {
                return Err(fail(
                    "path must start with / and have no control characters or ';'".into(),
                ));
            }
            param["path"] = json!(path);
        }
        if let Some(secure) = self.secure {
            param["secure"] = json!(secure);
        }
        if let Some(http_only) = self.http_only {
            param["httpOnly"] = json!(http_only);
        }
        if let Some(same_site) = &self.same_site {
            let canonical = match same_site.to_ascii_lowercase().as_str() {
                "strict" => "Strict",
                "lax" => "Lax",
                "none" => "None",
                _ => return Err(fail("sameSite must be Strict, Lax or None".into())),
            };
            param["sameSite"] = json!(canonical);
        }
        if let Some(expires) = self.expires {
            if !expires.is_finite() || expires < 0.0 {
                return Err(fail("expires must be seconds since the epoch".into()));
            }
            param["expires"] = json!(expires);
        }
        Ok(param)
    }
}

/// Checks a list of cookies (at most `limit`), each into its browser
/// param; an error names the cookie by its index too.
pub fn params(cookies: &[NewCookie], limit: usize, page: Option<&url::Url>) -> Result<Vec<Value>> {
    if cookies.len() > limit {
        return Err(Error::invalid(format!(
            "too many cookies: {} (at most {limit})",
            cookies.len()
        )));
    }
    cookies
        .iter()
        .enumerate()
        .map(|(i, cookie)| {
            cookie
                .param(page)
                .map_err(|e| Error::invalid(format!("cookies[{i}]: {}", e.message)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(value: Value) -> NewCookie {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn cookies_are_checked_without_echoing_values() {
        let page = url::Url::parse("https://app.example.com/dashboard").unwrap();
        let ok = params(
            &[
                cookie(json!({"name": "session_id", "value": "abc123", "domain": "app.example.com", "path": "/", "httpOnly": true, "secure": true})),
                cookie(json!({"name": "auth", "value": "eyJ", "domain": ".example.com"})),
                cookie(json!({"name": "plain", "value": "x", "sameSite": "lax"})),
            ],
            50,
            Some(&page),
        )
        .unwrap();
        assert_eq!(ok[2]["url"], page.as_str(), "a bare cookie is the page's");
        assert_eq!(ok[2]["sameSite"], "Lax");
        let hidden = cookie(json!({"name": "s", "value": "abc123xyz789"}));
        assert!(!format!("{hidden:?}").contains("abc123xyz789"));

        let secret = "s3cr3t-value";
        for (case, page) in [
            (
                json!({"name": "a", "value": secret, "domain": "evil.com"}),
                Some(&page),
            ),
            (
                json!({"name": "a", "value": format!("<script>{secret}")}),
                Some(&page),
            ),
            (
                json!({"name": "a", "value": "x".repeat(MAX_VALUE + 1)}),
                Some(&page),
            ),
            (json!({"name": "a b", "value": secret}), Some(&page)),
            (
                json!({"name": "a", "value": secret, "sameSite": "Loose"}),
                Some(&page),
            ),
            (
                json!({"name": "a", "value": secret, "domain": "example.com.evil.org"}),
                Some(&page),
            ),
            (
                json!({"name": "a", "value": secret, "url": "https://evil.org/"}),
                Some(&page),
            ),
            (json!({"name": "a", "value": secret}), None),
            (
                json!({"name": "a", "value": secret, "url": "ftp://x/"}),
                None,
            ),
            (
                json!({"name": "a", "value": secret, "domain": "x.org", "path": "p"}),
                None,
            ),
        ] {
            let e = params(&[cookie(case.clone())], 50, page).unwrap_err();
            assert!(!e.message.contains(secret), "{}", e.message);
            assert!(e.message.starts_with("cookies[0]"), "{case}: {}", e.message);
        }
        let many: Vec<NewCookie> = (0..51)
            .map(|i| cookie(json!({"name": format!("c{i}"), "value": "v"})))
            .collect();
        let e = params(&many, 50, Some(&page)).unwrap_err();
        assert!(e.message.contains("at most 50"), "{}", e.message);
    }

    #[test]
    fn domain_matching() {
        assert!(domain_matches("example.com", "app.example.com"));
        assert!(domain_matches(".example.com", "example.com"));
        assert!(domain_matches("localhost", "localhost"));
        assert!(domain_matches("127.0.0.1", "127.0.0.1"));
        assert!(!domain_matches("0.0.1", "127.0.0.1"));
        assert!(!domain_matches("com", "example.com"));
        assert!(!domain_matches("other.com", "example.com"));
        assert!(!domain_matches("ample.com", "example.com"));
    }

    #[test]
    fn a_url_carries_the_cookies_its_host_path_and_scheme_match() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        assert!(sent_to(
            "example.com",
            "/",
            false,
            &url("http://example.com/a")
        ));
        assert!(!sent_to(
            "example.com",
            "/",
            false,
            &url("http://www.example.com/")
        ));
        assert!(sent_to(
            ".example.com",
            "/",
            false,
            &url("http://www.example.com/")
        ));
        assert!(!sent_to(
            ".example.com",
            "/",
            false,
            &url("http://badexample.com/")
        ));
        assert!(sent_to(
            "example.com",
            "/app",
            false,
            &url("http://example.com/app/x")
        ));
        assert!(!sent_to(
            "example.com",
            "/app",
            false,
            &url("http://example.com/apple")
        ));
        assert!(!sent_to(
            "example.com",
            "/",
            true,
            &url("http://example.com/")
        ));
        assert!(sent_to("localhost", "/", true, &url("http://localhost/")));
    }
}
