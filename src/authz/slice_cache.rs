//! Sliced objects' subqueries kept across statements, bounded in bytes as well as entries (spec
//! 012, "Memory").
use crate::bounded::Bounded;
use crate::error::Result;
use sqlparser::ast::Query;
use std::sync::Arc;

/// Past this many entries the cache starts over (besides its byte budget), as the others do.
const MAX_ENTRIES: usize = 4_096;
/// sqlparser's tree per byte of its printed text (measured: 59 for a sliced object's subquery,
/// 110 for an IN list of small numbers, 26 for long names, 5 for string literals).
pub(crate) const AST_PER_BYTE: usize = 64;
/// A 41-column guarded subquery is ≈ 150 KB as a tree: ≈ 100 of them (per principal and object).
const SLICES_BYTES: usize = 16 << 20;

/// The subquery that stands for a sliced object, per policy version, principal and object: built
/// from the policy's SQL pieces and parsed once, then cloned.
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
    pub fn clear(&self) {
        self.entries.clear();
    }

    /// The subquery for `key`, after `take` accepted its printed size (the rewrite's room: a
    /// statement that would grow past `acl_max_rewrite_bytes` is refused before the copy is made).
    pub fn get_or(
        &self,
        version: u64,
        principal: &str,
        key: &crate::policy::ObjKey,
        take: impl FnOnce(usize) -> Result<()>,
        build: impl FnOnce() -> Result<Box<Query>>,
    ) -> Result<Box<Query>> {
        let k = (version, principal.to_string(), key.clone());
        let hit = self.entries.get(&k).map(|e| Arc::clone(&e));
        if let Some(hit) = hit {
            take(hit.printed)?;
            return Ok(Box::new(hit.query.clone()));
        }
        let fresh = build()?;
        let printed = fresh.to_string().len();
        let size = k.1.len() + k.2.catalog.len() + k.2.schema.len() + k.2.name.len() + printed * AST_PER_BYTE;
        if self.entries.fits(size) {
            self.entries.insert(k, Arc::new(Slice { query: Query::clone(&fresh), printed }), size);
        }
        take(printed)?;
        Ok(fresh)
    }
}
