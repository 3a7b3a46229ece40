//! `wabp-bench fleet`: three engines behind HAProxy (`scripts/fleet.sh`) on
//! this machine. Click latency through the balancer and straight to the
//! engine; actions per second with the users spread over three engines and
//! with all of them on one; the drain of an engine with ten actions in
//! flight; memory per idle and per busy tab.
//!
//! `wabp-bench remote`: clicks on a browser from the browserless platform
//! (`scripts/test-browserless.sh`, on this machine), attached by its launch
//! URL, next to a browser the engine launched.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{busy_page, median, serve_site};

const ENGINES: u16 = 3;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `scripts/fleet.sh ARGS` with the `wabp` built beside this bench.
fn fleet_sh(args: &[String]) -> anyhow::Result<()> {
    let wabp = std::env::current_exe()?.with_file_name("wabp");
    let status = std::process::Command::new("bash")
        .arg(repo().join("scripts/fleet.sh"))
        .args(args)
        .env("WABP_BIN", wabp)
        .status()?;
    anyhow::ensure!(status.success(), "scripts/fleet.sh {args:?} failed");
    Ok(())
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

async fn post(http: &reqwest::Client, url: &str, body: Value) -> anyhow::Result<Value> {
    let response = http.post(url).json(&body).send().await?;
    let status = response.status();
    let body: Value = response.json().await?;
    anyhow::ensure!(status.is_success(), "{url}: {status} {body}");
    Ok(body)
}

/// A new tab for `user` through `api`, on `url`; its id.
async fn tab_for(
    http: &reqwest::Client,
    api: &str,
    user: &str,
    url: &str,
) -> anyhow::Result<String> {
    let tab = post(http, &format!("{api}/tabs?userId={user}"), json!({})).await?;
    let id = tab["id"].as_str().unwrap_or_default().to_string();
    post(
        http,
        &format!("{api}/tabs/{id}/navigate?userId={user}"),
        json!({ "url": url, "screenshot": { "area": "none" } }),
    )
    .await?;
    Ok(id)
}

/// Median click time over `runs` clicks, in ms.
async fn clicks(
    http: &reqwest::Client,
    api: &str,
    user: &str,
    tab: &str,
    runs: usize,
    shots: bool,
) -> anyhow::Result<f64> {
    let mut times = Vec::new();
    for i in 0..runs {
        let mut body = json!({ "x": 40 + (i % 5) * 90, "y": 120 });
        if !shots {
            body["screenshot"] = json!({ "area": "none" });
        }
        let started = Instant::now();
        post(http, &format!("{api}/tabs/{tab}/click?userId={user}"), body).await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(median(times))
}

/// Clicks per second by `users` (each on a tab of its own) for `secs`.
async fn throughput(
    http: &reqwest::Client,
    api: &str,
    tabs: &[(String, String)],
    secs: u64,
) -> anyhow::Result<f64> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut workers = Vec::new();
    for (user, tab) in tabs.iter().cloned() {
        let (http, api) = (http.clone(), api.to_string());
        workers.push(tokio::spawn(async move {
            let mut done = 0u64;
            while Instant::now() < deadline {
                let body = json!({ "x": 40, "y": 120, "screenshot": { "area": "none" } });
                if post(
                    &http,
                    &format!("{api}/tabs/{tab}/click?userId={user}"),
                    body,
                )
                .await
                .is_ok()
                {
                    done += 1;
                }
            }
            done
        }));
    }
    let mut total = 0;
    for worker in workers {
        total += worker.await?;
    }
    Ok(total as f64 / secs as f64)
}

/// What the engine at `root` and its browser hold, from its metrics.
async fn memory_bytes(http: &reqwest::Client, root: &str) -> anyhow::Result<f64> {
    let text = http
        .get(format!("{root}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    text.lines()
        .find_map(|l| l.strip_prefix("wabp_memory_bytes "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no wabp_memory_bytes in the metrics"))
}

pub async fn run() -> anyhow::Result<()> {
    let site = serve_site(
        axum::Router::new()
            .route(
                "/",
                axum::routing::get(|| async { axum::response::Html(busy_page()) }),
            )
            .route(
                "/sleep",
                axum::routing::get(|| async {
                    tokio::time::sleep(Duration::from_millis(1000)).await;
                    "slept"
                }),
            ),
    )
    .await?;
    let dir = std::env::temp_dir().join(format!("wabp-bench-fleet-{}", std::process::id()));
    let balancer = free_port()?;
    let first = loop {
        let p = free_port()?;
        if (0..ENGINES).all(|i| std::net::TcpListener::bind(("127.0.0.1", p + i)).is_ok()) {
            break p;
        }
    };
    let args = |command: &str| -> Vec<String> {
        [
            command,
            "--engines",
            &ENGINES.to_string(),
            "--port",
            &balancer.to_string(),
            "--first-engine-port",
            &first.to_string(),
            "--dir",
            &dir.display().to_string(),
        ]
        .map(String::from)
        .to_vec()
    };
    fleet_sh(&args("up"))?;
    let outcome = measure(&site, balancer, first, &dir).await;
    fleet_sh(&args("down"))?;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn measure(
    site: &str,
    balancer: u16,
    first: u16,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let lb = format!("http://127.0.0.1:{balancer}/api/v1");
    let engine_root = |engine: &str| -> String {
        let i: u16 = engine.trim_start_matches("engine-").parse().unwrap_or(1);
        format!("http://127.0.0.1:{}", first + i - 1)
    };
    let page = format!("{site}/");

    // Latency: one tab, clicked through the balancer and straight.
    let tab = tab_for(&http, &lb, "latency", &page).await?;
    let engine = tab
        .rsplit_once('.')
        .map(|(_, e)| e.to_string())
        .unwrap_or_default();
    let direct = format!("{}/api/v1", engine_root(&engine));
    clicks(&http, &lb, "latency", &tab, 10, true).await?;
    for shots in [true, false] {
        let mut through = Vec::new();
        let mut straight = Vec::new();
        // Alternating rounds: the machine's drift hits both alike.
        for _ in 0..4 {
            through.push(clicks(&http, &lb, "latency", &tab, 25, shots).await?);
            straight.push(clicks(&http, &direct, "latency", &tab, 25, shots).await?);
        }
        println!(
            "fleet click{}: through HAProxy {:.1} ms, straight to the engine {:.1} ms (medians of 100)",
            if shots {
                " (full envelope)"
            } else {
                " (no screenshots)"
            },
            median(through),
            median(straight)
        );
    }

    // Throughput: six users, spread over three engines, then all on one.
    let mut spread = Vec::new();
    for u in 0..6 {
        let user = format!("spread-{u}");
        let tab = tab_for(&http, &lb, &user, &page).await?;
        spread.push((user, tab));
    }
    let engines_used: std::collections::BTreeSet<&str> = spread
        .iter()
        .filter_map(|(_, t)| t.rsplit_once('.').map(|(_, e)| e))
        .collect();
    let over_three = throughput(&http, &lb, &spread, 10).await?;
    let one = format!("{}/api/v1", engine_root("engine-1"));
    let mut together = Vec::new();
    for u in 0..6 {
        let user = format!("together-{u}");
        let tab = tab_for(&http, &one, &user, &page).await?;
        together.push((user, tab));
    }
    let on_one = throughput(&http, &one, &together, 10).await?;
    println!(
        "fleet throughput, 6 users clicking without screenshots for 10 s: {over_three:.1} actions/s over {} engines through HAProxy, {on_one:.1} actions/s on one engine",
        engines_used.len()
    );

    // Memory per tab, on engine-3: ten idle tabs, then the same ten busy.
    let root = engine_root("engine-3");
    let api3 = format!("{root}/api/v1");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let before = memory_bytes(&http, &root).await?;
    let mut idle = Vec::new();
    for u in 0..10 {
        let user = format!("mem-{u}");
        let tab = post(&http, &format!("{api3}/tabs?userId={user}"), json!({})).await?;
        idle.push((user, tab["id"].as_str().unwrap_or_default().to_string()));
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let with_idle = memory_bytes(&http, &root).await?;
    for (user, tab) in &idle {
        post(
            &http,
            &format!("{api3}/tabs/{tab}/navigate?userId={user}"),
            json!({ "url": page, "screenshot": { "area": "none" } }),
        )
        .await?;
        clicks(&http, &api3, user, tab, 3, true).await?;
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let with_busy = memory_bytes(&http, &root).await?;
    println!(
        "fleet memory per tab (engine and browser, PSS): idle (about:blank, own user context) {:.1} MB, busy (a 120-button page, clicked) {:.1} MB",
        (with_idle - before) / 10.0 / 1048576.0,
        (with_busy - before) / 10.0 / 1048576.0
    );

    // Drain: ten navigations of one second in flight on engine-3, then SIGTERM.
    let mut in_flight = Vec::new();
    for (user, tab) in &idle {
        let (http, url) = (
            http.clone(),
            format!("{api3}/tabs/{tab}/navigate?userId={user}"),
        );
        let sleep = format!("{site}/sleep");
        in_flight.push(tokio::spawn(async move {
            post(
                &http,
                &url,
                json!({ "url": sleep, "screenshot": { "area": "none" } }),
            )
            .await
            .is_ok()
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = std::fs::read_to_string(dir.join("engine-3.pid"))?;
    let signalled = Instant::now();
    std::process::Command::new("kill")
        .args(["-s", "TERM", pid.trim()])
        .status()?;
    let mut finished = 0;
    for answer in in_flight {
        finished += usize::from(answer.await?);
    }
    let answered = signalled.elapsed();
    // Gone, or a zombie nobody has reaped yet; bounded either way.
    let running = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    };
    while running(pid.trim()) && signalled.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "fleet drain, 10 one-second navigations in flight: {finished}/10 answered 200 within {:.0} ms of SIGTERM; the engine exited after {:.0} ms",
        answered.as_secs_f64() * 1000.0,
        signalled.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}

/// Median click (full envelope, and without screenshots) on `engine`'s API.
async fn click_medians(
    http: &reqwest::Client,
    api: &str,
    page: &str,
) -> anyhow::Result<(f64, f64)> {
    let tab = tab_for(http, api, "bench", page).await?;
    clicks(http, api, "bench", &tab, 10, true).await?;
    Ok((
        clicks(http, api, "bench", &tab, 50, true).await?,
        clicks(http, api, "bench", &tab, 50, false).await?,
    ))
}

pub async fn run_remote() -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let site = serve_site(axum::Router::new().route(
        "/",
        axum::routing::get(|| async { axum::response::Html(busy_page()) }),
    ))
    .await?;
    let page = format!("{site}/");
    let out = std::process::Command::new("bash")
        .arg(repo().join("scripts/test-browserless.sh"))
        .stderr(std::process::Stdio::inherit())
        .output()?;
    anyhow::ensure!(out.status.success(), "scripts/test-browserless.sh failed");
    let launcher = String::from_utf8(out.stdout)?.trim().to_string();
    let port = free_port()?;
    let token = "wabp-bench-token-0123456789";
    let mut service = std::process::Command::new(&launcher)
        .env("PORT", port.to_string())
        .env("TOKEN", token)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let http = reqwest::Client::new();
    let started = Instant::now();
    while http
        .get(format!(
            "http://127.0.0.1:{port}/json/version?token={token}"
        ))
        .send()
        .await
        .map_or(true, |r| !r.status().is_success())
    {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(60),
            "browserless did not start"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let outcome = async {
        let mut rows = Vec::new();
        let launch_url = format!("ws://127.0.0.1:{port}/chromium?token={token}");
        for (label, connect, endpoint) in [
            ("local (launched by the engine)", None, None),
            ("browserless, attached by its launch URL", Some(launch_url.clone()), None),
            (
                "browserless, the user's own (--browser-endpoint)",
                None,
                Some(format!("{launch_url}&trackingId={{user}}")),
            ),
        ] {
            let session = std::env::temp_dir().join(format!("wabp-bench-remote-{}-{}", rows.len(), std::process::id()));
            let mut options = super::bench_options(session.clone());
            if let Some(url) = connect {
                options.launch = wabp_core::browser::LaunchMode::Connect(url);
            }
            options.browser_endpoints = endpoint.into_iter().collect();
            let app = wabp::App::start(options).await?;
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let api = format!("http://{}/api/v1", listener.local_addr()?);
            let engine = app.engine.clone();
            tokio::spawn(app.serve(listener));
            // A new user's first tab: with --browser-endpoint, the dial and
            // the service starting a browser are in it.
            let first = Instant::now();
            let warm = tab_for(&http, &api, "first", &page).await;
            let first_tab_ms = first.elapsed().as_secs_f64() * 1000.0;
            let medians = match warm {
                Ok(_) => click_medians(&http, &api, &page).await,
                Err(e) => Err(e),
            };
            engine.shutdown(Duration::from_secs(5)).await;
            let _ = std::fs::remove_dir_all(session);
            rows.push((label, first_tab_ms, medians?));
        }
        for (label, first_tab_ms, (full, bare)) in rows {
            println!("{label}: a new user's first tab (loaded) {first_tab_ms:.0} ms; click {full:.1} ms full envelope, {bare:.1} ms without screenshots (medians of 50)");
        }
        anyhow::Ok(())
    }
    .await;
    // The service and the browsers it started, together.
    let _ = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{}", service.id())])
        .status();
    let _ = service.wait();
    outcome
}
