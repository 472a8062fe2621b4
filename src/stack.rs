//! The stack every tree of the extension is built, walked, printed and dropped on (spec 012,
//! "One stack per thread instead of sqlparser's probes").
//!
//! sqlparser's trees are recursive, and so is everything done with them: its parser (bounded at
//! 50 levels of nesting), its derived visits, its printing, their drop, our own walks. A long
//! flat chain (`1+1+…`, `a OR b OR …`) is one level per term. sqlparser can probe the stack
//! before each recursive call (`recursive-protection`), but the probes cost a fifth of a
//! never-seen statement and never covered the drop or our walks. Instead, every entry that
//! touches trees runs on a region of `REGION_BYTES` reserved once per thread: pages are committed
//! only when touched, so a thread that only meets short statements holds a few hundred KiB of it.
//!
//! Why that bounds what the probes bounded, and more: the principal's own text needs at most
//! `need(tokens)` (chains per token, nesting per level, both measured), checked before any
//! parse; a longer text is refused. A tree the rewrite inserts from the policy is walked on the
//! same stack that drops it, and the drop was never probed: a tree deep enough to overflow
//! `REGION_BYTES` while walked would have overflowed the caller's stack (8 MiB or less) while
//! dropped, with or without the probes. The lowest 64 KiB are a guard: an overflow faults, it
//! never writes past the region.
use std::cell::{Cell, RefCell};

/// What one thread reserves (address space; only touched pages are memory).
pub const REGION_BYTES: usize = 1 << 30;
const GUARD_BYTES: usize = 64 << 10;
/// Touching more than this leaves the region's pages given back afterwards.
const KEEP_BYTES: usize = 8 << 20;

/// The stack a text of `tokens` tokens needs at most: a chain of that many terms, plus sqlparser's
/// 50 levels of nesting, as the rewrite's own expansions deepen them. Measured (spec 012): release
/// 200 B per chained token and 31 KiB per nested subquery; debug 23 KiB and 136 KiB.
fn need(tokens: usize) -> usize {
    let (per_token, nesting) = if cfg!(debug_assertions) { (48 << 10, 32 << 20) } else { (1 << 10, 8 << 20) };
    tokens.saturating_mul(per_token).saturating_add(nesting)
}

/// Whether a text of `tokens` tokens fits the region at all.
pub fn fits(tokens: usize) -> bool {
    need(tokens) <= REGION_BYTES - GUARD_BYTES
}

/// The region could not be reserved: the caller refuses (a tree must not be made off the region).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom;

struct Region {
    base: *mut u8,
    len: usize,
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping `reserve` made; the thread is exiting and nothing
        // runs on the region any more.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

thread_local! {
    static REGION: RefCell<Option<Region>> = const { RefCell::new(None) };
    /// The thread is on its region now (a callback into DuckDB may come back into an entry).
    static ON: Cell<bool> = const { Cell::new(false) };
}

fn reserve() -> Option<Region> {
    let len = REGION_BYTES;
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
    Some(Region { base: base as *mut u8, len })
}

/// Runs `work` on this thread's region (in place when already on it). A panic in `work` unwinds
/// to the caller as it would have without the switch.
pub fn run<R>(work: impl FnOnce() -> R) -> Result<R, NoRoom> {
    if ON.get() {
        return Ok(work());
    }
    let (base, len) = REGION.with_borrow_mut(|r| {
        if r.is_none() {
            *r = reserve();
        }
        r.as_ref().map(|r| (r.base, r.len))
    })
    .ok_or(NoRoom)?;
    ON.set(true);
    let top = base as usize + len;
    // SAFETY: `base..base+len` is this thread's mapping, page-aligned (so aligned for the
    // target's stack), used by no one else: only this thread runs on it, and not twice at once
    // (`ON`). Its lowest pages are a guard. The callback does not unwind: `catch_unwind` stops
    // any panic on the region, and it is resumed here, off it.
    let outcome = unsafe { psm::on_stack(base, len, move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))) };
    ON.set(false);
    if went_deep(base, top) {
        // SAFETY: the pages of this thread's region, which nothing runs on now; they read as
        // zeros when touched again.
        unsafe { libc::madvise(base.add(GUARD_BYTES) as *mut libc::c_void, len - GUARD_BYTES, libc::MADV_DONTNEED) };
    }
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
    if ON.get() {
        let base = REGION.with_borrow(|r| r.as_ref().map(|r| r.base as usize))?;
        return Some((here.saturating_sub(base + GUARD_BYTES), REGION_BYTES - GUARD_BYTES));
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
        assert_eq!(run(|| ON.get()).unwrap(), true);
        assert!(!ON.get());
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
    }

    #[test]
    fn a_long_text_does_not_fit() {
        assert!(fits(4_096));
        assert!(!fits(usize::MAX / 2));
    }
}
