//! The caller's tabs: opening one (in the user's browser context, frozen
//! once its first page has loaded), listing, activating, stopping and
//! closing. The table itself is `crate::tab_table::TabTable`'s.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::page::StopLoadingParams;
use chromiumoxide::cdp::browser_protocol::target::{
    ActivateTargetParams, CloseTargetParams, CreateTargetParams,
};
use serde::Serialize;

use super::{Engine, answers};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::TabSignal;
use crate::tab::Tab;
use crate::tab::frames::DriverKind;

/// How long a new tab's creation waits for windows its first page opened
/// to be attached (only while one is being attached).
const POPUPS_OF_FIRST_LOAD: Duration = Duration::from_secs(3);
/// How long a new tab's first page may take to load before it is frozen.
const FIRST_LOAD_LIMIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TabSummary {
    pub id: String,
    pub url: String,
    pub title: String,
    pub active: bool,
    /// Pinned tabs lead the list.
    pub pinned: bool,
    /// Its media elements play silently.
    pub muted: bool,
}

impl Engine {
    pub(super) fn all_tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs.all()
    }

    /// The caller's tab `tab_id`. Another user's tab is not found, exactly
    /// as a tab that never existed.
    pub fn tab(&self, caller: &Caller, tab_id: &str) -> Result<Arc<Tab>> {
        self.ensure_ready_for(caller)?;
        self.tabs
            .of_caller(caller, tab_id)
            .ok_or_else(|| self.not_held(tab_id, Error::tab_not_found(tab_id)))
    }

    /// `missing` for an id of this engine; for one another engine holds,
    /// where to send it.
    pub fn not_held(&self, id: &str, missing: Error) -> Error {
        match self.config.engine_id.foreign(id) {
            Some(holder) => Error::wrong_engine(id, &holder),
            None => missing,
        }
    }

    /// This engine's name in a fleet.
    pub fn engine_id(&self) -> &crate::ids::EngineId {
        &self.config.engine_id
    }

    /// A tab whoever owns it: for the engine's own bookkeeping only.
    pub(super) fn any_tab(&self, tab_id: &str) -> Option<Arc<Tab>> {
        self.tabs.any(tab_id)
    }

    /// A random id: knowing one tab's id says nothing about another's.
    pub(super) fn next_tab_id(&self) -> String {
        self.config.engine_id.new_id("tab")
    }

    /// A blank tab in `context`, frozen when execution control is on, not
    /// yet listed.
    pub(super) async fn new_tab(
        &self,
        id: String,
        context: Option<BrowserContextId>,
        user: Option<&str>,
        opener: Option<String>,
    ) -> Result<Arc<Tab>> {
        let host = self.host_of(user);
        let kind = host.default_driver();
        let (page, navigator) = {
            let mut params = CreateTargetParams::new("about:blank");
            params.enable_begin_frame_control = Some(kind == DriverKind::Deterministic);
            // Full Chromium draws only the front tab of a window, and a
            // capture of any other waits for a frame that never comes: a
            // window per tab keeps every tab drawing.
            params.new_window = Some(kind != DriverKind::Deterministic);
            params.browser_context_id = context;
            let opening = self.pages.opening();
            host.new_page(params, |target| opening.opened(target))
                .await?
        };
        let tab = Tab::attach(id, page, kind, opener, navigator).await?;
        tab.set_owner(user.map(str::to_string));
        let defaults = self.chooser_defaults.of(user);
        tab.set_chooser_defaults(defaults);
        tab.set_interception(self.interception.clone());
        tab.sync_interception().await?;
        tab.set_extra_schemes(self.config.extra_schemes.clone());
        tab.set_own_addresses(self.config.own_addresses.clone());
        if let Err(e) = tab.block_own_addresses().await {
            tracing::warn!(tab = %tab.id, "the engine's own address is not blocked in this tab: {}", e.message);
        }
        tab.set_record_secrets(self.config.record_secrets);
        // Frozen and loaded before anyone can reach it.
        if self.config.pause {
            tab.driver().enable(None).await?;
        }
        Ok(tab)
    }

    pub(super) async fn open_tab(&self, url: &str, active: bool) -> Result<Arc<Tab>> {
        self.open_tab_in(url, active, None).await
    }

    async fn open_tab_in(&self, url: &str, active: bool, user: Option<&str>) -> Result<Arc<Tab>> {
        // A draining engine's tabs close soon: new ones belong elsewhere.
        if self.drain.is_draining() {
            return Err(Error::draining());
        }
        // An engine without tabs holds only its baseline: it always takes one.
        if let Some(over) = self
            .memory
            .exceeded()
            .filter(|_| !self.tabs.all().is_empty())
        {
            return Err(Error::new(
                crate::error::ErrorCode::EngineFull,
                format!("this engine takes no new tabs: {over}; try another engine, or close tabs"),
            ));
        }
        let context = match user {
            Some(user) => {
                self.check_tab_limit(user)?;
                Some(self.user_context(user).await?)
            }
            None => None,
        };
        let tab = self
            .new_tab(self.next_tab_id(), context, user, None)
            .await?;
        self.pages.first_load_begins(tab.clone());
        let loaded = if url == "about:blank" {
            Ok(())
        } else {
            self.first_load(&tab, Some(url)).await
        };
        // A window the page opened while it loaded is listed with it.
        tab.popups_settled(POPUPS_OF_FIRST_LOAD).await;
        self.pages.first_load_ends(&tab);
        if let Err(e) = loaded
            // A page that stops answering while it loads is kept: its next
            // use repairs it.
            && tab.session.failure().is_none()
        {
            // No tab half-opened: the caller hears why instead.
            let _ = tab
                .session
                .execute(CloseTargetParams::new(tab.target_id.clone()))
                .await;
            return Err(e);
        }
        self.tabs.add(tab.clone(), active);
        Ok(tab)
    }

    /// Loads a new tab's first page (`url`, or what it is already loading)
    /// with the clock running, then freezes it.
    /// A page that does not finish loading in time (a slow image, a busy
    /// script, a dialog) is frozen as it stands: the tab is usable.
    pub(super) async fn first_load(&self, tab: &Arc<Tab>, url: Option<&str>) -> Result<()> {
        tab.driver().thaw().await?;
        let loaded = async {
            if let Some(url) = url {
                tab.navigate_to(url, None, false).await?;
            }
            while tab.pending_dialog().is_none() {
                let state = tab.session.evaluate_json("document.readyState").await;
                if state.is_err() || state.is_ok_and(|s| s.as_str() == Some("complete")) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, Error>(())
        };
        let loaded = match tokio::time::timeout(FIRST_LOAD_LIMIT, loaded).await {
            Ok(loaded) => loaded,
            // Stopped where it stands: a navigation still waiting for its
            // server would leave the page answering no script.
            Err(_) => {
                tab.stop_loading().await;
                Ok(())
            }
        };
        tab.driver().freeze().await?;
        loaded
    }

    /// The caller's tabs, in listing order.
    pub(crate) fn tabs_of(&self, caller: &Caller) -> Vec<Arc<Tab>> {
        self.tabs.of(caller)
    }

    /// The caller's tabs, in listing order.
    pub async fn list_tabs(&self, caller: &Caller) -> Result<Vec<TabSummary>> {
        self.ensure_ready_for(caller)?;
        let tabs = self.tabs_of(caller);
        let active = self.active_tab(caller);
        let mut out = Vec::with_capacity(tabs.len());
        for tab in tabs {
            let (url, title) = tab.session.info().await.unwrap_or_default();
            out.push(TabSummary {
                active: active.as_deref() == Some(tab.id.as_str()),
                pinned: tab.pinned(),
                muted: tab.muted(),
                id: tab.id.clone(),
                url,
                title,
            });
        }
        Ok(out)
    }

    /// The URL `caller`'s tab `tab_id` last committed, if it is theirs.
    pub fn tab_url(&self, caller: &Caller, tab_id: &str) -> Option<String> {
        self.tab(caller, tab_id).ok().map(|tab| tab.url())
    }

    pub async fn tab_info(&self, caller: &Caller, tab_id: &str) -> Result<answers::TabInfo> {
        let tab = self.tab(caller, tab_id)?;
        let (url, title) = tab.session.info().await?;
        Ok(answers::TabInfo {
            id: tab.id.clone(),
            url,
            title,
            loading: tab.is_loading(),
            pinned: tab.pinned(),
            muted: tab.muted(),
        })
    }

    /// Opens a tab (201 in REST), in the caller's browser context when the
    /// caller is a user. `index` places it in the listing order.
    pub async fn create_tab(
        &self,
        caller: &Caller,
        url: Option<&str>,
        active: bool,
        index: Option<usize>,
    ) -> Result<answers::CreatedTab> {
        self.ensure_ready_for(caller)?;
        self.ensure_agent_mode()?;
        let url = url.unwrap_or("about:blank");
        crate::rules::url::check_navigation_url(url, &self.config.extra_schemes)?;
        self.config.own_addresses.check(url)?;
        let tab = self.open_tab_in(url, active, caller.user_id()).await?;
        if let Some(index) = index {
            self.tabs.move_to(&tab.id, index);
        }
        if active {
            tab.session
                .execute(ActivateTargetParams::new(tab.target_id.clone()))
                .await
                .ok();
        }
        Ok(answers::CreatedTab {
            id: tab.id.clone(),
            url: url.to_string(),
        })
    }

    pub async fn close_tab(&self, caller: &Caller, tab_id: &str) -> Result<()> {
        let tab = self.tab(caller, tab_id)?;
        self.forget_tab(tab_id);
        tab.emit(TabSignal::Closed { reason: "user" });
        tab.session
            .execute(CloseTargetParams::new(tab.target_id.clone()))
            .await?;
        Ok(())
    }

    pub async fn activate_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Activated> {
        let tab = self.tab(caller, tab_id)?;
        tab.session
            .execute(ActivateTargetParams::new(tab.target_id.clone()))
            .await?;
        self.tabs.set_active(caller, &tab.id);
        let index = self.tabs.position(tab_id).unwrap_or(0);
        Ok(answers::Activated {
            status: "activated".into(),
            tab_id: tab.id.clone(),
            index,
        })
    }

    /// The caller's active tab: the last one it activated or opened active.
    pub fn active_tab(&self, caller: &Caller) -> Option<String> {
        self.tabs.active(caller)
    }

    pub async fn stop_tab(&self, caller: &Caller, tab_id: &str) -> Result<answers::Stopped> {
        let tab = self.tab(caller, tab_id)?;
        tab.session.execute(StopLoadingParams::default()).await?;
        Ok(answers::Stopped {
            status: "stopped".into(),
            tab_id: tab.id.clone(),
        })
    }
}
