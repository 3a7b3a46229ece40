//! Host capabilities: the WIT imports, one file per interface. Every call
//! checks the manifest's grant first (the load-time import check is the first
//! line; this is the second), then forwards to core's `PageHost`.

mod clock;
mod input;
mod log;
mod navigation;
mod page;
mod script;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use wabp_model::plugin::{HostError as CoreHostError, PageHost};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::types::{self, HostError};
use crate::manifest::Capability;

/// The data of one call's store.
pub struct HostState {
    pub plugin: Arc<str>,
    pub grants: HashSet<Capability>,
    /// The tab an action runs on; `None` for markup and wait plugins.
    pub page: Option<Arc<dyn PageHost>>,
    pub limits: crate::runtime::MeteredLimits,
    /// The epoch callback traps once this passes.
    pub deadline: Instant,
    wasi: WasiCtx,
    table: ResourceTable,
}

impl HostState {
    pub fn new(
        plugin: Arc<str>,
        grants: HashSet<Capability>,
        page: Option<Arc<dyn PageHost>>,
        limits: crate::runtime::MeteredLimits,
        deadline: Instant,
    ) -> Self {
        HostState {
            plugin,
            grants,
            page,
            limits,
            deadline,
            // No files, no environment, no network: only what WASI p2 guests
            // need to link (stdio goes nowhere).
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
        }
    }

    /// The tab, if the manifest grants `capability`.
    fn granted_page(&self, capability: Capability) -> Result<Arc<dyn PageHost>, HostError> {
        self.check(capability)?;
        self.page
            .clone()
            .ok_or_else(|| HostError::Failed("no tab is bound to this call".into()))
    }

    fn check(&self, capability: Capability) -> Result<(), HostError> {
        if self.grants.contains(&capability) {
            Ok(())
        } else {
            Err(HostError::Denied(format!(
                "plugin {} is not granted the {} capability (add it to capabilities in plugin.toml)",
                self.plugin,
                capability.interface()
            )))
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for HostState {}

impl From<CoreHostError> for HostError {
    fn from(e: CoreHostError) -> Self {
        match e {
            CoreHostError::Denied(m) => HostError::Denied(m),
            CoreHostError::Invalid(m) => HostError::Invalid(m),
            CoreHostError::Failed(m) => HostError::Failed(m),
            CoreHostError::StaleRef(m) => HostError::StaleRef(m),
            CoreHostError::SelectorNotFound(m) => HostError::SelectorNotFound(m),
            CoreHostError::ElementNotVisible(m) => HostError::ElementNotVisible(m),
            CoreHostError::ElementNotInteractable(m) => HostError::ElementNotInteractable(m),
        }
    }
}

pub(crate) fn core_modifiers(m: types::Modifiers) -> wabp_model::plugin::Modifiers {
    wabp_model::plugin::Modifiers {
        alt: m.contains(types::Modifiers::ALT),
        control: m.contains(types::Modifiers::CONTROL),
        meta: m.contains(types::Modifiers::META),
        shift: m.contains(types::Modifiers::SHIFT),
    }
}

pub(crate) fn wit_box(b: wabp_model::plugin::ElementBox) -> types::ElementBox {
    types::ElementBox {
        rect: types::Rect {
            x: b.rect.x,
            y: b.rect.y,
            width: b.rect.width,
            height: b.rect.height,
        },
        tag: b.tag,
        visible: b.visible,
        in_viewport: b.in_viewport,
        text: b.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::action::wabp::plugin::input::Host as _;

    fn state(grants: &[Capability]) -> HostState {
        HostState::new(
            "t".into(),
            grants.iter().copied().collect(),
            None,
            crate::runtime::limits(1 << 20),
            Instant::now(),
        )
    }

    #[tokio::test]
    async fn ungranted_capability_is_denied_per_call() {
        let mut s = state(&[Capability::Log]);
        match s.mouse_move(1.0, 2.0).await {
            Err(HostError::Denied(message)) => assert!(message.contains("input"), "{message}"),
            other => panic!("expected denied, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn granted_capability_without_tab_fails_cleanly() {
        let mut s = state(&[Capability::Input]);
        assert!(matches!(
            s.mouse_move(1.0, 2.0).await,
            Err(HostError::Failed(_))
        ));
    }
}
