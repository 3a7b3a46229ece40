//! The flight recorder's side of the action loop: every action, answered or
//! failed, goes to the `ActionLog` before its answer is sent. Core defines the
//! trait; the application plugs the SQLite store in (`wabp-history`), tests
//! can plug in anything.

use async_trait::async_trait;
use serde_json::Value;

use super::Envelope;
use crate::error::Result;
use crate::events::StampedEvent;
use crate::network::NetworkCall;

/// A message the page wrote to its console, or an error it did not catch,
/// while an action ran (history keeps them with the action).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConsoleMessage {
    /// `log`, `info`, `warning`, `error`, `debug`…, or `exception`.
    pub level: String,
    pub text: String,
    /// Wall-clock ms since the epoch.
    pub timestamp_ms: f64,
}

/// One finished action as the log receives it.
#[derive(Debug, Clone)]
pub struct LoggedAction {
    pub tab_id: String,
    /// `click`, `navigate`, a plugin action's name, ...
    pub action_type: String,
    pub params: Value,
    /// Wall-clock ms since the epoch.
    pub started_ms: f64,
    pub completed_ms: f64,
    pub outcome: std::result::Result<Envelope, String>,
    /// Calls to save with the action: (tag, calls), when the request's
    /// `network.tag` asked for it.
    pub network: Option<(String, Vec<NetworkCall>)>,
    /// What the page wrote to its console while the action ran.
    pub console: Vec<ConsoleMessage>,
    /// The tab owner's `userId` (`None`: none); the action, its events and
    /// its calls are recorded for that user only.
    pub user_id: Option<String>,
}

#[async_trait]
pub trait ActionLog: Send + Sync {
    /// Stores the action durably and returns its id. The action's answer is
    /// sent only after this returns, so an answered action is never lost.
    async fn record(&self, action: LoggedAction) -> Result<String>;

    /// Adds events to an action already recorded: the `tab_recovered` of a
    /// repair that ran after the action's answer was made.
    async fn add_events(
        &self,
        action_id: &str,
        tab_id: &str,
        events: Vec<StampedEvent>,
    ) -> Result<()>;

    /// Saves calls under a tag (`POST /network/save`) for the tab owner
    /// `user_id`; returns how many.
    async fn save_network(
        &self,
        tag: &str,
        calls: Vec<NetworkCall>,
        user_id: Option<String>,
    ) -> Result<usize>;
}
