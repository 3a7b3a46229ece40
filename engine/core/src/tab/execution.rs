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
    AddScriptToEvaluateOnNewDocumentParams, BringToFrontParams, CaptureScreenshotFormat,
    CaptureScreenshotParams, RemoveScriptToEvaluateOnNewDocumentParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::{Value, json};
use tiny_skia::Pixmap;
use tokio::sync::oneshot;

use crate::action::ClockStep;
use crate::error::{Error, Result};
use crate::image::decode_png;
use crate::plugin::ViewportInfo;
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

/// A begin-frame that also takes a (fast PNG) screenshot.
fn screenshot_frame() -> BeginFrameParams {
    BeginFrameParams::builder()
        .interval(FRAME_INTERVAL_MS)
        .screenshot(ScreenshotParams {
            format: Some(ScreenshotParamsFormat::Png),
            quality: None,
            optimize_for_speed: Some(true),
        })
        .build()
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

    /// Replaces the page clock registered for new documents.
    async fn register_page_clock(&self, start: ClockStart) -> Result<()> {
        // One registration at a time: each replaces the one before.
        let turn = self.frames.clock_registration.clone().lock_owned().await;
        self.register_page_clock_in_turn(start, turn).await
    }

    /// [`FrameDriver::register_page_clock`] with the turn already taken.
    async fn register_page_clock_in_turn(
        &self,
        start: ClockStart,
        _turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<()> {
        let (token, previous) = {
            let mut clock = self.frames.page_clock.lock();
            (clock.token.clone(), clock.script.take())
        };
        let source = page_clock_source(&token, start);
        if let Some(targets) = self.session.frame_targets() {
            targets.set_new_document_script(source.clone()).await;
        }
        let remove = async {
            match previous.clone() {
                Some(id) => self
                    .session
                    .execute_within(
                        RemoveScriptToEvaluateOnNewDocumentParams::new(id),
                        STEP_LIMIT,
                    )
                    .await
                    .map(|_| ()),
                None => Ok(()),
            }
        };
        // One round trip for both: the session keeps their order.
        let (removed, added) = tokio::join!(
            remove,
            self.session.execute_within(
                AddScriptToEvaluateOnNewDocumentParams::new(source),
                STEP_LIMIT
            ),
        );
        let script = match added {
            Ok(added) => Some(added.result.identifier),
            // Still the old one: the next state change replaces it.
            Err(_) if removed.is_err() => previous,
            Err(e) => return Err(e),
        };
        self.frames.page_clock.lock().script = script;
        Ok(())
    }

    /// Evaluates `expression` on the page (its main world), awaiting a
    /// promise, bounded; its value, or `None` when a dialog holds the page.
    async fn ask_page(&self, expression: String) -> Result<Option<Value>> {
        self.ask_page_within(expression, STEP_LIMIT).await
    }

    /// [`FrameDriver::ask_page`] bounded by `limit`.
    async fn ask_page_within(&self, expression: String, limit: Duration) -> Result<Option<Value>> {
        let params = EvaluateParams::builder()
            .expression(expression)
            .return_by_value(true)
            .await_promise(true)
            .build()
            .map_err(Error::internal)?;
        Ok(self
            .session
            .execute_until_blocked(params, limit, None)
            .await?
            .map(|answer| answer.result.value.unwrap_or(Value::Null)))
    }

    /// Runs `order` on the current document's page clock, installing the
    /// clock first if the document predates it (a popup's first page, a
    /// page open before the engine attached). `None` when a dialog holds
    /// the page.
    async fn order_page_clock(&self, order: &str, start: ClockStart) -> Result<Option<Value>> {
        let token = self.frames.page_clock.lock().token.clone();
        let expression = format!("window.__wabpClock ? window.__wabpClock.{order} : null");
        for attempt in 0..2 {
            let Some(value) = self.ask_page(expression.clone()).await? else {
                return Ok(None);
            };
            match value {
                value if !value.is_null() => return Ok(Some(value)),
                _ if attempt == 0 => {
                    let install = EvaluateParams::builder()
                        .expression(page_clock_source(&token, start))
                        .build()
                        .map_err(Error::internal)?;
                    if self
                        .session
                        .execute_until_blocked(install, STEP_LIMIT, None)
                        .await?
                        .is_none()
                    {
                        return Ok(None);
                    }
                }
                _ => {}
            }
        }
        Err(Error::internal("the page clock could not be installed"))
    }

    /// Freezes a compositor tab's page clock, at `at` (ms since the epoch)
    /// if given. `None` when a dialog holds the page.
    async fn freeze_page_clock(&self, at: Option<f64>) -> Result<Option<()>> {
        let order = match at {
            Some(at) => format!("freeze({at:?})"),
            None => "freeze()".to_string(),
        };
        let start = ClockStart::Frozen { at_ms: at };
        let Some(answer) = self.order_page_clock(&order, start).await? else {
            return Ok(None);
        };
        let frozen_at = answer.as_f64().or(at).unwrap_or_else(crate::clock::now_ms);
        self.frames.page_clock.lock().frozen_at_ms = Some(frozen_at);
        self.register_page_clock(ClockStart::Frozen {
            at_ms: Some(frozen_at),
        })
        .await?;
        Ok(Some(()))
    }

    /// Thaws a compositor tab's page clock. The page resumes one frame later
    /// (see `page_clock.js`), from where it stopped.
    async fn thaw_page_clock(&self, register_running: bool) -> Result<Option<()>> {
        let shift_ms = {
            let mut clock = self.frames.page_clock.lock();
            if let Some(at) = clock.frozen_at_ms.take() {
                clock.shift_ms = at - crate::clock::now_ms() - PAGE_CLOCK_THAW_DELAY_MS;
            }
            clock.shift_ms
        };
        let start = ClockStart::Running { shift_ms };
        if !register_running {
            return self
                .order_page_clock("thaw()", start)
                .await
                .map(|o| o.map(|_| ()));
        }
        let (ordered, registered) = tokio::join!(
            self.order_page_clock("thaw()", start),
            self.register_page_clock(start)
        );
        registered?;
        Ok(ordered?.map(|_| ()))
    }

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

    /// Captures the viewport as pixels, the way the tab's driver draws frames.
    /// While the page stays frozen, the frame taken right after freezing is
    /// reused: a frozen page can't change, and re-drawing it would run rAF.
    pub async fn capture_pixels(&self) -> Result<Pixmap> {
        self.capture_frame().await?.decode()
    }

    /// [`FrameDriver::capture_pixels`] without the decoding.
    pub async fn capture_frame(&self) -> Result<Frame> {
        let frozen = self.is_frozen().await;
        if frozen && let Some(png) = self.frames.frozen_png() {
            return Ok(Frame::Png(png));
        }
        let kind = self.frames.execution.lock().await.kind;
        let frame = match kind {
            DriverKind::Deterministic => self.begin_frame_capture().await?,
            DriverKind::Compositor | DriverKind::FreeRunning => self.compositor_capture().await?,
        };
        if let Frame::Png(png) = &frame {
            self.frames.remember_frame(png.clone(), frozen);
        }
        Ok(frame)
    }

    /// The whole page, `viewport` giving its size and where it is
    /// scrolled: the compositor draws beyond the viewport itself; under
    /// begin-frame control the viewport is stretched to the page for one
    /// frame, then put back (scroll position included). Not remembered as
    /// the tab's last frame.
    pub async fn capture_full_page(&self, viewport: &ViewportInfo) -> Result<Pixmap> {
        let (width, height) = (viewport.page_width.ceil(), viewport.page_height.ceil());
        let kind = self.frames.execution.lock().await.kind;
        if kind != DriverKind::Deterministic {
            let params = CaptureScreenshotParams {
                format: Some(CaptureScreenshotFormat::Png),
                optimize_for_speed: Some(true),
                capture_beyond_viewport: Some(true),
                clip: Some(chromiumoxide::cdp::browser_protocol::page::Viewport {
                    x: 0.0,
                    y: 0.0,
                    width,
                    height,
                    scale: 1.0,
                }),
                ..Default::default()
            };
            let shot = self
                .session
                .execute_within(params, COMPOSITOR_CAPTURE_LIMIT * 2)
                .await?;
            return decode_base64_png(AsRef::<str>::as_ref(&shot.result.data));
        }
        let metrics = |w: f64, h: f64| {
            json!({
                "width": w as i64,
                "height": h as i64,
                "deviceScaleFactor": viewport.device_scale_factor,
                "mobile": false,
            })
        };
        self.session
            .raw(
                "Emulation.setDeviceMetricsOverride",
                metrics(viewport.width, height),
            )
            .await?;
        let params = screenshot_frame();
        let frame = self.begin_frame(params, Duration::from_secs(10)).await;
        // Put back whatever the frame did.
        let restored = self
            .session
            .raw(
                "Emulation.setDeviceMetricsOverride",
                metrics(viewport.width, viewport.height),
            )
            .await;
        let _ = self
            .session
            .evaluate_isolated(&format!(
                "scrollTo({}, {}), 0",
                viewport.scroll_x, viewport.scroll_y
            ))
            .await;
        restored?;
        // A frame at the restored size: the next stretched frame then has
        // damage to draw (an undamaged begin-frame comes back empty).
        let redraw = BeginFrameParams::builder()
            .interval(FRAME_INTERVAL_MS)
            .build();
        let _ = self.begin_frame(redraw, STEP_LIMIT).await;
        match frame?.screenshot_data {
            Some(data) => decode_base64_png(AsRef::<str>::as_ref(&data)),
            None => Err(Error::internal("the full-page frame came back empty")),
        }
    }

    async fn begin_frame_capture(&self) -> Result<Frame> {
        let params = screenshot_frame();
        let response = self.begin_frame(params, Duration::from_secs(10)).await?;
        match &response.screenshot_data {
            Some(data) => Frame::from_base64(AsRef::<str>::as_ref(data)),
            // No damage since the last frame: the last frame is still the picture.
            None => match self.frames.last_png() {
                Some(png) => Ok(Frame::Png(png)),
                None => Ok(Frame::Blank(self.blank_viewport().await?)),
            },
        }
    }

    async fn compositor_capture(&self) -> Result<Frame> {
        let params = CaptureScreenshotParams {
            format: Some(CaptureScreenshotFormat::Png),
            optimize_for_speed: Some(true),
            ..Default::default()
        };
        // A tab behind another in its window (a page's `target=_blank`
        // opened in front of it) is not drawn: brought forward meanwhile,
        // the capture then gets its frame.
        let bring_forward = async {
            if self
                .session
                .evaluate_json("document.visibilityState")
                .await
                .ok()
                == Some(Value::from("hidden"))
            {
                tracing::debug!(tab = %self.session.tab_id(), "bringing a hidden tab to the front to draw it");
                if let Err(e) = self.session.execute(BringToFrontParams::default()).await {
                    tracing::debug!("bring to front: {e}");
                }
            }
        };
        // The page clock leaves the compositor drawing, so a capture answers
        // in tens of ms; one that does not (a renderer that stopped drawing)
        // is bounded, and the last frame stands in.
        let (answer, ()) = tokio::join!(
            self.session
                .execute_within(params, COMPOSITOR_CAPTURE_LIMIT),
            bring_forward
        );
        match answer {
            Ok(response) => Frame::from_base64(AsRef::<str>::as_ref(&response.result.data)),
            Err(e) => match self.frames.last_png() {
                Some(png) => {
                    tracing::warn!(tab = %self.session.tab_id(), "capture did not answer ({e}); answering with the last frame");
                    Ok(Frame::Png(png))
                }
                None => Err(e),
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

/// How a document's page clock starts.
#[derive(Debug, Clone, Copy)]
enum ClockStart {
    /// Frozen, its `Date.now()` at `at_ms` (or real time when unknown).
    Frozen { at_ms: Option<f64> },
    /// Running, `shift_ms` behind (negative) or ahead of real time.
    Running { shift_ms: f64 },
}

/// The page clock for a tab with this token, for documents that start as
/// `start` says.
fn page_clock_source(token: &str, start: ClockStart) -> String {
    let (frozen, at, shift) = match start {
        ClockStart::Frozen { at_ms } => (
            "true",
            at_ms.map_or_else(|| "null".to_string(), |at| format!("{at:?}")),
            "0".to_string(),
        ),
        ClockStart::Running { shift_ms } => ("false", "null".to_string(), format!("{shift_ms:?}")),
    };
    PAGE_CLOCK_JS
        .replace("__WABP_CLOCK_TOKEN__", token)
        .replace("__WABP_CLOCK_FROZEN__", frozen)
        .replace("__WABP_CLOCK_AT__", &at)
        .replace("__WABP_CLOCK_SHIFT__", &shift)
}

fn decode_base64_png(data: &str) -> Result<Pixmap> {
    decode_png(&base64_png(data)?)
}

fn base64_png(data: &str) -> Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| Error::internal(format!("screenshot data: {e}")))
}

/// A captured frame: the browser's PNG (what the tab keeps), or a white
/// stand-in for a page that never drew. Decoded only when its pixels are
/// wanted, so that frames waiting for their turn hold a PNG, not a bitmap.
pub enum Frame {
    Png(Arc<Vec<u8>>),
    Blank(Pixmap),
}

impl Frame {
    fn from_base64(data: &str) -> Result<Frame> {
        Ok(Frame::Png(Arc::new(base64_png(data)?)))
    }

    /// The frame's pixels.
    pub fn decode(self) -> Result<Pixmap> {
        match self {
            Frame::Png(png) => decode_png(&png),
            Frame::Blank(pixels) => Ok(pixels),
        }
    }
}
