//! Guest SDK for wabp plugins.
//!
//! A plugin is a WebAssembly component (`wasm32-wasip2`, `crate-type =
//! ["cdylib"]`) of one kind: an **action** (named browser actions), a
//! **markup** renderer (shapes drawn over screenshots), a **wait**
//! heuristic (decides when an action has settled), an approval **policy**
//! (allows, denies or asks before each operation) or a request
//! **interceptor** (lets requests go, answers or blocks them). Enable exactly
//! one of the features `action`, `markup`, `wait`, `policy` or `interceptor`,
//! implement the matching trait on a
//! unit struct and export it with the matching macro:
//!
//! ```ignore
//! use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, Params, PluginError, host, json, Value};
//!
//! struct Hello;
//!
//! impl ActionPlugin for Hello {
//!     fn actions() -> Vec<ActionSpec> {
//!         vec![ActionSpec::new("nudge", "Moves the pointer right by `dx` pixels", json!({
//!             "type": "object",
//!             "properties": { "dx": { "type": "number", "default": 10 } }
//!         }))]
//!     }
//!
//!     fn run(_name: &str, params: Value, ctx: &Context) -> Result<Value, PluginError> {
//!         let dx = Params::new(params)?.optional_f64("dx", 10.0)?;
//!         host::input::mouse_move(ctx.pointer_x + dx, ctx.pointer_y)?;
//!         Ok(json!({ "status": "moved" }))
//!     }
//! }
//!
//! wabp_plugin_sdk::export_action_plugin!(Hello);
//! ```
//!
//! The plugin's `plugin.toml` must list every `wabp:plugin` interface the
//! component imports (`input`, `page`, `script`, `navigation`, `log`,
//! `clock`). Only the host functions a plugin actually calls end up as
//! imports, so the list is exactly the modules of `host` (and `log`) it
//! uses.

#![warn(missing_docs)]

/// Generated bindings, one module per world. The features select which
/// worlds exist; a workspace build may unify several features into one SDK
/// build, so each world keeps its own module and nothing here assumes only
/// one is present.
#[doc(hidden)]
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    #[cfg(feature = "action")]
    pub mod action {
        wit_bindgen::generate!({
            world: "action-handler",
            path: "../../wit",
            pub_export_macro: true,
        });
    }

    #[cfg(feature = "markup")]
    pub mod markup {
        wit_bindgen::generate!({
            world: "markup-renderer",
            path: "../../wit",
            pub_export_macro: true,
            additional_derives: [PartialEq],
        });
    }

    #[cfg(feature = "wait")]
    pub mod wait {
        wit_bindgen::generate!({
            world: "wait-heuristic",
            path: "../../wit",
            pub_export_macro: true,
            additional_derives: [PartialEq],
        });
    }

    #[cfg(feature = "policy")]
    pub mod policy {
        wit_bindgen::generate!({
            world: "approval-policy",
            path: "../../wit",
            pub_export_macro: true,
            additional_derives: [PartialEq],
        });
    }

    #[cfg(feature = "interceptor")]
    pub mod interceptor {
        wit_bindgen::generate!({
            world: "request-interceptor",
            path: "../../wit",
            pub_export_macro: true,
            additional_derives: [PartialEq],
        });
    }
}

mod error;
mod params;

pub use error::{ErrorCode, PluginError};
pub use params::Params;
pub use serde_json::{self, Value, json};

#[cfg(any(feature = "action", feature = "markup", feature = "wait", feature = "policy", feature = "interceptor"))]
pub mod log;

#[cfg(feature = "action")]
mod action;
#[cfg(feature = "action")]
pub mod host;
#[cfg(feature = "action")]
pub use action::{ActionPlugin, ActionSpec, Context};
#[cfg(feature = "action")]
pub use params::{Modifiers, modifier_names, parse_modifiers};

#[cfg(feature = "markup")]
mod markup;
#[cfg(feature = "markup")]
pub use markup::{Color, Element, ElementFlags, LabelShape, LineShape, MarkupPlugin, Rect, RectShape, Shape};

#[cfg(feature = "wait")]
mod wait;
#[cfg(feature = "wait")]
pub use wait::{Decision, RequestInfo, Signal, WaitPlugin, WaitSpec};

#[cfg(feature = "policy")]
mod policy;
#[cfg(feature = "policy")]
pub use policy::{Category, PolicyPlugin, PolicyRequest, Verdict};

#[cfg(feature = "interceptor")]
mod interceptor;
#[cfg(feature = "interceptor")]
pub use interceptor::{Header, InterceptedRequest, InterceptorPlugin, Outcome, Response};

/// Glue used by the export macros; not part of the public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "action")]
    pub use crate::action::glue as action;
    #[cfg(feature = "markup")]
    pub use crate::markup::glue as markup;
    #[cfg(feature = "wait")]
    pub use crate::wait::glue as wait;
    #[cfg(feature = "policy")]
    pub use crate::policy::glue as policy;
    #[cfg(feature = "interceptor")]
    pub use crate::interceptor::glue as interceptor;
}
