//! Per-user isolation: a `userId` puts that user's tabs in their own browser
//! context (cookies, storage and cache apart from everyone else's), and only
//! requests carrying the same `userId` see them. Sessions are bounded in
//! number, tabs and idle time. What the sessions are and which one goes is
//! the `Users` component's (`wabp-model`); here the engine makes and
//! disposes of contexts and closes tabs as it decides.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::CloseTargetParams;

pub use crate::caller::check_user_id;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
pub use wabp_model::users::{Room, UserLimits};

/// The users and their browser contexts.
pub type Users = wabp_model::users::Users<BrowserContextId>;
/// Marks a user's session busy while a request is served.
pub type UserActivity = wabp_model::users::UserActivity<BrowserContextId>;

impl Engine {
    /// Counts a request against its user's session (if it has one yet).
    pub fn user_activity(&self, user: &str) -> UserActivity {
        UserActivity::begin(&self.users, user)
    }

    /// The browser went away with every context in it.
    pub(crate) fn forget_user_contexts(&self) {
        self.users.clear();
    }

    /// The user's browser context, created on first use. At the session
    /// limit the longest-idle session is closed to make room.
    pub(crate) async fn user_context(&self, user: &str) -> Result<BrowserContextId> {
        check_user_id(user)?;
        loop {
            match self.users.room_for(user)? {
                Room::Existing(context) => return Ok(context),
                Room::Free => break,
                Room::Evict(idle) => {
                    tracing::info!("session limit reached: closing the longest-idle session");
                    self.close_user_session(&idle).await;
                }
            }
        }
        // With `--browser-endpoint`, in a browser of the user's own.
        let host = match self.session_browser(user).await? {
            Some(host) => host,
            None => self.browser.clone(),
        };
        let context = host.new_context(Some(&self.downloads_dir())).await?;
        let (kept, extra) = self.users.settle(user, context);
        if let Some(extra) = extra {
            host.dispose_context_later(extra);
        }
        Ok(kept)
    }

    /// Refuses a new tab past the per-session limit.
    pub(crate) fn check_tab_limit(&self, user: &str) -> Result<()> {
        let owned = self
            .all_tabs()
            .iter()
            .filter(|t| t.owner().as_deref() == Some(user))
            .count();
        let limit = self.config.user_limits.max_tabs_per_session;
        if owned >= limit {
            return Err(Error::new(
                ErrorCode::LimitReached,
                format!(
                    "this user already has {owned} tabs, the per-session limit; close one first"
                ),
            ));
        }
        Ok(())
    }

    /// Closes a user's tabs and browser context.
    pub async fn close_user_session(&self, user: &str) {
        let Some(context) = self.users.remove(user) else {
            return;
        };
        for tab in self
            .all_tabs()
            .into_iter()
            .filter(|t| t.owner().as_deref() == Some(user))
        {
            self.forget_tab(&tab.id);
            tab.emit(crate::events::TabSignal::Closed {
                reason: "session_closed",
            });
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                tab.session
                    .execute(CloseTargetParams::new(tab.target_id.clone())),
            )
            .await;
        }
        self.host_of(Some(user)).dispose_context_later(context);
        self.close_session_browser(user).await;
    }

    /// Closes sessions idle for longer than the limit; runs until the engine
    /// is dropped.
    pub fn spawn_session_reaper(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let period = (self.config.user_limits.idle_ttl / 4)
            .clamp(Duration::from_secs(1), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(engine) = weak.upgrade() else { return };
                let ttl = engine.config.user_limits.idle_ttl;
                for user in engine.users.expired() {
                    tracing::info!("closing a session idle for more than {} s", ttl.as_secs());
                    engine.close_user_session(&user).await;
                }
            }
        });
    }

    /// Users with a session, for `GET /sessions`-style listings.
    pub fn user_sessions(&self) -> Vec<(String, usize, u64)> {
        let tabs = self.all_tabs();
        self.users
            .idle_seconds()
            .into_iter()
            .map(|(name, idle)| {
                let count = tabs
                    .iter()
                    .filter(|t| t.owner().as_deref() == Some(name.as_str()))
                    .count();
                (name, count, idle)
            })
            .collect()
    }
}
