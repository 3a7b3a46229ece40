//! The plugin traits the action loop runs on. `wabp-core` knows nothing of
//! WebAssembly: the plugin host implements these traits for components, and
//! unit tests implement them natively.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorCode};

/// One action a handler provides, as it describes itself.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ActionSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the params object.
    pub params_schema: Value,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WaitSpec {
    pub name: String,
    pub description: String,
    pub params_schema: Value,
}

#[derive(Debug, Clone)]
pub struct ActionContext {
    pub tab_id: String,
    pub pointer: (f64, f64),
}

/// A failure a plugin reports, or one the host reports for it (trap, deadline,
/// memory). Always names the plugin.
#[derive(Debug, Clone)]
pub struct PluginFailure {
    pub plugin: String,
    pub code: ErrorCode,
    pub message: String,
}

impl From<PluginFailure> for Error {
    fn from(f: PluginFailure) -> Self {
        let message = if f.code == ErrorCode::PluginFailed {
            format!("plugin {}: {}", f.plugin, f.message)
        } else {
            f.message
        };
        Error::new(f.code, message)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    None,
    #[default]
    Left,
    Right,
    Middle,
}

/// Modifier keys held during an input event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    pub alt: bool,
    pub control: bool,
    pub meta: bool,
    pub shift: bool,
}

impl Modifiers {
    /// Held in either.
    pub fn union(self, other: Modifiers) -> Modifiers {
        Modifiers {
            alt: self.alt || other.alt,
            control: self.control || other.control,
            meta: self.meta || other.meta,
            shift: self.shift || other.shift,
        }
    }

    /// Sets or clears the flag of a modifier key (`Shift`, `Control`,
    /// `Alt`, `Meta`); any other key changes nothing.
    pub fn set(&mut self, key: &str, held: bool) {
        match key {
            "Alt" => self.alt = held,
            "Control" => self.control = held,
            "Meta" => self.meta = held,
            "Shift" => self.shift = held,
            _ => {}
        }
    }

    /// The CDP bit mask: Alt=1, Ctrl=2, Meta=4, Shift=8.
    pub fn cdp_mask(self) -> i64 {
        (self.alt as i64)
            | (self.control as i64) << 1
            | (self.meta as i64) << 2
            | (self.shift as i64) << 3
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ElementBox {
    pub rect: Rect,
    pub tag: String,
    pub visible: bool,
    pub in_viewport: bool,
    pub text: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ViewportInfo {
    pub width: f64,
    pub height: f64,
    pub scroll_x: f64,
    pub scroll_y: f64,
    pub page_width: f64,
    pub page_height: f64,
    pub device_scale_factor: f64,
}

/// What a host capability call can fail with; mirrors the WIT `host-error`.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    Denied(String),
    Invalid(String),
    Failed(String),
    StaleRef(String),
    SelectorNotFound(String),
    ElementNotVisible(String),
    ElementNotInteractable(String),
}

impl From<Error> for HostError {
    fn from(e: Error) -> Self {
        match e.code {
            ErrorCode::InvalidRequest => HostError::Invalid(e.message),
            ErrorCode::SelectorNotFound => HostError::SelectorNotFound(e.message),
            ErrorCode::StaleRef => HostError::StaleRef(e.message),
            ErrorCode::ElementNotVisible => HostError::ElementNotVisible(e.message),
            ErrorCode::ElementNotInteractable => HostError::ElementNotInteractable(e.message),
            _ => HostError::Failed(e.message),
        }
    }
}

impl From<HostError> for Error {
    fn from(e: HostError) -> Self {
        match e {
            HostError::Invalid(m) => Error::new(ErrorCode::InvalidRequest, m),
            HostError::SelectorNotFound(m) => Error::new(ErrorCode::SelectorNotFound, m),
            HostError::StaleRef(m) => Error::new(ErrorCode::StaleRef, m),
            HostError::ElementNotVisible(m) => Error::new(ErrorCode::ElementNotVisible, m),
            HostError::ElementNotInteractable(m) => {
                Error::new(ErrorCode::ElementNotInteractable, m)
            }
            HostError::Denied(m) | HostError::Failed(m) => Error::new(ErrorCode::Internal, m),
        }
    }
}

/// What an action acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// `e7`, or `f1e7` for an element inside a frame.
    Ref(String),
    Selector(String),
}

/// A target resolved to the point an action should use.
#[derive(Debug, Clone)]
pub struct Located {
    pub x: f64,
    pub y: f64,
    pub element: ElementBox,
}

pub type HostResult<T> = std::result::Result<T, HostError>;

/// What an action plugin may do to its tab. Implemented by core for a live
/// tab; the plugin host forwards the WIT imports here after checking grants.
#[async_trait]
pub trait PageHost: Send + Sync {
    async fn mouse_move(&self, x: f64, y: f64) -> HostResult<()>;
    async fn mouse_down(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> HostResult<()>;
    async fn mouse_up(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> HostResult<()>;
    async fn mouse_wheel(
        &self,
        x: f64,
        y: f64,
        delta_x: f64,
        delta_y: f64,
        modifiers: Modifiers,
    ) -> HostResult<()>;
    async fn key_down(&self, key: &str, modifiers: Modifiers) -> HostResult<()>;
    async fn key_up(&self, key: &str, modifiers: Modifiers) -> HostResult<()>;
    async fn key_press(&self, key: &str, modifiers: Modifiers) -> HostResult<()>;
    async fn insert_text(&self, text: &str) -> HostResult<()>;
    /// Lets `ms` of the page's time pass between input events: a jump of
    /// the page clock where the tab has one, else a real wait.
    async fn pause(&self, ms: u32) -> HostResult<()>;
    async fn query_selector_all(&self, selector: &str) -> HostResult<Vec<ElementBox>>;
    async fn element_at(&self, x: f64, y: f64) -> HostResult<Option<ElementBox>>;
    async fn viewport(&self) -> HostResult<ViewportInfo>;
    async fn scroll_into_view(&self, selector: &str) -> HostResult<ElementBox>;
    /// Resolves a ref or selector to a point, scrolling it into view first.
    async fn locate(&self, target: &Target) -> HostResult<Located>;
    /// Focuses the target, selecting its content or putting the caret at the end.
    async fn focus(&self, target: &Target, select_all: bool) -> HostResult<ElementBox>;
    async fn dispatch_change(&self, target: &Target) -> HostResult<()>;
    /// Sets a date, time, color or range input's value (see the WIT's
    /// `set-value`); `false` for an element that takes text.
    async fn set_value(&self, target: &Target, value: &str) -> HostResult<bool>;
    /// The target's value or editable text; `None` for other elements.
    async fn value_of(&self, target: &Target) -> HostResult<Option<String>>;
    /// Returns the value as JSON text.
    async fn evaluate(&self, expression: &str) -> HostResult<String>;
    async fn navigate(&self, url: &str, referrer: Option<&str>) -> HostResult<()>;
    async fn back(&self) -> HostResult<()>;
    async fn forward(&self) -> HostResult<()>;
    async fn reload(&self) -> HostResult<()>;
}

#[async_trait]
pub trait ActionHandler: Send + Sync {
    /// The plugin's name, for errors and logs.
    fn plugin_name(&self) -> &str;
    async fn run(
        &self,
        action: &str,
        params: Value,
        context: ActionContext,
        host: Arc<dyn PageHost>,
    ) -> Result<Value, PluginFailure>;
}

/// An element as markup renderers see it.
#[derive(Debug, Clone, Serialize)]
pub struct MarkupElement {
    pub index: u32,
    pub rect: Rect,
    pub tag: String,
    pub role: String,
    pub name: String,
    pub href: Option<String>,
    pub clickable: bool,
    pub typeable: bool,
    pub scrollable: bool,
    pub focused: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Rect {
        rect: Rect,
        stroke: Option<Color>,
        stroke_width: f32,
        fill: Option<Color>,
        dash: Vec<f32>,
    },
    Label {
        x: f64,
        y: f64,
        text: String,
        color: Color,
        background: Option<Color>,
        size: f32,
    },
    Line {
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        color: Color,
        width: f32,
    },
}

#[async_trait]
pub trait MarkupRenderer: Send + Sync {
    fn plugin_name(&self) -> &str;
    async fn render(
        &self,
        tags: &[String],
        viewport: (f64, f64),
        elements: &[MarkupElement],
    ) -> Result<Vec<Shape>, PluginFailure>;
}

/// A network request as wait heuristics see it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestInfo {
    pub id: String,
    pub url: String,
    pub resource_type: String,
    pub same_site: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WaitSignal {
    RequestStarted(RequestInfo),
    RequestFinished(String),
    NavigationStarted(String),
    NavigationCommitted(String),
    DomContentLoaded,
    Load,
    DialogOpened,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WaitDecision {
    Pending { recheck_after_ms: u32 },
    Done { reason: String },
}

#[async_trait]
pub trait WaitHeuristic: Send + Sync {
    fn plugin_name(&self) -> &str;
    /// Starts one wait; the session lives until it says done or times out.
    async fn begin(
        &self,
        wait_type: &str,
        params: Value,
    ) -> Result<(Box<dyn WaitSession>, WaitDecision), PluginFailure>;
}

#[async_trait]
pub trait WaitSession: Send {
    async fn poll(
        &mut self,
        signals: Vec<WaitSignal>,
        elapsed_ms: u64,
    ) -> Result<WaitDecision, PluginFailure>;
}

/// What a plugin provides, for listings.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginInfo {
    pub name: String,
    pub kind: String,
    pub version: String,
    pub description: String,
    /// "builtin" or the folder path it was loaded from.
    pub source: String,
    pub provides: Vec<String>,
    pub capabilities: Vec<String>,
    /// "active" or "failed".
    pub status: String,
    pub last_error: Option<String>,
    /// The last call that failed (a policy that trapped or timed out, and
    /// so denied), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    pub loaded_at_ms: u64,
    /// How the loaded version's instances have been used (absent when no
    /// version is loaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<InstanceStats>,
}

/// A loaded plugin version's instances: made, reused, dropped, idle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct InstanceStats {
    /// Instances made (the first call, concurrent calls, after a failure).
    pub created: u64,
    /// Calls that ran on a warm instance.
    pub reused: u64,
    /// Instances dropped after a trap, a missed deadline or a cancelled call.
    pub discarded: u64,
    /// Idle instances now.
    pub idle: u64,
    /// The linear memory the idle instances hold, together.
    pub idle_memory_bytes: u64,
}

/// What an operation does, for approval policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Navigation,
    Mutation,
    Input,
    Script,
    Read,
    Lifecycle,
}

/// What a policy is asked before an operation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRequest {
    pub category: Category,
    /// The catalogue's operation name.
    pub operation: String,
    pub target_url: Option<String>,
    pub tab_url: Option<String>,
    pub user: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny(String),
    Ask(String),
}

/// An approval policy plugin. A failure (trap, timeout, error) is the
/// caller's to treat as a denial.
#[async_trait]
pub trait ApprovalPolicy: Send + Sync {
    fn plugin_name(&self) -> &str;
    /// `settings`: the operator's policy file as JSON (`{}` without one).
    async fn decide(
        &self,
        settings: &str,
        request: &PolicyRequest,
    ) -> Result<Verdict, PluginFailure>;
}

/// A request as an interceptor plugin sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct InterceptedRequest {
    pub url: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    /// CDP resource type: Document, Script, Image, XHR, Fetch, ...
    pub resource_type: String,
    /// The URL of the tab it comes from.
    pub tab_url: String,
    pub user: Option<String>,
}

/// What an interceptor plugin does with a request.
#[derive(Debug, Clone, PartialEq)]
pub enum InterceptOutcome {
    /// On its way, with these headers set (none: unchanged).
    Proceed(Vec<(String, String)>),
    Fulfill {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Failed as blocked, for this reason.
    Abort(String),
}

/// A request interceptor plugin. A failure lets the request go on (the
/// host fails open).
#[async_trait]
pub trait RequestInterceptor: Send + Sync {
    fn plugin_name(&self) -> &str;
    async fn intercept(
        &self,
        request: &InterceptedRequest,
    ) -> Result<InterceptOutcome, PluginFailure>;
}

/// The live set of plugins, keyed by action name, markup tag and wait type.
/// Lookups return the current version; a caller keeps the `Arc` it got, so a
/// hot swap never disturbs a call in flight.
pub trait PluginRegistry: Send + Sync {
    fn action(&self, name: &str) -> Option<Arc<dyn ActionHandler>>;
    fn actions(&self) -> Vec<ActionSpec>;
    fn markup(&self, tag: &str) -> Option<Arc<dyn MarkupRenderer>>;
    fn markup_tags(&self) -> Vec<String>;
    fn wait(&self, wait_type: &str) -> Option<Arc<dyn WaitHeuristic>>;
    fn waits(&self) -> Vec<WaitSpec>;
    fn plugins(&self) -> Vec<PluginInfo>;
    /// Every loaded approval policy; each is asked before every operation.
    fn policies(&self) -> Vec<Arc<dyn ApprovalPolicy>> {
        Vec::new()
    }
    /// Every loaded request interceptor, in name order; each sees every
    /// request no rule answered.
    fn interceptors(&self) -> Vec<Arc<dyn RequestInterceptor>> {
        Vec::new()
    }
    /// Subscribe to "the set of actions changed" (hot reload), for MCP's
    /// list_changed notifications.
    fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64>;
}
