//! `wabp-bench snapshot`: snapshot time and size on a page with about 2,000
//! interactive elements, next to Playwright's `ariaSnapshot()` on the same
//! page when node and playwright-core are there (scripts/bench).

use std::time::Instant;

use axum::response::Html;
use serde_json::Value;

use crate::median;

/// 1,000 list items, each a link and a button: 2,000 interactive elements.
pub(crate) fn catalogue(n: usize) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><title>Catalogue</title></head><body><h1>Catalogue</h1><ul>",
    );
    for i in 0..n {
        out.push_str(&format!(
            "<li><a href=\"/item/{i}\">Item {i:05} with a descriptive name</a> <button>Add {i:05}</button> <span>In stock, ships in {} days</span></li>",
            i % 7 + 1
        ));
    }
    out.push_str("</ul><footer><a href=\"/next\">Next page</a></footer></body></html>");
    out
}

/// Frames on the frames page.
const FRAMES: usize = 20;

fn framed(n: usize) -> String {
    let mut html = String::from("<!doctype html><title>Frames</title><h1>Frames</h1>");
    for _ in 0..n {
        html.push_str("<iframe src='/inner' style='width: 200px; height: 80px'></iframe>");
    }
    html
}

pub async fn run() -> anyhow::Result<()> {
    // RUST_LOG=wabp_core::tab::snapshot=debug shows where a snapshot's time goes.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let page = catalogue(1000);
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", site.local_addr()?);
    tokio::spawn(async move {
        axum::serve(
            site,
            axum::Router::new()
                .route("/", axum::routing::get(move || async move { Html(page) }))
                .route("/frames", axum::routing::get(|| async { Html(framed(FRAMES)) }))
                .route(
                    "/inner",
                    axum::routing::get(|| async {
                        Html("<!doctype html><h2>Inner</h2><a href='/a'>A link</a> <button>A button</button>")
                    }),
                ),
        )
        .await
    });
    let session = std::env::temp_dir().join(format!("wabp-bench-snapshot-{}", std::process::id()));
    let app = wabp::App::start(crate::bench_options(session.clone())).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}/api/v1", listener.local_addr()?);
    let executable = app.engine.status().executable.clone();
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let http = reqwest::Client::new();
    let tab: Value = http
        .post(format!("{api}/tabs"))
        .json(&serde_json::json!({}))
        .send()
        .await?
        .json()
        .await?;
    let tab = tab["id"].as_str().unwrap_or_default().to_string();
    http.post(format!("{api}/tabs/{tab}/navigate"))
        .json(&serde_json::json!({ "url": url, "screenshot": { "area": "none" } }))
        .send()
        .await?;

    let get = |query: &'static str| {
        let (http, url) = (http.clone(), format!("{api}/tabs/{tab}/snapshot{query}"));
        async move {
            let t = Instant::now();
            let body: Value = http.get(url).send().await?.json().await?;
            anyhow::Ok((t.elapsed().as_secs_f64() * 1000.0, body))
        }
    };
    // The first snapshot of a page registers every ref (one CDP round trip
    // per element); later ones find them registered.
    let (cold, first) = get("").await?;
    let mut warm = Vec::new();
    let mut json_times = Vec::new();
    let mut json_chars = 0;
    for _ in 0..10 {
        warm.push(get("").await?.0);
        let (t, body) = get("?format=json").await?;
        json_times.push(t);
        json_chars = body.to_string().len();
    }
    let total = first["totalChars"].as_u64().unwrap_or(0);
    let window = first["snapshot"]
        .as_str()
        .map(|s| s.chars().count())
        .unwrap_or(0);
    println!("snapshot, 2,000 interactive elements (1,000 links + 1,000 buttons):");
    println!("  wabp GET /snapshot, first        {cold:7.1} ms");
    println!("  wabp GET /snapshot, median of 10 {:7.1} ms", median(warm));
    println!(
        "  wabp format=json, median of 10   {:7.1} ms",
        median(json_times)
    );
    println!(
        "  wabp text: {total} chars (~{} tokens at 4 chars/token), refs {}, first window {window} chars",
        total / 4,
        first["refsCount"]
    );
    println!("  wabp json: {json_chars} chars");

    match executable {
        Some(exe) => match crate::playwright("aria-snapshot.mjs", &[&url, &exe, "10"]).await {
            Ok(v) => println!(
                "  Playwright {} on {exe}: first {:.1} ms, median {:.1} ms, {} chars (~{} tokens), refs {}",
                v["mode"].as_str().unwrap_or("?"),
                v["first_ms"].as_f64().unwrap_or(0.0),
                v["median_ms"].as_f64().unwrap_or(0.0),
                v["chars"],
                v["chars"].as_u64().unwrap_or(0) / 4,
                v["refs"],
            ),
            Err(why) => println!("  Playwright not run: {why}"),
        },
        None => println!("  Playwright not run: no browser executable known"),
    }

    // A page of many same-site frames: each is read, and hung under its
    // `<iframe>`, in turn.
    http.post(format!("{api}/tabs/{tab}/navigate"))
        .json(
            &serde_json::json!({ "url": format!("{url}frames"), "screenshot": { "area": "none" } }),
        )
        .send()
        .await?;
    let mut framed_times = Vec::new();
    let mut framed_refs = Value::Null;
    for _ in 0..10 {
        let (t, body) = get("").await?;
        framed_times.push(t);
        framed_refs = body["refsCount"].clone();
    }
    println!(
        "snapshot of a page with {FRAMES} frames: median of 10 {:7.1} ms, refs {framed_refs}",
        median(framed_times)
    );
    engine.shutdown(std::time::Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
