//! `count` adds one to a global and returns it: on a warm instance the count
//! goes on, on a fresh one it starts again at 1. `count_then_trap` counts,
//! then panics, so its instance must not be reused.

use std::sync::atomic::{AtomicU32, Ordering};

use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, PluginError, Value, json};

static CALLS: AtomicU32 = AtomicU32::new(0);

struct Counter;

impl ActionPlugin for Counter {
    fn actions() -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("count", "Counts calls on this instance", json!({ "type": "object" })),
            ActionSpec::new("count_then_trap", "Counts, then panics", json!({ "type": "object" })),
        ]
    }

    fn run(name: &str, _params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        if name == "count_then_trap" {
            panic!("test-counter: trapping after call {calls}");
        }
        Ok(json!({ "calls": calls }))
    }
}

wabp_plugin_sdk::export_action_plugin!(Counter);
