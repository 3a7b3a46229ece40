//! The catalogue of events a client can get: in an action's envelope
//! (`events`), in an answer outside actions (a file chooser's), and in the
//! history. Each variant is one event type with its data; the JSON is
//! `{"type": "<snake_case name>", "data": {...}}`, plus `virtual_time_ms`
//! where it is stamped ([`StampedEvent`]).
//!
//! To add an event: a variant and its data struct here, emitted with
//! `TabSignal::Event(TabEvent::...)` where it happens; the envelope, the
//! history and the OpenAPI document follow.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::plugin::WaitSignal;

/// Something that happened in a tab, as the action loop sees it.
#[derive(Debug, Clone)]
pub enum TabSignal {
    /// Fed to the wait heuristic.
    Wait(WaitSignal),
    /// The main frame committed a new document.
    Navigated {
        url: String,
        reason: Option<String>,
        /// The browser's error page for a navigation that failed.
        error_page: bool,
    },
    /// The main frame stopped loading (its document loaded, or a
    /// navigation ended without a new one: a download, a 204).
    LoadingStopped,
    DialogOpened(PendingDialog),
    /// An envelope event other than navigation, dialog and tab_closed
    /// (file_chooser, select_open, popup, download_*, file_selected, ...).
    Event(TabEvent),
    /// A file chooser opened; its `file_chooser` event follows once what
    /// it accepts is read from the page (a wait holds its page's clock
    /// until then).
    Announcing,
    /// The tab's target is gone (script `window.close()`, crash, API).
    Closed {
        reason: &'static str,
    },
}

/// A JavaScript dialog (alert, confirm, prompt, beforeunload) blocking the page.
#[derive(Debug, Clone)]
pub struct PendingDialog {
    pub dialog_type: String,
    pub message: String,
    pub default_prompt: String,
}

/// Every event, by type.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum TabEvent {
    /// The main frame committed a new document.
    Navigation(Navigation),
    /// A navigation of the main frame failed (DNS, refused, redirect loop,
    /// ...); the tab shows the browser's error page.
    NavigationFailed(NavigationFailed),
    /// A JavaScript dialog opened; it blocks the page until answered.
    Dialog(Dialog),
    /// The page opened a file chooser; answer it with `POST /file-chooser/{id}`.
    FileChooser(FileChooser),
    /// Files were chosen for a file chooser.
    FileSelected(FileSelected),
    /// A file chooser was cancelled.
    FileChooserCancelled(FileChooserCancelled),
    /// The page opened a `<select>` popup; answer it with `POST /select/{id}`.
    SelectOpen(SelectOpen),
    /// The page asked for a native date/time picker (a click on the
    /// input's indicator, Alt+Down, `showPicker()`); intercepted, never
    /// opened. Answer it with `POST /datetime-picker/{id}`.
    DatetimePickerOpen(DatetimePickerOpen),
    /// The page asked for the native colour picker; intercepted. Answer it
    /// with `POST /color-picker/{id}`.
    ColorPickerOpen(ColorPickerOpen),
    /// The page opened a new tab or window.
    Popup(Popup),
    /// A download began (sent with its first progress report).
    DownloadStarted(DownloadStarted),
    /// A download finished and is in the downloads folder.
    DownloadCompleted(DownloadCompleted),
    /// The page's scroll position moved during the action.
    Scroll(Scroll),
    /// The tab went away (closed by a script, the API or a session's end).
    TabClosed(TabClosed),
    /// The page stopped answering during the action (a busy script, a
    /// frame that never came); the tab is repaired right after.
    RendererUnresponsive(TabFailure),
    /// The tab's renderer crashed; the tab is repaired before its next use.
    RendererCrashed(TabFailure),
    /// The browser died and was started again; this tab was reopened at its
    /// last URL under its id (reported with its next action).
    BrowserRestarted(BrowserRestarted),
    /// A broken tab was replaced by a fresh page at its last URL, under the
    /// same id: refs and the page's state are gone, history is kept.
    TabRecovered(TabRecovered),
}

impl TabEvent {
    /// The event's type, as clients see it.
    pub fn kind(&self) -> &'static str {
        match self {
            TabEvent::Navigation(_) => "navigation",
            TabEvent::NavigationFailed(_) => "navigation_failed",
            TabEvent::Dialog(_) => "dialog",
            TabEvent::FileChooser(_) => "file_chooser",
            TabEvent::FileSelected(_) => "file_selected",
            TabEvent::FileChooserCancelled(_) => "file_chooser_cancelled",
            TabEvent::SelectOpen(_) => "select_open",
            TabEvent::DatetimePickerOpen(_) => "datetime_picker_open",
            TabEvent::ColorPickerOpen(_) => "color_picker_open",
            TabEvent::Popup(_) => "popup",
            TabEvent::DownloadStarted(_) => "download_started",
            TabEvent::DownloadCompleted(_) => "download_completed",
            TabEvent::Scroll(_) => "scroll",
            TabEvent::TabClosed(_) => "tab_closed",
            TabEvent::RendererUnresponsive(_) => "renderer_unresponsive",
            TabEvent::RendererCrashed(_) => "renderer_crashed",
            TabEvent::TabRecovered(_) => "tab_recovered",
            TabEvent::BrowserRestarted(_) => "browser_restarted",
        }
    }

    /// The event's data as JSON.
    pub fn data(&self) -> Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("data").map(Value::take))
            .unwrap_or(Value::Null)
    }
}

/// An event stamped with the page's clock.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StampedEvent {
    #[serde(flatten)]
    pub event: TabEvent,
    /// The page's (virtual) clock when it happened, ms since the epoch.
    pub virtual_time_ms: f64,
}

impl StampedEvent {
    pub fn kind(&self) -> &'static str {
        self.event.kind()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Navigation {
    pub tab_id: String,
    pub url: String,
    /// `link_click`, `form_submit`, `back_forward`, `reload`, `redirect`,
    /// `script`, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub navigation_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NavigationFailed {
    pub tab_id: String,
    pub url: String,
    /// The browser's network error, e.g. `net::ERR_NAME_NOT_RESOLVED`.
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Dialog {
    pub tab_id: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub dialog_type: String,
    pub message: String,
    pub default_prompt: String,
    /// Waiting for an answer (`POST /tabs/{id}/dialog/accept|dismiss`).
    pub pending: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileChooser {
    pub id: String,
    pub tab_id: String,
    /// `open`, `open_multiple` or `save`.
    pub chooser_type: String,
    /// What the input accepts: `[{"description", "extensions": [...]}]`.
    pub accepts: Value,
    pub multiple: bool,
    pub pending: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileSelected {
    pub id: String,
    pub tab_id: String,
    pub chooser_type: String,
    /// The absolute paths chosen.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileChooserCancelled {
    pub id: String,
    pub tab_id: String,
    pub chooser_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SelectOpen {
    pub id: String,
    pub tab_id: String,
    pub multiple: bool,
    /// The options: `{index, label, selected, disabled}` each.
    pub options: Value,
    pub pending: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Popup {
    pub source_tab_id: String,
    pub new_tab_id: String,
    pub url: String,
    /// `tab` or `window` (sized or positioned).
    pub popup_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DownloadStarted {
    pub download_id: String,
    pub tab_id: String,
    pub url: String,
    pub filename: String,
    pub mime_type: String,
    pub total_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DownloadCompleted {
    pub download_id: String,
    pub tab_id: String,
    pub path: String,
    pub filename: String,
    pub bytes_received: u64,
    pub mime_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScrollDelta {
    pub x: f64,
    pub y: f64,
    /// `up`, `down`, `left` or `right`.
    pub direction: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScrollPosition {
    pub horizontal_percent: f64,
    pub vertical_percent: f64,
    pub horizontal_px: f64,
    pub vertical_px: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Scroll {
    pub tab_id: String,
    pub delta: ScrollDelta,
    pub position: ScrollPosition,
    /// `wheel`, `keyboard`, `script` or `drag`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TabClosed {
    pub tab_id: String,
    /// `script`, `user` (the API) or `session_closed`.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_as_type_data_and_time() {
        let event = StampedEvent {
            event: TabEvent::TabClosed(TabClosed {
                tab_id: "tab_1".into(),
                reason: "script".into(),
            }),
            virtual_time_ms: 12.5,
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({ "type": "tab_closed", "data": { "tab_id": "tab_1", "reason": "script" }, "virtual_time_ms": 12.5 })
        );
        assert_eq!(event.kind(), "tab_closed");
        assert_eq!(event.event.data()["reason"], "script");
        let nav = TabEvent::Navigation(Navigation {
            tab_id: "t".into(),
            url: "u".into(),
            navigation_type: None,
        });
        assert_eq!(nav.data(), json!({ "tab_id": "t", "url": "u" }));
    }

    #[test]
    fn every_type_is_in_the_schema() {
        let schema = serde_json::to_string(&schemars::schema_for!(StampedEvent)).unwrap();
        for kind in [
            "navigation",
            "dialog",
            "file_chooser",
            "file_selected",
            "file_chooser_cancelled",
            "select_open",
            "popup",
            "download_started",
            "download_completed",
            "scroll",
            "tab_closed",
        ] {
            assert!(schema.contains(&format!("\"{kind}\"")), "{kind}");
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TabFailure {
    pub tab_id: String,
    /// What was seen, e.g. "the page did not answer Input.dispatchMouseEvent within 10000 ms".
    pub cause: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TabRecovered {
    pub tab_id: String,
    /// Why the tab was repaired.
    pub cause: String,
    /// Where the fresh page was opened: the broken page's last URL, or
    /// where a navigation was taking it when its dialogs would not let it
    /// go (an alert loop), or `about:blank` when it broke while loading.
    pub url: String,
    /// Milliseconds the repair took.
    pub repair_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DatetimePickerOpen {
    pub id: String,
    pub tab_id: String,
    /// `date`, `time`, `datetime-local`, `month` or `week`.
    pub input_type: String,
    /// The input's value now, in its own format (e.g. `2026-11-25`).
    pub value: String,
    /// The input's `min`, `max` and `step` attributes (empty when unset).
    pub min: String,
    pub max: String,
    pub step: String,
    pub pending: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ColorPickerOpen {
    pub id: String,
    pub tab_id: String,
    /// The input's colour now, `#rrggbb`.
    pub value: String,
    pub pending: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BrowserRestarted {
    pub tab_id: String,
    /// Where the tab was reopened.
    pub url: String,
}
