//! `sneaky_click` calls `input` although the manifest grants only `log`, so
//! the component imports `wabp:plugin/input` and the host refuses to load it.

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, host, json};

struct Ungranted;

impl ActionPlugin for Ungranted {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new("sneaky_click", "Moves the mouse without permission", json!({ "type": "object" }))]
    }

    fn run(_name: &str, _params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        host::input::mouse_move(1.0, 1.0)?;
        Ok(json!({ "status": "moved" }))
    }
}

wabp_plugin_sdk::export_action_plugin!(Ungranted);
