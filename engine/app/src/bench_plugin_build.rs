//! `wabp-bench plugin-build`: how long after `wabp plugin build` returns a
//! plugin's action is callable over REST and over MCP on a running engine.
//!
//! Scaffolds an action plugin, then builds it repeatedly (each time with a
//! new version and changed code, so every build is a real incremental
//! rebuild) into the plugin folder of a running engine. From the build's
//! return it times, concurrently:
//! - REST: `GET /plugins` listing the new version, then the first
//!   successful `POST /tabs/{id}/actions/{name}`;
//! - MCP (an rmcp client connected at `/mcp` the whole time):
//!   `notifications/tools/list_changed`, `tools/list` carrying the new
//!   build's description, then the first successful `tools/call`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::response::Html;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use wabp::plugin_cli::{self, BuildOptions, PluginKind, SdkSource};

/// An MCP client that counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct ListChangedCounter(Arc<tokio::sync::watch::Sender<u32>>);

impl ClientHandler for ListChangedCounter {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.send_modify(|n| *n += 1);
    }
}

type McpSession = RunningService<RoleClient, ListChangedCounter>;

const TOOL: &str = "browser_bench_action_click";

/// Milliseconds from `built` to the new build's `GET /plugins` listing and
/// to its action's first answer.
async fn rest_timings(
    http: &reqwest::Client,
    api: &str,
    tab: &str,
    version: &str,
    built: Instant,
) -> anyhow::Result<(f64, f64)> {
    loop {
        let list: Value = http
            .get(format!("{api}/plugins"))
            .send()
            .await?
            .json()
            .await?;
        let live = list["plugins"].as_array().into_iter().flatten().any(|p| {
            p["name"] == "bench-action" && p["version"] == version && p["status"] == "active"
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
    let listed = built.elapsed().as_secs_f64() * 1000.0;
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
    Ok((listed, built.elapsed().as_secs_f64() * 1000.0))
}

/// Milliseconds from `built` to `tools/list_changed`, to `tools/list`
/// showing this build's tool, and to the tool's first successful call.
async fn mcp_timings(
    session: &McpSession,
    changed: &mut tokio::sync::watch::Receiver<u32>,
    tab: &str,
    build_marker: &str,
    built: Instant,
) -> anyhow::Result<(f64, f64, f64)> {
    tokio::time::timeout(LIMIT, changed.changed())
        .await
        .map_err(|_| anyhow::anyhow!("no tools/list_changed within {LIMIT:?}"))??;
    let notified = built.elapsed().as_secs_f64() * 1000.0;
    loop {
        let tools = session.list_all_tools().await?;
        let fresh = tools.iter().any(|t| {
            t.name == TOOL
                && t.description
                    .as_deref()
                    .is_some_and(|d| d.contains(build_marker))
        });
        if fresh {
            break;
        }
        anyhow::ensure!(
            built.elapsed() < LIMIT,
            "{TOOL} of {build_marker} not listed within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let listed = built.elapsed().as_secs_f64() * 1000.0;
    loop {
        let arguments = json!({ "tab_id": tab, "selector": "#b", "screenshot": { "area": "none" }, "wait_until": { "type": "immediate" } });
        let result = session
            .call_tool(
                CallToolRequestParams::new(TOOL)
                    .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
            )
            .await?;
        if result.is_error != Some(true) {
            break;
        }
        anyhow::ensure!(
            built.elapsed() < LIMIT,
            "{TOOL} not callable within {LIMIT:?}: {:?}",
            result.content
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok((notified, listed, built.elapsed().as_secs_f64() * 1000.0))
}

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

    let counter = ListChangedCounter(Arc::new(tokio::sync::watch::channel(0).0));
    let mut changed = counter.0.subscribe();
    let session = counter
        .serve(StreamableHttpClientTransport::from_uri(
            api.replace("/api/v1", "/mcp"),
        ))
        .await?;

    let (mut builds, mut listed, mut callable) = (vec![], vec![], vec![]);
    let (mut mcp_notified, mut mcp_tool_listed, mut mcp_callable) = (vec![], vec![], vec![]);
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
        // Notifications from the previous build are not this build's.
        changed.borrow_and_update();
        let started = Instant::now();
        plugin_cli::build_plugin(&build).await?;
        let built = Instant::now();
        builds.push(built.duration_since(started).as_secs_f64());

        let marker = format!("(build {i})");
        let (rest, mcp) = tokio::join!(
            rest_timings(&http, &api, &tab, &version, built),
            mcp_timings(&session, &mut changed, &tab, &marker, built)
        );
        let (seen, answered) = rest?;
        let (notified, mcp_listed, mcp_answered) = mcp?;
        if i == 0 {
            println!(
                "first install: build {:.1} s; REST: listed after {seen:.0} ms, action answered after {answered:.0} ms; \
                 MCP: list_changed after {notified:.0} ms, tool listed after {mcp_listed:.0} ms, tool answered after {mcp_answered:.0} ms",
                builds[0]
            );
            builds.clear();
            continue;
        }
        listed.push(seen);
        callable.push(answered);
        mcp_notified.push(notified);
        mcp_tool_listed.push(mcp_listed);
        mcp_callable.push(mcp_answered);
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
    println!(
        "  build returned -> MCP notifications/tools/list_changed received    {:7.0} ms",
        median(mcp_notified)
    );
    println!(
        "  build returned -> MCP tools/list shows the new build's tool        {:7.0} ms",
        median(mcp_tool_listed)
    );
    println!(
        "  build returned -> MCP tools/call answered (click included)         {:7.0} ms",
        median(mcp_callable)
    );
    session.cancel().await.ok();
    engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
