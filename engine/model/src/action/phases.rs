//! The action loop's phases, each a step of [`super::execute`]: the
//! frame before, the dispatch's result, the settle (the wait and what comes
//! after it), the frame after.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::events::{Recorder, wait_for_settle};
use super::{
    ActionKind, ActionOptions, ActionTab, NavigationHint, POPUP_ATTACH_LIMIT, ScreenshotArea,
    WaitClock, finish_transitions, held_by_beforeunload,
};
use crate::capture::{CachedFrame, CaptureOptions, CaptureTiming, Screenshot};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::events::TabSignal;
use crate::plugin::{PluginRegistry, ViewportInfo};

/// What an action's screenshots are: their markup, cursor and area.
pub(super) struct Shots<'a> {
    pub(super) registry: &'a dyn PluginRegistry,
    pub(super) markup: Vec<String>,
    /// Screenshots at all (`area` is not `none`).
    pub(super) wanted: bool,
    pub(super) clip: Option<crate::capture::Clip>,
    pub(super) cursor: bool,
}

impl<'a> Shots<'a> {
    /// The screenshots `options` ask of an action.
    pub(super) fn for_action(
        registry: &'a dyn PluginRegistry,
        options: &ActionOptions,
    ) -> Result<Shots<'a>> {
        Ok(Shots {
            registry,
            markup: options.markup_tags(registry)?,
            wanted: options.screenshot.area != ScreenshotArea::None,
            clip: match &options.screenshot.area {
                ScreenshotArea::Region(clip) => Some(*clip),
                _ => None,
            },
            cursor: options.screenshot.cursor,
        })
    }

    fn options<T: ActionTab>(&self, tab: &T) -> CaptureOptions {
        CaptureOptions {
            clip: self.clip,
            markup: self.markup.clone(),
            cursor: if self.cursor { tab.pointer() } else { None },
        }
    }
}

/// Step 1's frame: the one the agent saw.
pub(super) struct BeforeFrame {
    pub(super) image: Option<Screenshot>,
    pub(super) viewport: ViewportInfo,
    pub(super) virtual_start_ms: f64,
    pub(super) timing: CaptureTiming,
    /// The page broke before the action (a crashed renderer).
    pub(super) broken: Option<Error>,
}

/// 1. Before: the frame the agent saw, taken while the page is still
/// frozen; the last after-frame when the page stayed frozen since.
pub(super) async fn before_frame<T: ActionTab>(
    tab: &Arc<T>,
    shots: &Shots<'_>,
    dialog_before: bool,
) -> BeforeFrame {
    let mut frame = BeforeFrame {
        image: None,
        viewport: ViewportInfo::default(),
        virtual_start_ms: now_ms(),
        timing: CaptureTiming::default(),
        broken: None,
    };
    match tab.last_frame().filter(|f| f.frozen_since || dialog_before) {
        // Behind a dialog the page can't be read: the last frame stands.
        Some(last) if dialog_before => {
            frame.image = last.image.filter(|_| shots.wanted);
            frame.viewport = last.viewport;
            frame.virtual_start_ms = last.virtual_time_ms;
        }
        _ if dialog_before => {}
        Some(last) if !shots.wanted => {
            frame.viewport = last.viewport;
            frame.virtual_start_ms = last.virtual_time_ms;
        }
        Some(CachedFrame {
            image: Some(image),
            viewport,
            virtual_time_ms,
            ..
        }) => {
            frame.image = Some(image);
            frame.viewport = viewport;
            frame.virtual_start_ms = virtual_time_ms;
        }
        _ if shots.wanted => match tab
            .capture(shots.registry, &shots.options(tab.as_ref()))
            .await
        {
            Ok((shot, viewport, timing)) => {
                frame.virtual_start_ms = shot.virtual_time_ms;
                frame.image = Some(shot);
                frame.viewport = viewport;
                frame.timing = timing;
            }
            Err(err) => frame.broken = Some(err),
        },
        _ => match tab.viewport().await {
            Ok((viewport, virtual_time_ms)) => {
                frame.viewport = viewport;
                frame.virtual_start_ms = virtual_time_ms;
            }
            Err(err) => frame.broken = Some(err),
        },
    }
    frame
}

/// A page that stops answering (a busy script, a frame that never comes)
/// ends the action with what is known and says so; the engine repairs the
/// tab right after. Any other error is the action's.
pub(super) fn page_failed<T: ActionTab>(tab: &T, err: Error) -> Result<String> {
    match tab.page_failure() {
        Some(cause) => Ok(cause),
        None => Err(err),
    }
}

/// 2a. The dispatch's result as the envelope says it, and the page's
/// failure if it broke.
pub(super) async fn dispatched_result<T: ActionTab>(
    tab: &Arc<T>,
    dispatched: Result<Value>,
    dialog_before: bool,
) -> Result<(Value, Option<String>)> {
    match dispatched {
        Ok(value) => Ok((value, None)),
        // A dialog the action's own input raised (an alert in a mousedown
        // or mousemove handler) holds the page, and the rest of the input
        // could not be sent: the envelope shows the dialog, as it does for
        // one a click raised.
        Err(err) if !dialog_before && tab.dialog_pending() && tab.page_failure().is_none() => Ok((
            serde_json::json!({
                "status": "interrupted_by_dialog",
                "error": err.message,
                "hint": "a dialog opened during the action and holds the page; the rest of the action's input was not sent: accept or dismiss it, then retry if needed",
            }),
            None,
        )),
        Err(err) => {
            // A page known to be broken is not asked to freeze: it would
            // not answer that either.
            if tab.page_failure().is_none() {
                tab.freeze().await.ok();
            }
            let message = err.message.clone();
            let cause = page_failed(tab.as_ref(), err)?;
            Ok((
                serde_json::json!({ "status": "no_answer", "error": message }),
                Some(cause),
            ))
        }
    }
}

/// What a wait starts from: requests already in flight (`network_idle`),
/// and for a navigation wait the navigation already under way, even one
/// that began before the action.
pub(super) fn carried_signals<T: ActionTab>(
    tab: &T,
    wait_type: &str,
    uncovered_navigation: Option<String>,
) -> Vec<crate::plugin::WaitSignal> {
    match wait_type {
        "network_idle" => tab.in_flight_now(),
        "navigation" => {
            let mut carried = tab.in_flight_now();
            let navigating = carried
                .iter()
                .any(|s| matches!(s, crate::plugin::WaitSignal::NavigationStarted(_)));
            if let Some(url) = uncovered_navigation.filter(|_| !navigating) {
                carried.push(crate::plugin::WaitSignal::NavigationStarted(url));
                if !tab.loading() {
                    carried.push(crate::plugin::WaitSignal::Load);
                }
            }
            carried
        }
        _ => Vec::new(),
    }
}

/// 3. The after frame, once the page is frozen; also what the next
/// action's before-frame reuses. A page that broke ends with none.
pub(super) async fn after_frame<T: ActionTab>(
    tab: &Arc<T>,
    shots: &Shots<'_>,
    frozen: bool,
    skip: bool,
    before_viewport: &ViewportInfo,
    timing: &mut CaptureTiming,
) -> Result<(Option<Screenshot>, ViewportInfo, Option<String>)> {
    if skip {
        // A closed tab has no page; a dialog blocks the page's script, so
        // there is no layout to read; a broken page draws nothing.
        tab.set_last_frame(None);
        return Ok((None, before_viewport.clone(), None));
    }
    if !shots.wanted {
        let (viewport, virtual_time_ms) = tab.viewport().await?;
        tab.set_last_frame(Some(CachedFrame {
            image: None,
            viewport: viewport.clone(),
            virtual_time_ms,
            frozen_since: frozen,
        }));
        return Ok((None, viewport, None));
    }
    match tab
        .capture(shots.registry, &shots.options(tab.as_ref()))
        .await
    {
        Ok((shot, viewport, t)) => {
            timing.capture_ms += t.capture_ms;
            timing.markup_ms += t.markup_ms;
            timing.encode_ms += t.encode_ms;
            tab.set_last_frame(Some(CachedFrame {
                image: Some(shot.clone()),
                viewport: viewport.clone(),
                virtual_time_ms: shot.virtual_time_ms,
                frozen_since: frozen,
            }));
            Ok((Some(shot), viewport, None))
        }
        // A page that stopped answering: the envelope says so.
        Err(err) => {
            let cause = page_failed(tab.as_ref(), err)?;
            tab.set_last_frame(None);
            Ok((None, before_viewport.clone(), Some(cause)))
        }
    }
}

/// What a wait works with, from the action that waits.
pub(super) struct Settling<'a, 't> {
    pub(super) turn: &'a crate::turn::ActionTurn<'t>,
    pub(super) session: &'a mut Box<dyn crate::plugin::WaitSession>,
    pub(super) first_decision: crate::plugin::WaitDecision,
    pub(super) rx: &'a mut tokio::sync::broadcast::Receiver<TabSignal>,
    pub(super) recorder: &'a mut Recorder,
    pub(super) uncovered_navigation: Option<String>,
}

/// 2b. Waits until the wait heuristic says the action is done (or the
/// timeout, a dialog, a closed tab, a client that hung up), then lets
/// running transitions finish and collects what the action caused; why it
/// ended. Reads may run beside the wait, not beside the dispatch.
pub(super) async fn settle<T: ActionTab>(
    tab: &Arc<T>,
    settling: Settling<'_, '_>,
    options: &ActionOptions,
    kind: &ActionKind,
    failed: bool,
    result: &mut Value,
) -> Result<String> {
    let step = Instant::now();
    let Settling {
        turn,
        session,
        first_decision,
        rx,
        recorder,
        uncovered_navigation,
    } = settling;
    let timeout = Duration::from_millis(options.wait_until.timeout_ms);
    let wait_reason = if failed {
        "renderer_unresponsive".to_string()
    } else {
        // The page only runs now: a screenshot need not queue behind a
        // long wait.
        turn.open_to_reads();
        let waited = wait_for_settle(
            tab.as_ref(),
            session,
            first_decision,
            rx,
            recorder,
            timeout,
            // The network is real: its quiet window is waited out on the
            // wall clock, not skipped on the page's.
            options.wait_until.clock() == WaitClock::Page
                && options.wait_until.wait_type != "network_idle",
            &|| tab.dialog_pending(),
            options.hang_up.as_ref(),
            carried_signals(
                tab.as_ref(),
                &options.wait_until.wait_type,
                uncovered_navigation,
            ),
        )
        .await;
        match waited {
            Ok(reason) => reason,
            Err(err) => {
                turn.close_to_reads().await;
                tab.freeze().await.ok();
                return Err(err);
            }
        }
    };
    turn.close_to_reads().await;
    if wait_reason == "settled" && !failed {
        let left = timeout.saturating_sub(step.elapsed());
        finish_transitions(tab.as_ref(), left, options.hang_up.as_ref()).await;
    }
    // A back, forward or reload is answered before the page's beforeunload
    // prompt opens: held by it, the result says so.
    if kind.hint != NavigationHint::None
        && tab.dialog_pending()
        && recorder.events.iter().any(|e| {
            matches!(&e.event, crate::events::TabEvent::Dialog(d) if d.dialog_type == "beforeunload")
        })
    {
        held_by_beforeunload(result, tab.id(), None);
    }
    // A popup the action opened is announced once it is attached, which can
    // take longer than the settle: its `popup` event belongs here.
    if !recorder.closed && !failed {
        tab.popups_settled(POPUP_ATTACH_LIMIT).await;
    }
    while let Ok(signal) = rx.try_recv() {
        recorder.record(signal);
    }
    // An action that does not wait leaves its navigation to a navigation
    // wait that follows.
    if options.wait_until.wait_type != "immediate" {
        tab.navigations_seen();
    }
    Ok(wait_reason)
}
