//! Per-user isolation: a `userId` puts that user's tabs in their own browser
//! context (cookies, storage and cache apart from everyone else's), and only
//! requests carrying the same `userId` see them. Sessions are bounded in
//! number, tabs and idle time.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, CreateBrowserContextParams};

use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

/// Bounds on per-user sessions.
#[derive(Debug, Clone, Copy)]
pub struct UserLimits {
    pub max_sessions: usize,
    pub max_tabs_per_session: usize,
    /// A session with no request for this long is closed.
    pub idle_ttl: Duration,
}

impl Default for UserLimits {
    fn default() -> Self {
        UserLimits {
            max_sessions: 20,
            max_tabs_per_session: 10,
            idle_ttl: Duration::from_secs(30 * 60),
        }
    }
}

#[derive(Debug)]
pub struct UserSession {
    context: BrowserContextId,
    last_used: Instant,
    /// Requests being served; a busy session is never evicted.
    in_flight: usize,
}

#[derive(Debug, Default)]
pub struct UserSessions {
    sessions: HashMap<String, UserSession>,
}

pub use crate::caller::check_user_id;

/// Marks a user's session busy while a request is served.
pub struct UserActivity {
    engine: Arc<Engine>,
    user: String,
}

impl Drop for UserActivity {
    fn drop(&mut self) {
        let mut users = self.engine.users.lock();
        if let Some(s) = users.sessions.get_mut(&self.user) {
            s.in_flight = s.in_flight.saturating_sub(1);
            s.last_used = Instant::now();
        }
    }
}

impl Engine {
    /// Counts a request against its user's session (if it has one yet).
    pub fn user_activity(self: &Arc<Self>, user: &str) -> UserActivity {
        let mut users = self.users.lock();
        if let Some(s) = users.sessions.get_mut(user) {
            s.in_flight += 1;
            s.last_used = Instant::now();
        }
        UserActivity {
            engine: self.clone(),
            user: user.to_string(),
        }
    }

    /// The user's browser context, created on first use. At the session
    /// limit the longest-idle session is closed to make room.
    /// The browser went away with every context in it.
    pub(crate) fn forget_user_contexts(&self) {
        self.users.lock().sessions.clear();
    }

    pub(crate) async fn user_context(&self, user: &str) -> Result<BrowserContextId> {
        check_user_id(user)?;
        loop {
            let victim = {
                let mut users = self.users.lock();
                if let Some(s) = users.sessions.get_mut(user) {
                    s.last_used = Instant::now();
                    return Ok(s.context.clone());
                }
                if users.sessions.len() < self.config.user_limits.max_sessions {
                    None
                } else {
                    let idle = users
                        .sessions
                        .iter()
                        .filter(|(_, s)| s.in_flight == 0)
                        .min_by_key(|(_, s)| s.last_used)
                        .map(|(name, _)| name.clone());
                    match idle {
                        Some(name) => Some(name),
                        None => {
                            return Err(Error::new(
                                ErrorCode::LimitReached,
                                format!(
                                    "the session limit ({}) is reached and every session is busy; retry later or raise --max-sessions",
                                    self.config.user_limits.max_sessions
                                ),
                            ));
                        }
                    }
                }
            };
            match victim {
                Some(name) => {
                    tracing::info!("session limit reached: closing the longest-idle session");
                    self.close_user_session(&name).await;
                }
                None => break,
            }
        }
        let context = {
            let browser = self.browser.read().await;
            let browser = browser
                .as_ref()
                .ok_or_else(|| Error::new(ErrorCode::NotReady, "no browser"))?;
            let context = browser
                .browser
                .create_browser_context(CreateBrowserContextParams::default())
                .await?;
            // Downloads of a new context are denied unless allowed for it.
            let behavior = SetDownloadBehaviorParams::builder()
                .behavior(SetDownloadBehaviorBehavior::AllowAndName)
                .browser_context_id(context.clone())
                .download_path(self.downloads_dir().display().to_string())
                .events_enabled(true)
                .build()
                .map_err(Error::internal)?;
            browser.browser.execute(behavior).await?;
            context
        };
        let mut users = self.users.lock();
        // Two first requests of one user can race; keep the first context.
        if let Some(s) = users.sessions.get(user) {
            let existing = s.context.clone();
            drop(users);
            self.dispose_context(context);
            return Ok(existing);
        }
        users.sessions.insert(
            user.to_string(),
            UserSession {
                context: context.clone(),
                last_used: Instant::now(),
                in_flight: 0,
            },
        );
        Ok(context)
    }

    fn dispose_context(&self, context: BrowserContextId) {
        let browser = self.browser.clone();
        tokio::spawn(async move {
            let browser = browser.read().await;
            if let Some(b) = browser.as_ref() {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    b.browser.dispose_browser_context(context),
                )
                .await;
            }
        });
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
        let Some(session) = self.users.lock().sessions.remove(user) else {
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
        self.dispose_context(session.context);
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
                let expired: Vec<String> = engine
                    .users
                    .lock()
                    .sessions
                    .iter()
                    .filter(|(_, s)| s.in_flight == 0 && s.last_used.elapsed() > ttl)
                    .map(|(name, _)| name.clone())
                    .collect();
                for user in expired {
                    tracing::info!("closing a session idle for more than {} s", ttl.as_secs());
                    engine.close_user_session(&user).await;
                }
            }
        });
    }

    /// Users with a session, for `GET /sessions`-style listings.
    pub fn user_sessions(&self) -> Vec<(String, usize, u64)> {
        let users = self.users.lock();
        let tabs = self.all_tabs();
        users
            .sessions
            .iter()
            .map(|(name, s)| {
                let count = tabs
                    .iter()
                    .filter(|t| t.owner().as_deref() == Some(name.as_str()))
                    .count();
                (name.clone(), count, s.last_used.elapsed().as_secs())
            })
            .collect()
    }
}
