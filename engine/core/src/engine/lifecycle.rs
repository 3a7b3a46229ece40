//! The browser's life as the engine sees it: started (or attached) with
//! its first tab, stopped and started again on request, shut down. The
//! process itself is `BrowserHost`'s; a browser that dies on its own comes
//! back through `restart.rs`.

use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use crate::browser::{BrowserOptions, LaunchMode};
use crate::browser_host::{BrowserHost, BrowserStatus, Lifecycle};
use crate::error::{Error, ErrorCode, Result};

impl Engine {
    /// Launches (or attaches to) the browser and opens the first tab.
    pub async fn start(self: &Arc<Self>) -> Result<()> {
        let result = self.start_inner().await;
        if let Err(e) = &result {
            self.browser
                .set_lifecycle(Lifecycle::Failed(e.message.clone()));
            // A browser service may come up after the engine (Compose and
            // Kubernetes start things in no set order): keep dialling.
            if matches!(self.browser.launch_options().mode, LaunchMode::Connect(_)) {
                self.spawn_start_retries();
            }
        }
        result
    }

    /// Dials a browser service that was not there at start, backing off,
    /// until one answers or someone starts, stops or shuts the browser.
    fn spawn_start_retries(self: &Arc<Self>) {
        const BACKOFF: [Duration; 4] = [
            Duration::from_secs(1),
            Duration::from_secs(2),
            Duration::from_secs(5),
            Duration::from_secs(10),
        ];
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            for attempt in 0.. {
                tokio::time::sleep(BACKOFF[attempt.min(BACKOFF.len() - 1)]).await;
                let Some(engine) = weak.upgrade() else { return };
                if !matches!(engine.browser.lifecycle(), Lifecycle::Failed(_))
                    || engine.browser.claim_start().is_err()
                {
                    return;
                }
                match engine.start_inner().await {
                    Ok(()) => return,
                    Err(e) => {
                        tracing::warn!("the browser service still does not answer: {}", e.message);
                        engine
                            .browser
                            .set_lifecycle(Lifecycle::Failed(e.message.clone()));
                    }
                }
            }
        });
    }

    async fn start_inner(self: &Arc<Self>) -> Result<()> {
        std::fs::create_dir_all(&self.config.session_dir).map_err(|e| {
            Error::new(
                ErrorCode::BrowserInitFailed,
                format!("session dir {}: {e}", self.config.session_dir.display()),
            )
        })?;
        self.launch_browser().await?;
        self.open_tab("about:blank", true).await?;
        if !self
            .background
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            self.spawn_session_reaper();
            self.spawn_browser_watch();
            self.follow_interceptors();
        }
        self.browser.set_lifecycle(Lifecycle::Ready);
        tracing::info!("browser ready");
        Ok(())
    }

    /// The engine without a browser until `start_browser` (`--no-browser`).
    pub fn without_browser(&self) {
        self.browser.set_lifecycle(Lifecycle::Stopped);
    }

    /// Whether a browser is up (or coming up).
    pub fn browser_running(&self) -> bool {
        self.browser.running()
    }

    /// Starts a browser when none runs, launched as `options` say (default:
    /// as the engine was configured, or as the last start asked).
    pub async fn start_browser(self: &Arc<Self>, options: Option<BrowserOptions>) -> Result<()> {
        self.browser.claim_start()?;
        if let Some(options) = options {
            self.browser.set_launch_options(options);
        }
        self.start().await
    }

    /// Ends the browser and its tabs but keeps the engine: any operation
    /// that needs a browser answers "not running" until `start_browser`.
    pub async fn stop_browser(&self) {
        if self.browser.claim_stop() {
            self.close_browser(Duration::from_secs(5)).await;
        }
    }

    /// The browser, its tabs and its contexts gone; its profile too when
    /// the engine made it.
    async fn close_browser(&self, timeout: Duration) {
        let old_tabs = self.tabs.take_all(true);
        for tab in &old_tabs {
            tab.session.mark_closed();
        }
        self.forget_user_contexts();
        self.close_session_browsers(timeout).await;
        self.browser.close(timeout).await;
        self.browser.remove_owned_profile();
    }

    /// How the browser is (or will be) launched.
    pub fn launch_options(&self) -> BrowserOptions {
        self.browser.launch_options()
    }

    /// Starts (or attaches to) the browser with the engine's options and
    /// follows its events.
    pub(super) async fn launch_browser(self: &Arc<Self>) -> Result<()> {
        let host = self.browser.clone();
        self.launch_into(&host).await
    }

    /// Starts (or dials) `host`'s browser and follows its events.
    pub(super) async fn launch_into(self: &Arc<Self>, host: &BrowserHost) -> Result<()> {
        let process = host.launch(&self.downloads_dir()).await?;
        let listener = self.watch_browser_events(&process.browser).await?;
        if let Err(e) = self.enable_navigation_fence(&process.browser).await {
            listener.abort();
            return Err(e);
        }
        host.install(process, listener).await;
        Ok(())
    }

    pub fn status(&self) -> BrowserStatus {
        self.browser.status()
    }

    pub(super) fn ensure_ready(&self) -> Result<()> {
        self.browser.ensure_ready()
    }

    /// Ok when the browser the caller's tabs live in is ready.
    pub(super) fn ensure_ready_for(&self, caller: &crate::caller::Caller) -> Result<()> {
        self.host_of(caller.user_id()).ensure_ready()
    }

    /// Operations in flight, and whether the engine is draining.
    pub fn drain(&self) -> &Arc<crate::drain::Drain> {
        &self.drain
    }

    /// Tabs replaced after their page stopped answering, so far.
    pub fn tab_repairs(&self) -> u64 {
        self.repaired.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the engine and its browser hold, and the bound.
    pub fn memory(&self) -> (u64, u64) {
        (self.memory.used_bytes(), self.memory.limit_bytes())
    }

    /// Users with a browser context now.
    pub fn user_count(&self) -> usize {
        self.users.idle_seconds().len()
    }

    /// Whether a balancer should send this engine new sessions, and if
    /// not, why not.
    pub fn readiness(&self) -> Readiness {
        let status = self.status();
        let mut reasons = Vec::new();
        if self.drain.is_draining() {
            reasons.push("draining".to_string());
        }
        if !status.ready {
            reasons.push(format!("browser {}", status.state));
        }
        if let Some(over) = self.memory.exceeded() {
            reasons.push(over);
        }
        Readiness {
            ready: reasons.is_empty(),
            engine: self.config.engine_id.to_string(),
            reasons,
            in_flight: self.drain.in_flight(),
            tabs: self.all_tabs().len(),
            session_browsers: self.session_browser_count(),
        }
    }

    pub async fn shutdown(&self, timeout: Duration) {
        self.browser.set_lifecycle(Lifecycle::ShutDown);
        self.close_browser(timeout).await;
    }
}

/// `GET /readyz`: ready for new sessions, or the reasons not.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Readiness {
    pub ready: bool,
    /// This engine's id (`--engine-id`).
    pub engine: String,
    /// Why not ready: `draining`, `browser starting`, ...
    pub reasons: Vec<String>,
    /// Operations running now.
    pub in_flight: usize,
    pub tabs: usize,
    /// Users' own browsers from `--browser-endpoint`.
    pub session_browsers: usize,
}
