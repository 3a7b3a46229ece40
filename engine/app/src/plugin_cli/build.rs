//! `wabp plugin build`: cargo for wasm32-wasip2 (bounded, its output
//! forwarded or kept for the error), the component checked as the engine
//! will load it, then installed where a running engine watches.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wabp_core::plugin::PluginRegistry;
use wabp_plugin_host::{Manifest, Registry};

use super::{
    DEFAULT_BUILD_TIMEOUT, DEFAULT_PLUGIN_DIR, PluginCliError, STDERR_TAIL_LINES, TARGET, io_error,
    js, py,
};

/// How `build_plugin` builds and installs.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The plugin crate (Cargo.toml and plugin.toml).
    pub crate_dir: PathBuf,
    /// Plugin folder to install into (`DIR/<name>/`); `None` builds and checks only.
    pub install_dir: Option<PathBuf>,
    /// cargo's `--target-dir`; `None` leaves it to cargo (`CARGO_TARGET_DIR`, the workspace's target/).
    pub target_dir: Option<PathBuf>,
    /// `--locked`.
    pub locked: bool,
    /// Forward cargo's progress and diagnostics to stderr as they come.
    pub echo: bool,
    /// The cargo to run; `None`: `$CARGO`, else `cargo` on PATH.
    pub cargo: Option<PathBuf>,
    /// The longest a build may take.
    pub timeout: Duration,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            crate_dir: PathBuf::from("."),
            install_dir: Some(PathBuf::from(DEFAULT_PLUGIN_DIR)),
            target_dir: None,
            locked: false,
            echo: false,
            cargo: None,
            timeout: DEFAULT_BUILD_TIMEOUT,
        }
    }
}

/// What `build_plugin` produced.
#[derive(Debug, Clone)]
pub struct Built {
    /// The plugin's name (plugin.toml).
    pub name: String,
    /// Its version (plugin.toml).
    pub version: String,
    /// Its kind: action, markup, wait, interceptor or policy.
    pub kind: String,
    /// The component cargo built.
    pub component: PathBuf,
    /// Its action names, markup tags or wait types, as the engine sees them.
    pub provides: Vec<String>,
    /// The plugin's folder in the plugin folder, when installed.
    pub installed: Option<PathBuf>,
    /// cargo's part.
    pub build_time: Duration,
}

/// What a plugin folder is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// A crate: Cargo.toml.
    Rust,
    /// `src/plugin.ts` or `src/plugin.js`.
    Js(js::Flavour),
    /// `app.py`.
    Python,
}

impl Language {
    /// Tells a plugin folder's language by its files.
    pub fn of(dir: &Path) -> Option<Language> {
        if dir.join("Cargo.toml").is_file() {
            Some(Language::Rust)
        } else if dir.join(js::Flavour::TypeScript.entry()).is_file() {
            Some(Language::Js(js::Flavour::TypeScript))
        } else if dir.join(js::Flavour::JavaScript.entry()).is_file() {
            Some(Language::Js(js::Flavour::JavaScript))
        } else if dir.join(py::ENTRY).is_file() {
            Some(Language::Python)
        } else {
            None
        }
    }
}

/// Builds the plugin (a crate for wasm32-wasip2 in release, or a TypeScript,
/// JavaScript or Python folder through its toolchain), loads the component the way
/// the engine will (grants, exports, `describe`), then installs the `.wasm`
/// and `plugin.toml` into `install_dir/<name>/`.
pub async fn build_plugin(options: &BuildOptions) -> Result<Built, PluginCliError> {
    let dir = &options.crate_dir;
    let language = Language::of(dir).ok_or_else(|| PluginCliError::NoCrate(dir.clone()))?;
    let manifest_path = dir.join("plugin.toml");
    if !manifest_path.is_file() {
        return Err(PluginCliError::NoManifest(dir.clone()));
    }
    let manifest_text =
        std::fs::read_to_string(&manifest_path).map_err(io_error(&manifest_path))?;
    let manifest = Manifest::parse(&manifest_text).map_err(|e| PluginCliError::BadManifest {
        path: manifest_path.clone(),
        error: e.to_string(),
    })?;

    let started = Instant::now();
    let component = match language {
        Language::Rust => {
            let cargo_toml = dir.join("Cargo.toml");
            let cargo_toml = std::fs::canonicalize(&cargo_toml).map_err(io_error(&cargo_toml))?;
            let cargo_options = options.clone();
            let component =
                tokio::task::spawn_blocking(move || run_cargo(&cargo_options, &cargo_toml))
                    .await
                    .map_err(|e| PluginCliError::Invalid(format!("build task failed: {e}")))??;
            let built_name = component
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if built_name != manifest.component {
                return Err(PluginCliError::ComponentMismatch {
                    manifest: manifest.component.clone(),
                    built: built_name,
                });
            }
            component
        }
        Language::Js(flavour) => {
            let plugin = std::fs::canonicalize(dir).map_err(io_error(dir))?;
            let (manifest, echo) = (manifest.clone(), options.echo);
            tokio::task::spawn_blocking(move || js::build(&plugin, &manifest, flavour, echo))
                .await
                .map_err(|e| PluginCliError::Invalid(format!("build task failed: {e}")))??
        }
        Language::Python => {
            let plugin = std::fs::canonicalize(dir).map_err(io_error(dir))?;
            let (manifest, echo) = (manifest.clone(), options.echo);
            tokio::task::spawn_blocking(move || py::build(&plugin, &manifest, echo))
                .await
                .map_err(|e| PluginCliError::Invalid(format!("build task failed: {e}")))??
        }
    };
    let build_time = started.elapsed();

    let bytes = std::fs::read(&component).map_err(io_error(&component))?;
    // A core module is `\0asm` version 1; a component has layer 1 in bytes 6..8.
    if bytes.len() < 8 || &bytes[0..4] != b"\0asm" || bytes[6..8] != [1, 0] {
        return Err(PluginCliError::NotAComponent(component));
    }
    let provides = check_loads(&manifest_text, bytes.clone()).await?;

    let installed = match &options.install_dir {
        Some(root) => Some(install(root, &manifest, &manifest_text, &bytes)?),
        None => None,
    };
    Ok(Built {
        name: manifest.name,
        version: manifest.version,
        kind: manifest.kind.as_str().to_string(),
        component,
        provides,
        installed,
        build_time,
    })
}

/// Loads the component in a registry of its own, as the engine would.
async fn check_loads(manifest_text: &str, bytes: Vec<u8>) -> Result<Vec<String>, PluginCliError> {
    let registry = Registry::new().map_err(|e| PluginCliError::Refused(e.to_string()))?;
    registry
        .load_builtin(manifest_text, bytes)
        .await
        .map_err(|e| PluginCliError::Refused(e.to_string()))?;
    Ok(registry
        .plugins()
        .into_iter()
        .flat_map(|p| p.provides)
        .collect())
}

/// Writes the component, then the manifest, each through a rename, so the
/// watcher never loads a half-written file.
fn install(
    root: &Path,
    manifest: &Manifest,
    manifest_text: &str,
    bytes: &[u8],
) -> Result<PathBuf, PluginCliError> {
    let dir = root.join(&manifest.name);
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    let put = |file: &str, data: &[u8]| -> Result<(), PluginCliError> {
        let staging = dir.join(format!(".{file}.incoming"));
        std::fs::write(&staging, data).map_err(io_error(&staging))?;
        let target = dir.join(file);
        std::fs::rename(&staging, &target).map_err(io_error(&target))
    };
    put(&manifest.component, bytes)?;
    put("plugin.toml", manifest_text.as_bytes())?;
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

fn cargo_program(options: &BuildOptions) -> PathBuf {
    options
        .cargo
        .clone()
        .or_else(|| std::env::var_os("CARGO").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("cargo"))
}

/// Runs cargo and returns the built `.wasm` of the crate at `cargo_toml`.
fn run_cargo(options: &BuildOptions, cargo_toml: &Path) -> Result<PathBuf, PluginCliError> {
    let cargo = cargo_program(options);
    let dir = cargo_toml.parent().unwrap_or(Path::new("."));
    match Command::new(&cargo)
        .arg("--version")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => {}
        Err(error) => return Err(PluginCliError::NoCargo { cargo, error }),
    }
    if let Some(false) = target_installed(dir) {
        return Err(PluginCliError::MissingTarget {
            detail: String::new(),
        });
    }

    let mut command = Command::new(&cargo);
    command
        .current_dir(dir)
        .args(["build", "--release", "--target", TARGET])
        .args(["--message-format", "json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(cargo_toml);
    if options.locked {
        command.arg("--locked");
    }
    if let Some(target_dir) = &options.target_dir {
        command.arg("--target-dir").arg(target_dir);
    }
    // The target comes from the command line, not a host-side setting.
    command.env_remove("CARGO_BUILD_TARGET");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|error| PluginCliError::NoCargo {
        cargo: cargo.clone(),
        error,
    })?;

    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let wanted = cargo_toml.to_path_buf();
    let artifacts = std::thread::spawn(move || {
        let mut wasm = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(path) = component_artifact(&line, &wanted) {
                wasm.push(path);
            }
        }
        wasm
    });
    let echo = options.echo;
    let tail = std::thread::spawn(move || {
        let mut tail = VecDeque::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if echo {
                eprintln!("{line}");
            }
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        tail.into_iter().collect::<Vec<_>>().join("\n")
    });

    let deadline = Instant::now() + options.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PluginCliError::BuildTimeout(options.timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => {
                return Err(PluginCliError::Io { path: cargo, error });
            }
        }
    };
    let wasm = artifacts.join().unwrap_or_default();
    let stderr_tail = tail.join().unwrap_or_default();
    if !status.success() {
        if mentions_missing_target(&stderr_tail) {
            return Err(PluginCliError::MissingTarget {
                detail: stderr_tail,
            });
        }
        return Err(PluginCliError::BuildFailed {
            status: status.to_string(),
            stderr_tail,
        });
    }
    wasm.into_iter()
        .next()
        .ok_or_else(|| PluginCliError::NoComponent {
            krate: dir.to_path_buf(),
        })
}

/// The `.wasm` of a cdylib built from `cargo_toml`, if `line` (one of cargo's
/// JSON messages) reports one.
pub(super) fn component_artifact(line: &str, cargo_toml: &Path) -> Option<PathBuf> {
    let message: Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" {
        return None;
    }
    let from = Path::new(message["manifest_path"].as_str()?);
    if from != cargo_toml {
        return None;
    }
    let kinds = message["target"]["kind"].as_array()?;
    if !kinds.iter().any(|k| k == "cdylib") {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|f| f.ends_with(".wasm"))
        .map(PathBuf::from)
}

/// Whether the toolchain that builds in `dir` has the wasm32-wasip2 standard
/// library; `None` when rustc can't be asked (cargo's error will say).
fn target_installed(dir: &Path) -> Option<bool> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["--print", "sysroot"])
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    Some(has_target(&sysroot))
}

pub(super) fn has_target(sysroot: &Path) -> bool {
    sysroot
        .join("lib")
        .join("rustlib")
        .join(TARGET)
        .join("lib")
        .is_dir()
}

pub(super) fn mentions_missing_target(stderr: &str) -> bool {
    stderr.contains(TARGET)
        && (stderr.contains("target may not be installed")
            || stderr.contains("not installed")
            || stderr.contains("can't find crate for `core`")
            || stderr.contains("can't find crate for `std`"))
}
