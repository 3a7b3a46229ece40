//! Browser-wide events: popups become tabs (`popups.rs`), tabs a script
//! closed leave the list, downloads are recorded and announced to their
//! tab, documents pages request go to the policies (`fence.rs`).

use std::sync::Arc;

use chromiumoxide::cdp::browser_protocol::browser::{
    EventDownloadProgress, EventDownloadWillBegin,
};
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::target::{
    EventTargetCreated, EventTargetDestroyed, TargetId,
};
use futures::StreamExt;

use super::Engine;
use crate::error::Result;
use crate::events::TabSignal;
use crate::tab::Tab;

/// How long before a lost connection a destroyed page counts as gone with
/// its browser (the watch notices a dropped socket within about a second).
const DESTROYED_BEFORE_LOSS: std::time::Duration = std::time::Duration::from_secs(2);

impl Engine {
    /// Follows browser-wide events: popups become tabs, tabs a script closed
    /// leave the list, downloads are recorded and announced to their tab.
    pub(super) async fn watch_browser_events(
        self: &Arc<Self>,
        browser: &chromiumoxide::Browser,
    ) -> Result<tokio::task::JoinHandle<()>> {
        enum BrowserEvent {
            Created(Arc<EventTargetCreated>),
            Destroyed(Arc<EventTargetDestroyed>),
            DownloadBegin(Arc<EventDownloadWillBegin>),
            DownloadProgress(Arc<EventDownloadProgress>),
            DocumentPaused(Arc<EventRequestPaused>),
        }
        let mut streams = vec![
            browser
                .event_listener::<EventTargetCreated>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::Created)
                .boxed(),
            browser
                .event_listener::<EventTargetDestroyed>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::Destroyed)
                .boxed(),
            browser
                .event_listener::<EventDownloadWillBegin>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::DownloadBegin)
                .boxed(),
            browser
                .event_listener::<EventDownloadProgress>()
                .await
                .map_err(crate::cdp_error)?
                .map(BrowserEvent::DownloadProgress)
                .boxed(),
        ];
        if self.config.navigation_fence.is_some() {
            streams.push(
                browser
                    .event_listener::<EventRequestPaused>()
                    .await
                    .map_err(crate::cdp_error)?
                    .map(BrowserEvent::DocumentPaused)
                    .boxed(),
            );
        }
        let engine = Arc::downgrade(self);
        Ok(tokio::spawn(async move {
            let mut events = futures::stream::select_all(streams);
            while let Some(event) = events.next().await {
                let Some(engine) = engine.upgrade() else {
                    break;
                };
                match event {
                    BrowserEvent::Created(e) => {
                        let info = &e.target_info;
                        if info.r#type != "page" {
                            continue;
                        }
                        // A link opened with a modifier or the middle button:
                        // the browser opens it without an opener; it is the
                        // page of the tab that just clicked so.
                        let source = match info.opener_id.clone() {
                            Some(opener) => engine.tab_by_target(&opener).map(|t| (t, true)),
                            None => engine
                                .tabs
                                .find_map(|t| t.new_page_expected().then_some(()))
                                .map(|(t, ())| (t, false)),
                        };
                        if let Some((source, opened_it)) = source {
                            let engine = engine.clone();
                            let (target, url) = (info.target_id.clone(), info.url.clone());
                            // Counted now, so the action that opened it
                            // waits for its event.
                            let adoption = source.popup_adoption();
                            // Attaching waits on the browser: off this loop.
                            tokio::spawn(async move {
                                if !opened_it && !engine.claim_new_page(&source, &target).await {
                                    return;
                                }
                                if let Err(err) =
                                    engine.adopt_popup(source, adoption, target, url).await
                                {
                                    tracing::warn!("popup not registered: {}", err.message);
                                }
                            });
                        }
                    }
                    BrowserEvent::Destroyed(e) => engine.on_target_destroyed(&e.target_id),
                    BrowserEvent::DownloadBegin(e) => engine.on_download_begin(&e),
                    BrowserEvent::DownloadProgress(e) => engine.on_download_progress(&e),
                    // Off the loop: a slow policy holds only its own request.
                    BrowserEvent::DocumentPaused(e) => {
                        tokio::spawn(async move { engine.answer_paused_document(e).await });
                    }
                }
            }
        }))
    }

    /// A listed tab, or a new one loading its first page, by its target.
    pub(super) fn tab_by_target(&self, target: &TargetId) -> Option<Arc<Tab>> {
        let listed = self.tabs.by_target(target.inner());
        listed.or_else(|| self.pages.first_loading(target))
    }

    fn on_target_destroyed(&self, target: &TargetId) {
        let Some(tab) = self.tab_by_target(target) else {
            return; // closed through the API, or never ours
        };
        self.forget_tab(&tab.id);
        tab.emit(TabSignal::Closed { reason: "script" });
        // A browser that is being closed (a service ending the session)
        // destroys its pages before its socket drops: if it drops soon, the
        // restart reopens this tab with the others.
        let mut recent = self.recently_destroyed.lock();
        recent.retain(|(at, _)| at.elapsed() < DESTROYED_BEFORE_LOSS);
        recent.push((std::time::Instant::now(), tab));
    }

    /// Tabs whose pages went in the moments before their browser's
    /// connection dropped, owned as `pick` picks: they went with the
    /// browser, not by a script.
    pub(super) fn take_destroyed_before_loss(
        &self,
        pick: impl Fn(Option<&str>) -> bool,
    ) -> Vec<Arc<Tab>> {
        let mut recent = self.recently_destroyed.lock();
        let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut *recent)
            .into_iter()
            .filter(|(at, _)| at.elapsed() < DESTROYED_BEFORE_LOSS)
            .partition(|(_, tab)| pick(tab.owner().as_deref()));
        *recent = kept;
        taken.into_iter().map(|(_, tab)| tab).collect()
    }

    pub(super) fn forget_tab(&self, tab_id: &str) {
        self.tabs.remove(tab_id);
        // A person held it: nothing is left to hand back.
        self.input.hand_back(tab_id);
        self.input.take_thawed_one(tab_id);
    }

    /// The tab a frame belongs to (see `TabTable::for_frame`).
    pub(super) fn tab_for_frame(&self, frame: &str) -> Option<Arc<Tab>> {
        self.tabs.for_frame(frame)
    }
}
