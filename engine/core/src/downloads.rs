//! Downloads: the browser saves every download into the session's download
//! folder (named by its guid while in flight, renamed to its suggested file
//! name when complete); this keeps their records for `/downloads`.

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
