//! A tab's frames: what was drawn (the pixels of the last capture, the
//! frame taken while frozen, the last `screenshot_after` with its scroll
//! state) and the state of the frame driver (execution control, the
//! virtual-time grant outstanding, the nudge that asks the clock for a frame
//! now). `execution.rs` drives them; nothing here sees the tab.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::capture::CachedFrame;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriverKind {
    Deterministic,
    Compositor,
    FreeRunning,
}

impl DriverKind {
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Deterministic => "deterministic",
            DriverKind::Compositor => "compositor",
            DriverKind::FreeRunning => "free-running",
        }
    }
}

/// A tab's execution control state. Lives in the tab behind an async mutex
/// that is held only for the few CDP commands of a thaw or freeze.
pub struct Execution {
    pub kind: DriverKind,
    /// Execution control is on: actions thaw before and freeze after.
    pub enabled: bool,
    /// The page is frozen right now.
    pub paused: bool,
    /// Frozen by a settle's last fast-forward (`FrameDriver::settle`): the
    /// action's freeze that follows has nothing left to do.
    pub settled: bool,
    /// Virtual time when control was first enabled, ms since the epoch.
    pub virtual_time_base_ms: Option<f64>,
    pub clock: Option<ClockTask>,
}

/// The running clock of a thawed tab (see `execution.rs`).
pub struct ClockTask {
    pub stop: oneshot::Sender<()>,
    pub handle: JoinHandle<()>,
}

/// What `GET /tabs/{id}/execution` answers.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExecutionState {
    pub enabled: bool,
    pub paused: bool,
    pub virtual_time_base_ms: Option<f64>,
    pub frame_driver: &'static str,
}

impl Execution {
    pub fn new(kind: DriverKind) -> Self {
        Execution {
            kind,
            enabled: false,
            paused: false,
            settled: false,
            virtual_time_base_ms: None,
            clock: None,
        }
    }

    pub fn state(&self) -> ExecutionState {
        ExecutionState {
            enabled: self.enabled,
            paused: self.paused,
            virtual_time_base_ms: self.virtual_time_base_ms,
            frame_driver: self.driver_name(),
        }
    }

    pub fn driver_name(&self) -> &'static str {
        self.kind.name()
    }
}

#[derive(Debug, Default)]
struct Drawn {
    last_frame: Option<CachedFrame>,
    /// The last captured frame as the browser encoded it (PNG), for a
    /// begin-frame that reports no damage or a capture that fails. Kept
    /// encoded: a tenth of its 3.7 MB of pixels at 1280x720, times every
    /// tab. Shared with `frozen_png`.
    last_png: Option<Arc<Vec<u8>>>,
    /// The frame taken while frozen; valid until the next thaw.
    frozen_png: Option<Arc<Vec<u8>>>,
    /// The viewport read in the same page task that froze it (a settle's
    /// last fast-forward); valid until the next thaw.
    frozen_viewport: Option<serde_json::Value>,
}

pub struct Frames {
    drawn: Mutex<Drawn>,
    /// Frame driver and freeze state; held only for a thaw or a freeze.
    pub execution: tokio::sync::Mutex<Execution>,
    /// A virtual-time grant the renderer has not spent yet.
    budget_outstanding: AtomicBool,
    /// Wakes the clock task for a frame before its next tick.
    pub nudge: tokio::sync::Notify,
    /// The compositor driver's page clock (`page_clock.js`).
    pub page_clock: Mutex<PageClock>,
    /// Taken for each replacement of the page clock's new-document script.
    pub clock_registration: Arc<tokio::sync::Mutex<()>>,
}

/// What a compositor tab's page clock needs from one freeze or thaw to the
/// next: the per-tab token its frames accept orders with, the tab's clock,
/// and the script registered for new documents (re-registered with each
/// state change, so a document that starts while the tab is frozen starts
/// frozen, at the tab's time).
pub struct PageClock {
    pub token: String,
    /// The page's `Date.now()` while frozen.
    pub frozen_at_ms: Option<f64>,
    /// While running: the page's `Date.now()` minus real time.
    pub shift_ms: f64,
    pub script: Option<chromiumoxide::cdp::browser_protocol::page::ScriptIdentifier>,
}

impl PageClock {
    /// The page's `Date.now()` as the engine tracks it.
    pub fn page_time(&self) -> f64 {
        self.frozen_at_ms
            .unwrap_or_else(|| crate::clock::now_ms() + self.shift_ms)
    }
}

impl Frames {
    pub fn new(kind: DriverKind) -> Frames {
        Frames {
            drawn: Mutex::new(Drawn::default()),
            execution: tokio::sync::Mutex::new(Execution::new(kind)),
            budget_outstanding: AtomicBool::new(false),
            nudge: tokio::sync::Notify::new(),
            page_clock: Mutex::new(PageClock {
                token: crate::ids::random_id("clock"),
                frozen_at_ms: None,
                shift_ms: 0.0,
                script: None,
            }),
            clock_registration: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    fn drawn(&self) -> parking_lot::MutexGuard<'_, Drawn> {
        self.drawn.lock()
    }

    pub fn last_frame(&self) -> Option<CachedFrame> {
        self.drawn().last_frame.clone()
    }

    /// `None` also drops what was read from the frozen page: the engine
    /// drops the last frame when it changed the page without a thaw (an
    /// answered `<select>`, picker or file chooser runs the page's
    /// handlers).
    pub fn set_last_frame(&self, frame: Option<CachedFrame>) {
        let mut drawn = self.drawn();
        if frame.is_none() {
            drawn.frozen_png = None;
            drawn.frozen_viewport = None;
        }
        drawn.last_frame = frame;
    }

    /// The page is about to run: frames taken while frozen stop being current.
    pub fn forget_frozen_frame(&self) {
        let mut drawn = self.drawn();
        drawn.frozen_png = None;
        drawn.frozen_viewport = None;
        if let Some(frame) = &mut drawn.last_frame {
            frame.frozen_since = false;
        }
    }

    /// A new document: nothing drawn before is current.
    pub fn page_replaced(&self) {
        let mut drawn = self.drawn();
        drawn.last_frame = None;
        drawn.frozen_png = None;
        drawn.frozen_viewport = None;
    }

    /// Keeps the viewport read as the page froze (`VIEWPORT_JS`'s answer).
    pub fn remember_frozen_viewport(&self, viewport: serde_json::Value) {
        self.drawn().frozen_viewport = Some(viewport);
    }

    /// The viewport read as the page froze, if it is frozen since.
    pub fn frozen_viewport(&self) -> Option<serde_json::Value> {
        self.drawn().frozen_viewport.clone()
    }

    /// The frame taken since the page froze (PNG), if any.
    pub fn frozen_png(&self) -> Option<Arc<Vec<u8>>> {
        self.drawn().frozen_png.clone()
    }

    /// The last frame captured (PNG), if any.
    pub fn last_png(&self) -> Option<Arc<Vec<u8>>> {
        self.drawn().last_png.clone()
    }

    pub fn remember_frame(&self, png: Arc<Vec<u8>>, frozen: bool) {
        let mut drawn = self.drawn();
        drawn.frozen_png = frozen.then(|| png.clone());
        drawn.last_png = Some(png);
    }

    pub fn budget_outstanding(&self) -> bool {
        self.budget_outstanding.load(Ordering::Relaxed)
    }

    pub fn set_budget_outstanding(&self, outstanding: bool) {
        self.budget_outstanding
            .store(outstanding, Ordering::Relaxed);
    }
}
