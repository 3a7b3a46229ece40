//! `wabp:plugin/navigation`: navigating the tab, granted by the
//! `navigation` capability; the engine's URL policy still applies.

use super::HostState;
use crate::bindings::action::wabp::plugin::navigation::Host;
use crate::bindings::types::HostError;
use crate::manifest::Capability;

impl Host for HostState {
    async fn navigate(&mut self, url: String, referrer: Option<String>) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Navigation)?
            .navigate(&url, referrer.as_deref())
            .await?)
    }
    async fn back(&mut self) -> Result<(), HostError> {
        Ok(self.granted_page(Capability::Navigation)?.back().await?)
    }
    async fn forward(&mut self) -> Result<(), HostError> {
        Ok(self.granted_page(Capability::Navigation)?.forward().await?)
    }
    async fn reload(&mut self) -> Result<(), HostError> {
        Ok(self.granted_page(Capability::Navigation)?.reload().await?)
    }
}
