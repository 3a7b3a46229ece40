//! `wabp:plugin/clock`: the wall clock, and sleeping (bounded by the
//! call's deadline), granted by the `clock` capability.

use std::time::Duration;

use super::HostState;
use crate::bindings::action::wabp::plugin::clock::Host;
use crate::manifest::Capability;

impl Host for HostState {
    async fn now_ms(&mut self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
    async fn sleep_ms(&mut self, ms: u32) {
        if self.check(Capability::Clock).is_err() {
            return;
        }
        // Never sleep past the call's deadline.
        let left = self
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        tokio::time::sleep(Duration::from_millis(ms as u64).min(left)).await;
    }
}
