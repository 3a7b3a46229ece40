//! One-shot screenshots (MCP's BrowserLoop-style `screenshot` tool): a page
//! in its own browser context, outside the tab list, free-running (no frame
//! driver, no virtual time), loaded, captured at the asked size and format,
//! then closed with its context, so cookies and the user agent never reach
//! the agent's tabs.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetDeviceMetricsOverrideParams, SetUserAgentOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::network::{CookieParam, SetCookiesParams};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, EventLifecycleEvent, GetLayoutMetricsParams,
    NavigateParams, SetLifecycleEventsEnabledParams, Viewport,
};
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, CreateTargetParams};
use futures::StreamExt;
use serde_json::Value;

use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
pub use crate::rules::cookie::NewCookie;

/// Full-page captures stop here: taller pages are cut (Chromium's own limit
/// for one capture is about this).
pub const MAX_FULL_PAGE_PX: f64 = 16_384.0;

/// Time allowed for the capture itself, after the page loaded.
const CAPTURE_LIMIT: Duration = Duration::from_secs(20);

/// The format of a one-shot capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Webp,
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn parse(text: &str) -> Option<ImageFormat> {
        match text {
            "webp" => Some(ImageFormat::Webp),
            "png" => Some(ImageFormat::Png),
            "jpeg" | "jpg" => Some(ImageFormat::Jpeg),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Webp => "webp",
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
        }
    }
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Webp => "image/webp",
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
        }
    }
}

#[derive(Debug, Clone)]
pub struct OneshotRequest {
    pub url: String,
    pub width: u32,
    pub height: u32,
    pub format: ImageFormat,
    /// 1-100; ignored for PNG.
    pub quality: u8,
    /// Wait for the network to go idle (else: DOMContentLoaded).
    pub wait_for_network_idle: bool,
    /// Bound on the page load.
    pub timeout: Duration,
    pub full_page: bool,
    /// Capture this element only (takes precedence over `full_page`).
    pub selector: Option<String>,
    pub user_agent: Option<String>,
    /// Checked again where they are set (`rules::cookie`), against `url`.
    pub cookies: Vec<NewCookie>,
}

#[derive(Debug, Clone)]
pub struct OneshotCapture {
    pub data: Vec<u8>,
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    /// Where the page ended up (after redirects).
    pub final_url: String,
    /// The full page was taller than `MAX_FULL_PAGE_PX` and was cut.
    pub truncated: bool,
}

impl Engine {
    /// Loads `request.url` in a fresh context and captures it. Runs in its
    /// own task, so a caller that goes away still leaves no page behind.
    pub async fn oneshot_screenshot(
        self: &Arc<Self>,
        request: OneshotRequest,
    ) -> Result<OneshotCapture> {
        let engine = self.clone();
        tokio::spawn(async move { engine.oneshot_inner(request).await })
            .await
            .map_err(|e| Error::internal(format!("screenshot task failed: {e}")))?
    }

    async fn oneshot_inner(&self, request: OneshotRequest) -> Result<OneshotCapture> {
        self.ensure_ready()?;
        // Its own context, downloads denied: nothing it does stays behind.
        let context = self.browser.new_context(None).await?;
        let mut params = CreateTargetParams::new("about:blank");
        params.browser_context_id = Some(context.clone());
        let opening = self.pages.opening();
        let opened = self
            .browser
            .new_page(params, |target| opening.opened(target))
            .await;
        // Only while it opens: a tab's own new page (a modifier click) is
        // told apart from the engine's by this count.
        drop(opening);
        let page = match opened {
            Ok((page, _)) => page,
            Err(e) => {
                self.browser.dispose_context(context).await;
                return Err(e);
            }
        };
        let limit = request.timeout + CAPTURE_LIMIT;
        let result = match tokio::time::timeout(limit, capture(&page, &request)).await {
            Ok(result) => result,
            Err(_) => Err(Error::timeout(format!(
                "screenshot did not finish within {} ms",
                limit.as_millis()
            ))),
        };
        self.close_oneshot(page, context).await;
        result
    }

    async fn close_oneshot(&self, page: Page, context: BrowserContextId) {
        let target = page.target_id().clone();
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            page.execute(CloseTargetParams::new(target)),
        )
        .await;
        self.browser.dispose_context(context).await;
    }
}

/// Most cookies one capture takes.
pub const MAX_COOKIES: usize = 50;

/// The browser's params for the capture's cookies: checked by the same
/// rules as `POST /cookies`, and each for the page's host.
fn cookie_params(request: &OneshotRequest) -> Result<Vec<CookieParam>> {
    let page = crate::rules::url::http_url(&request.url, "url")?;
    crate::rules::cookie::params(&request.cookies, MAX_COOKIES, Some(&page))?
        .into_iter()
        .map(|param| {
            serde_json::from_value(param).map_err(|e| {
                Error::internal(format!("a checked cookie the browser can't take: {e}"))
            })
        })
        .collect()
}

async fn capture(page: &Page, request: &OneshotRequest) -> Result<OneshotCapture> {
    page.execute(SetDeviceMetricsOverrideParams::new(
        request.width as i64,
        request.height as i64,
        1.0,
        false,
    ))
    .await
    .map_err(crate::cdp_error)?;
    if let Some(agent) = &request.user_agent {
        page.execute(SetUserAgentOverrideParams::new(agent.clone()))
            .await
            .map_err(crate::cdp_error)?;
    }
    if !request.cookies.is_empty() {
        let cookies = cookie_params(request)?;
        // The error names no value: CDP's message could echo the cookie.
        page.execute(SetCookiesParams::new(cookies))
            .await
            .map_err(|_| {
                Error::invalid("cookie injection failed: the browser refused the cookies")
            })?;
    }
    page.execute(SetLifecycleEventsEnabledParams::new(true))
        .await
        .map_err(crate::cdp_error)?;
    let mut lifecycle = page
        .event_listener::<EventLifecycleEvent>()
        .await
        .map_err(crate::cdp_error)?;

    let navigated = page
        .execute(NavigateParams::new(request.url.clone()))
        .await
        .map_err(crate::cdp_error)?;
    if let Some(error) = &navigated.result.error_text {
        return Err(Error::new(
            ErrorCode::NavigationFailed,
            format!("navigation to {} failed: {error}", request.url),
        ));
    }
    let frame = navigated.result.frame_id.clone();
    let loader = navigated.result.loader_id.clone();
    let wanted = if request.wait_for_network_idle {
        "networkIdle"
    } else {
        "DOMContentLoaded"
    };
    let waited = tokio::time::timeout(request.timeout, async {
        while let Some(event) = lifecycle.next().await {
            if event.frame_id == frame
                && event.name == wanted
                && loader.as_ref().is_none_or(|l| *l == event.loader_id)
            {
                return true;
            }
        }
        false
    })
    .await;
    match waited {
        Ok(true) => {}
        Ok(false) => return Err(Error::internal("the page closed while loading")),
        Err(_) => {
            return Err(Error::timeout(format!(
                "Navigation timeout of {} ms exceeded",
                request.timeout.as_millis()
            )));
        }
    }

    let mut truncated = false;
    let clip = if let Some(selector) = &request.selector {
        Some(element_clip(page, selector).await?)
    } else if request.full_page {
        let metrics = page
            .execute(GetLayoutMetricsParams::default())
            .await
            .map_err(crate::cdp_error)?;
        let size = &metrics.result.css_content_size;
        let height = size.height.max(1.0);
        truncated = height > MAX_FULL_PAGE_PX;
        Some(Viewport {
            x: 0.0,
            y: 0.0,
            width: size.width.max(1.0).min(MAX_FULL_PAGE_PX),
            height: height.min(MAX_FULL_PAGE_PX),
            scale: 1.0,
        })
    } else {
        None
    };
    let (width, height) = match &clip {
        Some(c) => (c.width.round() as u32, c.height.round() as u32),
        None => (request.width, request.height),
    };
    let mut params = CaptureScreenshotParams::default();
    params.format = Some(match request.format {
        ImageFormat::Webp => CaptureScreenshotFormat::Webp,
        ImageFormat::Png => CaptureScreenshotFormat::Png,
        ImageFormat::Jpeg => CaptureScreenshotFormat::Jpeg,
    });
    if request.format != ImageFormat::Png {
        params.quality = Some(request.quality.clamp(1, 100) as i64);
    }
    if clip.is_some() {
        params.capture_beyond_viewport = Some(true);
    }
    params.clip = clip;
    let shot = page.execute(params).await.map_err(crate::cdp_error)?;
    let data = base64::engine::general_purpose::STANDARD
        .decode(&shot.result.data)
        .map_err(|e| Error::internal(format!("screenshot data: {e}")))?;
    let final_url = page
        .url()
        .await
        .ok()
        .flatten()
        .unwrap_or_else(|| request.url.clone());
    Ok(OneshotCapture {
        data,
        format: request.format,
        width,
        height,
        final_url,
        truncated,
    })
}

/// The element's box in page coordinates, scrolled into view first so lazy
/// content is drawn.
async fn element_clip(page: &Page, selector: &str) -> Result<Viewport> {
    let selector_json =
        serde_json::to_string(selector).map_err(|e| Error::internal(e.to_string()))?;
    let script = format!(
        r#"(() => {{
  let el;
  try {{ el = document.querySelector({selector_json}); }} catch (e) {{ return {{ invalid: String(e.message || e) }}; }}
  if (!el) return null;
  el.scrollIntoView({{ block: 'center', inline: 'center' }});
  const r = el.getBoundingClientRect();
  return {{ x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }};
}})()"#
    );
    let value: Value = page
        .evaluate_expression(script)
        .await
        .map_err(|e| Error::new(ErrorCode::EvaluationError, e.to_string()))?
        .into_value()
        .unwrap_or(Value::Null);
    if let Some(reason) = value.get("invalid").and_then(Value::as_str) {
        return Err(Error::invalid(format!(
            "invalid selector {selector:?}: {reason}"
        )));
    }
    if value.is_null() {
        return Err(Error::new(
            ErrorCode::ElementNotFound,
            format!("Element not found: {selector}"),
        ));
    }
    let num = |k: &str| value.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let (width, height) = (num("width"), num("height"));
    if width < 1.0 || height < 1.0 {
        return Err(Error::new(
            ErrorCode::ElementNotVisible,
            format!("Element {selector} has no visible size"),
        ));
    }
    Ok(Viewport {
        x: num("x").max(0.0),
        y: num("y").max(0.0),
        width: width.min(MAX_FULL_PAGE_PX),
        height: height.min(MAX_FULL_PAGE_PX),
        scale: 1.0,
    })
}
