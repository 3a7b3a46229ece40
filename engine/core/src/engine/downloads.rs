//! The caller's downloads: listing, one, cancelling. (Recording them is the
//! browser-wide listener's, in `mod.rs`.)

use super::*;

impl Engine {
    /// The downloads of `user`'s tabs (`None`: requests without a userId),
    /// newest first.
    pub fn downloads(
        &self,
        state: Option<DownloadState>,
        limit: usize,
        caller: &Caller,
    ) -> Vec<Download> {
        self.downloads
            .lock()
            .unwrap()
            .iter()
            .rev()
            .filter(|d| caller.owns(d.user_id.as_deref()))
            .filter(|d| state.is_none_or(|s| d.state == s))
            .take(limit)
            .cloned()
            .collect()
    }

    /// One of `user`'s downloads; another user's is not found.
    pub fn download(&self, caller: &Caller, id: &str) -> Result<Download> {
        self.downloads
            .lock()
            .unwrap()
            .iter()
            .find(|d| d.id == id && caller.owns(d.user_id.as_deref()))
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::DownloadNotFound,
                    format!("download {id} not found"),
                )
            })
    }

    pub async fn cancel_download(&self, caller: &Caller, id: &str) -> Result<Value> {
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
        {
            let browser = self.browser.read().await;
            let browser = browser
                .as_ref()
                .ok_or_else(|| Error::new(ErrorCode::NotReady, "no browser"))?;
            browser
                .browser
                .execute(CancelDownloadParams::new(download.guid.clone()))
                .await?;
        }
        if let Some(d) = self
            .downloads
            .lock()
            .unwrap()
            .iter_mut()
            .find(|d| d.id == id)
        {
            d.state = DownloadState::Cancelled;
            d.end_time = Some(now_ms());
        }
        Ok(json!({ "success": true, "message": "Download cancelled" }))
    }
}
