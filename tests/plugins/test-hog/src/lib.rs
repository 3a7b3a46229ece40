//! `eat_memory` allocates 1 MiB blocks until the host's memory limit makes
//! an allocation fail, which aborts (traps).

use std::hint::black_box;

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json, log};

struct Hog;

impl ActionPlugin for Hog {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new("eat_memory", "Allocates memory without bound", json!({ "type": "object" }))]
    }

    fn run(_name: &str, _params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        log::info("eating memory");
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            // Written, not just reserved, so the pages are really used.
            let mut block = vec![0u8; 1 << 20];
            block.fill(0xA5);
            hoard.push(black_box(block));
        }
    }
}

wabp_plugin_sdk::export_action_plugin!(Hog);
