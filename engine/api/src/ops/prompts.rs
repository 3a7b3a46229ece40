//! What a page asks of its user, and the page's clock: dialogs, file
//! choosers, `<select>` popups, downloads, execution control.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wabp_core::downloads::{DownloadDetail, DownloadState};
use wabp_core::engine::answers::Done;
use wabp_core::{Error, Result};

use super::{Nothing, TabRef, json, to_json, typed};
use crate::{Category, Ctx, Operation, Output, Scope};

#[derive(Deserialize, JsonSchema)]
struct DialogAccept {
    #[serde(flatten)]
    tab: TabRef,
    /// Text to answer a prompt with.
    #[serde(default)]
    prompt_text: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum DialogVerb {
    Get,
    Accept,
    Dismiss,
}

#[derive(Deserialize, JsonSchema)]
struct Dialog {
    #[serde(flatten)]
    tab: TabRef,
    /// `get` (default), `accept` or `dismiss`.
    #[serde(default)]
    action: Option<DialogVerb>,
    /// Text to answer a prompt with (accept only).
    #[serde(default)]
    prompt_text: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SetExecution {
    #[serde(flatten)]
    tab: TabRef,
    /// Freeze the page between actions (true) or let it run (false).
    paused: bool,
    /// The virtual clock's start, in seconds since the Unix epoch.
    #[serde(default)]
    #[schemars(range(min = 0))]
    initial_virtual_time: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct Execution {
    #[serde(flatten)]
    tab: TabRef,
    /// Pause (true) or run (false) the page between actions; omit to read the state.
    #[serde(default)]
    paused: Option<bool>,
    /// The virtual clock's start, in seconds since the Unix epoch.
    #[serde(default)]
    #[schemars(range(min = 0))]
    initial_virtual_time: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct FileChooser {
    /// The file chooser id from the `file_chooser` event.
    id: String,
    /// Absolute paths of the files to choose.
    #[serde(default)]
    files: Option<Vec<String>>,
    /// Where a save chooser should write (save choosers only).
    #[serde(default)]
    path: Option<String>,
    /// Cancel the chooser instead.
    #[serde(default)]
    cancel: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct ConfigureFileChooser {
    /// Files (absolute paths, under an upload folder) every file chooser of
    /// the caller's tabs gets as it opens; a single-file chooser gets the
    /// first.
    #[serde(default)]
    default_files: Option<Vec<String>>,
    /// `true` (default when files are given) answers choosers as they open;
    /// `false` leaves them pending again.
    #[serde(default)]
    auto_select: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
struct FileChooserConfig {
    auto_select: bool,
    /// The files choosers get, as absolute paths.
    default_files: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
struct PendingFileChoosers {
    file_choosers: Vec<wabp_core::events::FileChooser>,
}

#[derive(Deserialize, JsonSchema)]
struct ConfigureDownloads {
    /// Absolute folder the caller's finished downloads go to (created if
    /// missing). Hosted, it must lie in the session's downloads folder.
    #[serde(default)]
    download_path: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct WaitDownload {
    /// The download id (from `GET /downloads` or a `download_started` event).
    id: String,
    /// How long to wait for it to end, ms (default 30000, at most 300000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    timeout_ms: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct Select {
    /// The select id from the `select_open` event.
    id: String,
    /// Indices of the options to pick.
    #[serde(default)]
    indices: Option<Vec<u64>>,
    /// Close the popup without a choice.
    #[serde(default)]
    cancel: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct Picker {
    /// The picker id from the `datetime_picker_open` or `color_picker_open`
    /// event.
    id: String,
    /// The value in the input's own format: `2026-11-25` (date), `14:30`
    /// (time), `2026-11-25T14:30` (datetime-local), `2026-11` (month),
    /// `2026-W48` (week), `#3366ff` (color); empty clears a date/time input.
    #[serde(default)]
    value: Option<String>,
    /// Close the picker, leaving the input as it was.
    #[serde(default)]
    cancel: Option<bool>,
}

async fn answer_picker(ctx: Ctx, input: Picker) -> Result<Output> {
    typed(
        &ctx.engine
            .answer_picker(
                &input.id,
                input.value,
                input.cancel.unwrap_or(false),
                &ctx.caller,
            )
            .await?,
    )
}

#[derive(Deserialize, JsonSchema)]
struct DownloadList {
    /// `in_progress`, `completed`, `cancelled` or `failed`.
    #[serde(default)]
    state: Option<String>,
    /// At most this many (default 100, at most 10000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    limit: Option<u64>,
}

/// The caller's downloads, newest first.
#[derive(Serialize, JsonSchema)]
struct DownloadsList {
    downloads: Vec<wabp_core::downloads::Download>,
}

/// Where the caller's finished downloads go.
#[derive(Serialize, JsonSchema)]
struct DownloadsFolder {
    success: bool,
    /// The absolute folder.
    download_path: String,
}

#[derive(Deserialize, JsonSchema)]
struct DownloadId {
    /// The download id.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum DownloadVerb {
    List,
    Get,
    Cancel,
}

#[derive(Deserialize, JsonSchema)]
struct Downloads {
    /// `list` (default), `get` or `cancel`.
    #[serde(default)]
    action: Option<DownloadVerb>,
    /// Download id (get, cancel).
    #[serde(default)]
    id: Option<String>,
    #[serde(flatten)]
    list: DownloadList,
}

fn dialog_state(ctx: &Ctx, tab: &str) -> impl Future<Output = Result<Value>> {
    let (engine, caller, tab) = (ctx.engine.clone(), ctx.caller.clone(), tab.to_string());
    async move { super::to_json(&engine.dialog(&caller, &tab).await?) }
}

fn downloads_list(ctx: &Ctx, list: DownloadList) -> Result<Value> {
    let state = match list.state.as_deref() {
        None | Some("") => None,
        Some(text) => Some(DownloadState::parse(text).ok_or_else(|| {
            Error::invalid(format!(
                "state must be in_progress, completed, cancelled or failed, not {text:?}"
            ))
        })?),
    };
    let limit = list.limit.unwrap_or(100).clamp(1, 10_000) as usize;
    to_json(&DownloadsList {
        downloads: ctx.engine.downloads(state, limit, &ctx.caller),
    })
}

async fn set_execution(ctx: &Ctx, tab: &str, paused: bool, initial: Option<f64>) -> Result<Output> {
    if initial.is_some_and(|t| !t.is_finite() || t < 0.0) {
        return Err(Error::invalid(
            "field \"initial_virtual_time\" must be a non-negative number of seconds since the Unix epoch",
        ));
    }
    let state = ctx
        .engine
        .set_execution(&ctx.caller, tab, paused, initial)
        .await?;
    json(to_json(&state)?)
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(dialog_operations());
    all.extend(execution_operations());
    all.extend(chooser_operations());
    all.extend(download_operations());
    all
}

/// Dialogs: read, accept, dismiss.
fn dialog_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "dialog",
            "The tab's pending JavaScript dialog (alert, confirm, prompt, beforeunload), if any.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(dialog_state(&ctx, &tab).await?)
            },
        )
        .get("/tabs/{tab_id}/dialog")
        .answers::<wabp_core::engine::answers::DialogState>(),
        Operation::new(
            "dialog_accept",
            "Accept the tab's pending dialog (with text for a prompt).",
            |ctx, input: DialogAccept| async move {
                let tab = input.tab.resolve(&ctx)?;
                typed(&ctx.engine.handle_dialog(&ctx.caller, &tab, true, input.prompt_text).await?)
            },
        )
        .post("/tabs/{tab_id}/dialog/accept")
        .answers::<Done>()
        .scope(Scope::Act),
        Operation::new(
            "dialog_dismiss",
            "Dismiss the tab's pending dialog.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                typed(&ctx.engine.handle_dialog(&ctx.caller, &tab, false, None).await?)
            },
        )
        .post("/tabs/{tab_id}/dialog/dismiss")
        .answers::<Done>()
        .scope(Scope::Act),
        Operation::new(
            "dialog_tool",
            "The tab's pending JavaScript dialog (alert, confirm, prompt, beforeunload): get it, accept it or dismiss it.",
            |ctx, input: Dialog| async move {
                let tab = input.tab.resolve(&ctx)?;
                let value = match input.action.unwrap_or(DialogVerb::Get) {
                    DialogVerb::Get => dialog_state(&ctx, &tab).await?,
                    DialogVerb::Accept => to_json(
                        &ctx.engine
                            .handle_dialog(&ctx.caller, &tab, true, input.prompt_text)
                            .await?,
                    )?,
                    DialogVerb::Dismiss => {
                        to_json(&ctx.engine.handle_dialog(&ctx.caller, &tab, false, None).await?)?
                    }
                };
                json(value)
            },
        )
        .tool("browser_dialog")
        .scope(Scope::Act),
    ]
}

/// Execution control: pause and resume a page and its clock.
fn execution_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "execution",
            "The tab's execution control: enabled, paused, virtual time base, frame driver.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(to_json(&ctx.engine.execution(&ctx.caller, &tab).await?)?)
            },
        )
        .get("/tabs/{tab_id}/execution")
        .answers::<wabp_core::tab::frames::ExecutionState>(),
        Operation::new(
            "set_execution",
            "Pause or run the page between actions, and set its virtual clock.",
            |ctx, input: SetExecution| async move {
                let tab = input.tab.resolve(&ctx)?;
                set_execution(&ctx, &tab, input.paused, input.initial_virtual_time).await
            },
        )
        .post("/tabs/{tab_id}/execution")
        .answers::<wabp_core::tab::frames::ExecutionState>()
        .scope(Scope::Act),
        Operation::new(
            "execution_tool",
            "The tab's execution control: get it, or pause/unpause the page between actions (paused) and set its virtual clock (initial_virtual_time, seconds since the epoch).",
            |ctx, input: Execution| async move {
                let tab = input.tab.resolve(&ctx)?;
                match input.paused {
                    None => json(to_json(&ctx.engine.execution(&ctx.caller, &tab).await?)?),
                    Some(paused) => {
                        set_execution(&ctx, &tab, paused, input.initial_virtual_time).await
                    }
                }
            },
        )
        .tool("browser_execution")
        .scope(Scope::Act),
    ]
}

/// File choosers, selects and pickers the page opened.
fn chooser_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "file_chooser",
            "Answer a pending file chooser (a `file_chooser` event's id) with files, or cancel it.",
            |ctx, input: FileChooser| async move {
                typed(
                    &ctx.engine
                        .answer_file_chooser(
                            &input.id,
                            input.files,
                            input.path,
                            input.cancel.unwrap_or(false),
                            &ctx.caller,
                        )
                        .await?,
                )
            },
        )
        .post("/file-chooser/{id}")
        .answers::<Done>()
        .tool("browser_file_chooser")
        .scope(Scope::Act)
        .category(Category::Input),
        Operation::new(
            "pending_file_choosers",
            "The caller's file choosers waiting for an answer: id, tab, type, what they accept, whether they take several files.",
            |ctx, _: Nothing| async move {
                json(to_json(&PendingFileChoosers {
                    file_choosers: ctx.engine.pending_file_choosers(&ctx.caller),
                })?)
            },
        )
        .get("/file-chooser/pending")
        .answers::<PendingFileChoosers>(),
        Operation::new(
            "configure_file_chooser",
            "Answer the caller's file choosers as they open with these files (a `file_chooser` event with pending false, then `file_selected`), or stop doing so.",
            |ctx, input: ConfigureFileChooser| async move {
                let auto = input
                    .auto_select
                    .unwrap_or(input.default_files.is_some());
                if auto && input.default_files.is_none() {
                    return Err(Error::invalid(
                        "\"auto_select\": true needs \"default_files\"",
                    ));
                }
                let files = ctx
                    .engine
                    .configure_file_chooser(&ctx.caller, input.default_files.filter(|_| auto))?;
                json(to_json(&FileChooserConfig {
                    auto_select: files.is_some(),
                    default_files: files.unwrap_or_default(),
                })?)
            },
        )
        .post("/file-chooser/configure")
        .answers::<FileChooserConfig>()
        .scope(Scope::Act)
        .category(Category::Input),
        Operation::new(
            "select",
            "Answer a pending `<select>` popup (a `select_open` event's id) with option indices, or cancel it.",
            |ctx, input: Select| async move {
                typed(
                    &ctx.engine
                        .answer_select(
                            &input.id,
                            input.indices,
                            input.cancel.unwrap_or(false),
                            &ctx.caller,
                        )
                        .await?,
                )
            },
        )
        .post("/select/{id}")
        .answers::<Done>()
        .tool("browser_select")
        .scope(Scope::Act)
        .category(Category::Input),
        Operation::new(
            "datetime_picker",
            "Answer a pending date/time picker (a `datetime_picker_open` event's id) with a value in the input's own format, or cancel it. Sets the value and fires `input` and `change`.",
            answer_picker,
        )
        .post("/datetime-picker/{id}")
        .answers::<Done>()
        .tool("browser_datetime_picker")
        .scope(Scope::Act)
        .category(Category::Input),
        Operation::new(
            "color_picker",
            "Answer a pending colour picker (a `color_picker_open` event's id) with `#rrggbb`, or cancel it. Sets the value and fires `input` and `change`.",
            answer_picker,
        )
        .post("/color-picker/{id}")
        .answers::<Done>()
        .tool("browser_color_picker")
        .scope(Scope::Act)
        .category(Category::Input),
    ]
}

/// Downloads: list, wait, resume, cancel, where they go.
fn download_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "downloads",
            "The caller's downloads, newest first.",
            |ctx, input: DownloadList| async move { json(downloads_list(&ctx, input)?) },
        )
        .get("/downloads")
        .answers::<DownloadsList>(),
        Operation::new(
            "download",
            "One download: state, bytes, path.",
            |ctx, input: DownloadId| async move {
                typed(&ctx.engine.download(&ctx.caller, &input.id)?.detail())
            },
        )
        .get("/downloads/{id}")
        .answers::<DownloadDetail>(),
        Operation::new(
            "configure_downloads",
            "Send the caller's finished downloads to a folder (created if missing).",
            |ctx, input: ConfigureDownloads| async move {
                let path = input.download_path.ok_or_else(|| {
                    Error::invalid("\"download_path\" is required: an absolute folder")
                })?;
                let dir = ctx.engine.configure_downloads(&ctx.caller, &path)?;
                typed(&DownloadsFolder {
                    success: true,
                    download_path: dir.display().to_string(),
                })
            },
        )
        .post("/downloads/configure")
        .answers::<DownloadsFolder>()
        .scope(Scope::Act),
        Operation::new(
            "wait_download",
            "Wait for a download to end: its record (state completed, cancelled or failed), or at the timeout its record as it stands with timed_out true.",
            |ctx, input: WaitDownload| async move {
                let timeout = input.timeout_ms.unwrap_or(30_000);
                if timeout > 300_000 {
                    return Err(Error::invalid("\"timeout_ms\" must be at most 300000"));
                }
                let (download, timed_out) = ctx
                    .engine
                    .wait_download(
                        &ctx.caller,
                        &input.id,
                        std::time::Duration::from_millis(timeout),
                    )
                    .await?;
                let mut detail = download.detail();
                detail.timed_out = Some(timed_out);
                typed(&detail)
            },
        )
        .post("/downloads/{id}/wait")
        .answers::<DownloadDetail>()
        .tool("browser_wait_for_download"),
        Operation::new(
            "resume_download",
            "Start a cancelled or failed download again, from its URL in the tab it came from, under the same id (from the beginning: no partial file is kept).",
            |ctx, input: DownloadId| async move {
                typed(&ctx.engine.resume_download(&ctx.caller, &input.id).await?)
            },
        )
        .post("/downloads/{id}/resume")
        .answers::<DownloadDetail>()
        .scope(Scope::Act),
        Operation::new(
            "cancel_download",
            "Cancel a download in progress.",
            |ctx, input: DownloadId| async move {
                typed(&ctx.engine.cancel_download(&ctx.caller, &input.id).await?)
            },
        )
        .post("/downloads/{id}/cancel")
        .answers::<Done>()
        .scope(Scope::Act),
        Operation::new(
            "downloads_tool",
            "Downloads: list them (optionally by state), get one, or cancel one.",
            |ctx, input: Downloads| async move {
                let id = || {
                    input
                        .id
                        .clone()
                        .ok_or_else(|| Error::invalid("missing field \"id\" (a download id)"))
                };
                let value = match input.action.as_ref().unwrap_or(&DownloadVerb::List) {
                    DownloadVerb::List => downloads_list(&ctx, input.list)?,
                    DownloadVerb::Get => to_json(&ctx.engine.download(&ctx.caller, &id()?)?.detail())?,
                    DownloadVerb::Cancel => {
                        to_json(&ctx.engine.cancel_download(&ctx.caller, &id()?).await?)?
                    }
                };
                json(value)
            },
        )
        .tool("browser_downloads")
        .scope(Scope::Act),
    ]
}
