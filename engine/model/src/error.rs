//! One error type for the engine, in the engine's terms: an ABP error code
//! (what kind of failure), a message (what went wrong), and the next step a
//! client can take. No HTTP status and no route: each frontend maps the code
//! to its own answer (REST: a status; MCP: an `isError` result) and says
//! the next step its own way (a route, a tool).

use serde::Serialize;

/// ABP error codes (`code` in error bodies), plus the few wabp adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidRequest,
    TabNotFound,
    NotFound,
    ElementNotFound,
    SelectorNotFound,
    Timeout,
    NavigationFailed,
    ElementNotVisible,
    ElementNotInteractable,
    DialogNotPresent,
    FileChooserNotPresent,
    FileNotFound,
    FileNotReadable,
    DownloadNotFound,
    DownloadFailed,
    NetworkError,
    EvaluationError,
    NotReady,
    BrowserInitFailed,
    DevtoolsInitFailed,
    Unauthorized,
    /// A web page (foreign Origin, Host) tried to drive the engine.
    Forbidden,
    /// A request body that is not `application/json`.
    UnsupportedMediaType,
    /// The action is blocked in human input mode.
    HumanMode,
    /// A ref no longer names a live element: take a new snapshot.
    StaleRef,
    /// A per-user session or tab limit is reached and nothing can be evicted.
    LimitReached,
    /// What a client waited for (a navigation, an idle network, a download)
    /// did not happen within its timeout.
    WaitTimeout,
    /// An approval policy refused the operation.
    PolicyDenied,
    /// An approval policy wants a person to approve the operation first.
    ApprovalRequired,
    /// A plugin trapped, ran out of time or memory.
    PluginFailed,
    /// What it acts on is busy with something else (a tab running an
    /// agent task).
    Conflict,
    /// The id names another engine of the fleet, which holds it.
    WrongEngine,
    /// The engine is draining (shutting down): no new sessions; another
    /// engine takes them.
    Draining,
    /// The engine is past its memory bound: no new tabs here.
    EngineFull,
    /// The browser service (`--browser-endpoint`) is at its limit and
    /// refused a new session's browser: retry later.
    BrowserServiceBusy,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::TabNotFound => "TAB_NOT_FOUND",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::ElementNotFound => "ELEMENT_NOT_FOUND",
            ErrorCode::SelectorNotFound => "SELECTOR_NOT_FOUND",
            ErrorCode::StaleRef => "STALE_REF",
            ErrorCode::LimitReached => "LIMIT_REACHED",
            ErrorCode::WaitTimeout => "WAIT_TIMEOUT",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::NavigationFailed => "NAVIGATION_FAILED",
            ErrorCode::ElementNotVisible => "ELEMENT_NOT_VISIBLE",
            ErrorCode::ElementNotInteractable => "ELEMENT_NOT_INTERACTABLE",
            ErrorCode::DialogNotPresent => "DIALOG_NOT_PRESENT",
            ErrorCode::FileChooserNotPresent => "FILE_CHOOSER_NOT_PRESENT",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::FileNotReadable => "FILE_NOT_READABLE",
            ErrorCode::DownloadNotFound => "DOWNLOAD_NOT_FOUND",
            ErrorCode::DownloadFailed => "DOWNLOAD_FAILED",
            ErrorCode::NetworkError => "NETWORK_ERROR",
            ErrorCode::EvaluationError => "EVALUATION_ERROR",
            ErrorCode::NotReady => "NOT_READY",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::BrowserInitFailed => "BROWSER_INIT_FAILED",
            ErrorCode::DevtoolsInitFailed => "DEVTOOLS_INIT_FAILED",
            ErrorCode::HumanMode => "HUMAN_MODE",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::PluginFailed => "PLUGIN_FAILED",
            ErrorCode::WrongEngine => "WRONG_ENGINE",
            ErrorCode::Draining => "DRAINING",
            ErrorCode::EngineFull => "ENGINE_FULL",
            ErrorCode::BrowserServiceBusy => "BROWSER_SERVICE_BUSY",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

/// What a client can do about an error, in the engine's terms; each
/// frontend names the route or tool that does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// Accept or dismiss the dialog that holds the tab.
    AnswerDialog { tab_id: String },
    /// Take a new snapshot of the tab (fresh refs).
    Snapshot { tab_id: String },
    /// Read the tab's numbered elements (browser-use's state).
    ElementIndices { tab_id: String },
    /// Take the tab's screenshot with the screenshot operation.
    TabScreenshot { tab_id: String },
    /// Choose an option of the open `<select>` by its indices.
    ChooseOption,
    /// Start the browser.
    StartBrowser,
    /// Ask the browser's status until it is ready.
    BrowserStatus,
    /// Hand the browser back to the agent (input mode "agent").
    AgentInputMode,
    /// List the loaded plugins and their actions.
    ListActions,
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    /// What went wrong, said for whoever drives the engine; a frontend adds
    /// how to do [`Error::next`].
    pub message: String,
    pub next: Option<NextStep>,
    /// Fields the error body carries besides `error` and `code` (an
    /// approval's id and prompt).
    pub details: Option<Box<serde_json::Map<String, serde_json::Value>>>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            next: None,
            details: None,
        }
    }

    /// The same error with the step that gets the client past it.
    pub fn then(mut self, next: NextStep) -> Self {
        self.next = Some(next);
        self
    }

    /// The same error with these extra body fields.
    pub fn with_details(mut self, details: serde_json::Map<String, serde_json::Value>) -> Self {
        self.details = Some(Box::new(details));
        self
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }
    /// What an operation that needs the page's script answers while a
    /// dialog blocks it: at once, rather than after a command times out.
    pub fn dialog_blocks(tab_id: &str) -> Self {
        Self::invalid(format!(
            "a JavaScript dialog is open in tab {tab_id} and blocks the page; accept or dismiss it first"
        ))
        .then(NextStep::AnswerDialog {
            tab_id: tab_id.to_string(),
        })
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    /// `id` (a tab, download, ...) is held by engine `holder`, not this one.
    pub fn wrong_engine(id: &str, holder: &str) -> Self {
        let mut details = serde_json::Map::new();
        details.insert("engine".into(), holder.into());
        Self::new(
            ErrorCode::WrongEngine,
            format!(
                "{} is held by engine {holder}, not this one; send it there",
                cut(id)
            ),
        )
        .with_details(details)
    }
    /// While draining: no new tabs here.
    pub fn draining() -> Self {
        Self::new(
            ErrorCode::Draining,
            "this engine is shutting down and takes no new sessions; try another engine",
        )
    }
    pub fn tab_not_found(tab_id: &str) -> Self {
        Self::new(
            ErrorCode::TabNotFound,
            format!("tab {} not found", cut(tab_id)),
        )
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Timeout, message)
    }
}

/// A client's string as it may appear in an error message or a log line:
/// at most 200 characters.
pub fn cut(text: &str) -> String {
    const LIMIT: usize = 200;
    match text.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text.to_string(),
    }
}
