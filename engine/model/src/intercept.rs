//! Request interception rules (`POST /network/intercept`): what a tab does
//! with a request whose URL matches a rule: answer it itself (`fulfill`),
//! fail it (`abort`) or let it go on, optionally with changed headers
//! (`continue`). No browser here: the rules and their matching.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest body a `fulfill` rule may carry.
pub const MAX_BODY_BYTES: usize = 10 << 20;
/// Most rules one user may have.
pub const MAX_RULES: usize = 200;

/// What every tab asks about its requests: the callers' rules, then the
/// loaded interceptor plugins. Shared by the engine and its tabs.
pub struct Interception {
    pub rules: Mutex<Vec<InterceptRule>>,
    pub registry: Arc<dyn crate::plugin::PluginRegistry>,
}

impl Interception {
    pub fn new(registry: Arc<dyn crate::plugin::PluginRegistry>) -> Interception {
        Interception {
            rules: Mutex::new(Vec::new()),
            registry,
        }
    }

    /// Whether a request of `user`'s tab `tab_id` may be intercepted at all.
    pub fn applies_to(&self, user: Option<&str>, tab_id: &str) -> bool {
        !self.registry.interceptors().is_empty()
            || self.rules.lock().iter().any(|r| {
                r.user.as_deref() == user && r.tab_id.as_deref().is_none_or(|t| t == tab_id)
            })
    }

    /// The first of `user`'s rules that matches, counted as a hit.
    pub fn rule_for(&self, user: Option<&str>, tab_id: &str, url: &str) -> Option<InterceptRule> {
        let mut rules = self.rules.lock();
        let rule = rules
            .iter_mut()
            .find(|r| r.user.as_deref() == user && r.matches(tab_id, url))?;
        rule.hits += 1;
        Some(rule.clone())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InterceptAction {
    Fulfill,
    Abort,
    Continue,
}

/// One rule.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InterceptRule {
    pub id: String,
    /// A glob over the whole URL: `*` any run of characters, `?` one.
    pub url_pattern: String,
    /// Only this tab's requests; all of the user's tabs when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<String>,
    pub action: InterceptAction,
    /// `fulfill`: the status (default 200).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `fulfill`: the response's headers; `continue`: headers set on the
    /// request (replacing those of the same name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// `fulfill`: the response body (text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Requests it has answered so far.
    pub hits: u64,
    #[serde(skip)]
    pub user: Option<String>,
}

impl InterceptRule {
    /// Checks a rule built from a client's fields.
    pub fn check(&self) -> Result<()> {
        let (action, status, body) = (self.action, self.status, &self.body);
        if self.url_pattern.is_empty() {
            return Err(Error::invalid(
                "\"url_pattern\" must not be empty (\"*\" matches every URL)",
            ));
        }
        if self.url_pattern.len() > 2048 {
            return Err(Error::invalid(
                "\"url_pattern\" is longer than 2048 characters",
            ));
        }
        if action != InterceptAction::Fulfill && (status.is_some() || body.is_some()) {
            return Err(Error::invalid(
                "\"status\" and \"body\" are for \"action\": \"fulfill\"",
            ));
        }
        if action == InterceptAction::Abort && self.headers.is_some() {
            return Err(Error::invalid("an \"abort\" rule takes no \"headers\""));
        }
        if let Some(status) = status
            && !(100..=599).contains(&status)
        {
            return Err(Error::invalid(format!(
                "\"status\" must be an HTTP status from 100 to 599, got {status}"
            )));
        }
        if body.as_ref().is_some_and(|b| b.len() > MAX_BODY_BYTES) {
            return Err(Error::invalid(format!(
                "\"body\" is larger than {} MB",
                MAX_BODY_BYTES >> 20
            )));
        }
        for (name, value) in self.headers.iter().flatten() {
            let bad = |c: char| c.is_control() || c == ':';
            if name.is_empty() || name.contains(bad) || value.contains(['\r', '\n']) {
                return Err(Error::invalid(format!(
                    "header {name:?} is not a valid HTTP header"
                )));
            }
        }
        Ok(())
    }

    /// Whether this rule applies to a request of `tab_id` to `url`.
    pub fn matches(&self, tab_id: &str, url: &str) -> bool {
        self.tab_id.as_deref().is_none_or(|t| t == tab_id) && glob_matches(&self.url_pattern, url)
    }
}

/// `*` matches any run of characters (`/` included), `?` any one.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and how much of the text it has taken.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_urls() {
        assert!(glob_matches("*", "http://a/b"));
        assert!(glob_matches("*/api/*", "http://127.0.0.1:80/api/data?x=1"));
        assert!(!glob_matches("*/api/*", "http://127.0.0.1:80/apx/data"));
        assert!(glob_matches(
            "http://*.example.com/*",
            "http://ads.example.com/pixel.gif"
        ));
        assert!(!glob_matches(
            "http://*.example.com/*",
            "https://ads.example.com/pixel.gif"
        ));
        assert!(glob_matches("*tracker.js", "http://x/y/tracker.js"));
        assert!(!glob_matches("*tracker.js", "http://x/y/tracker.js?v=2"));
        assert!(glob_matches("http://x/?", "http://x/a"));
        assert!(!glob_matches("http://x/?", "http://x/ab"));
    }

    #[test]
    fn rules_are_checked() {
        let rule = |action, status, body: Option<&str>| InterceptRule {
            id: "r".into(),
            url_pattern: "*".into(),
            tab_id: None,
            action,
            status,
            headers: None,
            body: body.map(str::to_string),
            hits: 0,
            user: None,
        };
        assert!(
            rule(InterceptAction::Fulfill, Some(200), Some("hi"))
                .check()
                .is_ok()
        );
        assert!(
            rule(InterceptAction::Abort, Some(200), None)
                .check()
                .is_err()
        );
        assert!(
            rule(InterceptAction::Fulfill, Some(99), None)
                .check()
                .is_err()
        );
        let r = rule(InterceptAction::Continue, None, None);
        assert!(r.check().is_ok());
        assert!(r.matches("tab_1", "http://anything/"));
        let scoped = InterceptRule {
            tab_id: Some("tab_2".into()),
            ..r
        };
        assert!(!scoped.matches("tab_1", "http://anything/"));
    }
}
