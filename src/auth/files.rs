//! Keys read `KEYS FROM '<file>'` (specs/003, "Keys from a file"). The policy never holds them —
//! neither in memory nor in the store — so a key the identity provider rotated out cannot come
//! back from a copy: `KeyFiles` reads the file when a policy is published (a load, a reload, a
//! refresh from a shared store, a management batch), and again every `acl_jwks_refresh_interval`
//! seconds. Until an issuer's file has been read, its tokens are refused (`KeysNotRead`); when no
//! read has given keys, `KeysUnreadable`.
//!
//! The statement path never waits for a file, not even the statement that finds an issuer's
//! re-read due: it starts a thread that reads the file (one read in flight per issuer) and goes
//! on with the keys it has; the keys the thread reads are used from the statement after it
//! finished. A publish starts a read of every file issuer and waits for them (at most
//! `PUBLISH_WAIT`), off the statement path. When the file cannot be read again, no longer holds
//! valid keys, or a read hangs, the last good keys stay in use — for at most `acl_jwks_max_stale`
//! seconds after the last good read; after that the issuer's tokens are refused (`KeysStale`)
//! until a read succeeds again. Every read is bounded (`read_keys_file`).
use super::IssuerKeys;
use crate::error::TokenReason;
use crate::policy::{Issuer, Policy};
use arc_swap::ArcSwapOption;
use dashmap::DashMap;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Generations of keys, unique in the process (a reader thread outlives no `KeyFiles` borrow).
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, Ordering::AcqRel)
}

/// Keys files are small; anything larger is a wrong path, not a key (the design's 1 MiB).
pub const MAX_KEYS_FILE_BYTES: u64 = 1024 * 1024;

/// How long a publish waits for the reads it started: a file system that hangs holds the
/// publish (and the writer lock) this long at most; the read goes on in its thread.
pub const PUBLISH_WAIT: Duration = Duration::from_secs(2);

/// `acl_jwks_refresh_interval`'s default, seconds.
pub const DEFAULT_REFRESH_SECS: u64 = 300;
/// `acl_jwks_max_stale`'s default, seconds.
pub const DEFAULT_MAX_STALE_SECS: u64 = 3600;

/// The two settings, as the caller read them for this statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyTimes {
    /// Seconds between reads of a keys file on the statement path; 0: only a publish reads it.
    pub refresh_secs: u64,
    /// Seconds the last good keys stay valid while the file cannot be read.
    pub max_stale_secs: u64,
}

impl Default for KeyTimes {
    fn default() -> KeyTimes {
        KeyTimes { refresh_secs: DEFAULT_REFRESH_SECS, max_stale_secs: DEFAULT_MAX_STALE_SECS }
    }
}

/// Reads a keys file: a regular file of at most 1 MiB of UTF-8. The bound is on what is read,
/// not on what the file says its size is: `/proc` files say 0 (`/proc/self/pagemap` would give
/// hundreds of GiB), and a file can grow between the look and the read. The error is the reason
/// in words (no content).
pub fn read_keys_file(path: &str) -> Result<String, String> {
    use std::io::Read;
    let why = |e: std::io::Error| e.kind().to_string().to_lowercase();
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        // A FIFO opened without O_NONBLOCK waits for a writer; with it, the open returns and the
        // FIFO is refused below like every file that is not a regular one.
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    // The file opened is the file judged (no look at the path first that a swap could outrun).
    let file = open.open(path).map_err(why)?;
    let meta = file.metadata().map_err(why)?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let too_large = || format!("larger than {} MiB", MAX_KEYS_FILE_BYTES >> 20);
    if meta.len() > MAX_KEYS_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(MAX_KEYS_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(why)?;
    if bytes.len() as u64 > MAX_KEYS_FILE_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

/// The keys an issuer verifies with now, and their generation (a new one whenever they change).
pub struct Current {
    pub keys: Arc<IssuerKeys>,
    pub generation: u64,
}

/// Keys and their generation, swapped together: a statement never pairs the old keys with the
/// new generation (a cached verification would then outlive the keys it was made with).
struct Keyed {
    keys: Arc<IssuerKeys>,
    generation: u64,
}

/// One file-backed issuer's keys.
struct Live {
    /// What the entry reads: the path, and the ALGS the file's text is parsed with. A policy whose
    /// issuer names another path or other ALGS starts a new entry.
    path: String,
    algs: Vec<String>,
    /// The newest policy version that made or kept the entry: a statement of an older policy does
    /// not replace it (it would undo a publish).
    version: AtomicU64,
    /// `None` until a read gave keys.
    keys: ArcSwapOption<Keyed>,
    /// The text `keys` was parsed from (touched only by the one reader in flight).
    text: Mutex<String>,
    /// Unix seconds: when the last read was started (0: never); of the last good read.
    read_at: AtomicI64,
    last_good: AtomicI64,
    /// The last read failed (or gave keys that do not parse).
    failing: AtomicBool,
    /// Unix seconds the read in flight was started at (a statement's or publish's clock); 0:
    /// none in flight. Taken with a compare-exchange, so one caller starts a read and none waits.
    reading_since: AtomicI64,
    /// Test-only: how long each read sleeps first (a file system that is slow to answer).
    delay: Duration,
}

impl Live {
    fn new(issuer: &Issuer, path: &str, version: u64, delay: Duration) -> Live {
        Live {
            path: path.to_string(),
            algs: issuer.algs.clone(),
            version: AtomicU64::new(version),
            keys: ArcSwapOption::empty(),
            text: Mutex::new(String::new()),
            read_at: AtomicI64::new(0),
            last_good: AtomicI64::new(0),
            failing: AtomicBool::new(false),
            reading_since: AtomicI64::new(0),
            delay,
        }
    }

    fn reads(&self, issuer: &Issuer, path: &str) -> bool {
        self.path == path && self.algs == issuer.algs
    }

    /// What a statement at `now` verifies with.
    fn answer(&self, now: i64, times: KeyTimes) -> Result<Current, TokenReason> {
        let Some(k) = self.keys.load_full() else {
            return Err(if self.failing.load(Ordering::Acquire) { TokenReason::KeysUnreadable } else { TokenReason::KeysNotRead });
        };
        if self.stale(now, times) {
            return Err(TokenReason::KeysStale);
        }
        Ok(Current { keys: Arc::clone(&k.keys), generation: k.generation })
    }

    /// The last good keys are too old and nothing confirms them: the last read failed, or one
    /// has been in flight since an earlier second (a file system that hangs is a file that
    /// cannot be read).
    fn stale(&self, now: i64, times: KeyTimes) -> bool {
        let since = self.reading_since.load(Ordering::Acquire);
        let unconfirmed = self.failing.load(Ordering::Acquire) || (since != 0 && now > since);
        unconfirmed && now.saturating_sub(self.last_good.load(Ordering::Acquire)) > secs(times.max_stale_secs)
    }

    /// Is a read due at `now`? Every interval; an entry without keys every second (its tokens
    /// are all refused meanwhile, whatever the interval says).
    fn due(&self, now: i64, times: KeyTimes) -> bool {
        let every = if self.keys.load().is_none() { 1 } else if times.refresh_secs == 0 { return false } else { secs(times.refresh_secs) };
        now >= self.read_at.load(Ordering::Acquire).saturating_add(every)
    }
}

/// Per database instance (inside `TokenCache`).
#[derive(Default)]
pub struct KeyFiles {
    live: DashMap<String, Arc<Live>>,
    /// Test-only (`test-faults`: `slow_keys_file`): each read sleeps this long first.
    delay: Mutex<Duration>,
}

impl KeyFiles {
    /// The keys `issuer` (read `KEYS FROM path`, in the policy of `version`) verifies with at
    /// `now`, starting a read of the file when one is due and no other caller is reading it.
    pub fn current(&self, issuer: &Issuer, path: &str, version: u64, now: i64, times: KeyTimes) -> Result<Current, TokenReason> {
        // The common case under a shard's read lock; a new or replaced entry under its write lock.
        let found = self.live.get(&issuer.iss).map(|l| Arc::clone(&l));
        let live = match found {
            Some(l) if l.reads(issuer, path) => l,
            _ => self.slot(issuer, path, version).ok_or(TokenReason::KeysNotRead)?,
        };
        // The answer is taken before a read is started: the statement that starts it is judged
        // with the keys it found (the read may finish before this statement would look again).
        let answer = live.answer(now, times);
        if live.due(now, times) {
            // `max(1)`: 0 means "none in flight" (a clock at the epoch is no real clock).
            let started = live.reading_since.compare_exchange(0, now.max(1), Ordering::AcqRel, Ordering::Acquire);
            // Still due? A read may have started and finished between the look and the exchange.
            if started.is_ok() {
                if live.due(now, times) {
                    live.read_at.store(now, Ordering::Release);
                    start_read(live, now);
                } else {
                    live.reading_since.store(0, Ordering::Release);
                }
            }
        }
        answer
    }

    /// `policy` is being published at `now`: forgets issuers it no longer has (or no longer
    /// reads from a file), reads every file issuer's file — an issuer new here, or whose path or
    /// ALGS changed, starts with no keys — and waits for the reads, at most `wait`. A read still
    /// in flight then goes on; the issuer verifies with what it had, or nothing, until it ends.
    pub fn publish(&self, policy: &Policy, now: i64, wait: Duration) {
        self.live.retain(|iss, _| policy.issuers.get(iss).is_some_and(|i| i.keys_file.is_some()));
        let mut reading = Vec::new();
        for issuer in policy.issuers.values() {
            let Some(path) = &issuer.keys_file else { continue };
            let Some(live) = self.slot(issuer, path, policy.version) else { continue };
            // Due or not: a publish reads. A read already in flight is the one waited for.
            if live.reading_since.compare_exchange(0, now.max(1), Ordering::AcqRel, Ordering::Acquire).is_ok() {
                live.read_at.store(now, Ordering::Release);
                start_read(Arc::clone(&live), now);
            }
            reading.push(live);
        }
        let until = Instant::now() + wait;
        while reading.iter().any(|l| l.reading_since.load(Ordering::Acquire) != 0) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The entry for `issuer` reading `path` under the policy of `version`: the one there if it
    /// reads the same (now kept by `version` too), else a new one without keys. `None`: the entry
    /// there belongs to a newer policy (the caller's is on its way out; it must not undo that).
    fn slot(&self, issuer: &Issuer, path: &str, version: u64) -> Option<Arc<Live>> {
        let fresh = || Arc::new(Live::new(issuer, path, version, *self.delay.lock()));
        match self.live.entry(issuer.iss.clone()) {
            dashmap::Entry::Occupied(e) if e.get().reads(issuer, path) => {
                e.get().version.fetch_max(version, Ordering::AcqRel);
                Some(Arc::clone(e.get()))
            }
            dashmap::Entry::Occupied(e) if e.get().version.load(Ordering::Acquire) > version => None,
            dashmap::Entry::Occupied(mut e) => {
                let live = fresh();
                e.insert(Arc::clone(&live));
                Some(live)
            }
            dashmap::Entry::Vacant(e) => Some(Arc::clone(e.insert(fresh()).value())),
        }
    }

    /// What kind of keys the issuer's file gave (`acl_issuers().key_kind`); `None`: none yet.
    pub fn key_kind(&self, iss: &str) -> Option<&'static str> {
        let live = self.live.get(iss)?;
        if live.keys.load().is_none() {
            return None;
        }
        let kind = super::keys::kind_of(&live.text.lock());
        Some(kind)
    }

    /// Test-only faults: every read sleeps `delay` first (entries made from now on).
    #[cfg(any(test, feature = "test-faults"))]
    pub fn set_read_delay(&self, delay: Duration) {
        *self.delay.lock() = delay;
    }

    /// Waits until no read is in flight (tests, which then look at what the read gave).
    #[cfg(test)]
    pub fn settle(&self) {
        while self.live.iter().any(|l| l.reading_since.load(Ordering::Acquire) != 0) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// Reads `live`'s file on a thread of its own; the caller that started it does not wait. If no
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
        live.read_at.store(0, Ordering::Release);
        live.reading_since.store(0, Ordering::Release);
    }
}

/// One read of the file, started at `now` (the caller's clock, which `last_good` is kept in).
fn read(live: &Live, now: i64) {
    if !live.delay.is_zero() {
        std::thread::sleep(live.delay);
    }
    let Ok(text) = read_keys_file(&live.path) else {
        live.failing.store(true, Ordering::Release);
        return;
    };
    let mut current = live.text.lock();
    if live.keys.load().is_none() || *current != text {
        let with = Issuer { keys: text, algs: live.algs.clone(), ..Issuer::default() };
        let Ok(keys) = IssuerKeys::parse(&with) else {
            live.failing.store(true, Ordering::Release);
            return;
        };
        // A new generation makes every token verified with the old keys verify again.
        live.keys.store(Some(Arc::new(Keyed { keys: Arc::new(keys), generation: next_generation() })));
        *current = with.keys;
    }
    live.last_good.store(now, Ordering::Release);
    live.failing.store(false, Ordering::Release);
}

fn secs(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}
