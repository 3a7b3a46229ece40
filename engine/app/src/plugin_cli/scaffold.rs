//! `wabp plugin new`: a plugin crate of the chosen kind, its SDK
//! dependency (a path to the repository's SDK when there is one, else the
//! published or git one) and an example that builds as it is.

use std::path::{Component, Path, PathBuf};

use super::{PluginCliError, PluginKind, SDK_PACKAGE, SdkSource, TARGET, io_error};

/// What `new_plugin` made.
#[derive(Debug, Clone)]
pub struct Created {
    /// The crate folder.
    pub dir: PathBuf,
    /// The dependency line's description (e.g. `path ../plugins/sdk`).
    pub sdk: String,
    /// The example's action name, markup tag or wait type.
    pub provides: String,
}

/// Checks a plugin name: it becomes the crate, manifest and folder name.
pub fn check_name(name: &str) -> Result<(), PluginCliError> {
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(PluginCliError::Invalid(format!(
            "plugin name {name:?} must start with a lower-case letter and have only lower-case letters, digits, '-' and '_' (at most 64)"
        )))
    }
}

/// Scaffolds a plugin crate of `kind` in `dir` (created; must be empty if it exists).
pub fn new_plugin(
    name: &str,
    kind: PluginKind,
    dir: &Path,
    sdk: &SdkSource,
) -> Result<Created, PluginCliError> {
    check_name(name)?;
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(io_error(dir))?;
        if entries.next().is_some() {
            return Err(PluginCliError::Invalid(format!(
                "{} exists and is not empty: pick another --dir",
                dir.display()
            )));
        }
    }
    // Resolve the SDK before writing anything, so a failure leaves no half crate.
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io_error(&parent))?;
    let crate_dir = std::fs::canonicalize(&parent)
        .map_err(io_error(&parent))?
        .join(dir.file_name().ok_or_else(|| {
            PluginCliError::Invalid(format!("{} is not a folder name", dir.display()))
        })?);
    let (dependency, description, lock_seed) = sdk_dependency(sdk, &crate_dir, kind)?;

    let snake = name.replace('-', "_");
    let (lib, provides, capabilities, description_line) = match kind {
        PluginKind::Action => (
            ACTION_TEMPLATE,
            format!("{snake}_click"),
            r#"["page", "input"]"#,
            "Clicks the first element matching a selector",
        ),
        PluginKind::Markup => (
            MARKUP_TEMPLATE,
            snake.clone(),
            "[]",
            "Outlines buttons and labels them with their names",
        ),
        PluginKind::Wait => (
            WAIT_TEMPLATE,
            snake.clone(),
            "[]",
            "Done at the page's load event or after max_ms",
        ),
    };
    let timeout_ms = match kind {
        PluginKind::Action => 10_000,
        PluginKind::Markup => 2_000,
        PluginKind::Wait => 1_000,
    };
    let fill = |text: &str| {
        text.replace("{{NAME}}", name)
            .replace("{{SNAKE}}", &snake)
            .replace("{{PROVIDES}}", &provides)
    };
    let cargo_toml = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         # A WebAssembly component for {TARGET}: `wabp plugin build` builds and installs it.\n\
         [lib]\ncrate-type = [\"cdylib\"]\n\n\
         [dependencies]\n{dependency}\n\n\
         # A workspace of its own, so it builds the same wherever it lives.\n[workspace]\n\n\
         # Small components; panics stay the default so they surface as traps.\n\
         [profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\ncodegen-units = 1\n"
    );
    let manifest = format!(
        "# Read by the engine when it loads the plugin; see README (\"Write a plugin in five minutes\").\n\
         name = \"{name}\"\nversion = \"0.1.0\"\nkind = \"{kind}\"\ndescription = \"{description_line}\"\n\
         # The host interfaces the component may import: input, page, script, navigation, log, clock.\n\
         capabilities = {capabilities}\n\
         # The built component, installed beside this file.\n\
         component = \"{snake}.wasm\"\n\n\
         [limits]\ntimeout_ms = {timeout_ms}\nmemory_mb = 32\n",
        kind = kind.as_str()
    );

    let write = |path: PathBuf, text: &str| -> Result<(), PluginCliError> {
        std::fs::write(&path, text).map_err(|error| PluginCliError::Io { path, error })
    };
    let src = crate_dir.join("src");
    std::fs::create_dir_all(&src).map_err(io_error(&src))?;
    write(crate_dir.join("Cargo.toml"), &cargo_toml)?;
    write(crate_dir.join("plugin.toml"), &manifest)?;
    write(src.join("lib.rs"), &fill(lib))?;
    write(crate_dir.join(".gitignore"), "/target\n")?;
    if let Some(lock) = lock_seed {
        // The SDK workspace's lock: the same dependency versions the built-in
        // plugins are tested with; cargo drops what this crate doesn't use.
        std::fs::copy(&lock, crate_dir.join("Cargo.lock")).map_err(io_error(&lock))?;
    }
    Ok(Created {
        dir: crate_dir,
        sdk: description,
        provides,
    })
}

/// The `wabp-plugin-sdk = ...` line, a description of it, and the lockfile
/// to seed the new crate with.
pub(super) fn sdk_dependency(
    sdk: &SdkSource,
    crate_dir: &Path,
    kind: PluginKind,
) -> Result<(String, String, Option<PathBuf>), PluginCliError> {
    let feature = kind.as_str();
    let path_dep = |sdk_dir: &Path, shown: &Path| {
        let lock = sdk_dir.parent().map(|p| p.join("Cargo.lock"));
        (
            format!(
                "{SDK_PACKAGE} = {{ path = {}, features = [\"{feature}\"] }}",
                toml_string(&shown.to_string_lossy())
            ),
            format!("path {}", shown.display()),
            lock.filter(|l| l.is_file()),
        )
    };
    match sdk {
        SdkSource::Git { url, rev } => {
            let rev = rev
                .as_ref()
                .map(|r| format!(", rev = {}", toml_string(r)))
                .unwrap_or_default();
            Ok((
                format!(
                    "{SDK_PACKAGE} = {{ git = {}{rev}, features = [\"{feature}\"] }}",
                    toml_string(url)
                ),
                format!("git {url}"),
                None,
            ))
        }
        SdkSource::Path(path) => {
            let found = [path.join("plugins").join("sdk"), path.to_path_buf()]
                .into_iter()
                .find(|p| is_sdk(p))
                .ok_or_else(|| {
                    PluginCliError::Invalid(format!(
                        "{} is neither a wabp checkout nor its plugins/sdk folder (no Cargo.toml of {SDK_PACKAGE})",
                        path.display()
                    ))
                })?;
            let found = std::fs::canonicalize(&found).map_err(io_error(&found))?;
            Ok(path_dep(&found, &found))
        }
        SdkSource::Auto => {
            // Inside a checkout: a relative path, so the crate moves with it.
            if let Some(sdk_dir) = crate_dir
                .ancestors()
                .skip(1)
                .map(|a| a.join("plugins").join("sdk"))
                .find(|p| is_sdk(p))
            {
                let relative = relative_path(crate_dir, &sdk_dir).unwrap_or(sdk_dir.clone());
                return Ok(path_dep(&sdk_dir, &relative));
            }
            let built_from = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("plugins")
                .join("sdk");
            if is_sdk(&built_from) {
                return Ok(path_dep(&built_from, &built_from));
            }
            Err(PluginCliError::Invalid(format!(
                "can't find the wabp plugin SDK ({} is gone and {} is not inside a wabp checkout): pass --sdk PATH (a wabp checkout) or --sdk-git URL",
                built_from.display(),
                crate_dir.display()
            )))
        }
    }
}

fn is_sdk(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .map(|text| text.contains(&format!("name = \"{SDK_PACKAGE}\"")))
        .unwrap_or(false)
}

/// `to` relative to the folder `from` (both absolute).
pub(super) fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    // Only the root in common: an absolute path says more.
    if common <= 1 {
        return None;
    }
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for c in &to[common..] {
        path.push(c);
    }
    Some(path)
}

pub(super) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const ACTION_TEMPLATE: &str = include_str!("templates/rust/action.rs.tmpl");

const MARKUP_TEMPLATE: &str = include_str!("templates/rust/markup.rs.tmpl");

const WAIT_TEMPLATE: &str = include_str!("templates/rust/wait.rs.tmpl");
