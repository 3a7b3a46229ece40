//! `wabp-bench plugin-calls`: what one call to a trivial action plugin costs,
//! warm (an idle instance reused) and cold (`warm_instances = 0`: a new
//! instance for the call), and what a loaded plugin and each of its
//! instances add to the engine's memory. The plugin runs on a real tab
//! (bound to the call, not touched).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use wabp_core::plugin::{ActionContext, PageHost, PluginRegistry};

use crate::median;

/// A trivial action plugin, as built: its manifest, component and action.
struct Subject {
    language: &'static str,
    manifest: String,
    component: PathBuf,
    action: &'static str,
}

fn subjects() -> Vec<Subject> {
    let src = Path::new(wabp::TEST_PLUGINS_SRC);
    let built = Path::new(wabp::TEST_PLUGINS_DIR);
    vec![Subject {
        language: "Rust",
        manifest: std::fs::read_to_string(src.join("test-echo-v1").join("plugin.toml"))
            .unwrap_or_default(),
        component: built.join("test_echo_v1.wasm"),
        action: "echo_version",
    }]
}

/// The process's resident memory, in bytes (Linux).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

/// Loads `subject` with `warm_instances` set, into `registry` or else a
/// registry of its own.
async fn load(
    subject: &Subject,
    dir: &Path,
    warm_instances: u32,
    registry: Option<Arc<wabp_plugin_host::Registry>>,
) -> anyhow::Result<Arc<wabp_plugin_host::Registry>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let manifest = subject
        .manifest
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("component") {
                "component = \"plugin.wasm\"".to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let limits = if manifest.contains("[limits]") {
        manifest.replace(
            "[limits]",
            &format!("[limits]\nwarm_instances = {warm_instances}"),
        )
    } else {
        format!("{manifest}\n[limits]\nwarm_instances = {warm_instances}\n")
    };
    std::fs::write(dir.join("plugin.toml"), limits)?;
    std::fs::copy(&subject.component, dir.join("plugin.wasm"))?;
    let registry = match registry {
        Some(registry) => registry,
        None => wabp_plugin_host::Registry::new()?,
    };
    registry.load_folder_plugin(dir).await?;
    Ok(registry)
}

async fn time_calls(
    registry: &wabp_plugin_host::Registry,
    action: &str,
    host: &Arc<dyn PageHost>,
    calls: usize,
) -> anyhow::Result<f64> {
    let handler = registry
        .action(action)
        .ok_or_else(|| anyhow::anyhow!("{action} is not loaded"))?;
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls {
        let started = Instant::now();
        handler
            .run(
                action,
                json!({ "n": i }),
                ActionContext {
                    tab_id: "bench".into(),
                    pointer: (0.0, 0.0),
                },
                host.clone(),
            )
            .await
            .map_err(|f| anyhow::anyhow!("{}", f.message))?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(samples))
}

/// Memory a loaded plugin adds (compiled code, its first instance), and
/// each further instance: `instances` calls at once, so each needs its own.
async fn memory(
    subject: &Subject,
    dir: &Path,
    host: &Arc<dyn PageHost>,
    instances: usize,
) -> anyhow::Result<(f64, f64)> {
    let registry = wabp_plugin_host::Registry::new()?;
    let before = rss_bytes();
    let registry = load(subject, dir, instances as u32, Some(registry)).await?;
    let loaded = rss_bytes();
    let handler = registry
        .action(subject.action)
        .ok_or_else(|| anyhow::anyhow!("{} is not loaded", subject.action))?;
    let calls = (0..instances).map(|_| {
        handler.run(
            subject.action,
            json!({}),
            ActionContext {
                tab_id: "bench".into(),
                pointer: (0.0, 0.0),
            },
            host.clone(),
        )
    });
    futures::future::join_all(calls).await;
    let pooled = rss_bytes();
    let idle = registry
        .plugins()
        .first()
        .and_then(|p| p.instances)
        .map(|s| s.idle)
        .unwrap_or(0)
        .max(1);
    Ok((
        loaded.saturating_sub(before) as f64 / 1e6,
        pooled.saturating_sub(loaded) as f64 / 1e6 / idle as f64,
    ))
}

pub async fn run() -> anyhow::Result<()> {
    let (api, engine, session) = crate::start_engine("plugin-calls").await?;
    let tabs: serde_json::Value = reqwest::get(format!("{api}/tabs")).await?.json().await?;
    let tab = tabs[0]["id"].as_str().unwrap_or_default().to_string();
    let host: Arc<dyn PageHost> = engine.tab(&wabp_core::Caller::anonymous(), &tab)?;
    let dir = std::env::temp_dir().join(format!("wabp-bench-plugin-calls-{}", std::process::id()));
    println!(
        "a call to a trivial action plugin (params in, JSON out), median of 2,000 warm / 200 cold, µs; memory, MB"
    );
    println!(
        "{:<12} {:>10} {:>10} {:>14} {:>14}",
        "language", "warm", "cold", "loaded plugin", "per instance"
    );
    for subject in subjects() {
        if !subject.component.is_file() {
            println!(
                "{:<12} not built ({})",
                subject.language,
                subject.component.display()
            );
            continue;
        }
        let warm = time_calls(
            &*load(&subject, &dir, 4, None).await?,
            subject.action,
            &host,
            2000,
        )
        .await?;
        let cold = time_calls(
            &*load(&subject, &dir, 0, None).await?,
            subject.action,
            &host,
            200,
        )
        .await?;
        let (loaded, per_instance) = memory(&subject, &dir, &host, 8).await?;
        println!(
            "{:<12} {warm:>10.1} {cold:>10.1} {loaded:>14.1} {per_instance:>14.2}",
            subject.language
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&session);
    Ok(())
}
