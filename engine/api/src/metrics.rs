//! `GET /metrics`: what an operator of a fleet watches, in the Prometheus
//! text format (OpenMetrics, `prometheus-client`). Counters and histograms
//! are kept as operations run; the gauges (tabs, users, memory, ...) are
//! read from the engine at each scrape.

use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::Output;
use wabp_core::Error;

type Labels<const N: usize> = [(&'static str, String); N];
type Histograms<const N: usize> = Family<Labels<N>, Histogram, fn() -> Histogram>;

/// 1 ms to about 65 s, doubling.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// What the engine is at the moment of a scrape.
#[derive(Debug, Default, Clone)]
pub struct Gauges {
    pub tabs: i64,
    pub users: i64,
    /// Users' own browsers (`--browser-endpoint`).
    pub session_browsers: i64,
    pub in_flight: i64,
    pub ready: bool,
    pub draining: bool,
    pub browser_restarts: i64,
    pub tab_repairs: i64,
    /// What the engine and its browser hold (PSS of the process tree).
    pub memory_bytes: i64,
    /// The memory bound (`--max-memory-mb`).
    pub memory_limit_bytes: i64,
    /// Per plugin: (name, instances created, reused, discarded).
    pub plugins: Vec<(String, i64, i64, i64)>,
}

pub struct Metrics {
    registry: Mutex<Registry>,
    operations: Family<Labels<2>, Counter>,
    operation_seconds: Histograms<1>,
    action_phase_seconds: Histograms<1>,
    policy_refusals: Family<Labels<1>, Counter>,
    http_requests: Family<Labels<3>, Counter>,
    tabs: Gauge,
    users: Gauge,
    session_browsers: Gauge,
    in_flight: Gauge,
    ready: Gauge,
    draining: Gauge,
    browser_restarts: Gauge,
    tab_repairs: Gauge,
    memory_bytes: Gauge,
    memory_limit_bytes: Gauge,
    plugin_instances: Family<Labels<2>, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        let metrics = Metrics {
            registry: Mutex::new(Registry::with_prefix("wabp")),
            operations: Family::default(),
            operation_seconds: Family::new_with_constructor(seconds),
            action_phase_seconds: Family::new_with_constructor(seconds),
            policy_refusals: Family::default(),
            http_requests: Family::default(),
            tabs: Gauge::default(),
            users: Gauge::default(),
            session_browsers: Gauge::default(),
            in_flight: Gauge::default(),
            ready: Gauge::default(),
            draining: Gauge::default(),
            browser_restarts: Gauge::default(),
            tab_repairs: Gauge::default(),
            memory_bytes: Gauge::default(),
            memory_limit_bytes: Gauge::default(),
            plugin_instances: Family::default(),
        };
        {
            let mut r = metrics.registry.lock();
            r.register(
                "operations",
                "Operations run (REST and MCP alike), by operation and result (ok or the error code)",
                metrics.operations.clone(),
            );
            r.register(
                "operation_seconds",
                "Time from an operation's start to its answer",
                metrics.operation_seconds.clone(),
            );
            r.register(
                "action_phase_seconds",
                "Where actions' time went: dispatch, wait, capture (screenshots), markup, encode",
                metrics.action_phase_seconds.clone(),
            );
            r.register(
                "policy_refusals",
                "Operations approval policies refused (denied) or held for a person (approval_required)",
                metrics.policy_refusals.clone(),
            );
            r.register(
                "http_requests",
                "HTTP requests, by method, route and status",
                metrics.http_requests.clone(),
            );
            r.register("tabs", "Open tabs", metrics.tabs.clone());
            r.register(
                "users",
                "Users with a browser context (sessions)",
                metrics.users.clone(),
            );
            r.register(
                "session_browsers",
                "Users' own browsers from a browser service (--browser-endpoint)",
                metrics.session_browsers.clone(),
            );
            r.register(
                "operations_in_flight",
                "Operations running now",
                metrics.in_flight.clone(),
            );
            r.register(
                "ready",
                "1 when the engine takes new sessions",
                metrics.ready.clone(),
            );
            r.register(
                "draining",
                "1 while the engine drains",
                metrics.draining.clone(),
            );
            r.register(
                "browser_restarts",
                "Times the browser died and was started again",
                metrics.browser_restarts.clone(),
            );
            r.register(
                "tab_repairs",
                "Tabs replaced after their page stopped answering",
                metrics.tab_repairs.clone(),
            );
            r.register(
                "memory_bytes",
                "Memory the engine and its browser hold (proportional set size of the process tree)",
                metrics.memory_bytes.clone(),
            );
            r.register(
                "memory_limit_bytes",
                "The memory bound: past it, no new tabs and not ready",
                metrics.memory_limit_bytes.clone(),
            );
            r.register(
                "plugin_instances",
                "Plugin instances by plugin and fate: created, reused, discarded (after a trap, a deadline or a swap)",
                metrics.plugin_instances.clone(),
            );
        }
        metrics
    }
}

impl Metrics {
    /// One operation answered.
    pub fn operation_done(&self, name: &str, elapsed: Duration, outcome: &Result<Output, Error>) {
        let result = match outcome {
            Ok(_) => "ok".to_string(),
            Err(e) => e.code.as_str().to_string(),
        };
        self.operations
            .get_or_create(&[("operation", name.to_string()), ("result", result)])
            .inc();
        self.operation_seconds
            .get_or_create(&[("operation", name.to_string())])
            .observe(elapsed.as_secs_f64());
        if let Ok(Output::Envelope(envelope)) = outcome {
            let parts = &envelope.timing.parts;
            for (phase, ms) in [
                ("dispatch", parts.dispatch_ms),
                ("wait", parts.wait_ms),
                ("capture", parts.capture_ms),
                ("markup", parts.markup_ms),
                ("encode", parts.encode_ms),
            ] {
                self.action_phase_seconds
                    .get_or_create(&[("phase", phase.to_string())])
                    .observe(ms / 1000.0);
            }
        }
        if let Err(e) = outcome {
            let refusal = match e.code {
                wabp_core::ErrorCode::PolicyDenied => Some("denied"),
                wabp_core::ErrorCode::ApprovalRequired => Some("approval_required"),
                _ => None,
            };
            if let Some(verdict) = refusal {
                self.policy_refusals
                    .get_or_create(&[("verdict", verdict.to_string())])
                    .inc();
            }
        }
    }

    /// One HTTP request answered; `route` is the route's template
    /// (`/api/v1/tabs/{tab_id}/click`), never the ids in the path.
    pub fn http_request(&self, method: &str, route: &str, status: u16) {
        self.http_requests
            .get_or_create(&[
                ("method", method.to_string()),
                ("route", route.to_string()),
                ("status", status.to_string()),
            ])
            .inc();
    }

    /// The text a scrape gets, with the gauges as they are now.
    pub fn render(&self, now: &Gauges) -> String {
        self.tabs.set(now.tabs);
        self.users.set(now.users);
        self.session_browsers.set(now.session_browsers);
        self.in_flight.set(now.in_flight);
        self.ready.set(i64::from(now.ready));
        self.draining.set(i64::from(now.draining));
        self.browser_restarts.set(now.browser_restarts);
        self.tab_repairs.set(now.tab_repairs);
        self.memory_bytes.set(now.memory_bytes);
        self.memory_limit_bytes.set(now.memory_limit_bytes);
        self.plugin_instances.clear();
        for (plugin, created, reused, discarded) in &now.plugins {
            for (fate, n) in [
                ("created", created),
                ("reused", reused),
                ("discarded", discarded),
            ] {
                self.plugin_instances
                    .get_or_create(&[("plugin", plugin.clone()), ("fate", fate.to_string())])
                    .set(*n);
            }
        }
        let mut text = String::new();
        // Writing into a String does not fail.
        let _ = encode(&mut text, &self.registry.lock());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_operations_and_renders_the_text_format() {
        let metrics = Metrics::default();
        let ok: Result<Output, Error> = Ok(Output::Json(serde_json::json!({})));
        let denied: Result<Output, Error> =
            Err(Error::new(wabp_core::ErrorCode::PolicyDenied, "no"));
        metrics.operation_done("navigate", Duration::from_millis(30), &ok);
        metrics.operation_done("navigate", Duration::from_millis(40), &ok);
        metrics.operation_done("execute", Duration::from_millis(1), &denied);
        metrics.http_request("POST", "/api/v1/tabs/{tab_id}/navigate", 200);
        let text = metrics.render(&Gauges {
            tabs: 3,
            ready: true,
            plugins: vec![("core-actions".into(), 2, 5, 0)],
            ..Gauges::default()
        });
        for line in [
            "wabp_operations_total{operation=\"navigate\",result=\"ok\"} 2",
            "wabp_operations_total{operation=\"execute\",result=\"POLICY_DENIED\"} 1",
            "wabp_policy_refusals_total{verdict=\"denied\"} 1",
            "wabp_operation_seconds_count{operation=\"navigate\"} 2",
            "wabp_http_requests_total{method=\"POST\",route=\"/api/v1/tabs/{tab_id}/navigate\",status=\"200\"} 1",
            "wabp_tabs 3",
            "wabp_ready 1",
            "wabp_plugin_instances{plugin=\"core-actions\",fate=\"reused\"} 5",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
    }
}
