use crate::PluginError;
use crate::bindings::interceptor::exports::wabp::plugin::interceptor as wit;

pub use wit::{Header, Outcome, Request as InterceptedRequest, Response};

/// A request interceptor: the host asks it about every request of every
/// tab that no client rule answered, and does what it answers. One that
/// traps or runs out of time lets the request go on (the host fails open),
/// so keep [`intercept`](Self::intercept) small. Implement it on a unit
/// struct and export that with
/// [`export_interceptor_plugin!`](crate::export_interceptor_plugin).
pub trait InterceptorPlugin {
    /// What to do with `request`: `Outcome::Proceed` (with headers to set,
    /// or none), `Outcome::Fulfill` (answer it) or `Outcome::Abort` (block it).
    fn intercept(request: &InterceptedRequest) -> Result<Outcome, PluginError>;
}

impl InterceptedRequest {
    /// The request's host (`ads.example.com`), if its URL has one.
    pub fn host(&self) -> Option<&str> {
        let rest = self.url.split_once("://")?.1;
        let authority = rest.split(['/', '?', '#']).next()?;
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        Some(host.split(':').next().unwrap_or(host))
    }

    /// A header's value, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str())
    }
}

#[doc(hidden)]
pub mod glue {
    use super::*;

    pub use crate::bindings::interceptor as bindings;
    pub use wit::Guest;
    pub type WitPluginError = wit::PluginError;

    pub fn intercept<T: InterceptorPlugin>(request: InterceptedRequest) -> Result<Outcome, WitPluginError> {
        Ok(T::intercept(&request)?)
    }
}

/// Exports a type implementing [`InterceptorPlugin`] as the component's
/// `wabp:plugin/interceptor` interface. Use once per plugin crate.
#[macro_export]
macro_rules! export_interceptor_plugin {
    ($plugin:ty) => {
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = <$plugin as $crate::InterceptorPlugin>::intercept;
        };

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __WabpExport;

            impl $crate::__private::interceptor::Guest for __WabpExport {
                fn intercept(
                    request: $crate::InterceptedRequest,
                ) -> ::core::result::Result<$crate::Outcome, $crate::__private::interceptor::WitPluginError> {
                    $crate::__private::interceptor::intercept::<$plugin>(request)
                }
            }

    $crate::__private::interceptor::bindings::export!(__WabpExport with_types_in $crate::__private::interceptor::bindings);
        };
    };
}
