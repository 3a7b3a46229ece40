//! `spin_forever` never returns, so only the host's deadline can stop it.

use std::hint::black_box;

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json, log};

struct Loop;

impl ActionPlugin for Loop {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new("spin_forever", "Loops forever", json!({ "type": "object" }))]
    }

    fn run(_name: &str, _params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        log::info("spinning");
        let mut n: u64 = 0;
        // black_box keeps the optimiser from proving the loop useless.
        loop {
            n = black_box(n.wrapping_add(1));
        }
    }
}

wabp_plugin_sdk::export_action_plugin!(Loop);
