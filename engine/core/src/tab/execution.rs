//! Execution control: frame drivers that freeze a page between actions and
//! let it run inside one.
//!
//! - **deterministic**: `chromium-headless-shell` with the tab under
//!   begin-frame control. Frozen = virtual time paused
//!   (`Emulation.setVirtualTimePolicy{pause}`: timers, `Date.now`,
//!   `performance.now`) + animation playback rate 0 (CSS and Web
//!   Animations); the renderer draws only when the engine sends
//!   `HeadlessExperimental.beginFrame`, so requestAnimationFrame stops too.
//!   Captures are begin-frames with a screenshot. While thawed, a clock task
//!   issues the frames and grants virtual time in budgets that follow real
//!   time (never `advance` without a budget: it races ahead ~500x).
//! - **compositor**: any other Chromium (headed, `--connect`, popups drawn
//!   by the compositor). Full Chromium draws no frame while virtual time is
//!   paused or fast-forwarding, so input acknowledgements and captures
//!   stall for seconds; this driver never uses virtual time. Frozen = the
//!   page clock (`page_clock.js`: the page's timers, rAF, idle callbacks,
//!   `Date` and `performance.now` held, in every frame) + animation playback
//!   rate 0. The compositor keeps drawing, so `Page.captureScreenshot`
//!   answers at once.
//! - **free-running** (`--no-pause`): nothing is frozen until a client turns
//!   execution control on for the tab, which makes it a compositor tab.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::animation::{
    EnableParams as AnimationEnableParams, SetPlaybackRateParams,
};
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetVirtualTimePolicyParams, VirtualTimePolicy,
};
use chromiumoxide::cdp::browser_protocol::headless_experimental::BeginFrameParams;
use chromiumoxide::cdp::browser_protocol::network::TimeSinceEpoch;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::error::{Error, Result};

mod captures;
mod page_clock;
mod virtual_clock;

use page_clock::ClockStart;
use virtual_clock::run_clock;

use super::frames::{ClockTask, DriverKind, Frames};
use super::session::PageSession;

/// How often the clock task grants virtual time (and, for deterministic tabs,
/// draws a frame) while a tab is thawed.
const TICK: Duration = Duration::from_millis(16);
/// The most virtual time one grant may carry: enough for a clock delayed by a
/// busy machine to catch up with real time, small enough that a stalled one
/// never lets a page leap ahead.
const MAX_BUDGET_MS: f64 = 250.0;
/// A grant not spent after this is given up on (the renderer is stuck, e.g.
/// behind a frame that never comes) and the next one goes out anyway.
const BUDGET_STUCK: Duration = Duration::from_millis(500);
/// How long a stopping clock may take to grant the virtual time still owed
/// (the freeze waits twice `STEP_LIMIT` for it).
const PAY_OUT_LIMIT: Duration = Duration::from_secs(3);
/// Bound on one clock step's CDP commands.
const STEP_LIMIT: Duration = Duration::from_secs(2);
/// How long a command queued behind an open dialog may wait for its answer.
const DIALOG_RELEASE_LIMIT: Duration = Duration::from_secs(600);
/// Bound on a compositor capture, after which the last frame stands in.
const COMPOSITOR_CAPTURE_LIMIT: Duration = Duration::from_secs(5);
/// The compositor driver's page clock, before its placeholders are filled.
const PAGE_CLOCK_JS: &str = include_str!("page_clock.js");
/// The page clock resumes this long after a thaw (`THAW_DELAY_MS` there).
const PAGE_CLOCK_THAW_DELAY_MS: f64 = 16.0;
/// Begin-frame interval reported to the compositor (60 fps).
const FRAME_INTERVAL_MS: f64 = 1000.0 / 60.0;

/// headless-shell's GPU process dies on overlapping begin-frames ("Got
/// overlapping IssueExternalBeginFrame"), even for different tabs: one at a
/// time, browser-wide.
static BEGIN_FRAME_TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Whether a page is under begin-frame control (a popup of a deterministic
/// tab inherits it): a begin-frame without a screenshot succeeds only then.
pub async fn accepts_begin_frames(page: &chromiumoxide::Page) -> bool {
    let _turn = BEGIN_FRAME_TURN.lock().await;
    let probe = BeginFrameParams::builder()
        .interval(FRAME_INTERVAL_MS)
        .no_display_updates(true)
        .build();
    matches!(
        tokio::time::timeout(STEP_LIMIT, page.execute(probe)).await,
        Ok(Ok(_))
    )
}

/// Drives one tab's frames: freeze and thaw, the clock that grants virtual
/// time, captures. It holds the two components it works on (the page
/// session and the frames), never the tab.
#[derive(Clone)]
pub struct FrameDriver {
    session: Arc<PageSession>,
    frames: Arc<Frames>,
}

impl FrameDriver {
    pub fn new(session: Arc<PageSession>, frames: Arc<Frames>) -> FrameDriver {
        FrameDriver { session, frames }
    }

    async fn begin_frame(
        &self,
        params: BeginFrameParams,
        limit: Duration,
    ) -> Result<chromiumoxide::cdp::browser_protocol::headless_experimental::BeginFrameReturns>
    {
        let _turn = BEGIN_FRAME_TURN.lock().await;
        let response = tokio::time::timeout(limit, self.session.execute_within(params, limit))
            .await
            .map_err(|_| {
                Error::timeout(format!(
                    "the begin-frame did not finish within {} ms",
                    limit.as_millis()
                ))
            })??;
        Ok(response.result)
    }

    /// The driver this tab runs under.
    pub async fn kind(&self) -> DriverKind {
        self.frames.execution.lock().await.kind
    }

    /// Whether the page draws and answers within `limit`: a script round
    /// trip, and for a deterministic tab one begin-frame (no screenshot).
    pub async fn answers(&self, limit: Duration) -> bool {
        let script = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new("0");
        if !matches!(
            self.session
                .execute_until_blocked(script, limit, None)
                .await,
            Ok(Some(_))
        ) {
            return false;
        }
        if self.frames.execution.lock().await.kind != DriverKind::Deterministic {
            return true;
        }
        let probe = BeginFrameParams::builder()
            .interval(FRAME_INTERVAL_MS)
            .no_display_updates(true)
            .build();
        self.begin_frame(probe, limit).await.is_ok()
    }

    /// Turns execution control on for a tab and freezes it. `initial_virtual_time`
    /// (seconds since the epoch) applies only the first time.
    pub async fn enable(&self, initial_virtual_time: Option<f64>) -> Result<()> {
        let mut exec = self.frames.execution.lock().await;
        if exec.enabled {
            drop(exec);
            return self.freeze().await.map(|_| ());
        }
        if exec.kind == DriverKind::FreeRunning {
            exec.kind = DriverKind::Compositor;
        }
        self.session
            .execute(AnimationEnableParams::default())
            .await?;
        self.mirror("Animation.enable", json!({})).await;
        let frozen = if exec.kind == DriverKind::Deterministic {
            let mut params = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Pause);
            params.initial_virtual_time = initial_virtual_time.map(TimeSinceEpoch::new);
            self.session.execute(params).await?;
            self.mirror_pause(initial_virtual_time).await;
            true
        } else {
            self.freeze_page_clock(initial_virtual_time.map(|s| s * 1000.0))
                .await?
                .is_some()
        };
        self.set_animation_rate(0.0, exec.kind).await?;
        exec.virtual_time_base_ms = Some(match initial_virtual_time {
            Some(seconds) => seconds * 1000.0,
            _ => self
                .session
                .evaluate_json("Date.now()")
                .await
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or_else(crate::clock::now_ms),
        });
        exec.enabled = true;
        exec.paused = frozen;
        Ok(())
    }

    /// Lets the page run: deterministic tabs get the clock task, compositor
    /// tabs their page clock thawed. No-op without execution control.
    pub async fn thaw(&self) -> Result<()> {
        self.thaw_registering(true).await
    }

    /// [`FrameDriver::thaw`] for a client's script between actions: new
    /// documents stay registered frozen, so a navigation the script starts
    /// commits a frozen document, however soon (the freeze right after
    /// would otherwise race the commit).
    pub async fn thaw_for_script(&self) -> Result<()> {
        self.thaw_registering(false).await
    }

    async fn thaw_registering(&self, register_running: bool) -> Result<()> {
        let mut exec = self.frames.execution.lock().await;
        if !exec.enabled {
            return Ok(());
        }
        if exec.kind != DriverKind::Deterministic {
            if !exec.paused {
                return Ok(());
            }
            exec.settled = false;
            self.frames.forget_frozen_frame();
            // Sent together: the session keeps their order, and the wait is
            // one round trip shorter.
            let (animations, clock) = tokio::join!(
                self.set_animation_rate(1.0, exec.kind),
                self.thaw_page_clock(register_running)
            );
            animations?;
            clock?;
            exec.paused = false;
            return Ok(());
        }
        if exec.clock.is_some() {
            return Ok(());
        }
        self.frames.forget_frozen_frame();
        // Inside a dialog the renderer answers nothing; the clock waits for
        // the dialog too.
        self.set_animation_rate(1.0, exec.kind).await?;
        let (stop, stopped) = oneshot::channel();
        let handle = tokio::spawn(run_clock(
            Arc::downgrade(&self.session),
            Arc::downgrade(&self.frames),
            stopped,
        ));
        exec.clock = Some(ClockTask { stop, handle });
        exec.paused = false;
        Ok(())
    }

    /// Registers a running page clock for the documents a compositor or
    /// free-running tab loads from now on, so that their timers go through
    /// it from the start and a freeze later holds them all.
    pub async fn prepare(&self) -> Result<()> {
        if self.frames.execution.lock().await.kind == DriverKind::Deterministic {
            return Ok(());
        }
        self.register_page_clock(ClockStart::Running { shift_ms: 0.0 })
            .await
    }

    /// Marks the end of an action's dispatch on a compositor tab's page
    /// clock: fast-forwards then answer the page's time since. False when
    /// the tab can't be fast-forwarded (see [`FrameDriver::advance`]).
    pub async fn mark(&self) -> Result<bool> {
        let exec = self.frames.execution.lock().await;
        if !exec.enabled || exec.kind == DriverKind::Deterministic {
            return Ok(false);
        }
        let answer = self
            .ask_page(
                "window.__wabpClock && window.__wabpClock.mark ? window.__wabpClock.mark() : false"
                    .into(),
            )
            .await?;
        drop(exec);
        Ok(answer == Some(Value::Bool(true)))
    }

    /// The page's `Date.now()` for a compositor tab, from the engine's own
    /// account of its page clock: the refs world, where layouts are read,
    /// sees the real `Date`. `None` for a deterministic tab, whose virtual
    /// time every world shares.
    pub async fn page_time(&self) -> Option<f64> {
        let exec = self.frames.execution.lock().await;
        if exec.kind == DriverKind::Deterministic || !exec.enabled {
            return None;
        }
        drop(exec);
        Some(self.frames.page_clock.lock().page_time())
    }

    /// Stops the page. Returns whether it is frozen now, i.e. whether a capture
    /// taken next stays valid until the next thaw.
    pub async fn freeze(&self) -> Result<bool> {
        let mut exec = self.frames.execution.lock().await;
        if !exec.enabled {
            return Ok(false);
        }
        // The renderer inside a dialog (open now, or opening meanwhile)
        // answers nothing until it closes: stay unfrozen; the dialog's close
        // refreezes (`Engine::handle_dialog`). A renderer that does not
        // answer in time is reported, not waited for.
        // Frozen by the settle's last step, and still the document it froze
        // (a new one drops the viewport read then; it may have started
        // running before the frozen clock's registration landed).
        if std::mem::take(&mut exec.settled)
            && exec.paused
            && self.frames.frozen_viewport().is_some()
        {
            return Ok(true);
        }
        exec.paused = false;
        let stopped = if exec.kind == DriverKind::Deterministic {
            if let Some(clock) = exec.clock.take() {
                let _ = clock.stop.send(());
                // The clock finishes its step (bounded), so no grant lands
                // after the pause; one that doesn't is stopped where it stands.
                let abort = clock.handle.abort_handle();
                if tokio::time::timeout(STEP_LIMIT * 2, clock.handle)
                    .await
                    .is_err()
                {
                    abort.abort();
                }
            }
            let pause = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Pause);
            let paused = self
                .session
                .execute_until_blocked(pause, STEP_LIMIT, None)
                .await?
                .is_some();
            self.mirror_pause(None).await;
            // The pause cancels any unspent grant.
            if paused {
                self.frames.set_budget_outstanding(false);
            }
            paused && self.set_animation_rate(0.0, exec.kind).await?
        } else {
            // The animations stop while the clock's order runs: one round
            // trip less. A dialog that holds the clock leaves the page
            // running, animations included.
            let (clock, animations) = tokio::join!(
                self.freeze_page_clock(None),
                self.set_animation_rate(0.0, exec.kind)
            );
            let clock_stopped = clock?.is_some();
            let animations_stopped = animations?;
            if !clock_stopped && animations_stopped {
                self.set_animation_rate(1.0, exec.kind).await?;
            }
            clock_stopped && animations_stopped
        };
        if !stopped {
            return Ok(false);
        }
        exec.paused = true;
        Ok(true)
    }

    /// CSS and Web Animations at `rate` (0 holds them); false when a dialog
    /// holds the page.
    async fn set_animation_rate(&self, rate: f64, kind: DriverKind) -> Result<bool> {
        self.animation_rate(rate, kind, None).await
    }

    /// [`FrameDriver::set_animation_rate`]; `through_dialog` waits that long
    /// through a dialog that holds the renderer instead of giving up.
    async fn animation_rate(
        &self,
        rate: f64,
        kind: DriverKind,
        through_dialog: Option<Duration>,
    ) -> Result<bool> {
        let params = SetPlaybackRateParams::new(rate);
        let set = match through_dialog {
            Some(limit) => self.session.execute_within(params, limit).await.is_ok(),
            None => self
                .session
                .execute_until_blocked(params, STEP_LIMIT, None)
                .await?
                .is_some(),
        };
        self.mirror("Animation.setPlaybackRate", json!({ "playbackRate": rate }))
            .await;
        if let Some(targets) = self.session.frame_targets() {
            // Frames that start from now on start in this state.
            let mut setup = vec![
                ("Animation.enable", json!({})),
                ("Animation.setPlaybackRate", json!({ "playbackRate": rate })),
            ];
            if rate == 0.0 && kind == DriverKind::Deterministic {
                setup.push((
                    "Emulation.setVirtualTimePolicy",
                    json!({ "policy": "pause" }),
                ));
            }
            targets.set_setup(setup);
        }
        Ok(set)
    }

    /// Animations back at rate 1 once the dialog that holds the page's
    /// renderer is answered: the command waits there behind the hold sent
    /// before it (bounded by `DIALOG_RELEASE_LIMIT`).
    fn release_animations_behind_dialog(&self, kind: DriverKind) {
        let driver = self.clone();
        tokio::spawn(async move {
            match driver
                .animation_rate(1.0, kind, Some(DIALOG_RELEASE_LIMIT))
                .await
            {
                Ok(true) => {}
                _ => tracing::debug!("animations after a dialog: no answer"),
            }
        });
    }

    /// Sends a command to the page's out-of-process frames, if it has any
    /// (`frame_targets.rs`): their renderers keep time of their own.
    async fn mirror(&self, method: &'static str, params: Value) {
        if let Some(targets) = self.session.frame_targets() {
            targets.mirror(method, params).await;
        }
    }

    /// Pauses the virtual time of the page's out-of-process frames.
    async fn mirror_pause(&self, initial_virtual_time: Option<f64>) {
        let mut params = json!({ "policy": "pause" });
        if let Some(at) = initial_virtual_time {
            params["initialVirtualTime"] = json!(at);
        }
        self.mirror("Emulation.setVirtualTimePolicy", params).await;
    }

    /// Whether the page is frozen now.
    pub async fn is_frozen(&self) -> bool {
        let exec = self.frames.execution.lock().await;
        exec.enabled && exec.paused
    }
}
