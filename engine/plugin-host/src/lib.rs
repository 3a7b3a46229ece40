//! `wabp-plugin-host`: loads WebAssembly component plugins, sandboxes each
//! call (capability grants, an epoch deadline, a memory limit), hot-reloads
//! the plugin folder, and implements `wabp-core`'s plugin traits over them.
//! The only crate that imports wasmtime.

mod bindings;
pub mod error;
mod host;
mod loaded;
pub mod manifest;
mod pool;
mod registry;
mod runtime;
mod watch;

pub use error::{Error, Result};
pub use manifest::{Capability, Kind, Manifest};
pub use registry::Registry;
pub use watch::{DEBOUNCE, WatchHandle, watch};
