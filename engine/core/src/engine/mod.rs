//! The engine: one browser, its tabs, the plugin registry and the core
//! operations the catalogue calls. `impl Engine` lives here and in the
//! submodules: `users` (per-user contexts and limits), `oneshot` (captures
//! in a context of their own), `observe` (snapshots and browser-use state).

pub mod answers;
pub mod browser_info;
pub mod cookies;
mod downloads;
mod fence;
pub mod intercept;
mod network;
pub mod observe;
pub mod oneshot;
mod prompts;
mod repair;
mod restart;
mod tab_list;
pub mod users;

pub use network::CurlRequest;

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::StopLoadingParams;
use chromiumoxide::cdp::browser_protocol::target::{
    ActivateTargetParams, CloseTargetParams, CreateTargetParams, GetTargetInfoParams, TargetId,
};
use serde::Serialize;
use serde_json::{Value, json};

use chromiumoxide::cdp::browser_protocol::browser::{
    CancelDownloadParams, DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::target::{EventTargetCreated, EventTargetDestroyed};
use futures::StreamExt;

use crate::action::record::ActionLog;
use crate::action::{
    ActionKind, ActionOptions, Envelope, NavigationHint, ScreenshotArea, ScrollSource,
};
use crate::browser::BrowserOptions;
use crate::browser_host::{BrowserHost, Lifecycle};
pub use crate::browser_host::{BrowserStatus, Components};
use crate::caller::Caller;
use crate::capture::{CaptureOptions, Screenshot};
use crate::clock::now_ms;
use crate::downloads::{Download, DownloadState};
use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::events::TabSignal;
use crate::events::{self, TabEvent};
use crate::plugin::{ActionContext, PageHost, PluginRegistry};
use crate::tab::Tab;
use crate::tab::capture::take_screenshot;
use crate::tab::frames::{DriverKind, ExecutionState};

/// An action's dispatch on a real tab.
type Dispatch = crate::action::Dispatch<Tab>;

/// How long an operation outside the action loop waits for the tab's turn.
pub(crate) const TURN_LIMIT: Duration = Duration::from_secs(60);

/// How long a new tab's first page may take to load before it is frozen.
/// How long a new tab's creation waits for windows its first page opened
/// to be attached (only while one is being attached).
const POPUPS_OF_FIRST_LOAD: Duration = Duration::from_secs(3);
/// How long `execute` waits for a popup its script opened to be attached.
const EXECUTE_POPUP_LIMIT: Duration = Duration::from_secs(3);
const FIRST_LOAD_LIMIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub browser: BrowserOptions,
    /// Where history, downloads and screenshots go.
    pub session_dir: PathBuf,
    /// Freeze pages between actions (`--no-pause` turns it off).
    pub pause: bool,
    /// Bounds on per-user (`userId`) sessions.
    pub user_limits: users::UserLimits,
    /// URL schemes tabs may open besides http, https, data: and about:blank.
    pub extra_schemes: Vec<String>,
    /// Where file choosers may take files from.
    pub uploads: UploadRoots,
    /// A download past this many bytes is stopped and marked failed.
    pub max_download_bytes: u64,
    /// The `--policy` file as JSON: when set, every document a page
    /// requests by itself is put to the policies too (`engine/fence.rs`).
    pub navigation_fence: Option<Arc<str>>,
    /// Keep cookie and authorization values and secret-named body fields in
    /// every view of network calls (`--record-secrets`); else redacted.
    pub record_secrets: bool,
}

/// The folders a file chooser may upload from (`--upload-dir`), besides the
/// session's own `uploads/`.
#[derive(Debug, Clone, Default)]
pub struct UploadRoots {
    pub dirs: Vec<PathBuf>,
    /// Any file the engine can read (only for a loopback engine without
    /// tokens: its one user is the machine's).
    pub anywhere: bool,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum InputMode {
    Agent,
    Human,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TabSummary {
    pub id: String,
    pub url: String,
    pub title: String,
    pub active: bool,
    /// Pinned tabs lead the list.
    pub pinned: bool,
    /// Its media elements play silently.
    pub muted: bool,
}

/// The image format of a plain screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    /// With its quality, 1 to 100.
    Jpeg(u8),
    Webp,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg(_) => "jpeg",
            ImageFormat::Webp => "webp",
        }
    }

    fn encode(self, pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>> {
        match self {
            ImageFormat::Png => pixmap
                .encode_png()
                .map_err(|e| Error::internal(format!("PNG encoding: {e}"))),
            ImageFormat::Webp => crate::capture::encode_webp(pixmap),
            ImageFormat::Jpeg(quality) => {
                // Screenshots are opaque: premultiplied RGBA is RGB as is.
                let rgb: Vec<u8> = pixmap
                    .data()
                    .chunks_exact(4)
                    .flat_map(|p| [p[0], p[1], p[2]])
                    .collect();
                let (w, h) = (pixmap.width(), pixmap.height());
                let (Ok(w), Ok(h)) = (u16::try_from(w), u16::try_from(h)) else {
                    return Err(Error::invalid(format!(
                        "a {w}x{h} image is too large for JPEG (65535 pixels a side)"
                    )));
                };
                let mut out = Vec::new();
                jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100))
                    .encode(&rgb, w, h, jpeg_encoder::ColorType::Rgb)
                    .map_err(|e| Error::internal(format!("JPEG encoding: {e}")))?;
                Ok(out)
            }
        }
    }
}

/// Pages the engine opens itself: how many are being opened now, and the
/// last ones opened.
#[derive(Debug, Default)]
struct OwnPages {
    opening: usize,
    opened: std::collections::VecDeque<TargetId>,
}

/// A page the engine is opening; see [`Engine::own_page_opening`].
pub(crate) struct OwnPageOpening<'a> {
    engine: &'a Engine,
}

impl OwnPageOpening<'_> {
    /// The page it opened.
    pub(crate) fn opened(&self, target: &TargetId) {
        let mut own = self.engine.own_pages.lock();
        own.opened.push_back(target.clone());
        if own.opened.len() > 64 {
            own.opened.pop_front();
        }
    }
}

impl Drop for OwnPageOpening<'_> {
    fn drop(&mut self) {
        self.engine.own_pages.lock().opening -= 1;
    }
}

pub struct Engine {
    pub config: EngineConfig,
    /// The browser: process, lifecycle, launch options, contexts
    /// (`browser_host.rs`).
    browser: BrowserHost,
    /// The engine's own background tasks (reaper, browser watch,
    /// interceptors) run from the first start on.
    background: std::sync::atomic::AtomicBool,
    pub registry: Arc<dyn PluginRegistry>,
    /// The downloads' records, folders and resumes (`downloads.rs`).
    downloads: crate::downloads::Downloads,
    /// Tabs thawed for human input mode, refrozen when the agent is back.
    thawed_for_human: Mutex<Vec<String>>,
    action_log: RwLock<Option<Arc<dyn ActionLog>>>,
    /// The users' sessions and their limits (`wabp-model`'s `Users`).
    users: Arc<users::Users>,
    /// The open tabs in listing order and each user's active tab
    /// (`tab_table.rs`).
    tabs: crate::tab_table::TabTable<Tab>,
    /// One tab repair at a time (`repair.rs`).
    repairs: tokio::sync::Mutex<()>,
    /// Pages the engine opens itself (`Target.createTarget`): a page with
    /// no opener may be one of them.
    own_pages: Mutex<OwnPages>,
    /// New tabs loading their first page, not listed yet: a popup their
    /// page opens while it loads is theirs.
    first_loads: Mutex<Vec<Arc<Tab>>>,
    input_mode: Mutex<InputMode>,
    /// Every user's interception rules, shared with the tabs.
    interception: Arc<crate::intercept::Interception>,
    /// Files each user's file choosers get as they open
    /// (`POST /file-chooser/configure`), by user id.
    chooser_defaults: Mutex<std::collections::HashMap<Option<String>, Vec<String>>>,
}

impl Engine {
    pub fn new(config: EngineConfig, registry: Arc<dyn PluginRegistry>) -> Arc<Engine> {
        let downloads = crate::downloads::Downloads::new(
            config.session_dir.join("downloads"),
            config.max_download_bytes,
        );
        Arc::new(Engine {
            browser: BrowserHost::new(config.browser.clone(), config.pause),
            users: Arc::new(users::Users::new(config.user_limits)),
            background: Default::default(),
            config,
            interception: Arc::new(crate::intercept::Interception::new(registry.clone())),
            registry,
            downloads,
            thawed_for_human: Mutex::new(Vec::new()),
            action_log: RwLock::new(None),
            tabs: Default::default(),
            repairs: tokio::sync::Mutex::new(()),
            own_pages: Default::default(),
            first_loads: Default::default(),
            chooser_defaults: Mutex::new(Default::default()),
            input_mode: Mutex::new(InputMode::Agent),
        })
    }

    /// Launches (or attaches to) the browser and opens the first tab.
    pub async fn start(self: &Arc<Self>) -> Result<()> {
        let result = self.start_inner().await;
        if let Err(e) = &result {
            self.browser
                .set_lifecycle(Lifecycle::Failed(e.message.clone()));
        }
        result
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
        self.browser.close(timeout).await;
        self.browser.remove_owned_profile();
    }

    /// How the browser is (or will be) launched.
    pub fn launch_options(&self) -> BrowserOptions {
        self.browser.launch_options()
    }

    /// Starts (or attaches to) the browser with the engine's options and
    /// follows its events.
    async fn launch_browser(self: &Arc<Self>) -> Result<()> {
        let process = self.browser.launch(&self.downloads_dir()).await?;
        let listener = self.watch_browser_events(&process.browser).await?;
        if let Err(e) = self.enable_navigation_fence(&process.browser).await {
            listener.abort();
            return Err(e);
        }
        self.browser.install(process, listener).await;
        Ok(())
    }

    pub fn status(&self) -> BrowserStatus {
        self.browser.status()
    }

    fn ensure_ready(&self) -> Result<()> {
        self.browser.ensure_ready()
    }

    pub async fn shutdown(&self, timeout: Duration) {
        self.browser.set_lifecycle(Lifecycle::ShutDown);
        self.close_browser(timeout).await;
    }

    pub fn input_mode(&self) -> InputMode {
        *self.input_mode.lock()
    }

    fn ensure_agent_mode(&self) -> Result<()> {
        match self.input_mode() {
            InputMode::Agent => Ok(()),
            InputMode::Human => Err(Error::new(
                ErrorCode::HumanMode,
                "input mode is \"human\": actions are blocked until the input mode is \"agent\" again",
            )
            .then(NextStep::AgentInputMode)),
        }
    }

    /// The driver tabs the engine opens run under.
    pub fn default_driver(&self) -> DriverKind {
        self.browser.default_driver()
    }

    /// The browser's executable, when the engine launched it.
    pub fn executable_path(&self) -> Option<String> {
        self.browser.executable_path()
    }

    pub fn frame_driver(&self) -> &'static str {
        self.default_driver().name()
    }

    pub fn downloads_dir(&self) -> PathBuf {
        self.downloads.folder().to_path_buf()
    }

    /// The session's own upload folder.
    pub fn uploads_dir(&self) -> PathBuf {
        self.config.session_dir.join("uploads")
    }

    /// The upload folder of `caller`, always one of its upload roots: a
    /// user's own `uploads/<userId>/` (made on first use), so one user
    /// can't upload another's files; the whole `uploads/` for requests
    /// without a user.
    pub fn uploads_dir_of(&self, caller: &Caller) -> PathBuf {
        match caller.user_id() {
            Some(user) => {
                let dir = self.uploads_dir().join(user);
                let _ = std::fs::create_dir_all(&dir);
                dir
            }
            None => self.uploads_dir(),
        }
    }

    // ---- tabs ----

    fn all_tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs.all()
    }

    /// The caller's tab `tab_id`. Another user's tab is not found, exactly
    /// as a tab that never existed.
    pub fn tab(&self, caller: &Caller, tab_id: &str) -> Result<Arc<Tab>> {
        self.ensure_ready()?;
        self.tabs
            .of_caller(caller, tab_id)
            .ok_or_else(|| Error::tab_not_found(tab_id))
    }

    /// A tab whoever owns it: for the engine's own bookkeeping only.
    fn any_tab(&self, tab_id: &str) -> Option<Arc<Tab>> {
        self.tabs.any(tab_id)
    }

    /// A random id: knowing one tab's id says nothing about another's.
    fn next_tab_id(&self) -> String {
        crate::ids::random_id("tab")
    }

    /// A blank tab in `context`, frozen when execution control is on, not
    /// yet listed.
    async fn new_tab(
        &self,
        id: String,
        context: Option<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId>,
        user: Option<&str>,
        opener: Option<String>,
    ) -> Result<Arc<Tab>> {
        let kind = self.default_driver();
        let (page, navigator) = {
            let mut params = CreateTargetParams::new("about:blank");
            params.enable_begin_frame_control = Some(kind == DriverKind::Deterministic);
            // Full Chromium draws only the front tab of a window, and a
            // capture of any other waits for a frame that never comes: a
            // window per tab keeps every tab drawing.
            params.new_window = Some(kind != DriverKind::Deterministic);
            params.browser_context_id = context;
            let opening = self.own_page_opening();
            self.browser
                .new_page(params, |target| opening.opened(target))
                .await?
        };
        let tab = Tab::attach(id, page, kind, opener, navigator).await?;
        tab.set_owner(user.map(str::to_string));
        let defaults = self
            .chooser_defaults
            .lock()
            .get(&user.map(str::to_string))
            .cloned();
        tab.set_chooser_defaults(defaults);
        tab.set_interception(self.interception.clone());
        tab.sync_interception().await?;
        tab.set_extra_schemes(self.config.extra_schemes.clone());
        tab.set_record_secrets(self.config.record_secrets);
        // Frozen and loaded before anyone can reach it.
        if self.config.pause {
            tab.driver().enable(None).await?;
        }
        Ok(tab)
    }

    async fn open_tab(&self, url: &str, active: bool) -> Result<Arc<Tab>> {
        self.open_tab_in(url, active, None).await
    }

    async fn open_tab_in(&self, url: &str, active: bool, user: Option<&str>) -> Result<Arc<Tab>> {
        let context = match user {
            Some(user) => {
                self.check_tab_limit(user)?;
                Some(self.user_context(user).await?)
            }
            None => None,
        };
        let tab = self
            .new_tab(self.next_tab_id(), context, user, None)
            .await?;
        self.first_loads.lock().push(tab.clone());
        let loaded = if url == "about:blank" {
            Ok(())
        } else {
            self.first_load(&tab, Some(url)).await
        };
        // A window the page opened while it loaded is listed with it.
        tab.popups_settled(POPUPS_OF_FIRST_LOAD).await;
        self.first_loads.lock().retain(|t| !Arc::ptr_eq(t, &tab));
        if let Err(e) = loaded
            // A page that stops answering while it loads is kept: its next
            // use repairs it.
            && tab.session.failure().is_none()
        {
            // No tab half-opened: the caller hears why instead.
            let _ = tab
                .session
                .execute(CloseTargetParams::new(tab.target_id.clone()))
                .await;
            return Err(e);
        }
        self.tabs.add(tab.clone(), active);
        Ok(tab)
    }

    /// Loads a new tab's first page (`url`, or what it is already loading)
    /// with the clock running, then freezes it.
    /// A page that does not finish loading in time (a slow image, a busy
    /// script, a dialog) is frozen as it stands: the tab is usable.
    async fn first_load(&self, tab: &Arc<Tab>, url: Option<&str>) -> Result<()> {
        tab.driver().thaw().await?;
        let loaded = async {
            if let Some(url) = url {
                tab.navigate_to(url, None, false).await?;
            }
            while tab.pending_dialog().is_none() {
                let state = tab.session.evaluate_json("document.readyState").await;
                if state.is_err() || state.is_ok_and(|s| s.as_str() == Some("complete")) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, Error>(())
        };
        let loaded = match tokio::time::timeout(FIRST_LOAD_LIMIT, loaded).await {
            Ok(loaded) => loaded,
            // Stopped where it stands: a navigation still waiting for its
            // server would leave the page answering no script.
            Err(_) => {
                tab.stop_loading().await;
                Ok(())
            }
        };
        tab.driver().freeze().await?;
        loaded
    }

    /// Follows browser-wide events: popups become tabs, tabs a script closed
    /// leave the list, downloads are recorded and announced to their tab.
    async fn watch_browser_events(
        self: &Arc<Self>,
        browser: &chromiumoxide::Browser,
    ) -> Result<tokio::task::JoinHandle<()>> {
        enum BrowserEvent {
            Created(Arc<EventTargetCreated>),
            Destroyed(Arc<EventTargetDestroyed>),
            DownloadBegin(Arc<EventDownloadWillBegin>),
            DownloadProgress(Arc<EventDownloadProgress>),
            DocumentPaused(Arc<EventRequestPaused>),
        }
        let mut streams = vec![
            browser
                .event_listener::<EventTargetCreated>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::Created)
                .boxed(),
            browser
                .event_listener::<EventTargetDestroyed>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::Destroyed)
                .boxed(),
            browser
                .event_listener::<EventDownloadWillBegin>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::DownloadBegin)
                .boxed(),
            browser
                .event_listener::<EventDownloadProgress>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::DownloadProgress)
                .boxed(),
        ];
        if self.config.navigation_fence.is_some() {
            streams.push(
                browser
                    .event_listener::<EventRequestPaused>()
                    .await
                    .map_err(crate::cdp_error)?
                    .map(BrowserEvent::DocumentPaused)
                    .boxed(),
            );
        }
        let engine = Arc::downgrade(self);
        Ok(tokio::spawn(async move {
            let mut events = futures::stream::select_all(streams);
            while let Some(event) = events.next().await {
                let Some(engine) = engine.upgrade() else {
                    break;
                };
                match event {
                    BrowserEvent::Created(e) => {
                        let info = &e.target_info;
                        if info.r#type != "page" {
                            continue;
                        }
                        // A link opened with a modifier or the middle button:
                        // the browser opens it without an opener; it is the
                        // page of the tab that just clicked so.
                        let source = match info.opener_id.clone() {
                            Some(opener) => engine.tab_by_target(&opener).map(|t| (t, true)),
                            None => engine
                                .tabs
                                .find_map(|t| t.new_page_expected().then_some(()))
                                .map(|(t, ())| (t, false)),
                        };
                        if let Some((source, opened_it)) = source {
                            let engine = engine.clone();
                            let (target, url) = (info.target_id.clone(), info.url.clone());
                            // Counted now, so the action that opened it
                            // waits for its event.
                            let adoption = source.popup_adoption();
                            // Attaching waits on the browser: off this loop.
                            tokio::spawn(async move {
                                if !opened_it && !engine.claim_new_page(&source, &target).await {
                                    return;
                                }
                                if let Err(err) =
                                    engine.adopt_popup(source, adoption, target, url).await
                                {
                                    tracing::warn!("popup not registered: {}", err.message);
                                }
                            });
                        }
                    }
                    BrowserEvent::Destroyed(e) => engine.on_target_destroyed(&e.target_id),
                    BrowserEvent::DownloadBegin(e) => engine.on_download_begin(&e),
                    BrowserEvent::DownloadProgress(e) => engine.on_download_progress(&e),
                    // Off the loop: a slow policy holds only its own request.
                    BrowserEvent::DocumentPaused(e) => {
                        tokio::spawn(async move { engine.answer_paused_document(e).await });
                    }
                }
            }
        }))
    }

    /// Counts a page the engine opens itself until the guard drops.
    pub(crate) fn own_page_opening(&self) -> OwnPageOpening<'_> {
        self.own_pages.lock().opening += 1;
        OwnPageOpening { engine: self }
    }

    /// Whether a new page with no opener is the one `source`'s modifier or
    /// middle click opened: once the engine's own openings under way have
    /// ended (bounded), it is none of theirs, and `source` still expects it.
    async fn claim_new_page(&self, source: &Tab, target: &TargetId) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        loop {
            {
                let own = self.own_pages.lock();
                if own.opened.contains(target) {
                    return false;
                }
                if own.opening == 0 {
                    break;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.tab_by_target(target).is_none() && source.take_new_page_expected()
    }

    /// A listed tab, or a new one loading its first page, by its target.
    fn tab_by_target(&self, target: &TargetId) -> Option<Arc<Tab>> {
        let listed = self.tabs.by_target(target.inner());
        listed.or_else(|| {
            self.first_loads
                .lock()
                .iter()
                .find(|t| &t.target_id == target)
                .cloned()
        })
    }

    /// A page opened by one of our tabs (`window.open`, `target=_blank`).
    /// `adoption` is dropped once the `popup` event has gone out.
    async fn adopt_popup(
        &self,
        source: Arc<Tab>,
        adoption: crate::tab::PopupAdoption,
        target: TargetId,
        url: String,
    ) -> Result<()> {
        let (page, navigator) = {
            let mut attempt = 0;
            loop {
                // Without a browser, the popup went with it.
                let Some(found) = self.browser.page_of(target.clone()).await else {
                    return Ok(());
                };
                match found {
                    Ok(found) => break found,
                    Err(_) if attempt < 100 => {
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        // headless-shell hands its opener's begin-frame control to a popup;
        // other browsers draw popups with the compositor. Ask the popup.
        let kind = if !self.config.pause {
            DriverKind::FreeRunning
        } else if self.default_driver() == DriverKind::Deterministic
            && crate::tab::execution::accepts_begin_frames(&page).await
        {
            DriverKind::Deterministic
        } else {
            DriverKind::Compositor
        };
        let tab = Tab::attach(
            self.next_tab_id(),
            page,
            kind,
            Some(source.id.clone()),
            navigator,
        )
        .await?;
        // A popup belongs to its opener's user (it shares the context).
        tab.set_owner(source.owner());
        tab.set_extra_schemes(self.config.extra_schemes.clone());
        tab.set_record_secrets(self.config.record_secrets);
        // Actions on the popup wait until it is loaded and frozen; the event
        // goes out now, while the opener's action still listens.
        let turn = tab.turn(TURN_LIMIT).await?;
        self.tabs.push(tab.clone());
        // Size, position or `popup` make a window; `noopener` alone (what
        // `target=_blank` implies) does not.
        let opened = source.take_window_open();
        // A popup's target often has no URL yet: the opener asked for one.
        let url = match &opened {
            Some((_, asked)) if url.is_empty() || url == "about:blank" => asked.clone(),
            _ => url,
        };
        // A link opened in a new tab has no URL on its target at first;
        // the browser knows the one it is loading.
        let url = if url.is_empty() || url == "about:blank" {
            let info = self
                .browser
                .execute(GetTargetInfoParams {
                    target_id: Some(target.clone()),
                })
                .await
                .ok();
            info.map(|i| i.target_info.url.clone())
                .filter(|u| !u.is_empty())
                .unwrap_or(url)
        } else {
            url
        };
        let popup_type = match opened.map(|(features, _)| features) {
            Some(features)
                if features.iter().any(|f| {
                    let name = f.split('=').next().unwrap_or_default().trim();
                    [
                        "width",
                        "height",
                        "left",
                        "top",
                        "popup",
                        "innerwidth",
                        "innerheight",
                    ]
                    .contains(&name.to_ascii_lowercase().as_str())
                }) =>
            {
                "window"
            }
            _ => "tab",
        };
        let popup = TabEvent::Popup(events::Popup {
            source_tab_id: source.id.clone(),
            new_tab_id: tab.id.clone(),
            url,
            popup_type: popup_type.to_string(),
        });
        // Opened while no action runs (a new tab's first page, a timer of
        // a frozen page's): in the opener's next envelope.
        if source.idle() {
            source.note(popup.clone());
        }
        source.emit(TabSignal::Event(popup));
        drop(adoption);
        if self.config.pause {
            tab.driver().enable(None).await?;
            self.first_load(&tab, None).await?;
        }
        drop(turn);
        Ok(())
    }

    fn on_target_destroyed(&self, target: &TargetId) {
        let Some(tab) = self.tab_by_target(target) else {
            return; // closed through the API, or never ours
        };
        self.forget_tab(&tab.id);
        tab.emit(TabSignal::Closed { reason: "script" });
    }

    fn forget_tab(&self, tab_id: &str) {
        self.tabs.remove(tab_id);
    }

    /// The tab a frame belongs to (see `TabTable::for_frame`).
    fn tab_for_frame(&self, frame: &str) -> Option<Arc<Tab>> {
        self.tabs.for_frame(frame)
    }

    /// A download began: recorded under the tab (and user) of its frame.
    fn on_download_begin(&self, e: &EventDownloadWillBegin) {
        let tab = self.tab_for_frame(e.frame_id.inner());
        let tab_id = tab.as_ref().map(|t| t.id.clone()).unwrap_or_default();
        // Not known to be anyone's: no caller sees it.
        let user_id = match tab {
            Some(tab) => tab.owner(),
            None => Some(crate::caller::NOBODY.to_string()),
        };
        self.downloads
            .began(&e.guid, &e.url, &e.suggested_filename, tab_id, user_id);
    }

    /// Follows a download; stops one past the size limit.
    fn on_download_progress(self: &Arc<Self>, e: &EventDownloadProgress) {
        let reported = match e.state {
            DownloadProgressState::InProgress => crate::downloads::Reported::InProgress,
            DownloadProgressState::Completed => crate::downloads::Reported::Completed {
                file_path: e.file_path.clone().map(PathBuf::from),
            },
            DownloadProgressState::Canceled => crate::downloads::Reported::Canceled,
        };
        let Some(progressed) =
            self.downloads
                .progressed(&e.guid, e.received_bytes, e.total_bytes, reported)
        else {
            return;
        };
        if let Some(too_large) = progressed.too_large {
            let engine = self.clone();
            tokio::spawn(async move {
                let _ = engine
                    .cancel_in_browser(&too_large.guid, too_large.user_id.as_deref())
                    .await;
                let _ = std::fs::remove_file(too_large.partial);
            });
        }
        if let Some(tab) = self.any_tab(&progressed.tab_id) {
            for event in progressed.events {
                tab.emit(TabSignal::Event(event));
            }
        }
    }

    /// The caller's tabs, in listing order.
    pub(crate) fn tabs_of(&self, caller: &Caller) -> Vec<Arc<Tab>> {
        self.tabs.of(caller)
    }

    /// The caller's tabs, in listing order.
    pub async fn list_tabs(&self, caller: &Caller) -> Result<Vec<TabSummary>> {
        self.ensure_ready()?;
        let tabs = self.tabs_of(caller);
        let active = self.active_tab(caller);
        let mut out = Vec::with_capacity(tabs.len());
        for tab in tabs {
            let (url, title) = tab.session.info().await.unwrap_or_default();
            out.push(TabSummary {
                active: active.as_deref() == Some(tab.id.as_str()),
                pinned: tab.pinned(),
                muted: tab.muted(),
                id: tab.id.clone(),
                url,
                title,
            });
        }
        Ok(out)
    }

    /// The URL `caller`'s tab `tab_id` last committed, if it is theirs.
    pub fn tab_url(&self, caller: &Caller, tab_id: &str) -> Option<String> {
        self.tab(caller, tab_id).ok().map(|tab| tab.url())
    }

    pub async fn tab_info(&self, caller: &Caller, tab_id: &str) -> Result<answers::TabInfo> {
        let tab = self.tab(caller, tab_id)?;
        let (url, title) = tab.session.info().await?;
        Ok(answers::TabInfo {
            id: tab.id.clone(),
            url,
            title,
            loading: tab.is_loading(),
            pinned: tab.pinned(),
            muted: tab.muted(),
        })
    }

    /// Opens a tab (201 in REST), in the caller's browser context when the
    /// caller is a user. `index` places it in the listing order.
    pub async fn create_tab(
        &self,
        caller: &Caller,
        url: Option<&str>,
        active: bool,
        index: Option<usize>,
    ) -> Result<answers::CreatedTab> {
        self.ensure_ready()?;
        self.ensure_agent_mode()?;
        let url = url.unwrap_or("about:blank");
        crate::rules::url::check_navigation_url(url, &self.config.extra_schemes)?;
        let tab = self.open_tab_in(url, active, caller.user_id()).await?;
        if let Some(index) = index {
            self.tabs.move_to(&tab.id, index);
        }
        if active {
            tab.session
                .execute(ActivateTargetParams::new(tab.target_id.clone()))
                .await
                .ok();
        }
        Ok(answers::CreatedTab {
            id: tab.id.clone(),
            url: url.to_string(),
        })
    }

    pub async fn close_tab(&self, caller: &Caller, tab_id: &str) -> Result<()> {
        let tab = self.tab(caller, tab_id)?;
        self.forget_tab(tab_id);
        tab.emit(TabSignal::Closed { reason: "user" });
        tab.session
            .execute(CloseTargetParams::new(tab.target_id.clone()))
            .await?;
        Ok(())
    }

    pub async fn activate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Activated> {
        let tab = self.tab(caller, tab_id)?;
        tab.session
            .execute(ActivateTargetParams::new(tab.target_id.clone()))
            .await?;
        self.tabs.set_active(caller, &tab.id);
        let index = self.tabs.position(tab_id).unwrap_or(0);
        Ok(answers::Activated {
            status: "activated".into(),
            tab_id: tab.id.clone(),
            index,
        })
    }

    /// The caller's active tab: the last one it activated or opened active.
    pub fn active_tab(&self, caller: &Caller) -> Option<String> {
        self.tabs.active(caller)
    }

    pub async fn stop_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Stopped> {
        let tab = self.tab(caller, tab_id)?;
        tab.session.execute(StopLoadingParams::default()).await?;
        Ok(answers::Stopped {
            status: "stopped".into(),
            tab_id: tab.id.clone(),
        })
    }

    // ---- actions ----

    /// The flight recorder every action goes to before its answer.
    pub fn set_action_log(&self, log: Arc<dyn ActionLog>) {
        *self.action_log.write() = Some(log);
    }

    /// Runs one action through the loop (`action.rs`) and records it.
    pub async fn run_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
        kind: ActionKind,
        dispatch: Dispatch,
    ) -> Result<Envelope> {
        self.ensure_agent_mode()?;
        if options.screenshot.area == ScreenshotArea::FullPage && kind.name != "screenshot" {
            return Err(Error::invalid(
                "screenshot.area \"full_page\" is for the screenshot operation only; actions capture the viewport or a region of it",
            )
            .then(NextStep::TabScreenshot {
                tab_id: tab_id.to_string(),
            }));
        }
        let tab = self.live_tab(caller, tab_id).await?;
        let log = self.action_log.read().clone();
        let outcome = crate::action::run(
            tab.clone(),
            self.registry.clone(),
            log.clone(),
            kind,
            options.clone(),
            dispatch,
        )
        .await
        .map_err(|e| match e.code {
            // A stale ref, from any plugin: a new snapshot of this tab.
            ErrorCode::StaleRef if e.next.is_none() => e.then(NextStep::Snapshot {
                tab_id: tab.id.clone(),
            }),
            _ => e,
        });
        // The page stopped answering: repair the tab now, so the next
        // request finds it working.
        if tab.session.failure().is_none() {
            return outcome;
        }
        let recovered = match self.heal(&tab).await {
            Ok((_, recovered)) => recovered,
            Err(e) => {
                tracing::warn!(tab = %tab.id, "the tab could not be repaired: {}", e.message);
                None
            }
        };
        let mut envelope = outcome?;
        if let Some(event) = recovered {
            let virtual_time_ms = envelope
                .events
                .last()
                .map_or_else(now_ms, |e| e.virtual_time_ms);
            let stamped = events::StampedEvent {
                event,
                virtual_time_ms,
            };
            // The action is on record already: its repair joins it there.
            if let (Some(log), Some(action_id)) = (&log, &envelope.action_id)
                && let Err(e) = log
                    .add_events(action_id, &tab.id, vec![stamped.clone()])
                    .await
            {
                tracing::warn!(tab = %tab.id, "the repair could not be recorded: {}", e.message);
            }
            envelope.events.push(stamped);
        }
        Ok(envelope)
    }

    /// A plugin action by name (click, type, ..., or a folder plugin's).
    pub async fn plugin_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        name: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let handler = self.registry.action(name).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("no action named {:?}", crate::error::cut(name)),
            )
            .then(NextStep::ListActions)
        })?;
        if !params.is_object() {
            return Err(Error::invalid("action params must be a JSON object"));
        }
        let kind = ActionKind {
            name: name.to_string(),
            params: params.clone(),
            hint: NavigationHint::None,
            scroll_source: ScrollSource::for_action(name),
            over_dialog: false,
        };
        let name = name.to_string();
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                let context = ActionContext {
                    tab_id: tab.id.clone(),
                    pointer: tab.pointer().unwrap_or((0.0, 0.0)),
                };
                let host: Arc<dyn PageHost> = tab.clone();
                let result = handler.run(&name, params, context, host).await;
                // A last mouse move's answer (see `Tab::mouse`) is part of
                // the dispatch, whatever the plugin answered.
                let answered = tab.input_answered().await;
                let result = result?;
                answered?;
                Ok(result)
            })
        });
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn navigate(
        &self,
        caller: &Caller,
        tab_id: &str,
        url: &str,
        referrer: Option<&str>,
        accept_beforeunload: bool,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        crate::rules::url::check_navigation_url(url, &self.config.extra_schemes)?;
        let mut kind = ActionKind::new("navigate", json!({ "url": url, "referrer": referrer }));
        kind.over_dialog = true;
        let (url, referrer) = (url.to_string(), referrer.map(str::to_string));
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                match tab
                    .navigate_to(&url, referrer.as_deref(), accept_beforeunload)
                    .await
                {
                    Ok(()) => Ok(unless_held_by_beforeunload(
                        &tab,
                        json!({ "status": "navigated", "url": url }),
                        Some("or navigate with \"accept_beforeunload\": true"),
                    )),
                    // The envelope shows the error page and carries the
                    // `navigation_failed` event.
                    Err(e) if e.code == ErrorCode::NavigationFailed => {
                        Ok(json!({ "status": "failed", "url": url, "error": e.message }))
                    }
                    Err(e) => Err(e),
                }
            })
        });
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn history_step(
        &self,
        caller: &Caller,
        tab_id: &str,
        step: i64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                tab.history_step(step).await?;
                let done = if step < 0 {
                    "navigated_back"
                } else {
                    "navigated_forward"
                };
                Ok(unless_held_by_beforeunload(
                    &tab,
                    json!({ "status": done }),
                    None,
                ))
            })
        });
        let mut kind = ActionKind::new(if step < 0 { "back" } else { "forward" }, json!({}));
        kind.hint = NavigationHint::BackForward;
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn reload(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(|tab: Arc<Tab>| {
            Box::pin(async move {
                tab.reload_page().await?;
                Ok(unless_held_by_beforeunload(
                    &tab,
                    json!({ "status": "reloaded" }),
                    None,
                ))
            })
        });
        let mut kind = ActionKind::new("reload", json!({}));
        kind.hint = NavigationHint::Reload;
        kind.over_dialog = true;
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    /// `POST /wait`: the page runs for `ms`, then is frozen again.
    pub async fn wait(
        &self,
        caller: &Caller,
        tab_id: &str,
        ms: u64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        if ms > 60_000 {
            return Err(Error::invalid("ms must be from 0 to 60000"));
        }
        let mut options = options.clone();
        options.wait_until.wait_type = "time".into();
        options.wait_until.params = json!({ "type": "time", "duration_ms": ms });
        options.wait_until.timeout_ms = options.wait_until.timeout_ms.max(ms + 1000);
        let dispatch: Dispatch = Box::new(move |_tab| {
            Box::pin(async move { Ok(json!({ "status": "waited", "ms": ms })) })
        });
        let kind = ActionKind::new("wait", json!({ "ms": ms }));
        self.run_action(caller, tab_id, &options, kind, dispatch)
            .await
    }

    /// `POST /wait/navigation` and `/wait/network-idle`: lets the page run
    /// until `wait_type` (`navigation`, `network_idle`) is met; an error
    /// (408) at `timeout_ms` saying what did not happen.
    pub async fn wait_for(
        &self,
        caller: &Caller,
        tab_id: &str,
        wait_type: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let mut options = options.clone();
        options.wait_until.wait_type = wait_type.into();
        let mut params = params;
        params["type"] = json!(wait_type);
        options.wait_until.params = params.clone();
        let timeout = options.wait_until.timeout_ms;
        let dispatch: Dispatch =
            Box::new(move |_tab| Box::pin(async move { Ok(json!({ "status": "waited" })) }));
        let kind = ActionKind::new(&format!("wait_{wait_type}"), params);
        let envelope = self
            .run_action(caller, tab_id, &options, kind, dispatch)
            .await?;
        if envelope.timing.wait_reason == "timeout" {
            let what = match wait_type {
                "navigation" => "no navigation of the page loaded",
                "network_idle" => "the network did not go idle",
                _ => "the wait was not met",
            };
            return Err(Error::new(
                ErrorCode::WaitTimeout,
                format!("{what} within {timeout} ms"),
            ));
        }
        Ok(envelope)
    }

    /// `POST /screenshot`: an envelope with nothing dispatched.
    pub async fn screenshot_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch =
            Box::new(|_tab| Box::pin(async { Ok(json!({ "status": "captured" })) }));
        let kind = ActionKind::new("screenshot", json!({}));
        let mut envelope = self
            .run_action(caller, tab_id, options, kind, dispatch)
            .await?;
        if options.screenshot.area == ScreenshotArea::FullPage {
            // The action captured the viewport; the answer is the page.
            let tab = self.live_tab(caller, tab_id).await?;
            let _turn = tab.turn(TURN_LIMIT).await?;
            envelope.screenshot_after = Some(self.full_page(&tab).await?);
        }
        envelope.data = envelope.screenshot_after.as_ref().map(|shot| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(shot.data.as_slice())
        });
        Ok(envelope)
    }

    /// The whole page as one WebP, no markup; its size bounded by WebP's.
    /// The whole page's pixels, and the viewport reading they came with.
    async fn full_page_pixels(&self, tab: &Arc<Tab>) -> Result<(tiny_skia::Pixmap, Value)> {
        let value = tab
            .session
            .evaluate_isolated(crate::viewport::VIEWPORT_JS)
            .await?;
        let viewport = crate::viewport::parse_viewport(&value);
        let scale = viewport.device_scale_factor.clamp(1.0, 4.0);
        let limit = f64::from(crate::capture::MAX_IMAGE_SIDE);
        if viewport.page_height * scale > limit || viewport.page_width * scale > limit {
            return Err(Error::invalid(format!(
                "the page is {}x{} CSS pixels; a full-page screenshot is at most {} pixels a side: take regions of it instead",
                viewport.page_width,
                viewport.page_height,
                (limit / scale).floor()
            )));
        }
        let pixmap = tab.driver().capture_full_page(&viewport).await?;
        Ok((pixmap, value))
    }

    async fn full_page(&self, tab: &Arc<Tab>) -> Result<Screenshot> {
        let (pixmap, value) = self.full_page_pixels(tab).await?;
        let (width, height) = (pixmap.width(), pixmap.height());
        let data = tokio::task::spawn_blocking(move || crate::capture::encode_webp(&pixmap))
            .await
            .map_err(|e| Error::internal(format!("encoder task: {e}")))??;
        Ok(Screenshot {
            data: Arc::new(data),
            width,
            height,
            virtual_time_ms: tab
                .driver()
                .page_time()
                .await
                .unwrap_or_else(|| crate::clock::page_clock(&value)),
            format: "webp",
        })
    }

    /// `GET /screenshot`: one capture, no envelope. Read-only.
    pub async fn screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        markup: Vec<String>,
        cursor: bool,
        full_page: bool,
    ) -> Result<Screenshot> {
        let tab = self.live_tab(caller, tab_id).await?;
        if full_page {
            let _turn = tab.turn(TURN_LIMIT).await?;
            return self.full_page(&tab).await;
        }
        if tab.pending_dialog().is_some() {
            if let Some(image) = tab.last_frame().and_then(|f| f.image) {
                return Ok(image);
            }
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a JavaScript dialog blocks this tab; accept or dismiss it first",
            ));
        }
        // A capture must not interleave with an action's thaw and freeze;
        // it may run beside its wait.
        let _turn = tab.read_turn(TURN_LIMIT).await?;
        let cursor = if cursor { tab.pointer() } else { None };
        let (shot, _, _) = take_screenshot(
            &tab.driver(),
            &tab.refs(),
            self.registry.as_ref(),
            &CaptureOptions {
                markup,
                cursor,
                clip: None,
            },
        )
        .await?;
        Ok(shot)
    }

    /// A screenshot without markup or cursor in `format` (the browser
    /// tool's): the viewport, or the whole page. Answers the bytes, width
    /// and height.
    pub async fn plain_screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        full_page: bool,
        format: ImageFormat,
    ) -> Result<(Vec<u8>, u32, u32)> {
        let tab = self.live_tab(caller, tab_id).await?;
        // A full page resizes the viewport: that one takes the turn.
        let _turn = if full_page {
            crate::turn::ReadTurn::Own(tab.turn(TURN_LIMIT).await?)
        } else {
            tab.read_turn(TURN_LIMIT).await?
        };
        if tab.pending_dialog().is_some() {
            return Err(Error::dialog_blocks(&tab.id));
        }
        let pixmap = if full_page {
            self.full_page_pixels(&tab).await?.0
        } else {
            tab.driver().capture_pixels().await?
        };
        let (width, height) = (pixmap.width(), pixmap.height());
        let bytes = tokio::task::spawn_blocking(move || format.encode(&pixmap))
            .await
            .map_err(|e| Error::internal(format!("encoder task: {e}")))??;
        Ok((bytes, width, height))
    }

    /// `POST /execute`: `{"value", "type"}`.
    pub async fn execute(
        &self,
        caller: &Caller,
        tab_id: &str,
        script: &str,
        await_promise: bool,
    ) -> Result<(answers::Evaluation, Vec<events::StampedEvent>)> {
        self.ensure_agent_mode()?;
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        if tab.pending_dialog().is_some() {
            return Err(Error::dialog_blocks(&tab.id));
        }
        tab.bump_epoch();
        // What the script sets off (a picker, a dialog, a popup, a
        // navigation) is in its answer, as in an action's envelope.
        let mut signals = tab.subscribe();
        let mut recorder = crate::action::Recorder::new(
            &tab.id,
            crate::action::NavigationHint::None,
            None,
            now_ms(),
        );
        tab.driver().thaw_for_script().await?;
        let result = tab.session.evaluate_script(script, await_promise).await;
        // Events the browser sent before the script's answer are handed on
        // first; a popup being attached is waited for (bounded).
        tab.catch_up().await;
        tab.popups_settled(EXECUTE_POPUP_LIMIT).await;
        while let Ok(signal) = signals.try_recv() {
            recorder.record(signal);
        }
        tab.driver().freeze().await?;
        // The script may have changed the page: the last frame is stale.
        tab.set_last_frame(None);
        let (value, kind) = result?;
        Ok((answers::Evaluation { value, kind }, recorder.events))
    }

    /// `POST /text`: the element's (or body's) innerText; `None` when nothing matches.
    pub async fn text(
        &self,
        caller: &Caller,
        tab_id: &str,
        selector: Option<&str>,
        element_ref: Option<&str>,
    ) -> Result<Option<String>> {
        let tab = self.live_tab(caller, tab_id).await?;
        // A ref (any element of a JSON snapshot) reads that element.
        if let Some(r) = element_ref {
            let target = crate::plugin::Target::Ref(r.to_string());
            return Ok(Some(tab.refs().text_of_target(&target).await?));
        }
        let selector =
            serde_json::to_string(&selector).map_err(|e| Error::internal(e.to_string()))?;
        let expression = format!(
            "(() => {{ const sel = {selector}; let el; try {{ el = sel === null ? document.body : document.querySelector(sel); }} catch (e) {{ return {{ error: e.message }}; }} return el ? {{ text: el.innerText ?? el.textContent ?? '' }} : {{ text: null }}; }})()"
        );
        let value = tab.session.evaluate_json(&expression).await?;
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            return Err(Error::invalid(format!("invalid selector: {error}")));
        }
        Ok(value
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    // ---- execution control ----

    pub async fn execution(&self, caller: &Caller, tab_id: &str) -> Result<ExecutionState> {
        let tab = self.tab(caller, tab_id)?;
        let state = tab.frames.execution.lock().await.state();
        Ok(state)
    }

    /// `POST /execution`: enables control on first use, then pauses or resumes.
    pub async fn set_execution(
        &self,
        caller: &Caller,
        tab_id: &str,
        paused: bool,
        initial_virtual_time: Option<f64>,
    ) -> Result<ExecutionState> {
        self.ensure_agent_mode()?;
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        let enabled = tab.frames.execution.lock().await.enabled;
        if !enabled {
            tab.driver().enable(initial_virtual_time).await?;
        }
        if paused {
            tab.driver().freeze().await?;
        } else {
            tab.driver().thaw().await?;
        }
        let state = tab.frames.execution.lock().await.state();
        Ok(state)
    }

    /// Human mode resumes every frozen page so a person can use it; agent
    /// mode freezes again the ones it resumed.
    pub async fn set_input_mode(&self, mode: InputMode) -> Result<()> {
        let previous = std::mem::replace(&mut *self.input_mode.lock(), mode);
        if previous == mode {
            return Ok(());
        }
        let tabs = self.tabs.all();
        match mode {
            InputMode::Human => {
                for tab in tabs {
                    if tab.driver().is_frozen().await {
                        match tab.driver().thaw().await {
                            Ok(()) => self.thawed_for_human.lock().push(tab.id.clone()),
                            Err(err) => {
                                tracing::warn!(tab = %tab.id, "not thawed for human mode: {}", err.message)
                            }
                        }
                    }
                }
            }
            InputMode::Agent => {
                let thawed = std::mem::take(&mut *self.thawed_for_human.lock());
                for tab in tabs.iter().filter(|t| thawed.contains(&t.id)) {
                    if let Err(err) = tab.driver().freeze().await {
                        tracing::warn!(tab = %tab.id, "not refrozen for agent mode: {}", err.message);
                    }
                    tab.set_last_frame(None);
                }
            }
        }
        Ok(())
    }
}

/// A navigation's answer `done`, unless the page's `beforeunload` prompt
/// holds it: then says so (see [`crate::action::held_by_beforeunload`]).
fn unless_held_by_beforeunload(tab: &Tab, mut done: Value, more: Option<&str>) -> Value {
    if tab
        .pending_dialog()
        .is_some_and(|d| d.dialog_type == "beforeunload")
    {
        crate::action::held_by_beforeunload(&mut done, &tab.id, more);
    }
    done
}
