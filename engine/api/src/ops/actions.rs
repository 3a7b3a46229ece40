//! Plugin actions (the built-in input actions included) as operations: one
//! per action in the registry, with the input schema its manifest declares
//! plus `tab_id` and the action options. Built-ins keep ABP's short paths
//! (`/tabs/{tab_id}/click`); the rest answer at `/tabs/{tab_id}/actions/{name}`.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use wabp_core::action::action_params;
use wabp_core::plugin::{ActionSpec, PluginRegistry};
use wabp_core::{Error, Result};

use super::{options_among, options_properties, resolve_tab};
use crate::{Category, Ctx, Operation, Output, Scope};

/// The route of any action by name; a plugin action also answers at its own
/// path (`/tabs/{tab_id}/actions/<name>`, or ABP's short one).
pub const ACTION_ROUTE: &str = "/tabs/{tab_id}/actions/{name}";

/// ABP's paths for the built-in input actions.
pub const BUILTIN_PATHS: &[(&str, &str)] = &[
    ("click", "/tabs/{tab_id}/click"),
    ("move", "/tabs/{tab_id}/move"),
    ("hover", "/tabs/{tab_id}/hover"),
    ("drag", "/tabs/{tab_id}/drag"),
    ("mouse_down", "/tabs/{tab_id}/mouse/down"),
    ("mouse_up", "/tabs/{tab_id}/mouse/up"),
    ("scroll", "/tabs/{tab_id}/scroll"),
    ("type", "/tabs/{tab_id}/type"),
    ("fill", "/tabs/{tab_id}/fill"),
    ("keyboard_press", "/tabs/{tab_id}/keyboard/press"),
    ("keyboard_down", "/tabs/{tab_id}/keyboard/down"),
    ("keyboard_up", "/tabs/{tab_id}/keyboard/up"),
    ("keyboard_shortcut", "/tabs/{tab_id}/keyboard/shortcut"),
    ("keyboard_insert", "/tabs/{tab_id}/keyboard/insert"),
];

/// Tool names that read better than `browser_<action>` for the built-ins.
const RENAMED: &[(&str, &str)] = &[
    ("keyboard_press", "browser_press_key"),
    ("keyboard_down", "browser_key_down"),
    ("keyboard_up", "browser_key_up"),
    ("move", "browser_move_mouse"),
    ("keyboard_shortcut", "browser_press_shortcut"),
    ("keyboard_insert", "browser_insert_text"),
];

/// MCP tools outside the catalogue that actions must not shadow (BrowserLoop's
/// `screenshot`, served by the MCP frontend itself).
pub const RESERVED_TOOLS: &[&str] = &["screenshot"];

/// The usual tool name of an action: `browser_<name>` (a few built-ins renamed).
pub fn action_tool_name(action: &str) -> String {
    RENAMED
        .iter()
        .find(|(a, _)| *a == action)
        .map(|(_, t)| t.to_string())
        .unwrap_or_else(|| format!("browser_{action}"))
}

/// Why an action has no tool of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlisted {
    pub action: String,
    pub reason: String,
}

/// Tool names for the registry's actions, in action-name order: the usual
/// one, or `browser_action_<name>` when that is taken by a fixed tool or an
/// earlier action. Actions with no usable name come back in the second list.
pub fn named_actions(
    registry: &dyn PluginRegistry,
    taken: &[&str],
) -> (Vec<(String, ActionSpec)>, Vec<Unlisted>) {
    let mut specs = registry.actions();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut used: HashSet<String> = taken
        .iter()
        .chain(RESERVED_TOOLS)
        .map(|t| t.to_string())
        .collect();
    let (mut named, mut unlisted) = (Vec::with_capacity(specs.len()), Vec::new());
    for spec in specs {
        let preferred = action_tool_name(&spec.name);
        let fallback = format!("browser_action_{}", spec.name);
        let chosen = [preferred.clone(), fallback.clone()]
            .into_iter()
            .find(|name| valid_tool_name(name) && !used.contains(name));
        match chosen {
            Some(name) => {
                used.insert(name.clone());
                named.push((name, spec));
            }
            None => unlisted.push(Unlisted {
                reason: if valid_tool_name(&preferred) {
                    format!("both {preferred} and {fallback} are taken")
                } else {
                    format!(
                        "{preferred:?} is not a valid MCP tool name (1-128 of A-Z a-z 0-9 _ - .)"
                    )
                },
                action: spec.name,
            }),
        }
    }
    (named, unlisted)
}

/// MCP tool names: 1-128 of `A-Za-z0-9_-.`.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn tab_property() -> Value {
    json!({
        "type": "string",
        "description": "Tab id (from GET /tabs, browser_list_tabs or browser_new_tab); over MCP it defaults to the caller's active tab"
    })
}

/// The input schema of an action: its params, `tab_id` and the options.
fn input_schema(spec: &ActionSpec) -> Value {
    let mut properties: Map<String, Value> = spec
        .params_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // The options win over a param of the same name: they are read first.
    properties.extend(options_properties());
    properties.insert("tab_id".into(), tab_property());
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if let Some(required) = spec.params_schema.get("required").filter(|r| r.is_array()) {
        schema.insert("required".into(), required.clone());
    }
    // Keep what else the action's schema says about its params object.
    if let Some(extra) = spec.params_schema.as_object() {
        for (k, v) in extra {
            if !matches!(
                k.as_str(),
                "type" | "properties" | "required" | "additionalProperties" | "$schema"
            ) {
                schema.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    Value::Object(schema)
}

/// Runs action `name` on the input: `tab_id` names the tab, the options
/// are read from it, everything else is the action's params.
async fn run_action(ctx: Ctx, name: String, mut input: Map<String, Value>) -> Result<Output> {
    let tab = match input.remove("tab_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(tab)) => Some(tab),
        Some(_) => return Err(Error::invalid("field \"tab_id\" must be a string")),
    };
    let tab = resolve_tab(&ctx, tab)?;
    let options = options_among(&input, "action_complete")?;
    let body = Value::Object(input);
    let envelope = ctx
        .engine
        .plugin_action(&ctx.caller, &tab, &name, action_params(&body), &options)
        .await?;
    Ok(Output::Envelope(envelope))
}

/// The operation of one action.
pub fn operation(spec: &ActionSpec) -> Operation {
    let name = spec.name.clone();
    let description = if spec.description.is_empty() {
        format!("Plugin action {name}")
    } else {
        spec.description.clone()
    };
    let path = BUILTIN_PATHS
        .iter()
        .find(|(action, _)| *action == name)
        .map(|(_, path)| path.to_string())
        .unwrap_or_else(|| format!("/tabs/{{tab_id}}/actions/{name}"));
    // An action whose params schema admits no other properties gets no
    // other fields (beside the options and the tab).
    let strict = spec.params_schema.get("additionalProperties") == Some(&Value::Bool(false));
    Operation::untyped(
        &format!("action:{name}"),
        &format!(
            "{description} (action `{name}`; returns the before and after screenshots and the action envelope)"
        ),
        input_schema(spec),
        move |ctx, input| run_action(ctx, name.clone(), input),
    )
    .strict_fields(strict)
    .post(&path)
    .scope(Scope::Act)
    .category(action_category(&spec.name))
    .answers_envelope()
}

/// What an action does, for approval policies: typing is input, looking
/// around (scroll, hover, moving the pointer) reads, the rest mutates.
fn action_category(name: &str) -> Category {
    match name {
        "type" | "fill" | "press" | "select" | "upload" => Category::Input,
        n if n.starts_with("keyboard") || n.starts_with("key_") => Category::Input,
        "scroll" | "hover" | "mouse_move" | "move" | "screenshot" => Category::Read,
        "navigate" | "back" | "forward" | "reload" => Category::Navigation,
        _ => Category::Mutation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_action() {
        assert_eq!(action_tool_name("click"), "browser_click");
        assert_eq!(action_tool_name("keyboard_press"), "browser_press_key");
        assert_eq!(action_tool_name("type_greeting"), "browser_type_greeting");
        assert!(!valid_tool_name("browser_a b"));
        assert!(valid_tool_name("browser_a-b.c"));
    }

    #[test]
    fn schema_is_params_plus_tab_and_options() {
        let spec = ActionSpec {
            name: "greet".into(),
            description: "Greets".into(),
            params_schema: json!({"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}}}),
        };
        let op = operation(&spec);
        assert_eq!(op.name, "action:greet");
        assert_eq!(op.rest.unwrap().path, "/tabs/{tab_id}/actions/greet");
        let schema = op.input_schema;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name"]));
        for key in ["name", "tab_id", "wait_until", "screenshot", "network"] {
            assert!(schema["properties"].get(key).is_some(), "{key}: {schema}");
        }
        let click = ActionSpec {
            name: "click".into(),
            ..spec
        };
        assert_eq!(operation(&click).rest.unwrap().path, "/tabs/{tab_id}/click");
    }

    /// Only `actions` matters for naming.
    struct Actions(Vec<&'static str>);

    impl PluginRegistry for Actions {
        fn action(&self, _: &str) -> Option<std::sync::Arc<dyn wabp_core::plugin::ActionHandler>> {
            None
        }
        fn actions(&self) -> Vec<ActionSpec> {
            self.0
                .iter()
                .map(|name| ActionSpec {
                    name: name.to_string(),
                    description: String::new(),
                    params_schema: json!({"type": "object"}),
                })
                .collect()
        }
        fn markup(&self, _: &str) -> Option<std::sync::Arc<dyn wabp_core::plugin::MarkupRenderer>> {
            None
        }
        fn markup_tags(&self) -> Vec<String> {
            Vec::new()
        }
        fn wait(&self, _: &str) -> Option<std::sync::Arc<dyn wabp_core::plugin::WaitHeuristic>> {
            None
        }
        fn waits(&self) -> Vec<wabp_core::plugin::WaitSpec> {
            Vec::new()
        }
        fn plugins(&self) -> Vec<wabp_core::plugin::PluginInfo> {
            Vec::new()
        }
        fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64> {
            tokio::sync::watch::channel(0).1
        }
    }

    #[test]
    fn a_taken_name_falls_back_and_a_bad_one_is_reported() {
        // `navigate` is a fixed tool; `press_key` would clash with the
        // renamed `keyboard_press`; `a b` can't be a tool name.
        let registry = Actions(vec![
            "navigate",
            "keyboard_press",
            "press_key",
            "greet",
            "a b",
        ]);
        let (named, unlisted) = named_actions(&registry, &["browser_navigate"]);
        let names: Vec<(&str, &str)> = named
            .iter()
            .map(|(tool, spec)| (tool.as_str(), spec.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("browser_greet", "greet"),
                ("browser_press_key", "keyboard_press"),
                ("browser_action_navigate", "navigate"),
                ("browser_action_press_key", "press_key"),
            ]
        );
        assert_eq!(unlisted.len(), 1);
        assert_eq!(unlisted[0].action, "a b");
    }
}
