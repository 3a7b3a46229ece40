//! Log lines for the engine's log, prefixed by the host with the plugin's
//! name. Needs the `log` capability in `plugin.toml`.

// Any enabled world will do: they all import the same `wabp:plugin/log`.
#[cfg(feature = "action")]
use crate::bindings::action::wabp::plugin::log as wit;
#[cfg(all(feature = "markup", not(feature = "action")))]
use crate::bindings::markup::wabp::plugin::log as wit;
#[cfg(all(feature = "wait", not(any(feature = "action", feature = "markup"))))]
use crate::bindings::wait::wabp::plugin::log as wit;
#[cfg(all(feature = "policy", not(any(feature = "action", feature = "markup", feature = "wait"))))]
use crate::bindings::policy::wabp::plugin::log as wit;
#[cfg(all(
    feature = "interceptor",
    not(any(feature = "action", feature = "markup", feature = "wait", feature = "policy"))
))]
use crate::bindings::interceptor::wabp::plugin::log as wit;

/// Logs at debug level.
pub fn debug(message: &str) {
    wit::write(wit::Level::Debug, message);
}

/// Logs at info level.
pub fn info(message: &str) {
    wit::write(wit::Level::Info, message);
}

/// Logs at warn level.
pub fn warn(message: &str) {
    wit::write(wit::Level::Warn, message);
}

/// Logs at error level.
pub fn error(message: &str) {
    wit::write(wit::Level::Error, message);
}
