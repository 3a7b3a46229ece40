//! One CDP socket to an attached browser, shared by the engine's
//! connections.
//!
//! The engine talks to a browser over two connections: chromiumoxide's and
//! the navigator's (`navigator.rs`). A launched browser, or one attached at
//! `/devtools/browser/<id>`, takes both. A CDP service that starts a browser
//! per connection (browserless' `/chromium?token=`, most hosted browser
//! services) would start a second browser for the second dial, whose
//! targets the first never sees. So for an attached browser the engine
//! dials the service once, here, and gives its own connections a local
//! endpoint (`ws://127.0.0.1:<port>/devtools/browser/mux`) that shares that
//! one socket: each client's command ids are renumbered on the way up and
//! restored on the way down; events (no id) go to every client, which keeps
//! those of its own sessions. When the service's socket ends, every local
//! connection ends with it, and the engine's usual repair of a lost browser
//! dials the service again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use futures::StreamExt;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::error::{Error, ErrorCode, Result};

type ClientId = u64;

#[derive(Default)]
struct Routes {
    /// Live local connections, by id.
    clients: HashMap<ClientId, UnboundedSender<Message>>,
    /// Upstream command id → (client, the id the client used).
    pending: HashMap<u64, (ClientId, Value)>,
}

/// The shared socket; dropping it closes it and every local connection.
pub struct CdpMux {
    local_url: String,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Set the moment the service's socket ends.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for CdpMux {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Why a dial failed. A service at its limit (HTTP 429 or 503 to the
/// upgrade, as browserless answers when its queue is full) is busy, not
/// broken: the caller may retry later.
fn dial_refused(upstream: &str, e: async_tungstenite::tungstenite::Error) -> Error {
    if let async_tungstenite::tungstenite::Error::Http(response) = &e {
        let status = response.status().as_u16();
        if status == 429 || status == 503 {
            return Error::new(
                ErrorCode::BrowserServiceBusy,
                format!(
                    "the browser service at {} is at its limit (HTTP {status}); retry later",
                    crate::remote::shown(upstream)
                ),
            );
        }
    }
    Error::new(
        ErrorCode::DevtoolsInitFailed,
        format!(
            "could not attach to {}: {e}",
            crate::remote::shown(upstream)
        ),
    )
}

impl CdpMux {
    /// Dials `upstream` (a `ws://` or `wss://` URL) once and serves it
    /// locally.
    pub async fn start(upstream: &str) -> Result<CdpMux> {
        let config = WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let (socket, _) =
            async_tungstenite::tokio::connect_async_with_config(upstream, Some(config))
                .await
                .map_err(|e| dial_refused(upstream, e))?;
        crate::sockets::send_commands_unbatched(upstream);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| Error::internal(format!("the local CDP endpoint: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::internal(format!("the local CDP endpoint: {e}")))?
            .port();
        let routes = Arc::new(Mutex::new(Routes::default()));
        let (up_tx, mut up_rx) = unbounded_channel::<String>();
        let (mut sink, mut stream) = socket.split();
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));

        // The service's socket: commands up, answers and events down.
        let down_routes = routes.clone();
        let closing = closed.clone();
        let upstream_task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    command = up_rx.recv() => match command {
                        Some(text) => {
                            if sink.send(Message::text(text)).await.is_err() {
                                break;
                            }
                        }
                        None => break,
                    },
                    message = stream.next() => match message {
                        Some(Ok(Message::Text(text))) => deliver(&down_routes, text.as_str()),
                        Some(Ok(Message::Binary(bytes))) => {
                            if let Ok(text) = std::str::from_utf8(&bytes) {
                                deliver(&down_routes, text);
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => break,
                    },
                }
            }
            closing.store(true, Ordering::Release);
            tracing::warn!("the attached browser's socket closed");
            // Every local connection ends: their owners see the browser go.
            let mut routes = down_routes.lock();
            routes.clients.clear();
            routes.pending.clear();
        });

        // Local connections, each with ids of its own.
        let next_upstream_id = Arc::new(AtomicU64::new(1));
        let accept_routes = routes.clone();
        let accept_task = tokio::spawn(async move {
            let mut next_client: ClientId = 0;
            while let Ok((tcp, _)) = listener.accept().await {
                let _ = tcp.set_nodelay(true);
                next_client += 1;
                let client = next_client;
                let (routes, up_tx, ids) = (
                    accept_routes.clone(),
                    up_tx.clone(),
                    next_upstream_id.clone(),
                );
                tokio::spawn(async move {
                    let config = WebSocketConfig::default()
                        .max_message_size(None)
                        .max_frame_size(None);
                    let Ok(socket) =
                        async_tungstenite::tokio::accept_async_with_config(tcp, Some(config)).await
                    else {
                        return;
                    };
                    serve_client(client, socket, routes, up_tx, ids).await;
                });
            }
        });

        Ok(CdpMux {
            local_url: format!("ws://127.0.0.1:{port}/devtools/browser/mux"),
            tasks: vec![upstream_task, accept_task],
            closed,
        })
    }

    /// Whether the service's socket has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Where the engine's connections dial.
    pub fn local_url(&self) -> &str {
        &self.local_url
    }
}

async fn serve_client(
    client: ClientId,
    socket: async_tungstenite::WebSocketStream<
        async_tungstenite::tokio::TokioAdapter<tokio::net::TcpStream>,
    >,
    routes: Arc<Mutex<Routes>>,
    up_tx: UnboundedSender<String>,
    ids: Arc<AtomicU64>,
) {
    let (mut sink, mut stream) = socket.split();
    let (down_tx, mut down_rx) = unbounded_channel::<Message>();
    routes.lock().clients.insert(client, down_tx);
    let writer = tokio::spawn(async move {
        while let Some(message) = down_rx.recv().await {
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.close(None).await;
    });
    while let Some(Ok(message)) = stream.next().await {
        let text = match message {
            Message::Text(text) => text.as_str().to_string(),
            Message::Close(_) => break,
            _ => continue,
        };
        let Ok(mut command) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let upstream_id = ids.fetch_add(1, Ordering::Relaxed);
        let original = command.get("id").cloned().unwrap_or(Value::Null);
        command["id"] = upstream_id.into();
        routes
            .lock()
            .pending
            .insert(upstream_id, (client, original));
        if up_tx.send(command.to_string()).is_err() {
            break;
        }
    }
    let mut routes = routes.lock();
    routes.clients.remove(&client);
    routes.pending.retain(|_, (owner, _)| *owner != client);
    drop(routes);
    writer.abort();
}

/// An answer goes to the client that asked, under its own id; an event to
/// every client.
fn deliver(routes: &Mutex<Routes>, text: &str) {
    let mut routes = routes.lock();
    match answer_id(text) {
        Some(id) => {
            let Some((client, original)) = routes.pending.remove(&id) else {
                return;
            };
            let Some(tx) = routes.clients.get(&client) else {
                return;
            };
            let _ = tx.send(Message::text(with_id(text, &original)));
        }
        None => {
            routes
                .clients
                .retain(|_, tx| tx.send(Message::text(text.to_string())).is_ok());
        }
    }
}

/// The id of an answer (`{"id":N,...}`), read without parsing the rest (a
/// screenshot's answer is megabytes); `None` for an event.
fn answer_id(text: &str) -> Option<u64> {
    let leading = || -> Option<u64> {
        let rest = text.trim_start().strip_prefix('{')?.trim_start();
        let rest = rest
            .strip_prefix("\"id\"")?
            .trim_start()
            .strip_prefix(':')?;
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    // Chromium puts an answer's id first and an event's method first;
    // anything else is read the slow way.
    if text.trim_start().starts_with("{\"method\"") {
        return None;
    }
    leading().or_else(|| {
        serde_json::from_str::<Value>(text)
            .ok()?
            .get("id")?
            .as_u64()
    })
}

/// `text` with its `id` replaced by `original`.
fn with_id(text: &str, original: &Value) -> String {
    if let Some(rest) = text.trim_start().strip_prefix("{\"id\":") {
        let after: &str = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        return format!("{{\"id\":{original}{after}");
    }
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            value["id"] = original.clone();
            value.to_string()
        }
        Err(_) => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_their_bodies_and_get_the_clients_ids_back() {
        assert_eq!(answer_id(r#"{"id":42,"result":{}}"#), Some(42));
        assert_eq!(answer_id(r#"{"result":{},"id":7}"#), Some(7));
        assert_eq!(
            answer_id(r#"{"method":"Page.loadEventFired","params":{}}"#),
            None
        );
        assert_eq!(
            with_id(r#"{"id":42,"result":{"data":"AAAA"}}"#, &Value::from(3)),
            r#"{"id":3,"result":{"data":"AAAA"}}"#
        );
        let moved = with_id(r#"{"result":{},"id":7}"#, &Value::from(1));
        assert_eq!(serde_json::from_str::<Value>(&moved).unwrap()["id"], 1);
    }

    /// A fake service that, like a launch URL, would be a new browser per
    /// connection: it counts its connections and answers each command with
    /// the number of the connection it came on.
    #[tokio::test]
    async fn two_local_connections_share_one_upstream_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream = format!("ws://{}/chromium?token=T", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicU64::new(0));
        let counted = connections.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::spawn(async move {
                    let mut ws = async_tungstenite::tokio::accept_async(tcp).await.unwrap();
                    ws.send(Message::text(
                        r#"{"method":"Target.targetCreated","params":{}}"#,
                    ))
                    .await
                    .unwrap();
                    while let Some(Ok(Message::Text(text))) = ws.next().await {
                        let command: Value = serde_json::from_str(text.as_str()).unwrap();
                        let answer = serde_json::json!({ "id": command["id"], "result": { "connection": n, "method": command["method"] } });
                        ws.send(Message::text(answer.to_string())).await.unwrap();
                    }
                });
            }
        });
        let mux = CdpMux::start(&upstream).await.unwrap();
        let mut a = async_tungstenite::tokio::connect_async(mux.local_url())
            .await
            .unwrap()
            .0;
        let mut b = async_tungstenite::tokio::connect_async(mux.local_url())
            .await
            .unwrap()
            .0;
        for (socket, method) in [(&mut a, "A.one"), (&mut b, "B.one")] {
            socket
                .send(Message::text(format!(r#"{{"id":1,"method":"{method}"}}"#)))
                .await
                .unwrap();
        }
        for (socket, method) in [(&mut a, "A.one"), (&mut b, "B.one")] {
            let answer = loop {
                let Some(Ok(Message::Text(text))) = socket.next().await else {
                    panic!("the local connection closed")
                };
                let value: Value = serde_json::from_str(text.as_str()).unwrap();
                if value.get("id").is_some() {
                    break value;
                }
            };
            assert_eq!(answer["id"], 1, "{answer}");
            assert_eq!(
                answer["result"]["method"], method,
                "its own answer: {answer}"
            );
            assert_eq!(
                answer["result"]["connection"], 1,
                "one upstream socket: {answer}"
            );
        }
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }
}
