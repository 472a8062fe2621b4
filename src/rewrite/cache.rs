//! Rewritten statements, so a gateway repeating a statement pays for sqlparser once. Keyed by
//! the policy version, the principal (its roles and claims: everything a rewrite depends on
//! besides the policy) and the statement text. A policy change moves the version, so no entry
//! outlives the policy it was decided under. Refusals are not cached. Every cache here is
//! bounded in bytes as well as entries (`crate::bounded`, spec 012 "Memory").
use crate::bounded::{texts, Bounded};
use crate::error::Result;
use sqlparser::ast::Query;
use std::sync::Arc;

/// Past this many entries a cache starts over (besides its byte budget).
const MAX_ENTRIES: usize = 4_096;
/// Byte budgets (spec 012, "Memory"): what each cache may hold, estimated at insert.
const REWRITES_BYTES: usize = 8 << 20;
/// A 41-column guarded subquery is ≈ 150 KB as a tree: ≈ 100 of them (per principal and object).
const SLICES_BYTES: usize = 16 << 20;
const BATCHES_BYTES: usize = 16 << 20;
/// sqlparser's tree per byte of its printed text (measured: 59 for a sliced object's subquery,
/// 110 for an IN list of small numbers, 26 for long names, 5 for string literals).
pub(crate) const AST_PER_BYTE: usize = 64;
/// DuckDB's parse (`SQLStatement`s) per byte of the text it came from (measured: 22 for a sliced
/// object's subquery, 62 for an IN list of small numbers, 8 for long names, 3 for strings).
pub(crate) const HOST_PARSE_PER_BYTE: usize = 32;

#[derive(Debug)]
pub struct Cached {
    pub sql: String,
    pub names: Vec<(super::ErrorSlot, String, String)>,
    /// What DuckDB's parse of `sql` may name (`defence`).
    pub allowed: Arc<super::Allowed>,
}

impl Cached {
    fn bytes(&self) -> usize {
        self.sql.len() + names_bytes(&self.names) + allowed_bytes(&self.allowed)
    }
}

fn names_bytes(names: &[(super::errors::Slot, String, String)]) -> usize {
    names.iter().map(|(_, p, v)| p.len() + v.len() + 2 * std::mem::size_of::<String>() + 8).sum()
}

/// The heap an allowed set holds (it grows with every policy subquery a statement names).
pub(crate) fn allowed_bytes(a: &super::Allowed) -> usize {
    const S: usize = std::mem::size_of::<String>();
    let names = |n: &super::defence::Names| {
        let tables: usize = n.tables.iter().map(|t| t.db.len() + t.schema.len() + t.name.len() + 3 * S).sum();
        let paths = |v: &[Vec<String>]| v.iter().map(|p| texts(p) + S).sum::<usize>();
        tables + texts(&n.ctes) + paths(&n.functions) + paths(&n.table_functions)
    };
    // Regions are shared (`Arc`) with the slice cache and the policy: counted once per statement
    // all the same, as an upper bound.
    names(&a.outside)
        + a.regions.iter().map(|r| names(&r.names) + r.columns.iter().map(|(c, _)| c.len() + S + 4).sum::<usize>()).sum::<usize>()
}

pub struct RewriteCache {
    entries: Bounded<(u64, String, String), Arc<Cached>>,
    /// The subquery that stands for a sliced object, per policy version, principal and object:
    /// built from the policy's SQL pieces and parsed once, then cloned (parsing it was most of a
    /// cold statement's rewrite on a policy object).
    pub slices: SliceCache,
}

impl Default for RewriteCache {
    fn default() -> RewriteCache {
        RewriteCache { entries: Bounded::new(REWRITES_BYTES, MAX_ENTRIES), slices: SliceCache::default() }
    }
}

pub struct SliceCache {
    entries: Bounded<(u64, String, crate::policy::ObjKey), Arc<Slice>>,
}

/// A sliced object's subquery and the length of its printed text (what inserting it adds).
struct Slice {
    query: Query,
    printed: usize,
}

impl Default for SliceCache {
    fn default() -> SliceCache {
        SliceCache { entries: Bounded::new(SLICES_BYTES, MAX_ENTRIES) }
    }
}

impl SliceCache {
    /// The subquery for `key`, written `name` in the statement, after taking its printed size
    /// from `room`: a statement that would grow past `acl_max_rewrite_bytes` is refused before
    /// the copy is made.
    pub fn get_or(
        &self,
        version: u64,
        principal: &str,
        key: &crate::policy::ObjKey,
        name: &[String],
        room: &mut super::Room,
        build: impl FnOnce() -> Result<Box<Query>>,
    ) -> Result<Box<Query>> {
        let k = (version, principal.to_string(), key.clone());
        let hit = self.entries.get(&k).map(|e| Arc::clone(&e));
        if let Some(hit) = hit {
            room.take_for_table(name, hit.printed)?;
            return Ok(Box::new(hit.query.clone()));
        }
        let fresh = build()?;
        let printed = fresh.to_string().len();
        let size = k.1.len() + k.2.catalog.len() + k.2.schema.len() + k.2.name.len() + printed * AST_PER_BYTE;
        if self.entries.fits(size) {
            self.entries.insert(k, Arc::new(Slice { query: Query::clone(&fresh), printed }), size);
        }
        room.take_for_table(name, printed)?;
        Ok(fresh)
    }
}

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
        let size = key.1.len() + key.2.len() + fresh.bytes();
        self.entries.insert(key, Arc::clone(&fresh), size);
        Ok(fresh)
    }
}

/// Whole batches by their full text (prefix included), so a repeated statement skips DuckDB's
/// tokenizer, the prefix split and the per-statement lookups: the shim asks here first.
/// An entry holds for the policy version it was decided under; under `ACL TOKEN` the token is
/// judged again on every hit (the token cache: expiry against the current clock skew) and must
/// still denote the same roles and claims. `ACL ADMIN` batches are never cached.
pub struct BatchCache {
    entries: Bounded<String, Arc<BatchEntry>>,
}

impl Default for BatchCache {
    fn default() -> BatchCache {
        BatchCache { entries: Bounded::new(BATCHES_BYTES, MAX_ENTRIES) }
    }
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

// SAFETY: the shim only ever reads the parse (`SQLStatement::Copy` is const) once it is handed
// over, and it is freed once, on drop, from whichever thread drops it.
unsafe impl Send for HostParse {}
// SAFETY: as for `Send`: shared, it is only read.
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
        // SAFETY: `new`'s contract: `free` frees `ptr`, and this is the one time.
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

    /// The entry as kept, or `None` when the batch is too long to keep. Its size counts the
    /// parse the shim may keep with it later (`HOST_PARSE_PER_BYTE` of the rewritten text), so
    /// an entry whose parse would be too large is not kept, and then no parse is either.
    pub fn insert(&self, query: &str, entry: BatchEntry) -> Option<Arc<BatchEntry>> {
        if query.len() > MAX_BATCH_BYTES {
            return None;
        }
        let size = query.len()
            + entry.token.as_ref().map_or(0, String::len)
            + entry.who.len()
            + entry.output.sql.len() * (1 + HOST_PARSE_PER_BYTE)
            + entry.output.names.len()
            + entry.output.checks.iter().flatten().map(|a| allowed_bytes(a)).sum::<usize>();
        if !self.entries.fits(size) {
            return None;
        }
        let entry = Arc::new(entry);
        self.entries.insert(query.to_string(), Arc::clone(&entry), size);
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
        let output = crate::rewrite::Output { sql: "SELECT 1".into(), statements: 1, names: String::new(), checks: Vec::new(), version: 7, reuse: None, principal: String::new(), expires: 0 };
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
