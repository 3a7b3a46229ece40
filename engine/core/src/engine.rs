//! The engine: one browser, its tabs, the plugin registry and the core
//! operations both frontends call.

use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::StopLoadingParams;
use chromiumoxide::cdp::browser_protocol::target::{
    ActivateTargetParams, CloseTargetParams, CreateTargetParams,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::action::{ActionOptions, ActionRun, Dispatch, Envelope, NavigationHint};
use crate::browser::{BrowserOptions, BrowserProcess, LaunchMode};
use crate::capture::{CaptureOptions, Screenshot, take_screenshot};
use crate::error::{Error, ErrorCode, Result};
use crate::execution::{FrameDriver, FreeRunning};
use crate::plugin::{ActionContext, PageHost, PluginRegistry};
use crate::tab::Tab;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub browser: BrowserOptions,
    /// Where history, downloads and screenshots go.
    pub session_dir: PathBuf,
    /// Freeze pages between actions (`--no-pause` turns it off).
    pub pause: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputMode {
    Agent,
    Human,
}

#[derive(Debug, Clone, Serialize)]
pub struct BrowserStatus {
    pub ready: bool,
    pub state: String,
    pub components: Components,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub frame_driver: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Components {
    pub http_server: bool,
    pub browser_window: bool,
    pub devtools: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TabSummary {
    pub id: String,
    pub url: String,
    pub title: String,
    pub active: bool,
}

enum Lifecycle {
    Initializing,
    Ready,
    Failed(String),
    ShutDown,
}

pub struct Engine {
    pub config: EngineConfig,
    pub registry: Arc<dyn PluginRegistry>,
    driver: Box<dyn FrameDriver>,
    browser: tokio::sync::RwLock<Option<BrowserProcess>>,
    lifecycle: RwLock<Lifecycle>,
    executable: RwLock<Option<PathBuf>>,
    /// Tabs in creation order.
    tabs: RwLock<Vec<Arc<Tab>>>,
    active_tab: StdMutex<Option<String>>,
    input_mode: StdMutex<InputMode>,
    tab_counter: std::sync::atomic::AtomicU64,
}

impl Engine {
    pub fn new(config: EngineConfig, registry: Arc<dyn PluginRegistry>) -> Arc<Engine> {
        Arc::new(Engine {
            config,
            registry,
            driver: Box::new(FreeRunning),
            browser: tokio::sync::RwLock::new(None),
            lifecycle: RwLock::new(Lifecycle::Initializing),
            executable: RwLock::new(None),
            tabs: RwLock::new(Vec::new()),
            active_tab: StdMutex::new(None),
            input_mode: StdMutex::new(InputMode::Agent),
            tab_counter: Default::default(),
        })
    }

    /// Launches (or attaches to) the browser and opens the first tab.
    pub async fn start(self: &Arc<Self>) -> Result<()> {
        let result = self.start_inner().await;
        if let Err(e) = &result {
            *self.lifecycle.write().unwrap() = Lifecycle::Failed(e.message.clone());
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
        let process = BrowserProcess::start(&self.config.browser).await?;
        *self.executable.write().unwrap() = process.executable.clone();
        *self.browser.write().await = Some(process);
        self.open_tab("about:blank", true).await?;
        *self.lifecycle.write().unwrap() = Lifecycle::Ready;
        tracing::info!("browser ready");
        Ok(())
    }

    pub fn status(&self) -> BrowserStatus {
        let lifecycle = self.lifecycle.read().unwrap();
        let (ready, state, message) = match &*lifecycle {
            Lifecycle::Initializing => (
                false,
                "initializing",
                Some("Waiting for browser window".to_string()),
            ),
            Lifecycle::Ready => (true, "ready", None),
            Lifecycle::Failed(e) => (false, "failed", Some(e.clone())),
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
            frame_driver: self.driver.name().into(),
            executable: self
                .executable
                .read()
                .unwrap()
                .as_ref()
                .map(|p| p.display().to_string()),
        }
    }

    fn ensure_ready(&self) -> Result<()> {
        match &*self.lifecycle.read().unwrap() {
            Lifecycle::Ready => Ok(()),
            Lifecycle::Initializing => Err(Error::new(
                ErrorCode::NotReady,
                "the browser is still starting; poll GET /api/v1/browser/status",
            )),
            Lifecycle::Failed(e) => Err(Error::new(
                ErrorCode::BrowserInitFailed,
                format!("the browser failed to start: {e}"),
            )),
            Lifecycle::ShutDown => {
                Err(Error::new(ErrorCode::NotReady, "the browser was shut down"))
            }
        }
    }

    pub async fn shutdown(&self, timeout: Duration) {
        *self.lifecycle.write().unwrap() = Lifecycle::ShutDown;
        self.tabs.write().unwrap().clear();
        if let Some(process) = self.browser.write().await.take() {
            process.shutdown(timeout).await;
        }
        if matches!(
            self.config.browser.mode,
            LaunchMode::Auto | LaunchMode::Binary(_)
        ) {
            let _ = std::fs::remove_dir_all(&self.config.browser.user_data_dir);
        }
    }

    pub fn input_mode(&self) -> InputMode {
        *self.input_mode.lock().unwrap()
    }

    pub fn set_input_mode(&self, mode: InputMode) {
        *self.input_mode.lock().unwrap() = mode;
    }

    fn ensure_agent_mode(&self) -> Result<()> {
        match self.input_mode() {
            InputMode::Agent => Ok(()),
            InputMode::Human => Err(Error::new(
                ErrorCode::HumanMode,
                "input mode is \"human\": actions are blocked; POST /api/v1/browser/input-mode {\"input_mode\": \"agent\"} to resume",
            )),
        }
    }

    pub fn frame_driver(&self) -> &'static str {
        self.driver.name()
    }

    // ---- tabs ----

    pub fn tab(&self, tab_id: &str) -> Result<Arc<Tab>> {
        self.ensure_ready()?;
        self.tabs
            .read()
            .unwrap()
            .iter()
            .find(|t| t.id == tab_id)
            .cloned()
            .ok_or_else(|| Error::tab_not_found(tab_id))
    }

    fn next_tab_id(&self) -> String {
        let n = self
            .tab_counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Short, unguessable enough to avoid mix-ups between engines.
        let salt = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        format!("tab_{:04x}{:04x}", (salt >> 8) & 0xffff, n & 0xffff)
    }

    async fn open_tab(&self, url: &str, active: bool) -> Result<Arc<Tab>> {
        let page = {
            let browser = self.browser.read().await;
            let browser = browser
                .as_ref()
                .ok_or_else(|| Error::new(ErrorCode::NotReady, "no browser"))?;
            browser
                .browser
                .new_page(CreateTargetParams::new(url))
                .await?
        };
        let tab = Tab::attach(self.next_tab_id(), page).await?;
        self.tabs.write().unwrap().push(tab.clone());
        if active || self.active_tab.lock().unwrap().is_none() {
            *self.active_tab.lock().unwrap() = Some(tab.id.clone());
        }
        Ok(tab)
    }

    pub async fn list_tabs(&self) -> Result<Vec<TabSummary>> {
        self.ensure_ready()?;
        let tabs: Vec<Arc<Tab>> = self.tabs.read().unwrap().clone();
        let active = self.active_tab.lock().unwrap().clone();
        let mut out = Vec::with_capacity(tabs.len());
        for tab in tabs {
            let (url, title) = tab.info().await.unwrap_or_default();
            out.push(TabSummary {
                active: active.as_deref() == Some(tab.id.as_str()),
                id: tab.id.clone(),
                url,
                title,
            });
        }
        Ok(out)
    }

    pub async fn tab_info(&self, tab_id: &str) -> Result<Value> {
        let tab = self.tab(tab_id)?;
        let (url, title) = tab.info().await?;
        Ok(json!({ "id": tab.id, "url": url, "title": title, "loading": tab.is_loading() }))
    }

    /// Opens a tab (201 in REST). `index` places it in the listing order.
    pub async fn create_tab(
        &self,
        url: Option<&str>,
        active: bool,
        index: Option<usize>,
    ) -> Result<Value> {
        self.ensure_ready()?;
        self.ensure_agent_mode()?;
        let url = url.unwrap_or("about:blank");
        check_url(url)?;
        let tab = self.open_tab(url, active).await?;
        if let Some(index) = index {
            let mut tabs = self.tabs.write().unwrap();
            if let Some(pos) = tabs.iter().position(|t| t.id == tab.id) {
                let tab = tabs.remove(pos);
                let index = index.min(tabs.len());
                tabs.insert(index, tab);
            }
        }
        if active {
            tab.page
                .execute(ActivateTargetParams::new(tab.target_id.clone()))
                .await
                .ok();
        }
        Ok(json!({ "id": tab.id, "url": url }))
    }

    pub async fn close_tab(&self, tab_id: &str) -> Result<()> {
        let tab = self.tab(tab_id)?;
        self.tabs.write().unwrap().retain(|t| t.id != tab_id);
        {
            let mut active = self.active_tab.lock().unwrap();
            if active.as_deref() == Some(tab_id) {
                *active = self.tabs.read().unwrap().last().map(|t| t.id.clone());
            }
        }
        tab.page
            .execute(CloseTargetParams::new(tab.target_id.clone()))
            .await?;
        Ok(())
    }

    pub async fn activate_tab(&self, tab_id: &str) -> Result<Value> {
        let tab = self.tab(tab_id)?;
        tab.page
            .execute(ActivateTargetParams::new(tab.target_id.clone()))
            .await?;
        *self.active_tab.lock().unwrap() = Some(tab.id.clone());
        let index = self
            .tabs
            .read()
            .unwrap()
            .iter()
            .position(|t| t.id == tab_id)
            .unwrap_or(0);
        Ok(json!({ "status": "activated", "tab_id": tab.id, "index": index }))
    }

    pub fn active_tab(&self) -> Option<String> {
        self.active_tab.lock().unwrap().clone()
    }

    pub async fn stop_tab(&self, tab_id: &str) -> Result<Value> {
        let tab = self.tab(tab_id)?;
        tab.page.execute(StopLoadingParams::default()).await?;
        Ok(json!({ "status": "stopped", "tab_id": tab.id }))
    }

    // ---- actions ----

    /// Runs one action through the loop.
    pub async fn run_action(
        &self,
        tab_id: &str,
        options: &ActionOptions,
        hint: NavigationHint,
        dispatch: Dispatch,
    ) -> Result<Envelope> {
        self.ensure_agent_mode()?;
        let tab = self.tab(tab_id)?;
        ActionRun {
            registry: self.registry.as_ref(),
            tab,
            options,
            hint,
        }
        .execute(dispatch, self.driver.as_ref())
        .await
    }

    /// A plugin action by name (click, type, ..., or a folder plugin's).
    pub async fn plugin_action(
        &self,
        tab_id: &str,
        name: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let handler = self.registry.action(name).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "no action named {name:?}; GET /api/v1/plugins lists the available actions"
                ),
            )
        })?;
        if !params.is_object() {
            return Err(Error::invalid("action params must be a JSON object"));
        }
        let name = name.to_string();
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                let context = ActionContext {
                    tab_id: tab.id.clone(),
                    pointer: tab.pointer().unwrap_or((0.0, 0.0)),
                };
                let host: Arc<dyn PageHost> = tab;
                Ok(handler.run(&name, params, context, host).await?)
            })
        });
        self.run_action(tab_id, options, NavigationHint::None, dispatch)
            .await
    }

    pub async fn navigate(
        &self,
        tab_id: &str,
        url: &str,
        referrer: Option<&str>,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        check_url(url)?;
        let (url, referrer) = (url.to_string(), referrer.map(str::to_string));
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                tab.navigate_to(&url, referrer.as_deref()).await?;
                Ok(json!({ "status": "navigated", "url": url }))
            })
        });
        self.run_action(tab_id, options, NavigationHint::None, dispatch)
            .await
    }

    pub async fn history_step(
        &self,
        tab_id: &str,
        step: i64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                tab.history_step(step).await?;
                Ok(
                    json!({ "status": if step < 0 { "navigated_back" } else { "navigated_forward" } }),
                )
            })
        });
        self.run_action(tab_id, options, NavigationHint::BackForward, dispatch)
            .await
    }

    pub async fn reload(&self, tab_id: &str, options: &ActionOptions) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(|tab: Arc<Tab>| {
            Box::pin(async move {
                tab.reload_page().await?;
                Ok(json!({ "status": "reloaded" }))
            })
        });
        self.run_action(tab_id, options, NavigationHint::Reload, dispatch)
            .await
    }

    /// `POST /wait`: the page runs for `ms`, then is frozen again.
    pub async fn wait(&self, tab_id: &str, ms: u64, options: &ActionOptions) -> Result<Envelope> {
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
        self.run_action(tab_id, &options, NavigationHint::None, dispatch)
            .await
    }

    /// `POST /screenshot`: an envelope with nothing dispatched.
    pub async fn screenshot_action(
        &self,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch =
            Box::new(|_tab| Box::pin(async { Ok(json!({ "status": "captured" })) }));
        self.run_action(tab_id, options, NavigationHint::None, dispatch)
            .await
    }

    /// `GET /screenshot`: one capture, no envelope. Read-only.
    pub async fn screenshot(
        &self,
        tab_id: &str,
        markup: Vec<String>,
        cursor: bool,
    ) -> Result<Screenshot> {
        let tab = self.tab(tab_id)?;
        if tab.pending_dialog().is_some() {
            if let Some(frame) = tab.last_frame() {
                return Ok(frame.image);
            }
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a JavaScript dialog blocks this tab; accept or dismiss it first",
            ));
        }
        let cursor = if cursor { tab.pointer() } else { None };
        let (shot, _, _) = take_screenshot(
            &tab,
            self.registry.as_ref(),
            &CaptureOptions { markup, cursor },
        )
        .await?;
        Ok(shot)
    }

    /// `POST /execute`: `{"value", "type"}`.
    pub async fn execute(&self, tab_id: &str, script: &str) -> Result<Value> {
        self.ensure_agent_mode()?;
        let tab = self.tab(tab_id)?;
        let _turn = tab.action_lock.lock().await;
        self.driver.thaw(&tab).await?;
        let result = tab.evaluate_value(script).await;
        let frozen = self.driver.freeze(&tab).await?;
        if !frozen {
            tab.set_last_frame(None);
        }
        let (value, kind) = result?;
        Ok(json!({ "value": value, "type": kind }))
    }

    /// `POST /text`: the element's (or body's) innerText; `None` when nothing matches.
    pub async fn text(&self, tab_id: &str, selector: Option<&str>) -> Result<Option<String>> {
        let tab = self.tab(tab_id)?;
        let selector =
            serde_json::to_string(&selector).map_err(|e| Error::internal(e.to_string()))?;
        let expression = format!(
            "(() => {{ const sel = {selector}; let el; try {{ el = sel === null ? document.body : document.querySelector(sel); }} catch (e) {{ return {{ error: e.message }}; }} return el ? {{ text: el.innerText ?? el.textContent ?? '' }} : {{ text: null }}; }})()"
        );
        let value = tab.evaluate_json(&expression).await?;
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            return Err(Error::invalid(format!("invalid selector: {error}")));
        }
        Ok(value
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    pub async fn dialog(&self, tab_id: &str) -> Result<Value> {
        let tab = self.tab(tab_id)?;
        Ok(match tab.pending_dialog() {
            Some(d) => {
                json!({ "present": true, "dialog_type": d.dialog_type, "message": d.message, "default_prompt": d.default_prompt })
            }
            None => json!({ "present": false }),
        })
    }

    pub async fn handle_dialog(
        &self,
        tab_id: &str,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Value> {
        use chromiumoxide::cdp::browser_protocol::page::HandleJavaScriptDialogParams;
        self.ensure_agent_mode()?;
        let tab = self.tab(tab_id)?;
        if tab.pending_dialog().is_none() {
            return Err(Error::new(
                ErrorCode::DialogNotPresent,
                format!("no dialog is open in tab {tab_id}"),
            ));
        }
        let mut params = HandleJavaScriptDialogParams::new(accept);
        params.prompt_text = prompt_text;
        tab.page.execute(params).await?;
        tab.clear_dialog();
        Ok(json!({ "success": true }))
    }
}

/// Rejects what the browser can't navigate to, before it tries.
fn check_url(url: &str) -> Result<()> {
    if url.is_empty() {
        return Err(Error::invalid("url must not be empty"));
    }
    let scheme_ok = url
        .split_once(':')
        .map(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
        .unwrap_or(false);
    if !scheme_ok {
        return Err(Error::invalid(format!(
            "url {url:?} has no scheme; use e.g. https://{url}"
        )));
    }
    Ok(())
}
