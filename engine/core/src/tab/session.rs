//! The page session: the only holder of a tab's CDP page. Every command a
//! tab sends goes through here and gets its bound here, so a page that stops
//! answering costs a timeout error, never a hung request; the rest of the
//! tab never touches chromiumoxide's `Page`.
//!
//! It also knows what blocks its page: a JavaScript dialog (watched from
//! the prompts) holds every command that needs the page's script, and a
//! closed target never answers. Commands of that kind
//! ([`PageSession::execute_unless_dialog`], scripts, raw calls) stop waiting
//! when either happens.

use parking_lot::Mutex;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::IntoEventKind;
use chromiumoxide::cdp::browser_protocol::page::{CreateIsolatedWorldParams, FrameId};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetInfoParams, TargetId};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExecutionContextId};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::types::{Command, CommandResponse, Method, MethodId};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::events::PendingDialog;

/// The bound of a command that names none.
pub const COMMAND_BOUND: Duration = Duration::from_secs(10);
/// The least an input command gets under a short action timeout: a loaded
/// machine's healthy page must not look broken.
const INPUT_BOUND_FLOOR: Duration = Duration::from_secs(2);

/// While an input command waits, how often a running clock is asked for a
/// frame.
const NUDGE_INTERVAL: Duration = Duration::from_millis(3);

/// The isolated world the engine's own script runs in (refs, layouts,
/// reads a page must not tamper with). chromiumoxide creates one of this
/// name in every frame it sees (with universal access), and Blink creates
/// again, in each new document of a frame, every world the frame had:
/// sharing chromiumoxide's world costs a navigation one V8 context (0.7-0.8
/// ms of its commit, and its memory) instead of two or three. Pages can't
/// see it either way.
pub const ENGINE_WORLD: &str = chromiumoxide::handler::frame::UTILITY_WORLD_NAME;

pub struct PageSession {
    page: Page,
    tab_id: String,
    target_id: TargetId,
    /// The main frame's id, as the event pump last saw it.
    main_frame: Mutex<Option<String>>,
    dialog: watch::Receiver<Option<PendingDialog>>,
    closed: watch::Sender<bool>,
    /// Why the page looks broken, if it does: a command that timed out, a
    /// frame that never came, a crashed renderer. The engine checks and
    /// repairs such a tab before its next use.
    failure: Mutex<Option<String>>,
    /// The running action's timeout: input and script commands give up by
    /// then, so a page that stops answering ends the action at its timeout.
    action_deadline: Mutex<Option<std::time::Instant>>,
    /// The page's out-of-process frames, when the browser isolates sites.
    frame_targets: std::sync::OnceLock<std::sync::Arc<super::frame_targets::FrameTargets>>,
    /// When the page's renderer last answered a script command.
    script_answered: Mutex<Option<std::time::Instant>>,
}

impl PageSession {
    /// Wraps `page` for tab `tab_id`; `dialog` follows the tab's JavaScript
    /// dialog.
    pub async fn open(
        page: Page,
        tab_id: String,
        dialog: watch::Receiver<Option<PendingDialog>>,
    ) -> PageSession {
        let target_id = page.target_id().clone();
        let main_frame = tokio::time::timeout(COMMAND_BOUND, page.mainframe())
            .await
            .ok()
            .and_then(|r| r.ok())
            .flatten()
            .map(|f| f.inner().clone());
        PageSession {
            page,
            tab_id,
            target_id,
            main_frame: Mutex::new(main_frame),
            dialog,
            closed: watch::Sender::new(false),
            failure: Mutex::new(None),
            action_deadline: Mutex::new(None),
            frame_targets: std::sync::OnceLock::new(),
            script_answered: Mutex::new(None),
        }
    }

    /// Whether the page's renderer answered a script command within `span`.
    pub fn script_answered_within(&self, span: Duration) -> bool {
        self.script_answered
            .lock()
            .is_some_and(|at| at.elapsed() < span)
    }

    /// Routes the commands of out-of-process frames through `targets`.
    pub fn set_frame_targets(&self, targets: std::sync::Arc<super::frame_targets::FrameTargets>) {
        let _ = self.frame_targets.set(targets);
    }

    /// The page's out-of-process frames, if the browser isolates sites.
    pub fn frame_targets(&self) -> Option<&std::sync::Arc<super::frame_targets::FrameTargets>> {
        self.frame_targets.get()
    }

    /// Bounds input and script commands by `deadline` (an action's timeout)
    /// until it is cleared with `None`.
    pub fn set_action_deadline(&self, deadline: Option<std::time::Instant>) {
        *self.action_deadline.lock() = deadline;
    }

    /// The running action's deadline, if any.
    pub fn action_deadline(&self) -> Option<std::time::Instant> {
        *self.action_deadline.lock()
    }

    /// [`COMMAND_BOUND`], or less when the running action's timeout comes
    /// first (never under [`INPUT_BOUND_FLOOR`]).
    pub(crate) fn input_bound(&self) -> Duration {
        match *self.action_deadline.lock() {
            Some(deadline) => deadline
                .saturating_duration_since(std::time::Instant::now())
                .clamp(INPUT_BOUND_FLOOR, COMMAND_BOUND),
            None => COMMAND_BOUND,
        }
    }

    pub fn tab_id(&self) -> &str {
        &self.tab_id
    }

    pub fn target_id(&self) -> &TargetId {
        &self.target_id
    }

    pub fn main_frame(&self) -> Option<String> {
        self.main_frame.lock().clone()
    }

    /// The main frame's id, or the target's (which Chromium uses for it)
    /// before the first navigation was seen.
    pub fn main_frame_or_target(&self) -> String {
        self.main_frame()
            .unwrap_or_else(|| self.target_id.inner().clone())
    }

    pub fn set_main_frame(&self, frame: String) {
        *self.main_frame.lock() = Some(frame);
    }

    pub fn dialog_open(&self) -> bool {
        self.dialog.borrow().is_some()
    }

    /// Why the page looks broken, if it does.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }

    /// Marks the page as looking broken (the first cause is kept).
    pub fn mark_failed(&self, cause: impl Into<String>) {
        let mut failure = self.failure.lock();
        if failure.is_none() {
            *failure = Some(cause.into());
        }
    }

    /// A check found the page answering after all.
    pub fn clear_failure(&self) {
        *self.failure.lock() = None;
    }

    /// The target is gone: commands waiting on the page stop waiting.
    pub fn mark_closed(&self) {
        self.closed.send_replace(true);
    }

    /// Sends `command`, bounded by [`COMMAND_BOUND`].
    pub async fn execute<T: Command>(&self, command: T) -> Result<CommandResponse<T::Response>> {
        self.execute_within(command, COMMAND_BOUND).await
    }

    /// Sends `command`, bounded by `limit`.
    pub async fn execute_within<T: Command>(
        &self,
        command: T,
        limit: Duration,
    ) -> Result<CommandResponse<T::Response>> {
        let method = command.identifier();
        match tokio::time::timeout(limit, self.page.execute(command)).await {
            Ok(Ok(response)) => {
                // The browser answers its own commands for a hung renderer:
                // only a script's answer tells the page is alive.
                if method.starts_with("Runtime.") {
                    *self.script_answered.lock() = Some(std::time::Instant::now());
                }
                Ok(response)
            }
            Ok(Err(e)) => {
                let e = crate::cdp_error(e);
                // A begin-frame that never completed blocks every later one.
                if e.message.contains("Another frame is pending") {
                    self.mark_failed("a frame never completed (Another frame is pending)");
                }
                // The browser's answer for a renderer that is gone (full
                // Chromium after a crash). A page that answers after all is
                // cleared by the repair's check.
                if e.message.contains("-32603") {
                    self.mark_failed(format!("the browser failed {method}: {}", e.message));
                }
                Err(e)
            }
            Err(_) => {
                // A dialog explains the silence; anything else is a page
                // that stopped answering.
                if !self.dialog_open() && !*self.closed.borrow() {
                    self.mark_failed(format!(
                        "the page did not answer {method} within {} ms",
                        limit.as_millis()
                    ));
                }
                Err(Error::timeout(format!(
                    "the page did not answer {method} within {} ms",
                    limit.as_millis()
                )))
            }
        }
    }

    pub async fn event_listener<T: IntoEventKind + Unpin>(&self) -> Result<EventStream<T>> {
        Ok(self
            .page
            .event_listener::<T>()
            .await
            .map_err(crate::cdp_error)?)
    }

    /// Sends a command that the page's script may block on (input, script).
    /// If a dialog opens meanwhile, the browser holds the answer until the
    /// dialog closes, and a tab the script closed never answers: stop waiting
    /// and report `None` instead of hanging. An open dialog refuses at once.
    /// `nudge`: input is handled at the start of a frame, so while an input
    /// command waits, a running clock is asked for frames now rather than at
    /// its next tick.
    pub async fn execute_unless_dialog<T: Command>(
        &self,
        command: T,
        nudge: Option<&Notify>,
    ) -> Result<Option<T::Response>> {
        if self.dialog_open() {
            return Err(Error::dialog_blocks(&self.tab_id));
        }
        self.execute_until_blocked(command, self.input_bound(), nudge)
            .await
    }

    /// Sends `command` (bounded by `limit`) unless a dialog is open; `None`
    /// when one is open or opens meanwhile, or the target closes.
    pub async fn execute_until_blocked<T: Command>(
        &self,
        command: T,
        limit: Duration,
        nudge: Option<&Notify>,
    ) -> Result<Option<T::Response>> {
        if self.dialog_open() {
            return Ok(None);
        }
        let mut dialog = self.dialog.clone();
        let mut closed = self.closed.subscribe();
        let blocked = async move {
            tokio::select! {
                _ = dialog.wait_for(Option::is_some) => {}
                _ = closed.wait_for(|c| *c) => {}
            }
        };
        let response = self.execute_within(command, limit);
        tokio::pin!(response, blocked);
        loop {
            // Waiters only: a frozen tab keeps no pending nudge.
            if let Some(nudge) = nudge {
                nudge.notify_waiters();
            }
            tokio::select! {
                response = &mut response => return Ok(Some(response?.result)),
                _ = &mut blocked => return Ok(None),
                _ = tokio::time::sleep(NUDGE_INTERVAL), if nudge.is_some() => {}
            }
        }
    }

    /// Sends a raw CDP command (see [`RawCommand`]). Like every page
    /// command, it gives up when a dialog opens meanwhile.
    pub async fn raw(&self, method: &'static str, params: Value) -> Result<Value> {
        self.raw_within(method, params, COMMAND_BOUND).await
    }

    /// A raw command sent even while a dialog is open (answers to paused
    /// requests must go out whatever the page is doing), bounded by `limit`.
    pub async fn raw_regardless(
        &self,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        Ok(self
            .execute_within(RawCommand::new(method, params), limit)
            .await?
            .result)
    }

    /// [`PageSession::raw`], bounded by `limit`.
    pub async fn raw_within(
        &self,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        if self.dialog_open() {
            return Err(Error::dialog_blocks(&self.tab_id));
        }
        self.execute_until_blocked(RawCommand::new(method, params), limit, None)
            .await?
            .ok_or_else(|| {
                // Closed under it: its browser went away (a restart reopens
                // it) or the page closed itself; not the caller's doing.
                if *self.closed.borrow() {
                    return Error::new(
                        ErrorCode::NotReady,
                        format!("the tab's page went away during {method}"),
                    )
                    .then(NextStep::BrowserStatus);
                }
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!("a dialog opened during {method}; accept or dismiss it first"),
                )
                .then(NextStep::AnswerDialog {
                    tab_id: self.tab_id.clone(),
                })
            })
    }

    /// [`PageSession::raw`] for `frame`: through the frame's own target
    /// when it is out of the page's process, else the page's session.
    pub async fn raw_in(
        &self,
        frame: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> Result<Value> {
        self.raw_in_within(frame, method, params, COMMAND_BOUND)
            .await
    }

    /// [`PageSession::raw_in`], bounded by `limit`.
    pub async fn raw_in_within(
        &self,
        frame: Option<&str>,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        let session = frame.and_then(|f| self.frame_targets.get()?.session_of(f));
        self.raw_on_within(session.as_deref(), method, params, limit)
            .await
    }

    /// [`PageSession::raw`] on a frame target's session (`None`: the
    /// page's own).
    pub async fn raw_on(
        &self,
        session: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> Result<Value> {
        self.raw_on_within(session, method, params, COMMAND_BOUND)
            .await
    }

    pub async fn raw_on_within(
        &self,
        session: Option<&str>,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        let routed = session.and_then(|s| Some((self.frame_targets.get()?, s)));
        let Some((targets, session)) = routed else {
            return self.raw_within(method, params, limit).await;
        };
        if self.dialog_open() {
            return Err(Error::dialog_blocks(&self.tab_id));
        }
        // A frame's renderer that stops answering costs this command, not
        // the page: it is not marked broken.
        targets
            .navigator()
            .send(Some(session), method, params, limit)
            .await
    }

    /// `Runtime.callFunctionOn` in a world or on an object of `frame`'s
    /// renderer (`None`: the page's).
    pub async fn call_function(
        &self,
        frame: Option<&str>,
        on: CallOn<'_>,
        function: &str,
        arguments: Vec<Value>,
        by_value: bool,
    ) -> Result<Value> {
        let mut params = json!({
            "functionDeclaration": function,
            "arguments": arguments,
            "returnByValue": by_value,
            "awaitPromise": false,
        });
        match on {
            CallOn::World(id) => params["executionContextId"] = json!(id),
            CallOn::Object(id) => params["objectId"] = json!(id),
        }
        let response = self.raw_in(frame, "Runtime.callFunctionOn", params).await?;
        if let Some(exception) = response.get("exceptionDetails") {
            let text = exception
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .or_else(|| exception.get("text").and_then(Value::as_str))
                .unwrap_or("exception");
            return Err(Error::new(ErrorCode::EvaluationError, text.to_string()));
        }
        Ok(response.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Evaluates an expression, awaiting promises. Returns (value, JS type).
    pub async fn evaluate_value(&self, expression: &str) -> Result<(Value, String)> {
        self.evaluate_in(expression, None, true).await
    }

    /// [`PageSession::evaluate_value`], a promise awaited or not (then it
    /// is answered as the object it is).
    pub async fn evaluate_script(
        &self,
        expression: &str,
        await_promise: bool,
    ) -> Result<(Value, String)> {
        self.evaluate_in(expression, None, await_promise).await
    }

    /// Evaluates page-side helper code that returns JSON-able data.
    pub async fn evaluate_json(&self, expression: &str) -> Result<Value> {
        Ok(self.evaluate_value(expression).await?.0)
    }

    /// Evaluates in the engine's isolated world of the main frame
    /// ([`ENGINE_WORLD`]): the page's DOM, none of its script. For reads
    /// and DOM edits; requests made there are not bound by the page's
    /// origin (see [`PageSession::evaluate_as_page`]).
    pub async fn evaluate_isolated(&self, expression: &str) -> Result<Value> {
        self.evaluate_in_world(expression, ENGINE_WORLD).await
    }

    /// Evaluates in an isolated world with the page's origin and cookies but
    /// none of its script: what it fetches follows the page's CORS rules,
    /// and a page can't replace the `fetch` it calls.
    pub async fn evaluate_as_page(&self, expression: &str) -> Result<Value> {
        self.evaluate_in_world(expression, "wabp").await
    }

    async fn evaluate_in_world(&self, expression: &str, world: &str) -> Result<Value> {
        let world = self
            .execute(
                CreateIsolatedWorldParams::builder()
                    .frame_id(FrameId::new(self.main_frame_or_target()))
                    .world_name(world)
                    .build()
                    .map_err(Error::internal)?,
            )
            .await?;
        Ok(self
            .evaluate_in(expression, Some(world.result.execution_context_id), true)
            .await?
            .0)
    }

    async fn evaluate_in(
        &self,
        expression: &str,
        context: Option<ExecutionContextId>,
        await_promise: bool,
    ) -> Result<(Value, String)> {
        let mut builder = EvaluateParams::builder()
            .expression(expression)
            .return_by_value(true)
            .await_promise(await_promise)
            .user_gesture(true);
        if let Some(context) = context {
            builder = builder.context_id(context);
        }
        let params = builder.build().map_err(Error::internal)?;
        let Some(response) = self.execute_unless_dialog(params, None).await? else {
            return Err(if self.dialog_open() {
                Error::new(
                    ErrorCode::EvaluationError,
                    "the script opened a dialog, which is pending; accept or dismiss it",
                )
                .then(NextStep::AnswerDialog {
                    tab_id: self.tab_id.clone(),
                })
            } else {
                Error::new(
                    ErrorCode::EvaluationError,
                    format!("tab {} closed while the script ran", self.tab_id),
                )
            });
        };
        if let Some(exception) = &response.exception_details {
            let detail = exception
                .exception
                .as_ref()
                .and_then(|e| e.description.clone())
                .unwrap_or_else(|| exception.text.clone());
            return Err(Error::new(ErrorCode::EvaluationError, detail));
        }
        let object = &response.result;
        let kind = object.r#type.as_ref().to_string();
        let value = match (&object.value, &object.unserializable_value) {
            (Some(v), _) => v.clone(),
            // NaN, Infinity, -0, bigints: their text form.
            (None, Some(u)) => Value::String(u.inner().clone()),
            (None, None) => Value::Null,
        };
        Ok((value, kind))
    }

    /// URL and title from the browser process, so it answers even while a
    /// dialog blocks the page's script.
    pub async fn info(&self) -> Result<(String, String)> {
        let info = self
            .execute(
                GetTargetInfoParams::builder()
                    .target_id(self.target_id.clone())
                    .build(),
            )
            .await?;
        Ok((
            info.result.target_info.url.clone(),
            info.result.target_info.title.clone(),
        ))
    }
}

/// What `Runtime.callFunctionOn` runs against.
#[derive(Debug, Clone, Copy)]
pub enum CallOn<'a> {
    World(i64),
    Object(&'a str),
}

/// A CDP command sent as raw JSON, answered as raw JSON: the typed bindings
/// reject enum values newer than they are (AX roles and properties grow with
/// every Chromium release).
#[derive(Debug, Clone)]
pub struct RawCommand {
    method: &'static str,
    params: Value,
}

impl RawCommand {
    pub fn new(method: &'static str, params: Value) -> Self {
        RawCommand { method, params }
    }
}

impl Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl Method for RawCommand {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for RawCommand {
    type Response = Value;
}
