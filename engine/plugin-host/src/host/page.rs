//! `wabp:plugin/page`: reading the page (elements, their boxes, the
//! viewport), granted by the `page` capability.

use super::{HostState, wit_box};
use crate::bindings::action::wabp::plugin::page::Host;
use crate::bindings::types::{ElementBox, HostError, Located, Target, ViewportInfo};
use crate::manifest::Capability;
use wabp_model::plugin::Target as CoreTarget;

impl Host for HostState {
    async fn query_selector_all(&mut self, selector: String) -> Result<Vec<ElementBox>, HostError> {
        let boxes = self
            .granted_page(Capability::Page)?
            .query_selector_all(&selector)
            .await?;
        Ok(boxes.into_iter().map(wit_box).collect())
    }
    async fn element_at(&mut self, x: f64, y: f64) -> Result<Option<ElementBox>, HostError> {
        Ok(self
            .granted_page(Capability::Page)?
            .element_at(x, y)
            .await?
            .map(wit_box))
    }
    async fn viewport(&mut self) -> Result<ViewportInfo, HostError> {
        let v = self.granted_page(Capability::Page)?.viewport().await?;
        Ok(ViewportInfo {
            width: v.width,
            height: v.height,
            scroll_x: v.scroll_x,
            scroll_y: v.scroll_y,
            page_width: v.page_width,
            page_height: v.page_height,
            device_scale_factor: v.device_scale_factor,
        })
    }
    async fn scroll_into_view(&mut self, selector: String) -> Result<ElementBox, HostError> {
        Ok(wit_box(
            self.granted_page(Capability::Page)?
                .scroll_into_view(&selector)
                .await?,
        ))
    }
    async fn locate(&mut self, target: Target) -> Result<Located, HostError> {
        let located = self
            .granted_page(Capability::Page)?
            .locate(&core_target(target))
            .await?;
        Ok(Located {
            x: located.x,
            y: located.y,
            element: wit_box(located.element),
        })
    }
    async fn focus(&mut self, target: Target, select_all: bool) -> Result<ElementBox, HostError> {
        Ok(wit_box(
            self.granted_page(Capability::Page)?
                .focus(&core_target(target), select_all)
                .await?,
        ))
    }
    async fn dispatch_change(&mut self, target: Target) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Page)?
            .dispatch_change(&core_target(target))
            .await?)
    }
    async fn set_value(&mut self, target: Target, value: String) -> Result<bool, HostError> {
        Ok(self
            .granted_page(Capability::Page)?
            .set_value(&core_target(target), &value)
            .await?)
    }
    async fn value_of(&mut self, target: Target) -> Result<Option<String>, HostError> {
        Ok(self
            .granted_page(Capability::Page)?
            .value_of(&core_target(target))
            .await?)
    }
}

fn core_target(target: Target) -> CoreTarget {
    match target {
        Target::ElementRef(r) => CoreTarget::Ref(r),
        Target::Selector(s) => CoreTarget::Selector(s),
    }
}
