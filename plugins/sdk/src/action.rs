use serde_json::Value;

use crate::PluginError;

/// One action a plugin offers: a REST endpoint and an MCP tool.
#[derive(Debug, Clone)]
pub struct ActionSpec {
    /// snake_case, unique across loaded plugins.
    pub name: String,
    /// Shown to clients and agents.
    pub description: String,
    /// JSON Schema (draft 2020-12) of the params object.
    pub params_schema: Value,
}

impl ActionSpec {
    /// A spec from its parts.
    pub fn new(name: impl Into<String>, description: impl Into<String>, params_schema: Value) -> Self {
        ActionSpec { name: name.into(), description: description.into(), params_schema }
    }
}

/// Where an action runs.
#[derive(Debug, Clone)]
pub struct Context {
    /// The tab the action targets.
    pub tab_id: String,
    /// Where the previous input action left the virtual pointer.
    pub pointer_x: f64,
    /// See [`pointer_x`](Self::pointer_x).
    pub pointer_y: f64,
}

/// An action plugin. Implement it on a unit struct and export that with
/// [`export_action_plugin!`](crate::export_action_plugin).
pub trait ActionPlugin {
    /// The actions this plugin offers; asked once at load.
    fn actions() -> Vec<ActionSpec>;

    /// Runs action `name` (one of [`actions`](Self::actions)) with its JSON
    /// params object; the returned value becomes the response's `result`.
    fn run(name: &str, params: Value, ctx: &Context) -> Result<Value, PluginError>;
}

#[doc(hidden)]
pub mod glue {
    use super::*;
    use crate::bindings::action::exports::wabp::plugin::action as wit;

    pub use crate::bindings::action as bindings;
    pub use wit::{ActionContext, Guest};
    pub type WitActionSpec = wit::ActionSpec;
    pub type WitPluginError = wit::PluginError;

    pub fn describe<T: ActionPlugin>() -> Vec<wit::ActionSpec> {
        T::actions().into_iter().map(|s| wit::ActionSpec { name: s.name, description: s.description, params_schema: s.params_schema.to_string() }).collect()
    }

    pub fn run<T: ActionPlugin>(name: String, params: String, context: ActionContext) -> Result<String, WitPluginError> {
        let params = crate::params::parse_json_params(&params)?;
        let ctx = Context { tab_id: context.tab_id, pointer_x: context.pointer_x, pointer_y: context.pointer_y };
        Ok(T::run(&name, params, &ctx)?.to_string())
    }
}

/// Exports a type implementing [`ActionPlugin`] as the component's
/// `wabp:plugin/action` interface. Use once per plugin crate.
#[macro_export]
macro_rules! export_action_plugin {
    ($plugin:ty) => {
        // Component exports only exist on wasm; elsewhere (host-side unit
        // tests) the plugin type is just checked.
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = <$plugin as $crate::ActionPlugin>::run;
        };

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __WabpExport;

            impl $crate::__private::action::Guest for __WabpExport {
                fn describe() -> ::std::vec::Vec<$crate::__private::action::WitActionSpec> {
                    $crate::__private::action::describe::<$plugin>()
                }

                fn run(
                    name: ::std::string::String,
                    params: ::std::string::String,
                    context: $crate::__private::action::ActionContext,
                ) -> ::core::result::Result<::std::string::String, $crate::__private::action::WitPluginError> {
                    $crate::__private::action::run::<$plugin>(name, params, context)
                }
            }

    $crate::__private::action::bindings::export!(__WabpExport with_types_in $crate::__private::action::bindings);
        };
    };
}
