use serde_json::Value;

use crate::PluginError;
use crate::bindings::policy::exports::wabp::plugin::policy as wit;

pub use wit::{Category, Request as PolicyRequest, Verdict};

/// An approval policy: the host asks it before every operation and does
/// what it answers. A policy that traps or runs out of time denies (the
/// host fails closed), so keep [`decide`](Self::decide) small.
/// Implement it on a unit struct and export that with
/// [`export_policy_plugin!`](crate::export_policy_plugin).
pub trait PolicyPlugin {
    /// `settings` is the operator's policy file (`--policy FILE`, TOML)
    /// as JSON, `{}` without one.
    fn decide(settings: &Value, request: &PolicyRequest) -> Result<Verdict, PluginError>;
}

#[doc(hidden)]
pub mod glue {
    use super::*;

    pub use crate::bindings::policy as bindings;
    pub use wit::Guest;
    pub type WitPluginError = wit::PluginError;

    pub fn decide<T: PolicyPlugin>(settings: String, request: PolicyRequest) -> Result<Verdict, WitPluginError> {
        let settings: Value = serde_json::from_str(&settings)
            .map_err(|e| PluginError::invalid(format!("policy settings are not JSON: {e}")))?;
        Ok(T::decide(&settings, &request)?)
    }
}

/// Exports a type implementing [`PolicyPlugin`] as the component's
/// `wabp:plugin/policy` interface. Use once per plugin crate.
#[macro_export]
macro_rules! export_policy_plugin {
    ($plugin:ty) => {
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = <$plugin as $crate::PolicyPlugin>::decide;
        };

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __WabpExport;

            impl $crate::__private::policy::Guest for __WabpExport {
                fn decide(
                    settings: ::std::string::String,
                    request: $crate::PolicyRequest,
                ) -> ::core::result::Result<$crate::Verdict, $crate::__private::policy::WitPluginError> {
                    $crate::__private::policy::decide::<$plugin>(settings, request)
                }
            }

    $crate::__private::policy::bindings::export!(__WabpExport with_types_in $crate::__private::policy::bindings);
        };
    };
}
