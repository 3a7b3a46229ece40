//! The navigation fence: with a `--policy` file, every document request in
//! the browser (a link a page follows, a redirect, a script's navigation, a
//! frame, a popup's first page) is paused before it leaves and put to the
//! approval policies. `Fetch` is enabled on the browser's own session, not a
//! tab's, because a popup's first request is made before anyone could attach
//! to it. A denial fails the request (`net::ERR_BLOCKED_BY_CLIENT`: the
//! action's envelope shows the failed navigation); so does a policy that
//! fails. An "ask" lets it through: a page's own request can't wait for a
//! person, and the operation that led there was already asked.
//!
//! Under `--connect` this fences every tab of the attached browser, the
//! user's own included.

use std::sync::Arc;

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::cdp::browser_protocol::target::TargetId;

use super::Engine;
use crate::error::Result;
use crate::plugin::{Category, PolicyRequest, Verdict};

/// The operation name policies see for a page's own navigation.
pub const PAGE_NAVIGATION: &str = "page_navigation";

impl Engine {
    /// Pauses document requests browser-wide, when a policy file is given
    /// (`watch_browser_events` answers them).
    pub(super) async fn enable_navigation_fence(
        &self,
        browser: &chromiumoxide::Browser,
    ) -> Result<()> {
        if self.config.navigation_fence.is_none() {
            return Ok(());
        }
        let pattern = RequestPattern::builder()
            .resource_type(ResourceType::Document)
            .request_stage(RequestStage::Request)
            .build();
        browser
            .execute(EnableParams::builder().pattern(pattern).build())
            .await
            .map_err(crate::cdp_error)?;
        Ok(())
    }

    /// Lets a paused document request go, or fails it if a policy denies it.
    /// Every paused request is answered, whatever happens.
    pub(super) async fn answer_paused_document(&self, event: Arc<EventRequestPaused>) {
        let denied = self.fence_verdict(&event).await;
        // Without a browser, it went with its browser.
        let id = event.request_id.clone();
        let answered = match denied {
            None => self
                .browser
                .execute(ContinueRequestParams::new(id))
                .await
                .map(|_| ()),
            Some(reason) => {
                tracing::info!(
                    url = %crate::error::cut(&event.request.url),
                    "a page navigation was blocked by the approval policy: {reason}"
                );
                self.browser
                    .execute(FailRequestParams::new(id, ErrorReason::BlockedByClient))
                    .await
                    .map(|_| ())
            }
        };
        if let Err(e) = answered {
            tracing::debug!("a paused request could not be answered: {}", e.message);
        }
    }

    /// Why the policies refuse the page's request, or `None` to let it go.
    async fn fence_verdict(&self, event: &EventRequestPaused) -> Option<String> {
        let settings = self.config.navigation_fence.as_ref()?;
        // A tab's main frame has its target's id (a popup not yet adopted,
        // or a subframe, has no tab here).
        let frame = TargetId::from(event.frame_id.inner().clone());
        let tab = self.tab_by_target(&frame);
        let request = PolicyRequest {
            category: Category::Navigation,
            operation: PAGE_NAVIGATION.into(),
            target_url: Some(crate::rules::url::canonical_url(&event.request.url)),
            tab_url: tab.as_ref().map(|t| t.url()),
            user: tab.as_ref().and_then(|t| t.owner()),
        };
        for policy in self.registry.policies() {
            match policy.decide(settings, &request).await {
                Ok(Verdict::Allow) | Ok(Verdict::Ask(_)) => {}
                Ok(Verdict::Deny(reason)) => return Some(reason),
                Err(failure) => {
                    return Some(format!(
                        "policy {} failed ({})",
                        failure.plugin, failure.message
                    ));
                }
            }
        }
        None
    }
}
