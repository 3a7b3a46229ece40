//! The tab's side of a screenshot: the frame from the frame driver and
//! the layout (elements, scroll state, clock) from the refs world, read
//! concurrently; `crate::capture` draws and encodes.

use std::time::Instant;

use crate::capture::{CaptureOptions, CaptureTiming, Markup, PageLayout, Screenshot, compose};
use crate::error::Result;
use crate::plugin::PluginRegistry;
use serde_json::Value;

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
  // The accessible name's first sources: aria-labelledby, then a form
  // field's <label>s.
  const labelledBy = el => (el.getAttribute('aria-labelledby') || '').split(/\s+/)
    .map(id => id && document.getElementById(id)).filter(Boolean).map(l => l.innerText).join(' ').trim();
  const labelText = el => el.labels && el.labels.length ? Array.from(el.labels).map(l => l.innerText).join(' ').trim() : '';
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
    const name = String(labelledBy(el) || el.getAttribute('aria-label') || labelText(el) || el.innerText || el.value || el.getAttribute('placeholder') || el.getAttribute('title') || '').trim().slice(0, 80);
    elements.push({ index: numberOf(el), rect: { x: r.x, y: r.y, width: r.width, height: r.height },
      tag: el.tagName.toLowerCase(), role: el.getAttribute('role') || '', name,
      href: el.href ? String(el.href) : null, clickable, typeable, scrollable, focused: isFocused });
  }
  return { viewport, elements, next, frames: document.querySelectorAll('iframe,frame').length };
}"#
);

/// Elements and scroll state, numbered in the refs world.
pub async fn read_layout(refs: &PageRefs<'_>) -> Result<PageLayout> {
    let value = refs.number_in_main_world(COLLECT_FN, vec![]).await?;
    let mut layout = PageLayout::from_value(&value);
    // Only a page with frames pays for reading them.
    if value.get("frames").and_then(Value::as_u64).unwrap_or(0) > 0 {
        add_frame_elements(refs, &mut layout).await;
    }
    Ok(layout)
}

/// The frames' elements, in page coordinates, where the page's viewport
/// shows them; labelled with their ref numbers like the page's.
async fn add_frame_elements(refs: &PageRefs<'_>, layout: &mut PageLayout) {
    let Ok(frames) = refs.frame_list().await else {
        return;
    };
    let (width, height) = (layout.viewport.width, layout.viewport.height);
    for (frame, _) in frames.iter().skip(1) {
        if layout.elements.len() >= MAX_MARKUP_ELEMENTS {
            break;
        }
        // A frame can go away between the listing and the read.
        let Ok(value) = refs.number_in_frame(frame, COLLECT_FN, vec![]).await else {
            continue;
        };
        let Ok((dx, dy)) = refs.frame_offset(frame).await else {
            continue;
        };
        for mut element in PageLayout::from_value(&value).elements {
            element.rect.x += dx;
            element.rect.y += dy;
            let r = &element.rect;
            if r.x + r.width <= 0.0 || r.y + r.height <= 0.0 || r.x >= width || r.y >= height {
                continue;
            }
            layout.elements.push(element);
        }
    }
}

/// A turn at a screenshot's image work (decode, markup, encode): as many at
/// once as the machine has cores. At 50 tabs, where the captures come back
/// faster than the cores can finish them, this keeps the decoded viewports
/// in memory to one per core.
async fn image_work_turn() -> Option<tokio::sync::SemaphorePermit<'static>> {
    static TURNS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    TURNS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, usize::from);
            tokio::sync::Semaphore::new(cores.max(2))
        })
        .acquire()
        .await
        .ok()
}

/// Elements a screenshot's markup draws at most (the script's own limit).
const MAX_MARKUP_ELEMENTS: usize = 2000;

/// One full screenshot: the frame, and meanwhile the layout and the markup's
/// shapes for it; then the markup drawn, cursor and WebP.
pub async fn take_screenshot(
    driver: &FrameDriver,
    refs: &PageRefs<'_>,
    registry: &dyn PluginRegistry,
    options: &CaptureOptions,
) -> Result<(Screenshot, PageLayout, CaptureTiming)> {
    let started = Instant::now();
    let (frame, prepared) = tokio::join!(driver.capture_frame(), async {
        let layout = read_layout(refs).await?;
        let markup = Markup::prepare(registry, &options.markup, &layout).await?;
        Ok::<_, crate::error::Error>((layout, markup))
    });
    let frame = frame?;
    let (mut layout, markup) = prepared?;
    if let Some(page_time) = driver.page_time().await {
        layout.virtual_time_ms = page_time;
    }
    let capture_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Decoding, drawing and encoding take their turn: frames that wait hold
    // their PNG, not a decoded viewport.
    let _turn = image_work_turn().await;
    let pixmap = tokio::task::spawn_blocking(move || frame.decode())
        .await
        .map_err(|e| crate::error::Error::internal(format!("decoder task: {e}")))??;
    let (screenshot, timing) = compose(pixmap, &layout, markup, options, capture_ms).await?;
    Ok((screenshot, layout, timing))
}
