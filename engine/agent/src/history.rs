//! A task's history: the steps it took, as the task answers them and as the
//! prompt shows them to the model.

use schemars::JsonSchema;
use serde::Serialize;

/// One step as the task's history shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HistoryItem {
    pub step: u32,
    /// The action's type (`click`, a plugin action's name), or `llm` when
    /// the model gave no usable action.
    pub action: String,
    pub details: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The action's record in the history (`GET /history/actions/{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// The whole step: state, model, action (wabp addition).
    pub duration_ms: f64,
    /// Of which the model's answer (retries included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_ms: Option<f64>,
}
