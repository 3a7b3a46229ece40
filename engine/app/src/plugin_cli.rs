//! `wabp plugin new` and `wabp plugin build`: scaffold a plugin crate, build
//! it for wasm32-wasip2, check it loads the way the engine will load it, and
//! install it into the plugin folder a running engine watches.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Create a plugin: plugin.toml and a working example, in Rust (a crate), TypeScript or JavaScript.
    New(NewArgs),
    /// Build a plugin folder into a component, check that it loads, and install it where the engine picks it up.
    Build(BuildArgs),
}

/// `wabp plugin new`.
#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// Plugin name (lower-case letters, digits, '-' and '_'; starts with a letter):
    /// the crate, manifest and folder name.
    pub name: String,
    /// What the plugin provides: named actions, screenshot markup, a wait
    /// type, an approval policy or a request interceptor.
    #[arg(long, value_enum)]
    pub kind: PluginKind,
    /// The language to write it in.
    #[arg(long, value_enum, default_value = "rust")]
    pub lang: PluginLang,
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
    /// An approval policy, asked before every operation.
    Policy,
    /// A request interceptor, asked about the tabs' requests.
    Interceptor,
}

impl PluginKind {
    /// Its name in `plugin.toml` (`kind = "action"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Action => "action",
            PluginKind::Markup => "markup",
            PluginKind::Wait => "wait",
            PluginKind::Policy => "policy",
            PluginKind::Interceptor => "interceptor",
        }
    }
}

/// The language `wabp plugin new` scaffolds in.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginLang {
    /// A Rust crate for wasm32-wasip2, on the `wabp-plugin-sdk` crate.
    Rust,
    /// TypeScript, type-checked, on the `@wabp/plugin` SDK.
    #[value(alias = "typescript")]
    Ts,
    /// JavaScript, on the `@wabp/plugin` SDK.
    #[value(alias = "javascript")]
    Js,
    /// Python, on the `wabp_plugin` SDK.
    #[value(alias = "py")]
    Python,
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
    /// A tool a build needs (Node.js, npm) is missing or too old.
    MissingTool(String),
    /// A build step (type check, bundling, componentize, an install) failed.
    StepFailed {
        /// What the step does.
        step: String,
        /// Its exit status, or why it was stopped.
        status: String,
        /// The end of its output.
        output_tail: String,
    },
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
                "no Cargo.toml, src/plugin.ts, src/plugin.js or app.py in {}: give the plugin's folder (`wabp plugin new NAME --kind action [--lang ts|js|python]` makes one)",
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
            PluginCliError::MissingTool(m) => write!(f, "{m}"),
            PluginCliError::StepFailed {
                step,
                status,
                output_tail,
            } => write!(
                f,
                "{step} failed ({status}); the end of its output:\n{output_tail}"
            ),
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
            let created = match args.lang {
                PluginLang::Rust => new_plugin(&args.name, args.kind, &dir, &sdk)?,
                PluginLang::Ts => {
                    new_js_plugin(&args.name, args.kind, &dir, js::Flavour::TypeScript)?
                }
                PluginLang::Js => {
                    new_js_plugin(&args.name, args.kind, &dir, js::Flavour::JavaScript)?
                }
                PluginLang::Python => new_python_plugin(&args.name, args.kind, &dir)?,
            };
            println!(
                "created {} plugin {} in {}",
                args.kind.as_str(),
                args.name,
                dir.display()
            );
            println!("  SDK: {}", created.sdk);
            println!("next:");
            let source = match args.lang {
                PluginLang::Rust => "src/lib.rs",
                PluginLang::Ts => js::Flavour::TypeScript.entry(),
                PluginLang::Js => js::Flavour::JavaScript.entry(),
                PluginLang::Python => py::ENTRY,
            };
            println!("  edit {}", dir.join(source).display());
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
                PluginKind::Policy => println!(
                    "  curl http://127.0.0.1:8222/api/v1/plugins    # asked before every operation once loaded"
                ),
                PluginKind::Interceptor => println!(
                    "  curl http://127.0.0.1:8222/api/v1/plugins    # asked about every request once loaded"
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

mod build;
pub mod js;
pub mod py;
mod scaffold;
#[cfg(test)]
mod tests;
mod tool;

pub use build::{BuildOptions, Built, Language, build_plugin};
pub use scaffold::{Created, check_name, new_js_plugin, new_plugin, new_python_plugin};
