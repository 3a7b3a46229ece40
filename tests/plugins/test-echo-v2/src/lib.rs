//! Version 2 of `test-echo`, for hot-reload tests: `echo_version` returns
//! its version and the params it got.

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json, log};

const VERSION: u32 = 2;

struct Echo;

impl ActionPlugin for Echo {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new("echo_version", "Returns the plugin version and the params", json!({ "type": "object" }))]
    }

    fn run(_name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        log::debug(&format!("echo v{VERSION}"));
        Ok(json!({ "version": VERSION, "params": params }))
    }
}

wabp_plugin_sdk::export_action_plugin!(Echo);
