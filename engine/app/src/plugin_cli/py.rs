//! Python plugins: componentize-py (pinned, installed once into a virtual
//! environment in the toolchain cache) builds the folder's `app` module,
//! with the SDK written into `wabp/wabp_plugin` at every build, into a
//! component for a world of exactly the capabilities plugin.toml grants.
//! The bindings it generates go to `wabp/bindings` for editors.
//!
//! componentize-py runs the module once at build time and snapshots the
//! initialised interpreter (Wizer), so a new instance starts with `app`
//! already imported.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use wabp_plugin_host::{Capability, Kind, Manifest};

use super::js::{lock, toolchain_root, write_files, write_wit};
use super::tool::run_tool;
use super::{PluginCliError, io_error};

/// The PyPI packages a Python plugin is built with, pinned.
pub const PY_TOOLCHAIN: &[(&str, &str)] = &[("componentize-py", "0.25.1")];

const INSTALL_LIMIT: Duration = Duration::from_secs(10 * 60);
const STEP_LIMIT: Duration = Duration::from_secs(5 * 60);

/// The SDK, written into each plugin's `wabp/wabp_plugin/` at every build.
pub const SDK_FILES: &[(&str, &str)] = &[
    (
        "__init__.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/__init__.py"),
    ),
    (
        "log.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/log.py"),
    ),
    (
        "input.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/input.py"),
    ),
    (
        "page.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/page.py"),
    ),
    (
        "script.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/script.py"),
    ),
    (
        "navigation.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/navigation.py"),
    ),
    (
        "clock.py",
        include_str!("../../../../plugins/sdk-python/wabp_plugin/clock.py"),
    ),
];

/// The module a Python plugin's folder holds.
pub const ENTRY: &str = "app.py";

/// Editor settings a plugin folder gets: the SDK and the bindings on the path.
pub const PYRIGHTCONFIG: &str = r#"{
  "extraPaths": ["wabp", "wabp/bindings"],
  "typeCheckingMode": "basic"
}
"#;

fn python() -> String {
    std::env::var("WABP_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Python 3.10 or later with `venv`.
fn check_python() -> Result<String, PluginCliError> {
    let program = python();
    let missing = |what: String| {
        PluginCliError::MissingTool(format!(
            "{what}: Python plugins are built with Python 3.10 or later and its venv module (Debian: `apt-get install python3 python3-venv`; or set WABP_PYTHON)"
        ))
    };
    let out = Command::new(&program)
        .args([
            "-c",
            "import sys, venv; print('%d.%d' % sys.version_info[:2])",
        ])
        .output()
        .map_err(|e| missing(format!("{program} could not be run ({e})")))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(missing(format!(
            "{program} has no venv module ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let (major, minor) = version
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .unwrap_or((0, 0));
    if (major, minor) < (3, 10) {
        return Err(missing(format!("{program} is Python {version}")));
    }
    Ok(program)
}

/// The virtual environment with componentize-py, made on first use, then a
/// `.complete` marker.
pub fn ensure_toolchain(echo: bool) -> Result<PathBuf, PluginCliError> {
    let pins: String = PY_TOOLCHAIN
        .iter()
        .map(|(name, version)| format!("{name}-{version}"))
        .collect::<Vec<_>>()
        .join("_");
    let root = toolchain_root();
    let dir = root.join(format!("py-{pins}"));
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    let program = check_python()?;
    std::fs::create_dir_all(&root).map_err(io_error(&root))?;
    // A venv records its own path: it is made where it will stay, one
    // install at a time (threads and processes), rather than renamed.
    let _lock = lock(&root.join(format!(".py-{pins}.lock")))?;
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    if echo {
        eprintln!(
            "installing the Python plugin toolchain into {} (once)",
            dir.display()
        );
    }
    run_tool(
        Command::new(&program).arg("-m").arg("venv").arg(&dir),
        "making the toolchain's virtual environment",
        INSTALL_LIMIT,
        echo,
    )?;
    run_tool(
        Command::new(dir.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(
                PY_TOOLCHAIN
                    .iter()
                    .map(|(name, version)| format!("{name}=={version}")),
            ),
        "pip install",
        INSTALL_LIMIT,
        echo,
    )?;
    let marker = dir.join(".complete");
    std::fs::write(&marker, "").map_err(io_error(&marker))?;
    Ok(dir)
}

/// The SDK's capability modules (`wabp_plugin.page`, ...) the plugin's own
/// modules import.
fn imported_capabilities(source: &str) -> Vec<Capability> {
    let mut found = Vec::new();
    for line in source.lines().map(str::trim) {
        let names: Vec<&str> = if let Some(rest) = line.strip_prefix("from wabp_plugin import ") {
            rest.split([',', '(', ')', ' ']).collect()
        } else if let Some(rest) = line.strip_prefix("from wabp_plugin.") {
            rest.split([' ', '.']).take(1).collect()
        } else if let Some(rest) = line.strip_prefix("import wabp_plugin.") {
            rest.split([' ', '.', ',']).take(1).collect()
        } else {
            continue;
        };
        for name in names {
            if let Some(capability) = Capability::from_interface(name.trim()) {
                if !found.contains(&capability) {
                    found.push(capability);
                }
            }
        }
    }
    found
}

/// Refuses a plugin whose modules import an SDK capability module the
/// manifest does not grant, naming it (componentize-py would only say the
/// binding module is missing).
fn check_grants(plugin: &Path, manifest: &Manifest) -> Result<(), PluginCliError> {
    let entries = std::fs::read_dir(plugin).map_err(io_error(plugin))?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let source = std::fs::read_to_string(&path).map_err(io_error(&path))?;
        for capability in imported_capabilities(&source) {
            let allowed = manifest.grants(capability)
                && (manifest.kind == Kind::Action || capability == Capability::Log);
            if !allowed {
                return Err(PluginCliError::Refused(format!(
                    "{} imports wabp_plugin.{name} (wabp:plugin/{name}), which plugin.toml does not grant: add \"{name}\" to capabilities{only}",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    name = capability.interface(),
                    only = if manifest.kind == Kind::Action {
                        String::new()
                    } else {
                        format!(" (a {} plugin may only use log)", manifest.kind.as_str())
                    }
                )));
            }
        }
    }
    Ok(())
}

/// Builds a Python plugin folder into a component; its path.
pub fn build(plugin: &Path, manifest: &Manifest, echo: bool) -> Result<PathBuf, PluginCliError> {
    check_grants(plugin, manifest)?;
    let toolchain = ensure_toolchain(echo)?;
    let componentize = toolchain.join("bin").join("componentize-py");
    let out = plugin.join("target").join("wabp");
    let wit = out.join("wit");
    write_wit(&wit, manifest)?;

    let sdk = plugin.join("wabp").join("wabp_plugin");
    std::fs::create_dir_all(&sdk).map_err(io_error(&sdk))?;
    write_files(&sdk, SDK_FILES)?;
    let readme = plugin.join("wabp").join("README.md");
    std::fs::write(
        &readme,
        "The wabp plugin SDK (wabp_plugin) and the bindings generated from the engine's WIT (bindings/).\n`wabp plugin build` rewrites this folder: don't edit it.\n",
    )
    .map_err(io_error(&readme))?;
    let bindings = plugin.join("wabp").join("bindings");
    let _ = std::fs::remove_dir_all(&bindings);
    run_tool(
        Command::new(&componentize)
            .arg("-d")
            .arg(&wit)
            .args(["-w", "granted", "bindings"])
            .arg(&bindings),
        "generating the bindings from wit/",
        STEP_LIMIT,
        echo,
    )?;

    let component = out.join(&manifest.component);
    run_tool(
        Command::new(&componentize)
            .arg("-d")
            .arg(&wit)
            .args(["-w", "granted", "componentize"])
            .arg("-p")
            .arg(plugin)
            .arg("-p")
            .arg(plugin.join("wabp"))
            .arg("app")
            .arg("-o")
            .arg(&component)
            // Only the folder's own modules and the SDK: not whatever
            // virtual environment the caller has active.
            .env_remove("VIRTUAL_ENV")
            .current_dir(plugin),
        "making the component (componentize-py)",
        STEP_LIMIT,
        echo,
    )?;
    Ok(component)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_capability_modules_a_plugin_imports() {
        let source = "from wabp_plugin import ActionPlugin, action, log\nfrom wabp_plugin import input, page\nimport wabp_plugin.script as s\nfrom wabp_plugin.clock import now_ms\n# from wabp_plugin import navigation\n";
        assert_eq!(
            imported_capabilities(source),
            vec![
                Capability::Log,
                Capability::Input,
                Capability::Page,
                Capability::Script,
                Capability::Clock
            ]
        );
    }
}
