//! `Page.navigate` over a CDP connection of its own.
//!
//! chromiumoxide sends one `Page.navigate` per tab at a time and holds the
//! next until the last one's page has fired `load` or 30 s have passed, and
//! it checks that deadline only when some other message wakes it. A page
//! whose load never finishes (an image that takes a minute) therefore held
//! the next navigate of its tab for up to 30 s. Chromium itself has no such
//! queue: this connection sends `Page.navigate` straight to the tab's target
//! through a session of its own, and answers when the navigation commits or
//! fails. Events still come to the tab through chromiumoxide's session.
//!
//! The same connection reaches what chromiumoxide can't: the sessions of a
//! tab's out-of-process frames (`tab/frame_targets.rs`), whose events it
//! hands to whoever subscribed to them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::error::{Error, ErrorCode, Result};

type Pending = Arc<parking_lot::Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// An event of one session: (method, params).
pub type SessionEvent = (String, Value);
type Subscribers =
    Arc<parking_lot::Mutex<HashMap<String, tokio::sync::mpsc::UnboundedSender<SessionEvent>>>>;

/// One browser's navigation connection, opened on first use and again after
/// it breaks.
pub struct Navigator {
    ws_url: String,
    /// The browser renders cross-site frames out of process: tabs follow
    /// their frame targets.
    site_isolation: bool,
    conn: Mutex<Option<Connection>>,
    next_id: AtomicU64,
}

struct Connection {
    outgoing: tokio::sync::mpsc::UnboundedSender<String>,
    pending: Pending,
    /// Who follows the events of which session (`Navigator::subscribe`).
    subscribers: Subscribers,
    /// The session this connection holds on each target, by target id.
    sessions: HashMap<String, String>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Navigator {
    /// For the browser whose DevTools endpoint is `ws_url`.
    pub fn new(ws_url: String, site_isolation: bool) -> Navigator {
        Navigator {
            ws_url,
            site_isolation,
            conn: Mutex::new(None),
            next_id: AtomicU64::new(1),
        }
    }

    /// Sends `Page.navigate` with `params` to `target_id`; the answer comes
    /// when the navigation commits or fails (`errorText`), within `limit`.
    pub async fn navigate(&self, target_id: &str, params: Value, limit: Duration) -> Result<Value> {
        let answer = tokio::time::timeout(limit, async {
            let session = self.session(target_id).await?;
            match self.call(Some(&session), "Page.navigate", params).await? {
                Ok(answer) => Ok(answer),
                Err(refusal) => {
                    // A session on a target that went away: attach afresh.
                    self.forget(target_id).await;
                    Err(Error::new(
                        ErrorCode::NavigationFailed,
                        format!("the browser refused the navigation: {refusal}"),
                    ))
                }
            }
        })
        .await
        .map_err(|_| {
            Error::timeout(format!(
                "the navigation did not start within {} ms",
                limit.as_millis()
            ))
        })?;
        answer
    }

    /// Whether tabs of this browser follow their out-of-process frames.
    pub fn site_isolation(&self) -> bool {
        self.site_isolation
    }

    /// Sends one command to `session` (the browser's own without one),
    /// bounded by `limit`; a refusal is an error naming the method.
    pub async fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        let answer = tokio::time::timeout(limit, self.call(session, method, params))
            .await
            .map_err(|_| {
                Error::timeout(format!(
                    "{method} did not answer within {} ms",
                    limit.as_millis()
                ))
            })??;
        answer.map_err(|refusal| Error::internal(format!("{method}: {refusal}")))
    }

    /// A session of this connection on `target_id` (attached once, kept).
    pub async fn session_on(&self, target_id: &str) -> Result<String> {
        self.session(target_id).await
    }

    /// Events of `session` from now on, until the connection breaks (the
    /// stream then ends: the session is gone with it).
    pub async fn subscribe(
        &self,
        session: &str,
    ) -> Result<tokio::sync::mpsc::UnboundedReceiver<SessionEvent>> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut conn = self.conn.lock().await;
        if conn.as_ref().is_none_or(|c| c.reader.is_finished()) {
            *conn = Some(self.connect().await?);
        }
        let conn = conn.as_ref().expect("connected above");
        conn.subscribers.lock().insert(session.to_string(), tx);
        Ok(rx)
    }

    /// Stops following `session`'s events.
    pub async fn unsubscribe(&self, session: &str) {
        if let Some(conn) = self.conn.lock().await.as_ref() {
            conn.subscribers.lock().remove(session);
        }
    }

    /// Drops the connection: every session on it ends (followers see their
    /// events end) and the next command opens a new one.
    pub async fn disconnect(&self) {
        self.conn.lock().await.take();
    }

    /// Forgets the session on a target that is gone.
    pub async fn forget(&self, target_id: &str) {
        if let Some(conn) = self.conn.lock().await.as_mut() {
            conn.sessions.remove(target_id);
        }
    }

    async fn session(&self, target_id: &str) -> Result<String> {
        if let Some(session) = self
            .conn
            .lock()
            .await
            .as_ref()
            .and_then(|c| c.sessions.get(target_id).cloned())
        {
            return Ok(session);
        }
        let answer = self
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
            )
            .await?
            .map_err(|refusal| Error::internal(format!("Target.attachToTarget: {refusal}")))?;
        let session = answer
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::internal("Target.attachToTarget answered no session"))?
            .to_string();
        if let Some(conn) = self.conn.lock().await.as_mut() {
            conn.sessions.insert(target_id.to_string(), session.clone());
        }
        Ok(session)
    }

    /// One command: `Err` when the connection failed (it is reopened on the
    /// next call), `Ok(Err(message))` when the browser refused the command.
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<std::result::Result<Value, String>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut conn = self.conn.lock().await;
            if conn.as_ref().is_none_or(|c| c.reader.is_finished()) {
                *conn = Some(self.connect().await?);
            }
            let conn = conn.as_ref().expect("connected above");
            conn.pending.lock().insert(id, tx);
            conn.outgoing
                .send(message.to_string())
                .map_err(|_| connection_lost("the navigation connection closed"))?;
        }
        let reply = rx
            .await
            .map_err(|_| connection_lost("the navigation connection closed"))?;
        if let Some(error) = reply.get("error") {
            let text = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Ok(Err(crate::error::cut(text)));
        }
        Ok(Ok(reply.get("result").cloned().unwrap_or(Value::Null)))
    }

    async fn connect(&self) -> Result<Connection> {
        let (socket, _) = async_tungstenite::tokio::connect_async(self.ws_url.as_str())
            .await
            .map_err(|e| connection_lost(&format!("navigation connection: {e}")))?;
        crate::sockets::send_commands_unbatched(self.ws_url.as_str());
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queued) = tokio::sync::mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::default();
        let answers = pending.clone();
        let subscribers: Subscribers = Arc::default();
        let followers = subscribers.clone();
        let reader = tokio::spawn(async move {
            loop {
                tokio::select! {
                    message = queued.recv() => match message {
                        Some(text) => {
                            if sink.send(Message::text(text)).await.is_err() {
                                break;
                            }
                        }
                        None => break,
                    },
                    frame = stream.next() => match frame {
                        Some(Ok(Message::Text(text))) => {
                            let Ok(reply) = serde_json::from_str::<Value>(text.as_str()) else {
                                continue;
                            };
                            if let Some(id) = reply.get("id").and_then(Value::as_u64) {
                                if let Some(waiter) = answers.lock().remove(&id) {
                                    let _ = waiter.send(reply);
                                }
                            } else if let (Some(session), Some(method)) = (
                                reply.get("sessionId").and_then(Value::as_str),
                                reply.get("method").and_then(Value::as_str),
                            ) {
                                // Events of sessions someone follows; the
                                // rest are chromiumoxide's business.
                                let mut followers = followers.lock();
                                if let Some(follower) = followers.get(session) {
                                    let params = reply.get("params").cloned().unwrap_or(Value::Null);
                                    if follower.send((method.to_string(), params)).is_err() {
                                        followers.remove(session);
                                    }
                                }
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => break,
                    },
                }
            }
            // Waiters see their sender dropped: "connection closed";
            // followers see their stream end.
            answers.lock().clear();
            followers.lock().clear();
        });
        Ok(Connection {
            outgoing,
            pending,
            subscribers,
            sessions: HashMap::new(),
            reader,
        })
    }
}

/// The browser's connection is gone (it died, or an attached one's service
/// dropped it): not ready while the engine restarts or reattaches it.
fn connection_lost(what: &str) -> Error {
    Error::new(
        ErrorCode::NotReady,
        format!("{what}; the engine is starting or reattaching the browser and reopens the tabs under their ids"),
    )
    .then(crate::error::NextStep::BrowserStatus)
}
