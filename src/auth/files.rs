//! Keys read `KEYS FROM '<file>'` are read again every `acl_jwks_refresh_interval` seconds, so an
//! identity provider's key rotation (a JWKS file a sidecar keeps current) reaches the node without
//! a management statement (specs/003, "Keys from a file").
//!
//! The policy keeps the keys as read when the issuer was created; `KeyFiles` keeps what was read
//! since, per issuer. The statement path never waits for a file, not even the statement that
//! finds an issuer's refresh due: it starts a thread that reads the file (one read in flight per
//! issuer, once per interval) and goes on with the keys it has, as every other statement does;
//! the keys the thread reads are used from the statement after it finished. When the file cannot
//! be read, no longer holds valid keys, or a read hangs, the last good keys stay in use — for at
//! most `acl_jwks_max_stale` seconds after the last good read; after that the issuer's tokens are
//! refused (`TokenReason::KeysStale`) until a read succeeds again.
use super::IssuerKeys;
use crate::policy::Issuer;
use arc_swap::ArcSwap;
use dashmap::DashMap;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// Generations of keys, unique in the process (a reader thread outlives no `KeyFiles` borrow).
static GENERATIONS: AtomicU64 = AtomicU64::new(0);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, Ordering::AcqRel)
}

/// Keys files are small; anything larger is a wrong path, not a key.
pub const MAX_KEYS_FILE_BYTES: u64 = 1024 * 1024;

/// `acl_jwks_refresh_interval`'s default, seconds.
pub const DEFAULT_REFRESH_SECS: u64 = 300;
/// `acl_jwks_max_stale`'s default, seconds.
pub const DEFAULT_MAX_STALE_SECS: u64 = 3600;

/// The two settings, as the caller read them for this statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyTimes {
    /// Seconds between reads of a keys file; 0: never read again (the keys of CREATE ISSUER).
    pub refresh_secs: u64,
    /// Seconds the last good keys stay valid while the file cannot be read.
    pub max_stale_secs: u64,
}

impl Default for KeyTimes {
    fn default() -> KeyTimes {
        KeyTimes { refresh_secs: DEFAULT_REFRESH_SECS, max_stale_secs: DEFAULT_MAX_STALE_SECS }
    }
}

/// Reads a keys file: at most 1 MiB, UTF-8. The error is the reason in words (no content).
pub fn read_keys_file(path: &str) -> Result<String, String> {
    let why = |e: std::io::Error| e.kind().to_string().to_lowercase();
    let meta = std::fs::metadata(path).map_err(why)?;
    if !meta.is_file() || meta.len() > MAX_KEYS_FILE_BYTES {
        return Err("not a file of at most 1 MiB".into());
    }
    std::fs::read_to_string(path).map_err(why)
}

/// The keys an issuer verifies with now, and their generation (a new one whenever they change).
pub struct Current {
    pub keys: Arc<IssuerKeys>,
    pub generation: u64,
}

/// One file-backed issuer's keys since the policy's.
struct Live {
    /// What the entry started from: the path, and the issuer as the policy holds it (its keys as
    /// read when it was created, its ALGS, which the file's text is parsed with). A CREATE OR
    /// REPLACE or ALTER ISSUER that changes any of it starts a new entry.
    path: String,
    issuer: Issuer,
    keys: ArcSwap<IssuerKeys>,
    /// The text `keys` was parsed from (touched only by the one reader in flight).
    text: Mutex<String>,
    generation: AtomicU64,
    /// Unix seconds: when the file is due to be read again; of the last good read.
    next_read: AtomicI64,
    last_good: AtomicI64,
    /// The last read failed (or gave keys that do not parse).
    failing: AtomicBool,
    /// Unix seconds the read in flight was started at (a statement's clock); 0: none in flight.
    /// Taken with a compare-exchange, so one statement starts a read and none waits for it.
    reading_since: AtomicI64,
}

/// Per database instance (inside `TokenCache`).
#[derive(Default)]
pub struct KeyFiles {
    live: DashMap<String, Arc<Live>>,
}

impl KeyFiles {
    /// The keys `issuer` (read `KEYS FROM path`) verifies with at `now`, reading the file first
    /// when it is due and no other statement is reading it. `None`: the keys are stale.
    pub fn current(&self, issuer: &Issuer, path: &str, now: i64, times: KeyTimes) -> Option<Current> {
        let live = self.entry(issuer, path, now, times)?;
        // The answer is taken before a read is started: the statement that starts it is judged
        // with the keys it found (the read may finish before this statement would look again).
        let answer = if stale(&live, now, times) {
            None
        } else {
            Some(Current { keys: live.keys.load_full(), generation: live.generation.load(Ordering::Acquire) })
        };
        if times.refresh_secs > 0 && now >= live.next_read.load(Ordering::Acquire) {
            // `max(1)`: 0 means "none in flight" (a clock at the epoch is no real clock).
            let started = live.reading_since.compare_exchange(0, now.max(1), Ordering::AcqRel, Ordering::Acquire);
            // Still due? A read may have started and finished between the load and the exchange.
            if started.is_ok() {
                if now >= live.next_read.load(Ordering::Acquire) {
                    live.next_read.store(now.saturating_add(secs(times.refresh_secs)), Ordering::Release);
                    start_read(Arc::clone(&live), now);
                } else {
                    live.reading_since.store(0, Ordering::Release);
                }
            }
        }
        answer
    }

    /// The issuer's entry, started from the policy's keys if it has none or the policy's changed.
    fn entry(&self, issuer: &Issuer, path: &str, now: i64, times: KeyTimes) -> Option<Arc<Live>> {
        if let Some(l) = self.live.get(&issuer.iss) {
            if l.path == path && l.issuer == *issuer {
                return Some(Arc::clone(&l));
            }
        }
        // The policy's keys were checked when the issuer was created; if they no longer parse,
        // the issuer verifies nothing (as for inline keys).
        let keys = IssuerKeys::parse(issuer).ok()?;
        let live = Arc::new(Live {
            path: path.to_string(),
            issuer: issuer.clone(),
            keys: ArcSwap::from_pointee(keys),
            text: Mutex::new(issuer.keys.clone()),
            generation: AtomicU64::new(next_generation()),
            next_read: AtomicI64::new(now.saturating_add(secs(times.refresh_secs))),
            last_good: AtomicI64::new(now),
            failing: AtomicBool::new(false),
            reading_since: AtomicI64::new(0),
        });
        self.live.insert(issuer.iss.clone(), Arc::clone(&live));
        Some(live)
    }

    /// Forgets issuers the policy no longer has (called when the policy version moves).
    pub fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.live.retain(|iss, _| keep(iss));
    }

    /// Waits until no read is in flight (tests, which then look at what the read gave).
    #[cfg(test)]
    pub fn settle(&self) {
        while self.live.iter().any(|l| l.reading_since.load(Ordering::Acquire) != 0) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// The last good keys are too old and nothing confirms them: the last read failed, or one has
/// been in flight since an earlier second (a file system that hangs is a file that cannot be read).
fn stale(live: &Live, now: i64, times: KeyTimes) -> bool {
    let since = live.reading_since.load(Ordering::Acquire);
    let unconfirmed = live.failing.load(Ordering::Acquire) || (since != 0 && now > since);
    unconfirmed && now.saturating_sub(live.last_good.load(Ordering::Acquire)) > secs(times.max_stale_secs)
}

/// Reads `live`'s file on a thread of its own; the statement that started it does not wait. If no
/// thread can be started, nothing is read now and the next due statement tries again.
fn start_read(live: Arc<Live>, now: i64) {
    let reader = Arc::clone(&live);
    let spawned = std::thread::Builder::new().name("acl-keys-file".into()).spawn(move || {
        // A panic must not leave the read marked in flight forever (and cross no boundary: the
        // thread is ours, its panic ends only it).
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(&reader, now)));
        reader.reading_since.store(0, Ordering::Release);
    });
    if spawned.is_err() {
        live.next_read.store(now, Ordering::Release);
        live.reading_since.store(0, Ordering::Release);
    }
}

/// One read of the file, started at `now` (the statement's clock, which `last_good` is kept in).
fn read(live: &Live, now: i64) {
    let Ok(text) = read_keys_file(&live.path) else {
        live.failing.store(true, Ordering::Release);
        return;
    };
    let mut current = live.text.lock();
    if *current != text {
        let mut with = live.issuer.clone();
        with.keys = text;
        let Ok(keys) = IssuerKeys::parse(&with) else {
            live.failing.store(true, Ordering::Release);
            return;
        };
        live.keys.store(Arc::new(keys));
        // A new generation makes every token verified with the old keys verify again.
        live.generation.store(next_generation(), Ordering::Release);
        *current = with.keys;
    }
    live.last_good.store(now, Ordering::Release);
    live.failing.store(false, Ordering::Release);
}

fn secs(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}
