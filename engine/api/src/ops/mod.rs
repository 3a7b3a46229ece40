//! The operations, one module per resource. Each `operations()` declares
//! its operations once; `fixed()` gathers them. Shared input pieces (the
//! tab an operation names, the action options) live here.

pub mod actions;
mod agent;
mod browser;
mod browser_tool;
pub mod capture;
mod cookies;
pub(crate) mod history;
mod network;
mod observe;
mod page;
mod prompts;
mod tabs;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use wabp_core::{ActionOptions, Error, Result};

use crate::{Ctx, Operation, Output};

/// Every fixed operation (plugin actions join at run time).
pub fn fixed() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(browser::operations());
    all.extend(cookies::operations());
    all.extend(tabs::operations());
    all.extend(page::operations());
    all.extend(prompts::operations());
    all.extend(observe::operations());
    all.extend(network::operations());
    all.extend(history::operations());
    all.extend(agent::operations());
    all.extend(browser_tool::operations());
    all.extend(capture::operations());
    all
}

/// The tab an operation acts on: named, or the caller's active tab.
pub(crate) fn resolve_tab(ctx: &Ctx, tab_id: Option<String>) -> Result<String> {
    match tab_id {
        Some(id) if !id.is_empty() => Ok(id),
        _ => ctx.engine.active_tab(&ctx.caller).ok_or_else(|| {
            Error::invalid(
                "no tab_id given and no active tab; list the tabs or open one first (GET /tabs, browser_list_tabs, browser_new_tab)",
            )
        }),
    }
}

/// The tab field of every tab operation (REST: the `{tab_id}` of the path).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct TabRef {
    /// Tab id (from `GET /tabs`, `browser_list_tabs` or `browser_new_tab`);
    /// over MCP it defaults to the caller's active tab.
    #[serde(default, deserialize_with = "crate::input::tab_id")]
    pub tab_id: Option<String>,
}

impl TabRef {
    pub fn resolve(self, ctx: &Ctx) -> Result<String> {
        resolve_tab(ctx, self.tab_id)
    }
}

/// The options every action takes, decoded and documented from the
/// core's types; `resolve` checks them (the same rules for every frontend).
pub(crate) use wabp_core::action::OptionsInput as Options;

/// Checks the options an operation decoded, with its default wait.
pub(crate) trait ResolveOptions {
    fn resolve(self, default_wait: &'static str) -> Result<ActionOptions>;
}

impl ResolveOptions for Options {
    fn resolve(self, default_wait: &'static str) -> Result<ActionOptions> {
        ActionOptions::try_from(self.waiting(default_wait))
    }
}

/// The options among an input's fields (an input whose other fields are
/// not known until run time: plugin actions, browser-use actions).
pub(crate) fn options_among(
    fields: &Map<String, Value>,
    default_wait: &'static str,
) -> Result<ActionOptions> {
    let options: Map<String, Value> = ["wait_until", "screenshot", "network"]
        .into_iter()
        .filter_map(|key| fields.get(key).map(|v| (key.to_string(), v.clone())))
        .collect();
    crate::input::decode::<Options>(Value::Object(options))?.resolve(default_wait)
}

/// The options schema's properties, for inputs built by hand (plugin
/// actions).
pub(crate) fn options_properties() -> Map<String, Value> {
    let schema = crate::input::schema_of::<Options>();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Catalogue operation `name` among `fixed`, or the plugin action of an
/// `action:<name>`.
pub(crate) fn find_operation(
    fixed: &[Operation],
    registry: &dyn wabp_core::plugin::PluginRegistry,
    name: &str,
) -> Result<Operation> {
    match name.strip_prefix("action:") {
        Some(action) => Ok(actions::operation(
            &registry
                .actions()
                .into_iter()
                .find(|spec| spec.name == action)
                .ok_or_else(|| {
                    Error::new(
                        wabp_core::ErrorCode::NotFound,
                        format!("no action {action:?} is loaded"),
                    )
                })?,
        )),
        None => fixed
            .iter()
            .find(|o| o.name == name)
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    wabp_core::ErrorCode::NotFound,
                    format!("no operation {name:?}"),
                )
            }),
    }
}

/// Runs catalogue operation `name` (a plugin action: `action:<name>`) as
/// `ctx`'s caller, through its door: what the agent loop and the browser
/// tool do for each step.
pub(crate) async fn run_operation(ctx: &Ctx, name: &str, input: Value) -> Result<Output> {
    find_operation(&fixed(), ctx.engine.registry().as_ref(), name)?
        .run(ctx.clone(), input)
        .await
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| Error::internal(e.to_string()))
}

pub(crate) fn json(value: Value) -> Result<Output> {
    Ok(Output::Json(value))
}

/// A typed answer, as JSON.
pub(crate) fn typed<T: serde::Serialize>(value: &T) -> Result<Output> {
    json(to_json(value)?)
}

/// An input with nothing in it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct Nothing {}
