//! `wabp-core`: the engine that drives Chromium. The browser (launch,
//! attach, restarts), the navigator, each tab and its components (page
//! session, frames and execution control, refs and snapshots, network,
//! prompts, the event pump), and the `Engine` handle that holds them. The
//! only crate that imports chromiumoxide; what needs no browser is
//! `wabp-model`'s, re-exported here under the same paths.

pub mod browser;
pub(crate) mod browser_host;
pub mod cdp_mux;
pub mod engine;
pub(crate) mod navigator;
pub mod remote;
pub(crate) mod sockets;
pub mod tab;

pub use tab::snapshot;
pub use wabp_model::{
    action, caller, capture, clock, downloads, drain, error, events, ids, image, intercept, keys,
    memory, network, plugin, rules, secrets, tab_table, turn, viewport,
};

pub use action::record;
pub use action::{ActionOptions, Envelope, NavigationHint};
pub use caller::{Caller, Scope, Scopes};
pub use engine::{Engine, EngineConfig, InputMode, observe, oneshot, users};
pub use error::{Error, ErrorCode, NextStep, Result};

/// A browser's failure as the engine's error: a command it did not answer
/// in time is a timeout; a connection that is gone (the browser died, an
/// attached one's service dropped it) is the browser not being ready while
/// the engine restarts it; anything else is the engine's own failure.
pub(crate) fn cdp_error(err: chromiumoxide::error::CdpError) -> Error {
    use chromiumoxide::error::CdpError;
    match err {
        CdpError::Timeout => Error::timeout("the browser did not answer in time"),
        CdpError::Ws(_) | CdpError::ChannelSendError(_) | CdpError::NoResponse => {
            Error::new(
                ErrorCode::NotReady,
                format!(
                    "the connection to the browser was lost ({err}); the engine is starting or reattaching one and reopens the tabs under their ids"
                ),
            )
            .then(NextStep::BrowserStatus)
        }
        other => Error::internal(format!("browser: {other}")),
    }
}
