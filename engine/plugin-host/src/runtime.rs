//! The wasmtime engine: one per process, with an epoch ticker, a compiled
//! component cache keyed by content hash, and one linker per plugin kind.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store, StoreLimitsBuilder, UpdateDeadline};

use crate::bindings;
use crate::error::{Error, Result};
use crate::host::HostState;

/// Epoch tick: the granularity of deadlines and of yielding to tokio.
pub const TICK: Duration = Duration::from_millis(5);

/// The message a deadline trap carries, to tell it from other traps.
pub const DEADLINE_TRAP: &str = "wabp: call deadline exceeded";

pub struct Runtime {
    pub engine: Engine,
    pub action_linker: Linker<HostState>,
    pub markup_linker: Linker<HostState>,
    pub wait_linker: Linker<HostState>,
    pub policy_linker: Linker<HostState>,
    pub interceptor_linker: Linker<HostState>,
    cache: Mutex<HashMap<[u8; 32], Component>>,
}

pub fn content_hash(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

impl Runtime {
    pub fn new() -> Result<Arc<Runtime>> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        let engine = Engine::new(&config).map_err(|e| Error::Load {
            plugin: "-".into(),
            message: format!("wasmtime: {e}"),
        })?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("wabp-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            })
            .map_err(|e| Error::Load {
                plugin: "-".into(),
                message: format!("epoch thread: {e}"),
            })?;

        let linker_error = |e: wasmtime::Error| Error::Load {
            plugin: "-".into(),
            message: format!("linker: {e}"),
        };
        let mut action_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut action_linker).map_err(linker_error)?;
        bindings::action::ActionHandler::add_to_linker::<_, HasSelf<_>>(&mut action_linker, |s| s)
            .map_err(linker_error)?;
        let mut markup_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut markup_linker).map_err(linker_error)?;
        bindings::markup::MarkupRenderer::add_to_linker::<_, HasSelf<_>>(&mut markup_linker, |s| s)
            .map_err(linker_error)?;
        let mut wait_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut wait_linker).map_err(linker_error)?;
        bindings::wait::WaitHeuristic::add_to_linker::<_, HasSelf<_>>(&mut wait_linker, |s| s)
            .map_err(linker_error)?;
        let mut policy_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut policy_linker).map_err(linker_error)?;
        bindings::policy::ApprovalPolicy::add_to_linker::<_, HasSelf<_>>(&mut policy_linker, |s| s)
            .map_err(linker_error)?;
        let mut interceptor_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut interceptor_linker).map_err(linker_error)?;
        bindings::interceptor::RequestInterceptor::add_to_linker::<_, HasSelf<_>>(
            &mut interceptor_linker,
            |s| s,
        )
        .map_err(linker_error)?;
        Ok(Arc::new(Runtime {
            engine,
            action_linker,
            markup_linker,
            wait_linker,
            policy_linker,
            interceptor_linker,
            cache: Mutex::new(HashMap::new()),
        }))
    }

    /// The process's one runtime: every registry in it (the engine's, the
    /// load check of `wabp plugin build`, test engines) shares the
    /// wasmtime engine, its epoch thread and the compiled components, so
    /// bytes compiled once (a Python component takes seconds) are not
    /// compiled again by the next registry that loads them.
    pub fn shared() -> Result<Arc<Runtime>> {
        static SHARED: std::sync::OnceLock<Arc<Runtime>> = std::sync::OnceLock::new();
        if let Some(runtime) = SHARED.get() {
            return Ok(runtime.clone());
        }
        let runtime = Runtime::new()?;
        Ok(SHARED.get_or_init(|| runtime).clone())
    }

    /// Compiles a component (blocking: call it off the async runtime).
    /// Identical bytes compile once.
    pub fn compile(&self, plugin: &str, bytes: &[u8]) -> Result<([u8; 32], Component)> {
        let hash = content_hash(bytes);
        if let Some(component) = self.cache.lock().get(&hash) {
            return Ok((hash, component.clone()));
        }
        let component = Component::new(&self.engine, bytes).map_err(|e| Error::Load {
            plugin: plugin.into(),
            message: format!("not a valid component: {e}"),
        })?;
        self.cache.lock().insert(hash, component.clone());
        Ok((hash, component))
    }

    /// The `wabp:plugin/*` interfaces and other imports a component declares.
    pub fn imports(&self, component: &Component) -> Vec<String> {
        component
            .component_type()
            .imports(&self.engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// A fresh store for one call (or one wait session).
    pub fn store(&self, state: HostState) -> Store<HostState> {
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(1);
        // Yield to tokio every tick so a busy plugin never hogs a worker;
        // trap once the call's deadline has passed.
        store.epoch_deadline_callback(|ctx| {
            if Instant::now() >= ctx.data().deadline {
                Err(wasmtime::Error::msg(DEADLINE_TRAP))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store
    }
}

pub fn limits(memory_bytes: usize) -> MeteredLimits {
    MeteredLimits {
        limits: StoreLimitsBuilder::new()
            .memory_size(memory_bytes)
            .instances(32)
            .tables(64)
            .memories(8)
            .trap_on_grow_failure(true)
            .build(),
        memory_bytes: 0,
    }
}

/// A store's limits, counting the linear memory its instance holds (what
/// the limit sees), for `GET /plugins` and the bench.
pub struct MeteredLimits {
    limits: wasmtime::StoreLimits,
    /// The linear memory of the store's instance, all memories together.
    pub memory_bytes: usize,
}

impl wasmtime::ResourceLimiter for MeteredLimits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        if allowed {
            self.memory_bytes = self.memory_bytes + desired - current;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}
