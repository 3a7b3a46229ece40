//! Execution control: frame drivers that freeze a page between actions and
//! let it run, as virtual time, inside one.
//!
//! What freezes a page on Chromium 156 (measured, see STACK.md): virtual time
//! paused (`Emulation.setVirtualTimePolicy{pause}`: timers, `Date.now`,
//! `performance.now`) plus animation playback rate 0 (CSS animations). What
//! draws frames decides the rest:
//!
//! - **deterministic**: `chromium-headless-shell` with the tab under
//!   begin-frame control. The renderer draws only when the engine sends
//!   `HeadlessExperimental.beginFrame`, so requestAnimationFrame stops too,
//!   and captures come from a begin-frame with a screenshot.
//! - **compositor**: any other Chromium (headed, `--connect`, popups). The
//!   compositor draws on its own; rAF keeps its frame clock. Captures use
//!   `Page.captureScreenshot`, bounded, with a thaw-capture-refreeze fallback.
//! - **free-running** (`--no-pause`): nothing is frozen until a client turns
//!   execution control on for the tab, which makes it a compositor tab.
//!
//! While a tab is thawed a clock task grants virtual time in budgets that
//! follow real time (never `advance` without a budget: it races ahead
//! ~500x), and, for deterministic tabs, issues the begin-frames.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::animation::{
    EnableParams as AnimationEnableParams, SetPlaybackRateParams,
};
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetVirtualTimePolicyParams, VirtualTimePolicy,
};
use chromiumoxide::cdp::browser_protocol::headless_experimental::{
    BeginFrameParams, ScreenshotParams, ScreenshotParamsFormat,
};
use chromiumoxide::cdp::browser_protocol::network::TimeSinceEpoch;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams,
};
use tiny_skia::Pixmap;
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::image::decode_png;
use crate::viewport::{VIEWPORT_JS, parse_viewport};

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
/// Bound on one clock step's CDP commands.
const STEP_LIMIT: Duration = Duration::from_secs(2);
/// A compositor capture of a frozen page can hang (rAF in flight); after this
/// the capture thaws the page for one frame and retries.
const FROZEN_CAPTURE_LIMIT: Duration = Duration::from_secs(2);
/// The retry's bound, after which the last frame stands in.
const THAWED_CAPTURE_LIMIT: Duration = Duration::from_secs(3);
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
        let mut params = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Pause);
        params.initial_virtual_time = initial_virtual_time.map(TimeSinceEpoch::new);
        self.session.execute(params).await?;
        self.session
            .execute(SetPlaybackRateParams::new(0.0))
            .await?;
        exec.virtual_time_base_ms = Some(match initial_virtual_time {
            Some(seconds) => seconds * 1000.0,
            None => self
                .session
                .evaluate_json("Date.now()")
                .await
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or_else(crate::clock::now_ms),
        });
        exec.enabled = true;
        exec.paused = true;
        Ok(())
    }

    /// Lets the page run: starts the clock task. No-op without execution control.
    pub async fn thaw(&self) -> Result<()> {
        let mut exec = self.frames.execution.lock().await;
        if !exec.enabled || exec.clock.is_some() {
            return Ok(());
        }
        self.frames.forget_frozen_frame();
        // Inside a dialog the renderer answers nothing; the clock waits for
        // the dialog too.
        self.session
            .execute_until_blocked(SetPlaybackRateParams::new(1.0), STEP_LIMIT, None)
            .await?;
        let (stop, stopped) = oneshot::channel();
        let handle = tokio::spawn(run_clock(
            Arc::downgrade(&self.session),
            Arc::downgrade(&self.frames),
            exec.kind,
            stopped,
        ));
        exec.clock = Some(ClockTask { stop, handle });
        exec.paused = false;
        Ok(())
    }

    /// Stops the page. Returns whether it is frozen now, i.e. whether a capture
    /// taken next stays valid until the next thaw.
    pub async fn freeze(&self) -> Result<bool> {
        let mut exec = self.frames.execution.lock().await;
        if !exec.enabled {
            return Ok(false);
        }
        if let Some(clock) = exec.clock.take() {
            let _ = clock.stop.send(());
            // The clock finishes its step (bounded), so no grant lands after the
            // pause; one that doesn't is stopped where it stands.
            let abort = clock.handle.abort_handle();
            if tokio::time::timeout(STEP_LIMIT * 2, clock.handle)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        // The renderer inside a dialog (open now, or opening meanwhile)
        // answers nothing until it closes: stay unfrozen; the dialog's close
        // refreezes (`Engine::handle_dialog`). A renderer that does not
        // answer in time is reported, not waited for.
        exec.paused = false;
        let pause = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Pause);
        if self
            .session
            .execute_until_blocked(pause, STEP_LIMIT, None)
            .await?
            .is_none()
        {
            return Ok(false);
        }
        // The pause cancels any unspent grant.
        self.frames.set_budget_outstanding(false);
        if self
            .session
            .execute_until_blocked(SetPlaybackRateParams::new(0.0), STEP_LIMIT, None)
            .await?
            .is_none()
        {
            return Ok(false);
        }
        exec.paused = true;
        Ok(true)
    }

    /// Whether the page is frozen now.
    pub async fn is_frozen(&self) -> bool {
        let exec = self.frames.execution.lock().await;
        exec.enabled && exec.paused
    }

    /// Captures the viewport as pixels, the way the tab's driver draws frames.
    /// While the page stays frozen, the frame taken right after freezing is
    /// reused: a frozen page can't change, and re-drawing it would run rAF.
    pub async fn capture_pixels(&self) -> Result<Pixmap> {
        let frozen = self.is_frozen().await;
        if frozen {
            if let Some(pixels) = self.frames.frozen_frame() {
                return Ok(pixels);
            }
        }
        let kind = self.frames.execution.lock().await.kind;
        let pixels = match kind {
            DriverKind::Deterministic => self.begin_frame_capture().await?,
            DriverKind::Compositor | DriverKind::FreeRunning => {
                self.compositor_capture(frozen).await?
            }
        };
        self.frames.remember_frame(&pixels, frozen);
        Ok(pixels)
    }

    async fn begin_frame_capture(&self) -> Result<Pixmap> {
        let params = BeginFrameParams::builder()
            .interval(FRAME_INTERVAL_MS)
            .screenshot(ScreenshotParams {
                format: Some(ScreenshotParamsFormat::Png),
                quality: None,
                optimize_for_speed: Some(true),
            })
            .build();
        let response = self.begin_frame(params, Duration::from_secs(10)).await?;
        match &response.screenshot_data {
            Some(data) => decode_base64_png(AsRef::<str>::as_ref(data)),
            // No damage since the last frame: the last frame is still the picture.
            None => Ok(match self.frames.last_pixels() {
                Some(pixels) => pixels,
                None => self.blank_viewport().await?,
            }),
        }
    }

    async fn compositor_capture(&self, frozen: bool) -> Result<Pixmap> {
        let params = CaptureScreenshotParams {
            format: Some(CaptureScreenshotFormat::Png),
            optimize_for_speed: Some(true),
            ..Default::default()
        };
        if !frozen && !self.frames.execution.lock().await.enabled {
            let response = self.session.execute(params).await?;
            return decode_base64_png(AsRef::<str>::as_ref(&response.result.data));
        }
        // Full Chromium draws a frame that input made pending only while the
        // renderer's virtual time runs, which it barely does between budgets:
        // the capture can stall (measured 4-6 s). Bound it, retry with the page
        // thawed, and fall back to the last frame rather than hang.
        if let Ok(response) = self
            .session
            .execute_within(params.clone(), FROZEN_CAPTURE_LIMIT)
            .await
        {
            return decode_base64_png(AsRef::<str>::as_ref(&response.result.data));
        }
        tracing::debug!(tab = %self.session.tab_id(), "capture stalled; retrying with the page thawed");
        if frozen {
            self.thaw().await?;
        }
        let retry = self
            .session
            .execute_within(params, THAWED_CAPTURE_LIMIT)
            .await;
        if frozen {
            self.freeze().await?;
        }
        match retry {
            Ok(response) => decode_base64_png(AsRef::<str>::as_ref(&response.result.data)),
            Err(_) => match self.frames.last_pixels() {
                Some(pixels) => {
                    tracing::warn!(tab = %self.session.tab_id(), "capture stalled twice; answering with the last frame");
                    Ok(pixels)
                }
                None => Err(Error::timeout(
                    "the browser did not draw a frame in time (compositor driver; headless-shell's deterministic driver does not stall)",
                )),
            },
        }
    }

    /// A white frame the size of the viewport, for a page that never drew.
    async fn blank_viewport(&self) -> Result<Pixmap> {
        let viewport = parse_viewport(&self.session.evaluate_json(VIEWPORT_JS).await?);
        // Page script can lie about its size: keep the allocation sane.
        let scale = viewport.device_scale_factor.clamp(1.0, 4.0);
        let width = (viewport.width * scale).round().clamp(1.0, 8192.0) as u32;
        let height = (viewport.height * scale).round().clamp(1.0, 8192.0) as u32;
        let mut pixmap = Pixmap::new(width.max(1), height.max(1))
            .ok_or_else(|| Error::internal("viewport has no size"))?;
        pixmap.fill(tiny_skia::Color::WHITE);
        Ok(pixmap)
    }
}

async fn run_clock(
    session: Weak<PageSession>,
    frames: Weak<Frames>,
    kind: DriverKind,
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
    loop {
        let Some(strong) = frames.upgrade() else {
            return;
        };
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(TICK) => {}
            _ = strong.nudge.notified() => {}
        }
        drop(strong);
        let (Some(session), Some(frames)) = (session.upgrade(), frames.upgrade()) else {
            return;
        };
        let driver = FrameDriver { session, frames };
        if driver.session.dialog_open() {
            last = Instant::now();
            continue;
        }
        // The frame first: queued input waits for it on the renderer's main
        // thread, and a grant sent behind that input would wait too. A full
        // frame, with display updates: wheel scrolling completes (and is
        // acknowledged) only when the compositor draws.
        if kind == DriverKind::Deterministic {
            let frame = BeginFrameParams::builder()
                .interval(FRAME_INTERVAL_MS)
                .build();
            let _ = driver.begin_frame(frame, STEP_LIMIT).await;
        }
        owed_ms += last.elapsed().as_secs_f64() * 1000.0;
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
        }
    }
}

fn decode_base64_png(data: &str) -> Result<Pixmap> {
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| Error::internal(format!("screenshot data: {e}")))?;
    decode_png(&png)
}
