//! `wabp-bench compare`: wabp and Playwright (playwright-core from
//! scripts/bench, on the same Chromium binary) on the same pages in the same
//! run; medians and ratios. wabp is driven over its REST API on loopback,
//! with the default envelope unless a row says otherwise.

use std::time::Instant;

use axum::response::Html;
use serde_json::{Value, json};

use crate::median;

const RUNS: usize = 30;
const WARMUP: usize = 3;
const TEXT: &str = "abcdefghijklmnopqrst";

pub async fn run() -> anyhow::Result<()> {
    let page = crate::busy_page();
    let big = crate::bench_snapshot::catalogue(1000);
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", site.local_addr()?);
    tokio::spawn(async move {
        axum::serve(
            site,
            axum::Router::new()
                .route("/", axum::routing::get(move || async move { Html(page) }))
                .route("/big", axum::routing::get(move || async move { Html(big) })),
        )
        .await
    });
    let session = std::env::temp_dir().join(format!("wabp-bench-compare-{}", std::process::id()));
    let app = wabp::App::start(crate::bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}/api/v1", listener.local_addr()?);
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let http = reqwest::Client::new();
    let executable = engine.status().executable.unwrap_or_default();
    println!(
        "browser: {executable}, frame driver: {}",
        engine.frame_driver()
    );

    // Wall time of one request, failing loudly on an error answer.
    let request = |method: reqwest::Method, path: String, body: Option<Value>| {
        let http = http.clone();
        let url = format!("{api}{path}");
        async move {
            let started = Instant::now();
            let mut request = http.request(method, &url);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await?;
            let status = response.status();
            let bytes = response.bytes().await?;
            if !status.is_success() {
                anyhow::bail!("{url}: {status} {}", String::from_utf8_lossy(&bytes));
            }
            anyhow::Ok(started.elapsed().as_secs_f64() * 1000.0)
        }
    };
    let post = |path: String, body: Value| request(reqwest::Method::POST, path, Some(body));
    let tab: Value = http
        .post(format!("{api}/tabs"))
        .json(&json!({ "url": format!("{base}/") }))
        .send()
        .await?
        .json()
        .await?;
    let tab = tab["id"].as_str().unwrap_or_default().to_string();

    let mut rows: Vec<(&str, f64, Option<&str>)> = Vec::new();
    macro_rules! measure {
        ($label:expr, $pw:expr, |$i:ident| $call:expr) => {{
            let mut times = Vec::new();
            for $i in 0..RUNS + WARMUP {
                let ms = $call.await?;
                if $i >= WARMUP {
                    times.push(ms);
                }
            }
            rows.push(($label, median(times), $pw));
        }};
    }
    measure!("click, full envelope", Some("click"), |i| post(
        format!("/tabs/{tab}/click"),
        json!({ "x": 60 + (i % 5) * 90, "y": 120 })
    ));
    measure!("navigate, default envelope", Some("navigate"), |_i| post(
        format!("/tabs/{tab}/navigate"),
        json!({ "url": format!("{base}/") })
    ));
    measure!("navigate, screenshot.area none", Some("navigate"), |_i| {
        post(
            format!("/tabs/{tab}/navigate"),
            json!({ "url": format!("{base}/"), "screenshot": { "area": "none" } }),
        )
    });
    measure!(
        "viewport screenshot (WebP, markup)",
        Some("screenshot"),
        |_i| request(
            reqwest::Method::GET,
            format!("/tabs/{tab}/screenshot"),
            None
        )
    );
    measure!(
        "fill 20 characters, full envelope",
        Some("fill"),
        |_i| post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": TEXT })
        )
    );
    measure!("fill 20 characters, no screenshots", Some("fill"), |_i| {
        post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": TEXT, "screenshot": { "area": "none" } }),
        )
    });
    measure!(
        "type 20 characters, no screenshots",
        Some("type"),
        |_i| async {
            post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": "", "screenshot": { "area": "none" }, "wait_until": { "type": "immediate" } }),
        )
        .await?;
            post(
                format!("/tabs/{tab}/type"),
                json!({ "selector": "input", "text": TEXT, "screenshot": { "area": "none" } }),
            )
            .await
        }
    );
    post(
        format!("/tabs/{tab}/navigate"),
        json!({ "url": format!("{base}/big"), "screenshot": { "area": "none" } }),
    )
    .await?;
    measure!("snapshot, 2,000 elements", Some("snapshot"), |_i| request(
        reqwest::Method::GET,
        format!("/tabs/{tab}/snapshot"),
        None
    ));

    let playwright =
        crate::playwright("compare.mjs", &[&base, &executable, &RUNS.to_string()]).await;
    if let Err(why) = &playwright {
        println!("Playwright not run: {why}");
    }
    println!("\nmedians of {RUNS} (after {WARMUP} warm-up runs), ms");
    println!(
        "{:<40} {:>9} {:>11} {:>7}",
        "operation", "wabp", "Playwright", "ratio"
    );
    for (label, ours, key) in rows {
        let theirs = match (&playwright, key) {
            (Ok(v), Some(k)) => v[k].as_f64(),
            _ => None,
        };
        match theirs {
            Some(t) if t > 0.0 => println!("{label:<40} {ours:9.1} {t:11.1} {:6.2}x", ours / t),
            _ => println!("{label:<40} {ours:9.1} {:>11} {:>7}", "-", "-"),
        }
    }
    println!(
        "(Playwright: click = screenshot, mouse.click, waitForLoadState, screenshot; navigate = goto; \
         screenshot = PNG; fill = locator.fill; type = fill('') + pressSequentially; snapshot = ariaSnapshot)"
    );
    engine.shutdown(std::time::Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
