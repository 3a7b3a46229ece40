//! The action loop on a fake tab: the order of its steps, and what it does
//! when dispatch or the wait fails, the tab closes or a dialog opens.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use crate::ErrorCode;
use crate::events::PendingDialog;
use crate::plugin::{
    ActionHandler, ActionSpec, MarkupRenderer, PluginFailure, PluginInfo, WaitDecision,
    WaitHeuristic, WaitSession, WaitSignal, WaitSpec,
};

/// A tab that writes down what the loop asks of it.
struct FakeTab {
    steps: Mutex<Vec<&'static str>>,
    turn: crate::turn::TabTurn,
    signals: tokio::sync::broadcast::Sender<TabSignal>,
    dialog: AtomicBool,
    frame: Mutex<Option<CachedFrame>>,
    clock: AtomicU32,
    frozen: AtomicBool,
    failure: Mutex<Option<String>>,
    /// The page's clock can be fast-forwarded; the time it skipped since
    /// the mark, and when the mark was.
    fast_forwards: AtomicBool,
    page_ms: AtomicU32,
    marked: Mutex<std::time::Instant>,
    /// Real time since the mark the page's clock did not see (it resumes a
    /// frame after a thaw).
    unseen_ms: AtomicU32,
}

impl FakeTab {
    fn new() -> Arc<FakeTab> {
        Arc::new(FakeTab {
            steps: Mutex::new(Vec::new()),
            turn: Default::default(),
            signals: tokio::sync::broadcast::channel(64).0,
            dialog: AtomicBool::new(false),
            frame: Mutex::new(None),
            clock: AtomicU32::new(1000),
            frozen: AtomicBool::new(true),
            failure: Mutex::new(None),
            fast_forwards: AtomicBool::new(false),
            page_ms: AtomicU32::new(0),
            marked: Mutex::new(std::time::Instant::now()),
            unseen_ms: AtomicU32::new(0),
        })
    }

    fn step(&self, name: &'static str) {
        self.steps.lock().push(name);
    }

    fn take_steps(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.steps.lock())
    }

    /// Skips `budget_ms` of page time, or up to `until_ms` since the mark
    /// if that is more: the step, counted from the mark.
    fn skip(&self, budget_ms: f64, until_ms: f64) -> ClockStep {
        let ran_ms = (self.marked.lock().elapsed().as_secs_f64() * 1000.0
            - self.unseen_ms.load(Ordering::SeqCst) as f64)
            .max(0.0);
        let since = ran_ms + self.page_ms.load(Ordering::SeqCst) as f64;
        let jump = budget_ms.max(until_ms - since).ceil();
        self.page_ms.fetch_add(jump as u32, Ordering::SeqCst);
        ClockStep {
            advanced_ms: jump,
            callbacks: 0,
            since_mark_ms: Some(since + jump),
        }
    }
}

#[async_trait]
impl ActionTab for FakeTab {
    fn id(&self) -> &str {
        "tab_fake"
    }
    fn owner(&self) -> Option<String> {
        Some("alice".into())
    }
    async fn turn(&self, limit: Duration) -> Result<crate::turn::ActionTurn<'_>> {
        self.step("turn");
        self.turn.take(limit).await
    }
    fn invalidate_snapshot(&self) {}
    fn pointer(&self) -> Option<(f64, f64)> {
        None
    }
    fn dialog_pending(&self) -> bool {
        self.dialog.load(Ordering::SeqCst)
    }
    fn page_failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }
    fn set_action_deadline(&self, _deadline: Option<std::time::Instant>) {}
    fn take_noted(&self) -> Vec<crate::events::TabEvent> {
        Vec::new()
    }
    fn last_frame(&self) -> Option<CachedFrame> {
        self.frame.lock().clone()
    }
    fn set_last_frame(&self, frame: Option<CachedFrame>) {
        *self.frame.lock() = frame;
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<TabSignal> {
        self.signals.subscribe()
    }
    async fn thaw(&self) -> Result<()> {
        self.step("thaw");
        self.frozen.store(false, Ordering::SeqCst);
        Ok(())
    }
    async fn freeze(&self) -> Result<bool> {
        self.step("freeze");
        self.frozen.store(true, Ordering::SeqCst);
        Ok(true)
    }
    async fn mark_clock(&self) -> Result<bool> {
        if !self.fast_forwards.load(Ordering::SeqCst) {
            return Ok(false);
        }
        self.step("mark");
        self.page_ms.store(0, Ordering::SeqCst);
        *self.marked.lock() = std::time::Instant::now();
        Ok(true)
    }
    async fn advance_clock(&self, budget_ms: f64, until_ms: f64) -> Result<Option<ClockStep>> {
        self.step("advance");
        Ok(Some(self.skip(budget_ms, until_ms)))
    }
    async fn settle_clock(
        &self,
        budget_ms: f64,
        until_ms: f64,
    ) -> Result<Option<(ClockStep, bool)>> {
        self.step("settle");
        self.frozen.store(true, Ordering::SeqCst);
        Ok(Some((self.skip(budget_ms, until_ms), true)))
    }
    async fn capture(
        &self,
        _: &dyn PluginRegistry,
        _: &CaptureOptions,
    ) -> Result<(Screenshot, ViewportInfo, CaptureTiming)> {
        self.step("capture");
        let t = self.clock.fetch_add(100, Ordering::SeqCst);
        let shot = Screenshot {
            data: Arc::new(vec![t as u8]),
            width: 10,
            height: 10,
            virtual_time_ms: t as f64,
            format: "webp",
        };
        Ok((shot, ViewportInfo::default(), CaptureTiming::default()))
    }
    async fn viewport(&self) -> Result<(ViewportInfo, f64)> {
        self.step("viewport");
        Ok((ViewportInfo::default(), 0.0))
    }
    async fn bodies_settled(&self, _: Duration) {}
    fn network_calls_since(&self, _: i64, _: &[String]) -> Vec<NetworkCall> {
        Vec::new()
    }
}

/// Waits: `immediate` is done at once, `never` never is, `broken` fails.
struct Waits;

struct Session {
    kind: String,
}

#[async_trait]
impl WaitSession for Session {
    async fn poll(
        &mut self,
        _: Vec<WaitSignal>,
        elapsed_ms: u64,
    ) -> std::result::Result<WaitDecision, PluginFailure> {
        match self.kind.as_str() {
            "broken" => Err(PluginFailure {
                plugin: "waits".into(),
                code: ErrorCode::PluginFailed,
                message: "the heuristic trapped".into(),
            }),
            // Done once 100 ms (of page time, where it is fast-forwarded)
            // passed quietly; 300 for `quiet_300`, asked 100 at a time.
            "quiet_100" | "quiet_300" => {
                let wanted = if self.kind == "quiet_100" { 100 } else { 300 };
                Ok(if elapsed_ms >= wanted {
                    WaitDecision::Done {
                        reason: "settled".into(),
                    }
                } else {
                    WaitDecision::Pending {
                        recheck_after_ms: (wanted - elapsed_ms).min(100) as u32,
                    }
                })
            }
            _ => Ok(WaitDecision::Pending {
                recheck_after_ms: 5,
            }),
        }
    }
}

#[async_trait]
impl WaitHeuristic for Waits {
    fn plugin_name(&self) -> &str {
        "waits"
    }
    async fn begin(
        &self,
        wait_type: &str,
        _: Value,
    ) -> std::result::Result<(Box<dyn WaitSession>, WaitDecision), PluginFailure> {
        let first = match wait_type {
            "immediate" => WaitDecision::Done {
                reason: "immediate".into(),
            },
            "quiet_100" | "quiet_300" => WaitDecision::Pending {
                recheck_after_ms: 100,
            },
            _ => WaitDecision::Pending {
                recheck_after_ms: 5,
            },
        };
        Ok((
            Box::new(Session {
                kind: wait_type.into(),
            }),
            first,
        ))
    }
}

struct Registry;

impl PluginRegistry for Registry {
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
    fn wait(&self, wait_type: &str) -> Option<Arc<dyn WaitHeuristic>> {
        ["immediate", "never", "broken", "quiet_100", "quiet_300"]
            .contains(&wait_type)
            .then(|| Arc::new(Waits) as Arc<dyn WaitHeuristic>)
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

/// A flight recorder that keeps what it is given.
#[derive(Default)]
struct Log {
    actions: Mutex<Vec<LoggedAction>>,
}

#[async_trait]
impl ActionLog for Log {
    async fn record(&self, action: LoggedAction) -> Result<String> {
        let mut actions = self.actions.lock();
        actions.push(action);
        Ok(format!("act_{}", actions.len()))
    }
    async fn add_events(
        &self,
        _: &str,
        _: &str,
        _: Vec<crate::events::StampedEvent>,
    ) -> Result<()> {
        Ok(())
    }
    async fn save_network(&self, _: &str, _: Vec<NetworkCall>, _: Option<String>) -> Result<usize> {
        Ok(0)
    }
}

fn options(wait: &str, timeout_ms: u64) -> ActionOptions {
    let input: OptionsInput =
        serde_json::from_value(json!({ "wait_until": { "type": wait, "timeout_ms": timeout_ms } }))
            .unwrap();
    ActionOptions::try_from(input).unwrap()
}

async fn act(
    tab: &Arc<FakeTab>,
    log: &Arc<Log>,
    options: ActionOptions,
    dispatch: Dispatch<FakeTab>,
) -> Result<Envelope> {
    let log: Arc<dyn ActionLog> = log.clone();
    run(
        tab.clone(),
        Arc::new(Registry),
        Some(log),
        ActionKind::new("poke", json!({ "x": 1 })),
        options,
        dispatch,
    )
    .await
}

fn dispatch_ok() -> Dispatch<FakeTab> {
    Box::new(|tab: Arc<FakeTab>| {
        Box::pin(async move {
            tab.step("dispatch");
            Ok(json!({ "status": "poked" }))
        })
    })
}

fn event_types(envelope: &Envelope) -> Vec<String> {
    envelope
        .events
        .iter()
        .map(|e| e.kind().to_string())
        .collect()
}

#[tokio::test]
async fn steps_run_in_order_and_a_frozen_page_reuses_its_last_frame() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let first = act(&tab, &log, options("immediate", 1000), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(
        tab.take_steps(),
        ["turn", "capture", "thaw", "dispatch", "freeze", "capture"]
    );
    assert_eq!(first.result, json!({ "status": "poked" }));
    assert_eq!(first.timing.wait_reason, "immediate");
    assert_eq!(first.action_id.as_deref(), Some("act_1"));
    let after = first.screenshot_after.clone().unwrap();

    // The page stayed frozen: the before frame is the last after frame.
    let second = act(&tab, &log, options("immediate", 1000), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(
        tab.take_steps(),
        ["turn", "thaw", "dispatch", "freeze", "capture"]
    );
    let before = second.screenshot_before.unwrap();
    assert_eq!(before.virtual_time_ms, after.virtual_time_ms);
    assert_eq!(before.data, after.data);
    assert_eq!(second.action_id.as_deref(), Some("act_2"));
    let recorded = log.actions.lock();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].action_type, "poke");
    assert_eq!(recorded[0].user_id.as_deref(), Some("alice"));
    assert!(recorded[0].outcome.is_ok());
}

#[tokio::test]
async fn without_screenshots_a_frozen_page_is_read_once_per_action() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let no_screenshots = || {
        let input: OptionsInput = serde_json::from_value(
            json!({ "wait_until": { "type": "immediate" }, "screenshot": { "area": "none" } }),
        )
        .unwrap();
        ActionOptions::try_from(input).unwrap()
    };
    act(&tab, &log, no_screenshots(), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(
        tab.take_steps(),
        ["turn", "viewport", "thaw", "dispatch", "freeze", "viewport"]
    );
    // Still frozen: what the last action read after it is this one's before.
    act(&tab, &log, no_screenshots(), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(
        tab.take_steps(),
        ["turn", "thaw", "dispatch", "freeze", "viewport"]
    );
    // An action that wants a before screenshot still takes one.
    let shot = act(&tab, &log, options("immediate", 1000), dispatch_ok())
        .await
        .unwrap();
    assert!(shot.screenshot_before.is_some());
    assert_eq!(
        tab.take_steps(),
        ["turn", "capture", "thaw", "dispatch", "freeze", "capture"]
    );
}

#[tokio::test]
async fn a_quiet_fast_forward_that_ends_the_wait_also_freezes_the_page() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    tab.fast_forwards.store(true, Ordering::SeqCst);
    let envelope = act(&tab, &log, options("quiet_100", 5000), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(envelope.timing.wait_reason, "settled");
    // One page call fast-forwards and freezes; the loop's own freeze then
    // finds the page frozen (the driver makes that free).
    assert_eq!(
        tab.take_steps(),
        [
            "turn", "capture", "thaw", "dispatch", "mark", "settle", "freeze", "capture"
        ]
    );
    // The settle's quiet time was the page's, skipped.
    assert!(tab.page_ms.load(Ordering::SeqCst) > 0);
}

#[tokio::test]
async fn a_page_that_did_not_see_the_time_since_the_mark_is_moved_on_by_it() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    tab.fast_forwards.store(true, Ordering::SeqCst);
    // The wait's first step comes 5 ms after the dispatch, which the page
    // did not see: the step makes up for them, and the settle still ends
    // in one page call.
    tab.unseen_ms.store(1000, Ordering::SeqCst);
    act(&tab, &log, options("quiet_100", 5000), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(
        tab.take_steps(),
        [
            "turn", "capture", "thaw", "dispatch", "mark", "settle", "freeze", "capture"
        ]
    );
    assert!(tab.page_ms.load(Ordering::SeqCst) >= 100);
}

#[tokio::test]
async fn a_wait_that_goes_on_after_a_freezing_step_thaws_and_guesses_no_more() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    tab.fast_forwards.store(true, Ordering::SeqCst);
    let envelope = act(&tab, &log, options("quiet_300", 5000), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(envelope.timing.wait_reason, "settled");
    assert_eq!(
        tab.take_steps(),
        [
            "turn", "capture", "thaw", "dispatch", "mark", "settle", "thaw", "advance", "advance",
            "freeze", "capture"
        ]
    );
}

#[tokio::test]
async fn a_failed_dispatch_refreezes_and_is_still_recorded() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let dispatch: Dispatch<FakeTab> = Box::new(|tab: Arc<FakeTab>| {
        Box::pin(async move {
            tab.step("dispatch");
            Err(Error::invalid("no such element"))
        })
    });
    let err = act(&tab, &log, options("immediate", 1000), dispatch)
        .await
        .unwrap_err();
    assert_eq!(err.message, "no such element");
    assert_eq!(
        tab.take_steps(),
        ["turn", "capture", "thaw", "dispatch", "freeze"]
    );
    assert!(
        tab.frozen.load(Ordering::SeqCst),
        "the page is frozen again"
    );
    let recorded = log.actions.lock();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].outcome.as_ref().unwrap_err(), "no such element");
}

#[tokio::test]
async fn a_wait_that_never_settles_times_out_and_the_page_is_frozen() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let envelope = act(&tab, &log, options("never", 60), dispatch_ok())
        .await
        .unwrap();
    assert_eq!(envelope.timing.wait_reason, "timeout");
    assert!(
        envelope.timing.parts.wait_ms >= 50.0,
        "{:?}",
        envelope.timing
    );
    assert_eq!(
        tab.take_steps(),
        ["turn", "capture", "thaw", "dispatch", "freeze", "capture"]
    );
}

#[tokio::test]
async fn a_failing_wait_refreezes() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let err = act(&tab, &log, options("broken", 1000), dispatch_ok())
        .await
        .unwrap_err();
    assert!(err.message.contains("trapped"), "{}", err.message);
    assert_eq!(tab.take_steps().last(), Some(&"freeze"));
    assert!(tab.frozen.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_tab_closed_mid_action_ends_the_wait_without_an_after_frame() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let dispatch: Dispatch<FakeTab> = Box::new(|tab: Arc<FakeTab>| {
        Box::pin(async move {
            tab.step("dispatch");
            tab.signals
                .send(TabSignal::Closed { reason: "script" })
                .ok();
            Ok(json!({}))
        })
    });
    let envelope = act(&tab, &log, options("never", 5000), dispatch)
        .await
        .unwrap();
    assert_eq!(envelope.timing.wait_reason, "tab_closed");
    assert_eq!(event_types(&envelope), ["tab_closed"]);
    assert!(envelope.screenshot_after.is_none());
    assert!(tab.last_frame().is_none());
    // Nothing to freeze or capture on a closed tab.
    assert_eq!(tab.take_steps(), ["turn", "capture", "thaw", "dispatch"]);
}

#[tokio::test]
async fn a_dialog_opened_mid_action_is_an_event_and_blocks_the_after_frame() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let dispatch: Dispatch<FakeTab> = Box::new(|tab: Arc<FakeTab>| {
        Box::pin(async move {
            tab.step("dispatch");
            tab.dialog.store(true, Ordering::SeqCst);
            tab.signals
                .send(TabSignal::DialogOpened(PendingDialog {
                    dialog_type: "alert".into(),
                    message: "Hello".into(),
                    default_prompt: String::new(),
                }))
                .ok();
            Ok(json!({}))
        })
    });
    let envelope = act(&tab, &log, options("immediate", 1000), dispatch)
        .await
        .unwrap();
    assert_eq!(event_types(&envelope), ["dialog"]);
    assert_eq!(envelope.events[0].event.data()["message"], "Hello");
    assert!(
        envelope.screenshot_after.is_none(),
        "a dialog blocks the page"
    );
    assert!(tab.last_frame().is_none());
    assert_eq!(
        tab.take_steps(),
        ["turn", "capture", "thaw", "dispatch", "freeze"]
    );
}

#[tokio::test]
async fn an_action_on_a_tab_a_dialog_blocks_fails_at_once() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    tab.dialog.store(true, Ordering::SeqCst);
    let err = act(&tab, &log, options("immediate", 1000), dispatch_ok())
        .await
        .unwrap_err();
    assert!(err.message.contains("dialog"), "{}", err.message);
    assert_eq!(
        tab.take_steps(),
        ["turn"],
        "nothing thawed, nothing dispatched"
    );
}

#[tokio::test]
async fn bad_options_fail_before_the_page_is_touched() {
    let (tab, log) = (FakeTab::new(), Arc::new(Log::default()));
    let err = act(&tab, &log, options("nonsense", 1000), dispatch_ok())
        .await
        .unwrap_err();
    assert!(
        err.message.contains("unknown wait_until.type"),
        "{}",
        err.message
    );
    assert!(tab.take_steps().is_empty());
    assert_eq!(log.actions.lock().len(), 1, "recorded as failed");
}
