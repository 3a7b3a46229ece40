//! A tab's frames: what was drawn (the pixels of the last capture, the
//! frame taken while frozen, the last `screenshot_after` with its scroll
//! state) and the state of the frame driver (execution control, the
//! virtual-time grant outstanding, the nudge that asks the clock for a frame
//! now). `execution.rs` drives them; nothing here sees the tab.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tiny_skia::Pixmap;

use crate::execution::{DriverKind, Execution};
use crate::plugin::ViewportInfo;

/// The last `screenshot_after`, reused as the next `screenshot_before` while
/// the page stayed frozen.
#[derive(Debug, Clone)]
pub struct CachedFrame {
    pub image: crate::capture::Screenshot,
    /// Scroll state when it was taken.
    pub viewport: ViewportInfo,
    pub frozen_since: bool,
}

#[derive(Debug, Default)]
struct Drawn {
    last_frame: Option<CachedFrame>,
    /// The last captured frame, for a begin-frame that reports no damage.
    last_pixels: Option<Pixmap>,
    /// The frame taken while frozen; valid until the next thaw.
    frozen_pixels: Option<Pixmap>,
}

pub struct Frames {
    drawn: Mutex<Drawn>,
    /// Frame driver and freeze state; held only for a thaw or a freeze.
    pub execution: tokio::sync::Mutex<Execution>,
    /// A virtual-time grant the renderer has not spent yet.
    budget_outstanding: AtomicBool,
    /// Wakes the clock task for a frame before its next tick.
    pub nudge: tokio::sync::Notify,
}

impl Frames {
    pub fn new(kind: DriverKind) -> Frames {
        Frames {
            drawn: Mutex::new(Drawn::default()),
            execution: tokio::sync::Mutex::new(Execution::new(kind)),
            budget_outstanding: AtomicBool::new(false),
            nudge: tokio::sync::Notify::new(),
        }
    }

    fn drawn(&self) -> std::sync::MutexGuard<'_, Drawn> {
        self.drawn.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn last_frame(&self) -> Option<CachedFrame> {
        self.drawn().last_frame.clone()
    }

    pub fn set_last_frame(&self, frame: Option<CachedFrame>) {
        self.drawn().last_frame = frame;
    }

    /// The page is about to run: frames taken while frozen stop being current.
    pub fn forget_frozen_frame(&self) {
        let mut drawn = self.drawn();
        drawn.frozen_pixels = None;
        if let Some(frame) = &mut drawn.last_frame {
            frame.frozen_since = false;
        }
    }

    /// A new document: nothing drawn before is current.
    pub fn page_replaced(&self) {
        let mut drawn = self.drawn();
        drawn.last_frame = None;
        drawn.frozen_pixels = None;
    }

    pub fn frozen_frame(&self) -> Option<Pixmap> {
        self.drawn().frozen_pixels.clone()
    }

    pub fn last_pixels(&self) -> Option<Pixmap> {
        self.drawn().last_pixels.clone()
    }

    pub fn remember_frame(&self, pixels: &Pixmap, frozen: bool) {
        let mut drawn = self.drawn();
        drawn.last_pixels = Some(pixels.clone());
        drawn.frozen_pixels = frozen.then(|| pixels.clone());
    }

    pub fn budget_outstanding(&self) -> bool {
        self.budget_outstanding.load(Ordering::Relaxed)
    }

    pub fn set_budget_outstanding(&self, outstanding: bool) {
        self.budget_outstanding
            .store(outstanding, Ordering::Relaxed);
    }
}
