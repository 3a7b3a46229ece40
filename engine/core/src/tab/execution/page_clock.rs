//! The compositor driver's clock: `page_clock.js` in every document holds
//! the page's timers, rAF, idle callbacks, `Date` and `performance.now`
//! while the tab is frozen; this side registers it, installs it in a
//! document that predates it, and orders it to freeze and thaw.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, RemoveScriptToEvaluateOnNewDocumentParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::Value;

use super::{FrameDriver, PAGE_CLOCK_JS, PAGE_CLOCK_THAW_DELAY_MS, STEP_LIMIT};
use crate::error::{Error, Result};

impl FrameDriver {
    /// Replaces the page clock registered for new documents.
    pub(super) async fn register_page_clock(&self, start: ClockStart) -> Result<()> {
        // One registration at a time: each replaces the one before.
        let turn = self.frames.clock_registration.clone().lock_owned().await;
        self.register_page_clock_in_turn(start, turn).await
    }

    /// [`FrameDriver::register_page_clock`] with the turn already taken.
    pub(super) async fn register_page_clock_in_turn(
        &self,
        start: ClockStart,
        _turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<()> {
        let (token, previous) = {
            let mut clock = self.frames.page_clock.lock();
            (clock.token.clone(), clock.script.take())
        };
        let source = page_clock_source(&token, start);
        if let Some(targets) = self.session.frame_targets() {
            targets.set_new_document_script(source.clone()).await;
        }
        let remove = async {
            match previous.clone() {
                Some(id) => self
                    .session
                    .execute_within(
                        RemoveScriptToEvaluateOnNewDocumentParams::new(id),
                        STEP_LIMIT,
                    )
                    .await
                    .map(|_| ()),
                None => Ok(()),
            }
        };
        // One round trip for both: the session keeps their order.
        let (removed, added) = tokio::join!(
            remove,
            self.session.execute_within(
                AddScriptToEvaluateOnNewDocumentParams::new(source),
                STEP_LIMIT
            ),
        );
        let script = match added {
            Ok(added) => Some(added.result.identifier),
            // Still the old one: the next state change replaces it.
            Err(_) if removed.is_err() => previous,
            Err(e) => return Err(e),
        };
        self.frames.page_clock.lock().script = script;
        Ok(())
    }

    /// Evaluates `expression` on the page (its main world), awaiting a
    /// promise, bounded; its value, or `None` when a dialog holds the page.
    pub(super) async fn ask_page(&self, expression: String) -> Result<Option<Value>> {
        self.ask_page_within(expression, STEP_LIMIT).await
    }

    /// [`FrameDriver::ask_page`] bounded by `limit`.
    pub(super) async fn ask_page_within(
        &self,
        expression: String,
        limit: Duration,
    ) -> Result<Option<Value>> {
        let params = EvaluateParams::builder()
            .expression(expression)
            .return_by_value(true)
            .await_promise(true)
            .build()
            .map_err(Error::internal)?;
        Ok(self
            .session
            .execute_until_blocked(params, limit, None)
            .await?
            .map(|answer| answer.result.value.unwrap_or(Value::Null)))
    }

    /// Runs `order` on the current document's page clock, installing the
    /// clock first if the document predates it (a popup's first page, a
    /// page open before the engine attached). `None` when a dialog holds
    /// the page.
    pub(super) async fn order_page_clock(
        &self,
        order: &str,
        start: ClockStart,
    ) -> Result<Option<Value>> {
        let token = self.frames.page_clock.lock().token.clone();
        let expression = format!("window.__wabpClock ? window.__wabpClock.{order} : null");
        for attempt in 0..2 {
            let Some(value) = self.ask_page(expression.clone()).await? else {
                return Ok(None);
            };
            match value {
                value if !value.is_null() => return Ok(Some(value)),
                _ if attempt == 0 => {
                    let install = EvaluateParams::builder()
                        .expression(page_clock_source(&token, start))
                        .build()
                        .map_err(Error::internal)?;
                    if self
                        .session
                        .execute_until_blocked(install, STEP_LIMIT, None)
                        .await?
                        .is_none()
                    {
                        return Ok(None);
                    }
                }
                _ => {}
            }
        }
        Err(Error::internal("the page clock could not be installed"))
    }

    /// Freezes a compositor tab's page clock, at `at` (ms since the epoch)
    /// if given. `None` when a dialog holds the page.
    pub(super) async fn freeze_page_clock(&self, at: Option<f64>) -> Result<Option<()>> {
        let order = match at {
            Some(at) => format!("freeze({at:?})"),
            None => "freeze()".to_string(),
        };
        let start = ClockStart::Frozen { at_ms: at };
        let Some(answer) = self.order_page_clock(&order, start).await? else {
            return Ok(None);
        };
        let frozen_at = answer.as_f64().or(at).unwrap_or_else(crate::clock::now_ms);
        self.frames.page_clock.lock().frozen_at_ms = Some(frozen_at);
        self.register_page_clock(ClockStart::Frozen {
            at_ms: Some(frozen_at),
        })
        .await?;
        Ok(Some(()))
    }

    /// Thaws a compositor tab's page clock. The page resumes one frame later
    /// (see `page_clock.js`), from where it stopped.
    pub(super) async fn thaw_page_clock(&self, register_running: bool) -> Result<Option<()>> {
        let shift_ms = {
            let mut clock = self.frames.page_clock.lock();
            if let Some(at) = clock.frozen_at_ms.take() {
                clock.shift_ms = at - crate::clock::now_ms() - PAGE_CLOCK_THAW_DELAY_MS;
            }
            clock.shift_ms
        };
        let start = ClockStart::Running { shift_ms };
        if !register_running {
            return self
                .order_page_clock("thaw()", start)
                .await
                .map(|o| o.map(|_| ()));
        }
        let (ordered, registered) = tokio::join!(
            self.order_page_clock("thaw()", start),
            self.register_page_clock(start)
        );
        registered?;
        Ok(ordered?.map(|_| ()))
    }
}

/// How a document's page clock starts.
#[derive(Debug, Clone, Copy)]
pub(super) enum ClockStart {
    /// Frozen, its `Date.now()` at `at_ms` (or real time when unknown).
    Frozen { at_ms: Option<f64> },
    /// Running, `shift_ms` behind (negative) or ahead of real time.
    Running { shift_ms: f64 },
}

/// The page clock for a tab with this token, for documents that start as
/// `start` says.
pub(super) fn page_clock_source(token: &str, start: ClockStart) -> String {
    let (frozen, at, shift) = match start {
        ClockStart::Frozen { at_ms } => (
            "true",
            at_ms.map_or_else(|| "null".to_string(), |at| format!("{at:?}")),
            "0".to_string(),
        ),
        ClockStart::Running { shift_ms } => ("false", "null".to_string(), format!("{shift_ms:?}")),
    };
    PAGE_CLOCK_JS
        .replace("__WABP_CLOCK_TOKEN__", token)
        .replace("__WABP_CLOCK_FROZEN__", frozen)
        .replace("__WABP_CLOCK_AT__", &at)
        .replace("__WABP_CLOCK_SHIFT__", &shift)
}
