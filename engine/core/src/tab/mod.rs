//! One browser tab: its CDP page, the event pump that turns CDP events into
//! signals, and the host capabilities action plugins use.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::emulation::SetTouchEmulationEnabledParams;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::network::{
    EventRequestWillBeSent, GetResponseBodyParams, RequestId,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, SetInterceptFileChooserDialogParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    GetNavigationHistoryParams, HandleJavaScriptDialogParams, NavigateParams,
    NavigateToHistoryEntryParams, ReloadParams, StopLoadingParams,
};
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use chromiumoxide::cdp::js_protocol::runtime::AddBindingParams;
use futures::stream::StreamExt;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

pub(crate) mod capture;
pub(crate) mod execution;
pub(crate) mod frame_targets;
pub mod frames;
mod host;
mod input;
pub(crate) mod intercept;
mod loading;
mod navigation;
pub(crate) mod network;
pub(crate) mod observation;
pub(crate) mod prompts;
mod pump;
pub(crate) mod refs;
pub(crate) mod session;
pub mod snapshot;

pub use execution::FrameDriver;
pub use frames::Frames;
use observation::Observation;
pub use prompts::{PendingFileChooser, PendingPicker, PendingSelect, Prompts, Realm};
pub use refs::PageRefs;
pub use session::PageSession;

use crate::capture::CachedFrame;
use crate::error::{Error, ErrorCode, Result};
use crate::events::{PendingDialog, TabEvent, TabSignal};
use crate::keys::key_definition;
use crate::network::NetworkCall;
use crate::plugin::{
    ElementBox, HostError, HostResult, Located, Modifiers, MouseButton, PageHost, Rect,
    RequestInfo, Target, ViewportInfo, WaitSignal,
};
use frames::DriverKind;
use network::{BodyFetch, CallEnd, NetworkCapture};

#[derive(Debug, Default)]
struct TabState {
    /// The `userId` whose browser context holds this tab.
    owner: Option<String>,
    /// Shown as pinned in the tab list (kept at its front).
    pinned: bool,
    /// The mute script's id while the tab is muted.
    mute_script: Option<String>,
    /// Files a file chooser gets as it opens (checked when configured).
    chooser_defaults: Option<Vec<String>>,
    /// The Fetch domain pauses this tab's requests (a rule may apply).
    intercepting: bool,
    /// `--allow-scheme`: what `navigate_to` accepts besides the web's schemes.
    extra_schemes: Vec<String>,
    /// `--record-secrets`: network calls are shown with their credentials.
    record_secrets: bool,
}

pub struct Tab {
    pub id: String,
    /// Sends this tab's `Page.navigate` (see `navigator.rs`).
    navigator: Arc<crate::navigator::Navigator>,
    pub target_id: TargetId,
    /// The only holder of the CDP page; every command is bounded there.
    pub session: Arc<PageSession>,
    /// One action at a time per tab, reads beside its waits; other tabs
    /// run in parallel.
    turn: crate::turn::TabTurn,
    /// The pointer, the buttons and keys held (`input.rs`).
    input: input::Input,
    /// The main frame's navigation: URL, commits, loading (`navigation.rs`).
    navigation: Mutex<navigation::Navigation>,
    /// What was drawn and the frame driver's state.
    pub frames: Arc<Frames>,
    /// The tab that opened this one, for popups.
    pub opener: Option<String>,
    state: Mutex<TabState>,
    /// Dialogs, file choosers and selects waiting for an answer.
    pub prompts: Prompts,
    /// The ref table and the cached snapshot.
    observation: Observation,
    self_ref: Weak<Tab>,
    /// The tab's captured calls and the bodies being fetched.
    network: NetworkCapture,
    signals: broadcast::Sender<TabSignal>,
    pump: Mutex<Option<JoinHandle<()>>>,
    /// Asks the pump to hand on every event already received (see
    /// [`Tab::catch_up`]).
    catch_up: tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>,
    /// Events that happened outside any action, for the next one's envelope.
    noted: Mutex<Vec<TabEvent>>,
    /// A mouse move sent ahead of its answer (see [`Tab::mouse`]). Kept
    /// here while it is awaited, so that a waiter that gives up leaves it
    /// to the next.
    move_unanswered: tokio::sync::Mutex<Option<JoinHandle<Result<()>>>>,
    /// Popups this tab opened that are still being attached: the action
    /// that opened them waits (bounded) for their `popup` events.
    popups_adopting: tokio::sync::watch::Sender<usize>,
    /// The engine's interception rules (see `intercept.rs`).
    interception: Mutex<Option<Arc<crate::intercept::Interception>>>,
}

/// A popup of `opener` being attached; dropping it says it is done.
pub struct PopupAdoption(Arc<Tab>);

impl Drop for PopupAdoption {
    fn drop(&mut self) {
        self.0
            .popups_adopting
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        if let Some(pump) = self.pump.lock().take() {
            pump.abort();
        }
    }
}

/// Same site, approximately: the last two labels of the host name match (or
/// the hosts are equal, for IPs and single-label hosts).
pub fn same_site(a: &str, b: &str) -> bool {
    fn site(url: &str) -> Option<String> {
        let rest = url.split_once("://")?.1;
        let host = rest.split(['/', '?', '#']).next()?.rsplit('@').next()?;
        let host = host
            .rsplit_once(':')
            .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
            .map_or(host, |(h, _)| h);
        if host.parse::<std::net::IpAddr>().is_ok() || !host.contains('.') {
            return Some(host.to_ascii_lowercase());
        }
        let labels: Vec<&str> = host.split('.').collect();
        Some(
            labels[labels.len().saturating_sub(2)..]
                .join(".")
                .to_ascii_lowercase(),
        )
    }
    matches!((site(a), site(b)), (Some(x), Some(y)) if x == y)
}

impl Tab {
    /// Wraps a page, sets up the interceptions (file chooser, `<select>`)
    /// and starts its event pump.
    pub async fn attach(
        id: String,
        page: Page,
        kind: DriverKind,
        opener: Option<String>,
        navigator: Arc<crate::navigator::Navigator>,
    ) -> Result<Arc<Tab>> {
        // Roomy: an action reads its signals only after dispatch, and network
        // traffic shares the channel with envelope events.
        let (signals, _) = broadcast::channel(8192);
        let prompts = Prompts::default();
        let session = Arc::new(PageSession::open(page, id.clone(), prompts.watch_dialog()).await);
        let target_id = session.target_id().clone();
        let (catch_up, mut catch_up_asked) = tokio::sync::mpsc::unbounded_channel();
        let tab = Arc::new_cyclic(|self_ref| Tab {
            id,
            target_id,
            session,
            turn: crate::turn::TabTurn::default(),
            input: Default::default(),
            navigation: Default::default(),
            frames: Arc::new(Frames::new(kind)),
            opener,
            state: Mutex::new(TabState::default()),
            signals,
            pump: Mutex::new(None),
            catch_up,
            self_ref: self_ref.clone(),
            network: NetworkCapture::default(),
            prompts,
            observation: Observation::default(),
            noted: Mutex::new(Vec::new()),
            move_unanswered: tokio::sync::Mutex::new(None),
            navigator,
            popups_adopting: tokio::sync::watch::Sender::new(0),
            interception: Mutex::new(None),
        });
        let events = tab.event_streams().await?;
        let weak = Arc::downgrade(&tab);
        let pump = tokio::spawn(async move {
            let mut events = futures::stream::select_all(events);
            loop {
                tokio::select! {
                    // Events first: a catch-up is answered only once no
                    // stream holds one. The connection queues each event for
                    // its stream as it reads it and hands the queue over on
                    // its next turn, right after the answer that led to the
                    // catch-up: what the browser sent before that answer is
                    // then handed on (the wait's 2 ms after callbacks covers
                    // the rest).
                    biased;
                    event = events.next() => {
                        let Some(event) = event else { break };
                        let Some(tab) = weak.upgrade() else { break };
                        tab.on_event(event);
                    }
                    Some(answer) = catch_up_asked.recv() => {
                        let _ = answer.send(());
                    }
                }
            }
        });
        *tab.pump.lock() = Some(pump);
        if tab.navigator.site_isolation() {
            let targets = crate::tab::frame_targets::FrameTargets::follow(
                tab.navigator.clone(),
                &tab.id,
                tab.target_id.inner(),
            )
            .await?;
            // The page's interceptors run in them too; their network events
            // and interceptor calls join the page's.
            targets.set_tab_setup(
                vec![
                    ("Runtime.enable", json!({})),
                    (
                        "Page.setInterceptFileChooserDialog",
                        json!({ "enabled": true }),
                    ),
                    ("Runtime.addBinding", json!({ "name": SELECT_BINDING })),
                    ("Runtime.addBinding", json!({ "name": PICKER_BINDING })),
                    (
                        "Page.addScriptToEvaluateOnNewDocument",
                        json!({ "source": SELECT_JS }),
                    ),
                ],
                vec![SELECT_JS.to_string()],
            );
            let mut forwarded = targets.forwarded_events();
            let weak = Arc::downgrade(&tab);
            tokio::spawn(async move {
                while let Some((session, method, params)) = forwarded.recv().await {
                    let Some(tab) = weak.upgrade() else { break };
                    if let Some(event) = pump::RawEvent::from_frame_target(session, &method, params)
                    {
                        tab.on_event(event);
                    }
                }
            });
            tab.session.set_frame_targets(targets);
        }
        tab.install_interceptions().await?;
        tab.driver().prepare().await?;
        Ok(tab)
    }

    /// File choosers come back as events instead of native dialogs, and
    /// `<select>` popups are caught page-side before they open.
    async fn install_interceptions(&self) -> Result<()> {
        // chromiumoxide turns touch emulation on for every page; it makes the
        // page look like a touch device and delays each mouse event's ack.
        self.session
            .execute(SetTouchEmulationEnabledParams::new(false))
            .await?;
        self.session
            .execute(SetInterceptFileChooserDialogParams::new(true))
            .await?;
        // For `Inspector.targetCrashed`.
        self.session
            .execute(chromiumoxide::cdp::browser_protocol::inspector::EnableParams::default())
            .await?;
        self.session
            .execute(AddBindingParams::new(SELECT_BINDING))
            .await?;
        self.session
            .execute(AddBindingParams::new(PICKER_BINDING))
            .await?;
        self.session
            .execute(AddScriptToEvaluateOnNewDocumentParams::new(SELECT_JS))
            .await?;
        // The current document predates the script.
        let _ = self.session.evaluate_json(SELECT_JS).await;
        Ok(())
    }

    /// This tab's turn for an action (or anything that thaws it), waiting at
    /// most `limit` for the one before to finish.
    pub async fn turn(&self, limit: Duration) -> Result<crate::turn::ActionTurn<'_>> {
        self.turn.take(limit).await
    }

    /// A read's turn (a screenshot): this tab's turn, or beside an action
    /// that only waits for the page (see `turn.rs`).
    pub async fn read_turn(&self, limit: Duration) -> Result<crate::turn::ReadTurn<'_>> {
        self.turn.read(limit).await
    }

    /// No action (or anything that thaws the page) runs on this tab now.
    pub fn idle(&self) -> bool {
        self.turn.is_free()
    }

    /// The frame driver: freeze, thaw, capture.
    pub fn driver(&self) -> FrameDriver {
        FrameDriver::new(self.session.clone(), self.frames.clone())
    }

    /// The tab's refs: lookups, numbering, snapshots.
    pub fn refs(&self) -> PageRefs<'_> {
        PageRefs::new(&self.session, &self.observation)
    }

    /// Waits (bounded) until the pump has handed on every event the page's
    /// session received so far: after a command's answer, the events the
    /// page sent before it (a request a timer started) are signalled.
    pub async fn catch_up(&self) {
        let (answer, answered) = tokio::sync::oneshot::channel();
        if self.catch_up.send(answer).is_ok() {
            let _ = tokio::time::timeout(CATCH_UP_LIMIT, answered).await;
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<TabSignal> {
        self.signals.subscribe()
    }

    /// Keeps `event` for the next action's envelope.
    pub fn note(&self, event: TabEvent) {
        self.noted.lock().push(event);
    }

    /// The events kept for this action.
    pub fn take_noted(&self) -> Vec<TabEvent> {
        std::mem::take(&mut *self.noted.lock())
    }

    /// The main frame's URL as last committed.
    pub fn url(&self) -> String {
        self.navigation.lock().url.clone()
    }

    pub fn owner(&self) -> Option<String> {
        self.state.lock().owner.clone()
    }

    pub fn pinned(&self) -> bool {
        self.state.lock().pinned
    }

    pub fn set_pinned(&self, pinned: bool) {
        self.state.lock().pinned = pinned;
    }

    pub fn muted(&self) -> bool {
        self.state.lock().mute_script.is_some()
    }

    /// Mutes or unmutes the page's media elements: CDP has no audio switch
    /// for a tab, so a script forces `muted` on every `<audio>`/`<video>`
    /// (in the document or not) as it plays or changes volume, in this
    /// document and every one after, and gives back only what it muted.
    pub async fn set_muted(&self, muted: bool) -> Result<()> {
        let previous = self.state.lock().mute_script.take();
        if let Some(identifier) = previous {
            self.session
                .execute(
                    chromiumoxide::cdp::browser_protocol::page::RemoveScriptToEvaluateOnNewDocumentParams::new(
                        identifier,
                    ),
                )
                .await?;
        }
        if muted {
            let added = self
                .session
                .execute(AddScriptToEvaluateOnNewDocumentParams::new(format!(
                    "({MUTE_JS})(true)"
                )))
                .await?;
            self.state.lock().mute_script = Some(added.result.identifier.inner().clone());
        }
        self.session
            .evaluate_json(&format!("({MUTE_JS})({muted}), null"))
            .await?;
        Ok(())
    }

    pub fn set_owner(&self, owner: Option<String>) {
        self.state.lock().owner = owner;
    }

    /// Schemes this tab may open besides the web's (`--allow-scheme`).
    pub fn set_record_secrets(&self, keep: bool) {
        self.state.lock().record_secrets = keep;
    }

    /// A call as it may be shown: redacted unless `--record-secrets`.
    fn shown(&self, calls: Vec<NetworkCall>) -> Vec<NetworkCall> {
        if self.state.lock().record_secrets {
            calls
        } else {
            calls.into_iter().map(NetworkCall::redacted).collect()
        }
    }

    pub fn set_extra_schemes(&self, schemes: Vec<String>) {
        self.state.lock().extra_schemes = schemes;
    }

    /// Invalidates the cached snapshot: an action is about to change the page.
    pub fn bump_epoch(&self) {
        self.observation.bump_epoch()
    }

    pub fn epoch(&self) -> u64 {
        self.observation.epoch()
    }

    pub fn cached_snapshot(&self) -> Option<observation::CachedSnapshot> {
        self.observation.cached_snapshot()
    }

    pub fn cache_snapshot(&self, snapshot: observation::CachedSnapshot) {
        self.observation.cache_snapshot(snapshot)
    }

    /// Counts a popup of this tab as being attached until the guard drops.
    pub fn popup_adoption(self: &Arc<Self>) -> PopupAdoption {
        self.popups_adopting.send_modify(|n| *n += 1);
        PopupAdoption(self.clone())
    }

    /// Waits, at most `limit`, until no popup of this tab is being attached.
    pub async fn popups_settled(&self, limit: Duration) {
        let mut adopting = self.popups_adopting.subscribe();
        let _ = tokio::time::timeout(limit, adopting.wait_for(|n| *n == 0)).await;
    }

    pub fn pending_dialog(&self) -> Option<PendingDialog> {
        self.prompts.dialog()
    }

    pub fn clear_dialog(&self) {
        self.prompts.dialog_closed();
    }

    /// Whether `frame` is this tab's main frame or one of its iframes.
    pub fn has_frame(&self, frame: &str) -> bool {
        self.session.main_frame().as_deref() == Some(frame)
            || self.navigation.lock().child_frames.contains(frame)
    }

    /// See `TabState::leaving_to`.
    pub fn leaving_to(&self) -> Option<String> {
        self.navigation.lock().leaving_to.clone()
    }

    /// The main frame's document has had its load event.
    pub fn loaded(&self) -> bool {
        self.navigation.lock().loaded_since_commit
    }

    pub fn is_loading(&self) -> bool {
        self.navigation.lock().main_loading.loading()
    }

    pub fn last_frame(&self) -> Option<CachedFrame> {
        self.frames.last_frame()
    }

    pub fn set_last_frame(&self, frame: Option<CachedFrame>) {
        self.frames.set_last_frame(frame)
    }

    fn capture_request(&self, e: &EventRequestWillBeSent) {
        if let Some(fetch) = self.network.request_started(&self.id, e) {
            self.fetch_body(fetch);
        }
    }

    /// A finished call: its timing, and its body when it is text worth
    /// keeping.
    fn capture_finished(&self, request_id: &str, session: Option<String>) {
        if let Some(fetch) = self
            .network
            .ended(request_id, CallEnd::Finished { session })
        {
            self.fetch_body(fetch);
        }
    }

    /// Fetches a finished call's body from the browser, off the event pump.
    fn fetch_body(&self, fetch: BodyFetch) {
        let BodyFetch {
            request_id,
            session,
        } = fetch;
        let Some(tab) = self.self_ref.upgrade() else {
            self.network.body_done(&request_id, None);
            return;
        };
        tokio::spawn(async move {
            const LIMIT: Duration = Duration::from_secs(5);
            let fetched = match session {
                // A frame rendered out of process: its renderer has the body.
                Some(session) => tab
                    .session
                    .raw_on_within(
                        Some(&session),
                        "Network.getResponseBody",
                        json!({ "requestId": request_id }),
                        LIMIT,
                    )
                    .await
                    .ok()
                    .and_then(|body| {
                        Some((
                            body.get("body")?.as_str()?.to_string(),
                            body.get("base64Encoded")?.as_bool()?,
                        ))
                    }),
                None => tab
                    .session
                    .execute_within(
                        GetResponseBodyParams::new(RequestId::new(request_id.clone())),
                        LIMIT,
                    )
                    .await
                    .ok()
                    .map(|body| (body.result.body.clone(), body.result.base64_encoded)),
            };
            tab.network.body_done(&request_id, fetched);
        });
    }

    /// Waits (bounded) until the response bodies being fetched are in the
    /// buffer, so a save right after an action keeps them.
    pub async fn bodies_settled(&self, limit: Duration) {
        self.network.bodies_settled(limit).await
    }

    /// See `ActionTab::in_flight_now`. Calls older than two minutes that
    /// never ended (their end fell out of the capture) don't count.
    pub fn in_flight_now(&self) -> Vec<WaitSignal> {
        let (navigation, page_url) = {
            let state = self.navigation.lock();
            let navigation = state
                .document_requests
                .values()
                .next()
                .cloned()
                .or_else(|| {
                    (state.main_loading.committed_since_start() && !state.loaded_since_commit)
                        .then(|| state.url.clone())
                });
            (navigation, state.url.clone())
        };
        let mut signals: Vec<WaitSignal> = navigation
            .into_iter()
            .map(WaitSignal::NavigationStarted)
            .collect();
        let recent = crate::clock::now_ms_i64() - 120_000;
        signals.extend(self.network.pending_since(recent).into_iter().map(
            |(id, url, resource_type)| {
                WaitSignal::RequestStarted(RequestInfo {
                    id,
                    same_site: same_site(&url, &page_url),
                    url,
                    resource_type,
                })
            },
        ));
        signals
    }

    /// The tab's captured calls, oldest first, secrets redacted unless
    /// `--record-secrets`.
    pub fn network_calls(&self) -> Vec<NetworkCall> {
        self.shown(self.network.calls())
    }

    pub fn network_dropped(&self) -> u64 {
        self.network.dropped()
    }

    /// Calls started since `since_ms` (wall clock), of the given types.
    pub fn network_calls_since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall> {
        self.shown(self.network.calls_since(since_ms, types))
    }

    /// Sends a signal to whoever watches this tab (an action in flight).
    pub fn emit(&self, signal: TabSignal) {
        if matches!(signal, TabSignal::Closed { .. }) {
            self.session.mark_closed();
        }
        let _ = self.signals.send(signal);
    }

    /// Features and URL of the last window this page opened (`window.open`,
    /// a `target=_blank` link or form), if any.
    pub fn take_window_open(&self) -> Option<(Vec<String>, String)> {
        self.navigation.lock().last_window_open.take()
    }

    async fn announce_file_chooser(&self, chooser: PendingFileChooser) {
        let mut accept = String::new();
        if let Some(node) = chooser.backend_node_id {
            let session = chooser.session.as_deref();
            let resolved = self
                .session
                .raw_on(
                    session,
                    "DOM.resolveNode",
                    json!({ "backendNodeId": node.inner() }),
                )
                .await;
            if let Some(object_id) = resolved
                .ok()
                .and_then(|r| r.pointer("/object/objectId").cloned())
                && let Ok(r) = self
                    .session
                    .raw_on(
                        session,
                        "Runtime.callFunctionOn",
                        json!({
                            "objectId": object_id,
                            "functionDeclaration": "function() { return this.accept || ''; }",
                            "returnByValue": true,
                        }),
                    )
                    .await
            {
                accept = r
                    .pointer("/result/value")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
            }
        }
        let accepts = accepts_from_attribute(&accept);
        self.prompts
            .set_file_chooser_accepts(&chooser.id, accepts.clone());
        let defaults = self.state.lock().chooser_defaults.clone();
        let auto = match defaults {
            // Only an input takes files; one that takes one gets the first.
            Some(mut files) if chooser.backend_node_id.is_some() => {
                if chooser.chooser_type == "open" {
                    files.truncate(1);
                }
                match self.set_chooser_files(&chooser, files.clone()).await {
                    Ok(()) => Some(files),
                    Err(e) => {
                        tracing::warn!(tab = %self.id, "the configured files could not be set: {}", e.message);
                        None
                    }
                }
            }
            _ => None,
        };
        if auto.is_some() {
            self.prompts.remove_file_chooser(&chooser.id);
        }
        self.emit(TabSignal::Event(crate::events::TabEvent::FileChooser(
            self.file_chooser_event(&chooser, accepts, auto.is_none()),
        )));
        if let Some(files) = auto {
            self.emit(TabSignal::Event(crate::events::TabEvent::FileSelected(
                crate::events::FileSelected {
                    id: chooser.id.clone(),
                    tab_id: self.id.clone(),
                    chooser_type: chooser.chooser_type.to_string(),
                    files,
                },
            )));
        }
    }

    fn file_chooser_event(
        &self,
        chooser: &PendingFileChooser,
        accepts: Value,
        pending: bool,
    ) -> crate::events::FileChooser {
        crate::events::FileChooser {
            id: chooser.id.clone(),
            tab_id: self.id.clone(),
            multiple: chooser.chooser_type == "open_multiple",
            chooser_type: chooser.chooser_type.to_string(),
            accepts,
            pending,
        }
    }

    /// The file choosers waiting for an answer, as their events told them.
    pub fn pending_file_choosers(&self) -> Vec<crate::events::FileChooser> {
        self.prompts
            .file_choosers()
            .iter()
            .map(|c| self.file_chooser_event(c, c.accepts.clone(), true))
            .collect()
    }

    /// Files choosers get as they open, from now on (`None`: they wait).
    pub fn set_chooser_defaults(&self, files: Option<Vec<String>>) {
        self.state.lock().chooser_defaults = files;
    }

    /// Sets `files` (absolute, checked) on the chooser's input, in the
    /// renderer that holds it.
    pub async fn set_chooser_files(
        &self,
        chooser: &PendingFileChooser,
        files: Vec<String>,
    ) -> Result<()> {
        let mut params =
            chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams::new(files);
        params.backend_node_id = chooser.backend_node_id;
        match &chooser.session {
            // The input is in an out-of-process frame: set them there.
            Some(session) => {
                let params =
                    serde_json::to_value(&params).map_err(|e| Error::internal(e.to_string()))?;
                self.session
                    .raw_on(Some(session), "DOM.setFileInputFiles", params)
                    .await?;
            }
            None => {
                self.session.execute(params).await?;
            }
        }
        Ok(())
    }

    pub fn pending_file_chooser(&self, id: &str) -> Option<PendingFileChooser> {
        self.prompts.file_chooser(id)
    }

    pub fn remove_file_chooser(&self, id: &str) {
        self.prompts.remove_file_chooser(id)
    }

    pub fn pending_select(&self, id: &str) -> Option<PendingSelect> {
        self.prompts.select(id)
    }

    pub fn remove_select(&self, id: &str) {
        self.prompts.remove_select(id)
    }

    /// Runs `function(arg)` in the page; `function` is JS source.
    async fn call_page(&self, function: &str, arg: &Value) -> Result<Value> {
        self.session
            .evaluate_json(&format!("({function})({arg})"))
            .await
    }

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
        let extra = self.state.lock().extra_schemes.clone();
        crate::rules::url::check_navigation_url(url, &extra)?;
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

impl Tab {
    /// Evaluates `expression` where a page-side interceptor ran (`realm`):
    /// its frame's script context, on the page's session or on its frame
    /// target's. A context that is gone (its document was replaced)
    /// answers `{"error": "the page was replaced"}`.
    pub async fn evaluate_in_realm(&self, realm: &Realm, expression: &str) -> Result<Value> {
        let mut params = json!({
            "expression": expression,
            "returnByValue": true,
            "awaitPromise": true,
        });
        if let Some(context) = realm.context {
            params["contextId"] = json!(context);
        }
        let answer = match (&realm.session, self.session.frame_targets()) {
            (Some(session), Some(targets)) => {
                if self.session.dialog_open() {
                    return Err(Error::dialog_blocks(&self.id));
                }
                targets
                    .navigator()
                    .send(
                        Some(session),
                        "Runtime.evaluate",
                        params,
                        session::COMMAND_BOUND,
                    )
                    .await
            }
            _ => self.session.raw("Runtime.evaluate", params).await,
        };
        let answer = match answer {
            Ok(answer) => answer,
            // The browser refused: the context is gone with its document.
            Err(e) if e.code == ErrorCode::Internal => {
                return Ok(json!({ "error": "the page was replaced" }));
            }
            Err(e) => return Err(e),
        };
        if let Some(exception) = answer.get("exceptionDetails") {
            let text = exception
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .unwrap_or("exception");
            return Err(Error::new(ErrorCode::EvaluationError, text.to_string()));
        }
        Ok(answer
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }
}

/// Page-side: keeps media elements muted while the tab is (see
/// [`Tab::set_muted`]); called with `true` or `false`.
const MUTE_JS: &str = include_str!("js/mute.js");

/// The binding the page-side `<select>` interceptor calls.
const SELECT_BINDING: &str = "__wabpSelectOpen";
/// The binding the page-side picker interceptor calls.
const PICKER_BINDING: &str = "__wabpPickerOpen";

/// Page-side: catches a `<select>` before its popup opens (mouse or keyboard),
/// reports its options through the binding, and keeps the element for
/// `__wabpSelect.apply`. Installed in every document.
const SELECT_JS: &str = include_str!("js/prompts.js");

/// ABP's `accepts` list from an `accept` attribute: extensions grouped,
/// each MIME pattern on its own.
fn accepts_from_attribute(accept: &str) -> Value {
    let mut extensions = Vec::new();
    let mut groups = Vec::new();
    for token in accept.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match token.strip_prefix('.') {
            Some(ext) => extensions.push(ext.to_ascii_lowercase()),
            None => groups.push(serde_json::json!({ "description": token, "extensions": ["*"] })),
        }
    }
    if !extensions.is_empty() {
        groups.insert(
            0,
            serde_json::json!({ "description": "Files", "extensions": extensions }),
        );
    }
    if groups.is_empty() {
        groups.push(serde_json::json!({ "description": "All Files", "extensions": ["*"] }));
    }
    Value::Array(groups)
}

/// Page-side: the box of an element, as `ElementBox` JSON.
const BOX_OF: &str = r#"function boxOf(el) {
  const r = el.getBoundingClientRect();
  const s = getComputedStyle(el);
  const visible = r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0';
  const inViewport = r.right > 0 && r.bottom > 0 && r.left < innerWidth && r.top < innerHeight;
  const text = String(el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 200);
  return { rect: { x: r.x, y: r.y, width: r.width, height: r.height }, tag: el.tagName.toLowerCase(), visible, in_viewport: inViewport, text };
}"#;

fn parse_box(value: &Value) -> Option<ElementBox> {
    let rect = value.get("rect")?;
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Some(ElementBox {
        rect: Rect {
            x: num(rect, "x"),
            y: num(rect, "y"),
            width: num(rect, "width"),
            height: num(rect, "height"),
        },
        tag: value.get("tag")?.as_str()?.to_string(),
        visible: value
            .get("visible")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        in_viewport: value
            .get("in_viewport")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        text: value
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

/// Page-side errors come back as `{"error": "..."}`.
fn page_error(value: &Value) -> Option<HostError> {
    value
        .get("error")
        .and_then(Value::as_str)
        .map(|e| HostError::Invalid(e.to_string()))
}

/// How long a navigation may take to commit (or fail).
const COMMIT_LIMIT: Duration = Duration::from_secs(30);
/// How long the browser gets to stop a navigation that timed out.
const STOP_LIMIT: Duration = Duration::from_secs(2);
/// Bound on [`Tab::catch_up`]: the pump only hands on what it holds.
const CATCH_UP_LIMIT: Duration = Duration::from_millis(500);
/// How long a navigate that may meet a beforeunload prompt waits, after
/// the browser's answer, for the commit (a 204 or a download has none).
const AFTER_ANSWER_GRACE: Duration = Duration::from_secs(5);
/// How long an accepted `beforeunload` prompt may take to close.
const PROMPT_CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How long leaving a page that sits in a dialog may take.
const LEAVE_DIALOG_LIMIT: Duration = Duration::from_secs(5);
/// The cause of a repair for a page that keeps opening dialogs.
pub const DIALOG_LOOP: &str =
    "the page's script keeps opening dialogs and would not let the page go";

/// How long the browser's answer may trail its error page.
const ERROR_TEXT_LIMIT: Duration = Duration::from_secs(3);

/// Bounds a future; the message says what did not finish.
pub async fn bounded<T>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    tokio::time::timeout(limit, fut).await.map_err(|_| {
        Error::timeout(format!(
            "{what} did not finish within {} ms",
            limit.as_millis()
        ))
    })?
}

#[cfg(test)]
mod tests {
    use super::same_site;

    #[test]
    fn same_site_compares_registrable_domains() {
        assert!(same_site(
            "http://127.0.0.1:8080/a",
            "http://127.0.0.1:9090/b"
        ));
        assert!(same_site(
            "https://api.example.com/x",
            "https://www.example.com/"
        ));
        assert!(!same_site("https://example.org/", "https://example.com/"));
        assert!(!same_site("http://127.0.0.1/", "http://127.0.0.2/"));
        assert!(same_site("http://localhost:1/", "http://localhost:2/"));
    }
}
