//! `wabp:plugin/log`: a plugin's log lines, bounded, under its name,
//! granted by the `log` capability.

use super::HostState;
use crate::bindings::action::wabp::plugin::log::{Host, Level};
use crate::manifest::Capability;

impl Host for HostState {
    async fn write(&mut self, level: Level, message: String) {
        if self.check(Capability::Log).is_err() {
            return;
        }
        // Bounded so a chatty plugin can't flood the log with one line.
        let message: String = message.chars().take(2000).collect();
        let plugin = &*self.plugin;
        match level {
            Level::Debug => tracing::debug!(plugin, "{message}"),
            Level::Info => tracing::info!(plugin, "{message}"),
            Level::Warn => tracing::warn!(plugin, "{message}"),
            Level::Error => tracing::error!(plugin, "{message}"),
        }
    }
}
