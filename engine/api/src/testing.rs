//! A fake engine for frontend tests: a [`Backend`] with a tab table and
//! nothing else, so that REST and MCP can be driven at the router without a
//! browser (routing, statuses, scopes, narrowing by caller, error mapping).
//! Tabs belong to the user that opened them, as in the engine; `execute`
//! fails the way the engine's failures do (an internal failure with a
//! message the client must not see, or a dialog in the way); every other
//! operation answers that the fake does not do it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use wabp_core::browser::BrowserOptions;
use wabp_core::capture::{Clip, Screenshot};
use wabp_core::downloads::{Download, DownloadDetail, DownloadState};
use wabp_core::engine::answers::{self, Done};
use wabp_core::engine::browser_info::{BrowserInfo, WindowBounds, WindowInfo, WindowState};
use wabp_core::engine::cookies::{Cookie, CookieFilter, NewCookie};
use wabp_core::engine::intercept::NewRule;
use wabp_core::engine::{
    BrowserStatus, Components, CurlRequest, ImageFormat, InputMode, TabSummary,
};
use wabp_core::events::{FileChooser, StampedEvent};
use wabp_core::intercept::InterceptRule;
use wabp_core::network::NetworkCall;
use wabp_core::observe::SnapshotRequest;
use wabp_core::oneshot::{OneshotCapture, OneshotRequest};
use wabp_core::plugin::{
    ActionHandler, ActionSpec, MarkupRenderer, PluginInfo, PluginRegistry, Target, WaitHeuristic,
    WaitSpec,
};
use wabp_core::tab::frames::ExecutionState;
use wabp_core::{ActionOptions, Caller, Envelope, Error, ErrorCode, Result};

use crate::backend::{ActivityGuard, Backend};

/// A registry without plugins.
pub struct NoPlugins;

impl PluginRegistry for NoPlugins {
    fn action(&self, _: &str) -> Option<Arc<dyn ActionHandler>> {
        None
    }
    fn actions(&self) -> Vec<ActionSpec> {
        Vec::new()
    }
    fn markup(&self, _: &str) -> Option<Arc<dyn MarkupRenderer>> {
        None
    }
    fn markup_tags(&self) -> Vec<String> {
        Vec::new()
    }
    fn wait(&self, _: &str) -> Option<Arc<dyn WaitHeuristic>> {
        None
    }
    fn waits(&self) -> Vec<WaitSpec> {
        Vec::new()
    }
    fn plugins(&self) -> Vec<PluginInfo> {
        Vec::new()
    }
    fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        tokio::sync::watch::channel(0).1
    }
}

/// What `execute` answers when its script is one of these.
pub const FAIL_INTERNALLY: &str = "fail internally";
/// The message of that internal failure, which no client may see.
pub const INTERNAL_DETAIL: &str = "browser: socket /tmp/secret-path closed";
pub const DIALOG_IN_THE_WAY: &str = "open a dialog";

struct FakeTab {
    id: String,
    url: String,
    owner: Option<String>,
}

/// The fake engine.
pub struct FakeEngine {
    registry: Arc<dyn PluginRegistry>,
    tabs: Mutex<Vec<FakeTab>>,
    active: Mutex<Vec<(Option<String>, String)>>,
    next: Mutex<u32>,
    drain: Arc<wabp_core::drain::Drain>,
}

impl FakeEngine {
    pub fn new(registry: Arc<dyn PluginRegistry>) -> FakeEngine {
        FakeEngine {
            registry,
            tabs: Mutex::new(Vec::new()),
            active: Mutex::new(Vec::new()),
            next: Mutex::new(0),
            drain: Default::default(),
        }
    }

    fn owner(caller: &Caller) -> Option<String> {
        caller.user_id().map(str::to_string)
    }

    /// The caller's tab, or the engine's answer for someone else's.
    fn find(&self, caller: &Caller, tab_id: &str) -> Result<(String, String)> {
        self.tabs
            .lock()
            .iter()
            .find(|t| t.id == tab_id && t.owner == Self::owner(caller))
            .map(|t| (t.id.clone(), t.url.clone()))
            .ok_or_else(|| Error::tab_not_found(tab_id))
    }
}

fn unfaked(operation: &str) -> Error {
    Error::new(
        ErrorCode::NotReady,
        format!("the fake engine does not do {operation}"),
    )
}

#[async_trait]
impl Backend for FakeEngine {
    fn registry(&self) -> Arc<dyn PluginRegistry> {
        self.registry.clone()
    }

    fn default_launch(&self) -> BrowserOptions {
        BrowserOptions::default()
    }

    fn session_dir(&self) -> PathBuf {
        std::env::temp_dir()
    }

    fn engine_id(&self) -> wabp_core::ids::EngineId {
        wabp_core::ids::EngineId::new("fake").expect("a valid engine id")
    }

    fn drain(&self) -> Arc<wabp_core::drain::Drain> {
        self.drain.clone()
    }

    async fn list_tabs(&self, caller: &Caller) -> Result<Vec<TabSummary>> {
        let active = self.active_tab(caller);
        Ok(self
            .tabs
            .lock()
            .iter()
            .filter(|t| t.owner == Self::owner(caller))
            .map(|t| TabSummary {
                id: t.id.clone(),
                url: t.url.clone(),
                title: String::new(),
                active: active.as_deref() == Some(t.id.as_str()),
                pinned: false,
                muted: false,
            })
            .collect())
    }

    async fn tab_info(&self, caller: &Caller, tab_id: &str) -> Result<answers::TabInfo> {
        let (id, url) = self.find(caller, tab_id)?;
        Ok(answers::TabInfo {
            id,
            url,
            title: String::new(),
            loading: false,
            pinned: false,
            muted: false,
        })
    }

    async fn create_tab(
        &self,
        caller: &Caller,
        url: Option<&str>,
        _active: bool,
        _index: Option<usize>,
    ) -> Result<answers::CreatedTab> {
        let id = {
            let mut next = self.next.lock();
            *next += 1;
            format!("tab_fake{next}")
        };
        let url = url.unwrap_or("about:blank").to_string();
        self.tabs.lock().push(FakeTab {
            id: id.clone(),
            url: url.clone(),
            owner: Self::owner(caller),
        });
        let mut active = self.active.lock();
        active.retain(|(owner, _)| *owner != Self::owner(caller));
        active.push((Self::owner(caller), id.clone()));
        Ok(answers::CreatedTab { id, url })
    }

    async fn close_tab(&self, caller: &Caller, tab_id: &str) -> Result<()> {
        self.find(caller, tab_id)?;
        self.tabs.lock().retain(|t| t.id != tab_id);
        self.active.lock().retain(|(_, id)| id != tab_id);
        Ok(())
    }

    fn active_tab(&self, caller: &Caller) -> Option<String> {
        self.active
            .lock()
            .iter()
            .find(|(owner, _)| *owner == Self::owner(caller))
            .map(|(_, id)| id.clone())
    }

    async fn activate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Activated> {
        let (id, _) = self.find(caller, tab_id)?;
        Ok(answers::Activated {
            status: "activated".into(),
            tab_id: id,
            index: 0,
        })
    }

    fn tab_url(&self, caller: &Caller, tab_id: &str) -> Option<String> {
        self.find(caller, tab_id).ok().map(|(_, url)| url)
    }

    fn status(&self) -> BrowserStatus {
        BrowserStatus {
            ready: true,
            state: "ready".into(),
            components: Components {
                http_server: true,
                browser_window: true,
                devtools: true,
            },
            message: None,
            frame_driver: "fake".into(),
            executable: None,
            restarts: 0,
            sandbox: Default::default(),
            site_isolation: false,
        }
    }

    fn browser_running(&self) -> bool {
        true
    }

    fn user_activity(&self, _user: &str) -> ActivityGuard {
        Box::new(())
    }

    async fn execute(
        &self,
        caller: &Caller,
        tab_id: &str,
        script: &str,
        _await_promise: bool,
    ) -> Result<(answers::Evaluation, Vec<StampedEvent>)> {
        self.find(caller, tab_id)?;
        Err(match script {
            FAIL_INTERNALLY => Error::internal(INTERNAL_DETAIL),
            DIALOG_IN_THE_WAY => Error::dialog_blocks(tab_id),
            _ => unfaked("execute"),
        })
    }

    async fn dialog(&self, caller: &Caller, tab_id: &str) -> Result<answers::DialogState> {
        self.find(caller, tab_id)?;
        Err(unfaked("dialog"))
    }

    async fn text(
        &self,
        caller: &Caller,
        tab_id: &str,
        _selector: Option<&str>,
        _element_ref: Option<&str>,
    ) -> Result<Option<String>> {
        self.find(caller, tab_id)?;
        Ok(Some("fake text".into()))
    }

    fn downloads_dir(&self) -> PathBuf {
        std::env::temp_dir()
    }

    fn input_mode(&self) -> InputMode {
        InputMode::Agent
    }

    fn launch_options(&self) -> BrowserOptions {
        BrowserOptions::default()
    }

    fn intercept_rules(&self, _caller: &Caller) -> Vec<InterceptRule> {
        Vec::new()
    }

    fn pending_file_choosers(&self, _caller: &Caller) -> Vec<FileChooser> {
        Vec::new()
    }

    fn downloads(
        &self,
        _state: Option<DownloadState>,
        _limit: usize,
        _caller: &Caller,
    ) -> Vec<Download> {
        Vec::new()
    }

    async fn add_intercept_rule(&self, _caller: &Caller, _rule: NewRule) -> Result<InterceptRule> {
        Err(unfaked("add_intercept_rule"))
    }

    async fn answer_file_chooser(
        &self,
        _chooser_id: &str,
        _files: Option<Vec<String>>,
        _save_path: Option<String>,
        _cancel: bool,
        _caller: &Caller,
    ) -> Result<Done> {
        Err(unfaked("answer_file_chooser"))
    }

    async fn answer_picker(
        &self,
        _picker_id: &str,
        _value: Option<String>,
        _cancel: bool,
        _caller: &Caller,
    ) -> Result<Done> {
        Err(unfaked("answer_picker"))
    }

    async fn answer_select(
        &self,
        _popup_id: &str,
        _indices: Option<Vec<u64>>,
        _cancel: bool,
        _caller: &Caller,
    ) -> Result<Done> {
        Err(unfaked("answer_select"))
    }

    async fn browser_info(&self) -> Result<BrowserInfo> {
        Err(unfaked("browser_info"))
    }

    async fn cancel_download(&self, _caller: &Caller, _id: &str) -> Result<answers::Done> {
        Err(unfaked("cancel_download"))
    }

    fn configure_downloads(&self, _caller: &Caller, _path: &str) -> Result<PathBuf> {
        Err(unfaked("configure_downloads"))
    }

    fn configure_file_chooser(
        &self,
        _caller: &Caller,
        _default_files: Option<Vec<String>>,
    ) -> Result<Option<Vec<String>>> {
        Err(unfaked("configure_file_chooser"))
    }

    async fn cookies(&self, _caller: &Caller, _url: Option<&str>) -> Result<Vec<Cookie>> {
        Err(unfaked("cookies"))
    }

    async fn curl(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _request: CurlRequest,
    ) -> Result<answers::CurlAnswer> {
        Err(unfaked("curl"))
    }

    async fn delete_cookies(&self, _caller: &Caller, _filter: CookieFilter) -> Result<usize> {
        Err(unfaked("delete_cookies"))
    }

    async fn delete_intercept_rules(
        &self,
        _caller: &Caller,
        _id: Option<&str>,
        _tab_id: Option<&str>,
    ) -> Result<usize> {
        Err(unfaked("delete_intercept_rules"))
    }

    fn download(&self, _caller: &Caller, _id: &str) -> Result<Download> {
        Err(unfaked("download"))
    }

    async fn duplicate_tab(&self, _caller: &Caller, _tab_id: &str) -> Result<answers::CreatedTab> {
        Err(unfaked("duplicate_tab"))
    }

    async fn element_region(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _target: &Target,
    ) -> Result<Clip> {
        Err(unfaked("element_region"))
    }

    async fn execution(&self, _caller: &Caller, _tab_id: &str) -> Result<ExecutionState> {
        Err(unfaked("execution"))
    }

    async fn handle_dialog(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _accept: bool,
        _prompt_text: Option<String>,
    ) -> Result<Done> {
        Err(unfaked("handle_dialog"))
    }

    async fn history_step(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _step: i64,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("history_step"))
    }

    async fn mute_tab(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _muted: bool,
    ) -> Result<answers::TabPlace> {
        Err(unfaked("mute_tab"))
    }

    async fn navigate(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _url: &str,
        _referrer: Option<&str>,
        _accept_beforeunload: bool,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("navigate"))
    }

    async fn oneshot_screenshot(&self, _request: OneshotRequest) -> Result<OneshotCapture> {
        Err(unfaked("oneshot_screenshot"))
    }

    async fn pin_tab(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _pinned: bool,
    ) -> Result<answers::TabPlace> {
        Err(unfaked("pin_tab"))
    }

    async fn plain_screenshot(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _full_page: bool,
        _format: ImageFormat,
    ) -> Result<(Vec<u8>, u32, u32)> {
        Err(unfaked("plain_screenshot"))
    }

    async fn plugin_action(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _name: &str,
        _params: Value,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("plugin_action"))
    }

    async fn reload(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("reload"))
    }

    async fn reorder_tab(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _index: usize,
    ) -> Result<answers::TabPlace> {
        Err(unfaked("reorder_tab"))
    }

    async fn resume_download(&self, _caller: &Caller, _id: &str) -> Result<DownloadDetail> {
        Err(unfaked("resume_download"))
    }

    async fn save_network(
        &self,
        _caller: &Caller,
        _tab_id: Option<&str>,
        _tag: &str,
    ) -> Result<usize> {
        Err(unfaked("save_network"))
    }

    async fn screenshot(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _markup: Vec<String>,
        _cursor: bool,
        _full_page: bool,
    ) -> Result<Screenshot> {
        Err(unfaked("screenshot"))
    }

    async fn screenshot_action(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("screenshot_action"))
    }

    async fn set_cookies(&self, _caller: &Caller, _cookies: Vec<NewCookie>) -> Result<usize> {
        Err(unfaked("set_cookies"))
    }

    async fn set_execution(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _paused: bool,
        _initial_virtual_time: Option<f64>,
    ) -> Result<ExecutionState> {
        Err(unfaked("set_execution"))
    }

    async fn set_input_mode(&self, _mode: InputMode) -> Result<()> {
        Err(unfaked("set_input_mode"))
    }

    async fn set_window_bounds(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _bounds: WindowBounds,
    ) -> Result<WindowInfo> {
        Err(unfaked("set_window_bounds"))
    }

    async fn set_window_state(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _state: WindowState,
    ) -> Result<WindowInfo> {
        Err(unfaked("set_window_state"))
    }

    async fn shutdown(&self, _timeout: Duration) {}

    async fn snapshot(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _request: SnapshotRequest,
    ) -> Result<Value> {
        Err(unfaked("snapshot"))
    }

    async fn start_browser(&self, _options: Option<BrowserOptions>) -> Result<()> {
        Err(unfaked("start_browser"))
    }

    async fn state(&self, _caller: &Caller, _tab_id: &str) -> Result<Value> {
        Err(unfaked("state"))
    }

    async fn state_action(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _action: &Value,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("state_action"))
    }

    async fn stop_browser(&self) {}

    async fn stop_tab(&self, _caller: &Caller, _tab_id: &str) -> Result<answers::Stopped> {
        Err(unfaked("stop_tab"))
    }

    fn tab_network(&self, _caller: &Caller, _tab_id: &str) -> Result<(Vec<NetworkCall>, u64)> {
        Err(unfaked("tab_network"))
    }

    async fn wait(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _ms: u64,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("wait"))
    }

    async fn wait_download(
        &self,
        _caller: &Caller,
        _id: &str,
        _timeout: Duration,
    ) -> Result<(Download, bool)> {
        Err(unfaked("wait_download"))
    }

    async fn wait_for(
        &self,
        _caller: &Caller,
        _tab_id: &str,
        _wait_type: &str,
        _params: Value,
        _options: &ActionOptions,
    ) -> Result<Envelope> {
        Err(unfaked("wait_for"))
    }

    async fn window(&self, _caller: &Caller, _tab_id: &str) -> Result<WindowInfo> {
        Err(unfaked("window"))
    }
}
