//! `wabp:plugin/script`: running a script in the page, granted by the
//! `script` capability.

use super::HostState;
use crate::bindings::action::wabp::plugin::script::Host;
use crate::bindings::types::HostError;
use crate::manifest::Capability;

impl Host for HostState {
    async fn evaluate(&mut self, expression: String) -> Result<String, HostError> {
        Ok(self
            .granted_page(Capability::Script)?
            .evaluate(&expression)
            .await?)
    }
}
