//! Wait type `test_three_polls`: done("third_poll") on the third poll.

use std::cell::Cell;

use wabp_plugin_sdk::{Decision, PluginError, Signal, Value, WaitPlugin, WaitSpec, json};

thread_local! {
    static POLLS: Cell<u32> = const { Cell::new(0) };
}

struct TestWait;

impl WaitPlugin for TestWait {
    fn waits() -> Vec<WaitSpec> {
        vec![WaitSpec::new("test_three_polls", "Done on the third poll", json!({ "type": "object" }))]
    }

    fn begin(name: &str, _params: Value) -> Result<Decision, PluginError> {
        if name != "test_three_polls" {
            return Err(PluginError::not_found(format!("no wait type \"{name}\"")));
        }
        POLLS.set(0);
        Ok(Decision::Pending(5))
    }

    fn poll(_signals: Vec<Signal>, _elapsed_ms: u64) -> Decision {
        let polls = POLLS.get() + 1;
        POLLS.set(polls);
        if polls >= 3 { Decision::Done("third_poll".into()) } else { Decision::Pending(5) }
    }
}

wabp_plugin_sdk::export_wait_plugin!(TestWait);
