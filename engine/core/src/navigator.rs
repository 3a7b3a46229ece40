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

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::error::{Error, ErrorCode, Result};

type Pending = Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// One browser's navigation connection, opened on first use and again after
/// it breaks.
pub struct Navigator {
    ws_url: String,
    conn: Mutex<Option<Connection>>,
    next_id: AtomicU64,
}

struct Connection {
    outgoing: tokio::sync::mpsc::UnboundedSender<String>,
    pending: Pending,
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
    pub fn new(ws_url: String) -> Navigator {
        Navigator {
            ws_url,
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
            conn.pending.lock().unwrap().insert(id, tx);
            conn.outgoing
                .send(message.to_string())
                .map_err(|_| Error::internal("the navigation connection closed"))?;
        }
        let reply = rx
            .await
            .map_err(|_| Error::internal("the navigation connection closed"))?;
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
            .map_err(|e| Error::internal(format!("navigation connection: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queued) = tokio::sync::mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::default();
        let answers = pending.clone();
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
                            // Events (no id) are chromiumoxide's business.
                            if let Some(id) = reply.get("id").and_then(Value::as_u64) {
                                if let Some(waiter) = answers.lock().unwrap().remove(&id) {
                                    let _ = waiter.send(reply);
                                }
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => break,
                    },
                }
            }
            // Waiters see their sender dropped: "connection closed".
            answers.lock().unwrap().clear();
        });
        Ok(Connection {
            outgoing,
            pending,
            sessions: HashMap::new(),
            reader,
        })
    }
}
