//! `wabp plugin new` and `wabp plugin build`: scaffold a plugin crate, build
//! it for wasm32-wasip2, check it loads the way the engine will load it, and
//! install it into the plugin folder a running engine watches.

use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wabp_core::plugin::PluginRegistry;
use wabp_plugin_host::{Manifest, Registry};

/// The folder `wabp serve` watches unless told otherwise (`--plugins`,
/// `WABP_PLUGINS`); `wabp plugin build` installs there by default.
pub const DEFAULT_PLUGIN_DIR: &str = "./wabp-plugins";

/// The Rust target plugins are built for.
pub const TARGET: &str = "wasm32-wasip2";

/// How long `wabp plugin build` lets cargo run.
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

const SDK_PACKAGE: &str = "wabp-plugin-sdk";
const STDERR_TAIL_LINES: usize = 30;

/// `wabp plugin ...`.
#[derive(clap::Subcommand, Debug)]
pub enum PluginCommand {
    /// Create a plugin crate: Cargo.toml, plugin.toml, src/lib.rs with a working example.
    New(NewArgs),
    /// Build a plugin crate for wasm32-wasip2 and install it where the engine picks it up.
    Build(BuildArgs),
}

/// `wabp plugin new`.
#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// Plugin name (lower-case letters, digits, '-' and '_'; starts with a letter):
    /// the crate, manifest and folder name.
    pub name: String,
    /// What the plugin provides: named actions, screenshot markup, or a wait type.
    #[arg(long, value_enum)]
    pub kind: PluginKind,
    /// Where to create the crate. Default: ./NAME.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// The SDK to depend on by path: a wabp checkout or its plugins/sdk folder.
    /// Default: the checkout the new crate is inside, else the one this wabp was built from.
    #[arg(long, value_name = "PATH", conflicts_with = "sdk_git")]
    pub sdk: Option<PathBuf>,
    /// Depend on the SDK from a git repository of wabp instead of a path.
    #[arg(long, value_name = "URL")]
    pub sdk_git: Option<String>,
    /// Branch, tag or commit for --sdk-git.
    #[arg(long, value_name = "REV", requires = "sdk_git")]
    pub sdk_rev: Option<String>,
}

/// `wabp plugin build`.
#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// The plugin crate (the folder with Cargo.toml and plugin.toml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Plugin folder to install into (as `wabp serve --plugins`).
    #[arg(
        long,
        value_name = "DIR",
        env = "WABP_PLUGINS",
        default_value = DEFAULT_PLUGIN_DIR,
        conflicts_with = "no_install"
    )]
    pub install_dir: PathBuf,
    /// Build and check only; install nothing.
    #[arg(long)]
    pub no_install: bool,
    /// Pass --locked to cargo (fail instead of updating Cargo.lock).
    #[arg(long)]
    pub locked: bool,
}

/// What a scaffolded plugin provides.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginKind {
    /// Named actions (REST endpoints, MCP tools, agent tools).
    Action,
    /// Screenshot markup.
    Markup,
    /// A wait type for `wait_until`.
    Wait,
}

impl PluginKind {
    /// Its name in `plugin.toml` (`kind = "action"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Action => "action",
            PluginKind::Markup => "markup",
            PluginKind::Wait => "wait",
        }
    }
}

/// Where the scaffolded crate gets the SDK from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// The checkout the crate is created in, else the one wabp was built from.
    Auto,
    /// A wabp checkout or its `plugins/sdk` folder.
    Path(PathBuf),
    /// A git repository of wabp, at a branch, tag or commit.
    Git {
        /// The repository.
        url: String,
        /// Branch, tag or commit (default: the default branch).
        rev: Option<String>,
    },
}

/// Why `wabp plugin new` or `build` failed.
#[derive(Debug)]
pub enum PluginCliError {
    /// Bad arguments (name, folder, SDK location).
    Invalid(String),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// cargo could not be run.
    NoCargo {
        /// The cargo tried.
        cargo: PathBuf,
        /// Why it did not run.
        error: std::io::Error,
    },
    /// The wasm32-wasip2 target is not installed.
    MissingTarget {
        /// cargo's words.
        detail: String,
    },
    /// No Cargo.toml in the folder.
    NoCrate(PathBuf),
    /// No plugin.toml in the folder.
    NoManifest(PathBuf),
    /// plugin.toml does not parse.
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// Why.
        error: String,
    },
    /// cargo build failed.
    BuildFailed {
        /// cargo's exit status.
        status: String,
        /// The end of its error output.
        stderr_tail: String,
    },
    /// cargo build took longer than this.
    BuildTimeout(Duration),
    /// The build made no `.wasm`.
    NoComponent {
        /// The crate built.
        krate: PathBuf,
    },
    /// plugin.toml names another component than the one built.
    ComponentMismatch {
        /// The manifest's `component`.
        manifest: String,
        /// The file cargo built.
        built: String,
    },
    /// The `.wasm` is a core module, not a component.
    NotAComponent(PathBuf),
    /// The engine would refuse the component (an ungranted import, a
    /// `describe` that fails, a kind that doesn't match the exports).
    Refused(String),
}

impl fmt::Display for PluginCliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginCliError::Invalid(m) => write!(f, "{m}"),
            PluginCliError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            PluginCliError::NoCargo { cargo, error } => write!(
                f,
                "cargo not found ({}: {error}): install Rust with rustup (https://rustup.rs), then `rustup target add {TARGET}`",
                cargo.display()
            ),
            PluginCliError::MissingTarget { detail } => write!(
                f,
                "the {TARGET} target is not installed: run `rustup target add {TARGET}`{}",
                if detail.is_empty() {
                    String::new()
                } else {
                    format!("\n{detail}")
                }
            ),
            PluginCliError::NoCrate(dir) => write!(
                f,
                "no Cargo.toml in {}: give the plugin crate's folder (`wabp plugin new NAME --kind action` makes one)",
                dir.display()
            ),
            PluginCliError::NoManifest(dir) => write!(
                f,
                "no plugin.toml in {}: a plugin crate needs one beside Cargo.toml (name, version, kind, capabilities, component)",
                dir.display()
            ),
            PluginCliError::BadManifest { path, error } => {
                write!(
                    f,
                    "{} is not a valid plugin manifest: {error}",
                    path.display()
                )
            }
            PluginCliError::BuildFailed {
                status,
                stderr_tail,
            } => write!(
                f,
                "cargo build failed ({status}); the end of its output:\n{stderr_tail}"
            ),
            PluginCliError::BuildTimeout(limit) => {
                write!(f, "cargo build did not finish within {} s", limit.as_secs())
            }
            PluginCliError::NoComponent { krate } => write!(
                f,
                "building {} produced no .wasm: the crate needs `[lib] crate-type = [\"cdylib\"]` in Cargo.toml",
                krate.display()
            ),
            PluginCliError::ComponentMismatch { manifest, built } => write!(
                f,
                "plugin.toml says component = \"{manifest}\" but the crate builds \"{built}\": set component = \"{built}\" in plugin.toml (the crate's lib name, '-' as '_', plus .wasm)"
            ),
            PluginCliError::NotAComponent(path) => write!(
                f,
                "{} is a core WebAssembly module, not a component: plugins must be built for {TARGET}",
                path.display()
            ),
            PluginCliError::Refused(m) => write!(f, "the engine would refuse this plugin: {m}"),
        }
    }
}

impl std::error::Error for PluginCliError {}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> PluginCliError + '_ {
    move |error| PluginCliError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Runs a `wabp plugin` subcommand, reporting on stdout.
pub async fn run(command: PluginCommand) -> anyhow::Result<()> {
    match command {
        PluginCommand::New(args) => {
            let sdk = match (args.sdk, args.sdk_git) {
                (Some(path), _) => SdkSource::Path(path),
                (None, Some(url)) => SdkSource::Git {
                    url,
                    rev: args.sdk_rev,
                },
                (None, None) => SdkSource::Auto,
            };
            let dir = args.dir.unwrap_or_else(|| PathBuf::from(&args.name));
            let created = new_plugin(&args.name, args.kind, &dir, &sdk)?;
            println!(
                "created {} plugin {} in {}",
                args.kind.as_str(),
                args.name,
                dir.display()
            );
            println!("  SDK: {}", created.sdk);
            println!("next:");
            println!("  edit {}", dir.join("src").join("lib.rs").display());
            println!(
                "  wabp plugin build {}    # builds, checks and installs into {DEFAULT_PLUGIN_DIR}",
                dir.display()
            );
            match args.kind {
                PluginKind::Action => println!(
                    "  curl http://127.0.0.1:8222/api/v1/tabs/$TAB/actions/{} --json '{{\"selector\": \"a\"}}'",
                    created.provides
                ),
                PluginKind::Markup => println!(
                    "  curl http://127.0.0.1:8222/api/v1/tabs/$TAB/screenshot --json '{{\"screenshot\": {{\"markup\": [\"{}\"]}}}}'",
                    created.provides
                ),
                PluginKind::Wait => println!(
                    "  curl http://127.0.0.1:8222/api/v1/tabs/$TAB/click --json '{{\"x\": 10, \"y\": 10, \"wait_until\": {{\"type\": \"{}\"}}}}'",
                    created.provides
                ),
            }
            Ok(())
        }
        PluginCommand::Build(args) => {
            let options = BuildOptions {
                crate_dir: args.path,
                install_dir: (!args.no_install).then_some(args.install_dir),
                locked: args.locked,
                echo: true,
                ..BuildOptions::default()
            };
            let built = build_plugin(&options).await?;
            println!(
                "built {} {} ({}) in {:.1} s: {}",
                built.name,
                built.version,
                built.kind,
                built.build_time.as_secs_f64(),
                built.component.display()
            );
            println!("  provides: {}", built.provides.join(", "));
            match &built.installed {
                Some(dir) => println!(
                    "  installed to {} (an engine watching that folder loads it now)",
                    dir.display()
                ),
                None => println!("  not installed (--no-install)"),
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------- new

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
fn sdk_dependency(
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
fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
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

fn toml_string(s: &str) -> String {
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

const ACTION_TEMPLATE: &str = r#"//! {{NAME}}: an action plugin for wabp. `wabp plugin build` builds it,
//! checks it and installs it into the plugin folder; the running engine then
//! serves `POST /api/v1/tabs/{id}/actions/{{PROVIDES}}`.
//!
//! Every host module used (`host::page`, `host::input`, ...) must be listed
//! under `capabilities` in plugin.toml, or the engine refuses the plugin.

use wabp_plugin_sdk::host::{self, Modifiers, MouseButton, Target};
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, Params, PluginError, Value, json};

struct Plugin;

impl ActionPlugin for Plugin {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new(
            "{{PROVIDES}}",
            "Clicks the first element matching `selector` and says what it clicked",
            json!({
                "type": "object",
                "required": ["selector"],
                "properties": { "selector": { "type": "string", "description": "CSS selector" } }
            }),
        )]
    }

    fn run(name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        let params = Params::new(params)?;
        match name {
            "{{PROVIDES}}" => click(params.required_str("selector")?),
            other => Err(PluginError::not_found(format!("no action {other:?}"))),
        }
    }
}

fn click(selector: &str) -> Result<Value, PluginError> {
    // Scrolled into view and checked visible and uncovered: the point to click.
    let at = host::page::locate(&Target::Selector(selector.to_string()))?;
    host::input::mouse_move(at.x, at.y)?;
    host::input::mouse_down(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    host::input::mouse_up(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    Ok(json!({ "clicked": at.element.tag, "text": at.element.text, "x": at.x, "y": at.y }))
}

wabp_plugin_sdk::export_action_plugin!(Plugin);
"#;

const MARKUP_TEMPLATE: &str = r#"//! {{NAME}}: a markup plugin for wabp. It draws over screenshots that ask
//! for its tag: `"screenshot": {"markup": ["{{PROVIDES}}"]}`. Shapes are in
//! CSS pixels of the viewport; the host draws them on the captured bitmap.

use wabp_plugin_sdk::{Color, Element, LabelShape, MarkupPlugin, PluginError, RectShape, Shape};

struct Plugin;

const TAG: &str = "{{PROVIDES}}";
const COLOR: Color = Color::rgba(219, 39, 119, 255);
const WHITE: Color = Color::rgba(255, 255, 255, 255);
const LABEL_SIZE: f32 = 12.0;

impl MarkupPlugin for Plugin {
    fn tags() -> Vec<String> {
        vec![TAG.to_string()]
    }

    fn render(tags: &[String], _viewport: (f64, f64), elements: &[Element]) -> Result<Vec<Shape>, PluginError> {
        if !tags.iter().any(|t| t == TAG) {
            return Ok(Vec::new());
        }
        let mut shapes = Vec::new();
        for e in elements.iter().filter(|e| e.tag == "button" || e.role == "button") {
            shapes.push(Shape::Rect(RectShape { rect: e.rect, stroke: Some(COLOR), stroke_width: 3.0, fill: Some(COLOR.with_alpha(40)), dash: Vec::new() }));
            if !e.name.is_empty() {
                let text: String = e.name.chars().take(30).collect();
                let y = (e.rect.y - 1.5 * f64::from(LABEL_SIZE)).max(0.0);
                shapes.push(Shape::Label(LabelShape { x: e.rect.x, y, text, color: WHITE, background: Some(COLOR), size: LABEL_SIZE }));
            }
        }
        Ok(shapes)
    }
}

wabp_plugin_sdk::export_markup_plugin!(Plugin);
"#;

const WAIT_TEMPLATE: &str = r#"//! {{NAME}}: a wait plugin for wabp. An action that asks for
//! `"wait_until": {"type": "{{PROVIDES}}", "max_ms": 2000}` ends at the
//! page's `load` event or after `max_ms`, whichever comes first.

use std::cell::Cell;

use wabp_plugin_sdk::{Decision, Params, PluginError, Signal, Value, WaitPlugin, WaitSpec, json};

struct Plugin;

const POLL_MS: u64 = 50;

thread_local! {
    // One instance serves one wait, so the wait's state can live here.
    static MAX_MS: Cell<u64> = const { Cell::new(0) };
}

impl WaitPlugin for Plugin {
    fn waits() -> Vec<WaitSpec> {
        vec![WaitSpec::new(
            "{{PROVIDES}}",
            "Done at the page's load event, or after max_ms",
            json!({
                "type": "object",
                "properties": { "max_ms": { "type": "integer", "minimum": 0, "default": 2000 } }
            }),
        )]
    }

    fn begin(_name: &str, params: Value) -> Result<Decision, PluginError> {
        let max_ms = Params::new(params)?.optional_u32("max_ms", 2000)?;
        MAX_MS.set(u64::from(max_ms));
        Ok(Decision::Pending(POLL_MS as u32))
    }

    fn poll(signals: Vec<Signal>, elapsed_ms: u64) -> Decision {
        if signals.iter().any(|s| matches!(s, Signal::Load)) {
            return Decision::Done("load".into());
        }
        let max_ms = MAX_MS.get();
        if elapsed_ms >= max_ms {
            Decision::Done("max_ms".into())
        } else {
            Decision::Pending((max_ms - elapsed_ms).min(POLL_MS) as u32)
        }
    }
}

wabp_plugin_sdk::export_wait_plugin!(Plugin);
"#;

// ---------------------------------------------------------------- build

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

/// Builds the crate for wasm32-wasip2 (release), loads the component the way
/// the engine will (grants, exports, `describe`), then installs the `.wasm`
/// and `plugin.toml` into `install_dir/<name>/`.
pub async fn build_plugin(options: &BuildOptions) -> Result<Built, PluginCliError> {
    let dir = &options.crate_dir;
    let cargo_toml = dir.join("Cargo.toml");
    if !cargo_toml.is_file() {
        return Err(PluginCliError::NoCrate(dir.clone()));
    }
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
    let cargo_toml = std::fs::canonicalize(&cargo_toml).map_err(io_error(&cargo_toml))?;

    let started = Instant::now();
    let cargo_options = options.clone();
    let component = tokio::task::spawn_blocking(move || run_cargo(&cargo_options, &cargo_toml))
        .await
        .map_err(|e| PluginCliError::Invalid(format!("build task failed: {e}")))??;
    let build_time = started.elapsed();

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
fn component_artifact(line: &str, cargo_toml: &Path) -> Option<PathBuf> {
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

fn has_target(sysroot: &Path) -> bool {
    sysroot
        .join("lib")
        .join("rustlib")
        .join(TARGET)
        .join("lib")
        .is_dir()
}

fn mentions_missing_target(stderr: &str) -> bool {
    stderr.contains(TARGET)
        && (stderr.contains("target may not be installed")
            || stderr.contains("not installed")
            || stderr.contains("can't find crate for `core`")
            || stderr.contains("can't find crate for `std`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["a", "fill-form", "shop_pack2"] {
            check_name(ok).unwrap();
        }
        for bad in ["", "2fast", "Fill", "a b", "a/b", "-x", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn relative_paths() {
        let rel = relative_path(
            Path::new("/w/repo/target/x/p"),
            Path::new("/w/repo/plugins/sdk"),
        );
        assert_eq!(rel.unwrap(), PathBuf::from("../../../plugins/sdk"));
        assert_eq!(
            relative_path(Path::new("/tmp/p"), Path::new("/w/sdk")),
            None
        );
    }

    #[test]
    fn a_git_sdk_is_a_git_dependency_with_the_kind_feature() {
        let (line, shown, lock) = sdk_dependency(
            &SdkSource::Git {
                url: "https://example.org/wabp.git".into(),
                rev: Some("v0.1".into()),
            },
            Path::new("/tmp/p"),
            PluginKind::Markup,
        )
        .unwrap();
        let parsed: toml::Table = toml::from_str(&line).expect("a TOML line");
        let dep = &parsed[SDK_PACKAGE];
        assert_eq!(dep["git"].as_str(), Some("https://example.org/wabp.git"));
        assert_eq!(dep["rev"].as_str(), Some("v0.1"));
        assert_eq!(dep["features"][0].as_str(), Some("markup"));
        assert_eq!(shown, "git https://example.org/wabp.git");
        assert!(lock.is_none(), "no lock to seed from a remote SDK");
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }

    #[test]
    fn finds_the_component_artifact() {
        let toml = Path::new("/p/Cargo.toml");
        let line = r#"{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","target":{"kind":["cdylib"],"name":"p"},"filenames":["/t/wasm32-wasip2/release/p.wasm"]}"#;
        assert_eq!(
            component_artifact(line, toml),
            Some(PathBuf::from("/t/wasm32-wasip2/release/p.wasm"))
        );
        let dep = r#"{"reason":"compiler-artifact","manifest_path":"/sdk/Cargo.toml","target":{"kind":["lib"]},"filenames":["/t/libsdk.rlib"]}"#;
        assert_eq!(component_artifact(dep, toml), None);
        assert_eq!(component_artifact("not json", toml), None);
    }

    #[test]
    fn recognises_a_missing_target() {
        assert!(mentions_missing_target(
            "error[E0463]: can't find crate for `core`\n  = note: the `wasm32-wasip2` target may not be installed"
        ));
        assert!(!mentions_missing_target(
            "error[E0425]: cannot find value `x` in this scope"
        ));
        assert!(!has_target(Path::new("/nonexistent-sysroot")));
    }

    #[test]
    fn new_refuses_a_non_empty_folder_and_bad_sdk() {
        let dir = std::env::temp_dir().join(format!("wabp-new-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("taken")).unwrap();
        std::fs::write(dir.join("taken").join("x"), "x").unwrap();
        let e = new_plugin(
            "taken",
            PluginKind::Action,
            &dir.join("taken"),
            &SdkSource::Auto,
        )
        .unwrap_err();
        assert!(e.to_string().contains("not empty"), "{e}");
        let e = new_plugin(
            "p",
            PluginKind::Action,
            &dir.join("p"),
            &SdkSource::Path(dir.clone()),
        )
        .unwrap_err();
        assert!(e.to_string().contains("neither a wabp checkout"), "{e}");
        assert!(!dir.join("p").exists(), "nothing written on failure");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
