//! `wabp-bench recovery`: time from a failure to a usable tab, for a page
//! that stops answering (a busy script after a click), a crashed renderer
//! and a killed browser. Medians of a few runs each: failures are slow.

use std::time::{Duration, Instant};

use axum::response::Html;
use serde_json::{Value, json};

use crate::median;

const BUSY: &str = r#"<!doctype html><html><head><title>Busy</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="while (true) {}">go</button></body></html>"#;
const CALM: &str =
    r#"<!doctype html><html><head><title>Calm</title></head><body><p>calm</p></body></html>"#;

struct Client {
    http: reqwest::Client,
    api: String,
}

impl Client {
    async fn post(&self, path: &str, body: Value) -> anyhow::Result<(u16, Value)> {
        let response = self
            .http
            .post(format!("{}{path}", self.api))
            .json(&body)
            .timeout(Duration::from_secs(60))
            .send()
            .await?;
        let status = response.status().as_u16();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}{path}", self.api))
            .send()
            .await?
            .json()
            .await?)
    }

    async fn tab_at(&self, url: &str) -> anyhow::Result<String> {
        let (_, tab) = self.post("/tabs", json!({ "url": url })).await?;
        Ok(tab["id"].as_str().unwrap_or_default().to_string())
    }

    async fn close(&self, tab: &str) -> anyhow::Result<()> {
        self.http
            .delete(format!("{}/tabs/{tab}", self.api))
            .send()
            .await?;
        Ok(())
    }

    /// Polls a script on `tab` until it answers; the time it took.
    async fn until_usable(&self, tab: &str, since: Instant) -> anyhow::Result<f64> {
        loop {
            let (status, _) = self
                .post(&format!("/tabs/{tab}/execute"), json!({ "script": "1" }))
                .await?;
            if status == 200 {
                return Ok(since.elapsed().as_secs_f64() * 1000.0);
            }
            anyhow::ensure!(since.elapsed() < Duration::from_secs(60), "never usable");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub async fn run() -> anyhow::Result<()> {
    let base = crate::serve_site(
        axum::Router::new()
            .route("/busy", axum::routing::get(|| async { Html(BUSY) }))
            .route("/calm", axum::routing::get(|| async { Html(CALM) })),
    )
    .await?;
    let session = std::env::temp_dir().join(format!("wabp-bench-recovery-{}", std::process::id()));
    let app = wabp::App::start(crate::bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let client = Client {
        http: reqwest::Client::new(),
        api: format!("http://{}/api/v1", listener.local_addr()?),
    };
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let runs = 5;

    // A busy script after a click: the click's answer (detection + repair),
    // with the default timeout (input gives up at 10 s) and a 3 s one.
    println!("recovery, median of {runs}:");
    for (label, wait) in [
        ("default timeout", json!({})),
        ("timeout_ms 3000", json!({ "timeout_ms": 3000 })),
    ] {
        let (mut answered, mut repairs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let tab = client.tab_at(&format!("{base}/busy")).await?;
            let started = Instant::now();
            let (_, envelope) = client
                .post(
                    &format!("/tabs/{tab}/click"),
                    json!({ "x": 140, "y": 60, "screenshot": { "area": "none" }, "wait_until": wait }),
                )
                .await?;
            answered.push(client.until_usable(&tab, started).await?);
            if let Some(ms) = envelope["events"]
                .as_array()
                .and_then(|e| e.iter().find(|e| e["type"] == "tab_recovered"))
                .and_then(|e| e["data"]["repair_ms"].as_f64())
            {
                repairs.push(ms);
            }
            client.close(&tab).await?;
        }
        println!(
            "  busy script after a click ({label}): usable again after {:7.1} ms (of which the repair {:.1} ms)",
            median(answered),
            median(repairs)
        );
    }

    // A crashed renderer: the next request repairs the tab.
    let mut crashed = Vec::new();
    for _ in 0..runs {
        let tab = client.tab_at(&format!("{base}/calm")).await?;
        let handle = engine.tab(&wabp_core::Caller::anonymous(), &tab)?;
        let started = Instant::now();
        let crash = tokio::spawn(async move {
            let _ = handle.session.raw("Page.crash", json!({})).await;
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        crashed.push(client.until_usable(&tab, started).await?);
        crash.abort();
        client.close(&tab).await?;
    }
    println!(
        "  crashed renderer:          usable again after {:7.1} ms",
        median(crashed)
    );

    // A killed browser: back, with the tab reopened.
    let profile = engine.config.browser.user_data_dir.display().to_string();
    let mut restarts = Vec::new();
    let tab = client.tab_at(&format!("{base}/calm")).await?;
    for _ in 0..3 {
        let started = Instant::now();
        std::process::Command::new("pkill")
            .args(["-9", "-f", &format!("user-data-dir={profile}( |$)")])
            .status()?;
        // Until the engine has noticed.
        while client.get("/browser/status").await?["data"]["ready"] == true
            && started.elapsed() < Duration::from_secs(10)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        restarts.push(client.until_usable(&tab, started).await?);
    }
    println!(
        "  killed browser (median of 3): tab usable again after {:7.1} ms",
        median(restarts)
    );
    engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
