//! wabp inside a Rust program: launch an engine from a [`BrowserConfig`],
//! open [`Tab`]s, act on a ref, a selector, a state index or a point, read
//! snapshots and action envelopes, load plugins.
//!
//! Every call here runs the catalogue operation REST and MCP run (the same
//! validation, freezing, envelope, history and approval policies), as the
//! engine's own caller.
//!
//! ```no_run
//! use wabp::embed::{BrowserConfig, Target, Wabp};
//!
//! # async fn demo() -> anyhow::Result<()> {
//! let wabp = Wabp::launch(BrowserConfig::default()).await?;
//! let tab = wabp.open_tab("https://example.com").await?;
//! let snapshot = tab.snapshot().await?; // - link "More information..." [e6]
//! println!("{snapshot}");
//! let envelope = tab.click(Target::Ref("e6".into())).await?;
//! println!("{} events, {:?}", envelope.events.len(), envelope.action_id);
//! wabp.shutdown().await;
//! # Ok(())
//! # }
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Map, Value, json};
use wabp_api::{Ctx, Output};
pub use wabp_core::Envelope;
pub use wabp_core::browser::LaunchMode;

use crate::{App, Options};

/// How to get a browser (Aleph's `BrowserConfig`, plus where the engine
/// keeps its session and plugins).
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// Find Chromium (`Auto`), launch an executable (`Binary`), or attach to
    /// a running browser (`Connect`, `ws://...` or `http://host:port`).
    pub mode: LaunchMode,
    /// Without a window (default true; false needs full Chromium and a display).
    pub headless: bool,
    /// The DevTools port of a launched browser (default: its own choice).
    pub cdp_port: Option<u16>,
    /// A profile folder of your own, kept afterwards (default: one in the
    /// session folder, removed with the browser).
    pub user_data_dir: Option<PathBuf>,
    /// More Chromium switches.
    pub extra_args: Vec<String>,
    /// Viewport size in CSS pixels (default 1280x720).
    pub viewport: (u32, u32),
    /// Freeze pages between actions (default true).
    pub freeze_pages: bool,
    /// Where history, screenshots and downloads go (default: a new folder
    /// under the temp dir).
    pub session_dir: Option<PathBuf>,
    /// A plugin folder to load and watch for changes (default: the built-in
    /// plugins only).
    pub plugin_dir: Option<PathBuf>,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            mode: LaunchMode::Auto,
            headless: true,
            cdp_port: None,
            user_data_dir: None,
            extra_args: Vec::new(),
            viewport: (1280, 720),
            freeze_pages: true,
            session_dir: None,
            plugin_dir: None,
        }
    }
}

/// Where an action lands.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A ref from a snapshot (`e7`, `f1e3` in a frame).
    Ref(String),
    /// A CSS selector (open shadow roots searched).
    Selector(String),
    /// An index from [`Tab::state`].
    Index(u64),
    /// A viewport point in CSS pixels.
    Point(f64, f64),
}

impl Target {
    fn into_params(self, params: &mut Map<String, Value>) {
        match self {
            Target::Ref(r) => params.insert("ref".into(), json!(r)),
            Target::Selector(s) => params.insert("selector".into(), json!(s)),
            Target::Index(i) => params.insert("index".into(), json!(i)),
            Target::Point(x, y) => {
                params.insert("x".into(), json!(x));
                params.insert("y".into(), json!(y))
            }
        };
    }
}

/// A running engine and its browser.
pub struct Wabp {
    app: App,
    ctx: Ctx,
}

/// A failure of an operation, with the engine's error code (`STALE_REF`,
/// `SELECTOR_NOT_FOUND`, ...) and message.
pub type Error = wabp_core::Error;

impl Wabp {
    /// Starts an engine and its browser (awaited: it answers once the
    /// browser is ready).
    pub async fn launch(config: BrowserConfig) -> anyhow::Result<Wabp> {
        let session_dir = config.session_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!(
                "wabp-embed-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ))
        });
        let mut options = Options::default_for_session(session_dir);
        options.launch = config.mode.clone();
        options.headed = !config.headless;
        options.viewport = config.viewport;
        options.pause = config.freeze_pages;
        options.plugin_dir = config.plugin_dir.clone();
        let app = App::prepare(options).await?;
        let mut launch = app.engine.config.browser.clone();
        launch.cdp_port = config.cdp_port;
        launch.extra_args.extend(config.extra_args.iter().cloned());
        if let Some(dir) = &config.user_data_dir {
            launch.user_data_dir = dir.clone();
            launch.owned_profile = false;
        }
        app.engine.without_browser();
        app.engine
            .start_browser(Some(launch))
            .await
            .context("the browser did not start")?;
        let ctx = app.services.ctx(wabp_core::Caller::default());
        Ok(Wabp { app, ctx })
    }

    /// Runs any catalogue operation by name (`navigate`, `snapshot`,
    /// `list_tabs`, ...; a plugin action `x` is `action:x`) on a JSON input,
    /// as REST would with the same fields.
    pub async fn call(&self, operation: &str, input: Value) -> Result<Output, Error> {
        self.app
            .catalogue
            .operation(operation)?
            .run(self.ctx.clone(), input)
            .await
    }

    /// Opens a tab on `url` and waits for it to load.
    pub async fn open_tab(&self, url: &str) -> Result<Tab, Error> {
        let created = json_of(self.call("create_tab", json!({ "url": url })).await?);
        let id = created["id"].as_str().unwrap_or_default().to_string();
        Ok(self.tab(&id))
    }

    /// A handle on tab `id` (from [`Wabp::tabs`]); it is not checked until used.
    pub fn tab(&self, id: &str) -> Tab {
        Tab {
            id: id.to_string(),
            ctx: self.ctx.clone(),
            catalogue: self.app.catalogue.clone(),
        }
    }

    /// The open tabs: `id`, `url`, `title`, `active`, ...
    pub async fn tabs(&self) -> Result<Vec<Value>, Error> {
        Ok(json_of(self.call("list_tabs", json!({})).await?)
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    /// Loads the plugins in `dir` (each a folder with `plugin.toml` and its
    /// component); their actions are [`Tab::act`]-able at once.
    pub async fn load_plugins(&self, dir: &std::path::Path) {
        self.app.registry.scan(dir).await;
    }

    /// The names of the actions loaded now (built-in and plugins).
    pub fn actions(&self) -> Vec<String> {
        self.app
            .engine
            .registry
            .actions()
            .into_iter()
            .map(|a| a.name)
            .collect()
    }

    /// The engine underneath, for what this API does not cover.
    pub fn engine(&self) -> &Arc<wabp_core::Engine> {
        &self.app.engine
    }

    /// Ends the browser (an attached one is only disconnected).
    pub async fn shutdown(self) {
        self.app
            .engine
            .shutdown(std::time::Duration::from_secs(5))
            .await;
    }
}

/// One tab of a [`Wabp`].
#[derive(Clone)]
pub struct Tab {
    id: String,
    ctx: Ctx,
    catalogue: Arc<wabp_api::Catalogue>,
}

impl Tab {
    /// Its id, as REST and MCP name it.
    pub fn id(&self) -> &str {
        &self.id
    }

    async fn run(&self, operation: &str, mut input: Map<String, Value>) -> Result<Output, Error> {
        input.insert("tab_id".into(), json!(self.id));
        self.catalogue
            .operation(operation)?
            .run(self.ctx.clone(), Value::Object(input))
            .await
    }

    async fn envelope(
        &self,
        operation: &str,
        input: Map<String, Value>,
    ) -> Result<Envelope, Error> {
        match self.run(operation, input).await? {
            Output::Envelope(envelope) => Ok(envelope),
            _ => Err(Error::internal(format!("{operation} answered no envelope"))),
        }
    }

    /// Navigates and waits for the page to settle.
    pub async fn navigate(&self, url: &str) -> Result<Envelope, Error> {
        let mut input = Map::new();
        input.insert("url".into(), json!(url));
        self.envelope("navigate", input).await
    }

    /// Runs action `name` (built-in or a plugin's) with its params, e.g.
    /// `act("keyboard_press", json!({"key": "Enter"}))`.
    pub async fn act(&self, name: &str, params: Value) -> Result<Envelope, Error> {
        let input = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(Error::invalid(format!(
                    "params must be an object, not {other}"
                )));
            }
        };
        self.envelope(&format!("action:{name}"), input).await
    }

    /// Clicks the target.
    pub async fn click(&self, target: Target) -> Result<Envelope, Error> {
        let mut params = Map::new();
        target.into_params(&mut params);
        self.envelope("action:click", params).await
    }

    /// Replaces the target field's value with `text`.
    pub async fn fill(&self, target: Target, text: &str) -> Result<Envelope, Error> {
        let mut params = Map::new();
        target.into_params(&mut params);
        params.insert("text".into(), json!(text));
        self.envelope("action:fill", params).await
    }

    /// Types `text` key by key, at the end of the target's value (or into
    /// the focused element without a target).
    pub async fn type_text(&self, target: Option<Target>, text: &str) -> Result<Envelope, Error> {
        let mut params = Map::new();
        if let Some(target) = target {
            target.into_params(&mut params);
        }
        params.insert("text".into(), json!(text));
        self.envelope("action:type", params).await
    }

    /// The accessibility tree as text, interactive elements marked `[e7]`.
    pub async fn snapshot(&self) -> Result<String, Error> {
        let value = json_of(self.run("snapshot", Map::new()).await?);
        Ok(value["snapshot"].as_str().unwrap_or_default().to_string())
    }

    /// The tree as JSON: `elements` (every one with a `ref_id`, `role`,
    /// `name`, `value`, `state`, `bounds`, `children`), `page_title`,
    /// `page_url`, `focused_ref`.
    pub async fn snapshot_json(&self) -> Result<Value, Error> {
        let mut input = Map::new();
        input.insert("format".into(), json!("json"));
        Ok(json_of(self.run("snapshot", input).await?))
    }

    /// browser-use's state: url, title, numbered interactive `elements`
    /// (their `index` is a [`Target::Index`]), text, scroll.
    pub async fn state(&self) -> Result<Value, Error> {
        Ok(json_of(self.run("state", Map::new()).await?))
    }

    /// The page's visible text.
    pub async fn text(&self) -> Result<String, Error> {
        let value = json_of(self.run("text", Map::new()).await?);
        Ok(value["text"].as_str().unwrap_or_default().to_string())
    }

    /// Evaluates JavaScript and answers its value.
    pub async fn evaluate(&self, script: &str) -> Result<Value, Error> {
        let mut input = Map::new();
        input.insert("script".into(), json!(script));
        Ok(json_of(self.run("execute", input).await?)["result"]["value"].clone())
    }

    /// The viewport as WebP with element markup.
    pub async fn screenshot(&self) -> Result<Vec<u8>, Error> {
        match self.run("screenshot_image", Map::new()).await? {
            Output::Bytes { bytes, .. } => Ok(bytes),
            _ => Err(Error::internal("screenshot answered no image")),
        }
    }

    /// Closes the tab.
    pub async fn close(self) -> Result<(), Error> {
        self.run("close_tab", Map::new()).await.map(|_| ())
    }
}

fn json_of(output: Output) -> Value {
    match output {
        Output::Json(value) => value,
        Output::Envelope(envelope) => serde_json::to_value(envelope).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}
