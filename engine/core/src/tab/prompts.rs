//! What the page is asking its user, held until a client answers: the
//! JavaScript dialog, file choosers and `<select>` popups (later: pickers).
//! Its own lock, its own state; the event pump tells it what opened and
//! closed, the engine's answers read and remove.

use parking_lot::Mutex;

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
    /// The frame target whose renderer holds the input (`None`: the
    /// page's): the files are set there.
    pub session: Option<String>,
    /// What the input accepts, once read from the page.
    pub accepts: serde_json::Value,
}

/// Where a page-side interceptor ran: the frame's script context, and the
/// frame target it is on (`None`: the page's own session). Its answer is
/// evaluated there, so a `<select>` or picker inside a frame is answered in
/// that frame.
#[derive(Debug, Clone, Default)]
pub struct Realm {
    pub session: Option<String>,
    pub context: Option<i64>,
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
    /// As the page listed them (`index`, `label`, `selected`, `disabled`),
    /// for people answering it in the web UI.
    pub options: serde_json::Value,
    pub realm: Realm,
}

/// A native date/time or colour picker the page asked for, intercepted
/// before it opened; answered by `POST /datetime-picker/{id}` or
/// `/color-picker/{id}`.
#[derive(Debug, Clone)]
pub struct PendingPicker {
    pub id: String,
    /// The page-side handle of the input.
    pub token: String,
    /// The input's type: `date`, `time`, `datetime-local`, `month`, `week`
    /// or `color`.
    pub input_type: String,
    pub realm: Realm,
}

#[derive(Debug, Default)]
struct Pending {
    pickers: Vec<PendingPicker>,
    /// Dialogs opened and not yet seen closing. The pump reads opening and
    /// closing from two event streams, whose order between them is not
    /// kept: in a storm the next dialog's opening can arrive before the
    /// last one's closing.
    open_dialogs: u32,
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
    /// Dialogs opened so far: tells the next dialog of a storm from the one
    /// just answered.
    dialogs_opened: std::sync::atomic::AtomicU64,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts {
            pending: Mutex::default(),
            dialog: watch::Sender::new(None),
            dialogs_opened: Default::default(),
        }
    }
}

impl Prompts {
    fn pending(&self) -> parking_lot::MutexGuard<'_, Pending> {
        self.pending.lock()
    }

    pub fn dialog(&self) -> Option<PendingDialog> {
        self.dialog.borrow().clone()
    }

    pub fn dialog_opened(&self, dialog: PendingDialog) {
        let mut pending = self.pending();
        pending.open_dialogs += 1;
        self.dialogs_opened
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.dialog.send_replace(Some(dialog));
    }

    /// The browser reported a dialog closed.
    pub fn dialog_close_seen(&self) {
        let mut pending = self.pending();
        pending.open_dialogs = pending.open_dialogs.saturating_sub(1);
        if pending.open_dialogs == 0 {
            self.dialog.send_replace(None);
        }
    }

    /// Counts the dialogs opened so far (see [`Prompts::dialog_answered`]).
    pub fn dialogs_opened(&self) -> u64 {
        self.dialogs_opened
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits (at most `limit`) until the dialog that was current when
    /// `opened` was read has closed: none is open, or a later one is.
    /// False if it is still open.
    pub async fn dialog_answered(&self, opened: u64, limit: std::time::Duration) -> bool {
        let mut dialog = self.dialog.subscribe();
        tokio::time::timeout(
            limit,
            dialog.wait_for(|d| d.is_none() || self.dialogs_opened() != opened),
        )
        .await
        .is_ok()
    }

    /// Waits (at most `limit`) for a dialog opened after `opened` was read.
    pub async fn next_dialog(&self, opened: u64, limit: std::time::Duration) {
        let mut dialog = self.dialog.subscribe();
        let _ = tokio::time::timeout(
            limit,
            dialog.wait_for(|d| d.is_some() && self.dialogs_opened() > opened),
        )
        .await;
    }

    /// No dialog is open, whatever the events said.
    pub fn dialog_closed(&self) {
        let mut pending = self.pending();
        pending.open_dialogs = 0;
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

    pub fn file_choosers(&self) -> Vec<PendingFileChooser> {
        self.pending().file_choosers.clone()
    }

    pub fn set_file_chooser_accepts(&self, id: &str, accepts: serde_json::Value) {
        if let Some(chooser) = self.pending().file_choosers.iter_mut().find(|c| c.id == id) {
            chooser.accepts = accepts;
        }
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

    pub fn selects(&self) -> Vec<PendingSelect> {
        self.pending().selects.clone()
    }

    pub fn pickers(&self) -> Vec<PendingPicker> {
        self.pending().pickers.clone()
    }

    pub fn remove_select(&self, id: &str) {
        self.pending().selects.retain(|s| s.id != id);
    }

    /// One pending picker per input: a second open replaces the first.
    pub fn picker_opened(&self, picker: PendingPicker) {
        let mut pending = self.pending();
        pending.pickers.retain(|p| p.token != picker.token);
        pending.pickers.push(picker);
    }

    pub fn picker(&self, id: &str) -> Option<PendingPicker> {
        self.pending().pickers.iter().find(|p| p.id == id).cloned()
    }

    pub fn remove_picker(&self, id: &str) {
        self.pending().pickers.retain(|p| p.id != id);
    }

    /// A new document: the old one's choosers, selects and pickers are gone
    /// with it (a dialog closes through its own event).
    pub fn page_replaced(&self) {
        let mut pending = self.pending();
        pending.pickers.clear();
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
            options: serde_json::Value::Null,
            realm: Default::default(),
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
            session: None,
            accepts: serde_json::Value::Null,
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

    fn alert(message: &str) -> PendingDialog {
        PendingDialog {
            dialog_type: "alert".into(),
            message: message.into(),
            default_prompt: String::new(),
        }
    }

    #[test]
    fn a_storm_s_next_dialog_survives_the_last_one_s_late_close() {
        let prompts = Prompts::default();
        prompts.dialog_opened(alert("a0"));
        // The next opening overtakes the first one's closing.
        prompts.dialog_opened(alert("a1"));
        prompts.dialog_close_seen();
        assert_eq!(prompts.dialog().map(|d| d.message).as_deref(), Some("a1"));
        prompts.dialog_close_seen();
        assert!(prompts.dialog().is_none());
        prompts.dialog_close_seen();
        prompts.dialog_opened(alert("a2"));
        assert!(
            prompts.dialog().is_some(),
            "a stray close does not count ahead"
        );
    }
}
