//! The caller's cookies: read, set and deleted in its own browser context
//! (a user's), through the browser's `Storage` domain, httpOnly ones
//! included. Values go back to the caller only: never logged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Engine;
use crate::caller::Caller;
use crate::error::{Error, Result};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
/// Most cookies one request may set.
const MAX_COOKIES: usize = 1000;

/// A cookie as the browser keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    /// With a leading dot for a domain cookie, without for a host-only one.
    pub domain: String,
    pub path: String,
    /// Seconds since the epoch; -1 for a session cookie.
    pub expires: f64,
    #[serde(rename = "httpOnly")]
    pub http_only: bool,
    pub secure: bool,
    pub session: bool,
    /// `Strict`, `Lax` or `None`, when set.
    #[serde(rename = "sameSite", skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

/// A cookie to set: `url`, or `domain` (and `path`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NewCookie {
    pub name: String,
    pub value: String,
    /// The URL it belongs to (sets domain, path and secure from it).
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub domain: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub secure: Option<bool>,
    #[serde(default, rename = "httpOnly")]
    pub http_only: Option<bool>,
    /// `Strict`, `Lax` or `None`.
    #[serde(default, rename = "sameSite")]
    pub same_site: Option<String>,
    /// Seconds since the epoch; left out: a session cookie.
    #[serde(default)]
    pub expires: Option<f64>,
}

/// Which cookies to delete; nothing given: all of them.
#[derive(Debug, Clone, Default)]
pub struct CookieFilter {
    pub url: Option<String>,
    pub name: Option<String>,
}

impl Engine {
    /// The `Storage` commands' context for the caller (`None`: the default
    /// context, where requests without a user live).
    async fn cookie_context(&self, caller: &Caller) -> Result<Value> {
        self.ensure_ready()?;
        Ok(match caller.user_id() {
            Some(user) => json!({ "browserContextId": self.user_context(user).await? }),
            None => json!({}),
        })
    }

    async fn all_cookies(&self, caller: &Caller) -> Result<Vec<Cookie>> {
        let params = self.cookie_context(caller).await?;
        let answer = self
            .browser_navigator()
            .await?
            .send(None, "Storage.getCookies", params, LIMIT)
            .await?;
        let cookies = answer.get("cookies").cloned().unwrap_or(json!([]));
        serde_json::from_value(cookies).map_err(|e| Error::internal(format!("cookies: {e}")))
    }

    /// The caller's cookies, those `url` would be sent when given.
    pub async fn cookies(&self, caller: &Caller, url: Option<&str>) -> Result<Vec<Cookie>> {
        let target = url.map(parse_url).transpose()?;
        let mut cookies = self.all_cookies(caller).await?;
        if let Some(target) = &target {
            cookies.retain(|c| sent_to(c, target));
        }
        cookies.sort_by(|a, b| (&a.domain, &a.path, &a.name).cmp(&(&b.domain, &b.path, &b.name)));
        Ok(cookies)
    }

    /// Sets cookies in the caller's context; the number set.
    pub async fn set_cookies(&self, caller: &Caller, cookies: Vec<NewCookie>) -> Result<usize> {
        if cookies.is_empty() {
            return Err(Error::invalid("\"cookies\" must list at least one cookie"));
        }
        if cookies.len() > MAX_COOKIES {
            return Err(Error::invalid(format!(
                "at most {MAX_COOKIES} cookies at once, got {}",
                cookies.len()
            )));
        }
        let mut params = Vec::with_capacity(cookies.len());
        for (i, cookie) in cookies.iter().enumerate() {
            params.push(cookie_param(cookie).map_err(|e| {
                Error::invalid(format!("cookies[{i}] ({:?}): {}", cookie.name, e.message))
            })?);
        }
        let mut command = self.cookie_context(caller).await?;
        command["cookies"] = Value::Array(params);
        self.browser_navigator()
            .await?
            .send(None, "Storage.setCookies", command, LIMIT)
            .await
            .map_err(|e| {
                Error::invalid(format!("the browser refused the cookies: {}", e.message))
            })?;
        Ok(cookies.len())
    }

    /// Deletes the caller's cookies (all, or those matching `filter`); the
    /// number deleted.
    pub async fn delete_cookies(&self, caller: &Caller, filter: CookieFilter) -> Result<usize> {
        let target = filter.url.as_deref().map(parse_url).transpose()?;
        let cookies = self.all_cookies(caller).await?;
        let doomed: Vec<&Cookie> = cookies
            .iter()
            .filter(|c| target.as_ref().is_none_or(|t| sent_to(c, t)))
            .filter(|c| filter.name.as_deref().is_none_or(|n| c.name == n))
            .collect();
        if doomed.is_empty() {
            return Ok(0);
        }
        let navigator = self.browser_navigator().await?;
        let mut command = self.cookie_context(caller).await?;
        if target.is_none() && filter.name.is_none() {
            navigator
                .send(None, "Storage.clearCookies", command, LIMIT)
                .await?;
            return Ok(doomed.len());
        }
        // The Storage domain deletes only everything: set each one again,
        // already expired, which the cookie store takes as a deletion.
        command["cookies"] = doomed
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "value": "",
                    "domain": c.domain,
                    "path": c.path,
                    "secure": c.secure,
                    "httpOnly": c.http_only,
                    "expires": 1,
                })
            })
            .collect();
        navigator
            .send(None, "Storage.setCookies", command, LIMIT)
            .await?;
        Ok(doomed.len())
    }
}

fn parse_url(url: &str) -> Result<url::Url> {
    let parsed = url::Url::parse(url)
        .map_err(|e| Error::invalid(format!("\"url\" is not an absolute URL ({e}): {url:?}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(Error::invalid(format!(
            "\"url\" must be an http or https URL, got {url:?}"
        )));
    }
    Ok(parsed)
}

/// Whether a request to `url` carries `cookie` (domain, path, secure).
fn sent_to(cookie: &Cookie, url: &url::Url) -> bool {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let domain = cookie.domain.to_ascii_lowercase();
    let domain_ok = match domain.strip_prefix('.') {
        Some(bare) => host == bare || host.ends_with(&format!(".{bare}")),
        None => host == domain,
    };
    let path = url.path();
    let path_ok = path == cookie.path
        || (path.starts_with(&cookie.path)
            && (cookie.path.ends_with('/') || path[cookie.path.len()..].starts_with('/')));
    // Browsers count localhost as a secure origin.
    let secure_ok = !cookie.secure || url.scheme() == "https" || host == "localhost";
    domain_ok && path_ok && secure_ok
}

/// A `Network.CookieParam` for the browser, checked.
fn cookie_param(cookie: &NewCookie) -> Result<Value> {
    if cookie.name.is_empty() {
        return Err(Error::invalid("\"name\" must not be empty"));
    }
    if cookie.name.contains([';', '=', ' ']) || cookie.value.contains(';') {
        return Err(Error::invalid(
            "\"name\" can't hold ';', '=' or spaces, nor \"value\" ';'",
        ));
    }
    let mut param = json!({ "name": cookie.name, "value": cookie.value });
    match (&cookie.url, &cookie.domain) {
        (Some(url), _) => {
            parse_url(url)?;
            param["url"] = json!(url);
        }
        (None, Some(domain)) if !domain.is_empty() => {
            param["domain"] = json!(domain);
            param["path"] = json!(cookie.path.as_deref().unwrap_or("/"));
        }
        _ => return Err(Error::invalid("give \"url\", or \"domain\" (and \"path\")")),
    }
    if let Some(path) = &cookie.path {
        if !path.starts_with('/') {
            return Err(Error::invalid(format!(
                "\"path\" must start with '/', got {path:?}"
            )));
        }
        param["path"] = json!(path);
    }
    if let Some(secure) = cookie.secure {
        param["secure"] = json!(secure);
    }
    if let Some(http_only) = cookie.http_only {
        param["httpOnly"] = json!(http_only);
    }
    if let Some(same_site) = &cookie.same_site {
        let canonical = match same_site.to_ascii_lowercase().as_str() {
            "strict" => "Strict",
            "lax" => "Lax",
            "none" => "None",
            _ => {
                return Err(Error::invalid(format!(
                    "\"sameSite\" must be Strict, Lax or None, got {same_site:?}"
                )));
            }
        };
        param["sameSite"] = json!(canonical);
    }
    if let Some(expires) = cookie.expires {
        if !expires.is_finite() || expires < 0.0 {
            return Err(Error::invalid(
                "\"expires\" must be seconds since the epoch",
            ));
        }
        param["expires"] = json!(expires);
    }
    Ok(param)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(domain: &str, path: &str, secure: bool) -> Cookie {
        Cookie {
            name: "n".into(),
            value: "v".into(),
            domain: domain.into(),
            path: path.into(),
            expires: -1.0,
            http_only: false,
            secure,
            session: true,
            same_site: None,
        }
    }

    #[test]
    fn a_url_carries_the_cookies_its_host_path_and_scheme_match() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        assert!(sent_to(
            &cookie("example.com", "/", false),
            &url("http://example.com/a")
        ));
        assert!(!sent_to(
            &cookie("example.com", "/", false),
            &url("http://www.example.com/")
        ));
        assert!(sent_to(
            &cookie(".example.com", "/", false),
            &url("http://www.example.com/")
        ));
        assert!(!sent_to(
            &cookie(".example.com", "/", false),
            &url("http://badexample.com/")
        ));
        assert!(sent_to(
            &cookie("example.com", "/app", false),
            &url("http://example.com/app/x")
        ));
        assert!(!sent_to(
            &cookie("example.com", "/app", false),
            &url("http://example.com/apple")
        ));
        assert!(!sent_to(
            &cookie("example.com", "/", true),
            &url("http://example.com/")
        ));
        assert!(sent_to(
            &cookie("example.com", "/", true),
            &url("https://example.com/")
        ));
    }

    #[test]
    fn bad_cookies_say_what_is_wrong() {
        let base = NewCookie {
            name: "a".into(),
            value: "b".into(),
            url: None,
            domain: None,
            path: None,
            secure: None,
            http_only: None,
            same_site: None,
            expires: None,
        };
        assert!(cookie_param(&base).unwrap_err().message.contains("\"url\""));
        let ok = NewCookie {
            url: Some("https://example.com/".into()),
            ..base.clone()
        };
        assert_eq!(cookie_param(&ok).unwrap()["url"], "https://example.com/");
        let bad_site = NewCookie {
            same_site: Some("sideways".into()),
            ..ok.clone()
        };
        assert!(
            cookie_param(&bad_site)
                .unwrap_err()
                .message
                .contains("sameSite")
        );
        let bad_path = NewCookie {
            path: Some("app".into()),
            ..ok.clone()
        };
        assert!(
            cookie_param(&bad_path)
                .unwrap_err()
                .message
                .contains("path")
        );
        let empty = NewCookie {
            name: String::new(),
            ..ok
        };
        assert!(cookie_param(&empty).unwrap_err().message.contains("name"));
    }
}
