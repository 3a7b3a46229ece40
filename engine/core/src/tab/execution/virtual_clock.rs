//! Time while a tab runs: the clock task that grants virtual time (and
//! draws frames under begin-frame control) while a tab is thawed, and the
//! compositor page clock's fast-forward through quiet stretches.

use std::sync::Weak;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetVirtualTimePolicyParams, VirtualTimePolicy,
};
use chromiumoxide::cdp::browser_protocol::headless_experimental::BeginFrameParams;
use serde_json::json;
use tokio::sync::oneshot;

use super::page_clock::ClockStart;
use super::{
    BUDGET_STUCK, FRAME_INTERVAL_MS, FrameDriver, MAX_BUDGET_MS, PAY_OUT_LIMIT, STEP_LIMIT, TICK,
};
use crate::action::ClockStep;
use crate::error::Result;
use crate::tab::frames::DriverKind;
use crate::tab::frames::Frames;
use crate::tab::session::PageSession;
use crate::viewport::VIEWPORT_JS;

impl FrameDriver {
    /// Fast-forwards a compositor tab's page clock by up to `budget_ms`,
    /// running the page's timers that come due on the way (see `advance` in
    /// `page_clock.js`). `None` when this tab can't be fast-forwarded: no
    /// execution control, the deterministic driver (its virtual time follows
    /// the begin-frames it is drawn with), a dialog holding the page, or a
    /// document without the clock.
    /// `until_ms`: see `ActionTab::advance_clock`.
    pub async fn advance(&self, budget_ms: f64, until_ms: f64) -> Result<Option<ClockStep>> {
        Ok(self
            .fast_forward(budget_ms, Some(until_ms), false, STEP_LIMIT)
            .await?
            .map(|(step, _)| step))
    }

    /// Lets `ms` of a compositor tab's page time pass at once, between two
    /// input events of an action's dispatch: the clock jumps, and the
    /// timers that come due on the way run, each at its own time (a few
    /// steps when callbacks run, as in a settle). False when the tab has no
    /// page clock to jump (see [`FrameDriver::advance`]): the caller then
    /// waits in real time.
    pub async fn pass_time(&self, ms: f64) -> Result<bool> {
        // A zero-delay interval could keep every step short: the rest of
        // the time is then not given, rather than the dispatch held.
        const MOST_STEPS: usize = 8;
        let mut left = ms;
        for _ in 0..MOST_STEPS {
            // Timers that come due run inside the jump: they get the bound
            // a page's input handlers get.
            let limit = self.session.input_bound();
            let Some((step, _)) = self.fast_forward(left, None, false, limit).await? else {
                return Ok(false);
            };
            left -= step.advanced_ms;
            if step.callbacks == 0 || left <= 0.0 {
                break;
            }
        }
        Ok(true)
    }

    /// [`FrameDriver::advance`] for the step a settle expects to be its last:
    /// when no callback ran, the page is frozen in the same page task and its
    /// viewport read (see `settle` in `page_clock.js`), and the action's
    /// freeze that follows has nothing left to do. True when it froze; a
    /// settle that goes on after all thaws the tab again.
    pub async fn settle(&self, budget_ms: f64, until_ms: f64) -> Result<Option<(ClockStep, bool)>> {
        self.fast_forward(budget_ms, Some(until_ms), true, STEP_LIMIT)
            .await
    }

    /// `until_ms`: where the wait's clock will stand, counted from the mark
    /// (see `catchUp` in `page_clock.js`); none outside a wait.
    async fn fast_forward(
        &self,
        budget_ms: f64,
        until_ms: Option<f64>,
        freeze_if_idle: bool,
        limit: Duration,
    ) -> Result<Option<(ClockStep, bool)>> {
        let mut exec = self.frames.execution.lock().await;
        if !exec.enabled || exec.kind == DriverKind::Deterministic {
            return Ok(None);
        }
        let until_ms = until_ms.map_or_else(|| "null".to_string(), |until| format!("{until:?}"));
        let expression = if freeze_if_idle {
            format!(
                "(() => {{ const c = window.__wabpClock; if (!c || !c.settle) return null; \
                 const s = c.settle({budget_ms:?}, {until_ms}); \
                 if (s && typeof s.frozenAt === 'number') s.viewport = {VIEWPORT_JS}; return s; }})()"
            )
        } else {
            format!(
                "window.__wabpClock && window.__wabpClock.advance ? window.__wabpClock.advance({budget_ms:?}, {until_ms}) : null"
            )
        };
        // A settle's step holds the animations in the same breath (the
        // session keeps the order); they run on if the page did not freeze.
        let hold_animations = async {
            if freeze_if_idle {
                Some(self.set_animation_rate(0.0, exec.kind).await)
            } else {
                None
            }
        };
        let (answer, held) = tokio::join!(self.ask_page_within(expression, limit), hold_animations);
        let animations_held = matches!(held, Some(Ok(true)));
        let step_and_frozen_at = answer.map(|answer| {
            answer.filter(|v| v.is_object()).map(|value| {
                let step = ClockStep {
                    advanced_ms: value["jumped"].as_f64().unwrap_or(0.0).max(0.0),
                    callbacks: value["ran"].as_u64().unwrap_or(0) as u32,
                    since_mark_ms: value["since"].as_f64(),
                };
                (step, value["frozenAt"].as_f64(), value)
            })
        });
        let frozen = matches!(step_and_frozen_at, Ok(Some((_, Some(_), _))));
        if held.is_some() && !(frozen && animations_held) {
            if animations_held {
                self.set_animation_rate(1.0, exec.kind).await?;
            } else {
                // The hold did not answer: a dialog (a callback raised it,
                // or a frame's) holds it, and it runs once the dialog is
                // answered. The release queues behind it.
                self.release_animations_behind_dialog(exec.kind);
            }
        }
        let Some((step, frozen_at, value)) = step_and_frozen_at? else {
            return Ok(None);
        };
        {
            let mut clock = self.frames.page_clock.lock();
            match clock.frozen_at_ms.as_mut() {
                Some(at) => *at += step.advanced_ms,
                None => clock.shift_ms += step.advanced_ms,
            }
            if frozen_at.is_some() {
                clock.frozen_at_ms = frozen_at;
            }
        }
        let Some(frozen_at) = frozen_at else {
            return Ok(Some((step, false)));
        };
        if !animations_held {
            // A dialog holds the page (a frame's timer raised it; the page
            // itself ran nothing): as after any freeze a dialog
            // interrupts, the page runs on.
            drop(exec);
            self.thaw_page_clock(true).await?;
            return Ok(Some((step, false)));
        }
        self.frames.forget_frozen_frame();
        exec.paused = true;
        exec.settled = true;
        self.frames
            .remember_frozen_viewport(value["viewport"].clone());
        // Documents that start from now on start frozen. Registered behind
        // the answer, its turn taken now: the next change of the clock's
        // state waits for it (`register_page_clock` takes turns), and until
        // then only a navigation the frozen page did not start (a meta
        // refresh) could commit.
        let turn = self.frames.clock_registration.clone().lock_owned().await;
        let driver = self.clone();
        tokio::spawn(async move {
            let start = ClockStart::Frozen {
                at_ms: Some(frozen_at),
            };
            if let Err(e) = driver.register_page_clock_in_turn(start, turn).await {
                tracing::warn!(
                    "the frozen page clock could not be registered for new documents: {}",
                    e.message
                );
            }
        });
        Ok(Some((step, true)))
    }
}

pub(super) async fn run_clock(
    session: Weak<PageSession>,
    frames: Weak<Frames>,
    mut stop: oneshot::Receiver<()>,
) {
    // The first grant comes one tick after the thaw: a short command (a
    // script, a screenshot) runs without moving the clock at all.
    let mut last = Instant::now();
    // Real time not yet granted. A new grant replaces the renderer's unspent
    // budget, so the next one waits until the last expired (or looks stuck):
    // on a busy machine the page's clock catches up instead of falling behind.
    let mut owed_ms = 0.0;
    let mut granted_at: Option<Instant> = None;
    // Once told to stop, the clock pays out the time still owed (a loaded
    // machine's page lags its wait), bounded by this deadline.
    let mut paying_out: Option<Instant> = None;
    loop {
        let Some(strong) = frames.upgrade() else {
            return;
        };
        match paying_out {
            None => tokio::select! {
                _ = &mut stop => {
                    owed_ms += last.elapsed().as_secs_f64() * 1000.0;
                    paying_out = Some(Instant::now() + PAY_OUT_LIMIT);
                }
                _ = tokio::time::sleep(TICK) => {}
                _ = strong.nudge.notified() => {}
            },
            Some(deadline) => {
                let spent = !strong.budget_outstanding();
                if (spent && owed_ms < 1.0) || Instant::now() >= deadline {
                    return;
                }
                if !spent {
                    tokio::time::sleep(TICK / 4).await;
                }
            }
        }
        drop(strong);
        let (Some(session), Some(frames)) = (session.upgrade(), frames.upgrade()) else {
            return;
        };
        let driver = FrameDriver { session, frames };
        if driver.session.dialog_open() {
            if paying_out.is_some() {
                return;
            }
            last = Instant::now();
            continue;
        }
        // The frame first: queued input waits for it on the renderer's main
        // thread, and a grant sent behind that input would wait too. A full
        // frame, with display updates: wheel scrolling completes (and is
        // acknowledged) only when the compositor draws.
        let frame = BeginFrameParams::builder()
            .interval(FRAME_INTERVAL_MS)
            .build();
        let _ = driver.begin_frame(frame, STEP_LIMIT).await;
        if paying_out.is_none() {
            owed_ms += last.elapsed().as_secs_f64() * 1000.0;
        }
        last = Instant::now();
        let spent = !driver.frames.budget_outstanding();
        let stuck = granted_at.is_some_and(|t| t.elapsed() > BUDGET_STUCK);
        if (spent || stuck) && owed_ms >= 1.0 {
            let budget = owed_ms.min(MAX_BUDGET_MS);
            owed_ms -= budget;
            let mut grant = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Advance);
            grant.budget = Some(budget);
            driver.frames.set_budget_outstanding(true);
            granted_at = Some(Instant::now());
            let _ = driver.session.execute_within(grant, STEP_LIMIT).await;
            driver
                .mirror(
                    "Emulation.setVirtualTimePolicy",
                    json!({ "policy": "advance", "budget": budget }),
                )
                .await;
        }
    }
}
