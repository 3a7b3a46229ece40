//! The main frame's navigation, as a component: where the page is, which
//! documents committed and which of them an action's wait has seen, its
//! loading, the document requests in flight and the iframes of the current
//! document. Written by the event pump (`pump.rs`), and by the action loop
//! for what its waits have seen and by `navigate_to` for where a navigation
//! out of a dialog goes; behind the tab's `navigation` lock, apart from the
//! rest of the tab's state.

use std::collections::{HashMap, HashSet};

use super::loading;

#[derive(Debug, Default)]
pub(crate) struct Navigation {
    /// New main-frame documents committed since the tab opened, and how
    /// many of them an action's wait has had to see (see
    /// `ActionTab::take_uncovered_navigation`).
    pub(crate) commits: u64,
    pub(crate) commits_seen: u64,
    /// The main frame's load event came since its last commit (read with
    /// the event itself: `loading` follows a stop of loading, which the
    /// pump may read later).
    pub(crate) loaded_since_commit: bool,
    pub(crate) url: String,
    /// The main frame's starts and stops of loading, commits and
    /// same-document navigations, in whatever order the pump read them.
    pub(crate) main_loading: loading::MainFrameLoading,
    /// Why the main frame's next navigation happens (anchorClick, reload, ...).
    pub(crate) pending_reason: Option<String>,
    /// Features of the page's last `window.open`, to tell popup windows from tabs.
    pub(crate) last_window_open: Option<(Vec<String>, String)>,
    /// Where a navigation that left a page sitting in a dialog was going,
    /// until a new document commits: the page a repair opens if that page's
    /// dialogs would not let it go.
    pub(crate) leaving_to: Option<String>,
    /// The main frame's document requests in flight, by request id: a
    /// failed one is a failed navigation.
    pub(crate) document_requests: HashMap<String, String>,
    /// The iframes seen since the main frame's last navigation (downloads
    /// name the frame that started them).
    pub(crate) child_frames: HashSet<String>,
}

impl Navigation {
    /// Whether a document committed that no action's wait has seen (the
    /// URL then), and from now on, it has been.
    pub(crate) fn take_uncovered(&mut self) -> Option<String> {
        let uncovered = self.commits > self.commits_seen;
        self.commits_seen = self.commits;
        uncovered.then(|| self.url.clone())
    }

    /// The committed documents count as seen, once the last one loaded.
    pub(crate) fn seen_if_loaded(&mut self) {
        if self.loaded_since_commit {
            self.commits_seen = self.commits;
        }
    }
}
