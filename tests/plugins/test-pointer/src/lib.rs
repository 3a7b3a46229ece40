//! `move_then_read`: a mouse move, then a script that reads what the page's
//! `mousemove` handler recorded, in one dispatch. A move goes ahead of its
//! answer; the read must still come after the page handled it.

use wabp_plugin_sdk::host::{input, script};
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json};

struct Pointer;

impl ActionPlugin for Pointer {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new(
            "move_then_read",
            "Moves the pointer to x, y and answers the page's window.lastMove",
            json!({ "type": "object", "properties": { "x": { "type": "number" }, "y": { "type": "number" } } }),
        )]
    }

    fn run(_name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        let x = params["x"].as_f64().unwrap_or(0.0);
        let y = params["y"].as_f64().unwrap_or(0.0);
        input::mouse_move(x, y)?;
        let seen = script::evaluate("window.lastMove || null")?;
        Ok(json!({ "seen": seen }))
    }
}

wabp_plugin_sdk::export_action_plugin!(Pointer);
