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

/// Why an action has no tool of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlisted {
    pub action: String,
    pub reason: String,
}

/// Tool names for the registry's actions, in action-name order:
/// `browser_<name>`, or `browser_action_<name>` when that is taken by a fixed
/// tool or an earlier action. Actions with no usable name come back in the
/// second list.
pub fn named_actions(registry: &dyn PluginRegistry) -> (Vec<(String, ActionSpec)>, Vec<Unlisted>) {
    let mut specs = registry.actions();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut used: std::collections::HashSet<String> =
        FIXED_TOOLS.iter().map(|t| t.to_string()).collect();
    let (mut named, mut unlisted) = (Vec::with_capacity(specs.len()), Vec::new());
    for spec in specs {
        let preferred = tool_name(&spec.name);
        let fallback = format!("browser_action_{}", spec.name);
        let chosen = [preferred.clone(), fallback.clone()]
            .into_iter()
            .find(|name| valid_name(name) && !used.contains(name));
        match chosen {
            Some(name) => {
                used.insert(name.clone());
                named.push((name, spec));
            }
            None => unlisted.push(Unlisted {
                reason: if valid_name(&preferred) {
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

/// The action a tool name runs, if any action has that tool name now.
pub fn action_for_tool(registry: &dyn PluginRegistry, tool: &str) -> Option<String> {
    named_actions(registry)
        .0
        .into_iter()
        .find(|(name, _)| name == tool)
        .map(|(_, spec)| spec.name)
}

/// MCP tool names: 1-128 of `A-Za-z0-9_-.`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn tool_for(name: String, spec: &ActionSpec) -> Tool {
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
        name,
        format!(
            "{description} (action `{}`; returns the before and after screenshots and the action envelope)",
            spec.name
        ),
        std::sync::Arc::new(schema),
    )
}

/// A tool per action (see `named_actions` for the names).
pub fn plugin_tools(registry: &dyn PluginRegistry) -> Vec<Tool> {
    named_actions(registry)
        .0
        .into_iter()
        .map(|(name, spec)| tool_for(name, &spec))
        .collect()
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
        let tool = tool_for(tool_name(&spec.name), &spec);
        assert_eq!(tool.name, "browser_greet");
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name"]));
        for key in ["name", "tab_id", "wait_until", "screenshot", "network"] {
            assert!(schema["properties"].get(key).is_some(), "{key}: {schema}");
        }
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
        let (named, unlisted) = named_actions(&registry);
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
        assert_eq!(
            action_for_tool(&registry, "browser_action_navigate").as_deref(),
            Some("navigate")
        );
        assert_eq!(
            action_for_tool(&registry, "browser_navigate"),
            None,
            "the fixed tool keeps its name"
        );
        assert_eq!(
            action_for_tool(&registry, "browser_press_key").as_deref(),
            Some("keyboard_press")
        );
        assert_eq!(plugin_tools(&registry).len(), 4);
    }
}
