//! The action loop, whole: every action, built-in or plugin, goes through
//! [`run`], from taking the tab's turn to the recorded envelope:
//!
//! 1. check the options and begin the wait heuristic (nothing has touched
//!    the page yet), take the tab's turn;
//! 2. `screenshot_before`: the last after-frame while the page stayed
//!    frozen since, else a capture;
//! 3. thaw, dispatch, wait (signals become events); a dispatch or wait
//!    error refreezes and fails;
//! 4. freeze, `screenshot_after` (none when a dialog blocks the page or the
//!    tab closed), the `scroll` event;
//! 5. record the action (answered or failed) with the flight recorder
//!    before answering; a tagged action saves its network calls with it.
//!
//! The loop sees a tab only through [`ActionTab`], the few things it needs,
//! so it is tested here on a fake tab.

mod envelope;
mod events;
mod options;
mod phases;
pub mod record;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;

pub use envelope::{ActionEvent, Envelope, NetworkSummary, ScrollState, Timing, TimingParts};
pub use events::{NavigationHint, ScrollSource};
pub use events::{Recorder, navigation_type};
pub use options::{
    ActionOptions, AreaName, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, NetworkInput, NetworkOptions,
    OPTION_KEYS, OptionsInput, RegionInput, ScreenshotArea, ScreenshotInput, ScreenshotOptions,
    WaitClock, WaitUntil, WaitUntilInput, action_params,
};

use crate::capture::CachedFrame;
use crate::capture::{CaptureOptions, CaptureTiming, Screenshot};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::events::TabSignal;
use crate::network::NetworkCall;
use crate::plugin::{PluginRegistry, ViewportInfo};
use phases::{
    BeforeFrame, Settling, Shots, after_frame, before_frame, dispatched_result, page_failed, settle,
};
use record::{ActionLog, LoggedAction};

/// What the action loop needs from a tab, and nothing more.
#[async_trait]
pub trait ActionTab: Send + Sync + 'static {
    fn id(&self) -> &str;
    /// The tab owner's `userId`: its actions are recorded for that user.
    fn owner(&self) -> Option<String>;
    /// One action at a time: the turn is held from before to after; reads
    /// run beside its wait when it opens the turn to them.
    async fn turn(&self, limit: Duration) -> Result<crate::turn::ActionTurn<'_>>;
    /// Any action makes a cached snapshot stale.
    fn invalidate_snapshot(&self);
    /// The virtual cursor, drawn on captures.
    fn pointer(&self) -> Option<(f64, f64)>;
    /// A JavaScript dialog blocks the page.
    fn dialog_pending(&self) -> bool;
    /// Why the page looks broken (it stopped answering, a frame never
    /// came, the renderer crashed), if it does.
    fn page_failure(&self) -> Option<String>;
    /// What is in flight on the tab now: its requests, and a navigation
    /// whose document has not loaded. A wait for the network or for a
    /// navigation counts them from its start, though they began before it
    /// (a slow link clicked by the last action).
    fn in_flight_now(&self) -> Vec<crate::plugin::WaitSignal> {
        Vec::new()
    }
    /// The URL of a main-frame document committed since the last action's
    /// wait ended (while it froze the page, or between actions), if any;
    /// taken. A navigation wait that comes next counts it, until its load.
    fn take_uncovered_navigation(&self) -> Option<String> {
        None
    }
    /// The action's wait has ended: the documents committed so far were
    /// its to see, if the last of them has loaded (a wait that ended
    /// before the load leaves it to the next navigation wait).
    fn navigations_seen(&self) {}
    /// The main frame's document has not had its load event yet.
    fn loading(&self) -> bool {
        false
    }
    /// Input and script commands give up by `deadline` (the action's
    /// timeout) until it is cleared with `None`.
    fn set_action_deadline(&self, deadline: Option<Instant>);
    /// Events that happened outside any action (a browser restart), for
    /// this action's envelope.
    fn take_noted(&self) -> Vec<crate::events::TabEvent>;
    fn last_frame(&self) -> Option<CachedFrame>;
    fn set_last_frame(&self, frame: Option<CachedFrame>);
    /// The tab's signals (navigation, dialogs, requests, events, closing).
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<TabSignal>;
    /// How long the page's running CSS transitions and animations still
    /// take (ms), the endless ones aside; `None` when it can't be read.
    async fn animations_left_ms(&self) -> Option<f64> {
        None
    }
    /// Lets the page run (no-op when execution control is off).
    async fn thaw(&self) -> Result<()>;
    /// Freezes the page; whether it is frozen now.
    async fn freeze(&self) -> Result<bool>;
    /// Moves the page's clock forward by up to `budget_ms` at once, running
    /// what comes due on the way; `None` when this tab's clock can't be
    /// fast-forwarded (the settle then runs on the wall clock). `until_ms`
    /// is where the wait's clock will then stand, counted from the mark:
    /// a page that did not see all the time since (its clock resumes a
    /// frame after a thaw) is moved on that much further.
    async fn advance_clock(&self, _budget_ms: f64, _until_ms: f64) -> Result<Option<ClockStep>> {
        Ok(None)
    }
    /// [`ActionTab::advance_clock`] for a step the settle expects to be its
    /// last: when nothing came due, the page is also frozen (true), as
    /// [`ActionTab::freeze`] would, in the same page call. The settle thaws
    /// it again if it goes on after all.
    async fn settle_clock(
        &self,
        budget_ms: f64,
        until_ms: f64,
    ) -> Result<Option<(ClockStep, bool)>> {
        Ok(self
            .advance_clock(budget_ms, until_ms)
            .await?
            .map(|step| (step, false)))
    }
    /// How long after the dispatch a fast-forward may start: what the
    /// dispatch set off reaches the engine as signals within it.
    fn fast_forward_after(&self) -> Duration {
        Duration::from_millis(5)
    }
    /// Marks the end of the dispatch on the page's clock, from which
    /// fast-forwards count the page's time; false when this tab's clock
    /// can't be fast-forwarded.
    async fn mark_clock(&self) -> Result<bool> {
        Ok(false)
    }
    /// A screenshot with markup, and the viewport it shows.
    async fn capture(
        &self,
        registry: &dyn PluginRegistry,
        options: &CaptureOptions,
    ) -> Result<(Screenshot, ViewportInfo, CaptureTiming)>;
    /// Scroll state and the page's clock, without a screenshot.
    async fn viewport(&self) -> Result<(ViewportInfo, f64)>;
    /// Waits (bounded) for response bodies still being fetched.
    async fn bodies_settled(&self, limit: Duration);
    /// Waits (bounded) until popups this tab opened are attached and
    /// announced.
    async fn popups_settled(&self, _limit: Duration) {}
    /// Whether the focused field holds a secret (a password, a card
    /// number, a one-time code), or can't be told: text typed into it is
    /// recorded as `***`.
    async fn focus_is_secret(&self) -> bool {
        false
    }
    fn network_calls_since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall>;
    /// Console messages and uncaught errors since `since_ms` (wall clock).
    fn console_since(&self, _since_ms: f64) -> Vec<record::ConsoleMessage> {
        Vec::new()
    }
}

/// One fast-forward of a page's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockStep {
    /// Page time skipped, in ms (less than asked when callbacks ran first).
    pub advanced_ms: f64,
    /// Timer callbacks that ran.
    pub callbacks: u32,
    /// The page's own time since [`ActionTab::mark_clock`], when the
    /// document is the one that was marked.
    pub since_mark_ms: Option<f64>,
}

/// How long an action waits, after its settle, for popups it opened to be
/// attached (a popup storm can take a while; the click has answered by then).
const POPUP_ATTACH_LIMIT: Duration = Duration::from_secs(3);

/// What an action does, run between "before" and "wait".
pub type Dispatch<T> =
    Box<dyn FnOnce(Arc<T>) -> futures::future::BoxFuture<'static, Result<Value>> + Send>;

/// What an action is, for the history, and how the loop treats its events.
#[derive(Debug, Clone)]
pub struct ActionKind {
    pub name: String,
    pub params: Value,
    pub hint: NavigationHint,
    pub scroll_source: ScrollSource,
    /// Runs while a JavaScript dialog is open (navigate, reload: leaving the
    /// page is the way out of a dialog loop); other actions are refused.
    pub over_dialog: bool,
}

impl ActionKind {
    pub fn new(name: &str, params: Value) -> Self {
        ActionKind {
            name: name.to_string(),
            params,
            hint: NavigationHint::None,
            scroll_source: ScrollSource::for_action(name),
            over_dialog: false,
        }
    }
}

/// Fields of an action's params that carry text typed into the page.
const TYPED_TEXT: [&str; 2] = ["text", "value"];

fn types_text(params: &Value) -> bool {
    TYPED_TEXT
        .iter()
        .any(|k| params.get(k).is_some_and(Value::is_string))
}

/// What a password field was given is kept out of history.
fn hide_typed_text(params: &mut Value) {
    for key in TYPED_TEXT {
        if let Some(text) = params.get_mut(key).filter(|v| v.is_string()) {
            *text = Value::String("***".into());
        }
    }
}

/// Runs one action on `tab` and records it in `log`. The action runs in
/// its own task: a client that hangs up mid-action must not leave the page
/// thawed or the action half done.
pub async fn run<T: ActionTab>(
    tab: Arc<T>,
    registry: Arc<dyn PluginRegistry>,
    log: Option<Arc<dyn ActionLog>>,
    kind: ActionKind,
    options: ActionOptions,
    dispatch: Dispatch<T>,
) -> Result<Envelope> {
    tab.invalidate_snapshot();
    let started_ms = now_ms();
    let outcome = tokio::spawn({
        let (tab, options, kind) = (tab.clone(), options.clone(), kind.clone());
        async move { execute(tab, registry.as_ref(), &options, &kind, dispatch).await }
    })
    .await
    .unwrap_or_else(|e| Err(Error::internal(format!("the action task failed: {e}"))));
    let Some(log) = log else { return outcome };
    // Tagged network capture: the calls this action started are saved with
    // it, under the tag, once their bodies are in.
    let tag = options
        .network
        .as_ref()
        .filter(|n| !n.tag.is_empty() && outcome.is_ok());
    if tag.is_some() {
        tab.bodies_settled(Duration::from_secs(2)).await;
    }
    let network = tag.map(|n| {
        (
            n.tag.clone(),
            tab.network_calls_since(started_ms as i64, &n.types),
        )
    });
    let mut params = kind.params;
    let mut logged_outcome = match &outcome {
        Ok(envelope) => Ok(envelope.clone()),
        Err(err) => Err(err.message.clone()),
    };
    // The client may see what it typed echoed; history may not.
    if types_text(&params) && tab.focus_is_secret().await {
        hide_typed_text(&mut params);
        if let Ok(envelope) = &mut logged_outcome {
            hide_typed_text(&mut envelope.result);
        }
    }
    let logged = LoggedAction {
        tab_id: tab.id().to_string(),
        action_type: kind.name,
        params,
        started_ms,
        completed_ms: now_ms(),
        network,
        console: tab.console_since(started_ms),
        user_id: tab.owner(),
        outcome: logged_outcome,
    };
    match (outcome, log.record(logged).await) {
        (Ok(mut envelope), Ok(action_id)) => {
            envelope.action_id = Some(action_id);
            if let (Some(summary), Some(network)) = (&mut envelope.network, &options.network) {
                summary.tag = network.tag.clone();
            }
            Ok(envelope)
        }
        // The action ran but is not on record: say so rather than answer as
        // if it were.
        (Ok(_), Err(err)) => Err(Error::new(
            err.code,
            format!("the action ran but could not be recorded: {}", err.message),
        )),
        (Err(err), recorded) => {
            if let Err(log_err) = recorded {
                tracing::warn!("a failed action could not be recorded: {}", log_err.message);
            }
            Err(err)
        }
    }
}

fn ms_since(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0
}

/// The longest an action's settle is drawn out for transitions.
const TRANSITIONS_LIMIT: Duration = Duration::from_millis(1500);

/// A settled page may still be in the middle of its CSS transitions and
/// animations (a menu fading out, a modal sliding in), with the library's
/// own end-of-transition timer still due: frozen now, it would stay half
/// open and cover the next action's target. The page runs, on the wall
/// clock as transitions do, until they end (a transition that starts the
/// next one is waited for too), at most `TRANSITIONS_LIMIT` and `left`.
async fn finish_transitions<T: ActionTab>(
    tab: &T,
    left: Duration,
    hang_up: Option<&tokio_util::sync::CancellationToken>,
) {
    let deadline = Instant::now() + TRANSITIONS_LIMIT.min(left);
    let mut thawed = false;
    while let Some(ms) = tab.animations_left_ms().await {
        if ms <= 0.0 || tab.dialog_pending() || tab.page_failure().is_some() {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if !thawed {
            if tab.thaw().await.is_err() {
                break;
            }
            thawed = true;
        }
        // A little past the end: the library's timer for it comes due then.
        let pause = Duration::from_secs_f64((ms + 30.0) / 1000.0).min(deadline - now);
        match hang_up {
            Some(token) => {
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = token.cancelled() => break,
                }
            }
            None => tokio::time::sleep(pause).await,
        }
    }
}

/// Steps 1 to 4: from the turn to the envelope.
async fn execute<T: ActionTab>(
    tab: Arc<T>,
    registry: &dyn PluginRegistry,
    options: &ActionOptions,
    kind: &ActionKind,
    dispatch: Dispatch<T>,
) -> Result<Envelope> {
    let shots = Shots::for_action(registry, options)?;
    // Validates the wait params before anything happens to the page.
    let (mut session, first_decision) = begin_wait(registry, options).await?;

    let turn = tab
        .turn(Duration::from_millis(
            options.wait_until.timeout_ms + 10_000,
        ))
        .await?;
    // The page can't run while a dialog is open: say so at once.
    let dialog_before = tab.dialog_pending();
    if dialog_before && !kind.over_dialog {
        return Err(Error::dialog_blocks(tab.id()));
    }
    let total = Instant::now();
    let mut parts = TimingParts::default();

    // 1. Before.
    let step = Instant::now();
    let mut before = before_frame(&tab, &shots, dialog_before).await;
    // Only a page that broke (a crashed renderer) goes on from here, to
    // end as an action whose page failed.
    if let Some(err) = before.broken.take_if(|_| tab.page_failure().is_none()) {
        return Err(err);
    }
    let mut capture_timing = before.timing;
    parts.before_ms = ms_since(step);

    // 2. Thaw, dispatch, wait.
    let mut rx = tab.subscribe();
    let uncovered_navigation = tab.take_uncovered_navigation();
    // A page that broke while frozen (a crashed renderer) fails here; the
    // action is then not dispatched, and ends as one whose page failed.
    let thawed = match before.broken.take() {
        Some(err) => Err(err),
        None => tab.thaw().await,
    };
    let mut recorder = Recorder::new(
        tab.id(),
        kind.hint,
        options.network.as_ref(),
        before.virtual_start_ms,
    );
    for event in tab.take_noted() {
        recorder.record(TabSignal::Event(event));
    }
    let action_started_ms = now_ms();
    let step = Instant::now();
    // A page that stops answering input ends the action at its timeout.
    tab.set_action_deadline(Some(
        step + Duration::from_millis(options.wait_until.timeout_ms),
    ));
    let dispatched = match thawed {
        Ok(()) => dispatch(tab.clone()).await,
        Err(err) => Err(err),
    };
    tab.set_action_deadline(None);
    parts.dispatch_ms = ms_since(step);
    let action_completed_ms = now_ms();
    let (mut result, mut failure) = dispatched_result(&tab, dispatched, dialog_before).await?;

    let step = Instant::now();
    let wait_reason = settle(
        &tab,
        Settling {
            turn: &turn,
            session: &mut session,
            first_decision,
            rx: &mut rx,
            recorder: &mut recorder,
            uncovered_navigation,
        },
        options,
        kind,
        failure.is_some(),
        &mut result,
    )
    .await?;
    parts.wait_ms = ms_since(step);
    let wait_completed_ms = now_ms();

    // 3. Freeze, then the after frame.
    let frozen = if recorder.closed || failure.is_some() {
        false
    } else {
        match tab.freeze().await {
            Ok(frozen) => frozen,
            Err(err) => {
                failure = Some(page_failed(tab.as_ref(), err)?);
                false
            }
        }
    };
    let step = Instant::now();
    let dialog_open = tab.dialog_pending();
    let (after, viewport, broke) = after_frame(
        &tab,
        &shots,
        frozen,
        recorder.closed || dialog_open || failure.is_some(),
        &before.viewport,
        &mut capture_timing,
    )
    .await?;
    failure = failure.or(broke);
    parts.after_ms = ms_since(step);
    // What came while the page was frozen and read: freezing a page whose
    // navigation is under way (a slow link's server) waits for the new
    // document to commit. It is this action's, though its wait did not
    // cover it.
    while let Ok(signal) = rx.try_recv() {
        recorder.record(signal);
    }
    parts.capture_ms = capture_timing.capture_ms;
    parts.markup_ms = capture_timing.markup_ms;
    parts.encode_ms = capture_timing.encode_ms;

    // 4. The envelope.
    let wait_reason = match failure {
        Some(_) => "renderer_unresponsive".to_string(),
        None => wait_reason,
    };
    Ok(Ended {
        tab: tab.id(),
        result,
        failure,
        before,
        after,
        viewport,
        recorder,
        dialog_open,
        timing: Timing {
            action_started_ms,
            action_completed_ms,
            wait_completed_ms,
            duration_ms: ms_since(total),
            wait_reason,
            parts,
        },
    }
    .envelope(kind, options))
}

/// The action's wait heuristic, begun: its params are checked before
/// anything happens to the page.
async fn begin_wait(
    registry: &dyn PluginRegistry,
    options: &ActionOptions,
) -> Result<(
    Box<dyn crate::plugin::WaitSession>,
    crate::plugin::WaitDecision,
)> {
    let wait_type = &options.wait_until.wait_type;
    let wait = registry.wait(wait_type).ok_or_else(|| {
        let known: Vec<String> = registry.waits().into_iter().map(|w| w.name).collect();
        Error::invalid(format!(
            "unknown wait_until.type {wait_type:?}; known: {}",
            known.join(", ")
        ))
    })?;
    Ok(wait
        .begin(wait_type, options.wait_until.params.clone())
        .await?)
}

/// Marks a navigation's `result` as held by the page's `beforeunload`
/// prompt, with what to do (`more` adds a way).
pub fn held_by_beforeunload(result: &mut Value, tab_id: &str, more: Option<&str>) {
    if !result.is_object() {
        *result = serde_json::json!({});
    }
    result["status"] = serde_json::json!("blocked_by_beforeunload");
    result["hint"] = serde_json::json!(format!(
        "the page asks before leaving (tab {tab_id}): accept the dialog to leave, dismiss it to stay{}",
        more.map(|more| format!("; {more}")).unwrap_or_default()
    ));
}

/// What an action's envelope is made of, once its after frame is in.
struct Ended<'a> {
    tab: &'a str,
    result: Value,
    /// Why the page stopped answering, if it did.
    failure: Option<String>,
    before: BeforeFrame,
    after: Option<Screenshot>,
    viewport: ViewportInfo,
    recorder: Recorder,
    dialog_open: bool,
    timing: Timing,
}

impl Ended<'_> {
    fn envelope(self, kind: &ActionKind, options: &ActionOptions) -> Envelope {
        if let Some(cause) = self.failure {
            return failed_envelope(
                self.tab,
                cause,
                self.result,
                self.before,
                self.recorder,
                self.timing,
            );
        }
        let virtual_end_ms = self.after.as_ref().map_or_else(
            || {
                self.before.virtual_start_ms
                    + self.timing.parts.dispatch_ms
                    + self.timing.parts.wait_ms
            },
            |s| s.virtual_time_ms,
        );
        let network = self.recorder.network_summary(options.network.as_ref());
        let mut events = self.recorder.events;
        // The scroll the action caused, unless the page went or a dialog
        // holds it.
        if !self.recorder.closed && !self.dialog_open {
            events.extend(events::scroll_event(
                self.tab,
                &self.before.viewport,
                &self.viewport,
                kind.scroll_source,
                virtual_end_ms,
            ));
        }
        Envelope {
            result: self.result,
            screenshot_before: self.before.image,
            screenshot_after: self.after,
            scroll: ScrollState::from(&self.viewport),
            network,
            action_id: None,
            data: None,
            page_failure: None,
            events,
            timing: self.timing,
        }
    }
}

/// The envelope of an action whose page stopped answering: what it saw
/// before, and a `renderer_unresponsive` event with the cause.
fn failed_envelope(
    tab: &str,
    cause: String,
    result: Value,
    before: BeforeFrame,
    recorder: Recorder,
    timing: Timing,
) -> Envelope {
    let mut events = recorder.events;
    let virtual_time_ms = events
        .last()
        .map_or(timing.action_completed_ms, |e| e.virtual_time_ms);
    events.push(crate::events::StampedEvent {
        event: crate::events::TabEvent::RendererUnresponsive(crate::events::TabFailure {
            tab_id: tab.to_string(),
            cause: cause.clone(),
        }),
        virtual_time_ms,
    });
    Envelope {
        result,
        screenshot_before: before.image,
        screenshot_after: None,
        scroll: ScrollState::from(&before.viewport),
        network: None,
        action_id: None,
        data: None,
        page_failure: Some(cause),
        events,
        timing,
    }
}

#[cfg(test)]
mod tests;
