//! The types of the physical columns a principal's leak-proof comparisons reach (spec 002,
//! "Known types"), as DuckDB bound them.
//!
//! The parser hook runs before any transaction, so it cannot read the catalog. Instead, the
//! typed guard's own function (`acl_leakproof`, cpp/leakproof.cpp) reports each column's type
//! when DuckDB binds it, and later rewrites use what was reported: a column known to be safe for
//! the comparison gets no guard at all, only `acl_leakproof_strict(kind, col)`, which DuckDB
//! folds to TRUE at bind time or which refuses the statement if the type has changed since
//! (ALTER, another table under the same name), and then forgets every type. So a stale entry can cost one refused statement, never a leak:
//! the safety of what runs is always decided on the types DuckDB bound for that statement.
use super::slices::LitKind;
use dashmap::DashMap;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// Past this many columns the map starts over (a column is a few dozen bytes).
const MAX_COLUMNS: usize = 100_000;

/// Physical column (`ColumnTypes::key`) → DuckDB's name of its type (`LogicalType::ToString`).
#[derive(Default)]
pub struct ColumnTypes {
    map: DashMap<String, String>,
    /// Bumped whenever an entry is added or changes: rewrites made before depend on the old map.
    epoch: AtomicU64,
}

/// What the map knows of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// Never bound yet: the guard asks DuckDB at bind time (and reports the type).
    Unknown,
    /// Bound before, to a type the comparison's literal cannot fail against.
    Safe,
    /// Bound before, to a type it can fail against: the full guard.
    Unsafe,
}

impl ColumnTypes {
    /// The key of a physical column: its parts, quoted, so no two columns share one.
    pub fn key(t: &crate::policy::PhysName, column: &str) -> String {
        use crate::sqltext::ident;
        format!("{}.{}.{}.{}", ident(&t.db), ident(&t.schema), ident(&t.name), ident(column))
    }

    pub fn known(&self, key: &str, kind: LitKind) -> Known {
        match self.map.get(key) {
            None => Known::Unknown,
            Some(ty) if kind.admits(&ty) => Known::Safe,
            Some(_) => Known::Unsafe,
        }
    }

    /// Records what DuckDB bound `key` to; true when that is news (the caller then drops the
    /// rewrites made without it).
    pub fn note(&self, key: &str, ty: &str) -> bool {
        if key.is_empty() || self.map.get(key).is_some_and(|t| *t == ty) {
            return false;
        }
        if self.map.len() >= MAX_COLUMNS {
            self.map.clear();
        }
        self.map.insert(key.to_string(), ty.to_string());
        self.epoch.fetch_add(1, SeqCst);
        true
    }

    /// Forgets every type (a strict check found one stale: which one, it cannot say).
    pub fn clear(&self) {
        self.map.clear();
        self.epoch.fetch_add(1, SeqCst);
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_unknown_until_noted_and_news_only_once() {
        let t = ColumnTypes::default();
        assert_eq!(t.known("k", LitKind::Number), Known::Unknown);
        assert!(t.note("k", "BIGINT"));
        assert!(!t.note("k", "BIGINT"));
        assert_eq!(t.known("k", LitKind::Number), Known::Safe);
        assert_eq!(t.known("k", LitKind::Text), Known::Unsafe);
        assert!(t.note("k", "VARCHAR"), "a changed type is news");
        assert_eq!(t.known("k", LitKind::Text), Known::Safe);
        assert_eq!(t.epoch(), 2);
        assert!(!t.note("", "BIGINT"), "an empty key is never kept");
    }
}
