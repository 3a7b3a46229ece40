//! `wabp-bench`: prints the numbers BENCHMARKS.md records. Medians, not
//! assertions: these machines are noisy.
//!
//! cargo run --release --bin wabp-bench

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::response::Html;
use serde_json::{Value, json};
use wabp_core::plugin::{MarkupElement, PluginRegistry, Rect};

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

pub(crate) fn busy_page() -> String {
    let mut html = String::from(
        "<!doctype html><title>Bench</title><style>body{font:14px sans-serif} .c{display:inline-block;margin:6px;padding:8px;border:1px solid #888}</style><body><h1>Benchmark page</h1><input placeholder='search' style='width:300px'><div id=out>0</div>",
    );
    for i in 0..120 {
        html.push_str(&format!("<button class=c onclick=\"document.getElementById('out').textContent={i}\">Button {i}</button>"));
    }
    html.push_str("<div style='height:300px;overflow:auto;width:400px'><div style='height:2000px'>scroll</div></div></body>");
    html
}

/// Starts an engine with the bench's options in a session folder of its
/// own (`wabp-bench-<label>-<pid>` in the temp dir) and serves its API on a
/// free port: the API's base URL, the engine, and the folder to remove.
pub(crate) async fn start_engine(
    label: &str,
) -> anyhow::Result<(
    String,
    std::sync::Arc<wabp_core::Engine>,
    std::path::PathBuf,
)> {
    let session = std::env::temp_dir().join(format!("wabp-bench-{label}-{}", std::process::id()));
    let app = wabp::App::start(bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}/api/v1", listener.local_addr()?);
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    Ok((api, engine, session))
}

/// Serves `router` on 127.0.0.1 (a port of its own); its `http://` base.
pub(crate) async fn serve_site(router: axum::Router) -> anyhow::Result<String> {
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", site.local_addr()?);
    tokio::spawn(async move { axum::serve(site, router).await });
    Ok(base)
}

mod bench_agent;
mod bench_compare;
mod bench_encode;
mod bench_fleet;
mod bench_plugin_build;
mod bench_plugin_calls;
mod bench_recovery;
mod bench_snapshot;
mod bench_ui;

/// The engine's defaults in `session`, on the browser `WABP_BENCH_CHROME`
/// names (full Chromium: the compositor driver) or the one found.
pub(crate) fn bench_options(session: std::path::PathBuf) -> wabp::Options {
    let mut options = wabp::Options::default_for_session(session);
    // WABP_BENCH_CONNECT attaches to a running browser (`http://host:port`),
    // WABP_BENCH_CHROME launches that executable, WABP_BENCH_HEADED shows
    // its window (under a display, e.g. `xvfb-run`).
    options.launch = match (
        std::env::var("WABP_BENCH_CONNECT"),
        std::env::var("WABP_BENCH_CHROME"),
    ) {
        (Ok(endpoint), _) => wabp_core::browser::LaunchMode::Connect(endpoint),
        (_, Ok(path)) => wabp_core::browser::LaunchMode::Binary(path.into()),
        _ => wabp_core::browser::LaunchMode::Auto,
    };
    options.headed = std::env::var_os("WABP_BENCH_HEADED").is_some();
    // WABP_BENCH_NO_PAUSE: pages run freely between actions.
    options.pause = std::env::var_os("WABP_BENCH_NO_PAUSE").is_none();
    // WABP_BENCH_CHROME_ARGS: more Chromium switches, space-separated.
    if let Ok(args) = std::env::var("WABP_BENCH_CHROME_ARGS") {
        options
            .chrome_args
            .extend(args.split_whitespace().map(str::to_string));
    }
    // WABP_BENCH_NO_SITE_ISOLATION: headless-shell's deterministic driver.
    options.site_isolation = std::env::var_os("WABP_BENCH_NO_SITE_ISOLATION").is_none();
    options
}

/// Runs `scripts/bench/<script>` with node and playwright-core (installed
/// by `cd scripts/bench && npm install`); its JSON line, or why it did not
/// run.
pub(crate) async fn playwright(script: &str, args: &[&str]) -> Result<Value, String> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/bench")
        .join(script);
    if !script
        .with_file_name("node_modules")
        .join("playwright-core")
        .exists()
    {
        return Err("cd scripts/bench && npm install (playwright-core)".into());
    }
    let out = tokio::process::Command::new("node")
        .arg(&script)
        .args(args)
        .output()
        .await
        .map_err(|e| format!("node: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("failed")
            .to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("its answer: {e}"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("snapshot") => bench_snapshot::run().await,
        Some("recovery") => bench_recovery::run().await,
        Some("compare") => bench_compare::run().await,
        Some("encode") => bench_encode::run().await,
        Some("agent") => bench_agent::run().await,
        Some("plugin-build") => bench_plugin_build::run().await,
        Some("plugin-calls") => bench_plugin_calls::run().await,
        Some("fleet") => bench_fleet::run().await,
        Some("remote") => bench_fleet::run_remote().await,
        Some("ui") => bench_ui::run().await,
        _ => action_loop().await,
    }
}

/// The default run: where an action's time goes, freeze and thaw, plugin
/// calls, recording, hot reload; Playwright beside it.
async fn action_loop() -> anyhow::Result<()> {
    // RUST_LOG=wabp_core::action=trace shows each wait's timeline.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let page = busy_page();
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let site_url = format!("http://{}/", site.local_addr()?);
    tokio::spawn(async move {
        axum::serve(
            site,
            axum::Router::new().route("/", axum::routing::get(move || async move { Html(page) })),
        )
        .await
    });

    let session = std::env::temp_dir().join(format!("wabp-bench-{}", std::process::id()));
    let app = wabp::App::start(bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}/api/v1", listener.local_addr()?);
    let registry = app.registry.clone();
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let http = reqwest::Client::new();
    let post = |path: String, body: Value| post_json(&http, path, body);
    println!(
        "browser: {}, frame driver: {}",
        engine.status().executable.unwrap_or_default(),
        engine.frame_driver()
    );
    let tabs: Value = http.get(format!("{api}/tabs")).send().await?.json().await?;
    let tab = tabs[0]["id"].as_str().unwrap().to_string();
    post(
        format!("{api}/tabs/{tab}/navigate"),
        json!({ "url": site_url }),
    )
    .await;

    let runs = 50;
    action_parts(&http, &api, &tab, &site_url, runs).await;
    let handle = engine.tab(&wabp_core::Caller::anonymous(), &tab)?;
    freeze_and_thaw(&handle, runs).await?;
    // 2. The same click without screenshots and with the immediate wait.
    let mut bare = vec![];
    for i in 0..runs {
        let env = post(format!("{api}/tabs/{tab}/click"), json!({ "x": 60 + (i % 5) * 90, "y": 120, "screenshot": { "area": "none" }, "wait_until": { "type": "immediate" } })).await;
        bare.push(env["timing"]["duration_ms"].as_f64().unwrap());
    }
    println!(
        "click, no screenshots, immediate wait: {:.1} ms",
        median(bare)
    );
    // Playwright on the same browser binary and page, in the same run.
    let executable = engine.status().executable.unwrap_or_default();
    match playwright("click.mjs", &[&site_url, &executable, "50"]).await {
        Ok(v) => println!(
            "Playwright on {executable}: screenshot, mouse.click, waitForLoadState, screenshot: {:.1} ms (median of 50)",
            v["median_ms"].as_f64().unwrap_or(0.0)
        ),
        Err(why) => println!("Playwright not run: {why}"),
    }

    plugin_calls(&registry).await;
    let frame = {
        let shot = engine
            .screenshot(&wabp_core::Caller::anonymous(), &tab, vec![], false, false)
            .await?;
        shot.data.as_ref().clone()
    };
    history_costs(&frame).await?;

    // 5. Hot reload: file write → new version answering.
    println!(
        "hot reload, write to live (median of 10): {:.1} ms",
        hot_reload_latency().await?
    );
    engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}

/// A POST's JSON answer; the bench stops at the first failure.
pub(crate) async fn post_json(http: &reqwest::Client, path: String, body: Value) -> Value {
    http.post(path)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()
}

/// 1. Where an action's time goes: a click with the full envelope (before
/// + after, all markup, cursor), and navigations with and without
/// screenshots.
async fn action_parts(http: &reqwest::Client, api: &str, tab: &str, site_url: &str, runs: usize) {
    let post = |path: String, body: Value| post_json(http, path, body);
    let operations = [
        ("click, full envelope", "click", None),
        ("navigate, default envelope", "navigate", None),
        (
            "navigate, screenshot.area none",
            "navigate",
            Some(json!({ "area": "none" })),
        ),
    ];
    for (label, operation, screenshot) in operations {
        let mut samples: [Vec<f64>; 9] = Default::default();
        for i in 0..runs + 3 {
            let mut body = match operation {
                "click" => json!({ "x": 60 + (i % 5) * 90, "y": 120 }),
                _ => json!({ "url": site_url }),
            };
            if let Some(screenshot) = &screenshot {
                body["screenshot"] = screenshot.clone();
            }
            let started = Instant::now();
            let env = post(format!("{api}/tabs/{tab}/{operation}"), body).await;
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            if i < 3 {
                continue; // warm-up
            }
            let t = &env["timing"];
            let p = &t["parts"];
            let number = |v: &Value| v.as_f64().unwrap_or(0.0);
            // The before frame is reused while frozen, so capture work is
            // mostly the after frame.
            for (sample, value) in samples.iter_mut().zip([
                number(&t["duration_ms"]),
                elapsed,
                number(&p["before_ms"]),
                number(&p["dispatch_ms"]),
                number(&p["wait_ms"]),
                number(&p["after_ms"]),
                number(&p["capture_ms"]),
                number(&p["markup_ms"]),
                number(&p["encode_ms"]),
            ]) {
                sample.push(value);
            }
        }
        let [
            total,
            wall,
            before,
            dispatch,
            wait,
            after,
            capture,
            markup,
            encode,
        ] = samples;
        println!("{label}, 1280x720, median of {runs}:");
        println!("  HTTP round trip          {:7.1} ms", median(wall));
        println!("  action loop total        {:7.1} ms", median(total));
        println!("    before screenshot      {:7.1} ms", median(before));
        println!("    dispatch (plugin+CDP)  {:7.1} ms", median(dispatch));
        println!("    wait (action_complete) {:7.1} ms", median(wait));
        println!("    after screenshot       {:7.1} ms", median(after));
        println!(
            "  per action: capture  {:7.1} ms, markup {:5.1} ms, encode {:5.1} ms",
            median(capture),
            median(markup),
            median(encode)
        );
    }
}

/// Freeze/thaw cost, measured on the tab directly.
async fn freeze_and_thaw(handle: &wabp_core::tab::Tab, runs: usize) -> anyhow::Result<()> {
    let (mut thaws, mut freezes) = (vec![], vec![]);
    for _ in 0..runs {
        let started = Instant::now();
        handle.driver().thaw().await?;
        thaws.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        handle.driver().freeze().await?;
        freezes.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "freeze/thaw per action: thaw {:.2} ms, freeze {:.2} ms (median of {runs})",
        median(thaws),
        median(freezes)
    );
    Ok(())
}

/// 3. Plugin call overhead: a markup render, a wait session, a policy
/// decision.
async fn plugin_calls(registry: &wabp_plugin_host::Registry) {
    let elements: Vec<MarkupElement> = (0..10)
        .map(|i| MarkupElement {
            index: i + 1,
            rect: Rect {
                x: 10.0 * i as f64,
                y: 10.0,
                width: 50.0,
                height: 20.0,
            },
            tag: "button".into(),
            role: String::new(),
            name: format!("b{i}"),
            href: None,
            clickable: true,
            typeable: false,
            scrollable: false,
            focused: false,
        })
        .collect();
    let renderer = registry.markup("clickable").expect("abp-markup loaded");
    let tags = vec!["clickable".to_string()];
    let mut calls = vec![];
    for _ in 0..500 {
        let started = Instant::now();
        renderer
            .render(&tags, (1280.0, 720.0), &elements)
            .await
            .unwrap();
        calls.push(started.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "plugin call: markup render, 10 elements (warm instance): {:.1} µs median",
        median(calls)
    );
    let waits = registry.wait("immediate").unwrap();
    let mut calls = vec![];
    for _ in 0..500 {
        let started = Instant::now();
        waits.begin("immediate", json!({})).await.unwrap();
        calls.push(started.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "plugin call: wait begin (warm instance): {:.1} µs median",
        median(calls)
    );
    // Asked before every operation: the built-in policy with a small file.
    let policy = registry
        .policies()
        .into_iter()
        .next()
        .expect("standard-policy loaded");
    let settings = json!({
        "ask": ["script"],
        "navigation": { "allow": ["127.0.0.1", "*.example.com"], "deny": ["ads.example.com"] },
    })
    .to_string();
    let request = wabp_core::plugin::PolicyRequest {
        category: wabp_core::plugin::Category::Navigation,
        operation: "navigate".into(),
        target_url: Some("http://127.0.0.1:8080/page".into()),
        tab_url: Some("http://127.0.0.1:8080/".into()),
        user: None,
    };
    let mut calls = vec![];
    for _ in 0..500 {
        let started = Instant::now();
        policy.decide(&settings, &request).await.unwrap();
        calls.push(started.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "plugin call: policy decide (warm instance): {:.1} µs median",
        median(calls)
    );
}

/// 4. Recording cost per action, on its own store: with and without the two
/// screenshots (`frame`: this run's after-frame), and the database size per
/// 1,000 actions.
async fn history_costs(frame: &[u8]) -> anyhow::Result<()> {
    for with_shots in [false, true] {
        let dir = std::env::temp_dir().join(format!(
            "wabp-bench-history-{}-{with_shots}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let store = wabp_history::HistoryStore::open(&dir)?;
        store.start_session(json!({})).await?;
        let mut samples = vec![];
        for i in 0..1000 {
            let started = Instant::now();
            store
                .record_action(wabp_history::NewAction {
                    session_id: None,
                    tab_id: "tab_bench".into(),
                    action_type: "click".into(),
                    params: json!({ "x": i, "y": 10 }),
                    result: Some(json!({ "status": "clicked" })),
                    error: None,
                    started_ms: 0,
                    completed_ms: 1,
                    timing: Some(json!({ "duration_ms": 1.0 })),
                    scroll: Some(json!({ "vertical_px": 0 })),
                    virtual_time_ms: Some(0),
                    events: vec![wabp_history::NewEvent {
                        tab_id: "tab_bench".into(),
                        event_type: "navigation".into(),
                        virtual_time_ms: Some(0),
                        data: json!({ "url": "http://127.0.0.1/" }),
                        user_id: None,
                    }],
                    screenshot_before: with_shots.then(|| frame.to_vec()),
                    screenshot_after: with_shots.then(|| frame.to_vec()),
                    user_id: None,
                })
                .await?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        store.close().await?;
        let db = ["history.db", "history.db-wal"]
            .iter()
            .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
            .map(|m| m.len())
            .sum::<u64>();
        let shots: u64 = std::fs::read_dir(dir.join("screenshots"))
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        println!(
            "history: record one action {} screenshots: {:.2} ms median; per 1,000 actions: database {:.1} MB, screenshot files {:.1} MB",
            if with_shots { "with" } else { "without" },
            median(samples),
            db as f64 / 1e6,
            shots as f64 / 1e6
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

async fn hot_reload_latency() -> anyhow::Result<f64> {
    let registry = wabp::builtin_registry().await?;
    let dir = std::env::temp_dir().join(format!("wabp-bench-plugins-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plugin = dir.join("test-echo");
    std::fs::create_dir_all(&plugin)?;
    let _watch = wabp_plugin_host::watch(registry.clone(), dir.clone())?;
    let src = Path::new(wabp::TEST_PLUGINS_SRC);
    let built = Path::new(wabp::TEST_PLUGINS_DIR);
    let mut samples = vec![];
    for i in 0..10 {
        let version = if i % 2 == 0 { "v1" } else { "v2" };
        let manifest =
            std::fs::read_to_string(src.join(format!("test-echo-{version}")).join("plugin.toml"))?;
        let bytes = std::fs::read(built.join(format!("test_echo_{version}.wasm")))?;
        let started = Instant::now();
        std::fs::write(plugin.join("plugin.wasm"), &bytes)?;
        std::fs::write(plugin.join("plugin.toml"), &manifest)?;
        let expected = if i % 2 == 0 { "1" } else { "2" };
        loop {
            if let Some(info) = registry.plugins().iter().find(|p| p.name == "test-echo") {
                if info.version.starts_with(expected) && info.status == "active" {
                    break;
                }
            }
            if started.elapsed() > Duration::from_secs(10) {
                anyhow::bail!("reload did not happen within 10 s");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _: Arc<dyn PluginRegistry> = registry;
    Ok(median(samples))
}
