//! The node's stream budget (`acl_node_stream_budget`, spec 018): bytes of result batches the
//! doors hold between DuckDB and the socket, all streams together. A stream whose next batch
//! does not fit waits for room (streams that drain give it back); one that waits longer than
//! `acl_flight_stream_idle` fails clearly. A batch larger than the whole budget passes alone
//! (when nothing else is held), so no result is refused for its batch size.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub struct Budget {
    limit: AtomicU64,
    held: AtomicU64,
    room: Notify,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget { limit: AtomicU64::new(limit.max(1)), held: AtomicU64::new(0), room: Notify::new() }
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit.max(1), Ordering::Relaxed);
        self.room.notify_waiters();
    }

    fn try_take(&self, n: u64) -> bool {
        let limit = self.limit();
        let mut held = self.held.load(Ordering::Acquire);
        loop {
            if held != 0 && held.saturating_add(n) > limit {
                return false;
            }
            match self.held.compare_exchange_weak(held, held + n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => held = now,
            }
        }
    }

    /// Takes `n` bytes, waiting at most `wait` for room; a `Held` gives them back when dropped.
    pub async fn take(self: &Arc<Self>, n: u64, wait: Duration) -> Option<Held> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.room.notified();
            if self.try_take(n) {
                return Some(Held { budget: Arc::clone(self), n });
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.try_take(n).then(|| Held { budget: Arc::clone(self), n });
            }
        }
    }
}

/// Bytes of the budget a batch holds until it has been handed to the socket.
pub struct Held {
    budget: Arc<Budget>,
    n: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.n, Ordering::AcqRel);
        self.budget.room.notify_waiters();
    }
}
