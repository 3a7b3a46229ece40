//! `wabp plugin new`: a plugin crate of the chosen kind, its SDK
//! dependency (a path to the repository's SDK when there is one, else the
//! published or git one) and an example that builds as it is.

use std::path::{Component, Path, PathBuf};

use super::{PluginCliError, PluginKind, SDK_PACKAGE, SdkSource, TARGET, io_error, js, py};

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
    // Resolve the SDK before writing anything, so a failure leaves no half crate.
    let crate_dir = fresh_dir(dir)?;
    let (dependency, description, lock_seed) = sdk_dependency(sdk, &crate_dir, kind)?;

    let snake = name.replace('-', "_");
    let blueprint = Blueprint::of(kind, &snake);
    let provides = blueprint.provides.clone();
    let lib = match kind {
        PluginKind::Action => ACTION_TEMPLATE,
        PluginKind::Markup => MARKUP_TEMPLATE,
        PluginKind::Wait => WAIT_TEMPLATE,
        PluginKind::Policy => POLICY_TEMPLATE,
        PluginKind::Interceptor => INTERCEPTOR_TEMPLATE,
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
    let manifest = blueprint.manifest(name, &format!("{snake}.wasm"), false);

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
const POLICY_TEMPLATE: &str = include_str!("templates/rust/policy.rs.tmpl");
const INTERCEPTOR_TEMPLATE: &str = include_str!("templates/rust/interceptor.rs.tmpl");

/// What a scaffolded plugin of each kind provides and may do, whatever its
/// language.
struct Blueprint {
    kind: PluginKind,
    provides: String,
    description: &'static str,
    timeout_ms: u32,
}

impl Blueprint {
    fn of(kind: PluginKind, snake: &str) -> Blueprint {
        let (provides, description, timeout_ms) = match kind {
            PluginKind::Action => (
                format!("{snake}_click"),
                "Clicks the first element matching a selector",
                10_000,
            ),
            PluginKind::Markup => (
                snake.to_string(),
                "Outlines buttons and labels them with their names",
                2_000,
            ),
            PluginKind::Wait => (
                snake.to_string(),
                "Done at the page's load event or after max_ms",
                1_000,
            ),
            PluginKind::Policy => (
                "policy".to_string(),
                "Refuses navigation to the hosts the policy file lists",
                1_000,
            ),
            PluginKind::Interceptor => (
                "interceptor".to_string(),
                "Blocks ads and trackers, sends Sec-GPC: 1",
                1_000,
            ),
        };
        Blueprint {
            kind,
            provides,
            description,
            timeout_ms,
        }
    }

    /// The manifest's capabilities: the example's host calls, and `log`
    /// for the TypeScript SDK, which always links it.
    fn capabilities(&self, with_log: bool) -> String {
        let mut list: Vec<&str> = match self.kind {
            PluginKind::Action => vec!["page", "input"],
            _ => vec![],
        };
        if with_log {
            list.push("log");
        }
        format!(
            "[{}]",
            list.iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// plugin.toml for `name`, its component `component`.
    fn manifest(&self, name: &str, component: &str, with_log: bool) -> String {
        format!(
            "# Read by the engine when it loads the plugin; see README (\"Write a plugin in five minutes\").\n\
             name = \"{name}\"\nversion = \"0.1.0\"\nkind = \"{kind}\"\ndescription = \"{description}\"\n\
             # The host interfaces the component may import: input, page, script, navigation, log, clock.\n\
             capabilities = {capabilities}\n\
             # The built component, installed beside this file.\n\
             component = \"{component}\"\n\n\
             [limits]\ntimeout_ms = {timeout_ms}\nmemory_mb = 32\n",
            kind = self.kind.as_str(),
            description = self.description,
            capabilities = self.capabilities(with_log),
            timeout_ms = self.timeout_ms,
        )
    }
}

const TS_ACTION_TEMPLATE: &str = include_str!("templates/ts/action.ts.tmpl");
const TS_MARKUP_TEMPLATE: &str = include_str!("templates/ts/markup.ts.tmpl");
const TS_WAIT_TEMPLATE: &str = include_str!("templates/ts/wait.ts.tmpl");
const TS_POLICY_TEMPLATE: &str = include_str!("templates/ts/policy.ts.tmpl");
const TS_INTERCEPTOR_TEMPLATE: &str = include_str!("templates/ts/interceptor.ts.tmpl");
const JS_ACTION_TEMPLATE: &str = include_str!("templates/js/action.js.tmpl");
const JS_MARKUP_TEMPLATE: &str = include_str!("templates/js/markup.js.tmpl");
const JS_WAIT_TEMPLATE: &str = include_str!("templates/js/wait.js.tmpl");
const JS_POLICY_TEMPLATE: &str = include_str!("templates/js/policy.js.tmpl");
const JS_INTERCEPTOR_TEMPLATE: &str = include_str!("templates/js/interceptor.js.tmpl");

/// Fails unless `dir` is absent or empty; its absolute path, parent created.
fn fresh_dir(dir: &Path) -> Result<PathBuf, PluginCliError> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(io_error(dir))?;
        if entries.next().is_some() {
            return Err(PluginCliError::Invalid(format!(
                "{} exists and is not empty: pick another --dir",
                dir.display()
            )));
        }
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io_error(&parent))?;
    Ok(std::fs::canonicalize(&parent)
        .map_err(io_error(&parent))?
        .join(dir.file_name().ok_or_else(|| {
            PluginCliError::Invalid(format!("{} is not a folder name", dir.display()))
        })?))
}

/// Scaffolds a TypeScript (or JavaScript) plugin of `kind` in `dir`:
/// plugin.toml, package.json, tsconfig.json, `src/plugin.ts` with a working
/// example, a README. The SDK and the bindings from wit/ arrive in `wabp/`
/// with the first `wabp plugin build`.
pub fn new_js_plugin(
    name: &str,
    kind: PluginKind,
    dir: &Path,
    flavour: js::Flavour,
) -> Result<Created, PluginCliError> {
    check_name(name)?;
    let plugin_dir = fresh_dir(dir)?;
    let snake = name.replace('-', "_");
    let blueprint = Blueprint::of(kind, &snake);
    let template = match (flavour, kind) {
        (js::Flavour::TypeScript, PluginKind::Action) => TS_ACTION_TEMPLATE,
        (js::Flavour::TypeScript, PluginKind::Markup) => TS_MARKUP_TEMPLATE,
        (js::Flavour::TypeScript, PluginKind::Wait) => TS_WAIT_TEMPLATE,
        (js::Flavour::TypeScript, PluginKind::Policy) => TS_POLICY_TEMPLATE,
        (js::Flavour::TypeScript, PluginKind::Interceptor) => TS_INTERCEPTOR_TEMPLATE,
        (js::Flavour::JavaScript, PluginKind::Action) => JS_ACTION_TEMPLATE,
        (js::Flavour::JavaScript, PluginKind::Markup) => JS_MARKUP_TEMPLATE,
        (js::Flavour::JavaScript, PluginKind::Wait) => JS_WAIT_TEMPLATE,
        (js::Flavour::JavaScript, PluginKind::Policy) => JS_POLICY_TEMPLATE,
        (js::Flavour::JavaScript, PluginKind::Interceptor) => JS_INTERCEPTOR_TEMPLATE,
    };
    let source = template
        .replace("{{NAME}}", name)
        .replace("{{SNAKE}}", &snake)
        .replace("{{PROVIDES}}", &blueprint.provides);
    let package = serde_json::json!({
        "name": name,
        "version": "0.1.0",
        "private": true,
        "type": "module",
        "description": blueprint.description,
        "scripts": {
            "build": "wabp plugin build .",
            "check": "wabp plugin build . --no-install",
        },
    });
    let readme = format!(
        "# {name}\n\n{description}. A {kind} plugin for wabp, in {language}.\n\n\
         ```sh\n\
         wabp plugin build .                 # type-check, build, check it loads, install into ./wabp-plugins\n\
         wabp plugin build . --no-install    # build and check only\n\
         wabp serve --plugins ./wabp-plugins # an engine that loads it (and reloads it on every build)\n\
         ```\n\n\
         The first build installs the toolchain (Node.js packages, pinned) into\n\
         `~/.cache/wabp/toolchains` and writes the SDK and the bindings generated from\n\
         the engine's WIT into `wabp/` (rewritten at every build: don't edit it). The\n\
         SDK is `@wabp/plugin` (errors, log, one helper per plugin kind) and one module\n\
         per host capability (`@wabp/plugin/input`, `/page`, `/script`, `/navigation`,\n\
         `/clock`): a module the plugin imports must be listed under `capabilities` in\n\
         plugin.toml. Instances are reused between calls: module state may survive from\n\
         one call to the next, but any call may start fresh.\n",
        description = blueprint.description,
        kind = kind.as_str(),
        language = match flavour {
            js::Flavour::TypeScript => "TypeScript",
            js::Flavour::JavaScript => "JavaScript",
        },
    );
    let write = |path: PathBuf, text: &str| -> Result<(), PluginCliError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::write(&path, text).map_err(|error| PluginCliError::Io { path, error })
    };
    write(
        plugin_dir.join("plugin.toml"),
        &blueprint.manifest(name, &format!("{snake}.wasm"), true),
    )?;
    write(plugin_dir.join("package.json"), &format!("{package:#}\n"))?;
    if flavour == js::Flavour::TypeScript {
        write(plugin_dir.join("tsconfig.json"), js::TSCONFIG)?;
    }
    write(plugin_dir.join(flavour.entry()), &source)?;
    write(plugin_dir.join("README.md"), &readme)?;
    write(plugin_dir.join(".gitignore"), "/target\n/wabp\n")?;
    Ok(Created {
        dir: plugin_dir,
        sdk: "the TypeScript SDK, written into wabp/ by `wabp plugin build`".into(),
        provides: blueprint.provides,
    })
}

const PY_ACTION_TEMPLATE: &str = include_str!("templates/python/action.py.tmpl");
const PY_MARKUP_TEMPLATE: &str = include_str!("templates/python/markup.py.tmpl");
const PY_WAIT_TEMPLATE: &str = include_str!("templates/python/wait.py.tmpl");
const PY_POLICY_TEMPLATE: &str = include_str!("templates/python/policy.py.tmpl");
const PY_INTERCEPTOR_TEMPLATE: &str = include_str!("templates/python/interceptor.py.tmpl");

/// Scaffolds a Python plugin of `kind` in `dir`: plugin.toml, `app.py` with
/// a working example, editor settings, a README. The SDK and the bindings
/// from wit/ arrive in `wabp/` with the first `wabp plugin build`.
pub fn new_python_plugin(
    name: &str,
    kind: PluginKind,
    dir: &Path,
) -> Result<Created, PluginCliError> {
    check_name(name)?;
    let plugin_dir = fresh_dir(dir)?;
    let snake = name.replace('-', "_");
    let blueprint = Blueprint::of(kind, &snake);
    let template = match kind {
        PluginKind::Action => PY_ACTION_TEMPLATE,
        PluginKind::Markup => PY_MARKUP_TEMPLATE,
        PluginKind::Wait => PY_WAIT_TEMPLATE,
        PluginKind::Policy => PY_POLICY_TEMPLATE,
        PluginKind::Interceptor => PY_INTERCEPTOR_TEMPLATE,
    };
    let source = template
        .replace("{{NAME}}", name)
        .replace("{{SNAKE}}", &snake)
        .replace("{{PROVIDES}}", &blueprint.provides);
    let readme = format!(
        "# {name}\n\n{description}. A {kind} plugin for wabp, in Python.\n\n\
         ```sh\n\
         wabp plugin build .                 # build, check it loads, install into ./wabp-plugins\n\
         wabp plugin build . --no-install    # build and check only\n\
         wabp serve --plugins ./wabp-plugins # an engine that loads it (and reloads it on every build)\n\
         ```\n\n\
         `app.py` holds the plugin: one class named after its kind (`Action`, `Markup`,\n\
         `Wait`, `Policy`, `Interceptor`). The first build installs componentize-py\n\
         (pinned) into a virtual environment in `~/.cache/wabp/toolchains` and writes\n\
         the SDK (`wabp_plugin`) and the bindings generated from the engine's WIT into\n\
         `wabp/` (rewritten at every build: don't edit it; `pyrightconfig.json` puts\n\
         both on an editor's path). A host module the plugin imports\n\
         (`wabp_plugin.input`, `.page`, `.script`, `.navigation`, `.clock`) must be\n\
         listed under `capabilities` in plugin.toml. The module runs once at build\n\
         time and instances are reused between calls: module state may survive from\n\
         one call to the next, but any call may start fresh.\n",
        description = blueprint.description,
        kind = kind.as_str(),
    );
    let write = |path: PathBuf, text: &str| -> Result<(), PluginCliError> {
        std::fs::write(&path, text).map_err(|error| PluginCliError::Io { path, error })
    };
    std::fs::create_dir_all(&plugin_dir).map_err(io_error(&plugin_dir))?;
    write(
        plugin_dir.join("plugin.toml"),
        &blueprint.manifest(name, &format!("{snake}.wasm"), true),
    )?;
    write(plugin_dir.join(py::ENTRY), &source)?;
    write(plugin_dir.join("pyrightconfig.json"), py::PYRIGHTCONFIG)?;
    write(plugin_dir.join("README.md"), &readme)?;
    write(
        plugin_dir.join(".gitignore"),
        "/target\n/wabp\n__pycache__/\n",
    )?;
    Ok(Created {
        dir: plugin_dir,
        sdk: "the Python SDK, written into wabp/ by `wabp plugin build`".into(),
        provides: blueprint.provides,
    })
}
