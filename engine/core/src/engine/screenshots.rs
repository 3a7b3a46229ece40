//! Screenshots outside an action's envelope: the screenshot action's full
//! page, `GET /screenshot` with markup, and plain images in PNG, JPEG or
//! WebP for the browser tool.

use std::sync::Arc;

use serde_json::{Value, json};

use super::actions::Dispatch;
use super::{Engine, TURN_LIMIT};
use crate::action::{ActionKind, ActionOptions, Envelope, ScreenshotArea};
use crate::caller::Caller;
use crate::capture::{CaptureOptions, Screenshot};
use crate::error::{Error, ErrorCode, Result};
use crate::tab::Tab;
use crate::tab::capture::take_screenshot;

/// The image format of a plain screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    /// With its quality, 1 to 100.
    Jpeg(u8),
    Webp,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg(_) => "jpeg",
            ImageFormat::Webp => "webp",
        }
    }

    fn encode(self, pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>> {
        match self {
            ImageFormat::Png => pixmap
                .encode_png()
                .map_err(|e| Error::internal(format!("PNG encoding: {e}"))),
            ImageFormat::Webp => crate::capture::encode_webp(pixmap),
            ImageFormat::Jpeg(quality) => {
                // Screenshots are opaque: premultiplied RGBA is RGB as is.
                let rgb: Vec<u8> = pixmap
                    .data()
                    .chunks_exact(4)
                    .flat_map(|p| [p[0], p[1], p[2]])
                    .collect();
                let (w, h) = (pixmap.width(), pixmap.height());
                let (Ok(w), Ok(h)) = (u16::try_from(w), u16::try_from(h)) else {
                    return Err(Error::invalid(format!(
                        "a {w}x{h} image is too large for JPEG (65535 pixels a side)"
                    )));
                };
                let mut out = Vec::new();
                jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100))
                    .encode(&rgb, w, h, jpeg_encoder::ColorType::Rgb)
                    .map_err(|e| Error::internal(format!("JPEG encoding: {e}")))?;
                Ok(out)
            }
        }
    }
}

impl Engine {
    /// `POST /screenshot`: an envelope with nothing dispatched.
    pub async fn screenshot_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch =
            Box::new(|_tab| Box::pin(async { Ok(json!({ "status": "captured" })) }));
        let kind = ActionKind::new("screenshot", json!({}));
        let mut envelope = self
            .run_action(caller, tab_id, options, kind, dispatch)
            .await?;
        if options.screenshot.area == ScreenshotArea::FullPage {
            // The action captured the viewport; the answer is the page.
            let tab = self.live_tab(caller, tab_id).await?;
            let _turn = tab.turn(TURN_LIMIT).await?;
            envelope.screenshot_after = Some(self.full_page(&tab).await?);
        }
        envelope.data = envelope.screenshot_after.as_ref().map(|shot| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(shot.data.as_slice())
        });
        Ok(envelope)
    }

    /// The whole page as one WebP, no markup; its size bounded by WebP's.
    /// The whole page's pixels, and the viewport reading they came with.
    async fn full_page_pixels(&self, tab: &Arc<Tab>) -> Result<(tiny_skia::Pixmap, Value)> {
        let value = tab
            .session
            .evaluate_isolated(crate::viewport::VIEWPORT_JS)
            .await?;
        let viewport = crate::viewport::parse_viewport(&value);
        let scale = viewport.device_scale_factor.clamp(1.0, 4.0);
        let limit = f64::from(crate::capture::MAX_IMAGE_SIDE);
        if viewport.page_height * scale > limit || viewport.page_width * scale > limit {
            return Err(Error::invalid(format!(
                "the page is {}x{} CSS pixels; a full-page screenshot is at most {} pixels a side: take regions of it instead",
                viewport.page_width,
                viewport.page_height,
                (limit / scale).floor()
            )));
        }
        let pixmap = tab.driver().capture_full_page(&viewport).await?;
        Ok((pixmap, value))
    }

    async fn full_page(&self, tab: &Arc<Tab>) -> Result<Screenshot> {
        let (pixmap, value) = self.full_page_pixels(tab).await?;
        let (width, height) = (pixmap.width(), pixmap.height());
        let data = tokio::task::spawn_blocking(move || crate::capture::encode_webp(&pixmap))
            .await
            .map_err(|e| Error::internal(format!("encoder task: {e}")))??;
        Ok(Screenshot {
            data: Arc::new(data),
            width,
            height,
            virtual_time_ms: tab
                .driver()
                .page_time()
                .await
                .unwrap_or_else(|| crate::clock::page_clock(&value)),
            format: "webp",
        })
    }

    /// `GET /screenshot`: one capture, no envelope. Read-only.
    pub async fn screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        markup: Vec<String>,
        cursor: bool,
        full_page: bool,
    ) -> Result<Screenshot> {
        let tab = self.live_tab(caller, tab_id).await?;
        if full_page {
            let _turn = tab.turn(TURN_LIMIT).await?;
            return self.full_page(&tab).await;
        }
        if tab.pending_dialog().is_some() {
            if let Some(image) = tab.last_frame().and_then(|f| f.image) {
                return Ok(image);
            }
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a JavaScript dialog blocks this tab; accept or dismiss it first",
            ));
        }
        // A capture must not interleave with an action's thaw and freeze;
        // it may run beside its wait.
        let _turn = tab.read_turn(TURN_LIMIT).await?;
        let cursor = if cursor { tab.pointer() } else { None };
        let (shot, _, _) = take_screenshot(
            &tab.driver(),
            &tab.refs(),
            self.registry.as_ref(),
            &CaptureOptions {
                markup,
                cursor,
                clip: None,
            },
        )
        .await?;
        Ok(shot)
    }

    /// A screenshot without markup or cursor in `format` (the browser
    /// tool's): the viewport, or the whole page. Answers the bytes, width
    /// and height.
    pub async fn plain_screenshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        full_page: bool,
        format: ImageFormat,
    ) -> Result<(Vec<u8>, u32, u32)> {
        let tab = self.live_tab(caller, tab_id).await?;
        // A full page resizes the viewport: that one takes the turn.
        let _turn = if full_page {
            crate::turn::ReadTurn::Own(tab.turn(TURN_LIMIT).await?)
        } else {
            tab.read_turn(TURN_LIMIT).await?
        };
        if tab.pending_dialog().is_some() {
            return Err(Error::dialog_blocks(&tab.id));
        }
        let pixmap = if full_page {
            self.full_page_pixels(&tab).await?.0
        } else {
            tab.driver().capture_pixels().await?
        };
        let (width, height) = (pixmap.width(), pixmap.height());
        let bytes = tokio::task::spawn_blocking(move || format.encode(&pixmap))
            .await
            .map_err(|e| Error::internal(format!("encoder task: {e}")))??;
        Ok((bytes, width, height))
    }
}
