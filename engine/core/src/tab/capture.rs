//! The tab's side of a screenshot: the frame from the frame driver and
//! the layout (elements, scroll state, clock) from the refs world, read
//! concurrently; `crate::capture` draws and encodes.

use std::time::Instant;

use crate::capture::{CaptureOptions, CaptureTiming, PageLayout, Screenshot, compose};
use crate::error::Result;
use crate::plugin::PluginRegistry;

use super::execution::FrameDriver;
use super::refs::{PageRefs, numbering_prelude};

/// Runs in the main frame's refs world: each element's label number is its
/// ref number (registered here if the snapshot has not named it yet).
const COLLECT_FN: &str = concat!(
    "function(next) {",
    numbering_prelude!(),
    r#"
  const W = innerWidth, H = innerHeight, d = document.documentElement;
  const viewport = { now: Date.now(), width: W, height: H, scroll_x: scrollX, scroll_y: scrollY,
    page_width: Math.max(d ? d.scrollWidth : 0, W), page_height: Math.max(d ? d.scrollHeight : 0, H),
    device_scale_factor: devicePixelRatio };
  const TYPE = 'input:not([type]),input[type=text],input[type=email],input[type=password],input[type=search],input[type=tel],input[type=url],input[type=number],input[type=date],input[type=datetime-local],input[type=month],input[type=week],input[type=time],textarea,[contenteditable=""],[contenteditable=true]';
  const CLICK = 'a[href],button,input[type=button],input[type=submit],input[type=reset],input[type=checkbox],input[type=radio],input[type=image],input[type=file],input[type=color],input[type=range],select,summary,details,label[for],[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=combobox],[onclick],[tabindex]:not([tabindex="-1"])';
  const focused = document.activeElement;
  const elements = [];
  const all = document.body ? document.body.querySelectorAll('*') : [];
  const limit = Math.min(all.length, 20000);
  for (let i = 0; i < limit && elements.length < 2000; i++) {
    const el = all[i];
    const typeable = el.matches(TYPE) && !el.disabled && !el.readOnly;
    const clickable = !typeable && el.matches(CLICK) && !el.disabled;
    let scrollable = false;
    if (!clickable && !typeable && (el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1)) {
      const s = getComputedStyle(el);
      scrollable = /(auto|scroll)/.test(s.overflowY + ' ' + s.overflowX) && el.clientHeight > 0;
    }
    const isFocused = el === focused;
    if (!clickable && !typeable && !scrollable && !isFocused) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0 || r.right < 0 || r.bottom < 0 || r.left > W || r.top > H) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none') continue;
    const name = String(el.getAttribute('aria-label') || el.innerText || el.value || el.getAttribute('placeholder') || el.getAttribute('title') || '').trim().slice(0, 80);
    elements.push({ index: numberOf(el), rect: { x: r.x, y: r.y, width: r.width, height: r.height },
      tag: el.tagName.toLowerCase(), role: el.getAttribute('role') || '', name,
      href: el.href ? String(el.href) : null, clickable, typeable, scrollable, focused: isFocused });
  }
  return { viewport, elements, next };
}"#
);

/// Elements and scroll state, numbered in the refs world.
pub async fn read_layout(refs: &PageRefs<'_>) -> Result<PageLayout> {
    let value = refs.number_in_main_world(COLLECT_FN, vec![]).await?;
    Ok(PageLayout::from_value(&value))
}

/// One full screenshot: frame + layout (concurrently), markup, cursor, WebP.
pub async fn take_screenshot(
    driver: &FrameDriver,
    refs: &PageRefs<'_>,
    registry: &dyn PluginRegistry,
    options: &CaptureOptions,
) -> Result<(Screenshot, PageLayout, CaptureTiming)> {
    let started = Instant::now();
    let (pixels, layout) = tokio::join!(driver.capture_pixels(), read_layout(refs));
    let pixmap = pixels?;
    let mut layout = layout?;
    if let Some(page_time) = driver.page_time().await {
        layout.virtual_time_ms = page_time;
    }
    let capture_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (screenshot, timing) = compose(pixmap, &layout, registry, options, capture_ms).await?;
    Ok((screenshot, layout, timing))
}
