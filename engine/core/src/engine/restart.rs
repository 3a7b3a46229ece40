//! A browser that comes back. Every half second a watch task checks that
//! the browser's connection is open and its process runs (or, attached with
//! `--connect`, that it answers a CDP round trip: three misses in a row);
//! otherwise it died. The engine then says so (`GET /browser/status`:
//! `restarting`), starts a new browser with the same options and profile
//! (or reconnects, with `--connect`, backing off), and reopens every tab
//! under its old id at its last URL, each noting a `browser_restarted` event
//! for its next action. The engine never exits on its own.

use super::Engine;
use crate::browser_host::{BrowserHost, Lifecycle};
use crate::error::Result;
use crate::events;
use crate::events::TabEvent;
use crate::tab::Tab;
use std::sync::Arc;
use std::time::Duration;

const PROBE_EVERY: Duration = Duration::from_millis(500);
const PROBE_LIMIT: Duration = Duration::from_secs(3);
/// Waits between attempts to start a new browser, the last one repeating.
const BACKOFF: [Duration; 4] = [
    Duration::from_millis(200),
    Duration::from_secs(1),
    Duration::from_secs(3),
    Duration::from_secs(10),
];

impl Engine {
    pub(super) fn spawn_browser_watch(self: &Arc<Self>) {
        self.spawn_host_watch(self.browser.clone(), None);
    }

    /// Watches `host` (the engine's browser, or `user`'s own) until it is
    /// shut down, restarting it when it dies.
    pub(super) fn spawn_host_watch(self: &Arc<Self>, host: Arc<BrowserHost>, user: Option<String>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut misses = 0;
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                let Some(engine) = weak.upgrade() else { return };
                match host.lifecycle() {
                    Lifecycle::Ready => {}
                    Lifecycle::ShutDown => return,
                    _ => continue,
                }
                let (alive, allowed_misses) = host.probe(PROBE_LIMIT).await.unwrap_or((false, 1));
                misses = if alive { 0 } else { misses + 1 };
                if misses >= allowed_misses {
                    misses = 0;
                    match &user {
                        None => engine.restart_browser().await,
                        Some(user) => engine.restart_session_browser(user, host.clone()).await,
                    }
                }
            }
        });
    }

    /// Replaces a dead browser and reopens its tabs; retries with backoff
    /// until a browser is back (or the engine is shut down).
    async fn restart_browser(self: &Arc<Self>) {
        if !self.browser.claim_restart() {
            return;
        }
        tracing::error!("the browser stopped answering; starting a new one");
        // Users with browsers of their own keep their tabs and contexts.
        let in_this_browser =
            |owner: Option<&str>| !owner.is_some_and(|u| self.session_browsers.has(u));
        let mut old_tabs = self.tabs.take_owned(in_this_browser);
        old_tabs.extend(self.take_destroyed_before_loss(in_this_browser));
        for tab in &old_tabs {
            tab.session.mark_closed();
        }
        self.users.retain(|user| self.session_browsers.has(user));
        self.browser.close(Duration::from_secs(2)).await;
        let host = self.browser.clone();
        if !self.relaunch_until_up(&host, &BACKOFF).await {
            return;
        }
        self.browser.count_restart();
        for old in &old_tabs {
            if let Err(e) = self.reopen(old).await {
                tracing::warn!(tab = %old.id, "could not reopen the tab: {}", e.message);
            }
        }
        if self.tabs.is_empty()
            && let Err(e) = self.open_tab("about:blank", true).await
        {
            tracing::warn!("no tab after the restart: {}", e.message);
        }
        self.browser.restarted();
        tracing::info!(tabs = old_tabs.len(), "browser restarted");
    }

    /// Starts (or dials) `host`'s browser again, waiting `backoff` between
    /// attempts (the last one repeating); false when `host` was shut down
    /// meanwhile.
    pub(super) async fn relaunch_until_up(
        self: &Arc<Self>,
        host: &BrowserHost,
        backoff: &[Duration],
    ) -> bool {
        let mut attempt = 0;
        loop {
            if host.is_shut_down() {
                return false;
            }
            match self.launch_into(host).await {
                Ok(()) => return true,
                Err(e) => {
                    let wait = backoff[attempt.min(backoff.len() - 1)];
                    attempt += 1;
                    tracing::warn!(
                        "starting or dialling a browser failed ({}); again in {wait:?}",
                        e.message
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// A tab of the dead browser, again: same id, owner and opener, at its
    /// last URL.
    pub(super) async fn reopen(&self, old: &Arc<Tab>) -> Result<()> {
        let owner = old.owner();
        let context = match owner.as_deref() {
            Some(user) => Some(self.user_context(user).await?),
            None => None,
        };
        let tab = self
            .new_tab(
                old.id.clone(),
                context,
                owner.as_deref(),
                old.opener.clone(),
            )
            .await?;
        self.tabs.push(tab.clone());
        let url = old.url();
        if !url.is_empty()
            && url != "about:blank"
            && crate::rules::url::check_navigation_url(&url, &self.config.extra_schemes).is_ok()
            && let Err(e) = self.first_load(&tab, Some(&url)).await
        {
            tracing::warn!(tab = %tab.id, "the reopened tab could not load its page: {}", e.message);
        }
        tab.note(TabEvent::BrowserRestarted(events::BrowserRestarted {
            tab_id: tab.id.clone(),
            url,
        }));
        Ok(())
    }
}
