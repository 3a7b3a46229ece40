//! What the engine's non-action operations answer, typed: the catalogue
//! documents them with their JSON Schemas.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A tab just opened.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreatedTab {
    pub id: String,
    pub url: String,
}

/// One tab.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TabInfo {
    pub id: String,
    pub url: String,
    pub title: String,
    pub loading: bool,
    pub pinned: bool,
    pub muted: bool,
}

/// A tab's place and flags in the caller's tab list, after a change.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TabPlace {
    pub tab_id: String,
    /// Its place in the caller's tab list (`GET /tabs`).
    pub index: usize,
    pub pinned: bool,
    pub muted: bool,
}

/// A tab brought to the front and made the caller's active tab.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Activated {
    /// `activated`
    pub status: String,
    pub tab_id: String,
    /// Its place in the tab list.
    pub index: usize,
}

/// A tab's loading stopped.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stopped {
    /// `stopped`
    pub status: String,
    pub tab_id: String,
}

/// The value a script evaluated to.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Evaluation {
    /// The value as JSON (`null` for what JSON can't carry).
    pub value: Value,
    /// Its JavaScript type: `string`, `number`, `object`, `undefined`, ...
    #[serde(rename = "type")]
    pub kind: String,
}

/// The tab's pending JavaScript dialog, if any.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DialogState {
    pub present: bool,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
}

/// A prompt answered (a dialog, a file chooser, a `<select>`, a picker) or
/// a download cancelled.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Done {
    /// Always true (a failure answers an error instead).
    pub success: bool,
    /// It was cancelled rather than answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
    /// The element's value after the answer (selects and pickers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What the answer set off: the files selected, the next dialog a
    /// looping script opened at once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::events::StampedEvent>,
}

impl Done {
    pub fn ok() -> Done {
        Done {
            success: true,
            ..Done::default()
        }
    }

    pub fn cancelled() -> Done {
        Done {
            cancelled: Some(true),
            ..Done::ok()
        }
    }

    pub fn with_events(mut self, events: Vec<crate::events::StampedEvent>) -> Done {
        self.events = events;
        self
    }

    pub fn with_value(mut self, value: Option<Value>) -> Done {
        self.value = value;
        self
    }
}

/// `POST /tabs/{id}/curl`: the answer to a request made from the page.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct CurlAnswer {
    pub status: u16,
    /// The response headers the page may read.
    pub headers: serde_json::Map<String, Value>,
    /// Text as is, anything else base64 (see `body_encoding`).
    pub body: String,
    /// `text` or `base64`.
    pub body_encoding: String,
    /// The final URL, after redirects.
    pub url: String,
    pub redirected: bool,
    /// The body was cut at the engine's limit.
    #[serde(default)]
    pub truncated: bool,
}
