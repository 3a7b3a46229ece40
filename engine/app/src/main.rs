//! `wabp`: a browser automation engine for AI agents.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use wabp::{App, Options};
use wabp_core::browser::LaunchMode;

#[derive(Parser)]
#[command(
    name = "wabp",
    version,
    about = "Browser automation engine for AI agents (ABP REST API)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct ViewArgs {
    /// The export (JSON).
    file: std::path::PathBuf,
    /// The port on 127.0.0.1 (default: any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine: REST API at http://HOST:PORT/api/v1.
    Serve(ServeArgs),
    /// Run the engine as an MCP server on stdin/stdout (same options as
    /// serve; --host, --port and --auth-token are not used).
    Mcp(McpArgs),
    /// Scaffold, build and install plugins.
    #[command(subcommand)]
    Plugin(wabp::plugin_cli::PluginCommand),
    /// Run an agent task to its end: an LLM reads the page and acts until
    /// it is done (a live progress line on stderr, the result on stdout;
    /// exit status 0 when the task succeeded). Same engine options as serve.
    Run(RunArgs),
    /// Show an exported session (the timeline's download, or
    /// GET /history/sessions/{id}/export?screenshots=true) in the web UI,
    /// without a browser: prints the URL to open.
    View(ViewArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// What to do, in natural language.
    task: String,
    /// The LLM provider: openai (any OpenAI-compatible server), anthropic, google.
    #[arg(long, default_value = "openai", value_parser = ["openai", "anthropic", "google"])]
    provider: String,
    /// Model name (default: the provider's usual one).
    #[arg(long)]
    model: Option<String>,
    /// The provider's base URL as its SDK takes it (OpenAI: ending in /v1,
    /// e.g. http://127.0.0.1:11434/v1 for Ollama; Anthropic, Google: the host root).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The provider's API key (default: OPENAI_API_KEY, ANTHROPIC_API_KEY,
    /// GEMINI_API_KEY or GOOGLE_API_KEY).
    #[arg(long, env = "WABP_AGENT_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Steps at most.
    #[arg(long, default_value_t = 25)]
    max_steps: u32,
    /// Open this page before the first step.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(clap::Args)]
struct McpArgs {
    #[command(flatten)]
    serve: ServeArgs,
    /// Act as this userId: the session's tabs open in that user's browser
    /// context and it sees only that user's tabs and records.
    #[arg(long, value_name = "ID", env = "WABP_USER_ID")]
    user_id: Option<String>,
}

fn parse_engine_id(value: &str) -> Result<wabp_core::ids::EngineId, String> {
    wabp_core::ids::EngineId::new(value)
}

#[derive(clap::Args)]
struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1", env = "WABP_HOST")]
    host: String,
    #[arg(long, default_value_t = 8222, env = "WABP_PORT")]
    port: u16,
    /// This engine's name in a fleet: tab, download and other ids end in
    /// it, so a load balancer can route by it (default: the host name).
    #[arg(long, value_name = "ID", env = "WABP_ENGINE_ID", value_parser = parse_engine_id)]
    engine_id: Option<wabp_core::ids::EngineId>,
    /// On SIGTERM: stop taking new sessions, let actions in flight finish
    /// for up to this many seconds, close the tabs, flush history, exit 0.
    /// A second SIGTERM exits at once.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        env = "WABP_DRAIN_SECS"
    )]
    drain_secs: u64,
    /// Past this many MB (the engine and its browser together), new tabs
    /// answer 503 ENGINE_FULL and /readyz says not ready. Default: 80% of
    /// the machine's (or the container's) memory.
    #[arg(long, value_name = "MB", env = "WABP_MAX_MEMORY_MB")]
    max_memory_mb: Option<u64>,
    /// Launch this Chromium executable instead of finding one.
    #[arg(long, value_name = "PATH", conflicts_with = "connect")]
    chrome: Option<PathBuf>,
    /// Attach to a running browser: ws://... or http://host:port.
    #[arg(long, value_name = "URL")]
    connect: Option<String>,
    /// A CDP service that starts a browser per connection (browserless'
    /// ws://host:3000/chromium?token=T): each user session gets a browser
    /// of its own from it. Repeat (or comma-separate) for several, taken in
    /// turn; `{user}` and `{session}` in the URL are filled in. The
    /// engine's own browser comes from the first unless --connect or
    /// --chrome says otherwise.
    #[arg(
        long,
        value_name = "URL",
        env = "WABP_BROWSER_ENDPOINT",
        value_delimiter = ','
    )]
    browser_endpoint: Vec<String>,
    /// Show the browser window (needs full Chromium and a display).
    #[arg(long)]
    headed: bool,
    /// Plugin folder, watched for changes.
    #[arg(
        long,
        value_name = "DIR",
        env = "WABP_PLUGINS",
        default_value = "./wabp-plugins"
    )]
    plugins: PathBuf,
    /// Session directory (history, downloads, browser profile). Default: a new one under the temp dir.
    #[arg(long, value_name = "DIR", env = "WABP_SESSION_DIR")]
    session_dir: Option<PathBuf>,
    /// Require `Authorization: Bearer TOKEN` on every request.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "WABP_AUTH_TOKEN",
        hide_env_values = true
    )]
    auth_token: Option<String>,
    /// Per-user tokens and their scopes (TOML, `[[token]]` tables: token or
    /// sha256, user, scopes); see the README.
    #[arg(long, value_name = "FILE", env = "WABP_AUTH_TOKENS")]
    auth_tokens: Option<PathBuf>,
    /// A folder file choosers may upload from (besides the session's
    /// `uploads/`); repeat for more. Without it, on loopback and without
    /// tokens, any file the engine can read.
    #[arg(long = "upload-dir", value_name = "DIR")]
    upload_dir: Vec<PathBuf>,
    /// Keep cookie and authorization header values in saved network calls
    /// and HAR exports (redacted by default).
    #[arg(long)]
    record_secrets: bool,
    /// Downloads past this many MB are stopped and marked failed.
    #[arg(
        long,
        value_name = "MB",
        default_value_t = 1024,
        env = "WABP_MAX_DOWNLOAD_MB"
    )]
    max_download_mb: u64,
    /// Most screenshot and saved-body MB history keeps; past it the oldest
    /// sessions are deleted (never the current one).
    #[arg(
        long,
        value_name = "MB",
        default_value_t = 4096,
        env = "WABP_HISTORY_MAX_MB"
    )]
    history_max_mb: u64,
    /// An approval policy (TOML): allowed, denied and asked domains, script
    /// on/off, read-only users, categories to ask about; see the README.
    #[arg(long, value_name = "FILE", env = "WABP_POLICY")]
    policy: Option<PathBuf>,
    /// Let pages run between actions instead of freezing them.
    #[arg(long)]
    no_pause: bool,
    /// Start without a browser: POST /api/v1/browser/start (or the browser
    /// tool's start) launches one.
    #[arg(long)]
    no_browser: bool,
    /// Keep cross-site frames in their page's renderer (no site isolation):
    /// on headless-shell this brings back the deterministic (begin-frame)
    /// driver, which Chromium does not allow with site isolation.
    #[arg(long)]
    no_site_isolation: bool,
    /// One more Chromium switch (repeatable), e.g. `--chrome-arg=--lang=de`;
    /// it comes after the engine's own, so it wins where they clash.
    #[arg(long = "chrome-arg", value_name = "SWITCH", allow_hyphen_values = true)]
    chrome_arg: Vec<String>,
    /// Viewport size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x720", value_parser = parse_viewport)]
    viewport: (u32, u32),
    /// Most per-user (`userId`) sessions at once; the longest-idle one is closed to make room.
    #[arg(long, default_value_t = 20, env = "WABP_MAX_SESSIONS")]
    max_sessions: usize,
    /// Most tabs one user may have open.
    #[arg(long, default_value_t = 10, env = "WABP_MAX_TABS_PER_SESSION")]
    max_tabs_per_session: usize,
    /// Seconds without a request after which a user's session is closed.
    #[arg(long, default_value_t = 1800, env = "WABP_SESSION_IDLE_SECS")]
    session_idle_secs: u64,
    /// A web origin (scheme://host[:port]) allowed to call the engine, e.g. a
    /// dashboard; repeat for more. Without it no web page can.
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    allow_origin: Vec<String>,
    /// A URL scheme tabs may open besides http, https, data: and about:blank
    /// (e.g. file); repeat for more.
    #[arg(long = "allow-scheme", value_name = "SCHEME", value_parser = parse_scheme)]
    allow_scheme: Vec<String>,
}

fn parse_origin(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("http://")
        .or_else(|| s.strip_prefix("https://"))
        .ok_or("an origin starts with http:// or https://")?;
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return Err("an origin is scheme://host[:port], without a path".into());
    }
    Ok(s.trim_end_matches('/').to_string())
}

fn parse_scheme(s: &str) -> Result<String, String> {
    let s = s.trim_end_matches(':').to_ascii_lowercase();
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err("a scheme is letters, digits, + - . (e.g. file)".into());
    }
    Ok(s)
}

fn parse_viewport(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or("expected WIDTHxHEIGHT, e.g. 1280x720")?;
    let w: u32 = w.parse().map_err(|_| "width must be a number")?;
    let h: u32 = h.parse().map_err(|_| "height must be a number")?;
    if !(200..=4000).contains(&w) || !(200..=4000).contains(&h) {
        return Err("width and height must be from 200 to 4000".into());
    }
    Ok((w, h))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,chromiumoxide=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(args) => serve(args, None).await,
        Command::Mcp(args) => {
            let caller = wabp_core::Caller::from_user_id(args.user_id.as_deref())
                .map_err(|e| anyhow::anyhow!("--user-id: {}", e.message))?;
            serve(args.serve, Some(caller)).await
        }
        Command::Plugin(command) => wabp::plugin_cli::run(command).await,
        Command::View(args) => view(args).await,
        Command::Run(args) => {
            let (options, _) = engine_options(args.serve)?;
            let task = wabp::agent_cli::RunTask {
                task: args.task,
                provider: args.provider,
                model: args.model,
                base_url: args.base_url,
                api_key: args.api_key,
                max_steps: args.max_steps,
                url: args.url,
            };
            let succeeded = wabp::agent_cli::run(options, task).await?;
            std::process::exit(if succeeded { 0 } else { 1 });
        }
    }
}

/// The engine's options from the command line, and whether it listens on
/// loopback.
fn engine_options(args: ServeArgs) -> anyhow::Result<(Options, bool)> {
    let session_dir = match args.session_dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!(
            "wabp-session-{}-{}",
            std::process::id(),
            chrono_stamp()
        )),
    };
    for endpoint in &args.browser_endpoint {
        let scheme = endpoint.split_once("://").map(|(scheme, _)| scheme);
        anyhow::ensure!(
            matches!(scheme, Some("ws" | "wss" | "http" | "https")),
            "--browser-endpoint {}: not a ws://, wss://, http:// or https:// URL",
            wabp_core::remote::shown(endpoint)
        );
    }
    let launch = match (args.connect, args.chrome) {
        (Some(url), _) => LaunchMode::Connect(url),
        (None, Some(path)) => LaunchMode::Binary(path),
        (None, None) => LaunchMode::Auto,
    };
    let loopback = args.host == "localhost"
        || args
            .host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let options = Options {
        launch,
        headed: args.headed,
        viewport: args.viewport,
        plugin_dir: Some(args.plugins),
        session_dir,
        auth_token: args.auth_token,
        auth_tokens_file: args.auth_tokens,
        policy_file: args.policy,
        upload_dirs: args.upload_dir,
        uploads_anywhere: loopback,
        record_secrets: args.record_secrets,
        max_download_mb: args.max_download_mb,
        history_max_mb: args.history_max_mb,
        pause: !args.no_pause,
        site_isolation: !args.no_site_isolation,
        chrome_args: args.chrome_arg,
        user_limits: wabp_core::users::UserLimits {
            max_sessions: args.max_sessions.max(1),
            max_tabs_per_session: args.max_tabs_per_session.max(1),
            idle_ttl: std::time::Duration::from_secs(args.session_idle_secs.max(1)),
        },
        allowed_origins: args.allow_origin,
        extra_schemes: args.allow_scheme,
        browser_at_start: !args.no_browser,
        engine_id: args
            .engine_id
            .unwrap_or_else(wabp_core::ids::EngineId::from_host_name),
        drain: std::time::Duration::from_secs(args.drain_secs),
        browser_endpoints: args.browser_endpoint,
        max_memory_bytes: args
            .max_memory_mb
            .map_or_else(wabp_core::memory::default_limit_bytes, |mb| {
                mb.saturating_mul(1024 * 1024)
            }),
    };
    Ok((options, loopback))
}

/// Serves HTTP, or MCP on stdio for `stdio_caller`.
async fn serve(args: ServeArgs, stdio_caller: Option<wabp_core::Caller>) -> anyhow::Result<()> {
    let stdio = stdio_caller.is_some();
    let (host, port) = (args.host.clone(), args.port);
    let has_token = args.auth_token.is_some() || args.auth_tokens.is_some();
    let (options, loopback) = engine_options(args)?;
    let session_dir = options.session_dir.clone();
    // Off loopback, anyone who can reach the port would control the browser.
    if !stdio && !loopback && !has_token {
        anyhow::bail!(
            "refusing to listen on {host} without a token: anyone who can reach it would control the browser. \
             Give --auth-token (or --auth-tokens FILE), or listen on 127.0.0.1"
        );
    }
    let listener = tokio::net::TcpListener::bind((host.as_str(), port));
    let listener = match stdio {
        true => None,
        false => Some(
            listener
                .await
                .with_context(|| format!("could not listen on {host}:{port}"))?,
        ),
    };
    let app = App::prepare(options).await?;
    let Some(listener) = listener else {
        // stdout carries the protocol: logs go to stderr.
        tracing::info!(
            "wabp serving MCP on stdio (session {})",
            session_dir.display()
        );
        return app.serve_stdio(stdio_caller.unwrap_or_default()).await;
    };
    let engine = app.engine.clone();
    match app.browser_at_start {
        true => {
            tokio::spawn(async move {
                if let Err(e) = engine.start().await {
                    tracing::error!("browser failed to start: {e}");
                }
            });
        }
        false => engine.without_browser(),
    }
    tracing::info!(
        "wabp serving http://{}/api/v1 (session {})",
        listener.local_addr()?,
        session_dir.display()
    );
    let address = listener.local_addr()?;
    let shown = match address.ip().is_unspecified() {
        true => std::net::SocketAddr::from(([127, 0, 0, 1], address.port())),
        false => address,
    };
    // The key is what lets a person in when there are no tokens: it goes to
    // the console that started the engine, like a notebook server's link.
    match app.ui.needs_token() {
        true => eprintln!("web UI: http://{shown}/ui/ (sign in with a token)"),
        false => eprintln!("web UI: http://{shown}/ui/login?key={}", app.ui.key()),
    }
    app.serve(listener).await
}

/// `wabp view FILE`: the export's timeline on 127.0.0.1 until ctrl-c.
async fn view(args: ViewArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let export = wabp_ui::offline::Export::parse(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let (actions, with_screenshots) = export.counts();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("could not listen on 127.0.0.1:{}", args.port))?;
    let (router, key) = wabp_ui::offline::router(
        export,
        wabp_ui::UiGuard {
            loopback: true,
            allowed_origins: Vec::new(),
        },
    );
    eprintln!(
        "{}: {actions} actions, {with_screenshots} with screenshots",
        args.file.display()
    );
    // The key is the way in, as with `serve`: it goes to this console only.
    println!("http://{}/ui/login?key={key}", listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

fn chrono_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
