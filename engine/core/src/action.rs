//! The action loop: every action, built-in or plugin, goes through
//! `Engine::run_action`: validate, thaw, capture before, dispatch, wait,
//! freeze, capture after, build the envelope.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::capture::{
    CaptureOptions, CaptureTiming, DEFAULT_MARKUP, Screenshot, now_ms, take_screenshot,
};
use crate::error::{Error, Result};
use crate::execution;
use crate::plugin::{PluginRegistry, ViewportInfo, WaitDecision, WaitSignal};
use crate::tab::{Tab, TabSignal};

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const MAX_TIMEOUT_MS: u64 = 300_000;

#[derive(Debug, Clone)]
pub struct WaitUntil {
    pub wait_type: String,
    pub timeout_ms: u64,
    /// The whole `wait_until` object, passed to the heuristic.
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ScreenshotArea {
    None,
    Viewport,
}

#[derive(Debug, Clone)]
pub struct ScreenshotOptions {
    pub area: ScreenshotArea,
    /// Tags to draw; `None` means every registered tag.
    pub markup: Option<Vec<String>>,
    pub disable_markup: Vec<String>,
    pub cursor: bool,
}

#[derive(Debug, Clone)]
pub struct NetworkOptions {
    pub tag: String,
    pub types: Vec<String>,
}

/// The standard request envelope's options.
#[derive(Debug, Clone)]
pub struct ActionOptions {
    pub wait_until: WaitUntil,
    pub screenshot: ScreenshotOptions,
    pub network: Option<NetworkOptions>,
}

/// Request keys that are options, not action params.
pub const OPTION_KEYS: &[&str] = &[
    "wait_until",
    "screenshot",
    "network",
    "action_params",
    "userId",
];

fn string_list(value: &Value, field: &str) -> Result<Vec<String>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::invalid(format!("{field} must be a list of strings")))
            })
            .collect(),
        _ => Err(Error::invalid(format!("{field} must be a list of strings"))),
    }
}

impl ActionOptions {
    pub fn with_wait(wait_type: &str) -> Self {
        let mut options = ActionOptions::from_request(&Value::Null, "action_complete")
            .expect("defaults are valid");
        options.wait_until.wait_type = wait_type.to_string();
        options
    }

    /// Reads the options from a request body; `default_wait` applies when the
    /// body has no `wait_until.type`.
    pub fn from_request(body: &Value, default_wait: &str) -> Result<Self> {
        let wait = body.get("wait_until").cloned().unwrap_or(Value::Null);
        if !(wait.is_null() || wait.is_object()) {
            return Err(Error::invalid("wait_until must be an object"));
        }
        let wait_type = match wait.get("type") {
            None | Some(Value::Null) => default_wait.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(Error::invalid("wait_until.type must be a string")),
        };
        let timeout_ms = match wait.get("timeout_ms") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
            Some(v) => v.as_u64().filter(|t| *t <= MAX_TIMEOUT_MS).ok_or_else(|| {
                Error::invalid(format!(
                    "wait_until.timeout_ms must be an integer from 0 to {MAX_TIMEOUT_MS}"
                ))
            })?,
        };
        let mut params = if wait.is_object() {
            wait.clone()
        } else {
            json!({})
        };
        params["type"] = Value::String(wait_type.clone());

        let shot = body.get("screenshot").cloned().unwrap_or(Value::Null);
        if !(shot.is_null() || shot.is_object()) {
            return Err(Error::invalid("screenshot must be an object"));
        }
        let area = match shot.get("area").and_then(Value::as_str) {
            None | Some("viewport") => ScreenshotArea::Viewport,
            Some("none") => ScreenshotArea::None,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "screenshot.area must be \"viewport\" or \"none\", not {other:?}"
                )));
            }
        };
        let cursor = match shot.get("cursor") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("screenshot.cursor must be a boolean")),
        };
        if let Some(format) = shot.get("format").and_then(Value::as_str) {
            if format != "webp" {
                return Err(Error::invalid(
                    "screenshot.format: screenshots are always webp",
                ));
            }
        }
        let markup = match shot.get("markup") {
            None | Some(Value::Null) => None,
            Some(v) => Some(string_list(v, "screenshot.markup")?),
        };
        let disable_markup = string_list(
            shot.get("disable_markup").unwrap_or(&Value::Null),
            "screenshot.disable_markup",
        )?;

        let network = match body.get("network") {
            None | Some(Value::Null) => None,
            Some(Value::Object(n)) => Some(NetworkOptions {
                tag: match n.get("tag") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err(Error::invalid("network.tag must be a string")),
                },
                types: string_list(n.get("types").unwrap_or(&Value::Null), "network.types")?,
            }),
            Some(_) => return Err(Error::invalid("network must be an object")),
        };
        Ok(ActionOptions {
            wait_until: WaitUntil {
                wait_type,
                timeout_ms,
                params,
            },
            screenshot: ScreenshotOptions {
                area,
                markup,
                disable_markup,
                cursor,
            },
            network,
        })
    }

    /// The markup tags to draw, checked against what the plugins provide.
    pub fn markup_tags(&self, registry: &dyn PluginRegistry) -> Result<Vec<String>> {
        let known = registry.markup_tags();
        for tag in self
            .screenshot
            .disable_markup
            .iter()
            .chain(self.screenshot.markup.iter().flatten())
        {
            if !known.contains(tag) {
                return Err(Error::invalid(format!(
                    "unknown markup tag {tag:?}; known tags: {}",
                    known.join(", ")
                )));
            }
        }
        let base: Vec<String> = match &self.screenshot.markup {
            Some(tags) => tags.clone(),
            None => {
                // ABP's five first, in their order, then plugin tags.
                let mut tags: Vec<String> = DEFAULT_MARKUP
                    .iter()
                    .map(|t| t.to_string())
                    .filter(|t| known.contains(t))
                    .collect();
                tags.extend(
                    known
                        .iter()
                        .filter(|t| !DEFAULT_MARKUP.contains(&t.as_str()))
                        .cloned(),
                );
                tags
            }
        };
        Ok(base
            .into_iter()
            .filter(|t| !self.screenshot.disable_markup.contains(t))
            .collect())
    }
}

/// Action params: `action_params` when given, else the body minus options.
pub fn action_params(body: &Value) -> Value {
    if let Some(params) = body.get("action_params").filter(|p| p.is_object()) {
        return params.clone();
    }
    let mut params = Map::new();
    if let Value::Object(fields) = body {
        for (k, v) in fields {
            if !OPTION_KEYS.contains(&k.as_str()) {
                params.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(params)
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScrollState {
    pub horizontal_percent: f64,
    pub vertical_percent: f64,
    pub horizontal_px: f64,
    pub vertical_px: f64,
    pub page_width: f64,
    pub page_height: f64,
    pub viewport_width: f64,
    pub viewport_height: f64,
}

impl From<&ViewportInfo> for ScrollState {
    fn from(v: &ViewportInfo) -> Self {
        let percent = |pos: f64, page: f64, view: f64| {
            let range = page - view;
            if range > 0.5 {
                (pos / range * 100.0).clamp(0.0, 100.0)
            } else {
                0.0
            }
        };
        ScrollState {
            horizontal_percent: (percent(v.scroll_x, v.page_width, v.width) * 10.0).round() / 10.0,
            vertical_percent: (percent(v.scroll_y, v.page_height, v.height) * 10.0).round() / 10.0,
            horizontal_px: v.scroll_x,
            vertical_px: v.scroll_y,
            page_width: v.page_width,
            page_height: v.page_height,
            viewport_width: v.width,
            viewport_height: v.height,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ActionEvent {
    #[serde(rename = "type")]
    pub event_type: String,
    pub virtual_time_ms: f64,
    pub data: Value,
}

/// Where an action's time went, in milliseconds (wabp addition).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct TimingParts {
    pub before_ms: f64,
    pub dispatch_ms: f64,
    pub wait_ms: f64,
    pub after_ms: f64,
    pub capture_ms: f64,
    pub markup_ms: f64,
    pub encode_ms: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Timing {
    pub action_started_ms: f64,
    pub action_completed_ms: f64,
    pub wait_completed_ms: f64,
    pub duration_ms: f64,
    /// Why the wait ended: the heuristic's reason, or "timeout".
    pub wait_reason: String,
    pub parts: TimingParts,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NetworkSummary {
    pub total: u32,
    pub completed: u32,
    pub pending: u32,
    pub tag: String,
}

/// The standard response envelope.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Envelope {
    pub result: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_before: Option<Screenshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_after: Option<Screenshot>,
    pub scroll: ScrollState,
    pub events: Vec<ActionEvent>,
    pub timing: Timing,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSummary>,
    /// The history record of this action (wabp addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
}

/// What kind of navigation an action causes when the page doesn't say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NavigationHint {
    None,
    BackForward,
    Reload,
}

fn navigation_type(reason: Option<&str>, hint: NavigationHint) -> Option<&'static str> {
    match hint {
        NavigationHint::BackForward => return Some("back_forward"),
        NavigationHint::Reload => return Some("reload"),
        NavigationHint::None => {}
    }
    match reason? {
        "anchorClick" => Some("link_click"),
        "formSubmissionGet" | "formSubmissionPost" => Some("form_submit"),
        "httpHeaderRefresh" | "metaTagRefresh" => Some("redirect"),
        "reload" => Some("reload"),
        "scriptInitiated" => Some("script"),
        _ => None,
    }
}

/// Collects signals during an action: events for the envelope, and network
/// counts.
pub(crate) struct Recorder {
    tab_id: String,
    hint: NavigationHint,
    pub events: Vec<ActionEvent>,
    /// The page's virtual clock when the action was dispatched; events are
    /// stamped with it plus the time the page has run since.
    virtual_start_ms: f64,
    dispatched: Instant,
    /// The tab went away during the action.
    pub closed: bool,
    network_types: Option<Vec<String>>,
    started: std::collections::HashSet<String>,
    completed: u32,
}

impl Recorder {
    fn new(
        tab_id: &str,
        hint: NavigationHint,
        network: Option<&NetworkOptions>,
        virtual_start_ms: f64,
    ) -> Self {
        Recorder {
            tab_id: tab_id.to_string(),
            hint,
            events: Vec::new(),
            virtual_start_ms,
            dispatched: Instant::now(),
            closed: false,
            network_types: network
                .map(|n| n.types.iter().map(|t| t.to_ascii_lowercase()).collect()),
            started: Default::default(),
            completed: 0,
        }
    }

    /// Records a signal; returns it for the wait heuristic when it is one.
    fn record(&mut self, signal: TabSignal) -> Option<WaitSignal> {
        let now = self.virtual_start_ms + self.dispatched.elapsed().as_secs_f64() * 1000.0;
        let now = (now * 10.0).round() / 10.0;
        match signal {
            TabSignal::Navigated { url, reason } => {
                let mut data = json!({ "tab_id": self.tab_id, "url": url });
                if let Some(kind) = navigation_type(reason.as_deref(), self.hint) {
                    data["navigation_type"] = json!(kind);
                }
                self.events.push(ActionEvent {
                    event_type: "navigation".into(),
                    virtual_time_ms: now,
                    data,
                });
                None
            }
            TabSignal::DialogOpened(dialog) => {
                self.events.push(ActionEvent {
                    event_type: "dialog".into(),
                    virtual_time_ms: now,
                    data: json!({
                        "tab_id": self.tab_id,
                        "dialog_type": dialog.dialog_type,
                        "message": dialog.message,
                        "default_prompt": dialog.default_prompt,
                        "pending": true,
                    }),
                });
                None
            }
            TabSignal::Event { event_type, data } => {
                self.events.push(ActionEvent {
                    event_type: event_type.into(),
                    virtual_time_ms: now,
                    data,
                });
                None
            }
            TabSignal::Closed { reason } => {
                self.closed = true;
                self.events.push(ActionEvent {
                    event_type: "tab_closed".into(),
                    virtual_time_ms: now,
                    data: json!({ "tab_id": self.tab_id, "reason": reason }),
                });
                None
            }
            TabSignal::Wait(signal) => {
                match &signal {
                    WaitSignal::RequestStarted(info) => {
                        let wanted = self.network_types.as_ref().is_none_or(|t| {
                            t.is_empty() || t.contains(&info.resource_type.to_ascii_lowercase())
                        });
                        if wanted {
                            self.started.insert(info.id.clone());
                        }
                    }
                    WaitSignal::RequestFinished(id) => {
                        if self.started.contains(id) {
                            self.completed += 1;
                        }
                    }
                    _ => {}
                }
                Some(signal)
            }
        }
    }

    fn network_summary(&self, options: Option<&NetworkOptions>) -> Option<NetworkSummary> {
        options.map(|_| {
            let total = self.started.len() as u32;
            NetworkSummary {
                total,
                completed: self.completed.min(total),
                pending: total.saturating_sub(self.completed),
                // Calls are saved under a tag once the history store lands.
                tag: String::new(),
            }
        })
    }
}

fn ms_since(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0
}

/// Runs the wait heuristic until it is done or the timeout passes.
pub(crate) async fn wait_for_settle(
    session: &mut Box<dyn crate::plugin::WaitSession>,
    mut decision: WaitDecision,
    rx: &mut tokio::sync::broadcast::Receiver<TabSignal>,
    recorder: &mut Recorder,
    timeout: Duration,
) -> Result<String> {
    let started = Instant::now();
    loop {
        let recheck = match decision {
            WaitDecision::Done { reason } => return Ok(reason),
            WaitDecision::Pending { recheck_after_ms } => {
                Duration::from_millis(recheck_after_ms.clamp(1, 1000) as u64)
            }
        };
        let remaining = timeout.saturating_sub(started.elapsed());
        if remaining.is_zero() {
            return Ok("timeout".into());
        }
        let mut signals = Vec::new();
        // Sleep until the recheck time, waking early for a new signal.
        match tokio::time::timeout(recheck.min(remaining), rx.recv()).await {
            Ok(Ok(signal)) => signals.extend(recorder.record(signal)),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                tracing::warn!("wait lost {n} signals")
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => {
                return Ok("tab_closed".into());
            }
            Err(_) => {}
        }
        while let Ok(signal) = rx.try_recv() {
            signals.extend(recorder.record(signal));
        }
        if recorder.closed {
            return Ok("tab_closed".into());
        }
        decision = session
            .poll(signals, started.elapsed().as_millis() as u64)
            .await?;
    }
}

/// What an action does, run between "before" and "wait".
pub type Dispatch =
    Box<dyn FnOnce(Arc<Tab>) -> futures::future::BoxFuture<'static, Result<Value>> + Send>;

/// What moved the page when an action scrolls it (the `scroll` event's `source`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScrollSource {
    Wheel,
    Keyboard,
    Script,
    Drag,
}

impl ScrollSource {
    /// The likely source for an action by its name.
    pub fn for_action(name: &str) -> Self {
        match name {
            "scroll" => ScrollSource::Wheel,
            "drag" => ScrollSource::Drag,
            n if n == "type" || n.starts_with("keyboard") => ScrollSource::Keyboard,
            _ => ScrollSource::Script,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            ScrollSource::Wheel => "wheel",
            ScrollSource::Keyboard => "keyboard",
            ScrollSource::Script => "script",
            ScrollSource::Drag => "drag",
        }
    }
}

/// The `scroll` event when the page's scroll position changed.
fn scroll_event(
    tab_id: &str,
    before: &ViewportInfo,
    after: &ViewportInfo,
    source: ScrollSource,
    virtual_time_ms: f64,
) -> Option<ActionEvent> {
    let (dx, dy) = (
        after.scroll_x - before.scroll_x,
        after.scroll_y - before.scroll_y,
    );
    if dx.abs() < 0.5 && dy.abs() < 0.5 {
        return None;
    }
    let direction = if dy.abs() >= dx.abs() {
        if dy > 0.0 { "down" } else { "up" }
    } else if dx > 0.0 {
        "right"
    } else {
        "left"
    };
    let position = ScrollState::from(after);
    Some(ActionEvent {
        event_type: "scroll".into(),
        virtual_time_ms,
        data: json!({
            "tab_id": tab_id,
            "delta": { "x": dx, "y": dy, "direction": direction },
            "position": {
                "horizontal_percent": position.horizontal_percent,
                "vertical_percent": position.vertical_percent,
                "horizontal_px": position.horizontal_px,
                "vertical_px": position.vertical_px,
            },
            "source": source.as_str(),
        }),
    })
}

/// Scroll state and virtual clock without a screenshot.
async fn read_viewport(tab: &Tab) -> Result<(ViewportInfo, f64)> {
    let value = tab.evaluate_json(crate::tab::VIEWPORT_JS).await?;
    Ok((
        crate::tab::parse_viewport(&value),
        crate::capture::page_clock(&value),
    ))
}

/// What an action is, for the history, and how the loop treats its events.
#[derive(Debug, Clone)]
pub struct ActionKind {
    pub name: String,
    pub params: Value,
    pub hint: NavigationHint,
    pub scroll_source: ScrollSource,
}

impl ActionKind {
    pub fn new(name: &str, params: Value) -> Self {
        ActionKind {
            name: name.to_string(),
            params,
            hint: NavigationHint::None,
            scroll_source: ScrollSource::for_action(name),
        }
    }
}

pub struct ActionRun<'a> {
    pub registry: &'a dyn PluginRegistry,
    pub tab: Arc<Tab>,
    pub options: &'a ActionOptions,
    pub hint: NavigationHint,
    pub scroll_source: ScrollSource,
}

impl ActionRun<'_> {
    pub async fn execute(self, dispatch: Dispatch) -> Result<Envelope> {
        let ActionRun {
            registry,
            tab,
            options,
            hint,
            scroll_source,
        } = self;
        let markup = options.markup_tags(registry)?;
        let capture = options.screenshot.area == ScreenshotArea::Viewport;
        let wait = registry
            .wait(&options.wait_until.wait_type)
            .ok_or_else(|| {
                let known: Vec<String> = registry.waits().into_iter().map(|w| w.name).collect();
                Error::invalid(format!(
                    "unknown wait_until.type {:?}; known: {}",
                    options.wait_until.wait_type,
                    known.join(", ")
                ))
            })?;
        // Validates the wait params before anything happens to the page.
        let (mut session, first_decision) = wait
            .begin(
                &options.wait_until.wait_type,
                options.wait_until.params.clone(),
            )
            .await?;

        let _turn = tab
            .turn(Duration::from_millis(
                options.wait_until.timeout_ms + 10_000,
            ))
            .await?;
        let total = Instant::now();
        let mut parts = TimingParts::default();
        let mut capture_timing = CaptureTiming::default();
        let cursor = |tab: &Tab| {
            if options.screenshot.cursor {
                tab.pointer()
            } else {
                None
            }
        };

        // 1. Before: the frame the agent saw, taken while the page is still
        // frozen; the last after-frame when the page stayed frozen since.
        let step = Instant::now();
        let blocked = tab.pending_dialog().is_some();
        let (before, before_viewport, virtual_start_ms) =
            match tab.last_frame().filter(|f| f.frozen_since) {
                Some(frame) if capture || blocked => {
                    let vt = frame.image.virtual_time_ms;
                    (Some(frame.image), frame.viewport, vt)
                }
                _ if blocked => (None, ViewportInfo::default(), now_ms()),
                _ if capture => {
                    let (shot, layout, t) = take_screenshot(
                        &tab,
                        registry,
                        &CaptureOptions {
                            markup: markup.clone(),
                            cursor: cursor(&tab),
                        },
                    )
                    .await?;
                    capture_timing = t;
                    let vt = shot.virtual_time_ms;
                    (Some(shot), layout.viewport, vt)
                }
                _ => {
                    let (viewport, vt) = read_viewport(&tab).await?;
                    (None, viewport, vt)
                }
            };
        parts.before_ms = ms_since(step);

        // 2. Thaw, dispatch, wait.
        let mut rx = tab.subscribe();
        execution::thaw(&tab).await?;
        let mut recorder = Recorder::new(&tab.id, hint, options.network.as_ref(), virtual_start_ms);
        let action_started_ms = now_ms();
        let step = Instant::now();
        let result = dispatch(tab.clone()).await;
        parts.dispatch_ms = ms_since(step);
        let action_completed_ms = now_ms();
        let result = match result {
            Ok(value) => value,
            Err(err) => {
                execution::freeze(&tab).await.ok();
                return Err(err);
            }
        };

        let step = Instant::now();
        let timeout = Duration::from_millis(options.wait_until.timeout_ms);
        let wait_reason = match wait_for_settle(
            &mut session,
            first_decision,
            &mut rx,
            &mut recorder,
            timeout,
        )
        .await
        {
            Ok(reason) => reason,
            Err(err) => {
                execution::freeze(&tab).await.ok();
                return Err(err);
            }
        };
        while let Ok(signal) = rx.try_recv() {
            recorder.record(signal);
        }
        parts.wait_ms = ms_since(step);
        let wait_completed_ms = now_ms();

        // 3. Freeze, then the after frame.
        let frozen = if recorder.closed {
            false
        } else {
            execution::freeze(&tab).await?
        };
        let step = Instant::now();
        let dialog_open = tab.pending_dialog().is_some();
        let (after, viewport) = if recorder.closed || dialog_open {
            // A closed tab has no page; a dialog blocks the page's script,
            // so there is no layout to read.
            tab.set_last_frame(None);
            (None, before_viewport.clone())
        } else if capture {
            let (shot, layout, t) = take_screenshot(
                &tab,
                registry,
                &CaptureOptions {
                    markup,
                    cursor: cursor(&tab),
                },
            )
            .await?;
            capture_timing.capture_ms += t.capture_ms;
            capture_timing.markup_ms += t.markup_ms;
            capture_timing.encode_ms += t.encode_ms;
            tab.set_last_frame(Some(crate::tab::CachedFrame {
                image: shot.clone(),
                viewport: layout.viewport.clone(),
                frozen_since: frozen,
            }));
            (Some(shot), layout.viewport)
        } else {
            tab.set_last_frame(None);
            (None, read_viewport(&tab).await?.0)
        };
        parts.after_ms = ms_since(step);
        parts.capture_ms = capture_timing.capture_ms;
        parts.markup_ms = capture_timing.markup_ms;
        parts.encode_ms = capture_timing.encode_ms;

        let virtual_end_ms = after
            .as_ref()
            .map(|s| s.virtual_time_ms)
            .unwrap_or_else(|| virtual_start_ms + parts.dispatch_ms + parts.wait_ms);
        let network = recorder.network_summary(options.network.as_ref());
        let mut events = recorder.events;
        if !recorder.closed && !dialog_open {
            events.extend(scroll_event(
                &tab.id,
                &before_viewport,
                &viewport,
                scroll_source,
                virtual_end_ms,
            ));
        }
        Ok(Envelope {
            result,
            screenshot_before: before,
            screenshot_after: after,
            scroll: ScrollState::from(&viewport),
            network,
            action_id: None,
            events,
            timing: Timing {
                action_started_ms,
                action_completed_ms,
                wait_completed_ms,
                duration_ms: ms_since(total),
                wait_reason,
                parts,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_default_and_validate() {
        let o = ActionOptions::from_request(&json!({}), "action_complete").unwrap();
        assert_eq!(o.wait_until.wait_type, "action_complete");
        assert_eq!(o.wait_until.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(o.screenshot.cursor);
        let err =
            ActionOptions::from_request(&json!({"screenshot": {"area": "page"}}), "immediate")
                .unwrap_err();
        assert!(err.message.contains("screenshot.area"));
        let err =
            ActionOptions::from_request(&json!({"wait_until": {"timeout_ms": -1}}), "immediate")
                .unwrap_err();
        assert!(err.message.contains("timeout_ms"));
    }

    #[test]
    fn params_strip_options() {
        let p = action_params(&json!({"x": 1, "wait_until": {}, "screenshot": {}}));
        assert_eq!(p, json!({"x": 1}));
        let p = action_params(&json!({"action_params": {"y": 2}, "x": 1}));
        assert_eq!(p, json!({"y": 2}));
    }

    #[test]
    fn scroll_percentages() {
        let v = ViewportInfo {
            width: 100.0,
            height: 100.0,
            scroll_y: 50.0,
            page_width: 100.0,
            page_height: 300.0,
            ..Default::default()
        };
        let s = ScrollState::from(&v);
        assert_eq!(s.vertical_percent, 25.0);
        assert_eq!(s.horizontal_percent, 0.0);
    }
}
