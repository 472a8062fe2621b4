//! The background thread of a shared policy store (PostgreSQL, spec 006): it `LISTEN`s for the
//! notice every committed batch sends, and asks for the store's policy version at most every
//! `acl_version_check_interval` ms as well, so a lost notice is healed; either way
//! `source::refresh` publishes a newer policy. The statement path never waits for it.
//!
//! The thread belongs to the database instance: it holds only a `Weak` reference to the state,
//! and the state holds the `Watcher` whose drop (the instance closing) stops it within `SLICE`.
//! It never calls into DuckDB. Only in the `extension` build.
use super::{source, State};
use crate::store::{Changes, Store};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The longest the thread waits before it looks whether its instance is still there.
const SLICE: Duration = Duration::from_millis(100);

/// Held by the state: dropped, the thread stops.
struct Watcher {
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Starts the thread for the store in use, once per instance (a second call does nothing).
pub fn start(state: &Arc<State>) {
    let Some(store) = state.store() else { return };
    let stop = Arc::new(AtomicBool::new(false));
    if state.watcher.set(Box::new(Watcher { stop: stop.clone() })).is_err() {
        return;
    }
    let weak = Arc::downgrade(state);
    let spawned = std::thread::Builder::new().name("acl-policy-watch".into()).spawn(move || {
        // Nothing may unwind out of the thread; a panic ends the watching (the poll is gone, the
        // node keeps its snapshot and management still works).
        // On the large stack (`stack::run`): the policy it loads is parsed here.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::stack::run(|| run(&weak, &store, &stop))));
        if let (Ok(Err(_)), Some(state)) = (ran, weak.upgrade()) {
            state.note_health(Err(&super::no_room()));
        }
    });
    if let Err(e) = spawned {
        state.note_health(Err(&crate::error::AclError::internal(if e.kind() == std::io::ErrorKind::OutOfMemory {
            "the policy watch thread could not be started (out of memory)"
        } else {
            "the policy watch thread could not be started"
        })));
    }
}

fn interval(weak: &Weak<State>) -> Option<Duration> {
    weak.upgrade().map(|s| s.version_check_interval())
}

fn run(weak: &Weak<State>, store: &Store, stop: &AtomicBool) {
    let Some(mut every) = interval(weak) else { return };
    let mut changes: Option<Box<dyn Changes>> = None;
    let mut listens = true;
    let mut next_listen = Instant::now();
    let mut next_check = Instant::now() + every;
    while !stop.load(Ordering::SeqCst) {
        let Some(now_every) = interval(weak) else { return };
        if now_every != every {
            // A new interval applies from now.
            next_check = Instant::now() + now_every;
            every = now_every;
        }
        if listens && changes.is_none() && Instant::now() >= next_listen {
            match store.listen() {
                None => listens = false,
                Some(Ok(c)) => {
                    changes = Some(c);
                    // Notices sent while nobody listened are lost: look now.
                    next_check = Instant::now();
                }
                Some(Err(e)) => {
                    note(weak, &e);
                    next_listen = Instant::now() + every.clamp(SLICE, Duration::from_secs(5));
                }
            }
        }
        // 0: no poll, notices only.
        let polls = !every.is_zero();
        let wait = if polls { next_check.saturating_duration_since(Instant::now()).min(SLICE) } else { SLICE };
        let heard = match changes.as_mut() {
            Some(c) => c.wait(wait).unwrap_or_else(|e| {
                changes = None;
                note(weak, &e);
                false
            }),
            None => {
                std::thread::sleep(wait);
                false
            }
        };
        if heard || (polls && Instant::now() >= next_check) {
            next_check = Instant::now() + every;
            let Some(state) = weak.upgrade() else { return };
            // A failure is noted in the state's status (acl_status()); the next tick tries again.
            let _ = source::refresh(&state);
        }
    }
}

fn note(weak: &Weak<State>, e: &crate::error::AclError) {
    if let Some(state) = weak.upgrade() {
        state.note_health(Err(e));
    }
}
