//! The metadata listings' cache (spec 005), bounded in bytes (spec 012, "Memory").
use super::{listing_rows, Describe, MetaRows, Row, SchemaObjects};
use crate::error::Result;
use crate::policy::Policy;

/// Listings and column shapes already computed, keyed by the policy version, the principal and
/// the host's catalog stamp (any DDL or ATTACH moves it), so a client's connect-time queries cost
/// a lookup. A stamp of 0 (unknown) is never cached. Bounded in bytes (spec 012, "Memory").
pub struct MetaCache {
    listings: crate::bounded::Bounded<(u64, String, u64), std::sync::Arc<MetaRows>>,
    /// `(exposed query, stamp)` → its columns, shared by every principal that sees that shape.
    shapes: crate::bounded::Bounded<(String, u64), Option<std::sync::Arc<Vec<(String, String)>>>>,
}

/// Past this many entries, or these many bytes, a map starts over (no LRU bookkeeping).
const MAX_CACHED: usize = 4_096;
const LISTINGS_BYTES: usize = 8 << 20;
const SHAPES_BYTES: usize = 2 << 20;

impl Default for MetaCache {
    fn default() -> MetaCache {
        MetaCache {
            listings: crate::bounded::Bounded::new(LISTINGS_BYTES, MAX_CACHED),
            shapes: crate::bounded::Bounded::new(SHAPES_BYTES, MAX_CACHED),
        }
    }
}

impl MetaRows {
    /// The heap the rows hold (each value a string beside its `Option<String>` slot).
    fn bytes(&self) -> usize {
        let slot = std::mem::size_of::<Option<String>>();
        [&self.databases, &self.schemas, &self.tables, &self.columns]
            .iter()
            .flat_map(|rows| rows.iter())
            .map(|r| std::mem::size_of::<Row>() + r.iter().map(|v| slot + v.as_ref().map_or(0, String::len)).sum::<usize>())
            .sum()
    }
}

impl MetaCache {
    pub fn rows(
        &self,
        policy: &Policy,
        arg: &str,
        stamp: u64,
        describe: &mut Describe<'_>,
        schema_objects: &mut SchemaObjects<'_>,
    ) -> Result<std::sync::Arc<MetaRows>> {
        // A virtual schema's contents are part of the listing: the stamp moves with any DDL in
        // its physical schema (whose catalog is never temp or system, see the shim), so a cached
        // listing never misses a table created there.
        if stamp == 0 {
            return listing_rows(policy, arg, describe, schema_objects).map(std::sync::Arc::new);
        }
        let key = (policy.version, arg.to_string(), stamp);
        if let Some(hit) = self.listings.get(&key) {
            return Ok(std::sync::Arc::clone(&hit));
        }
        let mut shaped = |sql: &str| {
            let k = (sql.to_string(), stamp);
            if let Some(hit) = self.shapes.get(&k) {
                return hit.clone();
            }
            let cols = describe(sql);
            let size = k.0.len() + cols.as_ref().map_or(0, |c| c.iter().map(|(n, t)| n.len() + t.len() + 48).sum());
            self.shapes.insert(k, cols.clone(), size);
            cols
        };
        let rows = std::sync::Arc::new(listing_rows(policy, arg, &mut shaped, schema_objects)?);
        let size = key.1.len() + rows.bytes();
        self.listings.insert(key, std::sync::Arc::clone(&rows), size);
        Ok(rows)
    }
}
