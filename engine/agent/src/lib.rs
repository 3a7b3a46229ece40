//! `wabp-agent`: the browser-use agent loop. A task in natural language, an
//! LLM provider (OpenAI-compatible, Anthropic, Google, over their own wire
//! formats), and a loop of page state → model → one action until the model
//! says `done`, the step limit is reached, three steps in a row fail, the
//! provider refuses the key, or someone stops it. Progress is told as the
//! browser-use extension's messages (`status_update`, `action_executed`,
//! `progress_update`, `task_completed`, `task_error`).
//!
//! The loop knows the browser only through [`AgentBrowser`]; `wabp-api`
//! implements it over the catalogue of operations, so each action the
//! model picks is an ordinary operation: scope, approval policy, the action
//! loop's envelope and the history all apply.

pub mod history;
pub mod prompt;
pub mod provider;
pub mod reply;
pub mod task;

pub use prompt::ToolSpec;
pub use provider::{Llm, LlmError, Provider, PublicSettings, Settings};
pub use reply::{ChosenAction, parse_action};
pub use task::{
    AgentBrowser, DEFAULT_MAX_STEPS, HistoryItem, MAX_STEPS_LIMIT, StartError, Status, Task,
    TaskEvent, TaskRequest, TaskResult, TaskView, Tasks,
};
