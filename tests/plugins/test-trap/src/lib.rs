//! `trap_now` panics; on wasm a panic aborts, so the host sees a trap.

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json, log};

struct Trap;

impl ActionPlugin for Trap {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new("trap_now", "Panics", json!({ "type": "object" }))]
    }

    fn run(_name: &str, _params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        log::warn("trapping on purpose");
        panic!("test-trap: trap_now was called");
    }
}

wabp_plugin_sdk::export_action_plugin!(Trap);
