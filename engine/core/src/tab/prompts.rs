//! What the page is asking its user, held until a client answers: the
//! JavaScript dialog, file choosers and `<select>` popups (later: pickers).
//! Its own lock, its own state; the event pump tells it what opened and
//! closed, the engine's answers read and remove.

use std::sync::Mutex;

use chromiumoxide::cdp::browser_protocol::dom::BackendNodeId;
use tokio::sync::watch;

use crate::events::PendingDialog;

/// A file chooser the page opened, intercepted; answered by
/// `POST /file-chooser/{id}`.
#[derive(Debug, Clone)]
pub struct PendingFileChooser {
    pub id: String,
    pub backend_node_id: Option<BackendNodeId>,
    pub chooser_type: &'static str,
}

/// A `<select>` the page tried to open, intercepted before any native popup;
/// answered by `POST /select/{id}`.
#[derive(Debug, Clone)]
pub struct PendingSelect {
    pub id: String,
    /// The page-side handle of the element.
    pub token: String,
    pub multiple: bool,
    pub option_count: usize,
}

#[derive(Debug, Default)]
struct Pending {
    file_choosers: Vec<PendingFileChooser>,
    selects: Vec<PendingSelect>,
}

/// The tab's pending prompts.
#[derive(Debug)]
pub struct Prompts {
    pending: Mutex<Pending>,
    /// Watched by the page session: a dialog blocks the page's script, so
    /// commands that need it give up when one opens.
    dialog: watch::Sender<Option<PendingDialog>>,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts {
            pending: Mutex::default(),
            dialog: watch::Sender::new(None),
        }
    }
}

impl Prompts {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn dialog(&self) -> Option<PendingDialog> {
        self.dialog.borrow().clone()
    }

    pub fn dialog_opened(&self, dialog: PendingDialog) {
        self.dialog.send_replace(Some(dialog));
    }

    pub fn dialog_closed(&self) {
        self.dialog.send_replace(None);
    }

    /// The dialog as it opens and closes.
    pub fn watch_dialog(&self) -> watch::Receiver<Option<PendingDialog>> {
        self.dialog.subscribe()
    }

    pub fn file_chooser_opened(&self, chooser: PendingFileChooser) {
        self.pending().file_choosers.push(chooser);
    }

    pub fn file_chooser(&self, id: &str) -> Option<PendingFileChooser> {
        self.pending()
            .file_choosers
            .iter()
            .find(|c| c.id == id)
            .cloned()
    }

    pub fn remove_file_chooser(&self, id: &str) {
        self.pending().file_choosers.retain(|c| c.id != id);
    }

    /// One pending popup per element: a second open replaces the first.
    pub fn select_opened(&self, select: PendingSelect) {
        let mut pending = self.pending();
        pending.selects.retain(|s| s.token != select.token);
        pending.selects.push(select);
    }

    pub fn select(&self, id: &str) -> Option<PendingSelect> {
        self.pending().selects.iter().find(|s| s.id == id).cloned()
    }

    pub fn remove_select(&self, id: &str) {
        self.pending().selects.retain(|s| s.id != id);
    }

    /// A new document: the old one's choosers and selects are gone with it
    /// (a dialog closes through its own event).
    pub fn page_replaced(&self) {
        let mut pending = self.pending();
        pending.file_choosers.clear();
        pending.selects.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(id: &str, token: &str) -> PendingSelect {
        PendingSelect {
            id: id.into(),
            token: token.into(),
            multiple: false,
            option_count: 3,
        }
    }

    #[test]
    fn a_select_reopened_replaces_the_first_and_a_new_page_clears_all() {
        let prompts = Prompts::default();
        prompts.select_opened(select("sp_1", "a"));
        prompts.select_opened(select("sp_2", "a"));
        prompts.select_opened(select("sp_3", "b"));
        assert!(prompts.select("sp_1").is_none());
        assert!(prompts.select("sp_2").is_some());
        prompts.file_chooser_opened(PendingFileChooser {
            id: "fc_1".into(),
            backend_node_id: None,
            chooser_type: "open",
        });
        prompts.dialog_opened(PendingDialog {
            dialog_type: "alert".into(),
            message: "hi".into(),
            default_prompt: String::new(),
        });
        prompts.page_replaced();
        assert!(prompts.select("sp_3").is_none());
        assert!(prompts.file_chooser("fc_1").is_none());
        assert!(
            prompts.dialog().is_some(),
            "a dialog closes by its own event"
        );
        prompts.dialog_closed();
        assert!(prompts.dialog().is_none());
    }
}
