//! A compiled, described plugin version, and the core plugin traits over it.
//! Calls run on warm instances from the version's pool (`pool.rs`); a trap,
//! a missed deadline or a cancelled call drops its instance.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use wabp_model::ErrorCode;
use wabp_model::plugin::{
    ActionContext, ActionHandler, ActionSpec, PageHost, PluginFailure, WaitSpec,
};
use wasmtime::Store;
use wasmtime::component::Component;

use crate::bindings::{self, types};
use crate::error::{Error, Result};
use crate::host::HostState;
use crate::manifest::{Capability, Kind, Manifest};
use crate::pool::{BoxFuture, Instantiate, Lease, Pool, Warm};
use crate::runtime::{DEADLINE_TRAP, Runtime, limits};

mod gates;
mod markup;
mod wait;

pub use gates::{InterceptorPlugin, PolicyPlugin};
pub use wait::WaitPlugin;

type ActionPool = Pool<bindings::action::ActionHandlerPre<HostState>>;
type MarkupPool = Pool<bindings::markup::MarkupRendererPre<HostState>>;
type WaitPool = Pool<bindings::wait::WaitHeuristicPre<HostState>>;
type PolicyPool = Pool<bindings::policy::ApprovalPolicyPre<HostState>>;
type InterceptorPool = Pool<bindings::interceptor::RequestInterceptorPre<HostState>>;

pub enum Exports {
    Action {
        pool: ActionPool,
        specs: Vec<ActionSpec>,
    },
    Markup {
        pool: MarkupPool,
        tags: Vec<String>,
    },
    Wait {
        pool: WaitPool,
        specs: Vec<WaitSpec>,
    },
    Policy {
        pool: PolicyPool,
    },
    Interceptor {
        pool: InterceptorPool,
    },
}

/// Everything about a plugin version but its exports: enough to run calls.
pub struct PluginBase {
    pub manifest: Manifest,
    pub name: Arc<str>,
    /// Why the last failed call failed, if one did (shown by `GET /plugins`).
    pub last_failure: parking_lot::Mutex<Option<String>>,
    grants: HashSet<Capability>,
    runtime: Arc<Runtime>,
}

pub struct LoadedPlugin {
    pub base: PluginBase,
    pub hash: [u8; 32],
    pub exports: Exports,
}

impl std::ops::Deref for LoadedPlugin {
    type Target = PluginBase;
    fn deref(&self) -> &PluginBase {
        &self.base
    }
}

fn load_error(plugin: &str, message: impl Into<String>) -> Error {
    Error::Load {
        plugin: plugin.into(),
        message: message.into(),
    }
}

/// Refuses a component that imports an interface its manifest doesn't grant.
fn check_imports(runtime: &Runtime, manifest: &Manifest, component: &Component) -> Result<()> {
    for import in runtime.imports(component) {
        if let Some(rest) = import.strip_prefix("wabp:plugin/") {
            let interface = rest.split('@').next().unwrap_or(rest);
            if interface == "types" {
                continue;
            }
            let granted = Capability::from_interface(interface).is_some_and(|c| manifest.grants(c));
            if !granted {
                return Err(Error::Ungranted {
                    plugin: manifest.name.clone(),
                    interface: format!("wabp:plugin/{interface}"),
                    granted: manifest
                        .capabilities
                        .iter()
                        .map(|c| format!("\"{}\"", c.interface()))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        } else if !import.starts_with("wasi:") {
            return Err(load_error(
                &manifest.name,
                format!("imports {import}, which the host does not provide"),
            ));
        }
    }
    Ok(())
}

fn is_action_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn parse_schema(plugin: &str, what: &str, text: &str) -> Result<Value> {
    let schema: Value = serde_json::from_str(text)
        .map_err(|e| load_error(plugin, format!("{what}: params schema is not JSON: {e}")))?;
    if !schema.is_object() {
        return Err(load_error(
            plugin,
            format!("{what}: params schema must be a JSON object"),
        ));
    }
    Ok(schema)
}

/// An action plugin's own account of its actions, checked: snake_case
/// names, object schemas.
fn action_specs(
    plugin: &str,
    described: Vec<bindings::action::exports::wabp::plugin::action::ActionSpec>,
) -> Result<Vec<ActionSpec>> {
    let mut specs = Vec::new();
    for spec in described {
        if !is_action_name(&spec.name) {
            return Err(load_error(
                plugin,
                format!(
                    "action name {:?} must be snake_case ([a-z0-9_], ≤ 64)",
                    spec.name
                ),
            ));
        }
        let schema = parse_schema(plugin, &spec.name, &spec.params_schema)?;
        specs.push(ActionSpec {
            name: spec.name,
            description: spec.description,
            params_schema: schema,
        });
    }
    Ok(specs)
}

/// A wait plugin's own account of its wait types, their schemas checked.
fn wait_specs(
    plugin: &str,
    described: Vec<bindings::wait::exports::wabp::plugin::wait::WaitSpec>,
) -> Result<Vec<WaitSpec>> {
    let mut specs = Vec::new();
    for spec in described {
        let schema = parse_schema(plugin, &spec.name, &spec.params_schema)?;
        specs.push(WaitSpec {
            name: spec.name,
            description: spec.description,
            params_schema: schema,
        });
    }
    Ok(specs)
}

impl LoadedPlugin {
    /// Compiles (blocking), checks imports against grants, pre-instantiates
    /// and asks the plugin to describe itself.
    pub async fn load(
        runtime: Arc<Runtime>,
        manifest: Manifest,
        bytes: Vec<u8>,
    ) -> Result<LoadedPlugin> {
        let name: Arc<str> = manifest.name.as_str().into();
        let compiled = {
            let runtime = runtime.clone();
            let name = name.clone();
            tokio::task::spawn_blocking(move || runtime.compile(&name, &bytes))
                .await
                .map_err(|e| load_error(&manifest.name, format!("compile task: {e}")))??
        };
        let (hash, component) = compiled;
        check_imports(&runtime, &manifest, &component)?;
        let grants: HashSet<Capability> = manifest.capabilities.iter().copied().collect();
        let plugin = PluginBase {
            manifest,
            name,
            last_failure: Default::default(),
            grants,
            runtime: runtime.clone(),
        };
        let kind = plugin.manifest.kind;
        let link_error = |e: wasmtime::Error| {
            load_error(
                &plugin.name,
                format!("does not fit the {} world: {e}", kind.as_str()),
            )
        };
        let warm = plugin.manifest.warm_instances();
        let exports = match kind {
            Kind::Action => {
                let pre = runtime
                    .action_linker
                    .instantiate_pre(&component)
                    .map_err(link_error)?;
                let pool = Pool::new(
                    bindings::action::ActionHandlerPre::new(pre).map_err(link_error)?,
                    warm,
                );
                let described = plugin
                    .call(&pool, None, |instance, store| {
                        Box::pin(
                            async move { instance.wabp_plugin_action().call_describe(store).await },
                        )
                    })
                    .await
                    .map_err(|f| describe_failed(&plugin.name, f))?;
                let specs = action_specs(&plugin.name, described)?;
                Exports::Action { pool, specs }
            }
            Kind::Markup => {
                let pre = runtime
                    .markup_linker
                    .instantiate_pre(&component)
                    .map_err(link_error)?;
                let pool = Pool::new(
                    bindings::markup::MarkupRendererPre::new(pre).map_err(link_error)?,
                    warm,
                );
                let tags = plugin
                    .call(&pool, None, |instance, store| {
                        Box::pin(
                            async move { instance.wabp_plugin_markup().call_describe(store).await },
                        )
                    })
                    .await
                    .map_err(|f| describe_failed(&plugin.name, f))?;
                Exports::Markup { pool, tags }
            }
            Kind::Wait => {
                let pre = runtime
                    .wait_linker
                    .instantiate_pre(&component)
                    .map_err(link_error)?;
                let pool = Pool::new(
                    bindings::wait::WaitHeuristicPre::new(pre).map_err(link_error)?,
                    warm,
                );
                let described = plugin
                    .call(&pool, None, |instance, store| {
                        Box::pin(
                            async move { instance.wabp_plugin_wait().call_describe(store).await },
                        )
                    })
                    .await
                    .map_err(|f| describe_failed(&plugin.name, f))?;
                let specs = wait_specs(&plugin.name, described)?;
                Exports::Wait { pool, specs }
            }
            Kind::Policy => {
                let pre = runtime
                    .policy_linker
                    .instantiate_pre(&component)
                    .map_err(link_error)?;
                let pool = Pool::new(
                    bindings::policy::ApprovalPolicyPre::new(pre).map_err(link_error)?,
                    warm,
                );
                Exports::Policy { pool }
            }
            Kind::Interceptor => {
                let pre = runtime
                    .interceptor_linker
                    .instantiate_pre(&component)
                    .map_err(link_error)?;
                let pool = Pool::new(
                    bindings::interceptor::RequestInterceptorPre::new(pre).map_err(link_error)?,
                    warm,
                );
                Exports::Interceptor { pool }
            }
        };
        Ok(LoadedPlugin {
            base: plugin,
            hash,
            exports,
        })
    }
}

impl LoadedPlugin {
    /// What this version provides: action names, markup tags or wait types.
    pub fn provides(&self) -> Vec<String> {
        match &self.exports {
            Exports::Action { specs, .. } => specs.iter().map(|s| s.name.clone()).collect(),
            Exports::Markup { tags, .. } => tags.clone(),
            Exports::Wait { specs, .. } => specs.iter().map(|s| s.name.clone()).collect(),
            Exports::Policy { .. } => vec!["policy".into()],
            Exports::Interceptor { .. } => vec!["interceptor".into()],
        }
    }

    /// How this version's instances have been used.
    pub fn instance_stats(&self) -> wabp_model::plugin::InstanceStats {
        match &self.exports {
            Exports::Action { pool, .. } => pool.stats(),
            Exports::Markup { pool, .. } => pool.stats(),
            Exports::Wait { pool, .. } => pool.stats(),
            Exports::Policy { pool } => pool.stats(),
            Exports::Interceptor { pool } => pool.stats(),
        }
    }
}

fn describe_failed(plugin: &str, failure: PluginFailure) -> Error {
    load_error(plugin, format!("describe failed: {}", failure.message))
}

impl PluginBase {
    /// Keeps a failed call's cause, and what the host did about it, for
    /// `GET /plugins` until the plugin is reloaded.
    fn remember_failure(&self, failure: &PluginFailure, consequence: &str) {
        *self.last_failure.lock() = Some(format!(
            "{} (at {} ms since the epoch; {consequence})",
            failure.message,
            wabp_model::clock::now_ms() as u64
        ));
    }

    fn store(&self, page: Option<Arc<dyn PageHost>>, deadline: Instant) -> Store<HostState> {
        self.runtime.store(HostState::new(
            self.name.clone(),
            self.grants.clone(),
            page,
            limits(self.manifest.memory_bytes()),
            deadline,
        ))
    }

    fn failure(&self, code: ErrorCode, message: impl Into<String>) -> PluginFailure {
        PluginFailure {
            plugin: self.name.to_string(),
            code,
            message: message.into(),
        }
    }

    /// Turns a trap into an error that says what happened.
    fn trap_failure(&self, error: wasmtime::Error) -> PluginFailure {
        let text = format!("{error:?}");
        let message = if text.contains(DEADLINE_TRAP) {
            format!(
                "stopped: exceeded its {} ms deadline",
                self.manifest.timeout().as_millis()
            )
        } else if text.contains("growing memory")
            || text.contains("memory.grow")
            || text.contains("out of memory")
        {
            format!(
                "stopped: exceeded its {} MiB memory limit",
                self.manifest.memory_bytes() >> 20
            )
        } else if let Some(trap) = error.downcast_ref::<wasmtime::Trap>() {
            format!("trapped: {trap}")
        } else {
            format!("failed: {}", error.root_cause())
        };
        self.failure(ErrorCode::PluginFailed, message)
    }

    /// Runs a call on `store` with the deadline enforced twice: by the epoch
    /// callback inside wasm, and by a timer around host awaits.
    async fn guarded<R>(
        &self,
        store: &mut Store<HostState>,
        deadline: Instant,
        call: impl for<'s> FnOnce(&'s mut Store<HostState>) -> BoxFuture<'s, wasmtime::Result<R>>,
    ) -> std::result::Result<R, PluginFailure> {
        let limit = self.manifest.timeout();
        store.data_mut().deadline = deadline;
        store.set_epoch_deadline(1);
        let timer = deadline.saturating_duration_since(Instant::now()) + Duration::from_millis(250);
        match tokio::time::timeout(timer, call(store)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(self.trap_failure(error)),
            Err(_) => Err(self.failure(
                ErrorCode::PluginFailed,
                format!("stopped: exceeded its {} ms deadline", limit.as_millis()),
            )),
        }
    }

    /// An instance for one call: a warm one bound to `page`, or a new one
    /// made within the call's deadline.
    async fn lease<'p, P: Instantiate>(
        &self,
        pool: &'p Pool<P>,
        page: Option<Arc<dyn PageHost>>,
        deadline: Instant,
    ) -> std::result::Result<Lease<'p, P>, PluginFailure> {
        if let Some(mut warm) = pool.take() {
            warm.store.data_mut().page = page;
            return Ok(Lease::new(pool, warm));
        }
        let mut store = self.store(page, deadline);
        let instance = self
            .guarded(&mut store, deadline, |store| pool.pre.instantiate(store))
            .await?;
        pool.note_created();
        Ok(Lease::new(
            pool,
            Warm {
                store,
                instance: Arc::new(instance),
            },
        ))
    }

    /// One call on an instance of `pool`, under the manifest's deadline
    /// (instantiation included); the instance goes back warm if the call
    /// returned, even with a plugin error.
    async fn call<P: Instantiate, R>(
        &self,
        pool: &Pool<P>,
        page: Option<Arc<dyn PageHost>>,
        call: impl for<'s> FnOnce(
            Arc<P::Instance>,
            &'s mut Store<HostState>,
        ) -> BoxFuture<'s, wasmtime::Result<R>>,
    ) -> std::result::Result<R, PluginFailure> {
        let deadline = Instant::now() + self.manifest.timeout();
        let mut lease = self.lease(pool, page, deadline).await?;
        let warm = lease.warm();
        let instance = warm.instance.clone();
        let value = self
            .guarded(&mut warm.store, deadline, |store| call(instance, store))
            .await?;
        lease.succeeded();
        Ok(value)
    }

    fn plugin_error(&self, e: types::PluginError) -> PluginFailure {
        use types::ErrorCode as W;
        let code = match e.code {
            W::InvalidRequest => ErrorCode::InvalidRequest,
            W::NotFound => ErrorCode::NotFound,
            W::SelectorNotFound => ErrorCode::SelectorNotFound,
            W::ElementNotVisible => ErrorCode::ElementNotVisible,
            W::ElementNotInteractable => ErrorCode::ElementNotInteractable,
            W::NavigationFailed => ErrorCode::NavigationFailed,
            W::EvaluationError => ErrorCode::EvaluationError,
            W::Timeout => ErrorCode::Timeout,
            W::Failed => ErrorCode::PluginFailed,
            W::StaleRef => ErrorCode::StaleRef,
        };
        self.failure(code, e.message)
    }
}

#[async_trait]
impl ActionHandler for LoadedPlugin {
    fn plugin_name(&self) -> &str {
        &self.name
    }

    async fn run(
        &self,
        action: &str,
        params: Value,
        context: ActionContext,
        host: Arc<dyn PageHost>,
    ) -> std::result::Result<Value, PluginFailure> {
        let Exports::Action { pool, .. } = &self.exports else {
            return Err(self.failure(ErrorCode::Internal, "not an action plugin"));
        };
        let params = params.to_string();
        let action = action.to_string();
        let ctx = bindings::action::exports::wabp::plugin::action::ActionContext {
            tab_id: context.tab_id,
            pointer_x: context.pointer.0,
            pointer_y: context.pointer.1,
        };
        let outcome = self
            .call(pool, Some(host), |instance, store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_action()
                        .call_run(store, &action, &params, &ctx)
                        .await
                })
            })
            .await?;
        let text = outcome.map_err(|e| self.plugin_error(e))?;
        serde_json::from_str(&text).map_err(|e| {
            self.failure(
                ErrorCode::PluginFailed,
                format!("returned invalid JSON: {e}"),
            )
        })
    }
}
