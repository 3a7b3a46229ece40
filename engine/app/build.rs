//! Builds the plugin workspaces for wasm32-wasip2 and embeds the built-in
//! plugins (`plugins/*` with a `plugin.toml`) in the binary. No `.wasm` is
//! committed: they are always built from source.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // A target dir of its own: the outer build holds a lock on target/.
    let wasm_target = root.join("target").join("wasm");
    for workspace in ["plugins", "tests/plugins"] {
        println!("cargo:rerun-if-changed={workspace}");
        build_workspace(
            &root,
            &root.join(workspace).join("Cargo.toml"),
            &wasm_target,
        );
    }
    println!("cargo:rerun-if-changed=wit");
    let release = wasm_target.join("wasm32-wasip2").join("release");

    let mut entries = String::from(
        "/// (plugin name, plugin.toml text, component bytes) of every built-in plugin.\npub const BUILTIN_PLUGINS: &[(&str, &str, &[u8])] = &[\n",
    );
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("plugins"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let manifest = dir.join("plugin.toml");
        if !manifest.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).unwrap();
        let component = manifest_field(&text, "component")
            .unwrap_or_else(|| panic!("{}: missing component = \"...\"", manifest.display()));
        let name = manifest_field(&text, "name")
            .unwrap_or_else(|| panic!("{}: missing name", manifest.display()));
        let wasm = release.join(&component);
        assert!(
            wasm.is_file(),
            "{} was not built (expected {})",
            name,
            wasm.display()
        );
        entries.push_str(&format!(
            "    ({name:?}, include_str!({:?}), include_bytes!({:?})),\n",
            manifest.display().to_string(),
            wasm.display().to_string()
        ));
    }
    entries.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin_plugins.rs");
    std::fs::write(out, entries).unwrap();
    println!(
        "cargo:rustc-env=WABP_TEST_PLUGINS_DIR={}",
        release.display()
    );
    println!(
        "cargo:rustc-env=WABP_TEST_PLUGINS_SRC={}",
        root.join("tests").join("plugins").display()
    );
}

/// `key = "value"` at the top level of a plugin.toml.
fn manifest_field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
}

fn build_workspace(root: &Path, manifest: &Path, target_dir: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    // The outer build's settings are for the host target, not wasm.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        command.env_remove(var);
    }
    let output = command
        .output()
        .expect("failed to run cargo for the plugins");
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("wasm32-wasip2")
            && (stderr.contains("not installed")
                || stderr.contains("can't find crate for `core`")
                || stderr.contains("can't find crate for `std`"))
        {
            panic!(
                "the wasm32-wasip2 target is missing: run `rustup target add wasm32-wasip2`\n{stderr}"
            );
        }
        panic!(
            "building {} for wasm32-wasip2 failed:\n{stderr}",
            manifest.display()
        );
    }
}
