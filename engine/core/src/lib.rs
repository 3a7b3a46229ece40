//! `wabp-core`: drives Chromium over CDP and runs the action loop over the
//! plugin traits. The only crate that talks CDP.

pub mod action;
pub mod browser;
pub mod caller;
pub mod capture;
pub mod downloads;
pub mod engine;
pub mod error;
pub mod events;
pub mod execution;
pub mod ids;
pub mod keys;
pub mod network;
pub mod observe;
pub mod oneshot;
pub mod plugin;
pub mod record;
pub mod refs;
pub mod snapshot;
pub mod tab;
pub mod url_policy;
pub mod users;

pub use action::{ActionOptions, Envelope, NavigationHint};
pub use caller::Caller;
pub use engine::{Engine, EngineConfig, InputMode};
pub use error::{Error, ErrorCode, Result};
