//! `wabp-model`: the engine without a browser. What it says (errors,
//! events, envelopes), who asks (callers and scopes), what it accepts
//! (URL and cookie rules), the action loop over its tab and plugin traits,
//! capture (markup raster, WebP) and the components whose rules need no
//! browser (the tab table, downloads, the network buffer, interception
//! rules). It never imports chromiumoxide or wasmtime: `wabp-core` drives
//! Chromium with it, `wabp-plugin-host` implements its plugin traits, and
//! all of it is unit-tested without a browser.

pub mod action;
pub mod caller;
pub mod capture;
pub mod clock;
pub mod downloads;
pub mod drain;
pub mod error;
pub mod events;
pub mod ids;
pub mod image;
pub mod intercept;
pub mod keys;
pub mod memory;
pub mod network;
pub mod plugin;
pub mod rules;
pub mod secrets;
pub mod tab_table;
pub mod turn;
pub mod users;
pub mod viewport;

pub use action::{ActionOptions, Envelope, NavigationHint};
pub use caller::{Caller, Scope, Scopes};
pub use error::{Error, ErrorCode, NextStep, Result};
