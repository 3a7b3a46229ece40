//! The example plugins in examples/ and `wabp plugin new` / `wabp plugin
//! build`, end to end: each plugin is built by the code behind `wabp plugin
//! build` (or the binary itself), installed into the plugin folder of a
//! running engine, picked up by hot reload and called over HTTP against real
//! headless Chromium.
//!
//! Every build shares the engine build script's wasm target dir, so
//! wit-bindgen and the SDK's dependencies compile once.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use common::{Harness, block_on, shared};
use serde_json::{Value, json};
use wabp::plugin_cli::{self, BuildOptions, PluginCliError, PluginKind, SdkSource};

const BUILD_LIMIT: Duration = Duration::from_secs(15 * 60);
// Compiling an 18 MB Python component in a debug build, beside other
// builds, takes a while: a bound, not a timing.
const LOAD_LIMIT: Duration = Duration::from_secs(180);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir engine/app/build.rs builds the built-in plugins in.
fn target_dir() -> PathBuf {
    repo().join("target").join("wasm")
}

fn build_options(crate_dir: &Path, install: Option<&Path>) -> BuildOptions {
    BuildOptions {
        crate_dir: crate_dir.to_path_buf(),
        install_dir: install.map(Path::to_path_buf),
        target_dir: Some(target_dir()),
        timeout: BUILD_LIMIT,
        ..BuildOptions::default()
    }
}

async fn build_into(crate_dir: &Path, install: &Path) -> plugin_cli::Built {
    plugin_cli::build_plugin(&build_options(crate_dir, Some(install)))
        .await
        .unwrap_or_else(|e| panic!("building {}: {e}", crate_dir.display()))
}

/// Waits until the engine lists `name` as active and providing `provides`.
async fn wait_loaded(h: &Harness, name: &str, provides: &str) -> Value {
    let loaded = common::eventually(LOAD_LIMIT, || async {
        let (_, list) = h.get("/plugins").await;
        list["plugins"]
            .as_array()?
            .iter()
            .find(|p| {
                p["name"] == name
                    && p["status"] == "active"
                    && p["provides"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|x| x == provides))
            })
            .cloned()
    })
    .await;
    match loaded {
        Some(info) => info,
        None => {
            let (_, list) = h.get("/plugins").await;
            panic!("{name} did not load within {LOAD_LIMIT:?}: {list}")
        }
    }
}

// ------------------------------------------------------------ the test site

/// The demo shop (examples/shop-pack/site) plus pages for the other examples.
fn site() -> &'static str {
    static SITE: OnceLock<String> = OnceLock::new();
    SITE.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = Router::new()
            .route("/form.html", get(|| async { Html(FORM_PAGE) }))
            .route("/links.html", get(|| async { Html(LINKS_PAGE) }))
            .route("/buttons.html", get(|| async { Html(BUTTONS_PAGE) }))
            .route("/tracked.html", get(|| async { Html(TRACKED_PAGE) }))
            .route("/fields.html", get(|| async { Html(FIELDS_PAGE) }))
            .route("/api.html", get(|| async { Html(API_PAGE) }))
            .route("/checkout.html", get(|| async { Html(CHECKOUT_PAGE) }))
            .route("/slow", get(slow_answer))
            .route("/hang", get(slow_answer))
            .route(
                "/analytics/tag.js",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/javascript")],
                        "window.tracked = true;",
                    )
                }),
            )
            .route(
                "/analytics/collect",
                get(|| async { ([(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")], "collected") }),
            )
            .route(
                "/headers",
                get(|headers: axum::http::HeaderMap| async move {
                    let gpc = headers
                        .get("sec-gpc")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    axum::Json(json!({ "sec_gpc": gpc }))
                }),
            )
            .fallback(get(shop_file));
        common::runtime().spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await.unwrap()
        });
        url
    })
}

/// "done" after `?ms=` milliseconds (at most a minute).
async fn slow_answer(uri: Uri) -> Response {
    let ms = uri
        .query()
        .and_then(|q| q.strip_prefix("ms="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        .min(60_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ([(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")], "done").into_response()
}

/// A static file of the demo shop.
async fn shop_file(uri: Uri) -> Response {
    let name = match uri.path().trim_start_matches('/') {
        "" => "index.html",
        other => other,
    };
    let kind = match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    if name.contains('/') || name.contains("..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    match std::fs::read(repo().join("examples/shop-pack/site").join(name)) {
        Ok(bytes) => ([(header::CONTENT_TYPE, kind)], bytes).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

const FORM_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Form</title>
<style>body { font: 16px sans-serif; margin: 20px; } label { display: block; margin: 10px 0; } .spacer { height: 1200px; }</style>
<form id="f">
  <label>Name <input id="name" name="name" value="old value"></label>
  <label>Email <input id="email" name="email" type="email"></label>
  <label>Country <select id="country" name="country"><option value="">--</option><option value="uk">United Kingdom</option><option value="de">Germany</option></select></label>
  <label>Bio <textarea id="bio" name="bio"></textarea></label>
  <div class="spacer"></div>
  <label><input id="agree" name="agree" type="checkbox"> I agree</label>
  <label>Locked <input id="locked" name="locked" disabled></label>
  <button id="send" type="submit">Send</button>
</form>
<pre id="result"></pre>
<script>
  let emailInputs = 0;
  document.querySelector('#email').addEventListener('input', (e) => { if (e.isTrusted) emailInputs++; });
  document.querySelector('#f').addEventListener('submit', (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.target));
    data.agree = document.querySelector('#agree').checked;
    data.trusted_email_inputs = emailInputs;
    document.querySelector('#result').textContent = JSON.stringify(data);
  });
</script>"#;

const LINKS_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Links</title>
<style>body { margin: 0; font: 16px sans-serif; background: #fff; }
a { position: absolute; display: block; width: 200px; height: 30px; line-height: 30px; color: #225; background: #eef; }</style>
<a id="i1" href="/form.html" style="left: 100px; top: 100px">Form</a>
<a id="i2" href="/buttons.html" style="left: 100px; top: 200px">Buttons</a>
<a id="i3" href="/links.html#top" style="left: 100px; top: 300px">Top</a>
<a id="e1" href="https://example.org/docs" style="left: 500px; top: 100px">Docs</a>
<a id="e2" href="https://example.net/" style="left: 500px; top: 200px">Elsewhere</a>"#;

/// A page that loads a tag script and a beacon from another site (the
/// same server as `localhost`) and reads its own headers.
const TRACKED_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Tracked</title>
<body><p id="state">loading</p><script>
const other = location.origin.replace('127.0.0.1', 'localhost');
window.results = {};
const tag = document.createElement('script');
tag.src = other + '/analytics/tag.js';
tag.onload = () => { window.results.tag = window.tracked ? 'ran' : 'loaded-empty'; };
tag.onerror = () => { window.results.tag = 'failed'; };
document.head.appendChild(tag);
fetch(other + '/analytics/collect?e=view').then(r => r.text()).then(t => { window.results.beacon = t; }, () => { window.results.beacon = 'blocked'; });
fetch('/headers').then(r => r.json()).then(j => { window.results.gpc = j.sec_gpc; });
</script></body>"#;

const BUTTONS_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Buttons</title>
<style>body { margin: 0; font: 16px sans-serif; background: #fff; }
button { position: absolute; left: 100px; width: 200px; height: 40px; }</style>
<p id="out">nothing yet</p>
<button id="near" style="top: 100px" onclick="document.querySelector('#out').textContent = 'clicked near'">Near</button>
<button id="far" style="top: 1600px" onclick="document.querySelector('#out').textContent = 'clicked far'">Far</button>"#;

/// Form fields named by a <label>, by aria-labelledby, and not at all; a button.
const FIELDS_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Fields</title>
<style>body { margin: 0; font: 16px sans-serif; background: #fff; }
input, button { position: absolute; left: 100px; width: 300px; height: 40px; border: 0; background: #fff; }
label, span { position: absolute; left: 450px; }</style>
<label for="email" style="top: 100px">Email</label><input id="email" style="top: 100px">
<span id="phone-label" style="top: 200px">Phone</span><input id="phone" aria-labelledby="phone-label" style="top: 200px">
<input id="nameless" style="top: 300px">
<button id="go" style="top: 400px">Go</button>"#;

/// A button whose handler calls the page's own API (answering after 500 ms)
/// and sends a beacon to another site (the same server as `localhost`)
/// that answers after 20 s.
const API_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>API</title>
<style>body { margin: 0; font: 16px sans-serif; } button { position: absolute; left: 100px; top: 100px; width: 200px; height: 40px; }</style>
<p id="out">idle</p><button id="go">Go</button>
<script>
document.querySelector('#go').addEventListener('click', () => {
  const other = location.origin.replace('127.0.0.1', 'localhost');
  fetch(other + '/hang?ms=20000', { mode: 'no-cors' }).catch(() => {});
  fetch('/slow?ms=500').then(r => r.text()).then(t => { document.querySelector('#out').textContent = t; });
});
</script>"#;

/// A checkout page: a Pay button.
const CHECKOUT_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>Checkout</title>
<style>body { margin: 0; font: 16px sans-serif; } button { position: absolute; left: 100px; top: 100px; width: 200px; height: 40px; }</style>
<button id="pay" onclick="document.title = 'Paid'">Pay</button>"#;

// ------------------------------------------------------------ helpers

/// A new tab on `url`; returns its id.
async fn tab_at(h: &Harness, url: &str) -> String {
    let (status, tab) = h.post("/tabs", json!({})).await;
    assert_eq!(status, 201, "{tab}");
    let id = tab["id"].as_str().unwrap().to_string();
    navigate(h, &id, url).await;
    id
}

async fn navigate(h: &Harness, tab: &str, url: &str) {
    let (status, body) = h
        .post(
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": url, "screenshot": { "area": "none" } }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

async fn action(h: &Harness, tab: &str, name: &str, mut params: Value) -> (u16, Value) {
    params["screenshot"] = json!({ "area": "none" });
    h.post(&format!("/tabs/{tab}/actions/{name}"), params).await
}

/// Waits for a page-side condition (an expression) to be true.
async fn page_until(h: &Harness, tab: &str, expression: &str) -> bool {
    common::eventually(Duration::from_secs(10), || async {
        (h.eval(tab, expression).await == true).then_some(())
    })
    .await
    .is_some()
}

/// The RGB at (x, y) of an envelope's screenshot.
fn pixel(shot: &Value, x: u32, y: u32) -> [u8; 3] {
    let (w, _, px) = common::decode_screenshot(shot);
    let i = ((y * w + x) * 4) as usize;
    [px[i], px[i + 1], px[i + 2]]
}

fn near(actual: [u8; 3], expected: [u8; 3]) -> bool {
    actual
        .iter()
        .zip(expected)
        .all(|(a, e)| (i16::from(*a) - i16::from(e)).abs() <= 40)
}

async fn screenshot(h: &Harness, tab: &str, markup: &[&str]) -> Value {
    let (status, env) = h
        .post(
            &format!("/tabs/{tab}/screenshot"),
            json!({ "screenshot": { "markup": markup, "cursor": false } }),
        )
        .await;
    assert_eq!(status, 200, "{env}");
    env["screenshot_after"].clone()
}

/// Runs a command with a time limit; returns (success, stdout + stderr).
fn run_bounded(command: &mut Command, limit: Duration) -> (bool, String) {
    let dir = common::temp_dir("cmd-output");
    let (out, err) = (dir.join("out"), dir.join("err"));
    let mut child = command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!(
        "{}{}",
        std::fs::read_to_string(&out).unwrap_or_default(),
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let _ = std::fs::remove_dir_all(&dir);
    (status.success(), text)
}

// ------------------------------------------------------------ the examples

#[test]
fn fill_form_example_fills_and_submits_a_form() {
    let (h, _g) = shared();
    block_on(async {
        let built = build_into(&repo().join("examples/fill-form"), &h.server.plugin_dir).await;
        assert_eq!(built.provides, vec!["fill_form"]);
        wait_loaded(h, "fill-form", "fill_form").await;
        let tab = tab_at(h, &format!("{}/form.html", site())).await;

        let (status, env) = action(
            h,
            &tab,
            "fill_form",
            json!({
                "fields": {
                    "#name": "Ada Lovelace",
                    "#email": "ada@example.com",
                    "#country": "Germany",
                    "#bio": "Wrote the first program",
                    "#agree": true
                },
                "submit": "#send"
            }),
        )
        .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"]["submitted"], true, "{env}");
        let how: Vec<&str> = env["result"]["filled"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["how"].as_str().unwrap())
            .collect();
        assert!(
            how.contains(&"checked") && how.contains(&"selected") && how.contains(&"typed"),
            "{how:?}"
        );

        let result = h
            .eval(&tab, "document.querySelector('#result').textContent")
            .await;
        let data: Value = serde_json::from_str(result.as_str().unwrap())
            .unwrap_or_else(|e| panic!("the form was submitted ({e}): {result}"));
        assert_eq!(data["name"], "Ada Lovelace", "old text replaced: {data}");
        assert_eq!(data["email"], "ada@example.com");
        assert_eq!(data["country"], "de", "chosen by label");
        assert_eq!(data["bio"], "Wrote the first program");
        assert_eq!(
            data["agree"], true,
            "checkbox below the fold was scrolled to and clicked"
        );
        assert!(
            data["trusted_email_inputs"].as_u64().unwrap() >= 1,
            "typing is trusted input: {data}"
        );

        // Bad input names what is wrong.
        let (status, err) = action(
            h,
            &tab,
            "fill_form",
            json!({ "fields": { "#missing": "x" } }),
        )
        .await;
        assert_eq!(
            (status, err["code"].as_str()),
            (404, Some("SELECTOR_NOT_FOUND")),
            "{err}"
        );
        let (status, err) = action(
            h,
            &tab,
            "fill_form",
            json!({ "fields": { "#locked": "x" } }),
        )
        .await;
        assert_eq!(
            (status, err["code"].as_str()),
            (400, Some("ELEMENT_NOT_INTERACTABLE")),
            "{err}"
        );
        let (status, err) = action(
            h,
            &tab,
            "fill_form",
            json!({ "fields": { "#country": "Mars" } }),
        )
        .await;
        assert_eq!(status, 400, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("\"uk\""),
            "lists the options: {err}"
        );
        let (status, err) = action(h, &tab, "fill_form", json!({})).await;
        assert_eq!(status, 400, "{err}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn link_outline_example_marks_only_external_links() {
    let (h, _g) = shared();
    block_on(async {
        let built = build_into(&repo().join("examples/link-outline"), &h.server.plugin_dir).await;
        assert_eq!(built.provides, vec!["external_links"]);
        wait_loaded(h, "link-outline", "external_links").await;
        let tab = tab_at(h, &format!("{}/links.html", site())).await;

        let orange = [255, 140, 0];
        let plain = screenshot(h, &tab, &[]).await;
        let marked = screenshot(h, &tab, &["external_links"]).await;
        // Top edges of the links: e1 at (500..700, 100), i1 at (100..300, 100).
        assert!(
            !near(pixel(&plain, 600, 100), orange),
            "no outline without the tag"
        );
        assert!(
            near(pixel(&marked, 600, 100), orange),
            "external link outlined: {:?}",
            pixel(&marked, 600, 100)
        );
        assert!(
            near(pixel(&marked, 600, 200), orange),
            "second external link outlined"
        );
        // Internal and same-page links: as without markup (up to WebP noise).
        for (x, y) in [(200, 100), (200, 200), (200, 300)] {
            let (before, after) = (pixel(&plain, x, y), pixel(&marked, x, y));
            assert!(
                near(after, before) && !near(after, orange),
                "internal link at ({x}, {y}) untouched: {after:?}"
            );
        }
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// `window.results` of the tracked page once its three requests have ended.
async fn tracked_results(h: &Harness, tab: &str) -> Value {
    common::eventually(Duration::from_secs(10), || async {
        let (_, body) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "window.results" }),
            )
            .await;
        let results = body["result"]["value"].clone();
        (results["tag"].is_string() && results["beacon"].is_string() && results["gpc"].is_string())
            .then_some(results)
    })
    .await
    .expect("the page's requests all ended")
}

/// The tracked page's results with no interceptor: the tracker runs and collects.
async fn tracked_without_blocker(h: &Harness) -> Value {
    let tab = tab_at(h, &format!("{}/tracked.html", site())).await;
    let free = tracked_results(h, &tab).await;
    assert_eq!(
        free,
        json!({ "tag": "ran", "beacon": "collected", "gpc": "" })
    );
    h.delete(&format!("/tabs/{tab}")).await;
    free
}

/// The tracker blocker `name` (an interceptor plugin), just built into the
/// plugin folder: a tracking script comes back empty, a beacon to another
/// site is blocked, the page's own requests carry Sec-GPC; unloaded,
/// everything goes through again (`free`).
async fn tracker_blocker_passes(h: &Harness, name: &str, free: Value) {
    let url = format!("{}/tracked.html", site());
    wait_loaded(h, name, "interceptor").await;
    let tab = tab_at(h, &url).await;
    assert_eq!(
        tracked_results(h, &tab).await,
        json!({ "tag": "loaded-empty", "beacon": "blocked", "gpc": "1" })
    );
    let (_, live) = h.get(&format!("/tabs/{tab}/network")).await;
    assert!(
        live.to_string().contains(&format!("plugin {name}:abort")),
        "the blocked call names the plugin: {live}"
    );
    h.delete(&format!("/tabs/{tab}")).await;

    // Unloaded (its folder removed): requests go through again.
    unload(h, name).await;
    let tab = tab_at(h, &url).await;
    assert_eq!(tracked_results(h, &tab).await, free);
    h.delete(&format!("/tabs/{tab}")).await;
}

/// An engine of its own: an interceptor acts on every tab of its engine,
/// and other tests load theirs (the scaffolds') into the shared one.
fn own_engine(h: &Harness, name: &str) -> Harness {
    let server = block_on(common::start_server_with(
        common::temp_dir(&format!("{name}-plugins")),
        |_| {},
    ));
    h.with_server(server)
}

#[test]
fn tracker_blocker_example_blocks_trackers_and_sends_gpc() {
    let (shared_engine, _g) = shared();
    let h = &own_engine(shared_engine, "tracker-blocker");
    block_on(async {
        let free = tracked_without_blocker(h).await;
        let built = build_into(
            &repo().join("examples/tracker-blocker"),
            &h.server.plugin_dir,
        )
        .await;
        assert_eq!(built.provides, vec!["interceptor"]);
        tracker_blocker_passes(h, "tracker-blocker", free).await;
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// The Python twin of the tracker blocker passes the same test.
#[test]
fn tracker_blocker_in_python_blocks_trackers_and_sends_gpc() {
    let (shared_engine, _g) = shared();
    let h = &own_engine(shared_engine, "tracker-blocker-py");
    let free = block_on(tracked_without_blocker(h));
    install_example(h, "tracker-blocker-py", "provides: interceptor");
    block_on(async {
        tracker_blocker_passes(h, "tracker-blocker-py", free).await;
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// `wabp plugin build examples/NAME` into the engine's plugin folder,
/// through the binary; its output names what the plugin provides.
fn install_example(h: &Harness, name: &str, provides: &str) {
    let (ok, out) = wabp_plugin(
        &["build"],
        &[
            &repo().join("examples").join(name),
            Path::new("--install-dir"),
            &h.server.plugin_dir,
        ],
    );
    assert!(ok && out.contains(provides), "{out}");
}

/// The Python markup renderer: fields with a name (a <label>, or
/// aria-labelledby) outlined solid blue, a field without one dashed red,
/// anything else left alone.
#[test]
fn field_check_in_python_outlines_fields_by_whether_they_are_named() {
    let (h, _g) = shared();
    install_example(h, "field-check", "provides: form_fields");
    block_on(async {
        wait_loaded(h, "field-check", "form_fields").await;
        let tab = tab_at(h, &format!("{}/fields.html", site())).await;
        let plain = screenshot(h, &tab, &[]).await;
        let marked = screenshot(h, &tab, &["form_fields"]).await;
        let (blue, red) = ([37, 99, 235], [220, 38, 38]);
        // Along each field's top edge, right of where its label goes.
        let edge = |shot: &Value, y: u32, color: [u8; 3]| {
            (260..395)
                .filter(|x| near(pixel(shot, *x, y), color))
                .count()
        };
        for y in [100, 200] {
            assert_eq!(edge(&plain, y, blue), 0, "no outline without the tag");
            assert!(
                edge(&marked, y, blue) > 120,
                "named field at {y} outlined solid blue: {} of 135",
                edge(&marked, y, blue)
            );
        }
        let dashes = edge(&marked, 300, red);
        assert!(
            (30..110).contains(&dashes),
            "nameless field dashed red: {dashes} of 135"
        );
        let (before, after) = (pixel(&plain, 250, 400), pixel(&marked, 250, 400));
        assert!(
            near(after, before) && !near(after, red) && !near(after, blue),
            "the button untouched: {after:?}"
        );
        h.delete(&format!("/tabs/{tab}")).await;
        unload(h, "field-check").await;
    });
}

/// The TypeScript wait heuristic: a click ends once the page's own API call
/// has answered, while another site's beacon is still loading.
#[test]
fn api_settled_in_typescript_waits_for_the_pages_own_calls_only() {
    let (h, _g) = shared();
    install_example(h, "api-settled", "provides: api_settled");
    block_on(async {
        wait_loaded(h, "api-settled", "api_settled").await;
        let tab = tab_at(h, &format!("{}/api.html", site())).await;
        let click = |x: u32, y: u32, wait: Value| {
            let path = format!("/tabs/{tab}/click");
            let body =
                json!({ "x": x, "y": y, "screenshot": { "area": "none" }, "wait_until": wait });
            async move { h.post(&path, body).await }
        };
        let (status, err) = click(5, 5, json!({ "type": "api_settled", "quiet_ms": -1 })).await;
        assert_eq!(status, 400, "{err}");
        assert!(err["error"].as_str().unwrap().contains("quiet_ms"), "{err}");

        let (status, env) = click(5, 5, json!({ "type": "api_settled" })).await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "no_api_calls", "{env}");

        let (status, env) =
            click(200, 120, json!({ "type": "api_settled", "quiet_ms": 200 })).await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "api_settled", "{env}");
        assert_eq!(
            h.eval(&tab, "document.querySelector('#out').textContent")
                .await,
            "done",
            "the API call answered and its handler ran before the click returned"
        );
        assert_eq!(
            h.eval(
                &tab,
                "performance.getEntriesByType('resource').some(e => e.name.includes('/hang'))"
            )
            .await,
            false,
            "the other site's beacon was still loading"
        );
        h.delete(&format!("/tabs/{tab}")).await;
        unload(h, "api-settled").await;
    });
}

/// The TypeScript approval policy, on an engine of its own with a policy
/// file: other hosts denied, a click on a checkout page waits for a
/// person's approval, scripts refused there, reads and trusted users not.
#[test]
fn checkout_guard_in_typescript_keeps_to_its_hosts_and_asks_before_paying() {
    let (h, _g) = shared();
    let plugins = common::temp_dir("guard-plugins");
    let (ok, out) = wabp_plugin(
        &["build"],
        &[
            &repo().join("examples/checkout-guard"),
            Path::new("--install-dir"),
            &plugins,
        ],
    );
    assert!(ok && out.contains("provides: policy"), "{out}");
    let policy = common::temp_dir("guard").join("policy.toml");
    std::fs::write(
        &policy,
        "[checkout_guard]\nallowed_hosts = [\"127.0.0.1\"]\nguarded_paths = [\"/checkout\"]\ntrusted_users = [\"alice\"]\n",
    )
    .unwrap();
    block_on(async {
        let server = common::start_server_with(plugins, |o| o.policy_file = Some(policy)).await;
        let g = &h.with_server(server);
        wait_loaded(g, "checkout-guard", "policy").await;
        let shop = site();
        let tab = tab_at(g, &format!("{shop}/buttons.html")).await;
        let (status, body) = g
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": format!("{shop}/buttons.html").replace("127.0.0.1", "localhost") }),
            )
            .await;
        assert_eq!(
            (status, &body["code"]),
            (403, &json!("POLICY_DENIED")),
            "{body}"
        );
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("checkout-guard: localhost is not one of the allowed hosts"),
            "{body}"
        );
        let pay = json!({ "x": 200, "y": 120, "screenshot": { "area": "none" } });
        let (status, body) = g.post(&format!("/tabs/{tab}/click"), pay.clone()).await;
        assert_eq!(
            status, 200,
            "not a checkout page: no question asked: {body}"
        );

        navigate(g, &tab, &format!("{shop}/checkout.html")).await;
        let (status, asked) = g.post(&format!("/tabs/{tab}/click"), pay.clone()).await;
        assert_eq!(
            (status, &asked["code"]),
            (403, &json!("APPROVAL_REQUIRED")),
            "{asked}"
        );
        assert!(
            asked["prompt"]
                .as_str()
                .unwrap()
                .contains("/checkout.html (a /checkout page) needs a person's approval"),
            "{asked}"
        );
        // Read through a read: the caller's scripts are refused on this page.
        let title =
            |tab: String| async move { g.get(&format!("/tabs/{tab}")).await.1["title"].clone() };
        assert_eq!(title(tab.clone()).await, "Checkout");
        let (status, body) = g
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "document.querySelector('#pay').click()" }),
            )
            .await;
        assert_eq!(
            (status, &body["code"]),
            (403, &json!("POLICY_DENIED")),
            "{body}"
        );
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("a script could pay"),
            "{body}"
        );
        let (status, _) = g.post(&format!("/tabs/{tab}/screenshot"), json!({})).await;
        assert_eq!(status, 200, "reads are allowed on a checkout page");

        let id = asked["approval_id"].as_str().unwrap();
        let (status, decided) = g
            .post(&format!("/approvals/{id}"), json!({ "approve": true }))
            .await;
        assert_eq!(status, 200, "{decided}");
        let mut approved = pay.clone();
        approved["approval_id"] = json!(id);
        let (status, body) = g.post(&format!("/tabs/{tab}/click"), approved).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(title(tab.clone()).await, "Paid");

        // A trusted user pays without asking.
        let (status, alices) = g
            .post(
                "/tabs",
                json!({ "userId": "alice", "url": format!("{shop}/checkout.html") }),
            )
            .await;
        assert_eq!(status, 201, "{alices}");
        let alices = alices["id"].as_str().unwrap();
        let mut hers = pay.clone();
        hers["userId"] = json!("alice");
        let (status, body) = g.post(&format!("/tabs/{alices}/click"), hers).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(title(format!("{alices}?userId=alice")).await, "Paid");
        g.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// The shop pack's actions against the demo shop, whichever language the
/// loaded pack `name` is written in.
async fn shop_pack_passes(h: &Harness, name: &str) {
    wait_loaded(h, name, "shop_cart").await;

    let shop = site();
    let tab = tab_at(h, &format!("{shop}/")).await;
    h.eval(&tab, "localStorage.clear()").await;
    let (status, err) = action(
        h,
        &tab,
        "shop_add_to_cart",
        json!({ "product": "Blue Mug" }),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(
        err["error"].as_str().unwrap().contains("not logged in"),
        "{err}"
    );

    // From a blank tab, with the shop's address.
    navigate(h, &tab, "about:blank").await;
    // A plugin can't open what a client may not: the URL policy holds
    // for its navigations too.
    let (status, err) = action(
        h,
        &tab,
        "shop_log_in",
        json!({ "username": "ada", "password": "babbage", "base_url": "file:///etc" }),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(
        err["error"].as_str().unwrap().contains("not allowed"),
        "{err}"
    );
    let (status, err) = action(
        h,
        &tab,
        "shop_log_in",
        json!({ "username": "ada", "password": "babbage", "base_url": shop }),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("Wrong username or password"),
        "{err}"
    );
    let (status, env) = action(
        h,
        &tab,
        "shop_log_in",
        json!({ "username": "ada", "password": "lovelace" }),
    )
    .await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(
        env["result"],
        json!({ "status": "logged_in", "user": "ada" })
    );
    assert!(
            page_until(h, &tab, "location.pathname === '/' && document.querySelector('#user').textContent === 'Signed in as ada'").await,
            "the shop went to its product list, signed in"
        );

    let (status, env) = action(
        h,
        &tab,
        "shop_add_to_cart",
        json!({ "product": "blue mug", "quantity": 2 }),
    )
    .await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["result"]["sku"], "mug-blue");
    assert_eq!(env["result"]["cart_count"], 2);
    let (status, env) = action(
        h,
        &tab,
        "shop_add_to_cart",
        json!({ "product": "tea-green" }),
    )
    .await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["result"]["cart_count"], 3);
    assert_eq!(
        h.eval(&tab, "document.querySelector('#cart-count').textContent")
            .await,
        "3"
    );
    let (status, err) = action(
        h,
        &tab,
        "shop_add_to_cart",
        json!({ "product": "Red Kettle" }),
    )
    .await;
    assert_eq!(status, 404, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("Blue Mug, Green Tea, Clay Teapot"),
        "{err}"
    );

    let (status, env) = action(h, &tab, "shop_cart", json!({})).await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(
        env["result"],
        json!({
            "items": [
                { "sku": "mug-blue", "name": "Blue Mug", "quantity": 2, "price": "$25.00" },
                { "sku": "tea-green", "name": "Green Tea", "quantity": 1, "price": "$6.00" }
            ],
            "total": "$31.00"
        })
    );
    assert_eq!(h.eval(&tab, "location.pathname").await, "/cart.html");
    h.delete(&format!("/tabs/{tab}")).await;
}

/// Removes plugin `name` from the plugin folder and waits until the engine
/// has unloaded it.
async fn unload(h: &Harness, name: &str) {
    std::fs::remove_dir_all(h.server.plugin_dir.join(name)).unwrap();
    common::eventually(LOAD_LIMIT, || async {
        let (_, list) = h.get("/plugins").await;
        (!list["plugins"]
            .as_array()?
            .iter()
            .any(|p| p["name"] == name))
        .then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("{name} unloads"));
}

/// The shop pack in Rust, then its TypeScript twin (the same actions, so one
/// at a time), pass the same test.
#[test]
fn shop_packs_in_rust_and_typescript_log_in_fill_the_cart_and_read_it() {
    let (h, _g) = shared();
    block_on(async {
        let built = build_into(&repo().join("examples/shop-pack"), &h.server.plugin_dir).await;
        let mut provides = built.provides.clone();
        provides.sort();
        assert_eq!(
            provides,
            vec!["shop_add_to_cart", "shop_cart", "shop_log_in"]
        );
        shop_pack_passes(h, "shop-pack").await;
        unload(h, "shop-pack").await;
    });
    install_example(
        h,
        "shop-pack-ts",
        "provides: shop_log_in, shop_add_to_cart, shop_cart",
    );
    block_on(async {
        shop_pack_passes(h, "shop-pack-ts").await;
        unload(h, "shop-pack-ts").await;
    });
}

// ------------------------------------------------------------ wabp plugin new + build

#[test]
fn scaffolded_plugins_of_every_kind_build_load_and_run() {
    let (h, _g) = shared();
    // Inside the checkout, through the binary: the SDK is found by a relative path.
    let scaffolds = repo()
        .join("target")
        .join(format!("wabp-test-scaffolds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scaffolds);
    let action_dir = scaffolds.join("scaffold-action");
    let (ok, out) = run_bounded(
        Command::new(env!("CARGO_BIN_EXE_wabp"))
            .args([
                "plugin",
                "new",
                "scaffold-action",
                "--kind",
                "action",
                "--dir",
            ])
            .arg(&action_dir),
        Duration::from_secs(30),
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("path ../../../plugins/sdk"),
        "relative SDK path inside the checkout: {out}"
    );
    for file in [
        "Cargo.toml",
        "plugin.toml",
        "src/lib.rs",
        ".gitignore",
        "Cargo.lock",
    ] {
        assert!(action_dir.join(file).is_file(), "{file} scaffolded");
    }
    let (ok, out) = run_bounded(
        Command::new(env!("CARGO_BIN_EXE_wabp"))
            .args(["plugin", "build"])
            .arg(&action_dir)
            .arg("--install-dir")
            .arg(&h.server.plugin_dir)
            .env("CARGO_TARGET_DIR", target_dir()),
        BUILD_LIMIT,
    );
    assert!(ok, "{out}");
    assert!(out.contains("provides: scaffold_action_click"), "{out}");
    assert!(
        h.server
            .plugin_dir
            .join("scaffold-action/scaffold_action.wasm")
            .is_file()
    );

    // Outside the checkout, through the library, with an explicit SDK path.
    let outside = common::temp_dir("scaffolds");
    let mut built = Vec::new();
    block_on(async {
        for (name, kind) in [
            ("scaffold-markup", PluginKind::Markup),
            ("scaffold-wait", PluginKind::Wait),
        ] {
            let dir = outside.join(name);
            let created =
                plugin_cli::new_plugin(name, kind, &dir, &SdkSource::Path(repo().to_path_buf()))
                    .unwrap();
            assert!(
                created.sdk.starts_with("path /"),
                "absolute SDK path outside: {}",
                created.sdk
            );
            built.push(build_into(&dir, &h.server.plugin_dir).await);
        }
    });
    assert_eq!(built[0].provides, vec!["scaffold_markup"]);
    assert_eq!(built[1].provides, vec!["scaffold_wait"]);
    // Policies and interceptors act on every tab of the shared engine: built
    // and load-checked only.
    block_on(async {
        for (name, kind, provides) in [
            ("scaffold-policy", PluginKind::Policy, "policy"),
            (
                "scaffold-interceptor",
                PluginKind::Interceptor,
                "interceptor",
            ),
        ] {
            let dir = outside.join(name);
            plugin_cli::new_plugin(name, kind, &dir, &SdkSource::Path(repo().to_path_buf()))
                .unwrap();
            let built = plugin_cli::build_plugin(&build_options(&dir, None))
                .await
                .unwrap_or_else(|e| panic!("building {name}: {e}"));
            assert_eq!(built.provides, vec![provides]);
        }
    });

    block_on(async {
        wait_loaded(h, "scaffold-action", "scaffold_action_click").await;
        wait_loaded(h, "scaffold-markup", "scaffold_markup").await;
        wait_loaded(h, "scaffold-wait", "scaffold_wait").await;
        let tab = tab_at(h, &format!("{}/buttons.html", site())).await;

        // The action: clicks a button below the fold.
        let (status, env) = action(
            h,
            &tab,
            "scaffold_action_click",
            json!({ "selector": "#far" }),
        )
        .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"]["clicked"], "button");
        assert_eq!(
            h.eval(&tab, "document.querySelector('#out').textContent")
                .await,
            "clicked far"
        );
        let (status, err) = action(
            h,
            &tab,
            "scaffold_action_click",
            json!({ "selector": "#none" }),
        )
        .await;
        assert_eq!(
            (status, err["code"].as_str()),
            (404, Some("SELECTOR_NOT_FOUND")),
            "{err}"
        );

        // The markup: outlines buttons.
        h.eval(&tab, "window.scrollTo(0, 0)").await;
        let plain = screenshot(h, &tab, &[]).await;
        let marked = screenshot(h, &tab, &["scaffold_markup"]).await;
        let pink = [219, 39, 119];
        assert!(!near(pixel(&plain, 200, 100), pink));
        assert!(
            near(pixel(&marked, 200, 100), pink),
            "button outlined: {:?}",
            pixel(&marked, 200, 100)
        );

        // The wait: ends at max_ms when nothing loads.
        let (status, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": 5, "y": 5, "screenshot": { "area": "none" }, "wait_until": { "type": "scaffold_wait", "max_ms": 300 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "max_ms", "{env}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
    let _ = std::fs::remove_dir_all(&scaffolds);
}

/// The TypeScript toolchain's cache, kept in target/ across runs.
fn toolchains() -> PathBuf {
    repo().join("target").join("toolchains")
}

/// `wabp plugin ARGS...` through the binary, with the test toolchain cache.
fn wabp_plugin(args: &[&str], extra: &[&Path]) -> (bool, String) {
    run_bounded(
        Command::new(env!("CARGO_BIN_EXE_wabp"))
            .arg("plugin")
            .args(args)
            .args(extra)
            .env("WABP_TOOLCHAINS", toolchains()),
        BUILD_LIMIT,
    )
}

/// `wabp plugin new --lang LANG` of every kind, built through the binary
/// (the toolchain installed on first use), loaded by the running engine and
/// called: the same behaviour as the Rust scaffolds. The folder of each
/// kind, by kind.
fn scripted_scaffolds_build_load_and_run(
    h: &Harness,
    lang: &str,
    entry: &str,
    extra_files: &[&str],
) -> std::collections::HashMap<&'static str, PathBuf> {
    let scaffolds = common::temp_dir(&format!("{lang}-scaffolds"));
    let plugins = h.server.plugin_dir.clone();
    let mut dirs = std::collections::HashMap::new();
    let mut provides = Vec::new();
    for kind in ["action", "markup", "wait", "policy", "interceptor"] {
        let name = format!("{lang}-scaffold-{kind}");
        let dir = scaffolds.join(&name);
        let (ok, out) = wabp_plugin(
            &["new", &name, "--lang", lang, "--kind", kind, "--dir"],
            &[&dir],
        );
        assert!(ok, "{out}");
        for file in ["plugin.toml", "README.md", entry]
            .iter()
            .chain(extra_files)
        {
            assert!(dir.join(file).is_file(), "{kind}: {file} scaffolded");
        }
        // Policies and interceptors act on every tab: only the interceptor
        // is installed, below, and removed again.
        let install = matches!(kind, "action" | "markup" | "wait");
        let (ok, out) = if install {
            wabp_plugin(&["build"], &[&dir, Path::new("--install-dir"), &plugins])
        } else {
            wabp_plugin(&["build", "--no-install"], &[&dir])
        };
        assert!(ok, "{kind}: {out}");
        assert!(dir.join("wabp").is_dir(), "the SDK and bindings written");
        provides.push(
            out.lines()
                .find(|l| l.contains("provides:"))
                .unwrap_or_default()
                .trim()
                .to_string(),
        );
        dirs.insert(kind, dir);
    }
    let snake = lang.replace('-', "_");
    assert_eq!(
        provides,
        [
            format!("provides: {snake}_scaffold_action_click"),
            format!("provides: {snake}_scaffold_markup"),
            format!("provides: {snake}_scaffold_wait"),
            "provides: policy".to_string(),
            "provides: interceptor".to_string(),
        ]
    );

    block_on(async {
        let click = format!("{snake}_scaffold_action_click");
        wait_loaded(h, &format!("{lang}-scaffold-action"), &click).await;
        wait_loaded(
            h,
            &format!("{lang}-scaffold-markup"),
            &format!("{snake}_scaffold_markup"),
        )
        .await;
        wait_loaded(
            h,
            &format!("{lang}-scaffold-wait"),
            &format!("{snake}_scaffold_wait"),
        )
        .await;
        let tab = tab_at(h, &format!("{}/buttons.html", site())).await;

        let (status, env) = action(h, &tab, &click, json!({ "selector": "#far" })).await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"]["clicked"], "button", "{env}");
        assert_eq!(
            h.eval(&tab, "document.querySelector('#out').textContent")
                .await,
            "clicked far"
        );
        let (status, err) = action(h, &tab, &click, json!({ "selector": "#none" })).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (404, Some("SELECTOR_NOT_FOUND")),
            "a host error keeps its code: {err}"
        );
        let (status, err) = action(h, &tab, &click, json!({ "selector": "" })).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "a plugin error keeps its code: {err}"
        );
        assert!(
            err["error"].as_str().unwrap().contains("non-empty"),
            "{err}"
        );

        h.eval(&tab, "window.scrollTo(0, 0)").await;
        let plain = screenshot(h, &tab, &[]).await;
        let marked = screenshot(h, &tab, &[&format!("{snake}_scaffold_markup")]).await;
        let pink = [219, 39, 119];
        assert!(!near(pixel(&plain, 200, 100), pink));
        assert!(
            near(pixel(&marked, 200, 100), pink),
            "button outlined: {:?}",
            pixel(&marked, 200, 100)
        );

        let (status, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": 5, "y": 5, "screenshot": { "area": "none" }, "wait_until": { "type": format!("{snake}_scaffold_wait"), "max_ms": 300 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "max_ms", "{env}");
        h.delete(&format!("/tabs/{tab}")).await;

        // The interceptor: analytics blocked, Sec-GPC sent; then unloaded.
        let interceptor = format!("{lang}-scaffold-interceptor");
        let (ok, out) = wabp_plugin(
            &["build"],
            &[&dirs["interceptor"], Path::new("--install-dir"), &plugins],
        );
        assert!(ok, "{out}");
        wait_loaded(h, &interceptor, "interceptor").await;
        let tab = tab_at(h, &format!("{}/tracked.html", site())).await;
        let results = tracked_results(h, &tab).await;
        assert_eq!(
            results,
            json!({ "tag": "failed", "beacon": "blocked", "gpc": "1" })
        );
        h.delete(&format!("/tabs/{tab}")).await;
        unload(h, &interceptor).await;
    });
    dirs
}

/// TypeScript (and a JavaScript action); type errors and ungranted
/// capabilities stop the build and say where.
#[test]
fn typescript_scaffolds_of_every_kind_build_load_and_run() {
    let (h, _g) = shared();
    let dirs = scripted_scaffolds_build_load_and_run(
        h,
        "ts",
        "src/plugin.ts",
        &["package.json", "tsconfig.json"],
    );
    assert!(
        dirs["action"].join("wabp/index.ts").is_file()
            && dirs["action"].join("wabp/types").is_dir()
    );

    let js = common::temp_dir("js-scaffold").join("js-scaffold-action");
    let (ok, out) = wabp_plugin(
        &[
            "new",
            "js-scaffold-action",
            "--lang",
            "js",
            "--kind",
            "action",
            "--dir",
        ],
        &[&js],
    );
    assert!(ok, "{out}");
    let (ok, out) = wabp_plugin(&["build", "--no-install"], &[&js]);
    assert!(
        ok && out.contains("provides: js_scaffold_action_click"),
        "{out}"
    );

    // A type error stops the build before anything is made, naming the line.
    let action_dir = &dirs["action"];
    let source = std::fs::read_to_string(action_dir.join("src/plugin.ts")).unwrap();
    std::fs::write(
        action_dir.join("src/plugin.ts"),
        source.replace("click(target.x, target.y);", "click(target.x, \"down\");"),
    )
    .unwrap();
    let (ok, out) = wabp_plugin(&["build", "--no-install"], &[action_dir]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("type check")
            && out.contains("src/plugin.ts(")
            && out.contains("error TS2345"),
        "{out}"
    );
    // A capability plugin.toml does not grant is refused by name.
    std::fs::write(
        action_dir.join("src/plugin.ts"),
        source.replace("import { click } from \"@wabp/plugin/input\";", "import { click } from \"@wabp/plugin/input\";\nimport { evaluate } from \"@wabp/plugin/script\";")
            .replace("click(target.x, target.y);", "click(target.x, target.y);\n      evaluate(\"1\");"),
    )
    .unwrap();
    let (ok, out) = wabp_plugin(&["build", "--no-install"], &[action_dir]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("wabp:plugin/script") && out.contains("add \"script\" to capabilities"),
        "{out}"
    );
}

/// Python; an ungranted capability and an exception at import stop the
/// build and say where.
#[test]
fn python_scaffolds_of_every_kind_build_load_and_run() {
    let (h, _g) = shared();
    let dirs = scripted_scaffolds_build_load_and_run(h, "py", "app.py", &["pyrightconfig.json"]);
    let action_dir = &dirs["action"];
    assert!(
        action_dir.join("wabp/wabp_plugin/__init__.py").is_file()
            && action_dir.join("wabp/bindings/wit_world").is_dir()
    );

    let source = std::fs::read_to_string(action_dir.join("app.py")).unwrap();
    std::fs::write(
        action_dir.join("app.py"),
        source.replace(
            "from wabp_plugin import input, page",
            "from wabp_plugin import input, page, script",
        ),
    )
    .unwrap();
    let (ok, out) = wabp_plugin(&["build", "--no-install"], &[action_dir]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("wabp_plugin.script") && out.contains("add \"script\" to capabilities"),
        "{out}"
    );
    std::fs::write(
        action_dir.join("app.py"),
        format!("{source}\nraise RuntimeError(\"broken at import\")\n"),
    )
    .unwrap();
    let (ok, out) = wabp_plugin(&["build", "--no-install"], &[action_dir]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("componentize-py") && out.contains("broken at import"),
        "{out}"
    );
}

/// A TypeScript or Python plugin that loops, throws, or allocates without
/// bound fails only its own call, with an error that says which limit; the
/// next call runs on a fresh instance and the engine carries on.
fn hostile_scripted_plugin_fails_its_own_calls(
    h: &Harness,
    name: &str,
    files: &[(&str, &str)],
    limits: (u64, u64),
) {
    let dir = common::temp_dir(name).join(name);
    let (timeout_ms, memory_mb) = limits;
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!(
            "name = \"{name}\"\nversion = \"0.1.0\"\nkind = \"action\"\ncapabilities = [\"log\"]\ncomponent = \"hostile.wasm\"\n[limits]\ntimeout_ms = {timeout_ms}\nmemory_mb = {memory_mb}\n"
        ),
    )
    .unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let (ok, out) = wabp_plugin(
        &["build"],
        &[&dir, Path::new("--install-dir"), &h.server.plugin_dir],
    );
    assert!(ok, "{out}");
    let prefix = name.replace('-', "_");
    block_on(async {
        wait_loaded(h, name, &format!("{prefix}_fine")).await;
        let tab = h.tab_on("/second").await;
        let call = |action: &'static str| {
            let path = format!("/tabs/{tab}/actions/{prefix}_{action}");
            async move {
                h.post(&path, json!({ "screenshot": { "area": "none" } }))
                    .await
            }
        };
        let (status, env) = call("fine").await;
        assert_eq!(
            (status, env["result"].clone()),
            (200, json!("fine")),
            "{env}"
        );

        let started = Instant::now();
        let (status, err) = call("spin").await;
        assert_eq!(
            (status, err["code"].as_str()),
            (500, Some("PLUGIN_FAILED")),
            "{err}"
        );
        assert!(
            err["error"]
                .as_str()
                .unwrap()
                .contains(&format!("{timeout_ms} ms deadline")),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_millis(timeout_ms) + Duration::from_secs(10));

        let (status, err) = call("throw").await;
        assert_eq!(
            (status, err["code"].as_str()),
            (500, Some("PLUGIN_FAILED")),
            "{err}"
        );
        assert!(
            err["error"].as_str().unwrap().contains("boom"),
            "the exception's message: {err}"
        );

        let (status, err) = call("hog").await;
        assert_eq!(
            (status, err["code"].as_str()),
            (500, Some("PLUGIN_FAILED")),
            "{err}"
        );
        assert!(
            err["error"]
                .as_str()
                .unwrap()
                .contains(&format!("{memory_mb} MiB memory limit")),
            "{err}"
        );

        let (status, env) = call("fine").await;
        assert_eq!(
            (status, env["result"].clone()),
            (200, json!("fine")),
            "a fresh instance after the traps: {env}"
        );
        let (status, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": 5, "y": 5, "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "the engine carries on: {env}");
        let (_, list) = h.get("/plugins").await;
        let info = list["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()
            .clone();
        assert!(
            info["instances"]["discarded"].as_u64().unwrap() >= 2,
            "the spinning and the hogging instances went: {info}"
        );
        h.delete(&format!("/tabs/{tab}")).await;
    });
    std::fs::remove_dir_all(h.server.plugin_dir.join(name)).unwrap();
}

#[test]
fn typescript_plugin_limits_hold() {
    let (h, _g) = shared();
    let source = r#"import { actions } from "@wabp/plugin";

const noParams = { type: "object" };
export const action = actions({
  ts_hostile_fine: { description: "Answers", params: noParams, run: () => "fine" },
  ts_hostile_spin: {
    description: "Loops forever",
    params: noParams,
    run: () => {
      for (;;) {}
    },
  },
  ts_hostile_throw: {
    description: "Throws",
    params: noParams,
    run: () => {
      throw new Error("boom");
    },
  },
  ts_hostile_hog: {
    description: "Allocates without bound",
    params: noParams,
    run: () => {
      const kept: number[][] = [];
      for (;;) kept.push(new Array(1 << 16).fill(kept.length));
    },
  },
});
"#;
    hostile_scripted_plugin_fails_its_own_calls(
        h,
        "ts-hostile",
        &[("src/plugin.ts", source)],
        (500, 32),
    );
}

#[test]
fn python_plugin_limits_hold() {
    let (h, _g) = shared();
    let source = r#"from wabp_plugin import ActionPlugin, action


class Action(ActionPlugin):
    @action("Answers")
    def py_hostile_fine(self, params, context):
        return "fine"

    @action("Loops forever")
    def py_hostile_spin(self, params, context):
        while True:
            pass

    @action("Raises")
    def py_hostile_throw(self, params, context):
        raise ValueError("boom")

    @action("Allocates without bound")
    def py_hostile_hog(self, params, context):
        kept = []
        while True:
            kept.append(bytearray(1 << 20))
"#;
    hostile_scripted_plugin_fails_its_own_calls(
        h,
        "py-hostile",
        &[("app.py", source)],
        (3000, 160),
    );
}

#[test]
fn build_errors_name_the_missing_piece() {
    let dir = common::temp_dir("broken-plugin");
    let krate = dir.join("broken");
    let build = |options: BuildOptions| block_on(plugin_cli::build_plugin(&options));
    let error =
        |r: Result<plugin_cli::Built, PluginCliError>| r.expect_err("the build should fail");

    let e = error(build(build_options(&krate, None)));
    assert!(matches!(e, PluginCliError::NoCrate(_)), "{e}");

    plugin_cli::new_plugin(
        "broken",
        PluginKind::Action,
        &krate,
        &SdkSource::Path(repo().to_path_buf()),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(krate.join("plugin.toml")).unwrap();
    std::fs::remove_file(krate.join("plugin.toml")).unwrap();
    let e = error(build(build_options(&krate, None)));
    assert!(
        matches!(e, PluginCliError::NoManifest(_)) && e.to_string().contains("no plugin.toml"),
        "{e}"
    );

    std::fs::write(
        krate.join("plugin.toml"),
        manifest.replace("kind = \"action\"", "kind = \"gadget\""),
    )
    .unwrap();
    let e = error(build(build_options(&krate, None)));
    assert!(matches!(e, PluginCliError::BadManifest { .. }), "{e}");

    std::fs::write(krate.join("plugin.toml"), &manifest).unwrap();
    let e = error(build(BuildOptions {
        cargo: Some("/nonexistent/cargo".into()),
        ..build_options(&krate, None)
    }));
    assert!(
        matches!(e, PluginCliError::NoCargo { .. }) && e.to_string().contains("rustup"),
        "{e}"
    );

    std::fs::write(
        krate.join("plugin.toml"),
        manifest.replace("broken.wasm", "other.wasm"),
    )
    .unwrap();
    let e = error(build(build_options(&krate, None)));
    let message = e.to_string();
    assert!(
        matches!(e, PluginCliError::ComponentMismatch { .. })
            && message.contains("other.wasm")
            && message.contains("broken.wasm"),
        "{message}"
    );

    // A capability the code uses but the manifest doesn't grant: refused
    // before it reaches the plugin folder.
    std::fs::write(
        krate.join("plugin.toml"),
        manifest.replace("[\"page\", \"input\"]", "[\"page\"]"),
    )
    .unwrap();
    let install = dir.join("installed");
    let e = error(build(build_options(&krate, Some(&install))));
    assert!(
        matches!(e, PluginCliError::Refused(_)) && e.to_string().contains("wabp:plugin/input"),
        "{e}"
    );
    assert!(!install.join("broken").exists(), "nothing installed");

    std::fs::write(krate.join("plugin.toml"), &manifest).unwrap();
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        lib.replace("fn click(", "fn click(oops: NoSuchType, "),
    )
    .unwrap();
    let e = error(build(build_options(&krate, None)));
    let message = e.to_string();
    assert!(
        matches!(e, PluginCliError::BuildFailed { .. })
            && message.contains("NoSuchType")
            && message.contains("error"),
        "cargo's stderr tail is shown: {message}"
    );

    std::fs::write(krate.join("src/lib.rs"), &lib).unwrap();
    // A toolchain without the wasm32-wasip2 standard library: a rustc whose
    // sysroot has no such target. The CLI names the target and the fix.
    let fake_rustc = dir.join("rustc-without-wasm");
    std::fs::write(
        &fake_rustc,
        format!("#!/bin/sh\necho {}\n", dir.join("empty-sysroot").display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &fake_rustc,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (ok, out) = run_bounded(
        Command::new(env!("CARGO_BIN_EXE_wabp"))
            .args(["plugin", "build", "--no-install"])
            .arg(&krate)
            .env("RUSTC", &fake_rustc),
        Duration::from_secs(60),
    );
    assert!(!ok, "a build without the target fails: {out}");
    assert!(
        out.contains("the wasm32-wasip2 target is not installed")
            && out.contains("rustup target add wasm32-wasip2"),
        "{out}"
    );

    // Fixed, it builds and installs.
    let built = block_on(plugin_cli::build_plugin(&build_options(
        &krate,
        Some(&install),
    )))
    .unwrap();
    assert_eq!(built.provides, vec!["broken_click"]);
    assert!(
        install.join("broken/broken.wasm").is_file()
            && install.join("broken/plugin.toml").is_file()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `examples/embed`: wabp as a Rust library, run as its own program.
#[test]
fn the_embed_example_runs() {
    let exe = std::env::current_exe().unwrap();
    let program = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|debug| debug.join("examples").join("embed"))
        .unwrap();
    assert!(
        program.exists(),
        "{} (cargo test builds examples)",
        program.display()
    );
    let (stdout, _) = common::run_to_success(&mut std::process::Command::new(&program));
    assert!(stdout.contains("title: \"Greeter\""), "{stdout}");
    assert!(stdout.contains("name field: e"), "{stdout}");
    assert!(stdout.contains("greeting: Hello Ada"), "{stdout}");
    assert!(stdout.contains("counter: \"1\""), "{stdout}");
    assert!(
        stdout.contains("after navigating away: STALE_REF"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("greet click: ") && l.contains("recorded as act_")),
        "{stdout}"
    );
}
