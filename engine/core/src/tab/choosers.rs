//! The tab's side of file choosers and `<select>` popups: a chooser is
//! announced with what its input accepts and, when the user configured
//! default files, answered at once; files are set in the renderer that
//! holds the input. What is pending is `Prompts`'s (`prompts.rs`).

use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use serde_json::{Value, json};

use super::Tab;
use super::prompts::{PendingFileChooser, PendingSelect};
use crate::error::{Error, Result};
use crate::events::{FileChooser, FileSelected, TabEvent, TabSignal};

impl Tab {
    pub(super) async fn announce_file_chooser(&self, chooser: PendingFileChooser) {
        let mut accept = String::new();
        if let Some(node) = chooser.backend_node_id {
            let session = chooser.session.as_deref();
            let resolved = self
                .session
                .raw_on(
                    session,
                    "DOM.resolveNode",
                    json!({ "backendNodeId": node.inner() }),
                )
                .await;
            if let Some(object_id) = resolved
                .ok()
                .and_then(|r| r.pointer("/object/objectId").cloned())
                && let Ok(r) = self
                    .session
                    .raw_on(
                        session,
                        "Runtime.callFunctionOn",
                        json!({
                            "objectId": object_id,
                            "functionDeclaration": "function() { return this.accept || ''; }",
                            "returnByValue": true,
                        }),
                    )
                    .await
            {
                accept = r
                    .pointer("/result/value")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
            }
        }
        let accepts = accepts_from_attribute(&accept);
        self.prompts
            .set_file_chooser_accepts(&chooser.id, accepts.clone());
        let defaults = self.state.lock().chooser_defaults.clone();
        let auto = match defaults {
            // Only an input takes files; one that takes one gets the first.
            Some(mut files) if chooser.backend_node_id.is_some() => {
                if chooser.chooser_type == "open" {
                    files.truncate(1);
                }
                match self.set_chooser_files(&chooser, files.clone()).await {
                    Ok(()) => Some(files),
                    Err(e) => {
                        tracing::warn!(tab = %self.id, "the configured files could not be set: {}", e.message);
                        None
                    }
                }
            }
            _ => None,
        };
        if auto.is_some() {
            self.prompts.remove_file_chooser(&chooser.id);
        }
        self.emit(TabSignal::Event(TabEvent::FileChooser(
            self.file_chooser_event(&chooser, accepts, auto.is_none()),
        )));
        if let Some(files) = auto {
            self.emit(TabSignal::Event(TabEvent::FileSelected(FileSelected {
                id: chooser.id.clone(),
                tab_id: self.id.clone(),
                chooser_type: chooser.chooser_type.to_string(),
                files,
            })));
        }
    }

    fn file_chooser_event(
        &self,
        chooser: &PendingFileChooser,
        accepts: Value,
        pending: bool,
    ) -> FileChooser {
        FileChooser {
            id: chooser.id.clone(),
            tab_id: self.id.clone(),
            multiple: chooser.chooser_type == "open_multiple",
            chooser_type: chooser.chooser_type.to_string(),
            accepts,
            pending,
        }
    }

    /// The file choosers waiting for an answer, as their events told them.
    pub fn pending_file_choosers(&self) -> Vec<FileChooser> {
        self.prompts
            .file_choosers()
            .iter()
            .map(|c| self.file_chooser_event(c, c.accepts.clone(), true))
            .collect()
    }

    /// Files choosers get as they open, from now on (`None`: they wait).
    pub fn set_chooser_defaults(&self, files: Option<Vec<String>>) {
        self.state.lock().chooser_defaults = files;
    }

    /// Sets `files` (absolute, checked) on the chooser's input, in the
    /// renderer that holds it.
    pub async fn set_chooser_files(
        &self,
        chooser: &PendingFileChooser,
        files: Vec<String>,
    ) -> Result<()> {
        let mut params = SetFileInputFilesParams::new(files);
        params.backend_node_id = chooser.backend_node_id;
        match &chooser.session {
            // The input is in an out-of-process frame: set them there.
            Some(session) => {
                let params =
                    serde_json::to_value(&params).map_err(|e| Error::internal(e.to_string()))?;
                self.session
                    .raw_on(Some(session), "DOM.setFileInputFiles", params)
                    .await?;
            }
            None => {
                self.session.execute(params).await?;
            }
        }
        Ok(())
    }

    pub fn pending_file_chooser(&self, id: &str) -> Option<PendingFileChooser> {
        self.prompts.file_chooser(id)
    }

    pub fn remove_file_chooser(&self, id: &str) {
        self.prompts.remove_file_chooser(id)
    }

    pub fn pending_select(&self, id: &str) -> Option<PendingSelect> {
        self.prompts.select(id)
    }

    pub fn remove_select(&self, id: &str) {
        self.prompts.remove_select(id)
    }
}

/// ABP's `accepts` list from an `accept` attribute: extensions grouped,
/// each MIME pattern on its own.
fn accepts_from_attribute(accept: &str) -> Value {
    let mut extensions = Vec::new();
    let mut groups = Vec::new();
    for token in accept.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match token.strip_prefix('.') {
            Some(ext) => extensions.push(ext.to_ascii_lowercase()),
            None => groups.push(serde_json::json!({ "description": token, "extensions": ["*"] })),
        }
    }
    if !extensions.is_empty() {
        groups.insert(
            0,
            serde_json::json!({ "description": "Files", "extensions": extensions }),
        );
    }
    if groups.is_empty() {
        groups.push(serde_json::json!({ "description": "All Files", "extensions": ["*"] }));
    }
    Value::Array(groups)
}
