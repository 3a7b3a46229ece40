//! A tab's out-of-process frames. With site isolation a cross-site iframe
//! runs in a renderer of its own, reachable only through a CDP session on
//! its own target; the page's session doesn't see into it. chromiumoxide
//! attaches to such targets and lets them run, but offers no way to send
//! them commands, so this component follows them over the navigator's
//! connection (`navigator.rs`): auto-attach on the page's target (and on
//! each frame target, for frames inside frames), one session per frame
//! target, and a map from frame id to that session. Every frame-scoped
//! command (`PageSession::raw_in`) is routed through it: isolated worlds,
//! node resolution, accessibility trees, script calls.
//!
//! A frame target is held (`waitForDebuggerOnStart`) until it is set up,
//! then released. The frame driver reaches them through here too: a new
//! frame target starts in the page's state (`set_setup`, the page clock as
//! `set_new_document_script`), and every freeze, thaw, animation rate and
//! virtual-time grant is mirrored to them (`mirror`). Their network events
//! and the page-side interceptors' calls (`<select>`, pickers) go to the
//! tab's pump (`forwarded_events`), so their requests are captured and
//! waited for like the page's, and their selects and pickers answered there.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::error::Result;
use crate::navigator::{Navigator, SessionEvent};

/// How long setting up or releasing a frame target may take.
const SETUP_LIMIT: Duration = Duration::from_secs(5);

pub struct FrameTargets {
    navigator: Arc<Navigator>,
    tab_id: String,
    /// The page's target, followed afresh when the connection breaks.
    page_target: String,
    /// Frame id → our session on the target that renders it: an
    /// out-of-process frame's own id (its target id), and the frames of
    /// the same site inside it, learnt from its frame tree.
    sessions: Mutex<HashMap<String, String>>,
    /// Each frame target's root frame id (its target id) → our session.
    roots: Mutex<HashMap<String, String>>,
    /// Each root's parent frame, once read from its frame tree.
    root_parents: Mutex<HashMap<String, Option<String>>>,
    /// The frame driver's state for frames that start now: commands a new
    /// frame target gets before it runs (a frozen page's frames start
    /// frozen), and the script its documents start with (the page clock).
    setup: Mutex<Vec<(&'static str, Value)>>,
    new_document_script: Mutex<Option<String>>,
    /// The script's id in each frame target (session → identifier).
    scripts: Mutex<HashMap<String, String>>,
    /// Where the frame targets' network events and interceptor calls go
    /// (the tab's pump), with the session they came from.
    forward: Mutex<Option<tokio::sync::mpsc::UnboundedSender<(String, String, Value)>>>,
    /// The tab's own set-up for each frame target (its interceptors):
    /// commands before it runs, scripts evaluated once after.
    tab_setup: Mutex<(Vec<(&'static str, Value)>, Vec<String>)>,
    /// The tasks following the page's session and each frame target's.
    followers: Mutex<Vec<JoinHandle<()>>>,
    /// The page's requests are paused for interception rules: so are theirs.
    intercepting: std::sync::atomic::AtomicBool,
}

impl Drop for FrameTargets {
    fn drop(&mut self) {
        for follower in self.followers.lock().drain(..) {
            follower.abort();
        }
    }
}

impl FrameTargets {
    /// Follows the frame targets of the page `target_id`, from now on.
    pub async fn follow(
        navigator: Arc<Navigator>,
        tab_id: &str,
        target_id: &str,
    ) -> Result<Arc<FrameTargets>> {
        let targets = Arc::new(FrameTargets {
            navigator: navigator.clone(),
            tab_id: tab_id.to_string(),
            page_target: target_id.to_string(),
            sessions: Mutex::new(HashMap::new()),
            roots: Mutex::new(HashMap::new()),
            root_parents: Mutex::new(HashMap::new()),
            setup: Mutex::new(Vec::new()),
            new_document_script: Mutex::new(None),
            scripts: Mutex::new(HashMap::new()),
            forward: Mutex::new(None),
            tab_setup: Mutex::new((Vec::new(), Vec::new())),
            followers: Mutex::new(Vec::new()),
            intercepting: Default::default(),
        });
        targets.follow_page().await?;
        Ok(targets)
    }

    /// Auto-attaches on the page's target; when the connection that carries
    /// it breaks, every session on it is gone: forget them and follow the
    /// page again on a new one (its frame targets attach anew, set up in the
    /// page's current state).
    async fn follow_page(self: &Arc<Self>) -> Result<()> {
        let page_session = self.navigator.session_on(&self.page_target).await?;
        self.auto_attach(&page_session, true).await
    }

    /// After the connection broke: the frame targets again, with backoff,
    /// until the tab is gone or its target refuses.
    /// (Boxed: following the page leads back here.)
    fn follow_again(self: Arc<Self>) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(self.follow_page_again())
    }

    async fn follow_page_again(self: Arc<Self>) {
        self.sessions.lock().clear();
        self.roots.lock().clear();
        self.root_parents.lock().clear();
        self.scripts.lock().clear();
        let mut delay = Duration::from_millis(100);
        for _ in 0..6 {
            match self.follow_page().await {
                Ok(()) => {
                    tracing::debug!(tab = %self.tab_id, "following its frame targets again");
                    return;
                }
                Err(e) => {
                    tracing::debug!(tab = %self.tab_id, "frame targets not followed yet: {}", e.message);
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
            }
        }
        tracing::warn!(tab = %self.tab_id, "its out-of-process frames are no longer followed");
    }

    /// The navigator these sessions live on.
    pub fn navigator(&self) -> &Arc<Navigator> {
        &self.navigator
    }

    /// Our session on the target rendering `frame`, if it is out of the
    /// page's process.
    pub fn session_of(&self, frame: &str) -> Option<String> {
        self.sessions.lock().get(frame).cloned()
    }

    /// Every frame target: (its root frame id, our session on it).
    pub fn roots(&self) -> Vec<(String, String)> {
        let mut roots: Vec<(String, String)> = self
            .roots
            .lock()
            .iter()
            .map(|(f, s)| (f.clone(), s.clone()))
            .collect();
        roots.sort();
        roots
    }

    /// Whether `frame` is the root of a frame target.
    pub fn is_root(&self, frame: &str) -> bool {
        self.roots.lock().contains_key(frame)
    }

    /// The root frame of the frame target `session` is on.
    pub fn root_of_session(&self, session: &str) -> Option<String> {
        self.roots
            .lock()
            .iter()
            .find(|(_, s)| s.as_str() == session)
            .map(|(f, _)| f.clone())
    }

    pub fn set_root_parent(&self, root: &str, parent: Option<String>) {
        self.root_parents.lock().insert(root.to_string(), parent);
    }

    /// The frame a frame target's root sits in, read from its frame tree
    /// the first time.
    pub async fn parent_of_root(&self, root: &str) -> Option<String> {
        if let Some(parent) = self.root_parents.lock().get(root) {
            return parent.clone();
        }
        let session = self.session_of(root)?;
        let tree = self
            .navigator
            .send(Some(&session), "Page.getFrameTree", json!({}), SETUP_LIMIT)
            .await
            .ok()?;
        let parent = tree
            .pointer("/frameTree/frame/parentId")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.set_root_parent(root, parent.clone());
        parent
    }

    /// The frame targets' network events (`Network.*`) and interceptor
    /// calls (`Runtime.bindingCalled`), from now on, as (session, method,
    /// params), for the tab's capture, waits and prompts.
    pub fn forwarded_events(
        &self,
    ) -> tokio::sync::mpsc::UnboundedReceiver<(String, String, Value)> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        *self.forward.lock() = Some(tx);
        rx
    }

    /// The tab's set-up for every frame target: `commands` before it runs,
    /// `scripts` evaluated once after (for a document that predates them).
    pub fn set_tab_setup(&self, commands: Vec<(&'static str, Value)>, scripts: Vec<String>) {
        *self.tab_setup.lock() = (commands, scripts);
    }

    /// Commands every frame target gets before it runs, from now on.
    pub fn set_setup(&self, commands: Vec<(&'static str, Value)>) {
        *self.setup.lock() = commands;
    }

    /// Sends a command to every frame target (best effort, bounded): the
    /// frame driver's freezes, thaws and grants reach out-of-process frames
    /// too.
    pub async fn mirror(&self, method: &'static str, params: Value) {
        let sends = self.roots().into_iter().map(|(_, session)| {
            let params = params.clone();
            async move {
                let _ = self
                    .navigator
                    .send(Some(&session), method, params, SETUP_LIMIT)
                    .await;
            }
        });
        futures::future::join_all(sends).await;
    }

    /// Pauses (or stops pausing) the frame targets' requests, those there
    /// are and those to come, as the page's are for interception rules.
    pub async fn set_interception(&self, on: bool) {
        self.intercepting
            .store(on, std::sync::atomic::Ordering::SeqCst);
        if on {
            self.mirror("Fetch.enable", fetch_patterns()).await;
        } else {
            self.mirror("Fetch.disable", json!({})).await;
        }
    }

    /// The script documents of every frame target start with, from now on
    /// (replacing the last one), in the targets there are and those to come.
    pub async fn set_new_document_script(&self, source: String) {
        *self.new_document_script.lock() = Some(source.clone());
        let installs = self
            .roots()
            .into_iter()
            .map(|(_, session)| self.install_script(session, source.clone()));
        futures::future::join_all(installs).await;
    }

    async fn install_script(&self, session: String, source: String) {
        let previous = self.scripts.lock().remove(&session);
        if let Some(identifier) = previous {
            let _ = self
                .navigator
                .send(
                    Some(&session),
                    "Page.removeScriptToEvaluateOnNewDocument",
                    json!({ "identifier": identifier }),
                    SETUP_LIMIT,
                )
                .await;
        }
        if let Ok(added) = self
            .navigator
            .send(
                Some(&session),
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": source }),
                SETUP_LIMIT,
            )
            .await
            && let Some(identifier) = added.get("identifier").and_then(Value::as_str)
        {
            self.scripts.lock().insert(session, identifier.to_string());
        }
    }

    /// Frames of `session`'s target other than its root (same-site frames
    /// inside an out-of-process frame) are reached through it too.
    pub fn learn_frames(&self, session: &str, frames: impl IntoIterator<Item = String>) {
        let mut sessions = self.sessions.lock();
        for frame in frames {
            sessions.insert(frame, session.to_string());
        }
    }

    /// Asks `session`'s target to attach its frame targets to us, held
    /// until set up; follows its events. `page`: the page's own session,
    /// whose events end only when the connection breaks.
    async fn auto_attach(self: &Arc<Self>, session: &str, page: bool) -> Result<()> {
        let mut events = self.navigator.subscribe(session).await?;
        let weak: Weak<FrameTargets> = Arc::downgrade(self);
        let session_id = session.to_string();
        let follower = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let Some(targets) = weak.upgrade() else {
                    return;
                };
                targets.on_event(&session_id, event).await;
            }
            if page && let Some(targets) = weak.upgrade() {
                tokio::spawn(targets.follow_again());
            }
        });
        {
            let mut followers = self.followers.lock();
            followers.retain(|f| !f.is_finished());
            followers.push(follower);
        }
        self.navigator
            .send(
                Some(session),
                "Target.setAutoAttach",
                json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
                SETUP_LIMIT,
            )
            .await?;
        Ok(())
    }

    async fn on_event(self: &Arc<Self>, session: &str, (method, params): SessionEvent) {
        match method.as_str() {
            "Target.attachedToTarget" => {
                let session = params
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let info = params.get("targetInfo").cloned().unwrap_or(Value::Null);
                let kind = info.get("type").and_then(Value::as_str).unwrap_or_default();
                let target = info
                    .get("targetId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                // Set up off this loop: the new target's own events come
                // through its own follower.
                tokio::spawn(self.clone().adopt(kind.to_string(), target, session));
            }
            "Target.detachedFromTarget" => {
                if let Some(session) = params.get("sessionId").and_then(Value::as_str) {
                    self.forget(session).await;
                }
            }
            _ if method.starts_with("Network.")
                || method == "Fetch.requestPaused"
                || method == "Runtime.bindingCalled"
                || method == "Page.fileChooserOpened" =>
            {
                if let Some(forward) = self.forward.lock().as_ref() {
                    let _ = forward.send((session.to_string(), method, params));
                }
            }
            _ => {}
        }
    }

    /// A new target under the page: a frame is followed; anything else
    /// (workers) is only let go.
    /// (Boxed: it follows the new target, whose events lead back here.)
    fn adopt(
        self: Arc<Self>,
        kind: String,
        target: String,
        session: String,
    ) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(self.adopt_target(kind, target, session))
    }

    async fn adopt_target(self: Arc<Self>, kind: String, target: String, session: String) {
        if kind == "iframe" {
            self.roots.lock().insert(target.clone(), session.clone());
            self.sessions.lock().insert(target.clone(), session.clone());
            if let Err(e) = self.auto_attach(&session, false).await {
                tracing::debug!(tab = %self.tab_id, "a frame target could not be followed: {}", e.message);
            }
            // Set up before it runs: the page's freeze and clock. Scripts
            // for new documents run only where the Page domain is on.
            let mut commands = vec![("Page.enable", json!({})), ("Network.enable", json!({}))];
            commands.extend(self.tab_setup.lock().0.clone());
            commands.extend(self.setup.lock().clone());
            if self.intercepting.load(std::sync::atomic::Ordering::SeqCst) {
                commands.push(("Fetch.enable", fetch_patterns()));
            }
            self.send_each(&session, commands).await;
            let script = self.new_document_script.lock().clone();
            if let Some(source) = script {
                self.install_script(session.clone(), source).await;
            }
        }
        if let Err(e) = self
            .navigator
            .send(
                Some(&session),
                "Runtime.runIfWaitingForDebugger",
                json!({}),
                SETUP_LIMIT,
            )
            .await
        {
            tracing::debug!(tab = %self.tab_id, "a frame target could not be released: {}", e.message);
        }
        // A frame that was running before we attached (a page open before
        // the tab followed its frames) has a document that predates the
        // script: run it there too (it does nothing twice).
        if kind == "iframe" {
            let mut scripts = self.tab_setup.lock().1.clone();
            scripts.extend(self.new_document_script.lock().clone());
            let evaluations = scripts
                .into_iter()
                .map(|source| ("Runtime.evaluate", json!({ "expression": source })))
                .collect();
            self.send_each(&session, evaluations).await;
        }
    }

    /// Sends `commands` to `session` in order, each bounded; a command the
    /// target refuses doesn't stop the rest (set-up is best effort).
    async fn send_each(&self, session: &str, commands: Vec<(&'static str, Value)>) {
        for (method, params) in commands {
            let _ = self
                .navigator
                .send(Some(session), method, params, SETUP_LIMIT)
                .await;
        }
    }

    async fn forget(&self, session: &str) {
        self.forget_frames(session);
        self.navigator.unsubscribe(session).await;
    }

    fn forget_frames(&self, session: &str) {
        self.sessions.lock().retain(|_, s| s != session);
        self.scripts.lock().remove(session);
        let mut roots = self.roots.lock();
        let mut parents = self.root_parents.lock();
        roots.retain(|root, s| {
            let keep = s != session;
            if !keep {
                parents.remove(root);
            }
            keep
        });
    }
}

/// Every request, paused before it leaves.
fn fetch_patterns() -> Value {
    json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] })
}
