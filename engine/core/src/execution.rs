//! Execution control: where the action loop thaws the page before an action
//! and freezes it after. Frame drivers implement this; the free-running one
//! lets the page run (`--no-pause`).

use async_trait::async_trait;

use crate::error::Result;
use crate::tab::Tab;

#[async_trait]
pub trait FrameDriver: Send + Sync {
    /// "free-running", "deterministic", "compositor".
    fn name(&self) -> &'static str;
    /// Lets the page run for the action.
    async fn thaw(&self, tab: &Tab) -> Result<()>;
    /// Stops the page after the wait. Returns whether the page is now frozen,
    /// i.e. whether the next capture may reuse this one.
    async fn freeze(&self, tab: &Tab) -> Result<bool>;
}

/// The page runs freely between actions; nothing is reused.
pub struct FreeRunning;

#[async_trait]
impl FrameDriver for FreeRunning {
    fn name(&self) -> &'static str {
        "free-running"
    }
    async fn thaw(&self, _tab: &Tab) -> Result<()> {
        Ok(())
    }
    async fn freeze(&self, _tab: &Tab) -> Result<bool> {
        Ok(false)
    }
}
