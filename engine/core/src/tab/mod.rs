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
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, SetInterceptFileChooserDialogParams,
};
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use chromiumoxide::cdp::js_protocol::runtime::AddBindingParams;
use futures::stream::StreamExt;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

pub(crate) mod capture;
mod choosers;
pub(crate) mod execution;
pub(crate) mod frame_targets;
pub mod frames;
mod host;
mod input;
pub(crate) mod intercept;
mod loading;
mod navigate;
mod navigation;
pub(crate) mod network;
pub(crate) mod observation;
pub(crate) mod prompts;
mod pump;
pub(crate) mod refs;
pub(crate) mod session;
pub mod snapshot;
mod traffic;

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
    ElementBox, HostError, HostResult, Located, Modifiers, MouseButton, PageHost, Rect, Target,
    ViewportInfo,
};
use frames::DriverKind;
use network::NetworkCapture;

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
    /// The engine's own addresses, which `navigate_to` refuses.
    own_addresses: crate::rules::url::OwnAddresses,
    /// `--record-secrets`: network calls are shown with their credentials.
    record_secrets: bool,
}

pub struct Tab {
    pub id: String,
    /// The page's latest console messages and uncaught errors
    /// ([`MAX_CONSOLE`] at most).
    console: Mutex<std::collections::VecDeque<crate::action::record::ConsoleMessage>>,
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
/// Console messages a tab keeps.
const MAX_CONSOLE: usize = 200;
/// A console message's text is cut here.
const MAX_CONSOLE_TEXT: usize = 2000;

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
            console: Mutex::new(std::collections::VecDeque::new()),
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
    /// Keeps a console message (the oldest goes past [`MAX_CONSOLE`]); its
    /// text is cut at [`MAX_CONSOLE_TEXT`] bytes and secrets in it redacted
    /// as in request bodies.
    pub(crate) fn console_message(&self, level: &str, text: String) {
        // A JSON text as a body; else each word, so `token=…` in a
        // sentence is redacted too.
        let mut text = match text.trim_start().starts_with(['{', '[']) {
            true => crate::secrets::redact_body(&text),
            false => text
                .split(' ')
                .map(crate::secrets::redact_body)
                .collect::<Vec<_>>()
                .join(" "),
        };
        if text.len() > MAX_CONSOLE_TEXT {
            let mut end = MAX_CONSOLE_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push('…');
        }
        let mut console = self.console.lock();
        if console.len() >= MAX_CONSOLE {
            console.pop_front();
        }
        console.push_back(crate::action::record::ConsoleMessage {
            level: level.to_string(),
            text,
            timestamp_ms: crate::clock::now_ms(),
        });
    }

    /// Console messages since `since_ms` (wall clock).
    pub fn console_since(&self, since_ms: f64) -> Vec<crate::action::record::ConsoleMessage> {
        self.console
            .lock()
            .iter()
            .filter(|m| m.timestamp_ms >= since_ms)
            .cloned()
            .collect()
    }

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
    pub fn set_extra_schemes(&self, schemes: Vec<String>) {
        self.state.lock().extra_schemes = schemes;
    }

    pub fn set_own_addresses(&self, own: crate::rules::url::OwnAddresses) {
        self.state.lock().own_addresses = own;
    }

    /// Has the browser refuse the engine's own addresses to this page's
    /// requests (fetches, images, sockets). Chromium 156 applies the list to
    /// subresources only: a page that navigates itself there lands on the
    /// guard's refusal, which is sandboxed (an opaque origin, not the
    /// engine's). The engine's own navigations are refused before the
    /// browser sees them.
    pub async fn block_own_addresses(&self) -> Result<()> {
        let patterns = self.state.lock().own_addresses.block_patterns();
        if patterns.is_empty() {
            return Ok(());
        }
        let patterns: Vec<serde_json::Value> = patterns
            .into_iter()
            .map(|p| serde_json::json!({ "urlPattern": p, "block": true }))
            .collect();
        self.session
            .raw_regardless(
                "Network.setBlockedURLs",
                serde_json::json!({ "urlPatterns": patterns }),
                std::time::Duration::from_secs(5),
            )
            .await?;
        Ok(())
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

    /// Runs `function(arg)` in the page; `function` is JS source.
    async fn call_page(&self, function: &str, arg: &Value) -> Result<Value> {
        self.session
            .evaluate_json(&format!("({function})({arg})"))
            .await
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

/// Bound on [`Tab::catch_up`]: the pump only hands on what it holds.
const CATCH_UP_LIMIT: Duration = Duration::from_millis(500);
/// The cause of a repair for a page that keeps opening dialogs.
pub const DIALOG_LOOP: &str =
    "the page's script keeps opening dialogs and would not let the page go";

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
