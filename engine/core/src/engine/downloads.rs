//! The caller's downloads, as the engine serves them: listing, one,
//! waiting, cancelling in the browser, resuming from the tab, where they
//! go. The records themselves are `crate::downloads::Downloads`'s.

use super::Engine;
use crate::caller::Caller;
use crate::downloads::Download;
use crate::downloads::DownloadState;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::events::TabSignal;
use chromiumoxide::cdp::browser_protocol::browser::CancelDownloadParams;
use chromiumoxide::cdp::browser_protocol::browser::DownloadProgressState;
use chromiumoxide::cdp::browser_protocol::browser::EventDownloadProgress;
use chromiumoxide::cdp::browser_protocol::browser::EventDownloadWillBegin;
use std::path::PathBuf;
use std::sync::Arc;

impl Engine {
    /// The downloads of `user`'s tabs (`None`: requests without a userId),
    /// newest first.
    pub fn downloads(
        &self,
        state: Option<DownloadState>,
        limit: usize,
        caller: &Caller,
    ) -> Vec<Download> {
        self.downloads.list(state, limit, caller)
    }

    /// One of `user`'s downloads; another user's is not found.
    pub fn download(&self, caller: &Caller, id: &str) -> Result<Download> {
        self.downloads.get(caller, id).ok_or_else(|| {
            Error::new(
                ErrorCode::DownloadNotFound,
                format!("download {id} not found"),
            )
        })
    }

    pub async fn cancel_download(&self, caller: &Caller, id: &str) -> Result<super::answers::Done> {
        let download = self.download(caller, id)?;
        if download.state != DownloadState::InProgress {
            return Err(Error::invalid(format!(
                "download {id} is not in progress (state: {})",
                serde_json::to_value(download.state)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or("?")
            )));
        }
        self.cancel_in_browser(&download.guid, download.user_id.as_deref())
            .await?;
        self.downloads.cancelled(id);
        Ok(super::answers::Done {
            message: Some("Download cancelled".into()),
            ..super::answers::Done::ok()
        })
    }

    /// Stops a download in the browser context it runs in (a user's own,
    /// or the default one).
    pub(crate) async fn cancel_in_browser(&self, guid: &str, user: Option<&str>) -> Result<()> {
        let mut params = CancelDownloadParams::new(guid.to_string());
        if let Some(user) = user.filter(|u| *u != crate::caller::NOBODY) {
            params.browser_context_id = Some(self.user_context(user).await?);
        }
        self.host_of(user).execute(params).await?;
        Ok(())
    }

    /// Sends the caller's finished downloads to `path` (created if missing).
    /// Hosted (tokens, or off loopback) it must lie in the session's
    /// `downloads/` folder, as uploads keep to theirs.
    pub fn configure_downloads(&self, caller: &Caller, path: &str) -> Result<PathBuf> {
        let dir = std::path::Path::new(path);
        if !dir.is_absolute() {
            return Err(Error::invalid(format!(
                "\"download_path\" must be an absolute path, got {path:?}"
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::invalid(format!("\"download_path\" {path:?} can't be created: {e}"))
        })?;
        let canonical = std::fs::canonicalize(dir)
            .map_err(|e| Error::invalid(format!("\"download_path\" {path:?}: {e}")))?;
        if !self.config.uploads.anywhere {
            let root = std::fs::canonicalize(self.downloads_dir())
                .unwrap_or_else(|_| self.downloads_dir());
            if !canonical.starts_with(&root) {
                return Err(Error::new(
                    ErrorCode::Forbidden,
                    format!(
                        "downloads may go only to folders in {}",
                        self.downloads_dir().display()
                    ),
                ));
            }
        }
        self.downloads
            .set_folder_of(caller.user_id().map(str::to_string), canonical.clone());
        Ok(canonical)
    }

    /// Waits (at most `timeout`) for one of the caller's downloads to end;
    /// its record either way, and whether the wait ran out.
    pub async fn wait_download(
        &self,
        caller: &Caller,
        id: &str,
        timeout: std::time::Duration,
    ) -> Result<(Download, bool)> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let download = self.download(caller, id)?;
            if download.state != DownloadState::InProgress {
                return Ok((download, false));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok((download, true));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Starts a cancelled or failed download again from its URL, in the tab
    /// it came from, under the same id. Chromium keeps no partial file once
    /// a download is cancelled, so it starts from the beginning.
    pub async fn resume_download(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<crate::downloads::DownloadDetail> {
        let download = self.download(caller, id)?;
        if !matches!(
            download.state,
            DownloadState::Cancelled | DownloadState::Failed
        ) {
            return Err(Error::invalid(format!(
                "download {id} is {}; only a cancelled or failed download resumes",
                serde_json::to_value(download.state)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or("?")
            )));
        }
        let tab = self.tab(caller, &download.tab_id).map_err(|_| {
            Error::invalid(format!(
                "the tab download {id} came from is closed: open its URL again instead"
            ))
        })?;
        self.downloads
            .expect_resume(download.user_id.clone(), download.url.clone(), id);
        let url = serde_json::to_string(&download.url).unwrap_or_default();
        // The browser downloads it as it did the first time: a link to it,
        // followed with the page's cookies and origin.
        let started = tab
            .session
            .evaluate_as_page(&format!(
                "(() => {{ const a = document.createElement('a'); a.href = {url}; a.download = ''; a.style.display = 'none'; (document.body || document.documentElement).appendChild(a); a.click(); a.remove(); return true; }})()"
            ))
            .await;
        if let Err(e) = started {
            self.downloads.forget_resume(id);
            return Err(e);
        }
        let restarted = tokio::time::timeout(std::time::Duration::from_secs(5), async {
            loop {
                if let Ok(d) = self.download(caller, id)
                    && d.state == DownloadState::InProgress
                {
                    return d;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
        .await;
        match restarted {
            Ok(download) => Ok(download.detail()),
            Err(_) => {
                self.downloads.forget_resume(id);
                Err(Error::new(
                    ErrorCode::DownloadFailed,
                    format!("download {id} did not start again within 5 s"),
                ))
            }
        }
    }

    /// A download began: recorded under the tab (and user) of its frame.
    pub(super) fn on_download_begin(&self, e: &EventDownloadWillBegin) {
        let tab = self.tab_for_frame(e.frame_id.inner());
        let tab_id = tab.as_ref().map(|t| t.id.clone()).unwrap_or_default();
        // Not known to be anyone's: no caller sees it.
        let user_id = match tab {
            Some(tab) => tab.owner(),
            None => Some(crate::caller::NOBODY.to_string()),
        };
        self.downloads
            .began(&e.guid, &e.url, &e.suggested_filename, tab_id, user_id);
    }

    /// Follows a download; stops one past the size limit.
    pub(super) fn on_download_progress(self: &Arc<Self>, e: &EventDownloadProgress) {
        let reported = match e.state {
            DownloadProgressState::InProgress => crate::downloads::Reported::InProgress,
            DownloadProgressState::Completed => crate::downloads::Reported::Completed {
                file_path: e.file_path.clone().map(PathBuf::from),
            },
            DownloadProgressState::Canceled => crate::downloads::Reported::Canceled,
        };
        let Some(progressed) =
            self.downloads
                .progressed(&e.guid, e.received_bytes, e.total_bytes, reported)
        else {
            return;
        };
        if let Some(too_large) = progressed.too_large {
            let engine = self.clone();
            tokio::spawn(async move {
                let _ = engine
                    .cancel_in_browser(&too_large.guid, too_large.user_id.as_deref())
                    .await;
                let _ = std::fs::remove_file(too_large.partial);
            });
        }
        if let Some(tab) = self.any_tab(&progressed.tab_id) {
            for event in progressed.events {
                tab.emit(TabSignal::Event(event));
            }
        }
    }
}
