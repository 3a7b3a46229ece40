//! The tab's event pump: the CDP events of the page (and of its
//! out-of-process frames, forwarded) read from one stream per kind, each
//! routed to the component that owns its concern (network capture, the
//! main frame's loading, prompts, the frame driver), and told to whoever
//! listens as `TabSignal`s.

use std::sync::Arc;

use chromiumoxide::cdp::browser_protocol::emulation::EventVirtualTimeBudgetExpired;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventDomContentEventFired, EventFileChooserOpened, EventFrameNavigated,
    EventFrameRequestedNavigation, EventFrameStartedLoading, EventFrameStoppedLoading,
    EventJavascriptDialogClosed, EventJavascriptDialogOpening, EventLoadEventFired,
    EventNavigatedWithinDocument, EventWindowOpen, FileChooserOpenedMode,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EventBindingCalled, EventConsoleApiCalled, EventExceptionThrown, RemoteObject,
};
use futures::stream::{BoxStream, StreamExt};
use serde_json::Value;

use super::network::CallEnd;
use super::{
    PICKER_BINDING, PendingFileChooser, PendingPicker, PendingSelect, Realm, SELECT_BINDING, Tab,
    intercept, same_site,
};
use crate::error::Result;
use crate::events::{PendingDialog, TabEvent, TabSignal};
use crate::plugin::{RequestInfo, WaitSignal};

/// A console call's arguments as one line: strings as they are, other
/// values as the console would describe them.
fn console_text(args: &[RemoteObject]) -> String {
    args.iter()
        .map(|arg| match &arg.value {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => arg
                .description
                .clone()
                .or_else(|| arg.unserializable_value.as_ref().map(|u| u.inner().clone()))
                .unwrap_or_else(|| arg.r#type.as_ref().to_string()),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `frame` is the main frame (any frame while that is not known).
fn is_main(main_frame: &Option<String>, frame: &str) -> bool {
    main_frame.as_deref().is_none_or(|m| m == frame)
}

impl Tab {
    pub(super) async fn event_streams(&self) -> Result<Vec<BoxStream<'static, RawEvent>>> {
        let p = &self.session;
        Ok(vec![
            p.event_listener::<EventRequestWillBeSent>()
                .await?
                .map(RawEvent::RequestStarted)
                .boxed(),
            p.event_listener::<EventLoadingFinished>()
                .await?
                .map(|e| RawEvent::RequestDone {
                    id: e.request_id.inner().clone(),
                    session: None,
                })
                .boxed(),
            p.event_listener::<EventLoadingFailed>()
                .await?
                .map(RawEvent::RequestFailed)
                .boxed(),
            p.event_listener::<EventResponseReceived>()
                .await?
                .map(RawEvent::ResponseReceived)
                .boxed(),
            p.event_listener::<EventFrameRequestedNavigation>()
                .await?
                .map(RawEvent::Requested)
                .boxed(),
            p.event_listener::<EventFrameStartedLoading>()
                .await?
                .map(|e| RawEvent::StartedLoading(e.frame_id.inner().clone()))
                .boxed(),
            p.event_listener::<EventFrameStoppedLoading>()
                .await?
                .map(|e| RawEvent::StoppedLoading(e.frame_id.inner().clone()))
                .boxed(),
            p.event_listener::<EventFrameNavigated>()
                .await?
                .map(RawEvent::Navigated)
                .boxed(),
            p.event_listener::<EventNavigatedWithinDocument>()
                .await?
                .map(RawEvent::WithinDocument)
                .boxed(),
            p.event_listener::<EventDomContentEventFired>()
                .await?
                .map(|_| RawEvent::DomContentLoaded)
                .boxed(),
            p.event_listener::<EventLoadEventFired>()
                .await?
                .map(|_| RawEvent::Load)
                .boxed(),
            p.event_listener::<EventJavascriptDialogOpening>()
                .await?
                .map(RawEvent::DialogOpening)
                .boxed(),
            p.event_listener::<EventJavascriptDialogClosed>()
                .await?
                .map(|_| RawEvent::DialogClosed)
                .boxed(),
            p.event_listener::<EventFileChooserOpened>()
                .await?
                .map(|event| RawEvent::FileChooserOpened {
                    event,
                    session: None,
                })
                .boxed(),
            p.event_listener::<EventBindingCalled>()
                .await?
                .map(|event| RawEvent::BindingCalled {
                    event,
                    session: None,
                })
                .boxed(),
            p.event_listener::<chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused>()
                .await?
                .filter_map(|e| {
                    let params = serde_json::to_value(&*e).unwrap_or_default();
                    futures::future::ready(
                        intercept::PausedRequest::from_params(&params, None)
                            .map(RawEvent::RequestPaused),
                    )
                })
                .boxed(),
            p.event_listener::<EventWindowOpen>()
                .await?
                .map(RawEvent::WindowOpen)
                .boxed(),
            p.event_listener::<EventVirtualTimeBudgetExpired>()
                .await?
                .map(|_| RawEvent::BudgetExpired)
                .boxed(),
            p.event_listener::<chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed>()
                .await?
                .map(|_| RawEvent::Crashed)
                .boxed(),
            p.event_listener::<EventConsoleApiCalled>()
                .await?
                .map(|e| RawEvent::Console {
                    level: e.r#type.as_ref().to_string(),
                    text: console_text(&e.args),
                })
                .boxed(),
            p.event_listener::<EventExceptionThrown>()
                .await?
                .map(|e| {
                    let details = &e.exception_details;
                    let text = details
                        .exception
                        .as_ref()
                        .and_then(|x| x.description.clone())
                        .unwrap_or_else(|| details.text.clone());
                    RawEvent::Console {
                        level: "exception".into(),
                        text,
                    }
                })
                .boxed(),
        ])
    }

    pub(super) fn on_event(&self, event: RawEvent) {
        let mut state = self.navigation.lock();
        let main_frame = self.session.main_frame();
        let signal = match event {
            RawEvent::RequestStarted(e) => self.request_started(&mut state, &main_frame, &e),
            RawEvent::RequestDone { id, session } => {
                state.document_requests.remove(&id);
                self.capture_finished(&id, session);
                Some(TabSignal::Wait(WaitSignal::RequestFinished(id)))
            }
            RawEvent::RequestFailed(e) => self.request_failed(&mut state, &e),
            RawEvent::ResponseReceived(e) => {
                self.network.response_received(&e);
                None
            }
            RawEvent::Requested(e) => {
                if is_main(&main_frame, e.frame_id.inner()) {
                    state.pending_reason = Some(e.reason.as_ref().to_string());
                }
                None
            }
            RawEvent::StartedLoading(frame) => {
                if is_main(&main_frame, &frame) && state.main_loading.started() {
                    Some(TabSignal::Wait(WaitSignal::NavigationStarted(
                        state.url.clone(),
                    )))
                } else {
                    None
                }
            }
            RawEvent::StoppedLoading(frame) => {
                if is_main(&main_frame, &frame) {
                    // A same-document navigation read before its start.
                    if state.main_loading.stopped() {
                        let _ = self.signals.send(TabSignal::Wait(WaitSignal::Load));
                    }
                    Some(TabSignal::LoadingStopped)
                } else {
                    None
                }
            }
            RawEvent::Navigated(e) => self.navigated(&mut state, &e),
            RawEvent::WithinDocument(e) => self.within_document(&mut state, &main_frame, &e),
            RawEvent::DomContentLoaded => Some(TabSignal::Wait(WaitSignal::DomContentLoaded)),
            RawEvent::Load => {
                state.loaded_since_commit = true;
                Some(TabSignal::Wait(WaitSignal::Load))
            }
            RawEvent::DialogOpening(e) => {
                let dialog = PendingDialog {
                    dialog_type: e.r#type.as_ref().to_string(),
                    message: e.message.clone(),
                    default_prompt: e.default_prompt.clone().unwrap_or_default(),
                };
                self.prompts.dialog_opened(dialog.clone());
                let _ = self.signals.send(TabSignal::Wait(WaitSignal::DialogOpened));
                Some(TabSignal::DialogOpened(dialog))
            }
            RawEvent::DialogClosed => {
                self.prompts.dialog_close_seen();
                None
            }
            RawEvent::Console { level, text } => {
                self.console_message(&level, text);
                None
            }
            RawEvent::Crashed => {
                let cause = "the renderer crashed";
                self.session.mark_failed(cause);
                Some(TabSignal::Event(TabEvent::RendererCrashed(
                    crate::events::TabFailure {
                        tab_id: self.id.clone(),
                        cause: cause.into(),
                    },
                )))
            }
            RawEvent::BudgetExpired => {
                self.frames.set_budget_outstanding(false);
                None
            }
            RawEvent::RequestPaused(paused) => {
                if let Some(tab) = self.self_ref.upgrade() {
                    tokio::spawn(async move { tab.answer_paused(paused).await });
                }
                None
            }
            RawEvent::WindowOpen(e) => {
                state.last_window_open = Some((e.window_features.clone(), e.url.clone()));
                None
            }
            RawEvent::FileChooserOpened { event: e, session } => {
                self.file_chooser_opened(&e, session)
            }
            RawEvent::BindingCalled { event: e, session } if e.name == SELECT_BINDING => {
                self.select_opened(&e, session)
            }
            RawEvent::BindingCalled { event: e, session } if e.name == PICKER_BINDING => {
                self.picker_opened(&e, session)
            }
            RawEvent::BindingCalled { .. } => None,
        };
        drop(state);
        if let Some(signal) = signal {
            let _ = self.signals.send(signal);
        }
    }

    /// The main frame's document requests are kept: a failed one is a failed navigation.
    fn request_started(
        &self,
        state: &mut super::navigation::Navigation,
        main_frame: &Option<String>,
        e: &Arc<EventRequestWillBeSent>,
    ) -> Option<TabSignal> {
        self.capture_request(&e);
        let url = e.request.url.clone();
        let document = e.loader_id.inner() == e.request_id.inner();
        if document
            && e.frame_id
                .as_ref()
                .is_some_and(|f| is_main(main_frame, f.inner()))
        {
            state
                .document_requests
                .insert(e.request_id.inner().clone(), url.clone());
        }
        Some(TabSignal::Wait(WaitSignal::RequestStarted(RequestInfo {
            id: e.request_id.inner().clone(),
            same_site: state.url.is_empty()
                || same_site(&url, &state.url)
                || same_site(&url, &e.document_url),
            url,
            resource_type: e
                .r#type
                .as_ref()
                .map(|t| t.as_ref().to_string())
                .unwrap_or_else(|| "Other".into()),
        })))
    }

    /// A request that failed; the main document's is a failed navigation.
    fn request_failed(
        &self,
        state: &mut super::navigation::Navigation,
        e: &Arc<EventLoadingFailed>,
    ) -> Option<TabSignal> {
        let id = e.request_id.inner().clone();
        self.network.ended(
            &id,
            CallEnd::Failed {
                error: e.error_text.clone(),
            },
        );
        // Aborted: replaced by another navigation, or a download.
        if let Some(url) = state.document_requests.remove(&id)
            && e.error_text != "net::ERR_ABORTED"
        {
            let _ = self
                .signals
                .send(TabSignal::Event(TabEvent::NavigationFailed(
                    crate::events::NavigationFailed {
                        tab_id: self.id.clone(),
                        url,
                        error: e.error_text.clone(),
                    },
                )));
        }
        Some(TabSignal::Wait(WaitSignal::RequestFinished(id)))
    }

    /// A frame committed a new document; the main frame's is a navigation.
    fn navigated(
        &self,
        state: &mut super::navigation::Navigation,
        e: &Arc<EventFrameNavigated>,
    ) -> Option<TabSignal> {
        let main = e.frame.parent_id.is_none();
        self.observation.navigated(e.frame.id.inner(), main);
        if main {
            state.child_frames.clear();
        } else {
            state.child_frames.insert(e.frame.id.inner().clone());
        }
        if e.frame.parent_id.is_none() {
            self.session.set_main_frame(e.frame.id.inner().clone());
            // An error page stands for the URL that failed.
            let error_page = e.frame.unreachable_url.is_some();
            let url = match &e.frame.unreachable_url {
                Some(failed) => failed.clone(),
                None => format!(
                    "{}{}",
                    e.frame.url,
                    e.frame.url_fragment.clone().unwrap_or_default()
                ),
            };
            let first_document = state.url.is_empty() || state.url == "about:blank";
            state.main_loading.committed();
            state.loaded_since_commit = false;
            state.leaving_to = None;
            state.commits += 1;
            if first_document {
                // A new tab's first page is no news to anyone.
                state.commits_seen = state.commits;
            }
            state.url = url.clone();
            self.frames.page_replaced();
            self.prompts.page_replaced();
            let reason = state.pending_reason.take();
            // A navigation while no action runs (one a dialog's
            // answer let go, a frozen page's meta refresh) goes in
            // the next action's envelope; a new tab's first page
            // is no news.
            if !error_page && !first_document && self.idle() {
                self.note(TabEvent::Navigation(crate::events::Navigation {
                    tab_id: self.id.clone(),
                    url: url.clone(),
                    navigation_type: crate::action::navigation_type(
                        reason.as_deref(),
                        crate::action::NavigationHint::None,
                    )
                    .map(str::to_string),
                }));
            }
            let _ = self
                .signals
                .send(TabSignal::Wait(WaitSignal::NavigationCommitted(
                    url.clone(),
                )));
            Some(TabSignal::Navigated {
                url,
                reason,
                error_page,
            })
        } else {
            None
        }
    }

    /// `pushState`, `replaceState`, a fragment: the URL changes and nothing
    /// loads (see `loading.rs`).
    fn within_document(
        &self,
        state: &mut super::navigation::Navigation,
        main_frame: &Option<String>,
        e: &Arc<EventNavigatedWithinDocument>,
    ) -> Option<TabSignal> {
        if is_main(main_frame, e.frame_id.inner()) {
            if state.main_loading.within_document() {
                let _ = self.signals.send(TabSignal::Wait(WaitSignal::Load));
            }
            state.url = e.url.clone();
            state.pending_reason = None;
            Some(TabSignal::Navigated {
                url: e.url.clone(),
                reason: Some("sameDocument".into()),
                error_page: false,
            })
        } else {
            None
        }
    }

    /// A file chooser the browser intercepted, announced once its accept list is read.
    fn file_chooser_opened(
        &self,
        e: &Arc<EventFileChooserOpened>,
        session: Option<String>,
    ) -> Option<TabSignal> {
        let chooser = PendingFileChooser {
            id: crate::ids::sibling_id("fc", &self.id),
            backend_node_id: e.backend_node_id,
            chooser_type: match e.mode {
                FileChooserOpenedMode::SelectSingle => "open",
                FileChooserOpenedMode::SelectMultiple => "open_multiple",
            },
            session,
            accepts: Value::Null,
        };
        self.prompts.file_chooser_opened(chooser.clone());
        // The accept list needs a round trip to the page.
        if let Some(tab) = self.self_ref.upgrade() {
            tokio::spawn(async move { tab.announce_file_chooser(chooser).await });
        }
        Some(TabSignal::Announcing)
    }

    /// A `<select>` the page-side interceptor caught as it was opening.
    fn select_opened(
        &self,
        e: &Arc<EventBindingCalled>,
        session: Option<String>,
    ) -> Option<TabSignal> {
        let payload: Value = serde_json::from_str(&e.payload).unwrap_or(Value::Null);
        let options = payload
            .get("options")
            .cloned()
            .unwrap_or(Value::Array(vec![]));
        let select = PendingSelect {
            id: crate::ids::sibling_id("sp", &self.id),
            token: payload
                .get("token")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            multiple: payload
                .get("multiple")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            option_count: options.as_array().map_or(0, Vec::len),
            options: options.clone(),
            realm: Realm {
                session: session.clone(),
                context: Some(*e.execution_context_id.inner()),
            },
        };
        self.prompts.select_opened(select.clone());
        Some(TabSignal::Event(crate::events::TabEvent::SelectOpen(
            crate::events::SelectOpen {
                id: select.id.clone(),
                tab_id: self.id.clone(),
                multiple: select.multiple,
                options,
                pending: true,
            },
        )))
    }

    /// A date, time or colour picker the page-side interceptor caught.
    fn picker_opened(
        &self,
        e: &Arc<EventBindingCalled>,
        session: Option<String>,
    ) -> Option<TabSignal> {
        let payload: Value = serde_json::from_str(&e.payload).unwrap_or(Value::Null);
        let text = |k: &str| {
            payload
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect::<String>()
        };
        let input_type = text("type");
        let color = input_type == "color";
        let picker = PendingPicker {
            id: crate::ids::sibling_id(if color { "cp" } else { "dp" }, &self.id),
            token: text("token"),
            input_type: input_type.clone(),
            realm: Realm {
                session: session.clone(),
                context: Some(*e.execution_context_id.inner()),
            },
        };
        self.prompts.picker_opened(picker.clone());
        let event = if color {
            TabEvent::ColorPickerOpen(crate::events::ColorPickerOpen {
                id: picker.id,
                tab_id: self.id.clone(),
                value: text("value"),
                pending: true,
            })
        } else {
            TabEvent::DatetimePickerOpen(crate::events::DatetimePickerOpen {
                id: picker.id,
                tab_id: self.id.clone(),
                input_type,
                value: text("value"),
                min: text("min"),
                max: text("max"),
                step: text("step"),
                pending: true,
            })
        };
        Some(TabSignal::Event(event))
    }
}

pub(super) enum RawEvent {
    Crashed,
    /// `console.*` or an uncaught error (`level` "exception").
    Console {
        level: String,
        text: String,
    },
    RequestStarted(Arc<EventRequestWillBeSent>),
    RequestDone {
        id: String,
        /// The frame target's session that saw it (`None`: the page's),
        /// where its body is to be asked for.
        session: Option<String>,
    },
    RequestFailed(Arc<EventLoadingFailed>),
    /// Held by the Fetch domain for the interception rules.
    RequestPaused(intercept::PausedRequest),
    ResponseReceived(Arc<EventResponseReceived>),
    Requested(Arc<EventFrameRequestedNavigation>),
    StartedLoading(String),
    StoppedLoading(String),
    Navigated(Arc<EventFrameNavigated>),
    WithinDocument(Arc<EventNavigatedWithinDocument>),
    DomContentLoaded,
    Load,
    DialogOpening(Arc<EventJavascriptDialogOpening>),
    DialogClosed,
    FileChooserOpened {
        event: Arc<EventFileChooserOpened>,
        /// The frame target it opened in (`None`: the page's session).
        session: Option<String>,
    },
    /// A page-side interceptor's call.
    BindingCalled {
        event: Arc<EventBindingCalled>,
        /// The frame target it came from (`None`: the page's session).
        session: Option<String>,
    },
    WindowOpen(Arc<EventWindowOpen>),
    BudgetExpired,
}

impl RawEvent {
    /// A network event of an out-of-process frame, as the page's own would
    /// come (`frame_targets.rs` forwards them as JSON).
    pub(super) fn from_frame_target(
        session: String,
        method: &str,
        params: Value,
    ) -> Option<RawEvent> {
        Some(match method {
            "Network.requestWillBeSent" => {
                RawEvent::RequestStarted(Arc::new(serde_json::from_value(params).ok()?))
            }
            "Network.loadingFinished" => RawEvent::RequestDone {
                id: params.get("requestId")?.as_str()?.to_string(),
                session: Some(session),
            },
            "Network.loadingFailed" => {
                RawEvent::RequestFailed(Arc::new(serde_json::from_value(params).ok()?))
            }
            "Network.responseReceived" => {
                RawEvent::ResponseReceived(Arc::new(serde_json::from_value(params).ok()?))
            }
            "Fetch.requestPaused" => RawEvent::RequestPaused(
                intercept::PausedRequest::from_params(&params, Some(session))?,
            ),
            "Page.fileChooserOpened" => RawEvent::FileChooserOpened {
                event: Arc::new(serde_json::from_value(params).ok()?),
                session: Some(session),
            },
            "Runtime.bindingCalled" => RawEvent::BindingCalled {
                event: Arc::new(serde_json::from_value(params).ok()?),
                session: Some(session),
            },
            _ => return None,
        })
    }
}
