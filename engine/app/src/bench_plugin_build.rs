//! `wabp-bench plugin-build`: how long after `wabp plugin build` returns a
//! plugin's action is callable over REST on a running engine.
//!
//! Scaffolds an action plugin, then builds it repeatedly (each time with a
//! new version and changed code, so every build is a real incremental
//! rebuild) into the plugin folder of a running engine, and times from the
//! build's return to (a) `GET /plugins` listing the new version and (b) the
//! first successful `POST /tabs/{id}/actions/{name}`.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::response::Html;
use serde_json::{Value, json};
use wabp::plugin_cli::{self, BuildOptions, PluginKind, SdkSource};

const RUNS: usize = 10;
const LIMIT: Duration = Duration::from_secs(30);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

pub async fn run() -> anyhow::Result<()> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("wabp-bench-plugin-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let plugins = work.join("plugins");
    let krate = work.join("bench-action");

    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let page = format!("http://{}/", site.local_addr()?);
    tokio::spawn(async move {
        axum::serve(
            site,
            axum::Router::new().route(
                "/",
                axum::routing::get(|| async {
                    Html("<button id=b onclick=\"this.textContent='hit'\">press</button>")
                }),
            ),
        )
        .await
    });

    let mut options = wabp::Options::default_for_session(work.join("session"));
    options.plugin_dir = Some(plugins.clone());
    let app = wabp::App::start(options).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}/api/v1", listener.local_addr()?);
    let engine = app.engine.clone();
    tokio::spawn(app.serve(listener));
    let http = reqwest::Client::builder().timeout(LIMIT).build()?;
    let tabs: Value = http.get(format!("{api}/tabs")).send().await?.json().await?;
    let tab = tabs[0]["id"].as_str().unwrap_or_default().to_string();
    http.post(format!("{api}/tabs/{tab}/navigate"))
        .json(&json!({ "url": page }))
        .send()
        .await?;

    plugin_cli::new_plugin(
        "bench-action",
        PluginKind::Action,
        &krate,
        &SdkSource::Path(repo.to_path_buf()),
    )?;
    let manifest = std::fs::read_to_string(krate.join("plugin.toml"))?;
    let lib = std::fs::read_to_string(krate.join("src").join("lib.rs"))?;
    let build = BuildOptions {
        crate_dir: krate.clone(),
        install_dir: Some(plugins.clone()),
        // The engine build script's wasm target dir: dependencies already built.
        target_dir: Some(repo.join("target").join("wasm")),
        ..BuildOptions::default()
    };

    let (mut builds, mut listed, mut callable) = (vec![], vec![], vec![]);
    for i in 0..=RUNS {
        let version = format!("0.1.{i}");
        std::fs::write(
            krate.join("plugin.toml"),
            manifest.replace("version = \"0.1.0\"", &format!("version = \"{version}\"")),
        )?;
        std::fs::write(
            krate.join("src").join("lib.rs"),
            lib.replace(
                "says what it clicked",
                &format!("says what it clicked (build {i})"),
            ),
        )?;
        let started = Instant::now();
        plugin_cli::build_plugin(&build).await?;
        let built = Instant::now();
        builds.push(built.duration_since(started).as_secs_f64());

        // (a) GET /plugins shows the new version, active.
        loop {
            let list: Value = http
                .get(format!("{api}/plugins"))
                .send()
                .await?
                .json()
                .await?;
            let live = list["plugins"].as_array().into_iter().flatten().any(|p| {
                p["name"] == "bench-action"
                    && p["version"] == version.as_str()
                    && p["status"] == "active"
            });
            if live {
                break;
            }
            anyhow::ensure!(
                built.elapsed() < LIMIT,
                "version {version} not listed within {LIMIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let seen = built.elapsed().as_secs_f64() * 1000.0;
        // (b) the action answers.
        loop {
            let response = http
                .post(format!("{api}/tabs/{tab}/actions/bench_action_click"))
                .json(&json!({ "selector": "#b", "screenshot": { "area": "none" }, "wait_until": { "type": "immediate" } }))
                .send()
                .await?;
            if response.status().is_success() {
                break;
            }
            anyhow::ensure!(
                built.elapsed() < LIMIT,
                "action not callable within {LIMIT:?}: {}",
                response.text().await?
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let answered = built.elapsed().as_secs_f64() * 1000.0;
        if i == 0 {
            println!(
                "first install: build {:.1} s, listed after {seen:.0} ms, action answered after {answered:.0} ms",
                builds[0]
            );
            builds.clear();
            continue;
        }
        listed.push(seen);
        callable.push(answered);
    }
    println!("plugin build to callable, median of {RUNS} rebuilds (new version each time):");
    println!(
        "  wabp plugin build (incremental cargo build + load check + install) {:7.2} s",
        median(builds)
    );
    println!(
        "  build returned -> GET /plugins lists the new version               {:7.0} ms",
        median(listed)
    );
    println!(
        "  build returned -> POST /actions/{{name}} answered (click included)  {:7.0} ms",
        median(callable)
    );
    engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
