//! What an action answers: the envelope and its parts.

use serde::Serialize;
use serde_json::Value;

use crate::capture::Screenshot;
use crate::plugin::ViewportInfo;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScrollState {
    pub horizontal_percent: f64,
    pub vertical_percent: f64,
    pub horizontal_px: f64,
    pub vertical_px: f64,
    pub page_width: f64,
    pub page_height: f64,
    pub viewport_width: f64,
    pub viewport_height: f64,
    /// `viewport_width` again, in device-independent pixels, as ABP's own
    /// server names it.
    #[serde(rename = "viewportWidth")]
    pub viewport_width_dip: f64,
    #[serde(rename = "viewportHeight")]
    pub viewport_height_dip: f64,
}

impl From<&ViewportInfo> for ScrollState {
    fn from(v: &ViewportInfo) -> Self {
        let percent = |pos: f64, page: f64, view: f64| {
            let range = page - view;
            if range > 0.5 {
                (pos / range * 100.0).clamp(0.0, 100.0)
            } else {
                0.0
            }
        };
        ScrollState {
            horizontal_percent: (percent(v.scroll_x, v.page_width, v.width) * 10.0).round() / 10.0,
            vertical_percent: (percent(v.scroll_y, v.page_height, v.height) * 10.0).round() / 10.0,
            horizontal_px: v.scroll_x,
            vertical_px: v.scroll_y,
            page_width: v.page_width,
            page_height: v.page_height,
            viewport_width: v.width,
            viewport_height: v.height,
            viewport_width_dip: v.width,
            viewport_height_dip: v.height,
        }
    }
}

/// An event of the action, stamped with the page's clock (see `events.rs`).
pub type ActionEvent = crate::events::StampedEvent;

/// Where an action's time went, in milliseconds (wabp addition).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct TimingParts {
    pub before_ms: f64,
    pub dispatch_ms: f64,
    pub wait_ms: f64,
    pub after_ms: f64,
    pub capture_ms: f64,
    pub markup_ms: f64,
    pub encode_ms: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Timing {
    pub action_started_ms: f64,
    pub action_completed_ms: f64,
    pub wait_completed_ms: f64,
    pub duration_ms: f64,
    /// Why the wait ended: the heuristic's reason, or "timeout".
    pub wait_reason: String,
    pub parts: TimingParts,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NetworkSummary {
    pub total: u32,
    pub completed: u32,
    pub pending: u32,
    pub tag: String,
}

/// The standard response envelope.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Envelope {
    pub result: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_before: Option<Screenshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_after: Option<Screenshot>,
    pub scroll: ScrollState,
    pub events: Vec<ActionEvent>,
    pub timing: Timing,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSummary>,
    /// The history record of this action (wabp addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// `POST /screenshot` only: the after image again, base64, at the top
    /// level as ABP's own server answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Why the page stopped answering during the action: the engine
    /// repairs the tab and adds `tab_recovered` to the events.
    #[serde(skip)]
    pub page_failure: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_percentages() {
        let v = ViewportInfo {
            width: 100.0,
            height: 100.0,
            scroll_y: 50.0,
            page_width: 100.0,
            page_height: 300.0,
            ..Default::default()
        };
        let s = ScrollState::from(&v);
        assert_eq!(s.vertical_percent, 25.0);
        assert_eq!(s.horizontal_percent, 0.0);
    }
}
