//! Wait plugins: a session per wait, on one instance from `begin` to its
//! last `poll`.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::Value;
use wabp_model::ErrorCode;
use wabp_model::plugin::{PluginFailure, WaitDecision, WaitHeuristic, WaitSession, WaitSignal};

use super::{Exports, LoadedPlugin};
use crate::bindings;
use crate::pool::Warm;

fn wit_decision(d: bindings::wait::exports::wabp::plugin::wait::Decision) -> WaitDecision {
    use bindings::wait::exports::wabp::plugin::wait::Decision;
    match d {
        Decision::Pending(ms) => WaitDecision::Pending {
            recheck_after_ms: ms,
        },
        Decision::Done(reason) => WaitDecision::Done { reason },
    }
}

/// One wait: its instance is held from `begin` to the last `poll`, then
/// goes back to the pool unless a poll failed or was cancelled.
struct PluginWaitSession {
    plugin: Arc<LoadedPlugin>,
    warm: Option<Warm<bindings::wait::WaitHeuristic>>,
    /// False while a poll runs and after one failed.
    reusable: bool,
}

impl Drop for PluginWaitSession {
    fn drop(&mut self) {
        let (Some(warm), Exports::Wait { pool, .. }) = (self.warm.take(), &self.plugin.exports)
        else {
            return;
        };
        if self.reusable {
            pool.give_back(warm);
        } else {
            pool.discard(warm);
        }
    }
}

#[async_trait]
impl WaitSession for PluginWaitSession {
    async fn poll(
        &mut self,
        signals: Vec<WaitSignal>,
        elapsed_ms: u64,
    ) -> std::result::Result<WaitDecision, PluginFailure> {
        use bindings::wait::exports::wabp::plugin::wait::{RequestInfo, Signal};
        let signals: Vec<Signal> = signals
            .into_iter()
            .map(|s| match s {
                WaitSignal::RequestStarted(r) => Signal::RequestStarted(RequestInfo {
                    id: r.id,
                    url: r.url,
                    resource_type: r.resource_type,
                    same_site: r.same_site,
                }),
                WaitSignal::RequestFinished(id) => Signal::RequestFinished(id),
                WaitSignal::NavigationStarted(url) => Signal::NavigationStarted(url),
                WaitSignal::NavigationCommitted(url) => Signal::NavigationCommitted(url),
                WaitSignal::DomContentLoaded => Signal::DomContentLoaded,
                WaitSignal::Load => Signal::Load,
                WaitSignal::DialogOpened => Signal::DialogOpened,
            })
            .collect();
        let plugin = self.plugin.clone();
        let Some(warm) = self.warm.as_mut() else {
            return Err(plugin.failure(ErrorCode::Internal, "wait session already ended"));
        };
        let instance = warm.instance.clone();
        let deadline = Instant::now() + plugin.manifest.timeout();
        self.reusable = false;
        let decision = plugin
            .guarded(&mut warm.store, deadline, |store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_wait()
                        .call_poll(store, &signals, elapsed_ms)
                        .await
                })
            })
            .await?;
        self.reusable = true;
        Ok(wit_decision(decision))
    }
}

/// Wait plugins need an `Arc` of themselves to keep their session alive.
pub struct WaitPlugin(pub Arc<LoadedPlugin>);

#[async_trait]
impl WaitHeuristic for WaitPlugin {
    fn plugin_name(&self) -> &str {
        &self.0.name
    }

    async fn begin(
        &self,
        wait_type: &str,
        params: Value,
    ) -> std::result::Result<(Box<dyn WaitSession>, WaitDecision), PluginFailure> {
        let plugin = &self.0;
        let Exports::Wait { pool, .. } = &plugin.exports else {
            return Err(plugin.failure(ErrorCode::Internal, "not a wait plugin"));
        };
        let (name, params) = (wait_type.to_string(), params.to_string());
        let deadline = Instant::now() + plugin.manifest.timeout();
        let mut lease = plugin.lease(pool, None, deadline).await?;
        let warm = lease.warm();
        let instance = warm.instance.clone();
        let outcome = plugin
            .guarded(&mut warm.store, deadline, |store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_wait()
                        .call_begin(store, &name, &params)
                        .await
                })
            })
            .await?;
        lease.succeeded();
        // A refused `begin` hands its instance back with the lease.
        let decision = outcome.map_err(|e| plugin.plugin_error(e))?;
        Ok((
            Box::new(PluginWaitSession {
                plugin: plugin.clone(),
                warm: Some(lease.keep()),
                reusable: true,
            }),
            wit_decision(decision),
        ))
    }
}
