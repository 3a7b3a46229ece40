//! The browser the engine holds, as a component: its process or connection
//! (`browser.rs` launches and attaches), where it is in its life (starting,
//! ready, restarting, stopped), how the next one is launched, what it was
//! granted (begin-frame control, sandbox), how often it was restarted, and
//! the browser contexts made in it. Behind its own locks; it never sees the
//! engine or a tab. The engine decides when to launch, restart and close;
//! every command that is the browser's rather than a tab's goes through
//! here, and answers `NOT_READY` when there is no browser.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams, TargetId,
};
use chromiumoxide::types::Command;
use parking_lot::{Mutex, RwLock};
use serde::Serialize;

use crate::browser::{BrowserOptions, BrowserProcess, LaunchMode, Sandbox};
use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::navigator::Navigator;
use crate::tab::frames::DriverKind;

/// Where the browser is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Initializing,
    Ready,
    /// The browser died; a new one is being started.
    Restarting,
    Failed(String),
    /// No browser, by request (`--no-browser`, the browser tool's `stop`):
    /// `start_browser` brings one.
    Stopped,
    ShutDown,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BrowserStatus {
    pub ready: bool,
    pub state: String,
    pub components: Components,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub frame_driver: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Times the browser died and was started again.
    pub restarts: u32,
    /// Whether Chromium runs in its sandbox (`on: null` when attached).
    pub sandbox: Sandbox,
    /// Whether cross-site frames render in processes of their own, followed
    /// through their own targets.
    pub site_isolation: bool,
}

#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
pub struct Components {
    pub http_server: bool,
    pub browser_window: bool,
    pub devtools: bool,
}

/// The browser the engine holds.
pub(crate) struct BrowserHost {
    /// Pages are frozen between actions (`--no-pause` turns it off).
    pause: bool,
    /// How the next browser is launched: the engine's options, or what the
    /// last start asked for.
    launch: RwLock<BrowserOptions>,
    lifecycle: RwLock<Lifecycle>,
    /// The browser granted begin-frame control (headless-shell, launched
    /// here).
    begin_frame_control: AtomicBool,
    executable: RwLock<Option<PathBuf>>,
    sandbox: RwLock<Sandbox>,
    restarts: AtomicU32,
    /// The process or connection. An async lock: commands are sent while
    /// it is read, and a restart waits for them before it replaces it.
    process: Arc<tokio::sync::RwLock<Option<BrowserProcess>>>,
    /// The engine's listener for the browser's own events, ended with it.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn no_browser() -> Error {
    Error::new(ErrorCode::NotReady, "no browser is running").then(NextStep::StartBrowser)
}

impl BrowserHost {
    pub(crate) fn new(options: BrowserOptions, pause: bool) -> BrowserHost {
        BrowserHost {
            pause,
            launch: RwLock::new(options),
            lifecycle: RwLock::new(Lifecycle::Initializing),
            begin_frame_control: AtomicBool::new(false),
            executable: RwLock::new(None),
            sandbox: RwLock::default(),
            restarts: AtomicU32::new(0),
            process: Arc::new(tokio::sync::RwLock::new(None)),
            listener: Mutex::new(None),
        }
    }

    // ---- lifecycle ----

    pub(crate) fn lifecycle(&self) -> Lifecycle {
        self.lifecycle.read().clone()
    }

    pub(crate) fn set_lifecycle(&self, lifecycle: Lifecycle) {
        *self.lifecycle.write() = lifecycle;
    }

    /// Whether a browser is up (or coming up).
    pub(crate) fn running(&self) -> bool {
        !matches!(
            *self.lifecycle.read(),
            Lifecycle::Stopped | Lifecycle::ShutDown | Lifecycle::Failed(_)
        )
    }

    /// Claims the start of a browser when none runs: `Initializing` from
    /// `Stopped` or `Failed`.
    pub(crate) fn claim_start(&self) -> Result<()> {
        let mut lifecycle = self.lifecycle.write();
        match &*lifecycle {
            Lifecycle::Stopped | Lifecycle::Failed(_) => {
                *lifecycle = Lifecycle::Initializing;
                Ok(())
            }
            Lifecycle::ShutDown => Err(Error::new(ErrorCode::NotReady, "the engine was shut down")),
            _ => Err(Error::new(
                ErrorCode::Conflict,
                "the browser is already running; stop it first",
            )),
        }
    }

    /// Moves to `to` unless already there or shut down; whether it moved.
    pub(crate) fn claim_stop(&self) -> bool {
        let mut lifecycle = self.lifecycle.write();
        if matches!(*lifecycle, Lifecycle::ShutDown | Lifecycle::Stopped) {
            return false;
        }
        *lifecycle = Lifecycle::Stopped;
        true
    }

    /// Claims the restart of a dead browser: only a ready one restarts.
    pub(crate) fn claim_restart(&self) -> bool {
        let mut lifecycle = self.lifecycle.write();
        if !matches!(*lifecycle, Lifecycle::Ready) {
            return false;
        }
        *lifecycle = Lifecycle::Restarting;
        true
    }

    /// A new browser is up after a restart: counted at once (the tabs
    /// reopen after).
    pub(crate) fn count_restart(&self) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
    }

    /// A restart done, its tabs reopened: ready again (unless stopped or
    /// shut down meanwhile).
    pub(crate) fn restarted(&self) {
        let mut lifecycle = self.lifecycle.write();
        if matches!(*lifecycle, Lifecycle::Restarting) {
            *lifecycle = Lifecycle::Ready;
        }
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        matches!(*self.lifecycle.read(), Lifecycle::ShutDown)
    }

    /// Ok when the browser is ready; else what it is doing instead.
    pub(crate) fn ensure_ready(&self) -> Result<()> {
        match &*self.lifecycle.read() {
            Lifecycle::Ready => Ok(()),
            Lifecycle::Initializing => Err(Error::new(
                ErrorCode::NotReady,
                "the browser is still starting; ask its status until it is ready",
            )
            .then(NextStep::BrowserStatus)),
            Lifecycle::Restarting => Err(Error::new(
                ErrorCode::NotReady,
                "the browser died and is restarting; ask its status until it is ready",
            )
            .then(NextStep::BrowserStatus)),
            Lifecycle::Failed(e) => Err(Error::new(
                ErrorCode::BrowserInitFailed,
                format!("the browser failed to start: {e}"),
            )),
            Lifecycle::Stopped => Err(Error::new(
                ErrorCode::NotReady,
                "the browser is not running; start it",
            )
            .then(NextStep::StartBrowser)),
            Lifecycle::ShutDown => {
                Err(Error::new(ErrorCode::NotReady, "the browser was shut down"))
            }
        }
    }

    pub(crate) fn status(&self) -> BrowserStatus {
        let lifecycle = self.lifecycle();
        let (ready, state, message) = match &lifecycle {
            Lifecycle::Initializing => (
                false,
                "initializing",
                Some("Waiting for browser window".to_string()),
            ),
            Lifecycle::Ready => (true, "ready", None),
            Lifecycle::Restarting => (
                false,
                "restarting",
                Some(match &self.launch_options().mode {
                    LaunchMode::Connect(endpoint) => format!(
                        "the browser at {} went away; reconnecting (with backoff), then the tabs reopen",
                        crate::remote::shown(endpoint)
                    ),
                    _ => "the browser died; a new one is starting and the tabs reopen".to_string(),
                }),
            ),
            Lifecycle::Failed(e) => (false, "failed", Some(e.clone())),
            Lifecycle::Stopped => (
                false,
                "stopped",
                Some("no browser is running; start one".to_string()),
            ),
            Lifecycle::ShutDown => (
                false,
                "shutdown",
                Some("the browser was shut down".to_string()),
            ),
        };
        BrowserStatus {
            ready,
            state: state.into(),
            components: Components {
                http_server: true,
                browser_window: ready,
                devtools: ready,
            },
            message,
            frame_driver: self.default_driver().name().into(),
            executable: self.executable_path(),
            restarts: self.restarts.load(Ordering::Relaxed),
            sandbox: self.sandbox.read().clone(),
            site_isolation: self.launch_options().site_isolation,
        }
    }

    // ---- launch and close ----

    /// How the browser is (or will be) launched.
    pub(crate) fn launch_options(&self) -> BrowserOptions {
        self.launch.read().clone()
    }

    pub(crate) fn set_launch_options(&self, options: BrowserOptions) {
        *self.launch.write() = options;
    }

    /// Starts (or attaches to) a browser with the launch options, its
    /// downloads saved into `downloads`. Not installed yet: the engine
    /// attaches its listeners to it first ([`BrowserHost::install`]).
    pub(crate) async fn launch(&self, downloads: &Path) -> Result<BrowserProcess> {
        let mut options = self.launch_options();
        options.begin_frame_control = self.pause && options.begin_frame_control;
        let process = BrowserProcess::start(&options).await?;
        self.begin_frame_control
            .store(process.begin_frame_control, Ordering::Relaxed);
        *self.executable.write() = process.executable.clone();
        *self.sandbox.write() = process.sandbox.clone();
        std::fs::create_dir_all(downloads).map_err(|e| {
            Error::new(
                ErrorCode::BrowserInitFailed,
                format!("download dir {}: {e}", downloads.display()),
            )
        })?;
        process
            .browser
            .execute(download_behavior(downloads, None)?)
            .await
            .map_err(crate::cdp_error)?;
        Ok(process)
    }

    /// The launched browser is the one, with the engine's `listener` on it.
    pub(crate) async fn install(
        &self,
        process: BrowserProcess,
        listener: tokio::task::JoinHandle<()>,
    ) {
        if let Some(old) = self.listener.lock().replace(listener) {
            old.abort();
        }
        *self.process.write().await = Some(process);
    }

    /// Ends the browser (within `timeout`) and its listener. The profile
    /// stays: a restart starts the next browser on it.
    pub(crate) async fn close(&self, timeout: Duration) {
        if let Some(listener) = self.listener.lock().take() {
            listener.abort();
        }
        if let Some(process) = self.process.write().await.take() {
            process.shutdown(timeout).await;
        }
    }

    /// Removes the browser's profile when the engine made it.
    pub(crate) fn remove_owned_profile(&self) {
        let launch = self.launch_options();
        if launch.owned_profile && matches!(launch.mode, LaunchMode::Auto | LaunchMode::Binary(_)) {
            let _ = std::fs::remove_dir_all(&launch.user_data_dir);
        }
    }

    /// Whether the browser answers (`limit` for the probe) and how many
    /// misses in a row count as dead; `None` without a browser.
    pub(crate) async fn probe(&self, limit: Duration) -> Option<(bool, u32)> {
        let process = self.process.read().await;
        let process = process.as_ref()?;
        Some((
            process.alive(limit).await,
            // An attached browser may be slow across a network: three
            // misses, unless its socket is known to be gone.
            if process.launched_here() || process.connection_lost() {
                1
            } else {
                3
            },
        ))
    }

    // ---- what it was granted ----

    /// The driver tabs the engine opens run under.
    pub(crate) fn default_driver(&self) -> DriverKind {
        if !self.pause {
            DriverKind::FreeRunning
        } else if self.begin_frame_control.load(Ordering::Relaxed) {
            DriverKind::Deterministic
        } else {
            DriverKind::Compositor
        }
    }

    /// The browser's executable, when the engine launched it.
    pub(crate) fn executable_path(&self) -> Option<String> {
        self.executable
            .read()
            .as_ref()
            .map(|p| p.display().to_string())
    }

    // ---- commands ----

    /// A browser-wide command (not a tab's).
    pub(crate) async fn execute<C: Command>(&self, command: C) -> Result<C::Response> {
        let process = self.process.read().await;
        let process = process.as_ref().ok_or_else(no_browser)?;
        Ok(process
            .browser
            .execute(command)
            .await
            .map_err(crate::cdp_error)?
            .result)
    }

    /// The connection tabs' navigations go over.
    pub(crate) async fn navigator(&self) -> Result<Arc<Navigator>> {
        let process = self.process.read().await;
        Ok(process.as_ref().ok_or_else(no_browser)?.navigator.clone())
    }

    /// A new page (within 10 s), with the navigator it navigates over.
    /// `opened` hears its target id as soon as the browser names it.
    pub(crate) async fn new_page(
        &self,
        params: CreateTargetParams,
        opened: impl FnOnce(&TargetId),
    ) -> Result<(Page, Arc<Navigator>)> {
        let process = self.process.read().await;
        let process = process.as_ref().ok_or_else(no_browser)?;
        let page = crate::tab::bounded(Duration::from_secs(10), "opening a page", async {
            process
                .browser
                .new_page(params)
                .await
                .map_err(crate::cdp_error)
        })
        .await?;
        opened(page.target_id());
        Ok((page, process.navigator.clone()))
    }

    /// The page of a target the browser opened itself (a popup); `None`
    /// without a browser.
    pub(crate) async fn page_of(&self, target: TargetId) -> Option<Result<(Page, Arc<Navigator>)>> {
        let process = self.process.read().await;
        let process = process.as_ref()?;
        Some(
            process
                .browser
                .get_page(target)
                .await
                .map(|page| (page, process.navigator.clone()))
                .map_err(crate::cdp_error),
        )
    }

    // ---- contexts ----

    /// A new browser context: its own cookies, storage and cache. Its
    /// downloads are saved into `downloads` when given, else denied (the
    /// browser's default for a new context).
    pub(crate) async fn new_context(&self, downloads: Option<&Path>) -> Result<BrowserContextId> {
        let process = self.process.read().await;
        let process = process.as_ref().ok_or_else(no_browser)?;
        let context = process
            .browser
            .create_browser_context(CreateBrowserContextParams::default())
            .await
            .map_err(crate::cdp_error)?;
        if let Some(downloads) = downloads {
            let allowed = process
                .browser
                .execute(download_behavior(downloads, Some(context.clone()))?)
                .await;
            if let Err(e) = allowed {
                let _ = process.browser.dispose_browser_context(context).await;
                return Err(crate::cdp_error(e));
            }
        }
        Ok(context)
    }

    /// Disposes of a context (within 5 s), its pages and cookies with it.
    pub(crate) async fn dispose_context(&self, context: BrowserContextId) {
        let process = self.process.read().await;
        if let Some(process) = process.as_ref() {
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                process.browser.dispose_browser_context(context),
            )
            .await;
        }
    }

    /// [`BrowserHost::dispose_context`] in a task of its own, for callers
    /// that must not wait (under a lock, or dropping).
    pub(crate) fn dispose_context_later(&self, context: BrowserContextId) {
        let process = self.process.clone();
        tokio::spawn(async move {
            let process = process.read().await;
            if let Some(process) = process.as_ref() {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    process.browser.dispose_browser_context(context),
                )
                .await;
            }
        });
    }
}

/// Downloads saved into `folder` under their guid, with progress events;
/// for the whole browser, or one context.
fn download_behavior(
    folder: &Path,
    context: Option<BrowserContextId>,
) -> Result<SetDownloadBehaviorParams> {
    let mut builder = SetDownloadBehaviorParams::builder()
        .behavior(SetDownloadBehaviorBehavior::AllowAndName)
        .download_path(folder.display().to_string())
        .events_enabled(true);
    if let Some(context) = context {
        builder = builder.browser_context_id(context);
    }
    builder.build().map_err(Error::internal)
}
