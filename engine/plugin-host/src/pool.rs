//! Warm instances of one plugin version. A call takes an idle instance (or
//! makes one from the pre-instance), runs on it alone, and gives it back only
//! if the call returned normally; a trap, a missed deadline, a cancelled call
//! or a full pool drops it. A new version has a new pool, so a hot swap never
//! hands out an instance of the old code.
//!
//! The contract a plugin gets (ARCHITECTURE.md, "Plugin instances"): its
//! globals may survive between calls of one version, but any call may run on
//! a fresh instance, calls never overlap on one instance, and the tab a call
//! is bound to is unbound when it returns.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use wabp_model::plugin::InstanceStats;
use wasmtime::Store;

use crate::bindings;
use crate::host::HostState;

pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A pre-instance of one world: makes instances of it in a store.
pub(crate) trait Instantiate: Clone + Send + Sync + 'static {
    type Instance: Send + Sync + 'static;
    fn instantiate<'s>(
        &self,
        store: &'s mut Store<HostState>,
    ) -> BoxFuture<'s, wasmtime::Result<Self::Instance>>;
}

macro_rules! instantiate_for {
    ($($pre:ty => $instance:ty),* $(,)?) => {$(
        impl Instantiate for $pre {
            type Instance = $instance;
            fn instantiate<'s>(
                &self,
                store: &'s mut Store<HostState>,
            ) -> BoxFuture<'s, wasmtime::Result<$instance>> {
                let pre = self.clone();
                Box::pin(async move { pre.instantiate_async(store).await })
            }
        }
    )*};
}

instantiate_for! {
    bindings::action::ActionHandlerPre<HostState> => bindings::action::ActionHandler,
    bindings::markup::MarkupRendererPre<HostState> => bindings::markup::MarkupRenderer,
    bindings::wait::WaitHeuristicPre<HostState> => bindings::wait::WaitHeuristic,
    bindings::policy::ApprovalPolicyPre<HostState> => bindings::policy::ApprovalPolicy,
    bindings::interceptor::RequestInterceptorPre<HostState> => bindings::interceptor::RequestInterceptor,
}

/// An instance with the store it lives in.
pub(crate) struct Warm<I> {
    pub store: Store<HostState>,
    pub instance: Arc<I>,
}

pub(crate) struct Pool<P: Instantiate> {
    pub pre: P,
    idle: Mutex<Vec<Warm<P::Instance>>>,
    max_idle: usize,
    created: AtomicU64,
    reused: AtomicU64,
    discarded: AtomicU64,
}

impl<P: Instantiate> Pool<P> {
    pub fn new(pre: P, max_idle: usize) -> Self {
        Pool {
            pre,
            idle: Mutex::new(Vec::new()),
            max_idle,
            created: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
        }
    }

    /// The most recently returned idle instance (its caches are the warmest).
    pub fn take(&self) -> Option<Warm<P::Instance>> {
        let warm = self.idle.lock().pop();
        if warm.is_some() {
            self.reused.fetch_add(1, Ordering::Relaxed);
        }
        warm
    }

    pub fn note_created(&self) {
        self.created.fetch_add(1, Ordering::Relaxed);
    }

    /// Back into the pool after a call that returned normally; unbinds the
    /// call's tab first. Dropped when the pool is full.
    pub fn give_back(&self, mut warm: Warm<P::Instance>) {
        warm.store.data_mut().page = None;
        let mut idle = self.idle.lock();
        if idle.len() < self.max_idle {
            idle.push(warm);
        }
    }

    /// A call failed or was cancelled on this instance: it is not reused.
    pub fn discard(&self, warm: Warm<P::Instance>) {
        self.discarded.fetch_add(1, Ordering::Relaxed);
        drop(warm);
    }

    pub fn stats(&self) -> InstanceStats {
        let idle = self.idle.lock();
        InstanceStats {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            discarded: self.discarded.load(Ordering::Relaxed),
            idle: idle.len() as u64,
            idle_memory_bytes: idle
                .iter()
                .map(|w| w.store.data().limits.memory_bytes as u64)
                .sum(),
        }
    }
}

/// One call's hold on an instance: back into the pool when the call returned
/// normally (`succeeded`), dropped otherwise, including when the call's
/// future is dropped half-way.
pub(crate) struct Lease<'p, P: Instantiate> {
    pool: &'p Pool<P>,
    warm: Option<Warm<P::Instance>>,
    succeeded: bool,
}

impl<'p, P: Instantiate> Lease<'p, P> {
    pub fn new(pool: &'p Pool<P>, warm: Warm<P::Instance>) -> Self {
        Lease {
            pool,
            warm: Some(warm),
            succeeded: false,
        }
    }

    pub fn warm(&mut self) -> &mut Warm<P::Instance> {
        self.warm
            .as_mut()
            .expect("a lease holds its instance until dropped")
    }

    pub fn succeeded(&mut self) {
        self.succeeded = true;
    }

    /// Keeps the instance beyond this call (a wait session): the caller gives
    /// it back or discards it.
    pub fn keep(mut self) -> Warm<P::Instance> {
        self.warm
            .take()
            .expect("a lease holds its instance until dropped")
    }
}

impl<P: Instantiate> Drop for Lease<'_, P> {
    fn drop(&mut self) {
        if let Some(warm) = self.warm.take() {
            if self.succeeded {
                self.pool.give_back(warm);
            } else {
                self.pool.discard(warm);
            }
        }
    }
}
