//! Downloads: the browser saves every download into the session's download
//! folder (named by its guid while in flight, renamed to its suggested file
//! name when complete); this keeps their records for `/downloads`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::events::{self, TabEvent};
#[cfg(test)]
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DownloadState {
    InProgress,
    Completed,
    Cancelled,
    Failed,
}

impl DownloadState {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "in_progress" => DownloadState::InProgress,
            "completed" => DownloadState::Completed,
            "cancelled" => DownloadState::Cancelled,
            "failed" => DownloadState::Failed,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Download {
    pub id: String,
    #[serde(skip)]
    pub guid: String,
    #[serde(skip)]
    pub tab_id: String,
    /// The `userId` owning the tab it came from; only that user sees it.
    #[serde(skip)]
    pub user_id: Option<String>,
    pub url: String,
    pub filename: String,
    pub path: String,
    pub state: DownloadState,
    pub bytes_received: u64,
    pub total_bytes: u64,
    pub mime_type: String,
    pub start_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
    /// `download_started` was sent (it waits for the first progress report,
    /// which carries the size).
    #[serde(skip)]
    pub announced: bool,
    /// Why it failed, when the engine stopped it (too large).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /downloads/{id}`: the record plus how far it got.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DownloadDetail {
    #[serde(flatten)]
    pub download: Download,
    /// 0 to 100 (0 while the size is unknown).
    pub percent_complete: f64,
    /// A wait for it ended at its timeout, the download still in progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

impl Download {
    /// `GET /downloads/{id}`: the record plus `percent_complete`.
    pub fn detail(&self) -> DownloadDetail {
        let percent_complete = match (self.state, self.total_bytes) {
            (DownloadState::Completed, _) => 100.0,
            (_, 0) => 0.0,
            (_, total) => (self.bytes_received as f64 / total as f64 * 100.0).floor(),
        };
        DownloadDetail {
            download: self.clone(),
            percent_complete,
            timed_out: None,
        }
    }

    pub fn started_event(&self) -> TabEvent {
        TabEvent::DownloadStarted(events::DownloadStarted {
            download_id: self.id.clone(),
            tab_id: self.tab_id.clone(),
            url: self.url.clone(),
            filename: self.filename.clone(),
            mime_type: self.mime_type.clone(),
            total_bytes: self.total_bytes,
        })
    }

    pub fn completed_event(&self) -> TabEvent {
        TabEvent::DownloadCompleted(events::DownloadCompleted {
            download_id: self.id.clone(),
            tab_id: self.tab_id.clone(),
            path: self.path.clone(),
            filename: self.filename.clone(),
            bytes_received: self.bytes_received,
            mime_type: self.mime_type.clone(),
        })
    }
}

/// The engine's downloads: the records (what began, how far it got, where
/// it went), the folder each user's finished ones go to, and the resumes
/// under way. It owns that state behind its own locks and never sees the
/// engine: the browser-wide listener hands it what the browser reports and
/// acts on what it answers (events for the tab, a download to stop).
pub struct Downloads {
    /// Where downloads land while in flight (named by their guid), and
    /// where finished ones go unless their user chose a folder.
    folder: PathBuf,
    /// A download past this many bytes is stopped and marked failed.
    max_bytes: u64,
    records: Mutex<Vec<Download>>,
    folders: Mutex<HashMap<Option<String>, PathBuf>>,
    /// Downloads being started again, by (user, URL): the next download of
    /// that URL takes over the record.
    resuming: Mutex<HashMap<(Option<String>, String), String>>,
}

/// How the browser reports a download now.
#[derive(Debug, Clone, PartialEq)]
pub enum Reported {
    InProgress,
    /// Written in full, at `file_path` when the browser says where.
    Completed {
        file_path: Option<PathBuf>,
    },
    /// Cancelled, by the engine, the page or a network failure.
    Canceled,
}

/// What a progress report leads to.
#[derive(Debug, Default)]
pub struct Progressed {
    /// The tab the download came from, to tell.
    pub tab_id: String,
    pub events: Vec<TabEvent>,
    /// Past the size limit: to be stopped in the browser and its partial
    /// file removed.
    pub too_large: Option<TooLarge>,
}

#[derive(Debug)]
pub struct TooLarge {
    pub guid: String,
    pub partial: PathBuf,
    pub user_id: Option<String>,
}

impl Downloads {
    pub fn new(folder: PathBuf, max_bytes: u64) -> Downloads {
        Downloads {
            folder,
            max_bytes,
            records: Mutex::new(Vec::new()),
            folders: Mutex::new(HashMap::new()),
            resuming: Mutex::new(HashMap::new()),
        }
    }

    /// Where downloads land while in flight.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// A download began in `tab_id` (owned by `user_id`): a new record, or
    /// the record of the download being resumed from that URL.
    pub fn began(
        &self,
        guid: &str,
        url: &str,
        suggested_name: &str,
        tab_id: String,
        user_id: Option<String>,
    ) {
        let filename = safe_file_name(suggested_name);
        let path = self.folder.join(guid).display().to_string();
        let resumed = self
            .resuming
            .lock()
            .remove(&(user_id.clone(), url.to_string()));
        let mut records = self.records.lock();
        if let Some(d) = resumed.and_then(|id| records.iter_mut().find(|d| d.id == id)) {
            d.guid = guid.to_string();
            d.state = DownloadState::InProgress;
            d.path = path;
            d.bytes_received = 0;
            d.total_bytes = 0;
            d.end_time = None;
            d.error = None;
            d.announced = false;
            return;
        }
        records.push(Download {
            id: crate::ids::sibling_id("dl", &tab_id),
            guid: guid.to_string(),
            tab_id,
            user_id,
            url: url.to_string(),
            mime_type: mime_from_name(&filename).into(),
            path,
            filename,
            state: DownloadState::InProgress,
            bytes_received: 0,
            total_bytes: 0,
            start_time: crate::clock::now_ms(),
            end_time: None,
            announced: false,
            error: None,
        });
    }

    /// A progress report of the download `guid`: its record follows, a
    /// finished file goes to its user's folder; `None` for a download this
    /// engine has no record of.
    pub fn progressed(
        &self,
        guid: &str,
        received: f64,
        total: f64,
        reported: Reported,
    ) -> Option<Progressed> {
        let mut records = self.records.lock();
        let d = records.iter_mut().find(|d| d.guid == guid)?;
        let mut out = Progressed {
            tab_id: d.tab_id.clone(),
            ..Progressed::default()
        };
        d.bytes_received = received.max(0.0) as u64;
        d.total_bytes = total.max(0.0) as u64;
        if d.state == DownloadState::InProgress
            && reported == Reported::InProgress
            && d.bytes_received.max(d.total_bytes) > self.max_bytes
        {
            d.state = DownloadState::Failed;
            d.end_time = Some(crate::clock::now_ms());
            d.error = Some(format!(
                "larger than the {} MB download limit (--max-download-mb)",
                self.max_bytes / (1024 * 1024)
            ));
            out.too_large = Some(TooLarge {
                guid: d.guid.clone(),
                partial: PathBuf::from(&d.path),
                user_id: d.user_id.clone(),
            });
        }
        if !d.announced {
            d.announced = true;
            out.events.push(d.started_event());
        }
        match reported {
            Reported::InProgress => {}
            Reported::Completed { file_path } => {
                d.state = DownloadState::Completed;
                d.end_time = Some(crate::clock::now_ms());
                let in_flight = file_path.unwrap_or_else(|| self.folder.join(&d.guid));
                let done = unique_path(&self.folder_of(d.user_id.as_deref()), &d.filename);
                // A folder on another file system takes a copy.
                let moved = std::fs::rename(&in_flight, &done).or_else(|_| {
                    std::fs::copy(&in_flight, &done).and_then(|_| std::fs::remove_file(&in_flight))
                });
                match moved {
                    Ok(()) => d.path = done.display().to_string(),
                    Err(err) => {
                        tracing::warn!(download = %d.id, "could not rename the download: {err}");
                        d.path = in_flight.display().to_string();
                    }
                }
                out.events.push(d.completed_event());
            }
            Reported::Canceled => {
                if d.state == DownloadState::InProgress {
                    // Cancelled by us or the page ends as cancelled; the
                    // browser reports a network failure the same way.
                    d.state = if d.bytes_received < d.total_bytes || d.total_bytes == 0 {
                        DownloadState::Cancelled
                    } else {
                        DownloadState::Failed
                    };
                }
                d.end_time = Some(crate::clock::now_ms());
            }
        }
        Some(out)
    }

    /// The downloads `caller` may see, newest first.
    pub fn list(
        &self,
        state: Option<DownloadState>,
        limit: usize,
        caller: &crate::caller::Caller,
    ) -> Vec<Download> {
        self.records
            .lock()
            .iter()
            .rev()
            .filter(|d| caller.owns(d.user_id.as_deref()))
            .filter(|d| state.is_none_or(|s| d.state == s))
            .take(limit)
            .cloned()
            .collect()
    }

    /// One download `caller` may see.
    pub fn get(&self, caller: &crate::caller::Caller, id: &str) -> Option<Download> {
        self.records
            .lock()
            .iter()
            .find(|d| d.id == id && caller.owns(d.user_id.as_deref()))
            .cloned()
    }

    /// The download `id` was cancelled in the browser.
    pub fn cancelled(&self, id: &str) {
        if let Some(d) = self.records.lock().iter_mut().find(|d| d.id == id) {
            d.state = DownloadState::Cancelled;
            d.end_time = Some(crate::clock::now_ms());
        }
    }

    /// Where `user`'s finished downloads go.
    pub fn folder_of(&self, user: Option<&str>) -> PathBuf {
        self.folders
            .lock()
            .get(&user.map(str::to_string))
            .cloned()
            .unwrap_or_else(|| self.folder.clone())
    }

    /// `user`'s finished downloads go to `folder` from now on.
    pub fn set_folder_of(&self, user: Option<String>, folder: PathBuf) {
        self.folders.lock().insert(user, folder);
    }

    /// The next download of `url` for `user` is `id` started again.
    pub fn expect_resume(&self, user: Option<String>, url: String, id: &str) {
        self.resuming.lock().insert((user, url), id.to_string());
    }

    /// `id` is not being started again after all.
    pub fn forget_resume(&self, id: &str) {
        self.resuming.lock().retain(|_, v| v != id);
    }
}

/// A MIME type from the file name, for the events (the browser's download
/// events don't carry one).
pub fn mime_from_name(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" | "tgz" => "application/gzip",
        "json" => "application/json",
        "csv" => "text/csv",
        "txt" | "log" => "text/plain",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "mp4" => "video/mp4",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "application/octet-stream",
    }
}

/// A file name that is safe in the download folder: no path separators, no
/// leading dots, never empty.
pub fn safe_file_name(suggested: &str) -> String {
    let name: String = suggested
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let name = name.trim().trim_start_matches('.').to_string();
    if name.is_empty() {
        "download".into()
    } else {
        name
    }
}

/// `dir/name`, or `dir/stem (n).ext` when taken.
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    let candidate = dir.join(name);
    if !candidate.exists() {
        return candidate;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.to_string(), String::new()),
    };
    (1..)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|p| !p.exists())
        .expect("an unused name exists")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::Caller;

    fn temp_folder(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("wabp-downloads-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_download_is_recorded_announced_and_filed_in_its_user_s_folder() {
        let folder = temp_folder("filed");
        let downloads = Downloads::new(folder.clone(), 1 << 20);
        let alice = Caller::user("alice").unwrap();
        downloads.began(
            "g1",
            "http://a.test/r.pdf",
            "r.pdf",
            "tab_1".into(),
            Some("alice".into()),
        );
        // Another user does not see it.
        assert!(
            downloads
                .list(None, 10, &Caller::user("bob").unwrap())
                .is_empty()
        );
        let first = downloads
            .progressed("g1", 10.0, 100.0, Reported::InProgress)
            .unwrap();
        assert_eq!(first.tab_id, "tab_1");
        assert!(matches!(first.events[..], [TabEvent::DownloadStarted(_)]));
        let again = downloads
            .progressed("g1", 50.0, 100.0, Reported::InProgress)
            .unwrap();
        assert!(again.events.is_empty(), "announced once");
        let chosen = temp_folder("chosen");
        downloads.set_folder_of(Some("alice".into()), chosen.clone());
        std::fs::write(folder.join("g1"), b"pdf").unwrap();
        let done = downloads
            .progressed("g1", 100.0, 100.0, Reported::Completed { file_path: None })
            .unwrap();
        assert!(matches!(done.events[..], [TabEvent::DownloadCompleted(_)]));
        let record = &downloads.list(None, 10, &alice)[0];
        assert_eq!(record.state, DownloadState::Completed);
        assert_eq!(record.path, chosen.join("r.pdf").display().to_string());
        assert_eq!(std::fs::read(chosen.join("r.pdf")).unwrap(), b"pdf");
        assert!(
            downloads
                .progressed("unknown", 1.0, 1.0, Reported::InProgress)
                .is_none()
        );
    }

    #[test]
    fn a_download_past_the_limit_fails_and_is_to_be_stopped() {
        let downloads = Downloads::new(temp_folder("limit"), 1000);
        downloads.began("g2", "http://a.test/big", "big", "tab_1".into(), None);
        let progressed = downloads
            .progressed("g2", 2000.0, 0.0, Reported::InProgress)
            .unwrap();
        let stop = progressed.too_large.expect("to be stopped");
        assert_eq!(stop.guid, "g2");
        let record = &downloads.list(None, 10, &Caller::anonymous())[0];
        assert_eq!(record.state, DownloadState::Failed);
        assert!(record.error.as_deref().unwrap().contains("download limit"));
        // The browser's cancel that follows leaves it failed.
        downloads
            .progressed("g2", 2000.0, 0.0, Reported::Canceled)
            .unwrap();
        assert_eq!(
            downloads.list(None, 10, &Caller::anonymous())[0].state,
            DownloadState::Failed
        );
    }

    #[test]
    fn a_resumed_download_takes_over_its_record() {
        let downloads = Downloads::new(temp_folder("resume"), 1 << 20);
        downloads.began("g3", "http://a.test/f", "f", "tab_1".into(), None);
        downloads
            .progressed("g3", 5.0, 10.0, Reported::Canceled)
            .unwrap();
        let id = downloads.list(None, 10, &Caller::anonymous())[0].id.clone();
        assert_eq!(
            downloads.get(&Caller::anonymous(), &id).unwrap().state,
            DownloadState::Cancelled
        );
        downloads.expect_resume(None, "http://a.test/f".into(), &id);
        downloads.began("g4", "http://a.test/f", "f", "tab_1".into(), None);
        let all = downloads.list(None, 10, &Caller::anonymous());
        assert_eq!(all.len(), 1, "one record, taken over");
        assert_eq!(
            (all[0].id.as_str(), all[0].guid.as_str()),
            (id.as_str(), "g4")
        );
        assert_eq!(all[0].state, DownloadState::InProgress);
        // A resume given up leaves the next download of the URL a new one.
        downloads.expect_resume(None, "http://a.test/f".into(), &id);
        downloads.forget_resume(&id);
        downloads.began("g5", "http://a.test/f", "f", "tab_1".into(), None);
        assert_eq!(downloads.list(None, 10, &Caller::anonymous()).len(), 2);
    }

    #[test]
    fn file_names_stay_in_the_folder() {
        assert_eq!(safe_file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_file_name(".hidden"), "hidden");
        assert_eq!(safe_file_name("  "), "download");
        assert_eq!(safe_file_name("report.pdf"), "report.pdf");
    }

    #[test]
    fn unique_paths_number_duplicates() {
        let dir = std::env::temp_dir().join(format!("wabp-dl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.txt"), "x").unwrap();
        assert_eq!(unique_path(&dir, "a.txt"), dir.join("a (1).txt"));
        assert_eq!(unique_path(&dir, "b.txt"), dir.join("b.txt"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn percent_complete_follows_bytes() {
        let mut d = Download {
            id: "dl_1".into(),
            guid: "g".into(),
            tab_id: "t".into(),
            user_id: None,
            url: "http://x/a.pdf".into(),
            filename: "a.pdf".into(),
            path: String::new(),
            state: DownloadState::InProgress,
            bytes_received: 50,
            total_bytes: 200,
            mime_type: mime_from_name("a.pdf").into(),
            start_time: 0.0,
            end_time: None,
            announced: false,
            error: None,
        };
        assert_eq!(d.detail().percent_complete, 25.0);
        d.state = DownloadState::Completed;
        assert_eq!(d.detail().percent_complete, 100.0);
        let shown = serde_json::to_value(d.detail()).unwrap();
        assert_eq!(shown["mime_type"], json!("application/pdf"));
        assert_eq!(shown["percent_complete"], json!(100.0));
    }
}
