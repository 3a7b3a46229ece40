//! Tabs that heal. A page session marks its page as broken when a command
//! times out, a frame never completes or the renderer crashes; before the
//! tab's next use the engine checks it (a script round trip and a frame, in
//! under two seconds) and, if it is really broken, replaces it: a fresh page
//! in the same browser context, under the same id, at the broken page's last
//! URL (blank if it broke while loading). Refs and the page's own state
//! go; the id, the owner and the history stay.

use crate::tab::frames::DriverKind;
use std::time::Instant;

use super::Engine;
use crate::caller::Caller;
use crate::error::Error;
use crate::error::Result;
use crate::events;
use crate::events::TabEvent;
use crate::tab::Tab;
use chromiumoxide::cdp::browser_protocol::target::CloseTargetParams;
use std::sync::Arc;
use std::time::Duration;

/// How long a page may take to answer the health check.
const CHECK_LIMIT: Duration = Duration::from_secs(2);
/// A page that answered a script this recently is not asked again before
/// its next action.
const RECENT_ANSWER: Duration = Duration::from_secs(1);

impl Engine {
    /// The caller's tab, repaired first if its page looked broken.
    pub async fn live_tab(&self, caller: &Caller, tab_id: &str) -> Result<Arc<Tab>> {
        let tab = self.tab(caller, tab_id)?;
        if tab.session.failure().is_none() {
            // Full Chromium may not report a crashed renderer: a compositor
            // tab's page is asked first (a script round trip, < 1 ms),
            // unless it answered one just now (back-to-back actions). A
            // page that broke since fails its action, which repairs it.
            let unreported_crash = tab.pending_dialog().is_none()
                && !tab.session.script_answered_within(RECENT_ANSWER)
                && tab.driver().kind().await != DriverKind::Deterministic
                && !tab.driver().answers(CHECK_LIMIT).await;
            if !unreported_crash {
                return Ok(tab);
            }
            tab.session
                .mark_failed("the page did not answer a script (its renderer crashed or hangs)");
        }
        Ok(self.heal(&tab).await?.0)
    }

    /// Checks a tab that looked broken and replaces it if it is. Returns the
    /// tab to use and, when it was replaced, the `tab_recovered` event.
    pub(crate) async fn heal(&self, tab: &Arc<Tab>) -> Result<(Arc<Tab>, Option<TabEvent>)> {
        let _one_at_a_time = self.repairs.lock().await;
        // Repaired meanwhile by another request.
        let current = self
            .any_tab(&tab.id)
            .ok_or_else(|| Error::tab_not_found(&tab.id))?;
        if !Arc::ptr_eq(&current, tab) {
            return Ok((current, None));
        }
        let Some(cause) = tab.session.failure() else {
            return Ok((current, None));
        };
        // A dialog explains a silent page, unless it is the loop that broke it.
        let dialog_explains = tab.pending_dialog().is_some() && cause != crate::tab::DIALOG_LOOP;
        if dialog_explains || tab.driver().answers(CHECK_LIMIT).await {
            tracing::debug!(tab = %tab.id, %cause, "the page answers after all");
            tab.session.clear_failure();
            return Ok((current, None));
        }
        let started = Instant::now();
        tracing::warn!(tab = %tab.id, %cause, "repairing a tab that stopped answering");
        let owner = tab.owner();
        let context = match owner.as_deref() {
            Some(user) => Some(self.user_context(user).await?),
            None => None,
        };
        let fresh = self
            .new_tab(
                tab.id.clone(),
                context,
                owner.as_deref(),
                tab.opener.clone(),
            )
            .await?;
        // Closed meanwhile: the fresh page is not wanted.
        if !self.tabs.replace(tab, fresh.clone()) {
            self.discard(&fresh);
            return Err(Error::tab_not_found(&tab.id));
        }
        self.repaired
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        fresh.set_pinned(tab.pinned());
        if tab.muted()
            && let Err(e) = fresh.set_muted(true).await
        {
            tracing::warn!(tab = %tab.id, "the repaired tab could not be muted again: {}", e.message);
        }
        // Whatever still waits on the broken page stops waiting; the browser
        // closes it (a hung renderer is killed with it).
        tab.session.mark_closed();
        self.discard(tab);
        // A page whose dialogs would not let it go (an alert loop from its
        // load on) would hold the fresh tab again: it goes where it was
        // asked to go instead. A page that broke while loading would break
        // again: the fresh tab stays blank.
        let url = match tab.leaving_to() {
            Some(destination) => destination,
            None if tab.is_loading() => "about:blank".to_string(),
            None => tab.url(),
        };
        let reopen = !url.is_empty()
            && url != "about:blank"
            && crate::rules::url::check_navigation_url(&url, &self.config.extra_schemes).is_ok();
        if reopen && let Err(e) = self.first_load(&fresh, Some(&url)).await {
            tracing::warn!(tab = %tab.id, "the repaired tab could not reopen its page: {}", e.message);
        }
        let event = TabEvent::TabRecovered(events::TabRecovered {
            tab_id: tab.id.clone(),
            cause,
            url,
            repair_ms: (started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        });
        Ok((fresh, Some(event)))
    }

    /// Closes a tab's target in the background, bounded.
    fn discard(&self, tab: &Arc<Tab>) {
        let tab = tab.clone();
        tokio::spawn(async move {
            let _ = tab
                .session
                .execute(CloseTargetParams::new(tab.target_id.clone()))
                .await;
        });
    }
}
