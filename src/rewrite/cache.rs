//! Rewritten statements, so a gateway repeating a statement pays for sqlparser once. Keyed by
//! the policy version, the principal (its roles and claims: everything a rewrite depends on
//! besides the policy) and the statement text. A policy change moves the version, so no entry
//! outlives the policy it was decided under. Refusals are not cached.
use crate::error::Result;
use dashmap::DashMap;
use std::sync::Arc;

/// Past this many entries the cache starts over: a bound without LRU bookkeeping.
const MAX_ENTRIES: usize = 4_096;

#[derive(Debug)]
pub struct Cached {
    pub sql: String,
    pub names: Vec<(super::ErrorSlot, String, String)>,
    /// What DuckDB's parse of `sql` may name (`defence`).
    pub allowed: Arc<super::Allowed>,
}

#[derive(Default)]
pub struct RewriteCache {
    entries: DashMap<(u64, String, String), Arc<Cached>>,
    /// The subquery that stands for a sliced object, per policy version, principal and object:
    /// built from the policy's SQL pieces and parsed once, then cloned (parsing it was most of a
    /// cold statement's rewrite on a policy object).
    pub slices: SliceCache,
}

#[derive(Default)]
pub struct SliceCache {
    entries: DashMap<(u64, String, crate::policy::ObjKey), Arc<sqlparser::ast::Query>>,
}

impl SliceCache {
    pub fn get_or(
        &self,
        version: u64,
        principal: &str,
        key: &crate::policy::ObjKey,
        build: impl FnOnce() -> Result<Box<sqlparser::ast::Query>>,
    ) -> Result<Box<sqlparser::ast::Query>> {
        let k = (version, principal.to_string(), key.clone());
        if let Some(hit) = self.entries.get(&k) {
            return Ok(Box::new(Query::clone(&hit)));
        }
        let fresh = build()?;
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(k, Arc::new(Query::clone(&fresh)));
        Ok(fresh)
    }
}

use sqlparser::ast::Query;

impl RewriteCache {
    pub fn get_or(
        &self,
        version: u64,
        principal: &str,
        sql: &str,
        rewrite: impl FnOnce() -> Result<Cached>,
    ) -> Result<Arc<Cached>> {
        let key = (version, principal.to_string(), sql.to_string());
        if let Some(hit) = self.entries.get(&key) {
            return Ok(Arc::clone(&hit));
        }
        let fresh = Arc::new(rewrite()?);
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(key, Arc::clone(&fresh));
        Ok(fresh)
    }
}

/// Whole batches by their full text (prefix included), so a repeated statement skips DuckDB's
/// tokenizer, the prefix split and the per-statement lookups: the shim asks here first.
/// An entry holds for the policy version it was decided under; under `ACL TOKEN` the token is
/// judged again on every hit (the token cache: expiry against the current clock skew) and must
/// still denote the same roles and claims. `ACL ADMIN` batches are never cached.
#[derive(Default)]
pub struct BatchCache {
    entries: DashMap<String, Arc<BatchEntry>>,
}

#[derive(Debug)]
pub struct BatchEntry {
    pub version: u64,
    /// The JWT of an `ACL TOKEN` batch, judged again on each hit.
    pub token: Option<String>,
    /// The principal's roles and claims when the batch was rewritten.
    pub who: String,
    pub output: super::Output,
    /// DuckDB's parse of `output.sql`, once the shim has parsed and checked it.
    pub parsed: std::sync::OnceLock<HostParse>,
}

/// DuckDB's parse of a batch's rewritten text, owned by the shim: an opaque pointer and the
/// function that frees it. It is stored only after the second check passed on it, and a hit
/// (same text, same policy version, the token judged again) means the same check would pass, so
/// the shim copies it instead of parsing again (spec 012). Never mutated after it is handed over.
pub struct HostParse {
    ptr: *mut std::ffi::c_void,
    free: unsafe extern "C" fn(*mut std::ffi::c_void),
}

// The shim only ever reads the parse (`SQLStatement::Copy` is const) once it is handed over.
unsafe impl Send for HostParse {}
unsafe impl Sync for HostParse {}

impl HostParse {
    /// # Safety
    /// `ptr` is freed by `free` exactly once, when the value drops, and is only read until then.
    pub unsafe fn new(ptr: *mut std::ffi::c_void, free: unsafe extern "C" fn(*mut std::ffi::c_void)) -> HostParse {
        HostParse { ptr, free }
    }

    pub fn ptr(&self) -> *const std::ffi::c_void {
        self.ptr
    }
}

impl Drop for HostParse {
    fn drop(&mut self) {
        unsafe { (self.free)(self.ptr) }
    }
}

impl std::fmt::Debug for HostParse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostParse")
    }
}

/// Longer batches are not kept: hashing them would cost what the cache saves.
pub(super) const MAX_BATCH_BYTES: usize = 16 * 1024;

impl BatchCache {
    pub fn get(&self, query: &str) -> Option<Arc<BatchEntry>> {
        self.entries.get(query).map(|e| Arc::clone(&e))
    }

    /// The entry as kept, or `None` when the batch is too long to keep.
    pub fn insert(&self, query: &str, entry: BatchEntry) -> Option<Arc<BatchEntry>> {
        if query.len() > MAX_BATCH_BYTES {
            return None;
        }
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        let entry = Arc::new(entry);
        self.entries.insert(query.to_string(), Arc::clone(&entry));
        Some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_skips_the_rewrite_and_a_new_version_misses() {
        let c = RewriteCache::default();
        let mut calls = 0;
        let mut get = |v: u64| {
            c.get_or(v, "role:a", "SELECT 1", || {
                calls += 1;
                Ok(Cached { sql: "x".into(), names: vec![], allowed: Default::default() })
            })
            .unwrap()
        };
        get(1);
        get(1);
        get(2);
        assert_eq!(calls, 2);
    }

    #[test]
    fn a_batch_holds_for_its_policy_version_only() {
        let batches = BatchCache::default();
        let output = crate::rewrite::Output { sql: "SELECT 1".into(), statements: 1, names: String::new(), checks: Vec::new(), version: 7, reuse: None };
        batches.insert("ACL ROLE r SELECT 1", BatchEntry { version: 7, token: None, who: "r".into(), output, parsed: Default::default() });
        let mut policy = crate::policy::Policy { version: 7, ..Default::default() };
        let tokens = crate::auth::TokenCache::default();
        let settings = crate::rewrite::Settings::default();
        let hit = crate::rewrite::batch_cached(&policy, &tokens, &batches, &settings, "ACL ROLE r SELECT 1");
        assert_eq!(hit.map(|e| e.output.sql.clone()).as_deref(), Some("SELECT 1"));
        assert!(crate::rewrite::batch_cached(&policy, &tokens, &batches, &settings, "ACL ROLE r SELECT 2").is_none());
        policy.version = 8;
        assert!(crate::rewrite::batch_cached(&policy, &tokens, &batches, &settings, "ACL ROLE r SELECT 1").is_none());
    }
}
