//! The plugins that gate what the engine does: approval policies (asked
//! before every operation, fail closed) and request interceptors (asked
//! about requests, fail open).

use std::sync::Arc;

use async_trait::async_trait;
use wabp_model::ErrorCode;
use wabp_model::plugin::{
    ApprovalPolicy, Category, InterceptOutcome, InterceptedRequest, PluginFailure, PolicyRequest,
    RequestInterceptor, Verdict,
};

use super::{Exports, LoadedPlugin};
use crate::bindings;

/// Policy plugins, asked before every operation. A failed call is recorded
/// (`GET /plugins` shows it) and returned: the caller denies.
pub struct PolicyPlugin(pub Arc<LoadedPlugin>);

#[async_trait]
impl ApprovalPolicy for PolicyPlugin {
    fn plugin_name(&self) -> &str {
        &self.0.name
    }

    async fn decide(
        &self,
        settings: &str,
        request: &PolicyRequest,
    ) -> std::result::Result<Verdict, PluginFailure> {
        use bindings::policy::exports::wabp::plugin::policy as wit;
        let plugin = &self.0;
        let Exports::Policy { pool } = &plugin.exports else {
            return Err(plugin.failure(ErrorCode::Internal, "not a policy plugin"));
        };
        let request = wit::Request {
            category: match request.category {
                Category::Navigation => wit::Category::Navigation,
                Category::Mutation => wit::Category::Mutation,
                Category::Input => wit::Category::Input,
                Category::Script => wit::Category::Script,
                Category::Read => wit::Category::Read,
                Category::Lifecycle => wit::Category::Lifecycle,
            },
            operation: request.operation.clone(),
            target_url: request.target_url.clone(),
            tab_url: request.tab_url.clone(),
            user: request.user.clone(),
        };
        let settings = settings.to_string();
        let answer = plugin
            .call(pool, None, |instance, store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_policy()
                        .call_decide(store, &settings, &request)
                        .await
                })
            })
            .await
            .and_then(|outcome| outcome.map_err(|e| plugin.plugin_error(e)));
        match answer {
            Ok(verdict) => Ok(match verdict {
                wit::Verdict::Allow => Verdict::Allow,
                wit::Verdict::Deny(reason) => Verdict::Deny(reason),
                wit::Verdict::Ask(prompt) => Verdict::Ask(prompt),
            }),
            Err(failure) => {
                // Kept until the plugin is reloaded: a denial's cause.
                plugin.remember_failure(&failure, "the operation was denied");
                Err(failure)
            }
        }
    }
}

/// Interceptor plugins, asked about every request no rule answered. A
/// failed call is recorded (`GET /plugins` shows it) and returned: the
/// request goes on unchanged.
pub struct InterceptorPlugin(pub Arc<LoadedPlugin>);

#[async_trait]
impl RequestInterceptor for InterceptorPlugin {
    fn plugin_name(&self) -> &str {
        &self.0.name
    }

    async fn intercept(
        &self,
        request: &InterceptedRequest,
    ) -> std::result::Result<InterceptOutcome, PluginFailure> {
        use bindings::interceptor::exports::wabp::plugin::interceptor as wit;
        let plugin = &self.0;
        let Exports::Interceptor { pool } = &plugin.exports else {
            return Err(plugin.failure(ErrorCode::Internal, "not an interceptor plugin"));
        };
        let headers = |list: &[(String, String)]| -> Vec<wit::Header> {
            list.iter()
                .map(|(name, value)| wit::Header {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect()
        };
        let request = wit::Request {
            url: request.url.clone(),
            method: request.method.clone(),
            headers: headers(&request.headers),
            resource_type: request.resource_type.clone(),
            tab_url: request.tab_url.clone(),
            user: request.user.clone(),
        };
        let answer = plugin
            .call(pool, None, |instance, store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_interceptor()
                        .call_intercept(store, &request)
                        .await
                })
            })
            .await
            .and_then(|outcome| outcome.map_err(|e| plugin.plugin_error(e)));
        let pairs = |list: Vec<wit::Header>| -> Vec<(String, String)> {
            list.into_iter().map(|h| (h.name, h.value)).collect()
        };
        match answer {
            Ok(wit::Outcome::Proceed(set)) => Ok(InterceptOutcome::Proceed(pairs(set))),
            Ok(wit::Outcome::Fulfill(response)) => Ok(InterceptOutcome::Fulfill {
                status: response.status,
                headers: pairs(response.headers),
                body: response.body,
            }),
            Ok(wit::Outcome::Abort(reason)) => Ok(InterceptOutcome::Abort(reason)),
            Err(failure) => {
                plugin.remember_failure(&failure, "the request went on unchanged");
                Err(failure)
            }
        }
    }
}
