//! The caller's cookies: read, set and deleted in its own browser context
//! (a user's), through the browser's `Storage` domain, httpOnly ones
//! included. Values go back to the caller only: never logged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Engine;
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::rules;
pub use crate::rules::cookie::NewCookie;

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
        self.ensure_ready_for(caller)?;
        Ok(match caller.user_id() {
            Some(user) => json!({ "browserContextId": self.user_context(user).await? }),
            None => json!({}),
        })
    }

    async fn all_cookies(&self, caller: &Caller) -> Result<Vec<Cookie>> {
        let params = self.cookie_context(caller).await?;
        let answer = self
            .navigator_for(caller)
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
        let params = rules::cookie::params(&cookies, MAX_COOKIES, None)?;
        let mut command = self.cookie_context(caller).await?;
        command["cookies"] = Value::Array(params);
        self.navigator_for(caller)
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
        let navigator = self.navigator_for(caller).await?;
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
    rules::url::http_url(url, "url")
}

fn sent_to(cookie: &Cookie, url: &url::Url) -> bool {
    rules::cookie::sent_to(&cookie.domain, &cookie.path, cookie.secure, url)
}
