//! What the catalogue needs of an engine, as a trait: every operation runs
//! over `Arc<dyn Backend>`, so the frontends (REST, MCP, the agent's tools)
//! can be tested at the router without a browser, over a fake
//! (`wabp-rest`'s router tests). The engine implements it by handing each
//! call to `wabp_core::Engine`; nothing here decides anything.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use wabp_core::browser::BrowserOptions;
use wabp_core::capture::{Clip, Screenshot};
use wabp_core::downloads::{Download, DownloadDetail, DownloadState};
use wabp_core::engine::answers::{self, Done};
use wabp_core::engine::browser_info::{BrowserInfo, WindowBounds, WindowInfo, WindowState};
use wabp_core::engine::cookies::{Cookie, CookieFilter, NewCookie};
use wabp_core::engine::intercept::NewRule;
use wabp_core::engine::{BrowserStatus, CurlRequest, ImageFormat, InputMode, TabSummary};
use wabp_core::events::{FileChooser, StampedEvent};
use wabp_core::intercept::InterceptRule;
use wabp_core::network::NetworkCall;
use wabp_core::observe::SnapshotRequest;
use wabp_core::oneshot::{OneshotCapture, OneshotRequest};
use wabp_core::plugin::{PluginRegistry, Target};
use wabp_core::tab::frames::ExecutionState;
use wabp_core::{ActionOptions, Caller, Engine, Envelope, Result};

/// Held while a request is served; dropped, the request is done.
pub type ActivityGuard = Box<dyn Send + Sync>;

/// The engine as the catalogue uses it.
#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// The plugins: their actions, markup tags and wait types.
    fn registry(&self) -> Arc<dyn PluginRegistry>;
    /// How the browser is launched unless a start says otherwise.
    fn default_launch(&self) -> BrowserOptions;
    /// Where the session keeps history, downloads and uploads.
    fn session_dir(&self) -> PathBuf;
    /// This engine's name in a fleet; the ids it hands out end in it.
    fn engine_id(&self) -> wabp_core::ids::EngineId;
    /// Operations in flight, and whether the engine is draining.
    fn drain(&self) -> Arc<wabp_core::drain::Drain>;
    async fn activate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Activated>;
    fn active_tab(&self, caller: &Caller) -> Option<String>;
    async fn add_intercept_rule(&self, caller: &Caller, rule: NewRule) -> Result<InterceptRule>;
    async fn answer_file_chooser(
        &self,
        chooser_id: &str,
        files: Option<Vec<String>>,
        save_path: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done>;
    async fn answer_picker(
        &self,
        picker_id: &str,
        value: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done>;
    async fn answer_select(
        &self,
        popup_id: &str,
        indices: Option<Vec<u64>>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done>;
    async fn browser_info(&self) -> Result<BrowserInfo>;
    fn browser_running(&self) -> bool;
    async fn cancel_download(&self, caller: &Caller, id: &str) -> Result<answers::Done>;
    async fn close_tab(&self, caller: &Caller, tab_id: &str) -> Result<()>;
    fn configure_downloads(&self, caller: &Caller, path: &str) -> Result<PathBuf>;
    fn configure_file_chooser(
        &self,
        caller: &Caller,
        default_files: Option<Vec<String>>,
    ) -> Result<Option<Vec<String>>>;
    async fn cookies(&self, caller: &Caller, url: Option<&str>) -> Result<Vec<Cookie>>;
    async fn create_tab(
        &self,
        caller: &Caller,
        url: Option<&str>,
        active: bool,
        index: Option<usize>,
    ) -> Result<answers::CreatedTab>;
    async fn curl(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: CurlRequest,
    ) -> Result<answers::CurlAnswer>;
    async fn delete_cookies(&self, caller: &Caller, filter: CookieFilter) -> Result<usize>;
    async fn delete_intercept_rules(
        &self,
        caller: &Caller,
        id: Option<&str>,
        tab_id: Option<&str>,
    ) -> Result<usize>;
    async fn dialog(&self, caller: &Caller, tab_id: &str) -> Result<answers::DialogState>;
    fn download(&self, caller: &Caller, id: &str) -> Result<Download>;
    fn downloads(
        &self,
        state: Option<DownloadState>,
        limit: usize,
        caller: &Caller,
    ) -> Vec<Download>;
    fn downloads_dir(&self) -> PathBuf;
    async fn duplicate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::CreatedTab>;
    async fn element_region(&self, caller: &Caller, tab_id: &str, target: &Target) -> Result<Clip>;
    async fn execute(
        &self,
        caller: &Caller,
        tab_id: &str,
        script: &str,
        await_promise: bool,
    ) -> Result<(answers::Evaluation, Vec<StampedEvent>)>;
    async fn execution(&self, caller: &Caller, tab_id: &str) -> Result<ExecutionState>;
    async fn handle_dialog(
        &self,
        caller: &Caller,
        tab_id: &str,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Done>;
    async fn history_step(
        &self,
        caller: &Caller,
        tab_id: &str,
        step: i64,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    fn input_mode(&self) -> InputMode;
    fn intercept_rules(&self, caller: &Caller) -> Vec<InterceptRule>;
    fn launch_options(&self) -> BrowserOptions;
    async fn list_tabs(&self, caller: &Caller) -> Result<Vec<TabSummary>>;
    async fn mute_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        muted: bool,
    ) -> Result<answers::TabPlace>;
    async fn navigate(
        &self,
        caller: &Caller,
        tab_id: &str,
        url: &str,
        referrer: Option<&str>,
        accept_beforeunload: bool,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn oneshot_screenshot(&self, request: OneshotRequest) -> Result<OneshotCapture>;
    fn pending_file_choosers(&self, caller: &Caller) -> Vec<FileChooser>;
    async fn pin_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        pinned: bool,
    ) -> Result<answers::TabPlace>;
    async fn plain_screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        full_page: bool,
        format: ImageFormat,
    ) -> Result<(Vec<u8>, u32, u32)>;
    async fn plugin_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        name: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn reload(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn reorder_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        index: usize,
    ) -> Result<answers::TabPlace>;
    async fn resume_download(&self, caller: &Caller, id: &str) -> Result<DownloadDetail>;
    async fn save_network(&self, caller: &Caller, tab_id: Option<&str>, tag: &str)
    -> Result<usize>;
    async fn screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        markup: Vec<String>,
        cursor: bool,
        full_page: bool,
    ) -> Result<Screenshot>;
    async fn screenshot_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn set_cookies(&self, caller: &Caller, cookies: Vec<NewCookie>) -> Result<usize>;
    async fn set_execution(
        &self,
        caller: &Caller,
        tab_id: &str,
        paused: bool,
        initial_virtual_time: Option<f64>,
    ) -> Result<ExecutionState>;
    async fn set_input_mode(&self, mode: InputMode) -> Result<()>;
    async fn set_window_bounds(
        &self,
        caller: &Caller,
        tab_id: &str,
        bounds: WindowBounds,
    ) -> Result<WindowInfo>;
    async fn set_window_state(
        &self,
        caller: &Caller,
        tab_id: &str,
        state: WindowState,
    ) -> Result<WindowInfo>;
    async fn shutdown(&self, timeout: Duration);
    async fn snapshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: SnapshotRequest,
    ) -> Result<Value>;
    async fn start_browser(&self, options: Option<BrowserOptions>) -> Result<()>;
    async fn state(&self, caller: &Caller, tab_id: &str) -> Result<Value>;
    async fn state_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        action: &Value,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    fn status(&self) -> BrowserStatus;
    async fn stop_browser(&self);
    async fn stop_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Stopped>;
    async fn tab_info(&self, caller: &Caller, tab_id: &str) -> Result<answers::TabInfo>;
    fn tab_network(&self, caller: &Caller, tab_id: &str) -> Result<(Vec<NetworkCall>, u64)>;
    fn tab_url(&self, caller: &Caller, tab_id: &str) -> Option<String>;
    async fn text(
        &self,
        caller: &Caller,
        tab_id: &str,
        selector: Option<&str>,
        element_ref: Option<&str>,
    ) -> Result<Option<String>>;
    async fn wait(
        &self,
        caller: &Caller,
        tab_id: &str,
        ms: u64,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn wait_download(
        &self,
        caller: &Caller,
        id: &str,
        timeout: Duration,
    ) -> Result<(Download, bool)>;
    async fn wait_for(
        &self,
        caller: &Caller,
        tab_id: &str,
        wait_type: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope>;
    async fn window(&self, caller: &Caller, tab_id: &str) -> Result<WindowInfo>;
    /// Marks the user's session busy until the guard is dropped.
    fn user_activity(&self, user: &str) -> ActivityGuard;
}

#[async_trait]
impl Backend for Arc<Engine> {
    fn registry(&self) -> Arc<dyn PluginRegistry> {
        self.registry.clone()
    }

    fn default_launch(&self) -> BrowserOptions {
        self.config.browser.clone()
    }

    fn session_dir(&self) -> PathBuf {
        self.config.session_dir.clone()
    }

    fn engine_id(&self) -> wabp_core::ids::EngineId {
        Engine::engine_id(self).clone()
    }

    fn drain(&self) -> Arc<wabp_core::drain::Drain> {
        Engine::drain(self).clone()
    }

    async fn activate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Activated> {
        Engine::activate_tab(self, caller, tab_id).await
    }

    fn active_tab(&self, caller: &Caller) -> Option<String> {
        Engine::active_tab(self, caller)
    }

    async fn add_intercept_rule(&self, caller: &Caller, rule: NewRule) -> Result<InterceptRule> {
        Engine::add_intercept_rule(self, caller, rule).await
    }

    async fn answer_file_chooser(
        &self,
        chooser_id: &str,
        files: Option<Vec<String>>,
        save_path: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        Engine::answer_file_chooser(self, chooser_id, files, save_path, cancel, caller).await
    }

    async fn answer_picker(
        &self,
        picker_id: &str,
        value: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        Engine::answer_picker(self, picker_id, value, cancel, caller).await
    }

    async fn answer_select(
        &self,
        popup_id: &str,
        indices: Option<Vec<u64>>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        Engine::answer_select(self, popup_id, indices, cancel, caller).await
    }

    async fn browser_info(&self) -> Result<BrowserInfo> {
        Engine::browser_info(self).await
    }

    fn browser_running(&self) -> bool {
        Engine::browser_running(self)
    }

    async fn cancel_download(&self, caller: &Caller, id: &str) -> Result<answers::Done> {
        Engine::cancel_download(self, caller, id).await
    }

    async fn close_tab(&self, caller: &Caller, tab_id: &str) -> Result<()> {
        Engine::close_tab(self, caller, tab_id).await
    }

    fn configure_downloads(&self, caller: &Caller, path: &str) -> Result<PathBuf> {
        Engine::configure_downloads(self, caller, path)
    }

    fn configure_file_chooser(
        &self,
        caller: &Caller,
        default_files: Option<Vec<String>>,
    ) -> Result<Option<Vec<String>>> {
        Engine::configure_file_chooser(self, caller, default_files)
    }

    async fn cookies(&self, caller: &Caller, url: Option<&str>) -> Result<Vec<Cookie>> {
        Engine::cookies(self, caller, url).await
    }

    async fn create_tab(
        &self,
        caller: &Caller,
        url: Option<&str>,
        active: bool,
        index: Option<usize>,
    ) -> Result<answers::CreatedTab> {
        Engine::create_tab(self, caller, url, active, index).await
    }

    async fn curl(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: CurlRequest,
    ) -> Result<answers::CurlAnswer> {
        Engine::curl(self, caller, tab_id, request).await
    }

    async fn delete_cookies(&self, caller: &Caller, filter: CookieFilter) -> Result<usize> {
        Engine::delete_cookies(self, caller, filter).await
    }

    async fn delete_intercept_rules(
        &self,
        caller: &Caller,
        id: Option<&str>,
        tab_id: Option<&str>,
    ) -> Result<usize> {
        Engine::delete_intercept_rules(self, caller, id, tab_id).await
    }

    async fn dialog(&self, caller: &Caller, tab_id: &str) -> Result<answers::DialogState> {
        Engine::dialog(self, caller, tab_id).await
    }

    fn download(&self, caller: &Caller, id: &str) -> Result<Download> {
        Engine::download(self, caller, id)
    }

    fn downloads(
        &self,
        state: Option<DownloadState>,
        limit: usize,
        caller: &Caller,
    ) -> Vec<Download> {
        Engine::downloads(self, state, limit, caller)
    }

    fn downloads_dir(&self) -> PathBuf {
        Engine::downloads_dir(self)
    }

    async fn duplicate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::CreatedTab> {
        Engine::duplicate_tab(self, caller, tab_id).await
    }

    async fn element_region(&self, caller: &Caller, tab_id: &str, target: &Target) -> Result<Clip> {
        Engine::element_region(self, caller, tab_id, target).await
    }

    async fn execute(
        &self,
        caller: &Caller,
        tab_id: &str,
        script: &str,
        await_promise: bool,
    ) -> Result<(answers::Evaluation, Vec<StampedEvent>)> {
        Engine::execute(self, caller, tab_id, script, await_promise).await
    }

    async fn execution(&self, caller: &Caller, tab_id: &str) -> Result<ExecutionState> {
        Engine::execution(self, caller, tab_id).await
    }

    async fn handle_dialog(
        &self,
        caller: &Caller,
        tab_id: &str,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Done> {
        Engine::handle_dialog(self, caller, tab_id, accept, prompt_text).await
    }

    async fn history_step(
        &self,
        caller: &Caller,
        tab_id: &str,
        step: i64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::history_step(self, caller, tab_id, step, options).await
    }

    fn input_mode(&self) -> InputMode {
        Engine::input_mode(self)
    }

    fn intercept_rules(&self, caller: &Caller) -> Vec<InterceptRule> {
        Engine::intercept_rules(self, caller)
    }

    fn launch_options(&self) -> BrowserOptions {
        Engine::launch_options(self)
    }

    async fn list_tabs(&self, caller: &Caller) -> Result<Vec<TabSummary>> {
        Engine::list_tabs(self, caller).await
    }

    async fn mute_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        muted: bool,
    ) -> Result<answers::TabPlace> {
        Engine::mute_tab(self, caller, tab_id, muted).await
    }

    async fn navigate(
        &self,
        caller: &Caller,
        tab_id: &str,
        url: &str,
        referrer: Option<&str>,
        accept_beforeunload: bool,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::navigate(
            self,
            caller,
            tab_id,
            url,
            referrer,
            accept_beforeunload,
            options,
        )
        .await
    }

    async fn oneshot_screenshot(&self, request: OneshotRequest) -> Result<OneshotCapture> {
        Engine::oneshot_screenshot(self, request).await
    }

    fn pending_file_choosers(&self, caller: &Caller) -> Vec<FileChooser> {
        Engine::pending_file_choosers(self, caller)
    }

    async fn pin_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        pinned: bool,
    ) -> Result<answers::TabPlace> {
        Engine::pin_tab(self, caller, tab_id, pinned).await
    }

    async fn plain_screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        full_page: bool,
        format: ImageFormat,
    ) -> Result<(Vec<u8>, u32, u32)> {
        Engine::plain_screenshot(self, caller, tab_id, full_page, format).await
    }

    async fn plugin_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        name: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::plugin_action(self, caller, tab_id, name, params, options).await
    }

    async fn reload(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::reload(self, caller, tab_id, options).await
    }

    async fn reorder_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        index: usize,
    ) -> Result<answers::TabPlace> {
        Engine::reorder_tab(self, caller, tab_id, index).await
    }

    async fn resume_download(&self, caller: &Caller, id: &str) -> Result<DownloadDetail> {
        Engine::resume_download(self, caller, id).await
    }

    async fn save_network(
        &self,
        caller: &Caller,
        tab_id: Option<&str>,
        tag: &str,
    ) -> Result<usize> {
        Engine::save_network(self, caller, tab_id, tag).await
    }

    async fn screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        markup: Vec<String>,
        cursor: bool,
        full_page: bool,
    ) -> Result<Screenshot> {
        Engine::screenshot(self, caller, tab_id, markup, cursor, full_page).await
    }

    async fn screenshot_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::screenshot_action(self, caller, tab_id, options).await
    }

    async fn set_cookies(&self, caller: &Caller, cookies: Vec<NewCookie>) -> Result<usize> {
        Engine::set_cookies(self, caller, cookies).await
    }

    async fn set_execution(
        &self,
        caller: &Caller,
        tab_id: &str,
        paused: bool,
        initial_virtual_time: Option<f64>,
    ) -> Result<ExecutionState> {
        Engine::set_execution(self, caller, tab_id, paused, initial_virtual_time).await
    }

    async fn set_input_mode(&self, mode: InputMode) -> Result<()> {
        Engine::set_input_mode(self, mode).await
    }

    async fn set_window_bounds(
        &self,
        caller: &Caller,
        tab_id: &str,
        bounds: WindowBounds,
    ) -> Result<WindowInfo> {
        Engine::set_window_bounds(self, caller, tab_id, bounds).await
    }

    async fn set_window_state(
        &self,
        caller: &Caller,
        tab_id: &str,
        state: WindowState,
    ) -> Result<WindowInfo> {
        Engine::set_window_state(self, caller, tab_id, state).await
    }

    async fn shutdown(&self, timeout: Duration) {
        Engine::shutdown(self, timeout).await
    }

    async fn snapshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: SnapshotRequest,
    ) -> Result<Value> {
        Engine::snapshot(self, caller, tab_id, request).await
    }

    async fn start_browser(&self, options: Option<BrowserOptions>) -> Result<()> {
        Engine::start_browser(self, options).await
    }

    async fn state(&self, caller: &Caller, tab_id: &str) -> Result<Value> {
        Engine::state(self, caller, tab_id).await
    }

    async fn state_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        action: &Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::state_action(self, caller, tab_id, action, options).await
    }

    fn status(&self) -> BrowserStatus {
        Engine::status(self)
    }

    async fn stop_browser(&self) {
        Engine::stop_browser(self).await
    }

    async fn stop_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Stopped> {
        Engine::stop_tab(self, caller, tab_id).await
    }

    async fn tab_info(&self, caller: &Caller, tab_id: &str) -> Result<answers::TabInfo> {
        Engine::tab_info(self, caller, tab_id).await
    }

    fn tab_network(&self, caller: &Caller, tab_id: &str) -> Result<(Vec<NetworkCall>, u64)> {
        Engine::tab_network(self, caller, tab_id)
    }

    fn tab_url(&self, caller: &Caller, tab_id: &str) -> Option<String> {
        Engine::tab_url(self, caller, tab_id)
    }

    async fn text(
        &self,
        caller: &Caller,
        tab_id: &str,
        selector: Option<&str>,
        element_ref: Option<&str>,
    ) -> Result<Option<String>> {
        Engine::text(self, caller, tab_id, selector, element_ref).await
    }

    async fn wait(
        &self,
        caller: &Caller,
        tab_id: &str,
        ms: u64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::wait(self, caller, tab_id, ms, options).await
    }

    async fn wait_download(
        &self,
        caller: &Caller,
        id: &str,
        timeout: Duration,
    ) -> Result<(Download, bool)> {
        Engine::wait_download(self, caller, id, timeout).await
    }

    async fn wait_for(
        &self,
        caller: &Caller,
        tab_id: &str,
        wait_type: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        Engine::wait_for(self, caller, tab_id, wait_type, params, options).await
    }

    async fn window(&self, caller: &Caller, tab_id: &str) -> Result<WindowInfo> {
        Engine::window(self, caller, tab_id).await
    }

    fn user_activity(&self, user: &str) -> ActivityGuard {
        Box::new(Engine::user_activity(self, user))
    }
}
