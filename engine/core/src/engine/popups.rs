//! Pages the tabs open: a popup (`window.open`, `target=_blank`) or a link
//! opened with a modifier becomes a tab of its own, owned by its opener's
//! user, announced in the opener's envelope, loaded and frozen before
//! anyone can act on it. `PageClaims` tells those pages apart from the ones
//! the engine opens itself.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::target::{GetTargetInfoParams, TargetId};
use parking_lot::Mutex;

use super::{Engine, TURN_LIMIT};
use crate::error::Result;
use crate::events::{self, TabEvent, TabSignal};
use crate::tab::Tab;
use crate::tab::frames::DriverKind;

/// How long a page with no opener waits for the engine's own openings
/// under way before it is taken for a tab's.
const OWN_OPENINGS_LIMIT: Duration = Duration::from_secs(3);

/// Which new pages are whose: the pages the engine opens itself (a page
/// with no opener may be one of them), and the new tabs loading their
/// first page, not listed yet (a popup their page opens is theirs).
#[derive(Default)]
pub(crate) struct PageClaims {
    own: Mutex<OwnPages>,
    first_loads: Mutex<Vec<Arc<Tab>>>,
}

/// Pages the engine opens itself: how many are being opened now, and the
/// last ones opened.
#[derive(Debug, Default)]
struct OwnPages {
    opening: usize,
    opened: VecDeque<TargetId>,
}

/// A page the engine is opening; see [`PageClaims::opening`].
pub(crate) struct OwnPageOpening<'a> {
    claims: &'a PageClaims,
}

impl OwnPageOpening<'_> {
    /// The page it opened.
    pub(crate) fn opened(&self, target: &TargetId) {
        let mut own = self.claims.own.lock();
        own.opened.push_back(target.clone());
        if own.opened.len() > 64 {
            own.opened.pop_front();
        }
    }
}

impl Drop for OwnPageOpening<'_> {
    fn drop(&mut self) {
        self.claims.own.lock().opening -= 1;
    }
}

impl PageClaims {
    /// Counts a page the engine opens itself until the guard drops.
    pub(crate) fn opening(&self) -> OwnPageOpening<'_> {
        self.own.lock().opening += 1;
        OwnPageOpening { claims: self }
    }

    /// Whether `target` is none of the engine's own pages: once the
    /// openings under way have ended (bounded), it is not among them.
    async fn not_own(&self, target: &TargetId) -> bool {
        let deadline = tokio::time::Instant::now() + OWN_OPENINGS_LIMIT;
        loop {
            {
                let own = self.own.lock();
                if own.opened.contains(target) {
                    return false;
                }
                if own.opening == 0 {
                    return true;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A new tab starts loading its first page, not listed yet.
    pub(crate) fn first_load_begins(&self, tab: Arc<Tab>) {
        self.first_loads.lock().push(tab);
    }

    pub(crate) fn first_load_ends(&self, tab: &Arc<Tab>) {
        self.first_loads.lock().retain(|t| !Arc::ptr_eq(t, tab));
    }

    /// The new tab loading its first page in `target`.
    pub(crate) fn first_loading(&self, target: &TargetId) -> Option<Arc<Tab>> {
        self.first_loads
            .lock()
            .iter()
            .find(|t| &t.target_id == target)
            .cloned()
    }
}

impl Engine {
    /// Whether a new page with no opener is the one `source`'s modifier or
    /// middle click opened: none of the engine's own, not a tab yet, and
    /// `source` still expects it.
    pub(super) async fn claim_new_page(&self, source: &Tab, target: &TargetId) -> bool {
        self.pages.not_own(target).await
            && self.tab_by_target(target).is_none()
            && source.take_new_page_expected()
    }

    /// A page opened by one of our tabs (`window.open`, `target=_blank`).
    /// `adoption` is dropped once the `popup` event has gone out.
    pub(super) async fn adopt_popup(
        &self,
        source: Arc<Tab>,
        adoption: crate::tab::PopupAdoption,
        target: TargetId,
        url: String,
    ) -> Result<()> {
        let (page, navigator) = {
            let mut attempt = 0;
            loop {
                // Without a browser, the popup went with it.
                let Some(found) = self
                    .host_of(source.owner().as_deref())
                    .page_of(target.clone())
                    .await
                else {
                    return Ok(());
                };
                match found {
                    Ok(found) => break found,
                    Err(_) if attempt < 100 => {
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        // headless-shell hands its opener's begin-frame control to a popup;
        // other browsers draw popups with the compositor. Ask the popup.
        let kind = if !self.config.pause {
            DriverKind::FreeRunning
        } else if self.host_of(source.owner().as_deref()).default_driver()
            == DriverKind::Deterministic
            && crate::tab::execution::accepts_begin_frames(&page).await
        {
            DriverKind::Deterministic
        } else {
            DriverKind::Compositor
        };
        let tab = Tab::attach(
            self.next_tab_id(),
            page,
            kind,
            Some(source.id.clone()),
            navigator,
        )
        .await?;
        // A popup belongs to its opener's user (it shares the context).
        tab.set_owner(source.owner());
        tab.set_extra_schemes(self.config.extra_schemes.clone());
        tab.set_own_addresses(self.config.own_addresses.clone());
        // Not awaited: the popup's adoption must not wait a round trip
        // (the click that opened it answers with its event).
        let blocked = tab.clone();
        tokio::spawn(async move {
            if let Err(e) = blocked.block_own_addresses().await {
                tracing::warn!(tab = %blocked.id, "the engine's own address is not blocked in this tab: {}", e.message);
            }
        });
        tab.set_record_secrets(self.config.record_secrets);
        // Actions on the popup wait until it is loaded and frozen; the event
        // goes out now, while the opener's action still listens.
        let turn = tab.turn(TURN_LIMIT).await?;
        self.tabs.push(tab.clone());
        // Size, position or `popup` make a window; `noopener` alone (what
        // `target=_blank` implies) does not.
        let opened = source.take_window_open();
        // A popup's target often has no URL yet: the opener asked for one.
        let url = match &opened {
            Some((_, asked)) if url.is_empty() || url == "about:blank" => asked.clone(),
            _ => url,
        };
        // A link opened in a new tab has no URL on its target at first;
        // the browser knows the one it is loading.
        let url = if url.is_empty() || url == "about:blank" {
            let info = self
                .browser
                .execute(GetTargetInfoParams {
                    target_id: Some(target.clone()),
                })
                .await
                .ok();
            info.map(|i| i.target_info.url.clone())
                .filter(|u| !u.is_empty())
                .unwrap_or(url)
        } else {
            url
        };
        let popup_type = match opened.map(|(features, _)| features) {
            Some(features)
                if features.iter().any(|f| {
                    let name = f.split('=').next().unwrap_or_default().trim();
                    [
                        "width",
                        "height",
                        "left",
                        "top",
                        "popup",
                        "innerwidth",
                        "innerheight",
                    ]
                    .contains(&name.to_ascii_lowercase().as_str())
                }) =>
            {
                "window"
            }
            _ => "tab",
        };
        let popup = TabEvent::Popup(events::Popup {
            source_tab_id: source.id.clone(),
            new_tab_id: tab.id.clone(),
            url,
            popup_type: popup_type.to_string(),
        });
        // Opened while no action runs (a new tab's first page, a timer of
        // a frozen page's): in the opener's next envelope.
        if source.idle() {
            source.note(popup.clone());
        }
        source.emit(TabSignal::Event(popup));
        drop(adoption);
        if self.config.pause {
            tab.driver().enable(None).await?;
            self.first_load(&tab, None).await?;
        }
        drop(turn);
        Ok(())
    }
}
