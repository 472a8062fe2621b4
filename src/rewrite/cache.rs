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
    pub names: Vec<(String, String)>,
    /// What DuckDB's parse of `sql` may name (`defence`).
    pub allowed: Arc<super::Allowed>,
}

#[derive(Default)]
pub struct RewriteCache {
    entries: DashMap<(u64, String, String), Arc<Cached>>,
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
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(key, Arc::clone(&fresh));
        Ok(fresh)
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
}
