//! The tab's navigations: to a URL (the URL policy holds here too, so a
//! plugin can't open what a client may not), back and forward, reload,
//! stop; a `beforeunload` prompt accepted or left pending, and a page that
//! sits in a dialog left. Where the page is, is `Navigation`'s
//! (`navigation.rs`), written by the pump.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    GetNavigationHistoryParams, HandleJavaScriptDialogParams, NavigateParams,
    NavigateToHistoryEntryParams, ReloadParams, StopLoadingParams,
};
use serde_json::Value;
use tokio::sync::broadcast;

use super::{DIALOG_LOOP, Tab};
use crate::error::{Error, ErrorCode, Result};
use crate::events::{TabEvent, TabSignal};
use crate::plugin::WaitSignal;

/// How long a navigation may take to commit (or fail).
const COMMIT_LIMIT: Duration = Duration::from_secs(30);
/// How long the browser gets to stop a navigation that timed out.
const STOP_LIMIT: Duration = Duration::from_secs(2);
/// How long a navigate that may meet a beforeunload prompt waits, after
/// the browser's answer, for the commit (a 204 or a download has none).
const AFTER_ANSWER_GRACE: Duration = Duration::from_secs(5);
/// How long an accepted `beforeunload` prompt may take to close.
const PROMPT_CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How long leaving a page that sits in a dialog may take.
const LEAVE_DIALOG_LIMIT: Duration = Duration::from_secs(5);
/// How long the browser's answer may trail its error page.
const ERROR_TEXT_LIMIT: Duration = Duration::from_secs(3);

impl Tab {
    /// Navigates the main frame; the URL policy holds here too, so a plugin
    /// can't open what a client may not.
    /// `accept_beforeunload`: a `beforeunload` prompt the navigation raises
    /// is accepted and the navigation goes on; otherwise it stays pending.
    pub async fn navigate_to(
        &self,
        url: &str,
        referrer: Option<&str>,
        accept_beforeunload: bool,
    ) -> Result<()> {
        let (extra, own) = {
            let state = self.state.lock();
            (state.extra_schemes.clone(), state.own_addresses.clone())
        };
        crate::rules::url::check_navigation_url(url, &extra)?;
        own.check(url)?;
        let mut params = NavigateParams::new(url);
        params.referrer = referrer.map(str::to_string);
        let failed = |error: &str| {
            Error::new(
                ErrorCode::NavigationFailed,
                format!("navigation to {} failed: {error}", crate::error::cut(url)),
            )
        };
        let error_text = |answer: Result<Value>| match answer {
            Ok(r) => match r.get("errorText").and_then(Value::as_str) {
                Some(error) if !error.is_empty() => Err(failed(error)),
                _ => Ok(()),
            },
            Err(e) => Err(e),
        };
        // Chromium answers Page.navigate when the navigation commits or
        // fails (sent past chromiumoxide, which would hold the answer, and
        // the tab's next navigation, until the page has loaded); the commit
        // event may come first. The action's wait deals with the load.
        let mut signals = self.subscribe();
        // Leaving a page that sits in a dialog: the dialog goes, and so does
        // any its script opens while the navigation runs (an alert loop).
        let leaving_dialog = self.pending_dialog().is_some();
        // Where the page was asked to go, should its dialogs not let it.
        self.navigation.lock().leaving_to = leaving_dialog.then(|| url.to_string());
        if leaving_dialog {
            self.dismiss_dialog().await;
        }
        // A server that never answers holds the navigation: it gets the
        // action's time (30 s outside one), then is stopped.
        let commit_limit = self
            .session
            .action_deadline()
            .map_or(COMMIT_LIMIT, |deadline| {
                deadline.saturating_duration_since(std::time::Instant::now())
            });
        let navigator = self.navigator.clone();
        let target = self.target_id.inner().clone();
        let params = serde_json::to_value(&params).map_err(|e| Error::internal(e.to_string()))?;
        // The answer outwaits the stop below, which then ends it.
        let answer_limit = commit_limit + STOP_LIMIT;
        let mut answer =
            tokio::spawn(async move { navigator.navigate(&target, params, answer_limit).await });
        let committed = async {
            let mut answered = false;
            let mut grace_ends = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    answer = &mut answer, if !answered => {
                        let outcome = error_text(answer.map_err(|e| Error::internal(e.to_string()))?);
                        // Leaving a page held by its dialogs, or one that may
                        // raise a beforeunload prompt to accept, the browser
                        // may answer before the old page has let go: the
                        // commit counts then (or, with none, a short grace).
                        if outcome.is_err() || !(leaving_dialog || accept_beforeunload) {
                            return outcome;
                        }
                        answered = true;
                        grace_ends = tokio::time::Instant::now() + AFTER_ANSWER_GRACE;
                    }
                    _ = tokio::time::sleep_until(grace_ends), if answered && !leaving_dialog => {
                        // A prompt the signals missed still gets its answer.
                        match self.pending_dialog() {
                            Some(d) if accept_beforeunload && d.dialog_type == "beforeunload" => {
                                self.accept_beforeunload().await;
                                grace_ends = tokio::time::Instant::now() + AFTER_ANSWER_GRACE;
                            }
                            _ => return Ok(()),
                        }
                    }
                    signal = signals.recv() => match signal {
                        Ok(TabSignal::DialogOpened(d))
                            if accept_beforeunload && d.dialog_type == "beforeunload" =>
                        {
                            self.accept_beforeunload().await;
                        }
                        Ok(TabSignal::DialogOpened(d))
                            if leaving_dialog && d.dialog_type != "beforeunload" =>
                        {
                            self.dismiss_dialog().await;
                        }
                        // Not `LoadingStopped`: the page being left can
                        // stop loading after this navigation was sent, and
                        // one that ends without a new document (a download,
                        // a 204) is answered.
                        Ok(TabSignal::Navigated { error_page: false, .. })
                        // A beforeunload prompt holds the navigation: the
                        // envelope shows it.
                        | Ok(TabSignal::DialogOpened(_)) => return Ok(()),
                        Ok(TabSignal::Navigated { error_page: true, .. }) => {
                            // The error text comes with the answer, right
                            // after the error page's (tiny) load.
                            if answered {
                                return Err(failed("the browser showed its error page"));
                            }
                            return match tokio::time::timeout(ERROR_TEXT_LIMIT, &mut answer).await {
                                Ok(Ok(answer)) => error_text(answer),
                                _ => Err(failed("the browser showed its error page")),
                            };
                        }
                        Ok(TabSignal::Closed { .. }) | Err(broadcast::error::RecvError::Closed) => {
                            return Err(Error::new(
                                ErrorCode::TabNotFound,
                                format!("tab {} closed while navigating", self.id),
                            ));
                        }
                        _ => {}
                    }
                }
            }
        };
        if !leaving_dialog {
            return match tokio::time::timeout(commit_limit, committed).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    self.stop_unanswered_navigation(url).await;
                    Err(failed(
                        "the server sent no answer within the action's timeout (wait_until.timeout_ms); the navigation was stopped",
                    ))
                }
            };
        }
        // A renderer whose script keeps opening dialogs never lets the page
        // go: give up soon and let the tab be repaired.
        match tokio::time::timeout(LEAVE_DIALOG_LIMIT, committed).await {
            Ok(outcome) => outcome,
            Err(_) => {
                self.session.mark_failed(DIALOG_LOOP);
                Err(Error::timeout(format!(
                    "{DIALOG_LOOP}; the tab is repaired"
                )))
            }
        }
    }

    /// The page being left answers nothing while a navigation waits for its
    /// server: stopped, the tab stays on it, working, and says so.
    async fn stop_unanswered_navigation(&self, url: &str) {
        if self.stop_loading().await {
            let _ = self
                .signals
                .send(TabSignal::Event(TabEvent::NavigationFailed(
                    crate::events::NavigationFailed {
                        tab_id: self.id.clone(),
                        url: url.to_string(),
                        error: "stopped: no answer from the server within the action's timeout"
                            .into(),
                    },
                )));
        }
    }

    /// Stops the main frame's loading, as the browser's stop button does;
    /// whether the browser did. The wait is then told the page is loaded: a
    /// navigation stopped before its commit has no load to come.
    pub async fn stop_loading(&self) -> bool {
        match self
            .session
            .execute_within(StopLoadingParams::default(), STOP_LIMIT)
            .await
        {
            Ok(_) => {
                let _ = self.signals.send(TabSignal::Wait(WaitSignal::Load));
                true
            }
            Err(e) => {
                tracing::warn!(tab = %self.id, "loading could not be stopped: {}", e.message);
                false
            }
        }
    }

    /// Accepts the open `beforeunload` prompt and waits (bounded) for the
    /// browser to close it, so the navigation's own wait doesn't stop at it.
    async fn accept_beforeunload(&self) {
        let opened = self.prompts.dialogs_opened();
        let answered = self
            .session
            .execute(HandleJavaScriptDialogParams::new(true))
            .await
            .is_ok();
        if !answered
            || !self
                .prompts
                .dialog_answered(opened, PROMPT_CLOSE_LIMIT)
                .await
        {
            self.clear_dialog();
        }
    }

    /// Dismisses the open dialog, if the browser still has one.
    async fn dismiss_dialog(&self) {
        let _ = self
            .session
            .execute(HandleJavaScriptDialogParams::new(false))
            .await;
        self.clear_dialog();
    }

    /// Moves `step` entries through history; 400 when there is none that way.
    pub async fn history_step(&self, step: i64) -> Result<()> {
        let history = self
            .session
            .execute(GetNavigationHistoryParams::default())
            .await?;
        let target = history.result.current_index + step;
        let entry = usize::try_from(target)
            .ok()
            .and_then(|i| history.result.entries.get(i))
            .ok_or_else(|| {
                Error::invalid(if step < 0 {
                    "no back history in this tab"
                } else {
                    "no forward history in this tab"
                })
            })?;
        self.session
            .execute(NavigateToHistoryEntryParams::new(entry.id))
            .await?;
        Ok(())
    }

    pub async fn reload_page(&self) -> Result<()> {
        self.session.execute(ReloadParams::default()).await?;
        Ok(())
    }
}
