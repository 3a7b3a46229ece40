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
