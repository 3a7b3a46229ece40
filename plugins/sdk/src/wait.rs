use serde_json::Value;

use crate::PluginError;
use crate::bindings::wait::exports::wabp::plugin::wait as wit;

pub use wit::{Decision, RequestInfo, Signal};

/// One wait type a plugin offers, selected by `wait_until.type`.
#[derive(Debug, Clone)]
pub struct WaitSpec {
    /// snake_case, unique across loaded plugins.
    pub name: String,
    /// Shown to clients and agents.
    pub description: String,
    /// JSON Schema of the `wait_until` fields this wait reads.
    pub params_schema: Value,
}

impl WaitSpec {
    /// A spec from its parts.
    pub fn new(name: impl Into<String>, description: impl Into<String>, params_schema: Value) -> Self {
        WaitSpec { name: name.into(), description: description.into(), params_schema }
    }
}

/// A wait heuristic: a small state machine the host drives after an action.
///
/// The host creates one instance per wait, calls [`begin`](Self::begin)
/// once and then [`poll`](Self::poll) until it answers [`Decision::Done`],
/// so the state of the current wait may live in a global (`thread_local!`
/// with a `RefCell`, say). The host owns the clock and the overall timeout.
/// Implement it on a unit struct and export that with
/// [`export_wait_plugin!`](crate::export_wait_plugin).
pub trait WaitPlugin {
    /// The wait types this plugin offers; asked once at load.
    fn waits() -> Vec<WaitSpec>;

    /// Starts wait `name` with the request's `wait_until` object.
    fn begin(name: &str, params: Value) -> Result<Decision, PluginError>;

    /// Feeds the signals seen since the last call; `elapsed_ms` counts from
    /// the end of the action's dispatch.
    fn poll(signals: Vec<Signal>, elapsed_ms: u64) -> Decision;
}

#[doc(hidden)]
pub mod glue {
    use super::*;

    pub use crate::bindings::wait as bindings;
    pub use wit::Guest;
    pub type WitWaitSpec = wit::WaitSpec;
    pub type WitPluginError = wit::PluginError;

    pub fn describe<T: WaitPlugin>() -> Vec<wit::WaitSpec> {
        T::waits().into_iter().map(|s| wit::WaitSpec { name: s.name, description: s.description, params_schema: s.params_schema.to_string() }).collect()
    }

    pub fn begin<T: WaitPlugin>(name: String, params: String) -> Result<Decision, WitPluginError> {
        let params = crate::params::parse_json_params(&params)?;
        Ok(T::begin(&name, params)?)
    }

    pub fn poll<T: WaitPlugin>(signals: Vec<Signal>, elapsed_ms: u64) -> Decision {
        T::poll(signals, elapsed_ms)
    }
}

/// Exports a type implementing [`WaitPlugin`] as the component's
/// `wabp:plugin/wait` interface. Use once per plugin crate.
#[macro_export]
macro_rules! export_wait_plugin {
    ($plugin:ty) => {
        // Component exports only exist on wasm; elsewhere (host-side unit
        // tests) the plugin type is just checked.
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = <$plugin as $crate::WaitPlugin>::poll;
        };

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __WabpExport;

            impl $crate::__private::wait::Guest for __WabpExport {
                fn describe() -> ::std::vec::Vec<$crate::__private::wait::WitWaitSpec> {
                    $crate::__private::wait::describe::<$plugin>()
                }

                fn begin(
                    name: ::std::string::String,
                    params: ::std::string::String,
                ) -> ::core::result::Result<$crate::Decision, $crate::__private::wait::WitPluginError> {
                    $crate::__private::wait::begin::<$plugin>(name, params)
                }

                fn poll(signals: ::std::vec::Vec<$crate::Signal>, elapsed_ms: u64) -> $crate::Decision {
                    $crate::__private::wait::poll::<$plugin>(signals, elapsed_ms)
                }
            }

    $crate::__private::wait::bindings::export!(__WabpExport with_types_in $crate::__private::wait::bindings);
        };
    };
}
