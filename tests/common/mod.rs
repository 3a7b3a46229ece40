//! Shared by the integration binaries: one runtime, one engine (real headless
//! Chromium, the default options: headless-shell with site isolation, the
//! compositor driver) behind real HTTP, and a fixture site on 127.0.0.1.
//! Tests that hold on every driver also run on [`deterministic`] and
//! [`compositor`].

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::Query;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde_json::{Value, json};

pub mod faithful;
pub mod pages;

pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

pub struct Server {
    /// `http://127.0.0.1:PORT/api/v1`
    pub api: String,
    pub app: std::sync::Arc<wabp_core::Engine>,
    pub plugin_dir: PathBuf,
}

pub struct Harness {
    pub server: Server,
    /// `http://127.0.0.1:PORT` of the fixture site.
    pub site: String,
    pub http: reqwest::Client,
}

/// Tests that change engine-wide state (input mode) take this for writing;
/// all others for reading.
static GLOBAL: RwLock<()> = RwLock::new(());

pub fn shared() -> (&'static Harness, RwLockReadGuard<'static, ()>) {
    (harness(), GLOBAL.read().unwrap_or_else(|e| e.into_inner()))
}

pub fn exclusive() -> (&'static Harness, RwLockWriteGuard<'static, ()>) {
    (harness(), GLOBAL.write().unwrap_or_else(|e| e.into_inner()))
}

/// A second shared engine on headless-shell without site isolation: the
/// deterministic (begin-frame) driver.
pub fn deterministic() -> (&'static Harness, RwLockReadGuard<'static, ()>) {
    (
        deterministic_harness(),
        GLOBAL.read().unwrap_or_else(|e| e.into_inner()),
    )
}

/// [`deterministic`], with no other test of the binary running meanwhile.
pub fn deterministic_alone() -> (&'static Harness, RwLockWriteGuard<'static, ()>) {
    (
        deterministic_harness(),
        GLOBAL.write().unwrap_or_else(|e| e.into_inner()),
    )
}

fn deterministic_harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let base = harness();
        block_on(async {
            let plugin_dir = temp_dir("plugins-deterministic");
            prepare_plugin_dir(&plugin_dir);
            let server = start_server_with(plugin_dir, |o| o.site_isolation = false).await;
            base.with_server(server)
        })
    })
}

/// A third shared engine on full Chromium (`/usr/bin/chromium`): the
/// compositor driver as `--headed` and `--connect` get it.
pub fn compositor() -> (&'static Harness, RwLockReadGuard<'static, ()>) {
    (
        compositor_harness(),
        GLOBAL.read().unwrap_or_else(|e| e.into_inner()),
    )
}

/// [`compositor`], with no other test of the binary running meanwhile.
pub fn compositor_alone() -> (&'static Harness, RwLockWriteGuard<'static, ()>) {
    (
        compositor_harness(),
        GLOBAL.write().unwrap_or_else(|e| e.into_inner()),
    )
}

fn compositor_harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let chromium = Path::new("/usr/bin/chromium");
        assert!(
            chromium.exists(),
            "the compositor tests need Debian's chromium (apt-get install chromium)"
        );
        let base = harness();
        block_on(async {
            let plugin_dir = temp_dir("plugins-compositor");
            prepare_plugin_dir(&plugin_dir);
            let server = start_server_with(plugin_dir, |o| {
                o.launch = wabp_core::browser::LaunchMode::Binary(chromium.into());
            })
            .await;
            base.with_server(server)
        })
    })
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        block_on(async {
            let site = start_site().await;
            let plugin_dir = temp_dir("plugins");
            prepare_plugin_dir(&plugin_dir);
            let server = start_server(plugin_dir, None).await;
            Harness {
                server,
                site,
                http: reqwest::Client::new(),
            }
        })
    })
}

/// Hook for a binary to put plugins in place before the engine starts.
pub static PLUGIN_SETUP: OnceLock<fn(&Path)> = OnceLock::new();

fn prepare_plugin_dir(dir: &Path) {
    if let Some(setup) = PLUGIN_SETUP.get() {
        setup(dir);
    }
}

pub fn temp_dir(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("wabp-test-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts an engine + REST server on 127.0.0.1:0 (inside the shared runtime).
pub async fn start_server(plugin_dir: PathBuf, auth_token: Option<String>) -> Server {
    start_server_with(plugin_dir, |options| options.auth_token = auth_token).await
}

/// Like `start_server`, with the options adjusted by `adjust`.
pub async fn start_server_with(
    plugin_dir: PathBuf,
    adjust: impl FnOnce(&mut wabp::Options),
) -> Server {
    let mut options = wabp::Options::default_for_session(temp_dir("session"));
    options.plugin_dir = Some(plugin_dir.clone());
    adjust(&mut options);
    let app = wabp::App::start(options).await.expect(
        "engine failed to start: is Chromium installed? (apt-get install chromium-headless-shell)",
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}/api/v1", listener.local_addr().unwrap());
    let engine = app.engine.clone();
    runtime().spawn(async move { app.serve(listener).await.unwrap() });
    Server {
        api,
        app: engine,
        plugin_dir,
    }
}

/// This server under another site name (`localhost` for `127.0.0.1`): the
/// origin of a cross-site frame.
fn cross_site_origin(headers: &axum::http::HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1")
        .replace("127.0.0.1", "localhost");
    format!("http://{host}")
}

/// The other site than the one this request came to (`127.0.0.1` and
/// `localhost` take turns), for frames nested across sites.
fn other_site_origin(headers: &axum::http::HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1");
    let other = if host.starts_with("localhost") {
        host.replacen("localhost", "127.0.0.1", 1)
    } else {
        host.replacen("127.0.0.1", "localhost", 1)
    };
    format!("http://{other}")
}

/// A WebSocket server that sends a message every millisecond to each
/// client, for a minute at most; its `ws://` address.
async fn start_socket_flood() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    runtime().spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            runtime().spawn(async move {
                let Ok(mut socket) = async_tungstenite::tokio::accept_async(stream).await else {
                    return;
                };
                let until = tokio::time::Instant::now() + Duration::from_secs(60);
                let mut n = 0u64;
                while tokio::time::Instant::now() < until {
                    n += 1;
                    let message = async_tungstenite::tungstenite::Message::text(format!(
                        "{n} {}",
                        "x".repeat(512)
                    ));
                    if socket.send(message).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
    });
    format!("ws://{addr}")
}

/// Server-sent events, one every millisecond, for a minute at most.
async fn event_flood() -> axum::response::Response {
    let events = futures::stream::unfold(0u64, |n| async move {
        if n >= 60_000 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        Some((Ok::<_, std::io::Error>(format!("data: {n}\n\n")), n + 1))
    });
    axum::response::Response::builder()
        .header(axum::http::header::CONTENT_TYPE, "text/event-stream")
        .header(axum::http::header::CACHE_CONTROL, "no-store")
        .body(axum::body::Body::from_stream(events))
        .unwrap()
}

pub async fn start_site() -> String {
    #[derive(serde::Deserialize)]
    struct Slow {
        ms: Option<u64>,
    }
    #[derive(serde::Deserialize)]
    struct Big {
        n: Option<usize>,
    }
    #[derive(serde::Deserialize)]
    struct Label {
        label: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Target {
        url: String,
    }
    #[derive(serde::Deserialize)]
    struct Depth {
        depth: Option<u32>,
    }
    let socket = start_socket_flood().await;
    let router =
        Router::new()
            .route("/", get(|| async { Html(pages::MAIN) }))
            .route("/second", get(|| async { Html(pages::SECOND) }))
            .route("/dialog", get(|| async { Html(pages::DIALOG) }))
            .route("/markup", get(|| async { Html(pages::MARKUP) }))
            .route("/timer", get(|| async { Html(pages::TIMER) }))
            .route("/settle", get(|| async { Html(pages::SETTLE) }))
            .route("/input-lab", get(|| async { Html(pages::INPUT_LAB) }))
            .route("/surface", get(|| async { Html(pages::SURFACE) }))
            .route("/events", get(|| async { Html(pages::EVENTS) }))
            .route("/closer", get(|| async { Html(pages::CLOSER) }))
            .route("/api-page", get(|| async { Html(pages::API) }))
            .route("/form", get(|| async { Html(pages::FORM) }))
            .route("/aria", get(|| async { Html(pages::ARIA) }))
            .route("/attack", get(|| async { Html(pages::ATTACK) }))
            .route(
                "/faithful/{name}",
                get(
                    |axum::extract::Path(name): axum::extract::Path<String>| async move {
                        match faithful::faithful(&name) {
                            Some(page) => Html(page).into_response(),
                            None => axum::http::StatusCode::NOT_FOUND.into_response(),
                        }
                    },
                ),
            )
            .route(
                "/uikits/{file}",
                get(
                    |axum::extract::Path(file): axum::extract::Path<String>| async move {
                        uikit_file(&file)
                    },
                ),
            )
            .route(
                "/hostile/{name}",
                get(
                    |axum::extract::Path(name): axum::extract::Path<String>| async move {
                        match pages::hostile(&name) {
                            Some(page) => Html(page).into_response(),
                            None => axum::http::StatusCode::NOT_FOUND.into_response(),
                        }
                    },
                ),
            )
            .route(
                "/sleep",
                get(|Query(q): Query<Slow>| async move {
                    tokio::time::sleep(Duration::from_millis(q.ms.unwrap_or(1000).min(60_000)))
                        .await;
                    "slept"
                }),
            )
            .route(
                "/redirect-to",
                get(|Query(q): Query<Target>| async move {
                    axum::response::Redirect::temporary(&q.url)
                }),
            )
            .route(
                "/links-to",
                // A whole-page link to `url` and a popup link beside it.
                get(|Query(q): Query<Target>| async move {
                    let url = q.url.replace(['"', '<', '>'], "");
                    Html(format!(
                        "<body style='margin:0'>\
                         <a href=\"{url}\" style='display:block;height:300px'>go</a>\
                         <a href=\"{url}\" target=_blank style='display:block;height:300px'>pop</a>"
                    ))
                }),
            )
            .route(
                "/redirect-loop",
                get(|| async { axum::response::Redirect::temporary("/redirect-loop") }),
            )
            .route(
                "/big",
                get(|Query(q): Query<Big>| async move {
                    Html(pages::big(q.n.unwrap_or(3000).min(20_000)))
                }),
            )
            .route(
                "/frames",
                get(|headers: axum::http::HeaderMap| async move {
                    Html(pages::frames(&cross_site_origin(&headers)))
                }),
            )
            .route(
                "/cross-frame-alert",
                get(|headers: axum::http::HeaderMap| async move {
                    Html(pages::cross_frame_alert(&cross_site_origin(&headers)))
                }),
            )
            .route(
                "/set-cookie",
                get(|| async {
                    (
                        [(
                            axum::http::header::SET_COOKIE,
                            "session=SECRET-c0ffee; Path=/",
                        )],
                        Html(pages::LOGIN),
                    )
                }),
            )
            .route("/event-flood", get(event_flood))
            .route(
                "/socket-flood",
                get(move || {
                    let page = pages::socket_flood(&socket);
                    async move { Html(page) }
                }),
            )
            .route(
                "/deep-frames",
                get(
                    |headers: axum::http::HeaderMap, Query(q): Query<Depth>| async move {
                        Html(pages::deep_frames(
                            q.depth.unwrap_or(10).min(30),
                            &other_site_origin(&headers),
                        ))
                    },
                ),
            )
            .route(
                "/frame-timers",
                get(|headers: axum::http::HeaderMap| async move {
                    Html(pages::frame_timers(&cross_site_origin(&headers)))
                }),
            )
            .route(
                "/frame-ticker",
                get(|Query(q): Query<Label>| async move {
                    Html(pages::frame_ticker(q.label.as_deref().unwrap_or("x")))
                }),
            )
            .route(
                "/frame-inner",
                get(|Query(q): Query<Label>| async move {
                    Html(pages::frame_inner(q.label.as_deref().unwrap_or("Inner")))
                }),
            )
            .route(
                "/api/data",
                get(|| async { axum::Json(json!({ "name": "widget", "id": 42 })) }),
            )
            .route(
                "/api/whoami",
                get(|headers: axum::http::HeaderMap| async move {
                    let cookie = headers
                        .get(axum::http::header::COOKIE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let custom = headers
                        .get("x-wabp-test")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    axum::Json(json!({ "cookie": cookie, "x_wabp_test": custom }))
                }),
            )
            .route(
                "/api/huge",
                get(|| async {
                    (
                        [(axum::http::header::CONTENT_TYPE, "text/plain")],
                        "x".repeat(12 * 1024 * 1024),
                    )
                }),
            )
            .route(
                "/api/bytes",
                get(|| async {
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
                        vec![0u8, 159, 146, 150, 255],
                    )
                }),
            )
            .route(
                "/api/redirect",
                get(|| async { axum::response::Redirect::temporary("/api/data?item=7") }),
            )
            .route(
                "/api/echo",
                axum::routing::post(|body: String| async move { format!("echo:{body}") }),
            )
            .route(
                "/download/report.txt",
                get(|| async {
                    (
                        [
                            (axum::http::header::CONTENT_TYPE, "text/plain"),
                            (
                                axum::http::header::CONTENT_DISPOSITION,
                                "attachment; filename=\"report.txt\"",
                            ),
                        ],
                        "quarterly numbers\n",
                    )
                }),
            )
            .route("/download/slow.bin", get(slow_download))
            .route("/download/dropping.bin", get(dropping_download))
            .route(
                "/api/slow",
                get(|Query(q): Query<Slow>| async move {
                    tokio::time::sleep(Duration::from_millis(q.ms.unwrap_or(300).min(5000))).await;
                    axum::Json(json!({ "message": "slow data arrived" }))
                }),
            );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    runtime().spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// A file of the UI-kit pages (`tests/uikits/dist`, built by
/// `scripts/test-node.sh`).
fn uikit_file(file: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    if file.contains('/') || file.contains("..") {
        return axum::http::StatusCode::NOT_FOUND.into_response();
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/uikits/dist")
        .join(file);
    let Ok(bytes) = std::fs::read(&path) else {
        return (
            axum::http::StatusCode::NOT_FOUND,
            "not built: run bash scripts/test-node.sh",
        )
            .into_response();
    };
    let mime = match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "application/octet-stream",
    };
    ([(axum::http::header::CONTENT_TYPE, mime)], bytes).into_response()
}

/// The bytes of `/download/dropping.bin`.
pub fn dropping_download_bytes() -> Vec<u8> {
    (0..DROPPING_SIZE).map(|i| (i * 7 % 251) as u8).collect()
}

const DROPPING_SIZE: usize = 2_000_000;

/// Requests `/download/dropping.bin` served from an offset (`Range`).
pub static DROPPING_RANGE_REQUESTS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// A download whose server drops the connection half-way through the whole
/// file, and serves the rest to a `Range` request (with a validator, as a
/// resumable server does).
async fn dropping_download(headers: axum::http::HeaderMap) -> axum::response::Response {
    let bytes = dropping_download_bytes();
    let start = headers
        .get(axum::http::header::RANGE)
        .and_then(|r| r.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split('-').next())
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n < DROPPING_SIZE);
    let builder = axum::response::Response::builder()
        .header(axum::http::header::CONTENT_TYPE, "application/octet-stream")
        .header(
            axum::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"dropping.bin\"",
        )
        .header(axum::http::header::ACCEPT_RANGES, "bytes")
        .header(axum::http::header::ETAG, "\"v1\"")
        .header(
            axum::http::header::LAST_MODIFIED,
            "Wed, 21 Oct 2015 07:28:00 GMT",
        );
    match start {
        Some(start) => {
            DROPPING_RANGE_REQUESTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            builder
                .status(206)
                .header(
                    axum::http::header::CONTENT_RANGE,
                    format!("bytes {start}-{}/{DROPPING_SIZE}", DROPPING_SIZE - 1),
                )
                .header(
                    axum::http::header::CONTENT_LENGTH,
                    (DROPPING_SIZE - start).to_string(),
                )
                .body(axum::body::Body::from(bytes[start..].to_vec()))
                .unwrap()
        }
        None => {
            // Half the file, then the connection breaks.
            let half = bytes[..DROPPING_SIZE / 2].to_vec();
            let chunks = futures::stream::iter(vec![
                Ok::<_, std::io::Error>(half),
                Err(std::io::Error::other("the server dropped the connection")),
            ]);
            builder
                .header(
                    axum::http::header::CONTENT_LENGTH,
                    DROPPING_SIZE.to_string(),
                )
                .body(axum::body::Body::from_stream(chunks))
                .unwrap()
        }
    }
}

/// 64 KiB every 200 ms for about 20 s: long enough to watch and cancel.
async fn slow_download() -> axum::response::Response {
    let chunks = futures::stream::unfold(0u32, |n| async move {
        if n >= 100 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        Some((Ok::<_, std::io::Error>(vec![b'x'; 64 * 1024]), n + 1))
    });
    axum::response::Response::builder()
        .header(axum::http::header::CONTENT_TYPE, "application/octet-stream")
        .header(
            axum::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"slow.bin\"",
        )
        .header(
            axum::http::header::CONTENT_LENGTH,
            (100 * 64 * 1024).to_string(),
        )
        .body(axum::body::Body::from_stream(chunks))
        .unwrap()
}

impl Harness {
    /// The same fixture site and client in front of another engine.
    /// How many of `tab`'s frames render out of process, followed through
    /// their own targets (site isolation).
    pub fn out_of_process_frames(&self, tab: &str) -> usize {
        self.server
            .app
            .tab(&wabp_core::Caller::anonymous(), tab)
            .expect("the tab")
            .session
            .frame_targets()
            .expect("frame targets followed")
            .roots()
            .len()
    }

    pub fn with_server(&self, server: Server) -> Harness {
        Harness {
            server,
            site: self.site.clone(),
            http: self.http.clone(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.site, path)
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        send(
            &self.http,
            reqwest::Method::POST,
            &format!("{}{}", self.server.api, path),
            Some(body),
            None,
        )
        .await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        send(
            &self.http,
            reqwest::Method::GET,
            &format!("{}{}", self.server.api, path),
            None,
            None,
        )
        .await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        send(
            &self.http,
            reqwest::Method::DELETE,
            &format!("{}{}", self.server.api, path),
            None,
            None,
        )
        .await
    }

    /// A new tab on `path` of the fixture site; returns its id.
    pub async fn tab_on(&self, path: &str) -> String {
        let (status, tab) = self.post("/tabs", json!({})).await;
        assert_eq!(status, 201, "{tab}");
        let id = tab["id"].as_str().unwrap().to_string();
        let (status, body) = self
            .post(
                &format!("/tabs/{id}/navigate"),
                json!({ "url": self.url(path), "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        id
    }

    pub async fn eval(&self, tab: &str, script: &str) -> Value {
        let (status, body) = self
            .post(&format!("/tabs/{tab}/execute"), json!({ "script": script }))
            .await;
        assert_eq!(status, 200, "{body}");
        body["result"]["value"].clone()
    }

    /// Clicks the centre of the first element matching `selector`, without
    /// screenshots; the status and envelope.
    pub async fn click_on(&self, tab: &str, selector: &str) -> (u16, Value) {
        let (x, y) = self.center(tab, selector).await;
        self.post(
            &format!("/tabs/{tab}/click"),
            json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
        )
        .await
    }

    /// Centre of the first element matching `selector`.
    pub async fn center(&self, tab: &str, selector: &str) -> (f64, f64) {
        let r = self.eval(tab, &format!("(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()")).await;
        (r[0].as_f64().unwrap(), r[1].as_f64().unwrap())
    }
}

/// An action without screenshots on `tab`: its status and answer.
pub async fn act_unseen(h: &Harness, tab: &str, path: &str, mut body: Value) -> (u16, Value) {
    body["screenshot"] = json!({ "area": "none" });
    h.post(&format!("/tabs/{tab}/{path}"), body).await
}

/// [`act_unseen`] that must answer 200: its answer.
pub async fn act_unseen_ok(h: &Harness, tab: &str, path: &str, body: Value) -> Value {
    let (status, answer) = act_unseen(h, tab, path, body.clone()).await;
    assert_eq!(status, 200, "{path} {body}: {answer}");
    answer
}

pub async fn send(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let mut request = http.request(method, url).timeout(Duration::from_secs(60));
    if let Some(body) = body {
        request = request.json(&body);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("request failed");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Decodes an envelope screenshot and returns (width, height, RGBA pixels).
pub fn decode_screenshot(shot: &Value) -> (u32, u32, Vec<u8>) {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("screenshot data"))
        .unwrap();
    decode_webp(&bytes)
}

pub fn decode_webp(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    assert_eq!(&bytes[0..4], b"RIFF");
    assert_eq!(&bytes[8..12], b"WEBP");
    let image = webp::Decoder::new(bytes).decode().expect("valid webp");
    let channels = if image.is_alpha() { 4 } else { 3 };
    let rgba = image
        .chunks_exact(channels)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    (image.width(), image.height(), rgba)
}

/// Polls `check` every 50 ms until it returns Some, for at most `limit`.
pub async fn eventually<T, F, Fut>(limit: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs a program to its end (logs at warn); its stdout and stderr, after
/// checking it succeeded.
pub fn run_to_success(command: &mut std::process::Command) -> (String, String) {
    let output = command.env("RUST_LOG", "warn").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{command:?} failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

/// The arguments after `wabp mcp` for an engine a stdio client starts: a
/// plugin folder and a session folder of its own.
pub fn stdio_engine_args(name: &str) -> Vec<String> {
    let plugins = temp_dir(&format!("{name}-plugins"));
    let session = temp_dir(&format!("{name}-session"));
    vec![
        "--plugins".into(),
        plugins.to_string_lossy().into_owned(),
        "--session-dir".into(),
        session.to_string_lossy().into_owned(),
    ]
}

/// The interpreter of the test virtualenv (`scripts/test-python.sh` makes
/// it, with the official Python MCP SDK, requests and httpx;
/// `scripts/test.sh` exports its path as `WABP_TEST_PYTHON`).
pub fn test_python() -> PathBuf {
    let path = std::env::var_os("WABP_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv/bin/python")
        });
    assert!(
        path.is_file(),
        "{} is missing: run `bash scripts/test-python.sh` (scripts/test.sh does)",
        path.display()
    );
    path
}

/// A free TCP port on 127.0.0.1 (free now; a server takes it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `wabp serve` on `port` with its own session folder and plugin folder,
/// plus `args`, as a child process.
pub fn spawn_engine(session: &Path, port: u16, args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_wabp"))
        .args(["serve", "--port", &port.to_string(), "--session-dir"])
        .arg(session)
        .args(["--plugins"])
        .arg(session.join("plugins"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the wabp binary starts")
}

/// Waits until the engine at `api` says its browser is ready.
pub async fn wait_ready(http: &reqwest::Client, api: &str) {
    let ready = eventually(Duration::from_secs(30), || async {
        let response = http
            .get(format!("{api}/browser/status"))
            .send()
            .await
            .ok()?;
        let body: Value = response.json().await.ok()?;
        (body["data"]["ready"] == true).then_some(())
    })
    .await;
    assert!(ready.is_some(), "engine at {api} never became ready");
}
