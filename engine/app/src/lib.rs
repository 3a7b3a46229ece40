#![warn(missing_docs)]
//! wabp: a browser automation engine for AI agents, as a library.
//!
//! - [`embed`] is the API for programs: [`embed::Wabp::launch`] an engine
//!   from a [`embed::BrowserConfig`] (auto, binary or connect; headless;
//!   profile; switches), open [`embed::Tab`]s, act by ref, selector, index
//!   or point and get each action's [`embed::Envelope`] (before/after
//!   screenshots, events, scroll, timing, history id), read snapshots
//!   (every element of the JSON one has a `ref_id`) and state, load plugins.
//! - [`App`] wires the whole engine (plugin host, history, REST, MCP) as
//!   `wabp serve` runs it; [`App::router`] is its HTTP surface, for serving
//!   it from a program of your own.
//!
//! ```no_run
//! use wabp::embed::{BrowserConfig, Target, Wabp};
//!
//! # async fn demo() -> anyhow::Result<()> {
//! let wabp = Wabp::launch(BrowserConfig { headless: true, ..Default::default() }).await?;
//! let tab = wabp.open_tab("https://example.com").await?;
//! tab.fill(Target::Selector("input[name=q]".into()), "wabp").await?;
//! let envelope = tab.click(Target::Point(640.0, 360.0)).await?;
//! for event in &envelope.events {
//!     println!("{event:?}");
//! }
//! let json = tab.snapshot_json().await?;
//! println!("{} top-level elements", json["elements"].as_array().map_or(0, Vec::len));
//! wabp.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! `examples/embed` is a complete program (`cargo run --example embed`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use wabp_core::browser::{BrowserOptions, LaunchMode};
use wabp_core::{Engine, EngineConfig};
use wabp_history::HistoryStore;
use wabp_plugin_host::{Registry, WatchHandle};

pub mod agent_cli;
pub mod embed;
pub mod plugin_cli;
mod recorder;

include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

/// Where the test plugins were built (for the integration tests).
pub const TEST_PLUGINS_DIR: &str = env!("WABP_TEST_PLUGINS_DIR");
/// The test plugins' sources (their `plugin.toml`s).
pub const TEST_PLUGINS_SRC: &str = env!("WABP_TEST_PLUGINS_SRC");

/// Everything `wabp serve` can be told (its flags), for [`App::start`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Find Chromium, launch an executable (`--chrome`), or attach (`--connect`).
    pub launch: LaunchMode,
    /// Show the window (`--headed`).
    pub headed: bool,
    /// Viewport size in CSS pixels (`--viewport`).
    pub viewport: (u32, u32),
    /// Folder of plugins to load and watch (created if missing).
    pub plugin_dir: Option<PathBuf>,
    /// History, screenshots, downloads and the browser profile (`--session-dir`).
    pub session_dir: PathBuf,
    /// The admin token (`--auth-token`): every scope, any user.
    pub auth_token: Option<String>,
    /// Per-user tokens (`--auth-tokens FILE`, see `wabp_api::auth`).
    pub auth_tokens_file: Option<PathBuf>,
    /// The operator's approval policy (`--policy FILE`, TOML), handed to
    /// every policy plugin (the built-in `standard-policy` applies it).
    pub policy_file: Option<PathBuf>,
    /// Folders file choosers may upload from, besides the session's
    /// `uploads/` (`--upload-dir`).
    pub upload_dirs: Vec<PathBuf>,
    /// Without upload folders or tokens, let file choosers take any file
    /// the engine can read (a loopback engine: its one user is the
    /// machine's). Ignored when tokens or upload folders are given.
    pub uploads_anywhere: bool,
    /// Keep cookie and authorization header values in saved network calls
    /// and HAR (`--record-secrets`).
    pub record_secrets: bool,
    /// Downloads past this many MB are stopped (`--max-download-mb`).
    pub max_download_mb: u64,
    /// Screenshots and saved bodies kept in history, in MB; past it the
    /// oldest sessions are deleted (`--history-max-mb`).
    pub history_max_mb: u64,
    /// Freeze pages between actions (`--no-pause` turns it off).
    pub pause: bool,
    /// Cross-site frames in renderers of their own (on by default; `--no-site-isolation` turns it off).
    pub site_isolation: bool,
    /// More Chromium switches, after the engine's own (`--chrome-arg`).
    pub chrome_args: Vec<String>,
    /// Bounds on per-user (`userId`) sessions.
    pub user_limits: wabp_core::users::UserLimits,
    /// Web origins allowed to call the engine besides its own (`--allow-origin`).
    pub allowed_origins: Vec<String>,
    /// URL schemes tabs may open besides http, https, about:blank and data:
    /// (`--allow-scheme`).
    pub extra_schemes: Vec<String>,
    /// Launch the browser with the engine (`--no-browser`: not until
    /// `POST /browser/start` or the browser tool's `start`).
    pub browser_at_start: bool,
    /// This engine's name in a fleet (`--engine-id`, default the host
    /// name): tab and other ids end in it, and a balancer routes by it.
    pub engine_id: wabp_core::ids::EngineId,
    /// On SIGTERM, how long actions in flight may take to finish before the
    /// engine closes its tabs and exits (`--drain-secs`).
    pub drain: std::time::Duration,
    /// Past this many bytes (the engine and its browser), no new tabs and
    /// not ready (`--max-memory-mb`; default 80% of the machine's memory).
    pub max_memory_bytes: u64,
    /// CDP services that give each user session a browser of its own
    /// (`--browser-endpoint`, taken in turn); the engine's own browser is
    /// dialled from the first too unless `launch` says otherwise.
    pub browser_endpoints: Vec<String>,
}

impl Options {
    /// The embedded default: headless auto-detected Chromium, built-in plugins,
    /// a fresh session dir under the system temp dir.
    pub fn default_for_session(session_dir: PathBuf) -> Self {
        Options {
            launch: LaunchMode::Auto,
            headed: false,
            viewport: (1280, 720),
            plugin_dir: None,
            session_dir,
            auth_token: None,
            auth_tokens_file: None,
            policy_file: None,
            upload_dirs: Vec::new(),
            uploads_anywhere: true,
            record_secrets: false,
            max_download_mb: 1024,
            history_max_mb: 4096,
            pause: true,
            site_isolation: true,
            chrome_args: Vec::new(),
            user_limits: Default::default(),
            allowed_origins: Vec::new(),
            extra_schemes: Vec::new(),
            browser_at_start: true,
            engine_id: wabp_core::ids::EngineId::from_host_name(),
            drain: std::time::Duration::from_secs(30),
            max_memory_bytes: wabp_core::memory::default_limit_bytes(),
            browser_endpoints: Vec::new(),
        }
    }
}

/// A wired engine: the browser, the plugins, the history and the
/// frontends (REST, MCP) over one catalogue of operations.
pub struct App {
    /// The core: browser, tabs, actions.
    pub engine: Arc<Engine>,
    /// The flight recorder (SQLite and screenshots in the session folder).
    pub history: HistoryStore,
    /// The loaded plugins (built-in and the watched folder's).
    pub registry: Arc<Registry>,
    /// Told when `POST /browser/shutdown` has shut the browser down.
    pub shutdown: Arc<tokio::sync::Notify>,
    /// The bearer tokens requests must present (none: no token needed).
    pub tokens: Arc<wabp_api::Tokens>,
    /// Web origins allowed to call the engine (`--allow-origin`).
    pub allowed_origins: Vec<String>,
    /// What operations use (engine, history, shutdown signal).
    pub services: wabp_api::Services,
    /// Every operation, for REST, MCP and the OpenAPI document.
    pub catalogue: Arc<wabp_api::Catalogue>,
    /// The MCP server (`/mcp` on the HTTP port, or stdio).
    pub mcp: wabp_mcp::WabpMcp,
    /// Ends the open MCP streams so a graceful shutdown can finish.
    mcp_shutdown: wabp_mcp::ShutdownToken,
    /// The web UI at `/ui/` (its logins and one-time key).
    pub ui: wabp_ui::Ui,
    /// Launch the browser now, or leave it to `browser_start` (`--no-browser`).
    pub browser_at_start: bool,
    /// On SIGTERM, how long operations in flight may take (`--drain-secs`).
    pub drain_bound: std::time::Duration,
    _watch: Option<WatchHandle>,
}

/// Loads every built-in plugin into a new registry.
pub async fn builtin_registry() -> anyhow::Result<Arc<Registry>> {
    let registry = Registry::new()?;
    for (name, manifest, bytes) in BUILTIN_PLUGINS {
        registry
            .load_builtin(manifest, bytes.to_vec())
            .await
            .with_context(|| format!("built-in plugin {name}"))?;
    }
    Ok(registry)
}

impl App {
    /// Loads plugins, starts watching the plugin folder and launches the
    /// browser (awaited: callers get a ready engine or an error).
    pub async fn start(options: Options) -> anyhow::Result<App> {
        let app = App::prepare(options).await?;
        match app.browser_at_start {
            true => app.engine.start().await?,
            false => app.engine.without_browser(),
        }
        Ok(app)
    }

    /// Everything but the browser launch, which the caller starts (the
    /// server answers `/browser/status` with "initializing" meanwhile).
    pub async fn prepare(options: Options) -> anyhow::Result<App> {
        let registry = builtin_registry().await?;
        let watch = match &options.plugin_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("plugin folder {}", dir.display()))?;
                registry.scan(dir).await;
                Some(wabp_plugin_host::watch(registry.clone(), dir.clone())?)
            }
            None => None,
        };
        let policy_settings = match &options.policy_file {
            Some(path) => read_policy(path)?,
            None => "{}".to_string(),
        };
        if let Some(token) = &options.auth_token {
            wabp_api::auth::check_admin_token(token).map_err(anyhow::Error::msg)?;
        }
        let mut tokens = wabp_api::Tokens::new(options.auth_token.as_deref());
        if let Some(path) = &options.auth_tokens_file {
            tokens.add_file_at(path).map_err(anyhow::Error::msg)?;
        }
        // History, screenshots, downloads and the browser profile (its
        // cookies) are the user's alone.
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::create_dir_all(&options.session_dir)
                .with_context(|| format!("session folder {}", options.session_dir.display()))?;
            std::fs::set_permissions(&options.session_dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("making {} private", options.session_dir.display()))?;
        }
        let uploads = options.session_dir.join("uploads");
        std::fs::create_dir_all(&uploads)
            .with_context(|| format!("upload folder {}", uploads.display()))?;
        // Browsers from a service: the engine's own (anonymous tabs) too,
        // unless told where else; its `{user}` is the engine's id.
        let launch = match (&options.launch, options.browser_endpoints.first()) {
            (LaunchMode::Auto, Some(endpoint)) => LaunchMode::Connect(
                wabp_core::engine::expand_endpoint(endpoint, &options.engine_id.to_string()),
            ),
            (launch, _) => launch.clone(),
        };
        let engine = Engine::new(
            EngineConfig {
                browser: BrowserOptions {
                    mode: launch,
                    headed: options.headed,
                    viewport_width: options.viewport.0,
                    viewport_height: options.viewport.1,
                    user_data_dir: options.session_dir.join("profile"),
                    site_isolation: options.site_isolation,
                    extra_args: options.chrome_args.clone(),
                    ..BrowserOptions::default()
                },
                session_dir: options.session_dir.clone(),
                engine_id: options.engine_id.clone(),
                max_memory_bytes: options.max_memory_bytes,
                browser_endpoints: options.browser_endpoints.clone(),
                pause: options.pause,
                user_limits: options.user_limits,
                extra_schemes: options.extra_schemes.clone(),
                own_addresses: Default::default(),
                uploads: wabp_core::engine::UploadRoots {
                    dirs: options.upload_dirs.clone(),
                    anywhere: options.uploads_anywhere
                        && options.upload_dirs.is_empty()
                        && !tokens.required(),
                },
                max_download_bytes: options.max_download_mb.saturating_mul(1024 * 1024),
                navigation_fence: options
                    .policy_file
                    .is_some()
                    .then(|| Arc::from(policy_settings.as_str())),
                record_secrets: options.record_secrets,
            },
            registry.clone(),
        );
        // The flight recorder: one SQLite file in the session dir; every
        // action is committed to it before its answer.
        let history = HistoryStore::open(&options.session_dir)
            .with_context(|| format!("history database in {}", options.session_dir.display()))?;
        history
            .start_session(serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "pause": options.pause,
                "headed": options.headed,
            }))
            .await
            .context("starting a history session")?;
        spawn_retention(
            Arc::downgrade(&engine),
            history.clone(),
            options.history_max_mb.saturating_mul(1024 * 1024),
        );
        engine.set_action_log(Arc::new(recorder::HistoryLog {
            store: history.clone(),
            record_secrets: options.record_secrets,
        }));
        let mut services = wabp_api::Services::new(Arc::new(engine.clone()), Some(history.clone()));
        services.policy_settings = policy_settings.into();
        let catalogue = Arc::new(wabp_api::Catalogue::new(engine.registry.clone()));
        let mcp = wabp_mcp::WabpMcp::new(services.clone(), catalogue.clone());
        let tokens = Arc::new(tokens);
        let ui = wabp_ui::Ui::new(
            services.clone(),
            catalogue.clone(),
            engine.clone(),
            tokens.clone(),
        );
        Ok(App {
            engine,
            history,
            registry,
            shutdown: services.shutdown.clone(),
            services,
            catalogue,
            tokens,
            allowed_origins: options.allowed_origins,
            ui,
            mcp,
            mcp_shutdown: wabp_mcp::ShutdownToken::new(),
            browser_at_start: options.browser_at_start,
            drain_bound: options.drain,
            _watch: watch,
        })
    }

    /// The whole HTTP surface: `/api/v1`, `/mcp` and the web UI at `/ui/`,
    /// for a loopback listener.
    pub fn router(&self) -> Router {
        self.router_for(true)
    }

    /// `/api/v1` and `/mcp` (streamable HTTP), behind the bearer token when
    /// one is set, and all of it behind the client guard (foreign `Origin`,
    /// non-loopback `Host` on a loopback listener, non-JSON bodies: see
    /// `wabp_rest::guard`); the web UI behind a guard of its own, which
    /// lets in its own pages only (`wabp_ui::guard`).
    pub fn router_for(&self, loopback: bool) -> Router {
        let guard = Arc::new(wabp_rest::ClientGuard {
            loopback,
            allowed_origins: self.allowed_origins.clone(),
        });
        let metrics = self.services.metrics.clone();
        self.unguarded_router(loopback)
            .layer(self.cors())
            .layer(axum::middleware::from_fn(move |req, next| {
                wabp_rest::client_only(guard.clone(), req, next)
            }))
            // Merged after the client guard's layer, which wraps only the
            // routes before it.
            .merge(self.ui.router(wabp_ui::UiGuard {
                loopback,
                allowed_origins: self.allowed_origins.clone(),
            }))
            .layer(axum::middleware::from_fn(move |req, next| {
                count_request(metrics.clone(), req, next)
            }))
            .layer(axum::middleware::from_fn(sandbox_outside_ui))
    }

    /// CORS for the `--allow-origin` origins (none by default: then no
    /// browser may read an answer or send a JSON body).
    fn cors(&self) -> tower_http::cors::CorsLayer {
        use axum::http::{HeaderName, HeaderValue, Method, header};
        let origins: Vec<HeaderValue> = self
            .allowed_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok())
            .collect();
        tower_http::cors::CorsLayer::new()
            .allow_origin(tower_http::cors::AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                HeaderName::from_static("mcp-session-id"),
                HeaderName::from_static("mcp-protocol-version"),
            ])
            .expose_headers([HeaderName::from_static("mcp-session-id")])
    }

    fn unguarded_router(&self, loopback: bool) -> Router {
        let allowed_hosts =
            loopback.then(|| ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec());
        let sessions =
            wabp_mcp::http_service(self.mcp.clone(), allowed_hosts.clone(), &self.mcp_shutdown);
        let json_only =
            wabp_mcp::json_http_service(self.mcp.clone(), allowed_hosts, &self.mcp_shutdown);
        // A client that reads event streams gets a session (and hears when
        // plugins change the tools); one that accepts only JSON is answered
        // statelessly with plain JSON.
        let mcp = tower::service_fn(move |request: axum::extract::Request| {
            let (sessions, json_only) = (sessions.clone(), json_only.clone());
            async move {
                use tower::ServiceExt as _;
                if reads_event_streams(&request) {
                    sessions.oneshot(request).await
                } else {
                    // The transport insists on being offered both; the
                    // stateless one answers a plain call with JSON anyway.
                    let mut request = request;
                    request.headers_mut().insert(
                        axum::http::header::ACCEPT,
                        axum::http::HeaderValue::from_static("application/json, text/event-stream"),
                    );
                    json_only.oneshot(request).await
                }
            }
        });
        // The caller of each MCP request comes from `/mcp?userId=`, resolved
        // by the same layer as REST's.
        let mcp = Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                wabp_rest::Callers {
                    engine: Arc::new(self.engine.clone()),
                    tokens: self.tokens.clone(),
                },
                wabp_rest::resolve_caller,
            ))
            .layer(axum::middleware::from_fn(session_end_is_no_content))
            .layer(axum::middleware::from_fn(single_answer_as_json));
        self.api_router().merge(mcp).merge(self.health_router())
    }

    /// `GET /healthz` (the process answers) and `GET /readyz` (it takes new
    /// sessions: browser up, not draining), at the root for probes and
    /// balancers, without a token; `GET /metrics` (admin token when tokens
    /// are on).
    fn health_router(&self) -> Router {
        use axum::http::{HeaderValue, StatusCode, header};
        use axum::response::IntoResponse;
        let engine = self.engine.clone();
        let scrape = (
            self.engine.clone(),
            self.registry.clone(),
            self.services.metrics.clone(),
            self.tokens.clone(),
        );
        Router::new()
            .route(
                "/metrics",
                axum::routing::get(move |headers: axum::http::HeaderMap| {
                    let (engine, registry, metrics, tokens) = scrape.clone();
                    async move { scrape_metrics(&engine, &*registry, &metrics, &tokens, &headers) }
                }),
            )
            .route(
                "/healthz",
                axum::routing::get(|| async { axum::Json(serde_json::json!({ "alive": true })) }),
            )
            .route(
                "/readyz",
                axum::routing::get(move || {
                    let readiness = engine.readiness();
                    async move {
                        let mut response = axum::Json(&readiness).into_response();
                        if !readiness.ready {
                            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                            response.headers_mut().insert(
                                header::RETRY_AFTER,
                                HeaderValue::from_static(wabp_rest::RETRY_AFTER_SECS),
                            );
                        }
                        response
                    }
                }),
            )
    }

    fn api_router(&self) -> Router {
        let state = wabp_rest::AppState {
            services: self.services.clone(),
            catalogue: self.catalogue.clone(),
            tokens: self.tokens.clone(),
        };
        Router::new().nest("/api/v1", wabp_rest::router(state))
    }

    /// Serves MCP on stdin/stdout (`wabp mcp`): the browser is started first,
    /// the engine shut down when the client closes stdin.
    pub async fn serve_stdio(self, caller: wabp_core::Caller) -> anyhow::Result<()> {
        match self.browser_at_start {
            true => self.engine.start().await?,
            false => self.engine.without_browser(),
        }
        let served = wabp_mcp::serve_stdio(self.mcp.new_session().for_caller(caller)).await;
        self.engine
            .shutdown(std::time::Duration::from_secs(5))
            .await;
        served
    }

    /// Serves until `POST /browser/shutdown` or ctrl-c.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> anyhow::Result<()> {
        let loopback = listener
            .local_addr()
            .map(|a| a.ip().is_loopback())
            .unwrap_or(true);
        if !loopback && !self.tokens.required() {
            anyhow::bail!(
                "refusing to serve off loopback without a token: anyone who can reach it would control the browser"
            );
        }
        if let Ok(address) = listener.local_addr() {
            self.engine.serving_at(address);
        }
        let router = self.router_for(loopback);
        let mcp_shutdown = self.mcp_shutdown.clone();
        let ui = self.ui.clone();
        let shutdown = self.shutdown.clone();
        let engine = self.engine.clone();
        let draining = self.engine.clone();
        let drain_bound = self.drain_bound;
        let history = self.history.clone();
        // An answer goes out at once, not after the client's acknowledgement
        // of the one before.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY: {e}");
            }
        });
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let mut terminate =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let signalled = tokio::select! {
                _ = shutdown.notified() => false,
                _ = tokio::signal::ctrl_c() => true,
                _ = next_signal(&mut terminate) => true,
            };
            if signalled {
                drain(&draining, drain_bound, terminate).await;
            }
            // Open MCP and UI streams would hold the graceful shutdown forever.
            mcp_shutdown.cancel();
            ui.close_streams();
        })
        .await?;
        engine.shutdown(std::time::Duration::from_secs(5)).await;
        // Everything recorded reaches the database before the process ends.
        if let Some(session) = history.current_session_id()
            && let Err(e) = history.end_session(&session).await
        {
            tracing::warn!("ending the history session: {e}");
        }
        if let Err(e) = history.close().await {
            tracing::warn!("closing history: {e}");
        }
        Ok(())
    }
}

/// Every answer outside the web UI's pages (the API's JSON, refusals,
/// images, the probes) is sandboxed when a browser opens it as a page: a
/// tab that sent itself to the engine has an opaque origin there, never the
/// engine's (which is the web UI's).
async fn sandbox_outside_ui(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let ui = request.uri().path() == "/ui" || request.uri().path().starts_with("/ui/");
    let mut response = next.run(request).await;
    if !ui {
        response.headers_mut().insert(
            axum::http::header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(wabp_ui::guard::SANDBOXED),
        );
    }
    response
}

/// Counts a request by method, route template and status.
async fn count_request(
    metrics: Arc<wabp_api::metrics::Metrics>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let response = next.run(request).await;
    metrics.http_request(&method, &route, response.status().as_u16());
    response
}

/// `GET /metrics`: the Prometheus text, for the admin token when tokens are on.
fn scrape_metrics(
    engine: &Engine,
    registry: &dyn wabp_core::plugin::PluginRegistry,
    metrics: &wabp_api::metrics::Metrics,
    tokens: &wabp_api::Tokens,
    headers: &axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let admin = tokens.authenticate(bearer).and_then(|grant| {
        let caller = grant.caller(None)?;
        caller.may(wabp_core::caller::Scope::Admin, "metrics")?;
        match caller.user_id() {
            None => Ok(()),
            Some(_) => Err(wabp_core::Error::new(
                wabp_core::ErrorCode::Forbidden,
                "metrics are engine-wide: they need the admin token",
            )),
        }
    });
    if let Err(e) = admin {
        return wabp_rest::ApiError(e).into_response();
    }
    let readiness = engine.readiness();
    let now = wabp_api::metrics::Gauges {
        tabs: readiness.tabs as i64,
        users: engine.user_count() as i64,
        session_browsers: readiness.session_browsers as i64,
        in_flight: readiness.in_flight as i64,
        ready: readiness.ready,
        draining: engine.drain().is_draining(),
        browser_restarts: i64::from(engine.status().restarts),
        tab_repairs: engine.tab_repairs() as i64,
        memory_bytes: engine.memory().0 as i64,
        memory_limit_bytes: engine.memory().1.min(i64::MAX as u64) as i64,
        plugins: registry
            .plugins()
            .into_iter()
            .filter_map(|p| {
                let i = p.instances?;
                Some((
                    p.name,
                    i.created as i64,
                    i.reused as i64,
                    i.discarded as i64,
                ))
            })
            .collect(),
    };
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.render(&now),
    )
        .into_response()
}

/// The next SIGTERM (never, when it can't be watched).
async fn next_signal(terminate: &mut Option<tokio::signal::unix::Signal>) {
    match terminate.as_mut() {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// The first SIGTERM (or ctrl-c): not ready and no new sessions from now
/// on; operations in flight get up to `bound` to finish. A second signal
/// ends the process at once.
async fn drain(
    engine: &Engine,
    bound: std::time::Duration,
    mut terminate: Option<tokio::signal::unix::Signal>,
) {
    engine.drain().start();
    tracing::info!(
        in_flight = engine.drain().in_flight(),
        "draining: no new sessions; operations in flight have up to {} s",
        bound.as_secs()
    );
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = next_signal(&mut terminate) => {}
        }
        tracing::warn!("a second signal while draining: exiting at once");
        std::process::exit(1);
    });
    let started = std::time::Instant::now();
    let settled = engine.drain().settled(bound).await;
    tracing::info!(
        settled,
        in_flight = engine.drain().in_flight(),
        "drained in {} ms; closing the tabs",
        started.elapsed().as_millis()
    );
}

/// A policy file (TOML) as the JSON policy plugins read.
fn read_policy(path: &std::path::Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("policy file {}", path.display()))?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
    // A typo must not quietly allow what it meant to deny.
    check_policy(&table).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(serde_json::to_string(&table)?)
}

/// The `standard-policy` file format, checked key by key.
fn check_policy(table: &toml::Table) -> Result<(), String> {
    const CATEGORIES: [&str; 6] = [
        "navigation",
        "mutation",
        "input",
        "script",
        "read",
        "lifecycle",
    ];
    let strings = |key: &str, value: &toml::Value| -> Result<Vec<String>, String> {
        value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| format!("{key} is a list of strings"))
    };
    for (key, value) in table {
        match key.as_str() {
            "read_only_users" => {
                strings(key, value)?;
            }
            "script" => {
                value.as_bool().ok_or("script is true or false")?;
            }
            "ask" => {
                for category in strings(key, value)? {
                    if !CATEGORIES.contains(&category.as_str()) {
                        return Err(format!(
                            "ask: unknown category {category:?} (one of {})",
                            CATEGORIES.join(", ")
                        ));
                    }
                }
            }
            "navigation" | "curl" => {
                let lists = value
                    .as_table()
                    .ok_or_else(|| format!("[{key}] is a table"))?;
                for (list, value) in lists {
                    if !["allow", "deny", "ask"].contains(&list.as_str()) {
                        return Err(format!("[{key}]: unknown key {list:?} (allow, deny, ask)"));
                    }
                    strings(&format!("{key}.{list}"), value)?;
                }
            }
            // Any other table belongs to a policy plugin (`[checkout_guard]`),
            // unless its name is a typo of a standard key.
            other if value.is_table() && !near_standard(other) => {
                tracing::info!("policy file: [{other}] is left to policy plugins");
            }
            other => {
                return Err(format!(
                    "unknown key {other:?} (read_only_users, script, ask, [navigation], [curl], or a table of a policy plugin's own)"
                ));
            }
        }
    }
    Ok(())
}

/// Within two edits of a standard policy key.
fn near_standard(key: &str) -> bool {
    ["read_only_users", "script", "ask", "navigation", "curl"]
        .iter()
        .any(|standard| strsim::levenshtein(key, standard) <= 2)
}

/// Keeps history under `max_bytes`: at start, then every minute, while the
/// engine lives; the oldest sessions go first, never the current one.
fn spawn_retention(engine: std::sync::Weak<Engine>, history: HistoryStore, max_bytes: u64) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            every.tick().await;
            if engine.upgrade().is_none() {
                return;
            }
            match history.prune_to(max_bytes).await {
                Ok(pruned) if !pruned.sessions.is_empty() => tracing::info!(
                    sessions = pruned.sessions.len(),
                    bytes_left = pruned.bytes_left,
                    "history over its limit: the oldest sessions were deleted"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("pruning history failed: {e}"),
            }
        }
    });
}

/// A `DELETE /mcp` that ends a session answers 204 instead of the transport's
/// 202: nothing is left pending, and clients such as the Python SDK expect
/// 200 or 204 there (they log a warning otherwise).
async fn session_end_is_no_content(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    response
}

/// Largest MCP event collected to be sent as plain JSON.
const MCP_ANSWER_LIMIT: usize = 64 << 20;

/// A session's answer to a POST comes as an event stream; when its first
/// message is the JSON-RPC answer and the client accepts JSON, that answer
/// goes out as `application/json` as soon as it comes, as ABP's server
/// answers (a `curl | jq` reads it). A stream that starts with anything else
/// (progress, a request to the client) goes out as a stream.
async fn single_answer_as_json(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use futures::StreamExt as _;
    let wants_json =
        request.method() == axum::http::Method::POST && accepts(&request, "application/json");
    let response = next.run(request).await;
    let is_stream = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !wants_json || !is_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut seen: Vec<u8> = Vec::new();
    let mut scanned = 0;
    loop {
        // Whole events so far: the first with data decides.
        while let Some(end) = find_event_end(&seen[scanned..]) {
            let event = &seen[scanned..scanned + end];
            scanned += end;
            match event_data(event) {
                None => continue,
                Some(data) if is_answer(&data) => {
                    parts.headers.insert(
                        axum::http::header::CONTENT_TYPE,
                        axum::http::HeaderValue::from_static("application/json"),
                    );
                    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
                    parts.headers.remove(axum::http::header::CACHE_CONTROL);
                    return axum::response::Response::from_parts(
                        parts,
                        axum::body::Body::from(data),
                    );
                }
                Some(_) => {
                    let head = futures::stream::once(async move {
                        Ok::<_, axum::Error>(axum::body::Bytes::from(seen))
                    });
                    return axum::response::Response::from_parts(
                        parts,
                        axum::body::Body::from_stream(head.chain(stream)),
                    );
                }
            }
        }
        match stream.next().await {
            Some(Ok(chunk)) if seen.len() + chunk.len() <= MCP_ANSWER_LIMIT => {
                seen.extend_from_slice(&chunk);
            }
            // Too large, broken or ended early: what came, as it came.
            other => {
                let rest: Vec<Result<axum::body::Bytes, axum::Error>> = match other {
                    Some(item) => vec![item],
                    None => Vec::new(),
                };
                let head = futures::stream::once(async move {
                    Ok::<_, axum::Error>(axum::body::Bytes::from(seen))
                });
                return axum::response::Response::from_parts(
                    parts,
                    axum::body::Body::from_stream(
                        head.chain(futures::stream::iter(rest)).chain(stream),
                    ),
                );
            }
        }
    }
}

/// Where the first whole event of an event stream ends (after its blank
/// line), if one has come.
fn find_event_end(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len()).find_map(|i| {
        if bytes[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else if bytes[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else {
            None
        }
    })
}

/// An event's data lines joined (none: an event without data, like a
/// priming event or a keep-alive comment).
fn event_data(event: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(event).ok()?;
    let data: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.strip_prefix(' ').unwrap_or(data))
        .collect();
    let data = data.join("\n");
    (!data.trim().is_empty()).then_some(data)
}

/// Whether a message is a JSON-RPC answer (an id and a result or error).
fn is_answer(data: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(data).is_ok_and(|m| {
        m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_and_answers_recognised() {
        let stream = b"id: 0\nretry: 3000\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let first = find_event_end(stream).unwrap();
        assert_eq!(event_data(&stream[..first]), None, "a priming event");
        let second = find_event_end(&stream[first..]).unwrap();
        let data = event_data(&stream[first..first + second]).unwrap();
        assert_eq!(data, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        assert!(is_answer(&data));
        assert!(!is_answer(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}"
        ));
        assert_eq!(find_event_end(b"data: {\"partial\""), None);
    }

    #[test]
    fn the_example_policy_file_reads_as_json() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/policy.toml");
        let json: serde_json::Value = serde_json::from_str(&read_policy(&path).unwrap()).unwrap();
        assert_eq!(json["ask"], serde_json::json!(["script"]));
        assert_eq!(
            json["navigation"]["deny"],
            serde_json::json!(["ads.example.com"])
        );
        let bad = std::env::temp_dir().join(format!("wabp-bad-policy-{}.toml", std::process::id()));
        for (text, says) in [
            ("ask = [", "wabp-bad-policy"),
            ("script = \"nope\"", "script is true or false"),
            ("[navigation]\nalow = [\"a\"]", "unknown key \"alow\""),
            ("ask = [\"scrpt\"]", "unknown category \"scrpt\""),
            (
                "read_only_users = \"auditor\"",
                "read_only_users is a list of strings",
            ),
            ("deny = [\"x\"]", "unknown key \"deny\""),
            ("[navigaton]\nallow = [\"a\"]", "unknown key \"navigaton\""),
            ("[crl]\nallow = [\"a\"]", "unknown key \"crl\""),
        ] {
            std::fs::write(&bad, text).unwrap();
            let err = read_policy(&bad).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
        // A policy plugin's own table is handed on as it is.
        std::fs::write(
            &bad,
            "[checkout_guard]\nallowed_hosts = [\"shop.example\"]\n",
        )
        .unwrap();
        let json: serde_json::Value = serde_json::from_str(&read_policy(&bad).unwrap()).unwrap();
        assert_eq!(
            json["checkout_guard"]["allowed_hosts"],
            serde_json::json!(["shop.example"])
        );
        let _ = std::fs::remove_file(bad);
    }
}

/// Whether an MCP request belongs to a session or comes from a client that
/// accepts `text/event-stream` (what a session's answers may be).
fn reads_event_streams(request: &axum::extract::Request) -> bool {
    request.headers().contains_key("mcp-session-id")
        || request.method() == axum::http::Method::GET
        || accepts(request, "text/event-stream")
}

/// Whether the request's `Accept` names `mime`.
fn accepts(request: &axum::extract::Request, mime: &str) -> bool {
    request
        .headers()
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains(mime))
}
