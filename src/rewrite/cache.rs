//! Rewritten statements, so a gateway repeating a statement pays for sqlparser once. Keyed by
//! the policy version, the principal (its roles and claims: everything a rewrite depends on
//! besides the policy) and the statement text. A policy change moves the version, so no entry
//! outlives the policy it was decided under. Refusals are not cached. Every cache here is
//! bounded in bytes as well as entries (`crate::bounded`, spec 012 "Memory").
use crate::authz::SliceCache;
use crate::bounded::{texts, Bounded};
use crate::error::Result;
use std::sync::Arc;

/// Past this many entries a cache starts over (besides its byte budget).
const MAX_ENTRIES: usize = 4_096;
/// Byte budgets (spec 012, "Memory"): what each cache may hold, estimated at insert.
const REWRITES_BYTES: usize = 8 << 20;

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
pub fn allowed_bytes(a: &super::Allowed) -> usize {
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
    /// DuckDB's names of select items (`parse::names`).
    pub names: super::parse::NamesCache,
}

impl Default for RewriteCache {
    fn default() -> RewriteCache {
        RewriteCache {
            entries: Bounded::new(REWRITES_BYTES, MAX_ENTRIES),
            slices: SliceCache::default(),
            names: Default::default(),
        }
    }
}

impl RewriteCache {
    /// Drops every rewrite (the column types they were chosen by changed); keeps the types.
    pub fn forget(&self) {
        self.entries.clear();
        self.slices.clear();
    }

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
