//! Per-database-instance state: the published policy snapshot and the writer lock.
//!
//! Statements read the policy through an `ArcSwap` (no lock on the statement path); management
//! statements copy it, change the copy and publish it whole, so a failed change is invisible.
use crate::error::Result;
use crate::policy::Policy;
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Default)]
pub struct State {
    policy: ArcSwap<Policy>,
    writer: Mutex<()>,
    /// Verified tokens, until their `exp` or the next policy change.
    pub tokens: crate::auth::TokenCache,
    /// Rewritten statements by policy version, principal and text.
    pub rewrites: crate::rewrite::RewriteCache,
    /// Rewritten batches by their full text (the engine asks before tokenizing).
    pub batches: super::BatchCache,
    /// Statement shapes: rewrites reused across numeric literals (spec 012).
    pub shapes: super::ShapeCache,
    /// Parsed management statements by their text.
    pub commands: super::Commands,
    /// Metadata listings (`acl_meta`) by policy version, principal and catalog stamp.
    pub meta: crate::rewrite::MetaCache,
    /// The host's categorised function list, read once at load. Every published snapshot
    /// carries it too (`policy.functions.host`), so a statement sees the list and the function
    /// grants of one moment; whoever replaces the policy wholesale must keep it.
    host: parking_lot::RwLock<Arc<crate::policy::functions::HostFunctions>>,
    /// Test-only faults, fixed at load (none outside a `test-faults` build).
    pub faults: crate::faults::Faults,
}

impl State {
    pub fn new() -> State {
        State { faults: crate::faults::Faults::from_env(), ..State::default() }
    }

    /// The version of the published policy (moves with every change).
    pub fn policy_version(&self) -> u64 {
        self.policy.load().version
    }

    pub fn policy(&self) -> Arc<Policy> {
        self.policy.load_full()
    }

    /// Installs the host's function list (at load) and publishes a snapshot that carries it.
    pub fn set_host_functions(&self, host: crate::policy::functions::HostFunctions) {
        let host = Arc::new(host);
        let _w = self.writer.lock();
        *self.host.write() = host.clone();
        let mut next = Policy::clone(&self.policy.load());
        next.functions.host = host;
        next.version += 1;
        self.policy.store(Arc::new(next));
    }

    pub fn host_functions(&self) -> Arc<crate::policy::functions::HostFunctions> {
        self.host.read().clone()
    }

    /// Changes a copy of the policy and publishes the copy only if `change` succeeded (one
    /// writer at a time; readers see the old snapshot or the new one, whole).
    pub fn update<T>(&self, change: impl FnOnce(&mut Policy) -> Result<T>) -> Result<T> {
        let _w = self.writer.lock();
        let mut next = Policy::clone(&self.policy.load());
        let out = change(&mut next)?;
        self.policy.store(Arc::new(next));
        Ok(out)
    }
}
