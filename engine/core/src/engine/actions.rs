//! The operations that go through the action loop (`crate::action`):
//! plugin actions, navigation, history, reload, waits; and the two that
//! run beside it under the tab's turn, `execute` and `text`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Engine, TURN_LIMIT, answers};
use crate::action::{
    ActionKind, ActionOptions, Envelope, NavigationHint, ScreenshotArea, ScrollSource,
};
use crate::caller::Caller;
use crate::clock::now_ms;
use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::events;
use crate::plugin::{ActionContext, PageHost};
use crate::tab::Tab;

/// An action's dispatch on a real tab.
pub(crate) type Dispatch = crate::action::Dispatch<Tab>;

/// How long `execute` waits for a popup its script opened to be attached.
const EXECUTE_POPUP_LIMIT: Duration = Duration::from_secs(3);

impl Engine {
    /// Runs one action through the loop (`action.rs`) and records it.
    pub async fn run_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
        kind: ActionKind,
        dispatch: Dispatch,
    ) -> Result<Envelope> {
        self.ensure_agent_for(tab_id)?;
        if options.screenshot.area == ScreenshotArea::FullPage && kind.name != "screenshot" {
            return Err(Error::invalid(
                "screenshot.area \"full_page\" is for the screenshot operation only; actions capture the viewport or a region of it",
            )
            .then(NextStep::TabScreenshot {
                tab_id: tab_id.to_string(),
            }));
        }
        let tab = self.live_tab(caller, tab_id).await?;
        let log = self.action_log.read().clone();
        let outcome = crate::action::run(
            tab.clone(),
            self.registry.clone(),
            log.clone(),
            kind,
            options.clone(),
            dispatch,
        )
        .await
        .map_err(|e| match e.code {
            // A stale ref, from any plugin: a new snapshot of this tab.
            ErrorCode::StaleRef if e.next.is_none() => e.then(NextStep::Snapshot {
                tab_id: tab.id.clone(),
            }),
            _ => e,
        });
        // The page stopped answering: repair the tab now, so the next
        // request finds it working.
        if tab.session.failure().is_none() {
            return outcome;
        }
        // The browser itself went away during the action (its connection
        // lost, a restart under way): that is the answer, not the page's
        // silence; the restart reopens the tab under its id.
        if matches!(
            self.host_of(tab.owner().as_deref()).lifecycle(),
            crate::browser_host::Lifecycle::Restarting
        ) {
            return Err(Error::new(
                ErrorCode::NotReady,
                "the browser went away during the action; the engine is starting or reattaching one and reopens the tabs under their ids",
            )
            .then(NextStep::BrowserStatus));
        }
        let recovered = match self.heal(&tab).await {
            Ok((_, recovered)) => recovered,
            Err(e) => {
                tracing::warn!(tab = %tab.id, "the tab could not be repaired: {}", e.message);
                None
            }
        };
        let mut envelope = outcome?;
        if let Some(event) = recovered {
            let virtual_time_ms = envelope
                .events
                .last()
                .map_or_else(now_ms, |e| e.virtual_time_ms);
            let stamped = events::StampedEvent {
                event,
                virtual_time_ms,
            };
            // The action is on record already: its repair joins it there.
            if let (Some(log), Some(action_id)) = (&log, &envelope.action_id)
                && let Err(e) = log
                    .add_events(action_id, &tab.id, vec![stamped.clone()])
                    .await
            {
                tracing::warn!(tab = %tab.id, "the repair could not be recorded: {}", e.message);
            }
            envelope.events.push(stamped);
        }
        Ok(envelope)
    }

    /// A plugin action by name (click, type, ..., or a folder plugin's).
    pub async fn plugin_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        name: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let handler = self.registry.action(name).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("no action named {:?}", crate::error::cut(name)),
            )
            .then(NextStep::ListActions)
        })?;
        if !params.is_object() {
            return Err(Error::invalid("action params must be a JSON object"));
        }
        let kind = ActionKind {
            name: name.to_string(),
            params: params.clone(),
            hint: NavigationHint::None,
            scroll_source: ScrollSource::for_action(name),
            over_dialog: false,
        };
        let name = name.to_string();
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                let context = ActionContext {
                    tab_id: tab.id.clone(),
                    pointer: tab.pointer().unwrap_or((0.0, 0.0)),
                };
                let host: Arc<dyn PageHost> = tab.clone();
                let result = handler.run(&name, params, context, host).await;
                // A last mouse move's answer (see `Tab::mouse`) is part of
                // the dispatch, whatever the plugin answered.
                let answered = tab.input_answered().await;
                let result = result?;
                answered?;
                Ok(result)
            })
        });
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn navigate(
        &self,
        caller: &Caller,
        tab_id: &str,
        url: &str,
        referrer: Option<&str>,
        accept_beforeunload: bool,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        crate::rules::url::check_navigation_url(url, &self.config.extra_schemes)?;
        self.config.own_addresses.check(url)?;
        let mut kind = ActionKind::new("navigate", json!({ "url": url, "referrer": referrer }));
        kind.over_dialog = true;
        let (url, referrer) = (url.to_string(), referrer.map(str::to_string));
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                match tab
                    .navigate_to(&url, referrer.as_deref(), accept_beforeunload)
                    .await
                {
                    Ok(()) => Ok(unless_held_by_beforeunload(
                        &tab,
                        json!({ "status": "navigated", "url": url }),
                        Some("or navigate with \"accept_beforeunload\": true"),
                    )),
                    // The envelope shows the error page and carries the
                    // `navigation_failed` event.
                    Err(e) if e.code == ErrorCode::NavigationFailed => {
                        Ok(json!({ "status": "failed", "url": url, "error": e.message }))
                    }
                    Err(e) => Err(e),
                }
            })
        });
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn history_step(
        &self,
        caller: &Caller,
        tab_id: &str,
        step: i64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(move |tab: Arc<Tab>| {
            Box::pin(async move {
                tab.history_step(step).await?;
                let done = if step < 0 {
                    "navigated_back"
                } else {
                    "navigated_forward"
                };
                Ok(unless_held_by_beforeunload(
                    &tab,
                    json!({ "status": done }),
                    None,
                ))
            })
        });
        let mut kind = ActionKind::new(if step < 0 { "back" } else { "forward" }, json!({}));
        kind.hint = NavigationHint::BackForward;
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    pub async fn reload(
        &self,
        caller: &Caller,
        tab_id: &str,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let dispatch: Dispatch = Box::new(|tab: Arc<Tab>| {
            Box::pin(async move {
                tab.reload_page().await?;
                Ok(unless_held_by_beforeunload(
                    &tab,
                    json!({ "status": "reloaded" }),
                    None,
                ))
            })
        });
        let mut kind = ActionKind::new("reload", json!({}));
        kind.hint = NavigationHint::Reload;
        kind.over_dialog = true;
        self.run_action(caller, tab_id, options, kind, dispatch)
            .await
    }

    /// `POST /wait`: the page runs for `ms`, then is frozen again.
    pub async fn wait(
        &self,
        caller: &Caller,
        tab_id: &str,
        ms: u64,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        if ms > 60_000 {
            return Err(Error::invalid("ms must be from 0 to 60000"));
        }
        let mut options = options.clone();
        options.wait_until.wait_type = "time".into();
        options.wait_until.params = json!({ "type": "time", "duration_ms": ms });
        options.wait_until.timeout_ms = options.wait_until.timeout_ms.max(ms + 1000);
        let dispatch: Dispatch = Box::new(move |_tab| {
            Box::pin(async move { Ok(json!({ "status": "waited", "ms": ms })) })
        });
        let kind = ActionKind::new("wait", json!({ "ms": ms }));
        self.run_action(caller, tab_id, &options, kind, dispatch)
            .await
    }

    /// `POST /wait/navigation` and `/wait/network-idle`: lets the page run
    /// until `wait_type` (`navigation`, `network_idle`) is met; an error
    /// (408) at `timeout_ms` saying what did not happen.
    pub async fn wait_for(
        &self,
        caller: &Caller,
        tab_id: &str,
        wait_type: &str,
        params: Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let mut options = options.clone();
        options.wait_until.wait_type = wait_type.into();
        let mut params = params;
        params["type"] = json!(wait_type);
        options.wait_until.params = params.clone();
        let timeout = options.wait_until.timeout_ms;
        let dispatch: Dispatch =
            Box::new(move |_tab| Box::pin(async move { Ok(json!({ "status": "waited" })) }));
        let kind = ActionKind::new(&format!("wait_{wait_type}"), params);
        let envelope = self
            .run_action(caller, tab_id, &options, kind, dispatch)
            .await?;
        if envelope.timing.wait_reason == "timeout" {
            let what = match wait_type {
                "navigation" => "no navigation of the page loaded",
                "network_idle" => "the network did not go idle",
                _ => "the wait was not met",
            };
            return Err(Error::new(
                ErrorCode::WaitTimeout,
                format!("{what} within {timeout} ms"),
            ));
        }
        Ok(envelope)
    }

    /// `POST /execute`: `{"value", "type"}`.
    pub async fn execute(
        &self,
        caller: &Caller,
        tab_id: &str,
        script: &str,
        await_promise: bool,
    ) -> Result<(answers::Evaluation, Vec<events::StampedEvent>)> {
        self.ensure_agent_for(tab_id)?;
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        if tab.pending_dialog().is_some() {
            return Err(Error::dialog_blocks(&tab.id));
        }
        tab.bump_epoch();
        // What the script sets off (a picker, a dialog, a popup, a
        // navigation) is in its answer, as in an action's envelope.
        let mut signals = tab.subscribe();
        let mut recorder = crate::action::Recorder::new(
            &tab.id,
            crate::action::NavigationHint::None,
            None,
            now_ms(),
        );
        tab.driver().thaw_for_script().await?;
        let result = tab.session.evaluate_script(script, await_promise).await;
        // Events the browser sent before the script's answer are handed on
        // first; a popup being attached is waited for (bounded).
        tab.catch_up().await;
        tab.popups_settled(EXECUTE_POPUP_LIMIT).await;
        while let Ok(signal) = signals.try_recv() {
            recorder.record(signal);
        }
        tab.driver().freeze().await?;
        // The script may have changed the page: the last frame is stale.
        tab.set_last_frame(None);
        let (value, kind) = result?;
        Ok((answers::Evaluation { value, kind }, recorder.events))
    }

    /// `POST /text`: the element's (or body's) innerText; `None` when nothing matches.
    pub async fn text(
        &self,
        caller: &Caller,
        tab_id: &str,
        selector: Option<&str>,
        element_ref: Option<&str>,
    ) -> Result<Option<String>> {
        let tab = self.live_tab(caller, tab_id).await?;
        // A ref (any element of a JSON snapshot) reads that element.
        if let Some(r) = element_ref {
            let target = crate::plugin::Target::Ref(r.to_string());
            return Ok(Some(tab.refs().text_of_target(&target).await?));
        }
        let selector =
            serde_json::to_string(&selector).map_err(|e| Error::internal(e.to_string()))?;
        let expression = format!(
            "(() => {{ const sel = {selector}; let el; try {{ el = sel === null ? document.body : document.querySelector(sel); }} catch (e) {{ return {{ error: e.message }}; }} return el ? {{ text: el.innerText ?? el.textContent ?? '' }} : {{ text: null }}; }})()"
        );
        let value = tab.session.evaluate_json(&expression).await?;
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            return Err(Error::invalid(format!("invalid selector: {error}")));
        }
        Ok(value
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string))
    }
}

/// A navigation's answer `done`, unless the page's `beforeunload` prompt
/// holds it: then says so (see [`crate::action::held_by_beforeunload`]).
fn unless_held_by_beforeunload(tab: &Tab, mut done: Value, more: Option<&str>) -> Value {
    if tab
        .pending_dialog()
        .is_some_and(|d| d.dialog_type == "beforeunload")
    {
        crate::action::held_by_beforeunload(&mut done, &tab.id, more);
    }
    done
}
