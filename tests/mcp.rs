//! The MCP server through a real MCP client (rmcp's), over streamable HTTP
//! at `/mcp` and over stdio (`wabp mcp` as a child process), against real
//! headless Chromium: tools, images, errors as tool results, BrowserLoop's
//! `screenshot`, and a plugin installed while a client is connected showing
//! up as a new tool.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{block_on, shared};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ProtocolVersion, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct Client {
    list_changed: Arc<tokio::sync::watch::Sender<u32>>,
}

impl Client {
    fn new() -> Client {
        Client {
            list_changed: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.send_modify(|n| *n += 1);
    }
}

type Session = RunningService<RoleClient, Client>;

fn mcp_url(server: &common::Server) -> String {
    server.api.replace("/api/v1", "/mcp")
}

async fn connect_http(url: &str, token: Option<&str>) -> Result<Session, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    tokio::time::timeout(Duration::from_secs(20), Client::new().serve(transport))
        .await
        .map_err(|_| "initialize timed out".to_string())?
        .map_err(|e| e.to_string())
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

async fn call(session: &Session, name: &str, arguments: Value) -> CallToolResult {
    tokio::time::timeout(
        Duration::from_secs(120),
        session.call_tool(
            CallToolRequestParams::new(name.to_string()).with_arguments(args(arguments)),
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("{name} timed out"))
    .unwrap_or_else(|e| panic!("{name}: protocol error {e}"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ok(result: CallToolResult, what: &str) -> CallToolResult {
    assert_ne!(result.is_error, Some(true), "{what}: {}", text_of(&result));
    result
}

fn images(result: &CallToolResult) -> Vec<(Vec<u8>, String)> {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_image)
        .map(|i| {
            (
                base64::engine::general_purpose::STANDARD
                    .decode(&i.data)
                    .expect("image data is base64"),
                i.mime_type.clone(),
            )
        })
        .collect()
}

fn is_webp(bytes: &[u8]) -> bool {
    bytes.len() > 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP"
}

/// An action tool's answer: the envelope as JSON without image data first
/// (ABP's clients read `content[0].text`), then the before and after WebP
/// images.
fn assert_envelope(result: &CallToolResult, what: &str) -> Value {
    let shots = images(result);
    assert_eq!(shots.len(), 2, "{what}: before and after images");
    for (bytes, mime) in &shots {
        assert_eq!(mime, "image/webp");
        assert!(is_webp(bytes), "{what}: a WebP image");
    }
    assert!(
        matches!(result.content[0], ContentBlock::Text(_))
            && matches!(result.content[1], ContentBlock::Image(_))
            && matches!(result.content[2], ContentBlock::Image(_)),
        "{what}: the text first, then the images"
    );
    let envelope: Value = serde_json::from_str(&text_of(result)).expect("envelope JSON");
    assert!(envelope.get("result").is_some(), "{envelope}");
    assert!(
        envelope["screenshot_before"].get("data").is_none(),
        "no base64 in the text"
    );
    assert!(envelope["screenshot_after"]["width"].as_u64().unwrap() > 0);
    envelope
}

async fn new_tab(session: &Session) -> String {
    let result = ok(
        call(session, "browser_new_tab", json!({ "active": false })).await,
        "new tab",
    );
    let tab: Value = serde_json::from_str(&text_of(&result)).unwrap();
    tab["id"].as_str().unwrap().to_string()
}

async fn wait_changed(rx: &mut tokio::sync::watch::Receiver<u32>, limit: Duration) -> bool {
    tokio::time::timeout(limit, rx.changed()).await.is_ok()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
fn http_initialize_list_navigate_click_and_screenshot() {
    let (h, _g) = shared();
    block_on(async {
        let session = connect_http(&mcp_url(&h.server), None).await.unwrap();
        let info = session.peer_info().expect("server info");
        assert_eq!(info.server_info.as_ref().unwrap().name, "wabp");
        let tools_cap = info.capabilities.tools.as_ref().expect("tools capability");
        assert_eq!(
            tools_cap.list_changed,
            Some(true),
            "tools.listChanged advertised"
        );

        let tools = session.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for expected in [
            "browser_navigate",
            "browser_click",
            "browser_type",
            "browser_press_key",
            "browser_scroll",
            "browser_screenshot",
            "browser_execute_javascript",
            "browser_get_text",
            "browser_list_tabs",
            "browser_new_tab",
            "browser_close_tab",
            "browser_activate_tab",
            "browser_back",
            "browser_forward",
            "browser_reload",
            "browser_wait",
            "browser_dialog",
            "browser_file_chooser",
            "browser_select",
            "browser_downloads",
            "browser_network",
            "browser_curl",
            "browser_execution",
            "browser_snapshot",
            "screenshot",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        let click = tools.iter().find(|t| t.name == "browser_click").unwrap();
        let props = click.input_schema.get("properties").unwrap();
        for key in ["x", "y", "tab_id", "wait_until", "screenshot"] {
            assert!(
                props.get(key).is_some(),
                "browser_click schema lacks {key}: {props}"
            );
        }
        let js = tools
            .iter()
            .find(|t| t.name == "browser_execute_javascript")
            .unwrap();
        assert!(js.input_schema["properties"].get("expression").is_some());

        let tab = new_tab(&session).await;
        let mut latencies = Vec::new();
        let started = Instant::now();
        let nav = ok(
            call(
                &session,
                "browser_navigate",
                json!({ "tab_id": tab, "url": h.url("/") }),
            )
            .await,
            "navigate",
        );
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        let envelope = assert_envelope(&nav, "navigate");
        assert!(
            envelope["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["type"] == "navigation"),
            "{envelope}"
        );

        for i in 0..5 {
            let started = Instant::now();
            let click = ok(
                call(
                    &session,
                    "browser_click",
                    json!({ "tab_id": tab, "x": 20 + i, "y": 20 }),
                )
                .await,
                "click",
            );
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_envelope(&click, "click");
        }

        let shot = ok(
            call(&session, "browser_screenshot", json!({ "tab_id": tab })).await,
            "browser_screenshot",
        );
        assert!(
            !images(&shot).is_empty(),
            "browser_screenshot returns images"
        );

        let title = ok(
            call(
                &session,
                "browser_execute_javascript",
                json!({ "tab_id": tab, "expression": "1 + 2" }),
            )
            .await,
            "execute",
        );
        let value: Value = serde_json::from_str(&text_of(&title)).unwrap();
        assert_eq!(value["result"]["value"], 3, "{value}");

        let snapshot = ok(
            call(
                &session,
                "browser_snapshot",
                json!({ "tab_id": tab, "include_screenshot": true }),
            )
            .await,
            "snapshot",
        );
        assert_eq!(images(&snapshot).len(), 1, "snapshot with a screenshot");
        // The tree first, then the rest as JSON, then the image.
        assert!(matches!(snapshot.content[2], ContentBlock::Image(_)));
        let tree = snapshot.content[0]
            .as_text()
            .expect("the tree as text")
            .text
            .clone();
        assert!(tree.contains("[e"), "refs in the tree: {tree}");
        let text = ok(
            call(&session, "browser_get_text", json!({ "tab_id": tab })).await,
            "get text",
        );
        assert!(!text_of(&text).is_empty());

        let none = ok(
            call(
                &session,
                "browser_click",
                json!({ "tab_id": tab, "x": 5, "y": 5, "screenshot": { "area": "none" } }),
            )
            .await,
            "click without screenshots",
        );
        assert!(images(&none).is_empty(), "area none: no images");

        // The same clicks through REST, for comparison.
        let mut rest = Vec::new();
        for i in 0..5 {
            let started = Instant::now();
            let (status, _) = h
                .post(
                    &format!("/tabs/{tab}/click"),
                    json!({ "x": 20 + i, "y": 20 }),
                )
                .await;
            assert_eq!(status, 200);
            rest.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        ok(
            call(&session, "browser_close_tab", json!({ "tab_id": tab })).await,
            "close",
        );
        eprintln!(
            "mcp over http: navigate {:.0} ms, click median {:.0} ms (tool call round trip with both screenshots); REST click median {:.0} ms",
            latencies[0],
            median(latencies[1..].to_vec()),
            median(rest)
        );
        session.cancel().await.ok();
    });
}

#[test]
fn errors_come_back_as_tool_results() {
    let (h, _g) = shared();
    block_on(async {
        let session = connect_http(&mcp_url(&h.server), None).await.unwrap();
        let cases = [
            (
                "browser_navigate",
                json!({ "tab_id": "tab_nope", "url": "http://127.0.0.1:8/" }),
                "not found",
            ),
            (
                "browser_navigate",
                json!({ "tab_id": "tab_nope" }),
                "missing field \"url\"",
            ),
            (
                "browser_navigate",
                json!({ "tab_id": "tab_nope", "url": "file:///etc/passwd" }),
                "not allowed",
            ),
            (
                "browser_navigate",
                json!({ "tab_id": "tab_nope", "url": "javascript:alert(1)" }),
                "not allowed",
            ),
            (
                "browser_click",
                json!({ "tab_id": "tab_nope", "x": 1, "y": 1 }),
                "not found",
            ),
            // Another engine's tab (a fleet): where to send it, not "not found".
            (
                "browser_click",
                json!({ "tab_id": "tab_0123456789abcdef.engine-elsewhere", "x": 1, "y": 1 }),
                "held by engine engine-elsewhere",
            ),
            ("browser_wait", json!({ "ms": 999999 }), "\"ms\""),
            (
                "browser_dialog",
                json!({ "tab_id": "tab_nope", "action": "shout" }),
                "expected one of \"get\", \"accept\", \"dismiss\"",
            ),
            ("no_such_tool", json!({}), "unknown tool"),
            (
                "screenshot",
                json!({ "url": "http://127.0.0.1:9/", "width": 100 }),
                "Screenshot capture failed: Width must be at least 200",
            ),
            (
                "screenshot",
                json!({ "url": "javascript:alert(1)" }),
                "Screenshot capture failed: Invalid URL format",
            ),
            (
                "screenshot",
                json!({ "url": h.url("/"), "cookies": "[{\"name\":\"a\",\"value\":\"hunter2\",\"domain\":\"evil.example\"}]" }),
                "does not match",
            ),
        ];
        for (tool, arguments, expected) in cases {
            let result = call(&session, tool, arguments.clone()).await;
            let text = text_of(&result);
            assert_eq!(result.is_error, Some(true), "{tool} {arguments}: {text}");
            assert!(text.contains(expected), "{tool} {arguments}: {text}");
            assert!(
                !text.contains("hunter2"),
                "cookie values never echoed: {text}"
            );
        }
        // The session still works after all of them.
        ok(
            call(&session, "browser_list_tabs", json!({})).await,
            "list tabs",
        );
        session.cancel().await.ok();
    });
}

/// A page that records the Cookie and User-Agent headers it was asked with.
async fn recording_site() -> (String, Arc<Mutex<Vec<(String, String)>>>) {
    use axum::response::Html;
    let seen: Arc<Mutex<Vec<(String, String)>>> = Default::default();
    let record = seen.clone();
    let router = axum::Router::new().route(
        "/",
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let record = record.clone();
            async move {
                let header = |name: axum::http::HeaderName| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string()
                };
                record.lock().unwrap().push((
                    header(axum::http::header::COOKIE),
                    header(axum::http::header::USER_AGENT),
                ));
                Html(
                    "<html><body style='margin:0;height:3000px;background:#eee'>\
                     <div id='box' style='position:absolute;top:1500px;left:40px;width:120px;height:80px;background:#c33'></div>\
                     </body></html>",
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    common::runtime().spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{addr}/"), seen)
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[1..4], b"PNG");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (w, h)
}

#[test]
fn browserloop_screenshot_in_a_tab_of_its_own() {
    let (h, _g) = shared();
    block_on(async {
        let session = connect_http(&mcp_url(&h.server), None).await.unwrap();
        let (site, seen) = recording_site().await;

        let started = Instant::now();
        let result = ok(
            call(
                &session,
                "screenshot",
                json!({
                    "url": site,
                    "width": 400,
                    "height": 300,
                    "format": "png",
                    "waitForNetworkIdle": false,
                    "userAgent": "wabp-test-agent/1.0",
                    "cookies": [
                        { "name": "session_id", "value": "abc123", "path": "/" },
                        { "name": "theme", "value": "dark", "domain": "127.0.0.1" }
                    ]
                }),
            )
            .await,
            "screenshot png",
        );
        let png_ms = started.elapsed().as_secs_f64() * 1000.0;
        let shots = images(&result);
        assert_eq!(shots.len(), 1);
        assert_eq!(shots[0].1, "image/png");
        assert_eq!(png_size(&shots[0].0), (400, 300));
        assert!(
            matches!(result.content[0], ContentBlock::Image(_)),
            "image first"
        );
        let meta: Value = serde_json::from_str(&text_of(&result)).unwrap();
        assert_eq!(meta["metadata"]["width"], 400, "{meta}");
        assert_eq!(meta["metadata"]["viewport"]["height"], 300, "{meta}");
        assert_eq!(
            meta["metadata"]["configuration"]["userAgent"], "custom",
            "{meta}"
        );
        assert!(
            !meta.to_string().contains("abc123"),
            "no cookie values in metadata"
        );
        {
            let seen = seen.lock().unwrap();
            let (cookie, agent) = seen.last().expect("the page was loaded");
            assert!(
                cookie.contains("session_id=abc123") && cookie.contains("theme=dark"),
                "{cookie}"
            );
            assert_eq!(agent, "wabp-test-agent/1.0");
        }

        // Default format (WebP), full page, network idle.
        let started = Instant::now();
        let full = ok(
            call(
                &session,
                "screenshot",
                json!({ "url": site, "width": 300, "height": 200, "fullPage": true }),
            )
            .await,
            "full page",
        );
        let webp_ms = started.elapsed().as_secs_f64() * 1000.0;
        let shots = images(&full);
        assert_eq!(shots[0].1, "image/webp");
        assert!(is_webp(&shots[0].0));
        let meta: Value = serde_json::from_str(&text_of(&full)).unwrap();
        assert_eq!(meta["metadata"]["height"], 3000, "full page height: {meta}");

        // An element, as JPEG.
        let element = ok(
            call(
                &session,
                "screenshot",
                json!({ "url": site, "selector": "#box", "format": "jpeg", "quality": 50 }),
            )
            .await,
            "element",
        );
        let shots = images(&element);
        assert_eq!(shots[0].1, "image/jpeg");
        assert_eq!(&shots[0].0[0..2], &[0xff, 0xd8], "a JPEG");
        let meta: Value = serde_json::from_str(&text_of(&element)).unwrap();
        assert_eq!(
            (
                meta["metadata"]["width"].as_u64(),
                meta["metadata"]["height"].as_u64()
            ),
            (Some(120), Some(80)),
            "{meta}"
        );

        // The same operation over REST: the image as base64 beside the
        // metadata, the same argument checks (a 400 that names the field).
        let (status, answer) = h
            .post(
                "/screenshot",
                json!({ "url": site, "width": 320, "height": 240, "format": "png", "waitForNetworkIdle": false }),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["screenshot"]["mime"], "image/png", "{answer}");
        let png = base64::engine::general_purpose::STANDARD
            .decode(answer["screenshot"]["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(png_size(&png), (320, 240));
        assert_eq!(answer["metadata"]["viewport"]["width"], 320, "{answer}");
        for (body, says) in [
            (
                json!({ "url": site, "width": 100 }),
                "Width must be at least 200",
            ),
            (json!({ "url": site, "format": "gif" }), "format"),
            (
                json!({ "url": site, "cookies": [{ "name": "a", "value": "hunter2", "domain": "evil.example" }] }),
                "does not match",
            ),
            (json!({ "url": site, "colour": "red" }), "colour"),
        ] {
            let (status, answer) = h.post("/screenshot", body).await;
            assert_eq!(status, 400, "{answer}");
            let error = answer["error"].as_str().unwrap();
            assert!(
                error.contains(says) && !error.contains("hunter2"),
                "{says}: {answer}"
            );
        }

        let missing = call(
            &session,
            "screenshot",
            json!({ "url": site, "selector": "#nope" }),
        )
        .await;
        assert_eq!(missing.is_error, Some(true));
        assert!(
            text_of(&missing).contains("Element not found: #nope"),
            "{}",
            text_of(&missing)
        );

        // The temporary tabs are gone, and the cookies never reached the agent's tabs.
        // (Other tests open tabs in parallel: look for the site, not a count.)
        let tabs = h
            .server
            .app
            .list_tabs(&wabp_core::Caller::anonymous())
            .await
            .unwrap();
        assert!(
            !tabs.iter().any(|t| t.url.starts_with(&site)),
            "a temporary tab is left or listed: {tabs:?}"
        );
        let tab = new_tab(&session).await;
        ok(
            call(
                &session,
                "browser_navigate",
                json!({ "tab_id": tab, "url": site, "screenshot": { "area": "none" } }),
            )
            .await,
            "nav",
        );
        let (cookie, agent) = seen.lock().unwrap().last().cloned().unwrap();
        assert!(
            !cookie.contains("abc123"),
            "agent tab got the screenshot's cookie: {cookie}"
        );
        assert_ne!(agent, "wabp-test-agent/1.0");
        ok(
            call(&session, "browser_close_tab", json!({ "tab_id": tab })).await,
            "close",
        );
        eprintln!(
            "mcp screenshot tool: png 400x300 {png_ms:.0} ms, webp full page {webp_ms:.0} ms"
        );
        session.cancel().await.ok();
    });
}

/// Copies a built test plugin into `dest/<folder>` (component first: the
/// watcher reloads once the manifest is there).
fn install(krate: &str, dest: &Path, folder: &str) {
    let src = Path::new(wabp::TEST_PLUGINS_SRC).join(krate);
    let manifest = std::fs::read_to_string(src.join("plugin.toml")).unwrap();
    let built = Path::new(wabp::TEST_PLUGINS_DIR).join(format!("{}.wasm", krate.replace('-', "_")));
    let dir = dest.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let staging = dir.join(".incoming");
    std::fs::copy(&built, &staging).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    std::fs::rename(&staging, dir.join("plugin.wasm")).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
}

#[test]
fn a_plugin_installed_while_connected_becomes_a_tool() {
    let (h, _g) = shared();
    block_on(async {
        let client = Client::new();
        let mut changed = client.list_changed.subscribe();
        let transport = StreamableHttpClientTransport::from_uri(mcp_url(&h.server));
        let session = client.serve(transport).await.unwrap();
        let before = session.list_all_tools().await.unwrap();
        assert!(!before.iter().any(|t| t.name == "browser_echo_version"));
        // A second client on protocol 2026-07-28 (no initialize, no
        // session): it hears about tool changes through subscriptions/listen.
        let modern = Client::new()
            .serve_with_lifecycle(
                StreamableHttpClientTransport::from_uri(mcp_url(&h.server)),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("server/discover on 2026-07-28");
        let mut subscription = modern
            .listen(SubscriptionFilter::builder().tools_list_changed().build())
            .await
            .expect("subscriptions/listen");
        assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));

        let installed = Instant::now();
        install("test-echo-v1", &h.server.plugin_dir, "test-echo");
        assert!(
            wait_changed(&mut changed, Duration::from_secs(20)).await,
            "no notifications/tools/list_changed within 20 s"
        );
        let notified_ms = installed.elapsed().as_secs_f64() * 1000.0;
        let heard = tokio::time::timeout(Duration::from_secs(20), subscription.next()).await;
        assert!(
            matches!(
                heard,
                Ok(Ok(Some(ServerNotification::ToolListChangedNotification(_))))
            ),
            "the 2026-07-28 subscription got {heard:?}"
        );
        let modern_tools = modern.list_all_tools().await.unwrap();
        assert!(
            modern_tools
                .iter()
                .any(|t| t.name == "browser_echo_version")
        );
        let tools = session.list_all_tools().await.unwrap();
        let echo = tools
            .iter()
            .find(|t| t.name == "browser_echo_version")
            .expect("the plugin's action is a tool now");
        assert!(echo.input_schema["properties"].get("tab_id").is_some());
        let listed_ms = installed.elapsed().as_secs_f64() * 1000.0;

        let tab = new_tab(&session).await;
        let result = ok(
            call(
                &session,
                "browser_echo_version",
                json!({ "tab_id": tab, "word": "hi", "screenshot": { "area": "none" } }),
            )
            .await,
            "plugin tool",
        );
        let envelope: Value = serde_json::from_str(&text_of(&result)).unwrap();
        assert_eq!(envelope["result"]["version"], 1, "{envelope}");
        assert_eq!(envelope["result"]["params"]["word"], "hi", "{envelope}");

        // Removing it takes the tool away again.
        std::fs::remove_dir_all(h.server.plugin_dir.join("test-echo")).unwrap();
        assert!(
            wait_changed(&mut changed, Duration::from_secs(20)).await,
            "no notification on removal"
        );
        let tools = session.list_all_tools().await.unwrap();
        assert!(!tools.iter().any(|t| t.name == "browser_echo_version"));
        let gone = call(&session, "browser_echo_version", json!({ "tab_id": tab })).await;
        assert_eq!(gone.is_error, Some(true), "{}", text_of(&gone));
        ok(
            call(&session, "browser_close_tab", json!({ "tab_id": tab })).await,
            "close",
        );
        eprintln!(
            "plugin install to tools/list_changed: {notified_ms:.0} ms; to the tool listed: {listed_ms:.0} ms"
        );
        session.cancel().await.ok();
        drop(subscription);
        modern.cancel().await.ok();
    });
}

/// Tool results' JSON text (the last text block).
fn json_of(result: &CallToolResult) -> Value {
    let text = result
        .content
        .iter()
        .rev()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

#[test]
fn each_mcp_session_acts_for_the_user_of_its_url() {
    let (h, _g) = shared();
    block_on(async {
        let base = mcp_url(&h.server);
        let alice = connect_http(&format!("{base}?userId=mcp-alice"), None)
            .await
            .unwrap();
        let bob = connect_http(&format!("{base}?userId=mcp-bob"), None)
            .await
            .unwrap();
        let nobody = connect_http(&base, None).await.unwrap();
        let created = ok(
            call(
                &alice,
                "browser_new_tab",
                json!({ "url": h.url("/api-page") }),
            )
            .await,
            "alice's tab",
        );
        let tab = json_of(&created)["id"].as_str().unwrap().to_string();
        // The tab lives in alice's context: REST lists it for her only.
        let (_, listed) = h.get("/tabs?userId=mcp-alice").await;
        assert!(listed.to_string().contains(&tab), "{listed}");
        let (_, listed) = h.get("/tabs?userId=mcp-bob").await;
        assert!(!listed.to_string().contains(&tab), "{listed}");
        // Alice's active tab is hers: no tab_id needed.
        ok(
            call(
                &alice,
                "browser_execute_javascript",
                json!({ "expression": "document.title = 'alice'" }),
            )
            .await,
            "alice acts on her active tab",
        );
        for (who, session) in [("bob", &bob), ("no user", &nobody)] {
            let tabs = ok(call(session, "browser_list_tabs", json!({})).await, who);
            assert!(!text_of(&tabs).contains(&tab), "{who}: {}", text_of(&tabs));
            for (tool, args) in [
                (
                    "browser_execute_javascript",
                    json!({ "tab_id": tab, "expression": "document.title = 'taken'" }),
                ),
                ("browser_close_tab", json!({ "tab_id": tab })),
                ("browser_snapshot", json!({ "tab_id": tab })),
                (
                    "browser_network",
                    json!({ "tab_id": tab, "source": "live" }),
                ),
                (
                    "browser_network",
                    json!({ "tab_id": tab, "save_tag": "stolen" }),
                ),
            ] {
                let result = call(session, tool, args.clone()).await;
                assert_eq!(
                    result.is_error,
                    Some(true),
                    "{who} {tool} {args}: {}",
                    text_of(&result)
                );
                assert!(
                    text_of(&result).contains("not found"),
                    "{who} {tool}: {}",
                    text_of(&result)
                );
            }
        }
        // Bob has no active tab of his own yet: alice's is not his default.
        let result = call(&bob, "browser_get_text", json!({})).await;
        assert_eq!(result.is_error, Some(true), "{}", text_of(&result));
        // Saved network calls: alice's tag is invisible to bob.
        ok(
            call(
                &alice,
                "browser_network",
                json!({ "save_tag": "mcp-alice-net" }),
            )
            .await,
            "alice saves",
        );
        let mine = ok(
            call(&alice, "browser_network", json!({ "tag": "mcp-alice-net" })).await,
            "alice reads",
        );
        assert!(
            json_of(&mine)["total"].as_u64().unwrap() > 0,
            "{}",
            text_of(&mine)
        );
        let theirs = ok(
            call(&bob, "browser_network", json!({ "tag": "mcp-alice-net" })).await,
            "bob reads",
        );
        assert_eq!(json_of(&theirs)["total"], 0, "{}", text_of(&theirs));
        let (_, title) = h
            .post(
                &format!("/tabs/{tab}/execute?userId=mcp-alice"),
                json!({ "script": "document.title" }),
            )
            .await;
        assert_eq!(title["result"]["value"], "alice");
        ok(
            call(&alice, "browser_close_tab", json!({ "tab_id": tab })).await,
            "alice closes",
        );
        for s in [alice, bob, nobody] {
            s.cancel().await.ok();
        }
    });
}

#[test]
fn http_requires_the_bearer_token_when_one_is_set() {
    let (h, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("mcp-auth-plugins"), |o| {
            o.auth_token = Some("s3cret-token-0123456789".into());
        })
        .await;
        let url = mcp_url(&server);
        assert!(connect_http(&url, None).await.is_err(), "no token: refused");
        assert!(
            connect_http(&url, Some("wrong")).await.is_err(),
            "wrong token: refused"
        );
        let session = connect_http(&url, Some("s3cret-token-0123456789"))
            .await
            .expect("right token");
        ok(
            call(&session, "browser_list_tabs", json!({})).await,
            "list tabs",
        );
        session.cancel().await.ok();
        let _ = h;
        server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn http_per_user_tokens_act_as_their_user_within_their_scopes() {
    let (h, _g) = shared();
    block_on(async {
        let dir = common::temp_dir("mcp-tokens");
        let tokens = dir.join("tokens.toml");
        std::fs::write(
            &tokens,
            "[[token]]\ntoken = \"alice-token-0123456789\"\nuser = \"alice\"\nscopes = [\"read\", \"act\"]\n\n\
             [[token]]\ntoken = \"bob-token-0123456789\"\nuser = \"bob\"\nscopes = [\"read\", \"act\", \"script\"]\n",
        )
        .unwrap();
        let server = common::start_server_with(common::temp_dir("mcp-tokens-plugins"), |o| {
            o.auth_tokens_file = Some(tokens);
        })
        .await;
        let url = mcp_url(&server);
        assert!(connect_http(&url, Some("nobody-0123456789")).await.is_err());
        assert!(
            connect_http(&format!("{url}?userId=bob"), Some("alice-token-0123456789"))
                .await
                .is_err(),
            "alice's token may not act as bob"
        );
        let alice = connect_http(&url, Some("alice-token-0123456789"))
            .await
            .unwrap();
        let bob = connect_http(&url, Some("bob-token-0123456789"))
            .await
            .unwrap();
        let created = ok(
            call(&alice, "browser_new_tab", json!({ "url": h.url("/") })).await,
            "alice's tab",
        );
        let tab = json_of(&created)["id"].as_str().unwrap().to_string();
        let script = call(
            &alice,
            "browser_execute_javascript",
            json!({ "tab_id": tab, "script": "1" }),
        )
        .await;
        assert_eq!(script.is_error, Some(true));
        assert!(
            text_of(&script).contains("`script` scope"),
            "{}",
            text_of(&script)
        );
        let curl = call(
            &alice,
            "browser_curl",
            json!({ "tab_id": tab, "url": h.url("/api/data") }),
        )
        .await;
        assert!(
            text_of(&curl).contains("`script` scope"),
            "{}",
            text_of(&curl)
        );
        // Bob sees none of it and can't touch it.
        let tabs = ok(
            call(&bob, "browser_list_tabs", json!({})).await,
            "bob lists",
        );
        assert!(!text_of(&tabs).contains(&tab), "{}", text_of(&tabs));
        let touched = call(
            &bob,
            "browser_execute_javascript",
            json!({ "tab_id": tab, "script": "1" }),
        )
        .await;
        assert_eq!(touched.is_error, Some(true));
        assert!(
            text_of(&touched).contains("NOT_FOUND") || text_of(&touched).contains("not found"),
            "{}",
            text_of(&touched)
        );
        for s in [alice, bob] {
            s.cancel().await.ok();
        }
        server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn policy_denials_and_asks_are_tool_errors_with_the_same_text() {
    let (h, _g) = shared();
    block_on(async {
        let policy = common::temp_dir("mcp-policy").join("policy.toml");
        std::fs::write(
            &policy,
            "ask = [\"script\"]\n[navigation]\ndeny = [\"localhost\"]\n",
        )
        .unwrap();
        let server = common::start_server_with(common::temp_dir("mcp-policy-plugins"), |o| {
            o.policy_file = Some(policy);
        })
        .await;
        let session = connect_http(&mcp_url(&server), None).await.unwrap();
        let created = ok(
            call(&session, "browser_new_tab", json!({ "url": h.url("/") })).await,
            "new tab",
        );
        let tab = json_of(&created)["id"].as_str().unwrap().to_string();
        let denied = call(
            &session,
            "browser_navigate",
            json!({ "tab_id": tab, "url": "http://localhost:1/" }),
        )
        .await;
        assert_eq!(denied.is_error, Some(true));
        assert!(
            text_of(&denied).starts_with("Action denied by approval policy: "),
            "{}",
            text_of(&denied)
        );
        // The one-shot screenshot opens pages too: the same door.
        let shot = call(
            &session,
            "screenshot",
            json!({ "url": "http://localhost:1/" }),
        )
        .await;
        assert_eq!(shot.is_error, Some(true));
        assert!(
            text_of(&shot).contains("Action denied by approval policy"),
            "{}",
            text_of(&shot)
        );
        let asked = call(
            &session,
            "browser_execute_javascript",
            json!({ "tab_id": tab, "expression": "1" }),
        )
        .await;
        assert_eq!(asked.is_error, Some(true));
        let text = text_of(&asked);
        assert!(text.starts_with("Approval required: "), "{text}");
        assert!(text.contains("\"approval_id\":\"apr_"), "{text}");
        session.cancel().await.ok();
        server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn stdio_with_a_user_id_acts_for_that_user_only() {
    let (h, _g) = shared();
    block_on(async {
        let session_dir = common::temp_dir("mcp-stdio-user-session");
        let stderr = std::fs::File::create(session_dir.join("stderr.log")).unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_wabp"));
        command
            .arg("mcp")
            .args(["--user-id", "stdio-carol", "--plugins"])
            .arg(common::temp_dir("mcp-stdio-user-plugins"))
            .arg("--session-dir")
            .arg(&session_dir);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::from(stderr))
            .spawn()
            .unwrap();
        let session = tokio::time::timeout(Duration::from_secs(60), Client::new().serve(transport))
            .await
            .expect("initialize over stdio timed out")
            .unwrap();
        // The engine's first tab has no user: not carol's.
        let tabs = ok(call(&session, "browser_list_tabs", json!({})).await, "list");
        assert_eq!(json_of(&tabs), json!([]), "{}", text_of(&tabs));
        let result = call(&session, "browser_navigate", json!({ "url": h.url("/") })).await;
        assert_eq!(result.is_error, Some(true), "no active tab of hers yet");
        let created = ok(
            call(
                &session,
                "browser_new_tab",
                json!({ "url": h.url("/second") }),
            )
            .await,
            "new tab",
        );
        let tab = json_of(&created)["id"].as_str().unwrap().to_string();
        let tabs = ok(call(&session, "browser_list_tabs", json!({})).await, "list");
        assert_eq!(
            json_of(&tabs).as_array().unwrap().len(),
            1,
            "{}",
            text_of(&tabs)
        );
        assert!(text_of(&tabs).contains(&tab));
        let text = ok(
            call(&session, "browser_get_text", json!({ "selector": "h1" })).await,
            "text",
        );
        assert_eq!(text_of(&text), "Second page");
        session.cancel().await.ok();
    });
}

#[test]
fn stdio_subcommand_serves_the_same_tools() {
    let (h, _g) = shared();
    block_on(async {
        let session_dir = common::temp_dir("mcp-stdio-session");
        let stderr = std::fs::File::create(session_dir.join("stderr.log")).unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_wabp"));
        command
            .arg("mcp")
            .arg("--plugins")
            .arg(common::temp_dir("mcp-stdio-plugins"))
            .arg("--session-dir")
            .arg(&session_dir)
            .env("RUST_LOG", "info");
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::from(stderr))
            .spawn()
            .unwrap();
        let started = Instant::now();
        let session = tokio::time::timeout(Duration::from_secs(60), Client::new().serve(transport))
            .await
            .expect("initialize over stdio timed out")
            .unwrap_or_else(|e| {
                panic!(
                    "stdio initialize failed: {e}\n{}",
                    std::fs::read_to_string(session_dir.join("stderr.log")).unwrap_or_default()
                )
            });
        let init_ms = started.elapsed().as_secs_f64() * 1000.0;
        let tools = session.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "browser_navigate"));
        assert!(tools.iter().any(|t| t.name == "browser_click"));
        assert!(tools.iter().any(|t| t.name == "screenshot"));

        // The first tab is the active one: no tab_id needed.
        let nav = ok(
            call(&session, "browser_navigate", json!({ "url": h.url("/") })).await,
            "navigate over stdio",
        );
        assert_envelope(&nav, "navigate over stdio");
        let bad = call(&session, "browser_get_text", json!({ "tab_id": 7 })).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(
            text_of(&bad).contains("\"tab_id\" must be a string"),
            "{}",
            text_of(&bad)
        );

        session.cancel().await.ok();
        let log = std::fs::read_to_string(session_dir.join("stderr.log")).unwrap_or_default();
        assert!(log.contains("MCP on stdio"), "logs go to stderr: {log}");
        eprintln!("mcp over stdio: spawn + browser start + initialize {init_ms:.0} ms");
    });
}

#[test]
fn example_client_configs_point_at_wabp() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mcp");
    let read = |name: &str| -> Value {
        let text =
            std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
    };
    for name in ["claude_desktop_config.json", ".mcp.json"] {
        let config = read(name);
        let servers = config["mcpServers"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: mcpServers"));
        let stdio = &servers["wabp"];
        assert_eq!(stdio["command"], "wabp", "{name}");
        assert_eq!(stdio["args"][0], "mcp", "{name}");
    }
    let project = read(".mcp.json");
    let http = &project["mcpServers"]["wabp-http"];
    assert_eq!(http["type"], "http");
    assert_eq!(http["url"], "http://127.0.0.1:8222/mcp");
}

/// Runs tests/mcp_python_client.py and returns its JSON lines, one per
/// connection (initialize handshake, then 2026-07-28 discovery).
async fn python_client(args: &[&str]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python_client.py");
    let mut command = tokio::process::Command::new(common::test_python());
    command.arg(script).args(args).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the Python client finished within 300 s")
        .expect("the Python client starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python {args:?} failed\nstdout:\n{stdout}\nstderr (tail):\n{}",
        stderr
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

fn assert_both_protocols(runs: &[Value], transport: &str) {
    let protocols: Vec<&str> = runs.iter().filter_map(|r| r["protocol"].as_str()).collect();
    assert_eq!(
        protocols,
        ["2025-11-25", "2026-07-28"],
        "{transport}: {runs:?}"
    );
    for run in runs {
        assert_eq!(run["server"], "wabp", "{transport}: {run}");
        assert!(run["tools"].as_u64().unwrap() >= 25, "{transport}: {run}");
        assert_eq!(
            run["navigate_events"][0], "navigation",
            "{transport}: {run}"
        );
        assert_eq!(
            run["click_result"]["status"], "clicked",
            "{transport}: {run}"
        );
    }
}

/// A second, independent client: the official Python SDK over both
/// transports and both ways of connecting (initialize, and the 2026-07-28
/// `server/discover`), calling tools, reading WebP images and an isError.
#[test]
fn the_python_sdk_client_works_over_http_and_stdio() {
    let (h, _g) = shared();
    block_on(async {
        let page = h.url("/");
        let http = python_client(&["http", &mcp_url(&h.server), &page]).await;
        assert_both_protocols(&http, "http");

        let mut args = vec![
            "stdio".to_string(),
            env!("CARGO_BIN_EXE_wabp").into(),
            page.clone(),
        ];
        args.extend(common::stdio_engine_args("mcp-python-stdio"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let stdio = python_client(&args).await;
        assert_both_protocols(&stdio, "stdio");
    });
}

/// A client that accepts only JSON (a `curl | jq` pipeline) is answered with
/// plain `application/json`, without a session, tool calls included.
#[test]
fn json_only_clients_get_plain_json_answers() {
    let (h, _g) = shared();
    block_on(async {
        let url = mcp_url(&h.server);
        let post = |body: Value| {
            h.http
                .post(&url)
                .header("Accept", "application/json")
                .header("MCP-Protocol-Version", "2025-06-18")
                .json(&body)
                .send()
        };
        let answer = post(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "curl", "version": "1" } }
        }))
        .await
        .unwrap();
        assert_eq!(answer.status(), 200);
        let kind = answer
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(kind.starts_with("application/json"), "{kind}");
        assert!(answer.headers().get("mcp-session-id").is_none());
        let body: Value = answer.json().await.unwrap();
        assert!(body["result"]["serverInfo"].is_object(), "{body}");

        let answer = post(json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "browser_list_tabs", "arguments": {} }
        }))
        .await
        .unwrap();
        assert_eq!(answer.status(), 200);
        let body: Value = answer.json().await.unwrap();
        let text = body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("\"id\""),
            "the tab list as text first: {body}"
        );

        // Accepting both, a client gets a session, and still plain JSON for
        // an answer that is one message.
        let answer = h
            .http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .json(&json!({
                "jsonrpc": "2.0", "id": 3, "method": "initialize",
                "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "curl", "version": "1" } }
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert!(
            answer.headers().get("mcp-session-id").is_some(),
            "a session"
        );
        let kind = answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(kind.starts_with("application/json"), "{kind}");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["id"], 3, "{body}");
    });
}

/// ABP's `browser://tabs` resource: listed, and read as the tab list.
#[test]
fn the_tab_list_is_a_resource() {
    let (h, _g) = shared();
    block_on(async {
        let session = connect_http(&mcp_url(&h.server), None)
            .await
            .expect("connects");
        let tab = new_tab(&session).await;
        let resources = session.list_all_resources().await.expect("listed");
        assert!(
            resources.iter().any(|r| r.uri == "browser://tabs"),
            "{resources:?}"
        );
        let read = session
            .read_resource(rmcp::model::ReadResourceRequestParams::new(
                "browser://tabs",
            ))
            .await
            .expect("read");
        let text = match &read.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("not text: {other:?}"),
        };
        let tabs: Value = serde_json::from_str(&text).expect("JSON");
        assert!(
            tabs.as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == json!(tab)),
            "{tabs}"
        );
        assert!(
            session
                .read_resource(rmcp::model::ReadResourceRequestParams::new(
                    "browser://nothing"
                ))
                .await
                .is_err()
        );
        session.cancel().await.ok();
    });
}

/// An OpenAI-compatible model that clicks the page's first element, then
/// says done; its `/v1` address.
async fn one_click_model() -> String {
    use axum::Json;
    use axum::routing::post;
    let calls = Arc::new(Mutex::new(0u32));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            let calls = calls.clone();
            async move {
                let user = body["messages"][1]["content"].as_str().unwrap_or("").to_string();
                let n = {
                    let mut calls = calls.lock().unwrap();
                    *calls += 1;
                    *calls
                };
                let first = user
                    .lines()
                    .find(|l| l.starts_with('['))
                    .and_then(|l| l[1..l.find(']')?].parse::<u64>().ok());
                let action = match (n, first) {
                    (1, Some(index)) => json!({"type": "click", "index": index}),
                    _ => json!({"type": "done", "text": format!("done after {n} calls")}),
                };
                Json(json!({"choices": [{"message": {"role": "assistant", "content": action.to_string()}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    common::runtime().spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[test]
fn agent_tools_start_follow_and_stop_a_task() {
    let (h, _g) = shared();
    block_on(async {
        let model = one_click_model().await;
        let session = connect_http(&mcp_url(&h.server), None).await.unwrap();
        let tab = new_tab(&session).await;
        ok(
            call(
                &session,
                "browser_navigate",
                json!({ "tab_id": tab, "url": h.url("/"), "screenshot": {"area": "none"} }),
            )
            .await,
            "navigate",
        );
        let started = ok(
            call(
                &session,
                "browser_agent_start",
                json!({ "task": "click something", "tab_id": tab, "max_steps": 5,
                        "settings": { "llmProvider": "openai", "baseUrl": model, "apiKey": "sk-mcp-secret" } }),
            )
            .await,
            "agent start",
        );
        let started: Value = serde_json::from_str(&text_of(&started)).unwrap();
        assert_eq!(started["status"], "running");
        let id = started["id"].as_str().unwrap();
        let status = ok(
            call(
                &session,
                "browser_agent_status",
                json!({ "id": id, "wait_ms": 60000 }),
            )
            .await,
            "agent status",
        );
        let text = text_of(&status);
        assert!(!text.contains("sk-mcp-secret"), "{text}");
        let view: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(view["status"], "success", "{view}");
        assert_eq!(view["result"]["text"], "done after 2 calls");
        assert_eq!(view["history"][0]["action"], "click");
        assert!(view["history"][0]["action_id"].is_string(), "{view}");
        // Stopping a finished task changes nothing; an unknown one is an error result.
        let stopped = ok(
            call(&session, "browser_agent_stop", json!({ "id": id })).await,
            "stop",
        );
        let stopped: Value = serde_json::from_str(&text_of(&stopped)).unwrap();
        assert_eq!(stopped["status"], "success");
        let missing = call(
            &session,
            "browser_agent_status",
            json!({ "id": "task_nope" }),
        )
        .await;
        assert_eq!(missing.is_error, Some(true));
        session.cancel().await.unwrap();
    });
}

#[test]
fn the_browser_tool_answers_as_aleph_s() {
    let (h, _g) = shared();
    block_on(async {
        let session = connect_http(&mcp_url(&h.server), None).await.unwrap();
        let tools = session.list_all_tools().await.unwrap();
        let browser = tools
            .iter()
            .find(|t| t.name == "browser")
            .expect("the browser tool");
        let schema = serde_json::to_value(&browser.input_schema).unwrap();
        assert!(schema["properties"]["action"].is_object(), "{schema}");
        let opened = ok(
            call(
                &session,
                "browser",
                json!({ "action": "open_tab", "url": h.url("/form") }),
            )
            .await,
            "open_tab",
        );
        let opened: Value = serde_json::from_str(&text_of(&opened)).unwrap();
        assert_eq!(opened["success"], true, "{opened}");
        let tab = opened["data"]["tab_id"].as_str().unwrap().to_string();
        let snapshot = ok(
            call(
                &session,
                "browser",
                json!({ "action": "snapshot", "tab_id": tab }),
            )
            .await,
            "snapshot",
        );
        let snapshot: Value = serde_json::from_str(&text_of(&snapshot)).unwrap();
        assert_eq!(snapshot["data"]["page_title"], "Form");
        // A bad call is an error result, not a protocol error.
        let bad = call(&session, "browser", json!({ "action": "fly" })).await;
        assert_eq!(bad.is_error, Some(true));
        ok(
            call(&session, "browser_close_tab", json!({ "tab_id": tab })).await,
            "close",
        );
        session.cancel().await.unwrap();
    });
}
