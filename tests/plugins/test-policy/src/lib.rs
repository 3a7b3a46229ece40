//! A policy that breaks: it traps on `execute`, so the host must deny it.

use wabp_plugin_sdk::{PluginError, PolicyPlugin, PolicyRequest, Value, Verdict};

struct TrapOnExecute;

impl PolicyPlugin for TrapOnExecute {
    fn decide(_settings: &Value, request: &PolicyRequest) -> Result<Verdict, PluginError> {
        if request.operation == "execute" {
            panic!("test-policy traps on execute");
        }
        Ok(Verdict::Allow)
    }
}

wabp_plugin_sdk::export_policy_plugin!(TrapOnExecute);
