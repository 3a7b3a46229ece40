//! The engine itself: `/browser/*`, `/plugins`, `/openapi.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wabp_core::InputMode;

use base64::Engine as _;
use wabp_core::browser::{BrowserOptions, LaunchMode};
use wabp_core::engine::ImageFormat;
use wabp_core::{Error, ErrorCode};

use super::{Nothing, TabRef, json, typed};
use crate::{Catalogue, Operation, Scope};

#[derive(Deserialize, JsonSchema)]
struct PlainScreenshot {
    #[serde(flatten)]
    tab: TabRef,
    #[serde(flatten)]
    image: ImageOptions,
}

/// A plain screenshot's options (the browser tool's `screenshot`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct ImageOptions {
    /// The whole scrollable page.
    #[serde(default)]
    pub full_page: Option<bool>,
    /// png (default), jpeg or webp.
    #[serde(default)]
    pub format: Option<String>,
    /// JPEG quality, 1 to 100 (default 80).
    #[serde(default)]
    pub quality: Option<u8>,
}
use wabp_core::engine::browser_info::{BrowserInfo, WindowBounds, WindowInfo, WindowState};

/// ABP's status envelope.
#[derive(Serialize, JsonSchema)]
struct Status {
    success: bool,
    data: wabp_core::engine::BrowserStatus,
}

/// Who drives the browser.
#[derive(Serialize, JsonSchema)]
struct Mode {
    input_mode: InputMode,
}

/// How `browser_start` launches the browser (Aleph's `BrowserConfig`);
/// anything left out is as the engine was configured (not as the last
/// start asked).
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Launch {
    /// Without a window (default: as the engine was started, headless
    /// unless `--headed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    headless: Option<bool>,
    /// `auto` (find Chromium), `binary` (launch `path`) or `connect` (attach
    /// to `endpoint`, or to `http://127.0.0.1:<cdp_port>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<LaunchKind>,
    /// binary: the Chromium executable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// connect: `ws://...` or `http://host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint: Option<String>,
    /// The DevTools port: where a launched browser listens, or where
    /// `connect` finds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cdp_port: Option<u16>,
    /// A profile folder of your own (kept when the browser stops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_data_dir: Option<String>,
    /// More Chromium switches (`--disable-blink-features=AutomationControlled`
    /// and `--disable-infobars` are always added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extra_args: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LaunchKind {
    Auto,
    Binary,
    Connect,
}

impl Launch {
    /// Whether it says anything about how to launch.
    fn is_empty(&self) -> bool {
        self.headless.is_none()
            && self.mode.is_none()
            && self.path.is_none()
            && self.endpoint.is_none()
            && self.cdp_port.is_none()
            && self.user_data_dir.is_none()
            && self.extra_args.is_none()
    }

    /// The launch options: the engine's, changed as asked.
    fn options(self, base: BrowserOptions) -> wabp_core::Result<BrowserOptions> {
        let mut options = base;
        if let Some(headless) = self.headless {
            options.headed = !headless;
        }
        let kind = self.mode.unwrap_or(match (&self.path, &self.endpoint) {
            (Some(_), _) => LaunchKind::Binary,
            (None, Some(_)) => LaunchKind::Connect,
            _ => match &options.mode {
                LaunchMode::Auto => LaunchKind::Auto,
                LaunchMode::Binary(_) => LaunchKind::Binary,
                LaunchMode::Connect(_) => LaunchKind::Connect,
            },
        });
        options.mode = match kind {
            LaunchKind::Auto => LaunchMode::Auto,
            LaunchKind::Binary => match (self.path, &options.mode) {
                (Some(path), _) => LaunchMode::Binary(path.into()),
                (None, LaunchMode::Binary(path)) => LaunchMode::Binary(path.clone()),
                _ => {
                    return Err(Error::invalid(
                        "mode \"binary\" needs \"path\", the Chromium executable",
                    ));
                }
            },
            LaunchKind::Connect => match (self.endpoint, self.cdp_port, &options.mode) {
                (Some(endpoint), _, _) => LaunchMode::Connect(endpoint),
                (None, Some(port), _) => LaunchMode::Connect(format!("http://127.0.0.1:{port}")),
                (None, None, LaunchMode::Connect(endpoint)) => {
                    LaunchMode::Connect(endpoint.clone())
                }
                _ => {
                    return Err(Error::invalid(
                        "mode \"connect\" needs \"endpoint\" (ws://... or http://host:port) or \"cdp_port\"",
                    ));
                }
            },
        };
        if kind != LaunchKind::Connect {
            options.cdp_port = self.cdp_port.or(options.cdp_port);
        }
        if let Some(dir) = self.user_data_dir {
            if dir.trim().is_empty() {
                return Err(Error::invalid("\"user_data_dir\" must not be empty"));
            }
            options.user_data_dir = dir.into();
            options.owned_profile = false;
        }
        let mut args: Vec<String> = options
            .extra_args
            .into_iter()
            .chain(self.extra_args.unwrap_or_default())
            .map(|a| a.trim_start_matches('-').to_string())
            .filter(|a| !a.is_empty())
            .collect();
        // Aleph's: fewer signs of automation for sites that look.
        for flag in [
            "disable-blink-features=AutomationControlled",
            "disable-infobars",
        ] {
            if !args.iter().any(|a| a == flag) {
                args.push(flag.to_string());
            }
        }
        options.extra_args = args;
        Ok(options)
    }
}

impl PartialEq for LaunchKind {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

#[derive(Deserialize, JsonSchema)]
struct Shutdown {
    /// How long open work may take to finish, in ms (default 5000, at most 60000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    timeout_ms: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct SetWindowBounds {
    #[serde(flatten)]
    tab: TabRef,
    /// Screen x of the window's left edge.
    #[serde(default)]
    x: Option<i64>,
    /// Screen y of the window's top edge.
    #[serde(default)]
    y: Option<i64>,
    /// Width in pixels (100 to 10000); headless, the viewport follows.
    #[serde(default)]
    width: Option<i64>,
    /// Height in pixels (100 to 10000); headless, the viewport follows.
    #[serde(default)]
    height: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
struct SetWindowState {
    #[serde(flatten)]
    tab: TabRef,
    state: WindowState,
}

#[derive(Deserialize, JsonSchema)]
struct SetInputMode {
    /// `agent` (pages frozen between actions) or `human` (pages run, a person
    /// may use the window).
    input_mode: InputMode,
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(browser_operations());
    all.extend(engine_operations());
    all
}

/// The browser: status, window, start and stop.
fn browser_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "browser_status",
            "Whether the browser is up, its components, and the frame driver.",
            |ctx, _: Nothing| async move {
                json(super::to_json(&Status {
                    success: true,
                    data: ctx.engine.status(),
                })?)
            },
        )
        .get("/browser/status")
        .answers::<Status>(),
        Operation::new(
            "browser_info",
            "What the browser is: product, version, user agent, protocol version; the frame driver, site isolation, the engine's version and platform.",
            |ctx, _: Nothing| async move { json(super::to_json(&ctx.engine.browser_info().await?)?) },
        )
        .get("/browser/info")
        .tool("browser_info")
        .answers::<BrowserInfo>(),
        Operation::new(
            "window",
            "The window of a tab (default: the caller's active tab): x, y, width, height, state.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(&ctx.engine.window(&ctx.caller, &tab).await?)?)
            },
        )
        .get("/window")
        .answers::<WindowInfo>(),
        Operation::new(
            "set_window_bounds",
            "Move or resize a tab's window (default: the caller's active tab); headless, the page's viewport takes the new size.",
            |ctx, input: SetWindowBounds| async move {
                let tab = input.tab.resolve(&ctx)?;
                let bounds = WindowBounds {
                    x: input.x,
                    y: input.y,
                    width: input.width,
                    height: input.height,
                };
                json(super::to_json(
                    &ctx.engine.set_window_bounds(&ctx.caller, &tab, bounds).await?,
                )?)
            },
        )
        .post("/window/bounds")
        .answers::<WindowInfo>()
        .scope(Scope::Admin),
        Operation::new(
            "set_window_state",
            "Put a tab's window (default: the caller's active tab) in a state: normal, maximized, minimized or fullscreen.",
            |ctx, input: SetWindowState| async move {
                let tab = input.tab.resolve(&ctx)?;
                json(super::to_json(
                    &ctx.engine.set_window_state(&ctx.caller, &tab, input.state).await?,
                )?)
            },
        )
        .post("/window/state")
        .answers::<WindowInfo>()
        .scope(Scope::Admin),
        Operation::new(
            "browser_shutdown",
            "Close the browser and stop the engine.",
            |ctx, input: Shutdown| async move {
                let timeout = input.timeout_ms.unwrap_or(5000).min(60_000);
                ctx.engine
                    .shutdown(std::time::Duration::from_millis(timeout))
                    .await;
                ctx.shutdown.notify_waiters();
                typed(&Succeeded::yes())
            },
        )
        .post("/browser/shutdown")
        .answers::<Succeeded>()
        .scope(Scope::Admin),
        Operation::new(
            "browser_start",
            "Start the browser when none runs (after --no-browser or browser_stop), launched as asked: headless, mode auto/binary/connect, path, endpoint, cdp_port, user_data_dir, extra_args.",
            |ctx, launch: Launch| async move {
                if ctx.engine.browser_running() {
                    if !launch.is_empty() {
                        return Err(Error::new(
                            ErrorCode::Conflict,
                            "the browser is already running; stop it (POST /browser/stop) to start it with other settings",
                        ));
                    }
                    return typed(&BrowserStarted {
                        success: true,
                        already_running: Some(true),
                        ..BrowserStarted::default()
                    });
                }
                // Each start from the engine's own settings, changed as asked.
                let options = launch.options(ctx.engine.default_launch())?;
                ctx.engine.start_browser(Some(options)).await?;
                let status = ctx.engine.status();
                let options = ctx.engine.launch_options();
                typed(&BrowserStarted {
                    success: true,
                    already_running: None,
                    headless: Some(!options.headed),
                    mode: Some(
                        match &options.mode {
                            LaunchMode::Auto => "auto",
                            LaunchMode::Binary(_) => "binary",
                            LaunchMode::Connect(_) => "connect",
                        }
                        .to_string(),
                    ),
                    executable: status.executable,
                    frame_driver: Some(status.frame_driver),
                })
            },
        )
        .post("/browser/start")
        .answers::<BrowserStarted>()
        .scope(Scope::Admin),
        Operation::new(
            "browser_stop",
            "Stop the browser but keep the engine: its tabs close; browser_start brings one back.",
            |ctx, _: Nothing| async move {
                ctx.engine.stop_browser().await;
                typed(&Succeeded::yes())
            },
        )
        .post("/browser/stop")
        .answers::<Succeeded>()
        .scope(Scope::Admin),
    ]
}

/// The engine: plain screenshots, session data, input mode, plugins, this API.
fn engine_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "plain_screenshot",
            "A screenshot without markup (the browser tool's): png, jpeg or webp, the viewport or the whole page, base64.",
            |ctx, input: PlainScreenshot| async move {
                let tab = input.tab.resolve(&ctx)?;
                let image = input.image;
                if image.quality.is_some_and(|q| !(1..=100).contains(&q)) {
                    return Err(Error::invalid("\"quality\" must be from 1 to 100"));
                }
                let format = match image.format.as_deref().unwrap_or("png") {
                    "png" => ImageFormat::Png,
                    "jpeg" | "jpg" => ImageFormat::Jpeg(image.quality.unwrap_or(80)),
                    "webp" => ImageFormat::Webp,
                    other => {
                        return Err(Error::invalid(format!(
                            "\"format\" must be png, jpeg or webp, not {other:?}"
                        )));
                    }
                };
                let (bytes, width, height) = ctx
                    .engine
                    .plain_screenshot(&ctx.caller, &tab, image.full_page.unwrap_or(false), format)
                    .await?;
                json(json!({
                    "data_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
                    "width": width,
                    "height": height,
                    "format": format.name(),
                }))
            },
        ),
        Operation::new(
            "session_data",
            "Where this session keeps its profile, history database, screenshots and downloads.",
            |ctx, _: Nothing| async move {
                let dir = &ctx.engine.session_dir();
                typed(&SessionData {
                    success: true,
                    data: SessionPaths {
                        session_dir: dir.display().to_string(),
                        database_path: dir.join("history.db").display().to_string(),
                        screenshots_dir: dir.join("screenshots").display().to_string(),
                        screenshots_enabled: ctx.history.is_some(),
                        downloads_dir: ctx.engine.downloads_dir().display().to_string(),
                    },
                })
            },
        )
        .get("/browser/session-data")
        .answers::<SessionData>(),
        Operation::new(
            "input_mode",
            "Who drives the browser now: the agent or a human.",
            |ctx, _: Nothing| async move {
                json(super::to_json(&Mode {
                    input_mode: ctx.engine.input_mode(),
                })?)
            },
        )
        .get("/browser/input-mode")
        .answers::<Mode>(),
        Operation::new(
            "set_input_mode",
            "Hand the browser to a human (pages run freely) or back to the agent (pages frozen between actions).",
            |ctx, input: SetInputMode| async move {
                ctx.engine.set_input_mode(input.input_mode).await?;
                typed(&Mode {
                    input_mode: input.input_mode,
                })
            },
        )
        .post("/browser/input-mode")
        .answers::<Mode>()
        .scope(Scope::Admin),
        Operation::new(
            crate::approvals::LIST_OPERATION,
            "The approvals policies asked for that wait for a decision: id, operation, prompt, user.",
            |ctx, _: Nothing| async move { typed(&ctx.approvals.pending()) },
        )
        .get("/approvals")
        .answers::<crate::approvals::PendingApprovals>()
        .scope(Scope::Admin),
        Operation::new(
            crate::approvals::APPROVE_OPERATION,
            "Decide an approval a policy asked for (an APPROVAL_REQUIRED answer's approval_id): approved, the same request sent again with \"approval_id\" runs once; rejected, it answers POLICY_DENIED.",
            |ctx, input: Decide| async move { typed(&ctx.approvals.decide(&input.id, input.approve)?) },
        )
        .post("/approvals/{id}")
        .answers::<crate::approvals::Decided>()
        .scope(Scope::Admin),
        Operation::new(
            "plugins",
            "The loaded plugins, the actions, markup tags and wait types they provide, and any load errors.",
            |ctx, _: Nothing| async move {
                let registry = ctx.engine.registry();
                typed(&Plugins {
                    plugins: registry.plugins(),
                    actions: registry.actions(),
                    markup_tags: registry.markup_tags(),
                    wait_types: registry.waits(),
                })
            },
        )
        .get("/plugins")
        .answers::<Plugins>(),
        Operation::new(
            "openapi",
            "This API as an OpenAPI 3.1 document (plugin actions included).",
            |ctx, _: Nothing| async move {
                json(crate::openapi::document(&Catalogue::new(ctx.engine.registry())))
            },
        )
        .get("/openapi.json")
        .answers_schema(json!({
            "type": "object",
            "description": "An OpenAPI 3.1 document: openapi, info, paths, components",
            "required": ["openapi", "info", "paths"],
        })),
    ]
}

/// The engine did as asked.
#[derive(Serialize, JsonSchema)]
struct Succeeded {
    success: bool,
}

impl Succeeded {
    fn yes() -> Succeeded {
        Succeeded { success: true }
    }
}

/// A browser started, or the one running.
#[derive(Default, Serialize, JsonSchema)]
struct BrowserStarted {
    success: bool,
    /// A browser was running already: nothing was started.
    #[serde(skip_serializing_if = "Option::is_none")]
    already_running: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    headless: Option<bool>,
    /// `auto`, `binary` or `connect`.
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    executable: Option<String>,
    /// `deterministic`, `compositor` or `free_running`.
    #[serde(skip_serializing_if = "Option::is_none")]
    frame_driver: Option<String>,
}

/// Where this session keeps its data.
#[derive(Serialize, JsonSchema)]
struct SessionData {
    success: bool,
    data: SessionPaths,
}

#[derive(Serialize, JsonSchema)]
struct SessionPaths {
    session_dir: String,
    database_path: String,
    screenshots_dir: String,
    /// Screenshots are kept with the history.
    screenshots_enabled: bool,
    downloads_dir: String,
}

/// The loaded plugins and what they provide.
#[derive(Serialize, JsonSchema)]
struct Plugins {
    plugins: Vec<wabp_core::plugin::PluginInfo>,
    actions: Vec<wabp_core::plugin::ActionSpec>,
    markup_tags: Vec<String>,
    wait_types: Vec<wabp_core::plugin::WaitSpec>,
}

#[derive(Deserialize, JsonSchema)]
struct Decide {
    /// The approval's id, from an `APPROVAL_REQUIRED` answer.
    id: String,
    /// `true` lets the request run once; `false` refuses it.
    approve: bool,
}
