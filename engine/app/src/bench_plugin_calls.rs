//! `wabp-bench plugin-calls`: what one call to a trivial action plugin costs,
//! warm (an idle instance reused) and cold (`warm_instances = 0`: a new
//! instance for the call), and what a loaded plugin and each of its
//! instances add to the engine's memory, per language; for TypeScript also
//! source → built and checked, and a hot reload (file written → the new
//! version answering). The plugin runs on a real tab (bound to the call,
//! not touched). TypeScript builds use the toolchain cache
//! (`WABP_TOOLCHAINS`), installing it on first use.

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

fn rust_subject() -> Subject {
    let src = Path::new(wabp::TEST_PLUGINS_SRC);
    let built = Path::new(wabp::TEST_PLUGINS_DIR);
    Subject {
        language: "Rust",
        manifest: std::fs::read_to_string(src.join("test-echo-v1").join("plugin.toml"))
            .unwrap_or_default(),
        component: built.join("test_echo_v1.wasm"),
        action: "echo_version",
    }
}

const TS_MANIFEST: &str = "name = \"ts-echo\"\nversion = \"VERSION\"\nkind = \"action\"\ncapabilities = [\"log\"]\ncomponent = \"ts_echo.wasm\"\n";

/// The TypeScript twin of test-echo: `echo_version` returns its version
/// and its params.
fn ts_source(version: u32) -> String {
    format!(
        r#"import {{ actions }} from "@wabp/plugin";

export const action = actions({{
  echo_version: {{
    description: "Returns the plugin version and the params",
    params: {{ type: "object" }},
    run(params: unknown) {{
      return {{ version: {version}, params }};
    }},
  }},
}});
"#
    )
}

const PY_MANIFEST: &str = "name = \"py-echo\"\nversion = \"1.0.0\"\nkind = \"action\"\ncapabilities = [\"log\"]\ncomponent = \"py_echo.wasm\"\n";

/// The Python twin of test-echo.
const PY_SOURCE: &str = r#"from wabp_plugin import ActionPlugin, action


class Action(ActionPlugin):
    @action("Returns the plugin version and the params")
    def echo_version(self, params, context):
        return {"version": 1, "params": params}
"#;

/// Writes the Python echo plugin into `dir` and builds it (checked, not
/// installed); the component, its manifest and the time it took.
async fn build_py(dir: &Path) -> anyhow::Result<(PathBuf, String, f64)> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("plugin.toml"), PY_MANIFEST)?;
    std::fs::write(dir.join("app.py"), PY_SOURCE)?;
    build_in(dir, PY_MANIFEST.to_string()).await
}

/// Writes the TypeScript echo plugin at `version` into `dir` and builds it
/// (checked, not installed); the component, its manifest and the time it took.
async fn build_ts(dir: &Path, version: u32) -> anyhow::Result<(PathBuf, String, f64)> {
    std::fs::create_dir_all(dir.join("src"))?;
    let manifest = TS_MANIFEST.replace("VERSION", &format!("{version}.0.0"));
    std::fs::write(dir.join("plugin.toml"), &manifest)?;
    std::fs::write(dir.join("src").join("plugin.ts"), ts_source(version))?;
    build_in(dir, manifest).await
}

async fn build_in(dir: &Path, manifest: String) -> anyhow::Result<(PathBuf, String, f64)> {
    let started = Instant::now();
    let built = wabp::plugin_cli::build_plugin(&wabp::plugin_cli::BuildOptions {
        crate_dir: dir.to_path_buf(),
        install_dir: None,
        ..Default::default()
    })
    .await?;
    Ok((built.component, manifest, started.elapsed().as_secs_f64()))
}

/// Hot reload of the TypeScript plugin: its two versions written in turn
/// into a watched folder; file written → the registry lists the version.
async fn ts_hot_reload(components: [(&Path, &str); 2], root: &Path) -> anyhow::Result<f64> {
    let registry = wabp_plugin_host::Registry::new()?;
    let _ = std::fs::remove_dir_all(root);
    let folder = root.join("ts-echo");
    std::fs::create_dir_all(&folder)?;
    let _watch = wabp_plugin_host::watch(registry.clone(), root.to_path_buf())?;
    let mut samples = vec![];
    for i in 0..10 {
        let (component, manifest) = components[i % 2];
        let bytes = std::fs::read(component)?;
        let expected = format!("{}.0.0", i % 2 + 1);
        let started = Instant::now();
        std::fs::write(folder.join("ts_echo.wasm"), &bytes)?;
        std::fs::write(folder.join("plugin.toml"), manifest)?;
        loop {
            let live = registry
                .plugins()
                .iter()
                .any(|p| p.name == "ts-echo" && p.version == expected && p.status == "active");
            if live {
                break;
            }
            if started.elapsed().as_secs() > 20 {
                anyhow::bail!("reload did not happen within 20 s");
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(median(samples))
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

/// Memory a loaded plugin adds to the process (compiled code, the describe
/// call's instance), and the linear memory one warm instance holds.
async fn memory(
    subject: &Subject,
    dir: &Path,
    host: &Arc<dyn PageHost>,
) -> anyhow::Result<(f64, f64)> {
    let registry = wabp_plugin_host::Registry::new()?;
    let before = rss_bytes();
    let registry = load(subject, dir, 4, Some(registry)).await?;
    let loaded = rss_bytes();
    time_calls(&registry, subject.action, host, 10).await?;
    let stats = registry
        .plugins()
        .first()
        .and_then(|p| p.instances)
        .unwrap_or_default();
    Ok((
        loaded.saturating_sub(before) as f64 / 1e6,
        stats.idle_memory_bytes as f64 / 1e6 / stats.idle.max(1) as f64,
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
        "language", "warm", "cold", "loaded (RSS)", "per instance"
    );
    let ts_dirs = [dir.with_extension("ts1"), dir.with_extension("ts2")];
    let mut subjects = vec![rust_subject()];
    let mut ts_builds = vec![];
    for (i, ts_dir) in ts_dirs.iter().enumerate() {
        match build_ts(ts_dir, i as u32 + 1).await {
            Ok(built) => ts_builds.push(built),
            Err(why) => println!("TypeScript not built: {why}"),
        }
    }
    if let Some((component, manifest, _)) = ts_builds.first() {
        subjects.push(Subject {
            language: "TypeScript",
            manifest: manifest.clone(),
            component: component.clone(),
            action: "echo_version",
        });
    }
    let py_build = match build_py(&dir.with_extension("py")).await {
        Ok(built) => Some(built),
        Err(why) => {
            println!("Python not built: {why}");
            None
        }
    };
    if let Some((component, manifest, _)) = &py_build {
        subjects.push(Subject {
            language: "Python",
            manifest: manifest.clone(),
            component: component.clone(),
            action: "echo_version",
        });
    }
    for subject in subjects {
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
        let (loaded, per_instance) = memory(&subject, &dir, &host).await?;
        println!(
            "{:<12} {warm:>10.1} {cold:>10.1} {loaded:>14.1} {per_instance:>14.2}",
            subject.language
        );
    }
    if let [
        (first, first_manifest, first_time),
        (second, second_manifest, second_time),
    ] = &ts_builds[..]
    {
        println!(
            "TypeScript: source → built, type-checked and load-checked: {first_time:.1} s, then {second_time:.1} s (the first installs the toolchain if the cache is empty)"
        );
        let reload = ts_hot_reload(
            [(first, first_manifest), (second, second_manifest)],
            &dir.with_extension("watch"),
        )
        .await?;
        println!(
            "TypeScript: hot reload, component written → new version live: {reload:.0} ms median of 10"
        );
    }
    if let Some((_, _, seconds)) = py_build {
        println!(
            "Python: source → built and load-checked: {seconds:.1} s (with the toolchain install if the cache was empty)"
        );
    }
    for extra in ["ts1", "ts2", "py", "watch"] {
        let _ = std::fs::remove_dir_all(dir.with_extension(extra));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&session);
    Ok(())
}
