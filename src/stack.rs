//! The stack every tree of the extension is built, walked, printed and dropped on (spec 012,
//! "One stack per thread instead of sqlparser's probes"; issue 33 item 4, "Stacks sized to the
//! statement, shared by the threads").
//!
//! sqlparser's trees are recursive, and so is everything done with them: its parser (bounded at
//! 50 levels of nesting), its derived visits, its printing, their drop, our own walks. A long
//! flat chain (`1+1+…`, `a OR b OR …`) is one level per term. sqlparser can probe the stack
//! before each recursive call (`recursive-protection`), but the probes cost a fifth of a
//! never-seen statement and never covered the drop or our walks. Instead, every entry that
//! touches trees runs on a region of its own: pages are committed only when touched.
//!
//! Why that bounds what the probes bounded, and more: the principal's own text needs at most
//! `need(tokens)` (chains per token, nesting per level, both measured), checked before any
//! parse; a longer text is refused. A tree the rewrite inserts from the policy is walked on the
//! same stack that drops it, and the drop was never probed: a tree deep enough to overflow
//! `POLICY_ROOM` while walked would have overflowed the caller's stack (8 MiB or less) while
//! dropped (measured: the rewrite takes 15 times the drop's stack per level, spec 017). The lowest
//! 64 KiB of a region are a guard: an overflow faults, it never writes past.
//!
//! Regions are sized to what the work can need and shared: a thread holds one only while it runs
//! on it (microseconds for a statement), taking it from a pool of free ones and giving it back.
//! So the address space reserved grows with the statements rewritten at the same moment, not
//! with the threads that ever rewrote one: 64 connections on a host under `ulimit -v` or strict
//! overcommit no longer reserve 64 GiB. A statement takes a `SMALL_BYTES` region when `need` says
//! it fits (every statement but one of tens of thousands of tokens), any other work (a
//! management batch, a view's guard, a store's load: texts of any size) a `REGION_BYTES` one.
//! When no region can be mapped, the caller waits for one to be given back, at most
//! `WAIT_LIMIT`; a region is never used by two threads at once.
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::{Duration, Instant};

/// The largest region (address space; only touched pages are memory): for work whose need is not
/// known, and statements too long for a small one.
pub const REGION_BYTES: usize = 1 << 30;
/// A statement's region: room for `need` of a text of up to about 24 000 tokens and `POLICY_ROOM`.
pub const SMALL_BYTES: usize = 160 << 20;
const GUARD_BYTES: usize = 64 << 10;
/// Room for the trees the rewrite inserts from the policy, on top of the principal's `need`: what
/// a policy tree that can still be dropped on an 8 MiB stack takes to rewrite. Measured in release
/// (`engine::stack_tests`): a chain's term takes 960 B to rewrite (a slice's predicate, a virtual
/// function's body) and 64 B to drop, 15 times less: 8 MiB × 15 = 120 MiB.
pub(crate) const POLICY_ROOM: usize = 128 << 20;
/// Touching more than this leaves the region's pages given back afterwards.
const KEEP_BYTES: usize = 8 << 20;
/// How long a caller waits for a region when none can be mapped.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// The stack a text of `tokens` tokens needs at most: a chain of that many terms, plus sqlparser's
/// 50 levels of nesting, as the rewrite's own expansions deepen them. Measured (spec 012): release
/// 200 B per chained token and 31 KiB per nested subquery; debug 23 KiB and 136 KiB.
fn need(tokens: usize) -> usize {
    let (per_token, nesting) = if cfg!(debug_assertions) { (48 << 10, 32 << 20) } else { (1 << 10, 8 << 20) };
    tokens.saturating_mul(per_token).saturating_add(nesting)
}

/// What a statement of `tokens` tokens needs, the policy's trees included.
pub fn statement_need(tokens: usize) -> usize {
    need(tokens).saturating_add(POLICY_ROOM)
}

/// Whether a text of `tokens` tokens fits the region at all.
pub fn fits(tokens: usize) -> bool {
    statement_need(tokens) <= REGION_BYTES - GUARD_BYTES
}

/// The region could not be reserved: the caller refuses (a tree must not be made off the region).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom;

/// One mapping: `len` bytes from `base`, the lowest `GUARD_BYTES` inaccessible.
struct Region {
    base: *mut u8,
    len: usize,
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping `reserve` made, which nothing runs on any more
        // (a region is dropped only once no thread holds it).
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Free regions of one size, in slots a thread claims by swapping the pointer out (no lock, and
/// no two threads ever get the same region). At most `keep` are kept; more are unmapped.
struct Pool {
    bytes: usize,
    keep: usize,
    slots: [AtomicPtr<Region>; 16],
}

impl Pool {
    const fn new(bytes: usize, keep: usize) -> Pool {
        Pool { bytes, keep, slots: [const { AtomicPtr::new(std::ptr::null_mut()) }; 16] }
    }

    fn take(&self) -> Option<Box<Region>> {
        for slot in &self.slots {
            if slot.load(Ordering::Relaxed).is_null() {
                continue;
            }
            let p = slot.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: every pointer in a slot came from `Box::into_raw` in `give`, and the
                // swap made this thread its only owner.
                return Some(unsafe { Box::from_raw(p) });
            }
        }
        None
    }

    /// Keeps `r` for the next caller, or unmaps it when every slot is taken.
    fn give(&self, r: Box<Region>) {
        let p = Box::into_raw(r);
        for slot in &self.slots[..self.keep] {
            if slot.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                return;
            }
        }
        // SAFETY: `p` came from `Box::into_raw` above and no slot took it.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// 4 small regions kept free and 1 large one (1.6 GiB of address space at most): rewrites take
/// microseconds, so more rarely run at once than the machine has cores, and what is kept free is
/// address space (and, under strict overcommit, which ignores `MAP_NORESERVE`, commit charge)
/// that DuckDB's own allocations cannot have. A burst of large work must not keep the address
/// space a statement's region needs (`acquire` also unmaps every free region before it waits).
static SMALL: Pool = Pool::new(SMALL_BYTES, 4);
static LARGE: Pool = Pool::new(REGION_BYTES, 1);

/// Unmaps every free region of both pools.
fn trim() {
    for pool in [&SMALL, &LARGE] {
        while pool.take().is_some() {}
    }
}

thread_local! {
    /// The region the thread runs on now, `(base, len)` (`(0, 0)`: its own stack). A callback
    /// into DuckDB may come back into an entry: it stays on the region when the room left is
    /// enough.
    static ON: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn reserve(len: usize) -> Option<Box<Region>> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing; no memory of
    // ours is touched.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the lowest `GUARD_BYTES` of the mapping just made.
    if unsafe { libc::mprotect(base, GUARD_BYTES, libc::PROT_NONE) } != 0 {
        // SAFETY: the mapping just made, unused.
        unsafe { libc::munmap(base, len) };
        return None;
    }
    Some(Box::new(Region { base: base as *mut u8, len }))
}

/// A free region of `pool`'s size: one given back, a new mapping, or — when none can be mapped
/// (an address-space limit, strict overcommit) — one given back while waiting, for at most
/// `WAIT_LIMIT`.
fn acquire(pool: &Pool) -> Option<Box<Region>> {
    if let Some(r) = pool.take().or_else(|| reserve(pool.bytes)) {
        return Some(r);
    }
    // The address space may be held by free regions (of the other size, or more of this one
    // than a thread took back since): give them up before waiting.
    trim();
    let until = Instant::now() + WAIT_LIMIT;
    let mut pause = Duration::from_micros(50);
    while Instant::now() < until {
        std::thread::sleep(pause);
        if let Some(r) = pool.take().or_else(|| reserve(pool.bytes)) {
            return Some(r);
        }
        pause = (pause * 2).min(Duration::from_millis(5));
    }
    None
}

/// Runs `work` on a region of the largest size (in place when already on one): for work whose
/// stack need is not known. A panic in `work` unwinds to the caller as it would have without
/// the switch.
pub fn run<R>(work: impl FnOnce() -> R) -> Result<R, NoRoom> {
    run_with(REGION_BYTES - GUARD_BYTES, work)
}

/// Runs `work` with at least `need` bytes of stack on a region: in place when the thread is on
/// one with that much room left, else on a region of the smallest size that holds it.
pub fn run_with<R>(need: usize, work: impl FnOnce() -> R) -> Result<R, NoRoom> {
    let on = ON.get();
    let here = std::hint::black_box(0u8);
    if on.0 != 0 && (&here as *const u8 as usize).saturating_sub(on.0 + GUARD_BYTES) >= need {
        return Ok(work());
    }
    let pool = if need <= SMALL_BYTES - GUARD_BYTES { &SMALL } else { &LARGE };
    if need > pool.bytes - GUARD_BYTES {
        return Err(NoRoom);
    }
    let region = acquire(pool).ok_or(NoRoom)?;
    let (base, len) = (region.base, region.len);
    ON.set((base as usize, len));
    // SAFETY: `base..base+len` is a mapping this thread alone holds (taken out of the pool or
    // just made; no other thread can reach it until `give`), page-aligned (so aligned for the
    // target's stack). Its lowest pages are a guard. The callback does not unwind:
    // `catch_unwind` stops any panic on the region, and it is resumed here, off it.
    let outcome = unsafe { psm::on_stack(base, len, move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))) };
    ON.set(on);
    if went_deep(base, base as usize + len) {
        // SAFETY: the pages of the region this thread holds, which nothing runs on now; they read
        // as zeros when touched again.
        unsafe { libc::madvise(base.add(GUARD_BYTES) as *mut libc::c_void, len - GUARD_BYTES, libc::MADV_DONTNEED) };
    }
    pool.give(region);
    outcome.map_err(|p| std::panic::resume_unwind(p))
}

thread_local! {
    /// This thread's own stack as `(lowest usable address, size)`: `(0, 0)` not read yet,
    /// `(1, 0)` unreadable.
    static THREAD_STACK: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The calling thread's own stack, `(lowest usable address, size)`, as pthreads reports it (the
/// main thread's from its rlimit; read once per thread), or `None` when it cannot be read.
fn thread_stack() -> Option<(usize, usize)> {
    let cached = THREAD_STACK.get();
    if cached.0 != 0 {
        return (cached.0 != 1).then_some(cached);
    }
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read and destroyed once;
    // the out-pointers are locals.
    let read = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            None
        } else {
            let (mut addr, mut size, mut guard) = (std::ptr::null_mut::<libc::c_void>(), 0usize, 0usize);
            let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
            // glibc reports the guard pages inside the range of a thread it created
            if libc::pthread_attr_getguardsize(&attr, &mut guard) != 0 {
                guard = 0;
            }
            libc::pthread_attr_destroy(&mut attr);
            (ok && !addr.is_null() && size > guard).then(|| (addr as usize + guard, size - guard))
        }
    };
    THREAD_STACK.set(read.unwrap_or((1, 0)));
    read
}

/// The stack the caller runs on now, `(bytes left below the caller's frame, whole size)`: this
/// thread's region while on it, else the thread's own stack; `None` when the thread's stack
/// cannot be read. What binds DuckDB's nested views asks it before letting DuckDB go deeper
/// (spec 011, "Nesting").
#[inline(never)]
pub fn room() -> Option<(usize, usize)> {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    let (base, len) = ON.get();
    if base != 0 {
        return Some((here.saturating_sub(base + GUARD_BYTES), len - GUARD_BYTES));
    }
    thread_stack().map(|(low, size)| (here.saturating_sub(low), size))
}

/// Whether the last run reached below `top - KEEP_BYTES`: one word there is read (an untouched
/// page reads as zero; reading it maps the shared zero page, no memory). A run that went deep but
/// left that one word zero keeps its pages until a later one is seen: memory, never safety.
fn went_deep(base: *mut u8, top: usize) -> bool {
    let probe = top - KEEP_BYTES;
    debug_assert!(probe > base as usize + GUARD_BYTES);
    // SAFETY: an aligned word inside the region's readable part, above the guard.
    unsafe { std::ptr::read_volatile(probe as *const usize) != 0 }
}

/// How much of a fresh region's stack `work` touched (a region of its own, mapped for this call
/// and never pooled: its pages read zero until touched). For the measurements of spec 012.
#[cfg(test)]
pub(crate) fn measure<R>(work: impl FnOnce() -> R) -> (R, usize) {
    let region = reserve(REGION_BYTES).expect("a region for the measurement");
    let (base, len) = (region.base, region.len);
    let on = ON.get();
    ON.set((base as usize, len));
    // SAFETY: as in `run_with`: a mapping this thread alone holds.
    let outcome = unsafe { psm::on_stack(base, len, move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))) };
    ON.set(on);
    let words = (len - GUARD_BYTES) / std::mem::size_of::<usize>();
    // SAFETY: the readable part of the region, which nothing runs on now.
    let used = unsafe {
        let first = base.add(GUARD_BYTES) as *const usize;
        (0..words).find(|&i| std::ptr::read_volatile(first.add(i)) != 0).map_or(0, |i| (words - i) * std::mem::size_of::<usize>())
    };
    (outcome.unwrap_or_else(|p| std::panic::resume_unwind(p)), used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: usize) -> usize {
        let pad = std::hint::black_box([0u8; 256]);
        if n == 0 {
            pad[0] as usize
        } else {
            depth(n - 1) + pad[1] as usize + 1
        }
    }

    /// 64 MiB of frames: far past a test thread's 2 MiB stack, so this overflows off the region.
    #[test]
    fn runs_deep_recursion_on_the_region() {
        let got = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| run(|| depth(200_000)).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(got, 200_000);
    }

    #[test]
    fn nested_runs_stay_on_the_region_and_panics_come_back() {
        assert_eq!(run(|| run(|| 7).unwrap()).unwrap(), 7);
        assert!(std::panic::catch_unwind(|| run(|| panic!("inside")).unwrap()).is_err());
        // the thread can still switch after a panic
        assert!(run(|| ON.get().0 != 0).unwrap());
        assert_eq!(ON.get(), (0, 0));
    }

    /// A nested run that needs more than the region it is on has left moves to a larger one,
    /// and comes back.
    #[test]
    fn a_nested_run_that_needs_more_room_moves_to_a_larger_region() {
        let (outer, inner) = run_with(1 << 20, || {
            let outer = ON.get().0;
            (outer, run_with(SMALL_BYTES, || ON.get().0).unwrap())
        })
        .unwrap();
        assert_ne!(outer, 0);
        assert_ne!(inner, outer, "a small region cannot give SMALL_BYTES of room: a large one is taken");
        assert_eq!(run_with(1 << 20, || run_with(1 << 10, || ON.get()).unwrap() == ON.get()).unwrap(), true);
    }

    fn room_at(n: usize) -> usize {
        let pad = std::hint::black_box([0u8; 1024]);
        if n == 0 {
            room().unwrap().0 + pad[0] as usize
        } else {
            room_at(n - 1) + pad[1] as usize
        }
    }

    #[test]
    fn room_is_what_is_left_of_the_stack_the_caller_runs_on() {
        let (shallow, deep, size) = std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(|| (room().unwrap().0, room_at(100), room().unwrap().1))
            .unwrap()
            .join()
            .unwrap();
        // glibc may hand the thread a cached stack up to four times the size asked for
        assert!((500 << 10..=4 * (640 << 10)).contains(&size), "{size}");
        assert!(shallow < size && shallow > size - (64 << 10), "{shallow} of {size}");
        // a hundred frames of over 1 KiB each lower it by at least that much
        assert!(deep + (100 << 10) < shallow, "{deep} vs {shallow}");
        // on the region: nearly all of the region
        let (left, size) = run(|| room().unwrap()).unwrap();
        assert_eq!(size, REGION_BYTES - GUARD_BYTES);
        assert!(left > size - (1 << 20) && left < size, "{left}");
        // on a statement's region: that region's size
        let (left, size) = run_with(1 << 20, || room().unwrap()).unwrap();
        assert_eq!(size, SMALL_BYTES - GUARD_BYTES);
        assert!(left > size - (1 << 20) && left < size, "{left}");
    }

    #[test]
    fn a_long_text_does_not_fit() {
        assert!(fits(4_096));
        assert!(!fits(usize::MAX / 2));
        assert!(run_with(REGION_BYTES, || ()).is_err(), "nothing holds more than the largest region");
    }

    /// Threads share the regions, never two threads on one region at once.
    #[test]
    fn threads_share_regions_one_at_a_time() {
        use std::collections::HashSet;
        use std::sync::{Arc, Mutex};
        let in_use: Arc<Mutex<HashSet<usize>>> = Arc::default();
        let threads: Vec<_> = (0..32)
            .map(|_| {
                let in_use = Arc::clone(&in_use);
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        run_with(1 << 20, || {
                            let base = ON.get().0;
                            assert!(in_use.lock().unwrap().insert(base), "two threads on one region");
                            std::thread::yield_now();
                            in_use.lock().unwrap().remove(&base);
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
