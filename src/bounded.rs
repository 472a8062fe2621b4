//! A concurrent map bounded in bytes as well as in entries (spec 012, "Memory"): every cache of
//! the extension is one. Each entry's size is estimated by its owner when it is inserted (text
//! lengths, a multiple of the text for parsed trees); when the next entry would take the map
//! past its budget the map starts over, as the caches always did when full: no LRU bookkeeping
//! and no lock beyond the map's own shards. An entry larger than `1/LARGEST_SHARE` of the
//! budget is not kept at all, so one statement can never flush a cache by itself.
//!
//! The byte count may run ahead of what the map holds (an entry counted and then cleared by a
//! concurrent start-over, a replaced key), never behind it: an insert counts its entry after
//! the entry is in the map, and a start-over zeroes the count before it clears. So the map holds
//! at most its budget, plus the entries being inserted at that moment.
use dashmap::DashMap;
use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// What an entry costs beyond the sizes its owner counts: the map's slot, the key's and the
/// value's headers, an `Arc`.
pub const ENTRY_OVERHEAD: usize = 128;
/// An entry larger than this share of the budget is not kept.
pub const LARGEST_SHARE: usize = 8;

pub struct Bounded<K, V> {
    map: DashMap<K, V>,
    bytes: AtomicUsize,
    entries: AtomicUsize,
    budget: usize,
    max_entries: usize,
}

impl<K: Eq + Hash, V> Bounded<K, V> {
    pub fn new(budget: usize, max_entries: usize) -> Bounded<K, V> {
        Bounded { map: DashMap::new(), bytes: AtomicUsize::new(0), entries: AtomicUsize::new(0), budget, max_entries }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<dashmap::mapref::one::Ref<'_, K, V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// Whether an entry of `size` bytes would be kept at all.
    pub fn fits(&self, size: usize) -> bool {
        size.saturating_add(ENTRY_OVERHEAD) <= self.budget / LARGEST_SHARE
    }

    /// Keeps `value` under `key`, `size` being the bytes it and the key hold (estimated); false
    /// (and nothing kept) when the entry is too large for this map.
    pub fn insert(&self, key: K, value: V, size: usize) -> bool {
        if !self.fits(size) {
            return false;
        }
        let size = size + ENTRY_OVERHEAD;
        if self.bytes.load(SeqCst).saturating_add(size) > self.budget || self.entries.load(SeqCst) >= self.max_entries {
            self.clear();
        }
        self.map.insert(key, value);
        self.bytes.fetch_add(size, SeqCst);
        self.entries.fetch_add(1, SeqCst);
        true
    }

    /// Drops one entry. Its bytes stay counted until the next start-over (the count may run
    /// ahead, never behind).
    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.remove(key);
    }

    /// Starts over: the count first, then the map (see the module comment).
    pub fn clear(&self) {
        self.bytes.store(0, SeqCst);
        self.entries.store(0, SeqCst);
        self.map.clear();
    }

    /// The bytes counted since the last start-over (at least what the map holds).
    pub fn bytes(&self) -> usize {
        self.bytes.load(SeqCst)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Bytes held by a list of strings, headers included.
pub fn texts<S: AsRef<str>>(v: &[S]) -> usize {
    v.iter().map(|s| s.as_ref().len() + std::mem::size_of::<String>()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_over_when_the_bytes_would_pass_the_budget() {
        let m: Bounded<u32, ()> = Bounded::new(64 * 1024, 1_000);
        for i in 0..100 {
            assert!(m.insert(i, (), 1_000));
            assert!(m.bytes() <= 64 * 1024, "{}", m.bytes());
        }
        assert!(m.len() < 100, "it started over at least once");
        assert!(m.len() * (1_000 + ENTRY_OVERHEAD) <= 64 * 1024);
    }

    #[test]
    fn starts_over_at_the_entry_cap() {
        let m: Bounded<u32, ()> = Bounded::new(usize::MAX / 2, 10);
        for i in 0..25 {
            m.insert(i, (), 0);
            assert!(m.len() <= 10);
        }
    }

    #[test]
    fn an_entry_over_its_share_is_not_kept() {
        let m: Bounded<u32, ()> = Bounded::new(8 * 1024, 1_000);
        assert!(m.insert(1, (), 10));
        assert!(!m.insert(2, (), 1024));
        assert!(m.get(&2).is_none() && m.get(&1).is_some(), "a refused entry flushes nothing");
    }

    #[test]
    fn concurrent_inserts_never_count_less_than_the_map_holds() {
        let m: Bounded<u64, ()> = Bounded::new(256 * 1024, 100_000);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let m = &m;
                s.spawn(move || {
                    for i in 0..20_000u64 {
                        m.insert(t * 1_000_000 + i, (), 100);
                    }
                });
            }
        });
        assert!(m.len() * (100 + ENTRY_OVERHEAD) <= m.bytes(), "{} entries, {} bytes", m.len(), m.bytes());
        assert!(m.bytes() <= 256 * 1024 + 4 * (100 + ENTRY_OVERHEAD));
    }
}
