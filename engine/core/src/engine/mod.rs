//! The engine: a handle over its components, each owning its state behind
//! its own lock: the browser (`BrowserHost`), the tab table (`TabTable`),
//! users (`Users`), downloads (`Downloads`), interception rules
//! (`Interception`), page claims (`popups.rs`), chooser defaults
//! (`prompts.rs`), the input mode (`execution.rs`). Its methods are the
//! core operations the catalogue calls, one file per concern:
//!
//! | file | operations |
//! |---|---|
//! | `lifecycle.rs`, `restart.rs` | start, stop, shutdown; a browser that comes back |
//! | `tabs.rs`, `tab_list.rs` | open, list, activate, stop, close; pin, mute, move, duplicate |
//! | `actions.rs` | the action loop's operations; `execute`, `text` |
//! | `screenshots.rs` | screenshots outside an envelope |
//! | `execution.rs` | pause and resume, the input mode |
//! | `prompts.rs`, `answers.rs` | dialogs, file choosers, selects and what they answer |
//! | `browser_events.rs`, `popups.rs`, `downloads.rs`, `fence.rs` | what the browser reports by itself |
//! | `repair.rs` | tabs that break are replaced |
//! | `viewer.rs` | what the web UI shows and does: tab states, frames, screencasts, take-over |
//! | `users.rs`, `cookies.rs`, `network.rs`, `intercept.rs`, `observe.rs`, `oneshot.rs`, `browser_info.rs` | the rest of the catalogue |

mod actions;
pub mod answers;
mod browser_events;
pub mod browser_info;
pub mod cookies;
mod downloads;
mod execution;
mod fence;
pub mod intercept;
mod lifecycle;
mod network;
pub mod observe;
pub mod oneshot;
mod popups;
mod prompts;
mod repair;
mod restart;
mod screenshots;
mod session_browsers;
mod tab_list;
mod tabs;
pub mod users;
pub mod viewer;

pub use execution::InputMode;
pub use network::CurlRequest;
pub use screenshots::ImageFormat;
pub use session_browsers::expand as expand_endpoint;
pub use tabs::TabSummary;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use parking_lot::RwLock;

use crate::action::record::ActionLog;
use crate::browser::BrowserOptions;
use crate::browser_host::BrowserHost;
pub use crate::browser_host::{BrowserStatus, Components};
use crate::downloads::Downloads;
use crate::intercept::Interception;
use crate::plugin::PluginRegistry;
use crate::tab::Tab;
use crate::tab::frames::DriverKind;
use crate::tab_table::TabTable;

/// How long an operation outside the action loop waits for the tab's turn.
pub(crate) const TURN_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub browser: BrowserOptions,
    /// Where history, downloads and screenshots go.
    pub session_dir: PathBuf,
    /// Freeze pages between actions (`--no-pause` turns it off).
    pub pause: bool,
    /// Bounds on per-user (`userId`) sessions.
    pub user_limits: users::UserLimits,
    /// URL schemes tabs may open besides http, https, data: and about:blank.
    pub extra_schemes: Vec<String>,
    /// Where the engine serves its API and web UI, which tabs may not open
    /// (filled in as it starts listening: [`Engine::serving_at`]).
    pub own_addresses: crate::rules::url::OwnAddresses,
    /// Where file choosers may take files from.
    pub uploads: UploadRoots,
    /// A download past this many bytes is stopped and marked failed.
    pub max_download_bytes: u64,
    /// The `--policy` file as JSON: when set, every document a page
    /// requests by itself is put to the policies too (`engine/fence.rs`).
    pub navigation_fence: Option<Arc<str>>,
    /// Keep cookie and authorization values and secret-named body fields in
    /// every view of network calls (`--record-secrets`); else redacted.
    pub record_secrets: bool,
    /// This engine's name in a fleet (`--engine-id`): the ids it hands out
    /// end in it.
    pub engine_id: crate::ids::EngineId,
    /// Past this many bytes (engine and browser together), no new tabs
    /// (`--max-memory-mb`).
    pub max_memory_bytes: u64,
    /// CDP services each user session's browser is dialled from
    /// (`--browser-endpoint`); empty: users get contexts in the engine's
    /// browser.
    pub browser_endpoints: Vec<String>,
}

/// The folders a file chooser may upload from (`--upload-dir`), besides the
/// session's own `uploads/`.
#[derive(Debug, Clone, Default)]
pub struct UploadRoots {
    pub dirs: Vec<PathBuf>,
    /// Any file the engine can read (only for a loopback engine without
    /// tokens: its one user is the machine's).
    pub anywhere: bool,
}

pub struct Engine {
    pub config: EngineConfig,
    pub registry: Arc<dyn PluginRegistry>,
    /// The browser: process, lifecycle, launch options, contexts
    /// (`browser_host.rs`).
    browser: Arc<BrowserHost>,
    /// Users' own browsers, with `--browser-endpoint`
    /// (`session_browsers.rs`).
    session_browsers: session_browsers::SessionBrowsers,
    /// Tabs whose pages were destroyed lately, with when
    /// (`browser_events.rs`): a browser being closed destroys its pages
    /// just before its socket drops.
    recently_destroyed: parking_lot::Mutex<Vec<(std::time::Instant, Arc<Tab>)>>,
    /// The engine itself, for tasks a `&self` operation starts.
    me: std::sync::Weak<Engine>,
    /// The open tabs in listing order and each user's active tab
    /// (`tab_table.rs`).
    tabs: TabTable<Tab>,
    /// The users' sessions and their limits (`wabp-model`'s `Users`).
    users: Arc<users::Users>,
    /// The downloads' records, folders and resumes (`downloads.rs`).
    downloads: Downloads,
    /// Every user's interception rules, shared with the tabs.
    interception: Arc<Interception>,
    /// Which new pages are the engine's own and which a tab's (`popups.rs`).
    pages: popups::PageClaims,
    /// Files each user's file choosers get as they open (`prompts.rs`).
    chooser_defaults: prompts::ChooserDefaults,
    /// Agent or human, and the tabs human mode thawed (`execution.rs`).
    input: execution::InputModes,
    /// The flight recorder every action goes to before its answer.
    action_log: RwLock<Option<Arc<dyn ActionLog>>>,
    /// One tab repair at a time (`repair.rs`).
    repairs: tokio::sync::Mutex<()>,
    /// Tabs replaced so far (`GET /metrics`).
    repaired: std::sync::atomic::AtomicU64,
    /// The engine's own background tasks (reaper, browser watch,
    /// interceptors) run from the first start on.
    background: AtomicBool,
    /// Operations in flight, and whether the engine is draining.
    drain: Arc<crate::drain::Drain>,
    memory: crate::memory::MemoryBound,
}

impl Engine {
    pub fn new(config: EngineConfig, registry: Arc<dyn PluginRegistry>) -> Arc<Engine> {
        Arc::new_cyclic(|me| Engine {
            me: me.clone(),
            recently_destroyed: Default::default(),
            browser: Arc::new(BrowserHost::new(config.browser.clone(), config.pause)),
            session_browsers: session_browsers::SessionBrowsers::new(
                config.browser_endpoints.clone(),
            ),
            tabs: TabTable::default(),
            users: Arc::new(users::Users::new(config.user_limits)),
            downloads: Downloads::new(
                config.session_dir.join("downloads"),
                config.max_download_bytes,
            ),
            interception: Arc::new(Interception::new(registry.clone())),
            pages: Default::default(),
            chooser_defaults: Default::default(),
            input: Default::default(),
            action_log: RwLock::new(None),
            repairs: tokio::sync::Mutex::new(()),
            repaired: Default::default(),
            background: AtomicBool::new(false),
            drain: Default::default(),
            memory: crate::memory::MemoryBound::new(config.max_memory_bytes),
            config,
            registry,
        })
    }

    /// The flight recorder every action goes to before its answer.
    pub fn set_action_log(&self, log: Arc<dyn ActionLog>) {
        *self.action_log.write() = Some(log);
    }

    /// The driver tabs the engine opens run under.
    pub fn default_driver(&self) -> DriverKind {
        self.browser.default_driver()
    }

    /// The browser's executable, when the engine launched it.
    pub fn executable_path(&self) -> Option<String> {
        self.browser.executable_path()
    }

    pub fn frame_driver(&self) -> &'static str {
        self.default_driver().name()
    }

    pub fn downloads_dir(&self) -> PathBuf {
        self.downloads.folder().to_path_buf()
    }
}
