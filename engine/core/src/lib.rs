//! `wabp-core`: drives Chromium over CDP and runs the action loop over the
//! plugin traits. The only crate that talks CDP.

pub mod action;
pub mod browser;
pub mod caller;
pub mod capture;
pub mod clock;
pub mod downloads;
pub mod engine;
pub mod error;
pub mod events;
pub mod ids;
pub mod image;
pub mod intercept;
pub mod keys;
pub mod navigator;
pub mod network;
pub mod plugin;
pub mod secrets;
pub mod tab;
pub mod tab_table;
pub use tab::{execution, refs, snapshot};
pub mod rules;
pub mod viewport;

pub use action::record;
pub use action::{ActionOptions, Envelope, NavigationHint};
pub use caller::{Caller, Scope, Scopes};
pub use engine::{Engine, EngineConfig, InputMode, observe, oneshot, users};
pub use error::{Error, ErrorCode, NextStep, Result};
