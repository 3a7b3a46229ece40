//! One MCP tool per plugin action (the built-in input actions included):
//! its input schema is the action's params schema plus `tab_id` and the
//! common action options. The set follows the registry; a hot reload that
//! changes it sends `notifications/tools/list_changed`.

use rmcp::model::Tool;
use serde_json::{Map, Value};
use wabp_core::plugin::{ActionSpec, PluginRegistry};

use crate::tools::{FIXED_TOOLS, action_properties, object_schema};

/// Tool names that read better than `browser_<action>` for the built-ins.
const RENAMED: &[(&str, &str)] = &[
    ("keyboard_press", "browser_press_key"),
    ("keyboard_down", "browser_key_down"),
    ("keyboard_up", "browser_key_up"),
    ("move", "browser_move_mouse"),
];

/// The tool name of an action: `browser_<name>` (a few built-ins renamed).
pub fn tool_name(action: &str) -> String {
    RENAMED
        .iter()
        .find(|(a, _)| *a == action)
        .map(|(_, t)| t.to_string())
        .unwrap_or_else(|| format!("browser_{action}"))
}

/// The action a tool name runs, if any action has that tool name now.
pub fn action_for_tool(registry: &dyn PluginRegistry, tool: &str) -> Option<String> {
    if FIXED_TOOLS.contains(&tool) {
        return None;
    }
    registry
        .actions()
        .into_iter()
        .map(|spec| spec.name)
        .find(|name| tool_name(name) == tool && valid_name(tool))
}

/// MCP tool names: 1-128 of `A-Za-z0-9_-.`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn tool_for(spec: &ActionSpec) -> Tool {
    let mut properties: Map<String, Value> = spec
        .params_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // The options win over a param of the same name: they are read first.
    properties.extend(action_properties());
    let required: Vec<&str> = spec
        .params_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut schema = (*object_schema(properties, &required)).clone();
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
    let description = if spec.description.is_empty() {
        format!("Plugin action {}", spec.name)
    } else {
        spec.description.clone()
    };
    Tool::new(
        tool_name(&spec.name),
        format!(
            "{description} (action `{}`; returns the before and after screenshots and the action envelope)",
            spec.name
        ),
        std::sync::Arc::new(schema),
    )
}

/// A tool per action, skipping names that collide with a fixed tool or are
/// not valid MCP tool names (logged once per listing).
pub fn plugin_tools(registry: &dyn PluginRegistry) -> Vec<Tool> {
    let mut specs = registry.actions();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut tools = Vec::with_capacity(specs.len());
    for spec in &specs {
        let name = tool_name(&spec.name);
        if FIXED_TOOLS.contains(&name.as_str()) {
            tracing::debug!(action = %spec.name, "action not listed as a tool: its name is taken by a fixed tool");
            continue;
        }
        if !valid_name(&name) {
            tracing::debug!(action = %spec.name, "action not listed as a tool: not a valid MCP tool name");
            continue;
        }
        tools.push(tool_for(spec));
    }
    tools
}

/// What the tool list depends on, to tell a real change from a reload that
/// changed nothing a client sees.
pub fn fingerprint(registry: &dyn PluginRegistry) -> String {
    let mut specs = registry.actions();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    serde_json::to_string(&specs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_action() {
        assert_eq!(tool_name("click"), "browser_click");
        assert_eq!(tool_name("keyboard_press"), "browser_press_key");
        assert_eq!(tool_name("type_greeting"), "browser_type_greeting");
        assert!(!valid_name("browser_a b"));
        assert!(valid_name("browser_a-b.c"));
    }

    #[test]
    fn schema_is_params_plus_tab_and_options() {
        let spec = ActionSpec {
            name: "greet".into(),
            description: "Greets".into(),
            params_schema: json!({"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}}}),
        };
        let tool = tool_for(&spec);
        assert_eq!(tool.name, "browser_greet");
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name"]));
        for key in ["name", "tab_id", "wait_until", "screenshot", "network"] {
            assert!(schema["properties"].get(key).is_some(), "{key}: {schema}");
        }
    }
}
