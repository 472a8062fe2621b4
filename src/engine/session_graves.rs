//! What a node remembers of ended sessions (spec 017, "Ends"): their operator ids in the order
//! they ended, so an ended handle reads its reason for an hour, and at most `MAX` of them. The
//! oldest is forgotten as another ends (`bury`), never only at a sweep: between sweeps the node
//! remembers no more than the bound. O(1) amortised and no lock of ours (a `DashMap`'s shard
//! locks and two counters).
use dashmap::DashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ended sessions remembered at most.
pub const MAX: u64 = 10_000;

#[derive(Default)]
pub struct Graves {
    /// `ids[seq]`: the operator id of the session that ended `seq`-th; `head..tail` in use.
    ids: DashMap<u64, u64>,
    head: AtomicU64,
    tail: AtomicU64,
}

impl Graves {
    /// Remembers that session `id` ended; `forget` each session past the bound (the oldest).
    pub fn bury(&self, id: u64, forget: impl Fn(u64)) {
        let seq = self.tail.fetch_add(1, Ordering::SeqCst);
        self.ids.insert(seq, id);
        // A forgetter that passed `seq` before it was inserted found nothing there: forget it here.
        if self.head.load(Ordering::SeqCst) > seq {
            if let Some((_, id)) = self.ids.remove(&seq) {
                forget(id);
            }
        }
        while self.len() > MAX {
            if !self.forget_oldest(|_| true, &forget) {
                break;
            }
        }
    }

    /// Ids remembered (those being buried included).
    pub fn len(&self) -> u64 {
        self.tail.load(Ordering::SeqCst).saturating_sub(self.head.load(Ordering::SeqCst))
    }

    /// Forgets the session that ended first of those remembered if `due(its id)`; false when
    /// there is none, it is not due, or its burial is still under way.
    pub fn forget_oldest(&self, due: impl Fn(u64) -> bool, forget: impl Fn(u64)) -> bool {
        let h = self.head.load(Ordering::SeqCst);
        if h >= self.tail.load(Ordering::SeqCst) {
            return false;
        }
        // Not inserted yet (its ender is between the two steps of `bury`): it is the newest
        // there is, and that ender forgets it if we move past it.
        let Some(id) = self.ids.get(&h).map(|e| *e) else { return false };
        if !due(id) {
            return false;
        }
        if self.head.compare_exchange(h, h + 1, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            if let Some((_, id)) = self.ids.remove(&h) {
                forget(id);
            }
        }
        true
    }
}
