//! The caller's tab list as a browser's tab strip shows it: pinned tabs
//! first, an order the caller sets, muted tabs, duplicates.

use std::sync::Arc;

use super::{Engine, answers};
use crate::caller::Caller;
use crate::error::Result;
use crate::tab::Tab;

impl Engine {
    /// Pins or unpins a tab: pinned tabs lead the caller's list, so a
    /// pinned tab moves to the end of the pinned ones, an unpinned one to
    /// the start of the rest.
    pub async fn pin_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        pinned: bool,
    ) -> Result<answers::TabPlace> {
        let tab = self.tab(caller, tab_id)?;
        tab.set_pinned(pinned);
        let index = self.place_tab(caller, &tab, if pinned { usize::MAX } else { 0 });
        Ok(self.tab_place(&tab, index))
    }

    /// Mutes or unmutes a tab's media (see `Tab::set_muted`).
    pub async fn mute_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        muted: bool,
    ) -> Result<answers::TabPlace> {
        let tab = self.tab(caller, tab_id)?;
        tab.set_muted(muted).await?;
        let index = self.index_of(caller, &tab);
        Ok(self.tab_place(&tab, index))
    }

    /// Moves a tab to `index` of the caller's list, kept within its group
    /// (pinned tabs before the others).
    pub async fn reorder_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
        index: usize,
    ) -> Result<answers::TabPlace> {
        let tab = self.tab(caller, tab_id)?;
        let index = self.place_tab(caller, &tab, index);
        Ok(self.tab_place(&tab, index))
    }

    /// A new tab of the same user at the same URL, muted if the tab is,
    /// right after it; it becomes the caller's active tab (as `create_tab`
    /// makes it).
    pub async fn duplicate_tab(
        &self,
        caller: &Caller,
        tab_id: &str,
    ) -> Result<answers::CreatedTab> {
        let tab = self.tab(caller, tab_id)?;
        let url = match tab.url() {
            url if url.is_empty() => "about:blank".to_string(),
            url => url,
        };
        let index = self.index_of(caller, &tab) + 1;
        let created = self.create_tab(caller, Some(&url), true, None).await?;
        let copy = self.tab(caller, &created.id)?;
        if tab.muted() {
            copy.set_muted(true).await?;
        }
        self.place_tab(caller, &copy, index);
        Ok(created)
    }

    fn tab_place(&self, tab: &Arc<Tab>, index: usize) -> answers::TabPlace {
        answers::TabPlace {
            tab_id: tab.id.clone(),
            index,
            pinned: tab.pinned(),
            muted: tab.muted(),
        }
    }

    /// `tab`'s place in the caller's list.
    fn index_of(&self, caller: &Caller, tab: &Arc<Tab>) -> usize {
        self.tabs.index_in(caller, tab)
    }

    /// Moves `tab` to `wanted` in the caller's list, clamped to its group;
    /// the place it got. Other users' tabs keep their places.
    fn place_tab(&self, caller: &Caller, tab: &Arc<Tab>, wanted: usize) -> usize {
        self.tabs.place(caller, tab, wanted)
    }
}
