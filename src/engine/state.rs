//! Per-database-instance state: the published policy snapshot and the writer lock.
//!
//! Statements read the policy through an `ArcSwap` (no lock on the statement path); management
//! statements copy it, change the copy and publish it whole, so a failed change is invisible.
//! With a policy store in use (spec 006) the copy is published only after the store committed it.
use crate::error::Result;
use crate::policy::Policy;
use crate::store::{Store, StoreStatus};
use arc_swap::ArcSwap;
use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;

#[derive(Default)]
pub struct State {
    policy: ArcSwap<Policy>,
    writer: Mutex<()>,
    /// The policy store in use (`None`: memory mode), set once under the writer lock. Only
    /// management, `acl_reload` and `acl_status` touch it: never the statement path.
    store: parking_lot::RwLock<Option<Arc<Store>>>,
    /// What `acl_status()` shows of the store, and the store's policy version this node holds.
    store_status: Mutex<StoreStatus>,
    /// How this instance reaches its own database (a non-owning handle, set by `ffi` at load),
    /// for `acl_use_db`; `None` in unit tests.
    pub host_db: std::sync::OnceLock<Arc<dyn HostDb>>,
    /// Verified tokens, until their `exp` or the next policy change.
    pub tokens: crate::auth::TokenCache,
    /// Sessions opened on this instance (spec 017): never shared with another instance.
    pub sessions: super::sessions::Sessions,
    /// Rewritten statements by policy version, principal and text.
    pub rewrites: crate::rewrite::RewriteCache,
    /// Rewritten batches by their full text (the engine asks before tokenizing).
    pub batches: super::BatchCache,
    /// Statement shapes: rewrites reused across numeric literals (spec 012).
    pub shapes: super::ShapeCache,
    /// `owner` by prefix text.
    pub owners: super::principal::Owners,
    /// Parsed management statements by their text.
    pub commands: super::Commands,
    /// Metadata listings (`acl_meta`) by policy version, principal and catalog stamp.
    pub meta: crate::rewrite::MetaCache,
    /// The host's categorised function list, read once at load. Every published snapshot
    /// carries it too (`policy.functions.host`), so a statement sees the list and the function
    /// grants of one moment; whoever replaces the policy wholesale must keep it.
    host: parking_lot::RwLock<Arc<crate::policy::functions::HostFunctions>>,
    /// `acl_version_check_interval`, milliseconds (GLOBAL; the shim sets it): how often, at
    /// most, the background thread of a shared store asks for its policy version.
    version_check_ms: std::sync::atomic::AtomicU64,
    /// `acl_enum_types` (GLOBAL; the shim sets it): every published snapshot carries it
    /// (`Policy::enum_types`). The index of its value in `EnumTypes::ALL`.
    enum_types: std::sync::atomic::AtomicUsize,
    /// The background thread of a shared store (`engine::watch`), once one runs: dropping it
    /// (with the state, when the instance closes) stops the thread.
    pub watcher: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// The node's Flight SQL doors (`door::Doors`, spec 018), once one served: dropping it (with
    /// the state, when the instance closes) stops every door and the runtime they run on.
    pub doors: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// Test-only faults, fixed at load (none outside a `test-faults` build).
    pub faults: crate::faults::Faults,
    /// Counts this state among the process's live ones while it exists.
    _live: Live,
}

const _: () = assert!(matches!(crate::policy::EnumTypes::ALL[0], crate::policy::EnumTypes::DEFAULT));

/// States alive in this process (`acl_status().process_instances`): one per open database that
/// loaded the extension, so a test can see that closing a database frees its state (nothing the
/// instance owns may keep the instance alive, spec 006).
static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Live;

impl Default for Live {
    fn default() -> Live {
        LIVE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// How many extension states (database instances) are alive in this process.
pub fn live_states() -> usize {
    LIVE.load(std::sync::atomic::Ordering::SeqCst)
}

impl State {
    pub fn new() -> State {
        let memory = StoreStatus { kind: "memory".into(), healthy: true, ..StoreStatus::default() };
        let state = State {
            faults: crate::faults::Faults::from_env(),
            store_status: Mutex::new(memory),
            version_check_ms: super::source::DEFAULT_VERSION_CHECK_MS.into(),
            ..State::default()
        };
        #[cfg(feature = "test-faults")]
        if state.faults.slow_keys_file {
            state.tokens.files.set_read_delay(std::time::Duration::from_secs(3));
        }
        state
    }

    /// `acl_version_check_interval`, milliseconds.
    pub fn version_check_interval(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.version_check_ms.load(std::sync::atomic::Ordering::Relaxed))
    }

    pub fn set_version_check_interval(&self, ms: u64) {
        self.version_check_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// `acl_enum_types` (GLOBAL), as every snapshot published from now on carries it (a new state
    /// holds `ALL[0]`, the default).
    pub fn enum_types(&self) -> crate::policy::EnumTypes {
        let all = crate::policy::EnumTypes::ALL;
        all.get(self.enum_types.load(std::sync::atomic::Ordering::SeqCst)).copied().unwrap_or(all[0])
    }

    /// `acl_enum_types` was set (or reset, or read at load). A change publishes the policy again:
    /// a new version, so every rewrite, slice, shape, kept parse and listing made under the old
    /// exposure is dropped, and a prepared statement made under it is refused (spec 002).
    pub fn set_enum_types(&self, e: crate::policy::EnumTypes) {
        let w = self.writer();
        let at = crate::policy::EnumTypes::ALL.iter().position(|x| *x == e).unwrap_or(0);
        if self.enum_types.swap(at, std::sync::atomic::Ordering::SeqCst) != at || w.current().enum_types != e {
            w.publish(Policy::clone(&w.current()));
        }
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
        let w = self.writer();
        *self.host.write() = Arc::new(host);
        w.publish(Policy::clone(&w.current()));
    }

    pub fn host_functions(&self) -> Arc<crate::policy::functions::HostFunctions> {
        self.host.read().clone()
    }

    /// Changes a copy of the policy and publishes the copy only if `change` succeeded (one
    /// writer at a time; readers see the old snapshot or the new one, whole).
    pub fn update<T>(&self, change: impl FnOnce(&mut Policy) -> Result<T>) -> Result<T> {
        let w = self.writer();
        let mut next = Policy::clone(&w.current());
        let out = change(&mut next)?;
        w.publish(next);
        Ok(out)
    }

    /// The writer lock: one change (a batch, a store coming into use, a reload) at a time.
    pub fn writer(&self) -> Writer<'_> {
        Writer { state: self, _lock: self.writer.lock() }
    }

    /// The store in use, if any.
    pub fn store(&self) -> Option<Arc<Store>> {
        self.store.read().clone()
    }

    pub fn store_status(&self) -> StoreStatus {
        self.store_status.lock().clone()
    }

    /// Records a committed or loaded store policy version (under the writer lock).
    pub fn note_store(&self, contact: std::result::Result<u64, &crate::error::AclError>) {
        if let Ok(version) = contact {
            self.store_status.lock().policy_version = version;
        }
        self.note_health(contact.map(|_| ()));
    }

    /// Records whether the last contact with the store worked (any thread).
    pub fn note_health(&self, contact: std::result::Result<(), &crate::error::AclError>) {
        let mut s = self.store_status.lock();
        match contact {
            Ok(()) => {
                s.healthy = true;
                s.last_error = None;
                s.last_refresh_ms = now_ms();
            }
            Err(e) => {
                // A store that answered but refused (a conflict, a bad record) is still reachable.
                if matches!(e, crate::error::AclError::Store(crate::error::StoreError::Unavailable { .. })) {
                    s.healthy = false;
                }
                s.last_error = Some(e.to_string());
            }
        }
    }
}

/// Opens a policy store in the instance's own database (`acl_use_db`); `ffi` provides it.
pub trait HostDb: Send + Sync {
    /// A backend for the store at `catalog.schema` (an attached database of this instance).
    fn duckdb_store(&self, catalog: &str, schema: &str) -> Arc<dyn crate::store::Backend>;
    /// The names of the tables and views in `db.schema` now, committed (`CREATE VIRTUAL SCHEMA
    /// … FROM`, `REFRESH`); none if it does not exist.
    fn physical_objects(&self, db: &str, schema: &str) -> crate::error::Result<Vec<String>>;
    /// The columns of the table or view `t` now, committed, with DuckDB's name of each type;
    /// `None` if it does not exist (`CREATE VIRTUAL TABLE … AS t`, spec 007).
    fn physical_columns(&self, t: &crate::policy::PhysName) -> crate::error::Result<Option<Vec<(String, String)>>>;
    /// Runs the validation statements of a function-API call (`admin::validate`, judged by the
    /// policy-SQL rules first) on a connection of the extension's own; the first refusal.
    fn bind_checks(&self, statements: &[String]) -> crate::error::Result<()>;
    /// The value itself, for the layer that made it (`ffi`, which opens a door's connections).
    fn as_any(&self) -> &dyn std::any::Any;
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Holding the writer lock: the published policy, and the right to publish the next one.
pub struct Writer<'a> {
    state: &'a State,
    _lock: MutexGuard<'a, ()>,
}

impl Writer<'_> {
    pub fn current(&self) -> Arc<Policy> {
        self.state.policy.load_full()
    }

    /// Publishes `next` whole. It carries the instance's host function list (a policy read from
    /// a store has none of its own) and a version past the current one, so every cache keyed on
    /// the version starts over.
    ///
    /// Then the keys files of its `KEYS FROM` issuers are read (`auth::KeyFiles::publish`; waited
    /// for at most `auth::PUBLISH_WAIT`): the policy never carries them, so a load, a reload, a
    /// refresh or a batch is where a node learns them. Until a file issuer's read has finished its
    /// tokens are refused (spec 003, "Keys from a file").
    pub fn publish(&self, mut next: Policy) {
        let current = self.state.policy.load();
        next.functions.host = self.state.host_functions();
        next.home = self.state.store().and_then(|s| s.home());
        next.enum_types = self.state.enum_types();
        next.version = next.version.max(current.version + 1);
        let next = Arc::new(next);
        self.state.policy.store(Arc::clone(&next));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        self.state.tokens.files.publish(&next, now, crate::auth::PUBLISH_WAIT);
    }

    /// The store comes into use (once: `acl_use_db` refuses a second one).
    pub fn set_store(&self, store: Arc<Store>, version: u64) {
        let mut s = self.state.store_status.lock();
        *s = StoreStatus {
            kind: store.kind().to_string(),
            location: store.describe(),
            healthy: true,
            last_error: None,
            last_refresh_ms: now_ms(),
            policy_version: version,
        };
        *self.state.store.write() = Some(store);
    }
}
