//! The events of one action: what the tab signalled from dispatch to the
//! end of the wait, stamped with the page's clock, plus the `scroll` event
//! when the position moved; and the wait heuristic's polling loop.

use std::time::{Duration, Instant};

use crate::events::{self, TabEvent};

use super::envelope::{ActionEvent, NetworkSummary, ScrollState};
use super::options::NetworkOptions;
use crate::error::Result;
use crate::events::TabSignal;
use crate::plugin::{ViewportInfo, WaitDecision, WaitSignal};

/// What kind of navigation an action causes when the page doesn't say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NavigationHint {
    None,
    BackForward,
    Reload,
}

pub fn navigation_type(reason: Option<&str>, hint: NavigationHint) -> Option<&'static str> {
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
        "sameDocument" => Some("same_document"),
        _ => None,
    }
}

/// Collects signals during an action: events for the envelope, and network
/// counts.
pub struct Recorder {
    tab_id: String,
    hint: NavigationHint,
    pub events: Vec<ActionEvent>,
    /// The page's virtual clock when the action was dispatched; events are
    /// stamped with it plus the time the page has run since.
    virtual_start_ms: f64,
    dispatched: Instant,
    /// Page time fast-forwarded since the dispatch.
    skipped_ms: f64,
    /// The tab went away during the action.
    pub closed: bool,
    network_types: Option<Vec<String>>,
    started: std::collections::HashSet<String>,
    completed: u32,
}

impl Recorder {
    pub fn new(
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
            skipped_ms: 0.0,
            closed: false,
            network_types: network
                .map(|n| n.types.iter().map(|t| t.to_ascii_lowercase()).collect()),
            started: Default::default(),
            completed: 0,
        }
    }

    /// The page's clock was fast-forwarded: later events are stamped later.
    pub(crate) fn skip(&mut self, ms: f64) {
        self.skipped_ms += ms;
    }

    fn push(&mut self, event: TabEvent, virtual_time_ms: f64) {
        self.events.push(ActionEvent {
            event,
            virtual_time_ms,
        });
    }

    /// Records a signal; returns it for the wait heuristic when it is one.
    pub fn record(&mut self, signal: TabSignal) -> Option<WaitSignal> {
        let now = self.virtual_start_ms
            + self.skipped_ms
            + self.dispatched.elapsed().as_secs_f64() * 1000.0;
        let now = (now * 10.0).round() / 10.0;
        match signal {
            TabSignal::LoadingStopped | TabSignal::Announcing => None,
            // The failure itself comes as its own event.
            TabSignal::Navigated {
                error_page: true, ..
            } => None,
            TabSignal::Navigated { url, reason, .. } => {
                self.push(
                    TabEvent::Navigation(events::Navigation {
                        tab_id: self.tab_id.clone(),
                        url,
                        navigation_type: navigation_type(reason.as_deref(), self.hint)
                            .map(str::to_string),
                    }),
                    now,
                );
                None
            }
            TabSignal::DialogOpened(dialog) => {
                self.push(
                    TabEvent::Dialog(events::Dialog {
                        tab_id: self.tab_id.clone(),
                        dialog_type: dialog.dialog_type,
                        message: dialog.message,
                        default_prompt: dialog.default_prompt,
                        pending: true,
                    }),
                    now,
                );
                None
            }
            TabSignal::Event(event) => {
                self.push(event, now);
                None
            }
            TabSignal::Closed { reason } => {
                self.closed = true;
                self.push(
                    TabEvent::TabClosed(events::TabClosed {
                        tab_id: self.tab_id.clone(),
                        reason: reason.to_string(),
                    }),
                    now,
                );
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

    pub(crate) fn network_summary(
        &self,
        options: Option<&NetworkOptions>,
    ) -> Option<NetworkSummary> {
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

/// Requests that never finish, or don't bear on what the page shows: they
/// don't hold a fast-forward back.
const LONG_LIVED: [&str; 5] = [
    "WebSocket",
    "EventSource",
    "Ping",
    "Prefetch",
    "CSPViolationReport",
];

/// What the page has in flight, as far as the fast-forward cares: requests
/// that started during the action and a navigation of the main frame.
#[derive(Default)]
struct InFlight {
    requests: std::collections::HashSet<String>,
    /// Requests whose end was read before their start: the pump reads each
    /// kind of event from a stream of its own, and the browser's order
    /// between kinds is not kept.
    ended_early: std::collections::HashSet<String>,
    navigating: bool,
    /// A main-frame document committed during the action.
    committed: bool,
    /// File choosers opened whose event has not come yet.
    announcing: u32,
}

impl InFlight {
    fn observe(&mut self, signal: &TabSignal) {
        match signal {
            TabSignal::Wait(WaitSignal::RequestStarted(info))
                if !LONG_LIVED
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&info.resource_type)) =>
            {
                if !self.ended_early.remove(&info.id) {
                    self.requests.insert(info.id.clone());
                }
            }
            TabSignal::Wait(WaitSignal::RequestFinished(id)) => {
                if !self.requests.remove(id) && self.ended_early.len() < 1000 {
                    self.ended_early.insert(id.clone());
                }
            }
            TabSignal::Wait(WaitSignal::NavigationStarted(_)) => self.navigating = true,
            // The new document parses and runs its scripts on the wall
            // clock until it is loaded; a load event of the document it
            // replaces does not end that. Not its DOMContentLoaded either:
            // its frames load after it, each level once its parent has, and
            // between two levels nothing else is in flight, so a quiet
            // window skipped there would end the wait before the deeper
            // frames exist. The load event waits for them all.
            TabSignal::Wait(WaitSignal::NavigationCommitted(_)) => {
                self.navigating = true;
                self.committed = true;
            }
            TabSignal::Wait(WaitSignal::Load) if self.committed || !self.navigating => {
                self.navigating = false
            }
            TabSignal::LoadingStopped => self.navigating = false,
            TabSignal::Announcing => self.announcing += 1,
            TabSignal::Event(TabEvent::FileChooser(_)) => {
                self.announcing = self.announcing.saturating_sub(1)
            }
            _ => {}
        }
    }

    fn quiet(&self) -> bool {
        self.requests.is_empty() && !self.navigating && self.announcing == 0
    }
}

/// After a fast-forward ran page callbacks, the requests and navigations
/// they started get this long to be signalled before time moves on.
const AFTER_CALLBACKS: Duration = Duration::from_millis(2);
/// A page whose timers keep firing gets this many fast-forward steps in one
/// wait; the rest of the wait runs on the wall clock.
const MAX_FAST_FORWARDS: u32 = 40;

/// The wait heuristic's clock, from the end of the dispatch: the page's own
/// count where a fast-forward answered it (exact, even when the page
/// resumed late after its thaw), plus the wall clock and the page time
/// skipped since. Without fast-forwards it is the wall clock.
struct HeuristicClock {
    base_ms: f64,
    base_at: Instant,
    skipped_since_ms: f64,
}

impl HeuristicClock {
    fn new() -> Self {
        HeuristicClock {
            base_ms: 0.0,
            base_at: Instant::now(),
            skipped_since_ms: 0.0,
        }
    }

    fn skipped(&mut self, step: super::ClockStep) {
        match step.since_mark_ms {
            Some(page_ms) => {
                self.base_ms = page_ms;
                self.base_at = Instant::now();
                self.skipped_since_ms = 0.0;
            }
            // A document that started since the mark: counted from outside.
            None => self.skipped_since_ms += step.advanced_ms,
        }
    }

    fn elapsed_ms(&self) -> f64 {
        self.base_ms + self.base_at.elapsed().as_secs_f64() * 1000.0 + self.skipped_since_ms
    }
}

/// Runs the wait heuristic until it is done or the timeout passes.
/// `dialog_open`: whether a dialog blocks the page now; one that opened and
/// was answered during the dispatch (an accepted `beforeunload`) doesn't
/// stop the wait.
///
/// On [`WaitClock::Page`](super::WaitClock::Page) the heuristic's clock is
/// the page's: while nothing is in flight, the time it asks to wait is
/// fast-forwarded on the page (`ActionTab::advance_clock`: timers that come
/// due run, in order, each at its time), a step at a time, so a timer that
/// starts a request is seen before the page's time moves on; while a request
/// or a navigation is in flight, the page runs at its normal pace. Tabs
/// whose clock can't be fast-forwarded wait on the wall clock.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn wait_for_settle<T: super::ActionTab>(
    tab: &T,
    session: &mut Box<dyn crate::plugin::WaitSession>,
    mut decision: WaitDecision,
    rx: &mut tokio::sync::broadcast::Receiver<TabSignal>,
    recorder: &mut Recorder,
    timeout: Duration,
    mut fast_forward: bool,
    dialog_open: &(dyn Fn() -> bool + Sync),
    hang_up: Option<&tokio_util::sync::CancellationToken>,
    carried: Vec<WaitSignal>,
) -> Result<String> {
    let started = Instant::now();
    let hung_up = || hang_up.is_some_and(|token| token.is_cancelled());
    // A fast-forward starts this long (real time) after the dispatch ended.
    let fast_forward_after = tab.fast_forward_after();
    let mut clock = HeuristicClock::new();
    let mut in_flight = InFlight::default();
    for signal in &carried {
        in_flight.observe(&TabSignal::Wait(signal.clone()));
    }
    let mut early = carried;
    drain(rx, &mut in_flight, recorder, &mut early, started);
    // A page that is navigating has no document to mark yet (asking the one
    // being replaced waits for it to go); the new document's time is then
    // counted from outside, and a tab whose clock can't be fast-forwarded
    // says so at the first step.
    if fast_forward && !in_flight.navigating {
        fast_forward = tab.mark_clock().await.unwrap_or(false);
    }
    let mut steps = 0;
    // A quiet fast-forward usually ends the wait (the heuristic's recheck
    // is the quiet time it still wants): that step also freezes the page,
    // one page call instead of three. Once that guess is wrong, no more.
    let mut expect_last_step = fast_forward;
    let mut frozen_early = false;
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
        if hung_up() {
            return Ok("client_gone".into());
        }
        // What already happened counts before the page's time moves: a
        // navigation the dispatch committed is in flight, and a fast-forward
        // of the document it replaces would only wait for that to go.
        let mut signals = std::mem::take(&mut early);
        drain(rx, &mut in_flight, recorder, &mut signals, started);
        if recorder.closed {
            return Ok("tab_closed".into());
        }
        let can_skip = fast_forward && in_flight.quiet() && !dialog_open();
        let skipped = if can_skip && started.elapsed() >= fast_forward_after {
            let budget_ms = recheck.as_secs_f64() * 1000.0;
            let until_ms = clock.elapsed_ms() + budget_ms;
            match fast_forward_step(tab, budget_ms, until_ms, expect_last_step).await {
                Some((step, frozen)) => {
                    steps += 1;
                    fast_forward = steps < MAX_FAST_FORWARDS;
                    frozen_early = frozen;
                    Some(step)
                }
                None => {
                    fast_forward = false;
                    None
                }
            }
        } else {
            None
        };
        match skipped {
            Some(step) => {
                tracing::trace!(
                    "wait at {:.1} ms: fast-forward {step:?}",
                    started.elapsed().as_secs_f64() * 1000.0
                );
                clock.skipped(step);
                recorder.skip(step.advanced_ms);
                if step.callbacks > 0 {
                    tokio::time::sleep(AFTER_CALLBACKS).await;
                }
            }
            None => {
                // Sleep until the recheck time (or until a fast-forward may
                // start), waking early for a new signal.
                let mut nap = recheck.min(remaining);
                if can_skip {
                    nap = nap.min(fast_forward_after.saturating_sub(started.elapsed()));
                }
                let hang_up_or_never = async {
                    match hang_up {
                        Some(token) => token.cancelled().await,
                        None => std::future::pending().await,
                    }
                };
                let next = tokio::select! {
                    next = tokio::time::timeout(nap, rx.recv()) => next,
                    _ = hang_up_or_never => continue,
                };
                match next {
                    Ok(Ok(signal)) => {
                        tracing::trace!(
                            "wait at {:.1} ms: {signal:?}",
                            started.elapsed().as_secs_f64() * 1000.0
                        );
                        in_flight.observe(&signal);
                        signals.extend(recorder.record(signal));
                    }
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                        tracing::warn!("wait lost {n} signals")
                    }
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => {
                        return Ok("tab_closed".into());
                    }
                    Err(_) => {}
                }
            }
        }
        drain(rx, &mut in_flight, recorder, &mut signals, started);
        if recorder.closed {
            return Ok("tab_closed".into());
        }
        if !dialog_open() {
            signals.retain(|s| !matches!(s, WaitSignal::DialogOpened));
        }
        let elapsed_ms = clock.elapsed_ms();
        decision = session.poll(signals, elapsed_ms as u64).await?;
        tracing::trace!(
            "wait at {:.1} ms: heuristic at {elapsed_ms:.1} ms says {decision:?}",
            started.elapsed().as_secs_f64() * 1000.0
        );
        // Frozen early, and the wait goes on after all: the page runs again,
        // and this wait's later steps don't guess again.
        if std::mem::take(&mut frozen_early) && !matches!(decision, WaitDecision::Done { .. }) {
            expect_last_step = false;
            tab.thaw().await?;
        }
    }
}

/// One fast-forward of the page's clock by `budget_ms`, as its last step
/// (freezing the page too when nothing came due) when the wait expects
/// so; `None` when the page's clock can't be moved.
async fn fast_forward_step<T: super::ActionTab>(
    tab: &T,
    budget_ms: f64,
    until_ms: f64,
    expect_last_step: bool,
) -> Option<(super::ClockStep, bool)> {
    let step = if expect_last_step {
        tab.settle_clock(budget_ms, until_ms).await
    } else {
        tab.advance_clock(budget_ms, until_ms)
            .await
            .map(|step| step.map(|step| (step, false)))
    };
    step.unwrap_or_else(|err| {
        tracing::debug!("no fast-forward: {}", err.message);
        None
    })
}

/// Takes the signals already sent: noted in flight, recorded, and those for
/// the wait heuristic added to `signals`.
fn drain(
    rx: &mut tokio::sync::broadcast::Receiver<TabSignal>,
    in_flight: &mut InFlight,
    recorder: &mut Recorder,
    signals: &mut Vec<WaitSignal>,
    started: Instant,
) {
    while let Ok(signal) = rx.try_recv() {
        tracing::trace!(
            "wait at {:.1} ms: {signal:?}",
            started.elapsed().as_secs_f64() * 1000.0
        );
        in_flight.observe(&signal);
        signals.extend(recorder.record(signal));
    }
}

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
pub(super) fn scroll_event(
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
        event: TabEvent::Scroll(events::Scroll {
            tab_id: tab_id.to_string(),
            delta: events::ScrollDelta {
                x: dx,
                y: dy,
                direction: direction.to_string(),
            },
            position: events::ScrollPosition {
                horizontal_percent: position.horizontal_percent,
                vertical_percent: position.vertical_percent,
                horizontal_px: position.horizontal_px,
                vertical_px: position.vertical_px,
            },
            source: source.as_str().to_string(),
        }),
        virtual_time_ms,
    })
}

#[cfg(test)]
mod in_flight_tests {
    use super::*;

    fn wait(signal: WaitSignal) -> TabSignal {
        TabSignal::Wait(signal)
    }

    #[test]
    fn a_navigation_is_in_flight_until_its_document_has_loaded() {
        let mut in_flight = InFlight::default();
        assert!(in_flight.quiet());
        in_flight.observe(&wait(WaitSignal::NavigationStarted("a".into())));
        assert!(!in_flight.quiet());
        // The document being replaced loads: still navigating.
        in_flight.observe(&wait(WaitSignal::Load));
        assert!(!in_flight.quiet(), "the old document's load");
        in_flight.observe(&wait(WaitSignal::NavigationCommitted("b".into())));
        in_flight.observe(&wait(WaitSignal::DomContentLoaded));
        assert!(!in_flight.quiet(), "parsed, its frames still loading");
        in_flight.observe(&wait(WaitSignal::Load));
        assert!(in_flight.quiet(), "loaded");
    }

    #[test]
    fn a_request_whose_end_is_read_first_is_not_left_in_flight() {
        let started = |id: &str| {
            wait(WaitSignal::RequestStarted(crate::plugin::RequestInfo {
                id: id.into(),
                url: "http://x/api".into(),
                resource_type: "Fetch".into(),
                same_site: true,
            }))
        };
        let mut in_flight = InFlight::default();
        in_flight.observe(&wait(WaitSignal::RequestFinished("r1".into())));
        in_flight.observe(&started("r1"));
        assert!(in_flight.quiet(), "ended before it was seen to start");
        in_flight.observe(&started("r2"));
        assert!(!in_flight.quiet());
        in_flight.observe(&wait(WaitSignal::RequestFinished("r2".into())));
        assert!(in_flight.quiet());
    }

    #[test]
    fn a_navigation_that_stops_without_a_load_is_over() {
        let mut in_flight = InFlight::default();
        in_flight.observe(&wait(WaitSignal::NavigationStarted("a".into())));
        in_flight.observe(&TabSignal::LoadingStopped);
        assert!(in_flight.quiet(), "a download or a 204 ends it");
    }
}
