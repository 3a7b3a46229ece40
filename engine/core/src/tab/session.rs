//! The page session: the only holder of a tab's CDP page. Every command a
//! tab sends goes through here and gets its bound here, so a page that stops
//! answering costs a timeout error, never a hung request; the rest of the
//! tab never touches chromiumoxide's `Page`.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::IntoEventKind;
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use chromiumoxide::listeners::EventStream;
use chromiumoxide::types::{Command, CommandResponse};

use crate::error::{Error, Result};

/// The bound of a command that names none.
pub const COMMAND_BOUND: Duration = Duration::from_secs(10);

pub struct PageSession {
    page: Page,
}

impl PageSession {
    pub fn new(page: Page) -> PageSession {
        PageSession { page }
    }

    pub fn target_id(&self) -> &TargetId {
        self.page.target_id()
    }

    /// The main frame's id, asked of the browser.
    pub async fn main_frame(&self) -> Option<String> {
        tokio::time::timeout(COMMAND_BOUND, self.page.mainframe())
            .await
            .ok()?
            .ok()
            .flatten()
            .map(|f| f.inner().clone())
    }

    /// Sends `command`, bounded by [`COMMAND_BOUND`].
    pub async fn execute<T: Command>(&self, command: T) -> Result<CommandResponse<T::Response>> {
        self.execute_within(command, COMMAND_BOUND).await
    }

    /// Sends `command`, bounded by `limit`.
    pub async fn execute_within<T: Command>(
        &self,
        command: T,
        limit: Duration,
    ) -> Result<CommandResponse<T::Response>> {
        let method = command.identifier();
        match tokio::time::timeout(limit, self.page.execute(command)).await {
            Ok(response) => Ok(response?),
            Err(_) => Err(Error::timeout(format!(
                "the page did not answer {method} within {} ms",
                limit.as_millis()
            ))),
        }
    }

    pub async fn event_listener<T: IntoEventKind + Unpin>(&self) -> Result<EventStream<T>> {
        Ok(self.page.event_listener::<T>().await?)
    }
}
