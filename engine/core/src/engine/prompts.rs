//! Answering what pages ask: the JavaScript dialog, file choosers and
//! `<select>` popups, each narrowed to the caller's tabs.

use super::TURN_LIMIT;
use super::{Engine, answers};
use crate::caller::Caller;
use crate::clock::now_ms;
use crate::engine::answers::Done;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::events;
use crate::events::TabEvent;
use crate::events::TabSignal;
use crate::tab::Tab;
use parking_lot::Mutex;
use serde_json::Value;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Files each user's file choosers get as they open
/// (`POST /file-chooser/configure`), by user id.
#[derive(Default)]
pub(crate) struct ChooserDefaults(Mutex<HashMap<Option<String>, Vec<String>>>);

impl ChooserDefaults {
    pub(crate) fn of(&self, user: Option<&str>) -> Option<Vec<String>> {
        self.0.lock().get(&user.map(str::to_string)).cloned()
    }

    /// `None` ends them.
    fn set(&self, user: Option<&str>, files: Option<Vec<String>>) {
        let mut defaults = self.0.lock();
        let user = user.map(str::to_string);
        match files {
            Some(files) => defaults.insert(user, files),
            None => defaults.remove(&user),
        };
    }
}

impl Engine {
    /// The session's own upload folder.
    pub fn uploads_dir(&self) -> PathBuf {
        self.config.session_dir.join("uploads")
    }

    /// The upload folder of `caller`, always one of its upload roots: a
    /// user's own `uploads/<userId>/` (made on first use), so one user
    /// can't upload another's files; the whole `uploads/` for requests
    /// without a user.
    pub fn uploads_dir_of(&self, caller: &Caller) -> PathBuf {
        match caller.user_id() {
            Some(user) => {
                let dir = self.uploads_dir().join(user);
                let _ = std::fs::create_dir_all(&dir);
                dir
            }
            None => self.uploads_dir(),
        }
    }

    pub async fn dialog(&self, caller: &Caller, tab_id: &str) -> Result<answers::DialogState> {
        let tab = self.tab(caller, tab_id)?;
        let dialog = tab.pending_dialog();
        Ok(answers::DialogState {
            present: dialog.is_some(),
            dialog_type: dialog.as_ref().map(|d| d.dialog_type.clone()),
            message: dialog.as_ref().map(|d| d.message.clone()),
            default_prompt: dialog.map(|d| d.default_prompt),
        })
    }

    pub async fn handle_dialog(
        &self,
        caller: &Caller,
        tab_id: &str,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Done> {
        use chromiumoxide::cdp::browser_protocol::page::HandleJavaScriptDialogParams;
        self.ensure_agent_mode()?;
        let tab = self.tab(caller, tab_id)?;
        if tab.pending_dialog().is_none() {
            return Err(Error::new(
                ErrorCode::DialogNotPresent,
                format!("no dialog is open in tab {tab_id}"),
            ));
        }
        let opened = tab.prompts.dialogs_opened();
        let mut params = HandleJavaScriptDialogParams::new(accept);
        params.prompt_text = prompt_text;
        if let Err(e) = tab.session.execute(params).await {
            // Gone meanwhile (the page navigated away, the tab closed).
            tab.clear_dialog();
            return Err(Error::new(
                ErrorCode::DialogNotPresent,
                format!(
                    "the dialog in tab {tab_id} could not be answered: {}",
                    e.message
                ),
            ));
        }
        // The pump sees it close; the next of a storm may open right after.
        if !tab
            .prompts
            .dialog_answered(opened, DIALOG_CLOSE_LIMIT)
            .await
        {
            tab.clear_dialog();
        }
        // A script that alerts in a loop opens the next one at once: give it
        // a moment, so the answer can say so.
        if tab.pending_dialog().is_none() {
            tab.prompts.next_dialog(opened, NEXT_DIALOG_GRACE).await;
        }
        let mut answer = Done::ok();
        match tab.pending_dialog() {
            Some(next) => {
                let virtual_time_ms = tab.last_frame().map_or_else(now_ms, |f| f.virtual_time_ms);
                answer.events = vec![events::StampedEvent {
                    event: TabEvent::Dialog(events::Dialog {
                        tab_id: tab.id.clone(),
                        dialog_type: next.dialog_type,
                        message: next.message,
                        default_prompt: next.default_prompt,
                        pending: true,
                    }),
                    virtual_time_ms,
                }];
            }
            // An action that opened the dialog left the page running (the
            // renderer was inside the dialog); freeze it now.
            None => {
                tab.driver().freeze().await?;
            }
        }
        Ok(answer)
    }

    // ---- file choosers, selects, downloads ----

    fn find_tab<T>(&self, find: impl Fn(&Tab) -> Option<T>) -> Option<(Arc<Tab>, T)> {
        self.tabs.find_map(find)
    }

    /// `POST /file-chooser/{id}`: files for an open chooser in one of
    /// `user`'s tabs, or cancel.
    pub async fn answer_file_chooser(
        &self,
        chooser_id: &str,
        files: Option<Vec<String>>,
        save_path: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        self.ensure_agent_mode()?;
        let (tab, chooser) = self
            .find_tab(|t| {
                caller
                    .owns(t.owner().as_deref())
                    .then(|| t.pending_file_chooser(chooser_id))
                    .flatten()
            })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::FileChooserNotPresent,
                    format!("File chooser {chooser_id} not found or already closed"),
                )
            })?;
        if cancel {
            tab.remove_file_chooser(chooser_id);
            let event = report_event(
                &tab,
                TabEvent::FileChooserCancelled(events::FileChooserCancelled {
                    id: chooser.id.clone(),
                    tab_id: tab.id.clone(),
                    chooser_type: chooser.chooser_type.to_string(),
                }),
            )
            .await;
            return Ok(Done::cancelled().with_events(vec![event]));
        }
        if save_path.is_some() {
            return Err(Error::invalid(format!(
                "file chooser {chooser_id} is an {} chooser: send \"files\", not \"path\"",
                chooser.chooser_type
            )));
        }
        let files = files.ok_or_else(|| {
            Error::invalid("send \"files\" (a list of paths) or \"cancel\": true")
        })?;
        // A picker a script opened (`showOpenFilePicker`, `showSaveFilePicker`)
        // has no input element to take the files.
        if chooser.backend_node_id.is_none() {
            return Err(Error::invalid(format!(
                "file chooser {chooser_id} was opened by the page's script, not by an <input type=file>: it takes no files; cancel it"
            )));
        }
        if files.is_empty() {
            return Err(Error::invalid("\"files\" must list at least one path"));
        }
        if files.len() > 1 && chooser.chooser_type == "open" {
            return Err(Error::invalid(format!(
                "file chooser {chooser_id} takes one file, got {}",
                files.len()
            )));
        }
        let absolute = files
            .iter()
            .map(|file| self.uploadable_file(caller, file))
            .collect::<Result<Vec<_>>>()?;
        tab.set_chooser_files(&chooser, absolute.clone()).await?;
        tab.remove_file_chooser(chooser_id);
        tab.set_last_frame(None);
        let event = report_event(
            &tab,
            TabEvent::FileSelected(events::FileSelected {
                id: chooser.id.clone(),
                tab_id: tab.id.clone(),
                chooser_type: chooser.chooser_type.to_string(),
                files: absolute,
            }),
        )
        .await;
        Ok(Done::ok().with_events(vec![event]))
    }

    /// The absolute path of a file `caller` may upload: under an upload
    /// root, a readable file, not in the session folder's private parts.
    pub(crate) fn uploadable_file(&self, caller: &Caller, file: &str) -> Result<String> {
        self.check_upload_root(caller, file)?;
        let path = std::path::Path::new(file);
        let meta = std::fs::metadata(path).map_err(|_| {
            Error::new(
                ErrorCode::FileNotFound,
                format!("file {file} does not exist"),
            )
        })?;
        if !meta.is_file() || std::fs::File::open(path).is_err() {
            return Err(Error::new(
                ErrorCode::FileNotReadable,
                format!("file {file} exists but cannot be read"),
            ));
        }
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // The history, screenshots and browser profile (cookies) of every
        // user live there; downloads may go back up.
        let inside = |dir: &std::path::Path| {
            std::fs::canonicalize(dir).is_ok_and(|dir| canonical.starts_with(dir))
        };
        if inside(&self.config.session_dir)
            && !inside(&self.downloads_dir())
            && !inside(&self.uploads_dir())
        {
            return Err(Error::invalid(format!(
                "file {file} is in the engine's session folder, whose files can't be uploaded"
            )));
        }
        Ok(canonical.display().to_string())
    }

    /// The caller's file choosers waiting for an answer, in every tab.
    pub fn pending_file_choosers(&self, caller: &Caller) -> Vec<events::FileChooser> {
        self.tabs
            .of(caller)
            .iter()
            .flat_map(|t| t.pending_file_choosers())
            .collect()
    }

    /// Files the caller's file choosers get as they open (`None`: they stay
    /// pending); checked now like an answer's, for this user's tabs and the
    /// ones it opens later.
    pub fn configure_file_chooser(
        &self,
        caller: &Caller,
        default_files: Option<Vec<String>>,
    ) -> Result<Option<Vec<String>>> {
        let files = match default_files {
            Some(files) if files.is_empty() => {
                return Err(Error::invalid(
                    "\"default_files\" must list at least one path when \"auto_select\" is true",
                ));
            }
            Some(files) => Some(
                files
                    .iter()
                    .map(|file| self.uploadable_file(caller, file))
                    .collect::<Result<Vec<_>>>()?,
            ),
            None => None,
        };
        self.chooser_defaults.set(caller.user_id(), files.clone());
        for tab in self.tabs.of(caller) {
            tab.set_chooser_defaults(files.clone());
        }
        Ok(files)
    }

    /// 403 unless `file` lies under an upload root, saying nothing of
    /// whether it exists.
    fn check_upload_root(&self, caller: &Caller, file: &str) -> Result<()> {
        let uploads = &self.config.uploads;
        if uploads.anywhere {
            return Ok(());
        }
        let roots: Vec<PathBuf> = std::iter::once(self.uploads_dir_of(caller))
            .chain(uploads.dirs.iter().cloned())
            .collect();
        // Resolved, so neither `..` nor a symlink leads out. A missing file
        // is placed by its folder (inside a root it may be said to be
        // missing); one whose folder doesn't resolve is refused like one
        // outside.
        let path = std::path::Path::new(file);
        let resolved =
            std::fs::canonicalize(path).or_else(|e| match (path.parent(), path.file_name()) {
                (Some(dir), Some(name)) => std::fs::canonicalize(dir).map(|d| d.join(name)),
                _ => Err(e),
            });
        let inside = resolved.is_ok_and(|path| {
            roots
                .iter()
                .any(|root| std::fs::canonicalize(root).is_ok_and(|root| path.starts_with(root)))
        });
        if inside {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Forbidden,
            format!(
                "{} is not under an upload folder; files can be uploaded only from {}",
                crate::error::cut(file),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    }

    /// `POST /select/{id}`: picks options of an intercepted `<select>`.
    pub async fn answer_select(
        &self,
        popup_id: &str,
        indices: Option<Vec<u64>>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        self.ensure_agent_mode()?;
        let (tab, select) = self
            .find_tab(|t| {
                caller
                    .owns(t.owner().as_deref())
                    .then(|| t.pending_select(popup_id))
                    .flatten()
            })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!("Select popup {popup_id} not found or already closed"),
                )
            })?;
        let token =
            serde_json::to_string(&select.token).map_err(|e| Error::internal(e.to_string()))?;
        if cancel {
            tab.remove_select(popup_id);
            tab.evaluate_in_realm(
                &select.realm,
                &format!("window.__wabpSelect && window.__wabpSelect.cancel({token})"),
            )
            .await?;
            return Ok(Done::cancelled());
        }
        let indices = indices.ok_or_else(|| {
            Error::invalid("send \"indices\" (a list of option indices) or \"cancel\": true")
        })?;
        if indices.is_empty() {
            return Err(Error::invalid("\"indices\" must list at least one option"));
        }
        if !select.multiple && indices.len() > 1 {
            return Err(Error::invalid(format!(
                "select {popup_id} takes one option, got {}",
                indices.len()
            )));
        }
        if let Some(bad) = indices.iter().find(|i| **i as usize >= select.option_count) {
            return Err(Error::invalid(format!(
                "option index {bad} is out of range: the select has {} options",
                select.option_count
            )));
        }
        let _turn = tab.turn(TURN_LIMIT).await?;
        let result = tab
            .evaluate_in_realm(&select.realm, &format!(
                "window.__wabpSelect ? window.__wabpSelect.apply({token}, {}) : {{ error: 'the page was replaced' }}",
                json!(indices)
            ))
            .await?;
        // A choice the page would not take leaves the popup open.
        if let Some(refused) = result.get("refused").and_then(Value::as_str) {
            return Err(Error::invalid(format!("select {popup_id}: {refused}")));
        }
        tab.remove_select(popup_id);
        tab.set_last_frame(None);
        if let Some(error) = result.get("error").and_then(Value::as_str) {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("Select popup {popup_id}: {error}"),
            ));
        }
        Ok(Done::ok().with_value(result.get("value").cloned()))
    }

    /// `POST /datetime-picker/{id}` and `/color-picker/{id}`: a value, in
    /// the input's own format, for a picker one of the caller's tabs asked
    /// for, or cancel. Sets it and fires `input` and `change`.
    pub async fn answer_picker(
        &self,
        picker_id: &str,
        value: Option<String>,
        cancel: bool,
        caller: &Caller,
    ) -> Result<Done> {
        self.ensure_agent_mode()?;
        let (tab, picker) = self
            .find_tab(|t| {
                caller
                    .owns(t.owner().as_deref())
                    .then(|| t.prompts.picker(picker_id))
                    .flatten()
            })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!("picker {picker_id} not found or already closed"),
                )
            })?;
        let token =
            serde_json::to_string(&picker.token).map_err(|e| Error::internal(e.to_string()))?;
        if cancel {
            tab.prompts.remove_picker(picker_id);
            tab.evaluate_in_realm(
                &picker.realm,
                &format!("window.__wabpPicker && window.__wabpPicker.cancel({token})"),
            )
            .await?;
            return Ok(Done::cancelled());
        }
        let value = value.ok_or_else(|| {
            Error::invalid(format!(
                "send \"value\" ({}) or \"cancel\": true",
                picker_format(&picker.input_type)
            ))
        })?;
        let colour_ok = value.len() == 7
            && value.starts_with('#')
            && value[1..].chars().all(|c| c.is_ascii_hexdigit());
        if picker.input_type == "color" && !colour_ok {
            return Err(Error::invalid(format!(
                "{:?} is not a colour: use {}",
                crate::error::cut(&value),
                picker_format("color")
            )));
        }
        let literal = serde_json::to_string(&value).map_err(|e| Error::internal(e.to_string()))?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        let result = tab
            .evaluate_in_realm(&picker.realm, &format!(
                "window.__wabpPicker ? window.__wabpPicker.apply({token}, {literal}) : {{ error: 'the page was replaced' }}"
            ))
            .await?;
        tab.set_last_frame(None);
        if result.get("invalid").is_some() {
            return Err(Error::invalid(format!(
                "{:?} is not a valid {} value: use {}",
                crate::error::cut(&value),
                picker.input_type,
                picker_format(&picker.input_type)
            )));
        }
        tab.prompts.remove_picker(picker_id);
        if let Some(error) = result.get("error").and_then(Value::as_str) {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("picker {picker_id}: {error}"),
            ));
        }
        Ok(Done::ok().with_value(result.get("value").cloned()))
    }
}

/// The value format of each picker type, for error messages.
fn picker_format(input_type: &str) -> &'static str {
    match input_type {
        "date" => "YYYY-MM-DD, e.g. 2026-11-25",
        "time" => "HH:MM or HH:MM:SS, e.g. 14:30",
        "datetime-local" => "YYYY-MM-DDTHH:MM, e.g. 2026-11-25T14:30",
        "month" => "YYYY-MM, e.g. 2026-11",
        "week" => "YYYY-Www, e.g. 2026-W48",
        "color" => "#rrggbb, e.g. #3366ff",
        _ => "the input's own value format",
    }
}

/// How long the pump may take to see an answered dialog close.
const DIALOG_CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How long an answered dialog's script has to open the next one.
const NEXT_DIALOG_GRACE: Duration = Duration::from_millis(30);

/// An event that happens outside any action (answering a file chooser): sent
/// to whoever watches the tab and returned in the response, stamped with the
/// page's clock.
async fn report_event(tab: &Tab, event: TabEvent) -> events::StampedEvent {
    let virtual_time_ms = tab
        .session
        .evaluate_json("Date.now()")
        .await
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or_else(now_ms);
    tab.emit(TabSignal::Event(event.clone()));
    events::StampedEvent {
        event,
        virtual_time_ms,
    }
}
