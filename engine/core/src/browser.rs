//! Finding, launching or attaching to Chromium, and keeping its CDP handler
//! polled.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::handler::viewport::Viewport;
use futures::StreamExt;
use tokio::task::JoinHandle;

use crate::error::{Error, ErrorCode, Result};

/// How the engine gets a browser.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchMode {
    /// Find `chromium-headless-shell`, `chromium` or `google-chrome`.
    Auto,
    /// Launch this executable.
    Binary(PathBuf),
    /// Attach to a running browser: `ws://...` or `http://host:port`.
    Connect(String),
}

#[derive(Debug, Clone)]
pub struct BrowserOptions {
    pub mode: LaunchMode,
    pub headed: bool,
    pub viewport_width: u32,
    pub viewport_height: u32,
    /// Fresh per engine; removed on shutdown when the engine created it.
    pub user_data_dir: PathBuf,
    /// Bound on every CDP command.
    pub request_timeout: Duration,
    pub extra_args: Vec<String>,
    /// Ask for begin-frame control (the deterministic frame driver). Granted
    /// only when the engine launches `chromium-headless-shell` itself.
    pub begin_frame_control: bool,
    /// Cross-site frames in renderers of their own (on by default),
    /// reached through their own targets (`tab/frame_targets.rs`). Off:
    /// one renderer per page, reached through the page's session.
    pub site_isolation: bool,
    /// The DevTools port of a launched browser (default: one of its own
    /// choosing), for other tools to attach to.
    pub cdp_port: Option<u16>,
    /// The engine made `user_data_dir` and removes it when the browser
    /// ends; a profile someone named is kept.
    pub owned_profile: bool,
}

impl Default for BrowserOptions {
    fn default() -> Self {
        BrowserOptions {
            mode: LaunchMode::Auto,
            headed: false,
            viewport_width: 1280,
            viewport_height: 720,
            user_data_dir: std::env::temp_dir()
                .join(format!("wabp-profile-{}", std::process::id())),
            request_timeout: Duration::from_secs(10),
            extra_args: Vec::new(),
            begin_frame_control: true,
            site_isolation: true,
            cdp_port: None,
            owned_profile: true,
        }
    }
}

/// Executables tried in order by `LaunchMode::Auto`. headless-shell first: it
/// is the one that supports begin-frame control.
const CANDIDATES: &[&str] = &[
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

const USUAL_PATHS: &[&str] = &[
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// Finds a browser executable. A headed browser can't be headless-shell.
pub fn find_browser(headed: bool) -> Result<PathBuf> {
    find_browser_in(
        &std::env::var_os("PATH").unwrap_or_default(),
        USUAL_PATHS,
        headed,
    )
}

fn find_browser_in(
    path_var: &std::ffi::OsStr,
    usual_paths: &[&str],
    headed: bool,
) -> Result<PathBuf> {
    for name in CANDIDATES {
        if headed && name.contains("headless") {
            continue;
        }
        for dir in std::env::split_paths(path_var) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    for path in usual_paths {
        if headed && path.contains("headless") {
            continue;
        }
        if is_executable(Path::new(path)) {
            return Ok(PathBuf::from(path));
        }
    }
    Err(Error::new(
        ErrorCode::BrowserInitFailed,
        "no Chromium found: install one (Debian: `apt-get install chromium-headless-shell` or `apt-get install chromium`), \
         pass `--chrome /path/to/chrome`, or attach with `--connect ws://host:port/devtools/browser/...`",
    ))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The switches chromiumoxide passes by default (from Puppeteer's list):
/// the engine passes them itself, with its own, in one merged list.
const CHROMIUM_DEFAULTS: &[&str] = &[
    "disable-background-networking",
    "enable-features=NetworkService,NetworkServiceInProcess",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-component-extensions-with-background-pages",
    "disable-default-apps",
    "disable-dev-shm-usage",
    "disable-features=TranslateUI",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    "disable-popup-blocking",
    "disable-prompt-on-repost",
    "disable-renderer-backgrounding",
    "disable-sync",
    "force-color-profile=srgb",
    "metrics-recording-only",
    "no-first-run",
    "enable-automation",
    "password-store=basic",
    "use-mock-keychain",
    "enable-blink-features=IdleDetection",
    "lang=en_US",
];

/// Switches whose values are lists that several sources add to.
const LIST_SWITCHES: &[&str] = &[
    "enable-features",
    "disable-features",
    "enable-blink-features",
    "disable-blink-features",
];

/// Every switch a launched Chromium gets (besides chromiumoxide's own:
/// port, profile, window size, headless, sandbox), once each: the defaults,
/// the engine's, then the caller's `extra_args`. A later value replaces an
/// earlier one, except for feature lists, which are merged (Chromium reads
/// only the last `--disable-features` it is given).
pub fn launch_switches(
    options: &BrowserOptions,
    begin_frame_control: bool,
) -> Vec<(String, Option<String>)> {
    let mut ours: Vec<&str> = vec![
        "disable-gpu",
        "disable-quic",
        "disable-component-update",
        // Chromium fetches these from Google at start and on a timer.
        "disable-features=Translate,OptimizationHints,MediaRouter",
        // A renderer per tab as far as it goes: Chromium's default limit
        // (from memory size) makes tabs share one past a handful, and a
        // page that spins then freezes its neighbours.
        "renderer-process-limit=64",
        // A key's scroll lands at once, not over frames a frozen page
        // never draws.
        "disable-smooth-scrolling",
        // Site isolation keeps a spare renderer started for the next tab or
        // cross-site navigation: a hundred MB for a few ms once in a while.
        "disable-features=SpareRendererForSitePerProcess",
        // A headless browser has no pointing device: pages would match
        // `(pointer: none)` and `(hover: none)` and serve their touch
        // layout (a mobile date picker, menus that never open on hover).
        // The engine drives a mouse: a desktop's fine pointer that hovers.
        "blink-settings=primaryPointerType=4,availablePointerTypes=4,primaryHoverType=2,availableHoverTypes=2",
    ];
    if options.site_isolation {
        // headless-shell isolates nothing unless told to.
        ours.push("site-per-process");
    } else {
        // Cross-site iframes stay in the page's renderer, so snapshots, refs
        // and begin-frames reach them in one session (no out-of-process
        // frames).
        ours.extend([
            "disable-features=IsolateOrigins,site-per-process",
            "disable-site-isolation-trials",
        ]);
    }
    if begin_frame_control {
        ours.extend([
            "run-all-compositor-stages-before-draw",
            "disable-new-content-rendering-timeout",
            "disable-threaded-animation",
            "disable-checker-imaging",
        ]);
    }
    // No `--disable-frame-rate-limit` / `--disable-gpu-vsync`: unthrottled,
    // a frozen page's capture got its frame 15 ms sooner, but a loading page
    // drew flat out: a navigation took 20-30 ms longer and twice the browser
    // CPU (GPU process 37 against 8 ms). `--enable-features=
    // CDPScreenshotNewSurface` (captures on a surface of their own, as
    // Playwright launches) wins a frame per capture but cost 190 MB more
    // in the GPU process at 50 tabs, past Playwright's memory (BENCHMARKS.md):
    // a `--chrome-arg` away for whoever wants it.
    let mut switches: Vec<(String, Option<String>)> = Vec::new();
    let given = CHROMIUM_DEFAULTS
        .iter()
        .copied()
        .chain(ours)
        .chain(options.extra_args.iter().map(String::as_str));
    for switch in given {
        let switch = switch.trim().trim_start_matches('-');
        let (key, value) = match switch.split_once('=') {
            Some((key, value)) => (key, Some(value)),
            None => (switch, None),
        };
        if key.is_empty() {
            continue;
        }
        let value = value.map(str::to_string);
        match switches.iter_mut().find(|(k, _)| k == key) {
            Some((_, Some(old))) if LIST_SWITCHES.contains(&key) => {
                for item in value.iter().flat_map(|v| v.split(',')) {
                    if !item.is_empty() && !old.split(',').any(|o| o == item) {
                        old.push(',');
                        old.push_str(item);
                    }
                }
            }
            Some((_, old)) => *old = value,
            None => switches.push((key.to_string(), value)),
        }
    }
    switches
}

/// Chromium outlives a parent that dies without shutting it down (SIGKILL, a
/// test binary's exit): a small watcher process ends it when the engine's
/// process is gone. Its children (renderers, GPU) follow their browser.
fn reap_with_engine(browser_pid: u32) -> Option<std::process::Child> {
    let engine_pid = std::process::id();
    // The whole tree, listed before anything dies (orphans get reparented).
    let script = format!(
        "tree() {{ echo $1; for c in $(pgrep -P $1); do tree $c; done; }}; \
         while kill -0 {engine_pid} 2>/dev/null; do sleep 1; done; \
         kill -9 $(tree {browser_pid}) 2>/dev/null"
    );
    let spawned = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    spawned
        .map_err(|err| tracing::warn!("no watcher for the browser process: {err}"))
        .ok()
}

/// Whether process `pid` exists and is not a zombie (Linux `/proc`).
fn process_runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// A connected browser and the task that polls its CDP handler.
/// Whether Chromium runs in its sandbox, and why not.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Sandbox {
    /// `None` for an attached browser (its launcher decided).
    pub on: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The effective user is root (`/proc/self` belongs to it).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

pub struct BrowserProcess {
    pub sandbox: Sandbox,
    pub browser: Browser,
    pub executable: Option<PathBuf>,
    pub launched: bool,
    /// Tabs the engine creates may be put under begin-frame control.
    pub begin_frame_control: bool,
    /// Ends the browser if this process dies without shutting it down;
    /// stopped on a clean shutdown (before its pid could be reused).
    watcher: Option<std::process::Child>,
    handler_task: JoinHandle<()>,
    /// The launched browser's process (none when attached).
    pid: Option<u32>,
    /// Sends tabs' `Page.navigate` past chromiumoxide's queue.
    pub navigator: std::sync::Arc<crate::navigator::Navigator>,
    /// An attached browser's one socket, shared by both connections
    /// (`cdp_mux.rs`); closed with this.
    _shared_socket: Option<crate::cdp_mux::CdpMux>,
}

/// Launches Chromium; when it can't start with its sandbox (the kernel may
/// not allow user namespaces), once more without, noting why in
/// `sandbox_off`.
async fn launch_falling_back_to_no_sandbox(
    builder: chromiumoxide::browser::BrowserConfigBuilder,
    executable: &Path,
    sandbox_off: &mut Option<String>,
) -> Result<(Browser, chromiumoxide::Handler)> {
    let launched = Browser::launch(
        builder
            .clone()
            .build()
            .map_err(|e| Error::new(ErrorCode::BrowserInitFailed, e))?,
    )
    .await;
    let launched = match launched {
        Err(e) if sandbox_off.is_none() => {
            let cause = e.to_string();
            let cause = cause.lines().next().unwrap_or_default();
            tracing::warn!(
                "Chromium did not start with its sandbox ({}); starting it without",
                crate::error::cut(cause)
            );
            *sandbox_off = Some(format!(
                "Chromium did not start with its sandbox (the kernel may not allow it): {}",
                crate::error::cut(cause)
            ));
            let config = builder
                .no_sandbox()
                .build()
                .map_err(|e| Error::new(ErrorCode::BrowserInitFailed, e))?;
            Browser::launch(config).await
        }
        other => other,
    };
    let (browser, handler) = launched.map_err(|e| {
        Error::new(
            ErrorCode::BrowserInitFailed,
            format!("could not launch {}: {e}", executable.display()),
        )
    })?;
    Ok((browser, handler))
}

impl BrowserProcess {
    pub async fn start(options: &BrowserOptions) -> Result<Self> {
        let viewport = Viewport {
            width: options.viewport_width,
            height: options.viewport_height,
            device_scale_factor: Some(1.0),
            emulating_mobile: false,
            is_landscape: true,
            has_touch: false,
        };
        let mut begin_frame_control = false;
        let mut watcher = None;
        let mut pid = None;
        // Unknown for an attached browser: launched by someone else.
        let mut sandbox = Sandbox {
            on: None,
            note: None,
        };
        let mut shared_socket = None;
        let (browser, mut handler, executable, launched) = match &options.mode {
            LaunchMode::Connect(endpoint) => {
                let mut ws_url = crate::remote::websocket_url(endpoint).await?;
                // A URL that names its browser takes a second connection;
                // any other (a service's launch URL) is dialled once.
                if !crate::remote::names_its_browser(&ws_url) {
                    let mux = crate::cdp_mux::CdpMux::start(&ws_url).await?;
                    ws_url = mux.local_url().to_string();
                    shared_socket = Some(mux);
                }
                // The viewport applies to an attached browser's pages too.
                let config = chromiumoxide::handler::HandlerConfig {
                    viewport: Some(viewport.clone()),
                    ..Default::default()
                };
                let (browser, handler) = Browser::connect_with_config(ws_url, config)
                    .await
                    .map_err(|e| {
                        Error::new(
                            ErrorCode::DevtoolsInitFailed,
                            format!(
                                "could not attach to {}: {e}",
                                crate::remote::shown(endpoint)
                            ),
                        )
                    })?;
                (browser, handler, None, false)
            }
            mode => {
                let executable = match mode {
                    LaunchMode::Binary(path) => path.clone(),
                    _ => find_browser(options.headed)?,
                };
                if !is_executable(&executable) {
                    return Err(Error::new(
                        ErrorCode::BrowserInitFailed,
                        format!("{} is not an executable file", executable.display()),
                    ));
                }
                let mut sandbox_off = running_as_root().then(|| {
                    tracing::warn!("running as root: Chromium runs without its sandbox");
                    "the engine runs as root, where Chromium's sandbox can't run".to_string()
                });
                std::fs::create_dir_all(&options.user_data_dir).map_err(|e| {
                    Error::new(ErrorCode::BrowserInitFailed, format!("user data dir: {e}"))
                })?;
                // Only headless-shell implements HeadlessExperimental.beginFrame;
                // it needs every compositor stage run before a frame is drawn.
                let is_headless_shell = executable
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().contains("headless-shell"));
                // headless-shell refuses begin-frame control together with
                // site isolation ("Frame control is not compatible with
                // --site-per-process"), and out-of-process frames then stall
                // its begin-frames: isolated, it runs the compositor driver.
                begin_frame_control = options.begin_frame_control
                    && is_headless_shell
                    && !options.headed
                    && !options.site_isolation;
                let switches = launch_switches(&options, begin_frame_control);
                let builder = BrowserConfig::builder()
                    .chrome_executable(&executable)
                    .user_data_dir(&options.user_data_dir)
                    .viewport(viewport)
                    .window_size(options.viewport_width, options.viewport_height)
                    .request_timeout(options.request_timeout)
                    .launch_timeout(Duration::from_secs(20))
                    // Ours replace chromiumoxide's defaults (kept in
                    // CHROMIUM_DEFAULTS): it keeps switches in a hash map, so
                    // two `--disable-features` came out in a random order and
                    // either one won.
                    .disable_default_args()
                    .args(switches.iter().map(|(key, value)| match value {
                        Some(value) => format!("{key}={value}"),
                        None => key.clone(),
                    }));
                // Chromium's sandbox refuses root, and needs user namespaces.
                let mut builder = match &sandbox_off {
                    Some(_) => builder.no_sandbox(),
                    None => builder,
                };
                if let Some(port) = options.cdp_port {
                    builder = builder.port(port);
                }
                // Headless is chromiumoxide's default.
                if options.headed {
                    builder = builder.with_head();
                }
                let (browser, handler) =
                    launch_falling_back_to_no_sandbox(builder, &executable, &mut sandbox_off)
                        .await?;
                let mut browser = browser;
                pid = browser.get_mut_child().and_then(|c| c.inner.id());
                watcher = pid.and_then(reap_with_engine);
                if let Some(pid) = pid {
                    before_the_engine_under_memory_pressure(pid);
                }
                sandbox = Sandbox {
                    on: Some(sandbox_off.is_none()),
                    note: sandbox_off,
                };
                (browser, handler, Some(executable), true)
            }
        };
        crate::sockets::send_commands_unbatched(browser.websocket_address());
        // The handler drives every CDP exchange; it must be polled even after
        // an error (a malformed event must not stop the browser).
        let handler_task = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(err) = event {
                    tracing::debug!("cdp handler: {err}");
                }
            }
            tracing::info!("browser connection closed");
        });
        let navigator = std::sync::Arc::new(crate::navigator::Navigator::new(
            browser.websocket_address().clone(),
            options.site_isolation,
        ));
        Ok(BrowserProcess {
            sandbox,
            navigator,
            browser,
            executable,
            launched,
            begin_frame_control,
            watcher,
            handler_task,
            pid,
            _shared_socket: shared_socket,
        })
    }

    /// Whether the browser is alive: its connection is still read and its
    /// process runs (a launched browser), or it answers a CDP round trip
    /// within `limit` (an attached one; a busy connection can delay that,
    /// so callers allow a few misses).
    pub async fn alive(&self, limit: Duration) -> bool {
        if self.connection_lost() {
            return false;
        }
        let Some(pid) = self.pid else {
            // A round trip, given up as soon as the socket is known gone
            // (a dead socket never answers, it only times out).
            let version = self.browser.version();
            tokio::pin!(version);
            let deadline = tokio::time::Instant::now() + limit;
            loop {
                tokio::select! {
                    answer = &mut version => return answer.is_ok(),
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {
                        if self.connection_lost() || tokio::time::Instant::now() >= deadline {
                            return false;
                        }
                    }
                }
            }
        };
        process_runs(pid)
    }

    pub fn launched_here(&self) -> bool {
        self.pid.is_some()
    }

    /// The connection is known to be gone (not merely slow to answer).
    pub fn connection_lost(&self) -> bool {
        self.handler_task.is_finished()
            || self
                ._shared_socket
                .as_ref()
                .is_some_and(crate::cdp_mux::CdpMux::is_closed)
    }

    /// Closes the browser (or detaches from it), bounded by `timeout`.
    pub async fn shutdown(mut self, timeout: Duration) {
        if self.launched {
            let closed = tokio::time::timeout(timeout, async {
                let _ = self.browser.close().await;
                let _ = self.browser.wait().await;
            })
            .await;
            if closed.is_err() {
                tracing::warn!("browser did not close within {timeout:?}; killing it");
                let _ = self.browser.kill().await;
            }
        }
        self.handler_task.abort();
        if let Some(mut watcher) = self.watcher.take() {
            let _ = watcher.kill();
            let _ = watcher.wait();
        }
    }
}

#[cfg(test)]
mod tests {

    fn switch<'a>(switches: &'a [(String, Option<String>)], key: &str) -> Option<&'a str> {
        switches
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref().unwrap_or(""))
    }

    #[test]
    fn launch_switches_merge_feature_lists_and_let_the_caller_win() {
        let options = BrowserOptions {
            site_isolation: false,
            extra_args: vec![
                "--disable-features=PaintHolding,Translate".into(),
                "--lang=de".into(),
                "--js-flags=--max-old-space-size=64".into(),
                "-- ".into(),
            ],
            ..BrowserOptions::default()
        };
        let switches = launch_switches(&options, false);
        // Once each, whoever gave them.
        let mut keys: Vec<&str> = switches.iter().map(|(k, _)| k.as_str()).collect();
        let count = keys.len();
        keys.dedup();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), count, "{switches:?}");
        assert_eq!(
            switch(&switches, "disable-features"),
            Some(
                "TranslateUI,Translate,OptimizationHints,MediaRouter,\
                 SpareRendererForSitePerProcess,IsolateOrigins,site-per-process,PaintHolding"
            )
        );
        assert_eq!(switch(&switches, "lang"), Some("de"));
        // Only the first `=` splits: the value keeps its own.
        assert_eq!(
            switch(&switches, "js-flags"),
            Some("--max-old-space-size=64")
        );
        assert_eq!(switch(&switches, "disable-site-isolation-trials"), Some(""));
        assert_eq!(switch(&switches, "site-per-process"), None);
        assert_eq!(
            switch(&switches, "enable-features"),
            Some("NetworkService,NetworkServiceInProcess")
        );
        assert!(!keys.contains(&""), "{keys:?}");
    }

    #[test]
    fn launch_switches_follow_isolation_and_the_frame_driver() {
        let isolated = launch_switches(&BrowserOptions::default(), false);
        assert_eq!(switch(&isolated, "site-per-process"), Some(""));
        assert!(
            !switch(&isolated, "disable-features")
                .unwrap()
                .contains("IsolateOrigins")
        );
        let deterministic = launch_switches(
            &BrowserOptions {
                site_isolation: false,
                ..BrowserOptions::default()
            },
            true,
        );
        assert_eq!(
            switch(&deterministic, "run-all-compositor-stages-before-draw"),
            Some("")
        );
        assert_eq!(
            switch(&isolated, "run-all-compositor-stages-before-draw"),
            None
        );
    }
    use super::*;

    #[tokio::test]
    async fn a_missing_binary_says_what_to_do() {
        let options = BrowserOptions {
            mode: LaunchMode::Binary("/nonexistent/chrome".into()),
            ..BrowserOptions::default()
        };
        let err = BrowserProcess::start(&options)
            .await
            .err()
            .expect("no browser there");
        assert_eq!(err.code, ErrorCode::BrowserInitFailed);
        assert!(
            err.message.contains("/nonexistent/chrome"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn a_dead_endpoint_fails_to_connect() {
        let options = BrowserOptions {
            mode: LaunchMode::Connect("http://127.0.0.1:9".into()),
            ..BrowserOptions::default()
        };
        let err = BrowserProcess::start(&options)
            .await
            .err()
            .expect("nothing listens on port 9");
        assert_eq!(err.code, ErrorCode::DevtoolsInitFailed);
    }

    #[test]
    fn auto_detection_explains_what_to_install() {
        let err = find_browser_in(std::ffi::OsStr::new("/nonexistent"), &[], false).unwrap_err();
        assert_eq!(err.code, ErrorCode::BrowserInitFailed);
        assert!(
            err.message
                .contains("apt-get install chromium-headless-shell")
                && err.message.contains("--chrome"),
            "{}",
            err.message
        );
    }

    #[test]
    fn headed_mode_skips_headless_shell() {
        let dir = std::env::temp_dir().join(format!("wabp-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["chromium-headless-shell", "chromium"] {
            let path = dir.join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        assert_eq!(
            find_browser_in(dir.as_os_str(), &[], false).unwrap(),
            dir.join("chromium-headless-shell")
        );
        assert_eq!(
            find_browser_in(dir.as_os_str(), &[], true).unwrap(),
            dir.join("chromium")
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The browser's own process is what the kernel should end before the
/// engine when memory runs out (the engine repairs tabs and restarts a dead
/// browser; nobody restarts a dead engine but its supervisor). Chromium
/// gives its renderers 300 and its GPU process 200, its main process 0, as
/// the engine has: raise the main process above the engine's (and the
/// launcher script Debian wraps it in; processes already at or above it are
/// left alone).
fn before_the_engine_under_memory_pressure(pid: u32) {
    const BROWSER_OOM_SCORE_ADJ: i32 = 100;
    for process in crate::memory::process_tree(pid) {
        let path = format!("/proc/{process}/oom_score_adj");
        let now = std::fs::read_to_string(&path)
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok());
        if now.is_some_and(|adj| adj < BROWSER_OOM_SCORE_ADJ)
            && let Err(e) = std::fs::write(&path, BROWSER_OOM_SCORE_ADJ.to_string())
        {
            tracing::debug!("raising oom_score_adj of {process}: {e}");
        }
    }
}
