//! The built-in wait heuristics: `immediate`, `time`, `action_complete`
//! (the default after every action), `navigation` and `network_idle`.

mod machine;

use std::cell::RefCell;

use machine::{ActionComplete, Event, NavigationLoad, NetworkIdle, Settings, Step, Wait};
use wabp_plugin_sdk::{Decision, Params, PluginError, Signal, Value, WaitPlugin, WaitSpec, json};

const MAX_DURATION_MS: u32 = 60_000;
/// `network_idle`'s quiet window, as Playwright's `networkidle` counts it.
const DEFAULT_IDLE_MS: u32 = 500;

thread_local! {
    // The host runs one instance per wait, so one slot is enough.
    static CURRENT: RefCell<Option<Wait>> = const { RefCell::new(None) };
}

struct StandardWaits;

impl WaitPlugin for StandardWaits {
    fn waits() -> Vec<WaitSpec> {
        let d = Settings::default();
        vec![
            WaitSpec::new("immediate", "Returns as soon as the action is dispatched", json!({ "type": "object" })),
            WaitSpec::new(
                "time",
                "Waits a fixed time after the action",
                json!({
                    "type": "object",
                    "properties": { "duration_ms": { "type": "integer", "minimum": 0, "maximum": MAX_DURATION_MS } },
                    "required": ["duration_ms"]
                }),
            ),
            WaitSpec::new(
                "action_complete",
                "Waits until requests and navigations the action started have finished and the page has been quiet \
                 for a moment; a dialog ends the wait at once",
                json!({
                    "type": "object",
                    "properties": {
                        "grace_ms": { "type": "integer", "minimum": 0, "maximum": 10_000, "default": d.grace_ms,
                            "description": "Time for event handlers to start requests or navigations" },
                        "network_cap_ms": { "type": "integer", "minimum": 0, "maximum": 60_000, "default": d.network_cap_ms,
                            "description": "Longest time in-flight same-site requests or a navigation may hold the wait" },
                        "settle_ms": { "type": "integer", "minimum": 0, "maximum": 10_000, "default": d.settle_ms,
                            "description": "Quiet time required after the last activity" }
                    }
                }),
            ),
            WaitSpec::new(
                "navigation",
                "Waits until a navigation of the page has started and loaded (only the timeout ends it otherwise)",
                json!({ "type": "object" }),
            ),
            WaitSpec::new(
                "network_idle",
                "Waits until no request (streams aside) has been in flight for idle_ms",
                json!({
                    "type": "object",
                    "properties": {
                        "idle_ms": { "type": "integer", "minimum": 0, "maximum": 60_000, "default": DEFAULT_IDLE_MS,
                            "description": "Quiet time required with nothing in flight" }
                    }
                }),
            ),
        ]
    }

    fn begin(name: &str, params: Value) -> Result<Decision, PluginError> {
        let mut wait = new_wait(name, &Params::new(params)?)?;
        let step = wait.begin();
        CURRENT.with(|c| *c.borrow_mut() = Some(wait));
        Ok(decision(step))
    }

    fn poll(signals: Vec<Signal>, elapsed_ms: u64) -> Decision {
        let step = CURRENT.with(|c| match c.borrow_mut().as_mut() {
            Some(wait) => wait.poll(signals.into_iter().map(event), elapsed_ms),
            None => Step::Done("not_started"),
        });
        decision(step)
    }
}

/// Builds a wait from the request's `wait_until` object; fields meant for
/// the host (`type`, `timeout_ms`, ...) are ignored.
fn new_wait(name: &str, p: &Params) -> Result<Wait, PluginError> {
    let ms = |field: &str, default: u64, max: u32| -> Result<u64, PluginError> {
        let default = u32::try_from(default).unwrap_or(max);
        match p.optional_u32(field, default) {
            Ok(v) if v <= max => Ok(u64::from(v)),
            _ => Err(PluginError::invalid(format!("\"{field}\" must be an integer from 0 to {max}"))),
        }
    };
    match name {
        "immediate" => Ok(Wait::Immediate),
        "time" => {
            if p.get("duration_ms").is_none() {
                return Err(PluginError::invalid(format!("\"duration_ms\" is required and must be an integer from 0 to {MAX_DURATION_MS}")));
            }
            Ok(Wait::Time { duration_ms: ms("duration_ms", 0, MAX_DURATION_MS)? })
        }
        "action_complete" => {
            let d = Settings::default();
            Ok(Wait::ActionComplete(ActionComplete::new(Settings {
                grace_ms: ms("grace_ms", d.grace_ms, 10_000)?,
                network_cap_ms: ms("network_cap_ms", d.network_cap_ms, 60_000)?,
                settle_ms: ms("settle_ms", d.settle_ms, 10_000)?,
            })))
        }
        "navigation" => Ok(Wait::Navigation(NavigationLoad::default())),
        "network_idle" => Ok(Wait::NetworkIdle(NetworkIdle::new(ms("idle_ms", u64::from(DEFAULT_IDLE_MS), 60_000)?))),
        other => Err(PluginError::not_found(format!("standard-waits has no wait type \"{other}\""))),
    }
}

fn event(signal: Signal) -> Event {
    match signal {
        Signal::RequestStarted(r) => Event::RequestStarted { id: r.id, resource_type: r.resource_type, same_site: r.same_site },
        Signal::RequestFinished(id) => Event::RequestFinished(id),
        Signal::NavigationStarted(_) => Event::NavigationStarted,
        Signal::NavigationCommitted(_) => Event::NavigationCommitted,
        Signal::DomContentLoaded => Event::DomContentLoaded,
        Signal::Load => Event::Load,
        Signal::DialogOpened => Event::DialogOpened,
    }
}

fn decision(step: Step) -> Decision {
    match step {
        Step::Pending(ms) => Decision::Pending(ms),
        Step::Done(reason) => Decision::Done(reason.to_string()),
    }
}

wabp_plugin_sdk::export_wait_plugin!(StandardWaits);

#[cfg(test)]
mod tests {
    use super::*;

    fn begin(name: &str, params: Value) -> Result<Decision, PluginError> {
        StandardWaits::begin(name, params)
    }

    #[test]
    fn params_are_validated_and_extra_fields_ignored() {
        let d = begin("time", json!({"type": "time", "timeout_ms": 9000, "duration_ms": 40})).unwrap();
        assert_eq!(d, Decision::Pending(40));
        assert_eq!(StandardWaits::poll(vec![], 40), Decision::Done("time_elapsed".into()));
        for bad in [json!({}), json!({"duration_ms": -1}), json!({"duration_ms": 60_001}), json!({"duration_ms": "5"})] {
            let e = begin("time", bad).unwrap_err();
            assert_eq!(e.code, wabp_plugin_sdk::ErrorCode::InvalidRequest);
            assert!(e.message.contains("duration_ms"), "{}", e.message);
        }
        assert!(begin("action_complete", json!({"type": "action_complete", "settle_ms": 20_000})).is_err());
        assert_eq!(begin("nope", json!({})).unwrap_err().code, wabp_plugin_sdk::ErrorCode::NotFound);
    }

    #[test]
    fn signals_drive_action_complete() {
        assert_eq!(begin("action_complete", json!({"type": "action_complete", "timeout_ms": 30000})).unwrap(), Decision::Pending(100));
        let req = wabp_plugin_sdk::RequestInfo { id: "1".into(), url: "https://a.test/x".into(), resource_type: "Fetch".into(), same_site: true };
        assert_eq!(StandardWaits::poll(vec![Signal::RequestStarted(req)], 10), Decision::Pending(100));
        assert_eq!(StandardWaits::poll(vec![Signal::DialogOpened], 20), Decision::Done("dialog".into()));
        assert_eq!(begin("immediate", json!(null)).unwrap(), Decision::Done("immediate".into()));
    }
}
