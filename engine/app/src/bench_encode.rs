//! `wabp-bench encode`: what a screenshot's WebP costs on four kinds of page
//! (controls, a text article, a photo, text with photos), lossy quality 80
//! against lossless, and which one the engine picks.

use std::time::Instant;

use axum::response::Html;
use serde_json::{Value, json};
use wabp_core::capture::{
    LOSSLESS_MIN_FLAT_SHARE, encode_webp, encode_webp_lossless, encode_webp_lossy, flat_share,
};

use crate::median;

/// A canvas painted like a photo: smooth shapes of colour with grain, no two
/// neighbouring pixels alike.
const PHOTO_SCRIPT: &str = r#"<script>
for (const c of document.querySelectorAll('canvas')) {
  const g = c.getContext('2d');
  const img = g.createImageData(c.width, c.height);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 24) - 12;
  for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
    const i = 4 * (y * c.width + x);
    const sky = Math.max(0, 1 - y / (c.height * 0.6));
    const hill = 0.5 + 0.5 * Math.sin(x / 37 + Math.sin(y / 23) * 2);
    img.data[i] = 60 + 120 * sky + 40 * hill + noise();
    img.data[i + 1] = 90 + 80 * sky + 90 * hill * (1 - sky) + noise();
    img.data[i + 2] = 80 + 170 * sky + noise();
    img.data[i + 3] = 255;
  }
  g.putImageData(img, 0, 0);
}
</script>"#;

fn article() -> String {
    let mut html = String::from(
        "<!doctype html><title>Article</title><body style='font:16px/1.5 serif;max-width:900px;margin:20px auto'><h1>Understanding ownership</h1>",
    );
    for i in 0..12 {
        html.push_str(&format!(
            "<h2>Section {i}</h2><p>Ownership is a set of rules that govern how a program manages memory. \
             Some languages have garbage collection that regularly looks for no-longer-used memory as the program runs; \
             in other languages, the programmer must explicitly allocate and free the memory. Paragraph {i} goes on \
             with <a href='#'>a link</a>, <code>inline code</code> and <em>emphasis</em>.</p>\
             <pre style='background:#f4f4f4;padding:8px'>let s1 = String::from(\"hello\");\nlet s2 = s1;\nprintln!(\"{{s2}}, world!\");</pre>"
        ));
    }
    html
}

fn photo() -> String {
    format!(
        "<!doctype html><title>Photo</title><body style='margin:0'><canvas width=1280 height=720></canvas>{PHOTO_SCRIPT}"
    )
}

fn news() -> String {
    format!(
        "<!doctype html><title>News</title><body style='font:16px serif;margin:20px'><h1>Daily News</h1>\
         <div style='display:flex;gap:20px'><canvas width=500 height=340></canvas><div style='width:320px'>\
         <h2>Lake levels rise</h2><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
         incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation.</p>\
         <canvas width=300 height=200></canvas></div>\
         <div style='background:linear-gradient(45deg,#f80,#08f);width:300px;height:400px;border-radius:20px'></div></div>{PHOTO_SCRIPT}"
    )
}

pub async fn run() -> anyhow::Result<()> {
    let controls = crate::busy_page();
    let base = crate::serve_site(
        axum::Router::new()
            .route(
                "/controls",
                axum::routing::get(move || async move { Html(controls) }),
            )
            .route("/article", axum::routing::get(|| async { Html(article()) }))
            .route("/photo", axum::routing::get(|| async { Html(photo()) }))
            .route("/news", axum::routing::get(|| async { Html(news()) })),
    )
    .await?;
    let (api, engine, session) = crate::start_engine("encode").await?;
    let http = reqwest::Client::new();
    let tab: Value = http
        .post(format!("{api}/tabs"))
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    let tab = tab["id"].as_str().unwrap_or_default().to_string();

    println!(
        "screenshot encoding at 1280x720, default markup, median of 20 (lossless tried from a flat share of {LOSSLESS_MIN_FLAT_SHARE}):"
    );
    println!(
        "{:<10} {:>6} {:>16} {:>16} {:>9}",
        "page", "flat", "lossy q80", "lossless", "picked"
    );
    for page in ["controls", "article", "news", "photo"] {
        http.post(format!("{api}/tabs/{tab}/navigate"))
            .json(&json!({ "url": format!("{base}/{page}"), "screenshot": { "area": "none" } }))
            .send()
            .await?
            .error_for_status()?;
        let shot = http
            .get(format!("{api}/tabs/{tab}/screenshot"))
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        // A lossy screenshot comes back with the encoder's softening, which
        // is close enough for timing the two encoders on it.
        let pixmap = wabp_core::image::decode_webp(&shot)?;
        let time = |encode: &dyn Fn() -> Vec<u8>| {
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..20 {
                let started = Instant::now();
                size = encode().len();
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            (median(times), size as f64 / 1024.0)
        };
        let (lossy_ms, lossy_kb) = time(&|| encode_webp_lossy(&pixmap).unwrap_or_default());
        let (lossless_ms, lossless_kb) =
            time(&|| encode_webp_lossless(&pixmap).unwrap_or_default());
        let picked = encode_webp(&pixmap)?;
        let kind = if picked.get(12..16) == Some(b"VP8L") {
            "lossless"
        } else {
            "lossy"
        };
        println!(
            "{page:<10} {:>6.2} {lossy_ms:>6.1} ms {lossy_kb:>5.0} KB {lossless_ms:>6.1} ms {lossless_kb:>5.0} KB {kind:>9}",
            flat_share(&pixmap)
        );
    }
    engine.shutdown(std::time::Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
