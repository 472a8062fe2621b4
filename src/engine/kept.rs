//! Whole batches by their full text, as they were rewritten (the engine's first lookup), and
//! DuckDB's parse of them once the shim has checked it (spec 012).
use super::principal::still_holds;
use crate::bounded::Bounded;
use crate::policy::Policy;
use crate::rewrite::{allowed_bytes, fits, Settings};
use std::sync::Arc;

/// Past this many entries the cache starts over (besides its byte budget).
const MAX_ENTRIES: usize = 4_096;
const BATCHES_BYTES: usize = 16 << 20;
/// DuckDB's parse (`SQLStatement`s) per byte of the text it came from (measured: 22 for a sliced
/// object's subquery, 62 for an IN list of small numbers, 8 for long names, 3 for strings).
pub(crate) const HOST_PARSE_PER_BYTE: usize = 32;

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
    /// What the batch's principal came from, judged again on each hit (a token verified again, a
    /// session still live).
    pub credential: super::Credential,
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
    pub fn clear(&self) {
        self.entries.clear();
    }

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
            + entry.credential.bytes()
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

/// The kept rewrite of `query` (a whole batch, prefix included), if one holds now.
pub fn lookup(state: &super::State, query: &str, settings: &Settings) -> Option<Arc<BatchEntry>> {
    batch_cached(&state.policy(), &state.tokens, &state.sessions, &state.batches, settings, query)
}

/// The cached rewrite of `query` (a whole batch, prefix included), if one holds now. A batch
/// under `ACL SESSION` is kept under its full text, handle included: only that session's
/// statements ever find it.
pub fn batch_cached(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    sessions: &super::sessions::Sessions,
    batches: &BatchCache,
    settings: &Settings,
    query: &str,
) -> Option<Arc<BatchEntry>> {
    let entry = batches.get(query)?;
    if !fits(entry.output.sql.len(), settings) {
        return None; // the full path refuses it
    }
    still_holds(policy, tokens, sessions, settings, entry.version, &entry.credential, &entry.who).then_some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_for_its_policy_version_only() {
        let batches = BatchCache::default();
        let output = super::super::Output { sql: "SELECT 1".into(), statements: 1, names: String::new(), checks: Vec::new(), version: 7, reuse: None, principal: String::new(), expires: 0, session: 0, native: false };
        batches.insert("ACL ROLE r SELECT 1", BatchEntry { version: 7, credential: super::super::Credential::Role, who: "r".into(), output, parsed: Default::default() });
        let mut policy = crate::policy::Policy { version: 7, ..Default::default() };
        let tokens = crate::auth::TokenCache::default();
        let sessions = crate::engine::sessions::Sessions::default();
        let settings = crate::rewrite::Settings::default();
        let hit = batch_cached(&policy, &tokens, &sessions, &batches, &settings, "ACL ROLE r SELECT 1");
        assert_eq!(hit.map(|e| e.output.sql.clone()).as_deref(), Some("SELECT 1"));
        assert!(batch_cached(&policy, &tokens, &sessions, &batches, &settings, "ACL ROLE r SELECT 2").is_none());
        policy.version = 8;
        assert!(batch_cached(&policy, &tokens, &sessions, &batches, &settings, "ACL ROLE r SELECT 1").is_none());
    }
}
