//! `wabp-bench ui`: what the web UI costs. An agent's clicks and
//! navigations with nobody watching and with one person watching the tab's
//! live view; the live view's frame latency after an action; a busy page
//! taken over and watched (screencast): frames per second and CPU, against
//! the same page taken over with nobody watching; a timeline of 500
//! actions: its server render and its load in a browser. The person is
//! Playwright (`scripts/bench/ui-viewer.mjs`) in a process of its own.

use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::bench_compare::{busy_ticks, process_ticks};
use crate::{busy_page, median, post_json, serve_site};

/// A page that never stops drawing: a spinning box and a canvas redrawn
/// every animation frame.
const BUSY_PAGE: &str = "<!doctype html><title>busy</title><style>@keyframes spin{to{transform:rotate(360deg)}}\
    #box{width:200px;height:200px;background:#36c;animation:spin 1s linear infinite;margin:40px}</style>\
    <div id=box></div><canvas id=c width=600 height=200></canvas><script>\
    const c=document.getElementById('c').getContext('2d');let n=0;\
    (function draw(){n++;c.fillStyle='hsl('+(n%360)+',70%,50%)';c.fillRect(0,0,600,200);c.fillStyle='#fff';\
    c.font='40px sans-serif';c.fillText('frame '+n,20,110);requestAnimationFrame(draw)})()</script>";

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// The Playwright viewer: commands in, JSON lines out.
struct Viewer {
    child: tokio::process::Child,
    input: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Viewer {
    async fn start(login: &str, chromium: &str) -> anyhow::Result<Viewer> {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench/ui-viewer.mjs");
        anyhow::ensure!(
            script
                .with_file_name("node_modules")
                .join("playwright-core")
                .exists(),
            "cd scripts/bench && npm install (playwright-core)"
        );
        let mut child = tokio::process::Command::new("node")
            .arg(&script)
            .arg(login)
            .arg(chromium)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let input = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut viewer = Viewer {
            child,
            input,
            lines,
        };
        viewer.answer().await?;
        Ok(viewer)
    }

    async fn answer(&mut self) -> anyhow::Result<Value> {
        let line = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
            .await??
            .ok_or_else(|| anyhow::anyhow!("the viewer stopped"))?;
        Ok(serde_json::from_str(&line)?)
    }

    async fn ask(&mut self, command: &str) -> anyhow::Result<Value> {
        self.input
            .write_all(format!("{command}\n").as_bytes())
            .await?;
        self.answer().await
    }

    async fn quit(mut self) {
        let _ = self.input.write_all(b"quit\n").await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// Clicks (full envelope) and navigations: medians in ms, and each click's
/// answer time (ms since the epoch).
async fn agent_work(
    http: &reqwest::Client,
    api: &str,
    tab: &str,
    site: &str,
    clicks: usize,
    navigations: usize,
    gap: Duration,
) -> (f64, f64, Vec<f64>) {
    let mut click_ms = Vec::new();
    let mut answered = Vec::new();
    for i in 0..clicks {
        let t0 = Instant::now();
        post_json(
            http,
            format!("{api}/tabs/{tab}/click"),
            json!({ "x": 60 + (i % 5) * 90, "y": 120 }),
        )
        .await;
        click_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
        answered.push(now_ms());
        tokio::time::sleep(gap).await;
    }
    let mut navigate_ms = Vec::new();
    for _ in 0..navigations {
        let t0 = Instant::now();
        post_json(
            http,
            format!("{api}/tabs/{tab}/navigate"),
            json!({ "url": site }),
        )
        .await;
        navigate_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    (median(click_ms), median(navigate_ms), answered)
}

/// CPU over `span`: the engine process's share of one core, and the whole
/// machine's busy share (all cores, the browsers and the viewer included).
async fn cpu_over(span: Duration) -> (f64, f64) {
    let me = std::process::id();
    let ticks_per_s = 100.0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let (own0, all0) = (process_ticks(me).unwrap_or(0), busy_ticks());
    tokio::time::sleep(span).await;
    let (own1, all1) = (process_ticks(me).unwrap_or(0), busy_ticks());
    let secs = span.as_secs_f64();
    (
        (own1 - own0) as f64 / ticks_per_s / secs * 100.0,
        (all1 - all0) as f64 / ticks_per_s / secs / cores * 100.0,
    )
}

pub async fn run() -> anyhow::Result<()> {
    let page = busy_page();
    let site = serve_site(
        axum::Router::new()
            .route(
                "/",
                axum::routing::get(move || async move { axum::response::Html(page) }),
            )
            .route(
                "/busy",
                axum::routing::get(|| async { axum::response::Html(BUSY_PAGE) }),
            ),
    )
    .await?;
    let site_url = format!("{site}/");
    let session = std::env::temp_dir().join(format!("wabp-bench-ui-{}", std::process::id()));
    let app = wabp::App::start(crate::bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let origin = format!("http://{}", listener.local_addr()?);
    let api = format!("{origin}/api/v1");
    let login = format!("{origin}/ui/login?key={}", app.ui.key());
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let http = reqwest::Client::new();
    let chromium = engine.status().executable.unwrap_or_default();
    println!(
        "browser: {chromium}, frame driver: {}",
        engine.frame_driver()
    );
    let tabs: Value = http.get(format!("{api}/tabs")).send().await?.json().await?;
    let tab = tabs[0]["id"].as_str().unwrap_or_default().to_string();
    post_json(
        &http,
        format!("{api}/tabs/{tab}/navigate"),
        json!({ "url": site_url }),
    )
    .await;

    // 1. Nobody watching: the UI is compiled in, no stream is open.
    agent_work(&http, &api, &tab, &site_url, 5, 2, Duration::ZERO).await;
    let (click_alone, navigate_alone, _) =
        agent_work(&http, &api, &tab, &site_url, 40, 15, Duration::ZERO).await;
    println!(
        "nobody watching: click {click_alone:.1} ms, navigate {navigate_alone:.1} ms (medians of 40 and 15)"
    );
    match crate::playwright("click.mjs", &[&site_url, &chromium, "40"]).await {
        Ok(v) => println!(
            "Playwright on the same page and browser: screenshot, mouse.click, waitForLoadState, screenshot: {:.1} ms (median of 40)",
            v["median_ms"].as_f64().unwrap_or(0.0)
        ),
        Err(why) => println!("Playwright not run: {why}"),
    }

    // 2. One person watching the tab's live view.
    let mut viewer = Viewer::start(&login, &chromium).await?;
    viewer.ask(&format!("watch {origin}/ui/tabs/{tab}")).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    viewer.ask("report").await?;
    let (click_watched, navigate_watched, answered) = agent_work(
        &http,
        &api,
        &tab,
        &site_url,
        40,
        15,
        Duration::from_millis(250),
    )
    .await;
    let arrivals: Vec<f64> = viewer.ask("report").await?["arrivals"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let latencies: Vec<f64> = answered
        .iter()
        .filter_map(|at| arrivals.iter().find(|a| **a >= *at - 1.0).map(|a| a - at))
        .collect();
    let mut sorted = latencies.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let p95 = sorted.get(sorted.len() * 95 / 100).copied().unwrap_or(0.0);
    println!(
        "one person watching: click {click_watched:.1} ms, navigate {navigate_watched:.1} ms (medians)"
    );
    println!(
        "live view, action answered -> its frame shown: median {:.0} ms, p95 {p95:.0} ms ({} of {} clicks matched)",
        median(latencies.clone()),
        latencies.len(),
        answered.len()
    );

    // 3. A busy page taken over (it runs): nobody watching, then watched.
    post_json(
        &http,
        format!("{api}/tabs/{tab}/navigate"),
        json!({ "url": format!("{site}/busy") }),
    )
    .await;
    let anyone = wabp_core::Caller::anonymous();
    engine
        .take_over(&anyone, &tab, "bench")
        .await
        .map_err(|e| anyhow::anyhow!(e.message))?;
    viewer.ask(&format!("open {origin}/ui/")).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (engine_alone, machine_alone) = cpu_over(Duration::from_secs(10)).await;
    println!(
        "busy page, running, nobody watching: engine {engine_alone:.1}% of a core, machine {machine_alone:.1}% busy"
    );
    viewer.ask(&format!("watch {origin}/ui/tabs/{tab}")).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    viewer.ask("report").await?;
    let span = Duration::from_secs(10);
    let (engine_watched, machine_watched) = cpu_over(span).await;
    let frames = viewer.ask("report").await?["arrivals"]
        .as_array()
        .map_or(0, Vec::len);
    println!(
        "busy page, running, one person watching: {:.1} frames/s shown, engine {engine_watched:.1}% of a core, machine {machine_watched:.1}% busy",
        frames as f64 / span.as_secs_f64()
    );
    engine
        .hand_back(&anyone, &tab)
        .await
        .map_err(|e| anyhow::anyhow!(e.message))?;

    // 4. A timeline of 500 actions.
    post_json(
        &http,
        format!("{api}/tabs/{tab}/navigate"),
        json!({ "url": site_url }),
    )
    .await;
    let mut last = String::new();
    let so_far: Value = http
        .get(format!("{api}/history/actions"))
        .send()
        .await?
        .json()
        .await?;
    let have = so_far["total"].as_u64().unwrap_or(0) as usize;
    for i in have..500 {
        let envelope = post_json(
            &http,
            format!("{api}/tabs/{tab}/click"),
            json!({ "x": 60 + (i % 5) * 90, "y": 120 }),
        )
        .await;
        last = envelope["action_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
    }
    let session_id: Value = http
        .get(format!("{api}/history/sessions/current"))
        .send()
        .await?
        .json()
        .await?;
    let session_id = session_id["id"].as_str().unwrap_or_default().to_string();
    let timeline = format!("{origin}/ui/sessions/{session_id}?action={last}");
    // The server's render, through a signed-in client.
    let signed = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let cookie = signed
        .get(&login)
        .send()
        .await?
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .to_string();
    let mut render = Vec::new();
    let mut bytes = 0;
    for _ in 0..7 {
        let t0 = Instant::now();
        let body = signed
            .get(&timeline)
            .header("cookie", &cookie)
            .send()
            .await?
            .text()
            .await?;
        render.push(t0.elapsed().as_secs_f64() * 1000.0);
        bytes = body.len();
    }
    let actions: Value = http
        .get(format!("{api}/history/actions?session_id={session_id}"))
        .send()
        .await?
        .json()
        .await?;
    println!(
        "timeline of {} actions: server answer {:.0} ms (median of 7, {} KB of HTML)",
        actions["total"],
        median(render),
        bytes / 1024
    );
    let mut loads = Vec::new();
    for _ in 0..5 {
        loads.push(
            viewer.ask(&format!("load {timeline}")).await?["ms"]
                .as_f64()
                .unwrap_or(0.0),
        );
    }
    println!(
        "timeline in a browser, navigation -> the chosen action's after screenshot decoded: {:.0} ms (median of 5)",
        median(loads)
    );
    viewer.quit().await;
    engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
