//! TypeScript and JavaScript plugins: a toolchain from npm (pinned, installed
//! once into a cache), the SDK and the bindings generated from `wit/` kept in
//! the plugin's `wabp/` folder, a type check, one bundle, and a component
//! made by QuickJS (componentize-qjs) for a world of exactly the capabilities
//! plugin.toml grants.
//!
//! QuickJS rather than StarlingMonkey (componentize-js): a 1.6 MB component
//! built in about 2 s against 12 MB in about 20 s, which is what makes a
//! hot reload of a TypeScript plugin quick; plugins are glue code, so an
//! interpreter without a JIT costs little.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use wabp_plugin_host::{Capability, Kind, Manifest};

use super::tool::run_tool;
use super::{PluginCliError, io_error};

/// The npm packages a TypeScript or JavaScript plugin is built with, pinned.
pub const JS_TOOLCHAIN: &[(&str, &str)] = &[
    ("componentize-qjs", "0.4.5"),
    ("esbuild", "0.28.2"),
    ("typescript", "5.9.3"),
    ("@bytecodealliance/jco-transpile", "0.15.0"),
    ("@bytecodealliance/preview2-shim", "0.26.1"),
];

/// How long installing the toolchain may take.
const INSTALL_LIMIT: Duration = Duration::from_secs(10 * 60);
/// How long each build step may take.
const STEP_LIMIT: Duration = Duration::from_secs(5 * 60);

/// The WIT the engine was built with: the plugin is built against it.
pub const WIT_FILES: &[(&str, &str)] = &[
    ("types.wit", include_str!("../../../../wit/types.wit")),
    ("worlds.wit", include_str!("../../../../wit/worlds.wit")),
];
const WIT_PACKAGE: &str = "wabp:plugin@0.1.0";

/// The SDK, written into each plugin's `wabp/` folder at every build.
pub const SDK_FILES: &[(&str, &str)] = &[
    (
        "index.ts",
        include_str!("../../../../plugins/sdk-ts/index.ts"),
    ),
    ("log.ts", include_str!("../../../../plugins/sdk-ts/log.ts")),
    (
        "input.ts",
        include_str!("../../../../plugins/sdk-ts/input.ts"),
    ),
    (
        "page.ts",
        include_str!("../../../../plugins/sdk-ts/page.ts"),
    ),
    (
        "script.ts",
        include_str!("../../../../plugins/sdk-ts/script.ts"),
    ),
    (
        "navigation.ts",
        include_str!("../../../../plugins/sdk-ts/navigation.ts"),
    ),
    (
        "clock.ts",
        include_str!("../../../../plugins/sdk-ts/clock.ts"),
    ),
];

/// Writes the bindings `generateGuestTypes` makes for a world.
const TYPEGEN: &str = r#"import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";
import { generateGuestTypes } from "@bytecodealliance/jco-transpile";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
const [wit, out, ...worlds] = process.argv.slice(2);
// The WIT parser runs under WASI and sees only what is preopened.
_setPreopens({ "/": "/" });
for (const world of worlds) {
  const files = await generateGuestTypes(resolve(wit), { worldName: world, guest: true });
  for (const [name, bytes] of Object.entries(files)) {
    const path = join(out, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
}
"#;

/// The TypeScript settings a plugin folder gets if it has none: strict, the
/// SDK under `@wabp/plugin`, the generated bindings as ambient modules.
pub const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "target": "es2020",
    "module": "es2020",
    "moduleResolution": "bundler",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": false,
    "lib": ["es2020"],
    "types": [],
    "baseUrl": ".",
    "paths": {
      "@wabp/plugin": ["./wabp/index.ts"],
      "@wabp/plugin/*": ["./wabp/*.ts"]
    }
  },
  "include": ["src", "wabp"]
}
"#;

/// The language of a JS-family plugin folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// `src/plugin.ts`, type-checked.
    TypeScript,
    /// `src/plugin.js`.
    JavaScript,
}

impl Flavour {
    /// The entry file, relative to the plugin folder.
    pub fn entry(self) -> &'static str {
        match self {
            Flavour::TypeScript => "src/plugin.ts",
            Flavour::JavaScript => "src/plugin.js",
        }
    }
}

/// Where toolchains are cached: `WABP_TOOLCHAINS`, else the user's cache
/// folder (`$XDG_CACHE_HOME/wabp/toolchains`, `~/.cache/wabp/toolchains`).
pub fn toolchain_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("WABP_TOOLCHAINS") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("wabp").join("toolchains")
}

/// Checks that `program --version` runs; its output.
fn version_of(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Node.js 18 or later, and npm.
fn check_node() -> Result<(), PluginCliError> {
    let missing = |what: &str| {
        PluginCliError::MissingTool(format!(
            "{what}: TypeScript and JavaScript plugins are built with Node.js 18 or later and npm (Debian: `apt-get install nodejs npm`; or https://nodejs.org)"
        ))
    };
    let node = version_of("node").ok_or_else(|| missing("node was not found on PATH"))?;
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 18 {
        return Err(missing(&format!("node is {node}")));
    }
    version_of("npm").ok_or_else(|| missing("npm was not found on PATH"))?;
    Ok(())
}

/// The toolchain folder, installed on first use: npm packages at the pinned
/// versions, then a `.complete` marker. A lock file keeps two builds (threads
/// or processes) from installing at once.
pub fn ensure_toolchain(echo: bool) -> Result<PathBuf, PluginCliError> {
    // FNV-1a of the pins and the script: a new pin is a new folder.
    let mut pins: String = JS_TOOLCHAIN
        .iter()
        .map(|(name, version)| format!("{name}@{version}\n"))
        .collect();
    pins.push_str(TYPEGEN);
    let id = format!(
        "{:012x}",
        pins.bytes().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        }) >> 16
    );
    let root = toolchain_root();
    let dir = root.join(format!("js-{id}"));
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    check_node()?;
    std::fs::create_dir_all(&root).map_err(io_error(&root))?;
    // One install at a time, across threads and processes; whoever waited
    // finds it done.
    let _lock = lock(&root.join(format!(".js-{id}.lock")))?;
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    let dependencies: serde_json::Map<String, serde_json::Value> = JS_TOOLCHAIN
        .iter()
        .map(|(name, version)| (name.to_string(), (*version).into()))
        .collect();
    let package = serde_json::json!({
        "name": "wabp-plugin-toolchain",
        "private": true,
        "type": "module",
        "dependencies": dependencies,
    });
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(io_error(&path))
    };
    write("package.json", &format!("{package:#}\n"))?;
    write("typegen.mjs", TYPEGEN)?;
    if echo {
        eprintln!(
            "installing the TypeScript plugin toolchain into {} (once)",
            dir.display()
        );
    }
    run_tool(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir),
        "npm install",
        INSTALL_LIMIT,
        echo,
    )?;
    // Last: a folder without it is an install that did not finish.
    write(".complete", "")?;
    Ok(dir)
}

/// Writes each `(file name, text)` into `dir`.
pub(super) fn write_files(dir: &Path, files: &[(&str, &str)]) -> Result<(), PluginCliError> {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(io_error(&path))?;
    }
    Ok(())
}

/// Holds an exclusive lock on `path` (created) until dropped.
pub(super) fn lock(path: &Path) -> Result<std::fs::File, PluginCliError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io_error(path))?;
    file.lock().map_err(io_error(path))?;
    Ok(file)
}

/// The interface a kind exports.
fn kind_interface(kind: Kind) -> &'static str {
    match kind {
        Kind::Action => "action",
        Kind::Markup => "markup",
        Kind::Wait => "wait",
        Kind::Policy => "policy",
        Kind::Interceptor => "interceptor",
    }
}

/// The worlds of `wit/worlds.wit`, one per kind.
const WORLDS: [&str; 5] = [
    "action-handler",
    "markup-renderer",
    "wait-heuristic",
    "approval-policy",
    "request-interceptor",
];

/// The capabilities a kind's world can import at all.
fn importable(kind: Kind) -> &'static [Capability] {
    match kind {
        Kind::Action => &Capability::ALL,
        _ => &[Capability::Log],
    }
}

/// The engine's WIT plus a world `granted` that imports exactly what the
/// manifest grants and exports the kind's interface: the component can't
/// even name an ungranted capability.
pub(super) fn write_wit(dir: &Path, manifest: &Manifest) -> Result<(), PluginCliError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    write_files(&dir, WIT_FILES)?;
    let interface = kind_interface(manifest.kind);
    let mut world = format!("package {WIT_PACKAGE};\n\nworld granted {{\n");
    for capability in importable(manifest.kind) {
        if manifest.grants(*capability) {
            world.push_str(&format!("    import {};\n", capability.interface()));
        }
    }
    world.push_str(&format!("    export {interface};\n}}\n"));
    let path = dir.join("granted.wit");
    std::fs::write(&path, world).map_err(io_error(&path))
}

/// Writes the SDK and its generated bindings into `plugin/wabp/`.
pub fn write_sdk(plugin: &Path, toolchain: &Path, echo: bool) -> Result<(), PluginCliError> {
    let sdk = plugin.join("wabp");
    std::fs::create_dir_all(&sdk).map_err(io_error(&sdk))?;
    write_files(&sdk, SDK_FILES)?;
    let readme = sdk.join("README.md");
    std::fs::write(
        &readme,
        "The wabp plugin SDK and the bindings generated from the engine's WIT.\n`wabp plugin build` rewrites this folder: don't edit it.\n",
    )
    .map_err(io_error(&readme))?;
    // Bindings for every world, so an editor knows every capability and the
    // SDK every kind; the build itself only links what plugin.toml grants.
    let wit = plugin.join("target").join("wabp").join("wit-all");
    std::fs::create_dir_all(&wit).map_err(io_error(&wit))?;
    write_files(&wit, WIT_FILES)?;
    let types = sdk.join("types");
    let _ = std::fs::remove_dir_all(&types);
    run_tool(
        Command::new("node")
            .arg(toolchain.join("typegen.mjs"))
            .arg(&wit)
            .arg(&types)
            .args(WORLDS)
            .current_dir(toolchain),
        "generating the bindings from wit/",
        STEP_LIMIT,
        echo,
    )
}

/// The `wabp:plugin/*` interfaces a bundle imports.
fn imported_interfaces(bundle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = bundle;
    while let Some(at) = rest.find("wabp:plugin/") {
        let tail = &rest[at + "wabp:plugin/".len()..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        if !name.is_empty() && !found.contains(&name) {
            found.push(name);
        }
        rest = tail;
    }
    found
}

/// Builds a TypeScript or JavaScript plugin folder into a component; its path.
pub fn build(
    plugin: &Path,
    manifest: &Manifest,
    flavour: Flavour,
    echo: bool,
) -> Result<PathBuf, PluginCliError> {
    let toolchain = ensure_toolchain(echo)?;
    let modules = toolchain.join("node_modules");
    write_sdk(plugin, &toolchain, echo)?;
    let out = plugin.join("target").join("wabp");
    std::fs::create_dir_all(&out).map_err(io_error(&out))?;

    if flavour == Flavour::TypeScript {
        let tsconfig = plugin.join("tsconfig.json");
        if !tsconfig.is_file() {
            std::fs::write(&tsconfig, TSCONFIG).map_err(io_error(&tsconfig))?;
        }
        run_tool(
            Command::new("node")
                .arg(modules.join("typescript").join("bin").join("tsc"))
                .args(["--noEmit", "--pretty", "false", "-p", "."])
                .current_dir(plugin),
            "the type check (tsc)",
            STEP_LIMIT,
            echo,
        )?;
    }

    let bundle = out.join("plugin.js");
    run_tool(
        // Run as it is: npm may have put the native binary in place of the
        // launcher script.
        Command::new(modules.join("esbuild").join("bin").join("esbuild"))
            .arg(flavour.entry())
            .args([
                "--bundle",
                "--format=esm",
                "--platform=neutral",
                "--target=es2020",
                "--external:wabp:*",
                "--alias:@wabp/plugin=./wabp",
                "--log-level=warning",
            ])
            .arg(format!("--outfile={}", bundle.display()))
            .current_dir(plugin),
        "bundling (esbuild)",
        STEP_LIMIT,
        echo,
    )?;
    let text = std::fs::read_to_string(&bundle).map_err(io_error(&bundle))?;
    for interface in imported_interfaces(&text) {
        let granted = match Capability::from_interface(&interface) {
            Some(capability) => {
                importable(manifest.kind).contains(&capability) && manifest.grants(capability)
            }
            // Type-only imports (types, the kind's own interface) vanish in the bundle.
            None => true,
        };
        if !granted {
            return Err(PluginCliError::Refused(format!(
                "the plugin uses wabp:plugin/{interface}, which plugin.toml does not grant: add \"{interface}\" to capabilities{}",
                if manifest.kind == Kind::Action {
                    String::new()
                } else {
                    format!(" (a {} plugin may only use log)", manifest.kind.as_str())
                }
            )));
        }
    }

    let wit = out.join("wit");
    write_wit(&wit, manifest)?;
    let component = out.join(&manifest.component);
    run_tool(
        Command::new("node")
            .arg(
                modules
                    .join("componentize-qjs")
                    .join("bin")
                    .join("componentize-qjs"),
            )
            .arg("--wit")
            .arg(&wit)
            .arg("--js")
            .arg(&bundle)
            .args(["--world", "granted", "--sync"])
            .arg("--output")
            .arg(&component)
            .current_dir(&out),
        "making the component (componentize-qjs)",
        STEP_LIMIT,
        echo,
    )?;
    Ok(component)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_interfaces_a_bundle_imports() {
        let bundle = r#"import { write } from "wabp:plugin/log@0.1.0";
import * as input from "wabp:plugin/input@0.1.0";
import { write as w2 } from "wabp:plugin/log@0.1.0";"#;
        assert_eq!(imported_interfaces(bundle), vec!["log", "input"]);
    }

    #[test]
    fn the_granted_world_imports_only_grants() {
        let dir = std::env::temp_dir().join(format!("wabp-js-wit-{}", std::process::id()));
        let manifest = Manifest::parse(
            "name = \"a\"\nversion = \"1\"\nkind = \"action\"\ncapabilities = [\"log\", \"page\"]",
        )
        .unwrap();
        write_wit(&dir, &manifest).unwrap();
        let world = std::fs::read_to_string(dir.join("granted.wit")).unwrap();
        assert!(
            world.contains("import page;") && world.contains("import log;"),
            "{world}"
        );
        assert!(!world.contains("import input;"), "{world}");
        assert!(world.contains("export action;"), "{world}");
        let policy = Manifest::parse(
            "name = \"a\"\nversion = \"1\"\nkind = \"policy\"\ncapabilities = [\"log\", \"page\"]",
        )
        .unwrap();
        write_wit(&dir, &policy).unwrap();
        let world = std::fs::read_to_string(dir.join("granted.wit")).unwrap();
        assert!(
            !world.contains("import page;"),
            "a policy world has no page: {world}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
