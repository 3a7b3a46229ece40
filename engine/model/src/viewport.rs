//! The page's viewport and scroll state as one evaluation reads it.

use serde_json::Value;

use crate::plugin::ViewportInfo;

/// Reads the viewport and the page clock (`now`) in one expression.
pub const VIEWPORT_JS: &str = "(() => { const d = document.documentElement; return { now: Date.now(), width: innerWidth, height: innerHeight, scroll_x: scrollX, scroll_y: scrollY, page_width: Math.max(d ? d.scrollWidth : 0, innerWidth), page_height: Math.max(d ? d.scrollHeight : 0, innerHeight), device_scale_factor: devicePixelRatio }; })()";

pub fn parse_viewport(v: &Value) -> ViewportInfo {
    let num = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    ViewportInfo {
        width: num("width"),
        height: num("height"),
        scroll_x: num("scroll_x"),
        scroll_y: num("scroll_y"),
        page_width: num("page_width"),
        page_height: num("page_height"),
        device_scale_factor: num("device_scale_factor"),
    }
}
