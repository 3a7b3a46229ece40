//! Captures the way the tab's driver draws: a begin-frame with a
//! screenshot under begin-frame control, `Page.captureScreenshot` from the
//! compositor otherwise; the whole page; a frozen page's frame reused.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::headless_experimental::{
    BeginFrameParams, ScreenshotParams, ScreenshotParamsFormat,
};
use chromiumoxide::cdp::browser_protocol::page::{
    BringToFrontParams, CaptureScreenshotFormat, CaptureScreenshotParams,
};
use serde_json::{Value, json};
use tiny_skia::Pixmap;

use super::{COMPOSITOR_CAPTURE_LIMIT, FRAME_INTERVAL_MS, FrameDriver, STEP_LIMIT};
use crate::error::{Error, Result};
use crate::image::decode_png;
use crate::plugin::ViewportInfo;
use crate::tab::frames::DriverKind;
use crate::viewport::{VIEWPORT_JS, parse_viewport};

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

impl FrameDriver {
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
