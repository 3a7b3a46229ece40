//! `--browser-endpoint`: each user session gets a browser of its own,
//! dialled from a CDP service that starts a browser per connection
//! (browserless' `/chromium`, any such `ws://` endpoint), instead of a
//! context in the engine's browser. The service spreads and queues the
//! sessions; the engine holds one socket per session browser and nothing
//! else of it. Endpoints are taken in turn, one per new session. `{user}`
//! in an endpoint is the user's id (percent-encoded; for the engine's own
//! browser, the engine's id), `{session}` a fresh random id, for services
//! that route or name sessions by them (browserless' `trackingId`).
//!
//! A session browser lives as the engine's own does (`BrowserHost`): it is
//! watched, and when its socket drops the engine dials again (backing off)
//! and reopens that user's tabs under their ids, while that user's requests
//! answer 503 and other users carry on. It ends with the session (idle,
//! evicted, or `DELETE`d). A service at its limit answers the dial with 429
//! or 503: the new tab answers 503 `BROWSER_SERVICE_BUSY` with
//! `Retry-After`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use super::Engine;
use crate::browser::{BrowserOptions, LaunchMode};
use crate::browser_host::{BrowserHost, Lifecycle};
use crate::error::Result;

/// The users' own browsers.
#[derive(Default)]
pub(crate) struct SessionBrowsers {
    endpoints: Vec<String>,
    /// The endpoint the next session is dialled at.
    turn: AtomicUsize,
    hosts: Mutex<HashMap<String, Arc<BrowserHost>>>,
    /// One dial per user at a time: two first requests of a new user share
    /// one browser (the service may have room for only one).
    dials: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl SessionBrowsers {
    pub(crate) fn new(endpoints: Vec<String>) -> SessionBrowsers {
        SessionBrowsers {
            endpoints,
            ..Default::default()
        }
    }

    pub(crate) fn get(&self, user: &str) -> Option<Arc<BrowserHost>> {
        self.hosts.lock().get(user).cloned()
    }

    pub(crate) fn has(&self, user: &str) -> bool {
        self.hosts.lock().contains_key(user)
    }

    pub(crate) fn count(&self) -> usize {
        self.hosts.lock().len()
    }

    /// Keeps `host` for `user` unless a concurrent dial got there first:
    /// the one kept, and the other to close.
    fn settle(
        &self,
        user: &str,
        host: Arc<BrowserHost>,
    ) -> (Arc<BrowserHost>, Option<Arc<BrowserHost>>) {
        let mut hosts = self.hosts.lock();
        match hosts.get(user) {
            Some(kept) => (kept.clone(), Some(host)),
            None => {
                hosts.insert(user.to_string(), host.clone());
                (host, None)
            }
        }
    }

    pub(crate) fn remove(&self, user: &str) -> Option<Arc<BrowserHost>> {
        self.hosts.lock().remove(user)
    }

    pub(crate) fn take_all(&self) -> Vec<Arc<BrowserHost>> {
        self.hosts.lock().drain().map(|(_, host)| host).collect()
    }

    fn dial_lock(&self, user: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.dials
            .lock()
            .entry(user.to_string())
            .or_default()
            .clone()
    }

    fn forget_dial_lock(&self, user: &str) {
        self.dials.lock().remove(user);
    }

    /// The next endpoint in turn, for `user`.
    pub(crate) fn next_endpoint(&self, user: &str) -> Option<String> {
        if self.endpoints.is_empty() {
            return None;
        }
        let at = self.turn.fetch_add(1, Ordering::Relaxed) % self.endpoints.len();
        Some(expand(&self.endpoints[at], user))
    }
}

/// `template` with `{user}` and `{session}` filled in.
pub fn expand(template: &str, user: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(user.as_bytes()).collect();
    let session = crate::ids::random_id("session");
    template
        .replace("{user}", &encoded)
        .replace("{session}", &session)
}

/// Waits between dials of a session browser that went away, the last one
/// repeating.
const REDIAL_BACKOFF: [Duration; 4] = [
    Duration::from_millis(200),
    Duration::from_secs(1),
    Duration::from_secs(3),
    Duration::from_secs(10),
];

impl Engine {
    /// The browser `user`'s tabs live in: their own, or the engine's.
    pub(crate) fn host_of(&self, user: Option<&str>) -> Arc<BrowserHost> {
        user.and_then(|u| self.session_browsers.get(u))
            .unwrap_or_else(|| self.browser.clone())
    }

    /// `user`'s own browser, dialled on first use; `None` without
    /// `--browser-endpoint`.
    pub(crate) async fn session_browser(&self, user: &str) -> Result<Option<Arc<BrowserHost>>> {
        if let Some(host) = self.session_browsers.get(user) {
            return Ok(Some(host));
        }
        let lock = self.session_browsers.dial_lock(user);
        let _dialling = lock.lock().await;
        if let Some(host) = self.session_browsers.get(user) {
            return Ok(Some(host));
        }
        let Some(endpoint) = self.session_browsers.next_endpoint(user) else {
            return Ok(None);
        };
        let Some(engine) = self.me.upgrade() else {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::NotReady,
                "the engine is shutting down",
            ));
        };
        let options = BrowserOptions {
            mode: LaunchMode::Connect(endpoint),
            ..self.browser.launch_options()
        };
        let host = Arc::new(BrowserHost::new(options, self.config.pause));
        engine.launch_into(&host).await?;
        host.set_lifecycle(Lifecycle::Ready);
        let (kept, extra) = self.session_browsers.settle(user, host.clone());
        match extra {
            Some(extra) => {
                extra.set_lifecycle(Lifecycle::ShutDown);
                extra.close(Duration::from_secs(2)).await;
            }
            None => {
                tracing::info!("a session browser was dialled");
                engine.spawn_host_watch(host, Some(user.to_string()));
            }
        }
        Ok(Some(kept))
    }

    /// Ends `user`'s own browser, if they have one.
    pub(crate) async fn close_session_browser(&self, user: &str) {
        self.session_browsers.forget_dial_lock(user);
        if let Some(host) = self.session_browsers.remove(user) {
            host.set_lifecycle(Lifecycle::ShutDown);
            host.close(Duration::from_secs(5)).await;
        }
    }

    /// Every session browser ended (the engine stops or shuts down).
    pub(crate) async fn close_session_browsers(&self, timeout: Duration) {
        for host in self.session_browsers.take_all() {
            host.set_lifecycle(Lifecycle::ShutDown);
            host.close(timeout).await;
        }
    }

    /// Session browsers held now.
    pub fn session_browser_count(&self) -> usize {
        self.session_browsers.count()
    }

    /// `user`'s browser went away: dials again (backing off) and reopens
    /// their tabs under their ids; gives up when the session ends.
    pub(super) async fn restart_session_browser(
        self: &Arc<Self>,
        user: &str,
        host: Arc<BrowserHost>,
    ) {
        if !host.claim_restart() {
            return;
        }
        let mut old_tabs = self.tabs.take_owned(|owner| owner == Some(user));
        old_tabs.extend(self.take_destroyed_before_loss(|owner| owner == Some(user)));
        for tab in &old_tabs {
            tab.session.mark_closed();
        }
        let last_used = self.users.last_used(user);
        let idle = last_used.is_none_or(|at| at.elapsed() > self.config.user_limits.idle_ttl);
        // Nothing to bring back (no tabs, or a session past its idle time):
        // the session ends with its browser instead of holding a new one.
        if old_tabs.is_empty() || idle {
            tracing::info!("a session browser went away with its session");
            host.close(Duration::from_secs(2)).await;
            self.close_user_session(user).await;
            self.close_session_browser(user).await;
            return;
        }
        tracing::warn!("a session browser went away; dialling again");
        self.users.remove(user);
        host.close(Duration::from_secs(2)).await;
        if !self.relaunch_until_up(&host, &REDIAL_BACKOFF).await {
            return;
        }
        host.count_restart();
        for old in &old_tabs {
            if let Err(e) = self.reopen(old).await {
                tracing::warn!(tab = %old.id, "could not reopen the tab: {}", e.message);
            }
        }
        // Carried over, not used: its idle time runs on.
        if let Some(at) = last_used {
            self.users.set_last_used(user, at);
        }
        host.restarted();
        tracing::info!(tabs = old_tabs.len(), "session browser back");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_filled_in_and_taken_in_turn() {
        let browsers = SessionBrowsers::new(vec![
            "ws://a/chromium?token=T&trackingId={user}".into(),
            "ws://b/?session={session}".into(),
        ]);
        assert_eq!(
            browsers.next_endpoint("ann lee").as_deref(),
            Some("ws://a/chromium?token=T&trackingId=ann+lee")
        );
        let first = browsers.next_endpoint("bob").unwrap();
        assert!(first.starts_with("ws://b/?session=session_"), "{first}");
        assert!(browsers.next_endpoint("c").unwrap().starts_with("ws://a/"));
        let second = browsers.next_endpoint("bob").unwrap();
        assert_ne!(first, second, "a fresh {{session}} each dial");
        assert_eq!(SessionBrowsers::default().next_endpoint("x"), None);
    }
}
